"""Python's cyclic garbage collector, paused while a batch of runs piles up.

A run's raw result, as the core returns it, is a dict of column lists: a hundred or
so containers, none of them in a reference cycle. Holding a batch of them (a worker's
task of up to 512 short runs, a batch of the one-job path) kept the collector busy:
every few runs a collection, and as the batch survived, full ones, each walking every
object of the process, pandas' and pyarrow's included. For a 2 s ISO 15118 session
that was a third of a worker's time (a task of 512 such runs: 200 µs a run with the
collector, 130 µs without; docs/cluster.md). So a batch's runs and its tables are made
with the collector paused (:func:`paused`): it resumes when the last batch that
paused it ends, if it was enabled before. Cyclic garbage made meanwhile (by other
threads of the process too) waits until then, a fraction of a second. Where batches
of several threads overlap without end (the threads of a long sweep), a batch that
starts after the collector has been paused for :data:`MAX_PAUSE_S` collects first, so
that such garbage waits no longer than that. :func:`vtlab.run_many`, which holds every
run's raw result until it returns, pauses it in batches of half a second
(:class:`Batches`): 5 000 runs of a 20 kB transfer, 103–111 µs a run with the collector
running, 48–49 µs so (docs/python-api.md).
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections.abc import Callable, Iterator

__all__ = ["Batches", "hold", "paused", "release"]

#: Seconds the collector stays paused by overlapping batches before the next batch
#: to start collects (a full collection of a process with pandas loaded: tens of ms).
MAX_PAUSE_S = 2.0

_LOCK = threading.Lock()
#: Batches now holding the collector paused, whether it was enabled before them, and
#: since when (monotonic seconds) garbage has waited.
_STATE: dict[str, float] = {"holders": 0, "was_enabled": False, "since": 0.0}


def hold() -> None:
    """Pause the collector (another holder may have already); pair with
    :func:`release`."""
    collect = False
    with _LOCK:
        now = time.monotonic()
        if _STATE["holders"] == 0:
            _STATE["was_enabled"] = gc.isenabled()
            _STATE["since"] = now
            gc.disable()
        elif _STATE["was_enabled"] and now - _STATE["since"] >= MAX_PAUSE_S:
            _STATE["since"] = now
            collect = True
        _STATE["holders"] += 1
    if collect:
        gc.collect()


def release() -> None:
    """End one :func:`hold`: the last one re-enables the collector if it was enabled
    before the first."""
    with _LOCK:
        _STATE["holders"] -= 1
        if _STATE["holders"] == 0 and _STATE["was_enabled"]:
            gc.enable()


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The collector paused for the ``with`` block (see the module)."""
    hold()
    try:
        yield
    finally:
        release()


class Batches:
    """The collector paused across a loop that holds what it makes (a run's raw
    result each time), in batches of at most ``seconds``: :meth:`next` between two
    items ends a batch that has lasted that long and starts the next, collecting the
    young generations in between (``gc.collect(1)``: what the batch made, not the
    whole process), so that cyclic garbage made meanwhile waits no longer than a
    batch. Use as a context manager around the loop."""

    def __init__(self, seconds: float = 0.5, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds, self.clock = seconds, clock
        self.since = 0.0

    def __enter__(self) -> Batches:
        hold()
        self.since = self.clock()
        return self

    def next(self) -> None:
        """Between two items: a new batch where this one has lasted ``seconds``."""
        if self.clock() - self.since < self.seconds:
            return
        release()
        if gc.isenabled():  # no other batch holds it paused
            gc.collect(1)
        hold()
        self.since = self.clock()

    def __exit__(self, *_: object) -> None:
        release()
