"""The case protocol of a validation family and the one driver that runs it.

A family (:class:`Family`) declares

* its **cases** (:meth:`Family.cases`): every run of both sides of its grid, each
  with its side (``vtlab`` or ``ns-3``), its cache key and a label
  (:class:`vtlab.validation.runner.Case`);
* how **each side runs** (:meth:`Family.run`: one case in a child process, returning
  its record; :attr:`Family.remote_runner`: the same on a Dask worker, for the vtlab
  side, or None);
* how a record is **keyed** in the run cache (:meth:`Family.record_key`);
* what is **compared and how runs pair** (:meth:`Family.compare`: records → the rows
  of the agreement table, with the statistics of :mod:`vtlab.validation.verdict`:
  independent samples by a Fieller ratio interval, paired runs by paired
  differences, orders by rank agreement);
* its **report** (:meth:`Family.write_report`, on :mod:`vtlab.validation.report`).

:func:`validate` does the rest for every family: the run cache in ``<out>/runs.jsonl``
(with the stored ns-3 runs of :attr:`Family.stored`), running what is missing in
threads or on a Dask cluster, resuming after an interruption, merging the ns-3 runs
into a store, and the run statistics of the report.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from vtlab.validation.cache import RunCache, store_runs
from vtlab.validation.runner import NS3, VTLAB, Case, Runner, run_cases

__all__ = ["Family", "ValidateResult", "cluster_client", "validate"]

#: The sides, in the order run-time sums are reported.
SIDES = (VTLAB, NS3)


class Family(ABC):
    """A validation family: a grid of cases run on both sides and compared."""

    #: The family's name on the command line (``vtlab validate NAME``).
    name: ClassVar[str]
    #: Read-only stored runs reused for keys ``runs.jsonl`` lacks.
    stored: Sequence[Path] = ()
    #: ``ns3`` or ``vtlab``: run that side only, compare nothing, write no report.
    only: str | None = None
    #: Runs a vtlab case on a Dask worker (a module-level function), or None.
    remote_runner: Runner | None = None

    @abstractmethod
    def cases(self) -> list[Case]:
        """Every run of the grid, in the order to start them (the slowest first)."""

    @abstractmethod
    def run(self, case: Any) -> dict[str, Any]:
        """Run one case (in a child process of its own) and return its record."""

    @abstractmethod
    def record_key(self, record: Mapping[str, Any]) -> str:
        """The cache key of a record: equal to the key of the case that made it."""

    @abstractmethod
    def compare(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The agreement table from the records of both sides."""

    @abstractmethod
    def write_report(
        self, out: Path, table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]
    ) -> dict[str, Path]:
        """Write the report; ``meta`` holds the run statistics of :func:`validate`."""


@dataclass
class ValidateResult:
    """What :func:`validate` did."""

    table: list[dict[str, Any]]
    paths: dict[str, Path]  #: empty with ``only``
    runs_done: int
    runs_cached: int
    errors: list[str]
    wall_s: float
    records: list[dict[str, Any]] = field(default_factory=list)


@contextlib.contextmanager
def cluster_client(
    scheduler: Any,
    cluster: str | None,
    connect_timeout: float | None,
    log: Callable[[str], None] | None = None,
) -> Iterator[Any]:
    """A Dask client for the vtlab runs (None without ``scheduler`` and ``cluster``)."""
    if scheduler is None and cluster is None:
        yield None
        return
    from vtlab import cluster as dask_cluster

    timeout = connect_timeout or dask_cluster.DEFAULT_CONNECT_TIMEOUT
    with dask_cluster.connect(scheduler, cluster, connect_timeout=timeout) as client:
        if log is not None:
            log(
                dask_cluster.describe_client(
                    client, scheduler if isinstance(scheduler, str) else None, cluster
                )
            )
        yield client


def validate(
    family: Family,
    out: Path,
    *,
    jobs: int = 1,
    progress: bool = True,
    console: Any = None,
    scheduler: Any = None,
    cluster: str | None = None,
    connect_timeout: float | None = None,
    store_ns3: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> ValidateResult:
    """Run (or resume) ``family``'s grid into ``out`` and write its report.

    ``scheduler`` (a Dask scheduler address or a ``distributed.Client``) or
    ``cluster="local:N"`` send the vtlab runs to a Dask cluster; the ns-3 runs stay
    on this machine, ``jobs`` at a time.  ``store_ns3``: afterwards, merge the grid's
    ns-3 runs into that gzipped file (:func:`~vtlab.validation.cache.store_runs`)."""
    started = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cache = RunCache(out / "runs.jsonl", family.record_key, family.stored)
    cases = family.cases()
    cached = sum(1 for c in cases if c.key in cache)
    from_store = sum(1 for c in cases if cache.is_stored(c.key))
    with cluster_client(scheduler, cluster, connect_timeout, log) as client:
        done, errors = run_cases(
            cases,
            cache,
            family.run,
            jobs=jobs,
            progress=progress,
            console=console,
            client=client,
            remote_runner=family.remote_runner,
        )
    records = [r for r in (cache.get(c.key) for c in cases) if r is not None]
    if store_ns3 is not None:
        n = store_runs(store_ns3, [r for r in records if r["side"] == NS3], family.record_key)
        if log is not None:
            log(f"stored the grid's ns-3 runs in {store_ns3} ({n} runs in it)")
    if family.only is not None:
        wall = time.perf_counter() - started
        return ValidateResult([], {}, done, cached, errors, wall, records)
    table = family.compare(records)
    wall = time.perf_counter() - started
    meta = {
        "run_time_s": {
            side: sum(float(r.get("wall_s") or 0.0) for r in records if r["side"] == side)
            for side in SIDES
        },
        "wall_s": wall,
        "runs_done": done,
        "runs_cached": cached,
        "runs_stored": from_store,
        "errors": errors,
        "jobs": jobs,
        "date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
    }
    paths = family.write_report(out, table, meta)
    return ValidateResult(table, paths, done, cached, errors, wall, records)
