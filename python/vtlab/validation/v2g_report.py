"""The report of the bulk-transfer grid (:mod:`vtlab.validation.v2g`): provenance and
grid, topologies, agreement (verdict rule, the cells that do not agree, worst ratios,
the table), the charging station's aggregate goodput and the rankings, on the skeleton
of :mod:`vtlab.validation.report`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vtlab.validation.report import f, mci, pct, ratio_ci_text
from vtlab.validation.report import write_report as write_skeleton
from vtlab.validation.station import station_section, topology_lines
from vtlab.validation.verdict import AGREE_TOLERANCE, CONSISTENT_TOLERANCE, verdict_counts

__all__ = ["write_report"]

#: The closing paragraph of the report.
FILES = (
    "Files: `agreement.csv` / `agreement.parquet` (this table), `runs.jsonl` (every "
    "run, the cache that lets an interrupted validation resume)."
)


def _vehicles(topology: str) -> str:
    return "1 vehicle" if str(topology) == "1" else f"{topology} vehicles"


def _cell(row: Mapping[str, Any]) -> str:
    topology = str(row.get("topology", "1"))
    where = "" if topology == "1" else f", {topology} vehicles"
    return f"{row['cc']}, {pct(row['loss'])}{where}"


def _stored_text(meta: Mapping[str, Any]) -> str:
    n = int(meta.get("runs_stored", 0) or 0)
    return f", {n} of them from the stored ns-3 runs" if n else ""


def _qdisc_text(qdisc: str) -> str:
    """The queueing sentence of the report header for a ``--qdisc`` setting."""
    if qdisc == "none":
        return "drop-tail 100 packets on every device, no qdisc (`--qdisc none`)"
    return (
        "on every device ns-3's stock traffic control: an FqCoDel root queue disc at "
        "ns-3's defaults feeding a "
        "100-packet drop-tail device queue with flow control; vtlab `qdisc = "
        '"fq_codel"` (`--qdisc stock`)'
    )


def _report_header(table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> list[str]:
    """Title, provenance, grid and topologies of the report."""
    seeds = list(meta.get("seeds", []))
    seed_text = f"{seeds[0]}..{seeds[-1]}" if len(seeds) > 1 else ", ".join(map(str, seeds))
    lines = [
        "# vtlab versus ns-3: cross-validation report",
        "",
        f"* Command: `{meta.get('command', '')}`",
    ]
    if meta.get("explicit_command") and meta.get("explicit_command") != meta.get("command"):
        lines.append(f"* Same grid, spelled out: `{meta['explicit_command']}`")
    lines += [
        f"* vtlab {meta.get('vtlab_version', '?')} (core sha256 {meta.get('vtlab_hash', '?')}),"
        f" profile {meta.get('profile', 'ns3')}",
        f"* ns-3 {meta.get('ns3_version', '?')} (`validation/ns3/v2g.cc`, results "
        f"hash {meta.get('ns3_hash', '?')})",
        f"* Wall time {float(meta.get('wall_s', math.nan)):.1f} s "
        f"({meta.get('runs_done', 0)} runs now, {meta.get('runs_cached', 0)} from "
        f"`runs.jsonl`{_stored_text(meta)}; {meta.get('jobs', 1)} jobs) · "
        f"{meta.get('date', '')}",
    ]
    run_time = meta.get("run_time_s")
    if run_time:
        lines.append(
            "* Run time summed over the grid's runs (ns-3's each its own process, "
            "vtlab's in this one): "
            + ", ".join(f"{side} {float(t):,.1f} s" for side, t in run_time.items())
        )
    topologies: list[str] = []
    for r in table:
        if str(r.get("topology", "1")) not in topologies:
            topologies.append(str(r.get("topology", "1")))
    topo_text = ", ".join(_vehicles(t) for t in topologies)
    lines += [
        f"* Grid: {len({r['cc'] for r in table})} algorithms × "
        f"{len({r['loss'] for r in table})} mean losses × seeds {seed_text} "
        f"(ns-3 `--run=k`) × {int(meta.get('bytes', 0)):,} bytes, topology {topo_text}",
        "",
        "TCP at ns-3's defaults on both sides: SACK + PRR, timestamps (1512 B IP packets, "
        "fragmented at MTU 1500), delayed ACK 2 / 200 ms, minimum RTO 1 s, initial window "
        f"10, MSS 1460, 128 KiB buffers; {_qdisc_text(str(meta.get('qdisc', 'none')))}; "
        "burst loss (bursts of 1..4 packets). Goodput is in Mbit/s, mean ± 95 % CI "
        "(Student t) over seeds; RTO counts every expiry (back-offs included), FR counts "
        "fast-recovery entries.",
        "",
        "## Topologies",
        "",
    ]
    lines += topology_lines(topologies)
    lines.append("")
    skipped = dict(meta.get("skipped", {}))
    if skipped:
        lines += ["## Skipped algorithms", ""]
        lines += [f"* {cc}: {why}" for cc, why in skipped.items()]
        lines.append("")
    return lines


def _report_agreement(table: Sequence[Mapping[str, Any]]) -> list[str]:
    """The agreement section: verdict rule and counts, the non-agreeing cells, worst
    ratios, the table."""
    counts = verdict_counts(table)
    ratios = [(r["ratio"], r) for r in table if not math.isnan(r["ratio"])]
    missing = f"; {counts['missing']} missing" if counts["missing"] else ""
    lines: list[str] = [
        "## Agreement",
        "",
        f"**{counts['agree']} of {len(table)} cells agree; {counts['consistent']} "
        f"consistent; {counts['differs']} differ{missing}.**",
        "",
        f"Verdict per cell from the ratio of mean goodputs vtlab/ns-3 and its 95 % "
        f"confidence interval (Fieller's theorem for two independent means, Welch–"
        f"Satterthwaite degrees of freedom): **agree** when the ratio is within "
        f"±{AGREE_TOLERANCE:.0%}; **consistent** when outside ±{AGREE_TOLERANCE:.0%} but "
        f"within ±{CONSISTENT_TOLERANCE:.0%} and the interval contains 1; **differs** "
        "otherwise. Only *agree* counts as agreement.",
    ]
    others = [r for r in table if r["verdict"] != "agree"]
    if others:
        lines += ["", "Cells that do not agree:", ""]
        for r in others:
            lines.append(
                f"* {_cell(r)}: {r['verdict']}, ratio {f(r['ratio'])} "
                f"(95 % CI {ratio_ci_text(r)}; vtlab "
                f"{mci(r['vtlab_goodput_mbps'], r['vtlab_goodput_ci95_mbps'])}, ns-3 "
                f"{mci(r['ns3_goodput_mbps'], r['ns3_goodput_ci95_mbps'])} Mbit/s)"
            )
    if ratios:
        lo = min(ratios, key=lambda x: x[0])
        hi = max(ratios, key=lambda x: x[0])
        lines += [
            "",
            f"Worst ratios: lowest {lo[0]:.3f} ({_cell(lo[1])}), "
            f"highest {hi[0]:.3f} ({_cell(hi[1])}).",
        ]
    lines += [
        "",
        "| algorithm | loss | vehicles | vtlab goodput | ns-3 goodput | ratio | ratio 95 % CI "
        "| RTO vtlab | RTO ns-3 | FR vtlab | FR ns-3 | retx vtlab | retx ns-3 | verdict |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in table:
        v = r["verdict"]
        lines.append(
            f"| {r['cc']} | {pct(r['loss'])} | {r['topology']} "
            f"| {mci(r['vtlab_goodput_mbps'], r['vtlab_goodput_ci95_mbps'])} "
            f"| {mci(r['ns3_goodput_mbps'], r['ns3_goodput_ci95_mbps'])} "
            f"| {f(r['ratio'])} | {ratio_ci_text(r)} | {f(r['vtlab_rto_expiries'], 1)} "
            f"| {f(r['ns3_rto_expiries'], 1)} | {f(r['vtlab_fast_recoveries'], 1)} "
            f"| {f(r['ns3_fast_recoveries'], 1)} | {f(r['vtlab_retransmissions'], 0)} "
            f"| {f(r['ns3_retransmissions'], 0)} | {v if v == 'agree' else f'**{v}**'} |"
        )
    return lines


def _report_rankings(ranks: Sequence[Mapping[str, Any]]) -> list[str]:
    """Rankings by mean goodput on both sides."""
    lines: list[str] = []
    lines += [
        "",
        "## Rankings by mean goodput (best first)",
        "",
        "Orders at equal goodput (e.g. loss-free, where every algorithm fills the "
        "link) are noise; *significant inversions* are pairs that both sides separate "
        "(non-overlapping 95 % CIs) in opposite order.",
        "",
        "| loss | vehicles | vtlab | ns-3 | Spearman ρ | same order | significant inversions |",
        "|---:|---:|---|---|---:|---|---|",
    ]
    for rk in ranks:
        inv = ", ".join(rk["significant_inversions"]) or "none"
        lines.append(
            f"| {pct(rk['loss'])} | {rk.get('topology', '1')} | {' > '.join(rk['vtlab_order'])} "
            f"| {' > '.join(rk['ns3_order'])} | {f(rk['spearman'], 2)} "
            f"| {'yes' if rk['same_order'] else 'no'} | {inv} |"
        )
    return lines


def write_report(
    out: Path,
    table: Sequence[Mapping[str, Any]],
    ranks: Sequence[Mapping[str, Any]],
    meta: Mapping[str, Any],
) -> dict[str, Path]:
    """Write ``report.md``, ``agreement.csv`` and ``agreement.parquet`` into ``out``.

    ``meta`` keys used: ``command``, ``explicit_command``, ``vtlab_version``,
    ``vtlab_hash``, ``ns3_version``, ``ns3_hash``, ``wall_s``, ``runs_done``,
    ``runs_cached``, ``runs_stored``, ``run_time_s`` (side -> summed run wall time),
    ``seeds``, ``bytes``, ``qdisc``, ``profile``, ``skipped`` (cc -> reason),
    ``errors``, ``jobs``, ``date``.
    """
    sections = [
        _report_header(table, meta),
        _report_agreement(table),
        station_section(table),
        _report_rankings(ranks),
    ]
    return write_skeleton(out, table, sections, errors=list(meta.get("errors", [])), files=FILES)
