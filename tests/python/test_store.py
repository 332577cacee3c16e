"""The columnar sweep store loads only what it committed: every part file is checked
against the SHA-256 and the rows per run in its commit record (``_journal/<id>.json``),
so a flipped bit, a file of the wrong shape or another part's file moves the part
aside and its runs are simulated again; a writer killed at any step leaves no run
lost or twice; two writers at once commit each run once."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from vtlab.store import PART_KEY, Store
from vtlab.sweep import Sweep

#: Runs with every kind of stored table: flows, links, sessions and messages.
SESSION_RUN = {
    "preset": "v2g",
    "bytes": "200kB",
    "session": {"duration": "5s"},
    "loss": {"mean_loss": "1%"},
}
TABLES = ("flows", "links", "sessions", "messages")


def _stored(tmp_path: Path) -> tuple[Sweep, Path, object]:
    sweep = Sweep(SESSION_RUN, seeds=[1, 2])
    store = tmp_path / "store"
    simulated = sweep.run(store, progress=False)
    return sweep, store, simulated


def _read(store: Path) -> tuple[dict, set]:
    """The store's tables as a sweep reads them (damaged parts moved aside)."""
    return Store.open(store, create=True).read(("runs", *TABLES), quarantine=True)


def _assert_same_tables(frames, want) -> None:
    for name in TABLES:
        got = frames[name] if isinstance(frames, dict) else getattr(frames, name)
        pd.testing.assert_frame_equal(
            got.sort_values(["seed"], kind="stable").reset_index(drop=True),
            getattr(want, name).sort_values(["seed"], kind="stable").reset_index(drop=True),
            check_exact=True,
        )


def _part(store: Path) -> str:
    (record,) = (store / "_journal").glob("*.json")
    return record.name[: -len(".json")]


def _resign(store: Path, table: str, path: Path) -> None:
    """Put ``path``'s new SHA-256 into the part's record, as someone rewriting a
    stored file with its checksum would: the wrong shape must then be caught by what
    the file holds, not by its checksum."""
    record_path = store / "_journal" / f"{_part(store)}.json"
    record = json.loads(record_path.read_text())
    record["tables"][table]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    record_path.write_text(json.dumps(record))


def test_every_flipped_bit_of_a_stored_part_is_moved_aside_never_loaded(tmp_path, capsys):
    """Flip one bit at a time at deterministic places in every file of a stored part
    (about 30 places per file: every k-th byte, bit n mod 8). The expectation is
    derived, not recorded: a flip in a Parquet file changes its bytes, so its SHA-256
    no longer matches (a collision is out of reach); a flip in the commit record
    breaks its JSON (every whitespace and structural byte flips to a byte JSON
    refuses), a name, a digest, a run key (which the runs table then contradicts) or
    a row count (which the rows contradict). So every flip must move the part aside,
    and nothing that differs from the simulated runs may ever load."""
    _, store, simulated = _stored(tmp_path)
    pristine = tmp_path / "pristine"
    shutil.copytree(store, pristine)
    frames, read = _read(store)
    assert len(read) == 2, "the untouched part loads"
    _assert_same_tables(frames, simulated)
    files = sorted(p.relative_to(pristine) for p in pristine.rglob("*") if p.is_file())
    files = [f for f in files if f.name != "_lock" and f.name != "store.json"]
    assert sorted(f.parts[0] for f in files) == sorted(["_journal", "runs", *TABLES])

    flips = moved = 0
    for rel in files:
        data = (pristine / rel).read_bytes()
        step = max(1, len(data) // 30)
        for n, at in enumerate(range(0, len(data), step)):
            shutil.rmtree(store)
            shutil.copytree(pristine, store)
            flipped = bytearray(data)
            flipped[at] ^= 1 << (n % 8)
            (store / rel).write_bytes(bytes(flipped))
            capsys.readouterr()
            frames, read = _read(store)
            flips += 1
            where = f"{rel} byte {at} bit {n % 8}"
            if not read:
                moved += 1
                err = capsys.readouterr().err
                assert err.startswith("warning: store part ") and "moved to" in err, where
                assert not list((store / "_journal").glob("*.json")), where
            else:
                _assert_same_tables(frames, simulated)
    assert flips >= 6 * 30
    assert moved == flips, "every flip changes a checksummed file or the record"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda rec: [], "a commit record of the wrong shape"),
        (lambda rec: "{", "a commit record that is not JSON"),
        (lambda rec: {**rec, "runs": rec["runs"][:1]}, "wrong shape"),
        (lambda rec: {**rec, "runs": [rec["runs"][0]] * 2}, "naming a run twice"),
        (lambda rec: {**rec, "messages": 7}, "wrong shape"),
        (lambda rec: {**rec, "traces": "no"}, "wrong shape"),
        (lambda rec: {**rec, "tables": {"flows": rec["tables"]["flows"]}}, "wrong shape"),
        (lambda rec: {**rec, "part": "other"}, "wrong shape"),
    ],
)
def test_a_commit_record_of_the_wrong_shape_is_moved_aside(tmp_path, capsys, change, reason):
    sweep, store, simulated = _stored(tmp_path)
    path = store / "_journal" / f"{_part(store)}.json"
    changed = change(json.loads(path.read_text()))
    path.write_text(changed if isinstance(changed, str) else json.dumps(changed))
    again = sweep.run(store, progress=False)
    err = capsys.readouterr().err
    assert reason in err and "moved to" in err
    _assert_same_tables(again, simulated)
    frames, read = _read(store)
    assert len(read) == 2, "stored again, properly"


