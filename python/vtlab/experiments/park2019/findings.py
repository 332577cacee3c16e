"""Park 2019: the paper's qualitative claims, each a small predicate on the summaries.

Every :class:`~vtlab.experiments.pipeline.Claim` returns its evidence (numbers
computed from the runs) and a verdict; the pipeline evaluates them and the report
prints each with its verdict, so a claim that does not hold in vtlab says so. Numbers
that the paper states (loss thresholds, the SC ssthresh floor, vehicles per segment)
come from ``paper.toml``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from vtlab.experiments.park2019.analysis import _mean, count_verdict, pct, table2_paper
from vtlab.experiments.park2019.fig11 import fig11_claims
from vtlab.experiments.park2019.plan import (
    FIG8_VARIANTS,
    FIG11_VARIANTS,
    FIG12_VARIANTS,
    MSS,
    VARIANTS,
)
from vtlab.experiments.pipeline import Claim, Context

#: Table 2's "no major difference" holds if no variant's spread over sizes exceeds this.
SIZE_SPREAD = 0.25
#: Fig. 6 capacity claim: one connection / one of N vehicles must lie in this range
#: around the paper's vehicles per segment.
CAPACITY_RATIO = (2.0, 4.5)
#: Fig. 12 windows are compared after the start-up (seconds).
FIG12_FROM_S = 5.0


def rank(summary: pd.DataFrame, loss: float, variants: Sequence[str]) -> list[str]:
    vals = {v: _mean(summary, variant=v, loss=loss) for v in variants}
    return sorted((v for v in vals if math.isfinite(vals[v])), key=lambda v: -vals[v])


def spread(summary: pd.DataFrame, loss: float) -> float:
    """max/min − 1 of the ten variants' means at one loss level."""
    vals = [_mean(summary, variant=v, loss=loss) for v in VARIANTS]
    vals = [v for v in vals if math.isfinite(v) and v > 0]
    return max(vals) / min(vals) - 1 if vals else math.nan


def _who(ctx: Context, name: str) -> str:
    return "1 connection" if name in ("fig4", "fig11a") else f"{ctx.plan.vehicles} vehicles"


# -- Table 2 ---------------------------------------------------------------------------


def _size_spread(ctx: Context) -> tuple[str, bool]:
    t2 = ctx.s["table2"]
    ours = {}
    for v in VARIANTS:
        vals = t2[t2["variant"] == v]["mean"].to_numpy(dtype=float)
        if len(vals) >= 2 and np.all(vals > 0):
            ours[v] = vals.max() / vals.min() - 1
    worst = max(ours, key=lambda v: ours[v])
    return (
        f"largest spread max/min − 1 across sizes: {worst} {ours[worst] * 100:.0f} %; "
        f"median over variants {np.median(list(ours.values())) * 100:.0f} %",
        ours[worst] <= SIZE_SPREAD,
    )


def _paper_size_spread(ctx: Context) -> tuple[str, float]:
    columns: dict[str, list[float]] = {}
    for row in table2_paper(ctx.paper).values():
        for v, x in row.items():
            columns.setdefault(v, []).append(x)
    spreads = {v: max(xs) / min(xs) - 1 for v, xs in columns.items()}
    worst = max(spreads, key=lambda v: spreads[v])
    return worst, spreads[worst]


def _illinois_first_t2(ctx: Context) -> tuple[str, bool]:
    t2, size = ctx.s["table2"], max(ctx.plan.sizes_mb)
    order = sorted(VARIANTS, key=lambda v: -_mean(t2, variant=v, size_mb=size))
    return f"order at {size} MB: {', '.join(order[:4])}, …", order[0] == "Illinois"


def table2_claims(ctx: Context) -> list[Claim]:
    worst, value = _paper_size_spread(ctx)
    loss = pct(ctx.paper.value("table2_loss"))
    return [
        Claim(
            "Table 2",
            "No major difference in throughput as the transfer size varies (paper: "
            f"largest spread max/min − 1 {value * 100:.0f} %, {worst})",
            _size_spread,
        ),
        Claim(
            "Table 2",
            f"Illinois achieves far better throughput than any other variant at {loss}",
            _illinois_first_t2,
        ),
    ]


