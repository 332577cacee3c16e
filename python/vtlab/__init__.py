"""vtlab: a packet-level simulator for TCP congestion control over vehicle links.

The simulation engine is written in Rust (``vtlab._core``); this package adds the
Python API and the ``vtlab`` command line.

>>> import vtlab
>>> res = vtlab.run({"preset": "v2g", "bytes": "5MB"}, seed=1)   # doctest: +SKIP
>>> res.flows[["cc", "goodput_bps", "completion_s"]]              # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vtlab import _core
from vtlab._core import ScenarioError

if TYPE_CHECKING:
    from vtlab.advice import advise
    from vtlab.api import Result, run, run_many
    from vtlab.emulation import Emulation, emulate
    from vtlab.results import load
    from vtlab.scenario import Scenario
    from vtlab.stats import jain_index, summarize

__version__: str = _core.version()

#: Attributes imported when first used: a command line that needs none of a module's
#: (``vtlab --help`` needs none at all, ``vtlab run`` not ``advise``) does not pay for
#: its import (docs/cli.md, "Start-up").
_LAZY = {
    "Result": "vtlab.api",
    "run": "vtlab.api",
    "run_many": "vtlab.api",
    "load": "vtlab.results",
    "Scenario": "vtlab.scenario",
    "jain_index": "vtlab.stats",
    "summarize": "vtlab.stats",
    "advise": "vtlab.advice",
    "Emulation": "vtlab.emulation",
    "emulate": "vtlab.emulation",
}
del TYPE_CHECKING


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vtlab' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


def presets() -> list[str]:
    """Names of the built-in scenario presets (e.g. ``["custom", "v2g"]``)."""
    return list(_core.presets())


def congestion_controls() -> list[dict[str, object]]:
    """Every available congestion control: ``name``, ``description``, ``source`` and
    ``params`` (a list of ``{"name", "default", "doc"}``)."""
    return list(_core.congestion_controls())


__all__ = [
    "advise",
    "Emulation",
    "Result",
    "Scenario",
    "ScenarioError",
    "__version__",
    "congestion_controls",
    "emulate",
    "presets",
    "run",
    "run_many",
    "jain_index",
    "load",
    "summarize",
]
