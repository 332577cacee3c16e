"""Martignon: the figures, each drawn from the summaries (the pipeline saves them as
PNG and SVG)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vtlab.experiments import common
from vtlab.experiments.martignon.plan import (
    IDEAL,
    LP,
    NR,
    PAIR,
    STYLE,
    VARIANTS,
    WNR,
    WO,
    Plan,
    other_profile,
)
from vtlab.experiments.pipeline import Context, FigureSpec, PaperValues


def _fig_westwood(s: Mapping[str, Any]) -> Any:
    fig, axes = common.figure(1, 2, width=9.0, height=3.6)
    g = s["westwood"].rename(columns={"goodput_mbps": "mean"})
    rows = g[g["c_sn_mbps"] == 10]
    order = [NR, LP, WNR, WO]
    common.plot_lines(
        axes[0], rows, x="per", hue="variant", order=order, style=STYLE, x_scale=100.0
    )
    _per_axis(axes[0], "Goodput (Mbit/s)")
    axes[0].set_title("(a) goodput vs PER, C_SN = 10 Mbit/s")
    axes[0].legend(loc="lower left")
    f = s["westwood_friend"].rename(columns={"goodput_mbps": "mean"})
    common.plot_lines(axes[1], f, x="newreno_flows", hue="class", order=[WO, NR], style=STYLE)
    fair = f.drop_duplicates("newreno_flows").sort_values("newreno_flows")
    axes[1].plot(
        fair["newreno_flows"],
        fair["fair_share_mbps"],
        color="black",
        linewidth=1.0,
        label="Fair share",
    )
    axes[1].set_ylim(0, float((f["mean"] + f["ci95"].fillna(0)).max()) * 1.15)
    axes[1].set_xlabel("Number of TCP NewReno connections")
    axes[1].set_ylabel("Average goodput (Mbit/s)")
    axes[1].set_title("(b) original Westwood and NewReno (as Fig. 7b)")
    axes[1].legend(loc="upper right")
    fig.suptitle("Which Westwood? Westwood+ (westwood-nr) vs the original (UCLA ns-2 filter)")
    return fig


def _per_axis(ax: Any, ylabel: str) -> None:
    ax.set_xscale("log")
    ax.set_xlabel("Packet Error Rate (%)")
    ax.set_ylabel(ylabel)


def _fig2(s: Mapping[str, Any], profile: str, floor: float) -> Any:
    fig, axes = common.figure(1, 2, width=9.0, height=4.0)
    acc = s["accuracy"]
    alt = other_profile(profile)
    labels = {
        (LP, profile): f"NewReno-LP (Vegas predictor, {profile} profile)",
        (LP, alt): f"NewReno-LP ({alt} profile)",
        (IDEAL, profile): "NewReno-Ideal-LP (oracle)",
    }
    style = {
        labels[(LP, profile)]: STYLE[LP],
        labels[(LP, alt)]: {**STYLE["NewReno-LP (other profile)"], "linestyle": "--"},
        labels[(IDEAL, profile)]: {**STYLE[IDEAL], "linestyle": ":"},
    }
    for ax, model, scale, title, xlabel in (
        (axes[0], "independent", 100.0, "(a) independent packet losses", None),
        (
            axes[1],
            "correlated",
            100.0,
            "(b) correlated packet losses",
            "Packet Error Rate in the Bad state (%)",
        ),
    ):
        rows = acc[(acc["losses"] == model) & (acc["c_sn_mbps"] == 10)].copy()
        rows["label"] = [
            labels.get((v, p), "") for v, p in zip(rows["variant"], rows["profile"], strict=True)
        ]
        rows = rows[rows["label"] != ""]
        common.plot_lines(
            ax, rows, x="x", hue="label", order=list(style), style=style, x_scale=scale
        )
        ax.set_ylim(0, 1.05)
        ax.axhline(floor, color="grey", linewidth=0.8, linestyle="-.")
        if model == "independent":
            _per_axis(ax, "Accuracy")
        else:
            ax.set_xlabel(xlabel)
            ax.set_ylabel("Accuracy")
        ax.set_title(title)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    fig.suptitle("Fig. 2: accuracy of loss classification (C_SN = C_ND = 10 Mbit/s, RTT 100 ms)")
    return fig


def _fig_goodput(s: Mapping[str, Any], stem: str, rates: Sequence[int]) -> Any:
    n = len(rates)
    if n == 0:
        return None
    fig, axes = common.figure(1, n, width=4.6 * n, height=3.6)
    axes = np.atleast_1d(axes)
    g = s["goodput_per"].rename(columns={"goodput_mbps": "mean"})
    for i, (ax, rate) in enumerate(zip(axes, rates, strict=True)):
        rows = g[g["c_sn_mbps"] == rate]
        common.plot_lines(
            ax, rows, x="per", hue="variant", order=list(VARIANTS), style=STYLE, x_scale=100.0
        )
        _per_axis(ax, "Goodput (Mbit/s)")
        tag = f"({'ab'[i]}) " if n > 1 else ""
        ax.set_title(f"{tag}C_SN = {rate} Mbit/s, C_ND = 10 Mbit/s")
        ax.legend(loc="lower left")
    number = "3" if stem == "fig3" else "4"
    fig.suptitle(f"Fig. {number}: goodput vs independent PER, RTT 100 ms")
    return fig


def _fig5(s: Mapping[str, Any], plan: Plan) -> Any:
    rates = plan.rates_mbps[:2]
    fig, axes = common.figure(1, len(rates), width=9.0, height=3.6)
    g = s["goodput_bad"].rename(columns={"goodput_mbps": "mean"})
    for i, (ax, rate) in enumerate(zip(np.atleast_1d(axes), rates, strict=True)):
        rows = g[g["c_sn_mbps"] == rate]
        common.plot_lines(
            ax, rows, x="bad_per", hue="variant", order=list(VARIANTS), style=STYLE, x_scale=100.0
        )
        ax.set_xlabel("Packet Error Rate in the Bad state (%)")
        ax.set_ylabel("Goodput (Mbit/s)")
        ax.set_title(f"({'ab'[i]}) C_SN = {rate} Mbit/s, C_ND = 10 Mbit/s")
        ax.legend(loc="lower left")
    fig.suptitle("Fig. 5: goodput vs Bad-state PER (Good 1 s, Bad 0.05 s), RTT 100 ms")
    return fig


def _fig6(s: Mapping[str, Any], plan: Plan) -> Any:
    rates = plan.rtt_rates_mbps
    fig, axes = common.figure(1, len(rates), width=9.0, height=3.6)
    g = s["goodput_rtt"].rename(columns={"goodput_mbps": "mean"})
    for i, (ax, rate) in enumerate(zip(np.atleast_1d(axes), rates, strict=True)):
        rows = g[g["link_mbps"] == rate]
        common.plot_lines(ax, rows, x="rtt_ms", hue="variant", order=list(PAIR), style=STYLE)
        ax.set_xlabel("Round Trip Time (ms)")
        ax.set_ylabel("Goodput (Mbit/s)")
        ax.set_title(f"({'ab'[i]}) {rate} Mbit/s link")
        ax.legend(loc="upper right")
    fig.suptitle(f"Fig. 6: goodput vs RTT, {plan.rtt_loss:.1%} independent loss")
    return fig


def _fig7(s: Mapping[str, Any]) -> Any:
    fig, axes = common.figure(1, 2, width=9.0, height=3.6)
    f = s["friendliness"].rename(columns={"goodput_mbps": "mean"})
    for ax, fig_id, other, title in (
        (axes[0], "7a", LP, "(a) TCP NewReno-LP and TCP NewReno"),
        (axes[1], "7b", WNR, "(b) TCP Westwood-NR and TCP NewReno"),
    ):
        rows = f[f["figure"] == fig_id]
        common.plot_lines(ax, rows, x="newreno_flows", hue="class", order=[other, NR], style=STYLE)
        fair = rows.drop_duplicates("newreno_flows").sort_values("newreno_flows")
        ax.plot(
            fair["newreno_flows"],
            fair["fair_share_mbps"],
            color="black",
            linewidth=1.0,
            label="Fair share",
        )
        top = float(rows["mean"].max() + rows["ci95"].fillna(0).max())
        ax.set_ylim(0, max(top, float(fair["fair_share_mbps"].max())) * 1.25)
        ax.set_xlabel("Number of TCP NewReno connections")
        ax.set_ylabel("Average goodput (Mbit/s)")
        ax.set_title(title)
        ax.legend(loc="lower center", ncol=3)
    fig.suptitle("Fig. 7: n + m = 5 connections, 10 Mbit/s, RTT 100 ms, error-free")
    return fig


def _fig_short(s: Mapping[str, Any], paper: PaperValues) -> Any:
    """CDFs of the completion times, and the paper's mean completion times (§5,
    0.79 s NewReno-LP, 0.81 s NewReno) as dotted vertical lines."""
    fig, ax = common.figure(1, 1, width=5.6, height=3.6)
    flows = s["short_flows"]
    iws = sorted(flows["iw"].unique())
    for label in PAIR:
        for j, iw in enumerate(iws):
            c = np.sort(
                flows[(flows["variant"] == label) & (flows["iw"] == iw)]["completion_s"]
                .dropna()
                .to_numpy(dtype=float)
            )
            if c.size == 0:
                continue
            y = np.arange(1, c.size + 1) / c.size
            ax.step(
                c,
                y,
                where="post",
                color=STYLE[label]["color"],
                linestyle="-" if j == 0 else "--",
                label=f"{label}, IW {iw} (mean {c.mean():.2f} s)",
            )
    for e in paper.group("short_"):
        if e.extra.get("variant") in PAIR:
            color = STYLE[e.extra["variant"]]["color"]
            label = f"paper: {e.extra['variant']} mean {e.value:g} s"
            ax.axvline(e.value, color=color, linestyle=":", linewidth=1.2, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("Completion time of a 10 kB transfer (s)")
    ax.set_ylabel("Fraction of transfers")
    ax.set_title("Short transfers: 5 Mbit/s, 5 % loss, RTT 100 ms")
    ax.legend(loc="lower right")
    return fig


def figures() -> list[FigureSpec]:
    """Figs. 2-7 of the paper, the short transfers and the Westwood sensitivity."""
    return [
        FigureSpec(
            "fig2",
            lambda c: _fig2(c.s, c.config.profile, c.paper.value("accuracy_floor")),
        ),
        FigureSpec("fig3", lambda c: _fig_goodput(c.s, "fig3", c.plan.rates_mbps[:2])),
        FigureSpec("fig4", lambda c: _fig_goodput(c.s, "fig4", c.plan.rates_mbps[2:])),
        FigureSpec("fig5", lambda c: _fig5(c.s, c.plan)),
        FigureSpec("fig6", lambda c: _fig6(c.s, c.plan)),
        FigureSpec("fig7", lambda c: _fig7(c.s)),
        FigureSpec("short", lambda c: _fig_short(c.s, c.paper)),
        FigureSpec("westwood", lambda c: _fig_westwood(c.s)),
    ]


__all__ = ["Context", "figures"]
