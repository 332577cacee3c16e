"""The kernel family: ``vtlab validate kernel``, the ``linux`` profile against the real
Linux TCP of this machine, on the same links.

Each cell is a scenario (the V2G cable at a mean burst loss, or ``lte-cabin`` static or
moving) and a congestion control.  Its two sides, per seed:

* **kernel**: a bulk transfer of ``bytes`` from the flow's sender to its receiver
  between the two namespaces of ``vtlab emulate`` (:class:`vtlab.emulation.Emulation`),
  by the small programs of :mod:`.kernel_peer` with ``TCP_CONGESTION`` set per socket
  (``reno``, ``cubic``, ``bbr``), the kernel's default sysctls of a new namespace;
  the emulator's loss models draw from the streams of a simulation with that seed;
* **vtlab**: ``vtlab run`` of the same scenario (same spec, resolved by the same core)
  with ``tcp.profile = "linux"`` and the same seed, so its loss models draw from the
  same streams.

The compared quantity is the transfer's completion time (from the sender's
``connect``/SYN to the receiver's last byte; the simulation's ``completion_s`` is
measured between the same two events).  Per cell: the ratio of the mean completion
times vtlab/kernel with its Fieller interval and the verdict of
:func:`vtlab.validation.verdict.verdict`, the paired difference per seed
(same loss streams; the positions they hit differ where the kernel sends other
frames, e.g. ARP), and the retransmission counts.  The emulator's lateness (how long
after the links delivered a frame it wrote it) is recorded per run, so the report
says how faithful the emulation was.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtlab import _core
from vtlab.api import core_build
from vtlab.validation import protocol
from vtlab.validation.errors import ValidateError
from vtlab.validation.protocol import Family, ValidateResult
from vtlab.validation.report import f
from vtlab.validation.report import write_report as write_skeleton
from vtlab.validation.runner import VTLAB
from vtlab.validation.units import parse_loss
from vtlab.validation.verdict import mean_ci, paired_difference, ratio_ci, verdict

__all__ = [
    "CCS",
    "KERNEL",
    "QUICK",
    "Cell",
    "Grid",
    "KernelFamily",
    "Run",
    "agreement_row",
    "all_cells",
    "make_grid",
    "record_key",
    "spec",
    "validate",
]

#: The side of the real stack, as records name it.
KERNEL = "kernel"
#: The kernel's congestion controls and the vtlab controller each is compared with:
#: the kernel's ``reno`` is Reno's window laws with the kernel's own loss recovery
#: (SACK, RACK, PRR), which is vtlab's ``newreno`` under the ``linux`` profile (vtlab's
#: ``reno`` is RFC 5681 recovery without SACK).
CCS: dict[str, str] = {"reno": "newreno", "cubic": "cubic", "bbr": "bbr"}
#: The V2G cable's mean burst losses of the grid.
V2G_LOSSES = (0.0, 0.0025, 0.01, 0.05)
#: ``lte-cabin``'s motions: the vehicle's speed, km/h.
LTE_MOTIONS = {"static": 0.0, "moving": 60.0}
DEFAULT_RUNS = 10
QUICK_RUNS = 3
MAX_RUNS = 1000
#: 2 MB: 1.7 s on the 10 Mbit/s cable without loss (about 1400 segments, enough for
#: tens of loss events at 5 %), so the 120 V2G runs of the kernel take a few minutes.
DEFAULT_BYTES = 2_000_000
QUICK_BYTES = 1_000_000
MIN_BYTES, MAX_BYTES = 10_000, 1_000_000_000
#: ``--quick``: two cells (CI runs them).
QUICK = ("v2g-0%-cubic", "v2g-1%-cubic")
#: A kernel run that has not finished after this long is a failed run.
RUN_TIMEOUT_S = 300.0
PORT = 5201
PEER = Path(__file__).with_name("kernel_peer.py")


@dataclass(frozen=True)
class Cell:
    """One cell: a scenario and the kernel's congestion control."""

    preset: str  #: ``v2g`` or ``lte-cabin``
    cc: str  #: the kernel's name (a key of :data:`CCS`)
    loss: float = 0.0  #: v2g: the cable's mean burst loss
    motion: str = ""  #: lte-cabin: a key of :data:`LTE_MOTIONS`

    @property
    def name(self) -> str:
        if self.preset == "v2g":
            return f"v2g-{self.loss * 100:g}%-{self.cc}"
        return f"lte-{self.motion}-{self.cc}"


