"""Shared machinery of the paper reproductions (``vtlab reproduce``).

An experiment module declares its grids (:class:`Grid`: a base scenario, sweep axes,
the number of runs, whether traces are needed) and uses these helpers to

* run every grid through the sweep runner into one campaign folder
  (:class:`Campaign`: finished runs are stored as they complete, so an interrupted
  campaign resumes and a finished one re-renders without simulating);
* summarise the rows per grid point with 95 % confidence intervals over runs
  (:func:`summarize_runs`);
* draw figures in one consistent style and save each as PNG and SVG
  (:func:`figure`, :func:`save_figure`, :func:`plot_lines`, :func:`plot_bars`);
* write tables as CSV + Parquet (+ Markdown) (:func:`write_table`) and a report that
  puts the paper's published values beside vtlab's with relative differences
  (:class:`Comparison`, :func:`comparison_table`, :func:`md_table`).

Nothing here is specific to one paper.
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vtlab import _core
from vtlab.api import (
    FLOW_COLUMNS,
    LINK_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    TRACE_COLUMNS,
    Result,
    core_build,
)
from vtlab.scenario import Scenario, set_path
from vtlab.stats import summarize, t975
from vtlab.store import RunEntry, Store
from vtlab.sweep import MESSAGE_COUNT_COLUMNS, Axis, Sweep

__all__ = [
    "CAMPAIGN_LOG",
    "LARGE_DEVIATION",
    "PROFILES",
    "Campaign",
    "Comparison",
    "Config",
    "Grid",
    "Outcome",
    "comparison_frame",
    "comparison_table",
    "figure",
    "fmt",
    "fmt_ci",
    "fmt_rel",
    "label_mask",
    "md_table",
    "plot_bars",
    "plot_lines",
    "rel_diff",
    "save_figure",
    "style",
    "styles",
    "summarize_runs",
    "write_table",
]

#: Implementation profiles accepted by ``--profile``.
PROFILES: tuple[str, ...] = ("ns3", "linux", "ns2")

#: A relative difference beyond this (25 %) is a large deviation that the report
#: discusses.
LARGE_DEVIATION = 0.25

#: Name of the campaign log in the output folder (wall time of each session).
CAMPAIGN_LOG = "campaign.json"


# -- configuration and grids -----------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """How one ``vtlab reproduce`` invocation runs.

    Attributes:
        out: output folder (figures, tables, report; the run store is ``out/runs``).
        quick: the reduced CI version.
        runs: override of the number of runs per grid point (``None``: the
            experiment's own, e.g. the paper's 6).
        jobs: parallel runs, and figures drawn at once (in forked processes,
            :mod:`vtlab.forkmap`), as are the ISO 15118 study's rare-event
            estimates (``None``: one per core).
        scheduler: run on a Dask cluster: a connected ``distributed.Client`` or a
            scheduler address (``None``: threads of this process); see docs/cluster.md.
        task_runs: runs per cluster task (``None``: sized automatically).
        profile: TCP implementation profile of every run (``ns3`` or ``linux``).
        progress: show the sweep's progress bar (per run, with ETA) on a terminal.
        log: receives one-line status messages (``None``: silent).
        verb: the command that runs it: ``reproduce`` (a paper) or ``study`` (one of
            vtlab's own studies, whose runs option is ``--seeds``).
    """

    out: Path
    quick: bool = False
    runs: int | None = None
    jobs: int | None = None
    scheduler: Any = None
    task_runs: int | None = None
    profile: str = "ns3"
    progress: bool = True
    log: Callable[[str], None] | None = None
    verb: str = "reproduce"

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(
                f"--profile must be one of {', '.join(PROFILES)}, got {self.profile!r}"
            )
        if self.runs is not None and self.runs < 1:
            raise ValueError(f"--runs must be at least 1, got {self.runs}")
        if self.jobs is not None and self.jobs < 1:
            raise ValueError(f"--jobs must be at least 1, got {self.jobs}")

    def say(self, line: str) -> None:
        if self.log is not None:
            self.log(line)

    def command(self, experiment: str) -> str:
        """The command line that reproduces this configuration."""
        parts = ["vtlab", self.verb, experiment]
        if self.quick:
            parts.append("--quick")
        if self.profile != "ns3":
            parts += ["--profile", self.profile]
        if self.runs is not None:
            parts += ["--seeds" if self.verb == "study" else "--runs", str(self.runs)]
        return " ".join(parts)


@dataclass(frozen=True)
class Grid:
    """One sweep of an experiment.

    Attributes:
        name: short identifier (``"fig4"``), used in status lines and logs.
        title: what the grid is for.
        base: the scenario every point starts from (the campaign adds
            ``tcp.profile``).
        axes: the sweep axes (their names become result columns).
        runs: a fixed number of runs (seeds 1..runs), e.g. 1 for a trace figure;
            ``None`` uses the campaign's number of runs.
        trace: record sampled traces.
        messages: how the run store keeps the message rows of request/response
            sessions: ``"rows"`` or ``"counts"`` (:func:`vtlab.sweep.message_counts`).
    """

    name: str
    title: str
    base: Mapping[str, Any]
    axes: tuple[Axis, ...]
    runs: int | None = None
    trace: bool = False
    messages: str = "rows"

    def sweep(self, runs: int, profile: str) -> Sweep:
        base = Scenario(copy.deepcopy(dict(self.base)))
        set_path(base.spec, "tcp.profile", profile)
        n = self.runs if self.runs is not None else runs
        return Sweep(
            base, self.axes, seeds=range(1, n + 1), trace=self.trace, messages=self.messages
        )


@dataclass
class Outcome:
    """What a reproduction wrote and how long it took."""

    out: Path
    files: list[Path]
    wall_s: float
    simulated: int
    loaded: int
    campaign_wall_s: float
    findings: list[Any] = field(default_factory=list)
    #: The paper's numbers within ±10 % / ±25 % of vtlab's (:func:`within_counts`).
    paper_within: tuple[int, int, int] | None = None


# -- running ---------------------------------------------------------------------------


class Campaign:
    """Runs grids into the run store ``<out>/runs`` and keeps count.

    Every run is stored by the sweep runner as it finishes, keyed by scenario hash,
    seed and vtlab version; points already stored are loaded instead of simulated.
    Grids of one campaign share the store, so a point that two figures need (same
    resolved scenario and seed) runs once.
    """

    def __init__(self, config: Config, default_runs: int) -> None:
        self.config = config
        self.runs = config.runs if config.runs is not None else default_runs
        self.store = Path(config.out)
        self._opened: Store | None = None
        self.simulated = 0
        self.loaded = 0
        self.started = time.perf_counter()

    def run(self, grid: Grid) -> Result:
        """Run (or load) every point of ``grid``; returns all its rows."""
        sweep = grid.sweep(self.runs, self.config.profile)
        points = sweep.points()
        if self._opened is None:  # one store for every grid: each part is read once
            self._opened = Store.open(self.store, create=True).keep_parts()
        index = self._opened.index(lambda part, reason: None)
        stored = sum(
            1 for p in points if p.key in index and (index[p.key].traces or not grid.trace)
        )
        todo = len(points) - stored
        self.config.say(
            f"{grid.name}: {grid.title} — {len(points)} runs"
            + (f", {stored} from the store" if stored else "")
            + (f", simulating {todo}" if todo else "")
        )
        res = sweep.run(
            self._opened,
            jobs=self.config.jobs,
            progress=self.config.progress,
            scheduler=self.config.scheduler,
            task_runs=self.config.task_runs,
        )
        self.simulated += todo
        self.loaded += stored
        return relabel(res, points, [a.name for a in grid.axes])

    def stored_runs(self) -> int:
        """Number of runs committed to the store."""
        return count_stored_runs(self.store)


def relabel(res: Result, points: Sequence[Any], axes: Sequence[str]) -> Result:
    """Give every row the labels of *this* grid's point.

    A run loaded from the store carries the label columns of the sweep that first
    stored it, and grids that share a store share runs (Table 2's 100 MB column is
    Fig. 4's 5 % point). Labels are therefore rebuilt from (scenario hash, seed), and
    label columns of other grids are dropped.
    """
    by_run = {}
    for p in points:
        scenario_hash, seed = p.key.split("-")[:2]
        by_run[(scenario_hash, int(seed))] = p.label_dict

    def fix(frame: pd.DataFrame | None, *columns: Sequence[str]) -> pd.DataFrame | None:
        if frame is None:
            return None
        known = {c for cols in columns for c in cols}
        keep = [c for c in frame.columns if c in known]
        out = frame[keep].copy()
        keys = list(zip(out["scenario_hash"], map(int, out["seed"]), strict=True))
        missing = {k for k in keys if k not in by_run}
        if missing:
            raise RuntimeError(f"rows of runs outside the grid: {sorted(missing)[:3]}")
        for i, name in enumerate(axes):
            if name not in out.columns:  # a session column of the same name stays
                out.insert(i, name, [by_run[k][name] for k in keys])
        return out

    return Result(
        flows=fix(res.flows, FLOW_COLUMNS),
        links=fix(res.links, LINK_COLUMNS),
        traces=fix(res.traces, TRACE_COLUMNS),
        meta=res.meta,
        sessions=fix(res.sessions, SESSION_COLUMNS),
        messages=fix(res.messages, MESSAGE_COLUMNS, MESSAGE_COUNT_COLUMNS),
    )


def stored_index(store: str | os.PathLike[str]) -> dict[str, RunEntry]:
    """The runs committed to a campaign's store (none when it has no store yet); a
    damaged commit record is left for the sweep, which moves it aside."""
    if not (Path(store) / "store.json").exists():
        return {}
    return Store.open(store).index(lambda part, reason: None)


def count_stored_runs(store: str | os.PathLike[str]) -> int:
    """Runs committed to a campaign's store."""
    return len(stored_index(store))


def read_sessions(out: Path) -> list[dict[str, Any]]:
    """The sessions logged in ``out/campaign.json`` (empty if none)."""
    path = Path(out) / CAMPAIGN_LOG
    if not path.exists():
        return []
    try:
        return list(json.loads(path.read_text()).get("sessions", []))
    except (ValueError, AttributeError):
        return []


def record_session(out: Path, key: Mapping[str, Any], wall_s: float, simulated: int) -> float:
    """Append this session to ``out/campaign.json`` and return the campaign's wall
    time: the sum over recorded sessions with the same ``key`` that simulated runs
    (a session that only re-rendered adds nothing; an interrupted session is not
    recorded)."""
    path = Path(out) / CAMPAIGN_LOG
    sessions = read_sessions(out)
    sessions.append(
        {
            "finished": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
            "key": dict(key),
            "core_build": core_build(),
            "wall_s": round(wall_s, 3),
            "simulated_runs": simulated,
        }
    )
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({"sessions": sessions}, indent=1) + "\n")
    os.replace(tmp, path)
    mine = [s for s in sessions if s.get("key") == dict(key) and s.get("simulated_runs", 0) > 0]
    return float(sum(s["wall_s"] for s in mine)) if mine else wall_s


# -- statistics ------------------------------------------------------------------------


def label_mask(
    frame: pd.DataFrame,
    labels: Mapping[str, Any],
    close: Callable[[np.ndarray, float], np.ndarray] | None = None,
) -> np.ndarray:
    """Which rows of ``frame`` have every label: a list or tuple value is any of its
    items, a float compared by ``close`` (the column's values, the label) where
    given, anything else equal (a missing value never is). One mask over the
    columns' arrays, for the studies' lookups by label (hundreds a study: a frame
    filtered per label copied every column each time)."""
    mask = np.ones(len(frame), dtype=bool)
    for k, v in labels.items():
        col = frame[k]
        if isinstance(v, list | tuple):
            mask &= col.isin(list(v)).to_numpy(dtype=bool)
        elif close is not None and isinstance(v, float):
            mask &= close(col.to_numpy(dtype=float), v)
        else:
            mask &= (col == v).to_numpy(dtype=bool, na_value=False)
    return mask


def summarize_runs(
    frame: pd.DataFrame,
    by: Sequence[str],
    metric: str,
    *,
    scale: float = 1.0,
    flow_agg: str = "mean",
) -> pd.DataFrame:
    """Mean, sd and 95 % CI over runs of ``metric`` per ``by`` group.

    Flows of one run are first aggregated with ``flow_agg`` (``"mean"``: the
    per-vehicle average of a multi-vehicle run), so each run is one sample and the
    interval is over runs (seeds), not over correlated flows. Values are multiplied
    by ``scale`` (e.g. 1e-6 for Mbit/s). Columns: ``*by, n, mean, sd, ci95``.
    """
    by = list(by)
    per_run = frame.groupby([*by, "seed"], sort=False)[metric].agg(flow_agg).reset_index()
    per_run[metric] = per_run[metric].astype(float) * scale
    out = summarize(per_run, by=by, metrics=[metric])
    return out.drop(columns=["metric"])


def rel_diff(ours: float, paper: float) -> float:
    """(ours − paper) / paper; NaN when either is missing or the paper value is 0."""
    if ours is None or paper is None or not math.isfinite(ours) or not math.isfinite(paper):
        return math.nan
    if paper == 0:
        return math.nan
    return (ours - paper) / paper


#: The bands the reproductions count the paper's numbers in (±10 %, ±25 %).
WITHIN_BANDS = (0.10, LARGE_DEVIATION)


def within_counts(rows: Sequence[Comparison]) -> tuple[int, int, int]:
    """(numbers compared, within ±10 %, within ±25 %) of ``rows``: the comparisons
    with a finite relative difference, and those whose |difference| is at most each
    band of :data:`WITHIN_BANDS`."""
    rels = [abs(c.rel) for c in rows if math.isfinite(c.rel)]
    narrow, wide = WITHIN_BANDS
    return len(rels), sum(r <= narrow for r in rels), sum(r <= wide for r in rels)


def within_sentence(rows: Sequence[Comparison], scope: str = "") -> str:
    """ "Of the paper's N numbers compared<scope>, a are within ±10 % of vtlab's and b
    within ±25 %." (empty when none is compared)."""
    n, narrow, wide = within_counts(rows)
    if n == 0:
        return ""
    return (
        f"Of the paper's {n} numbers compared{scope}, {narrow} are within ±10 % of vtlab's "
        f"and {wide} within ±25 %.\n\n"
    )


# -- formatting ------------------------------------------------------------------------


def fmt(x: float | None, digits: int = 3) -> str:
    """A number for a table; ``–`` when missing."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}f}"


def fmt_ci(mean: float, ci: float, digits: int = 3) -> str:
    """``mean ± ci`` (``mean`` alone when the interval is undefined)."""
    if mean is None or not math.isfinite(mean):
        return "–"
    if ci is None or not math.isfinite(ci):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {ci:.{digits}f}"


def fmt_rel(r: float, flag: bool = True) -> str:
    """``+12.3 %``; bold when beyond :data:`LARGE_DEVIATION` (if ``flag``)."""
    if r is None or not math.isfinite(r):
        return "–"
    text = f"{r * 100:+.1f} %"
    return f"**{text}**" if flag and abs(r) > LARGE_DEVIATION else text


def md_table(
    headers: Sequence[str], rows: Iterable[Sequence[Any]], align: str | None = None
) -> str:
    """A GitHub-flavoured Markdown table; ``align`` has one of ``l``/``r``/``c`` per
    column (default: first column left, the others right)."""
    align = align or ("l" + "r" * (len(headers) - 1))
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = [
        "| " + " | ".join(str(h) for h in headers) + " |",
        "|" + "|".join(marks[a] for a in align) + "|",
    ]
    for row in rows:
        cells = [str(c).replace("|", "\\|").replace("\n", " ") for c in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# -- comparisons with the paper --------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """One published number beside vtlab's.

    ``ours``/``ci``/``n`` are vtlab's mean, 95 % half-width and number of runs;
    ``reference`` optionally holds a third value (e.g. ns-3.44 on the same setup).
    """

    section: str
    quantity: str
    paper: float
    ours: float
    ci: float = math.nan
    n: int = 0
    unit: str = "Mbit/s"
    sd: float = math.nan
    reference: float = math.nan
    note: str = ""

    @property
    def rel(self) -> float:
        return rel_diff(self.ours, self.paper)

    @property
    def large(self) -> bool:
        r = self.rel
        return math.isfinite(r) and abs(r) > LARGE_DEVIATION

    def within_noise(self, paper_runs: int) -> bool:
        """Whether the paper's value lies within the 95 % interval of the difference
        between vtlab's mean of ``n`` runs and a mean of ``paper_runs`` runs with the
        same run-to-run spread (``sd``): |ours − paper| ≤ t · sd · √(1/n + 1/paper_runs).
        False when the spread is unknown."""
        if not (math.isfinite(self.sd) and self.n >= 2 and paper_runs >= 1):
            return False
        dof = self.n + paper_runs - 2
        half = t975(dof) * self.sd * math.sqrt(1 / self.n + 1 / paper_runs)
        return abs(self.ours - self.paper) <= half


def comparison_frame(rows: Sequence[Comparison]) -> pd.DataFrame:
    """The comparisons as a tidy table (for CSV/Parquet)."""
    return pd.DataFrame(
        {
            "section": [c.section for c in rows],
            "quantity": [c.quantity for c in rows],
            "unit": [c.unit for c in rows],
            "paper": [c.paper for c in rows],
            "vtlab_mean": [c.ours for c in rows],
            "vtlab_ci95": [c.ci for c in rows],
            "vtlab_sd": [c.sd for c in rows],
            "vtlab_runs": [c.n for c in rows],
            "rel_diff": [c.rel for c in rows],
            "reference": [c.reference for c in rows],
            "note": [c.note for c in rows],
        }
    )


def comparison_table(
    rows: Sequence[Comparison], *, reference_label: str | None = None, digits: int = 3
) -> str:
    """Markdown: quantity | paper | vtlab (mean ± 95 % CI) | rel. difference [| ref]."""
    headers = ["quantity", "paper", "vtlab (mean ± 95 % CI)", "vtlab vs paper"]
    if reference_label:
        headers.append(reference_label)
    body = []
    for c in rows:
        unit = f" {c.unit}" if c.unit else ""
        row = [
            c.quantity + (f" ({c.note})" if c.note else ""),
            fmt(c.paper, digits) + unit,
            fmt_ci(c.ours, c.ci, digits),
            fmt_rel(c.rel),
        ]
        if reference_label:
            row.append(fmt(c.reference, digits))
        body.append(row)
    return md_table(headers, body)


# -- tables ----------------------------------------------------------------------------


def write_table(
    frame: pd.DataFrame, out: Path, stem: str, markdown: str | None = None
) -> list[Path]:
    """Write ``frame`` as ``<stem>.csv`` and ``<stem>.parquet`` (and ``markdown`` as
    ``<stem>.md``); returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}.csv", out / f"{stem}.parquet"]
    frame.to_csv(paths[0], index=False)
    frame.to_parquet(paths[1], index=False)
    if markdown is not None:
        paths.append(out / f"{stem}.md")
        paths[-1].write_text(markdown)
    return paths


