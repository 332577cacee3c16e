"""Janevski & Petrov: the report's "Assumptions" and "Deviations and sensitivity"
sections and its file list — every choice where the paper is silent, with the plan's
parameter that holds it, and where vtlab's numbers and the paper's part, with the
runs' numbers that show why."""

from __future__ import annotations

import math

from vtlab.experiments import common
from vtlab.experiments.janevski2014.analysis import (
    best_point,
    degradation,
    need,
    rts_best,
    select,
)
from vtlab.experiments.janevski2014.plan import (
    CALIBRATED,
    CLEAN,
    ERROR_20,
    LOSSY,
    REFERENCE,
    ROUTING,
    VEGAS_PARAMS,
    setup_numbers,
)
from vtlab.experiments.pipeline import Context


def _pct(x: float, digits: int = 0) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x * 100:.{digits}f} %"


def _kb(x: float) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.1f}"


def _radio_rows(ctx: Context) -> list[list[str]]:
    """The radio, the MAC, the motion and the routing."""
    plan, n = ctx.plan, setup_numbers(ctx.plan)
    return [
        [
            "802.11 mode",
            "`wifi.standard`, `wifi.rate` (preset)",
            f"802.11{n['standard']} DSSS, {n['rate_kbps'] / 1e3:g} Mbit/s, with its timing: "
            f'"{ctx.paper["setup/mode_rate"].extra["text"]}" (the paper gives no PHY timing)',
        ],
        [
            "RTS/CTS",
            "`Plan.rts`",
            f"{plan.rts} (ns-2's `RTSThreshold_ {n['rts_threshold']}`: before every frame); "
            "`rts.csv` also runs it off",
        ],
        [
            "speeds",
            "`Plan.speed_kmh`",
            f'{plan.speed_kmh:g} km/h for every vehicle: the paper\'s "normal distribution" has '
            f"no spread; any spread would pull the {n['spacing_m']:g} m chain apart within the run",
        ],
        [
            "routing",
            "preset; `routing` grid",
            ROUTING + " in the paper's grid (no routing traffic, no route breaks); the "
            "`routing` grid runs AODV beside it (HELLOs, route requests, route errors on MAC "
            "failures, ns-3's defaults)",
        ],
    ]


def _error_rows(ctx: Context) -> list[list[str]]:
    """The error model."""
    plan = ctx.plan
    return [
        [
            "error model: reading",
            "`Plan.error_rate`, `Plan.error_burst_ms`",
            "on-off (Gilbert–Elliott in time, nothing lost when good, everything when bad): bad "
            f"{plan.error_rate * 100:g} % of the time, mean bad period {plan.error_burst_ms:g} "
            "ms, one process per vehicle and direction",
        ],
        [
            "error model: where",
            "`Plan.error_placement`, `Plan.error_frames`",
            f"`{plan.error_placement}` (between MAC and PHY, ns-2's "
            "`IncomingErrProc`/`OutgoingErrProc`: the MAC retries a hit frame), "
            f"`{plan.error_frames}` frames (RTS, CTS, data, ACK)",
        ],
        [
            "error model: calibrated",
            "`Plan.calibrated_rate`, `Plan.calibrated_burst_ms`",
            f"bad {plan.calibrated_rate * 100:g} % of the time, mean bad period "
            f"{plan.calibrated_burst_ms:g} ms (about one RTS/CTS/data/ACK exchange): single-hop "
            f"NewReno at IFQ {REFERENCE['ifq']}, DupAck {REFERENCE['dupack']} loses about "
            f"{ctx.paper.value('results/degradation') * 100:g} % (the paper: "
            f'"{ctx.paper["results/degradation"].extra["text"]}")',
        ],
    ]


