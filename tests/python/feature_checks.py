"""The sanity rules of a run, checked against bounds derived by hand from the resolved
scenario (feature_props.py builds the scenarios and the topology).

Rules (each function's docstring derives its bound):
* goodput ≤ what the path can carry (link rate × payload/frame share, the trace's or
  the channel's delivery opportunities, the 802.11 PHY's airtime per frame);
* a completed transfer took at least its loss-free lower bound;
* every incomplete bulk flow says why (`abort_reason`);
* bytes: a completed flow delivered exactly its bytes; a router forwards no more
  packets or bytes than reached it; every packet a link direction put on the wire
  went through its queue disc;
* packets are conserved per link: every drop is counted once, by cause, in the flow
  rows and in the link rows alike.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any

from feature_props import EPS, FLOW_ABORT_REASONS, NS, Dir, Net, overhead_bytes, segments


def rows(table: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Column lists (as the core returns them) → one dict per row."""
    names = list(table)
    n = len(table[names[0]]) if names else 0
    return [{k: table[k][i] for k in names} for i in range(n)]


@dataclass(frozen=True)
class Transfer:
    """What a flow row must account for: its ends, start, bytes and TCP settings;
    ``messages`` is the request (or response) size of every exchange of a session."""

    name: str
    src: str
    dst: str
    start_ns: int
    payload: int
    tcp: dict[str, Any]
    messages: tuple[int, ...] = ()

    def min_segments(self) -> int:
        """Each message of a session is written alone (the next request waits for the
        response), so it needs its own segments."""
        mss = self.tcp["mss"]
        if self.messages:
            return sum(segments(m, mss) for m in self.messages)
        return segments(self.payload, mss)


def transfers(x: dict[str, Any]) -> dict[str, Transfer]:
    """Every flow row the resolved scenario ``x`` gives: its bulk flows, and two per
    session (``<session>/requests`` client → server, ``<session>/responses`` back)."""
    out = {
        f["name"]: Transfer(f["name"], f["src"], f["dst"], f["start_ns"], f["bytes"], f["tcp"])
        for f in x["flows"]
    }
    for s in x.get("sessions", []):
        req = tuple(st["request_bytes"] for st in s["steps"] for _ in range(st["repeats"]))
        resp = tuple(st["response_bytes"] for st in s["steps"] for _ in range(st["repeats"]))
        for what, src, dst, sizes in (
            ("requests", s["client"], s["server"], req),
            ("responses", s["server"], s["client"], resp),
        ):
            name = f"{s['name']}/{what}"
            out[name] = Transfer(name, src, dst, s["start_ns"], sum(sizes), s["tcp"], sizes)
    return out


def check_flow_rows(x: dict[str, Any], flows: list[dict[str, Any]], *, sessions_too: bool) -> None:
    """Every row is a flow of the scenario with its bytes; a completed flow delivered
    all of them (goodput · completion = bytes · 8, both by definition, docs/metrics.md)
    and has no abort reason; an incomplete one has none of its completion time and,
    for bulk flows (and session flows when ``sessions_too``), a documented reason."""
    plan = transfers(x)
    assert sorted(f["flow"] for f in flows) == sorted(plan)
    for f in flows:
        t = plan[f["flow"]]
        assert f["bytes"] == t.payload, (f["flow"], f["bytes"], t.payload)
        assert f["retransmissions"] <= f["segments_sent"]
        assert f["goodput_bps"] >= 0
        if f["completed"]:
            assert f["abort_reason"] == ""
            assert math.isclose(f["goodput_bps"] * f["completion_s"], 8 * t.payload, rel_tol=EPS)
            continue
        assert math.isnan(f["completion_s"])
        if "/" not in f["flow"] or sessions_too:
            assert f["abort_reason"] in FLOW_ABORT_REASONS | {"deadline"}, f


