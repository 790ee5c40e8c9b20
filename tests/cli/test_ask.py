"""``fp ask``: the real executable against ``fp serve`` with a model provider configured (a real
OpenAI-compatible server on loopback, ``tests/chat_provider.py``): the answer and its citations as
references, ``--json`` the structure, and a token past its ``--ask-cap`` refused with exit 8."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator

import pytest

from tests.api.conftest import OWNER_EMAIL, Server, start_server, stop
from tests.chat_provider import (ASK_KEY, ASK_KEY_ENV, ChatProvider, Received, Reply, ask_config, completion,
                                 provider)  # noqa: F401 (provider: a fixture)
from tests.cli.conftest import Fp

ASKER = "notes:read,notes:write,search:read"


@pytest.fixture(scope="module")
def asking_server(tmp_path_factory: pytest.TempPathFactory, provider: ChatProvider) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("cli-ask"), "sqlite", config=ask_config(provider),
                          env={ASK_KEY_ENV: ASK_KEY})
    yield server
    stop(server.process)


def test_fp_ask_prints_the_answer_and_fetchable_citations_and_json_gives_the_structure(
        fp: Fp, asking_server: Server, provider: ChatProvider):
    word = "zq" + secrets.token_hex(4)
    token = asking_server.mint(ASKER, "--person", OWNER_EMAIL, "--label", "fp ask")["token"]
    env = {"FASTPAD_URL": asking_server.base_url, "FASTPAD_TOKEN": token}
    with asking_server.client(token) as person:
        created = person.post("/v1/notes", json={"title": "Trip", "markdown": f"The {word} train leaves at nine.\n"})
        assert created.status_code == 201, created.text
    note_id, block_id = created.json()["id"], created.json()["blocks"][0]["id"]

    def answer(received: Received) -> Reply:
        return completion(f"It leaves at nine [cite:{received.block_ids[0]}] [cite:01ARZ3NDEKTSV4RRFFQ69G5FAV].")

    provider.answer = answer
    shown = fp("ask", "When", "does", "the", word, "train", "leave?", env=env)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "It leaves at nine [1]."
    assert "1 citation in the model's answer named a block not retrieved for this question and was removed." in shown.stdout
    reference = f"[1] Trip  {note_id}#{block_id}  /v1/notes/{note_id}/blocks/{block_id}"
    assert lines[-1] == reference
    with asking_server.client(token) as person:  # the printed reference fetches the cited block
        fetched = person.get(lines[-1].split()[-1])
    assert fetched.status_code == 200 and fetched.json()["text"] == f"The {word} train leaves at nine."

    as_json = fp("ask", f"When does the {word} train leave?", "--json", env=env)
    assert as_json.returncode == 0, as_json.stderr
    body = json.loads(as_json.stdout)
    assert body["citations"] == [{"n": 1, "block_id": block_id, "note_id": note_id, "title": "Trip",
                                  "ref": f"/v1/notes/{note_id}/blocks/{block_id}", "anchor": f"{note_id}#{block_id}"}]
    assert body["dropped_citations"] == 1 and body["usage"]["total_tokens"] == 42
    assert body["question"] == f"When does the {word} train leave?" and body["model"] == "fake-model"
    assert [r.body["messages"][1]["content"].count(block_id) for r in provider.take()] == [1, 1]


def test_fp_ask_past_the_tokens_cap_exits_8_with_ask_cap_reached(fp: Fp, asking_server: Server, provider: ChatProvider):
    word = "zq" + secrets.token_hex(4)
    # 40 provider tokens cannot hold a question's prompt and the longest answer it may get.
    created = asking_server.mint(ASKER, "--person", OWNER_EMAIL, "--ask-cap", "40", "--label", "capped fp ask")
    env = {"FASTPAD_URL": asking_server.base_url, "FASTPAD_TOKEN": created["token"]}
    with asking_server.client(created["token"]) as person:
        assert person.post("/v1/notes", json={"title": "Capped", "markdown": f"The {word} tide is high.\n"}
                           ).status_code == 201
    provider.take()
    refused = fp("ask", f"Is the {word} tide high?", "--json", env=env)
    assert refused.returncode == 8, (refused.stdout, refused.stderr)
    assert "ask-cap-reached" in refused.stderr and refused.stdout == ""
    assert provider.take() == [], "a question the cap cannot hold is never sent"
