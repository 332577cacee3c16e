"""Martignon: the plan — the senders, the common TCP settings, the campaign's scale
(full and quick) and the grids.

Choices where the paper is silent or where vtlab differs (also stated in the report):

* **Profile and recovery.** ns3 profile by default, but every flow, the NewReno
  baseline included, uses classic NewReno recovery (``tcp.recovery = "newreno"``):
  the study compares window reactions over ns-2's NewReno, not SACK.
* **Segments.** MSS 1460 B + 40 B of TCP/IP headers = the paper's 1500 B packets;
  timestamps off (no 12 B option, so no ns-3-style fragmentation of 1512 B packets).
* **Initial window** 2 segments (RFC 2581, the paper's reference for TCP congestion
  control); the short-transfer experiment also runs ns-3's 10 as a sensitivity case.
* **Windows** are never limited by the socket buffers: 1 MB send and receive
  buffers (ns-2's ``window_`` set large), at least twice the largest
  bandwidth-delay product plus queue of any scenario here; otherwise a single
  10 Mbit/s, 100 ms flow would never fill its queue and never see congestion.
* **Steady state**: long-lived flows run for a fixed simulated time (``stop``) and
  goodput is the payload delivered in order over that time; accuracy is counted
  over the loss events of that time.
* **Fig. 6 and the short transfers** run over "a single link": both hops get the
  same capacity, so the only queue is the one at S.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vtlab.experiments import common
from vtlab.experiments.common import Config, Grid
from vtlab.scenario import Scenario
from vtlab.sweep import Axis

# -- the algorithms --------------------------------------------------------------------

#: The study's four senders → vtlab congestion controls (legend order of Figs. 3-5).
VARIANTS: dict[str, str] = {
    "NewReno": "newreno",
    "NewReno-LP": "newreno-lp",
    "Westwood-NR": "westwood-nr",
    "NewReno-Ideal-LP": "newreno-ideal-lp",
}
LP, NR, WNR, IDEAL = "NewReno-LP", "NewReno", "Westwood-NR", "NewReno-Ideal-LP"
#: Fig. 6 and the short transfers compare these two.
PAIR: dict[str, str] = {NR: "newreno", LP: "newreno-lp"}
#: Sensitivity: the original Westwood. The paper's "TCP Westwood with NewReno
#: extensions" is UCLA's ns-2 module (tcp-westwood-nr.cc, per-ACK bandwidth samples),
#: which is vtlab's ``westwood``; ``westwood-nr`` is Westwood+ over NewReno recovery.
WESTWOOD_ORIGINAL: dict[str, str] = {"Westwood (original)": "westwood"}
WO = "Westwood (original)"
LABEL_OF_CC = {cc: label for label, cc in {**VARIANTS, **WESTWOOD_ORIGINAL}.items()}

STYLE = common.styles([*VARIANTS, "Fair share", "NewReno-LP (other profile)", WO])

MSS = 1460
HEADERS = 40
#: Socket buffers (bytes): large enough never to limit the window (see module doc).
BUFFER = 1_000_000
#: ns-3's default socket buffers (the buffer sensitivity grid's other level).
NS3_DEFAULT_BUFFER = 131_072
INITIAL_CWND = 2
#: C_SN (Mbit/s) of the socket-buffer sensitivity grid.
BUFFER_RATE = 2
#: Common TCP settings of every run.
TCP = {
    "recovery": "newreno",
    "timestamps": False,
    "mss": MSS,
    "header_bytes": HEADERS,
    "initial_cwnd": INITIAL_CWND,
    # The receiver delays ACKs (§3): every second segment, as ns-3's and Linux's
    # default and ns-2's DelAckSink (the ns2 profile's default is TCPSink's one
    # ACK per packet).
    "delayed_ack_count": 2,
    "send_buffer": BUFFER,
    "recv_buffer": BUFFER,
}
#: Correlated losses: Good 1 s without loss, Bad 0.05 s (time-based sojourns).
GILBERT = {"model": "gilbert-elliott", "sojourn": "time", "mean_good": 1.0, "mean_bad": 0.05}

#: The Vegas predictor's thresholds (segments): V_p below α means a link loss,
#: above β congestion (§2 of the paper; vtlab's ``newreno-lp``).
VP_ALPHA = 1
VP_BETA = 3


@dataclass(frozen=True)
class Plan:
    """The scale of a campaign."""

    runs: int
    duration_s: float
    pers: tuple[float, ...]
    bad_pers: tuple[float, ...]
    rtts_ms: tuple[float, ...]
    short_flows: int
    rates_mbps: tuple[int, ...] = (2, 5, 10)
    rtt_rates_mbps: tuple[int, ...] = (2, 5)
    rtt_loss: float = 0.005
    short_stagger_s: float = 10.0
    short_iws: tuple[int, ...] = (2, 10)
    short_rate_mbps: int = 5
    short_loss: float = 0.05
    short_bytes: int = 10_000
    friend_rate_mbps: int = 10
    friend_flows: int = 5
    #: Simulated seconds of the friendliness runs (fairness converges slowly).
    friend_duration_s: float = 1000.0
    #: PER levels of the V_p trace (one run each, sampled every ``trace_interval``).
    vp_pers: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 1e-1)
    trace_interval: str = "50ms"
    #: PER levels of the buffer sensitivity grid.
    buffer_pers: tuple[float, ...] = (1e-4, 1e-2)
    #: PER levels of the window_ sensitivity grid (where the accuracy is lowest).
    window_pers: tuple[float, ...] = (1e-4, 2e-4)

    @property
    def stop(self) -> str:
        return f"{self.duration_s:g}s"


FULL = Plan(
    runs=10,
    duration_s=300.0,
    pers=(1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 1e-1),
    bad_pers=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    rtts_ms=(25.0, 50.0, 100.0, 150.0, 200.0, 300.0, 400.0),
    short_flows=500,
)


QUICK = Plan(
    runs=2,
    duration_s=60.0,
    pers=(1e-4, 1e-3, 1e-2, 1e-1),
    bad_pers=(0.0, 0.5, 1.0),
    rtts_ms=(50.0, 100.0, 200.0),
    short_flows=100,
    friend_duration_s=60.0,
    vp_pers=(1e-4, 1e-2),
    window_pers=(1e-4,),
)


#: ns-2's default ``window_`` (packets): the level of the window sensitivity grid,
#: against the study's 1 MB.
NS2_WINDOW_PACKETS = 20

#: Profiles of the socket-buffer sensitivity grid (ns2: the buffer is ns-2's window_).
STACKS: tuple[str, ...] = ("ns3", "linux", "ns2")

#: The study ran ns-2, whose links have drop-tail queues and no queue disc.
QDISC = "none"


def plan_for(config: Config) -> Plan:
    return QUICK if config.quick else FULL


def other_profile(profile: str) -> str:
    """The profile of the predictor-signal sensitivity grids."""
    return "linux" if profile == "ns3" else "ns3"


# -- grids -----------------------------------------------------------------------------


def _variant_axis(variants: Mapping[str, str]) -> Axis:
    return Axis.variants("variant", {label: {"tcp.cc": cc} for label, cc in variants.items()})


def _rate_axis(rates: Sequence[int]) -> Axis:
    return Axis.variants("c_sn_mbps", {r: {"wired_rate": f"{r}Mbps"} for r in rates})


def _rtt_axis(rtts_ms: Sequence[float]) -> Axis:
    # RTT = 2·(T_SN + T_ND) with T_ND = 0.01 ms.
    return Axis.variants(
        "rtt_ms", {rtt: {"wired_delay": f"{rtt / 2 - 0.01:g}ms"} for rtt in rtts_ms}
    )


def _long(plan: Plan, **extra: Any) -> dict[str, Any]:
    """A long-lived single flow on the Fig. 1 path (C_ND = 10 Mbit/s, RTT 100 ms)."""
    return {
        "preset": "wired-wireless",
        "qdisc": QDISC,
        "wired_rate": "10Mbps",
        "wired_delay": "50ms",
        "wireless_rate": "10Mbps",
        "wireless_delay": "0.01ms",
        "bytes": "100GB",
        "stop": plan.stop,
        "tcp": dict(TCP),
        **extra,
    }


def timers(plan: Plan, profile: str = "ns3") -> tuple[float, float]:
    """SYN timeout and minimum RTO (s) of a profile on the study's path."""
    spec = _long(plan)
    tcp = Scenario({**spec, "tcp": {**spec["tcp"], "profile": profile}}).expanded()["flows"][0][
        "tcp"
    ]
    return tcp["syn_timeout_ns"] / 1e9, tcp["rto_min_ns"] / 1e9


