"""The bench command and API: measurements are present and consistent (no timing asserts)."""

import json

import pytest
from typer.testing import CliRunner

from vtlab import Scenario
from vtlab.bench import bench
from vtlab.cli import app

runner = CliRunner()


def test_bench_api_repeats_with_identical_event_counts():
    res = bench({"preset": "v2g", "bytes": "1MB", "loss": {"mean_loss": "1%"}}, repeat=3)
    assert len(res.wall_s) == 3
    assert res.events > 0 and res.packets > 0
    assert res.events_per_s > 0 and res.speedup > 0
    assert res.peak_rss_mib > 0


def test_bench_rejects_bad_repeat():
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        bench({"preset": "v2g", "bytes": "1MB"}, repeat=0)


def test_bench_cli_json_uses_the_default_scenario_with_overrides():
    r = runner.invoke(app, ["bench", "--bytes", "2MB", "--repeat", "2", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    for key in ("median_wall_s", "events_per_s", "packets_per_s", "events", "scenario_hash"):
        assert key in d
    # The default scenario is NewReno over the V2G cable at 5 % mean loss.
    expected = Scenario(
        {"preset": "v2g", "bytes": "2MB", "loss": {"mean_loss": "5%"}, "tcp": {"cc": "newreno"}}
    )
    assert d["scenario_hash"] == expected.hash()


def test_bench_cli_bad_input_exits_2():
    r = runner.invoke(app, ["bench", "--repeat", "0"])
    assert r.exit_code == 2
    assert "--repeat must be at least 1" in r.output
    r = runner.invoke(app, ["bench", "--loss", "150%"])
    assert r.exit_code == 2
    assert "loss.mean_loss" in r.output
