"""The LTE uplink's capacity against the stored ns-3 uplink runs (issue 26, 1c)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from vtlab.validation import lte_uplink

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ns3() -> dict[float, dict]:
    rows = lte_uplink.load_ns3()  # the shipped rows: the checkout's validation/ here
    assert rows == lte_uplink.load_ns3(ROOT / "validation/lte/uplink/ns3_uplink.json")
    return {r["rsrp_target_dbm"]: r for r in rows}


def test_the_stored_runs_are_at_the_studys_rsrps(ns3):
    assert sorted(ns3) == [-110.0, -90.0, -81.0]
    for target, r in ns3.items():
        assert r["rsrp_dbm"] == pytest.approx(target, abs=0.05)
    # ns-3's PF scheduler drops a UE whose uplink CQI is 0: nothing at -110 dBm
    assert ns3[-110.0]["goodput_mbps"] == 0


def test_model_under_ns3_conditions_by_hand():
    # -90 dBm with the eNB at 46 dBm over 600 REs: path loss 46 - 27.78 + 90 =
    # 108.22 dB; the UE's 23 dBm over 600 REs is -4.78 dBm per RE, received
    # -113.0 dBm; noise -174 + 41.76 + 5 = -127.24 dBm: SINR 14.2 dB, between
    # CQI 9 (13.8 dB by the Shannon gap) and CQI 10 (14.9 dB): MCS 16, I_TBS 15,
    # 15 264 bits on 50 PRBs (TS 36.213 Table 7.1.7.2.1-1) every ms.
    got = lte_uplink.vtlab_uplink_mbps(-90.0, lte_uplink.NS3_CONDITIONS)
    assert got == pytest.approx(15.264)


def test_the_gap_to_ns3_is_its_uplink_carrier(ns3):
    # ns-3's uplink (EARFCN 18100, 1930 MHz) has 33.9·log10(2120/1930) = 1.38 dB
    # less COST-231 path loss than its downlink, whose RSRP places the UE. Given
    # that 1.38 dB, the model at -81 dBm is at CQI 15 on all 50 PRBs: I_TBS 26,
    # 36 696 bits per ms, which is ns-3's transport-block rate there within 1 %.
    offset = 33.9 * math.log10(2120 / 1930)
    got = lte_uplink.vtlab_uplink_mbps(-81.0 + offset, lte_uplink.NS3_CONDITIONS)
    assert got == pytest.approx(36.696)
    assert got == pytest.approx(ns3[-81.0]["tb_mbps"], rel=0.01)


def test_lte_cabin_uplink_is_the_calibrated_one():
    # lte-cabin at -90 dBm: 35 PRBs (share 0.7), no uplink interference (ns-3's):
    # 23 dBm over 420 REs = -3.23 dBm per RE, SINR 15.8 dB: CQI 10, MCS 18, I_TBS
    # 16, 11 448 bits per TB; BLER 0.1 leaves 0.9 of the TTIs to new data: 10.30.
    got = lte_uplink.vtlab_uplink_mbps(-90.0, None)
    assert got == pytest.approx(11.448 * 0.9, rel=0.03)


def test_tables(tmp_path: Path, ns3):
    rows = lte_uplink.compare([ns3[-90.0]])
    path = lte_uplink.write_tables(rows, tmp_path)
    text = path.read_text()
    assert "| -90 | 17.94 | 18 | 15.26 |" in text
    assert (tmp_path / "uplink.csv").is_file()


def test_main_without_stored_runs_is_one_error_line(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("VTLAB_VALIDATION_DIR", str(tmp_path))
    assert lte_uplink._main(["--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: the stored ns-3 runs: ")
