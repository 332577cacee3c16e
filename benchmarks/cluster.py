"""What a Dask cluster buys a sweep, and what a task costs.

    python benchmarks/cluster.py [--bytes 50MB] [--seeds 50] [--tiny-runs 400]

1. Speed-up: one grid (4 loss levels × ``--seeds`` seeds, ≥ 200 runs) into a fresh
   store, with threads of this process (``--jobs 1`` and ``--jobs 2``, today's
   path) and on ``--cluster local:1`` and ``local:2``. Cluster start-up is timed
   apart from the sweep (the cluster is started first, then the sweep is given its
   client), since on a real cluster it is paid once per campaign.
2. Per-task overhead: ``--tiny-runs`` runs that take ~0.1 ms each, on ``local:2``,
   one run per task (``task_runs=1``) and in tasks of 100 runs, without a store
   (so the client's Parquet writes are not counted) and with one (so they are):
   wall time / tasks.

Needs the ``cluster`` extra. Prints one line per measurement; run it on an idle
machine (the numbers in docs/cluster.md were taken on a shared 2-core VM).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from vtlab.cluster import connect
from vtlab.sweep import Axis, Sweep


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def speedups(grid: Sweep, n: int, use_store: bool) -> None:
    """Time the grid with threads and on local clusters of 1 and 2 workers."""
    print(f"## {'into a fresh store' if use_store else 'without a store (rows in memory)'}")
    walls: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:

        def store(name: str) -> Path | None:
            return Path(tmp) / name if use_store else None

        for jobs in (1, 2):
            walls[f"threads -j {jobs}"] = timed(
                lambda jobs=jobs: grid.run(store(f"threads{jobs}"), jobs=jobs, progress=False)
            )
        for workers in (1, 2):
            name = f"local:{workers}"
            started = time.perf_counter()
            with connect(cluster=name) as client:
                startup = time.perf_counter() - started
                walls[f"--cluster {name}"] = timed(
                    lambda name=name, client=client: grid.run(
                        store(name), scheduler=client, progress=False
                    )
                )
            print(f"--cluster {name}: start-up {startup:.2f} s (not in the times below)")
    for label, wall in walls.items():
        print(f"{label:<20} {wall:7.2f} s  {n / wall:7.1f} runs/s")
    one, two = walls["--cluster local:1"], walls["--cluster local:2"]
    print(f"speed-up local:2 over local:1:     {one / two:.2f}x")
    print(f"speed-up local:2 over threads -j 2: {walls['threads -j 2'] / two:.2f}x")
    print(f"speed-up local:2 over threads -j 1: {walls['threads -j 1'] / two:.2f}x")


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--bytes", default="200MB", help="transfer size of the speed-up grid")
    ap.add_argument("--seeds", type=int, default=50, help="seeds per loss level (4 levels)")
    ap.add_argument("--tiny-runs", type=int, default=400, help="runs of the overhead grid")
    args = ap.parse_args()

    grid = Sweep(
        {"preset": "v2g", "bytes": args.bytes},
        [Axis.values("loss.mean_loss", ["1%", "2%", "5%", "10%"], name="loss")],
        seeds=range(1, args.seeds + 1),
    )
    n = len(grid.points())
    print(f"# speed-up grid: {n} runs of v2g {args.bytes}, 4 loss levels; {os.cpu_count()} cores")
    for use_store in (True, False):
        speedups(grid, n, use_store)

    tiny = Sweep(
        {"preset": "v2g", "bytes": "10KB"},
        [Axis.values("loss.mean_loss", ["1%", "5%"], name="loss")],
        seeds=range(1, args.tiny_runs // 2 + 1),
    )
    m = len(tiny.points())
    print(f"# per-task overhead: {m} runs of v2g 10KB on --cluster local:2")
    with tempfile.TemporaryDirectory() as tmp, connect(cluster="local:2") as client:
        for task_runs in (1, 100, None):
            for store in (None, Path(tmp) / f"k{task_runs}"):
                wall = timed(
                    lambda store=store, k=task_runs: tiny.run(
                        store, scheduler=client, task_runs=k, progress=False
                    )
                )
                tasks = -(-m // task_runs) if task_runs else 0
                where = "with store" if store else "no store"
                if task_runs is None:  # sized automatically: tasks not counted
                    print(f"task_runs=auto {where:<10} {wall:6.2f} s  {wall / m * 1e3:6.2f} ms/run")
                    continue
                print(
                    f"task_runs={task_runs:<4} {where:<10} {tasks:4d} tasks {wall:6.2f} s  "
                    f"{wall / tasks * 1e3:7.2f} ms/task  {wall / m * 1e3:6.2f} ms/run"
                )
        wall = timed(lambda: tiny.run(None, jobs=2, progress=False))
        print(f"threads -j 2  no store   {m} runs {wall:6.2f} s  {wall / m * 1e3:6.2f} ms/run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
