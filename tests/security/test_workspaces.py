"""Nothing crosses between workspaces: two workspaces × three people × every kind of credential
(``tests/security/team_world.py``), on both backends, over every route of the HTTP API and, for
tokens, every MCP tool.

Each credential is sent three ways, and no answer may carry the other workspace's notes, titles,
blocks, search hits, feed entries, links, proposals, schema, audit entries, members or invitations
(their marker, their term, their ids, the addresses of the people only there):

- at its own workspace, reading every route;
- at the other workspace's notes and things by their ids, on every route that names one (writes
  included) and every tool — and afterwards the other workspace is as it was;
- naming the other workspace in ``x-fastpad-workspace``, reading every route: a token acts nowhere
  there, whoever its person is; a web session acts there only for a member (Ada), and then carries
  nothing of the workspace it came from.

Then what binds to a workspace besides credentials: an agent session and the block handles read
under it, an invitation, a member.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
import psycopg
import pytest

from fastpad.store.audit import AuditFilter
from tests.security.probe import (ELSEWHERE, NAMED_ELSEWHERE, NOTE, POLICY_DENIED, PUBLIC, READ, ROUTES, SESSION_HEADER,
                                  THING, WORKSPACE_HEADER, Route, aims, unsent)
from tests.security.tally import Tally
from tests.security.team_world import AGENT, KINDS, OAUTH, SESSION, Credential, TeamWorld, Workspace, build_team_world
from tests.security.tools import post_tool_call, sent_of, tool_calls
from tests.security.world import note_of

HOME = "a team's credential, reading its own workspace"
BY_ID = "a team's credential, at the other workspace's ids"
NAMED = "a team's credential, naming the other workspace"
Judge = Callable[[Tally], None]


@pytest.fixture(scope="session")
def team(target: Any) -> TeamWorld:
    return build_team_world(target)


def material(world: TeamWorld, workspace: Workspace) -> dict[str, str]:
    """What of ``workspace`` no credential of the other may be given: its notes' marker, its schema's
    term, the ids of what it holds, its invitation, and the people who belong to it alone."""
    estate, other = workspace.estate, world.other(workspace)
    alone = [name for name in workspace.people if name not in other.people]
    return {f"{workspace.id[-6:]}'s notes": estate.marker, f"{workspace.id[-6:]}'s schema": estate.term,
            **{f"{kind} of {workspace.id[-6:]}": value for kind, value in estate.identifiers().items()},
            f"an id out of reach: {workspace.id[-6:]}'s invitation": workspace.invitation,
            **{f"{name}, only in {workspace.id[-6:]}": world.emails[name] for name in alone},
            **{f"an id out of reach: {name}, only in {workspace.id[-6:]}": workspace.people[name] for name in alone}}


def send(tally: Tally, world: TeamWorld, credential: Credential, at: Workspace, withheld: dict[str, str],
         keep: Callable[[Route], bool], *, acts_nowhere: bool = False, **headers: str) -> None:
    """Every route ``keep`` keeps, aimed at ``at``'s estate, as ``credential``: each answer into ``tally``
    (judged for what it carries: no answer may hold what is withheld, none may be a server fault; a
    route whose answer is a typed refusal — asking with no model provider — must give that one, or
    not-found where it ``acts_nowhere``)."""
    with httpx.Client(base_url=world.target.base_url, timeout=30,
                      headers={**credential.headers(fresh=credential.kind == OAUTH), **headers}) as http:
        opened = http.post("/v1/agent-sessions")
        session = opened.json()["session"] if opened.status_code == 201 else "none"
        reachable = credential.home.estate.vault.id
        for name, route in sorted(ROUTES.items(), key=lambda item: (item[0].startswith("DELETE"), item[0])):
            if route.request is None or not keep(route):
                continue
            # At the other workspace's ids, a route whose own answer is a refusal (editing a comment
            # that is not yours) may refuse for the credential's scope first or find nothing there:
            # either way it is judged for what it carries, like every other answer.
            if acts_nowhere:
                want = route.answer and route.exceptions.get(NAMED_ELSEWHERE)
            else:
                want = None if route.answer is POLICY_DENIED else route.answer
            for aim in aims(route, tally.category, at.estate, session, reachable):
                for call in route.request(aim):
                    answer = http.request(call.method, call.path, params=call.params, json=call.json,
                                          content=call.content, headers=call.headers)
                    tally.add_http(name, f"{credential}: {call.method} {call.path}", answer.status_code,
                                   answer.content.decode("utf-8", "replace"), unsent(withheld, call), want)


def send_tools(tally: Tally, world: TeamWorld, credential: Credential, at: Workspace,
               withheld: dict[str, str]) -> None:
    """Every MCP tool, aimed at ``at``'s estate, as ``credential``'s token: each call posted as plain
    JSON-RPC, so a refusal the SDK client would raise (a viewer's token asking for a write scope, as a
    403 to re-authorize) is recorded like any other answer."""
    with httpx.Client(base_url=world.target.base_url, timeout=30,
                      headers=credential.headers(fresh=credential.kind == OAUTH)) as http:
        session = http.post("/v1/agent-sessions").json()["session"]
        for name, arguments, _ in tool_calls(ELSEWHERE, at.estate, session, credential.home.estate.vault.id):
            answer = post_tool_call(http, name, arguments)
            tally.add_http(name, f"{credential}: {sent_of(name, arguments)}", answer.status_code, answer.text,
                           unsent(withheld, arguments), None)


def reads(route: Route) -> bool:
    return route.reach == READ


def names_something(route: Route) -> bool:
    return route.reach != PUBLIC and route.names in (NOTE, THING)


def fingerprint(world: TeamWorld, workspace: Workspace) -> dict[str, Any]:
    """What a write into ``workspace`` would change: its feed, people, invitations, live tokens, edges,
    proposals and audit log (less exports, which reading as one of its members writes)."""
    with world.target.deployment.store.read(workspace.id) as tx:
        audit = tx.audit.page(AuditFilter(), before_seq=None, limit=10_000)
        return {
            "feed": tx.feed.head(),
            "members": sorted((p.id, role) for p, role in tx.members()),
            "invitations": sorted((i.id, i.accepted_at, i.revoked_at) for i in tx.team.invitations()),
            "tokens": sorted(t.id for t in tx.tokens() if t.revoked_at is None),
            "edges": sorted((edge.link.id, edge.link.status)
                            for edge in tx.links.edges(workspace.estate.vault.id, direction="both")),
            "turn": tx.turns.get(workspace.estate.turn).status,
            "audit": Counter(e.action for e in audit if e.action != "workspace.exported"),
        }


def attack_from(world: TeamWorld, home: Workspace, judge: Judge) -> None:
    """Every credential of ``home``'s people, sent the three ways; the other workspace unchanged after."""
    other = world.other(home)
    before = fingerprint(world, other)
    backend = world.target.backend
    own, theirs = material(world, home), material(world, other)
    tallies = {category: Tally(f"{category} ({home.id[-6:]})", backend) for category in (HOME, BY_ID, NAMED)}
    for credential in (c for c in world.credentials if c.home is home):
        send(tallies[HOME], world, credential, home, theirs, reads)
        send(tallies[BY_ID], world, credential, other, theirs, names_something)
        if credential.kind != SESSION:
            send_tools(tallies[BY_ID], world, credential, other, theirs)
        # Naming the other workspace: a member's web session acts there, carrying nothing of its own;
        # anything else acts nowhere, so nothing of either workspace may come back.
        acts_there = credential.kind == SESSION and credential.in_both
        # Its own workspace's, but for its person's own id and address, which a session says it is.
        yourself = {home.people[credential.person], world.emails[credential.person]}
        own_but_you = {kind: value for kind, value in own.items() if value not in yourself}
        send(tallies[NAMED], world, credential, other, own_but_you if acts_there else {**own_but_you, **theirs}, reads,
             acts_nowhere=not acts_there, **{WORKSPACE_HEADER: other.id})
    for tally in tallies.values():
        judge(tally)
        limited = [a for a in tally.attempts if a.status == 429]
        assert limited == [], f"{len(limited)} answers were rate limits, which hide what they would have said"
    # The reads were answered (so "nothing of the other" means something), by every kind of credential.
    answered_reads = {(a.surface, a.sent.split(": ")[0].split("'s ")[1].split(" (")[0])
                      for a in tallies[HOME].attempts if 200 <= a.status < 300}
    for route in ("GET /v1/notes", "GET /v1/notes/{note_id}", "GET /v1/search", "GET /v1/changes"):
        assert {kind for surface, kind in answered_reads if surface == route} == set(KINDS), route
    assert fingerprint(world, other) == before
    # What was sent by id to the other workspace was refused — whole, or item by item in a bulk
    # answer — on every route that names a note.
    answered = [a.sent for a in tallies[BY_ID].attempts
                if a.surface in ROUTES and ROUTES[a.surface].names == NOTE and not a.refused]
    assert answered == []


