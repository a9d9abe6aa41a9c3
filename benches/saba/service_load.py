"""Load on the controller service: register `--apps` apps over HTTP, then
drive `--events` connection events (open / close, random apps between
random hosts of a 16-host, 4-switch testbed topology) from `--clients`
threads; report registration time, events per second and the latency
percentiles of an event (each one a reallocation of the ports on the
path, pushed to an in-memory backend). Nothing is built in namespaces.

    .venv/bin/python benches/saba/service_load.py --apps 1000 --events 5000 \
        --out results/saba/service_load.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import threading
import time
from pathlib import Path

import numpy as np

from approxnet.saba.client import SabaClient
from approxnet.saba.controller import Controller
from approxnet.saba.enforce import MemoryBackend
from approxnet.saba.service import Service
from approxnet.saba.store import open_store
from approxnet.saba.topology import TestbedTopology
from approxnet.testbed import parse


def topology() -> TestbedTopology:
    switches = [{"name": f"s{i}"} for i in range(4)]
    hosts = [{"name": f"h{i}", "switch": f"s{i % 4}", "rate": "10gbit"} for i in range(16)]
    trunks = [{"between": ["s0", f"s{i}"], "rate": "40gbit"} for i in range(1, 4)]
    return TestbedTopology(
        parse({"testbed": {"name": "load"}, "switch": switches, "host": hosts, "trunk": trunks})
    )


def model(rng: random.Random) -> list[float]:
    s, q, r = rng.uniform(0, 4), rng.uniform(0, 6), rng.uniform(0, 6)
    return [1 + s + q + r, -s - 2 * q - 3 * r, q + 3 * r, -r]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--apps", type=int, default=1000)
    ap.add_argument("--events", type=int, default=5000)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument(
        "--db",
        default=":memory:",
        help="state store: a SQLite file (measures SQLite too) or a postgresql:// URL",
    )
    ap.add_argument("--out", type=Path, default=Path("results/saba/service_load.json"))
    args = ap.parse_args()
    rng = random.Random(1)
    ctl = Controller(topology(), open_store(args.db), MemoryBackend())
    svc = Service(ctl)
    svc.start()
    try:
        client = SabaClient(svc.url)
        t0 = time.perf_counter()
        for i in range(args.apps):
            client.register(f"app{i}", model(rng))
        t_register = time.perf_counter() - t0
        hosts = [f"h{i}" for i in range(16)]
        latencies: list[float] = []
        lock = threading.Lock()

        def worker(seed: int, n: int) -> None:
            r = random.Random(seed)
            c = SabaClient(svc.url)
            mine: list[str] = []
            for _ in range(n):
                t = time.perf_counter()
                if mine and (len(mine) > 20 or r.random() < 0.5):
                    c.close(mine.pop(r.randrange(len(mine))))
                else:
                    src, dst = r.sample(hosts, 2)
                    mine.append(c.open(f"app{r.randrange(args.apps)}", src, dst)["id"])
                dt = time.perf_counter() - t
                with lock:
                    latencies.append(dt)
            c.disconnect()

        per = args.events // args.clients
        threads = [threading.Thread(target=worker, args=(k, per)) for k in range(args.clients)]
        t0 = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        wall = time.perf_counter() - t0
        lat = np.array(latencies)
        out = {
            "apps": args.apps,
            "register_total_s": t_register,
            "register_mean_ms": 1e3 * t_register / args.apps,
            "events": len(lat),
            "clients": args.clients,
            "events_per_s": len(lat) / wall,
            "latency_p50_ms": 1e3 * float(np.percentile(lat, 50)),
            "latency_p99_ms": 1e3 * float(np.percentile(lat, 99)),
            "open_connections_at_end": len(ctl.connections()),
            "ports_configured": len(ctl.port_configs()),
            "load1": os.getloadavg()[0],
        }
    finally:
        svc.stop()
    print(json.dumps(out))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
