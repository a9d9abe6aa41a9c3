#!/usr/bin/env bash
# Issue 11's forged-JOB flood on loopback (release build): the new client's
# JCT with and without the flood, the server's state and peak RSS, for a
# server whose secret comes from the OS and for one whose secret was
# guessed; each round pairs the flooded runs with an unloaded one and one
# next to a CPU-only busy loop, so the ratios compare runs seconds apart.
# Appends the figures (with the host's load average: other work on a
# shared host moves them) to results/flood.txt.
# Usage: benches/net/flood.sh [SOURCES] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -q -p approxnet-net --example flood
out=results/flood.txt
{
  echo "## $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg): flood ${1:-4096} ${2:-5} ($(git rev-parse --short HEAD))"
  ./target/release/examples/flood "$@"
} | tee -a "$out"
