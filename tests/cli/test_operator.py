"""The operator CLI as a subprocess: JSON output and the exit-code contract (`fp demo`: test_first_run.py)."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.api.conftest import FP, run_fp


@pytest.fixture(scope="module")
def deployment(tmp_path_factory) -> tuple[str, dict]:
    data_dir = str(tmp_path_factory.mktemp("cli") / "data")
    result = run_fp("init", "--data-dir", data_dir, "--json")
    return data_dir, json.loads(result.stdout)


def test_init_prints_one_json_document_and_refuses_twice(deployment):
    data_dir, init = deployment
    assert set(init) >= {"workspace_id", "owner_id", "owner_email", "database_url", "owner_password"}
    assert init["owner_password"], "a generated password is shown once"
    again = run_fp("init", "--data-dir", data_dir, "--json", check=False)
    assert again.returncode == 5 and again.stdout == ""
    assert json.loads(again.stderr)["error"] == "conflict"


def test_token_create_list_revoke(deployment):
    data_dir, _ = deployment
    created = json.loads(run_fp("token", "create", "--data-dir", data_dir, "--scopes", "notes:read,search:read",
                                "--expires", "7d", "--label", "ci", "--json").stdout)
    assert created["token"].startswith("fpk_live_") and created["kind"] == "agent"
    assert created["scopes"] == ["notes:read", "search:read"]
    listed = run_fp("token", "list", "--data-dir", data_dir, "--json").stdout
    assert created["token"] not in listed, "the secret is shown once, never listed"
    assert created["id"] in {t["id"] for t in json.loads(listed)}
    revoked = json.loads(run_fp("token", "revoke", "--data-dir", data_dir, created["id"], "--json").stdout)
    assert revoked == {"revoked": [created["id"]]}
    table = run_fp("token", "list", "--data-dir", data_dir).stdout
    assert created["id"] in table and "ci" in table


@pytest.mark.parametrize(
    ("args", "code", "slug"),
    [
        (["token", "create", "--scopes", "notes:fly"], 2, "validation-failed"),
        (["token", "create", "--scopes", "notes:read", "--notes", "nope"], 2, "validation-failed"),
        (["token", "create", "--scopes", "notes:read", "--expires", "400d"], 2, "validation-failed"),
        (["token", "revoke", "01ARZ3NDEKTSV4RRFFQ69G5FAV"], 4, "not-found"),
    ],
)
def test_failures_map_to_exit_codes_with_json_on_stderr(deployment, args, code, slug):
    data_dir, _ = deployment
    result = run_fp(*args[:2], "--data-dir", data_dir, *args[2:], "--json", check=False)
    assert result.returncode == code, result.stderr
    assert result.stdout == "", "no prose (or anything else) on stdout in --json mode"
    assert json.loads(result.stderr)["error"] == slug


def test_usage_errors_and_missing_deployments(tmp_path):
    assert run_fp("token", "create", "--no-such-flag", check=False).returncode == 2
    assert run_fp("frobnicate", check=False).returncode == 2
    missing = run_fp("token", "list", "--data-dir", str(tmp_path / "none"), "--json", check=False)
    assert missing.returncode == 4 and json.loads(missing.stderr)["error"] == "not-found"
    codes = run_fp("--exit-codes").stdout
    assert codes.splitlines()[7].startswith("7\t") and "spooled" in codes


def test_purge_removes_the_expired_trash_now(tmp_path):
    """In every workspace of the deployment: a second one the owner created is purged too."""
    data_dir = tmp_path / "data"
    run_fp("init", "--data-dir", str(data_dir), "--json")
    config = json.loads((data_dir / "fastpad.json").read_text())
    (data_dir / "fastpad.json").write_text(json.dumps({**config, "trash_retention_days": 0}))
    from fastpad.deployment import open_deployment

    with open_deployment(data_dir) as deployment:
        owner = deployment.operator_principal()
        kept = deployment.notes.create(owner, title="Kept").id
        doomed = deployment.notes.create(owner, title="Doomed").id
        deployment.notes.trash(owner, doomed)
        second = deployment.workspaces.create(owner, "Second")
        there = deployment.people.principal_for(second.id, owner.principal_id)
        doomed_there = deployment.notes.create(there, title="Doomed there").id
        deployment.notes.trash(there, doomed_there)
    planned = run_fp("purge", "--data-dir", str(data_dir), "--dry-run", "--json")
    assert json.loads(planned.stdout) == {"retention_days": 0, "would_purge": True}
    report = json.loads(run_fp("purge", "--data-dir", str(data_dir), "--json").stdout)
    assert sorted(report["purged"]) == sorted([doomed, doomed_there]) and report["idempotency_records"] == 0
    assert report["workspaces"] == 2
    with open_deployment(data_dir) as deployment:
        owner = deployment.operator_principal()
        assert [n.id for n in deployment.notes.list(owner, limit=10, include_trashed=True).items] == [kept]
    again = run_fp("purge", "--data-dir", str(data_dir))
    assert again.stdout.startswith("Purged 0 note(s)")


def test_user_set_password_reads_stdin_generates_on_request_signs_out_and_names_a_stranger(deployment):
    data_dir, init = deployment
    from fastpad.deployment import open_deployment
    from fastpad.errors import Unauthenticated

    with open_deployment(data_dir) as deployment:  # the owner signed in twice: a laptop, and a stolen cookie
        owner = deployment.people.principal_for(deployment.workspace_id, init["owner_id"])
        sessions = [deployment.people.create_session(owner)[0] for _ in range(2)]
    set_from_stdin = subprocess.run([FP, "user", "set-password", "--data-dir", data_dir, "--json"],
                                    input="correct horse battery\n", capture_output=True, text=True, timeout=60)
    assert set_from_stdin.returncode == 0, set_from_stdin.stderr
    assert json.loads(set_from_stdin.stdout) == {"email": init["owner_email"], "password": None, "sessions_ended": 2}
    with open_deployment(data_dir) as deployment:
        for session in sessions:
            with pytest.raises(Unauthenticated):
                deployment.people.session_principal(session)
    generated = json.loads(run_fp("user", "set-password", "--data-dir", data_dir, init["owner_email"], "--generate",
                                  "--json").stdout)["password"]
    with open_deployment(data_dir) as deployment:
        assert deployment.people.authenticate_password(init["owner_email"], generated).principal_id == init["owner_id"]
    short = subprocess.run([FP, "user", "set-password", "--data-dir", data_dir, "--json"], input="short\n",
                           capture_output=True, text=True, timeout=60)
    assert short.returncode == 2 and json.loads(short.stderr)["error"] == "validation-failed"
    stranger = run_fp("user", "set-password", "--data-dir", data_dir, "nobody@example.com", "--generate", "--json",
                      check=False)
    assert stranger.returncode == 4 and json.loads(stranger.stderr)["error"] == "not-found"
