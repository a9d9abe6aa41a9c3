//! From a checked scenario file to a ready [`Simulator`].

use super::classes::{job_class, queue_follows, training};
use super::schema::ScenarioFile;
use super::switch::{switch_config, DEFAULT_BUFFER_KB, DEFAULT_QUEUES};
use super::{invalid, positive, us, ScenarioError};
use crate::atp::{AtpAdapter, AtpSetup};
use crate::engine::SamplePorts;

/// The most packet events a trace may keep (`output.trace_packets`).
const MAX_TRACE: u64 = 50_000_000;
use crate::fabric::link::LinkSpec;
use crate::fabric::port::PortConfig;
use crate::fabric::routing::Ecmp;
use crate::fabric::NetworkBuilder;
use crate::scheme::{self, Proto, Scheme};
use crate::topology::{self, Fabric};
use approxnet_proto::QueueRule;

use crate::transport::ack_path::AckPath;
use crate::transport::flow::TransportParams;
use crate::workload::{self, JobClass};
use crate::Simulator;
use approxnet_proto::time::{Duration, Instant};
use approxnet_proto::units::Rate;

/// A built scenario.
pub struct Built {
    /// The simulator, jobs scheduled.
    pub sim: Simulator,
    /// The job classes (index = `Job::class`).
    pub classes: Vec<JobClass>,
    /// Host link rate.
    pub host_rate: Rate,
    /// Unloaded round-trip time across the network's longest path.
    pub base_rtt: Duration,
}

/// Keys that only the flow mode reads are refused here, not ignored.
fn packet_only(f: &ScenarioFile) -> Result<(), ScenarioError> {
    let t = &f.topology;
    if t.switch_delay_ns != 0.0 {
        return Err(invalid(
            "topology.switch_delay_ns",
            "set in the packet mode",
            "mode = \"flow\"",
        ));
    }
    if t.fec_delay_ns != 0.0 {
        return Err(invalid(
            "topology.fec_delay_ns",
            "set in the packet mode",
            "mode = \"flow\"",
        ));
    }
    if !f.staged.is_empty() {
        return Err(invalid(
            "staged",
            "staged jobs in the packet mode",
            "mode = \"flow\" (or [[training]])",
        ));
    }
    if f.fluid.flows_csv.is_some() {
        return Err(invalid(
            "fluid.flows_csv",
            "set in the packet mode",
            "mode = \"flow\"",
        ));
    }
    for (i, j) in f.jobs.iter().enumerate() {
        for (k, set) in [
            ("weight", j.weight.is_some()),
            ("priority", j.priority.is_some()),
            ("rate_cap_gbps", j.rate_cap_gbps.is_some()),
        ] {
            if set {
                return Err(invalid(
                    format!("jobs.{i}.{k}"),
                    "set in the packet mode",
                    "mode = \"flow\" (the packet mode uses queue and [switch] weights)",
                ));
            }
        }
    }
    Ok(())
}

