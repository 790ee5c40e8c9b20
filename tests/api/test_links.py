"""Links and the graph over real HTTP, on both backends: edges from text, rename and
forward links, an agent's inferred edge and its promotion, supersession, problems."""

from __future__ import annotations

import secrets

import httpx
import pytest

from tests.api.helpers import assert_problem
from tests.api.test_turns import HttpAgent

GRAPH = "notes:read,notes:write,graph:read"


@pytest.fixture(scope="module")
def person(server) -> httpx.Client:
    """The owner's CLI credential, with graph:read."""
    token = server.mint(GRAPH, "--person", server.owner_email, "--label", "tests: links person")["token"]
    with server.client(token) as client:
        yield client


@pytest.fixture(scope="module")
def bot(server) -> httpx.Client:
    with server.client(server.mint(GRAPH, "--label", "tests: links agent")["token"]) as client:
        yield client


def unique(title: str) -> str:
    return f"{title} {secrets.token_hex(3)}"


def create(client: httpx.Client, title: str, *texts: str) -> dict:
    answer = client.post("/v1/notes", json={"title": title, "blocks": [{"text": t} for t in texts]})
    assert answer.status_code == 201, answer.text
    return answer.json()


def outgoing(client: httpx.Client, note_id: str) -> dict[str, str | None]:
    answer = client.get(f"/v1/notes/{note_id}/links")
    assert answer.status_code == 200, answer.text
    return {e["target_title"]: e["target"] and e["target"]["id"] for e in answer.json()["outgoing"]}


def test_wikilinks_become_edges_and_survive_a_rename(person):
    beta_title, later_title = unique("Beta"), unique("Later")
    beta = create(person, beta_title)
    alpha = create(person, unique("Alpha"), f"We decided: see [[{beta_title}]] and [[{later_title}]].")
    links = person.get(f"/v1/notes/{alpha['id']}/links").json()
    first = links["outgoing"][0]
    assert (first["type"], first["status"], first["derivation"]) == ("mentions", "asserted", "text")
    assert first["evidence"]["block_id"] == alpha["blocks"][0]["id"]
    assert first["evidence"]["text"] == f"We decided: see [[{beta_title}]] and [[{later_title}]]."
    assert outgoing(person, alpha["id"]) == {beta_title: beta["id"], later_title: None}

    renamed = person.post(f"/v1/notes/{beta['id']}/rename", json={"title": beta_title + " (v2)"})
    assert renamed.status_code == 200 and renamed.json()["title"] == beta_title + " (v2)"
    beta_links = person.get(f"/v1/notes/{beta['id']}/links").json()
    assert beta_links["aliases"] == [beta_title]
    assert [e["source"]["id"] for e in beta_links["backlinks"]] == [alpha["id"]]
    quoting_old = create(person, unique("Gamma"), f"[[{beta_title}]]")
    assert outgoing(person, quoting_old["id"]) == {beta_title: beta["id"]}

    later = create(person, later_title)
    assert outgoing(person, alpha["id"]) == {beta_title: beta["id"], later_title: later["id"]}
    neighbours = person.get(f"/v1/notes/{later['id']}/neighbors", params={"direction": "in"}).json()
    assert [e["source"]["id"] for e in neighbours["items"]] == [alpha["id"]]


