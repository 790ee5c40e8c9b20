"""``POST /v1/ask``: a question answered with block citations — once a model provider is configured.

This deployment has no answer provider yet (the integration is its own piece of
work), so after authenticating, checking the question and counting it against
the person's 20 questions a minute, the route refuses with a typed 503
``provider-not-configured`` that points at search instead. Nothing about the
request is wrong, so a client may show the refusal as it is.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated
from fastpad.errors import ProviderNotConfigured
from fastpad.security.scopes import NOTES_READ, SEARCH_READ

router = APIRouter(prefix="/v1", tags=["ask"])

QUESTIONS_PER_MINUTE = 20  # spec › API › Authenticating: per person, across their session and CLI tokens


class AskIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=2000)


@router.post(
    "/ask",
    summary="Ask a question; the answer cites blocks you can fetch (503 until a model provider is configured)",
    responses=problems(_429="rate-limited: 20 questions a minute per person",
                       _503="provider-not-configured: this deployment has no model provider"),
)
def ask(request: Request, caller: Authenticated, body: AskIn) -> Response:
    principal = caller.principal
    principal.require(SEARCH_READ, NOTES_READ)
    state = request.app.state
    state.rate_limiter.hit(f"ask:{principal.rate_key}", QUESTIONS_PER_MINUTE, what="questions")
    raise ProviderNotConfigured(
        detail="This deployment has no model provider to answer questions with, so nothing was asked.",
        next_call="POST /v1/search (fp query TEXT) finds the blocks that mention it",
    )
