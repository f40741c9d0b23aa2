"""The check registry: one line per metric, ``"metric": "module:SPEC"``.

A check's module is imported when a suite names its metric (start-up time,
docs/performance.md): ``tool_results`` and the live text checks it uses are not imported
by a suite without a ``tool_results`` test.
"""

from __future__ import annotations

from agent_eval.checks.base import CheckSpec
from agent_eval.registry import LazyRegistry

__all__ = ["REGISTRY", "CheckSpec"]

REGISTRY: LazyRegistry[CheckSpec] = LazyRegistry("agent_eval.checks", {
    "args_valid": "args_valid:SPEC",
    "sequence_valid": "sequence_valid:SPEC",
    "tool_blocklist": "tool_blocklist:SPEC",
    "tool_results": "tool_results:SPEC",
})
