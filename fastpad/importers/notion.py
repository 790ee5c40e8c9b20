"""A Notion "Markdown & CSV" export, as a Plan.

- A page is ``Title <32-hex id>.md``; its sub-pages sit in the folder of the
  same name, and its links to them are percent-encoded relative paths
  (resolved like any Markdown link). Its title is its first heading (file
  names are truncated), else the file name without the id.
- A database is ``Name <id>.csv`` and, in newer exports, ``Name <id>_all.csv``
  with every property; the fuller one is read and the other is a view
  (``database_view``). The database becomes a type (``databases.py``); each
  row becomes a note of that type with its properties — the row's own page
  (in the database's folder) when it has one, its "Key: value" lines then
  being the properties rather than text. Relations are set once every row is
  a note.
- Links to pages the export does not hold are reported ``path_too_long`` when
  the path is past Windows' 260 characters (why Notion left them out),
  ``database_view`` for a linked database, else ``unresolved_wikilink``.
- Comments are not in this export at all: one ``comments_not_in_export`` row
  says so.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass

from fastpad.importers import ledger as lg
from fastpad.importers.archive import Archive, Entry
from fastpad.importers.content import attachment_type, read_blocks
from fastpad.importers.databases import (
    Column,
    NotATable,
    Table,
    convert,
    infer_columns,
    read_table,
    relation_paths,
    type_name,
)
from fastpad.importers.ledger import LedgerRow, LinkProblem
from fastpad.importers.plan import AttachmentDraft, NoteDraft, Plan, TypeDraft, digest
from fastpad.importers.resolve import PathIndex
from fastpad.importers.vault import ENTRY_PROBLEMS, read_text, unsupported
from fastpad.errors import ValidationFailed
from fastpad.notes import Block
from fastpad.notes.blocks import HEADING, PARAGRAPH

WINDOWS_MAX_PATH = 260
NOTION_ID = re.compile(r"^(?P<title>.*?)\s*(?P<id>[0-9a-f]{32})(?P<all>_all)?$")
_PROPERTY_LINE = re.compile(r"^(?P<key>[^:\n]{1,200}): (?P<value>.*)$")


@dataclass
class _Page:
    entry: Entry
    title: str
    blocks: list[Block]
    digest: str
    detail: str


@dataclass
class _Row:
    cells: list[str]  # the title, then one value per column
    raw: bytes  # what the row's digest is taken of
    page: str  # its page's path, or ""


@dataclass
class _Database:
    entry: Entry  # the csv read
    title: str
    folder: str  # where its row pages live
    table: Table
    digest_prefix: str


def plan_notion(archive: Archive) -> Plan:
    rows: list[LedgerRow] = [LedgerRow("", "comments", lg.SKIPPED, lg.COMMENTS_NOT_IN_EXPORT,
                                       "Notion comments are not imported: the Markdown & CSV export does not "
                                       "carry them")]
    pages: dict[str, _Page] = {}
    attachments: list[AttachmentDraft] = []
    csvs: list[Entry] = []
    for entry in archive.entries:
        suffix = entry.suffix
        kind = "note" if suffix == "md" else "database" if suffix == "csv" else "file"
        if entry.problem is not None:
            rows.append(LedgerRow(entry.path, kind, lg.SKIPPED, ENTRY_PROBLEMS[entry.problem], entry.detail))
        elif suffix == "md":
            page = _read_page(archive, entry)
            if isinstance(page, LedgerRow):
                rows.append(page)
            else:
                pages[entry.path] = page
        elif suffix == "csv":
            csvs.append(entry)
        elif attachment_type(suffix):
            attachments.append(AttachmentDraft(entry.path, attachment_type(suffix) or "", entry.size))
        elif entry.path == "index.html":
            rows.append(LedgerRow(entry.path, "file", lg.SKIPPED, lg.UNSUPPORTED_ATTACHMENT,
                                  "the export's index page (HTML), not content"))
        else:
            rows.append(unsupported(entry))

    databases, view_rows = _databases(archive, csvs)
    rows += view_rows
    index = PathIndex(e.path for e in archive.entries)
    row_db = {}  # a row page's path -> its database's csv path
    drafts: list[NoteDraft] = []
    types: list[TypeDraft] = []
    taken: set[str] = set()
    matched: dict[str, list[_Row]] = {}
    for db in databases:
        matched[db.entry.path] = _match_rows(db, pages)
        for row in matched[db.entry.path]:
            if row.page:
                row_db[row.page] = db.entry.path
    names = {db.entry.path: type_name(db.title, taken) for db in databases}
    for db in databases:
        columns = infer_columns(db.table, lambda path, db=db: row_db.get(_join(db.entry.path, path)))
        types.append(TypeDraft(db.entry.path, names[db.entry.path],
                               [_definition(c, names) for c in columns], len(db.table.rows)))
        drafts += _row_drafts(db, columns, names[db.entry.path], matched[db.entry.path], pages)
    in_databases = {row.page for found in matched.values() for row in found if row.page}
    drafts += [_page_draft(page) for path, page in pages.items() if path not in in_databases]
    drafts.sort(key=lambda d: d.item)
    return Plan("notion", drafts, attachments, rows, index, types=types, missing=_missing)


# ---------------------------------------------------------------------- pages


def split_name(name: str) -> tuple[str, str | None]:
    """``Title 0123…ef.md`` → ("Title", "0123…ef"); a name without an id → (name, None)."""
    stem = name.rsplit(".", 1)[0]
    match = NOTION_ID.match(stem)
    return (match.group("title").strip() or stem, match.group("id")) if match else (stem, None)


def _read_page(archive: Archive, entry: Entry) -> _Page | LedgerRow:
    read = read_text(archive, entry)
    if isinstance(read, LedgerRow):
        return read
    text, page_digest = read
    try:
        _, blocks, remark = read_blocks(text)
    except ValidationFailed as exc:
        return LedgerRow(entry.path, "note", lg.SKIPPED, lg.PARSE_ERROR, str(exc))
    title = split_name(entry.name)[0]
    if blocks and blocks[0].type == HEADING and blocks[0].attrs.get("level") == 1:
        title, blocks = blocks[0].text.strip() or title, blocks[1:]  # the page's title, repeated as its heading
    return _Page(entry, title, blocks, page_digest, remark)


def _page_draft(page: _Page) -> NoteDraft:
    return NoteDraft(page.entry.path, "note", page.digest, page.title, page.blocks, detail=page.detail,
                     context=_folder_title(page.entry.path))


def _folder_title(path: str) -> str:
    folder = posixpath.dirname(path)
    return split_name(posixpath.basename(folder) + ".")[0] if folder else ""


# ---------------------------------------------------------------------- databases


def _databases(archive: Archive, csvs: list[Entry]) -> tuple[list[_Database], list[LedgerRow]]:
    by_id: dict[tuple[str, str], list[Entry]] = defaultdict(list)
    for entry in csvs:
        stem = entry.name[:-4]
        match = NOTION_ID.match(stem)
        key = (posixpath.dirname(entry.path), match.group("id") if match else stem)
        by_id[key].append(entry)
    databases, rows = [], []
    for (folder, _), entries in sorted(by_id.items()):
        entries.sort(key=lambda e: (not e.name.endswith("_all.csv"), e.path))  # the fuller export first
        chosen, views = entries[0], entries[1:]
        rows += [LedgerRow(v.path, "view", lg.SKIPPED, lg.DATABASE_VIEW,
                           f"the database's view with fewer columns; {chosen.name} has every property")
                 for v in views]
        read = read_text(archive, chosen)
        if isinstance(read, LedgerRow):
            rows.append(LedgerRow(chosen.path, "database", read.status, read.reason, read.detail))
            continue
        text, csv_digest = read
        try:
            table = read_table(text)
        except NotATable as exc:
            rows.append(LedgerRow(chosen.path, "database", lg.SKIPPED, lg.PARSE_ERROR, str(exc)))
            continue
        stem = chosen.name[:-4].removesuffix("_all")
        title = split_name(stem + ".csv")[0]
        databases.append(_Database(chosen, title, posixpath.join(folder, stem) if folder else stem, table,
                                   csv_digest))
    return databases, rows


def _match_rows(db: _Database, pages: dict[str, _Page]) -> list[_Row]:
    """Every row of the database, with its page where it has one. A row's page sits in the
    database's folder: the page with the row's title (of several, the one whose "Key: value"
    lines agree most), else — Notion writes some titles differently in the CSV and on the page
    ("@Today") — a page whose every "Key: value" line agrees with the row. A page there with
    such lines and no row left is a row the CSV lacks: its lines are its values."""
    header = db.table.header
    in_folder = {path: page for path, page in pages.items() if posixpath.dirname(path) == db.folder}
    by_title: dict[str, list[str]] = defaultdict(list)
    for path, page in in_folder.items():
        by_title[page.title.strip()].append(path)
    found: dict[int, str] = {}
    for n, row in enumerate(db.table.rows):
        candidates = by_title.get(row[0].strip(), [])
        if candidates:
            best = max(candidates, key=lambda p: _agreement(in_folder[p], header, row))
            candidates.remove(best)
            found[n] = best
    unmatched = [n for n in range(len(db.table.rows)) if n not in found]
    extra = []
    for path in sorted(p for paths in by_title.values() for p in paths):
        lines = _property_lines(in_folder[path].blocks, header)
        if not lines:
            continue
        row_n = next((n for n in unmatched
                      if _agreement(in_folder[path], header, db.table.rows[n]) == len(lines)), None)
        if row_n is not None:
            unmatched.remove(row_n)
            found[row_n] = path
        else:
            page = in_folder[path]
            extra.append(_Row([page.title, *(lines.get(h, "") for h in header[1:])], page.digest.encode(), path))
    rows = [_Row(cells, db.table.raw_rows[n].encode("utf-8"), found.get(n, ""))
            for n, cells in enumerate(db.table.rows)]
    return rows + extra


def _agreement(page: _Page, header: list[str], row: list[str]) -> int:
    lines = _property_lines(page.blocks, header)
    return sum(1 for key, value in lines.items() if key in header and row[header.index(key)].strip() == value)


def _property_lines(blocks: list[Block], header: list[str]) -> dict[str, str]:
    """A row page's "Key: value" paragraph (the first block), as a dict; {} when it is not one."""
    if not blocks or blocks[0].type != PARAGRAPH:
        return {}
    found = {}
    for line in blocks[0].text.split("\n"):
        match = _PROPERTY_LINE.match(line.strip())
        if match is None or match.group("key") not in header:
            return {}
        found[match.group("key")] = match.group("value").strip()
    return found


