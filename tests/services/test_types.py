"""Types and typed properties on both backends: definitions, inheritance, namespacing,
validation, the one write path (document, frontmatter, index) and bulk application."""

from __future__ import annotations

import pytest

from fastpad.errors import Conflict, InsufficientScope, NotFound, OutOfScope, ValidationFailed
from fastpad.notes import NoteMeta, new_id, parse_markdown
from tests.helpers_store import edit_ops
from tests.services.typed_helpers import Typed, agent


@pytest.fixture
def typed(svc) -> Typed:
    return Typed.over(svc)


def _errors(exc: pytest.ExceptionInfo) -> dict[str, str]:
    return {fe.field: fe.code for fe in exc.value.field_errors}


def _books(typed: Typed, ws) -> None:
    typed.types.define(ws.owner, name="MediaObject",
                       properties=[{"name": "format", "kind": "select", "options": ["print", "audio"]}])
    typed.types.define(ws.owner, name="Book", properties=[{"name": "pages", "kind": "number"}])
    typed.types.define(ws.owner, name="Audiobook", extends=["Book", "MediaObject"],
                       properties=[{"name": "narrator", "kind": "text"}])


def test_properties_are_namespaced_by_type(svc, ws, typed):
    for name in ("Person", "Contact"):
        typed.types.define(ws.owner, name=name, properties=[{"name": "email", "kind": "text"}])
    note = svc.notes.create(ws.owner, title="Ada")
    result = typed.notes.apply(ws.owner, note.id, add=["Person", "Contact"],
                               properties={"Person.email": "ada@home.example", "Contact.email": "ada@work.example"})
    assert result.properties == {"Person.email": "ada@home.example", "Contact.email": "ada@work.example"}
    assert svc.notes.get(ws.owner, note.id).properties == result.properties

    def found(type_name: str, email: str) -> list[str]:
        query = {"type": type_name, "filters": [{"property": f"{type_name}.email", "op": "eq", "value": email}]}
        return typed.titles(ws.owner, query)

    assert found("Person", "ada@home.example") == ["Ada"]
    assert found("Contact", "ada@home.example") == []
    assert found("Contact", "ada@work.example") == ["Ada"]
    with pytest.raises(ValidationFailed) as exc:  # there is no un-namespaced "email"
        typed.notes.apply(ws.owner, note.id, properties={"email": "x"})
    assert _errors(exc) == {"properties.email": "unknown_property"}


def test_a_query_for_a_type_includes_the_types_that_extend_it(svc, ws, typed):
    _books(typed, ws)
    made = {}
    for title, types, props in [
        ("Paper book", ["Book"], {"Book.pages": 300}),
        ("Audio book", ["Audiobook"], {"Book.pages": 500, "MediaObject.format": "audio", "Audiobook.narrator": "N"}),
        ("Podcast", ["MediaObject"], {"MediaObject.format": "audio"}),
    ]:
        made[title] = svc.notes.create(ws.owner, title=title).id
        typed.notes.apply(ws.owner, made[title], add=types, properties=props)
    by_title = {"sort": [{"property": "title"}]}
    assert typed.titles(ws.owner, {"type": "Book", **by_title}) == ["Audio book", "Paper book"]
    assert typed.titles(ws.owner, {"type": "MediaObject", **by_title}) == ["Audio book", "Podcast"]
    assert typed.titles(ws.owner, {"type": "Audiobook"}) == ["Audio book"]
    # An inherited property is carried under its owner's name, and filters like any other.
    pages = {"type": "Book", "filters": [{"property": "Book.pages", "op": "gt", "value": 400}]}
    assert typed.titles(ws.owner, pages) == ["Audio book"]
    view = typed.types.get(ws.owner, "Audiobook").as_dict()
    assert [p["key"] for p in view["available_properties"]] == ["Audiobook.narrator", "Book.pages", "MediaObject.format"]


