"""Every state-changing route in ``/openapi.json`` replays under its idempotency key, and 409s a
different request under it — generated from the document, so a new route is covered by construction.

The test walks the document of a real ``fp serve`` (both backends) for every POST, PUT, PATCH and
DELETE. Each one either publishes its key — ``idempotencyKey`` in its JSON body, or the
``Idempotency-Key`` header — or says in ``x-idempotency`` why it takes none (``fastpad/api/openapi.py`` ``UNKEYED``: reads sent as POST, sign-in and sign-out,
device login, ``/mcp``). For each keyed one, ``EXAMPLES`` builds a valid request against fresh
objects; a keyed operation missing from it fails the test, naming it. Each is sent

1. with a new key (in the body's ``idempotencyKey`` when the body has one, else the header): 2xx;
2. again under that key, as the header: the same status and the same bytes, marked replayed;
3. as a different request under that key (another body, or another object in the path): 409
   ``idempotency-conflict``. Only an operation with neither a body nor a path parameter has no
   different request to send.

The deployment has a model provider on loopback (``tests/chat_provider.py``), so ``POST /v1/ask``
answers and its replay is not charged again.
"""

from __future__ import annotations

import base64
import secrets
import struct
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
from loro import LoroDoc

from fastpad.api.openapi import body_takes_key
from fastpad.notes import NoteDocument
from fastpad.notes.ids import new_id
from tests.api.conftest import OWNER_EMAIL, Server
from tests.api.helpers import sign_in
from tests.api.test_imports import ZIP, finished, zipped
from tests.api.test_turns import SESSION, HttpAgent

MUTATIONS = ("post", "put", "patch", "delete")


# ---------------------------------------------------------------------- requests and the objects they need


@dataclass(frozen=True)
class Call:
    client: httpx.Client
    path: str
    json: Any = None
    content: bytes | None = None
    params: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Example:
    first: Call
    other: Call | None = None  # a different request under the same key; default: another id in the path


def unique(prefix: str) -> str:
    return f"{prefix}{secrets.token_hex(4)}"


def tiny_png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b""))


class World:
    """A signed-in person (the session), their CLI token, an agent and an auto-apply agent, and
    the fresh notes, turns, types, links and imports the examples act on."""

    def __init__(self, server: Server, session: httpx.Client, cli: httpx.Client) -> None:
        self.server, self.session, self.cli = server, session, cli
        self.agent = HttpAgent(server, "notes:read,notes:propose,notes:write,graph:read,search:read",
                               "--label", "tests: keyed agent")
        self.auto = HttpAgent(server, "notes:read,notes:propose", "--auto-apply", "--label", "tests: keyed auto")

    def ok(self, response: httpx.Response) -> Any:
        assert response.is_success, response.text
        return response.json() if response.content else None

    def note(self, *texts: str) -> dict:
        return self.ok(self.session.post("/v1/notes", json={"title": unique("Keyed "),
                                                            "blocks": [{"text": t} for t in texts or ("Text.",)]}))

    def turn(self, agent: HttpAgent | None = None) -> dict:
        agent = agent or self.agent
        note = self.note("First.", "Second.")
        read = agent.read(note["id"])
        ops = [{"op": "replace_block", "handle": read["blocks"][0]["handle"], "text": "First, improved."}]
        return self.ok(agent.propose(note["id"], ops, read["frontier"]))

    def accepted_turn(self) -> dict:
        turn = self.turn()
        self.ok(self.session.post(f"/v1/turns/{turn['id']}/accept"))
        return turn

    def type_name(self) -> str:
        name = unique("Kind")
        self.ok(self.session.post("/v1/types", json={"name": name, "properties": [{"name": "on", "kind": "date"}]}))
        return name

    def link(self, client: httpx.Client | None = None) -> dict:
        source, target = self.note("Cites the other."), self.note()
        return self.ok((client or self.session).post("/v1/links", json={
            "source_note_id": source["id"], "type": "cites", "target_note_id": target["id"]}))

    def topic(self) -> str:
        name = unique("topic-")
        self.ok(self.session.post("/v1/memory", json={"name": name, "note_id": self.note()["id"]}))
        return name

    def uploading_import(self, size: int = 100) -> dict:
        return self.ok(self.session.post("/v1/imports", json={"size": size, "name": unique("vault") + ".zip"}))

    def finished_import(self) -> str:
        created = self.ok(self.session.post("/v1/imports", content=zipped({"Note.md": "# Note\n\nImported.\n"}),
                                            headers=ZIP))
        assert finished(self.session, created["id"])["status"] == "completed"
        return created["id"]

    def invitation(self) -> dict:
        return self.ok(self.session.post("/v1/invitations", json={"email": unique("invited") + "@example.com"}))

    def member(self) -> tuple[str, httpx.Client, str]:
        """Someone invited who joined: (person id, their signed-in client, their password)."""
        email, password = unique("joined") + "@example.com", unique("password-")
        token = self.ok(self.session.post("/v1/invitations", json={"email": email}))["link"].rsplit("/", 1)[1]
        client = self.server.client()
        joined = client.post("/v1/invitations:accept", json={"token": token, "display_name": "Joiner",
                                                             "password": password})
        assert joined.status_code == 201, joined.text
        client.headers["x-csrf-token"] = joined.json()["csrf_token"]
        person = next(m["id"] for m in self.ok(self.session.get("/v1/members"))["items"] if m["email"] == email)
        return person, client, password

    def mention(self) -> str:
        """A mention of the session's person, written by someone who joined: its id in their Inbox."""
        me = self.ok(self.session.get("/v1/account"))["id"]
        _, other, _ = self.member()
        self.ok(other.post("/v1/notes", json={"blocks": [{"text": f"[@Me](/people/{me}) look"}]}))
        return self.ok(self.session.get("/v1/inbox/mentions"))["items"][0]["id"]

    def comment(self) -> str:
        """A thread of the session's person on a new note: its id."""
        note = self.note()
        return self.ok(self.session.post(f"/v1/notes/{note['id']}/comments", json={
            "body": "A remark.", "blockId": note["blocks"][0]["id"]}))["id"]

    def ops(self, note_id: str, text: str) -> dict:
        """A person's edit as the editor sends it: the Loro update since the note's frontier."""
        updates = self.session.get(f"/v1/notes/{note_id}/updates")
        doc = LoroDoc()
        doc.import_(updates.content)
        note = NoteDocument(doc)
        frontier = updates.headers["x-fastpad-frontier"]
        note.replace_text(note.blocks()[0].id, text)
        return {"ops": base64.b64encode(note.export_updates(frontier)).decode(), "expectedFrontier": frontier,
                "peerId": "keyed"}


