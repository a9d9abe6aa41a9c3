"""Saba vs per-flow fair sharing on the namespace testbed (a small Fig. 8a):
the profiled `shuffle` and `iterative` workloads run at the same time, each
as a ring over four hosts, two on each side of a 200 Mbit/s trunk between
two switches (hosts at 1 Gbit/s), so the trunk's two egress ports are
where they compete.

* fair: the testbed as built — every packet DSCP 0, one FIFO per port,
  kernel TCP shares per flow;
* saba: the controller (models of degree 3 from the sensitivity table
  written by `approxnet saba profile`) with the HTB backend; each app's
  ring connections are opened with it and its workers mark their DSCP.

Speedup = fair time / saba time per workload, repeated `--reps` times
alternating the modes. Needs root.

    sudo .venv/bin/python experiments/saba/corun.py --table results/saba/sensitivity.db \
        --reps 3 --out results/saba/corun.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path
from typing import Any

from approxnet.saba.controller import Controller
from approxnet.saba.enforce import HtbBackend
from approxnet.saba.profiler import run_together
from approxnet.saba.table import SensitivityTable
from approxnet.saba.topology import TestbedTopology
from approxnet.saba.workloads import WORKLOADS
from approxnet.testbed import lifecycle, parse

APPS = ("shuffle", "iterative")


def testbed(name: str, trunk: str) -> Any:
    hosts = [{"name": f"n{i}", "switch": "l" if i < 2 else "r", "rate": "1gbit"} for i in range(4)]
    # ring n0 -> n1 -> n2 -> n3 -> n0: n1 -> n2 and n3 -> n0 cross the trunk
    return parse(
        {
            "testbed": {"name": name},
            "switch": [{"name": "l"}, {"name": "r"}],
            "host": hosts,
            "trunk": [{"between": ["l", "r"], "rate": trunk}],
        }
    )


def run(mode: str, table: SensitivityTable, trunk: str, leaf: int | None) -> dict[str, Any]:
    cfg = testbed(f"co{os.getpid() % 100000}", trunk)
    tb = lifecycle.up(cfg)
    try:
        dscp = {a: 0 for a in APPS}
        weights: dict[str, Any] = {}
        if mode == "saba":
            backend = HtbBackend(cfg.namespace, leaf_bytes=leaf)
            ctl = Controller(TestbedTopology(cfg), backend=backend)
            for a in APPS:
                ctl.register(a, list(table.get(a, 3).model.coeffs))
                for i in range(4):
                    ctl.open_connection(a, f"n{i}", f"n{(i + 1) % 4}")
                dscp[a] = ctl.app(a).dscp
            weights = {c.key: dict(c.app_weights) for c in ctl.port_configs() if "l:r" in c.key}
        jobs = [(WORKLOADS[a], 7000 + 100 * k, dscp[a]) for k, a in enumerate(APPS)]
        times = run_together(tb, jobs)
    finally:
        tb.down()
    return {"mode": mode, "times": dict(zip(APPS, times, strict=True)), "trunk_weights": weights}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--table", default="results/saba/sensitivity.db")
    ap.add_argument("--trunk", default="200mbit")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--leaf-bytes", type=int, help="bfifo per Saba queue (default: pfifo)")
    ap.add_argument("--out", type=Path, default=Path("results/saba/corun.json"))
    args = ap.parse_args()
    table = SensitivityTable(args.table)
    runs = []
    for _ in range(args.reps):
        for mode in ("fair", "saba"):
            r = run(mode, table, args.trunk, args.leaf_bytes)
            runs.append(r)
            print(json.dumps(r), flush=True)
    speedup = {}
    for a in APPS:
        ratios = [
            f["times"][a] / s["times"][a] for f, s in zip(runs[0::2], runs[1::2], strict=True)
        ]
        speedup[a] = math.exp(sum(map(math.log, ratios)) / len(ratios))
    summary = {"speedup_geomean": speedup, "runs": runs}
    print(json.dumps(summary["speedup_geomean"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
