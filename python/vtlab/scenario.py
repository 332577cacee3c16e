"""Scenario specs: loading, dotted-path overrides and expansion.

A *spec* is the JSON object described in ``docs/python-api.md``: either
``{"preset": "v2g", ...preset fields}`` or ``{"preset": "custom", "nodes": [...],
"links": [...], "flows": [...]}``.  The Python layer never interprets the fields
(units such as ``"10Mbps"`` are passed through unchanged); validation and unit parsing
happen in the Rust core, which raises :class:`ScenarioError`.
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import math
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union

from vtlab import _core
from vtlab._core import ScenarioError


def _tomllib() -> Any:
    """The TOML parser, imported on first use (it is not needed to start the CLI)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    return tomllib


__all__ = [
    "Scenario",
    "ScenarioLike",
    "apply_assignment",
    "parse_assignment",
    "parse_value",
    "set_path",
]

#: What :func:`vtlab.run` and friends accept as a scenario.
ScenarioLike = Union["Scenario", Mapping[str, Any], str, "os.PathLike[str]"]

_SEGMENT_RE = re.compile(r"^[A-Za-z0-9_-]+$")


def _first_unusable(value: Any, path: str = "") -> tuple[str, Any]:
    """The dotted path and value of the first part of a spec that JSON cannot carry
    (a non-finite float, a TOML date or time, ...)."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            found = _first_unusable(v, f"{path}.{k}" if path else str(k))
            if found[0]:
                return found
        return "", None
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found = _first_unusable(v, f"{path}[{i}]")
            if found[0]:
                return found
        return "", None
    if isinstance(value, float) and not math.isfinite(value):
        return path, value
    if value is None or isinstance(value, (str, int, float, bool)):
        return "", None
    return path, value


def parse_value(text: str) -> Any:
    """Parse a command-line value as a TOML value, or keep it as a plain string.

    ``"false"`` becomes ``False``, ``"3"`` becomes ``3``, ``"0.5"`` becomes ``0.5``,
    ``'"x"'`` becomes ``"x"``, ``"[1, 2]"`` a list and ``"{a = 1}"`` a dict.  Anything
    that is not a single valid TOML value (``"10Mbps"``, ``"5%"``, ``"bernoulli"``) is
    returned unchanged as a string.  TOML dates and times, and non-finite floats
    (``inf``, ``nan``), are also kept as the original string, since JSON cannot carry
    them.  Surrounding whitespace is removed (quote the value to keep it).

    >>> parse_value("false"), parse_value("3"), parse_value("2ms")
    (False, 3, '2ms')
    """
    stripped = text.strip()
    if not stripped:
        return stripped
    tomllib = _tomllib()
    try:
        doc = tomllib.loads(f"v = {stripped}")
    except tomllib.TOMLDecodeError:
        return stripped
    if set(doc) != {"v"} or not _json_safe(doc["v"]):
        return stripped
    return doc["v"]


def _json_safe(value: Any) -> bool:
    """True if ``value`` (a parsed TOML value) maps onto JSON without loss."""
    if isinstance(value, (_dt.date, _dt.time)):  # datetime is a subclass of date
        return False
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, list):
        return all(_json_safe(v) for v in value)
    if isinstance(value, dict):
        return all(_json_safe(v) for v in value.values())
    return True


def _split_path(path: str) -> list[str]:
    """Split a dotted path into segments, rejecting empty or odd segments."""
    segments = [s.strip() for s in path.strip().split(".")]
    if not path.strip() or any(not _SEGMENT_RE.match(s) for s in segments):
        raise ScenarioError(
            f"invalid key path {path!r}: use dotted names made of letters, digits, "
            "'_' and '-' (e.g. tcp.delayed_ack, flows.0.bytes)"
        )
    return segments


def set_path(spec: dict[str, Any], path: str, value: Any) -> None:
    """Set ``value`` at the dotted ``path`` inside ``spec``, in place.

    Intermediate tables are created as needed.  A segment that is an integer indexes
    into an existing list (``flows.0.bytes``).  Raises :class:`ScenarioError`, naming
    the path, when a parent along the way is neither a table nor a list, or when a
    list index is out of range.
    """
    segments = _split_path(path)
    node: Any = spec
    for depth, seg in enumerate(segments):
        last = depth == len(segments) - 1
        here = ".".join(segments[: depth + 1])
        parent = ".".join(segments[:depth]) or "<root>"
        if isinstance(node, dict):
            if last:
                node[seg] = value
                return
            child = node.get(seg)
            if child is None:
                child = node[seg] = {}
            node = child
        elif isinstance(node, list):
            if not seg.isdigit() or int(seg) >= len(node):
                raise ScenarioError(
                    f"{path}: '{parent}' is a list of {len(node)} item(s); "
                    f"'{seg}' is not a valid index"
                )
            if last:
                node[int(seg)] = value
                return
            node = node[int(seg)]
        else:
            raise ScenarioError(
                f"{path}: '{parent}' is not a table (it is {json.dumps(node)}), "
                f"so '{here}' cannot be set"
            )


def parse_assignment(text: str, *, option: str = "--set") -> tuple[str, Any]:
    """Split ``"key=value"`` into ``(key, parsed value)``.

    The key is everything before the first ``=`` (surrounding whitespace removed); the
    value is parsed with :func:`parse_value`.  Raises :class:`ScenarioError` when
    there is no ``=`` or the key is empty or malformed; ``option`` names the
    command-line option in the message.
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ScenarioError(f"{option}: expected key=value, got {text!r}")
    try:
        _split_path(key)
    except ScenarioError as exc:
        raise ScenarioError(f"{option}: {exc}") from None
    return key, parse_value(raw)


