"""``vtlab reproduce``: regenerate a paper's tables and figures with one command; and
``vtlab study``: run one of vtlab's own studies the same way.

Registered on the CLI by :func:`register` (``reproduce.register(app)`` and
``reproduce.register(app, "study")`` in :mod:`vtlab.cli.app`).

    vtlab reproduce --list
    vtlab reproduce park2019 [--quick] [--out DIR] [--jobs N] [--profile ns3|linux|ns2]
                             [--runs N] [--quiet]
                             [--scheduler ADDRESS | --cluster local:N] [--task-runs K]
    vtlab study --list
    vtlab study iso15118 [--quick] [--out DIR] [--jobs N] [--seeds N] [--quiet]
    vtlab study iso15118 --real [--quick] [--out DIR] [--seeds N] [--quiet]
                         [--scheduler ADDRESS | --cluster local:N] [--task-runs K]

A study compares its stacks itself, so ``vtlab study`` has no ``--profile``; its
``--seeds`` (alias ``--runs``) sets the runs per grid point.

Every finished run is stored under ``OUT/runs`` as it completes, so an interrupted
campaign resumes where it stopped and a finished one re-renders its figures and
report without simulating.
"""

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from vtlab import experiments
from vtlab.cli.options import (
    ClusterOpt,
    ConnectTimeoutOpt,
    SchedulerOpt,
    TaskRunsOpt,
    check_cluster_options,
    jobs_option,
    out_option,
    quiet_option,
    runs_option,
)
from vtlab.cluster import DEFAULT_CONNECT_TIMEOUT, connect, describe_client
from vtlab.errors import EXIT_INTERRUPTED, CliError, cli_errors
from vtlab.outputs import check_output_dir, writing

