// vtlab validation: ns-3 reference program for an 802.11 vehicular chain.
//
//   v0 ~~ v1 ~~ v2 ~~ ... ~~ vH        (--hops H, --spacing m apart on the x axis)
//
// H + 1 vehicles with one 802.11b ad hoc interface each (YansWifiPhy on one
// YansWifiChannel, non-QoS DCF, 1 Mbit/s DSSS), all moving at --speed m/s in +x with
// ConstantVelocityMobilityModel, so their relative positions never change. One TCP
// bulk transfer v0 -> vH over static routes along the chain (every node forwards to its
// neighbour toward the destination; the TCP ACKs take the same hops back). No queue
// disc: IP hands packets straight to the MAC queue (WifiMacQueue, drop-tail, --ifq
// packets). ARP caches are filled statically before the start, so no ARP frame is sent.
//
// The radio is set up to reproduce ns-2's defaults (TwoRayGround at 914 MHz, 1.5 m
// antennas, Pt = 0.28183815 W): a frame is received up to 250 m (ns-2 RXThresh_) and
// sensed up to 550 m (ns-2 CSThresh_). ns-3.44 has no single attribute for either; see
// validation/ns3/README-wifi.md ("Receive and carrier-sense range") for the mapping:
//   --csThresh -> WifiPhy::RxSensitivity (YansWifiChannel discards weaker signals
//                 entirely; the attribute is set 0.41 dB lower because the channel
//                 scales it to the 22 MHz DSSS width) and WifiPhy::CcaEdThreshold
//   --rxThresh -> ThresholdPreambleDetectionModel::MinimumRssi (weaker frames are not
//                 received, only sensed as energy)
//
// Output (stdout): one JSON object per line, each with a "kind":
//   config  every argument, the ns-3 attributes actually in force (read back from the
//           installed objects), the received power at 200/400/600 m and what the PHY
//           does with a frame at each of these distances
//   result  goodput, TCP counters, MAC/PHY counters summed and per node, event count,
//           wall time of Simulator::Run()
//
// Written for vtlab against the public ns-3.44 API.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/propagation-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/wifi-module.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
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
    o.precision(10);
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

template <typename V>
std::string
CountMap(const std::map<std::string, V>& m)
{
    std::ostringstream o;
    o << "{";
    bool first = true;
    for (const auto& [k, v] : m)
    {
        o << (first ? "" : ",") << Str(k) << ":" << v;
        first = false;
    }
    o << "}";
    return o.str();
}

std::string
Us(Time t)
{
    return Num(t.GetNanoSeconds() / 1000.0);
}

// -- counters ------------------------------------------------------------------------

// MAC/PHY counters of one node (one WifiNetDevice).
struct NodeCounters
{
    // PHY transmissions (PhyTxPsduBegin), by frame type
    uint64_t dataTx{0};    // data frames, every attempt
    uint64_t dataTxFwd{0}; // ... addressed to the next node toward vH (TCP data)
    uint64_t dataTxRev{0}; // ... addressed to the next node toward v0 (TCP ACKs)
    uint64_t dataTxRetry{0}; // ... with the Retry bit set (retransmissions)
    uint64_t rtsTx{0};
    uint64_t ctsTx{0};
    uint64_t ackTx{0};
    uint64_t bcastTx{0}; // group-addressed frames (ARP would show up here)
    uint64_t otherTx{0};
    // WifiRemoteStationManager traces
    uint64_t dataFailed{0};      // MacTxDataFailed: no ACK after a data frame
    uint64_t rtsFailed{0};       // MacTxRtsFailed: no CTS after an RTS
    uint64_t finalDataFailed{0}; // MacTxFinalDataFailed: dropped at an ACK timeout
    uint64_t finalRtsFailed{0};  // MacTxFinalRtsFailed: dropped at a CTS timeout
    // WifiMac DroppedMpdu, by reason
    uint64_t dropQueueFull{0}; // WIFI_MAC_DROP_FAILED_ENQUEUE (MAC queue full)
    uint64_t dropExpired{0};   // WIFI_MAC_DROP_EXPIRED_LIFETIME (WifiMacQueue::MaxDelay)
    uint64_t dropRetry{0};     // WIFI_MAC_DROP_REACHED_RETRY_LIMIT
    uint64_t dropRetryFwd{0};  // ... of frames toward vH (TCP data)
    uint64_t dropRetryRev{0};  // ... of frames toward v0 (TCP ACKs)
    uint64_t dropOther{0};
    uint64_t macTxDrop{0}; // WifiMac MacTxDrop (not expected)
    // MAC queue admission: packets handed to the MAC (WifiMac MacTx) and MPDUs stored
    // (WifiMacQueue Enqueue). ns-3.44 fires no trace when the full queue refuses a new
    // MPDU (WifiMacQueue::DoEnqueue returns false without DropBeforeEnqueue when the
    // FcfsWifiQueueScheduler picks the new MPDU), so tail drops = macTx - enqueued.
    uint64_t macTx{0};
    uint64_t enqueued{0};
    // PHY reception
    uint64_t rxPayloadErrors{0}; // WifiPhyStateHelper RxError: payload failed (-> EIFS)
    std::map<std::string, uint64_t> rxDrops; // PhyRxDrop, by WifiPhyRxfailureReason
    uint64_t rxOk{0};                        // WifiPhyStateHelper RxOk (any frame)
    // queue
    uint32_t maxQueue{0}; // most MPDUs in the MAC queue (incl. the one in flight)
    // IP / traffic control
    uint64_t ipDrops{0};
    uint64_t tcDrops{0};
};

std::vector<NodeCounters> g_nodes;
std::map<Mac48Address, uint32_t> g_nodeOfMac;

// Whether a unicast frame sent by `node` goes toward vH (TCP data) rather than v0.
bool
IsForward(uint32_t node, Mac48Address to)
{
    auto it = g_nodeOfMac.find(to);
    return it != g_nodeOfMac.end() && it->second > node;
}

// Smallest and largest PSDU size seen per frame type (a check of the frame sizes).
std::map<std::string, std::pair<uint32_t, uint32_t>> g_psduSize;

void
SeenSize(const std::string& type, uint32_t size)
{
    auto [it, inserted] = g_psduSize.try_emplace(type, size, size);
    if (!inserted)
    {
        it->second.first = std::min(it->second.first, size);
        it->second.second = std::max(it->second.second, size);
    }
}

