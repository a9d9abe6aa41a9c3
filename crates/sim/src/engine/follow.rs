//! Background traffic that follows another class's switch queue (seed 000
//! section 7.1.2, Figs. 10 and 11).
//!
//! The paper creates "synthetic, controlled background traffic" that starts
//! in the foreground job's queue and is shifted by the experimenter: in
//! Fig. 10 into the queue the job has moved to (4, then 3, then 2), in
//! Fig. 11 "one priority higher in the half way". A follower class's jobs
//! take their switch queue from here instead of their `queue` key: at its
//! first job the leader's current queue, then at each `join` time the
//! leader's queue at that moment, and at each `up` time one queue higher
//! priority (lower index, at least 0) than where it is. Jobs already
//! started keep their queue. The leader's queue is the one its DATA packets
//! used most since the previous look (ATP, counted by the adapter: a job
//! whose TLR sits at a queue boundary alternates between two queues), or
//! its `queue` key (native).

use super::Simulator;
use crate::event::Ev;
use approxnet_proto::time::Instant;

/// One follower class and when it moves.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueFollow {
    /// The class whose jobs follow.
    pub class: u32,
    /// The class they follow.
    pub leader: u32,
    /// The leader's queue when it reports none (a native class's `queue`).
    pub leader_default: u8,
    /// The follower's queue before the leader has sent anything (an ATP
    /// leader) or its queue (a native one).
    pub initial: u8,
    /// Times at which the follower joins the leader's current queue.
    pub join_at: Vec<Instant>,
    /// Times at which the follower moves one queue up.
    pub up_at: Vec<Instant>,
}

/// A follower's queue changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueShift {
    /// When, ns.
    pub t_ns: u64,
    /// Follower class.
    pub class: u32,
    /// Its queue from then on.
    pub queue: u8,
    /// The leader's queue at that moment.
    pub leader_queue: u8,
}

/// State of the followers of one run.
#[derive(Clone, Debug, Default)]
pub(super) struct Followers {
    rules: Vec<QueueFollow>,
    /// Current queue of each follower (`None` until its first job).
    queue: Vec<Option<u8>>,
    /// Rule of each class, if it follows.
    of_class: Vec<Option<u32>>,
    /// Every change, in order.
    pub(super) shifts: Vec<QueueShift>,
}

impl Simulator {
    /// Makes class `f.class` follow class `f.leader`'s queue.
    pub fn add_queue_follow(&mut self, f: QueueFollow) {
        let idx = self.followers.rules.len() as u32;
        for &t in &f.join_at {
            self.events.schedule(
                t,
                Ev::QueueShift {
                    follow: idx,
                    up: false,
                },
            );
        }
        for &t in &f.up_at {
            self.events.schedule(
                t,
                Ev::QueueShift {
                    follow: idx,
                    up: true,
                },
            );
        }
        let c = f.class as usize;
        if self.followers.of_class.len() <= c {
            self.followers.of_class.resize(c + 1, None);
        }
        self.followers.of_class[c] = Some(idx);
        if let Some(a) = self.adapter.as_mut() {
            a.track_class_queues();
        }
        self.followers.rules.push(f);
        self.followers.queue.push(None);
    }

    /// Every queue change of a follower class so far.
    pub fn queue_shifts(&self) -> &[QueueShift] {
        &self.followers.shifts
    }

    /// The leader's queue: the one its DATA used most since the previous
    /// look (ATP), or its `queue` key (native).
    fn leader_queue(&mut self, idx: usize) -> Option<u8> {
        let leader = self.followers.rules[idx].leader;
        self.adapter.as_mut().and_then(|a| a.class_queue(leader))
    }

    fn set_follow_queue(&mut self, now: Instant, idx: usize, q: u8, leader_queue: u8) {
        self.followers.queue[idx] = Some(q);
        let shift = QueueShift {
            t_ns: now.as_nanos(),
            class: self.followers.rules[idx].class,
            queue: q,
            leader_queue,
        };
        self.followers.shifts.push(shift);
    }

    pub(super) fn queue_shift(&mut self, now: Instant, idx: u32, up: bool) {
        let i = idx as usize;
        let leader = self
            .leader_queue(i)
            .unwrap_or(self.followers.rules[i].leader_default);
        let q = if up {
            let cur = self.followers.queue[i].unwrap_or(self.followers.rules[i].initial);
            cur.saturating_sub(1)
        } else {
            leader
        };
        self.set_follow_queue(now, i, q, leader);
    }

    /// The switch queue for native job `j` starting now.
    pub(super) fn queue_for_job(&mut self, now: Instant, j: u32) -> u8 {
        let class = self.jobs[j as usize].class as usize;
        let Some(Some(idx)) = self.followers.of_class.get(class).copied() else {
            return self.job_queue[j as usize];
        };
        let i = idx as usize;
        match self.followers.queue[i] {
            Some(q) => q,
            None => {
                let known = self.leader_queue(i);
                let f = &self.followers.rules[i];
                let q = known.unwrap_or(f.initial);
                let leader = known.unwrap_or(f.leader_default);
                self.set_follow_queue(now, i, q, leader);
                q
            }
        }
    }
}
