"""The ISO 15118 family: ``vtlab validate iso15118``, vtlab's request/response sessions
against ns-3.

The reference program ``validation/ns3/iso15118.cc`` (validation/ns3/README-iso15118.md)
runs a session between a vehicle (EVCC) and its charger (SECC) over the V2G
power-line link in ns-3.44: one TCP connection, the vehicle writes a request, the
charger answers as soon as the request is whole, the next request follows the
response no sooner than its period.  Each cell is 10 minutes of CurrentDemand at
4 Hz (2400 exchanges of 60 B requests and 70 B responses, deadline 250 ms, misses
counted, not aborting) under the burst loss model at the same mean rate in both
directions, ns-3 TCP defaults (NewReno, SACK, delayed ACK 2/200 ms, minimum RTO 1 s)
with **timestamps off**: ns-3.44 echoes a stale timestamp on ACKs that ride on data
(``TcpSocketBase::ProcessOptionTimestamp`` updates its echo only for segments at or
below ``m_highTxAck``, which only pure ACKs advance), so with timestamps its RTO grows
with the session's age; vtlab does not copy that defect (docs/iso15118.md).  ns-3's
arguments come from vtlab's scenario of the cell, resolved
(:func:`vtlab.ns3.iso15118.iso15118_args`).

Paired (:mod:`vtlab.validation.paired`): vtlab loses the packets ns-3 lost (the
positions ns-3's error models report with ``--traceLoss``, replayed by the ``replay``
loss model), so the two runs differ only by their TCP and application models.  Per
cell, the response-time percentiles (p50, p90, p99, p99.9, nearest rank, pooled over
the seeds) must agree within ±10 % (:data:`TOLERANCE`); the fraction of missed
deadlines, and vtlab with its own loss draws, are shown beside them.  The paired runs
need ns-3's first, so :func:`validate` runs the grid in two passes on the one driver:
ns-3's side, then vtlab's paired and own runs.  ns-3's runs are stored in
``validation/iso15118/ns3/runs.jsonl.gz`` (keyed by the results hash of
``iso15118.cc``); ``--rerun-ns3`` recomputes them with the ns-3 wheel.  ``--replay
LOSS:SEED`` compares one run exchange by exchange (:mod:`.iso15118_replay`).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vtlab import _core
from vtlab.api import core_build
from vtlab.ns3.iso15118 import iso15118_args, parse_iso15118_output
from vtlab.ns3.process import run_child_streams
from vtlab.ns3.program import (
    ISO15118_PROGRAM,
    Ns3Binary,
    build_program,
    program_results_hash,
)
from vtlab.packagedata import validation_dir
from vtlab.validation import protocol
from vtlab.validation.cache import require_stored
from vtlab.validation.errors import ValidateError
from vtlab.validation.iso15118_report import write_report
from vtlab.validation.paired import TRACE_LOSS, Drops, replay_loss, traced_losses
from vtlab.validation.protocol import Family, ValidateResult
from vtlab.validation.runner import NS3, VTLAB
from vtlab.validation.verdict import verdict

__all__ = [
    "LOSSES",
    "QUANTILES",
    "QUICK_SEEDS",
    "SEEDS",
    "STEP",
    "TOLERANCE",
    "Grid",
    "Iso15118Family",
    "Run",
    "agreement_rows",
    "cell_name",
    "make_grid",
    "quantile",
    "record_key",
    "replay_spec",
    "stored_ns3_runs_path",
    "summarize",
    "validate",
    "vtlab_spec",
]

#: Tolerance of each percentile: the issue's ±10 % (no ``consistent`` band).
TOLERANCE = 0.10
#: The session step of every cell.
STEP: dict[str, Any] = {
    "name": "CurrentDemand",
    "request": 60,
    "response": 70,
    "timeout": 0.25,
    "repeats": 2400,
    "period": 0.25,
}
#: Mean loss per direction of the cells.
LOSSES = (0.0, 0.01, 0.05)
QUANTILES = (0.5, 0.9, 0.99, 0.999)
#: Seeds per cell on each side (ns-3: RngRun 1..100). The tail is a ladder of RTO
#: backoffs (1, 3, 7, 15, 31 s): p99.9 of one cell is the 240th longest of 240,000
#: exchanges, so with fewer seeds it jumps a rung on sampling noise alone.
SEEDS = 100
QUICK_SEEDS = 10
#: The kinds of run: ns-3's with its losses traced, vtlab's replaying them, and
#: vtlab's with its own loss draws.
TRACED, PAIRED, OWN = "traced", "paired", "own"


def stored_ns3_runs_path() -> Path:
    """ns-3's stored runs: ``iso15118/ns3/runs.jsonl.gz`` of the validation data vtlab
    ships (:func:`vtlab.packagedata.validation_dir`)."""
    return validation_dir() / "iso15118" / "ns3" / "runs.jsonl.gz"


def cell_name(loss: float) -> str:
    return f"cd-loss{loss:g}"


def vtlab_spec(loss: float) -> dict[str, Any]:
    """The v2g scenario that mirrors ``iso15118.cc`` for one cell."""
    burst = {"model": "burst", "mean_loss": loss}
    return {
        "preset": "v2g",
        "qdisc": "none",  # iso15118.cc disables flow control: ns-3 installs no qdisc
        "loss": burst,
        "reverse_loss": burst,
        "tcp": {"timestamps": False, "data_retries": 100},
        "session": {"profile": "custom", "abort_on_miss": False, "steps": [dict(STEP)]},
    }


def replay_spec(loss: float, drops: Drops) -> dict[str, Any]:
    """The cell's scenario with ns-3's loss decisions instead of vtlab's own draws."""
    spec = vtlab_spec(loss)
    spec["loss"] = replay_loss(drops["toward_evcc"])
    spec["reverse_loss"] = replay_loss(drops["toward_secc"])
    return spec


