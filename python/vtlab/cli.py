"""The ``vtlab`` command line (typer).

Commands: ``run``, ``sweep``, ``bench``, ``expand``, ``presets``, ``cc list``,
``cc table``, ``version`` (and ``validate``, ``reproduce``, registered from their
modules).

Adding a command: define a function in this module decorated with ``@app.command()``
(or ``@cc_app.command()`` for a ``cc`` subcommand) and, under it, ``@cli_errors``
(from :mod:`vtlab.errors`) so that bad input prints ``error: <field>: <problem>`` and
exits with status 2; raise :class:`CliError` ``(field, problem)`` for bad input.
Commands that take a scenario can reuse the option aliases below (``PresetArg``,
``ScenarioOpt``, ``ProfileOpt``, ...) and :func:`scenario_from_cli`; commands that
write files list them as :class:`vtlab.outputs.Output` and call
:func:`vtlab.outputs.check_outputs` before simulating.

Start-up time matters (every ``vtlab`` invocation pays it): this module imports no
pandas, numpy, pyarrow, scipy or matplotlib; commands import what they need inside
their function.
"""

import json
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from typer.core import TyperGroup

from vtlab import _core
from vtlab.api import MAX_SEED, Interrupted, pcap_dir, run_many
from vtlab.cluster_options import (
    DEFAULT_CONNECT_TIMEOUT,
    ClusterOpt,
    ConnectTimeoutOpt,
    SchedulerOpt,
    TaskRunsOpt,
    check_cluster_options,
    describe_client,
)
from vtlab.errors import (
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CliError,
    cli_errors,
    fail,
    one_line,
    remember_text,
    usage_error_line,
)
from vtlab.outputs import Output, check_output_dir, check_outputs, table_outputs
from vtlab.scenario import Scenario, apply_assignment, parse_assignment, parse_value, set_path

if TYPE_CHECKING:  # pandas-backed modules are imported by the commands that need them
    from vtlab.api import Result
    from vtlab.sweep import Axis

__all__ = ["CliError", "EXIT_USAGE", "app", "cc_app", "cli_errors", "main", "scenario_from_cli"]


try:  # typer ≥ 0.26 vendors click and names its exception base TyperException
    from typer import TyperException as _ParserError  # type: ignore[attr-defined]
except ImportError:  # typer < 0.26, on click (the version pyproject.toml pins)
    from click import ClickException as _ParserError


