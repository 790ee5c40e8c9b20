"""``fp capture`` and ``fp add --last``: into the inbox, and never lost on the way.

A capture is written to the spool (``fastpad.cli.spool``) *before* anything is
sent, then the spool is drained, oldest first. Delivered: exit 0 with the
note's id. No network, no credential yet, or the server busy: the capture
stays in the spool, exit 7 — accepted locally, not a failure — and the next
command that reaches the server delivers it. The server keeps the idempotency
key, so a replay never captures twice.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from fastpad.cli import exit_codes
from fastpad.cli.options import FpCommand, settings
from fastpad.cli.output import Output
from fastpad.errors import FastpadError, FieldError, Unauthenticated, ValidationFailed

LOCK_WAIT_S = 5.0  # how long a capture waits for a cron flush to finish before leaving its entry pending


@click.command(cls=FpCommand)
@click.argument("text", nargs=-1)
@click.option("--file", "-f", "source", metavar="PATH", type=click.Path(dir_okay=False, allow_dash=True),
              help="Capture this file ('-': stdin).")
@click.option("--title", default=None, help="The note's title (default: its first line).")
@click.option("--status", is_flag=True, help="Show the spool: pending, delivered and failed captures.")
@click.option("--flush", is_flag=True, help="Deliver what is pending now (safe from cron or a shell hook).")
def capture(text: tuple[str, ...], source: str | None, title: str | None, status: bool, flush: bool) -> int:
    """Capture TEXT (or a file, or stdin) into the inbox; offline, it is spooled and sent later (exit 7)."""
    if status or flush:
        if text or source or title or (status and flush):
            raise click.UsageError("--status and --flush take nothing else")
        return _status() if status else _flush()
    return deliver_capture({"text": _read_text(text, source), **({"title": title} if title else {})})


@click.command(cls=FpCommand)
@click.option("--last", is_flag=True, help="Capture the previous shell command, its output, exit code and timing.")
@click.option("--hook", type=click.Choice(["bash", "zsh"]), default=None,
              help='Print the shell hook --last needs: eval "$(fp add --hook bash)" in ~/.bashrc.')
def add(last: bool, hook: str | None) -> int:
    """Capture the previous shell command with its output (--last); --hook prints the one-line shell setup."""
    from fastpad.cli import shell_hook

    if hook is not None:
        out = Output()
        out.result({"shell": hook, "script": shell_hook.HOOKS[hook]}, lambda r: out.text(r["script"]))
        return exit_codes.OK
    if not last:
        raise click.UsageError("say what to add: --last (the previous shell command), or --hook SHELL")
    shell_hook.prune_dead_shells()
    command = shell_hook.read_last(os.getppid(), os.environ.get("FASTPAD_SESSION_LOG"))
    if command is None:
        raise ValidationFailed(
            detail="no previous command is recorded for this shell",
            field_errors=[FieldError("--last", "no_record", "the shell hook has not recorded a command yet")],
            next_call='add  eval "$(fp add --hook bash)"  (or zsh) to your shell\'s rc file, open a new shell',
        )
    return deliver_capture(command_capture(command))


def command_capture(command: Any) -> dict[str, Any]:
    """A recorded shell command as a capture: the command and its output in a console block, then its outcome."""
    first_line = command.command.split("\n", 1)[0]
    shown = f"$ {command.command}\n{command.output}" if command.output else f"$ {command.command}"
    fence = "`" * max(3, _longest_run(shown, "`") + 1)
    seconds = command.duration_ms / 1000
    outcome = (f"Exit {command.exit_code} · {seconds:.2f} s · {command.cwd} · "
               f"{command.started_at.strftime('%Y-%m-%d %H:%M:%S UTC')}")
    if command.output is None:
        outcome += " · output not recorded (the shell hook records it when script(1) is available)"
    elif command.truncated:
        outcome += " · output truncated to its end"
    return {
        "title": f"$ {first_line[:80]}" + ("…" if len(first_line) > 80 else ""),
        "text": f"{fence}console\n{shown}\n{fence}\n\n{outcome}\n",
        "properties": {
            "command": command.command, "exit_code": command.exit_code, "duration_ms": command.duration_ms,
            "cwd": command.cwd, "started_at": command.started_at.isoformat(),
        },
    }


def _longest_run(text: str, char: str) -> int:
    longest = current = 0
    for ch in text:
        current = current + 1 if ch == char else 0
        longest = max(longest, current)
    return longest


def _read_text(words: tuple[str, ...], source: str | None) -> str:
    if words and source:
        raise click.UsageError("give TEXT or --file, not both")
    if words:
        text = " ".join(words)
    elif source == "-" or (source is None and not sys.stdin.isatty()):
        text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    elif source is not None:
        try:
            with open(source, "rb") as handle:
                text = handle.read().decode("utf-8", errors="replace")
        except OSError as exc:
            raise click.UsageError(f"cannot read {source}: {exc.strerror}") from None
    else:
        raise click.UsageError("nothing to capture: give TEXT, --file PATH, or pipe it into stdin")
    if not text.strip():
        raise click.UsageError("nothing to capture: the text is blank")
    return text


# ---------------------------------------------------------------------- delivery


def _target() -> Any:
    """Where captures go; with no server or login yet, the default profile's spool holds them."""
    from fastpad.cli.profiles import Profiles, Target

    profiles = Profiles()
    try:
        return profiles.target()
    except Unauthenticated:
        return Target("", None, settings.profile or profiles.default_name())


