// vtlab validation: ns-3 reference program for the V2G charging-cable scenario
// and the charging station (Park et al. 2019, section 3).
//
// --vehicles=1 (default), the single charging cable:
//
//   SA --(WAN p2p 500 Mbit/s, 0.9 ms)-- SECC --(PLC p2p 10 Mbit/s, 0.9 ms)-- EVCC
//
// One TCP bulk transfer SA -> EVCC. Bursty PLC loss is modelled with
// ns3::BurstErrorModel installed as ReceiveErrorModel on the EVCC's PLC device
// (i.e. it hits the data direction SECC -> EVCC).
//
// --vehicles=N > 1, the charging station (vtlab preset "station"):
//
//   SA --(WAN 500 Mbit/s, 10 ms)-- switch --(PLC j: 10 Mbit/s, 0.9 ms)-- seg j
//   seg j --(access: 10 Gbit/s, 0 ms)-- ev i      (--perSegment vehicles per segment)
//
// All point-to-point links; switch and seg j are plain routers (global routing).
// One bulk transfer SA -> ev i per vehicle, flow i (from 0) starting at
// 0.1 s + i * --stagger. Each vehicle's loss: a BurstErrorModel of its own (fixed
// RNG streams) as ReceiveErrorModel on ev i's access device.
//
// Paired replay (one vehicle): --traceLoss prints, on stderr after the run, the
// positions (from 0) of the packets each PLC device's error model lost among all the
// packets that reached it, IP fragments included: "lost toward_evcc 3 17 ..." and
// "lost toward_secc ..." (vtlab's `replay` loss model takes them). --traceTcp prints
// the sender's congestion-control timeline on stderr, one line per event:
// "tcp <flow> <time ns> cwnd|ssthresh <old> <new>", "... state <old> <new>" (ns-3
// TcpCongState names), "... rto_expiry <rto s>" (the timer doubled: a timeout) and
// "... retx <seq>" (a retransmitted segment's first sequence number, relative).
// Neither changes the simulation; `vtlab validate --replay` reads both.
//
// Written for vtlab against the public ns-3.44 API. Output: one JSON object per
// flow on stdout (plus a "defaults" object with --printDefaults).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <deque>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

// ---------------------------------------------------------------------------
// Optional extra congestion control: NewReno whose ssthresh is floored at
// FloorSegments * MSS instead of 2 * MSS (the paper's "NewReno SC").
// Select with --cc=V2gNewRenoSc.
// ---------------------------------------------------------------------------
namespace ns3
{
class V2gNewRenoSc : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::V2gNewRenoSc")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<V2gNewRenoSc>()
                                .AddAttribute("FloorSegments",
                                              "Lower bound of ssthresh, in segments",
                                              UintegerValue(10),
                                              MakeUintegerAccessor(&V2gNewRenoSc::m_floor),
                                              MakeUintegerChecker<uint32_t>(1));
        return tid;
    }

    V2gNewRenoSc() = default;

    V2gNewRenoSc(const V2gNewRenoSc& o)
        : TcpNewReno(o),
          m_floor(o.m_floor)
    {
    }

    std::string GetName() const override
    {
        return "V2gNewRenoSc";
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        uint32_t half = bytesInFlight / 2;
        uint32_t floorBytes = m_floor * tcb->m_segmentSize;
        return half > floorBytes ? half : floorBytes;
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<V2gNewRenoSc>(this);
    }

  private:
    uint32_t m_floor{10};
};

NS_OBJECT_ENSURE_REGISTERED(V2gNewRenoSc);
} // namespace ns3

// ---------------------------------------------------------------------------
// Loss model helpers
// ---------------------------------------------------------------------------

// Mean loss of ns-3's BurstErrorModel with burst-start probability p and burst
// size S ~ U{1..4}: a new burst may (re)start on every packet, so a packet is
// lost iff the most recent burst start was j packets ago (j = 0..3) and S > j.
// Reported in the output only: the program receives p itself (--burstRate, the
// resolved scenario's burst_start), never a mean loss to invert.
static double
MeanLossFromBurstRate(double p)
{
    double q = 1.0 - p;
    return p * (1.0 + 0.75 * q + 0.5 * q * q + 0.25 * q * q * q);
}

// ---------------------------------------------------------------------------
// Per-flow statistics
// ---------------------------------------------------------------------------
struct FlowStats
{
    uint32_t id{0};
    std::string label;  // "evK" (station)
    uint32_t segment{0}; // station: index of the vehicle's PLC segment (from 0)
    Ptr<BulkSendApplication> sender;
    Ptr<PacketSink> sink;
    double startTime{0};
    uint64_t target{0};
    // receiver
    uint64_t rxBytes{0};
    double lastRxTime{-1};
    bool done{false};
    // sender
    uint64_t dataSegs{0};
    uint64_t dataBytes{0};
    uint64_t retxSegs{0};      // Tx trace: seq below highest sent
    uint64_t retxTrace{0};     // "Retransmission" trace source
    uint64_t lossEpisodes{0};  // transitions into CA_LOSS
    uint64_t rtoExpiries{0};   // RTO doublings (every expiry incl. back-offs)
    uint64_t recoveries{0};    // transitions into CA_RECOVERY
    bool haveHigh{false};
    SequenceNumber32 highTx{0};
    // RTT samples (LastRTT trace)
    uint64_t rttN{0};
    double rttSum{0};
    double rttMin{std::numeric_limits<double>::infinity()};
    double rttMax{0};
    double lastSrtt{0};
    double rttHandshake{-1};
    Time lastRto{Seconds(0)};
    uint32_t maxCwnd{0};
    // station: per-flow drop counters
    uint64_t linkErrData{0};  // error-model drops at ev i's access rx (IP packets/fragments)
    uint64_t linkErrAck{0};   // error-model drops at seg j's access rx (--lossOn=ack|both)
    uint64_t queueDrops{0};   // device-queue drops of this flow's packets (data or ACK)
};

