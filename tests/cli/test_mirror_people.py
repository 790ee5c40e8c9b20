"""People in the Markdown mirror, with the real ``fp`` against a real ``fp serve``: a person
mention (``[@Name](/people/{id})``) and a ``person`` property (the member's id in frontmatter)
come down with ``fp pull`` exactly as the server holds them and go back up with ``fp push``; a
pushed edit of the mentioning block notifies nobody twice, a new mentioning block does; a pushed
property value naming no member is refused with the field named, and nothing changes."""

from __future__ import annotations

import uuid

import httpx

from fastpad.notes.mentions import person_mention
from tests.api.conftest import OWNER_EMAIL
from tests.cli.conftest import CliServer, Fp
from tests.cli.test_mirror import _create, _file_of, _server_markdown, person  # noqa: F401 (a fixture)


def join(fp: Fp, server: CliServer, name: str) -> httpx.Client:
    """A member invited with ``fp user invite`` who joined through the link: their signed-in client."""
    email = f"{name.lower()}-{uuid.uuid4().hex[:6]}@example.com"
    link = fp.json("user", "invite", email, "--data-dir", str(server.data_dir), "--base-url", server.base_url)["link"]
    client = server.client()
    joined = client.post("/v1/invitations:accept", json={"token": link.rsplit("/", 1)[1], "display_name": name,
                                                         "password": "a long enough password"})
    assert joined.status_code == 201, joined.text
    return client


def test_mentions_and_person_properties_round_trip_through_pull_and_push(fp: Fp, cli_server: CliServer, person,
                                                                          tmp_path) -> None:
    pat = join(fp, cli_server, "Pat")
    pat_id = pat.get("/v1/account").json()["id"]
    schema = cli_server.mint("notes:read,notes:write,schema:write", "--person", OWNER_EMAIL, "--label", "tests: schema")
    kind = f"Task{uuid.uuid4().hex[:6]}"
    with cli_server.client(schema) as client:
        assert client.post("/v1/types", json={"name": kind, "properties": [
            {"name": "owner", "kind": "person"}]}).status_code == 201
    mention = person_mention(pat_id, "Pat")
    note = _create(cli_server, person["FASTPAD_TOKEN"],
                   f"---\ntitle: Paint the shed\ntypes: [{kind}]\n{kind}.owner: {pat_id}\n---\n\n"
                   f"Buy paint, {mention}.\n")
    assert len(pat.get("/v1/inbox/mentions").json()["items"]) == 1

    mirror = tmp_path / "notes"
    fp.json("pull", str(mirror), env=person)
    path = _file_of(mirror, note["id"])
    pulled = path.read_text()
    assert pulled == _server_markdown(cli_server, person["FASTPAD_TOKEN"], note["id"])
    assert f"{kind}.owner: {pat_id}" in pulled and f"Buy paint, {mention}." in pulled

    # The mentioning block edited, and a new block mentioning Pat: one new entry, for the new block.
    path.write_text(pulled.replace(f"Buy paint, {mention}.", f"Buy green paint, {mention}.")
                    + f"\nThen sand it, {mention}.\n")
    assert fp.json("push", str(mirror), env=person)["pushed"]
    with cli_server.client(person["FASTPAD_TOKEN"]) as client:
        texts = [b["text"] for b in client.get(f"/v1/notes/{note['id']}").json()["blocks"]]
    assert texts == [f"Buy green paint, {mention}.", f"Then sand it, {mention}."]
    entries = pat.get("/v1/inbox/mentions").json()["items"]
    assert sorted(e["excerpt"] for e in entries) == sorted(texts)
    assert path.read_text() == _server_markdown(cli_server, person["FASTPAD_TOKEN"], note["id"])

    # A person property naming no member is refused, field by field, and the server keeps what it had.
    before = path.read_text()
    path.write_text(before.replace(f"{kind}.owner: {pat_id}", f"{kind}.owner: 01J00000000000000000000000"))
    refused = fp("push", str(mirror), "--json", env=person)
    said = refused.stdout + refused.stderr
    assert refused.returncode == 2 and f"properties.{kind}.owner" in said and "member" in said, said
    assert _server_markdown(cli_server, person["FASTPAD_TOKEN"], note["id"]) == before
    pat.close()
