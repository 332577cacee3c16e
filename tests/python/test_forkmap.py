"""Calls run side by side in forked children (:func:`vtlab.forkmap.fork_map`): results
in order, the calls' state inherited (not pickled), here where a fork is unsafe or
useless, an error raised here with every child gone, and no child outliving its
parent, whether it is killed or interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from procs import children, running
from vtlab import workers
from vtlab.forkmap import fork_map, started

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="fork, PR_SET_PDEATHSIG and /proc are Linux's"
)


def test_calls_run_in_forked_children_with_what_they_use_inherited():
    workers.close()
    lock = threading.Lock()  # a lock cannot be pickled: the calls are not sent
    calls = [lambda i=i: (os.getpid(), i * i, lock.locked()) for i in range(5)]
    out = fork_map(calls, 2)
    assert [(square, held) for _, square, held in out] == [(i * i, False) for i in range(5)]
    pids = {pid for pid, _, _ in out}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2
    assert not children(os.getpid()), "every child reaped"


def test_the_kept_sweep_workers_are_closed_for_the_fork(tmp_path, monkeypatch):
    """As in a study: its sweeps leave their workers (and their pool's feeder thread)
    running, and its figures are drawn after them."""
    from vtlab import schedule
    from vtlab.sweep import Sweep

    monkeypatch.setattr(schedule, "THREADS_FIRST", 0)  # workers from the sweep's start
    Sweep({"preset": "v2g", "bytes": "100kB"}, seeds=[1, 2, 3, 4]).run(jobs=2, progress=False)
    kept = set(workers.pids(workers._POOL[0][0])) if workers._POOL else set()
    assert kept and threading.active_count() > 1
    pids = set(fork_map([os.getpid] * 4, 2))
    assert not workers._POOL and not (pids & kept) and os.getpid() not in pids
    assert not children(os.getpid())


@pytest.mark.parametrize("jobs, n", [(1, 3), (4, 1), (2, 0)])
def test_one_job_or_fewer_than_two_calls_run_here(jobs, n):
    assert fork_map([os.getpid] * n, jobs) == [os.getpid()] * n


def test_with_another_thread_running_the_calls_run_here():
    """A fork while another thread runs could copy a lock that thread holds."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert fork_map([os.getpid] * 3, 2) == [os.getpid()] * 3
    finally:
        stop.set()
        other.join()


def test_the_first_error_is_raised_here_once_every_child_is_gone():
    def fails(i: int) -> int:
        if i in (1, 3):
            raise ValueError(f"figure {i} could not be drawn")
        time.sleep(0.2)
        return i

    with pytest.raises(ValueError, match="figure 1 could not be drawn"):
        fork_map([lambda i=i: fails(i) for i in range(5)], 2)
    assert not children(os.getpid())
    assert fork_map([lambda: 7, lambda: 8], 2) == [7, 8]  # usable again


@pytest.mark.parametrize("jobs", [1, 2])
def test_done_hears_of_each_call_here_as_it_returns(jobs, tmp_path):
    """``done(i, result)`` runs in this process once per call: with two children,
    call 0 returns only after call 3 has (its file, then 0.2 s for its result to come
    back), so calls 1-3 come back before it; with one job, in order."""

    def call(i: int) -> tuple[int, int]:
        if i == 0 and jobs == 2:
            _wait_for(tmp_path / "3")
            time.sleep(0.2)
        elif i:
            (tmp_path / str(i)).write_text("")
        return i, os.getpid()

    heard: list[tuple[int, int, int]] = []
    out = fork_map(
        [lambda i=i: call(i) for i in range(4)],
        jobs,
        lambda i, res: heard.append((i, res[0], os.getpid())),
    )
    assert [i for i, _ in out] == [0, 1, 2, 3]
    assert sorted(heard) == [(i, i, os.getpid()) for i in range(4)]
    assert [i for i, _, _ in heard] == ([1, 2, 3, 0] if jobs == 2 else [0, 1, 2, 3])


def test_done_is_not_told_of_a_failed_call_and_the_error_is_raised():
    def call(i: int) -> int:
        if i == 1:
            raise ValueError("estimate 1 failed")
        time.sleep(0.3 if i == 0 else 0.0)
        return i

    heard: list[int] = []
    with pytest.raises(ValueError, match="estimate 1 failed"):
        fork_map([lambda i=i: call(i) for i in range(3)], 2, lambda i, _: heard.append(i))
    assert 1 not in heard and not children(os.getpid())


def _wait_for(path, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never came")
        time.sleep(0.01)


def test_started_calls_run_in_children_while_the_block_runs(tmp_path):
    """Each call waits for a file the block writes: made before the block (or in it
    after its results were asked for), they would wait in vain and raise."""
    go = tmp_path / "go"
    calls = [lambda i=i: (_wait_for(go), i, os.getpid())[1:] for i in range(3)]
    with started(calls, 2) as results:
        go.write_text("")
        out = results()
    assert [i for i, _ in out] == [0, 1, 2]
    assert os.getpid() not in {pid for _, pid in out} and not children(os.getpid())


def test_started_with_one_job_makes_the_calls_here_before_the_block():
    order: list[str] = []
    calls = [lambda i=i: order.append(f"call {i}") or i for i in range(2)]
    with started(calls, 1) as results:
        order.append("block")
        assert results() == [0, 1]
    assert order == ["call 0", "call 1", "block"]


def test_started_leaving_the_block_without_results_waits_for_the_calls(tmp_path):
    """Five calls on two children: leaving the block finds at least two calls not
    yet handed to a child (the pool's queue holds jobs + 1 = 3 of them while both
    children sleep), and those are made too, not dropped."""

    def call(i: int) -> None:
        time.sleep(0.2)
        (tmp_path / f"done{i}").write_text("")

    with started([lambda i=i: call(i) for i in range(5)], 2):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"done{i}" for i in range(5)]
    assert not children(os.getpid())


def test_an_error_in_the_started_block_kills_the_children(tmp_path):
    """The block fails while both children are in calls that would take ten
    minutes: they are killed and reaped before the error leaves the block."""

    def call(i: int) -> None:
        (tmp_path / f"child{i}").write_text(str(os.getpid()))
        time.sleep(600)

    with (
        pytest.raises(ValueError, match="claims could not be checked"),
        started([lambda i=i: call(i) for i in range(2)], 2),
    ):
        for i in range(2):
            _wait_for(tmp_path / f"child{i}")
        raise ValueError("claims could not be checked")
    pids = [int((tmp_path / f"child{i}").read_text()) for i in range(2)]
    assert not any(running(p) for p in pids) and not children(os.getpid())


def test_a_fork_map_inside_a_started_block_runs_here():
    """The block's process runs the pool's thread: a fork there would not be safe."""
    with started([lambda: time.sleep(0.2)] * 2, 2) as results:
        assert fork_map([os.getpid] * 3, 2) == [os.getpid()] * 3
        results()
    assert fork_map([os.getpid] * 4, 2) != [os.getpid()] * 4  # forked again after it


PARENT = textwrap.dedent(
    """
    import os, sys, time
    from vtlab.forkmap import fork_map

    def call(i):
        with open(os.path.join(sys.argv[1], f"child{i}"), "w") as fh:
            fh.write(str(os.getpid()))
        time.sleep(600)

    fork_map([lambda i=i: call(i) for i in range(2)], 2)
    """
)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["killed", "interrupted"])
def test_no_child_outlives_its_parent_killed_or_interrupted(tmp_path, sig):
    """Killed (SIGKILL), the parent cannot clean up: the kernel ends its children
    (PR_SET_PDEATHSIG). Interrupted (Ctrl-C reaches the whole process group), the
    children ignore it and the parent kills and reaps them as it stops."""
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path)],
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("child*"))) < 2:
            assert parent.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        pids = [int(p.read_text()) for p in tmp_path.glob("child*")]
        if sig == signal.SIGINT:
            os.killpg(parent.pid, sig)  # as a terminal's Ctrl-C reaches the group
        else:
            os.kill(parent.pid, sig)
        _, err = parent.communicate(timeout=60)
        if sig == signal.SIGINT:
            assert b"KeyboardInterrupt" in err
        deadline = time.monotonic() + 60
        while any(running(p) for p in pids):
            assert time.monotonic() < deadline, "a child outlived its parent"
            time.sleep(0.05)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