# -- statistics -------------------------------------------------------------------------------


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest rank, as the engine's session percentiles: the smallest value with at
    least a fraction ``q`` of the values at or below it; NaN when empty."""
    if not sorted_values:
        return math.nan
    rank = min(max(math.ceil(q * len(sorted_values)), 1), len(sorted_values))
    return sorted_values[rank - 1]


def summarize(times: Sequence[float | None], deadline: float) -> dict[str, float]:
    """Percentiles (:data:`QUANTILES`) of the answered exchanges, the number of
    exchanges and the fraction that missed ``deadline`` (unanswered ones included)."""
    answered = sorted(t for t in times if t is not None and not math.isnan(t))
    out = {f"p{q * 100:g}": quantile(answered, q) for q in QUANTILES}
    out["exchanges"] = float(len(times))
    out["miss_fraction"] = (
        sum(t is None or math.isnan(t) or t > deadline for t in times) / len(times)
        if times
        else math.nan
    )
    return out


def _agrees(vtlab: float, ns3: float) -> bool:
    """Whether vtlab's percentile is within :data:`TOLERANCE` of ns-3's."""
    ratio = vtlab / ns3 if ns3 else math.nan
    return verdict(ratio, False, TOLERANCE, TOLERANCE) == "agree"


def agreement_rows(
    losses: Sequence[float], times: Mapping[tuple[str, float], Sequence[float | None]]
) -> list[dict[str, Any]]:
    """One row per cell from the pooled response times of each kind of run
    (``times[(kind, loss)]``, kinds :data:`TRACED` (ns-3), :data:`PAIRED`, :data:`OWN`):
    each side's :func:`summarize`, whether each paired percentile agrees with ns-3's,
    and the cell's verdict (``agree`` when all do)."""
    deadline = float(STEP["timeout"])
    rows = []
    for loss in losses:
        ns = summarize(times.get((TRACED, loss), []), deadline)
        vt = summarize(times.get((PAIRED, loss), []), deadline)
        own = summarize(times.get((OWN, loss), []), deadline)
        verdicts = {k: _agrees(vt[k], ns[k]) for k in ns if k.startswith("p")}
        rows.append(
            {
                "cell": cell_name(loss),
                "loss": loss,
                "ns3": ns,
                "vtlab": vt,
                "vtlab_own_losses": own,
                "agree": verdicts,
                "verdict": "agree" if all(verdicts.values()) else "differs",
            }
        )
    return rows


# -- the grid, runs and records -----------------------------------------------------------------


@dataclass
class Grid:
    """What the ISO 15118 validation compares."""

    seeds: int = SEEDS  #: seeds 1..seeds per cell on each side
    losses: tuple[float, ...] = LOSSES
    rerun_ns3: bool = False  #: run ns-3 instead of using its stored runs


