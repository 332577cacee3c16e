"""The columnar run store of sweeps: one Parquet dataset per table, runs committed in
parts as they finish, and read back only if each part is exactly what was written.

A store ``DIR`` (layout in :mod:`vtlab.storefiles`) holds the tables ``flows``,
``links``, ``sessions``, ``messages`` and ``traces`` as folders of parts
(``DIR/flows/part-<id>.parquet``, ...), which pandas, polars, DuckDB and Arrow read
directly, and ``DIR/runs/``: one row per run with its key, identity, spec and resolved
scenario. Every row of every table carries its run's ``scenario_hash`` and ``seed``.

**Commit.** A writer (:class:`StoreWriter`) gathers finished runs and commits them as
one part when it holds :data:`MAX_PART_RUNS` runs, :data:`MAX_PART_ROWS` rows or runs
older than :data:`MAX_PART_SECONDS`, and when its sweep ends or is interrupted. Under
the store's lock (:func:`vtlab.storefiles.locked`) it (1) leaves out runs another
writer committed meanwhile, (2) writes the part's files into ``_pending/<id>/``, each
fsynced, (3) writes the commit record ``_journal/<id>.json`` (runs, SHA-256 and row
count per run of every file; temporary name, fsync, rename, fsync of the folder): the
part's runs are now done, (4) renames the files into the tables' folders. A writer
killed before (3) leaves a pending folder without record, removed by the next writer;
killed after (3), its files are moved into place by the next writer (and read from
``_pending/`` meanwhile). A run is never in two records: the lock and step (1) see to
it.

**Read.** Each part is checked against its record: the bytes against their SHA-256,
the part id and table the file carries in its metadata, its columns, and the rows per
run (``scenario_hash``, ``seed``) against the record's counts. A part that fails is
moved to ``_quarantine/<id>/`` (record first: its runs are no longer done) with a
warning, and a sweep simulates its runs again; :func:`vtlab.load` raises
:class:`StoredRunError` naming the file instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtlab.api import (
    EVENT_COLUMNS,
    FLOW_COLUMNS,
    LINK_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    TRACE_COLUMNS,
    Result,
    concat_rows,
    scenario_metadata,
)
from vtlab.arrowrows import from_columns, from_ipc, identities, only_runs, to_arrow, to_ipc
from vtlab.errors import with_filename
from vtlab.rawtables import plain_columns
from vtlab.runstore import MESSAGE_COUNT_COLUMNS, MESSAGE_FORMS, StoredRunError, StoreError
from vtlab.storefiles import (
    FORMAT,
    JOURNAL,
    MANIFEST,
    PART_ID,
    PENDING,
    QUARANTINE,
    TABLES,
    fsync_dir,
    fsync_file,
    locked,
    new_part_id,
    part_path,
    write_json_durably,
)

if TYPE_CHECKING:
    import pandas as pd

    from vtlab.scenario import Scenario

__all__ = [
    "MANIFEST_COLUMNS",
    "MAX_PART_ROWS",
    "MAX_PART_RUNS",
    "MAX_PART_SECONDS",
    "PART_KEY",
    "RunEntry",
    "Store",
    "StoreWriter",
]

#: Most runs in one part.
MAX_PART_RUNS = 2000
#: Most rows (all tables together) a writer holds before it commits them: about
#: 100 MB of frames, the bound on a writer's memory.
MAX_PART_ROWS = 250_000
#: Most seconds a finished run waits in a writer before it is committed.
MAX_PART_SECONDS = 30.0

#: Schema-metadata key of the part id and table every part file carries.
PART_KEY = b"vtlab.part"

#: Columns of the runs table (``DIR/runs/``), one row per run.
MANIFEST_COLUMNS: tuple[str, ...] = (
    "run_key",
    "scenario_hash",
    "seed",
    "version",
    "core_build",
    "traces",
    "messages",
    "spec",
    "scenario",
)

#: Columns whose Parquet statistics (each page's least and greatest value) are not
#: written: a run's spec and resolved scenario, JSON texts of up to kilobytes that no
#: query ranges over. Their statistics were most of a part's writing time (a 2 000-run
#: runs table 2.5-5.8 ms with them, 0.9 ms without).
NO_STATISTICS = frozenset({"spec", "scenario"})

#: A run key: ``<scenario hash>-<seed>-<version>-<core build>``.
RUN_KEY = re.compile(r"^[0-9a-f]{16}-[0-9]+-.+-[0-9a-f]+$")


def _contract(table: str, messages: str) -> tuple[str, ...]:
    return {
        MANIFEST: MANIFEST_COLUMNS,
        "flows": FLOW_COLUMNS,
        "links": LINK_COLUMNS,
        "sessions": SESSION_COLUMNS,
        "messages": MESSAGE_COLUMNS if messages == "rows" else MESSAGE_COUNT_COLUMNS,
        "traces": TRACE_COLUMNS,
        "events": EVENT_COLUMNS,
    }[table]


def _ident(key: str) -> tuple[str, int]:
    scenario_hash, seed = key.split("-")[:2]
    return scenario_hash, int(seed)


@dataclass(frozen=True)
class RunEntry:
    """A committed run: its part, whether it has traces and session rows, the form of
    its messages (:data:`vtlab.runstore.MESSAGE_FORMS`) and whether it has events
    (records written before events could be stored have none)."""

    key: str
    part: str
    traces: bool
    sessions: bool
    messages: str
    events: bool = False


def _record(raw: bytes, part: str) -> dict[str, Any]:
    """A commit record, checked for shape; :class:`StoredRunError` otherwise."""
    try:
        rec = json.loads(raw)
    except ValueError:
        raise StoredRunError("with a commit record that is not JSON") from None
    ok = (
        isinstance(rec, dict)
        and rec.get("part") == part
        and isinstance(rec.get("runs"), list)
        and all(isinstance(k, str) and RUN_KEY.match(k) for k in rec["runs"])
        and rec.get("messages") in MESSAGE_FORMS
        and isinstance(rec.get("traces"), bool)
        and isinstance(rec.get("events", False), bool)
        and isinstance(rec.get("tables"), dict)
        and MANIFEST in rec["tables"]
    )
    if ok:
        n = len(rec["runs"])
        for name, entry in rec["tables"].items():
            rows = entry.get("rows") if isinstance(entry, dict) else None
            ok = ok and name in (MANIFEST, *TABLES) and isinstance(entry.get("sha256"), str)
            ok = ok and isinstance(rows, list) and len(rows) == n
            ok = ok and all(isinstance(r, int) and r >= 0 for r in rows or ())
    if not ok:
        raise StoredRunError("with a commit record of the wrong shape")
    if len({_ident(k) for k in rec["runs"]}) != len(rec["runs"]):
        raise StoredRunError("with a commit record naming a run twice")
    return rec


class Store:
    """A store folder. :meth:`open` checks its layout; reading needs no lock, writing
    goes through :meth:`commit` (or a :class:`StoreWriter`)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._records: dict[str, dict[str, Any]] = {}  # part id -> record (read so far)
        #: Verified tables by (part, table), kept when :meth:`keep_parts` was called.
        self._parts_read: dict[tuple[str, str], pd.DataFrame | None] | None = None

    def keep_parts(self) -> Store:
        """Keep every part table read (verified once) for later reads: for a campaign
        whose grids share parts, each part is then read once. Returns ``self``."""
        self._parts_read = {}
        return self

    @classmethod
    def open(cls, root: str | os.PathLike[str], *, create: bool = False) -> Store:
        """The store at ``root``. With ``create`` a missing folder is made a store and
        leftovers of a killed writer are cleaned up (:meth:`recover`). Raises
        :class:`StoreError` for a folder that is not a store, or a store of the
        earlier layout (one file pair per run; :func:`vtlab.storeconvert.convert`)."""
        root = Path(root)
        marker = root / "store.json"
        if not marker.exists():
            _check_not_old(root)
            if not create:
                if not root.is_dir():
                    problem = "not a folder (give the folder of a vtlab sweep --store)"
                    raise StoreError(root, problem)
                raise StoreError(root, "not a sweep store (it has no store.json)")
            root.mkdir(parents=True, exist_ok=True)
            with locked(root):
                if not marker.exists():
                    write_json_durably(marker, FORMAT)
        try:
            found = json.loads(marker.read_bytes())
        except (OSError, ValueError) as e:
            raise StoreError(root, f"store.json is unreadable ({e})") from None
        if found != FORMAT:
            raise StoreError(root, f"store.json names another layout ({found!r}, not {FORMAT!r})")
        store = cls(root)
        if create:
            store.recover()
        return store

    # -- the journal ---------------------------------------------------------------

    def _parts(self) -> list[str]:
        journal = self.root / JOURNAL
        if not journal.is_dir():
            return []
        names = (e.name for e in os.scandir(journal))
        return sorted(n[:-5] for n in names if n.endswith(".json") and PART_ID.match(n[:-5]))

    def records(
        self, on_damage: Callable[[str, str], None] | None = None
    ) -> dict[str, dict[str, Any]]:
        """Every commit record by part id, in commit order (records read before are
        not read again). A record that is not JSON of the right shape, or names a run
        an earlier part holds, goes to ``on_damage(part, reason)`` (default: raise
        :class:`StoredRunError`)."""
        seen = {k for rec in self._records.values() for k in rec["runs"]}
        for part in self._parts():
            if part in self._records:
                continue
            path = self.root / JOURNAL / f"{part}.json"
            try:
                rec = _record(path.read_bytes(), part)
                twice = [k for k in rec["runs"] if k in seen]
                if twice:
                    raise StoredRunError(f"holding run {twice[0]}, which an earlier part holds")
            except FileNotFoundError:  # moved aside meanwhile
                continue
            except StoredRunError as e:
                self._damaged(part, str(e), on_damage)
                continue
            seen.update(rec["runs"])
            self._records[part] = rec
        return dict(self._records)

    def _damaged(self, part: str, reason: str, on_damage: Callable[[str, str], None] | None):
        if on_damage is None:
            raise StoredRunError(f"{self.root / JOURNAL / part}.json: part {reason}")
        self._records.pop(part, None)
        on_damage(part, reason)

    def index(self, on_damage: Callable[[str, str], None] | None = None) -> dict[str, RunEntry]:
        """Every committed run by key."""
        out: dict[str, RunEntry] = {}
        for part, rec in self.records(on_damage).items():
            sessions = rec["tables"].get("sessions", {}).get("rows", [0] * len(rec["runs"]))
            for key, n in zip(rec["runs"], sessions, strict=True):
                events = rec.get("events", False)
                out[key] = RunEntry(key, part, rec["traces"], n > 0, rec["messages"], events)
        return out

    # -- reading -------------------------------------------------------------------

    def read(
        self,
        tables: Sequence[str],
        keys: Collection[str] | None = None,
        *,
        quarantine: bool = False,
        keep: bool = True,
    ) -> tuple[dict[str, pd.DataFrame | None], set[str]]:
        """The rows of ``tables`` of the committed runs ``keys`` (every run when
        ``None``), each part read once and verified, and the keys read. A part that
        fails a check raises :class:`StoredRunError` naming its file, or with
        ``quarantine`` is moved aside (:meth:`quarantine`) and its runs left out.
        With ``keep=False`` the parts are only verified (one at a time in memory) and
        no rows are returned."""

        frames: dict[str, list[pd.DataFrame]] = {t: [] for t in tables}
        read: set[str] = set()
        for part, rec in self.records(self.quarantine if quarantine else None).items():
            wanted = [k for k in rec["runs"] if keys is None or k in keys]
            if not wanted:
                continue
            got: dict[str, pd.DataFrame | None] = {}
            for table in tables:
                try:
                    got[table] = self._read_part(part, table)
                except StoredRunError as e:
                    if not quarantine:
                        path = part_path(self.root, table, part)
                        raise StoredRunError(f"{path}: part {e}") from None
                    self.quarantine(part, str(e))
                    break
            else:
                idents = {"-".join(map(str, _ident(k))) for k in wanted}
                for table, frame in got.items():
                    if frame is not None and len(wanted) < len(rec["runs"]):
                        frame = frame[_identities(frame).isin(idents)]
                    if keep and frame is not None and len(frame):
                        frames[table].append(frame)
                read.update(wanted)
        out = {
            t: concat_rows(fs) if len(fs) > 1 else (fs[0] if fs else None)
            for t, fs in frames.items()
        }
        return out, read

    def _read_part(self, part: str, table: str) -> pd.DataFrame | None:
        """One table of a committed part, verified against its record; ``None`` when
        the part has no rows of that table."""
        rec = self._records[part]
        entry = rec["tables"].get(table)
        if entry is None:
            return None
        kept = self._parts_read
        if kept is not None and (part, table) in kept:
            return kept[(part, table)]
        frame = _verified(part_path(self.root, table, part), part, table, rec, entry)
        if kept is not None:
            kept[(part, table)] = frame
        return frame

    def quarantine(self, part: str, reason: str) -> None:
        """Move a part aside (record first, so that its runs are no longer done; then
        its files) and warn on stderr."""
        target = self.root / QUARANTINE / part
        target.mkdir(parents=True, exist_ok=True)
        record = self.root / JOURNAL / f"{part}.json"
        if record.exists():
            os.replace(record, target / record.name)
            fsync_dir(record.parent)
        for table in (MANIFEST, *TABLES):
            path = part_path(self.root, table, part)
            if path.exists():
                os.replace(path, target / f"{table}.parquet")
        shutil.rmtree(self.root / PENDING / part, ignore_errors=True)
        if self._parts_read is not None:
            for key in [k for k in self._parts_read if k[0] == part]:
                del self._parts_read[key]
        runs = len(self._records.pop(part, {}).get("runs", []))
        what = f" ({runs} runs)" if runs else ""
        print(
            f"warning: store part {part}{what} is {reason}; moved to {target} and its runs "
            "simulated again",
            file=sys.stderr,
        )

    # -- writing -------------------------------------------------------------------

    def recover(self) -> None:
        """Finish what a killed writer left (under the lock): a pending part with its
        record is moved into place, one without is removed."""
        pending = self.root / PENDING
        if not pending.is_dir():
            return
        with locked(self.root):
            self._recover_locked()

    def _recover_locked(self) -> None:
        pending = self.root / PENDING
        if not pending.is_dir():
            return
        for entry in os.scandir(pending):
            if (self.root / JOURNAL / f"{entry.name}.json").exists():
                self._publish(entry.name)
            else:
                shutil.rmtree(entry.path, ignore_errors=True)
        for tmp in (self.root / JOURNAL).glob(".*.tmp") if (self.root / JOURNAL).is_dir() else ():
            tmp.unlink(missing_ok=True)

    def _publish(self, part: str) -> None:
        """Move a committed part's files from ``_pending/<id>/`` into the tables."""
        folder = self.root / PENDING / part
        for path in sorted(folder.glob("*.parquet")):
            table = path.name[: -len(".parquet")]
            dest = self.root / table / f"part-{part}.parquet"
            dest.parent.mkdir(exist_ok=True)
            os.replace(path, dest)
            fsync_dir(dest.parent)
        shutil.rmtree(folder, ignore_errors=True)

    def commit(
        self,
        runs: Sequence[tuple[str, Mapping[str, Any]]],
        res: Result | StoredRows,
        messages: str,
        traces: bool,
        events: bool = False,
    ) -> int:
        """Commit ``runs`` (key, scenario metadata), whose rows are ``res`` (or those
        rows as :func:`stored_rows` made them), as one part (with its traces and events
        tables as ``traces`` and ``events`` say); runs already committed (by another
        writer) are left out. Returns the number of runs committed."""
        if isinstance(res, Result):
            res = stored_rows(res, messages, traces, events)
        with locked(self.root):
            self._recover_locked()
            done = {k for rec in self.records(self.quarantine).values() for k in rec["runs"]}
            runs = [r for r in runs if r[0] not in done]
            if not runs:
                return 0
            part = new_part_id()
            folder = self.root / PENDING / part
            folder.mkdir(parents=True)
            try:
                record = _write_part(folder, part, runs, res, messages, (traces, events))
                fsync_dir(folder)
                (self.root / JOURNAL).mkdir(exist_ok=True)
                write_json_durably(self.root / JOURNAL / f"{part}.json", record)
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
            self._records[part] = record
            self._publish(part)
            return len(runs)


