"""Cross-validation against ns-3: ``vtlab validate``.

Runs vtlab (ns-3 profile, or ``--profile linux``) and the ns-3 reference program
``validation/ns3/v2g.cc`` on the same grid — algorithm × mean loss × seed × topology,
one transfer size — and writes ``<out>/report.md`` and ``<out>/agreement.csv`` (and
``.parquet``): per algorithm × loss × topology, the mean goodput with its 95 % confidence interval
(Student t) on each side, the ratio vtlab/ns-3, RTO expiries and fast recoveries on
each side, and a verdict.

* Topologies: ``1`` is the single-vehicle V2G cable (preset ``v2g``); ``N`` ≥ 2 is the
  charging station with N vehicles, 3 per PLC segment (preset ``station``).  For a
  station, a run's goodput is the mean over its vehicles (and the counters are means
  per vehicle); the aggregate goodput is reported next to it
  (:func:`vtlab.ns3.vehicle_summary`).

* Verdict (:func:`verdict`): from the ratio of means vtlab/ns-3 and its 95 % Fieller
  interval (:func:`ratio_ci`): ``agree`` within ±10 %; ``consistent`` within ±20 %
  with 1 inside the interval; ``differs`` otherwise.
* ``--qdisc stock`` (default; ns-3's FqCoDel root queue disc with flow control, vtlab
  ``qdisc = "fq_codel"``) or ``none`` (drop-tail device queues alone).
* Rankings: per loss level, the algorithms ordered by mean goodput on each side,
  Spearman's ρ, and whether the orders are equal (:func:`rankings`).
* Resume: every finished run is appended to ``<out>/runs.jsonl``, keyed by (side,
  algorithm, loss, seed, bytes, source hash, qdisc and, for a station, topology); a
  re-run skips those, and ns-3 runs stored in ``validation/ns3/results/v2g-runs.jsonl.gz``
  (``--store-ns3``) are reused too.  The source hash
  is the sha256 of the compiled vtlab core on the vtlab side and the results hash of
  the ns-3 program (source, ns-3 version, compile flags) on the ns-3 side, so results are
  recomputed when either simulator changes.

The module is registered on the CLI by :func:`register`.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from vtlab import ns3 as _ns3
from vtlab.api import core_build
from vtlab.cli.options import ClusterOpt, ConnectTimeoutOpt, SchedulerOpt, check_cluster_options
from vtlab.cluster import DEFAULT_CONNECT_TIMEOUT
from vtlab.errors import fail, user_errors
from vtlab.outputs import check_output_dir

__all__ = [
    "AGREE_TOLERANCE",
    "CONSISTENT_TOLERANCE",
    "QDISCS",
    "RatioCI",
    "ratio_ci",
    "store_runs",
    "stored_ns3_runs_path",
    "verdict_counts",
    "DEFAULT_BYTES",
    "DEFAULT_CCS",
    "DEFAULT_LOSSES",
    "DEFAULT_RUNS",
    "QUICK",
    "Grid",
    "RunCache",
    "agreement_table",
    "mean_ci",
    "rankings",
    "register",
    "run_grid",
    "spearman",
    "validate",
    "verdict",
    "write_report",
]

#: Algorithms that join the default list only when vtlab's registry has them (decided at
#: run time: ``bbr`` is ns-3's TcpBbr).
OPTIONAL_CCS: tuple[str, ...] = ("bbr",)
#: Every algorithm both vtlab and ns-3.44 implement, in report order (plus
#: :data:`OPTIONAL_CCS` when vtlab has them).
DEFAULT_CCS: tuple[str, ...] = tuple(c for c in _ns3.CC_TO_NS3 if c not in OPTIONAL_CCS)
#: Mean loss levels of the PLC link (burst model, bursts of 1..4 packets).
DEFAULT_LOSSES: tuple[float, ...] = (0.0, 0.0025, 0.01, 0.05)
#: Seeds 1..DEFAULT_RUNS (ns-3: ``--run=k``).
DEFAULT_RUNS = 10
DEFAULT_BYTES = 100_000_000
#: ``--qdisc``: the name -> (v2g.cc ``--qdisc``, vtlab preset ``qdisc``).  ``stock`` is
#: what ns-3.44 installs by itself: an FqCoDel root queue disc on every device over the
#: 100-packet device queue, with flow control between them; ``none`` is the plain
#: 100-packet drop-tail device queue (no queue disc, no flow control).
QDISCS: dict[str, tuple[str, str]] = {
    "stock": ("default", "fq_codel"),
    "none": ("none", "none"),
}
DEFAULT_QDISC = "stock"
#: The CI subset (``--quick``); explicit options override each field.
QUICK: dict[str, Any] = {
    "ccs": ("newreno", "illinois", "cubic"),
    "losses": (0.0, 0.05),
    "bytes": 5_000_000,
    "runs": 2,
    "qdisc": "stock",
}
#: ``--only``: run one side of the grid (no report).
ONLY = ("ns3", "vtlab")
#: ``agree`` when the point ratio vtlab/ns-3 is within 1 ± this.
AGREE_TOLERANCE = 0.10
#: ``consistent`` when outside :data:`AGREE_TOLERANCE` but within 1 ± this and the
#: ratio's 95 % confidence interval contains 1.
CONSISTENT_TOLERANCE = 0.20
#: The verdicts, best first (``missing``: a side has no runs).
VERDICTS = ("agree", "consistent", "differs", "missing")
#: Largest ``--topology`` (vehicles at the charging station), as in vtlab's preset.
MAX_VEHICLES = 1000
#: Vehicles sharing one PLC segment at the charging station (the preset's default).
PER_SEGMENT = 3
SIDES = ("vtlab", "ns-3")
#: TCP profiles vtlab can run the grid with (ns-3 always runs as itself).
PROFILES = ("ns3", "linux")


class ValidateError(ValueError):
    """Bad input to ``vtlab validate``: one ``error:`` line, exit status 2."""


# -- statistics and verdicts -----------------------------------------------------------


def mean_ci(values: Iterable[float]) -> tuple[float, float, int]:
    """(mean, 95 % confidence half-width, n) of ``values`` (NaNs dropped).

    The half-width is Student's ``t(0.975, n-1) · sd / √n``; NaN when n < 2.

    >>> [round(x, 4) for x in mean_ci([1.0, 2.0, 3.0])]
    [2.0, 2.4841, 3]
    """
    from vtlab.stats import ci95_halfwidth

    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, 0
    mean = sum(xs) / n
    if n < 2:
        return mean, math.nan, n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    return mean, ci95_halfwidth(sd, n), n


def ci_overlap(m1: float, h1: float, m2: float, h2: float) -> bool:
    """Whether [m1 ± h1] and [m2 ± h2] overlap; a NaN half-width counts as 0."""
    h1 = 0.0 if math.isnan(h1) else h1
    h2 = 0.0 if math.isnan(h2) else h2
    return m1 - h1 <= m2 + h2 and m2 - h2 <= m1 + h1


def _t975(df: float) -> float:
    """Student's t quantile 0.975 for (possibly fractional) degrees of freedom."""
    from scipy import stats  # imported here: scipy.stats takes ~0.5 s to import

    return float(stats.t.ppf(0.975, df))


@dataclass(frozen=True)
class RatioCI:
    """The ratio of two independent means and its 95 % Fieller interval
    (:func:`ratio_ci`).  ``low``/``high`` are −∞/+∞ when the interval is unbounded,
    NaN when a side has fewer than 2 values; ``contains_one`` is exact even then
    (NaN interval: ``False``)."""

    ratio: float
    low: float
    high: float
    contains_one: bool
    df: float  #: Welch–Satterthwaite degrees of freedom (NaN if undefined)


