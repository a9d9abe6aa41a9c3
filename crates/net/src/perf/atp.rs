//! ATP client and server over the blocking runtime.

use super::cpu::process_cpu_seconds;
use super::interval::Intervals;
use super::produce::{Feed, GapRng, Production};
use super::receive::Tally;
use super::report::{cpu_per_gb, gbps, obj, quantile, runtime_json, Json};
use super::reverse;
use super::sizes::Sizes;
use crate::{Endpoint, EpochSample, RuntimeConfig};
use approxnet_proto::event::Role;
use approxnet_proto::job::{MessageSpec, Payload};
use approxnet_proto::rng::Rng;
use approxnet_proto::{ConnectionHandle, Event, JobSpec, Pushed};
use serde_json::json;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// What the client sends.
pub(crate) struct ClientPlan {
    pub(crate) server: SocketAddr,
    pub(crate) groups: Vec<f64>,
    pub(crate) sizes: Sizes,
    pub(crate) sizes_spec: String,
    pub(crate) messages: usize,
    pub(crate) max_size: usize,
    pub(crate) precise: f64,
    pub(crate) duration: Duration,
    pub(crate) max_jobs: u64,
    pub(crate) window: usize,
    pub(crate) seed: u64,
    /// When each message becomes available (`--gap-us`, `--produce-mbps`).
    pub(crate) production: Production,
    /// Seeds the production gaps alone (`--gap-seed`, default `--seed`).
    pub(crate) gap_seed: u64,
    /// Interval reports every this long (`-i`; None: none).
    pub(crate) interval: Option<Duration>,
    /// Print a line per interval (text mode; JSON keeps the series only).
    pub(crate) print_intervals: bool,
    /// Connections to the server, each with its own `window` of jobs (`-P`).
    pub(crate) parallel: usize,
    /// `--gap-us` / `--produce-mbps` as given (a reverse request carries them).
    pub(crate) gap_spec: Option<String>,
    pub(crate) produce_spec: Option<String>,
    /// The server sends, the client receives (`-R`).
    pub(crate) reverse: bool,
}

#[derive(Default)]
struct GroupTotals {
    messages: u64,
    must: u64,
    delivered: u64,
    abandoned: u64,
}

/// One job: its spec (with the messages produced at job start), its bytes,
/// its production span in ns, and the messages still to be produced.
struct BuiltJob {
    spec: JobSpec,
    bytes: u64,
    span_ns: u64,
    later: Option<(Vec<u64>, Vec<MessageSpec>)>,
}

fn build_job(plan: &ClientPlan, rng: &mut Rng, gaps: &mut GapRng) -> Result<BuiltJob, String> {
    let mut spec = JobSpec::new(plan.groups[0]).map_err(|e| e.to_string())?;
    for (i, &m) in plan.groups.iter().enumerate().skip(1) {
        spec = spec.group(i as u16, m).map_err(|e| e.to_string())?;
    }
    let mut bytes = 0u64;
    let mut msgs = Vec::with_capacity(plan.messages);
    for k in 0..plan.messages {
        let n = plan.sizes.sample(rng, plan.max_size);
        bytes += n as u64;
        msgs.push(MessageSpec {
            group: (k % plan.groups.len()) as u16,
            payload: Payload::Synthetic(n),
            precise_len: ((n as f64) * plan.precise).round() as usize,
        });
    }
    if !plan.production.streams() {
        spec.messages = msgs;
        return Ok(BuiltJob {
            spec,
            bytes,
            span_ns: 0,
            later: None,
        });
    }
    // A streaming job: each group's N announced up front (seed 000 §3.3.2).
    let ng = plan.groups.len();
    for g in 0..ng {
        let n = (g..plan.messages).step_by(ng).count() as u32;
        if n > 0 {
            spec = spec.announce(g as u16, n).map_err(|e| e.to_string())?;
        }
    }
    let sizes: Vec<usize> = msgs.iter().map(|m| m.payload.len()).collect();
    let mut offsets = plan.production.offsets(gaps, &sizes);
    let span_ns = offsets.last().copied().unwrap_or(0);
    let now = offsets.iter().take_while(|&&at| at == 0).count();
    let later = msgs.split_off(now);
    spec.messages = msgs;
    offsets.drain(..now);
    Ok(BuiltJob {
        spec,
        bytes,
        span_ns,
        later: Some((offsets, later)),
    })
}

