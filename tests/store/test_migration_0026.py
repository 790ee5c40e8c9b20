"""Migration 26 on a database that already holds several workspaces: the server's own maintenance
(the trash's purge in each workspace) lists them all after the upgrade — on PostgreSQL through a
function the application role may call, though the role still reads no workspace row it does not
act in; the function gives ids and nothing else."""

from __future__ import annotations

import psycopg

from tests.helpers_store import make_services


def test_every_workspace_is_listed_after_the_upgrade(make_store, backend, fast_hasher) -> None:
    store = make_store(migrate_to=25)
    url = make_store.last_url()
    svc = make_services(store, fast_hasher)
    made = {svc.workspace(name).id for name in ("First", "Second", "Third")}

    store = make_store(url=url)
    assert store.schema_version() >= 26  # later migrations may follow
    assert set(store.workspace_ids()) == made and store.workspace_ids() == sorted(made)
    if backend == "postgres":
        with psycopg.connect(store.app_conninfo, autocommit=True) as app:
            assert app.execute("SELECT count(*) FROM workspaces").fetchone()[0] == 0  # no row without acting in one
            listed = app.execute("SELECT * FROM fastpad_workspace_ids()")
            assert [column.name for column in listed.description] == ["id"]
            assert {row[0] for row in listed} == made