static std::vector<FlowStats*> g_flows;
static uint32_t g_flowsDone = 0;

// --traceTcp: the sender's congestion-control events on stderr
static bool g_traceTcp = false;

// --traceLoss: per PLC device, packets that reached its error model and those lost
struct LossTrace
{
    uint64_t seen = 0;
    std::vector<uint64_t> lost;
};

static void
CountDelivered(LossTrace* t, Ptr<const Packet>)
{
    ++t->seen;
}

static void
CountLost(LossTrace* t, Ptr<const Packet>)
{
    t->lost.push_back(t->seen++);
}

static void
TcpLine(const FlowStats* f, const char* what, const std::string& rest)
{
    std::cerr << "tcp " << f->id << " " << Simulator::Now().GetNanoSeconds() << " " << what
              << " " << rest << "\n";
}

static void
TraceWindow(FlowStats* f, const char* what, uint32_t oldV, uint32_t newV)
{
    TcpLine(f, what, std::to_string(oldV) + " " + std::to_string(newV));
}

static void
TraceState(FlowStats* f, TcpSocketState::TcpCongState_t oldS, TcpSocketState::TcpCongState_t newS)
{
    TcpLine(f,
            "state",
            std::string(TcpSocketState::TcpCongStateName[oldS]) + " " +
                TcpSocketState::TcpCongStateName[newS]);
}

static void
TraceRto(FlowStats* f, Time oldV, Time newV)
{
    // as OnRto: a doubling of the timer is a timeout
    if (oldV.IsStrictlyPositive() &&
        (newV == oldV * 2 || (newV == Seconds(60) && oldV > Seconds(30) && oldV < newV)))
    {
        TcpLine(f, "rto_expiry", std::to_string(newV.GetSeconds()));
    }
}

static void
TraceRetx(FlowStats* f,
          Ptr<const Packet>,
          const TcpHeader& h,
          const Address&,
          const Address&,
          Ptr<const TcpSocketBase>)
{
    TcpLine(f, "retx", std::to_string(h.GetSequenceNumber().GetValue()));
}

struct LinkCounters
{
    uint64_t linkErrDrops{0};     // all BurstErrorModel drops (PhyRxDrop)
    uint64_t linkErrDropsEvcc{0}; // at EVCC PLC rx = data direction (packets/IP fragments)
    uint64_t linkErrDropsSecc{0}; // at SECC PLC rx = ACK direction (--lossOn=ack|both)
    uint64_t queueDrops{0};       // device queue drops (all devices)
    uint64_t tcDrops{0};          // traffic-control layer drops (all nodes)
    uint64_t qdiscDrops{0};       // queue disc drops (if a qdisc is kept)
    uint64_t plcTxPackets{0};     // SECC -> EVCC packets put on the PLC wire
    uint64_t plcTxBytes{0};
    uint32_t plcMaxPktBytes{0};
    uint32_t plcMaxQueue{0};      // max packets in the SECC PLC device queue
};

static LinkCounters g_link;
// station: counters of each segment's switch-side PLC device (index = segment)
static std::vector<LinkCounters> g_seg;
// station: vehicle address -> flow, to attribute device-queue drops
static std::map<uint32_t, FlowStats*> g_flowByAddr;

static void
OnSinkRx(FlowStats* f, Ptr<const Packet> p, const Address&)
{
    f->rxBytes += p->GetSize();
    f->lastRxTime = Simulator::Now().GetSeconds();
    if (!f->done && f->rxBytes >= f->target)
    {
        f->done = true;
        ++g_flowsDone;
        if (g_flowsDone == g_flows.size())
        {
            Simulator::Stop();
        }
    }
}

static void
OnTx(FlowStats* f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    uint32_t sz = p->GetSize();
    if (sz == 0)
    {
        return;
    }
    f->dataSegs++;
    f->dataBytes += sz;
    SequenceNumber32 seq = h.GetSequenceNumber();
    SequenceNumber32 end = seq + sz;
    if (f->haveHigh && seq < f->highTx)
    {
        f->retxSegs++;
    }
    if (!f->haveHigh || end > f->highTx)
    {
        f->highTx = end;
        f->haveHigh = true;
    }
}

static void
OnRetx(FlowStats* f,
       Ptr<const Packet>,
       const TcpHeader&,
       const Address&,
       const Address&,
       Ptr<const TcpSocketBase>)
{
    f->retxTrace++;
}

static void
OnCongState(FlowStats* f, TcpSocketState::TcpCongState_t oldS, TcpSocketState::TcpCongState_t newS)
{
    if (newS == TcpSocketState::CA_LOSS && oldS != TcpSocketState::CA_LOSS)
    {
        f->lossEpisodes++;
    }
    if (newS == TcpSocketState::CA_RECOVERY && oldS != TcpSocketState::CA_RECOVERY)
    {
        f->recoveries++;
    }
}

static void
OnRto(FlowStats* f, Time oldV, Time newV)
{
    // TcpSocketBase doubles m_rto (capped at 60 s) on every retransmission
    // timeout; RTT-driven updates essentially never hit exactly 2x.
    if (oldV.IsStrictlyPositive() &&
        (newV == oldV * 2 || (newV == Seconds(60) && oldV > Seconds(30) && oldV < newV)))
    {
        f->rtoExpiries++;
    }
}

static void
OnLastRtt(FlowStats* f, Time, Time v)
{
    double s = v.GetSeconds();
    if (s <= 0)
    {
        return;
    }
    if (f->dataSegs == 0)
    {
        // sample taken on the SYN-ACK, before any data was sent
        f->rttHandshake = s;
        return;
    }
    f->rttN++;
    f->rttSum += s;
    f->rttMin = std::min(f->rttMin, s);
    f->rttMax = std::max(f->rttMax, s);
}

static void
OnSrtt(FlowStats* f, Time, Time v)
{
    f->lastSrtt = v.GetSeconds();
}

