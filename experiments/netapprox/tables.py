#!/usr/bin/env python3
"""Markdown tables from experiments/netapprox/results/*.csv (for docs/experiments/netapprox.md).

  python3 experiments/netapprox/tables.py fig5-quick [jct|queue|loss|runs] [CLASS]

CLASS keeps only that job class (e.g. `foreground` for fig11).
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(tag):
    with open(os.path.join(HERE, "results", f"{tag}.csv")) as f:
        return list(csv.DictReader(f))


def by_scheme_msr(rows, cell):
    schemes, msrs = [], sorted({float(r["msr"]) for r in rows})
    for r in rows:
        if r["scheme"] not in schemes:
            schemes.append(r["scheme"])
    out = ["| scheme | " + " | ".join(f"MSR {m:g}" for m in msrs) + " |", "|---|" + "---|" * len(msrs)]
    for s in schemes:
        cells = []
        for m in msrs:
            rs = [x for x in rows if x["scheme"] == s and float(x["msr"]) == m]
            cells.append(cell(rs[0]) if rs else "")
        out.append(f"| {s} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def f(x, fmt="{:.1f}"):
    try:
        return fmt.format(float(x))
    except ValueError:
        return "n/a"


CELLS = {
    "jct": lambda r: f"{f(r['jct_mean_us'])} / {f(r['jct_p99_us'])}",
    "queue": lambda r: f"{f(r['queue_mean_bytes'], '{:.0f}')} / {f(r['queue_p99_bytes'], '{:.0f}')}",
    "loss": lambda r: f"{float(r['loss_rate']) * 100:.1f} % (max job {float(r['max_job_loss']) * 100:.1f} %)",
}


def per_run(rows):
    out = ["| run | class | scheme | MSR | done | JCT mean us | JCT p99 us | loss |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['run']} | {r['cls']} | {r['scheme']} | {r['msr']} | {r['done']}/{r['jobs']} | "
                   f"{f(r['jct_mean_us'])} | {f(r['jct_p99_us'])} | {float(r['loss_rate']) * 100:.2f} % |")
    return "\n".join(out)


if __name__ == "__main__":
    tag = sys.argv[1]
    kind = sys.argv[2] if len(sys.argv) > 2 else "jct"
    rows = load(tag)
    if len(sys.argv) > 3:
        rows = [r for r in rows if r["cls"] == sys.argv[3]]
    print(per_run(rows) if kind == "runs" else by_scheme_msr(rows, CELLS[kind]))
