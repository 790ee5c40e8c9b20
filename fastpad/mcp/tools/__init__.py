"""The twelve tools, in the spec's fixed order (the order ``tools/list`` shows them in)."""

from fastpad.mcp.tools import (
    calendar,
    capabilities,
    changes,
    context,
    fetch,
    graph,
    history,
    memory,
    propose,
    query,
    search,
    turn,
)

TOOLS = (
    capabilities.TOOL,
    search.TOOL,
    fetch.TOOL,
    context.TOOL,
    query.TOOL,
    graph.TOOL,
    propose.TOOL,
    turn.TOOL,
    changes.TOOL,
    history.TOOL,
    memory.TOOL,
    calendar.TOOL,
)

__all__ = ["TOOLS"]
