"""Where a sweep's time goes on this machine, and what that predicts on N cores.

Measures, on this machine (the load average is printed; timings need a quiet one):

- **forking**: how long one ``fork()`` blocks a process that has vtlab loaded, with
  and without pandas and pyarrow (the sweep's process has them when it forks its
  workers), and what forking a sweep's workers costs its first sweep and a later one
  (:mod:`vtlab.workers` keeps them);
- **the sweep's fixed cost**: importing vtlab and pandas/pyarrow in a fresh process,
  then a sweep of 8 tiny runs (10 kB: its time is all fixed cost), the process's first
  and a later one, with one job and with two;
- **each run's cost by part**, one job, CPU time: the engine, the tables (a chunk's
  runs' tables built, labelled and concatenated at once, as a worker does), pickling
  the chunk back to the sweep's process, the store (a part written per 64 runs
  here), gathering;
- **page faults per run** with one job and with two (cold workers: every page they
  share with the sweep's process is copied on their first write to it), and with two
  kept workers in a later sweep.

Then the model: a sweep of ``n`` runs of ``c`` CPU seconds each (one job) takes
``T(1) = F + n c`` with one job and ``T(N) = F + N f + G(N) n c / N`` with N workers,
where F is the fixed cost, f the time forking one worker blocks the sweep's process
(0 once the workers are kept, from a process's second sweep on) and G(N) = 1 + γ (N - 1)
the growth of the CPU time with N busy workers. From this machine alone γ is the growth
measured with two workers (for 2 MB and for 100 MB runs); the 16-core measurements of
docs/cluster.md give γ where more cores are busy. The script prints how well each γ
reproduces those measurements and the predicted speed-ups for the issue's grids, also
with γ fitted to the user time alone (as if kept workers removed the growth of system
time), with each grid's work scaled to the per-run CPU measured here now and γ
measured here for its run length, and in 16 threads instead of workers, from two
threads' share of the interpreter lock measured here (:func:`speedup_threads`)::

    python benchmarks/scaling_model.py            # about 2 minutes on a 2-core machine
    python benchmarks/scaling_model.py --quick    # fewer runs, about 30 s
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Recorded on a quiet 16-core machine before this change (docs/cluster.md, "On 16
#: cores"): cores -> (wall s, CPU s of all processes), per grid; fork 31 ms a worker
#: and a fixed cost of 0.35 s were measured there too.
RECORDED_16 = {
    "4000 x 2 MB": {
        1: (43.30, 45.2),
        2: (25.62, 51.1),
        4: (13.46, 52.0),
        8: (7.89, 56.7),
        16: (5.73, 70.8),
    },
    "800 x 100 MB": {
        1: (58.30, 58.3),
        2: (29.03, 56.6),
        4: (19.85, 77.3),
        8: (9.24, 72.1),
        16: (5.66, 84.1),
    },
}
RECORDED_FORK_S, RECORDED_FIXED_S = 0.031, 0.35
#: CPU ms per run, one job, on the 2-core machine when the figures above were recorded
#: (the sum of the parts, each run's tables then built on their own; docs/cluster.md,
#: "Workers kept for the process").
RECORDED_PER_RUN_MS = {"2MB": 3.00, "100MB": 37.07}
#: The second 16-core machine there (a virtual machine): jobs -> (user s, system s)
#: of all processes, 800 runs of 2 MB and 160 of 100 MB.
RECORDED_VM = {"2 MB": {1: (8.79, 1.12), 16: (11.87, 3.41)},
               "100 MB": {1: (10.71, 0.45), 16: (14.89, 0.82)}}  # fmt: skip

FORK = """
import gc, json, os, sys, time
import vtlab.sweep
if sys.argv[1] == "pandas":
    import pandas, pyarrow.parquet
gc.freeze()
times = []
for _ in range(30):
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    times.append(time.perf_counter() - t0)
    os.waitpid(pid, 0)
