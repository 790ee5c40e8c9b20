"""A review service on a real store (both backends), with people, agents and a graph."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from fastpad.knowledge.graph import GraphService
from fastpad.notes import Block
from fastpad.knowledge.typed_notes import TypedNoteService
from fastpad.review.effects import EventNotes, KnowledgeEffects
from fastpad.review.service import ReviewService
from fastpad.review.turns import FetchedNote
from fastpad.security.principals import Principal
from tests.helpers_store import Services, Workspace, edit_ops, make_services

PUBLIC_URL = "https://notes.example"


@dataclass
class Agent:
    principal: Principal
    token_id: str
    session: str


@dataclass
class Env:
    svc: Services
    review: ReviewService
    graph: GraphService
    ws: Workspace

    @property
    def owner(self) -> Principal:
        return self.ws.owner

    def agent(self, scopes: str = "notes:read,notes:propose", **kwargs: Any) -> Agent:
        plaintext, info = self.svc.tokens.create(self.ws.id, scopes=scopes, **kwargs)
        principal = self.svc.tokens.authenticate(plaintext)
        return Agent(principal, info.id, self.review.open_session(principal))

    def note(self, *texts: str, title: str = "A note") -> str:
        return self.svc.notes.create(self.owner, title=title, blocks=[Block(None, "paragraph", t) for t in texts]).id

    def fetch(self, agent: Agent, note_id: str) -> FetchedNote:
        return self.review.fetch_with_handles(agent.principal, agent.session, note_id)

    def propose(self, agent: Agent, fetched: FetchedNote, ops: list[dict], *, key: str = "k1", **kwargs: Any):
        return self.review.propose(agent.principal, agent.session, fetched.note_id, ops, fetched.frontier, key,
                                   **kwargs)

    def person_edit(self, note_id: str, block_id: str, text: str) -> None:
        """A person typing into one block of the note (the editor's path: a Loro update)."""
        ops, frontier = edit_ops(self.svc.store, self.ws.id, note_id, lambda doc: doc.replace_text(block_id, text))
        self.svc.notes.apply_ops(self.owner, note_id, ops=ops, peer_id="editor", expected_frontier=frontier)

    def texts(self, note_id: str) -> list[str]:
        return [b["text"] for b in self.svc.notes.get(self.owner, note_id).blocks]

    def blocks(self, note_id: str) -> list[dict]:
        return self.svc.notes.get(self.owner, note_id).blocks


@pytest.fixture
def env(store, fast_hasher) -> Env:
    svc = make_services(store, fast_hasher)
    graph = GraphService(store, clock=svc.clock)
    calendar = EventNotes(svc.notes, TypedNoteService(store, clock=svc.clock))
    review = ReviewService(store, b"r" * 32, svc.notes, effects=KnowledgeEffects(graph=graph, calendar=calendar),
                           clock=svc.clock, public_url=PUBLIC_URL)
    return Env(svc, review, graph, svc.workspace())
