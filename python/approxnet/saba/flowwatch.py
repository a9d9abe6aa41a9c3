"""The flows of a ``saba run`` program, TCP, UDP and UDP-Lite, from
conntrack events (:mod:`.ctevents`) rather than polling ``/proc``.

The wrapper's nftables rule (:mod:`.nftmark`) gives the conntrack entry
of every packet its cgroup sends a mark — `mark` when the cgroup's socket
sent in the entry's original direction (it opened the flow), `mark + 1`
in the reply direction (it accepted it) — only where the entry has no
mark yet, so the mark changes once per flow. Each marked entry is one
flow, named from the program's side (local -> remote, the direction of
the packets marked); an unconnected UDP socket gets one per destination
(address, port), as conntrack keeps them.

A flow opens at the first event that carries the mark (NEW for one the
program started, the mark's UPDATE for one it accepted) and closes once,
at the first of: its TCP state reaching TIME_WAIT or CLOSE (FIN both
ways, or RST), its entry destroyed (a UDP flow idle for conntrack's
timeout, 30 s unreplied / 120 s both ways by default), or — UDP and
UDP-Lite — no socket of the cgroup bound to its local port any longer
(the program closed it; the ports are read from ``/proc/PID/net/udp*``
after the events, and only while a datagram flow is open).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .ctevents import DESTROY, TCP_CLOSED, CtEvent, CtEvents
from .sockets import DatagramPorts

__all__ = ["Flow", "FlowWatch", "flow_mark", "OPENED", "CLOSED", "TCP", "UDP", "UDPLITE"]

OPENED, CLOSED = "opened", "closed"
TCP, UDP, UDPLITE = 6, 17, 136
_DATAGRAM = (UDP, UDPLITE)


def flow_mark(pid: int) -> int:
    """The conntrack mark of wrapper `pid`'s flows (even; +1 for accepted
    ones): a fixed top byte, so it is told apart from other users' marks."""
    return 0x5A000000 | ((pid << 1) & 0x00FFFFFE)


@dataclass(frozen=True, order=True)
class Flow:
    """One flow as the program's side sees it."""

    proto: int
    local: str
    lport: int
    remote: str
    rport: int

    def __str__(self) -> str:
        name = {TCP: "tcp", UDP: "udp", UDPLITE: "udplite"}.get(self.proto, str(self.proto))
        return f"{name} {self.local}:{self.lport} -> {self.remote}:{self.rport}"


class FlowWatch:
    """Opened / closed flows of the marked conntrack entries, in order."""

    def __init__(self, mark: int, events: CtEvents) -> None:
        self.mark, self.events = mark, events
        self.open: dict[int, Flow] = {}  # conntrack id -> flow
        self._done: set[int] = set()  # closed, entry not yet destroyed
        self._check_ports = False
        self._ports = DatagramPorts()

    def fileno(self) -> int:
        return self.events.fileno()

    def _flow(self, e: CtEvent) -> Flow:
        if e.mark == self.mark:
            return Flow(e.proto, e.src, e.sport, e.dst, e.dport)
        return Flow(e.proto, e.dst, e.dport, e.src, e.sport)

    def _apply(self, e: CtEvent, out: list[tuple[str, int, Flow]]) -> None:
        if e.kind == DESTROY:
            self._done.discard(e.ct_id)
            if e.ct_id in self.open:
                out.append((CLOSED, e.ct_id, self.open.pop(e.ct_id)))
            return
        if e.mark not in (self.mark, self.mark + 1):
            return
        if e.ct_id not in self.open and e.ct_id not in self._done:
            self.open[e.ct_id] = flow = self._flow(e)
            out.append((OPENED, e.ct_id, flow))
            self._check_ports |= flow.proto in _DATAGRAM
        if e.proto == TCP and e.tcp_state in TCP_CLOSED and e.ct_id in self.open:
            self._done.add(e.ct_id)
            out.append((CLOSED, e.ct_id, self.open.pop(e.ct_id)))

    def step(self, pids: Iterable[int]) -> list[tuple[str, int, Flow]]:
        """The flows opened and closed since the last step, in order (the
        datagram sockets' ports are read when a datagram flow opened or
        the cgroup's socket descriptors changed)."""
        out: list[tuple[str, int, Flow]] = []
        for e in self.events.read():
            self._apply(e, out)
        datagrams = [i for i, f in self.open.items() if f.proto in _DATAGRAM]
        if datagrams:
            held = self._ports.poll(pids, force=self._check_ports)
            for i in datagrams:
                f = self.open[i]
                if (f.proto, f.lport) not in held:
                    self._done.add(i)
                    out.append((CLOSED, i, self.open.pop(i)))
        self._check_ports = False
        return out

    def close(self) -> None:
        self.events.close()
