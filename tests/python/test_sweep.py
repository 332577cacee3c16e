"""Sweeps: grid expansion, labels, storage, and resume after an interruption."""

import os
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from vtlab import ScenarioError, _core
from vtlab.api import MAX_RUNS, MAX_SWEEP_RUNS
from vtlab.store import Store
from vtlab.sweep import Axis, AxisError, Sweep

BASE = {"preset": "v2g", "bytes": "1MB"}
AXES = [
    Axis.values("tcp.cc", ["newreno", "newreno-sc"], name="variant"),
    Axis.values("loss.mean_loss", ["1%", "5%"], name="loss"),
]


def _committed(store: Path) -> dict:
    """The store's committed runs by key (read from its commit records)."""
    return Store.open(store).index()


def _part_files(store: Path) -> list[Path]:
    """Every file of the store's committed parts, in their tables' folders."""
    return sorted(p for p in store.glob("*/part-*.parquet"))


def _no_partial_part(store: Path) -> bool:
    pending = store / "_pending"
    return not pending.exists() or not any(pending.iterdir())


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(["variant", "loss", "seed"]).reset_index(drop=True)


def test_grid_is_the_cartesian_product_times_seeds():
    sw = Sweep(BASE, AXES, seeds=[1, 2, 3])
    points = sw.points()
    assert len(points) == 2 * 2 * 3
    assert points[0].label_dict == {"variant": "newreno", "loss": "1%"}
    assert len({p.key for p in points}) == len(points)


def test_variants_axis_applies_several_settings():
    axis = Axis.variants(
        "variant",
        {"nd": {"tcp.cc": "newreno", "tcp.delayed_ack": False}, "plain": {"tcp.cc": "newreno"}},
    )
    res = Sweep(BASE, [axis], seeds=[1]).run(progress=False)
    assert list(res.flows["variant"]) == ["nd", "plain"]
    # Without delayed ACKs the receiver acknowledges every segment: more ACKs, same data.
    assert res.links.query("direction == 'evcc->secc'")["packets_carried"].diff().iloc[1] < 0


def test_labels_and_identity_columns_on_every_row():
    res = Sweep(BASE, AXES, seeds=[1]).run(progress=False)
    assert list(res.flows.columns[:2]) == ["variant", "loss"]
    assert set(res.links["loss"]) == {"1%", "5%"}
    assert res.flows["scenario_hash"].nunique() == 4


def test_common_random_numbers_same_seed_same_loss_stream():
    # With SACK every variant sees nearly the same drop count for a seed (the
    # loss decisions follow the packet sequence), unlike different seeds.
    res = Sweep(
        {"preset": "v2g", "bytes": "5MB", "loss": {"mean_loss": "5%"}}, [AXES[0]], seeds=[1, 2]
    ).run(progress=False)
    drops = res.flows.set_index(["variant", "seed"])["drops_link_error"]
    assert (
        abs(drops["newreno", 1] - drops["newreno-sc", 1])
        < abs(drops["newreno", 1] - drops["newreno", 2]) + 50
    )


def test_store_resumes_without_repeating_or_losing_runs(tmp_path: Path, monkeypatch):
    sw = Sweep(BASE, AXES, seeds=[1, 2, 3])
    reference = _sorted(Sweep(BASE, AXES, seeds=[1, 2, 3]).run(progress=False).flows)

    calls = {"n": 0}
    real_run = _core.run

    def flaky_run(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 5:
            raise KeyboardInterrupt
        return real_run(*args, **kwargs)

    monkeypatch.setattr(_core, "run", flaky_run)
    with pytest.raises(KeyboardInterrupt):
        sw.run(tmp_path, jobs=1, progress=False)
    # The five runs that finished before the interruption are committed, all of them.
    assert len(_committed(tmp_path)) == 5
    assert _no_partial_part(tmp_path), "no partial part left"

    monkeypatch.setattr(_core, "run", real_run)
    # The resumed sweep runs in worker processes (jobs=2), so it is watched through
    # the store: the committed parts are not written again (same inode and time).
    stored = _part_files(tmp_path)
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in stored}
    resumed = sw.run(tmp_path, jobs=2, progress=False)
    after = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in stored}
    assert after == before, "finished runs are not repeated"
    assert sorted(_committed(tmp_path)) == sorted(p.key for p in sw.points())
    assert len(pd.read_parquet(tmp_path / "flows")) == 12, "each run's rows once"
    pd.testing.assert_frame_equal(_sorted(resumed.flows), reference)
    assert len(resumed.flows) == 12, "no duplicate rows"

    # A finished campaign reloads without simulating (in this process or a worker).
    monkeypatch.setattr(_core, "run", _no_run)
    again = sw.run(tmp_path, progress=False)
    pd.testing.assert_frame_equal(_sorted(again.flows), reference)


