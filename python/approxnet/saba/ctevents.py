"""Conntrack events of one network namespace (``approxnet saba run``
learns its program's flows from them): a ``NETLINK_NETFILTER`` socket
subscribed to the new / update / destroy groups, opened inside the
namespace (a short-lived thread ``setns``-es into it, so the caller's
threads stay where they are) and parsed here — no ``conntrack`` tool.

The kernel queues every event on the socket, so a connection that opens
and closes between two reads is still seen, in order; when the queue
overflows ``recv`` fails with ENOBUFS, which :meth:`CtEvents.read`
counts in :attr:`CtEvents.lost` (the socket is given a 4 MiB buffer).
Bytes from the kernel are still checked: a truncated message or
attribute ends the parse of that datagram, never a crash.
"""

from __future__ import annotations

import ctypes
import errno
import ipaddress
import os
import socket
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from .cgroup import RunError

__all__ = ["CtEvent", "CtEvents", "parse", "NEW", "UPDATE", "DESTROY", "TCP_CLOSED"]

NETLINK_NETFILTER = 12
_GROUPS = 0b111  # NFNLGRP_CONNTRACK_NEW, _UPDATE, _DESTROY
_SUBSYS_CTNETLINK = 1
_MSG_NEW, _MSG_DELETE = 0, 2
_NLM_F_CREATE = 0x400
_NLMSG_ERROR, _NLMSG_DONE = 2, 3
_CLONE_NEWNET = 0x40000000
# ctnetlink attributes (include/uapi/linux/netfilter/nfnetlink_conntrack.h)
_CTA_TUPLE_ORIG, _CTA_PROTOINFO, _CTA_MARK, _CTA_ID = 1, 4, 8, 12
_CTA_TUPLE_IP, _CTA_TUPLE_PROTO = 1, 2
_CTA_PROTO_NUM, _CTA_PROTO_SRC_PORT, _CTA_PROTO_DST_PORT = 1, 2, 3
_CTA_PROTOINFO_TCP, _CTA_PROTOINFO_TCP_STATE = 1, 1

NEW, UPDATE, DESTROY = "new", "update", "destroy"
#: conntrack's TCP states TIME_WAIT and CLOSE: the connection is over
TCP_CLOSED = (7, 8)


@dataclass(frozen=True)
class CtEvent:
    """One conntrack event: `kind` is NEW, UPDATE or DESTROY; the tuple is
    the original direction's; `tcp_state` None when the event has none."""

    kind: str
    ct_id: int
    proto: int
    src: str
    sport: int
    dst: str
    dport: int
    mark: int
    tcp_state: int | None


def _attrs(buf: bytes) -> Iterator[tuple[int, bytes]]:
    """(type, payload) of each netlink attribute; stops at a bad length."""
    off = 0
    while off + 4 <= len(buf):
        length, kind = struct.unpack_from("=HH", buf, off)
        if length < 4 or off + length > len(buf):
            return
        yield kind & 0x3FFF, buf[off + 4 : off + length]
        off += (length + 3) & ~3


def _tuple(buf: bytes) -> tuple[int, str, int, str, int] | None:
    proto = sport = dport = None
    src = dst = None
    for kind, val in _attrs(buf):
        if kind == _CTA_TUPLE_IP:
            for k, v in _attrs(val):
                if k in (1, 3) and len(v) in (4, 16):
                    src = _addr(v)
                elif k in (2, 4) and len(v) in (4, 16):
                    dst = _addr(v)
        elif kind == _CTA_TUPLE_PROTO:
            for k, v in _attrs(val):
                if k == _CTA_PROTO_NUM and len(v) == 1:
                    proto = v[0]
                elif k == _CTA_PROTO_SRC_PORT and len(v) == 2:
                    sport = struct.unpack("!H", v)[0]
                elif k == _CTA_PROTO_DST_PORT and len(v) == 2:
                    dport = struct.unpack("!H", v)[0]
    if proto is None or sport is None or dport is None or src is None or dst is None:
        return None  # ICMP and the like: no ports, not a flow here
    return proto, src, sport, dst, dport


def _addr(raw: bytes) -> str:
    addr = ipaddress.ip_address(raw)
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return str(addr.ipv4_mapped)
    return str(addr)