void
OnPhyTxPsduBegin(uint32_t node, WifiConstPsduMap psdus, WifiTxVector, double)
{
    NodeCounters& c = g_nodes[node];
    for (const auto& [staId, psdu] : psdus)
    {
        const WifiMacHeader& hdr = psdu->GetHeader(0);
        const uint32_t size = psdu->GetSize();
        if (hdr.IsRts())
        {
            c.rtsTx++;
            SeenSize("rts", size);
        }
        else if (hdr.IsCts())
        {
            c.ctsTx++;
            SeenSize("cts", size);
        }
        else if (hdr.IsAck())
        {
            c.ackTx++;
            SeenSize("ack", size);
        }
        else if (hdr.IsData() && hdr.GetAddr1().IsGroup())
        {
            c.bcastTx++;
            SeenSize("data_bcast", size);
        }
        else if (hdr.IsData())
        {
            c.dataTx++;
            if (hdr.IsRetry())
            {
                c.dataTxRetry++;
            }
            const bool fwd = IsForward(node, hdr.GetAddr1());
            (fwd ? c.dataTxFwd : c.dataTxRev)++;
            SeenSize(fwd ? "data_fwd" : "data_rev", size);
        }
        else
        {
            c.otherTx++;
            SeenSize("other", size);
        }
    }
}

void
OnDataFailed(uint32_t node, Mac48Address)
{
    g_nodes[node].dataFailed++;
}

void
OnRtsFailed(uint32_t node, Mac48Address)
{
    g_nodes[node].rtsFailed++;
}

void
OnFinalDataFailed(uint32_t node, Mac48Address)
{
    g_nodes[node].finalDataFailed++;
}

void
OnFinalRtsFailed(uint32_t node, Mac48Address)
{
    g_nodes[node].finalRtsFailed++;
}

void
OnDroppedMpdu(uint32_t node, WifiMacDropReason reason, Ptr<const WifiMpdu> mpdu)
{
    NodeCounters& c = g_nodes[node];
    switch (reason)
    {
    case WIFI_MAC_DROP_FAILED_ENQUEUE:
        c.dropQueueFull++;
        break;
    case WIFI_MAC_DROP_EXPIRED_LIFETIME:
        c.dropExpired++;
        break;
    case WIFI_MAC_DROP_REACHED_RETRY_LIMIT:
        c.dropRetry++;
        (IsForward(node, mpdu->GetHeader().GetAddr1()) ? c.dropRetryFwd : c.dropRetryRev)++;
        break;
    default:
        c.dropOther++;
    }
}

void
OnMacTxDrop(uint32_t node, Ptr<const Packet>)
{
    g_nodes[node].macTxDrop++;
}

void
OnMacTx(uint32_t node, Ptr<const Packet>)
{
    g_nodes[node].macTx++;
}

void
OnEnqueue(uint32_t node, Ptr<const WifiMpdu>)
{
    g_nodes[node].enqueued++;
}

void
OnRxError(uint32_t node, Ptr<const Packet>, double)
{
    g_nodes[node].rxPayloadErrors++;
}

void
OnRxOk(uint32_t node, Ptr<const Packet>, double, WifiMode, WifiPreamble)
{
    g_nodes[node].rxOk++;
}

void
OnPhyRxDrop(uint32_t node, Ptr<const Packet>, WifiPhyRxfailureReason reason)
{
    std::ostringstream o;
    o << reason;
    g_nodes[node].rxDrops[o.str()]++;
}

void
OnQueueLen(uint32_t node, uint32_t, uint32_t v)
{
    g_nodes[node].maxQueue = std::max(g_nodes[node].maxQueue, v);
}

void
OnIpDrop(uint32_t node,
         const Ipv4Header&,
         Ptr<const Packet>,
         Ipv4L3Protocol::DropReason,
         Ptr<Ipv4>,
         uint32_t)
{
    g_nodes[node].ipDrops++;
}

void
OnTcDrop(uint32_t node, Ptr<const Packet>)
{
    g_nodes[node].tcDrops++;
}

// TCP sender and receiver.
struct TcpCounters
{
    uint64_t rxBytes{0};
    uint64_t dataSegs{0};  // data segments sent (Tx trace, payload > 0)
    uint64_t retxSegs{0};  // ... starting below the highest sequence sent so far
    uint64_t retxTrace{0}; // "Retransmission" trace
    uint64_t rto{0};       // entries into CA_LOSS
    uint64_t recoveries{0}; // entries into CA_RECOVERY
    bool haveHigh{false};
    SequenceNumber32 highTx{0};
    uint32_t maxCwnd{0};
    uint64_t rttN{0};
    double rttSum{0};
    double rttMin{std::numeric_limits<double>::infinity()};
    double rttMax{0};
};

TcpCounters g_tcp;

void
OnSinkRx(Ptr<const Packet> p, const Address&)
{
    g_tcp.rxBytes += p->GetSize();
}

void
OnTcpTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    uint32_t sz = p->GetSize();
    if (sz == 0)
    {
        return;
    }
    g_tcp.dataSegs++;
    SequenceNumber32 seq = h.GetSequenceNumber();
    if (g_tcp.haveHigh && seq < g_tcp.highTx)
    {
        g_tcp.retxSegs++;
    }
    if (!g_tcp.haveHigh || seq + sz > g_tcp.highTx)
    {
        g_tcp.highTx = seq + sz;
        g_tcp.haveHigh = true;
    }
}

void
OnTcpRetx(Ptr<const Packet>,
          const TcpHeader&,
          const Address&,
          const Address&,
          Ptr<const TcpSocketBase>)
{
    g_tcp.retxTrace++;
}

void
OnCongState(TcpSocketState::TcpCongState_t oldS, TcpSocketState::TcpCongState_t newS)
{
    if (newS == TcpSocketState::CA_LOSS && oldS != TcpSocketState::CA_LOSS)
    {
        g_tcp.rto++;
    }
    if (newS == TcpSocketState::CA_RECOVERY && oldS != TcpSocketState::CA_RECOVERY)
    {
        g_tcp.recoveries++;
    }
}

void
OnCwnd(uint32_t, uint32_t v)
{
    g_tcp.maxCwnd = std::max(g_tcp.maxCwnd, v);
}

void
OnLastRtt(Time, Time v)
{
    double s = v.GetSeconds();
    if (s <= 0 || g_tcp.dataSegs == 0)
    {
        return; // no sample yet, or the handshake's
    }
    g_tcp.rttN++;
    g_tcp.rttSum += s;
    g_tcp.rttMin = std::min(g_tcp.rttMin, s);
    g_tcp.rttMax = std::max(g_tcp.rttMax, s);
}

