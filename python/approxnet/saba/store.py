"""The controller's state in SQLite, so that a restarted controller
recovers its registered apps and open connections (the allocation itself
is recomputed from them).

Schema::

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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["AppRow", "ConnectionRow", "Store"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS apps (
    name TEXT PRIMARY KEY, coeffs TEXT NOT NULL, registered REAL NOT NULL);
CREATE TABLE IF NOT EXISTS connections (
    id TEXT PRIMARY KEY, app TEXT NOT NULL REFERENCES apps(name),
    src TEXT NOT NULL, dst TEXT NOT NULL, opened REAL NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pl_map (app TEXT PRIMARY KEY, pl INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pl_centroids (pl INTEGER PRIMARY KEY, coeffs TEXT NOT NULL);
"""


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


class Store:
    """State in one SQLite file (``":memory:"`` for none)."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic change: committed on success, rolled back on error."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def add_app(self, db: sqlite3.Connection, app: AppRow) -> None:
        """Within a transaction: a new app."""
        db.execute(
            "INSERT INTO apps VALUES (?, ?, ?)", (app.name, json.dumps(app.coeffs), time.time())
        )

    def remove_app(self, db: sqlite3.Connection, name: str) -> None:
        """Within a transaction: an app and its connections."""
        db.execute("DELETE FROM connections WHERE app = ?", (name,))
        db.execute("DELETE FROM apps WHERE name = ?", (name,))

    def add_connection(self, db: sqlite3.Connection, c: ConnectionRow) -> None:
        """Within a transaction: a new connection."""
        db.execute(
            "INSERT INTO connections VALUES (?, ?, ?, ?, ?)",
            (c.id, c.app, c.src, c.dst, time.time()),
        )

    def remove_connection(self, db: sqlite3.Connection, conn_id: str) -> None:
        """Within a transaction: a closed connection."""
        db.execute("DELETE FROM connections WHERE id = ?", (conn_id,))

    def next_id(self, db: sqlite3.Connection) -> str:
        """Within a transaction: a fresh connection id (``c1``, ``c2``, ...)."""
        row = db.execute("SELECT value FROM meta WHERE key = 'next_connection'").fetchone()
        n = int(row[0]) if row else 1
        db.execute("INSERT OR REPLACE INTO meta VALUES ('next_connection', ?)", (str(n + 1),))
        return f"c{n}"

    def apps(self) -> list[AppRow]:
        """Every registered app, in registration order."""
        rows = self._db.execute("SELECT name, coeffs FROM apps ORDER BY registered, name")
        return [AppRow(n, tuple(json.loads(c))) for n, c in rows]

    def connections(self) -> list[ConnectionRow]:
        """Every open connection, in the order opened."""
        rows = self._db.execute("SELECT id, app, src, dst FROM connections ORDER BY opened, id")
        return [ConnectionRow(*r) for r in rows]

    def publish_pls(self, pl_of: dict[str, int], centroids: list[list[float]]) -> None:
        """Replaces the shared app -> PL mapping and the PL centroids."""
        with self.transaction() as db:
            db.execute("DELETE FROM pl_map")
            db.execute("DELETE FROM pl_centroids")
            db.executemany("INSERT INTO pl_map VALUES (?, ?)", sorted(pl_of.items()))
            db.executemany(
                "INSERT INTO pl_centroids VALUES (?, ?)",
                [(i, json.dumps(c)) for i, c in enumerate(centroids)],
            )

    def read_pls(self) -> tuple[dict[str, int], list[list[float]]]:
        """The shared app -> PL mapping and the PL centroids."""
        pl_of = dict(self._db.execute("SELECT app, pl FROM pl_map").fetchall())
        rows = self._db.execute("SELECT coeffs FROM pl_centroids ORDER BY pl").fetchall()
        return pl_of, [json.loads(r[0]) for r in rows]

    def close(self) -> None:
        """Closes the file."""
        self._db.close()