def ratio_ci(num: Iterable[float], den: Iterable[float]) -> RatioCI:
    """The ratio of means mean(num)/mean(den) with its 95 % confidence interval by
    Fieller's theorem for two independent samples.

    With means a, b and squared standard errors v₁ = s₁²/n₁, v₂ = s₂²/n₂, the
    interval is every ρ with (a − ρb)² ≤ t²(v₁ + ρ²v₂), t the 0.975 quantile of
    Student's t with the Welch–Satterthwaite degrees of freedom
    ν = (v₁ + v₂)² / (v₁²/(n₁−1) + v₂²/(n₂−1)).  When g = t²v₂/b² < 1 (the
    denominator is significantly non-zero) it is the bounded interval

        [ab ∓ t·√(a²v₂ + b²v₁ − t²v₁v₂)] / (b² − t²v₂),

    otherwise unbounded (reported as (−∞, +∞)).  ρ = 1 is inside exactly when
    (a − b)² ≤ t²(v₁ + v₂), i.e. when Welch's test does not reject equal means.
    Both variances zero: the degenerate interval [a/b, a/b].  NaNs are dropped.

    >>> r = ratio_ci([11, 12, 13], [9, 10, 11])
    >>> round(r.ratio, 3), round(r.low, 4), round(r.high, 4), r.df
    (1.2, 0.976, 1.4873, 4.0)
    """
    xs = [float(v) for v in num if v is not None and not math.isnan(float(v))]
    ys = [float(v) for v in den if v is not None and not math.isnan(float(v))]
    if not xs or not ys:
        return RatioCI(math.nan, math.nan, math.nan, False, math.nan)
    n1, n2 = len(xs), len(ys)
    a, b = sum(xs) / n1, sum(ys) / n2
    ratio = a / b if b != 0 else (1.0 if a == 0 else math.copysign(math.inf, a))
    if n1 < 2 or n2 < 2:
        return RatioCI(ratio, math.nan, math.nan, False, math.nan)
    v1 = sum((x - a) ** 2 for x in xs) / (n1 - 1) / n1
    v2 = sum((y - b) ** 2 for y in ys) / (n2 - 1) / n2
    if v1 == 0 and v2 == 0:
        return RatioCI(ratio, ratio, ratio, a == b, math.nan)
    df = (v1 + v2) ** 2 / (v1**2 / (n1 - 1) + v2**2 / (n2 - 1))
    t2 = _t975(df) ** 2
    contains_one = (a - b) ** 2 <= t2 * (v1 + v2)
    denom = b * b - t2 * v2
    if denom <= 0:
        return RatioCI(ratio, -math.inf, math.inf, contains_one, df)
    half = math.sqrt(t2) * math.sqrt(max(a * a * v2 + b * b * v1 - t2 * v1 * v2, 0.0))
    low, high = sorted(((a * b - half) / denom, (a * b + half) / denom))
    return RatioCI(ratio, low, high, contains_one, df)


def verdict(
    ratio: float,
    contains_one: bool,
    tolerance: float = AGREE_TOLERANCE,
    consistent_tolerance: float = CONSISTENT_TOLERANCE,
) -> str:
    """The verdict of a cell from its point ratio vtlab/ns-3 and whether the ratio's
    95 % CI contains 1 (:func:`ratio_ci`): ``agree`` when the ratio is within
    ±``tolerance``; ``consistent`` when outside that but within
    ±``consistent_tolerance`` and the CI contains 1; ``differs`` otherwise;
    ``missing`` when the ratio is NaN (a side has no runs).  The CI never turns a
    cell into ``agree``: more seeds cannot make a 30 % gap pass.

    >>> verdict(1.05, False), verdict(1.15, True), verdict(1.15, False), verdict(1.3, True)
    ('agree', 'consistent', 'differs', 'differs')
    """
    if math.isnan(ratio):
        return "missing"
    off = abs(ratio - 1.0)
    if off <= tolerance + 1e-12:
        return "agree"
    if off <= consistent_tolerance + 1e-12 and contains_one:
        return "consistent"
    return "differs"


