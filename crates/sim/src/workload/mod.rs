//! Workloads: classes of jobs (N messages with an MSR, from a size CDF),
//! Poisson arrivals at a target load, all-to-all and incast patterns.
//!
//! Seed 000 section 7.1 uses FBKV and FBHD "to determine the size and
//! inter-arrival times of messages in the jobs"; here a job is N messages
//! from one sender to one receiver, produced over time with the class's gap
//! distribution ([`gaps::GapDist`]; `none` = all ready at the job's
//! arrival), and jobs arrive per sender as a Poisson process whose rate
//! makes the offered load (application bytes) the given fraction of the
//! sender's link rate. Production time does not enter the offered load.

pub mod arrivals;
pub mod cdf;
pub mod gaps;
pub mod training;

use crate::scheme::Scheme;
use approxnet_proto::time::Instant;
pub use arrivals::Arrivals;
pub use cdf::SizeDist;
pub use gaps::GapDist;

/// Who sends to whom.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// Every sender picks a uniformly random other host per job.
    AllToAll,
    /// Every sender sends to one target host; `load` is the load on the
    /// target's link, split evenly over the senders.
    Incast {
        /// The receiving host.
        target: u32,
    },
    /// Fixed sender -> receiver pairs, one Poisson stream each; with
    /// `load` = 0, exactly one job per pair at the class start (a one-shot
    /// transfer).
    Pairs(Vec<(u32, u32)>),
    /// Every sender starts exactly one job to `target` at the class start,
    /// plus a uniform jitter below `jitter_ns` (the ns-3 validation's
    /// bulk transfers); `load` is ignored.
    Bulk {
        /// The receiving host.
        target: u32,
        /// Start jitter bound, ns.
        jitter_ns: u64,
    },
}

/// A class of jobs in a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct JobClass {
    /// Name in the output.
    pub name: String,
    /// Traffic pattern.
    pub pattern: Pattern,
    /// Senders (all hosts if empty; ignored by `Pairs`).
    pub senders: Vec<u32>,
    /// Message sizes.
    pub sizes: SizeDist,
    /// Messages per job.
    pub messages: u32,
    /// Gap between consecutive messages of a job (production over time).
    pub gaps: GapDist,
    /// Offered load as a fraction of a host link (see [`Pattern`]).
    pub load: f64,
    /// Minimal sampling rate (fraction of messages that must arrive).
    pub msr: f64,
    /// Transport scheme.
    pub scheme: Scheme,
    /// Whether the job tolerates approximation (MSR < 1 only counts then).
    pub approximate: bool,
    /// First arrival no earlier than this.
    pub start: Instant,
    /// No arrivals after this.
    pub stop: Instant,
    /// Stop after this many jobs in the class (0 = no limit).
    pub max_jobs: u32,
    /// Switch queue for native transports (0 = highest priority).
    pub queue: u8,
}

/// One generated job before it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct JobPlan {
    /// Index of its class.
    pub class: u32,
    /// Sender host.
    pub src: u32,
    /// Receiver host.
    pub dst: u32,
    /// Arrival.
    pub start: Instant,
    /// Message sizes, bytes.
    pub msgs: Vec<u64>,
    /// Production time of each message, ns after `start` (empty: all
    /// ready at `start`); see `Job::ready_ns`.
    pub ready_ns: Vec<u64>,
}

