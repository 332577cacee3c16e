"""The garbage collector is paused while a batch of runs piles up (vtlab.gcpause):
for the batch only, across overlapping batches of several threads, and left as the
process had it (disabled stays disabled); a worker's task and the one-job path's
batches simulate with it paused and store with it running."""

from __future__ import annotations

import gc
import threading
from typing import Any

import pytest

from vtlab import gcpause
from vtlab import sweep as sweep_module
from vtlab.sweep import Sweep


@pytest.fixture(autouse=True)
def _collector_enabled():
    was = gc.isenabled()
    gc.enable()
    yield
    assert gcpause._STATE["holders"] == 0, "a hold was not released"
    (gc.enable if was else gc.disable)()


def test_paused_for_the_block_then_running_again():
    with gcpause.paused():
        assert not gc.isenabled()
        with gcpause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled(), "the outer batch still holds it"
    assert gc.isenabled()


def test_a_collector_the_process_disabled_stays_disabled():
    gc.disable()
    with gcpause.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_overlapping_batches_of_two_threads_resume_it_when_the_last_ends():
    # A holds, B holds, A releases (B still holds: paused), B releases (running).
    a_held, b_held, a_done = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def a() -> None:
        with gcpause.paused():
            a_held.set()
            b_held.wait(5)
        a_done.set()

    def b() -> None:
        a_held.wait(5)
        with gcpause.paused():
            b_held.set()
            a_done.wait(5)
            seen["after a released"] = gc.isenabled()

    threads = [threading.Thread(target=f) for f in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"after a released": False}
    assert gc.isenabled()


def _points(n: int) -> list[Any]:
    return Sweep({"preset": "v2g", "bytes": "10kB"}, [], seeds=range(1, n + 1)).points()


def test_a_task_simulates_with_it_paused_and_resumes_it_after_ctrl_c(monkeypatch):
    real = sweep_module._simulate
    during: list[bool] = []

    def recording(p: Any, record: Any) -> Any:
        during.append(gc.isenabled())
        return real(p, record)

    monkeypatch.setattr(sweep_module, "_simulate", recording)
    res, n, interrupted = sweep_module._chunk_runs(_points(3), (False, False), "rows")
    assert (n, interrupted, len(res.flows)) == (3, False, 3)
    assert during == [False, False, False] and gc.isenabled()

    def ctrl_c(p: Any, record: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_module, "_simulate", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        sweep_module._chunk_runs(_points(2), (False, False), "rows")
    assert gc.isenabled()


def test_the_one_job_path_simulates_paused_and_stores_with_it_running(monkeypatch, tmp_path):
    real_simulate, real_keep = sweep_module._simulate, sweep_module._keep
    simulating: list[bool] = []
    keeping: list[bool] = []

    def simulate(p: Any, record: Any) -> Any:
        simulating.append(gc.isenabled())
        return real_simulate(p, record)

    def keep(*args: Any) -> None:
        keeping.append(gc.isenabled())
        real_keep(*args)

    monkeypatch.setattr(sweep_module, "_simulate", simulate)
    monkeypatch.setattr(sweep_module, "_keep", keep)
    monkeypatch.setattr(sweep_module, "HERE_BATCH_S", 0.0)  # a batch per run
    res = Sweep({"preset": "v2g", "bytes": "10kB"}, [], seeds=[1, 2, 3]).run(
        tmp_path / "store", jobs=1, progress=False
    )
    assert len(res.flows) == 3
    assert simulating == [False] * 3 and keeping == [True] * 3 and gc.isenabled()


def test_batches_that_overlap_without_end_collect_every_max_pause(monkeypatch):
    """Threads whose batches overlap keep the collector paused; a batch starting once
    it has been paused MAX_PAUSE_S collects first (here 0 s: every batch that starts
    while another holds), unless the process had it disabled."""
    collected: list[int] = []
    monkeypatch.setattr(gcpause, "MAX_PAUSE_S", 0.0)
    monkeypatch.setattr(gc, "collect", lambda *a: collected.append(1) or 0)
    gcpause.hold()  # the first: pauses, no collection
    gcpause.hold()  # overlaps, paused for >= 0 s: collects
    gcpause.release()
    gcpause.hold()  # collects again
    gcpause.release()
    gcpause.release()
    assert collected == [1, 1] and gc.isenabled()
    gc.disable()
    gcpause.hold()
    gcpause.hold()  # the process disabled it: no collection
    gcpause.release()
    gcpause.release()
    assert collected == [1, 1] and not gc.isenabled()


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _collections(record: list[int]) -> Any:
    def cb(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            record.append(info["generation"])

    return cb


def test_batches_pause_it_and_collect_the_young_generations_between_batches():
    clock, seen = _Clock(), []
    gc.callbacks.append(_collections(seen))
    try:
        with gcpause.Batches(0.5, clock) as batches:
            assert not gc.isenabled()
            junk = [[i] for i in range(5_000)]  # past gen 0's threshold of 700
            batches.next()  # 0 s into the batch: the same batch
            assert seen == [] and not gc.isenabled()
            clock.now += 0.5
            batches.next()  # a new batch: the young generations collected once
            assert seen == [1] and not gc.isenabled()
            del junk
        assert gc.isenabled()
    finally:
        gc.callbacks.pop()


def test_batches_inside_another_batch_leave_collecting_to_that_one():
    clock, seen = _Clock(), []
    gc.callbacks.append(_collections(seen))
    try:
        with gcpause.paused(), gcpause.Batches(0.5, clock) as batches:
            clock.now += 1.0
            batches.next()
            assert seen == [] and not gc.isenabled()
        assert gc.isenabled()
    finally:
        gc.callbacks.pop()


def test_run_many_simulates_with_the_collector_paused():
    import vtlab

    during: list[bool] = []
    vtlab.run_many(
        {"preset": "v2g", "bytes": "10kB"},
        range(1, 4),
        progress=False,
        on_result=lambda _: during.append(gc.isenabled()),
    )
    assert during == [False, False, False]
    assert gc.isenabled()
