"""A Python client of the controller service (:mod:`.service`): each call
one HTTP request on a kept-alive connection (one client per thread);
errors come back as the same exception classes the controller raises
(404 -> UnknownError, 409 -> DuplicateError, 400 -> SabaError)."""

from __future__ import annotations

import http.client
import json
import urllib.parse
from collections.abc import Sequence
from typing import Any

from .controller import DuplicateError, UnknownError
from .errors import SabaError

__all__ = ["SabaClient"]


class SabaClient:
    """Talks to ``approxnet saba controller`` at `url`."""

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        self.url, self.timeout = url.rstrip("/"), timeout
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme != "http" or not parts.hostname:
            raise SabaError(f"controller URL must be http://host:port, got {url!r}")
        self._host, self._port = parts.hostname, parts.port or 80
        self._conn: http.client.HTTPConnection | None = None

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"}
        for attempt in (0, 1):
            # a reused connection the server has closed fails at once: retry
            # that once on a new one (a fresh connection is never retried)
            fresh = self._conn is None
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self._host, self._port, self.timeout)
            try:
                self._conn.request(method, path, body=data, headers=headers)
                resp = self._conn.getresponse()
                payload = resp.read()
                break
            except (ConnectionError, http.client.HTTPException, OSError) as e:
                self._conn.close()
                self._conn = None
                if attempt or fresh:
                    raise SabaError(f"cannot reach the controller at {self.url}: {e}") from None
        if resp.status >= 400:
            try:
                msg = json.loads(payload).get("error", resp.reason)
            except (json.JSONDecodeError, AttributeError):
                msg = resp.reason
            kind = {404: UnknownError, 409: DuplicateError}.get(resp.status, SabaError)
            raise kind(msg)
        return json.loads(payload)

    def __enter__(self) -> SabaClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.disconnect()

    def disconnect(self) -> None:
        """Closes the kept-alive connection (the next call opens another)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def register(self, name: str, coeffs: Sequence[float]) -> dict[str, Any]:
        """Registers an app; returns its name, PL, DSCP and coefficients."""
        return dict(self._call("POST", "/apps", {"name": name, "coeffs": list(coeffs)}))

    def register_workload(self, name: str, workload: str, degree: int = 3) -> dict[str, Any]:
        """Registers an app with a model from the controller's table."""
        body = {"name": name, "workload": workload, "degree": degree}
        return dict(self._call("POST", "/apps", body))

    def app(self, name: str) -> dict[str, Any]:
        """An app's current PL and DSCP."""
        return dict(self._call("GET", f"/apps/{name}"))

    def apps(self) -> list[dict[str, Any]]:
        """Every registered app."""
        return list(self._call("GET", "/apps"))

    def deregister(self, name: str) -> list[str]:
        """Deregisters an app; returns the ports re-allocated."""
        return list(self._call("DELETE", f"/apps/{name}")["ports"])

    def open(self, app: str, src: str, dst: str) -> dict[str, Any]:
        """Reports a new connection; returns its id and ports."""
        return dict(self._call("POST", "/connections", {"app": app, "src": src, "dst": dst}))

    def close(self, conn_id: str) -> list[str]:
        """Reports a closed connection; returns the ports re-allocated."""
        return list(self._call("DELETE", f"/connections/{conn_id}")["ports"])

    def connections(self) -> list[dict[str, Any]]:
        """Every open connection (id, app, src, dst, ports)."""
        return list(self._call("GET", "/connections"))

    def renew(self, conn_id: str) -> None:
        """Renews a connection's lease."""
        self._call("POST", f"/connections/{conn_id}/renew", {})

    def hosts(self) -> list[dict[str, Any]]:
        """The topology's hosts: ``[{"name", "addresses"}]``."""
        return list(self._call("GET", "/hosts"))

    def health(self) -> dict[str, Any]:
        """``{"ok": true, "lease_s": seconds or null}``."""
        return dict(self._call("GET", "/health"))

    def ports(self) -> dict[str, Any]:
        """The per-port configuration (the JSON export)."""
        return dict(self._call("GET", "/ports"))
