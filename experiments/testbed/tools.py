"""Bounded traffic tools run *inside* testbed hosts by the experiments.

Standard library only (each runs as its own process under `ip netns exec`).
Every tool is bounded in count and time, prints `ready` on stdout once its
socket is bound (servers) and one JSON line on exit. Times are
`time.monotonic()` (CLOCK_MONOTONIC), which every namespace of the machine
shares, so the orchestrator can subtract a sender's time from a receiver's.

Approximate jobs over kernel transports (seed 000 section 7.1):

* `tcp-job-send --mode ss`: SampleSend. Per job, sample ceil(MSR x N) of the
  N messages uniformly (seeded) and send only those over one kernel TCP
  connection; the job completes when the receiver says it has them all.
* `tcp-job-send --mode es`: EarlySend. Send all N messages in order and stop
  as soon as the receiver says ceil(MSR x N) have arrived; bytes already in
  the socket buffer still cross the network (and delay the next job).
* `udp-job-send`: plain UDP. Send every datagram of every message as fast
  as the socket takes them (UDP GSO batches); no feedback, no guarantee.
  The receiver records when each message became whole, so the caller can
  take JCT = ceil(MSR x N)-th whole message at the receiver - job start.

Production (`--gap-us`, seed 000 sections 2.2 and 7.1): by default (`none`)
every message of a job exists when the job starts. With `fixed:US` or
`exp:US` the first message is produced at job start and each later one a
gap after the previous (exp: exponential gaps of that mean); a message is
sent no sooner than its production time. SampleSend still sends only its
sampled ceil(MSR x N), each as it is produced (so it waits for the last
sampled one); EarlySend sends each as produced and stops when "done"
arrives; UDP sends each as produced. JCT counts from the first production
(job start). The gaps are `GapRng` (splitmix64) draws seeded by
`--gap-seed` alone, one per gap in job order: the same production times as
`approxnet-perf client --gap-us ... --gap-seed ...`.

Helpers: `exec-at T PROGRAM ARGS...` (sleep until monotonic T, then exec),
`capture` (count DATA packets that arrive reordered, per queue change),
`cbr` (paced UDP with a DSCP queue schedule), `sink` (a bound UDP
socket that never reads: the kernel drops, no ICMP), `fct-send` /
`fct-server` (short non-approximate TCP flows and their completion times).
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import random
import select
import socket
import struct
import sys
import time
from typing import Any

from approxnet import must_deliver

#: job, index, messages in the job, messages needed, payload length
TCP_HDR = struct.Struct("!IIIII")
#: job, message, fragment, fragments of the message, messages in the job
UDP_HDR = struct.Struct("!IIHHI")
DONE = struct.Struct("!I")
UDP_PAYLOAD = 1472  # fills a 1500-byte IP packet
UDP_SEGMENT = 103  # linux/udp.h: GSO segment size (SOL_UDP)
GSO_BATCH = 40  # 40 x 1472 B < 64 KiB
SO_TIMESTAMPNS = 35  # asm-generic/socket.h
SO_RCVBUFFORCE = 33


MASK64 = (1 << 64) - 1
#: the largest gap accepted (as approxnet-perf): 10 s
MAX_GAP_US = 10e6


class GapRng:
    """splitmix64, exactly as approxnet-perf's `produce.rs`: same seed, same
    gaps, bit for bit."""

    def __init__(self, seed: int) -> None:
        self.x = seed & MASK64

    def unit(self) -> float:
        """Uniform in [0, 1) with 53 bits."""
        self.x = (self.x + 0x9E3779B97F4A7C15) & MASK64
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        z ^= z >> 31
        return (z >> 11) * (1.0 / (1 << 53))


def parse_gap(spec: str) -> tuple[str, float]:
    """`none`, `fixed:US` (>= 0) or `exp:US` (> 0) -> (kind, ns); the
    errors say what is expected (argparse turns a ValueError into exit 2)."""
    if spec == "none":
        return ("none", 0.0)
    kind, _, v = spec.partition(":")
    try:
        us = float(v)
    except ValueError:
        raise ValueError(f"--gap-us {spec!r}: expected none, fixed:US or exp:US") from None
    if kind not in ("fixed", "exp"):
        raise ValueError(f"--gap-us {spec!r}: expected none, fixed:US or exp:US")
    if not (math.isfinite(us) and us <= MAX_GAP_US):
        raise ValueError(f"--gap-us {spec!r}: give a gap of at most {MAX_GAP_US:g} us")
    if us < 0 or (kind == "exp" and us == 0):
        raise ValueError(f"--gap-us {spec!r}: the gap must be >= 0 (fixed) or > 0 (exp)")
    return (kind, float(math.floor(us * 1000.0 + 0.5)) if kind == "fixed" else us * 1000.0)


def production_offsets(gap: tuple[str, float], rng: GapRng, n: int) -> list[int]:
    """Production time of each of a job's `n` messages, ns after job start:
    the first at 0, each later one a gap after the previous."""
    kind, ns = gap
    out, at = [], 0
    for i in range(n):
        if i > 0:
            if kind == "fixed":
                at += int(ns)
            elif kind == "exp":
                at += math.floor(-ns * math.log(1.0 - rng.unit()) + 0.5)
        out.append(at)
    return out


def _gap_arg(spec: str) -> tuple[str, float]:
    try:
        return parse_gap(spec)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _sleep_until(t: float) -> None:
    left = t - time.monotonic()
    if left > 0:
        time.sleep(left)


def _ready() -> None:
    print("ready", flush=True)


def _connect(dst: str, port: int, tos: int, cc: str | None, timeout: float) -> socket.socket:
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if cc:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        s.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            s.connect((dst, port))
            return s
        except (ConnectionRefusedError, TimeoutError):
            s.close()
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _recv_exact(s: socket.socket, view: memoryview, n: int) -> bool:
    got = 0
    while got < n:
        k = s.recv_into(view[got:n])
        if k == 0:
            return False
        got += k
    return True


# --------------------------------------------------------------------------
# approximate jobs over kernel TCP


def tcp_job_server(port: int, timeout: float, conns: int) -> dict[str, Any]:
    """Serve `conns` connections one after another (each until EOF); per job,
    send DONE once `need` of its messages have arrived whole."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(conns)
    _ready()
    deadline = time.monotonic() + timeout
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    jobs: dict[int, dict[str, Any]] = {}
    for _ in range(conns):
        srv.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            c, _ = srv.accept()
        except TimeoutError:
            break
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            while True:
                if not _recv_exact(c, view, TCP_HDR.size):
                    break
                job, _idx, _n, need, length = TCP_HDR.unpack_from(buf)
                left = length
                while left:
                    k = c.recv_into(view[: min(left, len(buf))])
                    if k == 0:
                        raise ConnectionError("EOF inside a message")
                    left -= k
                j = jobs.setdefault(job, {"got": 0, "bytes": 0, "done_at": None})
                j["got"] += 1
                j["bytes"] += length
                if j["got"] == need and j["done_at"] is None:
                    j["done_at"] = time.monotonic()
                    c.sendall(DONE.pack(job))
        except (TimeoutError, ConnectionError):
            pass
        c.close()
    return {"jobs": {str(k): v for k, v in sorted(jobs.items())}}


