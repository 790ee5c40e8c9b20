"""Request and response bodies of the HTTP API (they generate the OpenAPI document)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from fastpad.notes.blocks import MAX_TITLE_CHARS
from fastpad.notes.ids import ULID_PATTERN, is_ulid


def _ulid(value: str) -> str:
    if not is_ulid(value):
        raise PydanticCustomError("ulid", "must be a ULID: 26 Crockford base32 characters, upper case")
    return value


Ulid = Annotated[
    str,
    AfterValidator(_ulid),
    WithJsonSchema({"type": "string", "pattern": f"^{ULID_PATTERN}$", "description": "a ULID"}),
]

IdempotencyKey = Annotated[
    str,
    Field(min_length=1, max_length=255, pattern=r"^[\x21-\x7e]+$",
          description="Replays the first response for the same body; 409 for a different body."),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- discovery ------------------------------------------------------------------


class Health(BaseModel):
    status: Literal["ok"]
    database: Literal["ok"]
    version: str


class ProtectedResourceMetadata(BaseModel):
    """RFC 9728 §2."""

    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str]
    bearer_methods_supported: list[str]
    resource_name: str
    resource_documentation: str


class FieldErrorOut(BaseModel):
    field: str
    code: str
    message: str


class Problem(BaseModel):
    """An RFC 9457 problem document. Members named in ``extra`` by the error follow these."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(description="{base_url}/errors/{slug}; resolves to a page about the problem")
    title: str
    status: int
    detail: str
    instance: str | None = None
    retryable: bool
    retry_after_ms: int | None = None
    field_errors: list[FieldErrorOut]
    field_errors_truncated: int = Field(description="field errors beyond the 50 listed")
    docs_url: str
    next: str = Field(description="the next call to make")


# --- notes ----------------------------------------------------------------------


class BlockIn(_Strict):
    id: Ulid | None = Field(default=None, description="keep a block's identity; omitted → minted, and so is an id "
                                                     "another note holds (see reassigned_block_ids)")
    type: str = "paragraph"
    text: str = ""
    attrs: dict[str, Any] = Field(default_factory=dict)


class NoteCreate(_Strict):
    """Create a note from blocks, or from a Markdown body in ``markdown``.

    The same route takes ``Content-Type: text/markdown`` with the Markdown as the body.
    """

    id: Ulid | None = Field(
        default=None,
        description="the note's id, minted by the client (a note written in a browser before its author had an "
                    "account keeps its id when adopted); omitted → minted here. An id this workspace already holds "
                    "is a 409 conflict with reason exists; one held anywhere else, reason id_taken. A person's "
                    "notes only: an agent's new note is a proposal, whose id is minted when it is proposed",
    )
    title: str = Field(default="", max_length=MAX_TITLE_CHARS)
    markdown: str | None = None
    blocks: list[BlockIn] | None = None
    types: list[str] = Field(default_factory=list)
    properties: dict[str, Any] = Field(default_factory=dict)
    idempotencyKey: IdempotencyKey | None = None


class NoteBatchIn(_Strict):
    """Several notes at once; each is created (or refused) on its own."""

    items: list[NoteCreate] = Field(min_length=1, max_length=100)
    idempotencyKey: IdempotencyKey | None = None


class BlockOut(BaseModel):
    id: str
    type: str
    text: str
    attrs: dict[str, Any]
    origin: str | None = None
    review_state: str | None = None


class NoteOut(BaseModel):
    """Timestamps are ISO 8601 with an offset."""

    model_config = ConfigDict(extra="allow")

    id: str
    title: str = Field(description="to an agent, a stand-in when the title is below its trust floor")
    types: list[str]
    properties: dict[str, Any] = Field(description="to an agent, only those its trust floor admits")
    properties_below_floor: int | None = Field(
        default=None, description="to an agent: how many properties its trust floor left out")
    frontier: str = Field(description="the note's version (fp1:…); send it back as expectedFrontier")
    blocks: list[BlockOut]
    archived: bool
    trashed: bool
    archived_at: str | None = None
    trashed_at: str | None = None
    created_at: str
    updated_at: str


class NoteCreatedOut(NoteOut):
    reassigned_block_ids: dict[str, str] = Field(
        description="block ids sent (as Markdown anchors or blocks[].id) that another note of the workspace "
                    "already holds, each mapped to the fresh id its block got here; empty when every given id was kept",
    )


class NoteSummaryOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    title: str
    types: list[str]
    frontier: str
    archived: bool
    trashed: bool
    archived_at: str | None = None
    trashed_at: str | None = None
    created_at: str
    updated_at: str
    aliases: list[str] = Field(default_factory=list, description="former titles; [[links]] to them still resolve here")


class NotePageOut(BaseModel):
    items: list[NoteSummaryOut]
    next_cursor: str | None = Field(description="pass as ?cursor= for the next page; null on the last")


class LifecycleIn(_Strict):
    """Optional body of archive/unarchive/trash/restore."""

    idempotencyKey: IdempotencyKey | None = None


class OpsIn(_Strict):
    ops: str = Field(description="base64 of a Loro update export (never a snapshot), at most 1 MiB decoded")
    peerId: str | None = Field(default=None, max_length=64)
    expectedFrontier: str = Field(description="the frontier the ops were computed against (fp1:…)",
                                  json_schema_extra={"pattern": "^fp1:"})
    idempotencyKey: IdempotencyKey | None = None


class OpsOut(BaseModel):
    note_id: str
    frontier: str


# --- web sign-in ----------------------------------------------------------------


class SessionIn(_Strict):
    email: str = Field(min_length=3, max_length=320)
    password: str = Field(min_length=1, max_length=1024)


class SwitchIn(_Strict):
    workspace_id: Ulid = Field(description="one of your workspaces (GET /v1/workspaces)")


class SessionOut(BaseModel):
    csrf_token: str = Field(description="send as x-csrf-token on every cookie-authenticated mutation")
    workspace_id: str
    principal_id: str
    kind: str
    scopes: list[str]
