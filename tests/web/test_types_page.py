"""Types and properties, clicked in a real browser: a type defined on the Types page (and a
property added to it there), applied to a note from the note's page, every property kind
edited with its own widget and checked through the API, a refused value kept on screen with
the reason, the type removed again, and a type applied to several notes at once from a list."""

from __future__ import annotations

import json
import secrets
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.api.conftest import Server
from tests.api.test_attachments import PNG
from tests.web.conftest import screenshot
from tests.web.helpers import create_note


def schema_client(server: Server) -> httpx.Client:
    """The owner's terminal with ``schema:write``, for defining what the page is not shown doing."""
    token = server.mint("notes:read,notes:write,schema:write", "--person", server.owner_email,
                        "--label", "tests: schema")["token"]
    return server.client(token)


def open_page(device: Any, server: Server, path: str) -> Any:
    page = device(timezone_id="UTC").new_page()
    page.goto(f"{server.base_url}{path}")
    return page


def test_a_type_defined_on_the_types_page_is_applied_and_every_property_kind_edited(
        device: Any, web_server: Server, api: httpx.Client) -> None:
    name = f"Gadget{secrets.token_hex(3)}"
    page = open_page(device, web_server, "/types")
    form = page.get_by_role("form", name="New type")
    form.get_by_label("Type name").fill(name)
    form.get_by_label("Property name").fill("status")
    form.get_by_label("Kind").select_option("select")
    form.get_by_label("Options").fill("todo, doing, done")
    form.get_by_role("button", name="Create type").click()
    listed = page.locator(f".type-list li[data-type='{name}']")
    expect(listed).to_contain_text("status select (todo, doing, done)")
    adding = listed.get_by_role("form", name=f"Add a property to {name}")
    adding.get_by_label("Property name").fill("summary")
    adding.get_by_role("button", name="Add property").click()
    expect(listed).to_contain_text("summary text")
    # A bad definition is refused in words, and the form keeps what was typed.
    form.get_by_label("Type name").fill("not a name")
    form.get_by_role("button", name="Create type").click()
    expect(form.locator(".field-error")).to_contain_text("name")
    expect(form.get_by_label("Type name")).to_have_value("not a name")
    screenshot(page, "types-page")

    # The rest of the kinds, defined through the API (the page's form was shown above).
    schema = schema_client(web_server)
    current = schema.get(f"/v1/types/{name}").json()
    kinds = [("count", "number", {}), ("site", "url", {}), ("due", "date", {}), ("starts", "datetime", {}),
             ("shipped", "checkbox", {}), ("tags", "multi_select", {"options": ["red", "blue", "green"]}),
             ("owner", "person", {}), ("twin", "relation", {"target": name}), ("manual", "file", {})]
    own = [{k: v for k, v in prop.items() if v is not None} for prop in current["properties"]]
    patched = schema.patch(f"/v1/types/{name}", json={
        "properties": own + [{"name": n, "kind": k, **extra} for n, k, extra in kinds],
        "expectedVersion": current["version"]})
    assert patched.status_code == 200, patched.text
    twin = create_note(api, "The other one.\n", title="Twin gadget")
    assert api.patch(f"/v1/notes/{twin}/types", json={"add": [name]}).status_code == 200
    me = next(m for m in api.get("/v1/members").json()["items"] if m["email"] == web_server.owner_email)

    note_id = create_note(api, "A thing I own.\n", title="My gadget")
    page.goto(f"{web_server.base_url}/notes/{note_id}")
    page.get_by_label("Type to apply").select_option(name)
    expect(page.locator(".note-meta .chips")).to_contain_text(f"#{name}")
    def field(key: str) -> Any:
        return page.locator(f".note-meta dd[data-property='{name}.{key}']")

    def saved(key: str, value: Any) -> None:
        """Until the server's answer to the widget's save holds ``value`` (the page keeps it)."""
        page.wait_for_function(
            "([key, value]) => window.fastpad?.page?.properties?.meta?.properties?.[key] !== undefined"
            " && JSON.stringify(window.fastpad.page.properties.meta.properties[key]) === value",
            arg=[f"{name}.{key}", json.dumps(value, separators=(",", ":"))])

    field("status").locator("select").select_option("doing")
    saved("status", "doing")
    field("summary").locator("input").fill("Small and sturdy")
    field("summary").locator("input").press("Tab")
    saved("summary", "Small and sturdy")
    field("count").locator("input").fill("3")
    field("count").locator("input").press("Tab")
    saved("count", 3)
    field("site").locator("input").fill("https://example.org/gadget")
    field("site").locator("input").press("Tab")
    saved("site", "https://example.org/gadget")
    field("due").locator("input").fill("2026-12-24")
    saved("due", "2026-12-24")
    field("starts").locator("input").fill("2026-12-24T09:30")
    field("starts").locator("input").press("Tab")
    saved("starts", "2026-12-24T09:30:00.000Z")
    field("shipped").locator("input").check()
    saved("shipped", True)
    field("tags").get_by_label("red").check()
    saved("tags", ["red"])
    field("tags").get_by_label("green").check()
    saved("tags", ["red", "green"])
    field("owner").locator("select").select_option(me["id"])
    saved("owner", me["id"])
    field("twin").locator("select").select_option(twin)
    saved("twin", twin)
    field("manual").locator("input[type=file]").set_input_files({"name": "manual.png", "mimeType": "image/png",
                                                                  "buffer": PNG + b"manual"})
    page.wait_for_function(f"() => typeof window.fastpad.page.properties.meta.properties['{name}.manual'] === 'string'")
    expect(field("manual").get_by_role("link", name="Open the file")).to_be_visible()
    screenshot(page, "note-properties")

    stored = api.get(f"/v1/notes/{note_id}").json()["properties"]
    assert {key.split(".", 1)[1]: value for key, value in stored.items()} == {
        "status": "doing", "summary": "Small and sturdy", "count": 3, "site": "https://example.org/gadget",
        "due": "2026-12-24", "starts": "2026-12-24T09:30:00.000Z", "shipped": True, "tags": ["red", "green"],
        "owner": me["id"], "twin": twin, "manual": stored[f"{name}.manual"]}
    assert stored[f"{name}.manual"].startswith("/v1/attachments/")
    assert api.get(stored[f"{name}.manual"]).content == PNG + b"manual"

    # A value the type refuses stays where it was typed, with the reason; the note keeps the old one.
    field("site").locator("input").fill("not a url")
    field("site").locator("input").press("Tab")
    expect(field("site").locator(".field-error")).to_contain_text("Not saved")
    expect(field("site").locator("input")).to_have_value("not a url")
    assert api.get(f"/v1/notes/{note_id}").json()["properties"][f"{name}.site"] == "https://example.org/gadget"

    page.get_by_role("button", name=f"Remove type {name}").click()
    expect(page.locator(".note-meta .chips")).not_to_contain_text(f"#{name}")
    assert name not in api.get(f"/v1/notes/{note_id}").json()["types"]


def test_a_type_applied_to_several_notes_at_once_from_the_list(device: Any, web_server: Server,
                                                              api: httpx.Client) -> None:
    name = f"Batch{secrets.token_hex(3)}"
    with schema_client(web_server) as schema:
        assert schema.post("/v1/types", json={"name": name}).status_code == 201
    first = create_note(api, "One.\n", title=f"First {name}")
    second = create_note(api, "Two.\n", title=f"Second {name}")
    page = open_page(device, web_server, "/")
    page.get_by_label(f"Select First {name}").check()
    page.get_by_label(f"Select Second {name}").check()
    bar = page.get_by_role("region", name="Change the selected notes")
    expect(bar).to_contain_text("2 selected")
    bar.get_by_label("Type to apply").fill(name)
    bar.get_by_role("button", name="Apply type").click()
    expect(page.locator(".toast").filter(has_text=f"#{name} applied to 2 notes")).to_have_count(1)
    for note_id in (first, second):
        assert name in api.get(f"/v1/notes/{note_id}").json()["types"]
