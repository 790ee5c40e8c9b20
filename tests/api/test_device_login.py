"""The device-login routes over real HTTP, on both backends: RFC 8628 answers, the approval page,
the per-address limits (20 starts and 60 polls a minute)."""

from __future__ import annotations

import re
import secrets
import time

import httpx

from tests.api.conftest import Server
from tests.api.helpers import assert_problem, assert_retry_after_frees_the_oldest

GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def _from(server: Server, address: str | None = None) -> httpx.Client:
    """A client on its own loopback source address: its own per-address rate-limit bucket."""
    address = address or f"127.0.{secrets.randbelow(250) + 1}.{secrets.randbelow(250) + 2}"
    return httpx.Client(base_url=server.base_url, timeout=10.0,
                        transport=httpx.HTTPTransport(local_address=address))


def _signed_in(server: Server) -> tuple[httpx.Client, str]:
    browser = _from(server)
    csrf = browser.post("/v1/session", json={"email": server.owner_email, "password": server.owner_password})
    assert csrf.status_code == 201
    return browser, csrf.json()["csrf_token"]


def test_polling_before_approval_is_pending_and_too_often_slows_down(server: Server):
    terminal = _from(server)
    grant = terminal.post("/v1/device/code", data={"client_id": "fp"}).json()
    pending = terminal.post("/v1/device/token", data={"grant_type": GRANT, "device_code": grant["device_code"]})
    assert assert_problem(pending, 400, "authorization-pending", server.base_url)["error"] == "authorization_pending"
    too_soon = terminal.post("/v1/device/token", data={"grant_type": GRANT, "device_code": grant["device_code"]})
    body = assert_problem(too_soon, 400, "slow-down", server.base_url)
    assert body["error"] == "slow_down" and body["interval"] == grant["interval"] + 5


def test_start_approve_poll_issues_a_person_token_once(server: Server):
    terminal = _from(server)
    started = terminal.post("/v1/device/code", data={"client_id": "fp", "client_name": "ci <laptop>"})
    assert started.status_code == 200 and started.headers["cache-control"] == "no-store"
    grant = started.json()
    assert grant["verification_uri"] == f"{server.base_url}/device" and grant["interval"] >= 1
    assert grant["verification_uri_complete"].endswith(grant["user_code"])

    browser, csrf = _signed_in(server)
    page = browser.get("/device", params={"user_code": grant["user_code"]})
    assert "ci &lt;laptop&gt;" in page.text, "what the terminal calls itself is shown, escaped"
    assert "turns:accept" not in page.text
    assert re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1) == csrf
    decided = browser.post("/device", data={"user_code": grant["user_code"], "csrf_token": csrf, "decision": "approve"})
    assert decided.status_code == 200 and "approved" in decided.text

    issued = terminal.post("/v1/device/token", json={"grant_type": GRANT, "device_code": grant["device_code"]})
    assert issued.status_code == 200 and issued.headers["cache-control"] == "no-store"
    token = issued.json()
    assert token["token_type"] == "Bearer" and token["access_token"].startswith("fpk_live_")
    assert "turns:accept" not in token["scope"].split() and token["expires_in"] == 90 * 86400
    with httpx.Client(base_url=server.base_url, headers={"authorization": f"Bearer {token['access_token']}"}) as cli:
        assert cli.get("/v1/notes").status_code == 200
    again = terminal.post("/v1/device/token", data={"grant_type": GRANT, "device_code": grant["device_code"]})
    assert assert_problem(again, 400, "invalid-grant", server.base_url)["error"] == "invalid_grant"


def test_bad_requests_answer_oauth_errors(server: Server):
    terminal = _from(server)
    wrong_grant = terminal.post("/v1/device/token", data={"grant_type": "password", "device_code": "x"})
    assert assert_problem(wrong_grant, 422, "validation-failed", server.base_url)["error"] == "unsupported_grant_type"
    unknown = terminal.post("/v1/device/token", data={"grant_type": GRANT, "device_code": "fpd_nope"})
    assert assert_problem(unknown, 400, "invalid-grant", server.base_url)["error"] == "invalid_grant"
    bad_scope = terminal.post("/v1/device/code", data={"client_id": "fp", "scope": "notes:read notes:fly"})
    assert assert_problem(bad_scope, 422, "validation-failed", server.base_url)["error"] == "invalid_scope"


def test_the_page_refuses_a_token_and_a_missing_csrf_and_names_the_accept_grant(server: Server):
    terminal = _from(server)
    grant = terminal.post("/v1/device/code", data={"scope": "notes:read turns:accept"}).json()
    anonymous = _from(server).get("/device", params={"user_code": grant["user_code"]})
    assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/signin?next=")
    assert "turns:accept" not in anonymous.text, "nothing is shown signed out"
    browser, csrf = _signed_in(server)
    page = browser.get("/device", params={"user_code": grant["user_code"]})
    assert "This terminal asks for <code>turns:accept</code>" in page.text
    no_csrf = browser.post("/device", data={"user_code": grant["user_code"], "decision": "approve"})
    assert no_csrf.status_code == 403
    unknown = browser.get("/device", params={"user_code": "BBBB-BBBB"})
    assert unknown.status_code == 404 and "no pending login" in unknown.text
    denied = browser.post("/device", data={"user_code": grant["user_code"], "csrf_token": csrf, "decision": "deny"})
    assert "denied" in denied.text
    refused = terminal.post("/v1/device/token", data={"grant_type": GRANT, "device_code": grant["device_code"]})
    assert assert_problem(refused, 400, "access-denied", server.base_url)["error"] == "access_denied"


def _timed_post(client: httpx.Client, path: str, data: dict) -> tuple[httpx.Response, tuple[float, float]]:
    sent = time.monotonic()
    response = client.post(path, data=data)
    return response, (sent, time.monotonic())


def test_device_routes_are_rate_limited_per_address(server: Server):
    first, second = _from(server), _from(server)
    start = {"client_id": "fp"}
    answer, oldest = _timed_post(first, "/v1/device/code", start)
    answers = [answer.status_code] + [first.post("/v1/device/code", data=start).status_code for _ in range(19)]
    assert answers == [200] * 20
    limited, at = _timed_post(first, "/v1/device/code", start)
    body = assert_problem(limited, 429, "rate-limited", server.base_url)
    assert body["error"] == "slow_down" and body["limit"] == 20
    assert_retry_after_frees_the_oldest(body, oldest, at)
    assert second.post("/v1/device/code", data=start).status_code == 200, "another address is unaffected"
    poll = {"grant_type": GRANT, "device_code": "fpd_x"}
    answer, oldest = _timed_post(first, "/v1/device/token", poll)
    polls = [answer.status_code] + [first.post("/v1/device/token", data=poll).status_code for _ in range(59)]
    assert polls == [400] * 60
    limited, at = _timed_post(first, "/v1/device/token", poll)
    body = assert_problem(limited, 429, "rate-limited", server.base_url)
    assert body["limit"] == 60
    assert_retry_after_frees_the_oldest(body, oldest, at)
