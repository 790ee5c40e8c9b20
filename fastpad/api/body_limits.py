"""Body size and body speed limits, as pure ASGI middleware around ``receive``.

* A body over the route's cap is refused with 413 — before reading it when
  ``Content-Length`` says so, or as soon as the running count passes the cap.
  The cap is 64 KiB unless the route is authenticated *and* the request
  carries a credential (then 8 MiB): an anonymous client cannot make the
  server buffer more than 64 KiB.
* Every body must finish within the deadline (60 s) and, after the grace
  period (5 s), keep an average rate of at least ``64 KiB/s × size / 8 MiB``
  — measured against ``Content-Length`` (a chunked body is held to the floor
  of a maximal body) — so a body no larger than 320 KiB must all be there
  after 5 s, whatever pace it is sent at or however it is framed. Falling
  short is a retryable 408 whose ``min_bytes_per_sec`` names the floor that
  applied.
* A body a route may read as JSON (declared JSON, or undeclared) is checked
  before its last byte reaches the application, for every route alike (the
  MCP endpoint and the sign-in and device-login routes included): arrays and
  objects nested deeper than ``max_json_depth`` — counted on the bytes, so no
  parser ever recurses that far — then the shape limits and unstorable text
  (``api/shape.py``) are a 422. A body that is not JSON at all is left to the
  route, which says what it reads.

The refusal is raised inside ``receive``; whatever the application makes of
that exception, the response it then tries to send is replaced by the problem
document, so the client always gets the 413/408 and the connection closes.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fastpad.api.limits import Limits
from fastpad.api.shape import check_shape, too_deep
from fastpad.errors import FastpadError, PayloadTooLarge, RequestTimeout, ValidationFailed
from fastpad.jsontext import json_depth

# How long a read past the deadline still waits: enough for bytes the server already holds.
_ALREADY_HERE_S = 0.05


class BodyRejected(Exception):
    """Raised from ``receive`` once the body broke a limit."""


class BodyLimitMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        limits: Limits,
        is_public: Callable[[Scope], bool],
        carries_credential: Callable[[Scope], bool],
        render: Callable[[FastpadError, Scope], Any],
    ) -> None:
        self.app = app
        self.limits = limits
        self.is_public = is_public
        self.carries_credential = carries_credential
        self.render = render  # (error, scope) -> starlette Response

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limits = self.limits
        authenticated = not self.is_public(scope) and self.carries_credential(scope)
        cap = limits.authenticated_body_bytes if authenticated else limits.public_body_bytes
        length = _content_length(scope)
        if length is not None and length > cap:
            response = self.render(_too_large(cap, length), scope)
            await response(scope, _no_body, send)
            return
        guard = _Guard(limits, cap, length, read_as_json=_read_as_json(scope))
        try:
            await self.app(scope, guard.wrap_receive(receive), guard.wrap_send(send))
        except BodyRejected:
            pass
        except Exception:
            if guard.rejection is None:
                raise
        if guard.rejection is not None and not guard.app_started:
            response = self.render(guard.rejection, scope)
            await response(scope, _no_body, send)


class _Guard:
    def __init__(self, limits: Limits, cap: int, length: int | None, *, read_as_json: bool) -> None:
        self.limits = limits
        self.cap = cap
        self.length = length
        self.json_chunks: list[bytes] | None = [] if read_as_json else None
        self.start = time.monotonic()
        self.received = 0
        self.done = length == 0
        self.rejection: FastpadError | None = None
        self.app_started = False  # the application's response reached the client

    def _floor(self) -> int:
        size = self.length if self.length is not None else self.limits.authenticated_body_bytes
        return self.limits.min_bytes_per_sec(size)

    def _reject(self, error: FastpadError) -> BodyRejected:
        self.rejection = error
        return BodyRejected(error.detail)

    def wrap_receive(self, receive: Receive) -> Receive:
        async def guarded() -> Message:
            if self.rejection is not None:
                return {"type": "http.disconnect"}
            if self.done:
                return await receive()
            message = await self._receive_in_time(receive)
            if message["type"] == "http.request":
                chunk = message.get("body", b"")
                self.received += len(chunk)
                if self.received > self.cap:
                    raise self._reject(_too_large(self.cap, self.received))
                if self.json_chunks is not None:
                    self.json_chunks.append(chunk)
                if not message.get("more_body", False):
                    self.done = True
                    self._check_json()
            return message

        return guarded

    def _check_json(self) -> None:
        if self.json_chunks is None:
            return
        body, self.json_chunks = b"".join(self.json_chunks), None
        limits = self.limits
        depth = json_depth(body)
        if depth > limits.max_json_depth:
            raise self._reject(too_deep(depth, limits.max_json_depth))
        try:
            data = json.loads(body) if body.strip() else None
        except ValueError:
            return  # not JSON: the route says what it reads
        try:
            check_shape(data, max_array_items=limits.max_array_items, max_values=limits.max_values)
        except ValidationFailed as refused:
            raise self._reject(refused) from None

    async def _receive_in_time(self, receive: Receive) -> Message:
        limits = self.limits
        floor = self._floor()
        now = time.monotonic()
        deadline = self.start + limits.body_deadline_s
        rate_fails_at = self.start + max(limits.body_grace_s, self.received / floor)
        # Whatever already arrived while the application was busy elsewhere is still taken.
        wait = max(min(deadline, rate_fails_at) - now, _ALREADY_HERE_S)
        try:
            return await asyncio.wait_for(receive(), wait)
        except asyncio.TimeoutError:
            pass
        elapsed = time.monotonic() - self.start
        raise self._reject(
            RequestTimeout(
                detail=(
                    f"The body arrived too slowly: {self.received} of "
                    f"{self.length if self.length is not None else '?'} bytes in {elapsed:.1f} s. "
                    f"A body must finish within {limits.body_deadline_s:g} s and, after "
                    f"{limits.body_grace_s:g} s, average at least {floor} bytes/s (for this size)."
                ),
                extra={
                    "min_bytes_per_sec": floor,
                    "deadline_ms": int(limits.body_deadline_s * 1000),
                    "received_bytes": self.received,
                },
            )
        )

    def wrap_send(self, send: Send) -> Send:
        async def guarded(message: Message) -> None:
            if self.rejection is not None and not self.app_started:
                return  # the problem document replaces whatever the app answers
            if message["type"] == "http.response.start":
                self.app_started = True
            await send(message)

        return guarded


def _too_large(cap: int, size: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        detail=f"The body is {size} bytes; this route takes at most {cap} bytes.",
        extra={"max_bytes": cap},
    )


# What routes read as something other than JSON; any other body may be parsed as JSON.
_NOT_JSON = ("text/markdown", "application/x-www-form-urlencoded", "multipart/", "application/zip",
             "application/x-zip-compressed", "application/octet-stream", "image/", "application/pdf")


def _read_as_json(scope: Scope) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            media = value.decode("latin-1").split(";")[0].strip().lower()
            return not media.startswith(_NOT_JSON)
    return True


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _no_body() -> Message:
    return {"type": "http.disconnect"}
