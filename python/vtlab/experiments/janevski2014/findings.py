"""Janevski & Petrov: the paper's claims, each a small predicate on the summaries.

The claims' words and locations are ``paper.toml``'s ``[[claim]]`` entries; every
one has a check here (``CHECKS``). A claim that involves the figures with errors
(Figs. 4, 6, 8, 10) is checked once per reading of the error model — the preset's
20 % on-off model and the calibrated one — and tagged with it. The thresholds that
decide a verdict are the constants below; the IFQ checks are in :mod:`.ifq_claims`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

import vtlab.experiments.janevski2014.ifq_claims as Q
from vtlab.experiments.common import LARGE_DEVIATION
from vtlab.experiments.janevski2014.analysis import (
    DEAD_KBPS,
    best_point,
    degradation,
    need,
    paper_claims,
    rts_best,
    select,
)
from vtlab.experiments.janevski2014.plan import (
    CALIBRATED,
    CLEAN,
    ERROR_20,
    LOSSY,
    SACK,
    VEGAS,
    setup_numbers,
)
from vtlab.experiments.pipeline import Claim, Context

#: "Significantly reduces": the 8-hop maximum is at most this share of the single hop's.
SIGNIFICANT_HOPS = 0.5
#: "Almost 650 kbit/s": within this relative distance (partly: LARGE_DEVIATION).
ALMOST = 0.10
#: "Causes 20 % degradation": within this many points (partly: twice as many).
DEGRADATION_POINTS = 0.05
#: Share of the curves that must be flat over DupAck (partly: PARTLY_SHARE).
FLAT_HOLDS, PARTLY_SHARE = 0.8, 0.5
#: "The gain comes from avoided retransmissions": the kbit/s the avoided
#: retransmissions would free explain at least this share of DelAck's gain.
EXPLAINED = 0.5

Result = tuple[str, bool | str | None]
TAGS = {ERROR_20: f"errors: {ERROR_20} on-off", CALIBRATED: f"errors: {CALIBRATED}"}


def pct(x: float, digits: int = 0, sign: bool = False) -> str:
    if x is None or not math.isfinite(x):
        return "–"
    return f"{x * 100:{'+' if sign else ''}.{digits}f} %"


def kb(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{x:.1f}"


def _at(r: pd.Series) -> str:
    return f"{r['tcp']}, DelAck {r['delack']}, IFQ {r['ifq']}, DupAck {r['dupack']}"


def _hops(ctx: Context) -> int:
    return max(ctx.plan.hops)


# -- topology and maxima ---------------------------------------------------------------


def hops_reduce(ctx: Context) -> Result:
    one, many = best_point(ctx.s, 1, CLEAN), best_point(ctx.s, _hops(ctx), CLEAN)
    share = many["mean"] / one["mean"]
    t = ctx.s["tcp"]
    avg = {h: select(t, hops=h, error=CLEAN)["mean"].mean() for h in (1, _hops(ctx))}
    return (
        f"highest error-free throughput {kb(one['mean'])} kbit/s over 1 hop ({_at(one)}), "
        f"{kb(many['mean'])} over {_hops(ctx)} hops ({_at(many)}): {pct(share)} of it; "
        f"grid averages {kb(avg[1])} and {kb(avg[_hops(ctx)])} kbit/s",
        bool(share <= SIGNIFICANT_HOPS),
    )


def _within(ours: float, lo: float, hi: float) -> bool | str:
    if lo <= ours <= hi:
        return True
    near = lo * (1 - LARGE_DEVIATION) <= ours <= hi * (1 + LARGE_DEVIATION)
    return "partly (within 25 %)" if near else False


def single_max(ctx: Context) -> Result:
    paper = ctx.paper.value("results/single_max")
    r = best_point(ctx.s, 1, CLEAN)
    off = rts_best(ctx.s, 1, "off")
    ev = (
        f"{kb(r['mean'])} ± {kb(r['ci95'])} kbit/s ({_at(r)}), "
        f"{pct(r['mean'] / paper - 1, 1, True)}"
        f"; with RTS/CTS off {kb(off['mean'])} ({off['tcp']}, DelAck {off['delack']}, IFQ 50)"
    )
    return ev, _within(r["mean"], paper * (1 - ALMOST), paper * (1 + ALMOST / 5))


def multi_max(ctx: Context) -> Result:
    lo, hi = ctx.paper.value("results/multi_max_low"), ctx.paper.value("results/multi_max_high")
    r = best_point(ctx.s, _hops(ctx), CLEAN)
    fig7 = select(ctx.s["points"], hops=_hops(ctx), error=CLEAN, delack=1)["mean"].max()
    off = rts_best(ctx.s, _hops(ctx), "off")
    ev = (
        f"{kb(r['mean'])} ± {kb(r['ci95'])} kbit/s ({_at(r)}); Fig. 7 alone (DelAck 1) "
        f"{kb(fig7)}; with RTS/CTS off {kb(off['mean'])}"
    )
    return ev, _within(r["mean"], lo, hi)


def hop_ratio(ctx: Context) -> Result:
    paper = ctx.paper.value("results/hop_ratio")
    one, many = best_point(ctx.s, 1, CLEAN), best_point(ctx.s, _hops(ctx), CLEAN)
    ratio = one["mean"] / many["mean"]
    ev = f"{kb(one['mean'])} / {kb(many['mean'])} kbit/s = {ratio:.1f}× (paper: {paper:g}×)"
    if abs(ratio / paper - 1) <= LARGE_DEVIATION:
        return ev, True
    return ev, "partly (more than 5×)" if ratio >= paper / 2 else False


def timeout(ctx: Context) -> Result:
    r = best_point(ctx.s, 1, CLEAN)
    paper_ms = ctx.paper.value("text/ten_packets_ms")
    n = ctx.paper.value("text/packets")
    t = n * ctx.plan.segment * 8 / (r["mean"] * 1e3) * 1e3
    rto_min = setup_numbers(ctx.plan)["rto_min_ms"]
    p = need(
        ctx.s["points"], **{k: r[k] for k in ("hops", "delack", "error", "tcp", "ifq", "dupack")}
    )
    return (
        f"{n:g} × {ctx.plan.segment} B at vtlab's {kb(r['mean'])} kbit/s take {t:.0f} ms (paper "
        f"{paper_ms:g} ms at 650); vtlab's minimum RTO {rto_min:g} ms, mean RTT at that point "
        f"{p['rtt_mean_s'] * 1e3:.0f} ms",
        bool(t < rto_min),
    )


# -- the error model ---------------------------------------------------------------------


def degradation_check(reading: str) -> Callable[[Context], Result]:
    def check(ctx: Context) -> Result:
        paper = ctx.paper.value("results/degradation")
        d1, dn = degradation(ctx.s, 1, reading), degradation(ctx.s, _hops(ctx), reading)
        ev = (
            f"mean over TCP, DelAck, IFQ, DupAck: −{pct(d1)} over 1 hop, −{pct(dn)} over "
            f"{_hops(ctx)} hops"
        )
        if reading == CALIBRATED:
            ev += " (this reading is calibrated on single-hop NewReno, IFQ 50, DupAck 3)"
        off = abs(d1 - paper)
        if off <= DEGRADATION_POINTS:
            return ev, True
        return ev, "partly" if off <= 2 * DEGRADATION_POINTS else False

    return check


def cumulative(reading: str) -> Callable[[Context], Result]:
    def check(ctx: Context) -> Result:
        d1, dn = degradation(ctx.s, 1, reading), degradation(ctx.s, _hops(ctx), reading)
        return f"−{pct(d1, 1)} over 1 hop, −{pct(dn, 1)} over {_hops(ctx)} hops", bool(dn > d1)

    return check


def errors_lower(reading: str) -> Callable[[Context], Result]:
    def check(ctx: Context) -> Result:
        t = select(ctx.s["tcp"], hops=_hops(ctx))
        pairs, lower = [], 0
        for d in ctx.plan.delacks:
            for tcp in ctx.plan.tcps:
                c = need(t, delack=d, error=CLEAN, tcp=tcp)["mean"]
                e = need(t, delack=d, error=reading, tcp=tcp)["mean"]
                lower += int(e < c)
                pairs.append(e / c if c > 0 else math.nan)
        ev = (
            f"{lower} of {len(pairs)} (DelAck × TCP) averages lower with errors; "
            f"with/without {pct(min(pairs))}–{pct(max(pairs))}"
        )
        return ev, True if lower == len(pairs) else ("partly" if lower else False)

    return check


# -- DelAck ----------------------------------------------------------------------------------


def _delack_rows(ctx: Context, hops: list[int], reading: str) -> pd.DataFrame:
    """The DelAck pairs of ``hops`` without errors and under ``reading`` that carry
    traffic (a pair where neither DelAck moves data says nothing about DelAck)."""
    d = ctx.s["delack"]
    rows = d[d["hops"].isin(hops) & d["error"].isin([CLEAN, reading])]
    rows = rows[rows[["delack1", "delack2"]].max(axis=1) >= DEAD_KBPS]
    if rows.empty:
        raise KeyError("no DelAck pairs")
    return rows


def _dead_pairs(ctx: Context, hops: list[int], reading: str) -> str:
    d = ctx.s["delack"]
    rows = d[d["hops"].isin(hops) & (d["error"] == reading)]
    dead = rows[rows[["delack1", "delack2"]].max(axis=1) < DEAD_KBPS]
    return f" ({len(dead)} pairs with {reading} carry no traffic)" if len(dead) else ""


def _delack_text(rows: pd.DataFrame) -> str:
    parts = []
    for (h, e), g in rows.groupby(["hops", "error"], sort=False):
        gains = ", ".join(f"{r.tcp} {pct(r.gain, 1, True)}" for r in g.itertuples())
        parts.append(f"{h} hop(s), {e}: {gains}")
    return "; ".join(parts)


def delack_all(hops: str, reading: str) -> Callable[[Context], Result]:
    """DelAck 2 above DelAck 1 for every TCP (``hops``: "all", "single" or "multi")."""

    def check(ctx: Context) -> Result:
        sel = {"all": list(ctx.plan.hops), "single": [1], "multi": [_hops(ctx)]}[hops]
        rows = _delack_rows(ctx, sel, reading)
        up = int((rows["diff"] > 0).sum())
        sig = int((rows["diff"] - rows["ci95"].fillna(0) > 0).sum())
        ev = (
            f"{up} of {len(rows)} gains positive ({sig} significantly)"
            + _dead_pairs(ctx, sel, reading)
            + ": "
            + _delack_text(rows)
        )
        if up == len(rows):
            return ev, "partly (no traffic with errors)" if _dead_pairs(ctx, sel, reading) else True
        average = rows["delack2"].mean() > rows["delack1"].mean()
        return ev, "partly (on average)" if average and up > len(rows) / 2 else False

    return check


def delack_average(reading: str) -> Callable[[Context], Result]:
    """Single hop: the average over TCPs higher with DelAck 2, without and with errors."""

    def check(ctx: Context) -> Result:
        rows = _delack_rows(ctx, [1], reading)
        parts, ups = [], 0
        for e, g in rows.groupby("error", sort=False):
            gain = g["delack2"].mean() / g["delack1"].mean() - 1
            ups += int(gain > 0)
            parts.append(
                f"{e}: {kb(g['delack1'].mean())} → {kb(g['delack2'].mean())} kbit/s "
                f"({pct(gain, 1, True)})"
            )
        n = rows["error"].nunique()
        return "; ".join(parts), True if ups == n else ("partly" if ups else False)

    return check


def reordering(ctx: Context) -> Result:
    """DelAck's gain without loss against the retransmissions it could have avoided."""
    runs = select(ctx.s["runs"], hops=1, error=CLEAN, ifq=[q for q in ctx.plan.ifqs if q >= 25])
    by = runs.groupby("delack")
    g = by["goodput_kbps"].mean()
    retx = by["retransmissions"].mean()
    frames = by["link_mac_frames_sent"].sum() / by["segments_sent"].sum()
    gain = g.get(2, math.nan) - g.get(1, math.nan)
    freed = (retx.get(1, 0) - retx.get(2, 0)) * ctx.plan.segment * 8 / ctx.plan.duration_s / 1e3
    ev = (
        f"single hop, no errors, IFQ ≥ 25: DelAck 2 gains {kb(gain)} kbit/s; retransmissions per "
        f"run {retx.get(1, math.nan):.1f} (DelAck 1) and {retx.get(2, math.nan):.1f} (DelAck 2), "
        f"worth at most {kb(freed)} kbit/s; MAC frames per segment sent "
        f"{frames.get(1, math.nan):.2f} "
        f"→ {frames.get(2, math.nan):.2f} (fewer ACK frames on the shared channel); vtlab's static "
        "routes and FIFO queues never reorder"
    )
    if not (math.isfinite(gain) and gain > 0):
        return ev, False
    share = freed / gain
    return ev, True if share >= 1 else ("partly" if share >= EXPLAINED else False)


