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
threads of the process too) waits until then, a fraction of a second.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["hold", "paused", "release"]

_LOCK = threading.Lock()
#: Batches now holding the collector paused, and whether it was enabled before them.
_STATE = {"holders": 0, "was_enabled": False}


def hold() -> None:
    """Pause the collector (another holder may have already); pair with
    :func:`release`."""
    with _LOCK:
        if _STATE["holders"] == 0:
            _STATE["was_enabled"] = gc.isenabled()
            gc.disable()
        _STATE["holders"] += 1


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
