"""The controller as an HTTP/JSON service (the library lifecycle of seed
003 §6), on the standard library's ``ThreadingHTTPServer``.

```text
POST   /apps                {"name", "coeffs": [c0, ...]}     201 AppInfo
       (or "workload" [+ "degree"] looked up in the sensitivity table)
GET    /apps                                                  200 [AppInfo]
GET    /apps/NAME                                             200 AppInfo
DELETE /apps/NAME                                             200 {"ports"}
POST   /connections         {"app", "src", "dst"}             201 ConnectionInfo
GET    /connections                                           200 [ConnectionInfo]
POST   /connections/ID/renew   (with a lease: keeps it open)   200 {"id"}
DELETE /connections/ID                                        200 {"ports"}
GET    /ports                                                 200 the JSON export
GET    /hosts                                                 200 [{"name", "addresses"}]
GET    /health                                                200 {"ok": true, "lease_s"}
```

Errors are ``{"error": message}`` with 400 (bad JSON, a missing or
ill-typed field, a bad model, an unknown host), 404 (unknown app,
connection or path) and 409 (an app registered twice).
"""

from __future__ import annotations

import json
import socket
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .controller import Controller, DuplicateError, UnknownError
from .enforce import export_json
from .errors import SabaError
from .table import SensitivityTable

__all__ = ["Service", "serve"]

MAX_BODY = 1 << 20


class _BadRequest(Exception):
    pass


def _field(body: dict[str, Any], name: str, kind: type) -> Any:
    if name not in body:
        raise _BadRequest(f"missing field {name!r}")
    value = body[name]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise _BadRequest(f"field {name!r} must be a {kind.__name__}, got {value!r}")
    return value


class Service:
    """The controller behind an HTTP server (``port=0``: any free port)."""

    def __init__(
        self,
        controller: Controller,
        host: str = "127.0.0.1",
        port: int = 0,
        table: SensitivityTable | None = None,
    ) -> None:
        self.controller, self.table = controller, table
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: one connection per client

            def setup(self) -> None:
                super().setup()
                # headers and body are two writes: without this, Nagle and the
                # client's delayed ACK add 40 ms to every kept-alive reply
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                service._handle(self, "GET")

            def do_POST(self) -> None:
                service._handle(self, "POST")

            def do_DELETE(self) -> None:
                service._handle(self, "DELETE")

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._expirer: threading.Thread | None = None
        if controller.lease_s is not None:
            period = controller.lease_s / 4
            self._expirer = threading.Thread(target=self._expire_loop, args=(period,), daemon=True)
            self._expirer.start()

    def _expire_loop(self, period: float) -> None:
        while not self._stop.wait(period):
            self.controller.expire()

    @property
    def url(self) -> str:
        """``http://host:port``."""
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        """Serves in a background thread."""
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stops serving and closes the socket."""
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _handle(self, req: BaseHTTPRequestHandler, method: str) -> None:
        try:
            # every body is read whole first: on a kept-alive connection an
            # unread body would be taken for the next request
            raw = self._read(req)
            status, payload = self._route(req, method, raw)
        except _BadRequest as e:
            status, payload = HTTPStatus.BAD_REQUEST, {"error": str(e)}
        except UnknownError as e:
            status, payload = HTTPStatus.NOT_FOUND, {"error": str(e)}
        except DuplicateError as e:
            status, payload = HTTPStatus.CONFLICT, {"error": str(e)}
        except SabaError as e:
            status, payload = HTTPStatus.BAD_REQUEST, {"error": str(e)}
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        req.send_response(status)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

    def _read(self, req: BaseHTTPRequestHandler) -> bytes:
        try:
            n = int(req.headers.get("Content-Length", "0"))
        except ValueError:
            req.close_connection = True
            raise _BadRequest("bad Content-Length") from None
        if not 0 <= n <= MAX_BODY:
            req.close_connection = True  # the body is not read: drop the connection
            raise _BadRequest(f"body must be at most {MAX_BODY} bytes")
        return req.rfile.read(n)

    @staticmethod
    def _body(raw: bytes) -> dict[str, Any]:
        try:
            body = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise _BadRequest(f"body is not JSON: {e}") from None
        if not isinstance(body, dict):
            raise _BadRequest("body must be a JSON object")
        return body

    def _route(self, req: BaseHTTPRequestHandler, method: str, raw: bytes) -> tuple[int, Any]:
        parts = [p for p in req.path.split("?")[0].split("/") if p]
        c = self.controller
        match method, parts:
            case "GET", ["health"]:
                return HTTPStatus.OK, {"ok": True, "lease_s": c.lease_s}
            case "GET", ["hosts"]:
                addresses: dict[str, list[str]] = getattr(c.topology, "addresses", dict)()
                return HTTPStatus.OK, [
                    {"name": h, "addresses": list(addresses.get(h, []))} for h in c.topology.hosts()
                ]
            case "GET", ["apps"]:
                return HTTPStatus.OK, [vars(a) for a in c.apps()]
            case "GET", ["apps", name]:
                return HTTPStatus.OK, vars(c.app(name))
            case "POST", ["apps"]:
                body = self._body(raw)
                name = _field(body, "name", str)
                if "coeffs" in body:
                    coeffs = _field(body, "coeffs", list)
                elif "workload" in body:
                    coeffs = list(self._lookup(body))
                else:
                    raise _BadRequest("give 'coeffs' or 'workload'")
                return HTTPStatus.CREATED, vars(c.register(name, coeffs))
            case "DELETE", ["apps", name]:
                return HTTPStatus.OK, {"ports": c.deregister(name)}
            case "GET", ["connections"]:
                return HTTPStatus.OK, [vars(x) for x in c.connections()]
            case "POST", ["connections"]:
                body = self._body(raw)
                app, src, dst = (_field(body, k, str) for k in ("app", "src", "dst"))
                return HTTPStatus.CREATED, vars(c.open_connection(app, src, dst))
            case "POST", ["connections", cid, "renew"]:
                c.renew(cid)
                return HTTPStatus.OK, {"id": cid}
            case "DELETE", ["connections", cid]:
                return HTTPStatus.OK, {"ports": c.close_connection(cid)}
            case "GET", ["ports"]:
                return HTTPStatus.OK, export_json(c.port_configs())
        raise UnknownError(f"no such endpoint: {method} {req.path}")

    def _lookup(self, body: dict[str, Any]) -> tuple[float, ...]:
        if self.table is None:
            raise _BadRequest("this controller has no sensitivity table; give 'coeffs'")
        degree = _field(body, "degree", int) if "degree" in body else 3
        return self.table.get(_field(body, "workload", str), degree).model.coeffs


def serve(service: Service) -> None:
    """Serves until interrupted."""
    try:
        service.server.serve_forever()
    finally:
        service.server.server_close()