class Schedule:
    """A cellular direction's delivery opportunities, with their running byte total."""

    def __init__(self, ops: list[tuple[int, int]]) -> None:
        self.times = [t for t, _ in ops]
        self.prefix = [0]
        for _, b in ops:
            self.prefix.append(self.prefix[-1] + b)

    def bytes_between(self, t0: int, t1: int) -> int:
        """Bytes of the opportunities at times in [t0, t1]."""
        return self.prefix[bisect_right(self.times, t1)] - self.prefix[bisect_left(self.times, t0)]

    def reached(self, t0: int, need: int) -> float:
        """The first opportunity time at which those from t0 on have offered `need`
        bytes (infinity if they never do within the run)."""
        i = bisect_left(self.times, t0)
        j = bisect_left(self.prefix, self.prefix[i] + need)
        return self.times[j - 1] if j <= len(self.times) else math.inf


def path_delay(path: list[Dir]) -> int:
    return sum(d.delay_ns for d in path)


def goodput_bound(net: Net, t: Transfer, path: list[Dir], window_ns: int | None) -> float:
    """The most bit/s of payload the path can deliver to a flow.

    A constant-rate direction of rate R whose segments carry at most `mss` payload
    bytes behind at least h = overhead_bytes bytes carries at most R·mss/(mss + h) of
    payload. A cellular direction carries at most the bytes of its delivery
    opportunities: over the flow's window [start, start + w] at most cap(w)·mss/(mss+h)
    payload bytes. Goodput is the payload received × 8 / w with w the time from the
    flow's start to its last byte: for a completed flow its completion time
    (``window_ns``); otherwise unknown but at least the handshake and one crossing,
    3 × the path's one-way delay, so the bound is the largest cap(w)/w over those w
    (cap/w falls between opportunities, so the opportunity times are the candidates).
    """
    mss = t.tcp["mss"]
    bound = math.inf
    for d in path:
        h = overhead_bytes(t.tcp, d.link["framing_bytes"])
        share = mss / (mss + h)
        if d.capacity is None:
            bound = min(bound, d.link["rate_bps"] * share)
            continue
        sched = Schedule(net.opportunities(d))
        if window_ns is not None:
            cands = [window_ns]
        else:
            w_min = 3 * path_delay(path)
            cands = [w_min] + [o - t.start_ns for o in sched.times if o - t.start_ns > w_min]
        best = max(sched.bytes_between(t.start_ns, t.start_ns + w) / w for w in cands)
        bound = min(bound, best * 8 * NS * share)
    return bound


def completion_lower_bound(net: Net, t: Transfer, path: list[Dir]) -> float:
    """The loss-free lower bound of a bulk transfer's completion time, in seconds.

    With D the one-way delay of the path: the SYN takes D to reach the receiver and
    the SYN-ACK D to come back, so the first data byte leaves at start + 2D at the
    earliest, and the last byte arrives no sooner than every data packet has crossed
    each direction of the path, plus D of propagation. The n ≥ ⌈bytes/mss⌉ data
    packets carry bytes + n·h bytes in all (h = overhead_bytes), so

    * a constant-rate direction of rate R needs (bytes + n·h)·8/R: completion ≥ 3D +
      (bytes + n·h)·8/R;
    * a cellular direction serves them from its opportunities, which data can use only
      once it has arrived, at t0 = start + 2D + the delays before that direction: it has
      served them at the earliest at the opportunity T where the bytes of the
      opportunities from t0 on first reach bytes + n·h (unused bytes are lost); the last
      byte then still has the remaining delays to go.
    """
    n = t.min_segments()
    d_all = path_delay(path)
    lower = 0.0
    before = 0
    for d in path:
        h = overhead_bytes(t.tcp, d.link["framing_bytes"])
        need = t.payload + n * h
        if d.capacity is None:
            lower = max(lower, (3 * d_all + need * 8 * NS / d.link["rate_bps"]) / NS)
        else:
            t0 = t.start_ns + 2 * d_all + before
            when = Schedule(net.opportunities(d)).reached(t0, need)
            lower = max(lower, (when + d_all - before - t.start_ns) / NS)
        before += d.delay_ns
    return lower


