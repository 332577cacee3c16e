"""`vtlab validate iso15118`: sessions against the stored ns-3.44 runs
(vtlab.validation.iso15118), paired by ns-3's lost packet positions."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from conftest import assert_usage_error
from vtlab.ns3 import program as ns3mod
from vtlab.validation import iso15118 as v
from vtlab.validation.cache import read_records
from vtlab.validation.errors import ValidateError
from vtlab.validation.iso15118_replay import parse_cell
from vtlab.validation.runner import NS3


def test_nearest_rank_quantile_by_hand() -> None:
    # Ten values 1..10: ceil(0.9 · 10) = 9th value; ceil(0.5 · 10) = 5th; ceil(0.999 · 10) = 10th.
    xs = [float(i) for i in range(1, 11)]
    assert v.quantile(xs, 0.9) == 9.0
    assert v.quantile(xs, 0.5) == 5.0
    assert v.quantile(xs, 0.999) == 10.0
    assert math.isnan(v.quantile([], 0.5))


def test_agreement_is_relative_to_ns3() -> None:
    def row(vtlab: float) -> dict:
        times = {(v.TRACED, 0.0): [1.0], (v.PAIRED, 0.0): [vtlab], (v.OWN, 0.0): [1.0]}
        return v.agreement_rows([0.0], times)[0]

    assert row(1.09)["verdict"] == "agree" and row(0.91)["verdict"] == "agree"
    assert row(1.11)["verdict"] == "differs" and row(0.89)["verdict"] == "differs"
    assert row(1.11)["agree"] == {"p50": False, "p90": False, "p99": False, "p99.9": False}


def test_the_stored_runs_are_the_grid_s() -> None:
    # 100 seeds per cell, keyed by the results hash of today's iso15118.cc, each with
    # the lost positions of both directions
    stored = read_records(v.stored_ns3_runs_path(), v.record_key)
    h = ns3mod.program_results_hash(ns3mod.ISO15118_PROGRAM)
    want = {v.run_key(NS3, v.TRACED, loss, s, h) for loss in v.LOSSES for s in range(1, 101)}
    assert set(stored) == want
    for rec in stored.values():
        assert len(rec["response_time_s"]) == 2400
        assert set(rec["drops"]) == {"toward_evcc", "toward_secc"}


def test_loss_free_cell_matches_the_stored_ns3_runs_exactly(tmp_path: Path) -> None:
    # Loss-free, timestamps off: every exchange takes 2 · ((60|70) + 40 + 2 B at
    # 10 Mbit/s + 0.9 ms) = 2 · 0.9 ms + (102 + 112) · 0.8 µs = 1.9712 ms, in ns-3 as in vtlab.
    grid = v.Grid(seeds=2, losses=(0.0,))
    res = v.validate(grid, tmp_path, progress=False)
    row = res.table[0]
    assert row["verdict"] == "agree"
    for side in ("ns3", "vtlab"):
        assert abs(row[side]["p50"] - 1.9712e-3) < 1e-9
        assert row[side]["miss_fraction"] == 0.0
    # Four percentile rows and one row of missed deadlines.
    assert (tmp_path / "report.md").read_text().count("| cd-loss0 |") == 5
    assert json.loads((tmp_path / "agreement.json").read_text()) == res.table
    # two vtlab runs per seed (paired and own losses); ns-3's came from the store
    assert (res.runs_done, res.errors) == (4, [])


def test_a_paired_run_replays_the_stored_losses(tmp_path: Path) -> None:
    grid = v.Grid(seeds=1, losses=(0.05,))
    res = v.validate(grid, tmp_path, progress=False)
    by_kind = {r["kind"]: r for r in res.records}
    ns3, paired = by_kind[v.TRACED], by_kind[v.PAIRED]
    assert paired["paired_with"] == ns3["source_hash"]
    assert len(ns3["drops"]["toward_evcc"]) > 0
    # RngRun 1 at 5 %: exchange by exchange the same times as ns-3 (docs/validation.md)
    for a, b in zip(ns3["response_time_s"], paired["response_time_s"], strict=True):
        assert (a is None) == (b is None)
        assert a is None or b is None or abs(a - b) < 1e-6


def test_missing_stored_runs_are_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValidateError, match="missing"):
        v.validate(v.Grid(seeds=2), tmp_path, stored=[tmp_path / "none.jsonl.gz"])


def test_quick_from_the_cli(cli, tmp_path) -> None:
    for command in (("validate", "iso15118"), ("validate-iso15118",)):
        out = tmp_path / command[-1]
        r = cli(*command, "--quick", "--seeds", "2", "--out", str(out), "--quiet")
        assert r.exit_code == 0, r.output + r.stderr
        assert "3 of 3 cells agree within ±10 %" in r.output
        assert {p.name for p in out.iterdir()} >= {"agreement.json", "agreement.csv", "report.md"}


def test_cli_rejects_seeds_beyond_the_stored_runs(cli, tmp_path) -> None:
    r = cli("validate", "iso15118", "--seeds", "101", "--out", str(tmp_path / "x"))
    assert_usage_error(r, "--seeds")


def test_cli_rejects_a_malformed_replay_cell(cli) -> None:
    for command in (("validate", "iso15118"), ("validate-iso15118",)):
        assert_usage_error(cli(*command, "--replay", "five:3"), "--replay")
        assert_usage_error(cli(*command, "--replay", "1.5:3"), "--replay")
        assert_usage_error(cli(*command, "--replay", "0.05"), "--replay")
    assert parse_cell("5%:3") == parse_cell("0.05:3") == (0.05, 3)
