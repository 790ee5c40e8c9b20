"""GraphService: typed edges between notes, with evidence, for a principal.

Reads (``graph:read``): ``neighbors`` is one hop, typed, every edge with its
evidence — what ``fastpad_graph`` calls; ``links`` is a note's outgoing links
(forward links to titles no note has yet included), backlinks and title
history; ``successor_chain`` follows "superseded by" to the newest note.

Every read respects the credential's note set: an edge whose far end the
credential cannot see is not returned at all, and a chain stops before such a
note. Agents are never handed an inferred edge (``trust.edge_walkable``), a walk
for search, context or ask follows none for anyone (``neighbors(walking=True)``), and
evidence text below the read's trust floor is withheld (``trust.admits``), and with it
the link text copied from that block (``target_title``).
Notes in the trash are not reached; archived notes are (archive keeps a note
linkable).

Writes (``notes:write``) each append a change-feed row in their transaction:
``create_link`` (a person's edge is asserted; an agent's is inferred, with a
confidence that decays), ``promote`` (a signed-in person only), ``delete_link``
and ``supersede`` (a person only). Links written in note text are not made
here: the write path derives them (``link_projection``). ``create_link_in`` and
``delete_link_in`` do the same inside a transaction the caller holds, which is
how an accepted proposal lands its edges with its prose, and how a revert takes
them back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from fastpad.errors import Conflict, FieldError, NotFound, OutOfScope, PolicyDenied, ValidationFailed
from fastpad.knowledge.edges import (
    DEFAULT_INFERRED_CONFIDENCE,
    SUPERSEDES,
    check_edge_type,
    decayed_confidence,
)
from fastpad.knowledge.trust import (
    ASSERTED,
    INFERRED,
    WALKED_BY_SEARCH,
    TrustFloor,
    admits,
    edge_walkable,
    floor_for,
)
from fastpad.knowledge.wikilinks import MAX_TITLE, evidence_window, title_key
from fastpad.notes import is_ulid, new_id
from fastpad.outbound.titles import TITLE_BELOW_FLOOR
from fastpad.security.principals import WIDER_NOTE_SET, Principal
from fastpad.security.scopes import GRAPH_READ, NOTES_WRITE
from fastpad.store import Store, WorkspaceTx, utcnow
from fastpad.store.links import EdgeRow, LinkRow, NoteEnd

DIRECTIONS = ("out", "in", "both")
DEFAULT_LIMIT = 200
MAX_LIMIT = 1000
MAX_CHAIN = 100
# The title key of an edge made to a note by id: it names that note, never a title, so
# if the note is purged the edge is left pointing nowhere rather than re-resolving to
# whichever note takes the title next.
BY_ID = ""


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


@dataclass(frozen=True)
class NoteRef:
    id: str
    title: str
    archived: bool = False

    @classmethod
    def of(cls, end: NoteEnd) -> "NoteRef":
        return cls(end.id, end.title, end.archived)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "archived": self.archived}


@dataclass(frozen=True)
class Evidence:
    """Why two notes are connected: the block the edge was made in and the text
    around the link. ``withheld`` when that text is below the read's trust floor."""

    block_id: str | None
    text: str | None
    origin: str | None
    review_state: str | None
    withheld: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"block_id": self.block_id, "text": self.text, "origin": self.origin,
                "review_state": self.review_state, "withheld": self.withheld}


@dataclass(frozen=True)
class Edge:
    id: str
    type: str
    direction: str  # relative to the note asked about: "out" (it is the source) or "in"
    source: NoteRef
    target: NoteRef | None  # None: unresolved (a forward link), or a note this credential cannot see
    target_title: str  # the title as the link names it
    status: str  # asserted | inferred
    confidence: float | None  # inferred edges only, decayed to now
    derivation: str  # "text": written in the source note's blocks; "api": made through the API
    evidence: Evidence
    created_by: dict[str, str | None]  # kind, id, token_id
    created_at: datetime
    confirmed_by: str | None = None
    confirmed_at: datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "type": self.type, "direction": self.direction, "source": self.source.as_dict(),
            "target": None if self.target is None else self.target.as_dict(), "target_title": self.target_title,
            "status": self.status, "confidence": self.confidence, "derivation": self.derivation,
            "evidence": self.evidence.as_dict(), "created_by": dict(self.created_by),
            "created_at": _iso(self.created_at), "confirmed_by": self.confirmed_by,
            "confirmed_at": _iso(self.confirmed_at),
        }


