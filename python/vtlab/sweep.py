"""Sweeps: a grid of scenarios × seeds, run in parallel, stored run by run.

A :class:`Sweep` expands named axes (each a list of labelled settings) into the
cartesian grid of scenario points and runs every point with every seed. Seed *k*
gives the same loss pattern at every point (common random numbers), so paired
comparisons across the grid need fewer runs.

With a ``store`` directory each finished run is written at once, atomically, as
``runs/<scenario hash>-<seed>-<version>-<core build>.parquet`` (plus ``.links.parquet``, with
request/response sessions ``.sessions.parquet`` and ``.messages.parquet``, and with
traces ``.traces.parquet``), and a later call skips every run whose file exists:
an interrupted sweep resumes without repeating or losing runs, and a finished one
reloads without simulating. The engine releases the GIL, so runs execute in
parallel threads (one per core by default).
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtlab import _core
from vtlab.api import (
    FLOW_COLUMNS,
    LINK_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    TRACE_COLUMNS,
    Result,
    check_seed,
    core_build,
)
from vtlab.errors import with_filename
from vtlab.progress import run_progress
from vtlab.scenario import Scenario, ScenarioLike, set_path

if TYPE_CHECKING:  # pandas is imported when runs are stored or loaded
    import pandas as pd

#: How a sweep keeps the message rows of request/response sessions: every row as
#: the core returns it, or their response-time counts (:func:`message_counts`).
MESSAGE_FORMS = ("rows", "counts")

#: Columns of the messages table in the ``counts`` form.
MESSAGE_COUNT_COLUMNS: tuple[str, ...] = (
    "scenario_hash",
    "seed",
    "version",
    "session",
    "message",
    "response_time_s",
    "missed",
    "count",
)


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


def _raw_message_counts(columns: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
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

    out: dict[str, list[Any]] = {k: [] for k in MESSAGE_COUNT_COLUMNS}
    for key in sorted(counts, key=order):
        for name, value in zip(keys, key, strict=True):
            out[name].append(float("nan") if name == "response_time_s" and value is None else value)
        out["count"].append(counts[key])
    return out


@dataclass(frozen=True)
class Axis:
    """One dimension of a sweep: a column name and its labelled settings.

    Each level is ``(label, assignments)``: the label goes into the result column
    ``name``; the assignments (dotted spec path → value) are applied to the scenario.
    """

    name: str
    levels: tuple[tuple[Any, tuple[tuple[str, Any], ...]], ...]

    def __post_init__(self) -> None:
        """Refuse a repeated level: its runs would be counted twice in every summary
        (and two points with the same label could not be told apart)."""
        seen: list[Any] = []
        for label, _ in self.levels:
            if any(_same(label, other) for other in seen):
                raise ValueError(f"axis {self.name!r}: value {label!r} is given more than once")
            seen.append(label)

    @classmethod
    def values(cls, path: str, values: Iterable[Any], name: str | None = None) -> Axis:
        """An axis setting one spec field: ``Axis.values("loss.mean_loss", ["1%", "5%"])``.

        The column name defaults to the path with dots replaced by underscores.
        """
        return cls(
            name=name or path.replace(".", "_"),
            levels=tuple((v, ((path, v),)) for v in values),
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


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same type (so ``1``, ``1.0`` and ``True`` stay distinct)."""
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:  # e.g. arrays: compare their text
        return repr(a) == repr(b)


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


