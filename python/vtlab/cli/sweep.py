"""``vtlab sweep``: run a grid of scenario variations × seeds in parallel (threads, or a
Dask cluster) and print mean ± 95 % CI per grid point."""

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vtlab._core import ScenarioError
from vtlab.cli.display import console, print_json_rows, print_table
from vtlab.cli.options import (
    BytesOpt,
    CcOpt,
    CcParamOpt,
    ClusterOpt,
    ColumnsOpt,
    ConnectTimeoutOpt,
    ForceOpt,
    FormatOpt,
    JobsOpt,
    LossOpt,
    PresetArg,
    ProfileOpt,
    QdiscOpt,
    ScenarioOpt,
    SchedulerOpt,
    SetOpt,
    TaskRunsOpt,
    check_cluster_options,
    check_jobs,
    check_runs_seed,
    has_sessions,
    out_option,
    quiet_option,
    runs_option,
    scenario_from_cli,
    seed_option,
    store_option,
)
from vtlab.cli.tables import output_format
from vtlab.cluster import DEFAULT_CONNECT_TIMEOUT, connect, describe_client
from vtlab.errors import CliError, cli_errors, remember_text
from vtlab.outputs import check_output_dir, check_outputs, table_outputs, write_tables, writing
from vtlab.scenario import parse_value

if TYPE_CHECKING:  # pandas-backed: imported by the command
    from vtlab.sweep import Axis

__all__ = ["parse_axis", "register", "sweep_command"]

AxisOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--axis",
        "-a",
        metavar="[NAME:]PATH=V1,V2,...",
        help="A grid dimension: spec field PATH takes each value (column NAME, default "
        "PATH with dots as underscores); repeatable, expanded as a cartesian product. "
        "Each setting may appear once, in any spelling (5% and 0.05 are one).",
        show_default=False,
    ),
]
RunsOpt = Annotated[int, runs_option("Seeds per grid point.")]
SeedOpt = Annotated[int, seed_option("First seed.")]
StoreOpt = Annotated[
    Path | None,
    store_option(
        "Campaign directory: each finished run is stored there and reused, so an "
        "interrupted sweep resumes where it stopped."
    ),
]
OutOpt = Annotated[
    Path | None, out_option("Write all flow rows to this .parquet or .csv file (links beside it).")
]
QuietOpt = Annotated[bool, quiet_option("Table only.")]


def register(app: typer.Typer) -> None:
    """Add ``vtlab sweep``."""
    app.command("sweep")(sweep_command)


def parse_axis(text: str) -> "Axis":
    """``[NAME:]PATH=V1,V2,...`` → an :class:`Axis` (values parsed like ``--set``, and
    kept as written for messages).

    An empty value (``tcp.cc=,``, ``a,,b``) is refused here. A value given twice is
    refused by the axis, and two values that are one setting once resolved (``5%``
    and ``0.05``) by :meth:`Sweep.points`: their runs would count twice in the
    confidence intervals."""
    from vtlab.sweep import Axis, AxisError

    name, sep, rest = text.partition(":")
    if not sep or "=" in name:
        name, rest = "", text
    path, eq, values = rest.partition("=")
    path, name = path.strip(), name.strip()
    if not eq or not path or not values.strip():
        raise CliError("--axis", f"expected [NAME:]PATH=V1,V2,..., got {text!r}")
    texts = [v.strip() for v in values.split(",")]
    for i, value_text in enumerate(texts, 1):
        if not value_text:
            raise CliError(
                f"--axis {name or path.replace('.', '_')}",
                f"value {i} of {len(texts)} in {values.strip()!r} is empty",
            )
        remember_text(path, value_text)
    try:
        return Axis.values(
            path, [parse_value(v) for v in texts], name=name or None, spellings=texts
        )
    except AxisError as e:
        raise CliError(f"--axis {e.axis}", e.problem) from None


SweepEventsOpt = Annotated[
    bool,
    typer.Option(
        "--events",
        help="Also record every run's typed events (docs/metrics.md) into the store's "
        "events table (vtlab load STORE events).",
    ),
]


