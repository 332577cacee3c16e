"""``vtlab reproduce martignon``: the loss-classification columns, the orderings the
study rests on (Ideal-LP ≥ LP ≥ NewReno on a lossy, uncongested link; LP ≈ NewReno on
an error-free congested one), Jain's index, and the quick reproduction end to end
(every listed file, a re-run that simulates nothing)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import vtlab
from vtlab.cli import reproduce
from vtlab.experiments import common, martignon
from vtlab.experiments.common import Config

CLASSIFICATION = (
    "loss_events",
    "true_link_losses",
    "true_congestion_losses",
    "predicted_link_losses",
    "predicted_congestion_losses",
    "correct_predictions",
)


def _spec(cc: str, *, per: float, rate: str = "10Mbps", stop: str = "60s", **extra) -> dict:
    return {
        "preset": "wired-wireless",
        "qdisc": martignon.QDISC,  # the study's ns-2 drop-tail links
        "wired_rate": rate,
        "bytes": "10GB",
        "stop": stop,
        "loss": {"model": "bernoulli", "mean_loss": per},
        "tcp": {**martignon.TCP, "cc": cc},
        **extra,
    }


def _goodputs(per: float, seeds, **extra) -> pd.DataFrame:
    rows = []
    for label, cc in martignon.VARIANTS.items():
        for seed in seeds:
            f = vtlab.run(_spec(cc, per=per, **extra), seed=seed).flows.iloc[0]
            rows.append({"variant": label, "seed": seed, **f.to_dict()})
    return pd.DataFrame(rows)


# -- the engine's columns and the orderings ---------------------------------------------


def test_accuracy_columns_exist_and_accuracy_is_a_fraction():
    res = vtlab.run(_spec("newreno-lp", per=0.01), seed=1)
    f = martignon.with_accuracy(res.flows)
    for col in CLASSIFICATION:
        assert col in res.flows.columns
    row = f.iloc[0]
    assert row["loss_events"] > 10
    assert 0.0 <= row["accuracy"] <= 1.0
    assert row["predicted_link_losses"] + row["predicted_congestion_losses"] == row["loss_events"]
    assert row["true_link_losses"] + row["true_congestion_losses"] <= row["loss_events"]
    # A sender without a predictor classifies nothing.
    nr = vtlab.run(_spec("newreno", per=0.01), seed=1).flows.iloc[0]
    assert nr["predicted_link_losses"] == nr["predicted_congestion_losses"] == 0
    assert nr["correct_predictions"] == 0


def test_class_bounds_on_known_counts():
    frame = pd.DataFrame(
        {
            "loss_events": [10],
            "true_link_losses": [6],
            "true_congestion_losses": [3],
            "predicted_link_losses": [5],
            "predicted_congestion_losses": [5],
            "correct_predictions": [7],
        }
    )
    b = martignon.class_bounds(frame)
    assert b["pooled_accuracy"] == pytest.approx(0.7)
    assert b["link_share"] == pytest.approx(0.6)
    # c_L ≤ min(6, 5, 7) = 5; c_L ≥ 7 − min(3, 5) = 4.
    assert (b["link_accuracy_lo"], b["link_accuracy_hi"]) == pytest.approx((4 / 6, 5 / 6))
    # c_C ≤ min(3, 5, 7) = 3; c_C ≥ 7 − min(6, 5) = 2.
    assert (b["congestion_accuracy_lo"], b["congestion_accuracy_hi"]) == pytest.approx((2 / 3, 1))


def test_ideal_lp_beats_lp_beats_newreno_on_a_lossy_uncongested_link():
    # 2 % independent loss on 10 Mbit/s, RTT 100 ms, a 1000-packet queue that never
    # overflows: every loss is a link loss.
    seeds = (1, 2, 3, 4, 5, 6)
    df = _goodputs(0.02, seeds, queue_packets=1000, stop="200s")
    assert (df["drops_queue"] == 0).all(), "the scenario must be free of congestion"
    per = df.pivot(index="seed", columns="variant", values="goodput_bps")
    lp, nr, ideal = per["NewReno-LP"], per["NewReno"], per["NewReno-Ideal-LP"]
    # Robust margins. Seed by seed: LP ≥ 2 × NewReno, and Ideal-LP ≥ 0.97 × LP (the
    # oracle never halves for these losses; LP sometimes does, when its window has
    # grown into the 1000-packet queue and V_p exceeds β). On average Ideal-LP > LP.
    assert (lp >= 2.0 * nr).all(), per
    assert (ideal >= 0.97 * lp).all(), per
    assert ideal.mean() > lp.mean() > 2.0 * nr.mean(), per.mean()
    # The oracle is right on every loss of known cause.
    ideal_rows = df[df["variant"] == "NewReno-Ideal-LP"]
    known = ideal_rows["true_link_losses"] + ideal_rows["true_congestion_losses"]
    assert (ideal_rows["correct_predictions"] == known).all()


def test_lp_matches_newreno_on_an_error_free_congested_link():
    # No link errors; a 5 Mbit/s bottleneck with a BDP queue: every loss is a queue
    # overflow, and LP must react as NewReno.
    df = _goodputs(0.0, (1,), rate="5Mbps", stop="120s")
    per = df.set_index("variant")
    assert per.loc["NewReno", "drops_queue"] > 0, "the link must be congested"
    assert per.loc["NewReno", "drops_link_error"] == 0
    lp, nr = per.loc["NewReno-LP", "goodput_bps"], per.loc["NewReno", "goodput_bps"]
    assert abs(lp / nr - 1) <= 0.10, (lp, nr)
    row = per.loc["NewReno-LP"]
    assert row["predicted_congestion_losses"] >= 0.8 * row["loss_events"]


def test_five_lp_flows_share_equally():
    assert vtlab.jain_index([2.0] * 5) == pytest.approx(1.0)
    assert vtlab.jain_index([1.0, 0, 0, 0, 0]) == pytest.approx(0.2)
    plan = martignon.QUICK
    spec = martignon.plan._friend_base(plan)
    spec["stop"] = "300s"
    for i, t in enumerate(martignon.plan._start_offsets(1, 5)):
        spec["groups"][i]["start"] = f"{t * 1000:g}ms"
        spec["groups"][i]["cc"] = "newreno-lp"
    flows = vtlab.run(spec, seed=1).flows
    assert len(flows) == 5 and set(flows["cc"]) == {"newreno-lp"}
    goodput = flows["goodput_bps"].to_numpy()
    assert goodput.sum() > 0.9 * 10e6 * 1460 / 1500
    assert vtlab.jain_index(goodput) > 0.97


# -- the grids -------------------------------------------------------------------------


def test_grids_use_newreno_recovery_everywhere_and_the_mixes_are_right():
    plan = martignon.QUICK
    gs = martignon.grids(plan, "ns3", runs=2)
    assert set(gs) >= {"per", "bad", "rtt", "short", "fig7a", "fig7b", "alt_per", "alt_bad"}
    for grid in gs.values():
        for p in grid.sweep(2, "ns3").points():
            for flow in p.scenario.expanded()["flows"]:
                assert flow["tcp"]["recovery"] == "newreno", (grid.name, flow)
                assert flow["tcp"]["timestamps"] is False
    # Fig. 7a: m NewReno flows and 5 − m NewReno-LP flows, two replicas each.
    points = gs["fig7a"].sweep(2, "ns3").points()
    assert len(points) == 6 * 2
    for p in points:
        m = p.label_dict["newreno_flows"]
        ccs = [g["cc"] for g in p.scenario.spec["groups"]]
        assert ccs.count("newreno") == m and ccs.count("newreno-lp") == 5 - m
    # The sensitivity grids run the other profile.
    alt = gs["alt_per"].sweep(2, "ns3").points()[0].scenario.spec
    assert alt["tcp"]["profile"] == "linux"


def test_the_ns2_profile_keeps_the_study_settings_and_compares_with_ns3():
    """``--profile ns2``: ns-2.35's agents with the study's window (1 MB, not ns-2's
    20 packets), IW 2 and DelAckSink (every second packet, ns-2's 100 ms timer); the
    other profile is ns3; the buffer grid has all three stacks."""
    gs = martignon.grids(martignon.QUICK, "ns2", runs=1)
    point = gs["per"].sweep(1, "ns2").points()[0]
    tcp = point.scenario.expanded()["flows"][0]["tcp"]
    assert tcp["profile"] == "ns2"
    assert (tcp["recv_buffer"], tcp["initial_ssthresh"]) == (1_000_000, 1_000_000)
    assert (tcp["initial_cwnd"], tcp["delayed_ack_count"]) == (2, 2)
    assert tcp["delayed_ack_timeout_ns"] == 100_000_000
    assert (tcp["rto_min_ns"], tcp["clock_granularity_ns"]) == (200_000_000, 10_000_000)
    alt = gs["alt_per"].sweep(1, "ns2").points()[0].scenario.spec
    assert alt["tcp"]["profile"] == "ns3"
    stacks = {p.label_dict["stack"] for p in gs["buffers"].sweep(1, "ns2").points()}
    assert stacks == {"ns3", "linux", "ns2"}
    # The window_ sensitivity: ns-2's default 20 packets of 1460 B, also the
    # initial ssthresh_ (TcpAgent::reset), at the lowest PER.
    (w,) = gs["window"].sweep(1, "ns2").points()
    tcp = w.scenario.expanded()["flows"][0]["tcp"]
    assert (tcp["recv_buffer"], tcp["initial_ssthresh"]) == (29_200, 29_200)
    assert w.label_dict["per"] == 1e-4


# -- the quick reproduction ------------------------------------------------------------


@pytest.fixture(scope="module")
def invoke():
    import typer

    app = typer.Typer()

    @app.callback()
    def main() -> None:
        pass

    reproduce.register(app)
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, ["reproduce", *args], catch_exceptions=True)

    return run


@pytest.fixture(scope="module")
def quick(tmp_path_factory, invoke):
    out = tmp_path_factory.mktemp("martignon-quick")
    started = time.perf_counter()
    res = invoke("martignon", "--quick", "--out", str(out), "--quiet", "--jobs", "2")
    wall = time.perf_counter() - started
    assert res.exit_code == 0, res.output + (res.stderr or "")
    return out, res, wall


def test_quick_writes_every_listed_file(quick):
    out, res, _ = quick
    for name in martignon.expected_outputs():
        path = out / name
        assert path.exists() and path.stat().st_size > 0, name
    report = (out / "report.md").read_text()
    assert "`vtlab reproduce martignon --quick`" in report
    for number in ("0.7900", "0.8100", "0.9987", "0.9995"):
        assert number in report
    acc = pd.read_csv(out / "accuracy.csv")
    assert acc["mean"].dropna().between(0, 1).all()
    assert set(acc["profile"]) == {"ns3", "linux"}
    comparison = pd.read_csv(out / "comparison.csv")
    assert len(comparison) == 4 and np.isfinite(comparison["vtlab_mean"]).all()


def test_rerun_simulates_nothing(quick, invoke, monkeypatch):
    out, _, _ = quick
    before = sorted(out.glob("*/part-*.parquet"))

    def no_simulation(*args, **kwargs):
        raise AssertionError("a finished campaign must not simulate again")

    monkeypatch.setattr("vtlab.sweep._core.run", no_simulation)
    res = invoke("martignon", "--quick", "--out", str(out), "--quiet")
    assert res.exit_code == 0, res.output + (res.stderr or "")
    assert "(0 runs simulated" in res.stdout
    assert sorted(out.glob("*/part-*.parquet")) == before
    sessions = json.loads((out / common.CAMPAIGN_LOG).read_text())["sessions"]
    assert [s["simulated_runs"] > 0 for s in sessions] == [True, False]


def test_registered_and_listed():
    from vtlab import experiments

    assert "martignon" in experiments.names()
    assert experiments.load("martignon") is martignon
    cfg = Config(out=Path("x"), quick=True, profile="linux")
    assert cfg.command("martignon") == "vtlab reproduce martignon --quick --profile linux"


# -- the paper's numbers ---------------------------------------------------------------


def test_paper_values_every_number_has_a_location():
    paper = martignon.paper()
    # §4's 70 % floor, §5's 500 transfers, two completion times, two Jain's indices.
    assert len(paper) == 6
    for e in paper.values():
        assert e.where.strip() and e.label.strip(), e.id
    # Read off the paper by hand (§5).
    assert paper.value("short_lp") == 0.79 and paper.value("short_nr") == 0.81
    assert paper.value("jain_lp") == 0.9987 and paper.value("jain_nr") == 0.9995
    assert paper.value("accuracy_floor") == 0.70
    assert all("§5" in paper[k].where for k in ("short_lp", "short_nr", "jain_lp", "jain_nr"))


def test_report_prints_the_paper_values_from_the_file(quick):
    out, _, _ = quick
    paper = martignon.paper()
    comparison = pd.read_csv(out / "comparison.csv")
    keys = ("short_lp", "short_nr", "jain_lp", "jain_nr")
    assert list(comparison["paper"]) == [paper.value(k) for k in keys]
    assert list(comparison["quantity"]) == [paper[k].label for k in keys]
    findings = pd.read_csv(out / "findings.csv")
    # Every claim has a verdict, and verdicts are the pipeline's words.
    assert findings["verdict"].notna().all()
    assert "> 70 %" in findings["claim"].iloc[0]


def test_the_first_row_with_given_labels():
    from vtlab.experiments.martignon.analysis import _one, _row

    # Labels as the summaries hold them: a string column (Arrow-backed, as read from
    # the store, with a missing value), an int column and a float column whose values
    # come from arithmetic (0.1 + 0.2 is 0.30000000000000004: within 1e-12 of 0.3).
    frame = pd.DataFrame(
        {
            "variant": pd.array(["newreno", None, "lp", "lp"], dtype="string[pyarrow]"),
            "iw": [2, 10, 2, 2],
            "per": [0.1 + 0.2, 0.3, 0.3, 0.01],
            "goodput_mbps": [1.5, 2.5, 3.5, 4.5],
        }
    )
    # lp with iw 2 is rows 2 and 3; per 0.3 picks row 2 (row 0 is newreno).
    assert _one(frame, variant="lp", iw=2, per=0.3) == 3.5
    row = _row(frame, variant="lp", iw=2)  # the first of rows 2 and 3
    assert row is not None and row.name == 2 and row["goodput_mbps"] == 3.5
    assert _one(frame, per=0.3) == 1.5  # row 0: 0.30000000000000004 counts as 0.3
    assert np.isnan(_one(frame, per=0.3 + 1e-9))  # farther than 1e-12 from every row
    assert np.isnan(_one(frame, variant="lp", per=0.1))  # no such row
    assert _row(frame, variant="ideal") is None
    assert _one(frame, "iw", variant="lp", per=0.01) == 2.0
