"""ISO 15118-2 over a lossy charging cable: analysis — the survival of a session per
cell with its Wilson interval, the CurrentDemand response-time tail pooled over the
seeds (from the message counts), the time to energy, the headline (per stack, the
highest loss rate at which sessions survive with probability ≥ 99 %), and the
tables."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import vtlab.experiments.iso15118.rare as rare
from vtlab.experiments import common
from vtlab.experiments.common import Comparison
from vtlab.experiments.iso15118.plan import AXES, SURVIVAL_TARGET, Z95, Plan, loss_label
from vtlab.experiments.pipeline import Context, TableSpec

#: The charging loop's message.
LOOP = "CurrentDemand"
#: Quantiles of the response-time tail.
TAIL = (0.99, 0.999)


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion, k successes in n trials:

    (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), p̂ = k/n;

    (NaN, NaN) for n = 0. With z = Φ⁻¹(0.975) it is the two-sided 95 % interval."""
    if n <= 0:
        return math.nan, math.nan
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At k = 0 (k = n) the lower (upper) end is exactly 0 (1); rounding must not put
    # it a hair beyond the point estimate.
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return lo, hi


def best_lower_bound(n: int, z: float = Z95) -> float:
    """The lower Wilson bound when all n runs survive, n / (n + z²): the most n runs
    can show."""
    return n / (n + z * z)


def nearest_rank(values: np.ndarray, counts: np.ndarray, q: float) -> float:
    """The q-quantile (nearest rank, as the core's per-session percentiles) of values
    given with their counts: the smallest value whose cumulative count reaches
    ⌈q·N⌉. NaN without values."""
    total = int(counts.sum())
    if total == 0:
        return math.nan
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(counts[order])
    rank = max(1, math.ceil(round(q * total, 9)))
    return float(values[order][int(np.searchsorted(cum, rank))])


# -- per cell ----------------------------------------------------------------------------


def survival(sessions: pd.DataFrame, by: Sequence[str] = AXES) -> pd.DataFrame:
    """Per cell: sessions n, survived k, p = k/n and the 95 % Wilson interval; why
    the others ended; the time to energy of those that reached it; the share that
    reached it; the mean session length."""
    rows = []
    for key, g in sessions.groupby(list(by), sort=False):
        n, k = len(g), int(g["completed"].astype(bool).sum())
        lo, hi = wilson(k, n)
        tte = g["time_to_energy_s"].astype(float)
        reasons = g.loc[~g["completed"].astype(bool), "abort_reason"].value_counts()
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "n": n,
                "survived": k,
                "survival": k / n,
                "wilson_lo": lo,
                "wilson_hi": hi,
                "deadline_aborts": int(reasons.get("deadline", 0)),
                "other_aborts": int(reasons.sum() - reasons.get("deadline", 0)),
                "failed_in_loop": int((g["failed_message"] == LOOP).sum()),
                "reached_energy": float(tte.notna().mean()),
                "time_to_energy_s": float(tte.mean()),
                "time_to_energy_max_s": float(tte.max()),
                "session_mean_s": float(g["session_s"].astype(float).mean()),
            }
        )
    return pd.DataFrame(rows)


def tail(counts: pd.DataFrame, by: Sequence[str] = AXES) -> pd.DataFrame:
    """Per cell, pooled over seeds (and vehicles): the CurrentDemand exchanges, how
    many the vehicle gave up on, and p50/p99/p99.9/max of the answered ones' response
    times (nearest rank)."""
    loop = counts[counts["message"] == LOOP]
    rows = []
    for key, g in loop.groupby(list(by), sort=False):
        answered = g[g["response_time_s"].notna()]
        values = answered["response_time_s"].to_numpy(dtype=float)
        n = answered["count"].to_numpy(dtype=np.int64)
        total = int(g["count"].sum())
        missed = int(g.loc[g["missed"].astype(bool), "count"].sum())
        row = {**dict(zip(by, key, strict=True)), "exchanges": total, "missed": missed}
        row["missed_share"] = missed / total if total else math.nan
        row["p50_s"] = nearest_rank(values, n, 0.5)
        for q in TAIL:
            row[f"p{q * 100:g}_s"] = nearest_rank(values, n, q)
        row["max_s"] = float(values.max()) if len(values) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def cells(res: Any) -> pd.DataFrame:
    """Survival and tail per cell, one table (the grid's order)."""
    surv = survival(res.sessions)
    t = tail(res.messages)
    return surv.merge(t, on=list(AXES), how="left")


# -- the headline --------------------------------------------------------------------------