# -- DupAck ----------------------------------------------------------------------------------


def flat(
    figures: tuple[int, ...], reading: str, every: bool = False
) -> Callable[[Context], Result]:
    """The figures' curves (TCP × IFQ) almost constant over DupAck > 2 (``every``: over
    every DupAck, partly when only above 2)."""

    def check(ctx: Context) -> Result:
        sp = Q.curves(ctx, figures, reading, ctx.s["spread"])
        live = sp[~sp["dead"]]
        if live.empty:
            raise ValueError("no curve carries traffic")
        share = float(live["flat"].mean())
        share_all = float(live["flat_all"].mean())
        worst = live.loc[live["spread_rel"].idxmax()]
        low = live["low_dupack_rel"].dropna()
        ev = (
            f"{len(live)} curves (TCP × IFQ) with traffic"
            + (f", {int(sp['dead'].sum())} without" if sp["dead"].any() else "")
            + f": {pct(share)} flat over DupAck ≥ 3, {pct(share_all)} over every DupAck "
            f"(flat: extremes within {pct(Q.FLAT_SHARE)} of the mean or within their 95 % CIs); "
            f"largest spread {pct(worst['spread_rel'])} ({worst['tcp']}, IFQ {worst['ifq']}); "
            f"DupAck 1–2 vs ≥ 3: {pct(low.min(), 1, True)} to {pct(low.max(), 1, True)}"
        )
        value = share_all if every else share
        if value >= FLAT_HOLDS:
            return ev, True
        if every and share >= FLAT_HOLDS:
            return ev, "partly (flat above 2 only)"
        return ev, "partly" if value >= PARTLY_SHARE else False

    return check