def verdict_counts(table: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many cells got each verdict (every name of :data:`VERDICTS`)."""
    counts = dict.fromkeys(VERDICTS, 0)
    for row in table:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    return counts


def _ranks(values: Sequence[float]) -> list[float]:
    """Ranks 1..n (1 = largest), ties get their average rank."""
    order = sorted(range(len(values)), key=lambda i: -values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation of two equally long sequences (ties averaged);
    NaN for fewer than two items or a constant sequence.

    >>> spearman([1, 2, 3], [10, 20, 30]), spearman([1, 2, 3], [3, 2, 1])
    (1.0, -1.0)
    """
    if len(a) != len(b):
        raise ValueError("spearman: sequences differ in length")
    n = len(a)
    if n < 2:
        return math.nan
    ra, rb = _ranks(list(a)), _ranks(list(b))
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    if va == 0 or vb == 0:
        return math.nan
    return cov / math.sqrt(va * vb)


# -- the run cache -------------------------------------------------------------------------


def loss_key(loss: float) -> float:
    """A loss level as stored in keys (rounded to 9 decimals)."""
    return round(float(loss), 9)


def run_key(
    side: str,
    cc: str,
    loss: float,
    seed: int,
    nbytes: int,
    source_hash: str,
    topology: str = "1",
    profile: str = "ns3",
    qdisc: str = "none",
) -> str:
    """The cache key of one run.  A single-vehicle run's key has no topology, an
    ns3-profile run no profile and a run without queue disc no qdisc (so
    ``runs.jsonl`` files written before the station, ``--profile`` and ``--qdisc``
    existed still match)."""
    key: list[Any] = [side, cc, loss_key(loss), int(seed), int(nbytes), source_hash]
    if str(topology) != "1":
        key.append(str(topology))
    if profile != "ns3":
        key += ["profile", profile]
    if qdisc != "none":
        key += ["qdisc", qdisc]
    return json.dumps(key)


def _record_key(rec: Mapping[str, Any]) -> str:
    return run_key(
        rec["side"],
        rec["cc"],
        rec["loss"],
        rec["seed"],
        rec["bytes"],
        rec["source_hash"],
        str(rec.get("topology", "1")),
        str(rec.get("profile", "ns3")),
        str(rec.get("qdisc", "none")),
    )


def _read_records(path: Path) -> dict[str, dict[str, Any]]:
    """The records of a JSON-lines file (gzipped if its name ends in ``.gz``) by key;
    lines that do not parse are skipped, later lines win."""
    import gzip

    records: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return records
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
                key = _record_key(rec)
            except (ValueError, KeyError, TypeError):
                continue
            records[key] = rec
    return records


def stored_ns3_runs_path() -> Path:
    """The stored ns-3 runs of the single-vehicle grid, committed with the reference
    program: ``validation/ns3/results/v2g-runs.jsonl.gz`` (next to ``v2g.cc``, so
    ``$VTLAB_NS3_SOURCE`` moves it too)."""
    return _ns3.source_path().parent / "results" / "v2g-runs.jsonl.gz"


class RunCache:
    """``<out>/runs.jsonl``: one JSON object per finished run.  Lines that do not parse
    (e.g. cut short by an interruption) are ignored; later lines win.

    ``stored``: read-only JSON-lines files (e.g. :func:`stored_ns3_runs_path`) consulted
    for keys ``runs.jsonl`` lacks; a stored record is reused only under its exact key
    (the ns-3 source hash included), so a changed reference program reruns."""

    def __init__(self, path: Path, stored: Sequence[Path] = ()) -> None:
        self.path = Path(path)
        self.records: dict[str, dict[str, Any]] = _read_records(self.path)
        self.stored: dict[str, dict[str, Any]] = {}
        for extra in stored:
            self.stored.update(_read_records(Path(extra)))

    def __contains__(self, key: str) -> bool:
        return key in self.records or key in self.stored

    def get(self, key: str) -> dict[str, Any] | None:
        rec = self.records.get(key)
        return rec if rec is not None else self.stored.get(key)

    def is_stored(self, key: str) -> bool:
        """Whether ``key`` comes from a stored file rather than ``runs.jsonl``."""
        return key not in self.records and key in self.stored

    def add(self, record: Mapping[str, Any]) -> None:
        rec = dict(record)
        key = _record_key(rec)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        needs_newline = self.path.is_file() and self.path.stat().st_size > 0
        if needs_newline:
            with self.path.open("rb") as fh:
                fh.seek(-1, os.SEEK_END)
                needs_newline = fh.read(1) != b"\n"
        with self.path.open("a") as fh:
            fh.write(("\n" if needs_newline else "") + json.dumps(rec) + "\n")
            fh.flush()
        self.records[key] = rec


def store_runs(path: Path, records: Iterable[Mapping[str, Any]]) -> int:
    """Merge ``records`` into the gzipped JSON-lines file ``path`` (created if
    missing; a record replaces the one with its key) and rewrite it sorted by key,
    byte for byte reproducible (gzip mtime 0).  Returns the number of records in it."""
    import gzip

    path = Path(path)
    merged = _read_records(path)
    for rec in records:
        merged[_record_key(rec)] = dict(rec)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        for key in sorted(merged):
            gz.write((json.dumps(merged[key], sort_keys=True) + "\n").encode())
    os.replace(tmp, path)
    return len(merged)


# -- the grid ---------------------------------------------------------------------------


@dataclass
class Grid:
    """What ``vtlab validate`` compares."""

    ccs: list[str]
    losses: list[float]
    seeds: list[int]
    nbytes: int
    topologies: list[str] = field(default_factory=lambda: ["1"])
    skipped: dict[str, str] = field(default_factory=dict)  #: cc -> reason
    profile: str = "ns3"  #: vtlab's TCP profile (the ns-3 side is always ns-3)
    qdisc: str = "none"  #: a key of :data:`QDISCS` (the command line defaults to stock)
    only: str | None = None  #: ``ns3`` or ``vtlab``: run one side (:data:`ONLY`)


def vtlab_spec(
    cc: str,
    loss: float,
    nbytes: int,
    topology: str = "1",
    profile: str = "ns3",
    qdisc: str | None = None,
) -> dict[str, Any]:
    """The vtlab scenario of one grid cell (ns-3 profile by default): topology ``1`` is the
    single-vehicle V2G cable, ``N`` the charging station with N vehicles (the preset's
    defaults otherwise: 3 per segment, WAN 10 ms, flows 2 ms apart).  ``qdisc`` (a key of
    :data:`QDISCS`) sets the preset's ``qdisc`` (``fq_codel`` or ``none``); ``None``
    leaves the key out (the profile's default)."""
    spec: dict[str, Any] = {
        "preset": "v2g",
        "bytes": int(nbytes),
        "loss": {"mean_loss": float(loss)},
        "tcp": {"cc": cc, "profile": profile},
    }
    if qdisc is not None:
        spec["qdisc"] = QDISCS[qdisc][1]
    if str(topology) != "1":
        spec = {
            "preset": "station",
            "vehicles": int(topology),
            "vehicles_per_segment": PER_SEGMENT,
            **{k: v for k, v in spec.items() if k != "preset"},
        }
    return spec


def vtlab_source_hash() -> str:
    """Fingerprint of the compiled core, so cached vtlab runs are redone whenever
    the engine is rebuilt."""
    return core_build()


@dataclass
class Task:
    side: str
    cc: str
    loss: float
    seed: int
    nbytes: int
    source_hash: str
    spec_json: str = ""  #: vtlab side
    core_dir: str | None = None  #: vtlab side: directory of the compiled core
    binary: str = ""  #: ns-3 side
    args: list[str] = field(default_factory=list)  #: ns-3 side
    topology: str = "1"  #: vehicles
    profile: str = "ns3"  #: vtlab side: TCP profile
    qdisc: str = "none"  #: a key of QDISCS

    @property
    def key(self) -> str:
        return run_key(
            self.side,
            self.cc,
            self.loss,
            self.seed,
            self.nbytes,
            self.source_hash,
            self.topology,
            self.profile,
            self.qdisc,
        )

    @property
    def label(self) -> str:
        veh = "" if self.topology == "1" else f" {self.topology} vehicles"
        return f"{self.side} {self.cc} {self.loss * 100:g}%{veh} seed {self.seed}"


def _record(task: Task, row: Mapping[str, Any], wall: float) -> dict[str, Any]:
    return {
        "side": task.side,
        "cc": task.cc,
        "loss": loss_key(task.loss),
        "seed": task.seed,
        "bytes": task.nbytes,
        "source_hash": task.source_hash,
        "topology": task.topology,
        **({"profile": task.profile} if task.profile != "ns3" else {}),
        **row,
        "qdisc": task.qdisc,
        "wall_s": wall,
    }


#: Counters of a run record, per flow; for a station, the mean over vehicles.
#: (record key, vtlab column, ns-3 column)
_COUNTERS: tuple[tuple[str, str, str], ...] = (
    ("retransmissions", "retransmissions", "retransmissions"),
    ("rto_expiries", "rto_count", "rto_expiries"),
    ("rto_episodes", "slow_starts_after_loss", "rto_count"),
    ("fast_recoveries", "fast_recoveries", "fast_recoveries"),
    ("drops_link_error", "drops_link_error", "drops_link_error"),
    ("drops_queue", "drops_queue", "drops_queue"),
)


def _row(side: str, flows: Sequence[Mapping[str, Any]], topology: str) -> dict[str, Any]:
    """The record fields of one run from its flow rows (vtlab or ns-3 columns)."""
    col = 1 if side == "vtlab" else 2
    done_key = "completed" if side == "vtlab" else "complete"
    if topology == "1":
        if len(flows) != 1:
            raise RuntimeError(f"the {side} run printed {len(flows)} flow rows, expected 1")
        f = flows[0]
        row: dict[str, Any] = {
            "completed": bool(f[done_key]),
            "goodput_bps": f["goodput_bps"],
            "completion_s": f["completion_s"],
        }
        for key, *names in _COUNTERS:
            row[key] = f.get(names[col - 1])
        return row
    if len(flows) != int(topology):
        raise RuntimeError(f"the {side} run printed {len(flows)} flow rows, expected {topology}")
    summary = _ns3.vehicle_summary(flows)
    row = {
        "completed": all(bool(f[done_key]) for f in flows),
        **summary,
        "completion_s": max(float(f["completion_s"]) for f in flows),
        "vehicle_goodputs_bps": [f["goodput_bps"] for f in flows],
    }
    for key, *names in _COUNTERS:
        vals = [f.get(names[col - 1]) for f in flows]
        nums = [float(v) for v in vals if v is not None]
        row[key] = sum(nums) / len(nums) if nums else None
    return row


#: Child processes of running tasks, killed when the grid is interrupted.
_LIVE: set[subprocess.Popen[str]] = set()
_LIVE_LOCK = threading.Lock()
_STOP = threading.Event()


def _run_child(cmd: Sequence[str]) -> str:
    """Run one child process to completion and return its stdout."""
    if _STOP.is_set():
        raise RuntimeError("stopped")
    proc = subprocess.Popen(
        list(cmd),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    with _LIVE_LOCK:
        _LIVE.add(proc)
    try:
        out, err = proc.communicate()
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(proc)
    if proc.returncode != 0:
        tail = " | ".join(err.strip().splitlines()[-3:])
        raise RuntimeError(f"{Path(cmd[0]).name} exited with {proc.returncode}: {tail}")
    return out


def _kill_children() -> None:
    _STOP.set()
    with _LIVE_LOCK:
        procs = list(_LIVE)
    for proc in procs:
        if proc.poll() is None:
            proc.kill()


def execute(task: Task) -> dict[str, Any]:
    """Run one task in its own child process and return its cache record.

    vtlab runs in a lean Python child that imports only the compiled core
    (:data:`vtlab.ns3.VTLAB_CHILD`), ns-3 runs the compiled reference program, so
    ``--jobs`` runs go in parallel on both sides."""
    started = time.perf_counter()
    if task.side == "vtlab":
        out = _run_child(_ns3.vtlab_child_command(task.spec_json, task.seed, task.core_dir))
        d = json.loads(out.strip().splitlines()[-1])
        flows = d.get("flows") or [d["flow"]]
    else:
        flows = _ns3.parse_flow_lines(_run_child([task.binary, *task.args]))
        for f in flows:  # ns-3's flows start at 0.1 s + i x stagger
            f.setdefault("start_s", 0.1)
    row = _row(task.side, flows, task.topology)
    return _record(task, row, time.perf_counter() - started)


def execute_in_process(task: Task) -> dict[str, Any]:
    """Run one vtlab task in this process (on a Dask worker for ``--scheduler`` /
    ``--cluster``) and return its cache record, the same as :func:`execute` gives."""
    from vtlab import _core

    if task.side != "vtlab":
        raise ValueError("only vtlab runs go to a cluster; ns-3 runs stay on this machine")
    started = time.perf_counter()
    out = _core.run(task.spec_json, task.seed, False)
    cols = out["flows"]
    flows = [{k: v[i] for k, v in cols.items()} for i in range(len(cols["flow"]))]
    starts = {
        f["name"]: f["start_ns"] / 1e9 for f in json.loads(_core.expand(task.spec_json))["flows"]
    }
    for f in flows:
        f["start_s"] = starts.get(f["flow"], 0.0)
    row = _row(task.side, flows, task.topology)
    return _record(task, row, time.perf_counter() - started)


#: Signature of the function that runs a task (tests substitute a fake one).
Runner = Callable[[Task], dict[str, Any]]


def plan(grid: Grid, vtlab_hash: str, binary: _ns3.Ns3Binary) -> list[Task]:
    """Every task of the grid, ns-3 first (they are the long ones); with ``grid.only``
    one side's.  ns-3 runs are keyed by the program's :attr:`~vtlab.ns3.Ns3Binary.
    results_hash` (source and ns-3 version, not paths)."""
    from vtlab import _core

    ns_tasks: list[Task] = []
    vt_tasks: list[Task] = []
    core = _ns3.core_dir()
    ns3_hash = binary.results_hash
    available = {c["name"] for c in _core.congestion_controls()}
    for topology in grid.topologies:
        for cc in grid.ccs:
            for loss in grid.losses:
                # The ns-3 arguments come from the same scenario (ns3_args turns its
                # queue disc into v2g.cc's --qdisc).
                # An algorithm vtlab lacks (``--only ns3``) is resolved as newreno, then
                # renamed: the ns-3 arguments do not depend on the algorithm otherwise.
                known = cc in available
                ns3_spec = json.dumps(
                    vtlab_spec(
                        cc if known else "newreno",
                        loss,
                        grid.nbytes,
                        topology,
                        qdisc=grid.qdisc,
                    )
                )
                spec_json = json.dumps(
                    vtlab_spec(cc, loss, grid.nbytes, topology, grid.profile, grid.qdisc)
                )
                expanded = json.loads(_core.expand(ns3_spec))
                for flow in expanded.get("flows", []):
                    flow["tcp"]["cc"] = cc
                for seed in grid.seeds:
                    vt_tasks.append(
                        Task(
                            "vtlab",
                            cc,
                            loss,
                            seed,
                            grid.nbytes,
                            vtlab_hash,
                            spec_json=spec_json,
                            core_dir=core,
                            topology=topology,
                            profile=grid.profile,
                            qdisc=grid.qdisc,
                        )
                    )
                    ns_tasks.append(
                        Task(
                            "ns-3",
                            cc,
                            loss,
                            seed,
                            grid.nbytes,
                            ns3_hash,
                            binary=str(binary.path),
                            args=_ns3.ns3_args(expanded, seed),
                            topology=topology,
                            qdisc=grid.qdisc,
                        )
                    )
    # Within a side, high loss and many vehicles first: those runs are the slowest.
    ns_tasks.sort(key=lambda t: (-t.loss, -int(t.topology)))
    if grid.only == "ns3":
        return ns_tasks
    if grid.only == "vtlab":
        return vt_tasks
    return ns_tasks + vt_tasks


def run_grid(
    tasks: Sequence[Task],
    cache: RunCache,
    *,
    jobs: int = 1,
    runner: Runner = execute,
    progress: bool = True,
    console: Any = None,
    client: Any = None,
    cluster_runner: Runner = execute_in_process,
) -> tuple[int, list[str]]:
    """Run the tasks not yet in ``cache``, at most ``jobs`` at a time, and append each
    result to the cache as it finishes.  Returns (runs done, errors).

    Each run is a child process (:func:`execute`), driven by a thread pool; on an
    interruption the queued runs are cancelled and the running children killed.
    With ``client`` (a ``distributed.Client``) the vtlab runs go to its cluster
    (``cluster_runner`` on the workers) while the ns-3 runs stay here, and only this
    process writes the cache."""
    todo = [t for t in tasks if t.key not in cache]
    errors: list[str] = []
    if not todo:
        return 0, errors
    from rich.progress import Progress

    from vtlab.progress import columns

    done_before = len(tasks) - len(todo)
    bar = Progress(
        *columns(),
        console=console,
        disable=not progress,
        transient=False,
    )
    done = 0
    with bar:
        pid = bar.add_task("runs", total=len(tasks), completed=done_before)

        def finished(task: Task, rec: dict[str, Any] | None, exc: BaseException | None) -> None:
            nonlocal done
            if exc is not None:
                errors.append(f"{task.label}: {exc}")
            else:
                assert rec is not None
                cache.add(rec)
                done += 1
            bar.update(pid, advance=1, description=task.label)

        _STOP.clear()
        if client is not None:
            _run_split(todo, jobs, runner, cluster_runner, client, finished)
        elif jobs <= 1:
            for task in todo:
                try:
                    rec = runner(task)
                except (KeyboardInterrupt, SystemExit):
                    raise
                except Exception as exc:  # noqa: BLE001 - reported per run
                    finished(task, None, exc)
                else:
                    finished(task, rec, None)
        else:
            # Threads only wait: every run is its own child process (see execute).
            from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

            pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="vtlab-validate")
            try:
                futures = {pool.submit(runner, t): t for t in todo}
                pending = set(futures)
                while pending:
                    finished_now, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                    for fut in finished_now:
                        exc = fut.exception()
                        finished(futures[fut], None if exc else fut.result(), exc)
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                _kill_children()
                pool.shutdown(wait=True)
                raise
            pool.shutdown(wait=True)
    return done, errors


def _run_split(
    todo: Sequence[Task],
    jobs: int,
    runner: Runner,
    cluster_runner: Runner,
    client: Any,
    finished: Callable[[Task, dict[str, Any] | None, BaseException | None], None],
) -> None:
    """ns-3 runs in a local thread pool, vtlab runs on the Dask cluster, at once."""
    from concurrent.futures import Future, ThreadPoolExecutor

    from vtlab.cluster import run_calls

    lock = threading.Lock()

    def locked(task: Task, rec: dict[str, Any] | None, exc: BaseException | None) -> None:
        with lock:
            finished(task, rec, exc)

    local = [t for t in todo if t.side != "vtlab"]
    remote = [t for t in todo if t.side == "vtlab"]
    pool = ThreadPoolExecutor(max_workers=max(jobs, 1), thread_name_prefix="vtlab-validate")
    try:
        for task in local:

            def done(fut: Future[dict[str, Any]], task: Task = task) -> None:
                if not fut.cancelled():
                    exc = fut.exception()
                    locked(task, None if exc else fut.result(), exc)

            pool.submit(runner, task).add_done_callback(done)
        run_calls(
            client,
            cluster_runner,
            remote,
            lambda t, rec: locked(t, rec, None),
            failed=lambda t, exc: locked(t, None, exc),
        )
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        _kill_children()
        pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=True)


