//! The flow-level solver's repair after a change: changes solved together
//! give what solving them one by one gives, a link left out of a repair is
//! put back when the new rates overload it, and on all-to-all traffic
//! (every flow coupled through full host links) the repair re-solves only
//! the flows at or above the changed flow's level.

mod common;

use approxnet_proto::rng::Rng;
use approxnet_sim::fluid::engine::Owner;
use approxnet_sim::fluid::{Demand, Sharing};
use approxnet_sim::scenario;
use common::{demand, random_demand, random_path};

const INF: f64 = f64::INFINITY;

fn same(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-9 * y.abs().max(1.0)
}

#[test]
fn changes_solved_together_equal_changes_solved_one_by_one() {
    for seed in 1..=12u64 {
        let mut rng = Rng::new(seed);
        let links = 8 + rng.below(40) as usize;
        let caps: Vec<f64> = (0..links)
            .map(|_| 1.0 + rng.below(90) as f64 / 10.0)
            .collect();
        // batched: several arrivals and departures, then one solve; one by
        // one: a solve after each; full: everything at every solve
        let mut batched = Sharing::new(caps.clone());
        let mut single = Sharing::new(caps.clone());
        let mut full = Sharing::new(caps.clone());
        full.full = true;
        let mut live: Vec<([u32; 3], Demand)> = Vec::new();
        for _step in 0..120 {
            let batch = 1 + rng.below(8);
            for _ in 0..batch {
                if live.len() > 4 && rng.below(5) < 2 {
                    let k = rng.below(live.len() as u64) as usize;
                    let (ids, _) = live.swap_remove(k);
                    batched.remove(ids[0]);
                    single.remove(ids[1]);
                    single.solve();
                    full.remove(ids[2]);
                } else {
                    let d = random_demand(&mut rng, links, 5, &[0, 0, 0, 0, 1, 2]);
                    let a = batched.add(d.clone());
                    let b = single.add(d.clone());
                    single.solve();
                    let c = full.add(d.clone());
                    live.push(([a, b, c], d));
                }
            }
            batched.solve();
            full.solve();
            for (ids, d) in &live {
                let (x, y, z) = (batched.rate(ids[0]), single.rate(ids[1]), full.rate(ids[2]));
                assert!(
                    same(x, z) && same(y, z),
                    "seed {seed}: {d:?}: together {x}, one by one {y}, full {z}"
                );
            }
        }
    }
}

#[test]
fn a_link_left_out_of_a_repair_is_put_back_when_overloaded() {
    // A (cap 1): f1, f2; U (cap u): f2, f3; B (cap 0.2): f3. B holds f3 at
    // 0.2, A splits 0.5 / 0.5, U carries 0.7 and is not full. When f1
    // leaves, the repair starts at A and leaves U out; f2 alone on A would
    // get 1, which U = 1.1 cannot carry next to f3: U goes back in and f2
    // gets 0.9. With U = 1.5 it carries 1.2 and one filling is enough.
    for (u, want, fillings) in [(1.1, 0.9, 2), (1.5, 1.0, 1)] {
        let mut s = Sharing::new(vec![1.0, u, 0.2]);
        let f1 = s.add(demand(&[0], 1.0, INF, 0));
        let f2 = s.add(demand(&[0, 1], 1.0, INF, 0));
        let f3 = s.add(demand(&[1, 2], 1.0, INF, 0));
        s.solve();
        assert!(same(s.rate(f2), 0.5) && same(s.rate(f3), 0.2));
        s.remove(f1);
        let before = s.rounds;
        s.solve();
        assert!(same(s.rate(f2), want), "U = {u}: f2 at {}", s.rate(f2));
        assert!(same(s.rate(f3), 0.2));
        assert_eq!(s.rounds - before, fillings, "U = {u}");
        assert_eq!(s.changed, vec![f2]);
    }
}

