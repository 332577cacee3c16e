"""Hu et al.: the report's later sections — RTT, λ, the sensitivity runs, what was
not run, the deviations and assumptions, and the file list. Every number is computed from
the runs, the resolved scenarios, the core's registry or ``paper.toml``."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from vtlab.experiments import common
from vtlab.experiments.hu_lte.analysis import best_lambda, gain_ci, pct, row
from vtlab.experiments.hu_lte.assumptions import bullets, large_deviations
from vtlab.experiments.hu_lte.plan import (
    ADAPTIVE,
    CUBIC,
    CUBIC_6M,
    POOR_RSRP,
    STATIC_RSRP,
    aqm_available,
    bbr_available,
    cc_names,
    lte_link,
    setup_numbers,
    size_label,
)
from vtlab.experiments.pipeline import Context

SCHEMES = (CUBIC, ADAPTIVE, CUBIC_6M)
#: RTT-over-time statistics skip the start-up (seconds).
TRACE_FROM_S = 5.0
#: ACWND counts as inert when it changes throughput by less than this.
INERT = 0.01


def _ms(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{x:.0f}"


def trace_stats(ctx: Context) -> pd.DataFrame:
    """Per traced run: the share of time the sender's SRTT lies in the paper's range,
    and its median and 95th percentile (after :data:`TRACE_FROM_S`)."""
    tr = ctx.s["rtt_trace"]
    lo, hi = ctx.paper.value("rtt/low"), ctx.paper.value("rtt/high")
    rows = []
    for (v, variant), t in tr[tr["time_s"] >= TRACE_FROM_S].groupby(["speed_kmh", "variant"]):
        x = t["srtt_ms"]
        rows.append(
            {
                "speed_kmh": v,
                "variant": variant,
                "in_range": float(((x >= lo) & (x <= hi)).mean()),
                "above": float((x > hi).mean()),
                "median": float(x.median()),
                "p95": float(x.quantile(0.95)),
            }
        )
    return pd.DataFrame(rows)


def rtt_section(ctx: Context) -> str:
    t = ctx.s["table1"]
    lo, hi = ctx.paper.value("rtt/low"), ctx.paper.value("rtt/high")
    rows = []
    for d in ("DL", "UL"):
        for v in SCHEMES:
            r = row(t, dir=d, rsrp=STATIC_RSRP, variant=v)
            if r is None:
                continue
            rows.append(
                [d, v]
                + [
                    _ms(r[c])
                    for c in ("rtt_min_ms", "rtt_p50_ms", "rtt_mean_ms", "rtt_p95_ms", "rtt_p99_ms")
                ]
            )
    text = [
        "## RTT\n",
        f"The paper: “RTT within a range between {lo:g} ms–{hi:g} ms” with ARWND+ACWND. "
        f"Static car, {STATIC_RSRP:g} dBm; each run's RTT samples (ms), averaged over "
        "runs (`rtt.csv`, `rtt_dist.png`):\n",
        common.md_table(["dir", "scheme", "min", "p50", "mean", "p95", "p99"], rows),
    ]
    ts = trace_stats(ctx)
    if len(ts):
        text.append(
            "**Over time** (`rtt_time.png`; DL, seed 1, sender's smoothed RTT sampled every "
            f"{ctx.plan.trace_interval.replace('ms', ' ms')}, after the first "
            f"{TRACE_FROM_S:g} s):\n"
        )
        text.append(
            common.md_table(
                [
                    "speed (km/h)",
                    "scheme",
                    f"time in {lo:g}–{hi:g} ms",
                    f"time above {hi:g} ms",
                    "median (ms)",
                    "p95 (ms)",
                ],
                [
                    [
                        f"{r.speed_kmh:g}",
                        r.variant,
                        pct(r.in_range, 0, False),
                        pct(r.above, 0, False),
                        _ms(r.median),
                        _ms(r.p95),
                    ]
                    for r in ts.itertuples()
                ],
            )
        )
    n = setup_numbers()
    text.append(
        f"CUBIC's {n['recv_buffer']} window keeps its RTT near the base RTT whenever the "
        "channel carries more than the window per base RTT, and it can never fill the "
        f"{n['buffer']} eNB buffer; the unthrottled CUBIC fills it. ARWND shrinks its window "
        f"only once R_t exceeds {n['rwnd']['rtt_multiple']:g}·R_m, so its RTT settles between "
        f"R_m and about {n['rwnd']['rtt_multiple']:g}·R_m.\n"
    )
    return "\n".join(text)


def _lambda_rows(frame: pd.DataFrame, key: str, fmt_key: Any) -> list[list[str]]:
    rows = []
    for k in sorted(frame[key].unique()):
        for r in frame[frame[key] == k].itertuples():
            rows.append(
                [
                    fmt_key(k),
                    r.variant,
                    common.fmt_ci(r.goodput_mbps, r.ci95, 2),
                    gain_ci(getattr(r, "gain", math.nan), getattr(r, "gain_ci95", math.nan)),
                    _ms(r.rtt_p50_ms),
                    _ms(r.rtt_p95_ms),
                ]
            )
    return rows


def lambda_section(ctx: Context) -> str:
    headers = ["", "scheme", "Mbit/s (± 95 % CI)", "gain over CUBIC", "RTT p50", "RTT p95"]
    lr, ls = ctx.s["lambda_rsrp"], ctx.s["lambda_speed"]
    text = [
        "## λ against the channel (Fig. 9) and the speed (Fig. 10)\n",
        "λ set in both ARWND (`tcp.rwnd.lambda`) and ACWND (`tcp.cc_params.lambda`); "
        "`window`: W ← W + λ·W, `increment`: W ← W + λ·MSS. Static car, fixed ACK path:\n",
        common.md_table(["RSRP (dBm)", *headers[1:]], _lambda_rows(lr, "rsrp", lambda k: f"{k:g}")),
        f"By speed, RSRP {ctx.plan.speed_rsrp:g} dBm (the paper gives no speeds; the channel "
        "model's uplink carries the ACKs):\n",
        common.md_table(
            ["speed (km/h)", *headers[1:]], _lambda_rows(ls, "speed_kmh", lambda k: f"{k:g}")
        ),
    ]
    text.append(
        "With `window` growth, λ = 1 doubles ARWND's window per update (a standard "
        "receiver's pace) and λ = 3 quadruples it; the larger λ overshoots the queue and "
        "costs delay (RTT p95) more than it gains throughput. With `increment` growth "
        "(λ segments per update) λ = 1 is slow from the 64 KiB start, and a larger λ "
        "is better at every speed.\n"
    )
    ack = ctx.s["ack_path"]
    rows = []
    for r in ack.itertuples():
        rows.append(
            [
                f"{r.rsrp:g}",
                r.ack_path,
                r.variant,
                common.fmt_ci(r.goodput_mbps, r.ci95, 2),
                _ms(r.rtt_p95_ms),
            ]
        )
    text.append(
        "**Check of the fixed ACK path** (DL, static): the channel model's uplink (`model`) "
        "against the fixed schedule (`fixed`):\n"
    )
    text.append(common.md_table(["RSRP (dBm)", "ACK path", "scheme", "Mbit/s", "RTT p95"], rows))
    return "\n".join(text)


def _sens_rows(s: pd.DataFrame) -> list[list[str]]:
    return [
        [
            f"{r.speed_kmh:g}",
            r.parameter,
            r.value or "–",
            common.fmt_ci(r.goodput_mbps, r.ci95, 2),
            pct(r.vs_default),
            _ms(r.rtt_p50_ms),
            _ms(r.rtt_p95_ms),
        ]
        for r in s.itertuples()
    ]


def sensitivity_section(ctx: Context) -> str:
    n = setup_numbers()
    r = n["rwnd"]
    text = [
        "## Sensitivity to what the paper leaves open\n",
        f"ARWND+ACWND, DL, {STATIC_RSRP:g} dBm, one parameter at a time; the default is "
        f"gamma_high {r['gamma_high']:g}, rtt_multiple {r['rtt_multiple']:g}, rm_window "
        f"{r['rm_window_ns'] / 1e9:g} s, growth `{r['mode']}` (gamma_high and rm_window are "
        "set in ARWND and ACWND alike) (`sensitivity.csv`, `sensitivity.png`):\n",
        common.md_table(
            ["speed (km/h)", "parameter", "value", "Mbit/s", "vs default", "RTT p50", "RTT p95"],
            _sens_rows(ctx.s["sensitivity"]),
        ),
        "**Which half brings the gain** (`decomposition.csv`): ARWND alone runs a CUBIC "
        f"sender with ARWND in a {n['arwnd_buffer']} buffer; ACWND alone runs ACWND against "
        f"the fixed {n['recv_buffer']} window; λ by the preset's rule.\n",
        common.md_table(
            ["speed (km/h)", "scheme", "Mbit/s", "RTT p50", "RTT p95"],
            [
                [
                    f"{x.speed_kmh:g}",
                    x.setting,
                    common.fmt_ci(x.goodput_mbps, x.ci95, 2),
                    _ms(x.rtt_p50_ms),
                    _ms(x.rtt_p95_ms),
                ]
                for x in ctx.s["decomposition"].itertuples()
            ],
        ),
        _inert(ctx),
        "**CUBIC's fixed receive window** (the baseline Table I compares with; `rwnd.csv`):\n",
        common.md_table(
            ["speed (km/h)", "receive window", "Mbit/s", "RTT p50", "RTT p95", "RTT p99"],
            [
                [
                    f"{x.speed_kmh:g}",
                    size_label(int(x.recv_buffer)),
                    common.fmt_ci(x.goodput_mbps, x.ci95, 2),
                    _ms(x.rtt_p50_ms),
                    _ms(x.rtt_p95_ms),
                    _ms(x.rtt_p99_ms),
                ]
                for x in ctx.s["rwnd"].itertuples()
            ],
        ),
        "**The eNB's per-user buffer** (`buffer.csv`; gain over CUBIC at the same buffer):\n",
        common.md_table(
            ["speed (km/h)", "buffer", "scheme", "Mbit/s", "gain", "RTT p95"],
            [
                [
                    f"{x.speed_kmh:g}",
                    size_label(int(x.buffer)),
                    x.variant,
                    common.fmt_ci(x.goodput_mbps, x.ci95, 2),
                    gain_ci(x.gain, x.gain_ci95),
                    _ms(x.rtt_p95_ms),
                ]
                for x in ctx.s["buffer"].itertuples()
            ],
        ),
    ]
    return "\n".join(text)


def _inert(ctx: Context) -> str:
    """How much ACWND changes, and why: the sender's window against its flight."""
    d = ctx.s["decomposition"].set_index(["speed_kmh", "setting"])["goodput_mbps"]
    parts, effects = [], []
    for v in sorted({k[0] for k in d.index}):
        both, arwnd = d.get((v, "ARWND+ACWND (both)")), d.get((v, "ARWND only"))
        acwnd, none = d.get((v, "ACWND only")), d.get((v, "CUBIC (neither)"))
        if None in (both, arwnd, acwnd, none):
            continue
        parts.append(
            f"{v:g} km/h: ACWND alone {pct(acwnd / none - 1)} over CUBIC, adding ACWND to "
            f"ARWND {pct(both / arwnd - 1)}"
        )
        effects += [abs(acwnd / none - 1), abs(both / arwnd - 1)]
    tr = ctx.s["rtt_trace"]
    tr = tr[tr["time_s"] >= TRACE_FROM_S]
    windows = [
        f"{v}: cwnd {t['cwnd_bytes'].mean() / 1e3:.0f} kB against a flight of "
        f"{t['flight_size_bytes'].mean() / 1e3:.0f} kB"
        for v, t in tr[tr["speed_kmh"] == 0].groupby("variant")
    ]
    if not effects:
        return ""
    how = "never" if max(effects) < INERT else "seldom"
    return (
        "ACWND's share: " + "; ".join(parts) + f". The sender's window {how} limits these "
        "flows: in the static traces (mean after the start-up) "
        + "; ".join(windows)
        + ". A flow held back by the receive window keeps its cwnd (the linux profile "
        "grows cwnd only while it limits sending, as `tcp_is_cwnd_limited`), so ACWND's "
        "half of the proposal acts only on the losses and growth of a cwnd-limited "
        "flow: little, on a path whose losses are rare HARQ failures and queue drops.\n"
    )


