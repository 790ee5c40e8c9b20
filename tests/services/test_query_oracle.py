"""The structured query against a naive oracle, on generated queries, both backends.

A workspace of ~100 notes is written once per backend through the real services:
three types (SubItem extends Item; Other stands alone, and some notes are Item and
Other at once), properties of every sortable kind, values left empty, values
repeated (ties), datetimes written with different offsets for one instant, notes
that lost a type but keep its values in their document, archived and trashed
notes. The oracle reads the notes as ``NoteService.get`` reports them and applies
the query in plain Python: the type and its subtypes, the filters, the archive
and trash rules, the caller's note set, the order (empties last either way, ties
by note id in the first key's direction) and the group labels.

Hypothesis draws query definitions (any type, up to three filters over any
property with ops its kind takes and values seen in the data or next to them, up
to two sort keys, an optional group_by, limits of 1 to 7, the owner or a caller
limited to a third of the notes) and every page, followed by its cursor, must
add up to the oracle's list — through the service with the store's own choice of
strategy (with the real thresholds, and with thresholds so small that the probe
walks, gives up and intersects on this small workspace), and through
``run_query`` with each strategy forced.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastpad.knowledge.note_views import NoteView
from fastpad.knowledge.property_index import load_schema
from fastpad.knowledge.query import parse_definition
from fastpad.security.principals import Principal
from fastpad.store import open_store, sqlite_url
from fastpad.store import typed_query
from fastpad.store.typed_query import RowQuery
from tests.conftest import BACKENDS
from tests.helpers_store import Services, make_services
from tests.services.typed_helpers import Typed, agent

# name -> (extends, {property: kind})
TYPES: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "Item": ((), {"n": "number", "d": "date", "t": "datetime", "s": "select", "m": "multi_select",
                  "c": "checkbox", "w": "text", "r": "relation"}),
    "SubItem": (("Item",), {"extra": "text", "rank": "number"}),
    "Other": ((), {"n": "number", "s": "select", "k": "checkbox"}),
}
OPTIONS = {"Item.s": ["a", "b", "c"], "Item.m": ["x", "y", "z"], "Other.s": ["a", "q"]}
KIND = {f"{name}.{prop}": kind for name, (_, props) in TYPES.items() for prop, kind in props.items()}
NOTE_FIELDS = ("title", "created_at", "updated_at")
SORTABLE = [key for key, kind in KIND.items() if kind != "multi_select"]
# Few distinct values, so that filters hit and sorts tie; the three datetimes written
# at 10:00 UTC are one instant, and the fractional second must survive the index.
POOL: dict[str, list[Any]] = {
    "number": [-2, 0, 0.5, 3, 3, 7.25, 100],
    "date": ["2023-12-31", "2024-01-01", "2024-02-29", "2024-06-01"],
    "datetime": ["2024-06-01T10:00:00+00:00", "2024-06-01T12:00:00+02:00", "2024-06-01T05:00:00-05:00",
                 "2024-06-01T23:30:00+00:00", "2024-06-02T00:00:00.250000+00:00"],
    "text": ["alpha", "Alpha", "beta", "", "ünïcode", "a b", "zeta", "Zeta"],
}
TITLES = ["alpha", "Alpha", "beta", "Beta", "éclair", "zeta", "a b", "note"]
TYPE_SETS = [("Item",)] * 8 + [("SubItem",)] * 5 + [("Other",)] * 2 + [("Item", "Other")] * 2 + [()]
NOTES = 100
MAX_LIMIT = 7


# ---------------------------------------------------------------------- the workspace


@dataclass(repr=False)
class World:
    backend: str
    svc: Services
    typed: Typed
    workspace_id: str
    owner: Principal
    limited: Principal  # an agent that sees a third of the notes
    views: list[NoteView]  # every note written, trashed ones too, as NoteService.get reports it
    seen: dict[str, list[Any]]  # property -> the values written to it (for filters near the data)

    def __repr__(self) -> str:  # hypothesis prints it with every failing example
        return f"World({self.backend}, {len(self.views)} notes)"


def _closure(types: tuple[str, ...]) -> set[str]:
    """The types and every type they extend."""
    out: set[str] = set()
    todo = [t for t in types if t in TYPES]
    while todo:
        name = todo.pop()
        if name not in out:
            out.add(name)
            todo += TYPES[name][0]
    return out


def _draw_value(rng: random.Random, key: str, targets: list[str]) -> Any:
    kind = KIND[key]
    if kind in ("select", "multi_select"):
        options = OPTIONS[key]
        return rng.choice(options) if kind == "select" else rng.sample(options, rng.randrange(len(options) + 1))
    if kind == "checkbox":
        return rng.random() < 0.5
    if kind == "relation":
        return rng.choice(targets)
    return rng.choice(POOL[kind])


def _properties(rng: random.Random, types: tuple[str, ...], targets: list[str]) -> dict[str, Any]:
    keys = [key for key in KIND if key.partition(".")[0] in _closure(types)]
    return {key: _draw_value(rng, key, targets) for key in keys
            if rng.random() < 0.75 and (KIND[key] != "relation" or targets)}


def _build(backend: str, svc: Services) -> World:
    ws = svc.workspace("Oracle")
    typed = Typed.over(svc)
    for name, (extends, props) in TYPES.items():
        typed.types.define(ws.owner, name=name, extends=list(extends), properties=[
            {"name": prop, "kind": kind, **({"options": OPTIONS[f"{name}.{prop}"]} if kind.endswith("select") else {}),
             **({"target": "Item"} if kind == "relation" else {})} for prop, kind in props.items()])
    rng = random.Random(20240601)
    ids: list[str] = []
    targets: list[str] = []  # Item notes, for relations
    for _ in range(NOTES):
        svc.clock.advance(seconds=rng.choice([0, 0, 1, 90]))  # equal created_at values tie
        note_id = svc.notes.create(ws.owner, title=rng.choice(TITLES)).id
        types = rng.choice(TYPE_SETS)
        if types:
            typed.notes.apply(ws.owner, note_id, add=list(types), properties=_properties(rng, types, targets))
        if "Item" in _closure(types):
            targets.append(note_id)
        ids.append(note_id)
    # Later writes: a note that loses a type keeps that type's values in its document
    # (no longer indexed), and cleared or rewritten values leave the index as they should.
    for i, note_id in enumerate(ids):
        view = svc.notes.get(ws.owner, note_id)
        svc.clock.advance(seconds=rng.choice([0, 1]))
        if i % 11 == 5 and view.types:
            kept = typed.notes.apply(ws.owner, note_id, remove=[view.types[-1]]).types
            if note_id in targets and "Item" not in _closure(kept):
                targets.remove(note_id)
        elif i % 7 == 2 and view.properties:
            key = rng.choice(sorted(view.properties))
            value = None if rng.random() < 0.5 else _draw_value(rng, key, targets)
            typed.notes.apply(ws.owner, note_id, properties={key: value})
        if i % 9 == 4:
            svc.notes.archive(ws.owner, note_id)
    for note_id in ids[8::13]:  # last, since a relation may not be set to a trashed note
        svc.notes.trash(ws.owner, note_id)
    views = [svc.notes.get(ws.owner, note_id) for note_id in ids]
    seen: dict[str, list[Any]] = {key: [] for key in KIND}
    for view in views:
        for key, value in view.properties.items():
            seen[key] += value if isinstance(value, list) else [value]
    limited = agent(svc, ws.id, "notes:read", note_ids=ids[::3])
    return World(backend, svc, typed, ws.id, ws.owner, limited, views, seen)


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, fast_hasher) -> Iterator[World]:
    """One workspace per backend for every generated query (building it is the slow part)."""
    cluster = request.getfixturevalue("pg_cluster") if request.param == "postgres" else None
    url = cluster.migrated_database() if cluster else sqlite_url(tmp_path_factory.mktemp("oracle") / "db.sqlite")
    store = open_store(url, pool_size=4)
    if cluster:
        cluster.note_role(store)
    try:
        yield _build(request.param, make_services(store, fast_hasher))
    finally:
        store.close()
        if cluster:
            cluster.release(url)


# ---------------------------------------------------------------------- the oracle


def _instant(kind: str, raw: str) -> datetime:
    if kind == "date":
        return datetime.fromisoformat(raw).replace(tzinfo=timezone.utc)
    return datetime.fromisoformat(raw).astimezone(timezone.utc)


def _comparable(kind: str, raw: Any) -> Any:
    """A written value (or a filter's value) in the form its kind orders by."""
    if kind in ("date", "datetime"):
        return _instant(kind, raw)
    if kind in ("number", "checkbox"):
        return float(raw)
    return raw


def _values(view: NoteView, key: str) -> list[Any]:
    """The note's values of ``key``: none unless the note is of the property's type (a
    value left behind by a removed type does not count); an unset checkbox is unchecked."""
    kind = KIND[key]
    if key.partition(".")[0] not in _closure(view.types):
        return []
    raw = view.properties.get(key)
    if kind == "checkbox":
        return [1.0 if raw else 0.0]
    if raw is None:
        return []
    return [_comparable(kind, v) for v in (raw if isinstance(raw, list) else [raw])]


def _single(view: NoteView, key: str) -> Any:
    """A sort key's value (None: empty)."""
    if key in NOTE_FIELDS:
        return getattr(view, key)
    values = _values(view, key)
    return values[0] if values else None


def _matches(view: NoteView, f: dict[str, Any]) -> bool:
    key, op = f["property"], f["op"]
    kind, have = KIND[key], _values(view, key)
    if op in ("has", "has_not"):
        return bool(have) == (op == "has")
    wanted = [_comparable(kind, v) for v in (f["value"] if isinstance(f["value"], list) else [f["value"]])]
    if op == "contains":
        return all(v in have for v in wanted)
    if op == "in":
        return any(v in have for v in wanted)
    if op == "neq":
        return wanted[0] not in have
    compare = {"eq": lambda a, b: a == b, "lt": lambda a, b: a < b, "lte": lambda a, b: a <= b,
               "gt": lambda a, b: a > b, "gte": lambda a, b: a >= b}[op]
    return any(compare(v, wanted[0]) for v in have)


def _order_keys(query: dict[str, Any]) -> list[tuple[str, bool]]:
    """(property or note field, descending), group_by first."""
    keys = [(query["group_by"], False)] if "group_by" in query else []
    return keys + [(s["property"], s.get("direction") == "desc") for s in query.get("sort", [])]


def _group(view: NoteView, key: str) -> Any:
    if KIND[key] == "checkbox":
        return _single(view, key) == 1.0
    return view.properties.get(key) if _single(view, key) is not None else None


def oracle(world: World, query: dict[str, Any], principal: Principal) -> list[NoteView]:
    queried = {name for name in TYPES if query["type"] in _closure((name,))}
    rows = [v for v in world.views
            if queried & set(v.types) and not v.trashed and (query.get("include_archived") or not v.archived)
            and (principal.note_ids is None or v.id in principal.note_ids)
            and all(_matches(v, f) for f in query.get("filters", []))]
    keys = _order_keys(query)
    rows.sort(key=lambda v: v.id, reverse=bool(keys) and keys[0][1])
    for key, descending in reversed(keys):  # stable sorts, last key first
        present = sorted((v for v in rows if _single(v, key) is not None), key=lambda v: _single(v, key),
                         reverse=descending)
        rows = present + [v for v in rows if _single(v, key) is None]  # empties last either way
    return rows


# ---------------------------------------------------------------------- generated queries


def _near(world: World, key: str) -> list[Any]:
    """Filter values for ``key``: the ones in the data and their neighbours."""
    kind, seen = KIND[key], world.seen[key]
    if kind in ("select", "multi_select"):
        return OPTIONS[key]
    if kind == "checkbox":
        return [True, False]
    if kind == "number":
        return sorted({x + d for x in [*POOL["number"], *seen] for d in (-0.25, 0, 0.25)})
    if kind == "date":
        days = {date.fromisoformat(x) + timedelta(days=d) for x in [*POOL["date"], *seen] for d in (-1, 0, 1)}
        return sorted(day.isoformat() for day in days)
    if kind == "datetime":
        instants = {_instant(kind, x) + timedelta(seconds=d) for x in [*POOL["datetime"], *seen] for d in (-1, 0, 1)}
        offsets = (timezone.utc, timezone(timedelta(hours=2)))
        return sorted(i.astimezone(tz).isoformat() for i in instants for tz in offsets)
    if kind == "relation":
        return sorted({*seen, *(v.id for v in world.views[:5])})
    return sorted({*POOL["text"], *seen, "alph", "b", "zz"})


def _filters(world: World, key: str) -> st.SearchStrategy[dict[str, Any]]:
    kind = KIND[key]
    one = st.sampled_from(_near(world, key))
    some = st.lists(one, min_size=1, max_size=3, unique=True)
    choices = [st.fixed_dictionaries({"op": st.sampled_from(["has", "has_not"])})] if kind != "checkbox" else []
    if kind == "multi_select":
        choices += [st.fixed_dictionaries({"op": st.just("contains"), "value": one | some}),
                    st.fixed_dictionaries({"op": st.just("in"), "value": some})]
    else:
        choices.append(st.fixed_dictionaries({"op": st.sampled_from(["eq", "neq"]), "value": one}))
    if kind in ("number", "date", "datetime"):
        choices.append(st.fixed_dictionaries({"op": st.sampled_from(["lt", "lte", "gt", "gte"]), "value": one}))
    if kind in ("number", "text", "select", "relation"):
        choices.append(st.fixed_dictionaries({"op": st.just("in"), "value": some}))
    return st.one_of(choices).map(lambda f: {"property": key, **f})


def queries(world: World) -> st.SearchStrategy[dict[str, Any]]:
    a_filter = st.sampled_from(sorted(KIND)).flatmap(lambda key: _filters(world, key))
    a_sort = st.builds(lambda key, way: {"property": key, **({"direction": way} if way else {})},
                       st.sampled_from([*SORTABLE, *NOTE_FIELDS]), st.sampled_from([None, "asc", "desc"]))
    return st.fixed_dictionaries({
        "type": st.sampled_from(sorted(TYPES)),
        "filters": st.lists(a_filter, max_size=3),
        "sort": st.lists(a_sort, max_size=2),
    }, optional={"group_by": st.sampled_from(SORTABLE), "include_archived": st.booleans()})


# ---------------------------------------------------------------------- paging


def _service_rows(world: World, query: dict[str, Any], principal: Principal, limit: int) -> list[tuple[str, Any]]:
    """Every page through KnowledgeQueryService, following next_cursor: (id, group) per row."""
    rows: list[tuple[str, Any]] = []
    cursor = None
    for _ in range(NOTES + 1):  # a cursor that does not move on fails here rather than spinning
        page = world.typed.queries.query(principal, {**query, "limit": limit,
                                                     **({"cursor": cursor} if cursor else {})})
        rows += [(row.id, row.group if "group_by" in query else None) for row in page.items]
        cursor = page.next_cursor
        if cursor is None:
            return rows
        assert len(page.items) == limit, "only the last page may be short"
    pytest.fail(f"more pages than notes: {rows}")


def _store_rows(world: World, query: dict[str, Any], principal: Principal, limit: int,
                strategy: str) -> list[tuple[str, tuple[Any, ...]]]:
    """Every page of ``run_query`` with ``strategy`` forced, resuming after each page's
    last row: (id, sort key values) per row."""
    rows: list[tuple[str, tuple[Any, ...]]] = []
    with world.svc.store.read(world.workspace_id) as tx:
        parsed = parse_definition(query, load_schema(tx))
        after = None
        for _ in range(NOTES + 1):
            page = tx.typed.query(RowQuery(parsed.type_names, parsed.filters, parsed.keys, after,
                                           note_ids=principal.note_ids, include_archived=parsed.include_archived,
                                           limit=limit, types_on_every_note=parsed.types_on_every_note),
                                  strategy=strategy)
            # An index some queried notes have no row in is never walked: those pages are sorted.
            assert page.strategy == ("candidates" if _first_key_missing_on_some_notes(query) else strategy)
            rows += [(hit.note.id, hit.keys) for hit in page.hits]
            if len(page.hits) < limit:
                return rows
            after = (page.hits[-1].keys, page.hits[-1].note.id)
    pytest.fail(f"more pages than notes: {rows}")


def _first_key_missing_on_some_notes(query: dict[str, Any]) -> bool:
    """The first key is a property some notes of the queried type have no index rows for (a
    subtype's, or an unrelated type's): walking its index would lose those notes."""
    keys = _order_keys(query)
    return bool(keys) and keys[0][0] not in NOTE_FIELDS and (
        keys[0][0].partition(".")[0] not in _closure((query["type"],)))


def check(world: World, query: dict[str, Any], principal: Principal, limit: int, way: str) -> None:
    expected = oracle(world, query, principal)
    if way in ("walk", "candidates"):
        keys = [key for key, _ in _order_keys(query)]
        want: list[Any] = [(v.id, tuple(_single(v, key) for key in keys)) for v in expected]
        got: list[Any] = _store_rows(world, query, principal, limit, way)
    else:
        want = [(v.id, _group(v, query["group_by"]) if "group_by" in query else None) for v in expected]
        with pytest.MonkeyPatch.context() as patch:
            if way == "auto-tiny-probe":  # the real choice logic, scaled down to a workspace of 100 notes
                patch.setattr(typed_query, "PROBE", 2)
                patch.setattr(typed_query, "INTERSECT_FROM", 1)
            got = _service_rows(world, query, principal, limit)
    assert got == want


# ---------------------------------------------------------------------- tests


@pytest.mark.parametrize("way", ["auto", "auto-tiny-probe", "walk", "candidates"])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), limit=st.integers(1, MAX_LIMIT), limited=st.booleans())
def test_every_page_adds_up_to_the_oracle(world, way, data, limit, limited):
    query = data.draw(queries(world), label="query")
    check(world, query, world.limited if limited else world.owner, limit, way)