def tcp_job_send(
    dst: str,
    port: int,
    mode: str,
    msr: float,
    messages: int,
    size: int,
    jobs: int,
    cc: str | None,
    tos: int,
    seed: int,
    timeout: float,
    job_base: int,
    seconds: float = math.inf,
    gap: tuple[str, float] = ("none", 0.0),
    gap_seed: int | None = None,
) -> dict[str, Any]:
    """SampleSend (`ss`) or EarlySend (`es`) over one kernel TCP connection:
    `jobs` jobs one after another, but no new job after `seconds`; messages
    produced over time by `gap` (see the module doc)."""
    rng = random.Random(seed)
    grng = GapRng(seed if gap_seed is None else gap_seed)
    s = _connect(dst, port, tos, cc, 5.0)
    deadline = time.monotonic() + timeout
    need_n = must_deliver(msr, messages)
    payload = bytes(size)
    out = []
    pending = b""
    start = time.monotonic()
    for j in range(job_base, job_base + jobs):
        if time.monotonic() - start >= seconds:
            break
        offs = production_offsets(gap, grng, messages)
        if mode == "ss":
            chosen = sorted(rng.sample(range(messages), need_n))
        else:
            chosen = list(range(messages))
        t0 = time.monotonic()  # the first message's production
        done = False
        sent_msgs = sent_bytes = 0
        for idx in chosen:
            due = t0 + offs[idx] / 1e9
            if mode == "es":
                # Until it is produced, and then once more: stop as soon as
                # the receiver says it has enough.
                done, pending = _wait_done(s, due, pending, j)
                if done:
                    break
            else:
                _sleep_until(due)
            s.sendall(TCP_HDR.pack(j, idx, messages, need_n, size) + payload)
            sent_msgs += 1
            sent_bytes += TCP_HDR.size + size
            if time.monotonic() > deadline:
                raise TimeoutError("tcp-job-send: deadline")
        while not done:
            s.settimeout(max(deadline - time.monotonic(), 0.01))
            data = s.recv(64)
            if not data:
                raise ConnectionError("receiver closed")
            pending += data
            done = _has_done(pending, j)
        pending = _drop_done(pending, j)
        out.append(
            {
                "job": j,
                "t0": t0,
                "jct_s": time.monotonic() - t0,
                "messages_sent": sent_msgs,
                "bytes_sent": sent_bytes,
                "produced_s": offs[-1] / 1e9,
            }
        )
    used = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
    s.close()
    return {
        "mode": mode,
        "cc": used,
        "need": need_n,
        "start": start,
        "end": time.monotonic(),
        "jobs": out,
    }


