"""vtlab's 802.11 medium against ns-3's wifi module (vtlab.validate_wifi): the
scenario translation both ways, the verdicts and orderings on hand-made numbers, the
command against the stored ns-3 runs (no ns-3 needed), its errors, and one ns-3 run
of the reference program compared with the stored file (needs the ns3 wheel and g++).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from conftest import assert_usage_error, requires_ns3
from vtlab import _core
from vtlab import validate_wifi as vw
from vtlab.ns3 import program as ns3mod
from vtlab.ns3.process import run_process
from vtlab.ns3.wifi import wifi_args

Cli = Callable[..., Result]


H8_RTS1 = next(c for c in vw.CASES if c.name == "h8-rts1-tcpnewreno-d1")


def test_the_grid_is_the_issue_s():
    # hops {1, 8} x RTS {off, on} x {NewReno, Vegas} x delayed ACK {1, 2}
    assert len(vw.CASES) == 16
    assert {c.name for c in vw.CASES} >= set(vw.QUICK)
    names = sorted(p.name.rsplit("-r", 1)[0] for p in vw.stored_dir().glob("*.jsonl"))
    # five stored ns-3 runs per cell
    assert names == sorted(c.name for c in vw.CASES for _ in vw.NS3_RUNS)


def test_the_vtlab_scenario_is_ns3_s():
    s = json.loads(_core.expand(json.dumps(vw.vtlab_spec(H8_RTS1))))
    w = s["media"][0]["wifi"]
    assert len(s["nodes"]) == 9
    assert w["reception"] == {"model": "dsss-ber", "preamble_snr_db": 4.0}
    # ns-3.44's FrameRetryLimit 7 for RTS and data alike
    assert (w["short_retry_limit"], w["long_retry_limit"]) == (7, 7)
    assert w["rts_threshold_bytes"] == 0
    assert s["flows"][0]["start_ns"] == 1_000_000_000
    assert s["stop_ns"] == 101_000_000_000
    # and wifi_args maps it back onto the program's arguments
    args = wifi_args(s, 3)
    for a in ("--hops=8", "--rts=1", "--cc=TcpNewReno", "--delAck=1", "--window=20"):
        assert a in args
    assert "--duration=100" in args and "--run=3" in args
    assert args[:2] == ["--hops=8", "--spacing=200"]


def test_wifi_args_refuses_what_the_program_cannot_run():
    spec = {"preset": "vanet-chain", "tcp": {"cc": "cubic"}}
    with pytest.raises(ValueError, match="tcp.cc"):
        wifi_args(json.loads(_core.expand(json.dumps(spec))), 1)
    spec = {"preset": "vanet-chain", "error_rate": "20%"}
    with pytest.raises(ValueError, match="error model"):
        wifi_args(json.loads(_core.expand(json.dumps(spec))), 1)
    with pytest.raises(ValueError, match="vanet-chain"):
        wifi_args(json.loads(_core.expand(json.dumps({"preset": "v2g"}))), 1)


def test_ratio_interval_and_verdicts_by_hand():
    # means 110 and 100: ratio 1.1; sd 10 over 4 and 0 over 4 runs: relative se
    # (10/110)/2 = 0.04545, so the interval is 1.1·(1 ± 1.96·0.04545) = 1.002–1.198
    r, lo, hi = vw.ratio_ci([100.0, 120.0, 100.0, 120.0], [100.0] * 4)
    assert r == pytest.approx(1.1)
    sd = 11.547005383792516  # sample sd of 100, 120, 100, 120
    rel = (sd / 110) / 2
    assert (lo, hi) == pytest.approx((1.1 * (1 - 1.96 * rel), 1.1 * (1 + 1.96 * rel)))
    assert vw.verdict(1.1) == "agree" and vw.verdict(0.9) == "agree"
    assert vw.verdict(1.1001) == "differs" and vw.verdict(0.8999) == "differs"


def test_orderings_compare_ranks_within_a_group():
    rows = [
        {"hops": 1, "rts": 0, "cc": "a", "delack": 1, "ns3_kbps": 3.0, "vtlab_kbps": 3.0},
        {"hops": 1, "rts": 0, "cc": "b", "delack": 1, "ns3_kbps": 2.0, "vtlab_kbps": 1.0},
        {"hops": 8, "rts": 0, "cc": "a", "delack": 1, "ns3_kbps": 1.0, "vtlab_kbps": 2.0},
        {"hops": 8, "rts": 0, "cc": "b", "delack": 1, "ns3_kbps": 2.0, "vtlab_kbps": 1.0},
    ]
    o = vw.orderings(rows)
    assert [x["same"] for x in o] == [True, False]
    assert o[1]["ns3"] == "b/d1 > a/d1" and o[1]["vtlab"] == "a/d1 > b/d1"
    # cells ns-3 puts within 1 % of each other are a tie, whatever vtlab's order
    tie = [dict(rows[0]), dict(rows[1], ns3_kbps=2.99, vtlab_kbps=3.5)]
    assert (vw.orderings(tie)[0]["pairs"], vw.orderings(tie)[0]["same"]) == (0, True)


def test_quick_validation_from_the_cli(cli: Cli, tmp_path: Path):
    res = cli("validate-wifi", "--quick", "-o", str(tmp_path), "--quiet")
    assert res.exit_code == 0, res.output + res.stderr
    assert "2 of 2 cells agree" in res.output
    rows = list(csv.DictReader((tmp_path / "agreement.csv").open()))
    assert [r["case"] for r in rows] == list(vw.QUICK)
    for r in rows:
        # ns-3's stored single hop: 501.4 kbit/s (validation/wifi/ns3)
        assert abs(float(r["ratio"]) - 1) <= vw.TOLERANCE
        assert r["vtlab_runs"] == "3" and r["ns3_runs"] == "5"
    report = (tmp_path / "report.md").read_text()
    assert "| h1-rts1-tcpnewreno-d1 | 501.4 |" in report


def test_the_api_gives_the_same_table(tmp_path: Path):
    res = vw.validate_wifi(tmp_path, cases=["h1-rts0-tcpvegas-d2"], seeds=2)
    assert (res.agree, res.cells) == (1, 1)
    # ns-3's five runs of this cell: 655.2 kbit/s on average (summary.csv)
    assert res.rows[0]["ns3_kbps"] == pytest.approx(655.2, abs=0.1)


def test_bad_options_exit_2(cli: Cli, tmp_path: Path):
    assert_usage_error(cli("validate-wifi", "--case", "h3-x", "-o", str(tmp_path)), "--case")
    assert_usage_error(
        cli("validate-wifi", "--seeds", "0", "-o", str(tmp_path)), "--seeds", "[1, 1000]"
    )
    assert_usage_error(
        cli("validate-wifi", "--duration", "50", "-o", str(tmp_path)), "--duration", "--rerun-ns3"
    )
    missing = tmp_path / "nowhere"
    with pytest.raises(vw.WifiValidateError, match="missing"):
        vw.validate_wifi(tmp_path, cases=[H8_RTS1.name], ns3_dir=missing)


@requires_ns3
def test_the_reference_program_reproduces_its_stored_run(tmp_path: Path):
    # The stored files are the program's output: a fresh run of the shortest cell
    # matches byte for byte apart from the wall time.
    case = next(c for c in vw.CASES if c.name == "h1-rts1-tcpnewreno-d2")
    binary = ns3mod.build_program(ns3mod.WIFI_PROGRAM, cache=tmp_path / "cache")
    proc = run_process([str(binary.path), *vw.ns3_args(case, 1)])
    assert proc.returncode == 0, proc.stderr
    stored = (vw.stored_dir() / f"{case.name}-r1.jsonl").read_text()

    def strip(text: str) -> list[dict]:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        for r in rows:
            r.pop("wall_s", None)
        return rows

    assert strip(proc.stdout) == strip(stored)
