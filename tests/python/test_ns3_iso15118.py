"""The ns-3 request/response session reference (validation/ns3/iso15118.cc, run by
vtlab.ns3.run_iso15118_reference): the argument translation and output parsing, and,
with the ns3 wheel and g++, loss-free times derived by hand, the period rule, total
loss with and without abort on miss, and the JSON lines.

Hand derivation of the loss-free times (10 Mbit/s, 0.9 ms, PPP framing 2 B, so a
packet of n IP bytes takes (n + 2) * 0.8 us on the wire; ns-3.44 source references in
validation/ns3/README-iso15118.md):

* TCP header with the timestamp option: 20 + 10 (TS) + 2 (padding) = 32 B, so a
  segment with p payload bytes is p + 20 (IP) + 32 = p + 52 B, p + 54 B on the wire.
* SYN and SYN-ACK carry TS (10), window scale (3) and SACK-permitted (2) = 15 -> 16 B
  of options (ns-3 sends no MSS option): 56 B, 58 B on the wire = 46.4 us. The
  client is connected at 0.1 + 2 * (46.4 + 900) us = 0.1018928 s; it writes the
  first request then (t_req).
* A pure ACK is 52 B, 54 B on the wire = 43.2 us; 100 B of data: 154 B = 123.2 us.
* First request: the client's handshake ACK (sent in ProcessSynSent just before
  ConnectionSucceeded) is on the wire first: 43.2 + 123.2 us, + 900 us. The server
  ACKs the first data segment after the handshake at once (ProcessSynRcvd sets the
  delayed-ACK counter to its maximum), so its pure ACK goes out before the response:
  43.2 + 123.2 us, + 900 us. Response time 2 * (43.2 + 123.2 + 900) us = 2132.8 us.
* Later requests (period 0): no pure ACK in front on either side (the data segments
  carry the ACKs and cancel the delayed ACK), so 2 * (123.2 + 900) us = 2046.4 us,
  the plain "payload + 52 + 2 B each way plus 0.9 ms each way" figure.
* A request written from a timer (period > response time) is sent one nanosecond
  later (TcpSocketBase::Send schedules SendPendingData after TimeStep(1)); one
  written in the receive callback goes out at once (ReceivedAck calls
  SendPendingData after ReceivedData). Hence 2046.401 us with a period.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from typing import Any

import pytest

from conftest import requires_ns3
from vtlab import _core
from vtlab._core import ScenarioError
from vtlab.ns3 import program as ns3mod
from vtlab.ns3.iso15118 import (
    iso15118_args,
    iso15118_schedule,
    parse_iso15118_output,
    run_iso15118_reference,
)
from vtlab.ns3.program import ISO15118_PROGRAM, Ns3Error
from vtlab.validation.iso15118_replay import paired_replay

US = 1e-6
WIRE_US_PER_BYTE = 0.8  # 10 Mbit/s
PROP_US = 900.0
T0 = 0.1


def wire_us(ip_bytes: int) -> float:
    """Serialization time of an IP packet of ``ip_bytes`` with 2 B PPP framing."""
    return (ip_bytes + 2) * WIRE_US_PER_BYTE


SYN_US = wire_us(20 + 20 + 16)  # 46.4
ACK_US = wire_us(20 + 32)  # 43.2
CONNECTED_S = T0 + 2 * (SYN_US + PROP_US) * US  # 0.1018928


def data_us(payload: int) -> float:
    return wire_us(payload + 52)


def _loss(mean: float) -> dict[str, Any]:
    """A burst loss model of this mean (1.0: every packet, burst-start probability 1)."""
    if mean == 0:
        return {"model": "none"}
    if mean == 1:
        return {"model": "burst", "burst_start": 1.0}
    return {"model": "burst", "mean_loss": mean}


def resolved(
    schedule: Sequence[tuple[str, int, int, float, int, float]],
    *,
    loss: float = 0.0,
    reverse_loss: float = 0.0,
    cc: str = "newreno",
    timestamps: bool = True,
    abort_on_miss: bool = False,
) -> dict[str, Any]:
    """The resolved v2g scenario with one session of ``schedule`` (name, request B,
    response B, timeout s, repeats, period s) and burst loss of these means toward the
    EVCC (``loss``) and toward the SECC (``reverse_loss``), no queue disc."""
    steps = [
        {"name": n, "request": q, "response": r, "timeout": t, "repeats": k, "period": p}
        for n, q, r, t, k, p in schedule
    ]
    spec = {
        "preset": "v2g",
        "qdisc": "none",
        "loss": _loss(loss),
        "reverse_loss": _loss(reverse_loss),
        "tcp": {"cc": cc, "timestamps": timestamps},
        "session": {"profile": "custom", "abort_on_miss": abort_on_miss, "steps": steps},
    }
    return json.loads(_core.expand(json.dumps(spec)))


# -- without ns-3 ------------------------------------------------------------------------


def test_schedule_argument():
    s = resolved([("SessionSetup", 40, 60, 2, 1, 0), ("CurrentDemand", 60, 70, 0.25, 2400, 0.25)])
    assert (
        iso15118_schedule(s["sessions"][0]["steps"])
        == "SessionSetup:40:60:2:1:0;CurrentDemand:60:70:0.25:2400:0.25"
    )


@pytest.mark.parametrize("name", ["a:b", "a;b"])
def test_schedule_argument_refuses_names_the_program_cannot_parse(name):
    with pytest.raises(ValueError, match="name"):
        iso15118_args(resolved([(name, 1, 1, 1.0, 1, 0.0)]), 1)


@pytest.mark.parametrize(
    ("step", "match"),
    [
        (("", 1, 1, 1.0, 1, 0.0), "name"),
        (("a", 0, 1, 1.0, 1, 0.0), "request"),
        (("a", 1, 1, 1.0, 0, 0.0), "repeats"),
        (("a", 1, 1, 0.0, 1, 0.0), "timeout"),
        (("a", 1, 1, 1.0, 1, -1.0), "period"),
    ],
)
def test_steps_the_program_would_refuse_do_not_resolve(step, match):
    # the resolver refuses them before the program could (empty names, sizes and
    # repeats below 1, a timeout of 0, a negative period)
    with pytest.raises(ScenarioError, match=match):
        resolved([step])


def test_args():
    s = resolved(
        [("A", 100, 100, 1, 2, 0.5)],
        loss=0.05,
        reverse_loss=0.01,
        cc="cubic",
        timestamps=False,
        abort_on_miss=True,
    )
    plc = s["links"][1]
    args = iso15118_args(s, 3, stop_s=60)
    # the resolved burst-start probabilities themselves, at full precision
    toward_evcc, toward_secc = plc["loss_ab"]["burst_start"], plc["loss_ba"]["burst_start"]
    assert toward_evcc == _core.burst_start_for_mean_loss(0.05)
    assert args == [
        "--schedule=A:100:100:1:2:0.5",
        "--run=3",
        f"--burstRate={toward_evcc!r}",
        f"--reverseBurstRate={toward_secc!r}",
        "--cc=TcpCubic",
        "--sack=true",
        "--timestamps=false",
        "--delAckCount=2",
        "--segmentSize=1460",
        "--initialCwnd=10",
        "--minRto=1",
        "--sndBuf=131072",
        "--rcvBuf=131072",
        "--rate=10000000bps",
        "--delay=900000ns",
        "--mtu=1500",
        "--queuePackets=100",
        "--abortOnMiss=true",
        "--stop=60",
    ]
    one = [("A", 1, 1, 1, 1, 0)]
    assert "--cc=TcpNewReno" in iso15118_args(resolved(one), 1)
    assert "--burstRate=0" in iso15118_args(resolved(one), 1)
    assert "--reverseBurstRate=1.0" in iso15118_args(resolved(one, reverse_loss=1.0), 1)
    with pytest.raises(ValueError, match="no ns-3 counterpart"):
        iso15118_args(resolved(one, cc="reno"), 1)
    with pytest.raises(ValueError, match="no flows"):
        iso15118_args(json.loads(_core.expand(json.dumps({"preset": "v2g", "bytes": "1MB"}))), 1)
    queued = resolved(one)
    queued["links"][1]["qdisc"] = {"kind": "fq_codel"}
    with pytest.raises(ValueError, match="qdisc"):
        iso15118_args(queued, 1)
    fixed = resolved(one)
    fixed["sessions"][0]["tcp"]["rto_max_ns"] = 120_000_000_000
    with pytest.raises(ValueError, match="rto_max_ns"):
        iso15118_args(fixed, 1)
    with pytest.raises(ValueError, match="stop_s"):
        iso15118_args(resolved(one), 1, stop_s=0)


def test_parse_output():
    out = (
        '{"index": 0, "name": "A", "request_s": 0.101892800, "response_s": null, '
        '"response_time_s": null, "missed": true}\n'
        '{"summary": true, "completed": false, "messages": 1, "misses": 1, "wall_s": 0.01}\n'
    )
    messages, summary = parse_iso15118_output(out)
    assert messages == [
        {
            "index": 0,
            "name": "A",
            "request_s": 0.1018928,
            "response_s": None,
            "response_time_s": None,
            "missed": True,
        }
    ]
    assert summary["misses"] == 1 and summary["completed"] is False
    with pytest.raises(Ns3Error, match="summary"):
        parse_iso15118_output(out.splitlines()[0])


# -- with ns-3 ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def iso_cache(tmp_path_factory):
    """One compile of iso15118.cc for the module."""
    cache = tmp_path_factory.mktemp("ns3-iso-cache")
    ns3mod.build_program(ISO15118_PROGRAM, cache=cache)
    return cache


def run(iso_cache, schedule, *, stop_s=None, loss_start_s=0.0, **kw):
    return run_iso15118_reference(
        resolved(schedule, **kw), 1, stop_s=stop_s, loss_start_s=loss_start_s, cache=iso_cache
    )


@requires_ns3
def test_loss_free_response_time_by_hand(iso_cache):
    messages, summary = run(iso_cache, [("Req", 100, 100, 1.0, 1, 0.0)])
    assert len(messages) == 1
    m = messages[0]
    # connected at 0.1 + 2 x (SYN 46.4 us + 0.9 ms) = 0.1018928 s; first request then
    assert m["request_s"] == pytest.approx(CONNECTED_S, abs=1e-9)
    # pure ACK + request, 0.9 ms, pure ACK + response, 0.9 ms = 2132.8 us
    expected_us = 2 * (ACK_US + data_us(100) + PROP_US)
    assert expected_us == pytest.approx(2132.8)
    assert m["response_time_s"] == pytest.approx(expected_us * US, abs=1 * US)
    assert m["response_s"] == pytest.approx(m["request_s"] + m["response_time_s"], abs=1e-9)
    assert m["missed"] is False
    assert summary["completed"] is True
    assert summary["messages"] == 1 and summary["misses"] == 0
    assert summary["end"] == "completed"


@requires_ns3
def test_loss_free_back_to_back_requests_by_hand(iso_cache):
    messages, summary = run(iso_cache, [("Req", 100, 100, 1.0, 4, 0.0)])
    times = [m["response_time_s"] for m in messages]
    # first: two pure ACKs in front (2132.8 us); then data segments carry the ACKs:
    # 2 x ((100 + 20 + 20 + 12 + 2) B x 0.8 us/B + 900 us) = 2046.4 us
    plain_us = 2 * (data_us(100) + PROP_US)
    assert plain_us == pytest.approx(2046.4)
    assert times[0] == pytest.approx(2132.8 * US, abs=1 * US)
    for t in times[1:]:
        assert t == pytest.approx(plain_us * US, abs=1 * US)
    # period 0: each request is written when the previous response is whole
    for prev, cur in zip(messages, messages[1:], strict=False):
        assert cur["request_s"] == prev["response_s"]
    assert summary["completed"] is True


@requires_ns3
def test_period_is_kept_when_the_response_is_faster(iso_cache):
    messages, summary = run(iso_cache, [("Req", 100, 100, 1.0, 3, 0.5)])
    assert [m["request_s"] for m in messages] == pytest.approx(
        [CONNECTED_S + 0.5 * k for k in range(3)], abs=1e-9
    )
    # from a timer the request leaves 1 ns after the write (TimeStep(1) in Send)
    assert messages[1]["response_time_s"] == pytest.approx(2046.4 * US, abs=1 * US)
    # the session ends with the last response, not a period later
    assert summary["end_s"] == pytest.approx(messages[-1]["response_s"], abs=1e-9)
    # a period shorter than the response time: the next request waits for the response
    messages, _ = run(iso_cache, [("Req", 100, 100, 1.0, 3, 0.001)])
    for prev, cur in zip(messages, messages[1:], strict=False):
        assert cur["request_s"] == prev["response_s"]


@requires_ns3
def test_steps_follow_the_period_of_the_request_just_answered(iso_cache):
    messages, _ = run(iso_cache, [("A", 40, 60, 2.0, 1, 0.3), ("B", 60, 70, 0.25, 2, 0.0)])
    assert [m["name"] for m in messages] == ["A", "B", "B"]
    assert messages[1]["request_s"] == pytest.approx(CONNECTED_S + 0.3, abs=1e-9)
    assert messages[2]["request_s"] == messages[1]["response_s"]


@requires_ns3
def test_total_reverse_loss_nothing_gets_through(iso_cache):
    # every SYN is lost: no request is ever written; ns-3 gives up after ConnCount 6
    # retries of the SYN, ConnTimeout 3 s doubling: 0.1 + 3 + 6 + 12 + 24 + 48 + 96 s
    for abort in (False, True):
        messages, summary = run(
            iso_cache, [("Req", 100, 100, 1.0, 2, 0.0)], reverse_loss=1.0, abort_on_miss=abort
        )
        assert messages == []
        assert summary["completed"] is False and summary["messages"] == 0
        assert summary["connected_s"] is None
        assert summary["end"] == "connection_failed"
        assert summary["end_s"] == pytest.approx(189.1, abs=1e-9)
    _, summary = run(iso_cache, [("Req", 100, 100, 1.0, 2, 0.0)], reverse_loss=1.0, stop_s=10)
    assert summary["end"] == "stop" and summary["end_s"] == pytest.approx(10.0)


@requires_ns3
def test_abort_on_miss_ends_the_session(iso_cache):
    # two requests get through; from 0.9 s on everything toward the SECC is lost, so
    # the third request (at 0.1018928 + 1.0 s) never gets a response
    sched = [("Req", 100, 100, 0.3, 4, 0.5)]
    messages, summary = run(
        iso_cache, sched, reverse_loss=1.0, loss_start_s=0.9, abort_on_miss=True
    )
    assert len(messages) == 3
    assert [m["missed"] for m in messages] == [False, False, True]
    last = messages[-1]
    assert last["response_s"] is None and last["response_time_s"] is None
    assert summary["completed"] is False and summary["aborted"] is True
    assert summary["end"] == "aborted"
    assert summary["misses"] == 1 and summary["messages"] == 3
    # the client gives up at t_req + timeout
    assert summary["end_s"] == pytest.approx(last["request_s"] + 0.3, abs=1e-9)
    # without abort on miss the session waits (here: until the stop time)
    messages, summary = run(iso_cache, sched, reverse_loss=1.0, loss_start_s=0.9, stop_s=5)
    assert len(messages) == 3 and messages[-1]["missed"] is True
    assert summary["aborted"] is False and summary["end"] == "stop"


@requires_ns3
@pytest.mark.parametrize("loss", [0.0, 0.05])
def test_json_lines_and_message_count(iso_cache, loss):
    sched = [("SessionSetup", 40, 60, 2.0, 1, 0.0), ("CurrentDemand", 60, 70, 0.25, 40, 0.25)]
    binary = ns3mod.build_program(ISO15118_PROGRAM, cache=iso_cache)
    args = iso15118_args(resolved(sched, loss=loss, reverse_loss=loss), 2)
    out = subprocess.run(
        [str(binary.path), *args], capture_output=True, text=True, check=True
    ).stdout
    lines = [json.loads(line) for line in out.splitlines()]
    *rows, summary = lines
    assert summary["summary"] is True
    assert set(summary) >= {"summary", "completed", "messages", "misses", "wall_s"}
    assert len(rows) == sum(step[4] for step in sched) == summary["messages"]
    for i, r in enumerate(rows):
        assert set(r) == {"index", "name", "request_s", "response_s", "response_time_s", "missed"}
        assert r["index"] == i
        assert r["response_time_s"] == pytest.approx(r["response_s"] - r["request_s"], abs=1e-9)
        step = sched[0] if i == 0 else sched[1]
        assert r["name"] == step[0]
        assert r["missed"] == (r["response_time_s"] > step[3])
    assert summary["misses"] == sum(r["missed"] for r in rows)
    assert summary["completed"] is True
    # same seed, same output (wall time aside)
    again = subprocess.run(
        [str(binary.path), *args], capture_output=True, text=True, check=True
    ).stdout
    assert again.splitlines()[:-1] == out.splitlines()[:-1]


@requires_ns3
@pytest.mark.parametrize(("loss", "seed"), [(0.01, 1), (0.05, 3)])
def test_paired_replay_reproduces_ns3_exchange_by_exchange(iso_cache, loss, seed):
    """ns-3 is the independent reference: with ns-3's own loss decisions (its burst
    model's lost packet positions, --traceLoss) fed to vtlab's `replay` model, every
    one of the 2400 exchanges has the same request and response times within 1 us.
    RngRun 3 at 5 % holds a 183 s stall (eight timeouts in a row of one request)
    and the charger's backoff reset by its pure ACKs (ns-3 SendEmptyPacket)."""
    r = paired_replay(loss, seed, cache=iso_cache)
    assert len(r.drops["toward_evcc"]) > 0 and len(r.drops["toward_secc"]) > 0
    assert r.exchanges == {"ns3": 2400, "vtlab": 2400}
    assert (r.identical, r.compared, r.first) == (2400, 2400, None)
    assert r.lines()[-1] == "no divergence"
