//! The flow-level mode: max-min allocations against hand-computed ones,
//! incremental re-solving against full re-solving, collectives, latency,
//! staged jobs, topologies and scenario errors.

mod common;

use approxnet_proto::rng::Rng;
use approxnet_sim::fluid::engine::Owner;
use approxnet_sim::fluid::{Collective, Demand, FluidSim, Sharing};
use approxnet_sim::scenario::{self, FluidBuilt};
use common::{demand, random_demand};

const INF: f64 = f64::INFINITY;

/// Solves flows over links of these capacities; returns the rates.
fn solve(caps: &[f64], flows: &[Demand]) -> Vec<f64> {
    let mut s = Sharing::new(caps.to_vec());
    let ids: Vec<u32> = flows.iter().map(|d| s.add(d.clone())).collect();
    s.solve();
    ids.iter().map(|&i| s.rate(i)).collect()
}

fn close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-9 * w.abs().max(1.0),
            "flow {i}: got {got:?}, want {want:?}"
        );
    }
}

#[test]
fn classic_three_link_line() {
    // one long flow over links 0-1-2, one short flow per link
    let flows = [
        demand(&[0, 1, 2], 1.0, INF, 0),
        demand(&[0], 1.0, INF, 0),
        demand(&[1], 1.0, INF, 0),
        demand(&[2], 1.0, INF, 0),
    ];
    close(&solve(&[1.0, 1.0, 1.0], &flows), &[0.5, 0.5, 0.5, 0.5]);
    // link 0 is tighter: the long flow gets 1/4 there, the others take the rest
    close(&solve(&[0.5, 1.0, 3.0], &flows), &[0.25, 0.25, 0.75, 2.75]);
}

#[test]
fn two_bottlenecks() {
    // A (cap 1): f0, f1; B (cap 2): f0, f2 -> A binds f0 at 0.5, B gives f2 the rest
    let flows = [
        demand(&[0, 1], 1.0, INF, 0),
        demand(&[0], 1.0, INF, 0),
        demand(&[1], 1.0, INF, 0),
    ];
    close(&solve(&[1.0, 2.0], &flows), &[0.5, 0.5, 1.5]);
}

#[test]
fn weights_share_in_proportion() {
    let one = [
        demand(&[0], 1.0, INF, 0),
        demand(&[0], 2.0, INF, 0),
        demand(&[0], 3.0, INF, 0),
    ];
    close(&solve(&[12.0], &one), &[2.0, 4.0, 6.0]);
    // A (cap 6): f0 (w 2, also on B), f1 (w 1); B (cap 10): f2 (w 1)
    let two = [
        demand(&[0, 1], 2.0, INF, 0),
        demand(&[0], 1.0, INF, 0),
        demand(&[1], 1.0, INF, 0),
    ];
    close(&solve(&[6.0, 10.0], &two), &[4.0, 2.0, 6.0]);
}

#[test]
fn caps_release_capacity_to_the_others() {
    let flows = [
        demand(&[0], 1.0, 1.0, 0),
        demand(&[0], 1.0, INF, 0),
        demand(&[0], 1.0, INF, 0),
    ];
    close(&solve(&[10.0], &flows), &[1.0, 4.5, 4.5]);
    // a weighted flow capped below its share
    let w = [demand(&[0], 3.0, 2.0, 0), demand(&[0], 1.0, INF, 0)];
    close(&solve(&[10.0], &w), &[2.0, 8.0]);
}

#[test]
fn strict_priority_serves_higher_levels_first() {
    // A (cap 10): two level-0 flows capped at 3 and 4, one level-1 flow
    // that also crosses B (cap 2): it gets min(10 - 7, 2)
    let flows = [
        demand(&[0], 1.0, 3.0, 0),
        demand(&[0], 1.0, 4.0, 0),
        demand(&[0, 1], 1.0, INF, 1),
    ];
    close(&solve(&[10.0, 2.0], &flows), &[3.0, 4.0, 2.0]);
    // an uncapped level-0 flow takes the whole link; level 1 starves
    let starve = [demand(&[0], 1.0, INF, 0), demand(&[0], 5.0, INF, 1)];
    close(&solve(&[10.0], &starve), &[10.0, 0.0]);
    // levels are solved on what is left: level 1 splits 10 - 4 by weight
    let split = [
        demand(&[0], 1.0, 4.0, 0),
        demand(&[0], 1.0, INF, 1),
        demand(&[0], 2.0, INF, 1),
    ];
    close(&solve(&[10.0], &split), &[4.0, 2.0, 4.0]);
}