# -- aggregation ---------------------------------------------------------------------------


def agreement_table(
    records: Iterable[Mapping[str, Any]],
    ccs: Sequence[str],
    losses: Sequence[float],
    topologies: Sequence[str] | str = ("1",),
    tolerance: float = AGREE_TOLERANCE,
) -> list[dict[str, Any]]:
    """One row per (topology, algorithm, loss) from run records (``side``, ``cc``,
    ``loss``, ``topology`` (default ``1``), ``goodput_bps``, ``rto_expiries``,
    ``fast_recoveries``, ...).  For a station, ``goodput_bps`` and the counters are a
    run's means per vehicle; ``aggregate_goodput_bps`` (the whole station) and
    ``jain`` are averaged over runs too (a single vehicle's aggregate is its goodput)."""
    topos = [topologies] if isinstance(topologies, str) else list(topologies)
    by: dict[tuple[str, str, float, str], list[Mapping[str, Any]]] = {}
    for rec in records:
        key = (rec["side"], rec["cc"], loss_key(rec["loss"]), str(rec.get("topology", "1")))
        by.setdefault(key, []).append(rec)
    rows = []
    topos = [str(t) for t in topos]
    for topology in topos:
        for cc in ccs:
            for loss in losses:
                row: dict[str, Any] = {
                    "cc": cc,
                    "ns3_type": _ns3.CC_TO_NS3.get(cc, ""),
                    "loss": loss_key(loss),
                    "topology": str(topology),
                }
                for side, prefix in (("vtlab", "vtlab"), ("ns-3", "ns3")):
                    recs = by.get((side, cc, loss_key(loss), str(topology)), [])
                    mean, ci, n = mean_ci(r["goodput_bps"] for r in recs)
                    row[f"{prefix}_n"] = n
                    row[f"{prefix}_completed"] = sum(1 for r in recs if r.get("completed"))
                    row[f"{prefix}_goodput_mbps"] = mean / 1e6
                    row[f"{prefix}_goodput_ci95_mbps"] = ci / 1e6
                    agg, agg_ci, _ = mean_ci(
                        r.get("aggregate_goodput_bps", r["goodput_bps"]) for r in recs
                    )
                    row[f"{prefix}_aggregate_mbps"] = agg / 1e6
                    row[f"{prefix}_aggregate_ci95_mbps"] = agg_ci / 1e6
                    row[f"{prefix}_jain"] = mean_ci(r.get("jain", 1.0) for r in recs)[0]
                    for metric in ("rto_expiries", "fast_recoveries", "retransmissions"):
                        vals = [r[metric] for r in recs if r.get(metric) is not None]
                        row[f"{prefix}_{metric}"] = sum(vals) / len(vals) if vals else math.nan
                rci = ratio_ci(
                    (r["goodput_bps"] for r in by.get(("vtlab", cc, loss_key(loss), topology), [])),
                    (r["goodput_bps"] for r in by.get(("ns-3", cc, loss_key(loss), topology), [])),
                )
                row["ratio"] = rci.ratio
                row["ratio_ci_low"] = rci.low
                row["ratio_ci_high"] = rci.high
                va, na = row["vtlab_aggregate_mbps"], row["ns3_aggregate_mbps"]
                row["aggregate_ratio"] = va / na if na and not math.isnan(na) else math.nan
                row["verdict"] = verdict(rci.ratio, rci.contains_one, tolerance)
                rows.append(row)
    return rows


