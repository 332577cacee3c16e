// vtlab validation: ns-3 reference program for request/response sessions
// (ISO 15118-style V2G messaging) over the charging cable.
//
//   SECC --(PLC p2p 10 Mbit/s, 0.9 ms, MTU 1500, drop-tail 100 packets)-- EVCC
//
// One TCP connection, EVCC = client (connects at 0.1 s), SECC = server. The client
// writes the requests of a schedule one after the other; the server writes each
// response as soon as it holds the whole request. Timing rules, loss and output:
// validation/ns3/README-iso15118.md.
//
// Loss: ns3::BurstErrorModel (burst sizes U{1..4}, burst-start probability p given as
// is: the resolved scenario's burst_start) as ReceiveErrorModel on the EVCC's device
// (--burstRate, toward the vehicle) and on the SECC's device (--reverseBurstRate,
// toward the charger), each
// with random streams of its own (0/1 toward the EVCC, 2/3 toward the SECC).
// --lossStart keeps both models off until then (tests: let the handshake through).
// --traceTcp prints both sockets' segments, RTT samples and RTO changes on stderr.
// --traceLoss prints, on stderr after the run, the positions (from 0) of the packets
// each PLC device's error model lost among all the packets it received:
// "lost toward_evcc 3 17 ..." and "lost toward_secc ..." (vtlab's `replay` loss
// model takes them: paired replay).
//
// Written for vtlab against the public ns-3.44 API. Output on stdout: one JSON
// object per request written, then one summary object.

#include "ns3/application.h"
#include "ns3/boolean.h"
#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/error-model.h"
#include "ns3/inet-socket-address.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/pointer.h"
#include "ns3/queue-size.h"
#include "ns3/random-variable-stream.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/string.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"

#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

// ---------------------------------------------------------------------------
// The schedule and the per-request records
// ---------------------------------------------------------------------------

struct Step
{
    std::string name;
    uint32_t requestBytes{0};
    uint32_t responseBytes{0};
    Time timeout;
    uint32_t repeats{0};
    Time period;
};

// One request the client wrote.
struct Row
{
    const Step* step{nullptr};
    Time request;          // when the client wrote it
    Time response{-1};     // when the client held the whole response (negative: never)
    bool answered{false};
};

enum class EndReason
{
    Running,
    Completed,        // the last response arrived
    Aborted,          // abort on miss: a deadline passed without the response
    ConnectionFailed, // the handshake gave up (SYN retries exhausted)
    ConnectionError,  // the established connection was closed by an error
    PeerClosed,       // the server closed (does not happen here)
};

static const char*
ReasonName(EndReason r)
{
    switch (r)
    {
    case EndReason::Running:
        return "running";
    case EndReason::Completed:
        return "completed";
    case EndReason::Aborted:
        return "aborted";
    case EndReason::ConnectionFailed:
        return "connection_failed";
    case EndReason::ConnectionError:
        return "connection_error";
    case EndReason::PeerClosed:
        return "peer_closed";
    }
    return "?";
}

static EndReason g_end = EndReason::Running;
static Time g_endTime{-1};

static void
EndSession(EndReason why)
{
    if (g_end != EndReason::Running)
    {
        return;
    }
    g_end = why;
    g_endTime = Simulator::Now();
    Simulator::Stop();
}

// The message order both ends follow: each step `repeats` times in a row.
static std::vector<const Step*>
Expand(const std::vector<Step>& steps)
{
    std::vector<const Step*> seq;
    for (const Step& s : steps)
    {
        for (uint32_t k = 0; k < s.repeats; ++k)
        {
            seq.push_back(&s);
        }
    }
    return seq;
}

// ---------------------------------------------------------------------------
// --traceTcp: both sockets' segments, RTT samples and RTO changes on stderr
// ---------------------------------------------------------------------------
static bool g_traceTcp = false;

// --traceLoss: per PLC device, packets received so far and the positions lost
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
TraceTime(const char* who, const char* what, Time, Time v)
{
    std::cerr << Simulator::Now().GetSeconds() << " " << who << " " << what << " "
              << v.GetSeconds() << "\n";
}

static void
TraceSegment(const char* who, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    std::cerr << Simulator::Now().GetSeconds() << " " << who << " " << h << " len=" << p->GetSize()
              << "\n";
}

