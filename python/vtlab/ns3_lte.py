"""The ns-3 LTE reference for vtlab's trace-driven cellular link: compile
``validation/ns3/lte.cc`` on demand (like :func:`vtlab.ns3.program.ensure_binary`, with the
LTE module list), run it (:func:`run_lte`), and turn its per-millisecond transport
blocks into a mahimahi delivery trace (:func:`to_mahimahi`, :func:`write_mahimahi`).

See ``validation/ns3/README-lte.md`` for what the program builds and what its
outputs mean.  Like :mod:`vtlab.ns3`, this module imports only the standard library
(and :mod:`vtlab.ns3`) at import time.

Command line (``PYTHONPATH=python``)::

    python -m vtlab.ns3_lte build                     # compile, print the binary's path
    python -m vtlab.ns3_lte run --speed 16.7 --rlc-buffer 2097152 --duration 12
    python -m vtlab.ns3_lte matrix --out validation/lte/ns3   # the stored results
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vtlab.cellular import MAHIMAHI_PACKET_BYTES, to_mahimahi, write_mahimahi
from vtlab.ns3.cc import ns3_type_id
from vtlab.ns3.program import (
    Ns3Binary,
    Ns3Error,
    Ns3Install,
    Program,
    build_program,
)

__all__ = [
    "LTE_BINARY_NAME",
    "LTE_MODULES",
    "MAHIMAHI_PACKET_BYTES",
    "MATRIX",
    "ensure_lte_binary",
    "lte_args",
    "lte_compile_command",
    "lte_source_path",
    "parse_lte_output",
    "run_lte",
    "run_matrix",
    "summarize_lte",
    "to_mahimahi",
    "write_mahimahi",
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

#: Bytes per mahimahi delivery opportunity (mahimahi's ``PACKET_SIZE``).


# -- building ------------------------------------------------------------------------


def lte_source_path() -> Path:
    """``$VTLAB_NS3_LTE_SOURCE``, else ``validation/ns3/lte.cc`` of the source tree
    this module belongs to."""
    env = os.environ.get("VTLAB_NS3_LTE_SOURCE")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "validation" / "ns3" / "lte.cc"


#: ``lte.cc``: :data:`LTE_MODULES`, plus ``--allow-shlib-undefined``:
#: ``libns3.44-lte.so`` needs ``libns3.44-config-store.so``, whose GTK configuration
#: window refers to GTK symbols the wheel does not ship. The program never opens that
#: window, and the dynamic linker resolves functions lazily, so the binary runs.
LTE_PROGRAM = Program(
    "LTE program",
    lambda: lte_source_path(),
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


# -- running -------------------------------------------------------------------------


def _num(x: float) -> str:
    return f"{float(x):.12g}"


def lte_args(
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
    core_delay_ms: float = 32.0,
    segment_size: int = 1448,
    snd_buf: int = 4 * 1024 * 1024,
    rcv_buf: int = 4 * 1024 * 1024,
    pathloss: str = "ns3::Cost231PropagationLossModel",
    enb_tx_power_dbm: float = 30.0,
    udp_rate_mbps: float = 100.0,
    pings: int = 5,
    rtt_series: bool = False,
) -> list[str]:
    """The command-line arguments of ``lte.cc`` for these parameters (see
    :func:`run_lte`).  Raises :class:`ValueError` on a bad value."""
    if direction not in ("dl", "ul"):
        raise ValueError(f"direction must be 'dl' or 'ul', got {direction!r}")
    if rlc not in ("um", "am"):
        raise ValueError(f"rlc must be 'um' or 'am', got {rlc!r}")
    if app not in ("tcp", "udp"):
        raise ValueError(f"app must be 'tcp' or 'udp', got {app!r}")
    if duration_s <= 0:
        raise ValueError(f"duration_s must be positive, got {duration_s}")
    if distance_m <= 0 or speed_mps < 0:
        raise ValueError("distance_m must be positive and speed_mps non-negative")
    if int(rlc_buffer_bytes) < 0:
        raise ValueError(f"rlc_buffer_bytes must be >= 0, got {rlc_buffer_bytes}")
    ns3_cc = cc if cc.startswith("Tcp") else ns3_type_id(cc.lower())
    if ns3_cc is None:
        raise ValueError(f"unknown congestion control {cc!r} (vtlab name or ns-3 TcpXxx)")
    args = [
        f"--direction={direction}",
        f"--app={app}",
        f"--cc={ns3_cc}",
        f"--rlc={rlc}",
        f"--rlcBuffer={int(rlc_buffer_bytes)}",
        f"--duration={_num(duration_s)}",
        f"--distance={_num(distance_m)}",
        f"--speed={_num(speed_mps)}",
        f"--coreDelay={_num(core_delay_ms)}",
        f"--segmentSize={int(segment_size)}",
        f"--sndBuf={int(snd_buf)}",
        f"--rcvBuf={int(rcv_buf)}",
        f"--pathloss={pathloss}",
        f"--enbTxPower={_num(enb_tx_power_dbm)}",
        f"--pings={int(pings)}",
        f"--run={int(seed)}",
    ]
    if app == "udp":
        args.append(f"--udpRate={_num(udp_rate_mbps)}")
    if rtt_series:
        args.append("--rttSeries=1")
    return args


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
    *case: Any,
    binary: Ns3Binary | Path | None = None,
    extra_args: Sequence[str] = (),
    log: Callable[[str], None] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Run one LTE case of ``lte.cc`` (compiling it first if needed) and return
    :func:`parse_lte_output`'s dict, plus ``args`` (the command) and
    ``process_wall_s`` (spawn to exit; ``wall_s`` is the program's own
    ``Simulator::Run`` time).

    ``case`` and ``options`` are :func:`lte_args`'s (speed, distance, RLC buffer,
    direction, duration, seed, RLC mode; ``app``, ``cc``, ``core_delay_ms``, ...).
    The UE starts ``distance_m`` from the eNB and, from the flow start on, moves
    radially away at ``speed_mps``.  ``rlc_buffer_bytes`` is the RLC transmit buffer
    at both ends (``LteRlcUm``/``LteRlcAm::MaxTxBufferSize``; ns-3's default is
    10240).  ``app="udp"`` replaces the TCP bulk flow by a saturating UDP flow (the
    TB trace is then the channel's capacity).

    ``tb_ms`` are milliseconds since the flow start (only those with bytes) and
    ``tb_bytes`` the bytes of correctly decoded transport blocks in that ms.
    Raises :class:`vtlab.ns3.program.Ns3Error` when ns-3, g++, the build or the run fails.
    """
    args = lte_args(*case, **options)
    if binary is None:
        binary = ensure_lte_binary(log=log)
    path = binary.path if isinstance(binary, Ns3Binary) else Path(binary)
    cmd = [str(path), *args, *extra_args]
    started = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    except OSError as exc:
        raise Ns3Error(f"cannot run {path}: {exc.strerror or exc}") from None
    wall = time.perf_counter() - started
    if p.returncode != 0:
        tail = " | ".join(p.stderr.strip().splitlines()[-3:])
        raise Ns3Error(f"{shlex.join(cmd)} exited with {p.returncode}: {tail}")
    out = parse_lte_output(p.stdout)
    out["args"] = cmd
    out["process_wall_s"] = wall
    return out


