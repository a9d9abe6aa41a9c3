#!/usr/bin/env bash
# Instructions a packet-hop (cachegrind, no cache simulation: deterministic,
# unlike time on a shared VM) of named simulator scenarios.
# usage: benches/sim/instructions_per_hop.sh BIN TAG [db db10 db1g dbfull perm atp ...]
#   db     the ns-3 dumbbell bench line (benches/ns3/dumbbell_speed.py's scenario, 16 -> 1)
#   db10   the same, 10x longer;  db1g  at 1 Gbit/s;  dbfull  as shipped (flows and queue samples written)
#   perm   the htsim comparison's k = 8 permutation (htsim_permutation_k8.toml)
#   atp    1 ms of the NetApprox k = 12 FBKV scenario, ATP-Full at MSR 0.5, load 0.2
# Prints "TAG SCENARIO Ir=... hops=... events=... per_hop=..."; outputs go to $WORK (default /tmp/iph).
set -eu
BIN=$1 TAG=$2; shift 2
R=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${WORK:-/tmp/iph}; mkdir -p "$WORK"
DB=("$R/benches/ns3/dumbbell_dctcp.toml" --no-flows --set topology.senders=16 --set jobs.0.target=16 --set output.queue_sample_us=0.0)
FB="$R/python/approxnet/studies/netapprox/fig5_fbkv.toml"
[ $# -gt 0 ] || set -- db perm
for w in "$@"; do
  case $w in
    db) A=("${DB[@]}");;
    db10) A=("${DB[@]}" --set duration_ms=1000 --set 'jobs.0.sizes="fixed:100000000"');;
    db1g) A=("${DB[@]}" --set topology.host_gbps=1.0);;
    dbfull) A=("$R/benches/ns3/dumbbell_dctcp.toml");;
    perm) A=("$R/benches/sim/htsim_permutation_k8.toml");;
    atp) A=("$FB" --set 'jobs.0.scheme="atp-full"' --set jobs.0.msr=0.5 --set jobs.0.load=0.2 --set duration_ms=1.0);;
    *) echo "unknown scenario '$w' (db db10 db1g dbfull perm atp)" >&2; exit 2;;
  esac
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$BIN" run "${A[@]}" --out "$WORK/$TAG.$w" --quiet 2> "$WORK/$TAG.$w.vg" >/dev/null
  ir=$(grep "I *refs" "$WORK/$TAG.$w.vg" | sed 's/.*refs: *//; s/,//g')
  read -r hops ev < <(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['hops'], d['events'])" "$WORK/$TAG.$w/summary.json")
  echo "$TAG $w Ir=$ir hops=$hops events=$ev per_hop=$(python3 -c "print(round($ir/$hops, 1))")"
done
