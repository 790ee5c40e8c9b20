"""``Server-Timing: app;dur=…`` on every response: how long the server spent
before it started answering, so a client (and the benchmarks) can tell server
time from network and client time — except where an anonymous caller must not
learn how long the server took (``untimed``: the published-note routes, whose
answers must not tell a real note id from an invented one)."""

from __future__ import annotations

import time

from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class ServerTimingMiddleware:
    def __init__(self, app: ASGIApp, *, untimed: Callable[[Scope], bool] = lambda scope: False) -> None:
        self.app = app
        self.untimed = untimed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.untimed(scope):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def timed_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                elapsed_ms = (time.perf_counter() - started) * 1000
                headers = list(message.get("headers", []))
                headers.append((b"server-timing", f"app;dur={elapsed_ms:.3f}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, timed_send)
