"""Every route of the OpenAPI document, classified, and what an agent token sends to each when it
attacks: the request, aimed at an estate (``tests/security/world.py``), and what the server must
answer in each category of attack (:func:`expected`). Shared by the tests and ``bench/security.py``.

A route's class says what it reaches — nothing of a workspace (``PUBLIC``), the MCP tools' own
outbound path (``OWN_OUTBOUND``, attacked tool by tool in ``tests/security/tools.py``), a read or
a write — and what it names:

- ``NOTE``: a note, by the id in its path or body. A token whose note set leaves it out is
  refused ``out-of-scope`` (decided from the set alone); a note of another workspace is
  ``not-found``.
- ``THING``: something found by its own id or name (a turn, an edge, a topic, an import…). One
  out of the caller's reach is ``not-found``, as if it did not exist: a refusal would say it does.
- ``WORKSPACE``: the workspace as a whole (lists, search, the feed, creating). It answers from
  what the caller may reach.

``person_only`` is the refusal every agent gets from a route only a person may use; ``answer`` is
what an agent allowed to use the route gets when it is not simply an answer (``/v1/ask`` without
a model provider); ``exceptions`` are the answers, category by category, that these rules do not
give — each with the reason.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from fastpad.notes.ids import new_id
from tests.security.tally import (ANSWERS, APPROVE_NOT_PERMITTED, NOT_FOUND, OUT_OF_SCOPE, POLICY_DENIED,
                                  UNAUTHENTICATED, VALIDATION_FAILED, Expect, Tally)
from tests.security.world import Estate, Note

PUBLIC, OWN_OUTBOUND, READ, WRITE = "public", "own outbound", "read", "write"
NOTE, THING, WORKSPACE = "note", "thing", "workspace"
# The categories of attack a route's answer is judged in.
PLANTED = "planted material"  # a secret, a live URL, text below the floor
OUTSIDE_SET = "a note outside the token's note set"
ELSEWHERE = "another workspace's notes, by id"
NAMED_ELSEWHERE = "another workspace, named in x-fastpad-workspace"
PERSON_ONLY = "a person-only action"
REVOKED = "a revoked token"
SESSION_HEADER = "x-fastpad-session"
WORKSPACE_HEADER = "x-fastpad-workspace"


@dataclass(frozen=True)
class Aim:
    """What one attempt is pointed at."""

    estate: Estate
    note: Note  # the note a route that names one is sent to
    session: str  # the caller's own agent session
    reachable: str  # a note the caller may reach, for a body that names a second note


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)


def get(path: str, **params: Any) -> Callable[[Aim], list[Call]]:
    return lambda aim: [Call("GET", path.format(**_slots(aim)),
                             {k: str(v).format(**_slots(aim)) for k, v in params.items()} or None)]


def send(method: str, path: str, body: Callable[[Aim], Any] | None = None) -> Callable[[Aim], list[Call]]:
    return lambda aim: [Call(method, path.format(**_slots(aim)), json=body(aim) if body else None)]


def _slots(aim: Aim) -> dict[str, str]:
    estate = aim.estate
    return {"note_id": aim.note.id, "block_id": aim.note.blocks[-1], "turn_id": estate.turn, "link_id": estate.link,
            "collection_id": estate.collection, "topic": estate.topic, "import_id": estate.import_id,
            "name": estate.kind, "term": estate.term, "comment_id": estate.comment}


@dataclass(frozen=True)
class Route:
    """A route of the HTTP API, or one way of calling an MCP tool (``tests/security/tools.py``):
    ``request`` gives what is sent for an aim — HTTP calls, or a tool's arguments."""

    reach: str
    names: str = WORKSPACE
    request: Callable[[Aim], list[Any]] | None = None
    person_only: Expect | None = None
    answer: Expect | None = ANSWERS
    exceptions: Mapping[str, Expect | None] = field(default_factory=dict)


Keep = Callable[[Route], bool]  # which routes (or tool calls) an attack sends