def _check_not_old(root: Path) -> None:
    """Refuse a store of the earlier layout (``runs/<key>.parquet`` and
    ``runs/<key>.sha256`` per run), telling how to convert it."""
    runs = root / "runs"
    if runs.is_dir() and any(e.name.endswith(".sha256") for e in os.scandir(runs)):
        raise StoreError(
            root,
            "a store of the earlier layout (one file pair per run in runs/); convert it "
            f"with: vtlab load {root} --convert",
        )


def _identities(frame: pd.DataFrame) -> pd.Series:
    return frame["scenario_hash"].astype(str) + "-" + frame["seed"].astype("uint64").astype(str)


def _label_safe(frame: pd.DataFrame, contract: Collection[str]) -> pd.DataFrame:
    """``frame`` with each label column (not in ``contract``) whose values mix types
    (an axis whose labels are numbers and text) as text, which Parquet can hold."""
    mixed = [
        c
        for c in frame.columns
        if c not in contract
        and frame[c].dtype == object
        and len({type(v) for v in frame[c] if v is not None}) > 1
    ]
    if not mixed:
        return frame
    return frame.assign(**{c: frame[c].astype(str) for c in mixed})


@dataclass(frozen=True)
class StoredRows:
    """Rows of runs as a store part holds them: each table that has rows (of those a
    part stores) as an Arrow table, label columns of mixed kinds as text
    (:func:`_label_safe`), with its rows per run identity. A sweep's worker makes them
    for its task (:func:`stored_rows`), so that the sweep's process only joins them
    and encodes Parquet (docs/cluster.md, "The tables of a task as Arrow")."""

    tables: Mapping[str, Any]
    counts: Mapping[str, Mapping[str, int]]
    #: For a sweep that also returns its rows: the result's metadata, and the frames
    #: of its tables without rows (empty, or ``None`` where not recorded), which a
    #: part does not hold (:func:`vtlab.sweeprows.rows_result` rebuilds the result).
    meta: Mapping[str, Any] | None = None
    frames: Mapping[str, Any] | None = None

    @property
    def rows(self) -> int:
        return sum(t.num_rows for t in self.tables.values())

    def __reduce__(self) -> tuple[Any, ...]:
        # From a worker to the sweep's process: each table as one IPC stream, a
        # tenth of what pickling it costs either side (vtlab.arrowrows.to_ipc).
        tables = {name: to_ipc(t) for name, t in self.tables.items()}
        return (_unpickled_rows, (tables, self.counts, self.meta, self.frames))


