"""Janevski & Petrov: the claims about the interface queue and the ranking of the TCP
versions, as predicates on the summaries (the other claims are in :mod:`.findings`).

A figure's curve is one TCP version's throughput against IFQ, averaged over DupAck
(``by_ifq``); a version's figure average is over IFQ and DupAck (``by_tcp``), or
over the IFQ sizes a claim names (computed from the runs, CI over seeds).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from vtlab.experiments.janevski2014.analysis import (
    DEAD_KBPS,
    FLAT_SHARE,
    figure_keys,
    mean_ci,
    select,
)
from vtlab.experiments.janevski2014.plan import CLEAN, RENO, VEGAS
from vtlab.experiments.pipeline import Context

#: "High"/"significant" degradation: at least this share below the curve's best.
HIGH_DEGRADATION = 0.10
#: "Reaches its maximum": within this share of the curve's best.
NEAR_MAX = 0.02
#: "Similar and comparable performances": within this share of Vegas's average.
COMPARABLE = 0.15
#: "The influence of IFQ is similar": correlation of the normalised curves.
SIMILAR = 0.7
#: A claim about "most" curves: more than this share.
MAJORITY = 0.5

Result = tuple[str, bool | str | None]


def pct(x: float, digits: int = 0, sign: bool = False) -> str:
    if x is None or not math.isfinite(x):
        return "–"
    return f"{x * 100:{'+' if sign else ''}.{digits}f} %"


def curves(ctx: Context, figures: Sequence[int], reading: str, frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``frame`` that belong to the paper's ``figures`` under ``reading`` (an
    error-free figure once, whatever the reading)."""
    parts = [select(frame, **figure_keys(n, reading)).assign(figure=n) for n in figures]
    return pd.concat(parts, ignore_index=True)


def curve(ctx: Context, number: int, reading: str, tcp: str) -> pd.DataFrame:
    c = select(ctx.s["ifq"], **figure_keys(number, reading), tcp=tcp).sort_values("ifq")
    if c.empty:
        raise KeyError(f"no curve Fig. {number} {tcp}")
    return c.set_index("ifq")


def tcp_means(
    ctx: Context, number: int, reading: str, ifqs: Sequence[int] | None = None
) -> pd.DataFrame:
    """Each version's average in a figure (over ``ifqs`` if given, and DupAck)."""
    runs = select(ctx.s["runs"], **figure_keys(number, reading))
    if ifqs is not None:
        runs = select(runs, ifq=list(ifqs))
    m = mean_ci(runs, ["tcp"])
    if m.empty:
        raise KeyError(f"no runs for Fig. {number}")
    return m


def ranking(m: pd.DataFrame) -> tuple[str, list[str]]:
    """The version with the highest mean and those whose 95 % interval reaches the
    top one's (tied)."""
    top = m.loc[m["mean"].idxmax()]
    ci = m["ci95"].fillna(0)
    floor = top["mean"] - (0 if math.isnan(top["ci95"]) else top["ci95"])
    tied = [t for t, hi in zip(m["tcp"], m["mean"] + ci, strict=True) if hi >= floor]
    return str(top["tcp"]), tied


def _means_text(m: pd.DataFrame) -> str:
    return ", ".join(
        f"{r.tcp} {r.mean:.1f}" for r in m.sort_values("mean", ascending=False).itertuples()
    )


def _ifq_text(ifqs: Sequence[int] | None) -> str:
    return "all IFQ" if ifqs is None else f"IFQ ≥ {min(ifqs)}"


def best_is(
    number: int, label: str, reading: str, ifq_from: int | None = None
) -> Callable[[Context], Result]:
    """``label`` has the highest average in the figure (over IFQ ≥ ``ifq_from``)."""

    def check(ctx: Context) -> Result:
        ifqs = None if ifq_from is None else [q for q in ctx.plan.ifqs if q >= ifq_from]
        m = tcp_means(ctx, number, reading, ifqs)
        top, tied = ranking(m)
        ev = f"Fig. {number}, {_ifq_text(ifqs)}, kbit/s: {_means_text(m)}"
        if m["mean"].max() < DEAD_KBPS:
            return ev + ": no version carries traffic", None
        if top == label:
            return ev, True
        return ev, "partly (tied)" if label in tied else False

    return check