def test_extends_must_name_defined_types_without_cycles(ws, typed):
    typed.types.define(ws.owner, name="A")
    typed.types.define(ws.owner, name="B", extends=["A"])
    with pytest.raises(ValidationFailed) as exc:
        typed.types.update(ws.owner, "A", extends=["B"])
    assert _errors(exc) == {"extends": "cycle"}
    with pytest.raises(ValidationFailed) as exc:
        typed.types.define(ws.owner, name="C", extends=["Nope"])
    assert _errors(exc) == {"extends[0]": "unknown_type"}
    with pytest.raises(ValidationFailed) as exc:
        typed.types.define(ws.owner, name="Bad.Name")
    assert _errors(exc) == {"name": "name"}
    with pytest.raises(Conflict):
        typed.types.define(ws.owner, name="A")


def test_definitions_are_checked_field_by_field(ws, typed):
    with pytest.raises(ValidationFailed) as exc:
        typed.types.define(ws.owner, name="T", properties=[
            {"name": "a", "kind": "colour"},
            {"name": "b", "kind": "select"},
            {"name": "c", "kind": "relation", "target": "Nowhere"},
            {"name": "c", "kind": "text", "options": ["x"]},
        ])
    assert _errors(exc) == {
        "properties[0].kind": "kind", "properties[1].options": "options", "properties[2].target": "unknown_type",
        "properties[3].name": "duplicate", "properties[3].options": "not_allowed",
    }
    # A relation may point at its own type.
    typed.types.define(ws.owner, name="Person", properties=[{"name": "manager", "kind": "relation", "target": "Person"}])


def test_a_propertys_kind_cannot_change(ws, typed):
    typed.types.define(ws.owner, name="Task", properties=[{"name": "due", "kind": "date"}])
    with pytest.raises(ValidationFailed) as exc:
        typed.types.update(ws.owner, "Task", properties=[{"name": "due", "kind": "datetime"}])
    assert _errors(exc) == {"properties[0].kind": "kind_immutable"}
    with pytest.raises(Conflict):
        typed.types.update(ws.owner, "Task", properties=[], expected_version=7)


def test_defining_types_needs_schema_write_but_agents_set_properties_directly(svc, ws, typed):
    writer = agent(svc, ws.id, "notes:read", "notes:write")
    with pytest.raises(InsufficientScope):
        typed.types.define(writer, name="Person")
    typed.types.define(ws.owner, name="Person", properties=[{"name": "email", "kind": "text"}])
    note = svc.notes.create(ws.owner, title="Ada")
    # No auto-apply grant needed: types and properties are not prose.
    result = typed.notes.apply(writer, note.id, add=["Person"], properties={"Person.email": "a@b.example"})
    assert result.types == ("Person",)
    reader = agent(svc, ws.id, "notes:read")
    with pytest.raises(InsufficientScope):
        typed.notes.apply(reader, note.id, properties={"Person.email": "c@d.example"})
    # Types are every note's: a credential limited to some notes cannot define or change them.
    scoped = agent(svc, ws.id, "notes:read", "schema:write", note_ids=[note.id])
    with pytest.raises(OutOfScope):
        typed.types.define(scoped, name="Widened")
    with pytest.raises(OutOfScope):
        typed.types.update(scoped, "Person", properties=[])


KIND_CASES = [
    ("text", "x" * 501, "max_length"), ("text", 5, "type"),
    ("number", "12", "type"), ("number", True, "type"), ("number", float("inf"), "not_finite"),
    ("url", "ftp://example.com/a", "url"), ("url", "not a url", "url"),
    ("date", "2025-02-30", "date"), ("date", "2025-01-14T09:00:00+00:00", "date"),
    ("datetime", "2025-01-14T09:00:00", "datetime"), ("datetime", "2025-01-14", "datetime"),
    ("checkbox", "yes", "type"),
    ("select", "maybe", "option"), ("multi_select", ["red", "red"], "duplicate_option"),
    ("multi_select", "red", "type"), ("multi_select", ["red", "plaid"], "option"),
    ("person", "not-a-ulid", "ulid"), ("person", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "member"),
    ("relation", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "note"), ("file", "", "required"),
]


