"""Janevski & Petrov: the report, as a list of sections — the header's own rows, the
paper's setup against vtlab's, the results (maxima and one table per figure) and the
claims' note on the error model; the pipeline's shared sections (header, the paper's
numbers, the claims, the files) around them. Every number is computed from the runs,
read from the resolved ``vanet-chain`` scenarios or the plan, or read from
``paper.toml``. The assumptions, deviations and sensitivity sections and the file list
are in :mod:`.assumptions`."""

from __future__ import annotations

import vtlab.experiments.janevski2014.assumptions as assumptions
from vtlab.experiments import common, pipeline
from vtlab.experiments.janevski2014.analysis import (
    figure_keys,
    maxima_markdown,
    maxima_table,
    paper_figures,
    select,
    verdict_words,
)
from vtlab.experiments.janevski2014.findings import TAGS
from vtlab.experiments.janevski2014.plan import (
    CALIBRATED,
    ERROR_20,
    LOSSY,
    ROUTING,
    setup_numbers,
)
from vtlab.experiments.pipeline import Context, Section

TITLE = "Reproduction: Janevski & Petrov — TCP over 802.11 between vehicles"


#: How each profile stands for the study's ns-2 agents.
PROFILE_NOTE = {
    "ns3": "ns-2's agents emulated by the preset's settings",
    "ns2": "ns-2.35's one-way agents, rule by rule: docs/stack-profiles.md, 'The ns2 profile'",
}


def header_rows(ctx: Context) -> list[list[str]]:
    cfg, plan, runs = ctx.config, ctx.plan, ctx.runs
    n_points = len(ctx.s["points"])
    return [
        ["TCP profile", f"`{cfg.profile}` ({PROFILE_NOTE.get(cfg.profile, PROFILE_NOTE['ns3'])})"],
        [
            "runs per point",
            f"{runs} (seeds 1–{runs}; seed k gives every TCP the same error pattern)",
        ],
        [
            "simulated transfer per run",
            f"{plan.duration_s:g} s (the paper: {ctx.paper.value('setup/duration'):g} s)",
        ],
        [
            "paper grid",
            f"{n_points} points: hops × DelAck × errors × TCP × IFQ × DupAck "
            f"{', '.join(map(str, plan.dupacks))}",
        ],
    ]


def quick_note(ctx: Context) -> str:
    return (
        f"> **Quick version** (CI): {ctx.runs} runs of {ctx.plan.duration_s:g} s, DupAck "
        f"{', '.join(map(str, ctx.plan.dupacks))} only, fewer error readings. The numbers "
        "are noisy; run without `--quick` for the reproduction.\n"
    )


def _setup_net(ctx: Context) -> list[list[str]]:
    """The setup table's rows on the vehicles, the radio, the MAC and the routing."""
    n, p, plan = setup_numbers(ctx.plan), ctx.paper, ctx.plan
    return [
        [
            "vehicles",
            f"2 (single hop), {p.value('setup/nodes'):g} (8 hops), {p.value('setup/distance'):g} "
            "m apart",
            f"`hops` 1 and {max(plan.hops)} ({n['nodes']} vehicles), {n['spacing_m']:g} m apart",
        ],
        [
            "motion",
            f'{p.value("setup/speed"):g} km/h, "normal distribution"',
            f"every vehicle at {n['speed_kmh']:g} km/h: the spacing never changes",
        ],
        [
            "radio",
            f"802.11g ({p.value('setup/max_link_rate'):g} Mbit/s), but only the "
            f"{p.value('setup/mode_rate'):g} Mbit/s mode at {p.value('setup/distance'):g} m; "
            "two-ray ground",
            f"802.11{n['standard']} DSSS at {n['rate_kbps'] / 1e3:g} Mbit/s (control frames "
            f"{n['control_kbps'] / 1e3:g} Mbit/s, {n['preamble']} preamble, slot {n['slot_us']:g} "
            f"µs, SIFS {n['sifs_us']:g} µs, CW {n['cw'][0]}–{n['cw'][1]}); {n['propagation']}, "
            f"{n['tx_dbm']:g} dBm: receive range {n['rx_range_m']:.0f} m, carrier sense "
            f"{n['cs_range_m']:.0f} m; a frame is received at SINR ≥ {n['sinr_db']:g} dB",
        ],
        [
            "MAC",
            "ns-2's 802.11 (settings not given)",
            f"DCF; RTS/CTS for data frames above {n['rts_threshold']} B (every frame); retry "
            f"limits {n['retries'][0]}/{n['retries'][1]}; {n['mac_overhead']} B MAC overhead per "
            "packet",
        ],
        ["routing", "not stated", ROUTING + "; AODV in the `routing` grid"],
    ]


