"""Typed errors shared by every layer.

Services raise these; each surface renders them once: a problem document
(HTTP, RFC 9457), an ``isError`` result (MCP) or an exit code (CLI). The
``slug`` is the agent-facing contract: it becomes ``…/errors/{slug}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FieldError:
    """One thing wrong with one input field; ``code`` is machine-readable."""

    field: str
    code: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "code": self.code, "message": self.message}


@dataclass
class FastpadError(Exception):
    """Base of every error the project raises on purpose.

    ``extra`` carries members the problem document adds verbatim
    (``current_frontier``, ``retry_after_ms``…); ``next_call`` names the
    call that helps, because every problem says what to do next.
    """

    detail: str = ""
    field_errors: list[FieldError] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    next_call: str | None = None

    slug = "internal"
    title = "Internal error"
    status = 500
    retryable = False

    def __post_init__(self) -> None:
        Exception.__init__(self, self.detail or self.title)

    def __str__(self) -> str:
        return self.detail or self.title


class ValidationFailed(FastpadError):
    slug, title, status = "validation-failed", "Validation failed", 422


class NotFound(FastpadError):
    slug, title, status = "not-found", "Not found", 404


class StaleFrontier(FastpadError):
    slug, title, status, retryable = "stale-frontier", "Stale frontier", 409, True


class Conflict(FastpadError):
    slug, title, status = "conflict", "Conflict", 409


class IdempotencyConflict(FastpadError):
    slug, title, status = "idempotency-conflict", "Idempotency key reused with a different body", 409


class Unauthenticated(FastpadError):
    slug, title, status = "unauthenticated", "Not authenticated", 401


class InsufficientScope(FastpadError):
    slug, title, status = "insufficient-scope", "Insufficient scope", 403


class OutOfScope(FastpadError):
    slug, title, status = "out-of-scope", "Out of scope", 403


class PolicyDenied(FastpadError):
    slug, title, status = "policy-denied", "Policy denied", 403


class RateLimited(FastpadError):
    slug, title, status, retryable = "rate-limited", "Rate limited", 429, True


class PayloadTooLarge(FastpadError):
    slug, title, status = "payload-too-large", "Payload too large", 413


class UnsupportedMediaType(FastpadError):
    slug, title, status = "unsupported-media-type", "Unsupported media type", 415


class RequestTimeout(FastpadError):
    slug, title, status, retryable = "request-timeout", "Request body too slow", 408, True


class HandleExpired(FastpadError):
    # 422, not 410: a 410 says the *target resource* (the note, the turns endpoint) is gone
    # for good and is heuristically cacheable, which would mislead clients and caches; not 401,
    # since the bearer credential is fine. The request is well-formed and authorized, but one
    # value in its body is a capability past its lifetime. Retryable after re-fetching handles,
    # exactly as stale-frontier is retryable after re-reading the note.
    slug, title, status, retryable = "handle-expired", "Anchor handle expired", 422, True


class CrossNoteCopyDenied(FastpadError):
    # 422, not 403: no credential or grant makes this body acceptable and the same token
    # succeeds with a different body (cite through source_block_ids instead of copying).
    slug, title, status = "cross-note-copy-denied", "Proposal copies text from another note", 422


class ApprovalNotPermitted(FastpadError):
    # 403: understood, authenticated, refused because the credential lacks a grant
    # (turns:accept, or the turn/op is one only a person may accept).
    slug, title, status = "approve-not-permitted", "Accept not permitted for this credential", 403


# `fp login`: the device authorization flow (RFC 8628 §3.5). The token endpoint answers these
# as 400s whose problem document also carries OAuth's own ``error`` member (the slug with
# underscores), so a stock OAuth client and a Fastpad client read the same response.
class AuthorizationPending(FastpadError):
    slug, title, status, retryable = "authorization-pending", "Waiting for a person to approve", 400, True


class SlowDown(FastpadError):
    # Polled sooner than ``interval`` allows; the interval grows by 5 seconds (``extra["interval"]``).
    slug, title, status, retryable = "slow-down", "Polling too often", 400, True


class AccessDenied(FastpadError):
    slug, title, status = "access-denied", "The person denied this login", 400


class ExpiredToken(FastpadError):
    # The device code expired before anyone approved it: start a new login.
    slug, title, status = "expired-token", "The login request expired", 400


class InvalidGrant(FastpadError):
    # A device code this server never issued, or one whose credential was already handed out.
    slug, title, status = "invalid-grant", "Unknown or used device code", 400


class ProviderNotConfigured(FastpadError):
    # 503: the deployment has no model provider (or the key it names is not in the server's
    # environment); nothing about the request is wrong, and retrying will not change it.
    slug, title, status = "provider-not-configured", "No model provider is configured", 503


class ProviderUnavailable(FastpadError):
    # 502: the configured model provider is down, timed out, failed (5xx, 429) or answered
    # something that is not a chat completion. Nothing was spent against a cap; asking again may work.
    slug, title, status, retryable = "provider-unavailable", "The model provider did not answer", 502, True


class ProviderRefused(FastpadError):
    # 502, not retryable: the provider refused the deployment's own request (a wrong key, an
    # unknown model): the operator must fix fastpad.json or the key; the same call fails every time.
    slug, title, status = "provider-refused", "The model provider refused this deployment's request", 502


class AskCapReached(FastpadError):
    # 403, not 429: the token's spending cap on questions is used up for good; waiting does not
    # refill it. A new token (or one without a cap) is the way on.
    slug, title, status = "ask-cap-reached", "This token's spending cap on questions is used up", 403


def missing_extra(extra: str, what: str, *, field: str) -> ValidationFailed:
    """A feature whose optional dependencies are not installed: which extra brings them."""
    install = f"pip install 'fastpad[{extra}]'"
    return ValidationFailed(detail=f"{what} needs the {extra} extra, which is not installed: {install}",
                            field_errors=[FieldError(field, "missing_extra", f"install fastpad[{extra}]")],
                            extra={"missing_extra": extra}, next_call=install)
