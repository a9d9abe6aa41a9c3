"""FBKV above the swept loads (0.1-0.3): ATP, DCTCP-ES / SS and pFabric-ES
against the JCT floor of the same jobs (quick size; the floor as in
`approxnet.figures`' fig5bound: UDP over links 100x faster, load / 100).

  .venv/bin/python experiments/netapprox/fbkv_loads.py [--loads 0.5,0.7] [--msrs 0.25,0.5]

Prints each scheme's mean JCT over the floor's on the jobs all finished.
"""

import argparse
import csv
import os
import subprocess
import tomllib

from approxnet import binaries, figures, repro

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCHEMES = ("atp-full", "dctcp-es", "dctcp-ss", "pfabric-es")


def run(sim, study, sets, out):
    args = [sim, "run", study, "--quiet", "--out", out]
    for s in (*figures.QUICK, *sets):
        args += ["--set", s]
    subprocess.run(args, check=True)
    with open(os.path.join(out, "jobs.csv")) as f:
        return {
            (j["src"], j["dst"], j["start_ns"]): float(j["jct_ns"]) / 1e3
            for j in csv.DictReader(f)
            if j["done_ns"] not in ("", "nan")
        }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loads", default="0.5,0.7")
    ap.add_argument("--msrs", default="0.25,0.5")
    a = ap.parse_args()
    sim = str(binaries.build("approxnet-sim"))
    study = str(repro.find("netapprox/fig5_fbkv", repro.studies_root()).path)
    tmp = os.path.join(ROOT, "results", "tmp", "netapprox", "fbkv-loads")
    k = figures.BOUND_SPEEDUP
    with open(study, "rb") as f:
        gbps = tomllib.load(f)["topology"]["host_gbps"]
    print("| load | MSR | jobs | floor mean us | " + " | ".join(SCHEMES) + " |")
    print("|---|---|---|---|" + "---|" * len(SCHEMES))
    for load in (float(x) for x in a.loads.split(",")):
        for m in (float(x) for x in a.msrs.split(",")):
            jct = {}
            for s in SCHEMES:
                sets = [f'jobs.0.scheme="{s}"', f"jobs.0.msr={m}", f"jobs.0.load={load}"]
                if s.startswith("pfabric"):
                    sets.append('switch.buffer_preset="pfabric"')
                jct[s] = run(sim, study, sets, os.path.join(tmp, f"{s}-{m}-L{load}"))
            floor_sets = [
                'jobs.0.scheme="udp"',
                f"topology.host_gbps={gbps * k:g}",
                "switch.buffer_kb=1000000.0",
                f"jobs.0.msr={m}",
                f"jobs.0.load={load / k:g}",
            ]
            floor = run(sim, study, floor_sets, os.path.join(tmp, f"bound-{m}-L{load}"))
            keys = set(floor).intersection(*(set(v) for v in jct.values()))
            fm = sum(floor[x] for x in keys) / len(keys)
            cells = [f"{sum(jct[s][x] for x in keys) / len(keys) / fm:.3f}" for s in SCHEMES]
            print(f"| {load:g} | {m:g} | {len(keys)} | {fm:.1f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
