#!/usr/bin/env python3
"""ns-3 (PyPI wheel 'ns3', cppyy bindings) DCTCP incast/dumbbell speed anchor.

Copied from the project's shared anchor (anchors/ns3_dctcp_dumbbell.py) and
extended for the validation in docs/validation.md: one sink per sender (so
per-flow bytes give fairness) and an optional queue-sampling mode
(--sample-us) that steps the simulator and reads the bottleneck queue disc.
With --sample-us 0 (default) the timed run is the anchor's, unchanged.

Topology: N senders -> 1 switch -> 1 receiver, all links 10 Gbps / 10 us.
Every egress port (hosts and switch) has a RED queue disc configured as DCTCP
ECN marking: QW=1 (instantaneous queue), MinTh=MaxTh=K=65 packets,
Gentle=false, UseEcn=true, UseHardDrop=false, MaxSize=1000p.
PointToPoint device TX queue is shrunk to 1p so the queue disc holds the backlog.
TCP: ns3::TcpDctcp everywhere, MSS 1448, DelAck 2.
Each sender: BulkSend of --bytes (default 10 MB) starting at t=0 (+tiny jitter).
Run for --simtime (default 0.1 s).

Reports: setup wall s, Simulator::Run wall s, simulated s, events executed,
data packets delivered to the receiver (dequeues at switch->receiver port),
total packet-hops (sum of queue-disc enqueues over all ports, data + ACKs),
ECN marks / drops at the bottleneck.
"""

import argparse
import json
import time

T_IMPORT0 = time.time()
from ns import ns  # type: ignore[import-not-found]  # noqa: E402