def _setup_tcp(ctx: Context) -> list[list[str]]:
    """The setup table's rows on the queue, TCP, the errors and the runs."""
    n, p, plan = setup_numbers(ctx.plan), ctx.paper, ctx.plan
    # Under ns2 Vegas runs ns-2 Vegas's own loss handling whatever the
    # recovery (docs/stack-profiles.md rules V8-V12).
    vegas_loss = (
        "ns-2 Vegas's own loss handling"
        if ctx.config.profile == "ns2"
        else f"{n['vegas_recovery']} recovery"
    )
    return [
        [
            "IFQ",
            ", ".join(f"{e.value:g}" for e in p.group("setup/ifq_")) + " packets",
            f"drop-tail interface queue per vehicle: {', '.join(map(str, plan.ifqs))}",
        ],
        [
            "TCP",
            f"ns-2 Tahoe, Reno, NewReno, Vegas, Sack; {p.value('setup/packet'):g} B packets",
            f"the core's `tahoe`, `reno`, `newreno`, `vegas` (α {n['vegas']['alpha']:g}, β "
            f"{n['vegas']['beta']:g}, γ {n['vegas']['gamma']:g}; {vegas_loss}), "
            f"`sack`; MSS {n['mss']} B + {n['header']} B headers, window {n['window_pkts']} "
            f"packets, initial window {n['initial_cwnd']}, minimum RTO {n['rto_min_ms']:g} ms, no "
            f"timestamps, limited transmit {'on' if n['limited_transmit'] else 'off'}",
        ],
        [
            "DupAck, DelAck",
            f"DupAck {p.value('setup/dupack_min'):g}–{p.value('setup/dupack_max'):g}; DelAck "
            + ", ".join(f"{e.value:g}" for e in p.group("setup/delack_")),
            f"`dupack` {', '.join(map(str, plan.dupacks))}; `delack` "
            f"{', '.join(map(str, plan.delacks))} (ACK timer "
            f"{n['delack_ms']:g} ms)",
        ],
        [
            "errors",
            f"two-state on-off model, {p.value('setup/error') * 100:g} %, on every node's "
            "incoming and outgoing traffic",
            f"{ERROR_20}: on-off, lossy {plan.error_rate * 100:g} % of the time, mean lossy "
            f"period {plan.error_burst_ms:g} ms, {plan.error_frames} frames, placement "
            f"`{plan.error_placement}`; {CALIBRATED}: "
            f"{plan.calibrated_rate * 100:g} %, {plan.calibrated_burst_ms:g} ms",
        ],
        [
            "length",
            f"{p.value('setup/duration'):g} s",
            f"{plan.duration_s:g} s of transfer from t = {plan.start_s:g} s, {ctx.runs} seeds per "
            "point",
        ],
    ]


