"""Sweeps: a grid of scenarios × seeds, run in parallel in chunks of runs, stored in parts.

A :class:`Sweep` expands named axes (each a list of labelled settings) into the
cartesian grid of scenario points and runs every point with every seed. Seed *k*
gives the same loss pattern at every point (common random numbers), so paired
comparisons across the grid need fewer runs.

With a ``store`` directory the finished runs are committed to it in parts as they
finish (:mod:`vtlab.store`: one Parquet dataset per table, ``DIR/flows/``,
``DIR/links/``, ...), and a later call skips every committed run: an interrupted sweep
resumes without repeating or losing runs, and a finished one reloads without
simulating, reading each part once. A stored part that is not what was written (a
flipped bit, another part's file) is moved aside and its runs simulated again. With several
jobs (one per core by default) the runs execute in worker processes forked from this
one and kept for its later sweeps (:mod:`vtlab.workers`), or in threads (where this
process runs other threads, or where two threads' runs leave the interpreter lock free
enough: :mod:`vtlab.schedule`); either way in chunks of runs whose tables are built at
once.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vtlab import _core, gcpause, schedule
from vtlab import workers as worker_processes
from vtlab.api import (
    FLOW_COLUMNS,
    LINK_COLUMNS,
    MAX_SWEEP_RUNS,
    Result,
    check_seeds,
    core_build,
)
from vtlab.progress import run_progress
from vtlab.runstore import MESSAGE_COUNT_COLUMNS as MESSAGE_COUNT_COLUMNS  # a sweep's API
from vtlab.runstore import MESSAGE_FORMS, StoreError
from vtlab.scenario import Scenario, ScenarioLike, set_path
from vtlab.schedule import MAX_CHUNK, PROBE_CHUNK, LockShare, Pace, chunks
from vtlab.stats import SUMMARY_COLUMNS
from vtlab.store import Store, StoredRows, StoreWriter
from vtlab.sweeprows import (
    Gather,
    chunk_result,
    chunk_rows,
    label_rows,
    labels_of_one_kind,
    raw_message_counts,
    strip_labels,
)
from vtlab.sweeprows import (
    message_counts as message_counts,  # vtlab.sweep.message_counts, documented
)

if TYPE_CHECKING:  # pandas is imported when runs are stored or loaded
    import pandas as pd


class AxisError(ValueError):
    """A bad axis of a sweep: ``axis`` is its column name and ``problem`` what is wrong
    (printed as ``axis 'NAME': PROBLEM``)."""

    def __init__(self, axis: str, problem: str) -> None:
        super().__init__(f"axis {axis!r}: {problem}")
        self.axis = axis
        self.problem = problem


@dataclass(frozen=True)
class Axis:
    """One dimension of a sweep: a column name and its labelled settings.

    Each level is ``(label, assignments)``: the label goes into the result column
    ``name``; the assignments (dotted spec path → value) are applied to the scenario.
    ``spellings``, when given, are the levels as the user wrote them (one per level),
    for error messages.
    """

    name: str
    levels: tuple[tuple[Any, tuple[tuple[str, Any], ...]], ...]
    spellings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Refuse an axis without values and a repeated label: the runs of a repeated
        level would be counted twice in every summary (two levels that differ in
        spelling only are refused by :meth:`Sweep.points`, which resolves them)."""
        if not self.levels:
            raise AxisError(self.name, "has no values")
        if self.spellings and len(self.spellings) != len(self.levels):
            raise ValueError(f"axis {self.name!r}: one spelling per level is needed")
        seen: dict[Any, int] = {}
        for i, (label, _) in enumerate(self.levels):
            j = seen.setdefault(_label_key(label), i)
            if j != i:
                raise self.twice(j, i, "the same value")

    def twice(self, i: int, j: int, why: str) -> AxisError:
        """The error for levels ``i`` and ``j`` that are one point (``why``: how),
        naming both as the user wrote them."""
        first, second = (self._spelling(k) for k in (i, j))
        if first == second:
            return AxisError(self.name, f"value {first} is given more than once")
        return AxisError(self.name, f"values {first} and {second} are {why}; give each once")

    def _spelling(self, i: int) -> str:
        """Level ``i`` as the user wrote it (quoted), else its label's ``repr``."""
        return repr(self.spellings[i]) if self.spellings else repr(self.levels[i][0])

    @classmethod
    def values(
        cls,
        path: str,
        values: Iterable[Any],
        name: str | None = None,
        *,
        spellings: Sequence[str] = (),
    ) -> Axis:
        """An axis setting one spec field: ``Axis.values("loss.mean_loss", ["1%", "5%"])``.

        The column name defaults to the path with dots replaced by underscores. At
        most :data:`vtlab.api.MAX_SWEEP_RUNS` values (an endless iterator is refused).
        """
        name = name or path.replace(".", "_")
        taken = list(itertools.islice(values, MAX_SWEEP_RUNS + 1))
        if len(taken) > MAX_SWEEP_RUNS:
            raise AxisError(name, f"more than {MAX_SWEEP_RUNS} values (the most runs of a sweep)")
        return cls(
            name=name, levels=tuple((v, ((path, v),)) for v in taken), spellings=tuple(spellings)
        )

    @classmethod
    def variants(cls, name: str, variants: Mapping[Any, Mapping[str, Any]]) -> Axis:
        """An axis of named variants, each setting several fields, e.g.
        ``Axis.variants("variant", {"nd": {"tcp.cc": "newreno", "tcp.delayed_ack": False}})``.
        """
        return cls(
            name=name,
            levels=tuple((label, tuple(sets.items())) for label, sets in variants.items()),
        )


