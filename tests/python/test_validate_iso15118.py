"""`vtlab validate-iso15118`: sessions against the stored ns-3.44 runs."""

from __future__ import annotations

import math

from conftest import assert_usage_error
from vtlab import validate_iso15118 as v


def test_nearest_rank_quantile_by_hand() -> None:
    # Ten values 1..10: ceil(0.9 · 10) = 9th value; ceil(0.5 · 10) = 5th; ceil(0.999 · 10) = 10th.
    xs = [float(i) for i in range(1, 11)]
    assert v.quantile(xs, 0.9) == 9.0
    assert v.quantile(xs, 0.5) == 5.0
    assert v.quantile(xs, 0.999) == 10.0
    assert math.isnan(v.quantile([], 0.5))


def test_agreement_is_relative_to_ns3() -> None:
    assert v.agree(1.09, 1.0) and v.agree(0.91, 1.0)
    assert not v.agree(1.11, 1.0) and not v.agree(0.89, 1.0)


def test_loss_free_cell_matches_the_stored_ns3_runs_exactly(tmp_path) -> None:
    # Loss-free, timestamps off: every exchange takes 2 · ((60|70) + 40 + 2 B at
    # 10 Mbit/s + 0.9 ms) = 2 · 0.9 ms + (102 + 112) · 0.8 µs = 1.9712 ms, in ns-3 as in vtlab.
    res = v.validate_iso15118(tmp_path, seeds=2, losses=[0.0])
    row = res.rows[0]
    assert row["verdict"] == "agree"
    for side in ("ns3", "vtlab"):
        assert abs(row[side]["p50"] - 1.9712e-3) < 1e-9
        assert row[side]["miss_fraction"] == 0.0
    # Four percentile rows and one row of missed deadlines.
    assert (tmp_path / "report.md").read_text().count("| cd-loss0 |") == 5


def test_cli_rejects_seeds_beyond_the_stored_runs(cli, tmp_path) -> None:
    r = cli("validate-iso15118", "--seeds", "101", "--out", str(tmp_path / "x"))
    assert_usage_error(r, "--seeds")


def test_cli_rejects_a_malformed_replay_cell(cli) -> None:
    r = cli("validate-iso15118", "--replay", "five:3")
    assert_usage_error(r, "--replay")
    r = cli("validate-iso15118", "--replay", "1.5:3")
    assert_usage_error(r, "--replay")
