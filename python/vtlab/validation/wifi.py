"""The 802.11 family: ``vtlab validate wifi``, vtlab's 802.11 medium against ns-3's wifi
module.

The reference program ``validation/ns3/wifi.cc`` (validation/ns3/README-wifi.md)
builds the ``vanet-chain`` scenario in ns-3.44: a single hop and an 8-hop chain of
vehicles 200 m apart, 802.11b at 1 Mbit/s for data and control frames, two-ray
ground with ns-2's radio thresholds, RTS/CTS on or off, static routes, MAC queue =
IFQ, no queue disc, and one TCP flow (NewReno or Vegas, delayed ACK 1 or 2).  vtlab
runs the same scenario with ns-3's reception rule (``dsss-ber``) and ns-3.44's single
retry limit of 7; ns-3's arguments come from that scenario, resolved
(:func:`vtlab.ns3.wifi.wifi_args`).  Per cell, the goodput ratio must lie within
±10 % (:data:`TOLERANCE`), the orders of the cells within each topology and RTS
setting are compared (:func:`vtlab.validation.verdict.rank_agreement`), and the MAC
counters appear side by side (:mod:`.wifi_report`).

Every run is a record of the run cache (``<out>/runs.jsonl``); ns-3's runs are stored
in ``validation/wifi/ns3/runs.jsonl.gz``, keyed by the results hash of ``wifi.cc``,
so validating needs neither ns-3 nor g++; ``--rerun-ns3`` recomputes them with the
ns-3 wheel.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vtlab import _core
from vtlab.api import core_build
from vtlab.ns3.cc import ns3_type_id
from vtlab.ns3.process import run_child
from vtlab.ns3.program import (
    WIFI_PROGRAM,
    Ns3Binary,
    build_program,
    program_results_hash,
)
from vtlab.ns3.wifi import WIFI_CCS, parse_output, wifi_args
from vtlab.packagedata import validation_dir
from vtlab.validation import protocol
from vtlab.validation.cache import require_stored
from vtlab.validation.errors import ValidateError
from vtlab.validation.protocol import Family, ValidateResult
from vtlab.validation.runner import NS3, VTLAB
from vtlab.validation.verdict import Ranked, mean_ci, rank_agreement, ratio_ci_delta, verdict
from vtlab.validation.wifi_report import write_report

__all__ = [
    "CELLS",
    "COUNTERS",
    "DEFAULT_DURATION_S",
    "DEFAULT_SEEDS",
    "NS3_RUNS",
    "QUICK",
    "TOLERANCE",
    "Cell",
    "Grid",
    "Run",
    "WifiFamily",
    "agreement_row",
    "make_grid",
    "orderings",
    "record_key",
    "stored_ns3_runs_path",
    "validate",
    "vtlab_spec",
]

#: Goodput tolerance of a cell: the issue's ±10 % (no ``consistent`` band).
TOLERANCE = 0.10
#: Flow start and default flow duration, s (ns-3's program: --start, --duration).
START_S = 1.0
DEFAULT_DURATION_S = 100.0
#: vtlab seeds per cell (ns-3's stored runs are RngRun 1..3); ``--quick``: 3.
DEFAULT_SEEDS = 10
QUICK_SEEDS = 3
MAX_SEEDS = 1000
NS3_RUNS = (1, 2, 3)
#: The counters compared beside the goodput, per run summed over the stations.
COUNTERS = ("tcp_retransmissions", "tcp_rto", "mac_retries", "mac_retry_drops", "mac_queue_drops")


def stored_ns3_runs_path() -> Path:
    """ns-3's stored runs of the grid: ``wifi/ns3/runs.jsonl.gz`` of the validation data
    vtlab ships (:func:`vtlab.packagedata.validation_dir`)."""
    return validation_dir() / "wifi" / "ns3" / "runs.jsonl.gz"


#: The error models of the grid: the on-off model of ``wifi.error_rate`` (the
#: Janevski study's reproduction's calibrated reading: lossy 4 % of the time, 5 ms
#: bursts, both directions) and ns-3's post-reception model (2 % of the frames each
#: station receives, ``error_direction = "incoming"``).
ERRORS = ("none", "onoff", "rx")
ONOFF_RATE, ONOFF_BURST = 0.04, "5ms"
RX_RATE = 0.02
#: ns-3's ``WifiMacQueue::MaxDelay`` default, which vtlab's side sets as its
#: ``wifi.queue_lifetime``.
NS3_QUEUE_LIFETIME = "500ms"
#: 128 KiB, ns-3's default ``TcpSocket::RcvBufSize``, in 512 B segments.
WINDOW_128K = 256


@dataclass(frozen=True)
class Cell:
    """One cell of the grid; the fields after ``delack`` default to the Janevski
    study's baseline (IFQ 50, DupAck 3, a 20-packet window, no errors)."""

    hops: int
    rts: bool
    cc: str
    delack: int
    ifq: int = 50
    dupack: int = 3
    window: int = 20
    error: str = "none"

    @property
    def name(self) -> str:
        tcp = "tcpsack" if self.cc == "sack" else str(ns3_type_id(self.cc)).lower()
        out = f"h{self.hops}-rts{int(self.rts)}-{tcp}-d{self.delack}"
        if self.ifq != 50:
            out += f"-q{self.ifq}"
        if self.dupack != 3:
            out += f"-dup{self.dupack}"
        if self.window != 20:
            out += "-w128k" if self.window == WINDOW_128K else f"-w{self.window}"
        if self.error != "none":
            out += f"-e{self.error}"
        return out

    @property
    def label(self) -> str:
        """The name without the topology: the cell within its ordering group."""
        return self.name.split("-", 2)[2]


