"""Janevski & Petrov: the figures — one per paper figure (Figs. 3-10: throughput
against DupAck, one panel per IFQ, one line per TCP version, and the IFQ curves
averaged over DupAck), the figures with errors also under the calibrated reading;
then the maxima beside the paper's numbers, the error model's readings, RTS/CTS and
the DelAck gain."""

from __future__ import annotations

from typing import Any

import numpy as np

from vtlab.experiments import common
from vtlab.experiments.janevski2014.analysis import (
    figure_keys,
    paper_figures,
    select,
)
from vtlab.experiments.janevski2014.plan import (
    CALIBRATED,
    CLEAN,
    ERROR_20,
    LOSSY,
    REFERENCE,
    TCPS,
)
from vtlab.experiments.pipeline import Context, FigureSpec

STYLE = common.styles([*TCPS, "paper"])
PAPER_COLOR = "#888888"


def _grid_figure() -> tuple[Any, np.ndarray]:
    """A 2 × 3 figure in the house style with a fixed layout (the constrained layout
    costs more than the drawing for these six panels)."""
    from matplotlib.figure import Figure

    with common.style():
        fig = Figure(figsize=(10.5, 6.2))
        axes = fig.subplots(2, 3)
    fig.subplots_adjust(left=0.06, right=0.99, top=0.84, bottom=0.08, hspace=0.38, wspace=0.2)
    return fig, np.asarray(axes).ravel()


def _paper_figure(number: int, reading: str) -> Any:
    def draw(ctx: Context) -> Any:
        keys = figure_keys(number, reading)
        pts = select(ctx.s["points"], **keys)
        curves = select(ctx.s["ifq"], **keys)
        if pts.empty:
            return None
        ifqs = list(ctx.plan.ifqs)
        fig, axes = _grid_figure()
        peak = float(pts["mean"].max())
        top = min(float((pts["mean"] + pts["ci95"].fillna(0)).max()), 1.3 * peak)
        for ax, q in zip(axes, ifqs, strict=False):
            common.plot_lines(
                ax, select(pts, ifq=q), x="dupack", hue="tcp", order=list(TCPS), style=STYLE
            )
            ax.set_title(f"IFQ = {q} packets")
            ax.set_xlabel("DupAck threshold")
            ax.set_xticks(list(ctx.plan.dupacks))
        ax = axes[len(ifqs)]
        # IFQ sizes at even spacing (the paper's values are not evenly spaced).
        pos = curves.assign(ifq=[ifqs.index(q) for q in curves["ifq"]])
        common.plot_lines(ax, pos, x="ifq", hue="tcp", order=list(TCPS), style=STYLE)
        ax.set_xticks(range(len(ifqs)), [str(q) for q in ifqs])
        ax.set_xlabel("IFQ (packets)")
        ax.set_title("mean over DupAck")
        for ax in axes[: len(ifqs) + 1]:
            ax.set_ylim(0, max(top * 1.08, 1.0))
            ax.set_ylabel("Throughput (kbit/s)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(
            handles, labels, loc="upper center", ncols=len(labels), bbox_to_anchor=(0.5, 0.925)
        )
        for ax in axes[len(ifqs) + 1 :]:
            ax.set_visible(False)
        caption = paper_figures()[number]["caption"]
        tag = "" if keys["error"] == CLEAN else f"\nerrors: {_reading_text(ctx, reading)}"
        fig.suptitle(f"Fig. {number} (vtlab): {caption}{tag}", fontsize=9)
        return fig

    return draw


def _reading_text(ctx: Context, reading: str) -> str:
    p = ctx.plan
    if reading == ERROR_20:
        return f"on-off, {p.error_rate * 100:g} % bad, {p.error_burst_ms:g} ms bursts"
    return (
        f"calibrated on-off, {p.calibrated_rate * 100:g} % bad, {p.calibrated_burst_ms:g} ms bursts"
    )


def _maxima(ctx: Context) -> Any:
    m = ctx.s["maxima"]
    fig, axes = common.figure(1, len(ctx.plan.hops), width=10.0, height=3.8)
    axes = np.atleast_1d(axes)
    levels = (CLEAN, *LOSSY)
    colors = {CLEAN: "#1f77b4", ERROR_20: "#d62728", CALIBRATED: "#ff7f0e"}
    for ax, h in zip(axes, ctx.plan.hops, strict=True):
        series = {
            e: [
                float(select(m, hops=h, error=e, tcp=t)["mean"].max())
                if len(select(m, hops=h, error=e, tcp=t))
                else np.nan
                for t in ctx.plan.tcps
            ]
            for e in levels
        }
        common.plot_bars(ax, list(ctx.plan.tcps), series, colors=colors)
        if h == 1:
            ax.axhline(ctx.paper.value("results/single_max"), color=PAPER_COLOR, linestyle=":")
            ax.set_title(
                f"single hop (dotted: paper's “almost {ctx.paper.value('results/single_max'):g} "
                "kbps”)"
            )
        else:
            lo = ctx.paper.value("results/multi_max_low")
            hi = ctx.paper.value("results/multi_max_high")
            ax.axhspan(lo, hi, color=PAPER_COLOR, alpha=0.3)
            ax.set_title(f"{h} hops (band: paper's {lo:g}–{hi:g} kbps)")
        ax.set_ylabel("Highest mean throughput (kbit/s)")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.25)
        ax.legend(loc="upper center", title="errors", ncols=3)
    fig.suptitle("Highest throughput per TCP version (over DelAck, IFQ and DupAck)")
    return fig


