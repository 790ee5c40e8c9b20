"""Statements for links (typed edges), note titles (aliases) and supersession.

``tx.links`` is a ``LinkStore`` bound to the transaction's connection and
workspace. Like everything in the data-access layer it adds ``workspace_id =
<the transaction's workspace>`` to every statement itself and takes values
only as bound parameters (see fastpad/store/base.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx


@dataclass(frozen=True)
class LinkRow:
    """One edge. ``target_note_id`` is None while the link is unresolved (a
    forward link to a title no note has yet); ``confidence`` is set only on
    inferred edges and is the value at ``created_at``."""

    id: str
    source_note_id: str
    source_block_id: str | None
    target_note_id: str | None
    target_title: str
    target_key: str
    type: str
    derivation: str  # "text" (kept in step with the block text by the write path) | "api"
    status: str  # "asserted" | "inferred"
    confidence: float | None
    evidence_text: str
    evidence_origin: str | None
    evidence_review_state: str | None
    created_by_kind: str
    created_by_id: str
    token_id: str | None
    confirmed_by: str | None
    confirmed_at: datetime | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class TitleRow:
    """A title a note has, or had (``retired_at`` set: an alias)."""

    note_id: str
    key: str
    title: str
    since: datetime
    retired_at: datetime | None


@dataclass(frozen=True)
class NoteEnd:
    """The far end of an edge, as much as a reader needs to see of it."""

    id: str
    title: str
    archived: bool
    trashed: bool


@dataclass(frozen=True)
class EdgeRow:
    link: LinkRow
    direction: str  # "out" (the note is the source) | "in"
    other: NoteEnd | None  # None: an unresolved outgoing link


_LINK_COLUMNS = (
    "id, source_note_id, source_block_id, target_note_id, target_title, target_key, type, derivation, status,"
    " confidence, evidence_text, evidence_origin, evidence_review_state, created_by_kind, created_by_id, token_id,"
    " confirmed_by, confirmed_at, created_at, updated_at"
)
_LINK_COUNT = len(_LINK_COLUMNS.split(","))


class LinkStore:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx
        self._d = tx._d  # noqa: SLF001 - this module is part of the data-access layer
        self._x = tx._x  # noqa: SLF001
        self._many = tx._many  # noqa: SLF001
        self.workspace_id = tx.workspace_id

    # ------------------------------------------------------------------ titles and aliases

    def titles(self, note_id: str) -> list[TitleRow]:
        """Every title the note has had: the current one first, then aliases, newest first."""
        rows = self._x(
            "SELECT note_id, key, title, since, retired_at FROM note_titles WHERE workspace_id = ? AND note_id = ?"
            " ORDER BY CASE WHEN retired_at IS NULL THEN 0 ELSE 1 END, retired_at DESC, key",
            (self.workspace_id, note_id),
        ).fetchall()
        return [TitleRow(r[0], r[1], r[2], self._d.ts_out(r[3]), self._d.ts_out(r[4])) for r in rows]

    def aliases(self, note_ids: Iterable[str]) -> dict[str, list[str]]:
        """Former titles per note (newest first), for the notes that have any."""
        found: dict[str, list[str]] = {}
        for note_id, title, _ in self._former_titles(note_ids):
            found.setdefault(note_id, []).append(title)
        return found

    def alias_provenance(self, note_ids: Iterable[str]) -> dict[str, dict[str, tuple[str, str]]]:
        """Per note that has any, each former title -> the (origin, review state) it had as the
        title: what holds an alias to a reader's trust floor as its title was held."""
        found: dict[str, dict[str, tuple[str, str]]] = {}
        for note_id, title, provenance in self._former_titles(note_ids):
            found.setdefault(note_id, {})[title] = provenance
        return found

    def _former_titles(self, note_ids: Iterable[str]) -> list[tuple[str, str, tuple[str, str]]]:
        wanted = sorted(set(note_ids))
        if not wanted:
            return []
        rows = self._x(
            "SELECT note_id, title, origin, review_state FROM note_titles WHERE workspace_id = ?"
            f" AND retired_at IS NOT NULL AND {self._d.in_ids('note_id')} ORDER BY note_id, retired_at DESC, key",
            (self.workspace_id, self._d.ids(wanted)),
        ).fetchall()
        return [(r[0], r[1], (r[2], r[3])) for r in rows]

    def stamp_title(self, note_id: str, provenance: tuple[str, str]) -> None:
        """The current title's (origin, review state), kept in step with the note's own stamp so
        that the title takes it along when it becomes an alias."""
        self._tx._w()  # noqa: SLF001
        self._x("UPDATE note_titles SET origin = ?, review_state = ? WHERE workspace_id = ? AND note_id = ?"
                " AND retired_at IS NULL", (*provenance, self.workspace_id, note_id))

    def current_title(self, note_id: str) -> TitleRow | None:
        row = self._x(
            "SELECT note_id, key, title, since, retired_at FROM note_titles"
            " WHERE workspace_id = ? AND note_id = ? AND retired_at IS NULL",
            (self.workspace_id, note_id),
        ).fetchone()
        return TitleRow(row[0], row[1], row[2], self._d.ts_out(row[3]), None) if row else None

    def set_title(self, note_id: str, title: str, key: str, at: datetime, provenance: tuple[str, str]) -> bool:
        """Make ``title`` the note's current title, stamped ``provenance`` (origin, review
        state); the one it replaces becomes an alias and keeps its own. Returns True when the
        current title changed. A blank key only retires the current title."""
        self._tx._w()  # noqa: SLF001
        d, ws = self._d, self.workspace_id
        current = self.current_title(note_id)
        if current is not None and current.key == key:
            if current.title != title:  # same key, new spelling: not a rename
                self._x("UPDATE note_titles SET title = ?, origin = ?, review_state = ?"
                        " WHERE workspace_id = ? AND note_id = ? AND key = ?", (title, *provenance, ws, note_id, key))
            return False
        if current is not None and current.title == title:
            # Same title, different key: a key computed by an older normaliser. Replace it, no alias.
            self._x("DELETE FROM note_titles WHERE workspace_id = ? AND note_id = ? AND key = ?",
                    (ws, note_id, current.key))
        elif current is not None:
            self._x("UPDATE note_titles SET retired_at = ? WHERE workspace_id = ? AND note_id = ? AND key = ?",
                    (d.ts(at), ws, note_id, current.key))
        if key:
            self._x(
                "INSERT INTO note_titles (workspace_id, note_id, key, title, since, retired_at, origin, review_state)"
                " VALUES (?, ?, ?, ?, ?, NULL, ?, ?) ON CONFLICT (note_id, key) DO UPDATE SET title = excluded.title,"
                " since = excluded.since, retired_at = NULL, origin = excluded.origin,"
                " review_state = excluded.review_state",
                (ws, note_id, key, title, d.ts(at), *provenance),
            )
        return True

    def resolve(self, keys: Iterable[str], *, within: Iterable[str] | None = None) -> dict[str, str]:
        """Title key -> the note it names, among the notes ``within`` (None: every note).
        Preference: a note not in the trash, then a current title over an alias, then the
        oldest note."""
        wanted = sorted(set(keys))
        among = None if within is None else sorted(set(within))
        if not wanted or among == []:
            return {}
        only_among = "" if among is None else f" AND {self._d.in_ids('t.note_id')}"
        rows = self._x(
            "SELECT t.key, t.note_id FROM note_titles t JOIN notes n ON n.id = t.note_id"
            f" WHERE t.workspace_id = ? AND n.workspace_id = ? AND {self._d.in_ids('t.key')}{only_among}"
            " ORDER BY t.key, CASE WHEN n.trashed_at IS NULL THEN 0 ELSE 1 END,"
            " CASE WHEN t.retired_at IS NULL THEN 0 ELSE 1 END, t.note_id",
            (self.workspace_id, self.workspace_id, self._d.ids(wanted),
             *(() if among is None else (self._d.ids(among),))),
        ).fetchall()
        found: dict[str, str] = {}
        for key, note_id in rows:
            found.setdefault(key, note_id)
        return found

    def attach_forward_links(self, note_id: str, key: str, at: datetime) -> int:
        """Point every unresolved link to ``key`` at ``note_id``. Returns how many."""
        self._tx._w()  # noqa: SLF001
        cur = self._x(
            "UPDATE links SET target_note_id = ?, updated_at = ?"
            " WHERE workspace_id = ? AND target_note_id IS NULL AND target_key = ?",
            (note_id, self._d.ts(at), self.workspace_id, key),
        )
        return cur.rowcount

    def lock_titles(self, keys: Iterable[str]) -> None:
        """Serialise writers that resolve or register the same titles, so a link
        written while its target is being created cannot miss it. SQLite writers
        are already serial; PostgreSQL takes transaction-scoped advisory locks,
        in a fixed order so two writers cannot deadlock on them."""
        wanted = [f"title:{self.workspace_id}:{key}" for key in sorted(set(keys))]
        if self._d.name != "postgres" or not wanted:
            return
        self._x(
            "SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))"
            " FROM (SELECT k FROM unnest(?::text[]) WITH ORDINALITY AS t(k, n) ORDER BY n) ordered",
            (wanted,),
        )

    # ------------------------------------------------------------------ edges

    def insert(self, rows: Sequence[LinkRow]) -> None:
        self._tx._w()  # noqa: SLF001
        d = self._d
        self._many(
            f"INSERT INTO links (workspace_id, {_LINK_COLUMNS}) VALUES ({', '.join(['?'] * (_LINK_COUNT + 1))})",
            [
                (self.workspace_id, r.id, r.source_note_id, r.source_block_id, r.target_note_id, r.target_title,
                 r.target_key, r.type, r.derivation, r.status, r.confidence, r.evidence_text, r.evidence_origin,
                 r.evidence_review_state, r.created_by_kind, r.created_by_id, r.token_id, r.confirmed_by,
                 d.ts(r.confirmed_at), d.ts(r.created_at), d.ts(r.updated_at))
                for r in rows
            ],
        )

    def refresh_text_edges(self, rows: Sequence[LinkRow]) -> None:
        """Rewrite what a block edit can change on a text edge: evidence, status, confidence."""
        self._tx._w()  # noqa: SLF001
        self._many(
            "UPDATE links SET evidence_text = ?, evidence_origin = ?, evidence_review_state = ?, status = ?,"
            " confidence = ?, target_title = ?, updated_at = ? WHERE workspace_id = ? AND id = ?",
            [(r.evidence_text, r.evidence_origin, r.evidence_review_state, r.status, r.confidence, r.target_title,
              self._d.ts(r.updated_at), self.workspace_id, r.id) for r in rows],
        )

    def delete(self, link_ids: Iterable[str]) -> None:
        self._tx._w()  # noqa: SLF001
        self._many("DELETE FROM links WHERE workspace_id = ? AND id = ?",
                   [(self.workspace_id, link_id) for link_id in link_ids])

    def text_edges(self, note_id: str) -> list[LinkRow]:
        """The edges the write path derived from this note's block text."""
        rows = self._x(
            f"SELECT {_LINK_COLUMNS} FROM links WHERE workspace_id = ? AND source_note_id = ? AND derivation = 'text'",
            (self.workspace_id, note_id),
        ).fetchall()
        return [self._link(r) for r in rows]

    def get(self, link_id: str, *, for_update: bool = False) -> LinkRow | None:
        lock = self._d.for_update if for_update else ""
        row = self._x(f"SELECT {_LINK_COLUMNS} FROM links WHERE workspace_id = ? AND id = ?{lock}",
                      (self.workspace_id, link_id)).fetchone()
        return self._link(row) if row else None

    def find_api_edge(self, *, source_note_id: str, type: str, target_note_id: str | None, target_key: str,
                      created_by_id: str) -> LinkRow | None:
        """The same edge made through the API by the same author before, if any."""
        target = "target_note_id = ?" if target_note_id is not None else "target_note_id IS NULL AND target_key = ?"
        row = self._x(
            f"SELECT {_LINK_COLUMNS} FROM links WHERE workspace_id = ? AND source_note_id = ? AND type = ?"
            f" AND derivation = 'api' AND created_by_id = ? AND {target}",
            (self.workspace_id, source_note_id, type, created_by_id,
             target_note_id if target_note_id is not None else target_key),
        ).fetchone()
        return self._link(row) if row else None

    def confirm(self, link_id: str, person_id: str, at: datetime) -> None:
        """An inferred edge a person promoted: asserted from now on, no decay."""
        self._tx._w()  # noqa: SLF001
        d = self._d
        self._x(
            "UPDATE links SET status = 'asserted', confidence = NULL, confirmed_by = ?, confirmed_at = ?,"
            " updated_at = ? WHERE workspace_id = ? AND id = ?",
            (person_id, d.ts(at), d.ts(at), self.workspace_id, link_id),
        )

    def edges(self, note_id: str, **options: Any) -> list[EdgeRow]:
        """The edges of one note: :meth:`edges_of` with the same options."""
        return self.edges_of([note_id], **options)[note_id]

    def edges_of(
        self,
        note_ids: Iterable[str],
        *,
        direction: str,
        types: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        visible: Iterable[str] | None = None,
        include_unresolved: bool = False,
        include_trashed: bool = False,
        after_id: str | None = None,
        limit: int = 200,
    ) -> dict[str, list[EdgeRow]]:
        """Edges touching each of ``note_ids``, in one statement: note id → its
        first ``limit`` edges in id order (every note asked for is a key).
        ``direction`` is "out", "in" or "both"; the far end must be in
        ``visible`` (None = any note) and, unless asked, not in the trash.
        Unresolved links (outgoing only) come with ``include_unresolved``. A
        self-link is reported once, as outgoing."""
        d, ws = self._d, self.workspace_id
        ids = sorted(set(note_ids))
        found: dict[str, list[EdgeRow]] = {note_id: [] for note_id in ids}
        if not ids:
            return found
        parts: list[str] = []
        params: list[Any] = []
        if direction in ("out", "both"):
            parts.append(f"SELECT {_LINK_COLUMNS}, 'out' AS dir, target_note_id AS other, source_note_id AS near"
                         f" FROM links WHERE workspace_id = ? AND {d.in_ids('source_note_id')}")
            params += [ws, d.ids(ids)]
        if direction in ("in", "both"):
            parts.append(f"SELECT {_LINK_COLUMNS}, 'in' AS dir, source_note_id AS other, target_note_id AS near"
                         f" FROM links WHERE workspace_id = ? AND {d.in_ids('target_note_id')}"
                         " AND source_note_id <> target_note_id")
            params += [ws, d.ids(ids)]
        params.append(ws)  # the join's
        where = ["(o.id IS NOT NULL OR e.other IS NULL)" if include_unresolved else "o.id IS NOT NULL"]
        if not include_trashed:
            where.append("(o.trashed_at IS NULL OR e.other IS NULL)")
        for column, values in (("e.type", types), ("e.status", statuses)):
            if values is not None:
                where.append(d.in_ids(column))
                params.append(d.ids(values))
        if visible is not None:
            where.append(f"(e.other IS NULL OR {d.in_ids('e.other')})")
            params.append(d.ids(visible))
        if after_id is not None:
            where.append("e.id > ?")
            params.append(after_id)
        params.append(int(limit))
        rows = self._x(
            "SELECT * FROM ("
            f" SELECT e.*, o.title, o.archived_at, o.trashed_at,"
            "  ROW_NUMBER() OVER (PARTITION BY e.near ORDER BY e.id) AS nth"
            f" FROM ({' UNION ALL '.join(parts)}) e"
            " LEFT JOIN notes o ON o.id = e.other AND o.workspace_id = ?"
            f" WHERE {' AND '.join(where)}) ranked WHERE nth <= ? ORDER BY near, id",
            params,
        ).fetchall()
        for r in rows:
            other_id = r[_LINK_COUNT + 1]
            other = None if other_id is None else NoteEnd(other_id, r[_LINK_COUNT + 3], r[_LINK_COUNT + 4] is not None,
                                                           r[_LINK_COUNT + 5] is not None)
            found[r[_LINK_COUNT + 2]].append(EdgeRow(self._link(r), r[_LINK_COUNT], other))
        return found

    def _link(self, r: Sequence[Any]) -> LinkRow:
        d = self._d
        return LinkRow(
            id=r[0], source_note_id=r[1], source_block_id=r[2], target_note_id=r[3], target_title=r[4],
            target_key=r[5], type=r[6], derivation=r[7], status=r[8],
            confidence=None if r[9] is None else float(r[9]), evidence_text=r[10], evidence_origin=r[11],
            evidence_review_state=r[12], created_by_kind=r[13], created_by_id=r[14], token_id=r[15],
            confirmed_by=r[16], confirmed_at=d.ts_out(r[17]), created_at=d.ts_out(r[18]), updated_at=d.ts_out(r[19]),
        )

    # ------------------------------------------------------------------ notes at the far end

    def note_ends(self, note_ids: Iterable[str]) -> dict[str, NoteEnd]:
        ids = sorted(set(note_ids))
        if not ids:
            return {}
        rows = self._x(
            f"SELECT id, title, archived_at, trashed_at FROM notes WHERE workspace_id = ? AND {self._d.in_ids('id')}",
            (self.workspace_id, self._d.ids(ids)),
        ).fetchall()
        return {r[0]: NoteEnd(r[0], r[1], r[2] is not None, r[3] is not None) for r in rows}

    # ------------------------------------------------------------------ supersession

    def supersession(self, note_id: str) -> tuple[str, str] | None:
        """(successor note id, supersedes link id) for a superseded note."""
        return self.supersessions_of([note_id]).get(note_id)

    def supersessions_of(self, note_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """:meth:`supersession` of several notes in one statement (only superseded ones are keys)."""
        ids = sorted(set(note_ids))
        if not ids:
            return {}
        rows = self._x(
            "SELECT note_id, successor_id, link_id FROM supersessions"
            f" WHERE workspace_id = ? AND {self._d.in_ids('note_id')}",
            (self.workspace_id, self._d.ids(ids)),
        ).fetchall()
        return {r[0]: (r[1], r[2]) for r in rows}

    def set_supersession(self, note_id: str, successor_id: str, link_id: str, at: datetime) -> None:
        self._tx._w()  # noqa: SLF001
        self._x(
            "INSERT INTO supersessions (workspace_id, note_id, successor_id, link_id, created_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (note_id) DO UPDATE SET successor_id = excluded.successor_id,"
            " link_id = excluded.link_id, created_at = excluded.created_at",
            (self.workspace_id, note_id, successor_id, link_id, self._d.ts(at)),
        )