class VtlabGroup(TyperGroup):
    """The ``vtlab`` command group: the parser's own errors (unknown option or
    command, bad value or choice, missing argument) are printed like every other
    user error, as one ``error: <option>: <problem>`` line with exit status 2."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.Abort:
            print("Aborted!", file=sys.stderr)
            sys.exit(1)
        except _ParserError as exc:
            names = {cls.__name__ for cls in type(exc).__mro__}
            if "NoArgsIsHelpError" in names:  # the help has been shown
                text = str(getattr(exc, "message", "") or "")
                if text.strip():
                    print(text, file=sys.stderr)
                sys.exit(EXIT_USAGE)
            if "UsageError" in names:
                fail(usage_error_line(exc))
            format_message = getattr(exc, "format_message", None)
            message = format_message() if format_message is not None else str(exc)
            print(f"error: {one_line(message)}", file=sys.stderr)
            sys.exit(getattr(exc, "exit_code", 1))
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    name="vtlab",
    help="vtlab: packet-level TCP congestion-control simulator for vehicle links.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    cls=VtlabGroup,
    # Plain help text: typer's rich help panels cost ~70 ms of start-up (rich and
    # markdown-it imported for every --help).
    rich_markup_mode=None,
)
cc_app = typer.Typer(help="Congestion controls.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(cc_app, name="cc")


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"vtlab {_core.version()}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the vtlab version and exit.",
            callback=_show_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """vtlab: packet-level TCP congestion-control simulator for vehicle links."""


# -- shared option types ---------------------------------------------------------------

PresetArg = Annotated[
    str | None,
    typer.Argument(
        metavar="PRESET",
        help="Preset name (see `vtlab presets`); omit when using --scenario.",
        show_default=False,
    ),
]
ScenarioOpt = Annotated[
    Path | None,
    typer.Option(
        "--scenario",
        "-s",
        help="Scenario file (TOML holding the spec).",
        show_default=False,
        dir_okay=False,
    ),
]
CcOpt = Annotated[
    str | None,
    typer.Option("--cc", help="Congestion control (sets tcp.cc).", show_default=False),
]
CcParamOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--cc-param",
        metavar="NAME=VALUE",
        help="Congestion-control parameter (sets tcp.cc_params.NAME); repeatable.",
        show_default=False,
    ),
]
LossOpt = Annotated[
    str | None,
    typer.Option(
        "--loss",
        help="Mean loss of the lossy link, e.g. 5% or 0.05 (sets loss.mean_loss).",
        show_default=False,
    ),
]
BytesOpt = Annotated[
    str | None,
    typer.Option(
        "--bytes", help="Transfer size per flow, e.g. 100MB or 128KiB.", show_default=False
    ),
]
ProfileOpt = Annotated[
    Literal["ns3", "linux"] | None,
    typer.Option(
        "--profile",
        help="TCP implementation profile: ns3 or linux (sets tcp.profile).",
        show_default=False,
    ),
]
QdiscOpt = Annotated[
    str | None,
    typer.Option(
        "--qdisc",
        metavar="NAME",
        help="Root queue disc of every link: none, pfifo_fast, fq_codel, codel, red or pie "
        "(sets qdisc; for attributes use --set qdisc.kind=codel --set qdisc.target=3ms "
        "instead; default: the profile's, fq_codel for ns3 as stock ns-3.44, none for "
        "linux).",
        show_default=False,
    ),
]
ForceOpt = Annotated[
    bool,
    typer.Option("--force", help="Overwrite output files that already exist."),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="PATH=VALUE",
        help="Set any spec field by dotted path (value parsed as TOML, else a string); "
        "repeatable, applied after the other options.",
        show_default=False,
    ),
]


#: Presets with a ``session`` table (request/response sessions, docs/scenarios.md).
SESSION_PRESETS = ("v2g", "station")


def scenario_from_cli(
    preset: str | None,
    scenario_file: Path | None,
    *,
    cc: str | None = None,
    cc_params: Sequence[str] | None = None,
    loss: str | None = None,
    bytes_: str | None = None,
    sets: Sequence[str] | None = None,
    default: dict[str, Any] | None = None,
    profile: str | None = None,
    session: str | None = None,
    qdisc: str | None = None,
) -> Scenario:
    """Build the scenario a command line describes.

    Starts from ``{"preset": PRESET}``, the ``--scenario`` file, or (when neither is
    given and the command has one) a copy of ``default``; then applies, in
    order: ``--bytes``, ``--cc``, ``--profile``, ``--cc-param``, ``--loss``,
    ``--qdisc``, ``--session`` (``session.profile``; v2g and station only) and finally every
    ``--set`` (so ``--set session.duration=5min`` adds to it).  Raises
    :class:`CliError`/:class:`ScenarioError` on bad input; the text of every value is
    remembered so that error messages echo numbers as the user wrote them
    (:func:`vtlab.errors.remember_text`).
    """
    if preset is not None and scenario_file is not None:
        raise CliError("PRESET", "give either a PRESET or --scenario FILE, not both")
    if preset is None and scenario_file is None and default is None:
        allowed = ", ".join(_core.presets())
        raise CliError("PRESET", f"give a PRESET (one of: {allowed}) or --scenario FILE")
    if scenario_file is not None:
        sc = Scenario.from_toml(scenario_file)
    elif preset is None:
        sc = Scenario(json.loads(json.dumps(default)))
    else:
        sc = Scenario({"preset": preset})
    if bytes_ is not None:
        remember_text("bytes", bytes_)
        set_path(sc.spec, "bytes", parse_value(bytes_))
    if cc is not None:
        set_path(sc.spec, "tcp.cc", cc)
    if profile is not None:
        set_path(sc.spec, "tcp.profile", profile)
    for item in cc_params or ():
        key, _ = parse_assignment(item, option="--cc-param")
        remember_text(f"tcp.cc_params.{key}", item.partition("=")[2])
        apply_assignment(_cc_params_table(sc), item, option="--cc-param")
    if loss is not None:
        remember_text("loss.mean_loss", loss)
        set_path(sc.spec, "loss.mean_loss", parse_value(loss))
    if qdisc is not None:
        set_path(sc.spec, "qdisc", qdisc)
    if session is not None:
        name = sc.spec.get("preset")
        if name not in SESSION_PRESETS:
            raise CliError(
                "--session",
                f"only the {' and '.join(SESSION_PRESETS)} presets have request/response "
                f"sessions (the scenario's preset is {name!r})",
            )
        set_path(sc.spec, "session.profile", session)
    for item in sets or ():
        key, _ = parse_assignment(item, option="--set")
        remember_text(key, item.partition("=")[2])
        apply_assignment(sc.spec, item, option="--set")
    return sc


def _cc_params_table(sc: Scenario) -> dict[str, Any]:
    """The ``tcp.cc_params`` table, created if missing."""
    tcp = sc.spec.get("tcp")
    params = tcp.get("cc_params") if isinstance(tcp, dict) else None
    if not isinstance(params, dict):
        set_path(sc.spec, "tcp.cc_params", {})
        params = sc.spec["tcp"]["cc_params"]
    return params


def _console(stderr: bool = False) -> Any:
    """A rich console; wide when not writing to a terminal, so tables do not wrap."""
    from rich.console import Console

    console = Console(stderr=stderr, highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(stderr=stderr, highlight=False, width=160)
    return console


# -- run -------------------------------------------------------------------------------

#: (flow column, table header, scale, digits) for the default run table.
_TABLE_METRICS: tuple[tuple[str, str, float, int | None], ...] = (
    ("goodput_bps", "goodput Mbit/s", 1e-6, 3),
    ("completion_s", "completion s", 1.0, 3),
    ("retransmissions", "retrans", 1.0, None),
    ("rto_count", "RTOs", 1.0, None),
    ("fast_recoveries", "fast rec.", 1.0, None),
    ("drops_link_error", "link-err drops", 1.0, None),
    ("drops_queue", "queue drops", 1.0, None),
    ("drops_aqm", "AQM drops", 1.0, None),
)


def _fmt_ci(mean: float, ci: float, n: int, digits: int | None) -> str:
    """``mean ± ci``; counts (digits None) get 0 decimals for one run, 1 otherwise."""
    if digits is None:
        digits = 0 if n <= 1 else 1
    if not math.isfinite(mean):
        return "–" if math.isnan(mean) else f"{mean}"
    half = f"{ci:.{digits}f}" if math.isfinite(ci) else "–"
    return f"{mean:.{digits}f} ± {half}"


def _json_value(value: Any) -> Any:
    """A JSON-ready Python value (numpy scalars unwrapped, NaN/inf as null)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _print_json_rows(res: "Result") -> None:
    """One JSON object per flow row (as before sessions existed: no ``table`` key),
    then one per session row, marked ``"table": "sessions"``."""
    for record in res.flow_records():
        line = json.dumps({str(k): _json_value(v) for k, v in record.items()})
        sys.stdout.write(line + "\n")
    for record in res.session_records():
        row = {"table": "sessions", **{str(k): _json_value(v) for k, v in record.items()}}
        sys.stdout.write(json.dumps(row) + "\n")
    sys.stdout.flush()


