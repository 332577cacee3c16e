"""Running a sweep's runs on a Dask cluster (``dask.distributed``, an optional extra).

:meth:`vtlab.sweep.Sweep.run` comes here when given ``scheduler=`` (the address of a
running Dask scheduler, or a ``distributed.Client``) or ``cluster="local:N"`` (a
local cluster of N worker processes, one thread each). Without either, nothing in
this module is used and Dask is never imported.

How it works:

* The runs still to do are grouped into *tasks* of several runs each
  (``task_runs``, or sized automatically so that a task takes about
  :data:`TARGET_TASK_S` seconds: the first tasks hold one run each and measure how
  long a run takes).
* A task is :func:`run_task` on a worker: it runs its points with
  ``vtlab._core.run`` and returns the core's raw column dicts (small, no pandas).
* The client keeps a bounded number of tasks in flight (:data:`IN_FLIGHT_PER_THREAD`
  per worker thread), and converts each run as its task's result arrives and
  hands it to the store's writer, which commits runs in parts
  (:mod:`vtlab.store`). Only the client writes the store, so workers need no shared
  file system; an interrupted client commits what it has received, a killed one
  loses its part not yet committed and the tasks in flight, and the same call again
  resumes.
* Dask reschedules the tasks of a lost worker on the others; a task that raises
  is retried :data:`RETRIES` times.
* Every task reports the vtlab version and core build it ran with; a worker with
  another build is refused (stored runs are keyed by the build).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from vtlab import _core
from vtlab.errors import CliError

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "MAX_CONNECT_TIMEOUT",
    "MAX_LOCAL_WORKERS_PER_CORE",
    "RETRIES",
    "check_connect_timeout",
    "connect",
    "describe_client",
    "max_local_workers",
    "parse_cluster",
    "run_calls",
    "run_points",
    "run_task",
]

#: Times a task that raised is submitted again (tasks of a lost worker are
#: rescheduled by Dask itself, up to ``distributed.scheduler.allowed-failures``).
RETRIES = 2

#: Wall time a task aims at when its size is chosen automatically.
TARGET_TASK_S = 1.0

#: Seconds to wait for a scheduler before giving up.
DEFAULT_CONNECT_TIMEOUT = 10.0

#: Largest ``--connect-timeout`` (seconds): one hour.
MAX_CONNECT_TIMEOUT = 3600.0

#: ``--cluster local:N`` starts at most this many worker processes per core of this
#: machine (each is a Python process of about 100 MB running single-threaded
#: simulations: more workers than cores only share the cores).
MAX_LOCAL_WORKERS_PER_CORE = 4

#: Address schemes whose location is ``host:port`` over TCP, so that a refused
#: connection can be told at once (Dask itself retries until the timeout).
TCP_SCHEMES = ("tcp", "tls", "ws", "wss")

#: Seconds to wait for the workers of ``--cluster local:N`` to start.
LOCAL_START_TIMEOUT = 120.0

#: Upper bound of the automatic task size.
MAX_TASK_RUNS = 2000

#: Tasks kept in flight per worker thread (so no worker waits for the client).
IN_FLIGHT_PER_THREAD = 3

INSTALL_HINT = "dask.distributed is not installed (pip install 'vtlab[cluster]')"


def max_local_workers() -> int:
    """The most workers ``--cluster local:N`` may start on this machine."""
    return MAX_LOCAL_WORKERS_PER_CORE * (os.cpu_count() or 1)


def parse_cluster(text: str) -> int:
    """``local:N`` → N (worker processes, at most :func:`max_local_workers`);
    ``local`` → one per core."""
    kind, sep, n = text.strip().partition(":")
    most = max_local_workers()
    if kind == "local" and not sep:
        return os.cpu_count() or 1
    if kind == "local" and n.strip().isdigit() and 1 <= int(n) <= most:
        return int(n)
    if kind == "local" and n.strip().isdigit() and int(n) >= 1:
        raise CliError(
            "--cluster",
            f"{text.strip()!r} starts more workers than this machine has cores for: at most "
            f"local:{most} ({MAX_LOCAL_WORKERS_PER_CORE} per core, {os.cpu_count() or 1} cores)",
        )
    raise CliError(
        "--cluster", f"expected local:N (N worker processes, 1 <= N <= {most}), got {text!r}"
    )


def check_connect_timeout(seconds: float) -> None:
    """``--connect-timeout`` in (0, :data:`MAX_CONNECT_TIMEOUT`] seconds."""
    if not (0 < seconds <= MAX_CONNECT_TIMEOUT):  # also refuses NaN
        raise CliError(
            "--connect-timeout",
            f"{seconds:g} s is outside (0, {MAX_CONNECT_TIMEOUT:g}] s (at most one hour)",
        )


def describe_client(client: Any, scheduler: str | None, cluster: str | None) -> str:
    """One status line about the cluster the runs go to."""
    try:
        info = client.scheduler_info()
        workers = info.get("workers", {})
        threads = sum(int(w.get("nthreads", 0)) for w in workers.values())
        address = info.get("address", scheduler)
    except Exception:  # noqa: BLE001 - only a status line
        workers, threads, address = {}, 0, scheduler
    where = f"local cluster {cluster} at {address}" if cluster else f"scheduler {address}"
    text = f"running on the {where}: {len(workers)} workers, {threads} threads"
    return text + ("" if workers else " (waiting for workers to join)")


def _distributed(field: str) -> Any:
    try:
        import distributed
    except ImportError:
        raise CliError(field, INSTALL_HINT) from None
    return distributed


@contextlib.contextmanager
def connect(
    scheduler: Any = None,
    cluster: str | None = None,
    *,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
) -> Iterator[Any]:
    """A ``distributed.Client``: to ``scheduler`` (an address such as
    ``tcp://scheduler-host:8786``, or a client, used as is and left open), or to a new local
    cluster for ``cluster="local:N"`` (closed, with its workers, on exit).

    Raises :class:`~vtlab.errors.CliError` (a ``ValueError``) naming ``--scheduler``
    or ``--cluster`` when Dask is missing, the cluster text is malformed or the
    scheduler cannot be reached within ``connect_timeout`` seconds.
    """
    if scheduler is not None and cluster is not None:
        raise CliError("--cluster", "give either --scheduler or --cluster, not both")
    if scheduler is None and cluster is None:
        raise ValueError("connect needs a scheduler or a cluster")
    if cluster is not None:
        n = parse_cluster(cluster)
        _distributed("--cluster")
        import logging

        from distributed import Client
        from distributed.deploy.subprocess import SubprocessCluster

        # Workers in subprocesses of their own (not multiprocessing children), so
        # that a calling script needs no ``if __name__ == "__main__"`` guard.
        with (
            SubprocessCluster(
                n_workers=n,
                threads_per_worker=1,
                host="127.0.0.1",
                dashboard_address=None,
                worker_class="distributed.Worker",
                silence_logs=logging.ERROR,
            ) as local,
            Client(local, set_as_default=False) as client,
        ):
            try:
                client.wait_for_workers(n, timeout=LOCAL_START_TIMEOUT)
            except (TimeoutError, OSError) as e:
                raise CliError(
                    "--cluster",
                    f"{n} local workers did not start within {LOCAL_START_TIMEOUT:g} s ({e})",
                ) from None
            yield client
        return
    if not isinstance(scheduler, str):  # a client the caller owns
        yield scheduler
        return
    distributed = _distributed("--scheduler")
    check_connect_timeout(connect_timeout)
    started = time.monotonic()
    _reachable(scheduler, connect_timeout)
    left = max(connect_timeout - (time.monotonic() - started), 1.0)
    client = _open_client(distributed, scheduler, left)
    try:
        yield client
    finally:
        client.close()


def _reachable(address: str, timeout: float) -> None:
    """Check ``address`` before Dask tries it: a known scheme and, for TCP schemes, a
    host and port that accept a connection, and over plain ``tcp`` a server that
    speaks first as a Dask scheduler does (its handshake).  Dask retries a refused
    connection until its timeout, and waits for the handshake of a server that
    accepted without any; here both are errors, at once and within ``timeout``."""
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import get_backend

    def refuse(problem: str) -> CliError:
        return CliError("--scheduler", f"cannot connect to {address!r}: {problem}")

    try:
        scheme, location = parse_address(address)
        get_backend(scheme)
        if scheme not in TCP_SCHEMES:
            return
        host, port = parse_host_port(location)
    except (ValueError, TypeError, ImportError) as e:
        raise refuse(str(e)) from None
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            if scheme == "tcp":
                sock.settimeout(max(deadline - time.monotonic(), 0.001))
                if not sock.recv(1):
                    raise refuse("the server closed the connection (not a Dask scheduler?)")
    except ConnectionRefusedError:
        raise refuse("connection refused (no scheduler listens there)") from None
    except socket.gaierror as e:
        raise refuse(f"cannot resolve host {host!r} ({e.strerror or e})") from None
    except TimeoutError:
        raise refuse(
            f"no answer within {timeout:g} s (--connect-timeout; not a Dask scheduler?)"
        ) from None
    except OSError as e:
        raise refuse(e.strerror or str(e)) from None


def _open_client(distributed: Any, address: str, timeout: float) -> Any:
    """``distributed.Client(address)``.  A client whose start fails is closed here, at
    once: left to the garbage collector, its ``__del__`` waits for its event loop and
    prints a traceback 20 s after the error."""
    started: list[Any] = []

    class _Client(distributed.Client):  # type: ignore[misc,name-defined]
        def start(self, **kwargs: Any) -> None:
            started.append(self)
            super().start(**kwargs)

    try:
        return _Client(address, timeout=timeout, set_as_default=False)
    except (OSError, ValueError, TypeError) as e:
        for half in started:
            with contextlib.suppress(Exception):
                half.close(timeout=1)
        raise CliError("--scheduler", f"cannot connect to {address!r}: {e}") from None


def run_task(
    items: Sequence[tuple[str, str, int]], trace: bool, events: bool = False
) -> tuple[str, str, float, list[tuple[str, dict[str, Any]]]]:
    """Run on a worker: every ``(key, scenario JSON, seed)`` of ``items`` (with sampled
    traces and typed events as ``trace`` and ``events`` say).

    Returns ``(version, core build, seconds, [(key, raw result), ...])`` where each
    raw result is the dict of column lists that ``vtlab._core.run`` returns.
    """
    started = time.perf_counter()
    out = [(key, _core.run(spec, seed, trace, events=events)) for key, spec, seed in items]
    return (*_build(), time.perf_counter() - started, out)


def _build() -> tuple[str, str]:
    """This process's vtlab version and core build."""
    from vtlab.api import core_build

    return _core.version(), core_build()


def _check_build(got: tuple[str, str], want: tuple[str, str]) -> None:
    if got != want:
        raise CliError(
            "--scheduler",
            f"a worker runs vtlab {got[0]} (core build {got[1]}), this client "
            f"{want[0]} (core build {want[1]}): install the same build on every worker",
        )


def _call_versioned(fn: Callable[[Any], Any], item: Any) -> tuple[tuple[str, str], Any]:
    """Run on a worker: ``fn(item)``, with the worker's vtlab version and core build."""
    return _build(), fn(item)


def run_calls(
    client: Any,
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    finish: Callable[[Any, Any], None],
    *,
    failed: Callable[[Any, BaseException], None] | None = None,
) -> None:
    """Run ``fn(item)`` on ``client``'s cluster, one task per item, and call
    ``finish(item, result)`` on this process as each task returns (``failed(item,
    exception)`` for a task that raised on every try; without ``failed`` the
    exception propagates).  For runs that take
    long enough (tens of milliseconds or more) that grouping them is not worth it,
    such as ``vtlab validate``'s. ``fn`` must be importable on the workers."""
    from distributed import as_completed

    want = _build()
    queue = list(items)
    next_i = 0
    by_future: dict[Any, Any] = {}
    pending = as_completed(loop=client.loop)

    def fill() -> None:
        nonlocal next_i
        limit = IN_FLIGHT_PER_THREAD * max(_threads(client), 1)
        while next_i < len(queue) and pending.count() < limit:
            fut = client.submit(_call_versioned, fn, queue[next_i], pure=False, retries=RETRIES)
            by_future[fut.key] = queue[next_i]
            pending.add(fut)
            next_i += 1

    try:
        fill()
        for future in pending:
            item = by_future.pop(future.key)
            if failed is not None and future.status == "error":
                failed(item, future.exception())
            else:
                got, result = future.result()
                _check_build(got, want)
                finish(item, result)
            fill()
    except BaseException:
        futures = list(pending.futures)
        pending.clear()
        with contextlib.suppress(Exception):
            client.cancel(futures)
        raise


def _threads(client: Any) -> int:
    try:
        return sum(client.nthreads().values())
    except Exception:  # noqa: BLE001 - a scheduler hiccup: size as if for one thread
        return 1


def run_points(
    client: Any,
    todo: Sequence[Any],
    trace: bool,
    finish: Callable[[Sequence[Any], Sequence[dict[str, Any]]], None],
    advance: Callable[[], None],
    *,
    task_runs: int | None = None,
    events: bool = False,
) -> None:
    """Run the points ``todo`` (:class:`vtlab.sweep.Point`) on ``client``'s cluster
    (with traces and events as ``trace`` and ``events`` say); call ``finish(points,
    raws)`` on this process with each task's runs as it returns (consecutive points of
    ``todo``, in order), then ``advance()`` once per run."""
    from distributed import as_completed

    if task_runs is not None and task_runs < 1:
        raise CliError("--task-runs", f"must be at least 1, got {task_runs}")
    want = _build()
    by_key = {p.key: p for p in todo}
    specs: dict[int, str] = {}  # one JSON text per scenario object

    def item(p: Any) -> tuple[str, str, int]:
        spec = specs.get(id(p.scenario))
        if spec is None:
            spec = specs[id(p.scenario)] = p.scenario.to_json()
        return (p.key, spec, p.seed)

    queue = list(todo)
    next_i = 0
    per_run_s: float | None = None  # measured on the workers, smoothed
    threads = _threads(client)
    threads_checked = time.monotonic()

    def size() -> int:
        if task_runs is not None:
            return task_runs
        if per_run_s is None:
            return 1  # the first tasks measure how long a run takes
        k = int(TARGET_TASK_S / max(per_run_s, 1e-6))
        # Near the end, smaller tasks keep every worker busy.
        k = min(k, max(1, (len(queue) - next_i) // (2 * max(threads, 1))))
        return max(1, min(k, MAX_TASK_RUNS))

    def submit() -> Any:
        nonlocal next_i
        k = size()
        batch = [item(p) for p in queue[next_i : next_i + k]]
        next_i += len(batch)
        return client.submit(run_task, batch, trace, events, pure=False, retries=RETRIES)

    pending = as_completed(loop=client.loop)
    try:
        while next_i < len(queue) and pending.count() < IN_FLIGHT_PER_THREAD * max(threads, 1):
            pending.add(submit())
        for future in pending:
            version, build, seconds, runs = future.result()
            _check_build((version, build), want)
            if runs:
                finish([by_key[key] for key, _ in runs], [raw for _, raw in runs])
            for _ in runs:
                advance()
            if runs:
                measured = seconds / len(runs)
                per_run_s = measured if per_run_s is None else 0.7 * per_run_s + 0.3 * measured
            if time.monotonic() - threads_checked > 2.0:  # workers may come and go
                threads = _threads(client)
                threads_checked = time.monotonic()
            while next_i < len(queue) and pending.count() < IN_FLIGHT_PER_THREAD * max(threads, 1):
                pending.add(submit())
    except BaseException:
        futures = list(pending.futures)
        pending.clear()
        with contextlib.suppress(Exception):
            client.cancel(futures)
        raise