rss = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
print(json.dumps({"fork_s": sorted(times)[len(times) // 2], "rss_mb": rss / 1e6}))
"""

FIXED = """
import json, sys, time
t0 = time.perf_counter()
import vtlab.sweep
t1 = time.perf_counter()
import pandas, pyarrow.parquet
t2 = time.perf_counter()
from vtlab.sweep import Axis, Sweep
axes = [Axis.values("tcp.cc", ["newreno", "cubic", "bbr", "westwood"]),
        Axis.values("loss.mean_loss", ["1%", "5%"])]
out = {"import_vtlab_s": t1 - t0, "import_pandas_s": t2 - t1}
for name, seed in (("first_sweep_s", 1), ("later_sweep_s", 2)):
    t = time.perf_counter()
    Sweep({"preset": "v2g", "bytes": "10kB"}, axes, seeds=[seed]).run(
        sys.argv[2] + f"/{seed}", jobs=int(sys.argv[1]), progress=False)
    out[name] = time.perf_counter() - t
print(json.dumps(out))
"""

FAULTS = """
import json, resource, sys
from vtlab import workers
from vtlab.sweep import Axis, Sweep
import pandas, pyarrow.parquet
axes = [Axis.values("tcp.cc", ["newreno", "cubic", "bbr", "westwood"]),
        Axis.values("loss.mean_loss", ["1%", "5%"])]
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
if int(sys.argv[3]):
    Sweep({"preset": "v2g", "bytes": sys.argv[1]}, axes, seeds=range(1, int(sys.argv[3]) + 1)).run(
        sys.argv[4], jobs=int(sys.argv[2]), progress=False)
workers.close()
own = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
print(json.dumps({"own": own, "workers": kids}))
"""


def _child(code: str, *args: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def forking(tmp: Path) -> dict[str, float]:
    """Median fork time without and with pandas, and a tiny sweep's fixed costs."""
    lean, full = _child(FORK, "lean"), _child(FORK, "pandas")
    out = {
        "fork_lean_ms": lean["fork_s"] * 1e3,
        "rss_lean_mb": lean["rss_mb"],
        "fork_pandas_ms": full["fork_s"] * 1e3,
        "rss_pandas_mb": full["rss_mb"],
    }
    for jobs in (1, 2):
        best: dict[str, float] = {}
        for i in range(3):
            d = tmp / f"fixed-{jobs}-{i}"
            got = _child(FIXED, str(jobs), str(d))
            shutil.rmtree(d, ignore_errors=True)
            best = {k: min(v, best.get(k, v)) for k, v in got.items()}
        out.update({f"{k}_j{jobs}": v for k, v in best.items()})
    return out


def parts(size: str, seeds: int, tmp: Path) -> dict[str, float]:
    """CPU ms per run of each part of a run's work, one job (as a worker does it),
    after a first run that imports what the tables need: the engine, the chunk's
    tables (built, labelled and concatenated for its runs at once, as a worker builds
    them), pickling, the store, gathering."""
    from vtlab.store import Store, StoreWriter
    from vtlab.sweep import Axis, Sweep, _finish_chunk, _simulate
    from vtlab.sweeprows import Gather

    axes = [
        Axis.values("tcp.cc", ["newreno", "cubic", "bbr", "westwood"]),
        Axis.values("loss.mean_loss", ["1%", "5%"]),
    ]
    points = Sweep({"preset": "v2g", "bytes": size}, axes, seeds=range(1, seeds + 1)).points()
    # As a sweep into a store that returns its rows: each chunk's rows as the store
    # holds them (Arrow), pickled as they cross from a worker.
    stored = (False, False, True)
    _finish_chunk(points[:2], [_simulate(p, (False, False)) for p in points[:2]], "rows", stored)
    t = dict.fromkeys(("engine", "tables", "pickle", "store", "gather"), 0.0)
    writer = StoreWriter(
        Store.open(tmp / f"parts-{size}", create=True), messages="rows", traces=False
    )
    gather = Gather(points)
    for start in range(0, len(points), 64):
        chunk = points[start : start + 64]
        c0 = time.process_time()
        raws = [_simulate(p, (False, False)) for p in chunk]
        c1 = time.process_time()
        res = _finish_chunk(chunk, raws, "rows", stored)
        c2 = time.process_time()
        res = pickle.loads(pickle.dumps(res, pickle.HIGHEST_PROTOCOL))
        c3 = time.process_time()
        writer.add([(p.key, p.scenario) for p in chunk], res)
        writer.flush()
        c4 = time.process_time()
        gather.add(res)
        t["engine"] += c1 - c0
        t["tables"] += c2 - c1
        t["pickle"] += c3 - c2
        t["store"] += c4 - c3
        t["gather"] += time.process_time() - c4
    c0 = time.process_time()
    gather.result()
    t["gather"] += time.process_time() - c0
    return {k: v * 1e3 / len(points) for k, v in t.items()}


def faults(size: str, seeds: int, jobs: int, tmp: Path) -> dict[str, float]:
    """Minor page faults per run (the sweep's process, its workers), less those of a
    process that only imports what a sweep needs."""
    base = _child(FAULTS, size, str(jobs), "0", str(tmp / "f0"))
    got = _child(FAULTS, size, str(jobs), str(seeds), str(tmp / f"f-{size}-{jobs}"))
    runs = 8 * seeds
    return {"own": (got["own"] - base["own"]) / runs, "workers": got["workers"] / runs}


def warm_faults(size: str, seeds: int) -> tuple[float, float]:
    """Minor page faults per run, the workers' and the sweep's process's, of a sweep
    whose two workers have already run one of the same size (kept workers: a study's
    later sweeps)."""
    from vtlab import workers
    from vtlab.sweep import Axis, Sweep

    axes = [Axis.values("tcp.cc", ["newreno", "cubic", "bbr", "westwood"]),
            Axis.values("loss.mean_loss", ["1%", "5%"])]  # fmt: skip
    workers.close()
    for first in (1, seeds + 1):
        pids = []
        if workers._POOL:
            pids = workers.pids(workers._POOL[0])
        before = sum(_minflt(p) for p in pids), _minflt(os.getpid())
        Sweep({"preset": "v2g", "bytes": size}, axes, seeds=range(first, first + seeds)).run(
            jobs=2, progress=False
        )
    after = sum(_minflt(p) for p in pids), _minflt(os.getpid())
    workers.close()
    return (after[0] - before[0]) / (8 * seeds), (after[1] - before[1]) / (8 * seeds)


def _minflt(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[7])


def growth(cores: int, gamma: float) -> float:
    return 1 + gamma * (cores - 1)


def speedup(work: float, cores: int, fixed: float, fork: float, gamma: float) -> float:
    """T(1) / T(N) of the model (see the module)."""
    one = fixed + work
    return one / (fixed + cores * fork + growth(cores, gamma) * work / cores)


def calibrate(gamma2: float) -> float:
    """Print the recorded 16-core speed-ups against the model's, with γ from this
    machine (``gamma2``) and with γ fitted to the recorded 16-core CPU times; return
    the fitted γ."""
    fitted = []
    for grid in RECORDED_16.values():
        cpu1, cpu16 = grid[1][1], grid[16][1]
        fitted.append((cpu16 / cpu1 - 1) / 15)
    gamma16 = statistics.mean(fitted)
    print(
        f"\nγ: {gamma2:.3f} from this machine (2 workers); {gamma16:.3f} fitted to the "
        "16-core CPU times (CPU(16)/CPU(1) = 1 + 15 γ, both grids)"
    )
    print(
        f"{'grid':13s} {'cores':>5s} {'recorded':>9s} {'model γ2':>9s} {'error':>6s} "
        f"{'model γ16':>9s} {'error':>6s}"
    )
    for name, grid in RECORDED_16.items():
        work = grid[1][0] - RECORDED_FIXED_S
        for cores, (wall, _) in grid.items():
            if cores == 1:
                continue
            rec = grid[1][0] / wall
            a, b = (
                speedup(work, cores, RECORDED_FIXED_S, RECORDED_FORK_S, g)
                for g in (gamma2, gamma16)
            )
            print(
                f"{name:13s} {cores:5d} {rec:8.2f}x {a:8.2f}x {a / rec - 1:+6.0%} "
                f"{b:8.2f}x {b / rec - 1:+6.0%}"
            )
    return gamma16


def predict(gamma: float) -> None:
    """The model's speed-ups on 16 cores for the issue's grids: a process's first
    sweep (forks its workers: as every sweep did before), a later one (the workers
    kept: f = 0), without any fixed cost, and without CPU growth."""
    print(
        f"\nPredicted on 16 cores, γ = {gamma:.3f}, F = {RECORDED_FIXED_S} s and f = "
        f"{RECORDED_FORK_S * 1e3:.0f} ms as recorded there (one-job times as recorded):"
    )
    grids = {"4000 x 2 MB": 43.30, "800 x 100 MB": 58.30, "960 x 100 MB (issue)": 134.9}
    print(
        f"{'grid':22s} {'first (= before)':>16s} {'later (f = 0)':>14s} "
        f"{'F = f = 0':>10s} {'γ = 0, f = 0':>13s}"
    )
    for name, one in grids.items():
        work = one - RECORDED_FIXED_S
        first = speedup(work, 16, RECORDED_FIXED_S, RECORDED_FORK_S, gamma)
        later = speedup(work, 16, RECORDED_FIXED_S, 0.0, gamma)
        bound = speedup(work, 16, 0.0, 0.0, gamma)  # = 16 / G(16)
        flat = speedup(work, 16, RECORDED_FIXED_S, 0.0, 0.0)
        print(f"{name:22s} {first:15.2f}x {later:13.2f}x {bound:9.2f}x {flat:12.2f}x")
    need = (16 / 14 - 1) / 15
    print(
        f"14x on 16 cores needs γ <= {need:.4f} (CPU growth <= {growth(16, need) - 1:.0%}"
        " with 16 busy workers), whatever the fixed costs"
    )


def two_worker_growth(tmp: Path, size: str, seeds: int) -> float:
    """γ on this machine for runs of ``size``: the CPU time (all processes) each run
    adds with two jobs over what it adds with one, less 1. Each is the slope between
    a sweep of ``seeds`` and one of 4 ``seeds`` seeds per point (the best of three
    sweeps each, workers kept), so a sweep's fixed costs (its points, the pool's
    first tasks, the final tables) do not count as growth."""
    from vtlab import workers

    sys.path.insert(0, str(Path(__file__).parent))
    from scaling import time_sweep

    slope = {}
    for jobs in (1, 2):
        cpu = [
            min(time_sweep(size, n, jobs, tmp, warm=True).cpu_s for _ in range(3))
            for n in (seeds, 4 * seeds)
        ]
        slope[jobs] = (cpu[1] - cpu[0]) / (24 * seeds)
    workers.close()
    gamma = slope[2] / slope[1] - 1
    print(
        f"CPU per run of {size} (runs {8 * seeds} to {32 * seeds}): {slope[1] * 1e3:.2f} ms "
        f"with one job, {slope[2] * 1e3:.2f} ms with two: γ = {gamma:.3f}"
    )
    return gamma


def lock_share(size: str, seeds: int, tmp: Path) -> float:
    """The share of two threads' task time outside the engine (:class:`vtlab.schedule.
    LockShare`) for the grid of ``size``, kept in threads throughout (no budget)."""
    from vtlab import schedule, sweep, workers

    made: list[schedule.LockShare] = []

    class Kept(schedule.LockShare):
        def __init__(self, workers: int) -> None:
            super().__init__(workers)
            made.append(self)

    axes = [
        sweep.Axis.values("tcp.cc", ["newreno", "cubic", "bbr", "westwood"]),
        sweep.Axis.values("loss.mean_loss", ["1%", "5%"]),
    ]
    budget, lock_share_class = schedule.LOCK_BUDGET, sweep.LockShare
    schedule.LOCK_BUDGET, sweep.LockShare = float("inf"), Kept
    try:
        workers.close()
        grid = sweep.Sweep({"preset": "v2g", "bytes": size}, axes, seeds=range(1, seeds + 1))
        grid.run(tmp / f"lock-{size}", jobs=2, progress=False)
    finally:
        schedule.LOCK_BUDGET, sweep.LockShare = budget, lock_share_class
    return made[-1].share() if made else float("nan")


def speedup_threads(work: float, cores: int, fixed: float, gamma: float, share: float) -> float:
    """The model's speed-up with ``cores`` threads: no fork; each thread needs the lock
    ``share`` of its time, and waits for it as at a single server busy ``cores *
    share`` of the time (M/M/1: the locked part takes 1 / (1 - that) as long). A crude
    stand-in for CPython's lock (a 5 ms switch interval); 0 where the lock would be
    busy all the time."""
    busy = cores * share
    if busy >= 1:
        return 0.0
    stretch = 1 + share * (1 / (1 - busy) - 1)
    one = fixed + work
    return one / (fixed + growth(cores, gamma) * stretch * work / cores)


def predict_threads(shares: dict[str, float], gamma: float) -> None:
    """The recorded grids on 16 cores in threads (``speedup_threads``), with each run
    length's lock share measured here with two threads, against the first sweep in
    workers (as :func:`predict`)."""
    print(
        f"\nPredicted on 16 cores in 16 threads (no fork), γ = {gamma:.3f}, F = "
        f"{RECORDED_FIXED_S} s, each length's lock share measured here with two threads:"
    )
    grids = {"4000 x 2 MB": ("2MB", 43.30), "960 x 100 MB (issue)": ("100MB", 134.9)}
    print(f"{'grid':22s} {'share':>6s} {'lock busy':>9s} {'threads':>8s} {'workers, first':>15s}")
    for name, (size, one) in grids.items():
        work, share = one - RECORDED_FIXED_S, shares[size]
        threads = speedup_threads(work, 16, RECORDED_FIXED_S, gamma, share)
        first = speedup(work, 16, RECORDED_FIXED_S, RECORDED_FORK_S, gamma)
        shown = f"{threads:7.2f}x" if threads else "lock-bound"
        print(f"{name:22s} {share:6.3f} {16 * share:9.2f} {shown:>8s} {first:14.2f}x")


def predict_now(per_run: dict[str, float], gammas: dict[str, float], gamma16: float) -> None:
    """The recorded grids on 16 cores with the per-run CPU measured here now: each
    grid's one-job work scaled by this machine's per-run CPU now over its per-run CPU
    when the 16-core figures were recorded (:data:`RECORDED_PER_RUN_MS`), with γ
    measured here with two workers for that run length (a negative one is noise,
    taken as 0) and with ``gamma16`` (fitted to the 16-core CPU times before)."""
    print(
        "\nPredicted on 16 cores with this machine's per-run CPU now (work: one job's "
        "seconds there, scaled), F = 0.35 s, f = 31 ms:"
    )
    grids = {
        "4000 x 2 MB": ("2MB", 43.30),
        "800 x 100 MB": ("100MB", 58.30),
        "960 x 100 MB (issue)": ("100MB", 134.9),
    }
    print(
        f"{'grid':22s} {'work':>7s} {'γ here':>7s} {'first':>7s} {'later':>7s} "
        f"{'γ16':>6s} {'first':>7s} {'later':>7s} {'wall, γ16':>10s}"
    )
    for name, (size, one) in grids.items():
        work = (one - RECORDED_FIXED_S) * per_run[size] / RECORDED_PER_RUN_MS[size]
        cells = []
        for gamma in (max(0.0, gammas[size]), gamma16):
            first = speedup(work, 16, RECORDED_FIXED_S, RECORDED_FORK_S, gamma)
            later = speedup(work, 16, RECORDED_FIXED_S, 0.0, gamma)
            cells.append(f"{gamma:6.3f} {first:6.2f}x {later:6.2f}x")
        wall = (RECORDED_FIXED_S + work) / later
        print(f"{name:22s} {work:6.1f}s  {cells[0]} {cells[1]} {wall:9.2f}s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs")
    args = ap.parse_args(argv)
    short, long = (10, 2) if args.quick else (30, 8)
    print(f"{os.cpu_count()} cores · load average {os.getloadavg()[0]:.1f} at start")
    with tempfile.TemporaryDirectory(prefix="vtlab-model-") as tmp:
        root = Path(tmp)
        fk = forking(root)
        print(
            "\nfork() of a process with vtlab: "
            f"{fk['fork_lean_ms']:.2f} ms ({fk['rss_lean_mb']:.0f} MB resident); "
            f"with pandas and pyarrow: {fk['fork_pandas_ms']:.2f} ms "
            f"({fk['rss_pandas_mb']:.0f} MB)"
        )
        print(
            f"import vtlab.sweep {fk['import_vtlab_s_j1']:.3f} s, pandas + pyarrow "
            f"{fk['import_pandas_s_j1']:.3f} s"
        )
        for jobs in (1, 2):
            print(
                f"sweep of 8 x 10 kB, {jobs} job(s): first {fk[f'first_sweep_s_j{jobs}']:.3f} s,"
                f" later {fk[f'later_sweep_s_j{jobs}']:.3f} s"
            )
        print(
            f"\nCPU ms per run, one job: {'engine':>7s} {'tables':>7s} "
            f"{'pickle':>7s} {'store':>7s} {'gather':>7s}"
        )
        per_run = {}
        for size, seeds in (("2MB", short), ("100MB", long)):
            p = parts(size, seeds, root)
            per_run[size] = sum(p.values())
            print(
                f"  {size:>6s} x {8 * seeds:<4d}          "
                + " ".join(
                    f"{p[k]:7.2f}" for k in ("engine", "tables", "pickle", "store", "gather")
                )
            )
        print("\nminor page faults per run (sweep's process / workers):")
        for size, seeds in (("2MB", short), ("100MB", long)):
            one, two = (faults(size, seeds, j, root) for j in (1, 2))
            print(
                f"  {size:>6s}: 1 job {one['own']:.0f}; 2 jobs {two['own']:.0f} / "
                f"{two['workers']:.0f}; 2 kept workers, a later sweep "
                "{1:.1f} / {0:.1f}".format(*warm_faults(size, seeds))
            )
        print()
        gammas = {
            size: two_worker_growth(root, size, n)
            for size, n in (("2MB", short), ("100MB", max(1, long // 2)))
        }
        shares = {size: lock_share(size, n, root) for size, n in (("2MB", short), ("100MB", long))}
        print(
            "lock share of two threads' tasks: "
            + ", ".join(f"{size} {share:.3f}" for size, share in shares.items())
        )
    gamma2 = gammas["100MB"]
    gamma16 = calibrate(gamma2)
    predict(gamma2)
    predict(gamma16)
    predict_now(per_run, gammas, gamma16)
    predict_threads(shares, gamma16)
    user = [(g[16][0] - g[1][0]) / sum(g[1]) / 15 for g in RECORDED_VM.values()]
    print(
        "\nγ without the growth of system time (page faults), from the user time of the "
        "second 16-core machine (both grids):"
    )
    predict(statistics.mean(user))
    print(f"\nload average {os.getloadavg()[0]:.1f} at end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
