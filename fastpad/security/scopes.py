"""The scopes a credential can carry (spec: Agents › What a token can reach).

No scope implies another. ``turns:accept`` in particular is never implied, is
not part of a signed-in person's own grant (a person accepts directly), and
only a person can mint a token that carries it.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastpad.errors import FieldError, ValidationFailed

NOTES_READ = "notes:read"  # read note bodies
NOTES_PROPOSE = "notes:propose"  # create proposals, never apply them
NOTES_WRITE = "notes:write"  # write note content directly
NOTES_DELETE = "notes:delete"  # move to trash and restore
SEARCH_READ = "search:read"  # search, and titles and snippets with it
GRAPH_READ = "graph:read"  # traverse links
SCHEMA_WRITE = "schema:write"  # define note types and their properties
EXPORT = "export"  # pull the whole workspace as Markdown
TURNS_ACCEPT = "turns:accept"  # accept its own proposals

ALL_SCOPES: tuple[str, ...] = (
    NOTES_READ, NOTES_PROPOSE, NOTES_WRITE, NOTES_DELETE, SEARCH_READ, GRAPH_READ, SCHEMA_WRITE, EXPORT, TURNS_ACCEPT,
)
# What an agent gets when nobody names its scopes (an OAuth client asking for none, `make run`'s demo
# token): it reads, searches, follows links and proposes; every change waits for a person.
AGENT_DEFAULT_SCOPES: tuple[str, ...] = (NOTES_READ, NOTES_PROPOSE, SEARCH_READ, GRAPH_READ)
# What a person's web session holds.
SESSION_SCOPES: frozenset[str] = frozenset(ALL_SCOPES) - {TURNS_ACCEPT}
# What a viewer's credentials hold, whatever they were minted with: reading, never writing.
VIEWER_SCOPES: frozenset[str] = frozenset({NOTES_READ, SEARCH_READ, GRAPH_READ, EXPORT})
# What survives when a credential names a workspace it is not in: reads, which then find nothing.
READ_SCOPES: frozenset[str] = frozenset({NOTES_READ, SEARCH_READ, GRAPH_READ})


def parse_scopes(scopes: Iterable[str] | str, *, field: str = "scopes") -> frozenset[str]:
    """Validate a scope list (or a comma-separated string); unknown names are a 422."""
    if isinstance(scopes, str):
        scopes = [s for s in (part.strip() for part in scopes.split(",")) if s]
    given = list(scopes)
    unknown = sorted({s for s in given if s not in ALL_SCOPES})
    if unknown:
        raise ValidationFailed(
            detail=f"unknown scope(s): {', '.join(unknown)}",
            field_errors=[FieldError(field, "unknown_scope", f"{s!r} is not a scope; known: {', '.join(ALL_SCOPES)}")
                          for s in unknown],
        )
    if not given:
        raise ValidationFailed(
            detail="a token needs at least one scope",
            field_errors=[FieldError(field, "required", "name at least one scope")],
        )
    return frozenset(given)


def ordered(scopes: Iterable[str]) -> list[str]:
    """Scopes in the canonical order of ALL_SCOPES."""
    present = set(scopes)
    return [s for s in ALL_SCOPES if s in present]