def _label_key(label: Any) -> Any:
    """A key equal for equal labels of the same type (so ``1``, ``1.0`` and ``True``
    stay distinct); unhashable labels (e.g. lists) by their text."""
    try:
        hash(label)
    except TypeError:
        return (type(label), repr(label))
    return (type(label), label)


@dataclass(frozen=True)
class Point:
    """One run of a sweep: the labels of its grid point, its spec and its seed."""

    labels: tuple[tuple[str, Any], ...]
    scenario: Scenario
    seed: int
    key: str

    @property
    def label_dict(self) -> dict[str, Any]:
        return dict(self.labels)


def _check_names(axes: Sequence[Axis]) -> None:
    """Axis names are result columns: unique, and none a column of the flow or link
    table or of a summary (:func:`vtlab.summarize`, the table ``vtlab sweep`` prints).
    (An axis may share a name with a session or message column, e.g. the default name
    tcp_profile of tcp.profile: those tables keep their own.)"""
    names = [a.name for a in axes]
    for name in names:
        if name in FLOW_COLUMNS or name in LINK_COLUMNS:
            raise AxisError(name, "the name collides with a result column; give it another name")
        if name in SUMMARY_COLUMNS:
            raise AxisError(
                name,
                f"the name collides with a summary column ({', '.join(SUMMARY_COLUMNS)}); "
                "give it another name",
            )
    if len(set(names)) != len(names):
        raise ValueError(f"axis names must be unique: {names}")


