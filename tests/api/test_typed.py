"""Types, typed properties, the structured query and collections over real HTTP
(``fp serve`` on SQLite and on PostgreSQL)."""

from __future__ import annotations

import json
import secrets

import httpx
import pytest

from fastpad.notes import parse_markdown
from tests.api.conftest import OWNER_EMAIL, Server
from tests.api.helpers import assert_problem

SCHEMA_SCOPES = "notes:read,notes:write,schema:write"


@pytest.fixture(scope="module")
def schemer(server: Server) -> httpx.Client:
    """The owner's CLI credential with schema:write."""
    token = server.mint(SCHEMA_SCOPES, "--person", OWNER_EMAIL, "--label", "tests: schema")["token"]
    with server.client(token) as client:
        yield client


def _name(base: str) -> str:
    """Type names are per workspace and the servers live for the whole session: keep each test's own."""
    return f"{base}_{secrets.token_hex(3)}"


def _define(client: httpx.Client, name: str, **body) -> dict:
    response = client.post("/v1/types", json={"name": name, **body})
    assert response.status_code == 201, response.text
    assert response.headers["location"] == f"/v1/types/{name}"
    return response.json()


def _note(client: httpx.Client, title: str) -> str:
    response = client.post("/v1/notes", json={"title": title})
    assert response.status_code == 201, response.text
    return response.json()["id"]


KIND_CASES = [
    ("text", "x" * 501, "max_length"), ("number", "12", "type"), ("url", "ftp://example.com", "url"),
    ("date", "14/01/2025", "date"), ("datetime", "2025-01-14T09:00:00", "datetime"), ("checkbox", 1, "type"),
    ("select", "maybe", "option"), ("multi_select", ["red", "plaid"], "option"), ("person", "nobody", "ulid"),
    ("relation", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "note"), ("file", "", "required"),
    ("file", "/v1/attachments/01ARZ3NDEKTSV4RRFFQ69G5FAV", "attachment"),
]


@pytest.fixture(scope="module")
def thing(schemer: httpx.Client) -> tuple[str, str]:
    """A type with one property of every kind, and a note of that type: (type name, note id)."""
    target = _name("Target")
    _define(schemer, target)
    name = _name("Thing")
    _define(schemer, name, properties=[
        {"name": kind, "kind": kind, **({"options": ["red", "blue"]} if "select" in kind else {}),
         **({"target": target} if kind == "relation" else {})} for kind in dict.fromkeys(k for k, _, _ in KIND_CASES)])
    note = _note(schemer, "thing")
    assert schemer.patch(f"/v1/notes/{note}/types", json={"add": [name]}).status_code == 200
    return name, note


@pytest.mark.parametrize("kind,value,code", KIND_CASES, ids=[f"{c[0]}-{c[2]}" for c in KIND_CASES])
def test_a_bad_value_is_a_problem_document_naming_the_field(server, schemer, thing, kind, value, code):
    """One rule, three ways in: the typed API, a new note's fields and a new note's frontmatter."""
    name, note = thing
    key = f"{name}.{kind}"
    title = f"Refused {kind} {secrets.token_hex(3)}"
    frontmatter = f"---\ntitle: {title}\ntypes: [{name}]\n{key}: {json.dumps(value)}\n---\n\nText.\n"
    for response in (
        schemer.patch(f"/v1/notes/{note}/types", json={"properties": {key: value}}),
        schemer.post("/v1/notes", json={"title": title, "types": [name], "properties": {key: value}}),
        schemer.post("/v1/notes", content=frontmatter.encode(), headers={"content-type": "text/markdown"}),
    ):
        body = assert_problem(response, 422, "validation-failed", server.base_url)
        assert [(fe["field"], fe["code"]) for fe in body["field_errors"]] == [(f"properties.{key}", code)]
    newest = schemer.get("/v1/notes", params={"limit": 5}).json()["items"]
    assert title not in [n["title"] for n in newest], "a refused note is not created"


