"""The ``vtlab`` command line."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from typer.testing import Result

import vtlab
from conftest import SMALL, V2G_IDEAL_GOODPUT, assert_usage_error
from vtlab.api import FLOW_COLUMNS, TRACE_COLUMNS

Cli = Callable[..., Result]

JSON_KEYS = {
    "cc",
    "seed",
    "flow",
    "goodput_bps",
    "completion_s",
    "retransmissions",
    "rto_count",
    "fast_recoveries",
    "drops_link_error",
    "drops_queue",
}


def json_rows(result: Result) -> list[dict]:
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stdout.splitlines() if ln.strip()]
    return [json.loads(ln) for ln in lines]


# -- info commands -----------------------------------------------------------------------


def test_version(cli: Cli) -> None:
    res = cli("version")
    assert res.exit_code == 0
    assert res.stdout.strip() == f"vtlab {vtlab.__version__}"


def test_presets(cli: Cli) -> None:
    res = cli("presets")
    assert res.exit_code == 0
    assert res.stdout.split() == vtlab.presets()
    assert "v2g" in res.stdout.split()


def test_cc_list(cli: Cli) -> None:
    res = cli("cc", "list")
    assert res.exit_code == 0, res.output
    for cc in vtlab.congestion_controls():
        assert cc["name"] in res.stdout
        assert cc["source"] in res.stdout
        for p in cc["params"]:
            assert p["name"] in res.stdout
    as_json = json.loads(cli("cc", "list", "--json").stdout)
    assert as_json == vtlab.congestion_controls()


def test_expand(cli: Cli) -> None:
    res = cli("expand", "v2g", "--bytes", "1MB", "--set", "plc_rate=5Mbps")
    assert res.exit_code == 0, res.output
    expanded = json.loads(res.stdout)
    assert expanded == vtlab.Scenario.preset("v2g", bytes="1MB", plc_rate="5Mbps").expanded()
    compact = cli("expand", "v2g", "--bytes", "1MB", "--set", "plc_rate=5Mbps", "--compact")
    assert len(compact.stdout.strip().splitlines()) == 1
    assert json.loads(compact.stdout) == expanded


def test_expand_from_file(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('preset = "v2g"\nbytes = "1MB"\n')
    res = cli("expand", "--scenario", str(path))
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == vtlab.Scenario.preset("v2g", bytes="1MB").expanded()


# -- run ---------------------------------------------------------------------------------


def test_run_table(cli: Cli) -> None:
    res = cli("run", "v2g", "--bytes", SMALL, "--runs", "2", "--seed", "5")
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "goodput: Mbit/s" in out and "newreno" in out
    assert " ±" in out
    assert "seeds 5..6" in out
    assert "Traceback" not in res.output


def test_run_quiet_prints_only_table(cli: Cli) -> None:
    res = cli("run", "v2g", "--bytes", "1MB", "--quiet")
    assert res.exit_code == 0, res.output
    assert "goodput: Mbit/s" in res.stdout
    assert "scenario " not in res.stdout
    assert res.stderr == ""


def test_run_json_lines(cli: Cli) -> None:
    rows = json_rows(cli("run", "v2g", "--bytes", "1MB", "--runs", "2", "--seed", "3", "--json"))
    assert len(rows) == 2
    for row in rows:
        assert set(row) >= JSON_KEYS
        assert set(FLOW_COLUMNS) <= set(row)
    assert [r["seed"] for r in rows] == [3, 4]


def test_run_default_jobs_give_the_rows_of_one_job(cli: Cli) -> None:
    # `run -n` runs one thread per core by default; the rows must be those of -j 1,
    # in seed order (independent of which thread finishes first).
    args = ("run", "v2g", "--bytes", "1MB", "--loss", "5%", "--runs", "4", "--json")
    default = json_rows(cli(*args))
    one = json_rows(cli(*args, "-j", "1"))
    assert [r["seed"] for r in default] == [1, 2, 3, 4]
    strip = ("wall_s", "events_per_s")
    assert [{k: v for k, v in r.items() if k not in strip} for r in default] == [
        {k: v for k, v in r.items() if k not in strip} for r in one
    ]


def test_run_loss_free_goodput(cli: Cli) -> None:
    rows = json_rows(
        cli(
            "run",
            "v2g",
            "--bytes",
            "5MB",
            "--set",
            "loss.model=none",
            "--set",
            "tcp.timestamps=false",
            "--json",
        )
    )
    assert rows[0]["goodput_bps"] == pytest.approx(V2G_IDEAL_GOODPUT, rel=0.01)


def test_run_out_parquet(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "runs.parquet"
    res = cli("run", "v2g", "--bytes", "1MB", "--runs", "2", "--out", str(out), "--quiet")
    assert res.exit_code == 0, res.output
    flows = pq.read_table(out).to_pandas()
    assert {"scenario_hash", "seed", "version"} <= set(flows.columns)
    assert list(flows.columns[: len(FLOW_COLUMNS)]) == list(FLOW_COLUMNS)
    assert sorted(flows["seed"].tolist()) == [1, 2]
    assert (flows["version"] == vtlab.__version__).all()
    links = pd.read_parquet(tmp_path / "runs.links.parquet")
    assert {"scenario_hash", "seed", "version", "link", "direction"} <= set(links.columns)
    assert not (tmp_path / "runs.traces.parquet").exists()


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_run_trace_file(cli: Cli, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"trace{suffix}"
    res = cli("run", "v2g", "--bytes", "1MB", "--trace", str(path), "--quiet")
    assert res.exit_code == 0, res.output
    assert path.stat().st_size > 0
    df = pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)
    assert len(df) > 1
    assert set(TRACE_COLUMNS) <= set(df.columns)
    assert df["time_s"].is_monotonic_increasing


def test_run_deterministic(cli: Cli) -> None:
    args = ("run", "v2g", "--bytes", SMALL, "--loss", "5%", "--json")
    a = json_rows(cli(*args, "--seed", "11"))
    b = json_rows(cli(*args, "--seed", "11"))
    c = json_rows(cli(*args, "--seed", "12"))
    assert a == b
    strip = [{k: v for k, v in r.items() if k != "seed"} for r in (a[0], c[0])]
    assert strip[0] != strip[1]


def test_set_override_takes_effect(cli: Cli) -> None:
    base = json_rows(cli("run", "v2g", "--bytes", "1MB", "--json"))[0]
    slow = json_rows(cli("run", "v2g", "--bytes", "1MB", "--set", "plc_rate=5Mbps", "--json"))[0]
    ratio = slow["goodput_bps"] / base["goodput_bps"]
    assert 0.4 < ratio < 0.6, ratio


def test_cc_option_and_param(cli: Cli) -> None:
    cc = vtlab.congestion_controls()[0]
    args = ["run", "v2g", "--bytes", "1MB", "--cc", cc["name"], "--json"]
    for p in cc["params"]:
        args += ["--cc-param", f"{p['name']}={json.dumps(p['default'])}"]
    rows = json_rows(cli(*args))
    assert rows[0]["cc"] == cc["name"]


def test_scenario_file(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('preset = "v2g"\nbytes = "1MB"\n[loss]\nmean_loss = 0.05\n')
    from_file = json_rows(cli("run", "--scenario", str(path), "--json"))
    from_flags = json_rows(cli("run", "v2g", "--bytes", "1MB", "--loss", "0.05", "--json"))
    assert from_file == from_flags


CUSTOM_TOML = """
preset = "custom"
nodes = ["server", "car"]
bytes = "1MB"

