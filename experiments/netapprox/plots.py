#!/usr/bin/env python3
"""SVG plots of the NetApprox results (no plotting library needed): mean JCT
vs MSR per scheme, log scale, one file per figure (per offered load, for a
sweep over loads: <tag>-L<load>.svg), next to the results CSVs.

  python3 experiments/netapprox/plots.py fig5-quick fig6-quick fig9-quick fig11 fig12-quick
"""

import csv
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COLORS = ["#1b7837", "#2166ac", "#67a9cf", "#b2182b", "#ef8a62", "#762a83", "#999999", "#e7298a"]


def plot_all(tag):
    path = os.path.join(HERE, "results", f"{tag}.csv")
    with open(path) as f:
        # the background classes of fig10 / fig11 are not plotted
        rows = [r for r in csv.DictReader(f) if r["msr"] and r["cls"] != "background"]
    loads = sorted({r.get("load", "") for r in rows})
    if loads == [""]:
        return [plot(tag, rows)]
    return [plot(f"{tag}-L{ld}", [r for r in rows if r.get("load", "") == ld]) for ld in loads]


def plot(tag, rows):
    schemes = []
    for r in rows:
        if r["scheme"] not in schemes:
            schemes.append(r["scheme"])
    msrs = sorted({float(r["msr"]) for r in rows})
    vals = [float(r["jct_mean_us"]) for r in rows if r["jct_mean_us"] not in ("", "None", "nan")]
    vals = [v for v in vals if v == v and v > 0]
    if not vals:
        return None
    lo, hi = math.log10(min(vals)) - 0.1, math.log10(max(vals)) + 0.1
    w, h, pad = 640, 360, 60

    def X(i):
        return pad + (w - 2 * pad) * (i / max(1, len(msrs) - 1))

    def Y(v):
        return h - pad - (h - 2 * pad) * (math.log10(v) - lo) / (hi - lo)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="10">',
        f'<text x="{w / 2}" y="16" text-anchor="middle" font-size="13">{tag}: mean JCT (us, log scale) vs MSR</text>',
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
    ]
    for i, m in enumerate(msrs):
        out.append(f'<text x="{X(i):.1f}" y="{h - pad + 14}" text-anchor="middle">{m:g}</text>')
    for e in range(math.ceil(lo), math.floor(hi) + 1):
        out.append(f'<text x="{pad - 6}" y="{Y(10**e) + 3:.1f}" text-anchor="end">{10**e:g}</text>')
        out.append(
            f'<line x1="{pad}" y1="{Y(10**e):.1f}" x2="{w - pad}" y2="{Y(10**e):.1f}" stroke="#ddd"/>'
        )
    for k, s in enumerate(schemes):
        c = COLORS[k % len(COLORS)]
        pts = []
        for i, m in enumerate(msrs):
            rs = [r for r in rows if r["scheme"] == s and float(r["msr"]) == m]
            if rs and rs[0]["jct_mean_us"] not in ("", "None") and float(rs[0]["jct_mean_us"]) > 0:
                v = float(rs[0]["jct_mean_us"])
                if v == v:
                    pts.append((X(i), Y(v)))
        if pts:
            out.append(
                f'<polyline fill="none" stroke="{c}" stroke-width="2" points="'
                + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
                + '"/>'
            )
            out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{c}"/>' for x, y in pts]
        out.append(
            f'<rect x="{w - pad + 4}" y="{pad + 14 * k - 8}" width="10" height="3" fill="{c}"/>'
        )
        out.append(f'<text x="{w - pad + 16}" y="{pad + 14 * k - 4}" font-size="9">{s}</text>')
    out.append(
        f'<text x="{w / 2}" y="{h - 20}" text-anchor="middle">MSR (missing point: no job finished)</text>'
    )
    out.append("</svg>")
    svg = os.path.join(HERE, "results", f"{tag}.svg")
    with open(svg, "w") as f:
        f.write("\n".join(out))
    return svg


if __name__ == "__main__":
    for t in sys.argv[1:]:
        for p in plot_all(t):
            print(f"{t}: {os.path.relpath(p) if p else 'nothing to plot'}")
