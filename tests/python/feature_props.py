"""Valid scenarios over the features added after the first property suite (queue
discs and byte queue limits, request/response sessions, LTE from traces and from the
channel model, 802.11 chains) and the bounds every run of them must respect.

Each bound is derived by hand from the resolved scenario (``vtlab expand``: base
units, every default filled in), never from the simulator's own output; the
derivations are in the docstrings. Used by test_properties_features.py.
"""

from __future__ import annotations

import json
import math
from collections import deque
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from vtlab import _core

NS = 1_000_000_000
MS = 1_000_000
#: Relative slack for float comparisons of values computed two ways.
EPS = 1e-9
#: Every generated scenario carries this event budget: no drawn run can take long.
MAX_EVENTS = 3_000_000

CCS = sorted(c["name"] for c in _core.congestion_controls())
#: TCP settings some congestion controls fix (e.g. `sack` its recovery, `newreno-nd`
#: delayed ACKs off) and the values drawn for them.
CC_BOUND_SETTINGS = {
    "recovery": ("reno", "newreno", "sack"),
    "delayed_ack": (True, False),
    "timestamps": (True, False),
}


def _open_settings(cc: str) -> set[str]:
    """The settings of CC_BOUND_SETTINGS that `cc` leaves open (takes every value of)."""
    open_ = set()
    for key, values in CC_BOUND_SETTINGS.items():
        try:
            for v in values:
                _core.expand(json.dumps({"preset": "v2g", "tcp": {"cc": cc, key: v}}))
        except _core.ScenarioError:
            continue
        open_.add(key)
    return open_


OPEN_SETTINGS = {cc: _open_settings(cc) for cc in CCS}
#: Why a flow can end incomplete (docs/metrics.md, `abort_reason`).
FLOW_ABORT_REASONS = {
    "syn_retries",
    "data_retries",
    "stop_time",
    "horizon",
    "event_budget",
    "stalled",
}


# ---------------------------------------------------------------------------
# Strategies: valid scenarios only (the hostile ones are hostile_child.py's).
# ---------------------------------------------------------------------------

ms = st.integers(0, 30).map(lambda x: f"{x}ms")
qdisc_names = st.sampled_from(["none", "pfifo_fast", "fq_codel", "codel", "red", "pie"])
qdisc_tables = st.one_of(
    st.fixed_dictionaries(
        {"kind": st.just("codel")},
        optional={"target": st.sampled_from(["1ms", "5ms", "20ms"]), "limit": st.integers(5, 2000)},
    ),
    st.fixed_dictionaries(
        {"kind": st.just("fq_codel")},
        optional={"limit": st.integers(5, 2000), "interval": st.sampled_from(["20ms", "100ms"])},
    ),
    st.fixed_dictionaries(
        {"kind": st.just("red"), "min_th": st.integers(2, 8), "max_th": st.integers(10, 20)},
        optional={"gentle": st.booleans()},
    ),
    st.fixed_dictionaries(
        {"kind": st.just("pie")},
        optional={
            "t_update": st.sampled_from(["5ms", "15ms", "30ms"]),
            "limit": st.integers(5, 200),
        },
    ),
    st.fixed_dictionaries({"kind": st.just("pfifo_fast"), "limit": st.integers(1, 2000)}),
)
losses = st.one_of(
    st.fixed_dictionaries(
        {
            "model": st.sampled_from(["bernoulli", "burst"]),
            "mean_loss": st.sampled_from(["2%", "0%", "0.5%", "5%", "15%"]),
        }
    ),
    st.just({"model": "none"}),
)
#: Transfer sizes: one byte, one segment, a few windows, more than a queue holds.
sizes = st.one_of(st.sampled_from([200_000, 1, 1460, 20_000, 400_000]), st.integers(1, 400_000))


@st.composite
def tcps(draw: Any) -> dict[str, Any]:
    """Any congestion control, profile and segment size, and the settings it leaves
    open (recovery, delayed ACKs, timestamps)."""
    spec: dict[str, Any] = {"cc": draw(st.sampled_from(CCS))}
    if draw(st.booleans()):
        spec["profile"] = draw(st.sampled_from(["ns3", "linux"]))
    if draw(st.integers(0, 3)) == 0:
        spec["mss"] = draw(st.integers(300, 1460))
    for key, values in CC_BOUND_SETTINGS.items():
        if key in OPEN_SETTINGS[spec["cc"]] and draw(st.integers(0, 2)) == 0:
            spec[key] = draw(st.sampled_from(values))
    return spec


