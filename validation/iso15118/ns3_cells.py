"""Run the ns-3 ISO 15118 session reference (validation/ns3/iso15118.cc) on the stored
cells and summarise them: 10 min of CurrentDemand at 4 Hz (2400 x 60 B requests /
70 B responses, deadline 0.25 s, period 0.25 s) at mean loss 1 %/1 % and 5 %/5 %
(toward the EVCC / toward the SECC), seeds (RngRun) 1..3, TCP timestamps on (the
contract) and, for comparison, off.

    PYTHONPATH=python python validation/iso15118/ns3_cells.py [--out validation/iso15118/ns3]

One process at a time. Writes <out>/cd-loss{L}-rev{R}-seed{S}.jsonl (the program's
stdout, timestamps on; the timestamps-off runs are summarised only: the validation
stores its own, 100 seeds per cell with the lost packet positions, in runs.jsonl.gz
via `vtlab validate iso15118 --rerun-ns3 --store-ns3`) and <out>/summary.json (per
cell and pooled per loss level: wall time, response-time
percentiles, misses).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vtlab import _core
from vtlab.ns3.iso15118 import iso15118_args
from vtlab.ns3.process import run_process
from vtlab.ns3.program import ISO15118_PROGRAM, build_program

STEP = {
    "name": "CurrentDemand",
    "request": 60,
    "response": 70,
    "timeout": 0.25,
    "repeats": 2400,
    "period": 0.25,
}
LOSSES = [(0.01, 0.01), (0.05, 0.05)]
SEEDS = [1, 2, 3]
QUANTILES = [0.5, 0.9, 0.99, 0.999]


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default method)."""
    if not sorted_values:
        return float("nan")
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def stats(rows: list[dict]) -> dict:
    times = sorted(r["response_time_s"] for r in rows if r["response_time_s"] is not None)
    return {
        "messages": len(rows),
        "answered": len(times),
        "misses": sum(r["missed"] for r in rows),
        **{f"p{q * 100:g}_s": quantile(times, q) for q in QUANTILES},
        "max_s": times[-1] if times else float("nan"),
    }


def resolved(loss: float, reverse_loss: float, timestamps: bool) -> dict:
    """The resolved v2g scenario of a cell: its session, burst loss of these means toward
    the EVCC and toward the SECC, no queue disc (the program installs none)."""
    spec = {
        "preset": "v2g",
        "qdisc": "none",
        "loss": {"model": "burst", "mean_loss": loss},
        "reverse_loss": {"model": "burst", "mean_loss": reverse_loss},
        "tcp": {"timestamps": timestamps},
        "session": {"profile": "custom", "abort_on_miss": False, "steps": [STEP]},
    }
    return json.loads(_core.expand(json.dumps(spec)))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("validation/iso15118/ns3"))
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    binary = build_program(ISO15118_PROGRAM, log=lambda s: print(s, file=sys.stderr))
    cells = []
    for timestamps in (True, False):
        for loss, rev in LOSSES:
            pooled: list[dict] = []
            for seed in SEEDS:
                args = iso15118_args(resolved(loss, rev, timestamps), seed)
                proc = run_process([str(binary.path), *args])
                if proc.returncode != 0:
                    print(proc.stderr, file=sys.stderr)
                    return 1
                if timestamps:
                    name = f"cd-loss{loss:g}-rev{rev:g}-seed{seed}.jsonl"
                    (a.out / name).write_text(proc.stdout)
                else:  # summarised only (`vtlab validate iso15118` stores these cells)
                    name = f"runs.jsonl.gz (loss {loss:g}, seed {seed})"
                lines = [json.loads(x) for x in proc.stdout.splitlines()]
                rows, summary = lines[:-1], lines[-1]
                pooled.extend(rows)
                cell = {
                    "file": name,
                    "timestamps": timestamps,
                    "loss": loss,
                    "reverse_loss": rev,
                    "seed": seed,
                    "process_wall_s": proc.wall_s,
                    "program_wall_s": summary["wall_s"],
                    "max_rss_mib": proc.max_rss_mib,
                    "completed": summary["completed"],
                    "end_s": summary["end_s"],
                    **stats(rows),
                }
                cells.append(cell)
                print(json.dumps(cell), file=sys.stderr)
            cells.append(
                {
                    "file": None,
                    "timestamps": timestamps,
                    "loss": loss,
                    "reverse_loss": rev,
                    "seed": "pooled",
                    **stats(pooled),
                }
            )
    (a.out / "summary.json").write_text(
        json.dumps(
            {"binary": binary.short_hash, "ns3": binary.ns3_version, "cells": cells}, indent=1
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