def apply_assignment(spec: dict[str, Any], text: str, *, option: str = "--set") -> None:
    """Parse ``"key=value"`` and apply it to ``spec`` (see :func:`set_path`).

    Error messages start with ``option`` (e.g. ``--set bytes.x: 'bytes' is not a
    table ...``).
    """
    key, value = parse_assignment(text, option=option)
    try:
        set_path(spec, key, value)
    except ScenarioError as exc:
        raise ScenarioError(f"{option} {exc}") from None


def _anchor_trace_paths(spec: Any, base: Path) -> Any:
    """Make the relative capacity-trace files of a scenario file (``trace = "..."``
    inside any table, e.g. ``capacity_down``) relative to the file's directory, as a
    reader of the file expects; paths given on the command line stay relative to
    the working directory."""
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key == "trace" and isinstance(value, str) and not Path(value).is_absolute():
                spec[key] = str(base / value)
            else:
                _anchor_trace_paths(value, base)
    elif isinstance(spec, list):
        for item in spec:
            _anchor_trace_paths(item, base)
    return spec


#: Largest scenario file read (bytes): 64 MiB, counted while reading, so that a
#: device such as ``/dev/zero`` (whose size reads as 0) cannot exhaust memory.  Long
#: capacity traces belong in a trace file (``trace = "..."``, up to 1 GiB).
MAX_SCENARIO_FILE_BYTES = 64 << 20


