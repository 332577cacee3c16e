"""Hu et al.: the report, as a list of sections — the header's own rows, the testbed
against vtlab's model, Table I and where the paper's numbers disagree with each other;
the pipeline's shared sections (header, the paper's numbers, the claims, the files)
around them. Every number is computed from the runs, read from the resolved
``lte-cabin`` scenarios or the core's registry, or read from ``paper.toml``. The later
sections are in :mod:`.discussion`."""

from __future__ import annotations

import vtlab.experiments.hu_lte.discussion as discussion
from vtlab.experiments import common, pipeline
from vtlab.experiments.hu_lte.analysis import (
    gain_ci,
    pct,
    row,
    table1_frame,
    table1_markdown,
    verdict_words,
)
from vtlab.experiments.hu_lte.plan import (
    ACK_PATH_MBPS,
    ADAPTIVE,
    CUBIC,
    CUBIC_6M,
    GOOD_RSRP,
    POOR_RSRP,
    PROFILE,
    STATIC_RSRP,
    Plan,
    preset_lambda,
    setup_numbers,
    size_label,
)
from vtlab.experiments.pipeline import Context, Section

TITLE = "Reproduction: Hu, Lin, Bai & Tonguz — LTE Internet access in moving vehicles"


def header_rows(ctx: Context) -> list[list[str]]:
    cfg, runs = ctx.config, ctx.runs
    profile_note = f"`{PROFILE}` for every run (the paper's stack)" + (
        "" if cfg.profile == PROFILE else f"; `--profile {cfg.profile}` is not used"
    )
    return [
        ["TCP profile", profile_note],
        ["runs per point", f"{runs} (seeds 1–{runs}; seed k gives every scheme the same channel)"],
        ["simulated time per run", f"{ctx.plan.stop_s:g} s"],
    ]


def quick_note(ctx: Context) -> str:
    return (
        f"> **Quick version** (CI): {ctx.runs} runs of {ctx.plan.stop_s:g} s, fewer RSRP "
        "levels, speeds and sensitivity points. The numbers are noisy; run without "
        "`--quick` for the reproduction.\n"
    )


def setup(ctx: Context) -> str:
    n = setup_numbers()
    plan: Plan = ctx.plan
    r = n["rwnd"]
    a = n["acwnd"]
    i_dl, i_ul = n["interference"]
    return (
        "## The testbed and vtlab's model of it\n\n"
        "| | the paper's testbed | vtlab (`lte-cabin` preset) |\n|:---|:---|:---|\n"
        "| path | laptop in a car → LTE hotspot → LTE network → server "
        f"(base RTT about {ctx.paper.value('rtt/base'):g} ms) | laptop —(cabin Wi-Fi "
        f"{n['cabin']})— hotspot —(LTE, {n['radio_delay']} + the TTI wait)— eNB —(core "
        f"{n['core']})— server; propagation RTT {n['base_rtt_ms']:.0f} ms |\n"
        f"| radio | LTE Rel-8, {ctx.paper.value('testbed/bandwidth'):g} MHz; the cell's "
        "scheduler, other users and handovers as they were | the channel model: "
        f"{n['rb']} RBs ({n['mhz']:g} MHz), this user gets {n['share']:g} of them every "
        "TTI; RSRP → SINR (other-cell interference "
        f"{i_dl:g} dBm DL / {i_ul:g} dBm UL per RE) → CQI → MCS → transport block (max "
        f"I_TBS {n['itbs'][0]} DL, {n['itbs'][1]} UL); BLER {n['bler']:g}, up to "
        f"{n['harq']} HARQ transmissions; shadowing σ {n['shadowing'][0]:g} dB "
        f"(decorrelation {n['shadowing'][1]:g} m) and Rayleigh fading only when the car "
        "moves; no handover |\n"
        "| capacity | reacts to load, other users, the scheduler | a schedule per TTI that "
        "does **not** react to other users (the scheduler is abstracted to a fixed share "
        "of RBs); the UL is granted on the UE's buffer reports as in ns-3 (report in the "
        "next TTI, grant used 10 ms later, then every TTI while data is reported) |\n"
        f"| eNB buffer | unknown | {n['buffer']} per user and direction, drop-tail |\n"
        f"| CUBIC | Linux, default receive window | Linux profile, CUBIC, fixed "
        f"{n['recv_buffer']} receive window (send buffer {n['send_buffer']}) |\n"
        "| ARWND | the laptop's receiver (DL) adapts its window from γ = R_m/R_t, "
        "multiplier λ; thresholds not in the text | the laptop's receiver (DL; the "
        "server's receives with CUBIC's window); RTT from echoed timestamps; every R_t: γ ≥ "
        f"{r['gamma_high']:g} → W ← W + λ·W (`{r['mode']}`), R_t > {r['rtt_multiple']:g}·R_m → "
        f"W ← γ·W, else hold; R_m over {r['rm_window_ns'] / 1e9:g} s; W from "
        f"{size_label(int(r['initial_bytes']))} within a {n['arwnd_buffer']} buffer |\n"
        "| ACWND | the laptop's sender (UL): on loss reduce by γ instead of β; grow with "
        "λ while γ ≈ 1 | the laptop's sender (UL; the server sends with CUBIC): "
        f"CUBIC; on loss ssthresh = clamp(γ, {a['min_factor']:g}, {a['max_factor']:g})·cwnd; "
        f"CUBIC's increase × λ while γ ≥ {a['gamma_high']:g}; R_m over {a['rm_window_s']:g} s |\n"
        "| λ | 2–3 good channel / low speed, about 1 poor channel / high speed | preset rule: "
        f"{preset_lambda(0, GOOD_RSRP):g} at ≥ −95 dBm and ≤ 40 km/h, "
        f"{preset_lambda(120, GOOD_RSRP):g} above 100 km/h, else "
        f"{preset_lambda(0, POOR_RSRP):g}; set explicitly in the λ experiments |\n\n"
        f"**Static car.** Speed 0 at RSRP {STATIC_RSRP:g} dBm (the preset's default): with "
        "no motion the channel model has neither shadowing nor fading, so a run varies "
        "only through the HARQ draws. Table I is also run at "
        f"{', '.join(f'{x:g}' for x in plan.table1_rsrps)} dBm because the gain depends on "
        "where the capacity lies against the rate of the baseline's window (its receive "
        "buffer starts at 128 KiB and grows: the `linux` profile's autotuning).\n\n"
        "**Runs.** Each run is one bulk flow (DL: server → laptop; UL: laptop → server) for "
        f"{plan.stop_s:g} s; throughput = payload delivered in order / time. RTT "
        "statistics are each run's RTT samples' mean and percentiles, averaged over runs.\n\n"
        f"**ACK path of the λ-vs-RSRP runs.** At {POOR_RSRP:g} dBm the model's static uplink "
        "is a power-limited UE on a few RBs (about 0.5 Mbit/s, less in a fade). Those "
        "runs give the uplink a fixed schedule of one "
        f"1504-byte opportunity per ms ({ACK_PATH_MBPS:.1f} Mbit/s, granted on request "
        "like the model's uplink) at every RSRP, so that the λ comparison does not "
        "depend on the uplink's fades; the "
        "`ack_path` check below compares it with the model's uplink where both exist.\n"
    )


