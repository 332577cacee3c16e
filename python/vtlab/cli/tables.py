"""The summary tables of ``vtlab run`` and ``vtlab sweep`` as data: which columns
(chosen by relevance, all-zero counts left out unless ``--columns`` asks), their
short headers and legend, the cells (mean ± 95 % CI; a single run: the value), the
``done`` column's reasons, and the CSV and Markdown forms. :mod:`vtlab.cli.display`
prints the terminal form.

pandas-backed statistics are imported by the functions that need them.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vtlab.errors import CliError

__all__ = [
    "FLOW_METRICS",
    "FORMATS",
    "SESSION_METRICS",
    "Metric",
    "Summary",
    "aggregate_lines",
    "cell",
    "choose_metrics",
    "output_format",
    "summary_of",
    "to_csv",
    "to_markdown",
]

#: The values of ``--format``.
FORMATS = ("table", "csv", "markdown", "json")


@dataclass(frozen=True)
class Metric:
    """One summarised column: its name in the result table, its short header, what
    the legend says, the scale and decimals of its cells (None: a count, 0 decimals
    for one run, 1 for a mean), and whether it is shown by default."""

    column: str
    short: str
    legend: str
    scale: float = 1.0
    digits: int | None = None
    default: bool = True
    always: bool = False  #: shown by default even when every value is zero


FLOW_METRICS: tuple[Metric, ...] = (
    Metric("goodput_bps", "goodput", "Mbit/s", 1e-6, 3, always=True),
    Metric("completion_s", "compl.", "completion time, s", 1.0, 2, always=True),
    Metric("retransmissions", "retx", "retransmitted segments"),
    Metric("rto_count", "RTO", "retransmission timeouts"),
    Metric("fast_recoveries", "FR", "fast recoveries", default=False),
    Metric("drops_link_error", "lerr", "link-error drops"),
    Metric("drops_queue", "qdrop", "queue drops"),
    Metric("drops_aqm", "aqm", "AQM drops"),
)

SESSION_METRICS: tuple[Metric, ...] = (
    Metric("completed", "ok", "fraction completed", 1.0, 2, always=True),
    Metric("deadline_misses", "misses", "responses past their deadline"),
    Metric("loop_p99_s", "p99 ms", "charging loop p99 response time, ms", 1e3, 2, always=True),
    Metric("time_to_energy_s", "energy s", "time to energy transfer, s", 1.0, 3, always=True),
)


@dataclass
class Row:
    """One group: its key values, runs done out of runs, the reasons of the others,
    and (mean, ci95, n) per metric column."""

    key: tuple[str, ...]
    done: int
    count: int
    reasons: Counter[str] = field(default_factory=Counter)
    stats: dict[str, tuple[float, float, int]] = field(default_factory=dict)


@dataclass
class Summary:
    """A summary table: ``keys`` (group columns), the shown ``metrics`` (and ``every``
    metric, for CSV), the rows and the number of runs."""

    keys: list[str]
    metrics: list[Metric]
    every: list[Metric]
    rows: list[Row]
    runs: int
    aggregates: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        if self.runs == 1:
            return "vtlab: 1 run"
        return f"vtlab: mean ± 95 % CI over {self.runs} runs"

    def legend(self) -> str:
        """What the short headers mean (the shown ones only)."""
        return " · ".join(f"{m.short}: {m.legend}" for m in self.metrics)

    def notes(self) -> list[str]:
        """The aggregate lines, then one line per group with runs not done: why they
        ended."""
        lines = list(self.aggregates)
        for row in self.rows:
            if row.done < row.count:
                why = ", ".join(f"{n} {reason}" for reason, n in row.reasons.most_common())
                lines.append(f"not done: {' '.join(row.key)}: {why}")
        return lines

    def header(self) -> list[str]:
        return [*self.keys, "done", *(m.short for m in self.metrics)]

    def cells(self, row: Row) -> list[str]:
        return [
            *row.key,
            f"{row.done}/{row.count}",
            *(cell(m, *row.stats[m.column]) for m in self.metrics),
        ]


def output_format(fmt: str, json_out: bool = False) -> str:
    """The checked ``--format`` (``--json`` is ``--format json``). Raises
    :class:`CliError` naming ``--format``."""
    fmt = fmt.strip().lower()
    if fmt not in FORMATS:
        raise CliError("--format", f"'{fmt}' is not one of {', '.join(FORMATS)}")
    if json_out and fmt not in ("table", "json"):
        raise CliError("--format", f"{fmt} contradicts --json (which is --format json)")
    return "json" if json_out else fmt


def cell(metric: Metric, mean: float, ci: float, n: int) -> str:
    """``mean ±ci`` scaled, the interval to two significant digits and the mean to the
    same decimal place (never more than the metric's digits; counts at most 1); a
    single value (n ≤ 1) without an interval, at the metric's digits."""
    mean, ci = mean * metric.scale, ci * metric.scale
    if not math.isfinite(mean):
        return "–" if math.isnan(mean) else f"{mean}"
    most = metric.digits if metric.digits is not None else 1
    if n <= 1 or not math.isfinite(ci):
        single = metric.digits if metric.digits is not None else 0
        return f"{mean:.{single}f}"
    places = most if ci <= 0 else min(most, max(0, 1 - math.floor(math.log10(ci))))
    return f"{mean:.{places}f} ±{ci:.{places}f}"


def choose_metrics(
    frame: Any, catalogue: Sequence[Metric], columns: Sequence[str] | None
) -> list[Metric]:
    """The metrics to show: ``columns`` (result-table names or short headers, comma
    lists allowed) as given, else the default ones whose values are not all zero.
    Raises :class:`CliError` naming ``--columns`` for an unknown name."""
    if columns:
        names = [c.strip() for text in columns for c in text.split(",") if c.strip()]
        by_name = {m.column: m for m in catalogue} | {m.short: m for m in catalogue}
        unknown = [n for n in names if n not in by_name]
        if unknown:
            allowed = ", ".join(m.column for m in catalogue)
            raise CliError("--columns", f"unknown column '{unknown[0]}' (allowed: {allowed})")
        return list(dict.fromkeys(by_name[n] for n in names))
    shown = []
    for m in catalogue:
        values = frame[m.column] if m.column in frame.columns else None
        if m.always or (m.default and values is not None and (values.fillna(0) != 0).any()):
            shown.append(m)
    return shown


def summary_of(
    frame: Any,
    by: Sequence[str],
    catalogue: Sequence[Metric],
    runs: int,
    columns: Sequence[str] | None = None,
) -> Summary:
    """The summary of ``frame`` (flows or sessions) per ``by`` group."""
    from vtlab.stats import summarize

    by = list(by)
    every = [m for m in catalogue if m.column in frame.columns]
    stats = summarize(frame, by=by, metrics=[m.column for m in every])
    rows: dict[tuple[str, ...], Row] = {}
    for key, group in frame.groupby(by, sort=False, dropna=False):
        key = tuple(str(k) for k in (key if isinstance(key, tuple) else (key,)))
        done = group["completed"].astype(bool)
        reasons = Counter(str(r) or "unknown" for r in group.loc[~done, "abort_reason"])
        rows[key] = Row(key, int(done.sum()), len(group), reasons)
    for key, group in stats.groupby(by, sort=False, dropna=False):
        key = tuple(str(k) for k in (key if isinstance(key, tuple) else (key,)))
        for rec in group.itertuples():
            rows[key].stats[str(rec.metric)] = (float(rec.mean), float(rec.ci95), int(rec.n))
    shown = choose_metrics(frame, every, columns)
    aggregates = aggregate_lines(frame, by) if catalogue is FLOW_METRICS else []
    return Summary(by, shown, every, list(rows.values()), runs, aggregates)


#: The flows of a request/response session (``<session>/requests``, ``/responses``):
#: not part of the aggregate of the bulk transfers.
SESSION_FLOWS = ("/requests", "/responses")
_AGGREGATE = Metric("total", "aggregate", "Mbit/s", 1e-6, 3)
_JAIN = Metric("jain", "Jain", "Jain's fairness index", 1.0, 3)


def _jain(goodputs: Any) -> float:
    from vtlab.stats import jain_index

    return jain_index(goodputs) if (goodputs > 0).any() else math.nan


def aggregate_lines(frame: Any, by: Sequence[str]) -> list[str]:
    """Per group of the keys other than ``flow`` with two or more bulk flows (a
    charging station): their total goodput per run and Jain's fairness index of
    their goodputs per run, mean ± 95 % CI over the runs."""
    from vtlab.stats import summarize

    if "flow" not in by:
        return []
    bulk = frame[~frame["flow"].astype(str).str.endswith(SESSION_FLOWS)]
    keys = [k for k in by if k != "flow"]
    groups = bulk.groupby(keys, sort=False, dropna=False) if keys else [((), bulk)]
    lines = []
    for key, group in groups:
        flows = group["flow"].nunique()
        if flows < 2:
            continue
        per_run = group.groupby("seed")["goodput_bps"].agg(total="sum", jain=_jain)
        stats = summarize(per_run, by=[], metrics=["total", "jain"]).set_index("metric")
        total, jain = (stats.loc[m.column] for m in (_AGGREGATE, _JAIN))
        label = " ".join(str(k) for k in (key if isinstance(key, tuple) else (key,)))
        lines.append(
            f"{label + ', ' if label else ''}all {flows} flows: aggregate goodput "
            f"{cell(_AGGREGATE, total['mean'], total['ci95'], int(total['n']))} Mbit/s · "
            f"Jain's index {cell(_JAIN, jain['mean'], jain['ci95'], int(jain['n']))}"
        )
    return lines


def to_markdown(summary: Summary) -> str:
    """The table as Markdown (the shown columns), its legend and notes below."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    header = summary.header()
    right = ["---"] * len(summary.keys) + ["---:"] * (len(header) - len(summary.keys))
    out = [line(header), line(right), *(line(summary.cells(r)) for r in summary.rows)]
    out += ["", f"{summary.title}. {summary.legend()}."]
    out += [f"{n}." for n in summary.notes()]
    return "\n".join(out) + "\n"


def _number(value: float) -> str:
    """A CSV number: shortest round-trip text; empty for NaN."""
    return "" if math.isnan(value) else repr(value)


def to_csv(summary: Summary) -> str:
    """Every metric (shown or not) in base units: ``<column>_mean``, ``_ci95`` and
    ``_n`` per group, with the runs done and the reasons of the others."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    names = [f"{m.column}_{s}" for m in summary.every for s in ("mean", "ci95", "n")]
    writer.writerow([*summary.keys, "runs", "done", "not_done_reasons", *names])
    for row in summary.rows:
        values: list[Any] = []
        for m in summary.every:
            mean, ci, n = row.stats[m.column]
            values += [_number(mean), _number(ci), n]
        reasons = ";".join(f"{reason}={n}" for reason, n in row.reasons.most_common())
        writer.writerow([*row.key, row.count, row.done, reasons, *values])
    return buf.getvalue()
