"""The LTE family's report (:mod:`vtlab.validation.lte`): ``report.md``, and
``agreement.csv`` (main and diagnostic rows) and ``speed.csv`` in the family's own
CSV form (numbers to 6 significant digits, NaN empty, CRLF lines), which the committed
tables under ``validation/lte/`` are in."""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vtlab.ns3.lte import CORE_DELAY_MS
from vtlab.validation.lte_cases import (
    DEFAULT_DURATION_S,
    DEFAULT_REPEAT,
    DIAGNOSTIC,
    GRANT_PIPELINE_MS,
    TOLERANCE,
    UPLINK_OPPORTUNITY_BYTES,
)
from vtlab.validation.report import f

__all__ = ["write_csv", "write_report"]


def _table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [
        "| case | ns-3 goodput | vtlab goodput | ratio | ns-3 RTT mean / p95 "
        "| vtlab RTT mean / p95 | ratios mean / p95 | retx ns-3 / vtlab "
        "| recoveries ns-3 / vtlab (RTO) | verdict |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['case']} | {f(r['ns3_goodput_mbps'])} | {f(r['vtlab_goodput_mbps'])} "
            f"| {f(r['goodput_ratio'])} "
            f"| {f(r['ns3_rtt_mean_ms'], 1)} / {f(r['ns3_rtt_p95_ms'], 1)} "
            f"| {f(r['vtlab_rtt_mean_ms'], 1)} / {f(r['vtlab_rtt_p95_ms'], 1)} "
            f"| {f(r['rtt_mean_ratio'])} / {f(r['rtt_p95_ratio'])} "
            f"| {r['ns3_retransmissions']} / {r['vtlab_retransmissions']} "
            f"| {r['ns3_recoveries']} / {r['vtlab_fast_recoveries']} ({r['vtlab_rtos']}) "
            f"| {r['verdict']} |"
        )
    return lines


def _small_buffer_miss(r: Mapping[str, Any]) -> str:
    """The bullet of a small-buffer case whose goodput vtlab overestimates."""
    return (
        f"* **{r['case']}** ({r['verdict']}): ns-3's uplink returns each "
        "window's ACKs together: the UE reports its buffer in the TTI after the "
        "first ACK, the grant comes about 10 ms later and carries every ACK queued "
        "by then. The sender then emits the next window as one back-to-back burst, "
        "and the RLC buffer keeps 6 packets of it: ns-3 delivers about one buffer "
        "per RTT (6 × 1448 B / 80 ms ≈ 0.87 Mbit/s before retransmissions) with "
        f"{r['ns3_recoveries']} fast recoveries. An uplink served without requests "
        "returns ACKs as the data arrives, so the sender's bursts are paced by the "
        f"downlink and the window grows past the buffer "
        f"({r['vtlab_fast_recoveries']} recoveries, {r['vtlab_rtos']} RTO): serve "
        "the uplink on request (`capacity_up.grant`, the main table's default)."
    )


def _explanations(
    rows: Sequence[Mapping[str, Any]], diag: Sequence[Mapping[str, Any]]
) -> list[str]:
    """One bullet per missed comparison of the main table."""
    out = []
    for r in rows:
        if not str(r["verdict"]).startswith("DIFFERS"):
            continue
        if r["rlc_buffer_bytes"] <= 64 * 1024 and r["goodput_ratio"] > 1:
            out.append(_small_buffer_miss(r))
        else:
            out.append(
                f"* **{r['case']}** ({r['verdict']}): not one of the known causes "
                "(docs/validation.md, section LTE); investigate with `vtlab run` on "
                "the scenario in `scenarios/`."
            )
    return out


def _csv_value(v: Any) -> Any:
    if isinstance(v, float):
        return "" if math.isnan(v) else f"{v:.6g}"
    return v


def write_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """``rows`` as CSV (columns of the first row; floats to 6 significant digits, NaN
    empty); nothing for no rows."""
    if not rows:
        return
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: _csv_value(v) for k, v in r.items()})


