"""Escaping HTML by default: ``h(template, *values)`` formats with every value escaped.

A value that is already :class:`Markup` (the result of ``h`` or ``join``) goes in as
it is, so fragments compose without double escaping and no caller has to
remember to escape: a string that was not built by ``h`` is text, always.
"""

from __future__ import annotations

import html
import string
from collections.abc import Iterable
from typing import Any

from fastpad.web.assets import stylesheet


class Markup(str):
    """HTML known to be safe (built by :func:`h` or :func:`join`)."""


class _Escaping(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, Markup):
            return value
        return html.escape(super().format_field(value, format_spec), quote=True)


_FORMATTER = _Escaping()


def h(template: str, *args: Any, **kwargs: Any) -> Markup:
    """``template`` (trusted, written in the code) with ``args``/``kwargs`` escaped into it."""
    return Markup(_FORMATTER.format(template, *args, **kwargs))


def join(parts: Iterable[Markup], separator: str = "") -> Markup:
    return Markup(separator.join(str(h("{}", part)) for part in parts))


# What only these pages show (a proposal's blocks and diff, notices), in the app's colours: the
# app's own stylesheet, linked below, gives them its type, palette, dark mode, buttons and tables.
STYLE = """
.plain-bar{display:flex;justify-content:space-between;align-items:center;gap:1rem;padding:.5rem 1.5rem;
  border-bottom:1px solid var(--line);background:var(--bg);flex-wrap:wrap}
.plain-bar .brand{font-weight:650;font-size:1.1rem;color:var(--text);text-decoration:none}
.plain-bar nav{display:flex;flex-wrap:wrap;align-items:center;gap:.3rem 1rem;font-size:.92rem}.plain-bar nav a{white-space:nowrap}
.plain-page{max-width:48rem;margin:0 auto;padding:1.5rem 1.25rem 3rem}
.plain-page input:not([type=checkbox]):not([type=radio]):not([type=hidden]),.plain-page select,.plain-page textarea{
  padding:.35rem .6rem;border:1px solid var(--line);border-radius:var(--radius);background:var(--bg);max-width:100%}
.plain-page form p>label{display:flex;flex-direction:column;gap:.2rem;max-width:24rem}
.block{border:1px solid var(--line);border-radius:var(--radius);padding:.6rem .8rem;margin:.8rem 0}
.block h3{margin:.2rem 0;font-size:.95rem}
.read,.wants{white-space:pre-wrap;background:var(--code-bg);padding:.4rem;border-radius:4px;overflow-wrap:anywhere}
del{background:color-mix(in srgb,var(--bad) 22%,transparent);text-decoration:line-through}
ins{background:color-mix(in srgb,var(--good) 22%,transparent);text-decoration:none}
.state{font-size:.8rem;color:var(--muted)}.error{color:var(--bad);font-weight:600}
.notice{background:var(--warn-bg);padding:.5rem .75rem;border-radius:var(--radius)}
.plain-page table{border-collapse:collapse;width:100%}
.plain-page td,.plain-page th{border-bottom:1px solid var(--line);padding:.4rem;text-align:left;vertical-align:top}
.plain-page code{background:var(--code-bg);padding:0 .25rem;border-radius:3px;overflow-wrap:anywhere}
button{margin:.2rem .4rem .2rem 0}form.inline{display:inline}
"""


def layout(title: str, body: Markup, *, signed_in: bool = False, csrf: str | None = None) -> Markup:
    # Signed out, the bar names the product and nothing behind a sign-in; signed in, it leads back
    # to the app and to the pages that work without JavaScript.
    links = h(
        '<nav><a href="/">Notes</a><a href="/agent-activity">Agent activity</a>'
        '<a href="/settings/tokens">Agents &amp; tokens</a>{}</nav>',
        h('<form class="inline" method="post" action="/signout"><input type="hidden" name="csrf_token" value="{}">'
          '<button type="submit">Sign out</button></form>', csrf) if csrf else Markup(""),
    ) if signed_in else Markup("")
    return h(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title} · Fastpad</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">'
        '<link rel="stylesheet" href="{stylesheet}"><style>{style}</style></head>'
        '<body><header class="plain-bar"><a class="brand" href="/">Fastpad</a>{links}</header>'
        '<main class="plain-page"><h1>{title}</h1>{body}</main></body></html>',
        title=title, stylesheet=stylesheet(), style=Markup(STYLE), links=links, body=body,
    )
