//! Results: per-job, per-flow and queue CSV files, and the summary.

use crate::job::Job;
use crate::scheme::Scheme;
use crate::transport::ack_path::AckPath;
use crate::workload::JobClass;
use crate::Simulator;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::path::Path;

mod jobs_csv;
mod queues_csv;

/// Statistics of one job class.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClassSummary {
    /// Class name.
    pub name: String,
    /// Scheme.
    pub scheme: String,
    /// Minimal sampling rate.
    pub msr: f64,
    /// Jobs that started.
    pub jobs: usize,
    /// Jobs that met their MSR.
    pub done: usize,
    /// Mean JCT of finished jobs, microseconds.
    pub jct_mean_us: f64,
    /// Median JCT, microseconds.
    pub jct_p50_us: f64,
    /// 99th-percentile JCT, microseconds.
    pub jct_p99_us: f64,
    /// Packets lost / packets sent, over the class.
    pub loss_rate: f64,
    /// Largest per-job loss rate among finished jobs.
    pub max_job_loss: f64,
    /// Mean delivered fraction of messages.
    pub delivered_fraction: f64,
    /// Retransmitted packets / packets sent.
    pub retx_rate: f64,
}

/// Statistics of one training job.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrainingSummary {
    /// Name.
    pub name: String,
    /// Iterations finished.
    pub iterations: usize,
    /// Iterations asked for.
    pub of: u32,
    /// Mean iteration time (compute + communication), microseconds.
    pub iter_mean_us: f64,
    /// Time from its start to its last iteration's end, if it finished, microseconds.
    pub jct_us: Option<f64>,
}

/// Whole-run summary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Scenario name.
    pub name: String,
    /// Per class.
    pub classes: Vec<ClassSummary>,
    /// Per training job.
    pub trainings: Vec<TrainingSummary>,
    /// Simulated seconds.
    pub sim_s: f64,
    /// Wall seconds of the event loop.
    pub wall_s: f64,
    /// Events executed.
    pub events: u64,
    /// Packet-hops (link transmissions).
    pub hops: u64,
    /// Switch drops.
    pub drops: u64,
    /// ECN marks over every queue.
    pub marks: u64,
    /// Data packets delivered to native receivers.
    pub delivered_data: u64,
    /// With `[transport] ack_path = "instant"`: the ACKs handed to their
    /// senders without crossing the network (so in no hop count); `None`
    /// (and not in summary.json) with the default `network`.
    pub instant_acks: Option<u64>,
    /// Mean sampled queue backlog, bytes.
    pub queue_mean_bytes: f64,
    /// 99th percentile sampled queue backlog, bytes.
    pub queue_p99_bytes: f64,
    /// Ports sampled.
    pub queue_ports: usize,
    /// The sampled port with the largest mean backlog, as `node->peer`.
    pub busiest_port: String,
    /// Its mean sampled backlog, bytes.
    pub busiest_mean_bytes: f64,
    /// Its 99th percentile sampled backlog, bytes.
    pub busiest_p99_bytes: f64,
    /// Largest packet pool size (packets alive at once).
    pub peak_packets: usize,
}

/// The `p` quantile (nearest rank) of sorted values; NaN when there are none.
pub(crate) fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// The mean; NaN when there are no values.
pub(crate) fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

