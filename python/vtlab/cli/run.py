"""``vtlab run``: run a scenario RUNS times and print mean ± 95 % CI per flow (and per
session), or one JSON object per row; optionally write the rows, a TCP trace, typed
events and packet captures."""

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vtlab import _core
from vtlab.api import Interrupted, pcap_dir, run_many
from vtlab.cli.display import console, print_json_rows, print_table
from vtlab.cli.options import (
    BytesOpt,
    CcOpt,
    CcParamOpt,
    ColumnsOpt,
    ForceOpt,
    FormatOpt,
    LossOpt,
    PresetArg,
    ProfileOpt,
    QdiscOpt,
    ScenarioOpt,
    SetOpt,
    check_jobs,
    check_runs_seed,
    has_sessions,
    jobs_option,
    json_option,
    out_option,
    quiet_option,
    runs_option,
    scenario_from_cli,
    seed_option,
)
from vtlab.cli.tables import output_format
from vtlab.errors import EXIT_INTERRUPTED, CliError, cli_errors
from vtlab.openfiles import ensure_open_files
from vtlab.outputs import (
    Output,
    check_output_dir,
    check_outputs,
    table_outputs,
    write_tables,
    writing,
)
from vtlab.scenario import Scenario

if TYPE_CHECKING:  # pandas-backed: imported when a run has finished
    from vtlab.api import Result

__all__ = ["register", "run_command"]

