"""``fp pull DIR`` and ``fp push DIR``: the Markdown mirror, out and back (see ``fastpad.cli.mirror``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from fastpad.cli import exit_codes
from fastpad.cli.options import FpCommand, settings
from fastpad.cli.output import Output

_DIR = click.argument("directory", metavar="DIR", default=".", type=click.Path(file_okay=False, path_type=Path))


@click.command(cls=FpCommand)
@_DIR
@click.option("--force", is_flag=True, help="Overwrite files edited here since the last pull or push.")
def pull(directory: Path, force: bool) -> None:
    """Write the workspace into DIR as canonical Markdown, one file per note."""
    from fastpad.cli.client import connect
    from fastpad.cli.mirror.pull import pull as run_pull

    out = Output()
    summary = run_pull(connect(), directory, force=force, dry_run=settings.dry_run)

    def show(s: dict[str, Any]) -> None:
        verb = "would write" if settings.dry_run else "wrote"
        out.text(f"{verb} {len(s['fetched'])} file(s), {'would remove' if settings.dry_run else 'removed'} "
                 f"{len(s['removed'])}, {s['unchanged']} unchanged · {directory}")
        for name in s["fetched"]:
            out.say(f"  {name}")

    out.result(summary, show)


@click.command(cls=FpCommand)
@_DIR
def push(directory: Path) -> int:
    """Send the edits made in DIR back: per block, by anchor (--dry-run: the plan, offline)."""
    from fastpad.cli.mirror.manifest import Mirror
    from fastpad.cli.mirror.push import PushOutcome, plan_push, push as run_push, replay

    out = Output()
    mirror = Mirror(directory)
    if not mirror.exists:
        raise click.UsageError(f"{directory} is not a mirror: run fp pull {directory} first")
    if settings.dry_run:
        plans = plan_push(mirror)
        waiting = [{"file": r["file"], "kind": r["kind"]} for r in mirror.journal()]
        payload = {"dry_run": True, "files": [p.as_dict() for p in plans if p.action != "unchanged"],
                   "unanswered": waiting}
        out.result(payload, lambda p: _show_plan(out, p))
        return exit_codes.OK

    from fastpad.cli.client import connect

    api = connect()
    mirror.check_server(api.base_url)
    outcome = PushOutcome()
    replay(api, mirror, outcome)
    if not outcome.spooled:
        plans = plan_push(mirror)
        sending = [p for p in plans if p.action in ("update", "create")]
        with out.progress(len(sending), "pushing") as bar:
            run_push(api, mirror, sending, outcome, progress=bar)
    else:
        mirror.save(api.base_url)
    if outcome.failed and not outcome.pushed and not outcome.spooled:
        raise outcome.failed[0][1]  # nothing was sent: the refusal is the answer (a problem on stderr)
    result = {"pushed": outcome.pushed, "proposed": outcome.proposed, "stale": outcome.stale,
              "unanswered": outcome.spooled,
              "failed": [{"file": f, "error": e.slug, "detail": str(e)} for f, e in outcome.failed]}
    out.result(result, lambda r: _show_outcome(out, r))
    if outcome.failed:
        worst = outcome.failed[0][1]
        return exit_codes.for_error(worst)
    return exit_codes.SPOOLED if outcome.spooled else exit_codes.OK


def _show_plan(out: Output, payload: dict[str, Any]) -> None:
    if not payload["files"] and not payload["unanswered"]:
        out.text("Nothing to push.")
    for item in payload["unanswered"]:
        out.text(f"{item['file']}: sent earlier without an answer; the next push sends it again")
    for item in payload["files"]:
        if item["action"] == "create":
            out.text(f"{item['file']}: create note {item['title']!r} ({item['blocks']} blocks)")
            continue
        if item["action"] == "missing":
            out.text(f"{item['file']}: missing here; a push never deletes a note (pull brings it back)")
            continue
        out.text(f"{item['file']} ({item['note_id']}):")
        for change in item.get("changes", []):
            out.text("  " + _describe(change))
        for key, diff in item.get("meta", {}).items():
            out.text(f"  {key:<7} {diff['from']!r} → {diff['to']!r}")


def _describe(change: dict[str, Any]) -> str:
    kind, block = change["kind"], change["block_id"]
    after = change.get("after_id") or "the start"
    text, old = _short(change.get("text")), _short(change.get("old_text"))
    if kind == "edit":
        return f"edit    {block}  {old} → {text}"
    if kind == "delete":
        return f"delete  {block}  {old}"
    if kind == "insert":
        return f"insert  {block}  after {after}: {text}"
    if kind == "move":
        return f"move    {block}  after {after}"
    return f"split   {block}  keeps {text}; the rest is the next insert"


def _short(text: str | None) -> str:
    if text is None:
        return ""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= 60 else flat[:59] + "…")


def _show_outcome(out: Output, result: dict[str, Any]) -> None:
    for item in result["pushed"]:
        out.text(f"{'created' if item['kind'] == 'create' else 'pushed'}  {item['file']}")
        if item.get("reassigned_block_ids"):
            out.text(f"  {len(item['reassigned_block_ids'])} anchor(s) belonged to another note and got new ids")
    for item in result["proposed"]:
        out.text(f"proposed  {item['file']}: a person reviews it at {item['review_url']}; fp pull once accepted")
    for name in result["unanswered"]:
        out.text(f"unanswered  {name} (kept; the next push sends it again)")
    for failure in result["failed"]:
        out.text(f"not pushed  {failure['file']}: {failure['error']}: {failure['detail']}")
    if not any(result[k] for k in ("pushed", "proposed", "unanswered", "failed")):
        out.text("Nothing to push.")
