"""Where a sweep's runs go (vtlab.schedule): a sweep without live workers starts in
threads and hands the runs left to worker processes when its threads need the
interpreter lock too much (docs/cluster.md, "Threads first")."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from vtlab import _core, schedule, workers
from vtlab import sweep as sweep_module
from vtlab.schedule import LockShare
from vtlab.sweep import Axis, Sweep

BASE = {"preset": "v2g", "bytes": "1MB"}
AXES = [Axis.values("loss.mean_loss", ["1%", "5%"], name="loss")]


def test_the_lock_share_is_the_tasks_time_outside_the_engine():
    meter = LockShare(2)
    assert meter.share() == 1.0 and not meter.bound(1000), "nothing measured yet"
    # By hand: 10 runs in 1.0 s, 0.9 s of it in the engine: a share of 0.1; two
    # threads need 2 x 0.1 = 0.2 of the lock, within the budget of 0.25.
    meter.add(10, 1.0, 0.9)
    assert meter.share() == pytest.approx(0.1)
    assert not meter.bound(1000)
    # 10 more runs in 1.0 s, 0.7 s in the engine: (2.0 - 1.6) / 2.0 = 0.2 each, 0.4
    # for two threads, beyond the budget. A run took 2.0 / 20 = 0.1 s: one run left
    # holds 0.1 / 2 = 0.05 s of each worker (not worth a fork, at most 0.1 s), three
    # hold 0.15 s.
    meter.add(10, 1.0, 0.7)
    assert meter.share() == pytest.approx(0.2)
    assert not meter.bound(1) and not meter.bound(2)
    assert meter.bound(3)


def test_a_share_near_the_budget_waits_for_more_time_measured():
    # By hand, two threads (budget 0.2, so a need within 0.2-0.4 is not clear):
    # 32 runs in 0.32 s, 0.28 s of it in the engine: a share of 0.125, a need of
    # 0.25, but only 0.32 s measured (VERDICT_S = 0.5): not yet.
    meter = LockShare(2)
    meter.add(32, 0.32, 0.28)
    assert meter.share() == pytest.approx(0.125) and not meter.bound(1000)
    # 128 more in 1.28 s, 1.20 s in the engine: (1.6 - 1.48) / 1.6 = 0.075, a need
    # of 0.15: within the budget, threads.
    meter.add(128, 1.28, 1.20)
    assert meter.share() == pytest.approx(0.075) and not meter.bound(1000)
    # A need of 0.3 with 0.64 s measured (64 runs, 0.544 s in the engine) decides.
    near = LockShare(2)
    near.add(64, 0.64, 0.544)
    assert near.share() == pytest.approx(0.15) and near.bound(1000)
    # A clear need (ISO 15118 sessions: 36 runs in 0.1 s, 2 ms in the engine, a need
    # of 1.96) decides at once: 1 164 runs left at 2.8 ms hold 1.6 s of each worker.
    clear = LockShare(2)
    clear.add(36, 0.1, 0.002)
    assert clear.bound(1164)


class RunClock:
    """The clock the sweep times its threads' tasks with (``vtlab.sweep.time``), made
    of the runs' own times: each thread's reads only what its runs added. What the
    threads' share of the lock is then follows from the runs alone, not from how busy
    the machine is (on a loaded one the real clock also counted the waits for the
    lock and for a core, and sent these runs to workers)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def advance(self, seconds: float) -> None:
        self._local.t = self.perf_counter() + seconds

    def perf_counter(self) -> float:
        return getattr(self._local, "t", 0.0)

    def __getattr__(self, name: str):
        return getattr(time, name)


def _slow_run(ran_in: Path, engine_share: float, sleep_s: float, clock: RunClock | None = None):
    """The real run, after ``sleep_s`` without the interpreter lock (as the engine
    spends it), of which ``engine_share`` is reported as the engine's; the sleep and
    the engine's time go on ``clock``, if given. Each process that runs one leaves
    its pid in ``ran_in``, each thread its name."""
    real_run = _core.run

    def run(*args, **kwargs):
        (ran_in / f"{os.getpid()}-{threading.current_thread().name}").touch()
        time.sleep(sleep_s)
        raw = real_run(*args, **kwargs)
        if clock is not None:
            clock.advance(sleep_s + raw["meta"]["wall_s"])
        raw["meta"]["wall_s"] = raw["meta"]["wall_s"] + engine_share * sleep_s
        return raw

    return run


def _processes(ran_in: Path) -> set[int]:
    return {int(p.name.split("-")[0]) for p in ran_in.iterdir()}


@pytest.fixture
def no_workers():
    workers.close()
    yield
    workers.close()


def _swept(
    tmp_path: Path,
    monkeypatch,
    seeds: int,
    engine_share: float,
    sleep_s: float,
    progress: bool = False,
) -> tuple[Path, set[int]]:
    """A sweep of ``seeds`` seeds x 2 losses with two jobs into a store, its runs as
    :func:`_slow_run` makes them, timed by their own times (:class:`RunClock`);
    checks that its rows, and those reloaded from the store, are those of one job
    (every run once). The runs' marks, and the live workers' pids."""
    sweep = Sweep(BASE, AXES, seeds=range(1, seeds + 1))
    reference = sweep.run(progress=False, jobs=1)
    ran_in = tmp_path / "ran"
    ran_in.mkdir()
    with monkeypatch.context() as m:
        clock = RunClock()
        m.setattr(sweep_module, "time", clock)
        m.setattr(_core, "run", _slow_run(ran_in, engine_share, sleep_s, clock))
        res = sweep.run(tmp_path / "store", progress=progress, jobs=2)
    pids = set(workers.pids(workers._POOL[0][0])) if workers._POOL else set()
    for name in ("flows", "links"):
        pd.testing.assert_frame_equal(getattr(res, name), getattr(reference, name))
    again = sweep.run(tmp_path / "store", progress=False, jobs=1)  # reloaded: no run
    pd.testing.assert_frame_equal(again.flows, reference.flows)
    return ran_in, pids


