"""Cellular links from Python: the channel model's per-TTI output, and mahimahi
traces (docs/cellular.md).

``channel_series`` asks the compiled core for what a cellular direction's channel
model does in each 1 ms TTI of a run (the same random stream as the simulation's
direction, so the series is what that run sees); ``to_mahimahi`` turns bytes per
millisecond into mahimahi delivery opportunities, ``write_mahimahi`` writes them.
Imports no heavy module until a function needs it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from vtlab.scenario import ScenarioLike

__all__ = [
    "DIRECTIONS",
    "MAHIMAHI_PACKET_BYTES",
    "channel_series",
    "to_mahimahi",
    "write_mahimahi",
]

#: Bytes per mahimahi delivery opportunity (a 1500 B packet + the 4 B TUN header).
MAHIMAHI_PACKET_BYTES = 1504

#: Lines :func:`write_mahimahi` writes at a time.
WRITE_CHUNK = 65_536
#: Shortest and longest channel series (seconds): one 1 ms TTI, one hour.
MIN_SECONDS = 0.001
MAX_SECONDS = 3600.0

#: lte-cabin's cellular directions: name -> (link, node it leaves).
DIRECTIONS: dict[str, tuple[str, str]] = {"down": ("lte", "enb"), "up": ("lte", "hotspot")}


def channel_series(
    scenario: ScenarioLike = "lte-cabin",
    seconds: float = 60.0,
    seed: int = 1,
    direction: str = "down",
    *,
    link: str | None = None,
    from_node: str | None = None,
) -> pd.DataFrame:
    """The channel model's output per TTI: ``time_ms`` (end of the TTI), ``bytes``
    delivered (or lost), ``lost`` (the transport block failed every HARQ attempt),
    ``rsrp_dbm``, ``sinr_db``, ``cqi``, ``itbs``.

    ``direction`` is ``down`` or ``up`` of ``lte-cabin``; for another scenario name
    the ``link`` and the node the direction leaves (``from_node``). From one TTI
    (0.001 s) to one hour. Raises ``ValueError`` naming the argument (``scenario``
    when ``direction`` is used and the scenario lacks lte-cabin's cellular link).
    """
    import numpy as np
    import pandas as pd

    from vtlab import _core
    from vtlab.scenario import Scenario

    by_direction = link is None or from_node is None
    if by_direction:
        if direction not in DIRECTIONS:
            raise ValueError(
                f"direction: expected one of {', '.join(DIRECTIONS)}, got {direction!r}"
            )
        link, from_node = DIRECTIONS[direction]
    if not (MIN_SECONDS <= seconds <= MAX_SECONDS):
        raise ValueError(f"seconds: {seconds:g} is outside [{MIN_SECONDS:g}, {MAX_SECONDS:g}]")
    sc = Scenario.coerce(scenario)
    try:
        cols = _core.channel_series(sc.to_json(), link, from_node, round(seconds * 1000), seed)
    except _core.ScenarioError as exc:
        field, _, problem = str(exc).partition(": ")
        if field not in ("link", "from"):
            raise
        if by_direction:  # the user named no link: the scenario is what lacks it
            raise ValueError(
                f"scenario: {problem} (direction {direction!r} is the {link} link leaving "
                f"{from_node}, as in lte-cabin)"
            ) from None
        raise ValueError(f"{'link' if field == 'link' else 'from_node'}: {problem}") from None
    # One typed array per column, over the core's buffer (8 bytes a value).
    return pd.DataFrame(
        {name: np.frombuffer(data, dtype=dtype) for name, (dtype, data) in cols.items()},
        copy=False,
    )


def to_mahimahi(
    tb_ms: Sequence[int],
    tb_bytes: Sequence[int],
    opportunity_bytes: int = MAHIMAHI_PACKET_BYTES,
) -> list[int]:
    """Per-millisecond delivered bytes -> mahimahi delivery-opportunity timestamps.

    Each returned timestamp is one opportunity to deliver ``opportunity_bytes``
    (mahimahi: one line, one packet of up to 1504 bytes).  The bytes of a
    millisecond are added to the remainder left by earlier milliseconds; every full
    ``opportunity_bytes`` gives one opportunity at that millisecond (so a
    millisecond may repeat), and what is left carries on, so that the trace's
    long-run capacity equals the input's up to less than one opportunity.
    ``tb_ms`` must be strictly increasing (milliseconds without bytes may be
    omitted); the timestamps keep their values.

    >>> to_mahimahi([1, 2, 3, 4], [3008, 0, 1000, 600])
    [1, 1, 4]
    """
    if len(tb_ms) != len(tb_bytes):
        raise ValueError(f"tb_ms has {len(tb_ms)} entries but tb_bytes has {len(tb_bytes)}")
    if opportunity_bytes <= 0:
        raise ValueError(f"opportunity_bytes must be positive, got {opportunity_bytes}")
    out: list[int] = []
    carry = 0
    prev: int | None = None
    for ms, b in zip(tb_ms, tb_bytes, strict=True):
        ms, b = int(ms), int(b)
        if prev is not None and ms <= prev:
            raise ValueError(f"tb_ms must be strictly increasing ({prev} then {ms})")
        if b < 0:
            raise ValueError(f"negative byte count {b} at ms {ms}")
        prev = ms
        carry += b
        n, carry = divmod(carry, opportunity_bytes)
        out.extend([ms] * n)
    return out


def write_mahimahi(path: str | os.PathLike[str], timestamps: Iterable[int]) -> Path:
    """Write a mahimahi trace: one timestamp (ms) per line.  The timestamps must be
    non-decreasing, non-negative, and the trace must not be empty (mahimahi rejects
    an empty trace).  Returns the path.

    The lines are written as they come, :data:`WRITE_CHUNK` at a time, so memory does
    not grow with the trace; an invalid trace raises ``ValueError`` and leaves no
    file behind."""
    p = Path(path)
    prev = -1
    try:
        with p.open("w") as fh:
            chunk: list[str] = []
            for t in timestamps:
                t = int(t)
                if t < 0 or t < prev:
                    raise ValueError(
                        f"mahimahi timestamps must be non-negative and non-decreasing ({prev}, {t})"
                    )
                prev = t
                chunk.append(str(t))
                if len(chunk) == WRITE_CHUNK:
                    fh.write("\n".join(chunk) + "\n")
                    chunk.clear()
            fh.write("".join(f"{line}\n" for line in chunk))
        if prev < 0:
            raise ValueError("a mahimahi trace needs at least one delivery opportunity")
        if prev == 0:
            raise ValueError("a mahimahi trace must last a nonzero time (last timestamp is 0)")
    except ValueError:
        p.unlink(missing_ok=True)
        raise
    return p