def test_several_jobs_run_in_worker_processes_with_the_same_rows(tmp_path: Path, monkeypatch):
    """With jobs=2 the runs go to forked worker processes (each records its pid here),
    not to this process, and the rows are those of one job. (From the start: runs
    as few and short as these would otherwise stay in threads, test_schedule.py.)"""
    from vtlab import schedule

    monkeypatch.setattr(schedule, "THREADS_FIRST", 0)
    reference = Sweep(BASE, AXES, seeds=[1, 2]).run(progress=False, jobs=1)
    real_run = _core.run
    pids = tmp_path / "pids"
    pids.mkdir()

    def recording_run(*args, **kwargs):
        (pids / str(os.getpid())).touch()
        return real_run(*args, **kwargs)

    monkeypatch.setattr(_core, "run", recording_run)
    res = Sweep(BASE, AXES, seeds=[1, 2]).run(tmp_path / "store", progress=False, jobs=2)
    ran_in = {int(p.name) for p in pids.iterdir()}
    assert ran_in and os.getpid() not in ran_in
    for name in ("flows", "links"):
        pd.testing.assert_frame_equal(getattr(res, name), getattr(reference, name))


def test_an_interrupted_worker_stops_the_sweep_and_it_resumes(tmp_path: Path, monkeypatch):
    """Ctrl-C in a worker (here: its run raises KeyboardInterrupt for seed 3) stops the
    sweep with KeyboardInterrupt; no partial file is left, and a resumed sweep completes
    every run once."""
    _interrupted_then_resumed(tmp_path, monkeypatch)


def _interrupted_then_resumed(store: Path, monkeypatch) -> None:
    sw = Sweep(BASE, AXES, seeds=[1, 2, 3])
    reference = _sorted(sw.run(progress=False, jobs=1).flows)
    real_run = _core.run

    def interrupted_run(spec, seed, *args, **kwargs):
        if seed == 3:
            raise KeyboardInterrupt
        return real_run(spec, seed, *args, **kwargs)

    monkeypatch.setattr(_core, "run", interrupted_run)
    with pytest.raises(KeyboardInterrupt):
        sw.run(store, jobs=2, progress=False)
    assert _no_partial_part(store), "no partial part left"
    # The runs of seeds 1 and 2 that finished before are kept (seed 3 never ran).
    assert {k.split("-")[1] for k in _committed(store)} <= {"1", "2"}
    monkeypatch.setattr(_core, "run", real_run)
    resumed = sw.run(store, jobs=2, progress=False)
    pd.testing.assert_frame_equal(_sorted(resumed.flows), reference)
    assert len(_committed(store)) == 12, "every run stored once"


def test_chunks_are_half_of_each_workers_share_and_at_most_64_runs():
    from vtlab.schedule import chunk_size

    # 240 runs on 2 workers: 240 // (2 * 2) = 60 per chunk; 5 runs: 1; 100 000: capped.
    assert (chunk_size(240, 2), chunk_size(5, 2), chunk_size(100_000, 16)) == (60, 1, 64)


def test_chunks_shrink_towards_the_end_and_keep_every_point_once_in_order():
    from vtlab.schedule import chunks

    todo = list(range(100))
    sizes = [len(c) for c in chunks(todo, 2)]  # type: ignore[arg-type]
    # By hand: each chunk is (runs left) // 4 (2 workers x 2), at least 100 // 64 = 1:
    # 100 -> 25, 75 -> 18, 57 -> 14, 43 -> 10, 33 -> 8, 25 -> 6, 19 -> 4, 15 -> 3,
    # 12 -> 3, 9 -> 2, then the last 7 one at a time.
    assert sizes == [25, 18, 14, 10, 8, 6, 4, 3, 3, 2] + [1] * 7
    assert [p for c in chunks(todo, 2) for p in c] == todo  # type: ignore[arg-type]
    # 6400 runs on 2 workers: 6400 // 8 = 800 and the floor 6400 // 64 = 100 are both
    # capped at 64 runs: 100 chunks of 64.
    assert [len(c) for c in chunks(list(range(6400)), 2)] == [64] * 100  # type: ignore[arg-type]


