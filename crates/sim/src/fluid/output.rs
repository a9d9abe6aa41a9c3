//! Flow-mode results: flows.csv and jobs.csv with the packet mode's
//! columns where they mean the same thing (packet counters are left out,
//! not zeroed), staged.csv for staged jobs, links.csv (with paths in
//! flows.csv) on request, and the summary (text and JSON).

use super::engine::{FluidSim, Owner};
use crate::output::{json_num, mean, pct, ClassSummary, TrainingSummary};
use crate::workload::JobClass;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Whole-run summary of a flow-mode run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FluidSummary {
    /// Scenario name.
    pub name: String,
    /// Per `[[jobs]]` class (packet-only fields are 0).
    pub classes: Vec<ClassSummary>,
    /// Per staged job (`iter_mean_us`, `jct_us` as the packet mode's
    /// training jobs).
    pub staged: Vec<TrainingSummary>,
    /// Flows created.
    pub flows: usize,
    /// Flows arrived.
    pub flows_done: usize,
    /// Mean FCT of arrived flows, us.
    pub fct_mean_us: f64,
    /// Median FCT, us.
    pub fct_p50_us: f64,
    /// 99th-percentile FCT, us.
    pub fct_p99_us: f64,
    /// Simulated seconds.
    pub sim_s: f64,
    /// Wall seconds of the event loop.
    pub wall_s: f64,
    /// Events handled.
    pub events: u64,
    /// Rate solves.
    pub solves: u64,
    /// Flow rates computed over all solves.
    pub solved_flows: u64,
    /// Most flows sending at once.
    pub peak_active: usize,
    /// Progressive fillings over all solves.
    pub rounds: u64,
}

impl FluidSummary {
    /// Computes the summary of a finished run.
    pub fn compute(name: &str, sim: &FluidSim, classes: &[JobClass], wall_s: f64) -> FluidSummary {
        let mut fct: Vec<f64> = sim
            .flows
            .iter()
            .filter_map(|f| f.fct_ns())
            .map(|x| x / 1e3)
            .collect();
        fct.sort_by(|a, b| a.total_cmp(b));
        let c = sim.counters;
        let mut out = FluidSummary {
            name: name.to_string(),
            flows: sim.flows.len(),
            flows_done: fct.len(),
            fct_mean_us: mean(&fct),
            fct_p50_us: pct(&fct, 0.5),
            fct_p99_us: pct(&fct, 0.99),
            sim_s: sim.now() / 1e9,
            wall_s,
            events: c.events,
            solves: c.solves,
            solved_flows: c.solved_flows,
            peak_active: c.peak_active,
            rounds: c.rounds,
            ..Default::default()
        };
        let now = sim.now();
        for (ci, cl) in classes.iter().enumerate() {
            let jobs: Vec<_> = sim
                .jobs
                .iter()
                .filter(|j| j.class == ci as u32 && j.start_ns <= now)
                .collect();
            let mut jct: Vec<f64> = jobs
                .iter()
                .filter_map(|j| j.done_ns.map(|d| (d - j.start_ns) / 1e3))
                .collect();
            jct.sort_by(|a, b| a.total_cmp(b));
            out.classes.push(ClassSummary {
                name: cl.name.clone(),
                scheme: "fluid".into(),
                msr: cl.msr,
                jobs: jobs.len(),
                done: jct.len(),
                jct_mean_us: mean(&jct),
                jct_p50_us: pct(&jct, 0.5),
                jct_p99_us: pct(&jct, 0.99),
                delivered_fraction: mean(
                    &jobs
                        .iter()
                        .map(|j| j.delivered as f64 / j.messages.max(1) as f64)
                        .collect::<Vec<_>>(),
                ),
                ..Default::default()
            });
        }
        for (job, st) in sim.staged.iter().zip(&sim.staged_state) {
            let mut prev = job.start_ns;
            let d: Vec<f64> = st
                .iteration_end
                .iter()
                .map(|&e| {
                    let x = (e - prev) / 1e3;
                    prev = e;
                    x
                })
                .collect();
            out.staged.push(TrainingSummary {
                name: job.name.clone(),
                iterations: st.iteration_end.len(),
                of: job.iterations,
                iter_mean_us: mean(&d),
                jct_us: st.done.map(|e| (e - job.start_ns) / 1e3),
            });
        }
        out
    }

