"""The earlier layout of the run store (one file pair per run), read for conversion
(:mod:`vtlab.storeconvert`), and the store's errors and message forms, which the
columnar store (:mod:`vtlab.store`) shares.

An old store held each run in ``runs/`` as ``<key>.parquet`` (the flow rows),
``<key>.links.parquet`` and, when the run had them, ``<key>.traces.parquet``,
``<key>.sessions.parquet`` and ``<key>.messages.parquet``; the key is
``<scenario hash>-<seed>-<version>-<core build>``. Every file carries the run's
identity in its Parquet metadata, and ``<key>.sha256`` holds the run's key and the
SHA-256 of each of its files. :func:`read_table` reads one table of such a run,
verified (checksums, the identity inside, columns, rows).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtlab.api import (
    FLOW_COLUMNS,
    LINK_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    TRACE_COLUMNS,
)

if TYPE_CHECKING:  # pandas is imported when runs are stored or loaded
    import pandas as pd

__all__ = [
    "MESSAGE_COUNT_COLUMNS",
    "MESSAGE_FORMS",
    "STORE_KEY",
    "StoreError",
    "StoredRunError",
    "read_table",
]

#: How a sweep keeps the message rows of request/response sessions: every row as
#: the core returns it, or their response-time counts (:func:`vtlab.sweep.message_counts`).
MESSAGE_FORMS = ("rows", "counts")

#: Columns of the messages table in the ``counts`` form.
MESSAGE_COUNT_COLUMNS: tuple[str, ...] = (
    "scenario_hash",
    "seed",
    "version",
    "session",
    "message",
    "response_time_s",
    "missed",
    "count",
)


def _paths(run_dir: Path, key: str) -> dict[str, Path]:
    """A run's files in the earlier layout."""
    return {
        "flows": run_dir / f"{key}.parquet",
        "links": run_dir / f"{key}.links.parquet",
        "traces": run_dir / f"{key}.traces.parquet",
        "sessions": run_dir / f"{key}.sessions.parquet",
        "messages": run_dir / f"{key}.messages.parquet",
        "checksums": run_dir / f"{key}.sha256",
    }


#: Schema-metadata key under which every stored file carries its run's identity.
STORE_KEY = b"vtlab.run"


def _identity(key: str) -> dict[str, Any]:
    scenario_hash, seed, version = key.split("-", 2)
    return {"key": key, "scenario_hash": scenario_hash, "seed": int(seed), "version": version}


class StoredRunError(ValueError):
    """A stored run file that cannot be trusted (unreadable, changed since it was
    written, or not the run its name says)."""


class StoreError(ValueError):
    """A store that cannot be used as it is: ``store`` is its folder, ``problem`` what
    is wrong (printed as ``STORE: PROBLEM``)."""

    def __init__(self, store: Path, problem: str) -> None:
        super().__init__(f"{store}: {problem}")
        self.store = store
        self.problem = problem


#: How a JSON value that is not an object is named in messages.
_JSON_KINDS: dict[type, str] = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


def _json_object(raw: bytes, what: str) -> dict[str, Any]:
    """``raw`` as a JSON object, or :class:`StoredRunError` naming ``what``."""
    try:
        value = json.loads(raw)
    except ValueError:  # not UTF-8 or not JSON
        raise StoredRunError(f"with {what} that is not JSON") from None
    if not isinstance(value, dict):
        kind = _JSON_KINDS.get(type(value), "value")
        raise StoredRunError(f"with {what} of the wrong shape (a JSON {kind}, not an object)")
    return value


def _checksums(run_dir: Path, paths: Mapping[str, Path], key: str) -> dict[str, str]:
    """The file name → SHA-256 of a stored run, checked to be this run's. A run
    without them was stored by an earlier vtlab: the store is refused
    (:class:`StoreError`), its runs cannot be verified."""
    try:
        raw = paths["checksums"].read_bytes()
    except FileNotFoundError:
        raise StoreError(
            run_dir.parent,
            f"run {key} was stored without checksums (by an earlier vtlab, or its "
            f"{paths['checksums'].name} was removed), so its files cannot be verified; "
            f"move {run_dir} aside or delete it to simulate its runs again",
        ) from None
    except OSError as e:
        raise StoredRunError(f"unreadable ({type(e).__name__}: {e})") from None
    sums = _json_object(raw, "checksums")
    if sums.get("key") != key:
        raise StoredRunError(f"the stored run {sums.get('key')!r}, not {key!r}")
    digests = sums.get("sha256")
    if not isinstance(digests, dict):
        raise StoredRunError("with checksums of the wrong shape (no sha256 object)")
    return digests


def _read_verified(
    path: Path,
    key: str,
    digests: Mapping[str, Any],
    columns: Sequence[str],
    inside_out: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """Read one stored file and check that it is the run ``key``: the bytes against
    their SHA-256 in ``digests``, then the identity the file carries inside, its
    ``columns`` and the identity columns of its rows. The identity read is copied
    into ``inside_out`` when given."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        data = path.read_bytes()
    except OSError as e:
        raise StoredRunError(f"unreadable ({type(e).__name__}: {e})") from None
    if hashlib.sha256(data).hexdigest() != digests.get(path.name):
        raise StoredRunError(f"changed since it was stored ({path.name} fails its checksum)")
    try:
        table = pq.read_table(pa.BufferReader(data))
    except Exception as e:  # noqa: BLE001 - any read failure means: not trustworthy
        raise StoredRunError(f"unreadable ({type(e).__name__}: {e})") from None
    raw = (table.schema.metadata or {}).get(STORE_KEY)
    if raw is None:
        raise StoredRunError("without the run identity inside")
    inside = _json_object(raw, "run metadata")
    if inside.get("key") != key:
        raise StoredRunError(f"the stored run {inside.get('key')!r}, not {key!r}")
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise StoredRunError(f"without the column(s) {', '.join(missing)}")
    if inside_out is not None:
        inside_out.update(inside)
    try:
        frame = table.to_pandas()
    except Exception as e:  # noqa: BLE001 - e.g. pandas metadata of the wrong shape
        raise StoredRunError(f"unreadable ({type(e).__name__}: {e})") from None
    want = _identity(key)
    for column in ("scenario_hash", "seed"):
        if len(frame) and not (frame[column] == want[column]).all():
            raise StoredRunError(f"holding rows of another run (column {column})")
    return frame


def read_table(run_dir: Path, key: str, table: str) -> pd.DataFrame | None:
    """One table of a run stored in the earlier layout, verified (checksums, the
    identity inside each file, columns, rows); ``None`` when the run has no such file
    (no sessions, no traces). A run that cannot be trusted raises
    :class:`StoredRunError` naming the file."""
    paths = _paths(run_dir, key)
    try:
        digests = _checksums(run_dir, paths, key)
        inside: dict[str, Any] = {}
        flows = _read_verified(paths["flows"], key, digests, FLOW_COLUMNS, inside)
        if table == "flows":
            return flows
        form = inside.get("messages")
        columns = {
            "links": LINK_COLUMNS,
            "traces": TRACE_COLUMNS,
            "sessions": SESSION_COLUMNS,
            "messages": MESSAGE_COLUMNS if form == "rows" else MESSAGE_COUNT_COLUMNS,
        }[table]
        if table != "links" and not paths[table].exists():
            if table in ("sessions", "messages") and inside.get("sessions") is True:
                raise StoredRunError(f"without its {paths[table].name}")
            return None
        return _read_verified(paths[table], key, digests, columns)
    except StoredRunError as e:
        raise StoredRunError(f"{run_dir / key}: stored run {e}") from None
