"""The summary tables of ``vtlab run`` and ``vtlab sweep`` (vtlab.cli.tables): cells
rounded to their interval, no interval for one run, all-zero counts left out, 80
columns, the reasons of runs not done, and the csv / markdown / json formats."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from conftest import assert_usage_error
from vtlab.cli.tables import FLOW_METRICS, cell

GOODPUT, COMPLETION, RETX = FLOW_METRICS[0], FLOW_METRICS[1], FLOW_METRICS[2]


@pytest.mark.parametrize(
    ("metric", "mean", "ci", "n", "text"),
    [
        # one run: the value alone, at the metric's digits (counts: none)
        (GOODPUT, 733_000.0, math.nan, 1, "0.733"),
        (RETX, 216.0, math.nan, 1, "216"),
        # the interval to two significant digits, the mean to the same place:
        # 0.17 Mbit/s → 2 decimals; 11.6 s → 0; 8.7 → 1 (counts at most 1)
        (GOODPUT, 800_000.0, 170_000.0, 6, "0.80 ±0.17"),
        (COMPLETION, 51.88, 11.6, 6, "52 ±12"),
        (RETX, 31.3, 8.7, 6, "31.3 ±8.7"),
        (RETX, 250.4, 28.1, 6, "250 ±28"),
        # a zero interval (every run the same): the metric's digits
        (GOODPUT, 9_504_097.0, 0.0, 10, "9.504 ±0.000"),
        (COMPLETION, math.nan, math.nan, 0, "–"),
    ],
)
def test_cells(metric, mean, ci, n, text):
    assert cell(metric, mean, ci, n) == text


def _lines(result) -> list[str]:
    assert result.exit_code == 0, result.output + result.stderr
    return result.stdout.splitlines()


def test_one_run_has_no_interval_and_the_table_fits_80_columns(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    one = _lines(cli("run", "v2g", "--loss", "5%", "--bytes", "2MB"))
    assert one[0].rstrip() == "vtlab: 1 run" and not any("±" in line for line in one)
    for args in (["v2g", "--runs", "6"], ["station", "--runs", "3"]):
        lines = _lines(cli("run", *args, "--loss", "5%", "--bytes", "1MB"))
        assert all(len(line.rstrip()) <= 80 for line in lines), lines
        assert "…" not in "".join(lines)  # nothing cut


def test_all_zero_counts_are_left_out_unless_asked(cli):
    lossless = _lines(cli("run", "v2g", "--loss", "0%", "--bytes", "1MB", "--runs", "2"))
    header = lossless[1].split()
    assert header[:5] == ["cc", "flow", "done", "goodput", "compl."]
    assert "RTO" not in header and "lerr" not in header
    asked = _lines(
        cli("run", "v2g", "--loss", "0%", "--bytes", "1MB", "--columns", "goodput_bps,RTO")
    )
    assert asked[1].split() == ["cc", "flow", "done", "goodput", "RTO"]
    bad = cli("run", "v2g", "--bytes", "1MB", "--columns", "nosuch")
    assert_usage_error(bad, "--columns", "unknown column 'nosuch'", "goodput_bps")


def test_done_says_why_the_other_runs_ended(cli):
    lines = _lines(cli("run", "v2g", "--loss", "5%", "--runs", "2", "--set", "stop=1s"))
    assert "not done: newreno evcc: 2 stop_time" in lines
    assert lines[3].split()[2] == "0/2"


def test_csv_carries_every_metric_in_base_units(cli):
    one = json.loads(_lines(cli("run", "v2g", "--loss", "1%", "--bytes", "1MB", "--json"))[0])
    res = cli("run", "v2g", "--loss", "1%", "--bytes", "1MB", "--format", "csv")
    (row,) = list(csv.DictReader(io.StringIO(res.stdout)))
    assert row["cc"] == "newreno" and row["runs"] == "1" and row["done"] == "1"
    assert float(row["goodput_bps_mean"]) == one["goodput_bps"]
    assert float(row["drops_aqm_mean"]) == one["drops_aqm"]  # all-zero, still there
    assert row["goodput_bps_ci95"] == "" and row["goodput_bps_n"] == "1"


def test_markdown_json_and_sweep_formats(cli):
    md = _lines(cli("run", "v2g", "--bytes", "1MB", "--runs", "2", "--format", "markdown"))
    assert md[0].startswith("| cc | flow | done | goodput |") and md[1].startswith("| --- |")
    assert md[2].startswith("| newreno | evcc | 2/2 |")
    as_json = cli("run", "v2g", "--bytes", "1MB", "--format", "json")
    assert _lines(as_json) == _lines(cli("run", "v2g", "--bytes", "1MB", "--json"))
    sweep = cli(
        "sweep",
        "v2g",
        "--axis",
        "loss:loss.mean_loss=1%,5%",
        "--runs",
        "2",
        "--bytes",
        "1MB",
        "--format",
        "csv",
        "--quiet",
    )
    rows = list(csv.DictReader(io.StringIO(sweep.stdout)))
    assert [r["loss"] for r in rows] == ["1%", "5%"] and {r["runs"] for r in rows} == {"2"}
    swept = _lines(
        cli(
            "sweep",
            "v2g",
            "--axis",
            "loss:loss.mean_loss=1%",
            "--runs",
            "2",
            "--bytes",
            "1MB",
            "--format",
            "json",
        )
    )
    assert len(swept) == 2 and json.loads(swept[0])["seed"] == 1


def test_bad_formats_are_one_error_line(cli):
    assert_usage_error(cli("run", "v2g", "--format", "xml"), "--format", "'xml' is not one of")
    assert_usage_error(
        cli("run", "v2g", "--json", "--format", "csv"), "--format", "contradicts --json"
    )


def test_a_station_gets_an_aggregate_row_with_jains_index(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    args = ["run", "station", "--loss", "1%", "--bytes", "500kB"]
    rows = [json.loads(x) for x in _lines(cli(*args, "--json"))]
    x = [r["goodput_bps"] for r in rows]
    # by hand: the sum, and Jain's (Σx)² / (n·Σx²) over the 21 vehicles
    total, jain = sum(x), sum(x) ** 2 / (len(x) * sum(v * v for v in x))
    expected = f"newreno, all 21 flows: aggregate goodput {total / 1e6:.3f} Mbit/s · "
    expected += f"Jain's index {jain:.3f}"
    assert expected in _lines(cli(*args))
    # a single flow, or a session's two flows, have none
    assert "aggregate" not in cli("run", "v2g", "--bytes", "500kB").stdout
