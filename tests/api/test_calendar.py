"""GET /v1/calendar over real HTTP: events for a workspace token, busy time for a note-scoped one."""

from __future__ import annotations

import secrets

from tests.api.helpers import assert_problem

EVENT_PROPERTIES = [{"name": "start", "kind": "datetime"}, {"name": "end", "kind": "datetime"},
                    {"name": "all_day", "kind": "checkbox"}]


def test_events_for_the_workspace_and_busy_time_for_a_note_scoped_token(owner, server) -> None:
    schema = server.mint("notes:read,notes:write,schema:write", "--person", server.owner_email)["token"]
    with server.client(schema) as client:
        defined = client.post("/v1/types", json={"name": "Event", "properties": EVENT_PROPERTIES})
        assert defined.status_code in (201, 409), defined.text  # another test may have defined it first
    # A day of its own, far from anything other tests write.
    day = f"2099-{secrets.randbelow(12) + 1:02d}-{secrets.randbelow(28) + 1:02d}"
    window = {"start": f"{day}T08:00:00Z", "end": f"{day}T18:00:00+00:00"}

    def event(title: str, start: str, end: str) -> str:
        created = owner.post("/v1/notes", json={
            "title": title, "types": ["Event"],
            "properties": {"Event.start": f"{day}T{start}:00Z", "Event.end": f"{day}T{end}:00+00:00"}})
        assert created.status_code == 201, created.text
        return created.json()["id"]

    mine = event("Planning", "09:00", "10:00")
    event("Board meeting", "09:30", "11:00")
    event("Dentist", "14:00", "15:00")

    with server.client(server.token("reader")) as reader:
        full = reader.get("/v1/calendar", params=window).json()
    assert full["busy_only"] is False and "busy" not in full
    assert [(e["title"], e["start"], e["end"]) for e in full["events"]] == [
        ("Planning", f"{day}T09:00:00+00:00", f"{day}T10:00:00+00:00"),
        ("Board meeting", f"{day}T09:30:00+00:00", f"{day}T11:00:00+00:00"),
        ("Dentist", f"{day}T14:00:00+00:00", f"{day}T15:00:00+00:00"),
    ]

    scoped = server.mint("notes:read", "--notes", mine)["token"]
    with server.client(scoped) as client:
        busy = client.get("/v1/calendar", params=window)
    assert busy.status_code == 200, busy.text
    body = busy.json()
    assert body["busy_only"] is True and "events" not in body
    assert body["busy"] == [{"start": f"{day}T09:00:00+00:00", "end": f"{day}T11:00:00+00:00"},
                            {"start": f"{day}T14:00:00+00:00", "end": f"{day}T15:00:00+00:00"}]
    assert "Board meeting" not in busy.text and mine not in busy.text


def test_a_bad_window_is_a_problem_document(owner, server) -> None:
    for params in ({"start": "2099-01-02T00:00:00Z", "end": "2099-01-01T00:00:00Z"},
                   {"start": "2099-01-01T00:00:00", "end": "2099-01-02T00:00:00"},
                   {"start": "2099-01-01T00:00:00Z", "end": "2100-06-01T00:00:00Z"},
                   {"start": "tomorrow", "end": "2099-01-02T00:00:00Z"},
                   {"start": "2099-01-01T00:00:00Z"}):
        assert_problem(owner.get("/v1/calendar", params=params), 422, "validation-failed", server.base_url)
