// vtlab validation: ns-3 reference program for the V2G charging-cable scenario
// (Park et al. 2019, section 3).
//
//   SA --(WAN p2p 500 Mbit/s, 0.9 ms)-- SECC --(PLC p2p 10 Mbit/s, 0.9 ms)-- EVCC
//
// One TCP bulk transfer SA -> EVCC. Bursty PLC loss is modelled with
// ns3::BurstErrorModel installed as ReceiveErrorModel on the EVCC's PLC device
// (i.e. it hits the data direction SECC -> EVCC).
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
#include <limits>
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
static double
MeanLossFromBurstRate(double p)
{
    double q = 1.0 - p;
    return p * (1.0 + 0.75 * q + 0.5 * q * q + 0.25 * q * q * q);
}

static double
BurstRateFromMeanLoss(double L)
{
    if (L <= 0)
    {
        return 0.0;
    }
    if (L >= 1)
    {
        return 1.0;
    }
    double lo = 0.0;
    double hi = 1.0;
    for (int i = 0; i < 200; ++i)
    {
        double mid = 0.5 * (lo + hi);
        if (MeanLossFromBurstRate(mid) < L)
        {
            lo = mid;
        }
        else
        {
            hi = mid;
        }
    }
    return 0.5 * (lo + hi);
}

// ---------------------------------------------------------------------------
// Per-flow statistics
// ---------------------------------------------------------------------------
struct FlowStats
{
    uint32_t id{0};
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
};

