//! A topology named with its parameters, checked by the scenario reader
//! (`scenario/topology.rs`) and wired onto a [`Wiring`].

use super::edge_list::EdgeList;
use super::random_regular::RandomRegularError;
use super::{Fabric, Wiring};
use crate::fabric::link::LinkSpec;

/// A preset and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum Spec {
    /// [`super::dumbbell`].
    Dumbbell {
        /// Sending hosts.
        senders: u32,
        /// Receiving hosts.
        receivers: u32,
        /// The link between the two switches (`None`: one switch).
        bottleneck: Option<LinkSpec>,
    },
    /// [`super::leaf_spine`].
    LeafSpine {
        /// Spine switches.
        spines: u32,
        /// Leaf switches.
        leaves: u32,
        /// Hosts per leaf.
        hosts_per_leaf: u32,
        /// Down : up capacity at a leaf.
        oversubscription: f64,
    },
    /// [`super::fat_tree`].
    FatTree {
        /// Arity (even).
        k: u32,
        /// Hosts, spread over the edge switches.
        hosts: u32,
    },
    /// [`super::spine_leaf3`].
    SpineLeaf3 {
        /// Spine switches.
        spines: u32,
        /// Leaf switches.
        leaves: u32,
        /// Top-of-rack switches.
        tors: u32,
        /// Hosts per top-of-rack switch.
        hosts_per_tor: u32,
        /// Leaves each top-of-rack switch links to.
        tor_uplinks: u32,
        /// Spines each leaf links to.
        leaf_uplinks: u32,
    },
    /// [`super::dragonfly`].
    Dragonfly {
        /// Groups.
        groups: u32,
        /// Routers per group.
        routers: u32,
        /// Global links per router.
        global: u32,
        /// Hosts per router.
        hosts_per_router: u32,
    },
    /// [`super::torus`].
    Torus {
        /// Size of each dimension.
        dims: Vec<u32>,
        /// Hosts per switch.
        hosts_per_switch: u32,
    },
    /// [`super::random_regular`].
    RandomRegular {
        /// Switches.
        switches: u32,
        /// Switch-to-switch links per switch.
        degree: u32,
        /// Hosts per switch.
        hosts_per_switch: u32,
        /// Seed of the draw.
        seed: u64,
    },
    /// [`super::edge_list`]: a user's file.
    Edges(EdgeList),
}

impl Spec {
    /// Lays the topology out on `w`.
    pub fn wire(&self, w: &mut impl Wiring, f: &Fabric) -> Result<(), RandomRegularError> {
        match self {
            Spec::Dumbbell {
                senders,
                receivers,
                bottleneck,
            } => super::dumbbell(w, f, *senders, *receivers, *bottleneck),
            Spec::LeafSpine {
                spines,
                leaves,
                hosts_per_leaf,
                oversubscription,
            } => super::leaf_spine(w, f, *spines, *leaves, *hosts_per_leaf, *oversubscription),
            Spec::FatTree { k, hosts } => super::fat_tree(w, f, *k, *hosts),
            Spec::SpineLeaf3 {
                spines,
                leaves,
                tors,
                hosts_per_tor,
                tor_uplinks,
                leaf_uplinks,
            } => super::spine_leaf3(
                w,
                f,
                *spines,
                *leaves,
                *tors,
                *hosts_per_tor,
                *tor_uplinks,
                *leaf_uplinks,
            ),
            Spec::Dragonfly {
                groups,
                routers,
                global,
                hosts_per_router,
            } => super::dragonfly(w, f, *groups, *routers, *global, *hosts_per_router),
            Spec::Torus {
                dims,
                hosts_per_switch,
            } => super::torus(w, f, dims, *hosts_per_switch),
            Spec::RandomRegular {
                switches,
                degree,
                hosts_per_switch,
                seed,
            } => return super::random_regular(w, f, *switches, *degree, *hosts_per_switch, *seed),
            Spec::Edges(e) => e.wire(w, f),
        }
        Ok(())
    }

    /// Hosts and switches it would build (in `u64`: no overflow for any
    /// parameters), and the keys that set each, for the size limits.
    pub fn size(&self) -> (u64, u64, &'static str, &'static str) {
        let n = |x: &u32| *x as u64;
        match self {
            Spec::Dumbbell {
                senders, receivers, ..
            } => (n(senders) + n(receivers), 2, "senders + receivers", "-"),
            Spec::LeafSpine {
                spines,
                leaves,
                hosts_per_leaf,
                ..
            } => (
                n(leaves) * n(hosts_per_leaf),
                n(spines) + n(leaves),
                "leaves x hosts_per_leaf",
                "spines + leaves",
            ),
            Spec::FatTree { k, hosts } => (n(hosts), 5 * n(k) * n(k) / 4, "hosts", "5 k^2 / 4"),
            Spec::SpineLeaf3 {
                spines,
                leaves,
                tors,
                hosts_per_tor,
                ..
            } => (
                n(tors) * n(hosts_per_tor),
                n(spines) + n(leaves) + n(tors),
                "tors x hosts_per_tor",
                "spines + leaves + tors",
            ),
            Spec::Dragonfly {
                groups,
                routers,
                hosts_per_router,
                ..
            } => (
                n(groups) * n(routers) * n(hosts_per_router),
                n(groups) * n(routers),
                "groups x routers_per_group x hosts_per_switch",
                "groups x routers_per_group",
            ),
            Spec::Torus {
                dims,
                hosts_per_switch,
            } => {
                let switches = dims.iter().fold(1u64, |a, &d| a.saturating_mul(d as u64));
                (
                    switches.saturating_mul(n(hosts_per_switch)),
                    switches,
                    "dims product x hosts_per_switch",
                    "dims product",
                )
            }
            Spec::RandomRegular {
                switches,
                hosts_per_switch,
                ..
            } => (
                n(switches) * n(hosts_per_switch),
                n(switches),
                "switches x hosts_per_switch",
                "switches",
            ),
            Spec::Edges(e) => (
                e.hosts.len() as u64,
                e.switches.len() as u64,
                "host lines",
                "switch names",
            ),
        }
    }

    /// Hop count of the longest host-to-host path for the presets whose
    /// packet-mode RTT estimate predates the report (kept as it was), or
    /// `None` for the others (the caller measures it).
    pub fn fixed_diameter(&self) -> Option<u64> {
        match self {
            Spec::Dumbbell { bottleneck, .. } => Some(if bottleneck.is_some() { 3 } else { 2 }),
            Spec::LeafSpine { .. } => Some(4),
            Spec::FatTree { .. } => Some(6),
            _ => None,
        }
    }
}
