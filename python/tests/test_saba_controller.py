"""Saba's controller and its HTTP service: the lifecycle of seed 003 §6,
reallocation per port, bad input, and recovery from the store."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from approxnet import testbed as tb
from approxnet.saba import SabaError, TopologyError
from approxnet.saba.client import SabaClient
from approxnet.saba.controller import Controller, DuplicateError, UnknownError, publish_mapping
from approxnet.saba.enforce import JsonBackend, MemoryBackend
from approxnet.saba.service import Service
from approxnet.saba.store import Store
from approxnet.saba.topology import TestbedTopology

DUMBBELL = Path(tb.__file__).resolve().parent / "examples" / "dumbbell.toml"
LR = [5.0, -8.0, 3.0]  # steep: 3x slowdown at 25 %
PR = [1.5, -0.5]
SORT = [1.1, -0.1]


def topology() -> TestbedTopology:
    return TestbedTopology(tb.load(DUMBBELL))


def three_apps(ctl: Controller) -> None:
    """Registers lr, pr and sort and opens a connection of each (c1 lr
    h1 -> h3, c2 pr h2 -> h3, c3 sort h1 -> h4), then closes c2: the state a
    restarted controller must recover."""
    for name, c in (("lr", LR), ("pr", PR), ("sort", SORT)):
        ctl.register(name, c)
    ctl.open_connection("lr", "h1", "h3")
    gone = ctl.open_connection("pr", "h2", "h3")
    ctl.open_connection("sort", "h1", "h4")
    ctl.close_connection(gone.id)


@pytest.fixture
def service() -> Iterator[tuple[SabaClient, Controller, MemoryBackend]]:
    backend = MemoryBackend()
    ctl = Controller(topology(), backend=backend, queues=2)
    svc = Service(ctl)
    svc.start()
    client = SabaClient(svc.url)
    try:
        yield client, ctl, backend
    finally:
        client.disconnect()
        svc.stop()


def test_lifecycle_reallocates_the_ports_on_the_path(
    service: tuple[SabaClient, Controller, MemoryBackend],
) -> None:
    client, ctl, backend = service
    lr = client.register("lr", LR)
    assert lr["pl"] == 0 and lr["dscp"] == 1
    client.register("pr", PR)
    client.register("sort", SORT)
    assert backend.pushes == []  # no connection, no port yet
    c1 = client.open("lr", "h1", "h3")
    assert c1["ports"] == ["left:right", "right:h3"]
    client.open("pr", "h2", "h3")
    client.open("sort", "h1", "h4")
    trunk = backend.latest["left:right"]
    weights = dict(trunk.app_weights)
    assert set(weights) == {"lr", "pr", "sort"}
    assert sum(weights.values()) == pytest.approx(1.0)
    assert weights["lr"] > weights["pr"] >= weights["sort"]
    # two queues: lr alone, pr and sort merged by the hierarchy
    assert [q.apps for q in trunk.queues] == [("lr",), ("pr", "sort")]
    assert [q.dscps for q in trunk.queues] == [(1,), (2, 3)]
    assert trunk.queues[1].weight == pytest.approx(weights["pr"] + weights["sort"])
    assert trunk.queues[0].rate_bps == round(weights["lr"] * 10**9)
    client.renew(c1["id"])  # no lease on this controller: only checked
    # closing lr's connection gives the trunk to the others
    assert client.close(c1["id"]) == ["left:right", "right:h3"]
    assert set(dict(backend.latest["left:right"].app_weights)) == {"pr", "sort"}
    assert dict(backend.latest["right:h3"].app_weights) == {"pr": pytest.approx(1.0)}
    # deregistering closes its connections
    client.deregister("sort")
    assert [c.app for c in ctl.connections()] == ["pr"]
    assert dict(backend.latest["left:right"].app_weights) == {"pr": pytest.approx(1.0)}
    assert client.ports()["format"] == "approxnet-saba-ports/1"


def test_bad_calls_are_refused_and_change_nothing(
    service: tuple[SabaClient, Controller, MemoryBackend],
) -> None:
    client, ctl, backend = service
    client.register("lr", LR)
    client.open("lr", "h1", "h3")
    before = (ctl.apps(), ctl.connections(), ctl.port_configs(), len(backend.pushes))

    def post(body: dict[str, object]) -> object:
        return client._call("POST", "/connections", body)

    cases: list[tuple[type[Exception], str, object]] = [
        (DuplicateError, "already registered", lambda: client.register("lr", PR)),
        (SabaError, "c1 is not a finite number", lambda: client.register("x", [1.0, float("nan")])),
        (SabaError, "increases with bandwidth", lambda: client.register("x", [1.0, 0.5])),
        (SabaError, "app name must match", lambda: client.register("a b", PR)),
        (UnknownError, "no registered app 'nope'", lambda: client.open("nope", "h1", "h3")),
        (SabaError, "unknown destination host 'h9'", lambda: client.open("lr", "h1", "h9")),
        (SabaError, "same host", lambda: client.open("lr", "h1", "h1")),
        (UnknownError, "no open connection 'c9'", lambda: client.close("c9")),
        (UnknownError, "no open connection 'c9'", lambda: client.renew("c9")),
        (UnknownError, "no registered app 'pr'", lambda: client.deregister("pr")),
        (SabaError, "missing field 'dst'", lambda: post({"app": "lr", "src": "h1"})),
        (SabaError, "must be a str", lambda: post({"app": "lr", "src": 3, "dst": "h3"})),
        (SabaError, "no sensitivity table", lambda: client.register_workload("y", "lr")),
        (UnknownError, "no such endpoint", lambda: client._call("GET", "/nothing")),
    ]  # fmt: skip
    for kind, needle, call in cases:
        with pytest.raises(kind, match=needle):
            call()  # type: ignore[operator]
    assert (ctl.apps(), ctl.connections(), ctl.port_configs(), len(backend.pushes)) == before


def test_double_close_and_late_calls_after_deregister() -> None:
    ctl = Controller(topology())
    ctl.register("lr", LR)
    c = ctl.open_connection("lr", "h1", "h3")
    ctl.close_connection(c.id)
    with pytest.raises(UnknownError):
        ctl.close_connection(c.id)
    ctl.deregister("lr")
    with pytest.raises(UnknownError):
        ctl.open_connection("lr", "h1", "h3")
    with pytest.raises(TopologyError):
        ctl.register("pr", PR) and ctl.open_connection("pr", "h0", "h3")


def test_restart_recovers_the_same_allocation(tmp_path: Path) -> None:
    db = tmp_path / "saba.db"
    export = tmp_path / "ports.json"
    ctl = Controller(topology(), Store(db), JsonBackend(export), queues=2)
    three_apps(ctl)
    before = ctl.port_configs()
    text = export.read_text()
    ctl.store.close()
    again = Controller(topology(), Store(db), JsonBackend(export), queues=2)
    assert again.port_configs() == before
    assert [c.id for c in again.connections()] == ["c1", "c3"]
    assert export.read_text() == text  # the same configuration pushed again
    assert again.open_connection("pr", "h2", "h4").id == "c4"  # ids not reused


def test_reference_and_fast_controllers_agree() -> None:
    configs = []
    for solver in ("fast", "reference"):
        ctl = Controller(topology(), solver=solver, queues=2)
        for name, c in (("lr", LR), ("pr", PR), ("sort", SORT)):
            ctl.register(name, c)
            ctl.open_connection(name, "h1", "h3")
        configs.append(dict(ctl.port_configs()[0].app_weights))
    for app, w in configs[0].items():
        assert configs[1][app] == pytest.approx(w, abs=1e-4)


def test_distributed_controllers_split_the_ports(tmp_path: Path) -> None:
    models = {"lr": LR, "pr": PR, "sort": SORT}
    shared = Store(tmp_path / "shared.db")
    publish_mapping(shared, models, levels=8)
    central = Controller(topology(), queues=2)
    left = Controller(topology(), queues=2, switches={"left"}, shared_pls=shared)
    right = Controller(topology(), queues=2, switches={"right"}, shared_pls=shared)
    for ctl in (central, left, right):
        for name, c in models.items():
            ctl.register(name, c)
        ctl.open_connection("lr", "h1", "h3")
        ctl.open_connection("pr", "h2", "h3")
        ctl.open_connection("sort", "h3", "h1")
    assert {c.switch for c in left.port_configs()} == {"left"}
    assert {c.switch for c in right.port_configs()} == {"right"}
    both = sorted(left.port_configs() + right.port_configs(), key=lambda c: c.key)
    assert both == central.port_configs()
    with pytest.raises(UnknownError, match="no PL in the shared mapping"):
        left.register("newcomer", PR)


def test_connections_of_a_silent_client_expire() -> None:
    now = [0.0]
    backend = MemoryBackend()
    ctl = Controller(topology(), backend=backend, lease_s=10.0, clock=lambda: now[0])
    ctl.register("lr", LR)
    ctl.register("pr", PR)
    alive = ctl.open_connection("lr", "h1", "h3")
    dead = ctl.open_connection("pr", "h2", "h3")
    now[0] = 8.0
    ctl.renew(alive.id)
    assert ctl.expire() == []
    now[0] = 12.0  # pr's client went silent at 0 s
    assert ctl.expire() == [dead.id]
    assert [c.id for c in ctl.connections()] == [alive.id]
    assert dict(backend.latest["right:h3"].app_weights) == {"lr": pytest.approx(1.0)}
    with pytest.raises(UnknownError):
        ctl.renew(dead.id)
    with pytest.raises(SabaError, match="lease_s"):
        Controller(topology(), lease_s=0.0)


def test_malformed_bodies_keep_the_connection_usable(
    service: tuple[SabaClient, Controller, MemoryBackend],
) -> None:
    client, ctl, _ = service
    conn = http.client.HTTPConnection(client._host, client._port, timeout=10)
    try:
        for body, needle in ((b"not json", b"body is not JSON"), (b"[1]", b"JSON object")):
            conn.request("POST", "/apps", body=body)
            resp = conn.getresponse()
            assert resp.status == 400 and needle in resp.read()
        conn.request("POST", "/connections/c1/renew", body=b'{"ignored": 1}')
        assert b"no open connection" in conn.getresponse().read()
        conn.request("GET", "/health")  # the same kept-alive connection still works
        assert json.loads(conn.getresponse().read()) == {"ok": True, "lease_s": None}
    finally:
        conn.close()
    assert ctl.apps() == []


def test_hosts_and_health_tell_a_wrapper_what_it_needs(
    service: tuple[SabaClient, Controller, MemoryBackend],
) -> None:
    client, _, _ = service
    hosts = {h["name"]: h["addresses"] for h in client.hosts()}
    assert hosts == {f"h{i}": [f"10.77.{i}.2"] for i in range(1, 5)}
    assert client.health() == {"ok": True, "lease_s": None}
