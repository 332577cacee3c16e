"""The sweep's worker processes (vtlab.workers): reused by later sweeps, and gone on
every way out of a sweep or of the process (docs/reliability.md, "Worker processes")."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from procs import running
from vtlab import _core, schedule, workers
from vtlab.sweep import Axis, Sweep

BASE = {"preset": "v2g", "bytes": "1MB"}
AXES = [Axis.values("loss.mean_loss", ["1%", "5%"], name="loss")]

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG and /proc are Linux's"
)


@pytest.fixture(autouse=True)
def processes_from_the_start(monkeypatch):
    """These sweeps go to worker processes from their start: without live workers, a
    sweep of two jobs would start in threads (vtlab.schedule.THREADS_FIRST) and keep
    to them for runs as few and short as these (docs/cluster.md)."""
    monkeypatch.setattr(schedule, "THREADS_FIRST", 0)


def _live_pids() -> list[int]:
    return workers.pids(workers._POOL[0][0]) if workers._POOL else []


def _all_end(pids: list[int], within: float = 60.0) -> bool:
    """Whether every process of ``pids`` ends within ``within`` seconds (a generous
    bound: they end at once, but CI machines are shared)."""
    deadline = time.monotonic() + within
    while any(running(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_later_sweeps_reuse_the_workers_with_the_same_rows(tmp_path: Path):
    sweep = Sweep(BASE, AXES, seeds=[1, 2, 3])
    reference = sweep.run(progress=False, jobs=1)
    first = sweep.run(tmp_path / "a", progress=False, jobs=2)
    pids = _live_pids()
    assert len(pids) == 2 and os.getpid() not in pids
    second = Sweep(BASE, AXES, seeds=[4, 5]).run(tmp_path / "b", progress=False, jobs=2)
    assert _live_pids() == pids, "the second sweep forked no worker"
    assert len(second.flows) == 4
    for name in ("flows", "links"):
        pd.testing.assert_frame_equal(getattr(first, name), getattr(reference, name))
    # Asking for another number of jobs than the pool has forks a pool of that size.
    Sweep(BASE, AXES, seeds=[6, 7]).run(progress=False, jobs=3)
    assert len(_live_pids()) == 3
    assert _all_end(pids), "the replaced workers are gone"


def test_an_idle_worker_ignores_ctrl_c_and_serves_the_next_sweep(tmp_path: Path):
    """SIGINT reaches idle workers too (the terminal's process group); a stop it
    requested would stop the next sweep's first run in that worker (runs look for
    it every 65 536 events: 20 MB runs have more)."""
    sweep = Sweep({**BASE, "bytes": "20MB"}, AXES, seeds=[1, 2])
    reference = sweep.run(progress=False, jobs=1)
    Sweep(BASE, AXES, seeds=[9]).run(progress=False, jobs=2)
    pids = _live_pids()
    for pid in pids:
        os.kill(pid, signal.SIGINT)
    time.sleep(0.2)  # let the signals arrive (an early run would also show a stale stop)
    assert all(running(p) for p in pids)
    try:
        res = sweep.run(tmp_path, progress=False, jobs=2)
    except KeyboardInterrupt:
        pytest.fail("an idle worker's Ctrl-C stopped the next sweep's run")
    assert _live_pids() == pids
    pd.testing.assert_frame_equal(res.flows, reference.flows)


def test_an_error_in_a_sweep_kills_and_reaps_the_workers(tmp_path: Path, monkeypatch):
    real_run = _core.run

    def failing_run(spec, seed, *args, **kwargs):
        (tmp_path / str(os.getpid())).touch()  # the workers that ran
        if seed == 2:
            raise ValueError("seed 2 fails")
        return real_run(spec, seed, *args, **kwargs)

    monkeypatch.setattr(_core, "run", failing_run)
    sweep = Sweep(BASE, AXES, seeds=[1, 2, 3, 4])
    with pytest.raises(ValueError, match="seed 2 fails"):
        sweep.run(progress=False, jobs=2)
    assert workers._POOL == [], "the pool is closed"
    pids = [int(p.name) for p in tmp_path.iterdir()]
    assert pids and os.getpid() not in pids
    assert not any(running(p) for p in pids), "every worker reaped before the error left"


def test_a_dead_worker_ends_the_sweep_and_the_next_one_forks_anew(monkeypatch):
    real_run = _core.run

    def dying_run(spec, seed, *args, **kwargs):
        if seed == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return real_run(spec, seed, *args, **kwargs)

    monkeypatch.setattr(_core, "run", dying_run)
    from concurrent.futures.process import BrokenProcessPool

    with pytest.raises(BrokenProcessPool):
        Sweep(BASE, AXES, seeds=[1, 2]).run(progress=False, jobs=2)
    assert workers._POOL == []
    monkeypatch.setattr(_core, "run", real_run)
    res = Sweep(BASE, AXES, seeds=[1, 2]).run(progress=False, jobs=2)
    assert len(res.flows) == 4 and len(_live_pids()) == 2


# A process that runs a sweep with two jobs, prints its workers' pids, then ends as
# told: "exit" (normally), "raise" (an uncaught exception) or "wait" (until killed).
CHILD = textwrap.dedent(
    """
    import sys, time
    from vtlab import schedule, workers
    schedule.THREADS_FIRST = 0  # to worker processes from the start
    from vtlab.sweep import Axis, Sweep
    Sweep({"preset": "v2g", "bytes": "200kB"},
          [Axis.values("loss.mean_loss", ["1%", "5%"], name="loss")],
          seeds=[1, 2]).run(progress=False, jobs=2)
    print(*workers.pids(workers._POOL[0][0]), flush=True)
    if sys.argv[1] == "raise":
        raise RuntimeError("after the sweep")
    if sys.argv[1] == "wait":
        time.sleep(600)
    """
)


def _child(how: str) -> tuple[subprocess.Popen[str], list[int]]:
    env = {**os.environ, "PYTHONPATH": str(Path(workers.__file__).parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, how],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    # Its line within 120 s (a sweep of four 200 kB runs), else the child is killed
    # and the test fails rather than waiting for ever.
    ready, _, _ = select.select([proc.stdout], [], [], 120)
    line = proc.stdout.readline() if ready else ""
    pids = [int(p) for p in line.split()]
    if len(pids) != 2:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"no line of two worker pids from the child: {line!r}, {err}")
    return proc, pids


@pytest.mark.parametrize(("how", "status"), [("exit", 0), ("raise", 1)])
def test_the_workers_end_with_the_process(how: str, status: int):
    proc, pids = _child(how)
    assert proc.wait(timeout=120) == status
    assert _all_end(pids)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_the_workers_die_with_a_killed_process(sig: signal.Signals):
    """SIGKILL (and SIGTERM's default action) end the process without any cleanup of
    its own: the kernel kills the workers (PR_SET_PDEATHSIG)."""
    proc, pids = _child("wait")
    assert all(running(p) for p in pids)
    proc.send_signal(sig)
    assert proc.wait(timeout=120) == -sig
    assert _all_end(pids), "no orphaned worker"


def test_the_store_is_the_same_with_one_job_two_and_kept_workers(tmp_path: Path):
    """Every table of the store (its rows in the points' order, the runs' keys and
    specs) is the same whether the runs ran here, in workers forked for the sweep, or
    in workers kept from a sweep before (which ran other runs first)."""
    from vtlab.results import TABLES, load

    base = {**BASE, "session": {"duration": "5s"}, "bytes": "200kB"}
    sweep = Sweep(base, AXES, seeds=[1, 2, 3])
    sweep.run(tmp_path / "one", progress=False, jobs=1)
    sweep.run(tmp_path / "forked", progress=False, jobs=2)
    Sweep(base, AXES, seeds=[7, 8]).run(progress=False, jobs=2)  # the workers run others
    pids = _live_pids()
    sweep.run(tmp_path / "kept", progress=False, jobs=2)
    assert _live_pids() == pids

    def ordered(frame: pd.DataFrame) -> pd.DataFrame:
        # Runs are committed as they finish (in another order with two workers): by
        # run, keeping each run's rows in order; the runs table has no axis columns.
        by = ["loss", "seed"] if "loss" in frame else ["run_key"]
        return frame.sort_values(by, kind="stable").reset_index(drop=True)

    for table in TABLES:
        if table in ("traces", "events"):  # not recorded by this sweep
            continue
        want = ordered(load(tmp_path / "one", table))
        assert len(want), table
        for name in ("forked", "kept"):
            pd.testing.assert_frame_equal(ordered(load(tmp_path / name, table)), want)