def _wait_done(s: socket.socket, until: float, pending: bytes, job: int) -> tuple[bool, bytes]:
    """Reads "done" messages until `until` (monotonic); (whether `job` is
    done, what is still unparsed). Polls at least once."""
    while True:
        left = until - time.monotonic()
        r, _, _ = select.select([s], [], [], max(left, 0.0))
        if r:
            data = s.recv(64)
            if not data:
                raise ConnectionError("receiver closed")
            pending += data
            if _has_done(pending, job):
                return True, pending
        elif left <= 0:
            return False, pending


def _has_done(pending: bytes, job: int) -> bool:
    return any(
        DONE.unpack_from(pending, o)[0] == job
        for o in range(0, len(pending) - len(pending) % DONE.size, DONE.size)
    )


def _drop_done(pending: bytes, job: int) -> bytes:
    keep = b""
    whole = len(pending) - len(pending) % DONE.size
    for o in range(0, whole, DONE.size):
        if DONE.unpack_from(pending, o)[0] != job:
            keep += pending[o : o + DONE.size]
    return keep + pending[whole:]


# --------------------------------------------------------------------------
# approximate jobs over plain UDP


def udp_job_send(
    dst: str,
    port: int,
    messages: int,
    size: int,
    jobs: int,
    tos: int,
    job_base: int,
    gap: tuple[str, float] = ("none", 0.0),
    gap_seed: int = 1,
) -> dict[str, Any]:
    """Every datagram of every message, each message as soon as it is
    produced (`gap`), unpaced: UDP GSO batches of up to 40 datagrams per
    `sendmsg` (one `sendto` per datagram if the kernel refuses GSO), so the
    sender is not Python-bound."""
    grng = GapRng(gap_seed)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    chunk = UDP_PAYLOAD - UDP_HDR.size
    frags = math.ceil(size / chunk)
    body = bytes(chunk)
    gso = [(socket.SOL_UDP, UDP_SEGMENT, struct.pack("=H", UDP_PAYLOAD))]
    use_gso = True
    out = []
    errors = 0
    for j in range(job_base, job_base + jobs):
        offs = production_offsets(gap, grng, messages)
        t0 = time.monotonic()
        for m in range(messages):
            _sleep_until(t0 + offs[m] / 1e9)
            segs = [
                UDP_HDR.pack(j, m, f, frags, messages) + body[: min(chunk, size - f * chunk)]
                for f in range(frags)
            ]
            for b in range(0, frags, GSO_BATCH):
                batch = segs[b : b + GSO_BATCH]
                if use_gso:
                    try:
                        s.sendmsg([b"".join(batch)], gso, 0, (dst, port))
                        continue
                    except OSError as e:
                        if e.errno not in (errno.EIO, errno.EINVAL, errno.ENOPROTOOPT):
                            errors += len(batch)
                            continue
                        use_gso = False
                for d in batch:
                    try:
                        s.sendto(d, (dst, port))
                    except OSError:
                        errors += 1
        out.append({"job": j, "t0": t0, "send_s": time.monotonic() - t0})
    return {"frags_per_message": frags, "send_errors": errors, "gso": use_gso, "jobs": out}


