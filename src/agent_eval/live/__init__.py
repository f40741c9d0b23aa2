"""Live MCP: probe real servers, pin their tools, record real sessions (docs/mcp.md).

Only :mod:`agent_eval.live.session` and :mod:`agent_eval.live.runner` import the MCP SDK,
and only when a suite has servers; loading a suite never does.
"""

__all__ = ["INPUT_RULES", "PROBE_RULES", "SERVER_RULES"]

# Every rule id the live side reports (a page each under rules/docs/).
PROBE_RULES = ("probe/result", "probe/error", "probe/call_failed", "probe/timeout",
               "probe/latency", "probe/listing", "probe/mime_type", "probe/messages",
               "probe/arguments", "probe/capability", "probe/sampling")
SERVER_RULES = ("mcp/tool_changed", "mcp/tool_added", "mcp/tool_removed",
                "mcp/tool_shadowing", "mcp/hidden_characters", "mcp/injected_instructions")
INPUT_RULES = ("input/server_start", "input/lock_missing", "input/lock_invalid")
