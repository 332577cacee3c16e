"""Parallel scaling of sweeps: speed-up and parallel efficiency per core count and
per run length.

For each run length (short: 2 MB, long: 100 MB, and with ``--lengths mid`` 20 MB, all
V2G transfers at the scenario's defaults, the ns3 profile's FQ-CoDel included) it runs
one grid of 4 congestion controls x 2 mean losses (1 %, 5 %) x S seeds as a sweep with
``--jobs`` 1, then with each other core count, into a fresh store each time (as a
campaign does: every run is stored and checksummed), and prints wall time, CPU time
(this process and its workers), runs per second, the speed-up over one job and the
parallel efficiency (speed-up / jobs), with the CPU time of the sweep's own process
(gathering the workers' results) and the seconds its final gathering took after the last
run. Each configuration is timed ``--repeat`` times (default once); the fastest counts.
Each sweep starts without workers (cold), as a process's first sweep does: with two
jobs it starts in threads and forks workers for the runs left only where its threads
need the interpreter lock too much (:mod:`vtlab.schedule`), with more it forks them;
with ``--warm`` a small sweep before it has forked them, as for the later sweeps of a
study (:mod:`vtlab.workers` keeps them for the process's lifetime); with ``--threads``
another thread runs meanwhile, as in a notebook's kernel, so that the sweeps run in
threads; ``--threads-first N`` lets sweeps of up to N jobs start in threads
(``vtlab.schedule.THREADS_FIRST``, 2 by default; 0: workers from the start). The last
column says where the runs ran.

With ``--engine`` it also measures what the machine's cores give the engine alone,
the ceiling of any sweep's speed-up: N independent processes (no sweep, no tables, no
store), started together once each has imported vtlab, each simulating the grid's
runs in turn for ``--engine-seconds``; "engine alone" is their runs per second
together over one such process's, and the sweep's share of that ceiling is printed
beside it. A core that slows while all are busy (shared caches, memory bandwidth,
the clock) lowers both alike. The processes must not outnumber the cores.

Self-contained: it needs only an installed vtlab with :mod:`vtlab.workers`, e.g. on a
16-core machine::

    python benchmarks/scaling.py --cores 1,2,4,8,16 --lengths short --short-seeds 500 --engine
    python benchmarks/scaling.py --cores 1,4,16 --lengths long --long-seeds 120 --engine
    python benchmarks/scaling.py --cores 1,2 --json scaling.json

(the first about half a minute there, the second, the issue's 960 runs of 100 MB, about 1.5-2
minutes). A sweep has a fixed cost (importing pandas, building its points, forking the
workers, gathering the tables at the end: about 0.35 s on a 2-core machine) besides
its runs. With ``--quick`` the grids are 4 000 short runs, 1 200 mid and 800 long ones
(on the 2-core machine of docs/cluster.md about 4 s, 9 s and 30 s of one core's
work), twice that by default; ``--short-seeds``, ``--mid-seeds`` and ``--long-seeds``
change them (seeds per grid point, 8 points). Issue 28's own grid on two cores is
``--lengths mid --mid-seeds 30``; on 16, ``--lengths long --long-seeds 120``.
Timings need a quiet machine: the load average is printed with the results.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import vtlab
from vtlab import schedule, sweeprows, workers
from vtlab import sweep as sweep_module
from vtlab.sweep import Axis, Sweep

#: Run lengths: name → transfer size ("mid": issue 28's own grid, 240 runs of 20 MB
#: with ``--mid-seeds 30``).
LENGTHS = {"short": "2MB", "mid": "20MB", "long": "100MB"}
CCS = ["newreno", "cubic", "bbr", "westwood"]
LOSSES = ["1%", "5%"]


@dataclass
class Row:
    length: str
    cores: int
    runs: int
    wall_s: float
    cpu_s: float
    parent_cpu_s: float
    gather_s: float
    speedup: float = 1.0
    efficiency: float = 1.0
    #: N independent processes' runs per second together / one process's (``--engine``).
    engine_speedup: float | None = None
    #: Where the runs ran: here (one job), threads, workers, or threads then workers.
    ran_in: str = ""

    @property
    def runs_per_s(self) -> float:
        return self.runs / self.wall_s


def _cpu_s() -> tuple[float, float]:
    """User + system CPU seconds of this process, and of its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


