"""Statistics and verdicts of a validation, on :mod:`vtlab.stats`: the mean with its
Student-t interval, the ratio of two means with its Fieller interval, paired
differences, the verdict of a cell, and how two simulators rank the same items.

Verdict (:func:`verdict`): from the ratio of means vtlab/ns-3 and its 95 % Fieller
interval (:func:`ratio_ci`): ``agree`` within ±10 %; ``consistent`` within ±20 % with 1
inside the interval; ``differs`` otherwise; ``missing`` when a side has no runs.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vtlab.stats import ci95_halfwidth, t975

__all__ = [
    "AGREE_TOLERANCE",
    "CONSISTENT_TOLERANCE",
    "VERDICTS",
    "PairedDiff",
    "RatioCI",
    "Ranked",
    "ci_overlap",
    "mean_ci",
    "paired_difference",
    "rank_agreement",
    "ratio_ci",
    "ratio_ci_delta",
    "spearman",
    "verdict",
    "verdict_counts",
]

#: ``agree`` when the point ratio vtlab/ns-3 is within 1 ± this.
AGREE_TOLERANCE = 0.10
#: ``consistent`` when outside :data:`AGREE_TOLERANCE` but within 1 ± this and the
#: ratio's 95 % confidence interval contains 1.
CONSISTENT_TOLERANCE = 0.20
#: The verdicts, best first (``missing``: a side has no runs).
VERDICTS = ("agree", "consistent", "differs", "missing")


def _finite(values: Iterable[float | None]) -> list[float]:
    """``values`` as floats, None and NaN dropped."""
    return [float(v) for v in values if v is not None and not math.isnan(float(v))]


def mean_ci(values: Iterable[float | None]) -> tuple[float, float, int]:
    """(mean, 95 % confidence half-width, n) of ``values`` (NaNs dropped).

    The half-width is Student's ``t(0.975, n-1) · sd / √n``; NaN when n < 2.

    >>> [round(x, 4) for x in mean_ci([1.0, 2.0, 3.0])]
    [2.0, 2.4841, 3]
    """
    xs = _finite(values)
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, 0
    mean = sum(xs) / n
    if n < 2:
        return mean, math.nan, n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    return mean, ci95_halfwidth(sd, n), n


def ci_overlap(m1: float, h1: float, m2: float, h2: float) -> bool:
    """Whether [m1 ± h1] and [m2 ± h2] overlap; a NaN half-width counts as 0."""
    h1 = 0.0 if math.isnan(h1) else h1
    h2 = 0.0 if math.isnan(h2) else h2
    return m1 - h1 <= m2 + h2 and m2 - h2 <= m1 + h1


@dataclass(frozen=True)
class RatioCI:
    """The ratio of two independent means and its 95 % Fieller interval
    (:func:`ratio_ci`).  ``low``/``high`` are −∞/+∞ when the interval is unbounded,
    NaN when a side has fewer than 2 values; ``contains_one`` is exact even then
    (NaN interval: ``False``)."""

    ratio: float
    low: float
    high: float
    contains_one: bool
    df: float  #: Welch–Satterthwaite degrees of freedom (NaN if undefined)


def ratio_ci(num: Iterable[float], den: Iterable[float]) -> RatioCI:
    """The ratio of means mean(num)/mean(den) with its 95 % confidence interval by
    Fieller's theorem for two independent samples.

    With means a, b and squared standard errors v₁ = s₁²/n₁, v₂ = s₂²/n₂, the
    interval is every ρ with (a − ρb)² ≤ t²(v₁ + ρ²v₂), t the 0.975 quantile of
    Student's t with the Welch–Satterthwaite degrees of freedom
    ν = (v₁ + v₂)² / (v₁²/(n₁−1) + v₂²/(n₂−1)).  When g = t²v₂/b² < 1 (the
    denominator is significantly non-zero) it is the bounded interval

        [ab ∓ t·√(a²v₂ + b²v₁ − t²v₁v₂)] / (b² − t²v₂),

    otherwise unbounded (reported as (−∞, +∞)).  ρ = 1 is inside exactly when
    (a − b)² ≤ t²(v₁ + v₂), i.e. when Welch's test does not reject equal means.
    Both variances zero: the degenerate interval [a/b, a/b].  NaNs are dropped.

    >>> r = ratio_ci([11, 12, 13], [9, 10, 11])
    >>> round(r.ratio, 3), round(r.low, 4), round(r.high, 4), r.df
    (1.2, 0.976, 1.4873, 4.0)
    """
    xs, ys = _finite(num), _finite(den)
    if not xs or not ys:
        return RatioCI(math.nan, math.nan, math.nan, False, math.nan)
    n1, n2 = len(xs), len(ys)
    a, b = sum(xs) / n1, sum(ys) / n2
    ratio = a / b if b != 0 else (1.0 if a == 0 else math.copysign(math.inf, a))
    if n1 < 2 or n2 < 2:
        return RatioCI(ratio, math.nan, math.nan, False, math.nan)
    v1 = sum((x - a) ** 2 for x in xs) / (n1 - 1) / n1
    v2 = sum((y - b) ** 2 for y in ys) / (n2 - 1) / n2
    if v1 == 0 and v2 == 0:
        return RatioCI(ratio, ratio, ratio, a == b, math.nan)
    df = (v1 + v2) ** 2 / (v1**2 / (n1 - 1) + v2**2 / (n2 - 1))
    t2 = t975(df) ** 2
    contains_one = (a - b) ** 2 <= t2 * (v1 + v2)
    denom = b * b - t2 * v2
    if denom <= 0:
        return RatioCI(ratio, -math.inf, math.inf, contains_one, df)
    half = math.sqrt(t2) * math.sqrt(max(a * a * v2 + b * b * v1 - t2 * v1 * v2, 0.0))
    low, high = sorted(((a * b - half) / denom, (a * b + half) / denom))
    return RatioCI(ratio, low, high, contains_one, df)


#: The normal distribution's 0.975 quantile, as :func:`ratio_ci_delta` rounds it.
Z975 = 1.96


def ratio_ci_delta(num: Iterable[float], den: Iterable[float]) -> RatioCI:
    """The ratio of means r = mean(num)/mean(den) with the delta method's 95 % interval
    r · (1 ∓ 1.96 · √((s₁/m₁)²/n₁ + (s₂/m₂)²/n₂)) (m, s, n: mean, sample standard
    deviation (0 for one value) and count of each side): the interval of the 802.11
    validation's published table, which predates :func:`ratio_ci`.  Unbounded when
    mean(num) is 0 or less; NaN when a side is empty; ``df`` is NaN.  NaNs are dropped.

    >>> r = ratio_ci_delta([100.0, 120.0, 100.0, 120.0], [100.0] * 4)
    >>> round(r.ratio, 3), round(r.low, 4), round(r.high, 4), r.contains_one
    (1.1, 0.9868, 1.2132, True)
    """
    xs, ys = _finite(num), _finite(den)
    if not xs or not ys:
        return RatioCI(math.nan, math.nan, math.nan, False, math.nan)
    (m1, s1), (m2, s2) = (
        (statistics.fmean(v), statistics.stdev(v) if len(v) > 1 else 0.0) for v in (xs, ys)
    )
    r = m1 / m2
    rel = math.sqrt((s1 / m1) ** 2 / len(xs) + (s2 / m2) ** 2 / len(ys)) if m1 > 0 else math.inf
    low, high = r * (1 - Z975 * rel), r * (1 + Z975 * rel)
    return RatioCI(r, low, high, low <= 1.0 <= high, math.nan)


def verdict(
    ratio: float,
    contains_one: bool,
    tolerance: float = AGREE_TOLERANCE,
    consistent_tolerance: float = CONSISTENT_TOLERANCE,
) -> str:
    """The verdict of a cell from its point ratio vtlab/ns-3 and whether the ratio's
    95 % CI contains 1 (:func:`ratio_ci`): ``agree`` when the ratio is within
    ±``tolerance``; ``consistent`` when outside that but within
    ±``consistent_tolerance`` and the CI contains 1; ``differs`` otherwise;
    ``missing`` when the ratio is NaN (a side has no runs).  The CI never turns a
    cell into ``agree``: more seeds cannot make a 30 % gap pass.

    >>> verdict(1.05, False), verdict(1.15, True), verdict(1.15, False), verdict(1.3, True)
    ('agree', 'consistent', 'differs', 'differs')
    """
    if math.isnan(ratio):
        return "missing"
    off = abs(ratio - 1.0)
    if off <= tolerance + 1e-12:
        return "agree"
    if off <= consistent_tolerance + 1e-12 and contains_one:
        return "consistent"
    return "differs"


def verdict_counts(table: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many cells got each verdict (every name of :data:`VERDICTS`)."""
    counts = dict.fromkeys(VERDICTS, 0)
    for row in table:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    return counts


