"""Janevski & Petrov: the plan — the TCP versions, the error-model readings, the
campaign's scale (full and quick) and the grids, all on the ``vanet-chain`` preset.

Choices where the paper is silent or where vtlab differs (each a field of
:class:`Plan` or a named constant here; the report's "Assumptions" section lists
them with their values):

* **Radio.** The preset's: 802.11b DSSS timing at 1 Mbit/s for data and control
  frames (the paper: 802.11g, "at 200 m distances WiFi has only the mode of
  1 Mbps"), two-ray ground, receive range 250 m, carrier sense 550 m, RTS/CTS before
  every frame (ns-2's ``RTSThreshold_ 0``; :attr:`Plan.rts`).
* **Motion.** Every vehicle drives at exactly 20 km/h (the paper: "normal
  distribution" around it, spread not given), so the chain keeps its 200 m spacing
  and the topology is static over a run (:attr:`Plan.speed_kmh`).
* **Routing** (:data:`ROUTING`): static routes, fewest hops over pairs within
  receive range at the start; the paper does not name its routing protocol. The
  ``routing`` grid runs AODV (ns-3's defaults) beside them (:data:`ROUTINGS`).
* **Error model.** "20 % losses, introduced by using a two-state on-off error
  model" on "the incoming and outgoing traffic" of every node. Read as the preset
  does (:data:`ERROR_20`): each node's incoming and outgoing error process is in its
  lossy state 20 % of the time, mean lossy period :attr:`Plan.error_burst_ms`, every
  frame (RTS, CTS, data, ACK) hit between MAC and PHY (the MAC retries). The paper
  also calls it a "loss model that causes 20 % throughput degradation"; the
  **calibrated** reading (:data:`CALIBRATED`) is the on-off model with the bad share
  and burst length (:attr:`Plan.calibrated_rate`, :attr:`Plan.calibrated_burst_ms`)
  at which single-hop NewReno loses about 20 % of its throughput. The
  ``error_readings`` grid shows how the degradation depends on the reading.
* **ns-2's TCP agents have no handshake and never give up**: SYN retries and
  consecutive RTOs are set to vtlab's maxima (:attr:`Plan.syn_retries`,
  :attr:`Plan.data_retries`); the ``persistence`` grid shows vtlab's defaults.
* **DelAck 2** = ns-2's ``TCPSink/DelAck``: one ACK per two segments, or after
  :attr:`Plan.delack_timeout_ms` (ns-2's ``interval_`` 100 ms).
* **Vegas** with ns-2's ``v_alpha_ 1``, ``v_beta_ 3``, ``v_gamma_ 1``
  (:data:`VEGAS_PARAMS`) and NewReno recovery (under ``--profile ns2``, ns-2
  Vegas's own loss handling); Sack is the core's ``sack`` (under ``ns2``, ns-2's
  Sack1).
* **Runs.** Seeds 1..runs at every point: seed k gives every TCP version the same
  error-model pattern (common random numbers).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vtlab.experiments.common import Config, Grid
from vtlab.scenario import Scenario
from vtlab.sweep import Axis

PRESET = "vanet-chain"

#: The paper's five TCP versions (legend order) → the core's congestion control.
TCPS: dict[str, str] = {
    "Tahoe": "tahoe",
    "Reno": "reno",
    "NewReno": "newreno",
    "Vegas": "vegas",
    "Sack": "sack",
}
VEGAS = "Vegas"
SACK = "Sack"
RENO = "Reno"
NEWRENO = "NewReno"
#: ns-2's Agent/TCP/Vegas defaults (v_alpha_, v_beta_, v_gamma_).
VEGAS_PARAMS: dict[str, int] = {"alpha": 1, "beta": 3, "gamma": 1}

#: Table 2's values.
DUPACKS: tuple[int, ...] = tuple(range(1, 11))
IFQS: tuple[int, ...] = (2, 5, 15, 25, 50)
DELACKS: tuple[int, ...] = (1, 2)
#: Single hop (Figs. 3-6) and the 8-hop chain of 9 vehicles (Figs. 7-10).
HOPS: tuple[int, ...] = (1, 8)

#: The error levels of the paper's grid: error-free, the 20 % on-off model as the
#: preset reads it, and the calibrated reading.
CLEAN = "0 %"
ERROR_20 = "20 %"
CALIBRATED = "calibrated"
LOSSY: tuple[str, ...] = (ERROR_20, CALIBRATED)

#: Routing of the paper's grid, as the preset does it by default.
ROUTING = "static shortest path over neighbours within receive range (set at the start)"
#: The ``routing`` grid's variants: the preset's static routes and AODV.
ROUTINGS: dict[str, dict[str, Any]] = {"static": {"routing": "static"}, "aodv": {"routing": "aodv"}}

#: The one configuration of the sensitivity grids: the paper's defaults.
REFERENCE = {"tcp": NEWRENO, "ifq": 50, "dupack": 3, "delack": 1}


@dataclass(frozen=True)
class Plan:
    """The scale of a campaign and every unstated parameter."""

    runs: int
    #: Simulated seconds of TCP transfer per run (the paper: 250).
    duration_s: float
    dupacks: tuple[int, ...]
    #: Bad shares and mean bad periods (ms) of the ``error_readings`` grid.
    reading_rates: tuple[float, ...]
    reading_bursts_ms: tuple[float, ...]
    ifqs: tuple[int, ...] = IFQS
    delacks: tuple[int, ...] = DELACKS
    hops: tuple[int, ...] = HOPS
    tcps: tuple[str, ...] = tuple(TCPS)
    start_s: float = 1.0
    spacing_m: float = 200.0
    speed_kmh: float = 20.0
    segment: int = 512
    #: ns-2's ``window_`` (the preset's default), packets.
    window: int = 20
    rts: bool = True
    error_rate: float = 0.20
    error_burst_ms: float = 50.0
    error_placement: str = "mac"
    error_frames: str = "all"
    calibrated_rate: float = 0.04
    calibrated_burst_ms: float = 5.0
    delack_timeout_ms: float = 100.0
    syn_retries: int = 30
    data_retries: int = 100

    @property
    def stop(self) -> str:
        return f"{self.start_s + self.duration_s:g}s"


FULL = Plan(
    runs=5,
    duration_s=250.0,
    dupacks=DUPACKS,
    reading_rates=(0.01, 0.02, 0.04, 0.07, 0.10, 0.20),
    reading_bursts_ms=(5.0, 50.0),
)

QUICK = Plan(
    runs=1,
    duration_s=20.0,
    dupacks=(1, 3, 10),
    reading_rates=(0.04, 0.20),
    reading_bursts_ms=(5.0, 50.0),
)


def plan_for(config: Config) -> Plan:
    return QUICK if config.quick else FULL


# -- settings --------------------------------------------------------------------------


def on_off(rate: float, burst_ms: float, plan: Plan, **extra: Any) -> dict[str, Any]:
    """The wifi settings of the on-off error model: bad ``rate`` of the time, mean bad
    period ``burst_ms``, the plan's placement and frames unless given."""
    return {
        "wifi.error_rate": rate,
        "wifi.error_burst": f"{burst_ms:g}ms",
        "wifi.error_placement": extra.get("placement", plan.error_placement),
        "wifi.error_frames": extra.get("frames", plan.error_frames),
    }