class Sweep:
    """A grid of scenario variations × seeds.

    Args:
        base: the scenario every point starts from.
        axes: the grid dimensions (:class:`Axis`), expanded as a cartesian product in
            the order given.
        seeds: seeds run at every point: at least one, none twice; the grid
            (points × seeds) at most :data:`vtlab.api.MAX_SWEEP_RUNS` runs.
        trace: also record sampled traces (stored in the store's ``traces`` table).
        events: also record typed events (:data:`vtlab.api.EVENT_COLUMNS`; stored in
            the store's ``events`` table). A run stored without traces or events makes
            :meth:`run` refuse the store when this sweep wants them.
        messages: how to keep the message rows of request/response sessions:
            ``"rows"`` (every exchange, as :func:`vtlab.run` returns them) or
            ``"counts"`` (:func:`message_counts`: per run, how many exchanges had each
            response time — exact pooled quantiles at a fraction of the size, for
            long sessions over many runs). A run stored in the other form makes
            :meth:`run` refuse the store (:class:`vtlab.runstore.StoreError`).
    """

    def __init__(
        self,
        base: ScenarioLike,
        axes: Sequence[Axis] = (),
        seeds: Iterable[int] = range(1, 7),
        *,
        trace: bool = False,
        messages: str = "rows",
        events: bool = False,
    ) -> None:
        self.base = Scenario.coerce(base)
        self.axes = list(axes)
        self.seeds = check_seeds(seeds)
        self.trace = trace
        self.events = events
        if messages not in MESSAGE_FORMS:
            raise ValueError(f"messages: {messages!r} is not one of {', '.join(MESSAGE_FORMS)}")
        self.messages = messages
        _check_names(self.axes)
        runs = math.prod(len(a.levels) for a in self.axes) * len(self.seeds)
        if runs > MAX_SWEEP_RUNS:
            sizes = " × ".join(f"{len(a.levels)} values of {a.name}" for a in self.axes)
            raise ValueError(
                f"the grid is {runs} runs ({sizes} × {len(self.seeds)} seeds), more than "
                f"the {MAX_SWEEP_RUNS} a sweep may run"
            )

    def points(self) -> list[Point]:
        """Every (grid point, seed), validated: a bad setting raises ScenarioError
        and two grid points that resolve to the same scenario (``5%`` and ``0.05``,
        ``1ms`` and ``0.001``) raise :class:`AxisError` naming both, before anything
        runs."""
        points: list[Point] = []
        version = f"{_core.version()}-{core_build()[:8]}"
        first: dict[str, tuple[int, ...]] = {}  # scenario hash -> its first grid point
        for combo in itertools.product(*(range(len(a.levels)) for a in self.axes)):
            sc = self.base.copy()
            for axis, i in zip(self.axes, combo, strict=True):
                for path, value in axis.levels[i][1]:
                    set_path(sc.spec, path, value)
            scenario_hash = sc.hash()
            if scenario_hash in first:
                raise self._one_point(first[scenario_hash], combo)
            first[scenario_hash] = combo
            labels = tuple((a.name, a.levels[i][0]) for a, i in zip(self.axes, combo, strict=True))
            for seed in self.seeds:
                key = f"{scenario_hash}-{seed}-{version}"  # version includes the build
                points.append(Point(labels=labels, scenario=sc, seed=seed, key=key))
        return points

    def _one_point(self, a: tuple[int, ...], b: tuple[int, ...]) -> ValueError:
        """The error for grid points ``a`` and ``b`` (level numbers) that resolve to
        the same scenario: their runs would be one point with every seed counted
        twice."""
        differ = [k for k, (i, j) in enumerate(zip(a, b, strict=True)) if i != j]

        def at(c: tuple[int, ...], ks: Iterable[int]) -> str:
            return ", ".join(f"{self.axes[k].name}={self.axes[k].levels[c[k]][0]!r}" for k in ks)

        if len(differ) == 1:
            k = differ[0]
            others = at(a, (o for o in range(len(a)) if o != k))
            why = "the same setting once resolved" + (f" (at {others})" if others else "")
            return self.axes[k].twice(a[k], b[k], why)
        names = ", ".join(self.axes[k].name for k in differ)
        points = [at(c, differ) for c in (a, b)]
        return ValueError(
            f"axes {names}: grid points ({points[0]}) and ({points[1]}) are the same "
            "scenario once resolved (the axes set the same fields); give each setting once"
        )

    def run(
        self,
        store: str | os.PathLike[str] | Store | None = None,
        *,
        jobs: int | None = None,
        progress: bool = True,
        scheduler: Any = None,
        cluster: str | None = None,
        task_runs: int | None = None,
        connect_timeout: float | None = None,
        collect: bool = True,
    ) -> Result:
        """Run every point not already in ``store`` and return all rows.

        Args:
            store: campaign directory (created if missing; :mod:`vtlab.store`), or
                an opened :class:`vtlab.store.Store`; ``None`` keeps results in memory
                only.
            jobs: parallel runs (default: one per core), in chunks of runs (see
                :func:`vtlab.schedule.chunks`): in worker processes forked from this
                one and kept for its later sweeps (:mod:`vtlab.workers`), or in
                threads of this process where it runs other threads; a sweep of two
                jobs without live workers starts in threads and forks workers for the
                runs left only where its threads need the interpreter lock too much
                (:class:`vtlab.schedule.LockShare`).
            progress: show a progress bar with ETA on stderr (when it is a terminal).
            scheduler: run on a Dask cluster instead: the address of its scheduler
                (``"tcp://scheduler-host:8786"``) or a ``distributed.Client``. Needs the
                ``cluster`` extra (``pip install 'vtlab[cluster]'``); see
                docs/cluster.md.
            cluster: ``"local:N"``: start a local Dask cluster of N worker processes
                (one thread each) for this call.
            task_runs: runs per cluster task (default: sized to about a second of
                work each).
            connect_timeout: seconds to wait for ``scheduler`` (default 10).
            collect: return the rows; ``False`` (with a store) returns ``None`` and
                holds no more than a store part in memory, for campaigns larger than
                memory (read their tables with :func:`vtlab.load`).

        With a cluster the runs execute on its workers and come back to this process,
        which stores them as they arrive (the workers need no shared file system).

        Runs are committed to the store in parts as they finish (and when the sweep
        ends or is interrupted); a stored part that is not what was written is moved
        to ``_quarantine/`` (with a warning on stderr) and its runs simulated again.
        A run stored without traces (or with its messages in the other form) when this
        sweep needs them raises :class:`vtlab.runstore.StoreError`, before anything
        runs; so does a store of the earlier layout (one file pair per run).
        """
        on_cluster = scheduler is not None or cluster is not None
        if on_cluster and jobs is not None:
            raise ValueError(
                "--jobs: not used with --scheduler or --cluster (the cluster's worker "
                "threads run the runs)"
            )
        if not on_cluster and task_runs is not None:
            raise ValueError("--task-runs: only used with --scheduler or --cluster")
        if not collect and store is None:
            raise ValueError("collect=False needs a store (the rows go nowhere else)")
        points = self.points()
        gather = Gather(points, keep=collect)
        writer = None
        todo = points
        if store is not None:
            opened = store if isinstance(store, Store) else Store.open(store, create=True)
            todo = self._load_stored(opened, points, gather if collect else None)
            writer = StoreWriter(
                opened, messages=self.messages, traces=self.trace, events=self.events
            )
        try:
            if todo and on_cluster:
                self._execute_on_cluster(
                    todo, writer, progress, scheduler, cluster, task_runs, connect_timeout, gather
                )
            elif todo:
                self._execute(todo, writer, jobs, progress, gather)
        finally:
            if writer is not None:
                writer.flush()
        return gather.result()

    def _load_stored(
        self, store: Store, points: Sequence[Point], gather: Gather | None
    ) -> list[Point]:
        """Give ``gather`` the stored rows of ``points`` (every part read once,
        verified; a damaged one is moved aside) and return the points still to run."""
        index = store.index(store.quarantine)
        wanted = [p for p in points if p.key in index]
        for p in wanted:
            entry = index[p.key]
            if self.trace and not entry.traces:
                problem = "without traces; run this sweep without traces"
            elif self.events and not entry.events:
                problem = "without events; run this sweep without events"
            elif entry.sessions and entry.messages != self.messages:
                problem = f"with its messages as {entry.messages}, not {self.messages}"
            else:
                continue
            raise StoreError(
                store.root, f"run {p.key} is stored {problem}, or give it another store"
            )
        # The runs table too: each run's key as its part holds it, checked against
        # the record.
        tables = ["runs", "flows", "links", "sessions", "messages"]
        tables += ["traces"] if self.trace else []
        tables += ["events"] if self.events else []
        keep = gather is not None  # else: only which runs are there, each part verified
        frames, read = store.read(tables, {p.key for p in wanted}, quarantine=True, keep=keep)
        if read and gather is not None:
            stored = _stored_result(frames, [p for p in wanted if p.key in read])
            gather.add(stored, ordered=False)
        return [p for p in points if p.key not in read]

    def _execute_on_cluster(
        self,
        todo: list[Point],
        writer: StoreWriter | None,
        progress: bool,
        scheduler: Any,
        cluster: str | None,
        task_runs: int | None,
        connect_timeout: float | None,
        gather: Gather,
    ) -> None:
        from vtlab import cluster as dask_cluster  # imports Dask only when connecting

        def finish(points: Sequence[Point], raws: Sequence[Mapping[str, Any]]) -> None:
            _keep(gather, writer, points, _finish_chunk(points, raws, self.messages))

        if connect_timeout is None:
            connect_timeout = dask_cluster.DEFAULT_CONNECT_TIMEOUT
        with (
            dask_cluster.connect(scheduler, cluster, connect_timeout=connect_timeout) as client,
            run_progress(len(todo), progress) as advance,
        ):
            dask_cluster.run_points(
                client, todo, self.trace, finish, advance, task_runs=task_runs, events=self.events
            )

    def _execute(
        self,
        todo: list[Point],
        writer: StoreWriter | None,
        jobs: int | None,
        progress: bool,
        gather: Gather,
    ) -> None:
        most = max(1, jobs or os.cpu_count() or 1)
        workers = min(len(todo), most)
        # Threads first where no workers are live and forking them later would be
        # safe (the threads and the progress bar's are paused then); else the workers
        # now, before the progress bar's thread starts.
        threads_first = (
            1 < workers <= schedule.THREADS_FIRST
            and worker_processes.live(workers, most) is None
            and worker_processes.can_fork()
        )
        pool = None
        if workers > 1 and not threads_first:
            pool = worker_processes.pool(workers, most)
        record = (self.trace, self.events)
        # Rows stored: each chunk makes them as the store holds them (Arrow), so that
        # this process only joins them (and, for the rows it returns, converts them
        # once at the end: vtlab.sweeprows.rows_result), where each label is of one
        # kind in every chunk (a part's columns then have one type; see
        # vtlab.store.joined).
        stored = None
        if writer is not None and labels_of_one_kind(todo):
            stored = (writer.traces, writer.events, gather.keep)
        args = (record, self.messages, stored)
        with run_progress(len(todo), progress) as advance:
            sinks = (advance, gather, writer)
            if workers == 1:
                _execute_here(todo, args, *sinks)
                return
            if threads_first:  # the runs left go to workers if they need the lock
                worker_processes.preload()
                todo = _execute_in_threads(todo, workers, args, sinks, LockShare(workers))
                if not todo:
                    return
                with advance.paused():
                    pool = worker_processes.pool(workers, most)
            if pool is not None:
                _execute_in_processes(pool, workers, todo, args, sinks)
            else:
                _execute_in_threads(todo, workers, args, sinks)


