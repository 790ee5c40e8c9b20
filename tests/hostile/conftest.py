"""The hostile-input suite's servers: the adversarial suites' ``target`` (``tests/conftest.py``: one
real ``fp serve`` per backend, shared with ``tests/security``), and on each the credentials the
attacks are sent with: the owner as a person, a second workspace's person (whose writes must not
notice an attack on the first), and the owner's narrower tokens.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from fastpad.notes.ids import new_id
from fastpad.store import utcnow
from tests.api.conftest import OWNER_EMAIL, Server, own_server
from tests.mcp.conftest import McpServer

PERSON_SCOPES = "notes:read,notes:write,notes:delete,notes:propose,search:read,graph:read,schema:write"


@dataclass(frozen=True)
class Hostile:
    target: McpServer
    owner: str  # the owner's CLI token: a person, every note scope
    neighbour: str  # a person's token in another workspace on the same server

    @property
    def base_url(self) -> str:
        return self.target.base_url

    def client(self, token: str | None = None, **headers: str) -> httpx.Client:
        if token:
            headers["authorization"] = f"Bearer {token}"
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=30)

    def person_token(self, scopes: str = PERSON_SCOPES, **options: object) -> str:
        """Another token of the owner's (a person's CLI credential), e.g. narrower."""
        return self.target.mint(f"hostile-{secrets.token_hex(4)}", scopes, person_email=OWNER_EMAIL, **options)


@pytest.fixture(scope="session")
def hostile(target: McpServer) -> Hostile:
    deployment = target.deployment
    elsewhere = new_id()
    with deployment.store.write(elsewhere) as tx:
        tx.insert_workspace("Neighbour", utcnow())
    email = f"neighbour-{secrets.token_hex(3)}@example.com"
    deployment.people.create_person(elsewhere, email, password=secrets.token_urlsafe(12), role="owner")
    neighbour, _ = deployment.tokens.create(elsewhere, scopes=PERSON_SCOPES, person_email=email,
                                            label="hostile: neighbour")
    owner = target.mint("hostile-owner", PERSON_SCOPES, person_email=OWNER_EMAIL)
    return Hostile(target, owner, neighbour)


@pytest.fixture(scope="session")
def owner(hostile: Hostile) -> Iterator[httpx.Client]:
    with hostile.client(hostile.owner) as client:
        yield client


@pytest.fixture(params=["sqlite", "postgres"])
def doomed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server of its own per backend, for a test that kills it."""
    with own_server(request, tmp_path_factory, "doomed") as server:
        yield server
