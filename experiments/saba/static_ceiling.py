"""What eq. 2 can gain on one port, per workload mix, before any network
effect (docs/experiments/saba.md, "Fidelity check" (d)).

For n apps drawn from a mix sharing one port, each using the whole port
(eq. 2's premise), a static split w gives app i the slowdown D_i(w_i) of
its *true* profile (the staged job's: ``1 - f + f max(1, x / w)`` for
communication fraction f and demand x; ``max(1 - f, f x / w) / max(1 -
f, f)`` where the communication overlaps the computation — the flow
model's profiles, checked against flowstudy.profile in
test_saba_flowstudy_mixes.py).
Compared with the equal split, per draw:

* ``oracle``: eq. 2 solved on the true profiles (convex: SLSQP finds the
  optimum) — the most a static per-port split can gain for this mix;
* ``cubic``: eq. 2 solved (the controller's fast solver, its floors) on
  the degree-3 models fitted to the 7 profiled shares, as Saba does,
  scored on the true profiles.

Reported: the sum of true slowdowns over the equal split's (eq. 2's own
objective) and the geometric-mean speed-up over the equal split (§8.1's
metric), geometric means over the draws; and the mix's spread (D at 25 %
and at 5 %).

    .venv/bin/python experiments/saba/static_ceiling.py

Writes results/saba/static_ceiling.csv.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from approxnet.saba import flowstudy
from approxnet.saba.model import SHARES, fit
from approxnet.saba.solver import default_floors, solve_fast

OUT = Path(__file__).resolve().parents[2] / "results" / "saba"


def true_d(f: np.ndarray, x: np.ndarray, w: np.ndarray, ov: np.ndarray | None = None) -> np.ndarray:
    """The staged job's profile at share w; where `ov`, communication
    overlapped with computation: max(1 - f, f x / w) / max(1 - f, f)."""
    seq = 1.0 - f + f * np.maximum(1.0, x / w)
    if ov is None:
        return np.asarray(seq, dtype=float)
    over = np.maximum(1.0 - f, f * np.maximum(1.0, x / w)) / np.maximum(1.0 - f, f)
    return np.asarray(np.where(ov, over, seq), dtype=float)


def oracle(f: np.ndarray, x: np.ndarray, ov: np.ndarray, floors: list[float]) -> np.ndarray:
    """Eq. 2 on the true (convex) profiles."""
    n = len(f)
    res = minimize(
        lambda w: float(true_d(f, x, w, ov).sum()),
        np.full(n, 1.0 / n),
        method="SLSQP",
        bounds=[(lo, 1.0) for lo in floors],
        constraints=[{"type": "eq", "fun": lambda w: float(w.sum() - 1.0)}],
        options={"ftol": 1e-12, "maxiter": 500},
    )
    w = np.clip(res.x, floors, 1.0)
    return np.asarray(w / w.sum())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload-seeds", type=int, nargs="+", default=[7, 8, 9])
    ap.add_argument("--apps", type=int, nargs="+", default=[2, 3, 4, 8, 20])
    ap.add_argument("--draws", type=int, default=200)
    args = ap.parse_args(argv)
    rows = []
    for mix in flowstudy.MIXES:
        for ws in args.workload_seeds:
            specs = flowstudy.workload_specs(20, 4, ws, mix)
            f = np.array([s.comm_ms / (s.comm_ms + s.compute_ms) for s in specs])
            x = np.array([s.demand for s in specs])
            ov = np.array([s.overlap for s in specs])
            cubic = []
            for i in range(len(specs)):
                samples = [
                    (b, float(true_d(f[i : i + 1], x[i : i + 1], np.array([b]), ov[i : i + 1])[0]))
                    for b in SHARES
                ]
                cubic.append(fit(samples, 3).padded())
            d25 = true_d(f, x, np.full(len(f), 0.25), ov)
            d05 = true_d(f, x, np.full(len(f), 0.05), ov)
            rng = np.random.default_rng(ws)
            for n in args.apps:
                floors = default_floors(n, 1.0)
                acc: dict[str, list[float]] = {k: [] for k in ("o_sum", "c_sum", "o_gm", "c_gm")}
                for _ in range(1 if n == len(specs) else args.draws):
                    idx = (
                        np.arange(n)
                        if n == len(specs)
                        else rng.choice(len(specs), n, replace=False)
                    )
                    fi, xi, oi = f[idx], x[idx], ov[idx]
                    eq = true_d(fi, xi, np.full(n, 1.0 / n), oi)
                    wo = oracle(fi, xi, oi, floors)
                    wc = np.array(solve_fast([cubic[i] for i in idx], floors, 1.0).weights)
                    do, dc = true_d(fi, xi, wo, oi), true_d(fi, xi, wc, oi)
                    acc["o_sum"].append(do.sum() / eq.sum())
                    acc["c_sum"].append(dc.sum() / eq.sum())
                    acc["o_gm"].append(float(np.exp(np.mean(np.log(eq / do)))))
                    acc["c_gm"].append(float(np.exp(np.mean(np.log(eq / dc)))))
                g = {k: float(np.exp(np.mean(np.log(v)))) for k, v in acc.items()}
                rows.append(
                    {
                        "mix": mix,
                        "workload_seed": ws,
                        "apps_per_port": n,
                        "d25_min": float(d25.min()),
                        "d25_max": float(d25.max()),
                        "d25_mean": float(d25.mean()),
                        "d05_min": float(d05.min()),
                        "d05_max": float(d05.max()),
                        "oracle_sum_d_vs_equal": g["o_sum"],
                        "cubic_sum_d_vs_equal": g["c_sum"],
                        "oracle_speedup_vs_equal": g["o_gm"],
                        "cubic_speedup_vs_equal": g["c_gm"],
                    }
                )
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "static_ceiling.csv", "w", newline="") as fo:
        w = csv.DictWriter(fo, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(
        "| mix | D(25 %) min-max (mean) | D(5 %) min-max | apps / port | oracle: sum D "
        "| cubic: sum D | oracle: speed-up | cubic: speed-up |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for mix in flowstudy.MIXES:
        for n in args.apps:
            rs = [r for r in rows if r["mix"] == mix and r["apps_per_port"] == n]

            def m(k: str, rs: list[dict[str, float | int | str]] = rs) -> float:
                return float(np.exp(np.mean([np.log(float(r[k])) for r in rs])))

            def lo_hi(lo: str, hi: str, rs: list[dict[str, float | int | str]] = rs) -> str:
                return f"{min(float(r[lo]) for r in rs):.2f}-{max(float(r[hi]) for r in rs):.2f}"

            d25_mean = float(np.mean([float(r["d25_mean"]) for r in rs]))
            print(
                f"| {mix} | {lo_hi('d25_min', 'd25_max')} ({d25_mean:.2f}) | "
                f"{lo_hi('d05_min', 'd05_max')} | {n} | "
                f"{m('oracle_sum_d_vs_equal'):.3f} | {m('cubic_sum_d_vs_equal'):.3f} | "
                f"{m('oracle_speedup_vs_equal'):.3f} | {m('cubic_speedup_vs_equal'):.3f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
