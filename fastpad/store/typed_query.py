"""The structured query, compiled to parameterized SQL over the typed property index.

A ``RowQuery`` is already validated by the service (fastpad/knowledge/query.py);
every identifier in the SQL below comes from the closed tables in this module
(``_COLUMN``, ``_NOTE_FIELD``, ``_COMPARE``), never from a request, and every
value is a bound parameter.

Order. Rows are ordered by the query's keys, then by note id. A key is a
property, whose empty values come last in either direction, or a note field
(title, created_at, updated_at). The id tie-break goes the first key's way, so
a one-key order is exactly the order of that key's index. Pages are keyset
pages: ``after`` holds the last row's key values and id.

Two ways to reach the rows; the store picks one per page and both give the
same rows (a test holds them to it):

- **walk**: read the first key's index in order — that property's values, then
  its empties; a note field's index; or note ids — and check the type, the
  filters and the note's state row by row until ``limit`` rows pass. Filters on
  the first key's own property bound the index range instead of being checked.
  Cheap when the filters let many rows through.
- **candidates**: take the smallest set one index gives — the rows matching a
  filter (range filters on one property together), the type's notes, or the
  credential's note set — check the rest and sort. Cheap when that set is small.

How the store chooses, per page: if some set is smaller than a probe (``4 ×
limit`` index entries, at least ``PROBE``), sort it. Otherwise walk that far;
if the page is settled, done. If not, the probe's hit rate says how many
entries the walk would need; candidate sets are counted up to a few times
that (index-only counts, capped at ``COUNT_CAP``), and a smaller one is sorted.
Else the walk goes on, but reads no more entries than the smallest set holds,
after which that set is sorted instead: real data is correlated (archived
projects have old due dates) and a hit rate measured at the start of an index
may not last, so a walk costs at most about twice the cheaper plan.

Each row-by-row check is one index seek: an equality goes straight to
(property, value, note) in the value index; a range or presence test is
wrapped in ``IS TRUE`` so that no value index can serve it and the row is found
by primary key (workspace, note, property) — a planner without statistics would
otherwise scan a whole value range for every row it checks. The checks are
fenced so that no planner turns them into joins: PostgreSQL would then drop the
walk and sort everything (``OFFSET 0`` stops it), and SQLite (3.51; 3.40 did
not) would place the joins after the notes lookup, reading every candidate's
note row before the filters prune it (``LIMIT 1`` stops it: SQLite leaves an
EXISTS with a LIMIT a correlated subquery, checked as soon as the id is known).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastpad.store.records import NoteRow

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx

COUNT_CAP = 20_000  # index entries counted, at most, to size a candidate set
PROBE = 200  # index entries a walk reads, at least, before the store weighs it against candidates
INTERSECT_FROM = 1_000  # candidate sets this big are intersected with a second one before checking
_COLUMN = {"text": "value_text", "num": "value_num", "time": "value_time"}
_NOTE_FIELD = {"title": "title", "created_at": "created_at", "updated_at": "updated_at"}
_COMPARE = {"eq": "=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
_RANGE = frozenset({"lt", "lte", "gt", "gte"})
OPS = frozenset({*_COMPARE, "in", "has"})
_EMPTY = "{a}.value_text IS NULL AND {a}.value_num IS NULL AND {a}.value_time IS NULL"


@dataclass(frozen=True)
class PropertyFilter:
    """Notes with a value of ``property`` satisfying ``op`` (``negate``: notes without one)."""

    property: str
    column: str  # text | num | time
    op: str  # eq | in | lt | lte | gt | gte | has
    values: tuple[Any, ...] = ()
    negate: bool = False

    def __post_init__(self) -> None:
        if self.column not in _COLUMN or self.op not in OPS:
            raise ValueError(f"unknown column {self.column!r} or op {self.op!r}")
        arity_ok = {"has": not self.values, "in": bool(self.values)}.get(self.op, len(self.values) == 1)
        if not arity_ok:
            raise ValueError(f"wrong number of values for {self.op}")


@dataclass(frozen=True)
class SortKey:
    """A property (``property`` set) or a note field (``note_field`` set)."""

    column: str  # text | num | time
    property: str | None = None
    note_field: str | None = None
    descending: bool = False

    def __post_init__(self) -> None:
        if self.column not in _COLUMN or (self.property is None) == (self.note_field is None) or (
            self.note_field is not None and self.note_field not in _NOTE_FIELD
        ):
            raise ValueError("a sort key is one property or one note field")


@dataclass(frozen=True)
class RowQuery:
    type_names: tuple[str, ...]  # the type and every type that extends it
    filters: tuple[PropertyFilter, ...] = ()
    keys: tuple[SortKey, ...] = ()
    after: tuple[tuple[Any, ...], str] | None = None  # the last row's key values and note id
    note_ids: frozenset[str] | None = None  # the credential's note set
    include_archived: bool = False
    limit: int = 50
    # The type and the types it extends: every queried note has a row (maybe empty) for each
    # of their properties, so only their properties' indexes can be walked in full. A note has
    # no row at all for a subtype's or another type's property.
    types_on_every_note: tuple[str, ...] = ()
    # Each row must also pass every filter of at least one of these branches. Only ever checked
    # row by row: a branch never drives a walk or a candidate set.
    any_of: tuple[tuple[PropertyFilter, ...], ...] = ()


@dataclass(frozen=True)
class RowHit:
    note: NoteRow
    keys: tuple[Any, ...]  # the row's key values as stored (None: empty)


@dataclass(frozen=True)
class RowPage:
    hits: list[RowHit]
    strategy: str  # walk | candidates | none (nothing can match)


@dataclass
class _Sql:
    """SQL text and its parameters, built together so they cannot drift apart."""

    parts: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)

    def add(self, text: str, *params: Any) -> "_Sql":
        self.parts.append(text)
        self.params.extend(params)
        return self

    def extend(self, other: "_Sql") -> "_Sql":
        self.parts += other.parts
        self.params += other.params
        return self

    def text(self, sep: str = " ") -> str:
        return sep.join(self.parts)


@dataclass(frozen=True)
class _Driver:
    """A set of notes one index gives: the type's, the credential's, or a property's rows
    matching ``filters`` (all on that property, tested on the same row)."""

    kind: str  # type | notes | values
    filters: tuple[PropertyFilter, ...] = ()


@dataclass(frozen=True)
class _Segment:
    """One index range a walk reads in order: ``source`` (FROM … JOIN notes n), the
    conditions that select the range, its order columns, and the cursor condition
    (``after``) the range cannot express itself."""

    source: str
    source_params: tuple[Any, ...]
    index: str  # the table the range is read from, alone (the cut is found there, index-only)
    where: _Sql
    order: tuple[str, ...]
    descending: bool
    id_col: str
    key_expr: str  # the first key's column in this range ("NULL" for empties and id order)
    after: tuple[Any, ...] | None
    shows_type: bool  # every note in the range is of a queried type


class _GaveUp(Exception):
    """A walk read its budget of index entries without settling the page; ``expected``
    is how many entries, at the hit rate it saw, the walk would need."""

    def __init__(self, expected: float) -> None:
        super().__init__(f"a walk of about {expected:.0f} entries")
        self.expected = expected


def run_query(tx: "WorkspaceTx", q: RowQuery, *, strategy: str | None = None) -> RowPage:
    return _Compiler(tx, q).run(strategy)


class _Compiler:
    def __init__(self, tx: "WorkspaceTx", q: RowQuery) -> None:
        self.tx, self.q, self.d = tx, q, tx._d
        self.ws = tx.workspace_id
        postgres = self.d.name == "postgres"
        # Keeps each check a subquery rather than a join (see the module docstring).
        self.fence = " OFFSET 0" if postgres else " LIMIT 1"
        # The driver (the index range read in order, or the candidate set) stays the outer
        # loop: SQLite takes CROSS JOIN as that instruction; PostgreSQL plans joins itself.
        self.join = "JOIN" if postgres else "CROSS JOIN"
        # The note's own columns, in the order WorkspaceTx._note reads them.
        self.note_columns = [f"n.{c.strip()}" for c in tx._NOTE_COLUMNS.split(",")]
        # Filters on the first key's property bound the walk's range instead of being checked.
        first_property = q.keys[0].property if q.keys else None
        self.seek = tuple(f for f in q.filters if not f.negate and f.property == first_property)
        # Only notes of a property's type (or of a type extending it) have rows for it, so a
        # row of a property of one of the queried types proves the note's type: a required
        # filter on one, or walking one, makes checking the type redundant.
        self.type_shown_by_filters = any(not f.negate and _owner(f.property) in q.type_names for f in q.filters)
        self.type_shown_by_walk = first_property is not None and _owner(first_property) in q.type_names
        # Sorted by a property some queried notes have no row for, a walk would miss them.
        self.walkable = first_property is None or _owner(first_property) in q.types_on_every_note

    # ------------------------------------------------------------------ choosing

    def run(self, strategy: str | None) -> RowPage:
        q = self.q
        if q.note_ids is not None and not q.note_ids:
            return RowPage([], "none")
        if strategy == "candidates" or not self.walkable:
            return RowPage(self._candidates(self._cheapest(COUNT_CAP)[1]), "candidates")
        if strategy == "walk":
            return RowPage(self._walk(budget=None), "walk")
        small = max(4 * q.limit, PROBE)
        cost, drivers = self._cheapest(small)
        if cost < small:  # a small set: sorting it is cheap, whatever the walk would do
            return RowPage(self._candidates(drivers), "candidates")
        try:
            return RowPage(self._walk(budget=small), "walk")
        except _GaveUp as probe:
            expected = probe.expected
        cost, drivers = self._cheapest(min(4 * expected, COUNT_CAP))
        if cost < expected:
            return RowPage(self._candidates(drivers), "candidates")
        try:  # the walk may read as much as the candidates would cost, no more
            return RowPage(self._walk(budget=int(cost)), "walk")
        except _GaveUp:
            return RowPage(self._candidates(drivers), "candidates")

    def _cheapest(self, cap: float) -> tuple[float, list[_Driver]]:
        """The smallest candidate set, counting each index range up to ``cap`` (one statement
        for all): its size and its drivers — two filters' sets, intersected, when both are big
        enough that checking row by row would cost more than reading both ranges."""
        drivers = [*self._value_drivers(), _Driver("type")]
        counts = _Sql()
        for driver in drivers:
            table, where = (("note_type_tags c", self._type_in("c")) if driver.kind == "type"
                            else ("property_values c", self._rows_of("c", driver.filters)))
            counts.add(f"(SELECT COUNT(*) FROM (SELECT 1 FROM {table} WHERE {where.text(' AND ')} LIMIT ?) capped)",
                       *where.params, int(cap))
        row = self.tx._x("SELECT " + counts.text(", "), counts.params).fetchone()
        counted: list[tuple[float, _Driver]] = [(int(n), d) for n, d in zip(row, drivers)]
        if self.q.note_ids is not None:
            counted.append((len(self.q.note_ids), _Driver("notes")))
        counted.sort(key=lambda pair: pair[0])
        (cost, best), rest = counted[0], counted[1:]
        second = next((pair for pair in rest if pair[1].kind == "values"), None)
        if best.kind == "values" and second and cost >= INTERSECT_FROM and second[0] <= 4 * cost:
            return cost, [best, second[1]]
        return cost, [best]

    def _value_drivers(self) -> list[_Driver]:
        """One driver per positive filter, except that range filters on one property go together."""
        ranges: dict[str, list[PropertyFilter]] = {}
        drivers = []
        for f in self.q.filters:
            if f.negate:
                continue
            if f.op in _RANGE:
                ranges.setdefault(f.property, []).append(f)
            else:
                drivers.append(_Driver("values", (f,)))
        return drivers + [_Driver("values", tuple(group)) for group in ranges.values()]

    # ------------------------------------------------------------------ walk

    def _walk(self, *, budget: int | None) -> list[RowHit]:
        """Read the first key's index in order (see the module docstring); raises _GaveUp
        when ``budget`` index entries were read without settling the page."""
        q = self.q
        first = q.keys[0] if q.keys else None
        if first is None or first.note_field is not None:
            return self._walk_segment(self._ids_segment(first), budget, q.limit)
        in_empties = q.after is not None and q.after[0][0] is None
        hits = [] if in_empties else self._walk_segment(self._values_segment(first), budget, q.limit)
        if len(hits) < q.limit and not self.seek:  # a filter on the key never matches its empties
            hits += self._walk_segment(self._empties_segment(first, from_cursor=in_empties), budget,
                                       q.limit - len(hits))
        return hits

    def _walk_segment(self, segment: "_Segment", budget: int | None, limit: int) -> list[RowHit]:
        """The rows of one index range, in its order, that pass every check. With a budget
        the range is first cut after its ``budget``-th entry (an index-only lookup) — after
        the whole group of that entry's first key when the order has more keys, since a
        group is sorted by the other keys — so the walk reads about that many; if the cut
        left the page short, give up, saying how far the walk would have to go."""
        where = _Sql(list(segment.where.parts), list(segment.where.params))
        boundary = self._boundary(segment, budget) if budget is not None else None
        grouped = len(self.q.keys) > 1
        if boundary is not None:  # up to and including the cut, in reading order
            way = ">=" if segment.descending else "<="
            if grouped or len(segment.order) == 1:
                where.add(f"{segment.order[0]} {way} ?", boundary[0])
            else:
                where.add(f"({', '.join(segment.order)}) {way} (?, ?)", *boundary)
        checks = self._checks(segment.id_col, typed=not (segment.shows_type or self.type_shown_by_filters),
                              skip=set(self.seek))
        if segment.after is not None:
            checks.add(*segment.after)
        sql = self._select(first_key=segment.key_expr).add(segment.source, *segment.source_params)
        sql.extend(self._key_joins(skip_first=True))
        sql.add("WHERE " + " AND ".join([where.text(" AND "), checks.text(" AND ")]), *where.params, *checks.params)
        sql.add("ORDER BY " + self._order(segment.id_col, first_expr=segment.key_expr, index_ordered=True))
        hits = self._fetch(sql, limit)
        # A cut through the empties (ordered by the other keys, not by their index) is never whole.
        if boundary is not None and (len(hits) < limit or (grouped and segment.key_expr == "NULL")):
            raise _GaveUp(expected=budget * limit / max(len(hits), 0.5))  # type: ignore[operator]
        return hits

    def _boundary(self, segment: "_Segment", budget: int) -> tuple[Any, ...] | None:
        """The segment's ``budget``-th index entry (its order columns), or None if it has fewer."""
        order = ", ".join(f"{c}{' DESC' if segment.descending else ''}" for c in segment.order)
        row = self.tx._x(
            f"SELECT {', '.join(segment.order)} FROM {segment.index} WHERE {segment.where.text(' AND ')}"
            f" ORDER BY {order} LIMIT 1 OFFSET ?",
            [*segment.where.params, budget - 1],
        ).fetchone()
        return None if row is None else tuple(row)

    def _values_segment(self, first: SortKey) -> "_Segment":
        """The first key's values, from the cursor on."""
        col = f"k0.{_COLUMN[first.column]}"
        where = self._key_rows(first, with_seek=True)
        after = None
        if self.q.after is not None:
            where.add(self._seek_after(col, "k0.note_id"), *self._seek_after_params(first))
            if len(self.q.keys) > 1:
                after = self._after_sql("k0.note_id")
        return _Segment(
            source=f"FROM property_values k0 {self.join} notes n ON n.workspace_id = ? AND n.id = k0.note_id",
            source_params=(self.ws,), index="property_values k0", where=where, order=(col, "k0.note_id"),
            descending=first.descending,
            id_col="k0.note_id", key_expr=col, after=after, shows_type=self.type_shown_by_walk)

    def _empties_segment(self, first: SortKey, *, from_cursor: bool) -> "_Segment":
        """The notes whose first key is empty, by id (the first key's way)."""
        where = _Sql().add("k0.workspace_id = ? AND k0.property = ?", self.ws, first.property)
        where.add(_EMPTY.format(a="k0"))
        after = None
        if from_cursor and len(self.q.keys) == 1:
            where.add(f"k0.note_id {_way(first)} ?", self.q.after[1])  # type: ignore[index]
        elif from_cursor:
            after = self._after_sql("k0.note_id", skip_first=True)
        return _Segment(
            source=f"FROM property_values k0 {self.join} notes n ON n.workspace_id = ? AND n.id = k0.note_id",
            source_params=(self.ws,), index="property_values k0", where=where, order=("k0.note_id",),
            descending=first.descending,
            id_col="k0.note_id", key_expr="NULL", after=after, shows_type=self.type_shown_by_walk)

    def _ids_segment(self, first: SortKey | None) -> "_Segment":
        """A note field's index, or note ids (the type's own index when it is one type)."""
        q = self.q
        if first is not None:
            col = f"n.{_NOTE_FIELD[first.note_field or '']}"
            where = _Sql().add("n.workspace_id = ?", self.ws)
            after = None
            if q.after is not None:
                where.add(self._seek_after(col, "n.id"), *self._seek_after_params(first))
                if len(q.keys) > 1:
                    after = self._after_sql("n.id")
            return _Segment(source="FROM notes n", source_params=(), index="notes n", where=where, order=(col, "n.id"),
                            descending=first.descending, id_col="n.id", key_expr=col, after=after, shows_type=False)
        if len(q.type_names) == 1:
            where = _Sql().add("o.workspace_id = ? AND o.type_name = ?", self.ws, q.type_names[0])
            if q.after is not None:
                where.add("o.note_id > ?", q.after[1])
            return _Segment(source=f"FROM note_type_tags o {self.join} notes n ON n.workspace_id = ? AND n.id = o.note_id",
                            source_params=(self.ws,), index="note_type_tags o", where=where, order=("o.note_id",),
                            descending=False,
                            id_col="o.note_id", key_expr="NULL", after=None, shows_type=True)
        where = _Sql().add("n.workspace_id = ?", self.ws)
        if q.after is not None:
            where.add("n.id > ?", q.after[1])
        return _Segment(source="FROM notes n", source_params=(), index="notes n", where=where, order=("n.id",),
                        descending=False,
                        id_col="n.id", key_expr="NULL", after=None, shows_type=False)

    def _key_rows(self, first: SortKey, *, with_seek: bool) -> _Sql:
        """The first key's non-empty rows (and, ``with_seek``, only those its filters allow).
        A sort key holds one value, so its rows are all at position 0."""
        col = f"k0.{_COLUMN[first.column]}"
        rows = _Sql().add("k0.workspace_id = ? AND k0.property = ?", self.ws, first.property)
        rows.add(f"{col} IS NOT NULL")
        for f in self.seek if with_seek else ():
            rows.extend(self._test(col, f))
        return rows

    def _seek_after(self, col: str, id_col: str) -> str:
        """Strictly after the cursor in a one-key order; with more keys, from the cursor's
        group on (the rest of the order is the segment's ``after``)."""
        first = self.q.keys[0]
        if len(self.q.keys) == 1:
            return f"({col}, {id_col}) {_way(first)} (?, ?)"
        return f"{col} {_way(first)}= ?"

    def _seek_after_params(self, first: SortKey) -> tuple[Any, ...]:
        assert self.q.after is not None
        values, last_id = self.q.after
        bound = self._bind(first, values[0])
        return (bound, last_id) if len(self.q.keys) == 1 else (bound,)

    # ------------------------------------------------------------------ candidates

    def _candidates(self, drivers: list[_Driver]) -> list[RowHit]:
        """Check and sort the notes in every one of ``drivers``' sets."""
        ids = _Sql()
        for i, driver in enumerate(drivers):
            ids.add(" INTERSECT " if i else "").extend(self._driver_ids(driver))
        sql = self._select().add(f"FROM ({ids.text('')}) d {self.join} notes n ON n.workspace_id = ? AND n.id = d.note_id",
                                 *ids.params, self.ws)
        sql.extend(self._key_joins())
        by_type = any(d.kind == "type" for d in drivers)
        where = self._checks("d.note_id", typed=not (by_type or self.type_shown_by_filters),
                             skip={f for d in drivers for f in d.filters})
        if self.q.after is not None:
            where.add(*self._after_sql("d.note_id"))
        sql.add("WHERE " + where.text(" AND "), *where.params)
        sql.add("ORDER BY " + self._order("d.note_id"))
        return self._fetch(sql, self.q.limit)

    def _driver_ids(self, driver: _Driver) -> _Sql:
        """The candidate set's note ids, each once."""
        if driver.kind == "values":
            rows = self._rows_of("c", driver.filters)
            # A note holds a value (or a multi_select option) once, so only in/has can match
            # two of its rows.
            distinct = "DISTINCT " if any(f.op in ("in", "has") for f in driver.filters) else ""
            return _Sql().add(f"SELECT {distinct}c.note_id AS note_id FROM property_values c WHERE {rows.text(' AND ')}",
                              *rows.params)
        if driver.kind == "type":
            rows = self._type_in("c")
            return _Sql().add(f"SELECT DISTINCT c.note_id AS note_id FROM note_type_tags c WHERE {rows.text(' AND ')}",
                              *rows.params)
        assert self.q.note_ids is not None
        return _Sql().add(f"SELECT c.id AS note_id FROM notes c WHERE c.workspace_id = ? AND {self.d.in_ids('c.id')}",
                          self.ws, self.d.ids(sorted(self.q.note_ids)))

    # ------------------------------------------------------------------ pieces

    def _select(self, *, first_key: str | None = None) -> _Sql:
        keys = [first_key if i == 0 and first_key else self._key_expr(i, k) for i, k in enumerate(self.q.keys)]
        return _Sql().add("SELECT " + ", ".join([*self.note_columns, *keys]))

    @staticmethod
    def _key_expr(i: int, key: SortKey) -> str:
        if key.note_field is not None:
            return f"n.{_NOTE_FIELD[key.note_field]}"
        return f"k{i}.{_COLUMN[key.column]}"

    def _key_joins(self, *, skip_first: bool = False) -> _Sql:
        joins = _Sql()
        for i, key in enumerate(self.q.keys):
            if key.property is None or (i == 0 and skip_first):
                continue
            joins.add(f"LEFT JOIN property_values k{i} ON k{i}.workspace_id = ? AND k{i}.note_id = n.id"
                      f" AND k{i}.property = ? AND k{i}.position = 0", self.ws, key.property)
        return joins

    def _checks(self, id_col: str, *, typed: bool = True, skip: set[PropertyFilter] = frozenset()) -> _Sql:
        """What every strategy checks row by row: note state, note set, type, filters."""
        q, d = self.q, self.d
        where = _Sql().add("n.trashed_at IS NULL")
        if not q.include_archived:
            where.add("n.archived_at IS NULL")
        if q.note_ids is not None:
            where.add(d.in_ids(id_col), d.ids(sorted(q.note_ids)))
        if typed:
            rows = self._type_in("t").add(f"t.note_id = {id_col}")
            where.add(f"EXISTS (SELECT 1 FROM note_type_tags t WHERE {rows.text(' AND ')}{self.fence})", *rows.params)
        for j, f in enumerate(q.filters):
            if f not in skip:
                where.extend(self._filter_check(f"f{j}", f, id_col))
        if q.any_of:
            branches = [_Sql() for _ in q.any_of]
            for b, (branch, sql) in enumerate(zip(q.any_of, branches)):
                for j, f in enumerate(branch):
                    sql.extend(self._filter_check(f"a{b}_{j}", f, id_col))
            where.add("(" + " OR ".join(f"({sql.text(' AND ')})" for sql in branches) + ")",
                      *[p for sql in branches for p in sql.params])
        return where

    def _filter_check(self, alias: str, f: PropertyFilter, id_col: str) -> _Sql:
        """One filter, checked for the row ``id_col`` by one index seek (a fenced EXISTS)."""
        rows = _Sql().add(f"{alias}.workspace_id = ? AND {alias}.note_id = {id_col} AND {alias}.property = ?",
                          self.ws, f.property)
        test = self._test(f"{alias}.{_COLUMN[f.column]}", f)
        if f.op in ("eq", "in"):  # a value index seeks straight to (value, note) here
            rows.extend(test)
        else:
            rows.add(f"({test.text(' AND ')}) IS TRUE", *test.params)
        exists = f"EXISTS (SELECT 1 FROM property_values {alias} WHERE {rows.text(' AND ')}{self.fence})"
        return _Sql().add(("NOT " if f.negate else "") + exists, *rows.params)

    def _type_in(self, alias: str) -> _Sql:
        names = self.q.type_names
        return _Sql().add(f"{alias}.workspace_id = ?", self.ws).add(
            f"{alias}.type_name IN ({', '.join('?' * len(names))})", *names)

    def _rows_of(self, alias: str, filters: tuple[PropertyFilter, ...]) -> _Sql:
        """A property's rows that satisfy every one of ``filters`` (read by index range)."""
        f0 = filters[0]
        col = f"{alias}.{_COLUMN[f0.column]}"
        rows = _Sql().add(f"{alias}.workspace_id = ? AND {alias}.property = ? AND {col} IS NOT NULL",
                          self.ws, f0.property)
        for f in filters:
            rows.extend(self._test(col, f))
        return rows

    def _test(self, col: str, f: PropertyFilter) -> _Sql:
        values = [self.d.ts(v) if f.column == "time" else v for v in f.values]
        if f.op == "in":
            return _Sql().add(f"{col} IN ({', '.join('?' * len(values))})", *values)
        if f.op == "has":
            return _Sql().add(f"{col} IS NOT NULL")
        return _Sql().add(f"{col} {_COMPARE[f.op]} ?", *values)

    def _after_sql(self, id_col: str, *, skip_first: bool = False, first_expr: str | None = None) -> tuple[Any, ...]:
        """Rows strictly after the cursor in the query's order (empties last), as one condition."""
        assert self.q.after is not None
        values, last_id = self.q.after
        branches: list[_Sql] = []
        equal = _Sql()
        for i, key in enumerate(self.q.keys):
            if i == 0 and skip_first:
                continue
            expr, value = (first_expr if i == 0 and first_expr else self._key_expr(i, key)), values[i]
            if value is None:  # nothing but empties follows an empty value
                equal.add(f"{expr} IS NULL")
                continue
            bound = self._bind(key, value)
            later = f"{expr} {_way(key)} ?"
            if key.property is not None:
                later = f"({later} OR {expr} IS NULL)"
            branches.append(_Sql(list(equal.parts), list(equal.params)).add(later, bound))
            equal.add(f"{expr} = ?", bound)
        first_way = _way(self.q.keys[0]) if self.q.keys else ">"
        branches.append(_Sql(list(equal.parts), list(equal.params)).add(f"{id_col} {first_way} ?", last_id))
        sql = " OR ".join(f"({b.text(' AND ')})" for b in branches)
        return (f"({sql})", *[p for b in branches for p in b.params])

    def _order(self, id_col: str, *, first_expr: str | None = None, index_ordered: bool = False) -> str:
        """ORDER BY for the query's keys, empties last; ``index_ordered``: the first key is
        the walk's, whose segment holds only values (or only empties)."""
        parts = []
        for i, key in enumerate(self.q.keys):
            if i == 0 and first_expr == "NULL":
                continue  # the empties segment: the first key is the same (empty) everywhere
            expr = first_expr if i == 0 and first_expr else self._key_expr(i, key)
            if key.property is not None and not (i == 0 and index_ordered):
                parts.append(f"({expr} IS NULL)")
            parts.append(expr + _dir(key))
        parts.append(id_col + (_dir(self.q.keys[0]) if self.q.keys else ""))
        return ", ".join(parts)

    def _fetch(self, sql: _Sql, limit: int) -> list[RowHit]:
        rows = self.tx._x(sql.add("LIMIT ?", limit).text(), sql.params).fetchall()
        width = len(self.note_columns)
        return [RowHit(self.tx._note(r[:width]), tuple(self._key_out(k, v) for k, v in zip(self.q.keys, r[width:])))
                for r in rows]

    def _bind(self, key: SortKey, value: Any) -> Any:
        return self.d.ts(value) if key.column == "time" else value

    def _key_out(self, key: SortKey, value: Any) -> Any:
        if key.column == "time":
            return self.d.ts_out(value)
        if key.column == "num" and value is not None:
            return float(value)
        return value


def _owner(property_key: str) -> str:
    """The type a property key (``Type.name``) belongs to."""
    return property_key.partition(".")[0]


def _way(key: SortKey) -> str:
    return "<" if key.descending else ">"


def _dir(key: SortKey) -> str:
    return " DESC" if key.descending else ""
