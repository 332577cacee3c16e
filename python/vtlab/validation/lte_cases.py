"""The LTE family's cases and how vtlab replays one (:mod:`vtlab.validation.lte`): the
compared cases and variants, and the translation of ns-3's setting into vtlab's
``lte-cabin`` scenario (radio delay from ns-3's base RTT, buffer, capacity trace).

The ns-3 side is ``validation/ns3/lte.cc`` (:mod:`vtlab.ns3.lte`): its core delay, TCP
segment and socket buffers are the values vtlab's replay copies."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vtlab.cellular import to_mahimahi
from vtlab.ns3.lte import CORE_DELAY_MS, MOVING_SPEED_MPS, SEGMENT_BYTES, SOCKET_BUFFER_BYTES
from vtlab.validation.errors import ValidateError

__all__ = [
    "CASES",
    "DIAGNOSTIC",
    "GRANT_PIPELINE_MS",
    "MAIN",
    "QUICK_CASES",
    "QUICK_SEEDS",
    "TOLERANCE",
    "LteCase",
    "Variant",
    "buffer_bytes_for",
    "capacity_trace_ms",
    "radio_delay_for",
    "replay_base_rtt_ms",
    "spec_toml",
    "vtlab_spec",
]

#: ``agree`` when every compared ratio vtlab/ns-3 is within ±TOLERANCE.
TOLERANCE = 0.15
MOBILITY_SPEED_MPS: dict[str, float] = {"static": 0.0, "moving": MOVING_SPEED_MPS}
#: ns-3's measured base RTT (ms): the minimum of its UDP echo probes.  Taken from
#: each result's ``base_rtt_ms``; this is the value of the stored runs.
NS3_BASE_RTT_MS = 79.928784
#: An LTE transmission time interval (ms): capacity comes in per-TTI blocks.
TTI_MS = 1.0
#: ns-3's data packets: 1448 B payload + 20 B IP + 20 B TCP + 12 B timestamp option.
IP_PACKET_BYTES = 1500
#: PDCP header of ns-3's LTE bearer (bytes per IP packet).
PDCP_HEADER_BYTES = 2
#: RLC UM fixed header (bytes per RLC PDU; a full-size packet is one PDU).
RLC_UM_HEADER_BYTES = 2
#: Transport-block bytes that carry one 1500-byte IP packet in ns-3.
TB_BYTES_PER_PACKET = IP_PACKET_BYTES + PDCP_HEADER_BYTES + RLC_UM_HEADER_BYTES
#: vtlab's uplink for the ACKs: one opportunity of this many bytes per TTI
#: (12 Mbit/s; the ACK stream needs about 0.63 Mbit/s at 35 Mbit/s of data).
UPLINK_OPPORTUNITY_BYTES = 1500
#: ns-3's core link rate (remote host <-> PGW), also vtlab's core and cabin rate.
CORE_RATE = "10Gbps"
DEFAULT_DURATION_S = 12.0
MAX_DURATION_S = 60.0
#: vtlab seeds 1..DEFAULT_SEEDS (the replay is deterministic: they must agree).
DEFAULT_SEEDS = 3
#: ``--quick``: the static cases (one capacity run), 2 seeds (still two to compare).
QUICK_CASES = ("static_rlc10k", "static_rlc2m")
QUICK_SEEDS = 2
DEFAULT_REPEAT = 5
RLC_10K = 10240
RLC_2M = 2 * 1024 * 1024


@dataclass(frozen=True)
class LteCase:
    """One compared case: a mobility and an RLC buffer, TCP Cubic downlink."""

    name: str
    mobility: str  #: ``static`` or ``moving``
    rlc_buffer_bytes: int

    @property
    def speed_mps(self) -> float:
        return MOBILITY_SPEED_MPS[self.mobility]


#: The compared cases, in report order (the stored ns-3 matrix's TCP cases).
CASES: tuple[LteCase, ...] = (
    LteCase("static_rlc10k", "static", RLC_10K),
    LteCase("static_rlc2m", "static", RLC_2M),
    LteCase("moving_rlc10k", "moving", RLC_10K),
    LteCase("moving_rlc2m", "moving", RLC_2M),
)


#: ns-3's uplink access (``LteUeMac``, ``LteUePhy``, ``PfFfMacScheduler``): a buffer
#: status report in the TTI after data arrives, 6 ms to the scheduler (the UE's PHY
#: holds control messages 4 TTIs, one TTI to the eNB's MAC, one for the uplink DCI),
#: the grant used 4 ms later (TS 36.213's n + 4): vtlab's ``grant = true``.
GRANT_PIPELINE_MS = 6 + 4


@dataclass(frozen=True)
class Variant:
    """How vtlab's side is set up beyond the case: the uplink and the radio delay."""

    name: str
    #: One uplink opportunity every this many ms (1: every TTI).
    uplink_period_ms: int = 1
    #: One-way radio delay of the LTE link (ms); None: :func:`radio_delay_for`.
    radio_delay_ms: float | None = None
    description: str = ""
    #: The uplink is served on request (ns-3's buffer status report and grant).
    grant: bool = False