@cli_errors
def sweep_command(
    preset: PresetArg = None,
    scenario: ScenarioOpt = None,
    axis: AxisOpt = None,
    cc: CcOpt = None,
    cc_param: CcParamOpt = None,
    profile: ProfileOpt = None,
    qdisc: QdiscOpt = None,
    loss: LossOpt = None,
    bytes_: BytesOpt = None,
    set_: SetOpt = None,
    runs: RunsOpt = 6,
    seed: SeedOpt = 1,
    store: StoreOpt = None,
    jobs: JobsOpt = None,
    scheduler: SchedulerOpt = None,
    cluster: ClusterOpt = None,
    task_runs: TaskRunsOpt = None,
    connect_timeout: ConnectTimeoutOpt = DEFAULT_CONNECT_TIMEOUT,
    out: OutOpt = None,
    fmt: FormatOpt = "table",
    columns: ColumnsOpt = None,
    events: SweepEventsOpt = False,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Run a grid of scenario variations × seeds in parallel; report mean ± 95 % CI per point."""
    from vtlab.runstore import StoreError

    check_runs_seed(runs, seed)
    fmt = output_format(fmt)
    check_jobs(jobs)
    on_cluster = check_cluster_options(scheduler, cluster, jobs, task_runs, connect_timeout)
    if store is not None:
        check_output_dir("--store", store)
    if out is not None:
        check_outputs(table_outputs("--out", out), force=force)
    sc = scenario_from_cli(
        preset,
        scenario,
        cc=cc,
        cc_params=cc_param,
        loss=loss,
        bytes_=bytes_,
        sets=set_,
        profile=profile,
        qdisc=qdisc,
    )
    axes = [parse_axis(a) for a in axis or ()]
    session_axis = any(
        p.split(".")[0] == "session" for a in axes for _, s in a.levels for p, _ in s
    )
    if out is not None and (session_axis or has_sessions(sc)):  # the session files too
        check_outputs(table_outputs("--out", out, sessions=True), force=force)
    seeds = list(range(seed, seed + runs))
    started = time.perf_counter()
    sweep = _resolved(sc, axes, seeds, events)
    try:
        with writing({"--store": store}):
            if on_cluster:
                res = _sweep_on_cluster(
                    sweep, store, scheduler, cluster, connect_timeout, task_runs, quiet=quiet
                )
            else:
                res = sweep.run(store, jobs=jobs, progress=not quiet)
    except StoreError as e:
        raise CliError("--store", str(e)) from None
    wall = time.perf_counter() - started
    if out is not None:
        partial = [o.path for o in table_outputs("--out", out, sessions=res.has_sessions())]
        with writing({"--out": out}, remove=partial):
            write_tables(res, out)
    sets_cc = any(path == "tcp.cc" for a in axes for _, sets in a.levels for path, _ in sets)
    by = [*(a.name for a in axes), *([] if sets_cc else ["cc"]), "flow"]
    if fmt == "json":
        print_json_rows(res)
    else:
        print_table(res, runs, seeds, wall, quiet, by=by, fmt=fmt, columns=columns, sessions=False)


def _resolved(sc: Any, axes: list[Any], seeds: list[int], events: bool = False) -> Any:
    """The sweep (recording typed events if ``events``), every point resolved and none
    twice before any run; a bad axis is a :class:`CliError` naming it."""
    from vtlab.sweep import AxisError, Sweep

    try:
        sweep = Sweep(sc, axes, seeds, events=events)
        sweep.points()
    except AxisError as e:
        raise CliError(f"--axis {e.axis}", e.problem) from None
    except ScenarioError:
        raise  # a bad value: its own field
    except ValueError as e:
        raise CliError("--axis", str(e)) from None
    return sweep


def _sweep_on_cluster(
    sweep: Any,
    store: Path | None,
    scheduler: str | None,
    cluster: str | None,
    connect_timeout: float,
    task_runs: int | None,
    *,
    quiet: bool,
) -> Any:
    """Run ``sweep`` on the Dask cluster the options name."""
    with connect(scheduler, cluster, connect_timeout=connect_timeout) as client:
        if not quiet:
            console(stderr=True).print(describe_client(client, scheduler, cluster), markup=False)
        return sweep.run(store, progress=not quiet, scheduler=client, task_runs=task_runs)
