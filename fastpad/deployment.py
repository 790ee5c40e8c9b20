"""A deployment: a data directory holding ``fastpad.json`` (and, by default, the SQLite file).

``fastpad.json`` (mode 0600) records the database URL, a random server secret
(CSRF tokens are keyed by it), and the workspace and owner ``fp init``
created, which operator commands act in. The database URL lives here, not in
the environment. Optional settings: ``embeddings`` (search/setup.py);
``ask``, the model provider answering questions, whose API key stays in the
environment variable it names (search/provider.py); ``trash_retention_days``;
``mcp.allow_hosts`` (mcp/env.py).
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from fastpad.errors import Conflict, NotFound
from fastpad.knowledge.calendar import CalendarService
from fastpad.knowledge.changes import ChangeFeedService
from fastpad.knowledge.graph import GraphService
from fastpad.knowledge.block_review import BlockReview
from fastpad.knowledge.history import HistoryService
from fastpad.knowledge.note_history import NoteHistory
from fastpad.knowledge.memory import MemoryService
from fastpad.knowledge.comments import CommentService
from fastpad.knowledge.presence import PresenceService
from fastpad.knowledge.mentions import InboxService
from fastpad.knowledge.notes import NoteService
from fastpad.knowledge.attachments import AttachmentService
from fastpad.knowledge.placeholders import PlaceholderService
from fastpad.knowledge.publishing import PublishingService
from fastpad.importers.verification import ImportVerification
from fastpad.knowledge.query import KnowledgeQueryService
from fastpad.knowledge.saved_views import CollectionService
from fastpad.knowledge.typed_notes import TypedNoteService
from fastpad.knowledge.types import TypeService
from fastpad.knowledge.trash import DEFAULT_RETENTION, PurgeSchedule, TrashService
from fastpad.notes.ids import new_id
from fastpad.review.effects import EventNotes, KnowledgeEffects
from fastpad.review.service import ReviewService
from fastpad.search.ask import AskService
from fastpad.search.context import ContextService
from fastpad.search.indexing import backfill_lexical_texts
from fastpad.search.provider import CONFIG_KEY as ASK_CONFIG_KEY, provider_from_config
from fastpad.search.service import SearchService
from fastpad.outbound.pipeline import redaction_key
from fastpad.search.setup import build_search
from fastpad.search.worker import EmbeddingWorker
from fastpad.security.at_rest import KeptResponseSeal
from fastpad.security.audit import AuditService
from fastpad.security.invitations import InvitationService
from fastpad.security.mail import Mailer
from fastpad.security.people import PeopleService
from fastpad.security.team import TeamService
from fastpad.security.workspaces import WorkspaceService
from fastpad.security.principals import Principal
from fastpad.security.tokens import TokenService
from fastpad.store import IdempotencyRecord, Store, open_store, utcnow
from fastpad.store.claims import CLAIMED

CONFIG_NAME = "fastpad.json"
DEFAULT_DB_NAME = "fastpad.db"
CONFIG_FORMAT = 1


@dataclass(frozen=True)
class InitResult:
    workspace_id: str
    owner_id: str
    owner_email: str
    database_url: str
    owner_password: str | None = None  # set only when init generated it (shown once)
    data_dir: Path | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"workspace_id": self.workspace_id, "owner_id": self.owner_id, "owner_email": self.owner_email,
                "database_url": _redact(self.database_url), "owner_password": self.owner_password,
                "data_dir": None if self.data_dir is None else str(self.data_dir)}


class IdempotencyService:
    """The first response per (workspace, credential, key), replayed for the same body — for the
    HTTP API and the MCP tools alike. Its body is kept sealed (``security/at_rest.py``): some first
    responses carry a secret shown once, such as a minted token."""

    def __init__(self, store: Store, seal: KeptResponseSeal) -> None:
        self.store = store
        self.seal = seal

    def idempotency_lookup(self, workspace_id: str, principal_key: str, key: str) -> IdempotencyRecord | None:
        record = self.store.idempotency_lookup(workspace_id, principal_key, key)
        if record is None or record.status == CLAIMED:  # a claim records what was written: no secret
            return record
        body = self.seal.open(bytes(record.body), workspace_id, principal_key, key)
        return dataclasses.replace(record, body=body)

    def idempotency_save(self, workspace_id: str, principal_key: str, key: str, record: IdempotencyRecord) -> bool:
        sealed = self.seal.seal(bytes(record.body), workspace_id, principal_key, key)
        return self.store.idempotency_save(workspace_id, principal_key, key, dataclasses.replace(record, body=sealed))


@dataclass
class Deployment:
    data_dir: Path
    config: dict[str, Any]
    store: Store
    secret: bytes
    workspace_id: str  # the workspace `fp init` created; operator commands act here
    owner_id: str
    notes: NoteService = field(init=False)
    changes: ChangeFeedService = field(init=False)
    graph: GraphService = field(init=False)
    history: HistoryService = field(init=False)
    note_history: NoteHistory = field(init=False)
    block_review: BlockReview = field(init=False)
    memory: MemoryService = field(init=False)
    trash: TrashService = field(init=False)
    purge_schedule: PurgeSchedule = field(init=False)
    types: TypeService = field(init=False)
    typed_notes: TypedNoteService = field(init=False)
    queries: KnowledgeQueryService = field(init=False)
    calendar: CalendarService = field(init=False)
    collections: CollectionService = field(init=False)
    tokens: TokenService = field(init=False)
    people: PeopleService = field(init=False)
    invitations: InvitationService = field(init=False)
    team: TeamService = field(init=False)
    workspaces: WorkspaceService = field(init=False)
    idempotency: IdempotencyService = field(init=False)
    review: ReviewService = field(init=False)
    search: SearchService = field(init=False)
    ask: AskService = field(init=False)
    context: ContextService = field(init=False)
    publishing: PublishingService = field(init=False)
    import_verification: ImportVerification = field(init=False)
    attachments: AttachmentService = field(init=False)
    placeholders: PlaceholderService = field(init=False)
    embedder: EmbeddingWorker | None = field(init=False)

    def __post_init__(self) -> None:
        self.notes = NoteService(self.store)
        self.changes = ChangeFeedService(self.store)
        self.graph = GraphService(self.store)
        self.history = HistoryService(self.store)
        self.note_history = NoteHistory(self.store, self.notes)
        self.block_review = BlockReview(self.store, self.notes)
        self.memory = MemoryService(self.store, self.notes)
        days = self.config.get("trash_retention_days")  # fastpad.json may set it: purge that long after trashing
        self.trash = TrashService(self.store, retention=DEFAULT_RETENTION if days is None else timedelta(days=days))
        self.purge_schedule = PurgeSchedule(self.trash)  # every workspace's trash
        self.types = TypeService(self.store)
        self.typed_notes = TypedNoteService(self.store)
        self.queries = KnowledgeQueryService(self.store)
        self.calendar = CalendarService(self.store, self.queries)
        self.collections = CollectionService(self.store, self.queries)
        self.tokens = TokenService(self.store)
        self.people = PeopleService(self.store, self.secret)
        # fastpad.json's "signup" (invite | open | closed) and "mail" (SMTP for invitations; none: not mailed).
        self.invitations = InvitationService(self.store, self.people, mailer=Mailer.from_config(self.config.get("mail")),
                                             signup=self.config.get("signup", "invite"))
        self.team = TeamService(self.store, self.people)
        self.workspaces = WorkspaceService(self.store)
        self.idempotency = IdempotencyService(self.store, KeptResponseSeal(self.secret))
        self.review = ReviewService(self.store, self.secret, self.notes, effects=KnowledgeEffects(
            graph=self.graph, calendar=EventNotes(self.notes, self.typed_notes), notes=self.notes))
        self.notes.agent_creations = self.review.create_note
        self.search, self.embedder = build_search(self.store, self.config.get("embeddings"),
                                                  redaction_key=redaction_key(self.secret))
        with self.store.write(self.workspace_id) as tx:  # blocks stored before migration 21 (a no-op after)
            backfill_lexical_texts(tx)
        # fastpad.json's "ask" object names the model provider (search/provider.py); none: asking is refused.
        self.ask = AskService(self.search, self.notes, self.tokens, provider_from_config(self.config.get(ASK_CONFIG_KEY)))
        self.context = ContextService(self.search, self.notes, self.graph)
        self.publishing = PublishingService(self.store, redaction_key(self.secret))
        self.import_verification = ImportVerification(self.store, self.notes)
        self.attachments = AttachmentService(self.store)
        self.placeholders = PlaceholderService(self.store, redaction_key(self.secret))
        self.audit = AuditService(self.store)
        self.inbox = InboxService(self.store)
        self.comments = CommentService(self.store)
        self.presence = PresenceService(self.store)  # in memory only: see knowledge/presence.py

    def operator_principal(self, workspace_id: str | None = None) -> Principal:
        """The operator at the server's terminal, acting as the workspace owner (writes are human_typed)."""
        return self.people.principal_for(workspace_id or self.workspace_id, self.owner_id)

    def start_background(self) -> None:
        """Start what runs beside the HTTP server (the app's lifespan calls this):
        the embedding worker and the hourly purge of the expired trash."""
        if self.embedder is not None:
            # Every workspace's chunks are swept (one created later joins at its first commit).
            for workspace_id in self.store.workspace_ids():
                self.embedder.watch(workspace_id)
            self.embedder.start()
        self.purge_schedule.start()

    def stop_background(self) -> None:
        self.purge_schedule.stop()
        if self.embedder is not None:
            self.embedder.stop()

    def close(self) -> None:
        self.stop_background()
        self.store.close()

    def __enter__(self) -> "Deployment":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def init_deployment(
    data_dir: Path,
    database_url: str | None = None,
    owner_email: str = "owner@localhost",
    owner_password: str | None = None,
    *,
    workspace_name: str = "My workspace",
) -> InitResult:
    """Create a deployment: the database (migrated), one workspace and its owner.
    Refuses (Conflict) if ``data_dir`` already holds one. Without
    ``owner_password`` a random one is generated and returned once."""
    data_dir = Path(data_dir)
    config_path = data_dir / CONFIG_NAME
    if config_path.exists():
        raise Conflict(detail=f"{data_dir} already holds a Fastpad deployment ({CONFIG_NAME} exists)",
                       extra={"reason": "already_initialised"}, next_call=f"fp serve --data-dir {data_dir}")
    data_dir.mkdir(parents=True, exist_ok=True)
    stored_url = database_url or f"sqlite:{DEFAULT_DB_NAME}"
    url = _resolve(stored_url, data_dir)
    generated = owner_password is None
    password = secrets.token_urlsafe(12) if generated else owner_password
    secret = secrets.token_bytes(32)
    sqlite_file = data_dir / DEFAULT_DB_NAME if database_url is None else None
    fresh_file = sqlite_file is not None and not sqlite_file.exists()
    try:
        store = open_store(url)
        try:
            workspace_id = new_id()
            with store.write(workspace_id) as tx:
                tx.insert_workspace(workspace_name, utcnow())
            people = PeopleService(store, secret)
            owner = people.create_person(workspace_id, owner_email, password=password, role="owner")
        finally:
            store.close()
        config = {
            "format": CONFIG_FORMAT,
            "database_url": stored_url,
            "secret": secret.hex(),
            "workspace_id": workspace_id,
            "owner_id": owner.id,
            "owner_email": owner.email,
            "created_at": utcnow().isoformat(),
        }
        _write_private(config_path, json.dumps(config, indent=2) + "\n")
    except BaseException:
        if fresh_file and sqlite_file is not None:
            for suffix in ("", "-wal", "-shm"):
                Path(str(sqlite_file) + suffix).unlink(missing_ok=True)
        raise
    return InitResult(workspace_id, owner.id, owner.email, url, password if generated else None, data_dir)


