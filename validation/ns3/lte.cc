// vtlab validation: ns-3 LTE reference for vtlab's trace-driven cellular link.
//
//   remote host --(p2p 10 Gbit/s, --coreDelay one way)-- PGW/SGW
//       --(S1-U p2p, ns-3 default: 10 Gbit/s, 0 ms)-- eNB ~~(LTE, 10 MHz)~~ UE
//
// One eNB, one UE, EPC (PointToPointEpcHelper), ideal RRC. 50 resource blocks
// downlink and uplink, default EARFCNs (DL 100 = 2120 MHz, UL 18100 = 1930 MHz),
// SISO (transmission mode 1), proportional-fair scheduler (ns3::PfFfMacScheduler),
// no fading; the pathloss model is --pathloss (default COST-231 Hata).
// The UE starts --distance metres from the eNB and, from the flow start on, moves
// radially away from it at --speed m/s (ConstantVelocityMobilityModel).
//
// Traffic: one BulkSend TCP flow (--app=tcp) or one saturating constant-rate UDP
// flow (--app=udp) of --duration seconds, remote host -> UE (--direction=dl) or
// UE -> remote host (--direction=ul), starting at --start seconds. Before the flow,
// --pings small UDP echoes measure the base RTT of the path.
//
// Output (stdout): one JSON object per line, each with a "kind":
//   config  the parameters and what they map to
//   ping    RTTs of the echo probes (ms)
//   chan    channel samples: time since flow start, UE distance, RSRP, SINR
//   tb      per-ms bytes of correctly decoded transport blocks in the flow's direction
//           (ms since the flow start; only non-zero ms), and the MCS of those TBs
//   rlc     per-ms bytes of RLC PDUs received in the flow's direction (no padding)
//   rtt     (--rttSeries) every RTT sample at the sender: ms since flow start, RTT ms
//   result  goodput, RTT statistics, retransmissions, TB/HARQ counts, wall time
// With --tbFile=PATH the tb and rlc lines go to that file instead of stdout.
//
// Written for vtlab against the public ns-3.44 API.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/lte-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

using namespace ns3;

