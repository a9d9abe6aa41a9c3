//! Reverse mode (`client -R`, iperf3's convention): the server sends the
//! jobs and the client receives them.
//!
//! The client opens the connection and sends its plan as a control job: a
//! one-chunk tensor job (`p` = 1, so the core keeps its bytes whatever the
//! server's `--keep-payloads`) holding a small JSON object
//! `{"approxnet_perf": "reverse", ...}`. The server runs the plan's jobs
//! back over the same connection (one reverse test at a time, as iperf3
//! serves one test at a time), then sends a second control job
//! `{"approxnet_perf": "end", "sender": {...}}` with its sender figures.
//! The client ends once that arrived and the receiver side has completed
//! as many jobs as the server did. Control bytes come off the wire, so
//! they are size-capped and every field is checked; a bad request is
//! refused with a message on the server's stderr, never a panic.

use super::atp::{send_jobs, ClientPlan};
use super::interval::Intervals;
use super::produce::Production;
use super::receive::Tally;
use super::report::{obj, Json};
use super::sizes::Sizes;
use crate::{Endpoint, RuntimeConfig};
use approxnet_proto::event::Role;
use approxnet_proto::tensor::TensorSpec;
use approxnet_proto::wire::Dtype;
use approxnet_proto::{ConnectionHandle, Event, JobSpec};
use serde_json::json;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// The largest control object accepted, bytes.
const MAX_CONTROL: usize = 16 << 10;
/// The largest message a reverse request may ask the server for.
const MAX_REQUEST_MESSAGE: usize = 64 << 20;
/// The longest reverse test a request may ask for.
const MAX_REQUEST_SECS: f64 = 3600.0;
/// How long past its duration a reverse client waits for the server's end.
const END_GRACE: Duration = Duration::from_secs(30);

/// A control job carrying `value` (JSON, padded to whole 2-byte elements).
fn control_job(value: &Json) -> Result<JobSpec, String> {
    let mut data = value.to_string().into_bytes();
    if data.len() > MAX_CONTROL {
        return Err(format!(
            "control message of {} bytes is too large",
            data.len()
        ));
    }
    if data.len() % 2 == 1 {
        data.push(b' ');
    }
    Ok(JobSpec::tensor(TensorSpec {
        dtype: Dtype::F16,
        data,
        deliver_fraction: 1.0,
        protect_bits: 0,
    }))
}

/// A control object from a tensor's bytes, if it is one.
pub(crate) fn control(data: &[u8]) -> Option<Json> {
    if data.len() > MAX_CONTROL {
        return None;
    }
    let v: Json = serde_json::from_slice(data).ok()?;
    v.get("approxnet_perf")?.as_str()?;
    Some(v)
}

/// The request a reverse client sends: its plan.
pub(crate) fn request(plan: &ClientPlan) -> Json {
    obj(vec![
        ("approxnet_perf", json!("reverse")),
        ("groups", json!(plan.groups)),
        ("sizes", json!(plan.sizes_spec)),
        ("messages", json!(plan.messages as u64)),
        ("max_size", json!(plan.max_size as u64)),
        ("precise", json!(plan.precise)),
        ("duration_s", json!(plan.duration.as_secs_f64())),
        ("jobs", json!(plan.max_jobs)),
        ("window", json!(plan.window as u64)),
        ("seed", json!(plan.seed)),
        ("gap_us", json!(plan.gap_spec)),
        ("produce_mbps", json!(plan.produce_spec)),
        ("gap_seed", json!(plan.gap_seed)),
    ])
}

fn field<'a>(v: &'a Json, k: &str) -> Result<&'a Json, String> {
    v.get(k).ok_or_else(|| format!("reverse request: no `{k}`"))
}

fn uint(v: &Json, k: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match field(v, k)?.as_u64() {
        Some(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!(
            "reverse request: `{k}` must be an integer in [{lo}, {hi}]"
        )),
    }
}

fn opt_str(v: &Json, k: &str) -> Result<Option<String>, String> {
    match v.get(k) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) if s.len() <= 256 => Ok(Some(s.clone())),
        _ => Err(format!(
            "reverse request: `{k}` must be a short string or null"
        )),
    }
}

