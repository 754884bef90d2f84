"""A client's configuration for this installation's MCP server over HTTP: the ``mcpServers`` block
of Claude Code's ``.mcp.json`` and Cursor's ``mcp.json`` — its ``/mcp`` address and the token as
a Bearer header. The token page shows it with a new token; ``manage.py mcp_config --transport
http`` prints it (docs/connectors.md "Connecting a client")."""
from __future__ import annotations

DEFAULT_NAME = "legalmem"


def http_client_config(url: str, token: str, name: str = DEFAULT_NAME) -> dict:
    """``{"mcpServers": {name: {type, url, headers}}}``: Streamable HTTP with the token as Bearer."""
    return {"mcpServers": {name: {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}}}