namespace
{

// -- JSON helpers --------------------------------------------------------------------

std::string
Num(double x)
{
    if (!std::isfinite(x))
    {
        return "null";
    }
    std::ostringstream o;
    o.precision(12);
    o << x;
    return o.str();
}

std::string
Str(const std::string& s)
{
    std::string out = "\"";
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

template <typename T>
std::string
Array(const std::vector<T>& v)
{
    std::ostringstream o;
    o << "[";
    for (std::size_t i = 0; i < v.size(); ++i)
    {
        if (i)
        {
            o << ",";
        }
        if constexpr (std::is_floating_point_v<T>)
        {
            o << Num(v[i]);
        }
        else
        {
            o << +v[i];
        }
    }
    o << "]";
    return o.str();
}

// Linear interpolation between closest ranks (numpy's default percentile).
double
Percentile(std::vector<double> v, double q)
{
    if (v.empty())
    {
        return std::numeric_limits<double>::quiet_NaN();
    }
    std::sort(v.begin(), v.end());
    double pos = q / 100.0 * (v.size() - 1);
    auto lo = static_cast<std::size_t>(std::floor(pos));
    auto hi = static_cast<std::size_t>(std::ceil(pos));
    return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

// -- state filled by the trace callbacks -------------------------------------------------

Time g_start;    // flow start
Time g_end;      // flow end (= simulation end)
bool g_downlink; // flow direction

// Per-ms accumulator; index = ms since the flow start.
struct PerMs
{
    std::map<int64_t, uint64_t> bytes;
    std::map<int64_t, uint32_t> mcs; // MCS of the last TB counted in that ms
};

struct Stats
{
    // PHY: transport blocks of this UE in the flow direction, during the flow
    PerMs tb;
    uint64_t tbRx{0};     // TB receptions (every HARQ attempt)
    uint64_t tbOk{0};     // correctly decoded
    uint64_t tbFail{0};   // failed attempts (HARQ retransmits them)
    uint64_t tbOkRetx{0}; // decoded on a HARQ retransmission (ndi == 0 / rv > 0)
    uint64_t tbBytesOk{0};
    uint64_t tbBeforeStart{0}; // correct TBs before the flow start (pings), not counted
    // RLC PDUs received in the flow direction, during the flow
    PerMs rlc;
    uint64_t rlcRxBytes{0};
    uint64_t rlcTxDrops{0};     // SDUs dropped by the sending RLC (buffer full)
    uint64_t rlcTxDropBytes{0};
    bool rlcConnected{false};
    // sink
    uint64_t rxBytes{0};
    Time firstRx{Seconds(-1)};
    Time lastRx{Seconds(-1)};
    // TCP sender
    std::vector<double> rtt;   // LastRTT samples in seconds (data segments only)
    std::vector<double> rttT;  // their times, seconds since flow start
    double rttHandshake{-1};
    uint64_t dataSegs{0};
    uint64_t dataBytes{0};
    uint64_t retxTrace{0};
    uint64_t lossEpisodes{0};
    uint64_t recoveries{0};
    uint32_t maxCwnd{0};
    // pings
    std::vector<Time> pingTx;
    std::vector<double> pingRtt; // ms
    // channel samples
    double lastRsrp{std::numeric_limits<double>::quiet_NaN()};
    double lastSinr{std::numeric_limits<double>::quiet_NaN()};
    std::vector<double> chT, chDist, chRsrp, chSinr;
};

Stats g;

// Whole milliseconds from the flow start to t.
int64_t
MsOf(Time t)
{
    return static_cast<int64_t>(std::floor((t - g_start).GetSeconds() * 1000.0 + 1e-9));
}

int64_t
MsSinceStart()
{
    return MsOf(Simulator::Now());
}

double
Min(const std::vector<double>& v)
{
    return v.empty() ? NAN : *std::min_element(v.begin(), v.end());
}

double
Max(const std::vector<double>& v)
{
    return v.empty() ? NAN : *std::max_element(v.begin(), v.end());
}

bool
InFlow()
{
    return Simulator::Now() >= g_start && Simulator::Now() < g_end;
}

void
OnPhyReception(bool ul, PhyReceptionStatParameters p)
{
    if (!InFlow())
    {
        if (p.m_correctness && Simulator::Now() < g_start)
        {
            g.tbBeforeStart++;
        }
        return;
    }
    g.tbRx++;
    if (!p.m_correctness)
    {
        g.tbFail++;
        return;
    }
    g.tbOk++;
    // DL: ndi == 0 marks a retransmission. UL: the trace replaces rv by the number of
    // earlier attempts of this HARQ process.
    if (ul ? p.m_rv > 0 : p.m_ndi == 0)
    {
        g.tbOkRetx++;
    }
    int64_t ms = MsSinceStart();
    g.tb.bytes[ms] += p.m_size;
    g.tb.mcs[ms] = p.m_mcs;
    g.tbBytesOk += p.m_size;
}

void
OnRlcRxPdu(uint16_t, uint8_t, uint32_t bytes, uint64_t)
{
    if (!InFlow())
    {
        return;
    }
    g.rlc.bytes[MsSinceStart()] += bytes;
    g.rlcRxBytes += bytes;
}

void
OnRlcTxDrop(Ptr<const Packet> p)
{
    g.rlcTxDrops++;
    g.rlcTxDropBytes += p->GetSize();
}

void
OnSinkRx(Ptr<const Packet> p, const Address&)
{
    if (g.firstRx.IsNegative())
    {
        g.firstRx = Simulator::Now();
    }
    g.lastRx = Simulator::Now();
    g.rxBytes += p->GetSize();
}

void
OnTx(Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() > 0)
    {
        g.dataSegs++;
        g.dataBytes += p->GetSize();
    }
}

void
OnRetx(Ptr<const Packet>,
       const TcpHeader&,
       const Address&,
       const Address&,
       Ptr<const TcpSocketBase>)
{
    g.retxTrace++;
}

void
OnCongState(TcpSocketState::TcpCongState_t oldS, TcpSocketState::TcpCongState_t newS)
{
    if (newS == TcpSocketState::CA_LOSS && oldS != TcpSocketState::CA_LOSS)
    {
        g.lossEpisodes++;
    }
    if (newS == TcpSocketState::CA_RECOVERY && oldS != TcpSocketState::CA_RECOVERY)
    {
        g.recoveries++;
    }
}

void
OnLastRtt(Time, Time v)
{
    double s = v.GetSeconds();
    if (s <= 0)
    {
        return;
    }
    if (g.dataSegs == 0)
    {
        g.rttHandshake = s; // sample of the SYN/SYN-ACK exchange
        return;
    }
    g.rtt.push_back(s);
    g.rttT.push_back((Simulator::Now() - g_start).GetSeconds());
}

void
OnCwnd(uint32_t, uint32_t v)
{
    g.maxCwnd = std::max(g.maxCwnd, v);
}

void
ConnectSenderTraces(Ptr<BulkSendApplication> app)
{
    Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(app->GetSocket());
    NS_ABORT_MSG_IF(!s, "the BulkSend socket is not a TcpSocketBase");
    s->TraceConnectWithoutContext("Tx", MakeCallback(&OnTx));
    s->TraceConnectWithoutContext("Retransmission", MakeCallback(&OnRetx));
    s->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState));
    s->TraceConnectWithoutContext("LastRTT", MakeCallback(&OnLastRtt));
    s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&OnCwnd));
}

