"""Fig. 8a-b from `setups.py`'s (or `sim_setups.py`'s) JSON lines:
per-workload speed-up (mean and geometric mean over every job of that
workload) and the CDF of the setups' average speed-up (the mean over a
setup's jobs, and their geometric mean: §8.1's average), as a table on
stdout and a plot; for sim_setups.py's testbed setups also per dataset
scale and instance count, and (`--ports`) the jobs per server.

    .venv/bin/python experiments/saba/setups_report.py results/saba/setups.jsonl \\
        --plot results/saba/setups.png
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections import defaultdict
from pathlib import Path
from typing import Any


def load(paths: list[Path]) -> list[dict[str, Any]]:
    recs = []
    for p in paths:
        recs += [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
    return recs


def geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def ports(recs: list[dict[str, Any]]) -> None:
    """Jobs per server of each testbed setup, redrawn from its seed (the
    default draw of sim_setups.py --scale testbed but for its job count;
    a record the redraw does not match is an error), against the setup's speed-up: on one
    switch a server's two links are the only ports, and the apps on
    them are its jobs."""
    import numpy as np

    from approxnet.saba import flowstudy
    from approxnet.saba.setupdraw import SetupDraw, draw_setup

    def key(r: dict[str, Any]) -> tuple[int, int, str, int]:
        return (r["seed"], r["servers"], r["mix"], len(r["jobs"]))

    last: dict[tuple[int, int, str, int], int] = defaultdict(int)
    for r in recs:
        last[key(r)] = max(last[key(r)], r["setup"])
    cache = {}
    for (seed, servers, mix, jobs), n in last.items():
        rng = np.random.default_rng(seed)
        specs = flowstudy.workload_specs(20, 4, 7, mix)
        d = SetupDraw(jobs=jobs)
        cache[(seed, servers, mix, jobs)] = [
            draw_setup(rng, specs, d, servers) for _ in range(n + 1)
        ]
    xs, ys = [], []
    for r in recs:
        drawn = cache[key(r)][r["setup"]]
        if [(d.spec.name, len(d.hosts)) for d in drawn] != [
            (j["workload"], j["instances"]) for j in r["jobs"]
        ]:
            raise SystemExit(f"setup {r['setup']}: not the default draw of its seed")
        load = np.bincount([h for d in drawn for h in d.hosts], minlength=r["servers"])
        xs.append(float(load[load > 0].mean()))
        ys.append(math.log(geomean(list(r["speedup"].values()))))
    c = float(np.corrcoef(xs, ys)[0, 1]) if len(xs) > 2 else float("nan")
    print(
        f"jobs per server (servers in use): mean {sum(xs) / len(xs):.2f}, "
        f"{min(xs):.2f}-{max(xs):.2f} over setups; correlation with log speed-up {c:.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--plot", type=Path)
    ap.add_argument(
        "--ports",
        action="store_true",
        help="testbed setups (sim_setups.py --scale testbed, default draw): jobs per server",
    )
    args = ap.parse_args()
    every_rec = load(args.results)
    failed = [r for r in every_rec if "error" in r]
    recs = [
        r
        for r in every_rec
        if "error" not in r and not r.get("homogeneous") and r.get("compare", "saba") == "saba"
    ]
    if not recs:
        raise SystemExit("no random setups in the files given")
    per: dict[str, list[float]] = defaultdict(list)
    for r in recs:
        for j in r["jobs"]:
            per[j["workload"]].append(r["speedup"][j["name"]])
    avg = sorted(r["avg_speedup"] for r in recs)
    loads = [x for r in recs for x in (r["load_before"], r["load_after"])]
    print(
        f"{len(recs)} setups ({len(failed)} failed), load average {min(loads):.1f}-{max(loads):.1f}"
    )
    print("| workload | jobs | mean speed-up | geo. mean | min | max |")
    print("|---|---|---|---|---|---|")
    for w in sorted(per, key=lambda w: -geomean(per[w])):
        xs = per[w]
        print(
            f"| {w} | {len(xs)} | {sum(xs) / len(xs):.3f} | {geomean(xs):.3f} | "
            f"{min(xs):.3f} | {max(xs):.3f} |"
        )
    every = [x for xs in per.values() for x in xs]
    print(
        f"| all | {len(every)} | {sum(every) / len(every):.3f} | {geomean(every):.3f} | "
        f"{min(every):.3f} | {max(every):.3f} |"
    )
    # a 95 % interval of the geometric mean over jobs (bootstrap, seeded)
    rng = random.Random(0)
    boots = sorted(geomean(rng.choices(every, k=len(every))) for _ in range(2000))
    print(
        f"geo. mean over all jobs {geomean(every):.3f}, 95 % bootstrap interval "
        f"{boots[50]:.3f}-{boots[1949]:.3f}"
    )
    geo = sorted(geomean(list(r["speedup"].values())) for r in recs)
    for label, xs in (("average (mean over jobs)", avg), ("geo. mean over jobs", geo)):
        q = [xs[min(len(xs) - 1, int(p * len(xs)))] for p in (0.1, 0.5, 0.9)]
        slower = sum(1 for a in xs if a < 1.0)
        print(
            f"setup {label} speed-up: min {xs[0]:.3f}, p10 {q[0]:.3f}, median {q[1]:.3f}, "
            f"p90 {q[2]:.3f}, max {xs[-1]:.3f}; {slower} of {len(xs)} below 1"
        )
    by_scale: dict[float, list[float]] = defaultdict(list)
    by_size: dict[str, list[float]] = defaultdict(list)
    for r in recs:
        for j in r["jobs"]:
            x = r["speedup"][j["name"]]
            if "data_scale" in j:
                by_scale[j["data_scale"]].append(x)
            lo = 4 * ((j["instances"] - 1) // 4) + 1
            by_size[f"{lo:2d}-{lo + 3:2d}"].append(x)
    for key, xs in sorted(by_scale.items()):
        print(f"data scale {key:g}x: {len(xs)} jobs, geo. mean {geomean(xs):.3f}")
    if by_scale:
        for key2, xs in sorted(by_size.items()):
            print(f"{key2} instances: {len(xs)} jobs, geo. mean {geomean(xs):.3f}")
    if args.ports:
        ports(recs)
    with_control = [r for r in recs if r.get("htb1")]
    if with_control:
        ctl = [r["htb1"][j["name"]] / r["saba"][j["name"]] for r in with_control for j in r["jobs"]]
        base = [
            r["baseline"][j["name"]] / r["htb1"][j["name"]] for r in with_control for j in r["jobs"]
        ]
        print(
            f"control ({len(with_control)} setups, {len(ctl)} jobs): htb1 / saba geo. mean "
            f"{geomean(ctl):.3f} (the weights), baseline / htb1 {geomean(base):.3f} (the qdiscs)"
        )
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.6))
        names = sorted(per, key=lambda w: -geomean(per[w]))
        a.bar(names, [geomean(per[w]) for w in names], color="tab:blue")
        a.axhline(1.0, color="grey", lw=0.8)
        a.tick_params(axis="x", labelrotation=90 if len(names) > 10 else 0)
        a.set_ylabel("speed-up over baseline (geo. mean)")
        a.set_title("(a) per workload")
        ys = [(i + 1) / len(avg) for i in range(len(avg))]
        b.step(avg, ys, where="post", label="mean over jobs")
        b.step(geo, ys, where="post", label="geo. mean over jobs")
        b.legend(loc="lower right", fontsize=8)
        b.axvline(1.0, color="grey", lw=0.8)
        b.set_xlabel("average speed-up of a setup")
        b.set_ylabel("CDF")
        b.set_title(f"(b) {len(avg)} random setups")
        fig.tight_layout()
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.plot, dpi=120)


if __name__ == "__main__":
    main()