def test_runs_that_spend_their_time_in_the_engine_stay_in_threads(
    tmp_path: Path, monkeypatch, no_workers
):
    """16 runs of 0.1 s in the 'engine' (a sleep, reported as its): the threads need
    a few per cent of the lock each, so no worker is forked and every run ran in one
    of two threads of this process."""
    ran_in, pids = _swept(tmp_path, monkeypatch, 8, 1.0, 0.1)
    assert not pids, "no worker forked"
    assert _processes(ran_in) == {os.getpid()}
    threads = {p.name.split("-", 1)[1] for p in ran_in.iterdir()}
    assert threading.main_thread().name not in threads and len(threads) == 2


def test_runs_that_need_the_lock_go_on_in_worker_processes(tmp_path: Path, monkeypatch, no_workers):
    """80 runs of 5 ms reported as all outside the engine (share 1: two threads would
    need twice the lock): after the first task the runs left (about 60, 0.15 s of
    each worker's) go to forked workers; every run is kept once, in threads or in
    the workers."""
    ran_in, pids = _swept(tmp_path, monkeypatch, 40, 0.0, 0.005)
    assert pids, "the runs left went to workers"
    assert os.getpid() in _processes(ran_in), "the first tasks ran in threads"
    assert _processes(ran_in) & pids, "the rest in the workers"


def test_the_threads_first_tasks_are_small(tmp_path: Path, monkeypatch, no_workers):
    """200 runs of 5 ms, all outside the engine. By hand: each thread's first task
    holds PROBE_CHUNK = 16 runs (the floor, 200 // 64 = 3, is below it); the first
    back measures a share of about 1 (two threads need twice the lock), and the 184
    runs left hold about 184 x 5 ms / 2 = 0.46 s of each worker's time, more than
    FORK_WORTH_S: the other thread's task finishes and the rest go to workers. So 32
    runs ran in this process (with first tasks of at most MAX_CHUNK, factored as
    chunk_size cuts them: 200 // 4 = 50, then 150 // 4 = 37, 87 ran here)."""
    here: list[int] = []
    slow = _slow_run(tmp_path, 0.0, 0.005)
    main_pid = os.getpid()

    def counted(*args, **kwargs):
        if os.getpid() == main_pid:  # a forked worker appends to its own copy
            here.append(1)
        return slow(*args, **kwargs)

    monkeypatch.setattr(_core, "run", counted)
    Sweep(BASE, AXES, seeds=range(1, 101)).run(tmp_path / "store", progress=False, jobs=2)
    assert workers._POOL, "the runs left went to workers"
    assert len(here) == 2 * schedule.PROBE_CHUNK == 32


def test_a_sweep_with_live_workers_runs_in_them(tmp_path: Path, monkeypatch, no_workers):
    """Workers kept from an earlier sweep take a later sweep's runs from its start."""
    monkeypatch.setattr(schedule, "THREADS_FIRST", 0)
    Sweep(BASE, AXES, seeds=[1]).run(progress=False, jobs=2)
    monkeypatch.undo()
    pids = set(workers.pids(workers._POOL[0][0]))
    ran_in = tmp_path / "ran"
    ran_in.mkdir()
    monkeypatch.setattr(_core, "run", _slow_run(ran_in, 1.0, 0.0))
    Sweep(BASE, AXES, seeds=[2, 3]).run(progress=False, jobs=2)
    assert _processes(ran_in) <= pids


def _drawing() -> bool:
    return any(t.name == "vtlab-progress" for t in threading.enumerate())


def test_the_progress_bar_pauses_its_thread_for_a_fork(monkeypatch):
    """The bar (drawn: a terminal, as rich's TTY_COMPATIBLE=1 says) redraws from a
    thread of its own, which Advance.paused stops and ends, and starts again after."""
    from vtlab.progress import run_progress

    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    with run_progress(3) as advance:
        assert _drawing()
        with advance.paused():
            assert not _drawing()
        assert _drawing()
        advance()
    assert not _drawing()


@pytest.mark.parametrize("threads_first", [0, 2])
def test_a_sweep_with_its_progress_bar_drawn_forks_its_workers(
    tmp_path: Path, monkeypatch, no_workers, threads_first: int
):
    """With the progress bar drawn (its thread running), a sweep of runs that need
    the lock still forks workers: from the start (THREADS_FIRST = 0, before the bar)
    or after its first tasks in threads (the bar's thread paused for the fork)."""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setattr(schedule, "THREADS_FIRST", threads_first)
    ran_in, pids = _swept(tmp_path, monkeypatch, 40, 0.0, 0.005, progress=True)
    assert pids and _processes(ran_in) & pids, "runs went to workers"
