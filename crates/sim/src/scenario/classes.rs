//! `[[jobs]]` and `[[training]]`: job classes and training jobs.

use super::schema::{JobFile, TrainingFile};
use super::{invalid, positive, us, ScenarioError};
use crate::engine::{QueueFollow, TrainingRun};
use crate::scheme::{self, Proto, Scheme, SenderApprox};
use crate::workload::training::{Collective, Training, TrainingSpec};
use crate::workload::{cdf, gaps, GapDist, JobClass, Pattern, SizeDist};
use approxnet_proto::time::Instant;

pub(super) fn job_class(
    i: usize,
    j: &JobFile,
    scheme: Scheme,
    hosts: u32,
    end: Instant,
) -> Result<JobClass, ScenarioError> {
    let key = |k: &str| format!("jobs.{i}.{k}");
    let sizes = SizeDist::parse(&j.sizes)
        .map_err(|why| invalid(key("sizes"), why, cdf::NAMES.join(", ")))?;
    check_msr(j.msr).map_err(|why| invalid(key("msr"), format!("{}", j.msr), why))?;
    if !(j.load >= 0.0 && j.load.is_finite()) {
        return Err(invalid(key("load"), format!("{}", j.load), ">= 0"));
    }
    if j.messages == 0 {
        return Err(invalid(key("messages"), "0", ">= 1"));
    }
    let gaps = GapDist::parse(&j.gaps)
        .map_err(|e| invalid(key("gaps"), e.to_string(), gaps::NAMES.join(", ")))?;
    let host_ok = |h: u32, k: &str| check_host(h, hosts, || key(k));
    let pattern = match j.pattern.as_str() {
        "all_to_all" => Pattern::AllToAll,
        "incast" => Pattern::Incast {
            target: host_ok(j.target.unwrap_or(0), "target")?,
        },
        "bulk" => Pattern::Bulk {
            target: host_ok(j.target.unwrap_or(0), "target")?,
            jitter_ns: (j.jitter_us.max(0.0) * 1e3) as u64,
        },
        "pairs" => {
            let p = j
                .pairs
                .as_ref()
                .ok_or_else(|| invalid(key("pairs"), "missing", "[[src, dst], ...]"))?;
            let mut v = Vec::new();
            for &[s, d] in p {
                v.push((host_ok(s, "pairs")?, host_ok(d, "pairs")?));
            }
            Pattern::Pairs(v)
        }
        o => {
            return Err(invalid(
                key("pattern"),
                format!("unknown {o:?}"),
                "all_to_all, incast, pairs, bulk",
            ))
        }
    };
    pattern_fits(i, j, &pattern)?;
    let senders = match &j.senders {
        Some(s) => s
            .iter()
            .map(|&h| host_ok(h, "senders"))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let ms = |x: f64| Instant::from_nanos((x * 1e6).max(0.0) as u64);
    Ok(JobClass {
        name: j
            .name
            .clone()
            .unwrap_or_else(|| format!("{}-{}", j.sizes, scheme)),
        pattern,
        senders,
        sizes,
        messages: j.messages,
        gaps,
        load: j.load,
        msr: j.msr,
        scheme,
        // a plain reliable scheme ("dctcp", "pfabric") delivers every message;
        // approximation needs "-ss" / "-es", ATP, or UDP (which counts arrivals)
        approximate: j.approximate.unwrap_or(j.msr < 1.0)
            && !matches!(scheme, Scheme::Native(p, SenderApprox::Exact) if p != Proto::Udp),
        start: ms(j.start_ms),
        stop: j.stop_ms.map_or(end, ms).min(end),
        max_jobs: j.max_jobs,
        queue: j.queue,
    })
}

/// Refuses keys that the pattern would ignore: a one-shot pattern cannot
/// take a load, jitter belongs to `bulk`, pairs to `pairs`. (A Poisson
/// pattern with `load` = 0 creates no jobs: that switches a class off, as
/// fig14's "alone" runs do.)
fn pattern_fits(i: usize, j: &JobFile, pattern: &Pattern) -> Result<(), ScenarioError> {
    let key = |k: &str| format!("jobs.{i}.{k}");
    match pattern {
        Pattern::Bulk { .. } if j.load != 0.0 => Err(invalid(
            key("load"),
            format!("{} with pattern \"bulk\" (one job per sender)", j.load),
            "0 (for a Poisson stream use \"incast\")",
        )),
        _ if j.jitter_us != 0.0 && !matches!(pattern, Pattern::Bulk { .. }) => Err(invalid(
            key("jitter_us"),
            format!("{} with pattern {:?}", j.jitter_us, j.pattern),
            "only with pattern \"bulk\"",
        )),
        _ if j.pairs.is_some() && !matches!(pattern, Pattern::Pairs(_)) => Err(invalid(
            key("pairs"),
            format!("given with pattern {:?}", j.pattern),
            "only with pattern \"pairs\"",
        )),
        _ => Ok(()),
    }
}

/// The `follow` rules of `[[jobs]]` (class index = job file index).
pub(super) fn queue_follows(
    jobs: &[JobFile],
    classes: &[JobClass],
) -> Result<Vec<QueueFollow>, ScenarioError> {
    let mut out = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        let key = |k: &str| format!("jobs.{i}.{k}");
        let Some(name) = &j.follow else {
            if !j.follow_at_ms.is_empty() || !j.follow_up_at_ms.is_empty() {
                return Err(invalid(
                    key("follow"),
                    "missing",
                    "the name of the class to follow",
                ));
            }
            continue;
        };
        let names: Vec<&str> = classes.iter().map(|c| c.name.as_str()).collect();
        let leader = names
            .iter()
            .position(|n| n == name)
            .filter(|&l| l != i)
            .ok_or_else(|| {
                invalid(
                    key("follow"),
                    format!("{name:?}"),
                    format!("another class's name: {}", names.join(", ")),
                )
            })?;
        if classes[i].scheme.is_atp() {
            return Err(invalid(
                key("follow"),
                format!("{} class", classes[i].scheme),
                "a native scheme (ATP chooses its own queue)",
            ));
        }
        let times = |k: &str, v: &[f64]| {
            v.iter()
                .map(|&x| {
                    if x >= 0.0 && x.is_finite() {
                        Ok(Instant::from_nanos((x * 1e6) as u64))
                    } else {
                        Err(invalid(key(k), format!("{x}"), "times >= 0 ms"))
                    }
                })
                .collect::<Result<Vec<_>, _>>()
        };
        out.push(QueueFollow {
            class: i as u32,
            leader: leader as u32,
            leader_default: classes[leader].queue,
            // before an ATP leader has sent anything: the follower's own queue
            initial: if classes[leader].scheme.is_atp() {
                classes[i].queue
            } else {
                classes[leader].queue
            },
            join_at: times("follow_at_ms", &j.follow_at_ms)?,
            up_at: times("follow_up_at_ms", &j.follow_up_at_ms)?,
        });
    }
    Ok(out)
}

