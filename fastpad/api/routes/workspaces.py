"""Several workspaces: the signed-in person's list and a new one of their own
(``fastpad/security/workspaces.py``); moving the session into another is ``POST /v1/session/workspace``
(``routes/session.py``). No token of any scope reaches these: a token acts in its one workspace."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import Field
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response, mutate_with
from fastpad.api.schemas import IdempotencyKey, _Strict
from fastpad.security.workspaces import MAX_WORKSPACE_NAME

router = APIRouter(prefix="/v1/workspaces", tags=["workspaces"])
_PERSON_ONLY = "policy-denied: only a signed-in person; no token of any scope reaches it"


class WorkspaceIn(_Strict):
    name: str = Field(min_length=1, max_length=MAX_WORKSPACE_NAME, pattern=r"^[^\x00]*[^\x00\s][^\x00]*$")
    idempotencyKey: IdempotencyKey | None = None


@router.get("", summary="The workspaces you belong to, with your role in each; `current` is the one you act in",
            responses=problems(_403=_PERSON_ONLY))
def list_workspaces(request: Request, caller: Authenticated) -> Response:
    workspaces = request.app.state.deployment.workspaces.mine(caller.principal)
    return json_response({"items": [w.as_dict() for w in workspaces]})


@router.post("", status_code=201, summary="Create a workspace of your own (you are its owner); switch into it "
                                          "with POST /v1/session/workspace",
             responses=problems(_403=_PERSON_ONLY, _422="validation-failed: a name of 1 to 200 characters"))
async def create_workspace(request: Request, caller: Authenticated, body: WorkspaceIn) -> Response:
    def execute() -> Response:
        created = request.app.state.deployment.workspaces.create(caller.principal, body.name)
        return json_response(created.as_dict(), 201)
    return await mutate_with(request, caller, body, execute)
