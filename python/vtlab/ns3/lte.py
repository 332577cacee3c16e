"""The ns-3 LTE reference program ``validation/ns3/lte.cc`` for vtlab's trace-driven
cellular link: building it (:data:`LTE_PROGRAM`, :func:`ensure_lte_binary`), its
arguments from a resolved vtlab scenario (:func:`lte_args`; :func:`reference_spec` is
the ``lte-cabin`` scenario of one of its cases), running it (:func:`run_lte`) and
parsing its output (:func:`parse_lte_output`).

See ``validation/ns3/README-lte.md`` for what the program builds and what its
outputs mean.  Command line (``PYTHONPATH=python``)::

    python -m vtlab.ns3.lte build                     # compile, print the binary's path
    python -m vtlab.ns3.lte run --speed 16.7 --rlc-buffer 2097152 --duration 12
    python -m vtlab.ns3.lte matrix --out validation/lte/ns3   # the stored results
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from vtlab import _core
from vtlab.cellular import MAHIMAHI_PACKET_BYTES, to_mahimahi, write_mahimahi
from vtlab.ns3.cc import ns3_type_id
from vtlab.ns3.process import num, run_process
from vtlab.ns3.program import (
    Ns3Binary,
    Ns3Error,
    Ns3Install,
    Program,
    build_program,
    source_dir,
)

__all__ = [
    "DISTANCE_M",
    "LTE_BINARY_NAME",
    "LTE_MODULES",
    "LTE_PROGRAM",
    "MATRIX",
    "MOVING_SPEED_MPS",
    "case_args",
    "ensure_lte_binary",
    "lte_args",
    "lte_compile_command",
    "lte_source_path",
    "parse_lte_output",
    "reference_spec",
    "run_lte",
    "run_matrix",
    "summarize_lte",
]

#: ns-3 modules linked into ``lte.cc`` (the LTE module pulls in spectrum, antenna,
#: propagation, buildings, virtual-net-device, fd-net-device, csma and config-store
#: through its own NEEDED entries).
LTE_MODULES: tuple[str, ...] = (
    "core",
    "network",
    "internet",
    "point-to-point",
    "applications",
    "mobility",
    "lte",
    "stats",
)

#: Name of the compiled program inside its cache directory.
LTE_BINARY_NAME = "lte"

#: Settings of ``lte.cc`` that no vtlab scenario field describes, fixed for every run:
#: the path-loss model (ns-3's COST-231 Hata), the base-RTT probes before the flow and
#: the offered rate of the UDP capacity flow (``app="udp"``).
PATHLOSS = "ns3::Cost231PropagationLossModel"
PINGS = 5
UDP_RATE_MBPS = 100.0

#: The reference setting in vtlab's terms (:func:`reference_spec`): the remote host's
#: one-way delay to the PGW, the eNB's transmit power (ns-3's default), TCP's segment
#: size (1448 B + 52 B of headers with timestamps = 1500-byte packets) and socket
#: buffers.
CORE_DELAY_MS = 32.0
ENB_TX_POWER_DBM = 30.0
SEGMENT_BYTES = 1448
SOCKET_BUFFER_BYTES = 4 * 1024 * 1024

_DIRECTIONS = {"dl": "downlink", "ul": "uplink"}


# -- building ------------------------------------------------------------------------


def lte_source_path() -> Path:
    """``$VTLAB_NS3_LTE_SOURCE``, else ``lte.cc`` of the packaged reference programs
    (:func:`vtlab.ns3.program.source_dir`)."""
    env = os.environ.get("VTLAB_NS3_LTE_SOURCE")
    return Path(env) if env else source_dir() / "lte.cc"


#: ``lte.cc``: :data:`LTE_MODULES`, plus ``--allow-shlib-undefined``:
#: ``libns3.44-lte.so`` needs ``libns3.44-config-store.so``, whose GTK configuration
#: window refers to GTK symbols the wheel does not ship. The program never opens that
#: window, and the dynamic linker resolves functions lazily, so the binary runs.
LTE_PROGRAM = Program(
    "LTE program",
    lte_source_path,
    "VTLAB_NS3_LTE_SOURCE",
    LTE_BINARY_NAME,
    "ns3-lte",
    LTE_MODULES,
    ("-Wl,--allow-shlib-undefined",),
)


def lte_compile_command(install: Ns3Install, source: Path, output: Path) -> list[str]:
    """The g++ command that builds ``lte.cc`` (:data:`LTE_PROGRAM`)."""
    return LTE_PROGRAM.command(install, source, output)


def ensure_lte_binary(
    *,
    source: Path | None = None,
    cache: Path | None = None,
    rebuild: bool = False,
    log: Callable[[str], None] | None = None,
    output: Path | None = None,
) -> Ns3Binary:
    """Compile ``lte.cc`` unless the cached binary is current
    (:func:`vtlab.ns3.program.build_program`): ``<cache>/ns3-lte/<build hash>/lte`` by
    default. Raises :class:`vtlab.ns3.program.Ns3NotInstalled` (no ``ns3`` wheel) or
    :class:`vtlab.ns3.program.Ns3Error` (no compiler, build failure)."""
    return build_program(
        LTE_PROGRAM, source=source, cache=cache, rebuild=rebuild, log=log, output=output
    )


# -- the arguments -------------------------------------------------------------------


def reference_spec(
    speed_mps: float,
    distance_m: float,
    rlc_buffer_bytes: int,
    direction: str = "dl",
    duration_s: float = 12.0,
    *,
    cc: str = "cubic",
) -> dict[str, Any]:
    """One case of ``lte.cc`` as a vtlab ``lte-cabin`` scenario: the UE ``distance_m``
    from the eNB moving at ``speed_mps`` (the channel model's distance and speed; the
    eNB at ns-3's 30 dBm), the RLC transmit buffer as the LTE link's buffer, the core
    delay, one bulk flow ``dl`` (server -> UE) or ``ul`` for ``duration_s``, and TCP
    (ns3 profile, ``cc``, :data:`SEGMENT_BYTES`, :data:`SOCKET_BUFFER_BYTES`).  Its
    resolved form is what :func:`lte_args` reads.  Raises :class:`ValueError` for an
    unknown direction."""
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be 'dl' or 'ul', got {direction!r}")
    return {
        "preset": "lte-cabin",
        "direction": _DIRECTIONS[direction],
        "stop": f"{float(duration_s)!r}s",
        "core_delay": f"{CORE_DELAY_MS!r}ms",
        "distance_m": float(distance_m),
        "speed_kmh": float(speed_mps) * 3.6,
        "channel": {"enb_power_dbm": ENB_TX_POWER_DBM},
        "buffer": int(rlc_buffer_bytes),
        "tcp": {
            "profile": "ns3",
            "cc": cc,
            "mss": SEGMENT_BYTES,
            "send_buffer": SOCKET_BUFFER_BYTES,
            "recv_buffer": SOCKET_BUFFER_BYTES,
        },
    }


def _channel(lte: Mapping[str, Any]) -> Mapping[str, Any]:
    """The downlink channel model of the resolved ``lte`` link (ValueError if none)."""
    capacity = lte.get("capacity_ab") or {}
    if capacity.get("kind") != "model":
        raise ValueError("links.lte.capacity_ab: the ns-3 LTE program needs the channel model")
    channel = capacity["channel"]
    if channel.get("distance_m") is None:
        raise ValueError("channel.distance_m: the ns-3 LTE program places the UE by distance")
    return channel


def lte_args(
    expanded: Mapping[str, Any],
    seed: int,
    *,
    app: str = "tcp",
    rlc: str = "um",
    rtt_series: bool = False,
) -> list[str]:
    """The command-line arguments of ``lte.cc`` for a resolved ``lte-cabin`` scenario
    (``_core.expand``, e.g. of :func:`reference_spec`) and a seed (``--run``).

    From the scenario: the flow's direction, its congestion control (as an ns-3
    TypeId), the LTE link's buffer (``--rlcBuffer``), the horizon, the channel model's
    distance, speed and eNB power, the core link's delay, TCP's segment size and
    socket buffers.  Settings of the program alone: ``app`` (``tcp``, or ``udp`` for
    the saturating capacity flow), the RLC mode ``rlc`` (``um``/``am``) and
    ``rtt_series`` (print every RTT sample).  Raises :class:`ValueError` naming what
    the program cannot run."""
    if rlc not in ("um", "am"):
        raise ValueError(f"rlc must be 'um' or 'am', got {rlc!r}")
    if app not in ("tcp", "udp"):
        raise ValueError(f"app must be 'tcp' or 'udp', got {app!r}")
    links = {link["name"]: link for link in expanded.get("links", [])}
    flows = list(expanded.get("flows", []))
    if "lte" not in links or "core" not in links or len(flows) != 1:
        raise ValueError("the ns-3 LTE program runs preset lte-cabin with one flow")
    flow, lte = flows[0], links["lte"]
    channel = _channel(lte)
    if lte.get("queue_bytes") is None:
        raise ValueError("buffer: the ns-3 LTE program needs the RLC buffer in bytes")
    duration_s = int(expanded["stop_ns"]) / 1e9
    if duration_s <= 0:
        raise ValueError(f"stop: the duration must be positive, got {duration_s:g} s")
    if float(channel["distance_m"]) <= 0:
        raise ValueError(f"distance_m: must be positive, got {channel['distance_m']}")
    tcp = flow["tcp"]
    type_id = ns3_type_id(tcp["cc"])
    if type_id is None:
        raise ValueError(f"tcp.cc: ns-3 has no counterpart of {tcp['cc']!r}")
    args = [
        f"--direction={'dl' if flow['src'] == 'server' else 'ul'}",
        f"--app={app}",
        f"--cc={type_id}",
        f"--rlc={rlc}",
        f"--rlcBuffer={int(lte['queue_bytes'])}",
        f"--duration={num(duration_s)}",
        f"--distance={num(channel['distance_m'])}",
        f"--speed={num(channel['speed_mps'])}",
        f"--coreDelay={num(int(links['core']['delay_ns']) / 1e6)}",
        f"--segmentSize={int(tcp['mss'])}",
        f"--sndBuf={int(tcp['send_buffer'])}",
        f"--rcvBuf={int(tcp['recv_buffer'])}",
        f"--pathloss={PATHLOSS}",
        f"--enbTxPower={num(channel['enb_power_dbm'])}",
        f"--pings={PINGS}",
        f"--run={int(seed)}",
    ]
    if app == "udp":
        args.append(f"--udpRate={num(UDP_RATE_MBPS)}")
    if rtt_series:
        args.append("--rttSeries=1")
    return args


def case_args(
    speed_mps: float,
    distance_m: float,
    rlc_buffer_bytes: int,
    direction: str = "dl",
    duration_s: float = 12.0,
    seed: int = 1,
    rlc: str = "um",
    *,
    app: str = "tcp",
    cc: str = "cubic",
    rtt_series: bool = False,
) -> list[str]:
    """:func:`lte_args` of one case: its :func:`reference_spec` resolved by vtlab.
    Raises :class:`ValueError` (a :class:`vtlab._core.ScenarioError` for a value vtlab
    refuses)."""
    spec = reference_spec(speed_mps, distance_m, rlc_buffer_bytes, direction, duration_s, cc=cc)
    expanded = json.loads(_core.expand(json.dumps(spec)))
    return lte_args(expanded, seed, app=app, rlc=rlc, rtt_series=rtt_series)


# -- running -------------------------------------------------------------------------


def parse_lte_output(stdout: str) -> dict[str, Any]:
    """The JSON lines of ``lte.cc`` as one flat dict: the ``result`` fields at the
    top level, plus ``config``, ``ping_rtt_ms``, ``chan`` (``t_s``, ``dist_m``,
    ``rsrp_dbm``, ``sinr_db``), ``tb_ms``/``tb_bytes``/``tb_mcs``,
    ``rlc_ms``/``rlc_bytes`` and, with ``--rttSeries``, ``rtt_t_ms``/``rtt_ms``.
    Raises :class:`vtlab.ns3.program.Ns3Error` when a line is missing."""
    lines: dict[str, dict[str, Any]] = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            lines[d.pop("kind", "")] = d
    for kind in ("config", "tb", "result"):
        if kind not in lines:
            raise Ns3Error(f"the LTE program printed no {kind!r} line")
    out: dict[str, Any] = dict(lines["result"])
    out["config"] = lines["config"]
    out["ping_rtt_ms"] = lines.get("ping", {}).get("rtt_ms", [])
    out["chan"] = lines.get("chan", {})
    out["tb_ms"] = [int(x) for x in lines["tb"]["ms"]]
    out["tb_bytes"] = [int(x) for x in lines["tb"]["bytes"]]
    out["tb_mcs"] = [int(x) for x in lines["tb"].get("mcs", [])]
    rlc = lines.get("rlc", {"ms": [], "bytes": []})
    out["rlc_ms"] = [int(x) for x in rlc["ms"]]
    out["rlc_bytes"] = [int(x) for x in rlc["bytes"]]
    if "rtt" in lines:
        out["rtt_t_ms"] = lines["rtt"]["t_ms"]
        out["rtt_ms"] = lines["rtt"]["rtt_ms"]
    return out


def run_lte(
    args: Sequence[str],
    *,
    binary: Ns3Binary | Path | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run ``lte.cc`` with ``args`` (:func:`lte_args`, :func:`case_args`), compiling it
    first if needed, and return :func:`parse_lte_output`'s dict plus ``args`` (the
    command) and ``process_wall_s`` (spawn to exit, :func:`vtlab.ns3.process.
    run_process`; ``wall_s`` is the program's own ``Simulator::Run`` time).

    ``tb_ms`` are milliseconds since the flow start (only those with bytes) and
    ``tb_bytes`` the bytes of correctly decoded transport blocks in that ms.
    Raises :class:`vtlab.ns3.program.Ns3Error` when ns-3, g++, the build or the run
    fails."""
    if binary is None:
        binary = ensure_lte_binary(log=log)
    path = binary.path if isinstance(binary, Ns3Binary) else Path(binary)
    cmd = [str(path), *args]
    proc = run_process(cmd)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise Ns3Error(f"{shlex.join(cmd)} exited with {proc.returncode}: {tail}")
    out = parse_lte_output(proc.stdout)
    out["args"] = cmd
    out["process_wall_s"] = proc.wall_s
    return out


