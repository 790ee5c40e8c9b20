"""``fp add --last``: what the shell hook records about each command, and reading it back.

The hook is one line in ``~/.bashrc`` or ``~/.zshrc``::

    eval "$(fp add --hook bash)"     # or: eval "$(fp add --hook zsh)"

It does three things in an interactive shell:

* **Output.** Unless ``FASTPAD_NO_RECORD`` is set, the shell re-runs itself
  under ``script(1)`` once, so everything the terminal shows also goes to a
  private session log (``$FASTPAD_SESSION_LOG``, mode 0600). Programs still see
  a terminal — colours, pagers and editors behave as before. Before each
  command the log is emptied, so it only ever holds the latest command's output
  (``fp add`` itself does not empty it, so it can read the command before).
* **Command, exit code, timing.** After each command a record is written to
  ``$XDG_STATE_HOME/fastpad/shell/<shell pid>``: the exit status, start and end
  times, the working directory and the command line.
* **Where the output ends.** An invisible escape sequence (an OSC no terminal
  acts on) marks the end of the command's output in the log.

``fp add --last`` reads the record of the shell that ran it (its parent
process) and the log up to that mark. Without ``script`` (or with
``FASTPAD_NO_RECORD=1``) the capture has the command, exit code and timing
but says that the output was not recorded. The bash hook uses the DEBUG trap
and ``PROMPT_COMMAND``; it replaces another DEBUG trap (bash-preexec users:
use the zsh-style functions it provides instead).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from fastpad.cli.profiles import state_dir

END_MARK = "\x1b]6973;fastpad-end\x07"
MAX_OUTPUT_CHARS = 64 * 1024
MAX_OUTPUT_LINES = 1000
_ANSI = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_HISTORY_NUMBER = re.compile(r"^\s*\d+\*?\s+")

_RECORDING = r"""
if [ -z "${FASTPAD_SESSION_LOG-}" ] && [ -z "${FASTPAD_NO_RECORD-}" ] && [ -t 0 ] && [ -t 1 ] \
   && command -v script >/dev/null 2>&1; then
  export FASTPAD_SESSION_LOG="$_fp_dir/session-$$.log"
  : >| "$FASTPAD_SESSION_LOG" && chmod 600 "$FASTPAD_SESSION_LOG"
  if script --version 2>/dev/null | grep -q util-linux; then
    SHELL="$_fp_shell" exec script -q -f -a "$FASTPAD_SESSION_LOG"
  else
    SHELL="$_fp_shell" exec script -q -a -F "$FASTPAD_SESSION_LOG"
  fi