@st.composite
def sessions(draw: Any) -> dict[str, Any]:
    """A charging session: one of the standard profiles (short loops) or custom steps."""
    profile = draw(
        st.sampled_from(["custom", "custom", "iso15118-2-dc", "iso15118-2-ac", "din70121-dc"])
    )
    spec: dict[str, Any] = {"profile": profile}
    if profile == "custom":
        step = st.fixed_dictionaries(
            {
                "name": st.just(""),
                "request": st.integers(1, 6000),
                "response": st.integers(1, 6000),
            },
            optional={
                "repeats": st.integers(1, 25),
                "timeout": st.sampled_from(["3ms", "20ms", "300ms", "5s"]),
                "period": st.sampled_from(["0s", "2ms", "30ms"]),
            },
        )
        steps = draw(st.lists(step, min_size=1, max_size=3))
        for i, s in enumerate(steps):
            s["name"] = f"step{i}"  # unique, so each message row names its step
        spec["steps"] = steps
        if draw(st.booleans()):
            spec["tls"] = draw(st.booleans())
    else:
        spec["duration"] = draw(st.sampled_from(["0s", "300ms", "1s"]))
        if profile != "din70121-dc" and draw(st.booleans()):
            spec["payment"] = draw(st.sampled_from(["eim", "pnc"]))
        if profile != "iso15118-2-ac" and draw(st.booleans()):
            spec["cable_check"] = draw(st.sampled_from(["0s", "600ms"]))
    for key, values in (
        ("abort_on_miss", st.booleans()),
        ("processing", st.sampled_from(["0s", "1ms", "40ms"])),
        ("start", st.sampled_from(["0s", "5ms"])),
    ):
        if draw(st.booleans()):
            spec[key] = draw(values)
    return spec


@st.composite
def p2p_scenarios(draw: Any) -> dict[str, Any]:
    """v2g or station with any queue disc, byte queue limits, losses both ways, any
    congestion control, and optionally charging sessions beside or instead of the
    bulk transfers."""
    preset = draw(st.sampled_from(["v2g", "station"]))
    spec: dict[str, Any] = {
        "preset": preset,
        "max_events": MAX_EVENTS,
        "qdisc": draw(st.one_of(qdisc_names, qdisc_tables)),
        "loss": draw(losses),
        "plc_rate": draw(st.sampled_from(["1Mbps", "2Mbps", "10Mbps", "25Mbps"])),
        "plc_delay": draw(st.sampled_from(["0.1ms", "0.9ms", "5ms", "20ms"])),
        "queue_packets": draw(st.sampled_from([5, 2, 20, 100])),
        "tcp": draw(tcps()),
    }
    qdisc = spec["qdisc"] if isinstance(spec["qdisc"], str) else spec["qdisc"]["kind"]
    if qdisc != "none" and draw(st.booleans()):
        spec["bql"] = draw(st.one_of(st.just(True), st.just({"hold_time": "100ms"})))
    if draw(st.booleans()):
        spec["reverse_loss"] = draw(losses)
    if draw(st.integers(0, 3)) == 0:
        spec["framing_bytes"] = draw(st.integers(0, 40))
    if preset == "station":
        spec["vehicles"] = draw(st.integers(1, 6))
        spec["vehicles_per_segment"] = draw(st.integers(1, 3))
        spec["stagger"] = draw(ms)
    with_session = draw(st.integers(0, 2)) == 0
    if with_session:
        spec["session"] = draw(sessions())
    if not with_session or draw(st.booleans()):
        spec["bytes"] = draw(sizes)
    if draw(st.booleans()):
        spec["stop"] = draw(st.sampled_from(["300ms", "1s", "4s"]))
    return spec


@st.composite
def traces(draw: Any) -> list[int]:
    """Mahimahi delivery-opportunity times (ms): non-decreasing, last one positive."""
    times = draw(st.lists(st.integers(0, 40), min_size=1, max_size=60))
    return sorted(times) + [max(times) + draw(st.integers(1, 5))]


