//! `approxnet-sim run scenario.toml --out DIR [--set key=value ...] [--quiet]`
//! `approxnet-sim topo scenario.toml [--set key=value ...]`

use approxnet_sim::run::{run_scenario, RunOptions};
use approxnet_sim::scenario;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: approxnet-sim run SCENARIO.toml [--out DIR] [--set key.path=value ...] [--quiet] [--no-flows]
       approxnet-sim topo SCENARIO.toml [--set key.path=value ...]
       approxnet-sim schemes | sizes

  run            simulate; mode = \"packet\" (default) or \"flow\" in the scenario picks the simulator
  topo           the topology's size, diameter and mean hop count between hosts
  --out DIR      write jobs.csv, flows.csv, queues.csv, summary.txt, summary.json (default results/tmp/<name>)
  --set k=v      override a scenario key, e.g. --set jobs.0.scheme=dctcp-es --set seed=3
  --quiet        print nothing but errors (no progress, no summary table)
  --no-flows     skip flows.csv
  -h, --help     this text";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("topo") => topo(&args[1..]),
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

struct Args {
    path: PathBuf,
    out: Option<PathBuf>,
    sets: Vec<String>,
    quiet: bool,
    flows: bool,
}

fn parse(args: &[String]) -> Result<Args, ExitCode> {
    let mut path = None;
    let mut a = Args {
        path: PathBuf::new(),
        out: None,
        sets: Vec::new(),
        quiet: false,
        flows: true,
    };
    let mut it = args.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--out" => a.out = it.next().map(PathBuf::from),
            "--set" => match it.next() {
                Some(v) => a.sets.push(v.clone()),
                None => {
                    eprintln!("--set needs key=value\n{USAGE}");
                    return Err(ExitCode::from(2));
                }
            },
            "--quiet" => a.quiet = true,
            "--no-flows" => a.flows = false,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Err(ExitCode::SUCCESS);
            }
            s if s.starts_with("--") => {
                eprintln!("unknown option {s}\n{USAGE}");
                return Err(ExitCode::from(2));
            }
            s => path = Some(PathBuf::from(s)),
        }
    }
    match path {
        Some(p) => {
            a.path = p;
            Ok(a)
        }
        None => {
            eprintln!("{USAGE}");
            Err(ExitCode::from(2))
        }
    }
}

fn topo(args: &[String]) -> ExitCode {
    let a = match parse(args) {
        Ok(a) => a,
        Err(c) => return c,
    };
    let report = scenario::load(&a.path, &a.sets).and_then(|f| scenario::topology_report(&f));
    match report {
        Ok(r) => {
            print!("{}", r.text());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &[String]) -> ExitCode {
    let a = match parse(args) {
        Ok(a) => a,
        Err(c) => return c,
    };
    let file = match scenario::load(&a.path, &a.sets) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let name = if file.name.is_empty() {
        a.path
            .file_stem()
            .map_or("scenario".into(), |s| s.to_string_lossy().into_owned())
    } else {
        file.name.clone()
    };
    let out = a
        .out
        .unwrap_or_else(|| PathBuf::from("results/tmp").join(&name));
    let opts = RunOptions {
        flows: a.flows,
        progress: !a.quiet,
        exiting: true,
    };
    match run_scenario(&file, &name, &out, opts) {
        Ok(r) => {
            if !a.quiet {
                print!("{}", r.text);
                println!("results in {}", out.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