def check_transfer_bounds(net: Net, flows: list[dict[str, Any]]) -> None:
    """goodput ≤ capacity for every flow; completion ≥ the loss-free bound for every
    completed bulk flow; and on every constant-rate direction, the completed flows
    that cross it together carried no more than its rate over their common span."""
    plan = transfers(net.x)
    shared: dict[tuple[str, str], tuple[Dir, list[tuple[Transfer, float]]]] = {}
    for f in flows:
        t = plan[f["flow"]]
        path = net.path(t.src, t.dst)
        done = f["completed"]
        window = round(f["completion_s"] * NS) if done else None
        bound = goodput_bound(net, t, path, window)
        assert f["goodput_bps"] <= bound * (1 + 1e-6), (f["flow"], f["goodput_bps"], bound)
        if done and not t.messages:
            lower = completion_lower_bound(net, t, path)
            assert f["completion_s"] >= lower * (1 - 1e-9), (f["flow"], f["completion_s"], lower)
        for d in path if done else ():
            if d.capacity is None:
                shared.setdefault((d.name, d.a), (d, []))[1].append((t, f["completion_s"]))
    for d, done in shared.values():
        h = d.link["framing_bytes"]
        bits = sum(8 * (t.payload + t.min_segments() * overhead_bytes(t.tcp, h)) for t, _ in done)
        first = min(t.start_ns for t, _ in done)
        last = max(t.start_ns + c * NS for t, c in done)
        assert bits <= d.link["rate_bps"] * (last - first) / NS * (1 + 1e-6), (d.name, d.a)


def check_links(
    x: dict[str, Any], links: list[dict[str, Any]], flows: list[dict[str, Any]]
) -> None:
    """Packets are conserved per link direction and per router.

    * Every drop is counted once, by cause: the flow rows (each packet belongs to one
      flow) and the link rows give the same totals of link-error, queue and AQM drops.
    * A queue disc sees every packet of its direction (docs/metrics.md), so the packets
      that went on the wire — delivered or lost to a link error — are at most those it
      accepted; its limit drops are the direction's queue drops, the device queue behind
      it never overflowing (docs/queue-discs.md). Without one its counters stay 0.
    * A router (no flow or session ends there) creates no packets: what it puts on its
      links (delivered, lost on the link, dropped by its queues) is at most what its
      links delivered to it, the difference being what is still queued or on the wire
      when the run ends; the same for IP bytes carried.
    * An IPv4 packet has 20 to `mtu` bytes, and `bytes_carried` counts IP bytes
      (without the link's framing: test_bytes_carried_counts_ip_bytes).
    """
    for cause_flow, cause_link in (
        ("drops_link_error", "drops_link_error"),
        ("drops_queue", "drops_queue"),
        ("drops_aqm", "qdisc_drops_aqm"),
    ):
        assert sum(f[cause_flow] for f in flows) == sum(r[cause_link] for r in links), cause_flow
    mtu = {ln["name"]: ln["mtu_bytes"] for ln in x["links"]}
    mtu.update({m["name"]: m["wifi"]["mtu_bytes"] for m in x.get("media", [])})
    for r in links:
        assert (
            20 * r["packets_carried"] <= r["bytes_carried"] <= mtu[r["link"]] * r["packets_carried"]
        )
        assert (
            r["drops_harq"] <= r["drops_link_error"]
            and r["mac_retry_drops"] <= r["drops_link_error"]
        )
        if r["qdisc"] == "none":
            assert r["qdisc_enqueued"] == r["qdisc_drops_limit"] == r["qdisc_drops_aqm"] == 0, r
        else:
            assert r["drops_queue"] == r["qdisc_drops_limit"], r
            assert r["packets_carried"] + r["drops_link_error"] <= r["qdisc_enqueued"], r
    _check_routers(x, links)


def _check_routers(x: dict[str, Any], links: list[dict[str, Any]]) -> None:
    if x.get("media"):
        return
    ends = {n for t in transfers(x).values() for n in (t.src, t.dst)}
    by_dir = {(r["link"], r["direction"]): r for r in links}
    for node in x["nodes"]:
        if node in ends:
            continue
        into: list[dict[str, Any]] = []
        out: list[dict[str, Any]] = []
        for ln in x["links"]:
            for a, b in ((ln["a"], ln["b"]), (ln["b"], ln["a"])):
                r = by_dir[(ln["name"], f"{a}->{b}")]
                if b == node:
                    into.append(r)
                if a == node:
                    out.append(r)
        sent = sum(
            r["packets_carried"] + r["drops_link_error"] + r["drops_queue"] + r["qdisc_drops_aqm"]
            for r in out
        )
        assert sent <= sum(r["packets_carried"] for r in into), node
        assert sum(r["bytes_carried"] for r in out) <= sum(r["bytes_carried"] for r in into), node