def _stored_result(frames: Mapping[str, pd.DataFrame | None], points: Sequence[Point]) -> Result:
    """The rows read from a store for ``points``, labelled for this sweep (a run may
    have been stored by another sweep with other axes: only the result columns are
    kept)."""
    runs: list[dict[str, Any]] = []
    for p in points:
        scenario_hash, seed, version, build = p.key.split("-", 3)
        runs.append(
            {
                "scenario_hash": scenario_hash,
                "seed": int(seed),
                "version": version,
                "core_build": build,
                "stored": True,
            }
        )
    stored = Result(
        flows=frames["flows"],
        links=frames["links"],
        traces=frames.get("traces"),
        events=frames.get("events"),
        meta={"runs": runs, "stored": True},
        sessions=frames["sessions"],
        messages=frames["messages"],
    )
    strip_labels(stored)
    label_rows(stored, points)
    return stored


def _keep(
    gather: Gather, writer: StoreWriter | None, points: Sequence[Point], res: Result | StoredRows
) -> None:
    """Hand the finished runs ``points`` (rows ``res``) to the result and the store."""
    gather.add(res)
    if writer is not None:
        writer.add([(p.key, p.scenario) for p in points], res)


def _simulate(p: Point, record: tuple[bool, bool]) -> Mapping[str, Any]:
    """The core's raw result of ``p``, with sampled traces and typed events as
    ``record`` (traces, events) says."""
    trace, events = record
    return _core.run(p.scenario.to_json(), p.seed, trace, events=events)


