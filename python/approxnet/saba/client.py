"""A Python client of the controller service (:mod:`.service`): each call
one HTTP request; errors come back as the same exception classes the
controller raises (404 -> UnknownError, 409 -> DuplicateError, 400 ->
SabaError)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from .controller import DuplicateError, UnknownError
from .errors import SabaError

__all__ = ["SabaClient"]


class SabaClient:
    """Talks to ``approxnet saba controller`` at `url`."""

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        self.url, self.timeout = url.rstrip("/"), timeout

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as e:
            try:
                msg = json.loads(e.read()).get("error", str(e))
            except (json.JSONDecodeError, AttributeError):
                msg = str(e)
            kind = {404: UnknownError, 409: DuplicateError}.get(e.code, SabaError)
            raise kind(msg) from None
        except urllib.error.URLError as e:
            raise SabaError(f"cannot reach the controller at {self.url}: {e.reason}") from None

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

    def deregister(self, name: str) -> list[str]:
        """Deregisters an app; returns the ports re-allocated."""
        return list(self._call("DELETE", f"/apps/{name}")["ports"])

    def open(self, app: str, src: str, dst: str) -> dict[str, Any]:
        """Reports a new connection; returns its id and ports."""
        return dict(self._call("POST", "/connections", {"app": app, "src": src, "dst": dst}))

    def close(self, conn_id: str) -> list[str]:
        """Reports a closed connection; returns the ports re-allocated."""
        return list(self._call("DELETE", f"/connections/{conn_id}")["ports"])

    def ports(self) -> dict[str, Any]:
        """The per-port configuration (the JSON export)."""
        return dict(self._call("GET", "/ports"))
