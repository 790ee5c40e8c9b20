"""Proposals from the terminal: ``fp turns``, ``fp diff``, ``fp turn-abandon`` and ``fp accept``.

``fp accept`` accepts a turn this credential opened, and only when it carries
``turns:accept`` (``fp login --scope turns:accept``); otherwise the server's
``approve-not-permitted`` is exit 8, and ``fp diff`` prints the proposal with
the review URL to hand to a person. Every accept from here is an agent's
accept: marked ``agent_accepted`` and listed on the Agent activity page.
"""

from __future__ import annotations

import uuid
from typing import Any

import click

from fastpad.cli.options import FpCommand, settings
from fastpad.cli.output import Output

# fastpad.review.turns.STATUS_FILTERS, spelled out: importing the review package costs start-up time.
STATUS_FILTERS = ("waiting", "pending", "partially_accepted", "accepted", "rejected", "abandoned", "reverted")
_TURN_ID = click.argument("turn_id", metavar="TURN_ID")


@click.command(cls=FpCommand)
@click.option("--status", type=click.Choice([*STATUS_FILTERS, "all"]), default="waiting", show_default=True,
              help="Which turns: by default those with something still waiting for review, "
                   "partly accepted ones included.")
@click.option("--mine", is_flag=True, help="Only turns this credential opened.")
@click.option("--limit", type=click.IntRange(1, 200), default=50, show_default=True)
def turns(status: str, mine: bool, limit: int) -> None:
    """Proposals waiting for review (newest first)."""
    from fastpad.cli.client import connect

    out = Output()
    params: dict[str, Any] = {"limit": limit, "mine": str(mine).lower()}
    if status != "all":
        params["status"] = status
    items = connect().request("GET", "/v1/turns", params=params).json()["items"]

    def show(rows: list[dict[str, Any]]) -> None:
        if not rows:
            out.say("No proposals waiting." if status == "waiting" else "No turns.")
            return
        out.table(["turn", "note", "author", "status", "waiting", "created", "review"],
                  ([t["id"], t["note_id"], f"{t['author']['kind']}:{t['author']['id']}", t["status"],
                    len(t["pending_block_ids"]) + len(t["pending_ops"]), t["created_at"], t["review_url"]]
                   for t in rows))

    out.result(items, show)


@click.command(cls=FpCommand)
@_TURN_ID
def diff(turn_id: str) -> None:
    """One proposal as a per-block diff, ending with its review URL."""
    from fastpad.cli.client import connect

    out = Output()
    review = connect().request("GET", f"/v1/turns/{turn_id}/diff").json()
    out.result(review, lambda r: out.text(render_diff(r)))


def render_diff(review: dict[str, Any]) -> str:
    turn = review["turn"]
    lines = [f"Proposal {turn['id']} on “{review.get('note_title') or turn['note_id']}” "
             f"by {review.get('author') or turn['author']['kind']} · {turn['status']}"]
    if review.get("note_moved"):
        merge = review.get("merge") or {}
        lines.append("  The note changed since the proposal was made"
                     + ("; accepting merges cleanly." if merge.get("clean", True) else
                        f"; {len(merge.get('conflicts', []))} block(s) conflict."))
    for block in turn["diffs"]:
        state = f" [{block['state']}]" if block.get("state") and block["state"] != "pending" else ""
        if block["kind"] == "inserted":
            where = block.get("after_id") or "the start"
            lines.append(f"\n  inserted {block['block_id']} after {where}{state}")
            lines += _prefixed("+", block["after"]["text"])
        elif block["kind"] == "deleted":
            lines.append(f"\n  deleted {block['block_id']}{state}")
            lines += _prefixed("-", block["before"]["text"])
        else:
            lines.append(f"\n  replaced {block['block_id']}{state}")
            lines += _prefixed("-", block["before"]["text"])
            lines += _prefixed("+", block["after"]["text"])
    sources = review.get("sources") or {}
    if sources:
        lines.append("\n  Drawn from:")
        for block_id, source in sources.items():
            where = f"“{source['note_title']}”" if source.get("note_title") else "a note you cannot see"
            lines.append(f"    {block_id} in {where}")
    lines.append(f"\nReview: {turn['review_url']}")
    return "\n".join(lines)


def _prefixed(sign: str, text: str) -> list[str]:
    return [f"    {sign} {line}" for line in (text or "").split("\n")]


def _decide(turn_id: str, action: str) -> dict[str, Any]:
    from fastpad.cli.client import connect

    return connect().request("POST", f"/v1/turns/{turn_id}/{action}",
                             json={"idempotencyKey": f"fp-{action}-{uuid.uuid4().hex}"}).json()


@click.command("turn-abandon", cls=FpCommand)
@_TURN_ID
def turn_abandon(turn_id: str) -> None:
    """Drop a proposal this credential opened; nothing of it reaches the note."""
    out = Output()
    if settings.dry_run:
        out.result({"would_abandon": turn_id}, lambda _: out.text(f"Would abandon {turn_id}"))
        return
    turn = _decide(turn_id, "abandon")
    out.result(turn, lambda t: out.text(f"{t['id']} is {t['status']}"))


@click.command(cls=FpCommand)
@_TURN_ID
def accept(turn_id: str) -> None:
    """Accept a proposal this credential opened (needs turns:accept; otherwise exit 8)."""
    out = Output()
    if settings.dry_run:
        from fastpad.cli.client import connect

        turn = connect().request("GET", f"/v1/turns/{turn_id}").json()
        out.result({"would_accept": turn_id, "pending_block_ids": turn["pending_block_ids"]},
                   lambda r: out.text(f"Would accept {len(r['pending_block_ids'])} block(s) of {turn_id}"))
        return
    decision = _decide(turn_id, "accept")
    out.result(decision, lambda d: out.text(
        f"Accepted {len(d['landed_block_ids'])} block(s) of {turn_id}; marked agent_accepted, "
        f"listed on Agent activity. Review: {d['turn']['review_url']}"))
