"""The agents of a workspace, as ``fp agents`` and Settings → Agents & tokens list them.

An agent principal is what an agent token acts as; its tokens say what it
may reach. Per agent: the scopes and autonomy its live tokens carry
(``auto_apply``; ``accept`` when one holds ``turns:accept``), when it was last
seen (the latest use of any of its tokens) and the tokens themselves, never
their secrets. Only a person whose credential reaches the whole workspace may
list them (a note-scoped credential is out-of-scope here).

Which tokens a person may manage (see and revoke in Settings → Agents &
tokens): every agent token of their workspace, and their own CLI tokens —
never another member's CLI token. A token outside that set is "not found",
exactly like an unknown one, so the page cannot be used to probe for ids.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from fastpad.errors import NotFound, PolicyDenied
from fastpad.notes.ids import is_ulid
from fastpad.security.principals import Principal
from fastpad.security.scopes import TURNS_ACCEPT, ordered
from fastpad.security.tokens import TokenInfo, TokenService
from fastpad.store import Store, utcnow


@dataclass(frozen=True)
class AgentSummary:
    id: str
    name: str
    created_at: datetime
    scopes: tuple[str, ...]  # the union over its live tokens
    auto_apply: bool
    accept: bool  # a live token carries turns:accept
    last_seen_at: datetime | None
    tokens: tuple[TokenInfo, ...]

    @property
    def live(self) -> bool:
        return any(token.is_live() for token in self.tokens)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "name": self.name, "created_at": self.created_at.isoformat(),
            "scopes": list(self.scopes), "autonomy": {"auto_apply": self.auto_apply, "accept": self.accept},
            "last_seen_at": None if self.last_seen_at is None else self.last_seen_at.isoformat(),
            "live": self.live, "tokens": [token.as_dict() for token in self.tokens],
        }


@dataclass(frozen=True)
class ManagedTokens:
    """The live tokens a person may manage: per agent (each summary holding only its live tokens), and their own."""

    agents: tuple[AgentSummary, ...]
    own: tuple[TokenInfo, ...]  # the person's CLI tokens, the newest first


@dataclass(frozen=True)
class Revocation:
    """A revoked token and the tokens that went with it (revoked at the same instant, delegated from it)."""

    token: TokenInfo
    delegates: tuple[TokenInfo, ...]


class AgentDirectory:
    def __init__(self, store: Store, tokens: TokenService) -> None:
        self.store = store
        self.tokens = tokens

    def list(self, principal: Principal) -> list[AgentSummary]:
        """Every agent of the principal's workspace, the most recently seen first."""
        return self._agents(principal, self._tokens_of(principal))

    def manageable(self, principal: Principal) -> ManagedTokens:
        """The live tokens ``principal`` (a person) may manage, as Settings → Agents & tokens lists them."""
        infos = self._tokens_of(principal)
        now = utcnow()
        agents = []
        for agent in self._agents(principal, infos):
            live = sorted((t for t in agent.tokens if t.is_live(now)), key=lambda t: t.created_at, reverse=True)
            if live:
                agents.append(replace(agent, tokens=tuple(live)))
        own = [t for t in infos if t.kind == "person" and t.person_id == principal.principal_id and t.is_live(now)]
        return ManagedTokens(agents=tuple(agents), own=tuple(sorted(own, key=lambda t: t.created_at, reverse=True)))

    def revoke(self, principal: Principal, token_id: str) -> list[str]:
        """Revoke a token ``principal`` may manage, and every token delegated from it; returns the
        ids this call revoked. Any other id — malformed, unknown, another member's — is NotFound."""
        self._managed(principal, token_id)
        return self.tokens.revoke(principal.workspace_id, token_id, revoked_by=principal)

    def revocation(self, principal: Principal, token_id: str) -> Revocation:
        """What revoking ``token_id`` took with it, for the page that confirms it; NotFound unless
        it is a token ``principal`` may manage and it is revoked."""
        token = self._managed(principal, token_id)
        if token.revoked_at is None:
            raise NotFound(detail=f"token {token_id} is not revoked")
        children: dict[str, list[TokenInfo]] = {}
        for info in self.tokens.list(principal.workspace_id):
            if info.parent_id is not None:
                children.setdefault(info.parent_id, []).append(info)
        delegates, pending = [], list(children.get(token.id, ()))
        while pending:
            info = pending.pop()
            if info.revoked_at == token.revoked_at:
                delegates.append(info)
            pending.extend(children.get(info.id, ()))
        return Revocation(token=token, delegates=tuple(sorted(delegates, key=lambda t: t.created_at)))

    def _tokens_of(self, principal: Principal) -> list[TokenInfo]:
        _require_directory_reader(principal)
        return self.tokens.list(principal.workspace_id)

    def _managed(self, principal: Principal, token_id: str) -> TokenInfo:
        _require_directory_reader(principal)
        info = self.tokens.get(principal.workspace_id, token_id) if is_ulid(token_id) else None
        if info is None or not (info.kind == "agent" or info.person_id == principal.principal_id):
            raise NotFound(detail=f"token {token_id} not found")
        return info

    def _agents(self, principal: Principal, infos: list[TokenInfo]) -> list[AgentSummary]:
        by_agent: dict[str, list[TokenInfo]] = {}
        for info in infos:
            if info.kind == "agent" and info.agent_id:
                by_agent.setdefault(info.agent_id, []).append(info)
        with self.store.read(principal.workspace_id) as tx:
            rows = {agent_id: tx.agent(agent_id) for agent_id in by_agent}
        now = utcnow()
        agents = []
        for agent_id, agent_tokens in by_agent.items():
            row = rows[agent_id]
            if row is None:
                continue
            live = [t for t in agent_tokens if t.is_live(now)]
            seen = [t.last_used_at for t in agent_tokens if t.last_used_at is not None]
            agents.append(AgentSummary(
                id=agent_id, name=row.name, created_at=row.created_at,
                scopes=tuple(ordered({s for t in live for s in t.scopes})),
                auto_apply=any(t.auto_apply for t in live), accept=any(TURNS_ACCEPT in t.scopes for t in live),
                last_seen_at=max(seen, default=None), tokens=tuple(agent_tokens),
            ))
        return sorted(agents, key=lambda a: (a.last_seen_at or a.created_at), reverse=True)


def _require_directory_reader(principal: Principal) -> None:
    """A person, with a credential that reaches the whole workspace. The directory says what
    every token reaches — other tokens' note sets included — so a credential limited to a set
    of notes is refused it (out-of-scope) rather than shown a part: a list with note ids cut
    to its set would misstate what the other tokens reach."""
    if not principal.is_person:
        raise PolicyDenied(detail="only a person can list and manage the workspace's agents and tokens",
                           extra={"reason": "person_only"})
    principal.require_whole_workspace(
        "a credential limited to a set of notes cannot list or manage the workspace's agents and tokens")