def test_tasks_grow_to_a_quarter_second_of_short_runs_within_their_bounds():
    """Pace: 64 runs a task until runs come back; then as many runs as a quarter of a
    second of one worker's time holds, or as give 60 000 rows, between 64 and 512."""
    from types import SimpleNamespace

    from vtlab.schedule import Pace

    def after(workers: int, seconds: float, runs: int, rows: int) -> int:
        now = [0.0]
        pace = Pace(workers, clock=lambda: now[0])
        assert pace() == 64, "nothing back yet"
        empty = SimpleNamespace(flows=[], links=[], sessions=[], messages=[], traces=None)
        pace.kept(runs, SimpleNamespace(**{**vars(empty), "flows": [0] * rows, "events": None}))
        now[0] = seconds
        return pace()

    # By hand. 2 workers, 4 000 runs back after 1 s: 0.5 ms a run, 0.25 s holds 500;
    # 5 rows a run: 12 000 for the rows; so 500.
    assert after(2, 1.0, 4000, 20_000) == 500
    # 16 workers, 100 000 runs in 2 s (0.32 ms a run): 781 by time, capped at 512.
    assert after(16, 2.0, 100_000, 200_000) == 512
    # Long runs (2 workers, 16 runs in 1 s: 0.125 s a run): 2 by time, at least 64.
    assert after(2, 1.0, 16, 100) == 64
    # 2 000 rows a run (traces): 60 000 / 2 000 = 30 by rows, at least 64.
    assert after(2, 1.0, 4000, 8_000_000) == 64
    # 200 rows a run: 300 by rows, below 500 by time.
    assert after(2, 1.0, 4000, 800_000) == 300


def test_chunks_follow_the_pace_asked_as_each_task_is_cut():
    from vtlab.schedule import chunks

    asked = iter([64, 64, 64])
    sizes = [len(c) for c in chunks(list(range(6400)), 2, lambda: next(asked, 512))]  # type: ignore[arg-type]
    # By hand: three tasks of 64 (the pace before any run is back), then (left) // 4
    # capped at 512 while 2 048 or more are left (6 208 ... 2 112: nine of 512), then
    # 1 600 // 4 = 400, 300, 225, 168, 126, 95, 71, then the floor 6 400 // 64 = 64
    # (215, 151, 87 left), and the 23 left.
    assert sizes == [64] * 3 + [512] * 9 + [400, 300, 225, 168, 126, 95, 71, 64, 64, 64, 23]


def test_traces_are_stored_and_reloaded(tmp_path: Path):
    sw = Sweep(BASE, [AXES[1]], seeds=[1], trace=True)
    first = sw.run(tmp_path, progress=False)
    assert first.traces is not None and "loss" in first.traces.columns
    again = sw.run(tmp_path, progress=False)
    pd.testing.assert_frame_equal(
        first.traces.reset_index(drop=True), again.traces.reset_index(drop=True)
    )


def test_bad_axes_fail_before_running():
    with pytest.raises(ValueError, match="collides with a result column"):
        Sweep(BASE, [Axis.values("tcp.cc", ["newreno"], name="cc")])
    with pytest.raises(ScenarioError, match="tcp.cc"):
        Sweep(BASE, [Axis.values("tcp.cc", ["nope"], name="variant")]).points()
    with pytest.raises(ValueError, match="at least one seed"):
        Sweep(BASE, seeds=[])
    with pytest.raises(AxisError, match="axis 'tcp_cc': has no values"):
        Axis.values("tcp.cc", [])


# -- axes and seeds are checked before anything runs --------------------------------------


def _no_run(*args, **kwargs):
    raise AssertionError("nothing may be simulated")


