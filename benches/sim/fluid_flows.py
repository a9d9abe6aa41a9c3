#!/usr/bin/env python3
"""Shared flow list for the flow-level cross-checks (approxnet-sim's
``[fluid] flows_csv`` format: ``src,dst,bytes,start_ns``).

Sizes uniform in [min_kb, max_kb] KB (1 KB = 1000 B); source and
destination uniform over the hosts (distinct). Arrivals either Poisson
with the aggregate rate that offers ``load`` of every host link
(``load * hosts * link_rate / mean_size``), or all at time 0.

Usage: python3 benches/sim/fluid_flows.py OUT.csv --hosts 128 --flows 10000
       [--gbps 10] [--load 0.5] [--arrivals poisson|once] [--seed 1]
"""

from __future__ import annotations

import argparse
import random


def flows(
    hosts: int,
    count: int,
    gbps: float,
    load: float,
    arrivals: str,
    seed: int,
    min_kb: float = 100.0,
    max_kb: float = 1000.0,
) -> list[tuple[int, int, int, float]]:
    """``(src, dst, bytes, start_ns)`` rows, start times non-decreasing."""
    rng = random.Random(seed)
    mean_bytes = (min_kb + max_kb) / 2 * 1000
    rate_per_ns = load * hosts * gbps / 8 / mean_bytes  # flows per ns
    t = 0.0
    out = []
    for _ in range(count):
        if arrivals == "poisson":
            t += rng.expovariate(rate_per_ns)
        src = rng.randrange(hosts)
        dst = rng.randrange(hosts - 1)
        if dst >= src:
            dst += 1
        size = round(rng.uniform(min_kb, max_kb) * 1000)
        out.append((src, dst, size, round(t, 3)))
    return out


def write(path: str, rows: list[tuple[int, int, int, float]]) -> None:
    """Writes the CSV approxnet-sim reads."""
    with open(path, "w") as f:
        f.write("src,dst,bytes,start_ns\n")
        for s, d, b, t in rows:
            f.write(f"{s},{d},{b},{t}\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--hosts", type=int, default=128)
    ap.add_argument("--flows", type=int, default=10_000)
    ap.add_argument("--gbps", type=float, default=10.0)
    ap.add_argument("--load", type=float, default=0.5)
    ap.add_argument("--arrivals", choices=["poisson", "once"], default="poisson")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    write(a.out, flows(a.hosts, a.flows, a.gbps, a.load, a.arrivals, a.seed))


if __name__ == "__main__":
    main()
