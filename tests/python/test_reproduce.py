"""``vtlab reproduce park2019``: the quick reproduction end to end (every file, the
paper's numbers in the report, the study's findings that hold in our model), re-runs
that simulate nothing, ``--list`` and bad options; the paper-values file."""

from __future__ import annotations

import csv
import json
import math
import re
import time
from pathlib import Path

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from conftest import assert_usage_error
from vtlab.cli import reproduce
from vtlab.experiments import common, park2019
from vtlab.experiments.common import Comparison, Config


def _paper():
    return park2019.paper()


def _app() -> typer.Typer:
    """The real CLI if ``reproduce`` is registered there, else an app with just it."""
    from vtlab.cli.app import app as main_app

    if any(c.name == "reproduce" for c in main_app.registered_commands):
        return main_app
    app = typer.Typer()

    @app.callback()
    def main() -> None:  # a group, so that "reproduce" stays a subcommand
        pass

    reproduce.register(app)
    return app


@pytest.fixture(scope="module")
def invoke():
    runner = CliRunner()
    app = _app()

    def run(*args: str):
        return runner.invoke(app, ["reproduce", *args], catch_exceptions=True)

    return run


@pytest.fixture(scope="module")
def quick(tmp_path_factory, invoke):
    """The quick reproduction, run once for the module: (folder, result, seconds)."""
    out = tmp_path_factory.mktemp("park2019-quick")
    started = time.perf_counter()
    res = invoke("park2019", "--quick", "--out", str(out), "--quiet")
    wall = time.perf_counter() - started
    assert res.exit_code == 0, res.output + res.stderr
    return out, res, wall