def udp_job_recv(port: int, timeout: float, idle: float) -> dict[str, Any]:
    """Per job: messages received whole and the kernel arrival time of the
    last datagram (SO_TIMESTAMPNS, converted to the monotonic clock, so a
    slow Python loop does not inflate it). Stops `idle` s after the last
    datagram, or at `timeout`."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)  # root: past rmem_max
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.bind(("0.0.0.0", port))
    _ready()
    # CLOCK_REALTIME -> CLOCK_MONOTONIC offset (constant over a run).
    offset = time.time() - time.monotonic()
    deadline = time.monotonic() + timeout
    frags: dict[tuple[int, int], int] = {}
    jobs: dict[int, dict[str, Any]] = {}
    got_any = False
    cmsg_space = socket.CMSG_SPACE(16)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        s.settimeout(min(left, idle) if got_any else left)
        try:
            data, anc, _flags, _addr = s.recvmsg(2048, cmsg_space)
        except TimeoutError:
            break
        now = time.monotonic()
        for level, kind, val in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(val) >= 16:
                sec, nsec = struct.unpack("=qq", val[:16])
                now = sec + nsec / 1e9 - offset
        got_any = True
        job, msg, _frag, nfrag, nmsg = UDP_HDR.unpack_from(data)
        key = (job, msg)
        frags[key] = frags.get(key, 0) + 1
        j = jobs.setdefault(
            job,
            {
                "messages": nmsg,
                "datagrams": 0,
                "complete": 0,
                "first": now,
                "last": now,
                "complete_at": [],
            },
        )
        j["datagrams"] += 1
        j["last"] = max(j["last"], now)
        if frags[key] == nfrag:
            j["complete"] += 1
            j["complete_at"].append(now)
    return {"jobs": {str(k): v for k, v in sorted(jobs.items())}}


# --------------------------------------------------------------------------
# background and sinks


def cbr(
    dst: str, port: int, rate_mbps: float, seconds: float, schedule: str, size: int, burst: int
) -> dict[str, Any]:
    """Paced UDP at `rate_mbps` (IP bytes) for `seconds` or until stdin
    closes; `schedule` is `t:queue,...` (queue q -> DSCP q<<3) relative to
    the start. Sends `burst` datagrams per `sendmsg` (UDP GSO) to spare the
    CPU. Behind on its schedule (a busy CPU), it catches up in bursts of at
    most 256 datagrams; `achieved_mbps` is what it really sent."""
    steps = sorted((float(t), int(q)) for t, q in (x.split(":") for x in schedule.split(",")))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    payload = bytes(size)
    block = payload * burst
    gso = [(socket.SOL_UDP, UDP_SEGMENT, struct.pack("=H", size))] if burst > 1 else []
    per_s = rate_mbps * 1e6 / 8 / (size + 28)
    _ready()
    t0 = time.monotonic()
    sent = errors = 0
    cur = -1
    log = []
    while True:
        now = time.monotonic()
        el = now - t0
        if el >= seconds:
            break
        q = [qq for t, qq in steps if t <= el][-1] if steps[0][0] <= el else steps[0][1]
        if q != cur:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, q << 5)
            cur = q
            log.append({"t": now, "queue": q})
        owed = min(int(el * per_s) - sent, 256)
        while owed >= burst:
            try:
                s.sendmsg([block], gso, 0, (dst, port))
            except OSError:
                errors += burst
            sent += burst
            owed -= burst
        if owed < burst:
            # Sleep briefly; stop early when the orchestrator closes stdin.
            if select.select([sys.stdin], [], [], 0.0005)[0] and not sys.stdin.readline():
                break
    el = time.monotonic() - t0
    return {
        "t0": t0,
        "seconds": el,
        "sent": sent,
        "errors": errors,
        "rate_mbps": rate_mbps,
        "achieved_mbps": sent * (size + 28) * 8 / max(el, 1e-9) / 1e6,
        "switches": log,
    }


def sink(port: int, seconds: float) -> dict[str, Any]:
    """A bound UDP socket that never reads (so the host sends no ICMP)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
    s.bind(("0.0.0.0", port))
    _ready()
    # Until the orchestrator closes stdin (or is gone), at most `seconds`.
    select.select([sys.stdin], [], [], seconds)
    return {"port": port}


# --------------------------------------------------------------------------
# short non-approximate flows


