"""ISO 15118-2 over a lossy charging cable: the figures — survival of a session
against the loss rate (one panel per congestion control, one colour per stack, one
line style per burst size, Wilson 95 % intervals), the CurrentDemand response-time
tail against the loss rate (p99.9 pooled over the seeds, the 250 ms deadline
drawn), and the station's survival."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from vtlab.experiments import common
from vtlab.experiments.iso15118.analysis import LOOP
from vtlab.experiments.iso15118.plan import BURSTS, STACKS, SURVIVAL_TARGET
from vtlab.experiments.pipeline import Context, FigureSpec

STYLE = common.styles(list(STACKS))
LINESTYLES = dict(zip(BURSTS, ("-", "--", ":"), strict=True))
#: V2G_EVCC_Msg_Timeout of CurrentDemand (spec/session.rs), seconds.
DEADLINE_S = 0.25


def _panels(n: int) -> tuple[Any, np.ndarray]:
    cols = min(n, 2)
    rows = (n + cols - 1) // cols
    fig, axes = common.figure(rows, cols, width=4.2 * cols, height=3.2 * rows + 0.4)
    return fig, np.atleast_1d(np.asarray(axes)).ravel()


def _lines(ax: Any, frame: pd.DataFrame, y: str, err: tuple[str, str] | None) -> None:
    """One line per (stack, burst) of ``y`` against the loss rate, the grid's loss
    rates evenly spaced (most of them are below 1 %)."""
    losses = sorted(frame["loss"].unique())
    position = {loss: i for i, loss in enumerate(losses)}
    for stack in STACKS:
        for burst, ls in LINESTYLES.items():
            rows = frame[(frame["stack"] == stack) & (frame["burst"] == burst)]
            if rows.empty:
                continue
            rows = rows.sort_values("loss")
            xs = np.array([position[x] for x in rows["loss"]], dtype=float)
            ys = rows[y].to_numpy(dtype=float)
            yerr = None
            if err is not None:
                lo = ys - rows[err[0]].to_numpy(dtype=float)
                hi = rows[err[1]].to_numpy(dtype=float) - ys
                # Rounding can put a Wilson bound a hair beyond the point
                # estimate at 0 or 1 (matplotlib refuses negative error bars).
                yerr = np.clip(np.vstack([np.nan_to_num(lo), np.nan_to_num(hi)]), 0.0, None)
            ax.errorbar(
                xs,
                ys,
                yerr=yerr,
                capsize=2,
                linestyle=ls,
                label=f"{stack}, burst {burst}",
                **STYLE[stack],
            )
    ax.set_xticks(range(len(losses)), [f"{x * 100:g}" for x in losses])
    ax.set_xlabel("mean PLC loss, each direction (%)")


def _survival(frame: pd.DataFrame, title: str, what: str) -> Any:
    ccs = list(dict.fromkeys(frame["algorithm"]))
    fig, axes = _panels(len(ccs))
    for ax, cc in zip(axes, ccs, strict=False):
        _lines(ax, frame[frame["algorithm"] == cc], "survival", ("wilson_lo", "wilson_hi"))
        ax.axhline(SURVIVAL_TARGET, color="#888888", linewidth=0.8, linestyle="--")
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(cc)
        ax.set_ylabel(what)
    for ax in axes[len(ccs) :]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3)
    fig.suptitle(title)
    return fig


def survival_figure(ctx: Context) -> Any:
    frame = ctx.s["cells"]
    if frame.empty:
        return None
    minutes = ctx.plan.duration_s / 60
    return _survival(
        frame,
        f"A {minutes:g}-minute ISO 15118-2 DC session: survival (Wilson 95 %); "
        f"dashed grey: {SURVIVAL_TARGET:g}",
        "P(session completes)",
    )


def tail_figure(ctx: Context) -> Any:
    frame = ctx.s["cells"]
    frame = frame[np.isfinite(frame["p99.9_s"].astype(float))]
    if frame.empty:
        return None
    ccs = list(dict.fromkeys(frame["algorithm"]))
    fig, axes = _panels(len(ccs))
    shown = frame.assign(p999_ms=frame["p99.9_s"].astype(float) * 1e3)
    for ax, cc in zip(axes, ccs, strict=False):
        _lines(ax, shown[shown["algorithm"] == cc], "p999_ms", None)
        ax.axhline(DEADLINE_S * 1e3, color="#d62728", linewidth=0.8, linestyle="--")
        ax.set_yscale("log")
        ax.set_title(cc)
        ax.set_ylabel(f"{LOOP} p99.9 (ms)")
    for ax in axes[len(ccs) :]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3)
    fig.suptitle(
        f"{LOOP} response time, p99.9 over the answered exchanges of every seed; "
        f"red: the {DEADLINE_S * 1e3:g} ms deadline"
    )
    return fig


def station_figure(ctx: Context) -> Any:
    frame = ctx.s.get("station")
    if frame is None or frame.empty:
        return None
    return _survival(
        frame,
        f"{ctx.plan.station_vehicles} vehicles beside bulk transfers: survival per "
        "session (Wilson 95 %, sessions pooled)",
        "P(session completes)",
    )


def figures() -> list[FigureSpec]:
    return [
        FigureSpec("survival", survival_figure),
        FigureSpec("currentdemand_tail", tail_figure),
        FigureSpec("station_survival", station_figure),
    ]