def _print_table(
    res: "Result",
    runs: int,
    seeds: list[int],
    wall: float,
    quiet: bool,
    by: Sequence[str] = ("cc", "flow"),
) -> None:
    from rich.markup import escape
    from rich.table import Table

    from vtlab.stats import summarize

    flows = res.flows
    by = list(by)
    stats = summarize(flows, by=by, metrics=[m[0] for m in _TABLE_METRICS])
    done = flows.groupby(by, sort=False)["completed"].agg(["sum", "count"])

    plural = "s" if runs != 1 else ""
    table = Table(title=f"vtlab: mean ± 95 % CI over {runs} run{plural}", title_justify="left")
    for col in by:
        table.add_column(col)
    table.add_column("done", justify="right")
    for _, header, _, _ in _TABLE_METRICS:
        table.add_column(header, justify="right")
    for key, group in stats.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        by_metric = group.set_index("metric")
        cells = []
        for col, _, scale, digits in _TABLE_METRICS:
            row = by_metric.loc[col]
            cells.append(_fmt_ci(row["mean"] * scale, row["ci95"] * scale, int(row["n"]), digits))
        ok, count = done.loc[key if len(key) > 1 else key[0]]
        labels = [escape(str(k)) for k in key]
        table.add_row(*labels, f"{int(ok)}/{int(count)}", *cells)

    console = _console()
    console.print(table)
    if not quiet:
        hashes = flows["scenario_hash"].unique()
        seed_text = str(seeds[0]) if len(seeds) == 1 else f"{seeds[0]}..{seeds[-1]}"
        console.print(
            f"scenario {', '.join(map(str, hashes))} · seeds {seed_text} · "
            f"wall {wall:.2f} s · vtlab {res.meta.get('version', _core.version())}",
            markup=False,
        )


#: (session column, table header, scale, digits) for the run command's session table.
_SESSION_METRICS: tuple[tuple[str, str, float, int | None], ...] = (
    ("completed", "completed", 1.0, 2),
    ("deadline_misses", "deadline misses", 1.0, None),
    ("loop_p99_s", "loop p99 ms", 1e3, 2),
    ("time_to_energy_s", "time to energy s", 1.0, 3),
)


def _print_sessions_table(res: "Result", runs: int) -> None:
    """Per session: mean ± 95 % CI over the runs of the completed fraction, the
    deadline misses, the charging loop's p99 response time and the time to energy."""
    from rich.markup import escape
    from rich.table import Table

    from vtlab.stats import summarize

    sessions = res.sessions
    by = ["session", "profile"]
    stats = summarize(sessions, by=by, metrics=[m[0] for m in _SESSION_METRICS])
    done = sessions.groupby(by, sort=False)["completed"].agg(["sum", "count"])
    plural = "s" if runs != 1 else ""
    table = Table(title=f"sessions: mean ± 95 % CI over {runs} run{plural}", title_justify="left")
    for col in by:
        table.add_column(col)
    table.add_column("done", justify="right")
    for _, header, _, _ in _SESSION_METRICS:
        table.add_column(header, justify="right")
    for key, group in stats.groupby(by, sort=False):
        by_metric = group.set_index("metric")
        cells = []
        for col, _, scale, digits in _SESSION_METRICS:
            row = by_metric.loc[col]
            cells.append(_fmt_ci(row["mean"] * scale, row["ci95"] * scale, int(row["n"]), digits))
        ok, count = done.loc[key]
        table.add_row(*(escape(str(k)) for k in key), f"{int(ok)}/{int(count)}", *cells)
    _console().print(table)


