"""Paired runs: vtlab loses exactly the packets ns-3 lost.

A reference program run with ``--traceLoss`` prints, per direction of the PLC link, the
positions of the packets its error models lost among every packet that reached them
(:func:`vtlab.ns3.process.parse_loss_positions`); vtlab's ``replay`` loss model
(docs/loss-models.md) loses the packets at those positions.  The two runs then differ
only by their TCP and application models.  One mechanism, two uses: the bulk
transfer's paired replay (:mod:`vtlab.validation.replay`, congestion-control
timelines) and the ISO 15118 sessions (:mod:`vtlab.validation.iso15118`, every run of
the grid paired, and :mod:`vtlab.validation.iso15118_replay`, one run exchange by
exchange).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vtlab import api
from vtlab.ns3.process import ProcResult, parse_loss_positions, run_process
from vtlab.ns3.program import Ns3Error

__all__ = [
    "DIRECTIONS",
    "TRACE_LOSS",
    "Drops",
    "PairedRun",
    "paired_run",
    "replay_loss",
    "traced_losses",
]

#: The directions of the PLC link, as ``--traceLoss`` names them.
DIRECTIONS = ("toward_evcc", "toward_secc")
#: The flag that makes a reference program print its lost positions.
TRACE_LOSS = "--traceLoss=true"

#: Lost positions by direction (:data:`DIRECTIONS`).
Drops = Mapping[str, Sequence[int]]


def traced_losses(stderr: str) -> dict[str, list[int]]:
    """The lost positions of a ``--traceLoss`` run's stderr, both directions; raises
    :class:`Ns3Error` when the program printed none."""
    drops = parse_loss_positions(stderr)
    if set(drops) != set(DIRECTIONS):
        raise Ns3Error("the ns-3 program printed no loss positions (--traceLoss)")
    return drops


def replay_loss(positions: Sequence[int]) -> dict[str, Any]:
    """vtlab's loss model that loses the packets at ``positions`` (from 0)."""
    return {"model": "replay", "drops": [int(p) for p in positions]}


@dataclass
class PairedRun:
    """ns-3's run with its losses traced, and vtlab's run that replays them."""

    command: list[str]  #: the ns-3 command line, ``--traceLoss`` included
    ns3: ProcResult
    drops: dict[str, list[int]]
    vtlab: api.Result


def paired_run(
    command: Sequence[str],
    replay_spec: Callable[[Drops], Mapping[str, Any]],
    seed: int,
    *,
    events: bool = False,
) -> PairedRun:
    """Run the reference program ``command`` with ``--traceLoss``, then vtlab on
    ``replay_spec(drops)`` (the scenario with ns-3's lost positions as ``replay``
    models, :func:`replay_loss`) with ``seed``, and typed events if ``events``.
    Raises :class:`Ns3Error` when ns-3 fails."""
    cmd = [*command, TRACE_LOSS]
    proc = run_process(cmd)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise Ns3Error(f"the ns-3 run exited with {proc.returncode}: {tail}")
    drops = traced_losses(proc.stderr)
    result = api.run(replay_spec(drops), seed=seed, events=events)
    return PairedRun(cmd, proc, drops, result)
