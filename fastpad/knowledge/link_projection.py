"""The write path's link step: titles, aliases and text edges follow every note write.

``project_links(tx, write)`` runs inside ``NoteService._commit``, in the same
transaction as the block projection, so the graph never disagrees with the
text that was committed:

- A new title becomes the note's current title; the title it replaces stays
  as an alias (so ``[[Old title]]`` keeps resolving), and every unresolved
  link to the new title now points at this note. Each title keeps the
  provenance the note row stamps on it, as an alias too (held to a reader's
  trust floor by ``outbound.titles``).
- Every ``[[Title]]`` / ``@mention`` in the blocks is one ``mentions`` edge per
  (block, title), and every embed ``![[Title]]`` one ``embeds`` edge, with the
  text around it as evidence. Edges for links that
  left the text are removed; links that stay keep their edge, their target
  (a rename elsewhere never re-points them) and any person's promotion.
- A link's status follows its block: asserted when a person wrote or accepted
  the block, inferred otherwise (``trust.edge_status_for_block``), unless a
  person promoted the edge.
- A link to a title no note has is stored unresolved and resolves when a note
  with that title or alias is created or renamed.
- A writer limited to a set of notes (``Actor.note_ids``) links only among
  them: a title only notes outside its set have is, to that write, a title no
  note has. A bare ``@mention`` takes the longest reading that is a title
  among the notes the writer can link to (``wikilinks.extract_links``).
"""

from __future__ import annotations

from dataclasses import replace

from fastpad.knowledge.edges import TEXT_LINK_CONFIDENCE
from fastpad.knowledge.trust import ASSERTED, edge_status_for_block
from fastpad.knowledge.wikilinks import LinkRef, extract_links, mention_titles, title_key
from fastpad.notes import new_id
from fastpad.store import BlockRow, NoteWrite, WorkspaceTx
from fastpad.store.links import LinkRow


def project_links(tx: WorkspaceTx, write: NoteWrite) -> None:
    links = tx.links
    # (block, title key, edge type) -> what the text says, and what the store holds
    written: dict[tuple[str, str, str], tuple[BlockRow, LinkRef]] = {}
    existing: dict[tuple[str | None, str, str], LinkRow] = {}
    blocks = write.blocks if write.blocks is not None else (
        write.block_edits.rows if write.block_edits is not None else None)
    linkable = write.actor.note_ids
    if blocks is not None:
        mentioned = set().union(*(mention_titles(block.type, block.text) for block in blocks))
        titles = links.resolve(mentioned, within=linkable).keys() if mentioned else frozenset()
        for block in blocks:
            for ref in extract_links(block.type, block.text, titles=titles):
                written[(block.block_id, ref.key, ref.type)] = (block, ref)
        existing = {(e.source_block_id, e.target_key, e.type): e for e in links.text_edges(write.note_id)}
        if write.blocks is None:
            # Only the edited blocks' edges can change: the others' text and provenance did not.
            edited = {block.block_id for block in blocks}
            existing = {pair: edge for pair, edge in existing.items() if pair[0] in edited}
    new = [pair for pair in written if pair not in existing]
    retitle = write.title is not None and _retitles(tx, write.note_id, write.title)
    key = title_key(write.title or "")

    # One locking step, before anything is written (see LinkStore.lock_titles).
    links.lock_titles([k for _, k, _ in new] + ([key] if retitle and key else []))
    # The title's provenance as the note row now holds it (this write's stamp, or the one it kept):
    # the title row carries it, and takes it along when a later title makes it an alias.
    if retitle:
        stamped = tx.name_provenance([write.note_id])[write.note_id].title
        if links.set_title(write.note_id, write.title or "", key, write.at, stamped) and key:
            links.attach_forward_links(write.note_id, key, write.at)
    elif write.title_provenance is not None:
        links.stamp_title(write.note_id, write.title_provenance)
    if blocks is None:
        return

    resolved = links.resolve((k for _, k, _ in new), within=linkable)
    actor = write.actor
    inserts = []
    for block_id, k, edge_type in new:
        block, ref = written[(block_id, k, edge_type)]
        status = edge_status_for_block(block.origin, block.review_state)
        inserts.append(LinkRow(
            id=new_id(), source_note_id=write.note_id, source_block_id=block_id, target_note_id=resolved.get(k),
            target_title=ref.title, target_key=k, type=edge_type, derivation="text", status=status,
            confidence=None if status == ASSERTED else TEXT_LINK_CONFIDENCE, evidence_text=ref.evidence,
            evidence_origin=block.origin, evidence_review_state=block.review_state, created_by_kind=actor.kind,
            created_by_id=actor.id, token_id=actor.token_id, confirmed_by=None, confirmed_at=None,
            created_at=write.at, updated_at=write.at,
        ))
    refreshed = []
    for pair, edge in existing.items():
        if pair not in written:
            continue
        block, ref = written[pair]  # type: ignore[index]
        status = ASSERTED if edge.confirmed_by else edge_status_for_block(block.origin, block.review_state)
        confidence = None if status == ASSERTED else (edge.confidence or TEXT_LINK_CONFIDENCE)
        after = (ref.evidence, block.origin, block.review_state, status, confidence, ref.title)
        before = (edge.evidence_text, edge.evidence_origin, edge.evidence_review_state, edge.status,
                  edge.confidence, edge.target_title)
        if after != before:
            refreshed.append(replace(
                edge, evidence_text=ref.evidence, evidence_origin=block.origin,
                evidence_review_state=block.review_state, status=status, confidence=confidence,
                target_title=ref.title, updated_at=write.at,
            ))
    links.delete(e.id for pair, e in existing.items() if pair not in written)
    links.insert(inserts)
    links.refresh_text_edges(refreshed)


def _retitles(tx: WorkspaceTx, note_id: str, title: str) -> bool:
    """Does ``title`` differ from the note's current title (or from how its key is stored)?"""
    current = tx.links.current_title(note_id)
    if current is None:
        return bool(title_key(title))
    return current.title != title or current.key != title_key(title)
