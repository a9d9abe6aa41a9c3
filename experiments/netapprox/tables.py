#!/usr/bin/env python3
"""Markdown tables from experiments/netapprox/results/*.csv (for docs/experiments/netapprox.md).

  python3 experiments/netapprox/tables.py fig5-quick [jct|queue|loss|runs|versus|common|bound] [CLASS]

CLASS keeps only that job class (e.g. `foreground` for fig11). A sweep over
offered loads prints one table per load. `versus` prints, per load and MSR,
ATP Full's mean JCT over the best baseline's (below 1: ATP ahead). A
scheme's mean covers only the jobs it finished, so a scheme that leaves its
slowest jobs unfinished looks faster: `common` compares the means over the
jobs that every scheme of that load and MSR finished (read from the runs'
jobs.csv under results/tmp/netapprox/<tag>/, so the sweep must have run in
this checkout). `bound` sets every scheme's mean JCT beside the JCT floor of
the same jobs (`run.py fig5bound` / `fig6bound`: the jobs sent as produced
over an ideal network, so no transport can beat it job by job), over the
jobs every scheme finished: how much room each scheme left.
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
    out = [
        "| scheme | " + " | ".join(f"MSR {m:g}" for m in msrs) + " |",
        "|---|" + "---|" * len(msrs),
    ]
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
    "queue": lambda r: (
        f"{f(r['queue_mean_bytes'], '{:.0f}')} / {f(r['queue_p99_bytes'], '{:.0f}')}"
    ),
    "loss": lambda r: (
        f"{float(r['loss_rate']) * 100:.1f} % (max job {float(r['max_job_loss']) * 100:.1f} %)"
    ),
}


def per_run(rows):
    out = [
        "| run | class | scheme | MSR | done | JCT mean us | JCT p99 us | loss |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['run']} | {r['cls']} | {r['scheme']} | {r['msr']} | {r['done']}/{r['jobs']} | "
            f"{f(r['jct_mean_us'])} | {f(r['jct_p99_us'])} | {float(r['loss_rate']) * 100:.2f} % |"
        )
    return "\n".join(out)


def versus(rows):
    """ATP Full's mean JCT over the best baseline's, per MSR (and which baseline)."""
    msrs = sorted({float(r["msr"]) for r in rows})
    out = [
        "| MSR | ATP mean us | best baseline | its mean us | ATP / best |",
        "|---|---|---|---|---|",
    ]
    for m in msrs:
        rs = [r for r in rows if float(r["msr"]) == m and r["jct_mean_us"] not in ("", "None")]
        atp = [r for r in rs if r["scheme"] == "atp-full"]
        base = [r for r in rs if not r["scheme"].startswith("atp")]
        if not atp or not base:
            continue
        b = min(base, key=lambda r: float(r["jct_mean_us"]))
        a = float(atp[0]["jct_mean_us"])
        out.append(
            f"| {m:g} | {a:.1f} | {b['scheme']} | {float(b['jct_mean_us']):.1f} | "
            f"{a / float(b['jct_mean_us']):.2f} |"
        )
    return "\n".join(out)


def finished_jct(tag, run):
    """Job key -> JCT (us) of the jobs run `run` of sweep `tag` finished."""
    root = os.path.dirname(os.path.dirname(HERE))
    path = os.path.join(root, "results", "tmp", "netapprox", tag, run, "jobs.csv")
    with open(path) as fh:
        return {
            (j["class"], j["src"], j["dst"], j["start_ns"]): float(j["jct_ns"]) / 1e3
            for j in csv.DictReader(fh)
            if j["done_ns"] not in ("", "nan")
        }


def common(tag, rows):
    """`versus` over the jobs every scheme finished (same arrivals in every run)."""
    msrs = sorted({float(r["msr"]) for r in rows})
    out = [
        "| MSR | jobs all finished | ATP mean us | best baseline | its mean us | ATP / best |",
        "|---|---|---|---|---|---|",
    ]
    for m in msrs:
        runs = {r["scheme"]: r["run"] for r in rows if float(r["msr"]) == m}
        if "atp-full" not in runs or len(runs) < 2:
            continue
        jct = {s: finished_jct(tag, run) for s, run in runs.items()}
        keys = set.intersection(*(set(v) for v in jct.values()))
        if not keys:
            continue
        mean = {s: sum(v[k] for k in keys) / len(keys) for s, v in jct.items()}
        base = {s: v for s, v in mean.items() if not s.startswith("atp")}
        b = min(base, key=lambda s: base[s])
        a = mean["atp-full"]
        out.append(f"| {m:g} | {len(keys)} | {a:.1f} | {b} | {base[b]:.1f} | {a / base[b]:.2f} |")
    return "\n".join(out)


def bound(tag, rows):
    """Per MSR: each scheme's mean JCT over the jobs every scheme finished,
    as a multiple of the floor's mean on the same jobs (1.00: no transport
    could have done better)."""
    fig, _, rest = tag.partition("-")
    root = os.path.join(os.path.dirname(os.path.dirname(HERE)), "results", "tmp", "netapprox")
    btag = f"{fig}bound" + (f"-{rest}" if rest else "")
    if not os.path.isdir(os.path.join(root, btag)):  # a tagged variant: the figure's own floor
        btag = f"{fig}bound" + ("-quick" if rest.startswith("quick") else "")
    msrs = sorted({float(r["msr"]) for r in rows})
    schemes = list(dict.fromkeys(r["scheme"] for r in rows))
    out = [
        "| MSR | jobs | floor mean us | " + " | ".join(schemes) + " |",
        "|---|---|---|" + "---|" * len(schemes),
    ]
    for m in msrs:
        runs = {r["scheme"]: r["run"] for r in rows if float(r["msr"]) == m}
        jct = {s: finished_jct(tag, run) for s, run in runs.items()}
        s0 = next(iter(runs))
        floor = finished_jct(btag, "bound" + runs[s0][len(s0) :])  # e.g. bound-0.5-L0.2
        keys = set(floor).intersection(*(set(v) for v in jct.values()))
        if not keys:
            continue
        fmean = sum(floor[k] for k in keys) / len(keys)
        cells = [f"{sum(jct[s][k] for k in keys) / len(keys) / fmean:.2f}" for s in schemes]
        out.append(f"| {m:g} | {len(keys)} | {fmean:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def by_load(rows):
    loads = []
    for r in rows:
        if r.get("load", "") not in loads:
            loads.append(r.get("load", ""))
    return [(ld, [r for r in rows if r.get("load", "") == ld]) for ld in loads]


if __name__ == "__main__":
    tag = sys.argv[1]
    kind = sys.argv[2] if len(sys.argv) > 2 else "jct"
    rows = load(tag)
    if len(sys.argv) > 3:
        rows = [r for r in rows if r["cls"] == sys.argv[3]]
    for ld, rs in by_load(rows):
        if ld:
            print(f"\nOffered load {ld}:\n")
        if kind == "runs":
            print(per_run(rs))
        elif kind == "versus":
            print(versus(rs))
        elif kind == "common":
            print(common(tag, rs))
        elif kind == "bound":
            print(bound(tag, rs))
        else:
            print(by_scheme_msr(rs, CELLS[kind]))
