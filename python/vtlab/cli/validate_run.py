"""Running one validation family from the command line (``vtlab validate wifi`` and
``vtlab validate iso15118``): status lines, a failed or interrupted run, and the
outcome line.  The families themselves are :mod:`vtlab.validation`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from vtlab.errors import EXIT_INTERRUPTED, fail, user_errors
from vtlab.outputs import writing
from vtlab.validation.errors import Ns3Error

__all__ = ["Log", "console", "logger", "run_family"]

#: Prints one status line.
Log = Callable[[str], None]


def console() -> Any:
    """The console of the progress bar and the status lines (stderr)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def logger(con: Any, quiet: bool) -> Log:
    """Status lines on ``con``, none with ``quiet``."""

    def log(line: str) -> None:
        if not quiet:
            con.print(line, markup=False, soft_wrap=True)

    return log


def run_family(
    call: Callable[[], Any],
    out: Path,
    con: Any,
    summary: Callable[[Any], str],
) -> None:
    """Run ``call`` (a family's ``validate``) and print ``summary(result)`` with the
    report's path; exit 2 with one ``error:`` line for bad input or when ns-3 fails,
    130 on Ctrl-C (the finished runs stay in ``out/runs.jsonl``), 1 when runs failed
    (each printed)."""
    try:
        with user_errors(), writing({"--out": out}):
            res = call()
    except Ns3Error as exc:
        if os.environ.get("VTLAB_DEBUG"):
            raise
        fail(str(exc))
    except KeyboardInterrupt:
        con.print(
            f"interrupted: finished runs are kept in {out / 'runs.jsonl'}; "
            "run the same command again to resume",
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    typer.echo(f"{summary(res)}; report: {res.paths['report']}")
    if res.errors:
        for e in res.errors:
            typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1)
