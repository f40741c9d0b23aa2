"""Helpers of the tests of sequence rules on a hand-made trace (imported by the tests of
calls whose arguments a selector cannot judge: not recorded, not an object, of another
JSON type)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from agent_eval.api import load_suite
from agent_eval.findings import Finding
from agent_eval.model import Location, ToolCall, Trace

F = "traces/t.jsonl"


def trace(calls: list[Any]) -> Trace:
    """Calls are names (arguments {}), (name, arguments) or (name, None): not recorded;
    call k is on line k + 1, the end on line 100."""
    tc = []
    for k, c in enumerate(calls):
        name, args = (c, {}) if isinstance(c, str) else c
        tc.append(ToolCall(name, args, Location(F, k + 1), arguments_recorded=args is not None))
    return Trace("t1", F, Location(F, 1), Location(F, 100), tool_calls=tc)


def rules(tmp_path: Path, text: str) -> Any:
    """A sequence_valid test whose first rule item is on line 6."""
    body = ("suite: s\ntests:\n  - id: seq\n    metric: sequence_valid\n    rules:\n"
            + textwrap.indent(textwrap.dedent(text).strip("\n"), "      ") + "\n")
    (tmp_path / "agent-eval.yaml").write_text(body, encoding="utf-8")
    return load_suite(tmp_path / "agent-eval.yaml").tests[0]


def seen(found: list[Finding]) -> list[tuple[str, int | None, int]]:
    """(the rule's last part, the trace line, the config line) of each finding."""
    return [(f.rule.split("/")[1], f.trace.line if f.trace else None, f.config.line)
            for f in found]
