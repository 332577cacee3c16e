"""The Python API against the compiled core: run, run_many, Result, Parquet."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import vtlab
from conftest import SMALL, V2G_IDEAL_GOODPUT, V2G_NS3_FRAGMENTED_GOODPUT
from vtlab import Result, Scenario, ScenarioError
from vtlab.api import _LAZY, FLOW_COLUMNS, LINK_COLUMNS, MAX_SEED, TRACE_COLUMNS

LOSSY = {"preset": "v2g", "bytes": SMALL, "loss": {"mean_loss": "5%"}}


@pytest.fixture(scope="module")
def traced() -> Result:
    return vtlab.run({"preset": "v2g", "bytes": SMALL}, seed=7, trace=True)


@pytest.fixture(scope="module")
def lossy_many() -> Result:
    return vtlab.run_many(LOSSY, seeds=[1, 2, 3], progress=False)


def test_run_returns_contract_frames(traced: Result) -> None:
    assert isinstance(traced.flows, pd.DataFrame)
    assert isinstance(traced.links, pd.DataFrame)
    assert isinstance(traced.traces, pd.DataFrame)
    assert list(traced.flows.columns[: len(FLOW_COLUMNS)]) == list(FLOW_COLUMNS)
    assert list(traced.links.columns[: len(LINK_COLUMNS)]) == list(LINK_COLUMNS)
    assert set(TRACE_COLUMNS) <= set(traced.traces.columns)
    assert len(traced.flows) >= 1 and len(traced.links) >= 1 and len(traced.traces) > 1
    assert (traced.flows["seed"] == 7).all() and (traced.traces["seed"] == 7).all()
    meta = traced.meta
    assert {"scenario_hash", "seed", "version", "events", "packets", "wall_s", "sim_time_s"} <= set(
        meta
    )
    assert meta["seed"] == 7 and meta["version"] == vtlab.__version__
    assert (traced.flows["scenario_hash"] == meta["scenario_hash"]).all()
    assert traced.flows["completed"].all()
    assert (traced.flows["bytes"] == 2_000_000).all()


def test_run_without_trace_has_no_traces() -> None:
    res = vtlab.run({"preset": "v2g", "bytes": "1MB"})
    assert res.traces is None
    assert res.meta["seed"] == 1


def test_loss_free_goodput_matches_link_rate() -> None:
    spec = {"preset": "v2g", "bytes": "5MB", "loss": {"model": "none"}}
    res = vtlab.run({**spec, "tcp": {"timestamps": False}}, seed=1)
    goodput = res.flows["goodput_bps"].iloc[0]
    assert goodput == pytest.approx(V2G_IDEAL_GOODPUT, rel=0.01)
    assert res.flows["retransmissions"].iloc[0] == 0
    assert res.flows["drops_link_error"].iloc[0] == 0
    # ns-3's default timestamps fragment every segment: a lower bound.
    fragmented = vtlab.run(spec, seed=1).flows["goodput_bps"].iloc[0]
    assert fragmented == pytest.approx(V2G_NS3_FRAGMENTED_GOODPUT, rel=0.01)


def test_same_seed_is_deterministic(lossy_many: Result) -> None:
    again = vtlab.run(LOSSY, seed=2)
    first = lossy_many.flows[lossy_many.flows["seed"] == 2].reset_index(drop=True)
    pd.testing.assert_frame_equal(first, again.flows)
    links = lossy_many.links[lossy_many.links["seed"] == 2].reset_index(drop=True)
    pd.testing.assert_frame_equal(links, again.links)
    assert again.meta["events"] == lossy_many.meta["runs"][1]["events"]


def test_different_seeds_differ(lossy_many: Result) -> None:
    cols = [c for c in FLOW_COLUMNS if c != "seed"]
    rows = {tuple(r) for r in lossy_many.flows[cols].itertuples(index=False)}
    assert len(rows) == 3


def test_run_many_meta(lossy_many: Result) -> None:
    meta = lossy_many.meta
    assert meta["seeds"] == [1, 2, 3]
    assert len(meta["runs"]) == 3
    assert meta["events"] == sum(r["events"] for r in meta["runs"])
    assert lossy_many.flows["seed"].tolist() == [1, 2, 3]  # one flow per run in v2g


def test_run_many_streams_results() -> None:
    seen: list[int] = []
    vtlab.run_many(
        {"preset": "v2g", "bytes": "1MB"},
        seeds=range(3, 5),
        progress=True,
        on_result=lambda r: seen.append(r.meta["seed"]),
    )
    assert seen == [3, 4]


@pytest.mark.parametrize("seed", [-1, MAX_SEED + 1])
def test_bad_seed_rejected(seed: int) -> None:
    with pytest.raises(ValueError, match="seed"):
        vtlab.run({"preset": "v2g", "bytes": "1MB"}, seed=seed)
    with pytest.raises(ValueError, match="seed"):
        vtlab.run_many({"preset": "v2g", "bytes": "1MB"}, seeds=[1, seed])


def test_run_many_in_threads_gives_the_rows_of_one_job_in_the_seeds_order() -> None:
    seen: list[int] = []
    one = vtlab.run_many({"preset": "v2g", "bytes": SMALL}, seeds=[3, 1, 2], progress=False)
    two = vtlab.run_many(
        {"preset": "v2g", "bytes": SMALL},
        seeds=[3, 1, 2],
        progress=False,
        jobs=2,
        on_result=lambda r: seen.append(int(r.meta["seed"])),
    )
    assert seen == [3, 1, 2]
    pd.testing.assert_frame_equal(one.flows, two.flows)
    pd.testing.assert_frame_equal(one.links, two.links)
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        vtlab.run_many({"preset": "v2g"}, seeds=[1], jobs=0)
    with pytest.raises(ValueError, match="trace_to"):
        vtlab.run_many({"preset": "v2g"}, seeds=[1, 2], jobs=2, trace=True, trace_to=print)


def test_run_many_refuses_repeated_seeds_before_running(monkeypatch) -> None:
    """A repeated seed counted its run twice in every mean and interval."""

    def no_run(*args, **kwargs):
        raise AssertionError("nothing may be simulated")

    monkeypatch.setattr(vtlab._core, "run", no_run)
    with pytest.raises(ValueError, match="^seeds: seed 2 is given more than once"):
        vtlab.run_many({"preset": "v2g", "bytes": "1MB"}, seeds=[2, 1, 2], progress=False)
    with pytest.raises(ValueError, match="^seeds: needs at least one seed"):
        vtlab.run_many({"preset": "v2g", "bytes": "1MB"}, seeds=[], progress=False)


@pytest.mark.parametrize("seed", [1.5, True, "3"])
def test_non_integer_seed_rejected(seed: object) -> None:
    with pytest.raises(TypeError, match="seed"):
        vtlab.run({"preset": "v2g"}, seed=seed)  # type: ignore[arg-type]


def test_largest_seed_accepted() -> None:
    res = vtlab.run({"preset": "v2g", "bytes": "1MB"}, seed=MAX_SEED)
    assert int(res.flows["seed"].iloc[0]) == MAX_SEED


def test_invalid_spec_raises_scenario_error() -> None:
    with pytest.raises(ScenarioError, match=r"tcp\.cc"):
        vtlab.run({"preset": "v2g", "tcp": {"cc": "foo"}})
    with pytest.raises(ScenarioError, match=r"loss\.mean_loss"):
        vtlab.run(Scenario.preset("v2g", loss={"mean_loss": 1.5}))


def test_run_accepts_all_scenario_forms(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('preset = "v2g"\nbytes = "1MB"\n')
    a = vtlab.run(path).flows
    b = vtlab.run(str(path)).flows
    c = vtlab.run(Scenario.from_toml(path)).flows
    d = vtlab.run({"preset": "v2g", "bytes": "1MB"}).flows
    for other in (b, c, d):
        pd.testing.assert_frame_equal(a, other)


def test_to_parquet_round_trip(tmp_path: Path, traced: Result) -> None:
    out = tmp_path / "res.parquet"
    written = traced.to_parquet(out)
    assert written == {
        "flows": out,
        "links": tmp_path / "res.links.parquet",
        "traces": tmp_path / "res.traces.parquet",
    }
    table = pq.read_table(out)
    assert {"scenario_hash", "seed", "version"} <= set(table.column_names)
    back = Result.from_parquet(out)
    pd.testing.assert_frame_equal(back.flows, traced.flows, check_dtype=False)
    pd.testing.assert_frame_equal(back.links, traced.links, check_dtype=False)
    assert back.traces is not None and len(back.traces) == len(traced.traces)
    assert back.meta["scenario_hash"] == traced.meta["scenario_hash"]


def test_result_summarize(lossy_many: Result) -> None:
    out = lossy_many.summarize(metrics=["goodput_bps"])
    assert out.iloc[0]["n"] == 3
    assert out.iloc[0]["mean"] == pytest.approx(lossy_many.flows["goodput_bps"].mean())


def test_scenario_hash_matches_rows(traced: Result) -> None:
    sc = Scenario.preset("v2g", bytes=SMALL)
    assert sc.hash() == traced.meta["scenario_hash"]
    assert sc.hash() != Scenario.preset("v2g", bytes="1MB").hash()
    # the hash is of the resolved scenario, so equivalent specs share it
    assert sc.hash() == Scenario.preset("v2g", bytes=2_000_000).hash()


def test_column_lists_and_docs_come_from_the_one_declaration():
    from pathlib import Path

    from vtlab import _core, schema

    declared = _core.schema()
    assert tuple(c["name"] for c in declared["flows"]) == FLOW_COLUMNS
    assert TRACE_COLUMNS[:3] == ("scenario_hash", "seed", "version")
    # A name means one thing: FlightSize and the SACK pipe are separate columns.
    assert {"flight_size_bytes", "pipe_bytes"} <= set(TRACE_COLUMNS)
    assert "bytes_in_flight" not in TRACE_COLUMNS
    docs = Path(__file__).parents[2] / "docs" / "metrics.md"
    assert docs.read_text() == schema.markdown(), "regenerate: python -m vtlab.schema"


def test_a_threads_reused_plan_changes_no_run():
    """The core keeps each thread's last plan for the next run of the same spec text:
    A seed 1, then B, then A seeds 2 and 1 again (A's plan planned anew after B, then
    reused) give for A exactly what fresh runs in fresh threads give, and a bad spec
    between them is still refused."""
    import threading

    from vtlab import _core

    a = Scenario({"preset": "v2g", "bytes": "300kB", "loss": {"mean_loss": "2%"}}).to_json()
    b = Scenario({"preset": "v2g", "bytes": "200kB", "tcp": {"cc": "cubic"}}).to_json()

    def flows(spec: str, seed: int) -> list:
        return list(Result.from_core(_core.run(spec, seed, False)).flows.itertuples(index=False))

    def fresh(spec: str, seed: int) -> list:
        out: list = []
        t = threading.Thread(target=lambda: out.append(flows(spec, seed)))
        t.start()
        t.join()
        return out[0]

    first = flows(a, 1)
    assert flows(b, 1) == fresh(b, 1) != first
    with pytest.raises(ScenarioError):
        _core.run(a.replace('"300kB"', '"-1kB"'), 1, False)
    second, again = flows(a, 2), flows(a, 1)
    assert first == again == fresh(a, 1)
    assert second == fresh(a, 2) != first


def test_a_column_without_building_the_table_is_the_records_column():
    """Result.column gives what the records (or the built frame) give, from the
    core's columns of one run, of run_many's parts, and of a built table; [] for a
    missing column or a table a run does not have."""
    spec = {"preset": "v2g", "bytes": "20kB"}
    spec["session"] = {"profile": "iso15118-2-dc", "duration": "2s"}
    for res in (vtlab.run(spec, seed=3), vtlab.run_many(spec, [1, 2, 5], progress=False)):
        want_flows = [r["goodput_bps"] for r in res.flow_records()]
        want_sessions = [r["abort_reason"] for r in res.session_records()]
        assert res.column("flows", "goodput_bps") == want_flows and len(want_flows) > 0
        assert res.column("sessions", "abort_reason") == want_sessions and want_sessions
        assert res.column("flows", "no_such_column") == []
        assert res.column("traces", "cwnd") == []  # not recorded
        assert res._flows is _LAZY  # read without building the table
        built = res.flows["goodput_bps"].tolist()
        assert res.column("flows", "goodput_bps") == built == want_flows
