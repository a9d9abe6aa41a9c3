//! Jobs generated as they arrive, in the order and with the draws of
//! generating them all up front.
//!
//! [`super::generate`] used to draw every job of a class stream by stream
//! (each sender's Poisson arrivals to the end, then the next sender's,
//! from one generator per class) and then sort them by
//! `(start, class, src)`. [`Arrivals`] gives the same plans one at a time
//! in that order, holding only one pending plan per stream: a first pass
//! runs every class's draws once to find where each stream's draws begin
//! (two generator states of 32 bytes, no plan kept), then each stream
//! draws its jobs again from its own copy when they are due, and a heap
//! merges the streams by `(start, class, src, stream)` — the stream index
//! breaks the ties a stable sort broke by position (two `Pairs` streams of
//! one sender). A run with 10^5-10^6 jobs so holds the plans of the jobs
//! in flight, not of every job of the run.

use super::{JobClass, JobPlan, Pattern};
use approxnet_proto::rng::Rng;
use approxnet_proto::time::{Duration, Instant};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Where a stream's jobs come from.
#[derive(Clone, Debug)]
enum Source {
    /// A Poisson stream of one sender: its generators as they stand before
    /// its next job's draws, and its last arrival time (f64, as drawn).
    Poisson {
        rng: Rng,
        gap_rng: Rng,
        t: f64,
        src: u32,
        fixed_dst: Option<u32>,
    },
    /// One plan drawn at construction (a one-shot class's pair).
    Once(Option<JobPlan>),
}

/// A class's constants that a Poisson stream reads for each job.
#[derive(Clone, Debug)]
struct ClassDraw {
    mean_gap_ns: f64,
    stop_ns: f64,
    /// Jobs the class may still give (`max_jobs`; `u32::MAX`: no limit).
    left: u32,
}

/// Every job of a scenario's classes, one at a time in `(start, class,
/// src)` order: the sequence [`super::generate`] returns.
#[derive(Clone, Debug)]
pub struct Arrivals {
    classes: Vec<JobClass>,
    draws: Vec<ClassDraw>,
    hosts: u32,
    /// Each stream's class and source.
    streams: Vec<(u32, Source)>,
    /// The next plan of each stream that has one (index = stream).
    pending: Vec<Option<JobPlan>>,
    /// `(start ns, class, src, stream)` of each pending plan.
    heap: BinaryHeap<Reverse<(u64, u32, u32, u32)>>,
    /// Plans still to come (the classes' `max_jobs` applied).
    total: u64,
    /// Plans of each class in all.
    class_totals: Vec<u64>,
}

impl Arrivals {
    /// The arrivals of `classes` on `hosts` hosts; `rate_bps` is the host
    /// link rate (see [`super::generate`]).
    pub fn new(classes: &[JobClass], hosts: u32, rate_bps: f64, seed: u64) -> Arrivals {
        let mut a = Arrivals {
            classes: classes.to_vec(),
            draws: Vec::new(),
            hosts,
            streams: Vec::new(),
            pending: Vec::new(),
            heap: BinaryHeap::new(),
            total: 0,
            class_totals: Vec::new(),
        };
        for (ci, c) in classes.iter().enumerate() {
            let class_seed = seed ^ (0x5eed_0000 + ci as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut rng = Rng::new(class_seed);
            // production gaps draw from their own stream of the class seed, so
            // switching `gaps` on keeps every job's arrival, sizes and receiver
            let mut gap_rng = Rng::new(class_seed ^ 0x6a95_0000_0000_0001);
            let left = if c.max_jobs > 0 { c.max_jobs } else { u32::MAX };
            let senders: Vec<u32> = if c.senders.is_empty() {
                (0..hosts).collect()
            } else {
                c.senders.clone()
            };
            let one_shot: Option<(Vec<(u32, u32)>, u64)> = match &c.pattern {
                Pattern::Bulk { target, jitter_ns } => Some((
                    senders
                        .iter()
                        .filter(|&&s| s != *target)
                        .map(|&s| (s, *target))
                        .collect(),
                    *jitter_ns,
                )),
                Pattern::Pairs(p) if c.load == 0.0 => Some((p.clone(), 0)),
                _ => None,
            };
            if let Some((pairs, jitter_ns)) = one_shot {
                // a one-shot class ignores `max_jobs`, as before
                a.draws.push(ClassDraw {
                    mean_gap_ns: 0.0,
                    stop_ns: 0.0,
                    left: u32::MAX,
                });
                a.class_totals.push(pairs.len() as u64);
                for (src, dst) in pairs {
                    let p = one_shot_plan(ci, c, src, dst, jitter_ns, &mut rng, &mut gap_rng);
                    a.add_stream(ci as u32, Source::Once(Some(p)));
                    a.total += 1;
                }
                continue;
            }
            let streams: Vec<(u32, Option<u32>)> = match &c.pattern {
                Pattern::AllToAll => senders.iter().map(|&s| (s, None)).collect(),
                Pattern::Incast { target } => senders
                    .iter()
                    .filter(|&&s| s != *target)
                    .map(|&s| (s, Some(*target)))
                    .collect(),
                Pattern::Pairs(p) => p.iter().map(|&(s, d)| (s, Some(d))).collect(),
                Pattern::Bulk { .. } => unreachable!("a one-shot class"),
            };
            if streams.is_empty() || c.load <= 0.0 {
                a.draws.push(ClassDraw {
                    mean_gap_ns: 0.0,
                    stop_ns: 0.0,
                    left: 0,
                });
                a.class_totals.push(0);
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
            let d = ClassDraw {
                mean_gap_ns: 1e9 / lambda,
                stop_ns: c.stop.as_nanos() as f64,
                left,
            };
            let mut class_total = 0u64;
            for (src, fixed_dst) in streams {
                let mut s = Source::Poisson {
                    rng: rng.clone(),
                    gap_rng: gap_rng.clone(),
                    t: c.start.as_nanos() as f64,
                    src,
                    fixed_dst,
                };
                a.streams.push((ci as u32, s.clone()));
                a.pending.push(None);
                // the first pass: run the stream's draws to their end so
                // that the next stream starts where it would have
                while skip(&mut s, c, &d, hosts) {
                    class_total += 1;
                }
                if let Source::Poisson {
                    rng: r, gap_rng: g, ..
                } = s
                {
                    (rng, gap_rng) = (r, g);
                }
            }
            a.total += class_total.min(left as u64);
            a.class_totals.push(class_total.min(left as u64));
            a.draws.push(d);
        }
        for i in 0..a.streams.len() {
            a.refill(i as u32);
        }
        a.drop_capped();
        a
    }

    fn add_stream(&mut self, class: u32, s: Source) {
        self.streams.push((class, s));
        self.pending.push(None);
    }

    /// Draws stream `i`'s next plan into `pending` and the heap.
    fn refill(&mut self, i: u32) {
        let (ci, s) = &mut self.streams[i as usize];
        let ci = *ci;
        let next = match s {
            Source::Once(p) => p.take(),
            Source::Poisson { .. } => draw(
                s,
                ci,
                &self.classes[ci as usize],
                &self.draws[ci as usize],
                self.hosts,
            ),
        };
        if let Some(p) = next {
            self.heap
                .push(Reverse((p.start.as_nanos(), p.class, p.src, i)));
            self.pending[i as usize] = Some(p);
        }
    }

    /// Arrival time of the next plan, if any.
    pub fn peek_start(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse(k)| Instant::from_nanos(k.0))
    }

    /// Plans still to come.
    pub fn remaining(&self) -> u64 {
        self.total
    }

    /// Plans of each class in all (index = class).
    pub fn class_totals(&self) -> &[u64] {
        &self.class_totals
    }
}

impl Iterator for Arrivals {
    type Item = JobPlan;

