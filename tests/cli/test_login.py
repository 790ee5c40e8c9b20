"""`fp login` end to end: the device flow, the approval page over HTTP (sign in, CSRF, approve), stored profiles."""

from __future__ import annotations

import json
import re
import stat

import httpx

from tests.api.conftest import OWNER_EMAIL
from tests.cli.conftest import CliServer, Fp


def _start_login(fp: Fp, *args: str):
    """Run ``fp login --json``; return the process and the code it shows (a JSON line on stderr)."""
    process = fp.popen("login", "--json", *args)
    shown = json.loads(process.stderr.readline())
    assert re.fullmatch(r"[B-Z]{4}-[B-Z]{4}", shown["user_code"]), shown
    return process, shown


def _browser(server: CliServer, user_code: str) -> httpx.Client:
    """A browser that opens the code's URL signed out, is sent to the sign-in page, signs in and comes back."""
    browser = httpx.Client(base_url=server.base_url, timeout=10.0)
    opened = browser.get("/device", params={"user_code": user_code})
    assert opened.status_code == 303 and opened.headers["location"].startswith("/signin?next=")
    form = browser.get(opened.headers["location"])
    signed_in = browser.post("/signin", data={
        "email": OWNER_EMAIL, "password": server.owner_password, "csrf_token": _csrf(form.text),
        "next": re.search(r'name="next" value="([^"]+)"', form.text).group(1).replace("&amp;", "&"),
    })
    assert signed_in.status_code == 303 and "fastpad_session" in browser.cookies
    assert signed_in.headers["location"] == f"/device?user_code={user_code}", "back to the code after signing in"
    return browser


def _csrf(page: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


def test_login_with_the_approval_page_stores_a_person_credential_that_works(fp, cli_server):
    process, shown = _start_login(fp, "--url", cli_server.base_url)
    browser = _browser(cli_server, shown["user_code"])
    page = browser.get(shown["verification_uri_complete"])
    assert page.status_code == 200
    assert shown["user_code"] in page.text and OWNER_EMAIL in page.text
    assert "notes:write" in page.text and "turns:accept" not in page.text, "a plain login never asks for accept"
    assert page.headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in page.headers["content-security-policy"]

    forged = browser.post("/device", data={"user_code": shown["user_code"], "decision": "approve",
                                           "csrf_token": "not-the-token"})
    assert forged.status_code == 403, "the form needs the session's CSRF token"
    cross_site = browser.post("/device", headers={"origin": "https://evil.example"},
                              data={"user_code": shown["user_code"], "decision": "approve",
                                    "csrf_token": _csrf(page.text)})
    assert cross_site.status_code == 403
    approved = browser.post("/device", data={"user_code": shown["user_code"], "decision": "approve",
                                             "csrf_token": _csrf(page.text)})
    assert approved.status_code == 200 and "approved" in approved.text

    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    result = json.loads(out)
    assert result["workspace_id"] == cli_server.workspace_id, "the workspace is the approving session's"
    assert "turns:accept" not in result["scopes"] and result["stored_in"] == "file"
    assert "fpk_live_" not in out + err, "the credential is never printed"

    config = fp.home / ".config" / "fastpad"
    assert stat.S_IMODE((config / "credentials.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(config.stat().st_mode) == 0o700
    assert "fpk_live_" not in (config / "profiles.json").read_text(), "no secret in the profile list"
    captured = fp("capture", "signed in by device flow", "--json")  # no FASTPAD_* in the environment
    assert captured.returncode == 0, captured.stderr
    note = cli_server.client(cli_server.person_token()).get(f"/v1/notes/{json.loads(captured.stdout)['note_id']}")
    assert note.status_code == 200


def test_accept_is_granted_only_when_asked_for_and_the_page_names_it(fp, cli_server):
    process, shown = _start_login(fp, "--url", cli_server.base_url, "--scope", "turns:accept", "--profile", "agentic")
    browser = _browser(cli_server, shown["user_code"])
    page = browser.get("/device", params={"user_code": shown["user_code"].lower().replace("-", "")})
    assert "This terminal asks for <code>turns:accept</code>" in page.text
    browser.post("/device", data={"user_code": shown["user_code"], "decision": "approve",
                                  "csrf_token": _csrf(page.text)})
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "turns:accept" in json.loads(out)["scopes"]
    profiles = json.loads((fp.home / ".config" / "fastpad" / "profiles.json").read_text())
    assert profiles["default_profile"] == "agentic" and "turns:accept" in profiles["profiles"]["agentic"]["scopes"]
    assert fp("turns", "--profile", "agentic").returncode == 0
    missing = fp("turns", "--profile", "nobody", "--json")
    assert missing.returncode == 3 and json.loads(missing.stderr)["error"] == "unauthenticated"


def test_a_denied_login_exits_3_and_stores_nothing(fp, cli_server):
    process, shown = _start_login(fp, "--url", cli_server.base_url)
    browser = _browser(cli_server, shown["user_code"])
    page = browser.get("/device", params={"user_code": shown["user_code"]})
    denied = browser.post("/device", data={"user_code": shown["user_code"], "decision": "deny",
                                           "csrf_token": _csrf(page.text)})
    assert "denied" in denied.text
    out, err = process.communicate(timeout=30)
    assert process.returncode == 3 and out == ""
    assert json.loads(err.strip().splitlines()[-1])["error"] == "access-denied"
    assert not (fp.home / ".config" / "fastpad" / "profiles.json").exists()
