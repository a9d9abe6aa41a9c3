//! `approxnet-perf`: the load generator of `approxnet_net::perf`.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(approxnet_net::perf::main(
        std::env::args().skip(1).collect(),
    ))
}
