"""Cross-validation against ns-3, the bulk-transfer family (vtlab.validation.v2g,
vtlab.validation.station, vtlab.ns3, vtlab.cli.validate): statistics, verdicts,
rankings, the report, the run cache, the scenario translation and the on-demand
build.  The end-to-end test runs only when the ns3 wheel and g++ are installed."""

from __future__ import annotations

import json
import math
import os
import signal
import stat
import sys
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from conftest import requires_ns3, requires_preset_qdisc
from vtlab import Scenario, _core
from vtlab.cli import validate as cli_validate
from vtlab.ns3 import process as ns3proc
from vtlab.ns3 import program as ns3prog
from vtlab.ns3 import v2g as ns3v2g
from vtlab.ns3.cc import ns3_type_id
from vtlab.validation import speed, v2g
from vtlab.validation.cache import RunCache, store_runs
from vtlab.validation.v2g import Grid, Task, agreement_table, rankings
from vtlab.validation.v2g_report import write_report
from vtlab.validation.verdict import mean_ci, ratio_ci, spearman, verdict


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    a = typer.Typer()

    @a.command()
    def noop() -> None:  # a second command keeps `validate` a subcommand
        pass

    cli_validate.register(a)
    return a


def invoke(app: typer.Typer, *args: str) -> Any:
    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        runner = CliRunner()
    return runner.invoke(app, ["validate", *args], catch_exceptions=True)


# -- statistics, verdicts, rankings ------------------------------------------------------


def test_mean_ci_student_t():
    mean, ci, n = mean_ci([1.0, 2.0, 3.0])
    assert (mean, n) == (2.0, 3)
    assert ci == pytest.approx(4.302653 * 1.0 / math.sqrt(3), rel=1e-6)
    m1, c1, n1 = mean_ci([5.0])
    assert (m1, n1) == (5.0, 1) and math.isnan(c1)
    m0, c0, n0 = mean_ci([])
    assert n0 == 0 and math.isnan(m0) and math.isnan(c0)
    assert mean_ci([1.0, float("nan"), 3.0])[:1] == (2.0,)


@pytest.mark.parametrize(
    ("ratio", "contains_one", "expected"),
    [
        (1.10, False, "agree"),  # +10 % exactly: within tolerance, CI irrelevant
        (0.90, False, "agree"),  # -10 %
        (1.11, True, "consistent"),
        (0.80, True, "consistent"),  # -20 % exactly
        (1.11, False, "differs"),  # outside ±10 % and 1 is outside the CI
        (1.21, True, "differs"),  # outside ±20 %: the CI cannot rescue it
        (0.5, True, "differs"),
        (math.nan, True, "missing"),
    ],
)
def test_verdict(ratio, contains_one, expected):
    assert verdict(ratio, contains_one) == expected


# t quantiles from a printed Student t table (0.975, two-sided 95 %): df 4 -> 2.776445,
# df 2 -> 4.302653.
T975_DF4 = 2.776445105


def test_ratio_ci_fieller_by_hand():
    # a = 12 (11, 12, 13), b = 10 (9, 10, 11): s1^2 = s2^2 = 1, v1 = v2 = 1/3;
    # Welch df = (2/3)^2 / ((1/3)^2/2 + (1/3)^2/2) = 4.
    # Fieller: rho = [ab -/+ t sqrt(a^2 v2 + b^2 v1 - t^2 v1 v2)] / (b^2 - t^2 v2)
    #   = [120 -/+ 2.776445 * sqrt(48 + 33.3333 - 7.708647/9)] / (100 - 7.708647/3)
    #   = [120 -/+ 2.776445 * 8.970887] / 97.430451 = [95.092824, 144.907176] / 97.430451
    #   = [0.976007, 1.487288]
    r = ratio_ci([11, 12, 13], [9, 10, 11])
    assert r.df == pytest.approx(4.0)
    assert r.ratio == pytest.approx(1.2)
    t2 = T975_DF4**2
    half = T975_DF4 * math.sqrt(144 / 3 + 100 / 3 - t2 / 9)
    assert r.low == pytest.approx((120 - half) / (100 - t2 / 3), rel=1e-9)
    assert r.high == pytest.approx((120 + half) / (100 - t2 / 3), rel=1e-9)
    assert (round(r.low, 6), round(r.high, 6)) == (0.976007, 1.487288)
    # 1 is inside: (a - b)^2 = 4 <= t^2 (v1 + v2) = 7.708647 * 2/3 = 5.139
    assert r.contains_one
    assert verdict(r.ratio, r.contains_one) == "consistent"


def test_ratio_ci_is_the_set_where_welch_accepts():
    # Every rho inside [low, high] satisfies (a - rho b)^2 <= t^2 (v1 + rho^2 v2), with
    # equality at the ends: check the quadratic at the ends numerically.
    xs, ys = [4.1, 4.6, 5.2, 4.4], [3.0, 3.9, 3.3, 3.5, 3.6]
    r = ratio_ci(xs, ys)
    a, b = sum(xs) / 4, sum(ys) / 5
    v1 = sum((x - a) ** 2 for x in xs) / 3 / 4
    v2 = sum((y - b) ** 2 for y in ys) / 4 / 5
    df = (v1 + v2) ** 2 / (v1**2 / 3 + v2**2 / 4)
    assert r.df == pytest.approx(df)
    from scipy import stats

    t2 = stats.t.ppf(0.975, df) ** 2
    for end in (r.low, r.high):
        assert (a - end * b) ** 2 == pytest.approx(t2 * (v1 + end**2 * v2), rel=1e-9)
    mid = (r.low + r.high) / 2
    assert (a - mid * b) ** 2 < t2 * (v1 + mid**2 * v2)
    assert not r.contains_one  # 1.32: well away from 1
    assert verdict(r.ratio, r.contains_one) == "differs"


