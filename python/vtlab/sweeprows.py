"""The rows of a sweep's runs: labelled with their points' axis values, and gathered in
the points' order without holding one pandas frame per run (:class:`Gather`).
Used by :mod:`vtlab.sweep`; knows points only by their ``key`` and ``labels``."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

from vtlab.api import (
    EVENT_COLUMNS,
    FLOW_COLUMNS,
    LINK_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    TRACE_COLUMNS,
    Result,
)
from vtlab.runstore import MESSAGE_COUNT_COLUMNS

__all__ = ["COMPACT_BATCH", "LABELLED", "Gather", "add_labels", "label_rows", "strip_labels"]

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
        return Result.concat(parts).compacted().reordered(self.position)


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
    for frame in (getattr(res, t) for t in LABELLED):
        if frame is None:
            continue
        for i, (name, value) in enumerate(labels):
            if name not in frame.columns:  # a session column of the same name stays
                frame.insert(i, name, [value] * len(frame))


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
