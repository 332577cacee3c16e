"""Quick looks at results: TCP state over time from a trace or events table, and a
metric against a sweep axis with 95 % confidence intervals. Used by ``vtlab plot``
and :meth:`vtlab.Result.plot`; matplotlib is imported only here, when a figure is
drawn (figures are made without pyplot, so no window opens).

Every function returns the plotted data as a pandas DataFrame beside the figure, so
what a figure shows can be checked or reused.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from vtlab.errors import CliError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "FORMATS",
    "METRICS",
    "Plot",
    "PlotError",
    "axis_plot",
    "read_table",
    "save",
    "time_plot",
]

#: The largest file read (the default output budget of a run, docs/reliability.md):
#: its table is held in memory whole.
MAX_FILE_BYTES = 1 << 30

#: Figure formats, by the output file's ending.
FORMATS = (".png", ".svg", ".pdf")

#: Time-series metrics: (trace column, events column, axis label).
METRICS: dict[str, tuple[str | None, str | None, str]] = {
    "cwnd": ("cwnd_bytes", "cwnd_bytes", "cwnd (bytes)"),
    "ssthresh": ("ssthresh_bytes", "ssthresh_bytes", "ssthresh (bytes)"),
    "rtt": ("srtt_s", None, "smoothed RTT (s)"),
    "seq": ("snd_max", "seq", "sequence (byte offset)"),
}


class PlotError(CliError):
    """Bad input for a plot: ``field`` as the user wrote it, and the problem (a
    :class:`ValueError`; ``vtlab plot`` prints it as one ``error:`` line)."""


class Plot(NamedTuple):
    """A figure and the data it shows."""

    figure: Figure
    data: pd.DataFrame


def read_table(path: str | os.PathLike[str], field: str = "FILE") -> pd.DataFrame:
    """A ``.parquet`` or ``.csv`` table (a trace, events or flows file)."""
    import pandas as pd

    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".parquet", ".csv"):
        raise PlotError(field, f"{p.name}: not a table; allowed endings: .parquet, .csv")
    if not p.is_file():
        raise PlotError(field, f"{p}: no such file")
    size = p.stat().st_size
    if size > MAX_FILE_BYTES:
        raise PlotError(field, f"{p}: {size:,} bytes; at most {MAX_FILE_BYTES:,} (1 GiB)")
    try:
        return pd.read_parquet(p) if suffix == ".parquet" else pd.read_csv(p)
    except (OSError, ValueError) as e:
        raise PlotError(field, f"{p}: unreadable ({type(e).__name__})") from None


def _kind(frame: pd.DataFrame) -> str:
    if {"cwnd_bytes", "srtt_s"} <= set(frame.columns):
        return "trace"
    if {"event", "cwnd_bytes"} <= set(frame.columns):
        return "events"
    return "table"


def _series(frame: pd.DataFrame, metric: str, kind: str) -> pd.DataFrame:
    import pandas as pd

    if metric not in METRICS:
        raise PlotError("--metric", f"{metric}: unknown; allowed: {', '.join(METRICS)}")
    column = METRICS[metric][0 if kind == "trace" else 1]
    if column is None:
        allowed = [m for m, c in METRICS.items() if c[1] is not None]
        problem = f"{metric}: not in an events file; allowed: {', '.join(allowed)}"
        raise PlotError("--metric", problem)
    rows = frame
    if kind == "events":  # sequence numbers of retransmissions and drops only
        kinds = ("retransmit", "drop") if metric == "seq" else ("window", "state")
        rows = frame[frame["event"].isin(kinds)]
    values = rows[column].astype(float)
    finite = values.map(math.isfinite)  # ssthresh is infinite until the first loss
    return pd.DataFrame(
        {
            "seed": rows["seed"][finite],
            "flow": rows["flow"][finite].astype(str),
            "metric": metric,
            "time_s": rows["time_s"][finite].astype(float),
            "value": values[finite],
        }
    )


def time_plot(
    frame: pd.DataFrame, metrics: Sequence[str] = ("cwnd", "ssthresh"), flows: Sequence[str] = ()
) -> Plot:
    """``metrics`` over time, one panel each and one line per (seed, flow), from a
    trace (``TRACE_COLUMNS``) or events (``EVENT_COLUMNS``) table; ``flows`` keeps
    only those flows."""
    import pandas as pd
    from matplotlib.figure import Figure

    kind = _kind(frame)
    if kind == "table":
        raise PlotError("FILE", "not a trace or events table (no cwnd_bytes column)")
    if flows:
        unknown = sorted(set(flows) - set(frame["flow"].astype(str)))
        if unknown:
            known = ", ".join(sorted(set(frame["flow"].astype(str))))
            raise PlotError("--flow", f"{unknown[0]}: not in the file; flows: {known}")
        frame = frame[frame["flow"].astype(str).isin(flows)]
    data = pd.concat([_series(frame, m, kind) for m in metrics], ignore_index=True)
    fig = Figure(figsize=(7, 2.2 * len(metrics) + 0.6), layout="constrained")
    axes = fig.subplots(len(metrics), 1, sharex=True, squeeze=False)[:, 0]
    for ax, metric in zip(axes, metrics, strict=True):
        part = data[data["metric"] == metric]
        for (seed, flow), line in part.groupby(["seed", "flow"], sort=True):
            ax.step(line["time_s"], line["value"], where="post", label=f"{flow} seed {seed}")
        ax.set_ylabel(METRICS[metric][2])
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time (s)")
    if data.groupby(["seed", "flow"]).ngroups > 1:
        axes[0].legend(fontsize="small")
    return Plot(fig, data)


def axis_plot(frame: pd.DataFrame, axis: str, metric: str) -> Plot:
    """Mean of ``metric`` per value of the sweep axis ``axis`` (in the order of the
    rows) with 95 % confidence intervals (Student's t over the rows of each value,
    :func:`vtlab.stats.ci95_halfwidth`), from a flows table whose rows carry the axis
    as a column (``vtlab sweep --out``)."""
    import pandas as pd
    from matplotlib.figure import Figure

    from vtlab.stats import ci95_halfwidth

    for field, name in (("--x", axis), ("--y", metric)):
        if name not in frame.columns:
            raise PlotError(field, f"{name}: not a column of the file")
    if not pd.api.types.is_numeric_dtype(frame[metric]):
        raise PlotError("--y", f"{metric}: not a numeric column")
    rows = []
    for x, group in frame.groupby(axis, sort=False):  # the sweep's axis order
        values = group[metric].astype(float)
        n = int(values.count())
        sd = float(values.std(ddof=1)) if n > 1 else math.nan
        half = ci95_halfwidth(sd, n) if n > 1 else math.nan
        rows.append({axis: x, "mean": float(values.mean()), "ci95": half, "n": n})
    data = pd.DataFrame(rows)
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.subplots()
    xs = list(range(len(data))) if data[axis].dtype == object else data[axis]
    ax.errorbar(xs, data["mean"], yerr=data["ci95"].fillna(0.0), marker="o", capsize=3)
    if data[axis].dtype == object:
        ax.set_xticks(xs, [str(v) for v in data[axis]])
    ax.set_xlabel(axis)
    ax.set_ylabel(f"{metric} (mean, 95 % CI)")
    ax.grid(alpha=0.3)
    return Plot(fig, data)


def save(fig: Figure, path: str | os.PathLike[str], field: str = "--out") -> Path:
    """Write ``fig`` as PNG, SVG or PDF, by the file's ending."""
    p = Path(path)
    if p.suffix.lower() not in FORMATS:
        raise PlotError(field, f"{p.name}: allowed endings: {', '.join(FORMATS)}")
    fig.savefig(p, format=p.suffix.lower()[1:], dpi=120)
    return p