#: The validation proper: ns-3's request–grant uplink access.
MAIN = Variant(
    "main",
    1,
    None,
    "uplink: request and grant as ns-3's (a buffer status report in the TTI after "
    "data arrives, 6 ms to the scheduler, the grant used 4 ms later), one 1500 B "
    "opportunity per TTI; radio delay from ns-3's base RTT",
    grant=True,
)
#: The comparison: the uplink vtlab had before the request–grant model, every TTI's
#: opportunity usable without a request (ACKs return as the data arrives).
DIAGNOSTIC = Variant(
    "free uplink",
    1,
    None,
    "uplink: every TTI's 1500 B opportunity usable without a request (vtlab's "
    "uplink before the request-grant model); radio delay from ns-3's base RTT",
)


# -- the translation ------------------------------------------------------------------


def radio_delay_for(
    base_rtt_ms: float,
    core_delay_ms: float = CORE_DELAY_MS,
    tti_ms: float = TTI_MS,
    grant_ms: float = 0.0,
) -> float:
    """vtlab's one-way radio delay (ms) for ns-3's base RTT: the RTT less the core's
    two ways, less half a TTI of alignment wait in each direction (a packet waits
    for the next per-TTI opportunity), less the request–grant pipeline of an idle
    uplink (``grant_ms``: report to grant use), halved.

    >>> round(radio_delay_for(79.928784, 32.0), 6)
    7.464392
    >>> round(radio_delay_for(79.928784, 32.0, grant_ms=GRANT_PIPELINE_MS), 6)
    2.464392
    """
    r = (float(base_rtt_ms) - 2 * float(core_delay_ms) - float(tti_ms) - float(grant_ms)) / 2
    if r <= 0:
        raise ValidateError(
            "--radio-delay",
            f"ns-3's base RTT {base_rtt_ms:g} ms leaves no radio delay "
            f"over a {core_delay_ms:g} ms core",
        )
    return r


def replay_base_rtt_ms(
    core_delay_ms: float, radio_delay_ms: float, tti_ms: float = TTI_MS
) -> float:
    """vtlab's base RTT (ms) with per-TTI opportunities in both directions and a
    whole-ms core delay: every departure from the LTE link is on a TTI boundary, so
    an ACK-clocked flow locks to the TTI grid and each direction's radio part is the
    radio delay rounded up to the next TTI: ``2·core + 2·(⌊r/TTI⌋ + 1)·TTI`` (a
    packet that arrives exactly at a boundary, after a zero-length hop, has just
    missed it).  Serialisation at 10 Gbit/s (1.2 µs per packet) is left out.

    >>> replay_base_rtt_ms(32.0, 7.464392), replay_base_rtt_ms(32.0, 6.5)
    (80.0, 78.0)
    """
    steps = math.floor(float(radio_delay_ms) / tti_ms + 1e-12) + 1
    return 2 * float(core_delay_ms) + 2 * steps * tti_ms


def buffer_bytes_for(rlc_buffer_bytes: int) -> int:
    """vtlab's LTE buffer (IP bytes) for ns-3's RLC ``MaxTxBufferSize``.

    ns-3's RLC UM counts PDCP PDUs (IP packet + 2 B PDCP header) in its transmit
    buffer; vtlab counts IP bytes.  Scaling by 1500/1502 keeps the number of full
    1500-byte packets that fit the same (10 240 B: 6; 2 MiB: 1396).

    >>> buffer_bytes_for(10240), buffer_bytes_for(2 * 1024 * 1024)
    (10226, 2094359)
    """
    b = int(rlc_buffer_bytes)
    if b < 0:
        raise ValidateError("rlc_buffer_bytes", f"must be >= 0 bytes, got {b}")
    return b * IP_PACKET_BYTES // (IP_PACKET_BYTES + PDCP_HEADER_BYTES)