def tolerable(table: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Per group of ``keys``: the highest loss rate L such that in every cell with
    loss ≤ L (every burst size and congestion control in the group) the lower Wilson
    bound reaches :data:`SURVIVAL_TARGET`; NaN when even the lowest loss fails. Also
    the weakest cell at L and at the next loss rate (its lower bound, k/n)."""
    rows = []
    for key, g in table.groupby(list(keys), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        by_loss = g.groupby("loss", sort=True)
        ok = by_loss["wilson_lo"].min() >= SURVIVAL_TARGET
        passing = ok.cumprod().astype(bool)
        best = float(passing[passing].index.max()) if passing.any() else math.nan
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        row["tolerable_loss"] = best
        losses = sorted(g["loss"].unique())
        for name, loss in (("at", best), ("next", _next(losses, best))):
            w = g[g["loss"] == loss]
            if w.empty:
                row.update({f"{name}_loss": math.nan, f"{name}_lo": math.nan})
                row.update({f"{name}_survived": -1, f"{name}_n": 0})
                continue
            weakest = w.loc[w["wilson_lo"].idxmin()]
            row.update(
                {
                    f"{name}_loss": float(loss),
                    f"{name}_lo": float(weakest["wilson_lo"]),
                    f"{name}_survived": int(weakest["survived"]),
                    f"{name}_n": int(weakest["n"]),
                }
            )
        row["n_max"] = int(g["n"].max())
        row["best_possible_lo"] = best_lower_bound(int(g["n"].min()))
        rows.append(row)
    return pd.DataFrame(rows)


def _next(losses: Sequence[float], best: float) -> float:
    """The loss rate above ``best`` (the lowest one when nothing passes)."""
    if not math.isfinite(best):
        return float(losses[0])
    higher = [x for x in losses if x > best]
    return float(higher[0]) if higher else math.nan


# -- the pipeline's hooks ----------------------------------------------------------------


def summarize_all(data: Mapping[str, Any], plan: Plan) -> dict[str, Any]:
    vehicle = cells(data["vehicle"])
    s: dict[str, Any] = {
        "cells": vehicle,
        "headline": tolerable(vehicle, ["stack"]),
        "by_cc": tolerable(vehicle, ["stack", "algorithm", "burst"]),
    }
    if "station" in data:
        station = cells(data["station"])
        s["station"] = station
        s["station_headline"] = tolerable(station, ["stack"])
    return s


def compare(ctx: Context) -> list[Comparison]:
    """No paper: nothing to compare with."""
    return []


# -- tables ----------------------------------------------------------------------------


def fmt_p(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{x:.3f}"


def fmt_ms(x: float) -> str:
    if not math.isfinite(x):
        return "–"
    return f"{x * 1e3:.1f}" if x >= 0.01 else f"{x * 1e3:.2f}"


def cells_markdown(frame: pd.DataFrame) -> str:
    headers = [
        "loss",
        "burst",
        "stack",
        "cc",
        "survived",
        "survival [Wilson 95 %]",
        "CurrentDemand p99 ms",
        "p99.9 ms",
        "missed",
        "time to energy s",
    ]
    rows = [
        [
            loss_label(r["loss"]),
            r["burst"],
            r["stack"],
            r["algorithm"],
            f"{r['survived']}/{r['n']}",
            f"{fmt_p(r['survival'])} [{fmt_p(r['wilson_lo'])}, {fmt_p(r['wilson_hi'])}]",
            fmt_ms(r["p99_s"]),
            fmt_ms(r["p99.9_s"]),
            f"{int(r['missed'])}/{int(r['exchanges'])}" if math.isfinite(r["exchanges"]) else "–",
            common.fmt(r["time_to_energy_s"], 3),
        ]
        for _, r in frame.iterrows()
    ]
    return common.md_table(headers, rows, align="lllllrrrrr")


def rare_frame(ctx: Context) -> pd.DataFrame:
    """The rare-event table (:func:`rare.table`), computed once per context (its
    settings' estimates ``--jobs`` at once); its conditional runs are stored in
    ``OUT/rare``."""
    if "rare" not in ctx.s:
        log = ctx.config.log
        rows = rare.table(
            ctx.plan,
            Path(ctx.config.out) / "rare",
            ctx.config.jobs,
            None if log is None else lambda line: log(f"rare-event estimate {line}"),
        )
        ctx.s["rare"] = pd.DataFrame(rows)
    return ctx.s["rare"]


def rare_markdown(frame: pd.DataFrame) -> str:
    headers = ["burst", "setting", "highest loss for ≥ 99 %", "survival at 10⁻⁴ % [95 %]"]
    headers += ["at 10⁻³ % [95 %]", "survived per k", "runs"]

    def cell(r: pd.Series, loss: str) -> str:
        return f"{r['survival@' + loss]:.5f} [{r['lower@' + loss]:.5f}, {r['upper@' + loss]:.5f}]"

    rows = [
        [
            r["burst"],
            f"`{r['setting']}`",
            ("≥ " if r["limited_by_runs"] else "")
            + (f"{r['tolerable_loss'] * 100:.2g} %" if r["tolerable_loss"] > 0 else "below 10⁻⁶ %"),
            cell(r, "1e-06"),
            cell(r, "1e-05"),
            r["survived_per_k"],
            str(r["runs"]),
        ]
        for _, r in frame.iterrows()
    ]
    return common.md_table(headers, rows, align="lllrrlr")


def tables() -> list[TableSpec]:
    return [
        TableSpec("rare", rare_frame, lambda c, f: rare_markdown(f)),
        TableSpec("cells", lambda c: c.s["cells"], lambda c, f: cells_markdown(f)),
        TableSpec("headline", lambda c: c.s["headline"]),
        TableSpec("tolerable_by_cc", lambda c: c.s["by_cc"]),
        TableSpec(
            "station",
            lambda c: c.s.get("station", pd.DataFrame()),
            lambda c, f: cells_markdown(f) if len(f) else "no station grid\n",
        ),
    ]
