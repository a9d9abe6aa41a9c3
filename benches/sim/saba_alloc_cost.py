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
one weight per app in [0.05, 1.05) on every port (an app's share still
differs from port to port with its flow count there), and random
per-port weights in [0.05, 1.05) (the hardest case: an app's weight
differs from port to port independently; Saba's controller gives an app
weights that follow its sensitivity, between these two). Each case is solved by the reference
iteration (``fluidshare.allocate``) and by the exact solver
(``fluidexact.solve``) on the same instance; prints each one's passes
(reference: exact rounds + iterations; exact: local-allocation sweeps +
linear solves), CPU seconds, the speed-up (reference CPU / exact CPU),
whether the exact one certified its answer, how many flows the bracket
of every fixed point (``fluidbound.bracket``) left open, and the largest
difference of the rates relative to the largest rate, on the flows whose
rate the bracket decided (where the model's answer is unique) and on all.

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
from approxnet.saba.fluidbound import bracket  # noqa: E402
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
    # a queue's app (every queue holds one app's flows at one link)
    q_app = np.zeros(queues, dtype=np.int64)
    q_app[queue] = app[ef]
    port_weight = 0.05 + rng.random(queues)  # drawn first: the same as before per-app
    app_weight = 0.05 + rng.random(a.apps)
    for name, weight in (
        ("equal queue weights", np.ones(queues)),
        ("per-app weights", app_weight[q_app]),
        ("random per-port weights", port_weight),
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
        rel = np.abs(new.rates - ref.rates) / ref.rates.max()
        diff = float(np.max(rel))
        still = bracket(e).open
        diff_closed = float(np.max(rel[~still])) if (~still).any() else 0.0
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
            "open_flows": int(still.sum()),
            "max_rel_diff_closed": diff_closed,
            "solver": "bracket+newton",
        }
        print(
            f"{name}: {len(order)} flows, {len(ef)} (flow, link) entries, {queues} queues: "
            f"reference {ref.iterations} passes, {cpu_ref:.2f} s CPU (last change "
            f"{ref.change:.1e}); exact {new.passes} passes, {cpu_new:.3f} s CPU, "
            f"certified {new.exact}; speed-up {row['speedup']}x; {int(still.sum())} flows "
            f"left open by the bracket; max diff {diff:.1e} (decided flows {diff_closed:.1e})",
            flush=True,
        )
        if a.json:
            with open(a.json, "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