# -- figures ---------------------------------------------------------------------------

#: Colours in a fixed order (matplotlib's tab10, then three more), so that a label
#: keeps its colour in every figure of an experiment.
_COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#000000",
    "#b8860b",
    "#008080",
)
_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "<", ">", "*", "h", "p", "d")

_RC = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.4,
    "lines.markersize": 4.5,
    "savefig.dpi": 150,
    "svg.hashsalt": "vtlab",
    "svg.fonttype": "none",
}


def style() -> Any:
    """A context manager applying the house style (rcParams) to figures drawn in it."""
    import matplotlib

    return matplotlib.rc_context(_RC)


def styles(labels: Sequence[str]) -> dict[str, dict[str, Any]]:
    """A fixed style (colour, marker) per label, in the given order."""
    return {
        label: {"color": _COLORS[i % len(_COLORS)], "marker": _MARKERS[i % len(_MARKERS)]}
        for i, label in enumerate(labels)
    }


def figure(nrows: int = 1, ncols: int = 1, *, width: float = 6.4, height: float = 4.0):
    """A new figure and its axes (an array when there are several) in the house style.

    Uses :class:`matplotlib.figure.Figure` directly (no pyplot state, no GUI backend).
    """
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(width, height), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=True)
    return fig, axes


def save_figure(fig: Any, out: Path, stem: str) -> list[Path]:
    """Save ``fig`` as ``<stem>.png`` and ``<stem>.svg`` (reproducible: no dates)."""
    import matplotlib

    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    with matplotlib.rc_context(_RC):
        fig.savefig(paths[0], metadata={"Software": None})
        fig.savefig(paths[1], metadata={"Date": None, "Creator": None})
    return paths