# -- Figs. 4 and 6 ---------------------------------------------------------------------


def _illinois_best(name: str) -> Any:
    def check(ctx: Context) -> tuple[str, bool | str]:
        losses, summary = ctx.plan.losses, ctx.s[name]
        tops = {x: rank(summary, x, list(VARIANTS)) for x in losses}
        best = [x for x in losses if tops[x] and tops[x][0] == "Illinois"]
        return (
            f"Illinois first at {len(best)} of {len(losses)} loss levels (spread of the ten "
            f"at the lowest level: {spread(summary, min(losses)) * 100:.0f} %); "
            + "; ".join(f"{pct(x)}: {(tops[x] or ['–'])[0]}" for x in losses),
            count_verdict(len(best), len(losses)),
        )

    return check


def _newreno_near_bottom(ctx: Context) -> tuple[str, bool | str]:
    losses = ctx.plan.losses
    tops = {x: rank(ctx.s["fig4"], x, list(VARIANTS)) for x in losses}
    place = {
        x: len(tops[x]) - tops[x].index("NewReno") if "NewReno" in tops[x] else 0 for x in losses
    }
    return (
        "NewReno's place from the bottom: " + ", ".join(f"{pct(x)}: {place[x]}" for x in losses),
        count_verdict(sum(1 for r in place.values() if 0 < r <= 3), len(losses)),
    )


def _scalable_second(ctx: Context) -> tuple[str, bool | str]:
    losses = ctx.plan.losses
    tops = {x: rank(ctx.s["fig6"], x, list(VARIANTS)) for x in losses}
    second = {x: tops[x][1] if len(tops[x]) > 1 else "–" for x in losses}
    n = sum(1 for x in losses if second[x] == "Scalable")
    return (
        f"Scalable second at {n} of {len(losses)} levels; "
        + "; ".join(f"{pct(x)}: {second[x]}" for x in losses),
        count_verdict(n, len(losses)),
    )


def _gap_widens(name: str) -> Any:
    def check(ctx: Context) -> tuple[str, bool]:
        lo, hi, summary = min(ctx.plan.losses), max(ctx.plan.losses), ctx.s[name]
        r_lo, r_hi = (
            _mean(summary, variant="Illinois", loss=x) / _mean(summary, variant="NewReno", loss=x)
            for x in (lo, hi)
        )
        return (
            f"Illinois/NewReno {r_lo:.2f}× at {pct(lo)}, {r_hi:.2f}× at {pct(hi)}",
            bool(r_hi > r_lo),
        )

    return check


def _decreasing(name: str) -> Any:
    def check(ctx: Context) -> tuple[str, bool]:
        losses, summary = ctx.plan.losses, ctx.s[name]
        lo, hi = min(losses), max(losses)
        bad = [
            v
            for v in VARIANTS
            if not _mean(summary, variant=v, loss=hi) < _mean(summary, variant=v, loss=lo)
        ]
        steps = 0
        for v in VARIANTS:
            means = [_mean(summary, variant=v, loss=x) for x in losses]
            steps += sum(1 for a, b in zip(means, means[1:], strict=False) if b > a)
        return (
            f"lower at {pct(hi)} than at {pct(lo)} for {len(VARIANTS) - len(bad)}/"
            f"{len(VARIANTS)} variants; {steps} increases between adjacent levels (noise)",
            not bad,
        )

    return check


def _capacity_shared(ctx: Context) -> tuple[str, bool]:
    lo = min(ctx.plan.losses)
    one = _mean(ctx.s["fig4"], variant="NewReno", loss=lo)
    many = _mean(ctx.s["fig6"], variant="NewReno", loss=lo)
    low, high = CAPACITY_RATIO
    return (
        f"NewReno at {pct(lo)}: {one:.2f} Mbit/s alone, {many:.2f} per vehicle of "
        f"{ctx.plan.vehicles} (ratio {one / many:.2f}; accepted {low:g}–{high:g})",
        bool(low <= one / many <= high),
    )


