"""The OAuth 2.1 authorization server over real HTTP, on both backends: metadata, Dynamic Client
Registration, the consent page (a signed-in person, the real form and its CSRF token), the token
endpoint with PKCE, refresh rotation and reuse detection, revocation — and the official MCP Python
SDK's OAuth client connecting the way Claude or Cursor would."""

from __future__ import annotations

import html
import json
import re
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from fastpad.security.oauth import pkce_challenge
from fastpad.security.scopes import AGENT_DEFAULT_SCOPES, ALL_SCOPES
from tests.api.conftest import Server
from tests.api.helpers import assert_problem
from tests.api.test_device_login import _from, _signed_in
from tests.mcp.wire import post

CALLBACK = "http://127.0.0.1:33418/callback"


def _register(client: httpx.Client, **metadata) -> httpx.Response:
    body = {"client_name": "Claude", "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], **metadata}
    return client.post("/oauth/register", json=body)


def _request(client_id: str, verifier: str, **extra: str) -> dict[str, str]:
    return {"response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK, "state": "st-" + verifier[:8],
            "code_challenge": pkce_challenge(verifier), "code_challenge_method": "S256", **extra}


def _form_of(page: str) -> tuple[dict[str, str], list[str], list[str]]:
    """The consent form as a browser would send it: hidden fields, ticked boxes, every box."""
    hidden = {name: html.unescape(value)
              for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page)}
    boxes = re.findall(r'name="scope_choice" value="([^"]+)"( checked)?', page)
    return hidden, [scope for scope, ticked in boxes if ticked], [scope for scope, _ in boxes]


def _callback(response: httpx.Response) -> dict[str, str]:
    """The redirect back to the client: its query parameters."""
    assert response.status_code == 303, response.text
    location = response.headers["location"]
    assert location.startswith(CALLBACK + "?"), location
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


def _decide(browser: httpx.Client, params: dict[str, str], decision: str = "approve",
            scopes: list[str] | None = None) -> httpx.Response:
    """Open the consent page as the signed-in person and press a button on its real form."""
    page = browser.get("/oauth/authorize", params=params)
    assert page.status_code == 200, page.text
    hidden, ticked, _ = _form_of(page.text)
    chosen = ticked if scopes is None else scopes
    fields = [*hidden.items(), ("decision", decision), *(("scope_choice", scope) for scope in chosen)]
    return browser.post("/oauth/authorize", content=urlencode(fields),
                        headers={"content-type": "application/x-www-form-urlencoded"})


def _exchange(client: httpx.Client, client_id: str, code: str, verifier: str, **extra: str) -> httpx.Response:
    return client.post("/oauth/token", data={"grant_type": "authorization_code", "code": code, "client_id": client_id,
                                             "redirect_uri": CALLBACK, "code_verifier": verifier, **extra})


def _refresh(client: httpx.Client, client_id: str, refresh_token: str) -> httpx.Response:
    return client.post("/oauth/token", data={"grant_type": "refresh_token", "refresh_token": refresh_token,
                                             "client_id": client_id})


def _connected(server: Server, name: str = "Claude") -> tuple[httpx.Client, str, dict]:
    """A client registered and approved by the owner: (its HTTP client, client_id, token response)."""
    app = _from(server)
    client_id = _register(app, client_name=name).json()["client_id"]
    browser, _ = _signed_in(server)
    verifier = secrets.token_urlsafe(48)
    code = _callback(_decide(browser, _request(client_id, verifier)))["code"]
    issued = _exchange(app, client_id, code, verifier)
    assert issued.status_code == 200, issued.text
    return app, client_id, issued.json()


def _oauth_error(response: httpx.Response, error: str) -> str:
    assert response.status_code == 400, response.text
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert body["error"] == error and body["error_description"], body
    return body["error_description"]


