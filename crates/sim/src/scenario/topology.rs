//! `[topology]`: the preset and its parameters, checked key by key, and the
//! built graph checked for connectivity.

use super::positive;
use super::schema::TopologyFile;
use super::{invalid, ScenarioError};
use crate::fabric::link::LinkSpec;
use crate::topology::{EdgeList, Fabric, Graph, RandomRegularError, Spec};
use approxnet_proto::units::Rate;

/// Topology kinds a scenario accepts.
pub(super) const KINDS: &str =
    "dumbbell, leaf_spine, fat_tree, spine_leaf3, dragonfly, torus, random_regular, edges";

fn need(key: &str, v: Option<u32>, what: &str) -> Result<u32, ScenarioError> {
    match v {
        None => Err(invalid(key, "missing", what)),
        Some(0) => Err(invalid(key, "0", what)),
        Some(x) => Ok(x),
    }
}

/// Most hosts a topology may have (2^20; seed 003's largest is 1,944).
pub(crate) const MAX_HOSTS: u64 = 1 << 20;
/// Most switches (2^14; the seeds' largest have 264): routes cost one
/// breadth-first search per rack over the whole graph.
pub(crate) const MAX_SWITCHES: u64 = 1 << 14;
// Every node a scenario may build fits the event's node field, so
// `Simulator::new`'s check of it (a panic, for library callers that build a
// `Network` by hand) cannot fire on a scenario file.
const _: () = assert!(MAX_HOSTS + MAX_SWITCHES <= crate::event::MAX_NODE as u64 + 1);

/// Reads the preset's keys and refuses topologies over [`MAX_HOSTS`] or
/// [`MAX_SWITCHES`], naming the keys that set the count. `core` is the
/// switch-to-switch link (the dumbbell's bottleneck is built from it and
/// `bottleneck_gbps`).
pub(crate) fn spec(t: &TopologyFile, core: LinkSpec, seed: u64) -> Result<Spec, ScenarioError> {
    let s = preset(t, core, seed)?;
    let (hosts, switches, host_keys, switch_keys) = s.size();
    if hosts > MAX_HOSTS {
        return Err(invalid(
            "topology",
            format!("{hosts} hosts ({} {host_keys})", t.kind),
            format!("at most {MAX_HOSTS} hosts"),
        ));
    }
    if switches > MAX_SWITCHES {
        return Err(invalid(
            "topology",
            format!("{switches} switches ({} {switch_keys})", t.kind),
            format!("at most {MAX_SWITCHES} switches"),
        ));
    }
    Ok(s)
}