def test_ratio_ci_unbounded_degenerate_and_short():
    # denominator not significantly non-zero: b = 1, v2 = 4/3, t(df) > 2 so
    # t^2 v2 / b^2 > 1: unbounded
    r = ratio_ci([10, 10.5, 11], [-1, 1, 3])
    assert (r.low, r.high) == (-math.inf, math.inf)
    assert r.ratio == pytest.approx(10.5)
    # zero variance on both sides: the degenerate interval at the point ratio
    r = ratio_ci([5, 5], [4, 4])
    assert (r.ratio, r.low, r.high, r.contains_one) == (1.25, 1.25, 1.25, False)
    assert verdict(r.ratio, r.contains_one) == "differs"
    same = ratio_ci([4, 4, 4], [4, 4])
    assert (same.low, same.high, same.contains_one) == (1.0, 1.0, True)
    # zero variance on one side only: df = n - 1 of the other side (here 2)
    one = ratio_ci([10, 10, 10], [9, 10, 11])
    assert one.df == pytest.approx(2.0)
    t2 = 4.302653**2
    half = math.sqrt(t2) * math.sqrt(100 / 3)
    assert one.low == pytest.approx((100 - half) / (100 - t2 / 3), rel=1e-6)
    # one run on a side: no interval, a point ratio only
    short = ratio_ci([10], [9, 10, 11])
    assert short.ratio == pytest.approx(1.0) and math.isnan(short.low)
    assert math.isnan(ratio_ci([], [1, 2]).ratio)


def test_more_seeds_cannot_make_a_large_gap_agree():
    # ratio 1.3 with huge noise: the CI contains 1, still "differs"
    r = ratio_ci([1.3, 0.3, 2.3], [1.0, 0.1, 1.9])
    assert r.contains_one and verdict(r.ratio, r.contains_one) == "differs"


def test_spearman_known_values():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    # ties get average ranks: ranks (1.5, 1.5, 3) vs (1, 2, 3)
    assert spearman([3, 3, 1], [3, 2, 1]) == pytest.approx(math.sqrt(3) / 2)
    assert math.isnan(spearman([1], [1]))
    assert math.isnan(spearman([1, 1], [1, 2]))


def _records(cells: dict[tuple[str, str, float], list[float]]) -> list[dict[str, Any]]:
    """Fake run records: (side, cc, loss) -> goodputs in Mbit/s."""
    out = []
    for (side, cc, loss), goodputs in cells.items():
        for seed, g in enumerate(goodputs, start=1):
            out.append(
                {
                    "side": side,
                    "cc": cc,
                    "loss": loss,
                    "seed": seed,
                    "bytes": 1000,
                    "source_hash": "x",
                    "completed": True,
                    "goodput_bps": g * 1e6,
                    "rto_expiries": seed,
                    "fast_recoveries": 2 * seed,
                    "retransmissions": 3,
                }
            )
    return out


FAKE = _records(
    {
        ("vtlab", "newreno", 0.0): [9.5, 9.5],
        ("ns-3", "newreno", 0.0): [9.3, 9.6],
        ("vtlab", "cubic", 0.0): [9.4, 9.4],
        ("ns-3", "cubic", 0.0): [9.5, 9.5],
        ("vtlab", "newreno", 0.05): [0.80, 0.82, 0.81],
        ("ns-3", "newreno", 0.05): [0.55, 0.57, 0.56],
        ("vtlab", "cubic", 0.05): [0.70, 0.71, 0.72],
        ("ns-3", "cubic", 0.05): [0.85, 0.86, 0.87],
    }
)


def test_agreement_table_on_fake_records():
    table = agreement_table(FAKE, ["newreno", "cubic"], [0.0, 0.05])
    assert [(r["cc"], r["loss"]) for r in table] == [
        ("newreno", 0.0),
        ("newreno", 0.05),
        ("cubic", 0.0),
        ("cubic", 0.05),
    ]
    nr0, nr5, cu0, cu5 = table
    assert nr0["ratio"] == pytest.approx(9.5 / 9.45) and nr0["verdict"] == "agree"
    assert nr0["ns3_n"] == 2 and nr0["ns3_type"] == "TcpNewReno"
    assert nr5["vtlab_goodput_mbps"] == pytest.approx(0.81)
    assert nr5["ratio"] == pytest.approx(0.81 / 0.56)
    assert nr5["verdict"] == "differs"
    assert nr5["vtlab_rto_expiries"] == pytest.approx(2.0)
    assert nr5["ns3_fast_recoveries"] == pytest.approx(4.0)
    assert cu0["verdict"] == "agree"
    assert cu5["verdict"] == "differs"
    # a cell without runs is "missing", not an error
    (row,) = agreement_table(FAKE, ["veno"], [0.0])
    assert row["verdict"] == "missing" and row["vtlab_n"] == 0


def test_rankings_orders_spearman_and_significant_inversions():
    ranks = rankings(agreement_table(FAKE, ["newreno", "cubic"], [0.0, 0.05]))
    r0, r5 = ranks
    assert r0["vtlab_order"] == ["newreno", "cubic"]
    assert r0["ns3_order"] == ["cubic", "newreno"]
    assert not r0["same_order"]
    # loss-free: ns-3's CI of newreno is wide, so the inversion is not significant
    assert r0["significant_inversions"] == []
    assert r5["vtlab_order"] == ["newreno", "cubic"] and r5["ns3_order"] == ["cubic", "newreno"]
    assert r5["spearman"] == pytest.approx(-1.0)
    assert r5["significant_inversions"] == ["newreno/cubic"]


def test_write_report_on_a_tiny_fake_grid(tmp_path):
    table = agreement_table(FAKE, ["newreno", "cubic"], [0.0, 0.05])
    meta = {
        "command": "vtlab validate --quick",
        "explicit_command": "vtlab validate --cc newreno --cc cubic",
        "vtlab_version": "9.9.9",
        "vtlab_hash": "abc",
        "ns3_version": "3.44.post0",
        "ns3_hash": "def",
        "wall_s": 12.5,
        "seeds": [1, 2, 3],
        "bytes": 5_000_000,
        "skipped": {"bic": "not in vtlab's registry yet"},
    }
    paths = write_report(tmp_path, table, rankings(table), meta)
    text = paths["report"].read_text()
    for needle in (
        "`vtlab validate --quick`",
        "vtlab 9.9.9",
        "ns-3 3.44.post0",
        "Wall time 12.5 s",
        "topology 1 vehicle",
        "* 1 vehicle: SA —(WAN 500 Mbit/s, 0.9 ms)— SECC",
        "bic: not in vtlab's registry yet",
        "| newreno | 5 % | 1 | 0.810 ± ",
        "**differs**",
        "2 of 4 cells agree; 0 consistent; 2 differ",
        "* newreno, 5 %: differs, ratio 1.446 (95 % CI ",
        "* cubic, 5 %: differs, ratio 0.826",
        "Worst ratios: lowest 0.826 (cubic, 5 %), highest 1.446 (newreno, 5 %)",
        "| 5 % | 1 | newreno > cubic | cubic > newreno | -1.00 | no | newreno/cubic |",
    ):
        assert needle in text, needle
    assert "Charging station" not in text
    csv = pd.read_csv(paths["csv"])
    assert list(csv["verdict"]) == ["agree", "differs", "agree", "differs"]
    for col in (
        "vtlab_goodput_mbps",
        "vtlab_goodput_ci95_mbps",
        "ns3_goodput_mbps",
        "ns3_goodput_ci95_mbps",
        "ratio",
        "ratio_ci_low",
        "ratio_ci_high",
        "vtlab_rto_expiries",
        "ns3_rto_expiries",
        "vtlab_fast_recoveries",
        "ns3_fast_recoveries",
        "topology",
    ):
        assert col in csv.columns
    assert len(pd.read_parquet(paths["parquet"])) == 4


