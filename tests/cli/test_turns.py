"""Proposals from the terminal: `fp turns`, `fp diff` ending with the review URL, `fp accept` needing the grant."""

from __future__ import annotations

import json

import httpx

from tests.cli.conftest import CliServer, Fp


def _propose(server: CliServer, token: str, note_id: str) -> dict:
    """An agent proposal through the HTTP surface: a session, handles, then the proposal."""
    with httpx.Client(base_url=server.base_url, headers={"authorization": f"Bearer {token}"}, timeout=10) as agent:
        session = agent.post("/v1/agent-sessions").json()["session"]
        fetched = agent.get(f"/v1/notes/{note_id}/handles", headers={"x-fastpad-session": session}).json()
        target = fetched["blocks"][1]
        response = agent.post(f"/v1/notes/{note_id}/proposals", headers={"x-fastpad-session": session}, json={
            "ops": [{"op": "replace_block", "handle": target["handle"], "text": "Ship on Tuesday."},
                    {"op": "insert_after", "handle": target["handle"], "text": "Tell support first."}],
            "expected_frontier": fetched["frontier"], "idempotency_key": f"turn-{token[-8:]}",
        })
        assert response.status_code == 201, response.text
        return response.json()


def test_accept_needs_the_grant_and_diff_ends_with_the_review_url(fp: Fp, cli_server: CliServer):
    person = {"FASTPAD_URL": cli_server.base_url, "FASTPAD_TOKEN": cli_server.person_token()}
    with cli_server.client(person["FASTPAD_TOKEN"]) as client:
        note = client.post("/v1/notes", json={"title": "Release", "markdown": "# Release\n\nShip on Monday.\n"}).json()
    proposer = cli_server.mint("notes:read,notes:propose", "--label", "proposes only")
    granted = cli_server.mint("notes:read,notes:propose,turns:accept", "--label", "may accept its own")
    plain_turn, own_turn = _propose(cli_server, proposer, note["id"]), _propose(cli_server, granted, note["id"])

    waiting = fp.json("turns", env=person)
    assert {plain_turn["id"], own_turn["id"]} <= {t["id"] for t in waiting}

    shown = fp("diff", plain_turn["id"], env=person)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.rstrip().splitlines()
    assert "- Ship on Monday." in shown.stdout and "+ Ship on Tuesday." in shown.stdout
    assert "+ Tell support first." in shown.stdout
    assert lines[-1] == f"Review: {plain_turn['review_url']}"

    agent = {"FASTPAD_URL": cli_server.base_url, "FASTPAD_TOKEN": proposer}
    refused = fp("accept", plain_turn["id"], "--json", env=agent)
    assert refused.returncode == 8 and refused.stdout == ""
    problem = json.loads(refused.stderr)
    assert problem["error"] == "approve-not-permitted" and problem["review_url"] == plain_turn["review_url"]
    other = fp("accept", own_turn["id"], "--json", env={**agent, "FASTPAD_TOKEN": granted})
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout)["turn"]["status"] == "accepted"
    still_waiting = {t["id"] for t in fp.json("turns", env=person)}  # the default: what still waits
    assert plain_turn["id"] in still_waiting and own_turn["id"] not in still_waiting
    refused_again = fp("accept", plain_turn["id"], env={**agent, "FASTPAD_TOKEN": granted})
    assert refused_again.returncode == 8, "a token accepts only the turns it opened"

    assert fp("turn-abandon", plain_turn["id"], "--dry-run", env=agent).returncode == 0
    dropped = fp.json("turn-abandon", plain_turn["id"], env=agent)
    assert dropped["status"] == "abandoned"
    with cli_server.client(person["FASTPAD_TOKEN"]) as client:
        texts = [b["text"] for b in client.get(f"/v1/notes/{note['id']}").json()["blocks"]]
    assert texts == ["Release", "Ship on Tuesday.", "Tell support first."]

    listed = {a["name"]: a for a in fp.json("agents", env=person)}
    assert listed["may accept its own"]["autonomy"] == {"auto_apply": False, "accept": True}
    assert listed["proposes only"]["scopes"] == ["notes:read", "notes:propose"]
    assert listed["proposes only"]["last_seen_at"] is not None, "its token was used to propose"
