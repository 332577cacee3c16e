"""The run cache of a validation: ``<out>/runs.jsonl``, one JSON object per finished run,
and the stored (committed) ns-3 runs it falls back on.

Each run is appended and flushed as soon as it finishes, so an interrupted validation
loses at most the runs in flight, and the same command resumes with the rest: a run
is done when its key (the family's :meth:`~vtlab.validation.protocol.Family.record_key`)
is in the cache.  Lines that do not parse (e.g. cut short by an interruption) are
ignored and later lines win, so a run is never counted twice.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from vtlab.validation.errors import ValidateError

__all__ = ["KeyFn", "RunCache", "read_records", "store_runs"]

#: The cache key of a run record (raises ``KeyError``/``TypeError`` for a record that
#: is not one of the family's).
KeyFn = Callable[[Mapping[str, Any]], str]


def read_records(path: Path, key: KeyFn) -> dict[str, dict[str, Any]]:
    """The records of a JSON-lines file (gzipped if its name ends in ``.gz``) by key;
    lines that do not parse are skipped, later lines win."""
    records: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return records
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
                k = key(rec)
            except (ValueError, KeyError, TypeError):
                continue
            records[k] = rec
    return records


class RunCache:
    """``runs.jsonl`` of one output directory.

    ``stored``: read-only JSON-lines files consulted for keys ``runs.jsonl`` lacks; a
    stored record is reused only under its exact key (which includes the hash of the
    program that made it), so a changed simulator reruns."""

    def __init__(self, path: Path, key: KeyFn, stored: Sequence[Path] = ()) -> None:
        self.path = Path(path)
        self.key = key
        self.records: dict[str, dict[str, Any]] = read_records(self.path, key)
        self.stored: dict[str, dict[str, Any]] = {}
        for extra in stored:
            self.stored.update(read_records(Path(extra), key))

    def __contains__(self, key: str) -> bool:
        return key in self.records or key in self.stored

    def get(self, key: str) -> dict[str, Any] | None:
        rec = self.records.get(key)
        return rec if rec is not None else self.stored.get(key)

    def is_stored(self, key: str) -> bool:
        """Whether ``key`` comes from a stored file rather than ``runs.jsonl``."""
        return key not in self.records and key in self.stored

    def add(self, record: Mapping[str, Any]) -> None:
        """Append one finished run (starting a new line if an interrupted write left
        the last one unterminated) and flush it."""
        rec = dict(record)
        k = self.key(rec)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        needs_newline = self.path.is_file() and self.path.stat().st_size > 0
        if needs_newline:
            with self.path.open("rb") as fh:
                fh.seek(-1, os.SEEK_END)
                needs_newline = fh.read(1) != b"\n"
        with self.path.open("a") as fh:
            fh.write(("\n" if needs_newline else "") + json.dumps(rec) + "\n")
            fh.flush()
        self.records[k] = rec


def store_runs(path: Path, records: Iterable[Mapping[str, Any]], key: KeyFn) -> int:
    """Merge ``records`` into the gzipped JSON-lines file ``path`` (created if missing;
    a record replaces the one with its key) and rewrite it sorted by key, byte for byte
    reproducible (gzip mtime 0).  Returns the number of records in it."""
    path = Path(path)
    merged = read_records(path, key)
    for rec in records:
        merged[key(rec)] = dict(rec)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        for k in sorted(merged):
            gz.write((json.dumps(merged[k], sort_keys=True) + "\n").encode())
    os.replace(tmp, path)
    return len(merged)


def require_stored(
    stored: Sequence[Path],
    wanted: Iterable[tuple[str, str]],
    key_fn: Callable[[Mapping[str, Any]], str],
    program: str,
    results_hash: str,
) -> None:
    """Raise :class:`ValidateError` naming the first ns-3 run of ``wanted`` (its key
    and label) that the ``stored`` files lack: without ``--rerun-ns3`` a grid runs
    from stored ns-3 runs of this ``program`` (``results_hash``) only."""
    have: set[str] = set()
    for path in stored:
        have.update(read_records(Path(path), key_fn))
    for key, label in wanted:
        if key not in have:
            raise ValidateError(
                ", ".join(str(p) for p in stored),
                f"the ns-3 run {label} of this {program} (results hash {results_hash}) is "
                "missing: run with --rerun-ns3 (needs the ns3 wheel and g++)",
            )