def _proposal(w: World) -> Example:
    note = w.note("Proposed on.")
    read = w.agent.read(note["id"])
    body = {"ops": [{"op": "replace_block", "handle": read["blocks"][0]["handle"], "text": "Better."}],
            "expected_frontier": read["frontier"]}
    first = Call(w.agent.client, f"/v1/notes/{note['id']}/proposals", body, headers={SESSION: w.agent.session})
    other_ops = [{**body["ops"][0], "text": "Other."}]
    return Example(first, replace(first, json={**body, "ops": other_ops}))


def _some(action: str) -> Callable[[World], Example]:
    """Accept or reject some of a turn: its pending block; the different request names another."""
    def build(w: World) -> Example:
        turn = w.turn()
        first = Call(w.session, f"/v1/turns/{turn['id']}/{action}", {"block_ids": turn["pending_block_ids"]})
        return Example(first, replace(first, json={"block_ids": [new_id()]}))
    return build


def _with_body(client_of: Callable[[World], httpx.Client], path: Callable[[World], str],
               body: Callable[[World], Any], other: Callable[[Any], Any]) -> Callable[[World], Example]:
    """An example whose different request is another body on the same path."""
    def build(w: World) -> Example:
        first = Call(client_of(w), path(w), body(w))
        return Example(first, replace(first, json=other(first.json)))
    return build


def _on(client_of: Callable[[World], httpx.Client], path: Callable[[World], str], body: Any = None
        ) -> Callable[[World], Example]:
    """An example whose different request is the same call on another object (the default)."""
    return lambda w: Example(Call(client_of(w), path(w), body))


def session(w: World) -> httpx.Client:
    return w.session


def agent(w: World) -> httpx.Client:
    return w.agent.client


def renamed(key: str) -> Callable[[dict], dict]:
    return lambda body: {**body, key: unique("other ")}


def _password_change(w: World) -> Example:
    _, client, password = w.member()
    first = Call(client, "/v1/account/password", {"current_password": password, "new_password": unique("changed-")})
    return Example(first, replace(first, json={**first.json, "new_password": unique("changed-")}))