T_IMPORT = time.time() - T_IMPORT0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--senders", type=int, default=16)
    ap.add_argument("--simtime", type=float, default=0.1)
    ap.add_argument("--bytes", type=int, default=10_000_000)
    ap.add_argument("--k", type=int, default=65)
    ap.add_argument("--qlimit", type=int, default=1000)
    ap.add_argument("--delack", type=int, default=1, help="TcpSocket::DelAckCount")
    ap.add_argument(
        "--delack-timeout-us",
        type=float,
        default=200000.0,
        help="TcpSocket::DelAckTimeout (ns-3 default 200 ms)",
    )
    ap.add_argument("--json", default="")
    ap.add_argument(
        "--sample-us",
        type=float,
        default=0.0,
        help="sample the bottleneck queue every this many us (stepped run; do not time it)",
    )
    a = ap.parse_args()

    t0 = time.time()
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)
    ns.GlobalValue.Bind("ChecksumEnabled", ns.BooleanValue(False))

    # TCP / DCTCP
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpDctcp"))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(a.delack))
    ns.Config.SetDefault(
        "ns3::TcpSocket::DelAckTimeout",
        ns.TimeValue(ns.NanoSeconds(int(a.delack_timeout_us * 1000))),
    )
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 20))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 20))
    ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(5)))

    # RED as DCTCP marker
    ns.Config.SetDefault("ns3::RedQueueDisc::UseEcn", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::RedQueueDisc::UseHardDrop", ns.BooleanValue(False))
    ns.Config.SetDefault("ns3::RedQueueDisc::Gentle", ns.BooleanValue(False))
    ns.Config.SetDefault("ns3::RedQueueDisc::MeanPktSize", ns.UintegerValue(1500))
    ns.Config.SetDefault("ns3::RedQueueDisc::QW", ns.DoubleValue(1.0))
    ns.Config.SetDefault("ns3::RedQueueDisc::MinTh", ns.DoubleValue(float(a.k)))
    ns.Config.SetDefault("ns3::RedQueueDisc::MaxTh", ns.DoubleValue(float(a.k)))
    ns.Config.SetDefault(
        "ns3::RedQueueDisc::MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{a.qlimit}p"))
    )
    ns.Config.SetDefault(
        "ns3::RedQueueDisc::LinkBandwidth", ns.DataRateValue(ns.DataRate("10Gbps"))
    )
    ns.Config.SetDefault("ns3::RedQueueDisc::LinkDelay", ns.TimeValue(ns.MicroSeconds(10)))

    senders = ns.NodeContainer()
    senders.Create(a.senders)
    sw = ns.NodeContainer()
    sw.Create(1)
    rx = ns.NodeContainer()
    rx.Create(1)

    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue("10Gbps"))
    p2p.SetChannelAttribute("Delay", ns.StringValue("10us"))

    stack = ns.InternetStackHelper()
    stack.Install(senders)
    stack.Install(sw)
    stack.Install(rx)

    tch = ns.TrafficControlHelper()
    tch.SetRootQueueDisc("ns3::RedQueueDisc")

    addr = ns.Ipv4AddressHelper()
    all_qdiscs = []
    devlist = []
    for i in range(a.senders):
        d = p2p.Install(senders.Get(i), sw.Get(0))
        devlist.append(d)
        all_qdiscs.append(tch.Install(d))
        addr.SetBase(ns.Ipv4Address(f"10.{1 + i // 250}.{i % 250}.0"), ns.Ipv4Mask("255.255.255.0"))
        addr.Assign(d)
    dr = p2p.Install(sw.Get(0), rx.Get(0))
    devlist.append(dr)
    qd_r = tch.Install(dr)
    all_qdiscs.append(qd_r)
    addr.SetBase(ns.Ipv4Address("10.250.0.0"), ns.Ipv4Mask("255.255.255.0"))
    rif = addr.Assign(dr)
    bottleneck = qd_r.Get(0)  # switch-side device of switch->receiver link

    # shrink device TX queues to 1 packet so backlog lives in the RED qdisc
    ns.Config.Set(
        "/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/TxQueue/MaxSize",
        ns.QueueSizeValue(ns.QueueSize("1p")),
    )

    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    port = 5000
    sinks = []
    for i in range(a.senders):
        sink_h = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory",
            ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port + i).ConvertTo(),
        )
        sink_apps = sink_h.Install(rx.Get(0))
        sink_apps.Start(ns.Seconds(0.0))
        sink_apps.Stop(ns.Seconds(a.simtime + 1))
        sinks.append(sink_apps)

    uv = ns.CreateObject[ns.UniformRandomVariable]()
    for i in range(a.senders):
        dst = ns.InetSocketAddress(rif.GetAddress(1), port + i).ConvertTo()
        bh = ns.BulkSendHelper("ns3::TcpSocketFactory", dst)
        bh.SetAttribute("MaxBytes", ns.UintegerValue(a.bytes))
        bh.SetAttribute("SendSize", ns.UintegerValue(1448))
        apps = bh.Install(senders.Get(i))
        apps.Start(ns.MicroSeconds(int(uv.GetValue(0, 10))))
        apps.Stop(ns.Seconds(a.simtime + 1))

    ns.Simulator.Stop(ns.Seconds(a.simtime))
    t_setup = time.time() - t0

    qsamples = []
    t1 = time.time()
    if a.sample_us > 0:
        step = ns.NanoSeconds(int(a.sample_us * 1000))
        n = int(round(a.simtime * 1e6 / a.sample_us))
        for _ in range(n):
            qsamples.append(int(bottleneck.GetNPackets()))
            ns.Simulator.Stop(step)
            ns.Simulator.Run()
    else:
        ns.Simulator.Run()
    t_run = time.time() - t1
    sim_s = ns.Simulator.Now().GetSeconds()
    events = int(ns.Simulator.GetEventCount())

    per_flow = [int(ns.DynamicCast[ns.PacketSink](s.Get(0)).GetTotalRx()) for s in sinks]
    rx_bytes = sum(per_flow)

    st = bottleneck.GetStats()
    bn = dict(
        enq=int(st.nTotalEnqueuedPackets),
        deq=int(st.nTotalDequeuedPackets),
        drop=int(st.nTotalDroppedPackets),
        mark=int(st.nTotalMarkedPackets),
        forced_mark=int(st.GetNMarkedPackets("Forced mark")),
        unforced_mark=int(st.GetNMarkedPackets("Unforced mark")),
    )
    hops = 0
    drops = 0
    marks = 0
    for qc in all_qdiscs:
        for j in range(qc.GetN()):
            s = qc.Get(j).GetStats()
            hops += int(s.nTotalEnqueuedPackets)
            drops += int(s.nTotalDroppedPackets)
            marks += int(s.nTotalMarkedPackets)
    ns.Simulator.Destroy()

    res = dict(
        tool="ns-3 3.44 (PyPI wheel, cppyy)",
        scenario="dumbbell-dctcp",
        senders=a.senders,
        simtime=sim_s,
        import_wall=round(T_IMPORT, 2),
        setup_wall=round(t_setup, 3),
        run_wall=round(t_run, 3),
        events=events,
        rx_bytes=rx_bytes,
        rx_data_pkts=bn["deq"],
        goodput_gbps=rx_bytes * 8 / sim_s / 1e9,
        packet_hops=hops,
        drops_total=drops,
        marks_total=marks,
        bottleneck=bn,
        events_per_wall_s=events / t_run,
        rx_pkts_per_wall_s=bn["deq"] / t_run,
        hops_per_wall_s=hops / t_run,
        per_flow_rx_bytes=per_flow,
        queue_samples_pkts=qsamples,
        sample_us=a.sample_us,
    )
    brief = {k: v for k, v in res.items() if k not in ("queue_samples_pkts", "per_flow_rx_bytes")}
    print(json.dumps(brief, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
