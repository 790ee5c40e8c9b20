"""Who is in the workspace. ``GET /v1/agents``: its agent principals — scopes, autonomy, last seen
(its people are ``/v1/members``, routes/team.py); and ``POST /v1/tokens/delegate``: an agent token narrowed from the calling credential (what ``fp mcp``
brokers for the agent behind it). Parse, call the security services, render."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response, mutate_with
from fastpad.api.schemas import IdempotencyKey
from fastpad.errors import PolicyDenied
from fastpad.security.scopes import ALL_SCOPES
from fastpad.security.agents import AgentDirectory
from fastpad.security.scopes import AGENT_DEFAULT_SCOPES

router = APIRouter(prefix="/v1", tags=["agents"])


@router.get("/agents", summary="Agent principals with their tokens' scopes, autonomy and last use (a person only)",
            responses=problems(_403="policy-denied: an agent cannot list agents; out-of-scope: a credential "
                                    "limited to a set of notes cannot either"))
def list_agents(request: Request, caller: Authenticated) -> Response:
    deployment = request.app.state.deployment
    if caller.elsewhere:
        return json_response({"items": []})
    agents = AgentDirectory(deployment.store, deployment.tokens).list(caller.principal)
    return json_response({"items": [agent.as_dict() for agent in agents]})


class DelegateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str = Field(min_length=1, max_length=200, description="who the new agent is, as Agents & tokens lists it")
    scopes: list[str] | None = Field(
        default=None, max_length=16, json_schema_extra={"items": {"enum": list(ALL_SCOPES)}},
        description="within the caller's own; default: an agent's default scopes (read, propose, search, graph) "
                    "the caller holds")
    idempotencyKey: IdempotencyKey | None = None


@router.post("/tokens/delegate", status_code=201,
             summary="A person mints an agent token narrowed from their own credential: a new agent, never a person",
             responses=problems(_403="policy-denied: an agent cannot mint, or the request goes beyond the caller's grant",
                                _422="validation-failed: an unknown scope, or none left"))
async def delegate_token(request: Request, caller: Authenticated, body: DelegateIn) -> Response:
    """The new token is an agent's: it reads at the agent floor, follows only confirmed edges and
    proposes instead of writing, whatever the caller may do. It lives no longer than the caller's
    token, within its note set, and revoking the caller's token revokes it too."""
    principal = caller.principal
    if not principal.is_person:
        raise PolicyDenied(detail="Only a person delegates to a new agent; an agent works with the token it has.",
                           extra={"reason": "person_only"})
    scopes = body.scopes if body.scopes is not None else [s for s in AGENT_DEFAULT_SCOPES if principal.has(s)]

    def mint() -> Response:
        plaintext, info = request.app.state.deployment.tokens.create(
            principal.workspace_id, scopes=scopes, label=body.label, minted_by=principal)
        return json_response({
            "token": plaintext, "id": info.id, "kind": info.kind, "agent_id": info.agent_id,
            "scopes": list(info.scopes), "note_ids": None if info.note_ids is None else list(info.note_ids),
            "expires_at": info.expires_at.isoformat(), "parent_token_id": info.parent_id,
        }, status=201, headers={"cache-control": "no-store"})

    # A retry under the key answers the token the first call minted, rather than minting a second.
    return await mutate_with(request, caller, body, mint)