# -- the stored validation matrix ----------------------------------------------------

_2MB = 2 * 1024 * 1024
#: The UE's distance from the eNB at the flow start (m).
DISTANCE_M = 50.0
#: The moving UE's speed, radially away from the eNB (m/s; 60 km/h).
MOVING_SPEED_MPS = 16.7

#: The measured cases of validation/lte/ns3 (downlink, 12 s, seed 1, UE
#: :data:`DISTANCE_M` from the eNB; "moving" drives radially away at 16.7 m/s, to 250 m).
MATRIX: tuple[dict[str, Any], ...] = (
    {"case": "static_rlc10k", "speed_mps": 0.0, "rlc_buffer_bytes": 10240, "app": "tcp"},
    {"case": "static_rlc2m", "speed_mps": 0.0, "rlc_buffer_bytes": _2MB, "app": "tcp"},
    {
        "case": "moving_rlc10k",
        "speed_mps": MOVING_SPEED_MPS,
        "rlc_buffer_bytes": 10240,
        "app": "tcp",
    },
    {"case": "moving_rlc2m", "speed_mps": MOVING_SPEED_MPS, "rlc_buffer_bytes": _2MB, "app": "tcp"},
    {"case": "static_capacity", "speed_mps": 0.0, "rlc_buffer_bytes": _2MB, "app": "udp"},
    {
        "case": "moving_capacity",
        "speed_mps": MOVING_SPEED_MPS,
        "rlc_buffer_bytes": _2MB,
        "app": "udp",
    },
)

