"""Every value an agent receives passes the same masking whatever its member is called, and member
names are masked too: a person's note whose properties are called like the server's own fields
(``id``, ``type``, ``next``, ``cursor``, ``session``, ``frontier``, ``note_id``, ``anchors``,
``review_url``, ``docs_url``, ``instance``), at any depth, holding secrets and live URLs, hands an agent
none of them — in the JSON of ``GET /v1/notes/{id}`` and of the list, in its Markdown, in the export
and in ``fastpad_fetch`` — on both backends. The server's own identifiers and URLs still pass."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.mcp.conftest import McpServer, run
from tests.security.world import client, mint

SERVER_FIELDS = ("id", "type", "next", "cursor", "session", "frontier", "note_id", "anchors", "review_url",
                 "docs_url", "instance")
STRIPE = "sk_live_AOGNUZHkV5oniGHexy5ZjLDY"
GITHUB = "ghp_R8sTq2vWx4yZa6bCd8eFg0hJk2mNp4qRs6tU"
LIVE_URL = "https://collect.evil.example/drop?d=1"


def _frontmatter() -> str:
    lines = ["---", "title: Field names"]
    for i, name in enumerate(SERVER_FIELDS):  # a secret and a URL under every name, at the top and nested
        lines.append(f"{name}: {STRIPE if i % 2 else LIVE_URL}")
    lines += ["nested:", "  deeper:"]
    lines += [f"    {name}: {LIVE_URL if i % 2 else STRIPE}" for i, name in enumerate(SERVER_FIELDS)]
    lines += [f'"{GITHUB}": a secret as a name', f'"{LIVE_URL}": a URL as a name', "---", "", "Body text.", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def planted(target: McpServer) -> dict[str, Any]:
    note = target.note(_frontmatter())
    assert note.properties["id"] == LIVE_URL and GITHUB in note.properties  # stored as written
    return {"id": note.id}


def _assert_clean(text: str, where: str, *, with_properties: bool = True) -> None:
    for raw in (STRIPE, GITHUB, LIVE_URL, "collect.evil.example"):
        assert raw not in text, f"{raw} reached an agent through {where}"
    if with_properties:  # the answer carries the properties, masked (the list carries none)
        assert "[redacted:stripe-key:" in text and "[redacted:github-token:" in text, where


def test_properties_named_like_server_fields_are_masked_over_http(target: McpServer, planted: dict[str, Any]) -> None:
    token = mint(target, "notes:read,export")[0]
    with client(target, token) as agent:
        one = agent.get(f"/v1/notes/{planted['id']}")
        assert one.status_code == 200 and one.json()["id"] == planted["id"]  # the server's id passes
        _assert_clean(one.text, "GET /v1/notes/{id}")
        listed = agent.get("/v1/notes", params={"limit": 200})
        assert planted["id"] in [n["id"] for n in listed.json()["items"]]
        _assert_clean(listed.text, "GET /v1/notes", with_properties="properties" in listed.json()["items"][0])
        _assert_clean(agent.get(f"/v1/notes/{planted['id']}", headers={"accept": "text/markdown"}).text,
                      "GET /v1/notes/{id} as Markdown")
        exported = agent.get("/v1/export")
        line = next(line for line in exported.text.splitlines() if planted["id"] in line)
        _assert_clean(line, "GET /v1/export")
        problem = agent.get("/v1/notes/not-a-note-id")  # what the server mints itself still leaves live
        assert problem.json()["type"].startswith(target.base_url) and problem.json()["docs_url"] == problem.json()["type"]


def test_properties_named_like_server_fields_are_masked_over_mcp(target: McpServer, planted: dict[str, Any]) -> None:
    token = mint(target, "notes:read,search:read")[0]

    async def fetch() -> dict[str, Any]:
        async with target.client(token) as agent:
            await agent.start()
            return await agent.read(planted["id"])

    entry = run(fetch)
    assert entry["note_id"] == planted["id"] and entry["handles"]
    _assert_clean(json.dumps(entry), "fastpad_fetch")
