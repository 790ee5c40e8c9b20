"""The ledger: a row for every item an archive contained, whatever happened to it.

Spec › Import › The ledger is the product. Every skip carries one of the
``REASONS``. Rows about links are per target, not per occurrence, and capped:
``LinkRows`` keeps at most ``PER_NOTE`` rows for one note (then one "N more"
row) and ``PER_IMPORT`` in all (past that, a note's link rows are left out
whole, and one final row says how many were left out and from how many notes).
The row for each item is never capped. ``Tally`` turns the rows into the
summary: "imported 4,812 of 5,003 notes, and here is each of the 191 we did not".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

ENCRYPTED_NOTE = "encrypted_note"
UNSUPPORTED_ATTACHMENT = "unsupported_attachment"
DATABASE_VIEW = "database_view"
PATH_TOO_LONG = "path_too_long"
UNRESOLVED_WIKILINK = "unresolved_wikilink"
AMBIGUOUS_WIKILINK = "ambiguous_wikilink"
COMMENTS_NOT_IN_EXPORT = "comments_not_in_export"
PARSE_ERROR = "parse_error"
REASONS = (ENCRYPTED_NOTE, UNSUPPORTED_ATTACHMENT, DATABASE_VIEW, PATH_TOO_LONG, UNRESOLVED_WIKILINK,
           AMBIGUOUS_WIKILINK, COMMENTS_NOT_IN_EXPORT, PARSE_ERROR)

# What happened to an item.
IMPORTED = "imported"  # a note was created
UNCHANGED = "unchanged"  # an earlier attempt already created it; nothing was written
STORED = "stored"  # an attachment was stored
DEFINED = "defined"  # a database became a type
SKIPPED = "skipped"  # see the reason
CANCELLED = "cancelled"  # the import was cancelled before reaching it
FAILED = "failed"  # writing it failed; the detail says why
NOT_REACHED = "not_reached"  # the server stopped (a crash, a restart) before the import reached it

# Kinds of item (and of the rows that are not items).
NOTE_KINDS = frozenset({"note", "canvas", "database_row"})  # the items the summary counts as notes
LINK = "link"
LINKS_MORE = "links_more"  # "N more" for one note
LINKS_LEFT_OUT = "links_left_out"  # the final row past the per-import cap

PER_NOTE = 100
PER_IMPORT = 10_000


@dataclass(frozen=True)
class LedgerRow:
    item: str
    kind: str
    status: str
    reason: str | None = None
    detail: str = ""
    note_id: str | None = None
    target: str | None = None
    count: int | None = None

    def __post_init__(self) -> None:
        if self.reason is not None and self.reason not in REASONS:
            raise ValueError(f"not a ledger reason: {self.reason}")

    def as_dict(self) -> dict[str, Any]:
        return {"item": self.item, "kind": self.kind, "status": self.status, "reason": self.reason,
                "detail": self.detail, "note_id": self.note_id, "target": self.target, "count": self.count}


@dataclass(frozen=True)
class LinkProblem:
    """One distinct link target a note could not link to."""

    target: str
    reason: str  # unresolved_wikilink, ambiguous_wikilink, path_too_long or database_view
    detail: str = ""


class LinkRows:
    """The caps on rows about links (see the module docstring)."""

    def __init__(self, *, per_note: int = PER_NOTE, per_import: int = PER_IMPORT) -> None:
        self.per_note = per_note
        self.per_import = per_import
        self.listed = 0
        self.left_out = 0  # link problems not listed because the import's cap was reached
        self.left_out_notes = 0

    def rows(self, item: str, note_id: str | None, problems: list[LinkProblem]) -> list[LedgerRow]:
        """The rows for one note's link problems: all of them, capped, or none past the import's cap."""
        if not problems:
            return []
        shown = problems[:self.per_note]
        rows = [LedgerRow(item, LINK, SKIPPED, p.reason, p.detail, note_id, p.target) for p in shown]
        more = len(problems) - len(shown)
        if more:
            rows.append(LedgerRow(item, LINKS_MORE, SKIPPED, None,
                                  f"{more:,} more link{'s' if more != 1 else ''} in this note went unresolved",
                                  note_id, None, more))
        if self.listed + len(rows) > self.per_import:
            self.left_out += len(problems)
            self.left_out_notes += 1
            return []
        self.listed += len(rows)
        return rows

    def final_row(self) -> LedgerRow | None:
        if not self.left_out:
            return None
        return LedgerRow(
            "", LINKS_LEFT_OUT, SKIPPED, None,
            f"{self.left_out:,} link problem{'s' if self.left_out != 1 else ''} from {self.left_out_notes:,} "
            f"note{'s' if self.left_out_notes != 1 else ''} were left out: an import lists at most "
            f"{self.per_import:,} rows about links",
            None, None, self.left_out,
        )


@dataclass
class Tally:
    """Counts over the rows written so far; the summary of an import."""

    notes: Counter = field(default_factory=Counter)  # status -> how many note items
    attachments: Counter = field(default_factory=Counter)
    items: Counter = field(default_factory=Counter)  # status -> how many items of any kind
    reasons: Counter = field(default_factory=Counter)  # reason -> how many rows
    rows: int = 0

    def add(self, row: LedgerRow) -> None:
        self.rows += 1
        if row.reason is not None:
            self.reasons[row.reason] += 1
        if row.kind in (LINK, LINKS_MORE, LINKS_LEFT_OUT):
            return
        self.items[row.status] += 1
        if row.kind in NOTE_KINDS:
            self.notes[row.status] += 1
        elif row.kind == "attachment":
            self.attachments[row.status] += 1

    def summary(self, links: LinkRows) -> dict[str, Any]:
        total = sum(self.notes.values())
        landed = self.notes[IMPORTED] + self.notes[UNCHANGED]
        missed = total - landed
        text = f"imported {landed:,} of {total:,} notes"
        if self.notes[UNCHANGED]:
            text += f" ({self.notes[UNCHANGED]:,} of them already there from an earlier attempt)"
        if missed:
            text += f", and here is each of the {missed:,} we did not"
        return {
            "text": text,
            "notes": {"total": total, "imported": self.notes[IMPORTED], "unchanged": self.notes[UNCHANGED],
                      "not_imported": missed},
            "attachments": {"total": sum(self.attachments.values()), "stored": self.attachments[STORED],
                            "not_stored": sum(self.attachments.values()) - self.attachments[STORED]},
            "items": {"total": sum(self.items.values()), **dict(sorted(self.items.items()))},
            "reasons": dict(sorted(self.reasons.items())),
            "link_rows": {"listed": links.listed, "left_out": links.left_out, "left_out_notes": links.left_out_notes},
            "ledger_rows": self.rows,
        }
