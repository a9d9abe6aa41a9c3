//! Queue-length sampling.

use super::Simulator;
use crate::event::Ev;
use crate::fabric::{Network, NodeKind};
use approxnet_proto::time::Instant;

/// One sample: a port's backlog at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueSample {
    /// Time, ns.
    pub t_ns: u64,
    /// Port index.
    pub port: u32,
    /// Bytes queued (all queues of the port, excluding the packet in service).
    pub bytes: u32,
    /// Packets queued.
    pub pkts: u32,
}

/// Which ports to sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SamplePorts {
    /// None.
    None,
    /// Switch ports that face a host (top-of-rack downlinks).
    HostFacing,
    /// Every switch port.
    AllSwitch,
}

pub(super) fn select_ports(net: &Network, which: SamplePorts) -> Vec<u32> {
    let is_host = |n: u32| matches!(net.nodes[n as usize].kind, NodeKind::Host(_));
    (0..net.ports.len() as u32)
        .filter(|&p| {
            let port = &net.ports[p as usize];
            let sw = !is_host(port.node);
            match which {
                SamplePorts::None => false,
                SamplePorts::HostFacing => sw && is_host(port.peer),
                SamplePorts::AllSwitch => sw,
            }
        })
        .collect()
}

impl Simulator {
    pub(super) fn take_sample(&mut self, now: Instant) {
        for &p in &self.sample_ports {
            let port = &self.net.ports[p as usize];
            let pkts: usize = port.queues.iter().map(|q| q.len()).sum();
            self.samples.push(QueueSample {
                t_ns: now.as_nanos(),
                port: p,
                bytes: port.backlog_bytes().min(u32::MAX as u64) as u32,
                pkts: pkts as u32,
            });
        }
        if let Some(every) = self.sample_every {
            let next = now + every;
            if next <= self.end {
                self.events.schedule(next, Ev::Sample);
            }
        }
    }
}
