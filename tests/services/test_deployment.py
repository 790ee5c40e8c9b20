"""init_deployment / open_deployment on both backends."""

from __future__ import annotations

import json
import stat

import pytest

from fastpad.deployment import init_deployment, open_deployment
from fastpad.errors import Conflict, NotFound
from fastpad.notes import Block


@pytest.fixture
def database_url(backend, request):
    if backend == "sqlite":
        return None  # the default: data_dir/fastpad.db
    return request.getfixturevalue("pg_cluster").blank_database()


def test_init_then_open(tmp_path, database_url, backend) -> None:
    data_dir = tmp_path / "deploy"
    result = init_deployment(data_dir, database_url, owner_email="Ada@Example.com")
    assert result.owner_email == "ada@example.com" and result.owner_password
    config_path = data_dir / "fastpad.json"
    assert stat.S_IMODE(config_path.stat().st_mode) == 0o600
    config = json.loads(config_path.read_text())
    assert config["workspace_id"] == result.workspace_id and len(bytes.fromhex(config["secret"])) == 32
    if backend == "sqlite":
        assert (data_dir / "fastpad.db").exists() and config["database_url"] == "sqlite:fastpad.db"
        assert result.database_url == "sqlite:///" + str((data_dir / "fastpad.db").resolve()).lstrip("/")
    with open_deployment(data_dir) as deployment:
        assert deployment.store.backend == backend
        assert (deployment.workspace_id, deployment.owner_id) == (result.workspace_id, result.owner_id)
        operator = deployment.operator_principal()
        assert (operator.kind, operator.principal_id) == ("person", result.owner_id)
        note = deployment.notes.create(operator, blocks=[Block(None, "paragraph", "hello")])
        plaintext, _ = deployment.tokens.create(deployment.workspace_id, scopes=["notes:read"])
        agent = deployment.tokens.authenticate(plaintext)
        assert [n.id for n in deployment.notes.list(agent).items] == [note.id]
        signed_in = deployment.people.authenticate_password("ada@example.com", result.owner_password)
        session_id, csrf = deployment.people.create_session(signed_in)
        assert deployment.people.check_csrf(session_id, csrf)
        deployment.store.ping()
    with pytest.raises(Conflict):
        init_deployment(data_dir, database_url)
    # The data directory can move (the SQLite path is relative to it).
    if backend == "sqlite":
        moved = tmp_path / "moved"
        data_dir.rename(moved)
        with open_deployment(moved) as deployment:
            assert len(deployment.notes.list(deployment.operator_principal()).items) == 1


def test_open_without_init_is_not_found(tmp_path) -> None:
    with pytest.raises(NotFound):
        open_deployment(tmp_path / "nothing")


def test_an_owner_password_given_is_used_and_not_echoed(tmp_path) -> None:
    result = init_deployment(tmp_path / "d", owner_password="a long passphrase")
    assert result.owner_password is None
    with open_deployment(tmp_path / "d") as deployment:
        deployment.people.authenticate_password("owner@localhost", "a long passphrase")
