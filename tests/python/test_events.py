"""Typed events and change traces from the Python API and the CLI (--events,
--trace-mode), and their qlog form."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

import vtlab
from vtlab.api import EVENT_COLUMNS
from vtlab.qlog import to_qlog

LOSSY = {"preset": "v2g", "bytes": "2MB", "loss": {"mean_loss": "5%"}}


def test_events_count_what_the_flow_row_counts():
    res = vtlab.run(LOSSY, seed=3, events=True)
    ev, flow = res.events, res.flows.iloc[0]
    assert list(ev.columns[: len(EVENT_COLUMNS)]) == list(EVENT_COLUMNS)
    kinds = ev["event"].value_counts()
    assert kinds.get("rto", 0) == flow["rto_count"]
    assert kinds.get("retransmit", 0) == flow["retransmissions"]
    assert kinds.get("drop", 0) == flow["drops_link_error"] + flow["drops_queue"]
    # Link losses of the burst model are drops on the PLC toward the vehicle.
    drops = ev[ev["event"] == "drop"]
    assert drops["detail"].str.startswith("link ").all()
    assert ev["time_ns"].is_monotonic_increasing
    # Observing changes nothing.
    assert vtlab.run(LOSSY, seed=3).flows.equals(res.flows)


def test_change_traces_have_one_row_per_change():
    sampled = vtlab.run(LOSSY, seed=3, trace=True).traces
    changes = vtlab.run(LOSSY, seed=3, trace="changes", events=True)
    tr = changes.traces
    # Consecutive rows differ in cwnd, ssthresh or state (a row per change).
    key = tr[["cwnd_bytes", "ssthresh_bytes", "ca_state"]].astype(str).agg("|".join, axis=1)
    assert (key != key.shift()).iloc[1:].all()
    # Every entry into recovery is a row: sampling every 10 ms may miss some.
    entries = (tr["ca_state"] == "recovery") & (tr["ca_state"].shift() != "recovery")
    fast = changes.flows.iloc[0]["fast_recoveries"]
    assert entries.sum() == fast
    assert len(sampled) > 0
    with pytest.raises(ValueError, match="trace"):
        vtlab.run(LOSSY, trace="sometimes")


def test_qlog_maps_events_to_qlog_names():
    rows = [
        {"seed": 1, "flow": "f", "scenario_hash": "h", "event": "window", "time_ns": 2_500_000,
         "cwnd_bytes": 14600, "ssthresh_bytes": float("inf"), "ca_state": "open", "seq": 0,
         "detail": ""},
        {"seed": 1, "flow": "f", "scenario_hash": "h", "event": "state", "time_ns": 3_000_000,
         "cwnd_bytes": 7300, "ssthresh_bytes": 7300.0, "ca_state": "recovery", "seq": 0,
         "detail": "disorder"},
        {"seed": 1, "flow": "f", "scenario_hash": "h", "event": "drop", "time_ns": 3_000_000,
         "cwnd_bytes": 7300, "ssthresh_bytes": 7300.0, "ca_state": "recovery", "seq": 2920,
         "detail": "link data on plc secc->evcc"},
    ]  # fmt: skip
    doc = to_qlog(rows)
    assert doc["qlog_version"] == "0.3" and len(doc["traces"]) == 1
    e = doc["traces"][0]["events"]
    # 2.5 ms; no ssthresh while it is unset (infinite).
    assert e[0] == {
        "time": 2.5,
        "name": "recovery:metrics_updated",
        "data": {"congestion_window": 14600},
    }
    assert e[1]["name"] == "recovery:congestion_state_updated"
    assert (e[1]["data"]["old"], e[1]["data"]["new"]) == ("slow_start", "recovery")
    assert e[2]["name"] == "recovery:packet_lost"
    assert e[2]["data"]["header"]["packet_number"] == 2920


def test_cli_writes_events_as_parquet_and_qlog(tmp_path):
    pq, ql = tmp_path / "ev.parquet", tmp_path / "ev.qlog"
    for path in (pq, ql):
        proc = subprocess.run(
            [sys.executable, "-m", "vtlab", "run", "v2g", "--bytes", "1MB", "--loss", "5%",
             "--events", str(path), "-q"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    ev = pd.read_parquet(pq)
    doc = json.loads(ql.read_text())
    assert sum(len(t["events"]) for t in doc["traces"]) == len(ev)
    bad = subprocess.run(
        [sys.executable, "-m", "vtlab", "run", "v2g", "--events", str(tmp_path / "e.txt")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("error: --events:")
