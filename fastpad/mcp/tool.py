"""What a tool is, what one call of it carries, and what it hands to the outbound path.

A tool module defines one :class:`ToolSpec`; its ``run`` turns a :class:`Call`
into a :class:`ToolOutput` by calling services, never the store. Everything
a tool returns leaves through :func:`fastpad.mcp.outbound.deliver`, which is
where scope, trust floor, redaction, link neutralisation, fencing and the
token budget are applied — so a tool only says *what* it found.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

import mcp_types as types

from fastpad.knowledge.trust import AGENT_DEFAULT_FLOOR, TrustFloor, parse_floor
from fastpad.security.principals import Principal

if TYPE_CHECKING:
    from fastpad.mcp.env import McpEnv


@dataclass(frozen=True)
class NoteBody:
    """Note content for the outbound path: fenced as data, filtered by the trust floor,
    cut at block boundaries. ``blocks`` are mappings with ``id``, ``type``, ``text``,
    ``attrs``, ``origin`` and ``review_state`` (a ``NoteView``'s blocks)."""

    note_id: str
    title: str
    blocks: Sequence[Mapping[str, Any]]
    frontier: str | None = None
    types: tuple[str, ...] = ()
    properties: Mapping[str, Any] = field(default_factory=dict)
    frontmatter: bool = True  # False: an excerpt (context, history), the title is enough
    digest: bool = False  # the structure only: block ids, types and sizes, heading text; no prose
    handles: Mapping[str, str] | None = None  # block id -> anchor handle
    members: Mapping[str, Any] = field(default_factory=dict)  # further members of this note's entry
    read: Sequence[tuple[str, str]] = ()  # (block id, text) to record for the copy guard; () = nothing


@dataclass
class ToolOutput:
    """A tool's answer before it leaves. ``data`` holds every member but the one list the
    budget may cut, which goes under ``key``: JSON ``items``, or ``notes`` (note content)."""

    data: dict[str, Any]
    key: str | None = None
    items: Sequence[Any] = ()
    item_id: Callable[[Any], str] | None = None  # stable per item (default: its position)
    notes: Sequence[NoteBody] = ()
    # Tools that page on their own (changes, graph, query): the tool's cursor after the first k items,
    # so a result the budget cut resumes through the tool's own paging.
    page_cursor: Callable[[int], str | None] | None = None
    notice: bool = False  # the items carry note text (snippets, evidence…): say it is data
    max_tokens: int | None = None  # a cap below the default the call asked for (context's max_tokens)
    # For a tool that takes no cursor (propose): where the rest of a list the budget cut can be read.
    rest: str | None = None


@dataclass(frozen=True)
class Call:
    """One ``tools/call``: the tool, who calls, the checked arguments, and the deployment."""

    tool: "ToolSpec"
    principal: Principal
    args: Mapping[str, Any]
    env: "McpEnv"

    @property
    def deployment(self) -> Any:
        return self.env.deployment

    @property
    def session(self) -> str:
        return self.args["session"]

    @property
    def floor(self) -> TrustFloor:
        """Agents read at the ``human`` floor unless the call lowers it explicitly — through MCP
        that holds for a person's credential too: whatever calls here is an agent."""
        requested = self.args.get("floor")
        return AGENT_DEFAULT_FLOOR if requested is None else parse_floor(requested)


Run = Callable[[Call], Union[ToolOutput, Awaitable[ToolOutput]]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    scopes: tuple[str, ...]  # all needed; () = any credential
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    run: Run
    # Annotations are per credential: what a call can do depends on its grants (a turn can only be
    # abandoned by the token that proposed it; accepting one lands prose, deletions included).
    read_only: Callable[[Principal], bool] = lambda principal: True
    destructive: Callable[[Principal], bool] = lambda principal: False
    needs_session: bool = True

    def visible_to(self, principal: Principal) -> bool:
        return all(principal.has(scope) for scope in self.scopes)

    def listing(self, principal: Principal) -> types.Tool:
        """The tool as ``tools/list`` shows it to this credential. Static text: no note content.

        ``destructiveHint`` and ``idempotentHint`` are meaningful only when ``readOnlyHint`` is false
        (MCP ``ToolAnnotations``), so a tool read-only for this credential leaves them out."""
        read_only = self.read_only(principal)
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=types.ToolAnnotations(
                read_only_hint=read_only,
                destructive_hint=None if read_only else self.destructive(principal),
                idempotent_hint=None if read_only else True,  # writes replay under idempotency_key
                open_world_hint=False,  # the workspace only: nothing outside it is reached
            ),
        )
