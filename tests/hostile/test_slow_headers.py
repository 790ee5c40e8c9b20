"""Slow headers against a real ``fp serve`` (slowloris): 1,000 connections that send no request, or only
part of its headers, are each closed by the server once the header deadline passes, while the server
keeps answering; a request whose headers arrived in time is not cut by that deadline, however long
its body then takes; and a kept-alive connection's next request is held to the same deadline.

The server runs with a 1 s header deadline (``header_timeout_s``, 10 s by default) so the test is
short; it waits on the sockets themselves (each becomes readable when the server closes it).
"""

from __future__ import annotations

import selectors
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from tests.api.conftest import Server, start_server, stop

HEADER_TIMEOUT_S = 1.0
SLOW = 1_000
PARTIAL = b"GET /health HTTP/1.1\r\nHost: fastpad\r\nX-Slow: 1"  # no end of the headers, ever


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("slow-headers"), "sqlite", limits={"header_timeout_s": HEADER_TIMEOUT_S})
    yield server
    stop(server.process)


def _connect(base_url: str) -> socket.socket:
    url = urlsplit(base_url)
    return socket.create_connection((url.hostname, url.port), timeout=10)


def _closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(4096) == b""
    except ConnectionResetError:
        return True


def _wait_closed(sockets: list[socket.socket], within: float) -> list[socket.socket]:
    """The sockets the server has not closed ``within`` seconds from now (waiting on them, not sleeping)."""
    open_ones = set(sockets)
    deadline = time.monotonic() + within
    with selectors.DefaultSelector() as selector:
        for sock in sockets:
            selector.register(sock, selectors.EVENT_READ)
        while open_ones and (left := deadline - time.monotonic()) > 0:
            for key, _ in selector.select(timeout=left):
                selector.unregister(key.fileobj)
                assert _closed_by_server(key.fileobj), "the server answered a request it never got whole"
                open_ones.discard(key.fileobj)
    return list(open_ones)


def _response(sock: socket.socket) -> bytes:
    """One whole response (its headers, then Content-Length bytes of body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += sock.recv(4096)
    return head + b"\r\n\r\n" + body


def test_a_thousand_connections_with_slow_headers_are_closed_and_the_server_keeps_answering(guarded: Server):
    # A request whose headers are in: its body may take longer than the header deadline.
    late_body = _connect(guarded.base_url)
    late_body.sendall(b"POST /v1/search HTTP/1.1\r\nHost: fastpad\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 11\r\n\r\n{\"q\":")
    slow = [_connect(guarded.base_url) for _ in range(SLOW)]
    started = time.monotonic()
    for index, sock in enumerate(slow):
        if index % 2:  # half send part of their headers; the other half nothing at all
            sock.sendall(PARTIAL)
    with httpx.Client(base_url=guarded.base_url, timeout=10) as client:
        assert client.get("/health").status_code == 200  # served while the slow connections wait

    left_open = _wait_closed(slow, within=HEADER_TIMEOUT_S + 30)
    assert not left_open, f"{len(left_open)} of {SLOW} slow connections still open"
    assert time.monotonic() - started >= HEADER_TIMEOUT_S  # closed by the deadline, not at once
    for sock in slow:
        sock.close()

    late_body.sendall(b"\"x\"}\r\n")  # the rest of the body, well past the header deadline
    answer = _response(late_body)
    assert answer.startswith(b"HTTP/1.1 401"), answer  # answered (no credential), not dropped
    late_body.close()
    with httpx.Client(base_url=guarded.base_url, timeout=10) as client:
        assert client.get("/health").status_code == 200


def test_the_next_request_on_a_kept_alive_connection_is_held_to_the_deadline(guarded: Server):
    sock = _connect(guarded.base_url)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: fastpad\r\n\r\n")
    first = _response(sock)
    assert first.startswith(b"HTTP/1.1 200"), first
    sock.sendall(PARTIAL)  # the next request starts, and its headers never finish
    assert _wait_closed([sock], within=HEADER_TIMEOUT_S + 10) == []
    sock.close()
