"""The files of a columnar run store (:mod:`vtlab.store`): its layout, the commit
journal, the lock that serialises writers, and durable writes (temporary name, fsync,
rename, fsync of the folder).

Layout of a store ``DIR``::

    DIR/store.json                 {"format": "vtlab.store", "version": 2}
    DIR/runs/part-<id>.parquet     one row per run: its key, identity and scenario
    DIR/flows/part-<id>.parquet    the runs' flow rows (and links/, sessions/,
    ...                            messages/, traces/: one Parquet dataset per table)
    DIR/_journal/<id>.json         the commit record of part <id>
    DIR/_pending/<id>/             a part being committed
    DIR/_quarantine/<id>/          a part that failed a check, moved aside
    DIR/_lock                      held (flock) by a writer while it commits

Names starting with ``_`` or ``.`` are skipped by pandas, polars, DuckDB and Arrow when
they read a folder, and only committed parts are ever in a table's folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vtlab.errors import with_filename

__all__ = [
    "FORMAT",
    "JOURNAL",
    "LOCK",
    "MANIFEST",
    "PENDING",
    "QUARANTINE",
    "ROOT_FILES",
    "TABLES",
    "durable_replace",
    "fsync_dir",
    "locked",
    "new_part_id",
    "part_path",
]

#: What ``store.json`` holds: the layout's name and version.
FORMAT: dict[str, Any] = {"format": "vtlab.store", "version": 2}

#: The result tables, each one Parquet dataset (a folder of parts).
TABLES = ("flows", "links", "sessions", "messages", "traces", "events")

#: The table of runs: one row per run (key, identity, spec and resolved scenario).
MANIFEST = "runs"

JOURNAL = "_journal"
PENDING = "_pending"
QUARANTINE = "_quarantine"
LOCK = "_lock"

#: The files a store keeps in its folder itself (beside the tables' folders).
ROOT_FILES = ("store.json", LOCK)

#: A part's id: UTC time, writer's PID, 8 random hexadecimal digits (unique among
#: concurrent writers; sorted roughly by commit time).
PART_ID = re.compile(r"^[0-9]{8}T[0-9]{6}-[0-9]+-[0-9a-f]{8}$")


def new_part_id() -> str:
    return f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}-{secrets.token_hex(4)}"


def part_path(root: Path, table: str, part: str) -> Path:
    """Where a committed part of ``table`` lives: its table's folder, or still the
    part's pending folder when its writer stopped between commit and rename."""
    final = root / table / f"part-{part}.parquet"
    if final.exists():
        return final
    pending = root / PENDING / part / f"{table}.parquet"
    return pending if pending.exists() else final


def fsync_dir(path: Path) -> None:
    """Make the entries of folder ``path`` (a rename, a new file) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def durable_replace(tmp: Path, path: Path) -> None:
    """Rename the fsynced ``tmp`` over ``path`` and make the rename durable."""
    os.replace(tmp, path)
    fsync_dir(path.parent)


def write_json_durably(path: Path, value: Any, **dumps: Any) -> None:
    """``value`` as JSON in ``path`` (one line unless ``dumps``, :func:`json.dumps`'s
    options, say otherwise: an indented one is encoded by the json module's Python
    encoder: 2.2 ms for a 2 000-run commit record, not 0.6): written to a temporary
    name, fsynced, renamed, so that a reader finds the whole file or none."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w") as fh:
            fh.write(json.dumps(value, **dumps) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        durable_replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise with_filename(exc, path) from exc


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """Hold the store's writer lock (an exclusive ``flock`` on ``DIR/_lock``): one
    writer at a time commits, across processes and across threads (each call opens
    the file anew, and flock locks belong to the open file)."""
    fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
