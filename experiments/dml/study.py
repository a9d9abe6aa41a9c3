"""Seed 001 §3.1 (001_254954cce2026753.txt) in approxnet's simulator, the
whole study at once: every model, scheme and collective of
:mod:`approxnet.dml` (the scenarios and models ship with the package), with
seeds, background loads and compute scales swept. One figure at a time:
``approxnet repro dml-table1 | dml-fig3 | dml-fig4 [--quick]``.

Writes into --out (default results/dml/full, quick: results/dml/quick):
runs.csv (one row per run), transfers_mlp.csv (every MLP transfer, Fig.
4c), table1.md / fig3.md / fig4.md / fig4c.md / tail.md (the markdown
tables docs/experiments/dml.md embeds), speedups.csv and table1.png,
fig3.png, fig4.png, fig4c.png; with several background loads, one set per
load in load=<L>/.

    .venv/bin/python experiments/dml/study.py --quick
    .venv/bin/python experiments/dml/study.py --seeds 1,2 --loads 0.29
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from approxnet import dml


def floats(s: str) -> list[float]:
    return [float(x) for x in s.split(",")]


def ints(s: str) -> list[int]:
    return [int(x) for x in s.split(",")]


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="2 x 4 leaf-spine, 2 iterations")
    p.add_argument("--only-models", type=lambda s: s.split(","), help="e.g. mlp,cnn")
    keys = ",".join(s.key for s in dml.SCHEMES)
    p.add_argument("--schemes", type=lambda s: s.split(","), help=f"subset of {keys}")
    p.add_argument("--collectives", type=lambda s: s.split(","), default=list(dml.COLLECTIVES))
    p.add_argument("--seeds", type=ints, default=[1])
    p.add_argument("--loads", type=floats, help="background host load (default: the scenario's)")
    p.add_argument("--iterations", type=int, help="per job (default 8, quick 2)")
    p.add_argument(
        "--compute-scale", type=floats, default=[1.0], help="multiplies every compute time"
    )
    p.add_argument("--workers", type=int, default=1, help="simulator processes in parallel")
    p.add_argument("--out", type=Path)
    p.add_argument(
        "--analyse-only", action="store_true", help="tables and plots from --out/runs.csv"
    )
    a = p.parse_args(argv)
    a.out = a.out or Path("results/dml") / ("quick" if a.quick else "full")
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    t0 = time.time()
    if a.analyse_only:
        runs = pd.read_csv(a.out / "runs.csv")
        transfers = pd.read_csv(a.out / "transfers_mlp.csv")
    else:
        plan = dml.plan(
            schemes=a.schemes,
            model_keys=a.only_models,
            collectives=a.collectives,
            quick=a.quick,
            iterations=a.iterations,
            seeds=a.seeds,
            loads=a.loads or (None,),
            compute_scales=a.compute_scale,
        )
        n = [0]

        def step(label: str) -> None:
            n[0] += 1
            print(f"[{n[0]}/{len(plan)}] {label}: {time.time() - t0:.0f} s", file=sys.stderr)

        runs, transfers = dml.run(plan, a.out, workers=a.workers, on_run=step)
    done = runs.dropna(subset=["iter_us"]) if "iter_us" in runs else runs.iloc[:0]
    if len(done) < len(runs):
        print(f"{len(runs) - len(done)} runs did not finish their iterations", file=sys.stderr)
    # tables average over seeds; each background load gets its own
    loads = list(dict.fromkeys(runs.load))
    for load in loads:
        d = a.out if len(loads) == 1 else a.out / f"load={load:g}"
        d.mkdir(parents=True, exist_ok=True)
        sel = transfers[transfers.load.astype(str) == str(load)]
        dml.report("dml-all", runs[runs.load.astype(str) == str(load)], sel, d)
    print(f"wrote {a.out} in {time.time() - t0:.0f} s wall", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
