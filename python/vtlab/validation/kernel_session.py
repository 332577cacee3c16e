"""The session regime of the kernel family (``vtlab validate kernel --session``): one-
segment request/response exchanges over the V2G cable, the kernel's TCP through
``vtlab emulate`` against the ``linux`` profile's session model, on the same seeds.

The pattern is ISO 15118's CurrentDemand loop: the vehicle (EVCC, the far namespace
of a session scenario) writes a 100 B request every 220 ms (no earlier than 220 ms
after the previous one, and only once the previous response is in), the charger
(SECC, the near namespace) answers each with 100 B at once; a response later than
250 ms after its request is a deadline miss (counted, the session goes on).  Both
directions of the cable lose with the burst model at the cell's mean loss, bursts
of exactly 1 or of 1–4 frames.  vtlab runs the same scenario as a ``custom``
session (:func:`spec`).

Per cell the response times of all seeds are pooled (p50, p99, p99.9, the misses);
the verdict compares the mean response time per seed (Fieller, as the bulk cells),
and the misses and the recovered exchanges (those that met a loss: response time
above :data:`RECOVERED_S`) are set side by side, paired by seed.

Each kernel run is a child process of its own (``python -m
vtlab.validation.kernel_session RUN``): a process holds one emulation at a time, and
the runs, which spend their time waiting, go ``jobs`` at a time.
"""

from __future__ import annotations

import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vtlab import _core
from vtlab.ns3.process import run_child_streams
from vtlab.validation import protocol
from vtlab.validation.errors import ValidateError
from vtlab.validation.protocol import Family, ValidateResult
from vtlab.validation.report import f
from vtlab.validation.report import write_report as write_skeleton
from vtlab.validation.runner import VTLAB
from vtlab.validation.verdict import mean_ci, paired_difference, ratio_ci, verdict
from vtlab.workers import die_with

__all__ = [
    "BURSTS",
    "SESSION_LOSSES",
    "SessionCell",
    "quantile",
    "session_row",
    "spec",
]

KERNEL = "kernel"
#: Mean loss of each direction of the cable.
SESSION_LOSSES = (0.0001, 0.001, 0.01)
#: Burst lengths: exactly one frame, or 1 to 4 (the cable's default).
BURSTS = {"b1": (1, 1), "b1-4": (1, 4)}
REQUEST_B = RESPONSE_B = 100
PERIOD_S = 0.220
DEADLINE_S = 0.250
DEFAULT_EXCHANGES = 300
#: A response slower than this met a loss (loss-free: 2.05 ms over the cable).
RECOVERED_S = 0.010
PORT = 15118
PEER = Path(__file__).with_name("kernel_peer.py")


@dataclass(frozen=True)
class SessionCell:
    """One cell of the session regime."""

    loss: float
    burst: str  #: a key of :data:`BURSTS`
    cc: str = "cubic"

    @property
    def name(self) -> str:
        return f"session-{self.loss * 100:g}%-{self.burst}-{self.cc}"


def spec(cell: SessionCell, exchanges: int) -> dict[str, Any]:
    """The v2g scenario of ``cell``: the session loop as a ``custom`` step, both
    directions of the cable lossy, the ``linux`` profile."""
    lo, hi = BURSTS[cell.burst]
    loss = {"model": "burst", "mean_loss": cell.loss, "burst_min": lo, "burst_max": hi}
    step = {
        "name": "Loop",
        "request": REQUEST_B,
        "response": RESPONSE_B,
        "timeout": f"{DEADLINE_S * 1000:g}ms",
        "repeats": exchanges,
        "period": f"{PERIOD_S * 1000:g}ms",
    }
    return {
        "preset": "v2g",
        "tcp": {"profile": "linux", "cc": {"reno": "newreno"}.get(cell.cc, cell.cc)},
        "loss": dict(loss),
        "reverse_loss": dict(loss),
        "session": {"profile": "custom", "abort_on_miss": False, "steps": [step]},
    }


