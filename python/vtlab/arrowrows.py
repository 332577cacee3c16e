"""Rows of runs as Arrow tables: a store part's tables converted from pandas
(:func:`to_arrow`), and their rows per run (:func:`identities`, :func:`only_runs`).
Used by :mod:`vtlab.store`."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["identities", "only_runs", "to_arrow"]


#: The schemas :func:`to_arrow` has made, by the frame's columns and dtypes (none of
#: them object: an object column's Arrow type follows from its values).
_SCHEMAS: dict[Any, Any] = {}
_MAX_SCHEMAS = 256


def to_arrow(frame: pd.DataFrame) -> Any:
    """``frame`` as the Arrow table a part's file holds (``pa.Table.from_pandas``),
    its columns converted in this thread: pyarrow's default for a frame of more than
    a hundred rows a column starts a pool of one thread per core for each
    conversion, which doubled its cost (a 4 000-row table of 23 columns: 1.5 ms, 0.7
    ms here; docs/cluster.md). A frame whose columns and dtypes (none of them object)
    were converted before reuses that schema, pandas metadata included, and converts
    its columns alone, as ``from_pandas`` converts each: a task's tables of a few
    rows took 0.3-0.9 ms each, nearly all of it ``from_pandas``'s work per column
    around the conversion, and take a tenth of that so."""
    import pyarrow as pa

    dtypes = tuple(frame.dtypes)
    if any(str(d) == "object" for d in dtypes):
        return pa.Table.from_pandas(frame, preserve_index=False, nthreads=1)
    key = (frame.columns.name, tuple(frame.columns), dtypes)
    schema = _SCHEMAS.get(key)
    columns = getattr(frame, "_iter_column_arrays", None)  # pandas' own, no Series each
    if schema is None or columns is None:
        table = pa.Table.from_pandas(frame, preserve_index=False, nthreads=1)
        if len(_SCHEMAS) < _MAX_SCHEMAS:
            _SCHEMAS[key] = table.schema
        return table
    arrays = [
        pa.array(values, type=field.type, from_pandas=True)
        for values, field in zip(columns(), schema, strict=True)
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def identities(arrow: Any) -> dict[str, int]:
    """Rows per run identity (``<scenario hash>-<seed>``) of an Arrow table, counted
    and named by Arrow (no per-row or per-run Python work but the dictionary's)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if arrow.num_rows == 0:
        return {}
    keys = ["scenario_hash", "seed"]
    # In this thread: a table of a part is small, Arrow's thread pool only adds cost.
    g = arrow.select(keys).group_by(keys, use_threads=False).aggregate([([], "count_all")])
    text = [pc.cast(g[k], pa.string()) for k in keys]
    names = pc.binary_join_element_wise(*text, "-")
    return dict(zip(names.to_pylist(), g["count_all"].to_pylist(), strict=True))


def only_runs(arrow: Any, wanted: Collection[str]) -> Any:
    """The rows of ``arrow`` whose run identity is in ``wanted``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = [pc.cast(arrow[k], pa.string()) for k in ("scenario_hash", "seed")]
    names = pc.binary_join_element_wise(*text, "-")
    return arrow.filter(pc.is_in(names, value_set=pa.array(sorted(wanted), pa.string())))