fn epoch_summary(samples: &[EpochSample], origin_ns: u64) -> (Json, Json) {
    let mut per_queue: BTreeMap<u8, u64> = BTreeMap::new();
    let mut total = 0u64;
    for s in samples {
        let w = s.stats.length.as_nanos().max(1);
        *per_queue.entry(s.stats.queue).or_default() += w;
        total += w;
    }
    let frac = Json::Array(
        per_queue
            .iter()
            .map(|(q, w)| {
                obj(vec![
                    ("queue", json!(u64::from(*q))),
                    ("time_fraction", json!(*w as f64 / total.max(1) as f64)),
                ])
            })
            .collect(),
    );
    let step = samples.len().div_ceil(200).max(1);
    let timeline = Json::Array(
        samples
            .iter()
            .step_by(step)
            .map(|s| {
                obj(vec![
                    (
                        "t_ms",
                        json!(s.at.as_nanos().saturating_sub(origin_ns) as f64 / 1e6),
                    ),
                    ("queue", json!(u64::from(s.stats.queue))),
                    ("tlr", json!(s.stats.tlr)),
                    ("rho", json!(s.stats.rho)),
                    ("resolved", json!(s.stats.resolved)),
                    ("rate_gbps", json!(s.stats.rate.as_bps() / 1e9)),
                    ("epoch_us", json!(s.stats.length.as_nanos() as f64 / 1e3)),
                ])
            })
            .collect(),
    );
    (frac, timeline)
}

/// Runs jobs against a server for the planned duration.
pub(crate) fn client(
    bind: SocketAddr,
    cfg: RuntimeConfig,
    plan: ClientPlan,
) -> Result<Json, String> {
    let mut ep = Endpoint::bind(bind, cfg).map_err(|e| e.to_string())?;
    // -P: several connections, each with its own rate control and window
    let mut conns = Vec::with_capacity(plan.parallel);
    for _ in 0..plan.parallel.max(1) {
        let h = ep
            .connect(plan.server)
            .map_err(|e| format!("connect {}: {e}", plan.server))?;
        conns.push(h);
    }
    let report = send_jobs(&mut ep, &conns, &plan)?;
    for &h in &conns {
        let _ = ep.close(h);
    }
    let _ = ep.finish(Duration::from_secs(2));
    Ok(report)
}