def _csv(out: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(out / f"{name}.csv")


def _goodput(frame: pd.DataFrame, variant: str, loss: float, **extra) -> float:
    rows = frame[(frame["variant"] == variant) & (frame["loss"].sub(loss).abs() < 1e-12)]
    for col, value in extra.items():
        rows = rows[rows[col] == value]
    assert len(rows) == 1, (variant, loss, extra)
    return float(rows["goodput_mbps"].iloc[0])


# -- the quick reproduction ------------------------------------------------------------


def test_quick_writes_every_listed_file(quick):
    out, res, _ = quick
    for name in park2019.expected_outputs():
        path = out / name
        assert path.is_file() and path.stat().st_size > 0, name
    for stem in park2019.FIGURES:
        assert (out / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "<svg" in (out / f"{stem}.svg").read_text()[:2000]
    assert "wall time" in res.stdout and "report.md" in res.stdout


def test_report_has_the_papers_table2_and_the_setup(quick):
    out, _, _ = quick
    report = (out / "report.md").read_text()
    paper = _paper()
    for entry in paper.values():
        if entry.id.startswith(("table2/", "quote/", "ratio/")):
            assert f"{entry.value:.3f}" in report, entry.id
    assert "`vtlab reproduce park2019 --quick`" in report
    assert "`ns3`" in report and "burst-start probability" in report
    assert "campaign wall time" in report and "Large deviations" in report
    assert "Quick version" in report
    # Table 2 files: the paper's values beside ours, relative difference consistent.
    t2 = _csv(out, "table2")
    assert set(t2["size_mb"]) == set(park2019.QUICK.sizes_mb)
    assert len(t2) == len(park2019.VARIANTS) * len(park2019.QUICK.sizes_mb)
    for row in t2.itertuples():
        value = paper.value(f"table2/{row.variant}/{row.size_mb}")
        assert row.paper_mbps == value
        assert math.isclose(row.rel_diff, (row.goodput_mbps - value) / value)
    # The comparison table prints the file's values, in the file's order.
    comparison = _csv(out, "comparison")
    printed = [e for e in paper.values() if e.id.startswith(("table2/", "quote/", "ratio/"))]
    assert list(comparison["paper"]) == [e.value for e in printed]
    assert list(comparison["quantity"]) == [e.label for e in printed]
    assert "| File size |" in (out / "table2.md").read_text()
    # The 10 MB row's deviation cites ns-3.44 at 10 MB (validation/park2019/).
    short = [line for line in report.splitlines() if line.startswith("* *Short transfers.*")]
    assert len(short) == 1 and "ns-3.44 at 10 MB" in short[0]
    assert "unexplained" not in short[0]


def test_quick_findings_that_hold_in_our_model(quick):
    """The study's qualitative findings that vtlab reproduces robustly even on the
    quick run (means over the runs; loss levels are those of the quick plan)."""
    out, _, _ = quick
    lo, hi = min(park2019.QUICK.losses), max(park2019.QUICK.losses)
    fig11 = _csv(out, "fig11")
    for connections in (1, park2019.QUICK.vehicles):
        # §5: NewReno SC above NewReno at 5 % loss.
        sc = _goodput(fig11, "NewReno SC", hi, connections=connections)
        nr = _goodput(fig11, "NewReno", hi, connections=connections)
        assert sc > 1.5 * nr, (connections, sc, nr)
    for name in ("fig4", "fig6"):
        frame = _csv(out, name)
        for variant in park2019.VARIANTS:
            # Every variant's goodput falls from the lowest to the highest loss level.
            assert _goodput(frame, variant, hi) < 0.5 * _goodput(frame, variant, lo), (
                name,
                variant,
            )
        # §3.1/§3.2: Illinois well above NewReno at 5 %.
        assert _goodput(frame, "Illinois", hi) > 1.5 * _goodput(frame, "NewReno", hi), name
    # §3.2: a segment's capacity is shared by its three vehicles.
    ratio = _goodput(_csv(out, "fig4"), "NewReno", lo) / _goodput(_csv(out, "fig6"), "NewReno", lo)
    assert 2.0 < ratio < 4.5
    # §3.3, Fig. 8: Illinois has fewer slow starts (RTO) than NewReno at 5 %.
    ev = _csv(out, "fig8")
    ev = ev[(ev["event"] == "Slow Start") & (ev["loss"] == hi)].set_index(
        ["connections", "variant"]
    )["mean"]
    for connections in (1, park2019.QUICK.vehicles):
        assert ev[(connections, "Illinois")] < ev[(connections, "NewReno")]


def test_rerun_simulates_nothing(quick, invoke, monkeypatch):
    out, _, _ = quick
    before = sorted(out.glob("*/part-*.parquet"))
    report_before = (out / "report.md").read_text()

    def no_simulation(*args, **kwargs):
        raise AssertionError("a finished campaign must not simulate again")

    monkeypatch.setattr("vtlab.sweep._core.run", no_simulation)
    res = invoke("park2019", "--quick", "--out", str(out), "--quiet")
    assert res.exit_code == 0, res.output + res.stderr
    assert "(0 runs simulated" in res.stdout
    assert sorted(out.glob("*/part-*.parquet")) == before
    # Same numbers; the campaign wall time is still the simulating session's.
    report = (out / "report.md").read_text()
    table = report.split("## Table 2")[1].split("## Qualitative")[0]
    assert table == report_before.split("## Table 2")[1].split("## Qualitative")[0]
    sessions = json.loads((out / "campaign.json").read_text())["sessions"]
    assert [s["simulated_runs"] > 0 for s in sessions] == [True, False]
    wall = re.search(r"campaign wall time \| ([0-9.]+) s", report)
    assert wall and float(wall.group(1)) == pytest.approx(sessions[0]["wall_s"], abs=0.06)


# -- the command line ------------------------------------------------------------------


def test_list(invoke):
    res = invoke("--list")
    assert res.exit_code == 0
    assert res.stdout.startswith("park2019")
    assert "Table 2" in res.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["park2019", "--profile", "bsd"], "--profile: 'bsd' is not one of 'ns3', 'linux', 'ns2'"),
        (["park2019", "--runs", "0"], "--runs must be at least 1"),
        (["park2019", "--jobs", "0"], "--jobs must be at least 1"),
        (["nosuchpaper"], "unknown experiment 'nosuchpaper' (available: park2019"),
        ([], "EXPERIMENT: give one of: park2019"),
    ],
)
def test_bad_options_exit_2(invoke, tmp_path, args, needle):
    res = invoke(*args, "--out", str(tmp_path / "x"))
    assert_usage_error(res, needle)
    assert not (tmp_path / "x" / "runs").exists()