@pytest.mark.parametrize(
    ("path", "one", "same", "other"),
    [
        ("loss.mean_loss", "5%", 0.05, 0.5),  # 5 % is 5/100 (a bare fraction is a fraction)
        ("bytes", "1MB", 1000000, 1048576),  # MB is 10**6 bytes, MiB 2**20
        ("tcp.rto_min", "1ms", 0.001, 0.01),  # a bare duration is in seconds
    ],
)
def test_axis_values_are_compared_once_resolved(path, one, same, other, monkeypatch):
    """Two spellings of one setting were one grid point with every seed counted
    twice (docs/scenarios.md: units and bare numbers in the base unit); they are
    refused naming the axis and both spellings, before any run."""
    monkeypatch.setattr(_core, "run", _no_run)
    sweep = Sweep(BASE, [Axis.values(path, [one, same], name="x")], seeds=[1, 2])
    with pytest.raises(AxisError) as caught:
        sweep.run(progress=False)
    assert caught.value.axis == "x"
    assert str(caught.value) == (
        f"axis 'x': values {one!r} and {same!r} are the same setting once resolved; give each once"
    )
    # A different setting in the other spelling is a point of its own.
    assert len(Sweep(BASE, [Axis.values(path, [one, other], name="x")], seeds=[1, 2]).points()) == 4


def test_axes_that_set_the_same_field_are_refused_naming_the_points(monkeypatch):
    monkeypatch.setattr(_core, "run", _no_run)
    # "loss" then "size" both set a field; (p, r) and (q, s) are one scenario.
    first = Axis.variants("a", {"p": {"loss.mean_loss": "1%"}, "q": {"bytes": "2MB"}})
    second = Axis.variants("b", {"r": {"bytes": "2MB"}, "s": {"loss.mean_loss": "1%"}})
    with pytest.raises(ValueError, match=r"axes a, b: grid points \(a='p', b='r'\) and "):
        Sweep(BASE, [first, second], seeds=[1]).run(progress=False)
    # One axis overriding another at one point names that point.
    cc = Axis.values("tcp.cc", ["newreno", "cubic"], name="a")
    with pytest.raises(AxisError, match=r"'newreno' and 'cubic' .* resolved \(at b='cubic'\)"):
        Sweep(BASE, [cc, Axis.values("tcp.cc", ["cubic"], name="b")]).points()


@pytest.mark.parametrize("name", ["metric", "n", "mean", "sd", "ci95"])
def test_axis_names_of_summary_columns_are_refused_before_running(name, monkeypatch):
    """``summarize`` (the table ``vtlab sweep`` prints) adds these columns: an axis of
    the same name ran the whole grid and then failed naming nothing."""
    from typer.testing import CliRunner

    from vtlab.cli.app import app

    monkeypatch.setattr(_core, "run", _no_run)
    with pytest.raises(AxisError, match=f"axis '{name}': the name collides with a summary"):
        Sweep(BASE, [Axis.values("tcp.cc", ["newreno"], name=name)])
    r = CliRunner().invoke(app, ["sweep", "v2g", "--axis", f"{name}:tcp.cc=newreno,cubic"])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"error: --axis {name}: the name collides with a summary column")


def test_repeated_seeds_are_refused_naming_the_seed(monkeypatch):
    monkeypatch.setattr(_core, "run", _no_run)
    with pytest.raises(ValueError, match="seeds: seed 3 is given more than once"):
        Sweep(BASE, seeds=[1, 3, 2, 3])


def test_a_grid_above_the_run_limit_is_refused_before_expanding():
    # 1000 values × 1001 seeds = 1 001 000 runs > MAX_SWEEP_RUNS (1 000 000).
    axis = Axis.values("loss.mean_loss", [i / 10**6 for i in range(1000)], name="loss")
    with pytest.raises(ValueError, match=r"the grid is 1001000 runs \(1000 values of loss × 1001"):
        Sweep(BASE, [axis], seeds=range(1, 1002))
    # 1000 × 1000 = 1 000 000 is allowed: the sweep is built (its points are not).
    assert len(Sweep(BASE, [axis], seeds=range(1, 1001)).seeds) == 1000