/// Max-min certificate: every link within capacity; every flow at its cap
/// or crossing a saturated link where no flow of its level has a higher
/// rate per weight and no higher level leaves it anything.
fn check_max_min(caps: &[f64], flows: &[(u32, Demand)], rate: impl Fn(u32) -> f64) {
    let mut load = vec![0.0; caps.len()];
    for (id, d) in flows {
        for &l in &d.path {
            load[l as usize] += rate(*id);
        }
    }
    for (l, (&x, &c)) in load.iter().zip(caps).enumerate() {
        assert!(x <= c * (1.0 + 1e-9) + 1e-12, "link {l} carries {x} > {c}");
    }
    for (id, d) in flows {
        let r = rate(*id);
        if r >= d.cap * (1.0 - 1e-9) {
            continue;
        }
        let bottleneck = d.path.iter().any(|&l| {
            let saturated = load[l as usize] >= caps[l as usize] * (1.0 - 1e-9) - 1e-12;
            let top = flows
                .iter()
                .filter(|(_, e)| e.path.contains(&l))
                .all(|(j, e)| {
                    e.priority > d.priority
                        || (e.priority == d.priority
                            && rate(*j) / e.weight <= r / d.weight * (1.0 + 1e-9) + 1e-12)
                        || e.priority < d.priority
                });
            saturated && top
        });
        assert!(bottleneck, "flow {id} at {r} has no bottleneck");
    }
}

#[test]
fn incremental_equals_full_and_is_max_min_on_random_instances() {
    // small dense instances, and larger sparse ones (where the repair
    // stays local and relies on each flow's bottleneck hint)
    for seed in 1..=16u64 {
        let mut rng = Rng::new(seed);
        let links = if seed <= 12 {
            5 + rng.below(30) as usize
        } else {
            60 + rng.below(60) as usize
        };
        let caps: Vec<f64> = (0..links)
            .map(|_| 1.0 + rng.below(100) as f64 / 10.0)
            .collect();
        let mut inc = Sharing::new(caps.clone());
        let mut full = Sharing::new(caps.clone());
        full.full = true;
        let mut live: Vec<(u32, u32, Demand)> = Vec::new();
        for _step in 0..if seed <= 12 { 150 } else { 300 } {
            let batch = 1 + rng.below(3);
            for _ in 0..batch {
                if !live.is_empty() && rng.below(3) == 0 {
                    let k = rng.below(live.len() as u64) as usize;
                    let (a, b, _) = live.swap_remove(k);
                    inc.remove(a);
                    full.remove(b);
                } else {
                    let d = random_demand(&mut rng, links, 4, &[0, 0, 0, 1, 2]);
                    live.push((inc.add(d.clone()), full.add(d.clone()), d));
                }
            }
            inc.solve();
            full.solve();
            for (a, b, d) in &live {
                let (x, y) = (inc.rate(*a), full.rate(*b));
                assert!(
                    (x - y).abs() <= 1e-9 * y.abs().max(1.0),
                    "seed {seed}: {d:?} incremental {x} full {y}"
                );
            }
            let flows: Vec<(u32, Demand)> = live.iter().map(|(_, b, d)| (*b, d.clone())).collect();
            check_max_min(&caps, &flows, |id| full.rate(id));
            let flows: Vec<(u32, Demand)> = live.iter().map(|(a, _, d)| (*a, d.clone())).collect();
            check_max_min(&caps, &flows, |id| inc.rate(id));
        }
    }
}

fn build(text: &str, sets: &[&str]) -> Result<FluidBuilt, String> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let f = scenario::parse(text, &sets).map_err(|e| e.to_string())?;
    scenario::build_fluid(&f).map_err(|e| e.to_string())
}

const STAR: &str = r#"
mode = "flow"
duration_ms = 100.0
[topology]
kind = "dumbbell"
senders = 4
receivers = 4
host_gbps = 10.0
link_delay_us = 1.0
"#;

