"""Shared by the observer-cost benchmarks: the reference scenario and loading a
build of the compiled core (this one, or another build's file to compare with)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

#: The engine issue's benchmark scenario: NewReno, 100 MB over the V2G cable at 5 %.
SPEC = {"preset": "v2g", "bytes": "100MB", "loss": {"mean_loss": "5%"}}


def load_core(path: str | None) -> Any:
    """This build's ``vtlab._core``, or the extension module at ``path``."""
    if path is None:
        from vtlab import _core

        return _core
    spec = importlib.util.spec_from_file_location("vtlab._core", Path(path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