def fct_server(port: int, timeout: float) -> dict[str, Any]:
    """Accept connections until stdin closes or `timeout`; read `n` bytes
    (8-byte header), reply 1 byte."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(16)
    _ready()
    deadline = time.monotonic() + timeout
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    served = 0
    while time.monotonic() < deadline:
        r, _, _ = select.select([srv, sys.stdin], [], [], max(deadline - time.monotonic(), 0.01))
        if sys.stdin in r and not sys.stdin.readline():
            break  # the orchestrator closed stdin: done
        if srv not in r:
            continue
        c, _ = srv.accept()
        c.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            if not _recv_exact(c, view, 8):
                c.close()
                continue
            (n,) = struct.unpack_from("!Q", buf)
            while n:
                k = c.recv_into(view[: min(n, len(buf))])
                if k == 0:
                    break
                n -= k
            c.sendall(b"k")
            served += 1
        except (TimeoutError, ConnectionError):
            pass
        c.close()
    return {"served": served}


def fct_send(
    dst: str, port: int, flows: int, size: int, gap: float, cc: str | None, tos: int, timeout: float
) -> dict[str, Any]:
    """`flows` short flows one after another (`gap` s apart): connect, send
    `size` bytes, wait for the 1-byte reply. FCT includes the handshake."""
    deadline = time.monotonic() + timeout
    body = struct.pack("!Q", size) + bytes(size)
    out = []
    for i in range(flows):
        if time.monotonic() > deadline:
            break
        t0 = time.monotonic()
        s = _connect(dst, port, tos, cc, 5.0)
        s.settimeout(max(deadline - time.monotonic(), 0.01))
        s.sendall(body)
        ok = s.recv(1) == b"k"
        out.append({"flow": i, "t0": t0, "fct_s": time.monotonic() - t0, "ok": ok})
        s.close()
        time.sleep(gap)
    return {"size": size, "flows": out}


def capture(
    iface: str, port: int, seconds: float, max_packets: int, reorder: int, acks: bool = False
) -> dict[str, Any]:
    """Watch approxnet DATA packets to UDP `port` arriving on `iface` (an
    AF_PACKET socket, no tcpdump needed) until stdin closes, `seconds` or
    `max_packets`. Per connection, counts packets that arrive `reorder` or
    more transmission seqs behind the newest seen (what the sender's fast
    loss detection with that threshold would call lost, were the ACKs
    prompt), and how many of those changed DSCP (queue) against the newest.
    With `acks`, the same for ACKs coming *from* `port` (by the DATA seq
    they echo), i.e. reordering on the return path."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 32 << 20)
    s.bind((iface, 0))
    _ready()
    deadline = time.monotonic() + seconds
    conns: dict[int, dict[str, int]] = {}
    newest: dict[int, tuple[int, int]] = {}
    seen = 0
    while seen < max_packets:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([s, sys.stdin], [], [], left)
        if sys.stdin in r and not sys.stdin.readline():
            break
        if s not in r:
            continue
        frame = s.recv(256)
        ip = frame[14:]
        if len(ip) < 20 + 8 + 28 or ip[9] != 17:
            continue
        ihl = (ip[0] & 0x0F) * 4
        udp = ip[ihl:]
        if struct.unpack_from("!H", udp, 0 if acks else 2)[0] != port:
            continue
        hdr = udp[8:]
        if len(hdr) < 28 or hdr[1] != (2 if acks else 1):  # ACK or DATA only
            continue
        seen += 1
        conn = struct.unpack_from("!Q", hdr, 4)[0]
        seq = struct.unpack_from("!I", hdr, 24)[0]
        tos = ip[1] & 0xFC
        c = conns.setdefault(conn, {"data": 0, "late": 0, "late_other_queue": 0})
        c["data"] += 1
        top = newest.get(conn)
        if top is None or seq > top[0]:
            newest[conn] = (seq, tos)
        elif top[0] - seq >= reorder:
            c["late"] += 1
            c["late_other_queue"] += int(tos != top[1])
    total = {k: sum(c[k] for c in conns.values()) for k in ("data", "late", "late_other_queue")}
    return {"iface": iface, "acks": acks, "reorder": reorder, "connections": len(conns), **total}


