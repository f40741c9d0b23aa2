"""Live MCP: probe real servers, pin their tools, record real sessions (docs/mcp.md).

Only :mod:`agent_eval.live.session` and :mod:`agent_eval.live.runner` import the MCP SDK,
and only when a suite has servers; loading a suite never does.
"""

from agent_eval.rule_ids import (
    INPUT_LOCK_INVALID,
    INPUT_LOCK_MISSING,
    INPUT_SERVER_START,
    MCP_HIDDEN_CHARACTERS,
    MCP_INJECTED_INSTRUCTIONS,
    MCP_TOOL_ADDED,
    MCP_TOOL_CHANGED,
    MCP_TOOL_REMOVED,
    MCP_TOOL_SHADOWING,
    PROBE_ARGUMENTS,
    PROBE_CALL_FAILED,
    PROBE_CAPABILITY,
    PROBE_ERROR,
    PROBE_LATENCY,
    PROBE_LISTING,
    PROBE_MESSAGES,
    PROBE_MIME_TYPE,
    PROBE_RESULT,
    PROBE_SAMPLING,
    PROBE_TIMEOUT,
)

# Every rule id the live side reports (a page each under rules/docs/).
PROBE_RULES = tuple(r.id for r in (
    PROBE_RESULT, PROBE_ERROR, PROBE_CALL_FAILED, PROBE_TIMEOUT, PROBE_LATENCY, PROBE_LISTING,
    PROBE_MIME_TYPE, PROBE_MESSAGES, PROBE_ARGUMENTS, PROBE_CAPABILITY, PROBE_SAMPLING))
SERVER_RULES = tuple(r.id for r in (
    MCP_TOOL_CHANGED, MCP_TOOL_ADDED, MCP_TOOL_REMOVED, MCP_TOOL_SHADOWING,
    MCP_HIDDEN_CHARACTERS, MCP_INJECTED_INSTRUCTIONS))
INPUT_RULES = tuple(r.id for r in (INPUT_SERVER_START, INPUT_LOCK_MISSING, INPUT_LOCK_INVALID))

__all__ = ["INPUT_RULES", "PROBE_RULES", "SERVER_RULES"]
