"""A chunk's tables built at once (vtlab.sweeprows.chunk_result) are the tables the
runs' own frames gave: the same values, dtypes, columns, rows and index, for the
results callers see and for every table of the store.

The reference is the per-run path, kept here: each run's :meth:`Result.from_core`
labelled with :func:`vtlab.sweeprows.add_labels`, then ``Result.concat(...)``
compacted (what every chunk was before; the cluster and thread paths still build
their runs so)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from vtlab import sweep as sweep_module
from vtlab import sweeprows
from vtlab.api import Result
from vtlab.store import stored_rows
from vtlab.sweep import Axis, Sweep
from vtlab.sweeprows import LABELLED, add_labels, chunk_result, chunk_rows


def per_run(raws: Sequence[Mapping[str, Any]], labels: Sequence[Any]) -> Result:
    """The reference: every run's tables built on their own, then concatenated."""
    results = []
    for raw, lab in zip(raws, labels, strict=True):
        res = Result.from_core(raw)
        add_labels(res, lab)
        results.append(res)
    return Result.concat(results).compacted()


def assert_same_frame(got: pd.DataFrame | None, want: pd.DataFrame | None, what: str) -> None:
    """Equal tables: columns, dtypes, index, values, and in object columns the type
    and text of every value (None stays None, 1 stays an int and not 1.0)."""
    if want is None:
        assert got is None, what
        return
    assert got is not None, what
    assert list(got.columns) == list(want.columns), what
    assert list(got.dtypes) == list(want.dtypes), what
    pd.testing.assert_frame_equal(
        got, want, check_exact=True, check_index_type=True, check_column_type=True, obj=what
    )
    for name in want.columns:
        if want[name].dtype == object:
            typed = [(type(v), repr(v)) for v in want[name]]
            assert [(type(v), repr(v)) for v in got[name]] == typed, f"{what}.{name}"


def assert_same_result(got: Result, want: Result, what: str = "", timed: bool = False) -> None:
    """Equal tables and metadata; with ``timed`` (runs made twice, gathered in
    another order with two jobs) but for the runs' wall times and the sums of times
    (each run's simulated time is still compared)."""
    for table in LABELLED:
        assert_same_frame(getattr(got, table), getattr(want, table), f"{what}{table}")
    assert _untimed(got.meta, timed) == _untimed(want.meta, timed), what


def _untimed(meta: Any, timed: bool) -> Any:
    if not timed or not isinstance(meta, dict):
        return meta
    return {k: [_untimed(m, False) for m in v] if k == "runs" else v
            for k, v in meta.items() if k not in ("wall_s", "sim_time_s")} | {
        "runs": [{k: v for k, v in m.items() if k != "wall_s"} for m in meta.get("runs", [])]
    }  # fmt: skip


# -- synthetic runs: every kind of column and label, mixed across the runs ----------

#: Makers of one column's values for ``n`` rows: each a kind pandas infers its own way
#: (ints beyond 64 bits signed become uint64 or object; None among ints, floats, bools
#: or strings gives float64 or object; bools among ints give object).
VALUES = {
    "int": lambda r, n: [r.randint(-5, 5) for _ in range(n)],
    "uint": lambda r, n: [2**63 + r.randint(0, 5) for _ in range(n)],
    "huge": lambda r, n: [2**64 + r.randint(0, 5) for _ in range(n)],
    "float": lambda r, n: [r.choice([0.5, -1.25, float("nan"), 3.0]) for _ in range(n)],
    "bool": lambda r, n: [r.random() < 0.5 for _ in range(n)],
    "str": lambda r, n: [r.choice(["a", "", "dc"]) for _ in range(n)],
    "none": lambda r, n: [None] * n,
    "int|none": lambda r, n: [(1, None)[i % 2] for i in range(n)],
    "float|none": lambda r, n: [(1.5, None)[i % 2] for i in range(n)],
    "str|none": lambda r, n: [("x", None)[i % 2] for i in range(n)],
    "bool|none": lambda r, n: [(True, None)[i % 2] for i in range(n)],
    "bool|int": lambda r, n: [(True, 2)[i % 2] for i in range(n)],
    "int|float": lambda r, n: [(1, 2.5)[i % 2] for i in range(n)],
}
#: Axis values of every kind (a label is one value for all of a run's rows).
LABELS = [1, -3, 2**63, 0.01, float("nan"), True, False, "5%", "", None, (1, 2)]