def _figures(ctx: Context) -> list[int]:
    return [3, 4, 5, 6] + ([7, 8, 9, 10] if max(ctx.plan.hops) > 1 else [])


def vegas_overall(reading: str) -> Callable[[Context], Result]:
    """Vegas's average share of each figure's best version, over every figure."""

    def check(ctx: Context) -> Result:
        t = curves(ctx, _figures(ctx), reading, ctx.s["tcp"])
        best = t.groupby("figure")["mean"].transform("max")
        live = t[best >= DEAD_KBPS].assign(share=lambda f: f["mean"] / best[best >= DEAD_KBPS])
        score = live.groupby("tcp")["share"].mean().sort_values(ascending=False)
        tops = live.loc[live.groupby("figure")["mean"].idxmax(), "tcp"]
        ev = (
            f"mean share of each figure's best version over {live['figure'].nunique()} figures "
            f"with traffic: "
            + ", ".join(f"{k} {pct(v, 1)}" for k, v in score.items())
            + "; best in: "
            + ", ".join(f"{k} {v}" for k, v in tops.value_counts().items())
        )
        if score.index[0] == VEGAS:
            return ev, True
        return ev, "partly (close)" if score[VEGAS] >= score.iloc[0] - 0.01 else False

    return check


def _shares(c: pd.DataFrame) -> tuple[float, float]:
    """A curve's IFQ-2 and IFQ-5 throughput as shares of its best."""
    best = c["mean"].max()
    return c["mean"].get(2, math.nan) / best, c["mean"].get(5, math.nan) / best


def ifq_min(reading: str) -> Callable[[Context], Result]:
    def check(ctx: Context) -> Result:
        r2, r5 = [], []
        for n in _figures(ctx):
            for tcp in ctx.plan.tcps:
                c = curve(ctx, n, reading, tcp)
                if c["mean"].max() >= DEAD_KBPS:
                    a, b = _shares(c)
                    r2.append(a)
                    r5.append(b)
        r2a, r5a = np.array(r2), np.array(r5)
        bad2 = float(np.mean(r2a <= 1 - HIGH_DEGRADATION))
        ok5 = float(np.mean(r5a >= 1 - HIGH_DEGRADATION))
        ev = (
            f"{len(r2)} curves (figure × TCP) with traffic: IFQ 2 at least {pct(HIGH_DEGRADATION)} "
            f"below the curve's best in {pct(bad2)} (IFQ 2 at {pct(r2a.min())}–{pct(r2a.max())} of "
            f"the best); IFQ 5 within {pct(HIGH_DEGRADATION)} of it in {pct(ok5)}"
        )
        return ev, True if bad2 > MAJORITY else ("partly" if bad2 > 0 else False)

    return check


def _need(c: pd.DataFrame) -> int:
    """The smallest IFQ at which a curve is within NEAR_MAX of its best."""
    best = c["mean"].max()
    return int(c.index[c["mean"] >= (1 - NEAR_MAX) * best][0])


def _fig3(ctx: Context) -> dict[str, pd.DataFrame]:
    return {t: curve(ctx, 3, CLEAN, t) for t in ctx.plan.tcps}


def _curve_text(cs: dict[str, pd.DataFrame]) -> str:
    return "; ".join(f"{t} " + " → ".join(f"{v:.0f}" for v in c["mean"]) for t, c in cs.items())


def ifq_grows(ctx: Context) -> Result:
    cs = _fig3(ctx)
    steady, grows = [], []
    for c in cs.values():
        m, ci = c["mean"].to_numpy(), np.nan_to_num(c["ci95"].to_numpy())
        drops = [
            m[i] - m[i + 1] > max(NEAR_MAX * m[i], ci[i] + ci[i + 1]) for i in range(len(m) - 1)
        ]
        steady.append(not any(drops))
        grows.append(m[-1] / m[0] - 1 > NEAR_MAX)
    ev = (
        f"Fig. 3, kbit/s over IFQ {', '.join(str(q) for q in ctx.plan.ifqs)}: {_curve_text(cs)}; "
        f"{sum(grows)} of {len(cs)} versions grow by more than {pct(NEAR_MAX)}, "
        f"{sum(steady)} never drop"
    )
    if all(steady) and any(grows):
        return ev, True if all(grows) else "partly (some versions flat)"
    return ev, "partly" if any(grows) else False


