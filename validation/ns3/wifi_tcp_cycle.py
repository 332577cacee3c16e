"""ns-3's SACK-less recovery cycle in the 802.11 chain (docs/validation.md, "802.11",
"Open, with its cause").

Builds a copy of wifi.cc whose TCP sender prints one line per congestion-state change
and per retransmission (with cwnd and ssthresh), runs one cell of the grid, and
prints how often ns-3 enters recovery, how many of those recoveries start with
ssthresh at its 2-segment floor, and how many segments it retransmits while in Open;
then the same counts for vtlab's side of the cell (its typed events). Needs the ns3
wheel and g++; about a minute.

    PYTHONPATH=python python validation/ns3/wifi_tcp_cycle.py [CELL [RUN]]

CELL defaults to h1-rts1-tcpnewreno-d1-w128k, RUN to 1; a SACK cell
(h1-rts1-tcpsack-d1-w128k) shows no cycle.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from vtlab import _core
from vtlab.ns3 import program as ns3
from vtlab.ns3.process import run_process
from vtlab.ns3.wifi import wifi_args
from vtlab.validation import wifi

#: (anchor in wifi.cc, text inserted after it)
PATCHES = (
    (
        "TcpCounters g_tcp;\n",
        """uint32_t g_cwnd = 0, g_ssth = 0;
void
TraceLine(const std::string& ev, const std::string& extra)
{
    std::cout << "{\\"kind\\":\\"tcp\\",\\"t\\":" << Num(Simulator::Now().GetSeconds())
              << ",\\"ev\\":\\"" << ev << "\\",\\"cwnd\\":" << g_cwnd << ",\\"ssth\\":" << g_ssth
              << extra << "}" << std::endl;
}
void
OnSsthTrace(uint32_t, uint32_t v)
{
    g_ssth = v;
}
void
OnRetxTrace(Ptr<const Packet>, const TcpHeader& h, const Address&, const Address&,
            Ptr<const TcpSocketBase>)
{
    TraceLine("retx", ",\\"seq\\":" + std::to_string(h.GetSequenceNumber().GetValue()));
}
""",
    ),
    (
        "OnCongState(TcpSocketState::TcpCongState_t oldS, "
        "TcpSocketState::TcpCongState_t newS)\n{\n",
        '    TraceLine("state", ",\\"from\\":" + std::to_string(int(oldS)) + '
        '",\\"to\\":" + std::to_string(int(newS)));\n',
    ),
    ("    g_tcp.maxCwnd = std::max(g_tcp.maxCwnd, v);\n", "    g_cwnd = v;\n"),
    (
        '    s->TraceConnectWithoutContext("LastRTT", MakeCallback(&OnLastRtt));\n',
        '    s->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(&OnSsthTrace));\n'
        '    s->TraceConnectWithoutContext("Retransmission", MakeCallback(&OnRetxTrace));\n',
    ),
)
OPEN, RECOVERY = 0, 3  # TcpSocketState::TcpCongState_t


def patched_source() -> str:
    """wifi.cc with the TCP event lines; raises if an anchor is gone."""
    src = ns3.WIFI_PROGRAM.source().read_text()
    for anchor, text in PATCHES:
        if src.count(anchor) != 1:
            raise SystemExit(f"wifi.cc changed: anchor not found once: {anchor!r}")
        src = src.replace(anchor, anchor + text)
    return src


def ns3_counts(stdout: str, mss: int) -> dict[str, int]:
    """Recoveries, those whose ssthresh is at the 2-segment floor (ns-3 sets ssthresh
    after the state change, so the recovery's first retransmission carries it), and
    retransmissions, in Open and in all."""
    state, entered = OPEN, False
    out = {"recoveries": 0, "at_floor": 0, "retx_in_open": 0, "retx": 0}
    for line in stdout.splitlines():
        if not line.startswith('{"kind":"tcp"'):
            continue
        ev = json.loads(line)
        if ev["ev"] == "state":
            state = ev["to"]
            entered = state == RECOVERY
            out["recoveries"] += entered
        elif ev["ev"] == "retx":
            out["retx"] += 1
            out["retx_in_open"] += state == OPEN
            if entered:
                out["at_floor"] += ev["ssth"] <= 2 * mss
                entered = False
    return out


def vtlab_counts(spec: dict, seed: int, mss: int) -> dict[str, int]:
    ev = _core.run(json.dumps(spec), seed, False, False, True)["events"]
    out = {"recoveries": 0, "at_floor": 0, "retransmits": 0}
    for kind, state, ssth in zip(ev["event"], ev["ca_state"], ev["ssthresh_bytes"], strict=True):
        if kind == "state" and state == "recovery":
            out["recoveries"] += 1
            out["at_floor"] += ssth <= 2 * mss
        out["retransmits"] += kind == "retransmit"
    return out


def main(argv: list[str]) -> int:
    name = argv[0] if argv else "h1-rts1-tcpnewreno-d1-w128k"
    run = int(argv[1]) if len(argv) > 1 else 1
    cell = next(c for c in wifi.CELLS if c.name == name)
    spec = wifi.vtlab_spec(cell)
    expanded = json.loads(_core.expand(json.dumps(spec)))
    mss = expanded["flows"][0]["tcp"]["mss"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "wifi.cc"
        path.write_text(patched_source())
        binary = ns3.build_program(ns3.WIFI_PROGRAM, source=path, log=print)
        proc = run_process([str(binary.path), *wifi_args(expanded, run)])
    if proc.returncode != 0:
        print(proc.stderr)
        return 1
    print(f"{name}, ns-3 run {run}: {ns3_counts(proc.stdout, mss)}")
    print(f"{name}, vtlab seed {run}: {vtlab_counts(spec, run, mss)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
