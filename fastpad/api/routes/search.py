"""``/v1/search``: hybrid search with an explanation on every hit. Parse, call
SearchService, render. ``POST`` takes a JSON body; ``GET`` the same as query
parameters. A read: no idempotency key, nothing is written."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field, StrictBool
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import FLOOR_PARAMETER, FLOOR_SCHEMA, Authenticated, FloorQuery, json_response
from fastpad.knowledge.trust import TrustFloor
from fastpad.search.fusion import STRATEGIES
from fastpad.search.service import MAX_LIMIT, MAX_QUERY_CHARS

router = APIRouter(prefix="/v1/search", tags=["search"])

_STRATEGIES = "run only these of lexical, dense, graph, recency (default: all four)"
_PROBLEMS = problems(_422="validation-failed: q missing or too long, limit out of range, unknown floor or strategy")


class SearchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    q: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="what to look for; quote a phrase to require it")
    limit: int = Field(default=10, ge=1, le=MAX_LIMIT)
    floor: str | None = Field(default=None, description=FLOOR_PARAMETER, json_schema_extra=FLOOR_SCHEMA)
    includeArchived: StrictBool = False  # 0 and 1 are not booleans, as the document says
    strategies: list[str] | None = Field(default=None, max_length=4, description=_STRATEGIES,
                                         json_schema_extra={"items": {"enum": list(STRATEGIES)}, "minItems": 1})


class ContributionOut(BaseModel):
    strategy: str
    rank: int = Field(description="the note's position in that strategy's own list (1 = first)")
    score: float = Field(description="that strategy's raw score (bm25, ts_rank_cd, cosine, graph or recency weight)")
    weight: float
    rrf: float = Field(description="weight / (60 + rank): this strategy's share of the hit's score")


class PenaltyOut(BaseModel):
    reason: str
    factor: float


class ExplanationOut(BaseModel):
    query_kind: str
    contributions: list[ContributionOut]
    matched_terms: list[str]
    graph_path: list[str] = Field(description="seed note, edge (type:direction), note reached; empty if not by graph")
    penalties: list[PenaltyOut]
    superseded_by: str | None
    title_match: bool = Field(description="the query is this note's title or an alias, so it ranks first")
    holds_query: str | None = Field(description="in_order: its title or matched text holds the words as typed; "
                                                "every_word: each of them; it ranks above every hit that holds less")


class SearchHitOut(BaseModel):
    rank: int
    note_id: str
    title: str
    types: list[str]
    path: list[str] = Field(description="the heading path of the first anchor")
    score: float = Field(description="fused reciprocal-rank score: orders the hits; never compare it to a threshold")
    anchors: list[str] = Field(description="block ids the hit points at, best first")
    snippet: str = Field(description="a short window of the anchored text, never the whole note")
    archived: bool
    updated_at: str
    superseded_by: str | None = Field(description="the note that replaced this one; follow it")
    explanation: ExplanationOut


class HiddenOut(BaseModel):
    reason: str = Field(description="trust_floor, archived or scope")
    count: int | None = Field(description="how many notes matched that this reason alone kept out (never which); "
                                        "null for scope: notes outside a note set are never counted; with unit "
                                        "titles, how many hits' titles the floor stood in for")
    unit: str
    because: str
    show_with: dict[str, Any] | None = Field(
        description="the parameter that shows them (floor, include_archived; POST: includeArchived); "
                    "null when none can (a note set is widened only by a new token)")
    at_least: bool = Field(default=False, description="the count stopped at a limit")


class SearchOut(BaseModel):
    query: str
    query_kind: str = Field(description="phrase, sentence, name or keywords: how the strategies were weighted")
    floor: str
    weights: dict[str, float]
    hits: list[SearchHitOut]
    unavailable: dict[str, str] = Field(description="strategies that did not take part, and why (e.g. dense off)")
    hidden: list[HiddenOut] = Field(description="on a page shorter than the limit: matches the caller's trust floor, "
                                                "archived state or note set kept out, counted per reason")
    timings_ms: dict[str, float]


def _search(request: Request, caller: Any, q: str, **options: Any) -> Response:
    # A credential naming a workspace it is not in acts there with an empty note set: no hits.
    results = request.app.state.deployment.search.search(caller.principal, q, **options)
    request.state.floor = TrustFloor(results.floor)  # the hits' titles leave at the floor they were found at
    return json_response(results.as_dict())


@router.post("", response_model=SearchOut, summary="Search notes: four strategies fused by rank, each hit explained",
             responses=_PROBLEMS)
def search_post(request: Request, caller: Authenticated, body: SearchIn) -> Response:
    return _search(request, caller, body.q, limit=body.limit, floor=body.floor,
                   include_archived=body.includeArchived, strategies=body.strategies)


@router.get("", response_model=SearchOut, summary="Search notes (the POST body as query parameters)",
            responses=_PROBLEMS)
def search_get(
    request: Request,
    caller: Authenticated,
    q: Annotated[str, Query(min_length=1, max_length=MAX_QUERY_CHARS)],
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 10,
    floor: FloorQuery = None,
    include_archived: bool = False,
    strategies: Annotated[str | None, Query(description=_STRATEGIES + ", comma-separated")] = None,
) -> Response:
    return _search(request, caller, q, limit=limit, floor=floor, include_archived=include_archived,
                   strategies=strategies)
