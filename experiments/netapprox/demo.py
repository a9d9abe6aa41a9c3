#!/usr/bin/env python3
"""The small NetApprox comparison (seed 000 section 7.1, scaled down): k = 4
fat-tree, FBKV all-to-all at offered load 0.2, each job's 50 messages
produced over time with the trace's inter-arrival gaps; ATP Full vs
DCTCP-SS / DCTCP-ES / Aeolus-ES / UDP at MSR 0.25, 0.5 and 1.0; then the
same for FBHD (10 messages a job, exponential gaps of mean 78 us, load 0.5).
Prints the JCT / loss table and writes an SVG bar chart per workload (no
plotting library needed) next to the run directories.

  python3 experiments/netapprox/demo.py [--out results/tmp/demo]
"""

import argparse
import json
import os
import subprocess
import sys

from approxnet import binaries, repro

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCHEMES = ["atp-full", "dctcp-ss", "dctcp-es", "aeolus-es", "udp"]
MSRS = [0.25, 0.5, 1.0]
# (name, --set overrides of demo.toml)
WORKLOADS = [
    ("fbkv", []),
    (
        "fbhd",
        [
            'jobs.0.name="fbhd"',
            'jobs.0.sizes="fbhd"',
            "jobs.0.messages=10",
            'jobs.0.gaps="exp:78"',
            "jobs.0.load=0.5",
            "duration_ms=8.0",
        ],
    ),
]


def find_sim():
    return str(binaries.require("approxnet-sim", build=True))


def svg(rows, path, workload):
    w, h, pad = 900, 320, 50
    top = max(r["jct"] for r in rows if r["jct"] == r["jct"]) or 1.0
    bw = (w - 2 * pad) / (len(rows) + len(MSRS))
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="10">',
        f'<text x="{w / 2}" y="16" text-anchor="middle" font-size="13">mean JCT (us), {workload.upper()} all-to-all '
        "produced over time, k = 4 fat-tree</text>",
    ]
    colors = {
        "atp-full": "#1b7837",
        "dctcp-es": "#2166ac",
        "dctcp-ss": "#67a9cf",
        "aeolus-es": "#984ea3",
        "udp": "#b2182b",
    }
    x = float(pad)
    for m in MSRS:
        for r in [r for r in rows if r["msr"] == m]:
            v = r["jct"] if r["jct"] == r["jct"] else 0.0
            bh = (h - 2 * pad) * v / top
            out.append(
                f'<rect x="{x:.1f}" y="{h - pad - bh:.1f}" width="{bw * 0.9:.1f}" height="{bh:.1f}" fill="{colors[r["scheme"]]}"/>'
            )
            out.append(
                f'<text x="{x + bw * 0.45:.1f}" y="{h - pad - bh - 3:.1f}" text-anchor="middle">{v:.0f}</text>'
            )
            out.append(
                f'<text x="{x + bw * 0.45:.1f}" y="{h - pad + 12:.1f}" text-anchor="middle">{r["scheme"]}</text>'
            )
            x += bw
        out.append(
            f'<text x="{x - bw * len(SCHEMES) / 2:.1f}" y="{h - pad + 26:.1f}" '
            f'text-anchor="middle">MSR {m}</text>'
        )
        x += bw
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "tmp", "demo"))
    a = ap.parse_args()
    sim = find_sim()
    for workload, sets in WORKLOADS:
        rows = []
        print(f"\n{workload.upper()}")
        print(
            f"{'scheme':<10} {'MSR':>4} {'jobs done':>12} {'JCT mean us':>12} {'JCT p99 us':>11} {'loss':>7}"
        )
        for m in MSRS:
            for s in SCHEMES:
                out = os.path.join(a.out, workload, f"{s}-{m}")
                cmd = [
                    sim,
                    "run",
                    str(repro.find("netapprox/demo", repro.studies_root()).path),
                    "--out",
                    out,
                    "--quiet",
                    "--no-flows",
                    "--set",
                    f'jobs.0.scheme="{s}"',
                    "--set",
                    f"jobs.0.msr={m}",
                ]
                for x in sets:
                    cmd += ["--set", x]
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                with open(os.path.join(out, "summary.json")) as f:
                    c = json.load(f)["classes"][0]
                jct = c["jct_mean_us"] if c["jct_mean_us"] is not None else float("nan")
                p99 = c["jct_p99_us"] if c["jct_p99_us"] is not None else float("nan")
                rows.append(dict(scheme=s, msr=m, jct=jct))
                print(
                    f"{s:<10} {m:>4} {c['done']:>6}/{c['jobs']:<5} {jct:>12.1f} {p99:>11.1f} "
                    f"{c['loss_rate'] * 100:>6.2f}%",
                    flush=True,
                )
        path = os.path.join(a.out, f"jct-{workload}.svg")
        svg(rows, path, workload)
        print(
            f"plot: {os.path.relpath(path, ROOT)}; per-run CSVs under {os.path.relpath(a.out, ROOT)}/{workload}/"
        )


if __name__ == "__main__":
    sys.exit(main())