WINDOW = {"start": "2026-01-01T00:00:00Z", "end": "2027-01-01T00:00:00Z"}  # a year: the calendar takes 366 days
NO_PROVIDER = Expect(503, "provider-not-configured")
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
PERSON = POLICY_DENIED  # what every agent gets from a route only a person may use
# Imports and the workspace's collections reach the whole workspace: a token limited to a
# set of notes is refused them outright, before anything is looked up.
WHOLE_WORKSPACE = {OUTSIDE_SET: OUT_OF_SCOPE}
# A bulk answer is a 200 whose items each carry their own refusal.
BULK = {OUTSIDE_SET: Expect(200, item="out-of-scope"), ELSEWHERE: Expect(200, item="not-found")}
# Collection definitions and types are the workspace's schema, which a token limited to a set of notes
# reads too: notes embed collections, and a note's typed properties need their types. Rows are run
# under the caller's note set.
SCHEMA = {OUTSIDE_SET: ANSWERS}
# Refused to an agent only once what it names is found: accepting a turn it can see and did not open,
# removing an edge a person made. One out of reach is not-found first.
LOOKED_UP_FIRST = {OUTSIDE_SET: NOT_FOUND, ELSEWHERE: NOT_FOUND}
# Another workspace's type is no type here: a query or collection over it is refused as invalid.
NO_SUCH_TYPE = {ELSEWHERE: VALIDATION_FAILED}
# A block's accepted uses are looked up by the block; one out of reach has none.
NO_USES = {OUTSIDE_SET: ANSWERS, ELSEWHERE: ANSWERS, NAMED_ELSEWHERE: ANSWERS}

