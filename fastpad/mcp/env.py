"""What the MCP surface needs from its deployment: services, the public base URL, the rate
limiter it shares with the HTTP API, and the outbound policy for a credential.

Host allowlists live in ``fastpad.json`` (tokens carry none yet)::

    "mcp": {"allow_hosts": {"<token id>": ["docs.python.org", "*.example.com"]}}

A token listed there gets live links to those hosts; every other URL in a result is
neutralised. A delegated token inherits nothing: list it by its own id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastpad.outbound import OutboundPolicy
from fastpad.outbound.pipeline import redaction_key
from fastpad.outbound.budget import DEFAULT_MAX_TOKENS
from fastpad.security.principals import Principal

if TYPE_CHECKING:
    from fastpad.api.ratelimit import RateLimiter

@dataclass
class McpEnv:
    deployment: Any
    base_url: str
    limiter: "RateLimiter"
    allow_hosts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # token id -> hosts
    max_tokens: int = DEFAULT_MAX_TOKENS

    def __post_init__(self) -> None:
        self.base_url = self.base_url.rstrip("/")
        self._key = redaction_key(self.deployment.secret)

    @classmethod
    def from_deployment(cls, deployment: Any, base_url: str, limiter: "RateLimiter") -> "McpEnv":
        configured = (deployment.config.get("mcp") or {}).get("allow_hosts") or {}
        hosts = {str(token): tuple(str(h) for h in names) for token, names in configured.items()}
        return cls(deployment, base_url, limiter, hosts)

    def policy(self, principal: Principal, *, max_tokens: int | None = None) -> OutboundPolicy:
        hosts = self.allow_hosts.get(principal.token_id or "", ())
        return OutboundPolicy(self._key, hosts, max_tokens or self.max_tokens, own_origin=self.base_url)
