"""The worker processes of local sweeps, kept for this process's lifetime.

A sweep with several jobs runs its chunks of runs in worker processes forked from
this one (:mod:`vtlab.sweep`). Forking them costs the sweep's process a few tens of
milliseconds each (the page tables of a process with pandas and pyarrow loaded), and
each new worker's first runs copy the pages it shares with this process. So the
workers outlive the sweep that forked them: every later sweep of this process (a
study or reproduction runs many) reuses them while they are idle and healthy.

Lifetime and cleanup (docs/reliability.md, "Worker processes"):

- A sweep that ends normally leaves the workers idle, waiting for the next one; an
  idle worker ignores Ctrl-C (SIGINT reaches the terminal's whole process group).
- A sweep that ends with an exception (Ctrl-C, an error, a worker that died) closes
  them: they are stopped and reaped before the exception leaves the sweep.
- At this process's normal exit (also after SIGTERM where a handler turns it into an
  exception) the pool is shut down and its workers reaped.
- If this process dies without cleaning up (SIGKILL, SIGTERM's default action) the
  kernel kills every worker (``PR_SET_PDEATHSIG``, Linux); a worker whose parent is
  already gone when it starts exits at once.
- :func:`close` ends them on demand; a pool is forked again when next needed.

A worker is a copy of this process as it was when the pool was forked: what this
process changes later (a patched function, a loaded module) is not seen by the
workers until :func:`close` and the next sweep.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from vtlab import _core

__all__ = [
    "can_fork",
    "close",
    "die_with",
    "end",
    "forked",
    "interrupt",
    "live",
    "pids",
    "pool",
    "preload",
    "running",
]

T = TypeVar("T")

_POOL: list[tuple[Any, int]] = []  # the live pool and its number of workers, if any


def live(workers: int, most: int) -> Any:
    """The live pool when its size is between ``workers`` and ``most`` and its
    workers are all there, else ``None``."""
    if _POOL and workers <= _POOL[0][1] <= most and _healthy(_POOL[0][0]):
        return _POOL[0][0]
    return None


def can_fork() -> bool:
    """Whether forking workers is safe now: this process runs no other thread (a lock
    held by one at the fork would stay held in the child), and the system forks."""
    import multiprocessing

    return threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()


def preload() -> None:
    """Import what every worker needs for its first run (about 0.4 s of imports):
    forked workers share it, and a sweep's threads do not time it as their runs'.
    This process needs it at the end too (pandas_compat, which pyarrow loads on a
    first conversion, cost each worker's first task 4-5 ms; this process's rows
    need it to become frames)."""
    import pandas  # noqa: F401
    import pyarrow.pandas_compat  # noqa: F401
    import pyarrow.parquet  # noqa: F401


def pool(workers: int, most: int) -> Any:
    """A pool of between ``workers`` and ``most`` idle worker processes: the live one
    when its size fits (:func:`live`), else one of ``workers`` processes forked now
    (the live one closed first), or ``None`` where forking is not safe
    (:func:`can_fork`)."""
    made = live(workers, most)
    if made is not None:
        return made
    close()
    if not can_fork():
        return None
    preload()
    # (The first task's result is not waited for: the workers are there when it is
    # submitted, and a round trip to one of them cost the sweep's start a millisecond.)
    made, _ = forked(workers, _worker_init, os.getpid)
    _POOL.append((made, workers))
    return made


def forked(n: int, initializer: Callable[[int], None], first: Callable[[], T]) -> tuple[Any, Any]:
    """A pool of ``n`` processes forked now (fork is safe: :func:`can_fork`), each
    running ``initializer(this process's id)`` first, and the future of ``first``,
    its first task. With "fork" the pool forks every worker within the first
    submission, before it starts its thread that feeds them: now, while no other
    thread runs. The objects alive now move out of the collector's reach first: a
    child's collections would otherwise touch (and so copy) every page of this
    process's heap it shares. On a failure the pool is killed (:func:`end`)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    made = ProcessPoolExecutor(
        n,
        mp_context=multiprocessing.get_context("fork"),
        initializer=initializer,
        initargs=(os.getpid(),),
    )
    gc.freeze()
    try:
        return made, made.submit(first)
    except BaseException:
        end(made, kill=True)
        raise
    finally:
        gc.unfreeze()


def _healthy(p: Any) -> bool:
    """Whether every worker of ``p`` is alive and the pool not broken."""
    procs = getattr(p, "_processes", None) or {}
    return (
        not getattr(p, "_broken", False)
        and bool(procs)
        and all(proc.is_alive() for proc in procs.values())
    )


def pids(p: Any) -> list[int]:
    """The process ids of ``p``'s workers."""
    return list(getattr(p, "_processes", None) or {})


def interrupt(p: Any) -> None:
    """Ctrl-C for ``p``'s workers: each stops its running simulation (the runs its
    chunk had finished come back)."""
    for pid in pids(p):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)


def close(kill: bool = False) -> None:
    """End the live pool, if any: its idle workers exit; with ``kill`` the running
    ones are killed too (their chunks are lost) rather than waited for. Every worker
    is reaped before this returns."""
    if _POOL:
        end(_POOL.pop()[0], kill)


def end(p: Any, kill: bool) -> None:
    """End the pool ``p``: without ``kill`` every call submitted is made (those still
    queued too) and waited for; with ``kill`` the queued ones are cancelled and the
    running ones killed. Every process is reaped before this returns."""
    if kill:
        for pid in pids(p):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    p.shutdown(wait=True, cancel_futures=kill)


atexit.register(close)

# -- in a worker ------------------------------------------------------------------

_BUSY = [False]


def _worker_init(parent: int) -> None:
    """In a worker: die with the parent (``PR_SET_PDEATHSIG``: the kernel sends
    SIGKILL when the process that forked it ends, however it ends); Ctrl-C (SIGINT)
    asks a running simulation to stop, which then raises KeyboardInterrupt and ends
    the chunk, and is ignored while idle; Arrow's thread pools get one thread."""
    if not die_with(parent, signal.SIGKILL):
        os._exit(1)
    signal.signal(signal.SIGINT, _on_sigint)
    import pyarrow

    # One worker per core already: Arrow's thread pools (one thread per core each,
    # in every worker) would only add threads that compete for the same cores.
    pyarrow.set_cpu_count(1)
    pyarrow.set_io_thread_count(1)


def die_with(parent: int, sig: signal.Signals) -> bool:
    """In a child: ask the kernel to send ``sig`` when the process that forked it
    ends, however it ends (``PR_SET_PDEATHSIG``, Linux), and say whether that is
    still ``parent`` (False: the parent died before the request)."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1  # linux/prctl.h
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(sig), 0, 0, 0)
    return os.getppid() == parent


def _on_sigint(*_: Any) -> None:
    if _BUSY[0]:
        _core.request_stop()


@contextlib.contextmanager
def running() -> Iterator[None]:
    """In a worker, around a chunk of runs: Ctrl-C stops them; a stop requested
    during the chunk does not outlive it (the worker stays usable for later sweeps)."""
    _BUSY[0] = True
    try:
        yield
    finally:
        _BUSY[0] = False
        _core.request_stop(clear=True)
