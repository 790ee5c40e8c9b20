"""Received updates and frontiers: every refusal is typed, names its limit, and changes nothing."""

from __future__ import annotations

import base64
import gc
from contextlib import contextmanager

import pytest
from loro import ExportMode, LoroDoc, LoroMap, LoroText

from fastpad.errors import FastpadError, ValidationFailed
from fastpad.notes import Block, NoteDocument, NoteMeta, UpdateLimits
from fastpad.notes.frontier import decode_frontier, encode_frontier
from fastpad.notes.updates import check_update


def base_note() -> NoteDocument:
    return NoteDocument.new(NoteMeta("Shared"), [Block(None, "paragraph", "start")], peer_id=1)


def replica(doc: NoteDocument, peer_id: int) -> NoteDocument:
    return NoteDocument.load(doc.snapshot(), peer_id=peer_id)


def typing(doc: NoteDocument, chars: int) -> None:
    """One peer's edit of ``chars`` atoms: a text insert of that many characters."""
    first = doc.blocks()[0]
    doc.replace_text(first.id, first.text + "x" * chars)


@contextmanager
def refused(doc: NoteDocument, code: str):
    """Expect a ValidationFailed with ``code`` that leaves ``doc`` exactly as it was."""
    blocks, meta, frontier = doc.blocks(), doc.meta, doc.frontier()
    with pytest.raises(ValidationFailed) as error:
        yield error
    assert [e.code for e in error.value.field_errors] == [code]
    assert doc.blocks() == blocks and doc.meta == meta and doc.frontier() == frontier


def test_a_snapshot_is_refused_where_an_update_is_required():
    doc = base_note()
    other = replica(doc, 2)
    typing(other, 3)
    for blob, kind in [
        (other.snapshot(), "snapshot"),
        (other.loro.export(ExportMode.ShallowSnapshot(other.loro.oplog_frontiers)), "shallow_snapshot"),
    ]:
        with refused(doc, "mode") as error:
            doc.apply_update(blob)
        assert error.value.field_errors[0].field == "ops"
        assert error.value.extra == {"limit": "mode", "expected": "updates", "actual": kind}
        assert "never a snapshot" in error.value.detail


def test_an_oversize_blob_is_refused_before_it_is_parsed():
    doc = base_note()
    other = replica(doc, 2)
    since = doc.frontier()
    other.set_meta(NoteMeta("Shared", properties={"attachment": "y" * (1 << 20)}))  # one atom, >1 MiB
    blob = other.export_updates(since)
    assert len(blob) > 1 << 20
    with refused(doc, "max_bytes") as error:
        doc.apply_update(blob)
    assert error.value.extra == {"limit": "max_bytes", "max": 1 << 20, "actual": len(blob)}
    assert "smaller updates" in error.value.detail and "re-read the note" in error.value.detail


def two_peer_update(doc: NoteDocument, atoms_each: int) -> bytes:
    since = doc.frontier()
    a, b = replica(doc, 2), replica(doc, 3)
    typing(a, atoms_each)
    typing(b, atoms_each)
    b.apply_update(a.export_updates(since), UpdateLimits(max_atoms=10**9))
    return b.export_updates(since)


def test_too_many_atoms_from_several_peers():
    doc = base_note()
    blob = two_peer_update(doc, 60_000)
    with refused(doc, "max_atoms") as error:
        doc.apply_update(blob)
    assert error.value.extra == {"limit": "max_atoms", "max": 100_000, "actual": 120_000}
    assert "120,000 atoms" in error.value.detail


def test_one_peers_edit_on_the_current_version_may_be_twice_as_large():
    doc = base_note()
    editor = replica(doc, 2)
    typing(editor, 150_000)
    result = check_update(doc.loro, editor.export_updates(doc.frontier()), UpdateLimits())
    assert (result.new_atoms, result.atom_limit) == (150_000, 200_000)
    assert doc.apply_update(editor.export_updates(doc.frontier())) == editor.frontier()
    assert doc.blocks() == editor.blocks()

    typing(editor, 200_001)
    with refused(doc, "max_atoms") as error:
        doc.apply_update(editor.export_updates(doc.frontier()))
    assert error.value.extra == {"limit": "max_atoms", "max": 200_000, "actual": 200_001}