# -- the stored validation matrix ----------------------------------------------------

_2MB = 2 * 1024 * 1024

#: The measured cases of validation/lte/ns3 (downlink, 12 s, seed 1, UE 50 m from the
#: eNB; "moving" drives radially away at 16.7 m/s = 60 km/h, to 250 m).
MATRIX: tuple[dict[str, Any], ...] = (
    {"case": "static_rlc10k", "speed_mps": 0.0, "rlc_buffer_bytes": 10240, "app": "tcp"},
    {"case": "static_rlc2m", "speed_mps": 0.0, "rlc_buffer_bytes": _2MB, "app": "tcp"},
    {"case": "moving_rlc10k", "speed_mps": 16.7, "rlc_buffer_bytes": 10240, "app": "tcp"},
    {"case": "moving_rlc2m", "speed_mps": 16.7, "rlc_buffer_bytes": _2MB, "app": "tcp"},
    {"case": "static_capacity", "speed_mps": 0.0, "rlc_buffer_bytes": _2MB, "app": "udp"},
    {"case": "moving_capacity", "speed_mps": 16.7, "rlc_buffer_bytes": _2MB, "app": "udp"},
)


def summarize_lte(res: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of one :func:`run_lte` result (what README-lte.md's
    table shows)."""
    keys = (
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
    s = {k: res.get(k) for k in keys}
    chan = res.get("chan") or {}
    if chan.get("sinr_db"):
        s["sinr_db_first"] = chan["sinr_db"][0]
        s["sinr_db_last"] = chan["sinr_db"][-1]
        s["dist_m_last"] = chan["dist_m"][-1]
    return s


def run_matrix(
    out: Path,
    *,
    distance_m: float = 50.0,
    duration_s: float = 12.0,
    seed: int = 1,
    log: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Run :data:`MATRIX` one case at a time and write, under ``out``,
    ``<case>.json`` (the full result, per-ms arrays included), ``<case>.mahimahi``
    (:func:`to_mahimahi` of the TB trace, in ms since the flow start; the UDP
    capacity cases are shifted so that their first TB is at ms 0, which drops the
    one-way delay before the first packet reaches the eNB) and ``summary.json``."""
    out.mkdir(parents=True, exist_ok=True)
    binary = ensure_lte_binary(log=log)
    rows = []
    for case in MATRIX:
        res = run_lte(
            case["speed_mps"],
            distance_m,
            case["rlc_buffer_bytes"],
            "dl",
            duration_s,
            seed,
            app=case["app"],
            rtt_series=case["app"] == "tcp",
            binary=binary,
        )
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


def _main(argv: Sequence[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m vtlab.ns3_lte", description="The ns-3 LTE reference program."
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile validation/ns3/lte.cc unless up to date")
    b.add_argument("--rebuild", action="store_true")
    r = sub.add_parser("run", help="run one case, print the result (JSON, no per-ms arrays)")
    r.add_argument("--speed", type=float, default=0.0, help="m/s, radially away (default 0)")
    r.add_argument("--distance", type=float, default=50.0, help="m at the flow start (default 50)")
    r.add_argument("--rlc-buffer", type=int, default=10240, help="bytes (default 10240)")
    r.add_argument("--direction", choices=("dl", "ul"), default="dl")
    r.add_argument("--duration", type=float, default=12.0)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--rlc", choices=("um", "am"), default="um")
    r.add_argument("--app", choices=("tcp", "udp"), default="tcp")
    r.add_argument("--mahimahi", type=Path, help="also write the TB trace as a mahimahi trace")
    m = sub.add_parser("matrix", help="run the stored cases and write them to --out")
    m.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    def log(line: str) -> None:
        print(line, file=sys.stderr)

    try:
        if a.cmd == "build":
            print(ensure_lte_binary(rebuild=a.rebuild, log=log).path)
        elif a.cmd == "run":
            res = run_lte(
                a.speed,
                a.distance,
                a.rlc_buffer,
                a.direction,
                a.duration,
                a.seed,
                a.rlc,
                app=a.app,
                log=log,
            )
            if a.mahimahi is not None:
                write_mahimahi(a.mahimahi, to_mahimahi(res["tb_ms"], res["tb_bytes"]))
            scalars = {k: v for k, v in res.items() if not isinstance(v, (list, dict))}
            print(json.dumps({**scalars, "config": res["config"]}))
        else:
            run_matrix(a.out, log=log)
    except Ns3Error as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
