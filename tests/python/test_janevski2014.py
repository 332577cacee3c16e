"""``vtlab reproduce janevski2014``: the registry entry, ``paper.toml`` (every entry
located, every claim checked), the plan's grid shape and its scenarios (ns-2's
settings where the paper is silent), and the quick reproduction end to end from the
CLI and the API: every listed file, the figures' data, a verdict (or n/a) for every
claim, and a re-run that simulates nothing."""

from __future__ import annotations

import json
import math
import time

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from vtlab import experiments
from vtlab.cli import reproduce
from vtlab.experiments import janevski2014 as J
from vtlab.experiments.common import Config
from vtlab.experiments.janevski2014 import findings
from vtlab.experiments.janevski2014 import plan as P

#: Words a verdict may start with (``findings.csv``).
VERDICTS = ("holds", "does not hold", "partly", "n/a")


# -- registry, paper values, plan --------------------------------------------------------


def test_registered_as_janevski2014():
    assert "janevski2014" in experiments.names()
    assert experiments.load_study("janevski2014") is J.STUDY
    assert dict(experiments.describe())["janevski2014"] == J.DESCRIPTION


def test_every_paper_entry_has_a_location():
    paper = J.paper()
    assert len(paper) >= 30
    assert all(e.where.strip() and e.label.strip() for e in paper.values())
    figs = J.paper_figures()
    assert sorted(figs) == list(range(3, 11))
    assert all(f["where"].strip() and f["caption"].strip() for f in figs.values())
    claims = J.paper_claims()
    assert len(claims) >= 25
    assert all(
        c["where"].strip() and c["text"].strip() and c["claim"].strip() for c in claims.values()
    )
    # Every claim of the paper has a check, and every check a claim.
    assert set(claims) == set(findings.CHECKS)


def test_paper_numbers_and_table2_are_the_texts():
    p = J.paper()
    assert p.value("results/single_max") == 650
    assert (p.value("results/multi_max_low"), p.value("results/multi_max_high")) == (60, 70)
    assert p.value("results/hop_ratio") == 10
    assert tuple(int(p.value(f"setup/ifq_{q}")) for q in P.IFQS) == P.IFQS
    dupacks = range(int(p.value("setup/dupack_min")), int(p.value("setup/dupack_max")) + 1)
    assert tuple(dupacks) == P.FULL.dupacks
    assert p.value("setup/duration") == P.FULL.duration_s
    assert p.value("setup/packet") == P.FULL.segment
    # The arithmetic of Sec. III-A: 10 packets of 500 B at 650 kbit/s.
    t = p.value("text/packets") * p.value("text/average_packet") * 8 / p.value("text/link_rate")
    assert t == pytest.approx(p.value("text/ten_packets_ms"), abs=1)


def test_figure_numbers_follow_the_paper():
    for n, f in J.paper_figures().items():
        assert P.figure_of(f["hops"], f["delack"], bool(f["error"])) == n


def test_full_grid_shape():
    grids = J.grids(J.FULL, "ns3", J.FULL.runs)
    per_topology = 2 * 3 * 5 * 5 * 10  # DelAck × errors × TCP × IFQ × DupAck
    for name in ("single_hop", "hops_8"):
        points = grids[name].sweep(J.FULL.runs, "ns3").points()
        assert len(points) == per_topology * J.FULL.runs
        labels = pd.DataFrame([p.label_dict for p in points])
        assert sorted(labels["tcp"].unique()) == sorted(P.TCPS)
        assert tuple(sorted(labels["ifq"].unique())) == P.IFQS
        assert tuple(sorted(labels["dupack"].unique())) == P.DUPACKS
        assert set(labels["error"]) == {J.CLEAN, J.ERROR_20, J.CALIBRATED}
    assert J.FULL.runs >= 5 and J.FULL.duration_s == 250


