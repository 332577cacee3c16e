"""The request/response (ISO 15118-style) session program ``validation/ns3/iso15118.cc``:
its command line from a resolved vtlab scenario (:func:`iso15118_args`), running it
and parsing its output (see validation/ns3/README-iso15118.md)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from vtlab.ns3.cc import ns3_ccs, ns3_type_id
from vtlab.ns3.process import num, run_process
from vtlab.ns3.program import ISO15118_PROGRAM, Ns3Error, build_program

__all__ = [
    "iso15118_args",
    "iso15118_schedule",
    "parse_iso15118_output",
    "run_iso15118_reference",
]

#: TCP settings the program leaves at ns-3's defaults; a vtlab session must match them.
_NS3_FIXED: dict[str, Any] = {
    "profile": "ns3",
    "header_bytes": 40,
    "dupack_threshold": 3,
    "limited_transmit": True,
    "prr": True,
    "initial_ssthresh": None,
    "rto_initial_ns": 1_000_000_000,
    "rto_max_ns": 60_000_000_000,
    "clock_granularity_ns": 1_000_000,
    "syn_timeout_ns": 3_000_000_000,
    "delayed_ack_timeout_ns": 200_000_000,
}


def iso15118_schedule(steps: Sequence[Mapping[str, Any]]) -> str:
    """The ``--schedule`` argument of a resolved session's steps:
    ``name:req:resp:timeout:repeats:period;...`` (bytes, bytes, s, count, s).
    Raises :class:`ValueError` for a step name the program cannot parse."""
    if not steps:
        raise ValueError("sessions.steps: at least one step")
    items = []
    for step in steps:
        name = str(step["name"])
        if not name or any(c in name for c in ":;"):
            raise ValueError(
                f"sessions.steps: the program needs a step name without ':' or ';', not {name!r}"
            )
        items.append(
            f"{name}:{int(step['request_bytes'])}:{int(step['response_bytes'])}:"
            f"{num(step['timeout_ns'] / 1e9)}:{int(step['repeats'])}:"
            f"{num(step['period_ns'] / 1e9)}"
        )
    return ";".join(items)


def _burst_rate(where: str, model: Mapping[str, Any]) -> str:
    """The burst-start probability of a resolved loss model, at full precision (repr
    round-trips a double), so that both simulators draw against the same p."""
    if model.get("model") == "none":
        return "0"
    if model.get("model") == "burst" and (model["burst_min"], model["burst_max"]) == (1, 4):
        return repr(float(model["burst_start"]))
    raise ValueError(f"links.plc.{where}: the program has the burst model (bursts of 1..4) only")


def _session(expanded: Mapping[str, Any]) -> Mapping[str, Any]:
    """The one session of a resolved scenario the program can run: EVCC (client) and
    SECC (server) on the two ends of the ``plc`` link, no flows."""
    sessions = list(expanded.get("sessions") or [])
    links = {link["name"]: link for link in expanded.get("links", [])}
    if len(sessions) != 1 or expanded.get("flows"):
        raise ValueError("the ISO 15118 program runs one session and no flows")
    session = sessions[0]
    plc = links.get("plc")
    if plc is None or (plc["a"], plc["b"]) != ("secc", "evcc"):
        raise ValueError("links.plc: the ISO 15118 program models the v2g preset's secc -- evcc")
    if (session["client"], session["server"]) != ("evcc", "secc"):
        raise ValueError(
            "sessions: the ISO 15118 program runs the evcc (client) and the secc (server)"
        )
    if session.get("retries", 0) != 0:
        raise ValueError("sessions.retries: the ISO 15118 program has no application retry (0)")
    if session["processing_ns"] != 0:
        raise ValueError("sessions.processing: the ISO 15118 program answers at once (0)")
    if plc.get("qdisc") is not None:
        raise ValueError("links.plc.qdisc: the ISO 15118 program installs no queue disc (none)")
    if plc["framing_bytes"] != 2:
        raise ValueError("links.plc.framing_bytes: ns-3 point-to-point frames add 2 bytes (PPP)")
    return session


def _tcp_args(tcp: Mapping[str, Any]) -> list[str]:
    """The TCP flags of a resolved session's ``tcp`` (``DataRetries`` stays the
    program's 1000: vtlab allows at most 100)."""
    type_id = ns3_type_id(tcp["cc"])
    if type_id is None:
        raise ValueError(
            f"tcp.cc: '{tcp['cc']}' has no ns-3 counterpart (ns-3 has: {', '.join(ns3_ccs())})"
        )
    for name, want in _NS3_FIXED.items():
        if tcp.get(name) != want:
            raise ValueError(f"tcp.{name}: must be {want!r} to compare with ns-3")
    if tcp.get("cc_params"):
        raise ValueError("tcp.cc_params: the ns-3 program runs every algorithm at its defaults")
    if tcp["recovery"] not in ("sack", "newreno"):
        raise ValueError(f"tcp.recovery: '{tcp['recovery']}' has no ns-3 counterpart")
    return [
        f"--cc={type_id}",
        f"--sack={'true' if tcp['recovery'] == 'sack' else 'false'}",
        f"--timestamps={'true' if tcp['timestamps'] else 'false'}",
        f"--delAckCount={tcp['delayed_ack_count'] if tcp['delayed_ack'] else 1}",
        f"--segmentSize={tcp['mss']}",
        f"--initialCwnd={tcp['initial_cwnd']}",
        f"--minRto={num(tcp['rto_min_ns'] / 1e9)}",
        f"--sndBuf={tcp['send_buffer']}",
        f"--rcvBuf={tcp['recv_buffer']}",
    ]


