"""ISO 15118-2 over a lossy charging cable: the plan — the stacks, congestion
controls, loss rates and burst sizes, the campaign's scale (full and quick) and the
grids.

* **One vehicle** (grid ``vehicle``): the ``v2g`` preset with an ISO 15118-2 DC
  session (:data:`PROFILE`, a charging loop of :attr:`Plan.duration_s`) and no bulk
  transfer. The PLC link loses packets in **both directions** with ns-3's burst
  model at the same mean rate (:attr:`Plan.losses`), bursts of
  :data:`BURSTS` packets.
* **A station** (grid ``station``): the ``station`` preset, 21 vehicles, three per
  power-line segment, a session per vehicle, and a bulk transfer per vehicle that
  never finishes (:attr:`Plan.station_bulk`) so that the segments stay busy for the
  whole session; the run stops :attr:`Plan.station_margin_s` after the sessions'
  planned end. A reduced grid (:attr:`Plan.station_losses` × ...).

The stacks are TCP settings, defined once (:data:`STACKS`); every run of a cell
uses them for the session's connection (and, at the station, for the bulk
transfers too). Seed k gives every stack and congestion control the same loss
pattern (common random numbers).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vtlab import survival
from vtlab.experiments.common import Config, Grid
from vtlab.scenario import Scenario
from vtlab.sweep import Axis

#: The stacks compared, as TCP settings: ns-3's, Linux's without and with RACK-TLP
#: (RFC 8985), defined once in :data:`vtlab.survival.STACKS` (the advice uses them too).
STACKS: dict[str, dict[str, Any]] = survival.STACKS

#: Congestion controls of the one-vehicle grid (``vtlab cc list``).
CCS: tuple[str, ...] = ("newreno", "cubic", "illinois-aa", "newreno-sc")

#: Mean loss rates of the PLC link, in each direction: about three per decade from
#: 0.001 % to 1 %. A 30-minute DC session is some 8 000 exchanges, so a session
#: meets a loss at rates of 1 / 16 000 packets already; above 1 % no stack keeps a
#: 30-minute session (a campaign with 0.25–5 % found none, docs/study-iso15118.md).
LOSSES: tuple[float, ...] = (0.0, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2)

#: Burst sizes (ns-3 BurstErrorModel, burst_min..burst_max packets): 1 behaves like
#: independent losses, 1–4 is ns-3's default, 4–8 long bursts.
BURSTS: dict[str, tuple[int, int]] = {"1": (1, 1), "1–4": (1, 4), "4–8": (4, 8)}

#: The message profile of every session.
PROFILE = "iso15118-2-dc"

#: A session "survives" with probability at least this when the lower end of the
#: two-sided 95 % Wilson interval of its survival reaches it.
SURVIVAL_TARGET = 0.99
#: The normal quantile of the two-sided 95 % interval, Φ⁻¹(0.975).
Z95 = 1.959963984540054

#: The grid's axis names (columns of every table).
AXES = ("loss", "burst", "stack", "algorithm")


@dataclass(frozen=True)
class Plan:
    """The scale of a campaign."""

    #: Seeds per one-vehicle cell (``--seeds`` overrides).
    runs: int
    #: Length of the charging loop (CurrentDemand every 220 ms), seconds.
    duration_s: float
    losses: tuple[float, ...]
    bursts: tuple[str, ...]
    ccs: tuple[str, ...]
    #: Seeds per station cell (at most ``--seeds``).
    station_runs: int
    station_losses: tuple[float, ...]
    station_bursts: tuple[str, ...]
    station_ccs: tuple[str, ...]
    stacks: tuple[str, ...] = tuple(STACKS)
    station: bool = True
    station_vehicles: int = 21
    #: Size of each bulk transfer: more than a segment's share of 10 Mbit/s can move
    #: before the run stops, so the bulk never finishes.
    station_bulk: str = "10GB"
    #: The station run stops this long after the sessions' planned end (seconds).
    station_margin_s: float = 30.0
    #: The rare-event table (rare.py): sessions per number of bursts, the burst
    #: sizes and the settings (None: every one of rare.study_settings()).
    rare_runs: int = 10
    rare_bursts: tuple[str, ...] = ("1–4",)
    rare_settings: tuple[str, ...] | None = (
        "ns3, rto_min=1000ms",
        "linux, rto_min=200ms",
        "linux, rto_min=5ms",
        "linux, rto_min=5ms, retries=1",
    )

    @property
    def loop_exchanges(self) -> int:
        """CurrentDemand exchanges of a session that survives (220 ms apart)."""
        return max(1, math.ceil(round(self.duration_s / 0.22, 9)))

    def station_seeds(self, runs: int) -> int:
        return max(1, min(self.station_runs, runs))


#: The full study: 400 seeds per cell, because with 200 even a cell in which every
#: session survives has a lower Wilson bound of 200 / (200 + z²) = 0.981 < 0.99; with
#: 400 it is 400 / (400 + z²) = 0.9905.
FULL = Plan(
    runs=400,
    duration_s=1800.0,
    losses=LOSSES,
    bursts=tuple(BURSTS),
    ccs=CCS,
    station_runs=10,
    station_losses=(0.0, 0.01),
    station_bursts=("1–4",),
    station_ccs=("newreno", "cubic"),
    rare_runs=200,
    rare_bursts=tuple(BURSTS),
    rare_settings=None,
)

#: The CI version: 20 seeds of 5-minute sessions, fewer loss rates, burst sizes and
#: congestion controls, a short station run.
QUICK = Plan(
    runs=20,
    duration_s=300.0,
    losses=(0.0, 0.0025, 0.01, 0.02, 0.05),
    bursts=("1", "1–4"),
    ccs=("newreno", "cubic"),
    station_runs=2,
    station_losses=(0.0, 0.01),
    station_bursts=("1–4",),
    station_ccs=("newreno",),
)


#: No queue disc, as in the ns-3 reference program (validation/ns3/iso15118.cc
#: disables flow control, so ns-3 installs none) that validates the sessions.
QDISC = "none"


def plan_for(config: Config) -> Plan:
    return QUICK if config.quick else FULL


# -- settings --------------------------------------------------------------------------


def stack_settings(name: str) -> dict[str, Any]:
    """The stack's TCP settings as spec paths."""
    return {f"tcp.{k}": v for k, v in STACKS[name].items()}


