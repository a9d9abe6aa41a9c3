//! `approxnet-sim run scenario.toml --out DIR [--set key=value ...] [--quiet]`
//! `approxnet-sim topo scenario.toml [--set key=value ...]`

use approxnet_sim::run::{run_scenario, RunOptions};
use approxnet_sim::scenario;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// approxnet-sim: the packet-level and flow-level datacenter simulator.
#[derive(Parser, Debug)]
#[command(
    name = "approxnet-sim",
    version,
    override_usage = "approxnet-sim run SCENARIO.toml [--out DIR] [--set key.path=value ...] [--quiet] [--no-flows]\n       \
                      approxnet-sim topo SCENARIO.toml [--set key.path=value ...]\n       \
                      approxnet-sim schemes | sizes",
    after_help = "Examples:\n  approxnet-sim run demo.toml --set jobs.0.scheme=dctcp-es --set seed=3\n  \
                  approxnet-sim topo study.toml --set topology.kind=\"torus\""
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate; mode = "packet" (default) or "flow" in the scenario picks the simulator.
    #[command(
        override_usage = "approxnet-sim run SCENARIO.toml [--out DIR] [--set key.path=value ...] [--quiet] [--no-flows]"
    )]
    Run {
        #[command(flatten)]
        scenario: ScenarioArgs,
        /// Write jobs.csv, flows.csv, queues.csv, summary.txt and
        /// summary.json here (default results/tmp/<name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print nothing but errors (no progress, no summary table).
        #[arg(long)]
        quiet: bool,
        /// Skip flows.csv.
        #[arg(long)]
        no_flows: bool,
    },
    /// The topology's size, diameter and mean hop count between hosts.
    Topo {
        #[command(flatten)]
        scenario: ScenarioArgs,
    },
    /// The transports / schemes a scenario may name.
    Schemes,
    /// The message-size distributions a scenario may name.
    Sizes,
}

#[derive(Args, Debug)]
struct ScenarioArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// Override a scenario key, e.g. --set jobs.0.scheme=dctcp-es --set seed=3.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
}

fn main() -> ExitCode {
    // clap prints help / version (exit 0) and usage errors (exit 2)
    match Cli::parse().command {
        Command::Run {
            scenario,
            out,
            quiet,
            no_flows,
        } => run(scenario, out, quiet, !no_flows),
        Command::Topo { scenario } => topo(scenario),
        Command::Schemes => {
            println!("{}", approxnet_sim::scheme::NAMES.join("\n"));
            ExitCode::SUCCESS
        }
        Command::Sizes => {
            println!("{}", approxnet_sim::workload::cdf::NAMES.join("\n"));
            ExitCode::SUCCESS
        }
    }
}

fn topo(a: ScenarioArgs) -> ExitCode {
    let report = scenario::load(&a.scenario, &a.sets).and_then(|f| scenario::topology_report(&f));
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

fn run(a: ScenarioArgs, out: Option<PathBuf>, quiet: bool, flows: bool) -> ExitCode {
    let file = match scenario::load(&a.scenario, &a.sets) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let name = if file.name.is_empty() {
        a.scenario
            .file_stem()
            .map_or("scenario".into(), |s| s.to_string_lossy().into_owned())
    } else {
        file.name.clone()
    };
    let out = out.unwrap_or_else(|| PathBuf::from("results/tmp").join(&name));
    let opts = RunOptions {
        flows,
        progress: !quiet,
        exiting: true,
    };
    match run_scenario(&file, &name, &out, opts) {
        Ok(r) => {
            if !quiet {
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
