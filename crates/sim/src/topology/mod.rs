//! Topologies, used by both the packet-level and the flow-level mode:
//! dumbbell, two-tier leaf-spine, k-ary fat-tree, three-tier spine-leaf
//! (seed 003 §8), dragonfly, n-dimensional torus and random regular graphs
//! (seed 004 §5.6), and a user's edge-list file, one file each. A preset is a few calls on a
//! [`Wiring`]: the packet mode wires a [`NetworkBuilder`] (ports, queues,
//! buffers), the flow mode and the hop-count report a plain [`Graph`].
//! [`Spec`] names a preset with its parameters; [`Spec::wire`] builds it.
//!
//! Hosts are numbered in the order they are added, which the presets fix:
//! the dumbbell's senders come first, then its receivers; every other
//! preset adds its hosts switch by switch (rack by rack), so the routing
//! table's per-prefix storage stays small.

mod dragonfly;
mod dumbbell;
mod edge_list;
mod fat_tree;
mod graph;
mod leaf_spine;
mod random_regular;
mod report;
mod spec;
mod spine_leaf3;
mod torus;

pub use dragonfly::dragonfly;
pub use dumbbell::dumbbell;
pub use edge_list::EdgeList;
pub use fat_tree::fat_tree;
pub use graph::Graph;
pub use leaf_spine::leaf_spine;
pub use random_regular::{random_regular, random_regular_links, RandomRegularError};
pub use report::{report, TopologyReport};
pub use spec::Spec;
pub use spine_leaf3::spine_leaf3;
pub use torus::torus;

use crate::fabric::clos::Layout;
use crate::fabric::link::LinkSpec;
use crate::fabric::NetworkBuilder;

/// Buffers and links shared by the presets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fabric {
    /// Host-to-switch links.
    pub host_link: LinkSpec,
    /// Switch-to-switch links (rate may be overridden by a preset).
    pub core_link: LinkSpec,
    /// Shared buffer of every switch, bytes.
    pub switch_buffer: u64,
}

/// What a preset needs to lay out a network: nodes and full-duplex links.
/// Node ids are handed out in call order, hosts and switches alike.
pub trait Wiring {
    /// Adds a host; returns its node id.
    fn add_host(&mut self) -> u32;
    /// Adds a switch with `shared_buffer` bytes of buffer; returns its node id.
    fn add_switch(&mut self, name: String, shared_buffer: u64) -> u32;
    /// Joins `a` and `b` with a full-duplex link (one egress port each way).
    fn connect(&mut self, a: u32, b: u32, link: LinkSpec);
    /// The preset about to be wired has this structure (called first by
    /// the fat-tree and leaf-spine presets; the packet mode routes by it).
    fn layout(&mut self, _layout: Layout) {}
}

impl Wiring for NetworkBuilder {
    fn add_host(&mut self) -> u32 {
        NetworkBuilder::add_host(self)
    }
    fn add_switch(&mut self, name: String, shared_buffer: u64) -> u32 {
        NetworkBuilder::add_switch(self, name, shared_buffer)
    }
    fn connect(&mut self, a: u32, b: u32, link: LinkSpec) {
        NetworkBuilder::connect(self, a, b, link)
    }
    fn layout(&mut self, layout: Layout) {
        NetworkBuilder::layout(self, layout)
    }
}