def _tcp_rows(ctx: Context) -> list[list[str]]:
    """TCP, the measure and the runs."""
    plan, n = ctx.plan, setup_numbers(ctx.plan)
    per_packet = (n["mss"] + n["header"]) / n["mss"]
    return [
        [
            "persistence",
            "`Plan.syn_retries`, `Plan.data_retries`",
            f"{plan.syn_retries} SYN retries and {plan.data_retries} consecutive RTOs (vtlab's "
            "maxima): ns-2's agents have no handshake and never give up; `persistence.csv` runs "
            "vtlab's defaults",
        ],
        [
            "DelAck 2",
            "`Plan.delack_timeout_ms`",
            f"one ACK per two segments or after {plan.delack_timeout_ms:g} ms (ns-2's "
            "`TCPSink/DelAck interval_`)",
        ],
        [
            "Vegas",
            "`VEGAS_PARAMS`",
            f"α {VEGAS_PARAMS['alpha']}, β {VEGAS_PARAMS['beta']}, γ {VEGAS_PARAMS['gamma']} "
            "(ns-2's `v_alpha_`, `v_beta_`, `v_gamma_`); NewReno recovery (ns-2's Vegas has its "
            "own fine-grained retransmission check)",
        ],
        [
            "window",
            "`Plan.window`",
            f"{plan.window} packets (ns-2's `window_`); initial window {n['initial_cwnd']}, "
            f"minimum RTO {n['rto_min_ms']:g} ms, limited transmit "
            f"{'on' if n['limited_transmit'] else 'off'} (the preset's)",
        ],
        [
            "throughput",
            "–",
            f"TCP payload delivered in order; counting {n['mss'] + n['header']} B packets "
            "(payload + TCP/IP headers), as some ns-2 scripts do, would read "
            f"{_pct(per_packet - 1, 1)} higher",
        ],
        [
            "runs",
            "`Plan.runs`, `Plan.duration_s`",
            f"{ctx.runs} seeds of {plan.duration_s:g} s per point (the paper: one run of "
            f"{ctx.paper.value('setup/duration'):g} s, it seems); seed k gives every TCP version "
            "and IFQ the same error pattern",
        ],
        [
            "DupAck values",
            "`Plan.dupacks`",
            ", ".join(map(str, plan.dupacks))
            + f" (Table 2: {ctx.paper.value('setup/dupack_min'):g}–"
            f"{ctx.paper.value('setup/dupack_max'):g})",
        ],
    ]


def assumptions(ctx: Context) -> str:
    rows = [*_radio_rows(ctx), *_error_rows(ctx), *_tcp_rows(ctx)]
    return (
        "## Assumptions\n\nWhere the paper is silent, each choice is a parameter of the "
        "plan (`plan.py`) or of the preset:\n\n"
        + common.md_table(["what", "parameter", "value and why"], rows, align="lll")
    )


def _maxima_bullets(ctx: Context) -> list[str]:
    s, p = ctx.s, ctx.paper
    out = []
    one = best_point(s, 1, CLEAN)
    off = rts_best(s, 1, "off")
    paper = p.value("results/single_max")
    out.append(
        f"* **Single-hop maximum.** {_kb(one['mean'])} kbit/s with RTS/CTS before every "
        f"frame, {_pct(one['mean'] / paper - 1, 1)} against the paper's almost {paper:g}. "
        f"Without RTS/CTS the best is {_kb(off['mean'])} kbit/s ({off['tcp']}, DelAck "
        f"{off['delack']}, IFQ {REFERENCE['ifq']}), {_pct(off['mean'] / paper - 1, 1)}: the "
        "paper's number fits a run without RTS/CTS (ns-2 scripts often raise "
        f"`RTSThreshold_`) and with DelAck {off['delack']}: RTS/CTS costs "
        f"{_pct(1 - one['mean'] / off['mean'])} of the single-hop maximum."
    )
    h = max(ctx.plan.hops)
    many = best_point(s, h, CLEAN)
    r = need(
        s["points"], **{k: many[k] for k in ("hops", "delack", "error", "tcp", "ifq", "dupack")}
    )
    off8 = rts_best(s, h, "off")
    lo, hi = p.value("results/multi_max_low"), p.value("results/multi_max_high")
    out.append(
        f"* **{h}-hop maximum.** {_kb(many['mean'])} kbit/s against the paper's {lo:g}–{hi:g} "
        f"({_kb(off8['mean'])} without RTS/CTS), so the single-hop/8-hop ratio is "
        f"{one['mean'] / many['mean']:.1f}, not nearly {p.value('results/hop_ratio'):g}. At "
        f"that point a run loses {r['link_mac_retry_drops']:.0f} frames at the MAC's retry "
        f"limit and TCP retransmits {r['retransmissions']:.0f} of its "
        f"{r['segments_sent']:.0f} segments. vtlab's routes are static; a routing protocol "
        "(the paper names none; ns-2 studies commonly use AODV or DSDV) would add its own "
        "traffic and, after every frame lost at the retry limit, a route error and a new "
        "route discovery that stall the flow. That, and ns-2's pairwise capture rule "
        "against vtlab's SINR with every interferer summed, are the likely causes of the "
        "gap; the text gives nothing to tell them apart."
    )
    return out