def test_an_agents_edge_waits_for_a_signed_in_person(server, person, bot, signed_in):
    source = create(person, unique("Source"), "a paragraph worth citing")
    target = create(person, unique("Target"))
    body = {"source_note_id": source["id"], "type": "cites", "target_note_id": target["id"],
            "source_block_id": source["blocks"][0]["id"], "confidence": 0.7, "idempotencyKey": secrets.token_hex(8)}
    made = bot.post("/v1/links", json=body)
    assert made.status_code == 201, made.text
    edge = made.json()
    assert (edge["status"], edge["confidence"], edge["created_by"]["kind"]) == ("inferred", 0.7, "agent")
    assert edge["evidence"]["text"] == "a paragraph worth citing"
    replay = bot.post("/v1/links", json=body)
    assert replay.json() == edge and replay.headers.get("idempotent-replayed") == "true"

    assert bot.get(f"/v1/notes/{target['id']}/neighbors").json()["items"] == []
    assert [e["status"] for e in person.get(f"/v1/notes/{target['id']}/neighbors").json()["items"]] == ["inferred"]
    assert_problem(bot.post(f"/v1/links/{edge['id']}/promote"), 403, "policy-denied", server.base_url)
    assert_problem(person.post(f"/v1/links/{edge['id']}/promote"), 403, "policy-denied", server.base_url)
    promoted = signed_in.post(f"/v1/links/{edge['id']}/promote")
    assert promoted.status_code == 200, promoted.text
    assert promoted.json()["status"] == "asserted" and promoted.json()["confirmed_by"]
    (walked,) = bot.get(f"/v1/notes/{target['id']}/neighbors").json()["items"]
    assert walked["id"] == edge["id"] and walked["direction"] == "in"


def test_supersession_is_a_persons_act_and_readers_follow_the_chain(server, person, bot):
    v1, v2, v3 = (create(person, unique(f"Policy v{i}")) for i in (1, 2, 3))
    first = person.post(f"/v1/notes/{v1['id']}/supersede", json={"by": v2["id"]})
    assert first.status_code == 200, first.text
    assert (first.json()["type"], first.json()["source"]["id"]) == ("supersedes", v2["id"])
    assert person.post(f"/v1/notes/{v2['id']}/supersede", json={"by": v3["id"]}).status_code == 200
    chain = person.get(f"/v1/notes/{v1['id']}/successors").json()
    assert [n["id"] for n in chain["successors"]] == [v2["id"], v3["id"]]
    assert chain["latest"]["id"] == v3["id"] and chain["cycle"] is False
    cycle = assert_problem(person.post(f"/v1/notes/{v3['id']}/supersede", json={"by": v1["id"]}),
                           409, "conflict", server.base_url)
    assert cycle["reason"] == "supersession_cycle"
    assert_problem(bot.post(f"/v1/notes/{v3['id']}/supersede", json={"by": v1["id"]}),
                   403, "policy-denied", server.base_url)


def test_bad_requests_are_problem_documents_naming_the_field(server, person):
    a, b = create(person, unique("A")), create(person, unique("B"))
    both = person.post("/v1/links", json={"source_note_id": a["id"], "type": "cites", "target_note_id": b["id"],
                                          "target_title": "B"})
    assert assert_problem(both, 422, "validation-failed", server.base_url)["field_errors"][0]["field"] == \
        "target_note_id"
    bad_type = person.post("/v1/links", json={"source_note_id": a["id"], "type": "Cites!", "target_note_id": b["id"]})
    assert assert_problem(bad_type, 422, "validation-failed", server.base_url)["field_errors"][0]["field"] == "type"
    floor = person.get(f"/v1/notes/{a['id']}/links", params={"floor": "lowest"})
    assert assert_problem(floor, 422, "validation-failed", server.base_url)["field_errors"][0]["field"] == "floor"
    assert_problem(person.get(f"/v1/notes/{a['id']}/neighbors", params={"direction": "up"}),
                   422, "validation-failed", server.base_url)
    text_link = create(person, unique("C"), f"[[{b['title']}]]")
    (edge,) = person.get(f"/v1/notes/{text_link['id']}/links").json()["outgoing"]
    assert_problem(person.delete(f"/v1/links/{edge['id']}"), 409, "conflict", server.base_url)