static void
OnCwnd(FlowStats* f, uint32_t, uint32_t v)
{
    f->maxCwnd = std::max(f->maxCwnd, v);
}

static void
ConnectSenderTraces(FlowStats* f)
{
    Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(f->sender->GetSocket());
    NS_ABORT_MSG_IF(!s, "sender socket is not a TcpSocketBase");
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, f));
    s->TraceConnectWithoutContext("Retransmission", MakeBoundCallback(&OnRetx, f));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, f));
    s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, f));
    s->TraceConnectWithoutContext("LastRTT", MakeBoundCallback(&OnLastRtt, f));
    s->TraceConnectWithoutContext("RTT", MakeBoundCallback(&OnSrtt, f));
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, f));
    if (g_traceTcp)
    {
        s->TraceConnectWithoutContext("CongestionWindow",
                                      MakeBoundCallback(&TraceWindow, f, "cwnd"));
        s->TraceConnectWithoutContext("SlowStartThreshold",
                                      MakeBoundCallback(&TraceWindow, f, "ssthresh"));
        s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&TraceState, f));
        s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&TraceRto, f));
        s->TraceConnectWithoutContext("Retransmission", MakeBoundCallback(&TraceRetx, f));
    }
}

static void
OnPhyRxDrop(bool atEvcc, Ptr<const Packet>)
{
    g_link.linkErrDrops++;
    (atEvcc ? g_link.linkErrDropsEvcc : g_link.linkErrDropsSecc)++;
}

static void
OnQueueDrop(Ptr<const Packet>)
{
    g_link.queueDrops++;
}

// Station: a device-queue drop, attributed to the flow whose vehicle is the packet's
// IPv4 destination (data) or source (ACKs). Queued packets carry the PPP header.
static void
OnQueueDropByFlow(Ptr<const Packet> p)
{
    g_link.queueDrops++;
    Ptr<Packet> c = p->Copy();
    PppHeader ppp;
    c->RemoveHeader(ppp);
    if (ppp.GetProtocol() != 0x0021)
    {
        return;
    }
    Ipv4Header ip;
    c->PeekHeader(ip);
    auto it = g_flowByAddr.find(ip.GetDestination().Get());
    if (it == g_flowByAddr.end())
    {
        it = g_flowByAddr.find(ip.GetSource().Get());
    }
    if (it != g_flowByAddr.end())
    {
        it->second->queueDrops++;
    }
}

static void
OnAccessRxDrop(FlowStats* f, bool dataDir, Ptr<const Packet>)
{
    g_link.linkErrDrops++;
    if (dataDir)
    {
        g_link.linkErrDropsEvcc++;
        f->linkErrData++;
    }
    else
    {
        g_link.linkErrDropsSecc++;
        f->linkErrAck++;
    }
}

static void
OnSegPhyTx(uint32_t seg, Ptr<const Packet> p)
{
    LinkCounters& c = g_seg[seg];
    c.plcTxPackets++;
    c.plcTxBytes += p->GetSize();
    c.plcMaxPktBytes = std::max(c.plcMaxPktBytes, p->GetSize());
}

static void
OnSegQueueLen(uint32_t seg, uint32_t, uint32_t v)
{
    g_seg[seg].plcMaxQueue = std::max(g_seg[seg].plcMaxQueue, v);
}

static void
OnTcDrop(Ptr<const Packet>)
{
    g_link.tcDrops++;
}

static void
OnQdiscDrop(Ptr<const QueueDiscItem>)
{
    g_link.qdiscDrops++;
}

static void
OnPlcPhyTx(Ptr<const Packet> p)
{
    g_link.plcTxPackets++;
    g_link.plcTxBytes += p->GetSize();
    g_link.plcMaxPktBytes = std::max(g_link.plcMaxPktBytes, p->GetSize());
}

static void
OnPlcQueueLen(uint32_t, uint32_t v)
{
    g_link.plcMaxQueue = std::max(g_link.plcMaxQueue, v);
}

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------
static std::string
JsonEsc(const std::string& s)
{
    std::string o;
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            o += '\\';
        }
        o += c;
    }
    return o;
}

static std::string
AttrString(const std::string& typeName, const std::string& attr)
{
    TypeId tid = TypeId::LookupByName(typeName);
    TypeId::AttributeInformation info;
    if (!tid.LookupAttributeByName(attr, &info))
    {
        return "?";
    }
    return info.initialValue->SerializeToString(info.checker);
}

static std::string
Num(double v)
{
    if (!std::isfinite(v))
    {
        return "null";
    }
    std::ostringstream o;
    o << std::setprecision(10) << v;
    return o.str();
}

static bool
ParseTriBool(const std::string& s, const char* name, int& out)
{
    if (s.empty() || s == "default")
    {
        out = -1;
        return true;
    }
    if (s == "1" || s == "true" || s == "True" || s == "on")
    {
        out = 1;
        return true;
    }
    if (s == "0" || s == "false" || s == "False" || s == "off")
    {
        out = 0;
        return true;
    }
    std::cerr << "bad value for --" << name << ": " << s << "\n";
    return false;
}

static double
ProcessMaxRssMiB()
{
    FILE* f = std::fopen("/proc/self/status", "r");
    if (!f)
    {
        return -1;
    }
    char line[256];
    double kb = -1;
    while (std::fgets(line, sizeof(line), f))
    {
        if (std::sscanf(line, "VmHWM: %lf kB", &kb) == 1)
        {
            break;
        }
    }
    std::fclose(f);
    return kb / 1024.0;
}