impl Summary {
    /// Computes the summary of a finished run.
    pub fn compute(name: &str, sim: &Simulator, classes: &[JobClass], wall_s: f64) -> Summary {
        let mut out = Summary {
            name: name.to_string(),
            sim_s: sim.events.now().as_nanos() as f64 / 1e9,
            wall_s,
            events: sim.events.executed(),
            hops: sim.counters.hops,
            drops: sim.counters.drops,
            marks: sim
                .net
                .ports
                .iter()
                .flat_map(|p| p.queues.iter())
                .map(|q| q.stats.marked)
                .sum(),
            delivered_data: sim.counters.delivered_data,
            instant_acks: (sim.tp.ack_path == AckPath::Instant)
                .then_some(sim.counters.instant_acks),
            peak_packets: sim.pool.peak(),
            ..Default::default()
        };
        for (ci, c) in classes.iter().enumerate() {
            let jobs: Vec<&Job> = sim
                .jobs
                .iter()
                .filter(|j| j.class == ci as u32 && j.start <= sim.events.now())
                .collect();
            let mut jct: Vec<f64> = jobs
                .iter()
                .filter_map(|j| j.jct())
                .map(|x| x as f64 / 1e3)
                .collect();
            jct.sort_by(|a, b| a.total_cmp(b));
            let sent: u64 = jobs.iter().map(|j| j.counters.sent_pkts).sum();
            let lost: u64 = jobs.iter().map(|j| j.counters.lost_pkts).sum();
            let retx: u64 = jobs.iter().map(|j| j.counters.retx_pkts).sum();
            let frac = |a: u64| {
                if sent == 0 {
                    0.0
                } else {
                    a as f64 / sent as f64
                }
            };
            out.classes.push(ClassSummary {
                name: c.name.clone(),
                scheme: c.scheme.to_string(),
                msr: c.msr,
                jobs: jobs.len(),
                done: jct.len(),
                jct_mean_us: mean(&jct),
                jct_p50_us: pct(&jct, 0.5),
                jct_p99_us: pct(&jct, 0.99),
                loss_rate: frac(lost),
                max_job_loss: jobs
                    .iter()
                    .filter(|j| j.done.is_some())
                    .map(|j| j.loss_rate())
                    .fold(0.0, f64::max),
                delivered_fraction: mean(
                    &jobs
                        .iter()
                        .map(|j| j.delivered_fraction())
                        .collect::<Vec<_>>(),
                ),
                retx_rate: frac(retx),
            });
        }
        for t in &sim.trainings {
            let it = &t.state.iterations;
            let d: Vec<f64> = it
                .iter()
                .map(|(a, b)| (*b - *a).as_nanos() as f64 / 1e3)
                .collect();
            out.trainings.push(TrainingSummary {
                name: t.state.spec.name.clone(),
                iterations: it.len(),
                of: t.state.spec.iterations,
                iter_mean_us: mean(&d),
                jct_us: t
                    .state
                    .done()
                    .map(|e| (e - t.state.spec.start).as_nanos() as f64 / 1e3),
            });
        }
        let mut q: Vec<f64> = sim.samples.iter().map(|s| s.bytes as f64).collect();
        if !q.is_empty() {
            out.queue_mean_bytes = q.iter().sum::<f64>() / q.len() as f64;
            q.sort_by(|a, b| a.total_cmp(b));
            out.queue_p99_bytes = pct(&q, 0.99);
            out.busiest(sim);
        }
        out
    }

    /// Names the sampled port with the largest mean backlog (the
    /// bottleneck; the mean over all ports dilutes it with idle ones).
    fn busiest(&mut self, sim: &Simulator) {
        let mut per_port: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
        for x in &sim.samples {
            per_port.entry(x.port).or_default().push(x.bytes as f64);
        }
        self.queue_ports = per_port.len();
        let Some((&port, v)) = per_port
            .iter_mut()
            .max_by(|a, b| mean(a.1).total_cmp(&mean(b.1)).then(b.0.cmp(a.0)))
        else {
            return;
        };
        self.busiest_mean_bytes = mean(v);
        v.sort_by(|a, b| a.total_cmp(b));
        self.busiest_p99_bytes = pct(v, 0.99);
        let p = &sim.net.ports[port as usize];
        let name = |n: u32| &sim.net.nodes[n as usize].name;
        self.busiest_port = format!("{}->{}", name(p.node), name(p.peer));
    }