/// Checks the file and builds the simulator.
pub fn build(f: &ScenarioFile) -> Result<Built, ScenarioError> {
    let t = &f.topology;
    let dur = positive("duration_ms", f.duration_ms)?;
    let end = Instant::from_nanos((dur * 1e6).round() as u64);
    let host_rate = Rate::gbps(positive("topology.host_gbps", t.host_gbps)?);
    let core_rate = Rate::gbps(positive(
        "topology.core_gbps",
        t.core_gbps.unwrap_or(t.host_gbps),
    )?);
    if !(0.0..1.0).contains(&t.ber) {
        return Err(invalid(
            "topology.ber",
            format!("{}", t.ber),
            "0 <= ber < 1",
        ));
    }
    if t.link_delay_us < 0.0 || !t.link_delay_us.is_finite() {
        return Err(invalid(
            "topology.link_delay_us",
            format!("{}", t.link_delay_us),
            ">= 0",
        ));
    }
    let delay = us(t.link_delay_us);
    let ecmp = match t.ecmp.as_str() {
        "flow" => Ecmp::FlowHash,
        "spray" => Ecmp::Spray,
        o => {
            return Err(invalid(
                "topology.ecmp",
                format!("unknown {o:?}"),
                "flow, spray",
            ))
        }
    };
    let schemes = f
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            Scheme::parse(&j.scheme).ok_or_else(|| {
                invalid(
                    format!("jobs.{i}.scheme"),
                    format!("unknown scheme {:?}", j.scheme),
                    scheme::NAMES.join(", "),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let any_pfabric = schemes
        .iter()
        .any(|s| matches!(s, Scheme::Native(Proto::PFabric, _)));
    let any_aeolus = schemes
        .iter()
        .any(|s| matches!(s, Scheme::Native(Proto::Aeolus, _)));

    if f.mode != "packet" {
        return Err(invalid(
            "mode",
            format!("{:?} is not the packet mode", f.mode),
            "packet (here), flow (crate::fluid)",
        ));
    }
    packet_only(f)?;
    let core_spec = LinkSpec {
        rate: core_rate,
        delay,
        ber: t.ber,
    };
    let spec = super::topology::spec(t, core_spec, f.seed)?;
    let fabric = Fabric {
        host_link: LinkSpec {
            rate: host_rate,
            delay,
            ber: t.ber,
        },
        core_link: core_spec,
        switch_buffer: (f.switch.buffer_kb.unwrap_or(DEFAULT_BUFFER_KB) * 1000.0) as u64,
    };
    // unloaded RTT over the longest path: propagation + one MTU per hop out, one ACK back
    let diameter: u64 = match spec.fixed_diameter() {
        Some(d) => d,
        None => topology::report(&super::topology::graph(&spec, &fabric)?).diameter as u64,
    };
    let tp = transport_params(f, host_rate, diameter, delay)?;
    let mtu = tp.mss + tp.header_bytes;
    let base_rtt = Duration::from_nanos(
        diameter * (2 * delay.as_nanos() + host_rate.time_for(mtu as usize).as_nanos())
            + diameter * host_rate.time_for(tp.header_bytes as usize).as_nanos(),
    );
    let bdp = (host_rate.as_bps() / 8.0 * base_rtt.as_secs_f64()).ceil() as u64;
    let sw = switch_config(&f.switch, any_pfabric, any_aeolus, mtu, bdp)?;
    let mut b = NetworkBuilder::new(sw.port, PortConfig::default()).with_sharing(sw.sharing);
    super::topology::wire(&spec, &mut b, &fabric)?;
    let net = b.build(ecmp);
    if let Some(n) = net.overbooked_switch() {
        return Err(invalid(
            "switch.queue_reserved_kb",
            format!(
                "{} queues on {} reserve {} bytes, more than its {}-byte buffer",
                n.buffer.reserved / sw.sharing.reserved_bytes.max(1),
                n.name,
                n.buffer.reserved,
                n.buffer.total
            ),
            "reservations that fit in switch.buffer_kb",
        ));
    }
    let hosts = net.host_count() as u32;
    let mut sim = Simulator::new(net, tp, end, f.seed);

    let mut classes = f
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| job_class(i, j, schemes[i], hosts, end))
        .collect::<Result<Vec<_>, _>>()?;
    let mut runs = Vec::new();
    for (i, t) in f.training.iter().enumerate() {
        let (class, run) = training(i, t, hosts, classes.len() as u32)?;
        classes.push(class);
        runs.push(run);
    }
    for c in &classes {
        if c.queue as u32 >= f.switch.queues.unwrap_or(DEFAULT_QUEUES) {
            return Err(invalid(
                "jobs.queue",
                format!("{}", c.queue),
                "0 .. switch.queues - 1",
            ));
        }
    }
    ack_path_applies(tp.ack_path, &classes)?;
    let arrivals = workload::Arrivals::new(&classes, hosts, host_rate.as_bps(), f.seed);
    let native: u64 = classes
        .iter()
        .zip(arrivals.class_totals())
        .filter(|(c, _)| !c.scheme.is_atp())
        .map(|(_, n)| n)
        .sum();
    sim.reserve_jobs(arrivals.remaining() as usize, native as usize);
    sim.add_arrivals(arrivals, &classes);
    for r in runs {
        sim.add_training(r);
    }
    if classes.iter().any(|c| c.scheme.is_atp()) {
        let a = &f.atp;
        let mtu = a.mtu.unwrap_or(approxnet_proto::units::DEFAULT_MTU as u32);
        if !(256..=9000).contains(&mtu) {
            return Err(invalid("atp.mtu", format!("{mtu}"), "256 ..= 9000"));
        }
        let setup = AtpSetup {
            line_rate: host_rate,
            mtu: mtu as usize,
            queues: f.switch.queues.unwrap_or(DEFAULT_QUEUES) as u8,
            initial_rtt: match a.initial_rtt_us {
                Some(x) => us(positive("atp.initial_rtt_us", x)?),
                None => base_rtt,
            },
            min_rto: us(positive("atp.min_rto_us", a.min_rto_us.unwrap_or(1000.0))?),
            record_epochs: a.record_epochs,
            ecn_reaction: a.ecn_reaction,
            ecn_reaction_queue0: a.ecn_reaction_queue0,
            send_more: a.send_more,
            production_aware_rate: a.production_aware_rate.unwrap_or(true),
            queue_rule: match a.queue_rule.as_deref() {
                None => QueueRule::default(),
                Some(n) => QueueRule::from_name(n).ok_or_else(|| {
                    invalid("atp.queue_rule", format!("{n:?}"), "eq1 or msr-bounded")
                })?,
            },
            ack_every: match a.ack_every.unwrap_or(1) {
                n @ 1..=64 => n,
                n => return Err(invalid("atp.ack_every", format!("{n}"), "1 ..= 64")),
            },
            bundle_bytes: match a.bundle_bytes {
                None => None,
                Some(b) if b <= 9000 => Some(b as usize),
                Some(b) => return Err(invalid("atp.bundle_bytes", format!("{b}"), "0 ..= 9000")),
            },
            seed: f.seed,
        };
        let nic_kb = a.nic_buffer_kb.unwrap_or(64.0);
        if !(nic_kb >= 0.0 && nic_kb.is_finite()) {
            return Err(invalid(
                "atp.nic_buffer_kb",
                format!("{nic_kb}"),
                ">= 0 (0 = unlimited)",
            ));
        }
        let nic_limit = if nic_kb == 0.0 {
            u64::MAX
        } else {
            ((nic_kb * 1000.0) as u64).max(2 * (mtu as u64 + 28))
        };
        sim.set_adapter(Box::new(AtpAdapter::new(setup, hosts as usize)), nic_limit);
    }
    for rule in queue_follows(&f.jobs, &classes)? {
        sim.add_queue_follow(rule);
    }
    let o = &f.output;
    let every = o.queue_sample_us.unwrap_or(0.0);
    if every < 0.0 {
        return Err(invalid(
            "output.queue_sample_us",
            format!("{every}"),
            ">= 0",
        ));
    }
    let which = match o.queue_ports.as_deref().unwrap_or("host_facing") {
        "host_facing" => SamplePorts::HostFacing,
        "all_switch" => SamplePorts::AllSwitch,
        "none" => SamplePorts::None,
        x => {
            return Err(invalid(
                "output.queue_ports",
                format!("unknown {x:?}"),
                "host_facing, all_switch, none",
            ))
        }
    };
    if every > 0.0 {
        sim.sample_queues(which, us(every));
    }
    // 40 bytes a row in memory: the cap keeps a trace under ~2 GB
    let trace = o.trace_packets.unwrap_or(0);
    if trace > MAX_TRACE {
        return Err(invalid(
            "output.trace_packets",
            format!("{trace}"),
            format!("0 (off) to {MAX_TRACE}"),
        ));
    }
    sim.trace_packets(trace as usize);
    Ok(Built {
        sim,
        classes,
        host_rate,
        base_rtt,
    })
}

/// `ack_path = "instant"` short-cuts the native receivers' ACKs only: a
/// job class on ATP (whose ACKs are datagrams of the core, not modelled
/// here) would silently keep its ACKs in the network, so it is refused.
fn ack_path_applies(p: AckPath, classes: &[JobClass]) -> Result<(), ScenarioError> {
    if p == AckPath::Network {
        return Ok(());
    }
    match classes.iter().find(|c| c.scheme.is_atp()) {
        None => Ok(()),
        Some(c) => Err(invalid(
            "transport.ack_path",
            format!(
                "{:?} with job {:?} on {} (ATP's ACKs are the core's datagrams: they always cross the network)",
                p.name(),
                c.name,
                c.scheme
            ),
            "network, or instant with native schemes only (dctcp, tcp, pfabric, aeolus, udp and their -ss / -es)",
        )),
    }
}

fn transport_params(
    f: &ScenarioFile,
    rate: Rate,
    diameter: u64,
    delay: Duration,
) -> Result<TransportParams, ScenarioError> {
    let t = &f.transport;
    let mut tp = TransportParams::default();
    if let Some(m) = t.mss {
        if !(1..=65_000).contains(&m) {
            return Err(invalid("transport.mss", format!("{m}"), "1 ..= 65000"));
        }
        tp.mss = m;
    }
    if let Some(h) = t.header_bytes {
        tp.header_bytes = h;
    }
    if let Some(w) = t.init_cwnd_pkts {
        if w == 0 {
            return Err(invalid("transport.init_cwnd_pkts", "0", ">= 1"));
        }
        tp.init_cwnd_pkts = w;
    }
    tp.handshake = t.handshake.unwrap_or(true);
    tp.reuse_connections = t.reuse_connections.unwrap_or(true);
    tp.handshake_ack = t.handshake_ack.unwrap_or(false);
    tp.line_rate = rate;
    if let Some(kb) = t.tsq_kb {
        if !(kb >= 0.0 && kb.is_finite()) {
            return Err(invalid("transport.tsq_kb", format!("{kb}"), ">= 0"));
        }
        tp.tsq_bytes = (kb * 1000.0).round() as u64;
    }
    tp.tcp.timestamps = t.timestamps.unwrap_or(tp.tcp.timestamps);
    tp.tcp.limited_transmit = t.limited_transmit.unwrap_or(tp.tcp.limited_transmit);
    tp.tcp.sack = t.sack.unwrap_or(tp.tcp.sack);
    tp.tcp.prr = t.prr.unwrap_or(tp.tcp.prr);
    if let Some(p) = &t.ack_path {
        tp.ack_path = AckPath::parse(p).ok_or_else(|| {
            invalid(
                "transport.ack_path",
                format!("unknown {p:?}"),
                AckPath::NAMES.join(", "),
            )
        })?;
    }
    if let Some(x) = t.min_rto_us {
        tp.rto.min = us(positive("transport.min_rto_us", x)?);
        tp.rto.initial = tp.rto.initial.max(tp.rto.min);
    }
    if let Some(x) = t.initial_rto_us {
        tp.rto.initial = us(positive("transport.initial_rto_us", x)?);
    }
    let mtu = (tp.mss + tp.header_bytes) as usize;
    let rtt = Duration::from_nanos(
        diameter
            * (2 * delay.as_nanos()
                + rate.time_for(mtu).as_nanos()
                + rate.time_for(tp.header_bytes as usize).as_nanos()),
    );
    // pFabric: window of one BDP, fixed RTO of about 3 RTTs (pFabric section 5)
    tp.pfabric_bdp_bytes =
        ((rate.as_bps() / 8.0 * rtt.as_secs_f64()).ceil() as u64).max(mtu as u64);
    tp.pfabric_rto = match t.pfabric_rto_us {
        Some(x) => us(positive("transport.pfabric_rto_us", x)?),
        None => Duration::from_nanos(3 * rtt.as_nanos()),
    };
    Ok(tp)
}