def open_deployment(data_dir: Path, *, pool_size: int = 8) -> Deployment:
    data_dir = Path(data_dir)
    config_path = data_dir / CONFIG_NAME
    if not config_path.exists():
        raise NotFound(detail=f"no Fastpad deployment in {data_dir}", next_call=f"fp init --data-dir {data_dir}")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    store = open_store(_resolve(config["database_url"], data_dir), pool_size=pool_size)
    return Deployment(
        data_dir=data_dir, config=config, store=store, secret=bytes.fromhex(config["secret"]),
        workspace_id=config["workspace_id"], owner_id=config["owner_id"],
    )


def _resolve(url: str, data_dir: Path) -> str:
    """A relative SQLite path is relative to the data directory (so the directory can move)."""
    if url.startswith("sqlite:") and not url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:"):])
        if not path.is_absolute():
            path = (data_dir / path).resolve()
        return "sqlite:///" + str(path).lstrip("/")
    return url


def _write_private(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _redact(url: str) -> str:
    """A URL fit to print: any password replaced."""
    if "://" in url and "@" in url.split("://", 1)[1].split("/", 1)[0]:
        scheme, rest = url.split("://", 1)
        creds, host = rest.split("@", 1)
        if ":" in creds:
            creds = creds.split(":", 1)[0] + ":***"
        return f"{scheme}://{creds}@{host}"
    return url
