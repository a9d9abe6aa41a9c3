"""Seed 004 §5.4 (Fig. 7 and CG at level 16) on real numbers: CG, a 2-D
FFT and K-means run as 8 simulated processes whose exchanged arrays cross
the bit-error channel (approxnet.interconnect) at BER 1e-5, against an
error-free run, for each protection level and several seeds.

Writes OUT/fig7_quality.{csv,png} and prints Markdown.

  .venv/bin/python -m approxnet.interconnect.fig7_quality [--seeds 3] [--quick]

OUT: ``--out``, default ``results/interconnect`` under the current
directory; ``approxnet repro interconnect/fig7 [--quick]`` runs it too.
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from approxnet.interconnect import kernels as K  # noqa: E402
from approxnet.interconnect.exchange import Channel  # noqa: E402

__all__ = ["main"]


@dataclass
class Row:
    kernel: str
    level: int
    metric: str
    values: list[float]


def fft_error(z: np.ndarray, ref: np.ndarray, level: int, ber: float, seed: int) -> float:
    """Mean absolute error of the FFT over the mean magnitude of the
    error-free result (a non-finite output counts as infinite error)."""
    y = K.fft2(z, Channel(ber, level, seed=seed))
    if not np.all(np.isfinite(y)):
        return float("inf")
    return float(np.abs(y - ref).mean() / np.abs(ref).mean())


def main(argv: list[str] | None = None) -> None:
    """Runs the figure (command-line arguments as in the module doc)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--ber", type=float, default=1e-5)
    ap.add_argument("--quick", action="store_true", help="smaller problems, fewer levels")
    ap.add_argument("--plot-only", action="store_true", help="plot the existing CSV")
    ap.add_argument("--out", type=Path, default=Path("results") / "interconnect")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.plot_only:
        plot(args.out, args.ber)
        return
    seeds = list(range(1, args.seeds + 1))
    ber = args.ber
    n_fft, n_km, n_cg = (256, 50_000, 512) if args.quick else (1024, 500_000, 1024)
    rows: list[Row] = []

    # FFT (complex128, the level applies to each part)
    rng = np.random.default_rng(1)
    z = rng.standard_normal((n_fft, n_fft)) + 1j * rng.standard_normal((n_fft, n_fft))
    ref = K.fft2(z, Channel(ber, None))
    for lv in range(0, 65, 8 if args.quick else 4):
        rows.append(
            Row("fft", lv, "mean_rel_error", [fft_error(z, ref, lv, ber, s) for s in seeds])
        )

    # K-means (float32)
    x, init = K.kmeans_data(n_km, 9, 8, seed=1)
    km_ref = K.kmeans(x, init, Channel(ber, None))
    for lv in range(0, 33, 8 if args.quick else 4):
        mis = [
            float(np.mean(K.kmeans(x, init, Channel(ber, lv, seed=s)).labels != km_ref.labels))
            for s in seeds
        ]
        rows.append(Row("kmeans", lv, "misclassified", mis))

    # CG (float64): convergence and distance to the error-free solution
    a, b = K.spd_system(n_cg, 1e3, seed=1)
    cg_ref = K.cg(a, b, Channel(ber, None))
    rows.append(Row("cg", 64, "iterations_error_free", [float(cg_ref.iterations)]))
    for lv in [0, 12, 16] if args.quick else [0, 8, 12, 16, 24, 32]:
        runs = [
            K.cg(a, b, Channel(ber, lv, seed=s), max_iter=10 * cg_ref.iterations) for s in seeds
        ]
        errs = []
        for r in runs:
            e = float(np.linalg.norm(r.x - cg_ref.x) / np.linalg.norm(cg_ref.x))
            errs.append(e if np.isfinite(e) else float("inf"))
        rows.append(Row("cg", lv, "converged", [float(r.converged) for r in runs]))
        rows.append(Row("cg", lv, "iterations", [float(r.iterations) for r in runs]))
        rows.append(Row("cg", lv, "rel_error_vs_error_free", errs))

    with open(args.out / "fig7_quality.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "level", "metric", "seed", "value"])
        for row in rows:
            for s, v in zip(seeds, row.values, strict=False):
                w.writerow([row.kernel, row.level, row.metric, s, v])
    print(f"BER {ber:g}, seeds {seeds}, FFT {n_fft}x{n_fft} complex128, K-means {n_km} points")
    print(f"9-D k=8 float32, CG n={n_cg} cond 1e3 float64; 8 processes")
    print("| kernel | level | metric | per seed |")
    print("|---|---|---|---|")
    for row in rows:
        vals = ", ".join(f"{v:.3g}" for v in row.values)
        print(f"| {row.kernel} | {row.level} | {row.metric} | {vals} |")

    plot(args.out, ber)


def plot(out: Path, ber: float) -> None:
    """Fig. 7 from the CSV: median over seeds per level."""
    by: dict[tuple[str, str, int], list[float]] = {}
    with open(out / "fig7_quality.csv") as f:
        for r in csv.DictReader(f):
            key = (r["kernel"], r["metric"], int(r["level"]))
            by.setdefault(key, []).append(float(r["value"]))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, kernel, metric, label, floor in [
        (axes[0], "fft", "mean_rel_error", "FFT: mean |y - y_ref| / mean |y_ref|", 1e-20),
        (axes[1], "kmeans", "misclassified", "K-means: fraction misclassified", 1e-7),
    ]:
        levels = sorted(lv for k, m, lv in by if k == kernel and m == metric)
        med = [float(np.median(by[(kernel, metric, lv)])) for lv in levels]
        # a zero error is drawn at the floor, anything past 1e30 (inf too) at 1e30
        ax.semilogy(levels, [min(max(m, floor), 1e30) for m in med], "o-")
        ax.axhline(floor, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("protection level")
        ax.set_title(f"{label}\n(dotted: zero; top: >= 1e30)", fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle(f"Result quality vs protection level, BER {ber:g} (median of seeds)")
    fig.tight_layout()
    fig.savefig(out / "fig7_quality.png", dpi=120)


if __name__ == "__main__":
    main()
