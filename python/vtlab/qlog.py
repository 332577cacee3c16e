"""Typed events as qlog (the IETF QUIC logging format, JSON serialization), so that
existing viewers (qvis and others) can plot a TCP flow's congestion window, losses
and state changes.

One qlog trace per (seed, flow). vtlab's events map to qlog event names:

| vtlab ``event`` | qlog ``name`` | data |
|---|---|---|
| ``window`` | ``recovery:metrics_updated`` | ``congestion_window``, ``ssthresh`` (bytes) |
| ``state`` | ``recovery:congestion_state_updated`` | ``old``, ``new`` |
| ``rto`` | ``recovery:loss_timer_updated`` | ``event_type: "expired"`` |
| ``retransmit`` | ``transport:packet_sent`` | ``header.packet_number`` (byte offset) |
| ``drop`` | ``recovery:packet_lost`` | ``header.packet_number``, ``trigger`` (cause and link) |
| ``spurious_rto`` | ``vtlab:spurious_timeout`` | ``detail`` |
| ``tlp`` (and any other) | ``vtlab:<event>`` | ``detail`` |

qlog's congestion states are ``slow_start``, ``congestion_avoidance`` and
``recovery``: vtlab's ``open`` and ``disorder`` become slow start or congestion
avoidance by cwnd < ssthresh, ``recovery`` stays, and ``loss`` (after a timeout) is
slow start; the vtlab state is kept in ``vtlab_state``. Times are milliseconds
relative to the start of the run.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from typing import Any

QLOG_VERSION = "0.3"


def _qlog_state(state: str, cwnd: float, ssthresh: float) -> str:
    if state == "recovery":
        return "recovery"
    if state == "loss" or cwnd < ssthresh:
        return "slow_start"
    return "congestion_avoidance"


def _event(row: Mapping[str, Any], previous_state: dict[str, str]) -> dict[str, Any]:
    kind = row["event"]
    cwnd, ssthresh = row["cwnd_bytes"], row["ssthresh_bytes"]
    window = {"congestion_window": int(cwnd)}
    if math.isfinite(ssthresh):
        window["ssthresh"] = int(ssthresh)
    if kind == "window":
        name, data = "recovery:metrics_updated", window
    elif kind == "state":
        new = _qlog_state(row["ca_state"], cwnd, ssthresh)
        old = previous_state.get(row["flow"], "slow_start")
        previous_state[row["flow"]] = new
        name = "recovery:congestion_state_updated"
        data = {"old": old, "new": new, "vtlab_state": row["ca_state"]}
    elif kind == "rto":
        name, data = "recovery:loss_timer_updated", {"event_type": "expired", "timer_type": "pto"}
    elif kind == "retransmit":
        name = "transport:packet_sent"
        data = {"header": {"packet_number": int(row["seq"])}, "is_retransmission": True}
    elif kind == "drop":
        name = "recovery:packet_lost"
        data = {"header": {"packet_number": int(row["seq"])}, "trigger": row["detail"]}
    else:
        name, data = f"vtlab:{kind}", {"detail": row["detail"]}
    return {"time": row["time_ns"] / 1e6, "name": name, "data": data}


def to_qlog(rows: Iterable[Mapping[str, Any]], title: str = "vtlab") -> dict[str, Any]:
    """A qlog document from event rows (dicts with the :data:`EVENT_COLUMNS`)."""
    traces: dict[tuple[int, str], dict[str, Any]] = {}
    states: dict[str, str] = {}
    for row in rows:
        key = (int(row["seed"]), str(row["flow"]))
        trace = traces.get(key)
        if trace is None:
            trace = traces[key] = {
                "title": f"flow {key[1]}, seed {key[0]}",
                "vantage_point": {"type": "server", "name": key[1]},
                "common_fields": {
                    "time_format": "relative",
                    "reference_time": 0,
                    "group_id": f"{row['scenario_hash']}/{key[0]}/{key[1]}",
                },
                "events": [],
            }
        trace["events"].append(_event(row, states))
    return {
        "qlog_version": QLOG_VERSION,
        "qlog_format": "JSON",
        "title": title,
        "traces": list(traces.values()),
    }


def write_qlog(rows: Iterable[Mapping[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write :func:`to_qlog` of ``rows`` as JSON to ``path``."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(to_qlog(rows), fh)