def test_endless_seed_and_value_iterators_are_refused(tmp_path: Path):
    """An endless iterator of seeds or axis values filled memory; now one past the
    limit is read. Run in a child limited to 2 GiB and 120 s, so that a regression
    fails this test instead of the machine."""
    code = (
        "import itertools, resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "import vtlab\n"
        "from vtlab.sweep import Axis, Sweep\n"
        "calls = [\n"
        "    lambda: vtlab.run_many({'preset': 'v2g'}, itertools.count(), progress=False),\n"
        "    lambda: Sweep({'preset': 'v2g'}, seeds=itertools.count(1)),\n"
        "    lambda: Axis.values('tcp.cc', itertools.repeat('newreno')),\n"
        "]\n"
        "for call in calls:\n"
        "    try:\n"
        "        call()\n"
        "    except ValueError as e:\n"
        "        print(e)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"seeds: more than {MAX_RUNS} seeds (the most runs of one call)",
        f"seeds: more than {MAX_RUNS} seeds (the most runs of one call)",
        f"axis 'tcp_cc': more than {MAX_SWEEP_RUNS} values (the most runs of a sweep)",
    ]


def test_sweep_cli_groups_by_axes_and_resumes(tmp_path: Path):
    from typer.testing import CliRunner

    from vtlab.cli.app import app

    runner = CliRunner()
    args = [
        "sweep",
        "v2g",
        "--bytes",
        "1MB",
        "--axis",
        "loss:loss.mean_loss=1%,5%",
        "--axis",
        "variant:tcp.cc=newreno,newreno-sc",
        "--runs",
        "2",
        "--store",
        str(tmp_path),
        "--out",
        str(tmp_path / "all.parquet"),
    ]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "newreno-sc" in r.stdout and "5%" in r.stdout
    rows = pd.read_parquet(tmp_path / "all.parquet")
    assert len(rows) == 8 and {"loss", "variant"} <= set(rows.columns)
    # The same command again: --out exists, so it is refused unless --force.
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2
    assert refused.stderr.startswith("error: --out: ") and "--force" in refused.stderr
    again = runner.invoke(app, [*args, "--force"])
    assert again.exit_code == 0
    assert len(_committed(tmp_path)) == 8


def test_sweep_cli_bad_axis_exits_2():
    from typer.testing import CliRunner

    from vtlab.cli.app import app

    runner = CliRunner()
    for bad in ("tcp.cc", "tcp.cc=", "cc:tcp.cc=newreno"):
        r = runner.invoke(app, ["sweep", "v2g", "--axis", bad])
        assert r.exit_code == 2, (bad, r.output)
        assert "--axis" in r.output or "collides" in r.output


@pytest.mark.parametrize(
    ("axis", "message"),
    [
        # Before: "Result.concat needs at least one result", after the runs.
        ("tcp.cc=,", "--axis tcp_cc: value 1 of 2 in ',' is empty"),
        ("cc2:tcp.cc=newreno,,cubic", "--axis cc2: value 2 of 3 in 'newreno,,cubic' is empty"),
        ("tcp.cc=newreno,", "--axis tcp_cc: value 2 of 2 in 'newreno,' is empty"),
        # Spellings of one setting, named as written; before: one point, seeds twice.
        (
            "loss:loss.mean_loss=1%,5%,0.05",
            "--axis loss: values '5%' and '0.05' are the same setting once resolved; "
            "give each once",
        ),
        ("b:bytes=1MB,1000000", "--axis b: values '1MB' and '1000000' are the same setting"),
        ("tcp.rto_min=1ms,0.001", "--axis tcp_rto_min: values '1ms' and '0.001' are the same"),
        ("loss.mean_loss=0.05,0.050", "--axis loss_mean_loss: values '0.05' and '0.050' are"),
        ("tcp.cc=newreno,newreno", "--axis tcp_cc: value 'newreno' is given more than once"),
    ],
)
def test_sweep_cli_refuses_empty_and_repeated_axis_values_before_running(
    axis, message, monkeypatch
):
    from typer.testing import CliRunner

    from vtlab.cli.app import app

    monkeypatch.setattr(_core, "run", _no_run)
    r = CliRunner().invoke(app, ["sweep", "v2g", "--axis", axis])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"error: {message}"), r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_sweep_cli_runs_are_bounded():
    from typer.testing import CliRunner

    from vtlab.cli.app import app

    r = CliRunner().invoke(app, ["sweep", "v2g", "--runs", str(MAX_RUNS + 1)])
    assert r.exit_code == 2
    assert r.stderr == (
        f"error: --runs: must be at most {MAX_RUNS} (the most runs of one call), "
        f"got {MAX_RUNS + 1}\n"
    )


