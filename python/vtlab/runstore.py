"""The run store of sweeps: each run written as it finishes, and read back only if it
is exactly what was written.

A run is stored in ``runs/`` as ``<key>.parquet`` (the flow rows, written last: it
marks the run complete), ``<key>.links.parquet`` and, when the run has them,
``<key>.traces.parquet``, ``<key>.sessions.parquet`` and ``<key>.messages.parquet``;
the key is ``<scenario hash>-<seed>-<version>-<core build>``. Every file carries the
run's identity in its Parquet metadata, and ``<key>.sha256`` (written just before the
flows file) holds the run's key and the SHA-256 of each of its files. A file that is
unreadable, changed since it was written (a flipped bit), of the wrong shape or
another run's is moved to ``runs/quarantine/`` and the run simulated again; a run
stored without checksums (by an earlier vtlab) makes the store refused
(:class:`StoreError`), since its contents cannot be verified.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtlab.api import (
    FLOW_COLUMNS,
    LINK_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    TRACE_COLUMNS,
    Result,
    scenario_metadata,
)
from vtlab.errors import with_filename
from vtlab.scenario import Scenario

if TYPE_CHECKING:  # pandas is imported when runs are stored or loaded
    import pandas as pd

__all__ = [
    "MESSAGE_COUNT_COLUMNS",
    "MESSAGE_FORMS",
    "STORE_KEY",
    "StoreError",
    "StoredRunError",
    "load_run",
    "read_table",
    "store_run",
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
    """A run's files, the checksums last (moved aside last, so a run whose flows file
    is there always has its checksums)."""
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


def _tmp_beside(path: Path) -> Path:
    """A temporary name beside ``path``, unique to this process and thread."""
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _write_tmp(
    frame: pd.DataFrame, path: Path, key: str, extra: Mapping[str, Any] | None = None
) -> tuple[Path, str]:
    """Write ``frame`` with the run's identity (and ``extra``) inside to a temporary
    file beside ``path``; return it and its SHA-256."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[STORE_KEY] = json.dumps({**_identity(key), **(extra or {})}).encode()
    tmp = _tmp_beside(path)
    try:
        pq.write_table(table.replace_schema_metadata(meta), tmp)
        return tmp, _sha256(tmp)
    except OSError as exc:  # pyarrow's errors name no file: name the run's
        tmp.unlink(missing_ok=True)
        raise with_filename(exc, path) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def store_run(
    run_dir: Path,
    key: str,
    res: Result,
    messages: str = "rows",
    scenario: Scenario | None = None,
) -> None:
    """Write one run, each file atomically. The checksums (``<key>.sha256``: the run's
    key and the SHA-256 of each file) go next to last and the flows file last: it
    marks the run complete, and records whether the run has session and message
    files, and the messages' form. With ``scenario`` every file carries it too
    (:func:`scenario_metadata`: the spec as given and the resolved scenario)."""
    paths = _paths(run_dir, key)
    described = scenario_metadata(scenario) if scenario is not None else {}
    tables = {"traces": res.traces, "links": res.links}
    sessions = res.has_sessions()
    if sessions:
        tables.update(sessions=res.sessions, messages=res.messages)
    digests: dict[str, str] = {}
    for name, frame in tables.items():
        if frame is not None:
            tmp, digests[paths[name].name] = _write_tmp(frame, paths[name], key, described)
            os.replace(tmp, paths[name])
    extra = {"sessions": sessions, "messages": messages, **described}
    flows, digests[paths["flows"].name] = _write_tmp(res.flows, paths["flows"], key, extra)
    try:
        tmp = _tmp_beside(paths["checksums"])
        try:
            tmp.write_text(json.dumps({"key": key, "sha256": digests}, indent=1) + "\n")
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise with_filename(exc, paths["checksums"]) from exc
        os.replace(tmp, paths["checksums"])
        os.replace(flows, paths["flows"])
    except BaseException:
        flows.unlink(missing_ok=True)
        raise


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


def _quarantine(run_dir: Path, paths: dict[str, Path], reason: str) -> None:
    """Move a run's files aside (``runs/quarantine/``) and say so on stderr."""
    target = run_dir / "quarantine"
    target.mkdir(exist_ok=True)
    moved = []
    for p in paths.values():
        if p.exists():
            dest = target / p.name
            n = 1
            while dest.exists():
                dest = target / f"{p.name}.{n}"
                n += 1
            os.replace(p, dest)
            moved.append(p.name)
    print(
        f"warning: stored run {', '.join(moved)} is {reason}; moved to {target} and "
        "simulated again",
        file=sys.stderr,
    )


def load_run(run_dir: Path, key: str, trace: bool, messages: str = "rows") -> Result | None:
    """A stored run, verified; ``None`` if it is not stored (or was moved aside
    because it could not be trusted or holds its messages in another form, so that
    it runs again). Raises :class:`StoreError` for a run stored without checksums."""
    paths = _paths(run_dir, key)
    if not paths["flows"].exists() or (trace and not paths["traces"].exists()):
        return None
    inside: dict[str, Any] = {}
    sessions = stored_messages = traces = None
    try:
        digests = _checksums(run_dir, paths, key)
        flows = _read_verified(paths["flows"], key, digests, FLOW_COLUMNS, inside)
        links = _read_verified(paths["links"], key, digests, LINK_COLUMNS)
        if trace:
            traces = _read_verified(paths["traces"], key, digests, TRACE_COLUMNS)
        has_sessions, form = inside.get("sessions"), inside.get("messages")
        if not isinstance(has_sessions, bool) or form not in MESSAGE_FORMS:
            raise StoredRunError("with run metadata of the wrong shape (sessions, messages)")
        if has_sessions:
            if form != messages:
                raise StoredRunError(f"holding its messages as {form}, not {messages}")
            sessions = _read_verified(paths["sessions"], key, digests, SESSION_COLUMNS)
            message_columns = MESSAGE_COLUMNS if form == "rows" else MESSAGE_COUNT_COLUMNS
            stored_messages = _read_verified(paths["messages"], key, digests, message_columns)
    except StoredRunError as e:
        _quarantine(run_dir, paths, str(e))
        return None
    scenario_hash, seed, version, build = key.split("-", 3)
    meta = {
        "scenario_hash": scenario_hash,
        "seed": int(seed),
        "version": version,
        "core_build": build,
        "stored": True,
    }
    return Result(
        flows=flows,
        links=links,
        traces=traces,
        meta=meta,
        sessions=sessions,
        messages=stored_messages,
    )


def read_table(run_dir: Path, key: str, table: str) -> pd.DataFrame | None:
    """One table of a stored run, verified as :func:`load_run` verifies it (checksums,
    the identity inside each file, columns, rows); ``None`` when the run has no such
    file (no sessions, no traces). Nothing is moved aside: a run that cannot be
    trusted raises :class:`StoredRunError` naming the file."""
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
