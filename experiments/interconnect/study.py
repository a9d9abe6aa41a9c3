#!/usr/bin/env python3
"""Seed 004 §5.3-5.7 (Fig. 6, 8, 9, 10, 11): execution time of the
application skeletons on the conventional, FEC-perfect and approximate
networks of Table 1, in the simulator's flow-level mode.

A thin layer over the package: the data is
python/approxnet/studies/interconnect/study.toml, the skeletons and
scenarios approxnet.interconnect.study, the figures' plans, tables and
plots approxnet.interconnect.figures / plots (also `approxnet repro
interconnect/fig6 [--quick]`). Runs the approxnet-sim binary when one is
built (`cargo build --release -p approxnet-sim`, or set APPROXNET_SIM),
else the native module. Writes results/interconnect/study[_quick].csv,
report[_quick].md, fig{6,8,9,10,11}*.png and prints the Markdown tables.

  .venv/bin/python experiments/interconnect/study.py [--quick] [--figs 6,8,9,10,11]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from approxnet.interconnect import figures as F
from approxnet.interconnect import plots
from approxnet.interconnect import study as S

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="64 / 256 processes, fewer points (< 2 min)"
    )
    ap.add_argument("--figs", default="6,8,9,10,11", help="comma-separated figure numbers")
    ap.add_argument("--study", type=Path, default=S.STUDY_TOML)
    ap.add_argument("--sim", default=None, help="approxnet-sim binary (default: found as usual)")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "interconnect")
    ap.add_argument("--plot-only", action="store_true", help="replot and print the existing CSVs")
    args = ap.parse_args()
    suffix = "_quick" if args.quick else ""
    if args.plot_only:
        st = S.load(args.study)
        rows, quality = F.read_csv(args.out, suffix)
        plots.plot(st, rows, args.out, suffix, quality)
        print(F.report(st, rows, quality))
        return
    t0 = [time.time()]

    def done(fig: str) -> None:
        print(f"{fig}: {time.time() - t0[0]:.0f} s wall", flush=True)
        t0[0] = time.time()

    figs = [f.strip() for f in args.figs.split(",") if f.strip()]
    st, rows, quality = F.run(figs, quick=args.quick, study=args.study, sim=args.sim, on_fig=done)
    F.write(st, rows, quality, args.out, suffix)
    print(F.report(st, rows, quality))


if __name__ == "__main__":
    main()
