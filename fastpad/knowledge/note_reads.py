"""Reading notes: keyset pages (by folder too), one note as a view or canonical Markdown, the
whole workspace as an export, which titles and properties sit below a trust floor, and the raw
CRDT state an editor acting for a person opens a note from."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from typing import Any

from fastpad.errors import FieldError, PolicyDenied, ValidationFailed
from fastpad.knowledge.note_core import NoteCore, not_found, require_reachable
from fastpad.knowledge.note_views import NotePage, NoteSummary, NoteView, as_blocks
from fastpad.knowledge.trust import TrustFloor, admits, filter_blocks, floor_for
from fastpad.notes import NoteDocument, NoteMeta, is_ulid, serialize_markdown
from fastpad.notes.schema import storable_text
from fastpad.outbound.titles import TITLE_BELOW_FLOOR, BelowFloor
from fastpad.security.audit import WORKSPACE_EXPORT, record
from fastpad.security.principals import Principal
from fastpad.security.scopes import EXPORT, NOTES_READ
from fastpad.store import NoteRow, WorkspaceTx

MAX_PAGE = 200
# Where an import found the note: the archive folder it sat in ("Projects/Alpha"), a property of
# its own so the vault's hierarchy outlives the import; ``list(folder=…)`` reads it.
SOURCE_FOLDER = "source_folder"
MAX_FOLDER = 1000
_CURSOR_PREFIX = "n1:"


class NoteReads(NoteCore):
    """A principal's reads of notes."""

    def list(
        self,
        principal: Principal,
        *,
        cursor: str | None = None,
        limit: int = 50,
        include_archived: bool = False,
        include_trashed: bool = False,
        folder: str | None = None,
    ) -> NotePage:
        """A keyset page of notes in id (= creation) order; follow ``next_cursor``. ``folder``:
        only the notes an import placed in that folder of its archive or beneath it
        (their ``source_folder``)."""
        principal.require(NOTES_READ)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise ValidationFailed(detail=f"limit is between 1 and {MAX_PAGE}",
                                   field_errors=[FieldError("limit", "range", f"between 1 and {MAX_PAGE}")])
        within = None if folder is None else (SOURCE_FOLDER, _folder(folder))
        after = decode_cursor(cursor) if cursor is not None else None
        if principal.note_ids is not None and not principal.note_ids:
            return NotePage([], None)
        with self.store.read(principal.workspace_id) as tx:
            rows = tx.list_notes(after_id=after, limit=limit + 1, include_archived=include_archived,
                                 include_trashed=include_trashed, note_ids=principal.note_ids, within_folder=within)
            aliases = tx.links.aliases(r.id for r in rows[:limit])
        items = [NoteSummary.from_row(r, aliases.get(r.id, ())) for r in rows[:limit]]
        return NotePage(items, encode_cursor(items[-1].id) if len(rows) > limit else None)

    def get(self, principal: Principal, note_id: str) -> NoteView:
        principal.require(NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            return self.view_in(tx, principal, note_id)

    def markdown(self, principal: Principal, note_id: str) -> str:
        """The note as canonical Markdown (a ``{#ULID}`` anchor after every block)."""
        view = self.get(principal, note_id)
        below = BelowFloor() if principal.is_person else self.names_below(principal, [view.id], floor_for(principal))
        return _markdown_for(principal, view, below)

    def export(self, principal: Principal) -> list[dict[str, Any]]:
        """Every note the credential sees, archived ones too, trashed ones not — id, title, frontier,
        archived and canonical Markdown — read in one transaction, so together they are one
        consistent version of the workspace. Bulk reads need the ``export`` scope; without it a
        credential reads notes one at a time."""
        principal.require(NOTES_READ, EXPORT)
        if principal.note_ids is not None and not principal.note_ids:
            return []
        exported, after = [], None
        with self.store.read(principal.workspace_id) as tx:
            while True:
                rows = tx.list_notes(after_id=after, limit=MAX_PAGE, include_archived=True, include_trashed=False,
                                     note_ids=principal.note_ids)
                below = BelowFloor() if principal.is_person else _names_below(tx, [r.id for r in rows],
                                                                              floor_for(principal))
                for row in rows:
                    view = self.view_in(tx, principal, row.id)
                    exported.append({"id": view.id, "title": view.title, "frontier": view.frontier,
                                     "archived": view.archived,
                                     "markdown": _markdown_for(principal, view, below)})
                if len(rows) < MAX_PAGE:
                    break
                after = rows[-1].id
        with self.store.write(principal.workspace_id) as tx:  # a read: its entry in a short write of its own
            record(tx, principal, WORKSPACE_EXPORT, details={"notes": len(exported)})
        return exported

    def names_below(self, principal: Principal, note_ids: Iterable[str], floor: TrustFloor) -> BelowFloor:
        """Of ``note_ids``, the titles and properties ``floor`` does not admit (an agent's
        unreviewed ones, a capture's or an unverified import's): what ``outbound.titles`` holds."""
        if floor == TrustFloor.ALL or not note_ids:
            return BelowFloor()
        with self.store.read(principal.workspace_id) as tx:
            return _names_below(tx, note_ids, floor)

    def export_updates(self, principal: Principal, note_id: str, *, since: str | None = None) -> tuple[bytes, str]:
        """The note's CRDT state for an editor acting for a person: every update
        since ``since`` (None: all of them, enough to rebuild the note) and the
        frontier it reaches. Agents read through the outbound path instead."""
        row = self._editor_row(principal, note_id)
        return NoteDocument.load(row.snapshot).export_updates(since), row.frontier

    def snapshot(self, principal: Principal, note_id: str) -> tuple[bytes, str]:
        """The note as its stored Loro snapshot (whole history and state) and its frontier: what
        an editor opens a note from. It costs the server nothing to produce, and a snapshot
        loads in a fraction of the time a replay of every update takes."""
        row = self._editor_row(principal, note_id)
        return row.snapshot, row.frontier

    def _editor_row(self, principal: Principal, note_id: str) -> NoteRow:
        principal.require(NOTES_READ)
        if not principal.is_person:
            raise PolicyDenied(
                detail="raw note state is for editors acting for a person; agents read notes as redacted Markdown",
                extra={"reason": "person_only"},
                next_call="fastpad_fetch",
            )
        with self.store.read(principal.workspace_id) as tx:
            require_reachable(principal, note_id)
            row = tx.note(note_id, with_snapshot=True)
        if row is None:
            raise not_found(note_id)
        assert row.snapshot is not None
        return row


def _folder(value: Any) -> str:
    """A folder of an archive, as ``source_folder`` holds it: no leading or trailing '/'."""
    folder = value.strip().strip("/") if isinstance(value, str) else ""
    if not folder or len(folder) > MAX_FOLDER or not storable_text(folder):
        raise ValidationFailed(detail="folder is a path inside an imported archive, such as Projects/Alpha",
                               field_errors=[FieldError("folder", "type",
                                                        f"a non-empty path of at most {MAX_FOLDER} characters,"
                                                        " without U+0000")])
    return folder


def encode_cursor(note_id: str) -> str:
    return base64.urlsafe_b64encode((_CURSOR_PREFIX + note_id).encode()).rstrip(b"=").decode()


def decode_cursor(cursor: str) -> str:
    bad = ValidationFailed(detail="cursor is not one this server returned",
                           field_errors=[FieldError("cursor", "malformed_cursor", "pass next_cursor back unchanged")])
    if not isinstance(cursor, str) or len(cursor) > 100:
        raise bad
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise bad from None
    if not raw.startswith(_CURSOR_PREFIX) or not is_ulid(raw[len(_CURSOR_PREFIX):]):
        raise bad
    return raw[len(_CURSOR_PREFIX):]


def _markdown_for(principal: Principal, view: NoteView, below: BelowFloor) -> str:
    """A note's canonical Markdown as ``principal`` may read it: a reader who is not a person gets
    the blocks its trust floor admits, and nothing below it — its title and properties included."""
    shown = view.blocks if principal.is_person else filter_blocks(view.blocks, floor_for(principal))
    title = TITLE_BELOW_FLOOR if view.id in below.titles else view.title
    meta = NoteMeta(title, view.types, below.shown_properties(view.id, view.properties))
    return serialize_markdown(meta, as_blocks(shown))


def _names_below(tx: WorkspaceTx, note_ids: Iterable[str], floor: TrustFloor) -> BelowFloor:
    note_ids = list(note_ids)
    stamped = tx.name_provenance(note_ids)
    former = tx.links.alias_provenance(note_ids)
    return BelowFloor(
        aliases={n: below for n, titles in former.items()
                 if (below := frozenset(t for t, pair in titles.items() if not admits(floor, *pair)))},
        titles=frozenset(n for n, names in stamped.items() if not admits(floor, *names.title)),
        properties={n: below for n, names in stamped.items()
                    if (below := frozenset(k for k, pair in names.properties.items() if not admits(floor, *pair)))},
    )
