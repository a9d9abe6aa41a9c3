"""Seed 003 §4.2 / Fig. 6b-c on our workloads: how well a model profiled
at 1x data on 4 nodes predicts the slowdowns measured at another dataset
size or node count. Profiles each workload at the base setting (degree
1-3 R², Fig. 6a), then at each variant, and reports the R² of the base
degree-3 model on the variant's slowdowns. Needs root (namespaces).

    sudo .venv/bin/python experiments/saba/model_transfer.py \
        --variants 0.1x,2n,8n --out results/saba/model_transfer.json
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from approxnet.saba.model import r_squared
from approxnet.saba.profiler import cluster, profile
from approxnet.saba.workloads import WORKLOADS
from approxnet.testbed import lifecycle


def run(workload: str, scale: float, nodes: int) -> dict[str, object]:
    cfg = cluster(f"mt{os.getpid() % 100000}", nodes)
    tb = lifecycle.up(cfg)
    try:
        p = profile(tb, WORKLOADS[workload].scaled(scale))
    finally:
        tb.down()
    return {
        "samples": p.samples,
        "times": {str(k): v for k, v in p.times.items()},
        "r2": {k: m.r2 for k, m in p.models.items()},
        "coeffs3": list(p.models[3].coeffs),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workloads", default="shuffle,iterative")
    ap.add_argument("--variants", default="0.1x,2n,8n", help="Nx: data x N; Mn: M nodes")
    ap.add_argument("--out", type=Path, default=Path("results/saba/model_transfer.json"))
    args = ap.parse_args()
    out = []
    for w in args.workloads.split(","):
        base = run(w, 1.0, 4)
        row: dict[str, object] = {"workload": w, "base": base, "variants": {}}
        print(w, "base R2 by degree", base["r2"], flush=True)
        for v in args.variants.split(","):
            scale, nodes = (float(v[:-1]), 4) if v.endswith("x") else (1.0, int(v[:-1]))
            got = run(w, scale, nodes)
            r2 = r_squared(base["coeffs3"], got["samples"])  # type: ignore[arg-type]
            row["variants"][v] = {"r2_of_base_model": r2, **got}  # type: ignore[index]
            print(w, v, "R2 of the base cubic:", round(r2, 3), flush=True)
        out.append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
