"""The sweep store loads only what it wrote: every stored file is checked against the
SHA-256 in its run's ``<key>.sha256``, so a flipped bit, a file of the wrong shape or
another run's file is moved aside and simulated again, and a store written without
checksums is refused by name."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from vtlab import _core
from vtlab.runstore import STORE_KEY, StoreError, load_run
from vtlab.sweep import Sweep

#: A run with every kind of stored file: flows, links, sessions and messages.
SESSION_RUN = {
    "preset": "v2g",
    "bytes": "200kB",
    "session": {"duration": "5s"},
    "loss": {"mean_loss": "1%"},
}
TABLES = ("flows", "links", "sessions", "messages")


def _stored(tmp_path: Path) -> tuple[Sweep, str, Path, object]:
    sweep = Sweep(SESSION_RUN, seeds=[1])
    simulated = sweep.run(tmp_path, progress=False)
    return sweep, sweep.points()[0].key, tmp_path / "runs", simulated


def _assert_same_tables(got, want) -> None:
    for name in TABLES:
        pd.testing.assert_frame_equal(
            getattr(got, name).reset_index(drop=True),
            getattr(want, name).reset_index(drop=True),
            check_exact=True,
        )


def _resign(run_dir: Path, key: str, path: Path) -> None:
    """Put ``path``'s new SHA-256 into the run's checksums, as someone rewriting a
    stored file with its checksum would: the wrong shape must then be caught by
    what the file holds, not by its checksum."""
    sums_path = run_dir / f"{key}.sha256"
    sums = json.loads(sums_path.read_text())
    sums["sha256"][path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    sums_path.write_text(json.dumps(sums))


def test_every_flipped_bit_of_a_stored_run_is_moved_aside_never_loaded(tmp_path, capsys):
    """Flip one bit at a time at deterministic places in every file of a stored run
    (about 40 places per file: every k-th byte, bit n mod 8). The expectation is
    derived, not recorded: a flip in a Parquet file changes its bytes, so its
    SHA-256 no longer matches (a collision is out of reach), and the run must be
    moved aside; a flip in the checksums file breaks its JSON, a digest, a file name
    or the key, so the run must be moved aside too. Whatever is loaded must be
    exactly the simulated run. (Before checksums, 16 of 244 such flips loaded with
    changed values and 30 raised a traceback.)"""
    _, key, run_dir, simulated = _stored(tmp_path)
    pristine = {p: p.read_bytes() for p in sorted(run_dir.iterdir()) if p.is_file()}
    assert sorted(p.name[len(key) :] for p in pristine) == [
        ".links.parquet",
        ".messages.parquet",
        ".parquet",
        ".sessions.parquet",
        ".sha256",
    ]
    loaded = load_run(run_dir, key, trace=False)
    assert loaded is not None, "the untouched run loads"
    _assert_same_tables(loaded, simulated)

    quarantine = run_dir / "quarantine"
    flips = moved = 0
    for path, data in pristine.items():
        step = max(1, len(data) // 40)
        for n, at in enumerate(range(0, len(data), step)):
            for p, original in pristine.items():
                p.write_bytes(original)
            flipped = bytearray(data)
            flipped[at] ^= 1 << (n % 8)
            path.write_bytes(bytes(flipped))
            capsys.readouterr()
            got = load_run(run_dir, key, trace=False)
            flips += 1
            where = f"{path.name} byte {at} bit {n % 8}"
            if got is None:
                moved += 1
                err = capsys.readouterr().err
                assert err.startswith("warning: stored run ") and "moved to" in err, where
                assert (quarantine / path.name).exists(), where
                for p in quarantine.iterdir():
                    p.unlink()
            else:
                _assert_same_tables(got, simulated)
    assert flips >= 5 * 40
    assert moved == flips, "every flip changes a checksummed file or the checksums"


@pytest.mark.parametrize(
    ("metadata", "reason"),
    [
        (b"[]", "of the wrong shape (a JSON array, not an object)"),  # before: AttributeError
        (b'"run"', "of the wrong shape (a JSON string, not an object)"),
        (b"3", "of the wrong shape (a JSON number, not an object)"),
        (b"null", "of the wrong shape (a JSON null, not an object)"),
        (b"{", "that is not JSON"),  # before: JSONDecodeError traceback
        (b"\xff\xfe", "that is not JSON"),  # before: UnicodeDecodeError traceback
        (b'{"key": 5}', "the stored run 5, not"),
        ("sessions", "of the wrong shape (sessions, messages)"),
        ("messages", "of the wrong shape (sessions, messages)"),
        ("no form", "of the wrong shape (sessions, messages)"),
    ],
)
def test_run_metadata_of_the_wrong_shape_is_moved_aside(tmp_path, capsys, metadata, reason):
    """A flows file whose run metadata is valid JSON of the wrong shape (with a
    matching checksum) is moved aside and the run simulated again."""
    sweep, key, run_dir, simulated = _stored(tmp_path)
    flows = run_dir / f"{key}.parquet"
    table = pq.read_table(flows)
    inside = json.loads(table.schema.metadata[STORE_KEY])
    if metadata == "sessions":  # a flag that is not a bool
        metadata = json.dumps({**inside, "sessions": "yes"}).encode()
    elif metadata == "messages":  # a form that is not one of the forms
        metadata = json.dumps({**inside, "messages": 7}).encode()
    elif metadata == "no form":  # without the flags: the session files would be missed
        metadata = json.dumps({"key": key}).encode()
    pq.write_table(
        table.replace_schema_metadata({**table.schema.metadata, STORE_KEY: metadata}), flows
    )
    _resign(run_dir, key, flows)

    again = sweep.run(tmp_path, progress=False)
    err = capsys.readouterr().err
    assert f"{key}.parquet" in err and reason in err and "moved to" in err
    assert (run_dir / "quarantine" / flows.name).exists()
    _assert_same_tables(again, simulated)
    assert load_run(run_dir, key, trace=False) is not None, "stored again, properly"


@pytest.mark.parametrize(
    ("checksums", "reason"),
    [
        ("[]", "checksums of the wrong shape (a JSON array, not an object)"),
        ('{"key": "KEY", "sha256": []}', "checksums of the wrong shape (no sha256 object)"),
        ('{"key": "KEY", "sha256": {}}', "fails its checksum"),
        ('{"key": "other", "sha256": {}}', "the stored run 'other', not"),
        ("{", "checksums that is not JSON"),
    ],
)
def test_checksums_of_the_wrong_shape_are_moved_aside(tmp_path, capsys, checksums, reason):
    sweep, key, run_dir, simulated = _stored(tmp_path)
    (run_dir / f"{key}.sha256").write_text(checksums.replace("KEY", key))
    again = sweep.run(tmp_path, progress=False)
    err = capsys.readouterr().err
    assert f"{key}.sha256" in err and reason in err
    _assert_same_tables(again, simulated)


def test_a_file_without_its_columns_is_moved_aside(tmp_path, capsys):
    sweep, key, run_dir, simulated = _stored(tmp_path)
    links = run_dir / f"{key}.links.parquet"
    table = pq.read_table(links)
    pq.write_table(table.drop_columns(["packets_carried"]), links)
    _resign(run_dir, key, links)
    again = sweep.run(tmp_path, progress=False)
    assert "without the column(s) packets_carried" in capsys.readouterr().err
    _assert_same_tables(again, simulated)


def test_a_store_without_checksums_is_refused_by_name(tmp_path, monkeypatch):
    """Runs stored by an earlier vtlab have no checksums: the store is refused,
    naming it and the run, before anything is simulated or moved."""
    from typer.testing import CliRunner

    from vtlab.cli.app import app

    sweep, key, run_dir, _ = _stored(tmp_path)
    (run_dir / f"{key}.sha256").unlink()
    before = sorted(p.name for p in run_dir.iterdir())

    def no_run(*args, **kwargs):
        raise AssertionError("nothing may be simulated")

    monkeypatch.setattr(_core, "run", no_run)
    with pytest.raises(StoreError, match="stored without checksums") as caught:
        sweep.run(tmp_path, progress=False)
    assert str(caught.value).startswith(f"{tmp_path}: run {key} ")
    assert sorted(p.name for p in run_dir.iterdir()) == before

    store = tmp_path / "cli"
    store.mkdir()
    (store / "runs").mkdir()
    for p in run_dir.glob(f"{key}*"):
        (store / "runs" / p.name).write_bytes(p.read_bytes())
    r = CliRunner().invoke(
        app,
        ["sweep", "v2g", "--bytes", "200kB", "--set", "session.duration=5s", "--loss", "1%"]
        + ["--runs", "1", "--store", str(store), "-q"],
    )
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"error: --store: {store}: run {key} was stored without checksums")
    assert len(r.stderr.strip().splitlines()) == 1