    /// The one-screen text form.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "scenario {}", self.name);
        let _ = writeln!(
            s,
            "{:<22} {:<12} {:>5} {:>7} {:>11} {:>11} {:>11} {:>7} {:>8} {:>7}",
            "class",
            "scheme",
            "msr",
            "done",
            "jct_mean_us",
            "jct_p50_us",
            "jct_p99_us",
            "loss",
            "delivrd",
            "retx"
        );
        for c in &self.classes {
            let _ = writeln!(
                s,
                "{:<22} {:<12} {:>5.3} {:>7} {:>11.1} {:>11.1} {:>11.1} {:>7.4} {:>8.3} {:>7.4}",
                truncate(&c.name, 22),
                c.scheme,
                c.msr,
                format!("{}/{}", c.done, c.jobs),
                c.jct_mean_us,
                c.jct_p50_us,
                c.jct_p99_us,
                c.loss_rate,
                c.delivered_fraction,
                c.retx_rate
            );
        }
        for t in &self.trainings {
            let _ = writeln!(s, "{}", t.line("training"));
        }
        let _ = writeln!(
            s,
            "simulated {:.3} ms in {:.2} s wall: {} events, {} packet-hops ({:.2} M hops/s), {} drops, peak {} packets",
            self.sim_s * 1e3,
            self.wall_s,
            self.events,
            self.hops,
            self.hops as f64 / self.wall_s.max(1e-9) / 1e6,
            self.drops,
            self.peak_packets
        );
        if let Some(n) = self.instant_acks {
            let _ = writeln!(
                s,
                "ack_path = \"instant\": {n} ACKs reached their senders without crossing the network (in no hop count)"
            );
        }
        if self.queue_mean_bytes > 0.0 || self.queue_p99_bytes > 0.0 {
            let _ = writeln!(
                s,
                "sampled queues over {} ports: mean {:.0} B, p99 {:.0} B; busiest {}: mean {:.0} B, p99 {:.0} B",
                self.queue_ports,
                self.queue_mean_bytes,
                self.queue_p99_bytes,
                self.busiest_port,
                self.busiest_mean_bytes,
                self.busiest_p99_bytes
            );
        }
        s
    }

    /// A small JSON object (hand-written: no serde_json dependency).
    pub fn json(&self) -> String {
        let num = json_num;
        let classes: Vec<String> = self
            .classes
            .iter()
            .map(|c| {
                format!(
                    "{{\"name\":{:?},\"scheme\":{:?},\"msr\":{},\"jobs\":{},\"done\":{},\"jct_mean_us\":{},\"jct_p50_us\":{},\"jct_p99_us\":{},\"loss_rate\":{},\"max_job_loss\":{},\"delivered_fraction\":{},\"retx_rate\":{}}}",
                    c.name, c.scheme, num(c.msr), c.jobs, c.done, num(c.jct_mean_us), num(c.jct_p50_us),
                    num(c.jct_p99_us), num(c.loss_rate), num(c.max_job_loss), num(c.delivered_fraction), num(c.retx_rate)
                )
            })
            .collect();
        let trainings: Vec<String> = self.trainings.iter().map(TrainingSummary::json).collect();
        format!(
            "{{\"name\":{:?},\"sim_s\":{},\"wall_s\":{},\"events\":{},\"hops\":{},\"hops_per_wall_s\":{},\"drops\":{},\"marks\":{},\"delivered_data\":{}{},\"queue_mean_bytes\":{},\"queue_p99_bytes\":{},\"queue_ports\":{},\"busiest_port\":{:?},\"busiest_mean_bytes\":{},\"busiest_p99_bytes\":{},\"peak_packets\":{},\"classes\":[{}],\"trainings\":[{}]}}\n",
            self.name,
            num(self.sim_s),
            num(self.wall_s),
            self.events,
            self.hops,
            num(self.hops as f64 / self.wall_s.max(1e-9)),
            self.drops,
            self.marks,
            self.delivered_data,
            // only with ack_path = "instant": the default's bytes stay as before
            self.instant_acks.map_or(String::new(), |n| format!(
                ",\"ack_path\":\"instant\",\"instant_acks\":{n}"
            )),
            num(self.queue_mean_bytes),
            num(self.queue_p99_bytes),
            self.queue_ports,
            self.busiest_port,
            num(self.busiest_mean_bytes),
            num(self.busiest_p99_bytes),
            self.peak_packets,
            classes.join(","),
            trainings.join(",")
        )
    }
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `{:.6}` of a number, with exactly 0 and 1 (most rows: a finished job,
/// nothing lost) written at once: the standard formatter takes its slow
/// exact path on them (~300 ns a number, ~4 % of a large run's CPU).
struct Fixed6(f64);

impl std::fmt::Display for Fixed6 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let x = self.0;
        if x == 1.0 {
            f.write_str("1.000000")
        } else if x == 0.0 && x.is_sign_positive() {
            f.write_str("0.000000")
        } else {
            write!(f, "{x:.6}")
        }
    }
}

