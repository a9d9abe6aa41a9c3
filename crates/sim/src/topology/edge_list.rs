//! A topology from a user's file (`kind = "edges"`, `file = PATH`), as ns-3
//! and SimGrid users bring their own platforms. One line per host or link,
//! `#` comments:
//!
//! ```text
//! host h0 tor0              # a host on switch tor0 (host link: host_gbps)
//! host h1 tor0 25           # ... at 25 Gbit/s
//! link tor0 spine0          # switch-to-switch: core_gbps, link_delay_us
//! link tor0 spine1 100 2.5  # ... at 100 Gbit/s, 2.5 us
//! ```
//!
//! Switches are the names that appear in `link` lines or as a host's switch;
//! hosts are numbered in the order of their lines (keep a rack's hosts
//! together: routes are stored per run of consecutive hosts).

use super::{Fabric, Wiring};
use crate::fabric::link::LinkSpec;
use approxnet_proto::time::Duration;
use approxnet_proto::units::Rate;
use std::collections::HashMap;

/// Most nodes a file may declare.
const MAX_NODES: usize = 1 << 20;

/// A parsed edge list: switches by index, hosts and links referring to them.
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeList {
    /// Switch names, in order of first appearance.
    pub switches: Vec<String>,
    /// `(host name, switch index, rate override in Gbit/s)`, in file order.
    pub hosts: Vec<(String, u32, Option<f64>)>,
    /// `(switch a, switch b, rate override in Gbit/s, delay override in us)`.
    pub links: Vec<(u32, u32, Option<f64>, Option<f64>)>,
}

fn number(v: &str, what: &str, line: usize) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ if what == "delay" => match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
            _ => Err(format!("line {line}: {what} {v:?} is not a number >= 0")),
        },
        _ => Err(format!("line {line}: {what} {v:?} is not a number > 0")),
    }
}

impl EdgeList {
    /// Parses the file's text; errors name the line.
    pub fn parse(text: &str) -> Result<EdgeList, String> {
        let mut index: HashMap<String, u32> = HashMap::new();
        let mut host_names: HashMap<String, usize> = HashMap::new();
        let mut e = EdgeList {
            switches: Vec::new(),
            hosts: Vec::new(),
            links: Vec::new(),
        };
        let mut switch = |name: &str, e: &mut EdgeList, line: usize| -> Result<u32, String> {
            if let Some(&i) = index.get(name) {
                return Ok(i);
            }
            if e.switches.len() + e.hosts.len() >= MAX_NODES {
                return Err(format!("line {line}: more than {MAX_NODES} nodes"));
            }
            let i = e.switches.len() as u32;
            index.insert(name.to_string(), i);
            e.switches.push(name.to_string());
            Ok(i)
        };
        for (n, raw) in text.lines().enumerate() {
            let line = n + 1;
            let body = raw.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            let f: Vec<&str> = body.split_whitespace().collect();
            match f[0] {
                "host" => {
                    if !(3..=4).contains(&f.len()) {
                        return Err(format!("line {line}: expected `host NAME SWITCH [GBPS]`"));
                    }
                    if host_names.insert(f[1].to_string(), line).is_some() {
                        return Err(format!("line {line}: host {:?} declared twice", f[1]));
                    }
                    if host_names.contains_key(f[2]) {
                        return Err(format!("line {line}: {:?} is a host, not a switch", f[2]));
                    }
                    let gbps = f.get(3).map(|v| number(v, "rate", line)).transpose()?;
                    let s = switch(f[2], &mut e, line)?;
                    if e.switches.len() + e.hosts.len() >= MAX_NODES {
                        return Err(format!("line {line}: more than {MAX_NODES} nodes"));
                    }
                    e.hosts.push((f[1].to_string(), s, gbps));
                }
                "link" => {
                    if !(3..=5).contains(&f.len()) {
                        return Err(format!(
                            "line {line}: expected `link SWITCH SWITCH [GBPS [DELAY_US]]`"
                        ));
                    }
                    for name in &f[1..3] {
                        if host_names.contains_key(*name) {
                            return Err(format!(
                                "line {line}: {name:?} is a host: hosts join with a `host` line"
                            ));
                        }
                    }
                    if f[1] == f[2] {
                        return Err(format!("line {line}: a link from {:?} to itself", f[1]));
                    }
                    let a = switch(f[1], &mut e, line)?;
                    let b = switch(f[2], &mut e, line)?;
                    let gbps = f.get(3).map(|v| number(v, "rate", line)).transpose()?;
                    let delay = f.get(4).map(|v| number(v, "delay", line)).transpose()?;
                    e.links.push((a, b, gbps, delay));
                }
                other => {
                    return Err(format!(
                        "line {line}: unknown line kind {other:?} (host or link)"
                    ))
                }
            }
        }
        // a host name used as a link end before its `host` line
        for (name, &line) in &host_names {
            if index.contains_key(name) {
                return Err(format!("line {line}: {name:?} is both a host and a switch"));
            }
        }
        if e.hosts.len() < 2 {
            return Err(format!("{} host line(s): at least 2 hosts", e.hosts.len()));
        }
        Ok(e)
    }

