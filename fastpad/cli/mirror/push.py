"""``fp push DIR``: local edits back to the server, as a diff against the anchors — never a guess.

The plan is made offline: each edited file is parsed and diffed against its
base copy by block id (``fastpad.notes.diff.diff_blocks``): an anchor whose
text changed is an edit, an anchor that vanished a delete, a paragraph
without an anchor an insert, an anchor out of its old order a move, and an
unanchored paragraph that completes its anchored neighbour a split. A
changed frontmatter changes the note's title, types or properties. A
Markdown file no note owns yet becomes a new note, keeping its anchors
except those another note holds (a copied file's), which the server gives
fresh ids and the push reports; its ``.comments.json`` beside it (an export's,
``mirror/comments.py``) restores the note's comment threads once the note is created.

Sending a note's edits: fetch its Loro updates (person credentials only),
check the note is still at the pulled frontier (else ``stale-frontier``,
exit 5: pull first), apply the plan to that document, export what changed
since the pulled frontier and ``POST /v1/notes/{id}/ops`` with
``expectedFrontier`` = the pulled frontier. Each send is journalled first
(``.fastpad/pending``) with its idempotency key; a send whose answer never
came (exit 7) is replayed by the next push and acknowledged, not applied twice.
After a push the file is rewritten in canonical form, so new paragraphs carry
their anchors. An embedded view's description lines (``mirror/views.py``) are
dropped before the diff and kept in the rewritten file.
"""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from fastpad.cli.client import RemoteProblem, ServerUnreachable
from fastpad.cli.mirror.comments import restore as restore_comments
from fastpad.cli.mirror.manifest import Entry, Mirror, sha256, write_atomically
from fastpad.cli.mirror.names import file_name
from fastpad.cli.mirror.views import describe, descriptions_in, undescribed
from fastpad.errors import FastpadError, FieldError, StaleFrontier, ValidationFailed
from fastpad.notes import Block, NoteDocument, NoteMeta, diff_blocks, parse_markdown, serialize_markdown
from fastpad.notes.diff import apply_block_changes
from fastpad.notes.blocks import heading_title
from fastpad.notes.diff import BlockChange



@dataclass
class FilePlan:
    file: str
    action: str  # update | create | unchanged | missing
    note_id: str | None = None
    changes: list[BlockChange] = field(default_factory=list)
    meta: NoteMeta | None = None  # the new metadata, when the frontmatter changed
    base_meta: NoteMeta | None = None
    blocks: list[Block] = field(default_factory=list)  # a new note's blocks
    base_blocks: dict[str, Block] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.file, "action": self.action, "note_id": self.note_id}
        if self.action == "update":
            out["changes"] = [self._change(c) for c in self.changes]
            if self.meta is not None and self.base_meta is not None:
                out["meta"] = _meta_diff(self.base_meta, self.meta)
        elif self.action == "create":
            out["title"] = self.meta.title if self.meta else ""
            out["blocks"] = len(self.blocks)
        return out

    def _change(self, change: BlockChange) -> dict[str, Any]:
        entry: dict[str, Any] = {"kind": change.kind, "block_id": change.block_id}
        if change.after_id is not None or change.kind in ("insert", "move"):
            entry["after_id"] = change.after_id
        if change.block is not None:
            entry["text"] = change.block.text
        old = self.base_blocks.get(change.block_id)
        if old is not None and change.kind in ("edit", "split", "delete"):
            entry["old_text"] = old.text
        return entry


def plan_push(mirror: Mirror) -> list[FilePlan]:
    """What a push would send, from the files alone (no network)."""
    plans: list[FilePlan] = []
    errors: list[FieldError] = []
    for note_id, entry in sorted(mirror.notes.items(), key=lambda item: item[1].file):
        path = mirror.path(entry.file)
        if not path.exists():
            plans.append(FilePlan(entry.file, "missing", note_id))
            continue
        if not mirror.edited(note_id):
            plans.append(FilePlan(entry.file, "unchanged", note_id))
            continue
        try:
            edited = parse_markdown(path.read_text(encoding="utf-8"))
        except ValidationFailed as exc:
            errors.extend(_file_errors(entry.file, exc))
            continue
        base = parse_markdown(mirror.base(note_id))
        changes = diff_blocks(undescribed(base.blocks), undescribed(edited.blocks))
        meta_changed = _meta_key(edited.meta) != _meta_key(base.meta)
        plans.append(FilePlan(
            entry.file, "update" if changes or meta_changed else "unchanged", note_id, changes,
            meta=edited.meta if meta_changed else None, base_meta=base.meta,
            base_blocks={b.id: b for b in undescribed(base.blocks) if b.id},
        ))
    for path in mirror.untracked():
        try:
            parsed = parse_markdown(path.read_text(encoding="utf-8"))
        except ValidationFailed as exc:
            errors.extend(_file_errors(path.name, exc))
            continue
        # Named as the server names a note (frontmatter, then its # Heading), else by its file.
        title = parsed.meta.title or heading_title(parsed.blocks) or path.stem
        meta = NoteMeta(title, parsed.meta.types, parsed.meta.properties)
        plans.append(FilePlan(path.name, "create", meta=meta, blocks=undescribed(parsed.blocks)))
    if errors:
        raise ValidationFailed(detail="some files cannot be read as Markdown; nothing was pushed",
                               field_errors=errors[:50])
    return plans