#: The headline numbers of a result (README-lte.md's table).
SUMMARY_KEYS: tuple[str, ...] = (
    "goodput_bps",
    "tb_bps",
    "tb_window_bps",
    "rlc_bps",
    "base_rtt_ms",
    "rtt_count",
    "rtt_mean_ms",
    "rtt_median_ms",
    "rtt_p95_ms",
    "rtt_max_ms",
    "rtt_min_ms",
    "retransmissions",
    "recoveries",
    "loss_episodes",
    "rlc_tx_drops",
    "tb_ok",
    "tb_fail",
    "tb_ok_retx",
    "max_cwnd_bytes",
    "wall_s",
)


def summarize_lte(res: Mapping[str, Any]) -> dict[str, Any]:
    """The headline numbers of one :func:`run_lte` result (what README-lte.md's
    table shows)."""
    s = {k: res.get(k) for k in SUMMARY_KEYS}
    chan = res.get("chan") or {}
    if chan.get("sinr_db"):
        s["sinr_db_first"] = chan["sinr_db"][0]
        s["sinr_db_last"] = chan["sinr_db"][-1]
        s["dist_m_last"] = chan["dist_m"][-1]
    return s


def _matrix_case(
    case: Mapping[str, Any],
    out: Path,
    binary: Ns3Binary,
    distance_m: float,
    duration_s: float,
    seed: int,
) -> dict[str, Any]:
    """Run one case of :data:`MATRIX`, write its files, return its summary row."""
    args = case_args(
        case["speed_mps"],
        distance_m,
        case["rlc_buffer_bytes"],
        "dl",
        duration_s,
        seed,
        app=case["app"],
        rtt_series=case["app"] == "tcp",
    )
    res = run_lte(args, binary=binary)
    res["args"] = [Path(res["args"][0]).name, *res["args"][1:]]
    tb_ms = res["tb_ms"]
    if case["app"] == "udp" and tb_ms:
        # capacity trace: drop the one-way delay before the first TB
        tb_ms = [t - tb_ms[0] for t in tb_ms]
    stamps = to_mahimahi(tb_ms, res["tb_bytes"])
    write_mahimahi(out / f"{case['case']}.mahimahi", stamps)
    (out / f"{case['case']}.json").write_text(json.dumps({**case, **res}) + "\n")
    row = {**case, "distance_m": distance_m, "duration_s": duration_s, "seed": seed}
    row.update(summarize_lte(res))
    row["mahimahi_lines"] = len(stamps)
    row["mahimahi_bps"] = len(stamps) * MAHIMAHI_PACKET_BYTES * 8 / duration_s
    return row