def _lists_tools(server: Server, token: str) -> int:
    response = post(f"{server.base_url}/mcp", token, "tools/list")
    if response.status_code == 200:
        assert {"fastpad_search", "fastpad_capabilities"} <= {t["name"] for t in response.json()["result"]["tools"]}
    return response.status_code


# ---------------------------------------------------------------------- discovery


def test_authorization_server_metadata_matches_the_protected_resource_metadata(server: Server):
    with _from(server) as anyone:
        metadata = anyone.get("/.well-known/oauth-authorization-server")
        resource = anyone.get("/.well-known/oauth-protected-resource").json()
    assert metadata.status_code == 200 and metadata.headers["access-control-allow-origin"] == "*"
    doc, base = metadata.json(), server.base_url
    assert doc["issuer"] == base and resource["authorization_servers"] == [doc["issuer"]]
    assert (doc["authorization_endpoint"], doc["token_endpoint"], doc["registration_endpoint"],
            doc["revocation_endpoint"]) == (f"{base}/oauth/authorize", f"{base}/oauth/token", f"{base}/oauth/register",
                                            f"{base}/oauth/revoke")
    assert doc["response_types_supported"] == ["code"]
    assert doc["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["token_endpoint_auth_methods_supported"] == ["none"]
    assert doc["scopes_supported"] == list(ALL_SCOPES) == resource["scopes_supported"]
    preflight = httpx.options(f"{base}/oauth/token", headers={"origin": "http://localhost:6274",
                                                              "access-control-request-method": "POST"})
    assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "*"


def test_the_mcp_challenge_still_points_at_the_protected_resource_metadata(server: Server):
    challenge = post(f"{server.base_url}/mcp", None, "tools/list")
    assert challenge.status_code == 401
    assert f'resource_metadata="{server.base_url}/.well-known/oauth-protected-resource"' in \
        challenge.headers["www-authenticate"]


# ---------------------------------------------------------------------- registration


def test_registration_issues_an_unguessable_public_client(server: Server):
    with _from(server) as app:
        loopbacks = [CALLBACK, "http://[::1]:8080/cb", "http://localhost/cb", "https://claude.ai/api/mcp/auth_callback",
                     "cursor://anysphere.cursor-mcp/oauth/callback"]
        response = _register(app, redirect_uris=loopbacks, token_endpoint_auth_method="client_secret_post",
                             software_id="ignored")
        again = _register(app)
    assert response.status_code == 201 and response.headers["cache-control"] == "no-store"
    client = response.json()
    assert client["client_id"].startswith("fpc_") and len(client["client_id"]) >= 40
    assert client["client_id"] != again.json()["client_id"]
    assert client["redirect_uris"] == loopbacks and client["client_name"] == "Claude"
    assert client["token_endpoint_auth_method"] == "none" and "client_secret" not in client, "public clients only"
    assert client["grant_types"] == ["authorization_code", "refresh_token"] and client["response_types"] == ["code"]
    assert isinstance(client["client_id_issued_at"], int)


def test_registration_refuses_unsafe_redirects_and_oversize_metadata(server: Server):
    with _from(server) as app:
        for bad in ("http://example.com/cb", "javascript:alert(1)", "https://claude.ai/cb#fragment", "/relative",
                    "https://user@claude.ai/cb", "http://127.0.0.1.evil.example/cb", "data:text/html,hi",
                    "https://claude.ai/" + "a" * 2000):
            _oauth_error(_register(app, redirect_uris=[bad]), "invalid_redirect_uri")
        _oauth_error(_register(app, redirect_uris=[]), "invalid_redirect_uri")
        _oauth_error(_register(app, redirect_uris=[f"{CALLBACK}/{i}" for i in range(11)]), "invalid_redirect_uri")
        _oauth_error(_register(app, client_name="x" * 101), "invalid_client_metadata")
        _oauth_error(_register(app, grant_types=["client_credentials"]), "invalid_client_metadata")
        _oauth_error(app.post("/oauth/register", content=b"{not json", headers={"content-type": "application/json"}),
                     "invalid_client_metadata")
        oversize = app.post("/oauth/register", content=json.dumps({"redirect_uris": [CALLBACK], "pad": "x" * 70_000}),
                            headers={"content-type": "application/json"})
        assert_problem(oversize, 413, "payload-too-large", server.base_url)


def test_registration_is_rate_limited_per_address(server: Server):
    first, second = _from(server), _from(server)
    answers = [_register(first).status_code for _ in range(21)]
    assert answers[:20] == [201] * 20
    body = assert_problem(_register(first), 429, "rate-limited", server.base_url)
    assert body["retry_after_ms"] > 0
    assert _register(second).status_code == 201, "another address is unaffected"


# ---------------------------------------------------------------------- the whole flow


def test_register_consent_exchange_call_refresh_and_reuse(server: Server, owner: httpx.Client):
    app = _from(server)
    client_id = _register(app, client_name="Claude <desktop>").json()["client_id"]
    verifier = secrets.token_urlsafe(48)
    params = _request(client_id, verifier, resource=f"{server.base_url}/mcp")

    signed_out = _from(server).get("/oauth/authorize", params=params)
    assert signed_out.status_code == 303 and signed_out.headers["location"].startswith("/signin?next=/oauth/authorize")

    browser, csrf = _signed_in(server)
    page = browser.get("/oauth/authorize", params=params)
    assert page.status_code == 200
    assert "Claude &lt;desktop&gt;" in page.text, "the client's own name, escaped"
    assert "127.0.0.1:33418" in page.text and server.owner_email in page.text
    hidden, ticked, offered = _form_of(page.text)
    assert hidden["csrf_token"] == csrf and offered == ticked == list(AGENT_DEFAULT_SCOPES), "the agent default"
    assert "form-action 'self' http://127.0.0.1:33418" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"

    back = _callback(_decide(browser, params))
    assert back["state"] == params["state"] and back["iss"] == server.base_url and back["code"].startswith("fpac_")
    issued = _exchange(app, client_id, back["code"], verifier, resource=server.base_url)
    assert issued.status_code == 200 and issued.headers["cache-control"] == "no-store"
    first = issued.json()
    assert first["token_type"] == "Bearer" and first["expires_in"] == 3600
    assert first["access_token"].startswith("fpk_live_") and first["refresh_token"].startswith("fprt_")
    assert first["scope"].split() == list(AGENT_DEFAULT_SCOPES)
    assert _lists_tools(server, first["access_token"]) == 200

    agents = owner.get("/v1/agents").json()["items"]
    mine = [a for a in agents if a["name"] == "Claude <desktop> (OAuth)"]
    assert len(mine) == 1 and [t["label"] for t in mine[0]["tokens"]] == ["Claude <desktop> (OAuth)"]
    assert mine[0]["scopes"] == list(AGENT_DEFAULT_SCOPES) and mine[0]["live"]

    rotated = _refresh(app, client_id, first["refresh_token"])
    assert rotated.status_code == 200, rotated.text
    second = rotated.json()
    assert second["refresh_token"] != first["refresh_token"] and second["access_token"] != first["access_token"]
    assert _lists_tools(server, first["access_token"]) == 401, "the old secret stops working at once"
    assert _lists_tools(server, second["access_token"]) == 200
    [again] = [a for a in owner.get("/v1/agents").json()["items"] if a["id"] == mine[0]["id"]]
    assert len(again["tokens"]) == 1, "a refresh renews the one token; it does not add another"

    assert "already used" in _oauth_error(_refresh(app, client_id, first["refresh_token"]), "invalid_grant")
    assert _lists_tools(server, second["access_token"]) == 401, "reusing a rotated refresh token revokes the family"
    _oauth_error(_refresh(app, client_id, second["refresh_token"]), "invalid_grant")


def test_a_signed_out_person_signs_in_on_the_sites_page_and_comes_back_to_the_consent(server: Server):
    app = _from(server)
    client_id = _register(app, client_name="Inspector").json()["client_id"]
    browser = _from(server)
    to_signin = browser.get("/oauth/authorize", params=_request(client_id, secrets.token_urlsafe(48)))
    form = browser.get(to_signin.headers["location"])
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.text))
    assert html.unescape(fields["next"]).startswith("/oauth/authorize?")
    signed_in = browser.post("/signin", data={**{k: html.unescape(v) for k, v in fields.items()},
                                              "email": server.owner_email, "password": server.owner_password})
    assert signed_in.status_code == 303 and signed_in.headers["location"].startswith("/oauth/authorize?")
    consent = browser.get(signed_in.headers["location"])
    assert consent.status_code == 200 and "<strong>Inspector</strong> wants to connect" in consent.text


