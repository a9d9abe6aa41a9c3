"""Fig. 9a-b from `setups.py --homogeneous` JSON lines: per cell (hosts,
dataset size, degree) the speed-up of each workload over the baseline,
and beside it the noise floor — the same cell run as baseline vs
baseline (`--modes baseline,baseline2`).

Per workload: the geometric mean over the cell's run pairs and their
range. All workloads: the geometric mean over every job of the cell and
a 95 % interval from the spread of the run pairs' own geometric means
(Student t on the logs, n - 1 degrees of freedom), so drift between
repetitions widens it. Noise: the standard deviation of log speed-up
over every job of the noise-floor cell, as a factor (exp(sd)).

    .venv/bin/python experiments/saba/fig9_report.py results/saba/fig9ab.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

#: two-sided 95 % Student t quantiles by degrees of freedom
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}

Cell = tuple[int, float, int, str]


def load(paths: list[Path]) -> list[dict[str, Any]]:
    recs = []
    for p in paths:
        recs += [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
    return [r for r in recs if r.get("homogeneous") and "error" not in r]


def cell_of(r: dict[str, Any]) -> Cell:
    """(hosts, dataset size, degree, compared run) of a record."""
    return (r["hosts"], r["jobs"][0]["scale"], r["degree"], r.get("compare", "saba"))


def geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def interval(pair_means: list[float]) -> tuple[float, float]:
    """95 % interval of the geometric mean from the run pairs' own
    geometric means; (nan, nan) with fewer than two pairs."""
    n = len(pair_means)
    if n < 2:
        return (math.nan, math.nan)
    logs = [math.log(x) for x in pair_means]
    m, sd = statistics.fmean(logs), statistics.stdev(logs)
    h = T95.get(n - 1, 1.96) * sd / math.sqrt(n)
    return (math.exp(m - h), math.exp(m + h))


def pair_means(recs: list[dict[str, Any]], compare: str) -> list[float]:
    """Every run pair's geometric mean over its jobs, over all cells."""
    return [
        geomean(list(r["speedup"].values())) for r in recs if r.get("compare", "saba") == compare
    ]


def pairs_needed(sd_log: float, half: float) -> int:
    """Run pairs a cell needs for a 95 % interval of +-`half` (a factor,
    e.g. 1.1) when one pair's log geometric mean has sd `sd_log`
    (normal approximation)."""
    if not (sd_log >= 0 and half > 1):
        raise ValueError(f"pairs_needed: sd {sd_log} must be >= 0 and half {half} > 1")
    return max(2, math.ceil((1.96 * sd_log / math.log(half)) ** 2))


def summarize(recs: list[dict[str, Any]]) -> dict[Cell, dict[str, Any]]:
    """Per cell: per-workload speed-ups, all jobs, the pairs' means."""
    by: dict[Cell, list[dict[str, Any]]] = defaultdict(list)
    for r in recs:
        by[cell_of(r)].append(r)
    out = {}
    for cell, rs in by.items():
        per: dict[str, list[float]] = defaultdict(list)
        for r in rs:
            for j in r["jobs"]:
                per[j["workload"]].append(r["speedup"][j["name"]])
        every = [x for xs in per.values() for x in xs]
        pair_means = [geomean(list(r["speedup"].values())) for r in rs]
        logs = [math.log(x) for x in every]
        out[cell] = {
            "pairs": len(rs),
            "per": dict(per),
            "geo": geomean(every),
            "ci": interval(pair_means),
            "noise": math.exp(statistics.stdev(logs)) if len(logs) > 1 else math.nan,
            "load": (
                min(min(r["load_before"], r["load_after"]) for r in rs),
                max(max(r["load_before"], r["load_after"]) for r in rs),
            ),
            "wall_s": sum(r["wall_s"] for r in rs),
        }
    return out


def table(summary: dict[Cell, dict[str, Any]], workloads: list[str]) -> list[str]:
    """Markdown rows: one per cell, Saba and its noise floor side by side."""
    head = " | ".join(workloads)
    lines = [
        f"| hosts | size | deg. | run | pairs | {head} | geo. mean [95 %] | noise (sd) | load |",
        "|---" * (8 + len(workloads)) + "|",
    ]
    for cell in sorted(summary, key=lambda c: (c[0], c[1], c[2], c[3] != "saba")):
        s = summary[cell]
        hosts, scale, degree, cmp = cell
        ws = []
        for w in workloads:
            xs = s["per"].get(w, [])
            ws.append(f"{geomean(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})" if xs else "-")
        lo, hi = s["ci"]
        lines.append(
            f"| {hosts} | {scale:g}x | {degree} | {'Saba' if cmp == 'saba' else 'base/base'} | "
            f"{s['pairs']} | {' | '.join(ws)} | {s['geo']:.3f} [{lo:.2f}-{hi:.2f}] | "
            f"x{s['noise']:.2f} | {s['load'][0]:.1f}-{s['load'][1]:.1f} |"
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--workloads", default="shuffle,iterative,lr,join,wordcount")
    args = ap.parse_args()
    recs = load(args.results)
    if not recs:
        raise SystemExit("no homogeneous setups in the files given")
    summary = summarize(recs)
    print("\n".join(table(summary, args.workloads.split(","))))
    hours = sum(s["wall_s"] for s in summary.values()) / 3600
    print(f"{len(recs)} run pairs, {hours:.2f} h of runs")
    for cmp, label in (("saba", "Saba / baseline"), ("baseline2", "baseline / baseline")):
        ms = pair_means(recs, cmp)
        if len(ms) < 2:
            continue
        lo, hi = interval(ms)
        sd = statistics.stdev(math.log(x) for x in ms)
        print(
            f"all cells, {label}: {len(ms)} pairs, geo. mean {geomean(ms):.3f} "
            f"[{lo:.3f}-{hi:.3f}], pairs from {min(ms):.2f} to {max(ms):.2f}, "
            f"sd of a pair's log geo. mean {sd:.3f} (x{math.exp(sd):.2f}); "
            f"pairs a cell needs for +-10 %: {pairs_needed(sd, 1.1)}, "
            f"+-5 %: {pairs_needed(sd, 1.05)}"
        )


if __name__ == "__main__":
    main()