def not_run(ctx: Context) -> str:
    missing = []
    if not bbr_available():
        missing.append(
            "* **BBR**, same scenarios: the core has no `bbr` congestion control (its "
            f"registry holds {len(cc_names())}: {', '.join(f'`{c}`' for c in cc_names())})."
        )
    if not aqm_available():
        keys = [k for k in lte_link() if k.startswith("queue")]
        missing.append(
            "* **CoDel / FQ-CoDel at the base station**, same scenarios: links have only a "
            f"drop-tail queue ({', '.join(f'`{k}`' for k in keys)}), no queue discipline."
        )
    if not missing:
        return "## Not run\n\nNothing: BBR and a queue discipline are available.\n"
    return (
        "## Not run\n\nThese comparisons belong to the study but do not exist in vtlab yet; "
        "they are not run and nothing in this report stands in for them:\n\n"
        + "\n".join(missing)
        + "\n"
    )


def deviations(ctx: Context) -> str:
    return (
        "## Assumptions and deviations\n\n"
        + "\n".join([*bullets(ctx), *large_deviations(ctx)])
        + "\n"
    )


#: The report's file list (the run store's row follows it).
FILES = [
    ["`table1.png/.svg`, `table1.csv/.md`", "Table I beside the paper, with gains"],
    ["`gain_rsrp.png/.svg`, `table1_rsrp.*`", "Table I's schemes by RSRP, UL and DL"],
    ["`rtt_time.png/.svg`", "sender's SRTT over time, DL, one seed per scheme"],
    ["`rtt_dist.png/.svg`, `rtt.*`", "RTT p50/p95/p99 per scheme"],
    ["`lambda_rsrp.png/.svg`, `lambda_rsrp.*`", "Fig. 9: λ at −81 and −110 dBm"],
    ["`lambda_speed.png/.svg`, `lambda_speed.*`", "Fig. 10: λ by speed"],
    ["`lambda_pairs_rsrp.*`, `lambda_pairs_speed.*`", "paired differences between λ values"],
    ["`ack_path.*`", "the fixed ACK path against the model's uplink"],
    [
        "`sensitivity.png/.svg`, `sensitivity.*`, `decomposition.*`",
        "ARWND+ACWND's unstated parameters; ARWND and ACWND alone",
    ],
    [
        "`windows_buffers.png/.svg`, `rwnd.*`, `buffer.*`",
        "CUBIC's receive window; the eNB buffer",
    ],
    ["`findings.*`, `comparison.*`", "the claims and the paper's numbers"],
]


__all__ = [
    "best_lambda",
    "FILES",
    "deviations",
    "lambda_section",
    "not_run",
    "rtt_section",
    "sensitivity_section",
    "POOR_RSRP",
]