def test_revocation_ends_the_connection(server: Server):
    app, client_id, tokens = _connected(server)
    assert app.post("/oauth/revoke", data={"token": "fpk_live_unknown", "client_id": client_id}).status_code == 200
    revoked = app.post("/oauth/revoke", data={"token": tokens["access_token"], "client_id": client_id})
    assert revoked.status_code == 200 and revoked.content == b""
    assert _lists_tools(server, tokens["access_token"]) == 401
    _oauth_error(_refresh(app, client_id, tokens["refresh_token"]), "invalid_grant")

    app, client_id, tokens = _connected(server)
    other_app, other_id, _ = _connected(server, "Another app")
    assert other_app.post("/oauth/revoke", data={"token": tokens["refresh_token"], "client_id": other_id,
                                                 "token_type_hint": "refresh_token"}).status_code == 200
    assert _lists_tools(server, tokens["access_token"]) == 200, "another client cannot revoke this one's grant"
    assert app.post("/oauth/revoke", data={"token": tokens["refresh_token"], "client_id": client_id,
                                           "token_type_hint": "refresh_token"}).status_code == 200
    assert _lists_tools(server, tokens["access_token"]) == 401


def test_a_person_revoking_the_token_like_any_other_ends_the_grant(server: Server):
    app, client_id, tokens = _connected(server, "Cursor")
    listed = json.loads(server.fp("token", "list", "--data-dir", str(server.data_dir), "--json").stdout)
    [token] = [t for t in listed if t["prefix"] == tokens["access_token"][:15]]
    assert token["label"] == "Cursor (OAuth)" and token["kind"] == "agent"
    server.fp("token", "revoke", "--data-dir", str(server.data_dir), token["id"])
    assert _lists_tools(server, tokens["access_token"]) == 401
    assert "revoked" in _oauth_error(_refresh(app, client_id, tokens["refresh_token"]), "invalid_grant")


