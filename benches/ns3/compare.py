#!/usr/bin/env python3
"""Validate approxnet-sim against ns-3 on the DCTCP dumbbell, and time both.

Runs, in one script run:
  * approxnet-sim on benches/ns3/dumbbell_dctcp.toml (release build), once
    with queue sampling for the comparison and --repeat times without
    sampling for the speed figure (median);
  * ns-3 (PyPI `ns3`, from its own venv) on benches/ns3/ns3_dctcp_dumbbell.py,
    once plain (timed: Simulator::Run only, the anchor's measure) and once
    stepped with queue sampling (not timed).
Compares aggregate goodput, bottleneck queue mean / p99 (packets, sampled
every 10 us), Jain fairness over per-flow bytes, delivered data packets,
ECN marks and packet-hops; prints a table and writes a JSON record.

Usage: python3 benches/ns3/compare.py [--senders 16] [--ns3-python target-ns3venv/bin/python]
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIM = os.path.join(ROOT, "target-sim", "release", "approxnet-sim")
SCEN = os.path.join(ROOT, "benches", "ns3", "dumbbell_dctcp.toml")
NS3 = os.path.join(ROOT, "benches", "ns3", "ns3_dctcp_dumbbell.py")


def jain(xs):
    s = sum(xs)
    q = sum(x * x for x in xs)
    return s * s / (len(xs) * q) if q else 0.0


def p99(xs):
    ys = sorted(xs)
    return ys[max(0, -(-99 * len(ys) // 100) - 1)] if ys else float("nan")


def run_ours(n, simtime, sample, out):
    cmd = [
        SIM,
        "run",
        SCEN,
        "--out",
        out,
        "--quiet",
        "--set",
        f"topology.senders={n}",
        "--set",
        f"jobs.0.target={n}",
        "--set",
        f"duration_ms={simtime * 1e3}",
    ]
    if not sample:
        cmd += ["--set", "output.queue_sample_us=0.0"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "summary.json")) as f:
        summ = json.load(f)
    with open(os.path.join(out, "flows.csv")) as f:
        per_flow = [int(r["received_bytes"]) for r in csv.DictReader(f)]
    q = []
    if sample:
        with open(os.path.join(out, "queues.csv")) as f:
            q = [int(r["pkts"]) for r in csv.DictReader(f) if r["peer"] == f"h{n}"]
    return summ, per_flow, q


def run_ns3(py, n, simtime, sample_us):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as t:
        path = t.name
    cmd = [
        py,
        NS3,
        "--senders",
        str(n),
        "--simtime",
        str(simtime),
        "--delack",
        "1",
        "--json",
        path,
        "--sample-us",
        str(sample_us),
    ]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--senders", type=int, default=16)
    ap.add_argument("--simtime", type=float, default=0.1)
    ap.add_argument("--ns3-python", default=os.path.join(ROOT, "target-ns3venv", "bin", "python"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(ROOT, "benches", "ns3", "results"))
    a = ap.parse_args()
    n, st = a.senders, a.simtime
    if not os.path.exists(SIM):
        subprocess.run(
            ["cargo", "build", "--release", "-p", "approxnet-sim"],
            check=True,
            cwd=ROOT,
            env=dict(os.environ, CARGO_TARGET_DIR=os.path.join(ROOT, "target-sim")),
        )
    tmp = tempfile.mkdtemp(prefix="anx-ns3-")
    ours, ours_flows, ours_q = run_ours(n, st, True, os.path.join(tmp, "v"))
    walls = []
    for i in range(a.repeat):
        s, _, _ = run_ours(n, st, False, os.path.join(tmp, f"s{i}"))
        walls.append(s["wall_s"])
    ours_speed = s
    ours_wall = statistics.median(walls)

    ns_speed = run_ns3(a.ns3_python, n, st, 0.0)
    ns_val = run_ns3(a.ns3_python, n, st, 10.0)

    rows = []

    def row(name, o, t, unit=""):
        rel = (o - t) / t * 100 if t else float("nan")
        rows.append((name, o, t, rel, unit))

    row(
        "goodput",
        sum(ours_flows) * 8 / st / 1e9,
        sum(ns_val["per_flow_rx_bytes"]) * 8 / st / 1e9,
        "Gbps",
    )
    row(
        "queue mean", statistics.mean(ours_q), statistics.mean(ns_val["queue_samples_pkts"]), "pkts"
    )
    row("queue p99", p99(ours_q), p99(ns_val["queue_samples_pkts"]), "pkts")
    row("Jain fairness", jain(ours_flows), jain(ns_val["per_flow_rx_bytes"]))
    row("data pkts delivered", ours["delivered_data"], ns_val["rx_data_pkts"])
    row("ECN marks", ours["marks"], ns_val["bottleneck"]["mark"])
    row("drops", ours["drops"], ns_val["drops_total"])
    row("packet-hops", ours_speed["hops"], ns_speed["packet_hops"])
    row("wall s (run only)", ours_wall, ns_speed["run_wall"], "s")
    ours_hps = ours_speed["hops"] / ours_wall
    row("packet-hops / wall s", ours_hps, ns_speed["hops_per_wall_s"])

    print(f"DCTCP dumbbell, {n} senders, {st} s simulated (approxnet-sim vs ns-3 3.44)")
    print(f"{'metric':<22} {'approxnet-sim':>14} {'ns-3':>14} {'diff %':>8}")
    for name, o, t, rel, unit in rows:
        print(f"{name:<22} {o:>14.4g} {t:>14.4g} {rel:>8.1f} {unit}")
    speedup = ours_hps / ns_speed["hops_per_wall_s"]
    print(f"speed-up (packet-hops per wall second): {speedup:.1f}x")
    os.makedirs(a.out, exist_ok=True)
    rec = dict(
        when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        senders=n,
        simtime=st,
        rows=[dict(metric=r[0], ours=r[1], ns3=r[2], diff_pct=r[3], unit=r[4]) for r in rows],
        speedup=speedup,
        ours_walls=walls,
        ns3=dict(
            (k, v)
            for k, v in ns_speed.items()
            if k not in ("queue_samples_pkts", "per_flow_rx_bytes")
        ),
    )
    path = os.path.join(a.out, f"compare_{n}.json")
    with open(path, "w") as f:
        json.dump(rec, f, indent=1)
    print(f"written {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
