"""Type stubs for the compiled binding ``vtlab._core`` (crates/vtlab-py)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any, NotRequired, TypedDict

class ScenarioError(ValueError):
    """An invalid scenario or spec; the message names the field path and the allowed
    values, e.g. ``tcp.cc: unknown congestion control 'foo' (allowed: newreno)``."""

class CcParam(TypedDict):
    name: str
    default: float
    min: float
    max: float
    doc: str

class CongestionControl(TypedDict):
    name: str
    description: str
    source: str
    ns3_type_id: str | None
    params: list[CcParam]

class RunMeta(TypedDict):
    scenario_hash: str
    seed: int
    version: str
    events: int
    packets: int
    wall_s: float
    sim_time_s: float
    pcap: NotRequired[list[PcapFile]]

class PcapFile(TypedDict):
    path: Path
    packets: int

class RunOutput(TypedDict):
    flows: dict[str, list[Any]]
    links: dict[str, list[Any]]
    sessions: dict[str, list[Any]]
    messages: dict[str, list[Any]]
    traces: dict[str, list[Any]] | None
    events: dict[str, list[Any]] | None
    meta: RunMeta

def version() -> str:
    """The vtlab version string."""

def presets() -> list[str]:
    """Names of the scenario presets."""

def congestion_controls() -> list[CongestionControl]:
    """Every congestion control with its description, source, ns-3 TypeId
    (without ``ns3::``; None where ns-3 has none) and parameters."""

def expand(spec_json: str) -> str:
    """Validate a spec (JSON) and return the fully resolved scenario as canonical JSON.

    Raises ScenarioError."""

def scenario_hash(spec_json: str) -> str:
    """Hash of the resolved scenario (16 hex digits), as carried by every result row.

    Raises ScenarioError."""

def burst_mean_loss(p: float, burst_min: int = 1, burst_max: int = 4) -> float:
    """Mean loss rate of the burst loss model for burst-start probability ``p``."""

def burst_start_for_mean_loss(mean_loss: float, burst_min: int = 1, burst_max: int = 4) -> float:
    """Burst-start probability that gives the mean loss rate ``mean_loss``."""

def parse_quantity(kind: str, text: str) -> float | int:
    """Parse ``text`` as scenario fields do: ``kind`` is ``"bytes"`` (``"128KiB"`` ->
    131072), ``"rate"`` in bit/s (``"10Mbps"`` -> 10000000), ``"duration"`` in
    nanoseconds (``"0.9ms"`` -> 900000) or ``"fraction"`` (``"5%"`` -> 0.05); an int for
    the first three, a float for a fraction (not range-checked). Raises ScenarioError
    with the message a scenario field of that kind gives for a bad value (e.g.
    ``invalid size 'abc': expected a byte count ...``), or for an unknown kind."""

def pcap_files(spec_json: str, pcap_points: list[str] | None = None) -> list[str]:
    """The capture file names ``run(spec_json, ..., pcap=DIR, pcap_points=...)`` would
    write into DIR (``NODE.pcap``, ``LINK-NODE.pcap``). Raises ScenarioError for an
    unknown node or link name."""

def run(
    spec_json: str,
    seed: int,
    trace: bool = False,
    trace_changes: bool = False,
    events: bool = False,
    trace_batches: Callable[[dict[str, list[Any]]], None] | None = None,
    pcap: str | Path | None = None,
    pcap_points: list[str] | None = None,
    pcap_payload: bool = True,
) -> RunOutput:
    """Run one simulation of the spec (JSON) with an unsigned 64-bit seed.

    ``trace`` records sender state every ``trace_interval`` (or, with
    ``trace_changes``, at every change of cwnd, ssthresh or state); ``events`` records
    typed events. ``pcap`` writes packet captures into that directory
    (docs/captures.md) of the nodes and links named in ``pcap_points`` (default:
    every node), with zero-filled payloads unless ``pcap_payload`` is false; the
    files are listed in ``meta["pcap"]``. Raises ScenarioError (also for an unknown
    capture point or a directory that cannot be created, before the run); OSError
    if writing a capture fails; KeyboardInterrupt on Ctrl-C or
    :func:`request_stop`."""

def channel_series(
    spec_json: str, link: str, from_node: str, n_ms: int, seed: int
) -> dict[str, tuple[str, bytearray]]:
    """The channel model's output for ``n_ms`` TTIs (at most 3 600 000) of the cellular
    direction of ``link`` leaving ``from_node``, as the run with ``seed`` sees it:
    columns ``time_ms``, ``bytes``, ``lost``, ``rsrp_dbm``, ``sinr_db``, ``cqi``,
    ``itbs``, each a pair (numpy dtype, the values in that dtype, one per TTI), for
    ``numpy.frombuffer``. Raises ScenarioError naming the argument."""

def request_stop(clear: bool = False) -> None:
    """Ask every running simulation (any thread) to stop with KeyboardInterrupt at its
    next check; ``clear=True`` withdraws the request."""

class Column(TypedDict):
    name: str
    kind: str
    unit: str
    doc: str

def schema() -> dict[str, list[Column]]:
    """The declared columns of every result table (flows, links, sessions, messages,
    traces, events; identity columns first)."""

class Emulator:
    """Two TAP devices joined through the spec's path (the first flow's) in real
    time (Linux only; docs/emulation.md). The constructor checks the scenario
    (ScenarioError; 802.11 media are refused), then creates the devices ``far_tap``
    and ``near_tap`` through ``tun`` (OSError); ``log`` and ``pcap`` as in
    ``vtlab emulate``; ``realtime``: the loop at SCHED_FIFO 1 (where permitted);
    ``cpu``: the CPU the loop stays on."""

    near: str
    far: str
    mtu: int
    def __init__(
        self,
        spec_json: str,
        seed: int,
        far_tap: str,
        near_tap: str,
        tun: str | Path,
        log: str | Path | None = None,
        pcap: str | Path | None = None,
        realtime: bool = False,
        cpu: int | None = None,
    ) -> None: ...
    def start(self) -> None:
        """Carry frames, in a thread of its own (it never holds the GIL)."""
    def running(self) -> bool:
        """Whether the driver thread still carries frames."""
    def stop(self) -> dict[str, Any] | None:
        """End the run: ``counters`` (one dict per path direction: link, direction,
        frames, bytes, drops_queue, drops_aqm, drops_loss, drops_harq, queue_max),
        ``read``, ``written``, ``refused`` (per way), ``seconds``, ``cpu_seconds``
        (the loop's CPU time), ``realtime`` (whether it ran at real-time priority) and
        ``lateness`` (per way: frames, p50_ns, p99_ns, p999_ns, max_ns). OSError if the driver
        failed; None if it never started."""