def _start_offsets(replica: int, flows: int) -> list[float]:
    """Start times (s) of the flows of one friendliness replica: uniform in [0, 1) s,
    drawn from a generator seeded by the replica number (the error-free runs are
    deterministic, so replicas differ only in their start times)."""
    rng = np.random.default_rng(1000 + replica)
    return sorted(float(x) for x in np.round(rng.uniform(0.0, 1.0, flows), 4))


def _friend_base(plan: Plan) -> dict[str, Any]:
    rate = f"{plan.friend_rate_mbps}Mbps"
    return {
        "preset": "wired-wireless",
        "qdisc": QDISC,
        "wired_rate": rate,
        "wireless_rate": rate,
        "bytes": "100GB",
        "stop": f"{plan.friend_duration_s:g}s",
        "tcp": dict(TCP),
        # One group per flow, so that the axes can set each flow's sender and start.
        "groups": [
            {"name": f"flow{i + 1}", "cc": "newreno", "flows": 1, "start": "0s"}
            for i in range(plan.friend_flows)
        ],
    }


def _mix_axis(first_cc: str, plan: Plan) -> Axis:
    """Fig. 7's x-axis: m NewReno flows, the other n = total − m run ``first_cc``."""
    total = plan.friend_flows
    return Axis.variants(
        "newreno_flows",
        {
            m: {f"groups.{i}.cc": first_cc if i < total - m else "newreno" for i in range(total)}
            for m in range(total + 1)
        },
    )


