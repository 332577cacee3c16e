"""Hu et al.: the figures — Table I beside the paper, the gain by RSRP, RTT over time
and its distribution, λ against RSRP (Fig. 9) and speed (Fig. 10), and the
sensitivity to the unstated parameters, the receive window and the eNB buffer."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from vtlab.experiments import common
from vtlab.experiments.hu_lte.analysis import row, table1_frame
from vtlab.experiments.hu_lte.plan import (
    ADAPTIVE,
    CUBIC,
    CUBIC_6M,
    STATIC_RSRP,
    setup_numbers,
    size_label,
)
from vtlab.experiments.pipeline import Context, FigureSpec

STYLE = common.styles([CUBIC, ADAPTIVE, CUBIC_6M, "paper", "window", "increment"])


def _table1(ctx: Context) -> Any:
    frame = table1_frame(ctx)
    fig, ax = common.figure(1, 1, width=6.4, height=3.6)
    cats = [f"{r.direction}\n{r.scheme}" for r in frame.itertuples()]
    common.plot_bars(
        ax,
        cats,
        {"paper (Table I)": frame["paper_mbps"], "vtlab": frame["vtlab_mbps"]},
        errors={"vtlab": frame["vtlab_ci95"]},
        colors={"paper (Table I)": "#bbbbbb", "vtlab": STYLE[ADAPTIVE]["color"]},
    )
    ax.set_ylabel("Throughput (Mbit/s)")
    ax.set_title(f"Table I: static car (vtlab: RSRP {STATIC_RSRP:g} dBm)")
    ax.legend(loc="upper left")
    return fig


def _gain_rsrp(ctx: Context) -> Any:
    t = ctx.s["table1"]
    fig, axes = common.figure(1, 2, width=9.0, height=3.6)
    for ax, d in zip(axes, ("DL", "UL"), strict=True):
        rows = t[t["dir"] == d].rename(columns={"goodput_mbps": "mean"})
        common.plot_lines(
            ax, rows, x="rsrp", hue="variant", order=[CUBIC, ADAPTIVE, CUBIC_6M], style=STYLE
        )
        for e in ctx.paper.group("table1/"):
            if e.extra.get("dir") == d and "variant" in e.extra:
                ax.axhline(
                    e.value, color=STYLE[e.extra["variant"]]["color"], linestyle=":", linewidth=1.0
                )
        ax.set_xlabel("Mean RSRP (dBm), static car")
        ax.set_ylabel("Throughput (Mbit/s)")
        ax.set_title(f"{d} (dotted: Table I)")
        ax.legend(loc="upper left")
    fig.suptitle("Throughput by channel: the gain is the capacity above the window's rate")
    return fig


def _rtt_time(ctx: Context) -> Any:
    tr = ctx.s["rtt_trace"]
    if tr is None or tr.empty:
        return None
    speeds = sorted(tr["speed_kmh"].unique())
    fig, axes = common.figure(1, len(speeds), width=4.6 * len(speeds), height=3.6)
    axes = np.atleast_1d(axes)
    lo, hi = ctx.paper.value("rtt/low"), ctx.paper.value("rtt/high")
    for ax, v in zip(axes, speeds, strict=True):
        ax.axhspan(lo, hi, color="#dddddd", alpha=0.6, label=f"paper: {lo:g}–{hi:g} ms")
        for variant in (CUBIC, ADAPTIVE, CUBIC_6M):
            rows = tr[(tr["speed_kmh"] == v) & (tr["variant"] == variant)]
            if len(rows):
                ax.plot(
                    rows["time_s"],
                    rows["srtt_ms"],
                    color=STYLE[variant]["color"],
                    linewidth=0.9,
                    label=variant,
                )
        ax.set_yscale("log")
        ax.set_xlabel("Time (s)")
        ax.set_ylabel("Sender's smoothed RTT (ms)")
        ax.set_title(f"DL, {STATIC_RSRP:g} dBm, {v:g} km/h, seed 1")
        ax.legend(loc="upper right")
    return fig


def _rtt_dist(ctx: Context) -> Any:
    t = ctx.s["table1"]
    fig, axes = common.figure(1, 2, width=9.0, height=3.6)
    lo, hi = ctx.paper.value("rtt/low"), ctx.paper.value("rtt/high")
    cats = ["p50", "p95", "p99"]
    for ax, d in zip(axes, ("DL", "UL"), strict=True):
        series = {}
        for v in (CUBIC, ADAPTIVE, CUBIC_6M):
            r = row(t, dir=d, rsrp=STATIC_RSRP, variant=v)
            series[v] = [float(r[f"rtt_{c}_ms"]) if r is not None else math.nan for c in cats]
        common.plot_bars(ax, cats, series, colors={k: STYLE[k]["color"] for k in series})
        ax.axhspan(lo, hi, color="#dddddd", alpha=0.6, zorder=0)
        ax.set_yscale("log")
        ax.set_ylabel("RTT (ms), mean over runs")
        ax.set_title(f"{d}, static, {STATIC_RSRP:g} dBm (band: paper {lo:g}–{hi:g} ms)")
        ax.legend(loc="upper left")
    return fig


def _lambda_panel(ax: Any, rows: pd.DataFrame, title: str, paper_best: float | None) -> None:
    for mode in ("window", "increment"):
        r = rows[rows["mode"] == mode].sort_values("lambda")
        if r.empty:
            continue
        ax.errorbar(
            r["lambda"],
            r["goodput_mbps"],
            yerr=np.nan_to_num(r["ci95"]),
            capsize=2,
            label=f"ARWND+ACWND, {mode}",
            **STYLE[mode],
        )
    for v in (CUBIC, CUBIC_6M):
        r = rows[rows["variant"] == v]
        if len(r):
            ax.axhline(
                float(r["goodput_mbps"].iloc[0]),
                color=STYLE[v]["color"],
                linestyle="--",
                linewidth=1.0,
                label=v,
            )
    if paper_best is not None:
        ax.axvline(
            paper_best,
            color="black",
            linestyle=":",
            linewidth=1.0,
            label=f"paper's best λ = {paper_best:g}",
        )
    ax.set_xlabel("λ")
    ax.set_ylabel("DL throughput (Mbit/s)")
    ax.set_xticks(sorted(rows["lambda"].dropna().unique()))
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.legend(loc="lower right")


def _lambda_rsrp(ctx: Context) -> Any:
    f = ctx.s["lambda_rsrp"]
    fig, axes = common.figure(1, 2, width=9.0, height=3.6)
    for ax, key in zip(axes, ("good", "poor"), strict=True):
        rsrp = ctx.paper.value(f"fig9/{key}/rsrp")
        rows = f[(f["rsrp"] - rsrp).abs() < 1e-9]
        _lambda_panel(ax, rows, f"RSRP {rsrp:g} dBm, static", ctx.paper.value(f"fig9/{key}/best"))
    fig.suptitle("Fig. 9: λ against the channel")
    return fig


def _lambda_speed(ctx: Context) -> Any:
    f = ctx.s["lambda_speed"]
    speeds = sorted(f["speed_kmh"].unique())
    fig, axes = common.figure(1, len(speeds), width=3.6 * len(speeds), height=3.6)
    for ax, v in zip(np.atleast_1d(axes), speeds, strict=True):
        _lambda_panel(ax, f[f["speed_kmh"] == v], f"{v:g} km/h, {ctx.plan.speed_rsrp:g} dBm", None)
    fig.suptitle("Fig. 10: λ against the speed")
    return fig


def _sens_x(value: str) -> float:
    """A sensitivity value as a number for ordering (``"10 s"`` → 10)."""
    try:
        return float(value.split()[0])
    except (ValueError, IndexError):
        return math.inf


def _sens_rows(s: pd.DataFrame, p: str, v: float, default: Any) -> pd.DataFrame:
    """The rows of parameter ``p`` at speed ``v`` with the default in its place."""
    rows = s[(s["speed_kmh"] == v) & s["parameter"].isin([p, "default"])].copy()
    rows["label"] = [
        f"{default:g} (default)"
        if x == "default" and isinstance(default, float)
        else (f"{default} (default)" if x == "default" else y)
        for x, y in zip(rows["parameter"], rows["value"], strict=True)
    ]
    rows["x"] = [
        (default if isinstance(default, float) else -math.inf) if x == "default" else _sens_x(y)
        for x, y in zip(rows["parameter"], rows["value"], strict=True)
    ]
    return rows.sort_values("x")


def _sensitivity(ctx: Context) -> Any:
    r = setup_numbers()["rwnd"]
    defaults = {
        "gamma_high": float(r["gamma_high"]),
        "rtt_multiple": float(r["rtt_multiple"]),
        "rm_window": r["rm_window_ns"] / 1e9,
        "mode": str(r["mode"]),
    }
    s = ctx.s["sensitivity"]
    params = [p for p in dict.fromkeys(s["parameter"]) if p != "default"]
    speeds = sorted(s["speed_kmh"].unique())
    fig, axes = common.figure(2, len(params), width=2.6 * len(params) + 1, height=5.4)
    axes = np.asarray(axes).reshape(2, len(params))
    for j, p in enumerate(params):
        for v in speeds:
            rows = _sens_rows(s, p, v, defaults.get(p, ""))
            xs = np.arange(len(rows))
            axes[0, j].errorbar(
                xs,
                rows["goodput_mbps"],
                yerr=np.nan_to_num(rows["ci95"]),
                capsize=2,
                marker="o",
                label=f"{v:g} km/h",
            )
            axes[1, j].plot(xs, rows["rtt_p95_ms"], marker="s", label=f"{v:g} km/h")
            for ax in axes[:, j]:
                ax.set_xticks(xs, list(rows["label"]), rotation=30)
        axes[0, j].set_title(p)
        axes[0, j].set_ylim(bottom=0)
        axes[1, j].set_ylim(bottom=0)
    axes[0, 0].set_ylabel("DL throughput (Mbit/s)")
    axes[1, 0].set_ylabel("RTT p95 (ms)")
    axes[0, 0].legend(loc="lower left")
    fig.suptitle(f"ARWND+ACWND's unstated parameters, one at a time (DL, {STATIC_RSRP:g} dBm)")
    return fig


def _windows_buffers(ctx: Context) -> Any:
    w, b = ctx.s["rwnd"], ctx.s["buffer"]
    fig, axes = common.figure(2, 2, width=9.0, height=6.0)
    for v in sorted(w["speed_kmh"].unique()):
        r = w[w["speed_kmh"] == v].sort_values("recv_buffer")
        labels = [size_label(int(x)) for x in r["recv_buffer"]]
        axes[0, 0].plot(labels, r["goodput_mbps"], marker="o", label=f"CUBIC, {v:g} km/h")
        axes[1, 0].plot(labels, r["rtt_p95_ms"], marker="o", label=f"CUBIC, {v:g} km/h")
    axes[0, 0].set_title("CUBIC's fixed receive window")
    for variant in (CUBIC, ADAPTIVE, CUBIC_6M):
        for v in sorted(b["speed_kmh"].unique()):
            r = b[(b["speed_kmh"] == v) & (b["variant"] == variant)].sort_values("buffer")
            labels = [size_label(int(x)) for x in r["buffer"]]
            kw = {"color": STYLE[variant]["color"], "linestyle": "-" if v == 0 else "--"}
            axes[0, 1].plot(
                labels, r["goodput_mbps"], marker="o", label=f"{variant}, {v:g} km/h", **kw
            )
            axes[1, 1].plot(labels, r["rtt_p95_ms"], marker="o", **kw)
    axes[0, 1].set_title("eNB per-user buffer")
    for ax in axes[0]:
        ax.set_ylabel("DL throughput (Mbit/s)")
        ax.set_ylim(bottom=0)
        ax.legend(loc="lower right", fontsize=6)
    for ax in axes[1]:
        ax.set_ylabel("RTT p95 (ms)")
        ax.set_yscale("log")
    return fig


def figures() -> list[FigureSpec]:
    return [
        FigureSpec("table1", _table1),
        FigureSpec("gain_rsrp", _gain_rsrp),
        FigureSpec("rtt_time", _rtt_time),
        FigureSpec("rtt_dist", _rtt_dist),
        FigureSpec("lambda_rsrp", _lambda_rsrp),
        FigureSpec("lambda_speed", _lambda_speed),
        FigureSpec("sensitivity", _sensitivity),
        FigureSpec("windows_buffers", _windows_buffers),
    ]