static void
HookTcpTraces(bool server, Ptr<Socket> s)
{
    if (!g_traceTcp)
    {
        return;
    }
    Ptr<TcpSocketBase> t = DynamicCast<TcpSocketBase>(s);
    NS_ABORT_MSG_IF(!t, "not a TcpSocketBase");
    const char* who = server ? "SECC" : "EVCC";
    t->TraceConnectWithoutContext("RTO", MakeBoundCallback(&TraceTime, who, "rto"));
    t->TraceConnectWithoutContext("RTT", MakeBoundCallback(&TraceTime, who, "srtt"));
    t->TraceConnectWithoutContext("LastRTT", MakeBoundCallback(&TraceTime, who, "rtt_sample"));
    t->TraceConnectWithoutContext("Tx", MakeBoundCallback(&TraceSegment, server ? "SECC tx" : "EVCC tx"));
    t->TraceConnectWithoutContext("Rx", MakeBoundCallback(&TraceSegment, server ? "SECC rx" : "EVCC rx"));
}

// ---------------------------------------------------------------------------
// Server (SECC): counts request bytes, answers each whole request at once
// ---------------------------------------------------------------------------
class SessionServer : public Application
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::VtlabSessionServer")
                                .SetParent<Application>()
                                .SetGroupName("Applications");
        return tid;
    }

    void Setup(uint16_t port, std::vector<const Step*> seq)
    {
        m_port = port;
        m_seq = std::move(seq);
    }

  private:
    void StartApplication() override
    {
        m_listen = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
        NS_ABORT_MSG_IF(m_listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port)) != 0,
                        "server: bind failed");
        m_listen->Listen();
        m_listen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                    MakeCallback(&SessionServer::Accepted, this));
    }

    void StopApplication() override
    {
        if (m_listen)
        {
            m_listen->Close();
        }
    }

    void Accepted(Ptr<Socket> s, const Address&)
    {
        NS_ABORT_MSG_IF(m_conn, "server: a second connection");
        m_conn = s;
        HookTcpTraces(true, s);
        s->SetRecvCallback(MakeCallback(&SessionServer::Readable, this));
    }

    void Readable(Ptr<Socket> s)
    {
        Ptr<Packet> p;
        while ((p = s->Recv()) && p->GetSize() > 0)
        {
            m_have += p->GetSize();
        }
        // Requests are back to back on the byte stream.
        while (m_next < m_seq.size() && m_have >= m_seq[m_next]->requestBytes)
        {
            m_have -= m_seq[m_next]->requestBytes;
            uint32_t n = m_seq[m_next]->responseBytes;
            int sent = s->Send(Create<Packet>(n));
            NS_ABORT_MSG_IF(sent != int(n), "server: Send of " << n << " bytes returned " << sent);
            ++m_next;
        }
    }

    uint16_t m_port{0};
    std::vector<const Step*> m_seq;
    Ptr<Socket> m_listen;
    Ptr<Socket> m_conn;
    size_t m_next{0};  // index of the request being received
    uint64_t m_have{0}; // bytes of it (and beyond) received so far
};

