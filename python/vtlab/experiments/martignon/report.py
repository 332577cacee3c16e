"""Martignon: the report, as a list of sections. Every number a section prints is
computed from the runs, the plan and its scenarios, or read from ``paper.toml``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from vtlab.experiments import common, pipeline
from vtlab.experiments.martignon.analysis import _row, verdict_words
from vtlab.experiments.martignon.deviations import deviations
from vtlab.experiments.martignon.findings import pct, per_label
from vtlab.experiments.martignon.plan import (
    BUFFER,
    BUFFER_RATE,
    GILBERT,
    HEADERS,
    IDEAL,
    INITIAL_CWND,
    LP,
    MSS,
    NR,
    NS2_WINDOW_PACKETS,
    NS3_DEFAULT_BUFFER,
    PAIR,
    STACKS,
    VARIANTS,
    VP_ALPHA,
    VP_BETA,
    WNR,
    WO,
    Plan,
    _friend_base,
    _long,
    other_profile,
    timers,
)
from vtlab.experiments.pipeline import Context, Section
from vtlab.scenario import Scenario

TITLE = "Reproduction: Martignon — TCP NewReno-LP over wired + wireless paths"


def _setup_numbers(plan: Plan) -> dict[str, Any]:
    """The setup's numbers, from the plan and its scenarios."""
    spec = Scenario(_long(plan)).expanded()
    tcp = spec["flows"][0]["tcp"]
    wired, wireless = (
        next(x for x in spec["links"] if x["name"] == n) for n in ("wired", "wireless")
    )
    rtt_s = 2 * (wired["delay_ns"] + wireless["delay_ns"]) / 1e9
    friend = Scenario(_friend_base(plan)).expanded()["links"]
    friend_rtt = 2 * sum(x["delay_ns"] for x in friend) / 1e6
    packet = MSS + HEADERS
    pipe = wireless["rate_bps"] * rtt_s / (8 * packet)
    good, bad = GILBERT["mean_good"], GILBERT["mean_bad"]
    return {
        "c_nd": f"{wireless['rate_bps'] / 1e6:g} Mbit/s",
        "t_sn": f"{wired['delay_ns'] / 1e6:g} ms",
        "t_nd": f"{wireless['delay_ns'] / 1e6:g} ms",
        "rtt": f"{rtt_s * 1e3:.0f} ms",
        "friend_rtt": f"{friend_rtt:.0f} ms",
        "packet": packet,
        "pers": f"{per_label(min(plan.pers))}–{per_label(max(plan.pers))}",
        "bad_pers": f"{per_label(min(plan.bad_pers))}–{per_label(max(plan.bad_pers))}",
        "good": good,
        "bad": bad,
        "bad_share": pct(bad / (good + bad), 2),
        "ack_every": tcp["delayed_ack_count"],
        "ack_timer": f"{tcp['delayed_ack_timeout_ns'] / 1e6:g} ms",
        "small_window": NS3_DEFAULT_BUFFER // packet,
        "fill": round(pipe + math.ceil(pipe)),
    }


def _fill(plan: Plan, rate_mbps: float) -> int:
    """Packets that fill pipe and bandwidth-delay queue at ``rate_mbps`` (Fig. 1 path)."""
    n = _setup_numbers(plan)
    pipe = rate_mbps * 1e6 * float(n["rtt"].split()[0]) / 1e3 / (8 * n["packet"])
    return round(pipe + math.ceil(pipe))