def _session_ended(w: World) -> Example:
    """A member signed in twice ends the other session from the first."""
    person, client, password = w.member()
    email = next(m["email"] for m in w.ok(w.session.get("/v1/members"))["items"] if m["id"] == person)
    with sign_in(w.server, email, password):
        other = next(s["id"] for s in w.ok(client.get("/v1/sessions"))["items"] if not s["current"])
    return Example(Call(client, f"/v1/sessions/{other}"))


# What each keyed operation is sent with. A keyed operation missing here fails the test.
EXAMPLES: dict[tuple[str, str], Callable[[World], Example]] = {
    ("post", "/v1/notes"): _with_body(session, lambda w: "/v1/notes", lambda w: {"title": unique("New ")},
                                      renamed("title")),
    ("post", "/v1/notes:batch"): _with_body(session, lambda w: "/v1/notes:batch",
                                            lambda w: {"items": [{"title": unique("Batch ")}]},
                                            lambda b: {"items": [{"title": unique("Other ")}]}),
    ("post", "/v1/notes/{note_id}/ops"): lambda w: (lambda n: Example(
        Call(w.session, f"/v1/notes/{n}/ops", w.ops(n, "Edited.")),
        Call(w.session, f"/v1/notes/{n}/ops", w.ops(n, "Edited otherwise."))))(w.note("To edit.")["id"]),
    ("post", "/v1/notes/{note_id}/rename"): _with_body(session, lambda w: f"/v1/notes/{w.note()['id']}/rename",
                                                       lambda w: {"title": unique("Renamed ")}, renamed("title")),
    ("post", "/v1/notes/{note_id}/archive"): _on(session, lambda w: f"/v1/notes/{w.note()['id']}/archive"),
    ("post", "/v1/notes/{note_id}/unarchive"): _on(session, lambda w: (lambda n: (
        w.ok(w.session.post(f"/v1/notes/{n}/archive")), f"/v1/notes/{n}/unarchive")[1])(w.note()["id"])),
    ("post", "/v1/notes/{note_id}/trash"): _on(session, lambda w: f"/v1/notes/{w.note()['id']}/trash"),
    ("post", "/v1/notes/{note_id}/restore"): _on(session, lambda w: (lambda n: (
        w.ok(w.session.post(f"/v1/notes/{n}/trash")), f"/v1/notes/{n}/restore")[1])(w.note()["id"])),
    ("post", "/v1/notes/{note_id}/supersede"): _with_body(
        session, lambda w: f"/v1/notes/{w.note()['id']}/supersede", lambda w: {"by": w.note()["id"]},
        lambda b: {"by": new_id()}),
    ("put", "/v1/notes/{note_id}/publication"): _on(session, lambda w: f"/v1/notes/{w.note()['id']}/publication"),
    ("delete", "/v1/notes/{note_id}/publication"): _on(session, lambda w: (lambda n: (
        w.ok(w.session.put(f"/v1/notes/{n}/publication")), f"/v1/notes/{n}/publication")[1])(w.note()["id"])),
    ("post", "/v1/notes/{note_id}/history:restore"): lambda w: (lambda n: Example(
        Call(w.session, f"/v1/notes/{n['id']}/history:restore",
             (w.ok(w.session.post(f"/v1/notes/{n['id']}/ops", json=w.ops(n["id"], "Edited."))),
              {"at": n["frontier"]})[1]),
        Call(w.session, f"/v1/notes/{n['id']}/history:restore", {"at": n["frontier"],
                                                                 "block_id": n["blocks"][0]["id"]})))(w.note()),
    ("post", "/v1/notes/{note_id}/blocks/{block_id}/mark-reviewed"): _on(session, lambda w: (
        lambda n: f"/v1/notes/{n['id']}/blocks/{n['blocks'][0]['id']}/mark-reviewed")(w.note())),
    ("post", "/v1/sources/{block_id}/retract"): _with_body(
        session, lambda w: f"/v1/sources/{w.note('A source.')['blocks'][0]['id']}/retract",
        lambda w: {"reason": "wrong"}, lambda b: {"reason": "wrong in another way"}),
    ("post", "/v1/notes/{note_id}/proposals"): _proposal,
    ("post", "/v1/agent-sessions"): _on(agent, lambda w: "/v1/agent-sessions"),
    ("post", "/v1/turns/{turn_id}/accept"): _on(session, lambda w: f"/v1/turns/{w.turn()['id']}/accept"),
    ("post", "/v1/turns/{turn_id}/reject"): _on(session, lambda w: f"/v1/turns/{w.turn()['id']}/reject"),
    ("post", "/v1/turns/{turn_id}/abandon"): _on(agent, lambda w: f"/v1/turns/{w.turn()['id']}/abandon"),
    ("post", "/v1/turns/{turn_id}/revert"): _on(session, lambda w: f"/v1/turns/{w.accepted_turn()['id']}/revert"),
    ("post", "/v1/turns/{turn_id}/mark-reviewed"): _on(session, lambda w: (
        f"/v1/turns/{w.turn(w.auto)['id']}/mark-reviewed")),
    ("post", "/v1/turns/{turn_id}/accept-some"): _some("accept-some"),
    ("post", "/v1/turns/{turn_id}/reject-some"): _some("reject-some"),
    ("post", "/v1/links"): _with_body(session, lambda w: "/v1/links", lambda w: {
        "source_note_id": w.note("Cites.")["id"], "type": "cites", "target_note_id": w.note()["id"]},
        lambda b: {**b, "type": "related"}),
    ("delete", "/v1/links/{link_id}"): _on(session, lambda w: f"/v1/links/{w.link()['id']}"),
    ("post", "/v1/links/{link_id}/promote"): _on(session, lambda w: f"/v1/links/{w.link(w.agent.client)['id']}/promote"),
    ("post", "/v1/memory"): _with_body(session, lambda w: "/v1/memory",
                                       lambda w: {"name": unique("topic-"), "note_id": w.note()["id"]},
                                       renamed("name")),
    ("delete", "/v1/memory/{topic}"): _on(session, lambda w: f"/v1/memory/{w.topic()}"),
    ("post", "/v1/types"): _with_body(session, lambda w: "/v1/types", lambda w: {"name": unique("Kind")},
                                      lambda b: {"name": unique("Other")}),
    ("patch", "/v1/types/{name}"): _with_body(
        session, lambda w: f"/v1/types/{w.type_name()}", lambda w: {"properties": [{"name": "at", "kind": "date"}]},
        lambda b: {"properties": [{"name": "by", "kind": "date"}]}),
    ("patch", "/v1/notes/{note_id}/types"): lambda w: (lambda kind, n: Example(
        Call(w.session, f"/v1/notes/{n}/types", {"add": [kind]}),
        Call(w.session, f"/v1/notes/{n}/types", {"remove": [kind]})))(w.type_name(), w.note()["id"]),
    ("post", "/v1/notes/types:bulk"): lambda w: (lambda kind, n: Example(
        Call(w.session, "/v1/notes/types:bulk", {"items": [{"note_id": n, "add": [kind]}]}),
        Call(w.session, "/v1/notes/types:bulk", {"items": [{"note_id": n, "remove": [kind]}]})))(
        w.type_name(), w.note()["id"]),
    ("post", "/v1/collections"): _with_body(session, lambda w: "/v1/collections", lambda w: {
        "name": unique("View "), "layout": "table", "query": {"type": w.type_name()}}, renamed("name")),
    ("patch", "/v1/collections/{collection_id}"): _with_body(
        session, lambda w: "/v1/collections/" + w.ok(w.session.post("/v1/collections", json={
            "name": unique("View "), "query": {"type": w.type_name()}}))["id"],
        lambda w: {"name": unique("Renamed ")}, renamed("name")),
    ("delete", "/v1/collections/{collection_id}"): _on(session, lambda w: "/v1/collections/" + w.ok(w.session.post(
        "/v1/collections", json={"name": unique("View "), "query": {"type": w.type_name()}}))["id"]),
    ("post", "/v1/capture"): _with_body(session, lambda w: "/v1/capture", lambda w: {"text": unique("Captured ")},
                                        renamed("text")),
    ("post", "/v1/attachments"): lambda w: Example(
        Call(w.session, "/v1/attachments", content=tiny_png(), params={"name": "dot.png"},
             headers={"content-type": "image/png"}),
        Call(w.session, "/v1/attachments", content=tiny_png(), params={"name": "other.png"},
             headers={"content-type": "image/png"})),
    ("post", "/v1/imports"): _with_body(session, lambda w: "/v1/imports",
                                        lambda w: {"size": 100, "name": unique("vault") + ".zip"}, renamed("name")),
    ("put", "/v1/imports/{import_id}/archive"): lambda w: (lambda archive, imported: Example(
        Call(w.session, f"/v1/imports/{imported['id']}/archive", content=archive[:10], params={"offset": 0},
             headers={"content-type": "application/octet-stream"}),
        Call(w.session, f"/v1/imports/{imported['id']}/archive", content=archive[10:20], params={"offset": 0},
             headers={"content-type": "application/octet-stream"})))(
        *(lambda z: (z, w.uploading_import(len(z))))(zipped({"A.md": "# A\n\nText.\n"}))),
    ("post", "/v1/imports/{import_id}/cancel"): _on(session, lambda w: f"/v1/imports/{w.uploading_import()['id']}/cancel"),
    ("post", "/v1/imports/{import_id}/verify"): _with_body(
        session, lambda w: f"/v1/imports/{w.finished_import()}/verify", lambda w: {}, lambda b: {"folder": "elsewhere"}),
    ("post", "/v1/imports/{import_id}/unverify"): _with_body(
        session, lambda w: f"/v1/imports/{w.finished_import()}/unverify", lambda w: {},
        lambda b: {"folder": "elsewhere"}),
    ("post", "/v1/tokens/delegate"): _with_body(lambda w: w.cli, lambda w: "/v1/tokens/delegate",
                                                lambda w: {"label": unique("delegate ")}, renamed("label")),
    ("post", "/v1/invitations"): _with_body(session, lambda w: "/v1/invitations",
                                            lambda w: {"email": unique("invited") + "@example.com"},
                                            lambda b: {"email": unique("other") + "@example.com"}),
    ("delete", "/v1/invitations/{invitation_id}"): _on(session, lambda w: f"/v1/invitations/{w.invitation()['id']}"),
    ("patch", "/v1/members/{person_id}"): _with_body(session, lambda w: f"/v1/members/{w.member()[0]}",
                                                     lambda w: {"role": "viewer"}, lambda b: {"role": "admin"}),
    ("delete", "/v1/members/{person_id}"): _on(session, lambda w: f"/v1/members/{w.member()[0]}"),
    ("patch", "/v1/account"): _with_body(session, lambda w: "/v1/account", lambda w: {"display_name": unique("Name ")},
                                         renamed("display_name")),
    ("post", "/v1/account/password"): _password_change,
    ("post", "/v1/workspaces"): _with_body(session, lambda w: "/v1/workspaces", lambda w: {"name": unique("Team ")},
                                           renamed("name")),
    ("delete", "/v1/sessions/{session_id}"): _session_ended,
    ("patch", "/v1/inbox/mentions/{mention_id}"): _with_body(
        session, lambda w: f"/v1/inbox/mentions/{w.mention()}", lambda w: {"read": True}, lambda b: {"read": False}),
    ("post", "/v1/inbox/mentions:read-all"): _on(session, lambda w: "/v1/inbox/mentions:read-all"),
    ("post", "/v1/notes/{note_id}/comments"): lambda w: (lambda note: _with_body(
        session, lambda w: f"/v1/notes/{note['id']}/comments",
        lambda w: {"body": unique("Remark "), "blockId": note["blocks"][0]["id"]}, renamed("body"))(w))(w.note()),
    ("patch", "/v1/comments/{comment_id}"): _with_body(session, lambda w: f"/v1/comments/{w.comment()}",
                                                       lambda w: {"body": unique("Edited ")}, renamed("body")),
    ("delete", "/v1/comments/{comment_id}"): _on(session, lambda w: f"/v1/comments/{w.comment()}"),
    ("post", "/v1/comments/{comment_id}/resolve"): _on(session, lambda w: f"/v1/comments/{w.comment()}/resolve"),
    ("post", "/v1/comments/{comment_id}/reopen"): _on(session, lambda w: f"/v1/comments/{w.comment()}/reopen"),
    ("post", "/v1/ask"): _with_body(lambda w: w.cli, lambda w: "/v1/ask",
                                    lambda w: {"question": f"What does {w.note('The keyed answer.')['id']} say?"},
                                    renamed("question")),
}