def _separated(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str) -> bool:
    """Whether two cells' 95 % CIs on one side are disjoint (both need n >= 2)."""
    ha, hb = a[f"{prefix}_goodput_ci95_mbps"], b[f"{prefix}_goodput_ci95_mbps"]
    if math.isnan(ha) or math.isnan(hb):
        return False
    return not ci_overlap(a[f"{prefix}_goodput_mbps"], ha, b[f"{prefix}_goodput_mbps"], hb)


def rankings(table: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per loss level (and topology): algorithms ordered by mean goodput on each side
    (best first), Spearman's ρ, exact order equality, and the significant inversions:
    pairs that both sides separate (non-overlapping 95 % CIs) but in opposite order."""
    out = []
    levels: list[tuple[str, float]] = []
    for row in table:
        level = (str(row.get("topology", "1")), row["loss"])
        if level not in levels:
            levels.append(level)
    for topology, loss in levels:
        rows = [
            r
            for r in table
            if r["loss"] == loss
            and str(r.get("topology", "1")) == topology
            and not math.isnan(r["vtlab_goodput_mbps"])
            and not math.isnan(r["ns3_goodput_mbps"])
        ]
        vt = [r["vtlab_goodput_mbps"] for r in rows]
        ns = [r["ns3_goodput_mbps"] for r in rows]
        names = [r["cc"] for r in rows]
        order_vt = [names[i] for i in sorted(range(len(rows)), key=lambda i: -vt[i])]
        order_ns = [names[i] for i in sorted(range(len(rows)), key=lambda i: -ns[i])]
        inversions = []
        for i in range(len(rows)):
            for j in range(i + 1, len(rows)):
                a, b = rows[i], rows[j]
                vt_sep = _separated(a, b, "vtlab")
                ns_sep = _separated(a, b, "ns3")
                vt_sign = a["vtlab_goodput_mbps"] > b["vtlab_goodput_mbps"]
                ns_sign = a["ns3_goodput_mbps"] > b["ns3_goodput_mbps"]
                if vt_sep and ns_sep and vt_sign != ns_sign:
                    inversions.append(f"{a['cc']}/{b['cc']}")
        out.append(
            {
                "loss": loss,
                "topology": topology,
                "vtlab_order": order_vt,
                "ns3_order": order_ns,
                "spearman": spearman(vt, ns),
                "same_order": order_vt == order_ns,
                "significant_inversions": inversions,
            }
        )
    return out


# -- the report ----------------------------------------------------------------------------


def _pct(loss: float) -> str:
    return f"{loss * 100:g} %"


def _vehicles(topology: str) -> str:
    return "1 vehicle" if str(topology) == "1" else f"{topology} vehicles"


def _cell(row: Mapping[str, Any]) -> str:
    topology = str(row.get("topology", "1"))
    where = "" if topology == "1" else f", {topology} vehicles"
    return f"{row['cc']}, {_pct(row['loss'])}{where}"


def _f(x: float, digits: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _mci(mean: float, ci: float, digits: int = 3) -> str:
    if math.isnan(mean):
        return "–"
    return f"{mean:.{digits}f} ± {_f(ci, digits)}"


def _stored_text(meta: Mapping[str, Any]) -> str:
    n = int(meta.get("runs_stored", 0) or 0)
    return f", {n} of them from the stored ns-3 runs" if n else ""


def _qdisc_text(qdisc: str) -> str:
    """The queueing sentence of the report header for a ``--qdisc`` setting."""
    if qdisc == "none":
        return "drop-tail 100 packets on every device, no qdisc (`--qdisc none`)"
    return (
        "on every device ns-3's stock traffic control: an FqCoDel root queue disc at "
        "ns-3's defaults feeding a "
        "100-packet drop-tail device queue with flow control; vtlab `qdisc = "
        '"fq_codel"` (`--qdisc stock`)'
    )


def _report_header(table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> list[str]:
    """Title, provenance, grid and topologies of the report."""
    seeds = list(meta.get("seeds", []))
    seed_text = f"{seeds[0]}..{seeds[-1]}" if len(seeds) > 1 else ", ".join(map(str, seeds))
    lines = [
        "# vtlab versus ns-3: cross-validation report",
        "",
        f"* Command: `{meta.get('command', '')}`",
    ]
    if meta.get("explicit_command") and meta.get("explicit_command") != meta.get("command"):
        lines.append(f"* Same grid, spelled out: `{meta['explicit_command']}`")
    lines += [
        f"* vtlab {meta.get('vtlab_version', '?')} (core sha256 {meta.get('vtlab_hash', '?')}),"
        f" profile {meta.get('profile', 'ns3')}",
        f"* ns-3 {meta.get('ns3_version', '?')} (`validation/ns3/v2g.cc`, build "
        f"{meta.get('ns3_hash', '?')})",
        f"* Wall time {float(meta.get('wall_s', math.nan)):.1f} s "
        f"({meta.get('runs_done', 0)} runs now, {meta.get('runs_cached', 0)} from "
        f"`runs.jsonl`{_stored_text(meta)}; {meta.get('jobs', 1)} jobs) · "
        f"{meta.get('date', '')}",
    ]
    run_time = meta.get("run_time_s")
    if run_time:
        lines.append(
            "* Run time summed over the grid's runs (each run is its own process): "
            + ", ".join(f"{side} {float(t):,.1f} s" for side, t in run_time.items())
        )
    topologies: list[str] = []
    for r in table:
        if str(r.get("topology", "1")) not in topologies:
            topologies.append(str(r.get("topology", "1")))
    topo_text = ", ".join(_vehicles(t) for t in topologies)
    stations = [t for t in topologies if t != "1"]
    lines += [
        f"* Grid: {len({r['cc'] for r in table})} algorithms × "
        f"{len({r['loss'] for r in table})} mean losses × seeds {seed_text} "
        f"(ns-3 `--run=k`) × {int(meta.get('bytes', 0)):,} bytes, topology {topo_text}",
        "",
        "TCP at ns-3's defaults on both sides: SACK + PRR, timestamps (1512 B IP packets, "
        "fragmented at MTU 1500), delayed ACK 2 / 200 ms, minimum RTO 1 s, initial window "
        f"10, MSS 1460, 128 KiB buffers; {_qdisc_text(str(meta.get('qdisc', 'none')))}; "
        "burst loss (bursts of 1..4 packets). Goodput is in Mbit/s, mean ± 95 % CI "
        "(Student t) over seeds; RTO counts every expiry (back-offs included), FR counts "
        "fast-recovery entries.",
        "",
        "## Topologies",
        "",
    ]
    if "1" in topologies:
        lines.append(
            "* 1 vehicle: SA —(WAN 500 Mbit/s, 0.9 ms)— SECC —(PLC 10 Mbit/s, 0.9 ms)— "
            "EVCC, one bulk transfer SA → EVCC, loss on the PLC data direction."
        )
    for t in stations:
        segments = math.ceil(int(t) / PER_SEGMENT)
        lines.append(
            f"* {t} vehicles (charging station, {PER_SEGMENT} per PLC segment, {segments} "
            "segments): SA —(WAN 500 Mbit/s, 10 ms)— switch —(PLC segment j: 10 Mbit/s, "
            "0.9 ms)— seg j —(access 10 Gbit/s, 0 ms)— ev i; one bulk transfer SA → ev i "
            "each, flow i starting at i × 2 ms; each vehicle's own loss stream on its "
            "access hop toward it. Goodput, RTO and FR are **per vehicle** (a run's mean "
            "over its vehicles); the aggregate (all bytes / (last byte − first start)) is "
            "in its own table below."
        )
    lines.append("")
    skipped = dict(meta.get("skipped", {}))
    if skipped:
        lines += ["## Skipped algorithms", ""]
        lines += [f"* {cc}: {why}" for cc, why in skipped.items()]
        lines.append("")
    return lines


def _ratio_ci_text(row: Mapping[str, Any]) -> str:
    lo, hi = row.get("ratio_ci_low", math.nan), row.get("ratio_ci_high", math.nan)
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return "–"
    if math.isinf(lo) or math.isinf(hi):
        return "unbounded"
    return f"{lo:.3f}–{hi:.3f}"


def _report_agreement(table: Sequence[Mapping[str, Any]]) -> list[str]:
    """The agreement section: verdict rule and counts, the non-agreeing cells, worst
    ratios, the table."""
    counts = verdict_counts(table)
    ratios = [(r["ratio"], r) for r in table if not math.isnan(r["ratio"])]
    missing = f"; {counts['missing']} missing" if counts["missing"] else ""
    lines: list[str] = [
        "## Agreement",
        "",
        f"**{counts['agree']} of {len(table)} cells agree; {counts['consistent']} "
        f"consistent; {counts['differs']} differ{missing}.**",
        "",
        f"Verdict per cell from the ratio of mean goodputs vtlab/ns-3 and its 95 % "
        f"confidence interval (Fieller's theorem for two independent means, Welch–"
        f"Satterthwaite degrees of freedom): **agree** when the ratio is within "
        f"±{AGREE_TOLERANCE:.0%}; **consistent** when outside ±{AGREE_TOLERANCE:.0%} but "
        f"within ±{CONSISTENT_TOLERANCE:.0%} and the interval contains 1; **differs** "
        "otherwise. Only *agree* counts as agreement.",
    ]
    others = [r for r in table if r["verdict"] != "agree"]
    if others:
        lines += ["", "Cells that do not agree:", ""]
        for r in others:
            lines.append(
                f"* {_cell(r)}: {r['verdict']}, ratio {_f(r['ratio'])} "
                f"(95 % CI {_ratio_ci_text(r)}; vtlab "
                f"{_mci(r['vtlab_goodput_mbps'], r['vtlab_goodput_ci95_mbps'])}, ns-3 "
                f"{_mci(r['ns3_goodput_mbps'], r['ns3_goodput_ci95_mbps'])} Mbit/s)"
            )
    if ratios:
        lo = min(ratios, key=lambda x: x[0])
        hi = max(ratios, key=lambda x: x[0])
        lines += [
            "",
            f"Worst ratios: lowest {lo[0]:.3f} ({_cell(lo[1])}), "
            f"highest {hi[0]:.3f} ({_cell(hi[1])}).",
        ]
    lines += [
        "",
        "| algorithm | loss | vehicles | vtlab goodput | ns-3 goodput | ratio | ratio 95 % CI "
        "| RTO vtlab | RTO ns-3 | FR vtlab | FR ns-3 | retx vtlab | retx ns-3 | verdict |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in table:
        v = r["verdict"]
        lines.append(
            f"| {r['cc']} | {_pct(r['loss'])} | {r['topology']} "
            f"| {_mci(r['vtlab_goodput_mbps'], r['vtlab_goodput_ci95_mbps'])} "
            f"| {_mci(r['ns3_goodput_mbps'], r['ns3_goodput_ci95_mbps'])} "
            f"| {_f(r['ratio'])} | {_ratio_ci_text(r)} | {_f(r['vtlab_rto_expiries'], 1)} "
            f"| {_f(r['ns3_rto_expiries'], 1)} | {_f(r['vtlab_fast_recoveries'], 1)} "
            f"| {_f(r['ns3_fast_recoveries'], 1)} | {_f(r['vtlab_retransmissions'], 0)} "
            f"| {_f(r['ns3_retransmissions'], 0)} | {v if v == 'agree' else f'**{v}**'} |"
        )
    return lines


def _report_station(table: Sequence[Mapping[str, Any]]) -> list[str]:
    """The charging station's aggregate goodput (empty without station cells)."""
    lines: list[str] = []
    station_rows = [r for r in table if str(r.get("topology", "1")) != "1"]
    if station_rows:
        lines += [
            "",
            "## Charging station: aggregate goodput",
            "",
            "All bytes received × 8 / (last byte at any vehicle − start of the first flow), "
            "mean ± 95 % CI over seeds; Jain's fairness index of the per-vehicle goodputs, "
            "mean over seeds.",
            "",
            "| algorithm | loss | vehicles | vtlab aggregate | ns-3 aggregate | ratio "
            "| Jain vtlab | Jain ns-3 |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in station_rows:
            lines.append(
                f"| {r['cc']} | {_pct(r['loss'])} | {r['topology']} "
                f"| {_mci(r['vtlab_aggregate_mbps'], r['vtlab_aggregate_ci95_mbps'])} "
                f"| {_mci(r['ns3_aggregate_mbps'], r['ns3_aggregate_ci95_mbps'])} "
                f"| {_f(r['aggregate_ratio'])} | {_f(r['vtlab_jain'])} | {_f(r['ns3_jain'])} |"
            )
    return lines


def _report_rankings(ranks: Sequence[Mapping[str, Any]]) -> list[str]:
    """Rankings by mean goodput on both sides."""
    lines: list[str] = []
    lines += [
        "",
        "## Rankings by mean goodput (best first)",
        "",
        "Orders at equal goodput (e.g. loss-free, where every algorithm fills the "
        "link) are noise; *significant inversions* are pairs that both sides separate "
        "(non-overlapping 95 % CIs) in opposite order.",
        "",
        "| loss | vehicles | vtlab | ns-3 | Spearman ρ | same order | significant inversions |",
        "|---:|---:|---|---|---:|---|---|",
    ]
    for rk in ranks:
        inv = ", ".join(rk["significant_inversions"]) or "none"
        lines.append(
            f"| {_pct(rk['loss'])} | {rk.get('topology', '1')} | {' > '.join(rk['vtlab_order'])} "
            f"| {' > '.join(rk['ns3_order'])} | {_f(rk['spearman'], 2)} "
            f"| {'yes' if rk['same_order'] else 'no'} | {inv} |"
        )
    return lines


def write_report(
    out: Path,
    table: Sequence[Mapping[str, Any]],
    ranks: Sequence[Mapping[str, Any]],
    meta: Mapping[str, Any],
) -> dict[str, Path]:
    """Write ``report.md``, ``agreement.csv`` and ``agreement.parquet`` into ``out``.

    ``meta`` keys used: ``command``, ``explicit_command``, ``vtlab_version``,
    ``vtlab_hash``, ``ns3_version``, ``ns3_hash``, ``wall_s``, ``runs_done``,
    ``runs_cached``, ``run_time_s`` (side -> summed run wall time), ``seeds``,
    ``bytes``, ``skipped`` (cc -> reason), ``errors``, ``jobs``, ``date``.
    """
    import pandas as pd

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame(list(table))
    paths = {
        "report": out / "report.md",
        "csv": out / "agreement.csv",
        "parquet": out / "agreement.parquet",
    }
    df.to_csv(paths["csv"], index=False)
    df.to_parquet(paths["parquet"], index=False)

    lines = [
        *_report_header(table, meta),
        *_report_agreement(table),
        *_report_station(table),
        *_report_rankings(ranks),
    ]
    errors = list(meta.get("errors", []))
    if errors:
        lines += ["", "## Failed runs", ""]
        lines += [f"* {e}" for e in errors]
    lines += [
        "",
        "Files: `agreement.csv` / `agreement.parquet` (this table), `runs.jsonl` (every "
        "run, the cache that lets an interrupted validation resume).",
        "",
    ]
    paths["report"].write_text("\n".join(lines))
    return paths


# -- the command ---------------------------------------------------------------------------


def parse_loss(text: str) -> float:
    """``5%`` -> 0.05, ``0.25 %`` -> 0.0025, ``0.01`` -> 0.01."""
    s = str(text).strip()
    try:
        value = float(s[:-1].strip()) / 100 if s.endswith("%") else float(s)
    except ValueError:
        raise ValidateError(f"--loss: not a loss rate: '{text}' (e.g. 5% or 0.05)") from None
    if not 0 <= value < 1:
        raise ValidateError(f"--loss: {text} is outside [0, 1)")
    return value


def parse_bytes(text: str | int) -> int:
    """A transfer size as vtlab understands it (``100MB``, ``2MB``, ``128KiB``)."""
    from vtlab import _core
    from vtlab._core import ScenarioError

    try:
        value: Any = int(text)
    except ValueError:
        value = str(text)
    try:
        expanded = json.loads(_core.expand(json.dumps({"preset": "v2g", "bytes": value})))
    except ScenarioError as exc:
        raise ValidateError(f"--bytes: {exc}") from None
    return int(expanded["flows"][0]["bytes"])


def parse_topology(text: str | int) -> str:
    """A ``--topology`` value: the number of vehicles, 1 (the V2G cable) or 2..1000
    (the charging station), as a canonical string (``"021"`` -> ``"21"``)."""
    try:
        n = int(str(text).strip())
    except ValueError:
        raise ValidateError(
            f"--topology: '{text}' is not a number of vehicles (1 = the V2G cable, "
            f"2..{MAX_VEHICLES} = the charging station, e.g. 21)"
        ) from None
    if not 1 <= n <= MAX_VEHICLES:
        raise ValidateError(f"--topology: {n} vehicles is outside [1, {MAX_VEHICLES}]")
    return str(n)


def make_grid(
    ccs: Sequence[str] | None,
    losses: Sequence[str] | None,
    runs: int | None,
    nbytes: str | None,
    topologies: Sequence[str] | None,
    quick: bool,
    profile: str = "ns3",
    qdisc: str | None = None,
    only: str | None = None,
) -> Grid:
    """The grid a command line asks for; raises :class:`ValidateError`.

    The default algorithms are :data:`DEFAULT_CCS` plus those of :data:`OPTIONAL_CCS`
    vtlab's registry has; algorithms vtlab lacks are skipped (noted in the report),
    except with ``only="ns3"``, which needs ns-3 alone."""
    from vtlab import _core

    topo_list = list(dict.fromkeys(parse_topology(t) for t in topologies or ["1"]))
    base = QUICK if quick else {}
    available = {c["name"] for c in _core.congestion_controls()}
    if ccs:
        cc_list = list(ccs)
    elif "ccs" in base:
        cc_list = list(base["ccs"])
    else:
        cc_list = [*DEFAULT_CCS, *(c for c in OPTIONAL_CCS if c in available)]
    unknown = [c for c in cc_list if c not in _ns3.CC_TO_NS3]
    if unknown:
        raise ValidateError(
            f"--cc: no ns-3 counterpart for {', '.join(unknown)} "
            f"(allowed: {', '.join(_ns3.CC_TO_NS3)})"
        )
    if only is not None and only not in ONLY:
        raise ValidateError(f"--only: '{only}' is not one of {', '.join(ONLY)}")
    qdisc_name = qdisc if qdisc is not None else str(base.get("qdisc", DEFAULT_QDISC))
    if qdisc_name not in QDISCS:
        raise ValidateError(f"--qdisc: '{qdisc_name}' is not one of {', '.join(QDISCS)}")
    skipped = (
        {}
        if only == "ns3"
        else {
            c: "not in vtlab's registry yet (`vtlab cc list`)"
            for c in cc_list
            if c not in available
        }
    )
    cc_list = list(dict.fromkeys(c for c in cc_list if c not in skipped))
    if not cc_list:
        raise ValidateError("--cc: none of the requested algorithms is available in vtlab yet")
    loss_list = (
        [parse_loss(x) for x in losses] if losses else list(base.get("losses", DEFAULT_LOSSES))
    )
    loss_list = list(dict.fromkeys(loss_key(x) for x in loss_list))
    n_runs = runs if runs is not None else int(base.get("runs", DEFAULT_RUNS))
    if n_runs < 1:
        raise ValidateError(f"--runs: must be at least 1, got {n_runs}")
    size = parse_bytes(nbytes) if nbytes is not None else int(base.get("bytes", DEFAULT_BYTES))
    if profile not in PROFILES:
        raise ValidateError(f"--profile: '{profile}' is not one of {', '.join(PROFILES)}")
    seeds = list(range(1, n_runs + 1))
    return Grid(cc_list, loss_list, seeds, size, topo_list, skipped, profile, qdisc_name, only)


def explicit_command(grid: Grid, out: Path, jobs: int) -> str:
    parts = ["vtlab", "validate"]
    for cc in grid.ccs:
        parts += ["--cc", cc]
    for loss in grid.losses:
        parts += ["--loss", f"{loss * 100:g}%"]
    if grid.topologies != ["1"]:
        for topology in grid.topologies:
            parts += ["--topology", topology]
    if grid.profile != "ns3":
        parts += ["--profile", grid.profile]
    if grid.qdisc != DEFAULT_QDISC:
        parts += ["--qdisc", grid.qdisc]
    if grid.only is not None:
        parts += ["--only", grid.only]
    parts += ["--runs", str(len(grid.seeds)), "--bytes", str(grid.nbytes), "--out", str(out)]
    return shlex.join(parts)


def typed_command() -> str:
    """The command line as typed, when this process is the ``vtlab`` program."""
    prog = Path(sys.argv[0]).name
    if prog in ("vtlab", "__main__.py", "cli.py"):
        return shlex.join(["vtlab", *sys.argv[1:]])
    return ""


@dataclass
class ValidateResult:
    grid: Grid
    table: list[dict[str, Any]]
    ranks: list[dict[str, Any]]
    paths: dict[str, Path]
    runs_done: int
    runs_cached: int
    errors: list[str]
    wall_s: float


def _connect(
    stack: contextlib.ExitStack,
    scheduler: Any,
    cluster: str | None,
    connect_timeout: float | None,
    log: Callable[[str], None] | None,
) -> Any:
    """A Dask client for the vtlab runs, closed with ``stack``."""
    from vtlab import cluster as dask_cluster

    timeout = connect_timeout or dask_cluster.DEFAULT_CONNECT_TIMEOUT
    client = stack.enter_context(dask_cluster.connect(scheduler, cluster, connect_timeout=timeout))
    if log is not None:
        log(
            dask_cluster.describe_client(
                client, scheduler if isinstance(scheduler, str) else None, cluster
            )
        )
    return client


def validate(
    grid: Grid,
    out: Path,
    *,
    jobs: int = 1,
    progress: bool = True,
    runner: Runner = execute,
    binary: _ns3.Ns3Binary | None = None,
    command: str = "",
    log: Callable[[str], None] | None = None,
    console: Any = None,
    scheduler: Any = None,
    cluster: str | None = None,
    connect_timeout: float | None = None,
    stored: Sequence[Path] | None = None,
    store_ns3: Path | None = None,
) -> ValidateResult:
    """Run (or resume) the grid and write the report.  ``binary`` defaults to
    :func:`vtlab.ns3.ensure_binary` (compiled on demand).  Raises
    :class:`vtlab.ns3.Ns3Error` when ns-3 is missing or does not build.

    ``scheduler`` (a Dask scheduler address or a ``distributed.Client``) or
    ``cluster="local:N"`` send the vtlab runs to a Dask cluster (the ``cluster``
    extra); the ns-3 runs stay on this machine, ``jobs`` at a time.

    ``stored``: files of stored runs reused for keys ``runs.jsonl`` lacks (default
    :func:`stored_ns3_runs_path`); ``store_ns3``: afterwards, merge this grid's ns-3
    runs into that file (:func:`store_runs`).  With ``grid.only`` no report is
    written (``paths`` is empty)."""
    import datetime as dt

    from vtlab import _core

    started = time.perf_counter()
    if binary is None:
        binary = _ns3.ensure_binary(log=log)
    vt_hash = vtlab_source_hash()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cache = RunCache(out / "runs.jsonl", [stored_ns3_runs_path()] if stored is None else stored)
    tasks = plan(grid, vt_hash, binary)
    cached = sum(1 for t in tasks if t.key in cache)
    from_store = sum(1 for t in tasks if cache.is_stored(t.key))
    with contextlib.ExitStack() as stack:
        client = None
        if scheduler is not None or cluster is not None:
            client = _connect(stack, scheduler, cluster, connect_timeout, log)
        done, errors = run_grid(
            tasks,
            cache,
            jobs=jobs,
            runner=runner,
            progress=progress,
            console=console,
            client=client,
        )
    records = [cache.get(t.key) for t in tasks]
    if store_ns3 is not None:
        n_stored = store_runs(store_ns3, [r for r in records if r and r["side"] == "ns-3"])
        if log is not None:
            log(f"stored the grid's ns-3 runs in {store_ns3} ({n_stored} runs in it)")
    if grid.only is not None:
        return ValidateResult(grid, [], [], {}, done, cached, errors, time.perf_counter() - started)
    table = agreement_table(
        [r for r in records if r is not None], grid.ccs, grid.losses, grid.topologies
    )
    ranks = rankings(table)
    wall = time.perf_counter() - started
    run_time = {
        side: sum(float(r.get("wall_s") or 0.0) for r in records if r and r["side"] == side)
        for side in SIDES
    }
    meta = {
        "run_time_s": run_time,
        "command": command or explicit_command(grid, out, jobs),
        "explicit_command": explicit_command(grid, out, jobs),
        "vtlab_version": _core.version(),
        "vtlab_hash": vt_hash,
        "ns3_version": binary.ns3_version,
        "ns3_hash": binary.short_hash,
        "wall_s": wall,
        "runs_done": done,
        "runs_cached": cached,
        "runs_stored": from_store,
        "qdisc": grid.qdisc,
        "seeds": grid.seeds,
        "bytes": grid.nbytes,
        "skipped": grid.skipped,
        "profile": grid.profile,
        "errors": errors,
        "jobs": jobs,
        "date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
    }
    paths = write_report(out, table, ranks, meta)
    return ValidateResult(grid, table, ranks, paths, done, cached, errors, wall)


# -- the command's options -----------------------------------------------------------

CcOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--cc",
        metavar="NAME",
        help="Algorithm (vtlab name); repeatable. Default: every algorithm both "
        "implement (" + ", ".join(DEFAULT_CCS) + ").",
        show_default=False,
    ),
]

LossOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--loss",
        metavar="LOSS",
        help="Mean loss of the PLC link, e.g. 5% or 0.05; repeatable. Default: 0, 0.25%, 1%, 5%.",
        show_default=False,
    ),
]

RunsOpt = Annotated[
    int | None,
    typer.Option(
        "--runs", "-n", help="Seeds 1..RUNS (ns-3 --run=k). Default 10.", show_default=False
    ),
]

BytesOpt = Annotated[
    str | None,
    typer.Option("--bytes", help="Transfer size, e.g. 100MB (default).", show_default=False),
]

TopologyOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--topology",
        metavar="VEHICLES",
        help="Vehicles: 1 (default, the V2G cable) or N >= 2 (the charging "
        "station, 3 per PLC segment, e.g. 21); repeatable.",
        show_default=False,
    ),
]

OutOpt = Annotated[
    Path,
    typer.Option("--out", "-o", help="Directory for report.md, agreement.csv and runs.jsonl."),
]

JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        help="Parallel runs on this machine (with --scheduler or --cluster: the "
        "ns-3 runs); default: all cores.",
        show_default=False,
    ),
]

ProfileOpt = Annotated[
    Literal["ns3", "linux"],
    typer.Option(
        "--profile",
        help="vtlab's TCP implementation profile: ns3 (default) or linux "
        "(how far the Linux profile is from ns-3).",
    ),
]