def _file_errors(name: str, error: ValidationFailed) -> list[FieldError]:
    return [FieldError(f"{name}: {fe.field}", fe.code, fe.message) for fe in error.field_errors] or [
        FieldError(name, "markdown", str(error))]


def _meta_key(meta: NoteMeta) -> tuple[Any, ...]:
    return meta.title, tuple(meta.types), json.dumps(meta.properties, sort_keys=True, default=str)


def _meta_diff(before: NoteMeta, after: NoteMeta) -> dict[str, Any]:
    diff: dict[str, Any] = {}
    if before.title != after.title:
        diff["title"] = {"from": before.title, "to": after.title}
    if tuple(before.types) != tuple(after.types):
        diff["types"] = {"from": list(before.types), "to": list(after.types)}
    if before.properties != after.properties:
        diff["properties"] = {"from": before.properties, "to": after.properties}
    return diff


# ---------------------------------------------------------------------- sending


@dataclass
class PushOutcome:
    pushed: list[dict[str, Any]] = field(default_factory=list)  # files written back after the server took them
    stale: list[str] = field(default_factory=list)  # files whose note moved on since the pull
    spooled: list[str] = field(default_factory=list)  # sent, no answer yet: the next push replays them
    failed: list[tuple[str, FastpadError]] = field(default_factory=list)
    # New files an agent's credential sent: each became a proposal a person reviews, not a note.
    proposed: list[dict[str, Any]] = field(default_factory=list)


def replay(api: Any, mirror: Mirror, outcome: PushOutcome) -> None:
    """Send again what an earlier push sent without hearing back (same idempotency keys)."""
    for record in mirror.journal():
        _send(api, mirror, record, outcome)


def push(api: Any, mirror: Mirror, plans: list[FilePlan], outcome: PushOutcome, *, progress: Any) -> None:
    """Send each planned file: journalled first, then sent; the manifest is saved whatever happens.

    Files that only gain text go before files that lose some, so a paragraph moved from one
    note to another is still in its old note when the new one is saved: the server finds it
    there and the moved text keeps its writer (``knowledge/persons_save.py``)."""
    try:
        for plan in sorted(plans, key=_loses_text):  # stable: file order within each group
            if plan.action in ("update", "create"):
                try:
                    record = _prepare(api, mirror, plan)
                except ServerUnreachable:
                    raise
                except FastpadError as exc:
                    if isinstance(exc, StaleFrontier):
                        outcome.stale.append(plan.file)
                    outcome.failed.append((plan.file, exc))
                    record = None
                if record is not None:
                    mirror.journal_add(record)  # on disk before it is sent
                    _send(api, mirror, record, outcome)
            progress.advance()
    finally:
        mirror.save(api.base_url)


def _loses_text(plan: FilePlan) -> bool:
    return any(change.kind in ("delete", "edit", "split") for change in plan.changes)