def test_frontmatter_keeps_an_undefined_type_as_a_tag_and_a_key_of_no_defined_property_as_written(schemer):
    """Types are tags: a capture's Inbox, a vault's tags and a pushed export's types arrive before
    anyone defines them; only the values of defined properties are held to their kind."""
    tag, defined = _name("Someday"), _name("Chore")
    _define(schemer, defined, properties=[{"name": "minutes", "kind": "number"}])
    markdown = (f"---\ntitle: Shelf\ntypes: [{tag}, {defined}]\nstatus: active\n{tag}.mood: calm\n"
                f"{defined}.minutes: 20\n---\n\nSand it first.\n")
    created = schemer.post("/v1/notes", content=markdown.encode(), headers={"content-type": "text/markdown"})
    assert created.status_code == 201, created.text
    assert created.json()["types"] == [tag, defined]
    assert created.json()["properties"] == {"status": "active", f"{tag}.mood": "calm", f"{defined}.minutes": 20}
    unknown = schemer.post("/v1/notes", json={"title": "Shelf", "types": [defined], "properties": {f"{defined}.hours": 1}})
    body = unknown.json()
    assert unknown.status_code == 422 and body["field_errors"][0]["field"] == f"properties.{defined}.hours"
    assert body["field_errors"][0]["code"] == "unknown_property"
    untyped = schemer.post("/v1/notes", json={"title": "Shelf", "properties": {f"{defined}.minutes": 5}})
    assert untyped.status_code == 422 and untyped.json()["field_errors"][0]["code"] == "type_not_applied"


def test_a_file_property_holds_an_uploaded_attachment(schemer, thing):
    name, note = thing
    png = b"\x89PNG\r\n\x1a\n" + b"typed file property"
    uploaded = schemer.post("/v1/attachments", params={"name": "cover.png"}, content=png,
                            headers={"content-type": "image/png"}).json()
    response = schemer.patch(f"/v1/notes/{note}/types", json={"properties": {f"{name}.file": uploaded["url"]}})
    assert response.status_code == 200, response.text
    assert response.json()["properties"][f"{name}.file"] == uploaded["url"]
    assert schemer.get(uploaded["url"]).content == png


def test_types_and_properties_show_in_the_frontmatter_and_round_trip(schemer):
    person = _name("Person")
    _define(schemer, person, properties=[{"name": "email", "kind": "text"}, {"name": "born", "kind": "date"}])
    note = _note(schemer, "Ada")
    change = {"add": [person], "properties": {f"{person}.email": "ada@example.com", f"{person}.born": "1815-12-10"}}
    response = schemer.patch(f"/v1/notes/{note}/types", json=change)
    assert response.status_code == 200, response.text
    assert response.json()["types"] == [person]

    markdown = schemer.get(f"/v1/notes/{note}", headers={"accept": "text/markdown"}).text
    assert f"types: [{person}]\n" in markdown and f"{person}.email: ada@example.com\n" in markdown
    assert parse_markdown(markdown).meta.properties == change["properties"]
    copy = schemer.post("/v1/notes", content=markdown.encode(), headers={"content-type": "text/markdown"})
    assert copy.status_code == 201 and copy.json()["properties"] == change["properties"]
    found = schemer.post("/v1/query", json={
        "type": person, "filters": [{"property": f"{person}.born", "op": "eq", "value": "1815-12-10"}]})
    assert found.status_code == 200, found.text
    assert sorted(r["id"] for r in found.json()["items"]) == sorted([note, copy.json()["id"]])


def test_bulk_apply_answers_for_every_item(schemer):
    tag = _name("Tag")
    _define(schemer, tag, properties=[{"name": "weight", "kind": "number"}])
    good, bad = _note(schemer, "good"), _note(schemer, "bad")
    response = schemer.post("/v1/notes/types:bulk", json={"items": [
        {"note_id": good, "add": [tag], "properties": {f"{tag}.weight": 2}},
        {"note_id": bad, "add": [tag], "properties": {f"{tag}.weight": "heavy"}},
        {"note_id": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "add": [tag]},
    ]})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["succeeded"], body["failed"]) == (1, 2)
    first, second, third = body["results"]
    assert first["ok"] and first["note"]["properties"] == {f"{tag}.weight": 2}
    assert not second["ok"] and second["error"]["type"] == "validation-failed"
    assert second["error"]["field_errors"][0]["field"] == f"properties.{tag}.weight"
    assert third["error"]["type"] == "not-found"
    rows = schemer.post("/v1/query", json={"type": tag}).json()["items"]
    assert [r["id"] for r in rows] == [good]


