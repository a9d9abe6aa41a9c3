"""The controller's state in PostgreSQL: the SQLite store's schema, one
transaction per call, and a restarted controller — in process and as the
``approxnet saba controller --store postgresql://...`` service — recovers
its apps, connections and allocation.

The server is a throwaway cluster (initdb + pg_ctl in a temporary
directory, as the ``postgres`` user when run as root, on a Unix socket
only), stopped and removed after the module. Skipped when PostgreSQL's
binaries are not installed (Debian: ``apt-get install postgresql``) or
pg8000 is missing; ~5 s when they are."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_saba_controller import LR, PR, three_apps

from approxnet import testbed as tb
from approxnet.saba import SabaError
from approxnet.saba.client import SabaClient
from approxnet.saba.controller import Controller
from approxnet.saba.enforce import MemoryBackend
from approxnet.saba.store import AppRow, Store, open_store, schema
from approxnet.saba.store_pg import PgStore, connect_args
from approxnet.saba.topology import TestbedTopology

DUMBBELL = Path(tb.__file__).resolve().parent / "examples" / "dumbbell.toml"


def test_url_parsing_and_its_errors() -> None:
    assert connect_args("postgresql://saba:s%40fe@db.example:6543/state") == {
        "user": "saba",
        "password": "s@fe",
        "host": "db.example",
        "port": 6543,
        "database": "state",
    }
    unix = connect_args("postgresql:///state?host=/run/postgresql")
    assert unix["unix_sock"] == "/run/postgresql/.s.PGSQL.5432" and "host" not in unix
    for bad, needle in (
        ("postgresql://h/", "no database name"),
        ("postgresql://h:x/db", "bad port"),
        ("postgresql://h/db?sslmode=require", "unknown parameter"),
        ("mysql://h/db", "must start with postgresql://"),
    ):
        with pytest.raises(SabaError, match=needle):
            connect_args(bad)
    assert type(open_store(":memory:")) is Store


def _pg_bin() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(versions[-1]).parent if versions else None


def _have_pg8000() -> bool:
    try:
        import pg8000  # noqa: F401
    except ImportError:
        return False
    return True


PG_BIN = _pg_bin()
needs_pg = pytest.mark.skipif(
    PG_BIN is None or not _have_pg8000(),
    reason="PostgreSQL's binaries (initdb, pg_ctl) or pg8000 not installed",
)


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    assert PG_BIN is not None
    top = Path(tempfile.mkdtemp(prefix="saba-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root
        user = "postgres" if _user_exists("postgres") else "nobody"
        pw = pwd.getpwnam(user)
        os.chown(top, pw.pw_uid, pw.pw_gid)
        as_user = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups"]
    data, log = top / "data", top / "log"
    env = {**os.environ, "LC_ALL": "C"}

    def pg(*argv: str) -> None:
        subprocess.run([*as_user, *argv], check=True, capture_output=True, timeout=120, env=env)

    started = False
    try:
        pg(str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-N")
        opts = f"-k {top} -c listen_addresses='' -p 5432 -c fsync=off"
        pg(
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(log),
            "-o",
            opts,
            "-w",
            "-t",
            "60",
            "start",
        )
        started = True
        yield f"postgresql://postgres@/postgres?host={top}"
    finally:
        if started:
            pg(str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(top, ignore_errors=True)


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _fresh(url: str) -> PgStore:
    store = PgStore(url)
    with store.transaction() as db:
        for table in ("connections", "apps", "meta", "pl_map", "pl_centroids"):
            db.execute(f"DELETE FROM {table}")
    return store


def _topology() -> TestbedTopology:
    return TestbedTopology(tb.load(DUMBBELL))


@needs_pg
def test_the_schema_is_the_sqlite_one(pg_url: str) -> None:
    _fresh(pg_url).close()
    lite = sqlite3.connect(":memory:")
    for stmt in schema():
        lite.execute(stmt)
    pg = PgStore(pg_url)
    with pg.transaction() as db:
        for table in ("apps", "connections", "meta", "pl_map", "pl_centroids"):
            cols = [r[1] for r in lite.execute(f"PRAGMA table_info({table})")]
            rows = db.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = ? ORDER BY ordinal_position",
                (table,),
            )
            assert [r[0] for r in rows] == cols, table
    pg.close()


@needs_pg
def test_a_failed_transaction_leaves_no_trace(pg_url: str) -> None:
    store = _fresh(pg_url)
    with pytest.raises(RuntimeError), store.transaction() as db:
        store.add_app(db, AppRow("lr", tuple(LR)))
        raise RuntimeError("the call failed half-way")
    assert store.apps() == []
    with store.transaction() as db:
        store.add_app(db, AppRow("lr", tuple(LR)))
    assert store.apps() == [AppRow("lr", tuple(LR))]
    store.close()


@needs_pg
def test_restarted_controller_recovers_from_postgres(pg_url: str) -> None:
    ctl = Controller(_topology(), _fresh(pg_url), MemoryBackend(), queues=2)
    three_apps(ctl)
    before = ctl.port_configs()
    ctl.store.close()
    again = Controller(_topology(), PgStore(pg_url), MemoryBackend(), queues=2)
    assert [a.name for a in again.apps()] == ["lr", "pr", "sort"]
    assert [c.id for c in again.connections()] == ["c1", "c3"]
    assert again.port_configs() == before
    assert again.open_connection("pr", "h2", "h4").id == "c4"  # ids not reused
    again.store.close()


def _start_service(url: str) -> tuple[subprocess.Popen[str], str]:
    argv = [sys.executable, "-m", "approxnet", "saba", "controller"]
    argv += ["--topology", str(DUMBBELL), "--store", url, "--port", "0"]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()  # "saba controller on http://...:PORT (N apps recovered)"
    assert line.startswith("saba controller on "), line
    return proc, line


@needs_pg
def test_the_service_with_a_postgres_store_survives_a_restart(pg_url: str) -> None:
    _fresh(pg_url).close()
    proc, line = _start_service(pg_url)
    try:
        with SabaClient(line.split()[3]) as client:
            client.register("lr", LR)
            client.register("pr", PR)
            client.open("lr", "h1", "h3")
            ports = client.ports()
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    proc, line = _start_service(pg_url)
    try:
        assert "(2 apps recovered)" in line
        with SabaClient(line.split()[3]) as client:
            assert [a["name"] for a in client.apps()] == ["lr", "pr"]
            assert client.ports() == ports
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