def test_a_note_scoped_token_sees_no_edge_leaving_its_notes(server, person):
    secret = create(person, unique("Secret"))
    nobody = unique("Nobody has this title")
    shared = create(person, unique("Shared"), f"[[{secret['title']}]]", f"[[{nobody}]]")
    scoped_token = server.mint(GRAPH, "--notes", shared["id"], "--label", "tests: scoped graph")["token"]
    with server.client(scoped_token) as scoped:
        # A link to a note outside the set reads exactly as a link to a title no note has.
        assert outgoing(scoped, shared["id"]) == {secret["title"]: None, nobody: None}
        assert scoped.get(f"/v1/notes/{shared['id']}/neighbors").json()["items"] == []
        for note_id in (secret["id"], "01J00000000000000000000000"):  # outside the set: a note there or not
            body = assert_problem(scoped.get(f"/v1/notes/{note_id}/links"), 403, "out-of-scope", server.base_url)
            assert body["note_id"] == note_id
    assert [e["target"]["id"] for e in person.get(f"/v1/notes/{shared['id']}/neighbors").json()["items"]] == \
        [secret["id"]]


def test_a_note_scoped_token_links_only_among_its_notes_by_title_as_by_id(server, person):
    secret, inside = create(person, unique("Secret")), create(person, unique("Inside"))
    shared = create(person, unique("Shared"), "text")
    scoped_token = server.mint(GRAPH, "--notes", f"{shared['id']},{inside['id']}", "--label", "tests: scoped linker")
    with server.client(scoped_token["token"]) as scoped:
        def link(**target: str) -> httpx.Response:
            return scoped.post("/v1/links", json={"source_note_id": shared["id"], "type": "related", **target})

        by_id = assert_problem(link(target_note_id=secret["id"]), 403, "out-of-scope", server.base_url)
        by_title = assert_problem(link(target_title=secret["title"]), 403, "out-of-scope", server.base_url)
        no_such = assert_problem(link(target_title=unique("No such note")), 403, "out-of-scope", server.base_url)
        assert by_title["detail"] == no_such["detail"], "the refusal says nothing about notes outside the set"
        assert by_id["next"] == by_title["next"]
        made = link(target_title=inside["title"].upper())
        assert made.status_code == 201, made.text
        assert made.json()["target"]["id"] == inside["id"]
    assert person.get(f"/v1/notes/{secret['id']}/links").json()["backlinks"] == []


def test_an_agent_limited_to_a_note_set_writes_links_that_resolve_only_among_its_notes(server, person):
    secret, inside = create(person, unique("Secret")), create(person, unique("Inside"))
    shared = create(person, unique("Shared"), "Before.")
    agent = HttpAgent(server, "notes:read,notes:propose", "--auto-apply", "--notes",
                      f"{shared['id']},{inside['id']}", "--label", "tests: scoped auto-apply")
    read = agent.read(shared["id"])
    text = f"See [[{secret['title']}]] and [[{inside['title']}]]."
    landed = agent.propose(shared["id"], [{"op": "insert_after", "handle": read["blocks"][0]["handle"],
                                           "text": text}], read["frontier"])
    assert landed.status_code == 201 and landed.json()["authority"] == "auto_apply", landed.text
    # To the person too the agent's [[Secret]] is a link to a title, not an edge into a note it cannot reach.
    assert outgoing(person, shared["id"]) == {secret["title"]: None, inside["title"]: inside["id"]}
    assert person.get(f"/v1/notes/{secret['id']}/links").json()["backlinks"] == []


def test_a_mention_names_the_longest_title_it_spells_never_a_shorter_one_instead(person):
    word = f"Kiwi{secrets.token_hex(3)}"
    short, long = create(person, word), create(person, f"{word} planning note")
    writer = create(person, unique("Writer"), f"Ask @{word} planning note first.", f"Then @{word} planning alone.",
                    f"Or @[[{word}]] note, written exactly.")
    links = person.get(f"/v1/notes/{writer['id']}/links").json()["outgoing"]
    assert sorted((e["evidence"]["block_id"], e["target"]["id"]) for e in links) == sorted([
        (writer["blocks"][0]["id"], long["id"]),   # the whole title, though its first word is a title too
        (writer["blocks"][1]["id"], short["id"]),  # "planning" alone is no title: the first word is
        (writer["blocks"][2]["id"], short["id"]),
    ])
