"""Every path the browser app's router owns (``ROUTES`` in web/src/app/app.js) is served the app's
shell, so a reload or a pasted link opens the page rather than a 404 problem document. The router's
patterns are read from the source: a route added there without its server path fails here."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from .conftest import Server

APP_JS = Path(__file__).resolve().parents[2] / "web" / "src" / "app" / "app.js"
NOTE = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
# One path each pattern matches, by the pattern as app.js spells it.
SAMPLES = {
    r"/^\/$/": "/",
    "NOTE_PATH": f"/notes/{NOTE}",
    r"/^\/notes\/([0-9A-HJKMNP-TV-Z]{26})\/history$/": f"/notes/{NOTE}/history",
    r"/^\/inbox$/": "/inbox",
    r"/^\/archive$/": "/archive",
    r"/^\/trash$/": "/trash",
    r"/^\/types$/": "/types",
    r"/^\/types\/([^/]+)$/": "/types/Meeting",
    r"/^\/search$/": "/search?q=x",
    r"/^\/import$/": "/import",
    r"/^\/audit$/": "/audit",
    r"/^\/settings\/members$/": "/settings/members",
    r"/^\/settings\/account$/": "/settings/account",
    r"/^\/workspaces\/new$/": "/workspaces/new",
    r"/^\/collections\/new$/": "/collections/new",
    r"/^\/collections\/([0-9A-HJKMNP-TV-Z]{26})$/": f"/collections/{NOTE}",
    r"/^\/folders\/(.+)$/": "/folders/Projects/2026",
}


def _router_patterns() -> list[str]:
    source = APP_JS.read_text()
    routes = source[source.index("const ROUTES = ["):source.index("];", source.index("const ROUTES = ["))]
    return re.findall(r"^\s*\[(\S+?|/\^.*?\$/), ", routes, re.M)


def test_every_route_of_the_app_is_served_its_shell(server: Server, signed_in: httpx.Client) -> None:
    assert sorted(_router_patterns()) == sorted(SAMPLES)
    for path in SAMPLES.values():
        answer = signed_in.get(path, follow_redirects=False)
        assert answer.status_code == 200, (path, answer.status_code, answer.text[:200])
        assert 'id="fastpad-config"' in answer.text, path