class Sweep:
    """A grid of scenario variations × seeds.

    Args:
        base: the scenario every point starts from.
        axes: the grid dimensions (:class:`Axis`), expanded as a cartesian product in
            the order given.
        seeds: seeds run at every point.
        trace: also record sampled traces (stored beside each run).
        messages: how to keep the message rows of request/response sessions:
            ``"rows"`` (every exchange, as :func:`vtlab.run` returns them) or
            ``"counts"`` (:func:`message_counts`: per run, how many exchanges had each
            response time — exact pooled quantiles at a fraction of the size, for
            long sessions over many runs). A run stored in the other form is
            simulated again.
    """

    def __init__(
        self,
        base: ScenarioLike,
        axes: Sequence[Axis] = (),
        seeds: Iterable[int] = range(1, 7),
        *,
        trace: bool = False,
        messages: str = "rows",
    ) -> None:
        self.base = Scenario.coerce(base)
        self.axes = list(axes)
        self.seeds = [check_seed(s) for s in seeds]
        self.trace = trace
        if messages not in MESSAGE_FORMS:
            raise ValueError(f"messages: {messages!r} is not one of {', '.join(MESSAGE_FORMS)}")
        self.messages = messages
        if not self.seeds:
            raise ValueError("a sweep needs at least one seed")
        # (An axis may share a name with a session or message column, e.g. the
        # default name tcp_profile of tcp.profile: those tables keep their own.)
        reserved = set(FLOW_COLUMNS) | set(LINK_COLUMNS)
        names = [a.name for a in self.axes]
        for name in names:
            if name in reserved:
                raise ValueError(
                    f"axis name {name!r} collides with a result column; give it another name"
                )
        if len(set(names)) != len(names):
            raise ValueError(f"axis names must be unique: {names}")

    def points(self) -> list[Point]:
        """Every (grid point, seed), validated: a bad setting raises ScenarioError
        before anything runs."""
        points: list[Point] = []
        version = f"{_core.version()}-{core_build()[:8]}"
        for combo in itertools.product(*(a.levels for a in self.axes)):
            sc = self.base.copy()
            for _, assignments in combo:
                for path, value in assignments:
                    set_path(sc.spec, path, value)
            scenario_hash = sc.hash()
            labels = tuple((a.name, label) for a, (label, _) in zip(self.axes, combo, strict=True))
            for seed in self.seeds:
                key = f"{scenario_hash}-{seed}-{version}"  # version includes the build
                points.append(Point(labels=labels, scenario=sc, seed=seed, key=key))
        return points

    def run(
        self,
        store: str | os.PathLike[str] | None = None,
        *,
        jobs: int | None = None,
        progress: bool = True,
        scheduler: Any = None,
        cluster: str | None = None,
        task_runs: int | None = None,
        connect_timeout: float | None = None,
    ) -> Result:
        """Run every point not already in ``store`` and return all rows.

        Args:
            store: campaign directory (created if missing); ``None`` keeps results in
                memory only.
            jobs: parallel runs in threads of this process (default: one per core).
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

        With a cluster the runs execute on its workers and come back to this process,
        which stores each one as it arrives (the workers need no shared file system).
        """
        on_cluster = scheduler is not None or cluster is not None
        if on_cluster and jobs is not None:
            raise ValueError(
                "--jobs: not used with --scheduler or --cluster (the cluster's worker "
                "threads run the runs)"
            )
        if not on_cluster and task_runs is not None:
            raise ValueError("--task-runs: only used with --scheduler or --cluster")
        points = self.points()
        run_dir = Path(store) / "runs" if store is not None else None
        if run_dir is not None:
            run_dir.mkdir(parents=True, exist_ok=True)
        gather = _Gather(points)
        todo: list[Point] = []
        for p, stored in self._load_stored(run_dir, points, jobs):
            if stored is not None:
                # A run may have been stored by another sweep with other axes:
                # keep the result columns and label it for this sweep.
                _strip_labels(stored)
                _add_labels(stored, p.labels)
                gather.add(p.key, stored)
            else:
                todo.append(p)
        if todo and on_cluster:
            self._execute_on_cluster(
                todo, run_dir, progress, scheduler, cluster, task_runs, connect_timeout, gather
            )
        elif todo:
            self._execute(todo, run_dir, jobs, progress, gather)
        return gather.result()

    def _load_stored(
        self, run_dir: Path | None, points: Sequence[Point], jobs: int | None
    ) -> Iterator[tuple[Point, Result | None]]:
        """Every point with its stored run (``None`` if not stored), in order. The runs
        are read in threads (Parquet reading releases the GIL), a batch at a time, so
        that a large finished campaign re-renders sooner and only a batch of runs is
        held as separate frames."""
        if run_dir is None:
            yield from ((p, None) for p in points)
            return
        workers = max(1, jobs or os.cpu_count() or 1)

        def load(key: str) -> Result | None:
            if not (run_dir / f"{key}.parquet").exists():
                return None
            return _load_run(run_dir, key, self.trace, self.messages)

        with ThreadPoolExecutor(workers) as pool:
            for start in range(0, len(points), COMPACT_BATCH):
                batch = points[start : start + COMPACT_BATCH]
                keys = list(dict.fromkeys(p.key for p in batch))
                loaded = dict(zip(keys, pool.map(load, keys), strict=True))
                yield from ((p, loaded[p.key]) for p in batch)

    def _finish(self, p: Point, raw: Mapping[str, Any], run_dir: Path | None) -> Result:
        """A run's result from the core's raw columns, labelled, and stored."""
        if self.messages == "counts" and any(len(v) for v in (raw.get("messages") or {}).values()):
            raw = {**raw, "messages": _raw_message_counts(raw["messages"])}
        res = Result.from_core(raw)
        _add_labels(res, p.labels)
        if run_dir is not None:
            _store_run(run_dir, p.key, res, self.messages)
        return res

    def _execute_on_cluster(
        self,
        todo: list[Point],
        run_dir: Path | None,
        progress: bool,
        scheduler: Any,
        cluster: str | None,
        task_runs: int | None,
        connect_timeout: float | None,
        gather: _Gather,
    ) -> None:
        from vtlab import cluster as dask_cluster  # imports Dask only when connecting

        def finish(p: Point, raw: Mapping[str, Any]) -> None:
            gather.add(p.key, self._finish(p, raw, run_dir))

        if connect_timeout is None:
            connect_timeout = dask_cluster.DEFAULT_CONNECT_TIMEOUT
        with (
            dask_cluster.connect(scheduler, cluster, connect_timeout=connect_timeout) as client,
            run_progress(len(todo), progress) as advance,
        ):
            dask_cluster.run_points(client, todo, self.trace, finish, advance, task_runs=task_runs)

    def _execute(
        self,
        todo: list[Point],
        run_dir: Path | None,
        jobs: int | None,
        progress: bool,
        gather: _Gather,
    ) -> None:
        workers = max(1, jobs or os.cpu_count() or 1)
        trace = self.trace

        def one(p: Point) -> None:
            gather.add(
                p.key, self._finish(p, _core.run(p.scenario.to_json(), p.seed, trace), run_dir)
            )

        with run_progress(len(todo), progress) as advance, ThreadPoolExecutor(workers) as pool:
            pending: set[Future[None]] = set()
            queue = iter(todo)
            try:
                for p in itertools.islice(queue, workers * 2):
                    pending.add(pool.submit(one, p))
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in finished:
                        f.result()
                        advance()
                    for p in itertools.islice(queue, len(finished)):
                        pending.add(pool.submit(one, p))
            except BaseException as e:
                for f in pending:
                    f.cancel()
                if isinstance(e, KeyboardInterrupt):
                    # Stop the simulations running in the workers too; what they
                    # had finished is already in the store.
                    _core.request_stop()
                raise
            finally:
                pool.shutdown(wait=True)
                _core.request_stop(clear=True)


