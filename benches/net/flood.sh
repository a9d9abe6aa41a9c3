#!/usr/bin/env bash
# Issue 11's forged-JOB flood on loopback (release build): the new client's
# JCT with and without the flood, the server's state and peak RSS, for a
# server whose secret comes from the OS and for one whose secret was
# guessed. Appends the figures to results/flood.txt.
# Usage: benches/net/flood.sh [SOURCES] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -q -p approxnet-net --example flood
out=results/flood.txt
{
  echo "## $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores: flood ${1:-4096} ${2:-5}"
  ./target/release/examples/flood "$@"
} | tee -a "$out"
