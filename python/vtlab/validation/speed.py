"""Speed and memory versus ns-3 (``vtlab bench --vs-ns3``): the same scenario run
``repeat`` times on each side, each run in a child process of its own, measuring wall
time and peak memory (``ru_maxrss`` via ``os.wait4``, :func:`vtlab.ns3.process.
run_process`)."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from vtlab.ns3.process import VTLAB_CHILD, ProcResult, run_process, vtlab_child_command
from vtlab.ns3.program import WIFI_PROGRAM, Ns3Binary, Ns3Error, build_program, ensure_binary
from vtlab.ns3.v2g import ns3_args, run_v2g_flows, vehicle_summary
from vtlab.ns3.wifi import parse_result, wifi_args

__all__ = [
    "BENCH_21_NOTE",
    "BENCH_STATION_SPEC",
    "BenchSide",
    "VsNs3Result",
    "bench_vs_ns3",
]

#: One timed ns-3 run: its flow rows and the process measurements.
Ns3Run = Callable[[], tuple[list[dict[str, Any]], ProcResult]]


@dataclass
class BenchSide:
    """Repeated runs of one side (``vtlab`` or ``ns-3``)."""

    name: str
    wall_s: list[float] = field(default_factory=list)  #: process wall time per run
    inner_wall_s: list[float] = field(default_factory=list)  #: simulation-only wall time
    max_rss_mib: list[float] = field(default_factory=list)  #: peak RSS per run
    goodput_bps: float = math.nan  #: per flow (several flows: the mean over flows)
    completion_s: float = math.nan  #: the longest flow's
    segments_sent: int = 0  #: data segments sent by TCP, retransmissions included (all flows)
    flows: int = 1
    aggregate_goodput_bps: float = math.nan  #: see :func:`vehicle_summary`

    def record(self, rows: Sequence[Mapping[str, Any]], segments_key: str) -> None:
        """Take the goodput, completion and segment count of one run's flow rows."""
        summary = vehicle_summary(rows)
        self.flows = len(rows)
        self.goodput_bps = summary["goodput_bps"]
        self.aggregate_goodput_bps = summary["aggregate_goodput_bps"]
        self.completion_s = max(float(r["completion_s"]) for r in rows)
        self.segments_sent = sum(int(r.get(segments_key) or 0) for r in rows)

    @property
    def median_wall_s(self) -> float:
        return statistics.median(self.wall_s)

    @property
    def median_inner_wall_s(self) -> float:
        return statistics.median(self.inner_wall_s)

    @property
    def peak_rss_mib(self) -> float:
        return max(self.max_rss_mib)


