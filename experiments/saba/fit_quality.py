"""How well eq. 1 fits the measured profiles (seed 003 §4.2, Fig. 6a),
per workload and degree, three ways:

* plain: the paper's least-squares polynomial, and how much it rises with
  bandwidth anywhere on [0.05, 1] (what the controller would exploit);
* ours: the fit the controller uses (`model.fit`: plain when it does not
  rise, else constrained to D' <= 0);
* hyperbola: ``a + c / b`` by least squares (the shape of a job whose
  time is compute + communication / bandwidth) — a reference, not used.

    .venv/bin/python experiments/saba/fit_quality.py results/saba/profile_*.json \\
        --out results/saba/fit_quality.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from approxnet.saba.model import fit, r_squared, slowdowns

GRID = np.linspace(0.05, 1.0, 241)


def rise(coeffs: np.ndarray) -> float:
    """Largest rise of the polynomial with bandwidth on the grid."""
    v = np.polynomial.polynomial.polyval(GRID, coeffs)
    return float(np.max(v - np.minimum.accumulate(v)))


def quality(samples: list[tuple[float, float]]) -> dict[str, Any]:
    b = np.array([s for s, _ in samples])
    d = np.array([v for _, v in samples])
    out: dict[str, Any] = {}
    for k in (1, 2, 3):
        plain = np.polynomial.polynomial.polyfit(b, d, k)
        ours = fit(samples, k)
        out[f"k{k}"] = {
            "plain_r2": r_squared(plain.tolist(), samples),
            "plain_rise": rise(plain),
            "ours_r2": ours.r2,
        }
    x = np.vstack([np.ones_like(b), 1.0 / b]).T
    coef, *_ = np.linalg.lstsq(x, d, rcond=None)
    pred = x @ coef
    out["hyperbola_r2"] = 1.0 - float(np.sum((d - pred) ** 2) / np.sum((d - d.mean()) ** 2))
    out["hyperbola"] = coef.tolist()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("profiles", nargs="+", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    rows = {}
    print(
        "| workload | D(5 %) | plain R² k=1/2/3 | plain rise k=2/3 | ours R² k=1/2/3 | a + c/b R² |"
    )
    print("|---|---|---|---|---|---|")
    for p in args.profiles:
        doc = json.loads(p.read_text())
        times = {float(s): float(t) for s, t in doc["times"].items()}
        samples = slowdowns(times)
        q = quality(samples)
        rows[doc["workload"]] = {"slowdowns": samples, **q}
        print(
            f"| {doc['workload']} | {samples[0][1]:.2f} | "
            + " / ".join(f"{q[f'k{k}']['plain_r2']:.2f}" for k in (1, 2, 3))
            + " | "
            + " / ".join(f"{q[f'k{k}']['plain_rise']:.2f}" for k in (2, 3))
            + " | "
            + " / ".join(f"{q[f'k{k}']['ours_r2']:.2f}" for k in (1, 2, 3))
            + f" | {q['hyperbola_r2']:.3f} |"
        )
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