fi
"""

BASH_HOOK = r"""# fastpad: records each command for `fp add --last` (see `fp add --help`)
if [[ $- == *i* && -z ${_fp_hooked-} ]]; then
_fp_hooked=1
_fp_dir="${XDG_STATE_HOME:-$HOME/.local/state}/fastpad/shell"
command mkdir -p -m 700 "$_fp_dir"
_fp_shell="$BASH"
@RECORDING@
_fp_now() { if [[ -n ${EPOCHREALTIME-} ]]; then _fp_t=${EPOCHREALTIME/,/.}; else printf -v _fp_t '%(%s)T' -1; fi; }
_fp_preexec() {
  [[ -n ${_fp_armed-} ]] || return 0
  _fp_armed=
  _fp_now; _fp_start=$_fp_t
  if [[ $BASH_COMMAND == "fp add"* ]]; then _fp_skip=1; return 0; fi
  _fp_skip=
  if [[ -n ${FASTPAD_SESSION_LOG-} ]]; then : >| "$FASTPAD_SESSION_LOG"; fi
}
_fp_precmd() {
  local s=$?
  if [[ -n ${_fp_start-} && -z ${_fp_skip-} ]]; then
    _fp_now
    { printf '%s\n%s\n%s\n%s\n' "$s" "$_fp_start" "$_fp_t" "$PWD"; HISTTIMEFORMAT= builtin history 1; } >| "$_fp_dir/$$"
    if [[ -n ${FASTPAD_SESSION_LOG-} ]]; then printf '\033]6973;fastpad-end\007'; fi
  fi
  _fp_start=
  return $s
}
trap '_fp_preexec' DEBUG
PROMPT_COMMAND="_fp_precmd${PROMPT_COMMAND:+;$PROMPT_COMMAND};_fp_armed=1"
fi
""".replace("@RECORDING@", _RECORDING.strip())

ZSH_HOOK = r"""# fastpad: records each command for `fp add --last` (see `fp add --help`)
if [[ -o interactive && -z ${_fp_hooked-} ]]; then
_fp_hooked=1
zmodload zsh/datetime 2>/dev/null
_fp_dir="${XDG_STATE_HOME:-$HOME/.local/state}/fastpad/shell"
command mkdir -p -m 700 "$_fp_dir"
_fp_shell="$(command -v zsh)"
@RECORDING@
_fp_preexec() {
  _fp_start=$EPOCHREALTIME; _fp_cmd=$1; _fp_skip=
  if [[ $1 == "fp add"* ]]; then _fp_skip=1; return 0; fi
  if [[ -n ${FASTPAD_SESSION_LOG-} ]]; then : >| "$FASTPAD_SESSION_LOG"; fi
}
_fp_precmd() {
  local s=$?
  if [[ -n ${_fp_start-} && -z ${_fp_skip-} ]]; then
    print -r -- "$s"$'\n'"$_fp_start"$'\n'"$EPOCHREALTIME"$'\n'"$PWD"$'\n'"$_fp_cmd" >| "$_fp_dir/$$"
    if [[ -n ${FASTPAD_SESSION_LOG-} ]]; then printf '\033]6973;fastpad-end\007'; fi
  fi
  _fp_start=
  return $s
}
precmd_functions=(_fp_precmd $precmd_functions)
preexec_functions+=(_fp_preexec)
fi
""".replace("@RECORDING@", _RECORDING.strip())

HOOKS = {"bash": BASH_HOOK, "zsh": ZSH_HOOK}


@dataclass(frozen=True)
class LastCommand:
    command: str
    exit_code: int
    started_at: datetime
    duration_ms: int
    cwd: str
    output: str | None  # None: the hook did not record output (no script(1), or FASTPAD_NO_RECORD)
    truncated: bool


def records_dir() -> Path:
    return state_dir() / "shell"


def read_last(shell_pid: int, session_log: str | None) -> LastCommand | None:
    """The shell's last command as its hook recorded it, or None when there is no record."""
    path = _record_path(shell_pid)
    if path is None:
        return None
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    if len(lines) < 5:
        return None
    try:
        status, start, end = int(lines[0]), _seconds(lines[1]), _seconds(lines[2])
    except ValueError:
        return None
    command = _HISTORY_NUMBER.sub("", "\n".join(lines[4:]).rstrip("\n"), count=1)
    output, truncated = _output(session_log)
    if output is not None:
        output = _without_echo(output, command)
    return LastCommand(
        command=command, exit_code=status, started_at=datetime.fromtimestamp(start, timezone.utc),
        duration_ms=max(0, round((end - start) * 1000)), cwd=lines[3], output=output, truncated=truncated,
    )


def _record_path(shell_pid: int) -> Path | None:
    directory = records_dir()
    own = directory / str(shell_pid)
    if own.is_file():
        return own
    # Run through a wrapper, fp's parent is not the shell: take the newest record of a live shell.
    live = [p for p in directory.glob("[0-9]*") if p.is_file() and _alive(int(p.name))] if directory.is_dir() else []
    return max(live, key=lambda p: p.stat().st_mtime, default=None)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _seconds(text: str) -> float:
    return float(text.strip().replace(",", "."))


def _output(session_log: str | None) -> tuple[str | None, bool]:
    if not session_log:
        return None, False
    try:
        raw = Path(session_log).read_bytes()
    except OSError:
        return None, False
    text = raw.decode("utf-8", errors="replace")
    end = text.find(END_MARK)
    if end >= 0:
        text = text[:end]
    return clean_output(text)


def _without_echo(output: str, command: str) -> str:
    """The output without the command line itself: the terminal's echo of a line typed (or pasted)
    quickly can reach the log after the hook emptied it."""
    typed = command.split("\n")
    lines = output.split("\n")
    if typed[0].strip() and lines[0].rstrip().endswith(typed[0].strip()):
        return "\n".join(lines[len(typed):]).strip("\n")
    return output


def clean_output(text: str) -> tuple[str, bool]:
    """Terminal output as plain text: escape sequences and carriage-return redraws removed,
    the tail kept when it is long. Returns (text, truncated)."""
    text = _ANSI.sub("", text).replace("\r\n", "\n")
    text = "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))  # a redrawn line shows its last state
    text = _CONTROL.sub("", text).strip("\n")
    lines = text.split("\n")
    truncated = len(lines) > MAX_OUTPUT_LINES or len(text) > MAX_OUTPUT_CHARS
    if truncated:
        text = "\n".join(lines[-MAX_OUTPUT_LINES:])[-MAX_OUTPUT_CHARS:]
    return text, truncated


def prune_dead_shells() -> None:
    """Remove records and session logs of shells that have exited."""
    directory = records_dir()
    if not directory.is_dir():
        return
    for path in directory.iterdir():
        match = re.fullmatch(r"(?:session-)?(\d+)(?:\.log)?", path.name)
        if match and not _alive(int(match.group(1))):
            path.unlink(missing_ok=True)
