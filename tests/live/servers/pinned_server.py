"""A small real MCP server (stdio, on the mcp SDK) for the pinning tests: its tools'
descriptions come from the environment, so a test can change them between runs.

TOOL_DESCRIPTION  description of `lookup_order` (default: a plain one)
EXTRA_TOOL        when set, a second tool `cancel_order` with this description
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("agent-eval-pinning-fixture")


@server.tool(name="lookup_order",
             description=os.environ.get("TOOL_DESCRIPTION", "Look up an order by its id."))
def lookup_order(order_id: str) -> str:
    return f"order {order_id}: shipped"


if os.environ.get("EXTRA_TOOL"):
    @server.tool(name="cancel_order", description=os.environ["EXTRA_TOOL"])
    def cancel_order(order_id: str) -> str:
        return f"order {order_id}: cancelled"


if __name__ == "__main__":
    server.run()