# ---------------------------------------------------------------------- the walk


def _takes_body_key(doc: dict, operation: dict) -> bool:
    """Whether the operation's JSON body declares ``idempotencyKey``."""
    json_body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
    return body_takes_key(json_body.get("schema"), doc["components"]["schemas"])


def _takes_header_key(operation: dict) -> bool:
    return any(param.get("in") == "header" and param["name"].lower() == "idempotency-key"
               for param in operation.get("parameters", []))


def _another_object(call: Call, template: str) -> Call:
    """The same call on an object that was never the first one's: its last path parameter swapped
    (an action spelled after it, as in ``{comment_id}/resolve``, kept)."""
    last = template.rstrip("/").split("/")
    index = max(i for i, part in enumerate(last) if part.startswith("{"))
    parts = call.path.split("/")
    parts[index] = new_id() + last[index].split("}", 1)[1]
    return replace(call, path="/".join(parts))


def _send(method: str, call: Call, key: str, *, in_body: bool) -> httpx.Response:
    body, headers = call.json, dict(call.headers)
    if in_body:
        body = {**(body or {}), "idempotencyKey": key}
    else:
        headers["idempotency-key"] = key
    return call.client.request(method.upper(), call.path, json=body if call.content is None else None,
                               content=call.content, params=call.params, headers=headers)


