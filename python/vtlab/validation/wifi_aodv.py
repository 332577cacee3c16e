"""The AODV family: ``vtlab validate wifi-aodv``, vtlab's AODV (``routing = "aodv"``)
against ns-3.44's ``aodv`` module on the 802.11 chain.

The reference program is ``validation/ns3/wifi.cc`` with two substitutions
(``validation/ns3/wifi_aodv.cc``): AodvHelper instead of static host routes, and ARP
resolving on first use instead of pre-filled caches (with wifi.cc's pre-filled caches
ns-3's AODV never learns of a failed MAC transmission; docs/validation.md).  The two
files are compiled as one source, :func:`combined_source`, whose results hash keys the
stored runs, so they follow a change to either file.

The grid: 1, 2, 4 and 8 hops, RTS/CTS on and off, NewReno with an ACK per segment, the
radio of the 802.11 family (ns-3's DSSS reception, one retry limit of 7); vtlab runs
the same ``vanet-chain`` scenario with ``routing = "aodv"``.  Per cell the goodput
ratio must lie within ±10 % (:data:`TOLERANCE`); ns-3's AODV control traffic and the
time of its first delivered byte are reported beside it.  ns-3's runs are stored in
``validation/wifi-aodv/ns3/runs.jsonl.gz``; ``--rerun-ns3`` recomputes them.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtlab import _core
from vtlab.api import core_build
from vtlab.ns3.process import run_child
from vtlab.ns3.program import (
    PINNED_NS3_VERSION,
    WIFI_PROGRAM,
    Ns3Binary,
    Ns3Error,
    Ns3NotInstalled,
    Program,
    build_program,
    cache_dir,
    find_ns3,
    results_hash,
    source_dir,
)
from vtlab.ns3.wifi import parse_output, wifi_args
from vtlab.packagedata import validation_dir
from vtlab.validation import wifi
from vtlab.validation.errors import ValidateError
from vtlab.validation.protocol import ValidateResult
from vtlab.validation.report import f
from vtlab.validation.report import write_report as write_skeleton
from vtlab.validation.runner import NS3, VTLAB
from vtlab.validation.wifi import Run, agreement_row, compared, record_key
from vtlab.validation.wifi_report import CSV_OPTIONS

__all__ = [
    "AODV_COUNTERS",
    "AODV_PROGRAM",
    "CELLS",
    "QUICK",
    "TOLERANCE",
    "AodvCell",
    "AodvFamily",
    "Grid",
    "combined_source",
    "make_grid",
    "ns3_hash",
    "stored_ns3_runs_path",
    "validate",
    "vtlab_spec",
]

TOLERANCE = wifi.TOLERANCE
DEFAULT_SEEDS = 10
QUICK_SEEDS = 3
MAX_SEEDS = 1000
NS3_RUNS = tuple(range(1, 11))
#: ns-3's AODV counters (its ``aodv`` line), means per run summed over the nodes.
AODV_COUNTERS = ("rreq_tx", "rrep_tx", "rerr_tx", "hello_tx", "ip_bytes", "first_rx_s")

#: The AODV variant of the chain program (see :func:`combined_source`).
AODV_PROGRAM = Program(
    "AODV Wi-Fi program",
    lambda: Path(os.environ.get("VTLAB_NS3_WIFI_AODV_SOURCE") or source_dir() / "wifi_aodv.cc"),
    "VTLAB_NS3_WIFI_AODV_SOURCE",
    "wifi_aodv",
    "ns3-wifi-aodv",
    (*WIFI_PROGRAM.modules, "aodv"),
)
INCLUDE_LINE = '#include "wifi.cc"'


def stored_ns3_runs_path() -> Path:
    """ns-3's stored runs of the grid: ``wifi-aodv/ns3/runs.jsonl.gz`` of the
    validation data vtlab ships."""
    return validation_dir() / "wifi-aodv" / "ns3" / "runs.jsonl.gz"


def combined_source() -> bytes:
    """``wifi_aodv.cc`` with its ``#include "wifi.cc"`` replaced by ``wifi.cc`` itself:
    the one source that is compiled and hashed.  Raises :class:`Ns3Error` when either
    file cannot be read or the include line is missing."""
    top, chain = AODV_PROGRAM.source(), WIFI_PROGRAM.source()
    try:
        text, inner = top.read_bytes(), chain.read_bytes()
    except OSError as exc:
        raise Ns3Error(f"cannot read the ns-3 {AODV_PROGRAM.label}: {exc}") from None
    line = INCLUDE_LINE.encode()
    if text.count(line) != 1:
        raise Ns3Error(f"{top}: expected one line {INCLUDE_LINE}")
    return text.replace(line, inner)


def ns3_hash() -> str:
    """The results hash of :func:`combined_source` (the installed ns-3's version, or
    the pinned one)."""
    try:
        version = find_ns3().version
    except Ns3NotInstalled:
        version = PINNED_NS3_VERSION
    return results_hash(combined_source(), version)


@dataclass(frozen=True)
class AodvCell(wifi.Cell):
    """A cell of the chain under AODV (NewReno, an ACK per segment)."""

    @property
    def name(self) -> str:
        return f"h{self.hops}-rts{int(self.rts)}-aodv"


CELLS: tuple[AodvCell, ...] = tuple(
    AodvCell(h, r, "newreno", 1) for h in (1, 2, 4, 8) for r in (False, True)
)
#: ``--quick``: the cells where routing costs most (RTS/CTS on 4 and 8 hops).
QUICK = ("h4-rts1-aodv", "h8-rts1-aodv")


def vtlab_spec(cell: AodvCell) -> dict[str, Any]:
    """The 802.11 family's scenario of the cell (:func:`vtlab.validation.wifi.vtlab_spec`)
    with ``routing = "aodv"``."""
    return {**wifi.vtlab_spec(cell, wifi.DEFAULT_DURATION_S), "routing": "aodv"}


@dataclass
class Grid:
    cells: list[AodvCell]
    seeds: int = DEFAULT_SEEDS
    rerun_ns3: bool = False


def make_grid(
    cases: Sequence[str] | None = None,
    seeds: int | None = None,
    rerun_ns3: bool = False,
    quick: bool = False,
) -> Grid:
    """The grid a command line asks for; raises :class:`ValidateError`."""
    by_name = {c.name: c for c in CELLS}
    names = list(QUICK) if quick and cases is None else (cases or list(by_name))
    cells = []
    for n in names:
        for part in (p.strip() for p in str(n).split(",")):
            if part not in by_name:
                allowed = ", ".join(by_name)
                raise ValidateError("--case", f"unknown case '{part}' (allowed: {allowed})")
            cells.append(by_name[part])
    n = seeds if seeds is not None else (QUICK_SEEDS if quick else DEFAULT_SEEDS)
    if not 1 <= n <= MAX_SEEDS:
        raise ValidateError("--seeds", f"{n} is outside [1, {MAX_SEEDS}]")
    return Grid(cells, n, rerun_ns3)


def plan(grid: Grid, ns_hash: str, vt_hash: str) -> list[Run]:
    """Every run, ns-3's first; ns-3's arguments from the cell's resolved scenario."""
    ns_runs: list[Run] = []
    vt_runs: list[Run] = []
    duration = wifi.DEFAULT_DURATION_S
    for cell in grid.cells:
        spec_json = json.dumps(vtlab_spec(cell))
        expanded = json.loads(_core.expand(spec_json))
        for run in NS3_RUNS:
            args = wifi_args(expanded, run)
            ns_runs.append(Run(NS3, cell, run, duration, ns_hash, args=args))
        for seed in range(1, grid.seeds + 1):
            vt_runs.append(Run(VTLAB, cell, seed, duration, vt_hash, spec_json))
    return ns_runs + vt_runs


