// ns-3 3.44 side of the contention comparisons (issue 12): a late-starting
// flow, and rounds of incast. Built by benches/ns3/contention.py against the
// PyPI wheel's headers and shared libraries (no Python bindings needed).
//
// Topology: N senders -> 1 switch -> 1 receiver, every link 10 Gbps / 10 us,
// point-to-point device TX queue 1 packet so the backlog sits in the queue
// disc (as the project's anchor, benches/ns3/ns3_dctcp_dumbbell.py).
//
//   --scenario=late    DCTCP bulk flows, flow i starts at --starts[i] s;
//                      every egress port (hosts too) a RED queue disc as
//                      DCTCP marking, K = 65, 1000 packets (the anchor's).
//   --scenario=incast  --rounds rounds, round r starting at r * --gap s: each
//                      sender opens a new connection and sends --bytes; the
//                      switch port to the receiver a FIFO of --qlimit packets
//                      (tail drop, no ECN), every other port a 1000-packet FIFO.
//
// Prints one JSON object: per flow bytes received, completion time, RTOs
// (entries into CA_LOSS) and fast recoveries (entries into CA_RECOVERY).
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

struct FlowRec
{
    uint32_t sender;
    uint32_t round;
    double start;
    uint64_t target; // 0 = unbounded
    uint64_t rx{0};
    double done{-1};
    uint32_t rtos{0};
    uint32_t recoveries{0};
    Ptr<Application> app;
};

static std::vector<FlowRec> g_flows;
static uint64_t g_hops = 0;

static void
OnPhyTx(Ptr<const Packet>)
{
    g_hops++;
}

static bool g_trace = false;
static uint16_t g_port = 5000;

// --trace=1: one stderr line per data segment a sender's TCP emits
// ("tx,t_ns,flow,seq,len"), per bottleneck drop ("drop,t_ns,flow,seq,len";
// seq counts payload bytes from 0) and per congestion-state change
// ("state,t_ns,flow,from,to"), to compare flows packet by packet.
static void
OnDrop(Ptr<const QueueDiscItem> item)
{
    Ptr<Packet> p = item->GetPacket()->Copy();
    TcpHeader th;
    if (p->PeekHeader(th) == 0)
    {
        return;
    }
    uint32_t f = th.GetDestinationPort() - g_port;
    fprintf(stderr, "drop,%ld,%u,%u,%u\n", (long)Simulator::Now().GetNanoSeconds(), f,
            th.GetSequenceNumber().GetValue() - 1, p->GetSize() - th.GetSerializedSize());
}

static void
OnRx(uint32_t f, Ptr<const Packet> p, const Address&)
{
    FlowRec& r = g_flows[f];
    r.rx += p->GetSize();
    if (r.target > 0 && r.done < 0 && r.rx >= r.target)
    {
        r.done = Simulator::Now().GetSeconds();
    }
}

static void
OnCongState(uint32_t f, TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t now)
{
    if (g_trace)
    {
        fprintf(stderr, "state,%ld,%u,%d,%d\n", (long)Simulator::Now().GetNanoSeconds(), f,
                (int)from, (int)now);
    }
    if (now == TcpSocketState::CA_LOSS)
    {
        g_flows[f].rtos++;
    }
    else if (now == TcpSocketState::CA_RECOVERY)
    {
        g_flows[f].recoveries++;
    }
}

static void
OnBottleneckTx(Ptr<const Packet> p)
{
    fprintf(stderr, "btx,%ld,%u\n", (long)Simulator::Now().GetNanoSeconds(), p->GetSize());
}

static void
OnSenderTx(uint32_t f, Ptr<const Packet> p)
{
    if (p->GetSize() > 1000)
    {
        fprintf(stderr, "ntx,%ld,%u\n", (long)Simulator::Now().GetNanoSeconds(), f);
    }
}

static void
OnTx(uint32_t f, Ptr<const Packet> p, const TcpHeader& th, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() > 0)
    {
        fprintf(stderr, "tx,%ld,%u,%u,%u\n", (long)Simulator::Now().GetNanoSeconds(), f,
                th.GetSequenceNumber().GetValue() - 1, p->GetSize());
    }
}

static void
Hook(uint32_t f)
{
    Ptr<Socket> s = DynamicCast<BulkSendApplication>(g_flows[f].app)->GetSocket();
    if (g_trace)
    {
        s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, f));
    }
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, f));
}