def iso15118_args(
    expanded: Mapping[str, Any],
    seed: int,
    *,
    stop_s: float | None = None,
    loss_start_s: float = 0.0,
) -> list[str]:
    """The command line of the ISO 15118 session program (without the binary) for a
    resolved single-vehicle scenario with one session (``Scenario.expand()``): its
    schedule, the ``plc`` link and its burst-start probabilities (toward the EVCC:
    ``loss_ab``, toward the SECC: ``loss_ba``), the session's TCP and
    ``abort_on_miss``.  ``seed`` is ns-3's RngRun (RngSeed stays 1, as for v2g.cc).
    ``stop_s`` ends the simulation then; ``loss_start_s`` > 0 keeps both error models
    off until that simulated time (``--lossStart``, for tests that need the handshake
    through).  Anything the program cannot reproduce raises :class:`ValueError`
    naming the field."""
    session = _session(expanded)
    plc = {link["name"]: link for link in expanded["links"]}["plc"]
    args = [
        f"--schedule={iso15118_schedule(session['steps'])}",
        f"--run={int(seed)}",
        f"--burstRate={_burst_rate('loss_ab', plc['loss_ab'])}",
        f"--reverseBurstRate={_burst_rate('loss_ba', plc['loss_ba'])}",
        *_tcp_args(session["tcp"]),
        f"--rate={int(plc['rate_bps'])}bps",
        f"--delay={int(plc['delay_ns'])}ns",
        f"--mtu={plc['mtu_bytes']}",
        f"--queuePackets={plc['queue_packets']}",
        f"--abortOnMiss={'true' if session['abort_on_miss'] else 'false'}",
    ]
    if stop_s is not None:
        if not float(stop_s) > 0:
            raise ValueError(f"stop_s: {stop_s!r} must be positive")
        args.append(f"--stop={num(stop_s)}")
    if loss_start_s:
        if not float(loss_start_s) > 0:
            raise ValueError(f"loss_start_s: {loss_start_s!r} must not be negative")
        args.append(f"--lossStart={num(loss_start_s)}")
    return args


def parse_iso15118_output(stdout: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Split the program's JSON lines into the per-request rows (in order) and the
    summary line.  Raises :class:`Ns3Error` if the summary is missing."""
    messages: list[dict[str, Any]] = []
    summary: dict[str, Any] | None = None
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        if d.get("summary") is True:
            summary = d
        else:
            messages.append(d)
    if summary is None:
        raise Ns3Error("the ISO 15118 session program printed no summary line")
    return messages, summary


def run_iso15118_reference(
    expanded: Mapping[str, Any],
    seed: int,
    *,
    stop_s: float | None = None,
    loss_start_s: float = 0.0,
    cache: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run the ns-3 request/response session (validation/ns3/iso15118.cc, compiled on
    demand by :func:`build_program` into ``<cache>/ns3-iso15118/<hash>/iso15118``) for
    a resolved scenario (:func:`iso15118_args`).

    Returns ``(messages, summary)``: ``messages`` has one dict per request written,
    in order, with the keys ``index`` (from 0), ``name``, ``request_s`` and
    ``response_s`` (simulator clock, i.e. including the 0.1 s start; ``response_s``
    None if no response came), ``response_time_s`` (None likewise) and ``missed``;
    ``summary`` is the program's summary line (``completed``, ``messages``,
    ``misses``, ``wall_s`` of the contract, and ``aborted``, ``end`` (why the
    session ended: completed, aborted, stop, connection_failed, ...), ``end_s``,
    ``connected_s``, ``scheduled``) plus the process's ``process_wall_s`` and
    ``max_rss_mib`` (:func:`run_process`).  Raises :class:`ValueError` for a scenario
    the program cannot run, :class:`Ns3Error` (or :class:`Ns3NotInstalled`) when ns-3
    fails.
    """
    args = iso15118_args(expanded, seed, stop_s=stop_s, loss_start_s=loss_start_s)
    binary = build_program(ISO15118_PROGRAM, cache=cache, log=log)
    cmd = [str(binary.path), *args]
    proc = run_process(cmd)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise Ns3Error(f"{shlex.join(cmd)} exited with {proc.returncode}: {tail}")
    messages, summary = parse_iso15118_output(proc.stdout)
    summary = {**summary, "process_wall_s": proc.wall_s, "max_rss_mib": proc.max_rss_mib}
    return messages, summary
