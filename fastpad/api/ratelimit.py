"""Per-credential rate limits: "N a minute" is at most N in any rolling window.

A key is what is counted: ``token:<root id>`` for an agent token (a delegation
chain shares its root's), ``person:<id>`` shared by a person's session and
every CLI token they hold, ``ask:…`` for questions, ``device-start:<address>``
and so on. A request is admitted when fewer than ``limit`` admitted requests
of that key fall in the last ``window_s`` seconds; a refused one is not
counted (a client that keeps knocking is not locked out for longer). A refusal
is a ``rate-limited`` problem whose ``retry_after_ms`` is when the oldest
counted request leaves the window — the moment the next one would be admitted.

The surfaces see only :class:`RateLimiter` (one method, ``hit``), so a limiter
whose windows live in the database, shared across server processes, can take
the in-memory one's place.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from typing import Callable, Protocol

from fastpad.errors import RateLimited


class RateLimiter(Protocol):
    window_s: float

    def hit(self, key: str, limit: int, *, what: str = "requests") -> None:
        """Count one request against ``key``; raise :class:`RateLimited` past ``limit`` in the window."""


class InMemoryRateLimiter:
    """A sliding-window log per key, in this process: the admission times of the requests still
    in the window, oldest first. Exact (no bucket's burst past N), at most ``limit`` floats a key."""

    def __init__(self, window_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self.clock = clock
        self._logs: dict[str, deque[float]] = {}
        self._lock = threading.Lock()
        self._last_sweep = clock()

    def hit(self, key: str, limit: int, *, what: str = "requests") -> None:
        if limit <= 0:
            raise RateLimited(detail=f"This credential may make no {what}.",
                              extra={"retry_after_ms": math.ceil(self.window_s * 1000), "limit": limit})
        now = self.clock()
        with self._lock:
            log = self._logs.setdefault(key, deque())
            _expire(log, now - self.window_s)
            if len(log) < limit:
                log.append(now)
                self._sweep(now)
                return
            # Full: the next admission is when the request `limit` places back leaves the window
            # (the oldest, unless the limit was lowered since it was counted).
            frees_at = log[len(log) - limit] + self.window_s
        raise RateLimited(
            detail=f"Rate limit reached: {limit} {what} per {self.window_s:g} s for this credential.",
            extra={"retry_after_ms": max(1, math.ceil((frees_at - now) * 1000)), "limit": limit,
                   "window_ms": math.ceil(self.window_s * 1000)},
        )

    def _sweep(self, now: float) -> None:
        """Once a window, forget keys with nothing left in it (called with the lock held)."""
        if now - self._last_sweep < self.window_s:
            return
        self._last_sweep = now
        idle = [key for key, log in self._logs.items() if not log or log[-1] <= now - self.window_s]
        for key in idle:
            del self._logs[key]


def _expire(log: deque[float], horizon: float) -> None:
    """Drop the admissions at or before ``horizon``: they have left the window."""
    while log and log[0] <= horizon:
        log.popleft()
