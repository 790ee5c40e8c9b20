"""Request limits, in one configurable value.

The defaults are the published contract (spec › API › Request shape). The
app factory takes a :class:`Limits` so tests can shrink the time windows;
``fp serve`` reads overrides only from its hidden ``--limits-json`` option
(or ``FASTPAD_LIMITS_JSON``), which exists for the test-suite.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from fastpad.security.principals import PERSON_RATE_LIMIT, Principal

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True)
class Limits:
    # Body size caps (413 past them).
    public_body_bytes: int = 64 * KIB
    authenticated_body_bytes: int = 8 * MIB
    # Slow bodies (408): a body over ``public_body_bytes`` must finish within
    # ``body_deadline_s`` and, after ``body_grace_s``, keep an average rate of
    # ``body_min_rate_at_max`` × size / ``authenticated_body_bytes``.
    body_deadline_s: float = 60.0
    body_grace_s: float = 5.0
    body_min_rate_at_max: int = 64 * KIB
    # A connection whose request line and headers are not all in within this is closed
    # (``api/header_deadline.py``): slow headers would otherwise hold it open for ever.
    header_timeout_s: float = 10.0
    # JSON shape (422); the depth is checked on the bytes, before any parser runs.
    max_json_depth: int = 64
    max_array_items: int = 10_000
    max_values: int = 50_000
    # Rate limits: per credential the principal carries its own per-minute
    # limit; sign-in has no credential yet, so it is limited per address and per account, and
    # so are accepting an invitation and signing up.
    rate_window_s: float = 60.0
    # A signed-in person's requests a minute, shared by their sessions and CLI tokens (the spec's
    # 1,200); a deployment may set it otherwise, as the shared browser-test server does.
    person_per_minute: int = PERSON_RATE_LIMIT
    sign_in_per_window: int = 20
    join_per_window: int = 10
    # `fp login` (RFC 8628): its two routes have no credential either, so they are
    # limited per address too; a terminal waits ``device_poll_interval_s`` between polls.
    device_starts_per_window: int = 20
    device_polls_per_window: int = 60
    device_poll_interval_s: int = 5
    # A tab's presence in a note is dropped this long after its last post (knowledge/presence.py);
    # tests shorten it to see a closed tab leave without waiting half a minute.
    presence_ttl_s: float = 25.0

    def rate_for(self, principal: Principal) -> int:
        """The per-minute limit of ``principal``'s rate key: a person's is the deployment's."""
        return self.person_per_minute if principal.rate_key.startswith("person:") else principal.rate_limit_per_minute

    def min_bytes_per_sec(self, size: int) -> int:
        """The average-rate floor for a body of ``size`` bytes."""
        return max(1, math.ceil(self.body_min_rate_at_max * size / self.authenticated_body_bytes))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, text: str | None) -> "Limits":
        """Defaults overridden by a JSON object of field names; unknown names are an error."""
        if not text:
            return cls()
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("limits JSON must be an object")
        known = {f.name: f.type for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"unknown limit(s): {', '.join(unknown)}")
        return replace(cls(), **data)
