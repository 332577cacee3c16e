"""The LTE family: ``vtlab validate lte``, trace replay against ns-3's LTE module.

For each case of the ns-3 LTE reference (``validation/ns3/lte.cc``, see
``validation/ns3/README-lte.md`` and :mod:`vtlab.ns3.lte`): a UE 50 m from the eNB,
static or driving away at 16.7 m/s, with an RLC UM buffer of 10 240 B (ns-3's default)
or 2 MiB, one TCP Cubic bulk download for 12 s, this module

1. gets ns-3's result (:mod:`.lte_ns3`): from the cache ``<out>/ns3-cache.jsonl`` when
   the ns-3 build hash and the program's arguments match, else by running ``lte.cc``
   (one run at a time);
2. takes the channel's capacity from the **UDP-saturated** ns-3 run of the same
   mobility (its correctly decoded transport blocks per millisecond: the channel,
   whatever TCP asks for) and turns it into a mahimahi trace, one delivery
   opportunity per 1504 B of transport block = one 1500-byte IP packet plus the
   PDCP (2 B) and RLC UM (2 B) headers ns-3 adds to it (:mod:`.lte_cases`);
3. replays that trace as the downlink ``capacity_down`` of vtlab's ``lte-cabin``
   preset set up like ns-3 (core 32 ms at 10 Gbit/s, a radio delay that makes the
   base RTT ns-3's measured 79.93 ms, the RLC buffer as the per-user LTE buffer,
   TCP profile ns3 with Cubic, MSS 1448 + timestamps = 1500-byte packets, 4 MiB
   buffers, an uplink of one 1500-byte opportunity per TTI for the ACKs);
4. compares goodput and the RTT mean and 95th percentile (:func:`compare`, ratios and
   verdicts of :mod:`vtlab.validation.verdict` with this family's tolerance
   :data:`~vtlab.validation.lte_cases.TOLERANCE`), and writes ``<out>/report.md`` and
   ``<out>/agreement.csv`` (:mod:`.lte_report`).

A diagnostic variant (:data:`~vtlab.validation.lte_cases.DIAGNOSTIC`) replays the same
traces with an uplink that returns each window's ACKs in one transport block, as
ns-3's request–grant uplink does when the ACKs come in bursts; ``bench=True``
(``--bench``) adds the wall-time comparison (:func:`speed_row`) and
``<out>/speed.csv``.

The vtlab side depends on ns-3's output (the capacity trace), and without ns-3 the
results of any cached build are used, so this family runs outside the generic driver
(:func:`vtlab.validation.protocol.validate`) on the same cache, verdict and report
modules.  ns-3's RTT statistics are computed over the *changes* of its ``LastRTT``
trace, so vtlab's per-ACK samples are compared with their per-ACK reconstruction
(:func:`vtlab.validation.lte_ns3.per_ack_rtt`).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import shlex
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vtlab import _core
from vtlab.api import core_build
from vtlab.cellular import write_mahimahi
from vtlab.ns3.lte import CORE_DELAY_MS, ensure_lte_binary
from vtlab.ns3.program import Ns3Binary, Ns3Error
from vtlab.progress import run_progress
from vtlab.validation.errors import ValidateError
from vtlab.validation.lte_cases import (
    CASES,
    DEFAULT_DURATION_S,
    DEFAULT_REPEAT,
    DEFAULT_SEEDS,
    DIAGNOSTIC,
    GRANT_PIPELINE_MS,
    MAIN,
    MAX_DURATION_S,
    NS3_BASE_RTT_MS,
    TOLERANCE,
    LteCase,
    Variant,
    capacity_trace_ms,
    radio_delay_for,
    replay_base_rtt_ms,
    spec_toml,
    vtlab_spec,
)
from vtlab.validation.lte_ns3 import (
    Ns3Cache,
    Ns3Run,
    Ns3Source,
    capacity_run,
    ns3_goodput_bps,
    ns3_result,
    per_ack_rtt,
    tcp_run,
)
from vtlab.validation.lte_report import write_report
from vtlab.validation.report import f
from vtlab.validation.units import at_least, parse_fraction
from vtlab.validation.verdict import ratio_ci
from vtlab.validation.verdict import verdict as cell_verdict

__all__ = [
    "METRICS",
    "LteValidation",
    "bench_vtlab",
    "check_options",
    "compare",
    "explicit_command",
    "parse_cases",
    "parse_tolerance",
    "ratio",
    "run_vtlab",
    "speed_row",
    "validate",
    "verdict",
]


# -- the vtlab side -------------------------------------------------------------------


def run_vtlab(spec: Mapping[str, Any], seeds: Sequence[int]) -> dict[str, Any]:
    """Run vtlab's scenario with each seed; the mean over seeds of the compared
    numbers, whether every seed gave the same flow row (``deterministic``), and the
    counters of the first seed."""
    spec_json = json.dumps(spec)
    rows = []
    links = None
    for seed in seeds:
        out = _core.run(spec_json, int(seed), False)
        flows = out["flows"]
        i = flows["flow"].index("down")
        rows.append({k: v[i] for k, v in flows.items() if k not in ("seed",)})
        if links is None:
            links = out["links"]
    assert links is not None
    first = rows[0]
    # NaN != NaN (completion_s of an unfinished flow): compare the JSON texts
    deterministic = all(
        json.dumps(r, sort_keys=True) == json.dumps(first, sort_keys=True) for r in rows
    )

    def mean(key: str, scale: float = 1.0) -> float:
        xs = [float(r[key]) * scale for r in rows if r.get(key) is not None]
        return statistics.fmean(xs) if xs else math.nan

    def drops(direction: str) -> int:
        idx = [
            j
            for j, (ln, d) in enumerate(zip(links["link"], links["direction"], strict=True))
            if ln == "lte" and d == direction
        ]
        return int(links["drops_queue"][idx[0]]) if idx else 0

    return {
        "goodput_bps": mean("goodput_bps"),
        "rtt_mean_ms": mean("rtt_mean_s", 1e3),
        "rtt_p95_ms": mean("rtt_p95_s", 1e3),
        "rtt_min_ms": mean("rtt_min_s", 1e3),
        "retransmissions": int(first["retransmissions"]),
        "fast_recoveries": int(first["fast_recoveries"]),
        "rto_count": int(first["rto_count"]),
        "loss_episodes": int(first["slow_starts_after_loss"]),
        "lte_drops_down": drops("enb->hotspot"),
        "lte_drops_up": drops("hotspot->enb"),
        "seeds": list(seeds),
        "deterministic": deterministic,
    }


def bench_vtlab(spec: Mapping[str, Any], repeat: int = DEFAULT_REPEAT, warmup: int = 1) -> dict:
    """Median wall times of ``repeat`` runs (after ``warmup``): ``engine_wall_s`` (the
    event loop, measured inside the core) and ``call_wall_s`` (the whole
    ``vtlab._core.run`` call: scenario parsing with the inline trace, set-up, run and
    result tables)."""
    at_least("--repeat", repeat)
    spec_json = json.dumps(spec)
    engine, call = [], []
    events = 0
    for i in range(warmup + repeat):
        t = time.perf_counter()
        out = _core.run(spec_json, 1, False)
        wall = time.perf_counter() - t
        if i >= warmup:
            engine.append(float(out["meta"]["wall_s"]))
            call.append(wall)
            events = int(out["meta"]["events"])
    return {
        "engine_wall_s": statistics.median(engine),
        "call_wall_s": statistics.median(call),
        "events": events,
        "repeat": repeat,
    }


# -- comparison and verdicts ----------------------------------------------------------


def ratio(vt: float | None, ns: float | None) -> float:
    """vtlab / ns-3, the point ratio of :func:`vtlab.validation.verdict.ratio_ci`
    (NaN when either is missing or ns-3's is 0)."""
    if vt is None or ns is None or ns == 0:
        return math.nan
    return ratio_ci([vt], [ns]).ratio


#: The compared metrics: (ratio key, label in verdicts).
METRICS: tuple[tuple[str, str], ...] = (
    ("goodput_ratio", "goodput"),
    ("rtt_mean_ratio", "RTT mean"),
    ("rtt_p95_ratio", "RTT p95"),
)


def verdict(ratios: Mapping[str, float], tolerance: float = TOLERANCE) -> str:
    """``agree`` if every ratio of :data:`METRICS` is within ±``tolerance``
    (:func:`vtlab.validation.verdict.verdict` of each; one ns-3 run and a
    deterministic replay give no interval), ``missing`` if one is NaN (and none is
    outside), else ``DIFFERS (<metrics>)`` naming the ones outside.

    >>> verdict({"goodput_ratio": 1.1, "rtt_mean_ratio": 0.9, "rtt_p95_ratio": 1.0})
    'agree'
    >>> verdict({"goodput_ratio": 5.7, "rtt_mean_ratio": 0.86, "rtt_p95_ratio": 0.51})
    'DIFFERS (goodput, RTT p95)'
    """
    outside, missing = [], False
    for key, label in METRICS:
        r = ratios.get(key, math.nan)
        v = cell_verdict(math.nan if r is None else float(r), False, tolerance, tolerance)
        if v == "missing":
            missing = True
        elif v != "agree":
            outside.append(label)
    if outside:
        return f"DIFFERS ({', '.join(outside)})"
    return "missing" if missing else "agree"


def _float(x: Any) -> float:
    return math.nan if x is None else float(x)


def _counters(ns: Mapping[str, Any], vt: Mapping[str, Any], variant: Variant) -> dict[str, Any]:
    """The agreement row's columns after the verdict: printed ns-3 RTTs, counters."""
    return {
        "ns3_rtt_mean_printed_ms": _float(ns.get("rtt_mean_ms")),
        "ns3_rtt_p95_printed_ms": _float(ns.get("rtt_p95_ms")),
        "ns3_rtt_changes": int(ns.get("rtt_count") or 0),
        "ns3_base_rtt_ms": _float(ns.get("base_rtt_ms")),
        "vtlab_rtt_min_ms": float(vt.get("rtt_min_ms", math.nan)),
        "ns3_retransmissions": int(ns.get("retransmissions") or 0),
        "vtlab_retransmissions": int(vt.get("retransmissions", 0)),
        "ns3_recoveries": int(ns.get("recoveries") or 0),
        "vtlab_fast_recoveries": int(vt.get("fast_recoveries", 0)),
        "ns3_rtos": int(ns.get("loss_episodes") or 0),
        # As lte.cc counts ns-3's: entries into CA_LOSS (not every timer expiry).
        "vtlab_rtos": int(vt.get("loss_episodes", 0)),
        "ns3_rlc_drops": int(ns.get("rlc_tx_drops") or 0),
        "vtlab_lte_drops": int(vt.get("lte_drops_down", 0)),
        "vtlab_uplink_drops": int(vt.get("lte_drops_up", 0)),
        "vtlab_seeds": len(vt.get("seeds", [])),
        "vtlab_deterministic": bool(vt.get("deterministic", True)),
        "uplink_period_ms": variant.uplink_period_ms,
        "radio_delay_ms": float(vt.get("radio_delay_ms", math.nan)),
    }


def compare(
    case: LteCase,
    ns: Mapping[str, Any],
    vt: Mapping[str, Any],
    *,
    variant: Variant = MAIN,
    tolerance: float = TOLERANCE,
) -> dict[str, Any]:
    """One row of the agreement table.  ``ns`` is ns-3's result
    (:func:`vtlab.validation.lte_ns3.ns3_result`), ``vt`` vtlab's summary
    (:func:`run_vtlab`).  ns-3's RTT is its per-ACK reconstruction
    (:func:`vtlab.validation.lte_ns3.per_ack_rtt`); the printed statistics (over the
    changes of ``LastRTT``) are kept in ``ns3_rtt_*_printed_ms``."""
    ns_mean, ns_p95 = per_ack_rtt(ns)
    ns_gp = ns3_goodput_bps(ns)
    row: dict[str, Any] = {
        "case": case.name,
        "variant": variant.name,
        "mobility": case.mobility,
        "rlc_buffer_bytes": case.rlc_buffer_bytes,
        "ns3_goodput_mbps": ns_gp / 1e6,
        "vtlab_goodput_mbps": float(vt["goodput_bps"]) / 1e6,
        "goodput_ratio": ratio(float(vt["goodput_bps"]), ns_gp),
        "ns3_rtt_mean_ms": ns_mean,
        "ns3_rtt_p95_ms": ns_p95,
        "vtlab_rtt_mean_ms": float(vt["rtt_mean_ms"]),
        "vtlab_rtt_p95_ms": float(vt["rtt_p95_ms"]),
        "rtt_mean_ratio": ratio(float(vt["rtt_mean_ms"]), ns_mean),
        "rtt_p95_ratio": ratio(float(vt["rtt_p95_ms"]), ns_p95),
    }
    row["verdict"] = verdict(row, tolerance)
    row.update(_counters(ns, vt, variant))
    return row


def speed_row(
    case: LteCase, ns: Mapping[str, Any], bench: Mapping[str, Any], duration_s: float
) -> dict[str, Any]:
    """One row of the speed table: ns-3's ``Simulator::Run`` and whole-process wall
    times (from its result) against vtlab's event loop and whole ``_core.run`` call."""
    ns_run = _float(ns.get("wall_s"))
    ns_proc = _float(ns.get("process_wall_s"))
    vt_engine = float(bench["engine_wall_s"])
    vt_call = float(bench["call_wall_s"])
    sim = ns_run / vt_engine if vt_engine > 0 else math.inf
    whole = ns_proc / vt_call if vt_call > 0 else math.inf
    return {
        "case": case.name,
        "simulated_s": duration_s,
        "ns3_run_wall_s": ns_run,
        "ns3_process_wall_s": ns_proc,
        "vtlab_engine_wall_s": vt_engine,
        "vtlab_call_wall_s": vt_call,
        "vtlab_events": int(bench.get("events", 0)),
        "speedup_simulation": sim,
        "speedup_whole": whole,
        "goal_100x": "met" if min(sim, whole) >= 100 else "missed",
    }


# -- options --------------------------------------------------------------------------


def parse_cases(names: Iterable[str] | None) -> list[LteCase]:
    """The cases named (all of :data:`~vtlab.validation.lte_cases.CASES` when none),
    in report order."""
    known = {c.name: c for c in CASES}
    if not names:
        return list(CASES)
    wanted = []
    for n in names:
        key = str(n).strip()
        if key not in known:
            raise ValidateError("--case", f"unknown case '{key}' (allowed: {', '.join(known)})")
        wanted.append(key)
    return [c for c in CASES if c.name in wanted]


def parse_tolerance(text: str | float) -> float:
    """``15%`` -> 0.15, ``0.15`` -> 0.15; must lie in (0, 1)."""
    return parse_fraction(text, "--tolerance", zero=False)


def check_options(
    duration_s: float, seeds: int, uplink_period_ms: int, radio_delay_ms: float | None, repeat: int
) -> None:
    """Raise :class:`~vtlab.validation.errors.ValidateError` (naming the option) for a
    bad value."""
    if not (math.isfinite(duration_s) and 1.0 <= duration_s <= MAX_DURATION_S):
        raise ValidateError("--duration", f"{duration_s:g} s is outside [1, {MAX_DURATION_S:g}] s")
    at_least("--seeds", seeds)
    if uplink_period_ms < 1:
        raise ValidateError("--uplink-period", f"must be at least 1 ms, got {uplink_period_ms}")
    if radio_delay_ms is not None and not (
        math.isfinite(radio_delay_ms) and 0 <= radio_delay_ms <= 1000
    ):
        raise ValidateError("--radio-delay", f"{radio_delay_ms:g} ms is outside [0, 1000] ms")
    at_least("--repeat", repeat)


# -- the validation -------------------------------------------------------------------


@dataclass
class LteValidation:
    rows: list[dict[str, Any]]
    diag_rows: list[dict[str, Any]]
    speed_rows: list[dict[str, Any]]
    paths: dict[str, Path]
    ns3_runs: dict[str, str] = field(default_factory=dict)  #: run name -> source
    wall_s: float = 0.0


@dataclass(frozen=True)
class _Settings:
    """What every replay of one validation shares."""

    duration_s: float
    seeds: int
    tolerance: float
    bench: bool
    repeat: int


@dataclass
class _Replays:
    """The rows of the replays, and what the report says about them."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    diag_rows: list[dict[str, Any]] = field(default_factory=list)
    speed_rows: list[dict[str, Any]] = field(default_factory=list)
    deterministic: bool = True
    radio_main: float = math.nan
    base_ns3: float = math.nan


def _ns3_source(binary: Ns3Binary | None, log: Callable[[str], None] | None) -> Ns3Source:
    if binary is not None:
        return Ns3Source(binary)
    try:
        return Ns3Source(ensure_lte_binary(log=log))
    except Ns3Error as exc:
        if log is not None:
            log(f"note: ns-3 cannot run here ({' '.join(str(exc).split())}); using cached results")
        return Ns3Source(None, " ".join(str(exc).split()))


def _ns3_results(
    runs: Sequence[Ns3Run],
    cache: Ns3Cache,
    source: Ns3Source,
    rerun: bool,
    progress: bool,
    log: Callable[[str], None] | None,
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Every ns-3 run's result (run, cached or stored) and where it came from."""
    results: dict[str, dict[str, Any]] = {}
    sources: dict[str, str] = {}
    todo = (
        [r for r in runs if rerun or cache.find(r, source.ns3_hash) is None]
        if source.binary is not None
        else []
    )
    with run_progress(len(todo), progress, label="ns-3 runs") as advance:
        for r in runs:
            res, src = ns3_result(r, cache, source, rerun=rerun, log=log)
            results[r.name], sources[r.name] = res, src
            if src == "run":
                advance()
            if src == "stored" and log is not None:
                log(f"note: {r.name}: stored result used unverified (ns-3 cannot run here)")
    return results, sources


def _write_traces(
    trace_dir: Path,
    mobilities: Sequence[str],
    results: Mapping[str, Mapping[str, Any]],
    duration_s: float,
    suffix: str,
) -> dict[str, Path]:
    """The capacity trace of each mobility, written as mahimahi files."""
    trace_dir.mkdir(parents=True, exist_ok=True)
    traces: dict[str, Path] = {}
    for m in mobilities:
        cap = results[f"{m}_capacity"]
        path = trace_dir / f"{m}_down{suffix}.mahimahi"
        write_mahimahi(path, capacity_trace_ms(cap["tb_ms"], cap["tb_bytes"], duration_s))
        traces[m] = path
    return traces


def _replay(
    case: LteCase,
    ns: Mapping[str, Any],
    trace: Path,
    variant: Variant,
    radio_delay_ms: float,
    settings: _Settings,
) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """Replay one case's capacity trace in vtlab as ``variant``: the comparison row,
    the vtlab scenario, and whether the seeds gave identical results."""
    spec = vtlab_spec(
        case,
        trace,
        duration_s=settings.duration_s,
        radio_delay_ms=radio_delay_ms,
        uplink_period_ms=variant.uplink_period_ms,
        grant=variant.grant,
    )
    vt = run_vtlab(spec, list(range(1, int(settings.seeds) + 1)))
    vt["radio_delay_ms"] = radio_delay_ms
    row = compare(case, ns, vt, variant=variant, tolerance=settings.tolerance)
    return row, spec, bool(vt["deterministic"])


def _scenario_file(spec: Mapping[str, Any], case: LteCase, duration_s: float) -> str:
    """The replayed scenario as a TOML file a user can run (`vtlab run --scenario`)."""
    return spec_toml(
        spec,
        f"vtlab validate lte: case {case.name} (ns-3 {case.mobility}, RLC "
        f"{case.rlc_buffer_bytes} B), {duration_s:g} s.\nThe trace path is "
        "relative to the directory the command ran in.",
    )


def _verdict_line(case: LteCase, variant: Variant, row: Mapping[str, Any]) -> str:
    return (
        f"{case.name} [{variant.name}]: goodput ratio {f(row['goodput_ratio'])}, "
        f"RTT mean {f(row['rtt_mean_ratio'])}, p95 {f(row['rtt_p95_ratio'])}"
        f" -> {row['verdict']}"
    )


def _replay_cases(
    chosen: Sequence[LteCase],
    variants: Sequence[Variant],
    results: Mapping[str, Mapping[str, Any]],
    traces: Mapping[str, Path],
    scen_dir: Path,
    suffix: str,
    settings: _Settings,
    log: Callable[[str], None] | None,
) -> _Replays:
    """Replay every case as every variant (the first is the main one), write the main
    scenarios, and time them with ``settings.bench``."""
    scen_dir.mkdir(parents=True, exist_ok=True)
    out = _Replays()
    for case in chosen:
        ns = results[case.name]
        out.base_ns3 = float(ns.get("base_rtt_ms") or NS3_BASE_RTT_MS)
        for v in variants:
            r = v.radio_delay_ms
            if r is None:
                pipeline = GRANT_PIPELINE_MS if v.grant else 0.0
                r = radio_delay_for(out.base_ns3, CORE_DELAY_MS, grant_ms=pipeline)
            row, spec, det = _replay(case, ns, traces[case.mobility], v, r, settings)
            out.deterministic &= det
            if v is variants[0]:
                out.radio_main = r
                out.rows.append(row)
                (scen_dir / f"{case.name}{suffix}.toml").write_text(
                    _scenario_file(spec, case, settings.duration_s)
                )
                if settings.bench:
                    vt_bench = bench_vtlab(spec, int(settings.repeat))
                    out.speed_rows.append(speed_row(case, ns, vt_bench, settings.duration_s))
            else:
                out.diag_rows.append(row)
            if log is not None:
                log(_verdict_line(case, v, row))
    return out


def _provenance(source: Ns3Source, sources: Mapping[str, str]) -> dict[str, str]:
    """The report's version lines: vtlab's build, ns-3's, where ns-3's results came from."""
    counts: dict[str, int] = {}
    for s in sources.values():
        counts[s] = counts.get(s, 0) + 1
    labels = {"cache": "from `ns3-cache.jsonl`", "run": "run now", "stored": "stored, unverified"}
    return {
        "date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "vtlab_version": _core.version(),
        "vtlab_hash": core_build(),
        "ns3_version": source.binary.ns3_version if source.binary else "?",
        "ns3_hash": source.binary.results_hash if source.binary else "(not built here)",
        "ns3_sources": ", ".join(f"{n} {labels.get(s, s)}" for s, n in counts.items()),
    }


def explicit_command(
    out: Path, cases: Sequence[LteCase], duration_s: float, seeds: int, bench: bool
) -> str:
    """The command line of a validation, its options spelled out where not default."""
    parts = ["vtlab", "validate", "lte"]
    if [c.name for c in cases] != [c.name for c in CASES]:
        for c in cases:
            parts += ["--case", c.name]
    if duration_s != DEFAULT_DURATION_S:
        parts += ["--duration", f"{duration_s:g}"]
    if seeds != DEFAULT_SEEDS:
        parts += ["--seeds", str(seeds)]
    if bench:
        parts.append("--bench")
    parts += ["--out", str(out)]
    return shlex.join(parts)


def validate(
    out: Path | str = Path("validation/lte"),
    *,
    cases: Iterable[str] | None = None,
    duration_s: float = DEFAULT_DURATION_S,
    seeds: int = DEFAULT_SEEDS,
    tolerance: float = TOLERANCE,
    uplink_period_ms: int = 1,
    radio_delay_ms: float | None = None,
    diagnostic: bool = True,
    bench: bool = False,
    repeat: int = DEFAULT_REPEAT,
    rerun_ns3: bool = False,
    binary: Ns3Binary | None = None,
    progress: bool = True,
    command: str = "",
    log: Callable[[str], None] | None = None,
) -> LteValidation:
    """Run (or take from the cache) ns-3's LTE cases, replay their capacity in
    vtlab, compare, and write ``<out>/report.md``, ``<out>/agreement.csv`` (and
    ``speed.csv`` with ``bench``) and ``<out>/scenarios/<case>.toml``.

    ``cases``: names from :data:`~vtlab.validation.lte_cases.CASES` (default all);
    ``seeds``: vtlab seeds 1..seeds; ``uplink_period_ms``/``radio_delay_ms`` change the
    main variant (the defaults are the validation's); ``diagnostic`` adds the
    :data:`~vtlab.validation.lte_cases.DIAGNOSTIC` table.  ns-3 runs one case at a
    time; without ns-3 (or g++), cached results are used.  Raises
    :class:`~vtlab.validation.errors.ValidateError` on bad input and
    :class:`vtlab.ns3.program.Ns3Error` when a needed ns-3 result is neither cached nor
    computable."""
    started = time.perf_counter()
    chosen = parse_cases(cases)
    check_options(float(duration_s), int(seeds), int(uplink_period_ms), radio_delay_ms, int(repeat))
    if not 0 < tolerance < 1:
        raise ValidateError("--tolerance", f"{tolerance:g} is outside (0, 1)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    source = _ns3_source(binary, log)
    mobilities = list(dict.fromkeys(c.mobility for c in chosen))
    runs = [capacity_run(m, duration_s) for m in mobilities]
    runs += [tcp_run(c, duration_s) for c in chosen]
    results, sources = _ns3_results(runs, Ns3Cache(out), source, rerun_ns3, progress, log)
    suffix = "" if duration_s == DEFAULT_DURATION_S else f"_{duration_s:g}s"
    traces = _write_traces(out / "traces", mobilities, results, duration_s, suffix)
    main = Variant(
        MAIN.name, int(uplink_period_ms), radio_delay_ms, MAIN.description, grant=MAIN.grant
    )
    variants = [main] + ([DIAGNOSTIC] if diagnostic else [])
    settings = _Settings(duration_s, seeds, tolerance, bench, repeat)
    rep = _replay_cases(chosen, variants, results, traces, out / "scenarios", suffix, settings, log)
    meta = {
        "command": command or explicit_command(out, chosen, duration_s, seeds, bench),
        **_provenance(source, sources),
        "duration_s": duration_s,
        "seeds_text": f"1..{seeds}" if seeds > 1 else "1",
        "deterministic": rep.deterministic,
        "radio_delay_ms": rep.radio_main,
        "replay_base_rtt_ms": replay_base_rtt_ms(CORE_DELAY_MS, rep.radio_main)
        + (GRANT_PIPELINE_MS if main.grant else 0)
        if main.uplink_period_ms == 1 and not math.isnan(rep.radio_main)
        else math.nan,
        "ns3_base_rtt_ms": rep.base_ns3,
        "tolerance": tolerance,
        "repeat": repeat,
        "wall_s": time.perf_counter() - started,
    }
    paths = write_report(out, rep.rows, rep.diag_rows, rep.speed_rows, meta)
    wall = time.perf_counter() - started
    return LteValidation(rep.rows, rep.diag_rows, rep.speed_rows, paths, sources, wall)
