"""The consent page of the OAuth authorization endpoint (``/oauth/authorize``).

It names the client as it named itself (shown as such: anyone can register any
name), where the browser goes afterwards, who is approving and in which
workspace, and each permission asked for as a box to tick, in words.
``turns:accept`` is never ticked for the person and gets its own warning.
Approve and Deny are one form; the request's parameters ride along in hidden
fields and are checked again when it comes back.
"""

from __future__ import annotations

from collections.abc import Mapping

from fastpad.security.device import SCOPE_GRANTS
from fastpad.security.oauth import ACCESS_TOKEN_LIFETIME, Consent
from fastpad.security.scopes import TURNS_ACCEPT
from fastpad.web.html import Markup, h, join, layout

SCOPE_FIELD = "scope_choice"


def consent_page(consent: Consent, carried: Mapping[str, str], csrf: str, *, action: str,
                 message: str | None = None) -> Markup:
    request = consent.request
    boxes = join(
        h('<li><label><input type="checkbox" name="{field}" value="{scope}"{checked}> <code>{scope}</code> — '
          '{grant}</label></li>',
          field=SCOPE_FIELD, scope=scope, grant=SCOPE_GRANTS[scope],
          checked=Markup("") if scope == TURNS_ACCEPT else Markup(" checked"))
        for scope in request.scopes
    )
    accept = h(
        '<p class="notice"><strong>It asks for <code>turns:accept</code></strong>, which is not ticked for you. '
        "With it, this app can accept its own proposals: its edits reach your notes without you reading the diff "
        "first. Every accept is marked as an agent's and listed on the Agent activity page.</p>"
    ) if TURNS_ACCEPT in request.scopes else Markup("")
    hidden = join(h('<input type="hidden" name="{}" value="{}">', name, value) for name, value in carried.items())
    body = h(
        '{message}<p><strong>{client}</strong> wants to connect to Fastpad. That is the name the app gave itself; '
        "check it is the one you are adding.</p>"
        "<p>It will act as an agent of <strong>{email}</strong> in the workspace <strong>{workspace}</strong>, "
        "and after you decide your browser goes to <strong>{host}</strong>. "
        "If you did not just add Fastpad to an app yourself, deny.</p>"
        '<form method="post" action="{action}">{hidden}<input type="hidden" name="csrf_token" value="{csrf}">'
        "<p>It may:</p><ul>{boxes}</ul>{accept}"
        "<p>It gets an agent token that lasts {minutes} minutes and renews itself while the app stays connected. "
        "It is listed among your agents as “{client} (OAuth)”, where you can revoke it.</p>"
        '<button type="submit" name="decision" value="approve">Approve</button>'
        '<button type="submit" name="decision" value="deny">Deny</button></form>',
        message=h('<p class="error" role="alert">{}</p>', message) if message else Markup(""),
        client=request.client.client_name, email=consent.email, workspace=consent.workspace,
        host=request.redirect_host, action=action, hidden=hidden, csrf=csrf, boxes=boxes, accept=accept,
        minutes=int(ACCESS_TOKEN_LIFETIME.total_seconds() // 60),
    )
    return layout("Connect an app", body, signed_in=True, csrf=csrf)
