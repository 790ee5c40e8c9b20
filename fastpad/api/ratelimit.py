"""Per-credential rate limits: token buckets, in memory, per process.

A bucket per ``rate_key`` (``token:<id>`` for an agent token, ``person:<id>``
shared by a person's session and every CLI token they hold) holds up to
``limit`` requests and refills at ``limit`` per window. A refused request is
a ``rate-limited`` problem carrying ``retry_after_ms``: the time until one
request's worth has refilled.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Callable

from fastpad.errors import RateLimited


class RateLimiter:
    def __init__(self, window_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self.clock = clock
        self._buckets: dict[str, tuple[float, float, int]] = {}  # key -> (tokens, at, limit)
        self._lock = threading.Lock()
        self._last_sweep = clock()

    def hit(self, key: str, limit: int, *, what: str = "requests") -> None:
        """Count one request against ``key``; raise :class:`RateLimited` past ``limit``."""
        if limit <= 0:
            raise RateLimited(detail=f"This credential may make no {what}.", extra={"retry_after_ms": int(self.window_s * 1000), "limit": limit})
        now = self.clock()
        rate = limit / self.window_s  # tokens per second
        with self._lock:
            tokens, at, _ = self._buckets.get(key, (float(limit), now, limit))
            tokens = min(float(limit), tokens + (now - at) * rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now, limit)
                self._sweep(now)
                return
            self._buckets[key] = (tokens, now, limit)
        retry_after_ms = max(1, math.ceil((1.0 - tokens) / rate * 1000))
        raise RateLimited(
            detail=f"Rate limit reached: {limit} {what} per {self.window_s:g} s for this credential.",
            extra={"retry_after_ms": retry_after_ms, "limit": limit, "window_ms": int(self.window_s * 1000)},
        )

    def _sweep(self, now: float) -> None:
        """Drop buckets that have refilled completely (called with the lock held)."""
        if now - self._last_sweep < self.window_s:
            return
        self._last_sweep = now
        full = [k for k, (tokens, at, limit) in self._buckets.items()
                if tokens + (now - at) * limit / self.window_s >= limit]
        for key in full:
            del self._buckets[key]