def all_cells() -> list[Cell]:
    """The full grid: the cable at every loss of :data:`V2G_LOSSES`, then
    ``lte-cabin`` static and moving, each with every congestion control."""
    cells = [Cell("v2g", cc, loss=x) for x in V2G_LOSSES for cc in CCS]
    cells += [Cell("lte-cabin", cc, motion=m) for m in LTE_MOTIONS for cc in CCS]
    return cells


def spec(cell: Cell, nbytes: int) -> dict[str, Any]:
    """The scenario of ``cell`` with the ``linux`` profile and vtlab's counterpart of
    the kernel's congestion control (the emulator ignores the TCP fields)."""
    out: dict[str, Any] = {
        "preset": cell.preset,
        "bytes": nbytes,
        "tcp": {"profile": "linux", "cc": CCS[cell.cc]},
    }
    if cell.preset == "v2g":
        out["loss"] = {"mean_loss": cell.loss}
    else:
        out["speed_kmh"] = LTE_MOTIONS[cell.motion]
    return out


@dataclass
class Grid:
    """What the kernel validation compares."""

    cells: list[Cell]
    runs: int = DEFAULT_RUNS  #: seeds 1..runs per cell
    nbytes: int = DEFAULT_BYTES
    realtime: bool = False  #: the emulator at real-time priority


def _split(values: Sequence[str] | None) -> list[str]:
    return [p.strip() for v in values or () for p in str(v).split(",") if p.strip()]


def _losses(values: Sequence[str] | None) -> list[float]:
    return [parse_loss(text) for text in _split(values)]


def make_grid(
    ccs: Sequence[str] | None = None,
    losses: Sequence[str] | None = None,
    runs: int | None = None,
    nbytes: int | None = None,
    *,
    quick: bool = False,
    lte: bool = True,
    realtime: bool = False,
) -> Grid:
    """The grid a command line asks for: every cell of :func:`all_cells` whose
    congestion control is in ``ccs`` and, for the cable, whose loss is in ``losses``
    (``lte``: with the ``lte-cabin`` cells; ``quick``: :data:`QUICK`,
    :data:`QUICK_RUNS` and :data:`QUICK_BYTES` unless given).  Raises
    :class:`ValidateError`."""
    names = _split(ccs)
    for n in names:
        if n not in CCS:
            raise ValidateError(
                "--cc", f"unknown congestion control '{n}' (allowed: reno, cubic, bbr)"
            )
    wanted = _losses(losses)
    if quick:
        cells = [c for c in all_cells() if c.name in QUICK]
    else:
        cells = [
            c
            for c in all_cells()
            if (not names or c.cc in names)
            and (c.preset != "v2g" or not wanted or any(abs(c.loss - x) < 1e-12 for x in wanted))
            and (lte or c.preset == "v2g")
        ]
    if not cells:
        raise ValidateError("--loss", "no cell of the grid matches the options")
    n = runs if runs is not None else (QUICK_RUNS if quick else DEFAULT_RUNS)
    if not 2 <= n <= MAX_RUNS:
        raise ValidateError("--runs", f"{n} is outside [2, {MAX_RUNS}]")
    size = nbytes if nbytes is not None else (QUICK_BYTES if quick else DEFAULT_BYTES)
    if not MIN_BYTES <= size <= MAX_BYTES:
        raise ValidateError("--bytes", f"{size} B is outside [{MIN_BYTES}, {MAX_BYTES}] B")
    return Grid(cells, n, size, realtime)


# -- runs and records -----------------------------------------------------------------------


def run_key(side: str, cell: str, seed: int, nbytes: int, source: str) -> str:
    """The cache key of one run: side, cell, seed, size and what made it (vtlab's
    core; for the kernel also the kernel release)."""
    return json.dumps([side, cell, int(seed), int(nbytes), source])


