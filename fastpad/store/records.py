"""Plain records the store reads and writes. No SQL, no backend types."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class WorkspaceRow:
    id: str
    name: str
    created_at: datetime


@dataclass(frozen=True)
class PersonRow:
    id: str
    email: str
    display_name: str
    password_hash: str | None
    created_at: datetime


@dataclass(frozen=True)
class MemberRow:
    workspace_id: str
    person_id: str
    role: str
    created_at: datetime


@dataclass(frozen=True)
class AgentRow:
    id: str
    name: str
    created_by: str | None
    created_at: datetime


@dataclass(frozen=True)
class TokenRow:
    id: str
    token_hash: str
    prefix: str
    label: str
    kind: str  # "agent" | "person"
    agent_id: str | None
    person_id: str | None
    scopes: tuple[str, ...]
    note_ids: tuple[str, ...] | None
    auto_apply: bool
    rate_limit_per_minute: int
    parent_id: str | None
    root_id: str
    created_by_kind: str
    created_by_id: str | None
    expires_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None
    created_at: datetime
    ask_cap: int | None = None  # provider tokens its questions may spend (None: no cap)
    ask_spent: int = 0  # provider tokens its questions have spent


@dataclass(frozen=True)
class SessionRow:
    id: str
    person_id: str
    session_hash: str
    created_at: datetime
    expires_at: datetime
    last_seen_at: datetime
    ended_at: datetime | None
    user_agent: str = ""  # where it signed in from, as Settings → Sessions shows it


@dataclass(frozen=True)
class NoteRow:
    """A note's row. ``snapshot`` is None when the caller asked for the summary only."""

    id: str
    title: str
    types: tuple[str, ...]
    properties: dict[str, Any]
    frontier: str
    op_seq: int
    archived_at: datetime | None
    trashed_at: datetime | None
    created_at: datetime
    updated_at: datetime
    snapshot: bytes | None = None


@dataclass(frozen=True)
class BlockRow:
    """One block of the projection, in note order."""

    block_id: str
    position: int
    type: str
    text: str
    attrs: dict[str, Any]
    origin: str
    review_state: str


@dataclass(frozen=True)
class Actor:
    """Who made a write, as the op log records it."""

    kind: str  # "person" | "agent"
    id: str
    token_id: str | None
    origin: str
    # The writer's note set (None: the whole workspace): the only notes a title written in
    # its text may resolve to. Not recorded; the link step reads it.
    note_ids: frozenset[str] | None = None


class _Unchanged:
    def __repr__(self) -> str:
        return "UNCHANGED"


UNCHANGED: Any = _Unchanged()


@dataclass(frozen=True)
class BlockEdits:
    """The blocks a write changed, for a write that knows exactly which: an import that
    only edited text (``NoteDocument.import_update``). In place of the full projection
    (``NoteWrite.blocks``) the store rewrites only these rows, and the link and search
    steps revisit only these blocks and the sections they sit in.

    ``rows`` are the changed blocks as they now read, at their (unchanged) positions,
    in position order, each already restamped; ``previous`` are the same blocks' stored
    rows before the write. Positions and the set of blocks are unchanged."""

    rows: list[BlockRow]
    previous: list[BlockRow]


@dataclass
class NoteWrite:
    """Everything one committed write changes, applied by ``WorkspaceTx.write_note``
    in one transaction: op log, note row, block projection (and with it the
    lexical index), change feed.

    ``expected_frontier`` is a compare-and-set on the note's stored frontier
    (None only for ``kind == "create"``). Content fields left as None / UNCHANGED
    are not touched.
    """

    note_id: str
    kind: str  # create | ops | archive | unarchive | trash | restore
    at: datetime
    actor: Actor
    expected_frontier: str | None = None
    update: bytes | None = None  # appended to the op log when given
    peer_id: str | None = None
    snapshot: bytes | None = None
    frontier: str | None = None
    title: str | None = None
    # (origin, review state) of the title, when this write stamps it (NoteService._commit does
    # whenever the title changes); None leaves the stored one.
    title_provenance: tuple[str, str] | None = None
    # Each property that is not a person's own -> (origin, review state), the whole map after
    # the write (``_commit`` fills it whenever the properties change); None leaves the stored one.
    property_provenance: dict[str, tuple[str, str]] | None = None
    types: tuple[str, ...] | None = None
    properties: dict[str, Any] | None = None
    blocks: list[BlockRow] | None = None  # the full projection after the write
    block_edits: BlockEdits | None = None  # or, instead, only the blocks it changed
    archived_at: Any = UNCHANGED  # datetime | None | UNCHANGED
    trashed_at: Any = UNCHANGED


@dataclass(frozen=True)
class OpLogEntry:
    seq: int
    kind: str
    payload: bytes
    peer_id: str | None
    frontier: str
    principal_kind: str
    principal_id: str
    token_id: str | None
    origin: str
    created_at: datetime


@dataclass(frozen=True)
class IdempotencyRecord:
    """A mutation's first response, replayed verbatim for the same key and body."""

    request_hash: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    created_at: datetime | None = None


@dataclass(frozen=True)
class NameProvenance:
    """Whose a note's title and properties are: (origin, review state) of the title, and of each
    property that is not a person's own (absent: a person's own)."""

    title: tuple[str, str]
    properties: dict[str, tuple[str, str]]

    def moved(self, was: tuple[str, str], now: tuple[str, str]) -> "NameProvenance | None":
        """The title and properties stamped ``was`` restamped ``now``, the rest as they are (a
        verification, a turn marked reviewed); None when none is ``was``."""
        if self.title != was and was not in self.properties.values():
            return None
        return NameProvenance(now if self.title == was else self.title,
                              {name: now if pair == was else pair for name, pair in self.properties.items()})
