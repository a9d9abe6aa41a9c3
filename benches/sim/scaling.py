#!/usr/bin/env python3
"""Fat-tree scaling of approxnet-sim: wall time, peak RSS, ns per packet-hop.

For each k, two runs of a release binary under /usr/bin/time -v:
  * the topology alone (no jobs): peak RSS of building the network and
    its routes;
  * a fixed light workload (FBKV all-to-all, DCTCP, load 0.2, 10 messages
    per job, 0.3 ms simulated): event-loop wall time (summary.json wall_s)
    over packet-hops gives ns per hop; peak RSS of the whole run.
Fat-tree hosts = k^3 / 4 (the full tree). One run per point: the machine is
shared, so compare rows taken in one script run.

CPU ns/hop is the process's user + system time (setup and output
included) over packet-hops: on a loaded machine it moves less than wall
time. Several binaries (comma-separated) alternate per k; with --repeat N
each k runs N rounds (every other round in reverse order) and a last
table gives each binary's median and minimum CPU ns/hop per k (the
topology-only run is skipped after the first round).

Usage: python3 benches/sim/scaling.py [--bin target/release/approxnet-sim[,OTHER]]
       [--ks 4,8,12,16,20,24] [--repeat N] [--out benches/sim/results/scaling.csv]
Build first: CARGO_BUILD_JOBS=1 cargo build --release -p approxnet-sim
"""

import argparse
import csv
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCENARIO = """
name = "scaling_k{k}"
duration_ms = 0.3
[topology]
kind = "fat_tree"
k = {k}
host_gbps = 40.0
"""

WORKLOAD = """
[[jobs]]
pattern = "all_to_all"
sizes = "fbkv"
messages = 10
load = 0.2
scheme = "dctcp"
"""


def timed_run(binary, text, out):
    """Runs one scenario; returns (summary dict, elapsed s, peak RSS MB)."""
    path = os.path.join(out, "s.toml")
    with open(path, "w") as f:
        f.write(text)
    cmd = ["/usr/bin/time", "-v", binary, "run", path, "--out", out, "--quiet", "--no-flows"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    m = re.search(
        r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", r.stderr
    )
    if rss is None or m is None:
        sys.exit(f"no /usr/bin/time -v figures in:\n{r.stderr}")
    rss_kb = int(rss.group(1))
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    elapsed = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    summary["cpu_s"] = cpu
    return summary, elapsed, rss_kb / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--bin",
        default=os.path.join(ROOT, "target", "release", "approxnet-sim"),
        help="binary; several, comma-separated, alternate per k (before / after)",
    )
    ap.add_argument("--ks", default="4,8,12,16,20,24")
    ap.add_argument("--repeat", type=int, default=1, help="rounds per k (alternating order)")
    ap.add_argument("--out", default=None, help="CSV to write (default: print only)")
    a = ap.parse_args()
    rows = []
    print(
        "| k | round | binary | hosts | topology-only RSS MB | run RSS MB | wall s (all) | loop s | packet-hops"
        " | ns/hop (loop) | CPU ns/hop (process) | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    bins = a.bin.split(",")
    for k in [int(x) for x in a.ks.split(",")]:
        for rnd in range(a.repeat):
            for binary in bins if rnd % 2 == 0 else bins[::-1]:
                with tempfile.TemporaryDirectory() as out:
                    topo_rss = 0.0
                    if rnd == 0:
                        _, _, topo_rss = timed_run(binary, SCENARIO.format(k=k), out)
                    s, elapsed, rss = timed_run(binary, SCENARIO.format(k=k) + WORKLOAD, out)
                row = {
                    "k": k,
                    "round": rnd,
                    "binary": binary,
                    "hosts": k**3 // 4,
                    "topology_rss_mb": round(topo_rss, 1),
                    "run_rss_mb": round(rss, 1),
                    "wall_s": round(elapsed, 2),
                    "loop_s": round(s["wall_s"], 3),
                    "hops": s["hops"],
                    "ns_per_hop": round(s["wall_s"] / max(s["hops"], 1) * 1e9, 1),
                    "cpu_ns_per_hop": round(s["cpu_s"] / max(s["hops"], 1) * 1e9, 1),
                    "load1": round(os.getloadavg()[0], 1),
                }
                rows.append(row)
                print("| " + " | ".join(str(v) for v in row.values()) + " |", flush=True)
    if a.repeat > 1:
        print("\n| k | binary | runs | CPU ns/hop median | min |")
        print("|---|---|---|---|---|")
        for k in sorted({r["k"] for r in rows}):
            for binary in bins:
                v = [r["cpu_ns_per_hop"] for r in rows if r["k"] == k and r["binary"] == binary]
                print(f"| {k} | {binary} | {len(v)} | {statistics.median(v):.1f} | {min(v):.1f} |")
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
