"""The ns-3 side of the LTE family (:mod:`vtlab.validation.lte`): the runs of
``validation/ns3/lte.cc`` it needs, their cache ``<out>/ns3-cache.jsonl`` (on the
validation's :class:`~vtlab.validation.cache.RunCache`), and ns-3's numbers as vtlab
defines them (goodput from the flow start, per-ACK RTT statistics)."""

from __future__ import annotations

import bisect
import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from vtlab.ns3.lte import DISTANCE_M, case_args, run_lte
from vtlab.ns3.program import Ns3Binary, Ns3Error
from vtlab.packagedata import validation_dir
from vtlab.validation.cache import RunCache
from vtlab.validation.lte_cases import (
    DEFAULT_DURATION_S,
    MOBILITY_SPEED_MPS,
    NS3_BASE_RTT_MS,
    RLC_2M,
    TB_BYTES_PER_PACKET,
    LteCase,
)

__all__ = [
    "CACHE_FILE",
    "Ns3Cache",
    "Ns3Run",
    "Ns3Source",
    "cache_key",
    "capacity_run",
    "ns3_goodput_bps",
    "ns3_result",
    "per_ack_rtt",
    "same_output",
    "sha256_of",
    "tcp_run",
]

#: The cache of ns-3 runs in the output directory.
CACHE_FILE = "ns3-cache.jsonl"


