#!/usr/bin/env python3
"""Two approxnet-sim builds on the same flows, interleaved, several rounds.

For comparing a solver change on a shared machine: each round runs build A
then build B on the case of benches/sim/fluid_vs_simgrid.py (128-host
leaf-spine, 10,000 flows of 100 KB - 1 MB, ``once``: all at t = 0, or
``poisson``), and records each process's user + system CPU time; reported
are the least and the median over the rounds per build, their ratio, the
1-minute load average before and after, and the largest relative
difference of any flow's completion time between the builds.

Usage: python3 benches/sim/fluid_ab.py OLD_BIN NEW_BIN [--case once]
       [--rounds 7] [--out results/fluid_ab.csv]
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fluid_flows  # noqa: E402
from fluid_vs_simgrid import SCENARIO, read_csv, timed  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--case", default="once", choices=["once", "poisson"])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", default=str(ROOT / "results/fluid_ab.csv"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fluid-ab-") as tmp:
        work = Path(tmp)
        rows = fluid_flows.flows(128, 10_000, 10.0, 0.5, a.case, 1)
        fluid_flows.write(str(work / "flows.csv"), rows)
        scen = SCENARIO.format(
            case=a.case,
            spines=8,
            leaves=8,
            per_leaf=16,
            gbps=10.0,
            delay_us=0.0,
            flows=work / "flows.csv",
        )
        (work / "s.toml").write_text(scen)
        load0 = os.getloadavg()[0]
        cpu: dict[str, list[float]] = {"old": [], "new": []}
        for _ in range(a.rounds):
            for name, binary in (("old", a.old), ("new", a.new)):
                out = work / name
                cmd = [binary, "run", str(work / "s.toml"), "--out", str(out), "--quiet"]
                cpu[name].append(timed(cmd)[1])
        fct = {
            name: {r["flow"]: float(r["fct_ns"]) for r in read_csv(work / name / "flows.csv")}
            for name in ("old", "new")
        }
    diff = max(abs(fct["new"][k] - v) / v for k, v in fct["old"].items() if v > 0)
    row = {
        "case": a.case,
        "rounds": a.rounds,
        "old": a.old,
        "new": a.new,
        "cpu_min_old": min(cpu["old"]),
        "cpu_min_new": min(cpu["new"]),
        "cpu_median_old": statistics.median(cpu["old"]),
        "cpu_median_new": statistics.median(cpu["new"]),
        "speedup_min": round(min(cpu["old"]) / min(cpu["new"]), 3),
        "speedup_median": round(statistics.median(cpu["old"]) / statistics.median(cpu["new"]), 3),
        "fct_rel_diff_max": diff,
        "load_avg_1min": f"{load0:.1f}-{os.getloadavg()[0]:.1f}",
    }
    print(row)
    out_path = Path(a.out)
    new_file = not out_path.exists()
    with open(out_path, "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(row))
        if new_file:
            w.writeheader()
        w.writerow(row)
    print(f"appended to {out_path}")


if __name__ == "__main__":
    main()
