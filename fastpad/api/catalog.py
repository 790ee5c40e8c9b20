"""The problem-type catalog: what each error ``slug`` means and what to do next.

Every ``type``/``docs_url`` a problem document carries is
``{base_url}/errors/{slug}`` and resolves to a page rendered from this
catalog. Types come from the :class:`~fastpad.errors.FastpadError` class
tree, so a new error class gets a page without touching this module; the
prose below adds the explanation where we have one.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from fastpad import errors as _errors  # noqa: F401  (imported so the class tree is complete)
from fastpad.api import problems as _problems  # noqa: F401  (HTTP-only types)
from fastpad.errors import FastpadError


@dataclass(frozen=True)
class ProblemType:
    slug: str
    title: str
    status: int
    retryable: bool
    meaning: str
    next: str


# slug -> (meaning, next call). The next call is the default `next` member.
_PROSE: dict[str, tuple[str, str]] = {
    "validation-failed": (
        "The request was understood but a field is wrong: a malformed identifier, a body past "
        "a size or count limit, an ops blob that is a snapshot instead of an update. "
        "`field_errors` names each field and a machine-readable `code` (e.g. `ulid`, "
        "`max_items`, `max_values`, `max_bytes`, `max_atoms`, `mode`). Not retryable: the "
        "same bytes are refused every time.",
        "fix the fields named in field_errors and send a corrected request",
    ),
    "not-found": (
        "The resource does not exist, or this credential cannot see it. The two are "
        "deliberately indistinguishable.",
        "GET /v1/notes to list what this credential can see",
    ),
    "stale-frontier": (
        "The note moved since you read it: `expected_frontier` is what you sent, "
        "`current_frontier` is where the note is now. Nothing was applied.",
        "GET /v1/notes/{id}, recompute your ops against its frontier, then POST /v1/notes/{id}/ops again",
    ),
    "conflict": (
        "The request conflicts with the resource's current state (for example, the "
        "deployment is already initialised).",
        "re-read the resource and decide again",
    ),
    "idempotency-conflict": (
        "This idempotency key was already used with a different request body. A key "
        "replays its first response; it never applies a different body.",
        "resend the original body to get the first response again, or use a new idempotencyKey",
    ),
    "unauthenticated": (
        "No credential, or the credential was rejected (unknown, expired or revoked). The "
        "`WWW-Authenticate` header points at the protected-resource metadata.",
        "GET /.well-known/oauth-protected-resource, then send Authorization: Bearer fpk_live_…",
    ),
    "insufficient-scope": (
        "The credential lacks a scope the call needs. `missing` lists all of them at once, "
        "so one re-authorization is enough.",
        "mint or request a token carrying every scope listed in missing",
    ),
    "out-of-scope": (
        "The token's note set does not include this note. A note set is resolved when the "
        "token is minted; tagging a note cannot widen it.",
        "ask a person for a new token whose note set includes this note",
    ),
    "policy-denied": (
        "A policy refuses this action for this credential, whatever its scopes (for example "
        "a delegated token wider than its parent, or an action only a person may take).",
        "hand the request to a signed-in person",
    ),
    "rate-limited": (
        "Too many requests for this credential in the current minute. `retry_after_ms` "
        "(and the `Retry-After` header) say how long to wait.",
        "wait retry_after_ms, then send the same request again",
    ),
    "payload-too-large": (
        "The body is over the limit for this route: 64 KiB on public routes, 8 MiB on "
        "authenticated ones. `max_bytes` says which applied.",
        "send a smaller body, e.g. split the ops into several updates",
    ),
    "request-timeout": (
        "The body arrived too slowly: every body must finish within 60 s and, after the "
        "first 5 s, keep an average rate of at least `min_bytes_per_sec` (which scales with its size).",
        "resend the body over a faster connection",
    ),
    "method-not-allowed": (
        "The route exists but not with this method; `allow` lists the methods it takes.",
        "use one of the methods in allow",
    ),
    "not-acceptable": (
        "The route cannot produce any media type the `Accept` header allows.",
        "send Accept: application/json (or text/markdown where the route offers it)",
    ),
    "unsupported-media-type": (
        "The body's `Content-Type` is not one this route reads.",
        "send Content-Type: application/json (or text/markdown where the route takes it)",
    ),
    "bad-request": (
        "The request could not be read at all (for example a body that is not valid JSON "
        "for its content type).",
        "check the request's framing and Content-Type, then send it again",
    ),
    "provider-not-configured": (
        "This deployment has no model provider for questions (the `ask` object of fastpad.json), "
        "or the environment variable it names for the API key is not set. Nothing was sent anywhere.",
        "POST /v1/search (fp query TEXT) finds the blocks that mention it",
    ),
    "provider-unavailable": (
        "The model provider answering questions could not be reached, timed out, failed (5xx, 429) "
        "or answered with no chat completion; `reason` says which, and `retry_after_ms` is the "
        "provider's own Retry-After when it sent one. Nothing was charged against a spending cap.",
        "ask again in a moment; POST /v1/search works meanwhile",
    ),
    "provider-refused": (
        "The model provider refused this deployment's request (a wrong API key, an unknown model): "
        "`provider_status` is its status. The same call fails until the operator fixes the setting.",
        "tell the deployment's operator; POST /v1/search works meanwhile",
    ),
    "ask-cap-reached": (
        "The token's spending cap on questions (`fp token create --ask-cap N`, in provider tokens) "
        "is used up: `ask_spent` of `ask_cap`, on this token or the one it was delegated from "
        "(`capped_token_id`). Waiting does not refill it.",
        "search instead (POST /v1/search), or ask a person for a token with a new cap",
    ),
    "unavailable": (
        "The server is up but cannot reach its database right now.",
        "retry after a few seconds (Retry-After says how long)",
    ),
    "internal": (
        "The server failed while handling the request. Nothing about the request itself "
        "is known to be wrong.",
        "retry later; if it persists, report it with the instance path and time",
    ),
}


def _subclasses(cls: type[FastpadError]) -> list[type[FastpadError]]:
    out: list[type[FastpadError]] = []
    stack = [cls]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(current.__subclasses__())
    return out


def problem_types() -> dict[str, ProblemType]:
    """Every known problem type by slug (first class found for a slug wins)."""
    found: dict[str, ProblemType] = {}
    for cls in _subclasses(FastpadError):
        if cls.slug in found or cls.__name__.startswith("_"):
            continue
        meaning, next_call = _PROSE.get(cls.slug, (cls.title + ".", "see the detail member"))
        found[cls.slug] = ProblemType(
            cls.slug, cls.title, cls.status, bool(cls.retryable), meaning, next_call
        )
    return dict(sorted(found.items()))


def default_next(slug: str) -> str:
    prose = _PROSE.get(slug)
    return prose[1] if prose else "see the detail member"


def render_markdown(pt: ProblemType, base_url: str) -> str:
    return (
        f"# {pt.title}\n\n"
        f"- type: `{base_url.rstrip('/')}/errors/{pt.slug}`\n"
        f"- status: {pt.status}\n"
        f"- retryable: {'yes' if pt.retryable else 'no'}\n\n"
        f"{pt.meaning}\n\n"
        f"**Next:** {pt.next}\n"
    )


def render_html(pt: ProblemType, base_url: str) -> str:
    e = html.escape
    return _page(
        pt.title,
        f"<h1>{e(pt.title)}</h1>"
        f"<dl><dt>type</dt><dd><code>{e(base_url.rstrip('/'))}/errors/{e(pt.slug)}</code></dd>"
        f"<dt>status</dt><dd>{pt.status}</dd>"
        f"<dt>retryable</dt><dd>{'yes' if pt.retryable else 'no'}</dd></dl>"
        f"<p>{e(pt.meaning)}</p><p><strong>Next:</strong> {e(pt.next)}</p>"
        f'<p><a href="{e(base_url.rstrip("/"))}/errors">All problem types</a></p>',
    )


def render_index_markdown(types: dict[str, ProblemType], base_url: str) -> str:
    lines = ["# Problem types", ""]
    for pt in types.values():
        lines.append(f"- [`{pt.slug}`]({base_url.rstrip('/')}/errors/{pt.slug}) — {pt.status} {pt.title}")
    return "\n".join(lines) + "\n"


def render_index_html(types: dict[str, ProblemType], base_url: str) -> str:
    e = html.escape
    items = "".join(
        f'<li><a href="{e(base_url.rstrip("/"))}/errors/{e(pt.slug)}"><code>{e(pt.slug)}</code></a>'
        f" — {pt.status} {e(pt.title)}</li>"
        for pt in types.values()
    )
    return _page("Problem types", f"<h1>Problem types</h1><ul>{items}</ul>")


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang=en><meta charset=utf-8>"
        f"<title>{html.escape(title)} · Fastpad</title>"
        "<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem}"
        "code{background:#f3f3f3;padding:0 .2em}</style>"
        f"<body>{body}</body></html>"
    )
