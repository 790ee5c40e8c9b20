"""The knowledge-model services of issue 4 (types, typed notes, query, collections), for service tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastpad.knowledge.query import KnowledgeQueryService, QueryPage
from fastpad.knowledge.saved_views import CollectionService
from fastpad.knowledge.typed_notes import TypedNoteService
from fastpad.knowledge.types import TypeService
from fastpad.security.principals import Principal
from tests.helpers_store import Services


@dataclass
class Typed:
    types: TypeService
    notes: TypedNoteService
    queries: KnowledgeQueryService
    collections: CollectionService

    @classmethod
    def over(cls, svc: Services) -> "Typed":
        queries = KnowledgeQueryService(svc.store)
        return cls(TypeService(svc.store, clock=svc.clock), TypedNoteService(svc.store, clock=svc.clock), queries,
                   CollectionService(svc.store, queries, clock=svc.clock))

    def all_pages(self, principal: Principal, query: dict[str, Any], limit: int = 50) -> list[QueryPage]:
        """Every page of ``query``, following next_cursor."""
        pages = [self.queries.query(principal, {**query, "limit": limit})]
        while pages[-1].next_cursor:
            pages.append(self.queries.query(principal, {**query, "limit": limit, "cursor": pages[-1].next_cursor}))
        return pages

    def titles(self, principal: Principal, query: dict[str, Any], limit: int = 50) -> list[str]:
        return [row.title for page in self.all_pages(principal, query, limit) for row in page.items]


def agent(svc: Services, workspace_id: str, *scopes: str, **kwargs: Any) -> Principal:
    return svc.tokens.authenticate(svc.tokens.create(workspace_id, scopes=list(scopes), **kwargs)[0])
