"""The statements of the OAuth authorization server (migrations 0011).

Two parts, as the flow has two sides of "knowing the workspace":

* ``oauth_clients`` (:func:`client_transaction`): a client registers itself
  before any workspace is known and names its ``client_id`` on every later
  request. These statements do not run in a ``WorkspaceTx``: each transaction
  names the one client it may touch and every statement filters on that id. On
  PostgreSQL the id is also a transaction setting the table's forced row-level
  security compares with (migrations/postgres/0011_oauth.sql). The one
  statement without an id is the sweep of clients never approved, allowed only
  in a transaction that says so (``unapproved_before``).
* grants and refresh tokens (``tx.oauth``): a person's consent happens in their
  workspace, so these are workspace-scoped like every other table. A code or
  refresh token presented later is resolved to its workspace through the
  credential index (kinds ``oauth_code`` and ``oauth_refresh``), as a bearer
  token is.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastpad.store.base import Store, WorkspaceTx
    from fastpad.store.tx_core import Dialect

CODE_KIND = "oauth_code"
REFRESH_KIND = "oauth_refresh"


@dataclass(frozen=True)
class ClientRow:
    client_id: str
    client_name: str
    redirect_uris: tuple[str, ...]
    grant_types: tuple[str, ...]
    created_at: datetime
    approved_at: datetime | None


@dataclass(frozen=True)
class GrantRow:
    id: str
    client_id: str
    client_name: str
    person_id: str
    scopes: tuple[str, ...]
    redirect_uri: str
    resource: str | None
    code_hash: str
    code_challenge: str
    code_expires_at: datetime
    code_used_at: datetime | None
    token_id: str | None
    created_at: datetime
    revoked_at: datetime | None


@dataclass(frozen=True)
class RefreshRow:
    token_hash: str
    grant_id: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None


# ---------------------------------------------------------------------- clients, before a workspace is known

_CLIENT_COLUMNS = "client_id, client_name, redirect_uris, grant_types, created_at, approved_at"


@contextmanager
def client_transaction(
    store: "Store", *, write: bool, client_id: str, unapproved_before: datetime | None = None
) -> Iterator["OAuthClients"]:
    """A transaction on the client ``client_id`` (and, to sweep them, the clients never
    approved that registered before ``unapproved_before``)."""
    if not client_id:
        raise ValueError("a client transaction names its client")
    settings = {"app.oauth_client_id": client_id}
    if unapproved_before is not None:
        settings["app.oauth_unapproved_before"] = unapproved_before.isoformat()
    with store._transaction(write=write, settings=settings) as conn:  # noqa: SLF001 - the store's own package
        yield OAuthClients(conn, store.dialect, client_id, write=write, unapproved_before=unapproved_before)


class OAuthClients:
    def __init__(self, conn: Any, dialect: "Dialect", client_id: str, *, write: bool,
                 unapproved_before: datetime | None) -> None:
        self._conn = conn
        self._d = dialect
        self._client_id = client_id
        self._write = write
        self._unapproved_before = unapproved_before

    def _x(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._conn.execute(self._d.sql(sql), params)

    def _w(self) -> None:
        if not self._write:
            raise RuntimeError("this client transaction is read-only")

    def sweep(self) -> int:
        """Delete the clients never approved that registered before ``unapproved_before``."""
        self._w()
        if self._unapproved_before is None:
            raise RuntimeError("open the transaction with unapproved_before to sweep")
        cur = self._x("DELETE FROM oauth_clients WHERE approved_at IS NULL AND created_at < ?",
                      (self._d.ts(self._unapproved_before),))
        return cur.rowcount

    def insert(self, row: ClientRow) -> None:
        self._w()
        if row.client_id != self._client_id:
            raise ValueError("this transaction names another client")
        d = self._d
        self._x(
            f"INSERT INTO oauth_clients ({_CLIENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            (row.client_id, row.client_name, d.js(list(row.redirect_uris)), d.js(list(row.grant_types)),
             d.ts(row.created_at), d.ts(row.approved_at)),
        )

    def get(self) -> ClientRow | None:
        row = self._x(f"SELECT {_CLIENT_COLUMNS} FROM oauth_clients WHERE client_id = ?", (self._client_id,)).fetchone()
        if row is None:
            return None
        d = self._d
        return ClientRow(row[0], row[1], tuple(d.js_out(row[2])), tuple(d.js_out(row[3])), d.ts_out(row[4]),
                         d.ts_out(row[5]))

    def approved(self, at: datetime) -> None:
        """Record the first consent: a client someone approved is never swept."""
        self._w()
        self._x("UPDATE oauth_clients SET approved_at = ? WHERE client_id = ? AND approved_at IS NULL",
                (self._d.ts(at), self._client_id))


# ---------------------------------------------------------------------- grants and refresh tokens: tx.oauth

_GRANT_COLUMNS = (
    "id, client_id, client_name, person_id, scopes, redirect_uri, resource, code_hash, code_challenge,"
    " code_expires_at, code_used_at, token_id, created_at, revoked_at"
)
_REFRESH_COLUMNS = "token_hash, grant_id, created_at, expires_at, used_at"


class OAuthGrants:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx

    def insert_grant(self, g: GrantRow) -> None:
        tx, d = self._tx, self._tx._d
        tx._w()
        tx._x(
            f"INSERT INTO oauth_grants (workspace_id, {_GRANT_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (tx.workspace_id, g.id, g.client_id, g.client_name, g.person_id, d.js(list(g.scopes)), g.redirect_uri,
             g.resource, g.code_hash, g.code_challenge, d.ts(g.code_expires_at), d.ts(g.code_used_at), g.token_id,
             d.ts(g.created_at), d.ts(g.revoked_at)),
        )
        tx._index_credential(CODE_KIND, g.code_hash, g.id)

    def grant(self, grant_id: str, *, for_update: bool = False) -> GrantRow | None:
        tx = self._tx
        lock = tx._d.for_update if for_update else ""
        row = tx._x(f"SELECT {_GRANT_COLUMNS} FROM oauth_grants WHERE workspace_id = ? AND id = ?{lock}",
                    (tx.workspace_id, grant_id)).fetchone()
        return self._grant(row) if row else None

    def grant_of_token(self, token_id: str, *, for_update: bool = False) -> GrantRow | None:
        """The grant whose access token ``token_id`` is."""
        tx = self._tx
        lock = tx._d.for_update if for_update else ""
        row = tx._x(f"SELECT {_GRANT_COLUMNS} FROM oauth_grants WHERE workspace_id = ? AND token_id = ?{lock}",
                    (tx.workspace_id, token_id)).fetchone()
        return self._grant(row) if row else None

    def earlier_token(self, client_id: str, person_id: str) -> str | None:
        """The access token of this person's latest earlier grant to this client, if one was issued."""
        tx = self._tx
        row = tx._x(
            "SELECT token_id FROM oauth_grants WHERE workspace_id = ? AND client_id = ? AND person_id = ?"
            " AND token_id IS NOT NULL ORDER BY created_at DESC, id DESC LIMIT 1",
            (tx.workspace_id, client_id, person_id),
        ).fetchone()
        return row[0] if row else None

    def code_used(self, grant_id: str, *, at: datetime) -> bool:
        """Spend the grant's code; False if it already was."""
        tx = self._tx
        tx._w()
        cur = tx._x(
            "UPDATE oauth_grants SET code_used_at = ? WHERE workspace_id = ? AND id = ? AND code_used_at IS NULL",
            (tx._d.ts(at), tx.workspace_id, grant_id),
        )
        return cur.rowcount == 1

    def set_token(self, grant_id: str, token_id: str) -> None:
        tx = self._tx
        tx._w()
        tx._x("UPDATE oauth_grants SET token_id = ? WHERE workspace_id = ? AND id = ?",
              (token_id, tx.workspace_id, grant_id))

    def revoke(self, grant_id: str, *, at: datetime) -> bool:
        """Mark the grant revoked (its refresh tokens stop working); False if it already was."""
        tx = self._tx
        tx._w()
        cur = tx._x("UPDATE oauth_grants SET revoked_at = ? WHERE workspace_id = ? AND id = ? AND revoked_at IS NULL",
                    (tx._d.ts(at), tx.workspace_id, grant_id))
        return cur.rowcount == 1

    def insert_refresh(self, r: RefreshRow) -> None:
        tx, d = self._tx, self._tx._d
        tx._w()
        tx._x(
            f"INSERT INTO oauth_refresh_tokens (workspace_id, {_REFRESH_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            (tx.workspace_id, r.token_hash, r.grant_id, d.ts(r.created_at), d.ts(r.expires_at), d.ts(r.used_at)),
        )
        tx._index_credential(REFRESH_KIND, r.token_hash, r.grant_id)

    def refresh(self, token_hash: str, *, for_update: bool = False) -> RefreshRow | None:
        tx, d = self._tx, self._tx._d
        lock = d.for_update if for_update else ""
        row = tx._x(
            f"SELECT {_REFRESH_COLUMNS} FROM oauth_refresh_tokens WHERE workspace_id = ? AND token_hash = ?{lock}",
            (tx.workspace_id, token_hash),
        ).fetchone()
        return RefreshRow(row[0], row[1], d.ts_out(row[2]), d.ts_out(row[3]), d.ts_out(row[4])) if row else None

    def refresh_used(self, token_hash: str, *, at: datetime) -> bool:
        """Spend a refresh token; False if it already was."""
        tx = self._tx
        tx._w()
        cur = tx._x(
            "UPDATE oauth_refresh_tokens SET used_at = ? WHERE workspace_id = ? AND token_hash = ? AND used_at IS NULL",
            (tx._d.ts(at), tx.workspace_id, token_hash),
        )
        return cur.rowcount == 1

    def rekey_token(self, token_id: str, *, token_hash: str, prefix: str, scopes: Sequence[str],
                    expires_at: datetime) -> bool:
        """Give a grant's unrevoked access token a new secret, scopes and expiry. The old secret
        stops working at once: its hash still resolves to the token, which no longer carries it."""
        tx, d = self._tx, self._tx._d
        tx._w()
        cur = tx._x(
            "UPDATE tokens SET token_hash = ?, prefix = ?, scopes = ?, expires_at = ?"
            " WHERE workspace_id = ? AND id = ? AND revoked_at IS NULL",
            (token_hash, prefix, d.js(list(scopes)), d.ts(expires_at), tx.workspace_id, token_id),
        )
        if cur.rowcount != 1:
            return False
        tx._index_credential("token", token_hash, token_id)
        return True

    def _grant(self, r: Sequence[Any]) -> GrantRow:
        d = self._tx._d
        return GrantRow(
            id=r[0], client_id=r[1], client_name=r[2], person_id=r[3], scopes=tuple(d.js_out(r[4])),
            redirect_uri=r[5], resource=r[6], code_hash=r[7], code_challenge=r[8], code_expires_at=d.ts_out(r[9]),
            code_used_at=d.ts_out(r[10]), token_id=r[11], created_at=d.ts_out(r[12]), revoked_at=d.ts_out(r[13]),
        )
