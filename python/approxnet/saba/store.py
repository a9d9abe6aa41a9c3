"""The controller's state in SQLite (a file, by default) or PostgreSQL
(``postgresql://`` URL: :mod:`.store_pg`), so that a restarted controller
recovers its registered apps and open connections (the allocation itself
is recomputed from them). :func:`open_store` picks by the argument.

Schema (the same tables and columns in both; REAL is PostgreSQL's DOUBLE
PRECISION)::

    apps(name TEXT PRIMARY KEY, coeffs TEXT  -- JSON list, lowest power first
         , registered REAL)                  -- Unix time
    connections(id TEXT PRIMARY KEY, app TEXT REFERENCES apps(name),
                src TEXT, dst TEXT, opened REAL)
    meta(key TEXT PRIMARY KEY, value TEXT)   -- next_connection: the id counter
    pl_map(app TEXT PRIMARY KEY, pl INTEGER) -- distributed mode (§5.4): the
    pl_centroids(pl INTEGER PRIMARY KEY,     --   app -> PL mapping and PL
                 coeffs TEXT)                --   centroids, published offline

Each lifecycle call is one transaction: a call that fails leaves no trace.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

__all__ = ["AppRow", "ConnectionRow", "Store", "Tx", "open_store", "schema"]


def schema(real: str = "REAL") -> list[str]:
    """The CREATE statements, with `real` as the floating-point type."""
    return [
        "CREATE TABLE IF NOT EXISTS apps ("
        f"name TEXT PRIMARY KEY, coeffs TEXT NOT NULL, registered {real} NOT NULL)",
        "CREATE TABLE IF NOT EXISTS connections ("
        "id TEXT PRIMARY KEY, app TEXT NOT NULL REFERENCES apps(name), "
        f"src TEXT NOT NULL, dst TEXT NOT NULL, opened {real} NOT NULL)",
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS pl_map (app TEXT PRIMARY KEY, pl INTEGER NOT NULL)",
        "CREATE TABLE IF NOT EXISTS pl_centroids (pl INTEGER PRIMARY KEY, coeffs TEXT NOT NULL)",
    ]


@dataclass(frozen=True)
class AppRow:
    """A registered app."""

    name: str
    coeffs: tuple[float, ...]


@dataclass(frozen=True)
class ConnectionRow:
    """An open connection."""

    id: str
    app: str
    src: str
    dst: str


class Tx(Protocol):
    """One open transaction: statements with ``?`` placeholders."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Runs one statement; its rows (none for a change)."""
        ...


class _SqliteTx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.execute(sql, tuple(params)).fetchall()


class Store:
    """State in one SQLite file (``":memory:"`` for none). Subclasses
    (:class:`.store_pg.PgStore`) give :meth:`transaction` another database;
    every method below goes through it."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA foreign_keys = ON")
        for stmt in schema():
            self._db.execute(stmt)
        self._lock = threading.Lock()

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        """One atomic change: committed on success, rolled back on error."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield _SqliteTx(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.transaction() as db:
            return db.execute(sql, params)

    def add_app(self, db: Tx, app: AppRow) -> None:
        """Within a transaction: a new app."""
        db.execute(
            "INSERT INTO apps VALUES (?, ?, ?)", (app.name, json.dumps(app.coeffs), time.time())
        )

    def remove_app(self, db: Tx, name: str) -> None:
        """Within a transaction: an app and its connections."""
        db.execute("DELETE FROM connections WHERE app = ?", (name,))
        db.execute("DELETE FROM apps WHERE name = ?", (name,))

    def add_connection(self, db: Tx, c: ConnectionRow) -> None:
        """Within a transaction: a new connection."""
        db.execute(
            "INSERT INTO connections VALUES (?, ?, ?, ?, ?)",
            (c.id, c.app, c.src, c.dst, time.time()),
        )

    def remove_connection(self, db: Tx, conn_id: str) -> None:
        """Within a transaction: a closed connection."""
        db.execute("DELETE FROM connections WHERE id = ?", (conn_id,))

    def next_id(self, db: Tx) -> str:
        """Within a transaction: a fresh connection id (``c1``, ``c2``, ...)."""
        rows = db.execute("SELECT value FROM meta WHERE key = 'next_connection'")
        n = int(rows[0][0]) if rows else 1
        db.execute(
            "INSERT INTO meta VALUES ('next_connection', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(n + 1),),
        )
        return f"c{n}"

    def apps(self) -> list[AppRow]:
        """Every registered app, in registration order."""
        rows = self._query("SELECT name, coeffs FROM apps ORDER BY registered, name")
        return [AppRow(n, tuple(json.loads(c))) for n, c in rows]

    def connections(self) -> list[ConnectionRow]:
        """Every open connection, in the order opened."""
        rows = self._query("SELECT id, app, src, dst FROM connections ORDER BY opened, id")
        return [ConnectionRow(*r) for r in rows]

    def publish_pls(self, pl_of: dict[str, int], centroids: list[list[float]]) -> None:
        """Replaces the shared app -> PL mapping and the PL centroids."""
        with self.transaction() as db:
            db.execute("DELETE FROM pl_map")
            db.execute("DELETE FROM pl_centroids")
            for app, pl in sorted(pl_of.items()):
                db.execute("INSERT INTO pl_map VALUES (?, ?)", (app, pl))
            for i, c in enumerate(centroids):
                db.execute("INSERT INTO pl_centroids VALUES (?, ?)", (i, json.dumps(c)))

    def read_pls(self) -> tuple[dict[str, int], list[list[float]]]:
        """The shared app -> PL mapping and the PL centroids."""
        with self.transaction() as db:
            pl_of = {str(a): int(p) for a, p in db.execute("SELECT app, pl FROM pl_map")}
            rows = db.execute("SELECT coeffs FROM pl_centroids ORDER BY pl")
        return pl_of, [json.loads(r[0]) for r in rows]

    def close(self) -> None:
        """Closes the database."""
        self._db.close()


def open_store(where: str | Path) -> Store:
    """A ``postgresql://`` (or ``postgres://``) URL: :class:`.store_pg.PgStore`;
    anything else: a SQLite file."""
    text = str(where)
    if text.startswith(("postgresql://", "postgres://")):
        from .store_pg import PgStore

        return PgStore(text)
    return Store(text)