def _counted(raw: Mapping[str, Any], messages: str) -> Mapping[str, Any]:
    """A run's raw result with its message rows in the form ``messages``."""
    if messages == "counts" and any(len(v) for v in (raw.get("messages") or {}).values()):
        return {**raw, "messages": raw_message_counts(raw["messages"])}
    return raw


#: What a local sweep's chunks hand on (:func:`_finish_chunk`): ``None`` for their
#: result, or for the rows a store holds the store's traces and events flags and
#: whether the sweep returns its rows too.
Stored = tuple[bool, bool, bool] | None


def _finish_chunk(
    points: Sequence[Point],
    raws: Sequence[Mapping[str, Any]],
    messages: str,
    stored: Stored = None,
) -> Result | StoredRows:
    """The results of the runs ``points`` from the core's raw columns ``raws``,
    labelled and concatenated: as ``Result.concat`` of each run's
    ``Result.from_core`` labelled with its point's axis values, compacted, but each
    table built once for them all (:func:`chunk_result`); with ``stored``, their rows
    as the store will hold them (:func:`vtlab.sweeprows.chunk_rows`)."""
    counted = [_counted(raw, messages) for raw in raws]
    labels = [p.labels for p in points]
    if stored is None:
        return chunk_result(counted, labels)
    return chunk_rows(counted, labels, messages, *stored)


