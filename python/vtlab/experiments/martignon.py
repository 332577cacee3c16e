"""Martignon: NewReno with the Vegas loss predictor over wired + wireless paths.

The study (``../shared/papers/martignon-newreno-lp.txt``, ns-2) gives NewReno a loss
predictor: at every loss event the Vegas predictor V_p = cwnd·(1 − RTT_min/RTT)
decides whether the loss came from congestion (halve, as NewReno) or from the noisy
wireless link (ssthresh = flight size, no halving). It measures the predictor's
accuracy, the goodput of NewReno, NewReno-LP, Westwood-NR and an ideal predictor on
the path S —(C_SN, T_SN)— N —(C_ND, T_ND, losses)— D, short transfers, friendliness
and fairness. ``vtlab reproduce martignon`` calls :func:`reproduce`.

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

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vtlab.api import Result
from vtlab.experiments import common
from vtlab.experiments.common import Campaign, Comparison, Config, Grid, Outcome
from vtlab.stats import ci95_halfwidth, jain_index
from vtlab.sweep import Axis

NAME = "martignon"
DESCRIPTION = (
    "Martignon, NewReno-LP over wired+wireless paths: accuracy (Fig. 2), goodput "
    "(Figs. 3-6), short transfers, friendliness (Fig. 7), Jain's index"
)
CITATION = (
    "F. Martignon, *TCP NewReno enhanced with the Vegas loss predictor (TCP NewReno-LP)*, "
    "ns-2 study of loss differentiation over heterogeneous wired/wireless networks "
    "(text in `../shared/papers/martignon-newreno-lp.txt`; the figures' data are not in "
    "the text, only the numbers and claims quoted below)"
)

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
#: Common TCP settings of every run.
TCP = {
    "recovery": "newreno",
    "timestamps": False,
    "mss": MSS,
    "header_bytes": HEADERS,
    "initial_cwnd": INITIAL_CWND,
    "send_buffer": BUFFER,
    "recv_buffer": BUFFER,
}
#: Correlated losses: Good 1 s without loss, Bad 0.05 s (time-based sojourns).
GILBERT = {"model": "gilbert-elliott", "sojourn": "time", "mean_good": 1.0, "mean_bad": 0.05}

# -- the paper's numbers ---------------------------------------------------------------


@dataclass(frozen=True)
class Quote:
    """A number or claim from the paper's text."""

    section: str
    quantity: str
    value: float
    unit: str
    text: str


#: Every number the text gives (the figures' data are not in the text).
QUOTES: dict[str, Quote] = {
    "short_lp": Quote(
        "§5 short-lived",
        "mean completion time of a 10 kB transfer, NewReno-LP",
        0.79,
        "s",
        "The average time to complete the transfer was 0.79 seconds for TCP NewReno-LP",
    ),
    "short_nr": Quote(
        "§5 short-lived",
        "mean completion time of a 10 kB transfer, NewReno",
        0.81,
        "s",
        "and 0.81 seconds for TCP NewReno",
    ),
    "jain_lp": Quote(
        "§5 fairness",
        "Jain's index of 5 NewReno-LP flows",
        0.9987,
        "",
        "The Jain's fairness index of 5 TCP NewReno-LP connections was equal to 0.9987",
    ),
    "jain_nr": Quote(
        "§5 fairness",
        "Jain's index of 5 NewReno flows",
        0.9995,
        "",
        "and that achieved by 5 TCP NewReno sources was equal to 0.9995",
    ),
}
#: §4: "In all the scenarios we examined, the accuracy of the Vegas predictor has
#: always been higher than 70%."
ACCURACY_FLOOR = 0.70
PAPER_SHORT_TRANSFERS = 500

# -- the plan --------------------------------------------------------------------------


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
)


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
        "wired_rate": "10Mbps",
        "wired_delay": "50ms",
        "wireless_rate": "10Mbps",
        "wireless_delay": "0.01ms",
        "bytes": "100GB",
        "stop": plan.stop,
        "tcp": dict(TCP),
        **extra,
    }


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