def _grid() -> tuple[Cell, ...]:
    """The validation grid (docs/validation.md, "802.11"): the original 16 cells
    (hops {1, 8} x RTS x {NewReno, Vegas} x DelAck {1, 2}); one factor at a time
    around the study's baseline (RTS/CTS, NewReno, DelAck 1, IFQ 50, DupAck 3,
    20 packets, no errors) on 1 and 8 hops: IFQ 2/5/10/20, DupAck 1/6/10, the
    128 KiB window, both error models, SACK; the baseline on 2 and 4 hops; the
    interactions IFQ 2, 128 KiB and each error model x hops {2, 4}; and SACK in
    ten of the cells where NewReno's losses make ns-3's TCP differ."""
    cells = [
        Cell(h, r, cc, d) for h in (1, 8) for r in (False, True) for cc in WIFI_CCS for d in (1, 2)
    ]
    variants: list[dict[str, Any]] = [
        *({"ifq": q} for q in (2, 5, 10, 20)),
        *({"dupack": n} for n in (1, 6, 10)),
        {"window": WINDOW_128K},
        *({"error": e} for e in ERRORS[1:]),
        {"cc": "sack"},
    ]
    base = {"rts": True, "cc": "newreno", "delack": 1}
    for h in (1, 8):
        cells += [Cell(h, **{**base, **v}) for v in variants]
    for h in (2, 4):
        cells.append(Cell(h, **base))
        interactions = ({"ifq": 2}, {"window": WINDOW_128K}, {"error": "onoff"}, {"error": "rx"})
        cells += [Cell(h, **{**base, **v}) for v in interactions]
    # SACK beside the NewReno cells where ns-3's SACK-less recovery cycles
    # (docs/validation.md): IFQ 5 and 10 and 128 KiB on 1 and 8 hops, the on-off
    # model on 1 and 2 hops, 128 KiB on 2 and 4 hops.
    sack = {**base, "cc": "sack"}
    controls = [
        *((h, {"ifq": q}) for h in (1, 8) for q in (5, 10)),
        *((h, {"window": WINDOW_128K}) for h in (1, 2, 4, 8)),
        *((h, {"error": "onoff"}) for h in (1, 2)),
    ]
    cells += [Cell(h, **{**sack, **v}) for h, v in controls]
    return tuple(cells)


