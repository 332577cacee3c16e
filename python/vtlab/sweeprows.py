"""The rows of a sweep's runs: labelled with their points' axis values, built a chunk of
runs at a time (:func:`chunk_result`), and gathered in the points' order without
holding one pandas frame per run (:class:`Gather`).
Used by :mod:`vtlab.sweep`; knows points only by their ``key`` and ``labels``."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from vtlab.api import (
    EVENT_COLUMNS,
    FLOW_COLUMNS,
    LINK_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    TRACE_COLUMNS,
    Result,
    table_order,
)
from vtlab.runstore import MESSAGE_COUNT_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "COMPACT_BATCH",
    "LABELLED",
    "Gather",
    "add_labels",
    "chunk_result",
    "label_rows",
    "labels_of_one_kind",
    "message_counts",
    "raw_message_counts",
    "strip_labels",
]

#: The tables whose rows carry the axis labels.
LABELLED = ("flows", "links", "sessions", "messages", "traces", "events")


class Labelled(Protocol):
    """A sweep point as these functions see it (:class:`vtlab.sweep.Point`)."""

    @property
    def key(self) -> str: ...

    @property
    def labels(self) -> Sequence[tuple[str, Any]]: ...


#: Runs whose results are concatenated into one (see :class:`Gather`).
COMPACT_BATCH = 1000


class Gather:
    """The results of a sweep's runs, in the order of its points.

    A pandas DataFrame costs tens of kilobytes however few its rows, so 100 000 runs
    held as separate results take gigabytes. The results are therefore concatenated
    every :data:`COMPACT_BATCH` runs as they arrive (from the store or the
    simulations, in any order) and put in the points' order at the end (every point
    is a run of its own: :meth:`Sweep.points` refuses two that are one scenario, and
    the seeds are distinct). With ``keep=False`` nothing is held.
    """

    def __init__(self, points: Sequence[Labelled], keep: bool = True) -> None:
        self.keep = keep
        self.position: dict[tuple[str, int], int] = {}
        for i, p in enumerate(points):
            scenario_hash, seed = p.key.split("-")[:2]
            self.position[(scenario_hash, int(seed))] = i
        self.lock = threading.Lock()
        self.pending: list[Result] = []
        self.chunks: list[Result] = []
        self.ordered = True

    def add(self, res: Result, *, ordered: bool = True) -> None:
        """Hold ``res``; ``ordered=False`` for rows of several runs in no set order."""
        if not self.keep:
            return
        with self.lock:
            self.ordered = self.ordered and ordered
            self.pending.append(res)
            if len(self.pending) >= COMPACT_BATCH:
                self.chunks.append(Result.concat(self.pending).compacted())
                self.pending = []

    def result(self) -> Result | None:
        if not self.keep:
            return None
        parts = [*self.chunks, *self.pending]
        if len(parts) == 1 and self.ordered:
            return parts[0]
        spans = [s for s in map(self._span, parts) if s is not None] if self.ordered else []
        if len(spans) == len(parts):
            order = sorted(range(len(parts)), key=lambda i: spans[i])
            if all(spans[a][1] < spans[b][0] for a, b in itertools.pairwise(order)):
                # Consecutive points each, not overlapping (the chunks of a sweep):
                # in the order of their first points, their rows are in the points'
                # order already, without sorting every row.
                return Result.concat([parts[i] for i in order]).compacted()
        return Result.concat(parts).compacted().reordered(self.position)

    def _span(self, res: Result) -> tuple[int, int] | None:
        """The positions of the first and last run of ``res`` where its runs are
        consecutive points in their order (rows in the runs' order), else ``None``."""
        runs = res.meta.get("runs", [res.meta])
        at = [self.position.get((m.get("scenario_hash"), int(m.get("seed", -1)))) for m in runs]
        if not at or at[0] is None or at != list(range(at[0], at[0] + len(at))):
            return None
        return at[0], at[-1]


def message_counts(messages: pd.DataFrame) -> pd.DataFrame:
    """The message rows of runs reduced to how many exchanges of each message of each
    session had each response time (and miss flag): columns
    :data:`MESSAGE_COUNT_COLUMNS`, with NaN for responses that never came.

    Exact for every quantity that depends only on the response times (quantiles
    pooled over runs, miss counts), and small: a loss-free exchange always takes the
    same time, so a 30-minute DC session's 8 194 rows become a dozen or so.
    """
    keys = [c for c in MESSAGE_COUNT_COLUMNS if c != "count"]
    extra = [c for c in messages.columns if c not in MESSAGE_COLUMNS]  # sweep labels
    grouped = messages.groupby([*extra, *keys], sort=True, dropna=False)
    return grouped.size().rename("count").reset_index()


def raw_message_counts(columns: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
    """:func:`message_counts` of one run's raw message columns (as the core returns
    them), without building the frame of every exchange; the same rows in the same
    order."""
    keys = [c for c in MESSAGE_COUNT_COLUMNS if c != "count"]
    counts: dict[tuple[Any, ...], int] = {}
    for row in zip(*(columns[k] for k in keys), strict=True):
        t = row[5]
        key = (*row[:5], None if t != t else t, row[6])  # NaN (never answered) as None
        counts[key] = counts.get(key, 0) + 1

    def order(key: tuple[Any, ...]) -> tuple[Any, ...]:  # NaN last, as pandas sorts it
        t = key[5]
        return (*key[:5], t is None, 0.0 if t is None else t, key[6])

    ordered = sorted(counts, key=order)
    out: dict[str, list[Any]] = {k: [] for k in MESSAGE_COUNT_COLUMNS}
    if ordered:
        for name, column in zip(keys, zip(*ordered, strict=True), strict=True):
            out[name] = list(column)
    out["response_time_s"] = [float("nan") if t is None else t for t in out["response_time_s"]]
    out["count"] = [counts[key] for key in ordered]
    return out


def labels_of_one_kind(points: Sequence[Labelled]) -> bool:
    """Whether each label of ``points`` is of one kind (int, float, bool or text) in
    all of them: then a label column has one type in every task's rows."""
    kinds: dict[str, set[type]] = {}
    for p in points:
        for name, value in p.labels:
            kinds.setdefault(name, set()).add(type(value))
    return all(len(k) == 1 and k <= {int, float, bool, str} for k in kinds.values())


def label_rows(res: Result, points: Sequence[Labelled]) -> None:
    """Label the rows of the stored runs ``points`` (rows of several runs in each
    table) with their points' axis values, as :func:`add_labels` labels one run."""
    import pandas as pd

    if not points or not points[0].labels:
        return
    names = [name for name, _ in points[0].labels]
    idents = [p.key.split("-")[:2] for p in points]
    labels = pd.DataFrame(
        {
            "scenario_hash": [h for h, _ in idents],
            "seed": [int(s) for _, s in idents],
            **{name: [p.labels[i][1] for p in points] for i, name in enumerate(names)},
        }
    )
    for table in LABELLED:
        frame = getattr(res, table)
        if frame is None:
            continue
        new = [n for n in names if n not in frame.columns]  # a session column stays
        if not len(frame):  # the label columns, without rows, as a run's empty table
            setattr(res, table, frame.assign(**{n: [] for n in new})[[*new, *frame.columns]])
            continue
        keyed = labels[["scenario_hash", "seed", *new]]
        merged = frame.merge(keyed, on=["scenario_hash", "seed"], how="left", sort=False)
        setattr(res, table, merged[[*new, *frame.columns]])


def add_labels(res: Result, labels: Sequence[tuple[str, Any]]) -> None:
    for table in LABELLED:
        _label_frame(getattr(res, table), labels)


def _label_frame(frame: pd.DataFrame | None, labels: Sequence[tuple[str, Any]]) -> None:
    """Put the axis values ``labels`` of one run into its table ``frame``, in place."""
    if frame is None:
        return
    at = 0  # the labels lead, in axis order, as label_rows puts them for stored runs
    for name, value in labels:
        if name not in frame.columns:  # a session column of the same name stays
            frame.insert(at, name, [value] * len(frame))
            at += 1


def _label_columns(columns: Sequence[str], labels: Sequence[tuple[str, Any]]) -> list[str]:
    """The columns of a table ``columns`` once :func:`_label_frame` has put ``labels``
    into it: the labels not already a column, first, in axis order."""
    new = [name for name, _ in labels if name not in columns]
    return [*new, *columns]


# -- a chunk's tables at once ---------------------------------------------------------
#
# Building each run's tables (a DataFrame per table per run, then its labels, then one
# concatenation per chunk) was more than half of a short run's CPU time. A chunk's
# tables are therefore built at once from the runs' raw columns, concatenated as lists:
# one DataFrame per table per chunk, its number columns handed to pandas as arrays of
# the dtype it would infer (its inference, column by column, was a quarter of a
# small chunk's cost). pandas infers a column's dtype from its values,
# and the per-run frames' dtypes then meet in the concatenation (an all-None column of
# one run and a float column of another, say), so a column is concatenated as lists
# only where every run's values (or label) are of one of the kinds below, the same in
# every run: then each run's frame would have that one dtype, and so has the
# concatenated list. Any other table (a column of another kind, of mixed kinds, runs
# with other columns, a run without rows) is built run by run, as it always was.


def _kind(values: Sequence[Any]) -> str | None:
    """Which of the kinds above the non-empty list ``values`` is: only ints, only
    floats, only bools, or only strings; else ``None``. (Ints must also be within
    the 64-bit signed range, where pandas gives int64: :func:`_chunk_table` checks
    that as it makes the concatenated column an int64 array.)"""
    types = set(map(type, values))
    if len(types) != 1:
        return None
    (kind,) = types
    return kind.__name__ if kind in (int, float, bool, str) else None


#: The numpy dtype of a column of each kind but text.
_NUMPY = {"int": "int64", "float": "float64", "bool": "bool"}


def chunk_result(raws: Sequence[Mapping[str, Any]], labels: Sequence[Any]) -> Result:
    """The rows of several runs, each run's raw result as the core returns it
    (``raws``) labelled with its point's axis values (``labels``, one sequence of
    (name, value) per run): the same tables, dtypes, columns and rows as
    ``Result.concat`` of each run's :meth:`Result.from_core` labelled with
    :func:`add_labels`, then :meth:`Result.compacted`; built a table at a time."""
    parts = [Result.from_core(raw) for raw in raws]
    if len(parts) == 1:
        add_labels(parts[0], labels[0])
        return parts[0].compacted()
    res = Result.concat(parts)
    for table in LABELLED:
        frame = _chunk_table(table, raws, labels)
        if frame is not None:
            setattr(res, table, frame)
        elif _alike_without_rows(table, raws, labels):
            # Every run's frame would be this one (no rows, the same columns), and
            # so is their concatenation (each column's dtype met only itself): built
            # once.
            frame = getattr(parts[0], table)
            _label_frame(frame, labels[0])
            setattr(res, table, frame)
        else:
            for part, lab in zip(parts, labels, strict=True):  # run by run
                _label_frame(getattr(part, table), lab)
    return res.compacted()


def _alike_without_rows(
    table: str, raws: Sequence[Mapping[str, Any]], labels: Sequence[Any]
) -> bool:
    """Whether no run has rows in ``table`` and every run's raw columns (or their
    absence) and label names are those of the first run."""
    first, names = raws[0].get(table), [n for n, _ in labels[0]]
    for raw, lab in zip(raws, labels, strict=True):
        columns = raw.get(table)
        if (columns is None) != (first is None) or [n for n, _ in lab] != names:
            return False
        if columns is not None and (
            tuple(columns) != tuple(first) or any(len(v) for v in columns.values())
        ):
            return False
    return True


def _chunk_table(table: str, raws: Sequence[Mapping[str, Any]], labels: Sequence[Any]) -> Any:
    """The table ``table`` of the runs ``raws`` labelled with ``labels``, or ``None``
    where it must be built run by run (see above)."""
    import numpy as np
    import pandas as pd

    columns = [raw.get(table) for raw in raws]
    if any(c is None for c in columns):
        return None
    names = tuple(columns[0])
    rows = [len(c[names[0]]) if names else 0 for c in columns]
    runs = range(len(raws))
    if table in ("sessions", "messages"):  # runs without sessions add no rows
        runs = [i for i in runs if rows[i]]
    if not runs or not all(rows[i] for i in runs):
        return None
    order = _label_columns(table_order(columns[0], table), labels[runs[0]])
    label_names = [n for n, _ in labels[runs[0]]]
    for i in runs:
        if tuple(columns[i]) == names and [n for n, _ in labels[i]] == label_names:
            continue  # the first run's columns and label names: its order
        if _label_columns(table_order(columns[i], table), labels[i]) != order:
            return None
    data: dict[str, Any] = {}
    label_values = [dict(labels[i]) for i in runs]
    for name in order:
        # One kind in every run's rows (each run has rows here): the kind of them all.
        if name in names:
            values = list(itertools.chain.from_iterable([columns[i][name] for i in runs]))
            kind = _kind(values)
        else:
            at = [lab[name] for lab in label_values]
            kind = _kind(at)
            values = []
            for i, v in zip(runs, at, strict=True):
                values += [v] * rows[i]
        if kind is None:
            return None
        if kind == "str":
            data[name] = values  # pandas' own inference: its str dtype
            continue
        try:
            # The dtype pandas infers from a list of one kind, without its inference.
            data[name] = np.array(values, dtype=_NUMPY[kind])
        except OverflowError:  # ints beyond 64 bits signed: pandas would not give int64
            return None
    return pd.DataFrame(data)


def strip_labels(res: Result) -> None:
    res.flows = res.flows[[c for c in res.flows.columns if c in FLOW_COLUMNS]]
    res.links = res.links[[c for c in res.links.columns if c in LINK_COLUMNS]]
    res.sessions = res.sessions[[c for c in res.sessions.columns if c in SESSION_COLUMNS]]
    known = set(MESSAGE_COLUMNS) | set(MESSAGE_COUNT_COLUMNS)
    res.messages = res.messages[[c for c in res.messages.columns if c in known]]
    if res.traces is not None:
        res.traces = res.traces[[c for c in res.traces.columns if c in TRACE_COLUMNS]]
    if res.events is not None:
        res.events = res.events[[c for c in res.events.columns if c in EVENT_COLUMNS]]
