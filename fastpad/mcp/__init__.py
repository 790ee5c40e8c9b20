"""The MCP surface: the twelve agent tools over the official SDK (``mcp`` 2.x), on HTTP
(``POST /mcp``, :func:`fastpad.mcp.server.mount`) and — through ``fp mcp``, a stdio bridge
to that endpoint — for local clients.

- :mod:`.server` wires the SDK's low-level ``Server``; :mod:`.http` is the gate in front of
  it (Host/Origin, POST only, bearer credential, scopes); :mod:`.dispatch` lists and calls
  tools for one credential.
- :mod:`.tools` holds one module per tool; :mod:`.schemas` their JSON Schemas.
- :mod:`.outbound` is the one function every result and failure leaves through.
- :mod:`.bridge` is ``fp mcp``.
"""


def mount(app: object) -> object:
    """Serve MCP at ``POST /mcp`` in the FastAPI app (see :func:`fastpad.mcp.server.mount`). Imported
    here, when called, because the MCP surface renders problems with ``fastpad.api``'s renderer."""
    from fastpad.mcp.server import mount as mount_server

    return mount_server(app)
