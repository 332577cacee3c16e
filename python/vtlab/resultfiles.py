"""Result files: the Parquet metadata a result file carries (its run's meta and its
scenario) and the names of a result's sibling files. Kept apart from :mod:`vtlab.api`,
which writes and reads them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from vtlab.scenario import Scenario

__all__ = [
    "MAX_CARRIED_SCENARIO_BYTES",
    "META_KEY",
    "SCENARIO_KEY",
    "json_default",
    "scenario_metadata",
    "sibling_paths",
    "write_parquet",
]

#: Schema-metadata key of the run metadata (seeds, wall time, ...) in a flows file.
META_KEY = b"vtlab.meta"

#: Schema-metadata key of the scenario a result file carries (:func:`scenario_metadata`).
SCENARIO_KEY = b"vtlab.scenario"


#: Largest spec or resolved scenario (bytes of JSON) a result file carries: a long
#: capacity trace is part of the resolved scenario (6 bytes or so a line), and every
#: file of a run would hold a copy; larger ones are left out (the spec names the
#: trace file, the rows' ``scenario_hash`` identifies the scenario).
MAX_CARRIED_SCENARIO_BYTES = 1 << 20


def scenario_metadata(scenario: Scenario) -> dict[str, Any]:
    """What a result file carries about its scenario: ``spec``, the spec as given (JSON
    text: ``vtlab.run(json.loads(spec), seed)`` runs it again) and ``scenario``, the
    resolved scenario as the core's canonical JSON (every field, base units; its
    hash is the rows' ``scenario_hash``); each only if it has at most
    :data:`MAX_CARRIED_SCENARIO_BYTES` bytes."""
    texts = {"spec": scenario.to_json(), "scenario": scenario.expanded_json()}
    return {k: v for k, v in texts.items() if len(v.encode()) <= MAX_CARRIED_SCENARIO_BYTES}


def sibling_paths(path: str | os.PathLike[str]) -> dict[str, Path]:
    """The files :meth:`Result.to_parquet` (or, for a ``.csv`` name,
    :meth:`Result.to_csv`) writes for ``path``.

    ``runs.parquet`` → ``{"flows": runs.parquet, "links": runs.links.parquet,
    "traces": runs.traces.parquet, "sessions": runs.sessions.parquet,
    "messages": runs.messages.parquet}``; ``runs.csv`` → ``runs.links.csv``, ... A
    name without either suffix gets ``.links.parquet`` (``.traces.parquet``, ...)
    appended as is.
    """
    p = Path(path)
    suffix = ".csv" if p.name.lower().endswith(".csv") else ".parquet"
    stem = p.name[: -len(suffix)] if p.name.lower().endswith(suffix) else p.name
    return {
        "flows": p,
        **{
            name: p.with_name(f"{stem}.{name}{suffix}")
            for name in ("links", "traces", "sessions", "messages")
        },
    }


def write_parquet(frame: pd.DataFrame, path: Path, extra: Mapping[bytes, bytes]) -> None:
    """Write ``frame`` to ``path`` with ``extra`` added to its schema metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(table.replace_schema_metadata({**(table.schema.metadata or {}), **extra}), path)


def json_default(obj: Any) -> Any:
    """JSON fallback for numpy scalars and paths inside metadata."""
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")