def test_a_part_without_its_columns_is_moved_aside(tmp_path, capsys):
    sweep, store, simulated = _stored(tmp_path)
    (links,) = (store / "links").iterdir()
    table = pq.read_table(links)
    pq.write_table(table.drop_columns(["packets_carried"]), links)
    _resign(store, "links", links)
    again = sweep.run(store, progress=False)
    assert "without the column(s) packets_carried" in capsys.readouterr().err
    _assert_same_tables(again, simulated)


def test_a_file_of_another_table_or_part_is_moved_aside(tmp_path, capsys):
    """The sessions file copied over the messages file, checksum and all: the table
    it says it holds is not the one its name and record give."""
    sweep, store, simulated = _stored(tmp_path)
    (sessions,) = (store / "sessions").iterdir()
    (messages,) = (store / "messages").iterdir()
    messages.write_bytes(sessions.read_bytes())
    _resign(store, "messages", messages)
    inside = json.loads(pq.read_schema(messages).metadata[PART_KEY])
    assert inside["table"] == "sessions"
    again = sweep.run(store, progress=False)
    err = capsys.readouterr().err
    assert "not part" in err and "of table messages" in err
    _assert_same_tables(again, simulated)


def test_rows_of_another_run_in_a_part_are_caught(tmp_path, capsys):
    """A flows part whose rows all say seed 1 (rewritten with a matching checksum):
    the rows per run contradict the record."""
    sweep, store, simulated = _stored(tmp_path)
    (flows,) = (store / "flows").iterdir()
    frame = pq.read_table(flows)
    seeds = frame.column("seed").to_pylist()
    forged = frame.set_column(
        frame.schema.get_field_index("seed"),
        frame.schema.field("seed"),
        [[seeds[0]] * len(seeds)],
    )
    pq.write_table(forged.replace_schema_metadata(frame.schema.metadata), flows)
    _resign(store, "flows", flows)
    again = sweep.run(store, progress=False)
    assert "rows per run differ" in capsys.readouterr().err
    _assert_same_tables(again, simulated)


def test_a_writer_killed_before_its_record_leaves_nothing(tmp_path, monkeypatch):
    """Killed after writing its part's files but before the commit record: the
    pending folder is removed by the next writer and its runs run once more."""
    sweep, store, simulated = _stored(tmp_path)
    part = _part(store)
    orphan = store / "_pending" / "20200101T000000-1-00000000"
    orphan.mkdir(parents=True)
    for table in ("runs", *TABLES):
        shutil.copy(store / table / f"part-{part}.parquet", orphan / f"{table}.parquet")
    # pandas reading the folders directly never sees the orphan.
    assert len(pd.read_parquet(store / "flows")) == len(simulated.flows)
    Store.open(store, create=True)
    assert not orphan.exists()
    assert len(Store.open(store).index()) == 2