def _check_runs_seed(runs: int, seed: int) -> None:
    if runs < 1:
        raise CliError("--runs", f"must be at least 1, got {runs}")
    if seed < 0:
        raise CliError("--seed", f"must be a non-negative integer (0 to 2**64-1), got {seed}")
    if seed + runs - 1 > MAX_SEED:
        raise CliError("--seed", f"{seed} with --runs {runs} goes past the largest seed {MAX_SEED}")


JsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print one JSON object per flow per run instead of a table (then one per "
        'session per run, marked "table": "sessions").',
    ),
]
SessionOpt = Annotated[
    str | None,
    typer.Option(
        "--session",
        metavar="PROFILE",
        help="Run a request/response charging session (v2g and station presets): "
        "iso15118-2-dc, iso15118-2-ac, din70121-dc (sets session.profile; more with "
        "--set session.FIELD=VALUE, e.g. session.duration=5min).",
        show_default=False,
    ),
]
RunOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Write the flow rows to this .parquet file (links beside it, *.links.parquet).",
        show_default=False,
    ),
]
TraceOpt = Annotated[
    Path | None,
    typer.Option(
        "--trace",
        help="Record TCP state over time and write it here (.parquet or .csv).",
        show_default=False,
    ),
]
TraceModeOpt = Annotated[
    str,
    typer.Option(
        "--trace-mode",
        help="With --trace: 'sampled' (every trace_interval) or 'changes' (a row at "
        "every change of cwnd, ssthresh or state; exact).",
    ),
]
EventsOpt = Annotated[
    Path | None,
    typer.Option(
        "--events",
        help="Record typed events (state, window, rto, spurious_rto, tlp, retransmit, drop) "
        "and write them here: .parquet, or .qlog/.json (qlog, for qlog viewers).",
        show_default=False,
    ),
]
PcapOpt = Annotated[
    Path | None,
    typer.Option(
        "--pcap",
        help="Write packet captures (pcap, for Wireshark) into this directory; "
        "one subdirectory seed-N per run when --runs > 1. See docs/captures.md.",
        show_default=False,
    ),
]
PcapPointsOpt = Annotated[
    str | None,
    typer.Option(
        "--pcap-points",
        metavar="NAME,...",
        help="Nodes and links to capture (default: every node): NODE.pcap per "
        "node, LINK-NODE.pcap per end of a link.",
        show_default=False,
    ),
]
PcapHeadersOpt = Annotated[
    bool,
    typer.Option(
        "--pcap-headers-only",
        help="Capture headers only (frames keep their true original length).",
    ),
]


@app.command("run")
@cli_errors
def run_command(
    preset: PresetArg = None,
    scenario: ScenarioOpt = None,
    cc: CcOpt = None,
    cc_param: CcParamOpt = None,
    profile: ProfileOpt = None,
    qdisc: QdiscOpt = None,
    loss: LossOpt = None,
    bytes_: BytesOpt = None,
    session: SessionOpt = None,
    runs: Annotated[int, typer.Option("--runs", "-n", help="Number of runs.")] = 1,
    seed: Annotated[
        int, typer.Option("--seed", help="First seed; runs use SEED..SEED+RUNS-1.")
    ] = 1,
    set_: SetOpt = None,
    json_out: JsonOpt = False,
    out: RunOutOpt = None,
    trace: TraceOpt = None,
    trace_mode: TraceModeOpt = "sampled",
    events: EventsOpt = None,
    pcap: PcapOpt = None,
    pcap_points: PcapPointsOpt = None,
    pcap_headers_only: PcapHeadersOpt = False,
    force: ForceOpt = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="No progress bar, status lines or summary line; table only."
        ),
    ] = False,
) -> None:
    """Run a scenario RUNS times and report mean ± 95 % confidence interval per flow
    (and per request/response session)."""
    if trace_mode not in ("sampled", "changes"):
        raise CliError("--trace-mode", f"{trace_mode!r} is not one of 'sampled', 'changes'")
    _check_runs_seed(runs, seed)
    check_outputs(_run_outputs(out, trace, events), force=force)
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
        session=session,
    )
    if out is not None and _has_sessions(sc):  # the session files beside --out too
        check_outputs(_run_outputs(out, trace, events, sessions=True), force=force)
    seeds = list(range(seed, seed + runs))
    points = _check_pcap(sc, pcap, pcap_points, seeds, force)
    from vtlab.tracefile import TraceWriter

    started = time.perf_counter()
    writer = TraceWriter(trace) if trace is not None else None
    try:
        res, interrupted = _run_keeping_completed(
            sc,
            seeds,
            progress=not (quiet or json_out),
            trace=trace_mode if trace is not None else False,
            events=events is not None,
            trace_to=writer.write if writer is not None else None,
            on_result=_print_json_rows if json_out else None,
            pcap=pcap,
            pcap_points=points,
            pcap_payload=not pcap_headers_only,
        )
    finally:
        if writer is not None:
            writer.close()
    wall = time.perf_counter() - started
    seeds = seeds[: len(res.meta.get("seeds", [res.meta.get("seed")]))]
    writes = any(x is not None for x in (out, trace, events, pcap))
    status = _console(stderr=True) if writes and not quiet else None
    if pcap is not None and status is not None:
        _report_captures(res, pcap if runs == 1 else pcap / "seed-*", status)
    if out is not None:
        written = res.to_parquet(out, traces=False)
        if status is not None:
            status.print(
                "wrote " + ", ".join(f"{path} ({name})" for name, path in written.items()),
                markup=False,
            )
    if writer is not None and status is not None:
        status.print(f"wrote {trace} ({writer.rows} trace rows)", markup=False)
    if events is not None:
        _write_events(res, events, status)
    if not json_out:
        _print_table(res, len(seeds), seeds, wall, quiet)
        if res.has_sessions():
            _print_sessions_table(res, len(seeds))
    if interrupted:
        print(f"interrupted after {len(seeds)} completed run(s); they were kept", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED)