@dataclass
class VsNs3Result:
    """Result of :func:`bench_vs_ns3`."""

    scenario_hash: str
    seed: int
    vtlab_version: str
    ns3_version: str
    ns3_args: list[str]
    vtlab: BenchSide
    ns3: BenchSide
    events: int
    packets: int
    baseline_rss_mib: float  #: peak RSS of the same Python child without running anything

    @property
    def speedup(self) -> float:
        """ns-3 process wall time / vtlab process wall time (medians)."""
        return self.ns3.median_wall_s / self.vtlab.median_wall_s

    @property
    def inner_speedup(self) -> float:
        """ns-3 / vtlab, simulation time only (vtlab: the ``_core.run`` call; ns-3:
        the program's own wall time from ``main`` to the end, library loading excluded)."""
        return self.ns3.median_inner_wall_s / self.vtlab.median_inner_wall_s

    @property
    def per_segment_speedup(self) -> float:
        """:attr:`inner_speedup` per data segment sent: the two sides' runs differ in
        how many segments they send (different random streams, different recovery)."""
        v, n = self.vtlab, self.ns3
        if not (v.segments_sent and n.segments_sent):
            return math.nan
        return (n.median_inner_wall_s / n.segments_sent) / (v.median_inner_wall_s / v.segments_sent)

    @property
    def memory_ratio(self) -> float:
        """ns-3 peak RSS / vtlab peak RSS (whole processes)."""
        return self.ns3.peak_rss_mib / self.vtlab.peak_rss_mib

    @property
    def events_per_s(self) -> float:
        return self.events / self.vtlab.median_inner_wall_s

    @property
    def packets_per_s(self) -> float:
        return self.packets / self.vtlab.median_inner_wall_s

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(
            speedup=self.speedup,
            inner_speedup=self.inner_speedup,
            per_segment_speedup=self.per_segment_speedup,
            memory_ratio=self.memory_ratio,
            events_per_s=self.events_per_s,
            packets_per_s=self.packets_per_s,
        )
        return d

    def summary_lines(self) -> list[str]:
        """A human-readable summary (what ``vtlab bench --vs-ns3`` prints)."""
        v, n = self.vtlab, self.ns3
        runs = len(v.wall_s)

        def walls(side: BenchSide) -> str:
            return ", ".join(f"{w:.3f}" for w in side.wall_s)

        if v.flows > 1:
            goodput = (
                f"goodput      per vehicle (mean of {v.flows}) vtlab {v.goodput_bps / 1e6:.3f}  "
                f"ns-3 {n.goodput_bps / 1e6:.3f} Mbit/s; aggregate vtlab "
                f"{v.aggregate_goodput_bps / 1e6:.3f}  ns-3 {n.aggregate_goodput_bps / 1e6:.3f} "
                "Mbit/s (same parameters, different RNG streams)"
            )
        else:
            goodput = (
                f"goodput      vtlab {v.goodput_bps / 1e6:.3f} Mbit/s  "
                f"ns-3 {n.goodput_bps / 1e6:.3f} Mbit/s (same parameters, different RNG streams)"
            )
        return [
            f"scenario {self.scenario_hash} · seed/run {self.seed} · {runs} runs per side · "
            f"vtlab {self.vtlab_version} · ns-3 {self.ns3_version}",
            f"ns-3 args    {' '.join(self.ns3_args)}",
            f"wall/run     vtlab {v.median_wall_s:.3f} s ({walls(v)})  "
            f"ns-3 {n.median_wall_s:.3f} s ({walls(n)})  -> {self.speedup:,.1f}x",
            f"sim only     vtlab {v.median_inner_wall_s * 1e3:.1f} ms  "
            f"ns-3 {n.median_inner_wall_s * 1e3:.1f} ms  -> {self.inner_speedup:,.1f}x "
            f"({self.per_segment_speedup:,.1f}x per data segment: vtlab sent "
            f"{v.segments_sent:,}, ns-3 {n.segments_sent:,})",
            f"peak RSS     vtlab {v.peak_rss_mib:.1f} MiB (Python + core; bare interpreter "
            f"with the core imported: {self.baseline_rss_mib:.1f} MiB)  "
            f"ns-3 {n.peak_rss_mib:.1f} MiB  -> {self.memory_ratio:.2f}x",
            f"vtlab rate   {self.events:,} events ({self.events_per_s / 1e6:.2f} M events/s), "
            f"{self.packets:,} link transmissions ({self.packets_per_s / 1e6:.2f} M packets/s)",
            goodput,
        ]


def _wifi_reference(
    expanded: Mapping[str, Any], seed: int, log: Callable[[str], None] | None
) -> tuple[list[str], Ns3Binary, Ns3Run]:
    """The ns-3 Wi-Fi program's arguments, binary and one timed run, for a
    ``vanet-chain`` scenario (``vtlab bench vanet-chain --vs-ns3``)."""
    try:
        args = wifi_args(expanded, seed)
    except ValueError as exc:
        raise Ns3Error(str(exc)) from None
    binary = build_program(WIFI_PROGRAM, log=log)
    rule = expanded["media"][0]["wifi"]["reception"]["model"]
    if rule != "dsss-ber" and log is not None:
        log(
            f"note: vtlab receives frames by the {rule} rule, ns-3 by its DSSS error rates "
            "(--set 'wifi.reception={model=\"dsss-ber\",preamble_snr_db=4}' for the same rule; "
            "docs/validation.md)"
        )

    def run() -> tuple[list[dict[str, Any]], ProcResult]:
        proc = run_process([str(binary.path), *args])
        if proc.returncode != 0:
            tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
            raise Ns3Error(f"the ns-3 Wi-Fi program failed (exit {proc.returncode}): {tail}")
        res = parse_result(proc.stdout)
        row = {
            "goodput_bps": res["goodput_bps"],
            "completion_s": math.nan,  # runs for the scenario's duration, as vtlab's
            "packets_sent_data": res["tcp_data_segments"],
            "wall_s": res["wall_s"],
        }
        return [row], proc

    return args, binary, run


