#!/usr/bin/env python3
"""Hosts under contention (issue 12): approxnet-sim and ns-3 3.44 side by side.

Runs, in one script run, both simulators on
  * the late flow: two DCTCP bulk flows into one receiver, the second
    starting at 20 ms, 100 ms simulated (benches/ns3/late_flow.toml);
  * incast rounds: 32 -> 1, 64 KiB per sender per round, 5 rounds 50 ms
    apart, 100-packet bottleneck, TCP NewReno, initial window 10 and 2
    (benches/ns3/incast_rounds.toml); both with SACK off and with classic
    (RFC 6675) recovery instead of PRR, to show what each option does, and
    ours without the bench's connection options (a connection reused across
    rounds, no handshake ACK) and with the old shared 150.2 KB buffer;
  * the same incast with every flow's start drawn uniformly from 0-2 us
    after its round's (both simulators, seeds / runs 1-6): without jitter
    both are deterministic and which flows lose what hinges on single
    nanoseconds (one more SYN byte moves our IW 2 rounds from 0 to 1
    timeout), so the jittered means are the comparison to trust.
Prints tables and writes benches/ns3/results/contention.json.

The ns-3 side is benches/ns3/ns3_contention.cc, built once against the
release wheel's headers and libraries (no Python bindings): the wheel is
fetched with `pip download ns3==3.44.post0 --no-deps` into target-ns3/.

Usage: python3 benches/ns3/contention.py [--sim target/release/approxnet-sim]
"""

import argparse
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "benches", "ns3")
NS3_DIR = os.path.join(ROOT, "target-ns3")
NS3_BIN = os.path.join(NS3_DIR, "contention")
SKIP_LIBS = ("visualizer", "click", "brite", "openflow", "tap-bridge", "fd-net")


def build_ns3():
    """Fetches the ns-3 wheel and compiles ns3_contention.cc (once)."""
    src = os.path.join(HERE, "ns3_contention.cc")
    if os.path.exists(NS3_BIN) and os.path.getmtime(NS3_BIN) > os.path.getmtime(src):
        return
    os.makedirs(NS3_DIR, exist_ok=True)
    wheel_root = os.path.join(NS3_DIR, "wheel", "ns3")
    if not os.path.isdir(wheel_root):
        if not glob.glob(os.path.join(NS3_DIR, "ns3-3.44.post0-*.whl")):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "ns3==3.44.post0",
                    "--no-deps",
                    "-d",
                    NS3_DIR,
                ],
                check=True,
            )
        whl = glob.glob(os.path.join(NS3_DIR, "ns3-3.44.post0-*.whl"))[0]
        zipfile.ZipFile(whl).extractall(os.path.join(NS3_DIR, "wheel"))
    lib = os.path.join(wheel_root, "lib64")
    libs = sorted(
        "-l" + f[3:-3]
        for f in os.listdir(lib)
        if f.startswith("libns3.44-") and f.endswith(".so") and not any(s in f for s in SKIP_LIBS)
    )
    subprocess.run(
        [
            "g++",
            "-std=c++20",
            "-O1",
            "-I",
            os.path.join(wheel_root, "include"),
            "-o",
            NS3_BIN,
            src,
            "-L",
            lib,
            *libs,
            "-Wl,-rpath," + lib,
        ],
        check=True,
    )


