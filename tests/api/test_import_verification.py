"""Verifying an import over real HTTP on both backends: imported text stays out of an agent's
default floor and its links unwalkable until a signed-in person verifies the import (a folder of
it, then all of it), and then an agent's default search finds it; no token can verify; undoing
it puts everything back."""

from __future__ import annotations

import secrets

import httpx

from fastpad.outbound.titles import TITLE_BELOW_FLOOR
from tests.api.conftest import OWNER_EMAIL, Server
from tests.api.helpers import assert_problem
from tests.api.test_imports import ZIP, finished, zipped

SESSION = "x-fastpad-session"


def seen_by_agent(agent: httpx.Client, session: str, note_id: str, floor: str) -> list[str]:
    answer = agent.get(f"/v1/notes/{note_id}/handles", headers={SESSION: session}, params={"floor": floor})
    assert answer.status_code == 200, answer.text
    return [b["text"] for b in answer.json()["blocks"]]


def link_status(client: httpx.Client, note_id: str) -> set[str]:
    return {e["status"] for e in client.get(f"/v1/notes/{note_id}/links").json()["outgoing"]}


def test_a_person_verifies_an_import_folder_by_folder_and_can_take_it_back(
        server: Server, signed_in: httpx.Client) -> None:
    word = secrets.token_hex(3)
    vault = {f"Alpha {word}.md": f"Alpha links to [[Beta {word}]].\n",
             f"Sub/Beta {word}.md": f"Beta text, see [[Alpha {word}]].\n"}
    person_token = server.mint("notes:read,notes:write", "--person", OWNER_EMAIL, "--label", "tests: importer")
    with server.client(person_token["token"]) as importer:
        created = importer.post("/v1/imports", params={"name": f"{word}.zip"}, content=zipped(vault), headers=ZIP)
        assert created.status_code == 202, created.text
        import_id = finished(importer, created.json()["id"])["id"]
        ledger = importer.get(f"/v1/imports/{import_id}/ledger").json()["items"]
        note_of = {row["item"]: row["note_id"] for row in ledger if row["kind"] == "note"}
        alpha, beta = note_of[f"Alpha {word}.md"], note_of[f"Sub/Beta {word}.md"]
        # A token, even the person's own, cannot verify: it is a signed-in person's act.
        refused = importer.post(f"/v1/imports/{import_id}/verify", json={})
        assert assert_problem(refused, 403, "policy-denied", server.base_url)["reason"] == "person_only"

    with server.client(server.mint("notes:read", "--label", "tests: verification reader")["token"]) as agent:
        session = agent.post("/v1/agent-sessions").json()["session"]
        assert seen_by_agent(agent, session, alpha, "reviewed") == [] and link_status(signed_in, alpha) == {"inferred"}

        folder = signed_in.post(f"/v1/imports/{import_id}/verify", json={"folder": "Sub/"})
        assert folder.status_code == 200, folder.text
        assert (folder.json()["notes"], folder.json()["blocks"]) == (1, 1)
        assert seen_by_agent(agent, session, beta, "reviewed") == [f"Beta text, see [[Alpha {word}]]."]
        assert seen_by_agent(agent, session, alpha, "reviewed") == []
        # Verified is the person saying "this is mine": the default floor admits it.
        assert seen_by_agent(agent, session, beta, "human") == [f"Beta text, see [[Alpha {word}]]."]

        since = signed_in.get("/v1/changes", params={"start": "latest"}).json()["next_cursor"]
        whole = signed_in.post(f"/v1/imports/{import_id}/verify").json()
        assert (whole["notes"], whole["blocks"], whole["asserted_links"]) == (2, 1, 2)
        assert seen_by_agent(agent, session, alpha, "reviewed") == [f"Alpha links to [[Beta {word}]]."]
        assert link_status(signed_in, alpha) == link_status(signed_in, beta) == {"asserted"}
        blocks = signed_in.get(f"/v1/notes/{alpha}").json()["blocks"]
        assert [(b["origin"], b["review_state"]) for b in blocks] == [("inbound_untrusted", "human_accepted")]
        changes = signed_in.get("/v1/changes", params={"cursor": since}).json()["items"]
        assert any(c["kind"] == "verify" and c["note_id"] == alpha and c["actor"]["kind"] == "person" for c in changes)

        undone = signed_in.post(f"/v1/imports/{import_id}/unverify").json()
        assert (undone["notes"], undone["blocks"], undone["asserted_links"]) == (2, 2, 0)
        assert seen_by_agent(agent, session, alpha, "reviewed") == [] and link_status(signed_in, alpha) == {"inferred"}


def test_a_verified_import_is_found_by_an_agents_default_search(server: Server, signed_in: httpx.Client) -> None:
    word = secrets.token_hex(4)
    vault = {f"Harbour {word}.md": f"---\nharbour_master: Ann {word}\n---\n\nThe harbour tide table {word} for spring.\n"}
    created = signed_in.post("/v1/imports", params={"name": f"{word}.zip"}, content=zipped(vault), headers=ZIP)
    assert created.status_code == 202, created.text
    import_id = finished(signed_in, created.json()["id"])["id"]
    note_id = signed_in.get(f"/v1/imports/{import_id}/ledger").json()["items"][0]["note_id"]

    with server.client(server.mint("notes:read,search:read", "--label", "tests: default floor")["token"]) as agent:
        def default_search() -> dict:
            answer = agent.get("/v1/search", params={"q": word, "strategies": "lexical"})
            assert answer.status_code == 200, answer.text
            return answer.json()

        before = default_search()
        assert before["floor"] == "human" and before["hits"] == []
        unverified = agent.get(f"/v1/notes/{note_id}").json()
        assert unverified["title"] == TITLE_BELOW_FLOOR, "outside text, its title too"
        assert unverified["properties_below_floor"] == 1 and "harbour_master" not in unverified["properties"]
        below = {h["reason"]: h for h in before["hidden"]}["trust_floor"]
        assert below["count"] == 1 and "no person verified" in below["because"]

        assert signed_in.post(f"/v1/imports/{import_id}/verify").status_code == 200
        after = default_search()
        assert [h["note_id"] for h in after["hits"]] == [note_id]
        assert after["hits"][0]["title"] == f"Harbour {word}", "verifying raised the title with the text"
        assert agent.get(f"/v1/notes/{note_id}").json()["properties"]["harbour_master"] == f"Ann {word}"
        assert "trust_floor" not in {h["reason"] for h in after["hidden"]}
        # Dense and graph run under the same floor: the fused default search finds it too.
        assert note_id in [h["note_id"] for h in agent.get("/v1/search", params={"q": word}).json()["hits"]]
