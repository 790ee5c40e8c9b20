"""Every server-rendered form, filled in and submitted by clicking in Chromium against a real
``fp serve``: sign-in and sign-out, ``/device`` approval, the review page's accept, accept-some,
reject and revert, Agent activity's Mark reviewed, minting and revoking on Settings → Agents &
tokens, and the OAuth consent. Each test checks what really happened over HTTP — the token works
or is refused, the turn's status, the note's blocks — not only what the page says.

And the other half of the origin check: the same forms sent from a page of another site are
refused with a page that says why, and change nothing."""

from __future__ import annotations

import html
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, expect

from fastpad.notes.ids import new_id
from tests.api.conftest import Server
from tests.api.test_device_login import GRANT, _from, _signed_in
from tests.api.test_oauth import _exchange, _register, _request
from tests.api.test_settings_tokens import works
from tests.api.test_turns import HttpAgent, new_note, note_blocks
from tests.web.conftest import screenshot, sign_in, signin_url

CROSS_SITE_MESSAGE = "This form was sent from another site, so it was not accepted."


# ---------------------------------------------------------------------- another site


class _OtherSiteHandler(BaseHTTPRequestHandler):
    """``/form?action=URL&<field>=<value>…``: a page whose one form posts those fields to ``URL``.
    Anything else: a plain page (an OAuth client's callback lands here)."""

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        parts = urlsplit(self.path)
        if parts.path == "/form":
            fields = {name: values[0] for name, values in parse_qs(parts.query).items()}
            action = fields.pop("action")
            hidden = "".join(f'<input type="hidden" name="{html.escape(name)}" value="{html.escape(value)}">'
                             for name, value in fields.items())
            body = (f'<!doctype html><title>Another site</title><form method="post" action="{html.escape(action)}">'
                    f'{hidden}<button type="submit">Send</button></form>')
        else:
            body = "<!doctype html><title>The app</title><p>Back at the app.</p>"
        encoded = body.encode()
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(encoded)))
        self.end_headers()
        self.wfile.write(encoded)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's signature
        pass  # the test output is no place for an access log


class OtherSite:
    """A web server that is not Fastpad, on its own port: reached as ``localhost`` it is another
    site; as ``127.0.0.1`` it is the same site as Fastpad but another origin."""

    def __init__(self) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _OtherSiteHandler)
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    @property
    def callback(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    def form(self, host: str, action: str, **fields: str) -> str:
        return f"http://{host}:{self.port}/form?{urlencode({'action': action, **fields})}"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture(scope="module")
def other_site() -> Iterator[OtherSite]:
    site = OtherSite()
    yield site
    site.close()


@pytest.fixture(scope="module")
def owner(web_server: Server) -> Iterator[httpx.Client]:
    """The owner's CLI token over HTTP: to set notes up and check them afterwards."""
    with web_server.client(web_server.token("owner")) as client:
        yield client


def proposed(server: Server, owner: httpx.Client,
             scopes: str = "notes:read,notes:propose") -> tuple[HttpAgent, str, dict]:
    """A note "First." / "Second." and an agent's pending turn changing the first block and adding a third:
    (the agent, the note id, the turn)."""
    note = new_note(owner, "First.", "Second.")
    agent = HttpAgent(server, scopes)
    read = agent.read(note)
    turn = agent.propose(note, [
        {"op": "replace_block", "handle": read["blocks"][0]["handle"], "text": "First, improved."},
        {"op": "insert_after", "handle": read["blocks"][1]["handle"], "text": "Third."},
    ], read["frontier"])
    assert turn.status_code == 201, turn.text
    return agent, note, turn.json()


def turn_status(agent: HttpAgent, turn_id: str) -> dict:
    response = agent.client.get(f"/v1/turns/{turn_id}")
    assert response.status_code == 200, response.text
    return response.json()


# ---------------------------------------------------------------------- sign-in, sign-out


def test_signing_in_with_the_form_and_a_wrong_password_shows_the_error(context: BrowserContext,
                                                                         web_server: Server) -> None:
    page = context.new_page()
    page.goto(f"{web_server.base_url}/agent-activity")
    page.wait_for_url(signin_url(web_server, "/agent-activity"))
    screenshot(page, "signin")
    with page.expect_response(f"{web_server.base_url}/signin") as answer:
        sign_in(page, web_server, password="not the password")
    assert answer.value.status == 401
    expect(page.get_by_role("alert")).to_have_text("Wrong email or password.")
    expect(page.get_by_label("Email")).to_have_value(web_server.owner_email)

    sign_in(page, web_server)
    assert page.url == f"{web_server.base_url}/agent-activity"
    expect(page.get_by_role("heading", name="Agent activity")).to_be_visible()


def test_signing_out_ends_the_session(signed_in: Page, context: BrowserContext, web_server: Server) -> None:
    session_cookies = {c["name"]: c["value"] for c in context.cookies()}
    signed_in.get_by_role("button", name="Sign out").click()
    signed_in.wait_for_url(f"{web_server.base_url}/signin")
    with httpx.Client(base_url=web_server.base_url, cookies=session_cookies) as old_session:
        assert old_session.get("/agent-activity").status_code == 303, "the session is over on the server too"
    signed_in.goto(f"{web_server.base_url}/settings/tokens")
    signed_in.wait_for_url(signin_url(web_server, "/settings/tokens"))


# ---------------------------------------------------------------------- fp login's approval page


def test_approving_a_terminal_on_the_device_page_lets_it_exchange_its_code(context: BrowserContext,
                                                                            web_server: Server) -> None:
    terminal = _from(web_server)
    grant = terminal.post("/v1/device/code", data={"client_id": "fp", "client_name": "web test terminal"}).json()
    page = context.new_page()
    page.goto(grant["verification_uri_complete"])  # signed out: the sign-in page first, then back here
    sign_in(page, web_server)
    expect(page.get_by_text(grant["user_code"], exact=True)).to_be_visible()
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_role("heading", name="Terminal approved")).to_be_visible()

    issued = terminal.post("/v1/device/token", data={"grant_type": GRANT, "device_code": grant["device_code"]})
    assert issued.status_code == 200, issued.text
    assert works(web_server, issued.json()["access_token"]) == 200


