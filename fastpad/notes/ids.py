"""Block and note identifiers: ULIDs, minted once and never derived from content."""

from __future__ import annotations

import re

from ulid import ULID

# Crockford base32, 26 characters; the first is at most 7 so the value fits 128 bits.
ULID_PATTERN = r"[0-7][0-9A-HJKMNP-TV-Z]{25}"
_ULID_RE = re.compile(rf"^{ULID_PATTERN}$")


def new_id() -> str:
    """A fresh ULID string (sortable by creation time)."""
    return str(ULID())


def is_ulid(value: object) -> bool:
    return isinstance(value, str) and _ULID_RE.match(value) is not None
