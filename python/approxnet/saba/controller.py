"""Saba's controller (seed 003 §5): registered apps, their open
connections, and the weights of every switch output port they cross.

* ``register`` / ``deregister`` re-run the app -> PL clustering (K-means,
  §5.3.1) and the PL hierarchy (§5.3.2) — the centralized mode of §5.4 —
  and re-allocate every port in use when an app's PL changed;
* ``open_connection`` / ``close_connection`` map (source, destination) to
  the ports on its path (the topology's routes) and re-allocate those;
* each reallocation solves eq. 2 per port (fast or reference solver),
  groups the port's PLs into its queues, sums the apps' weights per queue
  and pushes the port configurations to the enforcement backend.

Distributed mode (§5.4): a controller given `switches` configures only
the ports of those switches (every controller sees the lifecycle calls of
the connections that cross its switches), and with `shared_pls` (a store
both controllers read) it takes the app -> PL mapping and the PL centroids
published offline by :func:`publish_mapping` instead of running K-means.

With `lease_s`, a connection expires unless renewed within that time
(:meth:`Controller.renew`, :meth:`Controller.expire`; the service calls
`expire` periodically); recovered connections start a fresh lease.

Every call validates its input before it changes anything; state changes
go to the store in one transaction (see :mod:`.store`) and a restarted
controller rebuilds the same allocation from it. Thread-safe (one lock).
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from .._native import saba_solve_ports
from .enforce import Backend, NullBackend
from .errors import SabaError, StateError
from .mapping import PlHierarchy, apps_to_pls, queue_weights
from .model import validate
from .portconfig import MAX_LEVELS, PortConfig, QueueConfig, dscp_of_pl
from .solver import Solver, default_floors, solve_reference
from .store import AppRow, ConnectionRow, Store
from .topology import Port, Topology

__all__ = [
    "Controller",
    "AppInfo",
    "ConnectionInfo",
    "UnknownError",
    "DuplicateError",
    "publish_mapping",
]

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: The smallest rate a queue is given (HTB needs a positive rate).
MIN_RATE_BPS = 8_000


class UnknownError(StateError):
    """The call names an app or connection the controller does not have."""


class DuplicateError(StateError):
    """The call registers an app (or opens a connection id) twice."""


@dataclass(frozen=True)
class AppInfo:
    """What a registering app is told: its PL and the DSCP to mark with."""

    name: str
    pl: int
    dscp: int
    coeffs: tuple[float, ...]


@dataclass(frozen=True)
class ConnectionInfo:
    """An open connection and the ports on its path."""

    id: str
    app: str
    src: str
    dst: str
    ports: tuple[str, ...]


class Controller:
    """The centralized controller over one topology."""

    def __init__(
        self,
        topology: Topology,
        store: Store | None = None,
        backend: Backend | None = None,
        *,
        levels: int = 8,
        queues: int = 8,
        capacity: float = 1.0,
        solver: Solver = "fast",
        seed: int = 0,
        switches: Collection[str] | None = None,
        shared_pls: Store | None = None,
        lease_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 1 <= levels <= MAX_LEVELS:
            raise SabaError(f"levels must be 1..{MAX_LEVELS}, got {levels}")
        if not 1 <= queues <= MAX_LEVELS:
            raise SabaError(f"queues must be 1..{MAX_LEVELS}, got {queues}")
        if not 0.0 < capacity <= 1.0:
            raise SabaError(f"capacity (C_Saba) must be in (0, 1], got {capacity}")
        if solver not in ("fast", "reference"):
            raise SabaError(f"solver must be 'fast' or 'reference', got {solver!r}")
        self.topology = topology
        self.store = store if store is not None else Store()
        self.backend: Backend = backend if backend is not None else NullBackend()
        self.levels, self.queues, self.capacity = levels, queues, capacity
        self.solver: Solver = solver
        self.seed = seed
        if lease_s is not None and not lease_s > 0:
            raise SabaError(f"lease_s must be a number of seconds above 0, got {lease_s}")
        self.lease_s, self.clock = lease_s, clock
        self._deadline: dict[str, float] = {}
        self.switches = None if switches is None else frozenset(switches)
        self.shared_pls = shared_pls
        self._lock = threading.RLock()
        self._apps: dict[str, tuple[float, ...]] = {}
        self._conns: dict[str, ConnectionInfo] = {}
        self._ports: dict[str, Port] = {}
        self._on_port: Counter[tuple[str, str]] = Counter()  # (port, app) -> connections
        self._pl: dict[str, int] = {}
        self._hierarchy = PlHierarchy([], 1)
        self.configs: dict[str, PortConfig] = {}
        self._recover()

    # ------------------------------------------------------------------ API

    def register(self, name: str, coeffs: Sequence[float]) -> AppInfo:
        """Registers an app with its sensitivity model (eq. 1 coefficients)."""
        with self._lock:
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                raise SabaError(f"app name must match [A-Za-z0-9_.-]{{1,64}}, got {name!r}")
            if name in self._apps:
                raise DuplicateError(f"app {name!r} is already registered")
            if not isinstance(coeffs, list | tuple):
                raise SabaError(f"coeffs must be a list of numbers, got {coeffs!r}")
            validate(coeffs)
            if self.shared_pls is not None and name not in self.shared_pls.read_pls()[0]:
                raise UnknownError(f"app {name!r} has no PL in the shared mapping (publish it)")
            c = tuple(float(x) for x in coeffs)
            with self.store.transaction() as db:
                self.store.add_app(db, AppRow(name, c))
            self._apps[name] = c
            self._recluster()
            return self.app(name)

    def deregister(self, name: str) -> list[str]:
        """Deregisters an app, closing its connections; returns the ports
        re-allocated."""
        with self._lock:
            self._need_app(name)
            with self.store.transaction() as db:
                self.store.remove_app(db, name)
            touched: set[str] = set()
            for conn in [c for c in self._conns.values() if c.app == name]:
                touched.update(self._drop(conn))
            del self._apps[name]
            touched.update(self._recluster(reallocate=False))
            return self._reallocate(touched)

    def open_connection(self, app: str, src: str, dst: str) -> ConnectionInfo:
        """A new connection of `app` from host `src` to host `dst`."""
        with self._lock:
            self._need_app(app)
            path = self.topology.path(src, dst)  # TopologyError before any change
            with self.store.transaction() as db:
                cid = self.store.next_id(db)
                self.store.add_connection(db, ConnectionRow(cid, app, src, dst))
            conn = self._add(cid, app, src, dst, path)
            self._reallocate(conn.ports)
            return conn

    def renew(self, conn_id: str) -> None:
        """Extends a connection's lease by `lease_s` from now (a client that
        stops renewing — e.g. one that died — has its connections expire)."""
        with self._lock:
            if conn_id not in self._conns:
                raise UnknownError(f"no open connection {conn_id!r}")
            if self.lease_s is not None:
                self._deadline[conn_id] = self.clock() + self.lease_s

    def expire(self) -> list[str]:
        """Closes every connection whose lease ran out; returns their ids."""
        with self._lock:
            now = self.clock()
            gone = sorted(c for c, t in self._deadline.items() if t <= now)
            for cid in gone:
                self.close_connection(cid)
            return gone

    def close_connection(self, conn_id: str) -> list[str]:
        """Closes a connection; returns the ports re-allocated."""
        with self._lock:
            conn = self._conns.get(conn_id)
            if conn is None:
                raise UnknownError(f"no open connection {conn_id!r}")
            with self.store.transaction() as db:
                self.store.remove_connection(db, conn_id)
            return self._reallocate(self._drop(conn))

    def app(self, name: str) -> AppInfo:
        """An app's PL and DSCP (they may change when others register)."""
        with self._lock:
            self._need_app(name)
            pl = self._pl[name]
            return AppInfo(name, pl, dscp_of_pl(pl), self._apps[name])

    def apps(self) -> list[AppInfo]:
        """Every registered app."""
        with self._lock:
            return [self.app(n) for n in sorted(self._apps)]

    def connections(self) -> list[ConnectionInfo]:
        """Every open connection."""
        with self._lock:
            return list(self._conns.values())

    def port_configs(self) -> list[PortConfig]:
        """The current configuration of every port that carries Saba traffic
        (or did, and was reset)."""
        with self._lock:
            return [self.configs[k] for k in sorted(self.configs)]

    # ------------------------------------------------------------- internals

    def _need_app(self, name: str) -> None:
        if name not in self._apps:
            raise UnknownError(f"no registered app {name!r}")

    def _add(self, cid: str, app: str, src: str, dst: str, path: list[Port]) -> ConnectionInfo:
        conn = ConnectionInfo(cid, app, src, dst, tuple(p.key for p in path))
        self._conns[cid] = conn
        if self.lease_s is not None:
            self._deadline[cid] = self.clock() + self.lease_s
        for p in path:
            self._ports[p.key] = p
            self._on_port[(p.key, app)] += 1
        return conn

    def _drop(self, conn: ConnectionInfo) -> tuple[str, ...]:
        del self._conns[conn.id]
        self._deadline.pop(conn.id, None)
        for key in conn.ports:
            self._on_port[(key, conn.app)] -= 1
            if self._on_port[(key, conn.app)] <= 0:
                del self._on_port[(key, conn.app)]
        return conn.ports

    def _recover(self) -> None:
        for row in self.store.apps():
            validate(row.coeffs)
            self._apps[row.name] = row.coeffs
        for c in self.store.connections():
            if c.app in self._apps:
                self._add(c.id, c.app, c.src, c.dst, self.topology.path(c.src, c.dst))
        self._recluster(reallocate=False)
        self._reallocate(self._ports)

    def _recluster(self, reallocate: bool = True) -> set[str]:
        """K-means and the hierarchy again; the ports whose apps changed PL."""
        old = self._pl
        if self.shared_pls is not None:
            shared, centroids = self.shared_pls.read_pls()
            self._pl = {a: shared[a] for a in self._apps if a in shared}
        else:
            self._pl, centroids = apps_to_pls(self._apps, self.levels, self.seed)
        self._hierarchy = PlHierarchy(centroids, min(self.queues, max(len(centroids), 1)))
        moved = {a for a in self._pl if old.get(a) != self._pl[a]}
        touched = {p for (p, a) in self._on_port if a in moved}
        if old and moved:  # the hierarchy changed: every port in use is redone
            touched = {p for (p, _) in self._on_port}
        if reallocate:
            self._reallocate(touched)
        return touched

    def _owns(self, key: str) -> bool:
        return self.switches is None or self._ports[key].switch in self.switches

    def _apps_at(self, key: str) -> list[str]:
        return sorted({a for (p, a) in self._on_port if p == key})

    def _reallocate(self, keys: Iterable[str]) -> list[str]:
        keys = sorted(k for k in set(keys) if self._owns(k))
        per_port = [self._apps_at(k) for k in keys]
        weights = self._solve(per_port)
        new = [self._config(k, apps, w) for k, apps, w in zip(keys, per_port, weights, strict=True)]
        for cfg in new:
            self.configs[cfg.key] = cfg
        if new:
            self.backend.apply(new)
        return keys

    def _solve(self, per_port: list[list[str]]) -> list[list[float]]:
        floors = [default_floors(len(apps), self.capacity) for apps in per_port]
        if self.solver == "reference":
            return [
                list(solve_reference([self._apps[a] for a in apps], f, self.capacity).weights)
                for apps, f in zip(per_port, floors, strict=True)
            ]
        names = sorted({a for apps in per_port for a in apps})  # only those involved
        index = {n: i for i, n in enumerate(names)}
        coeffs = [list(self._apps[n]) + [0.0] * (4 - len(self._apps[n])) for n in names]
        batch = [([index[a] for a in apps], f) for apps, f in zip(per_port, floors, strict=True)]
        return saba_solve_ports(coeffs, batch, self.capacity)

    def _config(self, key: str, apps: list[str], weights: list[float]) -> PortConfig:
        port = self._ports[key]
        pls = sorted({self._pl[a] for a in apps})
        groups = self._hierarchy.queues_for(pls, self.queues) if apps else []
        app_w = dict(zip(apps, weights, strict=True))
        q = queue_weights(groups, self._pl, app_w)
        queues = tuple(
            QueueConfig(
                queue=i,
                weight=w,
                rate_bps=max(MIN_RATE_BPS, round(w * port.rate_bps)),
                dscps=tuple(dscp_of_pl(p) for p in group),
                apps=tuple(a for a in apps if self._pl[a] in group),
            )
            for i, (group, w) in enumerate(zip(q.pls, q.weights, strict=True))
        )
        return PortConfig(port.switch, port.ifname, port.rate_bps, queues, tuple(app_w.items()))


def publish_mapping(
    store: Store, coeffs: Mapping[str, Sequence[float]], levels: int = 8, seed: int = 0
) -> dict[str, int]:
    """The offline step of the distributed mode (§5.4): K-means of every
    profiled app's model into PLs, written to the shared store with the PL
    centroids (from which each controller builds the same hierarchy)."""
    for c in coeffs.values():
        validate(c)
    pl_of, centroids = apps_to_pls(coeffs, levels, seed)
    store.publish_pls(pl_of, centroids)
    return pl_of