def loss_settings(loss: float) -> dict[str, Any]:
    """The same mean loss toward the vehicle and toward the charger."""
    return {"loss.mean_loss": loss, "reverse_loss.mean_loss": loss}


def burst_settings(label: str) -> dict[str, Any]:
    lo, hi = BURSTS[label]
    out: dict[str, Any] = {}
    for side in ("loss", "reverse_loss"):
        out[f"{side}.burst_min"] = lo
        out[f"{side}.burst_max"] = hi
    return out


def loss_label(loss: float) -> str:
    return f"{loss * 100:g} %"


def session(plan: Plan) -> dict[str, Any]:
    return {"profile": PROFILE, "duration": f"{plan.duration_s:g}s"}


def vehicle_base(plan: Plan) -> dict[str, Any]:
    """One vehicle on the charging cable, a session and nothing else."""
    return {
        "preset": "v2g",
        "qdisc": QDISC,
        "loss": {"model": "burst", "mean_loss": 0.0},
        "reverse_loss": {"model": "burst", "mean_loss": 0.0},
        "session": session(plan),
    }


def station_stop_s(plan: Plan) -> float:
    """When a station run stops: the last vehicle's session start (2 ms apart), its
    planned length (the loop plus a second for the other messages) and the margin."""
    last_start = (plan.station_vehicles - 1) * 0.002
    return math.ceil(last_start + plan.duration_s + 1.0 + plan.station_margin_s)


