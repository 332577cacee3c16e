"""The shared validation framework (vtlab.validation): the run cache and its resume,
the case runner, the protocol's driver on a toy family, the verdict statistics and
the option parsing; expected values are derived by hand in the comments."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from vtlab.validation.cache import RunCache, read_records, require_stored, store_runs
from vtlab.validation.errors import Ns3Error, ValidateError
from vtlab.validation.protocol import Family, validate
from vtlab.validation.runner import NS3, VTLAB, run_cases
from vtlab.validation.units import at_least, parse_loss
from vtlab.validation.verdict import (
    Ranked,
    paired_difference,
    rank_agreement,
    ratio_ci,
    verdict,
)


def key(rec: Mapping[str, Any]) -> str:
    return json.dumps([rec["side"], rec["n"]])


@dataclass(frozen=True)
class Toy:
    """A case of the toy family: side and a number."""

    side: str
    n: int

    @property
    def key(self) -> str:
        return json.dumps([self.side, self.n])

    @property
    def label(self) -> str:
        return f"{self.side} {self.n}"


class Runs:
    """Records the cases it runs; raises KeyboardInterrupt after ``stop_after`` runs,
    and fails (ValueError) the cases in ``broken``."""

    def __init__(self, stop_after: int | None = None, broken: Sequence[int] = ()) -> None:
        self.calls: list[str] = []
        self.stop_after = stop_after
        self.broken = set(broken)

    def __call__(self, case: Toy) -> dict[str, Any]:
        if self.stop_after is not None and len(self.calls) >= self.stop_after:
            raise KeyboardInterrupt
        self.calls.append(case.key)
        if case.n in self.broken:
            raise ValueError("boom")
        value = float(case.n) * (1.1 if case.side == VTLAB else 1.0)
        return {"side": case.side, "n": case.n, "value": value, "wall_s": 0.5}


CASES = [Toy(side, n) for side in (NS3, VTLAB) for n in range(1, 6)]


# -- the run cache and resuming ---------------------------------------------------------


def test_interrupted_runs_resume_without_loss_or_duplication(tmp_path):
    path = tmp_path / "runs.jsonl"
    first = Runs(stop_after=3)
    with pytest.raises(KeyboardInterrupt):
        run_cases(CASES, RunCache(path, key), first, progress=False)
    assert len(first.calls) == 3 and len(path.read_text().splitlines()) == 3
    # an interruption in the middle of a write leaves a line without its newline
    with path.open("a") as fh:
        fh.write('{"side": "vtlab", "n"')
    rest = Runs()
    done, errors = run_cases(CASES, RunCache(path, key), rest, progress=False)
    # 10 cases: 3 before the interruption, the other 7 now, none twice
    assert (done, errors) == (7, [])
    assert set(first.calls).isdisjoint(rest.calls)
    assert sorted(first.calls + rest.calls) == sorted(c.key for c in CASES)
    cache = RunCache(path, key)
    assert len(cache.records) == 10
    # the cut line is skipped and the next record starts on a line of its own
    assert sum(1 for line in path.read_text().splitlines() if line.startswith("{")) == 11
    again = Runs()
    assert run_cases(CASES, cache, again, progress=False) == (0, []) and again.calls == []


def test_threads_run_every_case_once_and_report_failures(tmp_path):
    runs = Runs(broken=[2])
    done, errors = run_cases(
        CASES, RunCache(tmp_path / "runs.jsonl", key), runs, jobs=3, progress=False
    )
    assert done == 8 and sorted(runs.calls) == sorted(c.key for c in CASES)
    assert sorted(errors) == ["ns-3 2: boom", "vtlab 2: boom"]


def test_stored_runs_answer_only_their_own_keys_and_store_is_reproducible(tmp_path):
    store = tmp_path / "stored.jsonl.gz"
    recs = [{"side": NS3, "n": n, "value": float(n)} for n in (1, 2)]
    assert store_runs(store, recs, key) == 2
    data = store.read_bytes()
    assert store_runs(store, list(reversed(recs)), key) == 2 and store.read_bytes() == data
    cache = RunCache(tmp_path / "runs.jsonl", key, [store])
    assert Toy(NS3, 1).key in cache and cache.is_stored(Toy(NS3, 1).key)
    assert Toy(VTLAB, 1).key not in cache
    cache.add({"side": NS3, "n": 1, "value": 9.0})
    assert not cache.is_stored(Toy(NS3, 1).key) and cache.get(Toy(NS3, 1).key)["value"] == 9.0
    assert len(read_records(store, key)) == 2


# -- the protocol's driver on a toy family ------------------------------------------------


class ToyFamily(Family):
    name = "toy"

    def __init__(self, runs: Runs, only: str | None = None) -> None:
        self.runs = runs
        self.only = only
        self.meta: dict[str, Any] = {}

    def cases(self) -> list[Toy]:  # type: ignore[override]
        return [c for c in CASES if self.only is None or c.side == NS3]

    def run(self, case: Toy) -> dict[str, Any]:
        return self.runs(case)

    def record_key(self, record: Mapping[str, Any]) -> str:
        return key(record)

    def compare(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        vt = [r["value"] for r in records if r["side"] == VTLAB]
        ns = [r["value"] for r in records if r["side"] == NS3]
        r = ratio_ci(vt, ns)
        return [{"ratio": r.ratio, "verdict": verdict(r.ratio, r.contains_one)}]

    def write_report(
        self, out: Path, table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]
    ) -> dict[str, Path]:
        self.meta = dict(meta)
        (out / "report.md").write_text(f"{table[0]['verdict']}\n")
        return {"report": out / "report.md"}


def test_validate_drives_a_family_from_cases_to_report(tmp_path):
    family = ToyFamily(Runs(broken=[5]))
    res = validate(family, tmp_path, progress=False)
    # vtlab 1.1 n, ns-3 n for n = 1..4 (5 failed on both sides): ratio 1.1 exactly
    assert res.table[0]["ratio"] == pytest.approx(1.1) and res.table[0]["verdict"] == "agree"
    assert (res.runs_done, res.runs_cached, len(res.errors)) == (8, 0, 2)
    assert (tmp_path / "report.md").read_text() == "agree\n"
    # 4 finished runs per side at 0.5 s each
    assert family.meta["run_time_s"] == {VTLAB: 2.0, NS3: 2.0}
    assert family.meta["runs_stored"] == 0 and family.meta["errors"] == res.errors
    # the second call runs only the two failed cases
    again = Runs()
    res2 = validate(ToyFamily(again), tmp_path, progress=False)
    assert sorted(again.calls) == [Toy(NS3, 5).key, Toy(VTLAB, 5).key]
    assert (res2.runs_done, res2.runs_cached, res2.errors) == (2, 8, [])


def test_validate_with_one_side_stores_its_runs_and_writes_no_report(tmp_path):
    store = tmp_path / "store.jsonl.gz"
    res = validate(ToyFamily(Runs(), only="ns3"), tmp_path / "out", progress=False, store_ns3=store)
    assert res.paths == {} and res.table == [] and res.runs_done == 5
    assert not (tmp_path / "out" / "report.md").exists()
    assert len(read_records(store, key)) == 5


# -- verdict statistics -----------------------------------------------------------------


def test_paired_difference_by_hand():
    # differences 1, 2, 0: mean 1, sd 1, half = t(0.975, 2) / sqrt(3) = 4.302653 / 1.732051
    d = paired_difference([10.0, 12.0, 11.0], [9.0, 10.0, 11.0])
    assert (d.mean, d.n) == (1.0, 3)
    assert d.half == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert d.contains_zero
    # differences 2.0, 2.2, 1.8: mean 2, sd 0.2, half = 4.302653 * 0.2 / sqrt(3) = 0.496827
    d = paired_difference([3.0, 3.2, 2.8], [1.0, 1.0, 1.0])
    assert d.mean == pytest.approx(2.0) and d.half == pytest.approx(0.496827, rel=1e-5)
    assert not d.contains_zero
    # a NaN on either side drops the pair; one pair has no interval
    one = paired_difference([1.0, math.nan], [0.5, 1.0])
    assert (one.mean, one.n) == (0.5, 1) and math.isnan(one.half) and not one.contains_zero
    with pytest.raises(ValueError):
        paired_difference([1.0], [1.0, 2.0])


def test_rank_agreement_by_hand():
    items = [
        # vtlab: a 10 ± 1 > b 5 ± 1 > c 4.5 ± 1 (b and c overlap)
        # ns-3:  b 9 ± 1 > a 4 ± 1 > c 3.9 ± 1
        Ranked("a", 10.0, 1.0, 4.0, 1.0),
        Ranked("b", 5.0, 1.0, 9.0, 1.0),
        Ranked("c", 4.5, 1.0, 3.9, 1.0),
    ]
    r = rank_agreement(items)
    assert r["vtlab_order"] == ["a", "b", "c"] and r["ns3_order"] == ["b", "a", "c"]
    assert not r["same_order"]
    # ranks vtlab (1, 2, 3), ns-3 (2, 1, 3): rho = 1 - 6 * (1 + 1 + 0) / (3 * 8) = 0.5
    assert r["spearman"] == pytest.approx(0.5)
    # a/b: separated on both sides, opposite order -> significant; a/c, b/c: same
    # order on both sides (a/c) or overlapping on vtlab (b/c)
    assert r["significant_inversions"] == ["a/b"]
    # an unknown half-width never separates
    assert (
        rank_agreement([Ranked("a", 2, math.nan, 1, 0), Ranked("b", 1, 0, 2, 0)])[
            "significant_inversions"
        ]
        == []
    )


# -- errors and option values ----------------------------------------------------------


def test_parse_loss_names_its_option():
    assert parse_loss("0.25 %") == pytest.approx(0.0025)
    with pytest.raises(ValidateError, match=r"^--replay: 1\.5 is outside \[0, 1\)$"):
        parse_loss("1.5", "--replay")
    with pytest.raises(ValidateError, match="^--loss: invalid fraction 'x'"):
        parse_loss("x")
    with pytest.raises(ValidateError, match="^--jobs: must be at least 1, got 0$"):
        at_least("--jobs", 0)


def test_error_hierarchy():
    assert issubclass(ValidateError, ValueError) and issubclass(Ns3Error, RuntimeError)
    exc = ValidateError("--runs", "must be at least 1")
    assert (str(exc), exc.field, exc.problem) == (
        "--runs: must be at least 1",
        "--runs",
        "must be at least 1",
    )


def test_require_stored_names_the_first_missing_ns3_run(tmp_path: Path) -> None:
    # Two stored records keyed "a" and "b"; a grid wanting a, b passes, one wanting
    # a, c, d is refused naming c (the first missing) and the stored file.
    stored = tmp_path / "runs.jsonl"
    stored.write_text('{"k": "a"}\n{"k": "b"}\n')

    def key(rec: Mapping[str, Any]) -> str:
        return rec["k"]

    require_stored([stored], [("a", "cell a"), ("b", "cell b")], key, "x.cc", "h1")
    with pytest.raises(ValidateError) as err:
        require_stored([stored], [("a", "A"), ("c", "C"), ("d", "D")], key, "x.cc", "h1")
    assert err.value.field == str(stored)
    assert err.value.problem.startswith("the ns-3 run C of this x.cc (results hash h1) is missing")
