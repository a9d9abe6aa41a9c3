"""Starting the worker processes: on loopback, or one per namespace host of
the testbed (with a rate-capped bottleneck and background TCP traffic).

The testbed (``congested.toml`` beside this file): a dumbbell, ranks 0-1 on
the left switch and 2-3 on the right one, joined by a rate-capped trunk;
hosts ``bgl`` / ``bgr`` push bulk TCP across the trunk in both directions
while the job trains. The switch ports have one FIFO queue each (``queues
= 1``), so approxnet's DSCP marking gives it no priority over the
background traffic or Gloo: the comparison is transport against transport.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._native import TransferError
from .experiment import TrainSpec

__all__ = ["CONGESTED_TOML", "run_loopback", "run_testbed"]

CONGESTED_TOML = Path(__file__).with_name("congested.toml")
Progress = Callable[[dict[str, Any]], None]


def _free_ports(n: int) -> list[int]:
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _worker_argv(
    spec: TrainSpec, rank: int, world: int, master: str, addrs: list[str], out: str
) -> list[str]:
    return [
        sys.executable, "-m", "approxnet.torch.worker",
        "--spec", spec.to_json(), "--rank", str(rank), "--world", str(world),
        "--master", master, "--addrs", ",".join(addrs), "--out", out,
    ]  # fmt: skip


def _collect(
    procs: list[subprocess.Popen[str]], outs: list[str], progress: Progress | None, limit_s: float
) -> dict[str, Any]:
    """Reads rank 0's progress lines, waits for every rank, returns rank 0's result."""
    end = time.monotonic() + limit_s
    assert procs[0].stdout is not None
    try:
        for line in procs[0].stdout:
            line = line.strip()
            if line.startswith("{") and progress is not None:
                msg = json.loads(line)
                if "epoch" in msg:
                    progress(msg["epoch"])
            if time.monotonic() > end:
                break
        for p in procs:
            p.wait(timeout=max(1.0, end - time.monotonic()))
    except subprocess.TimeoutExpired:
        pass
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            if p.stdout is not None:
                p.stdout.close()
    codes = [p.returncode for p in procs]
    if any(c != 0 for c in codes):
        raise TransferError(f"worker exit codes {codes} (see their stderr above)")
    with open(outs[0]) as f:
        res: dict[str, Any] = json.load(f)
    others = []
    for o in outs[1:]:
        with open(o) as f:
            others.append(json.load(f))
    res["ranks"] = [{k: r.get(k) for k in ("rank", "train_s", "final_accuracy")} for r in others]
    return res


def run_loopback(
    spec: TrainSpec, world: int = 4, progress: Progress | None = None, limit_s: float = 3600.0
) -> dict[str, Any]:
    """Trains with `world` worker processes on 127.0.0.1."""
    spec.validate()
    ports = _free_ports(world + 1)
    master = f"127.0.0.1:{ports[0]}"
    addrs = [f"127.0.0.1:{p}" for p in ports[1:]]
    env = dict(
        os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", TORCH_CPP_LOG_LEVEL="ERROR"
    )
    with tempfile.TemporaryDirectory(prefix="anx-train-") as tmp:
        outs = [str(Path(tmp) / f"rank{r}.json") for r in range(world)]
        procs = [
            subprocess.Popen(
                _worker_argv(spec, r, world, master, addrs, outs[r]),
                stdout=subprocess.PIPE if r == 0 else subprocess.DEVNULL,
                text=True,
                env=env,
            )
            for r in range(world)
        ]
        res = _collect(procs, outs, progress, limit_s)
    res["mode"] = "loopback"
    return res


def run_testbed(
    spec: TrainSpec,
    toml: Path = CONGESTED_TOML,
    *,
    background: int = 1,
    progress: Progress | None = None,
    limit_s: float = 3600.0,
    trunk_rate: str | None = None,
    port_buffer: str | None = None,
) -> dict[str, Any]:
    """Trains with 4 workers on hosts ``w0..w3`` of the testbed in `toml`,
    `background` bulk TCP flows each way between ``bgl`` and ``bgr``;
    `trunk_rate` / `port_buffer` override the TOML's (e.g. "1gbit", "32KiB")."""
    from .. import testbed

    spec.validate()
    cfg = testbed.load(str(toml))
    if trunk_rate is not None or port_buffer is not None:
        raw = tomllib.loads(Path(toml).read_text())
        if trunk_rate is not None:
            for t in raw.get("trunk", []):
                t["rate"] = trunk_rate
        if port_buffer is not None:
            raw.setdefault("testbed", {})["port_buffer"] = port_buffer
        cfg = testbed.parse(raw)
    hosts = [f"w{i}" for i in range(4)]
    port = 7700
    env = dict(
        os.environ, GLOO_SOCKET_IFNAME="eth0", OMP_NUM_THREADS="1", TORCH_CPP_LOG_LEVEL="ERROR"
    )
    with testbed.up(cfg) as tb, tempfile.TemporaryDirectory(prefix="anx-train-") as tmp:
        addrs = [f"{tb.address(h)}:{port + 1}" for h in hosts]
        master = f"{tb.address(hosts[0])}:{port}"
        bg: list[subprocess.Popen[str]] = []
        for i in range(background):
            for src, dst in (("bgl", "bgr"), ("bgr", "bgl")):
                rport = 5001 + i
                rx = tb.exec(
                    dst,
                    [sys.executable, "-m", "approxnet.testbed.traffic", "tcp-recv",
                     "--port", str(rport), "--timeout", str(int(limit_s))],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                )  # fmt: skip
                assert rx.stdout is not None
                rx.stdout.readline()  # "ready"
                tx = tb.exec(
                    src,
                    [sys.executable, "-m", "approxnet.testbed.traffic", "tcp-send",
                     "--dst", tb.address(dst), "--port", str(rport),
                     "--seconds", str(int(limit_s)), "--cc", "cubic"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, env=env,
                )  # fmt: skip
                bg += [rx, tx]
        time.sleep(1.0 if bg else 0.0)  # let the background flows fill the bottleneck
        outs = [str(Path(tmp) / f"rank{r}.json") for r in range(4)]
        procs = [
            tb.exec(
                h,
                _worker_argv(spec, r, 4, master, addrs, outs[r]),
                stdout=subprocess.PIPE if r == 0 else subprocess.DEVNULL,
                text=True,
                env=env,
            )
            for r, h in enumerate(hosts)
        ]
        try:
            res = _collect(procs, outs, progress, limit_s)
        finally:
            for p in bg:
                p.kill()
                p.wait()
                if p.stdout is not None:
                    p.stdout.close()
        res["queues"] = [
            {"switch": q.switch, "port": q.port, "sent_bytes": q.sent_bytes, "dropped": q.dropped}
            for q in tb.status().queues
        ]
    res["mode"] = "testbed"
    res["background_flows"] = 2 * background
    return res