def _setup_section(plan: Plan, paper_transfers: int) -> str:
    n = _setup_numbers(plan)
    return (
        "## Setup\n\n"
        "* **Topology** (paper Fig. 1), preset `wired-wireless`: S —(C_SN, T_SN)— N —"
        "(C_ND, T_ND, losses toward D)— D; drop-tail queues of the bandwidth-delay product "
        "(⌈min(C)·RTT / packet⌉ packets) at every link. Figs. 2–5: "
        f"C_ND = {n['c_nd']}, T_SN = {n['t_sn']}, T_ND = {n['t_nd']} (RTT {n['rtt']}). "
        "Fig. 5 follows the captions "
        "(C_SN varies, C_ND fixed), not the text's \"wireless link "
        'capacities equal to ..." (C_ND varying). Fig. 6, the short transfers and Fig. 7 are '
        '"a single link": both hops get the same capacity (the queue is at S) and the '
        "RTT is set by T_SN.\n"
        "* **Losses** on N → D only: independent (Bernoulli, the paper's Poisson process "
        f"of packet errors) with PER {n['pers']}, or correlated (Gilbert-Elliott, Good "
        f"state mean {n['good']:g} s without loss, Bad state mean {n['bad']:g} s with PER "
        f"{n['bad_pers']}, exponential sojourns; mean loss = Bad PER × {n['bad_share']}).\n"
        f"* **Senders**: {', '.join(f'{k} = `{v}`' for k, v in VARIANTS.items())}. Every "
        'one uses classic NewReno recovery (RFC 6582; `tcp.recovery = "newreno"`), the '
        "NewReno baseline included, as in the study's ns-2 NewReno: the profile default "
        "(SACK + PRR) would hand the baseline a better recovery than the LP variants. "
        "NewReno-LP's predictor: V_p = cwnd·(1 − RTT_min/RTT), "
        f"α = {VP_ALPHA}, β = {VP_BETA} segments. "
        "NewReno-Ideal-LP reads the simulator's drop record of the lost segment (an "
        "oracle no real sender has: the upper bound of loss differentiation).\n"
        f"* **Segments**: MSS {MSS} B + {HEADERS} B TCP/IP headers = the paper's "
        f"{n['packet']} B packets; timestamps off (without the option no packet exceeds "
        "the MTU, so there is no ns-3-style fragmentation; RTTs are Karn-timed). The "
        f"receiver delays ACKs (every {n['ack_every']} segments, {n['ack_timer']} timer "
        "under ns3), as the paper's.\n"
        f"* **Windows**: initial window {INITIAL_CWND} segments (RFC 2581, the paper's "
        f"reference); send and receive buffers {BUFFER / 1e6:g} MB so that the socket never "
        "limits the window (ns-2's `window_` set large). With ns-3's "
        f"{NS3_DEFAULT_BUFFER // 1024} KiB a {n['c_nd']}, {n['rtt']} flow would stop at "
        f"about {n['small_window']} segments, below the {n['fill']} that fill pipe and "
        "queue, and would never see a congestion loss.\n"
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
        "one-way agents send a timed 40 B pseudo-SYN first, `syn_` on by default since "
        "2001, so both spend one round trip before data). The paper "
        f"simulated {paper_transfers} transfers in all.\n"
        f"* **Friendliness** (Fig. 7): n + m = {plan.friend_flows} bulk flows on an "
        f"error-free {plan.friend_rate_mbps} Mbit/s, {n['friend_rtt']} link for "
        f"{plan.friend_duration_s:g} s (fairness converges slowly); per-class mean goodput; "
        f"the fair share is the measured aggregate / {plan.friend_flows}. Without losses a run is "
        "deterministic, so the runs (replicas) differ in the flows' start times, drawn "
        "uniformly in [0, 1) s from a generator seeded by the replica number. Jain's index "
        f"is computed per run over the {plan.friend_flows} flows' goodputs (from each "
        "flow's start to the end of the run).\n"
    )


def _acc_cell(r: pd.Series | None) -> str:
    if r is None or not math.isfinite(r["mean"]):
        return "–"
    return f"{r['mean'] * 100:.1f} ± {np.nan_to_num(r['ci95']) * 100:.1f} %"


def _accuracy_row(mine: pd.DataFrame, x: float, profile: str, alt: str) -> list[str]:
    r = _row(mine, variant=LP, profile=profile, x=float(x))
    r2 = _row(mine, variant=LP, profile=alt, x=float(x))
    ri = _row(mine, variant=IDEAL, profile=profile, x=float(x))
    if r is None:
        return [per_label(x), "–", "–", "–", "–", "–", "–", _acc_cell(r2), _acc_cell(ri)]
    return [
        per_label(x),
        pct(r["link_share"]),
        pct(r["unknown_share"]),
        f"{r['loss_events'] / max(int(r['n']), 1):.0f}",
        _acc_cell(r),
        pct(r["known_cause_accuracy"], 1),
        f"{pct(r['link_accuracy_lo'])}–{pct(r['link_accuracy_hi'])}",
        _acc_cell(r2),
        _acc_cell(ri),
    ]


