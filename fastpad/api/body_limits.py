"""Body size and body speed limits, as pure ASGI middleware around ``receive``.

* A body over the route's cap is refused with 413 — before reading it when
  ``Content-Length`` says so, or as soon as the running count passes the cap.
  The cap is 64 KiB unless the route is authenticated *and* the request
  carries a credential (then 8 MiB): an anonymous client cannot make the
  server buffer more than 64 KiB.
* A body over 64 KiB must finish within the deadline (60 s) and, after the
  grace period (5 s), keep an average rate of at least
  ``64 KiB/s × size / 8 MiB`` — measured against ``Content-Length`` (a chunked
  body is held to the floor of a maximal body). Falling short is a
  retryable 408 whose ``min_bytes_per_sec`` names the floor that applied.

The refusal is raised inside ``receive``; whatever the application makes of
that exception, the response it then tries to send is replaced by the problem
document, so the client always gets the 413/408 and the connection closes.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fastpad.api.limits import Limits
from fastpad.errors import FastpadError, PayloadTooLarge, RequestTimeout

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
        guard = _Guard(limits, cap, length)
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
    def __init__(self, limits: Limits, cap: int, length: int | None) -> None:
        self.limits = limits
        self.cap = cap
        self.length = length
        self.start = time.monotonic()
        self.received = 0
        self.done = length == 0
        self.rejection: FastpadError | None = None
        self.app_started = False  # the application's response reached the client

    def _slow_rule_applies(self) -> bool:
        size = self.length if self.length is not None else self.received
        return size > self.limits.public_body_bytes

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
            if not self._slow_rule_applies():
                message = await receive()
            else:
                message = await self._receive_in_time(receive)
            if message["type"] == "http.request":
                self.received += len(message.get("body", b""))
                if self.received > self.cap:
                    raise self._reject(_too_large(self.cap, self.received))
                if not message.get("more_body", False):
                    self.done = True
            return message

        return guarded

    async def _receive_in_time(self, receive: Receive) -> Message:
        limits = self.limits
        floor = self._floor()
        now = time.monotonic()
        deadline = self.start + limits.body_deadline_s
        rate_fails_at = self.start + max(limits.body_grace_s, self.received / floor)
        wait = min(deadline, rate_fails_at) - now
        if wait > 0:
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
                    f"Bodies over {limits.public_body_bytes} bytes must finish within "
                    f"{limits.body_deadline_s:g} s and, after {limits.body_grace_s:g} s, average at "
                    f"least {floor} bytes/s."
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