# ---------------------------------------------------------------------- refusals


def test_the_token_endpoint_refuses_a_wrong_verifier_redirect_or_client_and_a_reused_code(server: Server):
    app = _from(server)
    client_id = _register(app).json()["client_id"]
    other_id = _register(app).json()["client_id"]
    browser, _ = _signed_in(server)
    verifier = secrets.token_urlsafe(48)
    code = _callback(_decide(browser, _request(client_id, verifier)))["code"]
    assert "does not match" in _oauth_error(_exchange(app, client_id, code, secrets.token_urlsafe(48)), "invalid_grant")
    _oauth_error(_exchange(app, client_id, code, verifier, redirect_uri="http://127.0.0.1:33418/other"),
                 "invalid_grant")
    _oauth_error(_exchange(app, other_id, code, verifier), "invalid_grant")
    _oauth_error(_exchange(app, client_id, code, verifier, resource="https://elsewhere.example/mcp"), "invalid_target")
    _oauth_error(_exchange(app, "fpc_nobody", code, verifier), "invalid_client")
    _oauth_error(app.post("/oauth/token", data={"grant_type": "password", "client_id": client_id}),
                 "unsupported_grant_type")
    _oauth_error(app.post("/oauth/token", content=f"grant_type=authorization_code&code={code}&code={code}",
                          headers={"content-type": "application/x-www-form-urlencoded"}), "invalid_request")

    issued = _exchange(app, client_id, code, verifier)  # the failures above did not spend it
    assert issued.status_code == 200
    assert "already used" in _oauth_error(_exchange(app, client_id, code, verifier), "invalid_grant")
    assert _lists_tools(server, issued.json()["access_token"]) == 401, "a replayed code revokes what it issued"
    _oauth_error(_refresh(app, client_id, issued.json()["refresh_token"]), "invalid_grant")