def test_one_peers_edit_on_an_older_version_gets_the_ordinary_limit():
    doc = base_note()
    editor = replica(doc, 2)
    since = doc.frontier()
    typing(editor, 10)
    doc.apply_update(editor.export_updates(since))
    typing(editor, 150_000)
    # Resending from before the acknowledged version: the 10 held atoms are free,
    # but the blob does not start where the note's copy of peer 2 ends.
    with refused(doc, "max_atoms") as error:
        doc.apply_update(editor.export_updates(since))
    assert error.value.extra == {"limit": "max_atoms", "max": 100_000, "actual": 150_000}


def test_ops_already_held_are_not_counted():
    doc = base_note()
    blob = two_peer_update(doc, 60_000)
    frontier = doc.apply_update(blob, UpdateLimits(max_atoms=10**9))
    assert check_update(doc.loro, blob).new_atoms == 0
    assert doc.apply_update(blob) == frontier  # 120,000 atoms, all held: passes, changes nothing


@pytest.mark.parametrize(
    "blob",
    [b"", b"garbage", b"loro" + b"\x00" * 40],
    ids=["empty", "garbage", "header-only"],
)
def test_garbage_bytes(blob):
    doc = base_note()
    with refused(doc, "malformed_update") as error:
        doc.apply_update(blob)
    assert error.value.field_errors[0].field == "ops"


def test_a_corrupted_update_fails_its_checksum():
    doc = base_note()
    other = replica(doc, 2)
    since = doc.frontier()
    typing(other, 5)
    blob = bytearray(other.export_updates(since))
    blob[-1] ^= 0xFF
    with refused(doc, "malformed_update"):
        doc.apply_update(bytes(blob))


def test_an_update_with_a_gap_is_refused_before_import():
    doc = base_note()
    other = replica(doc, 2)
    v0 = doc.frontier()
    other.insert_after(None, Block(None, "heading", "first", {"level": 2}))
    v1 = other.frontier()
    other.insert_after(None, Block(None, "paragraph", "second"))
    with refused(doc, "missing_dependencies") as error:
        doc.apply_update(other.export_updates(v1))  # peer 2's ops, without its first edit
    assert error.value.extra == {"current_frontier": v0}
    assert "Re-read the note" in error.value.detail


def hidden_dependency(doc: NoteDocument, with_independent_change: bool) -> tuple[bytes, bytes]:
    """An update whose ops depend on another peer's edit the note lacks — visible only on
    import, as no peer's counters skip. Returns (that update, the missing edit)."""
    since = doc.frontier()
    absent = replica(doc, 4)
    absent.insert_after(None, Block(None, "paragraph", "absent"))
    missing = absent.export_updates(since)
    sender = replica(doc, 3)
    sender.apply_update(missing)
    after_missing = sender.frontier()
    if with_independent_change:
        independent = replica(doc, 5)
        independent.set_meta(NoteMeta("Renamed"))  # depends only on what the note holds
        sender.apply_update(independent.export_updates(since))
    sender.replace_text(sender.blocks()[0].id, "absent, answered")
    return sender.export_updates(after_missing), missing


@pytest.mark.parametrize("with_independent_change", [False, True], ids=["nothing-lands", "part-lands"])
def test_an_update_with_missing_dependencies_is_refused_whole(with_independent_change):
    doc = base_note()
    blob, missing = hidden_dependency(doc, with_independent_change)
    with refused(doc, "missing_dependencies"):
        doc.apply_update(blob)
    # Loro would have parked the ops and applied them once their dependency arrived;
    # the refused save must not come back to life that way.
    doc.apply_update(missing)
    assert [b.text for b in doc.blocks()] == ["absent", "start"] and doc.meta.title == "Shared"
    doc.insert_after(None, Block(None, "paragraph", "own edit"))
    assert [b.text for b in doc.blocks()] == ["own edit", "absent", "start"]


