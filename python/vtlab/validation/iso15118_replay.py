"""Paired replay of one ISO 15118 cell: ``vtlab validate iso15118 --replay LOSS:SEED``.

ns-3 runs the cell (``validation/ns3/iso15118.cc``) with ``--traceLoss``, vtlab runs it
with the positions ns-3 lost as ``replay`` loss models
(:func:`vtlab.validation.paired.paired_run`), and the two timelines are compared
exchange by exchange, counting from the first request: the first exchange whose
request or response time differs by more than :data:`REPLAY_TOLERANCE_S`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtlab import _core
from vtlab.ns3.iso15118 import iso15118_args, parse_iso15118_output
from vtlab.ns3.program import ISO15118_PROGRAM, build_program
from vtlab.validation.errors import ValidateError
from vtlab.validation.iso15118 import cell_name, replay_spec, vtlab_spec
from vtlab.validation.paired import paired_run
from vtlab.validation.units import parse_loss

__all__ = ["REPLAY_TOLERANCE_S", "Replay", "paired_replay", "parse_cell"]

#: Two times agree in a paired replay when they differ by at most this (ns-3 prints
#: nanoseconds; both sides compute the same serialisation and propagation delays).
REPLAY_TOLERANCE_S = 1e-6


@dataclass
class Replay:
    """A paired replay of one cell and seed: ns-3's loss decisions fed to vtlab."""

    loss: float
    seed: int
    #: Positions of the packets ns-3 lost toward the EVCC and toward the SECC.
    drops: dict[str, list[int]]
    #: Exchanges both sides wrote, and how many of them have the same request and
    #: response times (within :data:`REPLAY_TOLERANCE_S`).
    compared: int
    identical: int
    #: The first exchange that differs: its index and both sides' rows; None if none.
    first: dict[str, Any] | None
    #: Exchanges written by each side (they differ when one side's session ends sooner).
    exchanges: dict[str, int]

    def lines(self) -> list[str]:
        out = [
            f"paired replay of {cell_name(self.loss)}, seed {self.seed}: ns-3 lost "
            f"{len(self.drops['toward_evcc'])} packets toward the EVCC and "
            f"{len(self.drops['toward_secc'])} toward the SECC; vtlab loses the same positions",
            f"exchanges: ns-3 {self.exchanges['ns3']}, vtlab {self.exchanges['vtlab']}; "
            f"{self.identical} of the {self.compared} compared identical "
            f"(request and response within {REPLAY_TOLERANCE_S * 1e6:g} µs)",
        ]
        if self.first is None:
            out.append("no divergence")
        else:
            f = self.first
            out.append(f"first divergence: exchange {f['index']}")
            for side in ("ns3", "vtlab"):
                r = f[side]
                out.append(
                    f"  {side:5}: request {r['request_s']:.9f} s, response "
                    + ("none" if r["response_s"] is None else f"{r['response_s']:.9f} s")
                )
        return out


def parse_cell(text: str) -> tuple[float, int]:
    """``--replay LOSS:SEED``: ``0.05:3`` or ``5%:3`` -> (0.05, 3)."""
    parts = str(text).split(":")
    if len(parts) != 2:
        raise ValidateError(
            "--replay", f"{text!r} is not LOSS:SEED (e.g. 0.05:3: mean loss 5 %, RngRun 3)"
        )
    loss = parse_loss(parts[0], "--replay")
    try:
        seed = int(parts[1])
    except ValueError:
        raise ValidateError("--replay", f"seed {parts[1]!r} is not a number") from None
    if not 1 <= seed <= 2**31 - 1:
        raise ValidateError("--replay", f"seed {seed} is outside [1, {2**31 - 1}]")
    return loss, seed


def _from_first_request(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Times counted from the first request: the two clocks start differently (ns-3's
    client connects at 0.1 s) and the handshakes differ by the SYN options (ns-3's
    SYN and SYN-ACK carry window scale and SACK-permitted, 8 B more than vtlab's
    without timestamps: 12.8 µs on the round trip, docs/validation.md)."""
    if not rows:
        return []
    t0 = rows[0]["request_s"]
    return [
        {
            "request_s": r["request_s"] - t0,
            "response_s": None if r["response_s"] is None else r["response_s"] - t0,
        }
        for r in rows
    ]


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= REPLAY_TOLERANCE_S


def _first_divergence(
    ns: Sequence[dict[str, Any]], vt: Sequence[dict[str, Any]]
) -> tuple[int, int, dict[str, Any] | None]:
    """(exchanges compared, identical ones, the first that differs or None); an
    exchange one side wrote and the other did not is a divergence too."""
    compared = min(len(ns), len(vt))
    identical, first = 0, None
    for i in range(compared):
        a, b = ns[i], vt[i]
        if _same(a["request_s"], b["request_s"]) and _same(a["response_s"], b["response_s"]):
            identical += 1
        elif first is None:
            first = {"index": i, "ns3": a, "vtlab": b}
    if first is None and len(ns) != len(vt):
        none = {"request_s": math.nan, "response_s": None}
        i = compared
        first = {
            "index": i,
            "ns3": ns[i] if i < len(ns) else none,
            "vtlab": vt[i] if i < len(vt) else none,
        }
    return compared, identical, first


def paired_replay(
    loss: float,
    seed: int,
    *,
    cache: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> Replay:
    """Run the reference program for ``loss`` and ``seed`` with ``--traceLoss``, run
    vtlab on the same cell with ns-3's lost packet positions as ``replay`` loss models
    and compare the two timelines exchange by exchange, counting from the first
    request (:func:`_from_first_request`)."""
    if not 0.0 <= loss < 1.0:
        raise ValidateError("--replay", f"loss {loss} is outside [0, 1)")
    if not 1 <= seed <= 2**31 - 1:
        raise ValidateError("--replay", f"seed {seed} is outside [1, {2**31 - 1}]")
    expanded = json.loads(_core.expand(json.dumps(vtlab_spec(loss))))
    binary = build_program(ISO15118_PROGRAM, cache=cache, log=log)
    pair = paired_run(
        [str(binary.path), *iso15118_args(expanded, seed)],
        lambda drops: replay_spec(loss, drops),
        seed,
    )
    ns_rows, _summary = parse_iso15118_output(pair.ns3.stdout)
    vt = pair.vtlab.messages
    vt_rows = [
        {"request_s": float(q), "response_s": None if math.isnan(r) else float(r)}
        for q, r in zip(vt["request_s"], vt["response_s"], strict=True)
    ]
    ns_rows = _from_first_request(ns_rows)
    vt_rows = _from_first_request(vt_rows)
    compared, identical, first = _first_divergence(ns_rows, vt_rows)
    exchanges = {"ns3": len(ns_rows), "vtlab": len(vt_rows)}
    return Replay(loss, seed, pair.drops, compared, identical, first, exchanges)