/// Generates every job of every class, sorted by (start, class, src).
/// `rate_bps` is the host link rate. The same sequence as [`Arrivals`]
/// gives one job at a time.
pub fn generate(classes: &[JobClass], hosts: u32, rate_bps: f64, seed: u64) -> Vec<JobPlan> {
    Arrivals::new(classes, hosts, rate_bps, seed).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use approxnet_proto::rng::Rng;

    /// The generator as it was before [`Arrivals`]: every job of every
    /// class drawn stream by stream, then sorted (the oracle of the lazy one).
    fn generate_eager(classes: &[JobClass], hosts: u32, rate_bps: f64, seed: u64) -> Vec<JobPlan> {
        let mut out = Vec::new();
        for (ci, c) in classes.iter().enumerate() {
            let class_seed = seed ^ (0x5eed_0000 + ci as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut rng = Rng::new(class_seed);
            // production gaps draw from their own stream of the class seed, so
            // switching `gaps` on keeps every job's arrival, sizes and receiver
            let mut gap_rng = Rng::new(class_seed ^ 0x6a95_0000_0000_0001);
            let senders: Vec<u32> = if c.senders.is_empty() {
                (0..hosts).collect()
            } else {
                c.senders.clone()
            };
            let streams: Vec<(u32, Option<u32>)> = match &c.pattern {
                Pattern::AllToAll => senders.iter().map(|&s| (s, None)).collect(),
                Pattern::Incast { target } => senders
                    .iter()
                    .filter(|&&s| s != *target)
                    .map(|&s| (s, Some(*target)))
                    .collect(),
                Pattern::Pairs(p) => p.iter().map(|&(s, d)| (s, Some(d))).collect(),
                Pattern::Bulk { target, jitter_ns } => {
                    let pairs: Vec<(u32, u32)> = senders
                        .iter()
                        .filter(|&&s| s != *target)
                        .map(|&s| (s, *target))
                        .collect();
                    one_shot(ci, c, &pairs, *jitter_ns, &mut rng, &mut gap_rng, &mut out);
                    continue;
                }
            };
            if let Pattern::Pairs(p) = &c.pattern {
                if c.load == 0.0 {
                    one_shot(ci, c, p, 0, &mut rng, &mut gap_rng, &mut out);
                    continue;
                }
            }
            if streams.is_empty() || c.load <= 0.0 {
                continue;
            }
            let job_bytes = c.sizes.mean() * c.messages as f64;
            let per_stream_load = match c.pattern {
                Pattern::Incast { .. } => c.load / streams.len() as f64,
                _ => c.load,
            };
            // jobs per second per stream: the load is defined by bytes alone;
            // how long a job takes to produce them does not enter it
            let lambda = per_stream_load * rate_bps / 8.0 / job_bytes;
            let mean_gap_ns = 1e9 / lambda;
            let mut class_jobs = Vec::new();
            for &(src, fixed_dst) in &streams {
                let mut t = c.start.as_nanos() as f64;
                loop {
                    t += -mean_gap_ns * (1.0 - rng.next_f64()).ln();
                    if t > c.stop.as_nanos() as f64 {
                        break;
                    }
                    let dst = fixed_dst.unwrap_or_else(|| {
                        let d = rng.below(hosts as u64 - 1) as u32;
                        if d >= src {
                            d + 1
                        } else {
                            d
                        }
                    });
                    let msgs = (0..c.messages).map(|_| c.sizes.sample(&mut rng)).collect();
                    class_jobs.push(JobPlan {
                        class: ci as u32,
                        src,
                        dst,
                        start: Instant::from_nanos(t as u64),
                        msgs,
                        ready_ns: c.gaps.ready_ns(c.messages, &mut gap_rng),
                    });
                }
            }
            sort_plans(&mut class_jobs, |j| (j.start.as_nanos(), 0, j.src));
            if c.max_jobs > 0 {
                class_jobs.truncate(c.max_jobs as usize);
            }
            out.extend(class_jobs);
        }
        sort_plans(&mut out, |j| (j.start.as_nanos(), j.class, j.src));
        out
    }

    /// Sorts plans by `key`, equal keys in their present order (a stable
    /// sort), by sorting small (key, index) records and moving each plan
    /// once: a stable sort of the 72-byte plans themselves moved each about
    /// log2(n) times (9 % of the instructions of a k = 20 fat-tree run with
    /// 10^5 jobs).
    fn sort_plans(plans: &mut Vec<JobPlan>, key: impl Fn(&JobPlan) -> (u64, u32, u32)) {
        let mut order: Vec<((u64, u32, u32), u32)> = plans
            .iter()
            .enumerate()
            .map(|(i, p)| (key(p), i as u32))
            .collect();
        if order.is_sorted() {
            return;
        }
        // the index makes every record distinct: unstable = stable here
        order.sort_unstable();
        let mut slots: Vec<Option<JobPlan>> = std::mem::take(plans).into_iter().map(Some).collect();
        plans.extend(
            order
                .iter()
                .map(|&(_, i)| slots[i as usize].take().expect("each index appears once")),
        );
    }

    /// One job per `(src, dst)` pair at the class start, plus a uniform jitter
    /// below `jitter_ns`.
    fn one_shot(
        ci: usize,
        c: &JobClass,
        pairs: &[(u32, u32)],
        jitter_ns: u64,
        rng: &mut Rng,
        gap_rng: &mut Rng,
        out: &mut Vec<JobPlan>,
    ) {
        for &(src, dst) in pairs {
            let j = if jitter_ns > 0 {
                rng.below(jitter_ns)
            } else {
                0
            };
            let msgs = (0..c.messages).map(|_| c.sizes.sample(rng)).collect();
            out.push(JobPlan {
                class: ci as u32,
                src,
                dst,
                start: c.start + approxnet_proto::time::Duration::from_nanos(j),
                msgs,
                ready_ns: c.gaps.ready_ns(c.messages, gap_rng),
            });
        }
    }
    use crate::scheme::{Proto, SenderApprox};

    /// `sort_plans` puts plans in exactly the order of a stable sort by
    /// key, ties (many: coarse times) in their first order.
    #[test]
    fn sort_plans_is_a_stable_sort() {
        let mut rng = Rng::new(4);
        let mut plans: Vec<JobPlan> = (0..5_000u64)
            .map(|i| JobPlan {
                class: rng.below(3) as u32,
                src: rng.below(20) as u32,
                dst: 0,
                start: Instant::from_nanos(rng.below(50)),
                // the original position, to see where ties went
                msgs: vec![i],
                ready_ns: Vec::new(),
            })
            .collect();
        let mut want = plans.clone();
        want.sort_by_key(|j| (j.start, j.class, j.src));
        sort_plans(&mut plans, |j| (j.start.as_nanos(), j.class, j.src));
        let ids = |v: &[JobPlan]| v.iter().map(|j| j.msgs[0]).collect::<Vec<_>>();
        assert_eq!(ids(&plans), ids(&want));
    }

    fn class(load: f64) -> JobClass {
        JobClass {
            name: "t".into(),
            pattern: Pattern::AllToAll,
            senders: vec![],
            sizes: SizeDist::Fixed(1000),
            messages: 10,
            gaps: GapDist::None,
            load,
            msr: 1.0,
            scheme: Scheme::Native(Proto::Dctcp, SenderApprox::Exact),
            approximate: false,
            start: Instant::ZERO,
            stop: Instant::from_nanos(10_000_000),
            max_jobs: 0,
            queue: 0,
        }
    }

    #[test]
    fn offered_load_matches_target() {
        let jobs = generate(&[class(0.5)], 8, 10e9, 1);
        let bytes: u64 = jobs.iter().flat_map(|j| j.msgs.iter()).sum();
        let offered = bytes as f64 * 8.0 / 0.01 / (8.0 * 10e9);
        assert!((offered - 0.5).abs() < 0.05, "{offered}");
        assert!(jobs.iter().all(|j| j.src != j.dst && j.dst < 8));
        assert_eq!(jobs, generate(&[class(0.5)], 8, 10e9, 1));
        assert!(jobs.iter().all(|j| j.ready_ns.is_empty()));
    }

    #[test]
    fn gaps_keep_the_jobs_and_add_production_times() {
        let plain = generate(&[class(0.5)], 8, 10e9, 1);
        let mut c = class(0.5);
        c.gaps = GapDist::Fbkv;
        let timed = generate(&[c.clone()], 8, 10e9, 1);
        assert_eq!(timed, generate(&[c], 8, 10e9, 1));
        assert_eq!(plain.len(), timed.len());
        for (a, b) in plain.iter().zip(&timed) {
            assert_eq!(
                (a.src, a.dst, a.start, &a.msgs),
                (b.src, b.dst, b.start, &b.msgs)
            );
            assert_eq!(b.ready_ns.len(), 10);
            assert_eq!(b.ready_ns[0], 0);
        }
    }

    /// The lazy generator gives exactly the plans, in exactly the order,
    /// of drawing everything up front and sorting: every pattern, two
    /// `Pairs` streams of one sender, `max_jobs`, production gaps, and
    /// arrivals dense enough that many share a nanosecond (ties across
    /// classes and streams).
    #[test]
    fn arrivals_repeat_the_eager_generator() {
        let mut dense = class(0.9);
        dense.sizes = SizeDist::Fixed(1);
        dense.messages = 1;
        dense.stop = Instant::from_nanos(2_000);
        let mut incast = class(0.7);
        incast.pattern = Pattern::Incast { target: 3 };
        incast.gaps = GapDist::Fbkv;
        let mut pairs = dense.clone();
        pairs.pattern = Pattern::Pairs(vec![(1, 2), (1, 5), (4, 1), (1, 2)]);
        pairs.load = 0.5;
        let mut once = class(0.0);
        once.pattern = Pattern::Pairs(vec![(2, 3), (2, 4), (0, 7)]);
        once.start = Instant::from_nanos(1_000);
        let mut bulk = class(0.3);
        bulk.pattern = Pattern::Bulk {
            target: 0,
            jitter_ns: 3,
        };
        bulk.gaps = GapDist::Fbkv;
        let mut capped = dense.clone();
        capped.max_jobs = 37;
        let mut empty = class(0.0);
        empty.senders = vec![6];
        // empirical sizes (FBKV's with its GPD tail: one or two draws a
        // message) and gaps, which the first pass skips without computing
        let mut fbkv = class(0.6);
        fbkv.sizes = SizeDist::by_name("fbkv").expect("fbkv");
        fbkv.gaps = GapDist::Fbkv;
        fbkv.messages = 40;
        let mut web = class(0.5);
        web.sizes = SizeDist::by_name("web_search").expect("web_search");
        web.gaps = GapDist::Exp { mean_ns: 500.0 };
        web.max_jobs = 300;
        let all = [
            dense,
            incast,
            pairs,
            once,
            bulk,
            capped,
            empty,
            class(0.4),
            fbkv,
            web,
        ];
        for seed in [1, 2, 99] {
            let want = generate_eager(&all, 8, 10e9, seed);
            let mut lazy = Arrivals::new(&all, 8, 10e9, seed);
            assert_eq!(lazy.remaining(), want.len() as u64);
            let mut got = Vec::new();
            // the next arrival is known before each plan is drawn
            while let Some(t) = lazy.peek_start() {
                let p = lazy.next().expect("a plan after a start");
                assert_eq!(p.start, t);
                assert_eq!(lazy.remaining(), (want.len() - got.len() - 1) as u64);
                got.push(p);
            }
            assert!(lazy.next().is_none());
            assert!(want.len() > 1_000, "{}", want.len());
            let ties = want.windows(2).filter(|w| w[0].start == w[1].start).count();
            assert!(ties > 100, "{ties} ties");
            assert_eq!(got, want, "seed {seed}");
            // each class alone too (its own `max_jobs` and draws)
            for c in &all {
                let one = std::slice::from_ref(c);
                assert_eq!(
                    generate(one, 8, 10e9, seed),
                    generate_eager(one, 8, 10e9, seed)
                );
            }
        }
    }

    /// Skipping a draw leaves a generator where sampling leaves it.
    #[test]
    fn skips_draw_what_samples_draw() {
        for name in ["fbkv", "fbhd", "fbhd_hpcc", "web_search", "fixed:9"] {
            let d = SizeDist::by_name(name).expect("a size name");
            let (mut a, mut b) = (Rng::new(3), Rng::new(3));
            for _ in 0..20_000 {
                d.sample(&mut a);
                d.skip(&mut b);
            }
            assert_eq!(a.next_u64(), b.next_u64(), "{name}");
        }
        let gaps = [
            GapDist::None,
            GapDist::Fbkv,
            GapDist::Exp { mean_ns: 9.0 },
            GapDist::Fixed { ns: 4 },
            GapDist::Empirical {
                points: vec![(1.0, 0.5), (3.0, 1.0)],
            },
        ];
        for g in gaps {
            let (mut a, mut b) = (Rng::new(5), Rng::new(5));
            for n in 0..50 {
                g.ready_ns(n, &mut a);
                g.skip_ready(n, &mut b);
            }
            assert_eq!(a.next_u64(), b.next_u64(), "{g:?}");
        }
    }
}