# -- parallel runs -------------------------------------------------------------------
#
# Threads of one process share the interpreter lock, which the engine releases but a
# run's plan and tables hold: where runs are short, threads do not scale. So a sweep
# with several jobs runs its chunks of runs in worker processes forked from it (each
# chunk's tables made once, _finish_chunk), which outlive it and serve this process's
# later sweeps (vtlab.workers). Forking is safe only while this process runs no other
# thread (a lock held by one at the fork would stay held in the child): otherwise (a
# notebook's kernel, an application's threads) the chunks go to threads, unless an
# earlier sweep's workers are still there to take them. A sweep of two jobs without
# live workers starts in threads, which cost no fork, and forks workers for the runs
# left only where its threads' runs need the lock too much (vtlab.schedule).


#: Seconds of runs the one-job path holds before handing them on together.
HERE_BATCH_S = 0.5


def _execute_here(
    todo: Sequence[Point],
    args: tuple[tuple[bool, bool], str, Stored],
    advance: Any,
    gather: Gather,
    writer: StoreWriter | None,
) -> None:
    """Run ``todo`` in this process, one by one (progress after each), handing the
    finished runs to the result and the store in batches (as many runs as a worker's
    task would hold, :class:`vtlab.schedule.Pace`, or :data:`HERE_BATCH_S` seconds), as a worker
    hands back its chunk: one table per batch instead of one per run
    (:func:`_finish_chunk`). A batch's runs and tables are made with the garbage
    collector paused (:mod:`vtlab.gcpause`). On Ctrl-C the finished runs are kept."""
    record, messages, stored = args
    points: list[Point] = []
    raws: list[Mapping[str, Any]] = []
    since = time.monotonic()
    pace = Pace(1)
    most = pace()
    held = [False]  # whether this batch holds the collector paused

    def hand_on() -> None:
        try:
            res = _finish_chunk(points, raws, messages, stored) if raws else None
        finally:
            if held[0]:
                held[0] = False
                gcpause.release()
        if res is not None:
            _keep(gather, writer, points, res)
            pace.kept(len(points), res)
        points.clear()
        raws.clear()

    try:
        for p in todo:
            if not held[0]:
                gcpause.hold()
                held[0] = True
            raws.append(_simulate(p, record))
            points.append(p)
            advance()
            if len(points) >= most or time.monotonic() - since >= HERE_BATCH_S:
                hand_on()
                since, most = time.monotonic(), pace()
    finally:
        hand_on()
        _core.request_stop(clear=True)