@dataclass(frozen=True)
class LinkMade:
    edge: Edge
    created: bool  # False: the same author had made this edge already, and it is returned as it was


@dataclass(frozen=True)
class NoteLinks:
    note: NoteRef
    aliases: list[str]  # former titles that still resolve here, newest first
    outgoing: list[Edge]
    backlinks: list[Edge]
    truncated: bool  # more than MAX_LIMIT edges in one direction: narrow by type

    def as_dict(self) -> dict[str, Any]:
        return {"note": self.note.as_dict(), "aliases": list(self.aliases),
                "outgoing": [e.as_dict() for e in self.outgoing], "backlinks": [e.as_dict() for e in self.backlinks],
                "truncated": self.truncated}


@dataclass(frozen=True)
class SuccessorChain:
    note: NoteRef
    successors: list[NoteRef]  # superseded-by, in order; the last is the newest the caller can see
    cycle: bool  # the chain came back to a note already in it (and stopped there)

    def as_dict(self) -> dict[str, Any]:
        return {"note": self.note.as_dict(), "successors": [n.as_dict() for n in self.successors],
                "latest": (self.successors[-1] if self.successors else self.note).as_dict(), "cycle": self.cycle}


class GraphService:
    def __init__(self, store: Store, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.clock = clock

    # ------------------------------------------------------------------ reads

    def neighbors(
        self,
        principal: Principal,
        note_id: str,
        *,
        edge_types: Iterable[str] | None = None,
        direction: str = "both",
        floor: str | TrustFloor | None = None,
        after: str | None = None,
        limit: int = DEFAULT_LIMIT,
        walking: bool = False,
    ) -> list[Edge]:
        """One hop from ``note_id``: the edges the caller may walk, in id order
        (pass the last id as ``after`` for the next page). ``walking``: the hop
        reaches content for a search, context or ask, so only asserted edges
        count, whoever asks (``trust.WALKED_BY_SEARCH``)."""
        principal.require(GRAPH_READ)
        types = _check_types(edge_types)
        if direction not in DIRECTIONS:
            raise ValidationFailed(detail="direction is out, in or both",
                                   field_errors=[FieldError("direction", "enum", "out, in or both")])
        _check_limit(limit)
        if after is not None and not is_ulid(after):
            raise ValidationFailed(detail="after is an edge id",
                                   field_errors=[FieldError("after", "ulid", "the id of the last edge you read")])
        at = floor_for(principal, floor)
        with self.store.read(principal.workspace_id) as tx:
            note = _visible_note(tx, principal, note_id)
            statuses = WALKED_BY_SEARCH if walking else _walkable(principal)
            rows = tx.links.edges(note_id, direction=direction, types=types, statuses=statuses,
                                  visible=principal.note_ids, after_id=after, limit=limit)
        now = self.clock()
        return [self._edge(row, note, principal, at, now) for row in rows]

    def links(
        self,
        principal: Principal,
        note_id: str,
        *,
        edge_types: Iterable[str] | None = None,
        floor: str | TrustFloor | None = None,
    ) -> NoteLinks:
        """Outgoing links (unresolved forward links included), backlinks and aliases of one note."""
        principal.require(GRAPH_READ)
        types = _check_types(edge_types)
        at = floor_for(principal, floor)
        with self.store.read(principal.workspace_id) as tx:
            note = _visible_note(tx, principal, note_id)
            common = dict(types=types, statuses=_walkable(principal), limit=MAX_LIMIT + 1)
            if principal.note_ids is None:
                outgoing = tx.links.edges(note_id, direction="out", include_unresolved=True, **common)
            else:
                outgoing = _outgoing_within(principal, tx.links.edges(
                    note_id, direction="out", include_unresolved=True, include_trashed=True, **common))
            incoming = tx.links.edges(note_id, direction="in", visible=principal.note_ids, **common)
            aliases = [t.title for t in tx.links.titles(note_id) if t.retired_at is not None]
        now = self.clock()
        return NoteLinks(
            note=NoteRef.of(note), aliases=aliases,
            outgoing=[self._edge(r, note, principal, at, now) for r in outgoing[:MAX_LIMIT]],
            backlinks=[self._edge(r, note, principal, at, now) for r in incoming[:MAX_LIMIT]],
            truncated=len(outgoing) > MAX_LIMIT or len(incoming) > MAX_LIMIT,
        )

    def successor_chain(self, principal: Principal, note_id: str) -> SuccessorChain:
        """The notes that superseded this one, in order. Stops at a cycle, at a
        note the caller cannot see or that is in the trash, and after MAX_CHAIN."""
        principal.require(GRAPH_READ)
        with self.store.read(principal.workspace_id) as tx:
            note = _visible_note(tx, principal, note_id)
            chain, cycle = _follow(tx, principal, note_id)
        return SuccessorChain(NoteRef.of(note), chain, cycle)

    # ------------------------------------------------------------------ writes

    def create_link(self, principal: Principal, **fields: Any) -> Edge:
        """A typed edge, in a transaction of its own: :meth:`create_link_in`."""
        with self.store.write(principal.workspace_id) as tx:
            return self.create_link_in(tx, principal, **fields).edge

    def create_link_in(
        self,
        tx: WorkspaceTx,
        principal: Principal,
        *,
        source_note_id: str,
        type: str,
        target_note_id: str | None = None,
        target_title: str | None = None,
        source_block_id: str | None = None,
        confidence: float | None = None,
    ) -> LinkMade:
        """A typed edge from one note to another note (by id) or to a title (a
        forward link until a note has that title), inside the caller's transaction.
        A person's edge is asserted; an agent's is inferred and never walked by
        agents until a person promotes it. The same edge made again by the same
        author is returned, not duplicated (``created`` says which)."""
        principal.require(NOTES_WRITE)
        edge_type = check_edge_type(type)
        if edge_type == SUPERSEDES:
            raise ValidationFailed(
                detail="mark a note superseded through its supersede call, which also records the successor",
                field_errors=[FieldError("type", "use_supersede", "supersedes edges come from superseding a note")],
                next_call=f"POST /v1/notes/{target_note_id or '{id}'}/supersede",
            )
        if (target_note_id is None) == (target_title is None):
            raise ValidationFailed(detail="name the target by target_note_id or by target_title, one of them",
                                   field_errors=[FieldError("target_note_id", "exactly_one",
                                                            "give target_note_id or target_title")])
        if target_title is not None:
            key = _check_title(target_title)
        status, confidence = _status_for(principal, confidence)
        now = self.clock()
        source = _visible_note(tx, principal, source_note_id, for_update=True, live=True)
        if target_note_id is not None:
            target = _visible_note(tx, principal, target_note_id, live=True, field="target_note_id")
            target_title, key = target.title, BY_ID
        else:
            tx.links.lock_titles([key])
            target_note_id = tx.links.resolve([key], within=principal.note_ids).get(key)
            if target_note_id is None and principal.note_ids is not None:
                # A token's note set is fixed when it is minted, so every note that has, or will
                # take, this title lies outside it: the same refusal as naming such a note by id.
                # Answered from the set alone, it says nothing about what exists outside it.
                raise OutOfScope(
                    detail="no note in this credential's note set has that title; a link it makes must end at "
                           "one of its notes",
                    extra={"target_title": target_title},
                    next_call=WIDER_NOTE_SET,
                )
        existing = tx.links.find_api_edge(source_note_id=source.id, type=edge_type, target_note_id=target_note_id,
                                          target_key=key, created_by_id=principal.principal_id)
        if existing is not None:
            return LinkMade(self._render(tx, existing, source.id, principal, now), created=False)
        link = _new_edge(tx, principal, source.id, source_block_id, edge_type, target_note_id, target_title or "",
                         key, status, confidence, now)
        tx.links.insert([link])
        tx.feed.append("link", at=now, actor=principal.actor(), note_id=source.id, subject_id=link.id)
        return LinkMade(self._render(tx, link, source.id, principal, now), created=True)

    def promote(self, principal: Principal, link_id: str) -> Edge:
        """A signed-in person confirms an edge, in one call: an inferred edge becomes
        asserted, and an edge no person had confirmed records who did and when. (An
        edge a person's accept of a proposal made is asserted already; confirming it
        is what keeps it when that proposal is later reverted.)"""
        if not principal.is_person or principal.token_id is not None:
            raise PolicyDenied(
                detail="promoting an edge is a review: only a person signed in to the app can do it, never a token",
                extra={"reason": "signed_in_person_only"},
                next_call="open the note's links in the app and promote the edge there",
            )
        principal.require(NOTES_WRITE)
        now = self.clock()
        with self.store.write(principal.workspace_id) as tx:
            link = _visible_link(tx, principal, link_id, for_update=True)
            if link.confirmed_by is None:
                tx.links.confirm(link.id, principal.principal_id, now)
                tx.feed.append("link_promote", at=now, actor=principal.actor(), note_id=link.source_note_id,
                               subject_id=link.id)
                link = tx.links.get(link.id)
                assert link is not None
            return self._render(tx, link, link.source_note_id, principal, now)

    def delete_link(self, principal: Principal, link_id: str) -> None:
        """Remove an edge, in a transaction of its own: :meth:`delete_link_in`."""
        with self.store.write(principal.workspace_id) as tx:
            self.delete_link_in(tx, principal, link_id)

    def delete_link_in(self, tx: WorkspaceTx, principal: Principal, link_id: str) -> None:
        """Remove an edge made through the API (a supersedes edge takes the
        supersession with it), inside the caller's transaction. A person may remove
        any; an agent only its own unconfirmed ones. Links written in text go when
        the text does."""
        principal.require(NOTES_WRITE)
        now = self.clock()
        link = _visible_link(tx, principal, link_id, for_update=True)
        if link.derivation == "text":
            raise Conflict(detail="this link is written in the note's text; remove it there",
                           extra={"reason": "text_link", "note_id": link.source_note_id,
                                  "block_id": link.source_block_id},
                           next_call=f"POST /v1/notes/{link.source_note_id}/ops")
        if not principal.is_person and (link.created_by_id != principal.principal_id or link.status == ASSERTED):
            raise PolicyDenied(detail="an agent may remove only edges it made that no person confirmed",
                               extra={"reason": "not_own_inferred_edge"})
        tx.links.delete([link.id])
        tx.feed.append("link_delete", at=now, actor=principal.actor(), note_id=link.source_note_id,
                       subject_id=link.id)

    def supersede(self, principal: Principal, note_id: str, *, by: str, source_block_id: str | None = None) -> Edge:
        """Mark ``note_id`` superseded by ``by``: a ``supersedes`` edge from the
        successor plus the lookup readers follow. A person's act. Replaces an
        earlier successor; refuses a note superseding itself or a cycle."""
        if not principal.is_person:
            raise PolicyDenied(detail="marking a note superseded is something a person does",
                               extra={"reason": "person_only"}, next_call="fastpad_propose")
        principal.require(NOTES_WRITE)
        if by == note_id:
            raise ValidationFailed(detail="a note cannot supersede itself",
                                   field_errors=[FieldError("by", "self", "name a different note")])
        now = self.clock()
        with self.store.write(principal.workspace_id) as tx:
            # Both rows locked in id order: two opposite supersessions serialise instead of forming a cycle.
            ends = {}
            for nid, field in sorted([(note_id, "note_id"), (by, "by")]):
                ends[nid] = _visible_note(tx, principal, nid, for_update=True, live=True, field=field)
            old, successor = ends[note_id], ends[by]
            current = tx.links.supersession(old.id)
            if current is not None and current[0] == successor.id:
                link = tx.links.get(current[1])
                assert link is not None
                return self._render(tx, link, old.id, principal, now)
            chain, _ = _follow(tx, None, successor.id)
            if old.id in {n.id for n in chain}:
                raise Conflict(detail=f"{successor.id} is already superseded, through its chain, by {old.id}",
                               extra={"reason": "supersession_cycle", "chain": [n.id for n in chain]})
            if current is not None:
                tx.links.delete([current[1]])  # the old successor's edge; its lookup row goes with it
            link = _new_edge(tx, principal, successor.id, source_block_id, SUPERSEDES, old.id, old.title,
                             BY_ID, ASSERTED, None, now)
            tx.links.insert([link])
            tx.links.set_supersession(old.id, successor.id, link.id, now)
            tx.feed.append("supersede", at=now, actor=principal.actor(), note_id=old.id, subject_id=link.id)
            return self._render(tx, link, old.id, principal, now)

    # ------------------------------------------------------------------ rendering

    def _render(self, tx: WorkspaceTx, link: LinkRow, from_note: str, principal: Principal, now: datetime) -> Edge:
        """One edge as seen from ``from_note`` (used by the writes, which return what they made)."""
        ends = tx.links.note_ends([link.source_note_id, link.target_note_id or link.source_note_id])
        note = ends[from_note]
        other_id = link.target_note_id if from_note == link.source_note_id else link.source_note_id
        other = ends.get(other_id) if other_id and principal.can_see(other_id) else None
        row = EdgeRow(link, "out" if from_note == link.source_note_id else "in", other)
        return self._edge(row, note, principal, floor_for(principal), now)

    @staticmethod
    def _edge(row: EdgeRow, note: NoteEnd, principal: Principal, floor: TrustFloor, now: datetime) -> Edge:
        link = row.link
        here, there = NoteRef.of(note), None if row.other is None else NoteRef.of(row.other)
        source, target = (here, there) if row.direction == "out" else (there, here)
        assert source is not None
        shown = not link.evidence_text or admits(floor, link.evidence_origin, link.evidence_review_state)
        return Edge(
            id=link.id, type=link.type, direction=row.direction, source=source, target=target,
            # The link text is copied from the block, so it is held back with the rest of the evidence.
            target_title=link.target_title if shown else TITLE_BELOW_FLOOR, status=link.status,
            confidence=decayed_confidence(link.confidence, link.created_at, now), derivation=link.derivation,
            evidence=Evidence(link.source_block_id, link.evidence_text if shown else None, link.evidence_origin,
                              link.evidence_review_state, withheld=not shown),
            created_by={"kind": link.created_by_kind, "id": link.created_by_id, "token_id": link.token_id},
            created_at=link.created_at, confirmed_by=link.confirmed_by, confirmed_at=link.confirmed_at,
        )


# ---------------------------------------------------------------------- helpers


def _outgoing_within(principal: Principal, rows: list[EdgeRow]) -> list[EdgeRow]:
    """A note's outgoing links as a credential limited to a set of notes may list them, from
    rows that include far ends in the trash. A link to a note outside the set is listed as a
    link to its title with no note behind it, exactly as a link to a title no note has; one
    made by id (whose title is the far note's own) is left out. So the list reads the same
    whatever exists outside the set: writing ``[[a title]]`` and reading the links back tells
    the credential nothing about other notes. A far end in the set and in the trash is left
    out, as for every reader."""
    listed = []
    for row in rows:
        if row.other is not None and not principal.can_see(row.other.id):
            if row.link.target_key != BY_ID:
                listed.append(replace(row, other=None))
        elif row.other is None or not row.other.trashed:
            listed.append(row)
    return listed


def _walkable(principal: Principal) -> list[str]:
    return [status for status in (ASSERTED, INFERRED) if edge_walkable(principal, status)]


def _not_found(what: str, ident: str, field: str | None = None) -> NotFound:
    return NotFound(detail=f"no {what} {ident}", extra={f"{what}_id": ident} if field is None else {field: ident})


def _visible_note(tx: WorkspaceTx, principal: Principal, note_id: str, *, for_update: bool = False,
                  live: bool = False, field: str = "note_id") -> NoteEnd:
    """The note: NotFound when there is none, OutOfScope when it is outside this credential's
    note set (whether or not it exists); ``live`` refuses a note in the trash."""
    if not isinstance(note_id, str) or not is_ulid(note_id):
        raise _not_found("note", str(note_id), field)
    principal.require_note(note_id, field=field)
    row = tx.note(note_id, for_update=for_update)
    if row is None:
        raise _not_found("note", note_id, field)
    if live and row.trashed_at is not None:
        raise Conflict(detail=f"note {note_id} is in the trash; restore it first",
                       extra={"reason": "trashed", field: note_id}, next_call=f"POST /v1/notes/{note_id}/restore")
    return NoteEnd(row.id, row.title, row.archived_at is not None, row.trashed_at is not None)


def _visible_link(tx: WorkspaceTx, principal: Principal, link_id: str, *, for_update: bool = False) -> LinkRow:
    """An edge whose ends this credential can both see (unresolved: its source), that an
    agent could walk; NotFound otherwise."""
    link = tx.links.get(link_id, for_update=for_update) if isinstance(link_id, str) and is_ulid(link_id) else None
    if link is None or (not edge_walkable(principal, link.status) and principal.principal_id != link.created_by_id):
        raise _not_found("link", str(link_id))
    if not all(principal.can_see(n) for n in (link.source_note_id, link.target_note_id) if n is not None):
        raise _not_found("link", link_id)
    return link


def _follow(tx: WorkspaceTx, principal: Principal | None, note_id: str) -> tuple[list[NoteRef], bool]:
    """Successors of ``note_id`` in order, and whether the walk met a cycle.
    ``principal`` None: every note (the cycle check on write)."""
    chain: list[NoteRef] = []
    seen = {note_id}
    current = note_id
    while len(chain) < MAX_CHAIN:
        found = tx.links.supersession(current)
        if found is None:
            return chain, False
        successor = found[0]
        if successor in seen:
            return chain, True
        if principal is not None and not principal.can_see(successor):
            break
        end = tx.links.note_ends([successor]).get(successor)
        if end is None or (principal is not None and end.trashed):
            break
        chain.append(NoteRef.of(end))
        seen.add(successor)
        current = successor
    return chain, False


def _check_types(edge_types: Iterable[str] | None) -> list[str] | None:
    if edge_types is None:
        return None
    if isinstance(edge_types, str):
        edge_types = [edge_types]
    return [check_edge_type(t, field=f"edge_types[{i}]") for i, t in enumerate(edge_types)]


def _check_limit(limit: int) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ValidationFailed(detail=f"limit is between 1 and {MAX_LIMIT}",
                               field_errors=[FieldError("limit", "range", f"between 1 and {MAX_LIMIT}")])


def _check_title(title: object) -> str:
    if not isinstance(title, str) or not title_key(title) or len(title) > MAX_TITLE:
        raise ValidationFailed(detail=f"target_title is a non-blank title of at most {MAX_TITLE} characters",
                               field_errors=[FieldError("target_title", "title", f"1–{MAX_TITLE} characters")])
    return title_key(title)


def _status_for(principal: Principal, confidence: object) -> tuple[str, float | None]:
    """A person asserts; an agent infers, with a confidence in (0, 1]."""
    if principal.is_person:
        if confidence is not None:
            raise ValidationFailed(detail="a person's edge is asserted; confidence is for an agent's inferred edge",
                                   field_errors=[FieldError("confidence", "not_for_person", "leave it out")])
        return ASSERTED, None
    if confidence is None:
        return INFERRED, DEFAULT_INFERRED_CONFIDENCE
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence <= 1:
        raise ValidationFailed(detail="confidence is a number in (0, 1]",
                               field_errors=[FieldError("confidence", "range", "greater than 0, at most 1")])
    return INFERRED, float(confidence)


def _new_edge(tx: WorkspaceTx, principal: Principal, source_note_id: str, source_block_id: str | None, edge_type: str,
              target_note_id: str | None, target_title: str, key: str, status: str, confidence: float | None,
              now: datetime) -> LinkRow:
    """A new API edge, its evidence read from ``source_block_id`` (which must be a block of the source)."""
    text, origin, review = "", None, None
    if source_block_id is not None:
        block = next((b for b in tx.blocks(source_note_id) if b.block_id == source_block_id), None)
        if block is None:
            raise ValidationFailed(detail=f"block {source_block_id} is not in note {source_note_id}",
                                   field_errors=[FieldError("source_block_id", "not_in_source",
                                                            "a block of the source note")])
        at = block.text.casefold().find(target_title.casefold()) if target_title else -1
        text = evidence_window(block.text, max(at, 0), max(at, 0) + (len(target_title) if at >= 0 else 0))
        origin, review = block.origin, block.review_state
    return LinkRow(
        id=new_id(), source_note_id=source_note_id, source_block_id=source_block_id, target_note_id=target_note_id,
        target_title=target_title, target_key=key, type=edge_type, derivation="api", status=status,
        confidence=confidence, evidence_text=text, evidence_origin=origin, evidence_review_state=review,
        created_by_kind=principal.kind, created_by_id=principal.principal_id, token_id=principal.token_id,
        confirmed_by=None, confirmed_at=None, created_at=now, updated_at=now,
    )
