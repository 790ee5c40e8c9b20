"""Two workspaces × three people × every kind of credential, on one real ``fp serve``
(``tests/security/world.py``'s servers): what ``tests/security/test_workspaces.py`` sends across.

Each workspace holds an estate (``world.furnish``: notes with their marker, a proposal, an edge, a
collection, a topic, an import, a type), a pending invitation to an address carrying its marker
(so the invitation, its audit entry and the invitations list all carry it), and three people:

    first:  Ada (owner), Bob (member), Cyd (viewer)
    second: Dee (owner), Ada (member), Eve (viewer)

Ada belongs to both, with a different role in each. Every membership holds every kind of
credential a person's work produces, each bound to that one workspace: a web session (cookie and
CSRF token), a CLI token (what ``fp login``'s device flow mints), an agent token the person minted,
a token delegated from the CLI token (what ``fp mcp`` holds), and an OAuth client's access token
the person approved.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

from fastpad.notes.ids import new_id
from fastpad.security.oauth import OAuthService, pkce_challenge
from fastpad.security.principals import PERSON_RATE_LIMIT, Principal
from fastpad.store import utcnow
from tests.mcp.conftest import McpServer
from tests.security.world import EVERY_SCOPE, PROBE_RATE_LIMIT, Estate, furnish

SESSION, CLI, AGENT, DELEGATED, OAUTH = "web session", "CLI token", "agent token", "delegated token", "OAuth token"
KINDS = (SESSION, CLI, AGENT, DELEGATED, OAUTH)
PEOPLE = {  # name → (role in the first workspace, role in the second); None: not a member
    "ada": ("owner", "member"), "bob": ("member", None), "cyd": ("viewer", None),
    "dee": (None, "owner"), "eve": (None, "viewer"),
}
REDIRECT = "http://127.0.0.1:9/callback"


@dataclass(frozen=True)
class Workspace:
    id: str
    estate: Estate
    invitation: str  # a pending invitation's id
    people: dict[str, str]  # name → person id, of its members


@dataclass
class Credential:
    """One credential of one person in one workspace. ``headers`` gives what a request carries; an
    OAuth access token is minted afresh for each batch, as its agent's 120 requests a minute would
    otherwise cut a batch short (every other kind's limit is set or shared above what a batch sends)."""

    kind: str
    person: str
    role: str
    home: Workspace
    elsewhere: Workspace
    in_both: bool  # its person belongs to the other workspace too
    mint: Callable[[], dict[str, str]]
    _headers: dict[str, str] = field(default_factory=dict)

    def headers(self, *, fresh: bool = False) -> dict[str, str]:
        if fresh or not self._headers:
            self._headers = self.mint()
        return self._headers

    @property
    def token(self) -> str | None:
        value = self.headers().get("authorization", "")
        return value.removeprefix("Bearer ") or None

    def __str__(self) -> str:
        return f"{self.person.title()}'s {self.kind} ({self.role})"


@dataclass(frozen=True)
class TeamWorld:
    target: McpServer
    first: Workspace
    second: Workspace
    emails: dict[str, str]
    credentials: list[Credential]

    def other(self, workspace: Workspace) -> Workspace:
        return self.second if workspace is self.first else self.first


def build_team_world(target: McpServer) -> TeamWorld:
    deployment = target.deployment
    tag = secrets.token_hex(3)
    emails = {name: f"{name}-{tag}@example.com" for name in PEOPLE}
    ids: dict[str, str] = {}
    workspaces: list[Workspace] = []
    for index in (0, 1):
        workspace_id = new_id()
        with deployment.store.write(workspace_id) as tx:
            tx.insert_workspace(f"Team {index + 1} {tag}", utcnow())
        members: dict[str, str] = {}
        # Owners first: the estate is planted by the owner.
        for name, roles in sorted(PEOPLE.items(), key=lambda item: item[1][index] != "owner"):
            if roles[index] is not None:
                person = deployment.people.create_person(workspace_id, emails[name], role=roles[index],
                                                         password=secrets.token_urlsafe(12), display_name=name.title())
                members[name] = ids.setdefault(name, person.id)
        owner = deployment.people.principal_for(workspace_id, members[next(n for n, r in PEOPLE.items()
                                                                           if r[index] == "owner")])
        estate = furnish(deployment, owner)
        invitation = deployment.invitations.invite(owner, f"invitee-{estate.marker}@example.com",
                                                   base_url=target.base_url).invitation.id
        workspaces.append(Workspace(workspace_id, estate, invitation, members))
    first, second = workspaces
    credentials = [credential
                   for index, (home, elsewhere) in enumerate(((first, second), (second, first)))
                   for name, roles in PEOPLE.items() if roles[index] is not None
                   for credential in _credentials(target, name, roles[index], emails[name], ids[name], home, elsewhere,
                                                  in_both=None not in roles)]
    return TeamWorld(target, first, second, emails, credentials)


def _credentials(target: McpServer, name: str, role: str, email: str, person_id: str, home: Workspace,
                 elsewhere: Workspace, *, in_both: bool) -> list[Credential]:
    deployment = target.deployment
    person = deployment.people.principal_for(home.id, person_id)
    label = f"{name} in {home.id[-6:]}"

    def session() -> dict[str, str]:
        cookie, csrf = deployment.people.create_session(person, user_agent="security probe")
        return {"cookie": f"fastpad_session={cookie}", "x-csrf-token": csrf}

    cli, _ = deployment.tokens.create(home.id, scopes=EVERY_SCOPE, person_email=email, minted_by=person,
                                      label=f"{label}: CLI")

    def agent() -> dict[str, str]:
        token, _ = deployment.tokens.create(home.id, scopes=EVERY_SCOPE, minted_by=person, label=f"{label}: agent",
                                            rate_limit_per_minute=PROBE_RATE_LIMIT)
        return _bearer(token)

    def delegated() -> dict[str, str]:
        login = deployment.tokens.authenticate(cli)
        token, _ = deployment.tokens.create(home.id, scopes=EVERY_SCOPE, minted_by=login,
                                            label=f"{label}: fp mcp", rate_limit_per_minute=PERSON_RATE_LIMIT)
        return _bearer(token)

    made = {SESSION: session, CLI: lambda: _bearer(cli), AGENT: agent, DELEGATED: delegated,
            OAUTH: lambda: _bearer(oauth_token(target, person))}
    return [Credential(kind, name, role, home, elsewhere, in_both, made[kind]) for kind in KINDS]


def oauth_token(target: McpServer, person: Principal) -> str:
    """An MCP client registered, approved by ``person`` signed in, and its code exchanged: the access token."""
    oauth = OAuthService(target.deployment.store, target.deployment.tokens, base_url=target.base_url)
    client = oauth.register({"redirect_uris": [REDIRECT], "client_name": "Probe client"})
    verifier = secrets.token_urlsafe(48)
    request = oauth.authorization_request(client, REDIRECT, {
        "response_type": "code", "code_challenge_method": "S256", "code_challenge": pkce_challenge(verifier),
        "scope": EVERY_SCOPE.replace(",", " ")})
    code = oauth.approve(person, request, request.scopes)
    return oauth.exchange_code(client_id=client.client_id, code=code, redirect_uri=REDIRECT,
                               code_verifier=verifier).access_token


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}
