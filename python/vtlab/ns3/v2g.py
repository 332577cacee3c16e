"""The bulk-transfer reference program ``validation/ns3/v2g.cc``: its arguments from a
resolved vtlab scenario (:func:`ns3_args`: the single-vehicle V2G cable and the
charging station), running it and summarising its flow rows."""

from __future__ import annotations

import json
import math
import shlex
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vtlab.ns3.cc import ns3_ccs, ns3_type_id
from vtlab.ns3.process import ProcResult, num, parse_flow_lines, run_process
from vtlab.ns3.program import Ns3Binary, Ns3Error

__all__ = ["ns3_args", "run_v2g", "run_v2g_flows", "vehicle_summary"]

#: ns-3 settings that v2g.cc leaves at ns-3's defaults; a vtlab scenario must match them.
_NS3_FIXED: dict[str, Any] = {
    "profile": "ns3",
    "header_bytes": 40,
    "dupack_threshold": 3,
    "limited_transmit": True,
    "rto_initial_ns": 1_000_000_000,
    "rto_max_ns": 60_000_000_000,
    "clock_granularity_ns": 1_000_000,
    "syn_timeout_ns": 3_000_000_000,
}


def ns3_args(expanded: Mapping[str, Any], seed: int) -> list[str]:
    """Arguments of ``v2g`` for a resolved vtlab scenario (``Scenario.expand()``) and a
    seed (passed as ``--run``; the ns-3 RngSeed stays 1).

    Two topologies are supported:

    * preset ``v2g``, the single vehicle: SA -- WAN -- SECC -- PLC -- EVCC, burst loss on
      the PLC data direction (``--vehicles=1``, the program's default);
    * preset ``station`` with at least 2 vehicles: SA -- WAN -- switch -- PLC segment j --
      seg j -- access -- ev i, burst loss on each access hop toward the vehicle
      (``--vehicles=N --perSegment=k --stagger=s --accessRate --accessDelay``).

    Anything the reference program cannot reproduce raises :class:`ValueError`
    naming the field.
    """
    if expanded.get("preset") == "station" or "switch" in expanded.get("nodes", []):
        return _station_args(expanded, seed)
    nodes = list(expanded.get("nodes", []))
    links = {link["name"]: link for link in expanded.get("links", [])}
    flows = list(expanded.get("flows", []))
    if nodes != ["sa", "secc", "evcc"] or set(links) != {"wan", "plc"} or len(flows) != 1:
        raise ValueError(
            "the ns-3 reference program models the single-vehicle V2G topology "
            "(preset v2g: sa -- wan -- secc -- plc -- evcc, one flow sa -> evcc) and the "
            "charging station (preset station, at least 2 vehicles)"
        )
    wan, plc = links["wan"], links["plc"]
    flow = flows[0]
    if (wan["a"], wan["b"], plc["a"], plc["b"]) != ("sa", "secc", "secc", "evcc") or (
        flow["src"],
        flow["dst"],
    ) != ("sa", "evcc"):
        raise ValueError("the ns-3 reference program needs the v2g link and flow directions")
    _same_link_template([wan, plc])
    for name, model in (
        ("wan.loss_ab", wan["loss_ab"]),
        ("wan.loss_ba", wan["loss_ba"]),
        ("plc.loss_ba", plc["loss_ba"]),
    ):
        if model.get("model") != "none":
            raise ValueError(f"links.{name}: ns-3 reference applies loss on the PLC data side")
    return _common_args(flow, _loss_args("plc.loss_ab", plc["loss_ab"]), seed, wan, plc)


def _same_link_template(links: Sequence[Mapping[str, Any]]) -> None:
    """Every link must share queue size, MTU and framing (one value in ns-3)."""
    for name in ("queue_packets", "mtu_bytes", "framing_bytes"):
        if len({link[name] for link in links}) != 1:
            raise ValueError(f"links.{name}: ns-3 reference uses one value for every link")
    if len({json.dumps(link.get("qdisc"), sort_keys=True) for link in links}) != 1:
        raise ValueError("links.qdisc: ns-3 reference uses one queue disc on every link")
    if links[0]["framing_bytes"] != 2:
        raise ValueError("links.framing_bytes: ns-3 point-to-point frames add 2 bytes (PPP)")


