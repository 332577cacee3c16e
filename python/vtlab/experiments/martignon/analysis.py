"""Martignon: analysis — accuracy with per-class bounds, goodput, paired differences
(common random numbers), short transfers, friendliness and Jain's index; the tables;
the paper's numbers beside vtlab's."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from vtlab.api import Result
from vtlab.experiments import common, pipeline
from vtlab.experiments.common import Comparison
from vtlab.experiments.martignon.plan import (
    BUFFER,
    IDEAL,
    INITIAL_CWND,
    LABEL_OF_CC,
    LP,
    MSS,
    NR,
    VP_ALPHA,
    VP_BETA,
    WNR,
    Plan,
)
from vtlab.experiments.pipeline import Context, TableSpec
from vtlab.stats import ci95_halfwidth, jain_index

MBPS = 1e-6


def with_accuracy(flows: pd.DataFrame) -> pd.DataFrame:
    """Flow rows with ``accuracy`` = correct_predictions / loss_events (the paper's
    definition; NaN for a run without loss events)."""
    f = flows.copy()
    events = f["loss_events"].astype(float)
    f["accuracy"] = f["correct_predictions"].astype(float) / events.where(events > 0)
    return f


def class_bounds(frame: pd.DataFrame) -> dict[str, float]:
    """Pooled counts and per-class accuracy bounds of a classifying sender.

    The flow row counts correct verdicts overall, not per class, so the correct link
    verdicts c_L are only bounded: c_L ≤ min(true link, predicted link, correct) and
    c_L ≥ correct − min(true congestion, predicted congestion) (and likewise c_C).
    """
    ev = float(frame["loss_events"].sum())
    tl = float(frame["true_link_losses"].sum())
    tc = float(frame["true_congestion_losses"].sum())
    pl = float(frame["predicted_link_losses"].sum())
    pc = float(frame["predicted_congestion_losses"].sum())
    ok = float(frame["correct_predictions"].sum())

    def ratio(a: float, b: float) -> float:
        return a / b if b > 0 else math.nan

    link_hi = min(tl, pl, ok)
    link_lo = max(0.0, ok - min(tc, pc))
    cong_hi = min(tc, pc, ok)
    cong_lo = max(0.0, ok - min(tl, pl))
    return {
        "loss_events": ev,
        "true_link": tl,
        "true_congestion": tc,
        "predicted_link": pl,
        "predicted_congestion": pc,
        "correct": ok,
        "pooled_accuracy": ratio(ok, ev),
        "known_cause_accuracy": ratio(ok, tl + tc),
        "link_share": ratio(tl, ev),
        "unknown_share": ratio(ev - tl - tc, ev),
        "link_accuracy_lo": ratio(link_lo, tl),
        "link_accuracy_hi": ratio(link_hi, tl),
        "congestion_accuracy_lo": ratio(cong_lo, tc),
        "congestion_accuracy_hi": ratio(cong_hi, tc),
    }


def accuracy_table(flows: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Accuracy mean ± CI over runs per group, with the pooled counts and bounds."""
    f = with_accuracy(flows)
    summary = common.summarize_runs(f, by, "accuracy")
    pooled = [
        {**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)), **class_bounds(g)}
        for key, g in f.groupby(list(by), sort=False)
    ]
    return summary.merge(pd.DataFrame(pooled), on=list(by), how="left")