def _readings(ctx: Context) -> Any:
    r = ctx.s["readings"]
    fig, axes = common.figure(1, len(ctx.plan.hops), width=10.0, height=3.8)
    axes = np.atleast_1d(axes)
    paper = ctx.paper.value("results/degradation") * 100
    for ax, h in zip(axes, ctx.plan.hops, strict=True):
        rows = select(r, hops=h)
        for burst in ctx.plan.reading_bursts_ms:
            on = select(rows, kind="on-off", burst_ms=burst).sort_values("rate")
            ax.plot(
                on["rate"] * 100, on["degradation"] * 100, marker="o", label=f"on-off, {burst:g} ms"
            )
        for kind, marker in (("data frames only", "s"), ("at IP", "^")):
            k = select(rows, kind=kind)
            ax.scatter(k["rate"] * 100, k["degradation"] * 100, marker=marker, label=kind, zorder=3)
        ax.axhline(paper, color=PAPER_COLOR, linestyle=":", label=f"paper: {paper:g} % degradation")
        ax.scatter(
            [ctx.plan.calibrated_rate * 100],
            [paper],
            marker="*",
            s=90,
            color="black",
            label="calibrated reading",
            zorder=4,
        )
        ax.set_xscale("log")
        rates = [x * 100 for x in ctx.plan.reading_rates]
        ax.set_xticks(rates, [f"{x:g}" for x in rates])
        ax.set_xticks([], minor=True)
        ax.set_xlabel("share of time in the lossy state (%)")
        ax.set_ylabel("throughput lost (%)")
        ax.set_ylim(0, 105)
        ax.set_title(f"{h} hop{'s' if h > 1 else ''}: {_reference_text()}")
        ax.legend(loc="upper left", fontsize=6)
    fig.suptitle("Readings of the on-off error model: the throughput they cost")
    return fig


def _rts(ctx: Context) -> Any:
    r = ctx.s["rts"]
    fig, axes = common.figure(1, len(ctx.plan.hops), width=10.0, height=3.8)
    axes = np.atleast_1d(axes)
    for ax, h in zip(axes, ctx.plan.hops, strict=True):
        series, errs = {}, {}
        for rts in ("on", "off"):
            for d in ctx.plan.delacks:
                rows = [select(r, hops=h, rts=rts, delack=d, tcp=t) for t in ctx.plan.tcps]
                key = f"RTS/CTS {rts}, DelAck {d}"
                series[key] = [float(x["mean"].iloc[0]) if len(x) else np.nan for x in rows]
                errs[key] = [float(x["ci95"].iloc[0]) if len(x) else np.nan for x in rows]
        common.plot_bars(ax, list(ctx.plan.tcps), series, errors=errs)
        if h == 1:
            ax.axhline(ctx.paper.value("results/single_max"), color=PAPER_COLOR, linestyle=":")
        else:
            ax.axhspan(
                ctx.paper.value("results/multi_max_low"),
                ctx.paper.value("results/multi_max_high"),
                color=PAPER_COLOR,
                alpha=0.3,
            )
        ax.set_title(
            f"{h} hop{'s' if h > 1 else ''}, error-free, IFQ {REFERENCE['ifq']}, "
            f"DupAck {REFERENCE['dupack']}"
        )
        ax.set_ylabel("Throughput (kbit/s)")
        ax.legend(loc="lower right", fontsize=6)
    fig.suptitle("RTS/CTS before every frame (ns-2's default) or never")
    return fig


def _signed_bars(
    ax: Any, cats: list[str], series: dict[str, list[float]], errs: dict[str, list[float]]
) -> None:
    """Grouped bars that may be negative, with symmetric 95 % error bars."""
    width = 0.8 / max(1, len(series))
    xs = np.arange(len(cats), dtype=float)
    for i, (label, values) in enumerate(series.items()):
        x = xs + (i - (len(series) - 1) / 2) * width
        ax.bar(x, values, width, label=label, edgecolor="black", linewidth=0.4)
        ax.errorbar(
            x, values, yerr=np.nan_to_num(errs[label]), fmt="none", ecolor="black", capsize=2
        )
    ax.set_xticks(xs, cats)


def _delack(ctx: Context) -> Any:
    d = ctx.s["delack"]
    fig, axes = common.figure(1, len(ctx.plan.hops), width=10.0, height=3.6)
    axes = np.atleast_1d(axes)
    for ax, h in zip(axes, ctx.plan.hops, strict=True):
        series, errs = {}, {}
        for e in (CLEAN, *LOSSY):
            rows = [select(d, hops=h, error=e, tcp=t) for t in ctx.plan.tcps]
            series[e] = [float(x["diff"].iloc[0]) if len(x) else np.nan for x in rows]
            errs[e] = [float(x["ci95"].iloc[0]) if len(x) else np.nan for x in rows]
        _signed_bars(ax, list(ctx.plan.tcps), series, errs)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_ylabel("DelAck 2 − DelAck 1 (kbit/s)")
        ax.set_title(f"{h} hop{'s' if h > 1 else ''}: mean over IFQ and DupAck, paired by seed")
        ax.legend(loc="lower right", title="errors", fontsize=6)
    fig.suptitle("DelAck = 2 against DelAck = 1")
    return fig


def _reference_text() -> str:
    r = REFERENCE
    return f"{r['tcp']}, IFQ {r['ifq']}, DupAck {r['dupack']}, DelAck {r['delack']}"


def figures() -> list[FigureSpec]:
    out = []
    for n in range(3, 11):
        out.append(FigureSpec(f"fig{n}", _paper_figure(n, ERROR_20)))
        if paper_figures()[n]["error"]:
            out.append(FigureSpec(f"fig{n}_calibrated", _paper_figure(n, CALIBRATED)))
    out += [
        FigureSpec("maxima", _maxima),
        FigureSpec("error_readings", _readings),
        FigureSpec("rts", _rts),
        FigureSpec("delack_gain", _delack),
    ]
    return out