def test_each_kind_refuses_what_it_does_not_hold_and_nothing_is_written(svc, ws, typed):
    typed.types.define(ws.owner, name="Target")
    typed.types.define(ws.owner, name="Thing", properties=[
        {"name": kind, "kind": kind, **({"options": ["red", "blue"]} if "select" in kind else {}),
         **({"target": "Target"} if kind == "relation" else {})}
        for kind in dict.fromkeys(k for k, _, _ in KIND_CASES)
    ])
    note = svc.notes.create(ws.owner, title="thing")
    typed.notes.apply(ws.owner, note.id, add=["Thing"])
    before = svc.notes.get(ws.owner, note.id)
    for kind, value, code in KIND_CASES:
        fine = {"Thing.checkbox": True} if kind != "checkbox" else {"Thing.number": 1}  # refused with the bad one
        with pytest.raises(ValidationFailed) as exc:
            typed.notes.apply(ws.owner, note.id, properties={f"Thing.{kind}": value, **fine})
        assert _errors(exc) == {f"properties.Thing.{kind}": code}, (kind, value)
    after = svc.notes.get(ws.owner, note.id)
    assert (after.frontier, after.properties) == (before.frontier, before.properties)


def test_references_are_checked_against_the_workspace(svc, ws, typed):
    typed.types.define(ws.owner, name="Person")
    typed.types.define(ws.owner, name="Employee", extends=["Person"])
    typed.types.define(ws.owner, name="Project", properties=[
        {"name": "lead", "kind": "relation", "target": "Person"}, {"name": "owner", "kind": "person"}])
    project = svc.notes.create(ws.owner, title="Apollo").id
    typed.notes.apply(ws.owner, project, add=["Project"])
    untyped = svc.notes.create(ws.owner, title="Just a note").id
    employee = svc.notes.create(ws.owner, title="Grace").id
    typed.notes.apply(ws.owner, employee, add=["Employee"])

    with pytest.raises(ValidationFailed) as exc:
        typed.notes.apply(ws.owner, project, properties={"Project.lead": untyped})
    assert _errors(exc) == {"properties.Project.lead": "target_type"}
    # An Employee is a Person: the relation's target type counts inheritance.
    typed.notes.apply(ws.owner, project, properties={"Project.lead": employee, "Project.owner": ws.owner_id})
    query = {"type": "Project", "filters": [{"property": "Project.lead", "op": "eq", "value": employee}]}
    assert typed.titles(ws.owner, query) == ["Apollo"]
    # A note outside the caller's note set is out of scope, whether or not such a note exists.
    limited = agent(svc, ws.id, "notes:read", "notes:write", note_ids=[project])
    for outside in (employee, new_id()):
        with pytest.raises(ValidationFailed) as exc:
            typed.notes.apply(limited, project, properties={"Project.lead": outside})
        assert _errors(exc) == {"properties.Project.lead": "out_of_scope"}
    svc.notes.trash(ws.owner, employee)
    with pytest.raises(ValidationFailed):
        typed.notes.apply(ws.owner, project, properties={"Project.lead": employee})


def test_types_and_properties_round_trip_through_frontmatter(svc, ws, typed):
    typed.types.define(ws.owner, name="Person", properties=[
        {"name": "email", "kind": "text"}, {"name": "born", "kind": "date"}, {"name": "met", "kind": "datetime"},
        {"name": "tags", "kind": "multi_select", "options": ["friend", "colleague"]},
        {"name": "vip", "kind": "checkbox"}, {"name": "height", "kind": "number"}])
    note = svc.notes.create(ws.owner, markdown="# Ada\n\nWrote the first program.\n")
    props = {"Person.email": "ada@example.com", "Person.born": "1815-12-10", "Person.met": "1833-06-05T18:00:00+01:00",
             "Person.tags": ["friend", "colleague"], "Person.vip": True, "Person.height": 1.65}
    typed.notes.apply(ws.owner, note.id, add=["Person"], properties=props)
    markdown = svc.notes.markdown(ws.owner, note.id)
    assert "types: [Person]\n" in markdown and "Person.email: ada@example.com\n" in markdown
    assert "Person.born: 1815-12-10\n" in markdown
    parsed = parse_markdown(markdown)
    assert parsed.meta.types == ("Person",) and parsed.meta.properties == props
    # The Markdown is a fixed point (but for the anchors, which the first note holds: the copy's blocks
    # get ids of their own), and a note created from it is indexed the same way.
    copy = svc.notes.create(ws.owner, markdown=markdown)
    copied = svc.notes.markdown(ws.owner, copy.id)
    for old_id, fresh_id in (copy.reassigned_block_ids or {}).items():
        copied = copied.replace(fresh_id, old_id)
    assert copied == markdown and len(copy.reassigned_block_ids or {}) == len(note.blocks)
    query = {"type": "Person", "filters": [{"property": "Person.met", "op": "lt", "value": "1833-06-05T17:30:00Z"},
                                           {"property": "Person.tags", "op": "contains", "value": "friend"}]}
    assert len(typed.titles(ws.owner, query)) == 2


