"""The ``vtlab`` command line (typer).

Commands: ``run``, ``sweep``, ``bench``, ``expand``, ``presets``, ``cc list``,
``cc table``, ``version``.

Adding a command: define a function in this module decorated with ``@app.command()``
(or ``@cc_app.command()`` for a ``cc`` subcommand) and, under it, ``@cli_errors`` so
that bad input prints ``error: <message>`` and exits with status 2.  Commands that take
a scenario can reuse the option aliases below (``PresetArg``, ``ScenarioOpt``, ...)
and :func:`scenario_from_cli`.
"""

import functools
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer

from vtlab import _core
from vtlab._core import ScenarioError
from vtlab.api import MAX_SEED, Result, run_many
from vtlab.scenario import Scenario, apply_assignment, parse_value, set_path
from vtlab.stats import summarize
from vtlab.sweep import Axis, Sweep

__all__ = ["CliError", "app", "cc_app", "cli_errors", "main", "scenario_from_cli"]

#: Exit status for bad input (same as typer's own usage errors).
EXIT_USAGE = 2

app = typer.Typer(
    name="vtlab",
    help="vtlab: packet-level TCP congestion-control simulator for vehicle links.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
cc_app = typer.Typer(help="Congestion controls.", no_args_is_help=True)
app.add_typer(cc_app, name="cc")


class CliError(Exception):
    """Bad command-line input; printed as ``error: <message>`` with exit status 2."""


F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str) -> NoReturn:
    one_line = " ".join(part.strip() for part in str(message).splitlines() if part.strip())
    typer.echo(f"error: {one_line}", err=True)
    raise typer.Exit(EXIT_USAGE)