QuickOpt = Annotated[
    bool,
    typer.Option(
        "--quick",
        help="CI subset: newreno, illinois, cubic at 0 and 5 %, 5 MB, 2 seeds "
        "(explicit options override).",
    ),
]

QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or status lines.")]

QdiscOpt = Annotated[
    Literal["stock", "none"],
    typer.Option(
        "--qdisc",
        help="Queueing on every device: stock (default: ns-3's FqCoDel root queue disc "
        "over the 100-packet device queue with flow control; vtlab qdisc fq_codel) or "
        "none (the 100-packet drop-tail device queue alone).",
    ),
]

OnlyOpt = Annotated[
    Literal["ns3", "vtlab"] | None,
    typer.Option(
        "--only",
        help="Run one side of the grid into OUT/runs.jsonl and write no report (e.g. "
        "the ns-3 reference campaign: --only ns3 needs no vtlab algorithm).",
        show_default=False,
    ),
]

StoreNs3Opt = Annotated[
    bool,
    typer.Option(
        "--store-ns3",
        help="Afterwards merge the grid's ns-3 runs into the stored runs "
        "validation/ns3/results/v2g-runs.jsonl.gz (committed; reused by every "
        "validation whose ns-3 program is the same).",
    ),
]

ReplayToleranceOpt = Annotated[
    float,
    typer.Option(
        "--replay-tolerance",
        metavar="SECONDS",
        help="--replay: two key events agree when their times differ by at most this "
        "(default 0.001; a large value compares the sequence of decisions only).",
    ),
]

