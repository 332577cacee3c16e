"""Paired replay of a bulk-transfer cell (vtlab.validate_replay): parsing ns-3's
traces, vtlab's timeline, the alignment and its first divergence.  Divergences are
known by construction: a vtlab run's own events written out as an ns-3 trace agree
with themselves everywhere, and a doctored copy diverges exactly where it was
doctored.  The end-to-end test runs only when the ns3 wheel and g++ are installed."""

from __future__ import annotations

import math
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import vtlab
from conftest import requires_ns3
from vtlab.cli import validate as cli_validate
from vtlab.validation import replay as vr
from vtlab.validation.errors import ValidateError

NS3_TRACE = """\
note: something else on stderr
tcp 0 103694656 cwnd 0 14600
tcp 0 103694656 ssthresh 0 4294967295
tcp 0 108611584 cwnd 14600 16060
tcp 0 136880512 state CA_OPEN CA_DISORDER
tcp 0 139338112 state CA_DISORDER CA_RECOVERY
tcp 0 139338112 ssthresh 4294967295 2920
tcp 0 139338112 cwnd 16060 20440
tcp 0 139338112 retx 26281
tcp 1 139338112 retx 99
tcp 0 1156541312 rto_expiry 2
tcp 0 1156541312 state CA_RECOVERY CA_LOSS
lost toward_evcc 39 40 43
lost toward_secc
"""


def test_parse_cell():
    assert vr.parse_cell("westwood-plus:5%:3") == ("westwood-plus", 0.05, 3)
    assert vr.parse_cell("cubic:0.0025:10") == ("cubic", 0.0025, 10)
    for bad, needle in (
        ("cubic:5%", "ALGORITHM:LOSS:SEED"),
        ("reno:5%:1", "no ns-3 counterpart"),
        ("cubic:abc:1", "--replay"),
        ("cubic:5%:x", "not a number"),
        ("cubic:5%:0", "outside"),
    ):
        with pytest.raises(ValidateError, match=needle):
            vr.parse_cell(bad)


def test_ns3_timeline_from_a_trace():
    events, drops = vr.ns3_timeline(NS3_TRACE)
    assert drops == {"toward_evcc": [39, 40, 43], "toward_secc": []}
    key = vr.key_events(events)
    # the initial 0 -> 2^32 - 1 ssthresh is not a change; times from the flow start
    assert [(e.time_ns, e.kind, e.value) for e in key] == [
        (36880512, "state", "disorder"),
        (39338112, "state", "recovery"),
        (39338112, "ssthresh", "2920"),
        (1056541312, "rto", "2"),
        (1056541312, "state", "loss"),
    ]
    retx = [e for e in events if e.kind == "retx"]
    assert [e.value for e in retx] == ["26280"]  # flow 1 left out; SYN not counted
    assert key[2].cwnd == 16060 and key[1].ssthresh == math.inf


def test_a_state_held_for_no_time_is_not_compared():
    trace = (
        "tcp 0 100000000 state CA_OPEN CA_DISORDER\n"
        "tcp 0 100000000 state CA_DISORDER CA_RECOVERY\n"
        "tcp 0 100000000 ssthresh 4294967295 2920\n"
        "tcp 0 150000000 state CA_RECOVERY CA_OPEN\n"
    )
    events, _ = vr.ns3_timeline(trace)
    assert [(e.kind, e.value) for e in vr.key_events(events)] == [
        ("state", "recovery"),
        ("ssthresh", "2920"),
        ("state", "open"),
    ]


def test_vtlab_positions_skip_the_handshake_ack():
    assert vr.vtlab_positions([0, 1, 2, 39, 40]) == ([0, 1, 38, 39], True)
    assert vr.vtlab_positions([5]) == ([4], False)


def _vtlab_events(nbytes: int = 400_000) -> list[dict[str, Any]]:
    spec = vr.replay_spec(
        "newreno", nbytes, {"toward_evcc": [30, 31, 90, 200, 201, 202, 203]}, "none"
    )
    res = vtlab.run(spec, seed=1, events=True)
    assert res.events is not None
    return res.events.to_dict("records")


NS3_STATE = {v: k for k, v in vr.NS3_STATES.items()}


def _as_ns3_trace(rows: list[dict[str, Any]], *, doctor: dict[int, str] | None = None) -> str:
    """vtlab's events written as v2g.cc --traceTcp lines (flow start 0.1 s); ``doctor``
    replaces the new ssthresh of the k-th ssthresh change."""
    lines, ss, state, n_ss = [], math.inf, "open", 0
    for r in rows:
        t = int(r["time_ns"]) + vr.NS3_START_NS
        if r["event"] == "rto":
            lines.append(f"tcp 0 {t} rto_expiry 2")
        if r["event"] == "state":
            lines.append(f"tcp 0 {t} state {NS3_STATE[state]} {NS3_STATE[r['ca_state']]}")
            state = r["ca_state"]
        if float(r["ssthresh_bytes"]) != ss:
            new = str(int(r["ssthresh_bytes"]))
            if doctor and n_ss in doctor:
                new = doctor[n_ss]
            lines.append(f"tcp 0 {t} ssthresh 0 {new}")
            ss = float(r["ssthresh_bytes"])
            n_ss += 1
        lines.append(f"tcp 0 {t} cwnd 0 {int(r['cwnd_bytes'])}")
    return "\n".join(lines) + "\nlost toward_evcc\nlost toward_secc\n"


