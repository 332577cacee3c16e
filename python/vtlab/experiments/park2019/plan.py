"""Park 2019: the plan — the algorithms, the campaign's scale (full and quick) and
the grids (scenarios × axes × seeds).

Choices where the paper is silent (also stated in the report):

* Westwood is ``westwood-plus`` (ns-3.38 and later offer only ``TcpWestwoodPlus``). A
  2019 ns-3 ``TcpWestwood`` defaulted to the original Westwood, so a sensitivity grid
  runs vtlab's original ``westwood`` too (report section "Which Westwood?").
* Loss rates are *mean* loss rates (the paper's x-axis), converted exactly to the
  burst-start probability of ns-3's BurstErrorModel (sizes 1..4).
* Fig. 7 (sequence progress) sits in §3.2 but does not say whether it is the single
  connection or one of the 21 vehicles: both are drawn, (a) and (b).
* Fig. 8 (slow-start and fast-recovery counts) gives no loss rate: the bars cover
  every loss level of Figs. 4 and 6; for 21 vehicles the counts are per connection.
* Fig. 12 (cwnd, 21 connections) gives no loss rate: 5 % (the rate the text
  discusses); one vehicle (ev1) per algorithm, as the paper's four-line plot.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vtlab.experiments import common
from vtlab.experiments.common import Config, Grid
from vtlab.sweep import Axis

# -- the algorithms --------------------------------------------------------------------

#: The study's ten ns-3 variants (Table 2 column order) → vtlab congestion controls.
VARIANTS: dict[str, str] = {
    "NewReno": "newreno",
    "Hybla": "hybla",
    "Highspeed": "highspeed",
    "Htcp": "htcp",
    "Vegas": "vegas",
    "Scalable": "scalable",
    "Veno": "veno",
    "BIC": "bic",
    "Illinois": "illinois",
    "Westwood": "westwood-plus",
}
#: Fig. 11's five variants (§5).
FIG11_VARIANTS: dict[str, str] = {
    "NewReno": "newreno",
    "NewReno ND": "newreno-nd",
    "NewReno SC": "newreno-sc",
    "Illinois": "illinois",
    "Illinois AA": "illinois-aa",
}
#: Fig. 12's four variants, in the paper's legend order.
FIG12_VARIANTS: dict[str, str] = {
    "Illinois": "illinois",
    "Illinois AA": "illinois-aa",
    "NewReno": "newreno",
    "NewReno SC": "newreno-sc",
}
#: Sensitivity check: the original Westwood. Until ns-3.37, ``ns3::TcpWestwood``
#: defaulted to ``ProtocolType = WESTWOOD`` (ns-3's own examples say so when they
#: switch to Westwood+); ns-3.38 replaced it by ``TcpWestwoodPlus``. The paper ran a
#: 2019 ns-3 and names only "Westwood".
WESTWOOD_ORIGINAL: dict[str, str] = {"Westwood (original)": "westwood"}
#: Fig. 8 compares these two.
FIG8_VARIANTS: dict[str, str] = {"NewReno": "newreno", "Illinois": "illinois"}

#: One colour/marker per label across every figure.
STYLE = common.styles([*VARIANTS, "NewReno ND", "NewReno SC", "Illinois AA", *WESTWOOD_ORIGINAL])

#: The transfer size (MB) of the ns-3.44 reference runs in ``validation/`` and of the
#: full plan: Table 2's column that is compared with ns-3.44.
REFERENCE_MB = 100

#: Segment size (bytes) of the ns3 profile, for the 10 MSS line of Fig. 12.
MSS = 1460


@dataclass(frozen=True)
class Plan:
    """The scale of a campaign."""

    runs: int
    sizes_mb: tuple[int, ...]
    losses: tuple[float, ...]
    fig11_losses: tuple[float, ...]
    bytes_: str
    vehicles: int = 21
    trace_stop: str = "60s"
    trace_interval: str = "100ms"
    fig12_loss: float = 0.05

    @property
    def size(self) -> str:
        """The transfer size for display ("100 MB")."""
        return re.sub(r"(\d)([A-Za-z])", r"\1 \2", self.bytes_)

    @property
    def trace_window(self) -> str:
        """The trace duration for display ("60 s")."""
        return re.sub(r"(\d)([A-Za-z])", r"\1 \2", self.trace_stop)


FULL = Plan(
    runs=6,
    sizes_mb=(10, 50, 100, 200, 400, 600, 800),
    losses=(0.0025, 0.005, 0.01, 0.02, 0.03, 0.04, 0.05),
    fig11_losses=(0.0, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.04, 0.05),
    bytes_=f"{REFERENCE_MB}MB",
)
QUICK = Plan(
    runs=2,
    sizes_mb=(10, 50),
    losses=(0.0025, 0.01, 0.05),
    fig11_losses=(0.0, 0.0025, 0.01, 0.05),
    bytes_="5MB",
)


def plan_for(config: Config) -> Plan:
    return QUICK if config.quick else FULL


# -- grids -----------------------------------------------------------------------------


#: The root queue disc of every link. The study ran ns-3 before ns-3.30 (it was
#: submitted on 2019-09-30, six weeks after ns-3.30 came out on 2019-08-21), whose
#: `Ipv4AddressHelper` installed pfifo_fast (1000 packets) on every point-to-point
#: device; ns-3.30 made FQ-CoDel the default (docs/queue-discs.md).
QDISC = "pfifo_fast"


def _variant_axis(variants: Mapping[str, str]) -> Axis:
    return Axis.variants("variant", {label: {"tcp.cc": cc} for label, cc in variants.items()})


def _loss_axis(losses: Sequence[float]) -> Axis:
    return Axis.values("loss.mean_loss", list(losses), name="loss")


def grids(plan: Plan, profile: str = "ns3", runs: int | None = None) -> dict[str, Grid]:
    """Every sweep of the reproduction (Fig. 8 reuses Figs. 4 and 6). The profile is
    applied by the campaign and the runs per point are the plan's, so ``profile`` and
    ``runs`` are unused here (the pipeline passes them to every study)."""
    del profile, runs
    single = {"preset": "v2g", "qdisc": QDISC, "bytes": plan.bytes_}
    station = {
        "preset": "station",
        "qdisc": QDISC,
        "vehicles": plan.vehicles,
        "bytes": plan.bytes_,
    }
    trace = {"stop": plan.trace_stop, "trace_interval": plan.trace_interval}
    return {
        "table2": Grid(
            "table2",
            "Table 2, ten variants × transfer size, 1 connection, 5 % loss",
            {"preset": "v2g", "qdisc": QDISC, "loss": {"mean_loss": 0.05}},
            (
                _variant_axis(VARIANTS),
                Axis.variants("size_mb", {mb: {"bytes": f"{mb}MB"} for mb in plan.sizes_mb}),
            ),
        ),
        "fig4": Grid(
            "fig4",
            f"Fig. 4, ten variants × loss, 1 connection, {plan.size}",
            single,
            (_variant_axis(VARIANTS), _loss_axis(plan.losses)),
        ),
        "fig7a": Grid(
            "fig7a",
            f"Fig. 7a, sequence progress, 1 connection, 5 %, first {plan.trace_window}",
            {**single, **trace, "loss": {"mean_loss": 0.05}},
            (_variant_axis(VARIANTS),),
            runs=1,
            trace=True,
        ),
        "westwood": Grid(
            "westwood",
            "sensitivity: original Westwood (ns-3's TcpWestwood default before ns-3.38), "
            "1 connection",
            single,
            (_variant_axis(WESTWOOD_ORIGINAL), _loss_axis(plan.losses)),
        ),
        "fig11a": Grid(
            "fig11a",
            "Fig. 11a, five variants × loss, 1 connection",
            single,
            (_variant_axis(FIG11_VARIANTS), _loss_axis(plan.fig11_losses)),
        ),
        "fig6": Grid(
            "fig6",
            f"Fig. 6, ten variants × loss, {plan.vehicles} vehicles, {plan.size} each",
            station,
            (_variant_axis(VARIANTS), _loss_axis(plan.losses)),
        ),
        "fig11b": Grid(
            "fig11b",
            f"Fig. 11b, five variants × loss, {plan.vehicles} vehicles",
            station,
            (_variant_axis(FIG11_VARIANTS), _loss_axis(plan.fig11_losses)),
        ),
        "fig7b": Grid(
            "fig7b",
            f"Fig. 7b, sequence progress, {plan.vehicles} vehicles, 5 %, first {plan.trace_window}",
            {**station, **trace, "loss": {"mean_loss": 0.05}},
            (_variant_axis(VARIANTS),),
            runs=1,
            trace=True,
        ),
        "fig12": Grid(
            "fig12",
            f"Fig. 12, cwnd over time, {plan.vehicles} vehicles, first {plan.trace_window}",
            {**station, **trace, "loss": {"mean_loss": plan.fig12_loss}},
            (_variant_axis(FIG12_VARIANTS),),
            runs=1,
            trace=True,
        ),
    }
