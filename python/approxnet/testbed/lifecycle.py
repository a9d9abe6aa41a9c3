"""`up`, `down` and the live `Testbed` handle.

`down` works from namespace names alone (prefix `anx-<name>-`), so it cleans
a half-built or crashed testbed as well as a complete one; `up` always runs
`down` first and again if any step fails.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from .. import binaries
from . import plan, shell
from .config import Config, namespace_prefix
from .errors import TestbedError
from .layout import host_address, link_stats_path
from .status import Status, collect

#: How long `down` waits for processes in a namespace to exit after SIGTERM.
KILL_GRACE_S = 2.0


def list_namespaces(prefix: str = "anx-") -> list[str]:
    """Names of existing network namespaces that start with `prefix`."""
    out = shell.run(["ip", "netns", "list"]).stdout
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return sorted(n for n in names if n.startswith(prefix))


def down(name: str) -> list[str]:
    """Remove every namespace of testbed `name` (and all inside them).

    Processes still running inside those namespaces are terminated first,
    since a namespace outlives its name while a process holds it. Returns
    the namespaces removed; an absent testbed is not an error.
    """
    shell.require_root()
    removed = []
    for ns in list_namespaces(namespace_prefix(name)):
        _terminate(_pids(ns))
        done = shell.run(["ip", "netns", "del", ns], check=False)
        if done.returncode != 0 and ns in list_namespaces(ns):
            raise TestbedError(f"cannot delete namespace {ns}: {done.stderr.strip()}")
        removed.append(ns)
    shell.reap()  # the relays spawn_ready started have exited now
    # Wireless relays' counters and logs (layout.link_stats_path).
    for leftover in glob.glob(f"/tmp/{namespace_prefix(name)}*link.*"):
        with contextlib.suppress(OSError):
            os.remove(leftover)
    return removed


def up(config: Config) -> Testbed:
    """Build the testbed described by `config`, replacing any previous one."""
    shell.require_root()
    tools = ["ip", "tc", "ethtool", "sysctl"]
    if any(h.loss for h in config.hosts) or any(t.loss for t in config.trunks):
        tools.append("nft")
    shell.require_tools(tools)
    link_binary = "approxnet-link"
    if any(h.wireless for h in config.hosts):
        found = binaries.find("approxnet-link", debug=True)
        if found is None:
            raise TestbedError(
                "wireless hosts need approxnet-link: cargo build --release -p approxnet-net "
                "(or set APPROXNET_LINK)"
            )
        link_binary = str(found)
    down(config.name)
    try:
        for step in plan.build(config, link_binary):
            if step.background:
                shell.spawn_ready(step.argv, f"/tmp/{config.prefix}link.log")
            else:
                shell.run(step.argv, stdin=step.stdin, check=step.check)
    except BaseException:
        down(config.name)
        raise
    return Testbed(config)


def is_up(config: Config) -> bool:
    """True when every namespace of the testbed exists."""
    return set(plan.namespaces(config)) <= set(list_namespaces(config.prefix))


class Testbed:
    """A running testbed: run commands in hosts, read counters, tear down.

    Usable as a context manager that calls `down` on exit, even on error.
    """

    __test__ = False  # not a pytest test class despite the name

    def __init__(self, config: Config) -> None:
        self.config = config

    def __enter__(self) -> Testbed:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.down()

    def address(self, host: str) -> str:
        """IPv4 address of `host`."""
        return host_address(self.config, host)

    def namespace(self, node: str) -> str:
        """Namespace of a host or switch."""
        return self.config.namespace(node)

    def command(self, host: str, argv: Sequence[str]) -> list[str]:
        """The argv that runs `argv` inside `host`'s namespace."""
        self.config.host(host)  # validates the name
        return ["ip", "netns", "exec", self.namespace(host), *argv]

    def exec(self, host: str, argv: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
        """Start `argv` inside `host`; keyword arguments go to `Popen`."""
        return subprocess.Popen(self.command(host, argv), **popen)

    def run(
        self, host: str, argv: Sequence[str], timeout: float, **kwargs: Any
    ) -> subprocess.CompletedProcess[Any]:
        """Run `argv` inside `host` to completion, bounded by `timeout` seconds."""
        return subprocess.run(self.command(host, argv), timeout=timeout, check=False, **kwargs)

    def status(self) -> Status:
        """Per-queue counters of every switch port (see `status.collect`)."""
        return collect(self.config)

    def link_stats(self, host: str) -> dict[str, Any]:
        """Counters of a wireless host's relay (`a_to_b`: host to switch,
        `b_to_a`: switch to host; refreshed every 200 ms)."""
        if self.config.host(host).wireless is None:
            raise TestbedError(f"host {host!r} has no wireless link")
        path = link_stats_path(self.config, host)
        try:
            with open(path) as f:
                data: dict[str, Any] = json.load(f)
        except (OSError, ValueError) as exc:
            raise TestbedError(f"cannot read {path}: {exc}") from None
        return data

    def down(self) -> list[str]:
        """Remove the testbed."""
        return down(self.config.name)


def _pids(ns: str) -> list[int]:
    done = shell.run(["ip", "netns", "pids", ns], check=False)
    return [int(p) for p in done.stdout.split() if p.isdigit()]


def _terminate(pids: list[int]) -> None:
    """SIGTERM, wait up to KILL_GRACE_S polling, then SIGKILL the stragglers."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + KILL_GRACE_S
        while pids and time.monotonic() < deadline:
            pids = [p for p in pids if _alive(p)]
            if pids:
                time.sleep(0.02)
        if not pids:
            return


def _alive(pid: int) -> bool:
    """Still running; a zombie counts as gone (never reaped here: it may be a
    caller's `Popen` child, whose exit status must stay theirs)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return _state(pid) not in ("Z", "X", None)


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None
