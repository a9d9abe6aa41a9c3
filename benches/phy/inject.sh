#!/usr/bin/env bash
# Throughput of crates/phy's bit-error injector at BER 1e-5 on one core,
# as a ratio against a memcpy of the same buffer in the same run
# (goal: >= 1 GB/s of payload). Figures go to docs/performance.md.
# Usage: benches/phy/inject.sh [MiB] [BER] [repetitions]
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1} cargo build --release -q -p approxnet-phy --example inject_bench
exec taskset -c 0 ./target/release/examples/inject_bench "${1:-64}" "${2:-1e-5}" "${3:-15}"
