"""The structured query on both backends, held to a plain-Python reference model.

A small workspace with every kind of value (some empty, some archived or
trashed notes, a subtype, an unrelated type) is queried with filters, sorts,
grouping and keyset pages of several sizes. The service's pages must equal the
reference, and the store's two ways of reaching rows — walking the first key's
index, or sorting a small candidate set — must return the very same pages.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from fastpad.errors import InsufficientScope, ValidationFailed
from fastpad.knowledge.property_index import load_schema
from fastpad.knowledge.query import parse_definition
from fastpad.store import typed_query
from fastpad.store.typed_query import RowQuery
from tests.services.typed_helpers import Typed, agent

KINDS = {"n": "number", "d": "date", "t": "datetime", "s": "select", "m": "multi_select", "c": "checkbox",
         "w": "text", "r": "relation"}
OPTIONS = {"s": ["a", "b", "c"], "m": ["x", "y", "z"]}


@pytest.fixture
def typed(svc) -> Typed:
    return Typed.over(svc)


@pytest.fixture
def world(svc, ws, typed):
    """~40 notes of Item / SubItem / Other with random values; returns their final views."""
    typed.types.define(ws.owner, name="Item", properties=[
        {"name": name, "kind": kind, **({"options": OPTIONS[name]} if name in OPTIONS else {}),
         **({"target": "Item"} if kind == "relation" else {})} for name, kind in KINDS.items()])
    typed.types.define(ws.owner, name="SubItem", extends=["Item"], properties=[{"name": "extra", "kind": "text"}])
    typed.types.define(ws.owner, name="Other", properties=[{"name": "n", "kind": "number"}])
    rng = random.Random(4)
    ids: list[str] = []
    items: list[str] = []  # relation targets: Items not in the trash
    for i in range(40):
        svc.clock.advance(seconds=rng.choice([0, 1, 60]))
        note_id = svc.notes.create(ws.owner, title=f"note{rng.randrange(25):02d}").id
        kind = "Other" if i % 9 == 4 else ("SubItem" if i % 5 == 0 else "Item")
        props: dict[str, Any] = {}
        if kind == "Other":
            props["Other.n"] = rng.randrange(10)
        else:
            def maybe(key: str, value: Any) -> None:
                if rng.random() < 0.8:
                    props[f"Item.{key}"] = value
            maybe("n", rng.choice([rng.randrange(10), rng.randrange(10) + 0.5]))
            maybe("d", f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}")
            maybe("t", f"2024-06-01T{rng.randrange(24):02d}:{rng.choice(['00', '30'])}:00"
                       f"{rng.choice(['+00:00', '+02:00', '-05:00'])}")
            maybe("s", rng.choice(OPTIONS["s"]))
            maybe("m", rng.sample(OPTIONS["m"], rng.randrange(0, 3)))
            maybe("c", rng.random() < 0.5)
            maybe("w", rng.choice(["Alpha", "alpha", "beta", "Beta", "ünïcode", "zeta", "a b"]))
            if items:
                maybe("r", rng.choice(items))
        typed.notes.apply(ws.owner, note_id, add=[kind], properties=props)
        ids.append(note_id)
        if kind != "Other" and i % 13 != 7:
            items.append(note_id)
        if i % 11 == 3:
            svc.notes.archive(ws.owner, note_id)
        if i % 13 == 7:
            svc.notes.trash(ws.owner, note_id)
    return [svc.notes.get(ws.owner, note_id) for note_id in ids]


QUERIES: list[dict[str, Any]] = [
    {"type": "Item"},
    {"type": "Item", "sort": [{"property": "Item.n", "direction": "desc"}]},
    {"type": "Item", "sort": [{"property": "Item.d"}], "filters": [{"property": "Item.s", "op": "in", "value": ["a", "b"]}]},
    {"type": "Item", "sort": [{"property": "Item.t", "direction": "desc"}, {"property": "title"}],
     "filters": [{"property": "Item.m", "op": "contains", "value": "x"}]},
    {"type": "Item", "group_by": "Item.s", "sort": [{"property": "Item.n"}]},
    {"type": "Item", "group_by": "Item.c", "sort": [{"property": "Item.w", "direction": "desc"}]},
    {"type": "Item", "sort": [{"property": "title", "direction": "desc"}],
     "filters": [{"property": "Item.c", "op": "eq", "value": False}]},
    {"type": "Item", "sort": [{"property": "Item.w"}],
     "filters": [{"property": "Item.n", "op": "gte", "value": 3}, {"property": "Item.n", "op": "lt", "value": 8}]},
    {"type": "Item", "filters": [{"property": "Item.d", "op": "has_not"}], "sort": [{"property": "updated_at", "direction": "desc"}]},
    {"type": "Item", "filters": [{"property": "Item.s", "op": "neq", "value": "a"}],
     "sort": [{"property": "Item.s"}, {"property": "Item.n", "direction": "desc"}]},
    {"type": "SubItem", "sort": [{"property": "Item.n"}]},
    {"type": "Item", "include_archived": True, "sort": [{"property": "created_at"}]},
    {"type": "Item", "filters": [{"property": "Item.t", "op": "gte", "value": "2024-06-01T12:00:00+02:00"}],
     "sort": [{"property": "Item.t"}]},
    {"type": "Item", "filters": [{"property": "Item.m", "op": "contains", "value": ["x", "y"]}]},
    {"type": "Item", "filters": [{"property": "Item.m", "op": "in", "value": ["z"]}, {"property": "Item.r", "op": "has"}],
     "sort": [{"property": "Item.c", "direction": "desc"}]},
    {"type": "Item", "filters": [{"property": "Item.d", "op": "lte", "value": "2024-06-15"},
                                 {"property": "Item.w", "op": "eq", "value": "alpha"}]},
]


# ---------------------------------------------------------------------- the reference model


def _instant(kind: str, value: str) -> datetime:
    if kind == "date":
        return datetime.fromisoformat(value).replace(tzinfo=timezone.utc)
    return datetime.fromisoformat(value).astimezone(timezone.utc)


def _value(view, key: str) -> Any:
    """A property as the index sees it: None when empty; checkboxes never empty."""
    name = key.split(".")[1]
    kind = KINDS.get(name, "text")
    raw = view.properties.get(key)
    if kind == "checkbox":
        return 1.0 if raw else 0.0
    if raw is None or raw == []:
        return None
    if kind in ("date", "datetime"):
        return _instant(kind, raw)
    return float(raw) if kind == "number" else raw


def _matches(view, f: dict[str, Any]) -> bool:
    key, op, value = f["property"], f["op"], f.get("value")
    kind = KINDS[key.split(".")[1]]
    have = view.properties.get(key)
    values = (have or []) if kind == "multi_select" else ([] if _value(view, key) is None else [_value(view, key)])
    if kind in ("date", "datetime") and op not in ("has", "has_not"):
        value = _instant(kind, value)
    if op == "has":
        return bool(values)
    if op == "has_not":
        return not values
    if op == "contains":
        return all(v in values for v in (value if isinstance(value, list) else [value]))
    if op == "in":
        return any(v in values for v in value)
    if op == "neq":
        return value not in values
    compare = {"eq": lambda a: a == value, "lt": lambda a: a < value, "lte": lambda a: a <= value,
               "gt": lambda a: a > value, "gte": lambda a: a >= value}[op]
    if kind == "checkbox":
        return compare(bool(values[0]))
    return any(compare(v) for v in values)


def reference(views, query: dict[str, Any]) -> list[str]:
    members = {"Item": {"Item", "SubItem"}, "SubItem": {"SubItem"}}[query["type"]]
    rows = [v for v in views if members & set(v.types) and not v.trashed
            and (query.get("include_archived") or not v.archived)
            and all(_matches(v, f) for f in query.get("filters", []))]
    keys = ([{"property": query["group_by"]}] if "group_by" in query else []) + query.get("sort", [])
    first_desc = bool(keys) and keys[0].get("direction") == "desc"
    rows.sort(key=lambda v: v.id, reverse=first_desc)
    for key in reversed(keys):  # stable sorts, last key first
        name, desc = key["property"], key.get("direction") == "desc"
        if name in ("title", "created_at", "updated_at"):
            rows.sort(key=lambda v: getattr(v, name), reverse=desc)
        else:
            present = sorted((v for v in rows if _value(v, name) is not None), key=lambda v: _value(v, name),
                             reverse=desc)
            rows = present + [v for v in rows if _value(v, name) is None]  # empties last, either way
    return [v.id for v in rows]


# ---------------------------------------------------------------------- tests


@pytest.mark.parametrize("limit", [3, 50])
def test_pages_follow_the_reference_order(ws, typed, world, limit):
    for query in QUERIES:
        pages = typed.all_pages(ws.owner, query, limit=limit)
        got = [row.id for page in pages for row in page.items]
        assert got == reference(world, query), query
        assert all(len(p.items) == limit for p in pages[:-1]) and pages[-1].next_cursor is None


def test_walking_an_index_and_sorting_candidates_give_the_same_pages(store, ws, world):
    with store.read(ws.id) as tx:
        schema = load_schema(tx)
        for query in QUERIES:
            parsed = parse_definition(query, schema)
            seen: dict[str, list[str]] = {}
            for strategy in ("walk", "candidates"):
                after, ids = None, []
                while True:
                    page = tx.typed.query(RowQuery(parsed.type_names, parsed.filters, parsed.keys, after,
                                                   include_archived=parsed.include_archived, limit=4,
                                                   types_on_every_note=parsed.types_on_every_note),
                                          strategy=strategy)
                    assert page.strategy == strategy
                    ids += [hit.note.id for hit in page.hits]
                    if len(page.hits) < 4:
                        break
                    after = (page.hits[-1].keys, page.hits[-1].note.id)
                seen[strategy] = ids
            assert seen["walk"] == seen["candidates"] == reference(world, query), query


def test_every_path_of_the_choice_gives_the_reference_pages(ws, typed, world, monkeypatch):
    """With a tiny probe and intersection threshold the 40-note workspace takes every
    branch of the store's choice (probe walks, give-ups, intersected candidate sets)."""
    monkeypatch.setattr(typed_query, "PROBE", 2)
    monkeypatch.setattr(typed_query, "INTERSECT_FROM", 1)
    for query in QUERIES:
        for limit in (1, 2):
            got = [row.id for page in typed.all_pages(ws.owner, query, limit=limit) for row in page.items]
            assert got == reference(world, query), (query, limit)