def _check(method: str, template: str, operation: dict, doc: dict, example: Example) -> list[str]:
    """What is wrong with this operation's keys (nothing: an empty list)."""
    name, key = f"{method.upper()} {template}", str(uuid.uuid4())
    in_body = _takes_body_key(doc, operation) and example.first.content is None
    first = _send(method, example.first, key, in_body=in_body)
    if not first.is_success:
        return [f"{name}: the example was refused ({first.status_code}): {first.text[:300]}"]
    problems = []
    replay = _send(method, example.first, key, in_body=False)
    if (replay.status_code, replay.content) != (first.status_code, first.content):
        problems.append(f"{name}: a replay answered {replay.status_code} {replay.text[:200]!r}, "
                        f"not the first answer {first.status_code} {first.text[:200]!r}")
    elif replay.headers.get("idempotent-replayed") != "true":
        problems.append(f"{name}: the replay ran again (no Idempotent-Replayed)")
    has_path_object = "{" in template
    other = example.other or (_another_object(example.first, template) if has_path_object else None)
    if other is None:
        if operation.get("requestBody"):
            problems.append(f"{name}: takes a body, so its example must say what a different one is")
        return problems
    conflict = _send(method, other, key, in_body=in_body)
    if conflict.status_code != 409 or "idempotency-conflict" not in conflict.headers.get("content-type", "") + \
            conflict.text:
        problems.append(f"{name}: a different request under the key answered {conflict.status_code} "
                        f"{conflict.text[:200]!r}, not 409 idempotency-conflict")
    return problems


