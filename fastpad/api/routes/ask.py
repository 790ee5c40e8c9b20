"""``POST /v1/ask``: a question answered by the deployment's model provider, citing blocks you can fetch.

Parse, count, call ``AskService``, render. The question is counted against the
person's 20 questions a minute (shared by their session and every CLI token they
hold; an agent token has its own 20) before anything else happens. The service
retrieves as the caller, masks and fences what it sends through the caller's
outbound policy, and keeps only citations of blocks it sent. Without a provider
in ``fastpad.json`` (``ask``) the answer is the typed 503
``provider-not-configured`` that points at search instead.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response, mutate_with
from fastpad.api.schemas import IdempotencyKey
from fastpad.search.ask import MAX_QUESTION_CHARS
from fastpad.security.scopes import NOTES_READ, SEARCH_READ

router = APIRouter(prefix="/v1", tags=["ask"])

QUESTIONS_PER_MINUTE = 20  # spec › API › Authenticating: per person, across their session and CLI tokens


class AskIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    idempotencyKey: IdempotencyKey | None = None


class CitationOut(BaseModel):
    n: int = Field(description="the [n] marking it in the answer")
    block_id: str
    note_id: str
    title: str
    ref: str = Field(description="GET it with the same credential: the block as it stands, with its author")
    anchor: str = Field(description="NOTE_ID#BLOCK_ID: the block's {#BLOCK_ID} anchor in the note's Markdown")


class RetrievedOut(BaseModel):
    notes: int
    blocks: int = Field(description="blocks sent to the model: the only ones it may cite")
    floor: str = Field(description="the trust floor retrieval ran at (the caller's default)")


class UsageOut(BaseModel):
    total_tokens: int = Field(description="what the answer cost, charged to the token's --ask-cap")
    reported_by_provider: bool = Field(description="false: the provider reported no usage, so it was counted here")
    reserved_tokens: int = Field(description="the most the question could cost (prompt + the longest answer "
                                             "allowed), held against the cap until the answer's cost replaced it")


class AnswerOut(BaseModel):
    question: str
    answer: str = Field(description="the model's answer; [n] cites citations[n-1]")
    citations: list[CitationOut]
    dropped_citations: int = Field(description="ids the model cited that were not retrieved for this question: "
                                               "removed, and the answer says so")
    retrieved: RetrievedOut
    model: str | None = Field(description="null when nothing matched and no model was asked")
    usage: UsageOut


@router.post(
    "/ask",
    response_model=AnswerOut,
    summary="Ask a question; the answer cites the retrieved blocks it rests on, each a reference you can fetch",
    responses=problems(_403="ask-cap-reached: this token's spending cap cannot hold what the question may cost "
                            "(or insufficient-scope)",
                       _422="validation-failed: the question is missing or too long",
                       _429="rate-limited: 20 questions a minute per person",
                       _502="provider-unavailable (retryable): the model provider is down, timed out, failed or "
                            "answered no completion; provider-refused: it refused the deployment's request",
                       _503="provider-not-configured: this deployment has no model provider"),
)
async def ask(request: Request, caller: Authenticated, body: AskIn) -> Response:
    principal = caller.principal
    principal.require(SEARCH_READ, NOTES_READ)
    state = request.app.state
    state.rate_limiter.hit(f"ask:{principal.rate_key}", QUESTIONS_PER_MINUTE, what="questions")

    def answer() -> Response:
        answered = state.deployment.ask.ask(principal, body.question, state.outbound_env.policy(principal))
        return json_response(answered.as_dict())

    # A paid call: a retry under the key gets the answer already paid for, not a second charge.
    return await mutate_with(request, caller, body, answer)
