#!/usr/bin/env python3
"""How htsim's own cost per packet-hop grows with the fat-tree, beside ours.

Issue 12 item 5 asks for a per-hop cost flat in k; this is the anchor: the
same workload as benches/sim/htsim_compare.py (a permutation of TCP flows,
one per host, 2 MB each, 10 Gbps, 1 us links, queues that never drop) on
full k-ary fat-trees of several sizes, htsim_tcp and approxnet-sim
alternating on the same machine, `--repeat` rounds. The workload has one
long flow per host, so its per-hop cost is the network's own state (ports,
queues, packets, event list) outgrowing the caches: what part of our growth
on benches/sim/scaling.py's many short jobs the cache hierarchy itself
explains, and what part is ours.

Per k and side: data hops, event-loop ns per data hop (htsim: its
`doNextEvent` loop; ours: summary.json `wall_s`) and CPU ns per data hop
(whole process: setup included), medians and minima over the rounds; then
each side's k / first-k ratios. htsim must be the counting build of
benches/sim/htsim_build.py; the figures are comparable only within one
run (the host is shared).

Usage: python3 benches/sim/htsim_scaling.py --htsim /tmp/htsim/sim/datacenter/htsim_tcp
       [--bin target/release/approxnet-sim[,OTHER]] [--ks 8,20] [--repeat 3]
       [--flow-bytes 2000000] [--out benches/sim/results/htsim_scaling.csv]
"""

import argparse
import os
import statistics
import tempfile
import time

import htsim_compare as hc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def set_k(k: int, flow_bytes: int) -> None:
    """Points htsim_compare's workload at a k-ary fat-tree."""
    hc.K = k
    hc.HOSTS = k**3 // 4
    hc.FLOW_BYTES = flow_bytes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--htsim", required=True, help="counting build of htsim_tcp")
    ap.add_argument(
        "--bin",
        default=os.path.join(ROOT, "target", "release", "approxnet-sim"),
        help="approxnet-sim binaries, comma-separated",
    )
    ap.add_argument("--ks", default="8,20")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--flow-bytes", type=int, default=hc.FLOW_BYTES)
    ap.add_argument("--out", default=None, help="CSV to append one row per run to")
    a = ap.parse_args()
    ks = [int(x) for x in a.ks.split(",")]
    bins = a.bin.split(",")
    rows: list[dict[str, object]] = []
    for i in range(a.repeat):
        for k in ks if i % 2 == 0 else ks[::-1]:
            set_k(k, a.flow_bytes)
            with tempfile.TemporaryDirectory() as w:
                h = hc.run_htsim(a.htsim, w)
                runs = [("htsim", h)] + [(b, hc.run_ours(b, h["pairs"], w)) for b in bins]
            for side, r in runs:
                rows.append(
                    {
                        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                        "load1/5/15": hc.load(),
                        "k": k,
                        "side": side,
                        "run": i,
                        "data_hops": r["data_hops"],
                        "loop_wall_s": round(r["wall_s"], 4),
                        "cpu_s": round(r["cpu_s"], 4),
                        "loop_ns_per_hop": round(r["wall_s"] / r["data_hops"] * 1e9, 1),
                        "cpu_ns_per_hop": round(r["cpu_s"] / r["data_hops"] * 1e9, 1),
                    }
                )
                print(rows[-1], flush=True)
    sides = list(dict.fromkeys(str(r["side"]) for r in rows))
    print(f"\nmedian (min) ns per data hop; load now {hc.load()}")
    print("side | k | data hops | loop ns/hop | CPU ns/hop")
    first: dict[tuple[str, str], float] = {}
    for s in sides:
        for k in ks:
            got = [r for r in rows if r["side"] == s and r["k"] == k]
            loop = [float(str(r["loop_ns_per_hop"])) for r in got]
            cpu = [float(str(r["cpu_ns_per_hop"])) for r in got]
            ml, mc = statistics.median(loop), statistics.median(cpu)
            first.setdefault((s, "loop"), ml)
            first.setdefault((s, "cpu"), mc)
            print(
                f"{s} | {k} | {got[0]['data_hops']} | {ml:.0f} ({min(loop):.0f}) x"
                f"{ml / first[(s, 'loop')]:.2f} | {mc:.0f} ({min(cpu):.0f}) x"
                f"{mc / first[(s, 'cpu')]:.2f}"
            )
    if a.out:
        hc.append_csv(a.out, rows, list(rows[0]))


if __name__ == "__main__":
    main()
