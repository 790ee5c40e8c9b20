"""Who is acting: the one value every service call takes first.

A ``Principal`` is built by TokenService/PeopleService from a verified
credential, never from request input. Its workspace is the credential's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fastpad.errors import InsufficientScope
from fastpad.notes.provenance import Origin
from fastpad.security.scopes import READ_SCOPES, SESSION_SCOPES, ordered

AGENT_RATE_LIMIT = 120  # requests a minute, per agent token unless set otherwise
PERSON_RATE_LIMIT = 1200  # per person, shared by their session and every CLI token they hold


@dataclass(frozen=True)
class Principal:
    workspace_id: str
    kind: str  # "person" | "agent"
    principal_id: str
    token_id: str | None  # None for a web session (or the operator)
    scopes: frozenset[str]
    note_ids: frozenset[str] | None = None  # None = the whole workspace
    auto_apply: bool = False
    origin: Origin = Origin.HUMAN_TYPED
    rate_limit_per_minute: int = PERSON_RATE_LIMIT
    rate_key: str = ""

    @property
    def is_person(self) -> bool:
        return self.kind == "person"

    @property
    def key(self) -> str:
        """Stable identity of the credential, e.g. for idempotency records."""
        return f"token:{self.token_id}" if self.token_id else f"{self.kind}:{self.principal_id}"

    def has(self, scope: str) -> bool:
        return scope in self.scopes

    def require(self, *scopes: str) -> None:
        """Raise InsufficientScope naming every missing scope at once."""
        missing = [s for s in scopes if s not in self.scopes]
        if missing:
            raise InsufficientScope(
                detail=f"this credential lacks {', '.join(missing)}",
                extra={"required": list(scopes), "missing": missing},
                next_call="ask the workspace owner for a token carrying " + ", ".join(missing),
            )

    def can_see(self, note_id: str) -> bool:
        return self.note_ids is None or note_id in self.note_ids

    def sees_nothing_in(self, workspace_id: str) -> "Principal":
        """This credential naming a workspace it does not belong to: it acts
        there with an empty note set and read scopes only, so every read
        returns nothing and every write is refused."""
        return replace(self, workspace_id=workspace_id, note_ids=frozenset(), scopes=self.scopes & READ_SCOPES,
                       auto_apply=False)

    @classmethod
    def person(cls, workspace_id: str, person_id: str, *, token_id: str | None = None,
               scopes: frozenset[str] = SESSION_SCOPES, note_ids: frozenset[str] | None = None,
               auto_apply: bool = False) -> "Principal":
        return cls(
            workspace_id=workspace_id, kind="person", principal_id=person_id, token_id=token_id,
            scopes=frozenset(scopes), note_ids=note_ids, auto_apply=auto_apply, origin=Origin.HUMAN_TYPED,
            rate_limit_per_minute=PERSON_RATE_LIMIT, rate_key=f"person:{person_id}",
        )

    def describe(self) -> dict[str, object]:
        return {
            "workspace_id": self.workspace_id, "kind": self.kind, "principal_id": self.principal_id,
            "token_id": self.token_id, "scopes": ordered(self.scopes),
            "note_ids": None if self.note_ids is None else sorted(self.note_ids), "auto_apply": self.auto_apply,
            "origin": self.origin.value, "rate_limit_per_minute": self.rate_limit_per_minute,
        }