static std::vector<FlowStats*> g_flows;
static uint32_t g_flowsDone = 0;

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
    double meanLoss = -1;
    double burstRate = -1;
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
    double wanDelayMs = 0.9;
    double initialSsthresh = -1;
    uint32_t scFloor = 10;
    bool printDefaults = false;
    bool checkLossModel = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("cc", "congestion control TypeId suffix (TcpNewReno, TcpIllinois, ..., V2gNewRenoSc)", cc);
    cmd.AddValue("meanLoss", "mean PLC packet loss rate L (converted to BurstErrorModel burst rate)", meanLoss);
    cmd.AddValue("burstRate", "BurstErrorModel ErrorRate p (burst-start probability) directly", burstRate);
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
    cmd.AddValue("wanDelay", "WAN delay ms", wanDelayMs);
    cmd.AddValue("scFloor", "ssthresh floor (segments) for --cc=V2gNewRenoSc", scFloor);
    cmd.AddValue("stopTime", "simulation stop time (s)", stopTime);
    cmd.AddValue("vehicles", "number of vehicles (only 1 supported)", vehicles);
    cmd.AddValue("printDefaults", "print ns-3 defaults (and the default qdisc) and exit", printDefaults);
    cmd.AddValue("checkLossModel", "draw 10^7 packets through the error model, print loss stats, exit", checkLossModel);
    cmd.Parse(argc, argv);

    NS_ABORT_MSG_IF(vehicles != 1, "only --vehicles=1 is implemented");
    NS_ABORT_MSG_IF(meanLoss >= 0 && burstRate >= 0, "give --meanLoss or --burstRate, not both");
    int sack = -1;
    int ts = -1;
    if (!ParseTriBool(sackStr, "sack", sack) || !ParseTriBool(tsStr, "timestamps", ts))
    {
        return 2;
    }

    double p = 0;
    if (burstRate >= 0)
    {
        p = burstRate;
    }
    else if (meanLoss >= 0)
    {
        p = BurstRateFromMeanLoss(meanLoss);
    }
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
    NodeContainer nodes;
    nodes.Create(3);
    Ptr<Node> sa = nodes.Get(0);
    Ptr<Node> secc = nodes.Get(1);
    Ptr<Node> evcc = nodes.Get(2);

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
    PointToPointHelper wanHelper = makeP2p(wanRateMbps, wanDelayMs);
    PointToPointHelper plcHelper = makeP2p(plcRateMbps, plcDelayMs);
    NetDeviceContainer wanDevs = wanHelper.Install(sa, secc);
    NetDeviceContainer plcDevs = plcHelper.Install(secc, evcc);

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.1.0", "255.255.255.0");
    addr.Assign(wanDevs);
    addr.SetBase("10.1.2.0", "255.255.255.0");
    Ipv4InterfaceContainer plcIf = addr.Assign(plcDevs);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    if (printDefaults)
    {
        Ptr<NetDevice> dev = plcDevs.Get(0);
        Ptr<QueueDisc> qd = secc->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(dev);
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
        for (NetDeviceContainer* dc : {&wanDevs, &plcDevs})
        {
            for (uint32_t i = 0; i < dc->GetN(); ++i)
            {
                Ptr<NetDevice> d = dc->Get(i);
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
        if (lossOn == "data" || lossOn == "both")
        {
            plcDevs.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(makeEm()));
        }
        if (lossOn == "ack" || lossOn == "both")
        {
            plcDevs.Get(0)->SetAttribute("ReceiveErrorModel", PointerValue(makeEm()));
        }
    }

    // ---------------- counters on devices / queues ----------------
    for (uint32_t i = 0; i < plcDevs.GetN(); ++i)
    {
        plcDevs.Get(i)->TraceConnectWithoutContext("PhyRxDrop",
                                                   MakeBoundCallback(&OnPhyRxDrop, i == 1));
    }
    for (NetDeviceContainer* dc : {&wanDevs, &plcDevs})
    {
        for (uint32_t i = 0; i < dc->GetN(); ++i)
        {
            Ptr<PointToPointNetDevice> d = DynamicCast<PointToPointNetDevice>(dc->Get(i));
            d->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&OnQueueDrop));
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
    {
        Ptr<PointToPointNetDevice> d = DynamicCast<PointToPointNetDevice>(plcDevs.Get(0));
        d->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnPlcPhyTx));
        d->GetQueue()->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnPlcQueueLen));
    }

    // ---------------- applications ----------------
    const uint16_t port = 50000;
    const double startTime = 0.1;
    FlowStats flow;
    flow.id = 0;
    flow.startTime = startTime;
    flow.target = bytes;

    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApps = sinkHelper.Install(evcc);
    sinkApps.Start(Seconds(0));
    flow.sink = DynamicCast<PacketSink>(sinkApps.Get(0));
    flow.sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSinkRx, &flow));

    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(plcIf.GetAddress(1), port));
    bulk.SetAttribute("MaxBytes", UintegerValue(bytes));
    bulk.SetAttribute("SendSize", UintegerValue(sendSize ? sendSize : segmentSize));
    ApplicationContainer srcApps = bulk.Install(sa);
    srcApps.Start(Seconds(startTime));
    flow.sender = DynamicCast<BulkSendApplication>(srcApps.Get(0));
    // The socket is created in StartApplication(); hook the traces right after.
    Simulator::Schedule(Seconds(startTime) + NanoSeconds(1), &ConnectSenderTraces, &flow);

    g_flows.push_back(&flow);

    Simulator::Stop(Seconds(stopTime));
    Simulator::Run();
    double simEnd = Simulator::Now().GetSeconds();

    auto wall1 = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(wall1 - wall0).count();

    for (FlowStats* f : g_flows)
    {
        double dur = (f->lastRxTime > f->startTime) ? f->lastRxTime - f->startTime : 0;
        double goodput = dur > 0 ? double(f->rxBytes) * 8.0 / dur : 0;
        std::ostringstream o;
        o << "{\"type\":\"flow\",\"cc\":\"" << JsonEsc(cc) << "\",\"run\":" << run
          << ",\"seed\":" << seed << ",\"flow\":" << f->id << ",\"bytes\":" << f->target
          << ",\"bytes_received\":" << f->rxBytes << ",\"complete\":" << (f->done ? "true" : "false")
          << ",\"mean_loss\":" << Num(L) << ",\"burst_rate\":" << Num(p) << ",\"loss_on\":\""
          << lossOn << "\",\"goodput_bps\":" << Num(goodput) << ",\"completion_s\":" << Num(dur)
          << ",\"retransmissions\":" << f->retxSegs
          << ",\"retransmissions_trace\":" << f->retxTrace << ",\"rto_count\":" << f->lossEpisodes
          << ",\"rto_expiries\":" << f->rtoExpiries << ",\"fast_recoveries\":" << f->recoveries
          << ",\"drops_link_error\":" << g_link.linkErrDrops
          << ",\"drops_link_error_data_dir\":" << g_link.linkErrDropsEvcc
          << ",\"drops_link_error_ack_dir\":" << g_link.linkErrDropsSecc
          << ",\"drops_queue\":" << (g_link.queueDrops + g_link.tcDrops + g_link.qdiscDrops)
          << ",\"drops_queue_device\":" << g_link.queueDrops << ",\"drops_tc\":" << g_link.tcDrops
          << ",\"drops_qdisc\":" << g_link.qdiscDrops << ",\"packets_sent_data\":" << f->dataSegs
          << ",\"bytes_sent_data\":" << f->dataBytes << ",\"plc_tx_packets\":" << g_link.plcTxPackets
          << ",\"plc_tx_bytes\":" << g_link.plcTxBytes
          << ",\"plc_max_packet_bytes\":" << g_link.plcMaxPktBytes
          << ",\"plc_max_queue_packets\":" << g_link.plcMaxQueue
          << ",\"max_cwnd_bytes\":" << f->maxCwnd << ",\"rtt_samples\":" << f->rttN
          << ",\"rtt_min_s\":" << Num(f->rttN ? f->rttMin : NAN)
          << ",\"rtt_mean_s\":" << Num(f->rttN ? f->rttSum / f->rttN : NAN)
          << ",\"rtt_max_s\":" << Num(f->rttN ? f->rttMax : NAN)
          << ",\"srtt_final_s\":" << Num(f->lastSrtt)
          << ",\"rtt_handshake_s\":" << Num(f->rttHandshake >= 0 ? f->rttHandshake : NAN) << ",\"sim_end_s\":" << Num(simEnd)
          << ",\"qdisc\":\"" << qdisc << "\",\"queue_packets\":" << queuePackets
          << ",\"data_retries\":" << dataRetries << ",\"wall_s\":" << Num(wall)
          << ",\"max_rss_mib\":" << Num(ProcessMaxRssMiB()) << "}";
        std::cout << o.str() << std::endl;
    }

    Simulator::Destroy();
    return 0;
}