def test_a_type_defined_later_indexes_the_notes_already_tagged_with_it(svc, ws, typed):
    svc.notes.create(ws.owner, markdown="---\ntitle: Soup\ntypes: [Recipe]\nRecipe.minutes: 20\n---\n\nStir.\n")
    svc.notes.create(ws.owner, markdown="---\ntitle: Stew\ntypes: [Recipe]\nRecipe.minutes: 240\n---\n\nWait.\n")
    with pytest.raises(ValidationFailed):  # a query names defined types only
        typed.queries.query(ws.owner, {"type": "Recipe"})
    typed.types.define(ws.owner, name="Recipe", properties=[{"name": "minutes", "kind": "number"}])
    quick = {"type": "Recipe", "filters": [{"property": "Recipe.minutes", "op": "lte", "value": 30}]}
    assert typed.titles(ws.owner, quick) == ["Soup"]
    # Changing the definition re-indexes every note of the type: minutes gives way to serves...
    typed.types.update(ws.owner, "Recipe", properties=[{"name": "serves", "kind": "number"}])
    assert typed.titles(ws.owner, {"type": "Recipe", "filters": [{"property": "Recipe.serves", "op": "has_not"}]}) \
        == ["Soup", "Stew"]
    # ...and the removed property's values are still in the notes, unindexed.
    assert "Recipe.minutes: 20" in svc.notes.markdown(ws.owner, _id_of(svc, ws, "Soup"))


def _id_of(svc, ws, title: str) -> str:
    return next(n.id for n in svc.notes.list(ws.owner, limit=200).items if n.title == title)


def test_removing_a_type_keeps_its_values_in_the_note_but_not_in_the_index(svc, ws, typed):
    _books(typed, ws)
    note = svc.notes.create(ws.owner, title="Dune").id
    typed.notes.apply(ws.owner, note, add=["Book"], properties={"Book.pages": 412})
    result = typed.notes.apply(ws.owner, note, remove=["Book"])
    assert result.types == () and result.properties == {"Book.pages": 412}
    assert typed.titles(ws.owner, {"type": "Book"}) == []
    with pytest.raises(ValidationFailed) as exc:
        typed.notes.apply(ws.owner, note, properties={"Book.pages": 1})
    assert _errors(exc) == {"properties.Book.pages": "type_not_applied"}
    with pytest.raises(ValidationFailed) as exc:
        typed.notes.apply(ws.owner, note, add=["Novel"])
    assert _errors(exc) == {"add[0]": "unknown_type"}


def test_a_frontmatter_edit_through_ops_is_indexed_and_a_bad_value_is_refused_as_the_typed_api_refuses_it(
        svc, store, ws, typed):
    _books(typed, ws)
    note = svc.notes.create(ws.owner, title="Dune").id
    typed.notes.apply(ws.owner, note, add=["Book"], properties={"Book.pages": 412})

    def set_pages(value):
        ops, frontier = edit_ops(store, ws.id, note, lambda d: d.set_meta(
            NoteMeta(d.meta.title, d.meta.types, {**d.meta.properties, "Book.pages": value})))
        svc.notes.apply_ops(ws.owner, note, ops=ops, peer_id="7", expected_frontier=frontier)

    big = {"type": "Book", "filters": [{"property": "Book.pages", "op": "gt", "value": 600}]}
    set_pages(700)
    assert typed.titles(ws.owner, big) == ["Dune"]
    frontier = svc.notes.get(ws.owner, note).frontier
    with pytest.raises(ValidationFailed) as exc:
        set_pages("lots")
    assert _errors(exc) == {"properties.Book.pages": "type"}
    kept = svc.notes.get(ws.owner, note)
    assert (kept.frontier, kept.properties["Book.pages"]) == (frontier, 700), "the refused edit changed nothing"
    assert typed.titles(ws.owner, big) == ["Dune"]


