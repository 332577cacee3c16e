"""Paper reproductions, one package per study (``vtlab reproduce NAME``).

A study package declares its reproduction as data plus small functions — the plan
(grids of axes × seeds × sizes), the paper's published numbers (``paper.toml``, each
with its location in the paper), analysis, figure specifications, the paper's claims
as predicates and the report's sections — in one
:class:`vtlab.experiments.pipeline.Study` named ``STUDY``. The shared pipeline
(:mod:`vtlab.experiments.pipeline`) runs every study: plan → resumable run store →
tables → figures → findings → report.

To add a study, add its package and one line to :data:`EXPERIMENTS`
(docs/studies.md). This module imports nothing heavy: the CLI imports it at start-up.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["EXPERIMENTS", "describe", "load", "load_study", "names"]

#: Experiment name → study package (one line per study).
EXPERIMENTS: dict[str, str] = {
    "park2019": "vtlab.experiments.park2019",
    "martignon": "vtlab.experiments.martignon",
    "hu-lte": "vtlab.experiments.hu_lte",
    "janevski2014": "vtlab.experiments.janevski2014",
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


def load_study(name: str) -> Any:
    """The :class:`~vtlab.experiments.pipeline.Study` of experiment ``name``."""
    return load(name).STUDY


def describe() -> list[tuple[str, str]]:
    """(name, one-line description) of every experiment."""
    return [(name, str(getattr(load(name), "DESCRIPTION", ""))) for name in EXPERIMENTS]
