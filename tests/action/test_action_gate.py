"""What the action tells later steps agrees with its gate: the ``violations`` and
``new-violations`` outputs count the findings of every kind (rule tests, scenarios,
criteria) of severity error or warning, with a baseline and without."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from action_harness import GIT_ENV, FakeGitHub, pr_payload, require_node_tools, run_action

# one scenario, no rule test: what it finds is a scenario finding, never counts.violations
READ_ONLY = """version: "1"
suite: s
traces: traces/*.jsonl
scenarios:
  - id: READ-ONLY
    expect: {forbidden_tools: [delete_*]}
"""


def _trace(tool: str, scenario: str = "READ-ONLY") -> str:
    return (f'{{"type":"trace_start","trace_id":"r-1","scenario":"{scenario}"}}\n'
            f'{{"type":"tool_call","id":"c1","tool":"{tool}","arguments":{{}}}}\n'
            '{"type":"output","output":"ok"}\n'
            '{"type":"trace_end"}\n')


def _workspace(root: Path, files: dict[str, str]) -> Path:
    """A git repository at ``root`` holding ``files``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = {**os.environ, **GIT_ENV, "HOME": str(root.parent)}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "x"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


# ------------------------------------------------------------- violations, new-violations
def test_scenario_findings_are_violations_with_and_without_a_baseline(
        tmp_path: Path, github: FakeGitHub) -> None:
    # the base run: the same suite, a read-only trace: it passes with one note (the
    # forbidden delete_* was never called: coverage/unexercised), which is no violation
    base = _workspace(tmp_path / "base", {"agent-eval.yaml": READ_ONLY,
                                          "traces/t.jsonl": _trace("read_file")})
    run = run_action(tmp_path, base, github.url, "pull_request", pr_payload("opened"),
                     inputs={"baseline": "none", "comment": "false", "upload-sarif": "false"},
                     name="base-run")
    assert run.code == 0, run.stderr
    assert (run.outputs["verdict"], run.outputs["violations"],
            run.outputs["new-violations"]) == ("pass", "0", "0")
    base_results = (base / "agent-eval-results" / "results.json").read_text(encoding="utf-8")
    assert '"coverage/unexercised"' in base_results  # the note is there, not counted

    # the head: delete_everything breaks the scenario's forbidden_tools (one error finding
    # of the scenario; results.json counts.violations, the rule tests' count, stays 0)
    ws = _workspace(tmp_path / "ws", {"agent-eval.yaml": READ_ONLY,
                                      "traces/t.jsonl": _trace("delete_everything"),
                                      "base.json": base_results})
    file_baseline = {"baseline": "file", "baseline-file": "base.json"}
    for name, baseline, regressions in (("no-baseline", {"baseline": "none"}, "0"),
                                        ("file-baseline", file_baseline, "1")):
        run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                         inputs={**baseline, "comment": "false", "upload-sarif": "false"},
                         name=name)
        assert run.code == 1, (name, run.stderr)
        assert run.outputs["verdict"] == "fail"
        # one violation, new whether or not there is a baseline (the base run had none)
        assert run.outputs["violations"] == "1", name
        assert run.outputs["new-violations"] == "1", name
        assert run.outputs["regressions"] == regressions, name


@pytest.fixture(autouse=True)
def _tools() -> None:
    require_node_tools()