def _has_sessions(sc: Scenario) -> bool:
    """Whether the scenario has request/response sessions (resolved by the core)."""
    return bool(sc.expanded().get("sessions"))


def _run_outputs(
    out: Path | None, trace: Path | None, events: Path | None, *, sessions: bool = False
) -> list[Output]:
    """The files ``vtlab run`` will write (checked before anything runs)."""
    outputs: list[Output] = []
    if out is not None:
        outputs += table_outputs("--out", out, sessions=sessions)
    if trace is not None:
        outputs.append(Output("--trace", trace, "", (".parquet", ".csv")))
    if events is not None:
        outputs.append(Output("--events", events, "", (".parquet", ".qlog", ".json")))
    return outputs


def _run_keeping_completed(sc: Scenario, seeds: list[int], **kwargs: Any) -> tuple[Any, bool]:
    """``run_many``; on Ctrl-C the completed runs and ``True`` (exit 130 if none)."""
    try:
        return run_many(sc, seeds, **kwargs), False
    except Interrupted as stop:
        if stop.partial is None:
            print("interrupted: no run completed", file=sys.stderr)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        return stop.partial, True


def _report_captures(res: "Result", where: Path, status: Any) -> None:
    files = [f for m in res.meta.get("runs", [res.meta]) for f in m.get("pcap", [])]
    status.print(
        f"wrote {len(files)} capture file{'s' if len(files) != 1 else ''} in {where} "
        f"({sum(f['packets'] for f in files):,} packets)",
        markup=False,
    )


def _write_events(res: "Result", path: Path, status: Any) -> None:
    """Write the events of ``res`` as Parquet or qlog (by the file's ending)."""
    if res.events is None:
        raise CliError("--events", "the simulator returned no events")
    if path.name.lower().endswith(".parquet"):
        res.events.to_parquet(path, index=False)
    else:
        from vtlab.qlog import write_qlog

        write_qlog(res.events.to_dict(orient="records"), path)
    if status is not None:
        status.print(f"wrote {path} ({len(res.events)} events)", markup=False)


def _check_pcap(
    sc: Scenario, pcap: Path | None, points_text: str | None, seeds: list[int], force: bool
) -> list[str] | None:
    """Check --pcap and --pcap-points before the first run: the names exist, the
    directory can be made, and no capture file would be overwritten without --force.
    Returns the capture points."""
    if pcap is None:
        if points_text is not None:
            raise CliError("--pcap-points", "needs --pcap DIR")
        return None
    points = None
    if points_text is not None:
        points = [p.strip() for p in points_text.split(",") if p.strip()]
        if not points:
            raise CliError("--pcap-points", "expected NAME,... (node or link names)")
    check_output_dir("--pcap", pcap)
    try:
        names = _core.pcap_files(sc.to_json(), points)
    except _core.ScenarioError as e:
        message = str(e).removeprefix("pcap: ")
        raise CliError("--pcap-points", message) from None
    for s in seeds:
        where = pcap_dir(pcap, s, len(seeds))
        if where.exists() and not where.is_dir():
            raise CliError("--pcap", f"'{where}' exists and is not a directory")
        for name in names:
            if (where / name).exists() and not force:
                raise CliError(
                    "--pcap", f"'{where / name}' already exists; add --force to overwrite it"
                )
    return points


# -- expand ----------------------------------------------------------------------------


def parse_axis(text: str) -> "Axis":
    """``[NAME:]PATH=V1,V2,...`` → an :class:`Axis` (values parsed like ``--set``).

    A value given twice is refused (its runs would count twice in the confidence
    intervals)."""
    from vtlab.sweep import Axis

    name, sep, rest = text.partition(":")
    if not sep or "=" in name:
        name, rest = "", text
    path, eq, values = rest.partition("=")
    if not eq or not path.strip() or not values.strip():
        raise CliError("--axis", f"expected [NAME:]PATH=V1,V2,..., got {text!r}")
    texts = [v.strip() for v in values.split(",") if v.strip()]
    for value_text in texts:
        remember_text(path.strip(), value_text)
    label = name.strip() or path.strip().replace(".", "_")
    seen: dict[str, str] = {}
    for value_text in texts:
        value = parse_value(value_text)
        canon = json.dumps([type(value).__name__, value], sort_keys=True, default=str)
        if canon in seen:
            again = (
                f"'{value_text}'"
                if value_text == seen[canon]
                else (f"'{value_text}' (the same as '{seen[canon]}')")
            )
            raise CliError(f"--axis {label}", f"value {again} is given more than once")
        seen[canon] = value_text
    try:
        axis = Axis.values(path.strip(), [parse_value(v) for v in texts], name=name.strip() or None)
    except ValueError as e:
        raise CliError(f"--axis {label}", str(e)) from None
    return axis


