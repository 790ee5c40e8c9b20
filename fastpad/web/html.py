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


STYLE = """
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
header{display:flex;justify-content:space-between;align-items:center;border-bottom:1px solid #ddd;margin-bottom:1rem}
.block{border:1px solid #ddd;border-radius:6px;padding:.6rem .8rem;margin:.8rem 0}
.block h3{margin:.2rem 0;font-size:.95rem}
.read,.wants{white-space:pre-wrap;background:#f7f7f7;padding:.4rem;border-radius:4px}
del{background:#fdd;text-decoration:line-through}ins{background:#dfd;text-decoration:none}
.state{font-size:.8rem;color:#555}.error{color:#a00;font-weight:600}.notice{background:#fff6d5;padding:.5rem}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:.4rem;text-align:left}
button{margin:.2rem .4rem .2rem 0}form.inline{display:inline}
"""


def layout(title: str, body: Markup, *, signed_in: bool = False, csrf: str | None = None) -> Markup:
    sign_out = h(
        '<form class="inline" method="post" action="/signout"><input type="hidden" name="csrf_token" value="{}">'
        '<button type="submit">Sign out</button></form>', csrf,
    ) if signed_in and csrf else Markup("")
    return h(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title} · Fastpad</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><style>{style}</style></head>'
        '<body><header><p><a href="/agent-activity">Agent activity</a> · '
        '<a href="/settings/tokens">Agents &amp; tokens</a></p>{sign_out}</header>'
        '<main><h1>{title}</h1>{body}</main></body></html>',
        title=title, style=Markup(STYLE), sign_out=sign_out, body=body,
    )