/// Sends the planned jobs over `conns` (connected) until the plan's
/// duration or job count is reached and every job in flight ended; the
/// sender's report. Events of other connections are dropped. Also the
/// server's side of a reverse (`-R`) test.
pub(crate) fn send_jobs(
    ep: &mut Endpoint,
    conns: &[ConnectionHandle],
    plan: &ClientPlan,
) -> Result<Json, String> {
    let cpu0 = process_cpu_seconds();
    let mut conns: Vec<(ConnectionHandle, usize)> = conns.iter().map(|&h| (h, 0)).collect();
    let mut rng = Rng::new(plan.seed);
    let mut gaps = GapRng::new(plan.gap_seed);
    // jobs in flight: their bytes and the index of their connection
    let mut inflight: HashMap<(ConnectionHandle, u32), (u64, usize)> = HashMap::new();
    // Streaming jobs' messages not yet produced, by job (and connection).
    let mut feeds: HashMap<(ConnectionHandle, u32), Feed> = HashMap::new();
    let (mut spans_ns, mut bytes_unpushed) = (Vec::new(), 0u64);
    let (mut started, mut done, mut failed) = (0u64, 0u64, 0u64);
    let (mut bytes_offered, mut bytes_delivered) = (0u64, 0u64);
    // bytes the jobs never sent: they met their MSR first (seed 000 §3.3.2)
    let mut bytes_unsent = 0u64;
    let (mut packets, mut retrans, mut lost) = (0u64, 0u64, 0u64);
    let (mut lost_timer, mut spurious, mut probes) = (0u64, 0u64, 0u64);
    let mut jcts = Vec::new();
    let mut groups: BTreeMap<u16, GroupTotals> = BTreeMap::new();
    let mut epochs: Vec<EpochSample> = Vec::new();
    let origin = Instant::now();
    let mut intervals = Intervals::new(plan.interval, plan.print_intervals, origin);
    let mut first_error = None;
    let mut gone = false;
    loop {
        let sending = !gone && origin.elapsed() < plan.duration && started < plan.max_jobs;
        while sending && started < plan.max_jobs {
            // the connection with the fewest jobs in flight, if one has room
            let Some(ci) = (0..conns.len())
                .filter(|&i| conns[i].1 < plan.window.max(1))
                .min_by_key(|&i| conns[i].1)
            else {
                break;
            };
            let h = conns[ci].0;
            let b = build_job(plan, &mut rng, &mut gaps)?;
            // The job starts with its first message's production.
            let t0 = Instant::now();
            let job = match ep.send_job(h, b.spec) {
                Ok(j) => j,
                Err(e) => {
                    // The connection is gone: report why (the core's
                    // reason, not the refusal that followed) and still
                    // write the report of what ran.
                    let why = lost_reason(ep).unwrap_or_else(|| format!("send_job: {e}"));
                    first_error.get_or_insert(why);
                    failed += inflight.len() as u64 + 1;
                    inflight.clear();
                    gone = true;
                    break;
                }
            };
            if let Some((offsets, later)) = b.later {
                spans_ns.push(b.span_ns);
                feeds.insert((h, job), Feed::new(t0, offsets, later));
            }
            inflight.insert((h, job), (b.bytes, ci));
            conns[ci].1 += 1;
            started += 1;
        }
        if inflight.is_empty() {
            break;
        }
        if let Err(e) = push_due(ep, &mut feeds) {
            let why = lost_reason(ep).unwrap_or(e);
            first_error.get_or_insert(why);
            failed += inflight.len() as u64;
            inflight.clear();
            break;
        }
        // Wait for an event, at most until the next message is produced.
        let next = feeds
            .values()
            .filter_map(Feed::next_due)
            .chain(intervals.due())
            .min();
        let wait = next.map_or(Duration::from_millis(200), |t| {
            t.saturating_duration_since(Instant::now())
                .min(Duration::from_millis(200))
        });
        let ev = ep.next_event(Some(wait)).map_err(|e| e.to_string())?;
        for s in ep.take_epochs() {
            if epochs.len() < 100_000 {
                epochs.push(s);
            }
        }
        intervals.tick();
        match ev {
            Some((
                h,
                Event::JobComplete {
                    job,
                    role: Role::Sender,
                    outcome,
                },
            )) => {
                let Some((bytes, ci)) = inflight.remove(&(h, job)) else {
                    continue;
                };
                conns[ci].1 -= 1;
                // Produced after the job met its MSR: never sent.
                let unpushed = feeds.remove(&(h, job)).map_or(0, Feed::finish);
                match outcome {
                    Ok(r) => {
                        done += 1;
                        jcts.push(r.jct.as_secs_f64() * 1e3);
                        packets += r.packets;
                        retrans += r.retransmissions;
                        lost += r.lost_packets;
                        lost_timer += r.lost_by_timer;
                        spurious += r.spurious_losses;
                        probes += r.tail_probes;
                        bytes_offered += bytes;
                        bytes_unsent += r.unsent_bytes + unpushed;
                        bytes_unpushed += unpushed;
                        let msgs: u64 = r.groups.iter().map(|g| u64::from(g.messages)).sum();
                        let deliv: u64 = r.groups.iter().map(|g| u64::from(g.delivered)).sum();
                        // Delivered bytes estimated as the delivered share of the job's bytes.
                        let job_delivered =
                            (bytes as f64 * deliv as f64 / msgs.max(1) as f64) as u64;
                        bytes_delivered += job_delivered;
                        intervals.job(job_delivered, r.jct.as_secs_f64() * 1e3, r.retransmissions);
                        for g in &r.groups {
                            let t = groups.entry(g.id).or_default();
                            t.messages += u64::from(g.messages);
                            t.must += u64::from(g.must_deliver);
                            t.delivered += u64::from(g.delivered);
                            t.abandoned += u64::from(g.abandoned);
                        }
                    }
                    Err(e) => {
                        failed += 1;
                        first_error.get_or_insert(e.to_string());
                    }
                }
            }
            Some((h, Event::ConnectionLost { reason })) if conns.iter().any(|c| c.0 == h) => {
                first_error.get_or_insert(format!("connection lost: {reason}"));
                failed += inflight.len() as u64;
                inflight.clear();
                feeds.clear();
                break;
            }
            _ => {}
        }
    }
    let elapsed = origin.elapsed().as_secs_f64();
    let intervals = intervals.finish();
    let cpu = process_cpu_seconds() - cpu0;

    jcts.sort_by(f64::total_cmp);
    let origin_ns = epochs.first().map_or(0, |s| s.at.as_nanos());
    let (queue_frac, timeline) = epoch_summary(&epochs, origin_ns);
    let group_json = Json::Array(
        groups
            .iter()
            .map(|(id, t)| {
                obj(vec![
                    ("id", json!(u64::from(*id))),
                    (
                        "msr",
                        json!(plan.groups.get(*id as usize).copied().unwrap_or(f64::NAN)),
                    ),
                    ("messages", json!(t.messages)),
                    ("must_deliver", json!(t.must)),
                    ("delivered", json!(t.delivered)),
                    ("abandoned", json!(t.abandoned)),
                    (
                        "delivered_fraction",
                        json!(t.delivered as f64 / t.messages.max(1) as f64),
                    ),
                ])
            })
            .collect(),
    );
    let mean = if jcts.is_empty() {
        f64::NAN
    } else {
        jcts.iter().sum::<f64>() / jcts.len() as f64
    };
    Ok(obj(vec![
        ("mode", json!("atp-client")),
        ("server", json!(plan.server.to_string())),
        ("sizes", json!(plan.sizes_spec.clone())),
        ("messages_per_job", json!(plan.messages as u64)),
        ("window", json!(plan.window as u64)),
        ("parallel", json!(conns.len() as u64)),
        ("production", json!(plan.production.describe())),
        ("gap_seed", json!(plan.gap_seed)),
        ("production_ms_mean", json!(mean_of(&spans_ns) / 1e6)),
        ("elapsed_s", json!(elapsed)),
        ("jobs_completed", json!(done)),
        ("jobs_failed", json!(failed)),
        ("error", first_error.map_or(json!(""), Json::String)),
        ("bytes_offered", json!(bytes_offered)),
        ("bytes_delivered", json!(bytes_delivered)),
        ("bytes_unsent", json!(bytes_unsent)),
        // part of bytes_unsent: not yet produced when the job completed
        ("bytes_unproduced", json!(bytes_unpushed)),
        ("goodput_gbps", json!(gbps(bytes_delivered, elapsed))),
        ("packets", json!(packets)),
        ("retransmissions", json!(retrans)),
        ("lost_packets", json!(lost)),
        ("lost_by_timer", json!(lost_timer)),
        ("spurious_losses", json!(spurious)),
        ("tail_probes", json!(probes)),
        ("measured_loss", json!(lost as f64 / packets.max(1) as f64)),
        ("groups", group_json),
        (
            "jct_ms",
            obj(vec![
                ("mean", json!(mean)),
                ("p50", json!(quantile(&jcts, 0.5))),
                ("p90", json!(quantile(&jcts, 0.9))),
                ("p99", json!(quantile(&jcts, 0.99))),
                ("max", json!(quantile(&jcts, 1.0))),
            ]),
        ),
        ("queue_time_fraction", queue_frac),
        ("epochs", json!(epochs.len() as u64)),
        ("intervals", intervals),
        ("timeline", timeline),
        ("cpu_s", json!(cpu)),
        ("cpu_s_per_gb", json!(cpu_per_gb(cpu, bytes_delivered))),
        ("runtime", runtime_json(ep)),
    ]))
}

