"""Processes inside testbed hosts, seen from the orchestrator.

`start` runs a tool in a host and returns once it printed its `ready`
line; `finish` / `run` / `stop` wait (bounded) and parse the tool's last
JSON line; `kill` ends it. Every wait has a deadline; a tool that fails,
prints no JSON or misses its deadline is a `ProcessError` carrying the
tail of its stderr. The traffic tools are `TRAFFIC` (the package's
`approxnet.testbed.traffic`); `sink` and `cbr` start the background of
the experiments.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

from .errors import ProcessError
from .lifecycle import Testbed

#: argv prefix of the traffic tools, run inside a host.
TRAFFIC = [sys.executable, "-m", "approxnet.testbed.traffic"]
#: How long a tool may take to print its `ready` line.
START_S = 10.0


def _what(host: str, argv: Sequence[str]) -> str:
    shown = list(argv[2:] if len(argv) > 2 and argv[1] == "-m" else argv)
    return f"{host}: {' '.join(shown[:4])}"


def start(
    tb: Testbed,
    host: str,
    argv: Sequence[str],
    ready: str = "ready",
    on_stderr: bool = False,
    limit_s: float = START_S,
) -> subprocess.Popen[str]:
    """Start `argv` in `host`; return once it printed a line starting with
    `ready` (on stderr with `on_stderr`), within `limit_s`."""
    p: subprocess.Popen[str] = tb.exec(
        host,
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stream = p.stderr if on_stderr else p.stdout
    assert stream is not None
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if not select.select([stream], [], [], max(deadline - time.monotonic(), 0.01))[0]:
            break
        line = stream.readline()
        if not line:
            break
        if line.startswith(ready):
            return p
    err = kill(p)
    raise ProcessError(f"{_what(host, argv)} did not start: {err.strip()[-300:]}")


def finish(p: subprocess.Popen[str], timeout: float, eof: bool = False) -> dict[str, Any]:
    """Wait (bounded) and parse the last JSON line of stdout; `eof` closes
    the process's stdin first (the tools' signal to stop)."""
    try:
        out, err = p.communicate(input="" if eof else None, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(p)
        raise ProcessError(f"process did not finish within {timeout} s") from None
    return last_json(out, err, p.returncode)


def run(tb: Testbed, host: str, argv: Sequence[str], timeout: float) -> dict[str, Any]:
    """Run to completion (bounded) and parse the last JSON line of stdout."""
    try:
        done = tb.run(host, list(argv), timeout=timeout, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        raise ProcessError(f"{_what(host, argv)} did not finish within {timeout} s") from None
    return last_json(done.stdout, done.stderr, done.returncode)


def last_json(out: str, err: str, rc: int | None) -> dict[str, Any]:
    """The last line of `out` that is a JSON object."""
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            parsed: dict[str, Any] = json.loads(line)
            return parsed
    raise ProcessError(f"no JSON output (exit {rc}): {err.strip()[-400:]}")


def kill(p: subprocess.Popen[str]) -> str:
    """Kill `p` if it still runs and reap it; what it wrote to stderr."""
    if p.stdin is not None and p.stdin.closed:
        p.stdin = None  # communicate() would flush a closed pipe
    if p.poll() is None:
        p.kill()
    try:
        _, err = p.communicate(timeout=5)
    except (subprocess.TimeoutExpired, ValueError):
        return ""
    return err or ""


def reap(procs: Iterable[subprocess.Popen[str]]) -> None:
    """Kills each of `procs` that still runs, waits for it, and closes its
    stdout and stderr pipes."""
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
        for f in (p.stdout, p.stderr):
            if f is not None:
                f.close()


def stop(p: subprocess.Popen[str], timeout: float = 5.0) -> dict[str, Any]:
    """Close a tool's stdin (its signal to stop) and parse its JSON line;
    kill it and return {} if it does not exit in `timeout`."""
    try:
        return finish(p, timeout, eof=True)
    except (ProcessError, ValueError):
        kill(p)
        return {}


def sink(tb: Testbed, host: str, port: int, seconds: float) -> subprocess.Popen[str]:
    """A UDP socket in `host` that never reads (so the host sends no ICMP),
    until `stop` or `seconds`."""
    return start(tb, host, [*TRAFFIC, "sink", "--port", str(port), "--seconds", str(seconds)])


def cbr(
    tb: Testbed, src: str, dst: str, port: int, mbps: float, seconds: float, schedule: str
) -> subprocess.Popen[str]:
    """Paced UDP from `src` to `dst`:`port` at `mbps` (IP bytes) for
    `seconds` or until `stop`, in the queues of `schedule` (`t:queue,...`
    from its start)."""
    argv = [*TRAFFIC, "cbr", "--dst", tb.address(dst), "--port", str(port)]
    argv += ["--rate-mbps", str(mbps), "--seconds", str(seconds), "--schedule", schedule]
    return start(tb, src, argv)
