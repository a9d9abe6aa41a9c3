//! Random regular graph of switches (Jellyfish, Singla et al., NSDI 2012;
//! seed 004 §5.6's r6 / r8 / r11 / r17): `switches` switches, each with
//! `degree` links to other switches and `hosts_per_switch` hosts, drawn
//! from a seed.
//!
//! Construction as Jellyfish's: join random pairs of switches that both
//! have a free port and no link yet; when no such pair is left but a switch
//! still has two or more free ports, remove a random link `(u, v)` not
//! touching it and join it to both `u` and `v` (and when the last two
//! switches with a free port are already joined, a random link `(u, v)`
//! becomes `(a, u)` and `(b, v)`). The result is simple (no
//! self-loops or parallel links) and exactly `degree`-regular. A
//! disconnected draw is redrawn (the next draw of the same generator), up
//! to 16 times.

use super::{Fabric, Wiring};
use approxnet_proto::rng::Rng;
use thiserror::Error;

/// Why no random regular graph could be built.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum RandomRegularError {
    /// `switches * degree` is odd, or `degree >= switches`, or a count is 0.
    #[error("no simple {degree}-regular graph on {switches} switches (need 1 <= degree < switches and switches x degree even)")]
    Impossible {
        /// Switches asked for.
        switches: u32,
        /// Degree asked for.
        degree: u32,
    },
    /// Every draw was disconnected.
    #[error("16 draws of a {degree}-regular graph on {switches} switches were all disconnected")]
    Disconnected {
        /// Switches asked for.
        switches: u32,
        /// Degree asked for.
        degree: u32,
    },
}

/// The switch-to-switch links of a connected random `degree`-regular graph.
pub fn random_regular_links(
    switches: u32,
    degree: u32,
    seed: u64,
) -> Result<Vec<(u32, u32)>, RandomRegularError> {
    if degree == 0 || degree >= switches || (switches as u64 * degree as u64) % 2 == 1 {
        return Err(RandomRegularError::Impossible { switches, degree });
    }
    let mut rng = Rng::new(seed ^ 0x6a65_6c6c_7966_6973);
    for _ in 0..16 {
        let links = draw(switches as usize, degree as usize, &mut rng);
        if connected(switches as usize, &links) {
            return Ok(links);
        }
    }
    Err(RandomRegularError::Disconnected { switches, degree })
}

fn draw(n: usize, d: usize, rng: &mut Rng) -> Vec<(u32, u32)> {
    let mut adj: Vec<Vec<u32>> = vec![Vec::with_capacity(d); n];
    let mut links: Vec<(u32, u32)> = Vec::with_capacity(n * d / 2);
    let linked = |adj: &Vec<Vec<u32>>, a: u32, b: u32| adj[a as usize].contains(&b);
    loop {
        let open: Vec<u32> = (0..n as u32)
            .filter(|&x| adj[x as usize].len() < d)
            .collect();
        if open.is_empty() {
            break;
        }
        // a random joinable pair: a few random tries, then an exhaustive look
        let mut pair = None;
        for _ in 0..64 {
            let a = open[rng.below(open.len() as u64) as usize];
            let b = open[rng.below(open.len() as u64) as usize];
            if a != b && !linked(&adj, a, b) {
                pair = Some((a, b));
                break;
            }
        }
        if pair.is_none() {
            let mut cands = Vec::new();
            for (i, &a) in open.iter().enumerate() {
                for &b in &open[i + 1..] {
                    if !linked(&adj, a, b) {
                        cands.push((a, b));
                    }
                }
            }
            if !cands.is_empty() {
                pair = Some(cands[rng.below(cands.len() as u64) as usize]);
            }
        }
        if let Some((a, b)) = pair {
            join(&mut adj, &mut links, a, b);
            continue;
        }
        // stuck: a switch with >= 2 free ports takes over a random link
        let Some(&x) = open.iter().find(|&&x| d - adj[x as usize].len() >= 2) else {
            // two switches with one free port each, already joined: a
            // random link (u, v) away from them becomes (a, u) and (b, v)
            let [a, b] = open[..] else {
                break;
            };
            let cands: Vec<usize> = (0..links.len())
                .filter(|&i| {
                    let (u, v) = links[i];
                    let fits = |p: u32, q: u32| {
                        p != a
                            && p != b
                            && q != a
                            && q != b
                            && !linked(&adj, a, p)
                            && !linked(&adj, b, q)
                    };
                    fits(u, v) || fits(v, u)
                })
                .collect();
            let Some((u, v)) = unlink_random(&mut adj, &mut links, &cands, rng) else {
                break;
            };
            let (u, v) = if !linked(&adj, a, u) && !linked(&adj, b, v) {
                (u, v)
            } else {
                (v, u)
            };
            for (p, q) in [(a, u), (b, v)] {
                join(&mut adj, &mut links, p, q);
            }
            continue;
        };
        let cands: Vec<usize> = (0..links.len())
            .filter(|&i| {
                let (u, v) = links[i];
                u != x && v != x && !linked(&adj, x, u) && !linked(&adj, x, v)
            })
            .collect();
        let Some((u, v)) = unlink_random(&mut adj, &mut links, &cands, rng) else {
            break;
        };
        for w in [u, v] {
            join(&mut adj, &mut links, x, w);
        }
    }
    links
}

