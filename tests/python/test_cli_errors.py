"""One error path: every user error is one ``error: <field>: <problem>`` line, exit 2;
``--profile`` on every command that simulates; numbers echoed as the user wrote them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import Result

import vtlab
from conftest import assert_usage_error
from vtlab import errors
from vtlab.bench import DEFAULT_BENCH_SPEC
from vtlab.errors import CliError, usage_error_line
from vtlab.validation import v2g as validate

Cli = Callable[..., Result]


def error_line(result: Result) -> str:
    """The one stderr line of a usage error (shape checked by assert_usage_error)."""
    line = assert_usage_error(result)
    assert result.stdout == ""
    return line


# -- the argument parser's errors -------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "v2g", "--xyzzy"], "error: --xyzzy: no such option"),
        (
            ["run", "v2g", "--profile", "bsd"],
            "error: --profile: 'bsd' is not one of 'ns3', 'linux', 'ns2'",
        ),
        (
            ["sweep", "v2g", "--profile", "bsd"],
            "error: --profile: 'bsd' is not one of 'ns3', 'linux', 'ns2'",
        ),
        (
            ["bench", "--profile", "bsd"],
            "error: --profile: 'bsd' is not one of 'ns3', 'linux', 'ns2'",
        ),
        (["run", "v2g", "--out"], "error: --out: needs a value"),
        (["run", "v2g", "--seed"], "error: --seed: needs a value"),
        (["nosuchcommand"], "error: nosuchcommand: no such command"),
        (["run", "v2g", "extra"], "error: extra: unexpected extra argument"),
    ],
)
def test_parser_errors_are_one_line(cli: Cli, args: list[str], expected: str) -> None:
    assert error_line(cli(*args)) == expected


def test_parser_error_suggestions_stay_on_the_line(cli: Cli) -> None:
    line = error_line(cli("runn"))
    assert line == "error: runn: no such command (did you mean 'run'?)"
    line = error_line(cli("run", "v2g", "--trac", "x.parquet"))
    assert line.startswith("error: --trac: no such option (did you mean ")
    assert line.endswith("?)") and "--trace" in line


def test_bad_integer_names_the_option(cli: Cli) -> None:
    line = error_line(cli("run", "v2g", "--runs", "many"))
    assert line.startswith("error: --runs: ")
    line = error_line(cli("sweep", "v2g", "-n", "many"))
    assert line.startswith("error: --runs: ")  # the long name, even when -n was typed


def test_parser_error_through_the_real_entry_point(tmp_path: Path) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(Path(vtlab.__file__).parent.parent), env.get("PYTHONPATH")])
    )
    proc = subprocess.run(
        [sys.executable, "-m", "vtlab", "run", "v2g", "--profile", "bsd"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == "error: --profile: 'bsd' is not one of 'ns3', 'linux', 'ns2'\n"


def test_usage_error_line_fallbacks() -> None:
    class NoSuchOption(Exception):
        def __init__(self) -> None:
            self.message = "No such option: --x"
            self.option_name = "--x"
            self.possibilities = ["--xa", "--xb"]

    assert usage_error_line(NoSuchOption()) == (
        "--x: no such option (did you mean one of --xa, --xb?)"
    )


# -- errors raised by the commands ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "v2g", "--runs", "0"], "error: --runs: must be at least 1, got 0"),
        (["run", "v2g", "-n", "2", "--jobs", "0"], "error: --jobs: must be at least 1, got 0"),
        (
            ["run", "v2g", "-n", "2", "-j", "2", "--trace", "t.parquet"],
            "error: --jobs: --trace is written as the runs go, one run at a time: give -j 1",
        ),
        (["sweep", "v2g", "--runs", "0"], "error: --runs: must be at least 1, got 0"),
        (["sweep", "v2g", "--jobs", "0"], "error: --jobs: must be at least 1, got 0"),
        (["bench", "--repeat", "0"], "error: --repeat: must be at least 1, got 0"),
        (["cc", "table", "--runs", "0"], "error: --runs: must be at least 1, got 0"),
        (["validate", "--runs", "0"], "error: --runs: must be at least 1, got 0"),
        (["validate", "--jobs", "0"], "error: --jobs: must be at least 1, got 0"),
        (["validate", "v2g", "--runs", "0"], "error: --runs: must be at least 1, got 0"),
        (["validate", "station", "--jobs", "0"], "error: --jobs: must be at least 1, got 0"),
        (
            ["validate", "v2g", "--topology", "21"],
            "error: --topology: no such option (did you mean --only?)",
        ),
        (
            ["validate", "station", "--vehicles", "1001"],
            "error: --vehicles: 1001 vehicles is outside [1, 1000]",
        ),
    ],
)
def test_command_errors_have_field_and_problem(
    cli: Cli, args: list[str], expected: str, tmp_path: Path
) -> None:
    if args[0] == "validate":
        args = [*args, "--out", str(tmp_path / "v")]
    assert error_line(cli(*args)) == expected


def test_missing_preset_names_the_argument(cli: Cli) -> None:
    assert error_line(cli("run")).startswith("error: PRESET: give a PRESET (one of: ")


def test_validate_profile_choice(cli: Cli, tmp_path: Path) -> None:
    line = error_line(cli("validate", "--profile", "bsd", "--out", str(tmp_path / "v")))
    assert line == "error: --profile: 'bsd' is not one of 'ns3', 'linux'"
    assert not (tmp_path / "v").exists()


def test_cli_error_str_is_field_colon_problem() -> None:
    exc = CliError("--runs", "must be at least 1")
    assert str(exc) == "--runs: must be at least 1"
    assert (exc.field, exc.problem) == ("--runs", "must be at least 1")


# -- numbers as the user wrote them -----------------------------------------------------


def test_fractional_bytes_echoed_as_typed(cli: Cli) -> None:
    line = error_line(cli("expand", "v2g", "--bytes", "1.5"))
    assert line.startswith("error: --bytes: ")
    assert "'1.5'" in line and "1.5e0" not in line
    line = error_line(cli("run", "v2g", "--set", "bytes=1.50"))
    assert "'1.50'" in line and "1.5e0" not in line


def test_huge_number_echoed_as_typed(cli: Cli) -> None:
    line = error_line(cli("expand", "v2g", "--cc", "cubic", "--cc-param", "beta=1e300"))
    assert line.startswith("error: --cc-param beta: 1e300 ")
    assert "0" * 20 not in line
    line = error_line(cli("run", "v2g", "--loss", "1e300"))
    assert line.startswith("error: --loss: 1e300 ")
    assert "0" * 20 not in line


@pytest.mark.parametrize(
    ("args", "start"),
    [
        # Before: "error: loss.mean_loss: 2 is outside [0, 1)" for --loss 200%.
        (["--loss", "200%"], "error: --loss: 200% is outside [0, 1)"),
        (["--bytes", "0"], "error: --bytes: "),
        (["--cc", "nosuch"], "error: --cc: unknown congestion control 'nosuch'"),
        (["--qdisc", "bogus"], "error: --qdisc: unknown queue disc 'bogus'"),
        # --set names the spec path itself, and the last assignment is the one in effect.
        (["--loss", "5%", "--set", "loss.mean_loss=3"], "error: loss.mean_loss: 3 is outside"),
    ],
)
def test_errors_name_the_shorthand_option_the_user_gave(cli: Cli, args, start) -> None:
    assert error_line(cli("run", "v2g", *args)).startswith(start)


def test_texts_do_not_leak_between_commands(cli: Cli) -> None:
    error_line(cli("expand", "v2g", "--bytes", "1.5"))
    # Same value from a file this time: nothing the user typed to echo.
    errors.forget_texts()
    assert errors._echo_user_text("bytes: size '1.5e0' is bad") == "bytes: size '1.5e0' is bad"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.5, {"1.5", "1.5e0"}),
        (1e300, {"1" + "0" * 300, "1e300", "1e+300"}),
        (1e-7, {"0.0000001", "1e-7", "1e-07"}),
        (-2.25, {"-2.25", "-2.25e0"}),
        (42, {"42"}),
    ],
)
def test_renderings_of_the_core(value: float, expected: set[str]) -> None:
    assert set(errors._renderings(value)) == expected


# -- scenario fields as the user wrote them (issue 29) -----------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # Before: "error: links[1].rate_bps: 100000000000000 is outside ...".
        (
            ["v2g", "--set", "plc_rate=1e14"],
            "error: plc_rate: 1e14 is outside [1, 10000000000000] bit/s",
        ),
        # Before: "error: flows[20].start_ns: ...".
        (
            ["station", "--set", "stagger=1e4"],
            "error: stagger: ev21's transfer start (20 × stagger) is 200000 s, after the latest "
            "start accepted (86400 s, one day)",
        ),
        # Before: "error: wifi.data_rate_kbps: 3000 kbit/s is not an 802.11b rate ...".
        (
            ["vanet-chain", "--set", "wifi.rate=3Mbps"],
            "error: wifi.rate: 3000 kbit/s is not an 802.11b rate (allowed, Mbit/s: 1, 2, 5.5, 11)",
        ),
        # Before: "error: tcp.mss: 0 is outside [1, 65495] bytes".
        (["vanet-chain", "--set", "segment=0"], "error: segment: 0 is outside [1, 65495] bytes"),
        # Before: "error: links[1].queue_bytes: 0 is outside [1, 68719476736] bytes".
        (
            ["lte-cabin", "--set", "buffer=0"],
            "error: buffer: 0 is outside [1, 68719476736] bytes",
        ),
        # Before: q_w's lower bound in 310 characters.
        (
            ["v2g", "--set", 'qdisc={kind="red", q_w=0}'],
            "error: qdisc.q_w: must be between 2.2250738585072014e-308 and 1 (got 0)",
        ),
        # Before: "error: qdisc: missing field `kind`".
        (["v2g", "--set", "qdisc={limit=10}"], "error: qdisc.kind: missing (required)"),
        # Before: accepted (the flow never ran).
        (
            ["v2g", "--set", "start=2s", "--set", "stop=1s"],
            "error: stop: 1 s is not after the transfer's start, 2 s: a flow or session that "
            "starts at or after the stop never runs",
        ),
        # Before: accepted (maxP adapted within an empty range).
        (
            ["v2g", "--set", 'qdisc={kind="red", top=0.1, bottom=0.2}'],
            "error: qdisc.top: top = 0.1 is below bottom = 0.2: maxP is adapted between bottom "
            "and top",
        ),
    ],
)
def test_scenario_errors_name_the_field_as_written(
    cli: Cli, args: list[str], expected: str
) -> None:
    assert error_line(cli("expand", *args)) == expected


def test_a_missing_field_of_a_file_is_named_by_its_path(cli: Cli, tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text(
        'preset = "custom"\nnodes = ["a", "b"]\n'
        '[[links]]\na = "a"\nb = "b"\nrate = "1Mbps"\n'
        '[[flows]]\nsrc = "a"\ndst = "b"\nbytes = 1000\n'
    )
    # Before: "error: links[0]: missing field `delay`".
    assert error_line(cli("run", "--scenario", str(spec))) == (
        "error: links[0].delay: missing (required)"
    )


# -- --profile on every command that simulates ------------------------------------------


def test_run_profile(cli: Cli) -> None:
    for profile in ("ns3", "linux", "ns2"):
        res = cli("run", "v2g", "--bytes", "1MB", "--profile", profile, "--json")
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["profile"] == profile


def test_sweep_profile(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "s.parquet"
    res = cli(
        "sweep", "v2g", "--bytes", "1MB", "--runs", "1", "--profile", "linux", "--out", str(out)
    )
    assert res.exit_code == 0, res.output
    assert pd.read_parquet(out)["profile"].tolist() == ["linux"]


def test_bench_profile(cli: Cli) -> None:
    res = cli(
        "bench", "--bytes", "1MB", "--repeat", "1", "--profile", "linux", "--no-startup", "--json"
    )
    assert res.exit_code == 0, res.output
    spec = {**DEFAULT_BENCH_SPEC, "bytes": "1MB", "tcp": {"cc": "newreno", "profile": "linux"}}
    assert json.loads(res.stdout)["scenario_hash"] == vtlab.Scenario(spec).hash()
    assert vtlab.Scenario(spec).hash() != vtlab.Scenario({**spec, "tcp": {"cc": "newreno"}}).hash()


def test_validate_profile_reaches_the_vtlab_side_only() -> None:
    grid = validate.make_grid(["newreno"], ["5%"], 1, "1MB", None, quick=False, profile="linux")
    assert grid.profile == "linux"
    linux = validate.plan(grid, "h", "b", "/nonexistent/v2g")
    ns3_grid = validate.make_grid(["newreno"], ["5%"], 1, "1MB", None, quick=False)
    ns3 = validate.plan(ns3_grid, "h", "b", "/nonexistent/v2g")
    vt_linux = [t for t in linux if t.side == "vtlab"]
    vt_ns3 = [t for t in ns3 if t.side == "vtlab"]
    assert [json.loads(t.spec_json)["tcp"]["profile"] for t in vt_linux] == ["linux"]
    assert [json.loads(t.spec_json)["tcp"]["profile"] for t in vt_ns3] == ["ns3"]
    # ns-3 runs as itself either way; only the vtlab side's cache key changes.
    assert [t.args for t in linux if t.side == "ns-3"] == [t.args for t in ns3 if t.side == "ns-3"]
    assert [t.key for t in linux if t.side == "ns-3"] == [t.key for t in ns3 if t.side == "ns-3"]
    assert vt_linux[0].key != vt_ns3[0].key
    assert "--profile linux" in validate.explicit_command(grid, Path("v"), 1)
    assert "--profile" not in validate.explicit_command(ns3_grid, Path("v"), 1)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["reproduce"],
            "error: EXPERIMENT: give one of: park2019, martignon, hu-lte, janevski2014 (or --list)",
        ),
        (["reproduce", "lunar"], "error: EXPERIMENT: unknown experiment 'lunar'"),
        (["reproduce", "park2019", "--profile", "bsd"], "error: --profile: 'bsd' is not one of"),
    ],
)
def test_reproduce_shares_the_one_error_path(cli: Cli, args: list[str], expected: str) -> None:
    assert error_line(cli(*args)).startswith(expected)


def test_reproduce_checks_its_folder_before_running(cli: Cli, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    line = error_line(cli("reproduce", "park2019", "--quick", "--out", str(not_a_dir)))
    assert line.startswith("error: --out: ")
