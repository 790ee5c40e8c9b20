"""CollectionService: saved views over a type (spec: Concepts › Collections).

A collection is a saved question — a structured query (type, filters, sorts,
grouping) and a layout — never its answer: no rows are stored, and running it
(``rows``) runs the query now, for the caller, under the caller's note set.

One object, two places: the sidebar opens a collection by id, and a note
embeds the same collection with a code block whose info string is
``fastpad-collection`` and whose body is the collection's id::

    ```fastpad-collection
    01JB2K7Q9XN4M8YV3TD0FZ5ERW
    ```

It is an ordinary block of the note (so it round-trips through Markdown,
export and ``fp push`` unchanged, and other editors show it as a code block);
the editor renders the view in its place. ``embed_markdown`` is that block.

Layouts: table, list and gallery need nothing more; a board groups rows, so
its query has ``group_by``; calendar and timeline place rows in time, so
``layout_options`` names their ``start`` (and optionally ``end``) date or
datetime property — an Event type's start and end, say. Their rows are read a
window at a time (a calendar's month, a timeline's span: ``window_start`` and
``window_end``), and only the rows whose span overlaps it are read at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any

from fastpad.errors import Conflict, FieldError, NotFound, ValidationFailed
from fastpad.knowledge.query import DEFAULT_LIMIT, Definition, KnowledgeQueryService, QueryPage, TimeWindow
from fastpad.knowledge.property_index import load_schema
from fastpad.notes import is_ulid, new_id
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ, NOTES_WRITE
from fastpad.store import Store, utcnow
from fastpad.store.typed import CollectionRow

LAYOUTS = ("table", "board", "list", "gallery", "calendar", "timeline")
TIME_LAYOUTS = frozenset({"calendar", "timeline"})
EMBED_LANGUAGE = "fastpad-collection"
MAX_NAME = 200
# A board or a calendar shows every row it has at once; pages this big cost it fewer round trips.
MAX_ROWS_PAGE = 1000
MAX_WINDOW_DAYS = 3660  # a timeline may show ten years; no window reads the whole of time


@dataclass(frozen=True)
class CollectionView:
    row: CollectionRow

    def as_dict(self) -> dict[str, Any]:
        c = self.row
        return {
            "id": c.id, "name": c.name, "layout": c.layout, "query": c.query, "layout_options": c.layout_options,
            "version": c.version, "embed_markdown": embed_markdown(c.id), "created_at": c.created_at.isoformat(),
            "updated_at": c.updated_at.isoformat(),
        }


def embed_markdown(collection_id: str) -> str:
    """The block that embeds a collection in a note: its id, never its rows."""
    return f"```{EMBED_LANGUAGE}\n{collection_id}\n```"


def embedded_id(block: Mapping[str, Any]) -> str | None:
    """The collection a block embeds (its first line: whatever follows is description), or None."""
    if block.get("type") != "code" or block.get("attrs", {}).get("language") != EMBED_LANGUAGE:
        return None
    first = block.get("text", "").strip().partition("\n")[0].strip()
    return first if is_ulid(first) else None


def definition(view: Mapping[str, Any]) -> dict[str, Any]:
    """What a reader outside the app is shown for an embedded view: the saved question and where
    the view opens — never its rows (run the query for those)."""
    return {"id": view["id"], "name": view["name"], "layout": view["layout"], "query": view["query"],
            "layout_options": view["layout_options"], "link": f"/collections/{view['id']}"}


class CollectionService:
    def __init__(self, store: Store, queries: KnowledgeQueryService, *,
                 clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.queries = queries
        self.clock = clock

    # ------------------------------------------------------------------ reads

    def list(self, principal: Principal) -> list[CollectionView]:
        principal.require(NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            return [CollectionView(c) for c in tx.typed.collections()]

    def get(self, principal: Principal, collection_id: str) -> CollectionView:
        principal.require(NOTES_READ)
        return CollectionView(self._row(principal, collection_id))

    def embedded_in(self, principal: Principal, blocks: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The definition of each collection ``blocks`` embed, in their order (a deleted one says so)."""
        principal.require(NOTES_READ)
        ids = list(dict.fromkeys(i for i in map(embedded_id, blocks) if i is not None))
        if not ids:
            return []
        with self.store.read(principal.workspace_id) as tx:
            rows = {i: tx.typed.collection(i) for i in ids}
        return [definition(CollectionView(row).as_dict()) if row is not None else {"id": i, "missing": True}
                for i, row in rows.items()]

    def rows(self, principal: Principal, collection_id: str, *, cursor: Any = None, limit: Any = DEFAULT_LIMIT,
             window_start: Any = None, window_end: Any = None) -> QueryPage:
        """Run the collection's query now, for ``principal``: one keyset page (of up to
        ``MAX_ROWS_PAGE`` rows, more than a query's, for a board's columns). A calendar or a
        timeline is read one window at a time, [window_start, window_end): both are required
        there (dates or datetimes with an offset), and refused for any other layout."""
        principal.require(NOTES_READ)
        row = self._row(principal, collection_id)
        window = _window(row, window_start, window_end)
        try:
            self.queries.check(principal, row.query, field_prefix="query.")
        except ValidationFailed as stale:
            raise Conflict(detail="the collection's query no longer fits the types it names; update the collection",
                           field_errors=stale.field_errors, extra={"reason": "stale_view"},
                           next_call=f"PATCH /v1/collections/{collection_id}") from None
        return self.queries.run(principal, row.query, cursor=cursor, limit=limit, window=window,
                                max_limit=MAX_ROWS_PAGE)

    # ------------------------------------------------------------------ writes

    def create(self, principal: Principal, *, name: Any, layout: Any = "table", query: Any,
               layout_options: Any = None) -> CollectionView:
        self._require_writer(principal)
        definition = self.queries.check(principal, query, field_prefix="query.")
        options = self._check(principal, name, layout, definition, layout_options)
        now = self.clock()
        row = CollectionRow(new_id(), name, layout, definition.normalized, options, 1, principal.kind,
                            principal.principal_id, now, now)
        with self.store.write(principal.workspace_id) as tx:
            tx.typed.insert_collection(row)
            tx.feed.append("collection_create", at=now, actor=principal.actor(), subject_id=row.id)
        return CollectionView(row)

    def update(self, principal: Principal, collection_id: str, *, name: Any = None, layout: Any = None,
               query: Any = None, layout_options: Any = None, expected_version: int | None = None) -> CollectionView:
        """Change what is given (None: keep); the layout options are re-checked against the result."""
        self._require_writer(principal)
        current = self._row(principal, collection_id)
        if expected_version is not None and expected_version != current.version:
            raise Conflict(detail=f"the collection changed since version {expected_version}",
                           extra={"reason": "stale_version", "current_version": current.version},
                           next_call=f"GET /v1/collections/{collection_id}")
        definition = self.queries.check(principal, current.query if query is None else query, field_prefix="query.")
        name = current.name if name is None else name
        layout = current.layout if layout is None else layout
        options = self._check(principal, name, layout, definition,
                              current.layout_options if layout_options is None else layout_options)
        now = self.clock()
        row = CollectionRow(current.id, name, layout, definition.normalized, options, current.version + 1,
                            current.created_by_kind, current.created_by_id, current.created_at, now)
        with self.store.write(principal.workspace_id) as tx:
            if not tx.typed.update_collection(row):
                raise Conflict(detail="the collection changed meanwhile", extra={"reason": "stale_version"},
                               next_call=f"GET /v1/collections/{collection_id}")
            tx.feed.append("collection_update", at=now, actor=principal.actor(), subject_id=row.id)
        return CollectionView(row)

    def delete(self, principal: Principal, collection_id: str) -> None:
        """Notes that embed it keep their block; it then names a collection that is gone."""
        self._require_writer(principal)
        with self.store.write(principal.workspace_id) as tx:
            if not is_ulid(collection_id) or not tx.typed.delete_collection(collection_id):
                raise _no_collection(collection_id)
            tx.feed.append("collection_delete", at=self.clock(), actor=principal.actor(), subject_id=collection_id)

    # ------------------------------------------------------------------ internals

    @staticmethod
    def _require_writer(principal: Principal) -> None:
        principal.require(NOTES_WRITE)
        principal.require_whole_workspace(
            "a credential limited to a set of notes cannot change the workspace's collections")

    def _row(self, principal: Principal, collection_id: str) -> CollectionRow:
        if not isinstance(collection_id, str) or not is_ulid(collection_id):
            raise _no_collection(collection_id)
        with self.store.read(principal.workspace_id) as tx:
            row = tx.typed.collection(collection_id)
        if row is None:
            raise _no_collection(collection_id)
        return row

    def _check(self, principal: Principal, name: Any, layout: Any, definition: Definition,
               layout_options: Any) -> dict[str, Any]:
        """The layout options, once name, layout and options fit together."""
        errors: list[FieldError] = []
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            errors.append(FieldError("name", "name", f"1 to {MAX_NAME} characters"))
        if layout not in LAYOUTS:
            errors.append(FieldError("layout", "layout", "one of " + ", ".join(LAYOUTS)))
        if layout == "board" and definition.group_by is None:
            errors.append(FieldError("query.group_by", "required", "a board groups its rows by a property"))
        options = {} if layout_options is None else layout_options
        if not isinstance(options, Mapping):
            errors.append(FieldError("layout_options", "type", "an object"))
            options = {}
        allowed = {"start", "end"} if layout in TIME_LAYOUTS else set()
        errors += [FieldError(f"layout_options.{k}", "unknown_field", f"not an option of a {layout}")
                   for k in sorted(set(options) - allowed)]
        if layout in TIME_LAYOUTS:
            with self.store.read(principal.workspace_id) as tx:
                schema = load_schema(tx)
            for option in ("start", "end"):
                key = options.get(option)
                if key is None and option == "end":
                    continue
                resolved = schema.resolve(key) if isinstance(key, str) else None
                if resolved is None or resolved[1].kind not in ("date", "datetime"):
                    errors.append(FieldError(f"layout_options.{option}", "time_property",
                                             f"a {layout} needs a date or datetime property, named Type.property"))
        if errors:
            raise ValidationFailed(detail=f"{len(errors)} field(s) failed validation", field_errors=errors)
        return dict(options)


