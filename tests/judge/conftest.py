"""Fixtures of the judge tests: a project folder (a git work tree with a suite and its
traces) run through the real command line, and loopback API servers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_eval._cli import main

from .loopback import Loopback, anthropic_server, openai_server, serve  # noqa: F401 (fixtures)

REFUND_INPUT = "Refund order A-1 please."


def native(trace_id: str, scenario: str, output: str, *, tools: tuple[str, ...] = (
        "lookup_order", "issue_refund"), scores: tuple[dict[str, Any], ...] = ()) -> str:
    """One native trace of a refund conversation."""
    events: list[dict[str, Any]] = [
        {"type": "trace_start", "trace_id": trace_id, "scenario": scenario,
         "input": REFUND_INPUT}]
    for n, tool in enumerate(tools):
        events.append({"type": "tool_call", "trace_id": trace_id, "id": f"c{n}", "tool": tool,
                       "arguments": {"order_id": "A-1"}, "result": {"total": 24.99}})
    events.append({"type": "output", "trace_id": trace_id, "output": output})
    for s in scores:
        events.append({"type": "score", "trace_id": trace_id, **s})
    events.append({"type": "trace_end", "trace_id": trace_id, "duration_ms": 1000})
    return "".join(json.dumps(e) + "\n" for e in events)


@dataclass
class Run:
    code: int
    out: str
    err: str
    results: dict[str, Any]
    folder: Path

    def findings(self, rule: str | None = None) -> list[dict[str, Any]]:
        found = [f for s in self.results["scenarios"] for f in s["findings"]]
        return [f for f in found if rule is None or f["rule"] == rule]

    def scenario(self, sid: str) -> dict[str, Any]:
        return next(s for s in self.results["scenarios"] if s["id"] == sid)


@dataclass
class Project:
    root: Path
    capsys: pytest.CaptureFixture[str]

    def write(self, suite: str, traces: dict[str, str]) -> None:
        (self.root / "agent-eval.yaml").write_text(suite, encoding="utf-8")
        folder = self.root / "traces"
        if folder.exists():
            for old in folder.iterdir():
                old.unlink()
        folder.mkdir(exist_ok=True)
        for name, text in traces.items():
            (folder / name).write_text(text, encoding="utf-8")

    @property
    def store(self) -> Path:
        return self.root / ".agent-eval" / "judgements.jsonl"

    def store_lines(self) -> list[dict[str, Any]]:
        if not self.store.exists():
            return []
        return [json.loads(line) for line in self.store.read_text().splitlines()]

    def cli(self, *args: str, out: str = "out") -> Run:
        self.capsys.readouterr()
        code = main(["run", "--config", "agent-eval.yaml", "--output-dir", out,
                     "--no-timings", "-q", *args])
        captured = self.capsys.readouterr()
        path = self.root / out / "results.json"
        results = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        return Run(code, captured.out, captured.err, results, self.root / out)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> Project:
    (tmp_path / ".git").mkdir()  # the repository root
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test-not-a-secret")
    return Project(tmp_path, capsys)


def judge_block(server: Loopback, *, provider: str = "openai", extra: str = "") -> str:
    model = "gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-6"
    return (f"judge:\n  provider: {provider}\n  model: {model}\n  base_url: {server.url}\n"
            f"  api_key_env: JUDGE_TEST_KEY\n  max_retries: 1\n{extra}")
