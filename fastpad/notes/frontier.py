"""A note's version on the wire: ``fp1:`` + base64url (unpadded) of Loro's encoded frontiers.

The prefix versions the format so it can change without ambiguity; the bytes
are Loro's own ``Frontiers.encode()``, identical to JS ``encodeFrontiers``,
so the browser editor and the server read the same string.
"""

from __future__ import annotations

import base64
import re

from loro import ID, Frontiers

from fastpad.errors import FieldError, ValidationFailed

PREFIX = "fp1:"
_BASE64URL = re.compile(r"^[A-Za-z0-9_-]+$")
# What a frontier looks like, for a schema to state (the bytes inside are checked on decoding).
PATTERN = "^fp1:[A-Za-z0-9_-]+$"


def encode_frontier(frontiers: Frontiers) -> str:
    payload = base64.urlsafe_b64encode(frontiers.encode()).rstrip(b"=")
    return PREFIX + payload.decode("ascii")


def decode_frontier(text: str, *, field: str = "expectedFrontier") -> Frontiers:
    """Parse a frontier string; anything that is not one is a ``malformed_frontier``."""

    def malformed(why: str) -> ValidationFailed:
        message = f'{why}. Send a frontier exactly as Fastpad returned it ("fp1:…"), or re-read the note for the current one.'
        return ValidationFailed(
            detail=f"{field} is not a Fastpad frontier: {message}",
            field_errors=[FieldError(field, "malformed_frontier", message)],
        )

    if not isinstance(text, str) or not text.startswith(PREFIX):
        raise malformed(f"it must start with {PREFIX!r}")
    payload = text[len(PREFIX) :]
    if not _BASE64URL.match(payload) or len(payload) % 4 == 1:
        raise malformed("the part after the prefix is not unpadded base64url")
    raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    # One spelling per frontier, so equal versions always have equal strings.
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != payload:
        raise malformed("the base64url is not in canonical form")
    ids = _read_ids(raw)
    if ids is None:
        raise malformed("the bytes are not Loro frontiers")
    return Frontiers.from_ids(ids)


def _read_ids(raw: bytes) -> list[ID] | None:
    """The ids in Loro's frontier encoding — a varint count, then per id a varint peer and a
    zigzag-varint counter — or None if ``raw`` is not exactly that.

    Parsed here rather than by ``Frontiers.decode``, which accepts a negative counter that
    later panics inside the document that is asked about it and poisons its lock for good.
    """
    position = 0

    def varint() -> int | None:
        nonlocal position
        value = shift = 0
        while position < len(raw) and shift < 64:
            byte = raw[position]
            position += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
        return None

    count, ids = varint(), []
    for _ in range(count or 0):
        peer, zigzag = varint(), varint()
        if peer is None or zigzag is None:
            return None
        counter = (zigzag >> 1) ^ -(zigzag & 1)
        if peer >= 2**64 or not 0 <= counter < 2**31:
            return None
        ids.append(ID(peer, counter))
    return ids if count is not None and position == len(raw) else None
