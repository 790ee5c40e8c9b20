"""The OpenAPI 3.1 document, generated from the routes and then finished here.

FastAPI generates paths and schemas from the code; this module adds what it
cannot infer: the problem document as the body of every 4xx/5xx, the two
security schemes (bearer token, session cookie) with the discovery routes
marked public, the models that routes read by hand (``NoteCreate``), and
``POST /mcp``, which the MCP SDK serves outside FastAPI's routing (what the SDK
refuses there, a message that is not JSON-RPC, is a JSON-RPC error instead).
"""

from __future__ import annotations

import copy
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from fastpad.api.schemas import FieldErrorOut, NoteCreate, Problem

PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
_COMMON_PROBLEMS = {
    "401": "Not authenticated (see WWW-Authenticate)",
    "403": "Insufficient scope, out of scope or policy denied",
    "408": "Body arrived too slowly (retryable; min_bytes_per_sec)",
    "413": "Body over the route's limit",
    "422": "Validation failed (field_errors)",
    "429": "Rate limited (retry_after_ms, Retry-After)",
}


# fastpad/mcp/http.py: stateless Streamable HTTP, one JSON-RPC message per POST.
_MCP_OPERATION: dict[str, Any] = {
    "tags": ["mcp"],
    "summary": "MCP: the twelve agent tools over Streamable HTTP (stateless JSON-RPC 2.0, one message per POST)",
    "description": "Bearer token only (no session cookie). A 401 carries WWW-Authenticate naming "
                   "/.well-known/oauth-protected-resource and the scopes to ask for. Host and Origin are checked "
                   "(DNS-rebinding protection).",
    "operationId": "mcp",
    "security": [{"bearer": []}],
    "requestBody": {"required": True, "content": {"application/json": {"schema": {
        "type": "object", "required": ["jsonrpc", "method"],
        "properties": {"jsonrpc": {"const": "2.0"}, "id": {"type": ["string", "integer"]},
                       "method": {"type": "string"}, "params": {"type": "object"}},
    }}}},
    "responses": {"200": {"description": "The JSON-RPC response (application/json, or text/event-stream when "
                                         "the client accepts only that)"},
                  "202": {"description": "A notification or response from the client, accepted"},
                  "415": {"description": "unsupported-media-type: the body is not application/json"}},
}
# What the SDK itself refuses, it answers as MCP clients expect: a JSON-RPC error object (id null).
_JSONRPC_ERROR: dict[str, Any] = {
    "type": "object", "required": ["jsonrpc", "id", "error"],
    "properties": {"jsonrpc": {"const": "2.0"}, "id": {"type": ["string", "integer", "null"]},
                   "error": {"type": "object", "required": ["code", "message"],
                             "properties": {"code": {"type": "integer"}, "message": {"type": "string"}, "data": {}}}},
}
_MCP_JSONRPC_ERRORS = {
    "400": "Not JSON, or not a JSON-RPC message (a JSON-RPC error: -32700 parse error, -32602 invalid)",
    "406": "Accept does not admit application/json (a JSON-RPC error)",
}


# Every mutation takes an idempotency key (spec › API › Request shape): ``idempotencyKey`` in a JSON
# body, or the ``Idempotency-Key`` header (the server reads either on any mutation). The document
# publishes one spelling per operation — the body's where its JSON body has the member, the header
# where it has no JSON body or takes another media type too — on every POST, PUT, PATCH and DELETE
# except these, each saying why it has none; so a new route is published as keyed, and
# tests/api/test_idempotency_routes.py holds it to that.
UNKEYED: dict[tuple[str, str], str] = {
    ("post", "/v1/search"): "a read: the query is a body, nothing is written",
    ("post", "/v1/query"): "a read: the query is a body, nothing is written",
    ("post", "/v1/notes/{note_id}/placeholders/reveal"): "a read of a secret, which no record may keep",
    ("post", "/v1/session"): "signing in: no credential yet to keep a key under",
    ("post", "/v1/invitations:accept"): "joining: no credential yet to keep a key under; the link is single-use",
    ("post", "/v1/signup"): "signing up: no credential yet to keep a key under; an email holds one account",
    ("delete", "/v1/session"): "signing out ends the credential a key is kept under",
    ("post", "/v1/session/workspace"): "switching ends the session a key is kept under and opens another",
    ("post", "/v1/device/code"): "RFC 8628, before any credential: limited per address instead",
    ("post", "/v1/device/token"): "RFC 8628, before any credential: a poll, limited per address",
    ("post", "/mcp"): "JSON-RPC: a tool that writes takes idempotency_key among its arguments",
    ("post", "/v1/notes/{note_id}/presence"): "presence is kept in memory only, and a tab's post replaces its "
                                              "last one: sent twice, it is the same",
}
IDEMPOTENCY_HEADER = {
    "name": "Idempotency-Key", "in": "header", "required": False,
    "description": "Replays the first response for the same request; 409 idempotency-conflict for a "
                   "different one. The same key as a JSON body's idempotencyKey (both may be sent; they "
                   "must agree).",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": r"^[\x21-\x7e]+$"},
}
MUTATIONS = ("post", "put", "patch", "delete")