# ---------------------------------------------------------------------- the review page


def test_accept_all_then_revert_on_the_review_page(signed_in: Page, web_server: Server, owner: httpx.Client) -> None:
    agent, note, turn = proposed(web_server, owner)
    signed_in.goto(turn["review_url"])
    signed_in.get_by_role("button", name="Accept all").click()
    expect(signed_in.locator(".status")).to_have_text("accepted")
    screenshot(signed_in, "review-accepted")
    assert turn_status(agent, turn["id"])["status"] == "accepted"
    assert [text for text, _, _ in note_blocks(owner, note)] == ["First, improved.", "Second.", "Third."]

    signed_in.get_by_role("button", name="Revert").click()
    expect(signed_in.locator(".status")).to_have_text("reverted")
    assert turn_status(agent, turn["id"])["status"] == "reverted"
    assert [text for text, _, _ in note_blocks(owner, note)] == ["First.", "Second."]


def test_accept_selected_then_reject_the_rest_on_the_review_page(signed_in: Page, web_server: Server,
                                                                  owner: httpx.Client) -> None:
    agent, note, turn = proposed(web_server, owner)
    changed = turn["diffs"][0]["block_id"]
    signed_in.goto(turn["review_url"])
    signed_in.locator(f"#b-{changed}").get_by_label("accept this").uncheck()
    signed_in.get_by_role("button", name="Accept selected").click()
    expect(signed_in.locator(".status")).to_have_text("partially accepted")
    assert note_blocks(owner, note) == [("First.", "human_typed", "human_accepted"),
                                        ("Second.", "human_typed", "human_accepted"),
                                        ("Third.", "agent_written", "human_accepted")]

    signed_in.get_by_role("button", name="Reject the rest").click()
    expect(signed_in.locator(f"#b-{changed} .state")).to_have_text("(decided)")
    assert turn_status(agent, turn["id"])["status"] == "partially_accepted"
    assert [text for text, _, _ in note_blocks(owner, note)] == ["First.", "Second.", "Third."]


def test_reject_on_the_review_page(signed_in: Page, web_server: Server, owner: httpx.Client) -> None:
    agent, note, turn = proposed(web_server, owner)
    signed_in.goto(turn["review_url"])
    signed_in.get_by_role("button", name="Reject the rest").click()
    expect(signed_in.locator(".status")).to_have_text("rejected")
    assert turn_status(agent, turn["id"])["status"] == "rejected"
    assert [text for text, _, _ in note_blocks(owner, note)] == ["First.", "Second."]


# ---------------------------------------------------------------------- agent activity


def test_mark_reviewed_on_agent_activity(signed_in: Page, web_server: Server, owner: httpx.Client) -> None:
    agent, note, turn = proposed(web_server, owner, "notes:read,notes:propose,turns:accept")
    assert agent.client.post(f"/v1/turns/{turn['id']}/accept").status_code == 200  # on its own grant
    signed_in.goto(f"{web_server.base_url}/agent-activity")
    row = signed_in.locator("tr", has=signed_in.locator(f'a[href="/review/{turn["id"]}"]').first)
    row.get_by_role("button", name="Mark reviewed").click()
    expect(row).to_have_count(0)
    assert turn_status(agent, turn["id"])["reviewed_at"] is not None
    assert {review for _, _, review in note_blocks(owner, note)} == {"human_accepted"}


# ---------------------------------------------------------------------- settings: agents & tokens