def test_scenarios_carry_the_study_settings():
    grid = J.grids(J.QUICK, "ns3", 1)["hops_8"]
    seen = set()
    for p in grid.sweep(1, "ns3").points():
        lab = p.label_dict
        spec = p.scenario.expanded()
        wifi, tcp = spec["media"][0]["wifi"], spec["flows"][0]["tcp"]
        assert len(spec["media"][0]["nodes"]) == 9
        assert wifi["ifq_packets"] == lab["ifq"] and wifi["rts_threshold_bytes"] == 0
        assert tcp["dupack_threshold"] == lab["dupack"]
        assert tcp["delayed_ack_count"] == lab["delack"]
        assert tcp["cc"] == P.TCPS[lab["tcp"]] and tcp["mss"] == 512
        assert tcp["syn_retries"] == 30 and tcp["data_retries"] == 100
        if lab["tcp"] == "Vegas":
            assert tcp["cc_params"] == {k: float(v) for k, v in P.VEGAS_PARAMS.items()}
        err = wifi["error"]
        if lab["error"] == J.CLEAN:
            assert err["model"] == "none"
        else:
            bad = err["mean_bad"] / (err["mean_bad"] + err["mean_good"])
            rate = J.QUICK.error_rate if lab["error"] == J.ERROR_20 else J.QUICK.calibrated_rate
            assert bad == pytest.approx(rate)
        seen.add(lab["error"])
    assert seen == {J.CLEAN, J.ERROR_20, J.CALIBRATED}


def test_the_ns2_profile_takes_the_preset_settings_over_its_defaults():
    """``--profile ns2``: the preset's 512 B segments, 20-packet window (10 240 B, also
    ns-2's initial ssthresh_ = window_), IW 1 and DelAck count stay; ns-2.35's timer
    (tcpTick_ 10 ms, rtxcur_init_ 3 s) and DelAckSink's 100 ms come from the profile."""
    grid = J.grids(J.QUICK, "ns2", 1)["single_hop"]
    for p in grid.sweep(1, "ns2").points()[:4]:
        tcp = p.scenario.expanded()["flows"][0]["tcp"]
        assert tcp["profile"] == "ns2" and tcp["mss"] == 512
        assert (tcp["recv_buffer"], tcp["initial_ssthresh"]) == (10_240, 10_240)
        assert (tcp["initial_cwnd"], tcp["delayed_ack_count"]) == (1, p.label_dict["delack"])
        assert (tcp["clock_granularity_ns"], tcp["rto_initial_ns"]) == (10_000_000, 3 * 10**9)
        assert tcp["delayed_ack_timeout_ns"] == 100_000_000


# -- the quick reproduction -------------------------------------------------------------


@pytest.fixture(scope="module")
def invoke():
    from vtlab.cli.app import app as main_app

    app = main_app
    if not any(c.name == "reproduce" for c in main_app.registered_commands):
        app = typer.Typer()

        @app.callback()
        def main() -> None:
            pass

        reproduce.register(app)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["reproduce", *args], catch_exceptions=True)


@pytest.fixture(scope="module")
def quick(tmp_path_factory, invoke):
    out = tmp_path_factory.mktemp("janevski-quick")
    started = time.perf_counter()
    res = invoke("janevski2014", "--quick", "-o", str(out), "--quiet", "--jobs", "2")
    wall = time.perf_counter() - started
    assert res.exit_code == 0, res.output + (res.stderr or "")
    return out, res, wall


def test_quick_writes_every_listed_file_in_time(quick):
    out, res, _ = quick
    missing = [n for n in J.expected_outputs() if not (out / n).is_file()]
    assert missing == []
    assert {f"fig{n}.png" for n in range(3, 11)} <= {p.name for p in out.iterdir()}
    assert "report.md" in res.output