__all__ = ["register", "reproduce_command", "study_command"]


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
    out_option(
        "Output folder for figures, tables, report.md and the run store "
        "(default out/NAME, or out/NAME-quick with --quick)."
    ),
]
ProfileOpt = Annotated[
    str, typer.Option("--profile", help="TCP implementation profile: ns3, linux or ns2.")
]
RunsOpt = Annotated[
    int | None,
    runs_option(
        "Runs per grid point, overriding the experiment's (the paper's) number.",
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
QuietOpt = Annotated[bool, quiet_option("No progress bar or status lines.")]
StudyJobsOpt = Annotated[
    int | None,
    jobs_option(
        "Parallel runs, and figures (and rare-event estimates) made at once "
        "(default: one per core)."
    ),
]
RealOpt = Annotated[
    bool,
    typer.Option(
        "--real",
        help="iso15118 only: run the iso15118 package's EVCC and SECC over the emulated "
        "cable (root, Java), paired with the session model (docs/study-iso15118.md).",
    ),
]


def register(app: typer.Typer, command: str = "reproduce") -> None:
    """Add ``vtlab reproduce`` (the paper reproductions) to the ``vtlab`` CLI or, with
    ``command="study"``, ``vtlab study`` (vtlab's own studies): the same options but
    ``--profile``, with ``--seeds`` for ``--runs``, run by the same code."""
    if command == "reproduce":
        app.command("reproduce")(reproduce_command)
    elif command == "study":
        app.command("study")(study_command)
    else:
        raise ValueError(f"command must be 'reproduce' or 'study', got {command!r}")


@cli_errors
def reproduce_command(
    name: ExperimentArg = None,
    list_: ListOpt = False,
    quick: QuickOpt = False,
    out: FolderOpt = None,
    jobs: StudyJobsOpt = None,
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
    run_study(Invocation("reproduce", name, list_, quick, out, jobs, profile, runs, quiet,
                         scheduler, cluster, task_runs, connect_timeout))  # fmt: skip


@cli_errors
def study_command(
    name: StudyArg = None,
    list_: StudyListOpt = False,
    quick: QuickOpt = False,
    out: FolderOpt = None,
    jobs: StudyJobsOpt = None,
    seeds: SeedsOpt = None,
    quiet: QuietOpt = False,
    scheduler: SchedulerOpt = None,
    cluster: ClusterOpt = None,
    task_runs: TaskRunsOpt = None,
    connect_timeout: ConnectTimeoutOpt = DEFAULT_CONNECT_TIMEOUT,
    real: RealOpt = False,
) -> None:
    """Run one of vtlab's own studies (no paper: its findings are its own):
    tables, figures and a report."""
    if real and not list_:
        from vtlab.cli.study_real import run_real_study

        on_cluster = scheduler is not None or cluster is not None
        return run_real_study(name, quick, out, seeds, quiet, on_cluster)
    run_study(Invocation("study", name, list_, quick, out, jobs, "ns3", seeds, quiet,
                         scheduler, cluster, task_runs, connect_timeout))  # fmt: skip


@dataclass(frozen=True)
class Invocation:
    """The options of one ``vtlab reproduce`` (``kind``) or ``vtlab study``."""

    kind: str
    name: str | None
    list_: bool
    quick: bool
    out: Path | None
    jobs: int | None
    profile: str
    runs: int | None
    quiet: bool
    scheduler: str | None
    cluster: str | None
    task_runs: int | None
    connect_timeout: float


def run_study(opts: Invocation) -> None:
    """The body of ``vtlab reproduce`` and ``vtlab study``."""
    from rich.console import Console

    from vtlab.runstore import StoreError

    if opts.list_:
        for exp_name, description in experiments.describe(opts.kind):
            typer.echo(f"{exp_name:<12} {description}")
        return
    console = Console(stderr=True, highlight=False)
    name, study = _load_study(opts)
    on_cluster = check_cluster_options(
        opts.scheduler, opts.cluster, opts.jobs, opts.task_runs, opts.connect_timeout
    )
    folder = opts.out if opts.out is not None else default_out(name, opts.quick)
    check_output_dir("--out", folder)

    def log(line: str) -> None:
        if not opts.quiet:
            console.print(line, markup=False, soft_wrap=True)

    with contextlib.ExitStack() as stack:
        client = _client(stack, opts, log) if on_cluster else None
        try:
            with writing({"--out": folder}):
                outcome = study.reproduce(_config(opts, folder, client, log))
        except StoreError as e:  # e.g. a store of the earlier layout
            raise CliError("--out", str(e)) from None
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
    if getattr(outcome, "paper_within", None):
        n, narrow, wide = outcome.paper_within
        typer.echo(f"paper numbers: {narrow} of {n} within ±10 % of vtlab's, {wide} within ±25 %")


def _load_study(opts: Invocation) -> tuple[str, Any]:
    """The name and the study the options give, after checking the options that need
    no study."""
    argument = "EXPERIMENT" if opts.kind == "reproduce" else "STUDY"
    if opts.name is None:
        known = ", ".join(experiments.names(opts.kind))
        raise CliError(argument, f"give one of: {known} (or --list)")
    if opts.profile not in ("ns3", "linux", "ns2"):
        raise CliError("--profile", f"{opts.profile!r} is not one of 'ns3', 'linux', 'ns2'")
    if opts.kind == "study" and opts.runs is not None and opts.runs < 1:
        raise CliError("--seeds", f"must be at least 1, got {opts.runs}")  # (reproduce: Config)
    try:
        return opts.name, experiments.load_study(opts.name, opts.kind)
    except KeyError as exc:
        raise CliError(argument, exc.args[0]) from None


def _client(stack: contextlib.ExitStack, opts: Invocation, log: Callable[[str], None]) -> Any:
    """A Dask client for the cluster the options name, closed with ``stack``."""
    client = stack.enter_context(
        connect(opts.scheduler, opts.cluster, connect_timeout=opts.connect_timeout)
    )
    log(describe_client(client, opts.scheduler, opts.cluster))
    return client


def _config(opts: Invocation, folder: Path, client: Any, log: Callable[[str], None]) -> Any:
    """The study's :class:`~vtlab.experiments.common.Config` for this invocation."""
    from vtlab.experiments.common import Config

    return Config(
        out=folder,
        quick=opts.quick,
        runs=opts.runs,
        jobs=opts.jobs,
        scheduler=client,
        task_runs=opts.task_runs,
        profile=opts.profile,
        progress=not opts.quiet,
        log=log,
        verb=opts.kind,
    )
