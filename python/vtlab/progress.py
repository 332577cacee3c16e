"""A progress bar over runs, with elapsed time and ETA, on stderr."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def columns() -> tuple[Any, ...]:
    """The columns of every vtlab progress bar: label, bar, done/total, elapsed, ETA."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )


@contextmanager
def run_progress(
    total: int, enabled: bool = True, label: str = "runs"
) -> Iterator[Callable[[], None]]:
    """Yield an ``advance()`` callable for ``total`` runs.

    The bar is shown only when ``enabled``, there is more than one run and stderr is
    a terminal or a Jupyter notebook (so logs and pipes stay clean).
    """
    if not enabled or total <= 1:  # decided before importing rich (start-up time)
        yield lambda: None
        return
    from rich.console import Console

    console = Console(stderr=True)
    if not (console.is_terminal or console.is_jupyter):
        yield lambda: None
        return

    from rich.progress import Progress

    with Progress(*columns(), console=console, transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)
