"""The browser app's pages: one HTML shell for every path the app owns, its static bundle,
and its service worker.

The app itself (``web/src``, built into ``fastpad/web/static``) talks to the server only
through the published HTTP API, with the session cookie and the CSRF token this shell
hands it. So the server's part is small: a signed-in person asking for ``/``,
``/notes/{id}``, ``/inbox``… gets the shell; a signed-out one is sent to sign in and back,
except at ``/``, where the same shell opens a note kept only in the browser (the first note,
before an account), which the app adopts into the workspace on its first signed-in start.

The shell's CSP allows scripts from this origin and the Loro wasm (``'wasm-unsafe-eval'``)
and nothing else: no inline script, no CDN, no third-party font. The bundle's files are
content-hashed, so they are cached for good; the shell and the service worker never are.
"""

from __future__ import annotations

import json

from fastapi import APIRouter, Request
from starlette.responses import FileResponse, HTMLResponse, Response

from fastpad.web.assets import STATIC, manifest
from fastpad.web.common import signed_in, to_signin
from fastpad.web.html import Markup, h

router = APIRouter(include_in_schema=False)

APP_CSP = ("default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; "
           "connect-src 'self'; worker-src 'self'; manifest-src 'self'; form-action 'self'; "
           "frame-ancestors 'none'; base-uri 'none'")
SHELL_HEADERS = {
    "content-security-policy": APP_CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}
# The paths the app's router owns (ROUTES in web/src/app/app.js): each is the same shell.
APP_PATHS = ("/", "/notes/{note_id}", "/notes/{note_id}/history", "/inbox", "/archive", "/trash", "/types", "/types/{type_name}", "/search", "/import",
             "/audit", "/settings/members", "/settings/account", "/workspaces/new", "/collections/{collection_id}",
             "/folders/{folder:path}")
LOCAL_SHELL_HEADER = "x-fastpad-local-shell"
_MEDIA = {".js": "text/javascript", ".css": "text/css", ".wasm": "application/wasm", ".json": "application/json"}


def shell(request: Request) -> Response:
    session = signed_in(request)
    if session is None:
        # Signed out, `/` is the first note, written before an account: it lives in this browser
        # only (web/src/local) until a sign-in adopts it. Every other page needs the account.
        return _page({"signedIn": False}, local=True) if request.url.path == "/" else to_signin(request)
    principal, session_id = session
    deployment = request.app.state.deployment
    return _page({
        "signedIn": True,
        "csrfToken": deployment.people.csrf_token(session_id),
        "workspaceId": principal.workspace_id,
        "personId": principal.principal_id,
        "role": deployment.people.role(principal.workspace_id, principal.principal_id),  # what the sidebar offers
    })


def _page(config: dict[str, object], *, local: bool = False) -> Response:
    assets = manifest()
    # JSON inside <script type="application/json"> is data, never run; "<" is escaped so
    # no string in it can close the element.
    data = json.dumps(config).replace("<", "\\u003c")
    page = h(
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark"><title>Fastpad</title><link rel="icon" href="data:,">'
        '<link rel="stylesheet" href="/static/{css}">'
        # Loro's wasm is fetched as the shell is read, not once the bundle runs and asks for it.
        '<link rel="preload" href="/static/{wasm}" as="fetch" type="application/wasm" crossorigin></head><body>'
        '<script type="application/json" id="fastpad-config">{config}</script>'
        '<div id="app"><p class="booting">Opening Fastpad…</p></div>'
        '<noscript><p>Fastpad\'s editor needs JavaScript. Agent activity and reviews work without it: '
        '<a href="/agent-activity">Agent activity</a>.</p></noscript>'
        '<script type="module" src="/static/{js}"></script></body></html>',
        css=assets["main.css"], js=assets["main.js"], wasm=assets["loro_wasm_bg.wasm"], config=Markup(data),
    )
    # The service worker keeps the signed-in shell for offline use, never this one (see sw.js).
    headers = {**SHELL_HEADERS, LOCAL_SHELL_HEADER: "1"} if local else dict(SHELL_HEADERS)
    return HTMLResponse(str(page), headers=headers)


for _path in APP_PATHS:
    router.add_api_route(_path, shell, methods=["GET"])


@router.get("/static/{name}")
def static_file(name: str) -> Response:
    path = STATIC / name
    if "/" in name or name.startswith(".") or name == "manifest.json" or not path.is_file():
        return Response("Not found", status_code=404, media_type="text/plain")
    return FileResponse(path, media_type=_MEDIA.get(path.suffix, "application/octet-stream"),
                        headers={"cache-control": "public, max-age=31536000, immutable",
                                 "x-content-type-options": "nosniff"})


@router.get("/sw.js")
def service_worker() -> Response:
    """The service worker, at the root so its scope is the whole app. It keeps the shell and the
    bundle so a note opened before can be reopened with no connection."""
    path = STATIC / manifest()["sw.js"]
    assets = [f"/static/{file}" for key, file in sorted(manifest().items()) if key != "sw.js"]
    # The worker learns the bundle's names from this line, so a new build replaces the cache.
    prelude = f"self.FASTPAD_ASSETS = {json.dumps(assets)};\n"
    return Response(prelude + path.read_text(), media_type="text/javascript",
                    headers={"cache-control": "no-cache", "x-content-type-options": "nosniff"})