def test_query_pages_and_collections(server, schemer):
    book = _name("Book")
    _define(schemer, book, properties=[{"name": "pages", "kind": "number"}])
    ids = []
    for pages in (300, 100, 200, None):
        note = _note(schemer, f"p{pages}")
        props = {} if pages is None else {f"{book}.pages": pages}
        assert schemer.patch(f"/v1/notes/{note}/types", json={"add": [book], "properties": props}).status_code == 200
        ids.append(note)
    query = {"type": book, "sort": [{"property": f"{book}.pages"}]}
    seen, cursor = [], None
    while True:
        page = schemer.post("/v1/query", json={**query, "limit": 1, **({"cursor": cursor} if cursor else {})}).json()
        seen += [r["id"] for r in page["items"]]
        if not (cursor := page["next_cursor"]):
            break
    assert seen == [ids[1], ids[2], ids[0], ids[3]]  # 100, 200, 300, then the empty one

    bad = schemer.post("/v1/query", json={**query, "filters": [{"property": f"{book}.pages", "op": "gt", "value": "x"}]})
    assert_problem(bad, 422, "validation-failed", server.base_url)
    assert bad.json()["field_errors"][0]["field"] == "filters[0].value"

    created = schemer.post("/v1/collections", json={"name": "Long books", "layout": "table", "query": {
        **query, "filters": [{"property": f"{book}.pages", "op": "gte", "value": 200}]}})
    assert created.status_code == 201, created.text
    view = created.json()
    assert created.headers["location"] == f"/v1/collections/{view['id']}"
    assert view["embed_markdown"] == f"```fastpad-collection\n{view['id']}\n```"
    rows = schemer.get(f"/v1/collections/{view['id']}/rows").json()
    assert [r["id"] for r in rows["items"]] == [ids[2], ids[0]]
    renamed = schemer.patch(f"/v1/collections/{view['id']}", json={"name": "Longer", "expectedVersion": 1})
    assert renamed.status_code == 200 and renamed.json()["version"] == 2
    assert any(c["id"] == view["id"] for c in schemer.get("/v1/collections").json()["items"])
    assert schemer.delete(f"/v1/collections/{view['id']}").status_code == 204
    assert_problem(schemer.get(f"/v1/collections/{view['id']}/rows"), 404, "not-found", server.base_url)


def test_a_calendars_rows_are_read_one_window_at_a_time_over_http(server, schemer):
    event = _name("Event")
    _define(schemer, event, properties=[{"name": "on", "kind": "date"}])
    days = {}
    for day in ("2025-02-27", "2025-03-03", "2025-03-31", "2025-04-01"):
        days[day] = _note(schemer, day)
        assert schemer.patch(f"/v1/notes/{days[day]}/types", json={
            "add": [event], "properties": {f"{event}.on": day}}).status_code == 200
    view = schemer.post("/v1/collections", json={"name": "Days", "layout": "calendar", "query": {
        "type": event, "sort": [{"property": f"{event}.on"}]}, "layout_options": {"start": f"{event}.on"}}).json()
    rows = f"/v1/collections/{view['id']}/rows"
    march = schemer.get(rows, params={"window_start": "2025-03-01", "window_end": "2025-04-01T00:00:00+00:00",
                                      "limit": 1000})
    assert march.status_code == 200, march.text
    assert [r["id"] for r in march.json()["items"]] == [days["2025-03-03"], days["2025-03-31"]]
    for params, fields in (({}, {"window_start", "window_end"}),
                           ({"window_start": "0001-01-01T00:00:00+01:00", "window_end": "2025-01-01"}, {"window_start"})):
        refused = schemer.get(rows, params=params)
        assert_problem(refused, 422, "validation-failed", server.base_url)
        assert {fe["field"] for fe in refused.json()["field_errors"]} == fields
    assert schemer.get(rows, params={"window_start": "2025-03-01", "window_end": "2025-04-01",
                                     "limit": 1001}).status_code == 422


def test_types_are_listed_and_changing_them_needs_schema_write(server, owner, schemer):
    name = _name("Meeting")
    _define(schemer, name, properties=[{"name": "when", "kind": "datetime"}])
    listed = owner.get("/v1/types").json()["items"]
    assert any(t["name"] == name for t in listed)
    refused = owner.post("/v1/types", json={"name": _name("Nope")})
    assert_problem(refused, 403, "insufficient-scope", server.base_url)
    changed = schemer.patch(f"/v1/types/{name}", json={
        "properties": [{"name": "when", "kind": "date"}], "expectedVersion": 1})
    body = assert_problem(changed, 422, "validation-failed", server.base_url)
    assert body["field_errors"][0] == {"field": "properties[0].kind", "code": "kind_immutable",
                                       "message": body["field_errors"][0]["message"]}
    again = schemer.post("/v1/types", json={"name": name})
    assert_problem(again, 409, "conflict", server.base_url)
    assert schemer.get(f"/v1/types/{name}").json()["version"] == 1
