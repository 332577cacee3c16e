"""Reading results as data: a sweep store's tables as pandas frames, and the scenario a
result file carries.

A store (``vtlab sweep --store DIR``, :meth:`vtlab.sweep.Sweep.run`; :mod:`vtlab.store`)
keeps each table as one Parquet dataset, a folder of parts: ``DIR/flows/``,
``DIR/links/``, ``DIR/sessions/``, ``DIR/messages/``, ``DIR/traces/``, ``DIR/events/``
(sweeps with traces or events), and
``DIR/runs/`` (one row per run: its key, spec and resolved scenario). Every row
carries the sweep's axis values as columns. :func:`load` reads one table, each part
verified against its commit record, and keeps the rows whose axis values match.
pandas, polars, DuckDB and Arrow read a table's folder directly
(``pandas.read_parquet(DIR/"flows")``, ``duckdb.sql("select * from
'DIR/flows/*.parquet'")``), without that verification.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from vtlab.api import (
    EVENT_COLUMNS,
    FLOW_COLUMNS,
    LINK_COLUMNS,
    MAX_CARRIED_SCENARIO_BYTES,
    MESSAGE_COLUMNS,
    SCENARIO_KEY,
    SESSION_COLUMNS,
    TRACE_COLUMNS,
)
from vtlab.runstore import MESSAGE_COUNT_COLUMNS, STORE_KEY
from vtlab.scenario import Scenario
from vtlab.store import MANIFEST_COLUMNS, Store
from vtlab.storefiles import MANIFEST
from vtlab.storefiles import TABLES as RESULT_TABLES

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TABLES", "file_scenario", "load", "scenario_of"]

#: The tables of a store: the result tables, and ``runs`` (one row per run, with its
#: spec and resolved scenario).
TABLES = (*RESULT_TABLES, MANIFEST)

_CONTRACT = {
    *FLOW_COLUMNS,
    *LINK_COLUMNS,
    *SESSION_COLUMNS,
    *MESSAGE_COLUMNS,
    *MESSAGE_COUNT_COLUMNS,
    *TRACE_COLUMNS,
    *EVENT_COLUMNS,
    *MANIFEST_COLUMNS,
}


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
    values): ``load(store, cc="cubic", loss=0.05)``. ``table="runs"`` gives one row
    per run with its key, spec and resolved scenario. Every part read is checked as
    the sweep checks it (:mod:`vtlab.store`: checksum, the part's identity inside,
    columns, rows per run); a part that fails raises
    :class:`vtlab.runstore.StoredRunError` naming its file (run the sweep again: it
    moves the part aside and simulates its runs again). Runs stored by sweeps with
    different axes have empty (NaN) cells for the axes they lack.

    Raises :class:`vtlab.runstore.StoreError` for a folder that is not a store (or a
    store of the earlier layout: :func:`vtlab.storeconvert.convert`), and
    ``ValueError`` for an unknown table or an axis no stored run has.
    """
    import pandas as pd

    if table not in TABLES:
        raise ValueError(
            f"table: {table!r} is not a table of a store (one of: {', '.join(TABLES)})"
        )
    wanted = {**(where or {}), **axes}
    frames, _ = Store.open(store).read([table])
    frame = frames[table]
    if frame is None:
        frame = pd.DataFrame(columns=_columns(table))
    seen_axes = {c for c in frame.columns if c not in _CONTRACT}
    unknown = [a for a in wanted if a not in frame.columns]
    if unknown and len(frame):
        have = ", ".join(sorted(seen_axes)) or "none"
        raise ValueError(
            f"where: {unknown[0]!r} is neither an axis of the store (its axes: {have}) "
            f"nor a column of its {table}"
        )
    if not len(frame):
        return frame
    for axis, value in wanted.items():
        frame = frame[_matches(frame, axis, value)]
    return frame.reset_index(drop=True)


def scenario_of(store: str | os.PathLike[str], run_key: str) -> Scenario:
    """The scenario of a stored run (its spec as given, from the ``runs`` table):
    :func:`vtlab.run` runs it again with the run's seed. ``ValueError`` for a run
    the store does not hold or whose spec was too large to carry."""
    runs = load(store, MANIFEST, run_key=run_key)
    if not len(runs) or not isinstance(runs["spec"].iloc[0], str):
        raise ValueError(f"{store}: holds no scenario of run {run_key!r}")
    return Scenario(json.loads(runs["spec"].iloc[0]))


def _columns(table: str) -> list[str]:
    return list(
        {
            "flows": FLOW_COLUMNS,
            "links": LINK_COLUMNS,
            "sessions": SESSION_COLUMNS,
            "messages": MESSAGE_COLUMNS,
            "traces": TRACE_COLUMNS,
            "events": EVENT_COLUMNS,
            MANIFEST: MANIFEST_COLUMNS,
        }[table]
    )


def file_scenario(path: str | os.PathLike[str]) -> Scenario:
    """The scenario a Parquet result file carries (``vtlab run --out``,
    :meth:`Result.to_parquet` with ``scenario``, or a run file of a store of the
    earlier layout; a store keeps each run's scenario in its ``runs`` table,
    :func:`scenario_of`): its spec as given,
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