def test_rows_carry_properties_and_their_group(ws, typed, world):
    page = typed.queries.query(ws.owner, {"type": "Item", "group_by": "Item.s", "limit": 200})
    out = page.as_dict()
    assert out["group_by"] == "Item.s"
    for item in out["items"]:
        assert item["group"] == item["properties"].get("Item.s")
        assert set(item) >= {"id", "title", "types", "properties", "archived", "created_at", "updated_at"}
    assert "blocks" not in out["items"][0], "rows never carry bodies"


def test_results_respect_the_note_set_and_scopes(svc, ws, typed, world):
    visible = [v.id for v in world[:10]]
    limited = agent(svc, ws.id, "notes:read", note_ids=visible)
    expected = [i for i in reference(world, {"type": "Item"}) if i in visible]
    assert [r.id for p in typed.all_pages(limited, {"type": "Item"}, 2) for r in p.items] == expected
    nobody = agent(svc, ws.id, "search:read")
    with pytest.raises(InsufficientScope):
        typed.queries.query(nobody, {"type": "Item"})


def test_a_cursor_belongs_to_its_query(ws, typed, world):
    first = typed.queries.query(ws.owner, {"type": "Item", "limit": 2})
    assert first.next_cursor
    for bad in ({"type": "Item", "sort": [{"property": "title"}], "cursor": first.next_cursor},
                {"type": "Item", "cursor": "q1.bm90IGpzb24"}, {"type": "Item", "cursor": 7}):
        with pytest.raises(ValidationFailed) as exc:
            typed.queries.query(ws.owner, bad)
        assert [fe.field for fe in exc.value.field_errors] == ["cursor"]


