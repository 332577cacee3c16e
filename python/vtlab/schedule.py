"""How a sweep's runs are cut into tasks for its workers (:func:`chunks`, sized by
:class:`Pace`), and whether its threads' runs need the interpreter lock too much for
threads to share it (:class:`LockShare`), so that the rest go to worker processes.
Used by :mod:`vtlab.sweep`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar

from vtlab.store import StoredRows

if TYPE_CHECKING:
    from vtlab.api import Result

T = TypeVar("T")

__all__ = [
    "CHUNK_ROWS",
    "CHUNK_SECONDS",
    "FORK_WORTH_S",
    "LOCK_BUDGET",
    "MAX_CHUNK",
    "MAX_CHUNK_RUNS",
    "PROBE_CHUNK",
    "THREADS_FIRST",
    "VERDICT_S",
    "LockShare",
    "Pace",
    "chunk_size",
    "chunks",
]


#: Most runs in one worker task until the sweep knows its runs' pace (:class:`Pace`).
MAX_CHUNK = 64
#: Most runs in one task (or one-job batch) of short runs, once their pace is known.
MAX_CHUNK_RUNS = 512
#: Seconds of one worker's time a task of short runs may hold (:class:`Pace`).
CHUNK_SECONDS = 0.25
#: Rows a task's tables may hold (a quarter of a store part's, :data:`MAX_PART_ROWS`).
CHUNK_ROWS = 60_000


class Pace:
    """How many runs the next task may hold: ``first`` (:data:`MAX_CHUNK`, or
    :data:`PROBE_CHUNK` for the threads of a sweep that starts in them) until runs have
    come back, then as many as take about :data:`CHUNK_SECONDS` of a worker's time and
    give :data:`CHUNK_ROWS` rows, between :data:`MAX_CHUNK` and
    :data:`MAX_CHUNK_RUNS`. Each task costs this process and a worker a fixed time
    (a round trip, its tables built, concatenated and stored: about a millisecond
    each), which bounds a sweep of sub-millisecond runs on many cores: 20 000 short
    ISO 15118 sessions on two workers cost this process 0.072 ms per run in tasks of
    64 runs and 0.044 ms in tasks of 256 (docs/cluster.md). A run's time is taken as
    ``workers`` x the seconds since the start / the runs back, an overestimate until
    every worker has returned a task (so tasks grow only then)."""

    def __init__(
        self,
        workers: int,
        clock: Callable[[], float] = time.monotonic,
        first: int = MAX_CHUNK,
    ) -> None:
        self.workers, self.clock, self.first = workers, clock, first
        self.started = clock()
        self.runs = self.rows = 0

    def kept(self, runs: int, res: Result | StoredRows) -> None:
        """Count ``runs`` back, with ``res`` their tables."""
        self.runs += runs
        if isinstance(res, StoredRows):
            self.rows += res.rows
            return
        frames = (res.flows, res.links, res.sessions, res.messages, res.traces, res.events)
        self.rows += sum(len(f) for f in frames if f is not None)

    def __call__(self) -> int:
        if not self.runs:
            return self.first
        elapsed = max(self.clock() - self.started, 1e-6)
        by_time = CHUNK_SECONDS * self.runs / (self.workers * elapsed)
        by_rows = CHUNK_ROWS * self.runs / max(self.rows, 1)
        return max(MAX_CHUNK, int(min(MAX_CHUNK_RUNS, by_time, by_rows)))


def chunk_size(runs: int, workers: int, most: int = MAX_CHUNK) -> int:
    """Points in the next worker task while ``runs`` are left: half of each worker's
    share of them, at most ``most`` runs (factoring: Hummel, Schonberg and Flynn,
    1992). The tasks shrink as the sweep goes on (see :func:`chunks`), so that the
    workers finish together: with equal chunks the last ones leave cores idle while a
    few workers finish theirs. A quarter of the share gave as many tasks again, each
    with its fixed cost (a round trip, a chunk's tables built): see docs/cluster.md."""
    return max(1, min(most, runs // (workers * 2)))


def chunks(
    todo: Sequence[T], workers: int, most: Callable[[], int] = lambda: MAX_CHUNK
) -> Iterator[Sequence[T]]:
    """``todo`` cut into worker tasks in order, each :func:`chunk_size` of what is
    left (at most ``most()`` runs, asked as each task is cut) but at least 1/32 of a
    worker's share of the whole (so that a large sweep does not end in hundreds of
    one-run tasks, each a round trip to this process)."""
    smallest = max(1, min(MAX_CHUNK, len(todo) // (workers * 32)))
    start = 0
    while start < len(todo):
        size = max(smallest, chunk_size(len(todo) - start, workers, most()))
        yield todo[start : start + size]
        start += size


# -- threads or processes ---------------------------------------------------------
#
# Threads need no fork, no copy of this process's pages and no pickled rows: on two
# cores a sweep of 240 runs of 20 MB took 0.85-0.87 s in two threads and 0.91 s in
# two freshly forked workers (1.69 s with one job; docs/cluster.md). But a run's
# Python part (its plan, its rows) holds the interpreter lock, which one thread at a
# time holds: where runs are short (an ISO 15118 session: 0.02 ms in the engine, 0.3
# ms in all) two threads were 1.16x one job and two workers 1.6x. So a sweep without
# live workers starts in threads, measures which share of its tasks' time was not
# the engine's, and hands the rest to worker processes when the threads together
# need more of the lock than LOCK_BUDGET.

#: Most workers a sweep without live workers starts in threads (measured on two
#: cores; more threads, unmeasured, could each need only LOCK_BUDGET / workers of
#: the lock, and the tasks they hold before the first comes back would be more).
THREADS_FIRST = 2
#: Most of the interpreter lock the threads may need together (each thread's share
#: of its tasks' time outside the engine, summed) for the sweep to stay in threads:
#: at their first task back two threads needed 0.03-0.05 of it for runs of 100 MB,
#: 0.07-0.09 for 10 and 20 MB, 0.14-0.20 for 5 MB (threads and workers equally
#: fast there), 0.24-0.41 for 2 MB (workers 5 % faster), 0.35-0.57 for 1 MB and 1.9
#: for ISO 15118 sessions (docs/cluster.md). At 0.25, 2 MB sweeps whose first task
#: measured 0.24 stayed in threads.
LOCK_BUDGET = 0.2
#: Runs in each thread's first task (of a sweep that starts in threads): the lock
#: share is measured on it, and where the runs need the lock they run that long at
#: the threads' slow pace before the rest go to workers. With tasks of MAX_CHUNK, the
#: first 128 runs of 1 200 ISO 15118 sessions took 0.37 s in two threads, about what
#: the two workers then took for 450 (docs/cluster.md, thirteenth pass).
PROBE_CHUNK = 16
#: Seconds of the threads' tasks (summed) a share needs behind it to send the runs
#: left to workers when it is within twice LOCK_BUDGET; a clearer share decides at
#: the first task back. A first task's one-time costs (its first conversions, 5-10 ms)
#: weigh more in a short task: on first tasks of 16 runs of 10 MB two threads needed
#: up to 0.25 of the lock (0.11-0.15 on tasks of 64) and went to workers; half a
#: second is about what two first tasks of 2 MB runs held when those decided alone.
VERDICT_S = 0.5
#: Least time (seconds of each worker's, at the threads' pace) the runs left must
#: hold for the sweep to fork workers for them: forking two and their first tasks
#: cost 15-25 ms (docs/cluster.md).
FORK_WORTH_S = 0.1


class LockShare:
    """The threads' tasks so far (runs, seconds in all, seconds in the engine: the
    core's own wall time, spent without the interpreter lock), and whether the runs
    left should go to worker processes (:meth:`bound`)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.runs = 0
        self.task_s = self.engine_s = 0.0
        self._lock = threading.Lock()

    def add(self, runs: int, task_s: float, engine_s: float) -> None:
        """Count a task of ``runs`` runs that took ``task_s`` seconds, ``engine_s`` of
        them in the engine."""
        with self._lock:
            self.runs += runs
            self.task_s += task_s
            self.engine_s += engine_s

    def share(self) -> float:
        """The share of the tasks' time outside the engine (0 to 1; 1 before any)."""
        return self._sums()[1]

    def _sums(self) -> tuple[int, float, float, float]:
        """Runs, the share (as :meth:`share`), seconds a run and the tasks' seconds,
        read at once."""
        with self._lock:
            runs, task_s, engine_s = self.runs, self.task_s, self.engine_s
        if task_s <= 0:
            return runs, 1.0, 0.0, 0.0
        share = min(1.0, max(0.0, 1.0 - engine_s / task_s))
        return runs, share, task_s / max(runs, 1), task_s

    def bound(self, left: int) -> bool:
        """Whether the ``left`` runs not yet back should go to worker processes: the
        threads together need more than :data:`LOCK_BUDGET` of the lock (within twice
        that, only once their tasks add up to :data:`VERDICT_S`), and those runs hold
        more than :data:`FORK_WORTH_S` of each worker's time at the pace of the
        threads' runs so far."""
        runs, share, per_run, task_s = self._sums()
        need = self.workers * share
        if not runs or need <= LOCK_BUDGET:
            return False
        if need <= 2 * LOCK_BUDGET and task_s < VERDICT_S:
            return False  # not clear yet: the next tasks measure more
        return left * per_run / self.workers > FORK_WORTH_S
