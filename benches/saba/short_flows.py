"""What ``saba run``'s flow watching sees of a burst of short flows: the
old /proc poll (:class:`ConnWatch`, TCP only, every `--poll` s as the
wrapper did) against conntrack events (:class:`FlowWatch`), on the same
program at the same time. Root; two namespaces joined by a veth and a
cgroup of our own, all removed afterwards.

The program, in the cgroup of namespace A, opens `--conns` TCP
connections to a listener in B one after the other (connect, send 1
byte, keep it open `--hold` seconds, close, then `--gap` seconds), then sends one datagram from an
unconnected UDP socket to each of `--conns` ports of B. Reported: the
distinct connections each watcher saw, against how many there were.

    sudo .venv/bin/python benches/saba/short_flows.py --conns 200 --gap 0.001 \\
        --out results/saba/short_flows.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from approxnet.saba.cgroup import Cgroup
from approxnet.saba.ctevents import CtEvents
from approxnet.saba.flowwatch import OPENED, TCP, UDP, FlowWatch, flow_mark
from approxnet.saba.nftmark import CgroupMark, netns_prefix
from approxnet.saba.sockets import ConnWatch

A, B, PORT = "10.253.0.1", "10.253.0.2", 7001

PROGRAM = """
import socket, sys, time
n, gap, hold = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
for _ in range(n):
    s = socket.create_connection(("{b}", {port}))
    s.sendall(b"x")
    time.sleep(hold)
    s.close()
    time.sleep(gap)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n):
    u.sendto(b"y", ("{b}", 20000 + i))
"""
LISTENER = """
import socket, sys
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("{b}", {port}))
srv.listen(128)
print("ready", flush=True)
for _ in range(int(sys.argv[1])):
    c, _ = srv.accept()
    while c.recv(1024):  # until the program closes it
        pass
    c.close()
"""


def _sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conns", type=int, default=200)
    ap.add_argument("--gap", type=float, default=0.001, help="seconds between connections")
    ap.add_argument("--hold", type=float, default=0.0, help="seconds each is kept open")
    ap.add_argument("--poll", type=float, default=0.2, help="the /proc poll's period")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.conns < 1 or args.gap < 0 or args.hold < 0 or args.poll <= 0:
        ap.error("--conns must be >= 1, --gap and --hold >= 0, --poll > 0")
    tag = f"sf{os.getpid() % 100000}"
    na, nb = f"{tag}a", f"{tag}b"
    cg = None
    mark = None
    try:
        _sh("ip", "netns", "add", na)
        _sh("ip", "netns", "add", nb)
        _sh("ip", "link", "add", "va", "netns", na, "type", "veth", "peer", "vb", "netns", nb)
        for ns, dev, addr in ((na, "va", A), (nb, "vb", B)):
            _sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            _sh("ip", "-n", ns, "link", "set", dev, "up")
        cg = Cgroup.create(f"bench-{os.getpid()}")
        mark = CgroupMark(cg, f"bench{os.getpid()}", na, flow_mark(os.getpid()))
        mark.install(1)
        flows = FlowWatch(flow_mark(os.getpid()), CtEvents(na))
        rx = subprocess.Popen(
            [*netns_prefix(nb), sys.executable, "-c", LISTENER.format(b=B, port=PORT)]
            + [str(args.conns)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert rx.stdout is not None and rx.stdout.readline().strip() == "ready"
        procs = cg.add_self_file()

        def join() -> None:
            with open(procs, "w") as f:
                f.write("0")

        code = PROGRAM.format(b=B, port=PORT)
        t0 = time.monotonic()
        prog = subprocess.Popen(
            [*netns_prefix(na), sys.executable, "-c", code, str(args.conns), str(args.gap)]
            + [str(args.hold)],
            preexec_fn=join,
        )
        poll = ConnWatch()
        polled: set[object] = set()
        events: list[tuple[str, int, object]] = []
        while prog.poll() is None:
            polled |= poll.poll(cg.pids())
            events += flows.step(cg.pids())
            time.sleep(args.poll)
        wall = time.monotonic() - t0
        events += flows.step([])
        rx.communicate(timeout=60)
        opened = [f for what, _, f in events if what == OPENED]
        tcp = sum(1 for f in opened if getattr(f, "proto", None) == TCP)
        udp = sum(1 for f in opened if getattr(f, "proto", None) == UDP)
        doc = {
            "conns": args.conns,
            "gap_s": args.gap,
            "hold_s": args.hold,
            "poll_s": args.poll,
            "program_s": round(wall, 3),
            "tcp": {"there": args.conns, "poll_saw": len(polled), "events_saw": tcp},
            "udp": {"there": args.conns, "poll_saw": 0, "events_saw": udp},
            "events_lost": flows.events.lost,
            "closed": sum(1 for what, _, _ in events if what != OPENED),
            "load_average": os.getloadavg()[0],
        }
        print(json.dumps(doc))
        if args.out:
            with args.out.open("a") as f:
                f.write(json.dumps(doc) + "\n")
    finally:
        if mark is not None:
            mark.remove()
        if cg is not None:
            cg.remove()
        for ns in (na, nb):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


if __name__ == "__main__":
    main()
