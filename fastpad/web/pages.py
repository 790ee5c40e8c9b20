"""The server-rendered pages: sign-in, a proposal's review page, Agent activity, Agents & tokens.

Plain HTML forms, no JavaScript: every action is a POST carrying the session's
CSRF token. The review page is one form whose buttons post to different actions
(``formaction``), so "accept selected" sends exactly the boxes ticked and any
merge resolutions chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from fastpad.knowledge.comments import AgentComment
from fastpad.review.apply import BlockDiff
from fastpad.review.landing import MINE, PROPOSAL, SUGGESTION
from fastpad.review.merge import MergeConflict
from fastpad.review.turns import AUTO_APPLY, ActivityItem, SourceBlock, Turn, TurnReview
from fastpad.security.agents import ManagedTokens, Revocation
from fastpad.security.scopes import AGENT_DEFAULT_SCOPES, ALL_SCOPES, TURNS_ACCEPT
from fastpad.security.tokens import MAX_LABEL, TokenInfo
from fastpad.web.html import Markup, h, join, layout

_KIND = {"inserted": "New block", "replaced": "Changed block", "deleted": "Deleted block"}
_EXPIRIES = (("1d", "1 day"), ("7d", "7 days"), ("30d", "30 days"), ("90d", "90 days"), ("365d", "365 days"))
_HOW = {AUTO_APPLY: "auto-applied (stays unreviewed)", "grant": "accepted by the agent under turns:accept"}


def _csrf_field(csrf: str) -> Markup:
    return h('<input type="hidden" name="csrf_token" value="{}">', csrf)


def _message(message: str | None) -> Markup:
    return h('<p class="error" role="alert">{}</p>', message) if message else Markup("")


def _when(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC")


# ---------------------------------------------------------------------- sign-in


def signin_page(csrf: str, next_path: str, *, error: str | None = None, email: str = "",
                signup_open: bool = False) -> Markup:
    body = h(
        '{error}<form method="post" action="/signin">{csrf}'
        '<input type="hidden" name="next" value="{next}">'
        '<p><label>Email <input type="email" name="email" value="{email}" required autocomplete="username"></label></p>'
        '<p><label>Password <input type="password" name="password" required autocomplete="current-password">'
        '</label></p><p><button type="submit" class="primary">Sign in</button></p></form>'
        '<p class="hint">Forgot your password? Whoever runs this server sets a new one with '
        '<code>fp user set-password --data-dir DATA_DIR {email_or_yours}</code>.</p>',
        error=_message(error), csrf=_csrf_field(csrf), next=next_path, email=email,
        email_or_yours=email or "YOUR_EMAIL",
    )
    if signup_open:
        body = h('{}<p class="hint">New here? <a href="/signup">Create an account</a>.</p>', body)
    return layout("Sign in", body)


def message_page(title: str, message: str, *, back: str | None = None) -> Markup:
    link = h('<p><a href="{}">Back</a></p>', back) if back else Markup("")
    return layout(title, h("<p>{}</p>{}", message, link))


# ---------------------------------------------------------------------- review


def review_page(review: TurnReview, csrf: str, *, message: str | None = None) -> Markup:
    turn = review.turn
    parts = [
        _message(message),
        h('<p>Proposed by <strong>{who}</strong> {what} <strong>{title}</strong>. '
          'Status: <strong class="status">{status}</strong>{how}.</p>',
          who=review.author_name, title=review.note_title or "(untitled)",
          what="as a new note," if turn.new_note is not None else "for the note",
          status=turn.status.replace("_", " "),
          how=h(" — {}", _HOW[turn.authority]) if turn.authority else Markup("")),
    ]
    if review.note_moved and turn.open:
        parts.append(h('<p class="notice">The note changed after the agent read it. Accepting merges the '
                       'proposal into the note as it is now; your edits are never overwritten silently.</p>'))
    form = [_csrf_field(csrf)]
    if review.merge is not None and review.merge.conflicts:
        form.append(_conflicts(review.merge.conflicts))
    form.append(join(_block(diff, turn, review.sources) for diff in turn.diffs))
    form.append(_person_ops(turn))
    if turn.open:
        form.append(h(
            '<p><button type="submit" formaction="/review/{id}/accept">Accept all</button>'
            '<button type="submit" formaction="/review/{id}/accept-some">Accept selected</button>'
            '<button type="submit" formaction="/review/{id}/reject">Reject the rest</button></p>', id=turn.id,
        ))
    parts.append(h('<form method="post" action="/review/{}/accept">{}</form>', turn.id, join(form)))
    if (turn.landed_block_ids or turn.accepted_ops) and turn.status != "reverted":  # revert takes back ops too
        parts.append(h(
            '<form method="post" action="/review/{id}/revert">{csrf}<p>Undo everything this proposal changed, '
            'keeping any edit made on top of it: <button type="submit">Revert</button></p></form>',
            id=turn.id, csrf=_csrf_field(csrf),
        ))
    return layout("Review a proposal", join(parts), signed_in=True, csrf=csrf)


def _block(diff: BlockDiff, turn: Turn, sources: dict[str, SourceBlock]) -> Markup:
    state = turn.block_state(diff.block_id)
    pick = h('<label><input type="checkbox" name="block_id" value="{}" checked> accept this</label>',
             diff.block_id) if state == "pending" else Markup("")
    read = h('<p>What the agent read:</p><div class="read">{}</div>', diff.before.text) if diff.before else Markup("")
    wants = h('<p>What it wants:</p><div class="wants">{}</div>', _hunks(diff)) if diff.after else \
        h("<p>It wants this block deleted.</p>")
    drew = Markup("")
    if diff.after is not None and diff.source_block_ids:
        drew = h("<p>Drew from:</p><ul>{}</ul>", join(_source(sources.get(s), s) for s in diff.source_block_ids))
    return h(
        '<section class="block" id="b-{id}"><h3>{kind} <span class="state">({state})</span></h3>'
        '{pick}{read}{wants}{drew}</section>',
        id=diff.block_id, kind=_KIND[diff.kind], state=state, pick=pick, read=read, wants=wants, drew=drew,
    )


def _hunks(diff: BlockDiff) -> Markup:
    out = []
    for hunk in diff.hunks:
        if hunk.op == "equal":
            out.append(h("{}", hunk.after))
            continue
        if hunk.before:
            out.append(h("<del>{}</del>", hunk.before))
        if hunk.after:
            out.append(h("<ins>{}</ins>", hunk.after))
    return join(out)


def _source(source: SourceBlock | None, block_id: str) -> Markup:
    if source is None or source.text is None:
        return h("<li>block {} (no longer available)</li>", block_id)
    warning = h(' <strong class="error">retracted {}</strong>', source.retracted_at.strftime("%Y-%m-%d")) \
        if source.retracted_at else Markup("")
    return h("<li>{title}: <q>{text}</q>{warning}</li>", title=source.note_title or "(untitled)", text=source.text,
             warning=warning)


def _conflicts(conflicts: Sequence[MergeConflict]) -> Markup:
    items = []
    for conflict in conflicts:
        base, mine, proposal = conflict.texts
        choices = [(MINE, "Keep mine", mine), (PROPOSAL, "Take the proposal's", proposal)]
        if conflict.suggestion is not None:
            choices.append((SUGGESTION, "Take both (merged)", conflict.suggestion.text))
        radios = join(
            h('<p><label><input type="radio" name="resolution.{id}" value="{value}"{checked}> {label}: </label>'
              '<span class="wants">{text}</span></p>',
              id=conflict.block_id, value=value, checked=Markup(" checked") if value == MINE else Markup(""),
              label=label, text="(deleted)" if text is None else text)
            for value, label, text in choices
        )
        items.append(h(
            '<section class="block conflict"><h3>Both changed this block</h3>'
            '<p>When the agent read it:</p><div class="read">{base}</div>{radios}</section>',
            base="(not there)" if base is None else base, radios=radios,
        ))
    return h('<h2>Three-way merge</h2><p>You and the proposal changed the same blocks. Choose for each; '
             'your version is kept unless you choose otherwise.</p>{}', join(items))


def _person_ops(turn: Turn) -> Markup:
    rows = []
    for index, op in enumerate(turn.ops):
        if op["op"] not in ("add_edge", "add_event", "move_event"):
            continue
        state = turn.op_state(index)
        pick = h('<label><input type="checkbox" name="op" value="{}" checked> accept this</label>',
                 index) if state == "pending" else Markup("")
        rows.append(h('<li>{what} <span class="state">({state})</span> {pick}</li>',
                      what=_describe(op), state=state, pick=pick))
    if not rows:
        return Markup("")
    return h("<h2>Links and calendar (always yours to accept)</h2><ul>{}</ul>", join(rows))


def _describe(op: dict) -> str:
    if op["op"] == "add_edge":
        return f"Link this note ({op['type']}) to note {op['to_note_id']}"
    if op["op"] == "add_event":
        return f"Add the event “{op['title']}” from {op['start']} to {op['end']}"
    return f"Move event {op['event_id']} to {op['start']} – {op['end']}"


# ---------------------------------------------------------------------- agent activity

AGENT_COMMENT_SHOWN = 200  # characters of an agent's comment in the list


def activity_page(items: Sequence[ActivityItem], csrf: str, *, comments: Sequence[AgentComment] = (),
                  message: str | None = None) -> Markup:
    if not items:
        table = h('<p>Nothing landed unreviewed: every turn an agent landed on its own authority has been '
                  'reviewed. Proposals waiting for your decision are in the <a href="/inbox">Inbox</a>.</p>')
    else:
        rows = join(h(
            '<tr><td>{who}</td><td><a href="/review/{id}">{note}</a></td><td>{blocks}</td><td>{how}</td>'
            '<td>{at}</td><td>'
            '<form class="inline" method="post" action="/agent-activity/{id}/reviewed">{csrf}'
            '<button type="submit">Mark reviewed</button></form>'
            '<form class="inline" method="post" action="/review/{id}/revert">{csrf}'
            '<input type="hidden" name="next" value="/agent-activity"><button type="submit">Revert</button></form>'
            '<a href="/review/{id}">Open diff</a></td></tr>',
            who=item.who, id=item.turn.id, note=item.note_title or "(untitled)", blocks=item.blocks,
            how=_HOW.get(item.turn.authority or "", ""), at=_when(item.at),
            csrf=_csrf_field(csrf),
        ) for item in items)
        table = h("<table><thead><tr><th>Who</th><th>Note</th><th>Blocks</th><th>How</th><th>When</th><th></th>"
                  "</tr></thead><tbody>{}</tbody></table>", rows)
    intro = h("<p>Every turn that reached a note on an agent's authority — accepted under turns:accept, or "
              "auto-applied — until you mark it reviewed or revert it.</p>"
              '<p>The tokens agents act under, their scopes and autonomy: '
              '<a href="/settings/tokens">Settings → Agents &amp; tokens</a>.</p>')
    return layout("Agent activity", join([_message(message), intro, table, _agent_comments(comments)]),
                  signed_in=True, csrf=csrf)


def _agent_comments(comments: Sequence[AgentComment]) -> Markup:
    """The newest comments agents made (a token with notes:write comments without review: they are
    not note content, and here a person sees what was said where)."""
    if not comments:
        return h("<h2>Comments by agents</h2><p>No agent has commented on a note.</p>")
    rows = join(h(
        '<tr><td>{who}</td><td><a href="/notes/{note}#comment-{id}">{title}</a></td><td>{body}</td><td>{at}</td></tr>',
        who=c.agent_name or "a removed agent", note=c.row.note_id, id=c.row.id,
        title=c.note_title if c.note_title is not None else "(in the trash)",
        body=c.row.body[:AGENT_COMMENT_SHOWN] + ("…" if len(c.row.body) > AGENT_COMMENT_SHOWN else ""),
        at=_when(c.row.created_at)) for c in comments)
    return h("<h2>Comments by agents</h2><table><thead><tr><th>Who</th><th>Note</th><th>Comment</th><th>When</th>"
             "</tr></thead><tbody>{}</tbody></table>", rows)


# ---------------------------------------------------------------------- settings: agents & tokens


def tokens_page(managed: ManagedTokens, csrf: str, *, revocation: Revocation | None = None,
                message: str | None = None) -> Markup:
    parts = [_message(message), _revoked(revocation), h(
        "<p>Every live token you can revoke: each agent's, and your own CLI tokens. A token's secret was shown "
        "once, when it was minted; its prefix below is what to search for if you suspect a leak. Revoking a "
        "token also revokes every token delegated from it. Signing in here is not a token: revoking never "
        'signs you out.</p><p><a href="/agent-activity">Back to Agent activity</a></p><h2>Agents</h2>')]
    if managed.agents:
        parts.extend(h('<section class="agent"><h3>{name}</h3>{table}</section>', name=agent.name,
                       table=_token_table(agent.tokens, csrf)) for agent in managed.agents)
    else:
        parts.append(h("<p>No agent holds a live token.</p>"))
    parts.append(h("<h2>Your CLI tokens</h2>"))
    parts.append(_token_table(managed.own, csrf) if managed.own else h("<p>You hold no live CLI token.</p>"))
    parts.append(_mint_form(csrf))
    return layout("Agents & tokens", join(parts), signed_in=True, csrf=csrf)


def _mint_form(csrf: str) -> Markup:
    # Pre-ticked: what an agent gets when nobody names its scopes (it reads and proposes). Accepting its own
    # proposals and auto-apply are grants a person makes on purpose, so neither is ever pre-ticked.
    scopes = join(h('<label><input type="checkbox" name="scope" value="{scope}"{checked}> {scope}</label> ',
                    scope=scope, checked=Markup(" checked") if scope in AGENT_DEFAULT_SCOPES else Markup(""))
                  for scope in ALL_SCOPES)
    expiries = join(h('<option value="{value}"{selected}>{label}</option>', value=value, label=label,
                      selected=Markup(" selected") if value == "30d" else Markup(""))
                    for value, label in _EXPIRIES)
    return h(
        '<h2>Mint an agent token</h2><form method="post" action="/settings/tokens">{csrf}'
        '<p><label>Label <input type="text" name="label" maxlength="{max_label}" required></label> '
        '(the agent is listed under it)</p><p>Scopes: {scopes}</p>'
        '<p>turns:accept lets the agent accept its own proposals; they are marked agent-accepted and listed on '
        'Agent activity.</p>'
        '<p><label><input type="checkbox" name="auto_apply" value="on"> auto_apply: its edits land without a '
        'proposal (they stay marked unreviewed)</label></p>'
        '<p><label>Expires in <select name="expires">{expiries}</select></label></p>'
        '<p><button type="submit" class="primary">Mint token</button></p></form>',
        csrf=_csrf_field(csrf), max_label=MAX_LABEL, scopes=scopes, expiries=expiries,
    )


def minted_page(plaintext: str, token: TokenInfo, csrf: str) -> Markup:
    body = h(
        '<p class="notice" role="alert"><strong>Copy this token now: it is shown once and never again.</strong> '
        'Fastpad keeps only its hash; if you lose it, revoke it and mint another.</p>'
        '<p><code class="secret">{secret}</code></p>{table}'
        '<p><a href="/settings/tokens">Back to Agents &amp; tokens</a></p>',
        secret=plaintext, table=_token_table([token], csrf),
    )
    return layout("New token", body, signed_in=True, csrf=csrf)


def _revoked(revocation: Revocation | None) -> Markup:
    if revocation is None:
        return Markup("")
    delegates = Markup("")
    if revocation.delegates:
        delegates = h(", and with it the {n} token(s) delegated from it: {names}", n=len(revocation.delegates),
                      names=join((_name(t) for t in revocation.delegates), ", "))
    return h('<p class="notice" role="status">Revoked {name}{delegates}. A revoked token stops working at once.</p>',
             name=_name(revocation.token), delegates=delegates)


def _name(token: TokenInfo) -> Markup:
    return h("{label} (<code>{prefix}…</code>)", label=token.label or "(no label)", prefix=token.prefix)


def _token_table(tokens: Sequence[TokenInfo], csrf: str) -> Markup:
    rows = join(h(
        '<tr><td>{label}{delegated}</td><td><code>{prefix}…</code></td><td>{scopes}</td><td>{reach}</td>'
        '<td>{autonomy}</td><td>{used}</td><td>{expires}</td><td>'
        '<form class="inline" method="post" action="/settings/tokens/{id}/revoke">{csrf}'
        '<button type="submit">Revoke</button></form></td></tr>',
        label=token.label or "(no label)", delegated=" (delegated)" if token.parent_id else "",
        prefix=token.prefix, scopes=", ".join(token.scopes),
        reach="the whole workspace" if token.note_ids is None else f"{len(token.note_ids)} note(s)",
        autonomy=_autonomy(token), used=_when(token.last_used_at) if token.last_used_at else "never",
        expires=_when(token.expires_at), id=token.id, csrf=_csrf_field(csrf),
    ) for token in tokens)
    return h('<table><thead><tr><th>Label</th><th>Prefix</th><th>Scopes</th><th>Notes</th><th>Autonomy</th>'
             '<th>Last used</th><th>Expires</th><th></th></tr></thead><tbody>{}</tbody></table>', rows)


def _autonomy(token: TokenInfo) -> str:
    grants = (["auto_apply"] if token.auto_apply else []) + ([TURNS_ACCEPT] if TURNS_ACCEPT in token.scopes else [])
    return ", ".join(grants) or "none: its edits wait for review"


# ---------------------------------------------------------------------- joining: an invitation, open sign-up


def invitation_page(token: str, email: str, role: str, *, workspace: str, has_account: bool,
                    error: str | None = None) -> Markup:
    """The invitee's form: a display name and a new password — or, for a person who has an account
    already (in another workspace), only its password: they sign in to add this workspace to it.
    The link is the form's own proof it came from here."""
    fields = (
        '<p>You have a Fastpad account with this address: sign in with its password to add this workspace '
        'to it.</p><p><label>Your Fastpad password <input type="password" name="password" required '
        'autocomplete="current-password"></label></p><p><button type="submit" class="primary">Sign in and join</button></p>'
        if has_account else
        '<p><label>Display name <input name="display_name" required maxlength="200" autocomplete="name"></label></p>'
        '<p><label>Choose a password <input type="password" name="password" required minlength="8" '
        'autocomplete="new-password"></label></p><p><button type="submit" class="primary">Join</button></p>'
    )
    body = h(
        '<p>You are invited to join <strong>{workspace}</strong> as <strong>{role}</strong> with '
        '<strong>{email}</strong>.</p>{error}<form method="post" action="/invite/{token}">{fields}</form>',
        workspace=workspace, role=role, email=email, error=_message(error), token=token, fields=Markup(fields),
    )
    return layout("Join the workspace", body)


def invitation_gone_page() -> Markup:
    """One page for a link that was used, expired, was revoked or never existed."""
    return message_page("Invitation not valid", "This invitation link is no longer valid: it was used, it expired or "
                        "it was revoked. Ask whoever invited you for a new one.", back="/signin")


def signup_page(csrf: str, *, error: str | None = None, email: str = "", display_name: str = "") -> Markup:
    body = h(
        '{error}<form method="post" action="/signup">{csrf}'
        '<p><label>Email <input type="email" name="email" value="{email}" required autocomplete="username"></label></p>'
        '<p><label>Display name <input name="display_name" value="{display_name}" required maxlength="200">'
        '</label></p><p><label>Password <input type="password" name="password" required minlength="8" '
        'autocomplete="new-password"></label></p>'
        '<p><label>Workspace name <input name="workspace_name" maxlength="200"></label></p>'
        '<p><button type="submit" class="primary">Create account</button></p></form>'
        '<p class="hint">Have an account? <a href="/signin">Sign in</a>.</p>',
        error=_message(error), csrf=_csrf_field(csrf), email=email, display_name=display_name,
    )
    return layout("Create an account", body)
