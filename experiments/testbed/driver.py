"""Shared plumbing of the testbed experiments (experiments/testbed/exp*.py).

Starts bounded processes inside testbed hosts and waits for their `ready`
line, runs `approxnet-perf` (ATP) servers and clients, samples one switch
port's per-queue `tc -s` counters over time, and writes CSV / JSON results.
Every wait has a deadline; the experiments tear the testbed down in a
`finally` (the `Testbed` context manager).
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import math
import os
import select
import shlex
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from approxnet import binaries
from approxnet import testbed as testbed
from approxnet.testbed.status import parse_qdiscs

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RESULTS = HERE / "results"

TOOLS = [sys.executable, str(HERE / "tools.py")]
ATP_PORT = 7700
PIPE = subprocess.PIPE
START_S = 10.0


class ExperimentError(RuntimeError):
    """A process of an experiment failed or did not start in time."""


def perf_binary() -> Path | None:
    """`approxnet-perf`: $APPROXNET_PERF, else PATH, else a release build in
    this checkout (`approxnet.binaries`)."""
    return binaries.find("approxnet-perf")


def require_perf() -> str:
    try:
        return str(binaries.require("approxnet-perf"))
    except FileNotFoundError as e:
        raise SystemExit(str(e)) from None


def require_root() -> None:
    if os.geteuid() != 0:
        raise SystemExit("run as root (network namespaces, tc)")


def load_config(path: Path, name: str | None = None) -> testbed.Config:
    cfg = testbed.load(path)
    return dataclasses.replace(cfg, name=name) if name else cfg


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# --------------------------------------------------------------------------
# processes


def start(
    tb: testbed.Testbed,
    host: str,
    argv: Sequence[str],
    ready: str = "ready",
    on_stderr: bool = False,
) -> subprocess.Popen[str]:
    """Start `argv` in `host`; return once it printed a line starting with `ready`."""
    p = tb.exec(
        host,
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stream = p.stderr if on_stderr else p.stdout
    assert stream is not None
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if not select.select([stream], [], [], max(deadline - time.monotonic(), 0.01))[0]:
            break
        line = stream.readline()
        if not line:
            break
        if line.startswith(ready):
            return p
    kill(p)
    raise ExperimentError(f"{host}: {' '.join(argv[:3])} did not start")


def finish(p: subprocess.Popen[str], timeout: float, eof: bool = False) -> dict[str, Any]:
    """Wait (bounded) and parse the last JSON line of stdout; `eof` closes
    the process's stdin first (the tools' signal to stop)."""
    try:
        out, err = p.communicate(input="" if eof else None, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(p)
        raise ExperimentError(f"process did not finish within {timeout} s") from None
    return _last_json(out, err, p.returncode)


def run(tb: testbed.Testbed, host: str, argv: Sequence[str], timeout: float) -> dict[str, Any]:
    """Run to completion (bounded) and parse the last JSON line of stdout."""
    done = tb.run(host, list(argv), timeout=timeout, capture_output=True, text=True)
    return _last_json(done.stdout, done.stderr, done.returncode)


def _last_json(out: str, err: str, rc: int | None) -> dict[str, Any]:
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            out_json: dict[str, Any] = json.loads(line)
            return out_json
    raise ExperimentError(f"no JSON output (exit {rc}): {err.strip()[-400:]}")


def kill(p: subprocess.Popen[str]) -> None:
    if p.stdin is not None and p.stdin.closed:
        p.stdin = None  # communicate() would flush a closed pipe
    if p.poll() is None:
        p.kill()
    try:
        p.communicate(timeout=5)
    except (subprocess.TimeoutExpired, ValueError):
        pass


def stop(p: subprocess.Popen[str], timeout: float = 5.0) -> dict[str, Any]:
    """Close a tool's stdin (its signal to stop) and parse its JSON line;
    kill it if it does not exit in `timeout`."""
    try:
        return finish(p, timeout, eof=True)
    except (ExperimentError, ValueError):
        kill(p)
        return {}


# --------------------------------------------------------------------------
# ATP (approxnet-perf)


def atp_server(
    tb: testbed.Testbed, host: str, jobs: int, idle: float = 1.0, port: int = ATP_PORT
) -> subprocess.Popen[str]:
    argv = [
        require_perf(),
        "server",
        "--bind",
        f"0.0.0.0:{port}",
        "--jobs",
        str(jobs),
        "--idle",
        str(idle),
        "--json",
    ]
    return start(tb, host, argv, ready="approxnet-perf server on", on_stderr=True)


def atp_client_argv(
    server: str,
    msr: float,
    messages: int,
    size: int,
    jobs: int,
    line_rate_gbps: float,
    duration: float = 60.0,
    window: int = 1,
    seed: int = 1,
    port: int = ATP_PORT,
    gap_us: str = "none",
    gap_seed: int | None = None,
) -> list[str]:
    """Client argv; extra approxnet-perf client options from $ATP_ARGS
    (e.g. ATP_ARGS="--lookahead-us 200"). `gap_us` / `gap_seed`: the
    production process (tools.py's `--gap-us`, the same gaps)."""
    return [
        require_perf(),
        "client",
        "--server",
        f"{server}:{port}",
        "--msr",
        str(msr),
        "--messages",
        str(messages),
        "--sizes",
        f"fixed:{size}",
        "--jobs",
        str(jobs),
        "--window",
        str(window),
        "--duration",
        str(duration),
        "--line-rate-gbps",
        str(line_rate_gbps),
        "--seed",
        str(seed),
        "--json",
        "--gap-us",
        gap_us,
        "--gap-seed",
        str(seed if gap_seed is None else gap_seed),
        *shlex.split(os.environ.get("ATP_ARGS", "")),
    ]


def tcp_send_argv(
    dst: str,
    port: int,
    mode: str,
    cc: str,
    msr: float,
    messages: int,
    size: int,
    jobs: int,
    seed: int,
    timeout: float,
    gap_us: str,
    gap_seed: int,
    job_base: int = 0,
) -> list[str]:
    """tools.py tcp-job-send argv: kernel-TCP SampleSend (`mode` "ss") or
    EarlySend ("es") with congestion control `cc`, producing its messages
    with the same gaps as `atp_client_argv` for the same `gap_seed`."""
    return [
        *TOOLS,
        "tcp-job-send",
        *("--dst", dst, "--port", str(port), "--mode", mode, "--cc", cc),
        *("--msr", str(msr), "--messages", str(messages), "--size", str(size)),
        *("--jobs", str(jobs), "--seed", str(seed), "--timeout", str(timeout)),
        *("--job-base", str(job_base), "--gap-us", gap_us, "--gap-seed", str(gap_seed)),
    ]


def production_arg(p: Any, default_mbps: float, what: str) -> None:
    """Adds `--gap-us` and `--produce-mbps` (the production process) to an
    experiment's parser."""
    p.add_argument(
        "--produce-mbps",
        type=float,
        default=default_mbps,
        help=f"production rate {what}: exponential gaps of mean size x 8 / rate "
        f"(default {default_mbps:g}; see docs/experiments/testbed.md)",
    )
    p.add_argument(
        "--gap-us",
        default=None,
        help="production gaps instead: none (every message ready at job start, "
        "the old mode), fixed:US or exp:US",
    )


def gap_spec(a: Any) -> str:
    """The `--gap-us` value every scheme of a run gets, checked here (a bad
    value is a usage error before any testbed is built)."""
    import tools

    spec: str
    if a.gap_us is not None:
        spec = str(a.gap_us)
    elif a.produce_mbps > 0 and math.isfinite(a.produce_mbps):
        spec = f"exp:{a.size * 8 / a.produce_mbps:g}"
    else:
        raise SystemExit(f"--produce-mbps {a.produce_mbps}: give a rate > 0 (or --gap-us none)")
    try:
        tools.parse_gap(spec)
    except ValueError as e:
        raise SystemExit(str(e)) from None
    return spec


def production_s(spec: str, messages: int) -> float:
    """Mean time a job of `messages` takes to be produced (for time bounds)."""
    import tools

    mean_ns: float = tools.parse_gap(spec)[1]
    return (messages - 1) * mean_ns / 1e9


# --------------------------------------------------------------------------
# tc sampling


class QueueSampler:
    """Polls one switch egress port's per-queue counters every `period` s in
    a thread (one `tc -s -j qdisc show` per sample), until `stop()`."""

    def __init__(
        self,
        tb: testbed.Testbed,
        switch: str,
        port: str,
        period: float = 0.02,
        limit_s: float = 60.0,
    ) -> None:
        self.argv = ["tc", "-n", tb.namespace(switch), "-s", "-j", "qdisc", "show", "dev", port]
        self.switch, self.port, self.period, self.limit_s = switch, port, period, limit_s
        self.samples: list[tuple[float, list[Any]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> QueueSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        end = time.monotonic() + self.limit_s
        while not self._stop.is_set() and time.monotonic() < end:
            t = time.monotonic()
            out = subprocess.run(self.argv, capture_output=True, text=True, check=False)
            if out.returncode == 0:
                qs = parse_qdiscs(self.switch, self.port, json.loads(out.stdout))
                self.samples.append((t, qs))
            self._stop.wait(max(self.period - (time.monotonic() - t), 0.0))

    def rows(self, origin: float) -> list[dict[str, Any]]:
        """Per sample interval: per-queue Mbit/s sent, drops, backlog (bytes)."""
        rows = []
        for (t0, a), (t1, b) in zip(self.samples, self.samples[1:], strict=False):
            dt = t1 - t0
            row: dict[str, Any] = {"t_s": round(t1 - origin, 4)}
            for qa, qb in zip(a, b, strict=True):
                q = qa.queue
                row[f"q{q}_mbps"] = round((qb.sent_bytes - qa.sent_bytes) * 8 / dt / 1e6, 2)
                row[f"q{q}_drops"] = qb.dropped - qa.dropped
                row[f"q{q}_backlog_B"] = qb.backlog_bytes
            rows.append(row)
        return rows


def port_counters(tb: testbed.Testbed, switch: str, port: str) -> dict[int, Any]:
    out = subprocess.run(
        ["tc", "-n", tb.namespace(switch), "-s", "-j", "qdisc", "show", "dev", port],
        capture_output=True,
        text=True,
        check=True,
    )
    return {q.queue: q for q in parse_qdiscs(switch, port, json.loads(out.stdout))}


def counter_delta(before: dict[int, Any], after: dict[int, Any]) -> dict[str, int]:
    """Sent frames / bytes and drops per queue between two `port_counters`."""
    d: dict[str, int] = {}
    for q, b in after.items():
        a = before[q]
        if b.sent_packets - a.sent_packets or b.dropped - a.dropped:
            d[f"q{q}_sent_pkts"] = b.sent_packets - a.sent_packets
            d[f"q{q}_drops"] = b.dropped - a.dropped
    return d


def udp_snmp(tb: testbed.Testbed, host: str) -> dict[str, int]:
    """The host's UDP counters from /proc/net/snmp (per namespace): datagrams
    the kernel dropped at a full socket buffer show up as RcvbufErrors."""
    out = tb.run(host, ["cat", "/proc/net/snmp"], timeout=5, capture_output=True, text=True)
    lines = [ln.split()[1:] for ln in out.stdout.splitlines() if ln.startswith("Udp:")]
    return {k: int(v) for k, v in zip(lines[0], lines[1], strict=True)} if len(lines) >= 2 else {}


def snmp_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    keys = ("InDatagrams", "RcvbufErrors", "InErrors")
    return {f"rx_udp_{k}": after.get(k, 0) - before.get(k, 0) for k in keys}


# --------------------------------------------------------------------------
# statistics and files


def summary(values: Sequence[float]) -> dict[str, float]:
    v = sorted(values)
    if not v:
        return {
            "n": 0,
            "mean": math.nan,
            "p50": math.nan,
            "p90": math.nan,
            "p99": math.nan,
            "max": math.nan,
        }

    def q(p: float) -> float:
        return v[min(len(v) - 1, max(0, math.ceil(p * len(v)) - 1))]

    return {
        "n": len(v),
        "mean": statistics.fmean(v),
        "p50": q(0.5),
        "p90": q(0.9),
        "p99": q(0.99),
        "max": v[-1],
    }


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()})


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, default=str) + "\n")