# -- the run cache and resuming -----------------------------------------------------------


def _fake_binary(tmp_path: Path) -> ns3prog.Ns3Binary:
    return ns3prog.Ns3Binary(
        path=tmp_path / "v2g",
        build_hash="f" * 64,
        ns3_version="3.44.post0",
        source=tmp_path / "v2g.cc",
        command=("g++",),
    )


class FakeRunner:
    """Returns a plausible record per task; optionally interrupts after N tasks."""

    def __init__(self, interrupt_after: int | None = None) -> None:
        self.calls: list[str] = []
        self.interrupt_after = interrupt_after

    def __call__(self, task: Task) -> dict[str, Any]:
        if self.interrupt_after is not None and len(self.calls) >= self.interrupt_after:
            raise KeyboardInterrupt
        self.calls.append(task.key)
        g = 9.4e6 if task.loss == 0 else (0.8e6 if task.side == "vtlab" else 0.6e6)
        return v2g.record(
            task,
            {
                "completed": True,
                "goodput_bps": g + task.seed,
                "completion_s": 1.0,
                "retransmissions": 0,
                "rto_expiries": 0,
                "rto_episodes": 0,
                "fast_recoveries": 1,
                "drops_link_error": 0,
                "drops_queue": 0,
            },
            0.0,
        )


GRID = Grid(["newreno", "cubic"], [0.0, 0.05], [1, 2], 1_000_000)


def test_second_invocation_runs_nothing_new(tmp_path):
    binary = _fake_binary(tmp_path)
    first = FakeRunner()
    res = v2g.validate(GRID, tmp_path, runner=first, binary=binary, progress=False)
    n_tasks = 2 * 2 * 2 * 2  # cc x loss x seed x side
    assert len(first.calls) == n_tasks and res.runs_done == n_tasks
    assert len((tmp_path / "runs.jsonl").read_text().splitlines()) == n_tasks
    assert (tmp_path / "report.md").is_file() and (tmp_path / "agreement.csv").is_file()
    assert [r["verdict"] for r in res.table] == ["agree", "differs", "agree", "differs"]

    second = FakeRunner()
    res2 = v2g.validate(GRID, tmp_path, runner=second, binary=binary, progress=False)
    assert second.calls == []
    assert (res2.runs_done, res2.runs_cached) == (0, n_tasks)
    assert res2.table == res.table

    # a larger grid reuses the finished cells and runs only the new seed
    third = FakeRunner()
    bigger = Grid(GRID.ccs, GRID.losses, [1, 2, 3], GRID.nbytes)
    v2g.validate(bigger, tmp_path, runner=third, binary=binary, progress=False)
    assert len(third.calls) == 2 * 2 * 2 and all(json.loads(k)[3] == 3 for k in third.calls)