def _run_chunk(
    points: Sequence[Point], record: tuple[bool, bool], messages: str, stored: Stored = None
) -> tuple[Result | StoredRows | None, int, bool]:
    """In a worker process: :func:`_chunk_runs`, Ctrl-C stopping its simulation."""
    with worker_processes.running():
        return _chunk_runs(points, record, messages, stored)


def _chunk_runs(
    points: Sequence[Point],
    record: tuple[bool, bool],
    messages: str,
    stored: Stored = None,
    engine: list[float] | None = None,
) -> tuple[Result | StoredRows | None, int, bool]:
    """Run and label ``points``; their results as one (:func:`_finish_chunk`, with
    ``stored``), how many ran, and whether the chunk was interrupted (Ctrl-C) after
    those; each run's seconds in the engine appended to ``engine``, if given. The
    garbage collector is paused meanwhile (:mod:`vtlab.gcpause`)."""
    raws: list[Mapping[str, Any]] = []
    with gcpause.paused():
        try:
            for p in points:
                raws.append(_simulate(p, record))
                if engine is not None:
                    engine.append(raws[-1].get("meta", {}).get("wall_s", 0.0))
        except KeyboardInterrupt:
            if not raws:
                raise
            done = points[: len(raws)]
            return _finish_chunk(done, raws, messages, stored), len(raws), True
        return _finish_chunk(points, raws, messages, stored), len(raws), False


def _execute_in_processes(
    pool: Any,
    workers: int,
    todo: list[Point],
    args: tuple[tuple[bool, bool], str, Stored],
    sinks: tuple[Any, Gather, StoreWriter | None],
) -> None:
    _execute_chunks(
        lambda chunk: pool.submit(_run_chunk, chunk, *args),
        workers,
        todo,
        sinks,
        lambda: worker_processes.interrupt(pool),
        # After an error the workers' chunks are not wanted: they are killed.
        lambda interrupted: worker_processes.close(kill=not interrupted),
    )


def _execute_in_threads(
    todo: list[Point],
    workers: int,
    args: tuple[tuple[bool, bool], str, Stored],
    sinks: tuple[Any, Gather, StoreWriter | None],
    meter: LockShare | None = None,
) -> list[Point]:
    """As :func:`_execute_in_processes`, in threads of this process: the engine runs
    without the interpreter lock, a chunk's tables are built once for its runs. With
    ``meter``, each task's time and its runs' time in the engine are counted there,
    and once it says the runs left need the lock too much (:meth:`LockShare.bound`)
    no more tasks start: the points not run are returned, for worker processes."""
    try:
        with ThreadPoolExecutor(workers) as pool:

            def submit(chunk: Sequence[Point]) -> Future[Any]:
                if meter is None:
                    return pool.submit(_chunk_runs, chunk, *args)
                return pool.submit(_metered_chunk, meter, chunk, args)

            return _execute_chunks(
                submit,
                workers,
                todo,
                sinks,
                _core.request_stop,
                # After an error the running chunks finish, the others are cancelled:
                # a stop would reach every simulation of this process, other sweeps'.
                lambda _interrupted: None,
                meter.bound if meter is not None else None,
            )
    finally:
        _core.request_stop(clear=True)