def _accuracy_table(a: pd.DataFrame, model: str, label: str, profile: str, alt: str) -> str:
    mine = a[(a["losses"] == model) & (a["c_sn_mbps"] == 10)]
    rows = [_accuracy_row(mine, x, profile, alt) for x in sorted(mine["x"].unique())]
    headers = [label, "link share", "unknown", "loss events / run", f"LP accuracy ({profile})"]
    headers += ["LP known-cause", "LP link-loss accuracy (bounds)", f"LP accuracy ({alt})"]
    return f"**({'a' if model == 'independent' else 'b'}) {model} losses**\n\n" + common.md_table(
        [*headers, "Ideal-LP accuracy"], rows
    )


def _vp_table(vp: pd.DataFrame, plan: Plan) -> str:
    n = _setup_numbers(plan)
    return (
        f"**Where V_p sits.** Share of time (trace every {plan.trace_interval}, one run of "
        f"NewReno-LP per PER, {n['c_nd']}) that V_p = cwnd·(1 − RTT_min/SRTT), recomputed "
        f"from the traced cwnd and SRTT, lies above β = {VP_BETA} (a loss then is called "
        f"congestion), below α = {VP_ALPHA} (called link) or in between (previous "
        "verdict).\n\n"
        + common.md_table(
            ["PER", "mean V_p (segments)", "V_p > β", "V_p < α", "α ≤ V_p ≤ β"],
            [
                [
                    per_label(r.per),
                    f"{r.vp_mean:.1f}",
                    pct(r.share_above_beta),
                    pct(r.share_below_alpha),
                    pct(r.share_between),
                ]
                for r in vp.itertuples()
            ],
        )
    )


def _accuracy_section(s: Mapping[str, Any], profile: str, alt: str, plan: Plan) -> str:
    n = _setup_numbers(plan)
    text = [
        "## Fig. 2: accuracy of the Vegas predictor\n",
        f"Accuracy of NewReno-LP (mean ± 95 % CI over runs), {n['c_nd']}, RTT {n['rtt']}. "
        "*link share*: fraction of loss events whose lost segment was dropped by the "
        "wireless link; *unknown*: fraction whose first unacknowledged segment has no drop "
        "record (they come with timeouts: the share grows with the timeout count), "
        "which count as wrong for every classifier, the oracle included, so Ideal-LP's "
        "accuracy is 1 − unknown. *known-cause*: pooled accuracy over the events of known "
        "cause. The flow row counts correct verdicts overall, not per class, so the "
        "per-class accuracies are bounds (`accuracy.csv`: `link_accuracy_lo/hi`, "
        "`congestion_accuracy_lo/hi`).\n",
    ]
    for model, label in (("independent", "PER"), ("correlated", "Bad-state PER")):
        text.append(_accuracy_table(s["accuracy"], model, label, profile, alt))
    if len(s["vp"]):
        text.append(_vp_table(s["vp"], plan))
    if len(s["window"]):
        text.append(_window_table(s["window"], profile))
    return "\n".join(text)


