"""Obsidian vaults and plain Markdown folders, as a Plan.

Both read every ``.md`` file as a note, store images and PDFs, and put the
frontmatter's ``tags`` on the note as types (types are tags: ``#to-do``
becomes ``to_do``, ``project/alpha`` becomes ``project_alpha``; a tag no type
name can spell stays in the ``tags`` property). They differ in what a note is
called and what else a vault holds:

- Obsidian: a note is called by its file name, and its ``aliases`` name it
  too; ``.canvas`` files become notes describing the canvas; ``.base`` files
  are saved views (``database_view``); ``.obsidian/`` is the app's settings.
- Markdown: a note is called by its frontmatter ``title``, else its first
  top-level heading, else its file name.

Every other file is an ``unsupported_attachment``.
"""

from __future__ import annotations

import re
from typing import Any

from fastpad.importers import ledger as lg
from fastpad.importers.archive import Archive, Entry, EntryUnreadable
from fastpad.importers.canvas import NotACanvas, canvas_markdown
from fastpad.importers.content import (
    ENCRYPTED_SUFFIXES,
    NotText,
    attachment_type,
    decode,
    encrypted,
    read_blocks,
)
from fastpad.importers.ledger import LedgerRow
from fastpad.importers.plan import AttachmentDraft, NoteDraft, Plan, digest
from fastpad.importers.resolve import PathIndex
from fastpad.knowledge.schema import NAME
from fastpad.notes.blocks import heading_title
from fastpad.errors import ValidationFailed

OBSIDIAN, MARKDOWN = "obsidian", "markdown"
NOTE_SUFFIXES = frozenset({"md", "markdown"})
_TAG_CHARS = re.compile(r"[^A-Za-z0-9_]+")

# An entry's problem (archive.py) -> how the ledger words it.
ENTRY_PROBLEMS = {
    "path_too_long": lg.PATH_TOO_LONG,
    "encrypted": lg.ENCRYPTED_NOTE,
    "symlink": lg.UNSUPPORTED_ATTACHMENT,
    "unreadable": lg.PARSE_ERROR,
    "duplicate": lg.PARSE_ERROR,
}


def plan_vault(archive: Archive, flavor: str) -> Plan:
    drafts: list[NoteDraft] = []
    attachments: list[AttachmentDraft] = []
    rows: list[LedgerRow] = []
    for entry in archive.entries:
        kind = item_kind(entry, flavor)
        if entry.problem is not None:
            rows.append(LedgerRow(entry.path, kind, lg.SKIPPED, ENTRY_PROBLEMS[entry.problem], entry.detail))
        elif entry.path.startswith(".obsidian/") or entry.path == ".obsidian":
            rows.append(LedgerRow(entry.path, "file", lg.SKIPPED, lg.UNSUPPORTED_ATTACHMENT,
                                  "Obsidian's settings for the vault, not content"))
        elif kind in ("note", "canvas"):
            result = _note(archive, entry, kind, flavor)
            if isinstance(result, NoteDraft):
                drafts.append(result)
            else:
                rows.append(result)
        elif kind == "view":
            rows.append(LedgerRow(entry.path, kind, lg.SKIPPED, lg.DATABASE_VIEW,
                                  "an Obsidian Base: a saved view over the vault's notes, not content"))
        elif kind == "attachment":
            attachments.append(AttachmentDraft(entry.path, attachment_type(entry.suffix) or "", entry.size))
        else:
            rows.append(unsupported(entry))
    # What else names a note to a link, after its path: its aliases, and in a Markdown folder the
    # title it is called by (links to it become edges by that title, so they resolve).
    aliases = {d.item: [*_strings(d.properties.get("aliases")), *([d.title] if flavor == MARKDOWN else [])]
               for d in drafts}
    index = PathIndex((e.path for e in archive.entries), aliases)
    return Plan(flavor, drafts, attachments, rows, index)


def item_kind(entry: Entry, flavor: str) -> str:
    suffix = entry.suffix
    if suffix in NOTE_SUFFIXES or suffix in ENCRYPTED_SUFFIXES:
        return "note"
    if flavor == OBSIDIAN and suffix == "canvas":
        return "canvas"
    if flavor == OBSIDIAN and suffix == "base":
        return "view"
    if attachment_type(suffix):
        return "attachment"
    return "file"


def unsupported(entry: Entry) -> LedgerRow:
    what = f"a .{entry.suffix} file" if entry.suffix else "a file without an extension"
    return LedgerRow(entry.path, "file", lg.SKIPPED, lg.UNSUPPORTED_ATTACHMENT,
                     f"{what}; imports store notes, images (PNG, JPEG, GIF, WebP) and PDFs")


def read_text(archive: Archive, entry: Entry) -> tuple[str, str] | LedgerRow:
    """(text, digest of its bytes), or the row saying why the entry is not text."""
    try:
        data = archive.read(entry.path)
        return decode(data), digest(data)
    except (EntryUnreadable, NotText) as exc:
        return LedgerRow(entry.path, "note", lg.SKIPPED, lg.PARSE_ERROR, str(exc))


def _note(archive: Archive, entry: Entry, kind: str, flavor: str) -> NoteDraft | LedgerRow:
    if entry.suffix in ENCRYPTED_SUFFIXES:
        return LedgerRow(entry.path, kind, lg.SKIPPED, lg.ENCRYPTED_NOTE, f"a .{entry.suffix} file is encrypted")
    read = read_text(archive, entry)
    if isinstance(read, LedgerRow):
        return LedgerRow(read.item, kind, read.status, read.reason, read.detail)
    text, item_digest = read
    if encrypted(text):
        return LedgerRow(entry.path, kind, lg.SKIPPED, lg.ENCRYPTED_NOTE, "the note is encrypted")
    try:
        markdown = canvas_markdown(text) if kind == "canvas" else text
        meta, blocks, remark = read_blocks(markdown)
    except (NotACanvas, ValidationFailed) as exc:
        return LedgerRow(entry.path, kind, lg.SKIPPED, lg.PARSE_ERROR, str(exc))
    stem = _stem(entry.name)
    title = stem if flavor == OBSIDIAN else meta.title or heading_title(blocks) or stem
    types, properties = tags_as_types(meta.types, meta.properties)
    folder = entry.path.rsplit("/", 1)[0] if "/" in entry.path else ""
    return NoteDraft(entry.path, kind, item_digest, title, blocks, types, properties, detail=remark,
                     context=folder.rsplit("/", 1)[-1])


def tags_as_types(types: tuple[str, ...], properties: dict[str, Any]) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The frontmatter's ``tags`` moved onto the note's types, where a type name can spell them."""
    properties = dict(properties)
    tags = _strings(properties.pop("tags", None) if "tags" in properties else properties.pop("tag", None),
                    split=True)
    names, kept = list(types), []
    for tag in tags:
        name = _TAG_CHARS.sub("_", tag.lstrip("#")).strip("_")
        if NAME.match(name):
            names.append(name)
        else:
            kept.append(tag)
    if kept:
        properties["tags"] = kept
    return tuple(dict.fromkeys(names)), properties


def _strings(value: Any, *, split: bool = False) -> list[str]:
    """A frontmatter value that should be a list of names: a list, or one string (comma-separated tags)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [s.strip() for s in (re.split(r"[,\s]+", value) if split else [value]) if s.strip()]
    if isinstance(value, list):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return [str(value)]


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