void
OnPingTx(Ptr<const Packet>)
{
    g.pingTx.push_back(Simulator::Now());
}

void
OnPingRx(Ptr<const Packet>)
{
    if (!g.pingTx.empty())
    {
        g.pingRtt.push_back((Simulator::Now() - g.pingTx.back()).GetSeconds() * 1000.0);
    }
}

void
OnRsrpSinr(uint16_t, uint16_t, double rsrp, double sinr, uint8_t)
{
    g.lastRsrp = rsrp; // W per resource element
    g.lastSinr = sinr; // linear
}

void
SampleChannel(Ptr<MobilityModel> ue, Ptr<MobilityModel> enb, Time period)
{
    g.chT.push_back((Simulator::Now() - g_start).GetSeconds());
    g.chDist.push_back(ue->GetDistanceFrom(enb));
    g.chRsrp.push_back(10 * std::log10(g.lastRsrp) + 30);
    g.chSinr.push_back(10 * std::log10(g.lastSinr));
    if (Simulator::Now() + period < g_end)
    {
        Simulator::Schedule(period, &SampleChannel, ue, enb, period);
    }
}

// The RLC entities exist only once the default bearer is set up: connect then.
void
ConnectRlcTraces()
{
    // receiving side of the flow direction: RxPDU; sending side: TxDrop
    std::string ue = "/NodeList/*/DeviceList/*/$ns3::LteUeNetDevice/LteUeRrc/"
                     "DataRadioBearerMap/*/LteRlc/";
    std::string enb = "/NodeList/*/DeviceList/*/$ns3::LteEnbNetDevice/LteEnbRrc/UeMap/*/"
                      "DataRadioBearerMap/*/LteRlc/";
    const std::string& rx = g_downlink ? ue : enb;
    const std::string& tx = g_downlink ? enb : ue;
    bool a = Config::ConnectWithoutContextFailSafe(rx + "RxPDU", MakeCallback(&OnRlcRxPdu));
    bool b = Config::ConnectWithoutContextFailSafe(tx + "TxDrop", MakeCallback(&OnRlcTxDrop));
    NS_ABORT_MSG_IF(!a || !b, "the data radio bearer is not set up by the flow start "
                              "(RLC traces not found); increase --start");
    g.rlcConnected = true;
}

