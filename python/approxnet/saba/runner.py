"""``approxnet saba run``: makes an unmodified program Saba-compliant (the
library lifecycle of seed 003 §6 done from outside the program).

0. removes what dead wrappers left behind (:mod:`.stale`) and writes its
   own record, before it makes anything;
1. registers the app with the controller (its model by coefficients or by
   a workload of the controller's sensitivity table) and learns its DSCP;
2. creates a cgroup v2 of its own (:mod:`.cgroup`) and an nftables rule
   that sets that DSCP on every packet the cgroup's sockets send and
   marks their conntrack entries (:mod:`.nftmark`), in the network
   namespace the program runs in;
3. starts the program inside the cgroup and reports each of its flows —
   TCP, UDP and UDP-Lite, connected or not, from conntrack events
   (:mod:`.flowwatch`), so short ones are not missed — opened and closed,
   once each and in order, as local host -> remote host (the direction
   its marked packets go), with host names from the controller's
   ``GET /hosts`` (peers outside the topology are ignored); every
   `poll_s` (and at once when events come) it also re-marks if the app's
   DSCP changed (its PL moves when other apps register) and renews the
   connections' leases when the controller has them;
4. when the program ends (exit, failure, or a signal — SIGTERM / SIGINT /
   SIGHUP sent to the wrapper are passed on to it), kills what is left in
   the cgroup, deregisters the app (which closes its connections),
   removes the rule and the cgroup, and then its record (kept if the
   controller could not be told, for ``approxnet saba cleanup``).

Exit status: the program's; 128 + N when a signal N ended it; 125 when the
wrapper itself could not set up (nothing of the program ran).
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import FrameType

from . import stale
from .cgroup import PARENT, Cgroup, RunError
from .client import SabaClient
from .ctevents import CtEvents
from .errors import SabaError
from .flowwatch import CLOSED, Flow, FlowWatch, flow_mark
from .nftmark import CgroupMark, netns_prefix

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
    """The app's reported flows, kept in step with the cgroup's."""

    def __init__(self, spec: RunSpec, client: SabaClient, cg: Cgroup, mark: CgroupMark) -> None:
        self.spec, self.client, self.cg, self.mark = spec, client, cg, mark
        self.host_of = {a: h["name"] for h in client.hosts() for a in h["addresses"]}
        self.lease_s = client.health().get("lease_s")
        self.reported: dict[int, str] = {}  # conntrack id -> controller connection id
        self.renewed = time.monotonic()
        self.checked = -float("inf")
        assert mark.ct_mark is not None
        self.flows = FlowWatch(mark.ct_mark, CtEvents(spec.netns))
        self.backlog: list[tuple[str, int, Flow]] = []  # not yet told to the controller

    def fileno(self) -> int:
        return self.flows.fileno()

    def step(self) -> None:
        self.backlog += self.flows.step(self.cg.pids())
        while self.backlog:  # in order; a failed call is retried next step
            what, ct_id, flow = self.backlog[0]
            if what == CLOSED:
                cid = self.reported.pop(ct_id, None)
                if cid is not None:
                    self.client.close(cid)
                    self.spec.log(f"connection {cid} closed ({flow})")
            else:
                src, dst = self.host_of.get(flow.local), self.host_of.get(flow.remote)
                if src is not None and dst is not None and src != dst:
                    info = self.client.open(self.spec.app, src, dst)
                    self.reported[ct_id] = info["id"]
                    self.spec.log(f"connection {info['id']} {src} -> {dst} opened ({flow})")
            self.backlog.pop(0)
        if time.monotonic() - self.checked < self.spec.poll_s:
            return  # woken by flow events: the DSCP and leases every poll_s
        self.checked = time.monotonic()
        dscp = int(self.client.app(self.spec.app)["dscp"])
        if dscp != self.mark.dscp:
            self.mark.set_dscp(dscp)
            self.spec.log(f"the app's PL moved: packets now marked with DSCP {dscp}")
        if self.lease_s and time.monotonic() - self.renewed >= float(self.lease_s) / 4:
            for cid in self.reported.values():
                self.client.renew(cid)
            self.renewed = time.monotonic()

    def close(self) -> None:
        self.flows.close()
        if self.flows.events.lost:
            self.spec.log(f"warning: conntrack events lost {self.flows.events.lost} times")


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
    watch: _Watch | None = None
    registered = recorded = False
    try:
        try:
            _preflight(spec)
            stale.sweep(spec.log)
            pid = os.getpid()
            start = stale.start_time(pid)
            assert start is not None
            name = f"{spec.app}-{pid}"
            rel = f"{PARENT}/{name}"
            stale.write(stale.Record(pid, start, spec.app, client.url, rel, spec.netns, str(pid)))
            recorded = True
            cg = Cgroup.create(name)
            if spec.coeffs is not None:
                info = client.register(spec.app, spec.coeffs)
            else:
                assert spec.workload is not None
                info = client.register_workload(spec.app, spec.workload, spec.degree)
            registered = True
            mark = CgroupMark(cg, str(pid), spec.netns, flow_mark(pid))
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
        assert watch is not None
        last_warning = ""
        while True:
            ended = child.poll() is not None  # one more step after: its last flows
            try:
                watch.step()
                last_warning = ""
            except SabaError as e:  # e.g. the controller went away: the program goes on
                if str(e) != last_warning:  # once, not every poll
                    spec.log(f"warning: {e} (retrying every poll)")
                last_warning = str(e)
            if ended:
                break
            select.select([watch], [], [], spec.poll_s)  # woken by flow events
        status = _exit_status(child.returncode)
        spec.log(f"program exited with status {status}")
        return status
    finally:
        if watch is not None:
            watch.close()
        if _cleanup(spec, client, cg, mark, registered) and recorded:
            stale.forget(os.getpid())
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
) -> bool:
    """Every step runs even when an earlier one fails; True when all did."""
    steps: list[tuple[str, Callable[[], object]]] = []
    if mark is not None:
        steps.append(("count", lambda: spec.log(f"{mark.packets()} packets marked")))
    if cg is not None:
        steps.append(("empty and remove the cgroup", cg.remove))
    if registered:
        steps.append(("deregister", lambda: _deregister(spec, client)))
    if mark is not None:
        steps.append(("remove the nftables rule", mark.remove))
    ok = True
    for what, step in steps:
        try:
            step()
        except (SabaError, OSError) as e:
            spec.log(f"cleanup: cannot {what}: {e}")
            ok = False
    return ok


def _deregister(spec: RunSpec, client: SabaClient) -> None:
    client.deregister(spec.app)
    spec.log(f"app {spec.app} deregistered")
