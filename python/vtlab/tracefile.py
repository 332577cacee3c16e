"""Traces streamed to disk: the core hands over batches of trace rows as it runs and
a :class:`TraceWriter` appends each as a Parquet row group (or CSV rows), so a trace
of any length needs memory for one batch only (docs/reliability.md)."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Any

from vtlab.errors import with_filename


class TraceWriter:
    """Append trace batches (dicts of column lists) to a ``.parquet`` or ``.csv`` file.

    Use as a context manager; :meth:`write` is the callable to pass to the core.
    ``rows`` counts what was written.  A write that fails (a full disk) raises
    ``OSError`` naming the file, and :meth:`close` then removes the partial file.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.csv = self.path.name.lower().endswith(".csv")
        self.rows = 0
        self._writer: Any = None
        self._csv_fh: Any = None
        self.failed = False

    def write(self, batch: dict[str, list[Any]]) -> None:
        try:
            self._write(batch)
        except OSError as exc:
            self.failed = True
            raise with_filename(exc, self.path) from exc

    def _write(self, batch: dict[str, list[Any]]) -> None:
        import pyarrow as pa

        table = pa.table(batch)
        self.rows += table.num_rows
        if self.csv:
            import pyarrow.csv as pacsv

            if self._csv_fh is None:
                self._csv_fh = open(self.path, "wb")  # noqa: SIM115 - closed in close()
                pacsv.write_csv(table, self._csv_fh)
            else:
                options = pacsv.WriteOptions(include_header=False)
                pacsv.write_csv(table, self._csv_fh, write_options=options)
            return
        import pyarrow.parquet as pq

        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, table.schema)
        self._writer.write_table(table.cast(self._writer.schema))

    def close(self) -> None:
        """Finish the file; after a failed write, remove it instead."""
        if not self.failed:
            try:
                self._finish()
            except OSError as exc:
                self.failed = True
                self._discard()
                raise with_filename(exc, self.path) from exc
        else:
            self._discard()

    def _finish(self) -> None:
        if self._writer is None and self._csv_fh is None:
            # No row at all: still leave a file with the trace's columns.
            from vtlab.api import TRACE_COLUMNS

            self._write({c: [] for c in TRACE_COLUMNS})
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._csv_fh is not None:
            self._csv_fh.close()
            self._csv_fh = None

    def _discard(self) -> None:
        """Close after a failed write and remove the partial file (a regular file or a
        link only, never the device a link may lead to)."""
        for handle in (self._writer, self._csv_fh):
            if handle is not None:
                with contextlib.suppress(OSError):
                    handle.close()
        self._writer = self._csv_fh = None
        with contextlib.suppress(OSError):
            if stat.S_ISREG(self.path.lstat().st_mode) or self.path.is_symlink():
                self.path.unlink()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