def record_key(rec: Mapping[str, Any]) -> str:
    """:func:`run_key` of a run record."""
    return run_key(rec["side"], rec["cell"], rec["seed"], rec["bytes"], rec["source"])


@dataclass
class Run:
    """One run of one side: a case of :class:`KernelFamily`."""

    side: str
    cell: Cell
    seed: int
    nbytes: int
    source: str
    realtime: bool = False

    @property
    def key(self) -> str:
        return run_key(self.side, self.cell.name, self.seed, self.nbytes, self.source)

    @property
    def label(self) -> str:
        return f"{self.side} {self.cell.name} seed {self.seed}"


def _record(run: Run, body: Mapping[str, Any], wall_s: float) -> dict[str, Any]:
    return {
        "side": run.side,
        "cell": run.cell.name,
        "seed": run.seed,
        "bytes": run.nbytes,
        "source": run.source,
        **body,
        "wall_s": wall_s,
    }


def run_vtlab(run: Run) -> dict[str, Any]:
    """``vtlab run --profile linux`` of the cell's scenario and seed, as a record."""
    started = time.perf_counter()
    flows = _core.run(json.dumps(spec(run.cell, run.nbytes)), run.seed, False)["flows"]
    body = {
        "completed": bool(flows["completed"][0]),
        "completion_s": float(flows["completion_s"][0]),
        "retransmissions": int(flows["retransmissions"][0]),
        "rto_count": int(flows["rto_count"][0]),
        "tlp_probes": int(flows["tlp_probes"][0]),
        "losses": int(flows["drops_link_error"][0]),
        "queue_drops": int(flows["drops_queue"][0]) + int(flows["drops_aqm"][0]),
    }
    return _record(run, body, time.perf_counter() - started)


def _peer(*args: str) -> list[str]:
    return [sys.executable, str(PEER), *args]


def _last_json(text: str) -> dict[str, Any]:
    lines = [ln for ln in text.splitlines() if ln.startswith("{")]
    if not lines:
        raise RuntimeError(f"the transfer printed no result: {text.strip()[-300:]!r}")
    return dict(json.loads(lines[-1]))


