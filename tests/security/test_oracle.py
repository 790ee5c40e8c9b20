"""No oracle for masked values, on both backends over real HTTP and MCP: for each of twenty secrets
of twenty kinds in a person's note, an agent that guesses the value right and one that guesses it
wrong get the same answers — the same hits, scores and ``hidden`` counts from search, and the same
placeholders from a proposal's dry run (``fastpad_propose``) and from ``POST /v1/notes`` — so no
answer tells the agent which guess was right."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from fastpad.outbound.secrets import PLACEHOLDER_RE, find_secrets
from tests.mcp.conftest import McpServer, run
from tests.outbound.corpus import POSITIVES
from tests.security.world import client, mint

GUESSES = 20
_RUN = re.compile(r"[A-Za-z0-9]+")


def _wrong(secret: str) -> tuple[str, str, str] | None:
    """(the secret's longest alphanumeric run — what a search guesses —, that run one character off,
    the secret with that character off), or None when the secret has no run worth guessing."""
    run_match = max(_RUN.finditer(secret), key=lambda m: len(m.group()), default=None)
    if run_match is None or len(run_match.group()) < 6:
        return None
    at = run_match.start() + len(run_match.group()) // 2
    swap = ("7" if secret[at] != "7" else "3") if secret[at].isdigit() else ("q" if secret[at] != "q" else "k")
    wrong = secret[:at] + swap + secret[at + 1:]
    return run_match.group(), wrong[run_match.start():run_match.end()], wrong


def _twenty() -> list[tuple[str, str, str, str, str]]:
    """(rule, sentence, secret, wrong secret, search term, wrong search term) for twenty kinds: one-line
    sentences whose secret, one character off, is still masked by the same rule."""
    chosen: list[Any] = []
    for rule, text, secret in POSITIVES:
        guessed = _wrong(secret)
        if guessed is None or "\n" in text or text.lstrip()[:1] in "|>-#" or rule in {c[0] for c in chosen}:
            continue
        term, wrong_term, wrong = guessed
        if [m.rule_id for m in find_secrets(text.replace(secret, wrong))] != [rule]:
            continue
        chosen.append((rule, text, secret, wrong, term, wrong_term))
    assert len(chosen) >= GUESSES
    return chosen[:GUESSES]


SECRETS = _twenty()


@pytest.fixture(scope="module")
def vault(target: McpServer) -> dict[str, Any]:
    """A person's note holding the twenty secrets, one sentence per block."""
    marker = "orc" + secrets.token_hex(4)
    note = target.note(f"# Keys {marker}\n\n" + "\n\n".join(f"Entry {i}: {text}" for i, (_, text, *_) in
                                                            enumerate(SECRETS)) + "\n")
    return {"id": note.id, "blocks": [b["id"] for b in note.blocks][1:], "marker": marker}


@pytest.fixture(scope="module")
def agent_token(target: McpServer) -> str:
    return mint(target, "notes:read,notes:propose,search:read")[0]


@pytest.fixture(scope="module")
def agent(target: McpServer, agent_token: str) -> Iterator[httpx.Client]:
    with client(target, agent_token) as reader:
        yield reader


def _search(agent: httpx.Client, query: str) -> tuple[int, Any]:
    answer = agent.get("/v1/search", params={"q": query, "strategies": "lexical,graph"})
    body = answer.json()
    if answer.status_code != 200:
        return answer.status_code, {k: body.get(k) for k in ("type", "detail", "field_errors")}
    return 200, {"hits": [(h["note_id"], h["score"], h["snippet"]) for h in body["hits"]], "hidden": body["hidden"]}


@pytest.mark.parametrize("index", range(GUESSES), ids=[s[0] for s in SECRETS])
def test_search_answers_a_right_and_a_wrong_guess_alike(agent: httpx.Client, vault: dict[str, Any], index: int) -> None:
    _, _, secret, wrong, term, wrong_term = SECRETS[index]
    for right_guess, wrong_guess in ((term, wrong_term), (secret, wrong), (f"{vault['marker']} {term}",
                                                                          f"{vault['marker']} {wrong_term}")):
        assert _search(agent, right_guess) == _search(agent, wrong_guess), right_guess
    # the note is still found by its words, so the guesses were asked of a search that sees it
    status, found = _search(agent, vault["marker"])
    assert status == 200 and vault["id"] in [note_id for note_id, _, _ in found["hits"]]


def _placeholders(value: Any) -> list[str]:
    return PLACEHOLDER_RE.findall(str(value))


def test_a_dry_run_masks_a_right_and_a_wrong_guess_alike(target: McpServer, agent_token: str,
                                                          vault: dict[str, Any]) -> None:
    """The proposed sentence is the note's own block with the guess in it: under a fingerprint of the
    value, the right guess came back with the note's placeholder and a wrong one did not."""

    async def dry_runs() -> list[tuple[Any, Any, list[str]]]:
        async with target.client(agent_token) as mcp:
            await mcp.start()
            entry = await mcp.read(vault["id"])
            handles = entry["handles"]
            out = []
            for i, (_, text, secret, wrong, _, _) in enumerate(SECRETS):
                block_id = vault["blocks"][i]
                answers = []
                for guess in (secret, wrong):
                    proposed = await mcp.ok(
                        "fastpad_propose", session=mcp.session, note_id=vault["id"], dry_run=True,
                        expected_frontier=entry["frontier"], idempotency_key=f"oracle-{secrets.token_hex(6)}",
                        ops=[{"op": "insert_after", "handle": handles[block_id],
                              "text": f"Entry {i}: {text.replace(secret, guess)}"}])
                    # each dry run mints the inserted block's id afresh: everything else is compared
                    answers.append([{k: v for k, v in d.items() if k != "block_id"} for d in proposed["diffs"]])
                shown = entry["markdown"].split(f"{{#{block_id}}}")[0].rsplit("\n", 1)[-1]
                out.append((answers[0], answers[1], _placeholders(shown)))
            return out

    for (right, wrong, in_note), (rule, *_) in zip(run(dry_runs), SECRETS):
        assert right == wrong, rule
        assert _placeholders(right) and in_note, rule  # masked, and masked in the note as read
        assert not set(_placeholders(right)) & set(in_note), rule


def test_a_note_an_agent_creates_masks_a_right_and_a_wrong_guess_alike(target: McpServer) -> None:
    # a token of its own: the copy guard would refuse, as a copy, text the dry-run test's agent read
    with client(target, mint(target, "notes:read,notes:propose")[0]) as agent:
        _create_both(agent)


def _create_both(agent: httpx.Client) -> None:
    for rule, text, secret, wrong, _, _ in SECRETS:
        answers = []
        for guess in (secret, wrong):
            created = agent.post("/v1/notes", json={"title": "Guess", "markdown": text.replace(secret, guess) + "\n"})
            assert created.status_code == 202, created.text
            answers.append(_placeholders(created.text))
        assert answers[0] == answers[1] and answers[0], rule
