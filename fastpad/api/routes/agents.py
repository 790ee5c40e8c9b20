"""``GET /v1/agents``: the workspace's agent principals — scopes, autonomy, last seen. Parse, call AgentDirectory, render."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response
from fastpad.security.agents import AgentDirectory

router = APIRouter(prefix="/v1", tags=["agents"])


@router.get("/agents", summary="Agent principals with their tokens' scopes, autonomy and last use (a person only)",
            responses=problems(_403="policy-denied: an agent cannot list agents"))
def list_agents(request: Request, caller: Authenticated) -> Response:
    deployment = request.app.state.deployment
    if caller.elsewhere:
        return json_response({"items": []})
    agents = AgentDirectory(deployment.store, deployment.tokens).list(caller.principal)
    return json_response({"items": [agent.as_dict() for agent in agents]})
