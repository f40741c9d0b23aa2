"""Live MCP: probe real servers, pin their tools, record real sessions (docs/mcp.md).

Only :mod:`agent_eval.live.session` and :mod:`agent_eval.live.runner` import the MCP SDK,
and only when a suite has servers; loading a suite never does.
"""

from agent_eval.rule_ids import INPUT_LOCK_INVALID, INPUT_LOCK_MISSING, INPUT_SERVER_START, declared

# Every rule id the live side reports (a page each under rules/docs/).
PROBE_RULES = tuple(r.id for r in declared() if r.group == "probe")
SERVER_RULES = tuple(r.id for r in declared() if r.group == "mcp")
INPUT_RULES = tuple(r.id for r in (INPUT_SERVER_START, INPUT_LOCK_MISSING, INPUT_LOCK_INVALID))

__all__ = ["INPUT_RULES", "PROBE_RULES", "SERVER_RULES"]