// ---------------------------------------------------------------------------
int
main(int argc, char* argv[])
{
    auto wall0 = std::chrono::steady_clock::now();

    // Snapshot of the pristine ns-3 defaults, taken before any SetDefault.
    std::ostringstream defs;
    {
        auto a = [&](const char* key, const char* type, const char* attr, bool last = false) {
            defs << "\"" << key << "\":\"" << JsonEsc(AttrString(type, attr)) << "\""
                 << (last ? "" : ",");
        };
        a("Sack", "ns3::TcpSocketBase", "Sack");
        a("Timestamp", "ns3::TcpSocketBase", "Timestamp");
        a("WindowScaling", "ns3::TcpSocketBase", "WindowScaling");
        a("LimitedTransmit", "ns3::TcpSocketBase", "LimitedTransmit");
        a("ReTxThreshold", "ns3::TcpSocketBase", "ReTxThreshold");
        a("MinRto", "ns3::TcpSocketBase", "MinRto");
        a("ClockGranularity", "ns3::TcpSocketBase", "ClockGranularity");
        a("MaxWindowSize", "ns3::TcpSocketBase", "MaxWindowSize");
        a("UseEcn", "ns3::TcpSocketBase", "UseEcn");
        a("SegmentSize", "ns3::TcpSocket", "SegmentSize");
        a("SndBufSize", "ns3::TcpSocket", "SndBufSize");
        a("RcvBufSize", "ns3::TcpSocket", "RcvBufSize");
        a("InitialCwnd", "ns3::TcpSocket", "InitialCwnd");
        a("InitialSlowStartThreshold", "ns3::TcpSocket", "InitialSlowStartThreshold");
        a("DelAckCount", "ns3::TcpSocket", "DelAckCount");
        a("DelAckTimeout", "ns3::TcpSocket", "DelAckTimeout");
        a("DataRetries", "ns3::TcpSocket", "DataRetries");
        a("ConnTimeout", "ns3::TcpSocket", "ConnTimeout");
        a("ConnCount", "ns3::TcpSocket", "ConnCount");
        a("TcpNoDelay", "ns3::TcpSocket", "TcpNoDelay");
        a("SocketType", "ns3::TcpL4Protocol", "SocketType");
        a("RecoveryType", "ns3::TcpL4Protocol", "RecoveryType");
        a("RttEstimatorType", "ns3::TcpL4Protocol", "RttEstimatorType");
        a("RttAlpha", "ns3::RttMeanDeviation", "Alpha");
        a("RttBeta", "ns3::RttMeanDeviation", "Beta");
        a("P2pMtu", "ns3::PointToPointNetDevice", "Mtu");
        a("DropTailMaxSize", "ns3::DropTailQueue<Packet>", "MaxSize");
        a("FqCoDelMaxSize", "ns3::FqCoDelQueueDisc", "MaxSize");
        a("BurstErrorModelBurstSize", "ns3::BurstErrorModel", "BurstSize", true);
    }

    std::string cc = "TcpNewReno";
    double burstRate = 0;
    uint64_t bytes = 100000000ULL;
    uint32_t run = 1;
    uint32_t seed = 1;
    std::string sackStr;
    std::string tsStr;
    std::string recovery;
    uint32_t delAckCount = 2;
    double delAckTimeout = -1;
    uint32_t initialCwnd = 10;
    double minRto = 1.0;
    uint32_t sndBuf = 131072;
    uint32_t rcvBuf = 131072;
    uint32_t queuePackets = 100;
    double stopTime = 1e7;
    uint32_t vehicles = 1;
    uint32_t segmentSize = 1460;
    uint32_t mtu = 1500;
    uint32_t dataRetries = 1000;
    uint32_t sendSize = 0;
    std::string qdisc = "none";
    std::string lossOn = "data";
    double plcRateMbps = 10;
    double wanRateMbps = 500;
    double plcDelayMs = 0.9;
    double wanDelayMs = -1; // 0.9 ms for one vehicle, 10 ms for the station
    uint32_t perSegment = 3;
    double stagger = 0.002;
    double accessRateMbps = 10000;
    double accessDelayMs = 0;
    double initialSsthresh = -1;
    uint32_t scFloor = 10;
    bool printDefaults = false;
    bool checkLossModel = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("cc", "congestion control TypeId suffix (TcpNewReno, TcpIllinois, ..., V2gNewRenoSc)", cc);
    cmd.AddValue("burstRate", "BurstErrorModel ErrorRate p (burst-start probability; 0: no loss)", burstRate);
    cmd.AddValue("bytes", "bytes to transfer per flow", bytes);
    cmd.AddValue("run", "RngRun (seed fixed by --seed)", run);
    cmd.AddValue("seed", "RngSeed", seed);
    cmd.AddValue("sack", "SACK true|false (default: ns-3 default)", sackStr);
    cmd.AddValue("timestamps", "TCP timestamps true|false (default: ns-3 default)", tsStr);
    cmd.AddValue("recovery", "classic|prr (default: ns-3 default)", recovery);
    cmd.AddValue("delAckCount", "TcpSocket::DelAckCount", delAckCount);
    cmd.AddValue("delAckTimeout", "TcpSocket::DelAckTimeout in s (default: ns-3 default)", delAckTimeout);
    cmd.AddValue("initialCwnd", "TcpSocket::InitialCwnd (segments)", initialCwnd);
    cmd.AddValue("initialSsthresh", "TcpSocket::InitialSlowStartThreshold in bytes (default: ns-3 default)", initialSsthresh);
    cmd.AddValue("minRto", "TcpSocketBase::MinRto in s", minRto);
    cmd.AddValue("sndBuf", "TcpSocket::SndBufSize", sndBuf);
    cmd.AddValue("rcvBuf", "TcpSocket::RcvBufSize", rcvBuf);
    cmd.AddValue("segmentSize", "TcpSocket::SegmentSize (MSS)", segmentSize);
    cmd.AddValue("mtu", "point-to-point Mtu", mtu);
    cmd.AddValue("dataRetries", "TcpSocket::DataRetries", dataRetries);
    cmd.AddValue("sendSize", "BulkSendApplication::SendSize (0 = segmentSize)", sendSize);
    cmd.AddValue("queuePackets", "DropTail device queue size (packets)", queuePackets);
    cmd.AddValue("qdisc", "none (plain device drop-tail, no flow control) | default (keep ns-3's default qdisc)", qdisc);
    cmd.AddValue("lossOn", "data (EVCC PLC rx) | ack (SECC PLC rx) | both", lossOn);
    cmd.AddValue("plcRate", "PLC rate Mbit/s", plcRateMbps);
    cmd.AddValue("wanRate", "WAN rate Mbit/s", wanRateMbps);
    cmd.AddValue("plcDelay", "PLC delay ms", plcDelayMs);
    cmd.AddValue("wanDelay", "WAN delay ms (default 0.9 for one vehicle, 10 for the station)", wanDelayMs);
    cmd.AddValue("perSegment", "station: vehicles per PLC segment", perSegment);
    cmd.AddValue("stagger", "station: flow i (from 0) starts at 0.1 s + i * stagger (s)", stagger);
    cmd.AddValue("accessRate", "station: segment -> vehicle access hop rate Mbit/s", accessRateMbps);
    cmd.AddValue("accessDelay", "station: access hop delay ms", accessDelayMs);
    cmd.AddValue("scFloor", "ssthresh floor (segments) for --cc=V2gNewRenoSc", scFloor);
    cmd.AddValue("stopTime", "simulation stop time (s)", stopTime);
    cmd.AddValue("vehicles", "number of vehicles (1: the V2G cable; >1: the charging station)", vehicles);
    cmd.AddValue("printDefaults", "print ns-3 defaults (and the default qdisc) and exit", printDefaults);
    bool traceLoss = false;
    cmd.AddValue("traceLoss", "one vehicle: print the positions of the packets each PLC error model lost on stderr", traceLoss);
    cmd.AddValue("traceTcp", "print the senders' cwnd, ssthresh, congestion state, timeouts and retransmissions on stderr", g_traceTcp);
    cmd.AddValue("checkLossModel", "draw 10^7 packets through the error model, print loss stats, exit", checkLossModel);
    cmd.Parse(argc, argv);

    NS_ABORT_MSG_IF(vehicles < 1 || vehicles > 1000, "--vehicles must be in [1, 1000]");
    NS_ABORT_MSG_IF(perSegment < 1, "--perSegment must be at least 1");
    NS_ABORT_MSG_IF(stagger < 0, "--stagger must not be negative");
    const bool station = vehicles > 1;
    if (wanDelayMs < 0)
    {
        wanDelayMs = station ? 10.0 : 0.9;
    }
    NS_ABORT_MSG_IF(!(burstRate >= 0 && burstRate <= 1), "--burstRate must be in [0, 1]");
    int sack = -1;
    int ts = -1;
    if (!ParseTriBool(sackStr, "sack", sack) || !ParseTriBool(tsStr, "timestamps", ts))
    {
        return 2;
    }

    const double p = burstRate;
    double L = MeanLossFromBurstRate(p);

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    if (checkLossModel)
    {
        Ptr<BurstErrorModel> em = CreateObject<BurstErrorModel>();
        em->SetAttribute("ErrorRate", DoubleValue(p));
        em->SetAttribute("BurstSize", StringValue("ns3::UniformRandomVariable[Min=1|Max=4]"));
        Ptr<Packet> pkt = Create<Packet>(1000);
        const uint64_t n = 10000000;
        uint64_t lost = 0;
        uint64_t runs = 0;
        uint64_t cur = 0;
        std::vector<uint64_t> hist(16, 0);
        for (uint64_t i = 0; i < n; ++i)
        {
            bool c = em->IsCorrupt(pkt);
            if (c)
            {
                lost++;
                cur++;
            }
            else if (cur > 0)
            {
                hist[std::min<uint64_t>(cur, 15)]++;
                runs++;
                cur = 0;
            }
        }
        std::cout << "{\"type\":\"loss_check\",\"p\":" << Num(p) << ",\"model_L\":" << Num(L)
                  << ",\"measured_L\":" << Num(double(lost) / n) << ",\"loss_runs\":" << runs
                  << ",\"mean_run_len\":" << Num(runs ? double(lost) / runs : 0)
                  << ",\"run_len_hist\":[";
        for (size_t i = 1; i < hist.size(); ++i)
        {
            std::cout << hist[i] << (i + 1 < hist.size() ? "," : "");
        }
        std::cout << "]}" << std::endl;
        return 0;
    }

    // ---------------- TCP configuration ----------------
    TypeId ccTid;
    NS_ABORT_MSG_IF(!TypeId::LookupByNameFailSafe("ns3::" + cc, &ccTid),
                    "unknown congestion control ns3::" << cc);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(ccTid));
    if (recovery == "classic")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TcpClassicRecovery::GetTypeId()));
    }
    else if (recovery == "prr")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TcpPrrRecovery::GetTypeId()));
    }
    else
    {
        NS_ABORT_MSG_IF(!recovery.empty() && recovery != "default", "bad --recovery " << recovery);
    }
    if (sack >= 0)
    {
        Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack == 1));
    }
    if (ts >= 0)
    {
        Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(ts == 1));
    }
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentSize));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBuf));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    if (delAckTimeout >= 0)
    {
        Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(delAckTimeout)));
    }
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwnd));
    if (initialSsthresh >= 0)
    {
        Config::SetDefault("ns3::TcpSocket::InitialSlowStartThreshold",
                           UintegerValue(uint32_t(initialSsthresh)));
    }
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(dataRetries));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));
    Config::SetDefault("ns3::V2gNewRenoSc::FloorSegments", UintegerValue(scFloor));

    // ---------------- topology ----------------
    const bool plainDropTail = (qdisc == "none");
    NS_ABORT_MSG_IF(!plainDropTail && qdisc != "default", "bad --qdisc " << qdisc);

    auto makeP2p = [&](double mbps, double delayMs) {
        PointToPointHelper h;
        h.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(mbps * 1e6))));
        h.SetDeviceAttribute("Mtu", UintegerValue(mtu));
        h.SetChannelAttribute("Delay", TimeValue(Seconds(delayMs * 1e-3)));
        h.SetQueue("ns3::DropTailQueue<Packet>",
                   "MaxSize",
                   QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePackets)));
        if (plainDropTail && !printDefaults)
        {
            h.DisableFlowControl();
        }
        return h;
    };

    NodeContainer nodes;
    Ptr<Node> sa;
    std::vector<Ptr<Node>> evNodes;             // receiver of flow i
    std::vector<Ipv4Address> evAddrs;           // its address
    std::vector<NetDeviceContainer> allDevs;    // every link (qdisc removal, drop traces)
    NetDeviceContainer plcDevs;                 // one vehicle: SECC (0) -- EVCC (1)
    std::vector<NetDeviceContainer> segDevs;    // station: switch (0) -- seg j (1)
    std::vector<NetDeviceContainer> accessDevs; // station: seg j (0) -- ev i (1)
    const uint32_t segments = (vehicles + perSegment - 1) / perSegment;
    InternetStackHelper stack;
    Ipv4AddressHelper addr;
    if (!station)
    {
        nodes.Create(3);
        sa = nodes.Get(0);
        Ptr<Node> secc = nodes.Get(1);
        Ptr<Node> evcc = nodes.Get(2);
        PointToPointHelper wanHelper = makeP2p(wanRateMbps, wanDelayMs);
        PointToPointHelper plcHelper = makeP2p(plcRateMbps, plcDelayMs);
        NetDeviceContainer wanDevs = wanHelper.Install(sa, secc);
        plcDevs = plcHelper.Install(secc, evcc);

        stack.Install(nodes);
        addr.SetBase("10.1.1.0", "255.255.255.0");
        addr.Assign(wanDevs);
        addr.SetBase("10.1.2.0", "255.255.255.0");
        Ipv4InterfaceContainer plcIf = addr.Assign(plcDevs);
        evNodes.push_back(evcc);
        evAddrs.push_back(plcIf.GetAddress(1));
        allDevs = {wanDevs, plcDevs};
    }
    else
    {
        // nodes: sa, switch, seg 1..S, ev 1..N
        nodes.Create(2 + segments + vehicles);
        sa = nodes.Get(0);
        Ptr<Node> sw = nodes.Get(1);
        PointToPointHelper wanHelper = makeP2p(wanRateMbps, wanDelayMs);
        PointToPointHelper plcHelper = makeP2p(plcRateMbps, plcDelayMs);
        PointToPointHelper accessHelper = makeP2p(accessRateMbps, accessDelayMs);
        NetDeviceContainer wanDevs = wanHelper.Install(sa, sw);
        allDevs.push_back(wanDevs);
        for (uint32_t j = 0; j < segments; ++j)
        {
            segDevs.push_back(plcHelper.Install(sw, nodes.Get(2 + j)));
            allDevs.push_back(segDevs.back());
        }
        for (uint32_t i = 0; i < vehicles; ++i)
        {
            Ptr<Node> ev = nodes.Get(2 + segments + i);
            accessDevs.push_back(accessHelper.Install(nodes.Get(2 + i / perSegment), ev));
            allDevs.push_back(accessDevs.back());
            evNodes.push_back(ev);
        }

        stack.Install(nodes);
        addr.SetBase("10.1.1.0", "255.255.255.0");
        addr.Assign(wanDevs);
        // one /30 per link: segments in 10.2.0.0/16, access hops in 10.3.0.0/16
        for (uint32_t j = 0; j < segments; ++j)
        {
            addr.SetBase(Ipv4Address(0x0a020000u + 4 * j), "255.255.255.252");
            addr.Assign(segDevs[j]);
        }
        for (uint32_t i = 0; i < vehicles; ++i)
        {
            addr.SetBase(Ipv4Address(0x0a030000u + 4 * i), "255.255.255.252");
            Ipv4InterfaceContainer ifc = addr.Assign(accessDevs[i]);
            evAddrs.push_back(ifc.GetAddress(1));
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    if (printDefaults)
    {
        Ptr<NetDevice> dev = station ? segDevs[0].Get(0) : plcDevs.Get(0);
        Ptr<QueueDisc> qd =
            dev->GetNode()->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(dev);
        Ptr<PointToPointNetDevice> pd = DynamicCast<PointToPointNetDevice>(dev);
        bool ndqi = (dev->GetObject<NetDeviceQueueInterface>() != nullptr);
        std::cout << "{\"type\":\"defaults\",\"ns3\":{" << defs.str() << "},"
                  << "\"p2p_default_setup\":{\"root_qdisc_after_Ipv4AddressHelper_Assign\":\""
                  << (qd ? qd->GetInstanceTypeId().GetName() : std::string("none")) << "\""
                  << ",\"root_qdisc_max_size\":\"" << (qd ? qd->GetMaxSize() : QueueSize()) << "\""
                  << ",\"qdisc_child_queue_discs\":" << (qd ? qd->GetNQueueDiscClasses() : 0)
                  << ",\"device_queue_type\":\"" << pd->GetQueue()->GetInstanceTypeId().GetName()
                  << "\",\"device_queue_max_size\":\"" << pd->GetQueue()->GetMaxSize() << "\""
                  << ",\"device_flow_control_NetDeviceQueueInterface\":" << (ndqi ? "true" : "false")
                  << "}}" << std::endl;
        Simulator::Destroy();
        return 0;
    }

    if (plainDropTail)
    {
        // With DisableFlowControl() Ipv4AddressHelper::Assign() does not install
        // its default qdisc; remove any root qdisc that is present anyway.
        TrafficControlHelper tch;
        for (NetDeviceContainer& dc : allDevs)
        {
            for (uint32_t i = 0; i < dc.GetN(); ++i)
            {
                Ptr<NetDevice> d = dc.Get(i);
                if (d->GetNode()->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(d))
                {
                    std::cerr << "note: removing root qdisc on node " << d->GetNode()->GetId()
                              << std::endl;
                    tch.Uninstall(d);
                }
            }
        }
    }

    // ---------------- loss model ----------------
    auto makeEm = [&]() {
        Ptr<BurstErrorModel> em = CreateObject<BurstErrorModel>();
        em->SetAttribute("ErrorRate", DoubleValue(p));
        em->SetAttribute("BurstSize", StringValue("ns3::UniformRandomVariable[Min=1|Max=4]"));
        return em;
    };
    if (p > 0)
    {
        NS_ABORT_MSG_IF(lossOn != "data" && lossOn != "ack" && lossOn != "both",
                        "bad --lossOn " << lossOn);
        if (!station)
        {
            if (lossOn == "data" || lossOn == "both")
            {
                plcDevs.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(makeEm()));
            }
            if (lossOn == "ack" || lossOn == "both")
            {
                plcDevs.Get(0)->SetAttribute("ReceiveErrorModel", PointerValue(makeEm()));
            }
        }
        else
        {
            // Every vehicle's loss process has streams of its own (4i, 4i+1 toward the
            // vehicle; 4i+2, 4i+3 toward the segment), independent of the others and
            // of how many vehicles there are.
            for (uint32_t i = 0; i < vehicles; ++i)
            {
                if (lossOn == "data" || lossOn == "both")
                {
                    Ptr<BurstErrorModel> em = makeEm();
                    em->AssignStreams(4 * int64_t(i));
                    accessDevs[i].Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));
                }
                if (lossOn == "ack" || lossOn == "both")
                {
                    Ptr<BurstErrorModel> em = makeEm();
                    em->AssignStreams(4 * int64_t(i) + 2);
                    accessDevs[i].Get(0)->SetAttribute("ReceiveErrorModel", PointerValue(em));
                }
            }
        }
    }

    // Every packet a device receives passes its error model (if it has one):
    // PhyRxDrop if lost, PhyRxEnd if not (PointToPointNetDevice::Receive).
    NS_ABORT_MSG_IF(traceLoss && station, "--traceLoss: one vehicle only");
    LossTrace towardEvcc;
    LossTrace towardSecc;
    if (traceLoss)
    {
        plcDevs.Get(1)->TraceConnectWithoutContext("PhyRxEnd", MakeBoundCallback(&CountDelivered, &towardEvcc));
        plcDevs.Get(1)->TraceConnectWithoutContext("PhyRxDrop", MakeBoundCallback(&CountLost, &towardEvcc));
        plcDevs.Get(0)->TraceConnectWithoutContext("PhyRxEnd", MakeBoundCallback(&CountDelivered, &towardSecc));
        plcDevs.Get(0)->TraceConnectWithoutContext("PhyRxDrop", MakeBoundCallback(&CountLost, &towardSecc));
    }

    // ---------------- flows ----------------
    const uint16_t port = 50000;
    const double startTime = 0.1;
    const int64_t staggerNs = std::llround(stagger * 1e9);
    std::deque<FlowStats> flows(vehicles);
    for (uint32_t i = 0; i < vehicles; ++i)
    {
        FlowStats& f = flows[i];
        f.id = i;
        f.label = "ev" + std::to_string(i + 1);
        f.segment = i / perSegment;
        f.startTime = startTime + i * (staggerNs * 1e-9);
        f.target = bytes;
        g_flowByAddr[evAddrs[i].Get()] = &f;
    }

    // ---------------- counters on devices / queues ----------------
    if (!station)
    {
        for (uint32_t i = 0; i < plcDevs.GetN(); ++i)
        {
            plcDevs.Get(i)->TraceConnectWithoutContext("PhyRxDrop",
                                                       MakeBoundCallback(&OnPhyRxDrop, i == 1));
        }
    }
    else
    {
        for (uint32_t i = 0; i < vehicles; ++i)
        {
            accessDevs[i].Get(1)->TraceConnectWithoutContext(
                "PhyRxDrop",
                MakeBoundCallback(&OnAccessRxDrop, &flows[i], true));
            accessDevs[i].Get(0)->TraceConnectWithoutContext(
                "PhyRxDrop",
                MakeBoundCallback(&OnAccessRxDrop, &flows[i], false));
        }
    }
    for (NetDeviceContainer& dc : allDevs)
    {
        for (uint32_t i = 0; i < dc.GetN(); ++i)
        {
            Ptr<PointToPointNetDevice> d = DynamicCast<PointToPointNetDevice>(dc.Get(i));
            d->GetQueue()->TraceConnectWithoutContext(
                "Drop",
                MakeCallback(station ? &OnQueueDropByFlow : &OnQueueDrop));
            if (!plainDropTail)
            {
                Ptr<Node> n = d->GetNode();
                Ptr<QueueDisc> qd =
                    n->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(d);
                qd->TraceConnectWithoutContext("Drop", MakeCallback(&OnQdiscDrop));
            }
        }
    }
    for (uint32_t i = 0; i < nodes.GetN(); ++i)
    {
        nodes.Get(i)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop",
            MakeCallback(&OnTcDrop));
    }
    if (!station)
    {
        Ptr<PointToPointNetDevice> d = DynamicCast<PointToPointNetDevice>(plcDevs.Get(0));
        d->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnPlcPhyTx));
        d->GetQueue()->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnPlcQueueLen));
    }
    else
    {
        g_seg.resize(segments);
        for (uint32_t j = 0; j < segments; ++j)
        {
            Ptr<PointToPointNetDevice> d = DynamicCast<PointToPointNetDevice>(segDevs[j].Get(0));
            d->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&OnSegPhyTx, j));
            d->GetQueue()->TraceConnectWithoutContext("PacketsInQueue",
                                                      MakeBoundCallback(&OnSegQueueLen, j));
        }
    }

    // ---------------- applications ----------------
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    for (uint32_t i = 0; i < vehicles; ++i)
    {
        FlowStats& flow = flows[i];
        ApplicationContainer sinkApps = sinkHelper.Install(evNodes[i]);
        sinkApps.Start(Seconds(0));
        flow.sink = DynamicCast<PacketSink>(sinkApps.Get(0));
        flow.sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSinkRx, &flow));

        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(evAddrs[i], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(bytes));
        bulk.SetAttribute("SendSize", UintegerValue(sendSize ? sendSize : segmentSize));
        ApplicationContainer srcApps = bulk.Install(sa);
        Time start = Seconds(startTime) + NanoSeconds(i * staggerNs);
        srcApps.Start(start);
        flow.sender = DynamicCast<BulkSendApplication>(srcApps.Get(0));
        // The socket is created in StartApplication(); hook the traces right after.
        Simulator::Schedule(start + NanoSeconds(1), &ConnectSenderTraces, &flow);

        g_flows.push_back(&flow);
    }

    Simulator::Stop(Seconds(stopTime));
    Simulator::Run();
    double simEnd = Simulator::Now().GetSeconds();

    auto wall1 = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(wall1 - wall0).count();

    const uint64_t allQueueDrops = g_link.queueDrops + g_link.tcDrops + g_link.qdiscDrops;
    for (FlowStats* f : g_flows)
    {
        double dur = (f->lastRxTime > f->startTime) ? f->lastRxTime - f->startTime : 0;
        double goodput = dur > 0 ? double(f->rxBytes) * 8.0 / dur : 0;
        // One vehicle: link and queue counters of the whole network, the PLC link's
        // counters. Station: this flow's drops, the counters of its PLC segment.
        const LinkCounters& plc = station ? g_seg[f->segment] : g_link;
        const std::string flowId = station ? "\"" + f->label + "\"" : std::to_string(f->id);
        const uint64_t errData = station ? f->linkErrData : g_link.linkErrDropsEvcc;
        const uint64_t errAck = station ? f->linkErrAck : g_link.linkErrDropsSecc;
        const uint64_t errAll = station ? errData + errAck : g_link.linkErrDrops;
        const uint64_t qDev = station ? f->queueDrops : g_link.queueDrops;
        const uint64_t qAll = station ? f->queueDrops : allQueueDrops;
        std::ostringstream o;
        o << "{\"type\":\"flow\",\"cc\":\"" << JsonEsc(cc) << "\",\"run\":" << run
          << ",\"seed\":" << seed << ",\"flow\":" << flowId << ",\"bytes\":" << f->target
          << ",\"bytes_received\":" << f->rxBytes << ",\"complete\":" << (f->done ? "true" : "false")
          << ",\"mean_loss\":" << Num(L) << ",\"burst_rate\":" << Num(p) << ",\"loss_on\":\""
          << lossOn << "\",\"goodput_bps\":" << Num(goodput) << ",\"completion_s\":" << Num(dur)
          << ",\"retransmissions\":" << f->retxSegs
          << ",\"retransmissions_trace\":" << f->retxTrace << ",\"rto_count\":" << f->lossEpisodes
          << ",\"rto_expiries\":" << f->rtoExpiries << ",\"fast_recoveries\":" << f->recoveries
          << ",\"drops_link_error\":" << errAll
          << ",\"drops_link_error_data_dir\":" << errData
          << ",\"drops_link_error_ack_dir\":" << errAck
          << ",\"drops_queue\":" << qAll
          << ",\"drops_queue_device\":" << qDev << ",\"drops_tc\":" << g_link.tcDrops
          << ",\"drops_qdisc\":" << g_link.qdiscDrops << ",\"packets_sent_data\":" << f->dataSegs
          << ",\"bytes_sent_data\":" << f->dataBytes << ",\"plc_tx_packets\":" << plc.plcTxPackets
          << ",\"plc_tx_bytes\":" << plc.plcTxBytes
          << ",\"plc_max_packet_bytes\":" << plc.plcMaxPktBytes
          << ",\"plc_max_queue_packets\":" << plc.plcMaxQueue
          << ",\"max_cwnd_bytes\":" << f->maxCwnd << ",\"rtt_samples\":" << f->rttN
          << ",\"rtt_min_s\":" << Num(f->rttN ? f->rttMin : NAN)
          << ",\"rtt_mean_s\":" << Num(f->rttN ? f->rttSum / f->rttN : NAN)
          << ",\"rtt_max_s\":" << Num(f->rttN ? f->rttMax : NAN)
          << ",\"srtt_final_s\":" << Num(f->lastSrtt)
          << ",\"rtt_handshake_s\":" << Num(f->rttHandshake >= 0 ? f->rttHandshake : NAN) << ",\"sim_end_s\":" << Num(simEnd)
          << ",\"qdisc\":\"" << qdisc << "\",\"queue_packets\":" << queuePackets
          << ",\"data_retries\":" << dataRetries << ",\"wall_s\":" << Num(wall)
          << ",\"max_rss_mib\":" << Num(ProcessMaxRssMiB());
        if (station)
        {
            o << ",\"vehicles\":" << vehicles << ",\"per_segment\":" << perSegment
              << ",\"segment\":" << (f->segment + 1) << ",\"start_s\":" << Num(f->startTime)
              << ",\"wan_delay_s\":" << Num(wanDelayMs * 1e-3)
              << ",\"drops_link_error_all\":" << g_link.linkErrDrops
              << ",\"drops_queue_all\":" << allQueueDrops;
        }
        o << "}";
        std::cout << o.str() << std::endl;
    }
    if (traceLoss)
    {
        for (auto [name, t] : {std::pair{"toward_evcc", &towardEvcc}, std::pair{"toward_secc", &towardSecc}})
        {
            std::cerr << "lost " << name;
            for (uint64_t k : t->lost)
            {
                std::cerr << " " << k;
            }
            std::cerr << "\n";
        }
    }

    Simulator::Destroy();
    return 0;
}