def make_grid(seeds: int | None = None, quick: bool = False, rerun_ns3: bool = False) -> Grid:
    """The grid a command line asks for (``quick``: :data:`QUICK_SEEDS` unless given);
    raises :class:`ValidateError`."""
    n = seeds if seeds is not None else (QUICK_SEEDS if quick else SEEDS)
    if not 1 <= n <= SEEDS:
        raise ValidateError("--seeds", f"{n} is outside [1, {SEEDS}] (the stored ns-3 runs)")
    return Grid(n, LOSSES, rerun_ns3)


def run_key(
    side: str, kind: str, loss: float, seed: int, source_hash: str, paired_with: str = ""
) -> str:
    """The cache key of one run: side, kind, loss, seed, the hash of the simulator that
    made it (vtlab's core, or ``iso15118.cc``'s results hash) and, for a paired run,
    the results hash of the ns-3 program whose losses it replays."""
    return json.dumps([side, kind, round(float(loss), 9), int(seed), source_hash, paired_with])


def record_key(rec: Mapping[str, Any]) -> str:
    """:func:`run_key` of a run record."""
    return run_key(
        rec["side"],
        rec["kind"],
        rec["loss"],
        rec["seed"],
        rec["source_hash"],
        rec.get("paired_with", ""),
    )


@dataclass
class Run:
    """One run of one side: a case of :class:`Iso15118Family`."""

    side: str
    kind: str  #: TRACED (ns-3), PAIRED or OWN (vtlab)
    loss: float
    seed: int
    source_hash: str
    paired_with: str = ""
    spec_json: str = ""  #: vtlab side
    args: list[str] = field(default_factory=list)  #: ns-3 side: iso15118.cc's arguments

    @property
    def key(self) -> str:
        return run_key(
            self.side, self.kind, self.loss, self.seed, self.source_hash, self.paired_with
        )

    @property
    def label(self) -> str:
        return f"{self.side} {self.kind} {cell_name(self.loss)} seed {self.seed}"


def _record(run: Run, body: Mapping[str, Any], wall_s: float) -> dict[str, Any]:
    return {
        "side": run.side,
        "kind": run.kind,
        "loss": run.loss,
        "seed": run.seed,
        "source_hash": run.source_hash,
        **({"paired_with": run.paired_with} if run.paired_with else {}),
        **body,
        "wall_s": wall_s,
    }


def run_ns3(run: Run, binary: Ns3Binary) -> dict[str, Any]:
    """One ns-3 run (a child process) with its losses traced, as a record: why the
    session ended, the response times (s, rounded to 0.1 µs; None for a request never
    answered) and the lost positions in each direction."""
    started = time.perf_counter()
    out, err = run_child_streams([str(binary.path), *run.args, TRACE_LOSS])
    messages, summary = parse_iso15118_output(out)
    times = [
        None if m["response_time_s"] is None else round(m["response_time_s"], 7) for m in messages
    ]
    body = {"end": summary.get("end"), "response_time_s": times, "drops": traced_losses(err)}
    return _record(run, body, time.perf_counter() - started)


def run_vtlab(run: Run) -> dict[str, Any]:
    """One vtlab run (in this process; the core runs without the GIL) as a record: the
    response times (None for a request never answered)."""
    started = time.perf_counter()
    out = _core.run(run.spec_json, run.seed, False)
    times = [
        None if t is None or math.isnan(t) else float(t) for t in out["messages"]["response_time_s"]
    ]
    return _record(run, {"response_time_s": times}, time.perf_counter() - started)


def plan(
    grid: Grid,
    ns3_hash: str,
    vtlab_hash: str,
    ns3_runs: Mapping[tuple[float, int], Mapping[str, Any]] | None,
) -> list[Run]:
    """Every run of the grid: ns-3's, then (with ``ns3_runs``, ns-3's records by (loss,
    seed)) vtlab's paired runs of those records and its runs with its own losses."""
    ns_runs: list[Run] = []
    vt_runs: list[Run] = []
    for loss in grid.losses:
        own_json = json.dumps(vtlab_spec(loss))
        expanded = json.loads(_core.expand(own_json))
        for seed in range(1, grid.seeds + 1):
            args = iso15118_args(expanded, seed)
            ns_runs.append(Run(NS3, TRACED, loss, seed, ns3_hash, args=args))
            if ns3_runs is None:
                continue
            rec = ns3_runs.get((loss, seed))
            if rec is not None:
                paired = json.dumps(replay_spec(loss, rec["drops"]))
                vt_runs.append(Run(VTLAB, PAIRED, loss, seed, vtlab_hash, ns3_hash, paired))
            vt_runs.append(Run(VTLAB, OWN, loss, seed, vtlab_hash, spec_json=own_json))
    return ns_runs + vt_runs