#: The kinds a chunk's column is concatenated as lists for (vtlab.sweeprows._kind).
PLAIN = ("int", "float", "bool", "str")


def synthetic_chunk(r: random.Random) -> tuple[list[dict[str, Any]], list[Any]]:
    """A chunk of 2-5 runs. Per table: columns of one plain kind in every run, but
    (half the tables) for one column of another kind, the same in every run or drawn
    run by run; runs with and without rows, sometimes a run with another column;
    axis values of one kind or mixed."""
    runs = r.randint(2, 5)
    names = ["seed", "scenario_hash", "session", "x", "y"]
    same_label = r.random() < 0.5
    label_values = [r.choice(LABELS) for _ in range(2)]
    plan: dict[str, dict[str, str]] = {}
    odd: dict[str, tuple[str, bool]] = {}  # table -> (its odd column, drawn per run)
    for table in LABELLED:
        plan[table] = {c: r.choice(PLAIN) for c in names}
        if r.random() < 0.5:
            odd[table] = (r.choice(names), r.random() < 0.5)
            plan[table][odd[table][0]] = r.choice(list(VALUES))
    raws: list[dict[str, Any]] = []
    labels: list[Any] = []
    for run in range(runs):
        raw: dict[str, Any] = {"meta": {"scenario_hash": f"h{run}", "seed": run}}
        for table in LABELLED:
            if table in ("traces", "events") and plan[table]["x"] == "bool":
                raw[table] = None  # not recorded
                continue
            kinds = dict(plan[table])
            if table in odd and odd[table][1]:
                kinds[odd[table][0]] = r.choice(list(VALUES))
            rows = r.choice([0, 1, 3]) if r.random() < 0.2 else 2
            if r.random() < 0.05:
                kinds["extra"] = "int"
            raw[table] = {c: VALUES[k](r, rows) for c, k in kinds.items()}
        raws.append(raw)
        values = label_values if same_label else [r.choice(LABELS) for _ in range(2)]
        labels.append((("loss", values[0]), ("session", values[1])))  # "session" collides
    return raws, labels


def test_a_chunk_of_synthetic_runs_has_the_per_run_tables():
    """600 chunks drawn at random (seeded): every table as the per-run path built
    it, whatever the mix of kinds, empty tables, extra columns and labels; one table
    in ten at least built at once (else this would test the per-run path only)."""
    r = random.Random(20261127)
    at_once = 0
    for case in range(600):
        raws, labels = synthetic_chunk(r)
        at_once += sum(sweeprows._chunk_table(t, raws, labels) is not None for t in LABELLED)
        assert_same_result(chunk_result(raws, labels), per_run(raws, labels), f"case {case}: ")
    assert at_once > 600 * len(LABELLED) // 10, at_once  # one table in ten at least


def storable_chunk(r: random.Random) -> tuple[list[dict[str, Any]], list[Any], bool, bool]:
    """A chunk of 1-6 runs as a sweep's task has (each run's scenario hash text and
    its seed an int, each label of one kind in the chunk; the traces and events
    tables stored or not), whose other columns are each of one plain kind (floats
    with NaN) but now and then of another kind or another kind in one run; tables
    with rows in every run, in some (sessions), in none, or not recorded."""
    runs = r.randint(1, 6)
    kinds = {t: {c: r.choice(PLAIN) for c in ("session", "x", "y")} for t in LABELLED}
    for t in LABELLED:
        if r.random() < 0.1:
            kinds[t]["x"] = r.choice(list(VALUES))  # one table in ten: any kind
    seeds = [2**64 - 1 - run if r.random() < 0.03 else run for run in range(runs)]
    label_kinds = [r.choice(PLAIN) for _ in range(2)]
    names = r.choice([("loss", "cc"), ("loss", "session")])  # "session" collides
    without = {t for t in LABELLED if r.random() < 0.15}  # no rows in any run
    absent = {t for t in ("traces", "events") if r.random() < 0.3}  # not recorded
    raws: list[dict[str, Any]] = []
    labels: list[Any] = []
    for run in range(runs):
        raw: dict[str, Any] = {"meta": {"scenario_hash": f"h{run}", "seed": seeds[run]}}
        for t in LABELLED:
            if t in absent:
                raw[t] = None
                continue
            rows = 0 if t in without else r.choice([1, 2, 3])
            if t in ("sessions", "messages") and r.random() < 0.3:
                rows = 0  # a run without a session
            cols = {c: VALUES[k](r, rows) for c, k in kinds[t].items()}
            if rows and r.random() < 0.03:
                cols["y"] = VALUES[r.choice(list(VALUES))](r, rows)  # another kind here
            raw[t] = {"scenario_hash": [f"h{run}"] * rows, "seed": [seeds[run]] * rows, **cols}
        raws.append(raw)
        labels.append(
            tuple((n, VALUES[k](r, 1)[0]) for n, k in zip(names, label_kinds, strict=True))
        )
    return raws, labels, r.random() < 0.85, r.random() < 0.85