def _window_table(w: pd.DataFrame, profile: str) -> str:
    """NewReno-LP with ns-2's default window_ against the study's window."""
    rows = [
        [
            f"{r.window_bytes / 1e6:g} MB"
            if r.window_bytes == BUFFER
            else f"{r.window_bytes // MSS} packets ({r.window_bytes} B)",
            per_label(r.per),
            f"{pct(r.accuracy, 1)} ± {pct(r.accuracy_ci95, 1)}",
            f"{r.loss_events:.0f}",
            f"{r.goodput_mbps:.3f} ± {r.ci95:.3f}",
        ]
        for r in w.sort_values(["window_bytes", "per"]).itertuples()
    ]
    return (
        f"**ns-2's default `window_`** ({NS2_WINDOW_PACKETS} packets; the paper does not "
        f"give its window), NewReno-LP under {profile}, 10 Mbit/s: a window below pipe + "
        "queue never builds a queue, so V_p stays below α and every loss is called a link "
        "loss, at the price of the goodput the window allows.\n\n"
        + common.md_table(["window", "PER", "LP accuracy", "loss events", "goodput (Mbit/s)"], rows)
    )


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
        row = [per_label(per)]
        for v in (NR, LP, WNR, WO):
            r = _row(g, variant=v, c_sn_mbps=10, per=float(per))
            row.append(common.fmt_ci(r["goodput_mbps"], r["ci95"], 3) if r is not None else "–")
        rows.append(row)
    text.append(f"**Goodput (Mbit/s), C_SN = {max(plan.rates_mbps)} Mbit/s, independent losses**\n")
    text.append(common.md_table(["PER", NR, LP, "Westwood-NR (Westwood+)", WO], rows))
    rows = _mix_rows(s["westwood_friend"], WO, plan.friend_flows)
    text.append("**As Fig. 7b with the original Westwood (Mbit/s per flow)**\n")
    text.append(common.md_table([f"{WO} + NewReno", WO, NR, "fair share"], rows))
    return "\n".join(text)


def _goodput_section(s: Mapping[str, Any], plan: Plan) -> str:
    text = ["## Figs. 3–5: goodput (Mbit/s, mean ± 95 % CI)\n"]
    g = s["goodput_per"]
    for rate in plan.rates_mbps:
        rows = []
        for per in plan.pers:
            row = [per_label(per)]
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
            row = [per_label(bad)]
            for v in VARIANTS:
                r = _row(gb, variant=v, c_sn_mbps=rate, bad_per=float(bad))
                row.append(common.fmt_ci(r["goodput_mbps"], r["ci95"], 3) if r is not None else "–")
            rows.append(row)
        text.append(f"**Fig. 5{'ab'[i]}: C_SN = {rate} Mbit/s, correlated losses**\n")
        text.append(common.md_table(["Bad-state PER", *VARIANTS], rows))
    return "\n".join(text)


def _rtt_short_section(s: Mapping[str, Any], plan: Plan, profile: str) -> str:
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
        f"Mbit/s, {plan.short_loss:.0%} loss, RTT {_setup_numbers(plan)['friend_rtt']}\n"
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
        "The mean is the mean over runs of each run's mean completion time. A "
        f"{plan.short_bytes / 1000:g} kB transfer is {math.ceil(plan.short_bytes / MSS)} "
        f"segments: with {plan.short_loss:.0%} loss most transfers see no loss, and the mean "
        "is set by the few that wait for a retransmission timeout (the SYN's "
        f"{timers(plan, profile)[0]:g} s timer, or the {timers(plan, profile)[1]:g} s minimum "
        "RTO), where LP "
        "and NewReno behave identically (cwnd = 1 "
        "segment after a timeout). A loss that triple duplicate ACKs can detect needs "
        "more segments in flight than a 7-segment transfer usually has.\n"
    )
    return "\n".join(text)


def _mix_rows(frame: pd.DataFrame, cls: str, total: int) -> list[list[str]]:
    """Per mix (cls flows + NewReno flows): both classes' goodput and the fair share."""
    rows = []
    for m in sorted(frame["newreno_flows"].unique()):
        ro = _row(frame, newreno_flows=m, **{"class": cls})
        rn = _row(frame, newreno_flows=m, **{"class": NR})
        fair = float(frame[frame["newreno_flows"] == m]["fair_share_mbps"].iloc[0])
        rows.append(
            [
                f"{total - m} + {m}",
                common.fmt_ci(ro["goodput_mbps"], ro["ci95"], 3) if ro is not None else "–",
                common.fmt_ci(rn["goodput_mbps"], rn["ci95"], 3) if rn is not None else "–",
                f"{fair:.3f}",
            ]
        )
    return rows


