"""The bulk-transfer family: ``vtlab validate v2g`` (one vehicle on the V2G cable) and
``vtlab validate station`` (N vehicles at the charging station, :mod:`.station`).

vtlab (ns-3 profile, or ``--profile linux``) and the ns-3 reference program
``validation/ns3/v2g.cc`` run the same grid — algorithm × mean loss × seed × topology,
one transfer size.  The report (:mod:`.v2g_report`) gives per algorithm × loss ×
topology the mean goodput with its 95 % confidence interval on each side, the ratio
vtlab/ns-3 with its Fieller interval, RTO expiries and fast recoveries on each side,
the verdict (:func:`vtlab.validation.verdict.verdict`) and, per loss level, the
algorithms' rankings on both sides.

* ``--qdisc stock`` (default; ns-3's FqCoDel root queue disc with flow control, vtlab
  ``qdisc = "fq_codel"``) or ``none`` (drop-tail device queues alone).
* Runs are cached in ``<out>/runs.jsonl`` keyed by (side, algorithm, loss, seed, bytes,
  source hash, qdisc and, for a station, topology), and ns-3 runs stored in
  ``validation/ns3/results/v2g-runs.jsonl.gz`` (``--store-ns3``) are reused.  The
  source hash is the sha256 of the compiled vtlab core on the vtlab side and the
  results hash of the ns-3 program on the ns-3 side, so results are recomputed when
  either simulator changes.
"""

from __future__ import annotations

import json
import math
import shlex
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vtlab.api import core_build
from vtlab.ns3.cc import ns3_ccs, ns3_type_id
from vtlab.ns3.process import parse_flow_lines, run_child
from vtlab.ns3.program import (
    PINNED_NS3_VERSION,
    V2G_PROGRAM,
    Ns3Binary,
    Ns3Error,
    ensure_binary,
    find_ns3,
    program_results_hash,
    source_path,
)
from vtlab.ns3.v2g import ns3_args
from vtlab.validation import protocol
from vtlab.validation.cache import read_records
from vtlab.validation.errors import ValidateError
from vtlab.validation.protocol import Family, ValidateResult
from vtlab.validation.runner import NS3, VTLAB
from vtlab.validation.station import parse_topology, station_row, station_spec
from vtlab.validation.units import at_least, parse_bytes, parse_loss
from vtlab.validation.v2g_report import write_report
from vtlab.validation.verdict import (
    AGREE_TOLERANCE,
    Ranked,
    mean_ci,
    rank_agreement,
    ratio_ci,
    verdict,
)

__all__ = [
    "DEFAULT_BYTES",
    "DEFAULT_CCS",
    "DEFAULT_LOSSES",
    "DEFAULT_RUNS",
    "QDISCS",
    "QUICK",
    "Grid",
    "Task",
    "V2gFamily",
    "agreement_table",
    "execute",
    "execute_in_process",
    "explicit_command",
    "make_grid",
    "plan",
    "rankings",
    "record",
    "record_key",
    "run_key",
    "stored_ns3_runs_path",
    "validate",
    "vtlab_spec",
]

#: Algorithms that join the default list only when vtlab's registry has them (decided at
#: run time: ``bbr`` is ns-3's TcpBbr).
OPTIONAL_CCS: tuple[str, ...] = ("bbr",)
#: The order of the agreement table's algorithms (that of the committed tables); an
#: algorithm with an ns-3 TypeId that is not listed here comes after these.
REPORT_ORDER: tuple[str, ...] = (
    "newreno",
    "hybla",
    "highspeed",
    "htcp",
    "vegas",
    "scalable",
    "veno",
    "bic",
    "illinois",
    "westwood-plus",
    "cubic",
    "yeah",
    "bbr",
)
#: Every algorithm both vtlab and ns-3.44 implement (those with an ns-3 TypeId in the
#: registry), in report order, less :data:`OPTIONAL_CCS`.
DEFAULT_CCS: tuple[str, ...] = tuple(
    c
    for c in sorted(
        ns3_ccs(),
        key=lambda c: REPORT_ORDER.index(c) if c in REPORT_ORDER else len(REPORT_ORDER),
    )
    if c not in OPTIONAL_CCS
)
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
#: TCP profiles vtlab can run the grid with (ns-3 always runs as itself).
PROFILES = ("ns3", "linux")


# -- keys and records -----------------------------------------------------------------


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


def record_key(rec: Mapping[str, Any]) -> str:
    """:func:`run_key` of a run record."""
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