def test_the_workspace_has_what_the_queries_need(world):
    """The generated queries are only as good as the data: ties, empties, every state."""
    views = world.views
    assert sum(v.trashed for v in views) >= 5 and sum(v.archived and not v.trashed for v in views) >= 5
    assert any(set(v.types) == {"Item", "Other"} for v in views) and any(v.types == ("SubItem",) for v in views)
    untyped_leftovers = [v for v in views if any(k.partition(".")[0] not in _closure(v.types) for k in v.properties)]
    assert untyped_leftovers, "some notes keep values of a type they lost"
    items = [v for v in views if "Item" in _closure(v.types)]
    for key in ("Item.n", "Item.t", "Item.w"):
        values = [_single(v, key) for v in items]
        present = [x for x in values if x is not None]
        assert None in values and len(set(present)) < len(present), f"{key} has empties and ties"
    assert len({v.created_at for v in views}) < len(views), "some notes share created_at"


def test_notes_without_a_row_for_the_first_key_are_not_lost(svc, store, ws):
    """A note has index rows only for its own types' properties. Sorted by a subtype's
    property, the plain notes have none: a walk of that index would drop them, so the
    query sorts candidates instead, even when a walk is asked for."""
    typed = Typed.over(svc)
    typed.types.define(ws.owner, name="Item")
    typed.types.define(ws.owner, name="SubItem", extends=["Item"], properties=[{"name": "extra", "kind": "text"}])
    plain = svc.notes.create(ws.owner, title="plain").id
    typed.notes.apply(ws.owner, plain, add=["Item"])
    sub = svc.notes.create(ws.owner, title="sub").id
    typed.notes.apply(ws.owner, sub, add=["SubItem"], properties={"SubItem.extra": "x"})
    with store.read(ws.id) as tx:
        parsed = parse_definition({"type": "Item", "sort": [{"property": "SubItem.extra"}]}, load_schema(tx))
        page = tx.typed.query(RowQuery(parsed.type_names, parsed.filters, parsed.keys, limit=10,
                                       types_on_every_note=parsed.types_on_every_note), strategy="walk")
    assert [hit.note.id for hit in page.hits] == [sub, plain] and page.strategy == "candidates"
