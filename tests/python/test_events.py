"""Typed events and change traces from the Python API and the CLI (--events,
--trace-mode), and their qlog form."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

import vtlab
from qlog_schema import validate
from vtlab.api import EVENT_COLUMNS
from vtlab.qlog import flow_endpoints, to_qlog

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


def _row(seed, event, ms, cwnd, ssthresh, state, seq=0, detail=""):
    return {"seed": seed, "flow": "f", "scenario_hash": "h", "event": event,
            "time_ns": int(ms * 1e6), "cwnd_bytes": cwnd, "ssthresh_bytes": ssthresh,
            "ca_state": state, "seq": seq, "detail": detail}  # fmt: skip


def test_qlog_maps_events_to_qlog_names():
    inf = float("inf")
    rows = [
        _row(1, "window", 2.5, 14600, inf, "open"),
        _row(1, "state", 3, 7300, 7300.0, "recovery", detail="disorder"),
        _row(1, "drop", 3, 7300, 7300.0, "recovery", 2920, "link data on plc secc->evcc"),
        _row(1, "retransmit", 3, 7300, 7300.0, "recovery", 2920),
        _row(1, "state", 4, 7300, 7300.0, "open", detail="recovery"),
        # open -> disorder: both congestion avoidance (cwnd = ssthresh) in qlog.
        _row(1, "state", 5, 7300, 7300.0, "disorder", detail="open"),
    ]
    doc = to_qlog(rows, endpoints={"f": ("sa", "evcc")})
    assert doc["qlog_version"] == "0.3" and len(doc["traces"]) == 1
    trace = doc["traces"][0]
    assert trace["vantage_point"] == {"type": "client", "name": "sa"}
    e = trace["events"]
    # 2.5 ms; no ssthresh while it is unset (infinite).
    assert e[0] == {"time": 2.5, "name": "recovery:metrics_updated",
                    "data": {"congestion_window": 14600}}  # fmt: skip
    assert e[1] == {"time": 3.0, "name": "recovery:congestion_state_updated",
                    "data": {"old": "slow_start", "new": "recovery"},
                    "vtlab_state": "recovery"}  # fmt: skip
    assert e[2] == {"time": 3.0, "name": "recovery:packet_lost",
                    "data": {"header": {"packet_type": "1RTT", "packet_number": 2920}},
                    "vtlab_detail": "link data on plc secc->evcc"}  # fmt: skip
    assert e[3]["data"] == {"header": {"packet_type": "1RTT", "packet_number": 2920},
                            "trigger": "retransmit_reordered"}  # fmt: skip
    # Leaving recovery with cwnd = ssthresh: congestion avoidance.
    assert e[4]["data"] == {"old": "recovery", "new": "congestion_avoidance"}
    # A vtlab state change that is no qlog state change is vtlab's own event.
    assert e[5] == {"time": 5.0, "name": "vtlab:ca_state_updated",
                    "data": {"old": "open", "new": "disorder"}}  # fmt: skip
    assert len(e) == 6 and validate(doc) == []


def test_qlog_state_is_kept_per_trace():
    inf = float("inf")
    rows = [
        _row(1, "state", 1, 7300, 7300.0, "recovery", detail="disorder"),
        # Seed 2 starts afresh in slow start, whatever seed 1 reached.
        _row(2, "state", 1, 16060, inf, "disorder", detail="open"),
        _row(2, "state", 2, 8030, 8030.0, "recovery", detail="disorder"),
        # A window update crossing ssthresh leaves slow start (cwnd 14600 ≥ 8030).
        _row(2, "window", 3, 14600, 8030.0, "open"),
    ]
    doc = to_qlog(rows)
    one, two = (t["events"] for t in doc["traces"])
    assert [x["data"] for x in one] == [{"old": "slow_start", "new": "recovery"}]
    assert [(x["name"], x["data"].get("old"), x["data"].get("new")) for x in two] == [
        ("vtlab:ca_state_updated", "open", "disorder"),
        ("recovery:congestion_state_updated", "slow_start", "recovery"),
        ("recovery:congestion_state_updated", "recovery", "congestion_avoidance"),
        ("recovery:metrics_updated", None, None),
    ]
    # Without the scenario the sender is still the client, unnamed.
    assert doc["traces"][0]["vantage_point"] == {"type": "client"}


def test_qlog_of_a_lossy_run_is_valid():
    sc = vtlab.Scenario(LOSSY)
    res = vtlab.run_many(sc, [1, 2], progress=False, events=True)
    doc = to_qlog(res.events.to_dict(orient="records"),
                  endpoints=flow_endpoints(sc.expanded()))  # fmt: skip
    assert validate(doc) == []
    assert len(doc["traces"]) == 2
    for trace in doc["traces"]:
        # v2g's flow evcc is sent by the secondary actor sa to the vehicle.
        assert trace["vantage_point"] == {"type": "client", "name": "sa"}
        states = [x["data"] for x in trace["events"]
                  if x["name"] == "recovery:congestion_state_updated"]  # fmt: skip
        assert states and states[0]["old"] == "slow_start"
        assert all(s["old"] != s["new"] for s in states)
        # Each change starts where the previous one ended.
        assert all(a["new"] == b["old"] for a, b in zip(states, states[1:], strict=False))
        lost = [x for x in trace["events"] if x["name"] == "recovery:packet_lost"]
        assert lost and all(x["data"]["header"]["packet_type"] == "1RTT" for x in lost)


def test_schema_model_rejects_invalid_qlog():
    # What vtlab wrote before: no packet_type, free text as trigger, vtlab fields in
    # a closed event body, a vantage point type the schema does not know.
    event = {"time": 1.0, "name": "recovery:packet_lost",
             "data": {"header": {"packet_number": 2}, "trigger": "link data"}}  # fmt: skip
    state = {"time": 1.0, "name": "recovery:congestion_state_updated",
             "data": {"old": "a", "new": "b", "vtlab_state": "open"}}  # fmt: skip
    trace = {"vantage_point": {"type": "vehicle"}, "events": [event, state, {"time": "x"}]}
    doc = {"qlog_version": "0.3", "traces": [trace]}
    assert validate(doc) == [
        "$.traces[0].vantage_point.type: 'vehicle' not one of client, server, network, unknown",
        "$.traces[0].events[0].data.header.packet_type: required field missing",
        "$.traces[0].events[0].data.trigger: 'link data' not one of reordering_threshold, "
        "time_threshold, pto_expired",
        "$.traces[0].events[1].data.vtlab_state: field not in the schema",
        "$.traces[0].events[2].time: not a number",
        "$.traces[0].events[2].name: required field missing",
        "$.traces[0].events[2].data: required field missing",
    ]
    assert validate({"qlog_version": "0.4", "traces": []}) == [
        "$.qlog_version: '0.4' not one of 0.3"
    ]


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
    assert validate(doc) == []
    assert doc["traces"][0]["vantage_point"] == {"type": "client", "name": "sa"}
    # Every event but the state rows is one qlog event (state rows become state
    # changes, qlog's or vtlab's, or nothing where neither state changes).
    names = [e["name"] for t in doc["traces"] for e in t["events"]]
    other = [n for n in names if not n.endswith("state_updated")]
    assert len(other) == (ev["event"] != "state").sum()
    bad = subprocess.run(
        [sys.executable, "-m", "vtlab", "run", "v2g", "--events", str(tmp_path / "e.txt")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("error: --events:")