def _unpickled_rows(
    tables: Mapping[str, bytes],
    counts: Mapping[str, Mapping[str, int]],
    meta: Mapping[str, Any] | None,
    frames: Mapping[str, Any] | None,
) -> StoredRows:
    return StoredRows({name: from_ipc(t) for name, t in tables.items()}, counts, meta, frames)


def stored_rows(
    res: Result, messages: str, traces: bool, events: bool, keep: bool = False
) -> StoredRows:
    """The rows of ``res`` as a part with its traces and events tables as ``traces``
    and ``events`` say stores them; with ``keep``, also what rebuilds ``res`` from
    them (its metadata, its tables without rows)."""
    tables: dict[str, Any] = {}
    counts: dict[str, Mapping[str, int]] = {}
    frames: dict[str, Any] = {}
    for table in TABLES:
        frame = getattr(res, table)
        if (table == "traces" and not traces) or (table == "events" and not events):
            frames[table] = frame
            continue
        if frame is None or not len(frame):
            frames[table] = frame
            continue
        tables[table] = to_arrow(_label_safe(frame, _contract(table, messages)))
        counts[table] = identities(tables[table])
    if keep:
        return StoredRows(tables, counts, res.meta, frames)
    return StoredRows(tables, counts)


def joined(held: Sequence[StoredRows]) -> list[StoredRows]:
    """``held`` as one, each table's parts concatenated in order, where every table
    has one schema in all of them (as it has when one sweep's tasks made them: a
    column's type follows from the core and the labels' kinds); else ``held`` as it
    is, each to be a part of its own (a part's file has one schema)."""
    import pyarrow as pa

    names = [t for t in TABLES if any(t in h.tables for h in held)]
    for t in names:
        schemas = [h.tables[t].schema for h in held if t in h.tables]
        if any(not x.equals(schemas[0], check_metadata=True) for x in schemas[1:]):
            return list(held)
    tables = {t: pa.concat_tables([h.tables[t] for h in held if t in h.tables]) for t in names}
    counts = {t: {k: n for h in held for k, n in h.counts.get(t, {}).items()} for t in names}
    return [StoredRows(tables, counts)]