def exec_at(at: float, argv: list[str]) -> None:
    """Sleep until monotonic time `at` (bounded by 30 s), then exec `argv`:
    starts several senders at the same instant (incast)."""
    time.sleep(min(max(at - time.monotonic(), 0.0), 30.0))
    os.execv(argv[0], argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["exec-at"]:  # exec-at T PROGRAM ARGS... (no option parsing)
        exec_at(float(argv[1]), argv[2:])
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("tcp-job-server")
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--timeout", type=float, default=60)
    a.add_argument("--conns", type=int, default=1)
    a = sub.add_parser("tcp-job-send")
    a.add_argument("--dst", required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--mode", choices=["ss", "es"], required=True)
    a.add_argument("--msr", type=float, required=True)
    a.add_argument("--messages", type=int, default=32)
    a.add_argument("--size", type=int, default=65536)
    a.add_argument("--jobs", type=int, default=10)
    a.add_argument("--cc", default=None)
    a.add_argument("--tos", type=lambda x: int(x, 0), default=0)
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("--timeout", type=float, default=60)
    a.add_argument("--job-base", type=int, default=0)
    a.add_argument("--seconds", type=float, default=math.inf, help="no new job after this")
    a.add_argument(
        "--gap-us",
        type=_gap_arg,
        default=("none", 0.0),
        help="production: none, fixed:US or exp:US (module doc)",
    )
    a.add_argument("--gap-seed", type=int, default=None, help="seeds the gaps (default --seed)")
    a = sub.add_parser("udp-job-send")
    a.add_argument("--dst", required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--messages", type=int, default=32)
    a.add_argument("--size", type=int, default=65536)
    a.add_argument("--jobs", type=int, default=10)
    a.add_argument("--tos", type=lambda x: int(x, 0), default=0)
    a.add_argument("--job-base", type=int, default=0)
    a.add_argument(
        "--gap-us",
        type=_gap_arg,
        default=("none", 0.0),
        help="production: none, fixed:US or exp:US (module doc)",
    )
    a.add_argument("--gap-seed", type=int, default=1)
    a = sub.add_parser("udp-job-recv")
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--timeout", type=float, default=60)
    a.add_argument("--idle", type=float, default=0.5)
    a = sub.add_parser("cbr")
    a.add_argument("--dst", required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--rate-mbps", type=float, required=True)
    a.add_argument("--seconds", type=float, required=True)
    a.add_argument("--schedule", default="0:0", help="t:queue,... e.g. 0:4,1.5:3")
    a.add_argument("--size", type=int, default=UDP_PAYLOAD)
    a.add_argument("--burst", type=int, default=4, help="datagrams per sendmsg (GSO)")
    a = sub.add_parser("sink")
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--seconds", type=float, default=60)
    a = sub.add_parser("capture")
    a.add_argument("--iface", default="eth0")
    a.add_argument("--port", type=int, default=7700)
    a.add_argument("--seconds", type=float, default=60)
    a.add_argument("--max-packets", type=int, default=2_000_000)
    a.add_argument("--reorder", type=int, default=3)
    a.add_argument("--acks", action="store_true", help="ACKs from --port instead of DATA to it")
    a = sub.add_parser("fct-server")
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--timeout", type=float, default=60)
    a = sub.add_parser("fct-send")
    a.add_argument("--dst", required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--flows", type=int, default=20)
    a.add_argument("--size", type=int, default=100_000)
    a.add_argument("--gap", type=float, default=0.02)
    a.add_argument("--cc", default=None)
    a.add_argument("--tos", type=lambda x: int(x, 0), default=0)
    a.add_argument("--timeout", type=float, default=60)
    x = p.parse_args(argv)
    if x.cmd == "tcp-job-server":
        r = tcp_job_server(x.port, x.timeout, x.conns)
    elif x.cmd == "tcp-job-send":
        r = tcp_job_send(
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
        )
    elif x.cmd == "udp-job-send":
        r = udp_job_send(
            x.dst, x.port, x.messages, x.size, x.jobs, x.tos, x.job_base, x.gap_us, x.gap_seed
        )
    elif x.cmd == "udp-job-recv":
        r = udp_job_recv(x.port, x.timeout, x.idle)
    elif x.cmd == "cbr":
        r = cbr(x.dst, x.port, x.rate_mbps, x.seconds, x.schedule, x.size, x.burst)
    elif x.cmd == "sink":
        r = sink(x.port, x.seconds)
    elif x.cmd == "capture":
        r = capture(x.iface, x.port, x.seconds, x.max_packets, x.reorder, x.acks)
    elif x.cmd == "fct-server":
        r = fct_server(x.port, x.timeout)
    else:
        r = fct_send(x.dst, x.port, x.flows, x.size, x.gap, x.cc, x.tos, x.timeout)
    print(json.dumps(r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
