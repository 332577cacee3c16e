"""Typed events as qlog (the IETF QUIC logging format, JSON serialization), so that
existing viewers (qvis and others) can plot a TCP flow's congestion window, losses
and state changes.

The files declare ``qlog_version`` "0.3": the main schema of
draft-ietf-quic-qlog-main-schema-01 to -05 (checked against -05) with the event
definitions of draft-ietf-quic-qlog-quic-events-04 (tests/python/qlog_schema.py is a
typed model of both, and the tests validate vtlab's output against it).

One qlog trace per (seed, flow), logged at the flow's sender: the node that sends
the SYN and the data, so the vantage point is ``{"type": "client", "name": <src
node>}`` (for v2g's flow ``evcc`` the sender ``sa``, not the receiving vehicle).
vtlab's events map to qlog event names:

| vtlab ``event`` | qlog ``name`` | data |
|---|---|---|
| ``window`` | ``recovery:metrics_updated`` | ``congestion_window``, ``ssthresh`` (bytes) |
| ``state`` | ``recovery:congestion_state_updated`` | ``old``, ``new``: qlog states that differ |
| ``state`` | ``vtlab:ca_state_updated`` | ``old``, ``new``: vtlab states, where only they differ |
| ``rto`` | ``recovery:loss_timer_updated`` | ``timer_type: "pto"``, ``event_type: "expired"`` |
| ``retransmit`` | ``transport:packet_sent`` | ``header``, ``trigger`` |
| ``drop`` | ``recovery:packet_lost`` | ``header`` |
| ``tlp``, ``spurious_rto`` (and any other) | ``vtlab:<event>`` | ``detail`` |

qlog's congestion states are ``slow_start``, ``congestion_avoidance`` and
``recovery``: vtlab's ``open`` and ``disorder`` are slow start or congestion
avoidance by cwnd < ssthresh, ``recovery`` stays, and ``loss`` (after a timeout) is
slow start. A trace starts in slow start; the state is followed per trace, so a
``recovery:congestion_state_updated`` is written wherever it changes (also when a
window update crosses ssthresh) and never with ``old`` equal to ``new``. Packet
headers carry ``packet_type`` "1RTT" (QUIC's type for application data, the only one
that numbers packets like a TCP data segment) and ``packet_number``, the segment's
byte offset. A retransmission's ``trigger`` is ``retransmit_timeout`` in state
``loss`` and ``retransmit_reordered`` (duplicate-ACK or SACK loss detection)
otherwise. Free text is not a ``trigger``: vtlab's own fields are event fields
(``vtlab_state``, the vtlab state; ``vtlab_detail``, e.g. the link that dropped a
packet), which the main schema allows on every event. Times are milliseconds
relative to the start of the run.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from typing import Any

QLOG_VERSION = "0.3"
#: QUIC's packet type for data-carrying packets, used for TCP data segments.
PACKET_TYPE = "1RTT"


def _qlog_state(state: str, cwnd: float, ssthresh: float) -> str:
    if state == "recovery":
        return "recovery"
    if state == "loss" or cwnd < ssthresh:
        return "slow_start"
    return "congestion_avoidance"


def _header(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"packet_type": PACKET_TYPE, "packet_number": int(row["seq"])}


def _body(row: Mapping[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """qlog name, data and vtlab's event fields of a non-state event row."""
    kind, cwnd, ssthresh = row["event"], row["cwnd_bytes"], row["ssthresh_bytes"]
    if kind == "window":
        data = {"congestion_window": int(cwnd)}
        if math.isfinite(ssthresh):
            data["ssthresh"] = int(ssthresh)
        return "recovery:metrics_updated", data, {}
    if kind == "rto":
        return "recovery:loss_timer_updated", {"timer_type": "pto", "event_type": "expired"}, {}
    if kind == "retransmit":
        trigger = "retransmit_timeout" if row["ca_state"] == "loss" else "retransmit_reordered"
        return "transport:packet_sent", {"header": _header(row), "trigger": trigger}, {}
    if kind == "drop":
        return "recovery:packet_lost", {"header": _header(row)}, {"vtlab_detail": row["detail"]}
    return f"vtlab:{kind}", {"detail": row["detail"]}, {}


class _Trace:
    """One qlog trace and the qlog congestion state it has reached."""

    def __init__(self, seed: int, flow: str, group: str, ends: tuple[str, str] | None):
        vantage: dict[str, str] = {"type": "client"}
        title = f"flow {flow}, seed {seed}"
        if ends is not None:
            vantage["name"] = ends[0]
            title = f"flow {flow} ({ends[0]} -> {ends[1]}), seed {seed}"
        self.state = "slow_start"
        self.doc: dict[str, Any] = {
            "title": title,
            "vantage_point": vantage,
            "common_fields": {"time_format": "relative", "reference_time": 0, "group_id": group},
            "events": [],
        }

    def add(self, row: Mapping[str, Any]) -> None:
        time = row["time_ns"] / 1e6
        events = self.doc["events"]
        new = _qlog_state(row["ca_state"], row["cwnd_bytes"], row["ssthresh_bytes"])
        if new != self.state:
            events.append(
                {
                    "time": time,
                    "name": "recovery:congestion_state_updated",
                    "data": {"old": self.state, "new": new},
                    "vtlab_state": row["ca_state"],
                }
            )
            self.state = new
        elif row["event"] == "state" and row["detail"] != row["ca_state"]:
            data = {"old": row["detail"], "new": row["ca_state"]}
            events.append({"time": time, "name": "vtlab:ca_state_updated", "data": data})
        if row["event"] == "state":
            return
        name, data, extra = _body(row)
        events.append({"time": time, "name": name, "data": data, **extra})


def to_qlog(
    rows: Iterable[Mapping[str, Any]],
    title: str = "vtlab",
    endpoints: Mapping[str, tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """A qlog document from event rows (dicts with the :data:`EVENT_COLUMNS`), in
    time order per (seed, flow). ``endpoints`` maps a flow's name to its (sender,
    receiver) nodes (:func:`flow_endpoints`), which name the vantage point."""
    traces: dict[tuple[int, str], _Trace] = {}
    for row in rows:
        key = (int(row["seed"]), str(row["flow"]))
        trace = traces.get(key)
        if trace is None:
            group = f"{row['scenario_hash']}/{key[0]}/{key[1]}"
            ends = None if endpoints is None else endpoints.get(key[1])
            trace = traces[key] = _Trace(key[0], key[1], group, ends)
        trace.add(row)
    return {
        "qlog_version": QLOG_VERSION,
        "qlog_format": "JSON",
        "title": title,
        "traces": [t.doc for t in traces.values()],
    }


def flow_endpoints(expanded: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """Each flow's (sender, receiver) nodes from a resolved scenario
    (:meth:`vtlab.Scenario.expanded`)."""
    return {f["name"]: (f["src"], f["dst"]) for f in expanded.get("flows", [])}


def write_qlog(
    rows: Iterable[Mapping[str, Any]],
    path: str | os.PathLike[str],
    endpoints: Mapping[str, tuple[str, str]] | None = None,
) -> None:
    """Write :func:`to_qlog` of ``rows`` as JSON to ``path``."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(to_qlog(rows, endpoints=endpoints), fh)
