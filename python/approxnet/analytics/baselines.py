"""Sender-side sampling over kernel TCP: SampleSend and EarlySend.

Seed 000 (``000_9eba2c5297757960.txt``) §7.1: "ES sends messages as early
as possible over a reliable transport and stops sending once MSR data have
been received. SS samples messages uniformly [...] with a sampling rate of
MSR; it sends out the sampled messages over a reliable transport." As in
``approxnet.testbed.traffic`` (``tcp-job-send``), each source has one
kernel TCP connection to the aggregator:

* ``ss``: per stratum, a uniform random sample of ``ceil(f_h N_sh)`` of its
  records, sent reliably; done when every source's sample arrived;
* ``es``: every record, strata interleaved one message at a time in random
  order; the aggregator sends ``DONE(stratum)`` once the source's quota of
  that stratum arrived, and the source skips that stratum from then on
  (bytes already in the socket buffers still cross the network);
* ``all``: everything (``f = 1``): the reliable baseline over TCP.

The fractions ``f_h`` are the ones the estimators ask for (see
:func:`plan_fractions`), so SS and ES aim at the same ``emax``.

Framing: a META frame (``b"TCPM"``, then per stratum its key and size at the
source), then DATA frames (stratum, record count, records), EOF at the end.
"""

from __future__ import annotations

import math
import socket
import struct
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._native import must_deliver
from .errors import AnalyticsError
from .roles import Settings
from .sample import Sample, split

__all__ = ["TcpResult", "plan_fractions", "tcp_aggregate", "tcp_source", "run_tcp_loopback"]

MODES = ("ss", "es", "all")
_META = struct.Struct("!4sII")
_META_ENTRY = struct.Struct("!iI")
_DATA = struct.Struct("!iI")
_DONE = struct.Struct("!i")


def plan_fractions(
    parts: Sequence[npt.NDArray[np.void]], settings: Settings, seed: int = 0, iterations: int = 4
) -> dict[int, float]:
    """The sampling fraction per stratum the queries need for ``emax``: the
    adjust loop run offline on the whole data set (what a sender that sees
    all the data could compute before sending): a pilot sample, then
    ``iterations`` times a fresh sample at the fractions the estimates ask
    for. Includes the loop's margin."""
    data = np.concatenate(list(parts))
    rng = np.random.default_rng([seed, 99])
    strata = split(data, settings.strata_field)
    frac = dict.fromkeys(strata, settings.pilot)
    for _ in range(iterations + 1):
        s = Sample(data.dtype, settings.strata_field)
        for h, r in strata.items():
            k = min(len(r), max(2, math.ceil(frac[h] * len(r))))
            s.add(h, r[rng.choice(len(r), size=k, replace=False)])
            s.population[h] = len(r)
        need: dict[int, float] = {}
        for q in settings.queries:
            for h, f in q.required(s, settings.acc).items():
                need[h] = max(need.get(h, 0.0), f)
        frac = {h: need.get(h, frac[h]) for h in strata}
    return {h: min(1.0, f * (1.0 + settings.margin)) for h, f in frac.items()}


@dataclass
class TcpResult:
    """What the aggregator got over TCP."""

    sample: Sample
    started_s: float
    ended_s: float
    records_arrived: int
    bytes_arrived: int

    @property
    def jct_s(self) -> float:
        return self.ended_s - self.started_s


