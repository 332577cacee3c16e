"""``vtlab validate-wifi``: vtlab's 802.11 medium against ns-3's wifi module.

The reference program ``validation/ns3/wifi.cc`` (validation/ns3/README-wifi.md)
builds the ``vanet-chain`` scenario in ns-3.44: a single hop and an 8-hop chain of
vehicles 200 m apart, 802.11b at 1 Mbit/s for data and control frames, two-ray
ground with ns-2's radio thresholds, RTS/CTS on or off, static routes, MAC queue =
IFQ, no queue disc, and one TCP flow (NewReno or Vegas, delayed ACK 1 or 2).  vtlab
runs the same scenario with ns-3's reception rule (``dsss-ber``) and ns-3.44's single
retry limit of 7.  Per cell, the goodput ratio must lie within ±10 % (the issue's
goal), the orderings must match, and the MAC counters appear side by side.

ns-3's runs are stored in ``validation/wifi/ns3/`` (one JSON-lines file per run), so
validating needs neither ns-3 nor g++; ``--rerun-ns3`` recomputes them with the
ns-3 wheel.  The report goes to ``OUT/report.md`` and the table to
``OUT/agreement.csv``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from vtlab.cli_validate_options import QuietLinesOpt, RerunNs3Opt
from vtlab.errors import fail, user_errors
from vtlab.ns3 import program as _ns3
from vtlab.ns3.cc import ns3_type_id
from vtlab.ns3.process import run_process
from vtlab.ns3.wifi import parse_result
from vtlab.outputs import check_output_dir
from vtlab.validation.report import typed_command

#: Goodput tolerance of a cell: the issue's ±10 %.
TOLERANCE = 0.10
#: Flow start and default flow duration, s (ns-3's program: --start, --duration).
START_S = 1.0
DEFAULT_DURATION_S = 100.0
#: vtlab seeds per cell (ns-3's stored runs are RngRun 1..5).
DEFAULT_SEEDS = 10
NS3_RUNS = (1, 2, 3, 4, 5)


def stored_dir() -> Path:
    """Where ns-3's runs live in a checkout."""
    return Path(__file__).resolve().parents[2] / "validation" / "wifi" / "ns3"


@dataclass(frozen=True)
class Case:
    hops: int
    rts: bool
    cc: str
    delack: int

    @property
    def name(self) -> str:
        return f"h{self.hops}-rts{int(self.rts)}-{ns3_type_id(self.cc).lower()}-d{self.delack}"


#: The validation grid: 2 topologies x RTS/CTS x 2 TCPs x 2 delayed-ACK counts.
CASES: tuple[Case, ...] = tuple(
    Case(h, r, cc, d)
    for h in (1, 8)
    for r in (False, True)
    for cc in ("newreno", "vegas")
    for d in (1, 2)
)
#: ``--quick``: the single hop with RTS/CTS and the chain with basic access, NewReno,
#: an ACK per segment.
QUICK = ("h1-rts1-tcpnewreno-d1", "h8-rts0-tcpnewreno-d1")


class WifiValidateError(ValueError):
    """A bad option or missing reference data (the CLI prints it, exit 2)."""


def vtlab_spec(case: Case, duration_s: float = DEFAULT_DURATION_S) -> dict[str, Any]:
    """The vanet-chain scenario that mirrors ``wifi.cc`` for ``case``: ns-3's DSSS
    reception rule and its single frame retry limit (``WifiMac::FrameRetryLimit`` 7
    for RTS and data alike)."""
    return {
        "preset": "vanet-chain",
        "hops": case.hops,
        "rts": case.rts,
        "delack": case.delack,
        "tcp": {"cc": case.cc},
        "start": f"{START_S}s",
        "stop": f"{START_S + duration_s}s",
        "wifi": {
            "reception": {"model": "dsss-ber", "preamble_snr_db": 4.0},
            "long_retry_limit": 7,
        },
    }


def ns3_args(case: Case, run: int, duration_s: float = DEFAULT_DURATION_S) -> list[str]:
    """Arguments of ``wifi.cc`` for ``case`` (its defaults are the scenario's)."""
    return [
        f"--hops={case.hops}",
        f"--rts={int(case.rts)}",
        f"--cc={ns3_type_id(case.cc)}",
        f"--delAck={case.delack}",
        f"--start={START_S:g}",
        f"--duration={duration_s:g}",
        f"--run={run}",
    ]


def ns3_row(res: Mapping[str, Any]) -> dict[str, float]:
    """The compared quantities of one ns-3 run."""
    mac = res["mac"]
    return {
        "goodput_bps": float(res["goodput_bps"]),
        "tcp_retransmissions": float(res["tcp_retransmissions"]),
        "tcp_rto": float(res["tcp_rto"]),
        "mac_retries": float(mac["retries"]),
        "mac_retry_drops": float(mac["retry_drops"]),
        "mac_queue_drops": float(mac["queue_drops"]),
    }


