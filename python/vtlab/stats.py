"""Summary statistics over flow rows: mean, standard deviation and 95 % confidence
half-width (Student's t) per group."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy and pandas are imported when a function needs them
    import numpy as np
    import pandas as pd

__all__ = [
    "DEFAULT_METRICS",
    "SUMMARY_COLUMNS",
    "ci95_halfwidth",
    "jain_index",
    "summarize",
    "t975",
]

#: Metrics summarised by default (all are flow-table columns).
DEFAULT_METRICS: tuple[str, ...] = (
    "goodput_bps",
    "completion_s",
    "retransmissions",
    "rto_count",
    "fast_recoveries",
    "drops_link_error",
    "drops_queue",
)

#: Columns :func:`summarize` adds after the ``by`` columns.
SUMMARY_COLUMNS: tuple[str, ...] = ("metric", "n", "mean", "sd", "ci95")


@functools.lru_cache(maxsize=4096)
def t975(df: float) -> float:
    """Student's t quantile 0.975 (two-sided 95 %) for ``df`` degrees of freedom, which
    may be fractional (Welch–Satterthwaite). Remembered per ``df``: a study's
    summaries ask for the same few thousands of times (a call into scipy costs about
    0.1 ms, a remembered one a hash).

    >>> round(t975(2), 6), round(t975(4), 6)
    (4.302653, 2.776445)
    """
    # scipy.special's stdtrit is what scipy.stats.t.ppf computes (the same numbers to
    # the last bit), without importing scipy.stats (~0.6 s against ~0.3 s); imported
    # here, off the start-up path.
    from scipy import special

    return float(special.stdtrit(df, 0.975))


def ci95_halfwidth(sd: float, n: int) -> float:
    """Half-width of the two-sided 95 % confidence interval of a mean.

    ``t.ppf(0.975, n - 1) * sd / sqrt(n)``; NaN when ``n < 2``.

    >>> round(ci95_halfwidth(1.0, 3), 4)
    2.4841
    """
    if n < 2 or not math.isfinite(sd):
        return math.nan
    return t975(n - 1) * sd / math.sqrt(n)


def summarize(
    flows: pd.DataFrame,
    by: Sequence[str] | str = ("cc",),
    metrics: Sequence[str] | str = DEFAULT_METRICS,
) -> pd.DataFrame:
    """Summarise ``metrics`` of a flow table per group of ``by`` columns.

    Returns a tidy DataFrame with one row per (group, metric) and the columns
    ``*by, "metric", "n", "mean", "sd", "ci95"``:

    * ``n`` — number of non-missing values (NaN values are ignored);
    * ``mean`` — arithmetic mean;
    * ``sd`` — sample standard deviation (ddof = 1; NaN when n = 1);
    * ``ci95`` — 95 % confidence half-width of the mean,
      ``scipy.stats.t.ppf(0.975, n - 1) * sd / sqrt(n)`` (NaN when n = 1), so the
      interval is ``mean ± ci95``.

    Groups appear in order of first appearance; metrics in the order given.  ``by``
    may be empty to summarise all rows together.  Raises ``KeyError`` naming any
    column that is missing.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"cc": ["a", "a", "a"], "goodput_bps": [1.0, 2.0, 3.0]})
    >>> summarize(df, metrics=["goodput_bps"]).round(4).to_dict("records")
    [{'cc': 'a', 'metric': 'goodput_bps', 'n': 3, 'mean': 2.0, 'sd': 1.0, 'ci95': 2.4841}]
    """
    import numpy as np
    import pandas as pd

    by_cols = [by] if isinstance(by, str) else list(by)
    metric_cols = [metrics] if isinstance(metrics, str) else list(metrics)
    missing = [c for c in [*by_cols, *metric_cols] if c not in flows.columns]
    if missing:
        raise KeyError(f"summarize: column(s) not in the flow table: {', '.join(missing)}")

    columns = [*by_cols, *SUMMARY_COLUMNS]
    if by_cols:
        groups = [
            (key if isinstance(key, tuple) else (key,), frame)
            for key, frame in flows.groupby(by_cols, sort=False, dropna=False)
        ]
    else:
        groups = [((), flows)]

    rows: list[list[object]] = []
    for key, frame in groups:
        for metric in metric_cols:
            values = pd.to_numeric(frame[metric], errors="coerce").to_numpy(dtype=float)
            values = values[~np.isnan(values)]
            n = int(values.size)
            mean = float(values.mean()) if n else math.nan
            sd = float(values.std(ddof=1)) if n >= 2 else math.nan
            rows.append([*key, metric, n, mean, sd, ci95_halfwidth(sd, n)])

    out = pd.DataFrame(rows, columns=columns)
    out["n"] = out["n"].astype("int64")
    for col in ("mean", "sd", "ci95"):
        out[col] = out[col].astype("float64")
    return out


def jain_index(values: Sequence[float] | np.ndarray | pd.Series) -> float:
    """Jain's fairness index (Jain, Chiu & Hawe 1984): (Σx)² / (n·Σx²).

    1 when every value is equal, 1/n when one value takes everything. Raises
    ValueError for an empty input, negative values or all zeros.

    >>> jain_index([1.0, 1.0, 1.0, 1.0])
    1.0
    >>> round(jain_index([1.0, 0.0, 0.0, 0.0]), 4)
    0.25
    """
    import numpy as np

    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("jain_index needs at least one value")
    if np.any(x < 0) or not np.all(np.isfinite(x)):
        raise ValueError("jain_index needs finite, non-negative values")
    squares = float(np.sum(x * x))
    if squares == 0.0:
        raise ValueError("jain_index is undefined when every value is zero")
    return float(np.sum(x)) ** 2 / (x.size * squares)