# -- the claims ------------------------------------------------------------------------------

#: Claim id → (check, whether it depends on the reading of the error model). A check
#: that depends on it is a factory taking the reading.
CHECKS: dict[str, tuple[Any, bool]] = {
    "abstract/hops": (hops_reduce, False),
    "abstract/vegas_best": (Q.vegas_overall, True),
    "abstract/ifq_min": (Q.ifq_min, True),
    "abstract/dupack": (lambda r: flat(tuple(range(3, 11)), r, every=True), True),
    "abstract/delack": (lambda r: delack_all("all", r), True),
    "sec3/degradation": (degradation_check, True),
    "sec3/cumulative": (cumulative, True),
    "sec3a/single_max": (single_max, False),
    "fig3/ifq_grows": (Q.ifq_grows, False),
    "fig3/reno_buffers": (Q.reno_buffers, False),
    "fig3/vegas_ifq2": (Q.vegas_ifq2, False),
    "fig3/ifq20": (Q.ifq20, False),
    "fig4/vegas_best": (lambda r: Q.best_is(4, VEGAS, r), True),
    "fig4/vegas_flat": (Q.vegas_flat, True),
    "fig4/others_ifq5": (Q.others_ifq5, True),
    "fig4/ifq2": (Q.ifq2_bad, True),
    "fig34/dupack_flat": (lambda r: flat((3, 4), r), True),
    "sec3a/timeout": (timeout, False),
    "fig56/ifq_similar": (Q.ifq_similar, True),
    "fig56/dupack_flat": (lambda r: flat((5, 6), r), True),
    "fig56/delack_gain": (delack_average, True),
    "fig56/reordering": (reordering, False),
    "sec3a/vegas_all4": (Q.vegas_all4, True),
    "sec3b/max": (multi_max, False),
    "sec3b/ratio": (hop_ratio, False),
    "sec3b/errors_lower": (errors_lower, True),
    "sec3b/dupack": (lambda r: flat((7, 8, 9, 10), r, every=True), True),
    "fig7/vegas": (lambda r: Q.best_is(7, VEGAS, r, ifq_from=5), False),
    "fig8/sack": (lambda r: Q.best_is(8, SACK, r, ifq_from=5), True),
    "fig910/delack": (lambda r: delack_all("multi", r), True),
    "fig910/vegas": (Q.vegas_910, True),
}


def claims(ctx: Context) -> list[Claim]:
    """Every claim of ``paper.toml``, in its order; a claim that involves the figures
    with errors once per reading."""
    out = []
    for cid, c in paper_claims().items():
        check, by_reading = CHECKS[cid]
        if not by_reading:
            fn = check(ERROR_20) if check.__name__ == "<lambda>" else check
            out.append(Claim(c["where"], c["claim"], fn))
            continue
        for reading in LOSSY:
            out.append(Claim(c["where"], f"{c['claim']} [{TAGS[reading]}]", check(reading)))
    return out


__all__ = ["CHECKS", "TAGS", "claims"]
