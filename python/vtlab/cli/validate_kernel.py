"""``vtlab validate kernel``: the ``linux`` profile against this machine's kernel TCP
through ``vtlab emulate`` (:mod:`vtlab.validation.kernel`) on the command line."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Annotated, Any

import typer

from vtlab.cli.display import typed_command
from vtlab.cli.validate_options import QuietOpt, out_dir, seeds_option
from vtlab.cli.validate_run import console, logger, run_family
from vtlab.errors import user_errors
from vtlab.outputs import check_output_dir
from vtlab.validation import kernel, kernel_session
from vtlab.validation.units import parse_bytes, parse_loss

__all__ = ["kernel_command", "register_kernel"]

QuickOpt = Annotated[
    bool,
    typer.Option(
        "--quick",
        help=f"Two cells ({', '.join(kernel.QUICK)}), {kernel.QUICK_RUNS} seeds, "
        f"{kernel.QUICK_BYTES} B (CI runs it).",
    ),
]
CcOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--cc",
        help="The kernel's congestion controls: reno, cubic, bbr (repeatable or "
        "comma-separated; default all).",
        show_default=False,
    ),
]
LossOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--loss",
        help="Mean burst losses of the V2G cable, e.g. 1% (repeatable or comma-separated; "
        "default 0, 0.25 %, 1 %, 5 %).",
        show_default=False,
    ),
]
RunsOpt = seeds_option(f"{kernel.DEFAULT_RUNS}, on both sides")
BytesOpt = Annotated[
    str | None,
    typer.Option(
        "--bytes",
        help=f"Transfer size, e.g. 2MB (default {kernel.DEFAULT_BYTES} B).",
        show_default=False,
    ),
]
NoLteOpt = Annotated[
    bool, typer.Option("--no-lte", help="Only the V2G cable (no lte-cabin cells).")
]
SessionOpt = Annotated[
    bool,
    typer.Option(
        "--session",
        help="The session regime instead: 100 B request/response every 220 ms, 250 ms "
        "deadline, both directions lossy (--loss: default 0.01 %, 0.1 %, 1 %), bursts of "
        "1 and 1-4; out: validation/kernel-session.",
    ),
]
ExchangesOpt = Annotated[
    int,
    typer.Option("--exchanges", help="With --session: exchanges per run (220 ms each)."),
]
JobsOpt = Annotated[
    int,
    typer.Option("--jobs", "-j", help="With --session: kernel runs at once (they mostly wait)."),
]
SessionOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Directory for report.md, agreement.csv and runs.jsonl (default "
        "validation/kernel, with --quick validation/kernel/quick, with --session "
        "validation/kernel-session).",
        show_default=False,
    ),
]
RealtimeOpt = Annotated[
    bool,
    typer.Option("--realtime", help="Run the emulator at real-time priority (SCHED_FIFO 1)."),
]


def kernel_command(
    quick: QuickOpt = False,
    cc: CcOpt = None,
    loss: LossOpt = None,
    runs: RunsOpt = None,
    nbytes: BytesOpt = None,
    no_lte: NoLteOpt = False,
    realtime: RealtimeOpt = False,
    session: SessionOpt = False,
    exchanges: ExchangesOpt = kernel_session.DEFAULT_EXCHANGES,
    jobs: JobsOpt = 10,
    out: SessionOutOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Validate the linux profile against this machine's kernel TCP (reno, cubic, bbr)
    through vtlab emulate, on the same scenario and seeds: completion times, Fieller
    verdicts, paired differences.  Needs root."""
    if session:
        _session(loss, runs, exchanges, jobs, realtime, out, quiet)
        return
    out = out_dir(out, "validation/kernel", quick)
    with user_errors():
        size = None if nbytes is None else parse_bytes(nbytes)
        grid = kernel.make_grid(
            cc, loss, runs, size, quick=quick, lte=not no_lte, realtime=realtime
        )
        check_output_dir("--out", out)
    _run_grid(kernel.validate, grid, out, quiet, "cells")


def _session(
    loss: list[str] | None,
    runs: int | None,
    exchanges: int,
    jobs: int,
    realtime: bool,
    out: Path | None,
    quiet: bool,
) -> None:
    """``--session``: the session regime (:mod:`vtlab.validation.kernel_session`)."""
    out = out or Path("validation/kernel-session")
    with user_errors():
        losses = [parse_loss(x.strip()) for v in loss or () for x in v.split(",") if x.strip()]
        grid = kernel_session.make_grid(losses, runs, exchanges, jobs, realtime)
        check_output_dir("--out", out)
    _run_grid(kernel_session.validate_session, grid, out, quiet, "session cells")


def _run_grid(validate: Any, grid: Any, out: Path, quiet: bool, what: str) -> None:
    """Run one of the family's grids with ``validate`` and print how many ``what``
    agree. SIGTERM ends the grid as Ctrl-C does: the emulation of the run in progress
    removes its namespaces and processes, the finished runs stay cached."""
    con = console()

    def call() -> Any:
        previous = signal.signal(signal.SIGTERM, _interrupt)
        try:
            return validate(
                grid,
                out,
                progress=not quiet,
                command=typed_command(),
                log=logger(con, quiet),
                console=con,
            )
        finally:
            signal.signal(signal.SIGTERM, previous)

    def summary(res: Any) -> str:
        agree = sum(r["verdict"] == "agree" for r in res.table)
        return f"{agree} of {len(res.table)} {what} agree within ±10 %"

    run_family(call, out, con, summary)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def register_kernel(group: typer.Typer, app: typer.Typer) -> None:
    """Add ``kernel`` to the ``validate`` group (``app``: unused, the signature every
    family's registration has)."""
    del app
    group.command("kernel")(kernel_command)
