#!/usr/bin/env python3
"""Flow mode against packet mode on small cases: the same jobs (one message
each, so a job is a flow) from the same scenario and seed, run once with
``mode = "packet"`` (DCTCP) and once with ``mode = "flow"``; mean and p99
completion time of each, and their difference.

Cases: a dumbbell (8 senders, 8 receivers, 10 Gbps bottleneck between two
switches; load 0.4 / 0.8 on the bottleneck) and a k = 4 fat-tree (16
hosts, all-to-all, load 0.3 / 0.6 of a host link), sizes from
the web-search CDF (``web_search``) capped by ``max_jobs``, at two loads.

Usage: python3 benches/sim/fluid_vs_packet.py [--bin target-sim/release/approxnet-sim]
       [--jobs 300] [--duration-ms 200] [--out results/fluid_vs_packet.csv]
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

DUMBBELL = """
[topology]
kind = "dumbbell"
senders = 8
receivers = 8
bottleneck_gbps = 10.0
host_gbps = 10.0
link_delay_us = 1.0
"""

FAT_TREE = """
[topology]
kind = "fat_tree"
k = 4
host_gbps = 10.0
link_delay_us = 1.0
"""

HEAD = """
duration_ms = {duration_ms}
seed = 3
"""

JOBS = """
[[jobs]]
pattern = "{pattern}"
{pairs}
sizes = "{sizes}"
load = {load}
scheme = "dctcp"
max_jobs = {jobs}
"""


def pct(v: list[float], p: float) -> float:
    s = sorted(v)
    i = min(len(s) - 1, max(0, int(-(-p * len(s) // 1)) - 1))
    return s[i]


def run(binary: str, text: str, work: Path, sets: list[str]) -> dict[int, float]:
    path = work / "s.toml"
    path.write_text(text)
    cmd = [binary, "run", str(path), "--out", str(work / "out"), "--quiet", "--no-flows"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)
    with open(work / "out" / "jobs.csv") as f:
        return {int(r["job"]): float(r["jct_ns"]) for r in csv.DictReader(f) if r["jct_ns"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(ROOT / "target-sim/release/approxnet-sim"))
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--sizes", default="web_search")
    ap.add_argument(
        "--duration-ms", type=float, default=200.0, help="simulated time (more flows: longer)"
    )
    ap.add_argument("--out", default=str(ROOT / "results/fluid_vs_packet.csv"))
    a = ap.parse_args()
    senders = ", ".join(f"[{i}, {8 + i}]" for i in range(8))
    cases = [
        # 8 senders share the bottleneck: per-sender load 0.05 / 0.1 = 0.4 / 0.8 there
        ("dumbbell", DUMBBELL, "pairs", f"pairs = [{senders}]", (0.05, 0.1)),
        ("fat_tree_k4", FAT_TREE, "all_to_all", "", (0.3, 0.6)),
    ]
    rows = []
    with tempfile.TemporaryDirectory(prefix="fluid-vs-packet-") as tmp:
        work = Path(tmp)
        for name, topo, pattern, pairs, loads in cases:
            for load in loads:
                text = (
                    HEAD.format(duration_ms=a.duration_ms)
                    + topo
                    + JOBS.format(
                        pattern=pattern, pairs=pairs, sizes=a.sizes, load=load, jobs=a.jobs
                    )
                )
                packet = run(a.bin, text, work, [])
                fluid = run(a.bin, 'mode = "flow"\n' + text, work, [])
                both = [k for k in packet if k in fluid]
                p = [packet[k] / 1e3 for k in both]
                f = [fluid[k] / 1e3 for k in both]
                r = {
                    "case": name,
                    "load": load,
                    "flows": len(both),
                    "packet_mean_us": round(statistics.fmean(p), 2),
                    "flow_mean_us": round(statistics.fmean(f), 2),
                    "mean_diff_pct": round(
                        100 * (statistics.fmean(f) / statistics.fmean(p) - 1), 1
                    ),
                    "packet_p99_us": round(pct(p, 0.99), 2),
                    "flow_p99_us": round(pct(f, 0.99), 2),
                    "p99_diff_pct": round(100 * (pct(f, 0.99) / pct(p, 0.99) - 1), 1),
                    "median_ratio_flow_over_packet": round(
                        statistics.median(x / y for x, y in zip(f, p, strict=True)), 3
                    ),
                }
                print(json.dumps(r), flush=True)
                rows.append(r)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"results in {a.out}")


if __name__ == "__main__":
    main()