#: The validation grid (:func:`_grid`): 58 cells.
CELLS: tuple[Cell, ...] = _grid()
#: ``--quick``: the single hop with RTS/CTS and the chain with basic access, NewReno,
#: an ACK per segment, the 4-hop chain with IFQ 2 and the 8-hop chain with ns-3's
#: post-reception error model.
QUICK = (
    "h1-rts1-tcpnewreno-d1",
    "h8-rts0-tcpnewreno-d1",
    "h4-rts1-tcpnewreno-d1-q2",
    "h8-rts1-tcpnewreno-d1-erx",
)


def vtlab_spec(cell: Cell, duration_s: float = DEFAULT_DURATION_S) -> dict[str, Any]:
    """The vanet-chain scenario that mirrors ``wifi.cc`` for ``cell``: ns-3's DSSS
    reception rule, its frame retry counter (``WifiMac::FrameRetryLimit`` 7: one
    counter per frame for RTS and data attempts together, CW not reset by a drop),
    its NAV reset after an RTS that no frame follows (``NavResetTimeout``) and its
    MAC queue lifetime (``WifiMacQueue::MaxDelay``)."""
    wifi: dict[str, Any] = {
        "reception": {"model": "dsss-ber", "preamble_snr_db": 4.0},
        "frame_retry_limit": 7,
        "rts_nav_reset": True,
        "queue_lifetime": NS3_QUEUE_LIFETIME,
    }
    if cell.error == "onoff":
        wifi |= {"error_rate": ONOFF_RATE, "error_burst": ONOFF_BURST}
    elif cell.error == "rx":
        wifi |= {
            "error": {"model": "bernoulli", "mean_loss": RX_RATE},
            "error_direction": "incoming",
        }
    return {
        "preset": "vanet-chain",
        "hops": cell.hops,
        "rts": cell.rts,
        "delack": cell.delack,
        "ifq": cell.ifq,
        "dupack": cell.dupack,
        "window": cell.window,
        "tcp": {"cc": cell.cc},
        "start": f"{START_S}s",
        "stop": f"{START_S + duration_s}s",
        "wifi": wifi,
    }


# -- the grid -----------------------------------------------------------------------------


@dataclass
class Grid:
    """What the 802.11 validation compares."""

    cells: list[Cell]
    seeds: int = DEFAULT_SEEDS  #: vtlab seeds 1..seeds per cell
    duration_s: float = DEFAULT_DURATION_S
    rerun_ns3: bool = False  #: run ns-3 instead of using its stored runs


def parse_cells(names: Sequence[str] | None) -> list[Cell]:
    """The cells named (repeatable or comma-separated; all by default)."""
    if names is None:
        return list(CELLS)
    by_name = {c.name: c for c in CELLS}
    out = []
    for n in names:
        for part in str(n).split(","):
            part = part.strip()
            if part not in by_name:
                raise ValidateError(
                    "--case", f"unknown case '{part}' (allowed: {', '.join(by_name)})"
                )
            out.append(by_name[part])
    if not out:
        raise ValidateError("--case", "no case given")
    return out


def make_grid(
    cases: Sequence[str] | None = None,
    seeds: int | None = None,
    duration_s: float = DEFAULT_DURATION_S,
    rerun_ns3: bool = False,
    quick: bool = False,
) -> Grid:
    """The grid a command line asks for (``quick``: :data:`QUICK` and 3 seeds unless
    given); raises :class:`ValidateError`."""
    cells = parse_cells(list(QUICK) if quick and cases is None else cases)
    n = seeds if seeds is not None else (QUICK_SEEDS if quick else DEFAULT_SEEDS)
    if not 1 <= n <= MAX_SEEDS:
        raise ValidateError("--seeds", f"{n} is outside [1, {MAX_SEEDS}]")
    if not 1.0 <= duration_s <= 10_000.0:
        raise ValidateError("--duration", f"{duration_s:g} is outside [1, 10000] s")
    if duration_s != DEFAULT_DURATION_S and not rerun_ns3:
        raise ValidateError(
            "--duration",
            f"the stored ns-3 runs are {DEFAULT_DURATION_S:g} s; another duration needs "
            "--rerun-ns3",
        )
    return Grid(cells, n, duration_s, rerun_ns3)