def reno_buffers(ctx: Context) -> Result:
    cs = _fig3(ctx)
    needs = {t: _need(c) for t, c in cs.items()}
    small = {t: c["mean"].iloc[0] / c["mean"].max() for t, c in cs.items()}
    ev = (
        "Fig. 3, smallest IFQ within "
        f"{pct(NEAR_MAX)} of the best: "
        + ", ".join(f"{t} {q}" for t, q in needs.items())
        + f"; at IFQ {ctx.plan.ifqs[0]}: "
        + ", ".join(f"{t} {pct(v)}" for t, v in small.items())
    )
    a = needs[RENO] == max(needs.values())
    b = small[RENO] == min(small.values())
    return ev, True if a and b else ("partly" if a or b else False)


def vegas_ifq2(ctx: Context) -> Result:
    cs = _fig3(ctx)
    drop = {t: 1 - c["mean"].iloc[0] / c["mean"].max() for t, c in cs.items()}
    ev = f"Fig. 3, loss at IFQ {ctx.plan.ifqs[0]} against the best IFQ: " + ", ".join(
        f"{t} {pct(v, 1)}" for t, v in drop.items()
    )
    if drop[VEGAS] >= HIGH_DEGRADATION:
        return ev, True
    return ev, "partly (largest, small)" if drop[VEGAS] == max(drop.values()) else False


def ifq20(ctx: Context) -> Result:
    cs = _fig3(ctx)
    big = [q for q in ctx.plan.ifqs if q > ctx.paper.value("claims/ifq_no_loss")]
    at_max = {
        t: all(c["mean"].get(q, math.nan) >= (1 - NEAR_MAX) * c["mean"].max() for q in big)
        for t, c in cs.items()
    }
    needs = {t: _need(c) for t, c in cs.items()}
    late = [t for t, q in needs.items() if q in big]
    ev = (
        f"Fig. 3: every version within {pct(NEAR_MAX)} of its best at IFQ "
        f"{', '.join(map(str, big))}: "
        f"{'yes' if all(at_max.values()) else 'no'}; versions needing more than "
        f"{max(q for q in ctx.plan.ifqs if q not in big)}: {', '.join(late) or 'none'} "
        f"(smallest IFQ at the best: {', '.join(f'{t} {q}' for t, q in needs.items())}); "
        f"the window is {ctx.plan.window} packets, so over one hop a longer queue never fills"
    )
    if all(at_max.values()):
        return ev, True if late else "partly (a smaller IFQ suffices)"
    return ev, False


def vegas_flat(reading: str) -> Callable[[Context], Result]:
    def check(ctx: Context) -> Result:
        c = curve(ctx, 4, reading, VEGAS)
        c = c[c.index >= ctx.paper.value("claims/ifq_min")]
        top, bottom = c["mean"].idxmax(), c["mean"].idxmin()
        spread = c["mean"][top] - c["mean"][bottom]
        level = c["mean"].mean()
        ev = (
            "Fig. 4, Vegas, kbit/s over IFQ ≥ 5: "
            + ", ".join(f"{q}: {v:.1f}" for q, v in c["mean"].items())
            + f" (spread {pct(spread / level if level > 0 else math.nan)})"
        )
        if level < DEAD_KBPS:
            return ev + ": no traffic", None
        within = spread <= np.nansum([c["ci95"][top], c["ci95"][bottom]])
        return ev, bool(spread <= FLAT_SHARE * level or within)

    return check


def others_ifq5(reading: str) -> Callable[[Context], Result]:
    def check(ctx: Context) -> Result:
        parts, ok = [], 0
        others = [t for t in ctx.plan.tcps if t != VEGAS]
        for t in others:
            c = curve(ctx, 4, reading, t)
            top = c["mean"].idxmax()
            near = c["mean"][5] + np.nan_to_num(c["ci95"][5]) >= c["mean"][top] - np.nan_to_num(
                c["ci95"][top]
            )
            falls = c["mean"][max(c.index)] < c["mean"][5]
            ok += int(bool(near and falls))
            parts.append(
                f"{t} peak at IFQ {top}, IFQ 5 → 50: {c['mean'][5]:.1f} → "
                f"{c['mean'][max(c.index)]:.1f}"
            )
        ev = "Fig. 4: " + "; ".join(parts)
        if max(curve(ctx, 4, reading, t)["mean"].max() for t in others) < DEAD_KBPS:
            return ev + ": no traffic", None
        return ev, True if ok == len(others) else ("partly" if ok else False)

    return check