def test_a_chunks_stored_rows_are_those_of_its_per_run_tables():
    """chunk_rows (a task's rows as a store part holds them, as Arrow straight from
    the runs' columns where it can) against the reference: the per-run tables'
    concatenation converted by vtlab.store.stored_rows. 600 seeded chunks, each made
    twice (the second time with the schema this process kept for its tables), with
    and without what rebuilds the result (its metadata, its frames without rows);
    tables equal with their schemas' metadata, and at least one chunk in ten made as
    Arrow straight (else this would test the fallback only)."""
    import pyarrow as pa

    r = random.Random(20261128)
    straight = compared = 0
    for case in range(600):
        raws, labels, traces, events = storable_chunk(r)
        keep = case % 2 == 0
        try:
            want = stored_rows(per_run(raws, labels), "rows", traces, events, keep)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
            # A column mixing numbers and text, or of ints beyond 64 bits (the core's
            # columns never are): Arrow
            # cannot hold it, either way.
            with pytest.raises(type(e)):
                chunk_rows(raws, labels, "rows", traces, events, keep)
            continue
        compared += 1
        made = sweeprows._arrow_rows(raws, labels, traces, events, keep) if len(raws) > 1 else None
        straight += made is not None
        for _ in range(2):
            got = chunk_rows(raws, labels, "rows", traces, events, keep)
            what = f"case {case}: "
            assert sorted(got.tables) == sorted(want.tables), what
            for name, table in want.tables.items():
                assert got.tables[name].equals(table, check_metadata=True), what + name
            assert got.counts == want.counts, what
            assert got.meta == want.meta, what
            if keep:
                assert sorted(got.frames) == sorted(want.frames), what
                for name, frame in want.frames.items():
                    assert_same_frame(got.frames[name], frame, what + name)
                    if frame is not None:  # a frame of its own, whatever is done to it
                        again = chunk_rows(raws, labels, "rows", traces, events, keep)
                        assert again.frames[name] is not got.frames[name], what + name
    assert straight > 60 and compared > 300, (straight, compared)


def test_a_chunk_of_uniform_runs_is_built_at_once(monkeypatch: pytest.MonkeyPatch):
    """Runs whose columns are each of one kind (ints, floats with NaN, bools,
    strings) are built as one frame per table, not run by run (this is the speed-up;
    the tests above and below hold whichever way a table is built)."""
    built: list[str] = []
    real = sweeprows.label_frame

    def counted(frame: Any, labels: Any) -> None:
        if frame is not None:
            built.append("run")
        real(frame, labels)

    monkeypatch.setattr(sweeprows, "label_frame", counted)
    r = random.Random(7)
    raws = []
    for seed in range(4):
        table = {k: VALUES[k](r, 3) for k in ("int", "float", "bool", "str")}
        raws.append({"meta": {"scenario_hash": "h", "seed": seed}, "flows": table,
                     "links": table, "sessions": {"x": []}, "messages": None,
                     "traces": None, "events": None})  # fmt: skip
    labels = [(("loss", 0.01 * seed), ("cc", "cubic")) for seed in range(4)]
    got = chunk_result(raws, labels)
    # sessions (no rows) and messages (none) once each, for the first run only.
    assert built == ["run", "run"]
    monkeypatch.undo()
    assert_same_result(got, per_run(raws, labels))
    # (hand-derived) 4 runs x 3 rows; labels first, in the order of the axes.
    assert list(got.flows.columns[:2]) == ["loss", "cc"] and len(got.flows) == 12
    assert str(got.flows["int"].dtype) == "int64" and got.flows["bool"].dtype == bool


# -- real runs: sweeps whose store and results are compared with the per-run path ----


def reference_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make this process's sweeps build their chunks run by run (the reference)."""

    def finish(points: Any, raws: Any, messages: str, stored: Any = None) -> Any:
        counted = [sweep_module._counted(raw, messages) for raw in raws]
        res = per_run(counted, [p.labels for p in points])
        return res if stored is None else stored_rows(res, messages, *stored)

    monkeypatch.setattr(sweep_module, "_finish_chunk", finish)


