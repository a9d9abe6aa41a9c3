//! `approxnet-sim run scenario.toml --out DIR [--set key=value ...] [--quiet]`

use approxnet_sim::output::{write_all, Summary};
use approxnet_sim::scenario;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: approxnet-sim run SCENARIO.toml [--out DIR] [--set key.path=value ...] [--quiet] [--no-flows]
       approxnet-sim schemes | sizes

  --out DIR      write jobs.csv, flows.csv, queues.csv, summary.txt, summary.json (default results/tmp/<name>)
  --set k=v      override a scenario key, e.g. --set jobs.0.scheme=dctcp-es --set seed=3
  --quiet        print nothing but errors (no progress, no summary table)
  --no-flows     skip flows.csv
  -h, --help     this text";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("schemes") => {
            println!("{}", approxnet_sim::scheme::NAMES.join("\n"));
            ExitCode::SUCCESS
        }
        Some("sizes") => {
            println!("{}", approxnet_sim::workload::cdf::NAMES.join("\n"));
            ExitCode::SUCCESS
        }
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> ExitCode {
    let mut path = None;
    let mut out = None;
    let mut sets = Vec::new();
    let mut quiet = false;
    let mut flows = true;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => out = it.next().map(PathBuf::from),
            "--set" => match it.next() {
                Some(v) => sets.push(v.clone()),
                None => {
                    eprintln!("--set needs key=value\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--quiet" => quiet = true,
            "--no-flows" => flows = false,
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            s if s.starts_with("--") => {
                eprintln!("unknown option {s}\n{USAGE}");
                return ExitCode::from(2);
            }
            s => path = Some(PathBuf::from(s)),
        }
    }
    let Some(path) = path else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let file = match scenario::load(&path, &sets) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let name = if file.name.is_empty() {
        path.file_stem()
            .map_or("scenario".into(), |s| s.to_string_lossy().into_owned())
    } else {
        file.name.clone()
    };
    let mut built = match scenario::build(&file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    if !quiet {
        built.sim.show_progress();
        eprintln!(
            "[approxnet-sim] {}: {} hosts, {} ports, {} jobs, {} ms",
            name,
            built.sim.net.host_count(),
            built.sim.net.ports.len(),
            built.sim.jobs.len(),
            file.duration_ms
        );
    }
    let t0 = std::time::Instant::now();
    built.sim.run();
    let wall = t0.elapsed().as_secs_f64();
    built.sim.finalize();
    let summary = Summary::compute(&name, &built.sim, &built.classes, wall);
    let out = out.unwrap_or_else(|| PathBuf::from("results/tmp").join(&name));
    if let Err(e) = write_all(&out, &built.sim, &built.classes, &summary, flows) {
        eprintln!("error: writing {}: {e}", out.display());
        return ExitCode::from(1);
    }
    if !quiet {
        print!("{}", summary.text());
        println!("results in {}", out.display());
    }
    // The process ends here: freeing millions of packets, jobs and
    // connection states one by one would only cost time.
    std::mem::forget(built);
    ExitCode::SUCCESS
}