def goodput_table(flows: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    out = common.summarize_runs(flows, by, "goodput_bps", scale=MBPS)
    return out.rename(columns={"mean": "goodput_mbps"})


def paired(
    flows: pd.DataFrame,
    by: Sequence[str],
    a: str,
    b: str,
    metric: str = "goodput_bps",
    scale: float = MBPS,
) -> pd.DataFrame:
    """Per-seed difference of ``metric`` between variants a and b (common random
    numbers), mean ± 95 % CI per group of ``by``; also the ratio of the means."""
    keys = [*by, "seed"]
    per = flows.groupby([*keys, "variant"], sort=False)[metric].mean().unstack("variant")
    diff = (per[a] - per[b]) * scale
    rows = []
    for key, d in diff.groupby(level=list(range(len(by))), sort=False):
        vals = d.dropna().to_numpy(dtype=float)
        n = vals.size
        sd = float(vals.std(ddof=1)) if n >= 2 else math.nan
        ka = key if isinstance(key, tuple) else (key,)
        sub = per.xs(ka, level=list(range(len(by))), drop_level=True) if by else per
        rows.append(
            {
                **dict(zip(by, ka, strict=True)),
                "n": n,
                "diff": float(vals.mean()),
                "diff_ci95": ci95_halfwidth(sd, n),
                "ratio": float(sub[a].mean() / sub[b].mean()) if sub[b].mean() else math.nan,
            }
        )
    return pd.DataFrame(rows)


def summarize_all(data: Mapping[str, Result], plan: Plan) -> dict[str, Any]:
    """Mean ± 95 % CI over runs of everything the figures and the report show."""
    s: dict[str, Any] = {}
    per, bad = data["per"].flows, data["bad"].flows
    classifiers = [LP, IDEAL]
    acc = []
    for frame, model, x in ((per, "independent", "per"), (bad, "correlated", "bad_per")):
        f = frame[frame["variant"].isin(classifiers)]
        t = accuracy_table(f, ["variant", "c_sn_mbps", x]).rename(columns={x: "x"})
        t.insert(0, "losses", model)
        t.insert(1, "profile", f["profile"].iloc[0])
        acc.append(t)
    for name, model, x in (("alt_per", "independent", "per"), ("alt_bad", "correlated", "bad_per")):
        f = data[name].flows
        f = f[f["variant"] == LP]
        t = accuracy_table(f, ["variant", x]).rename(columns={x: "x"})
        t.insert(0, "losses", model)
        t.insert(1, "profile", f["profile"].iloc[0])
        t.insert(3, "c_sn_mbps", 10)
        acc.append(t)
    s["accuracy"] = pd.concat(acc, ignore_index=True)
    s["goodput_per"] = goodput_table(per, ["variant", "c_sn_mbps", "per"])
    s["goodput_bad"] = goodput_table(bad, ["variant", "c_sn_mbps", "bad_per"])
    s["pair_per"] = {
        other: paired(per, ["c_sn_mbps", "per"], LP, other) for other in (NR, IDEAL, WNR)
    }
    s["pair_bad"] = {
        other: paired(bad, ["c_sn_mbps", "bad_per"], LP, other) for other in (NR, IDEAL)
    }
    alt = data["alt_per"].flows
    profiles = pd.concat(
        [
            goodput_table(per[per["c_sn_mbps"] == 10], ["variant", "profile", "per"]),
            goodput_table(alt, ["variant", "profile", "per"]),
        ],
        ignore_index=True,
    )
    extra = []
    for frame in (per[per["c_sn_mbps"] == 10], alt):
        extra.append(
            frame.groupby(["variant", "profile", "per"], sort=False)[
                ["rto_count", "drops_queue", "loss_events"]
            ]
            .mean()
            .reset_index()
        )
    s["profiles"] = profiles.merge(pd.concat(extra), on=["variant", "profile", "per"])
    rtt = data["rtt"].flows
    s["goodput_rtt"] = goodput_table(rtt, ["variant", "link_mbps", "rtt_ms"])
    s["pair_rtt"] = paired(rtt, ["link_mbps", "rtt_ms"], LP, NR)
    s["short"], s["short_flows"] = short_summary(data["short"].flows, plan)
    s["friendliness"], s["jain"] = friendliness_summary(data["fig7a"].flows, data["fig7b"].flows)
    s["westwood"], s["westwood_friend"] = westwood_summary(
        per, data["westwood"].flows, data["fig7c"].flows
    )
    s["vp"] = vp_summary(data["vp"].traces, data["vp"].flows)
    s["window"] = window_summary(data["window"].flows, per)
    b = data["buffers"].flows
    keys = ["variant", "stack", "buffer_bytes", "per"]
    s["buffers"] = goodput_table(b, keys).merge(
        b.groupby(keys, sort=False)[["rto_count", "drops_queue"]].mean().reset_index(), on=keys
    )
    return s


def window_summary(window: pd.DataFrame, per: pd.DataFrame) -> pd.DataFrame:
    """NewReno-LP's accuracy and goodput with ns-2's default ``window_`` beside the
    study's window (Fig. 2a's runs at 10 Mbit/s, same PERs and seeds)."""
    study = per[
        (per["variant"] == LP) & (per["c_sn_mbps"] == 10) & per["per"].isin(window["per"])
    ].assign(window_bytes=BUFFER)
    both = pd.concat([window, study], ignore_index=True)
    keys = ["window_bytes", "per"]
    acc = accuracy_table(both, keys)[[*keys, "mean", "ci95", "loss_events"]]
    acc = acc.rename(columns={"mean": "accuracy", "ci95": "accuracy_ci95"})
    return goodput_table(both, keys)[[*keys, "n", "goodput_mbps", "ci95"]].merge(acc, on=keys)


def westwood_summary(
    per: pd.DataFrame, original: pd.DataFrame, friend: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Goodput of the original Westwood beside the four senders, and its Fig. 7."""
    both = pd.concat([per, original], ignore_index=True)
    g = goodput_table(both, ["variant", "c_sn_mbps", "per"])
    f = _replicas_as_runs(friend)
    f["class"] = f["cc"].map(LABEL_OF_CC)
    t = goodput_table(f, ["newreno_flows", "class"])
    total = (
        f.groupby(["newreno_flows", "seed"])["goodput_bps"].sum().groupby("newreno_flows").mean()
        * MBPS
    )
    flows_per_run = int(f.groupby(["newreno_flows", "seed"]).size().max())
    t["fair_share_mbps"] = t["newreno_flows"].map(total) / flows_per_run
    return g, t


def vp_summary(traces: pd.DataFrame | None, flows: pd.DataFrame) -> pd.DataFrame:
    """Share of time the Vegas predictor's V_p lies above β, below α or between.

    V_p = cwnd·(1 − RTT_min/RTT) is recomputed from the traced cwnd and SRTT, with
    RTT_min the running minimum of the traced SRTT (the ns3 profile's predictor
    input, sampled every trace interval; α = :data:`VP_ALPHA`, β = :data:`VP_BETA`).
    """
    cols = ["per", "samples", "vp_mean", "share_above_beta", "share_below_alpha", "share_between"]
    if traces is None or traces.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for per, t in traces.groupby("per", sort=True):
        t = t.sort_values("time_s")
        t = t[t["srtt_s"].notna() & (t["srtt_s"] > 0)]
        rtt_min = t["srtt_s"].cummin()
        vp = t["cwnd_bytes"] / MSS * (1 - rtt_min / t["srtt_s"])
        rows.append(
            {
                "per": float(per),
                "samples": int(vp.size),
                "vp_mean": float(vp.mean()),
                "share_above_beta": float((vp > VP_BETA).mean()),
                "share_below_alpha": float((vp < VP_ALPHA).mean()),
                "share_between": float(((vp >= VP_ALPHA) & (vp <= VP_BETA)).mean()),
            }
        )
    return pd.DataFrame(rows, columns=cols)


def short_summary(flows: pd.DataFrame, plan: Plan) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Mean completion time per run, then mean ± CI over runs; pooled percentiles."""
    f = flows.copy()
    out = common.summarize_runs(f, ["variant", "iw"], "completion_s")
    rows = []
    for (variant, iw), g in f.groupby(["variant", "iw"], sort=False):
        c = g["completion_s"].astype(float)
        rows.append(
            {
                "variant": variant,
                "iw": iw,
                "transfers": int(len(g)),
                "completed": int(g["completed"].sum()),
                "median_s": float(c.median()),
                "p90_s": float(c.quantile(0.9)),
                "max_s": float(c.max()),
                "longer_than_stagger": int((c > plan.short_stagger_s).sum()),
                "with_rto": int((g["rto_count"] > 0).sum()),
            }
        )
    out = out.rename(columns={"mean": "completion_mean_s"}).merge(
        pd.DataFrame(rows), on=["variant", "iw"]
    )
    return out, f[["variant", "iw", "seed", "flow", "completion_s"]]


def _replicas_as_runs(flows: pd.DataFrame) -> pd.DataFrame:
    """The friendliness grids run one seed per replica: the replica is the run."""
    f = flows.copy()
    f["seed"] = f["replica"].astype(int)
    return f


def friendliness_summary(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-class mean goodput per mix (Fig. 7) and Jain's index of the pure mixes."""
    frames = []
    a, b = _replicas_as_runs(a), _replicas_as_runs(b)
    for fig, flows in (("7a", a), ("7b", b)):
        f = flows.copy()
        f["class"] = f["cc"].map(LABEL_OF_CC)
        t = goodput_table(f, ["newreno_flows", "class"])
        total = (
            f.groupby(["newreno_flows", "seed"])["goodput_bps"]
            .sum()
            .groupby("newreno_flows")
            .mean()
            * MBPS
        )
        flows_per_run = int(f.groupby(["newreno_flows", "seed"]).size().max())
        t["fair_share_mbps"] = t["newreno_flows"].map(total) / flows_per_run
        t.insert(0, "figure", fig)
        frames.append(t)
    friend = pd.concat(frames, ignore_index=True)
    jrows = []
    for label, flows, m in ((LP, a, 0), (NR, a, 5), (WNR, b, 0)):
        g = flows[flows["newreno_flows"] == m]
        per_run = g.groupby("seed")["goodput_bps"].apply(lambda x: jain_index(x.to_numpy()))
        vals = per_run.to_numpy(dtype=float)
        n = vals.size
        sd = float(vals.std(ddof=1)) if n >= 2 else math.nan
        jrows.append(
            {
                "variant": label,
                "flows": int(g.groupby("seed").size().iloc[0]),
                "n": n,
                "jain_mean": float(vals.mean()),
                "sd": sd,
                "ci95": ci95_halfwidth(sd, n),
                "jain_min": float(vals.min()),
            }
        )
    return friend, pd.DataFrame(jrows)


def _first(frame: pd.DataFrame, labels: Mapping[str, Any]) -> int | None:
    """The position of the first row of ``frame`` with every label (a float within
    1e-12), or None (:func:`common.label_mask`; the report and claims ask about 300
    times)."""
    hits = np.flatnonzero(common.label_mask(frame, labels, lambda col, v: np.abs(col - v) < 1e-12))
    return int(hits[0]) if len(hits) else None


def _one(frame: pd.DataFrame, col: str = "goodput_mbps", **labels: Any) -> float:
    i = _first(frame, labels)
    return math.nan if i is None else float(frame[col].iloc[i])


def _row(frame: pd.DataFrame, **labels: Any) -> pd.Series | None:
    i = _first(frame, labels)
    return None if i is None else frame.iloc[i]


# -- tables ----------------------------------------------------------------------------

#: Tables computed from the runs, written as they are in the summaries.
DATA_TABLES = (
    "accuracy",
    "goodput_per",
    "goodput_bad",
    "goodput_rtt",
    "short",
    "friendliness",
    "jain",
    "profiles",
    "westwood",
    "vp",
    "buffers",
    "window",
)


def _summary(name: str) -> Any:
    return lambda ctx: ctx.s[name]


def tables() -> list[TableSpec]:
    return [TableSpec(name, _summary(name)) for name in DATA_TABLES]


#: A finding's verdict as a word ("not evaluated" when not evaluated).
verdict_words = functools.partial(pipeline.verdict_word, na="not evaluated")

#: The findings table (``findings.csv``).
findings_frame = functools.partial(pipeline.findings_frame, where="figure", na="not evaluated")


# -- comparison with the paper ---------------------------------------------------------


def _comparison(entry: Any, r: pd.Series | None, column: str, **kw: Any) -> Comparison:
    return Comparison(
        entry.section,
        entry.label,
        entry.value,
        float(r[column]) if r is not None else math.nan,
        ci=float(r["ci95"]) if r is not None else math.nan,
        sd=float(r["sd"]) if r is not None else math.nan,
        n=int(r["n"]) if r is not None else 0,
        unit=entry.unit,
        **kw,
    )


def compare(ctx: Context) -> list[Comparison]:
    """The paper's numbers beside vtlab's: the short transfers' completion times (at
    the plan's initial window) and Jain's index of 5 identical flows."""
    rows: list[Comparison] = []
    for key in ("short_lp", "short_nr"):
        e = ctx.paper[key]
        r = _row(ctx.s["short"], variant=e.extra["variant"], iw=INITIAL_CWND)
        note = f"IW {INITIAL_CWND}, mean of per-run means"
        rows.append(_comparison(e, r, "completion_mean_s", note=note))
    for key in ("jain_lp", "jain_nr"):
        e = ctx.paper[key]
        rows.append(_comparison(e, _row(ctx.s["jain"], variant=e.extra["variant"]), "jain_mean"))
    return rows