def _method_lines(meta: Mapping[str, Any]) -> list[str]:
    """The report's method section."""
    return [
        "## Method",
        "",
        "* **Capacity**: ns-3's UDP-saturated run of the same mobility (`*_capacity`, "
        "100 Mbit/s offered into a 2 MiB RLC buffer): the bytes of its correctly decoded "
        "transport blocks per ms are the channel's capacity whatever the traffic. The "
        "TCP runs' own TBs are not: they exist only when TCP had data (with 10 240 B "
        "buffers 1.06 Mbit/s of a 35 Mbit/s channel, much of it padding), and replaying "
        "them would hand vtlab ns-3's answer.",
        "* **Trace**: first TB moved to ms 0, one opportunity per 1504 TB bytes "
        "(1500 B IP + 2 B PDCP + 2 B RLC UM header), each carrying one 1500-byte packet "
        "in vtlab (`opportunity_bytes = 1500`); the trace's last ms are repeated to "
        "cover the whole run.",
        f"* **Delays**: core {CORE_DELAY_MS:g} ms one way at 10 Gbit/s as in ns-3; the "
        "radio delay r = (base RTT − 2·core − 1 TTI − the idle uplink's request–grant "
        f"wait of {GRANT_PIPELINE_MS} ms)/2 = "
        f"{f(meta.get('radio_delay_ms'), 3)} ms one way (half a TTI of alignment wait "
        "each way). In the replay every departure is on a TTI boundary, so the ACK "
        "clock locks to the grid: an idle flow's RTT is 2·core + 2·⌈r⌉ + the wait, "
        f"{f(meta.get('replay_base_rtt_ms'), 1)} ms, against ns-3's measured "
        f"{f(meta.get('ns3_base_rtt_ms'), 2)} ms (80 ms less 71 µs: its radio part is "
        "* **Buffer**: RLC `MaxTxBufferSize` counts PDCP PDUs (IP + 2 B); vtlab's "
        "`buffer` counts IP bytes: buffer = RLC bytes × 1500/1502 (the same number of "
        "full packets fit: 6 and 1396).",
        "* **Uplink** (ACKs): ns-3's 50-RB uplink (EARFCN 18100, PF scheduler), "
        "granted on the UE's buffer status reports; `lte.cc` does not trace uplink TBs "
        "in a downlink run, so its capacity is not recorded. vtlab: one "
        f"{UPLINK_OPPORTUNITY_BYTES} B opportunity per TTI (12 Mbit/s, about 20× the "
        "ACK load of 1 500 ACKs/s × 52 B ≈ 0.63 Mbit/s at 35 Mbit/s; no uplink drops), "
        "served on request with ns-3's timing (`capacity_up.grant = true`): a buffer "
        "status report in the TTI after data arrives, 6 ms to the scheduler (the UE's "
        "PHY holds it 4 TTIs, one to the eNB's MAC, one for the DCI), whose grant of "
        "the whole opportunity is used 4 ms later and carries whatever is queued then.",
        "* **TCP**: profile ns3 (SACK + PRR, delayed ACK 2, initial window 10, minimum "
        "RTO 1 s), Cubic, MSS 1448 with timestamps (1500-byte packets), 4 MiB send and "
        "receive buffers; UE = receiver (no Wi-Fi hop: cabin link 10 Gbit/s, 0 ms).",
        "* **Goodput**: bytes received × 8 / (last byte − flow start) on both sides.",
        "* **RTT**: vtlab's per-ACK samples (timestamp echo, exact). ns-3's `LastRTT` is "
        "a `TracedValue` that fires only on change, so `lte.cc`'s statistics are over "
        "changes of a whole-ms value; the table uses their per-ACK reconstruction "
        "(each value weighted by the data delivered while it held), with the printed "
        "statistics in `agreement.csv` (`ns3_rtt_*_printed_ms`).",
        "",
    ]


