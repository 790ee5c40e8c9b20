"""Every MCP tool the server lists has its calls in ``tests/security/tools.py``, and every op kind a
proposal can carry is either attacked with handles (``tests/security/handles.py``) or names no
block: a tool or op kind added without them fails here, so nobody adds one the suite skips."""

from __future__ import annotations

from fastpad.review.ops import OP_KINDS
from tests.mcp.conftest import McpServer, run
from tests.security.handles import HANDLE_OPS, OPS_WITHOUT_HANDLES
from tests.security.tools import TOOLS, listed_tools
from tests.security.world import mint


def test_every_tool_is_classified(target: McpServer) -> None:
    token, _ = mint(target)
    listed = run(lambda: listed_tools(target, token))
    assert listed - set(TOOLS) == set(), "give the new tool(s) their calls in tests/security/tools.py TOOLS"
    assert set(TOOLS) - listed == set(), "a classified tool is no longer listed"


def test_every_op_kind_that_names_a_block_is_attacked_with_handles() -> None:
    assert set(OP_KINDS) == set(HANDLE_OPS) | OPS_WITHOUT_HANDLES, \
        "classify the new op kind in tests/security/handles.py"
