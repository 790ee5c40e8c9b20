"""A response kept for a retry holds no secret in the clear.

Minting a token under an idempotency key keeps the first response (with the plaintext token, shown
once) for a day so a retry gets the same token. What the database holds of it is sealed: the
token's bytes appear nowhere in the SQLite file and its WAL, nor in PostgreSQL's rows — and the
retry still answers the same token. Both backends, the real server.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import psycopg

from tests.api.conftest import Server


def _database_bytes(server: Server) -> bytes:
    """Every byte the database holds where a response is kept."""
    url = json.loads((server.data_dir / "fastpad.json").read_text())["database_url"]
    if server.backend == "sqlite":
        files = [path for path in Path(server.data_dir).rglob("*") if path.is_file() and ".db" in path.name]
        assert files, f"no SQLite file under {server.data_dir}"
        return b"".join(path.read_bytes() for path in files)
    with psycopg.connect(url) as conn:
        conn.execute("SELECT set_config('app.workspace_id', %s, false)", (server.workspace_id,))
        rows = conn.execute("SELECT body FROM idempotency_keys").fetchall()
    assert rows, "no kept response is readable: the check would prove nothing"
    return b"".join(bytes(body) for (body,) in rows)


def test_a_minted_token_kept_for_a_retry_is_sealed_at_rest(server: Server, signed_in):
    key = f"mint-{uuid.uuid4()}"
    body = {"label": f"kept {key}", "scopes": ["notes:read"]}
    first = signed_in.post("/v1/tokens/delegate", json=body, headers={"Idempotency-Key": key})
    assert first.status_code == 201, first.text
    token = first.json()["token"]
    assert token.startswith("fpk_")

    retry = signed_in.post("/v1/tokens/delegate", json=body, headers={"Idempotency-Key": key})
    assert retry.status_code == first.status_code
    assert retry.headers.get("idempotent-replayed") == "true"
    assert retry.json()["token"] == token  # the same token, opened from the sealed record

    held = _database_bytes(server)
    assert token.encode() not in held
    assert token.split("_")[-1].encode() not in held  # nor its secret part alone
