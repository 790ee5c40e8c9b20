"""The CLI's exit-code contract (spec › CLI › Exit codes) — the one place errors map to codes.

The exit code is a published API surface: changing what a code means is a
breaking change.
"""

from __future__ import annotations

from fastpad import errors as e

OK = 0
UNCLASSIFIED = 1
USAGE = 2
NOT_AUTHENTICATED = 3
NOT_FOUND = 4
CONFLICT = 5
RATE_LIMITED = 6
SPOOLED = 7
POLICY_DENIED = 8

MEANINGS: dict[int, str] = {
    OK: "the requested effect happened",
    UNCLASSIFIED: "unclassified failure",
    USAGE: "usage error — unknown command, bad flag, missing stdin",
    NOT_AUTHENTICATED: "not authenticated, or the credential was rejected",
    NOT_FOUND: "the target does not exist, or is no longer visible",
    CONFLICT: "conflict — stale state, idempotency, ambiguity",
    RATE_LIMITED: "rate limited; retry_after_ms is on the problem document",
    SPOOLED: "accepted locally and spooled for replay. Not a failure",
    POLICY_DENIED: "policy denied, including every attempt to approve a proposal",
}

# Most specific class first; the first isinstance match wins.
_BY_CLASS: tuple[tuple[type[e.FastpadError], int], ...] = (
    (e.ValidationFailed, USAGE),
    (e.PayloadTooLarge, USAGE),
    (e.Unauthenticated, NOT_AUTHENTICATED),
    # `fp login` ended without a credential: denied, expired, or a code already used.
    (e.AccessDenied, NOT_AUTHENTICATED),
    (e.ExpiredToken, NOT_AUTHENTICATED),
    (e.InvalidGrant, NOT_AUTHENTICATED),
    (e.NotFound, NOT_FOUND),
    (e.StaleFrontier, CONFLICT),
    (e.IdempotencyConflict, CONFLICT),
    (e.HandleExpired, CONFLICT),
    (e.Conflict, CONFLICT),
    (e.RateLimited, RATE_LIMITED),
    (e.PolicyDenied, POLICY_DENIED),
    (e.ApprovalNotPermitted, POLICY_DENIED),
    (e.CrossNoteCopyDenied, POLICY_DENIED),
    (e.InsufficientScope, POLICY_DENIED),
    (e.OutOfScope, POLICY_DENIED),
    (e.AskCapReached, POLICY_DENIED),
)

# Problem documents received over HTTP are matched by slug: the classes above, plus the
# protocol refusals only the HTTP surface raises (named here so the CLI never imports the server).
_BY_SLUG: dict[str, int] = {
    **{cls.slug: code for cls, code in _BY_CLASS},
    "bad-request": USAGE,
    "method-not-allowed": USAGE,
    "not-acceptable": USAGE,
    "unsupported-media-type": USAGE,
}


def for_error(error: BaseException) -> int:
    """The exit code for a typed error raised here or rebuilt from a server's problem document."""
    for cls, code in _BY_CLASS:
        if isinstance(error, cls):
            return code
    slug = getattr(error, "slug", None)
    return for_slug(slug) if isinstance(slug, str) else UNCLASSIFIED


def for_slug(slug: str) -> int:
    """Exit code for a problem document's slug (client commands talking HTTP)."""
    return _BY_SLUG.get(slug, UNCLASSIFIED)
