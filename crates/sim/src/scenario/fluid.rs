//! `mode = "flow"`: from a checked scenario file to a ready
//! [`FluidSim`]. Keys only the packet mode reads are refused by name, so a
//! scenario never silently means less than it says.

use super::classes::job_class;
use super::schema::{AtpFile, PhaseFile, ScenarioFile, StagedFile, SwitchFile, TransportFile};
use super::{invalid, ScenarioError};
use super::{positive, us};
use crate::fabric::link::LinkSpec;
use crate::fluid::{Collective, FluidNet, FluidSim, Latency, Owner, Phase, StagedJob};
use crate::job::Job;
use crate::scheme::{self, Scheme};
use crate::topology::Fabric;
use crate::workload::{self, JobClass};
use approxnet_proto::time::Instant;
use approxnet_proto::units::Rate;

/// A built flow-mode scenario.
pub struct FluidBuilt {
    /// The simulator, flows and jobs scheduled.
    pub sim: FluidSim,
    /// `[[jobs]]` classes (index = class of their flows).
    pub classes: Vec<JobClass>,
    /// Staged jobs' names (class `classes.len() + i`).
    pub staged_names: Vec<String>,
}

fn gbps_to_bytes_per_ns(g: f64) -> f64 {
    g / 8.0
}

fn weight(key: &str, w: Option<f64>) -> Result<f64, ScenarioError> {
    match w {
        None => Ok(1.0),
        Some(w) if w.is_finite() && w > 0.0 => Ok(w),
        Some(w) => Err(invalid(key, format!("{w}"), "a weight > 0")),
    }
}

fn cap(key: &str, c: Option<f64>) -> Result<f64, ScenarioError> {
    match c {
        None => Ok(f64::INFINITY),
        Some(c) => Ok(gbps_to_bytes_per_ns(positive(key, c)?)),
    }
}

/// Checks the file and builds the flow-level simulator.
pub fn build_fluid(f: &ScenarioFile) -> Result<FluidBuilt, ScenarioError> {
    let t = &f.topology;
    let dur = positive("duration_ms", f.duration_ms)?;
    let host_rate = Rate::gbps(positive("topology.host_gbps", t.host_gbps)?);
    let core_rate = Rate::gbps(positive(
        "topology.core_gbps",
        t.core_gbps.unwrap_or(t.host_gbps),
    )?);
    if t.ber != 0.0 {
        return Err(invalid(
            "topology.ber",
            format!("{}", t.ber),
            "0 in the flow mode (bit errors are per packet)",
        ));
    }
    if t.ecmp != "flow" {
        return Err(invalid(
            "topology.ecmp",
            format!("{:?} in the flow mode", t.ecmp),
            "flow (one path per host pair)",
        ));
    }
    for (k, v) in [
        ("topology.link_delay_us", t.link_delay_us),
        ("topology.switch_delay_ns", t.switch_delay_ns),
        ("topology.fec_delay_ns", t.fec_delay_ns),
    ] {
        if !(v >= 0.0 && v.is_finite()) {
            return Err(invalid(k, format!("{v}"), ">= 0"));
        }
    }
    packet_keys(f)?;
    let delay = us(t.link_delay_us);
    let core = LinkSpec::new(core_rate, delay);
    let spec = super::topology::spec(t, core, f.seed)?;
    let fabric = Fabric {
        host_link: LinkSpec::new(host_rate, delay),
        core_link: core,
        switch_buffer: 0,
    };
    let graph = super::topology::graph(&spec, &fabric)?;
    let net = FluidNet::new(
        graph,
        Latency {
            switch_ns: t.switch_delay_ns,
            fec_ns: t.fec_delay_ns,
        },
    );
    let hosts = net.hosts();
    let end = Instant::from_nanos((dur * 1e6).round() as u64);
    let mut sim = FluidSim::new(net, dur * 1e6);
    sim.set_full_recompute(f.fluid.full_recompute);

    let mut classes = Vec::new();
    let mut per_class = Vec::new();
    for (i, j) in f.jobs.iter().enumerate() {
        // the scheme names the packet mode's transport; the flow mode has
        // none, but a name that means nothing is still an error
        let scheme = Scheme::parse(&j.scheme).ok_or_else(|| {
            invalid(
                format!("jobs.{i}.scheme"),
                format!("unknown scheme {:?}", j.scheme),
                scheme::NAMES.join(", "),
            )
        })?;
        classes.push(job_class(i, j, scheme, hosts, end)?);
        per_class.push((
            weight(&format!("jobs.{i}.weight"), j.weight)?,
            j.priority.unwrap_or(0),
            cap(&format!("jobs.{i}.rate_cap_gbps"), j.rate_cap_gbps)?,
        ));
    }
    for p in workload::generate(&classes, hosts, host_rate.as_bps(), f.seed) {
        let c = &classes[p.class as usize];
        let (w, prio, cp) = per_class[p.class as usize];
        let needed = Job::needed_for(p.msgs.len() as u32, c.msr, c.approximate);
        sim.add_job(
            p.class,
            p.src,
            p.dst,
            p.start.as_nanos() as f64,
            &p.msgs,
            &p.ready_ns,
            needed,
            w,
            prio,
            cp,
        );
    }
    let mut staged_names = Vec::new();
    for (i, s) in f.staged.iter().enumerate() {
        let job = staged(i, s, hosts)?;
        staged_names.push(job.name.clone());
        sim.add_staged(job, (classes.len() + i) as u32);
    }
    if let Some(path) = &f.fluid.flows_csv {
        trace(&mut sim, path, hosts)?;
    }
    Ok(FluidBuilt {
        sim,
        classes,
        staged_names,
    })
}