def _load_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A scenario file's spec: JSON for a name ending in ``.json``, else TOML."""
    p = Path(path)
    with p.open("rb") as fh:  # FileNotFoundError / OSError propagate
        data = fh.read(MAX_SCENARIO_FILE_BYTES + 1)
    if len(data) > MAX_SCENARIO_FILE_BYTES:
        raise ScenarioError(
            f"{p}: a scenario file may have at most {MAX_SCENARIO_FILE_BYTES} bytes (64 MiB); "
            'put a long capacity trace in a trace file (trace = "FILE")'
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{p}: not a UTF-8 text file ({exc.reason})") from None
    if p.name.lower().endswith(".json"):
        try:
            spec = json.loads(text)
        except ValueError as exc:
            raise ScenarioError(f"{p}: JSON syntax error: {exc}") from None
        if not isinstance(spec, dict):
            raise ScenarioError(f"{p}: a scenario file must hold a JSON object")
        return _anchor_trace_paths(spec, p.parent)
    tomllib = _tomllib()
    try:
        return _anchor_trace_paths(tomllib.loads(text), p.parent)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{p}: TOML syntax error: {exc}") from None


class Scenario:
    """A scenario spec: a mutable dict plus helpers.

    The wrapper holds its own deep copy of the spec, so changing a ``Scenario`` never
    changes the dict it was built from.

    >>> sc = Scenario.preset("v2g", bytes="5MB").set("tcp.cc", "newreno")
    >>> sc.spec
    {'preset': 'v2g', 'bytes': '5MB', 'tcp': {'cc': 'newreno'}}
    """

    __slots__ = ("spec", "source")

    def __init__(
        self, spec: Mapping[str, Any], *, source: str | os.PathLike[str] | None = None
    ) -> None:
        """Wrap a copy of ``spec``; ``source`` records the file it came from, if any."""
        if not isinstance(spec, Mapping):
            raise TypeError(f"a scenario spec must be a mapping, got {type(spec).__name__}")
        self.spec: dict[str, Any] = copy.deepcopy(dict(spec))
        self.source: Path | None = Path(source) if source is not None else None

    # -- construction -------------------------------------------------------------------

    @classmethod
    def preset(cls, name: str, **fields: Any) -> Scenario:
        """A spec for preset ``name`` with the given top-level fields.

        ``Scenario.preset("v2g", bytes="5MB", tcp={"cc": "newreno"}, loss={"mean_loss":
        "5%"})``.  Fields are not validated until the scenario is expanded or run.
        """
        return cls({"preset": name, **fields})

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> Scenario:
        """Load a scenario file: TOML holding the spec object, or, for a name ending
        in ``.json``, JSON holding it (a spec, or the resolved scenario that
        ``vtlab expand`` prints).

        Raises ``FileNotFoundError``/``OSError`` when the file cannot be read and
        :class:`ScenarioError` on a syntax error (message names file, line and
        column).  Field validation happens later, in the core.
        """
        return cls(_load_file(path), source=path)

    @classmethod
    def coerce(cls, scenario: ScenarioLike) -> Scenario:
        """Turn anything :func:`vtlab.run` accepts into a ``Scenario``.

        * a ``Scenario`` is returned as is;
        * a mapping is wrapped (copied);
        * a :class:`os.PathLike` is loaded as a TOML file;
        * a ``str`` ending in ``.toml`` or ``.json`` or containing a path separator is
          loaded as a scenario file, any other ``str`` is taken as a preset name
          (``"v2g"``).
        """
        if isinstance(scenario, Scenario):
            return scenario
        if isinstance(scenario, Mapping):
            return cls(scenario)
        if isinstance(scenario, os.PathLike):
            return cls.from_toml(scenario)
        if isinstance(scenario, str):
            looks_like_path = scenario.endswith((".toml", ".json")) or any(
                sep and sep in scenario for sep in (os.sep, os.altsep)
            )
            if looks_like_path:
                return cls.from_toml(scenario)
            return cls({"preset": scenario})
        raise TypeError(
            "scenario must be a Scenario, a dict spec, a preset name or a path to a "
            f".toml file, got {type(scenario).__name__}"
        )

    # -- editing ------------------------------------------------------------------------

    def set(self, path: str, value: Any) -> Scenario:
        """Set a field by dotted path (``"tcp.delayed_ack"``), creating tables as needed.

        Returns ``self`` so calls can be chained.  Raises :class:`ScenarioError` when a
        parent along the path is not a table.
        """
        set_path(self.spec, path, value)
        return self

    def copy(self) -> Scenario:
        """An independent deep copy."""
        return Scenario(self.spec, source=self.source)

    # -- serialisation ------------------------------------------------------------------

    def to_json(self) -> str:
        """The spec as compact JSON, as handed to the core."""
        try:
            return json.dumps(self.spec, allow_nan=False, separators=(",", ":"))
        except (ValueError, TypeError):
            path, value = _first_unusable(self.spec)
            if isinstance(value, float):
                problem = f"{value} is not a finite number"
            else:
                problem = f"a {type(value).__name__} ({value}) is not a scenario value"
            raise ScenarioError(f"{path}: {problem}") from None

    def expanded(self) -> dict[str, Any]:
        """The fully resolved scenario from the core (explicit nodes, links and flows,
        all defaults filled in, quantities as integers in base units: ns, bit/s, bytes).

        Raises :class:`ScenarioError` if the spec is invalid.
        """
        return json.loads(self.expanded_json())

    def expanded_json(self) -> str:
        """Like :meth:`expanded` but the core's canonical JSON text, unparsed."""
        return _core.expand(self.to_json())

    def hash(self) -> str:
        """The scenario hash (16 hex digits of the SHA-256 of the canonical resolved
        JSON), the ``scenario_hash`` every result row of this scenario carries.

        Raises :class:`ScenarioError` if the spec is invalid.
        """
        return _core.scenario_hash(self.to_json())

    def to_toml(self) -> str:
        """The spec as TOML text (needs the optional ``tomli-w`` package).

        Raises ``ImportError`` when ``tomli-w`` is not installed.
        """
        try:
            import tomli_w
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "Scenario.to_toml() needs the 'tomli-w' package: pip install tomli-w"
            ) from exc
        return tomli_w.dumps(self.spec)

    # -- dunder -------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scenario):
            return NotImplemented
        return self.spec == other.spec

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        src = f", source={str(self.source)!r}" if self.source is not None else ""
        return f"Scenario({self.spec!r}{src})"