void
SetVelocity(Ptr<ConstantVelocityMobilityModel> m, Vector v)
{
    m->SetVelocity(v);
}

void
PrintPerMs(std::ostream& out, const char* kind, const PerMs& pm, bool withMcs)
{
    std::vector<int64_t> ms;
    std::vector<uint64_t> bytes;
    std::vector<uint32_t> mcs;
    for (const auto& [k, v] : pm.bytes)
    {
        ms.push_back(k);
        bytes.push_back(v);
        if (withMcs)
        {
            mcs.push_back(pm.mcs.at(k));
        }
    }
    out << "{\"kind\":\"" << kind << "\",\"ms\":" << Array(ms) << ",\"bytes\":" << Array(bytes);
    if (withMcs)
    {
        out << ",\"mcs\":" << Array(mcs);
    }
    out << "}" << std::endl;
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string direction = "dl";
    std::string app = "tcp";
    std::string cc = "TcpCubic";
    std::string rlc = "um";
    std::string pathloss = "ns3::Cost231PropagationLossModel";
    std::string tbFile;
    double duration = 12.0;   // s
    double start = 1.0;       // s
    double distance = 50.0;   // m
    double speed = 0.0;       // m/s, radially away from the eNB
    double coreDelay = 32.0;  // ms, one way, remote host <-> PGW (base RTT ~80 ms)
    double enbTxPower = 30.0; // dBm (ns-3 default)
    double udpRate = 100.0;   // Mbit/s, --app=udp
    uint32_t rlcBuffer = 10240;
    uint32_t segmentSize = 1448;
    uint32_t sndBuf = 4 * 1024 * 1024;
    uint32_t rcvBuf = 4 * 1024 * 1024;
    uint32_t bandwidthRb = 50;
    uint32_t pings = 5;
    uint32_t run = 1;
    uint32_t seed = 1;
    double chanPeriod = 100.0; // ms, 0 = no channel samples
    bool rttSeries = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("direction", "dl (remote host -> UE) | ul (UE -> remote host)", direction);
    cmd.AddValue("app", "tcp (BulkSend) | udp (saturating constant-rate UDP)", app);
    cmd.AddValue("cc", "TCP congestion control, ns3::<cc>", cc);
    cmd.AddValue("rlc", "um | am (LteEnbRrc::EpsBearerToRlcMapping)", rlc);
    cmd.AddValue("rlcBuffer",
                 "RLC transmit buffer, bytes (LteRlcUm/LteRlcAm::MaxTxBufferSize)",
                 rlcBuffer);
    cmd.AddValue("duration", "flow duration, s", duration);
    cmd.AddValue("start", "flow start, s (the UE attaches and the pings run before)", start);
    cmd.AddValue("distance", "UE distance from the eNB at the flow start, m", distance);
    cmd.AddValue("speed", "UE speed radially away from the eNB from the flow start on, m/s", speed);
    cmd.AddValue("coreDelay", "one-way delay of the remote host <-> PGW link, ms", coreDelay);
    cmd.AddValue("pathloss", "propagation loss model TypeId", pathloss);
    cmd.AddValue("enbTxPower", "eNB transmit power, dBm", enbTxPower);
    cmd.AddValue("bandwidth", "resource blocks, DL and UL", bandwidthRb);
    cmd.AddValue("segmentSize", "TCP segment size, bytes", segmentSize);
    cmd.AddValue("sndBuf", "TCP send buffer, bytes", sndBuf);
    cmd.AddValue("rcvBuf", "TCP receive buffer, bytes", rcvBuf);
    cmd.AddValue("udpRate", "UDP sending rate with --app=udp, Mbit/s", udpRate);
    cmd.AddValue("pings", "UDP echo probes before the flow (base RTT)", pings);
    cmd.AddValue("chanPeriod", "channel sample period, ms (0: none)", chanPeriod);
    cmd.AddValue("rttSeries", "print every RTT sample", rttSeries);
    cmd.AddValue("tbFile", "write the tb and rlc lines to this file instead of stdout", tbFile);
    cmd.AddValue("run", "RngRun", run);
    cmd.AddValue("seed", "RngSeed", seed);
    cmd.Parse(argc, argv);

    NS_ABORT_MSG_IF(direction != "dl" && direction != "ul", "bad --direction " << direction);
    NS_ABORT_MSG_IF(app != "tcp" && app != "udp", "bad --app " << app);
    NS_ABORT_MSG_IF(rlc != "um" && rlc != "am", "bad --rlc " << rlc);
    NS_ABORT_MSG_IF(duration <= 0 || start <= 0, "--duration and --start must be positive");
    g_downlink = (direction == "dl");
    g_start = Seconds(start);
    g_end = Seconds(start + duration);

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    // -- defaults ---------------------------------------------------------------------
    auto rlcMode = rlc == "um" ? LteEnbRrc::RLC_UM_ALWAYS : LteEnbRrc::RLC_AM_ALWAYS;
    Config::SetDefault("ns3::LteEnbRrc::EpsBearerToRlcMapping", EnumValue(rlcMode));
    // Both ends of the bearer (eNB and UE) take these.
    Config::SetDefault("ns3::LteRlcUm::MaxTxBufferSize", UintegerValue(rlcBuffer));
    Config::SetDefault("ns3::LteRlcAm::MaxTxBufferSize", UintegerValue(rlcBuffer));
    // In ns-3.44 the UM "PDCP discarding" only fires the TxDrop trace for SDUs whose
    // head-of-line delay exceeds the bearer's delay budget, and then queues them anyway.
    // Off, TxDrop counts only real drops (buffer full); the queueing is the same.
    Config::SetDefault("ns3::LteRlcUm::EnablePdcpDiscarding", BooleanValue(false));
    Config::SetDefault("ns3::LteEnbPhy::TxPower", DoubleValue(enbTxPower));

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::" + cc));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentSize));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBuf));

    // -- LTE + EPC --------------------------------------------------------------------
    Ptr<LteHelper> lte = CreateObject<LteHelper>();
    Ptr<PointToPointEpcHelper> epc = CreateObject<PointToPointEpcHelper>();
    lte->SetEpcHelper(epc);
    lte->SetSchedulerType("ns3::PfFfMacScheduler");
    lte->SetAttribute("PathlossModel", StringValue(pathloss));
    lte->SetEnbDeviceAttribute("DlBandwidth", UintegerValue(bandwidthRb));
    lte->SetEnbDeviceAttribute("UlBandwidth", UintegerValue(bandwidthRb));

    Ptr<Node> pgw = epc->GetPgwNode();
    NodeContainer remote;
    remote.Create(1);
    Ptr<Node> remoteHost = remote.Get(0);
    InternetStackHelper inet;
    inet.Install(remote);

    PointToPointHelper core;
    core.SetDeviceAttribute("DataRate", DataRateValue(DataRate("10Gb/s")));
    core.SetDeviceAttribute("Mtu", UintegerValue(1500));
    core.SetChannelAttribute("Delay", TimeValue(MicroSeconds(std::llround(coreDelay * 1000))));
    NetDeviceContainer coreDevs = core.Install(pgw, remoteHost);
    Ipv4AddressHelper addr;
    addr.SetBase("1.0.0.0", "255.0.0.0");
    Ipv4InterfaceContainer coreIfs = addr.Assign(coreDevs);
    Ipv4Address remoteAddr = coreIfs.GetAddress(1);

    Ipv4StaticRoutingHelper srt;
    srt.GetStaticRouting(remoteHost->GetObject<Ipv4>())
        ->AddNetworkRouteTo(Ipv4Address("7.0.0.0"), Ipv4Mask("255.0.0.0"), 1);

    NodeContainer enbs;
    NodeContainer ues;
    enbs.Create(1);
    ues.Create(1);

    MobilityHelper fixed;
    fixed.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    fixed.Install(enbs);
    enbs.Get(0)->GetObject<MobilityModel>()->SetPosition(Vector(0, 0, 0));
    MobilityHelper moving;
    moving.SetMobilityModel("ns3::ConstantVelocityMobilityModel");
    moving.Install(ues);
    auto ueMob = ues.Get(0)->GetObject<ConstantVelocityMobilityModel>();
    ueMob->SetPosition(Vector(distance, 0, 0));
    ueMob->SetVelocity(Vector(0, 0, 0));
    if (speed != 0)
    {
        Simulator::Schedule(g_start, &SetVelocity, ueMob, Vector(speed, 0, 0));
    }

    NetDeviceContainer enbDevs = lte->InstallEnbDevice(enbs);
    NetDeviceContainer ueDevs = lte->InstallUeDevice(ues);
    inet.Install(ues);
    Ipv4InterfaceContainer ueIfs = epc->AssignUeIpv4Address(ueDevs);
    Ipv4Address ueAddr = ueIfs.GetAddress(0);
    srt.GetStaticRouting(ues.Get(0)->GetObject<Ipv4>())
        ->SetDefaultRoute(epc->GetUeDefaultGatewayAddress(), 1);
    lte->Attach(ueDevs, enbDevs.Get(0));

    // -- traces -----------------------------------------------------------------------
    auto ueDev = DynamicCast<LteUeNetDevice>(ueDevs.Get(0));
    auto enbDev = DynamicCast<LteEnbNetDevice>(enbDevs.Get(0));
    if (g_downlink)
    {
        ueDev->GetPhy()->GetDlSpectrumPhy()->TraceConnectWithoutContext(
            "DlPhyReception",
            MakeBoundCallback(&OnPhyReception, false));
    }
    else
    {
        enbDev->GetPhy()->GetUlSpectrumPhy()->TraceConnectWithoutContext(
            "UlPhyReception",
            MakeBoundCallback(&OnPhyReception, true));
    }
    ueDev->GetPhy()->TraceConnectWithoutContext("ReportCurrentCellRsrpSinr",
                                                MakeCallback(&OnRsrpSinr));
    Simulator::Schedule(g_start - MilliSeconds(1), &ConnectRlcTraces);
    if (chanPeriod > 0)
    {
        Time period = MicroSeconds(std::llround(chanPeriod * 1000));
        Simulator::Schedule(g_start,
                            &SampleChannel,
                            ueMob->GetObject<MobilityModel>(),
                            enbs.Get(0)->GetObject<MobilityModel>(),
                            period);
    }

    // -- base-RTT probes: UDP echo remote host -> UE -> remote host ---------------------
    if (pings > 0)
    {
        const uint16_t echoPort = 7;
        UdpEchoServerHelper server(echoPort);
        ApplicationContainer s = server.Install(ues.Get(0));
        s.Start(Seconds(0.1));
        UdpEchoClientHelper client(ueAddr, echoPort);
        client.SetAttribute("MaxPackets", UintegerValue(pings));
        client.SetAttribute("Interval", TimeValue(MilliSeconds(150)));
        client.SetAttribute("PacketSize", UintegerValue(32));
        ApplicationContainer c = client.Install(remoteHost);
        Time first = Seconds(0.2);
        NS_ABORT_MSG_IF(first + MilliSeconds(150) * pings > g_start,
                        "--start leaves no room for --pings probes (150 ms apart from 0.2 s)");
        c.Start(first);
        c.Get(0)->TraceConnectWithoutContext("Tx", MakeCallback(&OnPingTx));
        c.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnPingRx));
    }

    // -- the flow ---------------------------------------------------------------------
    Ptr<Node> sender = g_downlink ? remoteHost : ues.Get(0);
    Ptr<Node> receiver = g_downlink ? ues.Get(0) : remoteHost;
    Ipv4Address dst = g_downlink ? ueAddr : remoteAddr;
    const uint16_t port = 5000;
    std::string factory = app == "tcp" ? "ns3::TcpSocketFactory" : "ns3::UdpSocketFactory";
    PacketSinkHelper sinkHelper(factory, InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApps = sinkHelper.Install(receiver);
    sinkApps.Start(Seconds(0.05));
    sinkApps.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnSinkRx));
    if (app == "tcp")
    {
        BulkSendHelper bulk(factory, InetSocketAddress(dst, port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(segmentSize));
        ApplicationContainer a = bulk.Install(sender);
        a.Start(g_start);
        a.Stop(g_end);
        Simulator::Schedule(g_start + NanoSeconds(1),
                            &ConnectSenderTraces,
                            DynamicCast<BulkSendApplication>(a.Get(0)));
    }
    else
    {
        // 1472-byte UDP payload = 1500-byte IP packets
        OnOffHelper onoff(factory, InetSocketAddress(dst, port));
        onoff.SetConstantRate(DataRate(static_cast<uint64_t>(udpRate * 1e6)), 1472);
        ApplicationContainer a = onoff.Install(sender);
        a.Start(g_start);
        a.Stop(g_end);
    }

    std::ostringstream cfg;
    cfg << "{\"kind\":\"config\",\"ns3\":\"3.44\",\"direction\":" << Str(direction)
        << ",\"app\":" << Str(app) << ",\"cc\":" << Str(app == "tcp" ? cc : "")
        << ",\"rlc\":" << Str(rlc)
        << ",\"rlc_buffer_bytes\":" << rlcBuffer << ",\"duration_s\":" << Num(duration)
        << ",\"start_s\":" << Num(start) << ",\"distance_m\":" << Num(distance)
        << ",\"speed_mps\":" << Num(speed)
        << ",\"end_distance_m\":" << Num(distance + speed * duration)
        << ",\"core_delay_ms\":" << Num(coreDelay) << ",\"pathloss\":" << Str(pathloss)
        << ",\"enb_tx_power_dbm\":" << Num(enbTxPower) << ",\"bandwidth_rb\":" << bandwidthRb
        << ",\"dl_earfcn\":" << enbDev->GetDlEarfcn() << ",\"ul_earfcn\":" << enbDev->GetUlEarfcn()
        << ",\"scheduler\":\"ns3::PfFfMacScheduler\",\"segment_size\":" << segmentSize
        << ",\"snd_buf\":" << sndBuf << ",\"rcv_buf\":" << rcvBuf
        << ",\"udp_rate_mbps\":" << Num(app == "udp" ? udpRate : NAN) << ",\"run\":" << run
        << ",\"seed\":" << seed << "}";
    std::cout << cfg.str() << std::endl;

    Simulator::Stop(g_end);
    auto wall0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto wall1 = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(wall1 - wall0).count();

    // -- output -----------------------------------------------------------------------
    std::cout << "{\"kind\":\"ping\",\"rtt_ms\":" << Array(g.pingRtt) << "}" << std::endl;
    if (chanPeriod > 0)
    {
        std::cout << "{\"kind\":\"chan\",\"t_s\":" << Array(g.chT)
                  << ",\"dist_m\":" << Array(g.chDist) << ",\"rsrp_dbm\":" << Array(g.chRsrp)
                  << ",\"sinr_db\":" << Array(g.chSinr) << "}" << std::endl;
    }
    {
        std::ofstream f;
        if (!tbFile.empty())
        {
            f.open(tbFile);
            NS_ABORT_MSG_IF(!f, "cannot write --tbFile " << tbFile);
        }
        std::ostream& out = tbFile.empty() ? std::cout : f;
        PrintPerMs(out, "tb", g.tb, true);
        PrintPerMs(out, "rlc", g.rlc, false);
    }
    if (rttSeries)
    {
        std::vector<double> ms;
        std::vector<double> rttMs;
        for (std::size_t i = 0; i < g.rtt.size(); ++i)
        {
            ms.push_back(g.rttT[i] * 1000);
            rttMs.push_back(g.rtt[i] * 1000);
        }
        std::cout << "{\"kind\":\"rtt\",\"t_ms\":" << Array(ms) << ",\"rtt_ms\":" << Array(rttMs)
                  << "}" << std::endl;
    }

    bool haveRx = !g.firstRx.IsNegative();
    double span = haveRx ? (g.lastRx - g.firstRx).GetSeconds() : 0.0;
    // TB bytes in the whole ms from the first to the last byte at the sink
    uint64_t tbWindow = 0;
    double windowS = 0;
    if (haveRx)
    {
        int64_t a = MsOf(g.firstRx);
        int64_t b = MsOf(g.lastRx);
        for (auto it = g.tb.bytes.lower_bound(a); it != g.tb.bytes.end() && it->first <= b; ++it)
        {
            tbWindow += it->second;
        }
        windowS = (b - a + 1) / 1000.0;
    }
    std::vector<double> rttMs;
    for (double s : g.rtt)
    {
        rttMs.push_back(s * 1000);
    }
    double rttMean = NAN;
    if (!rttMs.empty())
    {
        double sum = 0;
        for (double r : rttMs)
        {
            sum += r;
        }
        rttMean = sum / rttMs.size();
    }

    std::ostringstream o;
    o << "{\"kind\":\"result\",\"rx_bytes\":" << g.rxBytes
      << ",\"first_rx_s\":" << Num(haveRx ? (g.firstRx - g_start).GetSeconds() : NAN)
      << ",\"last_rx_s\":" << Num(haveRx ? (g.lastRx - g_start).GetSeconds() : NAN)
      << ",\"goodput_bps\":" << Num(span > 0 ? g.rxBytes * 8.0 / span : NAN)
      << ",\"goodput_duration_bps\":" << Num(g.rxBytes * 8.0 / duration)
      << ",\"tb_bytes\":" << g.tbBytesOk << ",\"tb_bps\":" << Num(g.tbBytesOk * 8.0 / duration)
      << ",\"tb_window_bytes\":" << tbWindow << ",\"tb_window_s\":" << Num(windowS)
      << ",\"tb_window_bps\":" << Num(windowS > 0 ? tbWindow * 8.0 / windowS : NAN)
      << ",\"tb_rx\":" << g.tbRx << ",\"tb_ok\":" << g.tbOk << ",\"tb_fail\":" << g.tbFail
      << ",\"tb_ok_retx\":" << g.tbOkRetx << ",\"tb_before_start\":" << g.tbBeforeStart
      << ",\"rlc_rx_bytes\":" << g.rlcRxBytes
      << ",\"rlc_bps\":" << Num(g.rlcRxBytes * 8.0 / duration)
      << ",\"rlc_tx_drops\":" << g.rlcTxDrops << ",\"rlc_tx_drop_bytes\":" << g.rlcTxDropBytes
      << ",\"base_rtt_ms\":" << Num(Min(g.pingRtt)) << ",\"rtt_count\":" << rttMs.size()
      << ",\"rtt_mean_ms\":" << Num(rttMean) << ",\"rtt_median_ms\":" << Num(Percentile(rttMs, 50))
      << ",\"rtt_p95_ms\":" << Num(Percentile(rttMs, 95))
      << ",\"rtt_min_ms\":" << Num(Min(rttMs)) << ",\"rtt_max_ms\":" << Num(Max(rttMs))
      << ",\"rtt_handshake_ms\":" << Num(g.rttHandshake > 0 ? g.rttHandshake * 1000 : NAN)
      << ",\"data_segments\":" << g.dataSegs << ",\"data_bytes_sent\":" << g.dataBytes
      << ",\"retransmissions\":" << g.retxTrace << ",\"loss_episodes\":" << g.lossEpisodes
      << ",\"recoveries\":" << g.recoveries << ",\"max_cwnd_bytes\":" << g.maxCwnd
      << ",\"wall_s\":" << Num(wall) << "}";
    std::cout << o.str() << std::endl;

    Simulator::Destroy();
    return 0;
}
