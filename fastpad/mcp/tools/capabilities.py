"""``fastpad_capabilities``: who this credential is, what it may do, its limits — and the session.

MCP is stateless, so the agent session every other tool takes is minted here: a
signed string bound to this credential and workspace (``ReviewService.open_session``).
Any credential may call it; it takes no arguments (a ``cursor`` only when a token's note set
is too long for one result).
"""

from __future__ import annotations

from fastpad.mcp import schemas as s
from fastpad.mcp.tool import Call, ToolOutput, ToolSpec
from fastpad.mcp.tools.limits import FETCH_MAX_NOTES
from fastpad.review.ops import MAX_OPS
from fastpad.security.agent_sessions import SESSION_TTL
from fastpad.security.handles import HANDLE_TTL
from fastpad.security.scopes import NOTES_PROPOSE, ordered

NEXT = ("fastpad_search or fastpad_context to find a note; fastpad_fetch with with_handles: true, "
        "then fastpad_propose; hand the review_url to a person")


def run(call: Call) -> ToolOutput:
    from fastpad.mcp.tools import TOOLS  # the list this module is part of

    principal = call.principal
    review = call.deployment.review
    session = review.open_session(principal)
    claims = review.check_session(principal, session)
    policy = call.env.policy(principal)
    if not principal.has(NOTES_PROPOSE):
        writable = "none"
    else:
        writable = "all" if principal.note_ids is None else "note_set"
    data = {
        "session": session,
        "session_expires_at": claims.expires_at.isoformat(),
        "identity": {"kind": principal.kind, "principal_id": principal.principal_id,
                     "token_id": principal.token_id, "workspace_id": principal.workspace_id},
        "scopes": ordered(principal.scopes),
        "tools": [tool.name for tool in TOOLS if tool.visible_to(principal)],
        "writable": writable,
        "limits": {
            "max_result_tokens": policy.max_tokens, "fetch_max_notes": FETCH_MAX_NOTES,
            "rate_limit_per_minute": principal.rate_limit_per_minute, "max_ops": MAX_OPS,
            "handle_ttl_s": int(HANDLE_TTL.total_seconds()), "session_ttl_s": int(SESSION_TTL.total_seconds()),
        },
        "auto_apply": principal.auto_apply,
        "default_floor": call.floor.value,
        "live_link_hosts": list(policy.allow_hosts),
        "next": NEXT,
    }
    if principal.note_ids is None:
        return ToolOutput(data)
    return ToolOutput(data, key="note_ids", items=sorted(principal.note_ids))


TOOL = ToolSpec(
    name="fastpad_capabilities",
    title="Capabilities and session",
    description="Call first: the session every other tool requires (MCP is stateless), identity, scopes, visible "
                "tools, the notes you may propose to (writable: all, note_set with note_ids, none) and limits.",
    scopes=(),
    input_schema=s.inputs({"cursor": s.CURSOR}),  # only a note set too long for one result pages
    output_schema=s.outputs({
        "session": s.STR, "identity": s.OBJ, "scopes": s.STRS, "tools": s.STRS,
        "writable": s.enum("all", "note_set", "none"), "note_ids": s.STRS, "limits": s.OBJ,
    }, "session", "scopes", "writable", "limits"),
    run=run,
    needs_session=False,
)