[[links]]
name = "radio"
a = "server"
b = "car"
rate = "20Mbps"
delay = "5ms"
loss_ab = { model = "bernoulli", mean_loss = "1%" }

[[flows]]
name = "bulk"
src = "server"
dst = "car"

[[flows]]
name = "small"
src = "server"
dst = "car"
bytes = "200kB"
"""


def test_custom_scenario_with_two_flows(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "custom.toml"
    path.write_text(CUSTOM_TOML)
    args = ("run", "--scenario", str(path), "--runs", "2", "--set", "flows.1.bytes=300kB")
    rows = json_rows(cli(*args, "--json"))
    assert [(r["seed"], r["flow"]) for r in rows] == [
        (1, "bulk"),
        (1, "small"),
        (2, "bulk"),
        (2, "small"),
    ]
    assert {r["flow"]: r["bytes"] for r in rows} == {"bulk": 1_000_000, "small": 300_000}
    table = cli(*args)
    assert table.exit_code == 0, table.output
    assert "bulk" in table.stdout and "small" in table.stdout
    assert_usage_error(cli(*args, "--set", "flows.5.bytes=1"), "flows.5.bytes", "list of 2")


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--cc", "foo"], ["--cc", "foo"]),
        (["--loss", "150%"], ["--loss", "150%"]),
        (["--loss=-5%"], ["--loss", "-5%"]),
        (["--bytes", "abc"], ["bytes"]),
        (["--set", "plc_rate=0Mbps"], ["plc_rate"]),
        (["--set", "no_such_key=1"], ["no_such_key"]),
        (["--set", "tcp.no_such_knob=1"], ["no_such_knob"]),
        (["--seed", "-1"], ["seed"]),
        (["--seed=-1"], ["seed"]),
        (["--runs", "0"], ["runs"]),
        (["--set", "novalue"], ["--set", "key=value"]),
        (["--cc-param", "novalue"], ["--cc-param"]),
        (["--cc-param", "no_such_param=1"], ["--cc-param no_such_param"]),
        (["--set", "loss.model=weird"], ["loss.model", "weird"]),
        (["--bytes", "1MB", "--set", "bytes.x=1"], ["bytes.x", "not a table"]),
        (["--trace", "t.txt"], ["--trace"]),
    ],
)
def test_run_bad_input(cli: Cli, args: list[str], needles: list[str]) -> None:
    assert_usage_error(cli("run", "v2g", *args), *needles)


def test_unknown_preset(cli: Cli) -> None:
    assert_usage_error(cli("run", "nosuchpreset"), "preset", "nosuchpreset")
    assert_usage_error(cli("expand", "nosuchpreset"), "preset")


def test_preset_and_scenario_both_or_neither(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('preset = "v2g"\n')
    assert_usage_error(cli("run", "v2g", "--scenario", str(path)), "not both")
    assert_usage_error(cli("run"), "PRESET", "--scenario")


def test_missing_scenario_file(cli: Cli, tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    assert_usage_error(cli("run", "--scenario", str(missing)), "missing.toml")
    assert_usage_error(cli("expand", "--scenario", str(missing)), "missing.toml")


def test_toml_syntax_error(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('preset = "v2g"\nbytes = = 3\n')
    assert_usage_error(cli("run", "--scenario", str(path)), "bad.toml", "line 2")


def test_unknown_toml_key(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('preset = "v2g"\nbytes = "1MB"\nbogus_field = 3\n')
    assert_usage_error(cli("run", "--scenario", str(path)), "bogus_field")
    nested = tmp_path / "n.toml"
    nested.write_text('preset = "v2g"\n[tcp]\nbogus_knob = 3\n')
    assert_usage_error(cli("run", "--scenario", str(nested)), "bogus_knob")


def test_typer_usage_errors_exit_2(cli: Cli) -> None:
    res = cli("run", "v2g", "--runs", "many")
    assert res.exit_code == 2
    assert "Traceback" not in res.output
    assert cli("no-such-command").exit_code == 2


def test_subprocess_entry_point(tmp_path: Path) -> None:
    """The real process: clean error line on stderr, exit 2, no traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "vtlab", "run", "v2g", "--cc", "foo"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: --cc: unknown congestion control 'foo'")
    assert "Traceback" not in proc.stderr
    ok = subprocess.run(
        [sys.executable, "-m", "vtlab", "run", "v2g", "--bytes", "1MB", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert set(json.loads(ok.stdout.splitlines()[0])) >= JSON_KEYS


@pytest.mark.parametrize(("budget", "field"), [("--set max_events=2000", "max_events"), ("", None)])
def test_run_says_which_budget_ended_a_run_early(cli: Cli, budget: str, field: str | None) -> None:
    """A run cut short by its event budget (a 1 MB transfer needs far more than 2 000
    events: 686 segments alone, each an arrival, a departure and an ACK) carries
    abort_reason = event_budget, and `vtlab run` names the field on stderr; a run
    within its budget gets no warning."""
    res = cli("run", "v2g", "--bytes", "1MB", "-n", "2", "--json", *budget.split())
    assert res.exit_code == 0, res.stderr
    reasons = [json.loads(line)["abort_reason"] for line in res.stdout.splitlines()]
    if field is None:
        assert reasons == ["", ""] and "warning" not in res.stderr
    else:
        assert reasons == ["event_budget", "event_budget"]
        assert f"warning: {field}: a run reached its budget" in res.stderr