static std::vector<double>
ParseList(const std::string& s)
{
    std::vector<double> v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        v.push_back(std::stod(item));
    }
    return v;
}

int
main(int argc, char* argv[])
{
    std::string scenario = "late";
    std::string tcp = "dctcp";
    std::string starts = "0,0.02";
    uint32_t senders = 2;
    uint32_t rounds = 5;
    double gap = 0.05;
    uint64_t bytes = 0;
    uint32_t qlimit = 100;
    uint32_t k = 65;
    uint32_t iw = 10;
    double minRtoMs = 5.0;
    double simtime = 0.1;
    bool sack = true;
    bool limitedTx = true;
    std::string recovery = "prr";
    double jitterUs = 0;
    uint32_t run = 1;
    CommandLine cmd;
    cmd.AddValue("scenario", "late or incast", scenario);
    cmd.AddValue("tcp", "dctcp or newreno", tcp);
    cmd.AddValue("starts", "late: start time (s) of each flow, comma separated", starts);
    cmd.AddValue("senders", "incast: senders", senders);
    cmd.AddValue("rounds", "incast: rounds", rounds);
    cmd.AddValue("gap", "incast: seconds between round starts", gap);
    cmd.AddValue("bytes", "bytes per flow (0 = unbounded)", bytes);
    cmd.AddValue("qlimit", "incast: bottleneck FIFO packets", qlimit);
    cmd.AddValue("k", "late: RED / DCTCP marking threshold, packets", k);
    cmd.AddValue("iw", "initial window, segments", iw);
    cmd.AddValue("minrto", "minimum RTO, ms", minRtoMs);
    cmd.AddValue("simtime", "simulated seconds", simtime);
    cmd.AddValue("sack", "TcpSocketBase::Sack", sack);
    cmd.AddValue("limitedtx", "TcpSocketBase::LimitedTransmit", limitedTx);
    cmd.AddValue("recovery", "prr (ns-3 default) or classic", recovery);
    bool countHops = false;
    cmd.AddValue("hops", "count link transmissions (PhyTxBegin) and time Simulator::Run", countHops);
    cmd.AddValue("jitter", "incast: each flow starts up to this many us late (uniform)", jitterUs);
    cmd.AddValue("run", "RngRun (the jitter's stream)", run);
    cmd.AddValue("trace", "print drops and state changes to stderr", g_trace);
    cmd.Parse(argc, argv);

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(run);
    GlobalValue::Bind("ChecksumEnabled", BooleanValue(false));
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       StringValue(tcp == "dctcp" ? "ns3::TcpDctcp" : "ns3::TcpNewReno"));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(recovery == "prr" ? TcpPrrRecovery::GetTypeId()
                                                     : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(iw));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 20));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MicroSeconds(minRtoMs * 1000)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limitedTx));
    if (tcp == "dctcp")
    {
        Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
    }

    bool late = scenario == "late";
    std::vector<double> startList = ParseList(starts);
    if (late)
    {
        senders = startList.size();
        rounds = 1;
    }

    NodeContainer tx;
    tx.Create(senders);
    NodeContainer sw;
    sw.Create(1);
    NodeContainer rx;
    rx.Create(1);
    InternetStackHelper stack;
    stack.InstallAll();
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    p2p.SetChannelAttribute("Delay", StringValue("10us"));

    TrafficControlHelper red;
    red.SetRootQueueDisc("ns3::RedQueueDisc",
                         "UseEcn", BooleanValue(true),
                         "UseHardDrop", BooleanValue(false),
                         "Gentle", BooleanValue(false),
                         "MeanPktSize", UintegerValue(1500),
                         "QW", DoubleValue(1.0),
                         "MinTh", DoubleValue(k),
                         "MaxTh", DoubleValue(k),
                         "MaxSize", QueueSizeValue(QueueSize("1000p")),
                         "LinkBandwidth", DataRateValue(DataRate("10Gbps")),
                         "LinkDelay", TimeValue(MicroSeconds(10)));
    TrafficControlHelper fifoBig;
    fifoBig.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("1000p")));
    TrafficControlHelper fifoSmall;
    std::ostringstream ql;
    ql << qlimit << "p";
    fifoSmall.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize(ql.str())));

    Ipv4AddressHelper addr;
    QueueDiscContainer bottleneck;
    for (uint32_t i = 0; i < senders; i++)
    {
        NetDeviceContainer d = p2p.Install(tx.Get(i), sw.Get(0));
        (late ? red : fifoBig).Install(d);
        std::ostringstream base;
        base << "10." << 1 + i / 250 << "." << i % 250 << ".0";
        addr.SetBase(base.str().c_str(), "255.255.255.0");
        addr.Assign(d);
    }
    NetDeviceContainer dr = p2p.Install(sw.Get(0), rx.Get(0));
    if (late)
    {
        bottleneck = red.Install(dr);
    }
    else
    {
        bottleneck.Add(fifoSmall.Install(dr.Get(0)));
        fifoBig.Install(dr.Get(1));
    }
    addr.SetBase("10.250.0.0", "255.255.255.0");
    Ipv4InterfaceContainer rif = addr.Assign(dr);
    Config::Set("/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/TxQueue/MaxSize",
                QueueSizeValue(QueueSize("1p")));
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    Ptr<UniformRandomVariable> jit = CreateObject<UniformRandomVariable>();
    jit->SetAttribute("Min", DoubleValue(0));
    jit->SetAttribute("Max", DoubleValue(jitterUs * 1e-6));
    uint16_t port = g_port;
    if (g_trace)
    {
        bottleneck.Get(0)->TraceConnectWithoutContext("Drop", MakeCallback(&OnDrop));
        dr.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnBottleneckTx));
        for (uint32_t i = 0; i < senders; i++)
        {
            tx.Get(i)->GetDevice(1)->TraceConnectWithoutContext(
                "PhyTxBegin", MakeBoundCallback(&OnSenderTx, i));
        }
    }
    for (uint32_t r = 0; r < rounds; r++)
    {
        for (uint32_t i = 0; i < senders; i++)
        {
            FlowRec f;
            f.sender = i;
            f.round = r;
            f.start = late ? startList[i] : r * gap + (jitterUs > 0 ? jit->GetValue() : 0);
            f.target = bytes;
            uint32_t id = g_flows.size();
            PacketSinkHelper sink("ns3::TcpSocketFactory",
                                  InetSocketAddress(Ipv4Address::GetAny(), port + id));
            ApplicationContainer sa = sink.Install(rx.Get(0));
            sa.Start(Seconds(0));
            sa.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, id));
            BulkSendHelper bh("ns3::TcpSocketFactory",
                              InetSocketAddress(rif.GetAddress(1), port + id));
            bh.SetAttribute("MaxBytes", UintegerValue(bytes));
            bh.SetAttribute("SendSize", UintegerValue(1448));
            ApplicationContainer a = bh.Install(tx.Get(i));
            a.Start(Seconds(f.start));
            f.app = a.Get(0);
            g_flows.push_back(f);
            Simulator::Schedule(Seconds(f.start) + NanoSeconds(1), &Hook, id);
        }
    }
    Simulator::Stop(Seconds(simtime));
    if (countHops)
    {
        Config::ConnectWithoutContext("/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/PhyTxBegin",
                                      MakeCallback(&OnPhyTx));
    }
    auto wall0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double runWall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    QueueDisc::Stats st = bottleneck.Get(0)->GetStats();
    printf("{\"tool\": \"ns-3 3.44 (C++ against the PyPI wheel)\", \"scenario\": \"%s\", "
           "\"tcp\": \"%s\", \"sack\": %s, \"limited_transmit\": %s, \"recovery\": \"%s\", "
           "\"bottleneck_drops\": %u, \"bottleneck_marks\": %u, \"run_wall_s\": %.6f, "
           "\"hops\": %lu, \"flows\": [",
           scenario.c_str(), tcp.c_str(), sack ? "true" : "false",
           limitedTx ? "true" : "false", recovery.c_str(), st.nTotalDroppedPackets,
           st.nTotalMarkedPackets, runWall, (unsigned long)g_hops);
    for (size_t i = 0; i < g_flows.size(); i++)
    {
        const FlowRec& f = g_flows[i];
        printf("%s{\"sender\": %u, \"round\": %u, \"start\": %.9f, \"rx_bytes\": %lu, "
               "\"done\": %.9f, \"rtos\": %u, \"recoveries\": %u}",
               i ? ", " : "", f.sender, f.round, f.start, (unsigned long)f.rx, f.done, f.rtos,
               f.recoveries);
    }
    printf("]}\n");
    Simulator::Destroy();
    return 0;
}