def test_every_state_changing_route_replays_under_its_key_and_409s_another_request(ask_server: Server):
    with ask_server.client() as anonymous:
        doc = anonymous.get("/openapi.json").json()
    operations = [(method, path, op) for path, item in doc["paths"].items()
                  for method, op in item.items() if method in MUTATIONS]
    keyed = [(m, p, op) for m, p, op in operations if _takes_header_key(op) or _takes_body_key(doc, op)]
    unkeyed = [(m, p, op) for m, p, op in operations if (m, p, op) not in keyed]
    assert all(str(op.get("x-idempotency", "")).startswith("none: ") for _, _, op in unkeyed), \
        "an operation publishing no key says why in x-idempotency"
    both = [f"{m.upper()} {p}" for m, p, op in keyed if _takes_header_key(op) and _takes_body_key(doc, op)
            and set(op["requestBody"]["content"]) == {"application/json"}]
    assert not both, f"one published spelling per operation: {both}"
    assert len(keyed) >= 40, f"the document lists the keyed mutations: {len(keyed)}"
    missing = sorted(f"{m.upper()} {p}" for m, p, _ in keyed if (m, p) not in EXAMPLES)
    assert not missing, f"keyed operations with no example request in EXAMPLES (add one): {missing}"
    stale = sorted(f"{m.upper()} {p}" for m, p in EXAMPLES if (m, p) not in {(m, p) for m, p, _ in keyed})
    assert not stale, f"examples for operations the document does not list as keyed: {stale}"

    token = ask_server.mint("notes:read,notes:write,search:read,graph:read", "--person", OWNER_EMAIL,
                              "--label", "tests: keyed CLI")["token"]
    with sign_in(ask_server, ask_server.owner_email, ask_server.owner_password) as person, \
            ask_server.client(token) as cli:
        world = World(ask_server, person, cli)
        problems = [problem for method, path, op in keyed
                    for problem in _check(method, path, op, doc, EXAMPLES[(method, path)](world))]
    assert not problems, "\n".join(problems)