def cli_errors(fn: F) -> F:
    """Turn expected errors into one ``error: <message>`` line on stderr and exit 2.

    Handles :class:`ScenarioError`, :class:`CliError`, other ``ValueError``s (bad
    seeds) and ``OSError`` (missing or unwritable files).  Set ``VTLAB_DEBUG=1`` to get
    the traceback instead.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BrokenPipeError:
            raise  # output piped into e.g. `head`: the CLI framework exits quietly
        except (ScenarioError, CliError, ValueError, OSError) as exc:
            if os.environ.get("VTLAB_DEBUG"):
                raise
            if isinstance(exc, OSError) and exc.filename is not None:
                _fail(f"{exc.filename}: {exc.strerror or exc}")
            _fail(str(exc) or type(exc).__name__)

    return wrapper  # type: ignore[return-value]


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
) -> Scenario:
    """Build the scenario a command line describes.

    Starts from ``{"preset": PRESET}``, the ``--scenario`` file, or (when neither is
    given and the command has one) a copy of ``default``; then applies, in
    order: ``--bytes``, ``--cc``, ``--cc-param``, ``--loss`` and finally every
    ``--set``.  Raises :class:`CliError`/:class:`ScenarioError` on bad input.
    """
    if preset is not None and scenario_file is not None:
        raise CliError("give either a PRESET or --scenario FILE, not both")
    if preset is None and scenario_file is None and default is None:
        allowed = ", ".join(_core.presets())
        raise CliError(f"give a PRESET (one of: {allowed}) or --scenario FILE")
    if scenario_file is not None:
        sc = Scenario.from_toml(scenario_file)
    elif preset is None:
        sc = Scenario(json.loads(json.dumps(default)))
    else:
        sc = Scenario({"preset": preset})
    if bytes_ is not None:
        set_path(sc.spec, "bytes", parse_value(bytes_))
    if cc is not None:
        set_path(sc.spec, "tcp.cc", cc)
    for item in cc_params or ():
        apply_assignment(_cc_params_table(sc), item, option="--cc-param")
    if loss is not None:
        set_path(sc.spec, "loss.mean_loss", parse_value(loss))
    for item in sets or ():
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


def _print_json_rows(res: Result) -> None:
    for record in res.flows.to_dict(orient="records"):
        line = json.dumps({str(k): _json_value(v) for k, v in record.items()})
        sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _print_table(
    res: Result,
    runs: int,
    seeds: list[int],
    wall: float,
    quiet: bool,
    by: Sequence[str] = ("cc", "flow"),
) -> None:
    from rich.markup import escape
    from rich.table import Table

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


@app.command("run")
@cli_errors
def run_command(
    preset: PresetArg = None,
    scenario: ScenarioOpt = None,
    cc: CcOpt = None,
    cc_param: CcParamOpt = None,
    loss: LossOpt = None,
    bytes_: BytesOpt = None,
    runs: Annotated[int, typer.Option("--runs", "-n", help="Number of runs.")] = 1,
    seed: Annotated[
        int, typer.Option("--seed", help="First seed; runs use SEED..SEED+RUNS-1.")
    ] = 1,
    set_: SetOpt = None,
    json_out: Annotated[
        bool,
        typer.Option("--json", help="Print one JSON object per flow per run instead of a table."),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write the flow rows to this Parquet file (links beside it, *.links.parquet).",
            show_default=False,
            dir_okay=False,
        ),
    ] = None,
    trace: Annotated[
        Path | None,
        typer.Option(
            "--trace",
            help="Record TCP state over time and write it here (.parquet or .csv).",
            show_default=False,
            dir_okay=False,
        ),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="No progress bar, status lines or summary line; table only."
        ),
    ] = False,
) -> None:
    """Run a scenario RUNS times and report mean ± 95 % confidence interval per flow."""
    if runs < 1:
        raise CliError(f"--runs must be at least 1, got {runs}")
    if seed < 0:
        raise CliError(f"--seed must be a non-negative integer (0 to 2**64-1), got {seed}")
    if seed + runs - 1 > MAX_SEED:
        raise CliError(f"--seed {seed} with --runs {runs} goes past the largest seed {MAX_SEED}")
    if trace is not None and trace.suffix.lower() not in (".parquet", ".csv"):
        raise CliError(f"--trace: file name must end in .parquet or .csv, got '{trace}'")

    sc = scenario_from_cli(
        preset, scenario, cc=cc, cc_params=cc_param, loss=loss, bytes_=bytes_, sets=set_
    )
    seeds = list(range(seed, seed + runs))
    started = time.perf_counter()
    res = run_many(
        sc,
        seeds,
        progress=not (quiet or json_out),
        trace=trace is not None,
        on_result=_print_json_rows if json_out else None,
    )
    wall = time.perf_counter() - started

    status = _console(stderr=True)
    if out is not None:
        written = res.to_parquet(out, traces=False)
        if not quiet:
            status.print(
                f"wrote {written['flows']} (flows) and {written['links']} (links)", markup=False
            )
    if trace is not None:
        if res.traces is None:
            raise CliError("the simulator returned no traces")
        if trace.suffix.lower() == ".csv":
            res.traces.to_csv(trace, index=False)
        else:
            res.traces.to_parquet(trace, index=False)
        if not quiet:
            status.print(f"wrote {trace} ({len(res.traces)} trace rows)", markup=False)
    if not json_out:
        _print_table(res, runs, seeds, wall, quiet)


# -- expand ----------------------------------------------------------------------------


def parse_axis(text: str) -> Axis:
    """``[NAME:]PATH=V1,V2,...`` → an :class:`Axis` (values parsed like ``--set``)."""
    name, sep, rest = text.partition(":")
    if not sep or "=" in name:
        name, rest = "", text
    path, eq, values = rest.partition("=")
    if not eq or not path.strip() or not values.strip():
        raise CliError(f"--axis expects [NAME:]PATH=V1,V2,..., got {text!r}")
    levels = [parse_value(v.strip()) for v in values.split(",") if v.strip()]
    try:
        axis = Axis.values(path.strip(), levels, name=name.strip() or None)
    except ValueError as e:
        raise CliError(f"--axis {text!r}: {e}") from None
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
            "PATH with dots as underscores); repeatable, expanded as a cartesian product.",
            show_default=False,
        ),
    ] = None,
    cc: CcOpt = None,
    cc_param: CcParamOpt = None,
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
            file_okay=False,
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", help="Parallel runs (default: one per core).", show_default=False
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write all flow rows to this Parquet file.",
            show_default=False,
            dir_okay=False,
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Table only.")] = False,
) -> None:
    """Run a grid of scenario variations × seeds in parallel; report mean ± 95 % CI per point."""
    if runs < 1:
        raise CliError(f"--runs must be at least 1, got {runs}")
    if seed < 0 or seed + runs - 1 > MAX_SEED:
        raise CliError(f"--seed must be in [0, {MAX_SEED}] (with --runs), got {seed}")
    if jobs is not None and jobs < 1:
        raise CliError(f"--jobs must be at least 1, got {jobs}")
    sc = scenario_from_cli(
        preset, scenario, cc=cc, cc_params=cc_param, loss=loss, bytes_=bytes_, sets=set_
    )
    axes = [parse_axis(a) for a in axis or ()]
    seeds = list(range(seed, seed + runs))
    started = time.perf_counter()
    try:
        sweep = Sweep(sc, axes, seeds)
    except ValueError as e:
        raise CliError(str(e)) from None
    res = sweep.run(store, jobs=jobs, progress=not quiet)
    wall = time.perf_counter() - started
    if out is not None:
        res.to_parquet(out, traces=False)
    sets_cc = any(path == "tcp.cc" for a in axes for _, sets in a.levels for path, _ in sets)
    by = [*(a.name for a in axes), *([] if sets_cc else ["cc"]), "flow"]
    _print_table(res, runs, seeds, wall, quiet, by=by)


@app.command("bench")
@cli_errors
def bench_command(
    preset: PresetArg = None,
    scenario: ScenarioOpt = None,
    cc: CcOpt = None,
    cc_param: CcParamOpt = None,
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
) -> None:
    """Time the engine on a scenario (default: NewReno, 100 MB, V2G, 5 % mean loss)."""
    from vtlab.bench import DEFAULT_BENCH_SPEC, bench

    if repeat is not None and repeat < 1:
        raise CliError(f"--repeat must be at least 1, got {repeat}")
    if seed < 0 or seed > MAX_SEED:
        raise CliError(f"--seed must be in [0, {MAX_SEED}], got {seed}")
    sc = scenario_from_cli(
        preset,
        scenario,
        cc=cc,
        cc_params=cc_param,
        loss=loss,
        bytes_=bytes_,
        sets=set_,
        default=DEFAULT_BENCH_SPEC,
    )
    if vs_ns3:
        from vtlab.ns3 import bench_vs_ns3_command

        bench_vs_ns3_command(sc, seed=seed, repeat=repeat, json_out=json_out)
        return
    repeat = 5 if repeat is None else repeat
    res = bench(sc, seed=seed, repeat=repeat)
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
        typer.Option(
            "--store", help="Campaign directory (resumable).", show_default=False, file_okay=False
        ),
    ] = None,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", help="Parallel runs.", show_default=False)
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write the Markdown table here (default: stdout).",
            show_default=False,
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Goodput of every algorithm on the V2G cable, both profiles, as a Markdown table."""
    from vtlab.cctable import DEFAULT_LOSSES, DEFAULT_PROFILES, cc_table, to_markdown

    if runs < 1:
        raise CliError(f"--runs must be at least 1, got {runs}")
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


from vtlab import validate  # noqa: E402  (registers `vtlab validate`)

validate.register(app)

from vtlab import reproduce  # noqa: E402  (registers `vtlab reproduce`)

reproduce.register(app)


def main() -> None:
    """Entry point of the ``vtlab`` script."""
    app(prog_name="vtlab")


if __name__ == "__main__":  # pragma: no cover
    main()
