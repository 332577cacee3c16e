"""The rows of a sweep's runs: labelled with their points' axis values, built a chunk of
runs at a time (:func:`chunk_result`), and gathered in the points' order without
holding one pandas frame per run (:class:`Gather`).
Used by :mod:`vtlab.sweep`; knows points only by their ``key`` and ``labels``."""

from __future__ import annotations

import dataclasses
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
    concat_meta,
    table_order,
)
from vtlab.arrowrows import from_columns, identities, remember
from vtlab.rawtables import alike_without_rows, joined_columns, joined_table
from vtlab.runstore import MESSAGE_COUNT_COLUMNS
from vtlab.store import StoredRows, stored_rows
from vtlab.storefiles import TABLES

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "COMPACT_BATCH",
    "LABELLED",
    "Gather",
    "add_labels",
    "chunk_result",
    "chunk_rows",
    "label_rows",
    "label_frame",
    "labels_of_one_kind",
    "message_counts",
    "raw_message_counts",
    "rows_result",
    "run_counts",
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
        #: Workers' tasks as the store holds their rows (Arrow), held as they are and
        #: made one result at the end (:func:`rows_result`).
        self.rows: list[StoredRows] = []
        self.empty: dict[Any, Any] = {}  # the tasks' frames without rows, one of each
        self.ordered = True

    def add(self, res: Result | StoredRows, *, ordered: bool = True) -> None:
        """Hold ``res``; ``ordered=False`` for rows of several runs in no set order."""
        if not self.keep:
            return
        with self.lock:
            self.ordered = self.ordered and ordered
            if isinstance(res, StoredRows):
                self.rows.append(self._shared(res))
                return
            self.pending.append(res)
            if len(self.pending) >= COMPACT_BATCH:
                self.chunks.append(Result.concat(self.pending).compacted())
                self.pending = []

    def result(self) -> Result | None:
        if not self.keep:
            return None
        parts = [*self.chunks, *self.pending]
        if self.rows:
            parts.append(rows_result(self.rows, self.position))
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

    def _shared(self, rows: StoredRows) -> StoredRows:
        """``rows`` with each of its frames without rows replaced by an equal one
        (the same columns and dtypes) held already: an empty DataFrame costs tens of
        kilobytes, and every task of a sweep without sessions brings two."""
        if not rows.frames:
            return rows
        frames = {}
        for name, frame in rows.frames.items():
            if frame is not None and not len(frame):
                key = (name, tuple(frame.columns), tuple(frame.dtypes))
                frame = self.empty.setdefault(key, frame)
            frames[name] = frame
        return dataclasses.replace(rows, frames=frames)

    def _span(self, res: Result) -> tuple[int, int] | None:
        """The positions of the first and last run of ``res`` where its runs are
        consecutive points in their order (rows in the runs' order), else ``None``."""
        runs = res.meta.get("runs", [res.meta])
        at = [self.position.get((m.get("scenario_hash"), int(m.get("seed", -1)))) for m in runs]
        if not at or at[0] is None or at != list(range(at[0], at[0] + len(at))):
            return None
        return at[0], at[-1]


def rows_result(rows: Sequence[StoredRows], position: Mapping[tuple[str, int], int]) -> Result:
    """The result the tasks' rows ``rows`` rebuild (each with its metadata and its
    frames without rows, :func:`vtlab.store.stored_rows` with ``keep``), the tasks
    in the order of their first run's ``position``: what ``Result.concat`` of the
    tasks' own results gives. A table that has rows in every task, of one schema, is
    converted once from the tasks' Arrow tables joined; any other is converted task
    by task and joined as ``Result.concat`` joins frames (with the tasks' frames
    without rows, whose dtypes take part in the join)."""
    import pyarrow as pa

    def first(r: StoredRows) -> int:
        assert r.meta is not None
        m = r.meta.get("runs", [r.meta])[0]
        return position.get((m.get("scenario_hash"), int(m.get("seed", -1))), -1)

    ordered = sorted(rows, key=first)
    whole: dict[str, Any] = {}
    for name in LABELLED:
        tables = [r.tables.get(name) for r in ordered]
        if all(t is not None for t in tables) and all(
            t.schema.equals(tables[0].schema, check_metadata=True) for t in tables
        ):
            whole[name] = pa.concat_tables(tables).to_pandas()
    parts = []
    for r in ordered:
        assert r.meta is not None and r.frames is not None
        frames = {
            name: None
            if name in whole
            else (r.tables[name].to_pandas() if name in r.tables else r.frames[name])
            for name in LABELLED
        }
        parts.append(Result(meta=dict(r.meta), **frames))
    res = Result.concat(parts)
    for name, frame in whole.items():
        setattr(res, name, frame)
    return res


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
        label_frame(getattr(res, table), labels)


def label_frame(frame: pd.DataFrame | None, labels: Sequence[tuple[str, Any]]) -> None:
    """Put the axis values ``labels`` of one run into its table ``frame``, in place."""
    if frame is None:
        return
    at = 0  # the labels lead, in axis order, as label_rows puts them for stored runs
    for name, value in labels:
        if name not in frame.columns:  # a session column of the same name stays
            frame.insert(at, name, [value] * len(frame))
            at += 1