@app.command("sweep")
@cli_errors
def sweep_command(
    preset: PresetArg = None,
    scenario: ScenarioOpt = None,
    axis: Annotated[
        list[str] | None,
        typer.Option(
            "--axis",
            "-a",
            metavar="[NAME:]PATH=V1,V2,...",
            help="A grid dimension: spec field PATH takes each value (column NAME, default "
            "PATH with dots as underscores); repeatable, expanded as a cartesian product. "
            "Each value may appear once.",
            show_default=False,
        ),
    ] = None,
    cc: CcOpt = None,
    cc_param: CcParamOpt = None,
    profile: ProfileOpt = None,
    qdisc: QdiscOpt = None,
    loss: LossOpt = None,
    bytes_: BytesOpt = None,
    set_: SetOpt = None,
    runs: Annotated[int, typer.Option("--runs", "-n", help="Seeds per grid point.")] = 6,
    seed: Annotated[int, typer.Option("--seed", help="First seed.")] = 1,
    store: Annotated[
        Path | None,
        typer.Option(
            "--store",
            help="Campaign directory: each finished run is stored there and reused, so an "
            "interrupted sweep resumes where it stopped.",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", help="Parallel runs (default: one per core).", show_default=False
        ),
    ] = None,
    scheduler: SchedulerOpt = None,
    cluster: ClusterOpt = None,
    task_runs: TaskRunsOpt = None,
    connect_timeout: ConnectTimeoutOpt = DEFAULT_CONNECT_TIMEOUT,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write all flow rows to this .parquet file (links beside it).",
            show_default=False,
        ),
    ] = None,
    force: ForceOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Table only.")] = False,
) -> None:
    """Run a grid of scenario variations × seeds in parallel; report mean ± 95 % CI per point."""
    from vtlab.sweep import Sweep

    _check_runs_seed(runs, seed)
    if jobs is not None and jobs < 1:
        raise CliError("--jobs", f"must be at least 1, got {jobs}")
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
    if out is not None and (session_axis or _has_sessions(sc)):  # the session files too
        check_outputs(table_outputs("--out", out, sessions=True), force=force)
    seeds = list(range(seed, seed + runs))
    started = time.perf_counter()
    try:
        sweep = Sweep(sc, axes, seeds)
    except ValueError as e:
        raise CliError("--axis", str(e)) from None
    if on_cluster:
        res = _sweep_on_cluster(
            sweep, store, scheduler, cluster, connect_timeout, task_runs, quiet=quiet
        )
    else:
        res = sweep.run(store, jobs=jobs, progress=not quiet)
    wall = time.perf_counter() - started
    if out is not None:
        res.to_parquet(out, traces=False)
    sets_cc = any(path == "tcp.cc" for a in axes for _, sets in a.levels for path, _ in sets)
    by = [*(a.name for a in axes), *([] if sets_cc else ["cc"]), "flow"]
    _print_table(res, runs, seeds, wall, quiet, by=by)


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
    from vtlab.cluster import connect

    with connect(scheduler, cluster, connect_timeout=connect_timeout) as client:
        if not quiet:
            _console(stderr=True).print(describe_client(client, scheduler, cluster), markup=False)
        return sweep.run(store, progress=not quiet, scheduler=client, task_runs=task_runs)