#[test]
fn latency_is_per_hop_delay_plus_size_over_rate() {
    let mut b = build(
        STAR,
        &[
            "topology.switch_delay_ns=60.0",
            "topology.fec_delay_ns=100.0",
        ],
    )
    .unwrap();
    let sim: &mut FluidSim = &mut b.sim;
    // 1 MB at 10 Gbps = 800 us; path h0 -> sw0 -> h1: 2 links of 1 us,
    // one switch of 60 ns, 2 hops of 100 ns FEC
    let f = sim.add_flow(0, 1, 1e6, 0.0, Owner::Trace, u32::MAX, 1.0, 0, INF);
    // two flows into h3 share its link at 5 Gbps each: both end at 1600 us
    let g = sim.add_flow(4, 3, 1e6, 0.0, Owner::Trace, u32::MAX, 1.0, 0, INF);
    let h = sim.add_flow(5, 3, 1e6, 0.0, Owner::Trace, u32::MAX, 1.0, 0, INF);
    sim.run();
    let lat = 2.0 * 1000.0 + 60.0 + 2.0 * 100.0;
    let fct = |i: u32| sim.flows[i as usize].fct_ns().unwrap();
    assert!((fct(f) - (800_000.0 + lat)).abs() < 1e-6, "{}", fct(f));
    assert!((fct(g) - (1_600_000.0 + lat)).abs() < 1e-6, "{}", fct(g));
    assert!((fct(h) - (1_600_000.0 + lat)).abs() < 1e-6, "{}", fct(h));
}

#[test]
fn a_departure_speeds_up_the_rest() {
    let mut b = build(STAR, &["topology.link_delay_us=0.0"]).unwrap();
    let sim = &mut b.sim;
    // into h3: 0.5 MB and 1 MB share 10 Gbps; the small one leaves at
    // 800 us, then the big one has 0.5 MB left at full rate: 400 us more
    let small = sim.add_flow(0, 3, 5e5, 0.0, Owner::Trace, u32::MAX, 1.0, 0, INF);
    let big = sim.add_flow(1, 3, 1e6, 0.0, Owner::Trace, u32::MAX, 1.0, 0, INF);
    // a late flow from h2 to h4 runs alone at full rate
    let late = sim.add_flow(2, 4, 1e6, 100_000.0, Owner::Trace, u32::MAX, 1.0, 0, INF);
    sim.run();
    let fct = |i: u32| sim.flows[i as usize].fct_ns().unwrap();
    assert!((fct(small) - 800_000.0).abs() < 1e-6);
    assert!((fct(big) - 1_200_000.0).abs() < 1e-6);
    assert!((fct(late) - 800_000.0).abs() < 1e-6);
}