def _qdisc_args(link: Mapping[str, Any]) -> list[str]:
    """``--qdisc`` of the reference program: none, or what stock ns-3.44 installs
    (FqCoDel at its defaults, quantum = MTU, flow control with the device queue)."""
    q = link.get("qdisc")
    if q is None:
        return ["--qdisc=none"]
    stock = {
        "kind": "fq_codel",
        "limit_packets": 10240,
        "flows": 1024,
        "drop_batch_size": 64,
        "quantum": link["mtu_bytes"],
        "interval": 100_000_000,
        "target": 5_000_000,
        "min_bytes": 1500,
    }
    if dict(q) == stock:
        return ["--qdisc=default"]
    raise ValueError(
        "links.qdisc: the ns-3 reference runs no queue disc (none) or ns-3's default "
        f"fq_codel with its default attributes, not {q.get('kind')!r} as given"
    )


def _loss_args(where: str, loss: Mapping[str, Any]) -> list[str]:
    if loss.get("model") == "none":
        return ["--burstRate=0"]
    if loss.get("model") == "burst" and (loss.get("burst_min"), loss.get("burst_max")) == (1, 4):
        # The resolved burst-start probability itself, at full precision (repr
        # round-trips a double), so both simulators draw against the same p.
        if loss["burst_start"] == 0:
            return ["--burstRate=0"]
        return [f"--burstRate={float(loss['burst_start'])!r}"]
    raise ValueError(f"links.{where}: ns-3 reference supports the burst model with bursts of 1..4")


def _common_args(
    flow: Mapping[str, Any],
    loss_args: list[str],
    seed: int,
    wan: Mapping[str, Any],
    plc: Mapping[str, Any],
) -> list[str]:
    """The flags both topologies share: TCP, loss, size, seed, WAN and PLC links."""
    tcp = flow["tcp"]
    for name, want in _NS3_FIXED.items():
        if tcp.get(name) != want:
            raise ValueError(f"tcp.{name}: must be {want!r} to compare with ns-3")
    cc = tcp["cc"]
    type_id = ns3_type_id(cc)
    if type_id is None:
        raise ValueError(
            f"tcp.cc: '{cc}' has no ns-3 counterpart (ns-3 has: {', '.join(ns3_ccs())})"
        )
    if tcp.get("cc_params"):
        raise ValueError("tcp.cc_params: the ns-3 reference runs every algorithm at its defaults")
    recovery = tcp["recovery"]
    if recovery == "sack":
        rec_args = ["--sack=true", f"--recovery={'prr' if tcp['prr'] else 'classic'}"]
    elif recovery == "newreno":
        rec_args = ["--sack=false", "--recovery=classic"]
    else:
        raise ValueError(f"tcp.recovery: '{recovery}' has no ns-3 counterpart (sack, newreno)")
    del_ack_count = tcp["delayed_ack_count"] if tcp["delayed_ack"] else 1
    args = [
        f"--cc={type_id}",
        *loss_args,
        f"--bytes={int(flow['bytes'])}",
        f"--run={int(seed)}",
        *rec_args,
        f"--timestamps={'true' if tcp['timestamps'] else 'false'}",
        f"--delAckCount={del_ack_count}",
        f"--delAckTimeout={num(tcp['delayed_ack_timeout_ns'] / 1e9)}",
        f"--initialCwnd={tcp['initial_cwnd']}",
        f"--minRto={num(tcp['rto_min_ns'] / 1e9)}",
        f"--sndBuf={tcp['send_buffer']}",
        f"--rcvBuf={tcp['recv_buffer']}",
        f"--segmentSize={tcp['mss']}",
        f"--mtu={plc['mtu_bytes']}",
        f"--queuePackets={plc['queue_packets']}",
        *_qdisc_args(plc),
        f"--plcRate={num(plc['rate_bps'] / 1e6)}",
        f"--wanRate={num(wan['rate_bps'] / 1e6)}",
        f"--plcDelay={num(plc['delay_ns'] / 1e6)}",
        f"--wanDelay={num(wan['delay_ns'] / 1e6)}",
    ]
    if tcp.get("initial_ssthresh") is not None:
        args.append(f"--initialSsthresh={int(tcp['initial_ssthresh'])}")
    return args


