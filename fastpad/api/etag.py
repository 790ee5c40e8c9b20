"""Strong entity tags and ``If-None-Match`` (RFC 9110 §8.8.3, §13.1.2)."""

from __future__ import annotations

import hashlib


def strong_etag(content: bytes) -> str:
    """A strong validator: the quoted SHA-256 of the exact bytes served."""
    return '"' + hashlib.sha256(content).hexdigest()[:40] + '"'


def none_match(if_none_match: str | None, etag: str) -> bool:
    """True when ``If-None-Match`` matches ``etag`` — answer 304.

    If-None-Match uses the weak comparison: ``W/"x"`` matches ``"x"``.
    """
    if not if_none_match:
        return False
    value = if_none_match.strip()
    if value == "*":
        return True
    target = etag.removeprefix("W/")
    for candidate in _split(value):
        if candidate.removeprefix("W/") == target:
            return True
    return False


def _split(header: str) -> list[str]:
    """Entity tags in a list header; commas inside quotes do not split."""
    tags: list[str] = []
    current: list[str] = []
    quoted = False
    for char in header:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            tags.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    tags.append("".join(current).strip())
    return [t for t in tags if t]