def ns3_run(*args):
    out = subprocess.run([NS3_BIN, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def ns3(*args):
    return ns3_run(*args)["flows"]


def ours(sim, toml, sets):
    with tempfile.TemporaryDirectory(prefix="anx-cont-") as out:
        cmd = [sim, "run", os.path.join(HERE, toml), "--out", out, "--quiet"]
        for s in sets:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        flows = []
        for r in csv.DictReader(open(os.path.join(out, "flows.csv"))):
            fct = r["fct_ns"]
            flows.append(
                dict(
                    job=int(r["job"]),
                    rx_bytes=int(r["received_bytes"]),
                    fct=int(fct) / 1e9 if fct else -1.0,
                    start=int(r["start_ns"]) / 1e9,
                    rtos=int(r["timeouts"]),
                    drops=int(r["drops"]),
                    retx=int(r["retx_pkts"]),
                )
            )
        return flows


def rounds_ours(flows, senders, gap_s=0.05):
    by = defaultdict(list)
    for f in flows:
        by[f["job"] // senders].append(f)
    return [
        dict(
            rtos=sum(f["rtos"] for f in v),
            done=sum(f["fct"] >= 0 for f in v),
            # from the round's start (flows may start late: jitter)
            makespan_ms=(max(f["start"] + f["fct"] for f in v) - r * gap_s) * 1e3,
            drops=sum(f["drops"] for f in v),
        )
        for r, v in sorted(by.items())
    ]


def rounds_ns3(run):
    """Per round, as rounds_ours; ns-3 counts bottleneck drops for the whole
    run only, so each round gets the mean (marked "~" when printed)."""
    flows = run["flows"]
    nrounds = 1 + max(f["round"] for f in flows)
    by = defaultdict(list)
    for f in flows:
        by[f["round"]].append(f)
    return [
        dict(
            rtos=sum(f["rtos"] for f in v),
            done=sum(f["done"] >= 0 for f in v),
            makespan_ms=(max(f["done"] for f in v) - min(f["start"] for f in v)) * 1e3,
            recoveries=sum(f["recoveries"] for f in v),
            drops_mean=run["bottleneck_drops"] / nrounds,
        )
        for _, v in sorted(by.items())
    ]


# the bench before 2026-11-24: one 150.2 KB pool for every port (the full
# bottleneck port took it whole and ACKs to the senders were refused), a
# connection per host pair, no handshake ACK
OLD_BUFFER = [
    "switch.buffer_kb=150.2",
    "switch.queue_buffer_kb=[150.2]",
    "transport.reuse_connections=true",
    "transport.handshake_ack=false",
]
JITTER_US = 2.0
SEEDS = range(1, 7)


def summarize(rounds, drops=None):
    n = len(rounds)
    return dict(
        rtos=sum(r["rtos"] for r in rounds) / n,
        rounds_with_rto=sum(1 for r in rounds if r["rtos"] > 0),
        rounds=n,
        drops=(sum(r["drops"] for r in rounds) / n) if drops is None else drops,
        makespan_ms=sum(r["makespan_ms"] for r in rounds) / n,
    )


def incast_jittered(sim, inc):
    """Every flow starts up to JITTER_US late (uniform), seeds / runs 1-6."""
    out = {}
    for iw in (10, 2):
        rounds, drops = [], 0
        for run in SEEDS:
            r = ns3_run(*inc.split(), f"--iw={iw}", f"--jitter={JITTER_US}", f"--run={run}")
            rounds += rounds_ns3(r)
            drops += r["bottleneck_drops"]
        out[f"ns-3 NewReno, SACK + PRR, IW {iw}"] = summarize(rounds, drops / len(rounds))
        for label, extra in (
            ("SACK + PRR (default)", []),
            ("no handshake ACK", ["transport.handshake_ack=false"]),
        ):
            rounds = []
            for seed in SEEDS:
                sets = [f"transport.init_cwnd_pkts={iw}", f"seed={seed}", *extra]
                sets += [f"jobs.{j}.jitter_us={JITTER_US}" for j in range(5)]
                rounds += rounds_ours(ours(sim, "incast_rounds.toml", sets), 32)
            out[f"approxnet-sim TCP, {label}, IW {iw}"] = summarize(rounds)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--sim",
        default=os.path.join(
            os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
            "release",
            "approxnet-sim",
        ),
    )
    ap.add_argument("--out", default=os.path.join(HERE, "results", "contention.json"))
    a = ap.parse_args()
    if not os.path.exists(a.sim):
        subprocess.run(["cargo", "build", "--release", "-p", "approxnet-sim"], check=True, cwd=ROOT)
    build_ns3()
    rec: dict[str, object] = dict(when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))

    # late flow
    o = ours(a.sim, "late_flow.toml", [])
    o0 = ours(a.sim, "late_flow.toml", ["transport.tsq_kb=0.0"])
    n = ns3("--scenario=late", "--starts=0,0.02", "--simtime=0.1")
    late = {
        "ns-3 3.44": [f["rx_bytes"] for f in n],
        "approxnet-sim": [f["rx_bytes"] for f in o],
        "approxnet-sim, tsq_kb = 0 (unbounded NIC)": [f["rx_bytes"] for f in o0],
    }
    rec["late_flow"] = late
    print("Late flow: two DCTCP flows, the second from 20 ms; MB received in 100 ms")
    print(f"{'':<44} {'first':>8} {'late':>8} {'late share':>11}")
    for k, v in late.items():
        print(f"{k:<44} {v[0] / 1e6:>8.2f} {v[1] / 1e6:>8.2f} {v[1] / sum(v):>11.3f}")

    # incast rounds
    inc = (
        "--scenario=incast --tcp=newreno --senders=32 --rounds=5 --gap=0.05 --bytes=65536 "
        "--qlimit=100 --simtime=0.25"
    )
    rows = []
    for iw in (10, 2):
        rows.append(
            (
                f"ns-3 NewReno, SACK, limited transmit, IW {iw}",
                rounds_ns3(ns3_run(*inc.split(), f"--iw={iw}")),
            )
        )
        rows.append(
            (
                f"ns-3 NewReno, no SACK, limited transmit, IW {iw}",
                rounds_ns3(ns3_run(*inc.split(), f"--iw={iw}", "--sack=0")),
            )
        )
        rows.append(
            (
                f"ns-3 NewReno, SACK, classic recovery, IW {iw}",
                rounds_ns3(ns3_run(*inc.split(), f"--iw={iw}", "--recovery=classic")),
            )
        )
        for label, sets in (
            ("SACK + PRR (default)", []),
            ("SACK, classic recovery", ["transport.prr=false"]),
            ("no SACK (NewReno)", ["transport.sack=false"]),
            ("no handshake ACK", ["transport.handshake_ack=false"]),
            (
                "one connection per pair, no handshake ACK",
                ["transport.handshake_ack=false", "transport.reuse_connections=true"],
            ),
            ("shared 150.2 KB buffer (the old bench)", OLD_BUFFER),
        ):
            rows.append(
                (
                    f"approxnet-sim TCP, {label}, IW {iw}",
                    rounds_ours(
                        ours(
                            a.sim, "incast_rounds.toml", [f"transport.init_cwnd_pkts={iw}", *sets]
                        ),
                        32,
                    ),
                )
            )
    rec["incast_rounds"] = {k: v for k, v in rows}
    jit = incast_jittered(a.sim, inc)
    rec["incast_jittered"] = jit
    print("\nIncast rounds: 32 -> 1, 64 KiB each, 100-packet buffer; per round (5 rounds)")
    print(
        f"{'':<58} {'RTOs per round':>18} {'drops per round':>22} {'makespan ms':>12} {'done':>5}"
    )
    for k, v in rows:
        rt = "/".join(str(r["rtos"]) for r in v)
        if "drops" in v[0]:
            dr = "/".join(str(r["drops"]) for r in v)
        else:
            dr = f"~{v[0]['drops_mean']:.0f} each"
        ms = sum(r["makespan_ms"] for r in v) / len(v)
        print(f"{k:<58} {rt:>18} {dr:>22} {ms:>12.2f} {sum(r['done'] for r in v):>5}")
    print(
        f"\nIncast rounds, starts jittered 0-{JITTER_US:g} us, seeds 1-{len(SEEDS)} x 5 rounds "
        "(means per round)"
    )
    print(f"{'':<58} {'RTOs':>6} {'rounds w/ RTO':>14} {'drops':>7} {'makespan ms':>12}")
    for k, v in jit.items():
        print(
            f"{k:<58} {v['rtos']:>6.2f} {v['rounds_with_rto']:>9}/{v['rounds']:<4} "
            f"{v['drops']:>7.1f} {v['makespan_ms']:>12.2f}"
        )
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(rec, f, indent=1)
    print(f"written {os.path.relpath(a.out, ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