    /// The one-screen text form.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "scenario {} (flow mode)", self.name);
        let _ = writeln!(
            s,
            "flows {}/{} done: fct mean {:.1} us, p50 {:.1} us, p99 {:.1} us",
            self.flows_done, self.flows, self.fct_mean_us, self.fct_p50_us, self.fct_p99_us
        );
        for c in &self.classes {
            let _ = writeln!(
                s,
                "class {}: {}/{} jobs, jct mean {:.1} us, p50 {:.1} us, p99 {:.1} us",
                c.name, c.done, c.jobs, c.jct_mean_us, c.jct_p50_us, c.jct_p99_us
            );
        }
        for t in &self.staged {
            let _ = writeln!(s, "{}", t.line("staged"));
        }
        let _ = writeln!(
            s,
            "simulated {:.3} ms in {:.2} s wall: {} events, {} solves ({} rounds) over {} flow rates, peak {} flows sending",
            self.sim_s * 1e3,
            self.wall_s,
            self.events,
            self.solves,
            self.rounds,
            self.solved_flows,
            self.peak_active
        );
        s
    }

    /// A small JSON object.
    pub fn json(&self) -> String {
        let num = json_num;
        let classes: Vec<String> = self
            .classes
            .iter()
            .map(|c| {
                format!(
                    "{{\"name\":{:?},\"scheme\":{:?},\"msr\":{},\"jobs\":{},\"done\":{},\"jct_mean_us\":{},\"jct_p50_us\":{},\"jct_p99_us\":{},\"delivered_fraction\":{}}}",
                    c.name, c.scheme, num(c.msr), c.jobs, c.done, num(c.jct_mean_us), num(c.jct_p50_us), num(c.jct_p99_us), num(c.delivered_fraction)
                )
            })
            .collect();
        let staged: Vec<String> = self.staged.iter().map(TrainingSummary::json).collect();
        format!(
            "{{\"name\":{:?},\"mode\":\"flow\",\"sim_s\":{},\"wall_s\":{},\"events\":{},\"solves\":{},\"solved_flows\":{},\"rounds\":{},\"peak_active_flows\":{},\"flows\":{},\"flows_done\":{},\"fct_mean_us\":{},\"fct_p50_us\":{},\"fct_p99_us\":{},\"classes\":[{}],\"staged\":[{}]}}\n",
            self.name,
            num(self.sim_s),
            num(self.wall_s),
            self.events,
            self.solves,
            self.solved_flows,
            self.rounds,
            self.peak_active,
            self.flows,
            self.flows_done,
            num(self.fct_mean_us),
            num(self.fct_p50_us),
            num(self.fct_p99_us),
            classes.join(","),
            staged.join(",")
        )
    }
}

