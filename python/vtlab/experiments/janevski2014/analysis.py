"""Janevski & Petrov: analysis — throughput per grid point (mean ± 95 % CI over
seeds), its averages over DupAck (the IFQ curves) and over IFQ and DupAck (a TCP's
average in a figure), the flatness over DupAck, the maxima, the paired DelAck gain
(seed k of both DelAck values sees the same error pattern), the sensitivity grids,
the tables, and the paper's numbers beside vtlab's."""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from vtlab.api import Result
from vtlab.experiments import common, pipeline
from vtlab.experiments.common import Comparison
from vtlab.experiments.janevski2014.plan import (
    CLEAN,
    ERROR_20,
    LOSSY,
    ROUTINGS,
    Plan,
    figure_of,
    readings,
)
from vtlab.experiments.pipeline import Context, TableSpec
from vtlab.stats import t975

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

KBPS = 1e-3
#: The paper grid's axes (columns of the run and point tables).
AXES = ["hops", "delack", "error", "tcp", "ifq", "dupack"]
FIGURE_KEYS = ["hops", "delack", "error"]
#: Per-run counters kept beside the throughput (flows, then sums over vehicles).
COUNTERS = [
    "retransmissions",
    "rto_count",
    "fast_recoveries",
    "segments_sent",
    "rtt_mean_s",
    "aborted",
]
#: Why a connection ends early (vtlab's SYN and RTO limits; ns-2's agents have none).
ABORTS = ("syn_retries", "data_retries")
LINK_SUMS = ["drops_queue", "mac_frames_sent", "mac_retries", "mac_retry_drops"]
#: "Almost constant" over DupAck: the extreme means of a curve differ by at most
#: this share of its mean, or their 95 % intervals overlap.
FLAT_SHARE = 0.10
#: DupAck values of the flat region the paper names ("above the value of 2").
FLAT_FROM = 3


# -- the paper's figures and claims (paper.toml's other tables) --------------------------


@functools.cache
def paper_doc() -> dict[str, Any]:
    """``paper.toml`` as a whole: its ``[[figure]]`` and ``[[claim]]`` tables besides
    the ``[[value]]`` entries the pipeline reads."""
    text = resources.files(__package__).joinpath(pipeline.PAPER_FILE).read_text("utf-8")
    return tomllib.loads(text)


def paper_claims() -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in paper_doc().get("claim", [])}


def paper_figures() -> dict[int, dict[str, Any]]:
    return {int(f["number"]): f for f in paper_doc().get("figure", [])}


# -- statistics ----------------------------------------------------------------------------


def mean_ci(runs: pd.DataFrame, by: Sequence[str], metric: str = "goodput_kbps") -> pd.DataFrame:
    """Mean, sd and 95 % CI over seeds of ``metric`` per ``by`` group; rows of one seed
    inside a group (e.g. every DupAck of an IFQ curve) are averaged first, so each
    seed is one sample. Columns ``*by, n, mean, sd, ci95``."""
    by = list(by)
    per = runs.groupby([*by, "seed"], sort=False)[metric].mean().reset_index()
    g = per.groupby(by, sort=False)[metric]
    out = g.agg(n="count", mean="mean", sd="std").reset_index()
    n = out["n"].to_numpy(dtype=float)
    t = np.where(n >= 2, [t975(max(k - 1, 1)) for k in n], np.nan)
    out["ci95"] = t * out["sd"].to_numpy(dtype=float) / np.sqrt(n)
    return out


def select(frame: pd.DataFrame, **labels: Any) -> pd.DataFrame:
    """Rows whose columns equal ``labels`` (a list or tuple value: any of them), in
    their order, taken once (:func:`common.label_mask`; the summaries, claims and
    report ask about a thousand times)."""
    return frame[common.label_mask(frame, labels)]


def need(frame: pd.DataFrame, **labels: Any) -> pd.Series:
    """The one row matching ``labels``; ``KeyError`` when the campaign lacks it."""
    rows = select(frame, **labels)
    if rows.empty:
        raise KeyError(f"no row {labels}")
    return rows.iloc[0]