fn preset(t: &TopologyFile, core: LinkSpec, seed: u64) -> Result<Spec, ScenarioError> {
    Ok(match t.kind.as_str() {
        "dumbbell" => {
            let senders = need("topology.senders", t.senders, "a host count >= 1")?;
            let receivers = match t.receivers {
                Some(0) => return Err(invalid("topology.receivers", "0", ">= 1")),
                r => r.unwrap_or(1),
            };
            let bottleneck = match t.bottleneck_gbps {
                Some(g) => Some(LinkSpec {
                    rate: Rate::gbps(positive("topology.bottleneck_gbps", g)?),
                    ..core
                }),
                None => None,
            };
            Spec::Dumbbell {
                senders,
                receivers,
                bottleneck,
            }
        }
        "leaf_spine" => Spec::LeafSpine {
            spines: need("topology.spines", t.spines, "an integer >= 1")?,
            leaves: need("topology.leaves", t.leaves, "an integer >= 1")?,
            hosts_per_leaf: need(
                "topology.hosts_per_leaf",
                t.hosts_per_leaf,
                "an integer >= 1",
            )?,
            oversubscription: positive(
                "topology.oversubscription",
                t.oversubscription.unwrap_or(1.0),
            )?,
        },
        "fat_tree" => {
            let k = need("topology.k", t.k, "an even integer >= 2")?;
            if k < 2 || k % 2 == 1 {
                return Err(invalid(
                    "topology.k",
                    format!("{k}"),
                    "an even integer >= 2",
                ));
            }
            if k > 1024 {
                return Err(invalid("topology.k", format!("{k}"), "at most 1024"));
            }
            let hosts = t.hosts.unwrap_or(k * k * k / 4);
            if hosts < 2 {
                return Err(invalid("topology.hosts", format!("{hosts}"), ">= 2"));
            }
            Spec::FatTree { k, hosts }
        }
        "spine_leaf3" => {
            let spines = need("topology.spines", t.spines, "an integer >= 1")?;
            let leaves = need("topology.leaves", t.leaves, "an integer >= 1")?;
            let tors = need("topology.tors", t.tors, "an integer >= 1")?;
            let hosts_per_tor = need("topology.hosts_per_tor", t.hosts_per_tor, "an integer >= 1")?;
            let tor_uplinks = t.tor_uplinks.unwrap_or(hosts_per_tor.min(leaves));
            if tor_uplinks == 0 || tor_uplinks > leaves {
                return Err(invalid(
                    "topology.tor_uplinks",
                    format!("{tor_uplinks} with {leaves} leaves"),
                    "1 ..= leaves",
                ));
            }
            let leaf_uplinks = t.leaf_uplinks.unwrap_or(tor_uplinks.min(spines));
            if leaf_uplinks == 0 || leaf_uplinks > spines {
                return Err(invalid(
                    "topology.leaf_uplinks",
                    format!("{leaf_uplinks} with {spines} spines"),
                    "1 ..= spines",
                ));
            }
            Spec::SpineLeaf3 {
                spines,
                leaves,
                tors,
                hosts_per_tor,
                tor_uplinks,
                leaf_uplinks,
            }
        }
        "dragonfly" => {
            let groups = need("topology.groups", t.groups, "an integer >= 1")?;
            let routers = need(
                "topology.routers_per_group",
                t.routers_per_group,
                "an integer >= 1",
            )?;
            let global = match t.global_links {
                Some(g) => g,
                None => {
                    return Err(invalid(
                        "topology.global_links",
                        "missing",
                        "an integer >= 0",
                    ))
                }
            };
            if (routers as u64) * (global as u64) < groups as u64 - 1 {
                return Err(invalid(
                    "topology.global_links",
                    format!(
                        "{routers} routers x {global} global links cannot reach the other {} groups",
                        groups - 1
                    ),
                    "routers_per_group x global_links >= groups - 1",
                ));
            }
            Spec::Dragonfly {
                groups,
                routers,
                global,
                hosts_per_router: need(
                    "topology.hosts_per_switch",
                    t.hosts_per_switch,
                    "an integer >= 1",
                )?,
            }
        }
        "torus" => {
            let dims = match &t.dims {
                Some(d) if !d.is_empty() && d.iter().all(|&k| k >= 1) => d.clone(),
                Some(d) => {
                    return Err(invalid(
                        "topology.dims",
                        format!("{d:?}"),
                        "sizes >= 1, e.g. [4, 4, 4]",
                    ))
                }
                None => {
                    return Err(invalid(
                        "topology.dims",
                        "missing",
                        "sizes >= 1, e.g. [4, 4, 4]",
                    ))
                }
            };
            if dims.iter().map(|&k| k as u64).product::<u64>() > 1 << 20 {
                return Err(invalid(
                    "topology.dims",
                    format!("{dims:?}"),
                    "at most 2^20 switches",
                ));
            }
            Spec::Torus {
                dims,
                hosts_per_switch: need(
                    "topology.hosts_per_switch",
                    t.hosts_per_switch,
                    "an integer >= 1",
                )?,
            }
        }
        "random_regular" => Spec::RandomRegular {
            switches: need("topology.switches", t.switches, "an integer >= 2")?,
            degree: need(
                "topology.degree",
                t.degree,
                "1 <= degree < switches, switches x degree even",
            )?,
            hosts_per_switch: need(
                "topology.hosts_per_switch",
                t.hosts_per_switch,
                "an integer >= 1",
            )?,
            seed: t.topology_seed.unwrap_or(seed),
        },
        "edges" => {
            const WHAT: &str = "an edge-list file (host / link lines, see docs)";
            let path = t
                .file
                .as_deref()
                .ok_or_else(|| invalid("topology.file", "missing", WHAT))?;
            let text = std::fs::read_to_string(path)
                .map_err(|e| invalid("topology.file", format!("cannot read {path}: {e}"), WHAT))?;
            Spec::Edges(
                EdgeList::parse(&text)
                    .map_err(|e| invalid("topology.file", format!("{path}: {e}"), WHAT))?,
            )
        }
        o => return Err(invalid("topology.kind", format!("unknown {o:?}"), KINDS)),
    })
}

/// Wires `spec` onto `w`, naming the key a random draw fails on.
pub(crate) fn wire(
    spec: &Spec,
    w: &mut impl crate::topology::Wiring,
    f: &Fabric,
) -> Result<(), ScenarioError> {
    spec.wire(w, f).map_err(|e| match e {
        RandomRegularError::Disconnected { .. } => invalid(
            "topology.topology_seed",
            e.to_string(),
            "another seed or a higher degree",
        ),
        _ => invalid(
            "topology.degree",
            e.to_string(),
            "1 <= degree < switches, switches x degree even",
        ),
    })
}

/// The plain graph of `spec`, refused when some node cannot be reached.
pub(crate) fn graph(spec: &Spec, f: &Fabric) -> Result<Graph, ScenarioError> {
    let mut g = Graph::default();
    wire(spec, &mut g, f)?;
    if g.hosts.len() < 2 {
        return Err(invalid(
            "topology",
            format!("{} host(s)", g.hosts.len()),
            "at least 2 hosts",
        ));
    }
    let lost = g.unreachable();
    if let Some(&n) = lost.first() {
        return Err(invalid(
            "topology",
            format!(
                "disconnected: {} node(s) unreachable from h0, first {}",
                lost.len(),
                g.names[n as usize]
            ),
            "a connected topology",
        ));
    }
    Ok(g)
}

/// The hop-count report of a scenario's topology (`approxnet-sim topo`).
pub fn topology_report(
    f: &super::ScenarioFile,
) -> Result<crate::topology::TopologyReport, ScenarioError> {
    let t = &f.topology;
    let host = Rate::gbps(positive("topology.host_gbps", t.host_gbps)?);
    let core = Rate::gbps(positive(
        "topology.core_gbps",
        t.core_gbps.unwrap_or(t.host_gbps),
    )?);
    let delay = super::us(t.link_delay_us.max(0.0));
    let core = LinkSpec::new(core, delay);
    let s = spec(t, core, f.seed)?;
    let fabric = Fabric {
        host_link: LinkSpec::new(host, delay),
        core_link: core,
        switch_buffer: 0,
    };
    Ok(crate::topology::report(&graph(&s, &fabric)?))
}
