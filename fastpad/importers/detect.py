"""Which kind of archive this is, from its file names alone.

- Notion: pages and databases named ``Title <32-hex id>.md`` / ``.csv`` (at
  least half of the Markdown and CSV files).
  A Notion *HTML* export (pages named ``Title <id>.html``, no Markdown) is
  refused, whatever source was named: its pages would import as unreadable
  HTML, and the Markdown & CSV export of the same workspace imports properly.
- Obsidian: a ``.obsidian/`` settings folder, a ``.canvas`` or a ``.base``.
- Markdown: anything else.
"""

from __future__ import annotations

from fastpad.importers.archive import Entry, refuse
from fastpad.importers.notion import split_name

SOURCES = ("obsidian", "notion", "markdown")


def detect_source(entries: list[Entry], named: str | None = None) -> str:
    """The source to read the archive as: ``named`` if given, else detected. Raises
    ValidationFailed for a Notion HTML export and for an unknown source name."""
    if named is not None and named not in SOURCES:
        raise refuse("unknown_source", f"source is one of {', '.join(SOURCES)}, not {named!r}")
    notion = {"md": 0, "csv": 0, "html": 0}
    for entry in entries:
        if entry.suffix in notion and split_name(entry.name)[1] is not None:
            notion[entry.suffix] += 1
    if notion["html"] and not notion["md"] and not notion["csv"]:
        raise refuse(
            "notion_html_export",
            f"this is a Notion HTML export ({notion['html']:,} pages saved as .html); it cannot be imported. "
            "In Notion, export again choosing \"Markdown & CSV\" and import that zip",
        )
    if named is not None:
        return named
    markdown_files = sum(1 for e in entries if e.suffix in ("md", "csv"))
    if notion["md"] + notion["csv"] and 2 * (notion["md"] + notion["csv"]) >= markdown_files:
        return "notion"
    if any(e.path.startswith(".obsidian/") or e.suffix in ("canvas", "base") for e in entries):
        return "obsidian"
    return "markdown"
