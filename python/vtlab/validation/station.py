"""The charging station in the bulk-transfer grid (``vtlab validate station``, the
legacy ``vtlab validate --topology N``): N vehicles, 3 per PLC segment.

A topology is a number of vehicles: ``1`` is the single-vehicle V2G cable (preset
``v2g``), ``N`` ≥ 2 the charging station (preset ``station``).  For a station, a run's
goodput is the mean over its vehicles (and the counters are means per vehicle); the
aggregate goodput and Jain's fairness index are reported next to it
(:func:`vtlab.ns3.v2g.vehicle_summary`).  The grid itself is
:mod:`vtlab.validation.v2g`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from vtlab.ns3.v2g import vehicle_summary
from vtlab.validation.errors import ValidateError
from vtlab.validation.report import f, mci, pct

__all__ = [
    "DEFAULT_VEHICLES",
    "MAX_VEHICLES",
    "PER_SEGMENT",
    "parse_topology",
    "station_row",
    "station_section",
    "station_spec",
    "topology_lines",
]

#: Largest ``--topology`` (vehicles at the charging station), as in vtlab's preset.
MAX_VEHICLES = 1000
#: Vehicles sharing one PLC segment at the charging station (the preset's default).
PER_SEGMENT = 3
#: ``vtlab validate station``'s number of vehicles unless ``--vehicles`` says otherwise.
DEFAULT_VEHICLES = 21


def parse_topology(text: str | int, option: str = "--topology") -> str:
    """A number of vehicles, 1 (the V2G cable) or 2..1000 (the charging station), as a
    canonical string (``"021"`` -> ``"21"``).  Raises :class:`ValidateError`."""
    try:
        n = int(str(text).strip())
    except ValueError:
        raise ValidateError(
            option,
            f"'{text}' is not a number of vehicles (1 = the V2G cable, "
            f"2..{MAX_VEHICLES} = the charging station, e.g. 21)",
        ) from None
    if not 1 <= n <= MAX_VEHICLES:
        raise ValidateError(option, f"{n} vehicles is outside [1, {MAX_VEHICLES}]")
    return str(n)


def station_spec(spec: Mapping[str, Any], topology: str) -> dict[str, Any]:
    """The single-vehicle cell ``spec`` (preset ``v2g``) moved to the charging station
    with ``topology`` vehicles (the preset's defaults otherwise: 3 per segment, WAN
    10 ms, flows 2 ms apart)."""
    return {
        "preset": "station",
        "vehicles": int(topology),
        "vehicles_per_segment": PER_SEGMENT,
        **{k: v for k, v in spec.items() if k != "preset"},
    }


def station_row(
    flows: Sequence[Mapping[str, Any]],
    topology: str,
    side: str,
    done_key: str,
    counters: Sequence[tuple[str, str]],
) -> dict[str, Any]:
    """The record fields of one station run from its flow rows: per-vehicle means,
    the aggregate, fairness and every vehicle's goodput; ``counters`` are (record key,
    this side's flow column)."""
    if len(flows) != int(topology):
        raise RuntimeError(f"the {side} run printed {len(flows)} flow rows, expected {topology}")
    summary = vehicle_summary(flows)
    row: dict[str, Any] = {
        "completed": all(bool(fl[done_key]) for fl in flows),
        **summary,
        "completion_s": max(float(fl["completion_s"]) for fl in flows),
        "vehicle_goodputs_bps": [fl["goodput_bps"] for fl in flows],
    }
    for key, column in counters:
        nums = [float(v) for v in (fl.get(column) for fl in flows) if v is not None]
        row[key] = sum(nums) / len(nums) if nums else None
    return row


def topology_lines(topologies: Sequence[str]) -> list[str]:
    """The report's description of each topology of the grid."""
    lines = []
    if "1" in topologies:
        lines.append(
            "* 1 vehicle: SA —(WAN 500 Mbit/s, 0.9 ms)— SECC —(PLC 10 Mbit/s, 0.9 ms)— "
            "EVCC, one bulk transfer SA → EVCC, loss on the PLC data direction."
        )
    for t in (t for t in topologies if t != "1"):
        segments = math.ceil(int(t) / PER_SEGMENT)
        lines.append(
            f"* {t} vehicles (charging station, {PER_SEGMENT} per PLC segment, {segments} "
            "segments): SA —(WAN 500 Mbit/s, 10 ms)— switch —(PLC segment j: 10 Mbit/s, "
            "0.9 ms)— seg j —(access 10 Gbit/s, 0 ms)— ev i; one bulk transfer SA → ev i "
            "each, flow i starting at i × 2 ms; each vehicle's own loss stream on its "
            "access hop toward it. Goodput, RTO and FR are **per vehicle** (a run's mean "
            "over its vehicles); the aggregate (all bytes / (last byte − first start)) is "
            "in its own table below."
        )
    return lines


def station_section(table: Sequence[Mapping[str, Any]]) -> list[str]:
    """The charging station's aggregate goodput (empty without station cells)."""
    rows = [r for r in table if str(r.get("topology", "1")) != "1"]
    if not rows:
        return []
    lines = [
        "",
        "## Charging station: aggregate goodput",
        "",
        "All bytes received × 8 / (last byte at any vehicle − start of the first flow), "
        "mean ± 95 % CI over seeds; Jain's fairness index of the per-vehicle goodputs, "
        "mean over seeds.",
        "",
        "| algorithm | loss | vehicles | vtlab aggregate | ns-3 aggregate | ratio "
        "| Jain vtlab | Jain ns-3 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['cc']} | {pct(r['loss'])} | {r['topology']} "
            f"| {mci(r['vtlab_aggregate_mbps'], r['vtlab_aggregate_ci95_mbps'])} "
            f"| {mci(r['ns3_aggregate_mbps'], r['ns3_aggregate_ci95_mbps'])} "
            f"| {f(r['aggregate_ratio'])} | {f(r['vtlab_jain'])} | {f(r['ns3_jain'])} |"
        )
    return lines