def problems(**described: str) -> dict[int | str, dict[str, Any]]:
    """Route-specific problem responses for ``responses=``: ``problems(_409="stale-frontier …")``."""
    return {int(code.lstrip("_")): {"description": text} for code, text in described.items()}


# No JSON string a request body carries may hold U+0000 (api/shape.py refuses it on every body, and
# lone surrogates too, which no regex engine that validates schemas here can name): every string
# schema of a JSON body that does not already say what it holds says so.
STORABLE_TEXT = r"^[^\x00]*$"


def _storable_strings(node: Any) -> None:
    if isinstance(node, dict):
        kind = node.get("type")
        if (kind == "string" or (isinstance(kind, list) and "string" in kind)) and not (
                node.keys() & {"pattern", "enum", "const", "format", "contentMediaType"}):
            node["pattern"] = STORABLE_TEXT
        for child in node.values():
            _storable_strings(child)
    elif isinstance(node, list):
        for child in node:
            _storable_strings(child)


def build(app: FastAPI, *, public_paths: frozenset[str]) -> dict[str, Any]:
    doc = get_openapi(
        title="Fastpad API",
        version=app.version,
        openapi_version="3.1.0",
        description=app.description,
        routes=app.routes,
        servers=[{"url": app.state.base_url}],
    )
    components = doc.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for model in (Problem, FieldErrorOut, NoteCreate):
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        for name, sub in schema.pop("$defs", {}).items():
            schemas.setdefault(name, sub)
        schemas[model.__name__] = schema
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    components["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer", "description": "fpk_live_… token"},
        "session": {"type": "apiKey", "in": "cookie", "name": "fastpad_session",
                    "description": "web session; mutations also need x-csrf-token"},
    }
    doc["security"] = [{"bearer": []}, {"session": []}]
    doc.setdefault("paths", {})["/mcp"] = {"post": copy.deepcopy(_MCP_OPERATION)}  # finished below, per document

    for path, item in doc.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict):
                continue
            public = path in public_paths or (path == "/v1/session" and method == "post")
            if public:
                operation["security"] = []
            responses = operation.setdefault("responses", {})
            if not public:
                for status, text in _COMMON_PROBLEMS.items():
                    responses.setdefault(status, {"description": text})
            responses.setdefault("default", {"description": "Any other failure"})
            if method in MUTATIONS:
                _publish_idempotency(operation, UNKEYED.get((method, path)), schemas)
            for status, response in responses.items():
                if status == "default" or status.startswith(("4", "5")):
                    response["content"] = {"application/problem+json": {"schema": PROBLEM_REF}}
    # JSON bodies only (query strings and forms are not checked that way), and the models they name
    # (answers are the *Out models, and echo what a query string carried).
    for item in doc["paths"].values():
        for operation in item.values():
            if isinstance(operation, dict):
                _storable_strings(operation.get("requestBody", {}).get("content", {}).get("application/json"))
    _storable_strings([schema for name, schema in schemas.items()
                       if not name.endswith("Out") and name not in (Problem.__name__, FieldErrorOut.__name__)])
    mcp_responses = doc["paths"]["/mcp"]["post"]["responses"]
    for status, text in _MCP_JSONRPC_ERRORS.items():
        mcp_responses[status] = {"description": text, "content": {"application/json": {"schema": _JSONRPC_ERROR}}}
    return doc


def _publish_idempotency(operation: dict[str, Any], unkeyed_because: str | None,
                         schemas: dict[str, Any]) -> None:
    """The ``Idempotency-Key`` header on a keyed mutation whose body does not carry the key;
    ``x-idempotency`` saying why on one that takes none."""
    if unkeyed_because is not None:
        operation["x-idempotency"] = f"none: {unkeyed_because}"
        return
    content = operation.get("requestBody", {}).get("content", {})
    if set(content) == {"application/json"} and body_takes_key(content["application/json"].get("schema"), schemas):
        return
    parameters = operation.setdefault("parameters", [])
    if not any(p.get("in") == "header" and p.get("name", "").lower() == "idempotency-key" for p in parameters):
        parameters.append(copy.deepcopy(IDEMPOTENCY_HEADER))


def body_takes_key(schema: Any, schemas: dict[str, Any]) -> bool:
    """Whether a JSON body schema (``$ref``s and ``anyOf`` followed) declares ``idempotencyKey``."""
    pending = [schema] if isinstance(schema, dict) else []
    while pending:
        node = pending.pop()
        if "$ref" in node:
            node = schemas.get(node["$ref"].rsplit("/", 1)[-1], {})
        if "idempotencyKey" in node.get("properties", {}):
            return True
        pending += [member for member in node.get("anyOf", []) if isinstance(member, dict)]
    return False