def _friendliness_section(ctx: Context) -> str:
    s, total = ctx.s, ctx.plan.friend_flows
    f = s["friendliness"]
    text = ["## Fig. 7: friendliness; Jain's index\n"]
    for fig_id, other in (("7a", LP), ("7b", WNR)):
        rows = _mix_rows(f[f["figure"] == fig_id], other, total)
        text.append(f"**Fig. {fig_id}: {other} + NewReno (Mbit/s per flow)**\n")
        text.append(common.md_table([f"{other} + NewReno", other, NR, "fair share"], rows))
    paper = {
        ctx.paper[k].extra["variant"]: f"{ctx.paper.value(k):.4f}" for k in ("jain_lp", "jain_nr")
    }
    text.append(f"**Jain's index of {total} identical flows (per run, mean ± CI over runs)**\n")
    text.append(
        common.md_table(
            ["senders", "paper", "vtlab", "lowest run"],
            [
                [
                    f"{total} × {r.variant}",
                    paper.get(r.variant, "–"),
                    common.fmt_ci(r.jain_mean, r.ci95, 4),
                    f"{r.jain_min:.4f}",
                ]
                for r in s["jain"].itertuples()
            ],
        )
    )
    return "\n".join(text)


#: What each profile hands the predictor, and its other differences that matter here.
SIGNAL = {
    "ns3": "ns-3's SRTT after every ACK (ns-3 hands `PktsAcked` the smoothed RTT), so "
    "V_p compares a lagging, damped average with the minimum of such averages, the "
    "first of which is the SYN's",
    "linux": "the raw sample of each ACK; NewReno's ssthresh comes from cwnd and slow "
    "start counts segments acked",
    "ns2": "the raw sample of each timed data packet, and V_p multiplies min(cwnd, "
    "window_), the window ns-2's sender uses; ssthresh is half that window, the RTO "
    "ns-2's integer-tick timer (docs/stack-profiles.md, 'The ns2 profile')",
}


def _timers(plan: Plan, profile: str, alt: str) -> str:
    """The two profiles' timers on the study's path, from the presets."""
    t = {
        prof: Scenario({**_long(plan), "tcp": {**_long(plan)["tcp"], "profile": prof}}).expanded()[
            "flows"
        ][0]["tcp"]
        for prof in (profile, alt)
    }
    return (
        f"{profile}: RTO floor {t[profile]['rto_min_ns'] / 1e6:g} ms instead of "
        f"{t[alt]['rto_min_ns'] / 1e6:g} ms, {t[profile]['delayed_ack_timeout_ns'] / 1e6:g} "
        f"ms delayed-ACK timer instead of {t[alt]['delayed_ack_timeout_ns'] / 1e6:g} ms"
    )


def _profile_section(s: Mapping[str, Any], profile: str, alt: str, plan: Plan) -> str:
    p = s["profiles"]
    n = _setup_numbers(plan)
    text = [
        f"## The predictor's RTT signal: `{profile}` vs `{alt}` profile\n",
        f"Under the {profile} profile the controller receives {SIGNAL[profile]}; under "
        f"{alt} it receives {SIGNAL[alt]}. The profiles also differ in their timers ("
        + _timers(plan, profile, alt)
        + "), so the comparison "
        f"is not of the RTT signal alone. {n['c_nd']}, RTT {n['rtt']}, independent losses; "
        "goodput in Mbit/s.\n",
    ]
    rows = []
    for per in plan.pers:
        row = [per_label(per)]
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
            f"**Socket buffers** (C_SN = {BUFFER_RATE} Mbit/s, RTT {n['rtt']}; goodput in "
            "Mbit/s, timeouts per run in brackets): ns-3's "
            f"{NS3_DEFAULT_BUFFER // 1024} KiB against the {BUFFER / 1e6:g} MB used here. At "
            f"{BUFFER_RATE} Mbit/s pipe + queue hold {_fill(plan, BUFFER_RATE)} packets, so "
            "neither buffer limits the "
            "window in steady state; the larger one leaves room for the flight to grow "
            "during a long NewReno recovery.\n"
        )
        rows = []
        for stack in STACKS:
            for size in (NS3_DEFAULT_BUFFER, BUFFER):
                for per in sorted(b["per"].unique()):
                    label = f"{size / 1e6:g} MB" if size == BUFFER else f"{size // 1024} KiB"
                    row = [stack, label, per_label(per)]
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


# -- the sections ----------------------------------------------------------------------


