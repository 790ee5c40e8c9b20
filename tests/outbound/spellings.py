"""One GitHub token spelled every way Markdown and HTML render as the token (issue 29's list).

Shared by the detection unit tests and the surface tests (REST, MCP, export, ``fp pull``, the
published page): each surface must give out none of the token's characters, however it is spelled.
"""

from __future__ import annotations

TOKEN = "ghp_" + "Zq8Lm2Vx7Nc4Bt1Rk9Hw" + "3Fy6Dp0Sj5Ga8Ue2Qo4K"   # assembled: no scanner-bait literal
_HALF = len(TOKEN) // 2

SPELLINGS: dict[str, str] = {
    "escaped-underscore": TOKEN.replace("_", "\\_"),                       # Notion-style converters
    "emphasis-inside": TOKEN[:4] + "**" + TOKEN[4:12] + "**" + TOKEN[12:],
    "inline-code-split": TOKEN[:_HALF] + "`" + TOKEN[_HALF:_HALF + 6] + "`" + TOKEN[_HALF + 6:],
    "html-reference": TOKEN[:3] + "&#95;" + TOKEN[4:],
    "link-text-split": "[" + TOKEN[:_HALF] + "](https://wiki.internal/keys)" + TOKEN[_HALF:],
    "zero-width": TOKEN[:_HALF] + "\u200b" + TOKEN[_HALF:],
}

# Eight-character pieces of the token's body: an answer holding any of them gave part of the token away.
FRAGMENTS = tuple(TOKEN[i:i + 8] for i in range(4, len(TOKEN), 8))


def spelled_note() -> str:
    """A note body with each spelling in a sentence of its own."""
    return "".join(f"The CI token ({name}) is {spelled} for now.\n\n" for name, spelled in SPELLINGS.items())


def leaked(text: str) -> list[str]:
    """The fragments of the token ``text`` gives away (none, when every spelling was masked)."""
    return [fragment for fragment in FRAGMENTS if fragment in text]