# -- runs and records -----------------------------------------------------------------------


def run_key(side: str, cell: str, seed: int, duration_s: float, source_hash: str) -> str:
    """The cache key of one run: its side, cell, seed (ns-3: RngRun), flow duration and
    the hash of the simulator that made it (vtlab's core, or ``wifi.cc``'s results
    hash)."""
    return json.dumps([side, cell, int(seed), float(duration_s), source_hash])


def record_key(rec: Mapping[str, Any]) -> str:
    """:func:`run_key` of a run record."""
    return run_key(rec["side"], rec["cell"], rec["seed"], rec["duration_s"], rec["source_hash"])


@dataclass
class Run:
    """One run of one side: a case of :class:`WifiFamily`."""

    side: str
    cell: Cell
    seed: int
    duration_s: float
    source_hash: str
    spec_json: str = ""  #: vtlab side
    args: list[str] = field(default_factory=list)  #: ns-3 side: wifi.cc's arguments

    @property
    def key(self) -> str:
        return run_key(self.side, self.cell.name, self.seed, self.duration_s, self.source_hash)

    @property
    def label(self) -> str:
        return f"{self.side} {self.cell.name} seed {self.seed}"


def _record(run: Run, body: Mapping[str, Any], wall_s: float) -> dict[str, Any]:
    return {
        "side": run.side,
        "cell": run.cell.name,
        "seed": run.seed,
        "duration_s": run.duration_s,
        "source_hash": run.source_hash,
        **body,
        "wall_s": wall_s,
    }


def run_vtlab(run: Run) -> dict[str, Any]:
    """One vtlab run (in this process; the core runs without the GIL) as a record: the
    compared quantities of :func:`compared`."""
    started = time.perf_counter()
    out = _core.run(run.spec_json, run.seed, False)
    flows, links = out["flows"], out["links"]
    body = {
        "goodput_bps": float(flows["goodput_bps"][0]),
        "tcp_retransmissions": float(flows["retransmissions"][0]),
        # wifi.cc counts entries into CA_LOSS (a timeout outside state Loss), not
        # every expiry of the timer (rto_count counts backoff repeats too).
        "tcp_rto": float(flows["slow_starts_after_loss"][0]),
        "mac_retries": float(sum(links["mac_retries"])),
        "mac_retry_drops": float(sum(links["mac_retry_drops"])),
        "mac_queue_drops": float(sum(links["drops_queue"])),
    }
    return _record(run, body, time.perf_counter() - started)


def run_ns3(run: Run, binary: Ns3Binary) -> dict[str, Any]:
    """One run of ``wifi.cc`` (a child process) as a record: its ``config`` and
    ``result`` lines."""
    started = time.perf_counter()
    lines = parse_output(run_child([str(binary.path), *run.args]))
    body = {"config": lines.get("config"), "result": lines["result"]}
    return _record(run, body, time.perf_counter() - started)


def compared(rec: Mapping[str, Any]) -> dict[str, float]:
    """The compared quantities of a record of either side: goodput and
    :data:`COUNTERS`."""
    if rec["side"] == VTLAB:
        return {k: float(rec[k]) for k in ("goodput_bps", *COUNTERS)}
    res = rec["result"]
    mac = res["mac"]
    expired = float(mac.get("expired_drops", 0))
    return {
        "goodput_bps": float(res["goodput_bps"]),
        "tcp_retransmissions": float(res["tcp_retransmissions"]),
        "tcp_rto": float(res["tcp_rto"]),
        "mac_retries": float(mac["retries"]),
        "mac_retry_drops": float(mac["retry_drops"]),
        # vtlab counts lifetime drops as queue drops
        "mac_queue_drops": float(mac["queue_drops"]) + expired,
    }


