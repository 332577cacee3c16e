"""Park 2019, Table 2's 10 MB row: vtlab, ns-3.44 and the paper side by side, and the
same row under the defaults of the paper's ns-3 (≤ 3.30).

Two run sets, both under ``validation/park2019/`` in the ``runs.jsonl`` format of
``vtlab validate v2g`` (one record per run, ``side`` ``vtlab`` or ``ns-3``):

* ``table2-10mb/``: ns-3.44 and vtlab's ``ns3`` profile at their defaults, written by
  ``vtlab validate v2g --cc ... --loss 5% --runs 10 --bytes 10MB --out
  validation/park2019/table2-10mb`` (with its ``agreement.csv`` and ``report.md``);
* ``table2-10mb-pre332/``: the same cells with the two TCP defaults that ns-3.32
  changed (CHANGES.md, "Changes from ns-3.31 to ns-3.32": the initial window from 1 to
  10 segments, the loss recovery from classic to PRR), on both sides:
  :data:`PRE_332` on vtlab and, through :func:`vtlab.ns3.v2g.ns3_args`,
  ``--initialCwnd=1 --recovery=classic`` on ns-3.44; vtlab also runs the original
  ``westwood`` (ns-3 removed ``TcpWestwood`` in 3.38). Written by :func:`run_pre332`
  (``python -m vtlab.experiments.park2019.table2_10mb``).

:func:`side_by_side` reads both and the paper's values (``paper.toml``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from vtlab import _core
from vtlab.api import core_build
from vtlab.experiments.park2019.plan import VARIANTS
from vtlab.ns3.program import ensure_binary
from vtlab.ns3.v2g import ns3_args
from vtlab.packagedata import validation_dir
from vtlab.validation.runner import NS3, VTLAB
from vtlab.validation.v2g import Task, execute, loss_key, vtlab_spec
from vtlab.validation.verdict import mean_ci, ratio_ci, verdict

#: Table 2's columns (paper label) and the algorithm both simulators run for it (the
#: paper's Westwood as Westwood+, the only Westwood ns-3.44 has).
CELLS = VARIANTS
SIZE_MB = 10
LOSS = 0.05
#: The ns-3 TCP defaults before ns-3.32 that vtlab's ns3 profile can express.
PRE_332: dict[str, Any] = {"initial_cwnd": 1, "prr": False}
DEFAULTS_DIR = "park2019/table2-10mb"
PRE_332_DIR = "park2019/table2-10mb-pre332"
#: "Near the paper": the reproductions' ±25 % band.
NEAR = 0.25
QDISC = "stock"  #: the validation grids' queue disc (FqCoDel; 5 % loss never fills it)


def load_runs(path: Path) -> list[dict[str, Any]]:
    """The records of a ``runs.jsonl`` (blank lines skipped)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _tasks(seeds: Sequence[int], nbytes: int) -> list[Task]:
    binary = ensure_binary()
    vt_hash = core_build()
    tasks = []
    for cc in [*CELLS.values(), "westwood"]:
        spec = vtlab_spec(cc, LOSS, nbytes, qdisc=QDISC)
        spec["tcp"].update(PRE_332)
        expanded = json.loads(_core.expand(json.dumps(spec)))
        for seed in seeds:
            tasks.append(
                Task(VTLAB, cc, LOSS, seed, nbytes, vt_hash, json.dumps(spec), qdisc=QDISC)
            )
            if cc != "westwood":
                path, args = str(binary.path), ns3_args(expanded, seed)
                tasks.append(
                    Task(
                        NS3,
                        cc,
                        LOSS,
                        seed,
                        nbytes,
                        binary.results_hash,
                        binary=path,
                        args=args,
                        qdisc=QDISC,
                    )
                )
    return tasks


def run_pre332(out: Path, seeds: Sequence[int], jobs: int = 1) -> Path:
    """Run the 10 MB row under :data:`PRE_332` on both sides (vtlab also ``westwood``)
    and write ``out/runs.jsonl``, one record per run with the overrides under ``tcp``
    and ns-3's arguments under ``ns3_args``."""
    tasks = _tasks(seeds, SIZE_MB * 1_000_000)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        records = list(pool.map(execute, tasks))
    out.mkdir(parents=True, exist_ok=True)
    path = out / "runs.jsonl"
    lines = []
    for task, rec in zip(tasks, records, strict=True):
        rec = {**rec, "tcp": PRE_332, **({"ns3_args": task.args} if task.side == NS3 else {})}
        rec.pop("wall_s", None)
        lines.append(json.dumps(rec, sort_keys=True))
    path.write_text("\n".join(sorted(lines)) + "\n")
    return path


def _goodputs(runs: Sequence[Mapping[str, Any]], side: str, cc: str) -> list[float]:
    return [
        r["goodput_bps"] / 1e6
        for r in runs
        if r["side"] == side
        and r["cc"] == cc
        and loss_key(r["loss"]) == LOSS
        and r["bytes"] == SIZE_MB * 1_000_000
    ]


def _cell(values: Sequence[float]) -> dict[str, float]:
    mean, ci, n = mean_ci(values)
    return {"mean": mean, "ci95": ci, "n": n}


def paper_row(paper: Any) -> dict[str, float]:
    """Table 2's 10 MB row from the study's :class:`~vtlab.experiments.pipeline.PaperValues`:
    paper label → Mbit/s."""
    return {
        str(e.extra["variant"]): e.value
        for e in paper.group("table2/")
        if int(e.extra["size_mb"]) == SIZE_MB
    }