/// The plan a reverse request asks the server to run back to `peer`;
/// every field checked (they come off the wire).
pub(crate) fn plan_of(v: &Json, peer: SocketAddr) -> Result<ClientPlan, String> {
    let groups: Vec<f64> = match field(v, "groups")?.as_array() {
        Some(a) if (1..=64).contains(&a.len()) => a.iter().filter_map(Json::as_f64).collect(),
        _ => return Err("reverse request: `groups` must list 1 to 64 MSRs".into()),
    };
    for &m in &groups {
        approxnet_proto::Msr::new(m).map_err(|e| format!("reverse request: groups: {e}"))?;
    }
    let sizes_spec = match field(v, "sizes")?.as_str() {
        Some(s) if s.len() <= 256 && !s.starts_with("cdf:") => s.to_string(),
        _ => return Err("reverse request: `sizes` must be fixed:N or uniform:A:B".into()),
    };
    let precise = field(v, "precise")?.as_f64().unwrap_or(f64::NAN);
    if !(0.0..=1.0).contains(&precise) {
        return Err("reverse request: `precise` must be in [0, 1]".into());
    }
    let secs = field(v, "duration_s")?.as_f64().unwrap_or(f64::NAN);
    if !(0.0..=MAX_REQUEST_SECS).contains(&secs) {
        return Err(format!(
            "reverse request: `duration_s` must be in [0, {MAX_REQUEST_SECS}]"
        ));
    }
    let gap_spec = opt_str(v, "gap_us")?;
    let produce_spec = opt_str(v, "produce_mbps")?;
    let seed = uint(v, "seed", 0, u64::MAX)?;
    Ok(ClientPlan {
        server: peer,
        groups,
        sizes: Sizes::parse(&sizes_spec).map_err(|e| format!("reverse request: {e}"))?,
        sizes_spec,
        messages: uint(v, "messages", 1, 1 << 20)? as usize,
        max_size: uint(v, "max_size", 1, MAX_REQUEST_MESSAGE as u64)? as usize,
        precise,
        duration: Duration::from_secs_f64(secs),
        max_jobs: uint(v, "jobs", 1, u64::MAX)?,
        window: uint(v, "window", 1, 1024)? as usize,
        seed,
        production: Production::parse(gap_spec.as_deref(), produce_spec.as_deref())
            .map_err(|e| format!("reverse request: {e}"))?,
        gap_spec,
        produce_spec,
        gap_seed: uint(v, "gap_seed", 0, u64::MAX)?,
        interval: None,
        print_intervals: false,
        parallel: 1,
        reverse: false,
    })
}

/// The server's side: runs `plan` over `h` and sends the end control job;
/// returns the sender's report.
pub(crate) fn serve(
    ep: &mut Endpoint,
    h: ConnectionHandle,
    plan: &ClientPlan,
) -> Result<Json, String> {
    let report = send_jobs(ep, &[h], plan)?;
    let mut sender = vec![("approxnet_perf", json!("end"))];
    for k in [
        "jobs_completed",
        "jobs_failed",
        "error",
        "bytes_offered",
        "bytes_unsent",
        "packets",
        "retransmissions",
        "lost_packets",
        "measured_loss",
        "goodput_gbps",
        "jct_ms",
        "elapsed_s",
    ] {
        sender.push((k, report[k].clone()));
    }
    let end = obj(sender);
    ep.send_job(h, control_job(&end)?)
        .map_err(|e| format!("reverse: sending the end: {e}"))?;
    Ok(report)
}

