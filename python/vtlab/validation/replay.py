"""Paired replay of one bulk-transfer cell: ``vtlab validate v2g --replay ALG:LOSS:SEED``.

ns-3 runs the cell (``validation/ns3/v2g.cc``, one vehicle) with ``--traceLoss`` (the
positions of the packets each PLC error model lost among every packet that reached
it, IP fragments included) and ``--traceTcp`` (the sender's cwnd, ssthresh,
congestion state, timeouts and retransmissions).  vtlab then runs the same cell with
those positions as ``replay`` loss models, so both simulators lose exactly the same
packets, and records its typed events.  The two congestion-control timelines are
aligned event by event and the first divergence is reported with the state of both
senders and the events around it.

The compared events (:data:`KEY_KINDS`) are the ones that mark congestion decisions:
a change of congestion state (``open``, ``disorder``, ``recovery``, ``loss``), a
change of ssthresh and a retransmission timeout.  The k-th such event of one side is
compared with the k-th of the other: same kind, same value (the new state, the new
ssthresh in bytes) and times within a tolerance.  Events at the same instant are put
in a fixed order (timeout, state, ssthresh) on both sides, since the simulators emit
them in different orders.  Times are from the flow's start (ns-3 starts it at 0.1 s,
vtlab at 0).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from vtlab.ns3.cc import ns3_ccs, ns3_type_id
from vtlab.ns3.process import parse_flow_lines, parse_loss_positions
from vtlab.ns3.program import Ns3Binary, ensure_binary
from vtlab.ns3.v2g import ns3_args
from vtlab.validation.errors import ValidateError
from vtlab.validation.paired import paired_run, replay_loss
from vtlab.validation.units import parse_loss
from vtlab.validation.v2g import QDISCS, vtlab_spec

__all__ = [
    "KEY_KINDS",
    "Event",
    "Replay",
    "first_divergence",
    "format_replay",
    "key_events",
    "ns3_timeline",
    "paired_replay",
    "parse_cell",
    "vtlab_timeline",
]

#: Compared event kinds, in their order at one instant.
KEY_KINDS: tuple[str, ...] = ("rto", "state", "ssthresh")
#: Start of ns-3's flow (v2g.cc: 0.1 s) in nanoseconds.
NS3_START_NS = 100_000_000
#: Two event times agree when they differ by at most this (handshakes differ by the
#: SYN options, tens of microseconds, docs/validation.md).
DEFAULT_TOLERANCE_S = 0.001
#: ns-3's TcpCongState names -> vtlab's.
NS3_STATES = {
    "CA_OPEN": "open",
    "CA_DISORDER": "disorder",
    "CA_CWR": "cwr",
    "CA_RECOVERY": "recovery",
    "CA_LOSS": "loss",
}


@dataclass(frozen=True)
class Event:
    """One event of a sender's timeline and the sender's state right after it."""

    time_ns: int  #: from the flow's start
    kind: str  #: rto, state, ssthresh, retx (context only), cwnd (ns-3 only)
    value: str  #: the new state, the new ssthresh, the retransmitted byte offset
    cwnd: int
    ssthresh: float  #: inf before the first loss
    state: str

    @property
    def time_s(self) -> float:
        return self.time_ns / 1e9

    def text(self) -> str:
        ss = "inf" if math.isinf(self.ssthresh) else f"{int(self.ssthresh)}"
        return (
            f"{self.time_s:12.6f} s  {self.kind:<8} {self.value:<10} cwnd {self.cwnd:>7} "
            f"ssthresh {ss:>7} {self.state}"
        )


def parse_cell(text: str) -> tuple[str, float, int]:
    """``westwood-plus:5%:3`` -> ("westwood-plus", 0.05, 3)."""
    parts = str(text).split(":")
    if len(parts) != 3:
        raise ValidateError(
            "--replay", f"{text!r} is not ALGORITHM:LOSS:SEED (e.g. westwood-plus:5%:3)"
        )
    cc, loss_text, seed_text = (p.strip() for p in parts)
    if ns3_type_id(cc) is None:
        raise ValidateError(
            "--replay", f"no ns-3 counterpart for {cc} (allowed: {', '.join(ns3_ccs())})"
        )
    loss = parse_loss(loss_text, "--replay")
    try:
        seed = int(seed_text)
    except ValueError:
        raise ValidateError("--replay", f"seed {seed_text!r} is not a number") from None
    if not 1 <= seed <= 2**31 - 1:
        raise ValidateError("--replay", f"seed {seed} is outside [1, {2**31 - 1}]")
    return cc, loss, seed


# -- the two timelines -------------------------------------------------------------------


def ns3_timeline(stderr: str, flow: int = 0) -> tuple[list[Event], dict[str, list[int]]]:
    """The sender timeline of ``flow`` and the lost positions from v2g.cc's stderr
    (``--traceTcp``, ``--traceLoss``)."""
    events: list[Event] = []
    cwnd, ssthresh, state = 0, math.inf, "open"
    for line in stderr.splitlines():
        parts = line.split()
        if len(parts) < 4 or parts[0] != "tcp" or parts[1] != str(flow):
            continue
        t = int(parts[2]) - NS3_START_NS
        what = parts[3]
        if what == "cwnd":
            cwnd = int(parts[5])
            events.append(Event(t, "cwnd", parts[5], cwnd, ssthresh, state))
        elif what == "ssthresh":
            new = int(parts[5])
            value = math.inf if new >= 2**32 - 1 else float(new)
            if value != ssthresh:  # not the initial 0 -> "infinite" (2^32 - 1)
                ssthresh = value
                events.append(Event(t, "ssthresh", _ss(ssthresh), cwnd, ssthresh, state))
        elif what == "state":
            state = NS3_STATES.get(parts[5], parts[5])
            events.append(Event(t, "state", state, cwnd, ssthresh, state))
        elif what == "rto_expiry":
            events.append(Event(t, "rto", parts[4], cwnd, ssthresh, state))
        elif what == "retx":
            # ns-3's relative sequence numbers count the SYN: byte offset = seq - 1
            events.append(Event(t, "retx", str(int(parts[4]) - 1), cwnd, ssthresh, state))
    return _fix_order(events), parse_loss_positions(stderr)


def _ss(ssthresh: float) -> str:
    return "inf" if math.isinf(ssthresh) else str(int(ssthresh))


def vtlab_timeline(rows: Sequence[Mapping[str, Any]], start_ns: int = 0) -> list[Event]:
    """The sender timeline from vtlab's typed events (``Result.events`` rows of one
    flow): state changes, timeouts and retransmissions as they are, and an
    ``ssthresh`` event wherever ssthresh changed."""
    events: list[Event] = []
    last_ss: float | None = None
    for r in rows:
        t = int(r["time_ns"]) - start_ns
        ss = float(r["ssthresh_bytes"])
        cwnd, state = int(r["cwnd_bytes"]), str(r["ca_state"])
        kind = r["event"]
        if kind == "state":
            events.append(Event(t, "state", state, cwnd, ss, state))
        elif kind == "rto":
            events.append(Event(t, "rto", "", cwnd, ss, state))
        elif kind == "retransmit":
            events.append(Event(t, "retx", str(int(r["seq"])), cwnd, ss, state))
        if last_ss is None:
            last_ss = math.inf
        if ss != last_ss:
            events.append(Event(t, "ssthresh", _ss(ss), cwnd, ss, state))
            last_ss = ss
    return _fix_order(events)


def _fix_order(events: list[Event]) -> list[Event]:
    """Stable sort by time, and at one instant timeout < state < ssthresh < others."""
    rank = {k: i for i, k in enumerate(KEY_KINDS)}
    return sorted(events, key=lambda e: (e.time_ns, rank.get(e.kind, len(rank))))


def key_events(events: Sequence[Event]) -> list[Event]:
    """The compared events (:data:`KEY_KINDS`) of a timeline.  A state held for no
    time (another state change at the same instant follows) is left out: ns-3 passes
    through ``disorder`` on the ACK that starts recovery, vtlab goes to ``recovery``
    directly, and both are the same decision."""
    key = [e for e in events if e.kind in KEY_KINDS]
    out = []
    for i, e in enumerate(key):
        if e.kind == "state" and any(
            f.kind == "state" and f.time_ns == e.time_ns for f in key[i + 1 : i + 4]
        ):
            continue
        out.append(e)
    return out


def _state_at(events: Sequence[Event], time_ns: int) -> Event | None:
    """The last event at or before ``time_ns`` (the sender's state then)."""
    last = None
    for e in events:
        if e.time_ns > time_ns:
            break
        last = e
    return last


@dataclass
class Divergence:
    """The first pair of key events that differ (index ``k`` in both key lists)."""

    index: int
    why: str
    ns3: Event | None
    vtlab: Event | None
    ns3_context: list[Event] = field(default_factory=list)
    vtlab_context: list[Event] = field(default_factory=list)
    #: each side's state at the other side's event time (what the other did not do)
    ns3_then: Event | None = None
    vtlab_then: Event | None = None


def first_divergence(
    ns3: Sequence[Event],
    vtlab: Sequence[Event],
    tolerance_s: float = DEFAULT_TOLERANCE_S,
    context: int = 4,
) -> tuple[int, Divergence | None]:
    """Compare the key events of two timelines in order; (number of matching key
    events, the first divergence or ``None``).  ``context`` key events before the
    divergence (and after it) are kept from each side."""
    ka, kb = key_events(ns3), key_events(vtlab)
    tol_ns = tolerance_s * 1e9
    n = min(len(ka), len(kb))
    for i in range(n):
        a, b = ka[i], kb[i]
        why = ""
        if a.kind != b.kind:
            why = f"event kind: ns-3 {a.kind}, vtlab {b.kind}"
        elif a.value != b.value and a.kind != "rto":
            why = f"{a.kind}: ns-3 {a.value}, vtlab {b.value}"
        elif abs(a.time_ns - b.time_ns) > tol_ns:
            why = f"time: ns-3 {a.time_s:.6f} s, vtlab {b.time_s:.6f} s"
        if why:
            return i, _divergence(i, why, ka, kb, ns3, vtlab, context)
    if len(ka) != len(kb):
        longer = "ns-3" if len(ka) > len(kb) else "vtlab"
        why = f"{longer} has more key events ({len(ka)} vs {len(kb)})"
        return n, _divergence(n, why, ka, kb, ns3, vtlab, context)
    return n, None


def _divergence(
    i: int,
    why: str,
    ka: Sequence[Event],
    kb: Sequence[Event],
    ns3: Sequence[Event],
    vtlab: Sequence[Event],
    context: int,
) -> Divergence:
    a = ka[i] if i < len(ka) else None
    b = kb[i] if i < len(kb) else None
    d = Divergence(
        i,
        why,
        a,
        b,
        list(ka[max(0, i - context) : i + context + 1]),
        list(kb[max(0, i - context) : i + context + 1]),
    )
    if b is not None:
        d.ns3_then = _state_at(ns3, b.time_ns)
    if a is not None:
        d.vtlab_then = _state_at(vtlab, a.time_ns)
    return d


# -- running both sides ------------------------------------------------------------------


@dataclass
class Replay:
    """A paired replay of one cell."""

    cc: str
    loss: float
    seed: int
    qdisc: str
    nbytes: int
    drops: dict[str, list[int]]
    matched: int
    divergence: Divergence | None
    counts: dict[str, dict[str, int]]  #: side -> key-event kind -> count
    goodput_mbps: dict[str, float]
    command: list[str]  #: the ns-3 command line
    #: when the first divergence is one of time: the first divergence of kind or
    #: value ignoring times (matched key events, the divergence or None)
    by_value: tuple[int, Divergence | None] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _ns3_command(
    cc: str, loss: float, seed: int, nbytes: int, qdisc: str, binary: Ns3Binary
) -> list[str]:
    from vtlab import _core

    known = cc in {c["name"] for c in _core.congestion_controls()}
    expanded = json.loads(
        _core.expand(json.dumps(vtlab_spec(cc if known else "newreno", loss, nbytes)))
    )
    for flow in expanded["flows"]:
        flow["tcp"]["cc"] = cc
    return [
        str(binary.path),
        *ns3_args(expanded, seed),
        f"--qdisc={QDISCS[qdisc][0]}",
        "--traceTcp=true",
    ]


#: Position of the handshake's third segment toward the EVCC in ns-3's count: ns-3's
#: bulk sender answers the SYN-ACK with a pure ACK before its first data segment
#: (positions: 0 SYN, 1 ACK, 2.. data); vtlab's sends its first data segment straight
#: away (``Sender::on_syn_ack``), which carries the ACK (0 SYN, 1.. data).
NS3_HANDSHAKE_ACK = 1


def vtlab_positions(toward_evcc: Sequence[int]) -> tuple[list[int], bool]:
    """ns-3's lost positions toward the EVCC in vtlab's count: every position after
    the handshake's pure ACK moves down by one; the ACK itself has no counterpart
    (returned: whether ns-3 lost it)."""
    lost_ack = NS3_HANDSHAKE_ACK in toward_evcc
    return [p - 1 if p > NS3_HANDSHAKE_ACK else p for p in toward_evcc if p != 1], lost_ack


def replay_spec(
    cc: str,
    nbytes: int,
    drops: Mapping[str, Sequence[int]],
    qdisc: str,
    profile: str = "ns3",
) -> dict[str, Any]:
    """vtlab's scenario of the cell with ns-3's lost positions as ``replay`` models
    (toward the EVCC translated by :func:`vtlab_positions`)."""
    spec = vtlab_spec(cc, 0.0, nbytes, "1", profile, qdisc)
    spec["loss"] = replay_loss(vtlab_positions(drops.get("toward_evcc", []))[0])
    back = list(drops.get("toward_secc", []))
    if back:
        spec["reverse_loss"] = replay_loss(back)
    return spec


def _counts(events: Sequence[Event]) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in events:
        if e.kind in (*KEY_KINDS, "retx"):
            key = f"{e.kind}:{e.value}" if e.kind == "state" else e.kind
            out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


def paired_replay(
    cc: str,
    loss: float,
    seed: int,
    *,
    nbytes: int,
    qdisc: str = "stock",
    profile: str = "ns3",
    tolerance_s: float = DEFAULT_TOLERANCE_S,
    binary: Ns3Binary | None = None,
    log: Callable[[str], None] | None = None,
) -> Replay:
    """Run ns-3 on the cell with its loss and TCP traces, vtlab with ns-3's losses
    (:func:`vtlab.validation.paired.paired_run`), and compare the two timelines
    (:func:`first_divergence`)."""
    from vtlab import _core

    # vtlab's side must be runnable before ns-3 spends its time (ScenarioError)
    _core.expand(json.dumps(replay_spec(cc, nbytes, {}, qdisc, profile)))
    if binary is None:
        binary = ensure_binary(log=log)
    pair = paired_run(
        _ns3_command(cc, loss, seed, nbytes, qdisc, binary),
        lambda drops: replay_spec(cc, nbytes, drops, qdisc, profile),
        seed,
        events=True,
    )
    ns_events, drops = ns3_timeline(pair.ns3.stderr)
    (ns_flow,) = parse_flow_lines(pair.ns3.stdout)
    res = pair.vtlab
    assert res.events is not None
    vt_events = vtlab_timeline(res.events.to_dict("records"))
    matched, div = first_divergence(ns_events, vt_events, tolerance_s)
    by_value = None
    if div is not None and div.why.startswith("time:"):
        by_value = first_divergence(ns_events, vt_events, math.inf)
    return Replay(
        cc,
        loss,
        seed,
        qdisc,
        nbytes,
        drops,
        matched,
        div,
        {"ns-3": _counts(ns_events), "vtlab": _counts(vt_events)},
        {
            "ns-3": float(ns_flow["goodput_bps"]) / 1e6,
            "vtlab": float(res.flows["goodput_bps"].iloc[0]) / 1e6,
        },
        pair.command,
        by_value,
    )


def format_replay(rep: Replay) -> str:
    """The replay as text: the cell, the losses, the first divergence and its context."""
    lines = [
        f"paired replay of {rep.cc} at {rep.loss * 100:g} % loss, seed {rep.seed}, "
        f"qdisc {rep.qdisc}, {rep.nbytes:,} bytes",
        f"ns-3 lost {len(rep.drops.get('toward_evcc', []))} packets toward the EVCC and "
        f"{len(rep.drops.get('toward_secc', []))} toward the SECC; vtlab loses the same "
        "packets (positions toward the EVCC less one: vtlab sends no pure handshake ACK)"
        + (
            "; ns-3 lost its handshake ACK, which vtlab does not send"
            if NS3_HANDSHAKE_ACK in rep.drops.get("toward_evcc", [])
            else ""
        ),
        f"goodput: ns-3 {rep.goodput_mbps['ns-3']:.3f} Mbit/s, vtlab "
        f"{rep.goodput_mbps['vtlab']:.3f} Mbit/s",
        "events: "
        + "; ".join(
            f"{side} " + ", ".join(f"{k} {v}" for k, v in c.items())
            for side, c in rep.counts.items()
        ),
    ]
    d = rep.divergence
    if d is None:
        lines.append(f"no divergence: all {rep.matched} key events agree")
        return "\n".join(lines)
    lines.append(
        f"{rep.matched} key events agree; first divergence at key event {d.index}: {d.why}"
    )
    if rep.by_value is not None:
        n, v = rep.by_value
        lines.append(
            "ignoring times: "
            + (
                f"no divergence, all {n} key events agree"
                if v is None
                else f"{n} key events agree; first divergence at key event {v.index} "
                f"({v.ns3.time_s if v.ns3 else math.nan:.6f} s): {v.why}"
            )
        )
    for side, ev, then, label in (
        ("ns-3", d.ns3, d.vtlab_then, "vtlab"),
        ("vtlab", d.vtlab, d.ns3_then, "ns-3"),
    ):
        lines.append(f"  {side:<5}: {ev.text() if ev else '(none)'}")
        if then is not None:
            lines.append(f"         {label} at that time: {then.text()}")
    for side, ctx in (("ns-3", d.ns3_context), ("vtlab", d.vtlab_context)):
        lines.append(f"{side} key events around it:")
        lines += [f"  {'>' if e in (d.ns3, d.vtlab) else ' '} {e.text()}" for e in ctx]
    return "\n".join(lines)
