"""Who is acting: the one value every service call takes first.

A ``Principal`` is built by TokenService/PeopleService from a verified
credential, never from request input. Its workspace is the credential's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fastpad.errors import FieldError, InsufficientScope, NotFound, OutOfScope, PolicyDenied
from fastpad.notes.provenance import Origin
from fastpad.security.scopes import READ_SCOPES, SESSION_SCOPES, VIEWER_SCOPES, ordered
from fastpad.store.records import Actor

AGENT_RATE_LIMIT = 120  # requests a minute, per agent token unless set otherwise
PERSON_RATE_LIMIT = 1200  # per person, shared by their session and every CLI token they hold
# A viewer reads (and comments) and never writes; writing needs at least a member.
VIEWER = "viewer"
WRITER_ROLE = "member"
# What an out-of-scope refusal of a note tells the caller to do (the spec's remedy for out-of-scope).
WIDER_NOTE_SET = "ask a person for a new token whose note set includes this note; tagging cannot widen it"


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
    elsewhere: bool = False  # acting in a workspace it is not a member of: see sees_nothing_in
    # The workspace role of the person this credential answers to: the person's own, or for an agent
    # token the role of the person who minted it (None: the operator, or a token no person minted).
    role: str | None = None

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
        if self.role == VIEWER and any(s not in VIEWER_SCOPES for s in missing):
            self.require_writer(f"This needs {', '.join(missing)}, which")
        if missing:
            raise InsufficientScope(
                detail=f"this credential lacks {', '.join(missing)}",
                extra={"required": list(scopes), "missing": missing},
                next_call="ask the workspace owner for a token carrying " + ", ".join(missing),
            )

    def can_see(self, note_id: str) -> bool:
        return self.note_ids is None or note_id in self.note_ids

    def require_note(self, note_id: str, *, field: str = "note_id") -> None:
        """Raise OutOfScope when a note the caller names is outside this credential's note set.

        Decided from the set alone, before anything is looked up, so the answer is the same
        whether or not such a note exists: it tells the caller only what its own note set
        (``fastpad_capabilities``) already does. A note reached through a lookup instead — a
        title, a link, a turn — that lies outside the set is answered as if it did not exist,
        since there a refusal would say that it does. In a workspace the credential is not a
        member of (:meth:`sees_nothing_in`) every note is not-found."""
        if self.elsewhere:
            raise NotFound(detail=f"no note {note_id} in the named workspace", extra={field: note_id})
        if not self.can_see(note_id):
            raise OutOfScope(
                detail=f"note {note_id} is outside this credential's note set",
                extra={field: note_id},
                next_call=WIDER_NOTE_SET,
            )

    def note_outside_set(self, note_id: str, field: str) -> FieldError | None:
        """For a note named in one field of a larger request: the field error that says it is
        outside the note set (decided as :meth:`require_note` decides), or None."""
        if self.can_see(note_id):
            return None
        return FieldError(field, "out_of_scope", "not a note in this credential's note set")

    @property
    def is_signed_in_person(self) -> bool:
        """A person acting in their own right: a web session (or the operator), never a token —
        a person's CLI token included."""
        return self.is_person and self.token_id is None

    def require_signed_in(self, what: str, *, reads_only: bool = False) -> None:
        """PolicyDenied unless a signed-in person acts: for what the spec keeps from every token
        (reverting, reviewing, publishing, verifying). It changes something unless ``reads_only``,
        so a viewer is refused it too."""
        if not self.is_signed_in_person:
            raise PolicyDenied(
                detail=f"{what} is for a signed-in person; no token of any scope can do it.",
                extra={"reason": "person_only"},
                next_call="sign in to the web app and do it there",
            )
        if not reads_only:
            self.require_writer(what)

    def require_writer(self, what: str) -> None:
        """PolicyDenied naming the role needed when a viewer's credential would change something."""
        if self.role == VIEWER:
            raise PolicyDenied(
                detail=f"{what} needs the {WRITER_ROLE} role; a viewer reads and comments but never writes.",
                extra={"reason": "role", "role": VIEWER, "required_role": WRITER_ROLE},
                next_call="ask an owner or admin of this workspace to make you a member",
            )

    def require_role(self, allowed: tuple[str, ...], what: str) -> None:
        """PolicyDenied naming the roles allowed, unless a signed-in person holding one of them acts
        (managing the workspace's people: no token of any scope reaches it)."""
        self.require_signed_in(what, reads_only=True)
        if self.role is not None and self.role not in allowed:
            raise PolicyDenied(
                detail=f"{what} needs the {' or '.join(allowed)} role; you are {self.role}.",
                extra={"reason": "role", "role": self.role, "required_role": list(allowed)},
                next_call="ask an owner or admin of this workspace",
            )

    def require_whole_workspace(self, detail: str) -> None:
        """Raise OutOfScope for a credential limited to a set of notes, on an action whose reach
        is the whole workspace (creating notes, imports, collections, the token directory)."""
        if self.note_ids is not None:
            raise OutOfScope(detail=detail, next_call="ask a person for a token that reaches the whole workspace")

    def actor(self) -> Actor:
        """Who this principal is as a write records it."""
        return Actor(self.kind, self.principal_id, self.token_id, self.origin.value, self.note_ids)

    def sees_nothing_in(self, workspace_id: str) -> "Principal":
        """This credential naming a workspace it does not belong to: it acts
        there with an empty note set and read scopes only, so every read
        returns nothing and every write is refused. A note it names there is
        not-found, never out-of-scope: the workspace is not one it has a
        note set in (spec: naming such a workspace "returns nothing")."""
        return replace(self, workspace_id=workspace_id, note_ids=frozenset(), scopes=self.scopes & READ_SCOPES,
                       auto_apply=False, elsewhere=True)

    @classmethod
    def person(cls, workspace_id: str, person_id: str, *, token_id: str | None = None,
               scopes: frozenset[str] = SESSION_SCOPES, note_ids: frozenset[str] | None = None,
               auto_apply: bool = False, role: str | None = None) -> "Principal":
        if role == VIEWER:
            scopes = frozenset(scopes) & VIEWER_SCOPES
        return cls(
            workspace_id=workspace_id, kind="person", principal_id=person_id, token_id=token_id,
            scopes=frozenset(scopes), note_ids=note_ids, auto_apply=auto_apply, origin=Origin.HUMAN_TYPED,
            rate_limit_per_minute=PERSON_RATE_LIMIT, rate_key=f"person:{person_id}", role=role,
        )

    def describe(self) -> dict[str, object]:
        return {
            "workspace_id": self.workspace_id, "kind": self.kind, "principal_id": self.principal_id,
            "token_id": self.token_id, "scopes": ordered(self.scopes),
            "note_ids": None if self.note_ids is None else sorted(self.note_ids), "auto_apply": self.auto_apply,
            "origin": self.origin.value, "rate_limit_per_minute": self.rate_limit_per_minute, "role": self.role,
        }