void
ConnectSenderTraces(Ptr<BulkSendApplication> app)
{
    Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(app->GetSocket());
    NS_ABORT_MSG_IF(!s, "the BulkSend socket is not a TcpSocketBase");
    s->TraceConnectWithoutContext("Tx", MakeCallback(&OnTcpTx));
    s->TraceConnectWithoutContext("Retransmission", MakeCallback(&OnTcpRetx));
    s->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState));
    s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&OnCwnd));
    s->TraceConnectWithoutContext("LastRTT", MakeCallback(&OnLastRtt));
}

// What the PHY of a receiver does with a frame received at rxDbm (the checks of
// YansWifiChannel::Receive, ThresholdPreambleDetectionModel and the CCA threshold, with
// no other signal present).
std::string
Classify(double rxDbm,
         double rxSensEff,
         double pdMinRssi,
         double pdSnrDb,
         double ccaSens,
         double noiseDbm)
{
    if (rxDbm < rxSensEff)
    {
        return "ignored"; // discarded by the channel: not received, not sensed, no interference
    }
    if (rxDbm >= pdMinRssi && rxDbm - noiseDbm >= pdSnrDb)
    {
        return "received"; // preamble detected: the PHY receives the frame
    }
    return rxDbm >= ccaSens ? "sensed" : "interference"; // CCA busy / only adds interference
}

// -- the frame error models of --errorModel ---------------------------------------------
//
// "rate": ns-3's post-reception model, a RateErrorModel per PHY (unit: frame) installed as
//   WifiPhy::PostReceptionErrorModel. PhyEntity::GetReceptionStatus consults it for every
//   frame the PHY has received correctly, whoever it is addressed to; a hit frame ends in
//   RxError, so the MAC waits EIFS after it.
// "onoff": the two-state on-off model of vtlab's `wifi.error_rate`/`error_burst` (and of
//   ns-2's IncomingErrProc/OutgoingErrProc between MAC and PHY): one process per node and
//   direction, lossy a share --errorRate of the time, exponential sojourns with mean
//   --errorBurst (lossy) and errorBurst (1 - rate) / rate (lossless), started in its
//   stationary state. A frame is corrupt at every receiver when its sender's outgoing
//   process is lossy as it starts; a frame received correctly is corrupt at a receiver
//   whose incoming process is lossy as it ends (the same post-reception hook).

// One on-off process.
struct OnOff
{
    double meanBad{0};  // s
    double meanGood{0}; // s
    bool started{false};
    bool bad{false};
    Time next;
    Ptr<UniformRandomVariable> u;
    Ptr<ExponentialRandomVariable> e;

    bool Lossy(Time now)
    {
        if (!started)
        {
            started = true;
            bad = u->GetValue() < meanBad / (meanBad + meanGood);
            next = now + Seconds(e->GetValue(bad ? meanBad : meanGood, 0));
        }
        while (now >= next)
        {
            bad = !bad;
            next += Seconds(e->GetValue(bad ? meanBad : meanGood, 0));
        }
        return bad;
    }
};

std::vector<OnOff> g_errOut;                  // per node: outgoing process
std::map<uint64_t, bool> g_frameCorrupt;      // packet uid -> hit by its sender's process
std::vector<uint64_t> g_errOutHits;           // per node: frames sent corrupt
std::vector<uint64_t> g_errInHits;            // per node: frames its error model failed

// Decide each frame a node starts to send (outgoing on-off process).
void
OnErrTxBegin(uint32_t node, Ptr<const Packet> p, double)
{
    const bool hit = g_errOut[node].Lossy(Simulator::Now());
    g_frameCorrupt[p->GetUid()] = hit;
    g_errOutHits[node] += hit ? 1 : 0;
}

// The post-reception error model of one node: under "rate" a stock RateErrorModel (unit:
// frame), under "onoff" the processes above; it counts the frames it fails.
class ChainErrorModel : public ErrorModel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::VtlabChainErrorModel")
                                .SetParent<ErrorModel>()
                                .AddConstructor<ChainErrorModel>();
        return tid;
    }

    uint32_t node{0};
    Ptr<ErrorModel> rate; // "rate"
    OnOff in;             // "onoff": the incoming process

  private:
    bool DoCorrupt(Ptr<Packet> p) override
    {
        bool hit;
        if (rate)
        {
            hit = rate->IsCorrupt(p);
        }
        else
        {
            auto it = g_frameCorrupt.find(p->GetUid());
            NS_ABORT_MSG_IF(it == g_frameCorrupt.end(), "a received frame was never sent");
            // the incoming process is consulted for every frame (its state depends on the
            // time only)
            const bool lossyIn = in.Lossy(Simulator::Now());
            hit = it->second || lossyIn;
        }
        g_errInHits[node] += hit ? 1 : 0;
        return hit;
    }

    void DoReset() override
    {
    }
};

} // namespace

