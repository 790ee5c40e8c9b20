"""Checking a received Loro blob before anything imports it.

A save must be an update (never a snapshot, which would replace history
wholesale), small in bytes, and small in *new* work: atoms (Loro's unit of
change — one character inserted or deleted, one map write, one move) the note
does not already hold. Ops the note already has cost nothing to re-import, so
they are not counted: a client may safely resend what it is unsure landed.
Every check reads only the blob's header, so refusing is cheap and changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from loro import EncodedBlobMode, LoroDoc, VersionVector

from fastpad.errors import FieldError, ValidationFailed
from fastpad.notes.frontier import encode_frontier
from fastpad.notes.guard import loro_errors

FIELD = "ops"
_WHAT_TO_DO = (
    "The same bytes are refused every time: keep the change, re-read the note, and send it again "
    "as smaller updates, each exported from the version the server last acknowledged."
)


@dataclass(frozen=True)
class UpdateLimits:
    max_bytes: int = 1 << 20  # 1 MiB of update bytes (after base64 decoding)
    max_atoms: int = 100_000
    max_atoms_single_peer: int = 200_000


@dataclass(frozen=True)
class UpdateCheck:
    """What a blob that passed will add: its size, its new atoms and the allowance that applied."""

    size: int
    new_atoms: int
    atom_limit: int


def check_update(doc: LoroDoc, blob: bytes, limits: UpdateLimits = UpdateLimits()) -> UpdateCheck:
    """Validate ``blob`` against ``doc`` without importing it; raise ``ValidationFailed`` if refused."""
    # Size first, so an oversized blob is refused without being parsed at all.
    if len(blob) > limits.max_bytes:
        raise _refused(
            "max_bytes",
            f"The update is {len(blob):,} bytes; a save may be at most {limits.max_bytes:,} bytes.",
            {"max": limits.max_bytes, "actual": len(blob)},
        )
    with loro_errors(_malformed):
        meta = LoroDoc.decode_import_blob_meta(blob, True)
    if meta.mode != EncodedBlobMode.Updates:
        kind = _snake(str(meta.mode).rsplit(".", 1)[-1])
        raise _refused(
            "mode",
            f"ops is a Loro {kind.replace('_', ' ')} export; a save must be an update export "
            '(doc.export({mode: "update", from: <acknowledged version>})), never a snapshot.',
            {"expected": "updates", "actual": kind},
        )

    held, starts = doc.oplog_vv, meta.partial_start_vv
    new_atoms, new_peers, all_resume, gap = 0, 0, True, False
    for peer, (_zero, end) in meta.partial_end_vv.to_spans().inner().items():
        have, start = _end(held, peer), _end(starts, peer)
        if end <= have:
            continue  # every op of this peer is already held
        new_atoms += end - max(start, have)
        new_peers += 1
        all_resume &= start == have
        gap |= start > have

    # "One peer's edit built on the note's current version": exactly one peer brings new
    # atoms, and its ops start right where the note's copy of that peer ends — no gap and
    # no resent prefix. That is the shape of one client's catch-up save after an
    # acknowledged version, which may be larger than a merge of several peers' work.
    single_peer_on_current = new_peers == 1 and all_resume
    limit = limits.max_atoms_single_peer if single_peer_on_current else limits.max_atoms
    if new_atoms > limit:
        raise _refused(
            "max_atoms",
            f"The update adds {new_atoms:,} atoms of change the note does not hold (an atom is one "
            f"character inserted or deleted); the limit is {limits.max_atoms:,}, or "
            f"{limits.max_atoms_single_peer:,} for one peer's edit built on the note's current version.",
            {"max": limit, "actual": new_atoms},
        )
    # A peer's ops starting past what the note holds of that peer cannot apply. Other missing
    # dependencies only show once Loro imports the blob (see NoteDocument.apply_update).
    if gap:
        raise missing_dependencies(doc)
    return UpdateCheck(size=len(blob), new_atoms=new_atoms, atom_limit=limit)


def missing_dependencies(doc: LoroDoc) -> ValidationFailed:
    return ValidationFailed(
        detail="The update builds on changes this note does not have, so it cannot be applied. "
        "Re-read the note and export the update from the frontier the server returned.",
        field_errors=[FieldError(FIELD, "missing_dependencies", "The update depends on ops the note does not hold.")],
        extra={"current_frontier": encode_frontier(doc.oplog_frontiers)},
    )


def _end(vv: VersionVector, peer: int) -> int:
    """The counter one past ``peer``'s last op in ``vv`` (Loro counters start at 0)."""
    last = vv.get_last(peer)
    return 0 if last is None else last + 1


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _refused(limit: str, why: str, measured: dict[str, object]) -> ValidationFailed:
    return ValidationFailed(
        detail=f"{why} {_WHAT_TO_DO}",
        field_errors=[FieldError(FIELD, limit, why)],
        extra={"limit": limit, **measured},
    )


def _malformed(exc: BaseException) -> ValidationFailed:
    why = f"ops is not a Loro export ({exc})."
    return ValidationFailed(
        detail=f"{why} Send the bytes of a Loro update export, unmodified, base64-encoded.",
        field_errors=[FieldError(FIELD, "malformed_update", why)],
    )
