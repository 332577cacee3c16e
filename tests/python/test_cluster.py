"""Sweeps on a real Dask cluster on 127.0.0.1: a scheduler and two worker processes
started here (``dask scheduler`` / ``dask worker`` subprocesses), a worker killed
mid-sweep, the CLI with ``--cluster local:2``, a bad ``--scheduler``, resumption.

Expected rows always come from an independent run in threads of this process.
Every wait is bounded: subprocess timeouts, Dask timeouts, and threads joined with
a timeout (a hung cluster fails the test instead of hanging CI).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import distributed
import pandas as pd
import pytest

import test_pipeline
import vtlab
from conftest import assert_usage_error
from vtlab import store as store_module
from vtlab import sweep as sweep_module
from vtlab.store import Store
from vtlab.sweep import Axis, Sweep

PYTHON_DIR = Path(vtlab.__file__).resolve().parent.parent
KEY = ["scenario_hash", "seed", "flow"]
#: Each run ~30 ms of simulation, so the kill lands while tasks are running.
SLOW = {"preset": "v2g", "bytes": "100MB"}
SLOW_AXES = [Axis.values("loss.mean_loss", ["2%", "5%"], name="loss")]
FAST = {"preset": "v2g", "bytes": "1MB"}
FAST_AXES = [Axis.values("loss.mean_loss", ["1%", "5%"], name="loss")]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), env.get("PYTHONPATH")]))
    return env


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            print(f"{p.args[2]} (PID {p.pid}) ignored SIGTERM; killed", file=sys.stderr)
            p.kill()
            p.wait(timeout=15)


class LoopbackCluster:
    """A scheduler and worker processes on 127.0.0.1, each its own subprocess."""

    def __init__(self, tmp: Path, workers: int) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self.workers: list[subprocess.Popen[bytes]] = []
        self.logs = tmp
        file = tmp / "scheduler.json"
        self._spawn(
            "scheduler",
            "distributed.cli.dask_scheduler",
            ["--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(file)],
        )
        deadline = time.monotonic() + 60
        while not file.exists() or not file.read_text().strip():
            assert time.monotonic() < deadline, "the scheduler did not start within 60 s"
            assert self.procs[0].poll() is None, (tmp / "scheduler.log").read_text()
            time.sleep(0.1)
        self.address: str = json.loads(file.read_text())["address"]
        for i in range(workers):
            self.workers.append(
                self._spawn(
                    f"worker{i}",
                    "distributed.cli.dask_worker",
                    [
                        self.address,
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--no-dashboard",
                        "--host",
                        "127.0.0.1",
                        "--name",
                        f"w{i}",
                    ],
                )
            )
        self.client = distributed.Client(self.address, timeout=30, set_as_default=False)
        self.client.wait_for_workers(workers, timeout=90)

    def _spawn(self, name: str, module: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", module, *args], stdout=log, stderr=log, env=_env()
        )
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        try:
            self.client.close(timeout=10)
        finally:
            _stop(self.workers)  # first, while their scheduler is still there
            _stop(self.procs)


@pytest.fixture
def loopback(tmp_path: Path) -> Iterator[LoopbackCluster]:
    """A cluster of its own (for a test that kills a worker)."""
    (tmp_path / "logs").mkdir()
    cluster = LoopbackCluster(tmp_path / "logs", workers=2)
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackCluster]:
    """A cluster shared by the tests of this module that leave it intact."""
    cluster = LoopbackCluster(tmp_path_factory.mktemp("logs"), workers=2)
    try:
        yield cluster
    finally:
        cluster.close()


def _bounded(fn: Callable[[], Any], timeout: float) -> Any:
    """``fn()`` in a daemon thread: its result, its exception, or a failed test
    after ``timeout`` seconds."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test thread
            box["error"] = e

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"did not finish within {timeout} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _committed(store: Path) -> dict[str, Any]:
    """The runs committed to ``store`` by key (none before it exists)."""
    if not (store / "store.json").exists():
        return {}
    return Store.open(store).index()