/// Sections and keys the flow mode has no meaning for.
fn packet_keys(f: &ScenarioFile) -> Result<(), ScenarioError> {
    let not_here = |k: &str, instead: &str| invalid(k, "not read in the flow mode", instead);
    if f.switch != SwitchFile::default() {
        return Err(not_here(
            "switch",
            "no [switch] section (links share by max-min; use jobs.N.weight / priority)",
        ));
    }
    if f.transport != TransportFile::default() {
        return Err(not_here("transport", "no [transport] section"));
    }
    if f.atp != AtpFile::default() {
        return Err(not_here("atp", "no [atp] section"));
    }
    if !f.training.is_empty() {
        return Err(not_here(
            "training",
            "[[staged]] with an allreduce_ring phase",
        ));
    }
    if f.output.queue_sample_us.unwrap_or(0.0) != 0.0 || f.output.queue_ports.is_some() {
        return Err(not_here(
            "output.queue_sample_us",
            "no queue sampling (fluid links have no queues)",
        ));
    }
    for (i, j) in f.jobs.iter().enumerate() {
        if j.queue != 0 {
            return Err(not_here(
                &format!("jobs.{i}.queue"),
                "jobs.N.priority (strict) or jobs.N.weight",
            ));
        }
        if j.follow.is_some() {
            return Err(not_here(
                &format!("jobs.{i}.follow"),
                "nothing (queue following is packet-level)",
            ));
        }
    }
    Ok(())
}

