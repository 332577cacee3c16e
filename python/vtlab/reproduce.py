"""``vtlab reproduce``: regenerate a paper's tables and figures with one command.

Registered on the CLI by :func:`register` (``reproduce.register(app)`` in cli.py).

    vtlab reproduce --list
    vtlab reproduce park2019 [--quick] [--out DIR] [--jobs N] [--profile ns3|linux]
                             [--runs N] [--quiet]
                             [--scheduler ADDRESS | --cluster local:N] [--task-runs K]

Every finished run is stored under ``OUT/runs`` as it completes, so an interrupted
campaign resumes where it stopped and a finished one re-renders its figures and
report without simulating.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer

from vtlab import experiments
from vtlab.cluster_options import (
    DEFAULT_CONNECT_TIMEOUT,
    ClusterOpt,
    ConnectTimeoutOpt,
    SchedulerOpt,
    TaskRunsOpt,
    check_cluster_options,
    describe_client,
)
from vtlab.errors import EXIT_INTERRUPTED, CliError, cli_errors

__all__ = ["register"]


def default_out(name: str, quick: bool) -> Path:
    """``out/<name>`` (``out/<name>-quick`` for ``--quick``, so the CI version never
    overwrites the full reproduction's figures)."""
    return Path("out") / (f"{name}-quick" if quick else name)


ExperimentArg = Annotated[
    str | None,
    typer.Argument(
        metavar="EXPERIMENT", help="Experiment to reproduce (see --list).", show_default=False
    ),
]
ListOpt = Annotated[bool, typer.Option("--list", help="List the available experiments and exit.")]
QuickOpt = Annotated[
    bool,
    typer.Option(
        "--quick",
        help="Reduced version for CI (fewer runs, shorter or smaller runs, fewer sweep "
        "points); seconds to a minute on 2 cores, depending on the study.",
    ),
]
FolderOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Output folder for figures, tables, report.md and the run store "
        "(default out/EXPERIMENT, or out/EXPERIMENT-quick with --quick).",
        show_default=False,
    ),
]
JobsOpt = Annotated[
    int | None,
    typer.Option("--jobs", "-j", help="Parallel runs (default: one per core).", show_default=False),
]
ProfileOpt = Annotated[
    str, typer.Option("--profile", help="TCP implementation profile: ns3 or linux.")
]
RunsOpt = Annotated[
    int | None,
    typer.Option(
        "--runs",
        "-n",
        help="Runs per grid point, overriding the experiment's (the paper's) number.",
        show_default=False,
    ),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or status lines.")]


def register(app: typer.Typer) -> None:
    """Add the ``reproduce`` command to the ``vtlab`` CLI."""

    @app.command("reproduce")
    @cli_errors
    def reproduce_command(
        name: ExperimentArg = None,
        list_: ListOpt = False,
        quick: QuickOpt = False,
        out: FolderOpt = None,
        jobs: JobsOpt = None,
        profile: ProfileOpt = "ns3",
        runs: RunsOpt = None,
        quiet: QuietOpt = False,
        scheduler: SchedulerOpt = None,
        cluster: ClusterOpt = None,
        task_runs: TaskRunsOpt = None,
        connect_timeout: ConnectTimeoutOpt = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        """Reproduce a paper's tables and figures, with a report comparing them to the
        published numbers."""
        from rich.console import Console

        from vtlab.experiments.common import Config

        if list_:
            for exp_name, description in experiments.describe():
                typer.echo(f"{exp_name:<12} {description}")
            return
        from vtlab.outputs import check_output_dir

        console = Console(stderr=True, highlight=False)
        if name is None:
            raise CliError(
                "EXPERIMENT", f"give one of: {', '.join(experiments.names())} (or --list)"
            )
        if profile not in ("ns3", "linux"):
            raise CliError("--profile", f"{profile!r} is not one of 'ns3', 'linux'")
        try:
            study = experiments.load_study(name)
        except KeyError as exc:
            raise CliError("EXPERIMENT", exc.args[0]) from None
        on_cluster = check_cluster_options(scheduler, cluster, jobs, task_runs, connect_timeout)
        folder = out if out is not None else default_out(name, quick)
        check_output_dir("--out", folder)

        def log(line: str) -> None:
            if not quiet:
                console.print(line, markup=False, soft_wrap=True)

        with contextlib.ExitStack() as stack:
            client = None
            if on_cluster:
                from vtlab.cluster import connect

                client = stack.enter_context(
                    connect(scheduler, cluster, connect_timeout=connect_timeout)
                )
                log(describe_client(client, scheduler, cluster))
            config = Config(
                out=folder,
                quick=quick,
                runs=runs,
                jobs=jobs,
                scheduler=client,
                task_runs=task_runs,
                profile=profile,
                progress=not quiet,
                log=log,
            )
            try:
                outcome = study.reproduce(config)
            except KeyboardInterrupt:
                console.print(
                    "interrupted: finished runs are kept in the run store; run the same "
                    "command again to resume",
                    markup=False,
                    soft_wrap=True,
                )
                raise typer.Exit(EXIT_INTERRUPTED) from None
        typer.echo(
            f"{name}: wrote {len(outcome.files)} files to {outcome.out} "
            f"(report: {outcome.out / 'report.md'})"
        )
        typer.echo(
            f"wall time {outcome.wall_s:.1f} s this invocation "
            f"({outcome.simulated} runs simulated, {outcome.loaded} loaded from the store); "
            f"campaign wall time {outcome.campaign_wall_s:.1f} s"
        )
