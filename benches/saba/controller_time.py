"""Controller calculation time (seed 003 §8.5, Fig. 12): eq. 2 for every
switch output port of a 1,944-server cluster, fast Rust solver vs the SLSQP
reference, in the same run on the same scenarios. The cluster, the
scenarios and what is timed: :mod:`approxnet.saba.ctltime` (the same code
runs as ``approxnet repro saba/controller-time`` at a small size).

    .venv/bin/python benches/saba/controller_time.py --out results/saba/controller_time.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from approxnet.saba.ctltime import scenario, summarize


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--apps", default="1,10,100,250,500,1000")
    ap.add_argument("--degrees", default="1,2,3")
    ap.add_argument("--seeds", type=int, default=20, help="scenarios per (apps, degree)")
    ap.add_argument("--ref-seeds", type=int, default=2, help="of which also solved by SLSQP")
    ap.add_argument("--ref-ports", type=int, default=300, help="ports SLSQP solves per scenario")
    ap.add_argument("--out", type=Path, default=Path("results/saba/controller_time.json"))
    args = ap.parse_args()
    rows = []
    for apps in map(int, args.apps.split(",")):
        for k in map(int, args.degrees.split(",")):
            runs = [
                scenario(apps, k, 1000 * apps + 10 * k + s, args.ref_ports * (s < args.ref_seeds))
                for s in range(args.seeds)
            ]
            row = summarize(apps, k, runs)
            rows.append(row)
            print(json.dumps(row), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