def test_cc_table_markdown(tmp_path: Path):
    from typer.testing import CliRunner

    from vtlab.cli.app import app

    out = tmp_path / "table.md"
    r = CliRunner().invoke(
        app,
        [
            "cc",
            "table",
            "--runs",
            "2",
            "--bytes",
            "1MB",
            "--cc",
            "newreno",
            "--cc",
            "illinois",
            "--loss",
            "1%",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "| algorithm | ns3 1% | linux 1% |" in text
    # Not the vtlab program (pytest's process): the command's name alone, not
    # pytest's arguments as options of it.
    assert "`illinois`" in text and "Generated by `vtlab cc table`" in text


# -- the store verifies what it reads ----------------------------------------------------


def _two_seed_sweep():
    from vtlab.sweep import Sweep

    return Sweep({"preset": "v2g", "bytes": "200kB", "loss": {"mean_loss": "1%"}}, seeds=[1, 2])


def test_a_part_file_copied_over_another_part_is_caught_and_rerun(tmp_path, capsys):
    sweep = _two_seed_sweep()
    first = sweep.run(tmp_path, progress=False)
    k1, k2 = (p.key for p in sweep.points())
    one = Sweep({"preset": "v2g", "bytes": "200kB", "loss": {"mean_loss": "1%"}}, seeds=[3])
    one.run(tmp_path, progress=False)
    parts = {k: v.part for k, v in _committed(tmp_path).items()}
    assert parts[k1] == parts[k2] != parts[one.points()[0].key]
    # The seed-3 part's flows over the seeds-1-2 part's: before (one file per run),
    # a file copied over another seed's was counted twice.
    flows = tmp_path / "flows"
    target = flows / f"part-{parts[k1]}.parquet"
    target.write_bytes((flows / f"part-{parts[one.points()[0].key]}.parquet").read_bytes())
    again = sweep.run(tmp_path, progress=False)
    err = capsys.readouterr().err
    assert f"store part {parts[k1]} (2 runs)" in err and "fails its checksum" in err
    assert "moved to" in err
    pd.testing.assert_frame_equal(
        again.flows.sort_values("seed").reset_index(drop=True),
        first.flows.sort_values("seed").reset_index(drop=True),
    )
    assert (tmp_path / "_quarantine" / parts[k1] / "flows.parquet").exists()
    assert set(_committed(tmp_path)) == {k1, k2, one.points()[0].key}


def test_a_truncated_part_file_is_moved_aside_and_rerun(tmp_path, capsys):
    sweep = _two_seed_sweep()
    first = sweep.run(tmp_path, progress=False)
    (path,) = (tmp_path / "links").iterdir()
    path.write_bytes(path.read_bytes()[:100])
    again = sweep.run(tmp_path, progress=False)
    assert "fails its checksum" in capsys.readouterr().err
    assert sorted(again.flows["seed"]) == sorted(first.flows["seed"])
    # Stored again, properly: a third run reads both without a warning.
    sweep.run(tmp_path, progress=False)
    assert capsys.readouterr().err == ""


def test_chunks_that_arrive_out_of_order_are_put_in_order_without_sorting_rows(monkeypatch):
    """Gather: results that are each consecutive points in order (a sweep's chunks)
    and do not overlap are concatenated in the order of their first points, with no
    row sort; overlapping ones (points 0, 2 and then 1, 3) are sorted row by row. Both
    give the rows of the points in order."""
    from vtlab.api import Result
    from vtlab.sweeprows import Gather, chunk_result

    sweep = Sweep(BASE, [AXES[1]], seeds=[1, 2])  # 4 points: (1 %, 1) (1 %, 2) (5 %, 1) ...
    points = sweep.points()
    raws = [_core.run(p.scenario.to_json(), p.seed, False) for p in points]
    want = chunk_result(raws, [p.labels for p in points])
    sorted_rows: list[int] = []
    real = Result.reordered

    def counted(self: Result, position) -> Result:
        sorted_rows.append(len(self.flows))
        return real(self, position)

    monkeypatch.setattr(Result, "reordered", counted)
    for cut, sorts in (([[2, 3], [0, 1]], 0), ([[0, 2], [1, 3]], 1)):
        gather = Gather(points)
        for idx in cut:
            gather.add(chunk_result([raws[i] for i in idx], [points[i].labels for i in idx]))
        got = gather.result()
        assert len(sorted_rows) == sorts, cut
        for name in ("flows", "links"):
            pd.testing.assert_frame_equal(getattr(got, name), getattr(want, name))
        assert got.meta["seeds"] == [p.seed for p in points]


def test_results_gathered_in_batches_come_back_in_the_points_order(tmp_path, monkeypatch):
    """Results are concatenated every COMPACT_BATCH runs as they arrive (in any
    order, from threads or the store) and sorted back into the points' order: the
    same rows as one concatenation of the runs in order."""
    import vtlab.sweeprows as sweeprows

    base = {**BASE, "session": {"duration": "5s"}, "bytes": "200kB"}
    sweep = Sweep(base, AXES, seeds=[1, 2, 3])
    plain = sweep.run(progress=False, jobs=1)
    monkeypatch.setattr(sweeprows, "COMPACT_BATCH", 2)
    for store in (None, tmp_path, tmp_path):  # simulated, stored, then loaded
        res = sweep.run(store, progress=False, jobs=2)
        for name in ("flows", "links", "sessions", "messages"):
            pd.testing.assert_frame_equal(
                getattr(res, name), getattr(plain, name), check_dtype=False
            )
        assert res.meta["seeds"] == [p.seed for p in sweep.points()]
    keys = [(p.label_dict["variant"], p.label_dict["loss"], p.seed) for p in sweep.points()]
    got = plain.sessions[["variant", "loss", "seed"]].itertuples(index=False, name=None)
    assert list(got) == keys


# -- a process with other threads: the runs go to threads ---------------------------


@pytest.fixture
def other_thread():
    """This process runs another thread (as a notebook's kernel does), so forking the
    workers is not safe: a sweep with several jobs runs its chunks in threads."""
    from vtlab import workers

    workers.close()
    done = threading.Event()
    thread = threading.Thread(target=done.wait, daemon=True)
    thread.start()
    yield
    done.set()
    thread.join()


def test_threads_run_chunks_with_the_rows_of_one_job(tmp_path: Path, other_thread, monkeypatch):
    from vtlab import sweep as sweep_module
    from vtlab import workers

    sw = Sweep(BASE, AXES, seeds=[1, 2, 3])
    reference = sw.run(tmp_path / "one", progress=False, jobs=1)
    built: list[str] = []
    finish = sweep_module._finish_chunk

    def counted(points, raws, messages, stored=None):
        built.append(threading.current_thread().name)
        return finish(points, raws, messages, stored)

    monkeypatch.setattr(sweep_module, "_finish_chunk", counted)
    got = sw.run(tmp_path / "two", progress=False, jobs=2)
    assert not workers._POOL, "no worker process was forked"
    # 12 runs on 2 threads: chunks of 12 // 4 = 3, 9 // 4 = 2, 7 // 4 = 1, ... (at
    # least 12 // 64 = 1), each built in the thread that ran it.
    assert len(built) > 2 and threading.main_thread().name not in built
    for table in ("flows", "links"):
        want = getattr(reference, table).drop(columns="wall_s", errors="ignore")
        have = getattr(got, table).drop(columns="wall_s", errors="ignore")
        pd.testing.assert_frame_equal(have, want)
    assert sorted(_committed(tmp_path / "two")) == sorted(_committed(tmp_path / "one"))


def test_ctrl_c_in_a_thread_keeps_the_finished_runs_and_the_sweep_resumes(
    tmp_path: Path, other_thread, monkeypatch
):
    """As test_an_interrupted_worker_stops_the_sweep_and_it_resumes, in threads."""
    _interrupted_then_resumed(tmp_path, monkeypatch)


def test_an_error_in_a_thread_ends_the_sweep_and_the_next_one_runs(
    tmp_path: Path, other_thread, monkeypatch
):
    sw = Sweep(BASE, AXES, seeds=[1, 2, 3])
    real_run = _core.run

    def failing_run(spec, seed, *args, **kwargs):
        if seed == 2:
            raise RuntimeError("a run failed")
        return real_run(spec, seed, *args, **kwargs)

    monkeypatch.setattr(_core, "run", failing_run)
    with pytest.raises(RuntimeError, match="a run failed"):
        sw.run(tmp_path, jobs=2, progress=False)
    monkeypatch.setattr(_core, "run", real_run)
    # No stop outlives the sweep: the next one runs every run.
    assert len(sw.run(tmp_path, jobs=2, progress=False).flows) == 12