def _recv_exact(c: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = c.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("EOF")
        buf += chunk
    return bytes(buf)


def tcp_aggregate(
    listener: socket.socket,
    sources: int,
    dtype: np.dtype[np.void],
    settings: Settings,
    fractions: dict[int, float],
    mode: str,
    timeout_s: float = 120.0,
) -> TcpResult:
    """Accepts ``sources`` connections on ``listener`` and collects their
    records (``es``: telling each source when its quotas are met)."""
    if mode not in MODES:
        raise AnalyticsError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    sample = Sample(dtype, settings.strata_field)
    lock = threading.Lock()
    stats = {"records": 0, "bytes": 0}
    ends: list[float] = []
    errors: list[BaseException] = []
    deadline = time.monotonic() + timeout_s

    def serve(c: socket.socket) -> None:
        try:
            c.settimeout(max(0.1, deadline - time.monotonic()))
            magic, _, n = _META.unpack(_recv_exact(c, _META.size))
            if magic != b"TCPM":
                raise AnalyticsError("not an analytics TCP stream")
            quota: dict[int, int] = {}
            for _ in range(n):
                h, big_n = _META_ENTRY.unpack(_recv_exact(c, _META_ENTRY.size))
                with lock:
                    sample.add_population(h, big_n)
                quota[h] = must_deliver(fractions.get(h, 1.0), big_n)
            got: dict[int, int] = {}
            done_at = None
            while True:
                try:
                    hdr = _recv_exact(c, _DATA.size)
                except ConnectionError:
                    break
                h, k = _DATA.unpack(hdr)
                recs = np.frombuffer(_recv_exact(c, k * dtype.itemsize), dtype=dtype).copy()
                before = got.get(h, 0)
                got[h] = before + k
                with lock:
                    sample.add(h, recs)
                    stats["records"] += k
                    stats["bytes"] += _DATA.size + k * dtype.itemsize
                if mode == "es" and before < quota.get(h, 0) <= got[h]:
                    c.sendall(_DONE.pack(h))
                if (
                    mode == "es"
                    and done_at is None
                    and all(got.get(s, 0) >= q for s, q in quota.items())
                ):
                    done_at = time.monotonic()
                    c.sendall(_DONE.pack(-1))
            with lock:
                ends.append(done_at if done_at is not None else time.monotonic())
        except BaseException as e:
            errors.append(e)
        finally:
            c.close()

    threads = []
    started = math.nan
    listener.settimeout(max(0.1, deadline - time.monotonic()))
    for _ in range(sources):
        c, _ = listener.accept()
        if math.isnan(started):
            started = time.monotonic()
        t = threading.Thread(target=serve, args=(c,), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join(max(0.1, deadline - time.monotonic()))
    if errors:
        raise AnalyticsError(f"TCP aggregator: {errors[0]}")
    if len(ends) < sources:
        raise AnalyticsError("TCP aggregator: a source did not finish before the deadline")
    return TcpResult(sample, started, max(ends), stats["records"], stats["bytes"])


def tcp_source(
    dst: tuple[str, int],
    part: npt.NDArray[np.void],
    settings: Settings,
    fractions: dict[int, float],
    mode: str,
    seed: int = 0,
    source_id: int = 0,
    cc: str | None = None,
    timeout_s: float = 120.0,
) -> int:
    """Sends one source's records (SS, ES or all); returns records sent."""
    if mode not in MODES:
        raise AnalyticsError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    rng = np.random.default_rng([seed, source_id, 7])
    strata = {h: r[rng.permutation(len(r))] for h, r in split(part, settings.strata_field).items()}
    k = settings.per_message
    s = socket.create_connection(dst, timeout=min(10.0, timeout_s))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if cc:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    s.settimeout(timeout_s)
    meta = [_META.pack(b"TCPM", source_id, len(strata))]
    meta += [_META_ENTRY.pack(h, len(r)) for h, r in sorted(strata.items())]
    s.sendall(b"".join(meta))
    sent = 0
    try:
        if mode == "es":
            sent = _early_send(s, strata, k, rng)
        else:
            for h, r in sorted(strata.items()):
                n = len(r) if mode == "all" else must_deliver(fractions.get(h, 1.0), len(r))
                for i in range(0, n, k):
                    chunk = r[i : min(n, i + k)]
                    s.sendall(_DATA.pack(h, len(chunk)) + chunk.tobytes())
                sent += n
        s.shutdown(socket.SHUT_WR)
        while s.recv(4096):  # until the aggregator closes
            pass
    finally:
        s.close()
    return sent


def _early_send(
    s: socket.socket,
    strata: dict[int, npt.NDArray[np.void]],
    k: int,
    rng: np.random.Generator,
) -> int:
    order = np.concatenate([np.full(math.ceil(len(r) / k), h) for h, r in strata.items()])
    order = order[rng.permutation(len(order))]
    pos = dict.fromkeys(strata, 0)
    stopped: set[int] = set()
    pending = b""
    sent = 0
    s.setblocking(True)
    for h in order.tolist():
        if -1 in stopped:
            break
        if h in stopped:
            continue
        # Stop a stratum as soon as the aggregator says it has enough.
        s.settimeout(0.0)
        try:
            while data := s.recv(4096):
                pending += data
                while len(pending) >= _DONE.size:
                    (d,) = _DONE.unpack_from(pending)
                    stopped.add(d)
                    pending = pending[_DONE.size :]
        except (BlockingIOError, TimeoutError):
            pass
        s.settimeout(None)
        if h in stopped or -1 in stopped:
            continue
        r = strata[h]
        chunk = r[pos[h] : pos[h] + k]
        pos[h] += len(chunk)
        s.sendall(_DATA.pack(h, len(chunk)) + chunk.tobytes())
        sent += len(chunk)
    return sent


def run_tcp_loopback(
    parts: Sequence[npt.NDArray[np.void]],
    settings: Settings,
    fractions: dict[int, float],
    mode: str,
    host: str = "127.0.0.1",
    seed: int = 0,
    timeout_s: float = 120.0,
) -> tuple[TcpResult, int]:
    """SS / ES / all with every source a thread; returns the aggregator's
    result and the records the sources sent."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, 0))
    listener.listen(len(parts))
    port = listener.getsockname()[1]
    sent = [0] * len(parts)
    errors: list[BaseException] = []

    def src(i: int) -> None:
        try:
            sent[i] = tcp_source(
                (host, port), parts[i], settings, fractions, mode, seed, i, timeout_s=timeout_s
            )
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=src, args=(i,), daemon=True) for i in range(len(parts))]
    for t in threads:
        t.start()
    try:
        res = tcp_aggregate(
            listener, len(parts), parts[0].dtype, settings, fractions, mode, timeout_s
        )
    finally:
        listener.close()
    for t in threads:
        t.join(timeout_s)
    if errors:
        raise AnalyticsError(f"TCP source: {errors[0]}")
    return res, sum(sent)