def chunk_result(raws: Sequence[Mapping[str, Any]], labels: Sequence[Any]) -> Result:
    """The rows of several runs, each run's raw result as the core returns it
    (``raws``) labelled with its point's axis values (``labels``, one sequence of
    (name, value) per run): the same tables, dtypes, columns and rows as
    ``Result.concat`` of each run's :meth:`Result.from_core` labelled with
    :func:`add_labels`, then :meth:`Result.compacted`; built a table at a time
    (:mod:`vtlab.rawtables`)."""
    parts = [Result.from_core(raw) for raw in raws]
    if len(parts) == 1:
        add_labels(parts[0], labels[0])
        return parts[0].compacted()
    res = Result.concat(parts)
    for table in LABELLED:
        frame = _chunk_table(table, raws, labels)
        if frame is not None:
            setattr(res, table, frame)
        elif alike_without_rows([raw.get(table) for raw in raws], labels):
            # Every run's frame would be this one (no rows, the same columns), and
            # so is their concatenation (each column's dtype met only itself): built
            # once.
            frame = getattr(parts[0], table)
            label_frame(frame, labels[0])
            setattr(res, table, frame)
        else:
            for part, lab in zip(parts, labels, strict=True):  # run by run
                label_frame(getattr(part, table), lab)
    return res.compacted()


def _chunk_table(table: str, raws: Sequence[Mapping[str, Any]], labels: Sequence[Any]) -> Any:
    """The table ``table`` of the runs ``raws`` labelled with ``labels``, or ``None``
    where it must be built run by run (:func:`vtlab.rawtables.joined_table`)."""
    columns = [raw.get(table) for raw in raws]
    return joined_table(table, columns, labels, lambda c: table_order(c, table))


#: Labelled frames without rows (:func:`chunk_rows`) by table, columns and labels.
_EMPTY: dict[Any, Any] = {}


def chunk_rows(
    raws: Sequence[Mapping[str, Any]],
    labels: Sequence[Any],
    messages: str,
    traces: bool,
    events: bool,
    keep: bool,
) -> StoredRows:
    """The rows of several runs as a store part holds them:
    :func:`vtlab.store.stored_rows` of :func:`chunk_result` (its arguments but the
    result's: the runs' raw results and labels). Where every table with rows can be
    built at once (:func:`vtlab.rawtables.joined_columns`) and is stored, and there
    are several runs, each is made as Arrow straight from the runs' columns
    concatenated, with the schema pandas and Arrow gave the first table of its
    columns and kinds in this process, without a DataFrame: building the frames was
    three quarters of a worker task's own cost besides its simulations
    (docs/cluster.md). Labels must be of one kind each (:func:`labels_of_one_kind`)."""
    rows = _arrow_rows(raws, labels, traces, events, keep) if len(raws) > 1 else None
    if rows is None:
        rows = stored_rows(chunk_result(raws, labels), messages, traces, events, keep)
    return rows


def _arrow_rows(
    raws: Sequence[Mapping[str, Any]], labels: Sequence[Any], traces: bool, events: bool, keep: bool
) -> StoredRows | None:
    tables: dict[str, Any] = {}
    counts: dict[str, Mapping[str, int]] = {}
    frames: dict[str, Any] = {}
    for table in TABLES:
        columns = [raw.get(table) for raw in raws]
        if all(c is None for c in columns):
            frames[table] = None
        elif (table == "traces" and not traces) or (table == "events" and not events):
            return None
        elif alike_without_rows(columns, labels):
            frames[table] = _empty_frame(table, raws[0], labels[0]) if keep else None
        else:
            arrow = _chunk_arrow(table, columns, labels)
            if arrow is None:
                return None
            tables[table], counts[table] = arrow, run_counts(columns) or identities(arrow)
    if not keep:
        return StoredRows(tables, counts)
    return StoredRows(tables, counts, concat_meta([dict(raw["meta"]) for raw in raws]), frames)


def _chunk_arrow(table: str, columns: Sequence[Any], labels: Sequence[Any]) -> Any:
    """The table ``table`` of the runs ``columns`` as :func:`chunk_rows` makes it."""
    joined = joined_columns(table, columns, labels, lambda c: table_order(c, table))
    if joined is None:
        return None
    return from_columns((table, tuple(joined.data), joined.kinds), joined.data)


def run_counts(columns: Sequence[Any]) -> dict[str, int] | None:
    """Rows per run identity (as :func:`vtlab.arrowrows.identities` counts them in
    the table the runs' ``columns`` make) taken from each run's own columns, where
    every row of each run has one scenario hash (text) and seed (an integer); else
    ``None``. Arrow's comparisons over the joined table cost a task a few tenths of
    a millisecond a table, as much as its columns' conversion (docs/cluster.md)."""
    counts: dict[str, int] = {}
    for c in columns:
        hashes, seeds = c.get("scenario_hash"), c.get("seed")
        if not isinstance(hashes, list) or not isinstance(seeds, list):
            return None
        rows = len(hashes)
        if not rows:
            continue
        h, s = hashes[0], seeds[0]
        if type(h) is not str or type(s) is not int or len(seeds) != rows:
            return None
        if hashes.count(h) != rows or seeds.count(s) != rows:
            return None
        name = f"{h}-{s}"
        counts[name] = counts.get(name, 0) + rows
    return counts


def _empty_frame(table: str, raw: Mapping[str, Any], labels: Sequence[tuple[str, Any]]) -> Any:
    """The table ``table`` of the run ``raw`` (which has no rows in it) labelled with
    ``labels``, as :func:`chunk_result` makes it: a copy of the one frame made for
    its columns and label names (its columns' dtypes follow from them alone; making
    it costs ten times the copy)."""
    key = (table, tuple(raw[table]), tuple(name for name, _ in labels))
    frame = _EMPTY.get(key)
    if frame is None:
        frame = getattr(Result.from_core(raw), table)
        label_frame(frame, labels)
        remember(_EMPTY, key, frame)
    return frame.copy()


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
