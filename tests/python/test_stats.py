"""summarize(): mean, sd, n and Student-t 95 % half-width."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats

from vtlab import summarize
from vtlab.stats import DEFAULT_METRICS, ci95_halfwidth


def test_known_values() -> None:
    df = pd.DataFrame({"cc": ["a"] * 3, "goodput_bps": [1.0, 2.0, 3.0]})
    out = summarize(df, metrics=["goodput_bps"])
    assert list(out.columns) == ["cc", "metric", "n", "mean", "sd", "ci95"]
    row = out.iloc[0]
    assert row["cc"] == "a" and row["metric"] == "goodput_bps"
    assert row["n"] == 3
    assert row["mean"] == pytest.approx(2.0)
    assert row["sd"] == pytest.approx(1.0)
    assert row["ci95"] == pytest.approx(2.4841, abs=1e-4)


def test_single_value_has_nan_spread() -> None:
    df = pd.DataFrame({"cc": ["a"], "goodput_bps": [5.0]})
    row = summarize(df, metrics="goodput_bps").iloc[0]
    assert row["n"] == 1 and row["mean"] == 5.0
    assert math.isnan(row["sd"]) and math.isnan(row["ci95"])


def test_groups_and_metrics_order() -> None:
    df = pd.DataFrame(
        {
            "cc": ["b", "a", "b", "a"],
            "flow": ["f", "f", "f", "f"],
            "x": [1, 10, 3, 30],
            "y": [0.0, 0.0, 0.0, 0.0],
        }
    )
    out = summarize(df, by=("cc", "flow"), metrics=("x", "y"))
    assert out[["cc", "metric"]].values.tolist() == [["b", "x"], ["b", "y"], ["a", "x"], ["a", "y"]]
    bx = out.iloc[0]
    assert bx["mean"] == 2.0
    assert bx["ci95"] == pytest.approx(stats.t.ppf(0.975, 1) * math.sqrt(2) / math.sqrt(2))
    assert out.iloc[1]["sd"] == 0.0 and out.iloc[1]["ci95"] == 0.0


def test_nan_values_are_ignored() -> None:
    df = pd.DataFrame({"cc": ["a"] * 4, "v": [1.0, float("nan"), 2.0, 3.0]})
    row = summarize(df, metrics="v").iloc[0]
    assert row["n"] == 3 and row["mean"] == 2.0


def test_empty_by_summarises_everything() -> None:
    df = pd.DataFrame({"cc": ["a", "b"], "v": [1.0, 3.0]})
    out = summarize(df, by=(), metrics="v")
    assert list(out.columns) == ["metric", "n", "mean", "sd", "ci95"]
    assert out.iloc[0]["n"] == 2 and out.iloc[0]["mean"] == 2.0


def test_missing_column_is_named() -> None:
    with pytest.raises(KeyError, match="nope"):
        summarize(pd.DataFrame({"cc": ["a"], "v": [1]}), metrics=["nope"])


def test_default_metrics_are_flow_columns() -> None:
    from vtlab.api import FLOW_COLUMNS

    assert set(DEFAULT_METRICS) <= set(FLOW_COLUMNS)


@pytest.mark.parametrize("n", [2, 3, 10, 30])
def test_ci95_matches_scipy_interval(n: int) -> None:
    lo, hi = stats.t.interval(0.95, n - 1, loc=0.0, scale=2.0 / math.sqrt(n))
    assert ci95_halfwidth(2.0, n) == pytest.approx(hi)
    assert ci95_halfwidth(2.0, 1) != ci95_halfwidth(2.0, 1)  # NaN


def test_jain_index_known_values():
    from vtlab import jain_index

    assert jain_index([2.0, 2.0, 2.0]) == pytest.approx(1.0)
    assert jain_index([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    # (1+2+3)² / (3·(1+4+9)) = 36/42.
    assert jain_index([1.0, 2.0, 3.0]) == pytest.approx(36 / 42)
    for bad in ([], [1.0, -1.0], [0.0, 0.0], [float("nan")]):
        with pytest.raises(ValueError):
            jain_index(bad)
