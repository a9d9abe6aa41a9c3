"""The receiver's "enough" signal in the hook's all-reduce over real sockets
(issue 20 item 4): 4 ranks as threads on 127.0.0.1, the MLP's 85 k-float
bucket, a few all-reduces at loss bound p, the senders paced at a given
line rate. Prints per rank the fraction of the jobs' payload never sent
(sender reports' ``unsent_bytes``) and the all-reduce times.

    .venv/bin/python experiments/dml/enough.py --rate-gbps 1 -p 0.3
    .venv/bin/python experiments/dml/enough.py --rate-gbps 0.05 -p 0.3
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from approxnet.torch import Exchange, UniformLoss, allreduce, runtime_config
from approxnet.torch.exchange import loopback_addresses, run_ranks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate-gbps", type=float, default=1.0, help="senders' pacing rate")
    ap.add_argument("-p", type=float, default=0.3, help="loss bound of both phases")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--elements", type=int, default=85_000)
    a = ap.parse_args(argv)
    world = 4
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal(a.elements).astype(np.float32) for _ in range(world)]
    addrs = loopback_addresses(world)

    def rank(r: int) -> tuple[list[float], int, int]:
        cfg = runtime_config(line_rate_gbps=a.rate_gbps)
        ex = Exchange(r, addrs, config=cfg, seed=1, timeout_s=60.0)
        ex.connect_all()
        secs = []
        pol = UniformLoss(a.p)
        for step in range(a.steps):
            _, tel = allreduce(
                ex, xs[r], step=step, bucket=0, policy=pol, gather_policy=pol,
                fill="rescale", transform="permute", seed=5, previous=None,
            )  # fmt: skip
            ex.release()
            secs.append(tel.seconds)
        ex.drain(0.5)  # the last sender reports
        unsent = sum(rep.unsent_bytes for rep in ex.reports)
        total = sum(rep.bytes for rep in ex.reports)
        ex.close(timeout_s=1.0)
        return secs, unsent, total

    out = run_ranks(world, rank)
    for r in range(world):
        secs, unsent, total = out[r]
        ms = " ".join(f"{1e3 * s:.1f}" for s in secs)
        print(f"rank {r}: unsent {unsent / total:.3f} of {total} B, all-reduce ms {ms}")
    print(f"rate {a.rate_gbps} Gbit/s, p = {a.p}, load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