def test_nothing_of_the_second_workspace_reaches_the_first_ones_credentials(team: TeamWorld, judge: Judge) -> None:
    attack_from(team, team.first, judge)


def test_nothing_of_the_first_workspace_reaches_the_second_ones_credentials(team: TeamWorld, judge: Judge) -> None:
    attack_from(team, team.second, judge)


def test_the_person_in_both_reaches_the_other_only_through_their_session(team: TeamWorld) -> None:
    """Ada's session in the first workspace names the second, where she is a member: it acts there.
    Each of her tokens of the first, naming the second, finds nothing there."""
    vault = team.second.estate.vault
    for credential in (c for c in team.credentials if c.person == "ada" and c.home is team.first):
        with httpx.Client(base_url=team.target.base_url, timeout=30,
                          headers={**credential.headers(fresh=credential.kind == OAUTH),
                                   WORKSPACE_HEADER: team.second.id}) as http:
            listed = http.get("/v1/notes", params={"limit": 200})
            fetched = http.get(f"/v1/notes/{vault.id}")
        if credential.kind == SESSION:
            assert vault.id in {n["id"] for n in listed.json()["items"]} and fetched.status_code == 200
        else:
            assert (listed.status_code, listed.json().get("items")) in ((200, []), (403, None)), str(credential)
            assert fetched.status_code in (403, 404), str(credential)