def grids(plan: Plan, profile: str = "ns3", runs: int | None = None) -> dict[str, Grid]:
    """Every sweep of the reproduction (Fig. 2's accuracy reads Fig. 4's runs)."""
    alt = other_profile(profile)
    alt_axis = Axis.variants("alt_profile", {alt: {"tcp.profile": alt}})
    bernoulli = {"loss": {"model": "bernoulli", "mean_loss": 0.0}}
    gilbert = {"loss": dict(GILBERT, loss_bad=0.0)}
    per_axis = Axis.values("loss.mean_loss", list(plan.pers), name="per")
    bad_axis = Axis.values("loss.loss_bad", list(plan.bad_pers), name="bad_per")
    single = {"wired_delay": "50ms"}
    short_groups = {
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
    }
    link = f"{plan.short_rate_mbps}Mbps"
    replicas = _replica_axis(plan, runs or plan.runs)
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
                "wired_rate": link,
                "wireless_rate": link,
                "loss": {"model": "bernoulli", "mean_loss": plan.short_loss},
                "tcp": dict(TCP),
            },
            (
                Axis.variants("variant", short_groups),
                Axis.variants("iw", {iw: {"tcp.initial_cwnd": iw} for iw in plan.short_iws}),
            ),
        ),
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
        "buffers": Grid(
            "buffers",
            "sensitivity: socket buffers 128 KiB vs 1 MB, ns3 vs linux, C_SN = 2 Mbit/s",
            _long(plan, wired_rate="2Mbps", **bernoulli),
            (
                _variant_axis({NR: "newreno", LP: "newreno-lp", IDEAL: "newreno-ideal-lp"}),
                Axis.variants("stack", {p: {"tcp.profile": p} for p in ("ns3", "linux")}),
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


#: Files every reproduction writes into its output folder.
FIGURES = ("fig2", "fig3", "fig4", "fig5", "fig6", "fig7", "short", "westwood")
#: Tables computed from the runs (written by :func:`write_tables`).
DATA_TABLES = (
    "accuracy",
    "goodput_per",
    "goodput_bad",
    "goodput_rtt",
    "short",
    "friendliness",
    "jain",
    "profiles",
    "westwood",
    "vp",
    "buffers",
)
TABLES = (*DATA_TABLES, "findings", "comparison")


def expected_outputs() -> list[str]:
    """Names of the files a reproduction writes (besides the run store)."""
    names = [f"{f}.{ext}" for f in FIGURES for ext in ("png", "svg")]
    names += [f"{t}.{ext}" for t in TABLES for ext in ("csv", "parquet")]
    names += ["report.md", common.CAMPAIGN_LOG]
    return names


# -- running ---------------------------------------------------------------------------


def run_all(config: Config) -> tuple[Plan, dict[str, Result], Campaign]:
    """Run (or load from the store) every grid."""
    plan = plan_for(config)
    campaign = Campaign(config, plan.runs)
    data = {
        name: campaign.run(grid)
        for name, grid in grids(plan, config.profile, campaign.runs).items()
    }
    return plan, data, campaign


def reproduce(config: Config) -> Outcome:
    """Run the campaign and write every figure, table and the report into
    ``config.out``."""
    started, out, plan, data, campaign, campaign_wall = common.run_campaign(config, NAME, run_all)
    s = summarize_all(data, plan)
    files: list[Path] = []
    files += write_tables(s, out)
    files += draw_figures(s, out, plan, config.profile)
    comparisons = compare(s)
    findings = evaluate_findings(s, plan)
    files += common.write_table(common.comparison_frame(comparisons), out, "comparison")
    files += common.write_table(findings_frame(findings), out, "findings")
    report = build_report(
        config,
        plan,
        s,
        comparisons,
        findings,
        runs=campaign.runs,
        wall_s=time.perf_counter() - started,
        campaign_wall_s=campaign_wall,
        simulated=campaign.simulated,
        loaded=campaign.loaded,
    )
    (out / "report.md").write_text(report)
    files += [out / "report.md", out / common.CAMPAIGN_LOG]
    return Outcome(
        out=out,
        files=files,
        wall_s=time.perf_counter() - started,
        simulated=campaign.simulated,
        loaded=campaign.loaded,
        campaign_wall_s=campaign_wall,
        findings=findings,
    )


# -- summaries -------------------------------------------------------------------------

MBPS = 1e-6


def with_accuracy(flows: pd.DataFrame) -> pd.DataFrame:
    """Flow rows with ``accuracy`` = correct_predictions / loss_events (the paper's
    definition; NaN for a run without loss events)."""
    f = flows.copy()
    events = f["loss_events"].astype(float)
    f["accuracy"] = f["correct_predictions"].astype(float) / events.where(events > 0)
    return f


def class_bounds(frame: pd.DataFrame) -> dict[str, float]:
    """Pooled counts and per-class accuracy bounds of a classifying sender.

    The flow row counts correct verdicts overall, not per class, so the correct link
    verdicts c_L are only bounded: c_L ≤ min(true link, predicted link, correct) and
    c_L ≥ correct − min(true congestion, predicted congestion) (and likewise c_C).
    """
    ev = float(frame["loss_events"].sum())
    tl = float(frame["true_link_losses"].sum())
    tc = float(frame["true_congestion_losses"].sum())
    pl = float(frame["predicted_link_losses"].sum())
    pc = float(frame["predicted_congestion_losses"].sum())
    ok = float(frame["correct_predictions"].sum())

    def ratio(a: float, b: float) -> float:
        return a / b if b > 0 else math.nan

    link_hi = min(tl, pl, ok)
    link_lo = max(0.0, ok - min(tc, pc))
    cong_hi = min(tc, pc, ok)
    cong_lo = max(0.0, ok - min(tl, pl))
    return {
        "loss_events": ev,
        "true_link": tl,
        "true_congestion": tc,
        "predicted_link": pl,
        "predicted_congestion": pc,
        "correct": ok,
        "pooled_accuracy": ratio(ok, ev),
        "known_cause_accuracy": ratio(ok, tl + tc),
        "link_share": ratio(tl, ev),
        "unknown_share": ratio(ev - tl - tc, ev),
        "link_accuracy_lo": ratio(link_lo, tl),
        "link_accuracy_hi": ratio(link_hi, tl),
        "congestion_accuracy_lo": ratio(cong_lo, tc),
        "congestion_accuracy_hi": ratio(cong_hi, tc),
    }


def accuracy_table(flows: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Accuracy mean ± CI over runs per group, with the pooled counts and bounds."""
    f = with_accuracy(flows)
    summary = common.summarize_runs(f, by, "accuracy")
    pooled = [
        {**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)), **class_bounds(g)}
        for key, g in f.groupby(list(by), sort=False)
    ]
    return summary.merge(pd.DataFrame(pooled), on=list(by), how="left")


def goodput_table(flows: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    out = common.summarize_runs(flows, by, "goodput_bps", scale=MBPS)
    return out.rename(columns={"mean": "goodput_mbps"})


def paired(
    flows: pd.DataFrame,
    by: Sequence[str],
    a: str,
    b: str,
    metric: str = "goodput_bps",
    scale: float = MBPS,
) -> pd.DataFrame:
    """Per-seed difference of ``metric`` between variants a and b (common random
    numbers), mean ± 95 % CI per group of ``by``; also the ratio of the means."""
    keys = [*by, "seed"]
    per = flows.groupby([*keys, "variant"], sort=False)[metric].mean().unstack("variant")
    diff = (per[a] - per[b]) * scale
    rows = []
    for key, d in diff.groupby(level=list(range(len(by))), sort=False):
        vals = d.dropna().to_numpy(dtype=float)
        n = vals.size
        sd = float(vals.std(ddof=1)) if n >= 2 else math.nan
        ka = key if isinstance(key, tuple) else (key,)
        sub = per.xs(ka, level=list(range(len(by))), drop_level=True) if by else per
        rows.append(
            {
                **dict(zip(by, ka, strict=True)),
                "n": n,
                "diff": float(vals.mean()),
                "diff_ci95": ci95_halfwidth(sd, n),
                "ratio": float(sub[a].mean() / sub[b].mean()) if sub[b].mean() else math.nan,
            }
        )
    return pd.DataFrame(rows)


def summarize_all(data: Mapping[str, Result], plan: Plan) -> dict[str, Any]:
    """Mean ± 95 % CI over runs of everything the figures and the report show."""
    s: dict[str, Any] = {}
    per, bad = data["per"].flows, data["bad"].flows
    classifiers = [LP, IDEAL]
    acc = []
    for frame, model, x in ((per, "independent", "per"), (bad, "correlated", "bad_per")):
        f = frame[frame["variant"].isin(classifiers)]
        t = accuracy_table(f, ["variant", "c_sn_mbps", x]).rename(columns={x: "x"})
        t.insert(0, "losses", model)
        t.insert(1, "profile", f["profile"].iloc[0])
        acc.append(t)
    for name, model, x in (("alt_per", "independent", "per"), ("alt_bad", "correlated", "bad_per")):
        f = data[name].flows
        f = f[f["variant"] == LP]
        t = accuracy_table(f, ["variant", x]).rename(columns={x: "x"})
        t.insert(0, "losses", model)
        t.insert(1, "profile", f["profile"].iloc[0])
        t.insert(3, "c_sn_mbps", 10)
        acc.append(t)
    s["accuracy"] = pd.concat(acc, ignore_index=True)
    s["goodput_per"] = goodput_table(per, ["variant", "c_sn_mbps", "per"])
    s["goodput_bad"] = goodput_table(bad, ["variant", "c_sn_mbps", "bad_per"])
    s["pair_per"] = {
        other: paired(per, ["c_sn_mbps", "per"], LP, other) for other in (NR, IDEAL, WNR)
    }
    s["pair_bad"] = {
        other: paired(bad, ["c_sn_mbps", "bad_per"], LP, other) for other in (NR, IDEAL)
    }
    alt = data["alt_per"].flows
    profiles = pd.concat(
        [
            goodput_table(per[per["c_sn_mbps"] == 10], ["variant", "profile", "per"]),
            goodput_table(alt, ["variant", "profile", "per"]),
        ],
        ignore_index=True,
    )
    extra = []
    for frame in (per[per["c_sn_mbps"] == 10], alt):
        extra.append(
            frame.groupby(["variant", "profile", "per"], sort=False)[
                ["rto_count", "drops_queue", "loss_events"]
            ]
            .mean()
            .reset_index()
        )
    s["profiles"] = profiles.merge(pd.concat(extra), on=["variant", "profile", "per"])
    rtt = data["rtt"].flows
    s["goodput_rtt"] = goodput_table(rtt, ["variant", "link_mbps", "rtt_ms"])
    s["pair_rtt"] = paired(rtt, ["link_mbps", "rtt_ms"], LP, NR)
    s["short"], s["short_flows"] = short_summary(data["short"].flows, plan)
    s["friendliness"], s["jain"] = friendliness_summary(data["fig7a"].flows, data["fig7b"].flows)
    s["westwood"], s["westwood_friend"] = westwood_summary(
        per, data["westwood"].flows, data["fig7c"].flows
    )
    s["vp"] = vp_summary(data["vp"].traces, data["vp"].flows)
    b = data["buffers"].flows
    keys = ["variant", "stack", "buffer_bytes", "per"]
    s["buffers"] = goodput_table(b, keys).merge(
        b.groupby(keys, sort=False)[["rto_count", "drops_queue"]].mean().reset_index(), on=keys
    )
    return s


def westwood_summary(
    per: pd.DataFrame, original: pd.DataFrame, friend: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Goodput of the original Westwood beside the four senders, and its Fig. 7."""
    both = pd.concat([per, original], ignore_index=True)
    g = goodput_table(both, ["variant", "c_sn_mbps", "per"])
    f = _replicas_as_runs(friend)
    f["class"] = f["cc"].map(LABEL_OF_CC)
    t = goodput_table(f, ["newreno_flows", "class"])
    total = (
        f.groupby(["newreno_flows", "seed"])["goodput_bps"].sum().groupby("newreno_flows").mean()
        * MBPS
    )
    flows_per_run = int(f.groupby(["newreno_flows", "seed"]).size().max())
    t["fair_share_mbps"] = t["newreno_flows"].map(total) / flows_per_run
    return g, t


def vp_summary(traces: pd.DataFrame | None, flows: pd.DataFrame) -> pd.DataFrame:
    """Share of time the Vegas predictor's V_p lies above β, below α or between.

    V_p = cwnd·(1 − RTT_min/RTT) is recomputed from the traced cwnd and SRTT, with
    RTT_min the running minimum of the traced SRTT (the ns3 profile's predictor
    input, sampled every trace interval; α = 1, β = 3 segments).
    """
    cols = ["per", "samples", "vp_mean", "share_above_beta", "share_below_alpha", "share_between"]
    if traces is None or traces.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for per, t in traces.groupby("per", sort=True):
        t = t.sort_values("time_s")
        t = t[t["srtt_s"].notna() & (t["srtt_s"] > 0)]
        rtt_min = t["srtt_s"].cummin()
        vp = t["cwnd_bytes"] / MSS * (1 - rtt_min / t["srtt_s"])
        rows.append(
            {
                "per": float(per),
                "samples": int(vp.size),
                "vp_mean": float(vp.mean()),
                "share_above_beta": float((vp > 3).mean()),
                "share_below_alpha": float((vp < 1).mean()),
                "share_between": float(((vp >= 1) & (vp <= 3)).mean()),
            }
        )
    return pd.DataFrame(rows, columns=cols)


def short_summary(flows: pd.DataFrame, plan: Plan) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Mean completion time per run, then mean ± CI over runs; pooled percentiles."""
    f = flows.copy()
    out = common.summarize_runs(f, ["variant", "iw"], "completion_s")
    rows = []
    for (variant, iw), g in f.groupby(["variant", "iw"], sort=False):
        c = g["completion_s"].astype(float)
        rows.append(
            {
                "variant": variant,
                "iw": iw,
                "transfers": int(len(g)),
                "completed": int(g["completed"].sum()),
                "median_s": float(c.median()),
                "p90_s": float(c.quantile(0.9)),
                "max_s": float(c.max()),
                "longer_than_stagger": int((c > plan.short_stagger_s).sum()),
                "with_rto": int((g["rto_count"] > 0).sum()),
            }
        )
    out = out.rename(columns={"mean": "completion_mean_s"}).merge(
        pd.DataFrame(rows), on=["variant", "iw"]
    )
    return out, f[["variant", "iw", "seed", "flow", "completion_s"]]


def _replicas_as_runs(flows: pd.DataFrame) -> pd.DataFrame:
    """The friendliness grids run one seed per replica: the replica is the run."""
    f = flows.copy()
    f["seed"] = f["replica"].astype(int)
    return f


def friendliness_summary(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-class mean goodput per mix (Fig. 7) and Jain's index of the pure mixes."""
    frames = []
    a, b = _replicas_as_runs(a), _replicas_as_runs(b)
    for fig, flows in (("7a", a), ("7b", b)):
        f = flows.copy()
        f["class"] = f["cc"].map(LABEL_OF_CC)
        t = goodput_table(f, ["newreno_flows", "class"])
        total = (
            f.groupby(["newreno_flows", "seed"])["goodput_bps"]
            .sum()
            .groupby("newreno_flows")
            .mean()
            * MBPS
        )
        flows_per_run = int(f.groupby(["newreno_flows", "seed"]).size().max())
        t["fair_share_mbps"] = t["newreno_flows"].map(total) / flows_per_run
        t.insert(0, "figure", fig)
        frames.append(t)
    friend = pd.concat(frames, ignore_index=True)
    jrows = []
    for label, flows, m in ((LP, a, 0), (NR, a, 5), (WNR, b, 0)):
        g = flows[flows["newreno_flows"] == m]
        per_run = g.groupby("seed")["goodput_bps"].apply(lambda x: jain_index(x.to_numpy()))
        vals = per_run.to_numpy(dtype=float)
        n = vals.size
        sd = float(vals.std(ddof=1)) if n >= 2 else math.nan
        jrows.append(
            {
                "variant": label,
                "flows": int(g.groupby("seed").size().iloc[0]),
                "n": n,
                "jain_mean": float(vals.mean()),
                "sd": sd,
                "ci95": ci95_halfwidth(sd, n),
                "jain_min": float(vals.min()),
            }
        )
    return friend, pd.DataFrame(jrows)


def _one(frame: pd.DataFrame, col: str = "goodput_mbps", **labels: Any) -> float:
    rows = frame
    for k, v in labels.items():
        if isinstance(v, float):
            rows = rows[(rows[k].astype(float) - v).abs() < 1e-12]
        else:
            rows = rows[rows[k] == v]
    return float(rows[col].iloc[0]) if len(rows) else math.nan


def _row(frame: pd.DataFrame, **labels: Any) -> pd.Series | None:
    rows = frame
    for k, v in labels.items():
        if isinstance(v, float):
            rows = rows[(rows[k].astype(float) - v).abs() < 1e-12]
        else:
            rows = rows[rows[k] == v]
    return rows.iloc[0] if len(rows) else None


# -- tables ----------------------------------------------------------------------------


def write_tables(s: Mapping[str, Any], out: Path) -> list[Path]:
    files: list[Path] = []
    for name in DATA_TABLES:
        files += common.write_table(s[name], out, name)
    return files


# -- figures ---------------------------------------------------------------------------


def draw_figures(s: Mapping[str, Any], out: Path, plan: Plan, profile: str) -> list[Path]:
    files: list[Path] = []
    files += _fig2(s, out, profile)
    files += _fig_goodput(s, out, "fig3", plan.rates_mbps[:2])
    files += _fig_goodput(s, out, "fig4", plan.rates_mbps[2:])
    files += _fig5(s, out, plan)
    files += _fig6(s, out, plan)
    files += _fig7(s, out)
    files += _fig_short(s, out)
    files += _fig_westwood(s, out)
    return files


def _fig_westwood(s: Mapping[str, Any], out: Path) -> list[Path]:
    fig, axes = common.figure(1, 2, width=9.0, height=3.6)
    g = s["westwood"].rename(columns={"goodput_mbps": "mean"})
    rows = g[g["c_sn_mbps"] == 10]
    order = [NR, LP, WNR, WO]
    common.plot_lines(
        axes[0], rows, x="per", hue="variant", order=order, style=STYLE, x_scale=100.0
    )
    _per_axis(axes[0], "Goodput (Mbit/s)")
    axes[0].set_title("(a) goodput vs PER, C_SN = 10 Mbit/s")
    axes[0].legend(loc="lower left")
    f = s["westwood_friend"].rename(columns={"goodput_mbps": "mean"})
    common.plot_lines(axes[1], f, x="newreno_flows", hue="class", order=[WO, NR], style=STYLE)
    fair = f.drop_duplicates("newreno_flows").sort_values("newreno_flows")
    axes[1].plot(
        fair["newreno_flows"],
        fair["fair_share_mbps"],
        color="black",
        linewidth=1.0,
        label="Fair share",
    )
    axes[1].set_ylim(0, float((f["mean"] + f["ci95"].fillna(0)).max()) * 1.15)
    axes[1].set_xlabel("Number of TCP NewReno connections")
    axes[1].set_ylabel("Average goodput (Mbit/s)")
    axes[1].set_title("(b) original Westwood and NewReno (as Fig. 7b)")
    axes[1].legend(loc="upper right")
    fig.suptitle("Which Westwood? Westwood+ (westwood-nr) vs the original (UCLA ns-2 filter)")
    return common.save_figure(fig, out, "westwood")


def _per_axis(ax: Any, ylabel: str) -> None:
    ax.set_xscale("log")
    ax.set_xlabel("Packet Error Rate (%)")
    ax.set_ylabel(ylabel)


def _fig2(s: Mapping[str, Any], out: Path, profile: str) -> list[Path]:
    fig, axes = common.figure(1, 2, width=9.0, height=4.0)
    acc = s["accuracy"]
    alt = other_profile(profile)
    labels = {
        (LP, profile): f"NewReno-LP (Vegas predictor, {profile} profile)",
        (LP, alt): f"NewReno-LP ({alt} profile)",
        (IDEAL, profile): "NewReno-Ideal-LP (oracle)",
    }
    style = {
        labels[(LP, profile)]: STYLE[LP],
        labels[(LP, alt)]: {**STYLE["NewReno-LP (other profile)"], "linestyle": "--"},
        labels[(IDEAL, profile)]: {**STYLE[IDEAL], "linestyle": ":"},
    }
    for ax, model, scale, title, xlabel in (
        (axes[0], "independent", 100.0, "(a) independent packet losses", None),
        (
            axes[1],
            "correlated",
            100.0,
            "(b) correlated packet losses",
            "Packet Error Rate in the Bad state (%)",
        ),
    ):
        rows = acc[(acc["losses"] == model) & (acc["c_sn_mbps"] == 10)].copy()
        rows["label"] = [
            labels.get((v, p), "") for v, p in zip(rows["variant"], rows["profile"], strict=True)
        ]
        rows = rows[rows["label"] != ""]
        common.plot_lines(
            ax, rows, x="x", hue="label", order=list(style), style=style, x_scale=scale
        )
        ax.set_ylim(0, 1.05)
        ax.axhline(ACCURACY_FLOOR, color="grey", linewidth=0.8, linestyle="-.")
        if model == "independent":
            _per_axis(ax, "Accuracy")
        else:
            ax.set_xlabel(xlabel)
            ax.set_ylabel("Accuracy")
        ax.set_title(title)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    fig.suptitle("Fig. 2: accuracy of loss classification (C_SN = C_ND = 10 Mbit/s, RTT 100 ms)")
    return common.save_figure(fig, out, "fig2")


def _fig_goodput(s: Mapping[str, Any], out: Path, stem: str, rates: Sequence[int]) -> list[Path]:
    n = len(rates)
    if n == 0:
        return []
    fig, axes = common.figure(1, n, width=4.6 * n, height=3.6)
    axes = np.atleast_1d(axes)
    g = s["goodput_per"].rename(columns={"goodput_mbps": "mean"})
    for i, (ax, rate) in enumerate(zip(axes, rates, strict=True)):
        rows = g[g["c_sn_mbps"] == rate]
        common.plot_lines(
            ax, rows, x="per", hue="variant", order=list(VARIANTS), style=STYLE, x_scale=100.0
        )
        _per_axis(ax, "Goodput (Mbit/s)")
        tag = f"({'ab'[i]}) " if n > 1 else ""
        ax.set_title(f"{tag}C_SN = {rate} Mbit/s, C_ND = 10 Mbit/s")
        ax.legend(loc="lower left")
    number = "3" if stem == "fig3" else "4"
    fig.suptitle(f"Fig. {number}: goodput vs independent PER, RTT 100 ms")
    return common.save_figure(fig, out, stem)


def _fig5(s: Mapping[str, Any], out: Path, plan: Plan) -> list[Path]:
    rates = plan.rates_mbps[:2]
    fig, axes = common.figure(1, len(rates), width=9.0, height=3.6)
    g = s["goodput_bad"].rename(columns={"goodput_mbps": "mean"})
    for i, (ax, rate) in enumerate(zip(np.atleast_1d(axes), rates, strict=True)):
        rows = g[g["c_sn_mbps"] == rate]
        common.plot_lines(
            ax, rows, x="bad_per", hue="variant", order=list(VARIANTS), style=STYLE, x_scale=100.0
        )
        ax.set_xlabel("Packet Error Rate in the Bad state (%)")
        ax.set_ylabel("Goodput (Mbit/s)")
        ax.set_title(f"({'ab'[i]}) C_SN = {rate} Mbit/s, C_ND = 10 Mbit/s")
        ax.legend(loc="lower left")
    fig.suptitle("Fig. 5: goodput vs Bad-state PER (Good 1 s, Bad 0.05 s), RTT 100 ms")
    return common.save_figure(fig, out, "fig5")


def _fig6(s: Mapping[str, Any], out: Path, plan: Plan) -> list[Path]:
    rates = plan.rtt_rates_mbps
    fig, axes = common.figure(1, len(rates), width=9.0, height=3.6)
    g = s["goodput_rtt"].rename(columns={"goodput_mbps": "mean"})
    for i, (ax, rate) in enumerate(zip(np.atleast_1d(axes), rates, strict=True)):
        rows = g[g["link_mbps"] == rate]
        common.plot_lines(ax, rows, x="rtt_ms", hue="variant", order=list(PAIR), style=STYLE)
        ax.set_xlabel("Round Trip Time (ms)")
        ax.set_ylabel("Goodput (Mbit/s)")
        ax.set_title(f"({'ab'[i]}) {rate} Mbit/s link")
        ax.legend(loc="upper right")
    fig.suptitle(f"Fig. 6: goodput vs RTT, {plan.rtt_loss:.1%} independent loss")
    return common.save_figure(fig, out, "fig6")


def _fig7(s: Mapping[str, Any], out: Path) -> list[Path]:
    fig, axes = common.figure(1, 2, width=9.0, height=3.6)
    f = s["friendliness"].rename(columns={"goodput_mbps": "mean"})
    for ax, fig_id, other, title in (
        (axes[0], "7a", LP, "(a) TCP NewReno-LP and TCP NewReno"),
        (axes[1], "7b", WNR, "(b) TCP Westwood-NR and TCP NewReno"),
    ):
        rows = f[f["figure"] == fig_id]
        common.plot_lines(ax, rows, x="newreno_flows", hue="class", order=[other, NR], style=STYLE)
        fair = rows.drop_duplicates("newreno_flows").sort_values("newreno_flows")
        ax.plot(
            fair["newreno_flows"],
            fair["fair_share_mbps"],
            color="black",
            linewidth=1.0,
            label="Fair share",
        )
        top = float(rows["mean"].max() + rows["ci95"].fillna(0).max())
        ax.set_ylim(0, max(top, float(fair["fair_share_mbps"].max())) * 1.25)
        ax.set_xlabel("Number of TCP NewReno connections")
        ax.set_ylabel("Average goodput (Mbit/s)")
        ax.set_title(title)
        ax.legend(loc="lower center", ncol=3)
    fig.suptitle("Fig. 7: n + m = 5 connections, 10 Mbit/s, RTT 100 ms, error-free")
    return common.save_figure(fig, out, "fig7")


def _fig_short(s: Mapping[str, Any], out: Path) -> list[Path]:
    fig, ax = common.figure(1, 1, width=5.6, height=3.6)
    flows = s["short_flows"]
    iws = sorted(flows["iw"].unique())
    for label in PAIR:
        for j, iw in enumerate(iws):
            c = np.sort(
                flows[(flows["variant"] == label) & (flows["iw"] == iw)]["completion_s"]
                .dropna()
                .to_numpy(dtype=float)
            )
            if c.size == 0:
                continue
            y = np.arange(1, c.size + 1) / c.size
            ax.step(
                c,
                y,
                where="post",
                color=STYLE[label]["color"],
                linestyle="-" if j == 0 else "--",
                label=f"{label}, IW {iw} (mean {c.mean():.2f} s)",
            )
    ax.set_xscale("log")
    ax.set_xlabel("Completion time of a 10 kB transfer (s)")
    ax.set_ylabel("Fraction of transfers")
    ax.set_title("Short transfers: 5 Mbit/s, 5 % loss, RTT 100 ms")
    ax.legend(loc="lower right")
    return common.save_figure(fig, out, "short")


# -- comparison with the paper ---------------------------------------------------------


def compare(s: Mapping[str, Any]) -> list[Comparison]:
    """The paper's four numbers beside vtlab's."""
    rows: list[Comparison] = []
    short = s["short"]
    iw = INITIAL_CWND
    for key, label in (("short_lp", LP), ("short_nr", NR)):
        q = QUOTES[key]
        r = _row(short, variant=label, iw=iw)
        rows.append(
            Comparison(
                q.section,
                q.quantity,
                q.value,
                float(r["completion_mean_s"]) if r is not None else math.nan,
                ci=float(r["ci95"]) if r is not None else math.nan,
                sd=float(r["sd"]) if r is not None else math.nan,
                n=int(r["n"]) if r is not None else 0,
                unit="s",
                note=f"IW {iw}, mean of per-run means",
            )
        )
    jain = s["jain"]
    for key, label in (("jain_lp", LP), ("jain_nr", NR)):
        q = QUOTES[key]
        r = _row(jain, variant=label)
        rows.append(
            Comparison(
                q.section,
                q.quantity,
                q.value,
                float(r["jain_mean"]) if r is not None else math.nan,
                ci=float(r["ci95"]) if r is not None else math.nan,
                sd=float(r["sd"]) if r is not None else math.nan,
                n=int(r["n"]) if r is not None else 0,
                unit="",
            )
        )
    return rows


# -- the study's claims, checked -------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """A claim of the paper and what vtlab's data say about it."""

    figure: str
    claim: str
    ours: str
    holds: bool | str


def findings_frame(findings: Sequence[Finding]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "figure": [f.figure for f in findings],
            "claim": [f.claim for f in findings],
            "vtlab": [f.ours for f in findings],
            "verdict": [_verdict(f.holds) for f in findings],
        }
    )


def _verdict(holds: bool | str) -> str:
    if isinstance(holds, str):
        return holds
    return "holds" if holds else "does not hold"


def _pct(x: float, digits: int = 0) -> str:
    return "–" if not math.isfinite(x) else f"{x * 100:.{digits}f} %"


def _per_label(p: float) -> str:
    return f"{p * 100:g} %"


def _accuracy_rows(s: Mapping[str, Any], model: str, profile: str) -> pd.DataFrame:
    a = s["accuracy"]
    return a[
        (a["losses"] == model)
        & (a["variant"] == LP)
        & (a["profile"] == profile)
        & (a["c_sn_mbps"] == 10)
    ].sort_values("x")


def evaluate_findings(s: Mapping[str, Any], plan: Plan) -> list[Finding]:
    out: list[Finding] = []
    profile = str(s["accuracy"]["profile"].iloc[0])

    # Fig. 2a
    acc = _accuracy_rows(s, "independent", profile)
    if len(acc):
        worst = acc.loc[acc["mean"].idxmin()]
        out.append(
            Finding(
                "Fig. 2a",
                "Vegas predictor accuracy > 70 % over PER 0.01–10 % (independent losses)",
                f"{_pct(acc['mean'].min())} (at PER {_per_label(worst['x'])}) to "
                f"{_pct(acc['mean'].max())}; {int((acc['mean'] >= ACCURACY_FLOOR).sum())} of "
                f"{len(acc)} PER levels ≥ 70 %",
                bool(acc["mean"].min() >= ACCURACY_FLOOR),
            )
        )
    accb = _accuracy_rows(s, "correlated", profile)
    accb = accb[accb["x"] > 0]
    if len(accb):
        lo = float(accb["mean"].min())
        out.append(
            Finding(
                "Fig. 2b",
                "accuracy high, approaching an ideal estimator, over Bad-state PER (correlated)",
                f"{_pct(lo)} to {_pct(accb['mean'].max())} for Bad-state PER > 0",
                True if lo >= 0.9 else ("partly (> 70 %)" if lo >= ACCURACY_FLOOR else False),
            )
        )
    # Figs. 3-4
    pair = s["pair_per"][NR]
    better = pair[pair["diff"] > 0]
    signif_worse = pair[pair["diff"] + pair["diff_ci95"].fillna(0) < 0]
    out.append(
        Finding(
            "Figs. 3–4",
            "NewReno-LP goodput > NewReno at every PER and link speed",
            f"LP above NewReno at {len(better)} of {len(pair)} (C_SN, PER) points, "
            f"significantly below at {len(signif_worse)}; LP/NewReno ratio "
            f"{pair['ratio'].min():.2f}–{pair['ratio'].max():.2f}",
            len(signif_worse) == 0 and len(better) >= len(pair) - 1,
        )
    )
    low = min(plan.pers)
    low_ratio = pair[(pair["per"] - low).abs() < 1e-12]
    out.append(
        Finding(
            "Figs. 3–4",
            "at PER close to zero NewReno-LP ≈ NewReno",
            f"LP/NewReno at PER {_per_label(low)}: "
            + ", ".join(f"{r.ratio:.3f} ({r.c_sn_mbps} Mbit/s)" for r in low_ratio.itertuples()),
            bool((low_ratio["ratio"].sub(1).abs() <= 0.05).all()),
        )
    )
    g = s["goodput_per"]
    piv = g.pivot_table(index=["c_sn_mbps", "per"], columns="variant", values="goodput_mbps")
    wnr_top = piv[WNR] >= piv[[NR, LP]].max(axis=1)
    hi = piv.xs(max(plan.pers), level="per")
    out.append(
        Finding(
            "Figs. 3–4",
            "Westwood-NR achieves the highest goodput of the real senders, especially at high PER",
            f"Westwood-NR ≥ NewReno and LP at {int(wnr_top.sum())} of {len(piv)} points; at "
            f"PER {_per_label(max(plan.pers))}: "
            + ", ".join(f"WNR/LP {r[WNR] / r[LP]:.2f} ({i} Mbit/s)" for i, r in hi.iterrows()),
            True if wnr_top.all() else ("mostly" if wnr_top.mean() >= 0.75 else False),
        )
    )
    ideal = s["pair_per"][IDEAL]
    mins = ideal.groupby("c_sn_mbps")["ratio"].min()
    out.append(
        Finding(
            "Figs. 3–4",
            "NewReno-LP approaches the Ideal-LP upper bound in every scenario",
            "lowest LP/Ideal-LP ratio over PER: "
            + ", ".join(f"{v:.2f} ({k} Mbit/s)" for k, v in mins.items()),
            True if mins.min() >= 0.9 else ("partly (≥ 0.75)" if mins.min() >= 0.75 else False),
        )
    )
    # Fig. 5
    pb = s["pair_bad"][NR]
    pb = pb[(pb["bad_per"] > 0) & pb["c_sn_mbps"].isin(plan.rates_mbps[:2])]
    ib = s["pair_bad"][IDEAL]
    ib = ib[(ib["bad_per"] > 0) & ib["c_sn_mbps"].isin(plan.rates_mbps[:2])]
    gains = pb.groupby("c_sn_mbps")["ratio"].mean()
    out.append(
        Finding(
            "Fig. 5",
            "correlated losses: NewReno-LP > NewReno, practically overlapping Ideal-LP",
            f"LP above NewReno at {int((pb['diff'] > 0).sum())} of {len(pb)} points; LP/Ideal "
            f"{ib['ratio'].min():.2f}–{ib['ratio'].max():.2f}",
            bool((pb["diff"] > 0).all() and ib["ratio"].min() >= 0.9)
            or ("partly" if (pb["diff"] > 0).mean() >= 0.75 else False),
        )
    )
    if len(gains) >= 2:
        r2, r5 = (float(gains.get(r, math.nan)) for r in plan.rates_mbps[:2])
        out.append(
            Finding(
                "Fig. 5",
                "the gain of LP over NewReno is larger at 5 Mbit/s than at 2 Mbit/s",
                f"mean LP/NewReno over Bad PER > 0: {r2:.2f} (2 Mbit/s), {r5:.2f} (5 Mbit/s)",
                bool(r5 > r2),
            )
        )
    # Fig. 6
    pr = s["pair_rtt"]
    parts, grows = [], []
    for rate, rows in pr.groupby("link_mbps"):
        rows = rows.sort_values("rtt_ms")
        first, last = rows.iloc[0], rows.iloc[-1]
        parts.append(
            f"{rate} Mbit/s: LP/NewReno {first['ratio']:.2f} at {first['rtt_ms']:g} ms → "
            f"{last['ratio']:.2f} at {last['rtt_ms']:g} ms"
        )
        grows.append(
            last["ratio"] > first["ratio"]
            and (rows["diff"] + rows["diff_ci95"].fillna(0) >= 0).all()
        )
    out.append(
        Finding(
            "Fig. 6",
            "high goodput gain of LP over NewReno at 0.5 % loss, growing with the RTT",
            "; ".join(parts),
            all(grows),
        )
    )
    # short transfers
    short = s["short"]
    lp, nr = (_row(short, variant=v, iw=INITIAL_CWND) for v in (LP, NR))
    if lp is not None and nr is not None:
        d = float(lp["completion_mean_s"] - nr["completion_mean_s"])
        out.append(
            Finding(
                "§5 short-lived",
                "short transfers: NewReno-LP completes as fast as NewReno (0.79 vs 0.81 s)",
                f"{lp['completion_mean_s']:.3f} vs {nr['completion_mean_s']:.3f} s "
                f"(difference {d:+.3f} s, IW {INITIAL_CWND})",
                bool(abs(d) <= 0.05 * float(nr["completion_mean_s"]) + 0.02),
            )
        )
    # Fig. 7
    f = s["friendliness"]
    for fig_id, other, claim in (
        ("7a", LP, "NewReno-LP and NewReno both get very close to the fair share in every mix"),
        ("7b", WNR, "Westwood-NR gets more than the fair share practically in every mix"),
    ):
        rows = f[(f["figure"] == fig_id)]
        mixed = rows[(rows["newreno_flows"] > 0) & (rows["newreno_flows"] < 5)]
        dev = (mixed["goodput_mbps"] / mixed["fair_share_mbps"] - 1).abs()
        mine = mixed[mixed["class"] == other]
        above = int((mine["goodput_mbps"] > mine["fair_share_mbps"]).sum())
        ratio = (mine["goodput_mbps"] / mine["fair_share_mbps"]).to_numpy()
        if fig_id == "7a":
            ours = (
                f"largest deviation from the fair share in the mixed cases {_pct(dev.max(), 1)}; "
                f"LP/fair share {ratio.min():.2f}–{ratio.max():.2f}"
            )
            holds: bool | str = bool(dev.max() <= 0.10) or (
                "partly (≤ 25 %)" if dev.max() <= 0.25 else False
            )
        else:
            ours = (
                f"Westwood-NR above the fair share in {above} of {len(mine)} mixed cases; "
                f"Westwood-NR/fair share {ratio.min():.2f}–{ratio.max():.2f}"
            )
            holds = above >= len(mine) - 1 and len(mine) > 0
        out.append(Finding(f"Fig. {fig_id}", claim, ours, holds))
    wf = s["westwood_friend"]
    mine = wf[(wf["class"] == WO) & (wf["newreno_flows"] > 0) & (wf["newreno_flows"] < 5)]
    if len(mine):
        ratio = (mine["goodput_mbps"] / mine["fair_share_mbps"]).to_numpy()
        above = int((ratio > 1).sum())
        out.append(
            Finding(
                "Fig. 7b (sensitivity)",
                "the same claim with the original Westwood (UCLA ns-2 WestwoodNR filter)",
                f"original Westwood above the fair share in {above} of {len(mine)} mixed "
                f"cases; Westwood/fair share {ratio.min():.2f}–{ratio.max():.2f}",
                above >= len(mine) - 1,
            )
        )
    j = s["jain"]
    jl, jn = (_row(j, variant=v) for v in (LP, NR))
    if jl is not None and jn is not None:
        out.append(
            Finding(
                "§5 fairness",
                "Jain's index of 5 LP flows ≈ that of 5 NewReno flows (0.9987 vs 0.9995)",
                f"{jl['jain_mean']:.4f} vs {jn['jain_mean']:.4f}",
                bool(abs(jl["jain_mean"] - jn["jain_mean"]) <= 0.01),
            )
        )
    return out


# -- the report ------------------------------------------------------------------------


def build_report(
    config: Config,
    plan: Plan,
    s: Mapping[str, Any],
    comparisons: Sequence[Comparison],
    findings: Sequence[Finding],
    *,
    runs: int,
    wall_s: float,
    campaign_wall_s: float,
    simulated: int,
    loaded: int,
) -> str:
    alt = other_profile(config.profile)
    lines: list[str] = []
    add = lines.append
    add("# Reproduction: Martignon — TCP NewReno-LP over wired + wireless paths\n")
    add(f"{CITATION}.\n")
    add(
        common.md_table(
            ["", ""],
            [
                ["command", f"`{config.command(NAME)}`"],
                ["vtlab version", f"{common.version()} (core build {common.core_build()})"],
                [
                    "TCP profile",
                    f'`{config.profile}` with `recovery = "newreno"` and `timestamps = false` '
                    f"for every sender; the predictor's RTT signal is also run under `{alt}`",
                ],
                ["runs per point", f"{runs} (seeds 1–{runs}; common random numbers)"],
                *common.session_rows(campaign_wall_s, wall_s, simulated, loaded),
            ],
            align="ll",
        )
    )
    if config.quick:
        add(
            f"> **Quick version** (CI): {runs} runs of {plan.duration_s:g} s, PER "
            f"{', '.join(_per_label(p) for p in plan.pers)}, Bad-state PER "
            f"{', '.join(_per_label(p) for p in plan.bad_pers)}, RTT "
            f"{', '.join(f'{r:g}' for r in plan.rtts_ms)} ms, {plan.short_flows} short "
            "transfers per run. The numbers are noisy; run without `--quick` for the "
            "reproduction.\n"
        )
    add(_setup_section(plan))
    add("## The paper's numbers beside vtlab's\n")
    add(
        "The text quotes four numbers; the figures' data are not in it. Relative "
        "differences beyond 25 % are in bold.\n"
    )
    add(common.comparison_table(comparisons, digits=4))
    add("## The study's claims, checked on our data\n")
    add(
        common.md_table(
            ["where", "paper", "vtlab", "verdict"],
            [[f.figure, f.claim, f.ours, _verdict(f.holds)] for f in findings],
            align="llll",
        )
    )
    add(_accuracy_section(s, config.profile, alt))
    add(_goodput_section(s, plan))
    add(_rtt_short_section(s, plan))
    add(_friendliness_section(s))
    add(_westwood_section(s, plan))
    add(_profile_section(s, config.profile, alt, plan))
    add(_deviation_section(s, comparisons, findings, config.profile, alt, plan))
    add("## Files\n")
    add(
        common.md_table(
            ["file", "content"],
            [
                [
                    "`fig2.png/.svg`",
                    "Fig. 2a/b: accuracy vs PER (independent) and Bad-state "
                    "PER (correlated), 10 Mbit/s; NewReno-LP under both profiles, Ideal-LP",
                ],
                [
                    "`fig3.png/.svg`, `fig4.png/.svg`",
                    "Figs. 3a/b, 4: goodput vs PER, C_SN = 2, 5, 10 Mbit/s, four senders",
                ],
                ["`fig5.png/.svg`", "Fig. 5a/b: goodput vs Bad-state PER, C_SN = 2, 5 Mbit/s"],
                ["`fig6.png/.svg`", "Fig. 6a/b: goodput vs RTT at 0.5 % loss, 2 and 5 Mbit/s"],
                ["`fig7.png/.svg`", "Fig. 7a/b: per-class mean goodput, n + m = 5 flows"],
                ["`short.png/.svg`", "CDF of the short transfers' completion times"],
                ["`accuracy.*`", "accuracy mean ± CI per point, pooled counts, per-class bounds"],
                ["`goodput_per.*`, `goodput_bad.*`, `goodput_rtt.*`", "goodput mean ± CI"],
                ["`short.*`, `friendliness.*`, `jain.*`", "short transfers, Fig. 7, Jain"],
                [
                    "`profiles.*`",
                    f"10 Mbit/s goodput, RTOs and queue drops, {config.profile} vs {alt}",
                ],
                ["`findings.*`, `comparison.*`", "the tables above"],
                ["`runs/`, `campaign.json`", "the run store and the session log"],
            ],
            align="ll",
        )
    )
    return "\n".join(lines)


def _setup_section(plan: Plan) -> str:
    return (
        "## Setup\n\n"
        "* **Topology** (paper Fig. 1), preset `wired-wireless`: S —(C_SN, T_SN)— N —"
        "(C_ND, T_ND, losses toward D)— D; drop-tail queues of the bandwidth-delay product "
        "(⌈min(C)·RTT / 1500 B⌉ packets) at every link. Figs. 2–5: C_ND = 10 Mbit/s, "
        "T_SN = 50 ms, T_ND = 0.01 ms (RTT 100 ms). Fig. 5 follows the captions "
        "(C_SN = 2, 5 Mbit/s, C_ND = 10 Mbit/s), not the text's \"wireless link "
        'capacities equal to 2 and 5 Mbit/s". Fig. 6, the short transfers and Fig. 7 are '
        '"a single link": both hops get the same capacity (the queue is at S) and the '
        "RTT is set by T_SN.\n"
        "* **Losses** on N → D only: independent (Bernoulli, the paper's Poisson process "
        "of packet errors) with PER 0.01–10 %, or correlated (Gilbert-Elliott, Good state "
        "mean 1 s without loss, Bad state mean 0.05 s with PER 0–100 %, exponential "
        "sojourns; mean loss = Bad PER × 4.76 %).\n"
        f"* **Senders**: {', '.join(f'{k} = `{v}`' for k, v in VARIANTS.items())}. Every "
        'one uses classic NewReno recovery (RFC 6582; `tcp.recovery = "newreno"`), the '
        "NewReno baseline included, as in the study's ns-2 NewReno: the profile default "
        "(SACK + PRR) would hand the baseline a better recovery than the LP variants. "
        "NewReno-LP's predictor: V_p = cwnd·(1 − RTT_min/RTT), α = 1, β = 3 segments. "
        "NewReno-Ideal-LP reads the simulator's drop record of the lost segment (an "
        "oracle no real sender has: the upper bound of loss differentiation).\n"
        f"* **Segments**: MSS {MSS} B + {HEADERS} B TCP/IP headers = the paper's 1500 B "
        "packets; timestamps off (without the 12 B option no packet exceeds the 1500 B "
        "MTU, so there is no ns-3-style fragmentation; RTTs are Karn-timed). The "
        "receiver delays ACKs (every 2nd segment, 200 ms timer under ns3), as the paper's.\n"
        f"* **Windows**: initial window {INITIAL_CWND} segments (RFC 2581, the paper's "
        f"reference); send and receive buffers {BUFFER / 1e6:g} MB so that the socket never "
        "limits the window (ns-2's `window_` set large). With ns-3's 128 KiB a 10 Mbit/s, "
        "100 ms flow would stop at ~90 segments, below the 167 that fill pipe and queue, "
        "and would never see a congestion loss.\n"
        f"* **Long-lived flows** (Figs. 2–7) run for {plan.duration_s:g} s of simulated "
        "time; goodput = payload delivered in order / elapsed time; accuracy = correct "
        "verdicts / loss events of the run (the paper's definition; a loss event whose "
        "first unacknowledged segment has no drop record, e.g. a spurious timeout, counts "
        "in neither truth class). Each point is the mean over runs ± the Student-t 95 % "
        "interval; seed k gives every sender the same loss process (common random "
        "numbers), so differences between senders are paired.\n"
        f"* **Short transfers**: one run = {plan.short_flows} transfers of "
        f"{plan.short_bytes / 1000:g} kB, started {plan.short_stagger_s:g} s apart (one "
        "group with a stagger), so that they practically never overlap; completion time "
        "= SYN sent → last byte received in order (vtlab models the handshake; ns-2's "
        "one-way TCP has none, so ours include one more RTT-ish exchange).\n"
        f"* **Friendliness** (Fig. 7): n + m = {plan.friend_flows} bulk flows on an "
        f"error-free 10 Mbit/s, 100 ms link for {plan.friend_duration_s:g} s (fairness "
        "converges slowly); per-class mean goodput; "
        "the fair share is the measured aggregate / 5. Without losses a run is "
        "deterministic, so the runs (replicas) differ in the flows' start times, drawn "
        "uniformly in [0, 1) s from a generator seeded by the replica number. Jain's index "
        "is computed per run over the 5 flows' goodputs (from each flow's start to the "
        "end of the run).\n"
        "goodputs.\n"
    )


def _acc_cell(r: pd.Series | None) -> str:
    if r is None or not math.isfinite(r["mean"]):
        return "–"
    return f"{r['mean'] * 100:.1f} ± {np.nan_to_num(r['ci95']) * 100:.1f} %"


def _accuracy_section(s: Mapping[str, Any], profile: str, alt: str) -> str:
    a = s["accuracy"]
    text = ["## Fig. 2: accuracy of the Vegas predictor\n"]
    text.append(
        "Accuracy of NewReno-LP (mean ± 95 % CI over runs), 10 Mbit/s, RTT 100 ms. "
        "*link share*: fraction of loss events whose lost segment was dropped by the "
        "wireless link; *unknown*: fraction whose first unacknowledged segment has no drop "
        "record (they come with timeouts: the share grows with the timeout count), "
        "which count as wrong for every classifier, the oracle included, so Ideal-LP's "
        "accuracy is 1 − unknown. *known-cause*: pooled accuracy over the events of known "
        "cause. The flow row counts correct verdicts overall, not per class, so the "
        "per-class accuracies are bounds (`accuracy.csv`: `link_accuracy_lo/hi`, "
        "`congestion_accuracy_lo/hi`).\n"
    )
    for model, label in (("independent", "PER"), ("correlated", "Bad-state PER")):
        rows = []
        mine = a[(a["losses"] == model) & (a["c_sn_mbps"] == 10)]
        xs = sorted(mine["x"].unique())
        for x in xs:
            r = _row(mine, variant=LP, profile=profile, x=float(x))
            r2 = _row(mine, variant=LP, profile=alt, x=float(x))
            ri = _row(mine, variant=IDEAL, profile=profile, x=float(x))
            link = (
                f"{_pct(r['link_accuracy_lo'])}–{_pct(r['link_accuracy_hi'])}"
                if r is not None
                else "–"
            )
            rows.append(
                [
                    _per_label(x),
                    _pct(r["link_share"]) if r is not None else "–",
                    _pct(r["unknown_share"]) if r is not None else "–",
                    f"{r['loss_events'] / max(int(r['n']), 1):.0f}" if r is not None else "–",
                    _acc_cell(r),
                    _pct(r["known_cause_accuracy"], 1) if r is not None else "–",
                    link,
                    _acc_cell(r2),
                    _acc_cell(ri),
                ]
            )
        text.append(f"**({'a' if model == 'independent' else 'b'}) {model} losses**\n")
        text.append(
            common.md_table(
                [
                    label,
                    "link share",
                    "unknown",
                    "loss events / run",
                    f"LP accuracy ({profile})",
                    "LP known-cause",
                    "LP link-loss accuracy (bounds)",
                    f"LP accuracy ({alt})",
                    "Ideal-LP accuracy",
                ],
                rows,
            )
        )
    vp = s["vp"]
    if len(vp):
        text.append(
            "**Where V_p sits.** Share of time (trace every 50 ms, one run of NewReno-LP "
            "per PER, 10 Mbit/s) that V_p = cwnd·(1 − RTT_min/SRTT), recomputed from the "
            "traced cwnd and SRTT, lies above β = 3 (a loss then is called congestion), "
            "below α = 1 (called link) or in between (previous verdict).\n"
        )
        text.append(
            common.md_table(
                ["PER", "mean V_p (segments)", "V_p > β", "V_p < α", "α ≤ V_p ≤ β"],
                [
                    [
                        _per_label(r.per),
                        f"{r.vp_mean:.1f}",
                        _pct(r.share_above_beta),
                        _pct(r.share_below_alpha),
                        _pct(r.share_between),
                    ]
                    for r in vp.itertuples()
                ],
            )
        )
    return "\n".join(text)


def _westwood_section(s: Mapping[str, Any], plan: Plan) -> str:
    g = s["westwood"]
    text = [
        "## Which Westwood?\n",
        "The paper's Westwood-NR is \"TCP Westwood with NewReno extensions\" from UCLA's "
        "High Performance Internet Research Group, i.e. the ns-2 module "
        "`tcp-westwood-nr.cc`: the original Westwood's per-ACK bandwidth samples and "
        "Tustin filter. The figures above use `westwood-nr`, which is Westwood+ (one "
        "sample per RTT) over NewReno recovery, as the engine names it. The original is "
        "vtlab's `westwood` and is run here with the same NewReno recovery "
        "(`westwood.png`, `westwood.csv`).\n",
    ]
    rows = []
    for per in plan.pers:
        row = [_per_label(per)]
        for v in (NR, LP, WNR, WO):
            r = _row(g, variant=v, c_sn_mbps=10, per=float(per))
            row.append(common.fmt_ci(r["goodput_mbps"], r["ci95"], 3) if r is not None else "–")
        rows.append(row)
    text.append("**Goodput (Mbit/s), C_SN = 10 Mbit/s, independent losses**\n")
    text.append(common.md_table(["PER", NR, LP, "Westwood-NR (Westwood+)", WO], rows))
    f = s["westwood_friend"]
    rows = []
    for m in sorted(f["newreno_flows"].unique()):
        ro = _row(f, newreno_flows=m, **{"class": WO})
        rn = _row(f, newreno_flows=m, **{"class": NR})
        fair = float(f[f["newreno_flows"] == m]["fair_share_mbps"].iloc[0])
        rows.append(
            [
                f"{5 - m} + {m}",
                common.fmt_ci(ro["goodput_mbps"], ro["ci95"], 3) if ro is not None else "–",
                common.fmt_ci(rn["goodput_mbps"], rn["ci95"], 3) if rn is not None else "–",
                f"{fair:.3f}",
            ]
        )
    text.append("**As Fig. 7b with the original Westwood (Mbit/s per flow)**\n")
    text.append(common.md_table([f"{WO} + NewReno", WO, NR, "fair share"], rows))
    return "\n".join(text)


def _goodput_section(s: Mapping[str, Any], plan: Plan) -> str:
    text = ["## Figs. 3–5: goodput (Mbit/s, mean ± 95 % CI)\n"]
    g = s["goodput_per"]
    for rate in plan.rates_mbps:
        rows = []
        for per in plan.pers:
            row = [_per_label(per)]
            for v in VARIANTS:
                r = _row(g, variant=v, c_sn_mbps=rate, per=float(per))
                row.append(common.fmt_ci(r["goodput_mbps"], r["ci95"], 3) if r is not None else "–")
            p = _row(s["pair_per"][NR], c_sn_mbps=rate, per=float(per))
            pi = _row(s["pair_per"][IDEAL], c_sn_mbps=rate, per=float(per))
            row.append(f"{p['ratio']:.2f}" if p is not None else "–")
            row.append(f"{pi['ratio']:.2f}" if pi is not None else "–")
            rows.append(row)
        fig = "Fig. 4" if rate == 10 else f"Fig. 3{'a' if rate == 2 else 'b'}"
        text.append(f"**{fig}: C_SN = {rate} Mbit/s, independent losses**\n")
        text.append(common.md_table(["PER", *VARIANTS, "LP/NewReno", "LP/Ideal"], rows))
    gb = s["goodput_bad"]
    for i, rate in enumerate(plan.rates_mbps[:2]):
        rows = []
        for bad in plan.bad_pers:
            row = [_per_label(bad)]
            for v in VARIANTS:
                r = _row(gb, variant=v, c_sn_mbps=rate, bad_per=float(bad))
                row.append(common.fmt_ci(r["goodput_mbps"], r["ci95"], 3) if r is not None else "–")
            rows.append(row)
        text.append(f"**Fig. 5{'ab'[i]}: C_SN = {rate} Mbit/s, correlated losses**\n")
        text.append(common.md_table(["Bad-state PER", *VARIANTS], rows))
    return "\n".join(text)


def _rtt_short_section(s: Mapping[str, Any], plan: Plan) -> str:
    text = [f"## Fig. 6: goodput vs RTT at {plan.rtt_loss:.1%} loss (Mbit/s)\n"]
    g = s["goodput_rtt"]
    rows = []
    for rtt in plan.rtts_ms:
        row = [f"{rtt:g}"]
        for rate in plan.rtt_rates_mbps:
            for v in PAIR:
                r = _row(g, variant=v, link_mbps=rate, rtt_ms=float(rtt))
                row.append(common.fmt_ci(r["goodput_mbps"], r["ci95"], 3) if r is not None else "–")
            p = _row(s["pair_rtt"], link_mbps=rate, rtt_ms=float(rtt))
            row.append(f"{p['ratio']:.2f}" if p is not None else "–")
        rows.append(row)
    headers = ["RTT (ms)"]
    for rate in plan.rtt_rates_mbps:
        headers += [f"NewReno {rate} Mbit/s", f"LP {rate} Mbit/s", "LP/NewReno"]
    text.append(common.md_table(headers, rows))
    text.append(
        f"## Short transfers: {plan.short_bytes / 1000:g} kB over {plan.short_rate_mbps} "
        f"Mbit/s, {plan.short_loss:.0%} loss, RTT 100 ms\n"
    )
    sh = s["short"]
    rows = []
    for r in sh.itertuples():
        rows.append(
            [
                r.variant,
                r.iw,
                f"{r.n} × {r.transfers // max(r.n, 1)}",
                common.fmt_ci(r.completion_mean_s, r.ci95, 3),
                f"{r.median_s:.3f}",
                f"{r.p90_s:.3f}",
                f"{r.max_s:.2f}",
                f"{r.with_rto / r.transfers:.1%}",
                r.longer_than_stagger,
            ]
        )
    text.append(
        common.md_table(
            [
                "sender",
                "IW",
                "runs × transfers",
                "mean (s)",
                "median",
                "90th pct",
                "max",
                "with an RTO",
                f"> {plan.short_stagger_s:g} s (overlap)",
            ],
            rows,
        )
    )
    text.append(
        "The mean is the mean over runs of each run's mean completion time. A 10 kB "
        "transfer is 7 segments: with 5 % loss most transfers see no loss, and the mean "
        "is set by the few that wait for a retransmission timeout (the SYN's 3 s timer, or "
        "the 1 s minimum RTO), where LP and NewReno behave identically (cwnd = 1 "
        "segment after a timeout). A loss that triple duplicate ACKs can detect needs "
        "more segments in flight than a 7-segment transfer usually has.\n"
    )
    return "\n".join(text)


def _friendliness_section(s: Mapping[str, Any]) -> str:
    f = s["friendliness"]
    text = ["## Fig. 7: friendliness; Jain's index\n"]
    for fig_id, other in (("7a", LP), ("7b", WNR)):
        rows = []
        mine = f[f["figure"] == fig_id]
        for m in sorted(mine["newreno_flows"].unique()):
            ro = _row(mine, newreno_flows=m, **{"class": other})
            rn = _row(mine, newreno_flows=m, **{"class": NR})
            fair = float(mine[mine["newreno_flows"] == m]["fair_share_mbps"].iloc[0])
            rows.append(
                [
                    f"{5 - m} + {m}",
                    common.fmt_ci(ro["goodput_mbps"], ro["ci95"], 3) if ro is not None else "–",
                    common.fmt_ci(rn["goodput_mbps"], rn["ci95"], 3) if rn is not None else "–",
                    f"{fair:.3f}",
                ]
            )
        text.append(f"**Fig. {fig_id}: {other} + NewReno (Mbit/s per flow)**\n")
        text.append(common.md_table([f"{other} + NewReno", other, NR, "fair share"], rows))
    j = s["jain"]
    text.append("**Jain's index of 5 identical flows (per run, mean ± CI over runs)**\n")
    text.append(
        common.md_table(
            ["senders", "paper", "vtlab", "lowest run"],
            [
                [
                    f"5 × {r.variant}",
                    {LP: "0.9987", NR: "0.9995"}.get(r.variant, "–"),
                    common.fmt_ci(r.jain_mean, r.ci95, 4),
                    f"{r.jain_min:.4f}",
                ]
                for r in j.itertuples()
            ],
        )
    )
    return "\n".join(text)


def _profile_section(s: Mapping[str, Any], profile: str, alt: str, plan: Plan) -> str:
    p = s["profiles"]
    text = [
        f"## The predictor's RTT signal: `{profile}` vs `{alt}` profile\n",
        "Under the ns3 profile the controller receives ns-3's SRTT after every ACK "
        "(ns-3 hands `PktsAcked` the smoothed RTT), so V_p compares a lagging, damped "
        "average with the minimum of such averages; under linux it receives the raw "
        "sample of each ACK. The profile also changes other things (linux: RTO floor "
        "200 ms instead of 1 s, 40 ms delayed-ACK timer, NewReno ssthresh from cwnd, "
        "slow start by segments acked), so the comparison is not of the RTT signal "
        "alone. 10 Mbit/s, RTT 100 ms, independent losses; goodput in Mbit/s.\n",
    ]
    rows = []
    for per in plan.pers:
        row = [_per_label(per)]
        for v in VARIANTS:
            for prof in (profile, alt):
                r = _row(p, variant=v, profile=prof, per=float(per))
                row.append(f"{r['goodput_mbps']:.3f}" if r is not None else "–")
        rows.append(row)
    headers = ["PER"] + [f"{v} ({prof})" for v in VARIANTS for prof in (profile, alt)]
    text.append(common.md_table(headers, rows))
    b = s.get("buffers")
    if b is not None and len(b):
        text.append(
            "**Socket buffers** (C_SN = 2 Mbit/s, RTT 100 ms; goodput in Mbit/s, timeouts "
            f"per run in brackets): ns-3's 128 KiB against the {BUFFER / 1e6:g} MB used "
            "here. At 2 Mbit/s pipe + queue hold 34 packets, so neither buffer limits the "
            "window in steady state; the larger one leaves room for the flight to grow "
            "during a long NewReno recovery.\n"
        )
        rows = []
        for stack in ("ns3", "linux"):
            for size in (NS3_DEFAULT_BUFFER, BUFFER):
                for per in sorted(b["per"].unique()):
                    label = f"{size / 1e6:g} MB" if size == BUFFER else f"{size // 1024} KiB"
                    row = [stack, label, _per_label(per)]
                    for v in (NR, LP, IDEAL):
                        r = _row(b, variant=v, stack=stack, buffer_bytes=size, per=float(per))
                        row.append(
                            f"{r['goodput_mbps']:.3f} ({r['rto_count']:.0f})"
                            if r is not None
                            else "–"
                        )
                    rows.append(row)
        text.append(common.md_table(["profile", "buffers", "PER", NR, LP, IDEAL], rows))
    return "\n".join(text)


def _how_many(share_correct: float) -> str:
    """Words for the share of link losses that are misclassified."""
    if not math.isfinite(share_correct):
        return "the"
    if share_correct < 0.2:
        return "nearly all"
    if share_correct < 0.5:
        return "most"
    return "many"


def _share_words(ratio_min: float, ratio_max: float) -> str:
    """Words for a range of goodput / fair share."""
    if ratio_min >= 1.05:
        return "more than the fair share"
    if ratio_max <= 0.95:
        return "less than the fair share"
    if ratio_min >= 0.95 and ratio_max <= 1.05:
        return "about the fair share"
    return "a mix around the fair share"


def _vp_evidence(s: Mapping[str, Any]) -> str:
    vp = s.get("vp")
    if vp is None or not len(vp):
        return ""
    parts = [
        f"{_pct(r.share_above_beta)} of the time at PER {_per_label(r.per)}"
        for r in vp.sort_values("per").itertuples()
    ]
    return " (V_p recomputed from the traced cwnd and SRTT exceeds β " + ", ".join(parts) + ")"


def _buffer_evidence(s: Mapping[str, Any], prof: str) -> str:
    """One sentence from the buffer sensitivity grid (C_SN = 2 Mbit/s)."""
    b = s.get("buffers")
    if b is None or not len(b):
        return ""
    low = float(b["per"].min())
    big, small = (
        _one(b, variant=LP, stack=prof, buffer_bytes=size, per=low)
        for size in (BUFFER, NS3_DEFAULT_BUFFER)
    )
    nr_big = _one(b, variant=NR, stack=prof, buffer_bytes=BUFFER, per=low)
    if not all(math.isfinite(x) for x in (big, small, nr_big)):
        return ""
    return (
        f" The room the socket leaves matters: at C_SN = 2 Mbit/s and PER {_per_label(low)} "
        f"LP gets {big:.3f} Mbit/s with {BUFFER / 1e6:g} MB buffers (NewReno {nr_big:.3f}) "
        f"and {small:.3f} with ns-3's 128 KiB (`buffers.csv`)."
    )


def _deviation_section(
    s: Mapping[str, Any],
    comparisons: Sequence[Comparison],
    findings: Sequence[Finding],
    profile: str,
    alt: str,
    plan: Plan,
) -> str:
    """Data-driven discussion of where vtlab and the paper disagree."""
    text = ["## Deviations and their likely causes\n"]
    acc = _accuracy_rows(s, "independent", profile)
    acc_alt = _accuracy_rows(s, "independent", alt)
    if len(acc):
        worst = acc.loc[acc["mean"].idxmin()]
        lo_alt = acc_alt.loc[acc_alt["mean"].idxmin()] if len(acc_alt) else None
        hi_acc = acc[acc["x"] >= 0.002]["mean"]
        text.append(
            f"* **Predictor accuracy at low PER.** The paper reports accuracy above 70 % in "
            f"every scenario. Ours falls to {_pct(worst['mean'])} at PER "
            f"{_per_label(worst['x'])} ({profile}); under {alt} its minimum is "
            + (
                f"{_pct(lo_alt['mean'])} (at {_per_label(lo_alt['x'])})"
                if lo_alt is not None
                else "–"
            )
            + f". At PER {_per_label(worst['x'])} {_pct(worst['link_share'])} of the loss "
            "events are link losses, and the link-loss accuracy is bounded by "
            f"{_pct(worst['link_accuracy_lo'])}–{_pct(worst['link_accuracy_hi'])}: "
            + _how_many(float(worst["link_accuracy_hi"]))
            + " link losses are called congestion. The cause is what V_p measures: "
            "cwnd·(1 − RTT_min/RTT) is the number of the flow's own packets in the "
            "bottleneck queue. A single flow with a bandwidth-delay-product buffer keeps a "
            "standing queue for most of each sawtooth cycle, so a random loss that arrives "
            "while more than β = 3 packets are queued is called congestion"
            + _vp_evidence(s)
            + ". Each such miss halves the window as NewReno would, and the window climbs "
            "back into the queue before the next link loss. At higher PER the window "
            "rarely fills the pipe, V_p is mostly at or below β and the predictor is right "
            "more often; its accuracy for PER ≥ 0.2 % is "
            f"{_pct(hi_acc.min(), 1)}–{_pct(hi_acc.max(), 1)}, "
            + (
                "in line with the paper's > 70 %. "
                if hi_acc.min() >= ACCURACY_FLOOR
                else "partly below the paper's > 70 %. "
            )
            + "We cannot tell from the text which RTT the ns-2 implementation gave the "
            f"predictor or how often it sampled it. The {alt} profile's RTT signal gives a "
            "lowest accuracy of "
            + (_pct(lo_alt["mean"]) if lo_alt is not None else "–")
            + f" against {_pct(worst['mean'])} ({profile}); "
            + (
                "neither reaches 70 %."
                if lo_alt is None or lo_alt["mean"] < ACCURACY_FLOOR
                else f"the {alt} profile does reach 70 %."
            )
            + "\n"
        )
    accb = _accuracy_rows(s, "correlated", profile)
    accb = accb[accb["x"] > 0]
    if len(accb) and accb["mean"].min() < 0.9:
        text.append(
            f"* **Correlated losses.** The paper's Vegas predictor \"approaches an ideal "
            f'estimator"; ours reaches {_pct(accb["mean"].min())}–{_pct(accb["mean"].max())} '
            "over Bad-state PER > 0, for the same reason: a Bad-state burst arriving while "
            "the queue holds more than 3 packets is called congestion.\n"
        )
    ideal = s["pair_per"][IDEAL]
    mins = ideal.groupby("c_sn_mbps")["ratio"].min()
    if len(mins) and mins.min() < 0.9:
        worst = ideal.loc[ideal["ratio"].idxmin()]
        text.append(
            f"* **Distance to the ideal bound.** LP reaches as little as {worst['ratio']:.2f} "
            f"of Ideal-LP (C_SN = {worst['c_sn_mbps']} Mbit/s, PER "
            f'{_per_label(worst["per"])}). The paper says LP "approaches" the bound; the gap '
            "sits where the predictor misclassifies link losses as congestion (above), and "
            "every such miss halves the window as NewReno does.\n"
        )
    above = ideal[ideal["ratio"] > 1.02]
    if len(above):
        text.append(
            f"* **LP above the 'upper bound'.** At {len(above)} point(s) LP's mean exceeds "
            "Ideal-LP's by more than 2 % (e.g. C_SN = "
            f"{above.iloc[0]['c_sn_mbps']} Mbit/s, PER {_per_label(above.iloc[0]['per'])}: "
            f"{above.iloc[0]['ratio']:.2f}). The oracle is a bound on classification, not "
            "on goodput: calling a congestion loss a link loss keeps the window up and can "
            "pay off when the queue loss is isolated; at high PER both are dominated by "
            "timeouts, where both reset cwnd to one segment; and where the link-loss "
            "reaction itself backfires (a collapse, below), fewer link verdicts mean more "
            "goodput.\n"
        )
    for c in comparisons:
        if c.large:
            text.append(
                f"* **{c.quantity}**: paper {c.paper:g} {c.unit}, vtlab {c.ours:.4g} "
                f"({common.fmt_rel(c.rel, flag=False)}).\n"
            )
    short = s["short"]
    lp10, nr10 = (_row(short, variant=v, iw=10) for v in (LP, NR))
    lp2, nr2 = (_row(short, variant=v, iw=INITIAL_CWND) for v in (LP, NR))
    if lp2 is not None and nr2 is not None:
        text.append(
            f"* **Short transfers.** With IW {INITIAL_CWND}: LP {lp2['completion_mean_s']:.3f} s, "
            f"NewReno {nr2['completion_mean_s']:.3f} s (paper 0.79 / 0.81 s)"
            + (
                f"; with ns-3's IW 10 both drop to {lp10['completion_mean_s']:.3f} / "
                f"{nr10['completion_mean_s']:.3f} s, since the 7 segments leave in one flight"
                if lp10 is not None and nr10 is not None
                else ""
            )
            + ". The absolute times depend on the initial window, the handshake (vtlab "
            "models the SYN exchange, with a 3 s SYN timer; ns-2's one-way TCP has none) "
            "and the RTO floor (1 s under ns3), which the paper does not give; the "
            "comparison that matters is LP ≈ NewReno.\n"
        )
    f = s["friendliness"]
    wnr = f[(f["figure"] == "7b") & (f["class"] == WNR)]
    wnr = wnr[(wnr["newreno_flows"] > 0) & (wnr["newreno_flows"] < 5)]
    wf = s["westwood_friend"]
    wo = wf[(wf["class"] == WO) & (wf["newreno_flows"] > 0) & (wf["newreno_flows"] < 5)]
    if len(wnr) and len(wo):
        r1 = (wnr["goodput_mbps"] / wnr["fair_share_mbps"]).to_numpy()
        r2 = (wo["goodput_mbps"] / wo["fair_share_mbps"]).to_numpy()
        g = s["westwood"]
        hi = max(plan.pers)
        vals = {v: _one(g, variant=v, c_sn_mbps=10, per=float(hi)) for v in (LP, WNR, WO)}
        w1, w2 = _share_words(r1.min(), r1.max()), _share_words(r2.min(), r2.max())
        text.append(
            "* **Westwood-NR's aggressiveness (Fig. 7b).** The paper's Westwood-NR gets "
            "more than the fair share in practically every mix. With `westwood-nr` "
            f"(Westwood+) the Westwood flows get {r1.min():.2f}–{r1.max():.2f} of the fair "
            f"share ({w1})"
            + (
                ": after a congestion loss on a link whose buffer is one bandwidth-delay "
                "product, ssthresh = BWE·RTT_min is about half the window, NewReno's cut"
                if w1 == "about the fair share"
                else ""
            )
            + ". The paper's ns-2 WestwoodNR is UCLA's original Westwood; with vtlab's "
            f"`westwood` the Westwood flows get {r2.min():.2f}–{r2.max():.2f} of the fair "
            f"share ({w2})"
            + (
                ", the paper's qualitative finding (per-ACK samples overestimate the "
                "bandwidth when ACKs are compressed or delayed, the flaw Westwood+ was "
                "designed to fix; the size of the excess cannot be compared, the figure's "
                "values are not in the text)"
                if w2 == "more than the fair share"
                else ""
            )
            + f". At PER {_per_label(hi)} (10 Mbit/s) LP, Westwood+ and the original "
            f"Westwood reach {vals[LP]:.3f}, {vals[WNR]:.3f} and {vals[WO]:.3f} Mbit/s.\n"
        )
    p = s["profiles"]
    for prof in (profile, alt):
        lp_p = p[(p["variant"] == LP) & (p["profile"] == prof)]
        nr_p = p[(p["variant"] == NR) & (p["profile"] == prof)]
        id_p = p[(p["variant"] == IDEAL) & (p["profile"] == prof)]
        if not (len(lp_p) and len(nr_p)):
            continue
        m = lp_p.merge(nr_p, on="per", suffixes=("_lp", "_nr")).merge(
            id_p[["per", "goodput_mbps"]].rename(columns={"goodput_mbps": "goodput_mbps_id"}),
            on="per",
            how="left",
        )
        bad = m[m["goodput_mbps_lp"] < 0.8 * m["goodput_mbps_nr"]]
        if not len(bad):
            continue
        r = bad.iloc[-1]
        ideal_too = bool((bad["goodput_mbps_id"] < 0.8 * bad["goodput_mbps_nr"]).all())
        text.append(
            f"* **NewReno-LP collapses under the {prof} profile.** At PER "
            f"{', '.join(_per_label(x) for x in bad['per'])} (10 Mbit/s) LP falls *below* "
            f"NewReno (e.g. {r['goodput_mbps_lp']:.3f} vs {r['goodput_mbps_nr']:.3f} Mbit/s "
            f"at {_per_label(r['per'])}, with {r['rto_count_lp']:.0f} timeouts and "
            f"{r['drops_queue_lp']:.0f} queue drops per run against "
            f"{r['rto_count_nr']:.0f} and {r['drops_queue_nr']:.0f})"
            + (
                "; Ideal-LP, with the same reaction and a perfect classifier, collapses as "
                "well, so the classifier is not the cause"
                if ideal_too
                else ""
            )
            + ". The chain, seen in traces: NewReno recovery (RFC 6582) repairs one hole "
            "per RTT while every duplicate ACK inflates cwnd, so a long recovery leaves a "
            "flight of hundreds of segments; a timeout then classified as a link loss sets "
            "ssthresh = that flight (the paper's rule); slow start overshoots pipe + queue "
            "by far, and the burst of queue drops needs further timeouts."
            + (
                " The linux profile keeps the timer's backoff until a valid RTT sample (RFC "
                "6298), and with timestamps off (Karn) every segment of a go-back-N is a "
                "retransmission, so the RTO doubles to seconds; the ns3 profile drops the "
                "backoff on every new ACK, as ns-3 does. Linux itself would not run this "
                "recovery: without SACK it counts duplicate ACKs as SACKed segments and "
                "reduces with PRR, with no window inflation, so `linux` + `recovery = "
                '"newreno"` is a hybrid, not a Linux sender.'
                if prof == "linux"
                else ""
            )
            + _buffer_evidence(s, prof)
            + " The collapse follows from applying ssthresh = flight size on a timeout, "
            "which the paper prescribes without discussing its side effects; it is "
            "reported, not tuned away.\n"
        )
    if len(text) == 1:
        text.append("No large deviation.\n")
    return "\n".join(text)