def errors(plan: Plan) -> dict[str, dict[str, Any]]:
    """The paper grid's error levels → wifi settings."""
    return {
        CLEAN: {"wifi.error_rate": 0.0},
        ERROR_20: on_off(plan.error_rate, plan.error_burst_ms, plan),
        CALIBRATED: on_off(plan.calibrated_rate, plan.calibrated_burst_ms, plan),
    }


def reading_label(rate: float, burst_ms: float, what: str = "") -> str:
    return f"{rate * 100:g} %, {burst_ms:g} ms" + (f", {what}" if what else "")


def readings(plan: Plan) -> dict[str, tuple[float, float, str, dict[str, Any]]]:
    """The ``error_readings`` grid: label → (bad share, mean bad period in ms, which
    variation, wifi settings). The on-off model over rates × bursts at the plan's
    placement, then the 20 % reading with data frames only and at IP."""
    out: dict[str, tuple[float, float, str, dict[str, Any]]] = {
        CLEAN: (0.0, 0.0, "on-off", {"wifi.error_rate": 0.0})
    }
    for burst in plan.reading_bursts_ms:
        for rate in plan.reading_rates:
            out[reading_label(rate, burst)] = (rate, burst, "on-off", on_off(rate, burst, plan))
    r, b = plan.error_rate, plan.error_burst_ms
    out[reading_label(r, b, "data frames only")] = (
        r,
        b,
        "data frames only",
        on_off(r, b, plan, frames="data"),
    )
    out[reading_label(r, b, "at IP")] = (r, b, "at IP", on_off(r, b, plan, placement="ip"))
    return out


