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

# Table 2 of the paper, row "10 MB" (/work/shared/papers/park2019-v2g-tcp.txt, §3.1),
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
