"""Helpers of the scenario tests: write a suite and trace files to a folder, evaluate,
find lines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import events

from agent_eval.api import load_suite, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.results import Results


def trace(trace_id: str, scenario: str | None, tools: list[Any], output: Any = "ok",
          *, duration: float | None = 1000, cost: float | None = 0.01,
          tokens: int | None = 100) -> str:
    """One native trace: each tool is a name, or (name, arguments), or
    (name, arguments, error)."""
    start: dict[str, Any] = {"type": "trace_start", "trace_id": trace_id}
    if scenario is not None:
        start["scenario"] = scenario
    out = [start]
    if cost is not None or tokens is not None:
        llm: dict[str, Any] = {"type": "llm_call", "trace_id": trace_id, "model": "m"}
        if tokens is not None:
            llm["total_tokens"] = tokens
        if cost is not None:
            llm["cost_usd"] = cost
        out.append(llm)
    for n, tool in enumerate(tools):
        name, args, error = (tool, {}, None) if isinstance(tool, str) else (
            (*tool, None) if len(tool) == 2 else tool)
        call: dict[str, Any] = {"type": "tool_call", "trace_id": trace_id, "id": f"c{n}",
                                "tool": name, "arguments": args}
        out.append(call)
        if error is not None:
            out.append({"type": "tool_result", "trace_id": trace_id, "id": f"c{n}",
                        "error": error})
    if output is not None:
        out.append({"type": "output", "trace_id": trace_id, "output": output})
    end: dict[str, Any] = {"type": "trace_end", "trace_id": trace_id}
    if duration is not None:
        end["duration_ms"] = duration
    out.append(end)
    return events(*out)


@dataclass
class Workspace:
    root: Path
    suite_text: str = ""

    def write(self, suite: str, traces: dict[str, str]) -> None:
        (self.root / ".git").mkdir(exist_ok=True)
        (self.root / "agent-eval.yaml").write_text(suite, encoding="utf-8")
        self.suite_text = suite
        for name, text in traces.items():
            path = self.root / "traces" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def run(self, suite: str, traces: dict[str, str], jobs: int = 1) -> Results:
        self.write(suite, traces)
        s = load_suite(self.root / "agent-eval.yaml")
        files, errors = suite_sources(s)
        return evaluate_files(s, files, errors, jobs=jobs, timings=False)

    def line(self, needle: str, after: str | None = None) -> tuple[int, int]:
        """(line, column) of the first ``needle`` in the suite (after ``after``)."""
        lines = self.suite_text.splitlines()
        start = 0
        if after is not None:
            start = next(i for i, t in enumerate(lines) if after in t)
        for i in range(start, len(lines)):
            col = lines[i].find(needle)
            if col >= 0:
                return i + 1, col + 1
        raise AssertionError(f"{needle!r} not in the suite")


def scenario(results: Results, sid: str) -> dict[str, Any]:
    """The scenario ``sid`` as results.json holds it."""
    return next(s.to_dict() for s in results.scenarios if s.id == sid)


def rules_of(s: dict[str, Any]) -> list[str]:
    return [f["rule"] for f in s["findings"]]


def at(f: dict[str, Any]) -> tuple[int, int]:
    return f["config"]["line"], f["config"]["column"]


def criterion(results: Results, name: str) -> dict[str, Any]:
    """The criterion ``name`` as results.json holds it."""
    return next(c.to_dict() for c in results.criteria if c.name == name)
