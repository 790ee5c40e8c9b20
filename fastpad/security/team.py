"""A workspace's members as its owners and admins manage them: who is in it (role, last
activity), changing a role, removing a person.

Only a signed-in person does any of this (no token scope reaches it), and only an owner or an
admin; every refusal names the role it needed. An admin manages members, admins and viewers;
only an owner makes, unmakes or removes an owner, and the last owner stays.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from fastpad.errors import Conflict, NotFound, PolicyDenied
from fastpad.security.audit import MEMBER_ROLE_CHANGED, record
from fastpad.security.people import MANAGERS, PeopleService, RemovedMember, check_role
from fastpad.security.principals import Principal
from fastpad.store import Store

OWNER = "owner"


@dataclass(frozen=True)
class Member:
    id: str
    email: str
    display_name: str
    role: str
    last_active_at: datetime | None

    def as_dict(self) -> dict[str, object]:
        return {"id": self.id, "email": self.email, "display_name": self.display_name or self.email,
                "role": self.role,
                "last_active_at": self.last_active_at.isoformat() if self.last_active_at else None}


class TeamService:
    def __init__(self, store: Store, people: PeopleService) -> None:
        self.store = store
        self.people = people

    def members(self, principal: Principal) -> list[Member]:
        """The workspace's people, for any person in it (a person property offers them); never
        for an agent, which has no use for the workspace's email addresses."""
        if not principal.is_person:
            raise PolicyDenied(detail="only a person lists the workspace's members", extra={"reason": "person_only"})
        with self.store.read(principal.workspace_id) as tx:
            people = tx.members()
            active = tx.team.last_activity()
        return [Member(p.id, p.email, p.display_name, role, active.get(p.id)) for p, role in people]

    def set_role(self, principal: Principal, person_id: str, role: str) -> Member:
        principal.require_role(MANAGERS, "Changing a member's role")
        check_role(role)
        with self.store.write(principal.workspace_id) as tx:
            current = tx.member(person_id)
            if current is None:
                raise NotFound(detail=f"person {person_id} is not a member")
            if OWNER in (role, current.role):
                principal.require_role((OWNER,), "Making or unmaking an owner")
                if current.role == OWNER and role != OWNER and tx.team.count_role(OWNER) == 1:
                    raise Conflict(detail="the workspace's last owner stays an owner; make someone else owner first",
                                   extra={"reason": "last_owner"})
            tx.team.set_role(person_id, role)
            record(tx, principal, MEMBER_ROLE_CHANGED, target=person_id,
                   details={"old_role": current.role, "new_role": role})
        return next(m for m in self.members(principal) if m.id == person_id)

    def remove(self, principal: Principal, person_id: str) -> RemovedMember:
        """Remove a member: their sessions end and every token answering to them is revoked at once
        (:meth:`PeopleService.remove_member`); their notes and history stay, attributed to them."""
        principal.require_role(MANAGERS, "Removing a member")
        with self.store.read(principal.workspace_id) as tx:
            current = tx.member(person_id)
            owners = tx.team.count_role(OWNER)
        if current is None:
            raise NotFound(detail=f"person {person_id} is not a member")
        if current.role == OWNER:
            principal.require_role((OWNER,), "Removing an owner")
            if owners == 1:
                raise Conflict(detail="the workspace's last owner cannot be removed", extra={"reason": "last_owner"})
        return self.people.remove_member(principal.workspace_id, person_id, removed_by=principal)
