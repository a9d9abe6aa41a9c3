#!/usr/bin/env python3
"""Cost of one re-allocation of Saba's per-port weighted sharing at 1,944
servers (python/approxnet/saba/fluidshare.py ``allocate``, what the Saba
simulator backend calls at every change of the active flows).

Builds seed 003's three-tier spine-leaf (54 spine, 102 leaf, 108 ToR x 18
servers, 56 Gbps) with the simulator's own routes (``routes_from_sim``),
``--flows`` flows between random distinct hosts, each of one of ``--apps``
apps, one queue per app per port; then allocates twice: all queue weights
equal (the backend's ``app_maxmin``, the paper's "ideal max-min": still
per-port effective weights wherever an app has several flows on a port)
and random per-port weights in [0.05, 1.05) (Saba-like: an app's weight
differs from port to port). Each case is solved by the reference
iteration (``fluidshare.allocate``) and by the exact solver
(``fluidexact.solve``) on the same instance; prints each one's passes
(reference: exact rounds + iterations; exact: local-allocation sweeps +
linear solves), CPU seconds, the speed-up (reference CPU / exact CPU),
whether the exact one certified its answer, and the largest difference
of the rates relative to the largest rate.

Usage: python3 benches/sim/saba_alloc_cost.py [--flows 4000] [--apps 20]
       [--bin target/release/approxnet-sim] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from approxnet.saba.fluidexact import solve  # noqa: E402
from approxnet.saba.fluidshare import Entries, allocate  # noqa: E402
from approxnet.saba.sim_backend import PAPER_SPINE_LEAF, routes_from_sim  # noqa: E402

TOPOLOGY = PAPER_SPINE_LEAF  # seed 003 §8.1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--flows", type=int, default=4000)
    ap.add_argument("--apps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bin", default=str(ROOT / "target/release/approxnet-sim"))
    ap.add_argument("--json", help="append one JSON line per case here")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    hosts = 1944
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < a.flows:
        s, d = (int(x) for x in rng.integers(0, hosts, 2))
        if s != d:
            pairs.add((s, d))
    order = sorted(pairs)
    routes = routes_from_sim(TOPOLOGY, order, sim=a.bin)
    app = rng.integers(0, a.apps, len(order))
    ef = np.concatenate([np.full(len(routes.paths[p]), i) for i, p in enumerate(order)])
    el = np.concatenate([routes.paths[p] for p in order]).astype(np.int64)
    ef = ef.astype(np.int64)
    _, queue = np.unique(el * a.apps + app[ef], return_inverse=True)
    queues = int(queue.max()) + 1
    for name, weight in (
        ("equal queue weights", np.ones(queues)),
        ("random per-port weights", 0.05 + rng.random(queues)),
    ):
        e = Entries(
            ef,
            el,
            np.zeros(len(ef), dtype=np.int64),
            queue.astype(np.int64),
            weight,
            routes.capacity,
            len(order),
        )
        t0 = time.process_time()
        ref = allocate(e, tol=1e-6)
        cpu_ref = time.process_time() - t0
        t0 = time.process_time()
        new = solve(e)
        cpu_new = time.process_time() - t0
        diff = float(np.max(np.abs(new.rates - ref.rates)) / ref.rates.max())
        row = {
            "case": name,
            "flows": len(order),
            "entries": len(ef),
            "queues": queues,
            "seed": a.seed,
            "ref_passes": ref.iterations,
            "ref_cpu_s": round(cpu_ref, 4),
            "ref_last_change": ref.change,
            "exact_passes": new.passes,
            "exact_cpu_s": round(cpu_new, 4),
            "exact_certified": new.exact,
            "speedup": round(cpu_ref / max(cpu_new, 1e-9), 2),
            "max_rel_diff": diff,
        }
        print(
            f"{name}: {len(order)} flows, {len(ef)} (flow, link) entries, {queues} queues: "
            f"reference {ref.iterations} passes, {cpu_ref:.2f} s CPU (last change "
            f"{ref.change:.1e}); exact {new.passes} passes, {cpu_new:.3f} s CPU, "
            f"certified {new.exact}; speed-up {row['speedup']}x; max diff {diff:.1e}",
            flush=True,
        )
        if a.json:
            with open(a.json, "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
