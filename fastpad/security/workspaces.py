"""Several workspaces per deployment: a signed-in person creates one (and owns it), lists those they
belong to, and moves their web session into another of them.

Every credential stays bound to one workspace (the spec: the workspace comes from the credential).
A token — a CLI token, an agent's, a delegated one, an OAuth client's — is minted in a workspace and
acts nowhere else: naming another in ``x-fastpad-workspace`` answers nothing. A web session is
stored in one workspace too, its *current* one; switching (:meth:`PeopleService.switch_session`)
opens a new session in the other workspace and ends the old one, so every page the server renders
(tokens, agent activity, device approval) follows the switch. A session may still name another of
its person's own workspaces in the header (the spec: it "names which of your workspaces to act
in"), which keeps a tab opened before a switch working where it was opened.

Creating and listing workspaces is for a signed-in person only: no token of any scope reaches it,
since a token that could list its person's other workspaces would learn of things outside its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from fastpad.errors import FieldError, ValidationFailed
from fastpad.notes.ids import new_id
from fastpad.security.audit import WORKSPACE_CREATED, record
from fastpad.security.principals import Principal
from fastpad.store import Store, utcnow

MAX_WORKSPACE_NAME = 200
OWNER = "owner"


@dataclass(frozen=True)
class WorkspaceInfo:
    id: str
    name: str
    role: str  # the person's role there
    current: bool  # the workspace the asking credential acts in

    def as_dict(self) -> dict[str, object]:
        return {"id": self.id, "name": self.name, "role": self.role, "current": self.current}


def check_workspace_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > MAX_WORKSPACE_NAME:
        raise ValidationFailed(detail=f"a workspace's name has 1 to {MAX_WORKSPACE_NAME} characters",
                               field_errors=[FieldError("name", "length", f"1 to {MAX_WORKSPACE_NAME} characters")])
    return name.strip()


class WorkspaceService:
    def __init__(self, store: Store, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.clock = clock

    def create(self, principal: Principal, name: str) -> WorkspaceInfo:
        """A new workspace owned by the signed-in person, in one transaction with their membership and
        the audit entry that says who made it (in the new workspace's own log). A viewer elsewhere
        may create one: it changes nothing of any workspace they only view."""
        principal.require_signed_in("Creating a workspace", reads_only=True)
        name = check_workspace_name(name)
        workspace_id, now = new_id(), self.clock()
        with self.store.write(workspace_id) as tx:
            tx.insert_workspace(name, now)
            tx.add_member(principal.principal_id, OWNER, now)
            record(tx, principal, WORKSPACE_CREATED, target=workspace_id, details={"name": name}, at=now)
        return WorkspaceInfo(workspace_id, name, OWNER, current=False)

    def mine(self, principal: Principal) -> list[WorkspaceInfo]:
        """The workspaces the signed-in person belongs to, oldest membership first, the one this
        session acts in marked ``current``."""
        principal.require_signed_in("Listing your workspaces", reads_only=True)
        return [WorkspaceInfo(w.id, w.name, role, w.id == principal.workspace_id)
                for w, role in self.store.memberships(principal.principal_id)]
