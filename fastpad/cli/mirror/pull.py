"""``fp pull DIR``: the workspace as canonical Markdown, one file per note.

Notes are listed page by page (archived ones too: they stay exportable; the
trash does not) and each changed note is fetched as ``text/markdown``. The
list is read again afterwards, and a note that moved meanwhile is fetched
again, so each file's recorded frontier is the one its content was read at.

Nothing is overwritten that was edited here since the last pull or push —
unless ``--force``: the pull then refuses as a whole (exit 5) and names the
files, before writing anything. A note unchanged on the server is not
fetched, and its file is left alone even if it was edited.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastpad.cli.client import RemoteProblem
from fastpad.cli.mirror.manifest import Mirror
from fastpad.cli.mirror.names import file_name
from fastpad.cli.output import Output
from fastpad.errors import Conflict

PAGE = 200
MAX_ROUNDS = 3  # re-reads of notes that kept changing during the pull


@dataclass
class PullPlan:
    fetch: dict[str, str] = field(default_factory=dict)  # note id -> title
    remove: list[str] = field(default_factory=list)  # note ids no longer listed
    unchanged: int = 0
    conflicts: list[str] = field(default_factory=list)  # files with local edits the pull would overwrite


def list_notes(api: Any) -> dict[str, dict[str, Any]]:
    """Every note the credential can see (not trashed), by id: its title and frontier."""
    notes: dict[str, dict[str, Any]] = {}
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": PAGE, "include_archived": "true"}
        if cursor:
            params["cursor"] = cursor
        page = api.request("GET", "/v1/notes", params=params).json()
        for item in page["items"]:
            notes[item["id"]] = {"title": item["title"], "frontier": item["frontier"]}
        cursor = page.get("next_cursor")
        if not cursor:
            return notes


def plan_pull(mirror: Mirror, listed: dict[str, dict[str, Any]], *, force: bool) -> PullPlan:
    plan = PullPlan()
    for note_id, note in listed.items():
        entry = mirror.notes.get(note_id)
        if entry is not None and entry.frontier == note["frontier"] and mirror.path(entry.file).exists():
            plan.unchanged += 1
            continue
        plan.fetch[note_id] = note["title"]
        if entry is not None and mirror.path(entry.file).exists() and mirror.edited(note_id):
            plan.conflicts.append(entry.file)
        elif entry is None and mirror.path(file_name(note["title"], note_id)).exists():
            plan.conflicts.append(file_name(note["title"], note_id))  # a file of that name that no pull wrote
    for note_id, entry in mirror.notes.items():
        if note_id not in listed:
            plan.remove.append(note_id)
            if mirror.edited(note_id) and mirror.path(entry.file).exists():
                plan.conflicts.append(entry.file)
    if force:
        plan.conflicts = []
    return plan


def pull(api: Any, root: Path, *, force: bool, dry_run: bool, out: Output) -> dict[str, Any]:
    mirror = Mirror(root)
    mirror.check_server(api.base_url)
    listed = list_notes(api)
    plan = plan_pull(mirror, listed, force=force)
    if plan.conflicts:
        raise Conflict(
            detail=f"{len(plan.conflicts)} file(s) were edited here and changed on the server; pulling would "
                   "overwrite them: " + ", ".join(sorted(plan.conflicts)),
            extra={"reason": "local_edits", "files": sorted(plan.conflicts)},
            next_call="fp push DIR first to send your edits, or fp pull DIR --force to discard them",
        )
    summary = {"fetched": sorted(file_name(t, n) for n, t in plan.fetch.items()),
               "removed": sorted(mirror.notes[n].file for n in plan.remove), "unchanged": plan.unchanged}
    if dry_run:
        return {"dry_run": True, **summary}

    fetched: dict[str, str] = {}
    with out.progress(len(plan.fetch), "pulling") as bar:
        for note_id in plan.fetch:
            text = _markdown(api, note_id)
            if text is not None:
                fetched[note_id] = text
            bar.advance()
    frontiers = {n: listed[n]["frontier"] for n in fetched}
    for _ in range(MAX_ROUNDS):  # a note written to during the pull is read again, with its new frontier
        again = list_notes(api)
        moved = [n for n in fetched if n in again and again[n]["frontier"] != frontiers[n]]
        if not moved:
            break
        for note_id in moved:
            text = _markdown(api, note_id)
            if text is None:
                del fetched[note_id]
                continue
            fetched[note_id] = text
            frontiers[note_id] = again[note_id]["frontier"]
            listed[note_id] = again[note_id]

    for note_id, text in fetched.items():
        mirror.record(note_id, file_name(listed[note_id]["title"], note_id), text, frontiers[note_id])
    for note_id in plan.remove:
        mirror.forget(note_id)
    mirror.save(api.base_url)
    return summary


def _markdown(api: Any, note_id: str) -> str | None:
    """The note's canonical Markdown; None when it went away since it was listed (the next pull sees that)."""
    try:
        return api.request("GET", f"/v1/notes/{note_id}", headers={"accept": "text/markdown"}).text
    except RemoteProblem as problem:
        if problem.slug == "not-found":
            return None
        raise
