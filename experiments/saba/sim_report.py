"""Tables and plots of the flow-level study (experiments/saba/sim_study.py):
per scheme the geometric-mean speed-up over per-flow max-min, per seed
and overall (Fig. 10, 11a, 11b style), and per workload against its
profiled sensitivity (Fig. 10's bars).

    .venv/bin/python experiments/saba/sim_report.py --scale small --tags '' _s23 _s23q
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "results" / "saba"


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", default="small")
    ap.add_argument(
        "--tags", nargs="*", default=[""], help="output name suffixes of the runs to merge"
    )
    args = ap.parse_args(argv)
    name = f"sim_{args.scale}"
    rows = []
    for tag in args.tags:
        with open(OUT / f"{name}{tag}_jct.csv") as f:
            rows += list(csv.DictReader(f))
    with open(OUT / f"{name}_models.csv") as f:
        models = {r["workload"]: r for r in csv.DictReader(f)}
    jct: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for r in rows:
        jct[(r["seed"], r["scheme"])][r["workload"]] = float(r["jct_ns"])
    seeds = sorted({s for s, _ in jct}, key=int)
    schemes = [s for s in dict.fromkeys(sc for _, sc in jct) if s != "flow_maxmin"]
    per_app: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    print(f"{name}: geometric-mean speed-up over per-flow max-min")
    print("| scheme | " + " | ".join(f"seed {s}" for s in seeds) + " | all seeds |")
    print("|---|" + "---|" * (len(seeds) + 1))
    summary = []
    for sc in schemes:
        cells = []
        allsp = []
        for s in seeds:
            base, got = jct.get((s, "flow_maxmin")), jct.get((s, sc))
            if not base or not got or got.keys() != base.keys():
                cells.append("-")
                continue
            sp = [base[w] / got[w] for w in base]
            for w in base:
                per_app[sc][w].append(base[w] / got[w])
            allsp += sp
            cells.append(f"{geomean(sp):.3f}")
        if allsp:
            summary.append((sc, geomean(allsp)))
        print(f"| {sc} | " + " | ".join(cells) + f" | {geomean(allsp):.3f} |" if allsp else "")
    shown = [sc for sc in ("app_maxmin", "saba8", "saba_unlimited") if sc in per_app]
    print("\nper workload (geo. mean over seeds), by profiled slowdown at 5 %")
    print("| workload | compute ms | comm ms | D(5 %) | R² k=3 | " + " | ".join(shown) + " |")
    print("|---|---|---|---|---|" + "---|" * len(shown))
    order = sorted(models, key=lambda w: -float(models[w]["slowdown_0.05"]))
    for w in order:
        m = models[w]
        cells = [f"{geomean(per_app[sc][w]):.3f}" if per_app[sc][w] else "-" for sc in shown]
        print(
            f"| {w} | {float(m['compute_ms']):.2f} | {float(m['comm_ms']):.2f} | "
            f"{float(m['slowdown_0.05']):.2f} | {float(m['r2_k3']):.3f} | "
            + " | ".join(cells)
            + " |"
        )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - plots are optional
        return 0
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.8))
    a1.bar([s for s, _ in summary], [v for _, v in summary], color="tab:blue")
    a1.axhline(1.0, color="k", lw=0.8)
    a1.set_ylabel("speed-up over per-flow max-min (geo. mean)")
    a1.tick_params(axis="x", rotation=60)
    for sc in shown:
        a2.plot(
            [float(models[w]["slowdown_0.05"]) for w in order],
            [geomean(per_app[sc][w]) for w in order],
            "o",
            label=sc,
        )
    a2.set_xscale("log")
    a2.axhline(1.0, color="k", lw=0.8)
    a2.set_xlabel("profiled slowdown at 5 % share")
    a2.set_ylabel("speed-up")
    a2.legend()
    fig.tight_layout()
    fig.savefig(OUT / f"{name}.png", dpi=110)
    print(f"\nwrote {OUT / f'{name}.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
