"""The OAuth 2.1 authorization server that interactive MCP clients sign in through.

An MCP client (Claude, Cursor, the MCP Inspector) that meets ``401`` on
``/mcp`` follows the protected-resource metadata to this server and then:

1. registers itself (:meth:`OAuthService.register`, RFC 7591): a public client,
   no secret, its redirect URIs fixed;
2. sends a person's browser to the authorization endpoint with a PKCE S256
   challenge (:meth:`redirect_target`, :meth:`authorization_request`). A
   signed-in person reads the consent page (:meth:`consent`) and approves
   (:meth:`approve`): a single-use code, valid :data:`CODE_LIFETIME`, bound to
   the client, the redirect URI, the challenge, the scopes, the person and the
   session's workspace. Only its SHA-256 is stored;
3. exchanges the code with its PKCE verifier (:meth:`exchange_code`) for an
   access token and a refresh token.

The access token *is* a Fastpad agent token (``TokenService``), owned by the
approving person and named after the client ("Claude (OAuth)"), so scopes,
expiry, revocation, rate limits and the outbound path apply to it unchanged,
and it is listed and revoked with every other token. It lives
:data:`ACCESS_TOKEN_LIFETIME`; each refresh (:meth:`refresh`) gives the same
token a new secret — the old one stops working — and hands out the next
refresh token. Refresh tokens are single use and stored only as SHA-256;
presenting a used one, or a code a second time, revokes the whole grant. A
person revoking the token ends the grant too: its next refresh is refused.
:meth:`revoke` is RFC 7009.

Redirect URIs are https, http on a loopback host (RFC 8252 §7.3), or a native
app's private-use scheme (RFC 8252 §7.1, e.g. Cursor's ``cursor://``): a code
sent to one is useless without the verifier only its client holds. A request
names one of its client's registered URIs exactly, except that on a loopback
host the port may differ: a native app listens on whatever port the system
gives it when it signs in (RFC 8252 §7.3).

``offline_access`` in a scope list (OpenID's way of asking for a refresh token)
is accepted and needs nothing: every grant here comes with refresh tokens.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import SplitResult, parse_qsl, urlsplit

from fastpad.errors import FastpadError, FieldError, PolicyDenied, Unauthenticated, ValidationFailed
from fastpad.notes.ids import new_id
from fastpad.security.audit import SYSTEM, TOKEN_REVOKE, record
from fastpad.security.principals import Principal
from fastpad.security.scopes import AGENT_DEFAULT_SCOPES, ALL_SCOPES, ordered
from fastpad.security.tokens import TOKEN_PREFIX, TokenService, hash_secret, new_secret
from fastpad.store import Store, WorkspaceTx, utcnow
from fastpad.store.oauth import CODE_KIND, REFRESH_KIND, ClientRow, GrantRow, RefreshRow, client_transaction

CODE_LIFETIME = timedelta(minutes=5)
ACCESS_TOKEN_LIFETIME = timedelta(hours=1)
REFRESH_TOKEN_LIFETIME = timedelta(days=30)
UNAPPROVED_CLIENT_LIFETIME = timedelta(days=7)  # a registration nobody approved is swept after this
DEFAULT_SCOPES = AGENT_DEFAULT_SCOPES
GRANT_TYPES: tuple[str, ...] = ("authorization_code", "refresh_token")
MAX_REDIRECT_URIS = 10
MAX_URI_CHARS = 2000
MAX_CLIENT_NAME = 100
MAX_STATE_CHARS = 2000
UNNAMED_CLIENT = "Unnamed client"
CLIENT_ID_PREFIX = "fpc_"
CODE_PREFIX = "fpac_"
REFRESH_PREFIX = "fprt_"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
OFFLINE_ACCESS = "offline_access"  # asks for a refresh token: every grant has them
# Schemes a browser or the system gives a meaning of its own: never a native app's callback.
_NOT_PRIVATE_USE = frozenset({"http", "https", "javascript", "data", "file", "vbscript", "blob", "about", "filesystem",
                              "ftp", "ws", "wss", "mailto", "tel", "sms", "view-source"})
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*$")
_CHALLENGE = re.compile(r"^[A-Za-z0-9_-]{43}$")  # base64url of a SHA-256, unpadded (RFC 7636 §4.2)
_VERIFIER = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")  # RFC 7636 §4.1
_MAX_SECRET_CHARS = 200
_MAX_PARAMETERS = 30


@dataclass
class OAuthError(FastpadError):
    """A refusal of the authorization server. ``error`` is the code its endpoints answer with
    (RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 8707 §2): they render it as OAuth's own
    ``{"error", "error_description"}`` or as ``error=`` on a redirect, never as a problem document."""

    error: str = "invalid_request"
    slug = "oauth-error"
    title = "OAuth request refused"
    status = 400


def _refused(error: str, description: str) -> OAuthError:
    return OAuthError(description, error=error)


@dataclass(frozen=True)
class AuthorizationRequest:
    """A checked authorization request: what the consent page shows and an approval binds."""

    client: ClientRow
    redirect_uri: str
    state: str | None
    code_challenge: str
    scopes: tuple[str, ...]  # asked for (or the default), in canonical order
    resource: str | None

    @property
    def redirect_host(self) -> str:
        """Where the browser goes after a decision, as a person recognises it."""
        return redirect_host(self.redirect_uri)


@dataclass(frozen=True)
class Consent:
    request: AuthorizationRequest
    email: str  # who is approving
    workspace: str  # the workspace the client will act in (its name)


@dataclass(frozen=True)
class IssuedTokens:
    """A token response (RFC 6749 §5.1). The plaintexts exist only in this value."""

    access_token: str
    refresh_token: str | None
    expires_in: int
    scopes: tuple[str, ...]
    token_id: str
    workspace_id: str

    def response(self) -> dict[str, Any]:
        body: dict[str, Any] = {"access_token": self.access_token, "token_type": "Bearer",
                                "expires_in": self.expires_in, "scope": " ".join(self.scopes)}
        if self.refresh_token is not None:
            body["refresh_token"] = self.refresh_token
        return body


class OAuthService:
    def __init__(self, store: Store, tokens: TokenService, *, base_url: str,
                 clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.tokens = tokens
        self.issuer = base_url.rstrip("/")
        self.clock = clock
        # RFC 8707: a client may name this server or its MCP endpoint; both are what a token reaches.
        self.resources = frozenset({_canonical(self.issuer), _canonical(self.issuer + "/mcp")})

    # ------------------------------------------------------------------ registration (RFC 7591)

    def register(self, metadata: Any) -> ClientRow:
        """Register a public client. Unknown metadata is ignored (RFC 7591 §2); a requested
        ``token_endpoint_auth_method`` is answered with ``none``: no client holds a secret here."""
        if not isinstance(metadata, dict):
            raise _refused("invalid_client_metadata", "the registration is a JSON object of client metadata")
        redirect_uris = _redirect_uris(metadata.get("redirect_uris"))
        client_name = _client_name(metadata.get("client_name"))
        grant_types = _grant_types(metadata.get("grant_types", ["authorization_code"]))
        response_types = metadata.get("response_types", ["code"])
        if not isinstance(response_types, list) or set(response_types) != {"code"}:
            raise _refused("invalid_client_metadata", 'response_types is ["code"]: the only flow here')
        now = self.clock()
        row = ClientRow(CLIENT_ID_PREFIX + secrets.token_urlsafe(32), client_name, redirect_uris, grant_types, now,
                        None)
        with client_transaction(self.store, write=True, client_id=row.client_id,
                                unapproved_before=now - UNAPPROVED_CLIENT_LIFETIME) as clients:
            clients.sweep()
            clients.insert(row)
        return row

    def client(self, client_id: Any) -> ClientRow:
        if not isinstance(client_id, str) or not client_id.startswith(CLIENT_ID_PREFIX) or len(client_id) > 100:
            raise _refused("invalid_client", "client_id is not a client registered here; register first")
        with client_transaction(self.store, write=False, client_id=client_id) as clients:
            row = clients.get()
        if row is None:
            raise _refused("invalid_client", "client_id is not a client registered here; register first")
        return row

    # ------------------------------------------------------------------ the authorization endpoint

    def redirect_target(self, client_id: Any, redirect_uri: Any) -> tuple[ClientRow, str]:
        """The client and the redirect URI it named. These two are checked first and their
        failures are never sent to the redirect URI (RFC 6749 §4.1.2.1): they are shown."""
        client = self.client(client_id)
        if not isinstance(redirect_uri, str) or not redirect_uri:
            raise _refused("invalid_request", "redirect_uri is required")
        if not _registered(redirect_uri, client.redirect_uris):
            raise _refused("invalid_request", "redirect_uri is not one this client registered (it must match"
                                              " exactly; on a loopback host only the port may differ)")
        return client, redirect_uri

    def authorization_request(self, client: ClientRow, redirect_uri: str,
                              params: Mapping[str, str]) -> AuthorizationRequest:
        """The rest of an authorization request; a refusal here is redirected back with ``error=``."""
        state = echoed_state(params)
        if state is None and "state" in params:
            raise _refused("invalid_request", f"state is at most {MAX_STATE_CHARS} printable characters")
        if params.get("response_type") != "code":
            raise _refused("unsupported_response_type", "response_type must be code")
        if params.get("code_challenge_method") != "S256":
            raise _refused("invalid_request", "PKCE is required with code_challenge_method=S256; plain is refused")
        challenge = params.get("code_challenge", "")
        if not _CHALLENGE.match(challenge):
            raise _refused("invalid_request", "code_challenge is the unpadded base64url SHA-256 of the verifier")
        return AuthorizationRequest(
            client=client, redirect_uri=redirect_uri, state=state, code_challenge=challenge,
            scopes=_requested_scopes(params.get("scope")), resource=self._resource(params.get("resource")),
        )

    def consent(self, principal: Principal, request: AuthorizationRequest) -> Consent:
        """What the consent page names besides the request: who approves, and where the client will act."""
        _session_only(principal)
        with self.store.read(principal.workspace_id) as tx:
            person, workspace = tx.person(principal.principal_id), tx.workspace()
        if person is None or workspace is None:
            raise Unauthenticated(detail="not a member of this workspace")
        return Consent(request, person.email, workspace.name)

    def approve(self, principal: Principal, request: AuthorizationRequest, scopes: Iterable[str]) -> str:
        """A signed-in person grants ``scopes`` (a non-empty part of what was asked for) to the
        client: the authorization code, for the redirect back."""
        _session_only(principal)
        granted = set(scopes)
        if not granted or not granted <= set(request.scopes):
            raise ValidationFailed(
                detail="choose at least one of the permissions this client asked for",
                field_errors=[FieldError("scope", "choice", "tick at least one of the permissions listed")],
            )
        now = self.clock()
        code = CODE_PREFIX + secrets.token_urlsafe(32)
        with self.store.write(principal.workspace_id) as tx:
            if tx.member(principal.principal_id) is None:
                raise Unauthenticated(detail="not a member of this workspace")
            tx.oauth.insert_grant(GrantRow(
                id=new_id(), client_id=request.client.client_id, client_name=request.client.client_name,
                person_id=principal.principal_id, scopes=tuple(ordered(granted)), redirect_uri=request.redirect_uri,
                resource=request.resource, code_hash=hash_secret(code), code_challenge=request.code_challenge,
                code_expires_at=now + CODE_LIFETIME, code_used_at=None, token_id=None, created_at=now,
                revoked_at=None,
            ))
        with client_transaction(self.store, write=True, client_id=request.client.client_id) as clients:
            clients.approved(now)
        return code

    # ------------------------------------------------------------------ the token endpoint

    def exchange_code(self, *, client_id: Any, code: Any, redirect_uri: Any, code_verifier: Any,
                      resource: Any = None) -> IssuedTokens:
        """``grant_type=authorization_code``. A code presented a second time is refused and
        everything it issued is revoked (OAuth 2.1 §4.1.3)."""
        client = self.client(client_id)
        self._resource(resource)
        found = self._resolve(CODE_KIND, CODE_PREFIX, code)
        if found is None:
            raise _refused("invalid_grant", "not an authorization code this server issued")
        workspace_id, grant_id = found
        now = self.clock()
        with self.store.write(workspace_id) as tx:
            grant = tx.oauth.grant(grant_id, for_update=True)
            if grant is None:
                raise _refused("invalid_grant", "not an authorization code this server issued")
            if grant.code_used_at is not None:
                _end(tx, grant, now)
                refusal = _refused("invalid_grant", "this code was already used: everything it issued is revoked")
            else:
                _check_code(grant, client, redirect_uri, code_verifier, now)
                tx.oauth.code_used(grant.id, at=now)
                return self._first_tokens(tx, grant, client, now)
        raise refusal  # after the commit: the revocation stands

    def refresh(self, *, client_id: Any, refresh_token: Any, scope: Any = None, resource: Any = None) -> IssuedTokens:
        """``grant_type=refresh_token``: the grant's token gets a new secret (and, if ``scope``
        narrows, fewer scopes), and the next refresh token replaces this one. A used refresh
        token presented again revokes the grant (OAuth 2.1 §4.3.1)."""
        client = self.client(client_id)
        if "refresh_token" not in client.grant_types:
            raise _refused("unauthorized_client", "this client did not register the refresh_token grant")
        self._resource(resource)
        wanted = None if scope is None else _scope_set(scope) or None  # "offline_access" alone narrows nothing
        found = self._resolve(REFRESH_KIND, REFRESH_PREFIX, refresh_token)
        if found is None:
            raise _refused("invalid_grant", "not a refresh token this server issued")
        workspace_id, grant_id = found
        digest = hash_secret(refresh_token)
        now = self.clock()
        with self.store.write(workspace_id) as tx:
            grant = tx.oauth.grant(grant_id, for_update=True)
            row = tx.oauth.refresh(digest, for_update=True)
            if grant is None or row is None or grant.client_id != client.client_id:
                raise _refused("invalid_grant", "not a refresh token of this client")
            refusal = _refresh_refusal(tx, grant, row, now)
            if refusal is not None:
                _end(tx, grant, now)
            else:
                granted = tuple(ordered(grant.scopes if wanted is None else wanted))
                if not set(granted) <= set(grant.scopes):
                    raise _refused("invalid_scope", "a refresh can only narrow the scopes the person granted")
                tx.oauth.refresh_used(digest, at=now)
                access_token, token_hash, prefix = new_secret()
                assert grant.token_id is not None
                tx.oauth.rekey_token(grant.token_id, token_hash=token_hash, prefix=prefix, scopes=granted,
                                     expires_at=now + ACCESS_TOKEN_LIFETIME)
                return IssuedTokens(access_token, _new_refresh(tx, grant.id, now), _seconds(ACCESS_TOKEN_LIFETIME),
                                    granted, grant.token_id, workspace_id)
        raise refusal  # after the commit: the revocation stands

    # ------------------------------------------------------------------ revocation (RFC 7009)

    def revoke(self, *, client_id: Any, token: Any) -> None:
        """Revoke the grant an access or refresh token of this client belongs to: its token and
        every refresh token. A token this server does not know, or another client's, is left
        alone without saying so (RFC 7009 §2.2). The two kinds have their own prefixes, so a
        ``token_type_hint`` is never needed."""
        client = self.client(client_id)
        access = isinstance(token, str) and token.startswith(TOKEN_PREFIX)
        found = self._resolve(*(("token", TOKEN_PREFIX) if access else (REFRESH_KIND, REFRESH_PREFIX)), token)
        if found is None:
            return
        workspace_id, subject_id = found
        digest = hash_secret(token)
        with self.store.write(workspace_id) as tx:
            if access:
                row = tx.token(subject_id)
                current = row is not None and hmac.compare_digest(row.token_hash, digest)
                grant = tx.oauth.grant_of_token(subject_id, for_update=True) if current else None
            else:
                grant = tx.oauth.grant(subject_id, for_update=True)
            if grant is not None and grant.client_id == client.client_id:
                _end(tx, grant, self.clock())

    # ------------------------------------------------------------------ helpers

    def _resource(self, resource: Any) -> str | None:
        if resource is None:
            return None
        if not isinstance(resource, str) or _canonical(resource) not in self.resources:
            raise _refused("invalid_target", f"resource must be this server: {self.issuer} or {self.issuer}/mcp")
        return resource

    def _resolve(self, kind: str, prefix: str, secret: Any) -> tuple[str, str] | None:
        """(workspace, subject id) of a secret of ``kind``, or None."""
        if not isinstance(secret, str) or not secret.startswith(prefix) or len(secret) > _MAX_SECRET_CHARS:
            return None
        return self.store.resolve_credential(kind, hash_secret(secret))

    def _first_tokens(self, tx: WorkspaceTx, grant: GrantRow, client: ClientRow, now: datetime) -> IssuedTokens:
        """The grant's access token — for the agent of this person's earlier grant to the same
        client, so reconnecting does not add another agent — and its first refresh token."""
        if tx.member(grant.person_id) is None:
            raise _refused("invalid_grant", "the person who approved this is no longer a member")
        earlier = tx.oauth.earlier_token(grant.client_id, grant.person_id)
        earlier_row = tx.token(earlier) if earlier is not None else None
        access_token, info = self.tokens.create(
            tx.workspace_id, scopes=grant.scopes, expires_in=ACCESS_TOKEN_LIFETIME,
            label=f"{grant.client_name} (OAuth)", agent_id=earlier_row.agent_id if earlier_row else None,
            minted_by=Principal.person(tx.workspace_id, grant.person_id), within=tx,
        )
        tx.oauth.set_token(grant.id, info.id)
        refresh_token = _new_refresh(tx, grant.id, now) if "refresh_token" in client.grant_types else None
        return IssuedTokens(access_token, refresh_token, _seconds(ACCESS_TOKEN_LIFETIME), info.scopes, info.id,
                            tx.workspace_id)


# ---------------------------------------------------------------------- pieces


def registration(client: ClientRow) -> dict[str, Any]:
    """The client information response (RFC 7591 §3.2.1): a public client, so no secret."""
    return {
        "client_id": client.client_id,
        "client_id_issued_at": int(client.created_at.timestamp()),
        "client_name": client.client_name,
        "redirect_uris": list(client.redirect_uris),
        "grant_types": list(client.grant_types),
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }


def parameters(encoded: str) -> dict[str, str]:
    """A query string or form body of OAuth parameters, each sent once (RFC 6749 §3.1)."""
    try:
        pairs = parse_qsl(encoded, keep_blank_values=True, max_num_fields=_MAX_PARAMETERS)
    except ValueError:
        raise _refused("invalid_request", f"at most {_MAX_PARAMETERS} parameters") from None
    found: dict[str, str] = {}
    for name, value in pairs:
        if name in found:
            raise _refused("invalid_request", f"{name} is sent more than once")
        found[name] = value
    return found


def echoed_state(params: Mapping[str, str]) -> str | None:
    """The request's ``state``, to send back as it came; None if absent or not fit to echo."""
    state = params.get("state")
    return state if state is not None and len(state) <= MAX_STATE_CHARS and state.isprintable() else None