    /// Lays the network out: switches first, then the hosts in file order
    /// (each joined to its switch), then the switch-to-switch links.
    pub fn wire(&self, w: &mut impl Wiring, f: &Fabric) {
        let ids: Vec<u32> = self
            .switches
            .iter()
            .map(|s| w.add_switch(s.clone(), f.switch_buffer))
            .collect();
        for (_, s, gbps) in &self.hosts {
            let h = w.add_host();
            let link = match gbps {
                Some(g) => LinkSpec {
                    rate: Rate::gbps(*g),
                    ..f.host_link
                },
                None => f.host_link,
            };
            w.connect(h, ids[*s as usize], link);
        }
        for &(a, b, gbps, delay) in &self.links {
            let mut link = f.core_link;
            if let Some(g) = gbps {
                link.rate = Rate::gbps(g);
            }
            if let Some(us) = delay {
                link.delay = Duration::from_nanos((us * 1e3).round() as u64);
            }
            w.connect(ids[a as usize], ids[b as usize], link);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Graph;

    fn fabric() -> Fabric {
        let l = LinkSpec::new(Rate::gbps(10.0), Duration::from_micros(1));
        Fabric {
            host_link: l,
            core_link: l,
            switch_buffer: 1 << 20,
        }
    }

    #[test]
    fn a_two_rack_file_wires_hosts_in_order_with_overrides() {
        let text = "# two racks\nhost a t0\nhost b t0 25\nhost c t1\nlink t0 t1 40 3.5 # core\n";
        let e = EdgeList::parse(text).unwrap();
        assert_eq!(e.switches, ["t0", "t1"]);
        let mut g = Graph::default();
        e.wire(&mut g, &fabric());
        assert_eq!(g.hosts.len(), 3);
        assert_eq!(g.links.len(), 4);
        assert_eq!(g.links[1].2.rate, Rate::gbps(25.0));
        assert_eq!(g.links[3].2.rate, Rate::gbps(40.0));
        assert_eq!(g.links[3].2.delay, Duration::from_nanos(3500));
        assert!(g.unreachable().is_empty());
    }

    #[test]
    fn bad_lines_are_refused_with_their_number() {
        for (text, needle) in [
            (
                "host a t0\nhost a t1\n",
                "line 2: host \"a\" declared twice",
            ),
            ("host a t0\nhost b a\n", "line 2: \"a\" is a host"),
            (
                "host a t0\nhost b t0\nlink t0 t0\n",
                "line 3: a link from \"t0\" to itself",
            ),
            ("host a t0\nhost b t0 -3\n", "line 2: rate \"-3\""),
            (
                "host a t0\nhost b t0\nlink t0 t1 10 x\n",
                "line 3: delay \"x\"",
            ),
            ("switch s0\n", "line 1: unknown line kind \"switch\""),
            ("host a t0\n", "at least 2 hosts"),
            (
                "link a t0\nhost a t1\nhost b t1\n",
                "both a host and a switch",
            ),
            ("host a\n", "line 1: expected `host NAME SWITCH [GBPS]`"),
        ] {
            let e = EdgeList::parse(text).unwrap_err();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
