"""A note's comments beside its file in the mirror: ``<note file stem>.comments.json``.

Comments are not note content, so they never enter the Markdown. ``fp pull`` writes each note's
threads (as ``GET /v1/export`` gives them to a person) into the JSON file beside the note, and
removes it when the note has none. ``fp push`` of a new file — Fastpad's own export pushed into
another workspace — restores the threads beside it once the note is created: each thread on its
block (the pushed anchors keep their ids, or the server says which it reassigned), a text
comment on the range it covered when it was exported, replies in order, a deleted first comment
as a tombstone, resolved threads resolved. The restorer writes them (a credential never speaks
for someone else); the file keeps who wrote each. Idempotency keys come from the exported
comment ids, so a push sent again restores nothing twice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastpad.cli.mirror.manifest import Mirror, write_atomically

SUFFIX = ".comments.json"
DELETED_PLACEHOLDER = "(deleted)"  # the body a tombstone is restored with before it is deleted again


def comments_path(note_file: Path) -> Path:
    return note_file.with_name(note_file.stem + SUFFIX)


def write_beside(mirror: Mirror, listed: dict[str, dict[str, Any]]) -> None:
    """Each listed note's threads beside its file (its file gone when it has none)."""
    for note_id, note in listed.items():
        entry = mirror.notes.get(note_id)
        if entry is None:
            continue
        path = comments_path(mirror.path(entry.file))
        threads = note.get("comments")
        if threads:
            document = {"note_id": note_id, "threads": threads}
            write_atomically(path, (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        else:
            path.unlink(missing_ok=True)


def restore(api: Any, pushed_file: Path, note: dict[str, Any], note_file: Path) -> int:
    """Recreate the threads of ``pushed_file``'s comments file on ``note`` (the create's answer),
    then keep the file beside ``note_file`` (the note's name now); how many comments were written.
    A thread whose block was deleted before the export goes on the note's first block."""
    source = comments_path(pushed_file)
    if not source.exists():
        return 0
    threads = json.loads(source.read_text(encoding="utf-8")).get("threads", [])
    note_id, reassigned = note["id"], note.get("reassigned_block_ids") or {}
    blocks = [block["id"] for block in note["blocks"]]
    url = f"/v1/notes/{note_id}/comments"
    written = 0
    for thread in threads:
        comments = thread["comments"]
        first = comments[0]
        block_id = reassigned.get(thread["block_id"], thread["block_id"])
        anchor: dict[str, Any] = {"blockId": block_id if block_id in blocks else blocks[0]}
        if thread.get("range") is not None and block_id in blocks:
            anchor |= {"start": thread["range"]["start"], "end": thread["range"]["end"]}
        created = api.request("POST", url, headers=_key(note_id, first["id"]), json={
            **anchor, "body": first["body"] if not first["deleted"] else DELETED_PLACEHOLDER}).json()
        for reply in comments[1:]:
            api.request("POST", url, headers=_key(note_id, reply["id"]),
                        json={"threadId": created["id"], "body": reply["body"]})
        if first["deleted"]:
            api.request("DELETE", f"/v1/comments/{created['id']}", headers=_key(note_id, first["id"], "delete"))
        if thread["resolved"]:
            api.request("POST", f"/v1/comments/{created['id']}/resolve", headers=_key(note_id, first["id"], "resolve"))
        written += len(comments)
    target = comments_path(note_file)
    if target != source:
        source.replace(target)
    return written


def _key(note_id: str, comment_id: str, action: str = "create") -> dict[str, str]:
    return {"idempotency-key": f"fp-comment-{note_id}-{comment_id}-{action}"}
