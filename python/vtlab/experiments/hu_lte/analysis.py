"""Hu et al.: analysis — goodput and RTT per point (mean ± 95 % CI over runs), paired
gains over CUBIC (seed k of every scheme sees the same channel), the tables, and the
paper's numbers beside vtlab's."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from vtlab.api import Result
from vtlab.experiments import common, pipeline
from vtlab.experiments.common import Comparison
from vtlab.experiments.hu_lte.plan import (
    ADAPTIVE,
    CUBIC,
    CUBIC_6M,
    DEFAULT_RWND,
    GOOD_RSRP,
    POOR_RSRP,
    STATIC_RSRP,
    Plan,
    lambda_info,
    sensitivity_settings,
)
from vtlab.experiments.pipeline import Context, TableSpec
from vtlab.stats import ci95_halfwidth

MBPS = 1e-6
#: Per-run RTT statistics, reported in ms (mean over runs of each run's value).
RTT_COLUMNS = {
    "rtt_min_s": "rtt_min_ms",
    "rtt_mean_s": "rtt_mean_ms",
    "rtt_p50_s": "rtt_p50_ms",
    "rtt_p95_s": "rtt_p95_ms",
    "rtt_p99_s": "rtt_p99_ms",
}


def metrics(flows: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Goodput (Mbit/s) mean, sd, 95 % CI and runs per group; the RTT statistics
    (ms) and retransmissions as means over runs."""
    by = list(by)
    g = common.summarize_runs(flows, by, "goodput_bps", scale=MBPS)
    g = g.rename(columns={"mean": "goodput_mbps"})
    extra = flows[[*by, *RTT_COLUMNS, "retransmissions"]].copy()
    for src, dst in RTT_COLUMNS.items():
        extra[dst] = extra.pop(src).astype(float) * 1e3
    extra = extra.groupby(by, sort=False).mean(numeric_only=True).reset_index()
    return g.merge(extra, on=by, how="left")


