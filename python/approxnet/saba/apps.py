"""Three of the profiler's workloads (seed 003 §4.1, §7.1; issue 15 §1),
each one worker process per host, over kernel TCP. Each returns its
(start, end) wall times: start when every worker has its input and is
connected (a barrier), so process and library start-up are not counted.

* :func:`logistic_regression` (LR-like): data-parallel logistic
  regression with ``torch.distributed`` (gloo): each iteration a
  gradient over the local shard, an all-reduce of the whole gradient
  (`features` float32), an update. Communication-bound: the gradient is
  large and the shard small. Dataset size = bytes of the local shard.
* :func:`hash_join` (SQL-like): two generated tables per worker, both
  hash-partitioned on the key and shuffled all-to-all, then a hash
  build / probe on each partition. Dataset size = bytes of both tables.
* :func:`word_count`: generated text per worker, counted locally, the
  counts hash-partitioned to their reducers and merged — a map-heavy job
  with little communication. Dataset size = bytes of text.

All data is generated from the worker's index (deterministic). `ready`
is called once the worker is set up, just before its start barrier (the
start gate of several jobs run together).
"""

from __future__ import annotations

import os
import time
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import timedelta

import numpy as np

from .mesh import Mesh

__all__ = ["logistic_regression", "hash_join", "word_count", "ROW_BYTES"]

#: one row of a join table: an 8-byte key and 56 bytes of payload
ROW_BYTES = 64
_MIX = np.uint64(0x9E3779B97F4A7C15)


def logistic_regression(
    index: int,
    hosts: Sequence[str],
    port: int,
    iterations: int,
    nbytes: int,
    features: int,
    ready: Callable[[], None] = lambda: None,
) -> tuple[float, float, dict[str, float]]:
    """One rank of data-parallel logistic regression over gloo."""
    import torch
    import torch.distributed as dist

    os.environ.setdefault("GLOO_SOCKET_IFNAME", "eth0")
    torch.set_num_threads(1)
    n = len(hosts)
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://{hosts[0]}:{port}",
        rank=index,
        world_size=n,
        timeout=timedelta(seconds=120),
    )
    try:
        samples = max(1, nbytes // (4 * features))
        g = torch.Generator().manual_seed(1000 + index)
        x = torch.randn(samples, features, generator=g)
        truth = torch.randn(features, generator=torch.Generator().manual_seed(7))
        y = (x @ truth > 0).float()
        w = torch.zeros(features)
        ready()
        dist.barrier()
        start = time.time()
        for _ in range(iterations):
            p = torch.sigmoid(x @ w)
            grad = x.T @ (p - y) / samples
            dist.all_reduce(grad)
            w -= 0.5 * grad / n
        end = time.time()
        p = torch.sigmoid(x @ w).clamp(1e-7, 1 - 1e-7)
        loss = float(-(y * p.log() + (1 - y) * (1 - p).log()).mean())
    finally:
        dist.destroy_process_group()
    return start, end, {"loss": loss, "samples": float(samples)}


def _owner(keys: np.ndarray, n: int) -> np.ndarray:
    """The partition of each key (a multiplicative hash)."""
    return ((keys.astype(np.uint64) * _MIX) >> np.uint64(33)) % np.uint64(n)


def _split(keys: np.ndarray, payload: np.ndarray, n: int) -> list[bytes]:
    owner = _owner(keys, n)
    return [keys[owner == j].tobytes() + payload[owner == j].tobytes() for j in range(n)]


def _unpack(blob: bytes) -> tuple[np.ndarray, np.ndarray]:
    rows = len(blob) // ROW_BYTES
    keys = np.frombuffer(blob[: 8 * rows], dtype=np.int64)
    payload = np.frombuffer(blob[8 * rows :], dtype=np.uint8).reshape(rows, ROW_BYTES - 8)
    return keys, payload


def hash_join(
    index: int,
    hosts: Sequence[str],
    port: int,
    nbytes: int,
    dscp: int = 0,
    ready: Callable[[], None] = lambda: None,
) -> tuple[float, float, dict[str, float]]:
    """One worker of a distributed hash join of tables A and B on the key."""
    n = len(hosts)
    rows = max(1, nbytes // (2 * ROW_BYTES))
    rng = np.random.default_rng(2000 + index)
    space = 2 * rows * n
    tables = []
    for _ in range(2):
        keys = rng.integers(0, space, rows, dtype=np.int64)
        tables.append((keys, rng.integers(0, 256, (rows, ROW_BYTES - 8), dtype=np.uint8)))
    mesh = Mesh(index, hosts, port, dscp)
    try:
        ready()
        mesh.barrier()
        start = time.time()
        mine: list[list[bytes]] = [[], []]
        for t, (keys, payload) in enumerate(tables):
            parts = _split(keys, payload, n)
            got = mesh.all_to_all({j: parts[j] for j in mesh.peers})
            mine[t] = [parts[index], *got.values()]
        build: dict[int, list[int]] = {}
        for blob in mine[0]:
            keys, payload = _unpack(blob)
            for k, v in zip(keys.tolist(), payload[:, 0].tolist(), strict=True):
                build.setdefault(k, []).append(v)
        matches, checksum = 0, 0
        for blob in mine[1]:
            keys, payload = _unpack(blob)
            for k, v in zip(keys.tolist(), payload[:, 0].tolist(), strict=True):
                hit = build.get(k)
                if hit is not None:
                    matches += len(hit)
                    checksum += v * len(hit)
        mesh.barrier()
        end = time.time()
    finally:
        mesh.close()
    return start, end, {"matches": float(matches), "checksum": float(checksum)}


def _text(rng: np.random.Generator, nbytes: int) -> str:
    vocab = [f"w{i:x}" for i in range(20_000)]
    ranks = np.arange(1, len(vocab) + 1, dtype=np.float64)
    prob = 1.0 / ranks
    prob /= prob.sum()
    words = rng.choice(len(vocab), size=max(1, nbytes // 6), p=prob)
    return " ".join(vocab[i] for i in words.tolist())


def word_count(
    index: int,
    hosts: Sequence[str],
    port: int,
    nbytes: int,
    dscp: int = 0,
    ready: Callable[[], None] = lambda: None,
) -> tuple[float, float, dict[str, float]]:
    """One worker of a map / reduce word count."""
    n = len(hosts)
    text = _text(np.random.default_rng(3000 + index), nbytes)
    mesh = Mesh(index, hosts, port, dscp)
    try:
        ready()
        mesh.barrier()
        start = time.time()
        counts = Counter(text.split())
        parts: list[list[str]] = [[] for _ in range(n)]
        for word, c in counts.items():
            parts[zlib.crc32(word.encode()) % n].append(f"{word}\t{c}")
        blobs = ["\n".join(p).encode() for p in parts]
        got = mesh.all_to_all({j: blobs[j] for j in mesh.peers})
        total: Counter[str] = Counter()
        for blob in [blobs[index], *got.values()]:
            for line in blob.decode().splitlines():
                word, count = line.split("\t")
                total[word] += int(count)
        mesh.barrier()
        end = time.time()
    finally:
        mesh.close()
    return start, end, {"words": float(sum(total.values())), "distinct": float(len(total))}