def plot_lines(
    ax: Any,
    summary: pd.DataFrame,
    *,
    x: str,
    hue: str,
    order: Sequence[str],
    style: Mapping[str, Mapping[str, Any]],
    x_scale: float = 1.0,
    y: str = "mean",
    err: str | None = "ci95",
) -> None:
    """One line per ``hue`` level (in ``order``) of ``y`` against ``x``, with error
    bars ``err`` (the 95 % CI half-width) when given."""
    import matplotlib

    top, peak = 0.0, 0.0
    with matplotlib.rc_context(_RC):
        for label in order:
            rows = summary[summary[hue] == label].sort_values(x)
            if rows.empty:
                continue
            xs = rows[x].to_numpy(dtype=float) * x_scale
            ys = rows[y].to_numpy(dtype=float)
            yerr = None
            if err is not None:
                yerr = np.nan_to_num(rows[err].to_numpy(dtype=float), nan=0.0)
            ax.errorbar(xs, ys, yerr=yerr, label=label, capsize=2, **style.get(label, {}))
            top = max(top, float(np.nanmax(ys + (yerr if yerr is not None else 0.0))))
            peak = max(peak, float(np.nanmax(ys)))
        if peak > 0:
            # Keep every mean readable: error bars of very uncertain points are cut.
            ax.set_ylim(0, min(top, 1.3 * peak) * 1.05)


