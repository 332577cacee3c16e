"""A table of several runs built at once from their raw columns.

The core hands each run's tables to Python as columns (lists, one per column name):
a run's raw result. Building a DataFrame per table per run and concatenating them
costs a millisecond or so per run and table, however few its rows: more than half of
a short run's CPU time in a sweep (whose chunks of runs are built here,
:func:`vtlab.sweeprows.chunk_result`), and 0.8 ms a run for the flows of
:func:`vtlab.run_many`'s result, 30 times what a short run's simulation costs
(:meth:`vtlab.api.Result.concat`, docs/python-api.md). So a table of several runs is
built at once, from the runs' columns concatenated as lists: one DataFrame, its
number columns handed to pandas as arrays of the dtype it would infer (its
inference, column by column, was a quarter of a small chunk's cost).

The result must be what concatenating the runs' own frames gives. pandas infers a
column's dtype from its values, and the per-run frames' dtypes then meet in the
concatenation (an all-None column of one run and a float column of another, say),
so a column is concatenated as lists only where every run's values (or label) are of
one of the kinds below, the same in every run: then each run's frame would have that
one dtype, and so has the concatenated list. Any other table (a column of another
kind, of mixed kinds, runs with other columns, a run without rows) is left to be
built run by run (:func:`joined_table` gives ``None``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Joined",
    "alike_without_rows",
    "joined_columns",
    "joined_table",
    "label_columns",
    "plain_columns",
]

#: A run's raw columns of one table: column name → values.
Columns = Mapping[str, Sequence[Any]]

#: The numpy dtype of a column of each kind but text.
_NUMPY = {"int": "int64", "float": "float64", "bool": "bool"}


def _kind(values: Sequence[Any]) -> str | None:
    """Which of the kinds above the non-empty list ``values`` is: only ints, only
    floats, only bools, or only strings; else ``None``. (Ints must also be within
    the 64-bit signed range, where pandas gives int64: :func:`joined_table` checks
    that as it makes the concatenated column an int64 array.)"""
    types = set(map(type, values))
    if len(types) != 1:
        return None
    (kind,) = types
    return kind.__name__ if kind in (int, float, bool, str) else None


def label_columns(columns: Sequence[str], labels: Sequence[tuple[str, Any]]) -> list[str]:
    """The columns of a table ``columns`` once a run's ``labels`` (axis name,
    value) are put into it: the labels not already a column, first, in axis order."""
    new = [name for name, _ in labels if name not in columns]
    return [*new, *columns]


def alike_without_rows(columns: Sequence[Columns | None], labels: Sequence[Any]) -> bool:
    """Whether no run has rows in a table whose raw columns are ``columns`` (one per
    run, ``None`` where a run has no such table) and every run's columns (or their
    absence) and label names are those of the first run: then every run's frame is
    the first one's, and so is their concatenation (each column's dtype met only
    itself)."""
    first, names = columns[0], [n for n, _ in labels[0]]
    for cols, lab in zip(columns, labels, strict=True):
        if (cols is None) != (first is None) or [n for n, _ in lab] != names:
            return False
        if cols is not None and (tuple(cols) != tuple(first) or any(len(v) for v in cols.values())):
            return False
    return True


def joined_table(
    table: str,
    columns: Sequence[Columns | None],
    labels: Sequence[Sequence[tuple[str, Any]]],
    order_of: Callable[[Columns], list[str]],
) -> pd.DataFrame | None:
    """The table ``table`` of several runs, each run's raw ``columns`` labelled with
    its ``labels`` (axis name, value; empty for no labels), its columns in the order
    ``order_of`` gives a run's (before the labels), built at once; ``None`` where it
    must be built run by run (see the module). Runs without rows of ``sessions`` and
    ``messages`` add none (they had no session)."""
    import pandas as pd

    joined = joined_columns(table, columns, labels, order_of)
    return None if joined is None else pd.DataFrame(joined.data)


@dataclass(frozen=True)
class Joined:
    """A table's columns concatenated over its runs (:func:`joined_columns`): each
    column's values (a numpy array of the dtype pandas infers for its kind, or a list
    of strings), in the table's order, and each column's kind."""

    data: Mapping[str, Any]
    kinds: tuple[str, ...]


def joined_columns(
    table: str,
    columns: Sequence[Columns | None],
    labels: Sequence[Sequence[tuple[str, Any]]],
    order_of: Callable[[Columns], list[str]],
) -> Joined | None:
    """The columns :func:`joined_table` makes its frame of, or ``None`` where it gives
    ``None``."""
    if any(c is None for c in columns):
        return None
    cols: list[Columns] = [c for c in columns if c is not None]
    names = tuple(cols[0])
    rows = [len(c[names[0]]) if names else 0 for c in cols]
    runs: Sequence[int] = range(len(cols))
    if table in ("sessions", "messages"):  # runs without sessions add no rows
        runs = [i for i in runs if rows[i]]
    if not runs or not all(rows[i] for i in runs):
        return None
    order = label_columns(order_of(cols[0]), labels[runs[0]])
    label_names = [n for n, _ in labels[runs[0]]]
    for i in runs:
        if tuple(cols[i]) == names and [n for n, _ in labels[i]] == label_names:
            continue  # the first run's columns and label names: its order
        if label_columns(order_of(cols[i]), labels[i]) != order:
            return None
    label_values = [dict(labels[i]) for i in runs]

    def concatenated() -> Iterator[tuple[str, list[Any], str | None]]:
        for name in order:
            # One kind in every run's rows (each run has rows here): the kind of all.
            if name in names:
                values = list(itertools.chain.from_iterable([cols[i][name] for i in runs]))
                yield name, values, _kind(values)
                continue
            at = [lab[name] for lab in label_values]
            values = []
            for i, v in zip(runs, at, strict=True):
                values += [v] * rows[i]
            yield name, values, _kind(at)

    return _typed_columns(concatenated())


def plain_columns(columns: Mapping[str, list[Any]]) -> Joined | None:
    """Columns given as lists (one table's) as :func:`joined_columns` gives a table's
    columns, where each is of one kind (see the module); else ``None``."""
    return _typed_columns((n, v, _kind(v) if v else None) for n, v in columns.items())


def _typed_columns(columns: Iterable[tuple[str, list[Any], str | None]]) -> Joined | None:
    """The columns (name, values, their kind) as pandas gets them: a list of strings
    (pandas' own inference: its str dtype) or an array of the dtype pandas infers
    from a list of one kind, without its inference; ``None`` at the first column of
    no kind, or of ints beyond 64 bits signed (pandas would not give int64)."""
    import numpy as np

    data: dict[str, Any] = {}
    kinds: list[str] = []
    for name, values, kind in columns:
        if kind is None:
            return None
        if kind == "str":
            data[name] = values
        else:
            try:
                data[name] = np.array(values, dtype=_NUMPY[kind])
            except OverflowError:
                return None
        kinds.append(kind)
    return Joined(data, tuple(kinds))