/// Writes flows.csv (if `flows`; with a `path` column and links.csv if
/// `paths`), jobs.csv, staged.csv (if any), summary.txt and summary.json.
pub fn write_fluid(
    dir: &Path,
    sim: &FluidSim,
    classes: &[JobClass],
    staged_names: &[String],
    summary: &FluidSummary,
    flows: bool,
    paths: bool,
) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let class_name = |c: u32| -> &str {
        let c = c as usize;
        if c < classes.len() {
            &classes[c].name
        } else if c - classes.len() < staged_names.len() {
            &staged_names[c - classes.len()]
        } else {
            ""
        }
    };
    if flows {
        let mut w = BufWriter::new(std::fs::File::create(dir.join("flows.csv"))?);
        write!(w, "flow,job,class,src,dst,scheme,bytes,start_ns,fct_ns,received_bytes,weight,priority,hops,latency_ns")?;
        writeln!(w, "{}", if paths { ",path" } else { "" })?;
        for (i, f) in sim.flows.iter().enumerate() {
            if f.start_ns > sim.now() {
                continue;
            }
            let job = match f.owner {
                Owner::Job(j) | Owner::Staged(j) => j.to_string(),
                Owner::Trace => String::new(),
            };
            write!(
                w,
                "{},{},{},{},{},fluid,{},{},{},{},{},{},{},{}",
                i,
                job,
                if f.class == u32::MAX {
                    ""
                } else {
                    class_name(f.class)
                },
                f.src,
                f.dst,
                f.bytes,
                f.start_ns,
                f.fct_ns().map_or(String::new(), |x| format!("{x:.3}")),
                if f.done_ns.is_some() { f.bytes } else { 0.0 },
                f.weight,
                f.priority,
                f.path.len(),
                f.latency_ns
            )?;
            if paths {
                let p: Vec<String> = f.path.iter().map(|l| l.to_string()).collect();
                write!(w, ",{}", p.join(" "))?;
            }
            writeln!(w)?;
        }
        w.flush()?;
    }
    if paths {
        let mut w = BufWriter::new(std::fs::File::create(dir.join("links.csv"))?);
        writeln!(w, "port,node,peer,gbps,delay_ns")?;
        for p in 0..sim.net.graph.port_count() as u32 {
            let (a, b) = sim.net.graph.port_ends(p);
            writeln!(
                w,
                "{},{},{},{},{}",
                p,
                sim.net.graph.names[a as usize],
                sim.net.graph.names[b as usize],
                sim.net.capacity[p as usize] * 8.0,
                sim.net.delay_ns[p as usize]
            )?;
        }
        w.flush()?;
    }
    let mut w = BufWriter::new(std::fs::File::create(dir.join("jobs.csv"))?);
    writeln!(w, "job,class,scheme,msr,approximate,src,dst,start_ns,done_ns,jct_ns,messages,needed,delivered_msgs,bytes,delivered_bytes,delivered_fraction")?;
    for (i, j) in sim.jobs.iter().enumerate() {
        if j.start_ns > sim.now() {
            continue;
        }
        let c = &classes[j.class as usize];
        writeln!(
            w,
            "{},{},fluid,{},{},{},{},{},{},{},{},{},{},{},{},{:.6}",
            i,
            c.name,
            c.msr,
            c.approximate,
            j.src,
            j.dst,
            j.start_ns,
            j.done_ns.map_or(String::new(), |d| format!("{d:.3}")),
            j.done_ns
                .map_or(String::new(), |d| format!("{:.3}", d - j.start_ns)),
            j.messages,
            j.needed,
            j.delivered,
            j.bytes,
            j.delivered_bytes,
            j.delivered as f64 / j.messages.max(1) as f64
        )?;
    }
    w.flush()?;
    if !sim.staged.is_empty() {
        let mut w = BufWriter::new(std::fs::File::create(dir.join("staged.csv"))?);
        writeln!(w, "job,name,hosts,iterations,done_iterations,start_ns,done_ns,jct_ns,compute_ns,comm_ns,flows")?;
        for (i, (j, st)) in sim.staged.iter().zip(&sim.staged_state).enumerate() {
            writeln!(
                w,
                "{},{},{},{},{},{},{},{},{:.3},{:.3},{}",
                i,
                j.name,
                j.hosts.len(),
                j.iterations,
                st.iteration_end.len(),
                j.start_ns,
                st.done.map_or(String::new(), |d| format!("{d:.3}")),
                st.done
                    .map_or(String::new(), |d| format!("{:.3}", d - j.start_ns)),
                st.compute_ns,
                st.comm_ns,
                st.flows
            )?;
        }
        w.flush()?;
    }
    std::fs::write(dir.join("summary.txt"), summary.text())?;
    std::fs::write(dir.join("summary.json"), summary.json())?;
    Ok(())
}
