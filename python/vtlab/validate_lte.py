"""LTE trace replay against ns-3's LTE module: ``vtlab validate-lte``.

For each case of the ns-3 LTE reference (``validation/ns3/lte.cc``, see
``validation/ns3/README-lte.md``): a UE 50 m from the eNB, static or driving away
at 16.7 m/s, with an RLC UM buffer of 10 240 B (ns-3's default) or 2 MiB, one TCP
Cubic bulk download for 12 s, this module

1. gets ns-3's result: from the cache ``<out>/ns3-cache.jsonl`` when the ns-3 build
   hash and the program's arguments match, else by running ``lte.cc`` (one run at
   a time);
2. takes the channel's capacity from the **UDP-saturated** ns-3 run of the same
   mobility (its correctly decoded transport blocks per millisecond: the channel,
   whatever TCP asks for) and turns it into a mahimahi trace, one delivery
   opportunity per 1504 B of transport block = one 1500-byte IP packet plus the
   PDCP (2 B) and RLC UM (2 B) headers ns-3 adds to it;
3. replays that trace as the downlink ``capacity_down`` of vtlab's ``lte-cabin``
   preset set up like ns-3 (core 32 ms at 10 Gbit/s, a radio delay that makes the
   base RTT ns-3's measured 79.93 ms, the RLC buffer as the per-user LTE buffer,
   TCP profile ns3 with Cubic, MSS 1448 + timestamps = 1500-byte packets, 4 MiB
   buffers, an uplink of one 1500-byte opportunity per TTI for the ACKs);
4. compares goodput and the RTT mean and 95th percentile (:func:`compare`), and
   writes ``<out>/report.md`` and ``<out>/agreement.csv``.

A diagnostic variant (:data:`DIAGNOSTIC`) replays the same traces with an uplink
that returns each window's ACKs in one transport block, as ns-3's request–grant
uplink does when the ACKs come in bursts; ``bench=True`` (``--bench``) adds the
wall-time comparison (:func:`speed_row`) and ``<out>/speed.csv``.

ns-3's RTT statistics are computed over the *changes* of its ``LastRTT`` trace (a
``TracedValue``, which fires only when the whole-millisecond sample changes), so
this module rebuilds per-ACK statistics from the change series
(:func:`per_ack_rtt`) and compares vtlab's per-ACK samples with those.

The module is registered on the CLI by :func:`register`.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import os
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from vtlab import ns3_lte as _lte
from vtlab.errors import EXIT_INTERRUPTED, fail, user_errors
from vtlab.ns3 import program as _ns3
from vtlab.outputs import check_output_dir
from vtlab.validation.report import typed_command

__all__ = [
    "CASES",
    "DIAGNOSTIC",
    "MAIN",
    "TOLERANCE",
    "LteCase",
    "LteValidateError",
    "LteValidation",
    "Ns3Cache",
    "Ns3Run",
    "Variant",
    "buffer_bytes_for",
    "capacity_trace_ms",
    "compare",
    "ns3_goodput_bps",
    "parse_cases",
    "parse_tolerance",
    "per_ack_rtt",
    "radio_delay_for",
    "register",
    "replay_base_rtt_ms",
    "speed_row",
    "validate_lte",
    "verdict",
    "vtlab_spec",
    "write_report",
]

# -- the cases and the translation constants ------------------------------------------

#: ``agree`` when every compared ratio vtlab/ns-3 is within ±TOLERANCE.
TOLERANCE = 0.15
#: UE distance from the eNB at the flow start (m), as in the stored ns-3 matrix.
DISTANCE_M = 50.0
#: Speed of the moving UE, radially away from the eNB (m/s; 60 km/h).
MOVING_SPEED_MPS = 16.7
MOBILITY_SPEED_MPS: dict[str, float] = {"static": 0.0, "moving": MOVING_SPEED_MPS}
#: One-way delay of ns-3's remote host <-> PGW link (ms), ``lte.cc --coreDelay``.
CORE_DELAY_MS = 32.0
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
#: Socket buffers of both sides (``lte.cc --sndBuf/--rcvBuf``).
SOCKET_BUFFER_BYTES = 4 * 1024 * 1024
DEFAULT_DURATION_S = 12.0
MAX_DURATION_S = 60.0
#: vtlab seeds 1..DEFAULT_SEEDS (the replay is deterministic: they must agree).
DEFAULT_SEEDS = 3
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


@dataclass(frozen=True)
class Variant:
    """How vtlab's side is set up beyond the case: the uplink and the radio delay."""

    name: str
    #: One uplink opportunity every this many ms (1: every TTI).
    uplink_period_ms: int = 1
    #: One-way radio delay of the LTE link (ms); None: :func:`radio_delay_for`.
    radio_delay_ms: float | None = None
    description: str = ""


#: The validation proper: an uplink that is never the bottleneck (every TTI).
MAIN = Variant(
    "main",
    1,
    None,
    "uplink: one 1500 B opportunity every TTI; radio delay from ns-3's base RTT",
)
#: The diagnostic: one uplink opportunity per 80 ms (ns-3's RTT), so that every
#: window's ACKs reach the sender together, as ns-3's uplink returns them when the
#: downlink data comes in bursts; a 4.5 ms radio delay keeps the base RTT at 80 ms
#: and puts a whole window's ACKs before the next uplink opportunity.
DIAGNOSTIC = Variant(
    "ack-batched uplink",
    80,
    4.5,
    "uplink: one opportunity every 80 ms (each window's ACKs in one transport "
    "block, as ns-3 returns them); radio delay 4.5 ms (base RTT still 80 ms)",
)


class LteValidateError(ValueError):
    """Bad input to ``vtlab validate-lte``: one ``error:`` line, exit status 2."""


# -- the translation ------------------------------------------------------------------