def test_a_bad_query_names_every_bad_part(ws, typed, world):
    with pytest.raises(ValidationFailed) as exc:
        typed.queries.query(ws.owner, {
            "type": "Item",
            "filters": [{"property": "Item.nope", "op": "eq", "value": 1},
                        {"property": "Item.m", "op": "lt", "value": "x"},
                        {"property": "Item.n", "op": "gt", "value": "three"},
                        {"property": "Item.d", "op": "has", "value": "2024-01-01"},
                        {"property": "Item.c", "op": "has_not"}],
            "sort": [{"property": "Item.m"}, {"property": "Item.n", "direction": "up"}],
            "group_by": "Item.m", "limit": 0, "colour": "red",
        })
    assert [fe.field for fe in exc.value.field_errors] == ["colour"]  # unknown fields first, on their own
    with pytest.raises(ValidationFailed) as exc:
        typed.queries.query(ws.owner, {
            "type": "Item",
            "filters": [{"property": "Item.nope", "op": "eq", "value": 1},
                        {"property": "Item.m", "op": "lt", "value": "x"},
                        {"property": "Item.n", "op": "gt", "value": "three"},
                        {"property": "Item.d", "op": "has", "value": "2024-01-01"},
                        {"property": "Item.c", "op": "has_not"}],
            "sort": [{"property": "Item.m"}, {"property": "Item.n", "direction": "up"}],
            "group_by": "Item.m",
        })
    assert {fe.field: fe.code for fe in exc.value.field_errors} == {
        "filters[0].property": "unknown_property", "filters[1].op": "op", "filters[2].value": "type",
        "filters[3].value": "not_allowed", "filters[4].op": "op", "group_by": "not_groupable",
        "sort[0].property": "not_sortable", "sort[1].direction": "direction",
    }
    with pytest.raises(ValidationFailed) as exc:
        typed.queries.query(ws.owner, {"type": "Item", "limit": 0})
    assert [fe.field for fe in exc.value.field_errors] == ["limit"]


