"""Option values of a validation: loss rates, tolerances and transfer sizes, and the
range checks of counts (runs, jobs). Units are parsed by the core
(:func:`vtlab._core.parse_quantity`, the parser every scenario field uses); this module
adds only the option's name and its allowed range."""

from __future__ import annotations

from vtlab import _core
from vtlab._core import ScenarioError
from vtlab.validation.errors import ValidateError

__all__ = ["at_least", "parse_bytes", "parse_fraction", "parse_loss"]


def parse_fraction(text: str | float, option: str, *, zero: bool = True) -> float:
    """A fraction in [0, 1) (``zero`` False: in (0, 1)), written as ``5%``, ``0.25 %``
    or ``0.05``. Raises :class:`ValidateError` naming ``option``.

    >>> parse_fraction("15%", "--tolerance", zero=False)
    0.15
    """
    try:
        value = float(_core.parse_quantity("fraction", str(text).strip()))
    except ScenarioError as exc:
        raise ValidateError(option, str(exc)) from None
    low_ok = value >= 0 if zero else value > 0
    if not (low_ok and value < 1):
        raise ValidateError(option, f"{text} is outside {'[' if zero else '('}0, 1)")
    return value


def parse_loss(text: str | float, option: str = "--loss") -> float:
    """A mean loss rate in [0, 1): ``5%`` -> 0.05, ``0.25 %`` -> 0.0025, ``0.01`` -> 0.01.
    Raises :class:`ValidateError` naming ``option``.

    >>> parse_loss("5%"), parse_loss("0.25 %"), parse_loss("0.01")
    (0.05, 0.0025, 0.01)
    """
    return parse_fraction(text, option)


def parse_bytes(text: str | int, option: str = "--bytes") -> int:
    """A transfer size as vtlab understands it (``100MB``, ``2MB``, ``128KiB``).
    Raises :class:`ValidateError` naming ``option``.

    >>> parse_bytes("2MB"), parse_bytes("128KiB"), parse_bytes(1000)
    (2000000, 131072, 1000)
    """
    try:
        return int(_core.parse_quantity("bytes", str(text).strip()))
    except ScenarioError as exc:
        raise ValidateError(option, str(exc)) from None


def at_least(option: str, value: int, minimum: int = 1) -> int:
    """``value`` if it is at least ``minimum``, else :class:`ValidateError`.

    >>> at_least("--runs", 3)
    3
    """
    if value < minimum:
        raise ValidateError(option, f"must be at least {minimum}, got {value}")
    return value