def _prepare(api: Any, mirror: Mirror, plan: FilePlan) -> dict[str, Any] | None:
    """The request that carries ``plan``, with the file as it will read once the server took it."""
    key = f"fp-push-{uuid.uuid4().hex}"
    path = mirror.path(plan.file)
    file_hash = sha256(path.read_bytes())
    if plan.action == "create":
        meta = plan.meta or NoteMeta()
        # Anchors go as they are: the server keeps those no other note holds and gives fresh
        # ids to the rest (a copied file's), answering which in reassigned_block_ids.
        body = {"title": meta.title, "types": list(meta.types), "properties": meta.properties,
                "blocks": [{"id": b.id, "type": b.type, "text": b.text, "attrs": b.attrs} for b in plan.blocks],
                "idempotencyKey": key}
        return {"key": key, "kind": "create", "file": plan.file, "file_sha256": file_hash, "body": body}

    entry = mirror.notes[plan.note_id]
    response = api.request("GET", f"/v1/notes/{plan.note_id}/updates")
    current = response.headers.get("x-fastpad-frontier")
    if current != entry.frontier:
        raise StaleFrontier(
            detail=f"{plan.file}: the note changed on the server since it was pulled; nothing was sent",
            extra={"expected_frontier": entry.frontier, "current_frontier": current, "file": plan.file},
            next_call="copy your edits aside, fp pull DIR --force, and make them again",
        )
    doc = NoteDocument.load(response.content)
    apply_plan(doc, plan)
    ops = doc.export_updates(since=entry.frontier)
    if doc.frontier() == entry.frontier:
        return None  # the edits were formatting only: nothing to send
    return {
        "key": key, "kind": "update", "file": plan.file, "file_sha256": file_hash, "note_id": plan.note_id,
        "body": {"ops": base64.b64encode(ops).decode("ascii"), "peerId": str(doc.peer_id),
                 "expectedFrontier": entry.frontier, "idempotencyKey": key},
        "markdown": serialize_markdown(doc.meta, doc.blocks()),
        "title": doc.meta.title,
    }


def apply_plan(doc: NoteDocument, plan: FilePlan) -> None:
    """Apply a file's block changes (in the diff's order) and metadata to the note's document."""
    apply_block_changes(doc, plan.changes)
    if plan.meta is not None:
        doc.set_meta(plan.meta)


def _send(api: Any, mirror: Mirror, record: dict[str, Any], outcome: PushOutcome) -> None:
    try:
        if record["kind"] == "create":
            answer = api.request("POST", "/v1/notes", json=record["body"]).json()
        else:
            answer = api.request("POST", f"/v1/notes/{record['note_id']}/ops", json=record["body"]).json()
    except ServerUnreachable:
        outcome.spooled.append(record["file"])
        return
    except RemoteProblem as problem:
        mirror.journal_done(record["key"])
        if problem.slug == "stale-frontier":
            outcome.stale.append(record["file"])
        outcome.failed.append((record["file"], problem))
        return
    if record["kind"] == "create" and "new_note" in answer:  # an agent's note waits for review
        outcome.proposed.append({"file": record["file"], "turn_id": answer["id"], "review_url": answer["review_url"]})
    else:
        _written_back(api, mirror, record, answer, outcome)
    mirror.journal_done(record["key"])


def _written_back(api: Any, mirror: Mirror, record: dict[str, Any], answer: dict[str, Any],
                  outcome: PushOutcome) -> None:
    """Record what the server now holds; rewrite the file unless it was edited again meanwhile."""
    path = mirror.path(record["file"])
    untouched = path.exists() and sha256(path.read_bytes()) == record["file_sha256"]
    if record["kind"] == "create":
        note_id = answer["id"]
        blocks = [Block(b["id"], b["type"], b["text"], b["attrs"]) for b in answer["blocks"]]
        markdown = serialize_markdown(NoteMeta(answer["title"], tuple(answer["types"]), answer["properties"]), blocks)
        title, frontier = answer["title"], answer["frontier"]
    else:
        note_id, markdown, title, frontier = record["note_id"], record["markdown"], record["title"], answer["frontier"]
    name = file_name(title, note_id)
    pushed = {"file": name if untouched else record["file"], "note_id": note_id, "kind": record["kind"]}
    if record["kind"] == "create":
        pushed["reassigned_block_ids"] = answer["reassigned_block_ids"]
    if record["kind"] == "create":  # Fastpad's own export pushed elsewhere: its comments come too
        restored = restore_comments(api, path, answer, mirror.path(name if untouched else record["file"]))
        if restored:
            pushed["comments_restored"] = restored
    if untouched:
        markdown = describe(markdown, descriptions_in(path.read_text(encoding="utf-8")).get)
        mirror.record(note_id, name, markdown, frontier)
        if record["kind"] == "create" and name != record["file"]:
            path.unlink(missing_ok=True)
    else:  # edited again since this push was prepared: keep the edits; the next push diffs them against what was sent
        write_atomically(mirror.meta / "base" / f"{note_id}.md", markdown.encode("utf-8"))
        mirror.notes[note_id] = Entry(record["file"], frontier, sha256(markdown.encode("utf-8")))
    outcome.pushed.append(pushed)