def header_rows(ctx: Context) -> list[list[str]]:
    cfg, runs = ctx.config, ctx.runs
    alt = other_profile(cfg.profile)
    return [
        [
            "TCP profile",
            f'`{cfg.profile}` with `recovery = "newreno"` and `timestamps = false` '
            f"for every sender; the predictor's RTT signal is also run under `{alt}`",
        ],
        ["runs per point", f"{runs} (seeds 1–{runs}; common random numbers)"],
    ]


def quick_note(ctx: Context) -> str:
    plan, runs = ctx.plan, ctx.runs
    return (
        f"> **Quick version** (CI): {runs} runs of {plan.duration_s:g} s, PER "
        f"{', '.join(per_label(p) for p in plan.pers)}, Bad-state PER "
        f"{', '.join(per_label(p) for p in plan.bad_pers)}, RTT "
        f"{', '.join(f'{r:g}' for r in plan.rtts_ms)} ms, {plan.short_flows} short "
        "transfers per run. The numbers are noisy; run without `--quick` for the "
        "reproduction.\n"
    )


def quoted(ctx: Context) -> str:
    return f"The text quotes {len(ctx.comparisons)} numbers; the figures' data are not in it. "


def files(ctx: Context) -> list[list[str]]:
    plan, profile = ctx.plan, ctx.config.profile
    rates = ", ".join(f"{r}" for r in plan.rates_mbps)
    return [
        [
            "`fig2.png/.svg`",
            "Fig. 2a/b: accuracy vs PER (independent) and Bad-state PER (correlated); "
            "NewReno-LP under both profiles, Ideal-LP",
        ],
        [
            "`fig3.png/.svg`, `fig4.png/.svg`",
            f"Figs. 3a/b, 4: goodput vs PER, C_SN = {rates} Mbit/s",
        ],
        ["`fig5.png/.svg`", "Fig. 5a/b: goodput vs Bad-state PER"],
        ["`fig6.png/.svg`", f"Fig. 6a/b: goodput vs RTT at {per_label(plan.rtt_loss)} loss"],
        [
            "`fig7.png/.svg`",
            f"Fig. 7a/b: per-class mean goodput, n + m = {plan.friend_flows} flows",
        ],
        ["`short.png/.svg`", "CDF of the short transfers' completion times"],
        ["`westwood.png/.svg`", "Westwood+ vs the original Westwood (goodput, Fig. 7b)"],
        ["`accuracy.*`", "accuracy mean ± CI per point, pooled counts, per-class bounds"],
        ["`goodput_per.*`, `goodput_bad.*`, `goodput_rtt.*`", "goodput mean ± CI"],
        ["`short.*`, `friendliness.*`, `jain.*`", "short transfers, Fig. 7, Jain"],
        ["`profiles.*`", f"goodput, RTOs and queue drops, {profile} vs {other_profile(profile)}"],
        ["`westwood.*`, `vp.*`, `buffers.*`, `window.*`", "the sensitivity runs"],
        ["`findings.*`, `comparison.*`", "the tables above"],
    ]


def sections() -> list[Section]:
    def alt(ctx: Context) -> str:
        return other_profile(ctx.config.profile)

    return [
        pipeline.header_section(TITLE, header_rows, quick_note),
        Section("setup", lambda c: _setup_section(c.plan, int(c.paper.value("short_transfers")))),
        pipeline.comparison_section(4, lead=quoted),
        pipeline.findings_section(
            "The study's claims, checked on our data",
            "{held} of {total} claims hold in full on this campaign; the verdict column "
            "marks the others.",
            verdict=verdict_words,
        ),
        Section("accuracy", lambda c: _accuracy_section(c.s, c.config.profile, alt(c), c.plan)),
        Section("goodput", lambda c: _goodput_section(c.s, c.plan)),
        Section("rtt and short", lambda c: _rtt_short_section(c.s, c.plan, c.config.profile)),
        Section("friendliness", _friendliness_section),
        Section("westwood", lambda c: _westwood_section(c.s, c.plan)),
        Section("profiles", lambda c: _profile_section(c.s, c.config.profile, alt(c), c.plan)),
        Section("deviations", deviations),
        pipeline.files_section(files),
    ]