def stored_ns3_runs_path() -> Path:
    """The stored ns-3 runs of the single-vehicle grid, committed with the reference
    program: ``validation/ns3/results/v2g-runs.jsonl.gz`` (next to ``v2g.cc``, so
    ``$VTLAB_NS3_SOURCE`` moves it too)."""
    return source_path().parent / "results" / "v2g-runs.jsonl.gz"


# -- the grid and its cases -------------------------------------------------------------


@dataclass
class Grid:
    """What the bulk-transfer validation compares."""

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
    single-vehicle V2G cable, ``N`` the charging station with N vehicles
    (:func:`~vtlab.validation.station.station_spec`).  ``qdisc`` (a key of
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
        spec = station_spec(spec, str(topology))
    return spec


@dataclass
class Task:
    """One run of one side: a case of :class:`V2gFamily`."""

    side: str
    cc: str
    loss: float
    seed: int
    nbytes: int
    source_hash: str
    spec_json: str = ""  #: vtlab side
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


def record(task: Task, row: Mapping[str, Any], wall: float) -> dict[str, Any]:
    """The cache record of a finished task from its row (:func:`flow_row`)."""
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


def flow_row(side: str, flows: Sequence[Mapping[str, Any]], topology: str) -> dict[str, Any]:
    """The record fields of one run from its flow rows (vtlab or ns-3 columns)."""
    col = 1 if side == VTLAB else 2
    done_key = "completed" if side == VTLAB else "complete"
    counters = [(key, names[col - 1]) for key, *names in _COUNTERS]
    if topology != "1":
        return station_row(flows, topology, side, done_key, counters)
    if len(flows) != 1:
        raise RuntimeError(f"the {side} run printed {len(flows)} flow rows, expected 1")
    fl = flows[0]
    row: dict[str, Any] = {
        "completed": bool(fl[done_key]),
        "goodput_bps": fl["goodput_bps"],
        "completion_s": fl["completion_s"],
    }
    for key, column in counters:
        row[key] = fl.get(column)
    return row


def execute(task: Task) -> dict[str, Any]:
    """Run one task and return its cache record: ns-3's in its own child process (the
    compiled reference program), vtlab's in this process (:func:`execute_in_process`;
    the core runs without the interpreter lock, so ``--jobs`` threads run both sides
    in parallel). A lean child process per vtlab run cost 17 ms of start-up each, as
    much as a third of a 100 MB run's 45 ms (docs/validation.md)."""
    if task.side == VTLAB:
        return execute_in_process(task)
    started = time.perf_counter()
    flows = parse_flow_lines(run_child([task.binary, *task.args]))
    for fl in flows:  # ns-3's flows start at 0.1 s + i x stagger
        fl.setdefault("start_s", 0.1)
    row = flow_row(task.side, flows, task.topology)
    return record(task, row, time.perf_counter() - started)


def execute_in_process(task: Task) -> dict[str, Any]:
    """Run one vtlab task in this process (here, or on a Dask worker for
    ``--scheduler`` / ``--cluster``) and return its cache record."""
    from vtlab import _core

    if task.side != VTLAB:
        raise ValueError("only vtlab runs go to a cluster; ns-3 runs stay on this machine")
    started = time.perf_counter()
    out = _core.run(task.spec_json, task.seed, False)
    cols = out["flows"]
    flows = [{k: v[i] for k, v in cols.items()} for i in range(len(cols["flow"]))]
    starts = {
        fl["name"]: fl["start_ns"] / 1e9 for fl in json.loads(_core.expand(task.spec_json))["flows"]
    }
    for fl in flows:
        fl["start_s"] = starts.get(fl["flow"], 0.0)
    row = flow_row(task.side, flows, task.topology)
    return record(task, row, time.perf_counter() - started)


#: Signature of the function that runs a task (tests substitute a fake one).
Runner = Callable[[Task], dict[str, Any]]


def _ns3_expanded(grid: Grid, cc: str, loss: float, topology: str) -> dict[str, Any]:
    """The resolved scenario the ns-3 arguments come from (ns-3 profile; ns3_args turns
    its queue disc into v2g.cc's --qdisc).  An algorithm vtlab lacks (``--only ns3``)
    is resolved as newreno, then renamed: the ns-3 arguments do not depend on the
    algorithm otherwise."""
    from vtlab import _core

    known = cc in {c["name"] for c in _core.congestion_controls()}
    spec = vtlab_spec(cc if known else "newreno", loss, grid.nbytes, topology, qdisc=grid.qdisc)
    expanded = json.loads(_core.expand(json.dumps(spec)))
    for flow in expanded.get("flows", []):
        flow["tcp"]["cc"] = cc
    return expanded


def plan(grid: Grid, vtlab_hash: str, ns3_hash: str, binary: str = "") -> list[Task]:
    """Every task of the grid, ns-3 first (they are the long ones); with ``grid.only``
    one side's.  ns-3 runs are keyed by ``ns3_hash``, the program's results hash
    (:func:`~vtlab.ns3.program.program_results_hash`: source and ns-3 version, not
    paths); ``binary``, the compiled program, may be left for the family to fill in
    when a run needs it."""
    ns_tasks: list[Task] = []
    vt_tasks: list[Task] = []
    for topology in grid.topologies:
        for cc in grid.ccs:
            for loss in grid.losses:
                spec_json = json.dumps(
                    vtlab_spec(cc, loss, grid.nbytes, topology, grid.profile, grid.qdisc)
                )
                expanded = _ns3_expanded(grid, cc, loss, topology)
                common = {"topology": topology, "qdisc": grid.qdisc}
                for seed in grid.seeds:
                    vt_tasks.append(
                        Task(
                            VTLAB,
                            cc,
                            loss,
                            seed,
                            grid.nbytes,
                            vtlab_hash,
                            spec_json=spec_json,
                            profile=grid.profile,
                            **common,
                        )
                    )
                    ns_tasks.append(
                        Task(
                            NS3,
                            cc,
                            loss,
                            seed,
                            grid.nbytes,
                            ns3_hash,
                            binary=binary,
                            args=ns3_args(expanded, seed),
                            **common,
                        )
                    )
    # Within a side, high loss and many vehicles first: those runs are the slowest.
    ns_tasks.sort(key=lambda t: (-t.loss, -int(t.topology)))
    if grid.only == "ns3":
        return ns_tasks
    if grid.only == "vtlab":
        return vt_tasks
    return ns_tasks + vt_tasks


# -- comparison -----------------------------------------------------------------------


def _side_columns(prefix: str, recs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One side's columns of an agreement row."""
    mean, ci, n = mean_ci(r["goodput_bps"] for r in recs)
    agg, agg_ci, _ = mean_ci(r.get("aggregate_goodput_bps", r["goodput_bps"]) for r in recs)
    row: dict[str, Any] = {
        f"{prefix}_n": n,
        f"{prefix}_completed": sum(1 for r in recs if r.get("completed")),
        f"{prefix}_goodput_mbps": mean / 1e6,
        f"{prefix}_goodput_ci95_mbps": ci / 1e6,
        f"{prefix}_aggregate_mbps": agg / 1e6,
        f"{prefix}_aggregate_ci95_mbps": agg_ci / 1e6,
        f"{prefix}_jain": mean_ci(r.get("jain", 1.0) for r in recs)[0],
    }
    for metric in ("rto_expiries", "fast_recoveries", "retransmissions"):
        vals = [r[metric] for r in recs if r.get(metric) is not None]
        row[f"{prefix}_{metric}"] = sum(vals) / len(vals) if vals else math.nan
    return row


def agreement_table(
    records: Iterable[Mapping[str, Any]],
    ccs: Sequence[str],
    losses: Sequence[float],
    topologies: Sequence[str] | str = ("1",),
    tolerance: float = AGREE_TOLERANCE,
) -> list[dict[str, Any]]:
    """One row per (topology, algorithm, loss) from run records (``side``, ``cc``,
    ``loss``, ``topology`` (default ``1``), ``goodput_bps``, ``rto_expiries``,
    ``fast_recoveries``, ...).  The runs of a cell are independent samples on each
    side: their goodputs are compared by the ratio of means and its Fieller interval.
    For a station, ``goodput_bps`` and the counters are a run's means per vehicle;
    ``aggregate_goodput_bps`` (the whole station) and ``jain`` are averaged over runs
    too (a single vehicle's aggregate is its goodput)."""
    topos = [str(t) for t in ([topologies] if isinstance(topologies, str) else topologies)]
    by: dict[tuple[str, str, float, str], list[Mapping[str, Any]]] = {}
    for rec in records:
        key = (rec["side"], rec["cc"], loss_key(rec["loss"]), str(rec.get("topology", "1")))
        by.setdefault(key, []).append(rec)
    rows = []
    for topology in topos:
        for cc in ccs:
            for loss in losses:
                vt = by.get((VTLAB, cc, loss_key(loss), topology), [])
                ns = by.get((NS3, cc, loss_key(loss), topology), [])
                row: dict[str, Any] = {
                    "cc": cc,
                    "ns3_type": ns3_type_id(cc) or "",
                    "loss": loss_key(loss),
                    "topology": topology,
                    **_side_columns("vtlab", vt),
                    **_side_columns("ns3", ns),
                }
                rci = ratio_ci((r["goodput_bps"] for r in vt), (r["goodput_bps"] for r in ns))
                row["ratio"] = rci.ratio
                row["ratio_ci_low"] = rci.low
                row["ratio_ci_high"] = rci.high
                va, na = row["vtlab_aggregate_mbps"], row["ns3_aggregate_mbps"]
                row["aggregate_ratio"] = va / na if na and not math.isnan(na) else math.nan
                row["verdict"] = verdict(rci.ratio, rci.contains_one, tolerance)
                rows.append(row)
    return rows


def rankings(table: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per loss level (and topology): the algorithms' rank agreement by mean goodput
    (:func:`~vtlab.validation.verdict.rank_agreement`), cells with both sides only."""
    out = []
    levels: list[tuple[str, float]] = []
    for row in table:
        level = (str(row.get("topology", "1")), row["loss"])
        if level not in levels:
            levels.append(level)
    for topology, loss in levels:
        items = [
            Ranked(
                r["cc"],
                r["vtlab_goodput_mbps"],
                r["vtlab_goodput_ci95_mbps"],
                r["ns3_goodput_mbps"],
                r["ns3_goodput_ci95_mbps"],
            )
            for r in table
            if r["loss"] == loss
            and str(r.get("topology", "1")) == topology
            and not math.isnan(r["vtlab_goodput_mbps"])
            and not math.isnan(r["ns3_goodput_mbps"])
        ]
        out.append({"loss": loss, "topology": topology, **rank_agreement(items)})
    return out


# -- the grid from options ----------------------------------------------------------------


def _algorithms(ccs: Sequence[str] | None, base: Mapping[str, Any], only: str | None) -> Any:
    """(algorithms to run, skipped algorithm -> reason) of a command line."""
    from vtlab import _core

    available = {c["name"] for c in _core.congestion_controls()}
    if ccs:
        cc_list = list(ccs)
    elif "ccs" in base:
        cc_list = list(base["ccs"])
    else:
        cc_list = [*DEFAULT_CCS, *(c for c in OPTIONAL_CCS if c in available)]
    unknown = [c for c in cc_list if ns3_type_id(c) is None]
    if unknown:
        raise ValidateError(
            "--cc",
            f"no ns-3 counterpart for {', '.join(unknown)} (allowed: {', '.join(ns3_ccs())})",
        )
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
        raise ValidateError("--cc", "none of the requested algorithms is available in vtlab yet")
    return cc_list, skipped


def _choice(option: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValidateError(option, f"'{value}' is not one of {', '.join(allowed)}")
    return value


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
    topo_list = list(dict.fromkeys(parse_topology(t) for t in topologies or ["1"]))
    base = QUICK if quick else {}
    if only is not None:
        _choice("--only", only, ONLY)
    qdisc_name = _choice(
        "--qdisc", qdisc if qdisc is not None else str(base.get("qdisc", DEFAULT_QDISC)), QDISCS
    )
    cc_list, skipped = _algorithms(ccs, base, only)
    loss_list = (
        [parse_loss(x) for x in losses] if losses else list(base.get("losses", DEFAULT_LOSSES))
    )
    loss_list = list(dict.fromkeys(loss_key(x) for x in loss_list))
    n_runs = at_least("--runs", runs if runs is not None else int(base.get("runs", DEFAULT_RUNS)))
    size = parse_bytes(nbytes) if nbytes is not None else int(base.get("bytes", DEFAULT_BYTES))
    _choice("--profile", profile, PROFILES)
    seeds = list(range(1, n_runs + 1))
    return Grid(cc_list, loss_list, seeds, size, topo_list, skipped, profile, qdisc_name, only)


def explicit_command(grid: Grid, out: Path, jobs: int) -> str:
    """The command line that runs ``grid`` with every option spelled out: ``vtlab
    validate v2g`` for the single vehicle, ``vtlab validate station`` otherwise."""
    station = grid.topologies != ["1"]
    parts = ["vtlab", "validate", "station" if station else "v2g"]
    for cc in grid.ccs:
        parts += ["--cc", cc]
    for loss in grid.losses:
        parts += ["--loss", f"{loss * 100:g}%"]
    if station:
        for topology in grid.topologies:
            parts += ["--vehicles", topology]
    if grid.profile != "ns3":
        parts += ["--profile", grid.profile]
    if grid.qdisc != DEFAULT_QDISC:
        parts += ["--qdisc", grid.qdisc]
    if grid.only is not None:
        parts += ["--only", grid.only]
    parts += ["--runs", str(len(grid.seeds)), "--bytes", str(grid.nbytes), "--out", str(out)]
    return shlex.join(parts)


# -- the family -----------------------------------------------------------------------


class V2gFamily(Family):
    """The bulk-transfer grid as a :class:`~vtlab.validation.protocol.Family`."""

    name = "v2g"

    def __init__(
        self,
        grid: Grid,
        vtlab_hash: str,
        *,
        binary: Ns3Binary | None = None,
        runner: Runner = execute,
        stored: Sequence[Path] | None = None,
        command: str = "",
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.grid = grid
        self.vtlab_hash = vtlab_hash
        self.runner = runner
        self.stored = [stored_ns3_runs_path()] if stored is None else list(stored)
        self.only = grid.only
        self.remote_runner = execute_in_process
        self.command = command
        self.log = log
        self._binary = binary
        self._lock = threading.Lock()
        self.ns3_hash = binary.results_hash if binary else program_results_hash(V2G_PROGRAM)

    def cases(self) -> list[Task]:  # type: ignore[override]
        path = str(self._binary.path) if self._binary else ""
        return plan(self.grid, self.vtlab_hash, self.ns3_hash, path)

    def binary(self) -> Ns3Binary:
        """``v2g.cc``, compiled on the first ns-3 run the cache and the stored runs
        lack (:func:`~vtlab.ns3.program.ensure_binary`)."""
        with self._lock:
            if self._binary is None:
                self._binary = ensure_binary(log=self.log)
            return self._binary

    def ns3_version(self) -> str:
        """The ns-3 version of the grid's ns-3 runs: the compiled program's, else the
        installed wheel's, else the pinned one the stored runs were made with."""
        if self._binary is not None:
            return self._binary.ns3_version
        try:
            return find_ns3().version
        except Ns3Error:
            return PINNED_NS3_VERSION

    def run(self, case: Task) -> dict[str, Any]:
        if case.side == NS3 and not case.binary:
            case = replace(case, binary=str(self.binary().path))
        return self.runner(case)

    def record_key(self, record: Mapping[str, Any]) -> str:
        return record_key(record)

    def compare(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        g = self.grid
        return agreement_table(records, g.ccs, g.losses, g.topologies)

    def write_report(
        self, out: Path, table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]
    ) -> dict[str, Path]:
        from vtlab import _core

        g = self.grid
        explicit = explicit_command(g, out, int(meta.get("jobs", 1)))
        full = {
            **meta,
            "command": self.command or explicit,
            "explicit_command": explicit,
            "vtlab_version": _core.version(),
            "vtlab_hash": self.vtlab_hash,
            "ns3_version": self.ns3_version(),
            "ns3_hash": self.ns3_hash,
            "qdisc": g.qdisc,
            "seeds": g.seeds,
            "bytes": g.nbytes,
            "skipped": g.skipped,
            "profile": g.profile,
        }
        return write_report(out, table, rankings(table), full)


def validate(
    grid: Grid,
    out: Path,
    *,
    jobs: int = 1,
    progress: bool = True,
    runner: Runner = execute,
    binary: Ns3Binary | None = None,
    command: str = "",
    log: Callable[[str], None] | None = None,
    console: Any = None,
    scheduler: Any = None,
    cluster: str | None = None,
    connect_timeout: float | None = None,
    stored: Sequence[Path] | None = None,
    store_ns3: Path | None = None,
) -> ValidateResult:
    """Run (or resume) the grid and write the report (:func:`vtlab.validation.protocol.
    validate`).  ns-3's runs come from ``out``'s run cache, then from ``stored``
    (default :func:`stored_ns3_runs_path`); the reference program is compiled
    (:func:`vtlab.ns3.program.ensure_binary`, unless ``binary`` is given) only when a
    run is in neither, which raises :class:`vtlab.ns3.program.Ns3Error` when ns-3 is
    missing or does not build.  With ``grid.only`` no report is written (``paths`` is
    empty)."""
    family = V2gFamily(
        grid,
        core_build(),
        binary=binary,
        runner=runner,
        stored=stored,
        command=command,
        log=log,
    )
    have: set[str] = set()
    for path in [out / "runs.jsonl", *family.stored]:
        have.update(read_records(path, record_key))
    if any(t.side == NS3 and t.key not in have for t in family.cases()):
        family.binary()
    return protocol.validate(
        family,
        out,
        jobs=jobs,
        progress=progress,
        console=console,
        scheduler=scheduler,
        cluster=cluster,
        connect_timeout=connect_timeout,
        store_ns3=store_ns3,
        log=log,
    )