def _window(row: CollectionRow, start: Any, end: Any) -> TimeWindow | None:
    if row.layout not in TIME_LAYOUTS:
        if start is None and end is None:
            return None
        raise ValidationFailed(detail=f"a {row.layout} is not read by time window", field_errors=[
            FieldError(name, "not_allowed", "only a calendar or a timeline takes a window")
            for name, value in (("window_start", start), ("window_end", end)) if value is not None])
    errors: list[FieldError] = []
    bounds = [_instant(name, value, errors) for name, value in (("window_start", start), ("window_end", end))]
    if not errors and not bounds[0] < bounds[1]:
        errors.append(FieldError("window_end", "order", "after window_start"))
    if not errors and (bounds[1] - bounds[0]).days > MAX_WINDOW_DAYS:
        errors.append(FieldError("window_end", "range", f"at most {MAX_WINDOW_DAYS} days after window_start"))
    if errors:
        raise ValidationFailed(detail=f"a {row.layout} shows one window of time", field_errors=errors)
    return TimeWindow(row.layout_options["start"], row.layout_options.get("end"), bounds[0], bounds[1])


def _instant(name: str, value: Any, errors: list[FieldError]) -> datetime:
    """A window bound: a date (midnight UTC, as date properties are indexed) or a datetime with an offset."""
    try:
        if not isinstance(value, str):
            raise ValueError
        if len(value) == 10:
            day = date.fromisoformat(value)
            return datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            raise ValueError
        return parsed.astimezone(timezone.utc)
    except (ValueError, OverflowError):  # OverflowError: an offset that moves it out of the calendar
        errors.append(FieldError(name, "required" if value is None else "datetime",
                                 "a date (YYYY-MM-DD) or an ISO 8601 datetime with an offset"))
        return datetime.min.replace(tzinfo=timezone.utc)


def _no_collection(collection_id: Any) -> NotFound:
    return NotFound(detail=f"no collection {collection_id!r}", next_call="GET /v1/collections")
