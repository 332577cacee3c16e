"""A progress bar over runs, with elapsed time and ETA, on stderr."""

from __future__ import annotations

import threading
from collections.abc import Iterator
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


class Advance:
    """What :func:`run_progress` yields: called once a run is done; :meth:`paused`
    stops the bar's drawing thread for a while (the bar then shows nothing new)."""

    def __init__(self, bar: Any = None, task: Any = None) -> None:
        self.bar, self.task = bar, task
        self._drawing: tuple[threading.Thread, threading.Event] | None = None

    def __call__(self) -> None:
        if self.bar is not None:
            self.bar.advance(self.task)

    def draw(self) -> None:
        """Start the thread that redraws the bar (elapsed time, ETA) ten times a
        second, as rich's own would."""
        if self.bar is None or self._drawing is not None:
            return
        stop = threading.Event()

        def redraw() -> None:
            while not stop.wait(0.1):
                self.bar.refresh()

        thread = threading.Thread(target=redraw, name="vtlab-progress", daemon=True)
        thread.start()
        self._drawing = (thread, stop)

    def halt(self) -> None:
        """Stop the drawing thread and wait for it to end."""
        if self._drawing is not None:
            thread, stop = self._drawing
            self._drawing = None
            stop.set()
            thread.join()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No thread of the bar's meanwhile: a sweep forks its worker processes so,
        which is safe only while the process runs no other thread."""
        drawing = self._drawing is not None
        self.halt()
        try:
            yield
        finally:
            if drawing:
                self.draw()


@contextmanager
def run_progress(total: int, enabled: bool = True, label: str = "runs") -> Iterator[Advance]:
    """Yield an :class:`Advance` for ``total`` runs: called once a run is done.

    The bar is shown only when ``enabled``, there is more than one run and stderr is
    a terminal or a Jupyter notebook (so logs and pipes stay clean). It is redrawn by
    a thread of its own (:meth:`Advance.paused` stops it for a while), not rich's.
    """
    if not enabled or total <= 1:  # decided before importing rich (start-up time)
        yield Advance()
        return
    from rich.console import Console

    console = Console(stderr=True)
    if not (console.is_terminal or console.is_jupyter):
        yield Advance()
        return

    from rich.progress import Progress

    with Progress(*columns(), console=console, transient=True, auto_refresh=False) as bar:
        advance = Advance(bar, bar.add_task(label, total=total))
        advance.draw()
        try:
            yield advance
        finally:
            advance.halt()
