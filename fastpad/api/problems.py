"""Problem documents (RFC 9457): every failure the HTTP surface returns.

One renderer turns a :class:`~fastpad.errors.FastpadError` into an
``application/problem+json`` response; FastAPI's own validation errors and
Starlette's 404/405 are translated into the same typed errors first, so a
client never sees two error shapes. The ``type`` URI is
``{base_url}/errors/{slug}`` and resolves (see ``routes/meta.py``).
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any, Iterable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match

from fastpad.errors import FastpadError, FieldError, NotFound, UnsupportedMediaType, ValidationFailed
from fastpad.security.scopes import AGENT_DEFAULT_SCOPES

log = logging.getLogger("fastpad.api")

PROBLEM_MEDIA_TYPE = "application/problem+json"
MAX_FIELD_ERRORS = 50
# Members a service's ``extra`` may not overwrite.
_CORE_MEMBERS = frozenset(
    {"type", "title", "status", "detail", "instance", "retryable", "field_errors",
     "field_errors_truncated", "docs_url", "next"}
)


# HTTP-only problem types: the protocol's own refusals, with slugs like the rest.
class MethodNotAllowed(FastpadError):
    slug, title, status = "method-not-allowed", "Method not allowed", 405


class NotAcceptable(FastpadError):
    slug, title, status = "not-acceptable", "Not acceptable", 406


class BadRequest(FastpadError):
    slug, title, status = "bad-request", "Bad request", 400


class Unavailable(FastpadError):
    slug, title, status, retryable = "unavailable", "Service unavailable", 503, True


class InternalError(FastpadError):
    slug, title, status = "internal", "Internal error", 500


def type_uri(base_url: str, slug: str) -> str:
    return f"{base_url.rstrip('/')}/errors/{slug}"


def problem_body(error: FastpadError, base_url: str, *, instance: str | None = None) -> dict[str, Any]:
    """The problem document as a dict, in a stable member order."""
    from fastpad.api.catalog import default_next  # the catalog imports this module

    uri = type_uri(base_url, error.slug)
    field_errors = list(error.field_errors)
    shown = field_errors[:MAX_FIELD_ERRORS]
    body: dict[str, Any] = {
        "type": uri,
        "title": error.title,
        "status": error.status,
        "detail": error.detail or error.title,
    }
    if instance:
        body["instance"] = instance
    body["retryable"] = bool(error.retryable)
    if "retry_after_ms" in error.extra:
        body["retry_after_ms"] = int(error.extra["retry_after_ms"])
    body["field_errors"] = [_field_error(fe) for fe in shown]
    # A service that already cut its list says how many it dropped.
    body["field_errors_truncated"] = len(field_errors) - len(shown) + int(error.extra.get("field_errors_truncated", 0))
    body["docs_url"] = uri
    body["next"] = error.next_call or default_next(error.slug)
    for key, value in error.extra.items():
        if key not in _CORE_MEMBERS and key not in body:
            body[key] = value
    return body


def _field_error(fe: FieldError | dict[str, Any]) -> dict[str, Any]:
    return fe.as_dict() if isinstance(fe, FieldError) else dict(fe)


def problem_headers(error: FastpadError, base_url: str) -> dict[str, str]:
    headers = {"cache-control": "no-store"}
    retry_ms = error.extra.get("retry_after_ms")
    if retry_ms is not None:
        headers["retry-after"] = str(max(1, math.ceil(int(retry_ms) / 1000)))
    metadata = f'{base_url.rstrip("/")}/.well-known/oauth-protected-resource'
    if error.status == 401:
        # `scope` names what an agent gets by default, so an OAuth client asks for
        # that rather than for every scope the server knows (MCP authorization).
        challenge = f'Bearer resource_metadata="{metadata}", scope="{" ".join(AGENT_DEFAULT_SCOPES)}"'
        if error.extra.get("credential_rejected"):
            challenge += ', error="invalid_token"'
        headers["www-authenticate"] = challenge
    elif error.slug == "insufficient-scope":
        scopes = " ".join(error.extra.get("required") or error.extra.get("missing") or [])
        headers["www-authenticate"] = (
            f'Bearer error="insufficient_scope", scope="{scopes}", resource_metadata="{metadata}"'
        )
    allow = error.extra.get("allow")
    if error.status == 405 and allow:
        headers["allow"] = ", ".join(allow)
    return headers


def problem_response(
    error: FastpadError, base_url: str, *, instance: str | None = None, close: bool = False
) -> Response:
    body = problem_body(error, base_url, instance=instance)
    headers = problem_headers(error, base_url)
    if close:
        headers["connection"] = "close"
    return Response(
        content=json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode(),
        status_code=error.status,
        headers=headers,
        media_type=PROBLEM_MEDIA_TYPE,
    )


def _base_url(request: Request) -> str:
    return request.app.state.base_url


# --- translating FastAPI's and Starlette's own errors -------------------------


def field_errors_from_validation(errors: Iterable[dict[str, Any]]) -> list[FieldError]:
    """Pydantic/FastAPI error dicts → our field errors.

    ``loc`` becomes a dotted path; the ``body`` prefix is dropped (fields name
    the JSON members a client sent), other locations keep theirs
    (``path.note_id``, ``query.limit``, ``header.idempotency-key``).
    """
    out: list[FieldError] = []
    for err in errors:
        loc = list(err.get("loc") or ())
        if loc and loc[0] == "body":
            loc = loc[1:]
        field = _dotted(loc)
        code = str(err.get("type") or "invalid")
        message = str(err.get("msg") or "invalid value")
        out.append(FieldError(field=field or "body", code=code, message=message))
    return out


def _dotted(loc: list[Any]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


async def _on_fastpad_error(request: Request, exc: FastpadError) -> Response:
    if exc.status >= 500:
        log.exception("service error", exc_info=exc)
    return problem_response(exc, _base_url(request), instance=request.url.path)


async def _on_validation_error(request: Request, exc: RequestValidationError) -> Response:
    errors = field_errors_from_validation(exc.errors())
    error = ValidationFailed(
        detail=f"{len(errors)} field(s) failed validation", field_errors=errors
    )
    return problem_response(error, _base_url(request), instance=request.url.path)


async def _on_http_exception(request: Request, exc: StarletteHTTPException) -> Response:
    error: FastpadError
    if exc.status_code == 404:
        error = NotFound(detail=f"No route or resource at {request.url.path}")
    elif exc.status_code == 405:
        allow = _allowed_methods(request)
        error = MethodNotAllowed(
            detail=f"{request.method} is not allowed on {request.url.path}",
            extra={"allow": allow} if allow else {},
        )
    elif exc.status_code == 400:
        error = BadRequest(detail=str(exc.detail))
    elif exc.status_code == 415:
        error = UnsupportedMediaType(detail=str(exc.detail))
    else:
        error = _GenericHTTPError(detail=str(exc.detail))
        error.status = exc.status_code  # type: ignore[misc]
    return problem_response(error, _base_url(request), instance=request.url.path)


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route takes at this path. Starlette's 405 names only the first route
    whose path matched, while a path is often several routes (GET and POST of a collection)."""
    routes = request.app.router.routes
    return [method for method in _METHODS
            if any(route.matches({**request.scope, "method": method})[0] == Match.FULL for route in routes)]


class _GenericHTTPError(BadRequest):
    """Any other status Starlette raises; rendered under ``bad-request``."""


async def _on_unhandled(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    error = InternalError(detail="The server failed to handle this request.")
    return problem_response(error, _base_url(request), instance=request.url.path)


def install(app: FastAPI) -> None:
    """Register the renderers on ``app`` (base URL read from ``app.state``)."""
    app.add_exception_handler(FastpadError, _on_fastpad_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _on_validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _on_http_exception)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _on_unhandled)
