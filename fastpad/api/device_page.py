"""The approval page of ``fp login`` (``/device``): plain HTML, no script, in the site's layout.

Built with ``fastpad.web.html`` (every value escaped: what a terminal calls
itself is text, never markup). The page names each scope being granted in
words, and ``turns:accept`` — which a terminal gets only by asking for it —
gets its own warning. Signing in is the site's own ``/signin`` page.
"""

from __future__ import annotations

from starlette.responses import HTMLResponse

from fastpad.security.device import CLI_TOKEN_LIFETIME, SCOPE_GRANTS, DeviceRequest
from fastpad.web.common import HEADERS  # a page like the others: no script, no framing, forms post only here
from fastpad.web.html import Markup, h, join, layout


def _page(title: str, body: Markup, status: int = 200) -> HTMLResponse:
    return HTMLResponse(str(layout(title, body)), status_code=status, headers=dict(HEADERS))


def _error(message: str | None) -> Markup:
    return h('<p class="error" role="alert">{}</p>', message) if message else Markup("")


def enter_code(*, error: str | None = None, status: int = 200) -> HTMLResponse:
    return _page("Approve a terminal", h(
        '{error}<p>Enter the code your terminal shows after <code>fp login</code>.</p>'
        '<form method="get" action="/device"><p><label>Code <input type="text" name="user_code" required '
        'autocomplete="off" placeholder="BCDF-GHJK"></label></p><p><button type="submit" class="primary">Continue</button></p></form>',
        error=_error(error),
    ), status)


def approve(request: DeviceRequest, *, csrf_token: str, email: str, workspace: str) -> HTMLResponse:
    grants = join(h("<li><code>{}</code> — {}</li>", scope, SCOPE_GRANTS.get(scope, scope)) for scope in request.scopes)
    accept = h(
        '<p class="notice"><strong>This terminal asks for <code>turns:accept</code>.</strong> With it, an agent '
        "using this credential can accept its own proposals: its edits reach your notes without you reading the "
        "diff first. Every accept is marked as an agent's and listed on the Agent activity page. "
        "Approve only if you asked for it with <code>fp login --scope turns:accept</code>.</p>"
    ) if request.grants_accept else Markup("")
    name = h(" It calls itself “{}” — a name the terminal chose.", request.client_name) if request.client_name else ""
    return _page("Approve a terminal", h(
        '<p>Check that your terminal shows this code:</p><p><strong><code>{code}</code></strong></p>'
        "<p>Approving signs this terminal in as <strong>{email}</strong> in the workspace <strong>{workspace}</strong> "
        "for {days} days.{name} It will be able to:</p><ul>{grants}</ul>{accept}"
        "<p>If you did not just run <code>fp login</code> yourself, deny it.</p>"
        '<form method="post" action="/device"><input type="hidden" name="user_code" value="{code}">'
        '<input type="hidden" name="csrf_token" value="{csrf}">'
        '<button type="submit" name="decision" value="approve">Approve</button>'
        '<button type="submit" name="decision" value="deny">Deny</button></form>',
        code=request.user_code, email=email, workspace=workspace, days=CLI_TOKEN_LIFETIME.days, name=name,
        grants=grants, accept=accept, csrf=csrf_token,
    ))


def decided(request: DeviceRequest) -> HTMLResponse:
    if request.state == "approved":
        return _page("Terminal approved", h("<p>You can go back to your terminal: it is signed in.</p>"))
    return _page("Terminal denied", h("<p>The terminal was not signed in. You can close this page.</p>"))


def refused(message: str, *, status: int) -> HTMLResponse:
    return _page("Not allowed", _error(message), status)
