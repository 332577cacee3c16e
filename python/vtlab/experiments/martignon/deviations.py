"""Martignon: the report's "Deviations" section — where vtlab and the paper disagree
and the likely cause, each bullet computed from the runs (accuracy by loss class, V_p
traces, the Ideal-LP bound, short transfers, the Westwood variants, the profiles and
the socket buffers). The paper's numbers come from ``paper.toml``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from vtlab.experiments import common
from vtlab.experiments.martignon.analysis import _one, _row
from vtlab.experiments.martignon.findings import NEAR_IDEAL, accuracy_rows, pct, per_label
from vtlab.experiments.martignon.plan import (
    BUFFER,
    BUFFER_RATE,
    IDEAL,
    INITIAL_CWND,
    LP,
    MSS,
    NR,
    NS3_DEFAULT_BUFFER,
    VP_BETA,
    WNR,
    WO,
    Plan,
    other_profile,
    timers,
)
from vtlab.experiments.pipeline import Context

#: Accuracy is compared with the paper's floor above this PER (the window rarely
#: fills the pipe there).
HIGH_PER = 0.002
#: LP "above the upper bound" when its mean exceeds Ideal-LP's by more than this.
ABOVE_BOUND = 0.02
#: LP "collapses" when its goodput falls below this share of NewReno's.
COLLAPSE = 0.8


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
        f"{pct(r.share_above_beta)} of the time at PER {per_label(r.per)}"
        for r in vp.sort_values("per").itertuples()
    ]
    return (
        f" (V_p recomputed from the traced cwnd and SRTT exceeds β = {VP_BETA} "
        + ", ".join(parts)
        + ")"
    )


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
        f" The room the socket leaves matters: at C_SN = {BUFFER_RATE} Mbit/s and PER "
        f"{per_label(low)} "
        f"LP gets {big:.3f} Mbit/s with {BUFFER / 1e6:g} MB buffers (NewReno {nr_big:.3f}) "
        f"and {small:.3f} with ns-3's {NS3_DEFAULT_BUFFER // 1024} KiB (`buffers.csv`)."
    )


def _accuracy(s: Mapping[str, Any], profile: str, alt: str, floor: float) -> list[str]:
    text: list[str] = []
    fl = f"{floor * 100:.0f} %"
    acc = accuracy_rows(s, "independent", profile)
    acc_alt = accuracy_rows(s, "independent", alt)
    if len(acc):
        worst = acc.loc[acc["mean"].idxmin()]
        lo_alt = acc_alt.loc[acc_alt["mean"].idxmin()] if len(acc_alt) else None
        hi_acc = acc[acc["x"] >= HIGH_PER]["mean"]
        text.append(
            f"* **Predictor accuracy at low PER.** The paper reports accuracy above {fl} in "
            f"every scenario. Ours falls to {pct(worst['mean'])} at PER "
            f"{per_label(worst['x'])} ({profile}); under {alt} its minimum is "
            + (
                f"{pct(lo_alt['mean'])} (at {per_label(lo_alt['x'])})"
                if lo_alt is not None
                else "–"
            )
            + f". At PER {per_label(worst['x'])} {pct(worst['link_share'])} of the loss "
            "events are link losses, and the link-loss accuracy is bounded by "
            f"{pct(worst['link_accuracy_lo'])}–{pct(worst['link_accuracy_hi'])}: "
            + _how_many(float(worst["link_accuracy_hi"]))
            + " link losses are called congestion. The cause is what V_p measures: "
            "cwnd·(1 − RTT_min/RTT) is the number of the flow's own packets in the "
            "bottleneck queue. A single flow with a bandwidth-delay-product buffer keeps a "
            "standing queue for most of each sawtooth cycle, so a random loss that arrives "
            f"while more than β = {VP_BETA} packets are queued is called congestion"
            + _vp_evidence(s)
            + ". Each such miss halves the window as NewReno would, and the window climbs "
            "back into the queue before the next link loss. At higher PER the window "
            "rarely fills the pipe, V_p is mostly at or below β and the predictor is right "
            f"more often; its accuracy for PER ≥ {per_label(HIGH_PER)} is "
            f"{pct(hi_acc.min(), 1)}–{pct(hi_acc.max(), 1)}, "
            + (
                f"in line with the paper's > {fl}. "
                if hi_acc.min() >= floor
                else f"partly below the paper's > {fl}. "
            )
            + "We cannot tell from the text which RTT the ns-2 implementation gave the "
            f"predictor or how often it sampled it. The {alt} profile's RTT signal gives a "
            "lowest accuracy of "
            + (pct(lo_alt["mean"]) if lo_alt is not None else "–")
            + f" against {pct(worst['mean'])} ({profile}); "
            + (
                f"neither reaches {fl}."
                if lo_alt is None or lo_alt["mean"] < floor
                else f"the {alt} profile does reach {fl}."
            )
            + "\n"
        )
    return text


def _correlated(s: Mapping[str, Any], profile: str) -> list[str]:
    text: list[str] = []
    accb = accuracy_rows(s, "correlated", profile)
    accb = accb[accb["x"] > 0]
    if len(accb) and accb["mean"].min() < NEAR_IDEAL:
        text.append(
            f"* **Correlated losses.** The paper's Vegas predictor \"approaches an ideal "
            f'estimator"; ours reaches {pct(accb["mean"].min())}–{pct(accb["mean"].max())} '
            "over Bad-state PER > 0, for the same reason: a Bad-state burst arriving while "
            f"the queue holds more than {VP_BETA} packets is called congestion.\n"
        )
    return text


def _ideal_bound(s: Mapping[str, Any]) -> list[str]:
    text: list[str] = []
    ideal = s["pair_per"][IDEAL]
    mins = ideal.groupby("c_sn_mbps")["ratio"].min()
    if len(mins) and mins.min() < NEAR_IDEAL:
        worst = ideal.loc[ideal["ratio"].idxmin()]
        text.append(
            f"* **Distance to the ideal bound.** LP reaches as little as {worst['ratio']:.2f} "
            f"of Ideal-LP (C_SN = {worst['c_sn_mbps']} Mbit/s, PER "
            f'{per_label(worst["per"])}). The paper says LP "approaches" the bound; the gap '
            "sits where the predictor misclassifies link losses as congestion (above), and "
            "every such miss halves the window as NewReno does.\n"
        )
    above = ideal[ideal["ratio"] > 1 + ABOVE_BOUND]
    if len(above):
        text.append(
            f"* **LP above the 'upper bound'.** At {len(above)} point(s) LP's mean exceeds "
            f"Ideal-LP's by more than {ABOVE_BOUND * 100:g} % (e.g. C_SN = "
            f"{above.iloc[0]['c_sn_mbps']} Mbit/s, PER {per_label(above.iloc[0]['per'])}: "
            f"{above.iloc[0]['ratio']:.2f}). The oracle is a bound on classification, not "
            "on goodput: calling a congestion loss a link loss keeps the window up and can "
            "pay off when the queue loss is isolated; at high PER both are dominated by "
            "timeouts, where both reset cwnd to one segment; and where the link-loss "
            "reaction itself backfires (a collapse, below), fewer link verdicts mean more "
            "goodput.\n"
        )
    return text


def _large(comparisons: Any) -> list[str]:
    text: list[str] = []
    for c in comparisons:
        if c.large:
            text.append(
                f"* **{c.quantity}**: paper {c.paper:g} {c.unit}, vtlab {c.ours:.4g} "
                f"({common.fmt_rel(c.rel, flag=False)}).\n"
            )
    return text


def _short(s: Mapping[str, Any], plan: Plan, paper: Any, profile: str) -> list[str]:
    text: list[str] = []
    short = s["short"]
    iw = max(plan.short_iws)
    lp10, nr10 = (_row(short, variant=v, iw=iw) for v in (LP, NR))
    syn, rto = timers(plan, profile)
    segments = math.ceil(plan.short_bytes / MSS)
    lp2, nr2 = (_row(short, variant=v, iw=INITIAL_CWND) for v in (LP, NR))
    if lp2 is not None and nr2 is not None:
        text.append(
            f"* **Short transfers.** With IW {INITIAL_CWND}: LP {lp2['completion_mean_s']:.3f} s, "
            f"NewReno {nr2['completion_mean_s']:.3f} s (paper {paper.value('short_lp'):.2f} / "
            f"{paper.value('short_nr'):.2f} s)"
            + (
                f"; with ns-3's IW {iw} both drop to {lp10['completion_mean_s']:.3f} / "
                f"{nr10['completion_mean_s']:.3f} s, since the {segments} segments leave in "
                "one flight"
                if lp10 is not None and nr10 is not None
                else ""
            )
            + ". The absolute times depend on the initial window, the handshake (vtlab "
            f"models the SYN exchange, with a {syn:g} s SYN timer; ns-2's one-way agents "
            "send a timed 40 B pseudo-SYN with `syn_` on, their default since 2001) "
            f"and the RTO floor ({rto:g} s under {profile}), which the paper does not give; "
            "the comparison that matters is LP ≈ NewReno.\n"
        )
    return text


def _westwood(s: Mapping[str, Any], plan: Plan) -> list[str]:
    text: list[str] = []
    f = s["friendliness"]
    wnr = f[(f["figure"] == "7b") & (f["class"] == WNR)]
    wnr = wnr[(wnr["newreno_flows"] > 0) & (wnr["newreno_flows"] < plan.friend_flows)]
    wf = s["westwood_friend"]
    wo = wf[(wf["class"] == WO) & (wf["newreno_flows"] > 0)]
    wo = wo[wo["newreno_flows"] < plan.friend_flows]
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
            + f". At PER {per_label(hi)} (10 Mbit/s) LP, Westwood+ and the original "
            f"Westwood reach {vals[LP]:.3f}, {vals[WNR]:.3f} and {vals[WO]:.3f} Mbit/s.\n"
        )
    return text


def _collapse(s: Mapping[str, Any], profile: str, alt: str) -> list[str]:
    text: list[str] = []
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
        bad = m[m["goodput_mbps_lp"] < COLLAPSE * m["goodput_mbps_nr"]]
        if not len(bad):
            continue
        r = bad.iloc[-1]
        ideal_too = bool((bad["goodput_mbps_id"] < COLLAPSE * bad["goodput_mbps_nr"]).all())
        text.append(
            f"* **NewReno-LP collapses under the {prof} profile.** At PER "
            f"{', '.join(per_label(x) for x in bad['per'])} (10 Mbit/s) LP falls *below* "
            f"NewReno (e.g. {r['goodput_mbps_lp']:.3f} vs {r['goodput_mbps_nr']:.3f} Mbit/s "
            f"at {per_label(r['per'])}, with {r['rto_count_lp']:.0f} timeouts and "
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
    return text


def deviations(ctx: Context) -> str:
    """Data-driven discussion of where vtlab and the paper disagree."""
    s, plan, profile = ctx.s, ctx.plan, ctx.config.profile
    alt = other_profile(profile)
    text = ["## Deviations and their likely causes\n"]
    text += _accuracy(s, profile, alt, ctx.paper.value("accuracy_floor"))
    text += _correlated(s, profile)
    text += _ideal_bound(s)
    text += _large(ctx.comparisons)
    text += _short(s, plan, ctx.paper, profile)
    text += _westwood(s, plan)
    text += _collapse(s, profile, alt)
    if len(text) == 1:
        text.append("No large deviation.\n")
    return "\n".join(text)
