//! The network: nodes, egress ports, shared switch buffers and routes.
//!
//! Build one with [`NetworkBuilder`] (or a preset in [`crate::topology`]);
//! the simulator moves packets through it.

pub mod buffer;
pub mod clos;
pub mod link;
pub mod port;
pub mod queue;
pub mod routing;
pub mod sched;

use crate::packet::{PacketPool, PktId};
use approxnet_proto::wire;
use buffer::{SharedBuffer, SharingConfig};
use clos::Layout;
use link::LinkSpec;
use port::{Port, PortConfig};
use queue::{Admit, Entry, Held};
use routing::{Ecmp, Routes};

/// Host or switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An end host (runs transports); index into the host list.
    Host(u32),
    /// A switch.
    Switch,
}

/// A node and its egress ports.
///
/// `repr(C)`, cache-line aligned: what a hop reads (the kind, to switch
/// or deliver, and the shared buffer's counters) fills the first line; the
/// port list and the name, cold, lie after it.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Node {
    /// Host or switch.
    pub kind: NodeKind,
    /// Shared buffer (switches; unlimited for hosts).
    pub buffer: SharedBuffer,
    /// Its egress ports.
    pub ports: Vec<u32>,
    /// Human-readable name (for output).
    pub name: String,
}

/// What happened to a packet offered to a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Queued, nothing dropped.
    Queued,
    /// This packet (the offered one or an evicted one) was dropped; the
    /// caller frees it and accounts the loss.
    Dropped(PktId),
}

/// Builds a [`Network`] node by node and link by link.
#[derive(Debug, Default)]
pub struct NetworkBuilder {
    nodes: Vec<Node>,
    ports: Vec<Port>,
    hosts: Vec<u32>,
    switch_port: PortConfig,
    host_port: PortConfig,
    sharing: SharingConfig,
    /// The structure a preset declared on the empty builder, if any.
    layout: Option<Layout>,
}

impl NetworkBuilder {
    /// Switch egress ports get `switch_port`, host NICs `host_port`.
    pub fn new(switch_port: PortConfig, host_port: PortConfig) -> Self {
        NetworkBuilder {
            switch_port,
            host_port,
            ..Default::default()
        }
    }

    /// Switches share their buffers under `sharing` (default: complete
    /// sharing, nothing reserved).
    pub fn with_sharing(mut self, sharing: SharingConfig) -> Self {
        self.sharing = sharing;
        self
    }

