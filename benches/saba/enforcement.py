"""Saba's HTB enforcement measured on the namespace testbed (root): three
apps' backlogged TCP flows through one switch port at weights
0.6 / 0.3 / 0.1, a live reallocation to 0.1 / 0.3 / 0.6 (``tc class
change``), then the third app idle. Shares come from the HTB classes' byte
counters over 2 s windows; each configuration is repeated.

    .venv/bin/python benches/saba/enforcement.py --links 20mbit,100mbit --reps 3 \
        --out results/saba/enforcement.json
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from approxnet.saba.enforce import HtbBackend
from approxnet.saba.measure import Phase, Window, run_phase, star, weights_config
from approxnet.testbed import lifecycle

A, B = (0.6, 0.3, 0.1), (0.1, 0.3, 0.6)


def row(what: str, link: str, weights: tuple[float, ...], w: Window, rate: float) -> dict[str, Any]:
    total = sum(weights[a] for a in range(len(weights)) if w.shares.get(a, 0) > 0)
    expect = [weights[a] / total if w.shares.get(a, 0) > 0 else 0.0 for a in range(len(weights))]
    shares = [w.shares.get(a, 0.0) for a in range(len(weights))]
    rel = [abs(s - e) / e for s, e in zip(shares, expect, strict=True) if e > 0]
    return {
        "case": what,
        "link": link,
        "expected": expect,
        "shares": shares,
        "max_rel_error": max(rel),
        "max_abs_error": max(abs(s - e) for s, e in zip(shares, expect, strict=True)),
        "utilisation": w.bps / rate,
        "load1": os.getloadavg()[0],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--links", default="20mbit,100mbit")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("results/saba/enforcement.json"))
    args = ap.parse_args()
    rows = []
    for link in args.links.split(","):
        cfg = star(f"sb{os.getpid() % 100000}", 3, link=link)
        rate = cfg.host("dst").rate_bps
        tb = lifecycle.up(cfg)
        try:
            for _rep in range(args.reps):
                be = HtbBackend(cfg.namespace, queues=3)
                be.apply([weights_config(cfg, A)])
                change = [None, lambda be=be, cfg=cfg: be.apply([weights_config(cfg, B)])]
                first, second = run_phase(tb, 3, Phase((0, 1, 2), windows=2), 6000, change)
                be.apply([weights_config(cfg, A)])
                (idle,) = run_phase(tb, 3, Phase((0, 1)), 6100)
                for what, weights, w in (
                    ("0.6/0.3/0.1", A, first),
                    ("live change to 0.1/0.3/0.6", B, second),
                    ("0.6/0.3/0.1, third app idle", A, idle),
                ):
                    r = row(what, link, weights, w, rate)
                    rows.append(r)
                    print(json.dumps(r), flush=True)
        finally:
            tb.down()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
