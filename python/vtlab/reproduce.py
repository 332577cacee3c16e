"""``vtlab reproduce``: regenerate a paper's tables and figures with one command; and
``vtlab study``: run one of vtlab's own studies the same way.

Registered on the CLI by :func:`register` (``reproduce.register(app)`` and
``reproduce.register(app, "study")`` in cli.py).

    vtlab reproduce --list
    vtlab reproduce park2019 [--quick] [--out DIR] [--jobs N] [--profile ns3|linux]
                             [--runs N] [--quiet]
                             [--scheduler ADDRESS | --cluster local:N] [--task-runs K]
    vtlab study --list
    vtlab study iso15118 [--quick] [--out DIR] [--jobs N] [--seeds N] [--quiet]
                         [--scheduler ADDRESS | --cluster local:N] [--task-runs K]

A study compares its stacks itself, so ``vtlab study`` has no ``--profile``; its
``--seeds`` (alias ``--runs``) sets the runs per grid point.

Every finished run is stored under ``OUT/runs`` as it completes, so an interrupted
campaign resumes where it stopped and a finished one re-renders its figures and
report without simulating.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

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
from vtlab.outputs import check_output_dir

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
StudyArg = Annotated[
    str | None,
    typer.Argument(metavar="STUDY", help="Study to run (see --list).", show_default=False),
]
ListOpt = Annotated[bool, typer.Option("--list", help="List the available experiments and exit.")]
StudyListOpt = Annotated[bool, typer.Option("--list", help="List the available studies and exit.")]
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
        "(default out/NAME, or out/NAME-quick with --quick).",
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
SeedsOpt = Annotated[
    int | None,
    typer.Option(
        "--seeds",
        "--runs",
        "-n",
        help="Runs (seeds 1..N) per grid point, overriding the study's number.",
        show_default=False,
    ),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or status lines.")]


def register(app: typer.Typer, command: str = "reproduce") -> None:
    """Add ``vtlab reproduce`` (the paper reproductions) to the ``vtlab`` CLI or, with
    ``command="study"``, ``vtlab study`` (vtlab's own studies): the same options but
    ``--profile``, with ``--seeds`` for ``--runs``, run by the same code."""
    if command == "reproduce":

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
            run_study(command, name, list_, quick, out, jobs, profile, runs, quiet,
                      scheduler, cluster, task_runs, connect_timeout)  # fmt: skip

    elif command == "study":

        @app.command("study")
        @cli_errors
        def study_command(
            name: StudyArg = None,
            list_: StudyListOpt = False,
            quick: QuickOpt = False,
            out: FolderOpt = None,
            jobs: JobsOpt = None,
            seeds: SeedsOpt = None,
            quiet: QuietOpt = False,
            scheduler: SchedulerOpt = None,
            cluster: ClusterOpt = None,
            task_runs: TaskRunsOpt = None,
            connect_timeout: ConnectTimeoutOpt = DEFAULT_CONNECT_TIMEOUT,
        ) -> None:
            """Run one of vtlab's own studies (no paper: its findings are its own):
            tables, figures and a report."""
            run_study(command, name, list_, quick, out, jobs, "ns3", seeds, quiet,
                      scheduler, cluster, task_runs, connect_timeout)  # fmt: skip

    else:
        raise ValueError(f"command must be 'reproduce' or 'study', got {command!r}")


def run_study(
    kind: str,
    name: str | None,
    list_: bool,
    quick: bool,
    out: Path | None,
    jobs: int | None,
    profile: str,
    runs: int | None,
    quiet: bool,
    scheduler: str | None,
    cluster: str | None,
    task_runs: int | None,
    connect_timeout: float,
) -> None:
    """The body of ``vtlab reproduce`` and ``vtlab study`` (``kind``)."""
    from rich.console import Console

    from vtlab.experiments.common import Config

    if list_:
        for exp_name, description in experiments.describe(kind):
            typer.echo(f"{exp_name:<12} {description}")
        return
    console = Console(stderr=True, highlight=False)
    study = _load_study(kind, name, profile, runs)
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
            verb=kind,
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
    _print_outcome(name, outcome)


def _load_study(kind: str, name: str | None, profile: str, runs: int | None) -> Any:
    """The study ``name`` of ``kind``, after checking the options only the CLI checks."""
    argument = "EXPERIMENT" if kind == "reproduce" else "STUDY"
    if name is None:
        raise CliError(argument, f"give one of: {', '.join(experiments.names(kind))} (or --list)")
    if profile not in ("ns3", "linux"):
        raise CliError("--profile", f"{profile!r} is not one of 'ns3', 'linux'")
    if kind == "study" and runs is not None and runs < 1:  # (reproduce: Config says so)
        raise CliError("--seeds", f"must be at least 1, got {runs}")
    try:
        return experiments.load_study(name, kind)
    except KeyError as exc:
        raise CliError(argument, exc.args[0]) from None


def _print_outcome(name: str | None, outcome: Any) -> None:
    """What a finished study wrote, and how long it took."""
    typer.echo(
        f"{name}: wrote {len(outcome.files)} files to {outcome.out} "
        f"(report: {outcome.out / 'report.md'})"
    )
    typer.echo(
        f"wall time {outcome.wall_s:.1f} s this invocation "
        f"({outcome.simulated} runs simulated, {outcome.loaded} loaded from the store); "
        f"campaign wall time {outcome.campaign_wall_s:.1f} s"
    )