    fn next(&mut self) -> Option<JobPlan> {
        let Reverse((_, ci, _, i)) = self.heap.pop()?;
        let p = self.pending[i as usize].take().expect("a pending plan");
        let left = &mut self.draws[ci as usize].left;
        if *left != u32::MAX {
            *left -= 1;
        }
        self.refill(i);
        self.drop_capped();
        self.total -= 1;
        Some(p)
    }
}

impl Arrivals {
    /// Drops the first pending plans while their class has reached its
    /// `max_jobs` (their streams stop drawing), so that the first one
    /// left is the next plan.
    fn drop_capped(&mut self) {
        while let Some(&Reverse((_, ci, _, i))) = self.heap.peek() {
            if self.draws[ci as usize].left > 0 {
                return;
            }
            self.heap.pop();
            self.pending[i as usize] = None;
        }
    }
}

/// Draws what [`draw`] draws for a Poisson stream's next job, without
/// building it; false past the class's stop.
fn skip(s: &mut Source, c: &JobClass, d: &ClassDraw, hosts: u32) -> bool {
    let Source::Poisson {
        rng,
        gap_rng,
        t,
        fixed_dst,
        ..
    } = s
    else {
        return false;
    };
    *t += -d.mean_gap_ns * (1.0 - rng.next_f64()).ln();
    if *t > d.stop_ns {
        return false;
    }
    if fixed_dst.is_none() {
        rng.below(hosts as u64 - 1);
    }
    for _ in 0..c.messages {
        c.sizes.skip(rng);
    }
    c.gaps.skip_ready(c.messages, gap_rng);
    true
}

/// The next job of a Poisson stream, or `None` past the class's stop.
fn draw(s: &mut Source, ci: u32, c: &JobClass, d: &ClassDraw, hosts: u32) -> Option<JobPlan> {
    let Source::Poisson {
        rng,
        gap_rng,
        t,
        src,
        fixed_dst,
    } = s
    else {
        return None;
    };
    *t += -d.mean_gap_ns * (1.0 - rng.next_f64()).ln();
    if *t > d.stop_ns {
        return None; // the stream is over (it is not asked again)
    }
    let src = *src;
    let dst = fixed_dst.unwrap_or_else(|| {
        let d = rng.below(hosts as u64 - 1) as u32;
        if d >= src {
            d + 1
        } else {
            d
        }
    });
    let msgs = (0..c.messages).map(|_| c.sizes.sample(rng)).collect();
    Some(JobPlan {
        class: ci,
        src,
        dst,
        start: Instant::from_nanos(*t as u64),
        msgs,
        ready_ns: c.gaps.ready_ns(c.messages, gap_rng),
    })
}

/// The job of a one-shot class's pair: at the class start plus a uniform
/// jitter below `jitter_ns`.
fn one_shot_plan(
    ci: usize,
    c: &JobClass,
    src: u32,
    dst: u32,
    jitter_ns: u64,
    rng: &mut Rng,
    gap_rng: &mut Rng,
) -> JobPlan {
    let j = if jitter_ns > 0 {
        rng.below(jitter_ns)
    } else {
        0
    };
    let msgs = (0..c.messages).map(|_| c.sizes.sample(rng)).collect();
    JobPlan {
        class: ci as u32,
        src,
        dst,
        start: c.start + Duration::from_nanos(j),
        msgs,
        ready_ns: c.gaps.ready_ns(c.messages, gap_rng),
    }
}