def tcp_settings(label: str) -> dict[str, Any]:
    sets: dict[str, Any] = {"tcp.cc": TCPS[label]}
    if label == VEGAS:
        sets["tcp.cc_params"] = dict(VEGAS_PARAMS)
    return sets


def base(plan: Plan) -> dict[str, Any]:
    """The scenario every run starts from."""
    return {
        "preset": PRESET,
        "spacing_m": plan.spacing_m,
        "speed_kmh": plan.speed_kmh,
        "segment": plan.segment,
        "window": plan.window,
        "start": f"{plan.start_s:g}s",
        "stop": plan.stop,
        "wifi": {"rts": plan.rts},
        "tcp": {
            "syn_retries": plan.syn_retries,
            "data_retries": plan.data_retries,
            "delayed_ack_timeout": f"{plan.delack_timeout_ms:g}ms",
        },
    }


def figure_of(hops: int, delack: int, lossy: bool) -> int:
    """The paper's figure number of a (topology, DelAck, error) case."""
    return 3 + 4 * (hops > 1) + 2 * (delack == 2) + int(lossy)


def _two_ray_range_m(w: dict[str, Any], threshold_dbm: float) -> float:
    """Distance at which two-ray ground (beyond its crossover) falls to a threshold."""
    p = w["propagation"]
    pt_w = 10 ** (w["tx_power_dbm"] / 10) / 1e3
    pr_w = 10 ** (threshold_dbm / 10) / 1e3
    return (pt_w * p["height_m"] ** 4 / (pr_w * p["system_loss"])) ** 0.25


@functools.cache
def setup_numbers(plan: Plan) -> dict[str, Any]:
    """The resolved scenario's numbers the report quotes (8-hop chain, Vegas, DelAck 2)."""
    tcp = {**base(plan)["tcp"], "cc": "vegas", "cc_params": dict(VEGAS_PARAMS)}
    spec = Scenario({**base(plan), "hops": max(plan.hops), "delack": 2, "tcp": tcp}).expanded()
    w = spec["media"][0]["wifi"]
    tcp = spec["flows"][0]["tcp"]
    mob = spec["media"][0]["mobility"]
    return {
        "nodes": len(spec["media"][0]["nodes"]),
        "spacing_m": mob[1]["x_m"] - mob[0]["x_m"],
        "speed_kmh": mob[0]["vx_mps"] * 3.6,
        "standard": w["standard"],
        "rate_kbps": w["data_rate_kbps"],
        "control_kbps": w["control_rate_kbps"],
        "preamble": "short" if w["short_preamble"] else "long",
        "slot_us": w["slot_ns"] / 1e3,
        "sifs_us": w["sifs_ns"] / 1e3,
        "cw": (w["cw_min"], w["cw_max"]),
        "rts_threshold": w["rts_threshold_bytes"],
        "retries": (w["short_retry_limit"], w["long_retry_limit"]),
        "mac_overhead": w["mac_overhead_bytes"],
        "tx_dbm": w["tx_power_dbm"],
        "rx_range_m": _two_ray_range_m(w, w["rx_sensitivity_dbm"]),
        "cs_range_m": _two_ray_range_m(w, w["cca_threshold_dbm"]),
        "sinr_db": w["reception"].get("sinr_db", math.nan),
        "propagation": w["propagation"]["model"],
        "mss": tcp["mss"],
        "header": tcp["header_bytes"],
        "window_pkts": tcp["recv_buffer"] // tcp["mss"],
        "initial_cwnd": tcp["initial_cwnd"],
        "rto_min_ms": tcp["rto_min_ns"] / 1e6,
        "rto_initial_ms": tcp["rto_initial_ns"] / 1e6,
        "delack_ms": tcp["delayed_ack_timeout_ns"] / 1e6,
        "limited_transmit": tcp["limited_transmit"],
        "timestamps": tcp["timestamps"],
        "vegas": tcp["cc_params"],
        "vegas_recovery": tcp["recovery"],
        "profile": tcp["profile"],
    }