def test_interrupted_run_resumes_where_it_stopped(tmp_path):
    binary = _fake_binary(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        v2g.validate(
            GRID, tmp_path, runner=FakeRunner(interrupt_after=5), binary=binary, progress=False
        )
    lines = (tmp_path / "runs.jsonl").read_text().splitlines()
    assert len(lines) == 5
    assert not (tmp_path / "report.md").exists()
    # a line cut short by the interruption is ignored
    with (tmp_path / "runs.jsonl").open("a") as fh:
        fh.write('{"side": "vtlab", "cc": "newr')
    rest = FakeRunner()
    v2g.validate(GRID, tmp_path, runner=rest, binary=binary, progress=False)
    assert len(rest.calls) == 16 - 5
    assert len(RunCache(tmp_path / "runs.jsonl", v2g.record_key).records) == 16


@pytest.mark.parametrize("jobs", [1, 2])
def test_ctrl_c_stops_the_vtlab_runs_running_in_this_process(tmp_path, jobs):
    """vtlab's runs go to the core in this process (v2g.execute), here or in ``jobs``
    threads: Ctrl-C stops the running ones at once, records none, and leaves the core
    able to run again. Each run is 20 GB on a clean cable, about 6 s on the 2-core
    machine of docs/cluster.md (1 GB took 0.3 s), so the four take 12 s or more with
    two jobs unless stopped; the signal comes after 0.5 s."""
    grid = Grid(["newreno", "cubic"], [0.0], [1, 2], 20_000_000_000, only="vtlab")
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            v2g.validate(grid, tmp_path, jobs=jobs, progress=False, stored=[])
    finally:
        timer.cancel()
    assert time.monotonic() - started < 3.0
    cache = tmp_path / "runs.jsonl"
    assert not cache.exists() or cache.read_text().strip() == ""
    out = _core.run(json.dumps(v2g.vtlab_spec("newreno", 0.0, 100_000)), 1, False)
    assert out["flows"]["completed"] == [True]


def test_cache_key_includes_the_source_hashes(tmp_path):
    binary = _fake_binary(tmp_path)
    v2g.validate(GRID, tmp_path, runner=FakeRunner(), binary=binary, progress=False)
    rebuilt = ns3prog.Ns3Binary(
        binary.path, "e" * 64, binary.ns3_version, binary.source, binary.command
    )
    again = FakeRunner()
    v2g.validate(GRID, tmp_path, runner=again, binary=rebuilt, progress=False)
    assert len(again.calls) == 8 and all(json.loads(k)[0] == "ns-3" for k in again.calls)


def test_qdisc_is_part_of_the_key_the_spec_and_the_ns3_arguments(tmp_path):
    binary = _fake_binary(tmp_path)
    stock = Grid(["newreno"], [0.05], [1], 1_000_000, qdisc="stock")
    tasks = v2g.plan(stock, "vt", binary.results_hash, str(binary.path))
    ns = [t for t in tasks if t.side == "ns-3"]
    vt = [t for t in tasks if t.side == "vtlab"]
    assert "--qdisc=default" in ns[0].args and "--qdisc=none" not in ns[0].args
    assert json.loads(vt[0].spec_json)["qdisc"] == "fq_codel"
    assert json.loads(ns[0].key)[-2:] == ["qdisc", "stock"]
    none_grid = Grid(["newreno"], [0.05], [1], 1_000_000, qdisc="none")
    none = v2g.plan(none_grid, "vt", binary.results_hash, str(binary.path))
    assert "--qdisc=none" in none[0].args and "--qdisc=default" not in none[0].args
    assert json.loads(none[1].spec_json).get("qdisc") == "none"
    assert "qdisc" not in json.loads(none[0].key)  # the key of runs made before --qdisc
    assert v2g.vtlab_spec("cubic", 0.0, 1000).get("qdisc") is None
    # records carry their qdisc, so a stock run never answers for a no-qdisc cell
    res = v2g.validate(stock, tmp_path, runner=FakeRunner(), binary=binary, progress=False)
    assert "ns-3's stock traffic control" in res.paths["report"].read_text()
    again = FakeRunner()
    nq = Grid(["newreno"], [0.05], [1], 1_000_000, qdisc="none")
    res = v2g.validate(nq, tmp_path, runner=again, binary=binary, progress=False)
    assert len(again.calls) == 2
    assert "drop-tail 100 packets on every device, no qdisc" in res.paths["report"].read_text()


def test_only_ns3_runs_one_side_and_knows_algorithms_vtlab_lacks(tmp_path):
    g = v2g.make_grid(["bbr", "newreno"], ["5%"], 2, "1MB", None, False, only="ns3")
    assert g.ccs == ["bbr", "newreno"] and g.skipped == {} and g.only == "ns3"
    binary = _fake_binary(tmp_path)
    tasks = v2g.plan(g, "vt", binary.results_hash, str(binary.path))
    assert {t.side for t in tasks} == {"ns-3"} and len(tasks) == 4
    assert "--cc=TcpBbr" in tasks[0].args
    runner = FakeRunner()
    res = v2g.validate(g, tmp_path, runner=runner, binary=binary, progress=False, stored=[])
    assert len(runner.calls) == 4 and res.paths == {} and not (tmp_path / "report.md").exists()
    assert "--only ns3" in v2g.explicit_command(g, tmp_path, 1)


def test_stored_ns3_runs_are_reused_and_merged(tmp_path):
    binary = _fake_binary(tmp_path)
    grid = Grid(["newreno"], [0.0, 0.05], [1, 2], 1_000_000, qdisc="stock")
    store = tmp_path / "store" / "runs.jsonl.gz"
    first = tmp_path / "first"
    v2g.validate(
        Grid(grid.ccs, grid.losses, grid.seeds, grid.nbytes, qdisc="stock", only="ns3"),
        first,
        runner=FakeRunner(),
        binary=binary,
        progress=False,
        stored=[],
        store_ns3=store,
    )
    assert store_runs(store, [], v2g.record_key) == 4
    data = store.read_bytes()
    store_runs(store, [], v2g.record_key)
    assert store.read_bytes() == data  # reproducible bytes
    # a clean output directory: only vtlab runs, the ns-3 ones come from the store
    runner = FakeRunner()
    res = v2g.validate(
        grid, tmp_path / "clean", runner=runner, binary=binary, progress=False, stored=[store]
    )
    assert len(runner.calls) == 4 and all(json.loads(k)[0] == "vtlab" for k in runner.calls)
    assert res.runs_cached == 4
    assert "4 of them from the stored ns-3 runs" in res.paths["report"].read_text()
    # a changed ns-3 program does not reuse them
    other = ns3prog.Ns3Binary(binary.path, "e" * 64, binary.ns3_version, binary.source, ())
    runner = FakeRunner()
    v2g.validate(
        grid, tmp_path / "clean2", runner=runner, binary=other, progress=False, stored=[store]
    )
    assert len(runner.calls) == 8


def test_results_hash_ignores_paths(tmp_path):
    src = tmp_path / "a" / "v2g.cc"
    src.parent.mkdir()
    src.write_text("int main() {}")
    copy = tmp_path / "b.cc"
    copy.write_text("int main() {}")
    b1 = ns3prog.Ns3Binary(tmp_path / "x", "1" * 64, "3.44", src, ("g++", str(src)))
    b2 = ns3prog.Ns3Binary(tmp_path / "y", "2" * 64, "3.44", copy, ("g++", str(copy)))
    assert b1.results_hash == b2.results_hash and len(b1.results_hash) == 16
    b3 = ns3prog.Ns3Binary(tmp_path / "y", "2" * 64, "3.45", copy, ("g++", str(copy)))
    assert b3.results_hash != b1.results_hash


# -- command line -------------------------------------------------------------------------


def _one_error_line(result: Any, *needles: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


def test_cli_missing_ns3_is_one_line_exit_2(app, tmp_path, monkeypatch):
    def missing(name: str) -> Any:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    # 3 % at 1 MB is not among the stored ns-3 runs (the quick grid is: see the smoke run)
    r = invoke(
        app,
        "--cc",
        "newreno",
        "--loss",
        "3%",
        "--runs",
        "2",
        "--bytes",
        "1MB",
        "--out",
        str(tmp_path),
        "-q",
    )
    line = _one_error_line(r)
    assert line == "error: ns-3 is not installed: pip install 'vtlab[ns3]'"


def test_bench_vs_ns3_command_without_ns3(monkeypatch, capsys):
    def missing(name: str) -> Any:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    with pytest.raises(typer.Exit) as info:
        cli_validate.bench_vs_ns3_command({"preset": "v2g", "bytes": "1MB"}, repeat=1)
    assert info.value.exit_code == 2
    assert capsys.readouterr().err == "error: ns-3 is not installed: pip install 'vtlab[ns3]'\n"


@pytest.mark.parametrize(
    ("value", "needle"),
    [("abc", "not a number of vehicles"), ("0", "outside [1, 1000]"), ("1001", "outside")],
)
def test_cli_bad_topology(app, tmp_path, value, needle):
    _one_error_line(invoke(app, "--topology", value, "--out", str(tmp_path)), needle)


def test_make_grid_topologies():
    g = v2g.make_grid(["newreno"], ["0"], 1, "1MB", ["21", "1", "021"], quick=False)
    assert g.topologies == ["21", "1"]
    assert v2g.make_grid(["newreno"], None, 1, None, None, quick=False).topologies == ["1"]
    cmd = v2g.explicit_command(g, Path("/tmp/x"), 1)
    assert "--vehicles 21 --vehicles 1" in cmd
    assert "--vehicles" not in v2g.explicit_command(
        Grid(["newreno"], [0.0], [1], 1000), Path("/tmp/x"), 1
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--cc", "reno"], "no ns-3 counterpart for reno"),
        (["--loss", "abc"], "--loss"),
        (["--loss", "150%"], "outside [0, 1)"),
        (["--runs", "0"], "--runs: must be at least 1"),
        (["--bytes", "lots"], "--bytes"),
        (["--jobs", "0"], "--jobs: must be at least 1"),
    ],
)
def test_cli_bad_options(app, tmp_path, args, needle):
    _one_error_line(invoke(app, *args, "--out", str(tmp_path)), needle)
    _one_error_line(invoke(app, "v2g", *args, "--out", str(tmp_path)), needle)
    _one_error_line(invoke(app, "station", *args, "--out", str(tmp_path)), needle)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["station", "--vehicles", "0"], "--vehicles: 0 vehicles is outside [1, 1000]"),
        (["station", "--vehicles", "x"], "--vehicles: 'x' is not a number of vehicles"),
        (["--quick", "v2g"], "--quick: give it after the family: vtlab validate v2g"),
        (["--topology", "21", "station"], "--topology: give it after the family"),
        (["v2g", "--replay", "cubic:5%:0"], "--replay: seed 0 is outside"),
    ],
)
def test_cli_family_errors(app, tmp_path, args, needle):
    _one_error_line(invoke(app, *args, "--out", str(tmp_path)), needle)