def check_sessions(net: Net, out: dict[str, Any], flows: list[dict[str, Any]]) -> None:
    """Session and message rows against the scenario's steps.

    An exchange's response time is at least the request's and the response's loss-free
    crossings plus the charger's processing: a message of n bytes in k ≥ ⌈n/mss⌉
    segments crosses the path in Σ delays + (n + k·h)·8/R on its slowest rate R at
    least (it is written whole and every byte of it must cross). The first request is
    written once the connection is up (a SYN and a SYN-ACK: two one-way delays), the
    next one not before the previous response is in nor, within a step, before the
    step's period. ``missed`` means later than the deadline or never; the session row
    counts its message rows and misses, and a completed session answered every
    exchange and completed both its flows.
    """
    x = net.x
    by_flow = {f["flow"]: f for f in flows}
    msgs = rows(out["messages"])
    srows = {s["session"]: s for s in rows(out["sessions"])}
    assert sorted(srows) == sorted(s["name"] for s in x.get("sessions", []))
    for s in x.get("sessions", []):
        row = srows[s["name"]]
        mine = sorted((m for m in msgs if m["session"] == s["name"]), key=lambda m: m["index"])
        steps = [st for st in s["steps"] for _ in range(st["repeats"])]
        assert [m["index"] for m in mine] == list(range(len(mine))) and len(mine) <= len(steps)
        there, back = net.path(s["client"], s["server"]), net.path(s["server"], s["client"])
        for m, step in zip(mine, steps, strict=False):
            assert m["message"] == step["name"]
            if not math.isnan(m["response_time_s"]):
                least = _crossing(s["tcp"], there, step["request_bytes"])
                least += s["processing_ns"] / NS + _crossing(s["tcp"], back, step["response_bytes"])
                assert m["response_time_s"] >= least * (1 - 1e-9), (m, least)
                assert math.isclose(
                    m["response_s"] - m["request_s"], m["response_time_s"], abs_tol=1e-9
                )
            late = math.isnan(m["response_time_s"]) or m["response_time_s"] > m["deadline_s"]
            assert m["missed"] == late, m
        if mine:
            assert mine[0]["request_s"] >= 2 * path_delay(there) / NS * (1 - 1e-9)
        for m, nxt, step in zip(mine, mine[1:], steps[1:], strict=False):
            assert nxt["request_s"] >= m["response_s"] - 1e-9
            if nxt["message"] == m["message"]:
                assert nxt["request_s"] - m["request_s"] >= step["period_ns"] / NS - 1e-9
        assert row["messages"] == len(mine)
        assert row["deadline_misses"] == sum(m["missed"] for m in mine)
        if row["completed"]:
            assert row["abort_reason"] == "" and len(mine) == len(steps)
            assert by_flow[f"{s['name']}/requests"]["completed"]
            assert by_flow[f"{s['name']}/responses"]["completed"]
        else:
            assert row["abort_reason"], row


def _crossing(tcp: dict[str, Any], path: list[Dir], n: int) -> float:
    k = segments(n, tcp["mss"])
    worst = max(
        (n + k * overhead_bytes(tcp, d.link["framing_bytes"])) * 8 / d.link["rate_bps"]
        for d in path
    )
    return path_delay(path) / NS + worst


