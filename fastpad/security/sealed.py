"""Compact signed strings: ``PREFIX`` + base64url(payload + tag).

The tag is a truncated HMAC-SHA256 under a key derived for one purpose from
the server secret (domain separation: the same secret keys several kinds of
string), and it binds context the string does not carry — the caller's
session, token, workspace — so a string presented by anyone else fails to
verify. Block handles and agent sessions are both made this way.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import struct
from dataclasses import dataclass

MIN_SECRET_BYTES = 32
TAG_BYTES = 16


@dataclass(frozen=True)
class SealedFormat:
    prefix: str  # versioned, e.g. "h1."
    purpose: bytes  # key derivation label, e.g. b"fastpad/anchor-handle/v1"
    payload: struct.Struct
    max_chars: int  # anything longer is not one of ours: refused before decoding

    def key(self, secret: bytes) -> bytes:
        if not isinstance(secret, (bytes, bytearray)) or len(secret) < MIN_SECRET_BYTES:
            raise ValueError(f"the server secret must be at least {MIN_SECRET_BYTES} bytes")
        return hmac.new(bytes(secret), self.purpose, hashlib.sha256).digest()

    def seal(self, secret: bytes, payload: bytes, *bound: str) -> str:
        tag = self._tag(self.key(secret), payload, bound)
        return self.prefix + base64.urlsafe_b64encode(payload + tag).rstrip(b"=").decode("ascii")

    def open(self, secret: bytes, text: object, *bound: str) -> tuple | None:
        """The unpacked payload when ``text`` is well formed and its tag verifies
        for ``bound``; None otherwise (which of the two is not said)."""
        raw = self._decode(text)
        if raw is None:
            return None
        payload, tag = raw[: self.payload.size], raw[self.payload.size :]
        if not hmac.compare_digest(tag, self._tag(self.key(secret), payload, bound)):
            return None
        return self.payload.unpack(payload)

    def _tag(self, key: bytes, payload: bytes, bound: tuple[str, ...]) -> bytes:
        mac = hmac.new(key, self.prefix.encode("ascii"), hashlib.sha256)
        for part in bound:  # length-prefixed, so no two contexts spell the same bytes
            encoded = str(part).encode("utf-8")
            mac.update(struct.pack(">I", len(encoded)))
            mac.update(encoded)
        mac.update(payload)
        return mac.digest()[:TAG_BYTES]

    def _decode(self, text: object) -> bytes | None:
        if not isinstance(text, str) or len(text) > self.max_chars or not text.startswith(self.prefix):
            return None
        body = text[len(self.prefix) :]
        if not body.isascii() or "=" in body:
            return None
        try:
            raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        except (binascii.Error, ValueError):
            return None
        # One spelling per string: refuse non-canonical base64 (trailing bits set).
        if len(raw) != self.payload.size + TAG_BYTES or base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != body:
            return None
        return raw