int
main(int argc, char* argv[])
{
    // -- arguments --------------------------------------------------------------------
    uint32_t hops = 1;
    double spacing = 200.0;  // m
    double height = 1.5;     // m, antenna height (TwoRayGround HeightAboveZ)
    double speed = 5.5556;   // m/s (20 km/h), every vehicle, +x
    double frequency = 914e6; // Hz, TwoRayGround (ns-2 default)
    double systemLoss = 1.0;
    double txPower = 24.5;     // dBm (ns-2 Pt_ = 0.28183815 W)
    double rxThresh = -64.37;  // dBm, ns-2 RXThresh_ 3.652e-10 W (250 m)
    double csThresh = -78.07;  // dBm, ns-2 CSThresh_ 1.559e-11 W (550 m)
    double rxSens = NAN;       // WifiPhy::RxSensitivity; default: --csThresh
    double ccaEd = NAN;        // WifiPhy::CcaEdThreshold; default: --csThresh
    double ccaSens = -82.0;    // WifiPhy::CcaSensitivity (ns-3 default)
    double pdMinRssi = NAN;    // ThresholdPreambleDetectionModel::MinimumRssi; default: --rxThresh
    double pdSnr = 4.0;        // ThresholdPreambleDetectionModel::Threshold, dB (ns-3 default)
    double noiseFigure = 7.0;  // WifiPhy::RxNoiseFigure, dB (ns-3 default)
    bool rts = true;
    uint32_t ifq = 50;          // WifiMacQueue::MaxSize, packets
    double macMaxDelay = 500.0; // WifiMacQueue::MaxDelay, ms (ns-3 default)
    uint32_t retryLimit = 7;    // WifiMac::FrameRetryLimit (ns-3 default)
    std::string cc = "TcpNewReno";
    bool sack = false;
    uint32_t dupAck = 3; // TcpSocketBase::ReTxThreshold (ns-3 default)
    std::string errorModel = "none"; // none | rate | onoff
    double errorRate = 0.0;          // rate: per frame; onoff: share of time lossy
    double errorBurst = 0.05;        // onoff: mean lossy period, s
    bool timestamps = false;
    bool limitedTransmit = true; // ns-3 default
    std::string recovery = "TcpClassicRecovery";
    uint32_t delAck = 1;
    double delAckTimeout = 0.2; // s (ns-3 default)
    uint32_t initCwnd = 1;
    double minRto = 0.2; // s
    uint32_t window = 20; // segments: RcvBufSize = window * segment
    uint32_t segment = 512;
    uint32_t sndBuf = 1 << 20;
    uint32_t dataRetries = 1000;
    double start = 1.0;     // s
    double duration = 100.0; // s
    uint32_t run = 1;
    uint32_t seed = 1;

    CommandLine cmd(__FILE__);
    cmd.AddValue("hops", "hops H: H + 1 vehicles, one flow v0 -> vH", hops);
    cmd.AddValue("spacing", "distance between neighbours, m", spacing);
    cmd.AddValue("height", "antenna height above the node, m (TwoRayGround HeightAboveZ)", height);
    cmd.AddValue("speed", "speed of every vehicle in +x, m/s", speed);
    cmd.AddValue("frequency", "TwoRayGround carrier frequency, Hz", frequency);
    cmd.AddValue("systemLoss", "TwoRayGround system loss (linear)", systemLoss);
    cmd.AddValue("txPower", "transmit power, dBm (TxPowerStart = TxPowerEnd)", txPower);
    cmd.AddValue("rxThresh",
                 "receive threshold, dBm (ns-2 RXThresh_): the preamble-detection MinimumRssi",
                 rxThresh);
    cmd.AddValue("csThresh",
                 "carrier-sense threshold, dBm (ns-2 CSThresh_): RxSensitivity and CcaEdThreshold",
                 csThresh);
    cmd.AddValue("rxSens",
                 "override WifiPhy::RxSensitivity, dBm (default: --csThresh - 10 log10(22/20))",
                 rxSens);
    cmd.AddValue("ccaEd", "override WifiPhy::CcaEdThreshold, dBm (default: --csThresh)", ccaEd);
    cmd.AddValue("ccaSens", "WifiPhy::CcaSensitivity, dBm", ccaSens);
    cmd.AddValue("pdMinRssi",
                 "override ThresholdPreambleDetectionModel::MinimumRssi, dBm (default: --rxThresh)",
                 pdMinRssi);
    cmd.AddValue("pdSnr", "ThresholdPreambleDetectionModel::Threshold (SNR), dB", pdSnr);
    cmd.AddValue("noiseFigure", "WifiPhy::RxNoiseFigure, dB", noiseFigure);
    cmd.AddValue("rts", "1: RTS/CTS before every unicast frame (RtsCtsThreshold 0); 0: never", rts);
    cmd.AddValue("ifq", "MAC queue size, packets (WifiMacQueue::MaxSize)", ifq);
    cmd.AddValue("macMaxDelay", "MAC queue lifetime, ms (WifiMacQueue::MaxDelay)", macMaxDelay);
    cmd.AddValue("retryLimit", "WifiMac::FrameRetryLimit", retryLimit);
    cmd.AddValue("cc", "TCP congestion control, ns3::<cc> (TcpNewReno, TcpVegas, ...)", cc);
    cmd.AddValue("sack", "TCP SACK (TcpSocketBase::Sack)", sack);
    cmd.AddValue("dupAck", "duplicate ACKs before fast retransmit (TcpSocketBase::ReTxThreshold)", dupAck);
    cmd.AddValue("errorModel",
                 "frame errors: none, rate (RateErrorModel per frame as every PHY's "
                 "PostReceptionErrorModel) or onoff (vtlab's/ns-2's on-off model)",
                 errorModel);
    cmd.AddValue("errorRate", "rate: frame error rate; onoff: share of time lossy", errorRate);
    cmd.AddValue("errorBurst", "onoff: mean lossy period, s", errorBurst);
    cmd.AddValue("timestamps", "TCP timestamps (TcpSocketBase::Timestamp)", timestamps);
    cmd.AddValue("limitedTransmit", "TcpSocketBase::LimitedTransmit", limitedTransmit);
    cmd.AddValue("recovery", "TcpL4Protocol::RecoveryType, ns3::<recovery>", recovery);
    cmd.AddValue("delAck", "TcpSocket::DelAckCount", delAck);
    cmd.AddValue("delAckTimeout", "TcpSocket::DelAckTimeout, s", delAckTimeout);
    cmd.AddValue("initCwnd", "TcpSocket::InitialCwnd, segments", initCwnd);
    cmd.AddValue("minRto", "TcpSocketBase::MinRto, s", minRto);
    cmd.AddValue("window", "receive window, segments (RcvBufSize = window * segment)", window);
    cmd.AddValue("segment", "TcpSocket::SegmentSize, bytes", segment);
    cmd.AddValue("sndBuf", "TcpSocket::SndBufSize, bytes", sndBuf);
    cmd.AddValue("dataRetries", "TcpSocket::DataRetries", dataRetries);
    cmd.AddValue("start", "flow start, s", start);
    cmd.AddValue("duration", "flow duration, s (the simulation stops at start + duration)", duration);
    cmd.AddValue("run", "RngRun", run);
    cmd.AddValue("seed", "RngSeed", seed);
    cmd.Parse(argc, argv);

    NS_ABORT_MSG_IF(hops < 1, "--hops must be at least 1");
    NS_ABORT_MSG_IF(spacing <= 0 || duration <= 0 || start < 0, "bad --spacing/--duration/--start");
    NS_ABORT_MSG_IF(ifq < 1 || window < 1 || segment < 1, "bad --ifq/--window/--segment");
    NS_ABORT_MSG_IF(dupAck < 1, "--dupAck must be at least 1");
    NS_ABORT_MSG_IF(errorModel != "none" && errorModel != "rate" && errorModel != "onoff",
                    "--errorModel must be none, rate or onoff");
    NS_ABORT_MSG_IF(errorModel != "none" && !(errorRate > 0 && errorRate < 1),
                    "--errorRate must lie in (0, 1)");
    NS_ABORT_MSG_IF(errorModel == "onoff" && !(errorBurst > 0), "--errorBurst must be positive");
    // YansWifiChannel::Receive discards a signal below RxSensitivity + 10 log10(W / 20 MHz),
    // W = 22 MHz for DSSS: compensate, so that the cut-off is --csThresh itself.
    const double widthCorrection = 10 * std::log10(22.0 / 20.0);
    if (std::isnan(rxSens))
    {
        rxSens = csThresh - widthCorrection;
    }
    if (std::isnan(ccaEd))
    {
        ccaEd = csThresh;
    }
    if (std::isnan(pdMinRssi))
    {
        pdMinRssi = rxThresh;
    }

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    // -- TCP --------------------------------------------------------------------------
    TypeId ccTid;
    NS_ABORT_MSG_IF(!TypeId::LookupByNameFailSafe("ns3::" + cc, &ccTid),
                    "unknown congestion control ns3::" << cc);
    TypeId recTid;
    NS_ABORT_MSG_IF(!TypeId::LookupByNameFailSafe("ns3::" + recovery, &recTid),
                    "unknown recovery ns3::" << recovery);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(ccTid));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(recTid));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(dupAck));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(window * segment));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBuf));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAck));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(delAckTimeout)));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initCwnd));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(dataRetries));

    // -- MAC queue ----------------------------------------------------------------------
    Config::SetDefault("ns3::WifiMacQueue::MaxSize",
                       QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, ifq)));
    Config::SetDefault("ns3::WifiMacQueue::MaxDelay",
                       TimeValue(MicroSeconds(std::llround(macMaxDelay * 1000))));

    // -- nodes and mobility -------------------------------------------------------------
    const uint32_t n = hops + 1;
    NodeContainer nodes;
    nodes.Create(n);
    MobilityHelper mobility;
    mobility.SetMobilityModel("ns3::ConstantVelocityMobilityModel");
    mobility.Install(nodes);
    for (uint32_t i = 0; i < n; ++i)
    {
        auto m = nodes.Get(i)->GetObject<ConstantVelocityMobilityModel>();
        m->SetPosition(Vector(i * spacing, 0, 0));
        m->SetVelocity(Vector(speed, 0, 0));
    }

    // -- channel ----------------------------------------------------------------------
    Ptr<TwoRayGroundPropagationLossModel> loss = CreateObject<TwoRayGroundPropagationLossModel>();
    loss->SetAttribute("Frequency", DoubleValue(frequency));
    loss->SetAttribute("SystemLoss", DoubleValue(systemLoss));
    loss->SetAttribute("HeightAboveZ", DoubleValue(height));
    Ptr<YansWifiChannel> channel = CreateObject<YansWifiChannel>();
    channel->SetPropagationLossModel(loss);
    channel->SetPropagationDelayModel(CreateObject<ConstantSpeedPropagationDelayModel>());

    // -- PHY, MAC, device ---------------------------------------------------------------
    YansWifiPhyHelper phy;
    phy.SetChannel(channel);
    phy.Set("TxPowerStart", DoubleValue(txPower));
    phy.Set("TxPowerEnd", DoubleValue(txPower));
    phy.Set("TxPowerLevels", UintegerValue(1));
    phy.Set("TxGain", DoubleValue(0));
    phy.Set("RxGain", DoubleValue(0));
    phy.Set("RxSensitivity", DoubleValue(rxSens));
    phy.Set("CcaEdThreshold", DoubleValue(ccaEd));
    phy.Set("CcaSensitivity", DoubleValue(ccaSens));
    phy.Set("RxNoiseFigure", DoubleValue(noiseFigure));
    phy.SetPreambleDetectionModel("ns3::ThresholdPreambleDetectionModel",
                                  "MinimumRssi",
                                  DoubleValue(pdMinRssi),
                                  "Threshold",
                                  DoubleValue(pdSnr));

    WifiHelper wifi;
    wifi.SetStandard(WIFI_STANDARD_80211b);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode",
                                 StringValue("DsssRate1Mbps"),
                                 "ControlMode",
                                 StringValue("DsssRate1Mbps"),
                                 "RtsCtsThreshold",
                                 UintegerValue(rts ? 0 : 65535));
    // No NetDeviceQueueInterface: Ipv4AddressHelper then installs no queue disc and the
    // traffic-control layer never holds packets back; the MAC queue is the only queue.
    wifi.DisableFlowControl();

    WifiMacHelper mac;
    mac.SetType("ns3::AdhocWifiMac", "FrameRetryLimit", UintegerValue(retryLimit));
    NetDeviceContainer devices = wifi.Install(phy, mac, nodes);
    int64_t stream = wifi.AssignStreams(devices, 0);

    // -- frame errors (see ChainErrorModel) -----------------------------------------------
    g_errOut.resize(n);
    g_errOutHits.assign(n, 0);
    g_errInHits.assign(n, 0);
    auto process = [&](OnOff& o) {
        o.meanBad = errorBurst;
        o.meanGood = errorBurst * (1 - errorRate) / errorRate;
        o.u = CreateObject<UniformRandomVariable>();
        o.u->SetStream(stream++);
        o.e = CreateObject<ExponentialRandomVariable>();
        o.e->SetStream(stream++);
    };
    for (uint32_t i = 0; i < n && errorModel != "none"; ++i)
    {
        auto em = CreateObject<ChainErrorModel>();
        em->node = i;
        if (errorModel == "rate")
        {
            auto rate = CreateObject<RateErrorModel>();
            rate->SetAttribute("ErrorUnit", EnumValue(RateErrorModel::ERROR_UNIT_PACKET));
            rate->SetAttribute("ErrorRate", DoubleValue(errorRate));
            stream += rate->AssignStreams(stream);
            em->rate = rate;
        }
        else
        {
            process(em->in);
            process(g_errOut[i]);
            DynamicCast<WifiNetDevice>(devices.Get(i))
                ->GetPhy()
                ->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&OnErrTxBegin, i));
        }
        DynamicCast<WifiNetDevice>(devices.Get(i))->GetPhy()->SetPostReceptionErrorModel(em);
    }

    // -- IP, routes, ARP ------------------------------------------------------------------
    InternetStackHelper internet;
    internet.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addr.Assign(devices);

    TrafficControlHelper tch;
    for (uint32_t i = 0; i < n; ++i)
    {
        Ptr<NetDevice> d = devices.Get(i);
        if (nodes.Get(i)->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(d))
        {
            tch.Uninstall(d); // not expected: there is no NetDeviceQueueInterface
        }
    }

    // Every node reaches v0 through its left neighbour and vH through its right one; host
    // routes (/32) win over the connected /24 by longest-prefix match.
    Ipv4StaticRoutingHelper srt;
    const Ipv4Address src = ifs.GetAddress(0);
    const Ipv4Address dst = ifs.GetAddress(hops);
    for (uint32_t i = 0; i < n; ++i)
    {
        Ptr<Ipv4StaticRouting> r = srt.GetStaticRouting(nodes.Get(i)->GetObject<Ipv4>());
        const uint32_t ifIndex = nodes.Get(i)->GetObject<Ipv4>()->GetInterfaceForDevice(devices.Get(i));
        if (i < hops)
        {
            r->AddHostRouteTo(dst, ifs.GetAddress(i + 1), ifIndex);
        }
        if (i > 0)
        {
            r->AddHostRouteTo(src, ifs.GetAddress(i - 1), ifIndex);
        }
    }
    // Permanent ARP entries for every address on the channel: no ARP request is ever sent.
    NeighborCacheHelper neighbors;
    neighbors.PopulateNeighborCache(ifs);

    // -- traces -----------------------------------------------------------------------
    g_nodes.resize(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        g_nodeOfMac[Mac48Address::ConvertFrom(devices.Get(i)->GetAddress())] = i;
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        auto dev = DynamicCast<WifiNetDevice>(devices.Get(i));
        Ptr<WifiPhy> p = dev->GetPhy();
        Ptr<WifiMac> m = dev->GetMac();
        Ptr<WifiRemoteStationManager> rsm = dev->GetRemoteStationManager();
        p->TraceConnectWithoutContext("PhyTxPsduBegin", MakeBoundCallback(&OnPhyTxPsduBegin, i));
        p->TraceConnectWithoutContext("PhyRxDrop", MakeBoundCallback(&OnPhyRxDrop, i));
        p->GetState()->TraceConnectWithoutContext("RxError", MakeBoundCallback(&OnRxError, i));
        p->GetState()->TraceConnectWithoutContext("RxOk", MakeBoundCallback(&OnRxOk, i));
        rsm->TraceConnectWithoutContext("MacTxDataFailed", MakeBoundCallback(&OnDataFailed, i));
        rsm->TraceConnectWithoutContext("MacTxRtsFailed", MakeBoundCallback(&OnRtsFailed, i));
        rsm->TraceConnectWithoutContext("MacTxFinalDataFailed",
                                        MakeBoundCallback(&OnFinalDataFailed, i));
        rsm->TraceConnectWithoutContext("MacTxFinalRtsFailed",
                                        MakeBoundCallback(&OnFinalRtsFailed, i));
        m->TraceConnectWithoutContext("DroppedMpdu", MakeBoundCallback(&OnDroppedMpdu, i));
        m->TraceConnectWithoutContext("MacTxDrop", MakeBoundCallback(&OnMacTxDrop, i));
        m->TraceConnectWithoutContext("MacTx", MakeBoundCallback(&OnMacTx, i));
        Ptr<WifiMacQueue> q = m->GetTxop()->GetWifiMacQueue();
        q->TraceConnectWithoutContext("Enqueue", MakeBoundCallback(&OnEnqueue, i));
        q->TraceConnectWithoutContext("PacketsInQueue", MakeBoundCallback(&OnQueueLen, i));
        nodes.Get(i)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
            "Drop",
            MakeBoundCallback(&OnIpDrop, i));
        nodes.Get(i)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop",
            MakeBoundCallback(&OnTcDrop, i));
    }

    // -- the flow -----------------------------------------------------------------------
    const uint16_t port = 5000;
    const Time tStart = Seconds(start);
    const Time tEnd = Seconds(start + duration);
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApps = sinkHelper.Install(nodes.Get(hops));
    sinkApps.Start(Seconds(0));
    sinkApps.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnSinkRx));
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(dst, port));
    bulk.SetAttribute("MaxBytes", UintegerValue(0));
    bulk.SetAttribute("SendSize", UintegerValue(segment));
    ApplicationContainer srcApps = bulk.Install(nodes.Get(0));
    srcApps.Start(tStart);
    srcApps.Stop(tEnd);
    // the socket is created in StartApplication(): hook its traces right after
    Simulator::Schedule(tStart + NanoSeconds(1),
                        &ConnectSenderTraces,
                        DynamicCast<BulkSendApplication>(srcApps.Get(0)));

    // -- config line: arguments, attributes read back, link budget ------------------------
    auto dev0 = DynamicCast<WifiNetDevice>(devices.Get(0));
    Ptr<WifiPhy> phy0 = dev0->GetPhy();
    Ptr<WifiMac> mac0 = dev0->GetMac();
    Ptr<Txop> txop0 = mac0->GetTxop();
    // (WifiHelper::Install configured the standard: slot, SIFS, CW, AIFSN are in place)
    const Time slot = phy0->GetSlot();
    const Time sifs = phy0->GetSifs();
    const Time difs = sifs + txop0->GetAifsn() * slot;
    const Time eifsNoDifs = sifs + phy0->GetAckTxTime();
    WifiTxVector tv;
    tv.SetMode(DsssPhy::GetDsssRate1Mbps());
    tv.SetPreambleType(WIFI_PREAMBLE_LONG);
    tv.SetChannelWidth(MHz_u{22});
    auto dur = [&](uint32_t bytes) {
        return WifiPhy::CalculateTxDuration(bytes, tv, phy0->GetPhyBand());
    };
    const Time plcp = WifiPhy::CalculatePhyPreambleAndHeaderDuration(tv);
    // the 802.11 non-QoS data frame overhead: MAC header 24 + LLC/SNAP 8 + FCS 4
    const uint32_t macOverhead = 24 + 8 + 4;
    const uint32_t ipTcp = 20 + 20 + (timestamps ? 12 : 0);
    const uint32_t dataMpdu = segment + ipTcp + macOverhead;
    const uint32_t ackMpdu = ipTcp + macOverhead;

    // link budget: received power at 200, 400, 600 m
    const double noiseDbm =
        10 * std::log10(1.3803e-23 * 290 * 22e6 * 1000) + noiseFigure; // 22 MHz DSSS
    const double rxSensEff = rxSens + widthCorrection; // the cut-off of YansWifiChannel::Receive
    std::ostringstream power;
    std::ostringstream fate;
    for (int d : {200, 400, 600})
    {
        auto a = CreateObject<ConstantPositionMobilityModel>();
        auto b = CreateObject<ConstantPositionMobilityModel>();
        a->SetPosition(Vector(0, 0, 0));
        b->SetPosition(Vector(d, 0, 0));
        double rx = loss->CalcRxPower(txPower, a, b);
        power << (d == 200 ? "" : ",") << "\"" << d << "\":" << Num(std::round(rx * 100) / 100);
        fate << (d == 200 ? "" : ",") << "\"" << d
             << "\":" << Str(Classify(rx, rxSensEff, pdMinRssi, pdSnr, ccaSens, noiseDbm));
    }

    auto attr = [](Ptr<Object> o, const std::string& name) {
        StringValue v;
        o->GetAttribute(name, v);
        return v.Get();
    };
    Ptr<PreambleDetectionModel> pdm;
    {
        PointerValue pv;
        phy0->GetAttribute("PreambleDetectionModel", pv);
        pdm = pv.Get<PreambleDetectionModel>();
    }
    std::string errorRateModel;
    {
        PointerValue pv;
        phy0->GetAttribute("InterferenceHelper", pv);
        auto ih = pv.Get<InterferenceHelper>();
        errorRateModel = ih ? ih->GetErrorRateModel()->GetInstanceTypeId().GetName() : "?";
    }
    PointerValue fcm;
    phy0->GetAttribute("FrameCaptureModel", fcm);

    std::ostringstream cfg;
    cfg << "{\"kind\":\"config\",\"ns3\":\"3.44\",\"hops\":" << hops
        << ",\"spacing_m\":" << Num(spacing) << ",\"height_m\":" << Num(height)
        << ",\"speed_mps\":" << Num(speed) << ",\"frequency_hz\":" << Num(frequency)
        << ",\"system_loss\":" << Num(systemLoss) << ",\"tx_power_dbm\":" << Num(txPower)
        << ",\"rx_thresh_dbm\":" << Num(rxThresh) << ",\"cs_thresh_dbm\":" << Num(csThresh)
        << ",\"rts\":" << (rts ? 1 : 0) << ",\"ifq\":" << ifq
        << ",\"mac_max_delay_ms\":" << Num(macMaxDelay) << ",\"retry_limit\":" << retryLimit
        << ",\"cc\":" << Str(cc) << ",\"sack\":" << (sack ? 1 : 0)
        << ",\"timestamps\":" << (timestamps ? 1 : 0)
        << ",\"limited_transmit\":" << (limitedTransmit ? 1 : 0)
        << ",\"recovery\":" << Str(recovery) << ",\"dupack\":" << dupAck
        << ",\"error_model\":" << Str(errorModel) << ",\"error_rate\":" << Num(errorRate)
        << ",\"error_burst_s\":" << Num(errorBurst) << ",\"delack\":" << delAck
        << ",\"delack_timeout_s\":" << Num(delAckTimeout) << ",\"init_cwnd\":" << initCwnd
        << ",\"min_rto_s\":" << Num(minRto) << ",\"window\":" << window
        << ",\"segment\":" << segment << ",\"rcv_buf\":" << window * segment
        << ",\"snd_buf\":" << sndBuf << ",\"data_retries\":" << dataRetries
        << ",\"start_s\":" << Num(start) << ",\"duration_s\":" << Num(duration)
        << ",\"run\":" << run << ",\"seed\":" << seed
        // what is in force in ns-3 (read back from node 0's objects)
        << ",\"ns3\":{\"standard\":\"802.11b\",\"phy\":\"YansWifiPhy\""
        << ",\"rx_sensitivity_dbm\":" << Num(phy0->GetRxSensitivity())
        << ",\"rx_sensitivity_effective_dbm\":" << Num(rxSensEff)
        << ",\"cca_ed_threshold_dbm\":" << Num(phy0->GetCcaEdThreshold())
        << ",\"cca_sensitivity_dbm\":" << Num(phy0->GetCcaSensitivityThreshold())
        << ",\"tx_power_start_dbm\":" << Num(phy0->GetTxPowerStart())
        << ",\"tx_power_end_dbm\":" << Num(phy0->GetTxPowerEnd())
        << ",\"rx_noise_figure_db\":" << Num(noiseFigure)
        << ",\"noise_floor_dbm\":" << Num(std::round(noiseDbm * 100) / 100)
        << ",\"preamble_detection\":"
        << Str(pdm ? pdm->GetInstanceTypeId().GetName() : std::string("none"))
        << ",\"preamble_detection_min_rssi_dbm\":" << (pdm ? attr(pdm, "MinimumRssi") : "null")
        << ",\"preamble_detection_snr_db\":" << (pdm ? attr(pdm, "Threshold") : "null")
        << ",\"preamble_detection_window_us\":" << Us(WifiPhy::GetPreambleDetectionDuration())
        << ",\"frame_capture\":" << Str(fcm.Get<FrameCaptureModel>() ? "yes" : "none")
        << ",\"error_rate_model\":" << Str(errorRateModel)
        << ",\"channel\":" << +phy0->GetChannelNumber()
        << ",\"channel_width_mhz\":" << Num(phy0->GetChannelWidth())
        << ",\"short_preamble\":" << (phy0->GetShortPhyPreambleSupported() ? "true" : "false")
        << ",\"slot_us\":" << Us(slot) << ",\"sifs_us\":" << Us(sifs)
        << ",\"difs_us\":" << Us(difs) << ",\"eifs_no_difs_us\":" << Us(eifsNoDifs)
        << ",\"eifs_us\":" << Us(eifsNoDifs + difs) << ",\"cw_min\":" << txop0->GetMinCw()
        << ",\"cw_max\":" << txop0->GetMaxCw() << ",\"aifsn\":" << +txop0->GetAifsn()
        << ",\"frame_retry_limit\":" << mac0->GetFrameRetryLimit()
        << ",\"rts_cts_threshold\":" << (rts ? 0 : 65535)
        << ",\"mac_queue_max_size\":"
        << Str(txop0->GetWifiMacQueue()->GetMaxSize().GetValue() > 0
                   ? std::to_string(txop0->GetWifiMacQueue()->GetMaxSize().GetValue()) + "p"
                   : "?")
        << ",\"mac_queue_max_delay_ms\":"
        << Num(txop0->GetWifiMacQueue()->GetMaxDelay().GetMicroSeconds() / 1000.0)
        << ",\"plcp_us\":" << Us(plcp)
        << ",\"ack_timeout_after_tx_end_us\":" << Us(sifs + slot + plcp)
        << ",\"data_mpdu_bytes\":" << dataMpdu << ",\"data_tx_us\":" << Us(dur(dataMpdu))
        << ",\"tcp_ack_mpdu_bytes\":" << ackMpdu << ",\"tcp_ack_tx_us\":" << Us(dur(ackMpdu))
        << ",\"rts_tx_us\":" << Us(dur(20)) << ",\"cts_tx_us\":" << Us(dur(14))
        << ",\"ack_tx_us\":" << Us(dur(14)) << "}"
        << ",\"rx_power_dbm\":{" << power.str() << "},\"rx_fate\":{" << fate.str() << "}}";
    std::cout << cfg.str() << std::endl;

    // -- run ------------------------------------------------------------------------------
    Simulator::Stop(tEnd);
    auto wall0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto wall1 = std::chrono::steady_clock::now();
    const double wall = std::chrono::duration<double>(wall1 - wall0).count();
    const uint64_t events = Simulator::GetEventCount();

    // -- result ---------------------------------------------------------------------------
    NodeCounters sum;
    std::ostringstream perHop;
    perHop << "[";
    for (uint32_t i = 0; i < n; ++i)
    {
        const NodeCounters& c = g_nodes[i];
        sum.dataTx += c.dataTx;
        sum.dataTxFwd += c.dataTxFwd;
        sum.dataTxRev += c.dataTxRev;
        sum.dataTxRetry += c.dataTxRetry;
        sum.rtsTx += c.rtsTx;
        sum.ctsTx += c.ctsTx;
        sum.ackTx += c.ackTx;
        sum.bcastTx += c.bcastTx;
        sum.otherTx += c.otherTx;
        sum.dataFailed += c.dataFailed;
        sum.rtsFailed += c.rtsFailed;
        sum.finalDataFailed += c.finalDataFailed;
        sum.finalRtsFailed += c.finalRtsFailed;
        sum.dropQueueFull += c.dropQueueFull;
        sum.dropExpired += c.dropExpired;
        sum.dropRetry += c.dropRetry;
        sum.dropRetryFwd += c.dropRetryFwd;
        sum.dropRetryRev += c.dropRetryRev;
        sum.dropOther += c.dropOther;
        sum.macTxDrop += c.macTxDrop;
        sum.macTx += c.macTx;
        sum.enqueued += c.enqueued;
        sum.rxPayloadErrors += c.rxPayloadErrors;
        sum.rxOk += c.rxOk;
        sum.ipDrops += c.ipDrops;
        sum.tcDrops += c.tcDrops;
        sum.maxQueue = std::max(sum.maxQueue, c.maxQueue);
        for (const auto& [k, v] : c.rxDrops)
        {
            sum.rxDrops[k] += v;
        }
    }
    auto macJson = [](const NodeCounters& c) {
        auto sig = c.rxDrops.find("L_SIG_FAILURE");
        uint64_t sigFail = sig == c.rxDrops.end() ? 0 : sig->second;
        std::ostringstream o;
        o << "\"data_tx\":" << c.dataTx << ",\"data_tx_fwd\":" << c.dataTxFwd
          << ",\"data_tx_rev\":" << c.dataTxRev << ",\"data_tx_retry\":" << c.dataTxRetry
          << ",\"rts_tx\":" << c.rtsTx << ",\"cts_tx\":" << c.ctsTx << ",\"ack_tx\":" << c.ackTx
          << ",\"bcast_tx\":" << c.bcastTx << ",\"other_tx\":" << c.otherTx
          << ",\"retries\":" << c.dataFailed + c.rtsFailed << ",\"data_failed\":" << c.dataFailed
          << ",\"rts_failed\":" << c.rtsFailed
          << ",\"retry_drops\":" << c.finalDataFailed + c.finalRtsFailed
          << ",\"final_data_failed\":" << c.finalDataFailed
          << ",\"final_rts_failed\":" << c.finalRtsFailed
          << ",\"mac_tx\":" << c.macTx << ",\"enqueued\":" << c.enqueued
          << ",\"queue_drops\":" << c.macTx - c.enqueued - c.macTxDrop
          << ",\"mac_tx_drop\":" << c.macTxDrop
          << ",\"dropped_mpdu_failed_enqueue\":" << c.dropQueueFull
          << ",\"expired_drops\":" << c.dropExpired
          << ",\"dropped_mpdu_retry_limit\":" << c.dropRetry
          << ",\"retry_drops_fwd\":" << c.dropRetryFwd << ",\"retry_drops_rev\":" << c.dropRetryRev
          << ",\"dropped_mpdu_other\":" << c.dropOther
          << ",\"rx_errors\":" << c.rxPayloadErrors + sigFail
          << ",\"rx_payload_errors\":" << c.rxPayloadErrors << ",\"rx_header_errors\":" << sigFail
          << ",\"rx_ok\":" << c.rxOk << ",\"rx_drops_by_reason\":" << CountMap(c.rxDrops)
          << ",\"max_queue\":" << c.maxQueue << ",\"ip_drops\":" << c.ipDrops
          << ",\"tc_drops\":" << c.tcDrops;
        return o.str();
    };
    for (uint32_t i = 0; i < n; ++i)
    {
        perHop << (i ? "," : "") << "{\"node\":" << i << "," << macJson(g_nodes[i]) << "}";
    }
    perHop << "]";
    std::ostringstream sizes;
    sizes << "{";
    bool first = true;
    for (const auto& [k, v] : g_psduSize)
    {
        sizes << (first ? "" : ",") << Str(k) << ":[" << v.first << "," << v.second << "]";
        first = false;
    }
    sizes << "}";

    std::ostringstream o;
    o << "{\"kind\":\"result\",\"goodput_bps\":" << Num(g_tcp.rxBytes * 8.0 / duration)
      << ",\"bytes_rx\":" << g_tcp.rxBytes << ",\"tcp_data_segments\":" << g_tcp.dataSegs
      << ",\"tcp_retransmissions\":" << g_tcp.retxTrace
      << ",\"tcp_retx_segments\":" << g_tcp.retxSegs << ",\"tcp_rto\":" << g_tcp.rto
      << ",\"tcp_fast_recoveries\":" << g_tcp.recoveries << ",\"error_rx_hits\":"
      << std::accumulate(g_errInHits.begin(), g_errInHits.end(), uint64_t{0})
      << ",\"error_tx_hits\":"
      << std::accumulate(g_errOutHits.begin(), g_errOutHits.end(), uint64_t{0})
      << ",\"tcp_max_cwnd_bytes\":" << g_tcp.maxCwnd << ",\"rtt_samples\":" << g_tcp.rttN
      << ",\"rtt_mean_s\":" << Num(g_tcp.rttN ? g_tcp.rttSum / g_tcp.rttN : NAN)
      << ",\"rtt_min_s\":" << Num(g_tcp.rttN ? g_tcp.rttMin : NAN)
      << ",\"rtt_max_s\":" << Num(g_tcp.rttN ? g_tcp.rttMax : NAN) << ",\"mac\":{"
      << macJson(sum) << "},\"per_hop\":" << perHop.str() << ",\"psdu_bytes\":" << sizes.str()
      << ",\"sim_end_s\":" << Num(Simulator::Now().GetSeconds()) << ",\"events\":" << events
      << ",\"wall_s\":" << Num(wall) << "}";
    std::cout << o.str() << std::endl;

    Simulator::Destroy();
    return 0;
}
