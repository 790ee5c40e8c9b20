"""Published notes: a person makes a note readable by anyone at ``/n/{id}``.

Who may (spec: Security › Publishing): only a signed-in person, never a token of any
scope — an agent that could publish could exfiltrate a workspace by publishing it and
reading it back from outside. Trashing a note unpublishes it (``NoteService`` does it in
the trash's own transaction), and restoring it does not publish it again.

What the world reads (:meth:`PublishingService.public`): the note's title and blocks as
canonical Markdown (anchors kept, so a published block can be linked to), with every
secret masked by the same rules agents' reads are masked by; types and properties are
the workspace's metadata and stay out. A ``[[link]]`` to another note becomes a link to
that note's public page when it is published too, and its plain text otherwise: a
published page never names an unpublished note's id. Either way the link shows the words the
linking block wrote, never the target's title: a title an unreviewed agent or inbound text set
on the target (held below an agent's floor, issue 29) does not reach anyone through a page that
links it. A person mention reads ``@Name``: a member's id and a link into the workspace stay out.

To an anonymous caller, a note that was never published, one that was unpublished,
trashed or deleted, and an id that never existed are one case: the public read makes
the same single lookup (``Store.published_workspace``) and answers ``None``.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from markdown_it import MarkdownIt

from fastpad.errors import Conflict
from fastpad.knowledge.note_core import visible_note
from fastpad.knowledge.wikilinks import rewrite_wikilinks
from fastpad.notes import Block, NoteMeta, is_ulid, serialize_markdown
from fastpad.notes.mentions import mentions_as_text
from fastpad.outbound.secrets import block_scope, redact
from fastpad.security.audit import NOTE_PUBLISH, NOTE_UNPUBLISH, record
from fastpad.security.principals import Principal
from fastpad.store import BlockRow, Store, utcnow

PUBLIC_PATH = "/n/"
RENDERED_PAGES = 512  # published pages kept rendered, oldest dropped first
_ANCHOR = re.compile(r" ?\{#[0-9A-HJKMNP-TV-Z]{26}\}")
# Raw HTML stays text (a note is never markup the page runs); links keep markdown-it's
# own URL check, which refuses javascript: and the like.
_HTML = MarkdownIt("commonmark", {"html": False}).enable("table")


@dataclass(frozen=True)
class Publication:
    note_id: str
    published_at: datetime | None  # None: not published

    @property
    def path(self) -> str:
        return f"{PUBLIC_PATH}{self.note_id}"

    def as_dict(self, base_url: str) -> dict[str, object]:
        return {"note_id": self.note_id, "published": self.published_at is not None, "url": base_url + self.path,
                "published_at": self.published_at.isoformat() if self.published_at else None}


@dataclass(frozen=True)
class PublicNote:
    """A published note as anyone reads it."""

    note_id: str
    title: str
    markdown: str  # canonical, secrets masked, links to unpublished notes as plain text
    body_html: str
    etag: str
    published_at: datetime


class PublishingService:
    def __init__(self, store: Store, redaction_key: bytes, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.redaction_key = redaction_key
        self.clock = clock
        # Rendered pages by (note, version, live links): redacting and rendering cost more than
        # the reads, and a published page is read far more often than it changes.
        self._pages: dict[tuple[str, str, frozenset], tuple[str, str, str, str]] = {}
        self._pages_lock = threading.Lock()

    # ------------------------------------------------------------------ a person's actions

    def status(self, principal: Principal, note_id: str) -> Publication:
        with self.store.read(principal.workspace_id) as tx:
            visible_note(tx, principal, note_id)
            row = tx.publications.get(note_id)
        return Publication(note_id, row.published_at if row else None)

    def publish(self, principal: Principal, note_id: str) -> Publication:
        principal.require_signed_in("Publishing")
        now = self.clock()
        with self.store.write(principal.workspace_id) as tx:
            note = visible_note(tx, principal, note_id)
            if note.trashed_at is not None:
                raise Conflict(detail="a note in the trash cannot be published; restore it first",
                               extra={"reason": "trashed"}, next_call=f"POST /v1/notes/{note_id}/restore")
            was = tx.publications.get(note_id)
            row = tx.publications.publish(note_id, principal.principal_id, now)
            if was is None:
                tx.feed.append("publish", at=now, actor=principal.actor(), note_id=note_id)
                record(tx, principal, NOTE_PUBLISH, note_id=note_id, target=note_id, at=now)
        return Publication(note_id, row.published_at)

    def unpublish(self, principal: Principal, note_id: str) -> Publication:
        principal.require_signed_in("Unpublishing")
        with self.store.write(principal.workspace_id) as tx:
            visible_note(tx, principal, note_id)
            if tx.publications.unpublish(note_id):
                tx.feed.append("unpublish", at=self.clock(), actor=principal.actor(), note_id=note_id)
                record(tx, principal, NOTE_UNPUBLISH, note_id=note_id, target=note_id, at=self.clock())
        return Publication(note_id, None)

    # ------------------------------------------------------------------ anyone's read

    def public(self, note_id: str) -> PublicNote | None:
        """The published note, or None for every other case (see the module docstring)."""
        workspace_id = self.store.published_workspace(note_id) if is_ulid(note_id) else None
        if workspace_id is None:
            return None
        with self.store.read(workspace_id) as tx:
            note, publication = tx.note(note_id), tx.publications.get(note_id)
            if note is None or publication is None or note.trashed_at is not None:
                return None
            edges = [e for e in tx.links.text_edges(note_id) if e.target_note_id is not None]
            published = tx.publications.published_among({e.target_note_id for e in edges} - {note_id}) | {note_id}
            # What the page shows is fixed by the note's version and which of its links are live.
            live = frozenset((e.source_block_id, e.target_key, e.target_note_id) for e in edges
                             if e.target_note_id in published)
            key = (note_id, note.frontier, live)
            page = self._pages.get(key)
            if page is None:
                page = self._render(note.title, tx.blocks(note_id), live)
                self._remember(key, page)
        title, markdown, body_html, etag = page
        return PublicNote(note_id, title, markdown, body_html, etag, publication.published_at)

    def _render(self, title: str, rows: list[BlockRow], live: frozenset[tuple[str | None, str, str | None]]
                ) -> tuple[str, str, str, str]:
        targets = {(block_id, key): target for block_id, key, target in live}

        def linked(block_id: str) -> Callable[[str, str], str]:
            def rewrite(key: str, shown: str) -> str:
                target = targets.get((block_id, key))
                return f"[{shown}]({PUBLIC_PATH}{target})" if target else shown
            return rewrite

        blocks = [Block(r.block_id, r.type, redact(rewrite_wikilinks(r.type, mentions_as_text(r.type, r.text),
                                                                     linked(r.block_id)),
                                                   self.redaction_key, block_scope(r.block_id)).text, r.attrs)
                  for r in rows]
        title = redact(title, self.redaction_key).text
        markdown = serialize_markdown(NoteMeta(title), blocks)
        body = _ANCHOR.sub("", serialize_markdown(NoteMeta(), blocks))
        etag = '"' + hashlib.sha256(markdown.encode()).hexdigest()[:32] + '"'
        return title, markdown, _HTML.render(body), etag

    def _remember(self, key: tuple[str, str, frozenset], page: tuple[str, str, str, str]) -> None:
        with self._pages_lock:
            self._pages[key] = page
            while len(self._pages) > RENDERED_PAGES:
                self._pages.pop(next(iter(self._pages)))