@st.composite
def lte_scenarios(draw: Any) -> dict[str, Any]:
    """lte-cabin with the channel model or a trace per direction (or a custom
    topology with a trace-driven cellular link and a byte-limited buffer)."""
    if draw(st.integers(0, 3)) == 0:
        return draw(custom_cellular())
    speed = draw(st.sampled_from([0, 30, 60, 120]))
    spec: dict[str, Any] = {
        "preset": "lte-cabin",
        "max_events": MAX_EVENTS,
        "direction": draw(st.sampled_from(["downlink", "uplink", "both"])),
        "speed_kmh": speed,
        # A static car needs a channel that delivers (docs/cellular.md).
        "rsrp_dbm": draw(st.sampled_from([-75, -85, -95] + ([-105, -115] if speed else []))),
        "buffer": draw(st.sampled_from(["20kB", "200kB", "2MB"])),
        "bytes": draw(st.integers(10_000, 3_000_000)),
        "stop": draw(st.sampled_from(["500ms", "1s", "2500ms"])),
    }
    if draw(st.booleans()):
        spec["adaptive"] = True
    else:
        spec["tcp"] = draw(tcps())
    for side in ("capacity_down", "capacity_up"):
        if draw(st.integers(0, 2)) == 0:
            spec[side] = {"trace_ms": draw(traces())}
    if draw(st.booleans()):
        spec["channel"] = draw(
            st.fixed_dictionaries(
                {
                    "bler": st.sampled_from([0.3, 0.0, 0.1]),
                    "harq_max_tx": st.sampled_from([1, 2, 4]),
                },
                optional={
                    "share": st.sampled_from([0.2, 0.7, 1.0]),
                    "bandwidth_rb": st.sampled_from([25, 50, 100]),
                },
            )
        )
    return spec


@st.composite
def custom_cellular(draw: Any) -> dict[str, Any]:
    delay = draw(st.sampled_from(["1ms", "10ms", "30ms"]))
    flows = [{"name": "down", "src": "server", "dst": "phone"}]
    if draw(st.booleans()):
        flows.append({"name": "up", "src": "phone", "dst": "server", "start": draw(ms)})
    return {
        "preset": "custom",
        "max_events": MAX_EVENTS,
        "nodes": ["server", "bs", "phone"],
        "bytes": draw(st.integers(5_000, 1_000_000)),
        "stop": draw(st.sampled_from(["400ms", "1500ms"])),
        "tcp": draw(tcps()),
        "links": [
            {"name": "wired", "a": "server", "b": "bs", "rate": "50Mbps", "delay": delay},
            {
                "name": "radio",
                "a": "bs",
                "b": "phone",
                "rate": draw(st.sampled_from(["2Mbps", "20Mbps"])),
                "delay": "4ms",
                "capacity_ab": {"trace_ms": draw(traces())},
                "queue_bytes": draw(st.sampled_from(["30kB", "1MB"])),
            },
        ],
        "flows": flows,
    }


WIFI_RATES = {"b": ["1Mbps", "2Mbps", "5.5Mbps", "11Mbps"], "a": ["6Mbps", "24Mbps", "54Mbps"]}
WIFI_RATES["g"] = WIFI_RATES["a"]


@st.composite
def chain_scenarios(draw: Any) -> dict[str, Any]:
    """vanet-chain: 1-4 hops within radio range, any 802.11 standard and rate."""
    standard = draw(st.sampled_from(["b", "b", "a", "g"]))
    wifi: dict[str, Any] = {
        "standard": standard,
        "rate": draw(st.sampled_from(WIFI_RATES[standard])),
    }
    if standard == "b" and draw(st.booleans()):
        wifi["short_preamble"] = True
    spec: dict[str, Any] = {
        "preset": "vanet-chain",
        "max_events": MAX_EVENTS,
        "hops": draw(st.integers(1, 4)),
        # Two-ray ground with the default powers reaches 250 m (docs/wifi.md).
        "spacing_m": draw(st.sampled_from([30, 120, 200, 240])),
        "speed_kmh": draw(st.sampled_from([0, 20, 100])),
        "ifq": draw(st.integers(2, 50)),
        "rts": draw(st.booleans()),
        "delack": draw(st.integers(1, 2)),
        "segment": draw(st.sampled_from([256, 512, 1000, 1460])),
        "bytes": draw(st.integers(1_000, 60_000)),
        "stop": draw(st.sampled_from(["2s", "4s"])),
        "wifi": wifi,
    }
    if draw(st.booleans()):
        spec["error_rate"] = draw(st.sampled_from(["0%", "2%", "10%"]))
    if draw(st.booleans()):
        spec["tcp"] = {"cc": draw(st.sampled_from(["tahoe", "reno", "newreno", "vegas", "sack"]))}
    return spec