def _metered_chunk(
    meter: LockShare, points: Sequence[Point], args: tuple[tuple[bool, bool], str, Stored]
) -> tuple[Result | StoredRows | None, int, bool]:
    """:func:`_chunk_runs` in a thread, its time and its runs' time in the engine
    counted in ``meter``."""
    start = time.perf_counter()
    engine: list[float] = []
    out = _chunk_runs(points, *args, engine=engine)
    meter.add(out[1], time.perf_counter() - start, math.fsum(engine))
    return out


def _execute_chunks(
    submit: Callable[[Sequence[Point]], Future[tuple[Result | StoredRows | None, int, bool]]],
    workers: int,
    todo: list[Point],
    sinks: tuple[Any, Gather, StoreWriter | None],
    stop: Callable[[], None],
    close: Callable[[bool], None],
    until: Callable[[int], bool] | None = None,
) -> list[Point]:
    """Run ``todo`` in chunks (:func:`chunks`) that ``submit`` hands to ``workers``
    workers, at most two each ahead, keeping each finished chunk's runs (``sinks``:
    the progress, the result, the store). On Ctrl-C ``stop`` stops the running
    simulations and the runs the chunks had finished are kept; on any exception
    ``close(interrupted)`` ends the workers before it propagates. With ``until``, one
    task each ahead (a thread that finishes a task would start the next before this
    one could take it back), and once it says so (asked with the runs not yet back
    as each task returns) no task is handed out and those not started are taken
    back: the running ones finish and are kept, and the points not run are returned
    (else there are none)."""
    advance, gather, writer = sinks
    pace = Pace(workers, first=PROBE_CHUNK if until is not None else MAX_CHUNK)
    tasks = iter(chunks(todo, workers, pace))
    pending: dict[Future[tuple[Result | StoredRows | None, int, bool]], Sequence[Point]] = {}
    left = len(todo)
    rest: list[Point] = []
    try:
        for chunk in itertools.islice(tasks, workers * (1 if until else 2)):
            pending[submit(chunk)] = chunk
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                chunk = pending.pop(f)
                res, n, interrupted = f.result()
                if res is not None:
                    _keep(gather, writer, chunk[:n], res)
                    pace.kept(n, res)
                for _ in range(n):
                    advance()
                left -= n
                if interrupted:  # the runs it finished are kept; stop the sweep
                    raise KeyboardInterrupt
            if until is not None and until(left):
                until = None
                rest = [p for f in list(pending) if f.cancel() for p in pending.pop(f)]
                rest += [p for chunk in tasks for p in chunk]
            for chunk in itertools.islice(tasks, len(finished)):
                pending[submit(chunk)] = chunk
    except BaseException as e:
        for f in pending:
            f.cancel()
        interrupted = isinstance(e, KeyboardInterrupt)
        try:
            if interrupted:
                # Stop the simulations running in the workers too (the runs they
                # had finished come back and are stored).
                stop()
                _keep_finished(pending, gather, writer)
        finally:
            close(interrupted)
        raise
    return rest


def _keep_finished(
    pending: Mapping[Future[tuple[Result | StoredRows | None, int, bool]], Sequence[Point]],
    gather: Gather,
    writer: StoreWriter | None,
) -> None:
    """After Ctrl-C: keep the runs the interrupted chunks had finished."""
    for f, chunk in pending.items():
        if f.cancelled():
            continue
        with contextlib.suppress(BaseException):
            res, n, _ = f.result()
            if res is not None:
                _keep(gather, writer, chunk[:n], res)
