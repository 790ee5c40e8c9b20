"""Helpers shared by the store and service tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import psycopg
from argon2 import PasswordHasher

from fastpad.knowledge.notes import NoteService
from fastpad.notes.ids import new_id
from fastpad.security.people import PeopleService
from fastpad.security.principals import Principal
from fastpad.security.tokens import TokenService
from fastpad.search.query import lexical_match
from fastpad.store import Store, WorkspaceTx
from fastpad.store.feed import FeedRow
from fastpad.store.search_index import BlockHit, SearchFilter


@dataclass
class Clock:
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> None:
        self.now += timedelta(**kwargs)


@dataclass
class Workspace:
    id: str
    owner_id: str
    owner_email: str
    owner: Principal  # the owner acting with a person's full grant


@dataclass
class Services:
    store: Store
    clock: Clock
    notes: NoteService
    tokens: TokenService
    people: PeopleService

    def workspace(self, name: str = "ws", *, email: str | None = None, password: str = "correct horse") -> Workspace:
        workspace_id = new_id()
        with self.store.write(workspace_id) as tx:
            tx.insert_workspace(name, self.clock())
        email = email or f"owner-{workspace_id.lower()}@example.com"
        person = self.people.create_person(workspace_id, email, password=password, role="owner")
        return Workspace(workspace_id, person.id, person.email, self.people.principal_for(workspace_id, person.id))


def make_services(store: Store, hasher: PasswordHasher) -> Services:
    from fastpad.review.service import ReviewService

    clock = Clock()
    notes = NoteService(store, clock=clock)
    # As the deployment wires it: an agent's new note is a turn (a proposal, or landed under auto-apply).
    notes.agent_creations = ReviewService(store, REVIEW_SECRET, notes, clock=clock).create_note
    return Services(
        store=store,
        clock=clock,
        notes=notes,
        tokens=TokenService(store, clock=clock),
        people=PeopleService(store, b"s" * 32, hasher=hasher, clock=clock),
    )


REVIEW_SECRET = b"r" * 32


def client_copy(store: Store, workspace_id: str, note_id: str):
    """A client's copy of a note (as the editor would hold it) and the frontier it read."""
    from fastpad.notes import NoteDocument

    with store.read(workspace_id) as tx:
        row = tx.note(note_id, with_snapshot=True)
    assert row is not None
    return NoteDocument.load(row.snapshot), row.frontier


def edit_ops(store: Store, workspace_id: str, note_id: str, change) -> tuple[bytes, str]:
    """Ops for ``change(doc)`` made on a client copy: (update bytes, frontier they build on)."""
    doc, frontier = client_copy(store, workspace_id, note_id)
    change(doc)
    return doc.export_updates(frontier), frontier


def agent_propose(svc: Services, principal: Principal, note_id: str, ops: list[dict], *, key: str = "k1",
                  review=None):
    """An agent's change the way the spec allows it: a proposal through the review service
    (``open_session`` → ``fetch_with_handles`` → ``propose``). An op may name ``"block": block_id``
    instead of a handle; it is swapped for that block's handle. With an auto-apply token the
    turn lands at once (unreviewed) and is listed on Agent activity. Returns the turn."""
    from fastpad.review.service import ReviewService

    review = review or ReviewService(svc.store, REVIEW_SECRET, svc.notes, clock=svc.clock)
    session = review.open_session(principal)
    fetched = review.fetch_with_handles(principal, session, note_id)
    handles = {b.id: b.handle for b in fetched.blocks}
    resolved = [{("handle" if k == "block" else k): (handles[v] if k == "block" else v) for k, v in op.items()}
                for op in ops]
    return review.propose(principal, session, note_id, resolved, fetched.frontier, key)


def lexical(tx: WorkspaceTx, text: str, *, include_archived: bool = False, limit: int = 20) -> list[BlockHit]:
    """Blocks matching ``text`` best first, read as the lexical search strategy reads them."""
    match = lexical_match(text, tx.search_index.backend)
    return tx.search_index.lexical_blocks(match, SearchFilter(include_archived=include_archived), limit=limit)


def feed_rows(tx: WorkspaceTx) -> list[FeedRow]:
    """The workspace's whole change feed, in order."""
    return tx.feed.read(after_seq=0, upto_seq=tx.feed.head(), limit=100_000)


def undo_migration(store: Store, workspace_id: str, version: int, statements: list[str]) -> None:
    """Take ``store`` back to before migration ``version`` (``statements`` undo what it added) and
    close it: reopening the store then runs that migration over a database the earlier version
    left, with whatever today's write path wrote behind it."""
    statements = [*statements, f"DELETE FROM schema_migrations WHERE version = {version}"]
    owner_url = getattr(store, "owner_url", None)  # PostgreSQL: only the owner alters tables
    if owner_url is not None:
        with psycopg.connect(owner_url, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)
    else:
        with store.write(workspace_id) as tx:
            for statement in statements:
                tx._x(statement)  # noqa: SLF001 - a test reaching under the store on purpose
    store.close()