def figure_keys(number: int, reading: str = ERROR_20) -> dict[str, Any]:
    """(hops, delack, error) of the paper's figure ``number`` (3-10); a lossy figure
    under ``reading``."""
    fig = paper_figures()[number]
    return {
        "hops": int(fig["hops"]),
        "delack": int(fig["delack"]),
        "error": reading if fig["error"] else CLEAN,
    }


# -- summaries -------------------------------------------------------------------------


def run_frame(res: Result, **fixed: Any) -> pd.DataFrame:
    """One row per run: the grid's labels, throughput (kbit/s), the TCP counters and
    the MAC counters summed over the vehicles; ``fixed`` adds constant label
    columns (e.g. the grid's number of hops)."""
    f = res.flows.copy()
    for k, v in fixed.items():
        if k not in f.columns:
            f.insert(0, k, v)
    f["goodput_kbps"] = f["goodput_bps"].astype(float) * KBPS
    f["aborted"] = f["abort_reason"].isin(ABORTS).astype(float)
    if res.links is not None and len(res.links):
        links = res.links.groupby(["scenario_hash", "seed"])[LINK_SUMS].sum()
        f = f.merge(links.add_prefix("link_").reset_index(), on=["scenario_hash", "seed"])
    return f


def with_counters(summary: pd.DataFrame, runs: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    cols = [c for c in [*COUNTERS, *(f"link_{c}" for c in LINK_SUMS)] if c in runs.columns]
    extra = runs.groupby(list(by), sort=False)[cols].mean().reset_index()
    return summary.merge(extra, on=list(by), how="left")


#: A curve whose mean is below this (kbit/s) carries no traffic: flatness over DupAck
#: says nothing about it.
DEAD_KBPS = 1.0


def _spread(mean: np.ndarray, ci95: np.ndarray) -> tuple[float, float, bool]:
    """(level, relative spread, flat) of one curve's means over DupAck (``mean`` and
    its ``ci95``, one value per DupAck)."""
    top, bottom = int(np.argmax(mean)), int(np.argmin(mean))
    level = float(mean.mean())
    ci = np.nan_to_num(ci95[[top, bottom]])
    spread = float(mean[top] - mean[bottom])
    rel = spread / level if level > 0 else (0.0 if spread == 0 else math.inf)
    return level, rel, bool(rel <= FLAT_SHARE or spread <= ci.sum())


def dupack_spread(points: pd.DataFrame) -> pd.DataFrame:
    """Per IFQ curve (hops, delack, error, tcp, ifq): the spread of the means over
    DupAck ≥ :data:`FLAT_FROM` and over every DupAck, whether the curve is flat
    there, how DupAck 1-2 differ from the flat region, and whether it carries
    traffic at all. (Each curve's columns as arrays: a frame per curve and row cost
    about a second for the study's 300 curves.)"""
    keys = ["hops", "delack", "error", "tcp", "ifq"]
    rows = []
    for key, g in points.groupby(keys, sort=False):
        mean = g["mean"].to_numpy(dtype=float)
        ci95 = g["ci95"].to_numpy(dtype=float)
        high = g["dupack"].to_numpy() >= FLAT_FROM
        if not high.any():
            continue
        level, rel, flat = _spread(mean[high], ci95[high])
        _, rel_all, flat_all = _spread(mean, ci95)
        low = mean[~high]
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "level_kbps": level,
                "spread_rel": rel,
                "flat": flat,
                "spread_all_rel": rel_all,
                "flat_all": flat_all,
                "low_dupack_rel": (
                    float(low.mean()) / level - 1 if len(low) and level > 0 else math.nan
                ),
                "dead": bool(mean.max() < DEAD_KBPS),
            }
        )
    return pd.DataFrame(rows)