#[test]
fn collectives_make_the_right_flows() {
    let ring = Collective::AllReduceRing { bytes: 4000.0 }.steps(4);
    assert_eq!(ring.len(), 6);
    for s in &ring {
        assert_eq!(
            s,
            &vec![
                (0, 1, 1000.0),
                (1, 2, 1000.0),
                (2, 3, 1000.0),
                (3, 0, 1000.0)
            ]
        );
    }
    let rd = Collective::AllReduceRd {
        bytes: 8.0,
        group: 8,
    }
    .steps(8);
    assert_eq!(rd.len(), 3);
    for (k, s) in rd.iter().enumerate() {
        assert_eq!(s.len(), 8);
        for &(a, b, x) in s {
            assert_eq!((b, x), (a ^ (1 << k), 8.0));
        }
    }
    // within rows of a 4 x 4 grid: 2 steps, partners in the same row
    let rows = Collective::AllReduceRd {
        bytes: 8.0,
        group: 4,
    }
    .steps(16);
    assert_eq!(rows.len(), 2);
    for (k, s) in rows.iter().enumerate() {
        assert_eq!(s.len(), 16);
        for &(a, b, _) in s {
            assert_eq!((b, b / 4), (a ^ (1 << k), a / 4));
        }
    }
    // pairwise all-to-all: n - 1 steps, each a permutation, every ordered
    // pair exactly once over the whole collective
    let pw = Collective::AllToAllPairwise { bytes: 5.0 }.steps(6);
    assert_eq!(pw.len(), 5);
    let mut seen = std::collections::BTreeSet::new();
    for (k, s) in pw.iter().enumerate() {
        assert_eq!(s.len(), 6);
        for &(a, b, x) in s {
            assert_eq!((b, x), ((a + k as u32 + 1) % 6, 5.0));
            assert!(seen.insert((a, b)));
        }
    }
    assert_eq!(seen.len(), 30);
    let t = Collective::Transpose {
        side: 3,
        bytes: 2.0,
    }
    .steps(9);
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].len(), 6);
    assert!(t[0].contains(&(1, 3, 2.0)) && t[0].contains(&(5, 7, 2.0)));
    assert!(!t[0].iter().any(|f| f.0 == 4));
    // SUMMA on 4 x 4 from column / row 1: step 0 moves to position 2,
    // step 1 from 1, 2 to 3, 0; every rank but the root line gets both
    let pb = Collective::PanelBcast {
        side: 4,
        root: 1,
        bytes: 1.0,
    }
    .steps(16);
    assert_eq!(pb.len(), 2);
    assert_eq!((pb[0].len(), pb[1].len()), (8, 16));
    assert!(pb[0].contains(&(4 + 1, 4 + 2, 1.0)) && pb[0].contains(&(4 + 1, 8 + 1, 1.0)));
    let mut got_row: Vec<u32> = pb
        .iter()
        .flatten()
        .filter(|f| f.0 / 4 == f.1 / 4)
        .map(|f| f.1)
        .collect();
    got_row.sort_unstable();
    let mut want: Vec<u32> = (0..16).filter(|r| r % 4 != 1).collect();
    want.sort_unstable();
    assert_eq!(got_row, want);
    let sc = Collective::Scatter {
        root: 2,
        bytes: 1.0,
    }
    .steps(4);
    assert_eq!(sc, vec![vec![(2, 0, 1.0), (2, 1, 1.0), (2, 3, 1.0)]]);
    let a2a = Collective::AllToAll { bytes: 5.0 }.steps(4);
    assert_eq!(a2a.len(), 1);
    assert_eq!(a2a[0].len(), 12);
    assert!(a2a[0].iter().all(|&(a, b, _)| a != b));
    let halo = Collective::Halo {
        grid: vec![3, 3],
        bytes: 1.0,
    }
    .steps(9);
    assert_eq!(halo[0].len(), 36);
    // rank 4 is the middle of the 3 x 3 grid: 3, 5 (x) and 1, 7 (y)
    let mut nb: Vec<u32> = halo[0].iter().filter(|f| f.0 == 4).map(|f| f.1).collect();
    nb.sort_unstable();
    assert_eq!(nb, vec![1, 3, 5, 7]);
    // size-2 dimensions have one neighbour, not the same one twice
    assert_eq!(
        Collective::Halo {
            grid: vec![2, 2],
            bytes: 1.0
        }
        .steps(4)[0]
            .len(),
        8
    );
}

#[test]
fn a_staged_job_completes_at_the_hand_computed_time() {
    let text = format!(
        "{STAR}\n[[staged]]\nname = \"ring\"\nhosts = [0, 1, 2, 3]\niterations = 2\nhost_gflops = 500.0\n\
         [[staged.phases]]\ncompute_gflop = 0.05\n[[staged.phases]]\ncomm = \"allreduce_ring\"\nkb = 4000.0\n"
    );
    let mut b = build(&text, &[]).unwrap();
    b.sim.run();
    let st = &b.sim.staged_state[0];
    // per iteration: 0.05 Gflop at 500 Gflop/s = 100 us compute; 6 ring steps of 1 MB per host at
    // 10 Gbps (each host sends one and receives one flow) = 800 us, plus
    // 2 us of path latency each
    let iter = 100_000.0 + 6.0 * (800_000.0 + 2_000.0);
    let done = st.done.expect("finished");
    assert!((done - 2.0 * iter).abs() < 1e-3, "{done} vs {}", 2.0 * iter);
    assert!((st.compute_ns - 200_000.0).abs() < 1e-6);
    assert_eq!(st.flows, 2 * 6 * 4);
}