def plot_bars(
    ax: Any,
    categories: Sequence[str],
    series: Mapping[str, Sequence[float]],
    *,
    errors: Mapping[str, Sequence[float]] | None = None,
    colors: Mapping[str, str] | None = None,
    hatches: Mapping[str, str] | None = None,
) -> None:
    """Grouped bars: one group per category, one bar per series."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        n = max(1, len(series))
        width = 0.8 / n
        xs = np.arange(len(categories), dtype=float)
        for i, (label, values) in enumerate(series.items()):
            yerr = None
            heights = np.asarray(values, dtype=float)
            if errors is not None and label in errors:
                err = np.nan_to_num(np.asarray(errors[label], dtype=float), nan=0.0)
                # Counts cannot be negative: the lower bar stops at zero.
                yerr = np.vstack([np.minimum(err, np.nan_to_num(heights)), err])
            ax.bar(
                xs + (i - (n - 1) / 2) * width,
                heights,
                width,
                yerr=yerr,
                capsize=2,
                label=label,
                color=(colors or {}).get(label),
                hatch=(hatches or {}).get(label),
                edgecolor="black",
                linewidth=0.4,
            )
        ax.set_xticks(xs, list(categories))


def version() -> str:
    """The vtlab version the runs are made with."""
    return _core.version()


def run_campaign(
    config: Config, name: str, run_all: Callable[[Config], tuple[Any, Any, Campaign]]
) -> tuple[float, Path, Any, Any, Campaign, float]:
    """The common start of every reproduction: create the output folder, run (or
    reload) the campaign, and log the session before rendering, so a failure while
    drawing never loses the time spent. Returns (start time, output folder, plan,
    data, campaign, campaign wall time)."""
    started = time.perf_counter()
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    plan, data, campaign = run_all(config)
    key = {
        "experiment": name,
        "quick": config.quick,
        "profile": config.profile,
        "runs": campaign.runs,
        "version": version(),
    }
    campaign_wall = record_session(out, key, time.perf_counter() - started, campaign.simulated)
    config.say("rendering figures, tables and report")
    return started, out, plan, data, campaign, campaign_wall


def minutes(seconds: float) -> str:
    """``"7 min 05 s"``-style rendering of a duration."""
    m, sec = divmod(int(round(seconds)), 60)
    return f"{m} min {sec:02d} s"


def session_rows(
    campaign_wall_s: float, wall_s: float, simulated: int, loaded: int
) -> list[list[str]]:
    """The rows every report's setup table ends with: campaign and invocation wall
    times and the generation time."""
    return [
        [
            "campaign wall time",
            f"{campaign_wall_s:.1f} s ({minutes(campaign_wall_s)}), summed over the "
            "sessions that simulated runs of this configuration",
        ],
        [
            "this invocation",
            f"{wall_s:.1f} s: {simulated} runs simulated, {loaded} loaded from the store",
        ],
        ["generated", _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")],
    ]
