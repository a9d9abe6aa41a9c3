"""The flow study per workload mix (sim_study.py ``--mix``, tags
``_mix_{mix}`` for workload seed 7 and ``_mix_{mix}_ws{W}`` for others):
geometric-mean speed-up over per-flow max-min per scheme, over seeds 1-3,
with the mix's profiled spread (D at 25 % and 5 %) from its models CSV.

    .venv/bin/python experiments/saba/mix_report.py --workload-seeds 7 8 9
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "results" / "saba"
SCHEMES = ("app_maxmin", "saba8", "sincronia_like")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mixes", nargs="+", default=["uniform", "paper", "demand"])
    ap.add_argument("--workload-seeds", type=int, nargs="+", default=[7])
    args = ap.parse_args(argv)
    print(
        "| mix | workload seed | D(25 %) min-max | D(5 %) min-max | "
        + " | ".join(f"{s} (seeds 1 / 2 / 3: mean)" for s in SCHEMES)
        + " |"
    )
    print("|---|---|---|---|" + "---|" * len(SCHEMES))
    for mix in args.mixes:
        for ws in args.workload_seeds:
            tag = f"_mix_{mix}" + ("" if ws == 7 else f"_ws{ws}")
            sp, md = OUT / f"sim_small{tag}_speedup.csv", OUT / f"sim_small{tag}_models.csv"
            if not (sp.exists() and md.exists()):
                print(f"| {mix} | {ws} | (no run {tag}) |")
                continue
            with open(md) as f:
                models = list(csv.DictReader(f))
            d25 = [float(r["slowdown_0.25"]) for r in models]
            d05 = [float(r["slowdown_0.05"]) for r in models]
            with open(sp) as f:
                rows = list(csv.DictReader(f))
            cells = []
            for s in SCHEMES:
                v = [float(r["geomean_speedup"]) for r in rows if r["scheme"] == s]
                gm = math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
                cells.append(" / ".join(f"{x:.3f}" for x in v) + f": **{gm:.3f}**")
            print(
                f"| {mix} | {ws} | {min(d25):.2f}-{max(d25):.2f} | {min(d05):.1f}-{max(d05):.1f} | "
                + " | ".join(cells)
                + " |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
