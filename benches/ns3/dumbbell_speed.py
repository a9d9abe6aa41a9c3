#!/usr/bin/env python3
"""Packet-hops per second, approxnet-sim vs ns-3 3.44 (C++), DCTCP dumbbell.

Issue 19's second simulator anchor. In one script run, alternating,
`--repeat` times each:
  * ns-3: benches/ns3/ns3_contention.cc (built against the PyPI wheel by
    benches/ns3/contention.py) with `--scenario=late` and N flows starting
    at 0: N senders -> 1 switch -> 1 receiver, 10 Gbps / 10 us links,
    RED as DCTCP marking at K = 65, 1000 packets, 10 MB per sender, 0.1 s;
    `--hops=true` counts every link transmission (PhyTxBegin) and times
    `Simulator::Run` only;
  * ours: benches/ns3/dumbbell_dctcp.toml (the same scenario, validated
    against ns-3 in docs/validation.md), event loop wall time (summary.json
    `wall_s`), no queue sampling.
A packet-hop is one link transmission, data or ACK, on both sides. The
figure is the ratio of median hops per wall second; CPU seconds of each
process (getrusage) are recorded too, with the load average.

`--scale S` runs the same scenario S times longer on both sides (S x the
bytes per sender and S x the simulated time: still no flow finishes, the
bottleneck stays full), so that our run is long enough to time (at S = 1
it takes ~20 ms of CPU, ~1 % of a process start's noise). `--ns3-bin`
takes an already built ns-3 program (e.g. another checkout's
target-ns3/contention) instead of building one here.

Usage: python3 benches/ns3/dumbbell_speed.py [--senders 16] [--repeat 3] [--scale 1]
       [--bin target/release/approxnet-sim] [--ns3-bin PATH]
       [--out benches/sim/results/ns3_dumbbell_speed.csv]
"""

import argparse
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import contention  # noqa: E402


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def cpu_run(cmd: list[str]) -> tuple[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    return r.stdout, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


BYTES = 10_000_000
SIM_S = 0.1


def run_ns3(ns3: str, n: int, scale: int) -> dict[str, Any]:
    out, cpu = cpu_run(
        [
            ns3,
            "--scenario=late",
            "--starts=" + ",".join(["0"] * n),
            f"--bytes={BYTES * scale}",
            f"--simtime={SIM_S * scale:g}",
            "--hops=true",
        ]
    )
    j = json.loads(out)
    return {"hops": j["hops"], "wall_s": j["run_wall_s"], "cpu_s": cpu}


def run_ours(binary: str, n: int, scale: int, out: str) -> dict[str, Any]:
    scen = os.path.join(HERE, "dumbbell_dctcp.toml")
    _, cpu = cpu_run(
        [binary, "run", scen, "--out", out, "--quiet", "--no-flows"]
        + ["--set", f"topology.senders={n}", "--set", f"jobs.0.target={n}"]
        + ["--set", "output.queue_sample_us=0.0"]
        + ["--set", f"duration_ms={SIM_S * 1e3 * scale:g}"]
        + ["--set", f'jobs.0.sizes="fixed:{BYTES * scale}"']
    )
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return {"hops": s["hops"], "wall_s": s["wall_s"], "cpu_s": cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--senders", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--scale",
        type=int,
        default=1,
        help="bytes per sender and simulated time, times this (both sides)",
    )
    ap.add_argument("--ns3-bin", default=None, help="a built ns-3 contention program")
    ap.add_argument(
        "--bin",
        default=os.path.join(ROOT, "target", "release", "approxnet-sim"),
        help="approxnet-sim binary; several, comma-separated, run side by side (before / after)",
    )
    ap.add_argument("--out", default=None, help="CSV to append one row per run to")
    a = ap.parse_args()
    if a.scale < 1:
        sys.exit("--scale must be at least 1")
    ns3 = a.ns3_bin
    if ns3 is None:
        contention.build_ns3()
        ns3 = contention.NS3_BIN
    rows = []
    with tempfile.TemporaryDirectory() as w:
        for i in range(a.repeat):
            runs = [("ns-3", run_ns3(ns3, a.senders, a.scale))]
            runs += [
                (f"approxnet-sim {b}", run_ours(b, a.senders, a.scale, w)) for b in a.bin.split(",")
            ]
            for side, r in runs:
                rows.append(
                    {
                        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                        "load1/5/15": load(),
                        "senders": a.senders if a.scale == 1 else f"{a.senders} (scale {a.scale})",
                        "side": side,
                        "run": i,
                        "hops": r["hops"],
                        "loop_wall_s": round(r["wall_s"], 4),
                        "cpu_s": round(r["cpu_s"], 4),
                        "hops_per_s": round(r["hops"] / r["wall_s"]),
                    }
                )
                print(rows[-1], flush=True)
    sides = list(dict.fromkeys(r["side"] for r in rows))
    med = {s: statistics.median(r["hops_per_s"] for r in rows if r["side"] == s) for s in sides}
    cpu = {
        s: statistics.median(r["hops"] / r["cpu_s"] for r in rows if r["side"] == s) for s in sides
    }
    for s in sides[1:]:
        print(
            f"{s}: median {med[s] / 1e6:.2f} M hops per loop wall second vs ns-3 "
            f"{med['ns-3'] / 1e3:.0f} k = {med[s] / med['ns-3']:.0f}x; per CPU second (whole "
            f"process) {cpu[s] / cpu['ns-3']:.0f}x; scale {a.scale}; load {load()}"
        )
    if a.out:
        new = not os.path.exists(a.out)
        with open(a.out, "a", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0]))
            if new:
                wr.writeheader()
            wr.writerows(rows)


if __name__ == "__main__":
    main()