def test_a_writer_killed_after_its_record_is_finished_by_the_next(tmp_path):
    """Killed after the commit record, before moving its files into the tables: the
    runs are done (the record says so); readers find the files in ``_pending/`` and
    the next writer moves them into place."""
    sweep, store, simulated = _stored(tmp_path)
    part = _part(store)
    pending = store / "_pending" / part
    pending.mkdir(parents=True)
    for table in ("runs", *TABLES):
        os.replace(store / table / f"part-{part}.parquet", pending / f"{table}.parquet")
    frames, read = Store.open(store).read(TABLES)
    assert len(read) == 2
    _assert_same_tables(frames, simulated)
    Store.open(store, create=True)
    assert not pending.exists()
    assert (store / "flows" / f"part-{part}.parquet").exists()
    _assert_same_tables(Store.open(store).read(TABLES)[0], simulated)


_WRITER = """
import sys
from vtlab.sweep import Axis, Sweep
sweep = Sweep(
    {"preset": "v2g", "bytes": "20kB"},
    [Axis.values("loss.mean_loss", [0.0, 0.01, 0.02, 0.05], name="loss")],
    seeds=range(1, 11),
)
sweep.run(sys.argv[1], jobs=1, progress=False)
"""


def test_two_writers_at_once_commit_each_run_once(tmp_path):
    """Two processes run the same 40-run sweep into one store at the same time: each
    run is committed once (the lock, and each writer leaving out what the other
    committed), and the folders read directly hold each run's rows once."""
    store = tmp_path / "shared"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(store)], env=env) for _ in range(2)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    index = Store.open(store).index()
    assert len(index) == 40
    flows = pd.read_parquet(store / "flows")
    pairs = list(zip(flows["scenario_hash"], flows["seed"], strict=True))
    assert len(pairs) == len(set(pairs)) == 40, "one v2g flow per run, each once"
    assert len(pd.read_parquet(store / "runs")) == 40


def test_a_writer_leaves_out_the_runs_another_committed_meanwhile(tmp_path):
    """Writer 1 holds runs 1 and 2; writer 2 commits run 1 meanwhile; writer 1's part
    then holds run 2 alone, its record counting run 2's rows only, and the store has
    each run's rows once."""
    from vtlab import _core
    from vtlab.api import Result
    from vtlab.store import StoreWriter

    points = Sweep({"preset": "v2g", "bytes": "20kB"}, [], seeds=[1, 2]).points()
    results = [Result.from_core(_core.run(p.scenario.to_json(), p.seed, False)) for p in points]
    store = Store.open(tmp_path, create=True)
    first, second = (StoreWriter(store, messages="rows", traces=False) for _ in range(2))
    first.add([(p.key, p.scenario) for p in points], Result.concat(results).compacted())
    second.add([(points[0].key, points[0].scenario)], results[0])
    second.flush()
    first.flush()
    assert (first.committed, second.committed) == (1, 1)
    index = store.index()
    assert index[points[0].key].part != index[points[1].key].part
    flows = pd.read_parquet(tmp_path / "flows")
    assert sorted(flows["seed"]) == [1, 2], "one v2g flow per run, each once"
    again = Store.open(tmp_path)
    frames, read = again.read(["flows", "links"], {p.key for p in points})
    assert read == {p.key for p in points} and len(frames["flows"]) == 2


def test_rows_per_run_are_counted_whatever_the_columns_arrow_types(tmp_path):
    """The rows per run identity of a part, counted by Arrow, for a hash column stored
    as text or as a dictionary and a seed above 2^63 (seeds are unsigned 64-bit): by
    hand, run a-1 has two rows, a-18446744073709551615 one, b-1 one."""
    import pyarrow as pa

    from vtlab.arrowrows import identities as _arrow_identities

    seeds = pa.array([1, 2**64 - 1, 1, 1], pa.uint64())
    want = {"a-1": 2, "a-18446744073709551615": 1, "b-1": 1}
    for hashes in (
        pa.array(["a", "a", "b", "a"]),
        pa.array(["a", "a", "b", "a"], pa.large_string()),
        pa.array(["a", "a", "b", "a"]).dictionary_encode(),
    ):
        table = pa.table({"scenario_hash": hashes, "seed": seeds, "x": [0.5] * 4})
        assert _arrow_identities(table) == want
    assert _arrow_identities(pa.table({"scenario_hash": ["a"], "seed": [3]})) == {"a-3": 1}
    assert _arrow_identities(pa.table({"scenario_hash": pa.array([], pa.string())})) == {}