@app.command("bench")
@cli_errors
def bench_command(
    preset: PresetArg = None,
    scenario: ScenarioOpt = None,
    cc: CcOpt = None,
    cc_param: CcParamOpt = None,
    profile: ProfileOpt = None,
    qdisc: QdiscOpt = None,
    loss: LossOpt = None,
    bytes_: BytesOpt = None,
    set_: SetOpt = None,
    repeat: Annotated[
        int | None,
        typer.Option(
            "--repeat",
            "-r",
            help="Timed repetitions (default 5; 3 with --vs-ns3).",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every repetition.")] = 1,
    vs_ns3: Annotated[
        bool,
        typer.Option(
            "--vs-ns3",
            help="Also run the scenario in ns-3 (needs the ns3 extra) and compare wall time "
            "and peak memory per run.",
        ),
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the measurements as one JSON object.")
    ] = False,
    startup: Annotated[
        bool,
        typer.Option(
            "--startup/--no-startup",
            help="Also time the start-up of the command line: `vtlab --help` and "
            "`vtlab run v2g --bytes 1MB --json` as whole processes (median of REPEAT).",
        ),
    ] = True,
) -> None:
    """Time the engine on a scenario (default: NewReno, 100 MB, V2G, 5 % mean loss)."""
    from vtlab.bench import DEFAULT_BENCH_SPEC, bench, startup_times

    if repeat is not None and repeat < 1:
        raise CliError("--repeat", f"must be at least 1, got {repeat}")
    if seed < 0 or seed > MAX_SEED:
        raise CliError("--seed", f"must be in [0, {MAX_SEED}], got {seed}")
    sc = scenario_from_cli(
        preset,
        scenario,
        cc=cc,
        cc_params=cc_param,
        loss=loss,
        bytes_=bytes_,
        sets=set_,
        default=DEFAULT_BENCH_SPEC,
        profile=profile,
        qdisc=qdisc,
    )
    if vs_ns3:
        from vtlab.cli_validate import bench_vs_ns3_command

        bench_vs_ns3_command(sc, seed=seed, repeat=repeat, json_out=json_out)
        return
    repeat = 5 if repeat is None else repeat
    res = bench(sc, seed=seed, repeat=repeat)
    if startup:
        res.startup_s = startup_times(repeat=repeat)
    if json_out:
        typer.echo(json.dumps(res.as_dict()))
        return
    walls = ", ".join(f"{w * 1e3:.1f}" for w in res.wall_s)
    typer.echo(f"scenario {res.scenario_hash} · seed {res.seed} · vtlab {res.version}")
    typer.echo(f"wall time     {res.median_wall_s * 1e3:.1f} ms median of {repeat} ({walls} ms)")
    typer.echo(f"events        {res.events:,} ({res.events_per_s / 1e6:.2f} M events/s)")
    typer.echo(
        f"packets       {res.packets:,} link transmissions ({res.packets_per_s / 1e6:.2f} M/s)"
    )
    typer.echo(f"simulated     {res.sim_time_s:.1f} s ({res.speedup:,.0f}× real time)")
    typer.echo(f"peak RSS      {res.peak_rss_mib:.1f} MiB (whole Python process)")
    import statistics

    for name, walls_s in res.startup_s.items():
        median_ms = statistics.median(walls_s) * 1e3
        typer.echo(f"start-up      {median_ms:.0f} ms median of {len(walls_s)}: {name}")


@app.command("expand")
@cli_errors
def expand_command(
    preset: PresetArg = None,
    scenario: ScenarioOpt = None,
    cc: CcOpt = None,
    cc_param: CcParamOpt = None,
    loss: LossOpt = None,
    bytes_: BytesOpt = None,
    set_: SetOpt = None,
    compact: Annotated[
        bool,
        typer.Option("--compact", help="Print the core's canonical one-line JSON as is."),
    ] = False,
) -> None:
    """Print the fully resolved scenario as JSON (all defaults, base units)."""
    sc = scenario_from_cli(
        preset, scenario, cc=cc, cc_params=cc_param, loss=loss, bytes_=bytes_, sets=set_
    )
    text = sc.expanded_json()
    if not compact:
        text = json.dumps(json.loads(text), indent=2)
    typer.echo(text)


@app.command("lte-trace")
@cli_errors
def lte_trace_command(
    out: Annotated[
        Path,
        typer.Argument(metavar="OUT", help="The mahimahi trace to write (one timestamp per line)."),
    ],
    preset: Annotated[
        str | None, typer.Option("--preset", help="Scenario preset (default lte-cabin).")
    ] = None,
    scenario: ScenarioOpt = None,
    set_: SetOpt = None,
    seconds: Annotated[
        float, typer.Option("--seconds", help="Length of the trace, seconds (at most 3600).")
    ] = 60.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the run whose channel it is.")] = 1,
    direction: Annotated[
        str, typer.Option("--direction", help="down (eNB to car) or up (car to eNB).")
    ] = "down",
    series: Annotated[
        Path | None,
        typer.Option(
            "--series",
            metavar="FILE.parquet",
            help="Also write the per-TTI series (bytes, lost, rsrp_dbm, sinr_db, cqi, itbs).",
        ),
    ] = None,
    force: ForceOpt = False,
) -> None:
    """Write the LTE channel model's capacity as a mahimahi trace (lte-cabin's
    downlink or uplink, as the run with --seed sees it; docs/cellular.md)."""
    from vtlab.cellular import DIRECTIONS, channel_series, to_mahimahi, write_mahimahi
    from vtlab.outputs import Output, check_outputs

    if direction not in DIRECTIONS:
        raise CliError("--direction", f"expected down or up, got {direction!r}")
    if not (0 < seconds <= 3600):
        raise CliError("--seconds", f"{seconds:g} is outside (0, 3600]")
    _check_runs_seed(1, seed)
    outputs = [Output("OUT", out)]
    if series is not None:
        outputs.append(Output("--series", series, suffixes=(".parquet",)))
    check_outputs(outputs, force=force)
    sc = scenario_from_cli(preset, scenario, sets=set_, default={"preset": "lte-cabin"})
    df = channel_series(sc, seconds, seed, direction)
    delivered = df[~df["lost"]]
    stamps = to_mahimahi(delivered["time_ms"].tolist(), delivered["bytes"].tolist())
    if not stamps:
        raise CliError("--seconds", "the channel delivered less than one opportunity: no trace")
    write_mahimahi(out, stamps)
    if series is not None:
        df.to_parquet(series, index=False)
    rate = df["bytes"][~df["lost"]].sum() * 8 / seconds / 1e6
    typer.echo(
        f"wrote {out} ({len(stamps)} opportunities, {rate:.2f} Mbit/s mean, "
        f"RSRP {df['rsrp_dbm'].mean():.1f} dBm mean)" + (f" and {series}" if series else "")
    )


# -- presets, cc, version --------------------------------------------------------------


@app.command("presets")
@cli_errors
def presets_command() -> None:
    """List the scenario presets."""
    for name in _core.presets():
        typer.echo(name)


@cc_app.command("list")
@cli_errors
def cc_list_command(
    json_out: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
) -> None:
    """List every congestion control with description, parameters and source."""
    ccs = _core.congestion_controls()
    if json_out:
        typer.echo(json.dumps(ccs, indent=2))
        return
    from rich.markup import escape
    from rich.table import Table

    console = _console()
    for i, cc in enumerate(ccs):
        if i:
            console.print()
        console.print(f"[bold]{escape(cc['name'])}[/bold] — {escape(cc['description'])}")
        console.print(f"  source: {cc['source']}", markup=False)
        params = cc.get("params") or []
        if not params:
            console.print("  parameters: none")
            continue
        table = Table(box=None, padding=(0, 2), show_edge=False)
        table.add_column("parameter")
        table.add_column("default", justify="right")
        table.add_column("range")
        table.add_column("description")
        for p in params:
            bounds = f"[{_num(p.get('min'))}, {_num(p.get('max'))}]" if "min" in p else ""
            table.add_row(
                escape(str(p["name"])),
                escape(_num(p["default"])),
                escape(bounds),
                escape(str(p.get("doc", ""))),
            )
        console.print(table)


def _num(value: Any) -> str:
    """A parameter value for display: ``0.5``, ``3``, ``inf``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@cc_app.command("table")
@cli_errors
def cc_table_command(
    runs: Annotated[int, typer.Option("--runs", "-n", help="Seeds per cell.")] = 6,
    bytes_: BytesOpt = None,
    loss: Annotated[
        list[str] | None,
        typer.Option(
            "--loss",
            help="Mean loss rates (repeatable; default 0.25%, 1%, 5%).",
            show_default=False,
        ),
    ] = None,
    profile: Annotated[
        list[str] | None,
        typer.Option(
            "--profile", help="Profiles (repeatable; default ns3 and linux).", show_default=False
        ),
    ] = None,
    cc: Annotated[
        list[str] | None,
        typer.Option("--cc", help="Algorithms (repeatable; default: all).", show_default=False),
    ] = None,
    store: Annotated[
        Path | None,
        typer.Option("--store", help="Campaign directory (resumable).", show_default=False),
    ] = None,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", help="Parallel runs.", show_default=False)
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write the Markdown table to this .md file (default: stdout).",
            show_default=False,
        ),
    ] = None,
    force: ForceOpt = False,
) -> None:
    """Goodput of every algorithm on the V2G cable, both profiles, as a Markdown table."""
    from vtlab.cctable import DEFAULT_LOSSES, DEFAULT_PROFILES, cc_table, to_markdown

    if runs < 1:
        raise CliError("--runs", f"must be at least 1, got {runs}")
    if jobs is not None and jobs < 1:
        raise CliError("--jobs", f"must be at least 1, got {jobs}")
    if store is not None:
        check_output_dir("--store", store)
    for option, values in (("--loss", loss), ("--profile", profile), ("--cc", cc)):
        for i, value in enumerate(values or ()):
            if value in (values or ())[:i]:
                raise CliError(option, f"value '{value}' is given more than once")
    if out is not None:
        check_outputs([Output("--out", out, "", (".md",))], force=force)
    size = bytes_ or "100MB"
    table = cc_table(
        runs=runs,
        bytes_=size,
        losses=loss or DEFAULT_LOSSES,
        profiles=profile or DEFAULT_PROFILES,
        algorithms=cc,
        store=store,
        jobs=jobs,
    )
    command = "vtlab cc table " + " ".join(sys.argv[3:]) if len(sys.argv) > 3 else "vtlab cc table"
    text = to_markdown(table, runs=runs, bytes_=size, command=command.strip())
    if out is None:
        typer.echo(text, nl=False)
    else:
        out.write_text(text)
        _console(stderr=True).print(f"wrote {out}", markup=False)


@app.command("version")
def version_command() -> None:
    """Print the vtlab version."""
    typer.echo(f"vtlab {_core.version()}")


from vtlab import cli_validate  # noqa: E402  (registers `vtlab validate FAMILY`)
from vtlab.cli_validate_iso15118 import register_iso15118  # noqa: E402
from vtlab.cli_validate_wifi import register_wifi  # noqa: E402

validate_group = cli_validate.register(app)
register_wifi(validate_group, app)
register_iso15118(validate_group, app)

from vtlab import validate_lte  # noqa: E402  (registers `vtlab validate-lte`)

validate_lte.register(app)

from vtlab import reproduce  # noqa: E402  (registers `vtlab reproduce` and `vtlab study`)

reproduce.register(app)
reproduce.register(app, "study")


def main() -> None:
    """Entry point of the ``vtlab`` script."""
    app(prog_name="vtlab")


if __name__ == "__main__":  # pragma: no cover
    main()