def test_points_cover_the_quick_grid_with_sane_throughput(quick):
    out, _, _ = quick
    pts = pd.read_csv(out / "points.csv")
    assert len(pts) == 2 * 2 * 3 * 5 * 5 * len(J.QUICK.dupacks)
    assert set(pts["figure"]) == set(range(3, 11))
    assert (pts["n"] == J.QUICK.runs).all()
    clean = pts[pts["error"] == J.CLEAN]
    # 1 Mbit/s 802.11 with RTS/CTS: one hop well below 1 Mbit/s, 8 hops far below it.
    assert clean[clean["hops"] == 1]["mean"].max() < 700
    assert clean[clean["hops"] == 8]["mean"].max() < clean[clean["hops"] == 1]["mean"].max() / 2
    assert clean["mean"].min() > 0
    # The calibrated error model costs some, not all, of the throughput.
    t = pd.read_csv(out / "by_tcp.csv")
    for h in (1, 8):
        c = t[(t["hops"] == h) & (t["error"] == J.CLEAN)]["mean"].mean()
        k = t[(t["hops"] == h) & (t["error"] == J.CALIBRATED)]["mean"].mean()
        assert 0.4 * c < k < c


def test_every_claim_has_a_verdict_and_evidence(quick):
    out, _, _ = quick
    f = pd.read_csv(out / "findings.csv", keep_default_na=False)
    n_claims = len(J.paper_claims())
    assert len(f) > n_claims  # claims about the figures with errors appear per reading
    assert all(v.startswith(VERDICTS) for v in f["verdict"]), f["verdict"].tolist()
    assert all(e.strip() for e in f["vtlab"])
    assert sum(v.startswith("holds") for v in f["verdict"]) >= 5
    report = (out / "report.md").read_text()
    for claim in f["claim"]:
        assert claim in report
    for c in J.paper_claims().values():
        assert c["where"] in set(f["where"])


def test_comparison_carries_the_paper_numbers(quick):
    out, _, _ = quick
    c = pd.read_csv(out / "comparison.csv")
    by_label = {e.label: e for e in J.paper().values()}
    assert len(c) >= 8
    for r in c.itertuples():
        e = by_label[r.quantity]
        expected = e.value * 100 if r.unit == "%" else e.value
        assert r.paper == pytest.approx(expected), r.quantity
        assert math.isfinite(r.vtlab_mean), r.quantity


def test_maxima_table_and_report_sections(quick):
    out, _, _ = quick
    m = pd.read_csv(out / "maxima.csv")
    assert list(m["tcp"]) == list(P.TCPS)
    assert (m["1hop_0 %"] > m["8hop_0 %"]).all()
    report = (out / "report.md").read_text()
    for heading in ("## Results", "## The paper's claims", "## Assumptions", "## Deviations"):
        assert heading in report
    for param in ("`Plan.error_burst_ms`", "`Plan.rts`", "`Plan.syn_retries`", "routing"):
        assert param in report


def test_api_resumes_an_interrupted_campaign(quick):
    """Through the API, on the CLI's store with its last part removed (as if the
    campaign had been killed before committing it): exactly its runs are simulated
    again, the rest is loaded."""
    out, _, _ = quick
    last = sorted((out / "_journal").glob("*.json"))[-1]
    removed = len(json.loads(last.read_text())["runs"])
    last.unlink()  # the record first: its runs are no longer done
    for part in out.glob(f"*/part-{last.stem}.parquet"):
        part.unlink()
    outcome = J.STUDY.reproduce(Config(out=out, quick=True, progress=False, jobs=2))
    total = sum(
        len(g.sweep(J.QUICK.runs, "ns3").points()) for g in J.grids(J.QUICK, "ns3").values()
    )
    assert outcome.simulated == removed
    assert outcome.loaded == total - removed
    assert len(outcome.findings) == len(pd.read_csv(out / "findings.csv"))


def test_routing_grid_sets_aodv_beside_static_routes(quick):
    out, _, _ = quick
    r = pd.read_csv(out / "routing.csv")
    assert set(r["routing"]) == {"static", "aodv"}
    assert set(r["hops"]) == set(J.QUICK.hops)
    clean = r[r["error"] == J.CLEAN].groupby(["hops", "routing"])["mean"].max()
    # AODV's HELLOs and route discovery (about 1.4 s before the first byte over 8
    # hops, validation/wifi-aodv) cost the 20 s chain some throughput.
    assert 0 < clean[(8, "aodv")] < clean[(8, "static")]
    c = pd.read_csv(out / "comparison.csv")
    assert c["note"].str.startswith("aodv: ").sum() == 4
    assert "AODV" in (out / "report.md").read_text()