def plan(grid: Grid, ns3_hash: str, vtlab_hash: str) -> list[Run]:
    """Every run of the grid, ns-3's first (they are the long ones).  ns-3's arguments
    come from the cell's resolved scenario."""
    ns_runs: list[Run] = []
    vt_runs: list[Run] = []
    for cell in grid.cells:
        spec_json = json.dumps(vtlab_spec(cell, grid.duration_s))
        expanded = json.loads(_core.expand(spec_json))
        for run in NS3_RUNS:
            args = wifi_args(expanded, run)
            ns_runs.append(Run(NS3, cell, run, grid.duration_s, ns3_hash, args=args))
        for seed in range(1, grid.seeds + 1):
            vt_runs.append(Run(VTLAB, cell, seed, grid.duration_s, vtlab_hash, spec_json))
    return ns_runs + vt_runs


# -- comparison -----------------------------------------------------------------------------


def _mean(xs: Sequence[float]) -> float:
    return statistics.fmean(xs) if xs else float("nan")


def agreement_row(
    cell: Cell, vt: Sequence[Mapping[str, float]], ns: Sequence[Mapping[str, float]]
) -> dict[str, Any]:
    """One cell's row of the agreement table from the compared quantities of its runs
    (:func:`compared`): mean goodputs in kbit/s, their ratio with the delta method's
    95 % interval (:func:`~vtlab.validation.verdict.ratio_ci_delta`), the verdict
    within :data:`TOLERANCE`, and the counters' means."""
    g_vt = [r["goodput_bps"] / 1e3 for r in vt]
    g_ns = [r["goodput_bps"] / 1e3 for r in ns]
    rci = ratio_ci_delta(g_vt, g_ns)
    row: dict[str, Any] = {
        "case": cell.name,
        "hops": cell.hops,
        "rts": int(cell.rts),
        "cc": cell.cc,
        "delack": cell.delack,
        "ifq": cell.ifq,
        "dupack": cell.dupack,
        "window": cell.window,
        "error": cell.error,
        "ns3_kbps": _mean(g_ns),
        "vtlab_kbps": _mean(g_vt),
        "ratio": rci.ratio,
        "ratio_lo": rci.low,
        "ratio_hi": rci.high,
        "verdict": verdict(rci.ratio, rci.contains_one, TOLERANCE, TOLERANCE),
        "ns3_runs": len(ns),
        "vtlab_runs": len(vt),
    }
    for c in COUNTERS:
        row[f"ns3_{c}"] = _mean([x[c] for x in ns])
        row[f"vtlab_{c}"] = _mean([x[c] for x in vt])
    return row


def orderings(
    cells: Sequence[Cell], goodputs: Mapping[tuple[str, str], Sequence[float]]
) -> list[dict[str, Any]]:
    """Within each (hops, RTS) group, how the two sides order its cells by
    mean goodput (:func:`~vtlab.validation.verdict.rank_agreement`); ``goodputs``:
    (side, cell name) -> the runs' goodputs."""
    groups: dict[tuple[int, int], list[Ranked]] = {}
    for cell in cells:
        vt, vt_half, _ = mean_ci(goodputs.get((VTLAB, cell.name), []))
        ns, ns_half, _ = mean_ci(goodputs.get((NS3, cell.name), []))
        item = Ranked(cell.label, vt, vt_half, ns, ns_half)
        groups.setdefault((cell.hops, int(cell.rts)), []).append(item)
    return [
        {"hops": hops, "rts": rts, **rank_agreement(items)}
        for (hops, rts), items in sorted(groups.items())
    ]


# -- the family -----------------------------------------------------------------------------


