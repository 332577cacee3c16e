"""``vtlab study iso15118``: the Wilson interval and the pooled quantile against values
computed by hand (and scipy's independent implementation), the plan (the stacks as
TCP settings, the grid's shape, the scenarios' settings), the registry and the CLI's
errors, and ``--quick`` end to end on a tiny grid: every listed file, survival in
[0, 1] inside its interval, the headline sentence, a rerun that simulates nothing."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import assert_usage_error
from vtlab import ScenarioError, experiments
from vtlab.experiments import iso15118 as S
from vtlab.experiments.common import Config
from vtlab.experiments.iso15118 import analysis, report
from vtlab.experiments.iso15118 import plan as P
from vtlab.scenario import Scenario

# -- the statistics ----------------------------------------------------------------------


def test_wilson_interval_by_hand() -> None:
    """8 of 10, z = 1.9599640 (z² = 3.8414588):
    centre = (0.8 + z²/20) / (1 + z²/10) = 0.99207294 / 1.38414588 = 0.71674016,
    half = z·√(0.8·0.2/10 + z²/400) / (1 + z²/10) = 1.9599640 · √0.02560365 / 1.38414588
         = 1.9599640 · 0.16001140 / 1.38414588 = 0.22657769,
    so [0.49016247, 0.94331785] (the usual published 0.490–0.943)."""
    lo, hi = S.wilson(8, 10)
    assert lo == pytest.approx(0.49016247, abs=1e-7)
    assert hi == pytest.approx(0.94331785, abs=1e-7)
    # 0 of 20: centre = half = (z²/40) / (1 + z²/20) = 0.09603647 / 1.19207294 = 0.08056258.
    assert S.wilson(0, 20) == pytest.approx((0.0, 0.16112516), abs=1e-7)
    # n of n: the lower end is n / (n + z²): 400 / 403.8414588 = 0.99048771, and 200
    # runs cannot show 0.99 (200 / 203.8414588 = 0.98115467).
    assert S.wilson(400, 400)[0] == pytest.approx(0.99048771, abs=1e-7)
    assert S.wilson(200, 200)[0] == pytest.approx(0.98115467, abs=1e-7)
    assert S.wilson(200, 200)[0] < P.SURVIVAL_TARGET
    assert analysis.best_lower_bound(400) == pytest.approx(S.wilson(400, 400)[0], abs=1e-12)
    assert all(math.isnan(x) for x in S.wilson(0, 0))
    # The ends at k = 0 and k = n are exact (never a hair past the point estimate).
    assert all(S.wilson(0, n)[0] == 0.0 and S.wilson(n, n)[1] == 1.0 for n in range(1, 500))


def test_wilson_interval_agrees_with_scipy() -> None:
    from scipy.stats import binomtest

    for k, n in [(0, 1), (3, 7), (19, 20), (395, 400), (1000, 1000)]:
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert S.wilson(k, n) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_nearest_rank_quantile_of_counts() -> None:
    """Values 1, 2, 3 seen 990, 9 and 1 times (1000 in all): p99 is the value at rank
    ⌈0.99·1000⌉ = 990, i.e. 1; p99.9 the one at rank 999, i.e. 2; p50 at 500: 1."""
    values, counts = np.array([3.0, 1.0, 2.0]), np.array([1, 990, 9])
    assert analysis.nearest_rank(values, counts, 0.99) == 1.0
    assert analysis.nearest_rank(values, counts, 0.999) == 2.0
    assert analysis.nearest_rank(values, counts, 0.5) == 1.0
    assert analysis.nearest_rank(values, counts, 1.0) == 3.0
    assert math.isnan(analysis.nearest_rank(np.array([]), np.array([], dtype=int), 0.5))


# -- the plan ----------------------------------------------------------------------------


def test_the_stacks_are_the_three_tcp_settings() -> None:
    assert P.STACKS == {
        "ns3": {"profile": "ns3"},
        "linux": {"profile": "linux", "tlp": False, "rack": False},
        "linux+rack-tlp": {"profile": "linux", "tlp": True, "rack": True},
    }
    assert P.FULL.stacks == P.QUICK.stacks == tuple(P.STACKS)


def test_full_grid_shape() -> None:
    grids = S.grids(S.FULL, "ns3", S.FULL.runs)
    shape = {name: [len(a.levels) for a in g.axes] for name, g in grids.items()}
    assert shape == {"vehicle": [8, 3, 3, 4], "station": [2, 1, 3, 2]}
    assert grids["vehicle"].runs is None and grids["station"].runs == S.FULL.station_runs
    assert all(g.messages == "counts" for g in grids.values())
    # Enough runs that a cell where all survive shows ≥ 99 % by its lower bound.
    assert S.wilson(S.FULL.runs, S.FULL.runs)[0] >= P.SURVIVAL_TARGET
    assert S.FULL.duration_s == 1800 and S.QUICK.duration_s == 300 and S.QUICK.runs == 20
    assert S.grids(S.FULL, "ns3", 3)["station"].runs == 3  # at most --seeds


def _accepted(stack: str) -> bool:
    try:
        Scenario({"preset": "v2g", "session": {}, "tcp": P.STACKS[stack]}).hash()
    except ScenarioError:
        return False
    return True


#: The stacks the core in use accepts (the tlp/rack settings are new).
ACCEPTED = tuple(s for s in P.STACKS if _accepted(s))


def _tiny(**changes) -> P.Plan:
    plan = P.Plan(
        runs=4,
        duration_s=20.0,
        losses=(0.0, 0.02),
        bursts=("1–4",),
        ccs=("newreno",),
        station_runs=1,
        station_losses=(0.0,),
        station_bursts=("1–4",),
        station_ccs=("newreno",),
        stacks=ACCEPTED,
        station_vehicles=3,
    )
    return dataclasses.replace(plan, **changes)


def test_scenarios_carry_the_cell_settings() -> None:
    plan = _tiny(losses=(0.0, 0.01), bursts=("1", "4–8"))
    grid = S.grids(plan, "ns3", plan.runs)["vehicle"]
    points = grid.sweep(1, "ns3").points()
    assert len(points) == 2 * 2 * len(ACCEPTED)
    for p in points:
        lab = p.label_dict
        spec = p.scenario.expanded()
        plc = next(link for link in spec["links"] if link["name"] == "plc")
        lo, hi = P.BURSTS[lab["burst"]]
        for side in ("loss_ab", "loss_ba"):  # both directions, the same model
            assert plc[side]["model"] == "burst"
            assert plc[side]["mean_loss"] == pytest.approx(lab["loss"], abs=1e-12)
            assert (plc[side]["burst_min"], plc[side]["burst_max"]) == (lo, hi)
        assert spec["flows"] == []  # the session alone, no bulk transfer
        (session,) = spec["sessions"]
        assert session["profile"] == P.PROFILE
        assert session["tcp"]["profile"] == P.STACKS[lab["stack"]]["profile"]
        assert session["tcp"]["cc"] == lab["algorithm"]
        loop = next(s for s in session["steps"] if s["name"] == "CurrentDemand")
        assert loop["repeats"] == math.ceil(20 / 0.22) == plan.loop_exchanges


def test_station_runs_beside_endless_bulk_transfers() -> None:
    spec = Scenario(P.station_base(S.FULL)).expanded()
    assert len(spec["sessions"]) == len(spec["flows"]) == 21
    # 1 GB would take a third of a 10 Mbit/s segment 800 s; 10 GB never finish.
    assert all(f["bytes"] == 10_000_000_000 for f in spec["flows"])
    # The last session starts at 40 ms and plans 1800 s of loop: the run stops after.
    assert spec["stop_ns"] / 1e9 == P.station_stop_s(S.FULL) >= 1800 + 30


# -- the command -------------------------------------------------------------------------


def test_registered_as_an_own_study_without_paper() -> None:
    assert "iso15118" in experiments.names("study")
    assert "iso15118" not in experiments.names()  # not a paper reproduction
    assert experiments.load_study("iso15118", "study") is S.STUDY
    assert not S.STUDY.has_paper and len(S.STUDY.paper()) == 0
    assert "comparison.csv" not in S.expected_outputs()


def test_cli_lists_and_refuses(cli, tmp_path: Path) -> None:
    res = cli("study", "--list")
    assert res.exit_code == 0 and res.stdout.startswith("iso15118")
    assert_usage_error(cli("study", "nope"), "STUDY", "iso15118")
    assert_usage_error(cli("study", "iso15118", "--seeds", "0", "-o", str(tmp_path)), "--seeds")
    assert_usage_error(cli("study", "iso15118", "--profile", "linux"), "--profile")


@pytest.fixture(scope="module")
def quick(tmp_path_factory, monkeypatch_module):
    """``vtlab study iso15118 --quick`` on a tiny plan (4 runs of 20 s sessions, loss
    0 and 2 %, the stacks the core accepts, a station of 3 vehicles)."""
    from typer.testing import CliRunner

    from vtlab.cli.app import app

    monkeypatch_module.setattr(P, "QUICK", _tiny())
    out = tmp_path_factory.mktemp("iso15118-quick")
    res = CliRunner().invoke(app, ["study", "iso15118", "--quick", "-o", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    return out, res


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_quick_writes_every_listed_file(quick) -> None:
    out, res = quick
    missing = [n for n in S.expected_outputs() if not (out / n).is_file()]
    assert missing == []
    assert "report.md" in res.output and "runs simulated" in res.output


def test_survival_values_are_probabilities_inside_their_intervals(quick) -> None:
    out, _ = quick
    for name in ("cells", "station"):
        t = pd.read_csv(out / f"{name}.csv")
        assert len(t) and t["survival"].between(0, 1).all()
        assert (t["wilson_lo"] <= t["survival"] + 1e-12).all()
        assert (t["survival"] <= t["wilson_hi"] + 1e-12).all()
        assert (t["survival"] == t["survived"] / t["n"]).all()
    cells = pd.read_csv(out / "cells.csv")
    assert len(cells) == 2 * len(ACCEPTED) and (cells["n"] == 4).all()
    free = cells[cells["loss"] == 0]
    assert (free["survived"] == 4).all()  # loss-free: every session completes
    # ... and answers every CurrentDemand in the same loss-free time (1.9768 ms, the
    # derivation in tests/python/test_sessions.py), 91 per session.
    assert (free["exchanges"] == 4 * math.ceil(20 / 0.22)).all() and (free["missed"] == 0).all()
    # The Linux stacks' vehicle acknowledges the response before the first CurrentDemand
    # at once (Linux's quick ACKs, outside interactive mode: docs/tcp-model.md, Receiver)
    # and writes that request right after, so it leaves behind the pure ACK: 52 B TCP/IP
    # with timestamps + 2 B framing = 54 B at 10 Mbit/s, 43.2 us more. With 364
    # exchanges per cell the nearest-rank p99.9 is the largest.
    want = [1.9768e-3 + (43.2e-6 if s.startswith("linux") else 0.0) for s in free["stack"]]
    assert free["p99.9_s"].to_numpy() == pytest.approx(want, abs=1e-9)
    station = pd.read_csv(out / "station.csv")
    assert (station["n"] == 3).all()  # 3 vehicles × 1 run


def test_report_states_the_headline(quick) -> None:
    out, _ = quick
    text = (out / "report.md").read_text()
    assert "## Headline" in text and report.HEADLINE in text
    assert "lower end of the two-sided 95 % Wilson score interval" in text
    h = pd.read_csv(out / "headline.csv")
    assert list(h["stack"]) == list(ACCEPTED)
    # 4 runs cannot show 99 %: 4 / (4 + z²) = 0.510.
    assert h["tolerable_loss"].isna().all()
    assert h["best_possible_lo"].to_numpy() == pytest.approx(4 / (4 + P.Z95**2))
    for stack in ACCEPTED:
        assert f"* **`{stack}`: none** (at 0 % the weakest cell has 4/4, lower bound 0.510" in text
    findings = pd.read_csv(out / "findings.csv", keep_default_na=False)
    assert findings.iloc[0]["verdict"] == "holds"  # every loss-free session completes
    assert set(findings["verdict"]) <= {"holds", "does not hold", "partly", "n/a"}


def test_rerun_loads_everything(quick, monkeypatch) -> None:
    out, _ = quick
    monkeypatch.setattr(P, "QUICK", _tiny())

    def no_simulation(*args, **kwargs):
        raise AssertionError("stored runs must not be simulated again")

    monkeypatch.setattr("vtlab.sweep._core.run", no_simulation)
    outcome = S.STUDY.reproduce(Config(out=out, quick=True, progress=False, verb="study"))
    assert outcome.simulated == 0 and outcome.loaded == 2 * len(ACCEPTED) * 4 + len(ACCEPTED)


def test_rare_event_table_per_setting(quick) -> None:
    out, _ = quick
    t = pd.read_csv(out / "rare.csv")
    plan = _tiny()
    assert list(t["setting"]) == list(plan.rare_settings) and set(t["burst"]) == {"1–4"}
    for loss in ("1e-06", "1e-05"):
        assert (t[f"lower@{loss}"] <= t[f"survival@{loss}"] + 1e-12).all()
        assert (t[f"survival@{loss}"] <= t[f"upper@{loss}"] + 1e-12).all()
    # A 20 s loop meets a burst at 10⁻⁶ with probability about 2·230·10⁻⁶/2.5 < 10⁻³,
    # so even a setting that survives no burst keeps a lower end above 0.999.
    assert (t["lower@1e-06"] > 0.999).all()
    assert (t["overruns"] == 0).all()
    assert (out / "rare" / t["evidence"].iloc[0]).is_file()
    assert (
        "## Survival per setting, down to one lost packet in a million"
        in (out / "report.md").read_text()
    )