/// The client's side of `-R`: asks the server for `plan`'s jobs and
/// receives them; its report carries the server's sender figures.
pub(crate) fn client(
    bind: SocketAddr,
    cfg: RuntimeConfig,
    plan: ClientPlan,
) -> Result<Json, String> {
    let mut ep = Endpoint::bind(bind, cfg).map_err(|e| e.to_string())?;
    let h = ep
        .connect(plan.server)
        .map_err(|e| format!("connect {}: {e}", plan.server))?;
    let ask = ep
        .send_job(h, control_job(&request(&plan))?)
        .map_err(|e| format!("send the reverse request: {e}"))?;
    let origin = Instant::now();
    let deadline = origin + plan.duration + END_GRACE;
    let mut intervals = Intervals::new(plan.interval, plan.print_intervals, origin);
    let mut tally = Tally::default();
    let mut control_jobs: HashSet<u32> = HashSet::new();
    let mut end: Option<Json> = None;
    let mut error = String::new();
    loop {
        if let Some(e) = &end {
            let sent = e["jobs_completed"].as_u64().unwrap_or(0);
            if tally.jobs >= sent {
                break;
            }
        }
        let now = Instant::now();
        if now >= deadline {
            error = "the server did not end the reverse test in time".into();
            break;
        }
        let wait = intervals
            .due()
            .map_or(deadline, |t| t.min(deadline))
            .saturating_duration_since(now)
            .min(Duration::from_millis(200));
        let ev = ep.next_event(Some(wait)).map_err(|e| e.to_string())?;
        intervals.tick();
        let Some((eh, ev)) = ev else { continue };
        if eh != h {
            continue;
        }
        match &ev {
            Event::TensorReady { job, data, .. } => {
                control_jobs.insert(*job);
                match control(data) {
                    Some(v) if v["approxnet_perf"] == "end" => end = Some(v),
                    _ => {}
                }
            }
            Event::JobComplete {
                job,
                role: Role::Receiver,
                ..
            } if control_jobs.contains(job) => {}
            Event::JobComplete {
                job,
                role: Role::Sender,
                outcome: Err(e),
            } if *job == ask => {
                error = format!("the server did not take the reverse request: {e}");
                break;
            }
            Event::ConnectionLost { reason } => {
                error = format!("connection lost: {reason}");
                break;
            }
            _ => {
                if let Some((bytes, jct)) = tally.on(&ev) {
                    intervals.job(bytes, jct, 0);
                }
            }
        }
    }
    let _ = ep.close(h);
    let _ = ep.finish(Duration::from_secs(2));
    let failed = u64::from(!error.is_empty()) + tally.failed;
    let mut fields = vec![
        ("mode", json!("atp-client-reverse")),
        ("server", json!(plan.server.to_string())),
    ];
    for (k, v) in tally.fields() {
        fields.push((
            if k == "jobs_failed" {
                "receive_failed"
            } else {
                k
            },
            v,
        ));
    }
    fields.push(("jobs_failed", json!(failed)));
    fields.push(("error", json!(error)));
    fields.push(("intervals", intervals.finish()));
    fields.push(("sender", end.unwrap_or(Json::Null)));
    Ok(obj(fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> ClientPlan {
        ClientPlan {
            server: "127.0.0.1:9".parse().unwrap_or_else(|_| unreachable!()),
            groups: vec![1.0, 0.5],
            sizes: Sizes::parse("fixed:1000").unwrap_or_else(|_| unreachable!()),
            sizes_spec: "fixed:1000".into(),
            messages: 8,
            max_size: 1 << 20,
            precise: 1.0,
            duration: Duration::from_secs(2),
            max_jobs: 3,
            window: 2,
            seed: 7,
            production: Production::parse(None, None).unwrap_or_else(|_| unreachable!()),
            gap_spec: None,
            produce_spec: None,
            gap_seed: 7,
            interval: None,
            print_intervals: false,
            parallel: 1,
            reverse: true,
        }
    }

    #[test]
    fn a_request_round_trips_through_its_control_job() {
        let spec = control_job(&request(&plan())).unwrap_or_else(|e| panic!("{e}"));
        let data = &spec
            .tensor
            .as_ref()
            .map(|t| t.data.clone())
            .unwrap_or_default();
        assert_eq!(data.len() % 2, 0);
        let v = control(data).unwrap_or_else(|| panic!("not a control object"));
        let peer = "10.0.0.1:5".parse().unwrap_or_else(|_| unreachable!());
        let back = plan_of(&v, peer).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.groups, vec![1.0, 0.5]);
        assert_eq!(
            (back.messages, back.max_jobs, back.window, back.seed),
            (8, 3, 2, 7)
        );
        assert_eq!(back.duration, Duration::from_secs(2));
        assert_eq!(back.server, peer);
    }

    #[test]
    fn bad_requests_are_refused_naming_the_field() {
        let peer = "10.0.0.1:5".parse().unwrap_or_else(|_| unreachable!());
        let good = request(&plan());
        for (k, bad, needle) in [
            ("groups", json!([1.5]), "groups"),
            ("groups", json!([]), "groups"),
            ("messages", json!(0), "messages"),
            ("max_size", json!(1u64 << 40), "max_size"),
            ("duration_s", json!(-1.0), "duration_s"),
            ("window", json!("two"), "window"),
            ("sizes", json!("cdf:/etc/passwd"), "sizes"),
            ("precise", json!(2.0), "precise"),
        ] {
            let mut v = good.clone();
            v[k] = bad;
            let e = plan_of(&v, peer).err().unwrap_or_default();
            assert!(e.contains(needle), "{k}: {e}");
        }
        // not JSON, not a control object, too long: ignored
        assert!(control(b"\xff\xfe garbage").is_none());
        assert!(control(br#"{"other": 1}"#).is_none());
        assert!(control(&vec![b' '; MAX_CONTROL + 2]).is_none());
    }
}