def bench_vs_ns3(
    scenario: Any = None,
    *,
    seed: int = 1,
    repeat: int = 3,
    log: Callable[[str], None] | None = None,
) -> VsNs3Result:
    """Run the same scenario ``repeat`` times on each side, each run in its own child
    process, and measure wall time and peak memory (``ru_maxrss`` via ``os.wait4``).

    ``scenario`` is anything :meth:`vtlab.Scenario.coerce` accepts; the default is the
    bench scenario (NewReno, 100 MB, single-vehicle V2G, 5 % mean loss);
    :data:`BENCH_STATION_SPEC` is the 21-vehicle charging station.  It is translated
    with :func:`ns3_args`; the vtlab child imports only ``vtlab._core``.  With several
    flows, goodput is the mean over flows (plus the aggregate, see
    :func:`vehicle_summary`) and the segment count the sum.
    The sides alternate (vtlab, ns-3, vtlab, ...) so that machine load hits both.
    """
    from vtlab import _core
    from vtlab.bench import DEFAULT_BENCH_SPEC
    from vtlab.scenario import Scenario

    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    sc = Scenario.coerce(scenario if scenario is not None else dict(DEFAULT_BENCH_SPEC))
    expanded = json.loads(sc.expanded_json())
    if expanded.get("preset") == "vanet-chain":
        args, binary, run_ns3 = _wifi_reference(expanded, seed, log)
    else:
        args = ns3_args(expanded, seed)
        binary = ensure_binary(log=log)

        def run_ns3() -> tuple[list[dict[str, Any]], ProcResult]:
            return run_v2g_flows(binary, args, measure=True)

    spec_json = sc.to_json()
    child = vtlab_child_command(spec_json, seed)
    baseline = run_process([*child[:4], VTLAB_CHILD.split("spec = ")[0], child[5]])
    if baseline.returncode != 0:
        raise RuntimeError(f"the vtlab child failed: {baseline.stderr.strip()[-500:]}")

    vt, ns = BenchSide("vtlab"), BenchSide("ns-3")
    events = packets = 0
    scenario_hash = ""
    for _ in range(repeat):
        proc = run_process(child)
        if proc.returncode != 0:
            raise RuntimeError(f"the vtlab child failed: {proc.stderr.strip()[-500:]}")
        d = json.loads(proc.stdout.strip().splitlines()[-1])
        vt.wall_s.append(proc.wall_s)
        vt.inner_wall_s.append(d["call_wall_s"])
        vt.max_rss_mib.append(proc.max_rss_mib)
        vt.record(d.get("flows") or [d["flow"]], "segments_sent")
        events, packets = d["meta"]["events"], d["meta"]["packets"]
        scenario_hash = d["meta"]["scenario_hash"]

        rows, proc = run_ns3()
        ns.wall_s.append(proc.wall_s)
        ns.inner_wall_s.append(float(rows[0]["wall_s"]))
        ns.max_rss_mib.append(proc.max_rss_mib)
        ns.record(rows, "packets_sent_data")
        if log is not None:
            log(
                f"run {len(vt.wall_s)}/{repeat}: vtlab {vt.wall_s[-1]:.3f} s, "
                f"ns-3 {ns.wall_s[-1]:.3f} s"
            )

    return VsNs3Result(
        scenario_hash=scenario_hash,
        seed=seed,
        vtlab_version=_core.version(),
        ns3_version=binary.ns3_version,
        ns3_args=args,
        vtlab=vt,
        ns3=ns,
        events=events,
        packets=packets,
        baseline_rss_mib=baseline.max_rss_mib,
    )


#: The charging-station bench scenario (issue 5's second one): 21 vehicles, 3 per PLC
#: segment, NewReno, 100 MB each, 5 % mean loss per vehicle.  On the command line:
#: ``vtlab bench station --vs-ns3 --cc newreno --loss 5%``.
BENCH_STATION_SPEC: dict[str, Any] = {
    "preset": "station",
    "qdisc": "none",
    "bytes": "100MB",
    "loss": {"mean_loss": "5%"},
    "tcp": {"cc": "newreno"},
}

#: Printed by ``vtlab bench --vs-ns3`` after a single-vehicle scenario.
BENCH_21_NOTE = (
    "21-vehicle charging station (21 x 100 MB, 5 %): "
    "vtlab bench station --vs-ns3 --cc newreno --loss 5%"
)