    /// Adds a host; returns its node id.
    pub fn add_host(&mut self) -> u32 {
        let h = self.hosts.len() as u32;
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            kind: NodeKind::Host(h),
            ports: Vec::new(),
            name: format!("h{h}"),
            buffer: SharedBuffer::new(u64::MAX, 0, SharingConfig::default()),
        });
        self.hosts.push(id);
        id
    }

    /// Adds a switch with `shared_buffer` bytes shared by its ports.
    pub fn add_switch(&mut self, name: impl Into<String>, shared_buffer: u64) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            kind: NodeKind::Switch,
            ports: Vec::new(),
            name: name.into(),
            // reservations are carved out in `build`, once the ports are known
            buffer: SharedBuffer::new(shared_buffer, 0, SharingConfig::default()),
        });
        id
    }

    /// Connects `a` and `b` with a full-duplex link.
    pub fn connect(&mut self, a: u32, b: u32, link: LinkSpec) {
        for (x, y) in [(a, b), (b, a)] {
            let node = &self.nodes[x as usize];
            let cfg = match node.kind {
                NodeKind::Host(_) => &self.host_port,
                NodeKind::Switch => &self.switch_port,
            };
            let mut p = Port::new(x, y, link.rate, link.delay, link.ber, cfg);
            p.shared = node.kind == NodeKind::Switch;
            p.host = matches!(node.kind, NodeKind::Host(_));
            let pid = self.ports.len() as u32;
            self.ports.push(p);
            self.nodes[x as usize].ports.push(pid);
        }
    }

    /// Declares that a preset with this structure is about to be wired:
    /// honoured only on an empty builder (routes are then computed from
    /// the structure where they agree with the table, see
    /// [`routing::Routes::build_for`]).
    pub fn layout(&mut self, layout: Layout) {
        if self.nodes.is_empty() && self.ports.is_empty() {
            self.layout = Some(layout);
        }
    }

    /// Number of nodes so far.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Computes routes and returns the network. A switch whose queue
    /// reservations exceed its buffer is built with an empty pool; see
    /// [`Network::overbooked_switch`].
    pub fn build(mut self, ecmp: Ecmp) -> Network {
        let per_port = self.switch_port.queues.len() as u64;
        for n in &mut self.nodes {
            if n.kind == NodeKind::Switch {
                let queues = n.ports.len() as u64 * per_port;
                n.buffer = SharedBuffer::new(n.buffer.total, queues, self.sharing);
            }
        }
        let adj: Vec<Vec<(u32, u32)>> = self
            .nodes
            .iter()
            .map(|n| {
                n.ports
                    .iter()
                    .map(|&p| (p, self.ports[p as usize].peer))
                    .collect()
            })
            .collect();
        let routes = Routes::build_for(&adj, &self.hosts, self.layout);
        let mut switch_bits = vec![0u64; self.nodes.len().div_ceil(64)];
        for (i, n) in self.nodes.iter().enumerate() {
            if n.kind == NodeKind::Switch {
                switch_bits[i / 64] |= 1 << (i % 64);
            }
        }
        let nics = self
            .hosts
            .iter()
            .map(|&n| {
                let ports = &self.nodes[n as usize].ports;
                ports.first().copied().unwrap_or(u32::MAX)
            })
            .collect();
        Network {
            switch_bits,
            nics,
            nodes: self.nodes,
            ports: self.ports,
            hosts: self.hosts,
            routes,
            ecmp,
        }
    }
}

/// The built network.
#[derive(Clone, Debug)]
pub struct Network {
    /// All nodes.
    pub nodes: Vec<Node>,
    /// All egress ports.
    pub ports: Vec<Port>,
    /// Node id of each host.
    pub hosts: Vec<u32>,
    /// Next-hop tables.
    pub routes: Routes,
    /// ECMP mode.
    pub ecmp: Ecmp,
    /// Bit `n` set when node `n` is a switch: what every hop asks of its
    /// node, in a bitmap that stays in the L1 cache (a node's kind sits in
    /// its 64-byte [`Node`], a line per node: at k = 20, 14,500 of them).
    switch_bits: Vec<u64>,
    /// The NIC of each host (a host's first port, read per packet sent:
    /// four bytes a host instead of its node's line and port list).
    nics: Vec<u32>,
}

impl Network {
    /// Whether node `n` is a switch (false for a node id out of range).
    #[inline]
    pub fn is_switch(&self, n: u32) -> bool {
        let n = n as usize;
        self.switch_bits
            .get(n / 64)
            .is_some_and(|w| w >> (n % 64) & 1 != 0)
    }

    /// Number of hosts.
    pub fn host_count(&self) -> usize {
        self.hosts.len()
    }

    /// A switch whose queue reservations alone exceed its buffer.
    pub fn overbooked_switch(&self) -> Option<&Node> {
        self.nodes.iter().find(|n| n.buffer.overbooked())
    }

    /// The NIC (first egress port) of host `h`.
    pub fn nic(&self, h: u32) -> u32 {
        self.nics[h as usize]
    }

    /// The queue entry of packet `id` offered to `port`.
    #[inline]
    fn entry(&self, port: u32, id: PktId, pool: &PacketPool) -> Entry {
        let p = pool.get(id);
        let q = (p.queue as usize).min(self.ports[port as usize].queues.len() - 1);
        Entry {
            id,
            size: p.size,
            rank: p.rank,
            flow: p.flow,
            droppable: p.droppable,
            queue: q as u8,
        }
    }

