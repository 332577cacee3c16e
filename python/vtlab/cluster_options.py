"""The command-line options that send runs to a Dask cluster (``--scheduler``,
``--cluster``, ``--task-runs``, ``--connect-timeout``), shared by ``vtlab sweep`` and
``vtlab reproduce``. Imports neither Dask nor anything heavy (start-up time)."""

from __future__ import annotations

import math
from typing import Annotated, Any

import typer

from vtlab.errors import CliError

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "ClusterOpt",
    "ConnectTimeoutOpt",
    "SchedulerOpt",
    "TaskRunsOpt",
    "check_cluster_options",
    "describe_client",
]

#: Seconds to wait for a scheduler before giving up.
DEFAULT_CONNECT_TIMEOUT = 10.0

SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        metavar="ADDRESS",
        help="Run on the Dask cluster of this scheduler (e.g. tcp://scheduler-host:8786); runs "
        "come back here and are stored by this process. Needs vtlab[cluster].",
        show_default=False,
    ),
]
ClusterOpt = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        metavar="local:N",
        help="Start a local Dask cluster of N worker processes (one thread each) for "
        "this command. Needs vtlab[cluster].",
        show_default=False,
    ),
]
TaskRunsOpt = Annotated[
    int | None,
    typer.Option(
        "--task-runs",
        metavar="K",
        help="Runs per cluster task (default: sized to about 1 s of work per task).",
        show_default=False,
    ),
]
ConnectTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--connect-timeout",
        metavar="SECONDS",
        help="How long to wait for the --scheduler to answer.",
    ),
]


def check_cluster_options(
    scheduler: str | None,
    cluster: str | None,
    jobs: int | None,
    task_runs: int | None,
    connect_timeout: float,
) -> bool:
    """Check the cluster options (before anything runs, without importing Dask);
    return whether the runs go to a cluster."""
    if scheduler is not None and cluster is not None:
        raise CliError("--cluster", "give either --scheduler or --cluster, not both")
    on_cluster = scheduler is not None or cluster is not None
    if cluster is not None:
        from vtlab.cluster import parse_cluster

        parse_cluster(cluster)
    if scheduler is not None and not scheduler.strip():
        raise CliError("--scheduler", "needs an address, e.g. tcp://scheduler-host:8786")
    if on_cluster and jobs is not None:
        which = "--scheduler" if scheduler is not None else "--cluster"
        raise CliError("--jobs", f"not used with {which} (the cluster's workers run the runs)")
    if task_runs is not None:
        if not on_cluster:
            raise CliError("--task-runs", "only used with --scheduler or --cluster")
        if task_runs < 1:
            raise CliError("--task-runs", f"must be at least 1, got {task_runs}")
    if not (connect_timeout > 0 and math.isfinite(connect_timeout)):
        raise CliError("--connect-timeout", f"must be a positive number, got {connect_timeout}")
    return on_cluster


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