def table1_section(ctx: Context) -> str:
    t = ctx.s["table1"]
    frame = table1_frame(ctx)
    rows = []
    for d in ("DL", "UL"):
        for rsrp in sorted(t["rsrp"].unique(), reverse=True):
            cells = [d, f"{rsrp:g}"]
            for v in (CUBIC, ADAPTIVE, CUBIC_6M):
                r = row(t, dir=d, rsrp=float(rsrp), variant=v)
                cells.append(
                    f"{r['goodput_mbps']:.2f} ({r['rtt_p95_ms']:.0f})" if r is not None else "–"
                )
            r = row(t, dir=d, rsrp=float(rsrp), variant=ADAPTIVE)
            cells.append(gain_ci(r["gain"], r["gain_ci95"]) if r is not None else "–")
            rows.append(cells)
    return (
        "## Table I\n\n"
        f"Static car, RSRP {STATIC_RSRP:g} dBm, {ctx.runs} runs per entry (the paper: "
        f"{ctx.paper.value('table1/runs'):g}). Gain = ARWND+ACWND / CUBIC − 1 (paired by "
        "seed).\n\n"
        + table1_markdown(ctx, frame)
        + "\n**By RSRP** (throughput in Mbit/s, 95th-percentile RTT in ms in brackets; "
        f"`{CUBIC_6M}` never throttles, so its throughput is the channel's capacity and its "
        "RTT the cost of a full buffer):\n\n"
        + common.md_table(["dir", "RSRP (dBm)", CUBIC, ADAPTIVE, CUBIC_6M, "gain"], rows)
    )


def disagreement(ctx: Context) -> str:
    """Where the paper's own numbers disagree with each other."""
    p = ctx.paper
    dl, ul = p.value("table1/DL/ratio") - 1, p.value("table1/UL/ratio") - 1
    return (
        "\n**The paper's numbers disagree with each other.** Table I gives a DL gain "
        f"of {pct(dl)} ({p.value('table1/DL/ARWND+ACWND'):g} / "
        f"{p.value('table1/DL/CUBIC'):g} − 1) and a UL gain of {pct(ul)}. The text's "
        f"“up to {p.value('text/DL/gain') * 100:.0f}%” and "
        f"“{p.value('text/UL/gain') * 100:.0f}%” match them, but the abstract's "
        f"{p.value('abstract/DL/gain_low') * 100:.0f}–"
        f"{p.value('abstract/DL/gain_high') * 100:.0f} % and Sec. I's "
        f"“up to {p.value('intro/DL/gain') * 100:.0f}%” do not follow from Table I. "
        "Sec. II's testbed "
        f"averages ({p.value('testbed/DL'):g} Mbit/s DL, {p.value('testbed/UL'):g} Mbit/s UL) "
        f"do not match Table I's CUBIC row either ({p.value('table1/DL/CUBIC'):g} DL, "
        f"{p.value('table1/UL/CUBIC'):g} UL): the UL in Table I is "
        f"{p.value('table1/UL/CUBIC') / p.value('testbed/UL'):.1f}× the stated average, "
        "which suggests that Table I's static runs had a much better uplink than the "
        "testbed's average.\n"
    )


def sections() -> list[Section]:
    return [
        pipeline.header_section(TITLE, header_rows, quick_note),
        Section("setup", setup),
        Section("table1", table1_section),
        pipeline.comparison_section(3, note="; gains are in per cent", after=disagreement),
        pipeline.findings_section(
            "The paper's claims, checked on our data",
            "{held} of {total} claims hold in full on this campaign; the verdict column "
            "marks the others (n/a: no data in this campaign).",
            verdict=verdict_words,
        ),
        Section("rtt", discussion.rtt_section),
        Section("lambda", discussion.lambda_section),
        Section("sensitivity", discussion.sensitivity_section),
        Section("not run", discussion.not_run),
        Section("deviations", discussion.deviations),
        pipeline.files_section(discussion.FILES),
    ]