// ---------------------------------------------------------------------------
// Client (EVCC): writes the requests, times the responses
// ---------------------------------------------------------------------------
class SessionClient : public Application
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::VtlabSessionClient")
                                .SetParent<Application>()
                                .SetGroupName("Applications");
        return tid;
    }

    void Setup(Address peer, std::vector<const Step*> seq, bool abortOnMiss)
    {
        m_peer = peer;
        m_seq = std::move(seq);
        m_abortOnMiss = abortOnMiss;
    }

    const std::vector<Row>& Rows() const
    {
        return m_rows;
    }

    Time ConnectedAt() const
    {
        return m_connected;
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
        NS_ABORT_MSG_IF(m_socket->Bind() != 0, "client: bind failed");
        m_socket->SetConnectCallback(MakeCallback(&SessionClient::Connected, this),
                                     MakeCallback(&SessionClient::ConnectFailed, this));
        m_socket->SetRecvCallback(MakeCallback(&SessionClient::Readable, this));
        m_socket->SetCloseCallbacks(MakeCallback(&SessionClient::PeerClosed, this),
                                    MakeCallback(&SessionClient::ErrorClosed, this));
        HookTcpTraces(false, m_socket);
        m_socket->Connect(m_peer);
    }

    void StopApplication() override
    {
        m_abort.Cancel();
        m_nextRequest.Cancel();
    }

    void Connected(Ptr<Socket>)
    {
        m_connected = Simulator::Now();
        if (m_seq.empty())
        {
            EndSession(EndReason::Completed);
            return;
        }
        WriteRequest(); // rule 1: the first request at once
    }

    void ConnectFailed(Ptr<Socket>)
    {
        EndSession(EndReason::ConnectionFailed);
    }

    void PeerClosed(Ptr<Socket>)
    {
        EndSession(EndReason::PeerClosed);
    }

    void ErrorClosed(Ptr<Socket>)
    {
        EndSession(EndReason::ConnectionError);
    }

    void WriteRequest()
    {
        const Step* step = m_seq[m_rows.size()];
        Row r;
        r.step = step;
        r.request = Simulator::Now();
        m_rows.push_back(r);
        m_have = 0;
        int sent = m_socket->Send(Create<Packet>(step->requestBytes));
        NS_ABORT_MSG_IF(sent != int(step->requestBytes),
                        "client: Send of " << step->requestBytes << " bytes returned " << sent);
        if (m_abortOnMiss)
        {
            m_abort = Simulator::Schedule(step->timeout, &SessionClient::Deadline, this);
        }
    }

    void Deadline()
    {
        // rule 4: give up at t_req + timeout; the session ends (aborted)
        EndSession(EndReason::Aborted);
    }

    void Readable(Ptr<Socket> s)
    {
        Ptr<Packet> p;
        while ((p = s->Recv()) && p->GetSize() > 0)
        {
            m_have += p->GetSize();
        }
        if (g_end != EndReason::Running || m_rows.empty())
        {
            return;
        }
        Row& r = m_rows.back();
        if (r.answered || m_have < r.step->responseBytes)
        {
            return;
        }
        // rule 3: the whole response is here
        r.answered = true;
        r.response = Simulator::Now();
        m_have -= r.step->responseBytes;
        m_abort.Cancel();
        if (m_rows.size() == m_seq.size())
        {
            EndSession(EndReason::Completed);
            return;
        }
        Time at = r.request + r.step->period; // next request at max(t_resp, t_req + period)
        if (at > r.response)
        {
            m_nextRequest = Simulator::Schedule(at - r.response, &SessionClient::WriteRequest, this);
        }
        else
        {
            WriteRequest();
        }
    }

    Address m_peer;
    std::vector<const Step*> m_seq;
    bool m_abortOnMiss{false};
    Ptr<Socket> m_socket;
    std::vector<Row> m_rows;
    uint64_t m_have{0}; // response bytes received for the current request
    Time m_connected{-1};
    EventId m_abort;
    EventId m_nextRequest;
};

// ---------------------------------------------------------------------------
// Loss model (as v2g.cc)
// ---------------------------------------------------------------------------

// A BurstErrorModel whose two random variables use streams `stream` (burst start)
// and `stream + 1` (burst size). BurstErrorModel::AssignStreams would give both the
// same stream number (error-model.cc), so the variables are set here.
static Ptr<BurstErrorModel>
MakeBurstModel(double burstRate, int64_t stream)
{
    Ptr<UniformRandomVariable> start = CreateObject<UniformRandomVariable>();
    start->SetAttribute("Min", DoubleValue(0.0));
    start->SetAttribute("Max", DoubleValue(1.0));
    start->SetStream(stream);
    Ptr<UniformRandomVariable> size = CreateObject<UniformRandomVariable>();
    size->SetAttribute("Min", DoubleValue(1));
    size->SetAttribute("Max", DoubleValue(4));
    size->SetStream(stream + 1);
    Ptr<BurstErrorModel> em = CreateObject<BurstErrorModel>();
    em->SetAttribute("ErrorRate", DoubleValue(burstRate));
    em->SetRandomVariable(start);
    em->SetRandomBurstSize(size);
    return em;
}

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

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

