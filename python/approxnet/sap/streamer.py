"""Streamer (seed 002 §4.1): a fixed stream of datagrams in approximate
mode whose contents both ends know in advance, so the receiver can tell
each datagram lost, damaged or intact and count the flipped bits.

Datagram ``i`` is a 4-byte precise prefix (``i``, big-endian; checksummed,
so a damaged prefix loses the datagram) followed by 32-bit words
``hash32(seed, i, k)`` — the paper's "32-bit counter through a hash
function that outputs 32 unbiased bits" — filling ``size`` bytes. The
receiver stops when the sender closes (or at its bound) and prints one
JSON line.

    python -m approxnet.sap.streamer recv --bind 10.77.2.2:7960 --count 2000 --seed 7
    python -m approxnet.sap.streamer send --peer 10.77.2.2:7960 --count 2000 --seed 7 --mbps 40
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
import time
from typing import Any

from . import SapListener, SapSocket

PREFIX = 4


def hash32(x: int) -> int:
    """A 32-bit mixer (the murmur3 finaliser): unbiased output bits."""
    x &= 0xFFFFFFFF
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & 0xFFFFFFFF
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & 0xFFFFFFFF
    x ^= x >> 16
    return x


def datagram(seed: int, i: int, size: int) -> bytes:
    """The agreed contents of datagram `i` (at least PREFIX + 4 bytes)."""
    words = (size - PREFIX + 3) // 4
    base = (seed + i * words) & 0xFFFFFFFF
    body = struct.pack(f">{words}I", *(hash32(base + k) for k in range(words)))
    return struct.pack(">I", i) + body[: size - PREFIX]


def send(
    peer: str, count: int, seed: int, size: int, mbps: float, window: bool = True
) -> dict[str, Any]:
    """Send `count` approximate datagrams paced at `mbps` (0: as fast as
    `send` returns, the socket's own congestion control alone), then
    close; `window=False` turns the socket's in-flight cap off."""
    sock = SapSocket.connect(peer, congestion_window=window)
    sock.mode = "approximate"
    gap = size * 8 / (mbps * 1e6) if mbps > 0 else 0.0
    start = time.monotonic()
    for i in range(count):
        sock.send(datagram(seed, i, size), precise_len=PREFIX)
        ahead = start + (i + 1) * gap - time.monotonic()
        if ahead > 0.002:  # batch the waits: Python sleeps are coarse
            time.sleep(ahead)
    sock.close(timeout_s=30)
    return {"sent": count, "seconds": time.monotonic() - start}


def recv(bind: str, count: int, seed: int, size: int, timeout_s: float) -> dict[str, Any]:
    """Receive until the sender closes; classify every datagram."""
    listener = SapListener(bind)
    print("ready", flush=True)
    sock = listener.accept(timeout_s=timeout_s)
    if sock is None:
        return {"error": "no sender"}
    seen: set[int] = set()
    intact = damaged = flagged = bad_index = 0
    damaged_bits = flipped = 0
    deadline = time.monotonic() + timeout_s
    while (d := sock.recv(timeout_s=max(deadline - time.monotonic(), 0.0))) is not None:
        (i,) = struct.unpack(">I", d.data[:PREFIX])
        if i >= count or i in seen or len(d.data) != size:
            bad_index += 1  # cannot happen: the prefix is checksummed
            continue
        seen.add(i)
        want = datagram(seed, i, size)
        bits = sum(bin(a ^ b).count("1") for a, b in zip(d.data, want, strict=True))
        flagged += d.damaged
        if bits == 0:
            intact += 1
        else:
            damaged += 1
            flipped += bits
            damaged_bits += (size - PREFIX) * 8
    return {
        "count": count,
        "intact": intact,
        "damaged": damaged,
        "lost": count - len(seen),
        "flagged_damaged": flagged,
        "bad_index": bad_index,
        "flipped_bits": flipped,
        "ber_in_damaged": flipped / damaged_bits if damaged_bits else 0.0,
        "closed": sock.peer_closed,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m approxnet.sap.streamer")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("send", "recv"):
        s = sub.add_parser(name)
        s.add_argument("--count", type=int, required=True)
        s.add_argument("--seed", type=int, default=1)
        s.add_argument("--size", type=int, default=1024)
        if name == "send":
            s.add_argument("--peer", required=True)
            s.add_argument("--mbps", type=float, required=True, help="0: unpaced")
            s.add_argument("--no-window", action="store_true", help="no in-flight cap")
        else:
            s.add_argument("--bind", required=True)
            s.add_argument("--timeout", type=float, default=60.0)
    a = p.parse_args(argv)
    if a.count < 1 or a.size < PREFIX + 4:
        p.error(f"--count must be >= 1 and --size >= {PREFIX + 4}")
    if a.cmd == "send":
        if not a.mbps >= 0:
            p.error("--mbps must be >= 0")
        out = send(a.peer, a.count, a.seed, a.size, a.mbps, window=not a.no_window)
    else:
        out = recv(a.bind, a.count, a.seed, a.size, a.timeout)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