#[test]
fn built_in_collectives_run_as_their_explicit_flows() {
    // each built-in collective against the same messages spelled out as
    // `flows` phases: same end time, same flow count
    let head = format!("{STAR}\n[[staged]]\nhosts = [0, 1, 2, 3]\n");
    let phase = |body: &str| format!("[[staged.phases]]\n{body}\n");
    let flows = |pairs: &[(u32, u32)]| {
        let p: Vec<String> = pairs.iter().map(|(a, b)| format!("[{a}, {b}]")).collect();
        phase(&format!(
            "comm = \"flows\"\nkb = 500.0\npairs = [{}]",
            p.join(", ")
        ))
    };
    let cases: Vec<(String, String)> = vec![
        (
            phase("comm = \"all_to_all_pairwise\"\nkb = 500.0"),
            (1..4)
                .map(|k| flows(&(0..4).map(|i| (i, (i + k) % 4)).collect::<Vec<_>>()))
                .collect(),
        ),
        (
            phase("comm = \"allreduce_rd\"\nkb = 500.0\ngroup = 2"),
            flows(&[(0, 1), (1, 0), (2, 3), (3, 2)]),
        ),
        (
            phase("comm = \"transpose\"\nkb = 500.0\ngrid = [2, 2]"),
            flows(&[(1, 2), (2, 1)]),
        ),
        (
            phase("comm = \"scatter\"\nkb = 500.0\nroot = 1"),
            flows(&[(1, 0), (1, 2), (1, 3)]),
        ),
        (
            // 2 x 2 grid from column / row 1: (r, 1) -> (r, 0), (1, c) -> (0, c)
            phase("comm = \"panel_bcast\"\nkb = 500.0\ngrid = [2, 2]\nroot = 1"),
            flows(&[(1, 0), (3, 2), (2, 0), (3, 1)]),
        ),
    ];
    for (built_in, explicit) in cases {
        let run = |body: &str| {
            let mut b = build(&format!("{head}{body}"), &[]).unwrap();
            b.sim.run();
            let st = b.sim.staged_state[0].clone();
            (st.done.expect("finished"), st.flows)
        };
        let (a, b) = (run(&built_in), run(&explicit));
        assert!((a.0 - b.0).abs() < 1e-6, "{built_in}: {a:?} vs {b:?}");
        assert_eq!(a.1, b.1, "{built_in}");
        assert!(a.1 > 0);
    }
}

const TREE: &str = r#"
mode = "flow"
duration_ms = 3.0
seed = 7
[topology]
kind = "fat_tree"
k = 4
host_gbps = 10.0
[[jobs]]
sizes = "fbhd"
load = 0.6
scheme = "dctcp"
[[jobs]]
name = "heavy"
sizes = "fbhd"
load = 0.3
scheme = "dctcp"
weight = 4.0
priority = 1
"#;

#[test]
fn engine_incremental_equals_full_recompute() {
    let run = |sets: &[&str]| {
        let mut b = build(TREE, sets).unwrap();
        b.sim.run();
        (
            b.sim.flows.iter().map(|f| f.fct_ns()).collect::<Vec<_>>(),
            b.sim.counters,
        )
    };
    let (inc, ci) = run(&[]);
    let (full, cf) = run(&["fluid.full_recompute=true"]);
    assert!(inc.iter().filter(|x| x.is_some()).count() > 100);
    assert_eq!(inc.len(), full.len());
    for (i, (a, b)) in inc.iter().zip(&full).enumerate() {
        match (a, b) {
            (Some(a), Some(b)) => assert!((a - b).abs() <= 1e-6 * b, "flow {i}: {a} vs {b}"),
            (None, None) => {}
            _ => panic!("flow {i}: {a:?} vs {b:?}"),
        }
    }
    assert!(ci.solved_flows < cf.solved_flows, "{ci:?} {cf:?}");
    // same seed, same result, bit for bit
    assert_eq!(inc, run(&[]).0);
}

#[test]
fn topologies_report_their_hop_counts() {
    let report = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let f = scenario::parse(STAR, &sets).unwrap();
        scenario::topology_report(&f).unwrap()
    };
    // seed 003 §8: 1,944 servers, racks at most 4 switch hops apart
    let sl = report(&[
        "topology.kind=\"spine_leaf3\"",
        "topology.spines=54",
        "topology.leaves=102",
        "topology.tors=108",
        "topology.hosts_per_tor=18",
    ]);
    assert_eq!((sl.hosts, sl.switches, sl.diameter), (1944, 264, 6));
    // seed 004 §5.6 df11: 256 switches of degree 11, one global hop between groups
    let df = report(&[
        "topology.kind=\"dragonfly\"",
        "topology.groups=32",
        "topology.routers_per_group=8",
        "topology.global_links=4",
        "topology.hosts_per_switch=4",
    ]);
    assert_eq!(
        (df.hosts, df.switches, df.max_switch_degree, df.diameter),
        (1024, 256, 11, 5)
    );
    // tor6: 4 x 4 x 4, 2 hops per dimension at most, plus the host links
    let t6 = report(&[
        "topology.kind=\"torus\"",
        "topology.dims=[4, 4, 4]",
        "topology.hosts_per_switch=4",
    ]);
    assert_eq!((t6.switches, t6.max_switch_degree, t6.diameter), (64, 6, 8));
    let rr = report(&[
        "topology.kind=\"random_regular\"",
        "topology.switches=64",
        "topology.degree=6",
        "topology.hosts_per_switch=4",
    ]);
    assert_eq!(
        (rr.switches, rr.max_switch_degree, rr.links),
        (64, 6, 64 * 3 + 256)
    );
    assert!(
        rr.diameter < t6.diameter && rr.mean_hops < t6.mean_hops,
        "{rr:?} {t6:?}"
    );
}