def test_a_shallow_note_refuses_missing_dependencies_too():
    full = base_note()
    typing(full, 3)
    doc = NoteDocument.load(full.loro.export(ExportMode.ShallowSnapshot(full.loro.oplog_frontiers)), peer_id=9)
    blob, missing = hidden_dependency(full, with_independent_change=False)
    with refused(doc, "missing_dependencies"):
        doc.apply_update(blob)
    doc.apply_update(missing)
    assert [b.text for b in doc.blocks()] == ["absent", "startxxx"]


def test_unknown_frontier():
    doc = base_note()
    other = replica(doc, 2)
    typing(other, 1)
    unseen = other.frontier()
    assert not doc.knows(unseen) and other.knows(doc.frontier())
    with refused(doc, "unknown_frontier") as error:
        doc.compare(unseen, doc.frontier())
    assert error.value.extra == {"current_frontier": doc.frontier()}
    with refused(doc, "unknown_frontier") as error:
        doc.export_updates(unseen)
    assert error.value.field_errors[0].field == "since"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "AQEu",  # no prefix
        "fp2:AQEu",  # a future version
        "fp1:",  # no bytes
        "fp1:AQE*",  # not base64url
        "fp1:AQEu==",  # padded
        "fp1:AQF",  # non-canonical trailing bits
        "fp1:AQEv",  # a negative counter, which Loro would accept and later panic on
        "fp1:AQEuAA",  # trailing bytes
        "fp1:" + base64.urlsafe_b64encode(b"\x05\xff\xff").decode().rstrip("="),  # not frontiers
    ],
)
def test_malformed_frontier(text):
    doc = base_note()
    with refused(doc, "malformed_frontier") as error:
        doc.compare(text, doc.frontier())
    assert error.value.field_errors[0].field == "expectedFrontier"
    with pytest.raises(ValidationFailed):
        decode_frontier(text)


def test_frontier_round_trip_and_comparison():
    doc = base_note()
    start = doc.frontier()
    assert encode_frontier(decode_frontier(start)) == start and start.startswith("fp1:")
    a, b = replica(doc, 2), replica(doc, 3)
    typing(a, 1)
    typing(b, 1)
    a_alone = a.frontier()
    a.apply_update(b.export_updates(start))
    assert a.compare(start, a.frontier()) == "before"
    assert a.compare(a.frontier(), start) == "after"
    assert a.compare(start, start) == "equal"
    assert a.compare(b.frontier(), a.frontier()) == "before"
    assert a.compare(a_alone, b.frontier()) == "concurrent"


# Found by fuzzing: peer 2's update to the note below, with three body bytes changed and the
# checksum recomputed. Loro panics importing it and poisons the document's lock.
POISONING_UPDATE = bytes.fromhex(
    "6c6f726f0000000000000000000000006fd1dd0900044800060806011b02020000000000000001000000000000000101"
    "010101010e0000da0501000001000601040002010400000e010402010002010a02010002010600070620776f726c64"
)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the poisoned doc panics again when freed
def test_an_update_that_breaks_loro_gives_a_typed_error_and_leaves_storage_intact():
    base = LoroDoc()
    base.peer_id = 1
    block = base.get_movable_list("blocks").insert_container(0, LoroMap())
    block.insert("id", "X")
    block.insert_container("text", LoroText()).insert(0, "hello")
    base.commit()
    stored = base.export(ExportMode.Snapshot())

    doc = NoteDocument.load(stored, peer_id=5)
    with pytest.raises(FastpadError) as error:
        doc.apply_update(POISONING_UPDATE)
    assert type(error.value) is FastpadError and error.value.status == 500
    assert "load the note again" in error.value.detail
    assert NoteDocument.load(stored).blocks() == [Block(None, "paragraph", "hello")]
    del doc, error  # free the poisoned document here, where its warning is expected
    gc.collect()
