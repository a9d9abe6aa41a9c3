"""Tracker (seed 002 §4.1, §4.4): GPS readings sent one per datagram, the
receiver keeping a cumulative moving average of the walking speed.

The trace is generated (the paper's was a phone's walk around a campus):
``TRACE_POINTS`` = 945 readings one second apart, speed around 1.56 m/s,
seeded. Each datagram is a 4-byte precise prefix (the reading's index,
which is also its time in seconds) and the latitude and longitude as two
64-bit doubles, approximate. The receiver discards a reading that would
mean a speed above ``MAX_SPEED`` (the plausibility filter of §4.1: faster
than an Olympic sprinter) and averages the speeds between the readings it
keeps. Over TCP the same readings arrive intact, in order, late.

    python -m approxnet.sap.tracker recv --proto sap --addr 10.77.2.2:7970
    python -m approxnet.sap.tracker send --proto sap --addr 10.77.2.2:7970 --gap-ms 5
"""

from __future__ import annotations

import argparse
import json
import math
import random
import socket
import struct
import sys
import time
from typing import Any

from . import SapListener, SapSocket

TRACE_POINTS = 945
MEAN_SPEED = 1.56
#: m/s; a sprinter's top speed (~12.4 m/s): faster readings are implausible.
MAX_SPEED = 12.5
EARTH_RADIUS = 6_371_000.0
RECORD = struct.Struct(">Idd")


def trace(seed: int, n: int = TRACE_POINTS) -> list[tuple[float, float]]:
    """A seeded walk: (lat, lon) in degrees, one reading per second."""
    rng = random.Random(seed)
    lat, lon, heading = 47.6553, -122.3035, rng.uniform(0, 2 * math.pi)
    points = [(lat, lon)]
    for _ in range(n - 1):
        heading += rng.gauss(0, 0.3)
        step = max(0.0, rng.gauss(MEAN_SPEED, 0.3))
        lat += math.degrees(step * math.cos(heading) / EARTH_RADIUS)
        lon += math.degrees(step * math.sin(heading) / (EARTH_RADIUS * math.cos(math.radians(lat))))
        points.append((lat, lon))
    return points


def distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Haversine distance in metres (NaN-safe: NaN in, NaN out)."""
    p1, p2 = math.radians(a[0]), math.radians(b[0])
    dp, dl = p2 - p1, math.radians(b[1] - a[1])
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS * math.asin(math.sqrt(min(max(h, 0.0), 1.0)))


class SpeedAverage:
    """Cumulative moving average of speed with the plausibility filter."""

    def __init__(self) -> None:
        self.last: tuple[int, tuple[float, float]] | None = None
        self.average = 0.0
        self.samples = 0
        self.discarded = 0

    def update(self, t: int, point: tuple[float, float]) -> None:
        if not all(math.isfinite(x) for x in point) or abs(point[0]) > 90:
            self.discarded += 1
            return
        if self.last is None:
            self.last = (t, point)
            return
        t0, p0 = self.last
        if t <= t0:
            self.discarded += 1
            return
        speed = distance(p0, point) / (t - t0)
        if not math.isfinite(speed) or speed > MAX_SPEED:
            self.discarded += 1
            return
        self.samples += 1
        self.average += (speed - self.average) / self.samples
        self.last = (t, point)


def ground_truth(seed: int) -> float:
    avg = SpeedAverage()
    for t, p in enumerate(trace(seed)):
        avg.update(t, p)
    return avg.average


def send(proto: str, peer: str, seed: int, gap_s: float, window: bool = True) -> dict[str, Any]:
    points = trace(seed)
    start = time.monotonic()
    host, port = peer.rsplit(":", 1)
    if proto == "sap":
        s = SapSocket.connect(peer, congestion_window=window)
        s.mode = "approximate"
        for i, p in enumerate(points):
            s.send(RECORD.pack(i, *p), precise_len=4)
            time.sleep(max(0.0, start + (i + 1) * gap_s - time.monotonic()))
        s.close(timeout_s=30)
    else:
        with socket.create_connection((host, int(port)), timeout=30) as c:
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for i, p in enumerate(points):
                c.sendall(RECORD.pack(i, *p))
                time.sleep(max(0.0, start + (i + 1) * gap_s - time.monotonic()))
    return {"sent": len(points), "seconds": time.monotonic() - start}


def recv(proto: str, bind: str, seed: int, timeout_s: float) -> dict[str, Any]:
    avg = SpeedAverage()
    arrivals: list[float] = []
    received = 0
    if proto == "sap":
        listener = SapListener(bind)
        print("ready", flush=True)
        s = listener.accept(timeout_s=timeout_s)
        if s is None:
            return {"error": "no sender"}
        while (d := s.recv(timeout_s=timeout_s)) is not None:
            if len(d.data) == RECORD.size:
                i, lat, lon = RECORD.unpack(d.data)
                arrivals.append(time.monotonic())
                received += 1
                avg.update(i, (lat, lon))
    else:
        host, port = bind.rsplit(":", 1)
        srv = socket.create_server((host, int(port)))
        print("ready", flush=True)
        srv.settimeout(timeout_s)
        c, _ = srv.accept()
        c.settimeout(timeout_s)
        buf = b""
        while chunk := c.recv(65536):
            now = time.monotonic()
            buf += chunk
            while len(buf) >= RECORD.size:
                i, lat, lon = RECORD.unpack(buf[: RECORD.size])
                buf = buf[RECORD.size :]
                arrivals.append(now)
                received += 1
                avg.update(i, (lat, lon))
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    mean_gap = sum(gaps) / len(gaps) if gaps else 0.0
    var = sum((g - mean_gap) ** 2 for g in gaps) / len(gaps) if gaps else 0.0
    truth = ground_truth(seed)
    return {
        "received": received,
        "discarded": avg.discarded,
        "speed": avg.average,
        "truth": truth,
        "error": abs(avg.average - truth) / truth,
        "gap_mean_s": mean_gap,
        "gap_sd_s": math.sqrt(var),
        "gap_max_s": max(gaps, default=0.0),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m approxnet.sap.tracker")
    p.add_argument("cmd", choices=("send", "recv"))
    p.add_argument("--proto", choices=("sap", "tcp"), required=True)
    p.add_argument("--addr", required=True, help="receiver ip:port")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--gap-ms", type=float, default=5.0)
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--no-window", action="store_true", help="SAP without the in-flight cap")
    a = p.parse_args(argv)
    if not a.gap_ms >= 0:
        p.error("--gap-ms must be >= 0")
    if a.cmd == "send":
        out = send(a.proto, a.addr, a.seed, a.gap_ms / 1000, window=not a.no_window)
    else:
        out = recv(a.proto, a.addr, a.seed, a.timeout)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