#: Runs whose results are concatenated into one (see :class:`_Gather`).
COMPACT_BATCH = 1000


class _Gather:
    """The results of a sweep's runs, in the order of its points.

    A pandas DataFrame costs tens of kilobytes however few its rows, so 100 000 runs
    held as separate results take gigabytes. The results are therefore concatenated
    every :data:`COMPACT_BATCH` runs as they arrive (from the store or the
    simulations, in any order) and put in the points' order at the end. (Points
    that share a run, the same scenario and seed, keep the plain way: each point's
    rows are its run's.)
    """

    def __init__(self, points: Sequence[Point]) -> None:
        self.points = list(points)
        self.position: dict[tuple[str, int], int] = {}
        for i, p in enumerate(self.points):
            scenario_hash, seed = p.key.split("-")[:2]
            self.position.setdefault((scenario_hash, int(seed)), i)
        self.compact = len(self.position) == len(self.points)
        self.lock = threading.Lock()
        self.by_key: dict[str, Result] = {}
        self.pending: list[Result] = []
        self.chunks: list[Result] = []

    def add(self, key: str, res: Result) -> None:
        with self.lock:
            if not self.compact:
                self.by_key[key] = res
                return
            self.pending.append(res)
            if len(self.pending) >= COMPACT_BATCH:
                self.chunks.append(Result.concat(self.pending).compacted())
                self.pending = []

    def result(self) -> Result:
        if not self.compact:
            return Result.concat([self.by_key[p.key] for p in self.points])
        parts = [*self.chunks, *self.pending]
        if len(parts) == 1:
            return parts[0]
        return Result.concat(parts).compacted().reordered(self.position)


def _add_labels(res: Result, labels: Sequence[tuple[str, Any]]) -> None:
    for frame in (res.flows, res.links, res.sessions, res.messages, res.traces):
        if frame is None:
            continue
        for i, (name, value) in enumerate(labels):
            if name not in frame.columns:  # a session column of the same name stays
                frame.insert(i, name, [value] * len(frame))


def _strip_labels(res: Result) -> None:
    res.flows = res.flows[[c for c in res.flows.columns if c in FLOW_COLUMNS]]
    res.links = res.links[[c for c in res.links.columns if c in LINK_COLUMNS]]
    res.sessions = res.sessions[[c for c in res.sessions.columns if c in SESSION_COLUMNS]]
    known = set(MESSAGE_COLUMNS) | set(MESSAGE_COUNT_COLUMNS)
    res.messages = res.messages[[c for c in res.messages.columns if c in known]]
    if res.traces is not None:
        res.traces = res.traces[[c for c in res.traces.columns if c in TRACE_COLUMNS]]


def _paths(run_dir: Path, key: str) -> dict[str, Path]:
    return {
        "flows": run_dir / f"{key}.parquet",
        "links": run_dir / f"{key}.links.parquet",
        "traces": run_dir / f"{key}.traces.parquet",
        "sessions": run_dir / f"{key}.sessions.parquet",
        "messages": run_dir / f"{key}.messages.parquet",
    }