def parse(data: bytes) -> list[CtEvent]:
    """The events of one datagram from the socket (others skipped)."""
    out: list[CtEvent] = []
    off = 0
    while off + 16 <= len(data):
        length, mtype, flags, _, _ = struct.unpack_from("=IHHII", data, off)
        if length < 16 or off + length > len(data):
            break
        body = data[off + 16 : off + length]
        off += (length + 3) & ~3
        if mtype >> 8 != _SUBSYS_CTNETLINK or len(body) < 4:
            continue
        msg = mtype & 0xFF
        if msg == _MSG_DELETE:
            kind = DESTROY
        elif msg == _MSG_NEW:
            kind = NEW if flags & _NLM_F_CREATE else UPDATE
        else:
            continue
        tup = None
        mark = ct_id = 0
        state = None
        for k, v in _attrs(body[4:]):  # after struct nfgenmsg
            if k == _CTA_TUPLE_ORIG:
                tup = _tuple(v)
            elif k == _CTA_MARK and len(v) == 4:
                mark = struct.unpack("!I", v)[0]
            elif k == _CTA_ID and len(v) == 4:
                ct_id = struct.unpack("!I", v)[0]
            elif k == _CTA_PROTOINFO:
                for k2, v2 in _attrs(v):
                    if k2 == _CTA_PROTOINFO_TCP:
                        for k3, v3 in _attrs(v2):
                            if k3 == _CTA_PROTOINFO_TCP_STATE and len(v3) == 1:
                                state = v3[0]
        if tup is not None:
            out.append(CtEvent(kind, ct_id, *tup, mark, state))
    return out


def _check_events_on() -> None:
    """In the namespace: conntrack must send events (its sysctl is read
    in the namespace of the thread that opens it)."""
    path = "/proc/sys/net/netfilter/nf_conntrack_events"
    try:
        with open(path) as f:
            on = f.read().strip()
    except OSError:
        return  # no conntrack yet: the default (events on) applies
    if on == "0":
        raise OSError(f"conntrack events are off here ({path} = 0; set it to 1 or 2)")


def _in_netns(netns: str | None) -> socket.socket:
    """A subscribed conntrack socket created in `netns` (None: ours)."""
    made: list[socket.socket | BaseException] = []

    def make() -> None:
        try:
            if netns is not None:
                libc = ctypes.CDLL(None, use_errno=True)
                fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
                try:
                    if libc.setns(fd, _CLONE_NEWNET) != 0:
                        err = ctypes.get_errno()
                        raise OSError(err, f"setns into {netns}: {os.strerror(err)}")
                finally:
                    os.close(fd)
            _check_events_on()
            s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
            try:
                s.setsockopt(socket.SOL_SOCKET, 33, 4 << 20)  # SO_RCVBUFFORCE (root)
            except OSError:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            s.bind((0, _GROUPS))
            made.append(s)
        except BaseException as e:  # handed to the caller's thread
            made.append(e)

    # the thread ends in the namespace it entered; the kernel drops it with
    # the thread, and the socket stays in the namespace it was made in
    t = threading.Thread(target=make, name="saba-ctevents-setns")
    t.start()
    t.join()
    if isinstance(made[0], BaseException):
        raise RunError(f"cannot listen to conntrack events: {made[0]}")
    return made[0]


class CtEvents:
    """The conntrack events of `netns`, read without blocking."""

    def __init__(self, netns: str | None = None) -> None:
        self.sock = _in_netns(netns)
        self.sock.setblocking(False)
        self.lost = 0  # times the kernel's queue overflowed

    def fileno(self) -> int:
        return self.sock.fileno()

    def read(self) -> list[CtEvent]:
        """Every event queued now, in the kernel's order."""
        out: list[CtEvent] = []
        while True:
            try:
                data = self.sock.recv(1 << 16)
            except BlockingIOError:
                return out
            except OSError as e:
                if e.errno != errno.ENOBUFS:
                    raise RunError(f"conntrack events: {e}") from None
                self.lost += 1
                continue
            out.extend(parse(data))

    def close(self) -> None:
        self.sock.close()
