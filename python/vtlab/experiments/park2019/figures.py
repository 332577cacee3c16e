"""Park 2019: the figures, each drawn from the summaries (the pipeline saves them as
PNG and SVG)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from vtlab.experiments import common
from vtlab.experiments.park2019.analysis import _lookup, _mean
from vtlab.experiments.park2019.plan import (
    FIG8_VARIANTS,
    FIG11_VARIANTS,
    FIG12_VARIANTS,
    MSS,
    STYLE,
    VARIANTS,
    Plan,
)
from vtlab.experiments.pipeline import Context, FigureSpec, PaperValues


def _loss_axes(ax: Any, ylabel: str) -> None:
    ax.set_xlabel("Average packet loss rate (%)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)


def _paper_points(ax: Any, paper: PaperValues, grid: str) -> None:
    """The throughputs the paper's text quotes for figure ``grid`` (``quote/<grid>/``
    entries of paper.toml), as open diamonds in each variant's colour."""
    quotes = paper.group(f"quote/{grid}/")
    for i, e in enumerate(quotes):
        ax.plot(
            [e.extra["loss"] * 100],
            [e.value],
            linestyle="none",
            marker="D",
            markersize=7,
            markerfacecolor="none",
            markeredgewidth=1.5,
            color=STYLE[e.extra["variant"]]["color"],
            label="paper (quoted in the text)" if i == 0 else None,
        )


def _fig_goodput(
    summary: pd.DataFrame,
    variants: Mapping[str, str],
    title: str,
    ylabel: str,
    paper: tuple[PaperValues, str] | None = None,
) -> Any:
    fig, ax = common.figure(width=6.4, height=4.2)
    common.plot_lines(
        ax, summary, x="loss", hue="variant", order=list(variants), style=STYLE, x_scale=100
    )
    if paper is not None:
        _paper_points(ax, *paper)
    _loss_axes(ax, ylabel)
    ax.set_title(title)
    ax.legend(ncol=2, loc="upper right", frameon=False)
    return fig


def _first_vehicle(traces: pd.DataFrame) -> pd.DataFrame:
    flows = list(dict.fromkeys(traces["flow"]))
    first = "ev1" if "ev1" in flows else flows[0]
    return traces[traces["flow"] == first]


