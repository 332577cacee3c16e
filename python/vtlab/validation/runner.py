"""Running a validation's cases: the ones not yet in the run cache, each appended to it
as it finishes.

A thread pool of ``jobs`` threads runs them: ns-3's runs and the other programs are
child processes the threads wait for, vtlab's runs go to the compiled core, which runs
without the interpreter lock. On an interruption the queued runs are cancelled, the
running children killed (:func:`vtlab.ns3.process.kill_children`) and, after Ctrl-C,
the simulations running in this process stopped (``vtlab._core.request_stop``: each
raises, so none leaves a record).
With a Dask client the vtlab runs go to its cluster (:func:`vtlab.cluster.run_calls`)
while the ns-3 runs stay on this machine, and only this process writes the cache.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Protocol

from vtlab import _core
from vtlab.ns3.process import allow_children, kill_children
from vtlab.validation.cache import RunCache

__all__ = ["VTLAB", "NS3", "Case", "Runner", "run_cases"]

#: The two sides of every comparison, as records name them.
VTLAB = "vtlab"
NS3 = "ns-3"


class Case(Protocol):
    """One run of one side, as a family plans it."""

    @property
    def side(self) -> str:
        """:data:`VTLAB` or :data:`NS3`."""
        ...

    @property
    def key(self) -> str:
        """Its key in the run cache (the family's ``record_key`` of its record)."""
        ...

    @property
    def label(self) -> str:
        """How progress and errors name it."""
        ...


#: Runs one case and returns its record.
Runner = Callable[[Any], dict[str, Any]]
#: Called once per case: (case, record or None, exception or None).
Finished = Callable[[Any, dict[str, Any] | None, BaseException | None], None]


def run_cases(
    cases: Sequence[Case],
    cache: RunCache,
    runner: Runner,
    *,
    jobs: int = 1,
    progress: bool = True,
    console: Any = None,
    client: Any = None,
    remote_runner: Runner | None = None,
) -> tuple[int, list[str]]:
    """Run the cases not yet in ``cache``, at most ``jobs`` at a time, and add each
    record to the cache as it finishes.  Returns (runs done, errors), an error being
    ``"<label>: <exception>"`` for a run that raised.

    With ``client`` (a ``distributed.Client``) the vtlab cases go to its cluster
    (``remote_runner`` on the workers, importable there) and the others stay here."""
    todo = [c for c in cases if c.key not in cache]
    errors: list[str] = []
    if not todo:
        return 0, errors
    from rich.progress import Progress

    from vtlab.progress import columns

    bar = Progress(*columns(), console=console, disable=not progress, transient=False)
    done = 0
    with bar:
        pid = bar.add_task("runs", total=len(cases), completed=len(cases) - len(todo))

        def finished(case: Any, rec: dict[str, Any] | None, exc: BaseException | None) -> None:
            nonlocal done
            if exc is not None:
                errors.append(f"{case.label}: {exc}")
            else:
                assert rec is not None
                cache.add(rec)
                done += 1
            bar.update(pid, advance=1, description=case.label)

        allow_children()
        if client is not None and remote_runner is not None:
            _run_split(todo, jobs, runner, remote_runner, client, finished)
        elif jobs <= 1:
            _run_serial(todo, runner, finished)
        else:
            _run_threads(todo, jobs, runner, finished)
    return done, errors


def _run_serial(todo: Sequence[Case], runner: Runner, finished: Finished) -> None:
    for case in todo:
        try:
            rec = runner(case)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - reported per run
            finished(case, None, exc)
        else:
            finished(case, rec, None)


def _run_threads(todo: Sequence[Case], jobs: int, runner: Runner, finished: Finished) -> None:
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="vtlab-validate")
    try:
        futures = {pool.submit(runner, c): c for c in todo}
        pending = set(futures)
        while pending:
            finished_now, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in finished_now:
                exc = fut.exception()
                finished(futures[fut], None if exc else fut.result(), exc)
    except BaseException as e:
        _stop(pool, isinstance(e, KeyboardInterrupt))
        raise
    pool.shutdown(wait=True)


def _stop(pool: ThreadPoolExecutor, interrupted: bool) -> None:
    """Cancel the queued runs and kill the running children; after Ctrl-C
    (``interrupted``) stop this process's running simulations too (every one of this
    process's, as a sweep's Ctrl-C does; after another error they finish)."""
    pool.shutdown(wait=False, cancel_futures=True)
    kill_children()
    if interrupted:
        _core.request_stop()
    try:
        pool.shutdown(wait=True)
    finally:
        if interrupted:
            _core.request_stop(clear=True)


def _run_split(
    todo: Sequence[Case],
    jobs: int,
    runner: Runner,
    remote_runner: Runner,
    client: Any,
    finished: Finished,
) -> None:
    """The local runs in a thread pool and the vtlab runs on the Dask cluster, at once."""
    from vtlab.cluster import run_calls

    lock = threading.Lock()

    def locked(case: Any, rec: dict[str, Any] | None, exc: BaseException | None) -> None:
        with lock:
            finished(case, rec, exc)

    local = [c for c in todo if c.side != VTLAB]
    remote = [c for c in todo if c.side == VTLAB]
    pool = ThreadPoolExecutor(max_workers=max(jobs, 1), thread_name_prefix="vtlab-validate")
    try:
        for case in local:

            def done(fut: Future[dict[str, Any]], case: Any = case) -> None:
                if not fut.cancelled():
                    exc = fut.exception()
                    locked(case, None if exc else fut.result(), exc)

            pool.submit(runner, case).add_done_callback(done)
        run_calls(
            client,
            remote_runner,
            remote,
            lambda c, rec: locked(c, rec, None),
            failed=lambda c, exc: locked(c, None, exc),
        )
    except BaseException as e:
        _stop(pool, isinstance(e, KeyboardInterrupt))
        raise
    pool.shutdown(wait=True)
