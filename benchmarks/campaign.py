"""A campaign of many short ISO 15118 sessions: bounded memory, a kill mid-way and a
resume that loses and repeats no run, and the runs per hour it reaches.

The campaign is a sweep of one vehicle on the charging cable running a DC charging
session (``iso15118-2-dc``, ``--duration`` of charging loop, default 2 s) over 10
mean burst-loss rates (0.1 % to 5 %) × ``--runs``/10 seeds, the messages kept as
response-time counts (as ``vtlab study iso15118`` keeps them), written to a
columnar store with ``collect=False`` (nothing gathered in memory). The sweep runs
in a child process (its own process group); when ``--kill-after`` runs are
committed this script kills the whole group with SIGKILL, then starts the same
sweep again, which resumes from the store. At the end it checks the store: every
run committed once (its runs table and its flow rows, read directly with Arrow),
nothing pending, nothing quarantined; and it prints

* peak memory: the largest resident set of any process of the tree
  (``resource.getrusage(RUSAGE_CHILDREN)``, which covers the sweep and its
  workers); sampled every 0.2 s from /proc, the sweep's process's, the largest
  worker's, and the sums over the tree of the resident sets (pages the forked
  workers share counted in each) and of the proportional sets (shared pages divided
  among their sharers);
* runs per hour of the two invocations together (start-up and the resume's store
  check included), per core used, and of one job (``--efficiency-runs`` runs), so
  the parallel efficiency of the campaign itself (its rate / (jobs × one job's));
* the sweep's own process's CPU per run it simulated in the last invocation (its
  start included: imports, forking the workers), which bounds a campaign of short runs
  on many cores (it hands out the tasks, takes their tables back, commits the store);
* runs per hour extrapolated to 16 cores: min(the campaign's rate per core × 16,
  3600 s / the sweep's process's CPU time per run), since one process hands out and
  stores every run whatever the cores (it assumes this machine's cores; with
  ``--jobs 16`` the first term is the measured rate); and to a Dask cluster of N
  workers, where the client stores every run itself: min(N × rate per core, 3600 s /
  the client's CPU time per run, measured here on stored results).

Usage (self-contained: an installed vtlab, any checkout or wheel)::

    python benchmarks/campaign.py --runs 100000 --jobs 2 --kill-after 30000
    python benchmarks/campaign.py --runs 2000 --kill-after 600 --part-runs 200  # quick

``--part-runs`` sets the store's runs per part (default: the store's own,
:data:`vtlab.store.MAX_PART_RUNS`); a small campaign needs smaller parts to be
killed between commits. Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LOSSES = [0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05]
#: Flow rows of one session run: the requests and the responses connection.
FLOWS_PER_RUN = 2


def spec(duration: str) -> dict[str, Any]:
    return {
        "preset": "v2g",
        "qdisc": "none",
        "loss": {"model": "burst", "mean_loss": 0.0},
        "reverse_loss": {"model": "burst", "mean_loss": 0.0},
        "session": {"profile": "iso15118-2-dc", "duration": duration},
    }


def sweep(runs: int, duration: str) -> Any:
    from vtlab.sweep import Axis, Sweep

    if runs % len(LOSSES):
        raise SystemExit(f"error: --runs: {runs} is not a multiple of {len(LOSSES)}")
    axes = [Axis.values("loss.mean_loss", LOSSES, name="loss")]
    seeds = range(1, runs // len(LOSSES) + 1)
    return Sweep(spec(duration), axes, seeds=seeds, messages="counts")


def child(args: argparse.Namespace) -> None:
    """The campaign itself (a child process): run the sweep into the store."""
    from vtlab import schedule
    from vtlab import store as store_module

    if args.part_runs:  # and no task larger than a part, so that parts commit as often
        store_module.MAX_PART_RUNS = args.part_runs
        schedule.MAX_CHUNK_RUNS = min(schedule.MAX_CHUNK_RUNS, args.part_runs)
    started, cpu = time.perf_counter(), time.process_time()
    sweep(args.runs, args.duration).run(args.store, jobs=args.jobs, progress=False, collect=False)
    cpu = time.process_time() - cpu
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    print(
        json.dumps(
            {
                "wall_s": time.perf_counter() - started,
                "sweep_cpu_s": cpu,
                "self_cpu_s": me.ru_utime + me.ru_stime,
                "workers_cpu_s": kids.ru_utime + kids.ru_stime,
            }
        )
    )


def _field_kb(path: Path, name: str) -> int:
    """The value in kB of the line ``name:`` of a /proc file (0 if absent)."""
    for line in path.read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
    return 0


def _tree_memory_kb(root: int) -> dict[str, int]:
    """Memory of ``root`` (the sweep's process) and its descendants (its workers) now,
    from /proc: its resident set, the largest of theirs, and the sums over the tree of
    the resident sets (pages shared by the forked workers counted in each) and of the
    proportional sets (each shared page divided among its sharers: the tree's own
    memory)."""
    out = dict.fromkeys(("sweep", "worker", "rss_sum", "pss_sum"), 0)
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            rss = _field_kb(Path(f"/proc/{pid}/status"), "VmRSS")
            out["pss_sum"] += _field_kb(Path(f"/proc/{pid}/smaps_rollup"), "Pss")
            for task in Path(f"/proc/{pid}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
        out["rss_sum"] += rss
        key = "sweep" if pid == root else "worker"
        out[key] = max(out[key], rss)
    return out


def _committed(store: Path, opened: list[Any]) -> int:
    from vtlab.store import Store

    if not (store / "store.json").exists():
        return 0
    if not opened:
        opened.append(Store.open(store))
    return len(opened[0].index())


def invoke(args: argparse.Namespace, kill_after: int | None) -> dict[str, Any]:
    """Run the campaign in a child process group; kill it (SIGKILL, the whole group)
    once ``kill_after`` runs are committed. Returns its figures."""
    cmd = [sys.executable, __file__, "--child", "--runs", str(args.runs), "--jobs", str(args.jobs)]
    cmd += ["--store", str(args.store), "--duration", args.duration]
    cmd += ["--part-runs", str(args.part_runs)] if args.part_runs else []
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, start_new_session=True)
    peak: dict[str, int] = {}
    killed_at, opened = None, []
    while proc.poll() is None:
        for k, v in _tree_memory_kb(proc.pid).items():
            peak[k] = max(peak.get(k, 0), v)
        if kill_after is not None and _committed(args.store, opened) >= kill_after:
            os.killpg(proc.pid, signal.SIGKILL)
            killed_at = _committed(args.store, [])
            break
        time.sleep(0.2)
    out, _ = proc.communicate()
    wall = time.perf_counter() - started
    figures = {"wall_s": wall, "peak_kb": peak, "killed_at": killed_at}
    if killed_at is None:
        if proc.returncode != 0:
            raise SystemExit(f"error: the campaign failed (exit status {proc.returncode})")
        figures.update(json.loads(out.strip().splitlines()[-1]))
    return figures


def check_store(store: Path, runs: int) -> list[str]:
    """What is wrong with the finished store (empty when every run is there once)."""
    import pyarrow.dataset as ds

    problems = []
    keys = ds.dataset(store / "runs", format="parquet").to_table(columns=["run_key"])
    keys = keys.column("run_key").to_pylist()
    if len(keys) != runs or len(set(keys)) != runs:
        problems.append(f"runs table: {len(keys)} rows, {len(set(keys))} runs, not {runs}")
    flows = ds.dataset(store / "flows", format="parquet").to_table(
        columns=["scenario_hash", "seed"]
    )
    hashes, seeds = (flows.column(c).to_pylist() for c in ("scenario_hash", "seed"))
    pairs = list(zip(hashes, seeds, strict=True))
    if len(pairs) != FLOWS_PER_RUN * runs or len(set(pairs)) != runs:
        problems.append(f"flows: {len(pairs)} rows of {len(set(pairs))} runs, not 2 × {runs}")
    for leftover in ("_pending", "_quarantine"):
        if (store / leftover).exists() and any((store / leftover).iterdir()):
            problems.append(f"{leftover}/ is not empty")
    return problems


def client_cost_s(duration: str, n: int = 400, task_runs: int = 100) -> float:
    """CPU seconds the sweep's own process spends per run on what it does for a
    cluster's task of ``task_runs`` runs: build its tables from the core's columns,
    label them, store them (a cluster's tasks of short runs are larger still: about a
    second of runs each, at most :data:`vtlab.cluster.MAX_TASK_RUNS`)."""
    from vtlab import _core
    from vtlab.store import Store, StoreWriter
    from vtlab.sweep import _finish_chunk

    points = sweep(n, duration).points()[:n]
    raws = [_core.run(p.scenario.to_json(), p.seed, False) for p in points]
    _finish_chunk(points[:2], raws[:2], "counts")  # this process's first tables: imports
    with tempfile.TemporaryDirectory() as tmp:
        writer = StoreWriter(Store.open(tmp, create=True), messages="counts", traces=False)
        started = time.process_time()
        for i in range(0, n, task_runs):
            task = points[i : i + task_runs]
            res = _finish_chunk(task, raws[i : i + task_runs], "counts")
            writer.add([(p.key, p.scenario) for p in task], res)
        writer.flush()
        return (time.process_time() - started) / n


def one_job_rate(args: argparse.Namespace) -> float:
    """Runs per hour of one job on an ``--efficiency-runs``-run campaign (a store,
    ``collect=False``, as the campaign), after a 10-run one that imports what a sweep
    needs (pandas, pyarrow: about 0.4 s, as long as 2 000 runs take)."""
    with tempfile.TemporaryDirectory() as tmp:
        sweep(len(LOSSES), args.duration).run(Path(tmp) / "warm", jobs=1, progress=False)
        started = time.perf_counter()
        sweep(args.efficiency_runs, args.duration).run(tmp, jobs=1, progress=False, collect=False)
        return args.efficiency_runs / (time.perf_counter() - started) * 3600


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--kill-after", type=int, default=None, help="runs committed before the kill")
    ap.add_argument("--duration", default="2s", help="the charging loop of each session")
    ap.add_argument("--part-runs", type=int, default=0, help="runs per store part")
    ap.add_argument("--store", type=Path, default=None, help="default: a temporary folder")
    ap.add_argument("--efficiency-runs", type=int, default=2000, help="runs of the one-job rate")
    ap.add_argument("--workers", type=int, default=64, help="Dask workers to extrapolate to")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    if args.kill_after is not None and not 0 < args.kill_after < args.runs:
        raise SystemExit(f"error: --kill-after: {args.kill_after} is not in [1, {args.runs - 1}]")
    tmp = None
    if args.store is None:
        tmp = tempfile.mkdtemp(prefix="vtlab-campaign-")
        args.store = Path(tmp) / "store"
    try:
        report(args)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def report(args: argparse.Namespace) -> None:
    phases = []
    if args.kill_after is not None:
        phases.append(invoke(args, args.kill_after))
    phases.append(invoke(args, None))
    problems = check_store(args.store, args.runs)
    maxrss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    wall = sum(p["wall_s"] for p in phases)
    rate = args.runs / wall * 3600
    per_core = rate / args.jobs
    one = one_job_rate(args)
    cost = client_cost_s(args.duration)
    dask = min(args.workers * per_core, 3600 / cost)
    peak = {k: max(p["peak_kb"].get(k, 0) for p in phases) / 1024 for k in phases[0]["peak_kb"]}
    resumed = args.runs - (phases[0]["killed_at"] or 0)  # runs the last invocation simulated
    # The sweep's process, s a run (none when the kill came after the last commit).
    sweep_cpu = phases[-1]["sweep_cpu_s"] / resumed if resumed else None
    bound = 16 * per_core if sweep_cpu is None else min(16 * per_core, 3600 / sweep_cpu)
    figures = {
        "runs": args.runs,
        "jobs": args.jobs,
        "killed_at": phases[0]["killed_at"] if args.kill_after is not None else None,
        "resumed_runs": resumed,
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(maxrss_kb / 1024, 1),
        "peak_sweep_process_mb": round(peak["sweep"], 1),
        "peak_worker_mb": round(peak["worker"], 1),
        "peak_tree_rss_sum_mb": round(peak["rss_sum"], 1),
        "peak_tree_pss_sum_mb": round(peak["pss_sum"], 1),
        "runs_per_hour": round(rate),
        "runs_per_hour_per_core": round(per_core),
        "runs_per_hour_one_job": round(one),
        "efficiency": round(rate / (args.jobs * one), 3),
        "runs_per_hour_16_cores": round(bound),
        "client_cpu_ms_per_run": round(cost * 1e3, 3),
        "sweep_cpu_us_per_run": None if sweep_cpu is None else round(sweep_cpu * 1e6, 1),
        "dask_workers": args.workers,
        "runs_per_hour_dask": round(dask),
        "load_average": os.getloadavg()[0],
        "problems": problems,
    }
    for name, value in figures.items():
        print(f"{name:>24}: {value}")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    if problems or maxrss_kb >= 1 << 20:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
