"""``fp pull DIR``: the workspace as canonical Markdown, one file per note.

The workspace is read in one request, ``GET /v1/export`` (archived notes too: they
stay exportable; the trash does not): every note's Markdown and frontier from one
read transaction, so the files are one consistent version and each file's recorded
frontier is the one its content was read at. That read needs the ``export`` scope
(``fp login`` grants it); a credential without it is told what to ask for.

Nothing is overwritten that was edited here since the last pull or push —
unless ``--force``: the pull then refuses as a whole (exit 5) and names the
files, before writing anything. A note unchanged on the server is not
fetched, and its file is left alone even if it was edited. A collection a note embeds is
written as the view's definition and link, never its rows (``mirror/views.py``). A note's
comment threads, for a person, go beside its file as ``<file stem>.comments.json``
(``mirror/comments.py``), rewritten at every pull: a comment changes no frontier.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastpad.cli.mirror.comments import comments_path, write_beside
from fastpad.cli.mirror.manifest import Mirror
from fastpad.cli.mirror.names import file_name
from fastpad.cli.mirror.views import describe, has_embeds, view_lines
from fastpad.errors import Conflict


@dataclass
class PullPlan:
    fetch: dict[str, str] = field(default_factory=dict)  # note id -> title
    remove: list[str] = field(default_factory=list)  # note ids no longer listed
    unchanged: int = 0
    conflicts: list[str] = field(default_factory=list)  # files with local edits the pull would overwrite


def export_notes(api: Any) -> dict[str, dict[str, Any]]:
    """Every note the credential can see (not trashed), by id: its title, frontier and Markdown."""
    response = api.request("GET", "/v1/export", headers={"accept": "application/x-ndjson"})
    # NDJSON lines end at "\n" only: str.splitlines() also splits at U+2028, U+0085, \v, \f and more,
    # which a note may hold inside a JSON string, and a line cut there is not JSON.
    notes = (json.loads(line) for line in response.text.split("\n") if line.strip())
    return {note["id"]: note for note in notes}


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


def pull(api: Any, root: Path, *, force: bool, dry_run: bool) -> dict[str, Any]:
    mirror = Mirror(root)
    mirror.check_server(api.base_url)
    listed = export_notes(api)
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

    embedding = {n for n in plan.fetch if has_embeds(listed[n]["markdown"])}
    lines = None
    if embedding:
        views = {view["id"]: view for view in api.request("GET", "/v1/collections").json()["items"]}
        lines = view_lines(views, api.base_url)
    for note_id in plan.fetch:
        note = listed[note_id]
        markdown = describe(note["markdown"], lines) if note_id in embedding else note["markdown"]
        mirror.record(note_id, file_name(note["title"], note_id), markdown, note["frontier"])
    for note_id in plan.remove:
        comments_path(mirror.path(mirror.notes[note_id].file)).unlink(missing_ok=True)
        mirror.forget(note_id)
    write_beside(mirror, listed)  # every note's: a comment changes no frontier
    mirror.save(api.base_url)
    return summary
