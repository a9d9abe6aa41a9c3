"""``approxnet saba run``: makes an unmodified program Saba-compliant (the
library lifecycle of seed 003 §6 done from outside the program).

1. registers the app with the controller (its model by coefficients or by
   a workload of the controller's sensitivity table) and learns its DSCP;
2. creates a cgroup v2 of its own (:mod:`.cgroup`) and an nftables rule
   that sets that DSCP on every packet the cgroup's sockets send
   (:mod:`.nftmark`), in the network namespace the program runs in;
3. starts the program inside the cgroup and, every `poll_s`, reports the
   established TCP connections of the cgroup's processes (:mod:`.sockets`)
   opened / closed since the last poll — as local host -> remote host,
   the direction its marked packets go, with host names from the
   controller's ``GET /hosts`` (peers outside the topology are ignored) —
   re-marks if the app's DSCP changed (its PL moves when other apps
   register), and renews the connections' leases when the controller
   has them;
4. when the program ends (exit, failure, or a signal — SIGTERM / SIGINT /
   SIGHUP sent to the wrapper are passed on to it), kills what is left in
   the cgroup, deregisters the app (which closes its connections), and
   removes the rule and the cgroup.

Exit status: the program's; 128 + N when a signal N ended it; 125 when the
wrapper itself could not set up (nothing of the program ran).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import FrameType

from .cgroup import Cgroup, RunError
from .client import SabaClient
from .errors import SabaError
from .nftmark import CgroupMark, netns_prefix
from .sockets import Conn, ConnWatch

__all__ = ["RunSpec", "run", "SETUP_FAILED"]

#: exit status when the wrapper could not set up
SETUP_FAILED = 125
_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@dataclass
class RunSpec:
    """What to run and how to register it."""

    app: str
    argv: Sequence[str]
    coeffs: Sequence[float] | None = None
    workload: str | None = None
    degree: int = 3
    netns: str | None = None
    poll_s: float = 0.2
    log: Callable[[str], None] = field(default=lambda m: print(f"saba run: {m}", file=sys.stderr))


def _preflight(spec: RunSpec) -> None:
    if not spec.argv:
        raise RunError("no program given (saba run --app NAME -- CMD ARGS...)")
    if (spec.coeffs is None) == (spec.workload is None):
        raise RunError("give the app's model: exactly one of --model or --workload")
    if os.geteuid() != 0:
        raise RunError("saba run needs root (it creates a cgroup and an nftables rule)")
    if shutil.which("nft") is None:
        raise RunError("nftables is unavailable: no 'nft' on PATH (apt-get install nftables)")
    if spec.netns is not None and not os.path.exists(f"/run/netns/{spec.netns}"):
        raise RunError(f"netns {spec.netns!r} does not exist (no /run/netns/{spec.netns})")
    if not spec.poll_s > 0:
        raise RunError(f"poll_s must be above 0, got {spec.poll_s}")


class _Watch:
    """The app's reported connections, kept in step with the cgroup's."""

    def __init__(self, spec: RunSpec, client: SabaClient, cg: Cgroup, mark: CgroupMark) -> None:
        self.spec, self.client, self.cg, self.mark = spec, client, cg, mark
        self.host_of = {a: h["name"] for h in client.hosts() for a in h["addresses"]}
        self.lease_s = client.health().get("lease_s")
        self.reported: dict[Conn, str] = {}
        self.ignored: set[Conn] = set()
        self.renewed = time.monotonic()
        self.conns = ConnWatch()

    def step(self) -> None:
        now = self.conns.poll(self.cg.pids())
        for conn in sorted(now - self.reported.keys() - self.ignored):
            src, dst = self.host_of.get(conn.local), self.host_of.get(conn.remote)
            if src is None or dst is None or src == dst:
                self.ignored.add(conn)
                continue
            info = self.client.open(self.spec.app, src, dst)
            self.reported[conn] = info["id"]
            self.spec.log(f"connection {info['id']} {src} -> {dst} opened ({_fmt(conn)})")
        for conn in sorted(self.reported.keys() - now):
            cid = self.reported.pop(conn)
            self.client.close(cid)
            self.spec.log(f"connection {cid} closed")
        self.ignored &= now
        dscp = int(self.client.app(self.spec.app)["dscp"])
        if dscp != self.mark.dscp:
            self.mark.set_dscp(dscp)
            self.spec.log(f"the app's PL moved: packets now marked with DSCP {dscp}")
        if self.lease_s and time.monotonic() - self.renewed >= float(self.lease_s) / 4:
            for cid in self.reported.values():
                self.client.renew(cid)
            self.renewed = time.monotonic()


def _fmt(c: Conn) -> str:
    return f"{c.local}:{c.lport} -> {c.remote}:{c.rport}"


def _exit_status(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def run(spec: RunSpec, client: SabaClient) -> int:
    """Runs the program under Saba; returns the exit status (module doc)."""
    pending: list[int] = []
    child: subprocess.Popen[bytes] | None = None

    def forward(signum: int, _frame: FrameType | None) -> None:
        if child is not None and child.poll() is None:
            child.send_signal(signum)
        else:
            pending.append(signum)

    old = {s: signal.signal(s, forward) for s in _FORWARDED}
    cg: Cgroup | None = None
    mark: CgroupMark | None = None
    registered = False
    try:
        try:
            _preflight(spec)
            cg = Cgroup.create(f"{spec.app}-{os.getpid()}")
            if spec.coeffs is not None:
                info = client.register(spec.app, spec.coeffs)
            else:
                assert spec.workload is not None
                info = client.register_workload(spec.app, spec.workload, spec.degree)
            registered = True
            mark = CgroupMark(cg, str(os.getpid()), spec.netns)
            mark.install(int(info["dscp"]))
            watch = _Watch(spec, client, cg, mark)
            spec.log(f"app {spec.app} registered: PL {info['pl']}, DSCP {info['dscp']}, {cg.path}")
            if pending:  # asked to stop before the program started
                spec.log(f"signal {pending[0]}: the program was not started")
                return 128 + pending[0]
            procs = cg.add_self_file()
            child = subprocess.Popen(
                [*netns_prefix(spec.netns), *spec.argv],
                preexec_fn=lambda: _join(procs),
            )
        except (SabaError, OSError) as e:
            spec.log(f"error: {e}")
            return SETUP_FAILED
        for signum in pending:  # arrived while it was being started
            child.send_signal(signum)
        last_warning = ""
        while child.poll() is None:
            try:
                watch.step()
                last_warning = ""
            except SabaError as e:  # e.g. the controller went away: the program goes on
                if str(e) != last_warning:  # once, not every poll
                    spec.log(f"warning: {e} (retrying every poll)")
                last_warning = str(e)
            try:
                child.wait(timeout=spec.poll_s)
            except subprocess.TimeoutExpired:
                pass
        status = _exit_status(child.returncode)
        spec.log(f"program exited with status {status}")
        return status
    finally:
        _cleanup(spec, client, cg, mark, registered)
        for s, h in old.items():
            signal.signal(s, h)


def _join(procs: str) -> None:
    """In the child before exec: move into the cgroup."""
    with open(procs, "w") as f:
        f.write("0")


def _cleanup(
    spec: RunSpec,
    client: SabaClient,
    cg: Cgroup | None,
    mark: CgroupMark | None,
    registered: bool,
) -> None:
    """Every step runs even when an earlier one fails."""
    steps: list[tuple[str, Callable[[], object]]] = []
    if mark is not None:
        steps.append(("count", lambda: spec.log(f"{mark.packets()} packets marked")))
    if cg is not None:
        steps.append(("empty and remove the cgroup", cg.remove))
    if registered:
        steps.append(("deregister", lambda: _deregister(spec, client)))
    if mark is not None:
        steps.append(("remove the nftables rule", mark.remove))
    for what, step in steps:
        try:
            step()
        except (SabaError, OSError) as e:
            spec.log(f"cleanup: cannot {what}: {e}")


def _deregister(spec: RunSpec, client: SabaClient) -> None:
    client.deregister(spec.app)
    spec.log(f"app {spec.app} deregistered")
