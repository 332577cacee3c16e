"""Rows of runs as Arrow tables: a store part's tables converted from pandas
(:func:`to_arrow`), and their rows per run (:func:`identities`, :func:`only_runs`).
Used by :mod:`vtlab.store`."""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "from_columns",
    "from_ipc",
    "identities",
    "only_runs",
    "remember",
    "to_arrow",
    "to_ipc",
]


#: The schemas :func:`to_arrow` has made, by the frame's columns and dtypes (none of
#: them object: an object column's Arrow type follows from its values).
_SCHEMAS: dict[Any, Any] = {}
_MAX_SCHEMAS = 256


def remember(cache: dict[Any, Any], key: Any, value: Any, most: int = _MAX_SCHEMAS) -> None:
    """Put ``value`` under ``key`` in ``cache``, dropping its oldest entry when it holds
    ``most`` already (a long-lived process meets ever new tables' keys)."""
    with _REMEMBERING:  # the threads of a sweep (or several) may miss at once
        if key not in cache and len(cache) >= most:
            cache.pop(next(iter(cache)))
        cache[key] = value


_REMEMBERING = threading.Lock()


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
        remember(_SCHEMAS, key, table.schema)
        return table
    return _with_schema(columns(), schema)


def _with_schema(columns: Iterable[Any], schema: Any) -> Any:
    """The table of ``schema`` whose columns are ``columns`` (in its order), each
    converted as ``from_pandas`` converts a column (NaN as null)."""
    import pyarrow as pa

    arrays = [
        pa.array(values, type=field.type, from_pandas=True)
        for values, field in zip(columns, schema, strict=True)
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


#: The schemas :func:`from_columns` has made, by its key.
_COLUMN_SCHEMAS: dict[Any, Any] = {}


def from_columns(key: Any, data: Mapping[str, Any]) -> Any:
    """``to_arrow(pd.DataFrame(data))`` for columns each a numpy array or a list of
    strings (:class:`vtlab.rawtables.Joined`), ``key`` naming their table, columns and
    kinds: the first frame of each key is made and converted, and its schema (where
    none of its columns is object) then makes the tables of that key straight from
    the columns, without a DataFrame (what making one and converting it costs, three
    quarters of a sweep task's own work besides its runs: docs/cluster.md)."""

    schema = _COLUMN_SCHEMAS.get(key)
    if schema is None:
        import pandas as pd

        frame = pd.DataFrame(data)
        arrow = to_arrow(frame)
        if not any(str(d) == "object" for d in frame.dtypes):  # else: types by values
            remember(_COLUMN_SCHEMAS, key, arrow.schema)
        return arrow
    return _with_schema(data.values(), schema)


def identities(arrow: Any) -> dict[str, int]:
    """Rows per run identity (``<scenario hash>-<seed>``) of an Arrow table: the rows
    are cut where either key changes from the row before (Arrow compares them), and
    each stretch's rows counted under its first row's identity, summed where a run's
    rows come in several stretches. A part's runs each come in one stretch, so this
    is Python work per run, not per row; it needs none of Arrow's query engine
    (grouping by the keys did, whose first use in a sweep's worker cost it 6.5 ms,
    docs/cluster.md), and took a third of the time on a part of 100 000 rows."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = arrow.num_rows
    if rows == 0:
        return {}
    keys = []
    for name in ("scenario_hash", "seed"):
        column = arrow[name].combine_chunks()
        if pa.types.is_dictionary(column.type):
            column = column.dictionary_decode()
        if pa.types.is_null(column.type):  # no value at all: as text, all null
            column = column.cast(pa.string())
        keys.append(column)
    changed = pc.or_kleene(*(pc.not_equal(k[1:], k[:-1]) for k in keys))
    changed = pc.fill_null(changed, True).to_numpy(zero_copy_only=False)
    starts = np.concatenate(([0], np.flatnonzero(changed) + 1))
    lengths = np.diff(starts, append=rows).tolist()
    at = pa.array(starts)
    hashes, seeds = (pc.take(k, at).to_pylist() for k in keys)
    counts: dict[str, int] = {}
    for h, s, n in zip(hashes, seeds, lengths, strict=True):
        name = f"{h}-{s}"
        counts[name] = counts.get(name, 0) + n
    return counts


def only_runs(arrow: Any, wanted: Collection[str]) -> Any:
    """The rows of ``arrow`` whose run identity is in ``wanted``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = [pc.cast(arrow[k], pa.string()) for k in ("scenario_hash", "seed")]
    names = pc.binary_join_element_wise(*text, "-")
    return arrow.filter(pc.is_in(names, value_set=pa.array(sorted(wanted), pa.string())))


def to_ipc(arrow: Any) -> bytes:
    """``arrow`` as one Arrow IPC stream (schema, metadata and batches): how a worker
    hands its task's tables to the sweep's process. Pickling a table goes column by
    column and buffer by buffer: 0.21 ms for a flows table of three runs, which this
    writes in 0.016 ms and :func:`from_ipc` reads in 0.026 (unpickling: 0.12)."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, arrow.schema) as writer:
        writer.write_table(arrow)
    return sink.getvalue().to_pybytes()


def from_ipc(data: bytes) -> Any:
    """The table :func:`to_ipc` wrote."""
    import pyarrow as pa

    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()