def run_matrix(
    out: Path,
    *,
    distance_m: float = DISTANCE_M,
    duration_s: float = 12.0,
    seed: int = 1,
    log: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Run :data:`MATRIX` one case at a time and write, under ``out``,
    ``<case>.json`` (the full result, per-ms arrays included), ``<case>.mahimahi``
    (:func:`vtlab.cellular.to_mahimahi` of the TB trace, in ms since the flow start;
    the UDP capacity cases are shifted so that their first TB is at ms 0, which drops
    the one-way delay before the first packet reaches the eNB) and ``summary.json``."""
    out.mkdir(parents=True, exist_ok=True)
    binary = ensure_lte_binary(log=log)
    rows = []
    for case in MATRIX:
        row = _matrix_case(case, out, binary, distance_m, duration_s, seed)
        rows.append(row)
        if log is not None:
            log(
                f"{case['case']}: goodput {row['goodput_bps'] / 1e6:.2f} Mbit/s, "
                f"TB {row['tb_bps'] / 1e6:.2f} Mbit/s, RTT mean {row['rtt_mean_ms']} ms, "
                f"wall {row['wall_s']:.2f} s"
            )
    (out / "summary.json").write_text(json.dumps(rows, indent=1) + "\n")
    return rows


# -- command line --------------------------------------------------------------------


def _parser() -> Any:
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m vtlab.ns3.lte", description="The ns-3 LTE reference program."
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile validation/ns3/lte.cc unless up to date")
    b.add_argument("--rebuild", action="store_true")
    r = sub.add_parser("run", help="run one case, print the result (JSON, no per-ms arrays)")
    r.add_argument("--speed", type=float, default=0.0, help="m/s, radially away (default 0)")
    r.add_argument(
        "--distance", type=float, default=DISTANCE_M, help="m at the flow start (default 50)"
    )
    r.add_argument("--rlc-buffer", type=int, default=10240, help="bytes (default 10240)")
    r.add_argument("--direction", choices=("dl", "ul"), default="dl")
    r.add_argument("--duration", type=float, default=12.0)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--rlc", choices=("um", "am"), default="um")
    r.add_argument("--app", choices=("tcp", "udp"), default="tcp")
    r.add_argument("--mahimahi", type=Path, help="also write the TB trace as a mahimahi trace")
    m = sub.add_parser("matrix", help="run the stored cases and write them to --out")
    m.add_argument("--out", type=Path, required=True)
    return ap


def _run_one(a: Any, log: Callable[[str], None]) -> None:
    """``run``: one case, its scalars and config as one JSON line."""
    args = case_args(
        a.speed, a.distance, a.rlc_buffer, a.direction, a.duration, a.seed, a.rlc, app=a.app
    )
    res = run_lte(args, log=log)
    if a.mahimahi is not None:
        write_mahimahi(a.mahimahi, to_mahimahi(res["tb_ms"], res["tb_bytes"]))
    scalars = {k: v for k, v in res.items() if not isinstance(v, (list, dict))}
    print(json.dumps({**scalars, "config": res["config"]}))


def _main(argv: Sequence[str]) -> int:
    a = _parser().parse_args(argv)

    def log(line: str) -> None:
        print(line, file=sys.stderr)

    try:
        if a.cmd == "build":
            print(ensure_lte_binary(rebuild=a.rebuild, log=log).path)
        elif a.cmd == "run":
            _run_one(a, log)
        else:
            run_matrix(a.out, log=log)
    except (Ns3Error, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