def test_a_run_agrees_with_itself_and_a_doctored_trace_diverges_there():
    rows = _vtlab_events()
    vt = vr.vtlab_timeline(rows)
    key = vr.key_events(vt)
    kinds = {e.kind for e in key}
    assert {"state", "ssthresh"} <= kinds and len(key) >= 6
    ns, _ = vr.ns3_timeline(_as_ns3_trace(rows))
    matched, div = vr.first_divergence(ns, vt)
    assert (matched, div) == (len(key), None)

    # the second ssthresh change doctored: the divergence is that event
    ns, _ = vr.ns3_timeline(_as_ns3_trace(rows, doctor={1: "1234"}))
    matched, div = vr.first_divergence(ns, vt)
    second_ss = [i for i, e in enumerate(key) if e.kind == "ssthresh"][1]
    assert div is not None and matched == second_ss == div.index
    assert div.why == f"ssthresh: ns-3 1234, vtlab {key[second_ss].value}"
    assert div.ns3 is not None and div.ns3.ssthresh == 1234
    assert div.vtlab == key[second_ss]
    assert div.ns3_context[-1].time_ns >= div.ns3.time_ns  # context around it

    # every ns-3 event 5 ms later from the k-th key event on (the first at a later
    # instant than its predecessor, k >= 2): a time divergence at k
    k = next(i for i in range(2, len(key)) if key[i].time_ns > key[i - 1].time_ns)
    ns_ok, _ = vr.ns3_timeline(_as_ns3_trace(rows))
    late = [
        vr.Event(e.time_ns + 5_000_000, e.kind, e.value, e.cwnd, e.ssthresh, e.state)
        if e.time_ns >= key[k].time_ns
        else e
        for e in ns_ok
    ]
    matched, div = vr.first_divergence(late, vt)
    assert matched == k and div is not None and div.why.startswith("time:")
    assert vr.first_divergence(late, vt, tolerance_s=0.01)[1] is None
    rep = vr.Replay(
        "newreno",
        0.05,
        1,
        "none",
        1,
        {},
        matched,
        div,
        {},
        {"ns-3": 1, "vtlab": 1},
        [],
        vr.first_divergence(late, vt, math.inf),
    )
    assert f"ignoring times: no divergence, all {len(key)} key events agree" in (
        vr.format_replay(rep)
    )

    # a missing tail: ns-3 stops early
    short = [e for e in ns_ok if e.time_ns < key[-1].time_ns]
    matched, div = vr.first_divergence(short, vt)
    assert div is not None and "vtlab has more key events" in div.why


def test_format_replay_names_the_divergence():
    rows = _vtlab_events()
    vt = vr.vtlab_timeline(rows)
    ns, drops = vr.ns3_timeline(_as_ns3_trace(rows, doctor={0: "999"}))
    matched, div = vr.first_divergence(ns, vt)
    rep = vr.Replay(
        "newreno", 0.05, 1, "none", 400_000, drops, matched, div, {}, {"ns-3": 1, "vtlab": 1}, []
    )
    text = vr.format_replay(rep)
    assert "first divergence at key event" in text and "ssthresh: ns-3 999" in text
    assert "ns-3 key events around it:" in text and "vtlab key events around it:" in text
    ok = vr.Replay("newreno", 0.05, 1, "none", 1, drops, 7, None, {}, {"ns-3": 1, "vtlab": 1}, [])
    assert "no divergence: all 7 key events agree" in vr.format_replay(ok)


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    a = typer.Typer()

    @a.command()
    def noop() -> None:
        pass

    cli_validate.register(a)
    return a


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--replay", "cubic"], "ALGORITHM:LOSS:SEED"),
        (["--replay", "cubic:5%:1", "--topology", "21"], "one vehicle only"),
        (["--replay", "cubic:5%:1", "--replay-tolerance", "-1"], "must not be negative"),
    ],
)
def test_cli_replay_bad_input(app, args, needle):
    res = CliRunner().invoke(app, ["validate", *args])
    assert res.exit_code == 2 and needle in res.output


@requires_ns3
def test_paired_replay_end_to_end():
    # NewReno at 5 %, 1 MB, no queue disc: ns-3's losses replayed in vtlab; the
    # handshake and the first recovery line up (times within 1 ms)
    rep = vr.paired_replay("newreno", 0.05, 2, nbytes=1_000_000, qdisc="none")
    assert rep.drops["toward_evcc"] and rep.drops["toward_secc"] == []
    assert rep.matched >= 3
    assert rep.counts["ns-3"].get("state:recovery", 0) > 0
    assert "paired replay of newreno at 5 % loss, seed 2" in vr.format_replay(rep)
