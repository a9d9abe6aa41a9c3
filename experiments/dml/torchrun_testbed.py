"""The torchrun recipe of docs/python.md across two testbed namespaces as
two "machines" (issue 18): a two-host testbed (one switch, 1 Gbit/s
links), then on each host

    torchrun --nnodes 2 --nproc_per_node 1 --node_rank R \\
        --master_addr <h1> --master_port 29500 -m approxnet.torch.ddp_example ...

with GLOO_SOCKET_IFNAME=eth0; the hook's ranks find each other through the
process group. Writes rank 0's record to --out and removes the testbed.
Needs root (network namespaces).

    sudo .venv/bin/python experiments/dml/torchrun_testbed.py -p 0.1 --epochs 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from approxnet.testbed.config import parse
from approxnet.testbed.lifecycle import up


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-p", "--loss-bound", type=float, default=0.1)
    ap.add_argument("--hook", default="approxnet")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--rate", default="1gbit", help="host link rate")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--out", type=Path, default=Path("results/train/torchrun_testbed.json"))
    a = ap.parse_args(argv)
    name = f"tr{os.getpid() % 100000}"
    cfg = parse(
        {
            "testbed": {"name": name, "queues": 1},
            "switch": [{"name": "sw"}],
            "host": [
                {"name": "h1", "switch": "sw", "rate": a.rate},
                {"name": "h2", "switch": "sw", "rate": a.rate},
            ],
        }
    )
    a.out.parent.mkdir(parents=True, exist_ok=True)
    torchrun = str(Path(sys.executable).parent / "torchrun")
    with up(cfg) as tb:
        master = tb.address("h1")
        env = {**os.environ, "GLOO_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "1"}
        procs = []
        for rank, host in enumerate(("h1", "h2")):
            cmd = [
                torchrun, "--nnodes", "2", "--nproc_per_node", "1", "--node_rank", str(rank),
                "--master_addr", master, "--master_port", "29500",
                "-m", "approxnet.torch.ddp_example", "--hook", a.hook,
                "-p", str(a.loss_bound), "--epochs", str(a.epochs), "--steps", str(a.steps),
                "--port", "7701",
            ]  # fmt: skip
            if rank == 0:
                cmd += ["--out", str(a.out.resolve())]
            procs.append(
                tb.exec(host, cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            )
        codes = []
        for p in procs:
            try:
                _, err = p.communicate(timeout=a.timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
            codes.append(p.returncode)
            if p.returncode != 0:
                sys.stderr.write(err.decode(errors="replace")[-3000:])
    if any(codes):
        print(f"torchrun exit codes {codes}", file=sys.stderr)
        return 1
    rec = json.loads(a.out.read_text())
    print(json.dumps({k: v for k, v in rec.items() if k != "epochs"}))
    print(json.dumps(rec["epochs"][-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
