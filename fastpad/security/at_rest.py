"""Responses kept for a retry, encrypted where they are kept.

An idempotency record holds the first response to a request for 24 hours so a retry gets the
same answer — and some first responses carry a secret shown once: a minted or delegated token,
an invitation link. Kept as they were sent, those would sit readable in the database (and in
every backup and dump of it) for a day. So the body is sealed with AES-256-GCM under a key
derived from the server secret for this one purpose, and bound to where it belongs — workspace,
credential, key — so a body copied to another record does not open.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import struct

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from fastpad.security.sealed import MIN_SECRET_BYTES

_PURPOSE = b"fastpad/kept-response/v1"
_MARK = b"fpkept1:"  # what a sealed body starts with: a record kept before sealing is plain
_NONCE_BYTES = 12


class KeptResponseSeal:
    def __init__(self, secret: bytes) -> None:
        if not isinstance(secret, (bytes, bytearray)) or len(secret) < MIN_SECRET_BYTES:
            raise ValueError(f"the server secret must be at least {MIN_SECRET_BYTES} bytes")
        self._aead = AESGCM(hmac.new(bytes(secret), _PURPOSE, hashlib.sha256).digest())

    def seal(self, body: bytes, *bound: str) -> bytes:
        nonce = os.urandom(_NONCE_BYTES)
        return _MARK + nonce + self._aead.encrypt(nonce, body, _bound(bound))

    def open(self, kept: bytes, *bound: str) -> bytes:
        """The body as it was sent. A record written before bodies were sealed (within the day
        an upgrade keeps them) is plain and comes back as it is; a sealed body that does not
        open for ``bound`` raises ``ValueError``, never a wrong answer."""
        if not kept.startswith(_MARK):
            return kept
        nonce, sealed = kept[len(_MARK):len(_MARK) + _NONCE_BYTES], kept[len(_MARK) + _NONCE_BYTES:]
        try:
            return self._aead.decrypt(nonce, sealed, _bound(bound))
        except InvalidTag:
            raise ValueError("a kept response does not open for this record") from None


def _bound(parts: tuple[str, ...]) -> bytes:
    # Length-prefixed, so no two tuples spell the same associated data.
    out = bytearray()
    for part in parts:
        encoded = part.encode("utf-8")
        out += struct.pack(">I", len(encoded)) + encoded
    return bytes(out)
