"""No walk over an unconfirmed agent edge, for anyone (spec: Search › What search will not return):
a person's search and ask, over real HTTP on both backends, never reach a note only through an
edge an agent asserted and no person confirmed — and once a signed-in person promotes the edge,
both do. Ask's provider is the real loopback one (``tests/chat_provider.py``); what it was sent
is what the test reads. (A person's context bundle: ``tests/search/test_context.py``.)"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import httpx
import pytest

from tests.api.conftest import Server
from tests.api.test_ask import ask, note, owner_asking, term
from tests.chat_provider import ChatProvider


@pytest.fixture(autouse=True)
def _nothing_recorded(provider: ChatProvider) -> Iterator[None]:
    provider.take()
    yield


def sign_in(client: httpx.Client, server: Server) -> None:
    answer = client.post("/v1/session", json={"email": server.owner_email, "password": server.owner_password})
    assert answer.status_code == 201, answer.text
    client.headers["x-csrf-token"] = answer.json()["csrf_token"]


def test_a_persons_search_and_ask_walk_no_unconfirmed_agent_edge(ask_server: Server, provider: ChatProvider):
    word, marker = term(), term()
    with ask_server.client(ask_server.token("owner")) as owner:
        seed = note(owner, "Orchid schedule", f"The {word} orchid cultivation schedule.\n")
        target = note(owner, "Greenhouse", f"Greenhouse humidity is kept at {marker} percent.\n")
    linker = ask_server.mint("notes:read,notes:write", "--label", "tests: an agent that links")["token"]
    with ask_server.client(linker) as bot:
        made = bot.post("/v1/links", json={"source_note_id": seed["id"], "type": "related",
                                           "target_note_id": target["id"], "idempotencyKey": secrets.token_hex(8)})
        assert made.status_code == 201, made.text
        assert made.json()["status"] == "inferred"

    question = f"When is the {word} orchid schedule?"
    with ask_server.client() as person, ask_server.client(owner_asking(ask_server)) as cli:
        sign_in(person, ask_server)

        def found() -> list[str]:
            answer = person.get("/v1/search", params={"q": word})
            assert answer.status_code == 200, answer.text
            return [h["note_id"] for h in answer.json()["hits"]]

        def sent() -> str:
            assert ask(cli, question).status_code == 200
            (received,) = provider.take()
            return received.prompt

        assert found() == [seed["id"]], "the person's own search does not walk the agent's claim"
        prompt = sent()
        assert word in prompt and marker not in prompt, "nor does the person's question send what it reaches"

        promoted = person.post(f"/v1/links/{made.json()['id']}/promote")
        assert promoted.status_code == 200, promoted.text
        assert found() == [seed["id"], target["id"]], "a person confirmed it: now it is walked"
        assert marker in sent()
