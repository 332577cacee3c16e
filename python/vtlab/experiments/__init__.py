"""Paper reproductions, one module per study (``vtlab reproduce NAME``).

An experiment module declares its whole reproduction — scenarios, grids, figure
specifications and the paper's published numbers — and exposes:

* ``NAME`` (str) and ``DESCRIPTION`` (one line, shown by ``vtlab reproduce --list``);
* ``reproduce(config: vtlab.experiments.common.Config) -> common.Outcome``, which runs
  the campaign into ``config.out`` and writes the figures, tables and ``report.md``;
* ``expected_outputs() -> list[str]``, the file names it writes.

Shared helpers (sweeps into a campaign folder, CI summaries, figure style, report
tables) live in :mod:`vtlab.experiments.common`. To add a study, write its module and
list it in :data:`EXPERIMENTS`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["EXPERIMENTS", "describe", "load", "names"]

#: Experiment name → module path.
EXPERIMENTS: dict[str, str] = {
    "park2019": "vtlab.experiments.park2019",
    "martignon": "vtlab.experiments.martignon",
}


def names() -> list[str]:
    """Names of the available experiments."""
    return list(EXPERIMENTS)


def load(name: str) -> ModuleType:
    """The module of experiment ``name``; ``KeyError`` naming the choices if unknown."""
    try:
        path = EXPERIMENTS[name]
    except KeyError:
        raise KeyError(
            f"unknown experiment {name!r} (available: {', '.join(EXPERIMENTS)})"
        ) from None
    return importlib.import_module(path)


def describe() -> list[tuple[str, str]]:
    """(name, one-line description) of every experiment."""
    return [(name, str(getattr(load(name), "DESCRIPTION", ""))) for name in EXPERIMENTS]