def deliver_capture(body: dict[str, Any]) -> int:
    """Spool ``body``, then drain the spool; 0 when this capture was delivered, 7 when it waits."""
    from fastpad.cli.client import Api
    from fastpad.cli.delivery import deliver, spool_for
    from fastpad.cli.spool import DELIVERED, FAILED

    out = Output()
    if settings.dry_run:
        out.result({"would_capture": body}, lambda _: out.text(
            f"Would capture {len(body['text'])} characters" + (f" titled {body['title']!r}" if body.get("title") else "")))
        return exit_codes.OK
    target = _target()
    spool = spool_for(target)
    entry = spool.add(body)
    report = deliver(Api(target), wait_s=min(settings.timeout, LOCK_WAIT_S))
    state, data = spool.find(entry.name)  # whoever drained it: this process, or a flush running beside it
    if state == FAILED:
        error = report.errors.get(entry.name)
        raise error if error is not None else FastpadError(detail=data.get("error", {}).get("detail", "refused"))
    result = {"status": "delivered" if state == DELIVERED else "spooled", "idempotency_key": entry.key,
              "spool_id": entry.name.removesuffix(".json")}
    if state == DELIVERED:
        result["note_id"] = data.get("note_id")
        out.result(result, lambda r: (out.text(r["note_id"]), out.note("Captured to the inbox.")))
        return exit_codes.OK
    reason = report.stopped_by
    result["pending"] = report.pending
    if reason is not None:
        result["reason"] = {"error": reason.slug, "detail": str(reason)}
    out.result(result, lambda r: out.note(
        f"Saved offline ({_why(reason, report.busy)}); {r['pending']} capture(s) waiting. The next command that "
        "reaches the server sends them, or run: fp capture --flush"))
    return exit_codes.SPOOLED


def _why(reason: FastpadError | None, busy: bool) -> str:
    if reason is None:
        return "another fp is delivering the spool" if busy else "not sent yet"
    return f"{reason.slug}: {reason}"


def _status() -> int:
    from fastpad.cli.delivery import spool_for
    from fastpad.cli.spool import DELIVERED, FAILED, PENDING

    out = Output()
    spool = spool_for(_target())
    entries = {state: [e.summary() for e in spool.entries(state)] for state in (PENDING, DELIVERED, FAILED)}
    counts = {state: len(items) for state, items in entries.items()}
    if settings.ndjson:
        out.result([item for items in entries.values() for item in items])
        return exit_codes.OK

    def show(_: Any) -> None:
        out.text(f"pending {counts[PENDING]} · delivered {counts[DELIVERED]} · failed {counts[FAILED]}")
        rows = [[e["state"], e["captured_at"], e["preview"], e.get("note_id") or e.get("error", {}).get("detail", "")]
                for e in entries[PENDING] + entries[FAILED]]
        if rows:
            out.table(["state", "captured", "text", "note / error"], rows)

    out.result({"counts": counts, **entries}, show)
    return exit_codes.OK


def _flush() -> int:
    from fastpad.cli.client import Api
    from fastpad.cli.delivery import deliver

    out = Output()
    target = _target()
    if settings.dry_run:
        from fastpad.cli.delivery import spool_for

        pending = spool_for(target).pending_count()
        out.result({"would_deliver": pending}, lambda _: out.text(f"Would deliver {pending} pending capture(s)"))
        return exit_codes.OK
    report = deliver(Api(target), wait_s=settings.timeout)
    result = {"delivered": len(report.delivered), "failed": len(report.failed), "pending": report.pending,
              "busy": report.busy}
    if report.stopped_by is not None:
        result["reason"] = {"error": report.stopped_by.slug, "detail": str(report.stopped_by)}
    out.result(result, lambda r: out.text(
        f"delivered {r['delivered']} · failed {r['failed']} · pending {r['pending']}"
        + (f" ({_why(report.stopped_by, report.busy)})" if r["pending"] else "")))
    return exit_codes.OK if report.pending == 0 else exit_codes.SPOOLED