def stored(root: Path, events: bool) -> dict[str, pd.DataFrame]:
    """Every table of the store, its runs in key order, each run's rows in order."""
    from vtlab.results import TABLES, load

    out = {}
    for table in TABLES:
        if table == "traces" or (table == "events" and not events):
            continue
        frame = load(root, table)
        by = "run_key" if "run_key" in frame else ["scenario_hash", "seed"]
        out[table] = frame.sort_values(by, kind="stable").reset_index(drop=True)
    return out


SESSION = {"profile": "iso15118-2-dc", "duration": "20s", "abort_on_miss": True}
GRIDS = {
    # Bulk transfers, some not finished by the stop (NaN completion, abort reasons),
    # with typed events; a float axis and a mixed one (a str and a float value).
    "v2g": (
        {"preset": "v2g", "bytes": "300kB", "stop": "0.4s"},
        [Axis.values("loss.mean_loss", ["1%", 0.2], name="loss")],
        True,
    ),
    # ISO 15118 sessions beside the bulk flows, some ending at a missed deadline; the
    # axis tcp.profile is also a session column (that table keeps its own).
    "iso15118": (
        {"preset": "v2g", "bytes": "100kB", "session": SESSION, "loss": {"mean_loss": "5%"}},
        [
            Axis.values("tcp.profile", ["linux", "ns3"]),
            Axis.values("session.processing", ["0s", "1.95s"]),
        ],
        False,
    ),
    "lte-cabin": ({"preset": "lte-cabin", "bytes": "100kB"}, [], False),
    "vanet-chain": ({"preset": "vanet-chain", "bytes": "100kB"}, [], True),
    # Sessions in half the runs only (the other half adds no session rows).
    "some sessions": (
        {"preset": "v2g", "bytes": "100kB"},
        [Axis.variants("with", {"bulk": {"tcp.cc": "cubic"}, "session": {"session": SESSION}})],
        False,
    ),
    # A station: 21 vehicles, each with a session beside its bulk flow.
    "station": (
        {"preset": "station", "bytes": "50kB", "stop": "3s", "session": {"duration": "2s"}},
        [Axis.values("session.profile", ["iso15118-2-ac", "din70121-dc"], name="proto")],
        False,
    ),
}


