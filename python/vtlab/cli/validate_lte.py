"""``vtlab validate lte``: the LTE trace replay against ns-3's LTE module
(:mod:`vtlab.validation.lte`), with ``vtlab validate-lte`` kept as a hidden alias for
one release.  This module only parses, prints and exits."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from vtlab.cli.display import typed_command
from vtlab.cli.validate_options import QuietOpt, RerunNs3Opt, out_dir, quick_option, seeds_option
from vtlab.errors import EXIT_INTERRUPTED, fail, user_errors
from vtlab.outputs import check_output_dir, writing
from vtlab.validation import lte
from vtlab.validation.errors import Ns3Error, ValidateError
from vtlab.validation.lte_cases import (
    CASES,
    DEFAULT_DURATION_S,
    DEFAULT_REPEAT,
    DEFAULT_SEEDS,
    QUICK_CASES,
    QUICK_SEEDS,
)

__all__ = ["lte_command", "register_lte"]

CaseOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--case",
        metavar="NAME",
        help="Case to compare; repeatable. Default: all ("
        + ", ".join(c.name for c in CASES)
        + ").",
        show_default=False,
    ),
]

DurationOpt = Annotated[
    float,
    typer.Option("--duration", help="Simulated seconds per case (ns-3 and vtlab)."),
]

SeedsOpt = seeds_option(f"{DEFAULT_SEEDS}; the replay is deterministic, so they must agree")
QuickOpt = quick_option(f"the cases {', '.join(QUICK_CASES)}, {QUICK_SEEDS} seeds")

ToleranceOpt = Annotated[
    str,
    typer.Option("--tolerance", help="Agreement band for every ratio, e.g. 15% or 0.15."),
]

UplinkPeriodOpt = Annotated[
    int,
    typer.Option(
        "--uplink-period",
        metavar="MS",
        help="vtlab's uplink: one opportunity every MS ms (1: every TTI), granted on request.",
    ),
]

RadioDelayOpt = Annotated[
    float | None,
    typer.Option(
        "--radio-delay",
        metavar="MS",
        help="vtlab's one-way radio delay. Default: from ns-3's base RTT.",
        show_default=False,
    ),
]

NoDiagnosticOpt = Annotated[
    bool,
    typer.Option("--no-diagnostic", help="Leave out the free uplink table (no request and grant)."),
]

BenchOpt = Annotated[
    bool,
    typer.Option(
        "--bench",
        help="Also compare wall times (ns-3's from its results) and write speed.csv.",
    ),
]

RepeatOpt = Annotated[int, typer.Option("--repeat", help="vtlab runs per case timed by --bench.")]

#: ``--out``: the LTE family keeps its ns-3 runs in OUT/ns3-cache.jsonl.
LteOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Directory for report.md, agreement.csv and the ns-3 cache [default: "
        "validation/lte; with --quick validation/lte/quick].",
        show_default=False,
    ),
]


def _summary(res: lte.LteValidation, log: Callable[[str], None]) -> None:
    """The closing lines: agreement, speed-ups, the files written."""
    n_agree = sum(1 for r in res.rows if r["verdict"] == "agree")
    log(f"{n_agree}/{len(res.rows)} cases agree · {res.wall_s:.1f} s")
    for s in res.speed_rows:
        log(
            f"speed {s['case']}: {s['speedup_simulation']:,.0f}x (simulation), "
            f"{s['speedup_whole']:,.0f}x (whole)"
        )
    names = ", ".join(str(p) for p in res.paths.values())
    typer.echo(f"wrote {names}")


def lte_command(
    case: CaseOpt = None,
    duration: DurationOpt = DEFAULT_DURATION_S,
    seeds: SeedsOpt = None,
    tolerance: ToleranceOpt = "15%",
    uplink_period: UplinkPeriodOpt = 1,
    radio_delay: RadioDelayOpt = None,
    no_diagnostic: NoDiagnosticOpt = False,
    bench: BenchOpt = False,
    repeat: RepeatOpt = DEFAULT_REPEAT,
    rerun_ns3: RerunNs3Opt = False,
    out: LteOutOpt = None,
    quick: QuickOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Validate vtlab's trace-driven LTE link against ns-3's LTE module: replay
    ns-3's channel capacity in vtlab and compare goodput and RTT (needs the ns-3
    wheel and g++ unless the ns-3 results are cached in OUT)."""
    from rich.console import Console

    if seeds is None:
        seeds = QUICK_SEEDS if quick else DEFAULT_SEEDS
    with user_errors():
        chosen = lte.parse_cases(case if case or not quick else list(QUICK_CASES))
        tol = lte.parse_tolerance(tolerance)
        lte.check_options(duration, seeds, uplink_period, radio_delay, repeat)
        out = out_dir(out, "validation/lte", quick)
        check_output_dir("--out", out)
    console = Console(stderr=True, highlight=False)

    def log(line: str) -> None:
        if not quiet:
            console.print(line, markup=False, soft_wrap=True)

    try:
        with user_errors(), writing({"--out": out}):
            res = lte.validate(
                out,
                cases=[c.name for c in chosen],
                duration_s=duration,
                seeds=seeds,
                tolerance=tol,
                uplink_period_ms=uplink_period,
                radio_delay_ms=radio_delay,
                diagnostic=not no_diagnostic,
                bench=bench,
                repeat=repeat,
                rerun_ns3=rerun_ns3,
                progress=not quiet,
                command=typed_command(),
                log=log,
            )
    except (Ns3Error, ValidateError) as exc:
        if os.environ.get("VTLAB_DEBUG"):
            raise
        fail(str(exc))
    except KeyboardInterrupt:
        console.print(
            f"interrupted: finished ns-3 runs are kept in {out / 'ns3-cache.jsonl'}; "
            "run the same command again to resume",
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    _summary(res, log)


def register_lte(group: typer.Typer, app: typer.Typer) -> None:
    """Add ``lte`` to the ``validate`` group and the old ``validate-lte`` to ``app``,
    hidden, for one release."""
    group.command("lte")(lte_command)
    app.command("validate-lte", hidden=True)(lte_command)
