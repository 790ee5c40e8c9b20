"""A small HTTP proxy that adds ``Authorization: Bearer …`` to every request.

The official conformance suite cannot send a credential, and every Fastpad MCP request
needs one. Everything else passes through untouched — method, path, body and every
header, ``Host`` and ``Origin`` included, so the suite's DNS-rebinding checks reach the
server as the suite sent them. Standard library only; runs in a thread of the test.
"""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from contextlib import contextmanager
from typing import Iterator
from urllib.parse import urlsplit

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization"}


def _handler(target: str, token: str) -> type[BaseHTTPRequestHandler]:
    parts = urlsplit(target)

    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            upstream = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
            try:
                upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for name, value in self.headers.items():
                    if name.lower() not in _HOP_BY_HOP and name.lower() != "authorization":
                        upstream.putheader(name, value)
                upstream.putheader("Authorization", f"Bearer {token}")
                upstream.endheaders(body or None)
                response = upstream.getresponse()
                payload = response.read()
            finally:
                upstream.close()
            self.send_response(response.status, response.reason)
            for name, value in response.getheaders():
                if name.lower() not in _HOP_BY_HOP and name.lower() != "content-length":
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = do_HEAD = _forward

        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

    return Forward


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client hanging up mid-request (the suite does) is not the test's business


@contextmanager
def auth_proxy(target: str, token: str) -> Iterator[str]:
    """Serve the proxy on a free loopback port for the duration; yields its base URL."""
    server = _Quiet(("127.0.0.1", 0), _handler(target, token))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
