"""One import, carried out: a Plan written through the services, committed as it lands.

In order: the rows the plan already decided; attachments (stored once per
content); database types (defined, or extended with the properties they
lack); ids (``import_items``: item path + digest -> note id and block ids,
minted and remembered *before* any note is written, so a retry reuses them);
titles (``titles.py``); then the notes, in batches. Each note is one
``NoteService.create`` — the one write path — with its pre-minted ids and
``inbound=True``, so it is readable and searchable the moment it commits;
a note that sat in a folder carries it as its ``source_folder`` property
(``Projects/Alpha``), so the vault's hierarchy stays queryable
(``GET /v1/notes?folder=Projects``) after the import.
After each batch one transaction appends the batch's ledger rows and the
progress, and reads whether someone asked to cancel.

A note an earlier attempt already created is ``unchanged`` (never written
again); a note whose bytes changed since is a different item version and gets
ids of its own. Cancelling — or a failure — stops at the end of the batch:
everything committed stays, and every item not reached gets a ``cancelled``
(or ``failed``) row, so the ledger still accounts for the whole archive.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastpad.errors import Conflict, FastpadError, NotFound
from fastpad.importers import ledger as lg
from fastpad.importers.archive import Archive, EntryUnreadable
from fastpad.knowledge.attachments import matches_type
from fastpad.importers.ledger import LedgerRow, LinkProblem, LinkRows, Tally
from fastpad.importers.plan import AttachmentDraft, NoteDraft, Plan, TypeDraft, digest
from fastpad.importers.rewrite import ATTACHMENT, NOTE, LinkRewriter, LinkTarget
from fastpad.importers.titles import choose_titles
from fastpad.knowledge.note_reads import SOURCE_FOLDER
from fastpad.knowledge.notes import NoteService
from fastpad.knowledge.schema import Schema
from fastpad.knowledge.types import TypeService
from fastpad.knowledge.values import InvalidValue, index_entries
from fastpad.notes import Block, new_id
from fastpad.security.audit import IMPORT_FINISH, record
from fastpad.security.principals import Principal
from fastpad.store import Store
from fastpad.store.imports import AttachmentRow, LedgerEntry, MintedIds

log = logging.getLogger(__name__)

ATTACHMENT_URL = "/v1/attachments/{id}"


class Stopped(Exception):
    """Someone asked the import to stop (cancel); what committed stays."""


@dataclass(frozen=True)
class Writers:
    """What an import writes through."""

    store: Store
    notes: NoteService
    types: TypeService
    clock: Callable[[], datetime]


class ImportRun:
    def __init__(
        self,
        writers: Writers,
        principal: Principal,
        import_id: str,
        archive: Archive,
        plan: Plan,
        *,
        batch_size: int = 50,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        self.w = writers
        self.principal = principal
        self.workspace_id = principal.workspace_id
        self.import_id = import_id
        self.archive = archive
        self.plan = plan
        self.batch_size = batch_size
        self.on_progress = on_progress
        self.should_stop = should_stop or (lambda: False)
        self.seq = 0
        self.pending: list[LedgerRow] = []
        self.existing: dict[str, str] = {}  # note id -> title, of this archive's notes an earlier attempt created
        self.tally = Tally()
        self.links = LinkRows()
        self.remaining: dict[str, str] = plan.to_write()
        self.progress: dict[str, Any] = {
            "phase": "attachments", "items_total": plan.item_count, "items_done": 0,
            "notes_total": len(plan.drafts) + sum(1 for r in plan.rows if r.kind in lg.NOTE_KINDS), "notes_done": 0,
        }

    def execute(self) -> str:
        """Carry the plan out; the import's final status (completed, cancelled or failed)."""
        status, problem = "completed", None
        try:
            for row in self.plan.rows:
                self._record(row)
            targets = self._attachments()
            schema = self._types()
            minted = self._ids()
            titles = self._titles(minted)
            targets.update({d.item: LinkTarget(NOTE, title=titles[d.item]) for d in self.plan.drafts})
            self._notes(minted, titles, schema, LinkRewriter(self.plan.index, targets, missing=self.plan.missing))
        except Stopped:
            status = "cancelled"
        except Exception as exc:  # noqa: BLE001 - recorded on the import, which then says it failed
            log.exception("import %s failed", self.import_id)
            status = "failed"
            problem = {"type": getattr(exc, "slug", "internal"), "title": "The import stopped",
                       "detail": str(exc) or type(exc).__name__, "retryable": True,
                       "next": "run the import again: what committed is kept, and nothing is created twice"}
        self._finish(status, problem)
        return status

    # ------------------------------------------------------------------ ledger and progress

    def _record(self, row: LedgerRow) -> None:
        self.tally.add(row)
        self.pending.append(row)
        if row.kind in (lg.LINK, lg.LINKS_MORE, lg.LINKS_LEFT_OUT):
            return
        self.remaining.pop(row.item, None)
        self.progress["items_done"] += 1
        if row.kind in lg.NOTE_KINDS:
            self.progress["notes_done"] += 1

    def _flush(self) -> None:
        """Commit the rows so far with the progress; stop here if someone asked to cancel."""
        cancel = self._write()
        if cancel or self.should_stop():
            raise Stopped

    def _write(self, **fields: Any) -> bool:
        rows, self.pending = self.pending, []
        entries = [LedgerEntry(self.seq + n, r.item, r.kind, r.status, r.reason, r.detail, r.note_id, r.target,
                               r.count) for n, r in enumerate(rows, start=1)]
        with self.w.store.write(self.workspace_id) as tx:
            tx.imports.append_ledger(self.import_id, entries)
            tx.imports.update(self.import_id, self.w.clock(), progress=self.progress, **fields)
            if "finished_at" in fields:  # the import's last write: the audit log says how it ended
                record(tx, self.principal, IMPORT_FINISH, target=self.import_id, details={"status": fields["status"]})
            current = tx.imports.get(self.import_id)
        self.seq += len(entries)
        if self.on_progress is not None:
            self.on_progress(dict(self.progress))
        return current is not None and current.cancel_requested

    def _finish(self, status: str, problem: dict[str, Any] | None) -> None:
        unreached = lg.CANCELLED if status == "cancelled" else lg.FAILED
        for item, kind in list(self.remaining.items()):
            self._record(LedgerRow(item, kind, unreached, None, "the import stopped before reaching it"))
        final = self.links.final_row()
        if final is not None:
            self._record(final)
        self.progress["phase"] = "done"
        self._write(status=status, summary=self.tally.summary(self.links), problem=problem,
                    finished_at=self.w.clock())

    # ------------------------------------------------------------------ attachments

    def _attachments(self) -> dict[str, LinkTarget]:
        targets: dict[str, LinkTarget] = {}
        for n, draft in enumerate(self.plan.attachments, start=1):
            row, target = self._store(draft)
            self._record(row)
            if target is not None:
                targets[draft.item] = target
            if n % self.batch_size == 0:
                self._flush()
        self._flush()
        return targets

    def _store(self, draft: AttachmentDraft) -> tuple[LedgerRow, LinkTarget | None]:
        try:
            data = self.archive.read(draft.item)
        except EntryUnreadable as exc:
            return LedgerRow(draft.item, "attachment", lg.SKIPPED, lg.PARSE_ERROR, str(exc)), None
        if not matches_type(draft.media_type, data):
            return LedgerRow(draft.item, "attachment", lg.SKIPPED, lg.PARSE_ERROR,
                             f"its name says {draft.media_type}, its bytes say otherwise"), None
        sha256 = digest(data)
        name = draft.item.rsplit("/", 1)[-1]
        with self.w.store.write(self.workspace_id) as tx:
            stored = tx.imports.attachment_by_digest(sha256)
            if stored is None:
                stored = AttachmentRow(new_id(), sha256, draft.media_type, name, len(data), data, self.w.clock())
                tx.imports.insert_attachment(stored, self.import_id)
        url = ATTACHMENT_URL.format(id=stored.id)
        return (LedgerRow(draft.item, "attachment", lg.STORED, None, f"{draft.media_type}, {len(data):,} bytes: {url}"),
                LinkTarget(ATTACHMENT, url=url, name=name))

    # ------------------------------------------------------------------ database types

    def _types(self) -> Schema:
        """Define each database's type (relations once every type exists); the workspace's schema."""
        if not self.plan.types:
            return Schema(())
        self.progress["phase"] = "types"
        failed: dict[str, str] = {}
        for relations in (False, True):
            for draft in self.plan.types:
                wanted = [p for p in draft.properties if (p["kind"] == "relation") == relations]
                if draft.name not in failed and (wanted or not relations):
                    try:
                        self._define(draft, wanted)
                    except FastpadError as exc:
                        failed[draft.name] = str(exc)
        for draft in self.plan.types:
            if draft.name in failed:
                self._record(LedgerRow(draft.item, "database", lg.SKIPPED, lg.PARSE_ERROR,
                                       f"its type {draft.name} could not be defined ({failed[draft.name]}); "
                                       "its rows are imported with their values in the text"))
            else:
                self._record(LedgerRow(draft.item, "database", lg.DEFINED, None,
                                       f"type {draft.name}: {len(draft.properties)} properties, "
                                       f"{draft.rows:,} rows"))
        self._flush()
        return Schema(view.type for view in self.w.types.list(self.principal))

    def _define(self, draft: TypeDraft, properties: list[dict[str, Any]]) -> None:
        types = self.w.types
        try:
            view = types.get(self.principal, draft.name)
        except NotFound:
            types.define(self.principal, name=draft.name, properties=properties)
            return
        have = {p.name for p in view.type.properties}
        missing = [p for p in properties if p["name"] not in have]
        if missing:
            types.update(self.principal, draft.name, properties=[p.as_dict() for p in view.type.properties] + missing,
                         expected_version=view.type.version)

    # ------------------------------------------------------------------ ids and titles

    def _ids(self) -> dict[str, MintedIds]:
        """Item -> its ids: the ones an earlier attempt minted, or fresh ones, remembered now."""
        drafts = self.plan.drafts
        with self.w.store.read(self.workspace_id) as tx:
            known = {(m.item_path, m.digest): m for m in tx.imports.minted(d.item for d in drafts)}
        fresh = [MintedIds(d.item, d.digest, new_id(), ()) for d in drafts if (d.item, d.digest) not in known]
        if fresh:
            with self.w.store.write(self.workspace_id) as tx:
                tx.imports.remember(self.import_id, fresh, self.w.clock())
                known.update({(m.item_path, m.digest): m for m in tx.imports.minted(m.item_path for m in fresh)})
        return {d.item: known[(d.item, d.digest)] for d in drafts}

    def _titles(self, minted: dict[str, MintedIds]) -> dict[str, str]:
        ours = {m.note_id for m in minted.values()}
        with self.w.store.read(self.workspace_id) as tx:
            self.existing = tx.imports.existing_notes(ours)
        kept = {item: self.existing[m.note_id] for item, m in minted.items() if m.note_id in self.existing}

        def taken_elsewhere(keys: list[str]) -> set[str]:
            with self.w.store.read(self.workspace_id) as tx:
                holders = tx.imports.title_holders(keys)
            return {key for key, note_ids in holders.items() if note_ids - ours}

        return choose_titles(self.plan.drafts, kept, taken_elsewhere)

    # ------------------------------------------------------------------ notes

    def _notes(self, minted: dict[str, MintedIds], titles: dict[str, str], schema: Schema,
               rewriter: LinkRewriter) -> None:
        drafts = self.plan.drafts
        self.progress["phase"] = "notes"
        for start in range(0, len(drafts), self.batch_size):
            batch = []
            grown = []
            for draft in drafts[start:start + self.batch_size]:
                ids = minted[draft.item]
                problems: dict[str, LinkProblem] = {}
                blocks, block_ids = self._blocks(draft, ids, titles[draft.item], rewriter, problems)
                if ids.note_id not in self.existing and len(block_ids) > len(ids.block_ids):
                    grown.append(MintedIds(ids.item_path, ids.digest, ids.note_id, block_ids))
                batch.append((draft, ids.note_id, blocks, problems))
            if grown:
                with self.w.store.write(self.workspace_id) as tx:
                    tx.imports.extend_blocks(grown)
            for draft, note_id, blocks, problems in batch:
                row = self._create(draft, note_id, titles[draft.item], blocks, minted, schema)
                self._record(row)
                linked = row.note_id if row.status in (lg.IMPORTED, lg.UNCHANGED) else None
                for link_row in self.links.rows(draft.item, linked, list(problems.values())):
                    self._record(link_row)
            self._flush()

    @staticmethod
    def _blocks(draft: NoteDraft, ids: MintedIds, title: str, rewriter: LinkRewriter,
                problems: dict[str, LinkProblem]) -> tuple[list[Block], tuple[str, ...]]:
        """The draft's blocks with their links rewritten and their remembered ids (more minted if needed)."""
        block_ids = ids.block_ids[:len(draft.blocks)] + tuple(
            new_id() for _ in range(len(draft.blocks) - len(ids.block_ids)))
        blocks = [Block(block_id, b.type, rewriter.rewrite(draft.source, title, b.type, b.text, problems), b.attrs)
                  for block_id, b in zip(block_ids, draft.blocks)]
        return blocks, (ids.block_ids + block_ids[len(ids.block_ids):])

    def _create(self, draft: NoteDraft, note_id: str, title: str, blocks: list[Block],
                minted: dict[str, MintedIds], schema: Schema) -> LedgerRow:
        if note_id in self.existing:
            return LedgerRow(draft.item, draft.kind, lg.UNCHANGED, None,
                             "an earlier import of this archive already created it; left as it is", note_id)
        properties, left_out = _checked_properties(draft, minted, schema)
        detail = "; ".join(p for p in (draft.detail, left_out) if p)
        try:
            self.w.notes.create(self.principal, title=title, blocks=blocks, types=draft.types, properties=properties,
                                note_id=note_id, inbound=True)
        except Conflict:  # a concurrent attempt created it first
            return LedgerRow(draft.item, draft.kind, lg.UNCHANGED, None, "created meanwhile by another import",
                             note_id)
        except FastpadError as exc:
            return LedgerRow(draft.item, draft.kind, lg.SKIPPED, lg.PARSE_ERROR, str(exc))
        return LedgerRow(draft.item, draft.kind, lg.IMPORTED, None, detail, note_id)


def _checked_properties(draft: NoteDraft, minted: dict[str, MintedIds], schema: Schema) -> tuple[dict[str, Any], str]:
    """The draft's properties (relations as note ids) that their defined property accepts, and a
    remark naming any left out. Keys of no defined property are kept as written."""
    values = dict(draft.properties)
    values.update({key: minted[path].note_id for key, path in draft.relations.items() if path in minted})
    if draft.folder:  # the vault's hierarchy, kept: the archive's place wins over a frontmatter key of that name
        values[SOURCE_FOLDER] = draft.folder
    kept, left_out = {}, []
    for key, value in values.items():
        resolved = schema.resolve(key)
        if resolved is not None:
            try:
                index_entries(resolved[1], value)
            except InvalidValue as invalid:
                left_out.append(f"{key} ({invalid.message})")
                continue
        kept[key] = value
    remark = f"left out of its properties: {', '.join(left_out)}" if left_out else ""
    return kept, remark