fn staged(i: usize, s: &StagedFile, hosts: u32) -> Result<StagedJob, ScenarioError> {
    let key = |k: &str| format!("staged.{i}.{k}");
    if s.hosts.is_empty() {
        return Err(invalid(key("hosts"), "empty", "host ids 0 .. hosts - 1"));
    }
    if let Some(&h) = s.hosts.iter().find(|&&h| h >= hosts) {
        return Err(invalid(
            key("hosts"),
            format!("unknown host {h}"),
            format!("0 ..= {}", hosts - 1),
        ));
    }
    if s.iterations == 0 {
        return Err(invalid(key("iterations"), "0", ">= 1"));
    }
    if !(s.start_ms >= 0.0 && s.start_ms.is_finite()) {
        return Err(invalid(key("start_ms"), format!("{}", s.start_ms), ">= 0"));
    }
    if s.phases.is_empty() {
        return Err(invalid(
            key("phases"),
            "empty",
            "at least one [[staged.phases]]",
        ));
    }
    let n = s.hosts.len() as u32;
    let phases = s
        .phases
        .iter()
        .enumerate()
        .map(|(p, ph)| {
            phase(
                &format!("staged.{i}.phases.{p}"),
                ph,
                n,
                s.host_gflops,
                &key("host_gflops"),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(StagedJob {
        name: s.name.clone().unwrap_or_else(|| format!("staged{i}")),
        hosts: s.hosts.clone(),
        iterations: s.iterations,
        start_ns: s.start_ms * 1e6,
        weight: weight(&key("weight"), s.weight)?,
        priority: s.priority.unwrap_or(0),
        cap: cap(&key("rate_cap_gbps"), s.rate_cap_gbps)?,
        phases,
    })
}

fn phase(
    key: &str,
    p: &PhaseFile,
    n: u32,
    gflops: Option<f64>,
    gflops_key: &str,
) -> Result<Phase, ScenarioError> {
    let k = |x: &str| format!("{key}.{x}");
    let set = [
        p.compute_us.is_some(),
        p.compute_gflop.is_some(),
        p.comm.is_some(),
    ];
    if set.iter().filter(|&&b| b).count() != 1 {
        return Err(invalid(
            key,
            "needs exactly one of compute_us, compute_gflop, comm",
            "one of them",
        ));
    }
    if let Some(x) = p.compute_us {
        if !(x >= 0.0 && x.is_finite()) {
            return Err(invalid(k("compute_us"), format!("{x}"), ">= 0"));
        }
        return Ok(Phase::Compute { ns: x * 1e3 });
    }
    if let Some(x) = p.compute_gflop {
        if !(x >= 0.0 && x.is_finite()) {
            return Err(invalid(k("compute_gflop"), format!("{x}"), ">= 0"));
        }
        let speed = match gflops {
            Some(g) => positive(gflops_key, g)?,
            None => {
                return Err(invalid(
                    gflops_key,
                    "missing (a compute_gflop phase needs it)",
                    "Gflop/s > 0",
                ))
            }
        };
        return Ok(Phase::Compute {
            ns: x / speed * 1e9,
        });
    }
    let comm = p.comm.as_deref().unwrap_or_default();
    let bytes = match p.kb {
        Some(x) if x >= 0.0 && x.is_finite() => x * 1000.0,
        Some(x) => {
            return Err(invalid(
                k("kb"),
                format!("{x}"),
                ">= 0 (a negative size means nothing)",
            ))
        }
        None => return Err(invalid(k("kb"), "missing", "KB >= 0")),
    };
    // Fields that belong to other collectives are refused, not ignored.
    let uses: &[&str] = match comm {
        "allreduce_rd" => &["group"],
        "halo" | "transpose" => &["grid"],
        "panel_bcast" => &["grid", "root"],
        "scatter" => &["root"],
        "flows" => &["pairs"],
        _ => &[],
    };
    for (name, set) in [
        ("group", p.group.is_some()),
        ("grid", p.grid.is_some()),
        ("root", p.root.is_some()),
        ("pairs", p.pairs.is_some()),
    ] {
        if set && !uses.contains(&name) {
            return Err(invalid(
                k(name),
                format!("set for comm = {comm:?}"),
                format!("no {name} (it belongs to another collective)"),
            ));
        }
    }
    let c = match comm {
        "all_to_all" => Collective::AllToAll { bytes },
        "all_to_all_pairwise" => Collective::AllToAllPairwise { bytes },
        "allreduce_ring" => Collective::AllReduceRing { bytes },
        "allreduce_rd" => {
            let group = match p.group {
                None if n.is_power_of_two() => n,
                None => {
                    return Err(invalid(
                        k("comm"),
                        format!("recursive doubling over {n} hosts"),
                        "a power-of-two host count, a `group`, or allreduce_ring",
                    ))
                }
                Some(g) if g >= 1 && g.is_power_of_two() && n.is_multiple_of(g) => g,
                Some(g) => {
                    return Err(invalid(
                        k("group"),
                        format!("{g} for {n} hosts"),
                        "a power of two that divides the host count",
                    ))
                }
            };
            Collective::AllReduceRd { bytes, group }
        }
        "transpose" => {
            let side = match p.grid.as_deref() {
                Some(&[a, b]) if a == b && a >= 1 && a as u64 * b as u64 == n as u64 => a,
                Some(g) => {
                    return Err(invalid(
                        k("grid"),
                        format!("{g:?} for {n} hosts"),
                        "[side, side] with side * side = the host count",
                    ))
                }
                None => return Err(invalid(k("grid"), "missing", "[side, side]")),
            };
            Collective::Transpose { side, bytes }
        }
        "panel_bcast" => {
            let side = match p.grid.as_deref() {
                Some(&[a, b])
                    if a == b && a.is_power_of_two() && a as u64 * b as u64 == n as u64 =>
                {
                    a
                }
                Some(g) => {
                    return Err(invalid(
                        k("grid"),
                        format!("{g:?} for {n} hosts"),
                        "[side, side], side a power of two, side * side = the host count",
                    ))
                }
                None => return Err(invalid(k("grid"), "missing", "[side, side]")),
            };
            let root = p.root.unwrap_or(0);
            if root >= side {
                return Err(invalid(
                    k("root"),
                    format!("{root}"),
                    format!("a column 0 ..= {}", side - 1),
                ));
            }
            Collective::PanelBcast { side, root, bytes }
        }
        "scatter" => {
            let root = p.root.unwrap_or(0);
            if root >= n {
                return Err(invalid(
                    k("root"),
                    format!("{root}"),
                    format!("a rank 0 ..= {}", n - 1),
                ));
            }
            Collective::Scatter { root, bytes }
        }
        "halo" => {
            let grid = match &p.grid {
                Some(g)
                    if !g.is_empty()
                        && g.iter().all(|&x| x >= 1)
                        && g.iter().map(|&x| x as u64).product::<u64>() == n as u64 =>
                {
                    g.clone()
                }
                Some(g) => {
                    return Err(invalid(
                        k("grid"),
                        format!("{g:?} for {n} hosts"),
                        "sizes >= 1 whose product is the host count",
                    ))
                }
                None => return Err(invalid(k("grid"), "missing", "e.g. [4, 4] for 16 hosts")),
            };
            Collective::Halo { grid, bytes }
        }
        "flows" => {
            let pairs = match &p.pairs {
                Some(v) if !v.is_empty() => v,
                _ => {
                    return Err(invalid(
                        k("pairs"),
                        "missing or empty",
                        "[[src rank, dst rank], ...]",
                    ))
                }
            };
            if let Some(pr) = pairs.iter().find(|pr| pr[0] >= n || pr[1] >= n) {
                return Err(invalid(
                    k("pairs"),
                    format!("unknown rank in {pr:?}"),
                    format!("ranks 0 ..= {}", n - 1),
                ));
            }
            Collective::Flows {
                pairs: pairs.iter().map(|p| (p[0], p[1])).collect(),
                bytes,
            }
        }
        o => {
            return Err(invalid(
                k("comm"),
                format!("unknown {o:?}"),
                "all_to_all, all_to_all_pairwise, allreduce_ring, allreduce_rd, halo, transpose, panel_bcast, scatter, flows",
            ))
        }
    };
    Ok(Phase::Comm(c))
}

/// Reads `src,dst,bytes,start_ns[,weight,priority]` rows.
fn trace(sim: &mut FluidSim, path: &str, hosts: u32) -> Result<(), ScenarioError> {
    const KEY: &str = "fluid.flows_csv";
    let text = std::fs::read_to_string(path).map_err(|e| {
        invalid(
            KEY,
            format!("cannot read {path}: {e}"),
            "a readable CSV file",
        )
    })?;
    let mut lines = text.lines().enumerate();
    let header = lines.next().map(|(_, l)| l.trim()).unwrap_or_default();
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    if cols.len() < 4 || cols[..4] != ["src", "dst", "bytes", "start_ns"] {
        return Err(invalid(
            KEY,
            format!("{path}: header {header:?}"),
            "src,dst,bytes,start_ns[,weight,priority]",
        ));
    }
    for (n, line) in lines {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let row = n + 1;
        let v: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = |col: &str, what: &str| {
            invalid(
                format!("{KEY} ({path} line {row}, column {col})"),
                format!("{line:?}: {what}"),
                "src,dst,bytes,start_ns[,weight,priority]",
            )
        };
        if v.len() != cols.len() {
            return Err(bad("*", "wrong number of columns"));
        }
        let host = |i: usize| -> Result<u32, ScenarioError> {
            match v[i].parse::<u32>() {
                Ok(h) if h < hosts => Ok(h),
                _ => Err(bad(cols[i], &format!("not a host id 0 ..= {}", hosts - 1))),
            }
        };
        let (src, dst) = (host(0)?, host(1)?);
        if src == dst {
            return Err(bad("dst", "same host as src"));
        }
        let num = |i: usize| v[i].parse::<f64>().ok().filter(|x| x.is_finite());
        let bytes = num(2)
            .filter(|&b| b >= 0.0)
            .ok_or_else(|| bad("bytes", "not a size >= 0"))?;
        let start = num(3)
            .filter(|&s| s >= 0.0)
            .ok_or_else(|| bad("start_ns", "not a time >= 0"))?;
        let w = if v.len() > 4 {
            num(4)
                .filter(|&w| w > 0.0)
                .ok_or_else(|| bad("weight", "not a weight > 0"))?
        } else {
            1.0
        };
        let p = if v.len() > 5 {
            v[5].parse::<u8>()
                .map_err(|_| bad("priority", "not a level 0 ..= 255"))?
        } else {
            0
        };
        sim.add_flow(
            src,
            dst,
            bytes,
            start,
            Owner::Trace,
            u32::MAX,
            w,
            p,
            f64::INFINITY,
        );
    }
    Ok(())
}