def _error_bullets(ctx: Context) -> list[str]:
    s, plan = ctx.s, ctx.plan
    h = max(plan.hops)
    d = {(r, k): degradation(s, k, r) for r in LOSSY for k in plan.hops}
    rd = s["readings"]
    parts = []
    for k in plan.hops:
        for b in plan.reading_bursts_ms:
            rows = select(rd, hops=k, burst_ms=b, kind="on-off").sort_values("rate")
            parts.append(
                f"{k} hop{'s' if k > 1 else ''}, {b:g} ms: "
                + ", ".join(
                    f"{r.rate * 100:g} % → −{_pct(r.degradation)}" for r in rows.itertuples()
                )
            )
    other = select(rd, kind=["data frames only", "at IP"])
    others = ", ".join(
        f"{r.kind} over {r.hops} hop{'s' if r.hops > 1 else ''} −{_pct(r.degradation)}"
        for r in other.itertuples()
    )
    return [
        f"* **The {ERROR_20} error model.** Read as the preset does, it costs "
        f"−{_pct(d[(ERROR_20, 1)])} over one hop and −{_pct(d[(ERROR_20, h)])} over {h} hops "
        "(over the whole grid): every frame exchange needs four error processes (two "
        "vehicles × in/out) in their good state, and a bad period (mean "
        f"{plan.error_burst_ms:g} ms) often outlasts the MAC's retries, so the flow lives on "
        "retransmission timeouts "
        + (
            f"and the {h}-hop chain carries almost nothing. "
            if d[(ERROR_20, h)] >= 0.95
            else "even more so over many hops. "
        )
        + "The paper calls its model a "
        f'"{ctx.paper["results/degradation"].extra["text"].split("incorporated ")[-1]}" and '
        "still reports multihop throughput with errors (Figs. 8 and 10), so its model was "
        "milder than this reading. The "
        f"calibrated reading costs −{_pct(d[(CALIBRATED, 1)])} and −{_pct(d[(CALIBRATED, h)])}.",
        f"  Throughput lost by reading ({_reference_text()}; `error_readings.csv`): "
        + "; ".join(parts)
        + (f"; {others}." if others else "."),
    ]


def _reference_text() -> str:
    r = REFERENCE
    return f"{r['tcp']}, IFQ {r['ifq']}, DupAck {r['dupack']}, DelAck {r['delack']}"


def _persistence_bullets(ctx: Context) -> list[str]:
    p = ctx.s["persistence"]
    parts = []
    for (h, e), g in p.groupby(["hops", "error"], sort=False):
        parts.append(
            f"{h} hop{'s' if h > 1 else ''}, {e}: "
            + ", ".join(
                f"{r.persistence} {_kb(r.mean)}"
                + (f" ({_pct(r.aborted)} of the runs dropped)" if r.aborted > 0 else "")
                for r in g.itertuples()
            )
        )
    effect = (
        "a connection with errors is dropped when its SYN or data retries run out, which "
        "ns-2's agents never do; a dropped run's goodput counts only until the drop"
        if p["aborted"].max() > 0
        else "no connection here ran out of its retries, so the two settings agree"
    )
    return [
        f"* **Persistence.** With vtlab's default limits {effect} "
        f"(kbit/s, {_reference_text()}): " + "; ".join(parts) + "."
    ]


def deviations(ctx: Context) -> str:
    bullets = [*_maxima_bullets(ctx), *_error_bullets(ctx), *_persistence_bullets(ctx)]
    bullets.append(
        "* **Not modelled**: packet reordering (vtlab's static routes and FIFO queues never "
        f"reorder, so a DupAck above {ctx.paper.value('setup/dupack_default'):g} only delays "
        "recovery and DelAck's gain cannot come from "
        "avoided spurious retransmissions); the speeds' spread; ns-2's Vegas recovery."
    )
    return "## Deviations and sensitivity\n\n" + "\n".join(bullets) + "\n"


#: The report's file list (the run store's row follows it).
FILES = [
    [
        "`fig3.png` … `fig10.png` (+ `.svg`)",
        "the paper's Figs. 3–10: throughput against DupAck per IFQ, one line per TCP, and "
        "the IFQ curves (errors: 20 % on-off)",
    ],
    [
        "`fig4_calibrated.png`, `fig6_…`, `fig8_…`, `fig10_calibrated.png`",
        "the figures with errors under the calibrated reading",
    ],
    ["`maxima.png`, `maxima.csv/.md`", "highest throughput per TCP, topology and error level"],
    [
        "`points.*`, `by_ifq.*`, `by_tcp.*`",
        "every grid point; averages over DupAck; averages over IFQ and DupAck (with the "
        "figure number)",
    ],
    ["`dupack_spread.*`", "each curve's spread over DupAck (≥ 3 and all)"],
    ["`delack_gain.png`, `delack_gain.*`", "DelAck 2 − DelAck 1, paired by seed"],
    ["`rts.png`, `rts.*`", "RTS/CTS on and off"],
    [
        "`error_readings.png`, `error_readings.*`",
        "the error model's readings and the throughput they cost",
    ],
    ["`persistence.*`", "ns-2's persistence against vtlab's SYN and RTO limits"],
    ["`findings.*`, `comparison.*`", "the claims and the paper's numbers"],
]