pub(super) fn training(
    i: usize,
    t: &TrainingFile,
    hosts: u32,
    class: u32,
) -> Result<(JobClass, TrainingRun), ScenarioError> {
    let key = |k: &str| format!("training.{i}.{k}");
    let scheme = Scheme::parse(&t.scheme).ok_or_else(|| {
        invalid(
            key("scheme"),
            format!("unknown scheme {:?}", t.scheme),
            scheme::NAMES.join(", "),
        )
    })?;
    let host_ok = |h: u32, k: &str| check_host(h, hosts, || key(k));
    if t.workers.len() < 2 {
        return Err(invalid(
            key("workers"),
            format!("{} workers", t.workers.len()),
            "at least 2 hosts",
        ));
    }
    for &w in &t.workers {
        host_ok(w, "workers")?;
    }
    let collective = match t.collective.as_str() {
        "ps" => {
            let server = host_ok(
                t.server
                    .ok_or_else(|| invalid(key("server"), "missing", "a host index"))?,
                "server",
            )?;
            if t.workers.contains(&server) {
                return Err(invalid(
                    key("server"),
                    format!("{server} is also a worker"),
                    "a host that is not a worker",
                ));
            }
            Collective::ParameterServer { server }
        }
        "ring" => Collective::Ring,
        o => {
            return Err(invalid(
                key("collective"),
                format!("unknown {o:?}"),
                "ps, ring",
            ))
        }
    };
    check_msr(t.msr).map_err(|why| invalid(key("msr"), format!("{}", t.msr), why))?;
    if t.iterations == 0 || t.messages == 0 {
        return Err(invalid(
            key("iterations"),
            "iterations and messages must be >= 1",
            ">= 1",
        ));
    }
    if !(t.compute_us >= 0.0 && t.compute_us.is_finite()) {
        return Err(invalid(
            key("compute_us"),
            format!("{}", t.compute_us),
            ">= 0",
        ));
    }
    let gradient_bytes = (positive(&key("gradient_kb"), t.gradient_kb)? * 1000.0) as u64;
    let name = t.name.clone().unwrap_or_else(|| format!("training{i}"));
    let approximate = t.approximate.unwrap_or(t.msr < 1.0)
        && !matches!(scheme, Scheme::Native(p, SenderApprox::Exact) if p != Proto::Udp);
    let start = Instant::from_nanos((t.start_ms.max(0.0) * 1e6) as u64);
    let spec = TrainingSpec {
        name: name.clone(),
        workers: t.workers.clone(),
        collective,
        iterations: t.iterations,
        compute: us(t.compute_us),
        gradient_bytes,
        messages: t.messages,
        start,
    };
    let c = JobClass {
        name,
        pattern: Pattern::Pairs(Vec::new()),
        senders: Vec::new(),
        sizes: SizeDist::Fixed(gradient_bytes.max(1)),
        messages: t.messages,
        gaps: GapDist::None,
        load: 0.0,
        msr: t.msr,
        scheme,
        approximate,
        start,
        stop: start,
        max_jobs: 0,
        queue: t.queue,
    };
    let run = TrainingRun {
        state: Training::new(spec),
        class,
        scheme,
        msr: t.msr,
        approximate,
        queue: t.queue,
    };
    Ok((c, run))
}

/// A class's MSR: the core's rule (`Msr::new`: within [0, 1], not NaN),
/// and more than 0 — a simulated job of MSR 0 would have nothing to deliver.
fn check_msr(msr: f64) -> Result<(), &'static str> {
    match approxnet_proto::job::Msr::new(msr) {
        Ok(m) if m.get() > 0.0 => Ok(()),
        _ => Err("0 < msr <= 1"),
    }
}

/// `h` when it is one of the `hosts` hosts, else the error under the key
/// `key()` names.
fn check_host(h: u32, hosts: u32, key: impl FnOnce() -> String) -> Result<u32, ScenarioError> {
    if h < hosts {
        Ok(h)
    } else {
        Err(invalid(
            key(),
            format!("host {h}"),
            format!("0 ..= {}", hosts - 1),
        ))
    }
}