const LEAF_SPINE: &str = r#"
mode = "flow"
duration_ms = 1000.0
[topology]
kind = "leaf_spine"
spines = 2
leaves = 4
hosts_per_leaf = 6
host_gbps = 10.0
link_delay_us = 0.0
"#;

#[test]
fn all_to_all_repairs_solve_only_flows_at_or_above_the_change() {
    // 400 flows at once between random hosts of a non-blocking leaf-spine:
    // the host links couple every flow, so a departure can move most
    // rates, but not those of flows below the departed flow's level
    let run = |full: bool| {
        let sets = [format!("fluid.full_recompute={full}")];
        let sets: Vec<String> = sets.to_vec();
        let f = scenario::parse(LEAF_SPINE, &sets).unwrap();
        let mut b = scenario::build_fluid(&f).unwrap();
        let mut rng = Rng::new(5);
        for _ in 0..400 {
            let src = rng.below(24) as u32;
            let dst = (src + 1 + rng.below(23) as u32) % 24;
            let bytes = 1e5 + rng.below(900_000) as f64;
            b.sim
                .add_flow(src, dst, bytes, 0.0, Owner::Trace, u32::MAX, 1.0, 0, INF);
        }
        b.sim.run();
        let fct: Vec<f64> = b.sim.flows.iter().map(|f| f.fct_ns().unwrap()).collect();
        (fct, b.sim.counters)
    };
    let (inc, ci) = run(false);
    let (full, cf) = run(true);
    for (i, (a, b)) in inc.iter().zip(&full).enumerate() {
        assert!((a - b).abs() <= 1e-6 * b, "flow {i}: {a} vs {b}");
    }
    assert!(
        (ci.solved_flows as f64) < 0.6 * cf.solved_flows as f64,
        "{ci:?} vs {cf:?}"
    );
}

#[test]
fn dense_single_level_repairs_by_threshold_equal_full_solves() {
    // One priority level, flows of 2-4 links each on 24 links: every
    // change couples most flows, so the repair soon takes its set by
    // threshold over all flows (no graph search) and computes the set
    // links' figures from their kept loads; after every batch of changes
    // each rate must still equal a full re-solve's
    for seed in 1..=4u64 {
        let mut rng = Rng::new(100 + seed);
        let links = 24;
        let caps: Vec<f64> = (0..links)
            .map(|_| 1.0 + rng.below(40) as f64 / 10.0)
            .collect();
        let mut inc = Sharing::new(caps.clone());
        let mut full = Sharing::new(caps);
        full.full = true;
        let mut live: Vec<([u32; 2], Demand)> = Vec::new();
        for step in 0..400 {
            let arrivals = if step < 20 { 12 } else { rng.below(3) };
            for _ in 0..arrivals {
                let len = 2 + rng.below(3) as usize;
                let path = random_path(&mut rng, len, links);
                let cap = if rng.below(6) == 0 {
                    0.05 + rng.below(20) as f64 / 100.0
                } else {
                    INF
                };
                let d = demand(&path, [1.0, 2.0, 0.5][rng.below(3) as usize], cap, 0);
                live.push(([inc.add(d.clone()), full.add(d.clone())], d));
            }
            if live.len() > 10 {
                for _ in 0..1 + rng.below(2) {
                    let k = rng.below(live.len() as u64) as usize;
                    let (ids, _) = live.swap_remove(k);
                    inc.remove(ids[0]);
                    full.remove(ids[1]);
                }
            }
            inc.solve();
            full.solve();
            for (ids, d) in &live {
                let (x, z) = (inc.rate(ids[0]), full.rate(ids[1]));
                assert!(
                    same(x, z),
                    "seed {seed} step {step}: {d:?}: repaired {x}, full {z}"
                );
            }
        }
        assert!(
            inc.flat_solves > 100,
            "seed {seed}: {} flat solves",
            inc.flat_solves
        );
        assert!(
            inc.solved < full.solved,
            "{} vs {}",
            inc.solved,
            full.solved
        );
    }
}