def vtlab_row(result: Any) -> dict[str, float]:
    """The compared quantities of one vtlab run."""
    f, links = result.flows.iloc[0], result.links
    return {
        "goodput_bps": float(f.goodput_bps),
        "tcp_retransmissions": float(f.retransmissions),
        "tcp_rto": float(f.rto_count),
        "mac_retries": float(links.mac_retries.sum()),
        "mac_retry_drops": float(links.mac_retry_drops.sum()),
        "mac_queue_drops": float(links.drops_queue.sum()),
    }


def load_ns3(case: Case, directory: Path, runs: Sequence[int] = NS3_RUNS) -> list[dict[str, Any]]:
    """ns-3's stored results of ``case``; raises WifiValidateError if any is missing."""
    out = []
    for run in runs:
        path = directory / f"{case.name}-r{run}.jsonl"
        try:
            out.append(parse_result(path.read_text()))
        except OSError:
            raise WifiValidateError(
                f"ns-3 result {path} is missing: run with --rerun-ns3 (needs the ns3 wheel and g++)"
            ) from None
    return out


def run_ns3(
    case: Case,
    directory: Path,
    runs: Sequence[int] = NS3_RUNS,
    duration_s: float = DEFAULT_DURATION_S,
    log: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Run ``wifi.cc`` for ``case`` and store each run's output in ``directory``."""
    binary = _ns3.build_program(_ns3.WIFI_PROGRAM, log=log)
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for run in runs:
        proc = run_process([str(binary.path), *ns3_args(case, run, duration_s)])
        if proc.returncode != 0:
            tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
            raise _ns3.Ns3Error(f"the ns-3 Wi-Fi program failed ({case.name}, run {run}): {tail}")
        (directory / f"{case.name}-r{run}.jsonl").write_text(proc.stdout)
        out.append(parse_result(proc.stdout))
        if log is not None:
            log(f"ns-3 {case.name} run {run}: {proc.wall_s:.1f} s")
    return out


def mean_sd(xs: Sequence[float]) -> tuple[float, float]:
    m = statistics.fmean(xs)
    return m, (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def ratio_ci(vt: Sequence[float], ns: Sequence[float]) -> tuple[float, float, float]:
    """Ratio of means vtlab/ns-3 and its 95 % interval by the delta method."""
    (mv, sv), (mn, sn) = mean_sd(vt), mean_sd(ns)
    r = mv / mn
    rel = math.sqrt((sv / mv) ** 2 / len(vt) + (sn / mn) ** 2 / len(ns)) if mv > 0 else math.inf
    return r, r * (1 - 1.96 * rel), r * (1 + 1.96 * rel)


def verdict(ratio: float, tolerance: float = TOLERANCE) -> str:
    """``agree`` within the tolerance, ``differs`` outside it."""
    # 1e-12: 1.1 − 1 is 0.10000000000000009 in binary floating point.
    return "agree" if abs(ratio - 1.0) <= tolerance + 1e-12 else "differs"


@dataclass
class WifiValidation:
    rows: list[dict[str, Any]]
    orderings: list[dict[str, Any]]
    agree: int
    cells: int
    report: Path


COUNTERS = ("tcp_retransmissions", "tcp_rto", "mac_retries", "mac_retry_drops", "mac_queue_drops")


def compare(case: Case, vt: list[dict[str, float]], ns: list[dict[str, float]]) -> dict[str, Any]:
    """One cell's row of the agreement table."""
    g_vt = [r["goodput_bps"] / 1e3 for r in vt]
    g_ns = [r["goodput_bps"] / 1e3 for r in ns]
    r, lo, hi = ratio_ci(g_vt, g_ns)
    row: dict[str, Any] = {
        "case": case.name,
        "hops": case.hops,
        "rts": int(case.rts),
        "cc": case.cc,
        "delack": case.delack,
        "ns3_kbps": statistics.fmean(g_ns),
        "vtlab_kbps": statistics.fmean(g_vt),
        "ratio": r,
        "ratio_lo": lo,
        "ratio_hi": hi,
        "verdict": verdict(r),
        "ns3_runs": len(ns),
        "vtlab_runs": len(vt),
    }
    for c in COUNTERS:
        row[f"ns3_{c}"] = statistics.fmean(x[c] for x in ns)
        row[f"vtlab_{c}"] = statistics.fmean(x[c] for x in vt)
    return row


#: Two cells ns-3 puts closer than this (relative) are a tie: their order is noise.
TIE = 0.01


def orderings(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Within each (hops, RTS) group, the order of the (cc, delack) cells by goodput
    on each side; ``same`` when every pair that ns-3 separates by more than
    :data:`TIE` keeps its order in vtlab (``pairs`` counts those pairs)."""
    out = []
    groups: dict[tuple[int, int], list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["hops"], r["rts"]), []).append(r)
    for (hops, rts), rs in sorted(groups.items()):
        label = [f"{r['cc']}/d{r['delack']}" for r in rs]

        def order(key: str, rs: Sequence[Mapping[str, Any]] = rs, label: list[str] = label) -> str:
            idx = sorted(range(len(rs)), key=lambda i: -rs[i][key])
            return " > ".join(label[i] for i in idx)

        pairs = kept = 0
        for i in range(len(rs)):
            for j in range(i + 1, len(rs)):
                a, b = rs[i]["ns3_kbps"], rs[j]["ns3_kbps"]
                if abs(a - b) > TIE * max(a, b):
                    pairs += 1
                    kept += (a > b) == (rs[i]["vtlab_kbps"] > rs[j]["vtlab_kbps"])
        out.append(
            {
                "hops": hops,
                "rts": rts,
                "ns3": order("ns3_kbps"),
                "vtlab": order("vtlab_kbps"),
                "pairs": pairs,
                "kept": kept,
                "same": kept == pairs,
            }
        )
    return out


def _fmt(x: float, digits: int = 1) -> str:
    return f"{x:.{digits}f}"


def write_report(
    out: Path,
    rows: Sequence[Mapping[str, Any]],
    orders: Sequence[Mapping[str, Any]],
    meta: Mapping[str, Any],
) -> Path:
    """Write ``agreement.csv`` and ``report.md`` into ``out``."""
    import csv

    out.mkdir(parents=True, exist_ok=True)
    with (out / "agreement.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    agree = sum(r["verdict"] == "agree" for r in rows)
    lines = [
        "# vtlab's 802.11 medium against ns-3.44's wifi module",
        "",
        f"Generated by `{meta['command']}`. vtlab {meta['vtlab_version']}; ns-3 runs from "
        f"`{meta['ns3_source']}`. {meta['duration_s']:g} s of flow per run; "
        f"{meta['vtlab_seeds']} vtlab seeds and {meta['ns3_runs']} ns-3 runs per cell.",
        "",
        f"**{agree} of {len(rows)} cells agree** (vtlab's mean goodput within ±{TOLERANCE:.0%} "
        "of ns-3's); "
        f"{sum(o['same'] for o in orders)} of {len(orders)} groups rank their cells the same "
        f"(ties within {TIE:.0%} aside).",
        "",
        "| cell | ns-3 kbit/s | vtlab kbit/s | ratio (95 % CI) | verdict "
        "| MAC retries ns-3 / vtlab | retry drops ns-3 / vtlab "
        "| TCP retransmissions ns-3 / vtlab |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['case']} | {_fmt(r['ns3_kbps'])} | {_fmt(r['vtlab_kbps'])} | "
            f"{r['ratio']:.3f} ({r['ratio_lo']:.3f}–{r['ratio_hi']:.3f}) | {r['verdict']} | "
            f"{_fmt(r['ns3_mac_retries'], 0)} / {_fmt(r['vtlab_mac_retries'], 0)} | "
            f"{_fmt(r['ns3_mac_retry_drops'])} / {_fmt(r['vtlab_mac_retry_drops'])} | "
            f"{_fmt(r['ns3_tcp_retransmissions'])} / {_fmt(r['vtlab_tcp_retransmissions'])} |"
        )
    lines += ["", "## Orderings (within each topology and RTS setting)", ""]
    lines += [
        f"Pairs of cells that ns-3 separates by more than {TIE:.0%} must keep their order; "
        "closer pairs are ties.",
        "",
        "| hops | RTS | ns-3 | vtlab | separated pairs kept |",
        "|---|---|---|---|---|",
    ]
    for o in orders:
        kept = f"{o['kept']} of {o['pairs']}"
        lines.append(f"| {o['hops']} | {o['rts']} | {o['ns3']} | {o['vtlab']} | {kept} |")
    lines += [
        "",
        "Cells are named `h<hops>-rts<0|1>-<tcp>-d<segments per ACK>`. Counters are means per run "
        "summed over the stations. The ratio's interval is the delta method's on the two means. "
        "docs/validation.md (802.11 section) explains the cells that stray from ns-3.",
        "",
    ]
    path = out / "report.md"
    path.write_text("\n".join(lines))
    return path


def validate_wifi(
    out: Path,
    *,
    cases: Iterable[str] | None = None,
    seeds: int = DEFAULT_SEEDS,
    duration_s: float = DEFAULT_DURATION_S,
    rerun_ns3: bool = False,
    ns3_dir: Path | None = None,
    command: str = "vtlab validate-wifi",
    log: Callable[[str], None] | None = None,
) -> WifiValidation:
    """Run vtlab on every chosen cell and compare with ns-3's runs (stored, or
    recomputed with ``rerun_ns3``); write the report into ``out``."""
    import vtlab

    chosen = parse_cases(cases)
    if seeds < 1 or seeds > 1000:
        raise WifiValidateError(f"--seeds: {seeds} is outside [1, 1000]")
    if not (1.0 <= duration_s <= 10_000.0):
        raise WifiValidateError(f"--duration: {duration_s:g} is outside [1, 10000] s")
    stored = ns3_dir or stored_dir()
    if duration_s != DEFAULT_DURATION_S and not rerun_ns3:
        raise WifiValidateError(
            f"--duration: the stored ns-3 runs are {DEFAULT_DURATION_S:g} s; "
            "another duration needs --rerun-ns3"
        )
    rows = []
    for k, case in enumerate(chosen, 1):
        if rerun_ns3:
            ns_res = run_ns3(case, out / "ns3", duration_s=duration_s, log=log)
        else:
            ns_res = load_ns3(case, stored)
        spec = vtlab_spec(case, duration_s)
        vt = [vtlab_row(vtlab.run(spec, seed=s)) for s in range(1, seeds + 1)]
        row = compare(case, vt, [ns3_row(r) for r in ns_res])
        rows.append(row)
        if log is not None:
            log(
                f"[{k}/{len(chosen)}] {case.name}: ns-3 {row['ns3_kbps']:.1f}, vtlab "
                f"{row['vtlab_kbps']:.1f} kbit/s, ratio {row['ratio']:.3f} ({row['verdict']})"
            )
    orders = orderings(rows)
    meta = {
        "command": command,
        "vtlab_version": vtlab.__version__,
        "ns3_source": str(out / "ns3") if rerun_ns3 else "validation/wifi/ns3",
        "duration_s": duration_s,
        "vtlab_seeds": seeds,
        "ns3_runs": len(NS3_RUNS),
    }
    report = write_report(out, rows, orders, meta)
    agree = sum(r["verdict"] == "agree" for r in rows)
    return WifiValidation(rows, orders, agree, len(rows), report)


def parse_cases(names: Iterable[str] | None) -> list[Case]:
    """The cases named (all by default); an unknown name is an error listing them."""
    if names is None:
        return list(CASES)
    by_name = {c.name: c for c in CASES}
    out = []
    for n in names:
        for part in str(n).split(","):
            part = part.strip()
            if part not in by_name:
                raise WifiValidateError(
                    f"--case: unknown case '{part}' (allowed: {', '.join(by_name)})"
                )
            out.append(by_name[part])
    if not out:
        raise WifiValidateError("--case: no case given")
    return out


def register(app: typer.Typer) -> None:
    """Add ``validate-wifi`` to the ``vtlab`` CLI."""

    @app.command("validate-wifi")
    def validate_wifi_command(
        case: Annotated[
            list[str] | None,
            typer.Option(
                "--case", help="Cells to run (repeatable or comma-separated; default all 16)."
            ),
        ] = None,
        quick: Annotated[
            bool, typer.Option("--quick", help=f"Two cells ({', '.join(QUICK)}), 3 seeds.")
        ] = False,
        seeds: Annotated[
            int, typer.Option("--seeds", help="vtlab seeds per cell.")
        ] = DEFAULT_SEEDS,
        duration: Annotated[
            float,
            typer.Option(
                "--duration", help="Flow time per run, s (other than 100 needs --rerun-ns3)."
            ),
        ] = DEFAULT_DURATION_S,
        rerun_ns3: RerunNs3Opt = False,
        out: Annotated[Path, typer.Option("--out", "-o", help="Report directory.")] = Path(
            "validation/wifi"
        ),
        quiet: QuietLinesOpt = False,
    ) -> None:
        """Validate vtlab's 802.11 medium and DCF against ns-3's wifi module: goodput
        within ±10 % per cell, the same orderings, MAC counters side by side."""
        with user_errors():
            check_output_dir("--out", out)
        log = None if quiet else (lambda line: typer.echo(line, err=True))
        try:
            res = validate_wifi(
                out,
                cases=list(QUICK) if quick and case is None else case,
                seeds=3 if quick and seeds == DEFAULT_SEEDS else seeds,
                duration_s=duration,
                rerun_ns3=rerun_ns3,
                command=typed_command(),
                log=log,
            )
        except (WifiValidateError, _ns3.Ns3Error) as exc:
            fail(str(exc))
        typer.echo(f"{res.agree} of {res.cells} cells agree within ±10 %; report: {res.report}")