@dataclass(frozen=True)
class Ns3Run:
    """One run of ``lte.cc`` (downlink, UE at :data:`vtlab.ns3.lte.DISTANCE_M`)."""

    name: str  #: ``static_rlc10k``, ``static_capacity``, ...
    speed_mps: float
    rlc_buffer_bytes: int
    app: str  #: ``tcp`` or ``udp`` (the capacity run)
    duration_s: float = DEFAULT_DURATION_S
    seed: int = 1

    @cached_property
    def args(self) -> list[str]:
        """The program's arguments (:func:`vtlab.ns3.lte.case_args`, as
        :func:`vtlab.ns3.lte.run_matrix` gives them)."""
        return case_args(
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


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cache_key(rec: Mapping[str, Any]) -> str:
    """The key of a line of ``ns3-cache.jsonl``: the run (``name``, ``args``), the
    program (``ns3_hash``) and the result file with its sha256.  A line without
    ``name``, ``args`` or ``file`` is not a record (``KeyError``)."""
    return json.dumps(
        [rec["name"], rec["args"], rec.get("ns3_hash"), rec["file"], rec.get("sha256")]
    )


class Ns3Cache:
    """``<out>/ns3-cache.jsonl``: one line per ns-3 run of this family: ``name``,
    ``args`` (without the binary), ``ns3_hash`` (the results hash of ``lte.cc``:
    its source, the ns-3 version and the compile flags, not where they are),
    ``file`` (relative to ``<out>``), its ``sha256``, and the run's ``wall_s`` and
    ``process_wall_s``.  A record is used only while its file is unchanged; lines that
    do not parse are ignored and later lines win (:class:`~vtlab.validation.cache.
    RunCache` keyed by :func:`cache_key`)."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.path = self.out / CACHE_FILE
        self.runs = RunCache(self.path, cache_key)

    def with_shipped(self) -> list[Ns3Cache]:
        """This cache, then the one vtlab ships (``lte/`` of
        :func:`vtlab.packagedata.validation_dir`) unless that is this one: where a
        result not in ``<out>`` is looked up before ns-3 runs."""
        shipped = validation_dir() / "lte"
        if shipped.resolve() == self.out.resolve():
            return [self]
        return [self, Ns3Cache(shipped)]

    def find(self, run: Ns3Run, ns3_hash: str | None) -> tuple[Ns3Cache, dict[str, Any]] | None:
        """The first of :meth:`with_shipped` that holds ``run`` (:meth:`lookup`),
        with the record."""
        for cache in self.with_shipped():
            rec = cache.lookup(run, ns3_hash)
            if rec is not None:
                return cache, rec
        return None

    def _valid(self, rec: Mapping[str, Any]) -> bool:
        f = self.out / str(rec["file"])
        return f.is_file() and sha256_of(f) == rec.get("sha256")

    def lookup(self, run: Ns3Run, ns3_hash: str | None) -> dict[str, Any] | None:
        """The latest valid record of ``run`` (its arguments) built by ``ns3_hash``
        (``None``: by any build)."""
        for rec in reversed(list(self.runs.records.values())):
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
        self.runs.add(rec)


@dataclass
class Ns3Source:
    """Where the ns-3 results come from in one validation."""

    binary: Ns3Binary | None
    why_not: str = ""  #: why there is no binary (ns-3 or g++ missing)

    @property
    def ns3_hash(self) -> str | None:
        return self.binary.results_hash if self.binary is not None else None


def _without_ns3(run: Ns3Run, cache: Ns3Cache, why_not: str) -> tuple[dict[str, Any], str]:
    """ns-3 cannot run here: the cached result of any build, else a stored file with
    the same arguments (unverified); in ``<out>``, then in the data vtlab ships."""
    for where in cache.with_shipped():
        rec = where.lookup(run, None)
        if rec is not None:
            return where.load(rec), "cache"
        stored = where.out / "ns3" / f"{run.stem}.json"
        if stored.is_file():
            res = json.loads(stored.read_text())
            if list(res.get("args", []))[1:] == run.args:
                return res, "stored"
    raise Ns3Error(
        f"no cached ns-3 result for {run.name} ({' '.join(run.args)}) and ns-3 "
        f"cannot run here: {why_not}"
    )


def _run_now(run: Ns3Run, cache: Ns3Cache, binary: Ns3Binary) -> dict[str, Any]:
    """Run ``run``, keep its result file and add it to the cache."""
    res = run_lte(run.args, binary=binary)
    res["args"] = [Path(res["args"][0]).name, *res["args"][1:]]
    doc = {**run.header(), **res}
    stored = cache.out / "ns3" / f"{run.stem}.json"
    if stored.is_file() and same_output(json.loads(stored.read_text()), doc):
        path = stored
    else:
        path = cache.out / "ns3-runs" / f"{run.stem}-{binary.results_hash[:12]}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc) + "\n")
    cache.add(
        {
            "name": run.name,
            "args": run.args,
            "ns3_hash": binary.results_hash,
            "ns3_version": binary.ns3_version,
            "file": path.relative_to(cache.out).as_posix(),
            "sha256": sha256_of(path),
            "wall_s": res.get("wall_s"),
            "process_wall_s": res.get("process_wall_s"),
        }
    )
    return doc


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

    The cache is ``cache``, then the one vtlab ships (:meth:`Ns3Cache.find`).
    With a binary: the cached result of this build and these arguments, else a
    fresh run (``rerun`` forces one).  A fresh run that reproduces the stored
    ``<out>/ns3/<case>.json`` (everything but wall times) adopts that file; otherwise
    it is written to ``<out>/ns3-runs/<stem>-<build>.json``.  Either way the cache
    records the run with its own wall times.  Without a binary: the cached result of
    any build, else a stored file with the same arguments (unverified); raises
    :class:`vtlab.ns3.program.Ns3Error` when there is neither."""
    if source.binary is None:
        return _without_ns3(run, cache, source.why_not)
    if not rerun:
        found = cache.find(run, source.ns3_hash)
        if found is not None:
            return found[0].load(found[1]), "cache"
    if log is not None:
        log(f"ns-3: running {run.name} ({run.duration_s:g} s simulated)")
    return _run_now(run, cache, source.binary), "run"


def ns3_goodput_bps(res: Mapping[str, Any]) -> float:
    """ns-3's goodput as vtlab defines it: bytes received × 8 / (last byte − flow
    start).  (ns-3's ``goodput_bps`` divides by last − first byte instead: the first
    data arrives 115 ms after the flow start.)"""
    last = res.get("last_rx_s")
    rx = res.get("rx_bytes")
    if not last or rx is None or float(last) <= 0:
        return math.nan
    return float(rx) * 8 / float(last)


def _ack_weights(res: Mapping[str, Any], t_ms: list[float]) -> list[float]:
    """The number of ACKs each RTT change stands for (see :func:`per_ack_rtt`)."""
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
    return weights


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
    weights = _ack_weights(res, t_ms)
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