def _replica_axis(plan: Plan, runs: int) -> Axis:
    total = plan.friend_flows
    return Axis.variants(
        "replica",
        {
            k: {
                f"groups.{i}.start": f"{t * 1000:g}ms"
                for i, t in enumerate(_start_offsets(k, total))
            }
            for k in range(1, runs + 1)
        },
    )


def _long_grids(plan: Plan, profile: str) -> dict[str, Grid]:
    """Figs. 2-5 and the RTT-signal sensitivity: long-lived single flows."""
    alt = other_profile(profile)
    alt_axis = Axis.variants("alt_profile", {alt: {"tcp.profile": alt}})
    bernoulli = {"loss": {"model": "bernoulli", "mean_loss": 0.0}}
    gilbert = {"loss": dict(GILBERT, loss_bad=0.0)}
    per_axis = Axis.values("loss.mean_loss", list(plan.pers), name="per")
    bad_axis = Axis.values("loss.loss_bad", list(plan.bad_pers), name="bad_per")
    return {
        "per": Grid(
            "per",
            "Figs. 2a, 3a/b, 4: four senders × C_SN × independent PER",
            _long(plan, **bernoulli),
            (_variant_axis(VARIANTS), _rate_axis(plan.rates_mbps), per_axis),
        ),
        "bad": Grid(
            "bad",
            "Figs. 2b, 5a/b: four senders × C_SN × Bad-state PER (Gilbert-Elliott)",
            _long(plan, **gilbert),
            (_variant_axis(VARIANTS), _rate_axis(plan.rates_mbps), bad_axis),
        ),
        "alt_per": Grid(
            "alt_per",
            f"sensitivity: the {alt} profile's RTT signal, independent PER, 10 Mbit/s",
            _long(plan, **bernoulli),
            (_variant_axis(VARIANTS), alt_axis, per_axis),
        ),
        "alt_bad": Grid(
            "alt_bad",
            f"sensitivity: the {alt} profile's RTT signal, Bad-state PER, 10 Mbit/s",
            _long(plan, **gilbert),
            (_variant_axis({LP: "newreno-lp"}), alt_axis, bad_axis),
        ),
    }


def _short_groups(plan: Plan) -> Axis:
    return Axis.variants(
        "variant",
        {
            label: {
                "groups": [
                    {
                        "name": label,
                        "cc": cc,
                        "flows": plan.short_flows,
                        "bytes": plan.short_bytes,
                        "stagger": f"{plan.short_stagger_s:g}s",
                    }
                ]
            }
            for label, cc in PAIR.items()
        },
    )


def _rtt_short_grids(plan: Plan) -> dict[str, Grid]:
    """Fig. 6 (goodput vs RTT) and the short transfers, over "a single link"."""
    single = {"wired_delay": "50ms"}
    link = f"{plan.short_rate_mbps}Mbps"
    return {
        "rtt": Grid(
            "rtt",
            f"Fig. 6a/b: NewReno vs NewReno-LP × link × RTT, {plan.rtt_loss:.1%} loss",
            _long(plan, loss={"model": "bernoulli", "mean_loss": plan.rtt_loss}, **single),
            (
                _variant_axis(PAIR),
                Axis.variants(
                    "link_mbps",
                    {
                        r: {"wired_rate": f"{r}Mbps", "wireless_rate": f"{r}Mbps"}
                        for r in plan.rtt_rates_mbps
                    },
                ),
                _rtt_axis(plan.rtts_ms),
            ),
        ),
        "short": Grid(
            "short",
            f"short transfers: {plan.short_flows} × {plan.short_bytes / 1000:g} kB, "
            f"{plan.short_rate_mbps} Mbit/s, {plan.short_loss:.0%} loss, 100 ms",
            {
                "preset": "wired-wireless",
                "qdisc": QDISC,
                "wired_rate": link,
                "wireless_rate": link,
                "loss": {"model": "bernoulli", "mean_loss": plan.short_loss},
                "tcp": dict(TCP),
            },
            (
                _short_groups(plan),
                Axis.variants("iw", {iw: {"tcp.initial_cwnd": iw} for iw in plan.short_iws}),
            ),
        ),
    }


