"""Assertions shared by the HTTP tests."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import httpx

PROBLEM_MEMBERS = {"type", "title", "status", "detail", "retryable", "field_errors",
                   "field_errors_truncated", "docs_url", "next"}


def assert_problem(response: httpx.Response, status: int, slug: str, base_url: str) -> dict:
    """The response is an RFC 9457 problem document of type ``slug``; returns its body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json"), response.headers
    body = response.json()
    assert PROBLEM_MEMBERS <= body.keys(), body
    assert body["type"] == body["docs_url"] == f"{base_url}/errors/{slug}"
    assert body["status"] == status
    assert isinstance(body["retryable"], bool)
    assert isinstance(body["field_errors"], list) and len(body["field_errors"]) <= 50
    assert isinstance(body["next"], str) and body["next"]
    return body


def raw_http(base_url: str, head: bytes, body: bytes = b"", *, timeout: float = 15.0) -> tuple[int, dict[str, str], bytes, float]:
    """Send a hand-framed request (to announce more body than is sent); read the whole answer.

    Returns (status, headers, body, seconds until the response arrived).
    """
    parts = urlsplit(base_url)
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
        start = time.monotonic()
        sock.sendall(head + body)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        elapsed = time.monotonic() - start
    data = b"".join(chunks)
    header_blob, _, payload = data.partition(b"\r\n\r\n")
    lines = header_blob.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, payload, elapsed


def whole_ledger(client: httpx.Client, import_id: str, *, page_size: int = 8) -> list[dict]:
    """Every row of an import's ledger, following its pages (each must answer 200)."""
    rows, cursor = [], None
    while True:
        page = client.get(f"/v1/imports/{import_id}/ledger",
                          params={"limit": page_size, **({"cursor": cursor} if cursor else {})})
        assert page.status_code == 200, page.text
        rows += page.json()["items"]
        cursor = page.json()["next_cursor"]
        if cursor is None:
            return rows


def new_person(server) -> tuple[str, str]:
    """A second person in the server's workspace, made through the deployment as an operator would:
    (email, password). Their rate windows are fresh, whatever other tests spent."""
    import secrets

    from fastpad.deployment import open_deployment

    email, password = f"person-{secrets.token_hex(3)}@example.com", secrets.token_urlsafe(12)
    with open_deployment(server.data_dir, pool_size=1) as deployment:
        deployment.people.create_person(server.workspace_id, email, password=password)
    return email, password


@contextmanager
def sign_in(server, email: str, password: str) -> Iterator[httpx.Client]:
    """A browser session over HTTP: the session cookie, and its CSRF token on every request."""
    with server.client() as client:
        answer = client.post("/v1/session", json={"email": email, "password": password})
        assert answer.status_code == 201, answer.text
        client.headers["x-csrf-token"] = answer.json()["csrf_token"]
        yield client


def assert_retry_after_frees_the_oldest(body: dict, oldest: tuple[float, float], refused: tuple[float, float],
                                        window_s: float = 60.0) -> None:
    """``retry_after_ms`` of a refusal is when the oldest counted request leaves the window: the
    server counted it between ``oldest`` = (sent, answered) and refused between ``refused`` (client
    ``time.monotonic()`` readings), so the wait lies between those bounds, to the millisecond."""
    earliest = (oldest[0] + window_s - refused[1]) * 1000
    latest = (oldest[1] + window_s - refused[0]) * 1000
    assert earliest - 1 <= body["retry_after_ms"] <= latest + 1, (earliest, body["retry_after_ms"], latest)