def _ranks(values: Sequence[float]) -> list[float]:
    """Ranks 1..n (1 = largest), ties get their average rank."""
    order = sorted(range(len(values)), key=lambda i: -values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation of two equally long sequences (ties averaged);
    NaN for fewer than two items or a constant sequence.

    >>> spearman([1, 2, 3], [10, 20, 30]), spearman([1, 2, 3], [3, 2, 1])
    (1.0, -1.0)
    """
    if len(a) != len(b):
        raise ValueError("spearman: sequences differ in length")
    n = len(a)
    if n < 2:
        return math.nan
    ra, rb = _ranks(list(a)), _ranks(list(b))
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    if va == 0 or vb == 0:
        return math.nan
    return cov / math.sqrt(va * vb)


@dataclass(frozen=True)
class PairedDiff:
    """The mean of paired differences x_i − y_i with its 95 % Student-t interval
    (:func:`paired_difference`); ``half`` is NaN for fewer than 2 pairs."""

    mean: float
    half: float
    n: int

    @property
    def contains_zero(self) -> bool:
        """Whether 0 is inside mean ± half (False without an interval)."""
        return not math.isnan(self.half) and abs(self.mean) <= self.half


def paired_difference(xs: Sequence[float], ys: Sequence[float]) -> PairedDiff:
    """The paired comparison of two equally long sequences (run i of one side with run
    i of the other, e.g. the same seed or the same replayed loss pattern): the mean of
    the differences and its 95 % interval ``t(0.975, n−1) · sd / √n``.  Pairs with a
    NaN on either side are dropped.

    >>> d = paired_difference([10.0, 12.0, 11.0], [9.0, 10.0, 11.0])
    >>> d.mean, round(d.half, 4), d.n, d.contains_zero
    (1.0, 2.4841, 3, True)
    """
    if len(xs) != len(ys):
        raise ValueError("paired_difference: sequences differ in length")
    diffs = [
        float(x) - float(y)
        for x, y in zip(xs, ys, strict=True)
        if not (math.isnan(float(x)) or math.isnan(float(y)))
    ]
    mean, half, n = mean_ci(diffs)
    return PairedDiff(mean, half, n)


@dataclass(frozen=True)
class Ranked:
    """One item ranked on both sides: its mean and 95 % half-width on each."""

    name: str
    vtlab: float
    vtlab_half: float
    ns3: float
    ns3_half: float


def _separated(m1: float, h1: float, m2: float, h2: float) -> bool:
    """Whether two means' 95 % intervals are disjoint (both half-widths known)."""
    if math.isnan(h1) or math.isnan(h2):
        return False
    return not ci_overlap(m1, h1, m2, h2)


def rank_agreement(items: Sequence[Ranked]) -> dict[str, Any]:
    """How the two sides order the same items by mean (best first): both orders,
    Spearman's ρ, exact equality, and the significant inversions: pairs that both
    sides separate (disjoint 95 % intervals) but in opposite order.

    >>> r = rank_agreement([Ranked("a", 2.0, 0.1, 1.0, 0.1), Ranked("b", 1.0, 0.1, 2.0, 0.1)])
    >>> r["vtlab_order"], r["ns3_order"], r["spearman"], r["significant_inversions"]
    (['a', 'b'], ['b', 'a'], -1.0, ['a/b'])
    """
    vt = [i.vtlab for i in items]
    ns = [i.ns3 for i in items]
    names = [i.name for i in items]
    order_vt = [names[k] for k in sorted(range(len(items)), key=lambda k: -vt[k])]
    order_ns = [names[k] for k in sorted(range(len(items)), key=lambda k: -ns[k])]
    inversions = []
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            vt_sep = _separated(a.vtlab, a.vtlab_half, b.vtlab, b.vtlab_half)
            ns_sep = _separated(a.ns3, a.ns3_half, b.ns3, b.ns3_half)
            if vt_sep and ns_sep and (a.vtlab > b.vtlab) != (a.ns3 > b.ns3):
                inversions.append(f"{a.name}/{b.name}")
    return {
        "vtlab_order": order_vt,
        "ns3_order": order_ns,
        "spearman": spearman(vt, ns),
        "same_order": order_vt == order_ns,
        "significant_inversions": inversions,
    }