def test_an_imported_value_its_property_cannot_hold_stays_in_the_note_and_indexes_as_empty(svc, ws, typed):
    _books(typed, ws)
    with pytest.raises(ValidationFailed) as exc:  # a person's new note: refused, as the typed API refuses it
        svc.notes.create(ws.owner, title="Dune", types=["Book"], properties={"Book.pages": "lots"})
    assert _errors(exc) == {"properties.Book.pages": "type"}
    note = svc.notes.create(ws.owner, title="Dune", types=["Book"], properties={"Book.pages": "lots"}, inbound=True).id
    assert svc.notes.get(ws.owner, note).properties["Book.pages"] == "lots"  # the archive's text, kept
    assert typed.titles(ws.owner, {"type": "Book", "filters": [{"property": "Book.pages", "op": "gt", "value": 1}]}) == []
    assert typed.titles(ws.owner, {"type": "Book", "filters": [{"property": "Book.pages", "op": "has_not"}]}) == ["Dune"]


def test_bulk_apply_reports_each_item_and_keeps_the_successes(svc, ws, typed):
    _books(typed, ws)
    ids = [svc.notes.create(ws.owner, title=f"b{i}").id for i in range(3)]
    trashed = svc.notes.create(ws.owner, title="gone").id
    svc.notes.trash(ws.owner, trashed)
    result = typed.notes.apply_many(ws.owner, [
        {"note_id": ids[0], "add": ["Book"], "properties": {"Book.pages": 10}},
        {"note_id": ids[1], "add": ["Book"], "properties": {"Book.pages": "ten"}},
        {"note_id": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "add": ["Book"]},
        {"note_id": trashed, "add": ["Book"]},
        {"note_id": ids[2], "add": ["Audiobook"], "properties": {"MediaObject.format": "audio"}},
        "not an item",
    ]).as_dict()
    assert (result["succeeded"], result["failed"]) == (2, 4)
    outcome = [(r["ok"], r.get("error", {}).get("type")) for r in result["results"]]
    assert outcome == [(True, None), (False, "validation-failed"), (False, "not-found"), (False, "conflict"),
                       (True, None), (False, "validation-failed")]
    assert result["results"][1]["error"]["field_errors"][0]["field"] == "properties.Book.pages"
    assert result["results"][0]["note"]["types"] == ["Book"]
    assert typed.titles(ws.owner, {"type": "Book", "sort": [{"property": "title"}]}) == ["b0", "b2"]
    assert svc.notes.get(ws.owner, ids[1]).types == ()  # the failed item changed nothing
    with pytest.raises(ValidationFailed):
        typed.notes.apply_many(ws.owner, [])


def test_type_and_property_changes_are_in_the_change_feed(svc, store, ws, typed):
    typed.types.define(ws.owner, name="Person", properties=[{"name": "email", "kind": "text"}])
    note = svc.notes.create(ws.owner, title="Ada").id
    typed.notes.apply(ws.owner, note, add=["Person"])
    typed.types.update(ws.owner, "Person", properties=[{"name": "email", "kind": "text"},
                                                       {"name": "phone", "kind": "text"}])
    with store.read(ws.id) as tx:
        rows = tx.feed.read(after_seq=0, upto_seq=tx.feed.head(), limit=100)
    assert [(r.kind, r.note_id, r.subject_id) for r in rows if r.kind != "create"] == [
        ("type_define", None, "Person"), ("meta", note, None), ("type_update", None, "Person")]


def test_unknown_notes_and_types_are_not_found(svc, ws, typed):
    with pytest.raises(NotFound):
        typed.types.get(ws.owner, "Nope")
    with pytest.raises(NotFound):
        typed.notes.apply(ws.owner, "01ARZ3NDEKTSV4RRFFQ69G5FAV", add=["Nope"])