# ---------------------------------------------------------------------------
# The resolved topology: routes and what each link direction can carry.
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Dir:
    """One direction a → b of a point-to-point or cellular link."""

    link: dict[str, Any]
    a: str
    b: str

    @property
    def name(self) -> str:
        return self.link["name"]

    @property
    def delay_ns(self) -> int:
        return self.link["delay_ns"]

    @property
    def capacity(self) -> dict[str, Any] | None:
        """The capacity schedule of a cellular direction, None for a constant rate."""
        side = "capacity_ab" if self.a == self.link["a"] else "capacity_ba"
        return self.link.get(side)


class Net:
    """The resolved scenario: its links, routes and cellular capacity series."""

    def __init__(self, spec: dict[str, Any], seed: int, end_ns: int) -> None:
        self.spec = spec
        self.x = expand(spec)
        self.seed = seed
        self.end_ns = end_ns
        self._series: dict[tuple[str, str], list[tuple[int, int]]] = {}

    def path(self, src: str, dst: str) -> list[Dir]:
        """Shortest path in hops, ties to the earlier link (docs/scenarios.md, custom)."""
        prev: dict[str, Dir | None] = {src: None}
        todo = deque([src])
        while todo:
            node = todo.popleft()
            for link in self.x["links"]:
                for a, b in ((link["a"], link["b"]), (link["b"], link["a"])):
                    if a == node and b not in prev:
                        prev[b] = Dir(link, a, b)
                        todo.append(b)
        hops: list[Dir] = []
        node = dst
        while (d := prev[node]) is not None:
            hops.append(d)
            node = d.a
        return hops[::-1]

    def opportunities(self, d: Dir) -> list[tuple[int, int]]:
        """(time ns, bytes) of every delivery opportunity of a cellular direction up to
        the end of the run. A trace repeats with its last timestamp as the period
        (docs/cellular.md); the channel model's opportunities are the series
        ``vtlab.cellular.channel_series`` gives for the same scenario and seed (a
        transport block at the end of each TTI; a lost one still used the capacity)."""
        key = (d.name, d.a)
        if key in self._series:
            return self._series[key]
        cap = d.capacity
        assert cap is not None
        ops: list[tuple[int, int]] = []
        if cap["kind"] == "trace":
            times, period = cap["times_ms"], cap["times_ms"][-1] * MS
            rep = 0
            while rep * period <= self.end_ns:
                ops += [(rep * period + t * MS, cap["opportunity_bytes"]) for t in times]
                rep += 1
        else:
            from vtlab.cellular import channel_series

            seconds = math.ceil(self.end_ns / MS + 2) / 1000
            s = channel_series(self.spec, seconds, self.seed, link=d.name, from_node=d.a)
            ops = [(int(t) * MS, int(b)) for t, b in zip(s["time_ms"], s["bytes"], strict=True)]
        ops = sorted(o for o in ops if o[0] <= self.end_ns)
        self._series[key] = ops
        return ops


def overhead_bytes(tcp: dict[str, Any], framing: int) -> int:
    """Bytes every data segment adds to its payload at least: the TCP/IP header, the
    12 B timestamp option when on (docs/tcp-model.md) and the link's framing.
    Fragments (a segment over the MTU) only add more."""
    return tcp["header_bytes"] + (12 if tcp["timestamps"] else 0) + framing


def segments(payload: int, mss: int) -> int:
    """The fewest segments that carry ``payload`` bytes."""
    return max(1, -(-payload // mss))


def expand(spec: dict[str, Any]) -> dict[str, Any]:
    return json.loads(_core.expand(json.dumps(spec)))


def nan_equal(a: Any, b: Any) -> bool:
    """Equality of nested rows where NaN equals NaN (the rows' missing values)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(nan_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(nan_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
