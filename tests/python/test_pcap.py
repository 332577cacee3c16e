"""Packet captures read by independent tools: tshark (Debian's package, installed
here when missing, so that CI on a fresh machine runs these tests) and dpkt.

Expected values come from the scenario and the wire mapping of docs/captures.md
(node i is 10.0.0.(i+1), both ISNs are 2**32 - 1 so wire sequence numbers are
vtlab's byte offsets), never from the capture writer itself.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import vtlab
from vtlab import _core

SPEC = {"preset": "v2g", "bytes": "2MB", "loss": {"mean_loss": "2%"}}
SEED = 3
TRANSFER = 2_000_000
#: The V2G preset's nodes sa, secc, evcc (flow sa → evcc).
SA, SECC, EVCC = "10.0.0.1", "10.0.0.2", "10.0.0.3"


def _install_tshark() -> str | None:
    """tshark's path, installing Debian's package first when it is missing."""
    found = shutil.which("tshark")
    if found or not shutil.which("apt-get") or os.geteuid() != 0:
        return found
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "tshark"]
    for step in ([install], [["apt-get", "update", "-q"], install]):
        for cmd in step:
            subprocess.run(cmd, env=env, capture_output=True, timeout=1800, check=False)
        found = shutil.which("tshark")
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def tshark() -> str:
    path = _install_tshark()
    if path is None:
        pytest.skip("tshark is missing and Debian's package could not be installed")
    return path


@pytest.fixture(scope="module")
def lossy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, vtlab.Result]:
    """The lossy V2G run, captured at every node and at both ends of the PLC link."""
    d = tmp_path_factory.mktemp("pcap")
    res = vtlab.run(SPEC, seed=SEED, pcap=d, pcap_points=["all", "plc"])
    return d, res


def _fields(tshark: str, path: Path, display_filter: str, *fields: str) -> list[list[str]]:
    cmd = [tshark, "-n", "-r", str(path), "-Y", display_filter, "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=300)
    return [line.split("\t") for line in out.stdout.splitlines()]


def _count(tshark: str, path: Path, display_filter: str) -> int:
    return len(_fields(tshark, path, display_filter, "frame.number"))


def test_tshark_reads_every_frame_and_finds_nothing_malformed(
    tshark: str, lossy: tuple[Path, vtlab.Result]
) -> None:
    d, res = lossy
    files = res.meta["pcap"]
    names = [Path(f["path"]).name for f in files]
    assert names == ["sa.pcap", "secc.pcap", "evcc.pcap", "plc-secc.pcap", "plc-evcc.pcap"]
    for f in files:
        path = Path(f["path"])
        assert path.parent == d
        assert _count(tshark, path, "frame") == f["packets"] > 0
        bad = _fields(tshark, path, "_ws.malformed || _ws.expert.severity >= error", "frame.number")
        assert bad == [], f"{path.name}: malformed or erroneous frames {bad[:5]}"
        # Every frame is Ethernet/IPv4; every unfragmented one TCP (tshark shows a
        # fragmented segment's TCP on the frame that completes its reassembly).
        assert _count(tshark, path, "!(eth && ip)") == 0
        assert _count(tshark, path, "ip.frag_offset == 0 && ip.flags.mf == 0 && !tcp") == 0


def test_retransmissions_on_the_senders_capture_equal_vtlabs_counter(
    tshark: str, lossy: tuple[Path, vtlab.Result]
) -> None:
    d, res = lossy
    flow = res.flows.iloc[0]
    sa = d / "sa.pcap"
    data = f"ip.src == {SA} && tcp.len > 0"
    retransmission = _count(tshark, sa, f"{data} && tcp.analysis.retransmission")
    out_of_order = _count(tshark, sa, f"{data} && tcp.analysis.out_of_order")
    # Wireshark calls a segment below the highest sequence number sent a
    # retransmission (fast and spurious ones included), unless it follows the
    # segment that advanced the highest sequence number by less than the
    # handshake's RTT and does not end there: then it calls it out-of-order.
    # Nothing can reorder packets before the sender's own capture, so at sa every
    # out-of-order segment is a retransmission, and the two together are
    # exactly what vtlab counts.  (SYN retransmissions are excluded by tcp.len > 0;
    # vtlab counts them apart.)
    assert retransmission > 0 and out_of_order > 0
    assert retransmission + out_of_order == flow["retransmissions"] > 0
    assert _count(tshark, sa, f"{data} && tcp.analysis.spurious_retransmission") == 0
    # The same count from the sequence numbers alone: segments starting below the
    # highest byte sent before them.
    highest, resent = 0, 0
    for seq, length in _fields(tshark, sa, data, "tcp.seq_raw", "tcp.len"):
        start, end = int(seq), int(seq) + int(length)
        resent += start < highest
        highest = max(highest, end)
    assert resent == flow["retransmissions"]
    assert highest == TRANSFER


def test_link_losses_are_present_at_the_sending_end_only(
    tshark: str, lossy: tuple[Path, vtlab.Result]
) -> None:
    d, res = lossy
    links = res.links.set_index(["link", "direction"])
    key = ("ip.id", "ip.frag_offset")

    def frames(end: str, src: str) -> list[tuple[str, ...]]:
        return [tuple(r) for r in _fields(tshark, d / f"plc-{end}.pcap", f"ip.src == {src}", *key)]

    sent, received = frames("secc", SA), frames("evcc", SA)
    assert len(set(sent)) == len(sent), "IPv4 identification and offset name one frame"
    assert set(received) <= set(sent)
    lost = set(sent) - set(received)
    toward_evcc = links.loc[("plc", "secc->evcc")]
    assert len(lost) == toward_evcc["drops_link_error"] > 0
    assert len(received) == toward_evcc["packets_carried"]
    # The link is FIFO and the run ends when the last data byte arrives, so the
    # last data frame secc sent was delivered: nothing is missing for being in flight.
    assert sent[-1] == received[-1]
    # Toward the charger nothing is lost; the final ACK is still on the link when
    # the run ends.
    toward_secc = links.loc[("plc", "evcc->secc")]
    acks_sent, acks_received = frames("evcc", EVCC), frames("secc", EVCC)
    assert toward_secc["drops_link_error"] == 0
    assert len(acks_received) == toward_secc["packets_carried"]
    assert acks_sent[:-1] == acks_received


def test_the_highest_ack_is_the_transfer_size(
    tshark: str, lossy: tuple[Path, vtlab.Result]
) -> None:
    d, res = lossy
    assert res.flows.iloc[0]["bytes"] == TRANSFER
    acks = _fields(tshark, d / "evcc.pcap", f"ip.src == {EVCC}", "tcp.ack_raw", "tcp.ack")
    # Wire acknowledgement numbers are byte offsets; Wireshark's relative ones count
    # the SYN too.
    assert max(int(raw) for raw, _ in acks) == TRANSFER
    assert max(int(rel) for _, rel in acks) == TRANSFER + 1


def test_ns3_full_segments_travel_as_two_fragments(
    tshark: str, lossy: tuple[Path, vtlab.Result]
) -> None:
    # ns-3 profile with timestamps: 1460 + 20 + 32 = 1512 B datagrams at MTU 1500,
    # a first fragment of 1480 B of IP payload and a last one at offset 1480 B
    # (tshark's ip.frag_offset is in units of 8 B: 185).
    d, _ = lossy
    sa = d / "sa.pcap"
    full = _count(tshark, sa, f"ip.src == {SA} && tcp.len == 1460")
    assert full > 0
    assert _count(tshark, sa, "ip.flags.mf == 1 && ip.len == 1500 && ip.frag_offset == 0") == full
    assert _count(tshark, sa, "ip.flags.mf == 0 && ip.len == 32 && ip.frag_offset == 185") == full
    # The 2,000,000 − 1369·1460 = 1260 B tail segment fits in one datagram.
    assert _count(tshark, sa, "tcp.len == 1260 && ip.flags.mf == 0 && ip.frag_offset == 0") >= 1


# -- dpkt -------------------------------------------------------------------------------


def _frames(path: Path) -> list[tuple[float, Any]]:
    import dpkt

    with path.open("rb") as f:
        return [(ts, dpkt.ethernet.Ethernet(buf)) for ts, buf in dpkt.pcap.Reader(f)]


def _ip(a: str) -> bytes:
    return bytes(int(x) for x in a.split("."))


def test_dpkt_reads_the_syn_options_and_a_sack_block(tmp_path: Path) -> None:
    import dpkt

    res = vtlab.run(SPEC, seed=SEED, pcap=tmp_path, pcap_points=["evcc"])
    frames = _frames(tmp_path / "evcc.pcap")
    ts, syn_frame = frames[0]
    syn = syn_frame.data.data
    # The SYN leaves sa at t = 0 and reaches evcc after two hops.
    assert ts > 0 and syn_frame.data.src == _ip(SA) and syn_frame.data.dst == _ip(EVCC)
    assert syn.flags & dpkt.tcp.TH_SYN and not syn.flags & dpkt.tcp.TH_ACK
    assert syn.seq == 2**32 - 1 and (syn.sport, syn.dport) == (49152, 57344)
    opts = dpkt.tcp.parse_opts(syn.opts)
    kinds = [k for k, _ in opts]
    assert kinds == [
        dpkt.tcp.TCP_OPT_MSS,
        dpkt.tcp.TCP_OPT_SACKOK,
        dpkt.tcp.TCP_OPT_TIMESTAMP,
        dpkt.tcp.TCP_OPT_NOP,
        dpkt.tcp.TCP_OPT_WSCALE,
    ]
    values = dict(opts)
    assert struct.unpack("!H", values[dpkt.tcp.TCP_OPT_MSS]) == (1460,)  # the study's MSS
    # 128 KiB receive buffer: 131072 >> 1 does not fit 16 bits, >> 2 does.
    assert values[dpkt.tcp.TCP_OPT_WSCALE] == b"\x02"
    assert struct.unpack("!II", values[dpkt.tcp.TCP_OPT_TIMESTAMP]) == (0, 0)  # sent at t = 0

    # The first ACK carrying SACK: the receiver has just got a segment beyond a
    # hole, so (RFC 2018) its first block is exactly that segment, and the ACK
    # names the hole's start.  Data datagrams are tracked by IPv4 identification
    # until their last fragment arrives.
    pending: dict[int, tuple[int, int]] = {}  # id -> (seq, IP payload bytes so far)
    last_complete: tuple[int, int] | None = None
    for _, eth in frames:
        ip = eth.data
        frag_offset, more = ip.offset, bool(ip.mf)
        payload = bytes(ip.data) if not isinstance(ip.data, bytes) else ip.data
        if ip.src == _ip(SA):
            if frag_offset == 0:
                tcp = dpkt.tcp.TCP(payload)
                pending[ip.id] = (tcp.seq, len(payload) - tcp.off * 4)
            elif ip.id in pending:
                seq, length = pending[ip.id]
                pending[ip.id] = (seq, length + len(payload))
            if not more and ip.id in pending:
                seq, length = pending.pop(ip.id)
                last_complete = (seq, seq + length)
            continue
        tcp = dpkt.tcp.TCP(payload)
        sack = dict(dpkt.tcp.parse_opts(tcp.opts)).get(dpkt.tcp.TCP_OPT_SACK)
        if sack is None:
            continue
        blocks = [struct.unpack("!II", sack[i : i + 8]) for i in range(0, len(sack), 8)]
        assert last_complete is not None
        assert blocks == [last_complete]
        left, right = last_complete
        assert tcp.ack < left and (left - tcp.ack) % 1460 == 0 and right - left == 1460
        break
    else:
        pytest.fail("no ACK carried SACK blocks")
    assert res.flows.iloc[0]["retransmissions"] > 0


# -- the command line and the API ----------------------------------------------------------


def test_cli_writes_link_captures_and_checks_before_running(
    cli: Callable[..., Any], tmp_path: Path
) -> None:
    d = tmp_path / "caps"
    args = ["run", "v2g", "--bytes", "1MB", "--loss", "2%", "--pcap", str(d)]
    r = cli(*args, "--pcap-points", "plc")
    assert r.exit_code == 0, r.stderr
    assert sorted(p.name for p in d.iterdir()) == ["plc-evcc.pcap", "plc-secc.pcap"]
    assert "wrote 2 capture files" in r.stderr
    r = cli(*args, "--pcap-points", "plc")
    assert r.exit_code != 0
    assert f"--pcap: '{d / 'plc-secc.pcap'}' already exists; add --force" in r.stderr
    r = cli(*args, "--pcap-points", "plc,wifi")
    assert r.exit_code != 0
    assert (
        "--pcap-points: unknown link or node 'wifi' (links: wan, plc; nodes: sa, secc, evcc)"
        in (r.stderr)
    )
    r = cli("run", "v2g", "--pcap-points", "plc")
    assert r.exit_code != 0 and "--pcap-points: needs --pcap DIR" in r.stderr


def test_api_checks_the_request_and_leaves_results_unchanged(tmp_path: Path) -> None:
    plain = vtlab.run(SPEC, seed=SEED)
    captured = vtlab.run(SPEC, seed=SEED, pcap=tmp_path, pcap_points=["wan"], pcap_payload=False)
    cols = ["retransmissions", "completion_s", "goodput_bps", "drops_link_error"]
    assert plain.flows[cols].equals(captured.flows[cols])
    assert "pcap" not in plain.meta
    assert [Path(f["path"]).name for f in captured.meta["pcap"]] == ["wan-sa.pcap", "wan-secc.pcap"]
    with pytest.raises(vtlab.ScenarioError, match="unknown link or node 'nowhere'"):
        vtlab.run(SPEC, pcap=tmp_path / "x", pcap_points=["nowhere"])
    assert not (tmp_path / "x").exists()
    with pytest.raises(ValueError, match="pcap_points needs a pcap directory"):
        vtlab.run(SPEC, pcap_points=["plc"])
    assert _core.pcap_files('{"preset": "v2g"}') == ["sa.pcap", "secc.pcap", "evcc.pcap"]