def radio_delay_for(
    base_rtt_ms: float, core_delay_ms: float = CORE_DELAY_MS, tti_ms: float = TTI_MS
) -> float:
    """vtlab's one-way radio delay (ms) for ns-3's base RTT: the RTT less the core's
    two ways, less half a TTI of alignment wait in each direction (a packet waits
    for the next per-TTI opportunity), halved.

    >>> round(radio_delay_for(79.928784, 32.0), 6)
    7.464392
    """
    r = (float(base_rtt_ms) - 2 * float(core_delay_ms) - float(tti_ms)) / 2
    if r <= 0:
        raise LteValidateError(
            f"--radio-delay: ns-3's base RTT {base_rtt_ms:g} ms leaves no radio delay "
            f"over a {core_delay_ms:g} ms core"
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
        raise LteValidateError(f"rlc buffer must be >= 0 bytes, got {b}")
    return b * IP_PACKET_BYTES // (IP_PACKET_BYTES + PDCP_HEADER_BYTES)


def capacity_trace_ms(
    tb_ms: Sequence[int], tb_bytes: Sequence[int], duration_s: float
) -> list[int]:
    """The downlink capacity trace (mahimahi timestamps, ms) from ns-3's per-ms
    transport-block bytes of a UDP-saturated run.

    The first TB is moved to ms 0 (this drops the one-way delay before the first UDP
    packet reached the eNB, as the stored ``*_capacity.mahimahi`` do), one
    opportunity per :data:`TB_BYTES_PER_PACKET` bytes (:func:`vtlab.ns3_lte.to_mahimahi`,
    remainders carried), and, when the trace ends before ``duration_s``, its last
    ``duration − end`` ms are repeated once so that the channel goes on as it ended
    (instead of wrapping back to its start).

    >>> capacity_trace_ms([5, 6, 7], [3008, 1504, 1504], 0.004)
    [0, 0, 1, 2, 3, 4]
    """
    if not tb_ms:
        raise LteValidateError("the ns-3 capacity run delivered no transport block")
    first = int(tb_ms[0])
    stamps = _lte.to_mahimahi([int(t) - first for t in tb_ms], tb_bytes, TB_BYTES_PER_PACKET)
    if not stamps:
        raise LteValidateError("the ns-3 capacity run delivered less than one packet")
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
        raise LteValidateError("the capacity trace lasts no time (all TBs in one ms)")
    return stamps


def vtlab_spec(
    case: LteCase,
    trace: Sequence[int] | str | os.PathLike[str],
    *,
    duration_s: float = DEFAULT_DURATION_S,
    radio_delay_ms: float,
    core_delay_ms: float = CORE_DELAY_MS,
    uplink_period_ms: int = 1,
) -> dict[str, Any]:
    """vtlab's ``lte-cabin`` scenario of one case (see the module docstring).
    ``trace`` is the downlink capacity: a mahimahi file (a path, relative to the
    working directory) or its timestamps (:func:`capacity_trace_ms`)."""
    period = int(uplink_period_ms)
    if period < 1:
        raise LteValidateError(f"--uplink-period: must be at least 1 ms, got {period}")
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
        },
        "tcp": {
            "profile": "ns3",
            "cc": "cubic",
            "mss": 1448,
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


# -- the ns-3 side --------------------------------------------------------------------


@dataclass(frozen=True)
class Ns3Run:
    """One run of ``lte.cc`` (downlink, UE at :data:`DISTANCE_M`)."""

    name: str  #: ``static_rlc10k``, ``static_capacity``, ...
    speed_mps: float
    rlc_buffer_bytes: int
    app: str  #: ``tcp`` or ``udp`` (the capacity run)
    duration_s: float = DEFAULT_DURATION_S
    seed: int = 1

    @property
    def args(self) -> list[str]:
        """The program's arguments (as ``vtlab.ns3_lte.run_matrix`` gives them)."""
        return _lte.lte_args(
            self.speed_mps,
            DISTANCE_M,
            self.rlc_buffer_bytes,
            "dl",
            self.duration_s,
            self.seed,
            app=self.app,
            rtt_series=self.app == "tcp",
        )

    @property
    def stem(self) -> str:
        """File name stem: the case name (12 s) or ``<case>_<duration>s``."""
        if self.duration_s == DEFAULT_DURATION_S and self.seed == 1:
            return self.name
        extra = f"_{self.duration_s:g}s"
        return self.name + extra + (f"_run{self.seed}" if self.seed != 1 else "")

    def header(self) -> dict[str, Any]:
        """The leading fields of a stored result (as ``run_matrix`` writes them)."""
        return {
            "case": self.name,
            "speed_mps": self.speed_mps,
            "rlc_buffer_bytes": self.rlc_buffer_bytes,
            "app": self.app,
        }


def tcp_run(case: LteCase, duration_s: float) -> Ns3Run:
    return Ns3Run(case.name, case.speed_mps, case.rlc_buffer_bytes, "tcp", duration_s)


def capacity_run(mobility: str, duration_s: float) -> Ns3Run:
    """The UDP-saturated run of a mobility (2 MiB RLC buffer, 100 Mbit/s offered)."""
    return Ns3Run(f"{mobility}_capacity", MOBILITY_SPEED_MPS[mobility], RLC_2M, "udp", duration_s)


#: Result fields that differ between two runs of the same build and arguments.
_VOLATILE = ("wall_s", "process_wall_s", "args")


def same_output(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two ns-3 results are the same simulation (all but wall times and the
    binary's path; ns-3 runs are deterministic, so a rerun reproduces a result)."""
    keys = (set(a) | set(b)) - set(_VOLATILE)
    if any(a.get(k) != b.get(k) for k in keys):
        return False
    return list(a.get("args", []))[1:] == list(b.get("args", []))[1:]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Ns3Cache:
    """``<out>/ns3-cache.jsonl``: one line per ns-3 run of this module: ``name``,
    ``args`` (without the binary), ``ns3_hash`` (the build hash of ``lte.cc``),
    ``file`` (relative to ``<out>``), its ``sha256``, and the run's ``wall_s`` and
    ``process_wall_s``.  A record is used only while its file is unchanged; lines that
    do not parse are ignored and later lines win."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.path = self.out / "ns3-cache.jsonl"
        self.records: list[dict[str, Any]] = []
        if self.path.is_file():
            for line in self.path.read_text().splitlines():
                try:
                    rec = json.loads(line)
                    if not isinstance(rec, dict) or not {"name", "args", "file"} <= set(rec):
                        continue
                except ValueError:
                    continue
                self.records.append(rec)

    def _valid(self, rec: Mapping[str, Any]) -> bool:
        f = self.out / str(rec["file"])
        return f.is_file() and _sha256(f) == rec.get("sha256")

    def lookup(self, run: Ns3Run, ns3_hash: str | None) -> dict[str, Any] | None:
        """The latest valid record of ``run`` (its arguments) built by ``ns3_hash``
        (``None``: by any build)."""
        for rec in reversed(self.records):
            if rec["args"] != run.args:
                continue
            if ns3_hash is not None and rec.get("ns3_hash") != ns3_hash:
                continue
            if self._valid(rec):
                return rec
        return None

    def load(self, rec: Mapping[str, Any]) -> dict[str, Any]:
        """The result of a record, with the record's wall times."""
        res: dict[str, Any] = json.loads((self.out / str(rec["file"])).read_text())
        for k in ("wall_s", "process_wall_s"):
            if rec.get(k) is not None:
                res[k] = rec[k]
        return res

    def add(self, rec: Mapping[str, Any]) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as fh:
            fh.write(json.dumps(dict(rec)) + "\n")
        self.records.append(dict(rec))


@dataclass
class Ns3Source:
    """Where the ns-3 results come from in one validation."""

    binary: _ns3.Ns3Binary | None
    why_not: str = ""  #: why there is no binary (ns-3 or g++ missing)

    @property
    def ns3_hash(self) -> str | None:
        return self.binary.build_hash if self.binary is not None else None


def ns3_result(
    run: Ns3Run,
    cache: Ns3Cache,
    source: Ns3Source,
    *,
    rerun: bool = False,
    log: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], str]:
    """ns-3's result of ``run`` and where it came from (``cache``, ``run``,
    ``stored``).

    With a binary: the cached result of this build and these arguments, else a
    fresh run (``rerun`` forces one).  A fresh run that reproduces the stored
    ``<out>/ns3/<case>.json`` (everything but wall times) adopts that file; otherwise
    it is written to ``<out>/ns3-runs/<stem>-<build>.json``.  Either way the cache
    records the run with its own wall times.  Without a binary: the cached result of
    any build, else a stored file with the same arguments (unverified); raises
    :class:`vtlab.ns3.program.Ns3Error` when there is neither."""
    ns3_hash = source.ns3_hash
    if source.binary is None:
        rec = cache.lookup(run, None)
        if rec is not None:
            return cache.load(rec), "cache"
        stored = cache.out / "ns3" / f"{run.stem}.json"
        if stored.is_file():
            res = json.loads(stored.read_text())
            if list(res.get("args", []))[1:] == run.args:
                return res, "stored"
        raise _ns3.Ns3Error(
            f"no cached ns-3 result for {run.name} ({' '.join(run.args)}) and ns-3 "
            f"cannot run here: {source.why_not}"
        )
    if not rerun:
        rec = cache.lookup(run, ns3_hash)
        if rec is not None:
            return cache.load(rec), "cache"
    if log is not None:
        log(f"ns-3: running {run.name} ({run.duration_s:g} s simulated)")
    res = _lte.run_lte(
        run.speed_mps,
        DISTANCE_M,
        run.rlc_buffer_bytes,
        "dl",
        run.duration_s,
        run.seed,
        app=run.app,
        rtt_series=run.app == "tcp",
        binary=source.binary,
    )
    res["args"] = [Path(res["args"][0]).name, *res["args"][1:]]
    doc = {**run.header(), **res}
    stored = cache.out / "ns3" / f"{run.stem}.json"
    if stored.is_file() and same_output(json.loads(stored.read_text()), doc):
        path = stored
    else:
        assert ns3_hash is not None
        path = cache.out / "ns3-runs" / f"{run.stem}-{ns3_hash[:12]}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc) + "\n")
    cache.add(
        {
            "name": run.name,
            "args": run.args,
            "ns3_hash": ns3_hash,
            "ns3_version": source.binary.ns3_version,
            "file": path.relative_to(cache.out).as_posix(),
            "sha256": _sha256(path),
            "wall_s": res.get("wall_s"),
            "process_wall_s": res.get("process_wall_s"),
        }
    )
    return doc, "run"


def ns3_goodput_bps(res: Mapping[str, Any]) -> float:
    """ns-3's goodput as vtlab defines it: bytes received × 8 / (last byte − flow
    start).  (ns-3's ``goodput_bps`` divides by last − first byte instead: the first
    data arrives 115 ms after the flow start.)"""
    last = res.get("last_rx_s")
    rx = res.get("rx_bytes")
    if not last or rx is None or float(last) <= 0:
        return math.nan
    return float(rx) * 8 / float(last)


def per_ack_rtt(res: Mapping[str, Any]) -> tuple[float, float]:
    """ns-3's per-ACK RTT mean and 95th percentile (ms), rebuilt from its change
    series.

    ``lte.cc`` records ``LastRTT``, a ``TracedValue``: it fires only when the sample
    (whole ms, from the timestamp echo) differs from the previous one, so its series
    holds one entry per *change*, and ``rtt_mean_ms``/``rtt_p95_ms`` weigh a value
    that lasted a thousand ACKs like one that lasted one.  Each entry ``(t_i, v_i)``
    stands for every ACK that reached the sender in ``[t_i, t_{i+1})``; their number
    is proportional to the data delivered to the UE one uplink-plus-core delay
    earlier, ``d = base RTT − (ms of the first downlink TB, the SYN)``.  The weight
    of an entry is that number of ACKs: the RLC bytes delivered in
    ``[t_i − d, t_{i+1} − d)`` over two full packets (delayed ACKs), and at least one,
    since a change is an ACK (ACKs that share an uplink transport block reach the
    sender nanoseconds apart, closer than the per-ms delivery record resolves).  The
    percentile is the smallest value whose cumulative weight reaches 95 %.  Without
    delivery data every change counts once, as in ``lte.cc``.  NaN without samples."""
    t_ms = [float(x) for x in res.get("rtt_t_ms") or []]
    rtt = [float(x) for x in res.get("rtt_ms") or []]
    if not t_ms or len(t_ms) != len(rtt):
        return math.nan, math.nan
    rlc_ms = [int(x) for x in res.get("rlc_ms") or []]
    rlc_bytes = [int(x) for x in res.get("rlc_bytes") or []]
    end_ms = float((res.get("config") or {}).get("duration_s", DEFAULT_DURATION_S)) * 1000
    tb_ms = res.get("tb_ms") or [0]
    d = float(res.get("base_rtt_ms") or NS3_BASE_RTT_MS) - float(tb_ms[0])
    cum = [0]
    for b in rlc_bytes:
        cum.append(cum[-1] + b)

    def delivered_before(t: float) -> int:
        return cum[bisect.bisect_left(rlc_ms, t)]

    ack_bytes = 2 * TB_BYTES_PER_PACKET
    weights = []
    for i, t in enumerate(t_ms):
        t_next = t_ms[i + 1] if i + 1 < len(t_ms) else end_ms
        delivered = delivered_before(t_next - d) - delivered_before(t - d)
        weights.append(max(1.0, delivered / ack_bytes))
    total = sum(weights)
    mean = sum(w * v for w, v in zip(weights, rtt, strict=True)) / total
    acc = 0.0
    p95 = rtt[-1]
    for v, w in sorted(zip(rtt, weights, strict=True)):
        acc += w
        if acc >= 0.95 * total - 1e-9:
            p95 = v
            break
    return mean, p95


# -- the vtlab side -------------------------------------------------------------------


def run_vtlab(spec: Mapping[str, Any], seeds: Sequence[int]) -> dict[str, Any]:
    """Run vtlab's scenario with each seed; the mean over seeds of the compared
    numbers, whether every seed gave the same flow row (``deterministic``), and the
    counters of the first seed."""
    from vtlab import _core

    spec_json = json.dumps(spec)
    rows = []
    links = None
    for seed in seeds:
        out = _core.run(spec_json, int(seed), False)
        flows = out["flows"]
        i = flows["flow"].index("down")
        rows.append({k: v[i] for k, v in flows.items() if k not in ("seed",)})
        if links is None:
            links = out["links"]
    assert links is not None
    first = rows[0]
    # NaN != NaN (completion_s of an unfinished flow): compare the JSON texts
    deterministic = all(
        json.dumps(r, sort_keys=True) == json.dumps(first, sort_keys=True) for r in rows
    )

    def mean(key: str, scale: float = 1.0) -> float:
        xs = [float(r[key]) * scale for r in rows if r.get(key) is not None]
        return statistics.fmean(xs) if xs else math.nan

    def drops(direction: str) -> int:
        idx = [
            j
            for j, (ln, d) in enumerate(zip(links["link"], links["direction"], strict=True))
            if ln == "lte" and d == direction
        ]
        return int(links["drops_queue"][idx[0]]) if idx else 0

    return {
        "goodput_bps": mean("goodput_bps"),
        "rtt_mean_ms": mean("rtt_mean_s", 1e3),
        "rtt_p95_ms": mean("rtt_p95_s", 1e3),
        "rtt_min_ms": mean("rtt_min_s", 1e3),
        "retransmissions": int(first["retransmissions"]),
        "fast_recoveries": int(first["fast_recoveries"]),
        "rto_count": int(first["rto_count"]),
        "lte_drops_down": drops("enb->hotspot"),
        "lte_drops_up": drops("hotspot->enb"),
        "seeds": list(seeds),
        "deterministic": deterministic,
    }


def bench_vtlab(spec: Mapping[str, Any], repeat: int = DEFAULT_REPEAT, warmup: int = 1) -> dict:
    """Median wall times of ``repeat`` runs (after ``warmup``): ``engine_wall_s`` (the
    event loop, measured inside the core) and ``call_wall_s`` (the whole
    ``vtlab._core.run`` call: scenario parsing with the inline trace, set-up, run and
    result tables)."""
    from vtlab import _core

    if repeat < 1:
        raise LteValidateError(f"--repeat: must be at least 1, got {repeat}")
    spec_json = json.dumps(spec)
    engine, call = [], []
    events = 0
    for i in range(warmup + repeat):
        t = time.perf_counter()
        out = _core.run(spec_json, 1, False)
        wall = time.perf_counter() - t
        if i >= warmup:
            engine.append(float(out["meta"]["wall_s"]))
            call.append(wall)
            events = int(out["meta"]["events"])
    return {
        "engine_wall_s": statistics.median(engine),
        "call_wall_s": statistics.median(call),
        "events": events,
        "repeat": repeat,
    }


# -- comparison and verdicts ----------------------------------------------------------


def ratio(vt: float, ns: float) -> float:
    """vtlab / ns-3 (NaN when either is missing or ns-3's is 0)."""
    if vt is None or ns is None or math.isnan(vt) or math.isnan(ns) or ns == 0:
        return math.nan
    return float(vt) / float(ns)


#: The compared metrics: (ratio key, label in verdicts).
METRICS: tuple[tuple[str, str], ...] = (
    ("goodput_ratio", "goodput"),
    ("rtt_mean_ratio", "RTT mean"),
    ("rtt_p95_ratio", "RTT p95"),
)


def verdict(ratios: Mapping[str, float], tolerance: float = TOLERANCE) -> str:
    """``agree`` if every ratio of :data:`METRICS` is within ±``tolerance``,
    ``missing`` if one is NaN (and none is outside), else ``DIFFERS (<metrics>)``
    naming the ones outside.

    >>> verdict({"goodput_ratio": 1.1, "rtt_mean_ratio": 0.9, "rtt_p95_ratio": 1.0})
    'agree'
    >>> verdict({"goodput_ratio": 5.7, "rtt_mean_ratio": 0.86, "rtt_p95_ratio": 0.51})
    'DIFFERS (goodput, RTT p95)'
    """
    outside, missing = [], False
    for key, label in METRICS:
        r = ratios.get(key, math.nan)
        if r is None or math.isnan(r):
            missing = True
        elif abs(r - 1.0) > tolerance + 1e-12:
            outside.append(label)
    if outside:
        return f"DIFFERS ({', '.join(outside)})"
    return "missing" if missing else "agree"


def compare(
    case: LteCase,
    ns: Mapping[str, Any],
    vt: Mapping[str, Any],
    *,
    variant: Variant = MAIN,
    tolerance: float = TOLERANCE,
) -> dict[str, Any]:
    """One row of the agreement table.  ``ns`` is ns-3's result (:func:`ns3_result`),
    ``vt`` vtlab's summary (:func:`run_vtlab`).  ns-3's RTT is its per-ACK
    reconstruction (:func:`per_ack_rtt`); the printed statistics (over the changes
    of ``LastRTT``) are kept in ``ns3_rtt_*_printed_ms``."""
    ns_mean, ns_p95 = per_ack_rtt(ns)
    ns_gp = ns3_goodput_bps(ns)
    row: dict[str, Any] = {
        "case": case.name,
        "variant": variant.name,
        "mobility": case.mobility,
        "rlc_buffer_bytes": case.rlc_buffer_bytes,
        "ns3_goodput_mbps": ns_gp / 1e6,
        "vtlab_goodput_mbps": float(vt["goodput_bps"]) / 1e6,
        "goodput_ratio": ratio(float(vt["goodput_bps"]), ns_gp),
        "ns3_rtt_mean_ms": ns_mean,
        "ns3_rtt_p95_ms": ns_p95,
        "vtlab_rtt_mean_ms": float(vt["rtt_mean_ms"]),
        "vtlab_rtt_p95_ms": float(vt["rtt_p95_ms"]),
        "rtt_mean_ratio": ratio(float(vt["rtt_mean_ms"]), ns_mean),
        "rtt_p95_ratio": ratio(float(vt["rtt_p95_ms"]), ns_p95),
    }
    row["verdict"] = verdict(row, tolerance)
    row.update(
        {
            "ns3_rtt_mean_printed_ms": _float(ns.get("rtt_mean_ms")),
            "ns3_rtt_p95_printed_ms": _float(ns.get("rtt_p95_ms")),
            "ns3_rtt_changes": int(ns.get("rtt_count") or 0),
            "ns3_base_rtt_ms": _float(ns.get("base_rtt_ms")),
            "vtlab_rtt_min_ms": float(vt.get("rtt_min_ms", math.nan)),
            "ns3_retransmissions": int(ns.get("retransmissions") or 0),
            "vtlab_retransmissions": int(vt.get("retransmissions", 0)),
            "ns3_recoveries": int(ns.get("recoveries") or 0),
            "vtlab_fast_recoveries": int(vt.get("fast_recoveries", 0)),
            "ns3_rtos": int(ns.get("loss_episodes") or 0),
            "vtlab_rtos": int(vt.get("rto_count", 0)),
            "ns3_rlc_drops": int(ns.get("rlc_tx_drops") or 0),
            "vtlab_lte_drops": int(vt.get("lte_drops_down", 0)),
            "vtlab_uplink_drops": int(vt.get("lte_drops_up", 0)),
            "vtlab_seeds": len(vt.get("seeds", [])),
            "vtlab_deterministic": bool(vt.get("deterministic", True)),
            "uplink_period_ms": variant.uplink_period_ms,
            "radio_delay_ms": float(vt.get("radio_delay_ms", math.nan)),
        }
    )
    return row


def _float(x: Any) -> float:
    return math.nan if x is None else float(x)


def speed_row(
    case: LteCase, ns: Mapping[str, Any], bench: Mapping[str, Any], duration_s: float
) -> dict[str, Any]:
    """One row of the speed table: ns-3's ``Simulator::Run`` and whole-process wall
    times (from its result) against vtlab's event loop and whole ``_core.run`` call."""
    ns_run = _float(ns.get("wall_s"))
    ns_proc = _float(ns.get("process_wall_s"))
    vt_engine = float(bench["engine_wall_s"])
    vt_call = float(bench["call_wall_s"])
    sim = ns_run / vt_engine if vt_engine > 0 else math.inf
    whole = ns_proc / vt_call if vt_call > 0 else math.inf
    return {
        "case": case.name,
        "simulated_s": duration_s,
        "ns3_run_wall_s": ns_run,
        "ns3_process_wall_s": ns_proc,
        "vtlab_engine_wall_s": vt_engine,
        "vtlab_call_wall_s": vt_call,
        "vtlab_events": int(bench.get("events", 0)),
        "speedup_simulation": sim,
        "speedup_whole": whole,
        "goal_100x": "met" if min(sim, whole) >= 100 else "missed",
    }


# -- the report -----------------------------------------------------------------------


def _f(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{float(x):.{digits}f}"


def _table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [
        "| case | ns-3 goodput | vtlab goodput | ratio | ns-3 RTT mean / p95 "
        "| vtlab RTT mean / p95 | ratios mean / p95 | retx ns-3 / vtlab "
        "| recoveries ns-3 / vtlab (RTO) | verdict |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['case']} | {_f(r['ns3_goodput_mbps'])} | {_f(r['vtlab_goodput_mbps'])} "
            f"| {_f(r['goodput_ratio'])} "
            f"| {_f(r['ns3_rtt_mean_ms'], 1)} / {_f(r['ns3_rtt_p95_ms'], 1)} "
            f"| {_f(r['vtlab_rtt_mean_ms'], 1)} / {_f(r['vtlab_rtt_p95_ms'], 1)} "
            f"| {_f(r['rtt_mean_ratio'])} / {_f(r['rtt_p95_ratio'])} "
            f"| {r['ns3_retransmissions']} / {r['vtlab_retransmissions']} "
            f"| {r['ns3_recoveries']} / {r['vtlab_fast_recoveries']} ({r['vtlab_rtos']}) "
            f"| {r['verdict']} |"
        )
    return lines


def _explanations(
    rows: Sequence[Mapping[str, Any]], diag: Sequence[Mapping[str, Any]]
) -> list[str]:
    """One bullet per missed comparison of the main table."""
    by_case = {r["case"]: r for r in diag}
    out = []
    for r in rows:
        if not str(r["verdict"]).startswith("DIFFERS"):
            continue
        d = by_case.get(r["case"])
        if r["rlc_buffer_bytes"] <= 64 * 1024 and r["goodput_ratio"] > 1:
            text = (
                f"* **{r['case']}** ({r['verdict']}): ns-3's uplink returns each "
                "window's ACKs together: in its RTT series the samples of one window "
                "share one arrival time, one RTT (80 ms) after the last, even late in the "
                "moving run where a window takes 7 ms on the downlink. Its "
                "request–grant uplink (the UE reports its buffer, the eNB grants "
                "resources some TTIs later, and the grant carries whatever is queued by "
                "then) batches the ACKs of a burst. The sender then emits the next "
                "window as one back-to-back burst, and the RLC buffer keeps 6 packets "
                "of it: ns-3 delivers about "
                "one buffer per RTT (6 × 1448 B / 80 ms ≈ 0.87 Mbit/s before "
                f"retransmissions) with {r['ns3_recoveries']} fast recoveries. "
                "vtlab's per-TTI uplink returns ACKs as the data arrives, 1–2 per ms, "
                "so the sender's bursts are paced by the downlink and the window grows "
                f"past the buffer ({r['vtlab_fast_recoveries']} recoveries, "
                f"{r['vtlab_rtos']} RTO). ns-3's RTT p95 is the loss rounds: after "
                "each loss the receiver echoes the older timestamp (RFC 7323), so one "
                "ACK burst per recovery samples 158 ms."
            )
            if d is not None:
                text += (
                    f" With the diagnostic uplink vtlab gives {_f(d['vtlab_goodput_mbps'])}"
                    f" Mbit/s (ratio {_f(d['goodput_ratio'])}), "
                    f"{d['vtlab_retransmissions']} retransmissions and "
                    f"{d['vtlab_fast_recoveries']} fast recoveries against ns-3's "
                    f"{d['ns3_retransmissions']} and {d['ns3_recoveries']}; RTT p95 "
                    f"ratio {_f(d['rtt_p95_ratio'])}."
                )
            out.append(text)
        else:
            out.append(
                f"* **{r['case']}** ({r['verdict']}): not one of the known causes "
                "(docs/validation.md, section LTE); investigate with `vtlab run` on "
                "the scenario in `scenarios/`."
            )
    return out


def _write_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    import csv

    if not rows:
        return
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: _csv_value(v) for k, v in r.items()})


def _method_lines(meta: Mapping[str, Any]) -> list[str]:
    """The report's method section."""
    return [
        "## Method",
        "",
        "* **Capacity**: ns-3's UDP-saturated run of the same mobility (`*_capacity`, "
        "100 Mbit/s offered into a 2 MiB RLC buffer): the bytes of its correctly decoded "
        "transport blocks per ms are the channel's capacity whatever the traffic. The "
        "TCP runs' own TBs are not: they exist only when TCP had data (with 10 240 B "
        "buffers 1.06 Mbit/s of a 35 Mbit/s channel, much of it padding), and replaying "
        "them would hand vtlab ns-3's answer.",
        "* **Trace**: first TB moved to ms 0, one opportunity per 1504 TB bytes "
        "(1500 B IP + 2 B PDCP + 2 B RLC UM header), each carrying one 1500-byte packet "
        "in vtlab (`opportunity_bytes = 1500`); the trace's last ms are repeated to "
        "cover the whole run.",
        f"* **Delays**: core {CORE_DELAY_MS:g} ms one way at 10 Gbit/s as in ns-3; the "
        "radio delay r = (base RTT − 2·core − 1 TTI)/2 = "
        f"{_f(meta.get('radio_delay_ms'), 3)} ms one way (half a TTI of alignment wait "
        "each way). In the replay every departure is on a TTI boundary, so the ACK "
        "clock locks to the grid and vtlab's base RTT is 2·core + 2·⌈r⌉ = "
        f"{_f(meta.get('replay_base_rtt_ms'), 1)} ms against ns-3's measured "
        f"{_f(meta.get('ns3_base_rtt_ms'), 2)} ms (80 ms less 71 µs: its radio part is "
        "TTI-aligned too); ns-3 truncates its samples to whole ms (79).",
        "* **Buffer**: RLC `MaxTxBufferSize` counts PDCP PDUs (IP + 2 B); vtlab's "
        "`buffer` counts IP bytes: buffer = RLC bytes × 1500/1502 (the same number of "
        "full packets fit: 6 and 1396).",
        "* **Uplink** (ACKs): ns-3's 50-RB uplink (EARFCN 18100, PF scheduler), "
        "granted on the UE's buffer status reports; `lte.cc` does not trace uplink TBs "
        f"in a downlink run, so its capacity is not recorded. vtlab: one "
        f"{UPLINK_OPPORTUNITY_BYTES} B opportunity per TTI (12 Mbit/s, about 20× the "
        "ACK load of 1 500 ACKs/s × 52 B ≈ 0.63 Mbit/s at 35 Mbit/s; no uplink drops).",
        "* **TCP**: profile ns3 (SACK + PRR, delayed ACK 2, initial window 10, minimum "
        "RTO 1 s), Cubic, MSS 1448 with timestamps (1500-byte packets), 4 MiB send and "
        "receive buffers; UE = receiver (no Wi-Fi hop: cabin link 10 Gbit/s, 0 ms).",
        "* **Goodput**: bytes received × 8 / (last byte − flow start) on both sides.",
        "* **RTT**: vtlab's per-ACK samples (timestamp echo, exact). ns-3's `LastRTT` is "
        "a `TracedValue` that fires only on change, so `lte.cc`'s statistics are over "
        "changes of a whole-ms value; the table uses their per-ACK reconstruction "
        "(each value weighted by the data delivered while it held), with the printed "
        "statistics in `agreement.csv` (`ns3_rtt_*_printed_ms`).",
        "",
    ]


def _speed_lines(speed_rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> list[str]:
    """The report's speed section."""
    lines = [
        "",
        "## Speed",
        "",
        f"Wall time per {float(meta.get('duration_s', DEFAULT_DURATION_S)):g} s "
        "simulated. ns-3: `Simulator::Run` alone, and the whole process (spawn "
        "to exit), from its result file. vtlab: the event loop (measured in the "
        "core) and the whole `vtlab._core.run` call (scenario and trace parsing, "
        f"set-up, run, result tables), median of {meta.get('repeat', DEFAULT_REPEAT)} "
        "after a warm-up, in this process (Python start-up excluded). Goal: 100×.",
        "",
        "| case | ns-3 Run s | ns-3 process s | vtlab loop s | vtlab call s "
        "| speed-up loop | speed-up whole | goal 100× |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for s in speed_rows:
        lines.append(
            f"| {s['case']} | {_f(s['ns3_run_wall_s'])} | {_f(s['ns3_process_wall_s'])} "
            f"| {_f(s['vtlab_engine_wall_s'], 4)} | {_f(s['vtlab_call_wall_s'], 4)} "
            f"| {_f(s['speedup_simulation'], 0)}× | {_f(s['speedup_whole'], 0)}× "
            f"| {s['goal_100x']} |"
        )
    missed = [s["case"] for s in speed_rows if s["goal_100x"] == "missed"]
    if missed:
        lines += [
            "",
            f"Missed: {', '.join(missed)}. vtlab's times of a few ms move with the load "
            "of the (shared) machine, and ns-3's are from its own run, at another moment: "
            "rerun with a larger `--repeat` before reading a miss as a cost per event.",
        ]
    return lines


def write_report(
    out: Path,
    rows: Sequence[Mapping[str, Any]],
    diag_rows: Sequence[Mapping[str, Any]],
    speed_rows: Sequence[Mapping[str, Any]],
    meta: Mapping[str, Any],
) -> dict[str, Path]:
    """Write ``report.md`` and ``agreement.csv`` (main and diagnostic rows, column
    ``variant``), and ``speed.csv`` when there are speed rows, into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"report": out / "report.md", "csv": out / "agreement.csv"}
    _write_csv(paths["csv"], [*rows, *diag_rows])
    if speed_rows:
        paths["speed"] = out / "speed.csv"
        _write_csv(paths["speed"], speed_rows)

    tol = float(meta.get("tolerance", TOLERANCE))
    n_agree = sum(1 for r in rows if r["verdict"] == "agree")
    seed_note = (
        "identical results: the replay is deterministic"
        if meta.get("deterministic")
        else "results differ between seeds: means shown"
    )
    lines = [
        "# vtlab versus ns-3's LTE module: trace replay",
        "",
        f"* Command: `{meta.get('command', '')}`",
        f"* vtlab {meta.get('vtlab_version', '?')} (core sha256 "
        f"{meta.get('vtlab_hash', '?')}), preset `lte-cabin`, TCP profile ns3, Cubic",
        f"* ns-3 {meta.get('ns3_version', '?')}, `validation/ns3/lte.cc` build "
        f"{meta.get('ns3_hash', '?')}; results: {meta.get('ns3_sources', '')}",
        f"* {float(meta.get('duration_s', DEFAULT_DURATION_S)):g} s simulated per case; "
        f"vtlab seeds {meta.get('seeds_text', '1')} "
        f"({seed_note})"
        f" · wall {float(meta.get('wall_s', math.nan)):.1f} s · {meta.get('date', '')}",
        "",
        *_method_lines(meta),
        "## Agreement",
        "",
        f"Verdict: **agree** if goodput, RTT mean and RTT p95 are each within "
        f"±{tol * 100:g} % of ns-3's, else **DIFFERS** naming those outside. "
        f"{n_agree} of {len(rows)} cases agree. Goodput in Mbit/s, RTT in ms.",
        "",
        *_table(rows),
    ]
    expl = _explanations(rows, diag_rows)
    if expl:
        lines += ["", "### Misses", "", *expl]
    if diag_rows:
        lines += [
            "",
            f"## Diagnostic: {diag_rows[0]['variant']}",
            "",
            DIAGNOSTIC.description[:1].upper() + DIAGNOSTIC.description[1:] + ". "
            "It reproduces ns-3's small-buffer cases (the same retransmissions and "
            "recoveries) and spoils the 2 MiB ones, where ns-3's uplink, under a steady "
            "ACK stream, behaves like the per-TTI one (the main table agrees there). "
            "ns-3's request–grant uplink batches bursty ACKs and passes steady ones; "
            "a capacity schedule fixed in advance cannot do both.",
            "",
            *_table(diag_rows),
        ]
    if speed_rows:
        lines += _speed_lines(speed_rows, meta)
    lines += [
        "",
        "Files: `agreement.csv` (both tables, more columns), "
        + ("`speed.csv`, " if speed_rows else "")
        + "`ns3-cache.jsonl` (the ns-3 runs: build hash, arguments, file, wall times), "
        "`scenarios/<case>.toml` (vtlab's scenario of each case: `vtlab run --scenario`, "
        "from the directory the command ran in) and `traces/` (the capacity traces).",
        "",
    ]
    paths["report"].write_text("\n".join(lines))
    return paths


def _csv_value(v: Any) -> Any:
    if isinstance(v, float):
        return "" if math.isnan(v) else f"{v:.6g}"
    return v


# -- the validation -------------------------------------------------------------------


@dataclass
class LteValidation:
    rows: list[dict[str, Any]]
    diag_rows: list[dict[str, Any]]
    speed_rows: list[dict[str, Any]]
    paths: dict[str, Path]
    ns3_runs: dict[str, str] = field(default_factory=dict)  #: run name -> source
    wall_s: float = 0.0


def parse_cases(names: Iterable[str] | None) -> list[LteCase]:
    """The cases named (all of :data:`CASES` when none), in report order."""
    known = {c.name: c for c in CASES}
    if not names:
        return list(CASES)
    wanted = []
    for n in names:
        key = str(n).strip()
        if key not in known:
            raise LteValidateError(f"--case: unknown case '{key}' (allowed: {', '.join(known)})")
        wanted.append(key)
    return [c for c in CASES if c.name in wanted]


def parse_tolerance(text: str | float) -> float:
    """``15%`` -> 0.15, ``0.15`` -> 0.15; must lie in (0, 1)."""
    s = str(text).strip()
    try:
        value = float(s[:-1].strip()) / 100 if s.endswith("%") else float(s)
    except ValueError:
        raise LteValidateError(
            f"--tolerance: not a fraction: '{text}' (e.g. 15% or 0.15)"
        ) from None
    if not 0 < value < 1:
        raise LteValidateError(f"--tolerance: {text} is outside (0, 1)")
    return value


def check_options(
    duration_s: float, seeds: int, uplink_period_ms: int, radio_delay_ms: float | None, repeat: int
) -> None:
    """Raise :class:`LteValidateError` (naming the option) for a bad value."""
    if not (math.isfinite(duration_s) and 1.0 <= duration_s <= MAX_DURATION_S):
        raise LteValidateError(f"--duration: {duration_s:g} s is outside [1, {MAX_DURATION_S:g}] s")
    if seeds < 1:
        raise LteValidateError(f"--seeds: must be at least 1, got {seeds}")
    if uplink_period_ms < 1:
        raise LteValidateError(f"--uplink-period: must be at least 1 ms, got {uplink_period_ms}")
    if radio_delay_ms is not None and not (
        math.isfinite(radio_delay_ms) and 0 <= radio_delay_ms <= 1000
    ):
        raise LteValidateError(f"--radio-delay: {radio_delay_ms:g} ms is outside [0, 1000] ms")
    if repeat < 1:
        raise LteValidateError(f"--repeat: must be at least 1, got {repeat}")


def _ns3_source(binary: _ns3.Ns3Binary | None, log: Callable[[str], None] | None) -> Ns3Source:
    if binary is not None:
        return Ns3Source(binary)
    try:
        return Ns3Source(_lte.ensure_lte_binary(log=log))
    except _ns3.Ns3Error as exc:
        if log is not None:
            log(f"note: ns-3 cannot run here ({' '.join(str(exc).split())}); using cached results")
        return Ns3Source(None, " ".join(str(exc).split()))


def _ns3_results(
    runs: Sequence[Ns3Run],
    cache: Ns3Cache,
    source: Ns3Source,
    rerun: bool,
    progress: bool,
    log: Callable[[str], None] | None,
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Every ns-3 run's result (run, cached or stored) and where it came from."""
    from vtlab.progress import run_progress

    results: dict[str, dict[str, Any]] = {}
    sources: dict[str, str] = {}
    todo = (
        [r for r in runs if rerun or cache.lookup(r, source.ns3_hash) is None]
        if source.binary is not None
        else []
    )
    with run_progress(len(todo), progress, label="ns-3 runs") as advance:
        for r in runs:
            res, src = ns3_result(r, cache, source, rerun=rerun, log=log)
            results[r.name], sources[r.name] = res, src
            if src == "run":
                advance()
            if src == "stored" and log is not None:
                log(f"note: {r.name}: stored result used unverified (ns-3 cannot run here)")
    return results, sources


def _write_traces(
    trace_dir: Path,
    mobilities: Sequence[str],
    results: Mapping[str, Mapping[str, Any]],
    duration_s: float,
    suffix: str,
) -> dict[str, Path]:
    """The capacity trace of each mobility, written as mahimahi files."""
    trace_dir.mkdir(parents=True, exist_ok=True)
    traces: dict[str, Path] = {}
    for m in mobilities:
        cap = results[f"{m}_capacity"]
        path = trace_dir / f"{m}_down{suffix}.mahimahi"
        _lte.write_mahimahi(path, capacity_trace_ms(cap["tb_ms"], cap["tb_bytes"], duration_s))
        traces[m] = path
    return traces


def _replay(
    case: LteCase,
    ns: Mapping[str, Any],
    trace: Path,
    variant: Variant,
    radio_delay_ms: float,
    duration_s: float,
    seeds: int,
    tolerance: float,
) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """Replay one case's capacity trace in vtlab as ``variant``: the comparison row,
    the vtlab scenario, and whether the seeds gave identical results."""
    spec = vtlab_spec(
        case,
        trace,
        duration_s=duration_s,
        radio_delay_ms=radio_delay_ms,
        uplink_period_ms=variant.uplink_period_ms,
    )
    vt = run_vtlab(spec, list(range(1, int(seeds) + 1)))
    vt["radio_delay_ms"] = radio_delay_ms
    row = compare(case, ns, vt, variant=variant, tolerance=tolerance)
    return row, spec, bool(vt["deterministic"])


def _scenario_file(spec: Mapping[str, Any], case: LteCase, duration_s: float) -> str:
    """The replayed scenario as a TOML file a user can run (`vtlab run --scenario`)."""
    return spec_toml(
        spec,
        f"vtlab validate-lte: case {case.name} (ns-3 {case.mobility}, RLC "
        f"{case.rlc_buffer_bytes} B), {duration_s:g} s.\nThe trace path is "
        "relative to the directory the command ran in.",
    )


def _verdict_line(case: LteCase, variant: Variant, row: Mapping[str, Any]) -> str:
    return (
        f"{case.name} [{variant.name}]: goodput ratio {_f(row['goodput_ratio'])}, "
        f"RTT mean {_f(row['rtt_mean_ratio'])}, p95 {_f(row['rtt_p95_ratio'])}"
        f" -> {row['verdict']}"
    )


def _provenance(source: Ns3Source, sources: Mapping[str, str]) -> dict[str, str]:
    """The report's version lines: vtlab's build, ns-3's, where ns-3's results came from."""
    import datetime as dt

    from vtlab import _core
    from vtlab.api import core_build

    counts: dict[str, int] = {}
    for s in sources.values():
        counts[s] = counts.get(s, 0) + 1
    labels = {"cache": "from `ns3-cache.jsonl`", "run": "run now", "stored": "stored, unverified"}
    return {
        "date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "vtlab_version": _core.version(),
        "vtlab_hash": core_build(),
        "ns3_version": source.binary.ns3_version if source.binary else "?",
        "ns3_hash": source.binary.short_hash if source.binary else "(not built here)",
        "ns3_sources": ", ".join(f"{n} {labels.get(s, s)}" for s, n in counts.items()),
    }


def validate_lte(
    out: Path | str = Path("validation/lte"),
    *,
    cases: Iterable[str] | None = None,
    duration_s: float = DEFAULT_DURATION_S,
    seeds: int = DEFAULT_SEEDS,
    tolerance: float = TOLERANCE,
    uplink_period_ms: int = 1,
    radio_delay_ms: float | None = None,
    diagnostic: bool = True,
    bench: bool = False,
    repeat: int = DEFAULT_REPEAT,
    rerun_ns3: bool = False,
    binary: _ns3.Ns3Binary | None = None,
    progress: bool = True,
    command: str = "",
    log: Callable[[str], None] | None = None,
) -> LteValidation:
    """Run (or take from the cache) ns-3's LTE cases, replay their capacity in
    vtlab, compare, and write ``<out>/report.md``, ``<out>/agreement.csv`` (and
    ``speed.csv`` with ``bench``) and ``<out>/scenarios/<case>.json``.

    ``cases``: names from :data:`CASES` (default all); ``seeds``: vtlab seeds
    1..seeds; ``uplink_period_ms``/``radio_delay_ms`` change the main variant (the
    defaults are the validation's); ``diagnostic`` adds the :data:`DIAGNOSTIC`
    table.  ns-3 runs one case at a time; without ns-3 (or g++), cached results are
    used.  Raises :class:`LteValidateError` on bad input and
    :class:`vtlab.ns3.program.Ns3Error` when a needed ns-3 result is neither cached nor
    computable."""
    started = time.perf_counter()
    chosen = parse_cases(cases)
    check_options(float(duration_s), int(seeds), int(uplink_period_ms), radio_delay_ms, int(repeat))
    if not 0 < tolerance < 1:
        raise LteValidateError(f"--tolerance: {tolerance:g} is outside (0, 1)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    source = _ns3_source(binary, log)
    cache = Ns3Cache(out)

    mobilities = list(dict.fromkeys(c.mobility for c in chosen))
    runs = [capacity_run(m, duration_s) for m in mobilities]
    runs += [tcp_run(c, duration_s) for c in chosen]
    results, sources = _ns3_results(runs, cache, source, rerun_ns3, progress, log)
    suffix = "" if duration_s == DEFAULT_DURATION_S else f"_{duration_s:g}s"
    traces = _write_traces(out / "traces", mobilities, results, duration_s, suffix)
    main = Variant(MAIN.name, int(uplink_period_ms), radio_delay_ms, MAIN.description)
    variants = [main] + ([DIAGNOSTIC] if diagnostic else [])
    scen_dir = out / "scenarios"
    scen_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    diag_rows: list[dict[str, Any]] = []
    speed_rows: list[dict[str, Any]] = []
    deterministic = True
    radio_main = math.nan
    base_ns3 = math.nan
    for case in chosen:
        base_ns3 = float(results[case.name].get("base_rtt_ms") or NS3_BASE_RTT_MS)
        for v in variants:
            r = v.radio_delay_ms
            if r is None:
                r = radio_delay_for(base_ns3, CORE_DELAY_MS)
            row, spec, det = _replay(
                case, results[case.name], traces[case.mobility], v, r, duration_s, seeds, tolerance
            )
            deterministic &= det
            if v is main:
                radio_main = r
                rows.append(row)
                (scen_dir / f"{case.name}{suffix}.toml").write_text(
                    _scenario_file(spec, case, duration_s)
                )
                if bench:
                    vt_bench = bench_vtlab(spec, int(repeat))
                    speed_rows.append(speed_row(case, results[case.name], vt_bench, duration_s))
            else:
                diag_rows.append(row)
            if log is not None:
                log(_verdict_line(case, v, row))

    meta = {
        "command": command or explicit_command(out, chosen, duration_s, seeds, bench),
        **_provenance(source, sources),
        "duration_s": duration_s,
        "seeds_text": f"1..{seeds}" if seeds > 1 else "1",
        "deterministic": deterministic,
        "radio_delay_ms": radio_main,
        "replay_base_rtt_ms": replay_base_rtt_ms(CORE_DELAY_MS, radio_main)
        if main.uplink_period_ms == 1 and not math.isnan(radio_main)
        else math.nan,
        "ns3_base_rtt_ms": base_ns3,
        "tolerance": tolerance,
        "repeat": repeat,
        "wall_s": time.perf_counter() - started,
    }
    paths = write_report(out, rows, diag_rows, speed_rows, meta)
    return LteValidation(rows, diag_rows, speed_rows, paths, sources, time.perf_counter() - started)


def explicit_command(
    out: Path, cases: Sequence[LteCase], duration_s: float, seeds: int, bench: bool
) -> str:
    import shlex

    parts = ["vtlab", "validate-lte"]
    if [c.name for c in cases] != [c.name for c in CASES]:
        for c in cases:
            parts += ["--case", c.name]
    if duration_s != DEFAULT_DURATION_S:
        parts += ["--duration", f"{duration_s:g}"]
    if seeds != DEFAULT_SEEDS:
        parts += ["--seeds", str(seeds)]
    if bench:
        parts.append("--bench")
    parts += ["--out", str(out)]
    return shlex.join(parts)


# -- the command ----------------------------------------------------------------------


# -- the command's options -----------------------------------------------------------

CaseOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--case",
        metavar="NAME",
        help="Case to compare; repeatable. Default: all ("
        + ", ".join(c.name for c in CASES)
        + ").",
        show_default=False,
    ),
]

DurationOpt = Annotated[
    float,
    typer.Option("--duration", help="Simulated seconds per case (ns-3 and vtlab)."),
]

SeedsOpt = Annotated[
    int,
    typer.Option("--seeds", "-n", help="vtlab seeds 1..N (the replay is deterministic)."),
]

ToleranceOpt = Annotated[
    str,
    typer.Option("--tolerance", help="Agreement band for every ratio, e.g. 15% or 0.15."),
]

UplinkPeriodOpt = Annotated[
    int,
    typer.Option(
        "--uplink-period",
        metavar="MS",
        help="vtlab's uplink: one opportunity every MS ms (1: every TTI).",
    ),
]

RadioDelayOpt = Annotated[
    float | None,
    typer.Option(
        "--radio-delay",
        metavar="MS",
        help="vtlab's one-way radio delay. Default: from ns-3's base RTT.",
        show_default=False,
    ),
]

NoDiagnosticOpt = Annotated[
    bool,
    typer.Option("--no-diagnostic", help="Leave out the ACK-batched uplink table."),
]

BenchOpt = Annotated[
    bool,
    typer.Option(
        "--bench",
        help="Also compare wall times (ns-3's from its results) and write speed.csv.",
    ),
]

RepeatOpt = Annotated[int, typer.Option("--repeat", help="vtlab runs per case timed by --bench.")]

RerunNs3Opt = Annotated[
    bool,
    typer.Option("--rerun-ns3", help="Run ns-3 even when its result is cached."),
]

OutOpt = Annotated[
    Path,
    typer.Option("--out", "-o", help="Directory for report.md, agreement.csv and the ns-3 cache."),
]

QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or status lines.")]


def register(app: typer.Typer) -> None:
    """Add the ``validate-lte`` command to the ``vtlab`` CLI."""

    @app.command("validate-lte")
    def validate_lte_command(
        case: CaseOpt = None,
        duration: DurationOpt = DEFAULT_DURATION_S,
        seeds: SeedsOpt = DEFAULT_SEEDS,
        tolerance: ToleranceOpt = "15%",
        uplink_period: UplinkPeriodOpt = 1,
        radio_delay: RadioDelayOpt = None,
        no_diagnostic: NoDiagnosticOpt = False,
        bench: BenchOpt = False,
        repeat: RepeatOpt = DEFAULT_REPEAT,
        rerun_ns3: RerunNs3Opt = False,
        out: OutOpt = Path("validation/lte"),
        quiet: QuietOpt = False,
    ) -> None:
        """Validate vtlab's trace-driven LTE link against ns-3's LTE module: replay
        ns-3's channel capacity in vtlab and compare goodput and RTT (needs the ns-3
        wheel and g++ unless the ns-3 results are cached in OUT)."""
        from rich.console import Console

        with user_errors():
            chosen = parse_cases(case)
            tol = parse_tolerance(tolerance)
            check_options(duration, seeds, uplink_period, radio_delay, repeat)
            check_output_dir("--out", out)
        console = Console(stderr=True, highlight=False)

        def log(line: str) -> None:
            if not quiet:
                console.print(line, markup=False, soft_wrap=True)

        try:
            res = validate_lte(
                out,
                cases=[c.name for c in chosen],
                duration_s=duration,
                seeds=seeds,
                tolerance=tol,
                uplink_period_ms=uplink_period,
                radio_delay_ms=radio_delay,
                diagnostic=not no_diagnostic,
                bench=bench,
                repeat=repeat,
                rerun_ns3=rerun_ns3,
                progress=not quiet,
                command=typed_command(),
                log=log,
            )
        except (_ns3.Ns3Error, LteValidateError) as exc:
            if os.environ.get("VTLAB_DEBUG"):
                raise
            fail(str(exc))
        except KeyboardInterrupt:
            console.print(
                f"interrupted: finished ns-3 runs are kept in {out / 'ns3-cache.jsonl'}; "
                "run the same command again to resume",
                markup=False,
                soft_wrap=True,
            )
            raise typer.Exit(EXIT_INTERRUPTED) from None
        n_agree = sum(1 for r in res.rows if r["verdict"] == "agree")
        log(f"{n_agree}/{len(res.rows)} cases agree · {res.wall_s:.1f} s")
        for s in res.speed_rows:
            log(
                f"speed {s['case']}: {s['speedup_simulation']:,.0f}x (simulation), "
                f"{s['speedup_whole']:,.0f}x (whole)"
            )
        names = ", ".join(str(p) for p in res.paths.values())
        typer.echo(f"wrote {names}")
