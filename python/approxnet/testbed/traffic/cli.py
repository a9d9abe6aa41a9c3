"""The command line of the traffic tools (see the package doc)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from . import background, capture, flows, jobs, streams
from .production import gap_arg


def exec_at(at: float, argv: list[str]) -> None:
    """Sleep until monotonic time `at` (bounded by 30 s), then exec `argv`:
    starts several senders at the same instant (incast)."""
    time.sleep(min(max(at - time.monotonic(), 0.0), 30.0))
    os.execv(argv[0], argv)


def _tos(x: str) -> int:
    return int(x, 0)


def _parser() -> argparse.ArgumentParser:
    from . import __doc__ as doc

    p = argparse.ArgumentParser(
        prog="python -m approxnet.testbed.traffic",
        description=doc,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="cmd", required=True)

    def cmd(name: str, run: Callable[[Any], dict[str, Any]], help: str) -> argparse.ArgumentParser:
        a = sub.add_parser(name, help=help)
        a.set_defaults(run=run)
        return a

    a = cmd(
        "udp-send",
        lambda x: streams.udp_send(x.dst, x.port, x.count, x.size, x.tos),
        "send COUNT datagrams",
    )
    a.add_argument("--dst", required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--count", type=int, required=True)
    a.add_argument("--size", type=int, default=streams.FULL_PAYLOAD)
    a.add_argument("--tos", type=_tos, default=0)
    a = cmd(
        "udp-recv",
        lambda x: streams.udp_recv(x.port, x.count, x.timeout, x.idle),
        "count datagrams",
    )
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--count", type=int, required=True)
    a.add_argument("--timeout", type=float, default=10.0)
    a.add_argument("--idle", type=float, default=1.0)
    a = cmd(
        "tcp-send",
        lambda x: streams.tcp_send(x.dst, x.port, x.seconds, x.tos, x.connect_timeout, x.cc),
        "stream over TCP for SECONDS",
    )
    a.add_argument("--dst", required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--seconds", type=float, default=2.0)
    a.add_argument("--tos", type=_tos, default=0)
    a.add_argument("--connect-timeout", type=float, default=5.0)
    a.add_argument("--cc", help="TCP congestion control, e.g. cubic, reno, bbr")
    a = cmd("tcp-recv", lambda x: streams.tcp_recv(x.port, x.timeout), "receive one TCP stream")
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--timeout", type=float, default=30.0)

    a = cmd(
        "tcp-job-server",
        lambda x: jobs.tcp_job_server(x.port, x.timeout, x.conns),
        "receive approximate jobs over kernel TCP, say when each has enough",
    )
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--timeout", type=float, default=60)
    a.add_argument("--conns", type=int, default=1)
    a = cmd(
        "tcp-job-send",
        lambda x: jobs.tcp_job_send(
            x.dst,
            x.port,
            x.mode,
            x.msr,
            x.messages,
            x.size,
            x.jobs,
            x.cc,
            x.tos,
            x.seed,
            x.timeout,
            x.job_base,
            x.seconds,
            x.gap_us,
            x.gap_seed,
        ),
        "approximate jobs over kernel TCP: SampleSend (ss) or EarlySend (es)",
    )
    _job_sender(a, None, "seeds the gaps (default --seed)")
    a.add_argument("--mode", choices=["ss", "es"], required=True)
    a.add_argument("--msr", type=float, required=True)
    a.add_argument("--cc", default=None)
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("--timeout", type=float, default=60)
    a.add_argument("--seconds", type=float, default=math.inf, help="no new job after this")
    a = cmd(
        "udp-job-send",
        lambda x: jobs.udp_job_send(
            x.dst, x.port, x.messages, x.size, x.jobs, x.tos, x.job_base, x.gap_us, x.gap_seed
        ),
        "approximate jobs over plain UDP, unpaced",
    )
    _job_sender(a, 1, "seeds the gaps")
    a = cmd(
        "udp-job-recv",
        lambda x: jobs.udp_job_recv(x.port, x.timeout, x.idle),
        "when each message of each UDP job became whole",
    )
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--timeout", type=float, default=60)
    a.add_argument("--idle", type=float, default=0.5)

    a = cmd(
        "cbr",
        lambda x: background.cbr(
            x.dst, x.port, x.rate_mbps, x.seconds, x.schedule, x.size, x.burst
        ),
        "paced UDP with a queue schedule",
    )
    a.add_argument("--dst", required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--rate-mbps", type=float, required=True)
    a.add_argument("--seconds", type=float, required=True)
    a.add_argument("--schedule", default="0:0", help="t:queue,... e.g. 0:4,1.5:3")
    a.add_argument("--size", type=int, default=jobs.UDP_PAYLOAD)
    a.add_argument("--burst", type=int, default=4, help="datagrams per sendmsg (GSO)")
    a = cmd("sink", lambda x: background.sink(x.port, x.seconds), "a UDP socket that never reads")
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--seconds", type=float, default=60)
    a = cmd(
        "capture",
        lambda x: capture.capture(x.iface, x.port, x.seconds, x.max_packets, x.reorder, x.acks),
        "count reordered approxnet packets on a link",
    )
    a.add_argument("--iface", default="eth0")
    a.add_argument("--port", type=int, default=7700)
    a.add_argument("--seconds", type=float, default=60)
    a.add_argument("--max-packets", type=int, default=2_000_000)
    a.add_argument("--reorder", type=int, default=3)
    a.add_argument("--acks", action="store_true", help="ACKs from --port instead of DATA to it")
    a = cmd(
        "fct-server",
        lambda x: flows.fct_server(x.port, x.timeout),
        "serve short flows",
    )
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--timeout", type=float, default=60)
    a = cmd(
        "fct-send",
        lambda x: flows.fct_send(x.dst, x.port, x.flows, x.size, x.gap, x.cc, x.tos, x.timeout),
        "short flows one after another, their completion times",
    )
    a.add_argument("--dst", required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--flows", type=int, default=20)
    a.add_argument("--size", type=int, default=100_000)
    a.add_argument("--gap", type=float, default=0.02)
    a.add_argument("--cc", default=None)
    a.add_argument("--tos", type=_tos, default=0)
    a.add_argument("--timeout", type=float, default=60)
    return p


def _job_sender(a: argparse.ArgumentParser, seed: int | None, seed_help: str) -> None:
    """The options of both job senders: where, what, and its production."""
    a.add_argument("--dst", required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--messages", type=int, default=32)
    a.add_argument("--size", type=int, default=65536)
    a.add_argument("--jobs", type=int, default=10)
    a.add_argument("--tos", type=_tos, default=0)
    a.add_argument("--job-base", type=int, default=0)
    a.add_argument(
        "--gap-us",
        type=gap_arg,
        default=("none", 0.0),
        help="production: none, fixed:US or exp:US (approxnet.testbed.traffic.production)",
    )
    a.add_argument("--gap-seed", type=int, default=seed, help=seed_help)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["exec-at"]:  # exec-at T PROGRAM ARGS... (no option parsing)
        exec_at(float(argv[1]), argv[2:])
    x = _parser().parse_args(argv)
    print(json.dumps(x.run(x)), flush=True)
    return 0