def quantile(xs: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``xs`` by linear interpolation between order statistics
    (position q · (n − 1), as numpy's default); NaN when empty.

    >>> quantile([1.0, 2.0, 3.0, 4.0], 0.5), quantile([1.0, 2.0, 3.0, 4.0], 0.99)
    (2.5, 3.97)
    """
    s = sorted(xs)
    if not s:
        return math.nan
    pos = q * (len(s) - 1)
    i = int(pos)
    j = min(i + 1, len(s) - 1)
    return round(s[i] + (s[j] - s[i]) * (pos - i), 12)


def run_vtlab(cell: SessionCell, seed: int, exchanges: int) -> dict[str, Any]:
    """The profile's session model: the response time of every exchange."""
    out = _core.run(json.dumps(spec(cell, exchanges)), seed, False)
    return {"response_s": [float(x) for x in out["messages"]["response_time_s"]]}


def run_kernel(cell: SessionCell, seed: int, exchanges: int, realtime: bool) -> dict[str, Any]:
    """The kernel's exchanges through ``vtlab emulate`` (in this process)."""
    from vtlab.emulation import Emulation
    from vtlab.validation.kernel import lateness

    em = Emulation(spec(cell, exchanges), seed=seed, realtime=realtime)
    with em:
        server = [sys.executable, str(PEER), "serve", str(PORT), str(REQUEST_B), str(RESPONSE_B)]
        srv = em.popen(server, "near", stdout=subprocess.PIPE, text=True)
        assert srv.stdout is not None
        if srv.stdout.readline().strip() != "ready":
            raise RuntimeError("the server did not start")
        client = [sys.executable, str(PEER), "exchange", em.addresses["near"]["ipv4"]]
        client += [str(PORT), str(REQUEST_B), str(RESPONSE_B), str(exchanges), str(PERIOD_S)]
        client += [cell.cc]
        timeout = exchanges * (PERIOD_S + 2 * DEADLINE_S) + 60
        done = em.run(client, "far", timeout=timeout, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the exchanges failed: {done.stderr.strip()[-300:]}")
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "response_s": got["response_s"],
        "kernel": os.uname().release,
        "lateness": lateness(em.counters or {}),
    }


@dataclass
class SessionRun:
    """One run of one side: a case of :class:`SessionFamily`."""

    side: str
    cell: SessionCell
    seed: int
    exchanges: int
    source: str
    realtime: bool = False

    @property
    def key(self) -> str:
        return run_key(self.side, self.cell.name, self.seed, self.exchanges, self.source)

    @property
    def label(self) -> str:
        return f"{self.side} {self.cell.name} seed {self.seed}"


def run_key(side: str, cell: str, seed: int, exchanges: int, source: str) -> str:
    """The cache key of one run."""
    return json.dumps([side, cell, int(seed), int(exchanges), source])


def record_key(rec: Mapping[str, Any]) -> str:
    """:func:`run_key` of a run record."""
    return run_key(rec["side"], rec["cell"], rec["seed"], rec["exchanges"], rec["source"])


def _kernel_child(run: SessionRun) -> dict[str, Any]:
    """The kernel run in a child process of its own session, ended with SIGTERM (it
    removes its emulation) when the grid is interrupted, and by the kernel when this
    process dies (:func:`_end_with_parent`)."""
    args = json.dumps({"cell": asdict(run.cell), "seed": run.seed, "n": run.exchanges})
    cmd = [sys.executable, "-m", "vtlab.validation.kernel_session", args]
    cmd += [json.dumps(bool(run.realtime)), str(os.getpid())]
    limit = run.exchanges * (PERIOD_S + 2 * DEADLINE_S) + 120
    out, _ = run_child_streams(cmd, timeout_s=limit, graceful=True)
    return dict(json.loads(out.strip().splitlines()[-1]))


def run_case(run: SessionRun) -> dict[str, Any]:
    """One run of either side as a record."""
    started = time.perf_counter()
    sim = run.side == VTLAB
    body = run_vtlab(run.cell, run.seed, run.exchanges) if sim else _kernel_child(run)
    return {
        "side": run.side,
        "cell": run.cell.name,
        "seed": run.seed,
        "exchanges": run.exchanges,
        "source": run.source,
        **body,
        "wall_s": time.perf_counter() - started,
    }


def _recovered(xs: Sequence[float]) -> list[float]:
    return [x for x in xs if x > RECOVERED_S]


def session_row(
    cell: SessionCell, vt: Sequence[Mapping[str, Any]], kn: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """One cell's row: pooled quantiles and misses of both sides, the ratio of the
    per-seed mean response times (Fieller) and its verdict, the paired difference of
    the misses per seed, and the recovered exchanges' count and median."""
    row: dict[str, Any] = {"case": cell.name, "loss": cell.loss, "burst": cell.burst}
    means: dict[str, list[float]] = {}
    misses: dict[str, dict[int, int]] = {}
    for side, recs in ((KERNEL, kn), (VTLAB, vt)):
        pooled = [float(x) for r in recs for x in r["response_s"]]
        rec = _recovered(pooled)
        means[side] = [statistics.fmean(r["response_s"]) for r in recs if r["response_s"]]
        misses[side] = {r["seed"]: sum(x > DEADLINE_S for x in r["response_s"]) for r in recs}
        row |= {
            f"{side}_exchanges": len(pooled),
            f"{side}_p50_ms": quantile(pooled, 0.5) * 1e3,
            f"{side}_p99_ms": quantile(pooled, 0.99) * 1e3,
            f"{side}_p999_ms": quantile(pooled, 0.999) * 1e3,
            f"{side}_misses": sum(misses[side].values()),
            f"{side}_recovered": len(rec),
            f"{side}_recovered_median_ms": quantile(rec, 0.5) * 1e3,
        }
    rci = ratio_ci(means[VTLAB], means[KERNEL])
    seeds = sorted(set(misses[VTLAB]) & set(misses[KERNEL]))
    pd = paired_difference([misses[VTLAB][s] for s in seeds], [misses[KERNEL][s] for s in seeds])
    late = [x["p99_ns"] for r in kn for x in r.get("lateness", {}).values() if x["frames"]]
    row |= {
        "kernel_mean_ms": mean_ci(means[KERNEL])[0] * 1e3,
        "vtlab_mean_ms": mean_ci(means[VTLAB])[0] * 1e3,
        "ratio": rci.ratio,
        "ratio_ci_low": rci.low,
        "ratio_ci_high": rci.high,
        "verdict": verdict(rci.ratio, rci.contains_one),
        "paired_misses": pd.mean,
        "paired_misses_ci": pd.half,
        "late_p99_max_us": max(late) / 1e3 if late else math.nan,
    }
    return row


# -- the family and its report -------------------------------------------------------------


@dataclass
class SessionGrid:
    """What the session regime compares."""

    cells: list[SessionCell]
    runs: int = 10  #: seeds 1..runs per cell
    exchanges: int = DEFAULT_EXCHANGES
    realtime: bool = False
    jobs: int = 10  #: kernel runs at once (they spend their time waiting)


def session_cells(losses: Sequence[float] | None = None) -> list[SessionCell]:
    """Every loss of ``losses`` (default :data:`SESSION_LOSSES`) with both burst
    lengths."""
    return [SessionCell(x, b) for x in (losses or SESSION_LOSSES) for b in BURSTS]


MAX_EXCHANGES = 100_000


def make_grid(
    losses: Sequence[float] | None,
    runs: int | None,
    exchanges: int,
    jobs: int,
    realtime: bool = False,
) -> SessionGrid:
    """The session grid a command line asks for; raises :class:`ValidateError`."""
    n = 10 if runs is None else runs
    if not 2 <= n <= 1000:
        raise ValidateError("--runs", f"{n} is outside [2, 1000]")
    if not 1 <= exchanges <= MAX_EXCHANGES:
        raise ValidateError("--exchanges", f"{exchanges} is outside [1, {MAX_EXCHANGES}]")
    if not 1 <= jobs <= 64:
        raise ValidateError("--jobs", f"{jobs} is outside [1, 64]")
    return SessionGrid(session_cells(losses), n, exchanges, realtime, jobs)


class SessionFamily(Family):
    """The session regime as a :class:`~vtlab.validation.protocol.Family`."""

    name = "kernel-session"

    def __init__(self, grid: SessionGrid, vtlab_source: str, *, command: str = "") -> None:
        self.grid = grid
        self.vtlab_source = vtlab_source
        self.kernel_source = f"linux {os.uname().release}; {vtlab_source}"
        self.command = command

    def cases(self) -> list[SessionRun]:  # type: ignore[override]
        g, seeds = self.grid, range(1, self.grid.runs + 1)
        kn = [
            SessionRun(KERNEL, c, s, g.exchanges, self.kernel_source, g.realtime)
            for c in g.cells
            for s in seeds
        ]
        return kn + [
            SessionRun(VTLAB, c, s, g.exchanges, self.vtlab_source) for c in g.cells for s in seeds
        ]

    def run(self, case: SessionRun) -> dict[str, Any]:
        return run_case(case)

    def record_key(self, record: Mapping[str, Any]) -> str:
        return record_key(record)

    def compare(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        by: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for rec in records:
            by.setdefault((rec["side"], rec["cell"]), []).append(rec)
        return [
            session_row(c, by.get((VTLAB, c.name), []), by.get((KERNEL, c.name), []))
            for c in self.grid.cells
        ]

    def write_report(
        self, out: Path, table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]
    ) -> dict[str, Path]:
        return write_skeleton(
            out,
            table,
            [_header(self, table, meta), _table(table)],
            errors=list(meta.get("errors", [])),
            files=FILES,
            csv_options={"float_format": "%.6g"},
        )


FILES = (
    "Files: `agreement.csv` / `agreement.parquet` (this table), `runs.jsonl` (every "
    "run: every response time, and the emulator's lateness per kernel run)."
)


def _header(
    fam: SessionFamily, table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]
) -> list[str]:
    g = fam.grid
    counts = {v: sum(r["verdict"] == v for r in table) for v in ("agree", "consistent", "differs")}
    return [
        "# Sessions: the `linux` profile's session model against the kernel's TCP",
        "",
        f"Generated by `{fam.command or 'vtlab validate kernel --session'}` on {meta['date']}. "
        f"vtlab {_core.version()}; kernel {os.uname().release}; {g.exchanges} exchanges "
        f"({REQUEST_B} B → {RESPONSE_B} B, one per {PERIOD_S * 1000:g} ms, deadline "
        f"{DEADLINE_S * 1000:g} ms) per run, seeds 1..{g.runs} per cell on both sides; "
        f"both directions of the V2G cable lossy; TCP_NODELAY on both kernel ends.",
        "",
        f"**{counts['agree']} of {len(table)} cells agree**, {counts['consistent']} consistent, "
        f"{counts['differs']} differ (ratio of the mean response times vtlab/kernel, Fieller).",
        "",
    ]


def _pair(row: Mapping[str, Any], key: str, digits: int = 1) -> str:
    return f"{f(row['kernel_' + key], digits)} / {f(row['vtlab_' + key], digits)}"


def _table(table: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [
        "| cell | p50 ms kernel / vtlab | p99 ms | p99.9 ms | misses | paired misses "
        "| recovered exchanges | their median ms | mean ratio (95 % CI) | verdict "
        "| late p99 max µs |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        lines.append(
            f"| {r['case']} | {_pair(r, 'p50_ms', 2)} | {_pair(r, 'p99_ms')} | "
            f"{_pair(r, 'p999_ms')} | "
            f"{r['kernel_misses']} / {r['vtlab_misses']} | "
            f"{f(r['paired_misses'], 2)} ± {f(r['paired_misses_ci'], 2)} | "
            f"{r['kernel_recovered']} / {r['vtlab_recovered']} | "
            f"{_pair(r, 'recovered_median_ms')} | "
            f"{f(r['ratio'])} ({f(r['ratio_ci_low'])}–{f(r['ratio_ci_high'])}) | "
            f"{r['verdict']} | {f(r['late_p99_max_us'], 0)} |"
        )
    lines += [
        "",
        f"Pooled over the seeds. Recovered exchanges: response time above "
        f"{RECOVERED_S * 1000:g} ms (they met a loss). Paired misses: vtlab − kernel per "
        "seed (the same loss streams). Cells are `session-<loss each way>-<b1: bursts "
        "of 1 | b1-4: bursts of 1–4>-<cc>`.",
    ]
    return lines


def validate_session(
    grid: SessionGrid,
    out: Path,
    *,
    progress: bool = True,
    command: str = "",
    log: Any = None,
    console: Any = None,
) -> ValidateResult:
    """Run (or resume) the session regime into ``out`` and write its report."""
    from vtlab.api import core_build
    from vtlab.emulation import TUN_DEFAULT, TUN_ENV, preflight

    preflight(os.environ.get(TUN_ENV) or TUN_DEFAULT)
    family = SessionFamily(grid, core_build(), command=command)
    return protocol.validate(
        family, out, jobs=grid.jobs, progress=progress, console=console, log=log
    )


#: The grid process a per-run child reports to (:func:`_child`).
_PARENT = [0]


def _terminated(signum: int, frame: Any) -> None:
    """SIGTERM: end the run (its emulation is removed on the way out). When the grid
    died, its pipes are gone: what the way out prints goes to /dev/null, not into a
    BrokenPipeError that would cut the cleanup short."""
    if os.getppid() != _PARENT[0]:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
    raise KeyboardInterrupt


def _end_with_parent(parent: int) -> None:
    """Ask the kernel for SIGTERM when the parent dies (``PR_SET_PDEATHSIG``), so a
    killed grid (even SIGKILL) leaves no run behind; exits at once if the parent is
    already gone."""
    if not die_with(parent, signal.SIGTERM):
        raise SystemExit(1)


def _child(argv: Sequence[str]) -> int:
    """``python -m vtlab.validation.kernel_session RUN REALTIME PARENT``: one kernel run,
    printed as one JSON line (SIGTERM, also sent when PARENT dies, ends it with the
    emulation cleaned up)."""
    _PARENT[0] = int(argv[2])
    signal.signal(signal.SIGTERM, _terminated)
    _end_with_parent(_PARENT[0])
    args, realtime = json.loads(argv[0]), bool(json.loads(argv[1]))
    cell = SessionCell(**args["cell"])
    print(json.dumps(run_kernel(cell, int(args["seed"]), int(args["n"]), realtime)))
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