/// Links `a` and `b`.
fn join(adj: &mut [Vec<u32>], links: &mut Vec<(u32, u32)>, a: u32, b: u32) {
    adj[a as usize].push(b);
    adj[b as usize].push(a);
    links.push((a.min(b), a.max(b)));
}

/// Removes the link `links[i]` for an `i` drawn at random from `cands`
/// and returns it; `None` when `cands` is empty.
fn unlink_random(
    adj: &mut [Vec<u32>],
    links: &mut Vec<(u32, u32)>,
    cands: &[usize],
    rng: &mut Rng,
) -> Option<(u32, u32)> {
    if cands.is_empty() {
        return None;
    }
    let i = cands[rng.below(cands.len() as u64) as usize];
    let (u, v) = links.swap_remove(i);
    adj[u as usize].retain(|&y| y != v);
    adj[v as usize].retain(|&y| y != u);
    Some((u, v))
}

fn connected(n: usize, links: &[(u32, u32)]) -> bool {
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in links {
        adj[a as usize].push(b);
        adj[b as usize].push(a);
    }
    let mut seen = vec![false; n];
    let mut stack = vec![0u32];
    seen[0] = true;
    let mut count = 1;
    while let Some(x) = stack.pop() {
        for &y in &adj[x as usize] {
            if !seen[y as usize] {
                seen[y as usize] = true;
                count += 1;
                stack.push(y);
            }
        }
    }
    count == n
}

/// Adds the switches, their hosts and the links of
/// [`random_regular_links`].
pub fn random_regular(
    b: &mut impl Wiring,
    f: &Fabric,
    switches: u32,
    degree: u32,
    hosts_per_switch: u32,
    seed: u64,
) -> Result<(), RandomRegularError> {
    let links = random_regular_links(switches, degree, seed)?;
    let sw: Vec<u32> = (0..switches)
        .map(|i| b.add_switch(format!("rr{i}"), f.switch_buffer))
        .collect();
    for &s in &sw {
        for _ in 0..hosts_per_switch {
            let h = b.add_host();
            b.connect(h, s, f.host_link);
        }
    }
    for (a, c) in links {
        b.connect(sw[a as usize], sw[c as usize], f.core_link);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_simple_connected_and_seeded() {
        for (n, d, seed) in [(64, 6), (256, 8), (256, 11), (256, 17), (10, 9), (12, 3)]
            .into_iter()
            .flat_map(|(n, d)| (1..=6u64).map(move |s| (n, d, s)))
        {
            let links = random_regular_links(n, d, seed).unwrap();
            let mut deg = vec![0u32; n as usize];
            let mut seen = std::collections::HashSet::new();
            for &(a, b) in &links {
                assert!(a < b, "{a} {b}");
                assert!(seen.insert((a, b)), "parallel link {a}-{b}");
                deg[a as usize] += 1;
                deg[b as usize] += 1;
            }
            assert!(
                deg.iter().all(|&x| x == d),
                "n {n} d {d} seed {seed}: {deg:?}"
            );
            assert_eq!(links, random_regular_links(n, d, seed).unwrap());
            assert_ne!(links, random_regular_links(n, d, seed + 100).unwrap());
        }
    }

    #[test]
    fn impossible_degrees_are_refused() {
        for (n, d) in [(5, 3), (4, 4), (4, 0)] {
            assert_eq!(
                random_regular_links(n, d, 1),
                Err(RandomRegularError::Impossible {
                    switches: n,
                    degree: d
                })
            );
        }
    }
}
