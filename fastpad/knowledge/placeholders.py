"""Expanding a redaction placeholder: the owner of a note reads the secret a
``[redacted:RULE:FINGERPRINT]`` stands for (on a published page, in an agent's proposal).

A signed-in person only — no token of any scope can, agents least of all — and every
expansion is logged in the change feed (``secret_revealed``: who, which note, when; never the
value). The secret is found again in the note's stored text and matched by its fingerprint,
which names the block and the secret's place in it (``outbound.secrets.locate``), so a placeholder
typed by hand, or one from another note, expands to nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from fastpad.errors import FieldError, NotFound, ValidationFailed
from fastpad.knowledge.note_core import visible_note
from fastpad.outbound.secrets import PLACEHOLDER_RE, block_scope, locate
from fastpad.security.audit import PLACEHOLDER_REVEAL, record
from fastpad.security.principals import Principal
from fastpad.store import Store, utcnow


@dataclass(frozen=True)
class Revealed:
    note_id: str
    block_id: str | None  # None: the secret is in the note's title
    value: str


class PlaceholderService:
    def __init__(self, store: Store, redaction_key: bytes, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.redaction_key = redaction_key
        self.clock = clock

    def reveal(self, principal: Principal, note_id: str, placeholder: str) -> Revealed:
        principal.require_signed_in("Expanding a redaction placeholder", reads_only=True)
        match = PLACEHOLDER_RE.fullmatch(placeholder.strip()) if isinstance(placeholder, str) else None
        if match is None:
            raise ValidationFailed(detail="placeholder is one [redacted:rule:fingerprint], as it was shown",
                                   field_errors=[FieldError("placeholder", "format", "[redacted:rule:fingerprint]")])
        rule_id, fp = match.group(1), match.group(2)
        with self.store.write(principal.workspace_id) as tx:
            note = visible_note(tx, principal, note_id)
            texts = [(None, note.title, ""), *((b.block_id, b.text, block_scope(b.block_id)) for b in tx.blocks(note_id))]
            found = next(((block_id, text, spans[0]) for block_id, text, scope in texts
                          if (spans := locate(text, self.redaction_key, rule_id, fp, scope))), None)
            if found is None:
                raise NotFound(detail="this note holds no secret that placeholder stands for",
                               extra={"note_id": note_id})
            block_id, text, span = found
            tx.feed.append("secret_revealed", at=self.clock(), actor=principal.actor(), note_id=note_id,
                           block_ids=None if block_id is None else [block_id])
            record(tx, principal, PLACEHOLDER_REVEAL, note_id=note_id, target=block_id,
                   details={"rule": rule_id, "fingerprint": fp}, at=self.clock())
        return Revealed(note_id, block_id, text[span.start:span.end])