def chain_bounds(x: dict[str, Any], t: Transfer) -> tuple[float, float]:
    """(goodput bound in bit/s, completion lower bound in s) of the 802.11 chain's flow.

    A data frame of p payload bytes is an IP packet of p + h bytes (h: the TCP/IP header
    and options) plus the MAC's 36 B, sent at the data rate R after the PHY preamble and
    header: 192 µs (DSSS long), 96 µs (short), 20 µs for OFDM (802.11-2016 §17.3.2.4:
    16 µs preamble + 4 µs SIGNAL): airtime a(p) = pre + (p + h + 36)·8/R. The sender
    keeps one frame in service until its ACK (or the ACK timeout, SIFS + slot +
    preamble later, docs/wifi.md), so each frame of the first vehicle is followed by at
    least SIFS before its next one. Before any data, the SYN crosses all H hops and the
    SYN-ACK comes back: 2H frames of at least a(0).

    Completion: ⌈bytes/mss⌉ frames on the first hop, SIFS apart, after the handshake,
    and the last one relayed over the H − 1 other hops (H: the route's hops,
    route_hops).

    Goodput: P payload bytes in n ≥ P/mss segments delivered by time w after the start
    need w ≥ 2H·a(0) + Σ (a(p_k) + SIFS) − SIFS ≥ P·8/R + n·X with X = pre + (h + 36)·8/R
    + SIFS (2H·a(0) ≥ SIFS), so w ≥ P·(8/R + X/mss) and goodput = 8P/w ≤ mss·8/(a(mss) +
    SIFS), whether or not the flow completed.
    """
    medium = x["media"][0]
    wifi = medium["wifi"]
    hops = route_hops(medium)
    rate = wifi["data_rate_kbps"] * 1000
    # PHY preamble and header: DSSS short or long, OFDM.
    dsss = 96e-6 if wifi["short_preamble"] else 192e-6
    pre = dsss if wifi["standard"] == "b" else 20e-6
    mac, sifs, mss = wifi["mac_overhead_bytes"], wifi["sifs_ns"] / NS, t.tcp["mss"]
    h = overhead_bytes(t.tcp, 0)

    def airtime(payload: int) -> float:
        return pre + (payload + h + mac) * 8 / rate

    n = segments(t.payload, mss)
    last = t.payload - (n - 1) * mss
    lower = 2 * hops * airtime(0) + (n - 1) * (airtime(mss) + sifs) + hops * airtime(last)
    return mss * 8 / (airtime(mss) + sifs), lower


def route_hops(medium: dict[str, Any]) -> int:
    """Hops of the chain's route: the fewest, over pairs that receive each other at
    or above the sensitivity (docs/wifi.md). Beyond the crossover distance two-ray
    ground gives Pr = Pt·h⁴/(d⁴·L), so the range is (Pt·h⁴/(L·S))^(1/4) with S the
    sensitivity in W (250 m with the defaults, ns-2's RXThresh_); nearer stations
    receive more. With the vehicles `spacing` apart on a line a hop spans at most
    k = ⌊range/spacing⌋ of them, so the route has ⌈H/k⌉ hops."""
    wifi, pos = medium["wifi"], medium["mobility"]
    prop = wifi["propagation"]
    assert prop["model"] == "two-ray-ground" and len(pos) >= 2
    watts = 10 ** ((wifi["tx_power_dbm"] - 30) / 10)
    sens = 10 ** ((wifi["rx_sensitivity_dbm"] - 30) / 10)
    reach = (watts * prop["height_m"] ** 4 / (prop["system_loss"] * sens)) ** 0.25
    spacing = pos[1]["x_m"] - pos[0]["x_m"]
    per_hop = math.floor(reach / spacing)
    assert per_hop >= 1 and not math.isclose(reach / spacing, round(reach / spacing), rel_tol=1e-3)
    return -(-(len(pos) - 1) // per_hop)


def check_chain(
    x: dict[str, Any], flows: list[dict[str, Any]], links: list[dict[str, Any]]
) -> None:
    """The 802.11 chain's flow within its PHY bounds (chain_bounds); per station, every
    delivered data frame and every failed attempt was a frame sent (one frame can be
    both: delivered, its ACK lost), and a frame dropped at the retry limit failed at
    least min(short, long retry limit) attempts."""
    (t,) = transfers(x).values()
    (f,) = flows
    goodput, lower = chain_bounds(x, t)
    assert f["goodput_bps"] <= goodput * (1 + 1e-9), (f["goodput_bps"], goodput)
    if f["completed"]:
        assert f["completion_s"] >= lower * (1 - 1e-9), (f["completion_s"], lower)
    wifi = x["media"][0]["wifi"]
    limit = min(wifi["short_retry_limit"], wifi["long_retry_limit"])
    for r in links:
        assert r["mac_frames_sent"] >= max(r["packets_carried"], r["mac_retries"]), r
        assert r["mac_retries"] >= r["mac_retry_drops"] * limit, r