def gains(flows: pd.DataFrame, by: Sequence[str], base: str = CUBIC) -> pd.DataFrame:
    """Per-seed gain of every variant over ``base`` at the same point (goodput
    ratio − 1; common random numbers): mean ± 95 % CI over seeds, and the ratio of
    the means − 1 (``gain``)."""
    by = list(by)
    per = flows.pivot_table(index=[*by, "seed"], columns="variant", values="goodput_bps")
    if base not in per.columns:
        return pd.DataFrame(columns=[*by, "variant", "gain", "gain_seed", "gain_ci95", "n"])
    rows = []
    for key, block in per.groupby(level=list(range(len(by))), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        for variant in block.columns:
            if variant == base:
                continue
            pair = block[[variant, base]].dropna()
            if pair.empty:
                continue
            r = (pair[variant] / pair[base] - 1).to_numpy(dtype=float)
            sd = float(r.std(ddof=1)) if r.size >= 2 else math.nan
            rows.append(
                {
                    **dict(zip(by, key, strict=True)),
                    "variant": variant,
                    "gain": float(pair[variant].mean() / pair[base].mean() - 1),
                    "gain_seed": float(r.mean()),
                    "gain_ci95": ci95_halfwidth(sd, int(r.size)),
                    "n": int(r.size),
                }
            )
    return pd.DataFrame(rows)


def with_gains(flows: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """:func:`metrics` per (by, variant) with the gain over CUBIC at the same point."""
    m = metrics(flows, [*by, "variant"])
    g = gains(flows, by).drop(columns=["n"])
    return m.merge(g, on=[*by, "variant"], how="left")


def _lambda_columns(frame: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    info = lambda_info(plan)
    out = frame.copy()
    out.insert(1, "lambda", [info.get(v, (math.nan, ""))[0] for v in out["variant"]])
    out.insert(2, "mode", [info.get(v, (math.nan, ""))[1] for v in out["variant"]])
    return out


def lambda_pairs(flows: pd.DataFrame, by: Sequence[str], plan: Plan) -> pd.DataFrame:
    """Paired (same seed) goodput difference λ_a − λ_b (Mbit/s) for every ordered
    pair of λ of one growth reading at a point: mean ± 95 % CI over seeds."""
    info = lambda_info(plan)
    f = flows[flows["variant"].isin(list(info))].copy()
    f["lambda"] = [info[v][0] for v in f["variant"]]
    f["mode"] = [info[v][1] for v in f["variant"]]
    cols = [*by, "mode", "lam_a", "lam_b", "diff_mbps", "ci95", "n"]
    rows = []
    for key, g in f.groupby([*by, "mode"], sort=False):
        per = g.pivot_table(index="seed", columns="lambda", values="goodput_bps") * MBPS
        for a in per.columns:
            for b in per.columns:
                if a == b:
                    continue
                d = (per[a] - per[b]).dropna().to_numpy(dtype=float)
                sd = float(d.std(ddof=1)) if d.size >= 2 else math.nan
                rows.append(
                    [*key, float(a), float(b), float(d.mean()), ci95_halfwidth(sd, d.size), d.size]
                )
    return pd.DataFrame(rows, columns=cols)


def _sensitivity(flows: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    settings = sensitivity_settings(plan)
    m = metrics(flows, ["speed_kmh", "setting"])
    m.insert(2, "parameter", [settings[s][0] for s in m["setting"]])
    m.insert(3, "value", [settings[s][1] for s in m["setting"]])
    default = m[m["setting"] == "default"].set_index("speed_kmh")
    m["vs_default"] = [
        r.goodput_mbps / default.loc[r.speed_kmh, "goodput_mbps"] - 1 for r in m.itertuples()
    ]
    return m


def _decomposition(data: Mapping[str, Result], plan: Plan) -> pd.DataFrame:
    """ARWND alone, ACWND alone, both (the default of ``sens_arwnd``) and neither
    (CUBIC with the preset's receive buffer, autotuned from it, from ``sens_rwnd``), per speed."""
    frames = []
    for v in plan.sens_speeds_kmh:
        f = data[f"decomposition_{v:g}"].flows.copy()
        f.insert(0, "speed_kmh", v)
        frames.append(f)
    both = data["sens_arwnd"].flows
    both = both[both["setting"] == "default"].assign(setting="ARWND+ACWND (both)")
    neither = data["sens_rwnd"].flows
    neither = neither[neither["recv_buffer"] == DEFAULT_RWND].assign(setting="CUBIC (neither)")
    cols = ["speed_kmh", "setting", "seed", "goodput_bps", *RTT_COLUMNS, "retransmissions"]
    f = pd.concat([x[cols] for x in (*frames, both, neither)], ignore_index=True)
    return metrics(f, ["speed_kmh", "setting"]).sort_values("speed_kmh", kind="stable")


def summarize_all(data: Mapping[str, Result], plan: Plan) -> dict[str, Any]:
    """Mean ± 95 % CI over runs of everything the tables, figures and report show."""
    s: dict[str, Any] = {}
    s["table1"] = with_gains(data["table1"].flows, ["dir", "rsrp"])
    tr = data["rtt_trace"].traces
    if tr is not None and len(tr):
        tr = tr[tr["srtt_s"].notna()]
        s["rtt_trace"] = tr.assign(srtt_ms=tr["srtt_s"] * 1e3)[
            ["speed_kmh", "variant", "time_s", "srtt_ms", "cwnd_bytes", "flight_size_bytes"]
        ].reset_index(drop=True)
    else:
        s["rtt_trace"] = pd.DataFrame(columns=["speed_kmh", "variant", "time_s", "srtt_ms"])
    s["lambda_rsrp"] = _lambda_columns(with_gains(data["lambda_rsrp"].flows, ["rsrp"]), plan)
    s["lambda_speed"] = _lambda_columns(with_gains(data["lambda_speed"].flows, ["speed_kmh"]), plan)
    s["lambda_rsrp_pairs"] = lambda_pairs(data["lambda_rsrp"].flows, ["rsrp"], plan)
    s["lambda_speed_pairs"] = lambda_pairs(data["lambda_speed"].flows, ["speed_kmh"], plan)
    s["ack_path"] = with_gains(data["ack_path"].flows, ["rsrp", "ack_path"])
    s["sensitivity"] = _sensitivity(data["sens_arwnd"].flows, plan)
    s["decomposition"] = _decomposition(data, plan)
    s["rwnd"] = metrics(data["sens_rwnd"].flows, ["speed_kmh", "recv_buffer"])
    s["buffer"] = with_gains(data["sens_buffer"].flows, ["speed_kmh", "buffer"])
    return s


# -- lookups ---------------------------------------------------------------------------


def row(frame: pd.DataFrame, **labels: Any) -> pd.Series | None:
    """The first row whose columns equal ``labels`` (floats compared to 1e-9)."""
    rows = frame
    for k, v in labels.items():
        if isinstance(v, float):
            rows = rows[(rows[k].astype(float) - v).abs() < 1e-9]
        else:
            rows = rows[rows[k] == v]
    return rows.iloc[0] if len(rows) else None


def need(frame: pd.DataFrame, **labels: Any) -> pd.Series:
    """:func:`row`, raising ``KeyError`` when the point is not in the campaign."""
    r = row(frame, **labels)
    if r is None:
        raise KeyError(f"no row {labels}")
    return r


def best_lambda(frame: pd.DataFrame, mode: str, **where: Any) -> tuple[float, pd.DataFrame]:
    """The λ (of one growth reading) with the highest mean goodput at a point, and
    the λ rows sorted by goodput (highest first)."""
    rows = frame[frame["mode"] == mode]
    for k, v in where.items():
        rows = rows[(rows[k].astype(float) - float(v)).abs() < 1e-9]
    if rows.empty:
        raise KeyError(f"no λ rows for {mode} {where}")
    rows = rows.sort_values("goodput_mbps", ascending=False)
    return float(rows["lambda"].iloc[0]), rows


# -- tables ----------------------------------------------------------------------------


def table1_frame(ctx: Context) -> pd.DataFrame:
    """Table I: the paper's four numbers beside vtlab's static car (STATIC_RSRP)."""
    rows = []
    t1 = ctx.s["table1"]
    for e in ctx.paper.group("table1/"):
        if "variant" not in e.extra:
            continue
        d, v = e.extra["dir"], e.extra["variant"]
        r = row(t1, dir=d, rsrp=STATIC_RSRP, variant=v)
        paper_gain = ctx.paper.value(f"table1/{d}/ratio") - 1 if v == ADAPTIVE else math.nan
        rows.append(
            {
                "direction": d,
                "scheme": v,
                "paper_mbps": e.value,
                "vtlab_mbps": float(r["goodput_mbps"]) if r is not None else math.nan,
                "vtlab_ci95": float(r["ci95"]) if r is not None else math.nan,
                "vtlab_runs": int(r["n"]) if r is not None else 0,
                "vtlab_vs_paper": common.rel_diff(
                    float(r["goodput_mbps"]) if r is not None else math.nan, e.value
                ),
                "paper_gain": paper_gain,
                "vtlab_gain": float(r["gain"]) if r is not None and v == ADAPTIVE else math.nan,
                "vtlab_gain_ci95": (
                    float(r["gain_ci95"]) if r is not None and v == ADAPTIVE else math.nan
                ),
                "vtlab_rtt_mean_ms": float(r["rtt_mean_ms"]) if r is not None else math.nan,
                "vtlab_rtt_p95_ms": float(r["rtt_p95_ms"]) if r is not None else math.nan,
            }
        )
    return pd.DataFrame(rows)


def pct(x: float, digits: int = 1, sign: bool = True) -> str:
    if x is None or not math.isfinite(x):
        return "–"
    return f"{x * 100:+.{digits}f} %" if sign else f"{x * 100:.{digits}f} %"


def gain_ci(gain: float, ci: float) -> str:
    if not math.isfinite(gain):
        return "–"
    return pct(gain) + (f" ± {ci * 100:.1f}" if math.isfinite(ci) else "")


def table1_markdown(ctx: Context, frame: pd.DataFrame) -> str:
    body = [
        [
            r.direction,
            r.scheme,
            f"{r.paper_mbps:.3f}",
            common.fmt_ci(r.vtlab_mbps, r.vtlab_ci95, 2),
            common.fmt_rel(r.vtlab_vs_paper),
            pct(r.paper_gain),
            gain_ci(r.vtlab_gain, r.vtlab_gain_ci95),
            f"{r.vtlab_rtt_mean_ms:.0f} / {r.vtlab_rtt_p95_ms:.0f}",
        ]
        for r in frame.itertuples()
    ]
    return common.md_table(
        [
            "dir",
            "scheme",
            "paper (Mbit/s)",
            "vtlab (Mbit/s, ± 95 % CI)",
            "vtlab vs paper",
            "paper gain",
            "vtlab gain (± 95 % CI)",
            "vtlab RTT mean / p95 (ms)",
        ],
        body,
        align="llrrrrrr",
    )


def _summary(name: str) -> Any:
    return lambda ctx: ctx.s[name]


#: Tables written as they are in the summaries.
DATA_TABLES = (
    ("table1_rsrp", "table1"),
    ("lambda_rsrp", "lambda_rsrp"),
    ("lambda_speed", "lambda_speed"),
    ("lambda_pairs_rsrp", "lambda_rsrp_pairs"),
    ("lambda_pairs_speed", "lambda_speed_pairs"),
    ("ack_path", "ack_path"),
    ("sensitivity", "sensitivity"),
    ("decomposition", "decomposition"),
    ("rwnd", "rwnd"),
    ("buffer", "buffer"),
)


def rtt_table(ctx: Context) -> pd.DataFrame:
    """The RTT distribution per scheme and direction at every Table I RSRP."""
    t = ctx.s["table1"]
    cols = ["dir", "rsrp", "variant", "n", "goodput_mbps", *RTT_COLUMNS.values()]
    return t[cols].reset_index(drop=True)


def tables() -> list[TableSpec]:
    out = [TableSpec("table1", table1_frame, table1_markdown), TableSpec("rtt", rtt_table)]
    out += [TableSpec(stem, _summary(key)) for stem, key in DATA_TABLES]
    return out


#: A finding's verdict as a word ("n/a" when not evaluated).
verdict_words = functools.partial(pipeline.verdict_word, na="n/a")

#: The findings table (``findings.csv``).
findings_frame = functools.partial(pipeline.findings_frame, where="where", na="n/a")


# -- the paper's numbers beside vtlab's -------------------------------------------------


def _cmp(e: Any, ours: float, ci: float = math.nan, n: int = 0, **kw: Any) -> Comparison:
    return Comparison(e.section, e.label, e.value, ours, ci=ci, n=n, unit=e.unit, **kw)


def _gain_cmp(e: Any, r: pd.Series | None, note: str) -> Comparison:
    """A gain (stored as a fraction) compared in per cent."""
    ours = float(r["gain"]) * 100 if r is not None else math.nan
    ci = float(r["gain_ci95"]) * 100 if r is not None else math.nan
    return Comparison(
        e.section,
        e.label,
        e.value * 100,
        ours,
        ci=ci,
        n=int(r["n"]) if r is not None else 0,
        unit="%",
        note=note,
    )


def compare(ctx: Context) -> list[Comparison]:
    """Table I, the gains (Table I's, the text's, the abstract's and Sec. I's), the
    base RTT, the testbed's averages and Fig. 9's best λ, beside vtlab's values."""
    p, t1 = ctx.paper, ctx.s["table1"]
    static = f"static, RSRP {STATIC_RSRP:g} dBm"
    rows: list[Comparison] = []
    for e in p.group("table1/"):
        if "variant" in e.extra:
            r = row(t1, dir=e.extra["dir"], rsrp=STATIC_RSRP, variant=e.extra["variant"])
            rows.append(
                _cmp(
                    e,
                    float(r["goodput_mbps"]) if r is not None else math.nan,
                    ci=float(r["ci95"]) if r is not None else math.nan,
                    n=int(r["n"]) if r is not None else 0,
                    sd=float(r["sd"]) if r is not None else math.nan,
                    note=static,
                )
            )
    for key in ("table1/DL/ratio", "table1/UL/ratio"):
        e = p[key]
        r = row(t1, dir=e.extra["dir"], rsrp=STATIC_RSRP, variant=ADAPTIVE)
        ours = float(r["gain"]) + 1 if r is not None else math.nan
        rows.append(_cmp(e, ours, n=int(r["n"]) if r is not None else 0, note=static))
    for key in ("text/DL/gain", "text/UL/gain", "abstract/DL/gain_low", "abstract/DL/gain_high"):
        e = p[key]
        r = row(t1, dir=e.extra["dir"], rsrp=STATIC_RSRP, variant=ADAPTIVE)
        rows.append(_gain_cmp(e, r, static))
    e = p["intro/DL/gain"]
    rows.append(_gain_cmp(e, row(t1, dir="DL", rsrp=STATIC_RSRP, variant=ADAPTIVE), static))
    r = row(t1, dir="DL", rsrp=STATIC_RSRP, variant=CUBIC)
    rows.append(
        _cmp(
            p["rtt/base"],
            float(r["rtt_min_ms"]) if r is not None else math.nan,
            note="smallest RTT sample of a CUBIC DL run, mean over runs",
        )
    )
    for key in ("testbed/DL", "testbed/UL"):
        e = p[key]
        r = row(t1, dir=e.extra["dir"], rsrp=STATIC_RSRP, variant=CUBIC)
        rows.append(
            _cmp(
                e,
                float(r["goodput_mbps"]) if r is not None else math.nan,
                ci=float(r["ci95"]) if r is not None else math.nan,
                n=int(r["n"]) if r is not None else 0,
                note=f"vtlab: CUBIC, {static}",
            )
        )
    rows += _fig9_comparisons(ctx)
    return rows


def _fig9_comparisons(ctx: Context) -> list[Comparison]:
    out = []
    for key in ("fig9/good/best", "fig9/poor/best"):
        e = ctx.paper[key]
        rsrp = ctx.paper.value(e.extra["rsrp_id"])
        try:
            best, rows = best_lambda(ctx.s["lambda_rsrp"], "window", rsrp=rsrp)
        except KeyError:
            best, rows = math.nan, pd.DataFrame()
        out.append(
            _cmp(
                e,
                best,
                n=int(rows["n"].iloc[0]) if len(rows) else 0,
                note="highest mean goodput, ARWND growth W ← W + λ·W",
            )
        )
    return out


__all__ = [
    "DATA_TABLES",
    "GOOD_RSRP",
    "POOR_RSRP",
    "CUBIC_6M",
    "best_lambda",
    "compare",
    "findings_frame",
    "gains",
    "metrics",
    "need",
    "row",
    "summarize_all",
    "tables",
]
