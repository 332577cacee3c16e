"""Westwood+ check: does vtlab's ns-3 Westwood+ estimator reproduce ns-3's ssthresh
when it gets ns-3's own inputs?  (docs/validation.md, "Open deviations".)

Builds a copy of v2g.cc with a subclass of ns3::TcpWestwoodPlus that logs every
PktsAcked(segments, rtt) call and every GetSsThresh result with tcb->m_minRtt, runs
one cell, then replays those calls through the arithmetic of vtlab's `Ns3Plus`
(crates/vtlab-core/src/tcp/cc/westwood.rs) twice: with ns-3's m_minRtt and with
vtlab's minimum RTT for the same cell (the first RTT sample of a vtlab run with
ns-3's losses replayed).  Needs the ns3 wheel and g++; about 30 s.

    PYTHONPATH=python python validation/ns3/westwood_check.py [LOSS SEED BYTES]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import vtlab
from vtlab.ns3 import program as ns3
from vtlab.ns3.process import run_process
from vtlab.validation import replay as vr

SUBCLASS = r"""
class V2gWwDbg : public TcpWestwoodPlus
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::V2gWwDbg")
                                .SetParent<TcpWestwoodPlus>()
                                .SetGroupName("Internet")
                                .AddConstructor<V2gWwDbg>();
        return tid;
    }
    V2gWwDbg() = default;
    V2gWwDbg(const V2gWwDbg& o) : TcpWestwoodPlus(o) {}
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segs, const Time& rtt) override
    {
        std::cerr << "ww " << Simulator::Now().GetNanoSeconds() << " acked " << segs << " "
                  << rtt.GetNanoSeconds() << "\n";
        TcpWestwoodPlus::PktsAcked(tcb, segs, rtt);
    }
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t b) override
    {
        uint32_t r = TcpWestwoodPlus::GetSsThresh(tcb, b);
        std::cerr << "ww " << Simulator::Now().GetNanoSeconds() << " ssthresh " << r << " "
                  << tcb->m_minRtt.GetNanoSeconds() << "\n";
        return r;
    }
    std::string GetName() const override { return "V2gWwDbg"; }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<V2gWwDbg>(this); }
};
NS_OBJECT_ENSURE_REGISTERED(V2gWwDbg);
"""

MSS = 1460


def emulate(lines: list[list[str]], min_rtt_ns: int | None) -> list[tuple[int, int, int]]:
    """(time ns, ns-3's ssthresh, the Ns3Plus arithmetic's) at every GetSsThresh;
    ``min_rtt_ns`` None: ns-3's own m_minRtt."""
    acked, pending = 0, None
    cur = last_sample = last_bw = 0
    out = []
    for parts in lines:
        t, kind = int(parts[1]), parts[2]
        if pending is not None and t >= pending[0]:  # EstimateBW, DataRate truncations
            cur = int(acked * MSS * 8.0 / (pending[1] / 1e9))
            acked, sample, pending = 0, cur, None
            cur = int(last_bw * 0.9) + int(int((sample + last_sample) * 0.5) * (1.0 - 0.9))
            last_sample, last_bw = sample, cur
        if kind == "acked":
            segs, rtt = int(parts[3]), int(parts[4])
            if rtt > 0:
                acked += segs
                if pending is None:
                    pending = (t + rtt, rtt)
        elif kind == "ssthresh":
            m = int(parts[4]) if min_rtt_ns is None else min_rtt_ns
            out.append((t, int(parts[3]), max(int(m / 1e9 * cur / 8.0), 2 * MSS)))
    return out


def main(argv: list[str]) -> int:
    loss = float(argv[0]) if argv else 0.05
    seed = int(argv[1]) if len(argv) > 1 else 3
    nbytes = int(argv[2]) if len(argv) > 2 else 2_000_000
    src = ns3.source_path().read_text()
    anchor = "NS_OBJECT_ENSURE_REGISTERED(V2gNewRenoSc);\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "v2g_westwood.cc"
        path.write_text(src.replace(anchor, anchor + SUBCLASS))
        binary = ns3.build_program(ns3.V2G_PROGRAM, source=path, log=print)
    cmd = vr._ns3_command("westwood-plus", loss, seed, nbytes, "none", binary)
    cmd = [c.replace("--cc=TcpWestwoodPlus", "--cc=V2gWwDbg") for c in cmd]
    proc = run_process(cmd)
    lines = [ln.split() for ln in proc.stderr.splitlines() if ln.startswith("ww ")]
    _, drops = vr.ns3_timeline(proc.stderr)
    res = vtlab.run(vr.replay_spec("westwood-plus", nbytes, drops, "none"), seed=seed)
    vt_min = round(float(res.flows["rtt_min_s"].iloc[0]) * 1e9)
    own = emulate(lines, None)
    with_vt = emulate(lines, vt_min)
    ns_min = next(int(p[4]) for p in lines if p[2] == "ssthresh")
    same = sum(1 for (_, a, b) in own if a == b)
    print(f"ns-3 m_minRtt {ns_min / 1e6:.3f} ms, vtlab minimum RTT {vt_min / 1e6:.3f} ms")
    print(f"Ns3Plus arithmetic on ns-3's calls: {same} of {len(own)} ssthresh values equal ns-3's")
    print("time s      ns-3  Ns3Plus(ns-3 minRtt)  Ns3Plus(vtlab minRtt)")
    for (t, a, b), (_, _, c) in list(zip(own, with_vt, strict=True))[:12]:
        print(f"{t / 1e9 - 0.1:9.6f} {a:6d} {b:21d} {c:22d}")
    return 0 if same == len(own) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