def redirect_host(uri: str) -> str:
    """``claude.ai``, ``localhost:6274``, or for a native app's scheme ``cursor://anysphere.cursor-mcp``."""
    parts = urlsplit(uri)
    if parts.scheme in ("http", "https"):
        return parts.netloc
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else f"{parts.scheme}:{parts.path}"


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of a verifier (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _session_only(principal: Principal) -> None:
    if not principal.is_person or principal.token_id is not None:
        raise PolicyDenied(detail="a client is approved from a signed-in browser session, not with a token",
                           extra={"reason": "session_only"})


def _check_code(grant: GrantRow, client: ClientRow, redirect_uri: Any, verifier: Any, now: datetime) -> None:
    if grant.client_id != client.client_id:
        raise _refused("invalid_grant", "this code was issued to another client")
    if grant.revoked_at is not None:
        raise _refused("invalid_grant", "this authorization was revoked")
    if grant.code_expires_at <= now:
        raise _refused("invalid_grant", "this code expired; authorize again")
    if redirect_uri != grant.redirect_uri:
        raise _refused("invalid_grant", "redirect_uri differs from the one the code was issued for")
    if not isinstance(verifier, str) or not _VERIFIER.match(verifier):
        raise _refused("invalid_grant", "code_verifier is 43 to 128 characters of A-Z a-z 0-9 - . _ ~")
    if not hmac.compare_digest(pkce_challenge(verifier), grant.code_challenge):
        raise _refused("invalid_grant", "code_verifier does not match the code_challenge")


def _refresh_refusal(tx: WorkspaceTx, grant: GrantRow, row: RefreshRow, now: datetime) -> OAuthError | None:
    """Why this refresh ends the grant, or None. Each reason revokes the grant: a reused refresh
    token was stolen or replayed, and a revoked token or a departed person means the connection is over."""
    if row.used_at is not None:
        return _refused("invalid_grant", "this refresh token was already used: the grant is revoked")
    if grant.revoked_at is not None:
        return _refused("invalid_grant", "this grant was revoked; authorize again")
    if row.expires_at <= now:
        return _refused("invalid_grant", "this refresh token expired; authorize again")
    token = tx.token(grant.token_id) if grant.token_id else None
    if token is None or token.revoked_at is not None:
        return _refused("invalid_grant", "this connection's token was revoked; authorize again")
    if tx.member(grant.person_id) is None:
        return _refused("invalid_grant", "the person who approved this is no longer a member")
    return None


def _end(tx: WorkspaceTx, grant: GrantRow, now: datetime) -> None:
    """Revoke a grant: its access token and, through the grant, every refresh token."""
    tx.oauth.revoke(grant.id, at=now)
    if grant.token_id is not None and (revoked := tx.revoke_token_tree(grant.token_id, now)):
        record(tx, SYSTEM, TOKEN_REVOKE, target=grant.token_id, at=now,
               details={"revoked": revoked, "oauth_grant_id": grant.id, "client": grant.client_name})


def _new_refresh(tx: WorkspaceTx, grant_id: str, now: datetime) -> str:
    token = REFRESH_PREFIX + secrets.token_urlsafe(32)
    tx.oauth.insert_refresh(RefreshRow(hash_secret(token), grant_id, now, now + REFRESH_TOKEN_LIFETIME, None))
    return token


def _seconds(delta: timedelta) -> int:
    return int(delta.total_seconds())


def _canonical(uri: str) -> str:
    """A resource as RFC 8707 compares it: scheme and host in any case, no trailing slash.
    One with a query or fragment is never this server's ("")."""
    parts = urlsplit(uri)
    if parts.query or parts.fragment:
        return ""
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


def _scope_set(scope: Any) -> frozenset[str]:
    if not isinstance(scope, str):
        raise _refused("invalid_scope", "scope is a space-separated list")
    names = frozenset(scope.split()) - {OFFLINE_ACCESS}
    unknown = sorted(names - set(ALL_SCOPES))
    if unknown:
        raise _refused("invalid_scope", f"unknown scope(s) {', '.join(unknown)}; known: {' '.join(ALL_SCOPES)}")
    return names


def _requested_scopes(scope: str | None) -> tuple[str, ...]:
    names = _scope_set(scope) if scope is not None else frozenset()
    return tuple(ordered(names)) if names else DEFAULT_SCOPES


def _registered(redirect_uri: str, registered: Iterable[str]) -> bool:
    """``redirect_uri`` is one of ``registered`` exactly, or differs from one only in
    the port of an http loopback URI (RFC 8252 §7.3)."""
    if redirect_uri in registered:
        return True
    if _redirect_uri_problem(redirect_uri) is not None:
        return False
    asked = urlsplit(redirect_uri)
    if asked.scheme.lower() != "http" or asked.hostname not in LOOPBACK_HOSTS:
        return False
    return any(_but_the_port(urlsplit(uri)) == _but_the_port(asked) for uri in registered)


def _but_the_port(parts: SplitResult) -> tuple[str, str | None, str, str]:
    return parts.scheme.lower(), parts.hostname, parts.path, parts.query


def _redirect_uris(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise _refused("invalid_redirect_uri", "redirect_uris is a non-empty list")
    if len(value) > MAX_REDIRECT_URIS:
        raise _refused("invalid_redirect_uri", f"at most {MAX_REDIRECT_URIS} redirect_uris")
    for uri in value:
        problem = _redirect_uri_problem(uri)
        if problem is not None:
            raise _refused("invalid_redirect_uri", f"{str(uri)[:100]!r}: {problem}")
    return tuple(dict.fromkeys(value))


def _redirect_uri_problem(uri: Any) -> str | None:
    """Why ``uri`` cannot be a redirect URI, or None."""
    if not isinstance(uri, str) or not uri:
        return "not a URI"
    if len(uri) > MAX_URI_CHARS:
        return f"longer than {MAX_URI_CHARS} characters"
    if any(ch <= " " or ch == "\x7f" for ch in uri):
        return "contains spaces or control characters"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - a malformed port raises here
    except ValueError:
        return "not a URI"
    scheme = parts.scheme.lower()
    if "#" in uri:
        return "a redirect URI has no fragment"
    if parts.username is not None or parts.password is not None:
        return "a redirect URI carries no user name or password"
    if scheme == "https":
        return None if parts.hostname else "an https URI names a host"
    if scheme == "http":
        return None if parts.hostname in LOOPBACK_HOSTS else \
            "http is only for a loopback host (127.0.0.1, [::1], localhost); use https"
    if _SCHEME.match(scheme) and scheme not in _NOT_PRIVATE_USE and (parts.netloc or parts.path):
        return None  # a native app's private-use scheme (RFC 8252 §7.1)
    return "must be https, http on a loopback host, or a native app's own scheme"


def _client_name(value: Any) -> str:
    if value is None:
        return UNNAMED_CLIENT
    if not isinstance(value, str) or len(value) > MAX_CLIENT_NAME or not value.isprintable():
        raise _refused("invalid_client_metadata", f"client_name is at most {MAX_CLIENT_NAME} printable characters")
    return value.strip() or UNNAMED_CLIENT


def _grant_types(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or "authorization_code" not in value or not set(value) <= set(GRANT_TYPES):
        raise _refused("invalid_client_metadata",
                       "grant_types is authorization_code, optionally with refresh_token: the only grants here")
    return tuple(g for g in GRANT_TYPES if g in value)