def _fig7(traces: Mapping[str, pd.DataFrame | None], plan: Plan) -> Any:
    fig, axes = common.figure(1, 2, width=10.0, height=4.0)
    panels = (
        ("fig7a", "(a) single connection"),
        ("fig7b", f"(b) {plan.vehicles} vehicles (vehicle ev1)"),
    )
    for ax, (name, title) in zip(axes, panels, strict=True):
        tr = traces.get(name)
        if tr is None or tr.empty:
            ax.set_visible(False)
            continue
        tr = _first_vehicle(tr)
        for label in VARIANTS:
            rows = tr[tr["variant"] == label].sort_values("time_s")
            if rows.empty:
                continue
            st = STYLE[label]
            ax.plot(
                rows["time_s"],
                rows["snd_una"] / 1e6,
                label=label,
                color=st["color"],
                marker=st["marker"],
                markevery=max(1, len(rows) // 8),
            )
        ax.set_xlabel("Time (s)")
        ax.set_ylabel("Sequence number, snd_una (MB)")
        ax.set_xlim(0, _seconds(plan.trace_stop))
        ax.set_ylim(bottom=0)
        ax.set_title(title)
    axes[0].legend(ncol=2, loc="upper left", frameon=False)
    fig.suptitle("Fig. 7 — sequence number progress, average packet loss rate 5 %")
    return fig


def _fig8(events: pd.DataFrame, plan: Plan) -> Any:
    fig, axes = common.figure(1, 2, width=10.0, height=4.0)
    colors = {
        "NewReno Slow Start": STYLE["NewReno"]["color"],
        "NewReno Fast Recovery": STYLE["NewReno"]["color"],
        "Illinois Slow Start": STYLE["Illinois"]["color"],
        "Illinois Fast Recovery": STYLE["Illinois"]["color"],
    }
    hatches = {"NewReno Fast Recovery": "///", "Illinois Fast Recovery": "///"}
    for ax, (connections, title) in zip(
        axes,
        ((1, "(a) single connection"), (plan.vehicles, f"(b) {plan.vehicles} connections")),
        strict=True,
    ):
        ev = events[events["connections"] == connections]
        losses = sorted(ev["loss"].unique())
        series: dict[str, list[float]] = {}
        errors: dict[str, list[float]] = {}
        for variant in FIG8_VARIANTS:
            for event in ("Slow Start", "Fast Recovery"):
                key = f"{variant} {event}"
                series[key] = [
                    _mean(ev, variant=variant, event=event, loss=float(x)) for x in losses
                ]
                errors[key] = [
                    float(r["ci95"])
                    if (r := _lookup(ev, variant=variant, event=event, loss=float(x))) is not None
                    else math.nan
                    for x in losses
                ]
        common.plot_bars(
            ax,
            [f"{x * 100:g}" for x in losses],
            series,
            errors=errors,
            colors=colors,
            hatches=hatches,
        )
        ax.set_xlabel("Average packet loss rate (%)")
        ax.set_ylabel("Events" + (" per connection" if connections > 1 else ""))
        ax.set_title(title)
        ax.legend(frameon=False, loc="upper left")
    fig.suptitle(f"Fig. 8 — Slow Start (RTO) and Fast Recovery events, {plan.size} transfer")
    return fig


def _fig11(s: Mapping[str, Any], plan: Plan) -> Any:
    fig, axes = common.figure(1, 2, width=10.0, height=4.2)
    for ax, (name, title, ylabel) in zip(
        axes,
        (
            ("fig11a", "(a) single connection", "Throughput (Mbit/s)"),
            ("fig11b", f"(b) {plan.vehicles} vehicles", "Per-vehicle throughput (Mbit/s)"),
        ),
        strict=True,
    ):
        common.plot_lines(
            ax,
            s[name],
            x="loss",
            hue="variant",
            order=list(FIG11_VARIANTS),
            style=STYLE,
            x_scale=100,
        )
        _loss_axes(ax, ylabel)
        ax.set_title(title)
        ax.legend(frameon=False, loc="upper right")
    fig.suptitle(f"Fig. 11 — NewReno, NewReno ND/SC, Illinois, Illinois AA; {plan.size}")
    return fig


def _fig12(traces: pd.DataFrame | None, plan: Plan, mss_lines: float) -> Any:
    fig, ax = common.figure(width=6.4, height=4.0)
    if traces is not None and not traces.empty:
        tr = _first_vehicle(traces)
        for label in FIG12_VARIANTS:
            rows = tr[tr["variant"] == label].sort_values("time_s")
            ax.plot(
                rows["time_s"],
                rows["cwnd_bytes"],
                label=label,
                color=STYLE[label]["color"],
                linewidth=1.0,
            )
        ax.axhline(
            mss_lines * MSS, color="grey", linestyle=":", linewidth=1.0, label=f"{mss_lines:g} MSS"
        )
    ax.set_xlabel("Time (seconds)")
    ax.set_ylabel("Congestion window size (bytes)")
    ax.set_xlim(0, _seconds(plan.trace_stop))
    ax.set_ylim(bottom=0)
    ax.set_title(
        f"Fig. 12 — cwnd of vehicle ev1 of {plan.vehicles}, {plan.fig12_loss * 100:g} % loss"
    )
    ax.legend(frameon=False, loc="upper right")
    return fig


def _seconds(duration: str) -> float:
    text = duration.strip()
    for suffix, scale in (("ms", 1e-3), ("s", 1.0), ("min", 60.0)):
        if text.endswith(suffix) and text[: -len(suffix)].replace(".", "", 1).isdigit():
            return float(text[: -len(suffix)]) * scale
    return float(text)


def figures() -> list[FigureSpec]:
    """Figs. 4, 6, 7, 8, 11 and 12 of the paper (4 and 6 with the throughputs its
    text quotes)."""
    return [
        FigureSpec(
            "fig4",
            lambda c: _fig_goodput(
                c.s["fig4"],
                VARIANTS,
                f"Fig. 4 — single connection, {c.plan.size}",
                "Throughput (Mbit/s)",
                (c.paper, "fig4"),
            ),
        ),
        FigureSpec(
            "fig6",
            lambda c: _fig_goodput(
                c.s["fig6"],
                VARIANTS,
                f"Fig. 6 — {c.plan.vehicles} vehicles, {c.plan.size} each",
                "Per-vehicle throughput (Mbit/s)",
                (c.paper, "fig6"),
            ),
        ),
        FigureSpec("fig7", lambda c: _fig7(c.s["traces"], c.plan)),
        FigureSpec("fig8", lambda c: _fig8(c.s["fig8"], c.plan)),
        FigureSpec("fig11", lambda c: _fig11(c.s, c.plan)),
        FigureSpec("fig12", _draw_fig12),
    ]


def _draw_fig12(ctx: Context) -> Any:
    floor = ctx.paper.value("ssthresh_floor_mss")
    return _fig12(ctx.s["traces"].get("fig12"), ctx.plan, floor)