def test_cli_help_lists_the_families_and_hides_the_old_spelling(app):
    r = invoke(app, "--help")
    assert r.exit_code == 0
    assert "v2g" in r.stdout and "station" in r.stdout and "--topology" not in r.stdout


def test_make_grid_quick_defaults_and_overrides():
    g = v2g.make_grid(None, None, None, None, None, quick=True)
    assert (g.ccs, g.losses, g.seeds, g.nbytes) == (
        ["newreno", "illinois", "cubic"],
        [0.0, 0.05],
        [1, 2],
        5_000_000,
    )
    g = v2g.make_grid(None, ["0.25%", "0.01"], 1, "2MB", ["1"], quick=True)
    assert (g.losses, g.seeds, g.nbytes) == ([0.0025, 0.01], [1], 2_000_000)
    full = v2g.make_grid(None, None, None, None, None, quick=False)
    assert full.losses == [0.0, 0.0025, 0.01, 0.05] and full.seeds == list(range(1, 11))
    assert full.nbytes == 100_000_000 and full.qdisc == "stock" and g.qdisc == "stock"
    has_bbr = "bbr" in {c["name"] for c in _core.congestion_controls()}
    assert set(full.ccs) | set(full.skipped) == set(v2g.DEFAULT_CCS) | (
        {"bbr"} if has_bbr else set()
    )
    assert ns3_type_id("bbr") == "TcpBbr" and "bbr" not in v2g.DEFAULT_CCS


def test_make_grid_skips_algorithms_missing_from_vtlab(monkeypatch):
    from vtlab import _core

    real = _core.congestion_controls()
    monkeypatch.setattr(
        _core, "congestion_controls", lambda: [c for c in real if c["name"] != "cubic"]
    )
    g = v2g.make_grid(["newreno", "cubic"], None, 1, None, None, quick=False)
    assert g.ccs == ["newreno"] and "cubic" in g.skipped


# -- scenario translation and the build ---------------------------------------------------


def test_ns3_args_of_the_v2g_scenario():
    sc = Scenario({"preset": "v2g", "bytes": "2MB", "loss": {"mean_loss": "5%"}})
    args = ns3v2g.ns3_args(sc.expanded(), seed=4)
    # The program gets the resolved burst-start probability, not the mean loss again.
    p = sc.expanded()["links"][1]["loss_ab"]["burst_start"]
    assert abs(_core.burst_mean_loss(p) - 0.05) < 1e-12
    for a in (
        "--cc=TcpNewReno",
        f"--burstRate={p!r}",
        "--bytes=2000000",
        "--run=4",
        "--sack=true",
        "--recovery=prr",
        "--timestamps=true",
        "--delAckCount=2",
        "--delAckTimeout=0.2",
        "--initialCwnd=10",
        "--minRto=1",
        "--sndBuf=131072",
        "--segmentSize=1460",
        "--mtu=1500",
        "--queuePackets=100",
        "--plcRate=10",
        "--wanRate=500",
        "--plcDelay=0.9",
    ):
        assert a in args, a
    sc = Scenario({"preset": "v2g", "tcp": {"cc": "westwood-plus", "recovery": "newreno"}})
    args = ns3v2g.ns3_args(sc.expanded(), seed=1)
    assert "--cc=TcpWestwoodPlus" in args and "--sack=false" in args
    assert "--recovery=classic" in args and "--burstRate=0" in args


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ({"tcp": {"cc": "westwood"}}, "no ns-3 counterpart"),
        ({"tcp": {"cc": "cubic", "cc_params": {"beta": 0.7}}}, "cc_params"),
        ({"tcp": {"profile": "linux"}}, "tcp.profile"),
        ({"tcp": {"recovery": "tahoe"}}, "tcp.recovery"),
        ({"qdisc": "codel"}, "links.qdisc"),
        ({"qdisc": {"kind": "fq_codel", "target": "3ms"}}, "links.qdisc"),
    ],
)
def test_ns3_args_rejects_what_ns3_cannot_reproduce(spec, needle):
    sc = Scenario({"preset": "v2g", **spec})
    try:
        expanded = sc.expanded()
    except ValueError:
        pytest.skip("vtlab itself rejects this spec")
    with pytest.raises(ValueError, match=needle):
        ns3v2g.ns3_args(expanded, seed=1)


def test_compile_command_links_modules_without_as_needed(tmp_path):
    inst = ns3prog.Ns3Install(root=tmp_path / "ns3", version="3.44.post0")
    (tmp_path / "ns3" / "lib64").mkdir(parents=True)
    cmd = ns3prog.compile_command(inst, Path("v2g.cc"), Path("out/v2g"))
    assert cmd[1:3] == ["-std=c++20", "-O2"]
    i, j = cmd.index("-Wl,--no-as-needed"), cmd.index("-Wl,--as-needed")
    assert cmd[i + 1 : j] == [f"-lns3.44-{m}" for m in ns3prog.NS3_MODULES]
    assert cmd[-1] == f"-Wl,-rpath,{tmp_path / 'ns3' / 'lib64'}"