def test_an_agent_session_and_its_handles_are_inert_in_the_other_workspace(team: TeamWorld) -> None:
    """Handles read by a second-workspace agent, presented by a first-workspace agent with its own
    session or with the borrowed one: never a proposal, on either workspace's note."""
    first, second = (next(c for c in team.credentials if c.kind == AGENT and c.home is w and c.role != "viewer")
                     for w in (team.first, team.second))
    theirs = _http(team, second)
    session = theirs.post("/v1/agent-sessions").json()["session"]
    vault = team.second.estate.vault
    read = theirs.get(f"/v1/notes/{vault.id}/handles", headers={SESSION_HEADER: session})
    assert read.status_code == 200, read.text
    handle = read.json()["blocks"][-1]["handle"]
    ours = _http(team, first)
    own_session = ours.post("/v1/agent-sessions").json()["session"]
    own_note = note_of(team.target.deployment.notes.get(
        team.target.deployment.people.principal_for(team.first.id, team.first.people["ada"]),
        team.first.estate.vault.id))
    for note, frontier in ((vault.id, vault.frontier), (own_note.id, own_note.frontier)):
        for agent_session in (own_session, session):
            answer = ours.post(f"/v1/notes/{note}/proposals", headers={SESSION_HEADER: agent_session}, json={
                "ops": [{"op": "replace_block", "handle": handle, "text": "Crossed over."}],
                "expected_frontier": frontier, "idempotency_key": f"cross-{note[-6:]}-{agent_session[-6:]}"})
            assert answer.status_code in (403, 404, 422), answer.text
            assert "Crossed over" not in answer.text
    ours.close()
    theirs.close()


def test_invitations_and_members_of_the_other_workspace_are_not_found(team: TeamWorld) -> None:
    """The first workspace's owner (Ada, a plain member of the second) manages its people only."""
    ada = next(c for c in team.credentials if c.person == "ada" and c.kind == SESSION and c.home is team.first)
    with _http(team, ada) as http:
        assert http.delete(f"/v1/invitations/{team.second.invitation}").status_code == 404
        for name in ("dee", "eve"):
            person = team.second.people[name]
            assert http.patch(f"/v1/members/{person}", json={"role": "viewer"}).status_code == 404
            assert http.delete(f"/v1/members/{person}").status_code == 404
        members = {m["id"] for m in http.get("/v1/members").json()["items"]}
        assert members == set(team.first.people.values())
        invitations = {i["id"] for i in http.get("/v1/invitations").json()["items"]}
        assert invitations == {team.first.invitation}
    # And as a member there she may not manage it either, whichever way she names it.
    with _http(team, ada, **{WORKSPACE_HEADER: team.second.id}) as http:
        refused = http.delete(f"/v1/invitations/{team.second.invitation}")
        assert refused.status_code == 403 and refused.json()["required_role"] == ["owner", "admin"]
    with team.target.deployment.store.read(team.second.id) as tx:
        assert [i.revoked_at for i in tx.team.invitations()] == [None]


def _http(team: TeamWorld, credential: Credential, **headers: str) -> httpx.Client:
    return httpx.Client(base_url=team.target.base_url, timeout=30,
                        headers={**credential.headers(fresh=credential.kind == OAUTH), **headers})