# -- grids -----------------------------------------------------------------------------


def _tcp_axis(labels: Sequence[str]) -> Axis:
    return Axis.variants("tcp", {t: tcp_settings(t) for t in labels})


def _error_axis(levels: Mapping[str, Mapping[str, Any]]) -> Axis:
    return Axis.variants("error", levels)


def _reference(plan: Plan) -> tuple[Axis, ...]:
    r = REFERENCE
    return (
        Axis.values("ifq", [r["ifq"]]),
        Axis.values("dupack", [r["dupack"]]),
    )


def paper_grid(plan: Plan, hops: int) -> Grid:
    figs = [figure_of(hops, d, e) for d in plan.delacks for e in (False, True)]
    name = "single_hop" if hops == 1 else f"hops_{hops}"
    return Grid(
        name,
        f"Figs. {min(figs)}-{max(figs)}: {hops} hop(s) × DelAck × error × TCP × IFQ × DupAck",
        {**base(plan), "hops": hops},
        (
            Axis.values("delack", list(plan.delacks)),
            _error_axis(errors(plan)),
            _tcp_axis(plan.tcps),
            Axis.values("ifq", list(plan.ifqs)),
            Axis.values("dupack", list(plan.dupacks)),
        ),
    )


def sensitivity_grids(plan: Plan) -> dict[str, Grid]:
    hops = Axis.values("hops", list(plan.hops))
    return {
        "rts": Grid(
            "rts",
            "sensitivity: RTS/CTS before every frame or never, error-free, IFQ 50, DupAck 3",
            base(plan),
            (
                hops,
                Axis.variants("rts", {"on": {"wifi.rts": True}, "off": {"wifi.rts": False}}),
                Axis.values("delack", list(plan.delacks)),
                _tcp_axis(plan.tcps),
                *_reference(plan),
            ),
        ),
        "error_readings": Grid(
            "error_readings",
            "sensitivity: readings of the on-off error model, NewReno, IFQ 50, DupAck 3",
            {**base(plan), "delack": REFERENCE["delack"]},
            (
                hops,
                _error_axis({k: v[3] for k, v in readings(plan).items()}),
                _tcp_axis([REFERENCE["tcp"]]),
                *_reference(plan),
            ),
        ),
        "routing": Grid(
            "routing",
            "sensitivity: static routes or AODV, error-free and 20 %, × DelAck × TCP, "
            "IFQ 50, DupAck 3",
            base(plan),
            (
                hops,
                Axis.variants("routing", ROUTINGS),
                _error_axis({k: v for k, v in errors(plan).items() if k != CALIBRATED}),
                Axis.values("delack", list(plan.delacks)),
                _tcp_axis(plan.tcps),
                *_reference(plan),
            ),
        ),
        "persistence": Grid(
            "persistence",
            "sensitivity: ns-2's persistence against vtlab's SYN and RTO limits",
            {**base(plan), "delack": REFERENCE["delack"]},
            (
                hops,
                _error_axis({k: v for k, v in errors(plan).items() if k != CLEAN}),
                Axis.variants(
                    "persistence",
                    {
                        "never gives up (ns-2)": {},
                        "vtlab's defaults": {"tcp.syn_retries": None, "tcp.data_retries": None},
                    },
                ),
                _tcp_axis([REFERENCE["tcp"]]),
                *_reference(plan),
            ),
        ),
    }


def grids(plan: Plan, profile: str = "ns3", runs: int | None = None) -> dict[str, Grid]:
    """Every sweep of the reproduction: the paper's grid per topology, then the
    sensitivity grids (which share their reference points with it)."""
    out = {}
    for h in plan.hops:
        g = paper_grid(plan, h)
        out[g.name] = g
    return {**out, **sensitivity_grids(plan)}