class WifiFamily(Family):
    """The 802.11 grid as a :class:`~vtlab.validation.protocol.Family`."""

    name = "wifi"

    def __init__(
        self,
        grid: Grid,
        ns3_hash: str,
        vtlab_hash: str,
        *,
        stored: Sequence[Path] = (),
        command: str = "",
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.grid = grid
        self.ns3_hash = ns3_hash
        self.vtlab_hash = vtlab_hash
        self.stored = list(stored)
        self.command = command
        self.log = log
        self.orderings: list[dict[str, Any]] = []
        self._binary: Ns3Binary | None = None
        self._lock = threading.Lock()

    def cases(self) -> list[Run]:  # type: ignore[override]
        return plan(self.grid, self.ns3_hash, self.vtlab_hash)

    def binary(self) -> Ns3Binary:
        """``wifi.cc``, compiled on the first ns-3 run (:func:`build_program`)."""
        with self._lock:
            if self._binary is None:
                self._binary = build_program(WIFI_PROGRAM, log=self.log)
            return self._binary

    def run(self, case: Run) -> dict[str, Any]:
        return run_vtlab(case) if case.side == VTLAB else run_ns3(case, self.binary())

    def record_key(self, record: Mapping[str, Any]) -> str:
        return record_key(record)

    def compare(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        by: dict[tuple[str, str], list[dict[str, float]]] = {}
        for rec in records:
            by.setdefault((rec["side"], rec["cell"]), []).append(compared(rec))
        goodputs = {k: [r["goodput_bps"] / 1e3 for r in v] for k, v in by.items()}
        self.orderings = orderings(self.grid.cells, goodputs)
        return [
            agreement_row(c, by.get((VTLAB, c.name), []), by.get((NS3, c.name), []))
            for c in self.grid.cells
        ]

    def write_report(
        self, out: Path, table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]
    ) -> dict[str, Path]:
        g = self.grid
        full = {
            **meta,
            "command": self.command or "vtlab validate wifi",
            "vtlab_version": _core.version(),
            "ns3_source": "recomputed (`--rerun-ns3`)"
            if g.rerun_ns3
            else "from `validation/wifi/ns3/runs.jsonl.gz`",
            "ns3_hash": self.ns3_hash,
            "duration_s": g.duration_s,
            "vtlab_seeds": g.seeds,
            "ns3_runs": len(NS3_RUNS),
            "tolerance": TOLERANCE,
        }
        return write_report(out, table, self.orderings, full)


def validate(
    grid: Grid,
    out: Path,
    *,
    jobs: int = 1,
    progress: bool = True,
    command: str = "",
    log: Callable[[str], None] | None = None,
    console: Any = None,
    stored: Sequence[Path] | None = None,
    store_ns3: Path | None = None,
) -> ValidateResult:
    """Run (or resume) the grid into ``out`` and write the report
    (:func:`vtlab.validation.protocol.validate`).  ns-3's runs come from ``stored``
    (default :func:`stored_ns3_runs_path`) unless ``grid.rerun_ns3``; raises
    :class:`ValidateError` when one is missing there.  ``store_ns3``: merge the grid's
    ns-3 runs into that file afterwards."""
    files = [] if grid.rerun_ns3 else list(stored or [stored_ns3_runs_path()])
    family = WifiFamily(
        grid,
        program_results_hash(WIFI_PROGRAM),
        core_build(),
        stored=files,
        command=command,
        log=log,
    )
    return run_chain(family, "wifi.cc", out, jobs, progress, console, store_ns3, log)


def run_chain(
    family: WifiFamily,
    program: str,
    out: Path,
    jobs: int,
    progress: bool,
    console: Any,
    store_ns3: Path | None,
    log: Callable[[str], None] | None,
) -> ValidateResult:
    """Run a family of the 802.11 chain (this one, or one built on it): without
    ``--rerun-ns3`` every ns-3 run of its grid must be stored (``program`` names the
    reference program in the error)."""
    if not family.grid.rerun_ns3:
        wanted = ((r.key, f"{r.cell.name} r{r.seed}") for r in family.cases() if r.side == NS3)
        require_stored(family.stored, wanted, record_key, program, family.ns3_hash)
    return protocol.validate(
        family,
        out,
        jobs=jobs,
        progress=progress,
        console=console,
        store_ns3=store_ns3,
        log=log,
    )