def test_ensure_binary_compiles_once_per_source_hash(tmp_path, monkeypatch):
    root = tmp_path / "site" / "ns3"
    (root / "include" / "ns3").mkdir(parents=True)
    (root / "lib64").mkdir()
    monkeypatch.setattr(ns3prog, "find_ns3", lambda: ns3prog.Ns3Install(root, "3.44.post0"))
    log = tmp_path / "compiles.log"
    fake_cxx = tmp_path / "fake-g++"
    fake_cxx.write_text(
        f"#!{sys.executable}\n"
        "import os, sys\n"
        "out = sys.argv[sys.argv.index('-o') + 1]\n"
        "open(out, 'w').write('#!/bin/sh\\necho ok\\n')\n"
        "os.chmod(out, 0o755)\n"
        f"open({str(log)!r}, 'a').write(out + '\\n')\n"
    )
    fake_cxx.chmod(fake_cxx.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("CXX", str(fake_cxx))
    monkeypatch.setenv("VTLAB_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "v2g.cc"
    src.write_text("int main() {}\n")

    b1 = ns3prog.ensure_binary(source=src)
    b2 = ns3prog.ensure_binary(source=src)
    assert b1 == b2 and len(log.read_text().splitlines()) == 1
    assert b1.path == tmp_path / "cache" / "ns3" / b1.build_hash / "v2g"
    assert os.access(b1.path, os.X_OK)
    src.write_text("int main() { return 0; }\n")
    b3 = ns3prog.ensure_binary(source=src)
    assert b3.build_hash != b1.build_hash and len(log.read_text().splitlines()) == 2
    # an explicit output directory (build.sh) is rebuilt only when its stamp is stale
    out = tmp_path / "build" / "v2g"
    ns3prog.ensure_binary(source=src, output=out)
    ns3prog.ensure_binary(source=src, output=out)
    assert len(log.read_text().splitlines()) == 3


def test_ensure_binary_reports_a_failed_compile(tmp_path, monkeypatch):
    root = tmp_path / "ns3"
    (root / "include" / "ns3").mkdir(parents=True)
    monkeypatch.setattr(ns3prog, "find_ns3", lambda: ns3prog.Ns3Install(root, "3.44.post0"))
    monkeypatch.setenv("CXX", "false")
    src = tmp_path / "v2g.cc"
    src.write_text("x")
    with pytest.raises(ns3prog.Ns3Error, match="failed"):
        ns3prog.ensure_binary(source=src, cache=tmp_path / "c")
    with pytest.raises(ns3prog.Ns3Error, match="cannot read"):
        ns3prog.ensure_binary(source=tmp_path / "missing.cc", cache=tmp_path / "c")


def test_run_process_measures_the_child_alone():
    # the parent (pytest with pandas) is far larger than the child; the child's peak
    # RSS must not inherit it
    small = ns3proc.run_process([sys.executable, "-S", "-c", "pass"])
    big = ns3proc.run_process(
        [sys.executable, "-S", "-c", "x = bytearray(80_000_000); x[::4096] = b'1' * len(x[::4096])"]
    )
    assert small.returncode == 0 and big.returncode == 0
    assert small.max_rss_mib < 40
    assert big.max_rss_mib > small.max_rss_mib + 60
    assert small.wall_s > 0
    failed = ns3proc.run_process([sys.executable, "-S", "-c", "import sys; sys.exit(3)"])
    assert failed.returncode == 3


# -- end to end (needs ns-3) ---------------------------------------------------------------


@requires_ns3
@requires_preset_qdisc
@pytest.mark.parametrize("family", [[], ["v2g"]], ids=["old-spelling", "v2g"])
def test_quick_validation_end_to_end(app, tmp_path, family):
    r = invoke(
        app,
        *family,
        *("--quick", "--runs", "1", "--bytes", "2MB", "--jobs", "1", "-q", "--out", str(tmp_path)),
    )
    assert r.exit_code == 0, (r.output, r.stderr)
    # The CI subset runs with ns-3's stock queue disc on both sides.
    assert (
        "ns-3's stock traffic control: an FqCoDel root queue disc"
        in (tmp_path / "report.md").read_text()
    )
    table = pd.read_csv(tmp_path / "agreement.csv")
    assert len(table) == 3 * 2
    row = table[(table["cc"] == "newreno") & (table["loss"] == 0)].iloc[0]
    assert row["ratio"] == pytest.approx(1.0, abs=0.02)
    assert row["ns3_goodput_mbps"] == pytest.approx(9.46, abs=0.1)


@requires_ns3
def test_bench_vs_ns3_small():
    res = speed.bench_vs_ns3(
        {"preset": "v2g", "bytes": "1MB", "loss": {"mean_loss": "1%"}}, repeat=1
    )
    assert len(res.vtlab.wall_s) == 1 and len(res.ns3.wall_s) == 1
    assert res.events > 0 and res.packets > 0 and res.events_per_s > 0
    assert res.speedup > 0 and res.memory_ratio > 0
    assert 0 < res.vtlab.peak_rss_mib < 500 and 0 < res.ns3.peak_rss_mib < 500
    assert any(a.startswith("--burstRate=0.004") for a in res.ns3_args), res.ns3_args
    d = res.as_dict()
    assert {"speedup", "inner_speedup", "memory_ratio", "events_per_s", "packets_per_s"} <= set(d)
    assert any("peak RSS" in line for line in res.summary_lines())


# -- the charging station (topology N >= 2) ------------------------------------------------


def test_vtlab_spec_of_a_station_cell():
    assert v2g.vtlab_spec("cubic", 0.05, 1000)["preset"] == "v2g"
    spec = v2g.vtlab_spec("cubic", 0.05, 1000, "21")
    assert spec == {
        "preset": "station",
        "vehicles": 21,
        "vehicles_per_segment": 3,
        "bytes": 1000,
        "loss": {"mean_loss": 0.05},
        "tcp": {"cc": "cubic", "profile": "ns3"},
    }


def test_ns3_args_of_the_station_scenario():
    sc = Scenario({"preset": "station", "bytes": "2MB", "loss": {"mean_loss": "5%"}})
    args = ns3v2g.ns3_args(sc.expanded(), seed=3)
    p = _core.burst_start_for_mean_loss(0.05)
    for a in (
        "--cc=TcpNewReno",
        f"--burstRate={p!r}",
        "--bytes=2000000",
        "--run=3",
        "--sack=true",
        "--recovery=prr",
        "--timestamps=true",
        "--queuePackets=100",
        "--plcRate=10",
        "--plcDelay=0.9",
        "--wanRate=500",
        "--wanDelay=10",
        "--vehicles=21",
        "--perSegment=3",
        "--stagger=0.002",
        "--accessRate=10000",
        "--accessDelay=0",
    ):
        assert a in args, a
    # the single-vehicle flags are a prefix: the same translation of TCP and links
    lossy = {"preset": "v2g", "bytes": "2MB", "loss": {"mean_loss": "5%"}}
    single = ns3v2g.ns3_args(Scenario(lossy).expanded(), seed=3)
    assert [a.split("=")[0] for a in args[: len(single)]] == [a.split("=")[0] for a in single]
    sc = Scenario(
        {
            "preset": "station",
            "vehicles": 5,
            "vehicles_per_segment": 2,
            "stagger": "5ms",
            "wan_delay": "2ms",
            "tcp": {"cc": "illinois"},
        }
    )
    args = ns3v2g.ns3_args(sc.expanded(), seed=1)
    for a in ("--vehicles=5", "--perSegment=2", "--stagger=0.005", "--wanDelay=2"):
        assert a in args, a
    assert "--cc=TcpIllinois" in args and "--burstRate=0" in args


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ({"vehicles": 1}, "2 or more vehicles"),
        ({"reverse_loss": {"model": "burst", "mean_loss": 0.01}}, "loss_ba"),
        ({"loss": {"model": "bernoulli", "mean_loss": 0.01}}, "burst model"),
        ({"tcp": {"cc": "westwood"}}, "no ns-3 counterpart"),
    ],
)
def test_ns3_args_rejects_stations_ns3_cannot_build(spec, needle):
    try:
        expanded = Scenario({"preset": "station", **spec}).expanded()
    except ValueError:
        pytest.skip("vtlab itself rejects this spec")
    with pytest.raises(ValueError, match=needle):
        ns3v2g.ns3_args(expanded, seed=1)


