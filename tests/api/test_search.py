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


def test_a_short_page_counts_what_the_floor_and_archive_kept_out_says_a_note_set_limits_it_and_never_shows_it(owner, server):
    term = word()
    private = {name: word() for name in ("unreviewed", "shelved", "outside")}  # each note's own words
    writer = server.mint("notes:write,notes:read", "--auto-apply", "--label", "tests: hidden writer")["token"]
    with server.client(writer) as client:
        unreviewed = client.post("/v1/notes", json={"title": f"Draft {private['unreviewed']}",
                                                    "markdown": f"{term} {private['unreviewed']}\n"}).json()["id"]
    visible = owner.post("/v1/notes", json={"title": "Visible", "markdown": f"{term} in plain sight\n"}).json()["id"]
    shelved, outside = (owner.post("/v1/notes", json={"title": f"Note {private[name]}",
                                                      "markdown": f"{term} {private[name]}\n"}).json()["id"]
                        for name in ("shelved", "outside"))
    assert owner.post(f"/v1/notes/{shelved}/archive").status_code == 200
    ids = {"unreviewed": unreviewed, "shelved": shelved, "outside": outside}
    whole = server.mint("search:read", "--label", "tests: hidden whole")["token"]
    scoped = server.mint("search:read", "--notes", f"{visible},{unreviewed}", "--label", "tests: hidden scoped")["token"]

    def hidden_by(token: str, **params: str) -> tuple[set[str], dict]:
        with server.client(token) as client:
            response = client.get("/v1/search", params={"q": term, "strategies": "lexical", **params})
        body = response.json()
        found = {h["note_id"] for h in body["hits"]}
        for name, note_id in ids.items():
            if note_id not in found:  # counted, perhaps, but neither its id nor a word of it is in the answer
                assert note_id not in response.text and private[name] not in response.text, name
        return found, {h["reason"]: (h["count"], h["unit"], h["show_with"]) for h in body["hidden"]}

    # Each reason alone: a note both archived and outside the note set counts for neither.
    found, hidden = hidden_by(whole)
    assert found == {visible, outside}
    assert hidden == {"trust_floor": (1, "notes", {"floor": "all"}), "archived": (1, "notes", {"include_archived": True})}
    found, hidden = hidden_by(scoped)
    assert found == {visible}
    # Outside its note set nothing is counted (per query, that count would say what those notes
    # hold): the page says the set limits it, the same whether or not anything outside matched.
    said = {"trust_floor": (1, "notes", {"floor": "all"}), "scope": (None, "notes", None)}
    assert hidden == said
    _, nothing_anywhere = hidden_by(scoped, q=word())  # a word no note holds, in the set or outside it
    assert nothing_anywhere == {"scope": said["scope"]}
    # The parameters it names show what it counted, and then nothing is hidden for that reason.
    found, hidden = hidden_by(whole, floor="all", include_archived="true")
    assert found == {visible, outside, unreviewed, shelved} and hidden == {}
    # A person reads at the lowest floor already: only the archive is held back.
    with server.client(server.mint("search:read", "--person", server.owner_email)["token"]) as person:
        mine = person.get("/v1/search", params={"q": term, "strategies": "lexical"}).json()
        assert [(h["reason"], h["count"]) for h in mine["hidden"]] == [("archived", 1)]
        # A full page explains nothing: what it hid it could not have shown.
        full = person.get("/v1/search", params={"q": term, "strategies": "lexical", "limit": 1}).json()
        assert len(full["hits"]) == 1 and full["hidden"] == []