def _station_args(expanded: Mapping[str, Any], seed: int) -> list[str]:
    """:func:`ns3_args` for preset ``station`` (N >= 2 vehicles, k per segment)."""
    links = {link["name"]: link for link in expanded.get("links", [])}
    flows = list(expanded.get("flows", []))
    n = len(flows)
    if n < 2:
        raise ValueError(
            "vehicles: the ns-3 reference program builds the charging station for 2 or "
            "more vehicles (with --vehicles=1 it is the v2g topology; use preset v2g)"
        )
    plcs = [links.get(f"plc{j}") for j in range(1, len(links) + 1)]
    plcs = [p for p in plcs if p is not None]
    access = [links.get(f"access{i}") for i in range(1, n + 1)]
    wan = links.get("wan")
    if (
        wan is None
        or any(a is None for a in access)
        or len(links) != 1 + len(plcs) + n
        or (wan["a"], wan["b"]) != ("sa", "switch")
    ):
        raise ValueError(
            "the ns-3 reference program needs the station links: wan (sa -> switch), "
            "plc1..plcS (switch -> segj), access1..accessN (segj -> evi)"
        )
    per_segment = sum(1 for a in access if a is not None and a["a"] == "seg1")
    segments = math.ceil(n / per_segment) if per_segment else 0
    ok = per_segment > 0 and len(plcs) == segments
    for j, p in enumerate(plcs, start=1):
        ok = ok and (p["a"], p["b"]) == ("switch", f"seg{j}")
    for i, a in enumerate(access, start=1):
        assert a is not None
        ok = ok and (a["a"], a["b"]) == (f"seg{(i - 1) // max(per_segment, 1) + 1}", f"ev{i}")
    for i, f in enumerate(flows, start=1):
        ok = ok and (f["src"], f["dst"]) == ("sa", f"ev{i}")
    if not ok:
        raise ValueError(
            "the ns-3 reference program needs vehicles ev1..evN on segments of k "
            "consecutive vehicles and one flow sa -> ev i each"
        )
    all_links: list[Mapping[str, Any]] = [wan, *plcs, *(a for a in access if a is not None)]
    _same_link_template(all_links)
    for group, name in ((plcs, "plc"), (access, "access")):
        for field_name in ("rate_bps", "delay_ns"):
            if len({g[field_name] for g in group if g is not None}) != 1:
                raise ValueError(f"links.{name}*.{field_name}: ns-3 reference uses one value")
    for link in (wan, *plcs):
        for side in ("loss_ab", "loss_ba"):
            if link[side].get("model") != "none":
                raise ValueError(
                    f"links.{link['name']}.{side}: ns-3 reference applies loss on the access "
                    "hops toward the vehicles"
                )
    first = access[0]
    assert first is not None
    for a in access:
        assert a is not None
        if a["loss_ab"] != first["loss_ab"]:
            raise ValueError("links.access*.loss_ab: ns-3 reference uses one loss model")
        if a["loss_ba"].get("model") != "none":
            raise ValueError(f"links.{a['name']}.loss_ba: ns-3 reference has no reverse loss here")
    flow = flows[0]
    stagger_ns = flows[1]["start_ns"] - flows[0]["start_ns"]
    for i, f in enumerate(flows):
        if f["start_ns"] != i * stagger_ns:
            raise ValueError("flows.start: ns-3 reference starts flow i at i x stagger")
        if f["bytes"] != flow["bytes"] or f["tcp"] != flow["tcp"]:
            raise ValueError(f"flows.{f['name']}: ns-3 reference uses one size and TCP setup")
    args = _common_args(flow, _loss_args("access1.loss_ab", first["loss_ab"]), seed, wan, plcs[0])
    return [
        *args,
        f"--vehicles={n}",
        f"--perSegment={per_segment}",
        f"--stagger={num(stagger_ns / 1e9)}",
        f"--accessRate={num(first['rate_bps'] / 1e6)}",
        f"--accessDelay={num(first['delay_ns'] / 1e6)}",
    ]


