"""The ``vtlab validate`` command group: ``vtlab validate FAMILY ...`` for the bulk
transfer on the V2G cable (``v2g``, with ``--replay``) and at the charging station
(``station``), and the body of ``vtlab bench --vs-ns3``.

The old spellings stay for one release as hidden aliases: ``vtlab validate [OPTIONS]``
without a family is ``vtlab validate v2g`` (``--topology N`` makes it the station,
``--replay`` the paired replay).  The families themselves are
:mod:`vtlab.validation`; this module only parses, prints and exits.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import typer
from click.core import ParameterSource

from vtlab.cli.display import typed_command
from vtlab.cli.options import (
    ClusterOpt,
    ConnectTimeoutOpt,
    SchedulerOpt,
    check_cluster_options,
)
from vtlab.cli.validate_options import (
    BytesOpt,
    CcOpt,
    JobsOpt,
    LossOpt,
    OnlyOpt,
    OutOpt,
    ProfileOpt,
    QdiscOpt,
    QuickOpt,
    QuietOpt,
    ReplayOpt,
    ReplayToleranceOpt,
    RunsOpt,
    StoreNs3Opt,
    TopologyOpt,
    VehiclesOpt,
    hidden,
    out_dir,
)
from vtlab.cluster import DEFAULT_CONNECT_TIMEOUT
from vtlab.errors import EXIT_INTERRUPTED, fail, user_errors
from vtlab.ns3.program import Ns3Error, cache_dir, cache_setting
from vtlab.outputs import check_output_dir, writing
from vtlab.validation.errors import ValidateError
from vtlab.validation.station import DEFAULT_VEHICLES, parse_topology
from vtlab.validation.units import at_least, parse_bytes
from vtlab.validation.verdict import verdict_counts

__all__ = ["bench_vs_ns3_command", "register"]

HELP = (
    "Cross-validate vtlab against ns-3 and write OUT/report.md and OUT/agreement.csv "
    "(needs the ns-3 wheel: the ns3 extra of vtlab, and g++)."
)

# The old spellings' options, left out of --help.
_Cc = hidden(CcOpt)
_Loss = hidden(LossOpt)
_Runs = hidden(RunsOpt)
_Bytes = hidden(BytesOpt)
_Topology = hidden(TopologyOpt)
_Out = hidden(OutOpt)
_Jobs = hidden(JobsOpt)
_Profile = hidden(ProfileOpt)
_Qdisc = hidden(QdiscOpt)
_Only = hidden(OnlyOpt)
_StoreNs3 = hidden(StoreNs3Opt)
_Replay = hidden(ReplayOpt)
_ReplayTolerance = hidden(ReplayToleranceOpt)
_Quick = hidden(QuickOpt)
_Quiet = hidden(QuietOpt)
_Scheduler = hidden(SchedulerOpt)
_Cluster = hidden(ClusterOpt)
_ConnectTimeout = hidden(ConnectTimeoutOpt)


def _console() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _bulk(
    *,
    ccs: Sequence[str] | None,
    losses: Sequence[str] | None,
    runs: int | None,
    nbytes: str | None,
    topologies: Sequence[str] | None,
    quick: bool,
    profile: str,
    qdisc: str,
    only: str | None,
    out: Path | None,
    jobs: int | None,
    quiet: bool,
    store_ns3: bool,
    cluster_args: tuple[Any, str | None, float],
    default_out: str,
) -> None:
    """Run the bulk-transfer grid (:mod:`vtlab.validation.v2g`) and print the outcome."""
    from vtlab.validation import v2g

    scheduler, cluster, connect_timeout = cluster_args
    out = out_dir(out, default_out, quick)
    with user_errors():
        grid = v2g.make_grid(ccs, losses, runs, nbytes, topologies, quick, profile, qdisc, only)
        check_cluster_options(scheduler, cluster, None, None, connect_timeout)
        n_jobs = at_least("--jobs", jobs if jobs is not None else (os.cpu_count() or 1))
        check_output_dir("--out", out)
    console = _console()

    def log(line: str) -> None:
        if not quiet:
            console.print(line, markup=False, soft_wrap=True)

    for name, why in grid.skipped.items():
        log(f"note: skipping {name}: {why}")
    try:
        with user_errors(), writing({"--out": out}):
            res = v2g.validate(
                grid,
                out,
                jobs=n_jobs,
                progress=not quiet,
                command=typed_command(),
                log=log,
                console=console,
                scheduler=scheduler,
                cluster=cluster,
                connect_timeout=connect_timeout,
                store_ns3=v2g.stored_ns3_runs_path() if store_ns3 else None,
            )
    except Ns3Error as exc:
        if os.environ.get("VTLAB_DEBUG"):
            raise
        fail(str(exc))
    except KeyboardInterrupt:
        console.print(
            f"interrupted: finished runs are kept in {out / 'runs.jsonl'}; "
            "run the same command again to resume",
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    _outcome(res, grid.only, out, log)


def _outcome(res: Any, only: str | None, out: Path, log: Callable[[str], None]) -> None:
    """Print what a validation did; exit 1 if runs failed."""
    if only is not None:
        log(
            f"{only} side only: {res.runs_done} runs now, {res.runs_cached} cached "
            f"· {res.wall_s:.1f} s"
        )
        typer.echo(f"runs in {out / 'runs.jsonl'} (no report with --only)")
    else:
        counts = verdict_counts(res.table)
        log(
            f"{counts['agree']} of {len(res.table)} cells agree; {counts['consistent']} "
            f"consistent; {counts['differs']} differ · {res.runs_done} runs now, "
            f"{res.runs_cached} cached · {res.wall_s:.1f} s"
        )
        typer.echo(f"wrote {res.paths['report']}, {res.paths['csv']}, {res.paths['parquet']}")
    if res.errors:
        for e in res.errors:
            typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1)


def _replay(
    cell: str,
    qdisc: str,
    topologies: Sequence[str] | None,
    nbytes: str | None,
    profile: str,
    tolerance_s: float,
    quiet: bool,
) -> None:
    """``vtlab validate v2g --replay CELL``: print the paired replay of one cell."""
    from vtlab.validation import replay as vr
    from vtlab.validation.v2g import DEFAULT_BYTES

    with user_errors():
        cc, loss, seed = vr.parse_cell(cell)
        if [parse_topology(t) for t in topologies or ["1"]] != ["1"]:
            raise ValidateError("--replay", "one vehicle only (--topology 1)")
        size = parse_bytes(nbytes) if nbytes is not None else DEFAULT_BYTES
        if tolerance_s < 0:
            raise ValidateError("--replay-tolerance", "must not be negative")

    def log(line: str) -> None:
        if not quiet:
            typer.echo(line, err=True)

    try:
        with user_errors():  # e.g. a core whose presets lack `qdisc`
            rep = vr.paired_replay(
                cc,
                loss,
                seed,
                nbytes=size,
                qdisc=qdisc,
                profile=profile,
                tolerance_s=tolerance_s,
                log=log,
            )
    except Ns3Error as exc:
        fail(str(exc))
    typer.echo(vr.format_replay(rep))


def _given(ctx: typer.Context) -> list[str]:
    """The options of ``ctx`` given on the command line."""
    return [
        name for name in ctx.params if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
    ]


def _legacy(
    ctx: typer.Context,
    cc: _Cc = None,
    loss: _Loss = None,
    runs: _Runs = None,
    bytes_: _Bytes = None,
    topology: _Topology = None,
    out: _Out = None,
    jobs: _Jobs = None,
    profile: _Profile = "ns3",
    qdisc: _Qdisc = "stock",
    only: _Only = None,
    store_ns3: _StoreNs3 = False,
    replay: _Replay = None,
    replay_tolerance: _ReplayTolerance = 0.001,
    quick: _Quick = False,
    quiet: _Quiet = False,
    scheduler: _Scheduler = None,
    cluster: _Cluster = None,
    connect_timeout: _ConnectTimeout = DEFAULT_CONNECT_TIMEOUT,
) -> None:
    """Without a family: the old ``vtlab validate [OPTIONS]`` (``v2g``, or ``station``
    with ``--topology N``), kept for one release."""
    if ctx.invoked_subcommand is not None:
        given = _given(ctx)
        if given:
            name = given[0].rstrip("_").replace("_", "-")
            fail(f"--{name}: give it after the family: vtlab validate {ctx.invoked_subcommand} ...")
        return
    if replay is not None:
        _replay(replay, qdisc, topology, bytes_, profile, replay_tolerance, quiet)
        return
    _bulk(
        ccs=cc,
        losses=loss,
        runs=runs,
        nbytes=bytes_,
        topologies=topology,
        quick=quick,
        profile=profile,
        qdisc=qdisc,
        only=only,
        out=out,
        jobs=jobs,
        quiet=quiet,
        store_ns3=store_ns3,
        cluster_args=(scheduler, cluster, connect_timeout),
        default_out="validation",
    )


def v2g_command(
    cc: CcOpt = None,
    loss: LossOpt = None,
    runs: RunsOpt = None,
    bytes_: BytesOpt = None,
    out: OutOpt = None,
    jobs: JobsOpt = None,
    profile: ProfileOpt = "ns3",
    qdisc: QdiscOpt = "stock",
    only: OnlyOpt = None,
    store_ns3: StoreNs3Opt = False,
    replay: ReplayOpt = None,
    replay_tolerance: ReplayToleranceOpt = 0.001,
    quick: QuickOpt = False,
    quiet: QuietOpt = False,
    scheduler: SchedulerOpt = None,
    cluster: ClusterOpt = None,
    connect_timeout: ConnectTimeoutOpt = DEFAULT_CONNECT_TIMEOUT,
) -> None:
    """Bulk transfers over the single-vehicle V2G cable: every algorithm both implement
    × mean loss × seed, against validation/ns3/v2g.cc (--replay: one run, paired)."""
    if replay is not None:
        _replay(replay, qdisc, None, bytes_, profile, replay_tolerance, quiet)
        return
    _bulk(
        ccs=cc,
        losses=loss,
        runs=runs,
        nbytes=bytes_,
        topologies=["1"],
        quick=quick,
        profile=profile,
        qdisc=qdisc,
        only=only,
        out=out,
        jobs=jobs,
        quiet=quiet,
        store_ns3=store_ns3,
        cluster_args=(scheduler, cluster, connect_timeout),
        default_out="validation",
    )


def station_command(
    cc: CcOpt = None,
    loss: LossOpt = None,
    runs: RunsOpt = None,
    bytes_: BytesOpt = None,
    vehicles: VehiclesOpt = None,
    out: OutOpt = None,
    jobs: JobsOpt = None,
    profile: ProfileOpt = "ns3",
    qdisc: QdiscOpt = "stock",
    only: OnlyOpt = None,
    store_ns3: StoreNs3Opt = False,
    quick: QuickOpt = False,
    quiet: QuietOpt = False,
    scheduler: SchedulerOpt = None,
    cluster: ClusterOpt = None,
    connect_timeout: ConnectTimeoutOpt = DEFAULT_CONNECT_TIMEOUT,
) -> None:
    """Bulk transfers to N vehicles at the charging station (3 per PLC segment, default
    21), per-vehicle and aggregate goodput, against validation/ns3/v2g.cc."""
    with user_errors():
        topologies = [parse_topology(v, "--vehicles") for v in vehicles or [DEFAULT_VEHICLES]]
    _bulk(
        ccs=cc,
        losses=loss,
        runs=runs,
        nbytes=bytes_,
        topologies=topologies,
        quick=quick,
        profile=profile,
        qdisc=qdisc,
        only=only,
        out=out,
        jobs=jobs,
        quiet=quiet,
        store_ns3=store_ns3,
        cluster_args=(scheduler, cluster, connect_timeout),
        default_out="validation/station21",
    )


def register(app: typer.Typer) -> typer.Typer:
    """Add the ``validate`` group to the ``vtlab`` CLI; returns the group, to which
    the other families add their commands."""
    group = typer.Typer(help=HELP, no_args_is_help=False)
    group.callback(invoke_without_command=True)(_legacy)
    group.command("v2g")(v2g_command)
    group.command("station")(station_command)
    app.add_typer(group, name="validate")
    return group


# -- vtlab bench --vs-ns3 ----------------------------------------------------------------


def _bench_lte_vs_ns3(repeat: int | None, json_out: bool, log: Callable[[str], None]) -> None:
    """``vtlab bench lte-cabin --vs-ns3``: the LTE validation's four cases (ns-3's LTE
    module, and vtlab replaying its channel on the same scenario), timed; ns-3's
    results are cached under the vtlab cache directory (docs/validation.md)."""
    from vtlab.validation import lte

    try:
        folder = cache_dir("bench-lte")
    except Ns3Error as exc:  # names $VTLAB_CACHE
        fail(str(exc))
    try:
        with writing({cache_setting(): folder}):
            res = lte.validate(
                folder,
                bench=True,
                repeat=5 if repeat is None else repeat,
                diagnostic=False,
                progress=not json_out,
                log=log,
            )
    except Ns3Error as exc:
        raise ValidateError("--vs-ns3", " ".join(str(exc).split())) from None
    if json_out:
        typer.echo(json.dumps(res.speed_rows, default=str))
        return
    for r in res.speed_rows:
        typer.echo(
            f"{r['case']:<14} ns-3 {float(r['ns3_process_wall_s']):7.3f} s · vtlab "
            f"{float(r['vtlab_call_wall_s']) * 1e3:7.1f} ms · {float(r['speedup_whole']):5.0f}× "
            f"faster ({r['simulated_s']} s simulated)"
        )


def bench_vs_ns3_command(
    scenario: Any = None,
    *,
    seed: int = 1,
    repeat: int | None = None,
    json_out: bool = False,
) -> None:
    """Body of ``vtlab bench --vs-ns3``: run :func:`vtlab.validation.speed.bench_vs_ns3`
    (``repeat`` None means 3) and print the summary, or one JSON object with
    ``json_out``.  A missing or broken ns-3 prints one ``error:`` line and exits with
    status 2."""
    from vtlab.validation.speed import BENCH_21_NOTE, bench_vs_ns3

    def log(line: str) -> None:
        if not json_out:
            typer.echo(line, err=True)

    spec = getattr(scenario, "spec", scenario)
    if isinstance(spec, Mapping) and spec.get("preset") == "lte-cabin":
        # ns-3's reference for the cellular link is the LTE validation's program.
        _bench_lte_vs_ns3(repeat, json_out, log)
        return
    try:
        res = bench_vs_ns3(scenario, seed=seed, repeat=3 if repeat is None else repeat, log=log)
    except Ns3Error as exc:
        typer.echo(f"error: {' '.join(str(exc).split())}", err=True)
        raise typer.Exit(2) from None
    note = BENCH_21_NOTE if res.vtlab.flows == 1 else ""
    if json_out:
        typer.echo(json.dumps({**res.as_dict(), "note": note}))
        return
    for line in res.summary_lines():
        typer.echo(line)
    if note:
        typer.echo(note)
