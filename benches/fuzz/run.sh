#!/usr/bin/env bash
# A bounded fuzz run of the datagram entry point (crates/proto
# harness::fuzz::datagram) on the stable toolchain: seeded mutations of a
# real exchange's datagrams, no coverage feedback. With a nightly toolchain
# and cargo-fuzz, crates/proto/fuzz runs the same entry point under
# libFuzzer (coverage-guided).
#   benches/fuzz/run.sh [SECONDS=60] [SEED=1]   -> results/fuzz_datagram.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-60}
SEED=${2:-1}
cargo build --release -q -p approxnet-proto --example fuzz_datagram
mkdir -p results
out=$(./target/release/examples/fuzz_datagram "$SECS" "$SEED")
echo "$out"
echo "$(date -u +%F) git $(git rev-parse --short HEAD): $out" >> results/fuzz_datagram.txt
