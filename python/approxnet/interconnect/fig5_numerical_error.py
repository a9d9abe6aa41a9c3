"""Seed 004 Fig. 5: mean error of doubles sent once through the channel at
BER 1e-5 vs protection level, measured (10 million standard-normal doubles,
one pass each) beside the bit-by-bit expectation.

Writes OUT/fig5_numerical_error.{csv,png} and prints the
table as Markdown.

  .venv/bin/python -m approxnet.interconnect.fig5_numerical_error \
      [--n 10000000] [--ber 1e-5] [--seed 1] [--step 1] [--plot-only]

OUT: ``--out``, default ``results/interconnect`` under the current
directory; ``approxnet repro interconnect/fig5 [--quick]`` runs it too.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from approxnet.interconnect.quality import expected_error, numerical_error  # noqa: E402

COLUMNS = ["level", "flips", "changed", "non_finite", "mean_abs", "mean_rel", "expected_abs",
           "expected_rel"]  # fmt: skip

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Runs the figure (command-line arguments as in the module doc)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--ber", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--step", type=int, default=1, help="level step")
    ap.add_argument("--out", type=Path, default=Path("results") / "interconnect")
    ap.add_argument("--plot-only", action="store_true", help="plot the existing CSV")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    csv_path = args.out / "fig5_numerical_error.csv"
    if not args.plot_only:
        measure(args, csv_path)
    plot(args, csv_path)


def measure(args: argparse.Namespace, csv_path: Path) -> None:
    x = np.random.default_rng(args.seed).standard_normal(args.n)
    levels = list(range(0, 65, args.step))
    expect = {lv: (a, r) for lv, a, r in expected_error(x[:1_000_000], levels, args.ber)}
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        print(f"n = {args.n}, BER = {args.ber:g}, seed = {args.seed}")
        print(
            "| level | flips | non-finite | mean abs error | expected | mean rel error | expected |"
        )
        print("|---|---|---|---|---|---|---|")
        for lv in levels:
            e = numerical_error(x, lv, args.ber, seed=args.seed * 1000 + lv)
            ea, er = expect[lv]
            w.writerow([e.level, e.flips, e.changed, e.non_finite, e.mean_abs, e.mean_rel, ea, er])
            print(
                f"| {e.level} | {e.flips} | {e.non_finite} | {e.mean_abs:.3g} | {ea:.3g} "
                f"| {e.mean_rel:.3g} | {er:.3g} |"
            )


def plot(args: argparse.Namespace, csv_path: Path) -> None:
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    lv = [int(r["level"]) for r in rows]

    def col(name: str) -> list[float]:
        # log10 on a linear axis: matplotlib's log axis fails near 1e308;
        # a zero error (level 64) is drawn at -30
        return [float(np.log10(max(float(r[name]), 1e-30))) for r in rows]

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(lv, col("mean_abs"), "o", ms=3, label="mean abs (measured)")
    ax.plot(lv, col("expected_abs"), "-", lw=1, label="mean abs (expected)")
    ax.plot(lv, col("mean_rel"), "s", ms=3, mfc="none", label="mean rel (measured)")
    ax.plot(lv, col("expected_rel"), "--", lw=1, label="mean rel (expected)")
    ax.axvline(12, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("protection level (bits from the MSB)")
    ax.set_ylabel("log10 mean error per double")
    ax.set_title(f"doubles through the channel, BER {args.ber:g} (seed 004 Fig. 5)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out / "fig5_numerical_error.png", dpi=120)


if __name__ == "__main__":
    main()
