"""The request/response (ISO 15118-style) session program ``validation/ns3/iso15118.cc``:
its command line, running it and parsing its output (see
validation/ns3/README-iso15118.md)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from vtlab.ns3.cc import ns3_ccs, ns3_type_id
from vtlab.ns3.process import num, run_process
from vtlab.ns3.program import ISO15118_PROGRAM, Ns3Error, build_program

__all__ = [
    "SessionStep",
    "burst_starts",
    "iso15118_args",
    "iso15118_schedule",
    "parse_iso15118_output",
    "run_iso15118_reference",
]


#: One step of a session schedule: (name, request bytes, response bytes, timeout in s,
#: repeats, period in s), as validation/ns3/README-iso15118.md describes.
SessionStep = tuple[str, int, int, float, int, float]


def iso15118_schedule(schedule: Sequence[SessionStep]) -> str:
    """The ``--schedule`` argument: ``name:req:resp:timeout:repeats:period;...``.
    Raises :class:`ValueError` for a step the program would refuse."""
    if not schedule:
        raise ValueError("schedule: at least one step")
    items = []
    for step in schedule:
        if len(step) != 6:
            raise ValueError(
                f"schedule step {step!r}: want (name, req, resp, timeout, repeats, period)"
            )
        name, req, resp, timeout, repeats, period = step
        if not name or any(c in name for c in ":;"):
            raise ValueError(
                f"schedule step {step!r}: the name must be non-empty without ':' or ';'"
            )
        if int(req) < 1 or int(resp) < 1 or int(repeats) < 1:
            raise ValueError(f"schedule step {step!r}: sizes and repeats must be 1 or more")
        if not float(timeout) > 0 or not float(period) >= 0:
            raise ValueError(f"schedule step {step!r}: timeout must be > 0 and period >= 0")
        items.append(f"{name}:{int(req)}:{int(resp)}:{num(timeout)}:{int(repeats)}:{num(period)}")
    return ";".join(items)


def burst_starts(expanded: Mapping[str, Any]) -> tuple[float, float]:
    """The burst-start probabilities toward the EVCC and toward the SECC of a resolved
    single-vehicle scenario (preset ``v2g``: its ``plc`` link's ``loss_ab`` and
    ``loss_ba``), as :func:`iso15118_args` takes them.  Raises :class:`ValueError`
    for a loss model the program does not have (burst, sizes 1..4, or none)."""
    links = {link["name"]: link for link in expanded.get("links", [])}
    if "plc" not in links:
        raise ValueError("links: the ISO 15118 program models the v2g preset's plc link")
    starts = []
    for side in ("loss_ab", "loss_ba"):
        model = links["plc"][side]
        if model.get("model") == "none":
            starts.append(0.0)
        elif model.get("model") == "burst" and (model["burst_min"], model["burst_max"]) == (1, 4):
            starts.append(float(model["burst_start"]))
        else:
            raise ValueError(f"links.plc.{side}: the program has the burst model (1..4) only")
    return starts[0], starts[1]


def iso15118_args(
    *,
    schedule: Sequence[SessionStep],
    seed: int,
    burst_start: float = 0.0,
    reverse_burst_start: float = 0.0,
    cc: str = "newreno",
    timestamps: bool = True,
    abort_on_miss: bool = False,
    stop_s: float | None = None,
    loss_start_s: float = 0.0,
) -> list[str]:
    """The command line of the ISO 15118 session program (without the binary):
    ``seed`` is ns-3's RngRun (RngSeed stays 1, as for v2g.cc), ``burst_start`` the
    burst model's start probability toward the EVCC, ``reverse_burst_start`` toward
    the SECC (the resolved scenario's, :func:`burst_starts`), ``cc`` a vtlab name
    (:func:`~vtlab.ns3.cc.ns3_type_id`) or an ns-3 TypeId suffix; ``loss_start_s`` > 0 keeps both
    error models off until that simulated time (``--lossStart``, for tests that
    need the handshake through)."""
    ns3_cc = ns3_type_id(cc) or cc
    if ns3_cc not in {ns3_type_id(c) for c in ns3_ccs()}:
        raise ValueError(f"cc: '{cc}' has no ns-3 counterpart (ns-3 has: {', '.join(ns3_ccs())})")
    for label, value in (
        ("burst_start", burst_start),
        ("reverse_burst_start", reverse_burst_start),
    ):
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"{label}: {value!r} is not in [0, 1]")
    args = [
        f"--schedule={iso15118_schedule(schedule)}",
        f"--run={int(seed)}",
        # full precision (repr round-trips a double): both simulators draw against
        # the same p
        f"--burstRate={float(burst_start)!r}",
        f"--reverseBurstRate={float(reverse_burst_start)!r}",
        f"--cc={ns3_cc}",
        f"--timestamps={'true' if timestamps else 'false'}",
        f"--abortOnMiss={'true' if abort_on_miss else 'false'}",
    ]
    if stop_s is not None:
        if not float(stop_s) > 0:
            raise ValueError(f"stop_s: {stop_s!r} must be positive")
        args.append(f"--stop={num(stop_s)}")
    if loss_start_s:
        if not float(loss_start_s) > 0:
            raise ValueError(f"loss_start_s: {loss_start_s!r} must not be negative")
        args.append(f"--lossStart={num(loss_start_s)}")
    return args


def parse_iso15118_output(stdout: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Split the program's JSON lines into the per-request rows (in order) and the
    summary line.  Raises :class:`Ns3Error` if the summary is missing."""
    messages: list[dict[str, Any]] = []
    summary: dict[str, Any] | None = None
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        if d.get("summary") is True:
            summary = d
        else:
            messages.append(d)
    if summary is None:
        raise Ns3Error("the ISO 15118 session program printed no summary line")
    return messages, summary


def run_iso15118_reference(
    *,
    schedule: Sequence[SessionStep],
    seed: int,
    burst_start: float = 0.0,
    reverse_burst_start: float = 0.0,
    cc: str = "newreno",
    timestamps: bool = True,
    abort_on_miss: bool = False,
    stop_s: float | None = None,
    loss_start_s: float = 0.0,
    cache: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run the ns-3 request/response session (validation/ns3/iso15118.cc, compiled on
    demand by :func:`build_program` into ``<cache>/ns3-iso15118/<hash>/iso15118``).

    Returns ``(messages, summary)``: ``messages`` has one dict per request written,
    in order, with the keys ``index`` (from 0), ``name``, ``request_s`` and
    ``response_s`` (simulator clock, i.e. including the 0.1 s start; ``response_s``
    None if no response came), ``response_time_s`` (None likewise) and ``missed``;
    ``summary`` is the program's summary line (``completed``, ``messages``,
    ``misses``, ``wall_s`` of the contract, and ``aborted``, ``end`` (why the
    session ended: completed, aborted, stop, connection_failed, ...), ``end_s``,
    ``connected_s``, ``scheduled``) plus the process's ``process_wall_s`` and
    ``max_rss_mib`` (:func:`run_process`).  Raises :class:`ValueError` for bad
    arguments, :class:`Ns3Error` (or :class:`Ns3NotInstalled`) when ns-3 fails.
    """
    args = iso15118_args(
        schedule=schedule,
        seed=seed,
        burst_start=burst_start,
        reverse_burst_start=reverse_burst_start,
        cc=cc,
        timestamps=timestamps,
        abort_on_miss=abort_on_miss,
        stop_s=stop_s,
        loss_start_s=loss_start_s,
    )
    binary = build_program(ISO15118_PROGRAM, cache=cache, log=log)
    cmd = [str(binary.path), *args]
    proc = run_process(cmd)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise Ns3Error(f"{shlex.join(cmd)} exited with {proc.returncode}: {tail}")
    messages, summary = parse_iso15118_output(proc.stdout)
    summary = {**summary, "process_wall_s": proc.wall_s, "max_rss_mib": proc.max_rss_mib}
    return messages, summary