/// Hands every streaming job the messages produced by now; a job that
/// already met its MSR gets none, and the bytes it will never send are
/// counted in its feed.
/// The reason the connection was lost, if an event says so (drains the
/// events already received).
fn lost_reason(ep: &mut Endpoint) -> Option<String> {
    while let Some((_, e)) = ep.poll_event() {
        if let Event::ConnectionLost { reason } = e {
            return Some(format!("connection lost: {reason}"));
        }
    }
    None
}

fn push_due(
    ep: &mut Endpoint,
    feeds: &mut HashMap<(ConnectionHandle, u32), Feed>,
) -> Result<(), String> {
    let now = Instant::now();
    for (&(h, job), feed) in feeds.iter_mut() {
        let due = feed.take_due(now);
        if due.is_empty() {
            continue;
        }
        let bytes: u64 = due.iter().map(|m| m.payload.len() as u64).sum();
        match ep.push_messages(h, job, due) {
            Ok(Pushed::Queued(_)) => {}
            Ok(Pushed::JobComplete) => feed.discard(bytes),
            Err(e) => return Err(format!("push_messages: {e}")),
        }
    }
    Ok(())
}

fn mean_of(v: &[u64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64
    }
}

/// Serves jobs; stops after `max_jobs` jobs (received, or sent to a
/// reverse client) or `idle` without events, counted from startup
/// (`None`: never). A reverse (`-R`) request is served at once, over its
/// connection, before anything else.
pub(crate) fn server(
    bind: SocketAddr,
    cfg: RuntimeConfig,
    max_jobs: u64,
    idle: Option<Duration>,
) -> Result<Json, String> {
    let mut ep = Endpoint::bind(bind, cfg).map_err(|e| e.to_string())?;
    eprintln!("approxnet-perf server on {}", ep.local_addr());
    let cpu0 = process_cpu_seconds();
    let mut tally = Tally::default();
    let (mut reverse_tests, mut jobs_sent, mut bytes_sent) = (0u64, 0u64, 0u64);
    let mut control_jobs: HashSet<(ConnectionHandle, u32)> = HashSet::new();
    let mut last = Instant::now();
    while tally.jobs + jobs_sent < max_jobs {
        // `last` starts at startup, so an idle limit also ends a server
        // that never hears from a client.
        let wait = match idle {
            Some(i) => {
                let left = i.saturating_sub(last.elapsed());
                if left.is_zero() {
                    break;
                }
                Some(left)
            }
            None => Some(Duration::from_secs(1)),
        };
        let Some((h, ev)) = ep.next_event(wait).map_err(|e| e.to_string())? else {
            continue;
        };
        last = Instant::now();
        match &ev {
            Event::TensorReady { job, data, .. } => {
                control_jobs.insert((h, *job));
                let Some(peer) = ep.core().peer(h) else {
                    continue;
                };
                let plan = reverse::control(data)
                    .filter(|v| v["approxnet_perf"] == "reverse")
                    .ok_or_else(|| "not a reverse request".to_string())
                    .and_then(|v| reverse::plan_of(&v, peer));
                match plan {
                    Ok(plan) => {
                        eprintln!("approxnet-perf server: reverse test for {peer}");
                        match reverse::serve(&mut ep, h, &plan) {
                            Ok(r) => {
                                reverse_tests += 1;
                                jobs_sent += r["jobs_completed"].as_u64().unwrap_or(0);
                                bytes_sent += r["bytes_delivered"].as_u64().unwrap_or(0);
                            }
                            Err(e) => eprintln!("approxnet-perf server: reverse test: {e}"),
                        }
                    }
                    Err(e) => eprintln!("approxnet-perf server: {peer}: refused: {e}"),
                }
                last = Instant::now();
            }
            Event::JobComplete {
                job,
                role: Role::Receiver,
                ..
            } if control_jobs.remove(&(h, *job)) => {}
            _ => {
                tally.on(&ev);
            }
        }
    }
    let cpu = process_cpu_seconds() - cpu0;
    let mut fields = vec![("mode", json!("atp-server"))];
    fields.extend(tally.fields());
    fields.extend([
        ("reverse_tests", json!(reverse_tests)),
        ("jobs_sent", json!(jobs_sent)),
        ("bytes_sent", json!(bytes_sent)),
        ("cpu_s", json!(cpu)),
        (
            "cpu_s_per_gb",
            json!(cpu_per_gb(cpu, tally.bytes() + bytes_sent)),
        ),
        ("runtime", runtime_json(&ep)),
    ]);
    Ok(obj(fields))
}
