"""Calls run side by side in processes forked for them, each child a copy of this
process: what a call uses (a study's runs and summaries, its drawing functions) is
inherited, not pickled; only what it returns comes back (pickled).

Used for a study's figures (:mod:`vtlab.experiments.pipeline`): a reproduction draws
its figures after its runs, one at a time, 0.1-1 s each, which on two cores took as
long as the quick reproductions' runs (docs/cluster.md, "Figures drawn side by
side"); and for the rare-event estimates of several settings (:mod:`vtlab.advice`:
``vtlab advise``, the ISO 15118 study's rare-event table), each many sessions in
turn. :func:`fork_map` calls them in ``jobs`` forked children, or here one by one
where forking is not safe (another thread runs: the kept sweep workers' feeder is
closed first, see :func:`vtlab.workers.close`) or would not help. :func:`started`
starts them and lets this process do other work meanwhile (a study checks its claims
while its figures are drawn).

Cleanup: the children die with this process (``PR_SET_PDEATHSIG``), ignore Ctrl-C
(this process stops them: on any exception here every child is killed and reaped
before the exception leaves :func:`fork_map`, or :func:`started`'s block), and are
reaped before it returns.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import as_completed
from typing import Any, TypeVar

from vtlab import workers

__all__ = ["fork_map", "started"]

T = TypeVar("T")

#: The calls of the running :func:`fork_map`, which its children inherit.
_CALLS: list[Callable[[], Any]] = []


def fork_map(
    calls: Sequence[Callable[[], T]],
    jobs: int,
    done: Callable[[int, T], None] | None = None,
) -> list[T]:
    """``[c() for c in calls]``, the calls spread over up to ``jobs`` forked children
    (each takes the next call not yet taken), in this process where ``jobs`` or the
    calls are fewer than two or a fork is not safe. ``done(i, result)`` is called
    here as each call returns (in the order they return; it shows progress). An
    exception raised by a call is raised here (the first in the calls' order), once
    every child is gone."""
    with started(calls, jobs, done) as results:
        return results()


@contextlib.contextmanager
def started(
    calls: Sequence[Callable[[], T]],
    jobs: int,
    done: Callable[[int, T], None] | None = None,
) -> Iterator[Callable[[], list[T]]]:
    """:func:`fork_map`'s calls started now, for this process to do other work while
    the children make them: gives a function that waits for them and returns their
    results (as :func:`fork_map`; ``done`` is called from it). Where they run here
    (one job, one call, a fork not safe) they are made now, before the block. The
    block leaving by an exception kills the children still running; leaving without
    asking for the results waits for them. While the block runs, another
    :func:`fork_map` makes its calls here, one by one (this process runs the pool's
    thread then, so a fork is not safe)."""
    n = min(jobs, len(calls))
    if n >= 2 and not _CALLS:
        workers.close()  # the kept sweep workers' feeder thread would make a fork unsafe
    if n < 2 or _CALLS or not workers.can_fork():
        out = _here(calls, done)
        yield lambda: out
        return
    _CALLS[:] = calls
    try:
        pool, first = workers.forked(n, _child_init, functools.partial(_call, 0))
        finished = left = False
        try:
            futures = [first, *(pool.submit(_call, i) for i in range(1, len(calls)))]

            def results() -> list[T]:
                nonlocal finished
                if done is not None:
                    index = {f: i for i, f in enumerate(futures)}
                    for f in as_completed(futures):
                        if f.exception() is not None:
                            break  # raised below, after the calls before it
                        done(index[f], f.result())
                out = [f.result() for f in futures]
                finished = True
                return out

            yield results
            left = True
        finally:  # on any exception the children still running are killed
            workers.end(pool, kill=not (finished or left))
    finally:
        _CALLS.clear()


def _here(calls: Sequence[Callable[[], T]], done: Callable[[int, T], None] | None) -> list[T]:
    """The calls one by one in this process, ``done`` after each."""
    out = []
    for i, call in enumerate(calls):
        out.append(call())
        if done is not None:
            done(i, out[-1])
    return out


def _child_init(parent: int) -> None:
    """In a child: die with this process; Ctrl-C is this process's to handle."""
    if not workers.die_with(parent, signal.SIGKILL):
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(i: int) -> Any:
    return _CALLS[i]()
