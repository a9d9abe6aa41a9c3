//! The receiving side's tallies: the server's, and the client's in a
//! reverse (`-R`) test.

use super::report::{gbps, obj, quantile, Json};
use approxnet_proto::event::Role;
use approxnet_proto::Event;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Instant;

#[derive(Default)]
struct Group {
    messages: u64,
    delivered: u64,
}

/// What arrived: messages, bytes, jobs and their groups.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) jobs: u64,
    pub(crate) failed: u64,
    msgs: u64,
    abandoned: u64,
    bytes: u64,
    damaged: u64,
    job_bytes: u64,
    jcts_ms: Vec<f64>,
    groups: BTreeMap<u16, Group>,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Tally {
    /// Counts one event; returns the delivered bytes and JCT (ms) of a
    /// receiver job that completed with it.
    pub(crate) fn on(&mut self, ev: &Event) -> Option<(u64, f64)> {
        let now = Instant::now();
        self.first.get_or_insert(now);
        self.last = Some(now);
        match ev {
            Event::MessageDelivered {
                payload, damaged, ..
            } => {
                self.msgs += 1;
                self.bytes += payload.len() as u64;
                self.damaged += u64::from(*damaged);
            }
            Event::MessageAbandoned { .. } => self.abandoned += 1,
            Event::JobComplete {
                role: Role::Receiver,
                outcome,
                ..
            } => {
                self.jobs += 1;
                match outcome {
                    Ok(r) => {
                        let m: u64 = r.groups.iter().map(|g| u64::from(g.messages)).sum();
                        let d: u64 = r.groups.iter().map(|g| u64::from(g.delivered)).sum();
                        let bytes = (r.bytes as f64 * d as f64 / m.max(1) as f64) as u64;
                        self.job_bytes += bytes;
                        for g in &r.groups {
                            let t = self.groups.entry(g.id).or_default();
                            t.messages += u64::from(g.messages);
                            t.delivered += u64::from(g.delivered);
                        }
                        let jct = r.jct.as_secs_f64() * 1e3;
                        self.jcts_ms.push(jct);
                        return Some((bytes, jct));
                    }
                    Err(_) => self.failed += 1,
                }
            }
            _ => {}
        }
        None
    }

    /// The report's fields (after the mode).
    pub(crate) fn fields(&self) -> Vec<(&'static str, Json)> {
        let active = match (self.first, self.last) {
            (Some(f), Some(l)) => l.duration_since(f).as_secs_f64(),
            _ => 0.0,
        };
        let bytes = self.bytes();
        let groups = Json::Array(
            self.groups
                .iter()
                .map(|(id, t)| {
                    obj(vec![
                        ("id", json!(u64::from(*id))),
                        ("messages", json!(t.messages)),
                        ("delivered", json!(t.delivered)),
                        (
                            "delivered_fraction",
                            json!(t.delivered as f64 / t.messages.max(1) as f64),
                        ),
                    ])
                })
                .collect(),
        );
        let mut jcts = self.jcts_ms.clone();
        jcts.sort_by(f64::total_cmp);
        vec![
            ("jobs", json!(self.jobs)),
            ("jobs_failed", json!(self.failed)),
            ("messages_delivered", json!(self.msgs)),
            ("messages_abandoned", json!(self.abandoned)),
            ("messages_damaged", json!(self.damaged)),
            ("bytes_delivered", json!(bytes)),
            ("active_s", json!(active)),
            ("goodput_gbps", json!(gbps(bytes, active))),
            ("groups", groups),
            (
                "receiver_jct_ms",
                obj(vec![
                    ("p50", json!(quantile(&jcts, 0.5))),
                    ("p99", json!(quantile(&jcts, 0.99))),
                ]),
            ),
        ]
    }

    /// Delivered bytes: the payloads' if kept, else from the job reports.
    pub(crate) fn bytes(&self) -> u64 {
        if self.bytes == 0 {
            self.job_bytes
        } else {
            self.bytes
        }
    }
}