def test_vehicle_summary_mean_aggregate_and_fairness():
    rows = [
        {"goodput_bps": 4.0, "completion_s": 2.0, "start_s": 0.0},
        {"goodput_bps": 2.0, "completion_s": 3.0, "start_s": 1.0},
    ]
    s = ns3v2g.vehicle_summary(rows)
    assert s["vehicles"] == 2 and s["goodput_bps"] == 3.0
    # 8 + 6 bits over [0, 4] s
    assert s["aggregate_goodput_bps"] == pytest.approx(3.5)
    assert (s["goodput_min_bps"], s["goodput_max_bps"]) == (2.0, 4.0)
    assert s["jain"] == pytest.approx(36 / (2 * 20))
    one = ns3v2g.vehicle_summary([{"goodput_bps": 5.0, "completion_s": 1.0}])
    assert one["aggregate_goodput_bps"] == 5.0 and one["jain"] == 1.0
    with pytest.raises(ValueError):
        ns3v2g.vehicle_summary([])


def test_station_record_from_flow_rows_of_either_side():
    vt_flows = [
        {
            "flow": f"ev{i}",
            "completed": True,
            "goodput_bps": g,
            "completion_s": 8.0 / g,
            "start_s": (i - 1) * 0.002,
            "retransmissions": i,
            "rto_count": 2 * i,
            "slow_starts_after_loss": 1,
            "fast_recoveries": 3,
            "drops_link_error": 4,
            "drops_queue": 5,
        }
        for i, g in ((1, 4.0), (2, 2.0), (3, 2.0))
    ]
    row = v2g.flow_row("vtlab", vt_flows, "3")
    assert row["vehicles"] == 3 and row["completed"]
    assert row["goodput_bps"] == pytest.approx(8 / 3)
    assert row["rto_expiries"] == pytest.approx(4.0) and row["retransmissions"] == 2.0
    assert row["vehicle_goodputs_bps"] == [4.0, 2.0, 2.0]
    assert row["completion_s"] == 4.0
    assert row["aggregate_goodput_bps"] == pytest.approx(24 / 4.004)
    ns_flows = [
        {
            "complete": i != 2,
            "goodput_bps": 1.0,
            "completion_s": 1.0,
            "start_s": 0.1,
            "retransmissions": 0,
            "rto_expiries": 6,
            "rto_count": 3,
            "fast_recoveries": 1,
            "drops_link_error": 0,
            "drops_queue": 0,
        }
        for i in range(1, 4)
    ]
    row = v2g.flow_row("ns-3", ns_flows, "3")
    assert not row["completed"] and row["rto_expiries"] == 6 and row["rto_episodes"] == 3
    with pytest.raises(RuntimeError, match="expected 21"):
        v2g.flow_row("ns-3", ns_flows, "21")
    single = v2g.flow_row("ns-3", ns_flows[:1], "1")
    assert set(single) == {
        "completed",
        "goodput_bps",
        "completion_s",
        "retransmissions",
        "rto_expiries",
        "rto_episodes",
        "fast_recoveries",
        "drops_link_error",
        "drops_queue",
    }


def test_run_key_of_single_vehicle_runs_is_unchanged():
    old = json.dumps(["ns-3", "newreno", 0.05, 1, 1000, "abc"])
    assert v2g.run_key("ns-3", "newreno", 0.05, 1, 1000, "abc") == old
    assert v2g.run_key("ns-3", "newreno", 0.05, 1, 1000, "abc", "1") == old
    assert v2g.run_key("ns-3", "newreno", 0.05, 1, 1000, "abc", "21") != old


def test_station_grid_with_a_fake_runner(tmp_path):
    binary = _fake_binary(tmp_path)
    grid = Grid(["newreno", "cubic"], [0.0, 0.05], [1, 2], 1_000_000, ["1", "21"])
    runner = FakeRunner()
    res = v2g.validate(grid, tmp_path, runner=runner, binary=binary, progress=False)
    assert len(runner.calls) == 2 * 2 * 2 * 2 * 2  # topology x cc x loss x seed x side
    assert [(r["topology"], r["cc"], r["loss"]) for r in res.table][:5] == [
        ("1", "newreno", 0.0),
        ("1", "newreno", 0.05),
        ("1", "cubic", 0.0),
        ("1", "cubic", 0.05),
        ("21", "newreno", 0.0),
    ]
    ranks = rankings(res.table)
    assert {r["topology"] for r in ranks} == {"1", "21"} and len(ranks) == 4
    text = (tmp_path / "report.md").read_text()
    for needle in (
        "topology 1 vehicle, 21 vehicles",
        "* 21 vehicles (charging station, 3 per PLC segment, 7 segments)",
        "## Charging station: aggregate goodput",
        "| newreno | 5 % | 21 | 0.800 ± ",
        "vtlab validate station",
        "--vehicles 1 --vehicles 21",
    ):
        assert needle in text, needle
    # runs of each topology are cached under their own key
    again = FakeRunner()
    v2g.validate(grid, tmp_path, runner=again, binary=binary, progress=False)
    assert again.calls == []
    only_station = Grid(grid.ccs, grid.losses, grid.seeds, grid.nbytes, ["21"])
    res21 = v2g.validate(only_station, tmp_path, runner=again, binary=binary, progress=False)
    assert again.calls == [] and {r["topology"] for r in res21.table} == {"21"}


