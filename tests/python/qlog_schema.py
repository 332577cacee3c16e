"""A typed model of the qlog schema that vtlab's qlog files declare (qlog_version
"0.3"), written by hand from the CDDL of draft-ietf-quic-qlog-main-schema-05
(QlogFile, Trace, VantagePoint, CommonFields, Event, $ProtocolEventBody) and of
draft-ietf-quic-qlog-quic-events-04 (the recovery and transport events vtlab writes,
PacketHeader, PacketType). ``validate`` returns the violations as ``path: problem``
lines, none for a valid document.

CDDL maps are closed unless they list ``* text => any``: QlogFile, Trace,
VantagePoint, PacketHeader and the QUIC event bodies are closed; Event, CommonFields
and $ProtocolEventBody (the body of events of other namespaces) are open. A field
with ``?`` is optional, one without is required.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[Any], str | None]  # a problem, or None


def text(v: Any) -> str | None:
    return None if isinstance(v, str) else "not text"


def number(v: Any) -> str | None:  # float32 / float64 (a JSON number)
    ok = isinstance(v, int | float) and not isinstance(v, bool)
    return None if ok else "not a number"


def uint(bits: int) -> Check:
    def check(v: Any) -> str | None:
        ok = isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**bits
        return None if ok else f"not a uint{bits}"

    return check


def boolean(v: Any) -> str | None:
    return None if isinstance(v, bool) else "not a bool"


def one_of(*values: str) -> Check:
    def check(v: Any) -> str | None:
        return None if v in values else f"{v!r} not one of {', '.join(values)}"

    return check


def list_of(item: Check) -> Check:
    def check(v: Any) -> str | None:
        if not isinstance(v, list):
            return "not an array"
        bad = [p for p in map(item, v) if p is not None]
        return bad[0] if bad else None

    return check


VANTAGE_TYPE = one_of("client", "server", "network", "unknown")
TIME_FORMAT = one_of("absolute", "delta", "relative")
PACKET_TYPE = one_of(
    "initial", "handshake", "0RTT", "1RTT", "retry", "version_negotiation",
    "stateless_reset", "unknown",
)  # fmt: skip

# name -> (check, required); a map model is (fields, open).
Model = tuple[dict[str, tuple[Any, bool]], bool]

VANTAGE_POINT: Model = (
    {"name": (text, False), "type": (VANTAGE_TYPE, True), "flow": (VANTAGE_TYPE, False)},
    False,
)
COMMON_FIELDS: Model = (
    {
        "time_format": (TIME_FORMAT, False),
        "reference_time": (number, False),
        "protocol_type": (list_of(text), False),
        "group_id": (text, False),
    },
    True,
)
PACKET_HEADER: Model = (
    {
        "packet_type": (PACKET_TYPE, True),
        "packet_number": (uint(64), False),
        "flags": (uint(8), False),
        "length": (uint(16), False),
    },
    False,
)
# The event bodies (quic-events-04), by event name.
EVENT_DATA: dict[str, Model] = {
    "recovery:metrics_updated": (
        {
            **{k: (number, False) for k in ("min_rtt", "smoothed_rtt", "latest_rtt")},
            "rtt_variance": (number, False),
            "pto_count": (uint(16), False),
            **{k: (uint(64), False) for k in ("congestion_window", "bytes_in_flight", "ssthresh")},
            "packets_in_flight": (uint(64), False),
            "pacing_rate": (uint(64), False),
        },
        False,
    ),
    "recovery:congestion_state_updated": (
        {
            "old": (text, False),
            "new": (text, True),
            "trigger": (one_of("persistent_congestion", "ECN"), False),
        },
        False,
    ),
    "recovery:loss_timer_updated": (
        {
            "timer_type": (one_of("ack", "pto"), False),
            "packet_number_space": (one_of("initial", "handshake", "application_data"), False),
            "event_type": (one_of("set", "expired", "cancelled"), True),
            "delta": (number, False),
        },
        False,
    ),
    "recovery:packet_lost": (
        {
            "header": (PACKET_HEADER, False),
            "is_mtu_probe_packet": (boolean, False),
            "trigger": (one_of("reordering_threshold", "time_threshold", "pto_expired"), False),
        },
        False,
    ),
    "transport:packet_sent": (
        {
            "header": (PACKET_HEADER, True),
            "is_coalesced": (boolean, False),
            "datagram_id": (uint(32), False),
            "is_mtu_probe_packet": (boolean, False),
            "trigger": (
                one_of(
                    "retransmit_reordered",
                    "retransmit_timeout",
                    "pto_probe",
                    "retransmit_crypto",
                    "cc_bandwidth_probe",
                ),
                False,
            ),  # fmt: skip
        },
        False,
    ),
}
# $ProtocolEventBody of the main schema: open, with an optional text trigger.
PROTOCOL_EVENT_BODY: Model = ({"trigger": (text, False)}, True)
EVENT: Model = (
    {
        "time": (number, True),
        "name": (text, True),
        "time_format": (TIME_FORMAT, False),
        "protocol_type": (list_of(text), False),
        "group_id": (text, False),
    },
    True,
)


def _map(value: Any, model: Model, path: str, errors: list[str]) -> None:
    if not isinstance(value, dict):
        errors.append(f"{path}: not a map")
        return
    fields, is_open = model
    for name, (check, required) in fields.items():
        if name not in value:
            if required:
                errors.append(f"{path}.{name}: required field missing")
        elif isinstance(check, tuple):
            _map(value[name], check, f"{path}.{name}", errors)
        elif (problem := check(value[name])) is not None:
            errors.append(f"{path}.{name}: {problem}")
    if not is_open:
        errors += [f"{path}.{k}: field not in the schema" for k in value if k not in fields]


def _event(event: Any, path: str, errors: list[str]) -> None:
    _map(event, EVENT, path, errors)
    if not isinstance(event, dict):
        return
    if "data" not in event:
        errors.append(f"{path}.data: required field missing")
        return
    name = event.get("name")
    _map(event["data"], EVENT_DATA.get(name, PROTOCOL_EVENT_BODY), f"{path}.data", errors)


def validate(doc: Any, version: str = "0.3") -> list[str]:
    """The schema violations of a qlog JSON document (a QlogFile)."""
    errors: list[str] = []
    trace: Model = (
        {
            "title": (text, False),
            "description": (text, False),
            "configuration": (({}, True), False),
            "common_fields": (COMMON_FIELDS, False),
            "vantage_point": (VANTAGE_POINT, False),
            "events": (lambda v: None if isinstance(v, list) else "not an array", True),
        },
        False,
    )
    top: Model = (
        {
            "qlog_version": (one_of(version), True),
            "qlog_format": (text, False),
            "title": (text, False),
            "description": (text, False),
            "summary": (({}, True), False),
            "traces": (lambda v: None if isinstance(v, list) else "not an array", False),
        },
        False,
    )
    _map(doc, top, "$", errors)
    for i, t in enumerate(doc.get("traces", []) if isinstance(doc, dict) else []):
        _map(t, trace, f"$.traces[{i}]", errors)
        events = t.get("events") if isinstance(t, dict) else None
        for j, e in enumerate(events if isinstance(events, list) else []):
            _event(e, f"$.traces[{i}].events[{j}]", errors)
    return errors