def test_out_must_be_a_directory(invoke, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    assert_usage_error(invoke("park2019", "--quick", "--out", str(f)), "not a directory")


# -- declarations and helpers ----------------------------------------------------------


def test_paper_values_every_number_has_a_location():
    paper = _paper()
    for e in paper.values():
        assert e.where.strip() and e.label.strip(), e.id
        assert math.isfinite(e.value), e.id
    # Table 2 has 7 transfer sizes × 10 variants (paper §3.1).
    table2 = paper.group("table2/")
    assert len(table2) == 7 * 10
    assert {e.extra["size_mb"] for e in table2} == {10, 50, 100, 200, 400, 600, 800}
    assert all(e.where.startswith("Table 2") and e.unit == "Mbit/s" for e in table2)
    # The text quotes 8 goodputs (§3.1: NewReno and Illinois at 0.25 % and 5 %; §3.2:
    # the same for 21 vehicles) and 5 ratios (four of them from those goodputs, plus
    # Illinois AA's "about 41 % better" in §5).
    assert len(paper.group("quote/")) == 8
    assert len(paper.group("ratio/")) == 5


def test_paper_values_spot_checked_by_hand():
    """Values read off the paper by hand (Table 2 corners, §3.1 and §5)."""
    paper = _paper()
    assert paper.value("table2/NewReno/10") == 0.418
    assert paper.value("table2/Westwood/800") == 0.426
    assert paper.value("table2/Illinois/100") == 2.266
    assert paper.value("runs") == 6
    assert paper.value("sc_above_illinois_from") == 0.0375
    # "3.7 times higher": 2.266 / 0.485.
    assert paper.value("ratio/fig4/Illinois/5/NewReno") == pytest.approx(2.266 / 0.485)
    assert paper.value("ratio/fig11a/Illinois AA/5/Illinois") == 1.41
    assert "§5" in paper["ratio/fig11a/Illinois AA/5/Illinois"].where


def test_grids_apply_the_profile_and_share_points():
    grids = park2019.grids(park2019.FULL)
    for grid in grids.values():
        for point in grid.sweep(1, "linux").points()[:2]:
            assert point.scenario.spec["tcp"]["profile"] == "linux"
    # Table 2's 100 MB column is Fig. 4's 5 % point: the store runs it once.
    t2 = {p.key for p in grids["table2"].sweep(1, "ns3").points()}
    f4 = {p.key for p in grids["fig4"].sweep(1, "ns3").points()}
    assert len(t2 & f4) == len(park2019.VARIANTS)
    assert {p.label_dict["variant"] for p in grids["fig12"].sweep(1, "ns3").points()} == set(
        park2019.FIG12_VARIANTS
    )


def test_config_checks_and_command():
    with pytest.raises(ValueError, match="--profile"):
        Config(out=Path("x"), profile="bsd")
    cfg = Config(out=Path("x"), quick=True, profile="linux", runs=3)
    assert cfg.command("park2019") == "vtlab reproduce park2019 --quick --profile linux --runs 3"


def test_comparison_and_tables():
    c = Comparison("s", "q", paper=2.0, ours=3.0, ci=0.5, n=6, sd=0.4)
    assert c.rel == pytest.approx(0.5) and c.large
    assert not c.within_noise(6)
    assert Comparison("s", "q", paper=2.0, ours=2.2, n=6, sd=0.4).within_noise(6)
    assert common.fmt_rel(0.5) == "**+50.0 %**" and common.fmt_rel(-0.1) == "-10.0 %"
    assert common.fmt_ci(1.23456, math.nan) == "1.235"
    assert common.md_table(["a", "b"], [["x|y", 1]]).splitlines()[2] == "| x\\|y | 1 |"


def test_within_counts_bands():
    """Relative differences +5 %, −10 % (on the ±10 % edge), +20 %, −30 % and one
    without a vtlab value: 4 compared, 2 within ±10 %, 3 within ±25 %."""
    rows = [
        Comparison("s", "a", paper=100.0, ours=105.0),
        Comparison("s", "b", paper=100.0, ours=90.0),
        Comparison("s", "c", paper=100.0, ours=120.0),
        Comparison("s", "d", paper=100.0, ours=70.0),
        Comparison("s", "e", paper=100.0, ours=math.nan),
    ]
    assert common.within_counts(rows) == (4, 2, 3)
    assert common.within_sentence(rows, " here").startswith(
        "Of the paper's 4 numbers compared here, 2 are within ±10 % of vtlab's and 3 within"
    )
    assert common.within_sentence(rows[4:]) == ""


def test_campaign_wall_time_sums_simulating_sessions(tmp_path):
    key = {"experiment": "t", "quick": True}
    assert common.record_session(tmp_path, key, 10.0, 5) == 10.0
    assert common.record_session(tmp_path, key, 1.0, 0) == 10.0  # re-render only
    assert common.record_session(tmp_path, key, 4.0, 2) == 14.0  # resumed
    assert common.record_session(tmp_path, {"other": 1}, 3.0, 1) == 3.0


def test_runs_of_another_core_build_are_never_reused(tmp_path):
    # Store keys carry the core build: a run file of another build does not match.
    from vtlab.sweep import Sweep

    (points,) = Sweep({"preset": "v2g", "bytes": "1MB"}, seeds=[1]).points()
    assert points.key.endswith(common.core_build()[:8])
    campaign = common.Campaign(Config(out=tmp_path, log=[].append), default_runs=2)
    assert campaign.runs == 2
    common.record_session(tmp_path, {"k": 1}, 1.0, 1)
    assert common.read_sessions(tmp_path)[-1]["core_build"] == common.core_build()


def test_station_agreement_read_from_validation_data(tmp_path):
    """The report's station paragraph states what the validation files say."""
    from vtlab.experiments.park2019.deviations import station_validation

    assert "hold no 21-vehicle cells" in station_validation(21, tmp_path / "validation")
    folder = tmp_path / "validation" / "station"
    folder.mkdir(parents=True)
    pd.DataFrame(
        {
            "cc": ["newreno", "newreno", "cubic"],
            "loss": [0.0, 0.05, 0.05],
            "topology": [21, 21, 21],
            "ns3_n": [3, 3, 3],
            "ratio": [1.0, 0.99, 1.2],
            "verdict": ["agree", "agree", "DIFFERS"],
        }
    ).to_csv(folder / "agreement.csv", index=False)
    text = station_validation(21, tmp_path / "validation")
    assert "agrees in 2 of 3 cells" in text
    assert "0.990–1.200" in text and "newreno, cubic at 0 %, 5 %" in text
    assert "validation/station/agreement.csv" in text


def _csv_rows(validation: Path, topology: str) -> list[dict[str, str]]:
    """The rows of every ``agreement.csv`` under ``validation`` whose ``topology`` field
    reads ``topology``, read with the csv module (text, no type inference): the
    independent count the report's lookup must match."""
    rows = []
    for path in [validation / "agreement.csv", *validation.glob("*/agreement.csv")]:
        with open(path, newline="") as fh:
            rows += [r for r in csv.DictReader(fh) if r.get("topology") == topology]
    return rows


def test_agreement_lookup_over_the_real_validation_folder():
    """The validation data vtlab ships mix agreement files with and without a
    ``topology`` column (wifi, lte, kernel, ...); the 1- and 21-vehicle cells are
    found all the same, and the report quotes them instead of saying there are none."""
    from vtlab.experiments.park2019.analysis import ns3_reference, station_agreement
    from vtlab.experiments.park2019.deviations import station_validation
    from vtlab.packagedata import validation_dir

    validation = validation_dir()
    assert (validation / "agreement.csv").is_file()
    for vehicles in (1, 21):
        expected = _csv_rows(validation, str(vehicles))
        assert expected, f"the committed validation data have {vehicles}-vehicle cells"
        assert len(station_agreement(vehicles, validation)) == len(expected)
        text = station_validation(vehicles)
        assert "hold no" not in text and "agrees in " in text
    assert "validation/station21/agreement.csv" in station_validation(21)
    # ts-on comes from the agreement table itself (NewReno at 5 %, one vehicle).
    (row,) = [r for r in _csv_rows(validation, "1") if r["cc"] == "newreno" and r["loss"] == "0.05"]
    ref = ns3_reference()
    assert ref is not None
    assert ref[("NewReno", 0.05, "ts-on")] == float(row["ns3_goodput_mbps"])


def test_park2019_lookups_by_label():
    from vtlab.experiments.park2019.analysis import _lookup, _mean
    from vtlab.experiments.park2019.findings import first_vehicle

    # A summary as the store gives it: Arrow strings, losses from arithmetic
    # (0.01 * 5 is 0.05000000000000000277: np.isclose to 0.05).
    summary = pd.DataFrame(
        {
            "variant": pd.array(["NewReno", "Cubic", "Cubic"], dtype="string[pyarrow]"),
            "loss": [0.05, 0.01 * 5, 0.01],
            "mean": [1.0, 2.0, 3.0],
        }
    )
    assert _mean(summary, variant="Cubic", loss=0.05) == 2.0  # row 1, not row 0's variant
    row = _lookup(summary, variant="Cubic")  # rows 1 and 2: the first
    assert row is not None and row.name == 1
    assert _lookup(summary, variant="Cubic", loss=0.02) is None
    assert math.isnan(_mean(summary, variant="Vegas"))
    # The first vehicle: ev1 where a trace has it, else the flow that comes first.
    traces = pd.DataFrame(
        {"flow": pd.array(["ev3", "ev1", "ev3", "ev1"], dtype="string[pyarrow]"), "t": [0, 1, 2, 3]}
    )
    assert list(first_vehicle(traces)["t"]) == [1, 3]
    assert list(first_vehicle(traces[traces["flow"] != "ev1"])["t"]) == [0, 2]