JsonOpt = Annotated[
    bool,
    json_option(
        "Print one JSON object per flow per run instead of a table (then one per "
        'session per run, marked "table": "sessions").'
    ),
]
SessionOpt = Annotated[
    str | None,
    typer.Option(
        "--session",
        metavar="PROFILE",
        help="Run a request/response charging session (v2g and station presets): "
        "iso15118-2-dc, iso15118-2-ac, din70121-dc, iso15118-2-dc-ecog (sets "
        "session.profile; more with "
        "--set session.FIELD=VALUE, e.g. session.duration=5min).",
        show_default=False,
    ),
]
RunOutOpt = Annotated[
    Path | None,
    out_option(
        "Write the flow rows to this .parquet or .csv file (links beside it, "
        "*.links.parquet or *.links.csv; Parquet files carry the scenario)."
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
RunsOpt = Annotated[int, runs_option("Number of runs.")]
RunJobsOpt = Annotated[
    int | None,
    jobs_option(
        "Parallel runs, in threads (default: one per core, at most RUNS; 1 with --trace, "
        "which is written as it goes)."
    ),
]
SeedOpt = Annotated[int, seed_option("First seed; runs use SEED..SEED+RUNS-1.")]
QuietOpt = Annotated[
    bool, quiet_option("No progress bar, status lines or summary line; table only.")
]


def register(app: typer.Typer) -> None:
    """Add ``vtlab run``."""
    app.command("run")(run_command)


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
    runs: RunsOpt = 1,
    seed: SeedOpt = 1,
    jobs: RunJobsOpt = None,
    set_: SetOpt = None,
    json_out: JsonOpt = False,
    fmt: FormatOpt = "table",
    columns: ColumnsOpt = None,
    out: RunOutOpt = None,
    trace: TraceOpt = None,
    trace_mode: TraceModeOpt = "sampled",
    events: EventsOpt = None,
    pcap: PcapOpt = None,
    pcap_points: PcapPointsOpt = None,
    pcap_headers_only: PcapHeadersOpt = False,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Run a scenario RUNS times and report mean ± 95 % confidence interval per flow
    (and per request/response session)."""
    fmt, jobs = _checked(trace_mode, runs, seed, fmt, json_out, jobs, trace)
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
    if out is not None and has_sessions(sc):  # the session files beside --out too
        check_outputs(_run_outputs(out, trace, events, sessions=True), force=force)
    seeds = list(range(seed, seed + runs))
    points = _check_pcap(sc, pcap, pcap_points, seeds, force)
    from vtlab.tracefile import TraceWriter

    started = time.perf_counter()
    writer = TraceWriter(trace) if trace is not None else None
    try:
        # The trace and the captures are written as the runs go.
        with writing({"--trace": trace, "--pcap": pcap}), _capture_errors():
            res, interrupted = _run_keeping_completed(
                sc,
                seeds,
                progress=not (quiet or fmt == "json"),
                trace=trace_mode if trace is not None else False,
                events=events is not None,
                trace_to=writer.write if writer is not None else None,
                on_result=print_json_rows if fmt == "json" else None,
                jobs=jobs,
                **_capture_args(pcap, points, pcap_headers_only),
            )
    finally:
        if writer is not None:
            with writing({"--trace": trace}):
                writer.close()
    wall = time.perf_counter() - started
    seeds = seeds[: len(res.meta.get("seeds", [res.meta.get("seed")]))]
    _write_files(res, sc, out, trace, writer, events, pcap, runs=runs, quiet=quiet)
    if fmt != "json":
        print_table(res, len(seeds), seeds, wall, quiet, fmt=fmt, columns=columns)
    _report_budgets(res)
    if interrupted:
        print(f"interrupted after {len(seeds)} completed run(s); they were kept", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED)


def _checked(
    trace_mode: str,
    runs: int,
    seed: int,
    fmt: str,
    json_out: bool,
    jobs: int | None,
    trace: Path | None,
) -> tuple[str, int]:
    """Check ``--trace-mode``, ``--runs``/``--seed``, ``--format`` and ``--jobs``
    (several jobs are refused with ``--trace``, written as the runs go); return the
    format and the jobs (default: one per core, at most ``runs``; 1 with ``--trace``)."""
    if trace_mode not in ("sampled", "changes"):
        raise CliError("--trace-mode", f"{trace_mode!r} is not one of 'sampled', 'changes'")
    check_runs_seed(runs, seed)
    check_jobs(jobs)
    if jobs is not None and jobs > 1 and trace is not None:
        raise CliError("--jobs", "--trace is written as the runs go, one run at a time: give -j 1")
    if jobs is None:  # the runs' results do not depend on it: rows come in seed order
        jobs = 1 if trace is not None else min(runs, os.cpu_count() or 1)
    return output_format(fmt, json_out), jobs


#: A budget that can end a run early: the ``abort_reason`` of what was still running
#: then, the scenario field that sets it, and what it bounds.
BUDGETS = (
    ("event_budget", "max_events", "the events it may process"),
    ("output_budget", "max_output_bytes", "its traces, events, message rows and captures"),
)


def _report_budgets(res: "Result") -> None:
    """Say on stderr, naming the field, which budget ended a run before its flows or
    sessions were done (their rows carry the reason)."""
    reasons = {*res.column("flows", "abort_reason"), *res.column("sessions", "abort_reason")}
    for reason, field, bounds in BUDGETS:
        if reason in reasons:
            print(
                f"warning: {field}: a run reached its budget for {bounds} and ended "
                f"early; what was still running has abort_reason = {reason} "
                f"(docs/reliability.md)",
                file=sys.stderr,
            )


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


def _write_files(
    res: "Result",
    scenario: Scenario,
    out: Path | None,
    trace: Path | None,
    writer: Any,
    events: Path | None,
    pcap: Path | None,
    *,
    runs: int,
    quiet: bool,
) -> None:
    """Write ``--out`` and ``--events`` (the trace and the captures are written while
    the runs go) and, unless ``quiet``, say on stderr what was written."""
    writes = any(x is not None for x in (out, trace, events, pcap))
    status = console(stderr=True) if writes and not quiet else None
    if pcap is not None and status is not None:
        _report_captures(res, pcap if runs == 1 else pcap / "seed-*", status)
    if out is not None:
        partial = [o.path for o in table_outputs("--out", out, sessions=res.has_sessions())]
        with writing({"--out": out}, remove=partial):
            written = write_tables(res, out, scenario)
        if status is not None:
            status.print(
                "wrote " + ", ".join(f"{path} ({name})" for name, path in written.items()),
                markup=False,
            )
    if writer is not None and status is not None:
        status.print(f"wrote {trace} ({writer.rows} trace rows)", markup=False)
    if events is not None:
        with writing({"--events": events}, remove=[events]):
            _write_events(res, events, status, scenario)


def _report_captures(res: "Result", where: Path, status: Any) -> None:
    files = [f for m in res.meta.get("runs", [res.meta]) for f in m.get("pcap", [])]
    status.print(
        f"wrote {len(files)} capture file{'s' if len(files) != 1 else ''} in {where} "
        f"({sum(f['packets'] for f in files):,} packets)",
        markup=False,
    )


def _write_events(res: "Result", path: Path, status: Any, sc: Scenario) -> None:
    """Write the events of ``res`` as Parquet or qlog (by the file's ending); the
    flows' senders in ``sc`` are the qlog traces' vantage points."""
    if res.events is None:
        raise CliError("--events", "the simulator returned no events")
    if path.name.lower().endswith(".parquet"):
        res.events.to_parquet(path, index=False)
    else:
        from vtlab.qlog import flow_endpoints, write_qlog

        rows = res.events.to_dict(orient="records")
        write_qlog(rows, path, endpoints=flow_endpoints(sc.expanded()))
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
        if where.is_dir():  # the files it would overwrite, as for --out
            check_outputs([Output("--pcap", where / name) for name in names], force=force)
    ensure_open_files(len(names), "--pcap")
    return points


def _capture_args(pcap: Path | None, points: list[str] | None, headers_only: bool) -> dict:
    """``run_many``'s capture arguments."""
    return {"pcap": pcap, "pcap_points": points, "pcap_payload": not headers_only}


@contextlib.contextmanager
def _capture_errors() -> Iterator[None]:
    """A capture file that cannot be opened when its run starts (checked names and
    directory, but e.g. no space left) is the core's ``pcap: ...`` error: name
    ``--pcap``."""
    try:
        yield
    except _core.ScenarioError as e:
        field, _, problem = str(e).partition(": ")
        if field != "pcap":
            raise
        raise CliError("--pcap", problem) from None