def test_a_loopback_redirect_may_name_any_port_and_offline_access_asks_for_nothing_more(server: Server):
    """RFC 8252 §7.3: a native app registers its loopback callback once and listens on
    whatever port it gets at sign-in; the code goes to that port and only that URI redeems it."""
    app = _from(server)
    client_id = _register(app, redirect_uris=[CALLBACK, "https://app.example:8443/cb"]).json()["client_id"]
    browser, _ = _signed_in(server)
    verifier = secrets.token_urlsafe(48)
    ephemeral = "http://127.0.0.1:50123/callback"
    params = {**_request(client_id, verifier, scope="notes:read offline_access"), "redirect_uri": ephemeral}

    page = browser.get("/oauth/authorize", params=params)
    assert page.status_code == 200, page.text
    assert "form-action 'self' http://127.0.0.1:50123" in page.headers["content-security-policy"]
    _, ticked, offered = _form_of(page.text)
    assert offered == ticked == ["notes:read"], "offline_access is not a permission to grant"
    decided = _decide(browser, params)
    assert decided.status_code == 303 and decided.headers["location"].startswith(ephemeral + "?")
    code = parse_qs(urlsplit(decided.headers["location"]).query)["code"][0]

    _oauth_error(_exchange(app, client_id, code, verifier), "invalid_grant")  # the registered port is not the one asked
    issued = _exchange(app, client_id, code, verifier, redirect_uri=ephemeral)
    assert issued.status_code == 200, issued.text
    assert issued.json()["scope"] == "notes:read" and issued.json()["refresh_token"].startswith("fprt_")
    refresh_token = issued.json()["refresh_token"]
    rotated = app.post("/oauth/token", data={"grant_type": "refresh_token", "client_id": client_id,
                                             "refresh_token": refresh_token, "scope": "offline_access"})
    assert rotated.status_code == 200 and rotated.json()["scope"] == "notes:read", rotated.text

    for other in ("http://127.0.0.1:50123/elsewhere", "http://localhost:50123/callback",
                  "https://app.example:9443/cb", "http://127.0.0.1:50123/callback?x=1"):
        refused = browser.get("/oauth/authorize", params={**params, "redirect_uri": other})
        assert refused.status_code == 400 and "location" not in refused.headers, other


def test_bad_authorization_requests_redirect_with_an_error_or_stay_on_a_page(server: Server):
    app = _from(server)
    client_id = _register(app).json()["client_id"]
    browser, _ = _signed_in(server)
    verifier = secrets.token_urlsafe(48)
    good = _request(client_id, verifier)

    for params, error in (({**good, "code_challenge_method": "plain"}, "invalid_request"),
                          ({k: v for k, v in good.items() if k != "code_challenge"}, "invalid_request"),
                          ({**good, "response_type": "token"}, "unsupported_response_type"),
                          ({**good, "scope": "notes:read notes:fly"}, "invalid_scope"),
                          ({**good, "resource": "https://elsewhere.example"}, "invalid_target")):
        back = _callback(browser.get("/oauth/authorize", params=params))
        assert back["error"] == error and back["state"] == good["state"] and back["error_description"], back

    for params in ({**good, "client_id": "fpc_" + "x" * 43}, {**good, "redirect_uri": "http://127.0.0.1:33418/evil"},
                   {k: v for k, v in good.items() if k != "redirect_uri"}):
        page = browser.get("/oauth/authorize", params=params)
        assert page.status_code == 400 and "location" not in page.headers, "never sent to an unchecked redirect URI"
        assert "not valid" in page.text

    denied = _callback(_decide(browser, good, "deny"))
    assert denied["error"] == "access_denied" and denied["state"] == good["state"] and "code" not in denied