def _write_part(
    folder: Path,
    part: str,
    runs: Sequence[tuple[str, Mapping[str, Any]]],
    rows: StoredRows,
    messages: str,
    optional: tuple[bool, bool],
) -> dict[str, Any]:
    """Write the part's files into ``folder`` (each fsynced); its commit record.
    ``optional``: whether the part holds the traces and the events tables."""
    import pandas as pd

    traces, events = optional
    keys = [k for k, _ in runs]
    fields = [k.split("-", 3) for k in keys]  # hash, seed, version, core build
    idents = [f"{h}-{int(s)}" for h, s, _, _ in fields]
    wanted = set(idents)
    manifest = {
        "run_key": keys,
        "scenario_hash": [f[0] for f in fields],
        "seed": [int(f[1]) for f in fields],
        "version": [f[2] for f in fields],
        "core_build": [f[3] for f in fields],
        "traces": [traces] * len(keys),
        "messages": [messages] * len(keys),
        "spec": [meta.get("spec") for _, meta in runs],
        "scenario": [meta.get("scenario") for _, meta in runs],
    }
    plain = plain_columns(manifest)  # the frame's table, without the frame, where it can
    if plain is not None:
        arrow = from_columns((MANIFEST, tuple(plain.data), plain.kinds), plain.data)
    else:
        arrow = to_arrow(_label_safe(pd.DataFrame(manifest), _contract(MANIFEST, messages)))
    arrows = {MANIFEST: arrow}
    counts_of = {MANIFEST: dict.fromkeys(idents, 1)}  # one row per run, by making
    arrows.update(rows.tables)
    counts_of.update(rows.counts)
    tables: dict[str, Any] = {}
    for table, arrow in arrows.items():
        counts = counts_of[table]
        if not wanted.issuperset(counts):
            # Rows of runs another writer committed meanwhile: left out.
            arrow = only_runs(arrow, wanted)
            if not arrow.num_rows:
                continue
            counts = {i: n for i, n in counts.items() if i in wanted}
        path = folder / f"{table}.parquet"
        inside = {"part": part, "table": table}
        final = folder.parent.parent / table / f"part-{part}.parquet"  # named in errors
        _write_parquet(arrow, path, inside, final)
        tables[table] = {
            "sha256": _sha256(path),
            "rows": [counts.get(i, 0) for i in idents],
        }
    return {
        "part": part,
        "runs": keys,
        "messages": messages,
        "traces": traces,
        "events": events,
        "tables": tables,
    }


