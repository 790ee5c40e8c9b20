"""Attachments: the images and PDFs a file property points at, uploaded by a writer or stored by
an import — one row per content per workspace (SHA-256), served back by ``GET /v1/attachments/{id}``.

An upload is refused, with nothing stored, when it is larger than ``MAX_ATTACHMENT_BYTES``
(``payload-too-large``), not one of the stored kinds (``unsupported-media-type``, naming them),
or empty or not what its declared type says its first bytes are (``validation-failed``): a
``.png`` that is not a PNG is never stored as one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime

from fastpad.errors import FieldError, NotFound, PayloadTooLarge, UnsupportedMediaType, ValidationFailed
from fastpad.notes import is_ulid, new_id
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ, NOTES_WRITE
from fastpad.store import Store, utcnow
from fastpad.store.imports import AttachmentRow

MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024
ATTACHMENTS_PATH = "/v1/attachments/"  # a file property's value: this and the attachment's id
MAX_NAME = 255
STORED_TYPES = {
    "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
    "pdf": "application/pdf",
}
_MAGIC = {
    "image/png": lambda b: b.startswith(b"\x89PNG\r\n\x1a\n"),
    "image/jpeg": lambda b: b.startswith(b"\xff\xd8\xff"),
    "image/gif": lambda b: b[:6] in (b"GIF87a", b"GIF89a"),
    "image/webp": lambda b: b[:4] == b"RIFF" and b[8:12] == b"WEBP",
    "application/pdf": lambda b: b"%PDF-" in b[:1024],
}


def matches_type(media_type: str, data: bytes) -> bool:
    """Whether the bytes begin the way a file of ``media_type`` does."""
    return _MAGIC[media_type](data)


class AttachmentService:
    def __init__(self, store: Store, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.clock = clock

    def upload(self, principal: Principal, data: bytes, *, media_type: str, name: str) -> AttachmentRow:
        """Store the file (or find the one with the same content) and return it, without its bytes."""
        principal.require(NOTES_WRITE)
        if len(data) > MAX_ATTACHMENT_BYTES:
            raise PayloadTooLarge(detail=f"an attachment is at most {MAX_ATTACHMENT_BYTES // (1024 * 1024)} MiB; "
                                         f"this one is {len(data):,} bytes", extra={"limit_bytes": MAX_ATTACHMENT_BYTES})
        kind = (media_type or "").split(";")[0].strip().lower()
        if kind not in _MAGIC:
            raise UnsupportedMediaType(detail=f"attachments are images or PDFs, not {kind or 'a body without a type'}",
                                       extra={"accepted": sorted(_MAGIC)})
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or any(c in name for c in "/\\\0"):
            raise ValidationFailed(detail="name is the file's name: 1 to 255 characters, no slashes",
                                   field_errors=[FieldError("name", "file_name", "a file name without a path")])
        if not data or not matches_type(kind, data):
            raise ValidationFailed(detail=f"the file is not a {kind} (its first bytes say otherwise)",
                                   field_errors=[FieldError("body", "content_mismatch", f"the bytes of a {kind}")])
        digest = hashlib.sha256(data).hexdigest()
        with self.store.write(principal.workspace_id) as tx:
            stored = tx.imports.attachment_by_digest(digest)
            if stored is None:
                stored = AttachmentRow(new_id(), digest, kind, name.strip(), len(data), data, self.clock())
                tx.imports.insert_attachment(stored, None)
        return AttachmentRow(stored.id, stored.sha256, stored.media_type, stored.name, stored.size, None,
                             stored.created_at)

    def get(self, principal: Principal, attachment_id: str) -> AttachmentRow:
        """An attachment, with its bytes."""
        principal.require(NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            row = tx.imports.attachment(attachment_id) if is_ulid(attachment_id) else None
        if row is None:
            raise NotFound(detail=f"no attachment {attachment_id}", extra={"attachment_id": attachment_id})
        return row