fn err(text: &str, sets: &[&str]) -> String {
    match build(text, sets) {
        Err(e) => e,
        Ok(_) => panic!("{sets:?} accepted"),
    }
}

#[test]
fn bad_scenarios_name_the_field() {
    let staged = format!(
        "{STAR}\n[[staged]]\nhosts = [0, 1, 2]\n[[staged.phases]]\ncompute_us = 5.0\n[[staged.phases]]\ncomm = \"allreduce_ring\"\nkb = 10.0\n"
    );
    let cases: &[(&str, &[&str], &[&str])] = &[
        (TREE, &["jobs.1.weight=0.0"], &["jobs.1.weight", "> 0"]),
        (TREE, &["jobs.1.weight=-2.0"], &["jobs.1.weight"]),
        (
            TREE,
            &["jobs.0.rate_cap_gbps=-1.0"],
            &["jobs.0.rate_cap_gbps"],
        ),
        (TREE, &["switch.queues=4"], &["`switch`", "flow mode"]),
        (TREE, &["jobs.0.queue=2"], &["jobs.0.queue", "priority"]),
        (TREE, &["topology.ecmp=\"spray\""], &["topology.ecmp"]),
        (
            TREE,
            &["topology.fec_delay_ns=-1.0"],
            &["topology.fec_delay_ns"],
        ),
        (
            &staged,
            &["staged.0.hosts=[0, 1, 99]"],
            &["staged.0.hosts", "99"],
        ),
        (
            &staged,
            &["staged.0.phases.1.kb=-1.0"],
            &["staged.0.phases.1.kb", "negative"],
        ),
        (&staged, &["staged.0.weight=0.0"], &["staged.0.weight"]),
        (
            &staged,
            &["staged.0.phases.1.comm=\"allreduce_rd\""],
            &["staged.0.phases.1.comm", "power-of-two"],
        ),
        (
            &staged,
            &["staged.0.phases.1.comm=\"halo\""],
            &["staged.0.phases.1.grid"],
        ),
        (
            &staged,
            &[
                "staged.0.phases.1.comm=\"allreduce_rd\"",
                "staged.0.phases.1.group=2",
            ],
            &["staged.0.phases.1.group", "divides"],
        ),
        (
            &staged,
            &["staged.0.phases.1.group=1"],
            &["staged.0.phases.1.group", "another collective"],
        ),
        (
            &staged,
            &[
                "staged.0.phases.1.comm=\"transpose\"",
                "staged.0.phases.1.grid=[3, 1]",
            ],
            &["staged.0.phases.1.grid", "[side, side]"],
        ),
        (
            &staged,
            &[
                "staged.0.phases.1.comm=\"scatter\"",
                "staged.0.phases.1.root=3",
            ],
            &["staged.0.phases.1.root", "0 ..= 2"],
        ),
        (
            &staged,
            &[
                "staged.0.phases.1.comm=\"panel_bcast\"",
                "staged.0.phases.1.grid=[3, 1]",
            ],
            &["staged.0.phases.1.grid", "power of two"],
        ),
        (
            &staged,
            &["staged.0.phases.1.comm=\"alltoall\""],
            &["staged.0.phases.1.comm", "all_to_all_pairwise"],
        ),
        (
            &staged,
            &["staged.0.phases.0.compute_gflop=1.0"],
            &["staged.0.phases.0", "exactly one"],
        ),
        (
            TREE,
            &[
                "topology.kind=\"random_regular\"",
                "topology.switches=8",
                "topology.degree=1",
                "topology.hosts_per_switch=1",
            ],
            &["topology.topology_seed", "disconnected"],
        ),
        (
            TREE,
            &[
                "topology.kind=\"random_regular\"",
                "topology.switches=5",
                "topology.degree=3",
                "topology.hosts_per_switch=1",
            ],
            &["topology.degree"],
        ),
        (
            TREE,
            &[
                "topology.kind=\"dragonfly\"",
                "topology.groups=10",
                "topology.routers_per_group=2",
                "topology.global_links=1",
                "topology.hosts_per_switch=1",
            ],
            &["topology.global_links"],
        ),
        (
            TREE,
            &["topology.kind=\"torus\"", "topology.hosts_per_switch=1"],
            &["topology.dims", "missing"],
        ),
    ];
    for (text, sets, want) in cases {
        let e = err(text, sets);
        for w in *want {
            assert!(e.contains(w), "{sets:?}: {e:?} lacks {w:?}");
        }
    }
}

