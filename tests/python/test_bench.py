"""The bench command and API: measurements are present and consistent (no timing asserts)."""

import json

import pytest
from typer.testing import CliRunner

from vtlab import Scenario
from vtlab.bench import bench
from vtlab.cli.app import app

runner = CliRunner()


def test_bench_api_repeats_with_identical_event_counts():
    res = bench({"preset": "v2g", "bytes": "1MB", "loss": {"mean_loss": "1%"}}, repeat=3)
    assert len(res.wall_s) == 3
    assert res.events > 0 and res.packets > 0
    assert res.events_per_s > 0 and res.speedup > 0
    assert res.peak_rss_mib > 0


def test_bench_times_the_queue_discs_and_drop_tail_in_alternation(monkeypatch):
    """Each repetition runs the default configuration, then its drop-tail twin (so
    that the machine's drift meets both alike); the cost ratio is the median of the
    repetitions' ratios. By hand: engine times of 3, 2, 6 ms with queue discs and 1,
    2, 2 ms without give ratios 3, 1, 3, median 3.0 (the ratio of the medians would
    be 3 / 2 = 1.5)."""
    from vtlab import bench as bench_module

    order: list[str] = []
    walls = {"fq": iter([9.0, 3e-3, 2e-3, 6e-3]), "none": iter([9.0, 1e-3, 2e-3, 2e-3])}
    real = bench_module._core.run

    def timed_run(spec: str, seed: int, trace: bool) -> dict:
        kind = "none" if json.loads(spec).get("qdisc") == "none" else "fq"
        order.append(kind)
        raw = real(spec, seed, trace)
        return {**raw, "meta": {**raw["meta"], "wall_s": next(walls[kind])}}

    monkeypatch.setattr(bench_module._core, "run", timed_run)
    res = bench({"preset": "v2g", "bytes": "200kB"}, repeat=3, warmup=1)
    assert order == ["fq", "none"] * 4  # the warm-up pair, then three timed pairs
    assert res.wall_s == [3e-3, 2e-3, 6e-3] and res.droptail_wall_s == [1e-3, 2e-3, 2e-3]
    assert res.droptail_ratio == pytest.approx(3.0)


def test_bench_rejects_bad_repeat():
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        bench({"preset": "v2g", "bytes": "1MB"}, repeat=0)


def test_bench_cli_json_uses_the_default_scenario_with_overrides():
    r = runner.invoke(app, ["bench", "--bytes", "2MB", "--repeat", "2", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    for key in ("median_wall_s", "events_per_s", "packets_per_s", "events", "scenario_hash"):
        assert key in d
    # The default scenario is NewReno over the V2G cable at 5 % mean loss, in the default
    # configuration (the profile's queue discs), timed also without queue discs.
    expected = Scenario(
        {"preset": "v2g", "bytes": "2MB", "loss": {"mean_loss": "5%"}, "tcp": {"cc": "newreno"}}
    )
    assert d["scenario_hash"] == expected.hash()
    assert len(d["droptail_wall_s"]) == 2 and d["droptail_ratio"] > 0
    r = runner.invoke(
        app, ["bench", "--bytes", "2MB", "--repeat", "1", "--qdisc", "none", "--no-startup"]
    )
    assert r.exit_code == 0, r.output
    assert "no qdisc" not in r.stdout, "nothing to compare without queue discs"
    # Start-up of the command line, timed as whole processes, REPEAT times each.
    assert set(d["startup_s"]) == {"vtlab --help", "vtlab run v2g --bytes 1MB --json"}
    for walls in d["startup_s"].values():
        assert len(walls) == 2 and all(w > 0 for w in walls)


def test_bench_cli_table_lists_startup_unless_disabled():
    r = runner.invoke(app, ["bench", "--bytes", "1MB", "--repeat", "1"])
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("start-up")]
    assert len(lines) == 2
    assert lines[0].endswith("median of 1: vtlab --help")
    r = runner.invoke(app, ["bench", "--bytes", "1MB", "--repeat", "1", "--no-startup", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["startup_s"] == {}


def test_bench_cli_bad_input_exits_2():
    r = runner.invoke(app, ["bench", "--repeat", "0"])
    assert r.exit_code == 2
    assert r.stderr == "error: --repeat: must be at least 1, got 0\n"
    r = runner.invoke(app, ["bench", "--loss", "150%"])
    assert r.exit_code == 2
    assert r.output.startswith("error: --loss: 150% is outside [0, 1)")
