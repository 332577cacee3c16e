"""The skeleton of a validation report: the agreement table as CSV and Parquet, and a
Markdown report assembled from a family's sections, closed by the failed runs and
the list of files.  Also the number formats every section uses."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "f",
    "mci",
    "pct",
    "ratio_ci_text",
    "write_report",
    "write_tables",
]


def pct(loss: float) -> str:
    """A loss rate in percent: ``0.0025`` -> ``0.25 %``."""
    return f"{loss * 100:g} %"


def f(x: float | None, digits: int = 3) -> str:
    """A number with ``digits`` decimals, ``–`` for None or NaN."""
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def mci(mean: float, ci: float, digits: int = 3) -> str:
    """``mean ± ci`` (``–`` for a NaN mean or half-width)."""
    if math.isnan(mean):
        return "–"
    return f"{mean:.{digits}f} ± {f(ci, digits)}"


def ratio_ci_text(row: Mapping[str, Any]) -> str:
    """A row's ``ratio_ci_low``–``ratio_ci_high`` (``unbounded``, or ``–`` if unknown)."""
    lo, hi = row.get("ratio_ci_low", math.nan), row.get("ratio_ci_high", math.nan)
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return "–"
    if math.isinf(lo) or math.isinf(hi):
        return "unbounded"
    return f"{lo:.3f}–{hi:.3f}"


def write_tables(
    out: Path,
    table: Sequence[Mapping[str, Any]],
    csv_options: Mapping[str, Any] | None = None,
) -> dict[str, Path]:
    """Write ``agreement.csv`` and ``agreement.parquet`` into ``out`` (created if
    missing); returns their paths under ``csv`` and ``parquet``.  ``csv_options``:
    further arguments of ``DataFrame.to_csv`` (the number format and line ends of a
    family's published table)."""
    import pandas as pd

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame(list(table))
    paths = {"csv": out / "agreement.csv", "parquet": out / "agreement.parquet"}
    df.to_csv(paths["csv"], index=False, **(csv_options or {}))
    df.to_parquet(paths["parquet"], index=False)
    return paths


def write_report(
    out: Path,
    table: Sequence[Mapping[str, Any]],
    sections: Sequence[Sequence[str]],
    *,
    errors: Sequence[str] = (),
    files: str,
    csv_options: Mapping[str, Any] | None = None,
) -> dict[str, Path]:
    """Write the tables (:func:`write_tables`, with ``csv_options``) and ``report.md``:
    the ``sections`` (lists of lines) in order, a *Failed runs* section when there are
    ``errors``, and the ``files`` paragraph.  Returns the paths under ``report``,
    ``csv`` and ``parquet``."""
    paths = {"report": Path(out) / "report.md", **write_tables(out, table, csv_options)}
    lines = [line for section in sections for line in section]
    if errors:
        lines += ["", "## Failed runs", ""]
        lines += [f"* {e}" for e in errors]
    lines += ["", files, ""]
    paths["report"].write_text("\n".join(lines))
    return paths