def capacity_trace_ms(
    tb_ms: Sequence[int], tb_bytes: Sequence[int], duration_s: float
) -> list[int]:
    """The downlink capacity trace (mahimahi timestamps, ms) from ns-3's per-ms
    transport-block bytes of a UDP-saturated run.

    The first TB is moved to ms 0 (this drops the one-way delay before the first UDP
    packet reached the eNB, as the stored ``*_capacity.mahimahi`` do), one
    opportunity per :data:`TB_BYTES_PER_PACKET` bytes (:func:`vtlab.cellular.to_mahimahi`,
    remainders carried), and, when the trace ends before ``duration_s``, its last
    ``duration − end`` ms are repeated once so that the channel goes on as it ended
    (instead of wrapping back to its start).

    >>> capacity_trace_ms([5, 6, 7], [3008, 1504, 1504], 0.004)
    [0, 0, 1, 2, 3, 4]
    """
    if not tb_ms:
        raise ValidateError("ns-3 capacity run", "delivered no transport block")
    first = int(tb_ms[0])
    stamps = to_mahimahi([int(t) - first for t in tb_ms], tb_bytes, TB_BYTES_PER_PACKET)
    if not stamps:
        raise ValidateError("ns-3 capacity run", "delivered less than one packet")
    want = int(round(float(duration_s) * 1000))
    end = stamps[-1]
    if 0 < end < want:
        need = want - end
        if need <= end:  # the usual case: the UDP flow's first 35 ms are missing
            stamps = stamps + [t + need for t in stamps if t > end - need]
        else:  # a trace much shorter than the run: repeat it, as mahimahi does
            base = list(stamps)
            k = 1
            while stamps[-1] < want:
                stamps += [t + k * end for t in base if t > 0]
                k += 1
    if stamps[-1] <= 0:
        raise ValidateError("ns-3 capacity run", "the trace lasts no time (all TBs in one ms)")
    return stamps


def vtlab_spec(
    case: LteCase,
    trace: Sequence[int] | str | os.PathLike[str],
    *,
    duration_s: float = DEFAULT_DURATION_S,
    radio_delay_ms: float,
    core_delay_ms: float = CORE_DELAY_MS,
    uplink_period_ms: int = 1,
    grant: bool = False,
) -> dict[str, Any]:
    """vtlab's ``lte-cabin`` scenario of one case (see :mod:`vtlab.validation.lte`).
    ``trace`` is the downlink capacity: a mahimahi file (a path, relative to the
    working directory) or its timestamps (:func:`capacity_trace_ms`)."""
    period = int(uplink_period_ms)
    if period < 1:
        raise ValidateError("--uplink-period", f"must be at least 1 ms, got {period}")
    return {
        "preset": "lte-cabin",
        "direction": "downlink",
        "stop": f"{float(duration_s):g}s",
        "core_rate": CORE_RATE,
        "core_delay": f"{float(core_delay_ms):g}ms",
        "radio_delay": f"{float(radio_delay_ms):.9g}ms",
        # ns-3's UE is the TCP endpoint: no Wi-Fi hop behind it.
        "cabin_rate": CORE_RATE,
        "cabin_delay": "0ms",
        "buffer": buffer_bytes_for(case.rlc_buffer_bytes),
        "capacity_down": {
            **(
                {"trace": os.fspath(trace)}
                if isinstance(trace, (str, os.PathLike))
                else {"trace_ms": [int(t) for t in trace]}
            ),
            "opportunity_bytes": IP_PACKET_BYTES,
        },
        "capacity_up": {
            "trace_ms": [period],
            "opportunity_bytes": UPLINK_OPPORTUNITY_BYTES * period,
            **({"grant": True} if grant else {}),
        },
        "tcp": {
            "profile": "ns3",
            "cc": "cubic",
            "mss": SEGMENT_BYTES,
            "timestamps": True,
            "send_buffer": SOCKET_BUFFER_BYTES,
            "recv_buffer": SOCKET_BUFFER_BYTES,
        },
    }


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string for these plain values
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def spec_toml(spec: Mapping[str, Any], header: str = "") -> str:
    """A scenario spec (scalars, lists and nested tables) as TOML text, for
    ``vtlab run --scenario``.

    >>> print(spec_toml({"preset": "lte-cabin", "tcp": {"cc": "cubic", "mss": 1448}}))
    preset = "lte-cabin"
    <BLANKLINE>
    [tcp]
    cc = "cubic"
    mss = 1448
    <BLANKLINE>
    """
    lines = [f"# {ln}" for ln in header.splitlines()] if header else []

    def table(d: Mapping[str, Any], prefix: str) -> None:
        for k, v in d.items():
            if not isinstance(v, Mapping):
                lines.append(f"{k} = {_toml_value(v)}")
        for k, v in d.items():
            if isinstance(v, Mapping):
                name = f"{prefix}.{k}" if prefix else k
                lines.extend(["", f"[{name}]"])
                table(v, name)

    table(spec, "")
    return "\n".join(lines) + "\n"
