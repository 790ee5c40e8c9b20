"""Capture: text that arrives from outside a keystroke becomes a note in the inbox.

Each capture is a note of its own, typed ``Inbox`` (the inbox is the set of
notes of that type; filing one is changing its type, moving its blocks or
archiving it). One note per capture, rather than appending to a shared inbox
note, keeps captures independent: a capture replayed from a laptop's spool
weeks later never contends with, or lands in the middle of, another one.

Its blocks are ``inbound_untrusted`` whoever sends it (spec › Agents › Trust):
a capture is pasted or piped text, not something the person typed into a note.
Anchors in the text are read and dropped — the blocks get fresh ULIDs, as any
copy does — and text that does not parse as Markdown (a stray ``---`` opening
broken frontmatter, a duplicated anchor) is kept as plain paragraphs: a capture
never fails on its content.

Replay is idempotent for as long as the workspace exists: the idempotency key
gets a receipt (``tx.captures``) naming the note it created.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from fastpad.errors import FieldError, IdempotencyConflict, ValidationFailed
from fastpad.knowledge.notes import NoteService
from fastpad.notes import Block, parse_markdown
from fastpad.notes.blocks import CODE
from fastpad.notes.provenance import Origin
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_WRITE
from fastpad.store import Store, utcnow
from fastpad.store.captures import CaptureReceipt

INBOX_TYPE = "Inbox"
MAX_TEXT = 1024 * 1024  # characters
MAX_TITLE = 200
MAX_KEY = 255
_DERIVED_TITLE = 80
_MARKUP_PREFIX = re.compile(r"^(?:#{1,6}\s+|[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+|>\s*(?:\[![^\]]*\][-+]?\s*)?)")


@dataclass(frozen=True)
class CaptureResult:
    note_id: str
    created_at: datetime
    replayed: bool  # the key already had a note: nothing new was created

    def as_dict(self) -> dict[str, Any]:
        return {"note_id": self.note_id, "created_at": self.created_at.isoformat(), "replayed": self.replayed}


class CaptureService:
    def __init__(self, store: Store, notes: NoteService, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.notes = notes
        self.clock = clock

    def capture(
        self,
        principal: Principal,
        *,
        text: str,
        key: str,
        title: str | None = None,
        properties: Mapping[str, Any] | None = None,
    ) -> CaptureResult:
        """Create the inbox note for ``text``, or acknowledge the one ``key`` already created.
        The same key with a different capture is an ``idempotency-conflict``."""
        principal.require(NOTES_WRITE)
        _check(text, key, title, properties)
        principal_key = f"{principal.kind}:{principal.principal_id}"
        request_hash = _request_hash(text, title, properties)
        with self.store.read(principal.workspace_id) as tx:
            receipt = tx.captures.get(principal_key, key)
        if receipt is not None:
            return _acknowledge(receipt, request_hash)

        meta_title, types, given_properties, blocks = _content(text)
        inbound = replace(principal, origin=Origin.INBOUND_UNTRUSTED)  # the text arrived from outside a keystroke
        view = self.notes.create(
            inbound,
            title=(title or "").strip() or meta_title or _derived_title(blocks),
            blocks=blocks,
            types=tuple(dict.fromkeys((INBOX_TYPE, *types))),
            properties={**given_properties, **dict(properties or {})},
            inbound=True,  # outside text: its frontmatter is kept as it came, like an import's
        )
        receipt = CaptureReceipt(key, request_hash, view.id, self.clock())
        with self.store.write(principal.workspace_id) as tx:
            if not tx.captures.put(principal_key, receipt):  # a concurrent replay won: report its note
                receipt = tx.captures.get(principal_key, key) or receipt
        return CaptureResult(receipt.note_id, receipt.created_at, replayed=receipt.note_id != view.id)


def _acknowledge(receipt: CaptureReceipt, request_hash: str) -> CaptureResult:
    if receipt.request_hash != request_hash:
        raise IdempotencyConflict(
            detail=f"Idempotency key {receipt.key!r} was first used for a different capture.",
            extra={"idempotency_key": receipt.key, "note_id": receipt.note_id},
        )
    return CaptureResult(receipt.note_id, receipt.created_at, replayed=True)


def _check(text: Any, key: Any, title: Any, properties: Any) -> None:
    errors = []
    if not isinstance(text, str) or not text.strip():
        errors.append(FieldError("text", "required", "something to capture: non-blank text"))
    elif len(text) > MAX_TEXT:
        errors.append(FieldError("text", "max_length", f"at most {MAX_TEXT} characters"))
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY or not key.isascii() or not key.isprintable():
        errors.append(FieldError("idempotencyKey", "invalid", "1–255 printable ASCII characters"))
    if title is not None and (not isinstance(title, str) or len(title) > MAX_TITLE):
        errors.append(FieldError("title", "max_length", f"a string of at most {MAX_TITLE} characters"))
    if properties is not None and not isinstance(properties, Mapping):
        errors.append(FieldError("properties", "type", "an object"))
    if errors:
        raise ValidationFailed(detail="the capture is not valid", field_errors=errors)


def _request_hash(text: str, title: str | None, properties: Mapping[str, Any] | None) -> str:
    payload = json.dumps([text, title, dict(properties or {})], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _content(text: str) -> tuple[str, tuple[str, ...], dict[str, Any], list[Block]]:
    """(frontmatter title, types, properties, blocks without ids) of captured text."""
    try:
        parsed = parse_markdown(text)
    except ValidationFailed:  # kept verbatim, where no Markdown reading can change it
        return "", (), {}, [Block(None, CODE, text.replace("\r\n", "\n").strip("\n"), {"language": "text"})]
    blocks = [Block(None, b.type, b.text, b.attrs) for b in parsed.blocks]  # a copy gets fresh ids
    return parsed.meta.title, tuple(parsed.meta.types), dict(parsed.meta.properties), blocks


def _derived_title(blocks: list[Block]) -> str:
    """The first line with a word in it, without its Markdown prefix, cut at a word near 80 characters."""
    for block in blocks:
        line = next((ln for ln in (_MARKUP_PREFIX.sub("", ln).strip() for ln in block.text.split("\n"))
                     if any(ch.isalnum() for ch in ln)), "")
        if not line:
            continue
        if len(line) <= _DERIVED_TITLE:
            return line
        cut = line[:_DERIVED_TITLE].rsplit(" ", 1)[0] or line[:_DERIVED_TITLE]
        return cut.rstrip() + "…"
    return "Capture"