def _friend_grids(plan: Plan, runs: int) -> dict[str, Grid]:
    """Fig. 7a/b and the original-Westwood sensitivity runs (goodput and Fig. 7)."""
    replicas = _replica_axis(plan, runs)
    bernoulli = {"loss": {"model": "bernoulli", "mean_loss": 0.0}}
    per_axis = Axis.values("loss.mean_loss", list(plan.pers), name="per")
    return {
        "fig7a": Grid(
            "fig7a",
            f"Fig. 7a: n NewReno-LP + m NewReno, n + m = {plan.friend_flows}, error-free",
            _friend_base(plan),
            (_mix_axis("newreno-lp", plan), replicas),
            runs=1,
        ),
        "fig7b": Grid(
            "fig7b",
            f"Fig. 7b: n Westwood-NR + m NewReno, n + m = {plan.friend_flows}, error-free",
            _friend_base(plan),
            (_mix_axis("westwood-nr", plan), replicas),
            runs=1,
        ),
        "westwood": Grid(
            "westwood",
            "sensitivity: the original Westwood (UCLA ns-2 WestwoodNR) × C_SN × PER",
            _long(plan, **bernoulli),
            (_variant_axis(WESTWOOD_ORIGINAL), _rate_axis(plan.rates_mbps), per_axis),
        ),
        "fig7c": Grid(
            "fig7c",
            "sensitivity: n original Westwood + m NewReno, error-free",
            _friend_base(plan),
            (_mix_axis("westwood", plan), replicas),
            runs=1,
        ),
    }


def _trace_grids(plan: Plan) -> dict[str, Grid]:
    """The socket-buffer sensitivity grid and the V_p trace."""
    bernoulli = {"loss": {"model": "bernoulli", "mean_loss": 0.0}}
    return {
        "buffers": Grid(
            "buffers",
            "sensitivity: socket buffers 128 KiB vs 1 MB, ns3 vs linux vs ns2, C_SN = 2 Mbit/s",
            _long(plan, wired_rate=f"{BUFFER_RATE}Mbps", **bernoulli),
            (
                _variant_axis({NR: "newreno", LP: "newreno-lp", IDEAL: "newreno-ideal-lp"}),
                Axis.variants("stack", {p: {"tcp.profile": p} for p in STACKS}),
                Axis.variants(
                    "buffer_bytes",
                    {
                        b: {"tcp.send_buffer": b, "tcp.recv_buffer": b}
                        for b in (NS3_DEFAULT_BUFFER, BUFFER)
                    },
                ),
                Axis.values("loss.mean_loss", list(plan.buffer_pers), name="per"),
            ),
        ),
        "window": Grid(
            "window",
            f"sensitivity: ns-2's default window_ ({NS2_WINDOW_PACKETS} packets) instead of "
            f"{BUFFER / 1e6:g} MB, NewReno-LP, 10 Mbit/s",
            _long(plan, **bernoulli),
            (
                _variant_axis({LP: "newreno-lp"}),
                Axis.variants(
                    "window_bytes",
                    {NS2_WINDOW_PACKETS * MSS: {"tcp.recv_buffer": NS2_WINDOW_PACKETS * MSS}},
                ),
                Axis.values("loss.mean_loss", list(plan.window_pers), name="per"),
            ),
        ),
        "vp": Grid(
            "vp",
            "V_p over time: NewReno-LP, 10 Mbit/s, traced",
            _long(plan, **bernoulli, trace_interval=plan.trace_interval),
            (
                _variant_axis({LP: "newreno-lp"}),
                Axis.values("loss.mean_loss", list(plan.vp_pers), name="per"),
            ),
            runs=1,
            trace=True,
        ),
    }


def grids(plan: Plan, profile: str = "ns3", runs: int | None = None) -> dict[str, Grid]:
    """Every sweep of the reproduction (Fig. 2's accuracy reads Fig. 4's runs)."""
    return {
        **_long_grids(plan, profile),
        **_rtt_short_grids(plan),
        **_friend_grids(plan, runs or plan.runs),
        **_trace_grids(plan),
    }