#: Schema-metadata key under which every stored file carries its run's identity.
STORE_KEY = b"vtlab.run"


def _identity(key: str) -> dict[str, Any]:
    scenario_hash, seed, version = key.split("-", 2)
    return {"key": key, "scenario_hash": scenario_hash, "seed": int(seed), "version": version}


def _write_atomic(
    frame: pd.DataFrame, path: Path, key: str, extra: Mapping[str, Any] | None = None
) -> None:
    """Write ``frame`` with the run's identity (and ``extra``) inside, then rename
    into place."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[STORE_KEY] = json.dumps({**_identity(key), **(extra or {})}).encode()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        pq.write_table(table.replace_schema_metadata(meta), tmp)  # removes tmp on failure
    except OSError as exc:
        raise with_filename(exc, path) from exc
    os.replace(tmp, path)


def _store_run(run_dir: Path, key: str, res: Result, messages: str = "rows") -> None:
    """Write one run; the flows file goes last and marks the run complete. It records
    whether the run has session and message files, and the messages' form."""
    paths = _paths(run_dir, key)
    if res.traces is not None:
        _write_atomic(res.traces, paths["traces"], key)
    _write_atomic(res.links, paths["links"], key)
    sessions = res.has_sessions()
    if sessions:
        _write_atomic(res.sessions, paths["sessions"], key)
        _write_atomic(res.messages, paths["messages"], key)
    _write_atomic(res.flows, paths["flows"], key, {"sessions": sessions, "messages": messages})


class StoredRunError(ValueError):
    """A stored run file that cannot be trusted (unreadable, or not the run its
    name says)."""


def _read_verified(path: Path, key: str, inside_out: dict[str, Any] | None = None) -> pd.DataFrame:
    """Read one stored file and check that it is the run ``key``: the identity it
    carries inside and the identity columns of its rows. The identity read is
    copied into ``inside_out`` when given."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as e:  # noqa: BLE001 - any read failure means: not trustworthy
        raise StoredRunError(f"unreadable ({type(e).__name__}: {e})") from None
    raw = (table.schema.metadata or {}).get(STORE_KEY)
    if raw is None:
        raise StoredRunError("without the run identity inside")
    inside = json.loads(raw)
    if inside.get("key") != key:
        raise StoredRunError(f"the stored run {inside.get('key')!r}, not {key!r}")
    if inside_out is not None:
        inside_out.update(inside)
    frame = table.to_pandas()
    want = _identity(key)
    for column in ("scenario_hash", "seed"):
        if column in frame.columns and len(frame) and not (frame[column] == want[column]).all():
            raise StoredRunError(f"holding rows of another run (column {column})")
    return frame


def _quarantine(run_dir: Path, paths: dict[str, Path], reason: str) -> None:
    """Move a run's files aside (``runs/quarantine/``) and say so on stderr."""
    target = run_dir / "quarantine"
    target.mkdir(exist_ok=True)
    moved = []
    for p in paths.values():
        if p.exists():
            dest = target / p.name
            n = 1
            while dest.exists():
                dest = target / f"{p.name}.{n}"
                n += 1
            os.replace(p, dest)
            moved.append(p.name)
    print(
        f"warning: stored run {', '.join(moved)} is {reason}; moved to {target} and "
        "simulated again",
        file=sys.stderr,
    )


def _load_run(run_dir: Path, key: str, trace: bool, messages: str = "rows") -> Result | None:
    """A stored run, verified; ``None`` if it is not stored (or was moved aside
    because it could not be trusted or holds its messages in another form, so that
    it runs again)."""
    paths = _paths(run_dir, key)
    if not paths["flows"].exists() or (trace and not paths["traces"].exists()):
        return None
    inside: dict[str, Any] = {}
    sessions = stored_messages = None
    try:
        flows = _read_verified(paths["flows"], key, inside)
        links = _read_verified(paths["links"], key)
        traces = _read_verified(paths["traces"], key) if trace else None
        if inside.get("sessions"):
            if inside.get("messages", "rows") != messages:
                raise StoredRunError(
                    f"holding its messages as {inside.get('messages', 'rows')}, not {messages}"
                )
            sessions = _read_verified(paths["sessions"], key)
            stored_messages = _read_verified(paths["messages"], key)
    except StoredRunError as e:
        _quarantine(run_dir, paths, str(e))
        return None
    scenario_hash, seed, version, build = key.split("-", 3)
    meta = {
        "scenario_hash": scenario_hash,
        "seed": int(seed),
        "version": version,
        "core_build": build,
        "stored": True,
    }
    return Result(
        flows=flows,
        links=links,
        traces=traces,
        meta=meta,
        sessions=sessions,
        messages=stored_messages,
    )