def goodput_claims(ctx: Context) -> list[Claim]:
    out: list[Claim] = []
    for name, fig in (("fig4", "Fig. 4"), ("fig6", "Fig. 6")):
        who = _who(ctx, name)
        out.append(
            Claim(
                fig,
                f"Illinois has the best throughput under virtually all loss rates ({who})",
                _illinois_best(name),
            )
        )
        if name == "fig4":
            out.append(
                Claim(
                    fig,
                    "NewReno is among the worst, above only one or two others",
                    _newreno_near_bottom,
                )
            )
        else:
            out.append(
                Claim(fig, f"Scalable has the second highest throughput ({who})", _scalable_second)
            )
        out.append(
            Claim(
                fig,
                f"The Illinois/NewReno gap widens as the loss rate grows ({who})",
                _gap_widens(name),
            )
        )
    for name, fig in (("fig4", "Fig. 4"), ("fig6", "Fig. 6")):
        out.append(
            Claim(
                fig,
                "Every variant's throughput decreases as the loss rate grows",
                _decreasing(name),
            )
        )
    per_segment = ctx.paper.value("vehicles_per_segment")
    out.append(
        Claim(
            "Fig. 6",
            "The maximum throughput is scaled down by the number of vehicles per 10 Mbit/s "
            f"segment ({per_segment:g})",
            _capacity_shared,
        )
    )
    return out


# -- Figs. 7, 8 and 12 -----------------------------------------------------------------


def first_vehicle(traces: pd.DataFrame) -> pd.DataFrame:
    flows = list(traces["flow"].unique())  # in order of first appearance
    first = "ev1" if "ev1" in flows else flows[0]
    return traces[traces["flow"] == first]


def _progress_order(ctx: Context, name: str) -> list[str]:
    tr = first_vehicle(ctx.s["traces"][name])
    last = tr.sort_values("time_s").groupby("variant")["snd_una"].last()
    return list(last.sort_values(ascending=False).index)


def fig7_claims(ctx: Context) -> list[Claim]:
    out = []
    loss = pct(ctx.paper.value("fig7_loss"))
    for name, who in (("fig7a", "1 connection"), ("fig7b", f"{ctx.plan.vehicles} vehicles, ev1")):

        def fastest(c: Context, name: str = name) -> tuple[str, bool]:
            order = _progress_order(c, name)
            return (
                f"ahead at the end: {', '.join(order[:3])}; NewReno "
                f"{order.index('NewReno') + 1} of {len(order)}",
                order[0] == "Illinois",
            )

        def conservative(c: Context, name: str = name) -> tuple[str, bool]:
            order = _progress_order(c, name)
            place = order.index("NewReno")
            return (
                f"NewReno {place + 1} of {len(order)} (last: {order[-1]})",
                place == len(order) - 2,
            )

        out.append(
            Claim(
                "Fig. 7",
                f"Illinois proceeds the fastest in the first minute at {loss} ({who})",
                fastest,
            )
        )
        out.append(
            Claim(
                "Fig. 7",
                f"NewReno is the second most conservative of the ten ({who})",
                conservative,
            )
        )
    return out


def _events(ctx: Context, connections: int) -> tuple[int, int, str]:
    """Loss levels at which Illinois has fewer events / a larger FR/SS ratio than
    NewReno, and the numbers at the highest level."""
    sub = ctx.s["fig8"][ctx.s["fig8"]["connections"] == connections]
    hi, fewer, larger, text = max(ctx.plan.losses), 0, 0, ""
    for x in ctx.plan.losses:
        tot, rat = {}, {}
        for v in FIG8_VARIANTS:
            ss = _mean(sub, variant=v, event="Slow Start", loss=x)
            fr = _mean(sub, variant=v, event="Fast Recovery", loss=x)
            tot[v], rat[v] = ss + fr, fr / ss if ss > 0 else math.inf
        fewer += tot["Illinois"] < tot["NewReno"]
        larger += rat["Illinois"] > rat["NewReno"]
        if x == hi:
            text = (
                f"at {pct(x)}: total NewReno {tot['NewReno']:.0f} vs Illinois "
                f"{tot['Illinois']:.0f}; FR/SS NewReno {rat['NewReno']:.1f} vs Illinois "
                f"{rat['Illinois']:.1f}"
            )
    return fewer, larger, text


