"""The controller's state in PostgreSQL (``--store postgresql://...``):
the schema and the calls of :class:`.store.Store`, through the pure-Python
driver pg8000 (the ``postgres`` extra: ``pip install approxnet[postgres]``).

URL: ``postgresql://[user[:password]@]host[:port]/dbname``, or a Unix
socket directory as ``?host=/run/postgresql``. The tables are created if
missing, with the SQLite store's names, so give the controller a database
(or a user whose ``search_path`` is a schema) of its own. Several
controllers may share one (the distributed mode's PL mapping): each
lifecycle call is one transaction.
"""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .errors import SabaError
from .store import Store, Tx, schema

__all__ = ["PgStore", "connect_args"]


def connect_args(url: str) -> dict[str, Any]:
    """pg8000 connection arguments from a ``postgresql://`` URL."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise SabaError(f"store URL must start with postgresql://, got {url!r}")
    query = urllib.parse.parse_qs(parts.query)
    unknown = set(query) - {"host"}
    if unknown:
        raise SabaError(f"store URL: unknown parameter(s) {sorted(unknown)} (known: host)")
    try:
        port = parts.port or 5432
    except ValueError:
        raise SabaError(f"store URL: bad port in {url!r}") from None
    database = urllib.parse.unquote(parts.path.lstrip("/"))
    if not database:
        raise SabaError(f"store URL: no database name in {url!r}")
    args: dict[str, Any] = {
        "user": urllib.parse.unquote(parts.username or "postgres"),
        "database": database,
        "port": port,
    }
    if parts.password is not None:
        args["password"] = urllib.parse.unquote(parts.password)
    if "host" in query:  # a Unix socket directory
        args["unix_sock"] = f"{query['host'][0]}/.s.PGSQL.{port}"
    else:
        args["host"] = parts.hostname or "localhost"
    return args


class _PgTx:
    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        # pg8000's paramstyle is "format": the store's ? become %s
        self._cursor.execute(sql.replace("?", "%s"), tuple(params))
        if self._cursor.description is None:
            return []
        return [tuple(r) for r in self._cursor.fetchall()]


class PgStore(Store):
    """State in a PostgreSQL database."""

    def __init__(self, url: str) -> None:  # noqa: D107 - no SQLite file
        try:
            import pg8000.dbapi
        except ImportError:
            raise SabaError(
                "a postgresql:// store needs the pg8000 driver: pip install 'approxnet[postgres]'"
            ) from None
        args = connect_args(url)
        self._lock = threading.Lock()
        try:
            self._pg = pg8000.dbapi.connect(**args, timeout=30)
        except (pg8000.dbapi.Error, OSError) as e:
            where = args.get("unix_sock") or f"{args['host']}:{args['port']}"
            raise SabaError(f"cannot connect to PostgreSQL at {where}: {e}") from None
        self._pg_error: type[Exception] = pg8000.dbapi.Error
        with self.transaction() as db:
            for stmt in schema("DOUBLE PRECISION"):
                db.execute(stmt)

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        with self._lock:
            cursor = self._pg.cursor()
            try:
                yield _PgTx(cursor)
            except BaseException:
                self._pg.rollback()
                raise
            finally:
                cursor.close()
            try:
                self._pg.commit()
            except self._pg_error as e:
                raise SabaError(f"PostgreSQL commit failed: {e}") from None

    def close(self) -> None:
        self._pg.close()
