"""Park 2019, Table 2 at 10 MB: the side-by-side table (vtlab, ns-3.44, the paper, and
ns-3's pre-3.32 defaults) read back from the runs committed under
``validation/park2019/``; every expected value is recomputed here from the stored
records or the paper's text, not taken from the module under test."""

from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path

import pytest

from vtlab.experiments import park2019
from vtlab.experiments.park2019 import table2_10mb as t10

VALIDATION = Path(__file__).resolve().parents[2] / "validation"

# Table 2 of the paper, row "10 MB" (Park et al. 2019, §3.1; also in the study's paper.toml),
# typed in from the paper in its column order.
PAPER_10MB = {
    "NewReno": 0.418,
    "Hybla": 0.851,
    "Highspeed": 0.925,
    "Htcp": 0.426,
    "Vegas": 0.755,
    "Scalable": 1.316,
    "Veno": 0.506,
    "BIC": 0.697,
    "Illinois": 2.294,
    "Westwood": 0.385,
}


def _records(folder: str) -> list[dict]:
    text = (VALIDATION / folder / "runs.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def rows():
    return t10.side_by_side(t10.paper_row(park2019.paper()), VALIDATION)


def test_paper_row_is_the_papers_10mb_row():
    assert t10.paper_row(park2019.paper()) == PAPER_10MB


def test_table_structure(rows):
    assert [r["variant"] for r in rows] == list(PAPER_10MB)
    for r in rows:
        assert r["paper"] == PAPER_10MB[r["variant"]]
        # 10 seeds per side at the defaults, 10 under the pre-3.32 defaults
        assert r["vtlab"]["n"] == r["ns3"]["n"] == 10
        assert r["pre332_vtlab"]["n"] == r["pre332_ns3"]["n"] == 10
        assert r["verdict"] in {"agree", "consistent", "differs"}
        lo, hi = r["ratio_ci"]
        assert lo <= r["ratio"] <= hi
    md = t10.markdown(rows)
    assert md.count("\n") == 2 + len(PAPER_10MB)
    assert "| NewReno | 0.418 |" in md


def test_ns3_means_recomputed_from_the_stored_runs(rows):
    """ns-3.44's NewReno mean, by hand from runs.jsonl, and every ns-3 mean against the
    validate pipeline's own agreement.csv (written by `vtlab validate v2g`)."""
    recs = _records(t10.DEFAULTS_DIR)
    newreno = [
        r["goodput_bps"] / 1e6
        for r in recs
        if r["side"] == "ns-3" and r["cc"] == "newreno" and r["bytes"] == 10_000_000
    ]
    assert len(newreno) == 10
    by = {r["variant"]: r for r in rows}
    assert by["NewReno"]["ns3"]["mean"] == pytest.approx(statistics.mean(newreno), rel=1e-12)
    with open(VALIDATION / t10.DEFAULTS_DIR / "agreement.csv") as f:
        agreement = {a["cc"]: a for a in csv.DictReader(f)}
    for r in rows:
        a = agreement[r["cc"]]
        assert r["ns3"]["mean"] == pytest.approx(float(a["ns3_goodput_mbps"]), rel=1e-9)
        assert r["vtlab"]["mean"] == pytest.approx(float(a["vtlab_goodput_mbps"]), rel=1e-9)
        assert r["verdict"] == a["verdict"]


def test_pre332_runs_used_the_old_defaults_on_both_sides(rows):
    recs = _records(t10.PRE_332_DIR)
    for r in recs:
        assert r["tcp"] == {"initial_cwnd": 1, "prr": False}
        if r["side"] == "ns-3":
            assert "--initialCwnd=1" in r["ns3_args"]
            assert "--recovery=classic" in r["ns3_args"]
    # the Westwood row's vtlab column is the original Westwood, by hand
    ww = [r["goodput_bps"] / 1e6 for r in recs if r["cc"] == "westwood"]
    by = {r["variant"]: r for r in rows}
    assert len(ww) == 10
    assert by["Westwood"]["pre332_vtlab"]["mean"] == pytest.approx(statistics.mean(ww))
    assert math.isfinite(by["Westwood"]["pre332_ns3"]["mean"])


def test_evidence_sentence_from_the_stored_runs(rows):
    """The report's sentence: the agree/consistent counts from the validate pipeline's
    agreement.csv, the paper / ns-3.44 range recomputed from PAPER_10MB and the stored
    ns-3 runs, and the pre-3.32 change range from the stored pre-3.32 runs."""
    with open(VALIDATION / t10.DEFAULTS_DIR / "agreement.csv") as f:
        verdicts = [a["verdict"] for a in csv.DictReader(f)]
    recs = _records(t10.DEFAULTS_DIR)
    old = _records(t10.PRE_332_DIR)

    def ns3_mean(records, cc):
        return statistics.mean(
            r["goodput_bps"] / 1e6 for r in records if r["side"] == "ns-3" and r["cc"] == cc
        )

    ratios = [PAPER_10MB[label] / ns3_mean(recs, cc) for label, cc in t10.CELLS.items()]
    change = [ns3_mean(old, cc) / ns3_mean(recs, cc) - 1 for cc in t10.CELLS.values()]
    # 100 MB references: every variant below its 10 MB mean except NewReno
    ns3_100 = {r["variant"]: r["ns3"]["mean"] * 0.9 for r in rows}
    ns3_100["NewReno"] = 10.0
    text = t10.evidence(rows, ns3_100)
    assert f"agrees with vtlab in {verdicts.count('agree')} of 10 variants" in text
    assert f"({verdicts.count('consistent')} consistent" in text
    assert "above its 100 MB goodput for 9 of 10" in text
    assert f"{min(ratios):.2f}–{max(ratios):.2f} × ns-3.44's" in text
    assert f"by {min(change) * 100:+.0f} to {max(change) * 100:+.0f} %" in text
    near = sum(abs(x - 1) <= 0.25 for x in ratios)
    near_old = sum(
        abs(PAPER_10MB[label] / ns3_mean(old, cc) - 1) <= 0.25 for label, cc in t10.CELLS.items()
    )
    assert f"for {near} of 10 variants at the defaults and {near_old} under" in text


def test_the_10mb_grid_stays_out_of_the_100mb_reference():
    """validation/park2019/table2-10mb/agreement.csv has the same columns as the 100 MB
    grid's; the report's 100 MB ns-3.44 reference must still be the top-level grid's."""
    from vtlab.experiments.park2019.analysis import ns3_reference

    with open(VALIDATION / "agreement.csv") as f:
        top = {
            a["cc"]: float(a["ns3_goodput_mbps"])
            for a in csv.DictReader(f)
            if a["topology"] == "1" and float(a["loss"]) == 0.05
        }
    ref = ns3_reference(VALIDATION)
    assert ref[("NewReno", 0.05, "ts-on")] == pytest.approx(top["newreno"])
    assert ref[("Illinois", 0.05, "ts-on")] == pytest.approx(top["illinois"])


@pytest.mark.parametrize("argv", [["x"], ["0"], ["65"], ["2", "3"], ["-1"]])
def test_bad_jobs_is_one_error_line(argv, capsys):
    assert t10.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: JOBS: ")