def run_ns3(run: Run, binary: Ns3Binary) -> dict[str, Any]:
    """One run of the AODV program as a record: its config, result and aodv lines."""
    started = time.perf_counter()
    lines = parse_output(run_child([str(binary.path), *run.args]))
    return {
        "side": run.side,
        "cell": run.cell.name,
        "seed": run.seed,
        "duration_s": run.duration_s,
        "source_hash": run.source_hash,
        "config": lines.get("config"),
        "result": lines["result"],
        "aodv": lines.get("aodv"),
        "wall_s": time.perf_counter() - started,
    }


def _mean(xs: Sequence[float]) -> float:
    return statistics.fmean(xs) if xs else float("nan")


class AodvFamily(wifi.WifiFamily):
    """The AODV grid: the 802.11 family's runs and comparison, with AODV's program,
    its control-packet counters and report."""

    name = "wifi-aodv"

    def cases(self) -> list[Run]:  # type: ignore[override]
        return plan(self.grid, self.ns3_hash, self.vtlab_hash)

    def binary(self) -> Ns3Binary:
        """The combined source, written once into the cache and compiled there."""
        with self._lock:
            if self._binary is None:
                source = combined_source()
                digest = hashlib.sha256(source).hexdigest()[:16]
                path = cache_dir(AODV_PROGRAM.cache_dir) / f"wifi_aodv-{digest}.cc"
                if not path.is_file():
                    path.write_bytes(source)
                self._binary = build_program(AODV_PROGRAM, source=path, log=self.log)
            return self._binary

    def run(self, case: Run) -> dict[str, Any]:
        return wifi.run_vtlab(case) if case.side == VTLAB else run_ns3(case, self.binary())

    def record_key(self, record: Mapping[str, Any]) -> str:
        return record_key(record)

    def compare(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        by: dict[tuple[str, str], list[dict[str, float]]] = {}
        aodv: dict[str, list[Mapping[str, Any]]] = {}
        for rec in records:
            by.setdefault((rec["side"], rec["cell"]), []).append(compared(rec))
            if rec["side"] == NS3 and rec.get("aodv"):
                aodv.setdefault(rec["cell"], []).append(rec["aodv"])
        rows = []
        for c in self.grid.cells:
            row = agreement_row(c, by.get((VTLAB, c.name), []), by.get((NS3, c.name), []))
            for k in AODV_COUNTERS:
                row[f"ns3_{k}"] = _mean([float(a[k]) for a in aodv.get(c.name, [])])
            rows.append(row)
        return rows

    def write_report(
        self, out: Path, table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]
    ) -> dict[str, Path]:
        return write_report(out, table, {**meta, **self._meta()})

    def _meta(self) -> dict[str, Any]:
        source = (
            "recomputed (`--rerun-ns3`)"
            if self.grid.rerun_ns3
            else "from `validation/wifi-aodv/ns3/runs.jsonl.gz`"
        )
        return {
            "command": self.command or "vtlab validate wifi-aodv",
            "vtlab_version": _core.version(),
            "ns3_source": source,
            "ns3_hash": self.ns3_hash,
            "vtlab_seeds": self.grid.seeds,
        }


