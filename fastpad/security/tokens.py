"""Bearer tokens: ``fpk_live_…``, shown once, stored only as a hash, always expiring.

A token is 32 random bytes (base62), so a plain SHA-256 of the whole string is
a safe verifier: there is nothing to brute-force. Only the hash and a short
display prefix reach the database.

Rules (spec: Security › Credentials, Agents › What a token can reach):
- every token expires, at most a year out;
- a token's note set is a concrete list of note ids fixed at creation;
- a delegated token only narrows its parent (scopes, note set, expiry,
  auto-apply, rate limit), and revoking a token revokes its descendants;
- ``turns:accept`` is never implied and only a person can mint a token carrying it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fastpad.errors import AskCapReached, FieldError, NotFound, PolicyDenied, Unauthenticated, ValidationFailed
from fastpad.notes.ids import is_ulid, new_id
from fastpad.notes.provenance import Origin
from fastpad.security.audit import TOKEN_MINT, TOKEN_REVOKE, record
from fastpad.security.principals import AGENT_RATE_LIMIT, PERSON_RATE_LIMIT, VIEWER, Principal
from fastpad.security.scopes import TURNS_ACCEPT, VIEWER_SCOPES, ordered, parse_scopes
from fastpad.store import AgentRow, Store, TokenRow, WorkspaceTx, utcnow

TOKEN_PREFIX = "fpk_live_"
DEFAULT_EXPIRY = timedelta(days=30)
MAX_EXPIRY = timedelta(days=365)
MAX_NOTE_IDS = 10_000
MAX_LABEL = 200
MAX_ASK_CAP = 10**12  # provider tokens; far past any real budget, within a 64-bit column
LAST_USED_GRANULARITY = timedelta(seconds=60)  # at most one last_used_at write a minute per token
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SECRET_CHARS = 43  # 32 bytes in base62
_TOKEN_RE = re.compile(rf"^{TOKEN_PREFIX}[0-9A-Za-z]{{{_SECRET_CHARS}}}$")
_DISPLAY_CHARS = 6


def hash_secret(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode("utf-8")).hexdigest()


def new_secret() -> tuple[str, str, str]:
    """A fresh token: (plaintext, its hash, its display prefix)."""
    plaintext = TOKEN_PREFIX + _random_secret()
    return plaintext, hash_secret(plaintext), plaintext[: len(TOKEN_PREFIX) + _DISPLAY_CHARS]


def _random_secret() -> str:
    n = int.from_bytes(secrets.token_bytes(32), "big")
    chars = []
    for _ in range(_SECRET_CHARS):
        n, r = divmod(n, 62)
        chars.append(_ALPHABET[r])
    return "".join(chars)


def parse_duration(text: str) -> timedelta:
    """``90s``, ``15m``, ``12h``, ``7d``, ``2w`` → timedelta (for CLI flags)."""
    match = re.fullmatch(r"\s*(\d+)\s*([smhdw])\s*", text or "")
    if not match:
        raise ValidationFailed(
            detail=f"{text!r} is not a duration",
            field_errors=[FieldError("expires", "duration", "write a number and a unit: 90s, 15m, 12h, 7d, 2w")],
        )
    unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[match.group(2)]
    return timedelta(**{unit: int(match.group(1))})


@dataclass(frozen=True)
class TokenInfo:
    """What may be shown about a token: everything but the secret."""

    id: str
    label: str
    prefix: str
    kind: str  # "agent" | "person"
    scopes: tuple[str, ...]
    note_ids: tuple[str, ...] | None
    auto_apply: bool
    rate_limit_per_minute: int
    expires_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    parent_id: str | None
    agent_id: str | None
    person_id: str | None
    created_at: datetime
    ask_cap: int | None = None  # provider tokens its questions may spend (None: no cap)
    ask_spent: int = 0

    @classmethod
    def from_row(cls, row: TokenRow) -> "TokenInfo":
        return cls(
            id=row.id, label=row.label, prefix=row.prefix, kind=row.kind, scopes=tuple(ordered(row.scopes)),
            note_ids=row.note_ids, auto_apply=row.auto_apply, rate_limit_per_minute=row.rate_limit_per_minute,
            expires_at=row.expires_at, last_used_at=row.last_used_at, revoked_at=row.revoked_at,
            parent_id=row.parent_id, agent_id=row.agent_id, person_id=row.person_id, created_at=row.created_at,
            ask_cap=row.ask_cap, ask_spent=row.ask_spent,
        )

    def is_live(self, now: datetime | None = None) -> bool:
        return self.revoked_at is None and self.expires_at > (now or utcnow())

    def as_dict(self) -> dict[str, Any]:
        iso = lambda t: None if t is None else t.isoformat()  # noqa: E731
        return {
            "id": self.id, "label": self.label, "prefix": self.prefix, "kind": self.kind,
            "scopes": list(self.scopes), "note_ids": None if self.note_ids is None else list(self.note_ids),
            "auto_apply": self.auto_apply, "rate_limit_per_minute": self.rate_limit_per_minute,
            "expires_at": iso(self.expires_at), "last_used_at": iso(self.last_used_at),
            "revoked_at": iso(self.revoked_at), "parent_id": self.parent_id, "agent_id": self.agent_id,
            "person_id": self.person_id, "created_at": iso(self.created_at),
            "ask_cap": self.ask_cap, "ask_spent": self.ask_spent,
        }


class TokenService:
    def __init__(self, store: Store, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.clock = clock

    # ------------------------------------------------------------------ create

    def create(
        self,
        workspace_id: str,
        *,
        scopes: Iterable[str] | str,
        note_ids: Iterable[str] | None = None,
        expires_in: timedelta | None = None,
        auto_apply: bool = False,
        person_email: str | None = None,
        parent_token_id: str | None = None,
        label: str = "",
        rate_limit_per_minute: int | None = None,
        agent_id: str | None = None,
        minted_by: Principal | None = None,
        within: WorkspaceTx | None = None,
        ask_cap: int | None = None,
    ) -> tuple[str, TokenInfo]:
        """Mint a token; returns (plaintext, info). The plaintext exists only in this return value.

        An agent token by default (a new agent principal, or ``agent_id``'s);
        with ``person_email`` a CLI credential held by that member, whose
        writes are ``human_typed``. ``minted_by`` is the authenticated caller
        (None = the operator, who counts as the workspace owner). A caller
        holding a token can only delegate from it: ``parent_token_id``
        defaults to the caller's own token. ``within`` is a write transaction of
        ``workspace_id`` to mint in, so the token commits with what it is for.
        ``ask_cap``: the most provider tokens (the provider's ``usage.total_tokens``)
        this token's questions may spend, charged to it and to every token it was
        delegated from (None: no cap of its own).
        """
        now = self.clock()
        wanted = parse_scopes(scopes)
        label = _check_label(label)
        wanted_notes = _check_note_ids(note_ids)
        if expires_in is not None:
            _check_expiry(expires_in)
        if rate_limit_per_minute is not None and (
            not isinstance(rate_limit_per_minute, int) or not 1 <= rate_limit_per_minute <= 100_000
        ):
            raise ValidationFailed(
                detail="rate_limit_per_minute must be between 1 and 100000",
                field_errors=[FieldError("rate_limit_per_minute", "range", "between 1 and 100000")],
            )
        if ask_cap is not None and (isinstance(ask_cap, bool) or not isinstance(ask_cap, int)
                                    or not 1 <= ask_cap <= MAX_ASK_CAP):
            raise ValidationFailed(
                detail=f"ask_cap is a number of provider tokens between 1 and {MAX_ASK_CAP}",
                field_errors=[FieldError("ask_cap", "range", f"between 1 and {MAX_ASK_CAP}")],
            )
        if minted_by is not None:
            if minted_by.workspace_id != workspace_id:
                raise PolicyDenied(detail="a credential can only mint tokens in its own workspace")
            if minted_by.token_id is not None and parent_token_id is None:
                parent_token_id = minted_by.token_id

        with self._writing(workspace_id, within) as tx:
            if tx.workspace() is None:
                raise NotFound(detail=f"workspace {workspace_id} not found")
            parent = None
            if parent_token_id is not None:
                parent = tx.token(parent_token_id, for_update=True)  # locks out a concurrent revoke
                if parent is None:
                    raise NotFound(detail=f"parent token {parent_token_id} not found")
                if parent.revoked_at is not None or parent.expires_at <= now:
                    raise PolicyDenied(detail="the parent token is revoked or expired; it cannot delegate")
                if minted_by is not None and minted_by.token_id not in (None, parent.id):
                    raise PolicyDenied(detail="a token can only delegate from itself")

            minter_kind = minted_by.kind if minted_by is not None else (parent.kind if parent else "person")
            if TURNS_ACCEPT in wanted and minter_kind != "person":
                raise PolicyDenied(
                    detail="only a person can mint a token carrying turns:accept",
                    extra={"scope": TURNS_ACCEPT},
                    next_call="ask a signed-in person to mint this token",
                )

            # Who holds the new token.
            person_id = None
            if person_email is not None:
                person = tx.person_by_email(_normal_email(person_email))
                if person is None:
                    raise ValidationFailed(
                        detail=f"{person_email} is not a member of this workspace",
                        field_errors=[FieldError("person_email", "unknown_person", "not a member of this workspace")],
                    )
                if minter_kind != "person":
                    raise PolicyDenied(detail="only a person can mint a person's credential")
                if parent is not None and parent.person_id != person.id:
                    raise PolicyDenied(detail="a delegated person credential stays with the parent's person")
                person_id = person.id
                kind = "person"
            else:
                kind = "agent"
                if parent is not None and parent.kind == "agent":
                    if agent_id not in (None, parent.agent_id):
                        raise PolicyDenied(detail="a delegated agent token stays with the parent's agent")
                    agent_id = parent.agent_id
                elif agent_id is not None and tx.agent(agent_id) is None:
                    raise NotFound(detail=f"agent {agent_id} not found")

            if kind == "person" and rate_limit_per_minute is not None:
                raise ValidationFailed(
                    detail=f"a person's rate limit is {PERSON_RATE_LIMIT} a minute, shared by their session and "
                           "every CLI token they hold; it is not set per token",
                    field_errors=[FieldError("rate_limit_per_minute", "person_shared", "not settable for a person")],
                )
            default_rate = PERSON_RATE_LIMIT if kind == "person" else AGENT_RATE_LIMIT
            rate = rate_limit_per_minute if rate_limit_per_minute is not None else default_rate
            expires_at = now + (expires_in if expires_in is not None else DEFAULT_EXPIRY)
            if wanted_notes is not None:
                unknown = sorted(set(wanted_notes) - tx.existing_note_ids(wanted_notes))
                if unknown:
                    raise ValidationFailed(
                        detail=f"{len(unknown)} note id(s) are not notes of this workspace",
                        field_errors=[FieldError("note_ids", "unknown_note", f"{n} is not a note here")
                                      for n in unknown[:50]],
                    )

            if parent is not None:
                wanted_notes, expires_at, rate = self._narrow(
                    parent, wanted, wanted_notes, expires_at, explicit_expiry=expires_in is not None,
                    auto_apply=auto_apply, rate=rate, explicit_rate=rate_limit_per_minute is not None,
                )

            if kind == "agent" and agent_id is None:
                agent_id = new_id()
                tx.insert_agent(AgentRow(
                    id=agent_id, name=label or "agent",
                    created_by=minted_by.principal_id if minted_by is not None and minted_by.is_person else None,
                    created_at=now,
                ))

            plaintext, token_hash, prefix = new_secret()
            token_id = new_id()
            row = TokenRow(
                id=token_id, token_hash=token_hash, prefix=prefix,
                label=label, kind=kind, agent_id=agent_id if kind == "agent" else None, person_id=person_id,
                scopes=tuple(ordered(wanted)), note_ids=None if wanted_notes is None else tuple(sorted(wanted_notes)),
                auto_apply=bool(auto_apply), rate_limit_per_minute=rate, parent_id=parent.id if parent else None,
                root_id=parent.root_id if parent else token_id,
                created_by_kind=("operator" if minted_by is None else minted_by.kind),
                created_by_id=None if minted_by is None else minted_by.principal_id,
                expires_at=expires_at, revoked_at=None, last_used_at=None, created_at=now, ask_cap=ask_cap,
            )
            tx.insert_token(row)
            record(tx, minted_by, TOKEN_MINT, target=token_id, at=now, details={
                "kind": kind, "label": label, "scopes": list(row.scopes), "parent_id": row.parent_id,
                "agent_id": row.agent_id, "person_id": person_id})
        return plaintext, TokenInfo.from_row(row)

    @contextmanager
    def _writing(self, workspace_id: str, within: WorkspaceTx | None) -> Iterator[WorkspaceTx]:
        if within is None:
            with self.store.write(workspace_id) as tx:
                yield tx
            return
        if not within.writable or within.workspace_id != workspace_id:
            raise ValueError("a token is minted in a write transaction of its own workspace")
        yield within

    @staticmethod
    def _narrow(
        parent: TokenRow,
        scopes: frozenset[str],
        note_ids: frozenset[str] | None,
        expires_at: datetime,
        *,
        explicit_expiry: bool,
        auto_apply: bool,
        rate: int,
        explicit_rate: bool,
    ) -> tuple[frozenset[str] | None, datetime, int]:
        """A delegated token's reach: within the parent's on every axis, or PolicyDenied."""
        widened: dict[str, Any] = {}
        extra_scopes = sorted(scopes - set(parent.scopes))
        if extra_scopes:
            widened["scopes"] = extra_scopes
        if parent.note_ids is not None:
            if note_ids is None:
                note_ids = frozenset(parent.note_ids)  # unspecified: inherit the parent's set, never the workspace
            elif not note_ids <= set(parent.note_ids):
                widened["note_ids"] = sorted(note_ids - set(parent.note_ids))
        if expires_at > parent.expires_at:
            if explicit_expiry:
                widened["expires_at"] = parent.expires_at.isoformat()
            else:
                expires_at = parent.expires_at  # the default expiry is capped at the parent's
        if auto_apply and not parent.auto_apply:
            widened["auto_apply"] = True
        if rate > parent.rate_limit_per_minute:
            if explicit_rate:
                widened["rate_limit_per_minute"] = parent.rate_limit_per_minute
            else:
                rate = parent.rate_limit_per_minute
        if widened:
            raise PolicyDenied(
                detail="a delegated token can only narrow its parent",
                extra={"widens": widened, "parent_id": parent.id},
            )
        return note_ids, expires_at, rate

    # ------------------------------------------------------------------ authenticate

    def authenticate(self, plaintext: str, *, workspace_id: str | None = None) -> Principal:
        """The principal a presented token stands for. Unknown, malformed,
        expired and revoked tokens are all Unauthenticated. ``workspace_id``
        (the ``x-fastpad-workspace`` header) naming another workspace yields a
        principal that sees nothing there."""
        if not isinstance(plaintext, str) or not _TOKEN_RE.match(plaintext):
            raise Unauthenticated(detail="not a Fastpad token (expected fpk_live_ followed by 43 letters and digits)")
        digest = hash_secret(plaintext)
        found = self.store.resolve_credential("token", digest)
        if found is None:
            raise Unauthenticated(detail="unknown token")
        token_workspace, token_id = found
        now = self.clock()
        with self.store.read(token_workspace) as tx:
            row = tx.token(token_id)
            if row is None or not hmac.compare_digest(row.token_hash, digest):
                raise Unauthenticated(detail="unknown token")
            if row.revoked_at is not None:
                raise Unauthenticated(detail="this token was revoked", next_call="mint a new token")
            if row.expires_at <= now:
                raise Unauthenticated(detail=f"this token expired at {row.expires_at.isoformat()}",
                                      next_call="mint a new token")
            # The person the token answers to — its holder, or the person who minted an agent token —
            # must still be a member, and lends the token their role (a viewer's tokens only read).
            answers_to = row.person_id if row.kind == "person" else (
                row.created_by_id if row.created_by_kind == "person" else None)
            member = tx.member(answers_to) if answers_to is not None else None
            if answers_to is not None and member is None:
                raise Unauthenticated(detail="the person this token answers to is no longer a member")
        if row.last_used_at is None or now - row.last_used_at >= LAST_USED_GRANULARITY:
            with self.store.write(token_workspace) as tx:
                tx.touch_token(row.id, now)
        principal = principal_for_token(token_workspace, row, role=member.role if member is not None else None)
        if workspace_id is not None and workspace_id != token_workspace:
            return principal.sees_nothing_in(workspace_id)
        return principal

    # ------------------------------------------------------------------ list / get / revoke

    def list(self, workspace_id: str, *, include_revoked: bool = True) -> list[TokenInfo]:
        with self.store.read(workspace_id) as tx:
            rows = tx.tokens()
        infos = [TokenInfo.from_row(r) for r in rows]
        return infos if include_revoked else [i for i in infos if i.revoked_at is None]

    def get(self, workspace_id: str, token_id: str) -> TokenInfo:
        with self.store.read(workspace_id) as tx:
            row = tx.token(token_id)
        if row is None:
            raise NotFound(detail=f"token {token_id} not found")
        return TokenInfo.from_row(row)

    # ------------------------------------------------------------------ spending on questions

    def reserve_ask(self, principal: Principal, most: int) -> None:
        """Hold ``most`` provider tokens — the most the question about to be sent can cost — against
        the caller's token and every token it was delegated from, or refuse it (``ask-cap-reached``)
        if that would take any of them past its cap. Checked and added in one transaction with the
        chain's rows locked, so questions in flight together never promise more than a cap holds.
        :meth:`settle_ask` then charges what the answer cost. A web session has no token and no cap."""
        if principal.token_id is None:
            return
        with self.store.write(principal.workspace_id) as tx:
            for token_id, cap, spent in tx.ask_spending(principal.token_id, for_update=True):
                if cap is not None and spent + most > cap:
                    whose = ("This token" if token_id == principal.token_id
                             else f"The token it was delegated from ({token_id})")
                    raise AskCapReached(
                        detail=f"{whose} has spent or holds {spent} of its {cap} provider tokens on questions, "
                               f"and this question may cost up to {most}; nothing was asked.",
                        extra={"ask_cap": cap, "ask_spent": spent, "capped_token_id": token_id,
                               "question_max_tokens": most},
                        next_call="POST /v1/search (fp query TEXT) costs nothing; or ask a person for a token "
                                  "with a new cap",
                    )
            tx.add_ask_spend(principal.token_id, most)

    def settle_ask(self, principal: Principal, reserved: int, spent: int) -> None:
        """Replace a reservation of ``reserved`` by what the answer cost, ``spent`` (0 when the
        provider failed: the reservation is given back whole)."""
        if principal.token_id is None or spent == reserved:
            return
        with self.store.write(principal.workspace_id) as tx:
            tx.add_ask_spend(principal.token_id, spent - reserved)

    def revoke(self, workspace_id: str, token_id: str, *, revoked_by: Principal | None = None) -> list[str]:
        """Revoke a token and every token delegated from it. Returns the ids
        this call revoked (empty if all were already revoked). An agent may
        revoke only its own token and its descendants."""
        now = self.clock()
        with self.store.write(workspace_id) as tx:
            row = tx.token(token_id, for_update=True)
            if row is None:
                raise NotFound(detail=f"token {token_id} not found")
            if revoked_by is not None and not revoked_by.is_person:
                ancestor, allowed = row, False
                while ancestor is not None:
                    if ancestor.id == revoked_by.token_id:
                        allowed = True
                        break
                    ancestor = tx.token(ancestor.parent_id) if ancestor.parent_id else None
                if not allowed:
                    raise NotFound(detail=f"token {token_id} not found")
            revoked = tx.revoke_token_tree(token_id, now)
            if revoked:
                record(tx, revoked_by, TOKEN_REVOKE, target=token_id, details={"revoked": revoked}, at=now)
            return revoked


def principal_for_token(workspace_id: str, row: TokenRow, *, role: str | None = None) -> Principal:
    note_ids = None if row.note_ids is None else frozenset(row.note_ids)
    if row.kind == "person":
        return Principal.person(workspace_id, row.person_id or "", token_id=row.id, scopes=frozenset(row.scopes),
                                note_ids=note_ids, auto_apply=row.auto_apply, role=role)
    scopes = frozenset(row.scopes) & VIEWER_SCOPES if role == VIEWER else frozenset(row.scopes)
    return Principal(
        workspace_id=workspace_id, kind="agent", principal_id=row.agent_id or "", token_id=row.id,
        scopes=scopes, note_ids=note_ids, role=role, auto_apply=row.auto_apply, origin=Origin.AGENT_WRITTEN,
        rate_limit_per_minute=row.rate_limit_per_minute,
        rate_key=f"token:{row.root_id}",  # a delegation chain shares its root's bucket
    )


def _normal_email(email: str) -> str:
    return email.strip().lower()


def _check_label(label: str) -> str:
    if not isinstance(label, str) or len(label) > MAX_LABEL:
        raise ValidationFailed(detail="label too long",
                               field_errors=[FieldError("label", "max_length", f"at most {MAX_LABEL} characters")])
    return label.strip()


def _check_note_ids(note_ids: Iterable[str] | None) -> frozenset[str] | None:
    if note_ids is None:
        return None
    if isinstance(note_ids, str):
        raise ValidationFailed(detail="note_ids is a list of note ids",
                               field_errors=[FieldError("note_ids", "type", "a list of note ULIDs")])
    ids = list(note_ids)
    if len(ids) > MAX_NOTE_IDS:
        raise ValidationFailed(detail="too many note ids",
                               field_errors=[FieldError("note_ids", "max_items", f"at most {MAX_NOTE_IDS}")])
    bad = [n for n in ids if not is_ulid(n)]
    if bad:
        raise ValidationFailed(
            detail="note_ids must be note ULIDs",
            field_errors=[FieldError("note_ids", "ulid", f"{n!r} is not a ULID") for n in bad[:50]],
        )
    return frozenset(ids)


def _check_expiry(expires_in: timedelta) -> None:
    if not isinstance(expires_in, timedelta):
        raise ValidationFailed(detail="expires_in must be a duration",
                               field_errors=[FieldError("expires_in", "type", "a duration")])
    if expires_in <= timedelta(0):
        raise ValidationFailed(detail="a token must expire in the future",
                               field_errors=[FieldError("expires_in", "min", "must be positive")])
    if expires_in > MAX_EXPIRY:
        raise ValidationFailed(
            detail="tokens expire within 365 days",
            field_errors=[FieldError("expires_in", "max_expiry", "at most 365 days; there are no non-expiring tokens")],
        )
