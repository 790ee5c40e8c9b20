"""/v1/search over real HTTP: POST and GET, explained hits, agent floors, problems."""

from __future__ import annotations

import secrets

from tests.api.helpers import assert_problem


def word() -> str:
    """A word no other test on the shared server wrote."""
    return "zq" + secrets.token_hex(4)


def test_a_note_is_found_the_moment_it_is_written_by_post_and_by_get(owner, server):
    term = word()
    created = owner.post("/v1/notes", json={"title": "Harbour survey", "markdown": f"# Findings\n\nThe {term} buoy drifted.\n"})
    assert created.status_code == 201, created.text
    note = created.json()
    searcher = server.mint("search:read", "--person", server.owner_email)["token"]
    with server.client(searcher) as client:
        posted = client.post("/v1/search", json={"q": f"{term} buoy", "limit": 5})
        assert posted.status_code == 200, posted.text
        body = posted.json()
        assert body["unavailable"] == {} and body["floor"] == "all" and body["query_kind"] == "keywords"
        hit = body["hits"][0]
        assert hit["note_id"] == note["id"] and hit["title"] == "Harbour survey" and hit["path"] == ["Findings"]
        assert hit["anchors"][0] == note["blocks"][1]["id"] and term in hit["snippet"]
        assert "blocks" not in hit and hit["superseded_by"] is None
        lexical = next(c for c in hit["explanation"]["contributions"] if c["strategy"] == "lexical")
        assert lexical["rank"] == 1 and term in hit["explanation"]["matched_terms"]
        got = client.get("/v1/search", params={"q": f"{term} buoy", "limit": 5, "strategies": "lexical"})
        assert got.status_code == 200 and [h["note_id"] for h in got.json()["hits"]] == [note["id"]]


def test_an_agent_does_not_find_what_an_agent_wrote_and_nobody_reviewed(server):
    term = word()
    # An agent's new note lands without review only under auto-apply: unreviewed, on Agent activity.
    writer = server.mint("notes:write,notes:read", "--auto-apply", "--label", "tests: search writer")["token"]
    with server.client(writer) as client:
        created = client.post("/v1/notes", json={"title": "Agent draft", "blocks": [{"type": "paragraph", "text": term}]})
        assert created.status_code == 201, created.text
    reader = server.mint("search:read", "--label", "tests: search reader")["token"]
    draft = created.json()["id"]
    with server.client(reader) as client:
        # Dense always has nearest neighbours to offer; none of them may be the draft.
        assert draft not in [h["note_id"] for h in client.get("/v1/search", params={"q": term}).json()["hits"]]
        lowered = client.get("/v1/search", params={"q": term, "floor": "all"}).json()
        assert lowered["floor"] == "all" and lowered["hits"][0]["note_id"] == draft


def test_bad_search_requests_are_problems(server):
    reader = server.mint("search:read", "--label", "tests: search problems")["token"]
    with server.client(reader) as client:
        assert_problem(client.post("/v1/search", json={"limit": 3}), 422, "validation-failed", server.base_url)
        assert_problem(client.post("/v1/search", json={"q": "x", "strategies": ["psychic"]}), 422,
                       "validation-failed", server.base_url)
        assert_problem(client.get("/v1/search", params={"q": "x", "floor": "sideways"}), 422,
                       "validation-failed", server.base_url)
        assert_problem(client.get("/v1/search", params={"q": "x", "limit": 500}), 422, "validation-failed",
                       server.base_url)
    with server.client(server.token("reader")) as client:  # notes:read only
        assert_problem(client.get("/v1/search", params={"q": "x"}), 403, "insufficient-scope", server.base_url)