#: Seconds the sweep's last gathering took (its results put together at the end).
_GATHER_S: list[float] = []
_gather_result = sweeprows.Gather.result


def _timed_gather_result(self: sweeprows.Gather) -> vtlab.Result:
    t0 = time.perf_counter()
    try:
        return _gather_result(self)
    finally:
        _GATHER_S.append(time.perf_counter() - t0)


sweeprows.Gather.result = _timed_gather_result  # type: ignore[method-assign]

#: Whether the timed sweep ran chunks in threads of this process (as it says, not
#: as this script would guess from vtlab.schedule's rules).
_IN_THREADS: list[bool] = []
_execute_in_threads = sweep_module._execute_in_threads


def _counted_execute_in_threads(*args: Any, **kwargs: Any) -> Any:
    _IN_THREADS.append(True)
    return _execute_in_threads(*args, **kwargs)


sweep_module._execute_in_threads = _counted_execute_in_threads


def _pool_cpu_s() -> float:
    """User + system CPU seconds of the live sweep workers so far (Linux's /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in workers.pids(workers._POOL[0][0]) if workers._POOL else []:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def time_sweep(size: str, seeds: int, jobs: int, store_root: Path, warm: bool = False) -> Row:
    """Wall, CPU (all, and this process's) and final gathering seconds of one sweep of
    the grid into a fresh store. Cold (default): the sweep starts without workers, as
    the first sweep of a process does; ``warm``: a sweep before forked them, as for a
    study's later sweeps (:mod:`vtlab.workers`)."""
    axes = [Axis.values("tcp.cc", CCS), Axis.values("loss.mean_loss", LOSSES)]
    sweep = Sweep({"preset": "v2g", "bytes": size}, axes, seeds=range(1, seeds + 1))
    workers.close()
    if warm and jobs > 1:  # a sweep before of at least `jobs` runs, which forks them all
        before = range(1, -(-jobs // (len(CCS) * len(LOSSES))) + 1)
        threads_first, schedule.THREADS_FIRST = schedule.THREADS_FIRST, 0  # to workers
        try:
            Sweep({"preset": "v2g", "bytes": "10kB"}, axes, seeds=before).run(
                jobs=jobs, progress=False
            )
        finally:
            schedule.THREADS_FIRST = threads_first
    store = store_root / f"store-{size}-{jobs}"
    shutil.rmtree(store, ignore_errors=True)
    _IN_THREADS.clear()
    (own0, kids0), pool0, t0 = _cpu_s(), _pool_cpu_s(), time.perf_counter()
    res = sweep.run(store, jobs=jobs, progress=False)
    wall, own1, pool1 = time.perf_counter() - t0, _cpu_s()[0], _pool_cpu_s()
    where = ["threads"] * bool(_IN_THREADS) + ["workers"] * bool(workers._POOL)
    ran_in = ", ".join(where) if jobs > 1 else "here"
    workers.close()  # reaped: their CPU time is in RUSAGE_CHILDREN now
    kids1 = _cpu_s()[1]
    # The workers' CPU: cold, all of theirs; warm, what they used during this sweep.
    kids = pool1 - pool0 if warm and jobs > 1 else kids1 - kids0
    shutil.rmtree(store, ignore_errors=True)
    size_name = next(n for n, s in LENGTHS.items() if s == size)
    own = own1 - own0
    row = Row(size_name, jobs, len(res.flows), wall, own + kids, own, _GATHER_S[-1])
    row.ran_in = ran_in
    return row


#: One process of the engine-alone measurement: it builds the grid's points,
#: simulates one (imports and first allocations), says "ready", waits for "go" on
#: stdin, then simulates the points in turn for ``seconds`` and prints its runs per
#: second (over the runs it finished: all the processes are busy together throughout).
ENGINE = """
import itertools, json, sys, time
from vtlab.sweep import Axis, Sweep, _simulate
size, seconds, ccs, losses = sys.argv[1], float(sys.argv[2]), *map(json.loads, sys.argv[3:])
axes = [Axis.values("tcp.cc", ccs), Axis.values("loss.mean_loss", losses)]
points = Sweep({"preset": "v2g", "bytes": size}, axes, seeds=range(1, 9)).points()
_simulate(points[0], (False, False))
print("ready", flush=True)
sys.stdin.readline()
t0 = t = time.perf_counter()
for n, p in enumerate(itertools.cycle(points), 1):
    _simulate(p, (False, False))
    t = time.perf_counter()
    if t - t0 >= seconds:
        break
print(json.dumps({"runs_per_s": n / (t - t0)}), flush=True)
"""


def engine_rate(size: str, seconds: float, procs: int) -> float:
    """Runs per second of ``procs`` independent processes together, started at once,
    each simulating the grid's runs for ``seconds`` (the engine alone: no sweep, no
    tables, no store)."""
    kids = [
        subprocess.Popen(
            [sys.executable, "-c", ENGINE, size, str(seconds), json.dumps(CCS), json.dumps(LOSSES)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(procs)
    ]
    try:
        pipes = [(k.stdin, k.stdout) for k in kids if k.stdin and k.stdout]
        if any(out.readline().strip() != "ready" for _, out in pipes):
            raise RuntimeError("an engine process failed to start")
        for into, _ in pipes:
            into.write("go\n")
            into.flush()
        rates = [json.loads(out.readline())["runs_per_s"] for _, out in pipes]
    finally:  # on an error none is left behind
        for k in kids:
            if k.poll() is None and sys.exc_info()[0] is not None:
                k.kill()
            k.wait()
    return sum(rates)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cores", default=None, help="core counts, e.g. 1,2,4 (default 1..N)")
    ap.add_argument("--quick", action="store_true", help="fewer runs, one repetition")
    ap.add_argument("--repeat", type=int, default=1, help="repetitions (default 1)")
    ap.add_argument("--short-seeds", type=int, default=None, help="seeds per point, short runs")
    ap.add_argument("--mid-seeds", type=int, default=None, help="seeds per point, 20 MB runs")
    ap.add_argument("--long-seeds", type=int, default=None, help="seeds per point, long runs")
    ap.add_argument("--lengths", default="short,long", help="some of short, mid, long")
    ap.add_argument(
        "--warm", action="store_true", help="workers forked by a sweep before (as in a study)"
    )
    ap.add_argument(
        "--threads",
        action="store_true",
        help="run another thread meanwhile (as a notebook's kernel does): the sweeps use threads",
    )
    ap.add_argument(
        "--threads-first",
        type=int,
        default=None,
        help="the most jobs a sweep without workers starts in threads "
        f"(vtlab.schedule.THREADS_FIRST, default {schedule.THREADS_FIRST})",
    )
    ap.add_argument(
        "--engine",
        action="store_true",
        help="also measure the engine alone in independent processes (the ceiling)",
    )
    ap.add_argument(
        "--engine-seconds",
        type=float,
        default=3.0,
        help="seconds each engine-alone process runs (default 3)",
    )
    ap.add_argument("--json", dest="json_out", default=None, help="also write the rows here")
    args = ap.parse_args(argv)
    available = os.cpu_count() or 1
    cores = [int(c) for c in args.cores.split(",")] if args.cores else list(range(1, available + 1))
    if not cores or min(cores) < 1:
        print("error: --cores: give positive core counts, e.g. 1,2,4", file=sys.stderr)
        return 2
    if 1 not in cores:
        cores = [1, *cores]
    lengths = [n.strip() for n in args.lengths.split(",")]
    if any(n not in LENGTHS for n in lengths):
        print(f"error: --lengths: one or more of {', '.join(LENGTHS)}", file=sys.stderr)
        return 2
    repeat = args.repeat
    seeds = {
        "short": args.short_seeds or (500 if args.quick else 1000),
        "mid": args.mid_seeds or (150 if args.quick else 300),
        "long": args.long_seeds or (100 if args.quick else 200),
    }
    if repeat < 1 or min(seeds.values()) < 1:
        print("error: --repeat, --short-seeds, --long-seeds: at least 1", file=sys.stderr)
        return 2
    if args.threads_first is not None:
        if args.threads_first < 0:
            print("error: --threads-first: 0 or more jobs", file=sys.stderr)
            return 2
        schedule.THREADS_FIRST = args.threads_first
    print(
        f"vtlab {vtlab.__version__} · Python {platform.python_version()} · "
        f"{available} cores · load average {os.getloadavg()[0]:.1f} at start"
    )
    if max(cores) > available:
        print(f"warning: more jobs than the {available} cores of this machine")
    rows: list[Row] = []
    if args.threads:  # forking is not safe now: vtlab.sweep runs the chunks in threads
        threading.Thread(target=threading.Event().wait, daemon=True).start()
    with tempfile.TemporaryDirectory(prefix="vtlab-scaling-") as tmp:
        # This process's first sweep builds its first tables (about 0.2 s of imports
        # inside pandas, once per process): not in the first timed sweep's time.
        time_sweep(LENGTHS["short"], 1, 1, Path(tmp))
        for length in lengths:
            rows += measure_length(length, seeds[length], cores, repeat, Path(tmp), args)
            if args.json_out:  # after each length: a run cut short keeps what it measured
                write_json(Path(args.json_out), rows)
    print(f"load average {os.getloadavg()[0]:.1f} at end\n")
    print(
        f"{'length':7s} {'cores':>5s} {'runs':>5s} {'wall s':>8s} {'CPU s':>8s} "
        f"{'parent s':>8s} {'gather s':>8s} {'runs/s':>8s} {'speed-up':>9s} "
        f"{'efficiency':>10s}"
        + (f" {'engine alone':>12s} {'of it':>6s}" if args.engine else "")
        + "  ran in"
    )
    for r in rows:
        ceiling = (
            f" {r.engine_speedup:11.2f}x {r.speedup / r.engine_speedup:6.0%}"
            if r.engine_speedup
            else ""
        )
        print(
            f"{r.length:7s} {r.cores:5d} {r.runs:5d} {r.wall_s:8.2f} {r.cpu_s:8.2f} "
            f"{r.parent_cpu_s:8.2f} {r.gather_s:8.2f} {r.runs_per_s:8.1f} "
            f"{r.speedup:8.2f}x {r.efficiency:9.0%}" + ceiling + f"  {r.ran_in}"
        )
    return 0


def measure_length(
    length: str, seeds: int, cores: list[int], repeat: int, tmp: Path, args: argparse.Namespace
) -> list[Row]:
    """One run length's rows: the grid swept with each core count (the fastest of
    ``repeat``), and with ``--engine`` the engine alone on as many cores."""
    rows: list[Row] = []
    for jobs in sorted(set(cores)):
        row = min(
            (time_sweep(LENGTHS[length], seeds, jobs, tmp, args.warm) for _ in range(repeat)),
            key=lambda r: r.wall_s,
        )
        row.speedup = rows[0].wall_s / row.wall_s if rows else 1.0
        row.efficiency = row.speedup / jobs
        rows.append(row)
        print(
            f"  {length:5s} {jobs:3d} jobs: {row.wall_s:7.2f} s wall, "
            f"{row.cpu_s:7.2f} s CPU ({row.parent_cpu_s:.2f} s in this process, "
            f"{row.gather_s:.2f} s final gathering), {row.speedup:5.2f}x, in {row.ran_in}",
            flush=True,
        )
    if args.engine:
        rates: dict[int, float] = {}
        for row in rows:
            rates[row.cores] = max(
                engine_rate(LENGTHS[length], args.engine_seconds, row.cores) for _ in range(repeat)
            )
            row.engine_speedup = rates[row.cores] / rates[1]
            print(
                f"  {length:5s} {row.cores:3d} processes of the engine alone: "
                f"{rates[row.cores]:8.1f} runs/s, {row.engine_speedup:5.2f}x",
                flush=True,
            )
    return rows


def write_json(path: Path, rows: list[Row]) -> None:
    path.write_text(json.dumps([{**asdict(r), "runs_per_s": r.runs_per_s} for r in rows], indent=1))


if __name__ == "__main__":
    raise SystemExit(main())
