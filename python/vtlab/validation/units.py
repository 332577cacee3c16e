"""Option values of a validation: loss rates and transfer sizes, parsed once for every
family, and the range checks of counts (runs, jobs)."""

from __future__ import annotations

import json
from typing import Any

from vtlab.validation.errors import ValidateError

__all__ = ["at_least", "parse_bytes", "parse_loss"]


def parse_loss(text: str, option: str = "--loss") -> float:
    """A mean loss rate in [0, 1): ``5%`` -> 0.05, ``0.25 %`` -> 0.0025, ``0.01`` -> 0.01.
    Raises :class:`ValidateError` naming ``option``.

    >>> parse_loss("5%"), parse_loss("0.25 %"), parse_loss("0.01")
    (0.05, 0.0025, 0.01)
    """
    s = str(text).strip()
    try:
        value = float(s[:-1].strip()) / 100 if s.endswith("%") else float(s)
    except ValueError:
        raise ValidateError(option, f"not a loss rate: '{text}' (e.g. 5% or 0.05)") from None
    if not 0 <= value < 1:
        raise ValidateError(option, f"{text} is outside [0, 1)")
    return value


def parse_bytes(text: str | int, option: str = "--bytes") -> int:
    """A transfer size as vtlab understands it (``100MB``, ``2MB``, ``128KiB``).
    Raises :class:`ValidateError` naming ``option``."""
    from vtlab import _core
    from vtlab._core import ScenarioError

    try:
        value: Any = int(text)
    except ValueError:
        value = str(text)
    try:
        expanded = json.loads(_core.expand(json.dumps({"preset": "v2g", "bytes": value})))
    except ScenarioError as exc:
        raise ValidateError(option, str(exc)) from None
    return int(expanded["flows"][0]["bytes"])


def at_least(option: str, value: int, minimum: int = 1) -> int:
    """``value`` if it is at least ``minimum``, else :class:`ValidateError`.

    >>> at_least("--runs", 3)
    3
    """
    if value < minimum:
        raise ValidateError(option, f"must be at least {minimum}, got {value}")
    return value