ROUTES: dict[str, Route] = {
    # Nothing of a workspace in them; the agent's credential is sent anyway.
    "GET /.well-known/oauth-authorization-server": Route(PUBLIC,
                                                         request=get("/.well-known/oauth-authorization-server")),
    "GET /.well-known/oauth-protected-resource": Route(PUBLIC, request=get("/.well-known/oauth-protected-resource")),
    "GET /errors": Route(PUBLIC, request=get("/errors")),
    "GET /errors/{slug}": Route(PUBLIC, request=get("/errors/out-of-scope")),
    "GET /health": Route(PUBLIC, request=get("/health")),
    "POST /v1/device/code": Route(PUBLIC, request=send("POST", "/v1/device/code", lambda aim: {"client_id": "probe"})),
    "POST /v1/device/token": Route(PUBLIC, request=send("POST", "/v1/device/token", lambda aim: {
        "client_id": "probe", "device_code": "forged", "grant_type": "urn:ietf:params:oauth:grant-type:device_code"})),
    "POST /v1/session": Route(PUBLIC, request=send("POST", "/v1/session", lambda aim: {
        "email": "nobody@example.com", "password": "not a password"})),
    # Joining: a forged invitation link is not-found to anyone; sign-up here is by invitation only.
    "POST /v1/invitations:accept": Route(PUBLIC, request=send("POST", "/v1/invitations:accept", lambda aim: {
        "token": "fpi_forged", "display_name": "Agent", "password": "an agent's password"}), answer=NOT_FOUND),
    "POST /v1/signup": Route(PUBLIC, request=send("POST", "/v1/signup", lambda aim: {
        "email": "agent@example.com", "password": "an agent's password", "display_name": "Agent"}),
        answer=POLICY_DENIED),
    "POST /mcp": Route(OWN_OUTBOUND),
    # A published note's public pages: one not published is not-found to anyone, whatever they hold.
    "GET /n/{note_id}": Route(PUBLIC, NOTE, get("/n/{note_id}"), answer=NOT_FOUND),
    "GET /v1/public/notes/{note_id}": Route(PUBLIC, NOTE, get("/v1/public/notes/{note_id}"), answer=NOT_FOUND),

    "GET /v1/members": Route(READ, request=get("/v1/members"), person_only=PERSON,
                             exceptions={NAMED_ELSEWHERE: ANSWERS}),
    "GET /v1/agents": Route(READ, request=get("/v1/agents"), person_only=PERSON,
                            # Naming another workspace answers its nothing before the directory is asked.
                            exceptions={NAMED_ELSEWHERE: ANSWERS}),
    # The workspace audit log: a signed-in owner or admin only, whatever a token's scopes.
    "GET /v1/audit": Route(READ, request=get("/v1/audit"), person_only=PERSON),
    "GET /v1/attachments/{attachment_id}": Route(READ, THING, lambda aim: [Call("GET", f"/v1/attachments/{new_id()}")]),
    "GET /v1/calendar": Route(READ, request=get("/v1/calendar", **WINDOW)),
    "GET /v1/changes": Route(READ, request=get("/v1/changes", limit=200)),
    "GET /v1/collections": Route(READ, request=get("/v1/collections")),
    "GET /v1/collections/{collection_id}": Route(READ, THING, get("/v1/collections/{collection_id}"),
                                                 exceptions=SCHEMA),
    "GET /v1/collections/{collection_id}/rows": Route(READ, THING, get("/v1/collections/{collection_id}/rows"),
                                                      exceptions=SCHEMA),
    "GET /v1/export": Route(READ, request=lambda aim: [
        Call("GET", "/v1/export"), Call("GET", "/v1/export", headers={"accept": "application/zip"})]),
    "GET /v1/imports/{import_id}": Route(READ, THING, get("/v1/imports/{import_id}"), exceptions=WHOLE_WORKSPACE),
    "GET /v1/imports/{import_id}/ledger": Route(READ, THING, get("/v1/imports/{import_id}/ledger"),
                                                exceptions=WHOLE_WORKSPACE),
    "GET /v1/memory": Route(READ, request=get("/v1/memory")),
    "GET /v1/memory/{topic}": Route(READ, THING, get("/v1/memory/{topic}")),
    "GET /v1/notes": Route(READ, request=get("/v1/notes", limit=200, include_archived="true")),
    "GET /v1/notes/{note_id}": Route(READ, NOTE, lambda aim: [
        Call("GET", f"/v1/notes/{aim.note.id}"),
        Call("GET", f"/v1/notes/{aim.note.id}", headers={"accept": "text/markdown"})]),
    "GET /v1/notes/{note_id}/blocks/{block_id}": Route(READ, NOTE, get("/v1/notes/{note_id}/blocks/{block_id}")),
    # History holds text the reader's floor may no longer admit: a person's alone, like the CRDT state.
    "GET /v1/notes/{note_id}/history": Route(READ, NOTE, get("/v1/notes/{note_id}/history"), person_only=PERSON),
    "GET /v1/notes/{note_id}/handles": Route(READ, NOTE, lambda aim: [
        Call("GET", f"/v1/notes/{aim.note.id}/handles", headers={SESSION_HEADER: aim.session})]),
    "GET /v1/notes/{note_id}/links": Route(READ, NOTE, get("/v1/notes/{note_id}/links")),
    "GET /v1/notes/{note_id}/publication": Route(READ, NOTE, get("/v1/notes/{note_id}/publication")),
    "GET /v1/notes/{note_id}/provenance": Route(READ, NOTE, get("/v1/notes/{note_id}/provenance")),
    "GET /v1/notes/{note_id}/neighbors": Route(READ, NOTE, get("/v1/notes/{note_id}/neighbors", direction="both")),
    "GET /v1/notes/{note_id}/snapshot": Route(READ, NOTE, get("/v1/notes/{note_id}/snapshot"), person_only=PERSON),
    "GET /v1/notes/{note_id}/successors": Route(READ, NOTE, get("/v1/notes/{note_id}/successors")),
    "GET /v1/notes/{note_id}/updates": Route(READ, NOTE, get("/v1/notes/{note_id}/updates"), person_only=PERSON),
    "GET /v1/search": Route(READ, request=get("/v1/search", q="{term}", limit=50)),
    "POST /v1/search": Route(READ, request=send("POST", "/v1/search", lambda aim: {"q": aim.estate.term, "limit": 50})),
    "POST /v1/query": Route(READ, request=send("POST", "/v1/query", lambda aim: {"type": aim.estate.kind}),
                            exceptions=NO_SUCH_TYPE),
    "GET /v1/session": Route(READ, request=get("/v1/session"), person_only=PERSON),
    "GET /v1/sources/{block_id}/accepted": Route(READ, THING, get("/v1/sources/{block_id}/accepted"),
                                                 exceptions=NO_USES),
    "GET /v1/turns": Route(READ, request=get("/v1/turns", activity="true")),
    "GET /v1/turns/{turn_id}": Route(READ, THING, get("/v1/turns/{turn_id}")),
    "GET /v1/turns/{turn_id}/diff": Route(READ, THING, get("/v1/turns/{turn_id}/diff")),
    "GET /v1/types": Route(READ, request=get("/v1/types")),
    "GET /v1/types/{name}": Route(READ, THING, get("/v1/types/{name}"), exceptions=SCHEMA),
    "POST /v1/ask": Route(READ, request=send("POST", "/v1/ask", lambda aim: {
        "question": f"What is {aim.estate.term}?"}), answer=NO_PROVIDER,
        # A paid call runs under its idempotency key like a write, so acting nowhere it finds nothing to ask.
        exceptions={NAMED_ELSEWHERE: NOT_FOUND}),

    "POST /v1/agent-sessions": Route(WRITE, request=send("POST", "/v1/agent-sessions")),
    "POST /v1/capture": Route(WRITE, request=send("POST", "/v1/capture", lambda aim: {
        "text": "An agent's clipping.", "idempotencyKey": f"probe-{new_id()}"}), exceptions=WHOLE_WORKSPACE),
    "POST /v1/collections": Route(WRITE, request=send("POST", "/v1/collections", lambda aim: {
        "name": "An agent's collection", "query": {"type": aim.estate.kind}}),
        exceptions={**WHOLE_WORKSPACE, **NO_SUCH_TYPE}),
    "PATCH /v1/collections/{collection_id}": Route(WRITE, THING, send("PATCH", "/v1/collections/{collection_id}",
                                                                      lambda aim: {"name": "Renamed by an agent"}),
                                                   exceptions=WHOLE_WORKSPACE),
    "DELETE /v1/collections/{collection_id}": Route(WRITE, THING, send("DELETE", "/v1/collections/{collection_id}"),
                                                    exceptions=WHOLE_WORKSPACE),
    "POST /v1/attachments": Route(WRITE, request=lambda aim: [Call(
        "POST", "/v1/attachments", params={"name": "pixel.png"}, content=PNG, headers={"content-type": "image/png"})]),
    "POST /v1/imports/{import_id}/verify": Route(WRITE, THING, send("POST", "/v1/imports/{import_id}/verify"),
                                                 person_only=PERSON),
    "POST /v1/imports/{import_id}/unverify": Route(WRITE, THING, send("POST", "/v1/imports/{import_id}/unverify"),
                                                   person_only=PERSON),
    "POST /v1/imports": Route(WRITE, request=send("POST", "/v1/imports", lambda aim: {"size": 4}),
                              exceptions=WHOLE_WORKSPACE),
    "PUT /v1/imports/{import_id}/archive": Route(WRITE, THING, lambda aim: [
        Call("PUT", f"/v1/imports/{aim.estate.import_id}/archive", params={"offset": 0}, content=b"PK\x03\x04",
             headers={"content-type": "application/octet-stream"})], exceptions=WHOLE_WORKSPACE),
    "POST /v1/imports/{import_id}/cancel": Route(WRITE, THING, send("POST", "/v1/imports/{import_id}/cancel"),
                                                 exceptions=WHOLE_WORKSPACE),
    "POST /v1/links": Route(WRITE, NOTE, send("POST", "/v1/links", lambda aim: {
        "source_note_id": aim.note.id, "type": "related", "target_note_id": aim.reachable})),
    "POST /v1/links/{link_id}/promote": Route(WRITE, THING, send("POST", "/v1/links/{link_id}/promote"),
                                              person_only=PERSON),
    "DELETE /v1/links/{link_id}": Route(WRITE, THING, send("DELETE", "/v1/links/{link_id}"), person_only=PERSON,
                                        exceptions=LOOKED_UP_FIRST),
    "POST /v1/memory": Route(WRITE, NOTE, send("POST", "/v1/memory", lambda aim: {
        "note_id": aim.note.id, "name": f"agent-{new_id()[-8:].lower()}"})),
    "DELETE /v1/memory/{topic}": Route(WRITE, THING, send("DELETE", "/v1/memory/{topic}")),
    "POST /v1/notes": Route(WRITE, request=send("POST", "/v1/notes", lambda aim: {
        "title": "An agent's note", "markdown": "Written by an agent.\n"}), exceptions=WHOLE_WORKSPACE),
    "POST /v1/notes:batch": Route(WRITE, request=send("POST", "/v1/notes:batch", lambda aim: {
        "items": [{"title": "An agent's batch note", "markdown": "Written by an agent.\n"}]}),
        exceptions={OUTSIDE_SET: BULK[OUTSIDE_SET]}),
    "POST /v1/notes/types:bulk": Route(WRITE, NOTE, send("POST", "/v1/notes/types:bulk", lambda aim: {
        "items": [{"note_id": aim.note.id, "add": [aim.estate.kind]}]}), exceptions=BULK),
    "PATCH /v1/notes/{note_id}/types": Route(WRITE, NOTE, send("PATCH", "/v1/notes/{note_id}/types",
                                                               lambda aim: {"add": [aim.estate.kind]})),
    "POST /v1/notes/{note_id}/ops": Route(WRITE, NOTE, send("POST", "/v1/notes/{note_id}/ops", lambda aim: {
        "ops": base64.b64encode(b"any update").decode(), "expectedFrontier": aim.note.frontier}), person_only=PERSON),
    "POST /v1/notes/{note_id}/proposals": Route(WRITE, NOTE, lambda aim: [Call(
        # No handle needed to insert at the start: the handle attacks are tests/security/handles.py's.
        "POST", f"/v1/notes/{aim.note.id}/proposals", headers={SESSION_HEADER: aim.session}, json={
            "ops": [{"op": "insert_after", "handle": None, "text": "An agent's sentence."}],
            "expected_frontier": aim.note.frontier, "idempotency_key": f"probe-{new_id()}"})]),
    "POST /v1/notes/{note_id}/rename": Route(WRITE, NOTE, send("POST", "/v1/notes/{note_id}/rename",
                                                               lambda aim: {"title": "Renamed by an agent"}),
                                             person_only=PERSON),
    "POST /v1/notes/{note_id}/archive": Route(WRITE, NOTE, send("POST", "/v1/notes/{note_id}/archive"),
                                              person_only=PERSON),
    # The planted secret's placeholder as an agent is shown it: expanding it is a person's act.
    "POST /v1/notes/{note_id}/placeholders/reveal": Route(
        WRITE, NOTE, send("POST", "/v1/notes/{note_id}/placeholders/reveal",
                          lambda aim: {"placeholder": "[redacted:aws-access-key:000000]"}), person_only=PERSON),
    "POST /v1/notes/{note_id}/unarchive": Route(WRITE, NOTE, send("POST", "/v1/notes/{note_id}/unarchive"),
                                                person_only=PERSON),
    "POST /v1/notes/{note_id}/supersede": Route(WRITE, NOTE, send("POST", "/v1/notes/{note_id}/supersede",
                                                                  lambda aim: {"by": aim.reachable}),
                                                person_only=PERSON),
    # Restoring a version is a person's edit; an agent proposes the text instead.
    "POST /v1/notes/{note_id}/history:restore": Route(
        WRITE, NOTE, send("POST", "/v1/notes/{note_id}/history:restore", lambda aim: {"at": aim.note.frontier}),
        person_only=PERSON),
    # Ratifying a block is a person vouching for text they read: no agent can vouch for its own.
    "POST /v1/notes/{note_id}/blocks/{block_id}/mark-reviewed": Route(
        WRITE, NOTE, send("POST", "/v1/notes/{note_id}/blocks/{block_id}/mark-reviewed"), person_only=PERSON),
    # An agent that could publish could read the workspace back from outside (spec: Publishing).
    "PUT /v1/notes/{note_id}/publication": Route(WRITE, NOTE, send("PUT", "/v1/notes/{note_id}/publication"),
                                                 person_only=PERSON),
    "DELETE /v1/notes/{note_id}/publication": Route(WRITE, NOTE, send("DELETE", "/v1/notes/{note_id}/publication"),
                                                    person_only=PERSON),
    "POST /v1/notes/{note_id}/trash": Route(WRITE, NOTE, send("POST", "/v1/notes/{note_id}/trash")),
    "POST /v1/notes/{note_id}/restore": Route(WRITE, NOTE, send("POST", "/v1/notes/{note_id}/restore")),
    "POST /v1/sources/{block_id}/retract": Route(WRITE, THING, send("POST", "/v1/sources/{block_id}/retract"),
                                                 person_only=PERSON),
    "POST /v1/tokens/delegate": Route(WRITE, request=send("POST", "/v1/tokens/delegate",
                                                          lambda aim: {"label": "an agent's own agent"}),
                                      person_only=PERSON),
    "POST /v1/turns/{turn_id}/accept": Route(WRITE, THING, send("POST", "/v1/turns/{turn_id}/accept"),
                                             person_only=APPROVE_NOT_PERMITTED, exceptions=LOOKED_UP_FIRST),
    "POST /v1/turns/{turn_id}/accept-some": Route(WRITE, THING, send("POST", "/v1/turns/{turn_id}/accept-some",
                                                                     lambda aim: {"block_ids": []}),
                                                  person_only=APPROVE_NOT_PERMITTED, exceptions=LOOKED_UP_FIRST),
    "POST /v1/turns/{turn_id}/abandon": Route(WRITE, THING, send("POST", "/v1/turns/{turn_id}/abandon")),
    "POST /v1/turns/{turn_id}/reject": Route(WRITE, THING, send("POST", "/v1/turns/{turn_id}/reject"),
                                             person_only=PERSON),
    "POST /v1/turns/{turn_id}/reject-some": Route(WRITE, THING, send("POST", "/v1/turns/{turn_id}/reject-some",
                                                                     lambda aim: {"block_ids": []}),
                                                  person_only=PERSON),
    "POST /v1/turns/{turn_id}/mark-reviewed": Route(WRITE, THING, send("POST", "/v1/turns/{turn_id}/mark-reviewed"),
                                                    person_only=PERSON),
    "POST /v1/turns/{turn_id}/revert": Route(WRITE, THING, send("POST", "/v1/turns/{turn_id}/revert"),
                                             person_only=PERSON),
    "POST /v1/types": Route(WRITE, request=send("POST", "/v1/types", lambda aim: {"name": f"Agent_{new_id()[-8:]}"})),
    "PATCH /v1/types/{name}": Route(WRITE, THING, send("PATCH", "/v1/types/{name}", lambda aim: {
        "properties": [{"name": f"agent_{new_id()[-6:].lower()}", "kind": "text"}]}), exceptions=SCHEMA),
    # A team (routes/team.py): only a signed-in person manages people or their own account. A write
    # naming another workspace acts nowhere and finds nothing before the person check.
    "POST /v1/invitations": Route(WRITE, request=send("POST", "/v1/invitations", lambda aim: {
        "email": "someone@example.com"}), person_only=PERSON, exceptions={NAMED_ELSEWHERE: NOT_FOUND}),
    "GET /v1/invitations": Route(READ, request=get("/v1/invitations"), person_only=PERSON,
                                 exceptions={NAMED_ELSEWHERE: ANSWERS}),
    "DELETE /v1/invitations/{invitation_id}": Route(WRITE, THING, send("DELETE", f"/v1/invitations/{new_id()}"),
                                                    person_only=PERSON),
    "PATCH /v1/members/{person_id}": Route(WRITE, THING, send("PATCH", f"/v1/members/{new_id()}",
                                                              lambda aim: {"role": "owner"}), person_only=PERSON),
    "DELETE /v1/members/{person_id}": Route(WRITE, THING, send("DELETE", f"/v1/members/{new_id()}"),
                                            person_only=PERSON),
    # Comments (routes/comments.py): an agent reads them through fastpad_fetch only; with notes:write it
    # comments, resolves and reopens, and gets back its own comments only, never the text a range quotes;
    # another's comment it neither edits nor deletes.
    "GET /v1/notes/{note_id}/comments": Route(READ, NOTE, get("/v1/notes/{note_id}/comments"), person_only=PERSON),
    "POST /v1/notes/{note_id}/comments": Route(WRITE, NOTE, send("POST", "/v1/notes/{note_id}/comments", lambda aim: {
        "body": "An agent's remark", "blockId": aim.note.blocks[-1]})),
    "PATCH /v1/comments/{comment_id}": Route(WRITE, THING, send("PATCH", "/v1/comments/{comment_id}", lambda aim: {
        "body": "An agent's rewrite"}), answer=POLICY_DENIED),
    "DELETE /v1/comments/{comment_id}": Route(WRITE, THING, send("DELETE", "/v1/comments/{comment_id}"),
                                              answer=POLICY_DENIED),
    "POST /v1/comments/{comment_id}/resolve": Route(WRITE, THING, send("POST", "/v1/comments/{comment_id}/resolve")),
    "POST /v1/comments/{comment_id}/reopen": Route(WRITE, THING, send("POST", "/v1/comments/{comment_id}/reopen")),
    # Presence (who is in a note now) is people's: an agent shows where it works by its proposals.
    "GET /v1/notes/{note_id}/presence": Route(READ, NOTE, get("/v1/notes/{note_id}/presence"), person_only=PERSON),
    "POST /v1/notes/{note_id}/presence": Route(WRITE, NOTE, send("POST", "/v1/notes/{note_id}/presence", lambda aim: {
        "tab": "agent-tab-0001", "leave": True}), person_only=PERSON),
    # A person's Inbox of mentions: no agent has one, or reads or marks anyone's.
    "GET /v1/inbox/mentions": Route(READ, request=get("/v1/inbox/mentions"), person_only=PERSON,
                                    exceptions={NAMED_ELSEWHERE: ANSWERS}),
    "PATCH /v1/inbox/mentions/{mention_id}": Route(WRITE, THING, send("PATCH", f"/v1/inbox/mentions/{new_id()}",
                                                                      lambda aim: {"read": True}), person_only=PERSON),
    "POST /v1/inbox/mentions:read-all": Route(WRITE, request=send("POST", "/v1/inbox/mentions:read-all"),
                                              person_only=PERSON, exceptions={NAMED_ELSEWHERE: NOT_FOUND}),
    "GET /v1/account": Route(READ, request=get("/v1/account"), person_only=PERSON),
    "PATCH /v1/account": Route(WRITE, request=send("PATCH", "/v1/account", lambda aim: {"display_name": "Agent"}),
                               person_only=PERSON, exceptions={NAMED_ELSEWHERE: NOT_FOUND}),
    "POST /v1/account/password": Route(WRITE, request=send("POST", "/v1/account/password", lambda aim: {
        "current_password": "a guess at it", "new_password": "an agent's password"}), person_only=PERSON,
        exceptions={NAMED_ELSEWHERE: NOT_FOUND}),
    "GET /v1/sessions": Route(READ, request=get("/v1/sessions"), person_only=PERSON),
    "DELETE /v1/sessions/{session_id}": Route(WRITE, THING, send("DELETE", f"/v1/sessions/{new_id()}"),
                                              person_only=PERSON),
    # Several workspaces (routes/workspaces.py, routes/session.py): a signed-in person's; a token stays in its one.
    "GET /v1/workspaces": Route(READ, request=get("/v1/workspaces"), person_only=PERSON),
    "POST /v1/workspaces": Route(WRITE, request=send("POST", "/v1/workspaces", lambda aim: {"name": "An agent's"}),
                                 person_only=PERSON, exceptions={NAMED_ELSEWHERE: NOT_FOUND}),
    "POST /v1/session/workspace": Route(WRITE, request=send("POST", "/v1/session/workspace", lambda aim: {
        "workspace_id": aim.estate.workspace_id}), person_only=PERSON),
    # For a bearer token there is no web session to end: it answers 204 and ends nothing.
    "DELETE /v1/session": Route(WRITE, request=send("DELETE", "/v1/session"), exceptions={NAMED_ELSEWHERE: ANSWERS}),
}


