"""Martignon: the paper's claims, each a small predicate on the summaries.

The pipeline evaluates every :class:`~vtlab.experiments.pipeline.Claim`; the report
and ``findings.csv`` give each claim with vtlab's evidence and the verdict, so a
claim that does not hold says so. The paper's numbers in the claims (the 70 %
accuracy floor, the short transfers' times, Jain's indices) come from ``paper.toml``.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from vtlab.experiments.martignon.analysis import _row
from vtlab.experiments.martignon.plan import IDEAL, INITIAL_CWND, LP, NR, WNR, WO
from vtlab.experiments.pipeline import Claim, Context

#: "Approaches an ideal estimator" / "approaches the Ideal-LP bound": at least this.
NEAR_IDEAL = 0.9
#: LP's lowest share of Ideal-LP that still counts as "partly" approaching it.
PARTLY_IDEAL = 0.75
#: "Practically the same goodput" near PER 0: LP/NewReno within this.
SAME_GOODPUT = 0.05
#: "Very close to the fair share": within this (partly: within PARTLY_FAIR).
CLOSE_TO_FAIR, PARTLY_FAIR = 0.10, 0.25
#: "As fast as": within this share of NewReno's time plus an absolute slack (s).
SAME_TIME_SHARE, SAME_TIME_SLACK_S = 0.05, 0.02
#: "Jain's index ≈": within this.
SAME_JAIN = 0.01


def pct(x: float, digits: int = 0) -> str:
    return "–" if not math.isfinite(x) else f"{x * 100:.{digits}f} %"


def per_label(p: float) -> str:
    return f"{p * 100:g} %"


def accuracy_rows(s: dict[str, Any], model: str, profile: str) -> pd.DataFrame:
    a = s["accuracy"]
    return a[
        (a["losses"] == model)
        & (a["variant"] == LP)
        & (a["profile"] == profile)
        & (a["c_sn_mbps"] == 10)
    ].sort_values("x")


def _profile(ctx: Context) -> str:
    return str(ctx.s["accuracy"]["profile"].iloc[0])


# -- Fig. 2 ----------------------------------------------------------------------------


def _accuracy_floor(ctx: Context) -> tuple[str, bool]:
    floor = ctx.paper.value("accuracy_floor")
    acc = accuracy_rows(ctx.s, "independent", _profile(ctx))
    worst = acc.loc[acc["mean"].idxmin()]
    return (
        f"{pct(acc['mean'].min())} (at PER {per_label(worst['x'])}) to "
        f"{pct(acc['mean'].max())}; {int((acc['mean'] >= floor).sum())} of "
        f"{len(acc)} PER levels ≥ {floor * 100:.0f} %",
        bool(acc["mean"].min() >= floor),
    )


def _accuracy_correlated(ctx: Context) -> tuple[str, bool | str]:
    floor = ctx.paper.value("accuracy_floor")
    acc = accuracy_rows(ctx.s, "correlated", _profile(ctx))
    acc = acc[acc["x"] > 0]
    lo = float(acc["mean"].min())
    if not math.isfinite(lo):
        raise ValueError("no correlated-loss accuracy")
    partly = f"partly (> {floor * 100:.0f} %)"
    return (
        f"{pct(lo)} to {pct(acc['mean'].max())} for Bad-state PER > 0",
        True if lo >= NEAR_IDEAL else (partly if lo >= floor else False),
    )


# -- Figs. 3-5 -------------------------------------------------------------------------


def _lp_above_newreno(ctx: Context) -> tuple[str, bool]:
    pair = ctx.s["pair_per"][NR]
    better = pair[pair["diff"] > 0]
    worse = pair[pair["diff"] + pair["diff_ci95"].fillna(0) < 0]
    return (
        f"LP above NewReno at {len(better)} of {len(pair)} (C_SN, PER) points, "
        f"significantly below at {len(worse)}; LP/NewReno ratio "
        f"{pair['ratio'].min():.2f}–{pair['ratio'].max():.2f}",
        len(worse) == 0 and len(better) >= len(pair) - 1,
    )


def _same_near_zero(ctx: Context) -> tuple[str, bool]:
    pair, low = ctx.s["pair_per"][NR], min(ctx.plan.pers)
    rows = pair[(pair["per"] - low).abs() < 1e-12]
    return (
        f"LP/NewReno at PER {per_label(low)}: "
        + ", ".join(f"{r.ratio:.3f} ({r.c_sn_mbps} Mbit/s)" for r in rows.itertuples()),
        bool((rows["ratio"].sub(1).abs() <= SAME_GOODPUT).all()),
    )


def _westwood_highest(ctx: Context) -> tuple[str, bool | str]:
    g, hi_per = ctx.s["goodput_per"], max(ctx.plan.pers)
    piv = g.pivot_table(index=["c_sn_mbps", "per"], columns="variant", values="goodput_mbps")
    top = piv[WNR] >= piv[[NR, LP]].max(axis=1)
    hi = piv.xs(hi_per, level="per")
    return (
        f"Westwood-NR ≥ NewReno and LP at {int(top.sum())} of {len(piv)} points; at "
        f"PER {per_label(hi_per)}: "
        + ", ".join(f"WNR/LP {r[WNR] / r[LP]:.2f} ({i} Mbit/s)" for i, r in hi.iterrows()),
        True if top.all() else ("mostly" if top.mean() >= 0.75 else False),
    )


def _near_ideal(ctx: Context) -> tuple[str, bool | str]:
    mins = ctx.s["pair_per"][IDEAL].groupby("c_sn_mbps")["ratio"].min()
    partly = f"partly (≥ {PARTLY_IDEAL:g})"
    return (
        "lowest LP/Ideal-LP ratio over PER: "
        + ", ".join(f"{v:.2f} ({k} Mbit/s)" for k, v in mins.items()),
        True if mins.min() >= NEAR_IDEAL else (partly if mins.min() >= PARTLY_IDEAL else False),
    )


def _bad_pairs(ctx: Context, other: str) -> pd.DataFrame:
    p = ctx.s["pair_bad"][other]
    return p[(p["bad_per"] > 0) & p["c_sn_mbps"].isin(ctx.plan.rates_mbps[:2])]


def _correlated(ctx: Context) -> tuple[str, bool | str]:
    pb, ib = _bad_pairs(ctx, NR), _bad_pairs(ctx, IDEAL)
    ok = bool((pb["diff"] > 0).all() and ib["ratio"].min() >= NEAR_IDEAL)
    return (
        f"LP above NewReno at {int((pb['diff'] > 0).sum())} of {len(pb)} points; LP/Ideal "
        f"{ib['ratio'].min():.2f}–{ib['ratio'].max():.2f}",
        ok or ("partly" if (pb["diff"] > 0).mean() >= 0.75 else False),
    )


def _gain_by_rate(ctx: Context) -> tuple[str, bool]:
    gains = _bad_pairs(ctx, NR).groupby("c_sn_mbps")["ratio"].mean()
    a, b = ctx.plan.rates_mbps[:2]
    ga, gb = (float(gains.get(r, math.nan)) for r in (a, b))
    if len(gains) < 2:
        raise ValueError("one link rate only")
    return (
        f"mean LP/NewReno over Bad PER > 0: {ga:.2f} ({a} Mbit/s), {gb:.2f} ({b} Mbit/s)",
        bool(gb > ga),
    )


# -- Fig. 6, short transfers, Fig. 7, fairness ------------------------------------------


def _rtt_gain(ctx: Context) -> tuple[str, bool]:
    parts, grows = [], []
    for rate, rows in ctx.s["pair_rtt"].groupby("link_mbps"):
        rows = rows.sort_values("rtt_ms")
        first, last = rows.iloc[0], rows.iloc[-1]
        parts.append(
            f"{rate} Mbit/s: LP/NewReno {first['ratio']:.2f} at {first['rtt_ms']:g} ms → "
            f"{last['ratio']:.2f} at {last['rtt_ms']:g} ms"
        )
        grows.append(
            last["ratio"] > first["ratio"]
            and (rows["diff"] + rows["diff_ci95"].fillna(0) >= 0).all()
        )
    return "; ".join(parts), all(grows)


def _short_same(ctx: Context) -> tuple[str, bool]:
    lp, nr = (_row(ctx.s["short"], variant=v, iw=INITIAL_CWND) for v in (LP, NR))
    if lp is None or nr is None:
        raise KeyError("short transfers")
    d = float(lp["completion_mean_s"] - nr["completion_mean_s"])
    slack = SAME_TIME_SHARE * float(nr["completion_mean_s"]) + SAME_TIME_SLACK_S
    return (
        f"{lp['completion_mean_s']:.3f} vs {nr['completion_mean_s']:.3f} s "
        f"(difference {d:+.3f} s, IW {INITIAL_CWND})",
        bool(abs(d) <= slack),
    )


def mixed(rows: pd.DataFrame, plan: Any) -> pd.DataFrame:
    return rows[(rows["newreno_flows"] > 0) & (rows["newreno_flows"] < plan.friend_flows)]


def _lp_fair(ctx: Context) -> tuple[str, bool | str]:
    f = mixed(ctx.s["friendliness"][ctx.s["friendliness"]["figure"] == "7a"], ctx.plan)
    dev = (f["goodput_mbps"] / f["fair_share_mbps"] - 1).abs()
    mine = f[f["class"] == LP]
    ratio = (mine["goodput_mbps"] / mine["fair_share_mbps"]).to_numpy()
    partly = f"partly (≤ {PARTLY_FAIR * 100:.0f} %)"
    return (
        f"largest deviation from the fair share in the mixed cases {pct(dev.max(), 1)}; "
        f"LP/fair share {ratio.min():.2f}–{ratio.max():.2f}",
        bool(dev.max() <= CLOSE_TO_FAIR) or (partly if dev.max() <= PARTLY_FAIR else False),
    )


def _above_fair(
    ctx: Context, frame: pd.DataFrame, cls: str, name: str, short: str
) -> tuple[str, bool]:
    mine = mixed(frame[frame["class"] == cls], ctx.plan)
    ratio = (mine["goodput_mbps"] / mine["fair_share_mbps"]).to_numpy()
    above = int((ratio > 1).sum())
    return (
        f"{name} above the fair share in {above} of {len(mine)} mixed cases; "
        f"{short}/fair share "
        f"{ratio.min():.2f}–{ratio.max():.2f}",
        above >= len(mine) - 1 and len(mine) > 0,
    )


def _wnr_aggressive(ctx: Context) -> tuple[str, bool]:
    f = ctx.s["friendliness"]
    return _above_fair(ctx, f[f["figure"] == "7b"], WNR, "Westwood-NR", "Westwood-NR")


def _original_aggressive(ctx: Context) -> tuple[str, bool]:
    return _above_fair(ctx, ctx.s["westwood_friend"], WO, "original Westwood", "Westwood")


def _jain_same(ctx: Context) -> tuple[str, bool]:
    jl, jn = (_row(ctx.s["jain"], variant=v) for v in (LP, NR))
    if jl is None or jn is None:
        raise KeyError("jain")
    return (
        f"{jl['jain_mean']:.4f} vs {jn['jain_mean']:.4f}",
        bool(abs(jl["jain_mean"] - jn["jain_mean"]) <= SAME_JAIN),
    )


def claims(ctx: Context) -> list[Claim]:
    """Every claim the reproduction checks, in the paper's order."""
    p, plan = ctx.paper, ctx.plan
    floor = p.value("accuracy_floor") * 100
    pers = f"PER {min(plan.pers) * 100:g}–{per_label(max(plan.pers))}"
    a, b = plan.rates_mbps[:2]
    return [
        Claim(
            "Fig. 2a",
            f"Vegas predictor accuracy > {floor:.0f} % over {pers} (independent losses)",
            _accuracy_floor,
        ),
        Claim(
            "Fig. 2b",
            "accuracy high, approaching an ideal estimator, over Bad-state PER (correlated)",
            _accuracy_correlated,
        ),
        Claim(
            "Figs. 3–4",
            "NewReno-LP goodput > NewReno at every PER and link speed",
            _lp_above_newreno,
        ),
        Claim("Figs. 3–4", "at PER close to zero NewReno-LP ≈ NewReno", _same_near_zero),
        Claim(
            "Figs. 3–4",
            "Westwood-NR achieves the highest goodput of the real senders, especially at high PER",
            _westwood_highest,
        ),
        Claim(
            "Figs. 3–4",
            "NewReno-LP approaches the Ideal-LP upper bound in every scenario",
            _near_ideal,
        ),
        Claim(
            "Fig. 5",
            "correlated losses: NewReno-LP > NewReno, practically overlapping Ideal-LP",
            _correlated,
        ),
        Claim(
            "Fig. 5",
            f"the gain of LP over NewReno is larger at {b} Mbit/s than at {a} Mbit/s",
            _gain_by_rate,
        ),
        Claim(
            "Fig. 6",
            f"high goodput gain of LP over NewReno at {per_label(plan.rtt_loss)} loss, "
            "growing with the RTT",
            _rtt_gain,
        ),
        Claim(
            "§5 short-lived",
            "short transfers: NewReno-LP completes as fast as NewReno "
            f"({p.value('short_lp'):.2f} vs {p.value('short_nr'):.2f} s)",
            _short_same,
        ),
        Claim(
            "Fig. 7a",
            "NewReno-LP and NewReno both get very close to the fair share in every mix",
            _lp_fair,
        ),
        Claim(
            "Fig. 7b",
            "Westwood-NR gets more than the fair share practically in every mix",
            _wnr_aggressive,
        ),
        Claim(
            "Fig. 7b (sensitivity)",
            "the same claim with the original Westwood (UCLA ns-2 WestwoodNR filter)",
            _original_aggressive,
        ),
        Claim(
            "§5 fairness",
            f"Jain's index of {plan.friend_flows} LP flows ≈ that of {plan.friend_flows} "
            f"NewReno flows ({p.value('jain_lp'):.4f} vs {p.value('jain_nr'):.4f})",
            _jain_same,
        ),
    ]