def fig8_claims(ctx: Context) -> list[Claim]:
    out = []
    n = len(ctx.plan.losses)
    for conn in (1, ctx.plan.vehicles):
        who = "1 connection" if conn == 1 else f"{conn} connections, per connection"

        def fewer(c: Context, conn: int = conn) -> tuple[str, bool | str]:
            k, _, text = _events(c, conn)
            return f"fewer at {k} of {n} loss levels; {text}", count_verdict(k, n)

        def ratio(c: Context, conn: int = conn) -> tuple[str, bool | str]:
            _, k, _ = _events(c, conn)
            return f"larger at {k} of {n} loss levels", count_verdict(k, n)

        out.append(
            Claim(
                "Fig. 8",
                f"Illinois has far fewer Slow Start + Fast Recovery events than NewReno ({who})",
                fewer,
            )
        )
        out.append(
            Claim(
                "Fig. 8",
                f"Illinois's Fast Recovery / Slow Start ratio is much larger ({who})",
                ratio,
            )
        )
    return out


def _fig12_later(ctx: Context) -> pd.DataFrame:
    tr = ctx.s["traces"]["fig12"]
    if tr is None or tr.empty:
        raise KeyError("fig12")
    return tr[tr["time_s"] >= FIG12_FROM_S]


def fig12_claims(ctx: Context) -> list[Claim]:
    floor = ctx.paper.value("ssthresh_floor_mss")

    def above_floor(c: Context) -> tuple[str, bool]:
        later = _fig12_later(c)
        share = (
            later.assign(big=later["cwnd_bytes"] >= floor * MSS).groupby("variant")["big"].mean()
        )
        return (
            f"share of samples (all vehicles, t ≥ {FIG12_FROM_S:g} s) with cwnd ≥ {floor:g} MSS: "
            f"SC {share.get('NewReno SC', math.nan) * 100:.0f} %, "
            f"NewReno {share.get('NewReno', math.nan) * 100:.0f} %",
            bool(share.get("NewReno SC", 0) > share.get("NewReno", 0)),
        )

    def larger(c: Context) -> tuple[str, bool]:
        mean_cwnd = _fig12_later(c).groupby("variant")["cwnd_bytes"].mean()
        others = max(mean_cwnd.get("Illinois", 0), mean_cwnd.get("NewReno", 0))
        return (
            f"mean cwnd (t ≥ {FIG12_FROM_S:g} s, all vehicles): "
            + ", ".join(f"{v} {mean_cwnd.get(v, math.nan) / 1e3:.1f} kB" for v in FIG12_VARIANTS),
            bool(mean_cwnd.get("Illinois AA", 0) > others),
        )

    return [
        Claim(
            "Fig. 12",
            f"NewReno SC keeps its window above {floor:g} MSS except after timeouts",
            above_floor,
        ),
        Claim("Fig. 12", "Illinois AA has much larger windows than Illinois and NewReno", larger),
    ]


def claims(ctx: Context) -> list[Claim]:
    """Every claim of the paper that the reproduction checks, in the paper's order."""
    return [
        *table2_claims(ctx),
        *goodput_claims(ctx),
        *fig7_claims(ctx),
        *fig8_claims(ctx),
        *fig11_claims(ctx, "fig11a"),
        *fig11_claims(ctx, "fig11b"),
        *fig12_claims(ctx),
    ]


__all__ = ["FIG11_VARIANTS", "claims"]