    /// Offers packet `id` to egress `port`, marking CE or dropping as the
    /// queue and the switch's shared buffer decide.
    #[inline]
    pub fn offer(&mut self, port: u32, id: PktId, pool: &mut PacketPool) -> Offer {
        let e = self.entry(port, id, pool);
        let q = e.queue as usize;
        let port_ref = &mut self.ports[port as usize];
        let node = &mut self.nodes[port_ref.node as usize];
        let before = port_ref.queues[q].bytes();
        let room = if port_ref.shared {
            node.buffer.room(before)
        } else {
            u64::MAX
        };
        let admit = port_ref.admit(q as u8, e, room);
        if port_ref.shared {
            node.buffer.update(before, port_ref.queues[q].bytes());
        }
        match admit {
            Admit::Queued { mark } => {
                if mark {
                    mark_ce(pool, id);
                }
                Offer::Queued
            }
            Admit::Evicted(victim) => Offer::Dropped(victim),
            Admit::Dropped => Offer::Dropped(id),
        }
    }

    /// [`Network::offer`] then [`Network::start_next`] for a packet that
    /// finds `port` idle with nothing queued ([`port::Port::can_pass_through`]):
    /// the entry to serialise now, or `None` when the packet is dropped
    /// (the caller frees it). The switch's shared buffer would take the
    /// packet and give it back in the same instant, so only its room is read.
    #[inline]
    pub fn pass_through(&mut self, port: u32, id: PktId, pool: &mut PacketPool) -> Option<Held> {
        let e = self.entry(port, id, pool);
        let port_ref = &mut self.ports[port as usize];
        let room = if port_ref.shared {
            self.nodes[port_ref.node as usize].buffer.room(0)
        } else {
            u64::MAX
        };
        match port_ref.pass_through(e.queue, &e, room) {
            Admit::Queued { mark } => {
                if mark {
                    mark_ce(pool, id);
                }
                Some(Held::from(&e))
            }
            _ => None,
        }
    }

    /// Starts serialising the next packet on `port` if it is idle.
    ///
    /// Always inlined: with `Simulator::kick` inlined into its two callers
    /// the compiler stopped inlining this (~100,000 calls of ~80
    /// instructions in the ns-3 dumbbell, a sixth of them the call).
    #[inline(always)]
    pub fn start_next(&mut self, port: u32) -> Option<Held> {
        let p = &mut self.ports[port as usize];
        let (q, e) = p.start_next()?;
        if p.shared {
            let after = p.queues[q].bytes();
            let b = &mut self.nodes[p.node as usize].buffer;
            b.update(after + e.size as u64, after);
        }
        Some(e)
    }
}

/// Sets congestion-experienced on an ECN-capable packet; for endpoint
/// datagrams also in the approxnet header, where the endpoint reads it.
fn mark_ce(pool: &mut PacketPool, id: PktId) {
    let p = pool.get_mut(id);
    if !p.ect {
        return;
    }
    p.ce = true;
    if p.payload.len() >= wire::HEADER_LEN {
        wire::Packet::new_unchecked(&mut p.payload[..]).set_ce(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::link::LinkSpec;
    use approxnet_proto::time::Duration;
    use approxnet_proto::units::Rate;

    /// A port's `host` flag is what the switch bitmap says of its owner
    /// (the hop path's TSQ test reads the flag instead of the bitmap),
    /// over links host-switch, switch-switch and host-host.
    #[test]
    fn a_ports_host_flag_is_its_owners_kind() {
        let mut b = NetworkBuilder::new(PortConfig::default(), PortConfig::default());
        let hosts: Vec<u32> = (0..4).map(|_| b.add_host()).collect();
        let (s0, s1) = (b.add_switch("s0", 1 << 20), b.add_switch("s1", 1 << 20));
        let link = LinkSpec::new(Rate::gbps(10.0), Duration::from_micros(1));
        b.connect(hosts[0], s0, link);
        b.connect(s1, hosts[1], link);
        b.connect(s0, s1, link);
        b.connect(hosts[2], hosts[3], link);
        let net = b.build(Ecmp::FlowHash);
        assert_eq!(net.ports.len(), 8);
        for p in &net.ports {
            assert_eq!(p.host, !net.is_switch(p.node), "port of node {}", p.node);
        }
        assert_eq!(net.ports.iter().filter(|p| p.host).count(), 4);
    }
}
