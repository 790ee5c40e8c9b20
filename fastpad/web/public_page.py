"""The HTML of a published note (``/n/{id}``): the note alone, readable without an account —
no app shell, no script, nothing from the workspace but the note."""

from __future__ import annotations

from fastpad.knowledge.publishing import PublicNote
from fastpad.web.html import Markup, h

_STYLE = """
:root{color-scheme:light dark;--fg:#1d1d1f;--bg:#fff;--muted:#6e6e73;--rule:#e5e5e7;--code:#f5f5f7}
@media (prefers-color-scheme:dark){:root{--fg:#e8e8ed;--bg:#161617;--muted:#a1a1a6;--rule:#2c2c2e;--code:#232325}}
body{font:17px/1.6 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);margin:0}
main{max-width:42rem;margin:3rem auto;padding:0 1.25rem}
h1{font-size:2rem;line-height:1.2;margin:0 0 1.5rem}
a{color:inherit;text-underline-offset:.15em}a:focus-visible{outline:2px solid #0a84ff;outline-offset:2px}
pre,code{background:var(--code);border-radius:4px;font:.9em ui-monospace,monospace}pre{padding:.8rem;overflow:auto}
blockquote{border-left:3px solid var(--rule);margin:1rem 0;padding:0 1rem;color:var(--muted)}
table{border-collapse:collapse}td,th{border:1px solid var(--rule);padding:.3rem .6rem}hr{border:0;border-top:1px solid var(--rule)}
footer{margin-top:3rem;color:var(--muted);font-size:.85rem}
"""


def public_page(note: PublicNote) -> str:
    title = note.title or "Untitled"
    return str(h(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">'
        '<style>{style}</style></head><body><main><article><h1>{title}</h1>{body}</article>'
        '<footer>Published with Fastpad</footer></main>'
        '</body></html>',
        title=title, style=Markup(_STYLE), body=Markup(note.body_html),
    ))