def _write_parquet(table: Any, path: Path, inside: Mapping[str, Any], name: Path) -> None:
    """Write the Arrow ``table`` to ``path`` (fsynced), ``inside`` in its metadata."""
    import pyarrow.parquet as pq

    try:
        meta = {**(table.schema.metadata or {}), PART_KEY: json.dumps(inside).encode()}
        statistics = [c for c in table.column_names if c not in NO_STATISTICS]
        pq.write_table(table.replace_schema_metadata(meta), path, write_statistics=statistics)
        fsync_file(path)
    except OSError as exc:  # pyarrow's errors name no file: name the part's
        raise with_filename(exc, name) from exc


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verified(
    path: Path, part: str, table: str, rec: Mapping[str, Any], entry: Mapping[str, Any]
) -> pd.DataFrame:
    """Read one part file and check it against its record (see the module)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        data = path.read_bytes()
    except OSError as e:
        raise StoredRunError(f"unreadable ({type(e).__name__}: {e})") from None
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise StoredRunError(f"changed since it was stored ({path.name} fails its checksum)")
    try:
        arrow = pq.read_table(pa.BufferReader(data))
        inside = json.loads((arrow.schema.metadata or {}).get(PART_KEY, b"null"))
    except Exception as e:  # noqa: BLE001 - any read failure means: not trustworthy
        raise StoredRunError(f"unreadable ({type(e).__name__}: {e})") from None
    if inside != {"part": part, "table": table}:
        raise StoredRunError(f"holding {inside!r}, not part {part} of table {table}")
    missing = [c for c in _contract(table, rec["messages"]) if c not in arrow.column_names]
    if missing:
        raise StoredRunError(f"without the column(s) {', '.join(missing)}")
    try:
        frame = arrow.to_pandas()
        counts = identities(arrow)
    except Exception as e:  # noqa: BLE001 - pandas metadata of the wrong shape, key columns of a type no run has
        raise StoredRunError(f"unreadable ({type(e).__name__}: {e})") from None
    want = {
        f"{h}-{s}": n
        for (h, s), n in zip(map(_ident, rec["runs"]), entry["rows"], strict=True)
        if n
    }
    if dict(counts) != want:
        raise StoredRunError("holding other rows than its record names (rows per run differ)")
    if table == MANIFEST and list(frame["run_key"]) != list(rec["runs"]):
        raise StoredRunError("naming other runs than its record")
    return frame


class StoreWriter:
    """Gathers finished runs and commits them to a store in parts (see the module):
    its memory is bounded by :data:`MAX_PART_ROWS` rows and :data:`MAX_PART_RUNS`
    runs. Safe to call from several threads."""

    def __init__(
        self,
        store: Store,
        *,
        messages: str,
        traces: bool,
        events: bool = False,
    ) -> None:
        self.store = store
        self.messages = messages
        self.traces = traces
        self.events = events
        self.max_runs, self.max_rows = MAX_PART_RUNS, MAX_PART_ROWS
        self.max_seconds = MAX_PART_SECONDS
        self._lock = threading.Lock()
        self._held = 0  # runs held
        #: What each add brought: its runs and their rows (a Result or StoredRows).
        self._results: list[tuple[list[tuple[str, Mapping[str, Any]]], Result | StoredRows]] = []
        self._rows = 0
        self._since = 0.0
        self._described: dict[str, Mapping[str, Any]] = {}  # scenario hash -> metadata
        self.committed = 0

    def add(
        self,
        runs: Iterable[tuple[str, Scenario | Mapping[str, Any]]],
        res: Result | StoredRows,
    ) -> None:
        """Hold ``res``, the rows of ``runs`` (key, and scenario or the metadata
        :func:`vtlab.api.scenario_metadata` gives for it), or those rows as
        :func:`stored_rows` made them for this writer, and commit the held runs when
        a bound is reached."""
        described = [(k, self._describe(k, sc)) for k, sc in runs]
        if isinstance(res, StoredRows):
            rows = res.rows
        else:
            rows = sum(len(f) for f in (res.flows, res.links, res.sessions, res.messages))
            rows += len(res.traces) if self.traces and res.traces is not None else 0
            rows += len(res.events) if self.events and res.events is not None else 0
        with self._lock:
            if not self._held:
                self._since = time.monotonic()
            self._held += len(described)
            self._results.append((described, res))
            self._rows += rows
            full = self._held >= self.max_runs or self._rows >= self.max_rows
            if full or time.monotonic() - self._since >= self.max_seconds:
                self._flush_locked()

    def _describe(self, key: str, scenario: Scenario | Mapping[str, Any]) -> Mapping[str, Any]:
        if isinstance(scenario, Mapping):
            return scenario
        scenario_hash = key.split("-", 1)[0]
        if scenario_hash not in self._described:
            self._described[scenario_hash] = scenario_metadata(scenario)
        return self._described[scenario_hash]

    def flush(self) -> None:
        """Commit the runs held now."""
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if not self._held:
            return
        held = self._results
        self._held, self._results, self._rows = 0, [], 0
        frames = [(runs, r) for runs, r in held if isinstance(r, Result)]
        made = [(runs, r) for runs, r in held if isinstance(r, StoredRows)]
        parts: list[tuple[list[tuple[str, Mapping[str, Any]]], Result | StoredRows]] = []
        if frames:  # one part, converted as a whole (the one-job and threads paths)
            res = [r for _, r in frames]
            joint = Result.concat(res).compacted() if len(res) > 1 else res[0]
            parts.append(([k for runs, _ in frames for k in runs], joint))
        if made:  # workers' tasks: joined, or each a part where their schemas differ
            together = joined([r for _, r in made])
            if len(together) == 1:
                parts.append(([k for runs, _ in made for k in runs], together[0]))
            else:
                parts += made
        for runs, rows in parts:
            self.committed += self.store.commit(runs, rows, self.messages, self.traces, self.events)