def expected(route: Route, category: str) -> Expect | None:
    """What an agent must be answered by ``route`` in one category of attack."""
    if category in route.exceptions:
        return route.exceptions[category]
    if route.reach == PUBLIC:
        return route.answer
    if category == REVOKED:
        return UNAUTHENTICATED
    if category == NAMED_ELSEWHERE:  # acting nowhere: nothing is found, nothing is written
        if route.names != WORKSPACE:
            return NOT_FOUND
        if route.person_only:
            return route.person_only
        return route.answer if route.reach == READ else NOT_FOUND
    if route.person_only:
        return route.person_only
    if category == OUTSIDE_SET and route.names == NOTE:
        return OUT_OF_SCOPE
    if category in (OUTSIDE_SET, ELSEWHERE) and route.names != WORKSPACE:
        return NOT_FOUND
    return route.answer


def routes_of(base_url: str) -> set[str]:
    document = httpx.get(base_url + "/openapi.json").json()
    return {f"{method.upper()} {path}" for path, operations in document["paths"].items() for method in operations}


def aims(route: Route, category: str, estate: Estate, session: str, reachable: str) -> list[Aim]:
    """Where an attack sends a route. Around planted material, a route that names a note is sent to
    each planted note (each holds different material); in every other category the answer depends on
    whose note it is, not on what it holds, so the estate's person's note stands for all."""
    planted = [estate.vault, estate.capture, estate.agent_note]
    notes = planted if route.names == NOTE and category == PLANTED else [estate.vault]
    return [Aim(estate, note, session, reachable) for note in notes]


def unsent(withheld: dict[str, str], sent: Any) -> dict[str, str]:
    """What is withheld less what the attacker sent itself: an id or a title echoed back is no leak."""
    text = repr(sent)  # the call or the arguments, every string in them verbatim
    return {name: planted for name, planted in withheld.items() if planted not in text}


def attack_routes(tally: Tally, client: httpx.Client, estate: Estate, session: str, reachable: str,
                  withheld: dict[str, str], only: Keep = lambda route: True) -> None:
    """Send every route ``only`` keeps, aimed at ``estate``; record each answer in ``tally``."""
    # Removals last, so what they remove is still there for the routes that use it.
    for name, route in sorted(ROUTES.items(), key=lambda item: (item[0].startswith("DELETE"), item[0])):
        if route.request is None or not only(route):
            continue
        want = expected(route, tally.category)
        for aim in aims(route, tally.category, estate, session, reachable):
            for call in route.request(aim):
                response = client.request(call.method, call.path, params=call.params, json=call.json,
                                          content=call.content, headers=call.headers)
                tally.add_http(name, f"{call.method} {call.path}", response.status_code,
                               response.content.decode("utf-8", "replace"), unsent(withheld, call), want)