def maxima(points: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """The grid point with the highest mean throughput per ``by`` group."""
    idx = points.groupby(list(by), sort=False)["mean"].idxmax()
    cols = [*AXES, "n", "mean", "ci95"]
    return points.loc[idx, cols].reset_index(drop=True)


def paired_delack(runs: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """DelAck 2 − DelAck 1 per seed (throughput averaged over IFQ and DupAck), mean ±
    95 % CI over seeds per ``by`` group, and the relative gain of the means."""
    by = list(by)
    per = runs.groupby([*by, "seed", "delack"], sort=False)["goodput_kbps"].mean()
    per = per.unstack("delack")
    if not {1, 2} <= set(per.columns):
        return pd.DataFrame(columns=[*by, "delack1", "delack2", "diff", "ci95", "gain", "n"])
    per = per.assign(diff=per[2] - per[1]).reset_index()
    s = mean_ci(per, by, "diff").rename(columns={"mean": "diff"})
    means = per.groupby(by, sort=False)[[1, 2]].mean().reset_index()
    means.columns = [*by, "delack1", "delack2"]
    out = means.merge(s[[*by, "diff", "ci95", "n"]], on=by)
    out["gain"] = out["delack2"] / out["delack1"].where(out["delack1"] > 0) - 1
    return out


def _readings_frame(runs: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    info = readings(plan)
    s = mean_ci(runs, ["hops", "error"])
    s.insert(2, "rate", [info[e][0] for e in s["error"]])
    s.insert(3, "burst_ms", [info[e][1] for e in s["error"]])
    s.insert(4, "kind", [info[e][2] for e in s["error"]])
    clean = s[s["error"] == CLEAN].set_index("hops")["mean"]
    s["degradation"] = [1 - r.mean / clean.get(r.hops, math.nan) for r in s.itertuples()]
    return with_counters(s, runs, ["hops", "error"])


def summarize_all(data: Mapping[str, Result], plan: Plan) -> dict[str, Any]:
    """Mean ± 95 % CI over seeds of everything the tables, figures and claims use."""
    frames = []
    for h in plan.hops:
        name = "single_hop" if h == 1 else f"hops_{h}"
        frames.append(run_frame(data[name], hops=h))
    runs = pd.concat(frames, ignore_index=True)
    s: dict[str, Any] = {"runs": runs}
    s["points"] = with_counters(mean_ci(runs, AXES), runs, AXES)
    s["ifq"] = mean_ci(runs, AXES[:-1])
    s["tcp"] = mean_ci(runs, AXES[:-2])
    s["spread"] = dupack_spread(s["points"])
    s["maxima"] = maxima(s["points"], ["hops", "error", "tcp"])
    s["delack"] = paired_delack(runs, ["hops", "error", "tcp"])
    rts, keys = run_frame(data["rts"]), ["hops", "rts", "delack", "tcp"]
    s["rts"] = with_counters(mean_ci(rts, keys), rts, keys)
    s["readings"] = _readings_frame(run_frame(data["error_readings"]), plan)
    r, keys = run_frame(data["routing"]), ["hops", "routing", "error", "delack", "tcp"]
    s["routing"] = with_counters(mean_ci(r, keys), r, keys)
    p, keys = run_frame(data["persistence"]), ["hops", "error", "persistence"]
    s["persistence"] = with_counters(mean_ci(p, keys), p, keys)
    return s


# -- lookups used by the report and the claims --------------------------------------------


def best_point(s: Mapping[str, Any], hops: int, error: str) -> pd.Series:
    """The highest mean of a (topology, error) pair over TCP, DelAck, IFQ, DupAck."""
    m = select(s["maxima"], hops=hops, error=error)
    if m.empty:
        raise KeyError(f"no maxima for {hops} hops, {error}")
    return m.loc[m["mean"].idxmax()]


def degradation(s: Mapping[str, Any], hops: int, reading: str) -> float:
    """1 − mean throughput with errors / without, over every TCP, DelAck, IFQ and
    DupAck of a topology (paired grid: same points)."""
    t = s["tcp"]
    clean = select(t, hops=hops, error=CLEAN)["mean"].mean()
    lossy = select(t, hops=hops, error=reading)["mean"].mean()
    if not (math.isfinite(clean) and clean > 0):
        raise ValueError("no error-free throughput")
    return float(1 - lossy / clean)


def rts_best(s: Mapping[str, Any], hops: int, rts: str) -> pd.Series:
    r = select(s["rts"], hops=hops, rts=rts)
    if r.empty:
        raise KeyError(f"no RTS rows for {hops} hops")
    return r.loc[r["mean"].idxmax()]


def routing_best(s: Mapping[str, Any], hops: int, routing: str, error: str = CLEAN) -> pd.Series:
    """The highest mean of the ``routing`` grid for a topology, routing and error level."""
    r = select(s["routing"], hops=hops, routing=routing, error=error)
    if r.empty:
        raise KeyError(f"no routing rows for {hops} hops, {routing}")
    return r.loc[r["mean"].idxmax()]


def figure_label(number: int, reading: str = ERROR_20) -> str:
    fig = paper_figures()[number]
    tag = "" if not fig["error"] or reading == ERROR_20 else f", {reading} reading"
    return f"Fig. {number}{tag}"


# -- tables ----------------------------------------------------------------------------


def _with_figure(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    out.insert(
        0,
        "figure",
        [
            figure_of(int(h), int(d), e != CLEAN)
            for h, d, e in zip(*(out[k] for k in FIGURE_KEYS), strict=True)
        ],
    )
    return out


def maxima_table(ctx: Context) -> pd.DataFrame:
    """The results table: per TCP, the highest throughput of each topology and error
    level (over DelAck, IFQ and DupAck) with where it is reached."""
    m = ctx.s["maxima"]
    rows = []
    for tcp in ctx.plan.tcps:
        row: dict[str, Any] = {"tcp": tcp}
        for h in ctx.plan.hops:
            for e in (CLEAN, *LOSSY):
                r = select(m, hops=h, error=e, tcp=tcp)
                key = f"{h}hop_{e}"
                if r.empty:
                    row[key], row[f"{key}_at"] = math.nan, ""
                    continue
                r = r.iloc[0]
                row[key] = float(r["mean"])
                row[f"{key}_at"] = f"DelAck {r['delack']}, IFQ {r['ifq']}, DupAck {r['dupack']}"
        rows.append(row)
    return pd.DataFrame(rows)


def maxima_markdown(ctx: Context, frame: pd.DataFrame) -> str:
    cols = [(h, e) for h in ctx.plan.hops for e in (CLEAN, *LOSSY)]
    headers = ["TCP", *(f"{h} hop{'s' if h > 1 else ''}, {e}" for h, e in cols)]
    body = [
        [r["tcp"], *(common.fmt(r[f"{h}hop_{e}"], 1) for h, e in cols)] for _, r in frame.iterrows()
    ]
    return common.md_table(headers, body)


def _summary(name: str, figure: bool = False) -> Any:
    def build(ctx: Context) -> pd.DataFrame:
        return _with_figure(ctx.s[name]) if figure else ctx.s[name]

    return build


def tables() -> list[TableSpec]:
    return [
        TableSpec("maxima", maxima_table, maxima_markdown),
        TableSpec("points", _summary("points", figure=True)),
        TableSpec("by_ifq", _summary("ifq", figure=True)),
        TableSpec("by_tcp", _summary("tcp", figure=True)),
        TableSpec("dupack_spread", _summary("spread", figure=True)),
        TableSpec("delack_gain", _summary("delack")),
        TableSpec("rts", _summary("rts")),
        TableSpec("error_readings", _summary("readings")),
        TableSpec("routing", _summary("routing")),
        TableSpec("persistence", _summary("persistence")),
    ]


#: A finding's verdict as a word ("n/a" when not evaluated).
verdict_words = functools.partial(pipeline.verdict_word, na="n/a")

#: The findings table (``findings.csv``).
findings_frame = functools.partial(pipeline.findings_frame, where="where", na="n/a")


# -- the paper's numbers beside vtlab's -------------------------------------------------


def _point_cmp(e: Any, r: pd.Series | None, note: str) -> Comparison:
    if r is None:
        return Comparison(e.section, e.label, e.value, math.nan, unit=e.unit, note=note)
    return Comparison(
        e.section,
        e.label,
        e.value,
        float(r["mean"]),
        ci=float(r["ci95"]),
        n=int(r["n"]),
        unit=e.unit,
        sd=float(r.get("sd", math.nan)),
        note=note,
    )


def _where(r: pd.Series) -> str:
    return f"{r['tcp']}, DelAck {r['delack']}, IFQ {r['ifq']}, DupAck {r['dupack']}"


def _safe(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except (KeyError, ValueError):
        return None


def compare(ctx: Context) -> list[Comparison]:
    """The maxima (single hop, 8 hops, their ratio), the time of ten packets and the
    throughput degradation of the error model, beside the paper's numbers; the
    maxima also with RTS/CTS off (sensitivity grid)."""
    p, s = ctx.paper, ctx.s
    single = _safe(best_point, s, 1, CLEAN)
    multi = _safe(best_point, s, max(ctx.plan.hops), CLEAN)
    rows = [
        _point_cmp(p["results/single_max"], single, _where(single) if single is not None else "")
    ]
    for key in ("results/multi_max_low", "results/multi_max_high"):
        rows.append(_point_cmp(p[key], multi, _where(multi) if multi is not None else ""))
    for h, key in ((1, "results/single_max"), (max(ctx.plan.hops), "results/multi_max_high")):
        r = _safe(rts_best, s, h, "off")
        note = f"{r['tcp']}, DelAck {r['delack']}, " if r is not None else ""
        rows.append(_point_cmp(p[key], r, f"RTS/CTS off: {note}IFQ 50, DupAck 3 (sensitivity)"))
    e = p["results/hop_ratio"]
    ratio = (
        float(single["mean"] / multi["mean"])
        if single is not None and multi is not None and multi["mean"] > 0
        else math.nan
    )
    rows.append(Comparison(e.section, e.label, e.value, ratio, unit=e.unit, note="max / max"))
    e = p["text/ten_packets_ms"]
    ours = (
        10 * ctx.plan.segment * 8 / (single["mean"] * 1e3) * 1e3 if single is not None else math.nan
    )
    rows.append(
        Comparison(e.section, e.label, e.value, ours, unit=e.unit, note="at vtlab's single-hop max")
    )
    rows += _routing_rows(ctx)
    e = p["results/degradation"]
    for reading in LOSSY:
        for h in ctx.plan.hops:
            d = _safe(degradation, s, h, reading)
            rows.append(
                Comparison(
                    e.section,
                    e.label,
                    e.value * 100,
                    d * 100 if d is not None else math.nan,
                    unit="%",
                    note=f"{reading} reading, {h} hop{'s' if h > 1 else ''}",
                )
            )
    return rows


def _routing_rows(ctx: Context) -> list[Comparison]:
    """The maxima and their ratio with static routes and with AODV (``routing`` grid),
    beside the paper's numbers."""
    p, s, h = ctx.paper, ctx.s, max(ctx.plan.hops)
    rows = []
    for routing in ROUTINGS:
        best = {hops: _safe(routing_best, s, hops, routing) for hops in (1, h)}
        keys = (
            (1, "results/single_max"),
            (h, "results/multi_max_low"),
            (h, "results/multi_max_high"),
        )
        for hops, key in keys:
            r = best[hops]
            note = f"{r['tcp']}, DelAck {r['delack']}, " if r is not None else ""
            rows.append(_point_cmp(p[key], r, f"{routing}: {note}IFQ 50, DupAck 3 (routing grid)"))
        one, many = best[1], best[h]
        ratio = (
            float(one["mean"] / many["mean"])
            if one is not None and many is not None and many["mean"] > 0
            else math.nan
        )
        e = p["results/hop_ratio"]
        rows.append(
            Comparison(
                e.section, e.label, e.value, ratio, unit=e.unit, note=f"{routing}: max / max"
            )
        )
    return rows


__all__ = [
    "AXES",
    "FLAT_SHARE",
    "best_point",
    "compare",
    "degradation",
    "figure_keys",
    "findings_frame",
    "mean_ci",
    "need",
    "paper_claims",
    "paper_figures",
    "routing_best",
    "select",
    "summarize_all",
    "tables",
]
