"""``vtlab study iso15118 --real [--quick]``: real ISO 15118 sessions over the
emulated cable, paired with the session model
(:mod:`vtlab.experiments.iso15118.real_study`; docs/study-iso15118.md)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import typer

from vtlab.errors import EXIT_INTERRUPTED, CliError
from vtlab.outputs import check_output_dir, writing

__all__ = ["run_real_study"]


def _terminated(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def run_real_study(
    name: str | None,
    quick: bool,
    out: Path | None,
    seeds: int | None,
    quiet: bool,
    on_cluster: bool,
) -> None:
    """The body of ``vtlab study NAME --real``."""
    from vtlab.experiments.iso15118.real_study import run_real

    if name != "iso15118":
        raise CliError("--real", f"only the iso15118 study runs a real stack, not {name!r}")
    if on_cluster:
        raise CliError("--real", "runs on this machine: --scheduler and --cluster do not apply")
    if seeds is not None and not 1 <= seeds <= 1000:
        raise CliError("--seeds", f"{seeds} is outside [1, 1000]")
    folder = out if out is not None else Path("out") / f"iso15118-real{'-quick' if quick else ''}"
    check_output_dir("--out", folder)
    signal.signal(signal.SIGTERM, _terminated)

    def log(line: str) -> None:
        if not quiet:
            typer.echo(line, err=True)

    try:
        with writing({"--out": folder}):
            outcome = run_real(folder, quick=quick, seeds=seeds, log=log)
    except KeyboardInterrupt:
        typer.echo("interrupted: finished sessions are kept in OUT/sessions; run the same "
                   "command again to resume", err=True)  # fmt: skip
        raise typer.Exit(EXIT_INTERRUPTED) from None
    typer.echo(
        f"iso15118 --real: wrote {len(outcome.files)} files to {outcome.out} "
        f"(report: {outcome.out / 'report.md'}); {outcome.ran} sessions run, "
        f"{outcome.loaded} read back; wall time {outcome.wall_s:.1f} s"
    )