def test_stored_rows_cross_to_the_sweeps_process_unchanged():
    """A worker's task rows (pickled as each table's Arrow IPC stream) come back as
    they were: every table with its schema's metadata (the pandas metadata the store
    writes), a table of two record batches, the counts, the metadata and the frames
    without rows; and without the last two."""
    import pickle

    import pyarrow as pa

    import vtlab
    from vtlab.store import stored_rows

    res = vtlab.run_many({"preset": "v2g", "bytes": "200kB"}, seeds=[1, 2, 3])
    rows = stored_rows(res, "rows", False, False, keep=True)
    flows = rows.tables["flows"]
    two = pa.concat_tables([flows.slice(0, 1), flows.slice(1)])  # two batches
    for sent in (rows, dataclasses.replace(rows, tables={**rows.tables, "flows": two}),
                 stored_rows(res, "rows", False, False)):  # fmt: skip
        back = pickle.loads(pickle.dumps(sent))
        assert sorted(back.tables) == sorted(sent.tables) == ["flows", "links"]
        for name, table in sent.tables.items():
            assert back.tables[name].equals(table, check_metadata=True), name
            assert back.tables[name].schema.metadata[b"pandas"]
        assert back.counts == sent.counts and back.meta == sent.meta
        if sent.frames is None:
            assert back.frames is None
            continue
        for name, frame in sent.frames.items():
            if frame is None:
                assert back.frames[name] is None
            else:
                pd.testing.assert_frame_equal(back.frames[name], frame)


def test_rows_per_run_agree_with_counting_the_rows_one_by_one():
    """identities cuts a table where its keys change; the expected counts here come
    from counting every row's (hash, seed) pair in Python: 300 seeded tables whose
    runs come in one stretch, in several (a run's rows interleaved with another's)
    or a row at a time, of one to two thousand rows, in one or several chunks."""
    import random
    from collections import Counter

    import pyarrow as pa

    from vtlab.arrowrows import identities as _arrow_identities

    rng = random.Random(20261127)
    for case in range(300):
        runs = [(rng.choice("abc") * rng.randint(1, 3), rng.choice([0, 1, 7, 2**64 - 1]))]
        runs += [(rng.choice("abc"), rng.randint(0, 3)) for _ in range(rng.randint(0, 8))]
        rows: list[tuple[str, int]] = []
        for _ in range(rng.randint(1, 30)):
            rows += [rng.choice(runs)] * rng.randint(1, 80)
        if case % 3 == 0:
            rng.shuffle(rows)
        want = {f"{h}-{s}": n for (h, s), n in Counter(rows).items()}
        hashes = pa.array([h for h, _ in rows])
        seeds = pa.array([s for _, s in rows], pa.uint64())
        if case % 4 == 1:
            hashes = hashes.dictionary_encode()
        table = pa.table({"scenario_hash": hashes, "seed": seeds})
        if case % 5 == 2:  # several record batches: chunked columns
            cut = rng.randint(1, len(rows))
            table = pa.concat_tables([table.slice(0, cut), table.slice(cut)])
        assert _arrow_identities(table) == want, case


def test_a_parts_files_keep_statistics_but_for_the_runs_json_texts(tmp_path):
    """Each page's least and greatest value stay in a part's files for the columns a
    query filters on (seed, loss, ...), not for a run's spec and scenario (JSON texts
    of kilobytes: their statistics were most of the part's writing time)."""
    _, store, _ = _stored(tmp_path)
    (runs,) = (store / "runs").glob("*.parquet")
    (flows,) = (store / "flows").glob("*.parquet")
    for path, without in ((runs, {"spec", "scenario"}), (flows, set())):
        group = pq.ParquetFile(path).metadata.row_group(0)
        for i in range(group.num_columns):
            column = group.column(i)
            has = column.is_stats_set and column.statistics.has_min_max
            assert has == (column.path_in_schema not in without), (path.name, column)


