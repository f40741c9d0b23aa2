"""The check registry: one line per metric."""

from __future__ import annotations

from agent_eval.checks import args_valid, sequence_valid, tool_blocklist, tool_results
from agent_eval.checks.base import CheckSpec

__all__ = ["REGISTRY", "CheckSpec"]

REGISTRY: dict[str, CheckSpec] = {
    spec.metric: spec
    for spec in (
        args_valid.SPEC,
        sequence_valid.SPEC,
        tool_blocklist.SPEC,
        tool_results.SPEC,
    )
}