# ---------------------------------------------------------------------- PostgreSQL: the database holds the line


@pytest.mark.parametrize("target", ["postgres"], indirect=True)
def test_postgres_row_level_security_keeps_each_workspace_to_itself(team: TeamWorld) -> None:
    """Connected as the application's role, acting for one workspace, every workspace-scoped table —
    found in the catalogue, the tables added since the first migration included (the audit log,
    invitations, idempotency claims, OAuth grants…) — gives nothing of the other workspace and takes
    no write into it; the two global tables show only what their policies allow."""
    store = team.target.deployment.store
    first, second = team.first, team.second
    for credential in team.credentials:  # every kind held: sessions, OAuth grants, delegations
        credential.headers()
    with psycopg.connect(store.owner_url, autocommit=True) as owner:
        tables = sorted(r[0] for r in owner.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid"
            " WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND a.attname = 'workspace_id'"
            " AND NOT a.attisdropped"))
        append_only = {r[0] for r in owner.execute(
            "SELECT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid"
            " WHERE p.proname LIKE '%%append_only'")}
        held = {table: owner.execute(f"SELECT count(*) FROM {table} WHERE workspace_id = %s",  # noqa: S608
                                     (second.id,)).fetchone()[0] for table in tables}
    # The world put rows of the second workspace in these (so "none visible" is a finding, not an empty table).
    assert {table for table, rows in held.items() if rows} >= {
        "agents", "tokens", "web_sessions", "notes", "note_snapshots", "note_updates", "blocks", "links",
        "note_titles", "change_feed", "memory_topics", "chunks", "turns", "turn_events", "type_defs",
        "note_type_tags", "property_values", "collections", "imports", "oauth_grants", "audit_log", "invitations",
        "workspace_members", "credential_index"}
    with psycopg.connect(store.app_conninfo, autocommit=True) as app:
        for table in tables:
            if table == "credential_index":
                continue  # not readable at all by the application (tests/store/test_isolation.py)
            with app.transaction(force_rollback=True):
                app.execute("SELECT set_config('app.workspace_id', %s, true)", (first.id,))
                seen = app.execute(f"SELECT count(*) FROM {table} WHERE workspace_id <> %s",  # noqa: S608
                                   (first.id,)).fetchone()[0]
                assert seen == 0, table
                assert app.execute(f"UPDATE {table} SET workspace_id = workspace_id"  # noqa: S608
                                   " WHERE workspace_id = %s", (second.id,)).rowcount == 0, table
                assert app.execute(f"DELETE FROM {table} WHERE workspace_id = %s",  # noqa: S608
                                   (second.id,)).rowcount == 0, table
            # Moving one of its own rows into the other workspace is refused by the policy's check (an
            # append-only log — the audit log, turn events — refuses every update before that).
            refusal = psycopg.errors.RaiseException if table in append_only else psycopg.errors.InsufficientPrivilege
            with app.transaction(force_rollback=True):
                app.execute("SELECT set_config('app.workspace_id', %s, true)", (first.id,))
                own = app.execute(f"SELECT ctid FROM {table} LIMIT 1").fetchone()  # noqa: S608
                if own is not None:
                    with pytest.raises(refusal):
                        app.execute(f"UPDATE {table} SET workspace_id = %s WHERE ctid = %s",  # noqa: S608
                                    (second.id, own[0]))
        with app.transaction(force_rollback=True):
            app.execute("SELECT set_config('app.workspace_id', %s, true)", (first.id,))
            # The workspaces: its own row only; people: its own members only.
            assert [r[0] for r in app.execute("SELECT id FROM workspaces")] == [first.id]
            visible = {r[0] for r in app.execute("SELECT id FROM people")}
            assert visible == set(first.people.values())
            assert app.execute("UPDATE people SET display_name = 'x' WHERE id = %s",
                               (second.people["dee"],)).rowcount == 0
        with app.transaction(force_rollback=True):
            # Acting for Ada (the switcher's lookup): the workspaces she belongs to, and nothing in them.
            app.execute("SELECT set_config('app.person_id', %s, true)", (first.people["ada"],))
            assert {r[0] for r in app.execute("SELECT id FROM workspaces")} >= {first.id, second.id}
            assert app.execute("SELECT count(*) FROM notes").fetchone()[0] == 0
        with app.transaction(force_rollback=True):
            # Acting for Bob, who is only in the first: never the second.
            app.execute("SELECT set_config('app.person_id', %s, true)", (first.people["bob"],))
            assert second.id not in {r[0] for r in app.execute("SELECT id FROM workspaces")}
