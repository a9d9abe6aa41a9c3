"""Bottleneck utilisation of one kernel-TCP stream through a running testbed.

A benchmark, not a test: it prints figures, asserts nothing.

    python -m approxnet.testbed up python/approxnet/testbed/examples/dumbbell.toml
    python -m approxnet.testbed.measure python/approxnet/testbed/examples/dumbbell.toml \\
        --src h1 --dst h3 --seconds 2 --runs 5 --cc cubic

For each run it reports the receiver's goodput (payload bytes over the time
from first to last byte) and the wire utilisation of the path's slowest
switch egress port (frame bytes that port sent, from its tc counters, over
rate x the sender's duration). With 1500-byte packets and TCP timestamps
goodput can reach at most 1448 / 1514 = 95.6 % of the link rate.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from typing import Any

from . import config as config_mod
from . import lifecycle, procs
from .errors import TestbedError
from .layout import path_ports
from .procs import TRAFFIC
from .units import format_rate

PORT = 5201


def measure_once(
    tb: lifecycle.Testbed, src: str, dst: str, seconds: float, cc: str | None = None
) -> dict[str, Any]:
    """One bounded TCP stream src -> dst; goodput and bottleneck utilisation."""
    bottleneck = min(path_ports(tb.config, src, dst), key=lambda p: p.rate_bps)
    before = _port_bytes(tb, bottleneck.switch, bottleneck.ifname)
    recv = procs.start(
        tb, dst, [*TRAFFIC, "tcp-recv", "--port", str(PORT), "--timeout", str(seconds + 10)]
    )
    try:
        send_argv = [*TRAFFIC, "tcp-send", "--dst", tb.address(dst), "--port", str(PORT)]
        send_argv += ["--seconds", str(seconds), *(["--cc", cc] if cc else [])]
        sent = procs.run(tb, src, send_argv, timeout=seconds + 20)
        got = procs.finish(recv, timeout=seconds + 20)
    finally:
        procs.kill(recv)
    wire = _port_bytes(tb, bottleneck.switch, bottleneck.ifname) - before
    rate = bottleneck.rate_bps
    return {
        "bottleneck": f"{bottleneck.switch}/{bottleneck.ifname}",
        "rate": format_rate(rate),
        "cc": sent["cc"],
        "goodput_bps": got["goodput_bps"],
        "goodput_fraction": got["goodput_bps"] / rate,
        "wire_utilisation": wire * 8 / (rate * sent["seconds"]),
    }


def _port_bytes(tb: lifecycle.Testbed, switch: str, port: str) -> int:
    return sum(q.sent_bytes for q in tb.status().queues if q.switch == switch and q.port == port)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m approxnet.testbed.measure",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("config")
    parser.add_argument("--src", required=True)
    parser.add_argument("--dst", required=True)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--cc", help="TCP congestion control (default: the kernel's)")
    args = parser.parse_args(argv)
    try:
        cfg = config_mod.load(args.config)
        if not lifecycle.is_up(cfg):
            raise TestbedError(f"testbed {cfg.name!r} is not up; run `up {args.config}` first")
        tb = lifecycle.Testbed(cfg)
        runs = [
            measure_once(tb, args.src, args.dst, args.seconds, args.cc) for _ in range(args.runs)
        ]
    except TestbedError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    for r in runs:
        print(json.dumps(r))
    if len(runs) > 1:
        for key in ("goodput_fraction", "wire_utilisation"):
            v = [r[key] for r in runs]
            print(f"{key}: median {statistics.median(v):.3f} min {min(v):.3f} max {max(v):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
