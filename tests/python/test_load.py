"""Results as data (issue 27 item 3): ``vtlab.load`` / ``vtlab load`` read a sweep
store's tables, result files carry their scenario, ``expand`` output runs again, and
``--out`` writes CSV. Expected rows come from direct ``vtlab.run`` calls, not from the
code under test."""

from __future__ import annotations

import glob
import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import vtlab
from conftest import assert_usage_error
from vtlab.api import FLOW_COLUMNS, LINK_COLUMNS
from vtlab.results import file_scenario, load, scenario_of
from vtlab.runstore import StoredRunError, StoreError
from vtlab.sweep import Axis, Sweep

BASE = {"preset": "v2g", "bytes": "200KB"}
CCS = ("cubic", "newreno")
LOSSES = (0.0, 0.05)
SEEDS = (1, 2)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2 × 2 grid × 2 seeds store (8 runs)."""
    root = tmp_path_factory.mktemp("store")
    axes = [
        Axis.values("tcp.cc", list(CCS), name="algo"),
        Axis.values("loss.mean_loss", list(LOSSES), name="loss"),
    ]
    Sweep(BASE, axes, seeds=SEEDS).run(root, jobs=1, progress=False)
    return root


def _direct(cc: str, loss: float, seed: int) -> vtlab.Result:
    spec = {**BASE, "tcp": {"cc": cc}, "loss": {"mean_loss": loss}}
    return vtlab.run(spec, seed=seed)


def _sorted(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    keys = [c for c in ("scenario_hash", "seed", "flow", "link", "direction") if c in columns]
    return frame[list(columns)].sort_values(keys).reset_index(drop=True)


def test_load_gives_each_point_the_rows_of_a_direct_run(store: Path) -> None:
    flows = load(store)
    assert len(flows) == len(CCS) * len(LOSSES) * len(SEEDS)  # one flow per run (v2g)
    for cc in CCS:
        for loss in LOSSES:
            got = load(store, algo=cc, loss=loss)
            assert sorted(got["seed"]) == list(SEEDS)
            assert set(got["algo"]) == {cc} and set(got["loss"]) == {loss}
            want = pd.concat([_direct(cc, loss, s).flows for s in SEEDS], ignore_index=True)
            pd.testing.assert_frame_equal(
                _sorted(got, FLOW_COLUMNS), _sorted(want, FLOW_COLUMNS), check_dtype=False
            )
    links = load(store, "links", where={"algo": "newreno", "loss": 0.05})
    want = pd.concat([_direct("newreno", 0.05, s).links for s in SEEDS], ignore_index=True)
    pd.testing.assert_frame_equal(
        _sorted(links, LINK_COLUMNS), _sorted(want, LINK_COLUMNS), check_dtype=False
    )
    # A list matches any of its values; v2g without a session profile has no sessions.
    assert len(load(store, algo=list(CCS), loss=[0.05])) == len(CCS) * len(SEEDS)
    assert load(store, "sessions").empty


def test_each_table_is_a_folder_that_parquet_readers_read_directly(store: Path) -> None:
    """pandas reads a table's folder (Arrow's dataset discovery, as polars and DuckDB
    read ``DIR/flows/*.parquet``): the same rows as load, and no other table's."""
    import pyarrow.dataset as ds

    runs = len(CCS) * len(LOSSES) * len(SEEDS)
    flows = pd.read_parquet(store / "flows")
    links = ds.dataset(store / "links", format="parquet").to_table().to_pandas()
    assert len(flows) == runs  # one flow per v2g run
    assert set(flows.columns) >= set(FLOW_COLUMNS) and "link" not in flows.columns
    assert set(links.columns) >= set(LINK_COLUMNS)
    pd.testing.assert_frame_equal(_sorted(flows, FLOW_COLUMNS), _sorted(load(store), FLOW_COLUMNS))
    globbed = pd.concat(map(pd.read_parquet, glob.glob(str(store / "links" / "*.parquet"))))
    assert len(globbed) == len(links) == len(load(store, "links"))


def test_the_runs_table_carries_each_run_s_scenario_that_runs_again(store: Path) -> None:
    runs = pd.read_parquet(store / "runs")
    assert sorted(zip(runs["scenario_hash"], runs["seed"], strict=True)) == sorted(
        zip(load(store)["scenario_hash"], load(store)["seed"], strict=True)
    )
    for row in runs.itertuples():
        # The scenario hash is the first 16 hex digits of the SHA-256 of the resolved
        # scenario's canonical JSON (docs/scenarios.md), computed here independently.
        assert hashlib.sha256(row.scenario.encode()).hexdigest()[:16] == row.scenario_hash
        assert row.run_key.startswith(f"{row.scenario_hash}-{row.seed}-")
    first = runs.iloc[0]
    again = vtlab.run(scenario_of(store, first["run_key"]), seed=int(first["seed"]))
    stored = load(store, seed=int(first["seed"]), scenario_hash=first["scenario_hash"])
    pd.testing.assert_frame_equal(
        stored[list(FLOW_COLUMNS)], again.flows[list(FLOW_COLUMNS)], check_dtype=False
    )
    assert len(load(store, "runs", seed=2)) == len(CCS) * len(LOSSES)


def test_load_verifies_each_part(store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(store, copy)
    (victim,) = (copy / "links").glob("part-*.parquet")
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(data))
    assert len(load(copy)) == len(load(store))  # the flows part is intact
    with pytest.raises(StoredRunError, match="fails its checksum") as raised:
        load(copy, "links")
    assert str(victim) in str(raised.value)
    assert victim.exists()  # reading moves nothing aside


def test_an_old_layout_store_is_refused_in_one_line_and_converted(tmp_path: Path, cli) -> None:
    """A store of the earlier layout (one file pair per run, tests/python/data/store-v1:
    two cc × two seeds of 50 kB v2g, written by vtlab before the columnar store)."""
    old = tmp_path / "old"
    shutil.copytree(Path(__file__).parent / "data" / "store-v1", old)
    # The rows as the old files hold them, read directly (no vtlab code).
    want = pd.concat(
        [pd.read_parquet(p) for p in sorted((old / "runs").glob("*[0-9a-f].parquet"))],
        ignore_index=True,
    )
    with pytest.raises(StoreError, match="earlier layout") as raised:
        load(old)
    assert f"vtlab load {old} --convert" in str(raised.value)
    assert_usage_error(cli("load", str(old)), "STORE", "--convert")
    done = cli("load", str(old), "--convert")
    assert done.exit_code == 0 and "converted 4 runs" in done.stderr
    got = load(old)
    pd.testing.assert_frame_equal(
        _sorted(got, ("algo", *FLOW_COLUMNS)), _sorted(want, ("algo", *FLOW_COLUMNS))
    )
    old_links = [pd.read_parquet(p) for p in (old / "runs.v1").glob("*.links.parquet")]
    assert len(load(old, "runs")) == 4 and len(load(old, "links")) == sum(map(len, old_links))
    assert (old / "runs.v1").is_dir()
    # Converting again (as after an interrupted conversion): nothing is converted twice.
    again = cli("load", str(old), "--convert")
    assert again.exit_code == 0 and "converted 0 runs" in again.stderr
    assert len(load(old)) == 4
    assert_usage_error(cli("load", str(tmp_path / "x"), "--convert"), "STORE", "earlier layout")


def test_not_a_store(tmp_path: Path, cli) -> None:
    with pytest.raises(StoreError, match="not a sweep store"):
        load(tmp_path)
    with pytest.raises(StoreError, match="not a folder"):
        load(tmp_path / "missing")
    assert_usage_error(cli("load", str(tmp_path)), "STORE", "not a sweep store")


def test_load_refuses_unknown_tables_and_axes(store: Path, cli) -> None:
    with pytest.raises(ValueError, match="neither an axis of the store"):
        load(store, tcp_cc="cubic")  # the axis is named algo
    # Any column filters too: cc is the flow column the algo axis sets.
    assert sorted(load(store, cc="cubic", seed=2)["loss"]) == sorted(LOSSES)
    with pytest.raises(ValueError, match="table"):
        load(store, "packets")
    assert load(store, "events").empty  # a sweep without events stores none
    assert_usage_error(cli("load", str(store), "--where", "tcp_cc=cubic"), "--where", "algo")
    assert_usage_error(cli("load", str(store), "--table", "x"), "--table")
    assert_usage_error(cli("load", str(store), "--where", "algo"), "--where", "AXIS=VALUE")
    assert_usage_error(cli("load", str(store), "--format", "parquet"), "--format")


@pytest.mark.parametrize("suffix", [".csv", ".json", ".parquet"])
def test_cli_load_writes_the_filtered_rows(store: Path, tmp_path: Path, cli, suffix: str) -> None:
    out = tmp_path / f"rows{suffix}"
    result = cli(
        "load", str(store), "--where", "algo=cubic", "--where", "loss=0.05", "-o", str(out)
    )
    assert result.exit_code == 0, result.stderr
    read = {
        ".csv": pd.read_csv,
        ".json": lambda p: pd.read_json(p, lines=True),
        ".parquet": pd.read_parquet,
    }[suffix](out)
    want = pd.concat([_direct("cubic", 0.05, s).flows for s in SEEDS], ignore_index=True)
    assert sorted(read["seed"]) == list(SEEDS)
    for column in ("goodput_bps", "retransmissions", "segments_sent"):
        assert sorted(read[column]) == sorted(want[column])


def test_run_out_parquet_carries_the_scenario(tmp_path: Path, cli) -> None:
    out = tmp_path / "r.parquet"
    args = ["run", "v2g", "--bytes", "200KB", "--loss", "0.05", "--cc", "bbr", "-n", "2"]
    assert cli(*args, "-o", str(out), "-q").exit_code == 0
    written = pd.read_parquet(out)
    for path in (out, tmp_path / "r.links.parquet"):
        raw = json.loads(pq.read_schema(path).metadata[b"vtlab.scenario"])
        digest = hashlib.sha256(raw["scenario"].encode()).hexdigest()[:16]
        assert set(written["scenario_hash"]) == {digest}
    sc = file_scenario(out)
    again = pd.concat([vtlab.run(sc, seed=s).flows for s in (1, 2)], ignore_index=True)
    pd.testing.assert_frame_equal(written[list(FLOW_COLUMNS)], again[list(FLOW_COLUMNS)])


def test_run_out_csv_holds_the_rows_of_a_direct_run(tmp_path: Path, cli) -> None:
    out = tmp_path / "r.csv"
    args = ["run", "v2g", "--bytes", "200KB", "--loss", "0.05", "-n", "2", "-o", str(out), "-q"]
    assert cli(*args).exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.links.csv"]
    spec = {**BASE, "loss": {"mean_loss": 0.05}}
    runs = [vtlab.run(spec, seed=s) for s in (1, 2)]
    flows, links = pd.read_csv(out), pd.read_csv(tmp_path / "r.links.csv")
    want = pd.concat([r.flows for r in runs], ignore_index=True)
    for column in ("seed", "goodput_bps", "completion_s", "retransmissions", "rtt_p99_s"):
        assert list(flows[column]) == list(want[column])  # CSV keeps floats exactly
    assert len(links) == sum(len(r.links) for r in runs)
    assert_usage_error(cli("run", "v2g", "-o", str(tmp_path / "r.txt")), "--out", ".csv")


@pytest.mark.parametrize("fmt", ["json", "toml"])
def test_expand_then_run_gives_the_same_rows(tmp_path: Path, cli, fmt: str) -> None:
    options = ["v2g", "--bytes", "200KB", "--loss", "0.05", "--cc", "cubic"]
    expanded = cli("expand", *options, "--format", fmt)
    assert expanded.exit_code == 0, expanded.stderr
    scenario = tmp_path / f"resolved.{fmt}"
    scenario.write_text(expanded.stdout)
    direct, via = tmp_path / "direct.parquet", tmp_path / "via.parquet"
    assert cli("run", *options, "-n", "2", "-o", str(direct), "-q").exit_code == 0
    result = cli("run", "--scenario", str(scenario), "-n", "2", "-o", str(via), "-q")
    assert result.exit_code == 0, result.stderr
    pd.testing.assert_frame_equal(pd.read_parquet(direct), pd.read_parquet(via))
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "direct.links.parquet"),
        pd.read_parquet(tmp_path / "via.links.parquet"),
    )


def test_a_json_spec_file_runs(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(BASE))
    assert vtlab.run(str(path)).flows.equals(vtlab.run(BASE).flows)
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(vtlab.ScenarioError, match="JSON syntax error"):
        vtlab.Scenario.from_toml(bad)
    bad.write_text("[1]")
    with pytest.raises(vtlab.ScenarioError, match="JSON object"):
        vtlab.Scenario.from_toml(bad)


def test_sweep_out_csv_has_the_axis_columns(tmp_path: Path, cli) -> None:
    out = tmp_path / "s.csv"
    args = ["sweep", "v2g", "--bytes", "200KB", "--axis", "algo:tcp.cc=cubic,newreno"]
    assert cli(*args, "-n", "1", "-j", "1", "-o", str(out), "-q").exit_code == 0
    flows = pd.read_csv(out)
    assert sorted(flows["algo"]) == sorted(CCS)
    direct = {cc: vtlab.run({**BASE, "tcp": {"cc": cc}}, seed=1) for cc in CCS}
    for cc in CCS:
        row = flows[flows["algo"] == cc]
        assert list(row["goodput_bps"]) == list(direct[cc].flows["goodput_bps"])
        assert list(row["scenario_hash"]) == list(direct[cc].flows["scenario_hash"])
    links = pd.read_csv(tmp_path / "s.links.csv")
    assert len(links) == sum(len(r.links) for r in direct.values())


def test_a_scenario_over_the_bound_is_not_carried(tmp_path: Path) -> None:
    from vtlab.api import MAX_CARRIED_SCENARIO_BYTES, scenario_metadata

    # 300 000 capacity-trace lines resolve to well over 1 MiB of JSON (at least 3
    # digits and a separator each); the spec only names the file.
    trace = tmp_path / "cell.down"
    trace.write_text("\n".join(str(t) for t in range(1, 900_001, 3)) + "\n")
    spec = {"preset": "lte-cabin", "capacity_down": {"trace": str(trace)}}
    carried = scenario_metadata(vtlab.Scenario(spec))
    assert json.loads(carried["spec"]) == spec and "scenario" not in carried
    assert len(vtlab.Scenario(spec).expanded_json()) > MAX_CARRIED_SCENARIO_BYTES


def test_a_sweep_with_events_stores_them_and_load_reads_them(tmp_path: Path, monkeypatch) -> None:
    """``Sweep(events=True)`` puts every run's typed events into the store's events
    table: per point the rows of a direct ``vtlab.run(..., events=True)``, each with
    its axis value; a second sweep reads them back without simulating; a store made
    without events is refused by a sweep that wants them (it would lack them)."""
    from vtlab.api import EVENT_COLUMNS

    axes = [Axis.values("loss.mean_loss", [0.05], name="loss")]
    Sweep(BASE, axes, seeds=SEEDS, events=True).run(tmp_path / "ev", jobs=1, progress=False)
    got = load(tmp_path / "ev", "events", loss=0.05)
    assert set(got["loss"]) == {0.05}
    spec = {**BASE, "loss": {"mean_loss": 0.05}}
    want = pd.concat([vtlab.run(spec, seed=s, events=True).events for s in SEEDS])
    assert len(want) > 0  # 5 % loss over 200 KB: drops and recoveries
    cols = [c for c in EVENT_COLUMNS if c != "detail"]
    key = ["seed", "time_ns", "flow", "event"]
    pd.testing.assert_frame_equal(
        got[cols].sort_values(key, kind="stable").reset_index(drop=True),
        want[cols].sort_values(key, kind="stable").reset_index(drop=True),
        check_dtype=False,
    )

    def no_simulation(*args: object, **kwargs: object) -> None:
        raise AssertionError("a stored run was simulated again")

    monkeypatch.setattr("vtlab.sweep._core.run", no_simulation)
    again = Sweep(BASE, axes, seeds=SEEDS, events=True).run(tmp_path / "ev", progress=False)
    assert len(again.events) == len(want)
    monkeypatch.undo()
    Sweep(BASE, axes, seeds=SEEDS).run(tmp_path / "plain", jobs=1, progress=False)
    with pytest.raises(StoreError, match="without events"):
        Sweep(BASE, axes, seeds=SEEDS, events=True).run(tmp_path / "plain", progress=False)


def test_cli_sweep_events_then_load_the_events_table(tmp_path: Path, cli) -> None:
    """``vtlab sweep --events`` then ``vtlab load --table events``: the events of a
    direct run with the same seed, labelled with the axis."""
    store = tmp_path / "s"
    done = cli(
        "sweep",
        "v2g",
        "--bytes",
        "200KB",
        "--axis",
        "p:loss.mean_loss=5%",
        "--runs",
        "1",
        "--events",
        "--store",
        str(store),
        "-q",
    )
    assert done.exit_code == 0, done.stderr
    out = tmp_path / "events.csv"
    done = cli("load", str(store), "--table", "events", "--where", "p=5%", "-o", str(out))
    assert done.exit_code == 0, done.stderr
    read = pd.read_csv(out)
    want = vtlab.run({**BASE, "loss": {"mean_loss": "5%"}}, seed=1, events=True).events
    assert set(read["p"]) == {"5%"} and len(read) == len(want)
    assert sorted(read["time_ns"]) == sorted(want["time_ns"])
