"""Park 2019: the report, as a list of sections. Every number a section prints is
computed from the runs, read from the scenario presets, the repository's validation
data, or ``paper.toml``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from vtlab.experiments import common, pipeline
from vtlab.experiments.park2019.analysis import (
    _lookup,
    ns3_reference,
    quoted,
    table2_paper,
    verdict_words,
)
from vtlab.experiments.park2019.deviations import deviations, station_validation
from vtlab.experiments.park2019.plan import (
    FULL,
    QDISC,
    REFERENCE_MB,
    VARIANTS,
    WESTWOOD_ORIGINAL,
)
from vtlab.experiments.pipeline import Context, Section
from vtlab.scenario import Scenario

#: Bytes of the TCP timestamps option as ns-3 sends it (10, padded to 12), and of an
#: IPv4 header: what a full segment adds beyond MSS + headers, and what the second
#: fragment carries besides the rest.
TIMESTAMP_OPTION = 12
IP_HEADER = 20

TITLE = "Reproduction: Park, Kim & Choi 2019 — TCP over the V2G charging cable"


def expanded(preset: str, **extra: Any) -> dict[str, Any]:
    return Scenario({"preset": preset, **extra}).expanded()


def link(spec: dict[str, Any], name: str) -> dict[str, Any]:
    return next(x for x in spec["links"] if x["name"] == name)


def rate_delay(x: dict[str, Any]) -> str:
    return f"{x['rate_bps'] / 1e6:g} Mbit/s, {x['delay_ns'] / 1e6:g} ms"


def _burst_starts(losses: Sequence[float]) -> list[tuple[float, float]]:
    return [
        (x, float(link(expanded("v2g", loss={"mean_loss": x}), "plc")["loss_ab"]["burst_start"]))
        for x in losses
    ]


# -- header and setup ------------------------------------------------------------------


def header_rows(ctx: Context) -> list[list[str]]:
    cfg, runs, paper_runs = ctx.config, ctx.runs, int(ctx.paper.value("runs"))
    profile = f"`{cfg.profile}`" + (
        " (mirrors ns-3.44, the study's simulator family)"
        if cfg.profile == "ns3"
        else " (Linux stack defaults)"
    )
    return [
        ["TCP profile", profile],
        [
            "runs per point",
            f"{runs} (seeds 1–{runs}; the paper: {paper_runs})"
            + ("" if runs == paper_runs else f" — not the paper's {paper_runs}"),
        ],
    ]


def quick_note(ctx: Context) -> str:
    plan = ctx.plan
    return (
        f"> **Quick version** (CI): {plan.size} transfers instead of "
        f"{FULL.size}, {ctx.runs} runs, loss levels "
        f"{', '.join(f'{x * 100:g} %' for x in plan.losses)}, Table 2 sizes "
        f"{', '.join(f'{mb} MB' for mb in plan.sizes_mb)}, traces over the first "
        f"{plan.trace_window}. Short transfers are dominated by start-up, so the numbers "
        "below are not comparable with the paper's; run without `--quick` for the "
        "reproduction.\n"
    )


def setup(ctx: Context) -> str:
    plan, v2g = ctx.plan, expanded("v2g", qdisc=QDISC)
    station = expanded("station", vehicles=plan.vehicles, qdisc=QDISC)
    flow, plc = v2g["flows"][0], link(v2g, "plc")
    tcp = flow["tcp"]
    segments = [x for x in station["links"] if x["name"].startswith("plc")]
    starts = sorted({f["start_ns"] for f in station["flows"]})
    return (
        "## Setup\n\n"
        f"* **Single connection** (paper Fig. 3, §3.1): preset `v2g`: SA —("
        f"{rate_delay(link(v2g, 'wan'))})— SECC —(PLC {rate_delay(plc)})— EVCC, one bulk "
        f"transfer SA → EVCC; {plc['queue_packets']}-packet drop-tail device queues "
        f"behind a {plc['qdisc']['kind']} queue disc of {plc['qdisc']['limit_packets']} "
        "packets (ns-3's default root queue disc before ns-3.30; the paper was submitted "
        "six weeks after ns-3.30 came out; docs/reproduce-park2019.md); MSS "
        f"{tcp['mss']} B, MTU {plc['mtu_bytes']} B, {tcp['send_buffer'] // 1024} KiB send "
        f"and {tcp['recv_buffer'] // 1024} KiB receive buffers (the ns-3 defaults the paper "
        "used).\n"
        f"* **{plan.vehicles} vehicles** (paper Fig. 5, §3.2): preset `station`: SA —("
        f"{rate_delay(link(station, 'wan'))})— switch — {len(segments)} shared PLC segments "
        f"of {rate_delay(segments[0])}, {plan.vehicles // len(segments)} vehicles each; every "
        "vehicle receives its own bulk transfer (starts "
        f"{(starts[1] - starts[0]) / 1e6:g} ms apart) and has its own loss stream on its "
        "PLC path. Goodput is per vehicle: the mean over the vehicles of a run, then mean ± "
        "95 % CI over runs.\n"
        "* **Throughput** = goodput: application bytes delivered in order / (time of "
        "the last byte − flow start), in Mbit/s (10⁶ bit/s). Confidence intervals are "
        "Student-t 95 % over runs.\n"
        "* **Common random numbers**: seed k gives every algorithm the same loss "
        "pattern, so differences between algorithms are paired.\n"
        "* **vtlab against ns-3.44** on these topologies: single connection: "
        + station_validation(1)
        + f"; {plan.vehicles} vehicles: "
        + station_validation(plan.vehicles)
        + ".\n"
    )


def loss_rate(ctx: Context) -> str:
    plc = link(expanded("v2g"), "plc")["loss_ab"]
    lo, hi = plc["burst_min"], plc["burst_max"]
    levels = sorted(set(ctx.plan.fig11_losses) | {ctx.paper.value("table2_loss")})
    return (
        "### Loss rate\n\n"
        "The paper's x-axis is the **average packet loss rate** of ns-3's "
        f"`BurstErrorModel` on the PLC link (burst sizes uniform on {lo}..{hi}). vtlab uses "
        "the same model and converts each mean loss rate L exactly to the burst-start "
        f"probability p, solving L = 1 − E[(1 − p)^S] for S uniform on {lo}..{hi} "
        "(docs/loss-models.md). Loss hits packets toward the vehicle only. With the "
        "ns3 profile every full segment travels as two IP fragments (below), and the "
        "loss model applies per fragment, as in ns-3.\n\n"
        + common.md_table(
            ["mean loss L", "burst-start probability p"],
            [[f"{x * 100:g} %", f"{p:.6f}"] for x, p in _burst_starts(levels)],
        )
    )


def algorithms(ctx: Context) -> str:
    floor = ctx.paper.value("ssthresh_floor_mss")
    table = common.md_table(
        ["paper (ns-3)", "vtlab `tcp.cc`", "note"],
        [
            *([k, f"`{v}`", ""] for k, v in VARIANTS.items() if k != "Westwood"),
            [
                "Westwood",
                f"`{VARIANTS['Westwood']}`",
                "Westwood+ (ns-3.38+ `TcpWestwoodPlus`); see “Which Westwood?”",
            ],
            ["NewReno ND", "`newreno-nd`", "NewReno with delayed ACKs off at the receiver"],
            [
                "NewReno SC",
                "`newreno-sc`",
                f"ssthresh floor {floor:g} MSS instead of "
                f"{ctx.paper.value('ssthresh_floor_standard_mss'):g} (Algorithm 1)",
            ],
            [
                "Illinois AA",
                "`illinois-aa`",
                "Illinois with a larger α_max and a smaller β_min (Fig. 10; "
                "docs/congestion-control.md)",
            ],
        ],
        align="lll",
    )
    return "### Algorithms\n\n" + table + "\n" + _profile_note(ctx)


def _profile_note(ctx: Context) -> str:
    if ctx.config.profile != "ns3":
        return (
            "**Profile `linux`.** Linux defaults: the timestamp option fits inside the MSS "
            "(no fragmentation), a lower floor on the RTO variance term, a shorter "
            "delayed-ACK timeout. The paper used ns-3; the default `--profile ns3` is the "
            "closer setup.\n"
        )
    tcp, plc = expanded("v2g")["flows"][0]["tcp"], link(expanded("v2g"), "plc")
    packet = tcp["mss"] + tcp["header_bytes"] + TIMESTAMP_OPTION
    mtu, framing = plc["mtu_bytes"], plc["framing_bytes"]
    second = packet - mtu + IP_HEADER  # the second fragment: the rest plus its IP header
    bound = plc["rate_bps"] / 1e6 * tcp["mss"] / (mtu + framing + second + framing)
    return (
        "**Profile `ns3`.** vtlab's ns3 profile mirrors ns-3.44: SACK with PRR recovery, "
        f"timestamps, {tcp['rto_min_ns'] / 1e9:g} s minimum RTO, delayed ACKs "
        f"({tcp['delayed_ack_count']} segments, {tcp['delayed_ack_timeout_ns'] / 1e6:g} ms). "
        f"ns-3 adds the {TIMESTAMP_OPTION}-byte timestamp option on top of the "
        f"{tcp['mss']}-byte MSS, so every full segment is a {packet}-byte IP packet that is "
        f"fragmented at MTU {mtu} ({mtu} + {second} B): the PLC carries two packets per "
        "segment, each meets the loss model, and the loss-free bound is "
        f"{bound:.3f} Mbit/s. The paper's setup (ns-3 defaults, MTU {mtu}, MSS "
        f"{tcp['mss']}) had the same effect. `--profile linux` runs Linux defaults instead "
        "(options inside the MSS, no fragmentation).\n"
    )


# -- Table 2 and the quoted numbers ----------------------------------------------------


def _t2_grid(ctx: Context, cell: Any) -> str:
    published = table2_paper(ctx.paper)
    return common.md_table(
        ["File size", *VARIANTS],
        [[f"{mb} MB", *(cell(v, mb) for v in VARIANTS)] for mb in published],
    )


def table2(ctx: Context) -> str:
    t2 = {c.quantity: c for c in ctx.comparisons if c.section == "Table 2"}
    published = table2_paper(ctx.paper)
    label = {(e.extra["variant"], e.extra["size_mb"]): e.label for e in ctx.paper.group("table2/")}

    def c(v: str, mb: int) -> Any:
        return t2[label[(v, mb)]]

    loss, paper_runs = ctx.paper.value("table2_loss") * 100, int(ctx.paper.value("runs"))
    big = common.LARGE_DEVIATION * 100
    text = [
        f"## Table 2 — throughput (Mbit/s) at {loss:g} % mean loss, single connection\n",
        f"Paper (mean of {paper_runs} runs):\n",
        _t2_grid(ctx, lambda v, mb: common.fmt(published[mb][v])),
        f"vtlab (mean ± 95 % CI over {ctx.runs} runs; `–`: size not run in this configuration):\n",
        _t2_grid(ctx, lambda v, mb: common.fmt_ci(c(v, mb).ours, c(v, mb).ci)),
        f"Relative difference (vtlab − paper) / paper; bold beyond ±{big:g} %:\n",
        _t2_grid(ctx, lambda v, mb: common.fmt_rel(c(v, mb).rel)),
    ]
    ran = [x for x in t2.values() if math.isfinite(x.ours)]
    if ran:
        within = sum(1 for x in ran if not x.large)
        text.append(
            f"{within} of {len(ran)} cells are within ±{big:g} % of the paper; median absolute "
            f"difference {np.median([abs(x.rel) for x in ran]) * 100:.0f} %.\n"
        )
    return "\n".join(text)


def quoted_numbers(ctx: Context) -> str:
    has_ref = ctx.config.profile == "ns3" and ns3_reference() is not None
    rows = [c for c in ctx.comparisons if c.section != "Table 2"]
    ratios = [
        f"{ctx.paper.value(a):.3f} / {ctx.paper.value(b):.3f} = {e.value:.2f} for “"
        + e.label.split("“", 1)[-1].split("”", 1)[0]
        + "”"
        for e in quoted(ctx.paper)
        if (pair := e.extra.get("ratio_of")) is not None
        for a, b in [pair]
    ]
    return (
        "## Numbers quoted in the text\n\n"
        + common.within_sentence(ctx.comparisons, " (Table 2 and those quoted in the text)")
        + common.comparison_table(rows, reference_label="ns-3.44" if has_ref else None)
        + "\nRatios: the paper writes “N times higher” for a ratio of N + 1 ("
        + "; ".join(ratios)
        + "); the table compares ratios. "
        + (
            "The ns-3.44 column is the ns-3 reference program on the paper's single-"
            "connection setup with ns-3's defaults (`validation/agreement.csv`, "
            f"`validation/ns3/results`, {REFERENCE_MB} MB); blank where it was not run.\n"
            if has_ref
            else "\n"
        )
    )


def westwood(ctx: Context) -> str:
    """Westwood+ (the Westwood column) against the original Westwood, 1 connection."""
    s, plan = ctx.s, ctx.plan
    label = next(iter(WESTWOOD_ORIGINAL))
    paper_loss = ctx.paper.value("table2_loss")
    paper = table2_paper(ctx.paper).get(REFERENCE_MB, {}).get("Westwood", math.nan)
    rows = []
    for x in plan.losses:
        p = _lookup(s["fig4"], variant="Westwood", loss=x)
        o = _lookup(s["westwood"], variant=label, loss=x)
        rows.append(
            [
                f"{x * 100:g} %",
                "–" if p is None else common.fmt_ci(p["mean"], p["ci95"]),
                "–" if o is None else common.fmt_ci(o["mean"], o["ci95"]),
                common.fmt(paper) if x == paper_loss and plan.bytes_ == "100MB" else "",
            ]
        )
    return (
        "### Which Westwood?\n\n"
        "The Westwood column runs Westwood+ (`westwood-plus`, what ns-3.38 and later call "
        "`TcpWestwoodPlus`). Until ns-3.37, `ns3::TcpWestwood` defaulted to "
        "`ProtocolType = WESTWOOD`, the original Westwood (ns-3's own example programs "
        "note this when they switch to Westwood+), so a 2019 ns-3 run of “Westwood” with "
        f"default attributes was probably the original. Both, 1 connection, {plan.size} "
        "(Mbit/s, mean ± 95 % CI):\n\n"
        + common.md_table(
            ["mean loss", "Westwood+ (`westwood-plus`)", f"{label} (`westwood`)", "paper"], rows
        )
    )


def figures(ctx: Context) -> str:
    plan = ctx.plan
    floor = ctx.paper.value("ssthresh_floor_mss")
    trace = plan.trace_interval.replace("ms", " ms")
    rows = [
        [
            "`fig4.png`/`.svg`",
            "Fig. 4",
            f"goodput vs mean loss, ten variants, 1 connection, {plan.size}",
        ],
        ["`fig6.png`/`.svg`", "Fig. 6", f"per-vehicle goodput vs loss, {plan.vehicles} vehicles"],
        [
            "`fig7.png`/`.svg`",
            "Fig. 7",
            f"snd_una over the first {plan.trace_window} at "
            f"{ctx.paper.value('fig7_loss') * 100:g} %, seed 1, sampled every {trace}: (a) 1 "
            f"connection, (b) vehicle ev1 of {plan.vehicles} (the paper does not say which; "
            "the figure sits in §3.2)",
        ],
        [
            "`fig8.png`/`.svg`",
            "Fig. 8",
            "Slow Start (entries into slow start after an RTO) and Fast Recovery counts, "
            "NewReno vs Illinois, per loss level (the paper gives none); (b) per connection",
        ],
        [
            "`fig11.png`/`.svg`",
            "Fig. 11a/b",
            f"five variants, goodput vs loss incl. 0 %; (a) 1, (b) {plan.vehicles} vehicles",
        ],
        [
            "`fig12.png`/`.svg`",
            "Fig. 12",
            f"cwnd of vehicle ev1 of {plan.vehicles} at {plan.fig12_loss * 100:g} % (the paper "
            f"gives no rate), first {plan.trace_window}, with the {floor:g} MSS line",
        ],
    ]
    tables = ", ".join(f"`{t.stem}`" for t in ctx.study.tables)
    return (
        "## Figures\n\n"
        + common.md_table(["file", "paper", "what is drawn"], rows, align="lll")
        + f"\nTables ({tables}; `.csv`, `.parquet`, Table 2 also `.md`): the data behind "
        "each figure; `comparison.csv`/`.parquet`: every paper number beside vtlab's. "
        "Runs: the run store (`flows/`, `links/`, `traces/`: one Parquet dataset per "
        "table; `runs/`: one row per run), reused by later invocations.\n"
    )


def sections() -> list[Section]:
    return [
        pipeline.header_section(TITLE, header_rows, quick_note),
        Section("setup", setup),
        Section("loss rate", loss_rate),
        Section("algorithms", algorithms),
        Section("table 2", table2),
        Section("quoted numbers", quoted_numbers),
        Section("westwood", westwood),
        pipeline.findings_section(
            "Qualitative findings",
            "{held} of {total} checked claims hold in full on this campaign; the others are "
            "marked.",
            headers=("figure", "the paper's finding", "vtlab", "holds?"),
            verdict=verdict_words,
        ),
        Section("deviations", deviations),
        Section("figures", figures),
    ]
