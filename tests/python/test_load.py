"""Results as data (issue 27 item 3): ``vtlab.load`` / ``vtlab load`` read a sweep
store's tables, result files carry their scenario, ``expand`` output runs again, and
``--out`` writes CSV. Expected rows come from direct ``vtlab.run`` calls, not from the
code under test."""

from __future__ import annotations

import glob
import hashlib
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import vtlab
from conftest import assert_usage_error
from vtlab.api import FLOW_COLUMNS, LINK_COLUMNS
from vtlab.results import TABLE_GLOBS, file_scenario, load
from vtlab.runstore import STORE_KEY, StoredRunError, StoreError
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


def test_each_table_has_its_own_glob(store: Path) -> None:
    runs = len(CCS) * len(LOSSES) * len(SEEDS)
    flows_files = glob.glob(str(store / "runs" / TABLE_GLOBS["flows"]))
    links_files = glob.glob(str(store / "runs" / TABLE_GLOBS["links"]))
    assert len(flows_files) == runs and len(links_files) == runs
    assert not set(flows_files) & set(links_files)
    read = pd.concat([pd.read_parquet(f) for f in flows_files], ignore_index=True)
    pd.testing.assert_frame_equal(_sorted(read, FLOW_COLUMNS), _sorted(load(store), FLOW_COLUMNS))


def test_stored_files_carry_the_scenario_that_runs_again(store: Path) -> None:
    for path in glob.glob(str(store / "runs" / "*.parquet")):
        inside = json.loads(pq.read_schema(path).metadata[STORE_KEY])
        rows = pq.read_table(path).to_pandas()
        # The scenario hash is the first 16 hex digits of the SHA-256 of the resolved
        # scenario's canonical JSON (docs/scenarios.md), computed here independently.
        digest = hashlib.sha256(inside["scenario"].encode()).hexdigest()[:16]
        assert set(rows["scenario_hash"]) == {digest}
    first = sorted(glob.glob(str(store / "runs" / TABLE_GLOBS["flows"])))[0]
    stored = pd.read_parquet(first)
    again = vtlab.run(file_scenario(first), seed=int(stored["seed"][0]))
    pd.testing.assert_frame_equal(stored[list(FLOW_COLUMNS)], again.flows[list(FLOW_COLUMNS)])


def test_load_verifies_each_file(store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    (copy / "runs").mkdir(parents=True)
    for f in (store / "runs").iterdir():
        (copy / "runs" / f.name).write_bytes(f.read_bytes())
    victim = sorted((copy / "runs").glob("*.links.parquet"))[0]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(data))
    assert len(load(copy)) == len(load(store))  # the flows files are intact
    with pytest.raises(StoredRunError, match="fails its checksum"):
        load(copy, "links")
    assert victim.exists()  # reading moves nothing aside


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
        load(store, "events")
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