def _rows_of(points: list, label: object) -> object:
    """The runs ``points`` (20 kB each) labelled ``loss=label``, as a worker hands
    them to a store writer."""
    from vtlab import _core
    from vtlab.api import Result
    from vtlab.store import stored_rows
    from vtlab.sweeprows import add_labels

    res = Result.concat(
        [Result.from_core(_core.run(p.scenario.to_json(), p.seed, False)) for p in points]
    ).compacted()
    add_labels(res, [("loss", label)])
    return stored_rows(res, "rows", False, False)


def test_workers_rows_of_two_schemas_are_committed_as_two_parts(tmp_path):
    """Two tasks whose label column has two types (a number, a text) cannot share a
    part's file: each is committed as a part of its own, every run once, each part
    holding its own type."""
    from vtlab.store import StoreWriter

    points = Sweep({"preset": "v2g", "bytes": "20kB"}, [], seeds=[1, 2, 3]).points()
    store = Store.open(tmp_path, create=True)
    writer = StoreWriter(store, messages="rows", traces=False)
    writer.add([(p.key, p.scenario) for p in points[:2]], _rows_of(points[:2], 0.01))
    writer.add([(points[2].key, points[2].scenario)], _rows_of(points[2:], "1%"))
    writer.flush()
    assert writer.committed == 3
    index = store.index()
    assert len({e.part for e in index.values()}) == 2 and set(index) == {p.key for p in points}
    files = (tmp_path / "flows").glob("*.parquet")
    types = sorted(str(pq.read_schema(f).field("loss").type) for f in files)
    assert types in (["double", "large_string"], ["double", "string"])


def test_workers_rows_leave_out_the_runs_another_writer_committed_meanwhile(tmp_path):
    """As with a sweep's own rows: writer 1 holds runs 1 and 2 as a worker made them;
    writer 2 commits run 1 meanwhile; writer 1's part then holds run 2 alone (its one
    flow and four link directions, by hand: one v2g flow, two links both ways)."""
    from vtlab.store import StoreWriter

    points = Sweep({"preset": "v2g", "bytes": "20kB"}, [], seeds=[1, 2]).points()
    store = Store.open(tmp_path, create=True)
    first, second = (StoreWriter(store, messages="rows", traces=False) for _ in range(2))
    first.add([(p.key, p.scenario) for p in points], _rows_of(points, 0.01))
    second.add([(points[0].key, points[0].scenario)], _rows_of(points[:1], 0.01))
    second.flush()
    first.flush()
    assert (first.committed, second.committed) == (1, 1)
    part = store.index()[points[1].key].part
    flows = pd.read_parquet(tmp_path / "flows" / f"part-{part}.parquet")
    links = pd.read_parquet(tmp_path / "links" / f"part-{part}.parquet")
    assert list(flows["seed"]) == [2] and list(links["seed"]) == [2] * 4
    frames, read = Store.open(tmp_path).read(["flows", "links"])
    assert read == {p.key for p in points} and sorted(frames["flows"]["seed"]) == [1, 2]


def test_labels_of_one_kind_by_hand():
    from types import SimpleNamespace

    from vtlab.sweeprows import labels_of_one_kind

    def points(*labels: list) -> list:
        return [SimpleNamespace(labels=lab) for lab in labels]

    assert labels_of_one_kind(points([("a", 1.0)], [("a", 0.5)]))
    assert labels_of_one_kind(points([], []))  # no axes
    assert not labels_of_one_kind(points([("a", 1.0)], [("a", "5%")]))  # float, str
    assert not labels_of_one_kind(points([("a", 1)], [("a", 1.0)]))  # int, float
    assert not labels_of_one_kind(points([("a", None)], [("a", None)]))  # not a kind
    assert labels_of_one_kind(points([("a", True), ("b", "x")], [("a", False), ("b", "y")]))