def _by_key(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(KEY).reset_index(drop=True)


def _assert_same_rows(got: pd.DataFrame, want: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(_by_key(got), _by_key(want), check_exact=True)


def _assert_store_complete(store: Path, sweep: Sweep) -> None:
    """Every run of ``sweep`` is in the store exactly once, and nothing else."""
    keys = {p.key for p in sweep.points()}
    assert set(_committed(store)) == keys
    pending = store / "_pending"
    assert not pending.exists() or not any(pending.iterdir()), "no partial part left"
    assert not (store / "_quarantine").exists()
    frames, read = Store.open(store).read(["runs", "flows", "links"])
    assert read == keys
    flows = pd.read_parquet(store / "flows")
    pairs = list(zip(flows["scenario_hash"], flows["seed"], strict=True))
    assert len(pairs) == len(set(pairs)) == len(keys), "each run's flow row once"


def test_a_worker_killed_mid_sweep_loses_no_run(
    loopback: LoopbackCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Commit every 3 runs, so that the store shows the sweep's progress.
    monkeypatch.setattr(store_module, "MAX_PART_RUNS", 3)
    sweep = Sweep(SLOW, SLOW_AXES, seeds=range(1, 31))  # 60 runs
    n = len(sweep.points())
    want = sweep.run(progress=False, jobs=2).flows  # independent, in threads here
    store = tmp_path / "store"
    pids = loopback.client.run(os.getpid)  # worker address -> PID
    assert sorted(pids.values()) == sorted(p.pid for p in loopback.workers)

    box: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: box.update(
            res=sweep.run(store, progress=False, scheduler=loopback.address, task_runs=3)
        ),
        daemon=True,
    )
    thread.start()
    # Wait until a quarter of the runs are stored, then kill a worker that is
    # running a task at that moment.
    deadline = time.monotonic() + 120
    victim = None
    while victim is None:
        assert time.monotonic() < deadline, "the sweep made no progress"
        assert thread.is_alive(), f"the sweep ended before the kill: {box}"
        if len(_committed(store)) >= n // 4:
            busy = [w for w, tasks in loopback.client.processing().items() if tasks]
            if busy:
                victim = pids[busy[0]]
                break
        time.sleep(0.02)
    stored_at_kill = len(_committed(store))
    os.kill(victim, signal.SIGKILL)
    thread.join(180)
    assert not thread.is_alive(), "the sweep did not finish within 180 s after the kill"
    assert "res" in box, box
    assert stored_at_kill < n, "the kill came after the sweep had finished"
    killed = next(p for p in loopback.workers if p.pid == victim)
    assert killed.wait(timeout=10) == -signal.SIGKILL
    assert len(loopback.client.nthreads()) == 1, "the other worker finished the sweep"

    _assert_store_complete(store, sweep)
    _assert_same_rows(box["res"].flows, want)
    # What the store holds is the same rows too (reloaded, nothing simulated).
    _assert_same_rows(sweep.run(store, progress=False, jobs=1).flows, want)


def test_resume_after_an_interrupted_cluster_sweep_simulates_only_the_missing_runs(
    shared: LoopbackCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    loopback = shared
    sweep = Sweep(FAST, FAST_AXES, seeds=range(1, 11))  # 20 runs
    n = len(sweep.points())
    want = sweep.run(progress=False, jobs=2).flows
    store = tmp_path / "store"
    real_finish = sweep_module._finish_chunk
    stored_keys: list[str] = []

    def interrupted_finish(points: Any, *rest: Any) -> Any:
        if len(stored_keys) == 6:
            raise KeyboardInterrupt  # the client is stopped (Ctrl-C) mid-sweep
        stored_keys.extend(p.key for p in points)
        return real_finish(points, *rest)

    monkeypatch.setattr(sweep_module, "_finish_chunk", interrupted_finish)
    with pytest.raises(KeyboardInterrupt):
        _bounded(
            lambda: sweep.run(store, progress=False, scheduler=loopback.address, task_runs=2),
            120,
        )
    # The six runs finished before the interruption (three tasks of two) are committed
    # when it stops.
    assert len(stored_keys) == 6
    assert set(_committed(store)) == set(stored_keys)
    first = {p: p.stat() for p in store.glob("*/part-*.parquet")}

    resumed: list[str] = []

    def counting_finish(points: Any, *rest: Any) -> Any:
        resumed.extend(p.key for p in points)
        return real_finish(points, *rest)

    monkeypatch.setattr(sweep_module, "_finish_chunk", counting_finish)
    res = _bounded(
        lambda: sweep.run(store, progress=False, scheduler=loopback.address, task_runs=2), 120
    )
    assert len(resumed) == n - 6
    assert not set(resumed) & set(stored_keys)
    for path, st in first.items():  # the runs stored before were not written again
        now = path.stat()
        assert (now.st_ino, now.st_mtime_ns) == (st.st_ino, st.st_mtime_ns), path
    _assert_store_complete(store, sweep)
    _assert_same_rows(res.flows, want)


def test_a_worker_with_another_core_build_is_refused(
    shared: LoopbackCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import vtlab.api

    sweep = Sweep(FAST, FAST_AXES, seeds=[1, 2])
    # The client now believes it is another build than the workers run.
    monkeypatch.setattr(vtlab.api, "core_build", lambda: "0123456789abcdef")
    with pytest.raises(ValueError, match=r"--scheduler: a worker runs vtlab .*core build"):
        _bounded(lambda: sweep.run(tmp_path, progress=False, scheduler=shared.address), 120)
    assert _committed(tmp_path) == {}  # nothing from the other build was stored


def _vtlab(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vtlab", *args],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=timeout,
    )


SWEEP_ARGS = ["sweep", "v2g", "--bytes", "1MB", "--axis", "loss:loss.mean_loss=1%,5%", "-n", "3"]


def test_cli_sweep_on_a_local_cluster_of_two(cli, tmp_path: Path):
    ref = cli(*SWEEP_ARGS, "--jobs", "2", "-q", "--out", str(tmp_path / "ref.parquet"))
    assert ref.exit_code == 0, ref.output
    proc = _vtlab(
        *SWEEP_ARGS,
        "--cluster",
        "local:2",
        "--store",
        str(tmp_path / "store"),
        "--out",
        str(tmp_path / "cluster.parquet"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "running on the local cluster local:2" in proc.stderr
    assert "2 workers, 2 threads" in proc.stderr
    assert "5%" in proc.stdout  # the summary table
    got = pd.read_parquet(tmp_path / "cluster.parquet")
    _assert_same_rows(got, pd.read_parquet(tmp_path / "ref.parquet"))
    assert len(got) == 6 and len(_committed(tmp_path / "store")) == 6


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_bad_scheduler_address_is_one_error_line_in_bounded_time(cli):
    address = f"tcp://127.0.0.1:{_closed_port()}"
    started = time.monotonic()
    result = cli(*SWEEP_ARGS, "--scheduler", address, "--connect-timeout", "2")
    elapsed = time.monotonic() - started
    line = assert_usage_error(result, "--scheduler", address)
    assert "cannot connect" in line
    assert elapsed < 30, elapsed


#: Cores of this machine: ``--cluster local:N`` allows 4 per core (docs/cluster.md).
CORES = os.cpu_count() or 1


def _sweep_child(*args: str) -> subprocess.CompletedProcess[str]:
    """``vtlab sweep`` in a child process that must end within 60 s, in 6 GiB of
    address space (a regression fails instead of waiting or exhausting memory)."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))

    return subprocess.run(
        [sys.executable, "-m", "vtlab", *SWEEP_ARGS, *args],
        capture_output=True,
        text=True,
        env=_env(),
        preexec_fn=cap,
        timeout=60,
    )


def test_a_refused_connection_fails_at_once():
    # A port bound on 127.0.0.1 but not listening refuses connections. Before, the
    # command waited out the whole connect timeout (here an hour: the child's 60 s
    # timeout would fail the test).
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{bound.getsockname()[1]}"
        proc = _sweep_child("--scheduler", address, "--connect-timeout", "3600")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        f"error: --scheduler: cannot connect to '{address}': connection refused "
        "(no scheduler listens there)"
    )


def test_a_server_that_never_answers_is_given_up_after_the_timeout():
    # It accepts the connection (the kernel does, for a listening socket) and never
    # sends the handshake a Dask scheduler sends first: Dask alone would wait forever.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        proc = _sweep_child("--scheduler", address, "--connect-timeout", "2")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        f"error: --scheduler: cannot connect to '{address}': no answer within 2 s "
        "(--connect-timeout; not a Dask scheduler?)"
    )


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        (
            "nonsense://x",
            "unknown address scheme 'nonsense' (known schemes: ['inproc', 'tcp', 'tls', "
            "'ucx', 'ws', 'wss'])",
        ),
        ("tcp://127.0.0.1", "missing port number in address '127.0.0.1'"),
    ],
)
def test_a_malformed_scheduler_address_is_one_line_and_nothing_after(address, problem):
    # Before: the error line, then 20 s later a `Client.__del__` traceback (the
    # half-started client closing at exit).
    proc = _sweep_child("--scheduler", address)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"error: --scheduler: cannot connect to '{address}': {problem}"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--cluster", "local:0"], "--cluster: expected local:N"),
        (["--cluster", "remote:2"], "--cluster: expected local:N"),
        (["--cluster", "local:2", "--scheduler", "tcp://127.0.0.1:1"], "not both"),
        (["--cluster", "local:2", "--jobs", "2"], "--jobs: not used with --cluster"),
        (["--task-runs", "4"], "--task-runs: only used with"),
        (["--cluster", "local:2", "--task-runs", "0"], "--task-runs: must be at least 1"),
        (["--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", "0"], "--connect-timeout"),
    ],
)
def test_bad_cluster_options_are_refused_before_anything_runs(cli, args, needle):
    assert_usage_error(cli(*SWEEP_ARGS, *args), needle)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        # Before: taken, and with a refused address Dask retried for 31 years.
        (
            ["--scheduler", "nonsense://x", "--connect-timeout", "1e9"],
            "error: --connect-timeout: 1e+09 s is outside (0, 3600] s (at most one hour)",
        ),
        (
            ["--scheduler", "nonsense://x", "--connect-timeout", "nan"],
            "error: --connect-timeout: nan s is outside (0, 3600] s (at most one hour)",
        ),
        # Before: 4 × cores + 1 workers were started (100 on 2 cores too).
        (
            ["--cluster", f"local:{4 * CORES + 1}"],
            f"error: --cluster: 'local:{4 * CORES + 1}' starts more workers than this "
            f"machine has cores for: at most local:{4 * CORES} (4 per core, {CORES} cores)",
        ),
        # Before: a MemoryError traceback.
        (
            ["--cluster", "local:99999999999999999999"],
            "error: --cluster: 'local:99999999999999999999' starts more workers than this "
            f"machine has cores for: at most local:{4 * CORES} (4 per core, {CORES} cores)",
        ),
    ],
)
def test_cluster_options_are_bounded(args, line):
    proc = _sweep_child(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == line


def test_reproduce_takes_the_cluster_options(cli, tmp_path: Path):
    result = cli("reproduce", "park2019", "--out", str(tmp_path), "--cluster", "local:x")
    assert_usage_error(result, "--cluster: expected local:N")
    assert not (tmp_path / "store.json").exists()


#: Runs the CLI in a fresh interpreter where ``import distributed`` fails.
WITHOUT_DASK = (
    "import sys\n"
    "sys.modules['distributed'] = None\n"
    "sys.modules['dask'] = None\n"
    "from vtlab.cli import main\n"
    "sys.argv = ['vtlab', *sys.argv[1:]]\n"
    "main()\n"
)


@pytest.mark.parametrize("option", [["--cluster", "local:2"], ["--scheduler", "tcp://x:1"]])
def test_without_dask_a_cluster_option_is_one_clear_error(tmp_path: Path, option):
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_DASK, *SWEEP_ARGS, *option],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    field = option[0]
    assert proc.stderr.strip() == (
        f"error: {field}: dask.distributed is not installed (pip install 'vtlab[cluster]')"
    )


def test_without_cluster_options_dask_is_never_imported(tmp_path: Path):
    code = (
        "import sys\n"
        "import vtlab, vtlab.sweep\n"
        "from vtlab.cli import main\n"
        f"sys.argv = ['vtlab', *{SWEEP_ARGS!r}, '-q', '--store', {str(tmp_path)!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as e:\n"
        "    assert e.code in (0, None), e.code\n"
        "print('IMPORTED', sorted(m for m in ('dask', 'distributed') if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "IMPORTED []" in proc.stdout
    assert len(_committed(tmp_path)) == 6  # the sweep did run


@pytest.fixture
def study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """test_pipeline's tiny fake study (two runs)."""
    pkg = tmp_path / "pkgs" / "fakestudy"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "paper.toml").write_text(test_pipeline.PAPER_TOML)
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    return test_pipeline._fake_study("fakestudy")


def test_a_study_pipeline_runs_its_grids_on_the_cluster(
    study: Any, shared: LoopbackCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """``vtlab reproduce``'s path: Config.scheduler reaches every Campaign sweep."""
    from vtlab.experiments import pipeline
    from vtlab.experiments.common import Config

    local = _bounded(
        lambda: pipeline.run(study, Config(out=tmp_path / "local", progress=False)), 120
    )
    calls: list[int] = []
    real_run = sweep_module._core.run

    def counted(*args: Any, **kwargs: Any) -> Any:  # runs in this process: must not happen
        calls.append(1)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(sweep_module._core, "run", counted)
    config = Config(out=tmp_path / "cluster", progress=False, scheduler=shared.client, task_runs=1)
    remote = _bounded(lambda: pipeline.run(study, config), 120)
    assert calls == [], "the runs went to the cluster, not to threads here"
    assert (remote.simulated, remote.loaded) == (local.simulated, local.loaded) == (2, 0)
    for name in ("goodput.csv", "comparison.csv"):
        assert (tmp_path / "cluster" / name).read_text() == (tmp_path / "local" / name).read_text()


class CountingClient:
    """A client that records the number of runs in every task it submits."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.sizes: list[int] = []

    def submit(self, fn: Any, batch: list[Any], *args: Any, **kwargs: Any) -> Any:
        self.sizes.append(len(batch))
        return self._client.submit(fn, batch, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@pytest.mark.parametrize("task_runs", [None, 7])
def test_tasks_cover_every_run_once_and_progress_advances_per_run(
    shared: LoopbackCluster, task_runs: int | None
):
    from vtlab.cluster import run_points

    sweep = Sweep(FAST, FAST_AXES, seeds=range(1, 101))  # 200 runs of ~1 ms
    todo = sweep.points()
    finished: list[str] = []
    advanced: list[int] = []
    client = CountingClient(shared.client)
    _bounded(
        lambda: run_points(
            client,
            todo,
            False,
            lambda points, raws: finished.extend(p.key for p in points),
            lambda: advanced.append(len(finished)),
            task_runs=task_runs,
        ),
        120,
    )
    assert sorted(finished) == sorted(p.key for p in todo)  # every run, once
    # One step per run, after its task finished: step i comes with i runs finished or more.
    assert len(advanced) == len(todo)
    assert all(done >= i for i, done in enumerate(advanced, start=1))
    assert sum(client.sizes) == len(todo)
    if task_runs is None:
        # The first tasks measure a run (one each); later ones are sized from that.
        assert client.sizes[0] == 1 and max(client.sizes) > 1
        assert len(client.sizes) < len(todo) // 2
    else:
        assert client.sizes == [7] * (len(todo) // 7) + [len(todo) % 7]


def test_validate_runs_the_vtlab_side_on_the_cluster(shared: LoopbackCluster, tmp_path: Path):
    """`vtlab validate --scheduler`: vtlab's runs go to the workers, ns-3's stay here
    (a fake ns-3 runner: this test is about where runs go, not about ns-3), and every
    vtlab record equals the one the local child-process path gives."""
    from test_validate import FakeRunner, _fake_binary
    from vtlab.api import core_build
    from vtlab.validation import v2g as validate

    grid = validate.Grid(["newreno", "cubic"], [0.0, 0.05], [1, 2], 300_000)
    ns3_side = FakeRunner()

    def local_ns3_only(task: validate.Task) -> dict[str, Any]:
        assert task.side == "ns-3", "a vtlab run was not sent to the cluster"
        return ns3_side(task)

    res = _bounded(
        lambda: validate.validate(
            grid,
            tmp_path,
            runner=local_ns3_only,
            binary=_fake_binary(tmp_path),
            progress=False,
            scheduler=shared.address,
        ),
        180,
    )
    assert len(ns3_side.calls) == 2 * 2 * 2 and res.errors == []
    records = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert len(records) == 16 and len({validate.record_key(r) for r in records}) == 16
    vt = {validate.record_key(r): r for r in records if r["side"] == "vtlab"}
    vt_hash = core_build()
    tasks = [t for t in validate.plan(grid, vt_hash, _fake_binary(tmp_path)) if t.side == "vtlab"]
    assert sorted(vt) == sorted(t.key for t in tasks)
    for task in tasks:
        here = validate.execute(task)  # the local path: this process, no Dask
        there = vt[task.key]
        assert {k: v for k, v in here.items() if k != "wall_s"} == {
            k: v for k, v in there.items() if k != "wall_s"
        }
    assert len(res.table) == 4


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--cluster", "local:0"], "--cluster: expected local:N"),
        (["--cluster", "local:2", "--scheduler", "tcp://127.0.0.1:1"], "not both"),
        (["--scheduler", " "], "--scheduler: needs an address"),
        (["--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", "-1"], "--connect-timeout"),
    ],
)
def test_validate_refuses_bad_cluster_options_before_anything_runs(cli, tmp_path, args, needle):
    assert_usage_error(cli("validate", "--quick", "--out", str(tmp_path / "v"), *args), needle)
    assert not (tmp_path / "v" / "runs.jsonl").exists()