def side_by_side(paper: Mapping[str, float], validation: Path) -> list[dict[str, Any]]:
    """One row per Table 2 column: the paper's 10 MB value (``paper``: label → Mbit/s),
    vtlab and ns-3.44 at their defaults (mean, 95 % CI, n), vtlab / ns-3.44 (ratio,
    Fieller interval, verdict), the paper / ns-3.44 ratio, and both sides under
    :data:`PRE_332` (with vtlab's original ``westwood`` on the Westwood row)."""
    now = load_runs(validation / DEFAULTS_DIR / "runs.jsonl")
    old_path = validation / PRE_332_DIR / "runs.jsonl"
    old = load_runs(old_path) if old_path.exists() else []
    rows = []
    for label, cc in CELLS.items():
        vt, ns = _goodputs(now, VTLAB, cc), _goodputs(now, NS3, cc)
        rci = ratio_ci(vt, ns)
        row: dict[str, Any] = {
            "variant": label,
            "cc": cc,
            "paper": float(paper[label]),
            "vtlab": _cell(vt),
            "ns3": _cell(ns),
            "ratio": rci.ratio,
            "ratio_ci": (rci.low, rci.high),
            "verdict": verdict(rci.ratio, rci.contains_one),
        }
        row["paper_vs_ns3"] = row["paper"] / row["ns3"]["mean"]
        old_vt = _goodputs(old, VTLAB, "westwood" if label == "Westwood" else cc)
        row["pre332_vtlab"] = _cell(old_vt)
        row["pre332_ns3"] = _cell(_goodputs(old, NS3, cc))
        rows.append(row)
    return rows


def evidence(rows: Sequence[Mapping[str, Any]], ns3_100mb: Mapping[str, float]) -> str:
    """The report's sentence on the 10 MB row from :func:`side_by_side`'s rows;
    ``ns3_100mb``: ns-3.44's 100 MB goodput per paper label (the committed grid)."""
    counts = {v: sum(1 for r in rows if r["verdict"] == v) for v in ("agree", "consistent")}
    ratios = [r["paper_vs_ns3"] for r in rows]
    up = [
        r for r in rows if r["variant"] in ns3_100mb and r["ns3"]["mean"] > ns3_100mb[r["variant"]]
    ]
    old = [r["pre332_ns3"]["mean"] / r["ns3"]["mean"] - 1 for r in rows if r["pre332_ns3"]["n"]]
    text = (
        f"ns-3.44 at {SIZE_MB} MB (`validation/{DEFAULTS_DIR}`, {rows[0]['ns3']['n']} seeds) "
        f"agrees with vtlab in {counts['agree']} of {len(rows)} variants "
        f"({counts['consistent']} consistent, the rest differ), is itself above its "
        f"100 MB goodput for {len(up)} of {len(ns3_100mb)}, and the paper's {SIZE_MB} MB "
        f"row is {min(ratios):.2f}–{max(ratios):.2f} × ns-3.44's: the deviation lies "
        "between the paper's ns-3 and ns-3.44, not in vtlab."
    )
    if old:
        near = sum(1 for r in rows if abs(r["paper_vs_ns3"] - 1) <= NEAR)
        near_old = sum(1 for r in rows if abs(r["paper"] / r["pre332_ns3"]["mean"] - 1) <= NEAR)
        text += (
            " ns-3's TCP defaults before 3.32 (initial window 1, classic recovery; "
            f"`validation/{PRE_332_DIR}`) change ns-3.44's {SIZE_MB} MB goodput by "
            f"{min(old) * 100:+.0f} to {max(old) * 100:+.0f} %: the paper is within "
            f"±{NEAR * 100:.0f} % of ns-3.44 for {near} of {len(rows)} variants at the "
            f"defaults and {near_old} under the old ones."
        )
    return text


def _fmt(cell: Mapping[str, float]) -> str:
    return "–" if not cell["n"] else f"{cell['mean']:.3f} ± {cell['ci95']:.3f}"


def markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """The side-by-side table (Mbit/s, mean ± 95 % CI over seeds)."""
    head = (
        "| variant | paper | vtlab ns3 | ns-3.44 | vtlab / ns-3.44 [95 % CI] | verdict "
        "| paper / ns-3.44 | ns-3.44, IW 1 + classic | vtlab, IW 1 + classic "
        "| paper / (ns-3.44, IW 1 + classic) |\n"
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|\n"
    )
    lines = []
    for r in rows:
        lo, hi = r["ratio_ci"]
        old_ns = r["pre332_ns3"]["mean"] if r["pre332_ns3"]["n"] else float("nan")
        lines.append(
            f"| {r['variant']} | {r['paper']:.3f} | {_fmt(r['vtlab'])} | {_fmt(r['ns3'])} "
            f"| {r['ratio']:.3f} [{lo:.3f}, {hi:.3f}] | {r['verdict']} "
            f"| {r['paper_vs_ns3']:.2f} | {_fmt(r['pre332_ns3'])} | {_fmt(r['pre332_vtlab'])} "
            f"| {r['paper'] / old_ns:.2f} |"
        )
    return head + "\n".join(lines) + "\n"


def main(argv: Sequence[str]) -> int:
    """``python -m vtlab.experiments.park2019.table2_10mb [JOBS]``: :func:`run_pre332`
    for seeds 1–10 into the validation folder (``$VTLAB_VALIDATION_DIR``)."""
    text = argv[0] if argv else "2"
    if len(argv) > 1 or not text.isdigit() or not 1 <= int(text) <= 64:
        print(f"error: JOBS: {' '.join(argv)}: one whole number from 1 to 64", file=sys.stderr)
        return 2
    print(run_pre332(validation_dir() / PRE_332_DIR, range(1, 11), int(text)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