def write_report(
    out: Path, table: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]
) -> dict[str, Path]:
    """``agreement.csv``, ``agreement.parquet`` and ``report.md`` into ``out``."""
    agree = sum(r["verdict"] == "agree" for r in table)
    head = [
        "# vtlab's AODV against ns-3.44's aodv module (802.11 chain)",
        "",
        f"Generated by `{meta['command']}`. vtlab {meta['vtlab_version']}; ns-3 runs "
        f"{meta['ns3_source']} (`validation/ns3/wifi_aodv.cc` with `wifi.cc`, results "
        f"hash {meta['ns3_hash']}). {wifi.DEFAULT_DURATION_S:g} s of flow per run; "
        f"{meta['vtlab_seeds']} vtlab seeds and {len(NS3_RUNS)} ns-3 runs per cell.",
        "",
        f"**{agree} of {len(table)} cells agree** (vtlab's mean goodput within "
        f"±{TOLERANCE:.0%} of ns-3's).",
        "",
        "| cell | ns-3 kbit/s | vtlab kbit/s | ratio (95 % CI) | verdict "
        "| retry drops ns-3 / vtlab | TCP RTOs ns-3 / vtlab "
        "| ns-3 RREQ / RREP / RERR / HELLO | ns-3 first byte, s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        head.append(
            f"| {r['case']} | {f(r['ns3_kbps'], 1)} | {f(r['vtlab_kbps'], 1)} | "
            f"{f(r['ratio'])} ({f(r['ratio_lo'])}–{f(r['ratio_hi'])}) | {r['verdict']} | "
            f"{f(r['ns3_mac_retry_drops'], 1)} / {f(r['vtlab_mac_retry_drops'], 1)} | "
            f"{f(r['ns3_tcp_rto'], 1)} / {f(r['vtlab_tcp_rto'], 1)} | "
            f"{f(r['ns3_rreq_tx'], 0)} / {f(r['ns3_rrep_tx'], 0)} / "
            f"{f(r['ns3_rerr_tx'], 0)} / {f(r['ns3_hello_tx'], 0)} | "
            f"{f(r['ns3_first_rx_s'], 3)} |"
        )
    head += [
        "",
        "Counters are means per run summed over the stations; ns-3's AODV counters are "
        "the control packets its nodes sent. docs/validation.md (AODV section) explains "
        "the cells that stray from ns-3.",
    ]
    return write_skeleton(
        out,
        table,
        [head],
        errors=list(meta.get("errors", [])),
        files="Files: `agreement.csv` / `agreement.parquet` (this table), `runs.jsonl`.",
        csv_options=CSV_OPTIONS,
    )


def validate(
    grid: Grid,
    out: Path,
    *,
    jobs: int = 1,
    progress: bool = True,
    command: str = "",
    log: Callable[[str], None] | None = None,
    console: Any = None,
    stored: Sequence[Path] | None = None,
    store_ns3: Path | None = None,
) -> ValidateResult:
    """Run (or resume) the grid into ``out`` and write the report; ns-3's runs come
    from ``stored`` (default :func:`stored_ns3_runs_path`) unless ``grid.rerun_ns3``."""
    files = [] if grid.rerun_ns3 else list(stored or [stored_ns3_runs_path()])
    family = AodvFamily(grid, ns3_hash(), core_build(), stored=files, command=command, log=log)
    return wifi.run_chain(family, "wifi_aodv.cc", out, jobs, progress, console, store_ns3, log)
