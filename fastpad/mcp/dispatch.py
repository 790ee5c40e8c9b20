"""``tools/list`` and ``tools/call`` for one credential, whatever the transport.

- ``tools/list`` shows the tools the credential's scopes allow, in the spec's fixed
  order, with static descriptions; the list is private to the credential
  (``cacheScope: private``).
- ``tools/call``: an unknown tool is a protocol fault (JSON-RPC -32602); everything
  else that goes wrong is a tool result with ``isError`` carrying a problem document.
  A call is checked in this order — scopes (all missing ones named), the per-credential
  rate limit (the HTTP API's own limiter), the arguments against the tool's input
  schema, the agent session (every tool but ``fastpad_capabilities`` takes one) — then
  run in a worker thread (services are synchronous) and delivered through
  :func:`fastpad.mcp.outbound.deliver`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import anyio.to_thread
import mcp_types as types
from jsonschema import Draft202012Validator
from mcp.shared.exceptions import MCPError

from fastpad.api.problems import InternalError
from fastpad.errors import FastpadError, FieldError, InsufficientScope, ValidationFailed
from fastpad.mcp.env import McpEnv
from fastpad.mcp.outbound import deliver
from fastpad.mcp.tool import Call, ToolOutput, ToolSpec
from fastpad.security.principals import Principal
from fastpad.security.scopes import ordered

log = logging.getLogger("fastpad.mcp")

TOOLS_TTL_MS = 300_000  # a credential's scopes never change, so its list only changes with the server
MAX_FIELD_MESSAGE = 200


class Dispatcher:
    def __init__(self, env: McpEnv, tools: Sequence[ToolSpec]) -> None:
        self.env = env
        self.tools = tuple(tools)
        self.by_name = {tool.name: tool for tool in self.tools}
        self.validators = {tool.name: Draft202012Validator(tool.input_schema) for tool in self.tools}

    def list_tools(self, principal: Principal) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[tool.listing(principal) for tool in self.tools if tool.visible_to(principal)],
            ttl_ms=TOOLS_TTL_MS, cache_scope="private",
        )

    async def call_tool(self, principal: Principal, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        tool = self.by_name.get(name)
        if tool is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")
        call = Call(tool, principal, dict(arguments or {}), self.env)
        try:
            refusal = scope_refusal(principal, tool)
            if refusal is not None:
                raise refusal
            self.env.limiter.hit(principal.rate_key, principal.rate_limit_per_minute, what="tool calls")
            call = Call(tool, principal, check_arguments(tool, self.validators[name], call.args), self.env)
        except FastpadError as error:
            return await anyio.to_thread.run_sync(_deliver, call, error)
        if inspect.iscoroutinefunction(tool.run):  # a tool that waits (the change feed's long poll)
            return await _run_waiting(call)
        return await anyio.to_thread.run_sync(_run, call)


async def _run_waiting(call: Call) -> types.CallToolResult:
    try:
        await anyio.to_thread.run_sync(call.deployment.review.check_session, call.principal, call.session)
        output = await call.tool.run(call)
    except FastpadError as error:
        return await anyio.to_thread.run_sync(_deliver, call, error)
    except Exception:
        return await anyio.to_thread.run_sync(_deliver, call, _server_fault(call))
    return await anyio.to_thread.run_sync(_deliver, call, output)


def _run(call: Call) -> types.CallToolResult:
    try:
        if call.tool.needs_session:
            call.deployment.review.check_session(call.principal, call.session)
        output = call.tool.run(call)
    except FastpadError as error:
        return _deliver(call, error)
    except Exception:
        return _deliver(call, _server_fault(call))
    return _deliver(call, output)


def _deliver(call: Call, outcome: ToolOutput | FastpadError) -> types.CallToolResult:
    try:
        return deliver(call, outcome)
    except Exception:
        return deliver(call, _server_fault(call))


def _server_fault(call: Call) -> InternalError:
    """A bug, not the caller's fault: the caller gets a problem document, the log gets the trace."""
    log.exception("tool %s failed", call.tool.name)
    return InternalError(detail=f"{call.tool.name} failed on the server.")


def scope_refusal(principal: Principal, tool: ToolSpec) -> InsufficientScope | None:
    """``insufficient-scope`` naming every scope the tool needs that the credential lacks;
    ``required`` is the full set to re-authorize for once (what it holds plus what is missing)."""
    missing = [scope for scope in tool.scopes if not principal.has(scope)]
    if not missing:
        return None
    return InsufficientScope(
        detail=f"{tool.name} needs {', '.join(missing)}, which this credential lacks.",
        extra={"required": ordered(set(principal.scopes) | set(tool.scopes)), "missing": missing, "tool": tool.name},
        next_call="re-authorize once for every scope listed in required",
    )


def check_arguments(tool: ToolSpec, validator: Draft202012Validator, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments, if they match the tool's input schema; else ``validation-failed`` naming each field."""
    errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return dict(arguments)
    # The validator reports each missing argument on its own, but an error does not say
    # which one: every error of a kind is expanded, then repeats are dropped.
    field_errors = list(dict.fromkeys(fe for error in errors for fe in _field_errors(error)))
    session_missing = any(fe.field == "session" for fe in field_errors)
    raise ValidationFailed(
        detail=f"{len(field_errors)} argument(s) of {tool.name} failed validation: {field_errors[0].field}: "
               f"{field_errors[0].message}",
        field_errors=field_errors,
        next_call="fastpad_capabilities, then pass the session it returns" if session_missing
        else f"fix the fields named in field_errors and call {tool.name} again",
    )


def _field_errors(error: Any) -> list[FieldError]:
    path = _dotted(list(error.absolute_path))

    def at(name: str) -> str:
        return f"{path}.{name}" if path else name

    if error.validator == "required":
        present = error.instance if isinstance(error.instance, dict) else {}
        return [FieldError(at(name), "required", f"{name} is required")
                for name in error.validator_value if name not in present]
    if error.validator == "additionalProperties":
        known = sorted((error.schema.get("properties") or {}))
        extra = sorted(set(error.instance) - set(known)) if isinstance(error.instance, dict) else []
        return [FieldError(at(name), "unknown_field", f"not an argument; known: {', '.join(known)}")
                for name in extra or [path]]
    message = error.message if len(error.message) <= MAX_FIELD_MESSAGE else error.message[:MAX_FIELD_MESSAGE] + "…"
    return [FieldError(path or "arguments", str(error.validator), message)]


def _dotted(path: list[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
