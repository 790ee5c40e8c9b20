"""The HTTP API's outbound path for callers who are not people: every answer passes here.

A route cannot forget it: this middleware sits around every route, and an answer to a
credential whose principal is not a person (an agent token, an OAuth client) is rewritten on
its way out, by the same rules as the MCP tools' results
(:func:`fastpad.outbound.documents.prepare_document`):

- JSON (results and problem documents alike): blocks below the caller's trust floor left out
  (the floor a route took as a parameter, ``request.state.floor``, else the agent default),
  a lone block below it refused, a note's title below it replaced by a stand-in and its
  properties below it left out (:mod:`fastpad.outbound.titles`), secrets masked, links
  neutralised, identifiers untouched;
- NDJSON (``GET /v1/export``): each line as JSON;
- Markdown and plain text: secrets masked and links neutralised (the service renders an
  agent's Markdown from the blocks its floor admits: ``NoteService.markdown`` and ``export``);
- anything else — Loro state, attachments, pages meant for a person — is refused with
  ``policy-denied``: a representation nobody vetted for agents never reaches one.

People (a signed-in session, a person's CLI credential) get the stored text unchanged.
``/mcp`` has its own outbound function (``fastpad/mcp/outbound.deliver``) and is left alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fastpad.errors import PolicyDenied
from fastpad.knowledge.hidden import below_floor
from fastpad.knowledge.trust import TrustFloor, admits, floor_for
from fastpad.outbound import OutboundPolicy, prepare
from fastpad.outbound.documents import is_block, prepare_document
from fastpad.outbound.titles import BelowFloor, count_held_titles, hold_names, named_note_ids
from fastpad.security.principals import Principal

_JSON = ("application/json", "application/problem+json")
_NDJSON = "application/x-ndjson"
_TEXT = ("text/markdown", "text/plain")


class AgentOutboundMiddleware:
    def __init__(self, app: ASGIApp, *, policy_for: Callable[[Principal], OutboundPolicy],
                 refuse: Callable[[PolicyDenied, Scope], Any],
                 names_below: Callable[[Principal, set[str], TrustFloor], BelowFloor],
                 own_outbound: tuple[str, ...] = ("/mcp",)) -> None:
        self.app = app
        self.policy_for = policy_for
        self.names_below = names_below
        self.refuse = refuse
        self.own_outbound = own_outbound

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(self.own_outbound):
            await self.app(scope, receive, send)
            return
        held: dict[str, Any] = {}  # an agent's answer, while its body arrives: start message, principal, chunks
        passing: bool | None = None  # decided at the response's start: True for a person's answer

        async def outbound(message: Message) -> None:
            nonlocal passing
            if passing is None and message["type"] == "http.response.start":
                principal = _principal(scope)
                passing = principal is None or principal.is_person
                if not passing:
                    held.update(start=message, principal=principal, body=[])
                    return
            if passing or message["type"] != "http.response.body":
                await send(message)
                return
            held["body"].append(message.get("body", b""))
            if not message.get("more_body"):
                await self._send_prepared(held["start"], held["principal"], b"".join(held["body"]), scope, send)

        await self.app(scope, receive, outbound)

    async def _send_prepared(self, start: Message, principal: Principal, body: bytes, scope: Scope, send: Send) -> None:
        headers = MutableHeaders(raw=list(start["headers"]))
        media = headers.get("content-type", "").split(";")[0].strip().lower()
        policy = self.policy_for(principal)
        refusal = None
        # The floor the route ran at, when it took one as a parameter; else the caller's default.
        floor = (scope.get("state") or {}).get("floor") or floor_for(principal)

        def admit(origin: Any, review_state: Any) -> bool:
            return admits(floor, origin, review_state)

        def held(value: Any) -> Any:
            below = self.names_below(principal, named_note_ids(value), floor)
            return count_held_titles(hold_names(value, below), below,
                                     lambda n: below_floor(n, "titles", TrustFloor(floor)).as_dict())

        if media in _JSON and body:
            value = json.loads(body)
            if is_block(value) and not admit(value["origin"], value["review_state"]):
                refusal = PolicyDenied(detail=f"This block is below your trust floor ({floor.value}).",
                                       extra={"reason": "below_floor", "floor": floor.value})
            value = prepare_document(held(value), policy, admit)
            body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
        elif media == _NDJSON:
            lines = (json.loads(line) for line in body.splitlines() if line.strip())
            body = b"".join(json.dumps(prepare_document(held(line), policy, admit), ensure_ascii=False,
                                       separators=(",", ":")).encode() + b"\n" for line in lines)
        elif media in _TEXT:
            body = prepare(body.decode(), policy).text.encode()
        elif body and start["status"] < 300:
            refusal = PolicyDenied(
                detail="This representation is for people; agents read notes as redacted JSON or Markdown.",
                extra={"reason": "person_only"}, next_call="GET /v1/notes/{id} with Accept: application/json",
            )
        if refusal is not None:
            await self.refuse(refusal, scope)(scope, _nothing, send)
            return
        headers["content-length"] = str(len(body))
        if "etag" in headers:
            del headers["etag"]  # the validator named the stored representation, not this one
        await send({"type": "http.response.start", "status": start["status"], "headers": headers.raw})
        await send({"type": "http.response.body", "body": body})


def _principal(scope: Scope) -> Principal | None:
    caller = (scope.get("state") or {}).get("caller")
    return getattr(caller, "principal", None)


async def _nothing() -> Message:
    return {"type": "http.disconnect"}
