"""The agents of a workspace, as ``fp agents`` and Settings → Agents & tokens list them.

An agent principal is what an agent token acts as; its tokens say what it
may reach. Per agent: the scopes and autonomy its live tokens carry
(``auto_apply``; ``accept`` when one holds ``turns:accept``), when it was last
seen (the latest use of any of its tokens) and the tokens themselves, never
their secrets. Only a person may list them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastpad.errors import PolicyDenied
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


class AgentDirectory:
    def __init__(self, store: Store, tokens: TokenService) -> None:
        self.store = store
        self.tokens = tokens

    def list(self, principal: Principal) -> list[AgentSummary]:
        """Every agent of the principal's workspace, the most recently seen first."""
        if not principal.is_person:
            raise PolicyDenied(detail="only a person can list the workspace's agents",
                               extra={"reason": "person_only"})
        by_agent: dict[str, list[TokenInfo]] = {}
        for info in self.tokens.list(principal.workspace_id):
            if info.kind == "agent" and info.agent_id:
                by_agent.setdefault(info.agent_id, []).append(info)
        with self.store.read(principal.workspace_id) as tx:
            rows = {agent_id: tx.agent(agent_id) for agent_id in by_agent}
        now = utcnow()
        agents = []
        for agent_id, infos in by_agent.items():
            row = rows[agent_id]
            if row is None:
                continue
            live = [t for t in infos if t.is_live(now)]
            seen = [t.last_used_at for t in infos if t.last_used_at is not None]
            agents.append(AgentSummary(
                id=agent_id, name=row.name, created_at=row.created_at,
                scopes=tuple(ordered({s for t in live for s in t.scopes})),
                auto_apply=any(t.auto_apply for t in live), accept=any(TURNS_ACCEPT in t.scopes for t in live),
                last_seen_at=max(seen, default=None), tokens=tuple(infos),
            ))
        return sorted(agents, key=lambda a: (a.last_seen_at or a.created_at), reverse=True)