def _speed_lines(speed_rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> list[str]:
    """The report's speed section."""
    lines = [
        "",
        "## Speed",
        "",
        f"Wall time per {float(meta.get('duration_s', DEFAULT_DURATION_S)):g} s "
        "simulated. ns-3: `Simulator::Run` alone, and the whole process (spawn "
        "to exit), from its result file. vtlab: the event loop (measured in the "
        "core) and the whole `vtlab._core.run` call (scenario and trace parsing, "
        f"set-up, run, result tables), median of {meta.get('repeat', DEFAULT_REPEAT)} "
        "after a warm-up, in this process (Python start-up excluded). Goal: 100×.",
        "",
        "| case | ns-3 Run s | ns-3 process s | vtlab loop s | vtlab call s "
        "| speed-up loop | speed-up whole | goal 100× |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for s in speed_rows:
        lines.append(
            f"| {s['case']} | {f(s['ns3_run_wall_s'])} | {f(s['ns3_process_wall_s'])} "
            f"| {f(s['vtlab_engine_wall_s'], 4)} | {f(s['vtlab_call_wall_s'], 4)} "
            f"| {f(s['speedup_simulation'], 0)}× | {f(s['speedup_whole'], 0)}× "
            f"| {s['goal_100x']} |"
        )
    missed = [s["case"] for s in speed_rows if s["goal_100x"] == "missed"]
    if missed:
        lines += [
            "",
            f"Missed: {', '.join(missed)}. vtlab's times of a few ms move with the load "
            "of the (shared) machine, and ns-3's are from its own run, at another moment: "
            "rerun with a larger `--repeat` before reading a miss as a cost per event.",
        ]
    return lines


def _head_lines(rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> list[str]:
    """The title, the provenance lines, the method and the agreement table."""
    tol = float(meta.get("tolerance", TOLERANCE))
    n_agree = sum(1 for r in rows if r["verdict"] == "agree")
    seed_note = (
        "identical results: the replay is deterministic"
        if meta.get("deterministic")
        else "results differ between seeds: means shown"
    )
    return [
        "# vtlab versus ns-3's LTE module: trace replay",
        "",
        f"* Command: `{meta.get('command', '')}`",
        f"* vtlab {meta.get('vtlab_version', '?')} (core sha256 "
        f"{meta.get('vtlab_hash', '?')}), preset `lte-cabin`, TCP profile ns3, Cubic",
        f"* ns-3 {meta.get('ns3_version', '?')}, `validation/ns3/lte.cc` results hash "
        f"{meta.get('ns3_hash', '?')}; results: {meta.get('ns3_sources', '')}",
        f"* {float(meta.get('duration_s', DEFAULT_DURATION_S)):g} s simulated per case; "
        f"vtlab seeds {meta.get('seeds_text', '1')} "
        f"({seed_note})"
        f" · wall {float(meta.get('wall_s', math.nan)):.1f} s · {meta.get('date', '')}",
        "",
        *_method_lines(meta),
        "## Agreement",
        "",
        f"Verdict: **agree** if goodput, RTT mean and RTT p95 are each within "
        f"±{tol * 100:g} % of ns-3's, else **DIFFERS** naming those outside. "
        f"{n_agree} of {len(rows)} cases agree. Goodput in Mbit/s, RTT in ms.",
        "",
        *_table(rows),
    ]


def _diagnostic_lines(diag_rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return [
        "",
        f"## Diagnostic: {diag_rows[0]['variant']}",
        "",
        DIAGNOSTIC.description[:1].upper() + DIAGNOSTIC.description[1:] + ". "
        "It agrees on the 2 MiB cases, where the ACKs come in a steady stream and "
        "grants flow every TTI, and misses the 10 KiB ones: returning ACKs as the data "
        "arrives paces the sender's bursts by the downlink, so its window grows past "
        "the RLC buffer instead of losing most of every burst, as ns-3's does when "
        "each window's ACKs come back in one grant.",
        "",
        *_table(diag_rows),
    ]


def write_report(
    out: Path,
    rows: Sequence[Mapping[str, Any]],
    diag_rows: Sequence[Mapping[str, Any]],
    speed_rows: Sequence[Mapping[str, Any]],
    meta: Mapping[str, Any],
) -> dict[str, Path]:
    """Write ``report.md`` and ``agreement.csv`` (main and diagnostic rows, column
    ``variant``), and ``speed.csv`` when there are speed rows, into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"report": out / "report.md", "csv": out / "agreement.csv"}
    write_csv(paths["csv"], [*rows, *diag_rows])
    if speed_rows:
        paths["speed"] = out / "speed.csv"
        write_csv(paths["speed"], speed_rows)
    lines = _head_lines(rows, meta)
    expl = _explanations(rows, diag_rows)
    if expl:
        lines += ["", "### Misses", "", *expl]
    if diag_rows:
        lines += _diagnostic_lines(diag_rows)
    if speed_rows:
        lines += _speed_lines(speed_rows, meta)
    lines += [
        "",
        "Files: `agreement.csv` (both tables, more columns), "
        + ("`speed.csv`, " if speed_rows else "")
        + "`ns3-cache.jsonl` (the ns-3 runs: results hash, arguments, file, wall times), "
        "`scenarios/<case>.toml` (vtlab's scenario of each case: `vtlab run --scenario`, "
        "from the directory the command ran in) and `traces/` (the capacity traces).",
        "",
    ]
    paths["report"].write_text("\n".join(lines))
    return paths