def test_minting_a_token_then_revoking_it_on_the_settings_page(signed_in: Page, web_server: Server) -> None:
    label = f"web: minted {secrets.token_hex(3)}"
    signed_in.goto(f"{web_server.base_url}/settings/tokens")
    signed_in.get_by_label("Label").fill(label)
    signed_in.get_by_label("Expires in").select_option("7d")
    signed_in.get_by_role("button", name="Mint token").click()
    secret = signed_in.locator("code.secret").text_content()
    screenshot(signed_in, "token-minted")
    assert secret and secret.startswith("fpk_live_")
    assert works(web_server, secret) == 200

    signed_in.get_by_role("link", name="Back to Agents & tokens").click()
    signed_in.get_by_role("row").filter(has_text=label).get_by_role("button", name="Revoke").click()
    expect(signed_in.get_by_role("status")).to_contain_text(f"Revoked {label}")
    assert works(web_server, secret) == 401


# ---------------------------------------------------------------------- the OAuth consent


def test_approving_the_oauth_consent_sends_the_browser_back_with_a_code_that_exchanges(
        signed_in: Page, web_server: Server, other_site: OtherSite) -> None:
    app = _from(web_server)
    registered = _register(app, client_name="Web test app", redirect_uris=[other_site.callback])
    assert registered.status_code == 201, registered.text
    client_id = registered.json()["client_id"]
    verifier = secrets.token_urlsafe(48)
    params = _request(client_id, verifier, redirect_uri=other_site.callback)
    signed_in.goto(f"{web_server.base_url}/oauth/authorize?{urlencode(params)}")
    expect(signed_in.get_by_text("Web test app", exact=True)).to_be_visible()
    signed_in.get_by_role("button", name="Approve").click()
    signed_in.wait_for_url(f"{other_site.callback}?**")

    back = {name: values[0] for name, values in parse_qs(urlsplit(signed_in.url).query).items()}
    assert back["state"] == params["state"] and back["iss"] == web_server.base_url
    issued = _exchange(app, client_id, back["code"], verifier, redirect_uri=other_site.callback)
    assert issued.status_code == 200, issued.text
    assert works(web_server, issued.json()["access_token"]) == 200


# ---------------------------------------------------------------------- forms from another site


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"], ids=["cross-site", "same-site-other-port"])
def test_forms_sent_from_another_site_are_refused_in_words_and_change_nothing(
        signed_in: Page, web_server: Server, other_site: OtherSite, host: str) -> None:
    target = web_server.mint("notes:read", "--label", "web: cross-site target")
    page = signed_in
    for action in ("/signin", "/signout", "/device", "/oauth/authorize", f"/settings/tokens/{target['id']}/revoke"):
        page.goto(other_site.form(host, f"{web_server.base_url}{action}", csrf_token="guessed", decision="approve",
                                  email=web_server.owner_email, password=web_server.owner_password))
        with page.expect_response(f"{web_server.base_url}{action}") as answer:
            page.get_by_role("button", name="Send").click()
        assert answer.value.status == 403, action
        expect(page.get_by_text(CROSS_SITE_MESSAGE)).to_contain_text(f"Open Fastpad at {web_server.base_url}")
    screenshot(page, f"refused-{host}")
    page.get_by_role("link", name="Back").click()  # the last form was the revoke's: back to its page, on Fastpad
    page.wait_for_url(f"{web_server.base_url}/settings/tokens")
    expect(page.get_by_role("heading", name="Agents & tokens")).to_be_visible()  # still signed in: sign-out refused
    assert works(web_server, target["token"]) == 200, "the revoke was refused"


# What a browser's headers can say about where a form came from, and whether it gets past the origin check.
# Chromium always sends Sec-Fetch-Site; Origin alone is what an older browser sends; neither is not a browser.
_REFUSED = [{"origin": "null"}, {"origin": "https://evil.example"}, {"sec-fetch-site": "cross-site"},
            {"sec-fetch-site": "same-site", "origin": "{base}"}]
_ACCEPTED = [{}, {"origin": "{base}"}, {"sec-fetch-site": "same-origin", "origin": "null"}, {"sec-fetch-site": "none"},
             {"origin": "http://localhost:{port}", "host": "localhost:{port}"}]


@pytest.fixture(scope="module")
def http_session(web_server: Server) -> Iterator[tuple[httpx.Client, str]]:
    """The owner's web session over plain HTTP, to send headers no page would: (client, CSRF token)."""
    client, csrf = _signed_in(web_server)
    yield client, csrf
    client.close()


@pytest.mark.parametrize("headers", _REFUSED + _ACCEPTED, ids=lambda headers: repr(headers) if headers else "none")
def test_the_origin_check_reads_sec_fetch_site_first_then_origin(
        headers: dict[str, str], web_server: Server, http_session: tuple[httpx.Client, str]) -> None:
    client, csrf = http_session
    port = str(urlsplit(web_server.base_url).port)
    sent = {name: value.format(base=web_server.base_url, port=port) for name, value in headers.items()}
    # A revoke of a token that does not exist: past the origin check it is refused as unknown (404).
    answer = client.post(f"/settings/tokens/{new_id()}/revoke", data={"csrf_token": csrf}, headers=sent)
    if headers in _REFUSED:
        assert answer.status_code == 403 and CROSS_SITE_MESSAGE in answer.text, answer.text
    else:
        assert answer.status_code == 404, answer.text