ReplayOpt = Annotated[
    str | None,
    typer.Option(
        "--replay",
        metavar="CELL",
        help="Paired replay of one run instead of the grid: ALGORITHM:LOSS:SEED (e.g. "
        "westwood-plus:5%:3; --qdisc applies, one vehicle): ns-3's loss decisions fed "
        "to vtlab, then both congestion-control timelines up to their first divergence.",
        show_default=False,
    ),
]

#: ``--rerun-ns3`` of the validators that compare with stored ns-3 runs.
RerunNs3Opt = Annotated[
    bool,
    typer.Option(
        "--rerun-ns3", help="Run ns-3 (the ns3 wheel and g++) instead of using the stored runs."
    ),
]
#: ``--quiet`` of the validators that print progress lines (no progress bar).
QuietLinesOpt = Annotated[bool, typer.Option("--quiet", help="No progress lines.")]


def _replay_command(
    cell: str,
    qdisc: str,
    topology: Sequence[str] | None,
    nbytes: str | None,
    profile: str,
    tolerance_s: float,
    quiet: bool,
) -> None:
    """``vtlab validate --replay CELL``: print the paired replay of one cell."""
    from vtlab import validate_replay as vr

    with user_errors():
        cc, loss, seed = vr.parse_cell(cell)
        if [parse_topology(t) for t in topology or ["1"]] != ["1"]:
            raise ValidateError("--replay: one vehicle only (--topology 1)")
        size = parse_bytes(nbytes) if nbytes is not None else DEFAULT_BYTES
        if tolerance_s < 0:
            raise ValidateError("--replay-tolerance: must not be negative")

    def log(line: str) -> None:
        if not quiet:
            typer.echo(line, err=True)

    try:
        with user_errors():  # e.g. a core whose presets lack `qdisc`
            rep = vr.paired_replay(
                cc,
                loss,
                seed,
                nbytes=size,
                qdisc=qdisc,
                profile=profile,
                tolerance_s=tolerance_s,
                log=log,
            )
    except _ns3.Ns3Error as exc:
        fail(str(exc))
    typer.echo(vr.format_replay(rep))


def register(app: typer.Typer) -> None:
    """Add the ``validate`` command to the ``vtlab`` CLI."""

    @app.command("validate")
    def validate_command(
        cc: CcOpt = None,
        loss: LossOpt = None,
        runs: RunsOpt = None,
        bytes_: BytesOpt = None,
        topology: TopologyOpt = None,
        out: OutOpt = Path("validation"),
        jobs: JobsOpt = None,
        profile: ProfileOpt = "ns3",
        qdisc: QdiscOpt = "stock",
        only: OnlyOpt = None,
        store_ns3: StoreNs3Opt = False,
        replay: ReplayOpt = None,
        replay_tolerance: ReplayToleranceOpt = 0.001,
        quick: QuickOpt = False,
        quiet: QuietOpt = False,
        scheduler: SchedulerOpt = None,
        cluster: ClusterOpt = None,
        connect_timeout: ConnectTimeoutOpt = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        """Cross-validate vtlab against ns-3 and write OUT/report.md and OUT/agreement.csv
        (needs the ns-3 wheel: the ns3 extra of vtlab, and g++)."""
        from rich.console import Console

        if replay is not None:
            _replay_command(replay, qdisc, topology, bytes_, profile, replay_tolerance, quiet)
            return
        with user_errors():
            grid = make_grid(cc, loss, runs, bytes_, topology, quick, profile, qdisc, only)
            check_cluster_options(scheduler, cluster, None, None, connect_timeout)
            n_jobs = jobs if jobs is not None else (os.cpu_count() or 1)
            if n_jobs < 1:
                raise ValidateError(f"--jobs: must be at least 1, got {n_jobs}")
            check_output_dir("--out", out)
        console = Console(stderr=True, highlight=False)

        def log(line: str) -> None:
            if not quiet:
                console.print(line, markup=False, soft_wrap=True)

        for name, why in grid.skipped.items():
            log(f"note: skipping {name}: {why}")
        try:
            binary = _ns3.ensure_binary(log=log)
            res = validate(
                grid,
                out,
                jobs=n_jobs,
                progress=not quiet,
                binary=binary,
                command=typed_command(),
                log=log,
                console=console,
                scheduler=scheduler,
                cluster=cluster,
                connect_timeout=connect_timeout,
                store_ns3=stored_ns3_runs_path() if store_ns3 else None,
            )
        except _ns3.Ns3Error as exc:
            if os.environ.get("VTLAB_DEBUG"):
                raise
            fail(str(exc))
        except KeyboardInterrupt:
            console.print(
                f"interrupted: finished runs are kept in {out / 'runs.jsonl'}; "
                "run the same command again to resume",
                markup=False,
                soft_wrap=True,
            )
            raise typer.Exit(130) from None
        if grid.only is not None:
            log(
                f"{grid.only} side only: {res.runs_done} runs now, {res.runs_cached} cached "
                f"· {res.wall_s:.1f} s"
            )
            typer.echo(f"runs in {out / 'runs.jsonl'} (no report with --only)")
        else:
            counts = verdict_counts(res.table)
            log(
                f"{counts['agree']} of {len(res.table)} cells agree; {counts['consistent']} "
                f"consistent; {counts['differs']} differ · {res.runs_done} runs now, "
                f"{res.runs_cached} cached · {res.wall_s:.1f} s"
            )
            typer.echo(f"wrote {res.paths['report']}, {res.paths['csv']}, {res.paths['parquet']}")
        if res.errors:
            for e in res.errors:
                typer.echo(f"error: {e}", err=True)
            raise typer.Exit(1)