def test_a_table_made_straight_from_columns_is_from_pandas_of_their_frame():
    """from_columns (plain_columns' typed columns to Arrow, the schema of the first
    table of each key reused) against the reference, pa.Table.from_pandas of the
    frame of the same lists (values, nulls, types, pandas metadata): 200 seeded
    column sets of ints, floats with NaN, bools and texts (a manifest's kinds), each
    made twice; lists plain_columns refuses (a None among texts, ints beyond 64 bits,
    a column mixing kinds, an empty one) are those the store converts from a frame."""
    import random

    import pandas as pd
    import pyarrow as pa

    from vtlab import arrowrows
    from vtlab.rawtables import plain_columns

    makers = {
        "int": lambda r, n: [r.randint(-(2**40), 2**40) for _ in range(n)],
        "float": lambda r, n: [r.choice([0.5, float("nan"), -2.0]) for _ in range(n)],
        "bool": lambda r, n: [r.random() < 0.5 for _ in range(n)],
        "str": lambda r, n: [r.choice(["", "h1", '{"preset": "v2g"}']) for _ in range(n)],
    }
    refused = {
        "text or None": lambda r, n: ["x"] * (n - 1) + [None],
        "ints beyond 64 bits": lambda r, n: [2**64 - 1] * n,
        "ints and floats": lambda r, n: [1] * (n - 1) + [2.5],
    }
    r = random.Random(11)
    arrowrows._COLUMN_SCHEMAS.clear()
    straight = 0
    for case in range(200):
        n = r.randint(1, 12)
        kinds = [r.choice(list(makers)) for _ in range(r.randint(1, 6))]
        lists = {f"c{i}": makers[k](r, n) for i, k in enumerate(kinds)}
        plain = plain_columns(lists)
        assert plain is not None and plain.kinds == tuple(kinds), case
        key = ("test", tuple(lists), plain.kinds)
        straight += key in arrowrows._COLUMN_SCHEMAS
        want = pa.Table.from_pandas(pd.DataFrame(lists), preserve_index=False)
        for _ in range(2):
            got = arrowrows.from_columns(key, plain.data)
            assert got.equals(want, check_metadata=True), case
    assert straight > 50, straight  # keys met again: made from the schema kept
    for name, make in refused.items():
        assert plain_columns({"a": [1, 2], "b": make(r, 2)}) is None, name
    assert plain_columns({"a": []}) is None
    # A process meeting ever new keys keeps the latest 256 (by hand: keys 44..299).
    cache: dict[int, int] = {}
    for k in range(300):
        arrowrows.remember(cache, k, -k)
    assert list(cache) == list(range(44, 300)) and cache[299] == -299


def test_to_arrow_with_a_known_schema_gives_what_from_pandas_gives():
    """A frame whose columns and dtypes were converted before reuses that schema and
    converts only its columns: the table (values, nulls, types, pandas metadata) is
    from_pandas's, for frames of other values under the same key (NaN, missing
    text, other lengths); a frame with an object column is not cached."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    from vtlab import arrowrows

    def frame(n: int, r: np.random.Generator) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "scenario_hash": [f"h{i % 3}" for i in range(n)],
                "seed": np.arange(n, dtype="int64"),
                "big": np.full(n, 2**63 + 5, dtype="uint64"),
                "x": r.choice([0.5, np.nan, -2.0], n),
                "ok": r.choice([True, False], n),
                "cc": pd.array(r.choice(["cubic", "bbr"], n).tolist(), dtype="str"),
                "why": pd.array([None if i % 2 else "rto" for i in range(n)], dtype="str"),
            }
        )

    r = np.random.default_rng(5)
    arrowrows._SCHEMAS.clear()
    for n in (3, 1, 7, 40):
        f = frame(n, r)
        got = arrowrows.to_arrow(f)
        want = pa.Table.from_pandas(f, preserve_index=False)
        assert got.equals(want, check_metadata=True), n
        assert got.to_pandas().equals(want.to_pandas())
    assert len(arrowrows._SCHEMAS) == 1  # one key: the later frames took the fast path
    with_object = pd.DataFrame({"scenario_hash": ["a"], "seed": [1], "o": [None]})
    got = arrowrows.to_arrow(with_object)
    assert got.equals(pa.Table.from_pandas(with_object, preserve_index=False), check_metadata=True)
    assert len(arrowrows._SCHEMAS) == 1
