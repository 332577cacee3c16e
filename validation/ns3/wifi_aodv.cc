// vtlab validation: the 802.11 vehicular chain of wifi.cc with AODV instead of static
// routes.
//
// This file is wifi.cc, unchanged (included at the end), with two substitutions made
// before it is compiled:
//   * InternetStackHelper installs ns-3's AODV (AodvHelper, every attribute at its
//     ns-3.44 default: HELLO every 1 s, ActiveRouteTimeout 3 s, AllowedHelloLoss 2,
//     expanding ring TTL 1, 3, 5, 7 then 35, ...) as the nodes' only routing protocol;
//   * Ipv4StaticRoutingHelper hands wifi.cc a static routing object that belongs to no
//     node, so the host routes wifi.cc adds along the chain go nowhere.
// Everything else (radio, MAC, TCP, arguments, the config and result lines) is
// wifi.cc's. vtlab builds the two files as one source (python/vtlab/validation/
// wifi_aodv.py), so that its run cache follows either file.
//
// Extra output (stdout), after wifi.cc's lines: one JSON object of kind "aodv": the
// AODV control packets every node sent (by type, HELLOs apart from other RREPs), their
// IP bytes, and when the sink received its first byte (s).
//
// Written for vtlab against the public ns-3.44 API.

#include "ns3/aodv-module.h"
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
#include <sstream>
#include <string>
#include <vector>

namespace vtlab_aodv
{

// The stack wifi.cc installs, with AODV as its routing protocol.
class AodvStack : public ns3::InternetStackHelper
{
  public:
    AodvStack()
    {
        SetRoutingHelper(ns3::AodvHelper());
    }
};

// ARP as ns-3 runs it: wifi.cc's pre-filled caches would hold "auto-generated"
// entries, which AODV's neighbour table cannot map to MAC addresses
// (aodv::Neighbors::LookupMacAddress takes alive or permanent entries only), so the MAC's
// failed transmissions would never reach AODV. Here the caches are left empty and ARP
// resolves every neighbour on first use.
class DynamicArp
{
  public:
    void PopulateNeighborCache(const ns3::Ipv4InterfaceContainer&) const
    {
    }
};

// Static routing that belongs to no node: wifi.cc's host routes have no effect.
class NoStaticRoutes
{
  public:
    ns3::Ptr<ns3::Ipv4StaticRouting> GetStaticRouting(ns3::Ptr<ns3::Ipv4>) const
    {
        return ns3::CreateObject<ns3::Ipv4StaticRouting>();
    }
};

struct Counters
{
    uint64_t rreq{0};
    uint64_t rrep{0};
    uint64_t hello{0};
    uint64_t rerr{0};
    uint64_t rrepAck{0};
    uint64_t bytes{0};
    double firstRxS{-1};
};

Counters g_aodv;

// Every IP packet a node sends: count AODV's (UDP port 654).
void
OnIpTx(ns3::Ptr<const ns3::Packet> packet, ns3::Ptr<ns3::Ipv4>, uint32_t)
{
    ns3::Ptr<ns3::Packet> p = packet->Copy();
    ns3::Ipv4Header ip;
    p->RemoveHeader(ip);
    if (ip.GetProtocol() != ns3::UdpL4Protocol::PROT_NUMBER)
    {
        return;
    }
    ns3::UdpHeader udp;
    p->RemoveHeader(udp);
    if (udp.GetDestinationPort() != ns3::aodv::RoutingProtocol::AODV_PORT)
    {
        return;
    }
    g_aodv.bytes += packet->GetSize();
    ns3::aodv::TypeHeader type;
    p->RemoveHeader(type);
    switch (type.Get())
    {
    case ns3::aodv::AODVTYPE_RREQ:
        g_aodv.rreq++;
        break;
    case ns3::aodv::AODVTYPE_RREP: {
        ns3::aodv::RrepHeader rrep;
        p->RemoveHeader(rrep);
        (rrep.GetDst() == rrep.GetOrigin() ? g_aodv.hello : g_aodv.rrep)++;
        break;
    }
    case ns3::aodv::AODVTYPE_RERR:
        g_aodv.rerr++;
        break;
    case ns3::aodv::AODVTYPE_RREP_ACK:
        g_aodv.rrepAck++;
        break;
    }
}

void
OnSinkRx(ns3::Ptr<const ns3::Packet>, const ns3::Address&)
{
    if (g_aodv.firstRxS < 0)
    {
        g_aodv.firstRxS = ns3::Simulator::Now().GetSeconds();
    }
}

// At time 0, once wifi.cc has built everything: hook the traces.
void
Hook()
{
    ns3::Config::ConnectWithoutContext("/NodeList/*/$ns3::Ipv4L3Protocol/Tx",
                                       ns3::MakeCallback(&OnIpTx));
    ns3::Config::ConnectWithoutContext("/NodeList/*/ApplicationList/*/$ns3::PacketSink/Rx",
                                       ns3::MakeCallback(&OnSinkRx));
}

} // namespace vtlab_aodv

#define InternetStackHelper vtlab_aodv::AodvStack
#define Ipv4StaticRoutingHelper vtlab_aodv::NoStaticRoutes
#define NeighborCacheHelper vtlab_aodv::DynamicArp
#define main vtlab_wifi_main
#include "wifi.cc"
#undef main
#undef NeighborCacheHelper
#undef Ipv4StaticRoutingHelper
#undef InternetStackHelper

int
main(int argc, char* argv[])
{
    ns3::Simulator::Schedule(ns3::Seconds(0), &vtlab_aodv::Hook);
    const int rc = vtlab_wifi_main(argc, argv);
    const auto& c = vtlab_aodv::g_aodv;
    std::cout << "{\"kind\":\"aodv\",\"rreq_tx\":" << c.rreq << ",\"rrep_tx\":" << c.rrep
              << ",\"hello_tx\":" << c.hello << ",\"rerr_tx\":" << c.rerr
              << ",\"rrep_ack_tx\":" << c.rrepAck << ",\"ip_bytes\":" << c.bytes
              << ",\"first_rx_s\":" << c.firstRxS << "}" << std::endl;
    return rc;
}