def _row_drafts(db: _Database, columns: list[Column], type_name: str, rows: list[_Row],
                pages: dict[str, _Page]) -> list[NoteDraft]:
    drafts = []
    for n, row in enumerate(rows, start=1):
        properties, relations = {}, {}
        for index, column in enumerate(columns, start=1):
            key = f"{type_name}.{column.name}"
            if column.kind == "relation":
                paths = relation_targets(db.entry.path, row.cells[index])
                if paths:
                    relations[key] = paths[0]
            elif (value := convert(column, row.cells[index])) is not None:
                properties[key] = value
        title = row.cells[0].strip()
        page = pages.get(row.page) if row.page else None
        if page is not None:
            blocks = page.blocks[1:] if _property_lines(page.blocks, db.table.header) else page.blocks
            drafts.append(NoteDraft(row.page, "database_row", digest(row.raw + page.digest.encode()),
                                    title or page.title, blocks, (type_name,), properties, relations=relations,
                                    detail=page.detail, context=db.title))
        else:
            drafts.append(NoteDraft(f"{db.entry.path}#row {n}", "database_row", digest(row.raw), title or "Untitled",
                                    [], (type_name,), properties, link_base=db.entry.path, relations=relations,
                                    context=db.title))
    return drafts


def relation_targets(csv_path: str, cell: str) -> list[str]:
    return [_join(csv_path, p) for p in relation_paths(cell)]


def _definition(column: Column, names: dict[str, str]) -> dict:
    out: dict = {"name": column.name, "kind": column.kind}
    if column.kind == "select":
        out["options"] = list(column.options)
    if column.kind == "relation":
        out["target"] = names[column.target_db or ""]
    return out


def _join(base_item: str, relative: str) -> str:
    folder = posixpath.dirname(base_item)
    return posixpath.normpath(posixpath.join(folder, relative)) if folder else posixpath.normpath(relative)


def _missing(source: str, target: str) -> LinkProblem:
    path = _join(source, target)
    if target.lower().endswith(".csv"):
        return LinkProblem(target, lg.DATABASE_VIEW, "a linked database view; the export holds no rows for it")
    if len(path) > WINDOWS_MAX_PATH:
        return LinkProblem(target, lg.PATH_TOO_LONG,
                           f"the linked page's path is {len(path):,} characters, past Windows' "
                           f"{WINDOWS_MAX_PATH}-character limit, so the export is missing it")
    return LinkProblem(target, lg.UNRESOLVED_WIKILINK, "the export does not hold this page")