static std::vector<std::string>
Split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    std::string cur;
    for (char c : s)
    {
        if (c == sep)
        {
            out.push_back(cur);
            cur.clear();
        }
        else
        {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

static bool
ParseUint(const std::string& s, uint64_t& v)
{
    if (s.empty() || s[0] == '-' || s[0] == '+')
    {
        return false;
    }
    char* end = nullptr;
    errno = 0;
    unsigned long long x = std::strtoull(s.c_str(), &end, 10);
    if (errno != 0 || *end != '\0')
    {
        return false;
    }
    v = x;
    return true;
}

static bool
ParseDouble(const std::string& s, double& v)
{
    if (s.empty())
    {
        return false;
    }
    char* end = nullptr;
    errno = 0;
    double x = std::strtod(s.c_str(), &end);
    if (errno != 0 || *end != '\0' || !(x == x))
    {
        return false;
    }
    v = x;
    return true;
}

// "name:req:resp:timeout:repeats:period;name:..." (seconds for timeout and period).
static bool
ParseSchedule(const std::string& text, std::vector<Step>& steps, std::string& err)
{
    for (const std::string& item : Split(text, ';'))
    {
        if (item.empty())
        {
            continue; // tolerate a trailing ';'
        }
        std::vector<std::string> f = Split(item, ':');
        if (f.size() != 6)
        {
            err = "step '" + item + "': want name:req:resp:timeout:repeats:period";
            return false;
        }
        Step s;
        uint64_t req = 0;
        uint64_t resp = 0;
        uint64_t rep = 0;
        double timeout = 0;
        double period = 0;
        if (f[0].empty() || !ParseUint(f[1], req) || !ParseUint(f[2], resp) ||
            !ParseDouble(f[3], timeout) || !ParseUint(f[4], rep) || !ParseDouble(f[5], period))
        {
            err = "step '" + item + "': bad field";
            return false;
        }
        if (req < 1 || resp < 1 || req > 0x7fffffffULL || resp > 0x7fffffffULL)
        {
            err = "step '" + item + "': request and response bytes must be 1 or more";
            return false;
        }
        if (rep < 1 || rep > 100000000ULL)
        {
            err = "step '" + item + "': repeats must be 1 or more";
            return false;
        }
        if (!(timeout > 0) || !(period >= 0))
        {
            err = "step '" + item + "': timeout must be > 0 and period >= 0";
            return false;
        }
        s.name = f[0];
        s.requestBytes = uint32_t(req);
        s.responseBytes = uint32_t(resp);
        s.timeout = Seconds(timeout);
        s.repeats = uint32_t(rep);
        s.period = Seconds(period);
        steps.push_back(s);
    }
    if (steps.empty())
    {
        err = "empty schedule";
        return false;
    }
    return true;
}

static std::string
JsonStr(const std::string& s)
{
    std::string o = "\"";
    for (unsigned char c : s)
    {
        if (c == '"' || c == '\\')
        {
            o += '\\';
            o += char(c);
        }
        else if (c < 0x20)
        {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            o += buf;
        }
        else
        {
            o += char(c);
        }
    }
    return o + "\"";
}

// A simulator time in seconds with all nine decimals (times are whole nanoseconds).
static std::string
Secs(Time t)
{
    int64_t ns = t.GetNanoSeconds();
    char buf[40];
    const char* sign = ns < 0 ? "-" : "";
    uint64_t a = ns < 0 ? uint64_t(-ns) : uint64_t(ns);
    std::snprintf(buf,
                  sizeof(buf),
                  "%s%" PRIu64 ".%09" PRIu64,
                  sign,
                  a / 1000000000ULL,
                  a % 1000000000ULL);
    return buf;
}

// ---------------------------------------------------------------------------
int
main(int argc, char* argv[])
{
    auto wall0 = std::chrono::steady_clock::now();

    uint32_t run = 1;
    uint32_t seed = 1;
    double burstRate = 0;
    double reverseBurstRate = 0;
    double lossStart = 0;
    std::string cc = "TcpNewReno";
    std::string tsStr;
    std::string sackStr;
    uint32_t delAckCount = 2;
    std::string schedule;
    bool abortOnMiss = false;
    double stop = -1;
    DataRate rate("10Mbps");
    Time delay = MicroSeconds(900);
    uint32_t mtu = 1500;
    uint32_t queuePackets = 100;
    uint32_t segmentSize = 1460;
    uint32_t initialCwnd = 10;
    double minRto = 1.0;
    uint32_t sndBuf = 131072;
    uint32_t rcvBuf = 131072;
    uint32_t dataRetries = 1000;

    CommandLine cmd(__FILE__);
    cmd.AddValue("run", "RngRun (the seed is fixed by --seed)", run);
    cmd.AddValue("seed", "RngSeed", seed);
    cmd.AddValue("burstRate", "burst-start probability toward the EVCC (BurstErrorModel on the EVCC's device)", burstRate);
    cmd.AddValue("reverseBurstRate", "burst-start probability toward the SECC (BurstErrorModel on the SECC's device)", reverseBurstRate);
    cmd.AddValue("lossStart", "the error models drop packets from this simulated time on (s; testing)", lossStart);
    cmd.AddValue("cc", "congestion control TypeId suffix (TcpNewReno, TcpCubic, ...)", cc);
    cmd.AddValue("timestamps", "TCP timestamps true|false (default: ns-3 default, true)", tsStr);
    cmd.AddValue("sack", "SACK true|false (default: ns-3 default, true)", sackStr);
    cmd.AddValue("delAckCount", "TcpSocket::DelAckCount", delAckCount);
    cmd.AddValue("schedule", "name:req:resp:timeout:repeats:period;... (bytes, seconds)", schedule);
    cmd.AddValue("abortOnMiss", "end the session when a response misses its deadline", abortOnMiss);
    cmd.AddValue("stop", "simulated stop time in s (default: until the session ends)", stop);
    cmd.AddValue("rate", "link data rate", rate);
    cmd.AddValue("delay", "link propagation delay", delay);
    cmd.AddValue("mtu", "point-to-point Mtu", mtu);
    cmd.AddValue("queuePackets", "drop-tail device queue size (packets)", queuePackets);
    cmd.AddValue("segmentSize", "TcpSocket::SegmentSize (MSS)", segmentSize);
    cmd.AddValue("initialCwnd", "TcpSocket::InitialCwnd (segments)", initialCwnd);
    cmd.AddValue("minRto", "TcpSocketBase::MinRto in s", minRto);
    cmd.AddValue("sndBuf", "TcpSocket::SndBufSize", sndBuf);
    cmd.AddValue("rcvBuf", "TcpSocket::RcvBufSize", rcvBuf);
    cmd.AddValue("dataRetries", "TcpSocket::DataRetries", dataRetries);
    cmd.AddValue("traceTcp", "print both sockets' segments, RTT samples and RTO on stderr", g_traceTcp);
    bool traceLoss = false;
    cmd.AddValue("traceLoss", "print the positions of the packets each error model lost on stderr", traceLoss);
    cmd.Parse(argc, argv);

    std::vector<Step> steps;
    std::string err;
    if (!ParseSchedule(schedule, steps, err))
    {
        std::cerr << "bad --schedule: " << err << "\n";
        return 2;
    }
    int ts = -1;
    int sack = -1;
    if (!ParseTriBool(tsStr, "timestamps", ts) || !ParseTriBool(sackStr, "sack", sack))
    {
        return 2;
    }
    if (!(burstRate >= 0 && burstRate <= 1) || !(reverseBurstRate >= 0 && reverseBurstRate <= 1))
    {
        std::cerr << "--burstRate and --reverseBurstRate must be in [0, 1]\n";
        return 2;
    }
    if (delAckCount < 1)
    {
        std::cerr << "--delAckCount must be at least 1\n";
        return 2;
    }

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    // ---------------- TCP configuration (as v2g.cc) ----------------
    TypeId ccTid;
    if (!TypeId::LookupByNameFailSafe("ns3::" + cc, &ccTid))
    {
        std::cerr << "unknown congestion control ns3::" << cc << "\n";
        return 2;
    }
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(ccTid));
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
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwnd));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(dataRetries));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));

    // ---------------- topology: SECC (node 0) -- EVCC (node 1) ----------------
    NodeContainer nodes;
    nodes.Create(2);
    Ptr<Node> secc = nodes.Get(0);
    Ptr<Node> evcc = nodes.Get(1);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(rate));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    p2p.SetChannelAttribute("Delay", TimeValue(delay));
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePackets)));
    // No NetDeviceQueueInterface: Ipv4AddressHelper::Assign installs no queue disc
    // (v2g.cc --qdisc none).
    p2p.DisableFlowControl();
    NetDeviceContainer devs = p2p.Install(secc, evcc);
    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.2.0", "255.255.255.0");
    Ipv4InterfaceContainer ifc = addr.Assign(devs);
    {
        TrafficControlHelper tch;
        for (uint32_t i = 0; i < devs.GetN(); ++i)
        {
            Ptr<NetDevice> d = devs.Get(i);
            if (d->GetNode()->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(d))
            {
                tch.Uninstall(d);
            }
        }
    }

    // ---------------- loss ----------------
    std::vector<Ptr<BurstErrorModel>> models;
    if (burstRate > 0)
    {
        models.push_back(MakeBurstModel(burstRate, 0));
        devs.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(models.back()));
    }
    if (reverseBurstRate > 0)
    {
        models.push_back(MakeBurstModel(reverseBurstRate, 2));
        devs.Get(0)->SetAttribute("ReceiveErrorModel", PointerValue(models.back()));
    }
    if (lossStart > 0)
    {
        for (Ptr<BurstErrorModel>& m : models)
        {
            m->Disable();
            Simulator::Schedule(Seconds(lossStart), &ErrorModel::Enable, m);
        }
    }

    // Every packet a device receives passes its error model: PhyRxDrop if lost,
    // PhyRxEnd if not (PointToPointNetDevice::Receive).
    LossTrace towardSecc;
    LossTrace towardEvcc;
    if (traceLoss)
    {
        devs.Get(0)->TraceConnectWithoutContext("PhyRxEnd", MakeBoundCallback(&CountDelivered, &towardSecc));
        devs.Get(0)->TraceConnectWithoutContext("PhyRxDrop", MakeBoundCallback(&CountLost, &towardSecc));
        devs.Get(1)->TraceConnectWithoutContext("PhyRxEnd", MakeBoundCallback(&CountDelivered, &towardEvcc));
        devs.Get(1)->TraceConnectWithoutContext("PhyRxDrop", MakeBoundCallback(&CountLost, &towardEvcc));
    }

    // ---------------- applications ----------------
    const uint16_t port = 50000;
    std::vector<const Step*> seq = Expand(steps);
    Ptr<SessionServer> server = CreateObject<SessionServer>();
    server->Setup(port, seq);
    secc->AddApplication(server);
    server->SetStartTime(Seconds(0));
    Ptr<SessionClient> client = CreateObject<SessionClient>();
    client->Setup(InetSocketAddress(ifc.GetAddress(0), port), seq, abortOnMiss);
    evcc->AddApplication(client);
    client->SetStartTime(Seconds(0.1)); // t0: the client connects

    if (stop > 0)
    {
        Simulator::Stop(Seconds(stop));
    }
    Simulator::Run();
    Time end = g_end != EndReason::Running ? g_endTime : Simulator::Now();
    const bool stopped = g_end == EndReason::Running;

    // ---------------- output ----------------
    const std::vector<Row>& rows = client->Rows();
    uint64_t misses = 0;
    std::ostringstream out;
    for (size_t i = 0; i < rows.size(); ++i)
    {
        const Row& r = rows[i];
        bool missed;
        if (r.answered)
        {
            missed = r.response - r.request > r.step->timeout;
        }
        else
        {
            // no response: a miss if its deadline came before the session ended
            missed = end - r.request >= r.step->timeout;
        }
        misses += missed;
        out << "{\"index\": " << i << ", \"name\": " << JsonStr(r.step->name)
            << ", \"request_s\": " << Secs(r.request) << ", \"response_s\": "
            << (r.answered ? Secs(r.response) : "null") << ", \"response_time_s\": "
            << (r.answered ? Secs(r.response - r.request) : "null")
            << ", \"missed\": " << (missed ? "true" : "false") << "}\n";
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const bool completed = g_end == EndReason::Completed;
    Time connected = client->ConnectedAt();
    out << "{\"summary\": true, \"completed\": " << (completed ? "true" : "false")
        << ", \"messages\": " << rows.size() << ", \"misses\": " << misses
        << ", \"wall_s\": " << wall << ", \"aborted\": "
        << (g_end == EndReason::Aborted ? "true" : "false") << ", \"end\": \""
        << (stopped ? (stop > 0 ? "stop" : "no_events") : ReasonName(g_end)) << "\", \"end_s\": " << Secs(end)
        << ", \"connected_s\": " << (connected.IsStrictlyPositive() ? Secs(connected) : "null")
        << ", \"scheduled\": " << seq.size() << "}\n";
    std::cout << out.str() << std::flush;
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