#[test]
fn trace_files_are_checked_row_by_row() {
    let dir = std::env::temp_dir().join(format!("approxnet-fluid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, body: &str| {
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        format!("fluid.flows_csv=\"{}\"", p.display())
    };
    let ok = write(
        "ok.csv",
        "src,dst,bytes,start_ns,weight\n0,1,1000,0,2\n2,3,0,5,1\n",
    );
    let mut b = build(STAR, &[&ok]).unwrap();
    b.sim.run();
    assert_eq!(b.sim.flows.len(), 2);
    assert!(b.sim.flows.iter().all(|f| f.done_ns.is_some()));
    for (body, want) in [
        ("src,dst,bytes,start_ns\n0,99,10,0\n", "column dst"),
        ("src,dst,bytes,start_ns\n0,1,-10,0\n", "column bytes"),
        ("src,dst,bytes,start_ns\n0,0,10,0\n", "same host"),
        (
            "src,dst,bytes,start_ns,weight\n0,1,10,0,0\n",
            "column weight",
        ),
        ("from,to\n0,1\n", "header"),
    ] {
        let set = write("bad.csv", body);
        let e = err(STAR, &[&set]);
        assert!(
            e.contains("fluid.flows_csv") && e.contains(want),
            "{body:?}: {e}"
        );
    }
    let missing = "fluid.flows_csv=\"/nonexistent/flows.csv\"";
    assert!(err(STAR, &[missing]).contains("cannot read"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn packet_mode_refuses_flow_keys_and_unknown_modes() {
    let packet = TREE.replace("mode = \"flow\"\n", "");
    let f = scenario::parse(&packet, &[]).unwrap();
    let e = scenario::build(&f)
        .err()
        .expect("weight refused")
        .to_string();
    assert!(e.contains("jobs.1.weight") && e.contains("flow"), "{e}");
    let f = scenario::parse(TREE, &["mode=\"fluid\"".to_string()]).unwrap();
    let e = scenario::build(&f).err().expect("mode refused").to_string();
    assert!(e.contains("`mode`"), "{e}");
}

#[test]
fn oversized_topologies_are_refused_by_name() {
    let topo = |body: &str| {
        format!("mode = \"flow\"\nduration_ms = 1.0\n[topology]\nhost_gbps = 10.0\n{body}")
    };
    let cases: &[(&str, &[&str])] = &[
        (
            "kind = \"spine_leaf3\"\nspines = 4\nleaves = 4\ntors = 100000\nhosts_per_tor = 100",
            &["topology", "10000000 hosts", "tors x hosts_per_tor", "at most 1048576"],
        ),
        (
            "kind = \"random_regular\"\nswitches = 100000\ndegree = 4\nhosts_per_switch = 1",
            &["topology", "100000 switches", "at most 16384"],
        ),
        (
            "kind = \"dragonfly\"\ngroups = 4000000\nrouters_per_group = 4000\nglobal_links = 4000\nhosts_per_switch = 4000",
            &["groups x routers_per_group x hosts_per_switch", "at most 1048576"],
        ),
        ("kind = \"fat_tree\"\nk = 4096", &["topology.k", "at most 1024"]),
    ];
    for (body, want) in cases {
        let e = err(&topo(body), &[]);
        for w in *want {
            assert!(e.contains(w), "{body}: {e:?} lacks {w:?}");
        }
    }
    // the largest seed topology is well inside the limits
    let seed003 =
        "kind = \"spine_leaf3\"\nspines = 54\nleaves = 102\ntors = 108\nhosts_per_tor = 18";
    let b = build(&topo(seed003), &[]).unwrap();
    assert_eq!(b.sim.net.graph.hosts.len(), 1944);
}
