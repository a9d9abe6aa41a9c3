#!/usr/bin/env python3
"""Cache misses per packet-hop of approxnet-sim on growing fat-trees (cachegrind).

The VM exposes no hardware cache counters, so this counts simulated ones:
valgrind's cachegrind with a 48 KiB L1d and a 1 MiB last level (the
per-core L2 of the EPYC host; the shared 32 MiB L3 is not modelled) on the
scaling bench's workload (benches/sim/scaling.py), shortened to 0.1 ms
simulated so k = 16 takes ~2 minutes. Counts are deterministic: the same
binary and scenario give the same figures on a loaded or a quiet machine,
which wall time on this shared VM does not. They cover the whole process
(topology, routes, output), not only the event loop. Cachegrind models no
hardware prefetch, so streaming reads (the event list's buckets) count as
misses that a real core mostly hides.

Usage: python3 benches/sim/hop_misses.py --bins OLD,NEW [--ks 8,16]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scaling  # noqa: E402

FIGURES = {
    "instr": r"I\s+refs:\s+([\d,]+)",
    "d1_miss": r"D1\s+misses:\s+([\d,]+)",
    "l2_miss": r"LLd misses:\s+([\d,]+)",
}


def measure(binary: str, k: int) -> dict[str, float]:
    """Runs one binary under cachegrind at fat-tree size k; returns figures per hop."""
    text = scaling.SCENARIO.format(k=k).replace("duration_ms = 0.3", "duration_ms = 0.1")
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "s.toml")
        with open(path, "w") as f:
            f.write(text + scaling.WORKLOAD)
        cmd = [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=yes",
            "--D1=49152,12,64",
            "--LL=1048576,16,64",
            f"--cachegrind-out-file={os.path.join(out, 'cg.out')}",
            binary,
            "run",
            path,
            "--out",
            out,
            "--quiet",
            "--no-flows",
        ]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
        with open(os.path.join(out, "summary.json")) as f:
            hops = json.load(f)["hops"]
    row: dict[str, float] = {"hops": hops}
    for name, pat in FIGURES.items():
        m = re.search(pat, r.stderr)
        if m is None:
            sys.exit(f"no {name} in cachegrind's output:\n{r.stderr}")
        row[name] = int(m.group(1).replace(",", "")) / hops
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bins", required=True, help="comma-separated binaries to compare")
    ap.add_argument("--ks", default="8,16")
    a = ap.parse_args()
    print(
        "| k | binary | packet-hops | instructions / hop | L1d misses / hop | 1 MiB L2 misses / hop |"
    )
    print("|---|---|---|---|---|---|")
    for k in [int(x) for x in a.ks.split(",")]:
        for b in a.bins.split(","):
            r = measure(b, k)
            print(
                f"| {k} | {b} | {r['hops']} | {r['instr']:.0f} | {r['d1_miss']:.1f} | {r['l2_miss']:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
