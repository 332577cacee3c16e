"""Reading results as data: a sweep store's tables as pandas frames, and the scenario a
result file carries.

A store (``vtlab sweep --store DIR``, :meth:`vtlab.sweep.Sweep.run`) keeps each run
as files in ``DIR/runs/`` (:mod:`vtlab.runstore`): ``<key>.parquet`` (flows),
``<key>.links.parquet``, and where the run has them ``<key>.sessions.parquet``,
``<key>.messages.parquet`` and ``<key>.traces.parquet``. Every row carries the sweep's
axis values as columns. :func:`load` reads one table of every run, each file verified
against its checksum and the run identity it carries, and keeps the rows whose axis
values match. ``pandas.read_parquet(DIR/"runs")`` would mix the tables' files; tools
that read a glob read one table with ``DIR/runs/*[0-9a-f].parquet`` (flows: the key
ends in the hexadecimal core build) or ``DIR/runs/*.links.parquet`` (and so on),
without that verification.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtlab.api import (
    FLOW_COLUMNS,
    LINK_COLUMNS,
    MAX_CARRIED_SCENARIO_BYTES,
    MESSAGE_COLUMNS,
    SCENARIO_KEY,
    SESSION_COLUMNS,
    TRACE_COLUMNS,
)
from vtlab.runstore import MESSAGE_COUNT_COLUMNS, STORE_KEY, StoreError, read_table
from vtlab.scenario import Scenario

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TABLES", "TABLE_GLOBS", "file_scenario", "load", "store_keys"]

#: The tables of a store, and the glob that selects each one's files in ``runs/``.
TABLE_GLOBS: dict[str, str] = {
    "flows": "*[0-9a-f].parquet",
    "links": "*.links.parquet",
    "sessions": "*.sessions.parquet",
    "messages": "*.messages.parquet",
    "traces": "*.traces.parquet",
}
TABLES = tuple(TABLE_GLOBS)

#: A flows file's name: ``<scenario hash>-<seed>-<version>-<core build>.parquet``.
_FLOWS_NAME = re.compile(r"^([0-9a-f]{16}-[0-9]+-.+-[0-9a-f]+)\.parquet$")

_CONTRACT = {
    *FLOW_COLUMNS,
    *LINK_COLUMNS,
    *SESSION_COLUMNS,
    *MESSAGE_COLUMNS,
    *MESSAGE_COUNT_COLUMNS,
    *TRACE_COLUMNS,
}


def store_keys(store: str | os.PathLike[str]) -> list[str]:
    """The keys of the complete runs of ``store`` (those whose flows file is there),
    sorted; :class:`StoreError` when ``store`` is not a sweep store."""
    root = Path(store)
    run_dir = root / "runs"
    if not root.is_dir():
        raise StoreError(root, "not a folder (give the folder of a vtlab sweep --store)")
    if not run_dir.is_dir():
        raise StoreError(root, "not a sweep store (it has no runs/ folder)")
    keys = []
    for entry in os.scandir(run_dir):
        match = _FLOWS_NAME.match(entry.name)
        if match and entry.is_file():
            keys.append(match.group(1))
    return sorted(keys)


def _matches(frame: pd.DataFrame, axis: str, value: Any) -> Any:
    """Which rows have ``value`` in column ``axis``: equal, or equal as text (so that
    ``--where loss=0.05`` matches the label 0.05); a list or tuple matches any of its
    values."""
    values = value if isinstance(value, (list, tuple)) else [value]
    column = frame[axis]
    text = column.astype(str)
    keep = column.isin(values)
    return keep | text.isin([str(v) for v in values])


def load(
    store: str | os.PathLike[str],
    table: str = "flows",
    *,
    where: Mapping[str, Any] | None = None,
    **axes: Any,
) -> pd.DataFrame:
    """One table of a sweep store as a frame, the axis values as columns.

    ``table`` is one of :data:`TABLES`; ``where`` (or keyword arguments, for axis
    names that are Python identifiers) keeps the rows whose axis (or any other column
    of the table, such as ``seed`` or ``cc``) has that value (or one of a list of
    values): ``load(store, cc="cubic", loss=0.05)``. Every file read
    is checked as the sweep checks it (checksum, the run identity inside, columns);
    a file that fails raises :class:`vtlab.runstore.StoredRunError` naming it (run
    the sweep again: it moves the run aside and simulates it again). Runs stored by
    sweeps with different axes have empty (NaN) cells for the axes they lack.

    Raises :class:`vtlab.runstore.StoreError` for a folder that is not a store, and
    ``ValueError`` for an unknown table or an axis no stored run has.
    """
    import pandas as pd

    if table not in TABLES:
        raise ValueError(
            f"table: {table!r} is not a table of a store (one of: {', '.join(TABLES)})"
        )
    wanted = {**(where or {}), **axes}
    run_dir = Path(store) / "runs"
    frames = []
    seen_axes: set[str] = set()
    for key in store_keys(store):
        frame = read_table(run_dir, key, table)
        if frame is None:
            continue
        seen_axes.update(c for c in frame.columns if c not in _CONTRACT)
        frames.append(frame)
    columns = seen_axes.union(*(f.columns for f in frames))
    unknown = [a for a in wanted if a not in columns]
    if unknown and frames:
        have = ", ".join(sorted(seen_axes)) or "none"
        raise ValueError(
            f"where: {unknown[0]!r} is neither an axis of the store (its axes: {have}) "
            f"nor a column of its {table}"
        )
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=_columns(table))
    out = pd.concat(frames, ignore_index=True)
    for axis, value in wanted.items():
        out = out[_matches(out, axis, value)]
    return out.reset_index(drop=True)


def _columns(table: str) -> list[str]:
    return list(
        {
            "flows": FLOW_COLUMNS,
            "links": LINK_COLUMNS,
            "sessions": SESSION_COLUMNS,
            "messages": MESSAGE_COLUMNS,
            "traces": TRACE_COLUMNS,
        }[table]
    )


def file_scenario(path: str | os.PathLike[str]) -> Scenario:
    """The scenario a Parquet result file carries (``vtlab run --out``,
    :meth:`Result.to_parquet` with ``scenario``, or a store's file): its spec as given,
    which :func:`vtlab.run` runs again with the rows' seed. ``ValueError`` for a file
    that carries none (see :data:`vtlab.api.MAX_CARRIED_SCENARIO_BYTES`)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    carried = json.loads(meta.get(SCENARIO_KEY) or meta.get(STORE_KEY) or b"{}")
    if "spec" not in carried:
        raise ValueError(
            f"{path}: carries no scenario (written by an earlier vtlab, or its spec has "
            f"more than {MAX_CARRIED_SCENARIO_BYTES} bytes)"
        )
    return Scenario(json.loads(carried["spec"]))
