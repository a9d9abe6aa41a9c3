"""Approximate jobs over kernel transports, the baselines of seed 000 section 7.1.

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

Production (`--gap-us`, see `production`): SampleSend still sends only its
sampled ceil(MSR x N), each as it is produced (so it waits for the last
sampled one); EarlySend sends each as produced and stops when "done"
arrives; UDP sends each as produced. JCT counts from the first production
(job start). Times are `time.monotonic()` (CLOCK_MONOTONIC), which every
namespace of the machine shares, so the orchestrator can subtract a
sender's time from a receiver's.
"""

from __future__ import annotations

import errno
import math
import random
import select
import socket
import struct
import time
from typing import Any

from approxnet import must_deliver

from .production import GapRng, production_offsets
from .sockets import congestion_control, connect, ready, recv_exact, sleep_until

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


def tcp_job_server(port: int, timeout: float, conns: int) -> dict[str, Any]:
    """Serve `conns` connections one after another (each until EOF); per job,
    send DONE once `need` of its messages have arrived whole."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(conns)
    ready()
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
                if not recv_exact(c, view, TCP_HDR.size):
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
    s = connect(dst, port, tos, 5.0, cc, nodelay=True)
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
                sleep_until(due)
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
    used = congestion_control(s)
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
            sleep_until(t0 + offs[m] / 1e9)
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
    ready()
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