def save_rows(out: Path, env: dict[str, Any], args: Any, rows: Sequence[dict[str, Any]]) -> None:
    """Closes the run's environment record (end load, arguments), writes
    `out`.csv / `out`.json and says where they are."""
    env["loadavg_end"] = loadavg()
    env["args"] = {k: str(v) for k, v in vars(args).items()}
    write_csv(out.with_suffix(".csv"), rows)
    write_json(out.with_suffix(".json"), {"environment": env, "rows": rows})
    print(
        f"results in {out}.csv / .json; load average {env['loadavg_start']} -> {env['loadavg_end']}"
    )


def _provenance() -> dict[str, str]:
    """Git commit of the checkout and a hash / mtime of the binary used."""
    out: dict[str, str] = {}
    git = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    out["git_head"] = git.stdout.strip()
    b = perf_binary()
    if b is not None:
        out["approxnet_perf_sha256"] = hashlib.sha256(b.read_bytes()).hexdigest()[:16]
        out["approxnet_perf_mtime"] = time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(b.stat().st_mtime)
        )
    return out


def environment() -> dict[str, Any]:
    """What to record with every result: time, load average, binary, kernel."""
    return {
        **_provenance(),
        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "loadavg_start": loadavg(),
        "cpus": os.cpu_count(),
        "kernel": os.uname().release,
        "approxnet_perf": str(perf_binary()),
        "python": sys.executable,
        "atp_args": os.environ.get("ATP_ARGS", ""),
    }