def lateness(counters: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """The emulator's lateness per way (``far->near``, ``near->far``): frames, p50,
    p99 and max in ns, from the counters :meth:`Emulation.close` returns."""
    ways = ("far->near", "near->far")
    return {
        way: {k: int(x[k]) for k in ("frames", "p50_ns", "p99_ns", "max_ns")}
        for way, x in zip(ways, counters["lateness"], strict=True)
    }


def run_kernel(run: Run) -> dict[str, Any]:
    """The kernel's transfer through ``vtlab emulate`` of the cell's scenario and
    seed, as a record (raises ``RuntimeError`` when a peer fails)."""
    from vtlab.emulation import Emulation

    started = time.perf_counter()
    em = Emulation(spec(run.cell, run.nbytes), seed=run.seed, realtime=run.realtime)
    with em:
        recv = em.popen(_peer("recv", str(PORT)), "near", stdout=subprocess.PIPE, text=True)
        assert recv.stdout is not None
        if recv.stdout.readline().strip() != "ready":
            raise RuntimeError("the receiver did not start")
        args = _peer("send", em.addresses["near"]["ipv4"], str(PORT), str(run.nbytes), run.cell.cc)
        done = em.run(args, "far", timeout=RUN_TIMEOUT_S, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the sender failed: {done.stderr.strip()[-300:]}")
        out, _ = recv.communicate(timeout=RUN_TIMEOUT_S)
        if recv.returncode != 0:
            raise RuntimeError("the receiver failed")
        sent, got = _last_json(done.stdout), _last_json(out)
    counters = em.counters or {}
    lost = sum(int(c["drops_loss"]) + int(c["drops_harq"]) for c in counters["counters"])
    queued = sum(int(c["drops_queue"]) + int(c["drops_aqm"]) for c in counters["counters"])
    body = {
        "completed": int(got["bytes"]) == run.nbytes,
        "completion_s": float(got["last_byte_s"]) - float(sent["start_s"]),
        "retransmissions": int(sent["retransmissions"]),
        "losses": lost,
        "queue_drops": queued,
        "rto_count": int(sent["netstat"]["TCPTimeouts"]),
        "tlp_probes": int(sent["netstat"]["TCPLossProbes"]),
        "lost_retransmits": int(sent["netstat"]["TCPLostRetransmit"]),
        "cc_used": sent["cc"],
        "kernel": os.uname().release,
        "sysctls_far": sent["sysctls"],
        "sysctls_near": got["sysctls"],
        "lateness": lateness(counters),
        "realtime": run.realtime,
    }
    return _record(run, body, time.perf_counter() - started)


def plan(grid: Grid, vtlab_source: str, kernel_source: str) -> list[Run]:
    """Every run of the grid: the kernel's first (they take real time)."""
    seeds = range(1, grid.runs + 1)
    kernel = [
        Run(KERNEL, c, s, grid.nbytes, kernel_source, grid.realtime)
        for c in grid.cells
        for s in seeds
    ]
    sim = [Run(VTLAB, c, s, grid.nbytes, vtlab_source) for c in grid.cells for s in seeds]
    return kernel + sim


# -- comparison -----------------------------------------------------------------------------


def _mean(xs: Sequence[float]) -> float:
    return statistics.fmean(xs) if xs else float("nan")


def agreement_row(
    cell: Cell, vt: Sequence[Mapping[str, Any]], kn: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """One cell's row: mean completion times (s) of both sides, their ratio
    vtlab/kernel with its Fieller interval (:func:`~vtlab.validation.verdict.ratio_ci`)
    and verdict, the mean paired difference over the seeds both sides ran, the mean
    retransmissions and losses, and the emulator's worst p99 lateness of the cell."""
    t_vt = [float(r["completion_s"]) for r in vt if r["completed"]]
    t_kn = [float(r["completion_s"]) for r in kn if r["completed"]]
    rci = ratio_ci(t_vt, t_kn)
    by_seed = {r["seed"]: float(r["completion_s"]) for r in kn if r["completed"]}
    pairs = [(float(r["completion_s"]), by_seed[r["seed"]]) for r in vt if r["seed"] in by_seed]
    pd = paired_difference([a for a, _ in pairs], [b for _, b in pairs])
    late = [x["p99_ns"] for r in kn for x in r["lateness"].values() if x["frames"]]
    return {
        "case": cell.name,
        "preset": cell.preset,
        "loss": cell.loss,
        "motion": cell.motion,
        "cc": cell.cc,
        "vtlab_cc": CCS[cell.cc],
        "kernel_s": _mean(t_kn),
        "kernel_ci_s": mean_ci(t_kn)[1],
        "vtlab_s": _mean(t_vt),
        "vtlab_ci_s": mean_ci(t_vt)[1],
        "ratio": rci.ratio,
        "ratio_ci_low": rci.low,
        "ratio_ci_high": rci.high,
        "verdict": verdict(rci.ratio, rci.contains_one),
        "paired_diff_s": pd.mean,
        "paired_diff_ci_s": pd.half,
        "kernel_retx": _mean([float(r["retransmissions"]) for r in kn]),
        "vtlab_retx": _mean([float(r["retransmissions"]) for r in vt]),
        "kernel_losses": _mean([float(r["losses"]) for r in kn]),
        "vtlab_losses": _mean([float(r["losses"]) for r in vt]),
        "kernel_rto": _mean([float(r["rto_count"]) for r in kn]),
        "vtlab_rto": _mean([float(r["rto_count"]) for r in vt]),
        "kernel_tlp": _mean([float(r["tlp_probes"]) for r in kn]),
        "vtlab_tlp": _mean([float(r["tlp_probes"]) for r in vt]),
        "kernel_queue_drops": _mean([float(r["queue_drops"]) for r in kn]),
        "vtlab_queue_drops": _mean([float(r["queue_drops"]) for r in vt]),
        "late_p99_max_us": max(late) / 1e3 if late else float("nan"),
        "kernel_runs": len(t_kn),
        "vtlab_runs": len(t_vt),
    }


# -- the report -----------------------------------------------------------------------------

#: The closing paragraph of the report.
FILES = (
    "Files: `agreement.csv` / `agreement.parquet` (this table), `runs.jsonl` (every "
    "run of both sides, with the kernel's sysctls and the emulator's lateness per run; "
    "the cache that lets an interrupted validation resume)."
)
CSV_OPTIONS: dict[str, Any] = {"float_format": "%.6g"}


def _provenance(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The kernel release and the sysctls of the namespaces the runs used (one line per
    distinct set)."""
    kn = [r for r in records if r["side"] == KERNEL]
    if not kn:
        return ["No kernel run finished."]
    releases = sorted({str(r["kernel"]) for r in kn})
    seen = sorted(
        {json.dumps(r[k], sort_keys=True) for r in kn for k in ("sysctls_far", "sysctls_near")}
    )
    lines = [f"Kernel {', '.join(releases)}; TCP sysctls in the emulation's namespaces:", ""]
    for s in seen:
        lines.append("* " + ", ".join(f"`{k}` = {v}" for k, v in json.loads(s).items()))
    used = sorted({f"{r['cell'].rsplit('-', 1)[1]}→{r['cc_used']}" for r in kn})
    lines += ["", f"`TCP_CONGESTION` per socket (asked → used): {', '.join(used)}."]
    return lines


def _lateness(records: Sequence[Mapping[str, Any]]) -> list[str]:
    p99 = sorted(
        x["p99_ns"] / 1e3
        for r in records
        if r["side"] == KERNEL
        for x in r["lateness"].values()
        if x["frames"]
    )
    top = max(
        (x["max_ns"] / 1e3 for r in records if r["side"] == KERNEL for x in r["lateness"].values()),
        default=float("nan"),
    )
    if not p99:
        return []
    return [
        "",
        f"Emulator lateness (frames written after the links delivered them), over "
        f"{len(p99)} run-directions: p99 median {f(statistics.median(p99), 0)} µs, "
        f"90th percentile of the p99s {f(p99[int(0.9 * (len(p99) - 1))], 0)} µs, "
        f"worst p99 {f(p99[-1], 0)} µs, worst single frame {f(top, 0)} µs.",
    ]


def _priority(realtime: bool) -> str:
    return "at real-time priority (`--realtime`)" if realtime else "at normal priority"


def _header(table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> list[str]:
    counts = {v: sum(r["verdict"] == v for r in table) for v in ("agree", "consistent", "differs")}
    return [
        "# The `linux` profile against the kernel's TCP, on the same links",
        "",
        f"Generated by `{meta['command']}` on {meta['date']}. vtlab {meta['vtlab_version']}; "
        f"{meta['bytes']} B per transfer; seeds 1..{meta['runs']} per cell on both sides; "
        f"emulator {_priority(meta['realtime'])}.",
        "",
        *_provenance(meta["records"]),
        *_lateness(meta["records"]),
        "",
        f"**{counts['agree']} of {len(table)} cells agree**, {counts['consistent']} consistent, "
        f"{counts['differs']} differ (ratio of mean completion times vtlab/kernel within "
        "±10 %; consistent: within ±20 % with 1 inside the Fieller 95 % interval).",
        "",
    ]


def _table(table: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [
        "| cell | kernel s | vtlab s | ratio (95 % CI) | verdict | paired diff s "
        "| retransmissions kernel / vtlab | losses kernel / vtlab "
        "| queue drops kernel / vtlab | RTOs kernel / vtlab | TLPs kernel / vtlab "
        "| late p99 max µs |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        lines.append(
            f"| {r['case']} | {f(r['kernel_s'])} ± {f(r['kernel_ci_s'])} | "
            f"{f(r['vtlab_s'])} ± {f(r['vtlab_ci_s'])} | {f(r['ratio'])} "
            f"({f(r['ratio_ci_low'])}–{f(r['ratio_ci_high'])}) | {r['verdict']} | "
            f"{f(r['paired_diff_s'])} ± {f(r['paired_diff_ci_s'])} | "
            f"{f(r['kernel_retx'], 1)} / {f(r['vtlab_retx'], 1)} | "
            f"{f(r['kernel_losses'], 1)} / {f(r['vtlab_losses'], 1)} | "
            f"{f(r['kernel_queue_drops'], 1)} / {f(r['vtlab_queue_drops'], 1)} | "
            f"{f(r['kernel_rto'], 1)} / {f(r['vtlab_rto'], 1)} | "
            f"{f(r['kernel_tlp'], 1)} / {f(r['vtlab_tlp'], 1)} | "
            f"{f(r['late_p99_max_us'], 0)} |"
        )
    lines += [
        "",
        "Cells are `v2g-<mean burst loss>-<cc>` (the cable's loss, bursts of 1–4) and "
        "`lte-<static|moving>-<cc>`; the kernel's `reno` is compared with vtlab's "
        "`newreno` (Reno's window laws; both recover with SACK, RACK and PRR). Times are "
        "means ± 95 % half-widths of the completion time, SYN to last byte; the paired "
        "difference is vtlab − kernel per seed (the same loss streams). Losses: frames "
        "the loss models dropped (kernel: every frame of the emulated path, ARP "
        "included; vtlab: the flow's packets). docs/validation.md explains the cells "
        "that stray.",
    ]
    return lines


def write_report(
    out: Path, table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]
) -> dict[str, Path]:
    """``agreement.csv``, ``agreement.parquet`` and ``report.md`` into ``out``."""
    return write_skeleton(
        out,
        table,
        [_header(table, meta), _table(table)],
        errors=list(meta.get("errors", [])),
        files=FILES,
        csv_options=CSV_OPTIONS,
    )


# -- the family -----------------------------------------------------------------------------


class KernelFamily(Family):
    """The kernel grid as a :class:`~vtlab.validation.protocol.Family`."""

    name = "kernel"

    def __init__(self, grid: Grid, vtlab_source: str, *, command: str = "") -> None:
        self.grid = grid
        self.vtlab_source = vtlab_source
        self.kernel_source = f"linux {os.uname().release}; {vtlab_source}"
        self.command = command
        self.records: list[dict[str, Any]] = []

    def cases(self) -> list[Run]:  # type: ignore[override]
        return plan(self.grid, self.vtlab_source, self.kernel_source)

    def run(self, case: Run) -> dict[str, Any]:
        return run_vtlab(case) if case.side == VTLAB else run_kernel(case)

    def record_key(self, record: Mapping[str, Any]) -> str:
        return record_key(record)

    def compare(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        self.records = [dict(r) for r in records]
        by: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for rec in records:
            by.setdefault((rec["side"], rec["cell"]), []).append(rec)
        return [
            agreement_row(c, by.get((VTLAB, c.name), []), by.get((KERNEL, c.name), []))
            for c in self.grid.cells
        ]

    def write_report(
        self, out: Path, table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]
    ) -> dict[str, Path]:
        g = self.grid
        full = {
            **meta,
            "command": self.command or "vtlab validate kernel",
            "vtlab_version": _core.version(),
            "bytes": g.nbytes,
            "runs": g.runs,
            "realtime": g.realtime,
            "records": self.records,
        }
        return write_report(out, table, full)


def validate(
    grid: Grid,
    out: Path,
    *,
    progress: bool = True,
    command: str = "",
    log: Callable[[str], None] | None = None,
    console: Any = None,
) -> ValidateResult:
    """Run (or resume) the grid into ``out`` and write the report
    (:func:`vtlab.validation.protocol.validate`), one run at a time: the kernel's
    runs take real time and a process holds one emulation at a time."""
    from vtlab.emulation import TUN_DEFAULT, TUN_ENV, preflight

    preflight(os.environ.get(TUN_ENV) or TUN_DEFAULT)
    family = KernelFamily(grid, core_build(), command=command)
    return protocol.validate(family, out, jobs=1, progress=progress, console=console, log=log)