def station_base(plan: Plan) -> dict[str, Any]:
    """21 vehicles, a session and an endless bulk transfer each."""
    return {
        "preset": "station",
        "qdisc": QDISC,
        "vehicles": plan.station_vehicles,
        "bytes": plan.station_bulk,
        "stop": f"{station_stop_s(plan):g}s",
        "loss": {"model": "burst", "mean_loss": 0.0},
        "reverse_loss": {"model": "burst", "mean_loss": 0.0},
        "session": session(plan),
    }


# -- grids -----------------------------------------------------------------------------


def _axes(
    losses: tuple[float, ...],
    bursts: tuple[str, ...],
    stacks: tuple[str, ...],
    ccs: tuple[str, ...],
) -> tuple[Axis, ...]:
    variants: Mapping[Any, Mapping[str, Any]]
    variants = {loss: loss_settings(loss) for loss in losses}
    return (
        Axis.variants("loss", variants),
        Axis.variants("burst", {b: burst_settings(b) for b in bursts}),
        Axis.variants("stack", {s: stack_settings(s) for s in stacks}),
        Axis.values("tcp.cc", list(ccs), name="algorithm"),
    )


def grids(plan: Plan, profile: str = "ns3", runs: int | None = None) -> dict[str, Grid]:
    """The one-vehicle grid and (unless the plan leaves it out) the station grid.
    Message rows are stored as response-time counts (exact pooled quantiles)."""
    runs = plan.runs if runs is None else runs
    out = {
        "vehicle": Grid(
            "vehicle",
            f"one vehicle, {plan.duration_s / 60:g}-minute DC session: loss × burst × stack × cc",
            vehicle_base(plan),
            _axes(plan.losses, plan.bursts, plan.stacks, plan.ccs),
            messages="counts",
        )
    }
    if plan.station:
        out["station"] = Grid(
            "station",
            f"{plan.station_vehicles} vehicles beside bulk transfers: loss × stack × cc",
            station_base(plan),
            _axes(plan.station_losses, plan.station_bursts, plan.stacks, plan.station_ccs),
            runs=plan.station_seeds(runs),
            messages="counts",
        )
    return out


# -- numbers of the resolved scenarios (for the report's prose) ------------------------


@functools.cache
def setup_numbers(plan: Plan) -> dict[str, Any]:
    """What the report quotes, read from the resolved scenarios: the PLC link, the
    charging loop's messages, period and deadline, each profile's RTO floor
    (max(rto_min, clock granularity): rto = max(rto_min, srtt + max(G, 4·rttvar)))
    and the station's layout."""
    one = Scenario(vehicle_base(plan)).expanded()
    plc = next(link for link in one["links"] if link["name"] == "plc")
    steps = one["sessions"][0]["steps"]
    loop = next(s for s in steps if s["name"] == "CurrentDemand")
    floors = {}
    for profile in ("ns3", "linux"):
        spec = Scenario({**vehicle_base(plan), "tcp": {"profile": profile}}).expanded()
        tcp = spec["sessions"][0]["tcp"]
        floors[profile] = max(tcp["rto_min_ns"], tcp["clock_granularity_ns"]) / 1e6
    station = Scenario(station_base(plan)).expanded()
    segment = next(link for link in station["links"] if link["name"] == "plc1")
    return {
        "plc_mbps": plc["rate_bps"] / 1e6,
        "plc_delay_ms": plc["delay_ns"] / 1e6,
        "queue_packets": segment["queue_packets"],
        "exchanges": sum(s["repeats"] for s in steps),
        "loop_exchanges": loop["repeats"],
        "loop_request_bytes": loop["request_bytes"],
        "loop_response_bytes": loop["response_bytes"],
        "period_ms": loop["period_ns"] / 1e6,
        "deadline_ms": loop["timeout_ns"] / 1e6,
        "rto_floor_ms": floors,
        "station_sessions": len(station["sessions"]),
        "station_segments": sum(1 for link in station["links"] if link["name"].startswith("plc")),
        "station_stop_s": station["stop_ns"] / 1e9,
    }