def test_agreement_table_station_aggregate_columns():
    recs = [
        {
            "side": side,
            "cc": "newreno",
            "loss": 0.0,
            "seed": seed,
            "topology": "21",
            "goodput_bps": 3.2e6,
            "aggregate_goodput_bps": agg * 1e6,
            "jain": 0.99,
            "completed": True,
        }
        for side, agg in (("vtlab", 66.0), ("ns-3", 60.0))
        for seed in (1, 2)
    ]
    (row,) = agreement_table(recs, ["newreno"], [0.0], ["21"])
    assert row["topology"] == "21" and row["ratio"] == pytest.approx(1.0)
    assert row["vtlab_aggregate_mbps"] == pytest.approx(66.0)
    assert row["aggregate_ratio"] == pytest.approx(1.1)
    assert row["ns3_jain"] == pytest.approx(0.99)
    # records of another topology do not leak into the cell
    (row1,) = agreement_table(recs, ["newreno"], [0.0])
    assert row1["vtlab_n"] == 0


@requires_ns3
def test_ns3_station_program_end_to_end():
    binary = ns3prog.ensure_binary()
    sc = Scenario({"preset": "station", "vehicles": 6, "bytes": "500KB", "qdisc": "none"})
    args = ns3v2g.ns3_args(sc.expanded(), seed=1)
    assert "--qdisc=none" in args
    rows, _ = ns3v2g.run_v2g_flows(binary, args)
    assert [r["flow"] for r in rows] == [f"ev{i}" for i in range(1, 7)]
    assert [r["segment"] for r in rows] == [1, 1, 1, 2, 2, 2]
    assert [r["start_s"] for r in rows] == pytest.approx([0.1 + 0.002 * i for i in range(6)])
    assert all(r["complete"] and r["bytes_received"] == 500_000 for r in rows)
    # 10 ms WAN + 0.9 ms PLC each way
    assert rows[0]["rtt_handshake_s"] == pytest.approx(0.0218, abs=0.002)
    s = ns3v2g.vehicle_summary(rows)
    assert 2 * 8.0e6 < s["aggregate_goodput_bps"] < 2 * 9.505e6
    # the single vehicle keeps its numeric flow id and no station keys
    row, _ = ns3v2g.run_v2g(binary, ["--bytes=200000"])
    assert row["flow"] == 0 and "vehicles" not in row
    row1, _ = ns3v2g.run_v2g(binary, ["--bytes=200000", "--vehicles=1", "--wanDelay=0.9"])
    drop = ("wall_s", "max_rss_mib")
    assert {k: v for k, v in row1.items() if k not in drop} == {
        k: v for k, v in row.items() if k not in drop
    }


@requires_ns3
@requires_preset_qdisc
@pytest.mark.parametrize(
    "family", [["--topology", "6"], ["station", "--vehicles", "6"]], ids=["old-spelling", "station"]
)
def test_quick_station_validation_end_to_end(app, tmp_path, family):
    r = invoke(
        app,
        *family,
        *("--cc", "newreno", "--loss", "0", "--runs", "1"),
        *("--bytes", "1MB", "--jobs", "1", "-q", "--out", str(tmp_path)),
        # Drop-tail queues alone: two saturated segments give 2 × 9.4 Mbit/s.
        *("--qdisc", "none"),
    )
    assert r.exit_code == 0, (r.output, r.stderr)
    table = pd.read_csv(tmp_path / "agreement.csv")
    (row,) = table.itertuples()
    assert row.topology == 6 and row.vtlab_n == 1 and row.ns3_n == 1
    assert row.ratio == pytest.approx(1.0, abs=0.1)
    assert row.ns3_aggregate_mbps == pytest.approx(2 * 9.4, rel=0.06)
    recs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert {rec["topology"] for rec in recs} == {"6"}
    assert all(len(rec["vehicle_goodputs_bps"]) == 6 for rec in recs)


@requires_ns3
def test_bench_vs_ns3_station_small():
    res = speed.bench_vs_ns3(
        {"preset": "station", "vehicles": 4, "bytes": "300KB", "loss": {"mean_loss": "1%"}},
        repeat=1,
    )
    assert res.vtlab.flows == 4 and res.ns3.flows == 4
    assert "--vehicles=4" in res.ns3_args
    assert res.ns3.aggregate_goodput_bps > 0 and res.vtlab.aggregate_goodput_bps > 0
    assert any("per vehicle (mean of 4)" in line for line in res.summary_lines())


def test_stored_ns3_runs_need_no_ns3(tmp_path, monkeypatch):
    """A grid whose ns-3 runs are all stored runs vtlab only and never compiles the
    reference program (as where ns-3 is not installed); one run missing from the store
    asks for ns-3, which fails with ns-3's one-line error."""

    def no_ns3(**kwargs):
        raise ns3prog.Ns3NotInstalled()

    monkeypatch.setattr(v2g, "ensure_binary", no_ns3)
    ns3_hash = ns3prog.program_results_hash(ns3prog.V2G_PROGRAM)
    ns_tasks = [t for t in v2g.plan(GRID, "vt", ns3_hash) if t.side == "ns-3"]
    assert len(ns_tasks) == 8 and all(t.binary == "" for t in ns_tasks)
    store = tmp_path / "stored.jsonl"
    store.write_text("".join(json.dumps(FakeRunner()(t)) + "\n" for t in ns_tasks))
    runner = FakeRunner()
    res = v2g.validate(GRID, tmp_path / "a", runner=runner, progress=False, stored=[store])
    assert len(runner.calls) == 8 and all(json.loads(k)[0] == "vtlab" for k in runner.calls)
    assert len(res.table) == 4
    assert f"results hash {ns3_hash}" in res.paths["report"].read_text()
    store.write_text("".join(json.dumps(FakeRunner()(t)) + "\n" for t in ns_tasks[1:]))
    with pytest.raises(ns3prog.Ns3Error, match="ns-3 is not installed"):
        v2g.validate(GRID, tmp_path / "b", runner=FakeRunner(), progress=False, stored=[store])