def test_values_reach_the_database_only_as_parameters(svc, ws, typed):
    typed.types.define(ws.owner, name="Doc", properties=[{"name": "code", "kind": "text"}])
    hostile = "x' OR '1'='1'; DROP TABLE notes; --"
    for value in (hostile, "plain"):
        note = svc.notes.create(ws.owner, title=value[:5]).id
        typed.notes.apply(ws.owner, note, add=["Doc"], properties={"Doc.code": value})
    query = {"type": "Doc", "filters": [{"property": "Doc.code", "op": "eq", "value": hostile}]}
    assert [r.properties["Doc.code"] for r in typed.queries.query(ws.owner, query).items] == [hostile]
    assert len(typed.queries.query(ws.owner, {"type": "Doc"}).items) == 2


def test_many_rows_page_through_both_segments(svc, ws, typed):
    """A sort whose first key is empty for some notes: the walk crosses from values to empties."""
    typed.types.define(ws.owner, name="Task", properties=[{"name": "due", "kind": "datetime"}])
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    items = []
    for i in range(23):
        note = svc.notes.create(ws.owner, title=f"t{i:02d}").id
        props = {} if i % 4 == 0 else {"Task.due": (start + timedelta(hours=i % 7)).isoformat()}
        typed.notes.apply(ws.owner, note, add=["Task"], properties=props)
        items.append((props.get("Task.due"), note))
    valued = sorted((due, note) for due, note in items if due is not None)
    expected = [n for _, n in sorted(valued, key=lambda p: (p[0], p[1]), reverse=True)]
    expected += sorted((n for due, n in items if due is None), reverse=True)
    query = {"type": "Task", "sort": [{"property": "Task.due", "direction": "desc"}]}
    for limit in (1, 4, 5, 23, 24):
        assert [r.id for p in typed.all_pages(ws.owner, query, limit) for r in p.items] == expected


def test_a_walk_that_meets_correlated_data_hands_the_page_to_candidates(svc, store, ws, typed, monkeypatch):
    """Open jobs are rare among the oldest: walking due dates from the oldest, the probe
    sees a good hit rate, the longer walk then finds nothing more within its budget, and
    the page is taken by candidates — with the same rows a full walk returns."""
    monkeypatch.setattr(typed_query, "PROBE", 4)  # the same logic, on a workspace of 80 notes
    typed.types.define(ws.owner, name="Job", properties=[{"name": "due", "kind": "date"},
                                                        {"name": "open", "kind": "checkbox"}])
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    jobs = [svc.notes.create(ws.owner, title=f"j{i:03d}").id for i in range(80)]
    typed.notes.apply_many(ws.owner, [
        {"note_id": n, "add": ["Job"], "properties": {"Job.due": (start + timedelta(days=i)).date().isoformat(),
                                                      "Job.open": i in (0, 6) or i >= 60}}
        for i, n in enumerate(jobs)])
    query = {"type": "Job", "filters": [{"property": "Job.open", "op": "eq", "value": True}],
             "sort": [{"property": "Job.due"}]}

    def page(strategy=None):
        with store.read(ws.id) as tx:
            parsed = parse_definition(query, load_schema(tx))
            return tx.typed.query(RowQuery(parsed.type_names, parsed.filters, parsed.keys, limit=3,
                                           types_on_every_note=parsed.types_on_every_note), strategy=strategy)

    chosen, walked = page(), page("walk")
    assert (chosen.strategy, walked.strategy) == ("candidates", "walk")
    assert [h.note.id for h in chosen.hits] == [h.note.id for h in walked.hits] == [jobs[0], jobs[6], jobs[60]]
    # Over uncorrelated data the probe settles the page itself.
    typed.notes.apply_many(ws.owner, [{"note_id": n, "properties": {"Job.open": i % 2 == 0}}
                                      for i, n in enumerate(jobs)])
    settled = page()
    assert settled.strategy == "walk" and [h.note.id for h in settled.hits] == jobs[0:6:2]


def test_titles_sort_by_code_point_on_both_backends(svc, store, ws, typed):
    """Both backends page titles in one order: PostgreSQL's notes.title collates as "C"
    (version 13) whatever the server's locale, as SQLite's BINARY does."""
    typed.types.define(ws.owner, name="Card")
    titles = ["apple", "Banana", "banana", "Zebra", "Äpfel", "_draft", "10 things", "2 things"]
    for title in titles:
        typed.notes.apply(ws.owner, svc.notes.create(ws.owner, title=title).id, add=["Card"])
    assert typed.titles(ws.owner, {"type": "Card", "sort": [{"property": "title"}]}, limit=3) == sorted(titles)
    if store.backend == "postgres":
        with store.read(ws.id) as tx:
            collation = tx._x(  # noqa: SLF001 - the catalog is what is under test
                "SELECT collation_name FROM information_schema.columns"
                " WHERE table_name = 'notes' AND column_name = 'title'").fetchone()[0]
        assert collation == "C"
