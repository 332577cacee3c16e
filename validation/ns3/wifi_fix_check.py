"""802.11 fix check: what each of the three ns-3.44 MAC rules of the 802.11 comparison
does to vtlab's side (docs/validation.md, "802.11", "Fixed").

For each cell named (default: the cells docs/validation.md quotes) it runs vtlab's
scenario of that cell (10 seeds) with all three rules (`wifi.rts_nav_reset`,
`wifi.frame_retry_limit`, `wifi.queue_lifetime`), with each one left out in turn, and
with none of them, and prints the mean goodput, MAC retries, retry-limit drops and
queue drops beside ns-3's stored runs of the cell. Needs neither ns-3 nor g++; about
20 s per cell.

    PYTHONPATH=python python validation/ns3/wifi_fix_check.py [CELL ...]
"""

from __future__ import annotations

import json
import statistics
import sys
from typing import Any

from vtlab import _core
from vtlab.validation import wifi
from vtlab.validation.cache import read_records
from vtlab.validation.runner import NS3

CELLS = (
    "h8-rts1-tcpnewreno-d1",
    "h8-rts1-tcpvegas-d1",
    "h4-rts1-tcpnewreno-d1",
    "h8-rts1-tcpnewreno-d1-eonoff",
    "h8-rts1-tcpnewreno-d1-erx",
    "h4-rts1-tcpnewreno-d1-eonoff",
)
#: variant -> the rules it leaves out
VARIANTS = {
    "all three": (),
    "no NAV reset": ("rts_nav_reset",),
    "7 + 7 retries": ("frame_retry_limit",),
    "no lifetime": ("queue_lifetime",),
    "none (before)": ("rts_nav_reset", "frame_retry_limit", "queue_lifetime"),
}
SEEDS = 10


def spec_without(cell: wifi.Cell, rules: tuple[str, ...]) -> dict[str, Any]:
    """The cell's scenario without ``rules``; without the per-frame retry counter it
    keeps the earlier comparison's 7 attempts for data after a CTS too."""
    spec = wifi.vtlab_spec(cell)
    for rule in rules:
        spec["wifi"].pop(rule)
    if "frame_retry_limit" in rules:
        spec["wifi"]["long_retry_limit"] = 7
    return spec


def vtlab_means(spec: dict[str, Any]) -> list[float]:
    """Mean goodput (kbit/s), MAC retries, retry-limit drops, queue drops of SEEDS runs."""
    rows = []
    for seed in range(1, SEEDS + 1):
        out = _core.run(json.dumps(spec), seed, False)
        links = out["links"]
        rows.append(
            (
                out["flows"]["goodput_bps"][0] / 1e3,
                sum(links["mac_retries"]),
                sum(links["mac_retry_drops"]),
                sum(links["drops_queue"]),
            )
        )
    return [statistics.fmean(r[i] for r in rows) for i in range(4)]


def main(names: list[str]) -> None:
    stored = read_records(wifi.stored_ns3_runs_path(), wifi.record_key).values()
    by_cell: dict[str, list[dict[str, float]]] = {}
    for rec in stored:
        if rec["side"] == NS3:
            by_cell.setdefault(rec["cell"], []).append(wifi.compared(rec))
    cells = {c.name: c for c in wifi.CELLS}
    for name in names:
        ns = by_cell[name]
        means = [
            statistics.fmean(r[k] for r in ns)
            for k in ("goodput_bps", "mac_retries", "mac_retry_drops", "mac_queue_drops")
        ]
        print(f"{name}")
        rows = [("ns-3", [means[0] / 1e3, *means[1:]])]
        rows += [(v, vtlab_means(spec_without(cells[name], r))) for v, r in VARIANTS.items()]
        for label, (g, retries, drops, queue) in rows:
            print(
                f"  {label:14s} {g:7.1f} kbit/s  retries {retries:7.0f}  "
                f"retry drops {drops:5.0f}  queue drops {queue:5.0f}"
            )


if __name__ == "__main__":
    main(sys.argv[1:] or list(CELLS))