def run_v2g(
    binary: Path | Ns3Binary, args: Sequence[str], *, measure: bool = False
) -> tuple[dict[str, Any], ProcResult]:
    """Run the reference program with ``args``; return its (single) flow row and the
    process measurements (wall time only, unless ``measure``: then also peak RSS and
    CPU time, see :func:`run_process`).  Raises :class:`Ns3Error` when it fails."""
    rows, proc = run_v2g_flows(binary, args, measure=measure)
    if len(rows) != 1:
        raise Ns3Error(f"{shlex.join(proc.args)} printed {len(rows)} flow rows, expected 1")
    return rows[0], proc


def run_v2g_flows(
    binary: Path | Ns3Binary, args: Sequence[str], *, measure: bool = False
) -> tuple[list[dict[str, Any]], ProcResult]:
    """:func:`run_v2g` for any number of flows (the station prints one row per
    vehicle): every flow row, in flow order, and the process measurements."""
    path = binary.path if isinstance(binary, Ns3Binary) else Path(binary)
    cmd = [str(path), *args]
    if measure:
        proc = run_process(cmd)
    else:
        started = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        proc = ProcResult(p.returncode, p.stdout, p.stderr, wall, math.nan, math.nan)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise Ns3Error(f"{shlex.join(cmd)} exited with {proc.returncode}: {tail}")
    rows = parse_flow_lines(proc.stdout)
    if not rows:
        raise Ns3Error(f"{shlex.join(cmd)} printed no flow rows")
    proc.args = tuple(cmd)
    return rows, proc


def vehicle_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-vehicle statistics of one run's flow rows (either side).

    Each row needs ``goodput_bps`` and ``completion_s``; ``start_s`` (default 0) is the
    flow's start.  Returns ``vehicles``, ``goodput_bps`` (mean over vehicles),
    ``goodput_min_bps``, ``goodput_max_bps``, ``jain`` (Jain's fairness index of the
    goodputs) and ``aggregate_goodput_bps``: every byte received × 8 / (arrival of the
    last byte of any flow − start of the first flow).

    >>> s = vehicle_summary([{"goodput_bps": 4.0, "completion_s": 2.0, "start_s": 0.0},
    ...                      {"goodput_bps": 2.0, "completion_s": 3.0, "start_s": 1.0}])
    >>> s["goodput_bps"], s["aggregate_goodput_bps"], round(s["jain"], 3)
    (3.0, 3.5, 0.9)
    """
    if not rows:
        raise ValueError("vehicle_summary needs at least one flow row")
    goodputs = [float(r["goodput_bps"]) for r in rows]
    starts = [float(r.get("start_s") or 0.0) for r in rows]
    ends = [s + float(r["completion_s"]) for s, r in zip(starts, rows, strict=True)]
    bits = sum(g * float(r["completion_s"]) for g, r in zip(goodputs, rows, strict=True))
    span = max(ends) - min(starts)
    squares = sum(g * g for g in goodputs)
    return {
        "vehicles": len(rows),
        "goodput_bps": sum(goodputs) / len(goodputs),
        "goodput_min_bps": min(goodputs),
        "goodput_max_bps": max(goodputs),
        "jain": sum(goodputs) ** 2 / (len(goodputs) * squares) if squares else math.nan,
        "aggregate_goodput_bps": bits / span if span > 0 else math.nan,
    }
