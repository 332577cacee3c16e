"""Studies, one package per study: paper reproductions (``vtlab reproduce NAME``) and
vtlab's own studies (``vtlab study NAME``).

A study package declares its campaign as data plus small functions — the plan
(grids of axes × seeds × sizes), for a reproduction the paper's published numbers
(``paper.toml``, each with its location in the paper), analysis, figure
specifications, the claims as predicates and the report's sections — in one
:class:`vtlab.experiments.pipeline.Study` named ``STUDY``. The shared pipeline
(:mod:`vtlab.experiments.pipeline`) runs every study: plan → resumable run store →
tables → figures → findings → report. An own study has no paper: no ``paper.toml``,
no comparison table, and its claims are its own findings.

To add a study, add its package and one line to :data:`EXPERIMENTS` (a reproduction)
or :data:`STUDIES` (docs/studies.md). This module imports nothing heavy: the CLI
imports it at start-up.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["EXPERIMENTS", "KINDS", "STUDIES", "describe", "load", "load_study", "names"]

#: Experiment name → study package of a paper reproduction (one line per study).
EXPERIMENTS: dict[str, str] = {
    "park2019": "vtlab.experiments.park2019",
    "martignon": "vtlab.experiments.martignon",
    "hu-lte": "vtlab.experiments.hu_lte",
    "janevski2014": "vtlab.experiments.janevski2014",
}

#: vtlab's own studies (``vtlab study NAME``): name → study package.
STUDIES: dict[str, str] = {
    "iso15118": "vtlab.experiments.iso15118",
}

#: The command of each registry: ``vtlab reproduce`` or ``vtlab study``.
KINDS: dict[str, dict[str, str]] = {"reproduce": EXPERIMENTS, "study": STUDIES}


def _registry(kind: str) -> dict[str, str]:
    try:
        return KINDS[kind]
    except KeyError:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}") from None


def names(kind: str = "reproduce") -> list[str]:
    """Names of the available experiments (``kind="study"``: of vtlab's own studies)."""
    return list(_registry(kind))


def load(name: str, kind: str = "reproduce") -> ModuleType:
    """The module of experiment ``name``; ``KeyError`` naming the choices if unknown."""
    registry = _registry(kind)
    try:
        path = registry[name]
    except KeyError:
        what = "experiment" if kind == "reproduce" else "study"
        raise KeyError(f"unknown {what} {name!r} (available: {', '.join(registry)})") from None
    return importlib.import_module(path)


def load_study(name: str, kind: str = "reproduce") -> Any:
    """The :class:`~vtlab.experiments.pipeline.Study` of experiment ``name``."""
    return load(name, kind).STUDY


def describe(kind: str = "reproduce") -> list[tuple[str, str]]:
    """(name, one-line description) of every experiment (or own study)."""
    return [(name, str(getattr(load(name, kind), "DESCRIPTION", ""))) for name in _registry(kind)]