def setup(ctx: Context) -> str:
    runs = ctx.s["runs"]
    dropped = runs["aborted"].sum()
    rows = [*_setup_net(ctx), *_setup_tcp(ctx)]
    return (
        "## The paper's setup and vtlab's\n\n"
        + common.md_table(
            ["", "the paper (ns-2)", "vtlab (`vanet-chain` preset)"], rows, align="lll"
        )
        + "\nThroughput = vtlab's goodput: TCP payload delivered in order / time from the "
        "flow's start to its end, which is the whole transfer time unless the connection is "
        f"dropped ({dropped:.0f} of the paper grid's {len(runs)} runs were). Each point is the "
        "mean over seeds (± 95 % CI); curves over IFQ average the DupAck values of a seed "
        "first.\n"
    )


def _fig_table(ctx: Context, number: int, reading: str) -> str:
    keys = figure_keys(number, reading)
    t = select(ctx.s["ifq"], **keys)
    sp = select(ctx.s["spread"], **keys)
    rows = []
    for tcp in ctx.plan.tcps:
        cells = [tcp]
        for q in ctx.plan.ifqs:
            r = select(t, tcp=tcp, ifq=q)
            cells.append(
                common.fmt_ci(float(r["mean"].iloc[0]), float(r["ci95"].iloc[0]), 1)
                if len(r)
                else "–"
            )
        s = select(sp, tcp=tcp)
        cells.append(f"{s['spread_rel'].max() * 100:.0f} %" if len(s) else "–")
        rows.append(cells)
    heads = ["TCP", *(f"IFQ {q}" for q in ctx.plan.ifqs), "DupAck ≥ 3 spread (max)"]
    return common.md_table(heads, rows)


def results(ctx: Context) -> str:
    text = [
        "## Results\n",
        "**Highest mean throughput (kbit/s) per TCP version**, over DelAck, IFQ and DupAck "
        f"(`maxima.csv` has where each is reached). The paper: almost "
        f"{ctx.paper.value('results/single_max'):g} kbit/s over one hop, "
        f"{ctx.paper.value('results/multi_max_low'):g}–"
        f"{ctx.paper.value('results/multi_max_high'):g} over 8 hops, error-free.\n",
        maxima_markdown(ctx, maxima_table(ctx)),
        "**Each figure** (kbit/s, mean over DupAck ± 95 % CI over seeds; the last column is "
        "the largest relative spread of a curve over DupAck ≥ 3):\n",
    ]
    for n in range(3, 11):
        fig = paper_figures()[n]
        for reading in LOSSY if fig["error"] else (ERROR_20,):
            tag = "" if reading == ERROR_20 else ", calibrated reading"
            stem = f"fig{n}" + ("_calibrated" if reading == CALIBRATED else "")
            text.append(f"*Fig. {n}{tag}* — {fig['caption']} (`{stem}.png`)\n")
            text.append(_fig_table(ctx, n, reading))
    return "\n".join(text)


def readings_note(ctx: Context) -> str:
    """The claims' note on the two readings of the error model."""
    return (
        " A claim about the figures with errors is checked under both readings of the error "
        f"model: [{TAGS[ERROR_20]}] is the paper's {ctx.paper.value('setup/error') * 100:g} % "
        f"read as the preset does; [{TAGS[CALIBRATED]}] is the reading that costs single-hop "
        f"NewReno about {ctx.paper.value('results/degradation') * 100:g} % of its "
        "throughput."
    )


def sections() -> list[Section]:
    return [
        pipeline.header_section(TITLE, header_rows, quick_note),
        Section("setup", setup),
        Section("results", results),
        pipeline.comparison_section(1, note="; degradations in per cent"),
        pipeline.findings_section(
            "The paper's claims, checked on our data",
            "{held} of {total} checks hold in full; the verdict column marks the others (n/a: "
            "nothing to decide it, e.g. no traffic).",
            note=readings_note,
            verdict=verdict_words,
        ),
        Section("assumptions", assumptions.assumptions),
        Section("deviations", assumptions.deviations),
        pipeline.files_section(assumptions.FILES),
    ]


__all__ = ["TITLE", "sections"]