def test_the_consent_form_needs_its_csrf_token_and_a_permission_asked_for(server: Server):
    app = _from(server)
    client_id = _register(app).json()["client_id"]
    browser, _ = _signed_in(server)
    params = _request(client_id, secrets.token_urlsafe(48), scope="notes:read turns:accept")
    page = browser.get("/oauth/authorize", params=params)
    hidden, ticked, offered = _form_of(page.text)
    assert offered == ["notes:read", "turns:accept"] and ticked == ["notes:read"], "turns:accept is never pre-ticked"
    assert "<code>turns:accept</code></strong>, which is not ticked for you" in page.text

    forged = {**hidden, "csrf_token": "forged", "decision": "approve", "scope_choice": "notes:read"}
    assert browser.post("/oauth/authorize", data=forged).status_code == 403
    elsewhere = browser.post("/oauth/authorize", data={**forged, "csrf_token": hidden["csrf_token"]},
                             headers={"origin": "https://evil.example"})
    assert elsewhere.status_code == 403
    widened = _decide(browser, params, scopes=["notes:read", "export"])
    assert widened.status_code == 422 and "at least one of the permissions" in widened.text
    assert _decide(browser, params, scopes=[]).status_code == 422

    verifier = secrets.token_urlsafe(48)
    params = _request(client_id, verifier, scope="notes:read turns:accept")
    code = _callback(_decide(browser, params, scopes=["notes:read", "turns:accept"]))["code"]
    granted = _exchange(app, client_id, code, verifier).json()
    assert granted["scope"] == "notes:read turns:accept", "a person may grant it by ticking it"


# ---------------------------------------------------------------------- the official SDK client


class _Memory:
    """The SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def test_the_mcp_sdk_oauth_client_connects_through_a_signed_in_person(server: Server):
    """``OAuthClientProvider`` discovers, registers, sends the person to the consent page (here: the signed-in
    owner pressing Approve with httpx) and exchanges the code, then lists the tools — no token pasted anywhere."""
    browser, _ = _signed_in(server)
    storage = _Memory()
    answered: list[AuthorizationCodeResult] = []

    async def redirect_handler(authorization_url: str) -> None:
        query = {name: values[0] for name, values in parse_qs(urlsplit(authorization_url).query).items()}
        # The SDK asks for the scope the 401 challenge names: an agent's default.
        assert set(query["scope"].split()) == set(AGENT_DEFAULT_SCOPES), "the SDK asks for the challenge's scope"
        back = _callback(await anyio.to_thread.run_sync(_decide, browser, query))
        answered.append(AuthorizationCodeResult(code=back["code"], state=back["state"], iss=back["iss"]))

    async def callback_handler() -> AuthorizationCodeResult:
        return answered.pop()

    async def scenario() -> list[str]:
        auth = OAuthClientProvider(
            f"{server.base_url}/mcp",
            OAuthClientMetadata(client_name="SDK test client", redirect_uris=[CALLBACK],
                                grant_types=["authorization_code", "refresh_token"],
                                token_endpoint_auth_method="none"),
            storage, redirect_handler=redirect_handler, callback_handler=callback_handler,
        )
        async with httpx2.AsyncClient(auth=auth, timeout=30) as http, \
                Client(streamable_http_client(f"{server.base_url}/mcp", http_client=http)) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    tools = anyio.run(scenario)
    assert "fastpad_search" in tools
    assert storage.client is not None and storage.client.client_id.startswith("fpc_")
    assert storage.tokens is not None and storage.tokens.refresh_token.startswith("fprt_")
    granted = set(storage.tokens.scope.split())
    assert granted == set(AGENT_DEFAULT_SCOPES), "everything asked for, as pre-ticked"