def ifq2_bad(reading: str) -> Callable[[Context], Result]:
    def check(ctx: Context) -> Result:
        shares = {t: _shares(curve(ctx, 4, reading, t))[0] for t in ctx.plan.tcps}
        bad = [t for t, v in shares.items() if v <= 1 - HIGH_DEGRADATION]
        ev = "Fig. 4, IFQ 2 as a share of the best IFQ: " + ", ".join(
            f"{t} {pct(v)}" for t, v in shares.items()
        )
        return ev, True if len(bad) == len(shares) else ("partly" if bad else False)

    return check


def _profile(ctx: Context, error: str, delack: int) -> np.ndarray:
    f = select(ctx.s["ifq"], hops=1, error=error, delack=delack)
    f = f.assign(norm=f["mean"] / f.groupby("tcp")["mean"].transform("max"))
    return f.sort_values(["tcp", "ifq"])["norm"].to_numpy(dtype=float)


def ifq_similar(reading: str) -> Callable[[Context], Result]:
    def check(ctx: Context) -> Result:
        parts, ok = [], 0
        for e in (CLEAN, reading):
            a, b = _profile(ctx, e, 1), _profile(ctx, e, 2)
            if a.size < 3 or np.nanstd(a) == 0 or np.nanstd(b) == 0:
                parts.append(f"{e}: flat (no IFQ effect to compare)")
                ok += 1
                continue
            r = float(np.corrcoef(np.nan_to_num(a), np.nan_to_num(b))[0, 1])
            ok += int(r >= SIMILAR)
            parts.append(f"{e}: correlation {r:.2f}")
        ev = (
            "single hop, (TCP × IFQ) throughput / the curve's best, DelAck 1 against 2: "
            + "; ".join(parts)
        )
        return ev, True if ok == 2 else ("partly" if ok else False)

    return check


def vegas_all4(reading: str) -> Callable[[Context], Result]:
    def check(ctx: Context) -> Result:
        big = [q for q in ctx.plan.ifqs if q > ctx.paper.value("claims/ifq_no_loss")]
        parts, top, tie = [], 0, 0
        for n in (3, 4, 5, 6):
            m = tcp_means(ctx, n, reading, big)
            best, tied = ranking(m)
            top += int(best == VEGAS)
            tie += int(best != VEGAS and VEGAS in tied)
            parts.append(
                f"Fig. {n}: best {best}" + (f" (tied: {', '.join(tied)})" if len(tied) > 1 else "")
            )
        ev = f"IFQ {', '.join(map(str, big))}: " + "; ".join(parts)
        if top == 4:
            return ev, True
        return ev, f"partly (best in {top}, tied in {tie})" if top + tie else False

    return check


def vegas_910(reading: str) -> Callable[[Context], Result]:
    def check(ctx: Context) -> Result:
        parts, top, close = [], 0, 0
        for n in (9, 10):
            m = tcp_means(ctx, n, reading)
            best, _ = ranking(m)
            if m["mean"].max() < DEAD_KBPS:
                parts.append(f"Fig. {n}: no traffic")
                continue
            v = float(select(m, tcp=VEGAS)["mean"].iloc[0])
            top += int(best == VEGAS)
            close += int(bool((m["mean"] >= (1 - COMPARABLE) * v).all()))
            parts.append(f"Fig. {n}: {_means_text(m)} kbit/s")
        ev = "; ".join(parts)
        if all(x.endswith("no traffic") for x in parts):
            return ev, None
        if top == 2 and close == 2:
            return ev, True
        return ev, "partly" if top or close else False

    return check


__all__ = ["COMPARABLE", "HIGH_DEGRADATION", "NEAR_MAX", "best_is", "curves", "ranking"]