@pytest.mark.parametrize("grid", list(GRIDS))
def test_a_sweep_stores_and_returns_the_per_run_tables(
    grid: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Each grid with one job and with two: the store's every table and the rows
    ``Sweep.run`` returns are those of the per-run path. Where each label is of one
    kind (all grids but v2g), the chunks (the workers' tasks, the one job's batches)
    hand on their rows as Arrow, rebuilt into the result at the end
    (vtlab.sweeprows.rows_result)."""
    base, axes, events = GRIDS[grid]
    sweep = Sweep(base, axes, seeds=range(1, 6 if axes else 11), events=events)
    with monkeypatch.context() as m:
        reference_chunks(m)
        want = sweep.run(tmp_path / "ref", progress=False, jobs=1)
    want_store = stored(tmp_path / "ref", events)
    # Chunks of 4 runs (and the last of 2) for the workers, as a large sweep has.
    monkeypatch.setattr(sweep_module, "chunks", lambda todo, *_: _cut(todo, 4))
    kinds: list[str] = []
    real_add = sweeprows.Gather.add

    def add(self: sweeprows.Gather, res: Any, **kw: Any) -> None:
        kinds.append(type(res).__name__)
        real_add(self, res, **kw)

    monkeypatch.setattr(sweeprows.Gather, "add", add)
    for jobs in (1, 2):
        kinds.clear()
        got = sweep.run(tmp_path / f"j{jobs}", progress=False, jobs=jobs)
        assert_same_result(got, want, f"{grid} -j {jobs}: ", timed=True)
        got_store = stored(tmp_path / f"j{jobs}", events)
        for table, frame in want_store.items():
            assert_same_frame(got_store[table], frame, f"{grid} -j {jobs} store {table}")
        arrow = grid != "v2g"
        assert set(kinds) == {"StoredRows" if arrow else "Result"}, (jobs, kinds)
    # (hand-derived) each run has 1 bulk flow (v2g, lte-cabin, vanet-chain) or more.
    assert len(want.flows) >= len(sweep.points())


@pytest.mark.parametrize("grid", list(GRIDS))
def test_a_sweep_that_only_stores_stores_the_per_run_tables(
    grid: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """``collect=False`` with two jobs: where each label is of one kind in every run
    (all grids but v2g, whose loss axis mixes a text and a number), the workers hand
    back their tasks' rows as the store holds them (Arrow) and the writer gets those;
    either way the store's every table is that of the per-run path."""
    from vtlab.store import StoreWriter

    base, axes, events = GRIDS[grid]
    sweep = Sweep(base, axes, seeds=range(1, 6 if axes else 11), events=events)
    with monkeypatch.context() as m:
        reference_chunks(m)
        sweep.run(tmp_path / "ref", progress=False, jobs=1)
    want_store = stored(tmp_path / "ref", events)
    monkeypatch.setattr(sweep_module, "chunks", lambda todo, *_: _cut(todo, 4))
    kinds: list[str] = []
    real_add = StoreWriter.add

    def add(self: StoreWriter, runs: Any, res: Any) -> None:
        kinds.append(type(res).__name__)
        real_add(self, runs, res)

    monkeypatch.setattr(StoreWriter, "add", add)
    assert sweep.run(tmp_path / "new", progress=False, jobs=2, collect=False) is None
    got_store = stored(tmp_path / "new", events)
    for table, frame in want_store.items():
        assert_same_frame(got_store[table], frame, f"{grid} store {table}")
    assert set(kinds) == {"Result" if grid == "v2g" else "StoredRows"}


def test_a_resumed_sweep_stores_the_per_run_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A sweep interrupted after 5 of its 12 runs, then resumed with two jobs, stores
    and returns what the per-run path does in one go. The first axis is also a
    session column (``tcp_profile``): the sessions table keeps its own, and the other
    label leads it in fresh and in stored runs alike."""
    base = GRIDS["iso15118"][0]
    axes = [
        Axis.values("tcp.profile", ["linux", "ns3"]),
        Axis.values("session.processing", ["0s", "1.95s"]),
    ]
    sweep = Sweep(base, axes, seeds=[1, 2, 3], messages="counts")
    monkeypatch.setattr(sweep_module, "chunks", lambda todo, *_: _cut(todo, 3))
    with monkeypatch.context() as m:
        reference_chunks(m)
        want = sweep.run(tmp_path / "ref", progress=False, jobs=1)
    real = sweep_module._simulate
    ran: list[str] = []

    def interrupted(p: Any, record: Any) -> Any:
        if len(ran) == 5:
            raise KeyboardInterrupt
        ran.append(p.key)
        return real(p, record)

    with monkeypatch.context() as m:
        m.setattr(sweep_module, "_simulate", interrupted)
        with pytest.raises(KeyboardInterrupt):
            sweep.run(tmp_path / "new", progress=False, jobs=1)
    assert len(stored(tmp_path / "new", False)["runs"]) == 5
    got = sweep.run(tmp_path / "new", progress=False, jobs=2)
    want_store, got_store = stored(tmp_path / "ref", False), stored(tmp_path / "new", False)
    for table, frame in want_store.items():
        assert_same_frame(got_store[table], frame, f"store {table}")
    for table in ("flows", "links", "sessions", "messages"):  # stored rows come back
        assert_same_frame(_by_run(getattr(got, table)), _by_run(getattr(want, table)), table)


def _cut(todo: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [todo[i : i + size] for i in range(0, len(todo), size)]


def _by_run(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["scenario_hash", "seed"], kind="stable").reset_index(drop=True)


# -- Result.concat of raw results (vtlab.run_many) ----------------------------------


def built_run_by_run(results: Sequence[Result]) -> Result:
    """The reference for a concatenation of raw results: every result's tables built
    on its own first (so the concatenation joins frames)."""
    for res in results:
        for table in LABELLED:
            getattr(res, table)
    return Result.concat(results).compacted()


def test_a_concatenation_of_synthetic_raw_runs_has_the_per_run_tables():
    """The synthetic runs above, unlabelled, as ``Result.concat`` of
    ``Result.from_core`` results (run_many's result): every table as joining the
    runs' own frames gives it; one table in ten at least built at once."""
    from vtlab import api

    r = random.Random(20261128)
    at_once = 0
    for case in range(600):
        raws, _ = synthetic_chunk(r)
        fresh = [Result.from_core(raw) for raw in raws]
        at_once += sum(api._raw_parts_table(fresh, t) is not api._LAZY for t in LABELLED)
        got = Result.concat(fresh).compacted()
        want = built_run_by_run([Result.from_core(raw) for raw in raws])
        assert_same_result(got, want, f"case {case}: ")
    assert at_once > 600 * len(LABELLED) // 10, at_once


@pytest.mark.parametrize(
    ("spec", "seeds", "flags"),
    [
        ({"preset": "v2g", "bytes": "20kB"}, [1, 2, 3], {}),
        ({"preset": "v2g", "bytes": "200kB", "loss": {"mean_loss": "5%"}}, [4, 5],
         {"trace": True, "events": True}),
        ({"preset": "v2g", "session": {"profile": "iso15118-2-dc", "duration": "10s"}}, [1, 2], {}),
        ({"preset": "station", "bytes": "20kB"}, [1, 2], {}),
        # A seed beyond int64 beside small ones: the seed columns meet as uint64.
        ({"preset": "v2g", "bytes": "20kB"}, [1, 2**64 - 1], {}),
    ],
)  # fmt: skip
def test_run_many_tables_are_the_runs_own_concatenated(
    spec: dict[str, Any], seeds: list[int], flags: dict[str, bool]
):
    """vtlab.run_many's tables, built at once from the runs' columns, are those of
    each run's own frames concatenated (a run's table built before the
    concatenation takes the frames' path)."""
    import vtlab

    got = vtlab.run_many(spec, seeds, progress=False, **flags)
    want = built_run_by_run([vtlab.run(spec, seed=s, **flags) for s in seeds])
    assert_same_result(got, want, timed=True)


def test_a_table_given_or_built_before_the_concatenation_is_the_one_joined():
    """A part whose table was set (or built) before ``Result.concat`` contributes
    that frame, not its raw columns."""
    import vtlab

    runs = [vtlab.run({"preset": "v2g", "bytes": "20kB"}, seed=s) for s in (1, 2)]
    runs[0].flows = runs[0].flows.assign(goodput_bps=0.0)
    joined = Result.concat(runs)
    assert list(joined.flows["goodput_bps"])[0] == 0.0
    assert list(joined.flows["goodput_bps"])[1] > 0


def test_the_gather_holds_one_of_each_empty_frame_of_the_tasks():
    """Tasks without sessions each bring an empty sessions and messages frame; the
    gather keeps one of each (equal columns and dtypes), not one per task, and the
    rows it rebuilds are the tasks' own."""
    import pickle

    from vtlab.store import stored_rows

    base, axes, _ = GRIDS["lte-cabin"]
    sweep = Sweep(base, [Axis.values("tcp.cc", ["cubic", "bbr"])], seeds=range(1, 4))
    points = sweep.points()
    gather = sweeprows.Gather(points)
    want = []
    for p in points:  # one task per run, each through a pickle as from a worker
        res = sweep_module._finish_chunk([p], [sweep_module._simulate(p, (False, False))], "rows")
        want.append(res)
        gather.add(pickle.loads(pickle.dumps(stored_rows(res, "rows", False, False, keep=True))))
    held = {id(r.frames["sessions"]) for r in gather.rows}
    assert len(held) == 1 and len(gather.rows) == len(points)
    assert_same_result(gather.result(), Result.concat(want).compacted())


def test_rows_per_run_come_from_each_runs_own_columns():
    """run_counts: a task's rows per run identity, as vtlab.arrowrows.identities
    counts them in its joined table, from each run's columns; None where a run's
    rows are not all of one identity (then the table is counted)."""
    from vtlab.arrowrows import identities
    from vtlab.sweeprows import run_counts

    def run(h: Any, s: Any, rows: int) -> dict[str, list[Any]]:
        return {"scenario_hash": [h] * rows, "seed": [s] * rows, "x": list(range(rows))}

    # By hand: 3 rows of a-1, none of b-2 (no entry), 2 of c-7.
    columns = [run("a", 1, 3), run("b", 2, 0), run("c", 7, 2)]
    assert run_counts(columns) == {"a-1": 3, "c-7": 2}
    import pyarrow as pa

    joined = pa.table({k: sum((c[k] for c in columns), []) for k in ("scenario_hash", "seed")})
    assert identities(joined) == {"a-1": 3, "c-7": 2}
    mixed = run("a", 1, 2)
    mixed["seed"][1] = 2  # one run's rows of two seeds
    assert run_counts([mixed]) is None
    assert run_counts([run("a", 1.0, 2)]) is None, "a seed that is not an int"
    assert run_counts([run(None, 1, 2)]) is None, "no hash"
    assert run_counts([{"x": [1]}]) is None, "no identity columns"
