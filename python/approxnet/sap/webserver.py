"""A small HTTP file server that sends selected MIME types over SAP
(seed 002 §4.1, the lighttpd port) and its client.

A SAP-aware client lists the MIME types it tolerates damaged in
``X-SAP-Approx`` and the UDP-Lite port it listens on in ``X-SAP-Port``;
``X-SAP-Force-Precise: 1`` asks for precise SAP instead. For a matching
file the server answers the HTTP request with its length only
(``X-SAP-Length``, empty body), connects back to the client over SAP and
sends the file in 1 KB datagrams, each a 4-byte precise chunk index and
the chunk's bytes (approximate unless forced precise; a JPEG's header, up
to its start of scan, always precise); anything else is
served over the TCP connection as usual. The client places chunks by
index and zero-fills what never arrived.

    python -m approxnet.sap.webserver serve --bind 10.77.1.2:8080 --dir FILES
    python -m approxnet.sap.webserver fetch --url http://10.77.1.2:8080/a.jpg --mode sap-approx
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import json
import mimetypes
import struct
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import SapListener, SapSocket

CHUNK = 1024
INDEX = struct.Struct(">I")
MODES = ("tcp", "sap-precise", "sap-approx")


def jpeg_header_len(data: bytes) -> int:
    """Bytes of a JPEG before its entropy-coded data: SOI and every marker
    segment up to and including the first SOS (start of scan; ITU T.81
    B.2). 0 when `data` is not a JPEG or its markers are malformed (the
    file is then sent as any other)."""
    if data[:2] != b"\xff\xd8":
        return 0
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return 0
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte before a marker
            at += 1
            continue
        seg = int.from_bytes(data[at + 2 : at + 4], "big")
        if seg < 2 or at + 2 + seg > len(data):
            return 0
        at += 2 + seg
        if marker == 0xDA:
            return at
    return 0


def sap_send(
    peer: str,
    data: bytes,
    approximate: bool,
    line_rate_mbps: float | None,
    precise_head: int = 0,
    window: bool = True,
) -> None:
    """Sends `data` to a SAP listener at `peer` in CHUNK-byte datagrams;
    approximate ones carry their 4-byte index as the precise prefix. The
    chunks holding the first `precise_head` bytes (a JPEG's header) go in
    precise mode (acknowledged, resent) before the socket switches to
    approximate mode: a damaged or lost header leaves no decodable image."""
    s = SapSocket.connect(peer, line_rate_mbps=line_rate_mbps, congestion_window=window)
    for i in range(0, max(len(data), 1), CHUNK):
        if approximate and i >= precise_head and s.mode == "precise":
            s.mode = "approximate"
        s.send(INDEX.pack(i // CHUNK) + data[i : i + CHUNK], precise_len=INDEX.size)
    s.close(timeout_s=60)


class Handler(http.server.BaseHTTPRequestHandler):
    """GET of a file under the server's directory."""

    root = Path(".")
    #: The server's own link rate for SAP senders (None: the core's default).
    line_rate_mbps: float | None = None
    #: SAP senders cap packets in flight (False only to measure the cap).
    window: bool = True

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        path = (self.root / self.path.lstrip("/")).resolve()
        if self.root.resolve() not in path.parents or not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        approx = {m.strip() for m in self.headers.get("X-SAP-Approx", "").split(",") if m.strip()}
        port = self.headers.get("X-SAP-Port")
        forced = self.headers.get("X-SAP-Force-Precise") == "1"
        if port is not None and port.isdigit() and (mime in approx or forced):
            self.send_response(200)
            self.send_header("Content-Type", mime)
            self.send_header("Content-Length", "0")
            self.send_header("X-SAP-Length", str(len(data)))
            self.end_headers()
            self.wfile.flush()
            peer = f"{self.client_address[0]}:{port}"
            head = jpeg_header_len(data) if mime == "image/jpeg" else 0
            sap_send(
                peer,
                data,
                approximate=not forced,
                line_rate_mbps=self.line_rate_mbps,
                precise_head=head,
                window=self.window,
            )
            return
        self.send_response(200)
        self.send_header("Content-Type", mime)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


def serve(bind: str, root: Path, line_rate_mbps: float | None = None, window: bool = True) -> None:
    host, port = bind.rsplit(":", 1)
    Handler.root = root
    Handler.line_rate_mbps = line_rate_mbps
    Handler.window = window
    srv = http.server.ThreadingHTTPServer((host, int(port)), Handler)
    print("ready", flush=True)
    srv.serve_forever()


def fetch(url: str, mode: str, local_ip: str, timeout_s: float) -> tuple[bytes, dict[str, Any]]:
    """GETs `url` over `mode`; returns the bytes and timing figures."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname or "", u.port or 80, timeout=timeout_s)
    headers: dict[str, str] = {}
    listener = None
    if mode != "tcp":
        listener = SapListener(f"{local_ip}:0")
        headers["X-SAP-Port"] = listener.local_addr.rsplit(":", 1)[1]
        headers["X-SAP-Approx"] = mimetypes.guess_type(u.path)[0] or "application/octet-stream"
        if mode == "sap-precise":
            headers["X-SAP-Force-Precise"] = "1"
    start = time.monotonic()
    conn.request("GET", u.path, headers=headers)
    resp = conn.getresponse()
    body = resp.read()
    sap_len = resp.getheader("X-SAP-Length")
    lost = damaged = precise = 0
    if listener is not None and sap_len is not None:
        n = int(sap_len)
        chunks = (n + CHUNK - 1) // CHUNK
        out = bytearray(n)
        seen = set()
        sock = listener.accept(timeout_s=timeout_s)
        if sock is None:
            raise TimeoutError("the server never connected back")
        while (d := sock.recv(timeout_s=timeout_s)) is not None:
            (i,) = INDEX.unpack(d.data[: INDEX.size])
            if i < chunks and i not in seen:
                seen.add(i)
                out[i * CHUNK : i * CHUNK + len(d.data) - INDEX.size] = d.data[INDEX.size :]
                damaged += d.damaged
                precise += not d.approximate
        lost = chunks - len(seen)
        body = bytes(out[:n])
    elapsed = time.monotonic() - start
    return body, {
        "mode": mode,
        "seconds": elapsed,
        "bytes": len(body),
        "lost_chunks": lost,
        "damaged_chunks": damaged,
        "precise_chunks": precise,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m approxnet.sap.webserver")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--bind", required=True)
    s.add_argument("--dir", type=Path, required=True)
    s.add_argument("--line-rate-mbps", type=float, help="SAP senders' link rate")
    s.add_argument("--no-window", action="store_true", help="SAP senders without in-flight cap")
    f = sub.add_parser("fetch")
    f.add_argument("--url", required=True)
    f.add_argument("--mode", choices=MODES, required=True)
    f.add_argument("--local-ip", default="0.0.0.0")
    f.add_argument("--out", type=Path, help="write the received bytes here")
    f.add_argument("--timeout", type=float, default=60.0)
    a = p.parse_args(argv)
    if a.cmd == "serve":
        if a.line_rate_mbps is not None and not a.line_rate_mbps > 0:
            p.error("--line-rate-mbps must be > 0")
        serve(a.bind, a.dir, a.line_rate_mbps, window=not a.no_window)
        return 0
    body, info = fetch(a.url, a.mode, a.local_ip, a.timeout)
    if a.out is not None:
        a.out.write_bytes(body)
    print(json.dumps(info), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
