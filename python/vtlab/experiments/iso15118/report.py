"""ISO 15118-2 over a lossy charging cable: the report — header and setup, the
headline (per stack, the highest loss rate at which a session survives with
probability ≥ 99 %, by the lower Wilson bound), survival, the CurrentDemand tail and
the time to energy per loss rate, the station, the findings and how to read it all.
Every number is computed from the runs, read from the resolved scenarios or from the
plan."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from vtlab.experiments import common, pipeline
from vtlab.experiments.iso15118.analysis import (
    LOOP,
    best_lower_bound,
    fmt_ms,
    fmt_p,
    rare_frame,
    rare_markdown,
)
from vtlab.experiments.iso15118.plan import (
    BURSTS,
    PROFILE,
    STACKS,
    SURVIVAL_TARGET,
    Z95,
    loss_label,
    setup_numbers,
)
from vtlab.experiments.pipeline import Context, Section

TITLE = "Study: ISO 15118-2 charging sessions over a lossy power-line link"
#: The burst size and congestion control of the report's per-loss tables (the full
#: grid is in cells.csv).
SHOWN_BURST = "1–4"

#: The headline's fixed wording (tests look for it).
HEADLINE = (
    "the highest loss rate in the grid at which the session survives with probability "
    f"≥ {SURVIVAL_TARGET * 100:g} %"
)


def _minutes(plan: Any) -> str:
    return f"{plan.duration_s / 60:g}-minute"


def header_rows(ctx: Context) -> list[list[str]]:
    plan, n = ctx.plan, setup_numbers(ctx.plan)
    stacks = ", ".join(f"`{k}` = `{STACKS[k]}`" for k in plan.stacks)
    return [
        [
            "session",
            f"`{PROFILE}`, a {_minutes(plan)} charging loop: {n['exchanges']} exchanges, "
            f"{n['loop_exchanges']} of them {LOOP} ({n['loop_request_bytes']} B → "
            f"{n['loop_response_bytes']} B, every {n['period_ms']:g} ms, deadline "
            f"{n['deadline_ms']:g} ms); a missed deadline ends the session",
        ],
        [
            "link",
            f"`v2g` preset: PLC {n['plc_mbps']:g} Mbit/s, {n['plc_delay_ms']:g} ms; burst "
            "losses at the same mean rate in both directions",
        ],
        ["loss rates", ", ".join(loss_label(x) for x in plan.losses)],
        [
            "burst sizes",
            ", ".join(f"{b} ({BURSTS[b][0]}–{BURSTS[b][1]} packets)" for b in plan.bursts),
        ],
        ["stacks (TCP settings)", stacks],
        ["congestion controls", ", ".join(f"`{c}`" for c in plan.ccs)],
        [
            "runs per cell",
            f"{ctx.runs} (seeds 1–{ctx.runs}; seed k: the same losses for every stack and cc)",
        ],
    ]


def quick_note(ctx: Context) -> str:
    return (
        f"> **Quick version** (CI): {ctx.runs} runs of {_minutes(ctx.plan)} sessions per "
        "cell, a reduced grid. With so few runs no cell can show a survival of "
        f"{SURVIVAL_TARGET:g} (below); run without `--quick` for the study.\n"
    )


def _headline_line(r: pd.Series, runs_word: str) -> str:
    at = (
        f"{int(r['at_survived'])}/{int(r['at_n'])} survived, lower bound {r['at_lo']:.3f}"
        if r["at_n"]
        else ""
    )
    nxt = (
        f"at {loss_label(r['next_loss'])} the weakest cell has {int(r['next_survived'])}/"
        f"{int(r['next_n'])}, lower bound {r['next_lo']:.3f}"
        if math.isfinite(r["next_loss"])
        else "no higher loss rate in the grid"
    )
    if math.isfinite(r["tolerable_loss"]):
        best = loss_label(r["tolerable_loss"])
        return f"* **`{r['stack']}`: {best}** (weakest cell there: {at}; {nxt})."
    limit = (
        f"; with {int(r['n_max'])} {runs_word} per cell the bound cannot exceed "
        f"{r['best_possible_lo']:.3f}"
        if r["best_possible_lo"] < SURVIVAL_TARGET
        else ""
    )
    return f"* **`{r['stack']}`: none** ({nxt}{limit})."


def headline(ctx: Context) -> str:
    h = ctx.s["headline"]
    lines = [
        "## Headline\n",
        f"For each stack, {HEADLINE} — a {_minutes(ctx.plan)} `{PROFILE}` session, one "
        "vehicle, at every burst size and congestion control of the grid and at every "
        "lower loss rate. *Survives with probability ≥ "
        f"{SURVIVAL_TARGET:g}* means: the **lower end of the two-sided 95 % Wilson score "
        f"interval** of the cell's survival is at least {SURVIVAL_TARGET:g}.\n",
    ]
    lines += [_headline_line(r, "runs") for _, r in h.iterrows()]
    return "\n".join(lines) + "\n"


def _pivot(table: pd.DataFrame, stacks: Sequence[str], cell: Callable[[pd.DataFrame], str]) -> str:
    """Rows: loss rate (burst :data:`SHOWN_BURST`, else the first); columns: stacks."""
    bursts = list(dict.fromkeys(table["burst"]))
    burst = SHOWN_BURST if SHOWN_BURST in bursts else bursts[0]
    t = table[table["burst"] == burst]
    rows = []
    for loss in sorted(t["loss"].unique()):
        at = t[t["loss"] == loss]
        rows.append([loss_label(loss), *(cell(at[at["stack"] == s]) for s in stacks)])
    return f"Burst size {burst}:\n\n" + common.md_table(["loss", *stacks], rows)


def _survival_cell(g: pd.DataFrame) -> str:
    if g.empty:
        return "–"
    if g["survived"].nunique() == 1:
        r = g.iloc[0]
        return f"{r['survived']}/{r['n']} [{fmt_p(r['wilson_lo'])}, {fmt_p(r['wilson_hi'])}]"
    return f"{fmt_p(g['survival'].min())}–{fmt_p(g['survival'].max())} (by cc)"


def survival(ctx: Context) -> str:
    plan = ctx.plan
    text = [
        "## Survival\n",
        "Sessions completed / runs, with the 95 % Wilson interval, per loss rate and "
        "stack; one entry when every congestion control gives the same count, else the "
        "range of the survival over them. Every cell is in `cells.csv` (and "
        "`cells.md`); the figure is `survival.png`.\n",
        _pivot(ctx.s["cells"], list(plan.stacks), _survival_cell),
        "![survival](survival.png)\n",
    ]
    return "\n".join(text)


def _tail_cell(g: pd.DataFrame) -> str:
    g = g[g["exchanges"].notna()]
    if g.empty:
        return "–"
    return f"{fmt_ms(g['p99_s'].max())} / {fmt_ms(g['p99.9_s'].max())}"


def _energy_cell(g: pd.DataFrame) -> str:
    if g.empty or not math.isfinite(g["time_to_energy_s"].max()):
        return "–"
    return f"{g['time_to_energy_s'].max():.3f} ({fmt_p(g['reached_energy'].min())})"


def tail_and_energy(ctx: Context) -> str:
    n, stacks = setup_numbers(ctx.plan), list(ctx.plan.stacks)
    return "\n".join(
        [
            f"## {LOOP} response time\n",
            f"p99 / p99.9 (ms) of the {LOOP} response times, pooled over every seed of a "
            "cell (nearest rank over the exchanges that were answered; the largest over the "
            "congestion controls). An exchange the vehicle gave up on has no response time: "
            "it is counted in `missed` in `cells.csv` and ends the session. The deadline is "
            f"{n['deadline_ms']:g} ms; the figure is `currentdemand_tail.png`.\n",
            _pivot(ctx.s["cells"], stacks, _tail_cell),
            "![tail](currentdemand_tail.png)\n",
            "## Time to energy\n",
            "Mean time (s) from the session start to the first CurrentDemand request, over "
            "the sessions that got there (the largest mean over the congestion controls), "
            "and in brackets the smallest share of sessions that got there.\n",
            _pivot(ctx.s["cells"], stacks, _energy_cell),
        ]
    )


def station(ctx: Context) -> str:
    if "station" not in ctx.s:
        return "## Station\n\nThe plan has no station grid.\n"
    n, plan = setup_numbers(ctx.plan), ctx.plan
    h = ctx.s["station_headline"]
    seeds = int(ctx.s["station"]["n"].max()) // max(1, n["station_sessions"])
    lines = [
        "## Station\n",
        f"{n['station_sessions']} vehicles, {n['station_sessions'] // n['station_segments']} "
        f"per power-line segment ({n['station_segments']} segments, drop-tail queues of "
        f"{n['queue_packets']} packets), each with a {_minutes(plan)} session and a bulk "
        f"transfer of {plan.station_bulk} that keeps its segment busy until the run stops at "
        f"{n['station_stop_s']:g} s; {seeds} runs per cell. Survival is per session, the "
        "sessions of all runs pooled (the sessions of one run share segments, so the "
        "interval is narrower than independent sessions would justify). The figure is "
        "`station_survival.png`.\n",
        _pivot(ctx.s["station"], list(plan.stacks), _survival_cell),
        f"Per stack, {HEADLINE}:\n",
        *(_headline_line(r, "sessions") for _, r in h.iterrows()),
        "",
    ]
    return "\n".join(lines)


def rare_section(ctx: Context) -> str:
    plan = ctx.plan
    frame = rare_frame(ctx)
    return "\n".join(
        [
            "## Survival per setting, down to one lost packet in a million\n",
            f"The rare-event estimator (docs/study-iso15118.md): {plan.rare_runs} "
            f"{_minutes(plan)} sessions with exactly k loss bursts at random packet "
            "positions per k, k = 1, 2, … until the bursts beyond the largest k weigh "
            "less than 10⁻⁴ at the highest tolerable loss; combined with the binomial "
            "number of bursts a session meets. *Highest loss for ≥ 99 %*: the highest "
            "mean loss each way (10⁻⁸ … 10⁻², 40 per decade) at which the lower end of "
            f"the interval reaches {SURVIVAL_TARGET:g} there and at every lower one. "
            "Intervals are simultaneous 95 % (Bonferroni over k). **≥** marks a setting "
            "whose simulated sessions all survived: its limit is the number of runs, not "
            "the setting. `rare.csv` has every row; the runs' counts are in `rare/`.\n",
            rare_markdown(frame),
        ]
    )


def method(ctx: Context) -> str:
    z = Z95
    return "\n".join(
        [
            "## How to read this report\n",
            "* **Survival** of a cell: the share of its runs whose session completed (every "
            "exchange answered before its deadline).",
            f"* **Wilson interval** (two-sided 95 %, z = {z:.4f}): for k of n, (p̂ + z²/2n ± "
            "z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n). Its lower end can reach "
            f"{SURVIVAL_TARGET:g} only when n ≥ {_runs_needed()} (all surviving): "
            f"{best_lower_bound(_runs_needed()):.4f}.",
            "* **Headline**: a loss rate counts when every cell at it and at every lower "
            "loss rate (every burst size and congestion control) has its lower Wilson "
            "bound ≥ the target; per burst size and congestion control in "
            "`tolerable_by_cc.csv`.",
            "* **Tail**: the message rows are stored as counts of equal response times "
            "per run (exact), then pooled over the seeds of a cell.",
            "* **Files**: `cells.csv` (every cell), `headline.csv`, `tolerable_by_cc.csv`, "
            "`station.csv`, `findings.csv`, the figures as PNG and SVG, and the run store "
            "(`flows/`, `sessions/`, `messages/`, ...: one Parquet dataset per table; a "
            "rerun resumes from it).\n",
        ]
    )


def _runs_needed() -> int:
    n = 1
    while best_lower_bound(n) < SURVIVAL_TARGET:
        n += 1
    return n


def sections() -> list[Section]:
    return [
        pipeline.header_section(TITLE, header_rows, quick_note),
        Section("headline", headline),
        Section("survival", survival),
        Section("tail", tail_and_energy),
        Section("station", station),
        Section("rare", rare_section),
        pipeline.findings_section("Findings", headers=("where", "statement", "vtlab", "verdict")),
        Section("method", method),
    ]


__all__ = ["HEADLINE", "TITLE", "sections"]