/// Writes jobs.csv, flows.csv (if `flows`), queues.csv, trace.csv (if
/// tracing), summary.txt and summary.json under `dir`.
pub fn write_all(
    dir: &Path,
    sim: &Simulator,
    classes: &[JobClass],
    summary: &Summary,
    flows: bool,
) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut w = BufWriter::new(std::fs::File::create(dir.join("jobs.csv"))?);
    writeln!(w, "job,class,scheme,msr,approximate,src,dst,start_ns,done_ns,jct_ns,messages,needed,sent_msgs,delivered_msgs,bytes,delivered_bytes,delivered_fraction,sent_pkts,retx_pkts,lost_pkts,loss_rate,timeouts")?;
    let now = sim.events.now();
    let mut row = Vec::with_capacity(256);
    let mut memo = jobs_csv::SchemeMsr::default();
    for j in sim.jobs.iter().filter(|j| j.start <= now) {
        row.clear();
        jobs_csv::push_row(&mut row, j, &classes[j.class as usize].name, &mut memo);
        w.write_all(&row)?;
    }
    w.flush()?;
    if !sim.queue_shifts().is_empty() {
        let mut w = BufWriter::new(std::fs::File::create(dir.join("queue_follow.csv"))?);
        writeln!(w, "t_ns,class,queue,leader_queue")?;
        for s in sim.queue_shifts() {
            let c = &classes[s.class as usize];
            writeln!(w, "{},{},{},{}", s.t_ns, c.name, s.queue, s.leader_queue)?;
        }
        w.flush()?;
    }
    if flows {
        let mut w = BufWriter::new(std::fs::File::create(dir.join("flows.csv"))?);
        writeln!(w, "flow,job,src,dst,scheme,bytes,start_ns,fct_ns,received_bytes,sent_pkts,retx_pkts,timeouts,drops,cancelled,credits,wasted_credits,sent_after_enough")?;
        for f in &sim.flow_records() {
            let s = f.stats;
            let scheme: Scheme = sim.jobs[f.job as usize].scheme;
            writeln!(
                w,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                f.id,
                f.job,
                f.src,
                f.dst,
                scheme,
                f.bytes,
                f.start.as_nanos(),
                f.done
                    .map_or(String::new(), |d| (d - f.start).as_nanos().to_string()),
                f.received_bytes,
                s.sent_pkts,
                s.retx_pkts,
                s.timeouts,
                f.drops,
                f.cancelled,
                s.credits,
                s.wasted_credits,
                f.sent_after_enough
            )?;
        }
        w.flush()?;
    }
    if !sim.samples.is_empty() {
        let mut w = BufWriter::new(std::fs::File::create(dir.join("queues.csv"))?);
        writeln!(w, "t_ns,port,node,peer,bytes,pkts")?;
        let mut row = Vec::with_capacity(128);
        for s in &sim.samples {
            let p = &sim.net.ports[s.port as usize];
            row.clear();
            queues_csv::push_row(
                &mut row,
                s,
                &sim.net.nodes[p.node as usize].name,
                &sim.net.nodes[p.peer as usize].name,
            );
            w.write_all(&row)?;
        }
        w.flush()?;
    }
    if !sim.trainings.is_empty() {
        let mut w = BufWriter::new(std::fs::File::create(dir.join("trainings.csv"))?);
        writeln!(w, "training,iteration,start_ns,end_ns,duration_ns")?;
        for t in &sim.trainings {
            for (i, (a, b)) in t.state.iterations.iter().enumerate() {
                writeln!(
                    w,
                    "{},{},{},{},{}",
                    t.state.spec.name,
                    i,
                    a.as_nanos(),
                    b.as_nanos(),
                    (*b - *a).as_nanos()
                )?;
            }
        }
        w.flush()?;
    }
    if let Some(a) = sim.adapter() {
        a.write_outputs(dir)?;
    }
    if let Some(t) = &sim.trace {
        let mut w = BufWriter::new(std::fs::File::create(dir.join("trace.csv"))?);
        t.write_csv(&mut w)?;
        w.flush()?;
    }
    std::fs::write(dir.join("summary.txt"), summary.text())?;
    std::fs::write(dir.join("summary.json"), summary.json())?;
    Ok(())
}

/// A number for the hand-written JSON summaries: non-finite values become
/// `null` (JSON has no NaN or infinity).
pub(crate) fn json_num(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "null".into()
    }
}

impl TrainingSummary {
    /// The summary line of one training (or staged) job: `kind name: ...`.
    pub(crate) fn line(&self, kind: &str) -> String {
        format!(
            "{kind} {}: {}/{} iterations, mean iteration {:.1} us, {}",
            self.name,
            self.iterations,
            self.of,
            self.iter_mean_us,
            self.jct_us
                .map_or("not finished".to_string(), |j| format!("JCT {j:.1} us"))
        )
    }

    /// Its object in summary.json (`trainings` / `staged`).
    pub(crate) fn json(&self) -> String {
        format!(
            "{{\"name\":{:?},\"iterations\":{},\"of\":{},\"iter_mean_us\":{},\"jct_us\":{}}}",
            self.name,
            self.iterations,
            self.of,
            json_num(self.iter_mean_us),
            self.jct_us.map_or("null".into(), json_num)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Fixed6;

    /// The shortcut writes what `{:.6}` writes, for the shortcut's values
    /// and around them.
    #[test]
    fn fixed6_matches_the_standard_format() {
        for x in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1.0 / 3.0,
            0.999_999_5,
            1.000_000_4,
            5e-7,
            1e-12,
            f64::NAN,
            f64::INFINITY,
            f64::MIN_POSITIVE,
            12_345.678_9,
        ] {
            assert_eq!(Fixed6(x).to_string(), format!("{x:.6}"), "{x:e}");
        }
    }
}