# -- the family -------------------------------------------------------------------------------


class Iso15118Family(Family):
    """The ISO 15118 grid as a :class:`~vtlab.validation.protocol.Family`: first ns-3's
    side alone (:attr:`only`), then, after :meth:`pair_with`, both."""

    name = "iso15118"

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
        self.only = "ns3"
        self.ns3_runs: dict[tuple[float, int], Mapping[str, Any]] | None = None
        self.ns3_errors: list[str] = []
        self._binary: Ns3Binary | None = None
        self._lock = threading.Lock()

    def pair_with(self, first: ValidateResult) -> None:
        """Plan the vtlab runs from ns-3's side (the records and errors of the first
        pass) and compare both from now on."""
        self.ns3_runs = {(float(r["loss"]), int(r["seed"])): r for r in first.records}
        self.ns3_errors = list(first.errors)
        self.only = None

    def cases(self) -> list[Run]:  # type: ignore[override]
        runs = plan(self.grid, self.ns3_hash, self.vtlab_hash, self.ns3_runs)
        if self.ns3_runs is None:
            return runs
        return [r for r in runs if r.side == VTLAB or (r.loss, r.seed) in self.ns3_runs]

    def binary(self) -> Ns3Binary:
        """``iso15118.cc``, compiled on the first ns-3 run (:func:`build_program`)."""
        with self._lock:
            if self._binary is None:
                self._binary = build_program(ISO15118_PROGRAM, log=self.log)
            return self._binary

    def run(self, case: Run) -> dict[str, Any]:
        return run_vtlab(case) if case.side == VTLAB else run_ns3(case, self.binary())

    def record_key(self, record: Mapping[str, Any]) -> str:
        return record_key(record)

    def compare(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        times: dict[tuple[str, float], list[float | None]] = {}
        for rec in records:
            times.setdefault((rec["kind"], float(rec["loss"])), []).extend(rec["response_time_s"])
        return agreement_rows(self.grid.losses, times)

    def write_report(
        self, out: Path, table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]
    ) -> dict[str, Path]:
        full = {
            **meta,
            "errors": [*self.ns3_errors, *meta.get("errors", [])],
            "command": self.command or "vtlab validate iso15118",
            "seeds": self.grid.seeds,
            "rerun": self.grid.rerun_ns3,
            "ns3_hash": self.ns3_hash,
            "tolerance": TOLERANCE,
        }
        return write_report(out, table, full)


def _check_stored(grid: Grid, ns3_hash: str, stored: Sequence[Path]) -> None:
    """Without ``--rerun-ns3`` every ns-3 run of the grid must be stored."""
    wanted = (
        (run_key(NS3, TRACED, loss, seed, ns3_hash), f"{cell_name(loss)} seed {seed}")
        for loss in grid.losses
        for seed in range(1, grid.seeds + 1)
    )
    require_stored(stored, wanted, record_key, "iso15118.cc", ns3_hash)


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
    """Run (or resume) the grid into ``out`` and write the report, in two passes of
    :func:`vtlab.validation.protocol.validate`: ns-3's runs (stored ones from
    ``stored``, default :func:`stored_ns3_runs_path`, unless ``grid.rerun_ns3``;
    :class:`ValidateError` when one is missing there), then vtlab's.  ``store_ns3``:
    merge the grid's ns-3 runs into that file after the first pass."""
    files = [] if grid.rerun_ns3 else list(stored or [stored_ns3_runs_path()])
    ns3_hash = program_results_hash(ISO15118_PROGRAM)
    if not grid.rerun_ns3:
        _check_stored(grid, ns3_hash, files)
    family = Iso15118Family(grid, ns3_hash, core_build(), stored=files, command=command, log=log)
    common: dict[str, Any] = {"jobs": jobs, "progress": progress, "console": console, "log": log}
    first = protocol.validate(family, out, store_ns3=store_ns3, **common)
    family.pair_with(first)
    second = protocol.validate(family, out, **common)
    return ValidateResult(
        second.table,
        second.paths,
        first.runs_done + second.runs_done,
        second.runs_cached,
        [*first.errors, *second.errors],
        first.wall_s + second.wall_s,
        second.records,
    )
