"""Policy files (issue 17 §1): shared top-level `$defs` referenced from several tools, and
`enforcement.unconstrained_tools: deny | warn | allow` (Assay's policy v2 keys)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from agent_eval.api import load_suite
from agent_eval.errors import ConfigError
from agent_eval.model import Location, ToolCall, Trace

F = "traces/t.jsonl"


def setup(tmp_path: Path, policy: str, severity: str = "error", strict: bool = False) -> Any:
    (tmp_path / "policy.yaml").write_text(textwrap.dedent(policy).lstrip("\n"),
                                          encoding="utf-8")
    (tmp_path / "agent-eval.yaml").write_text(
        f"suite: s\ntests:\n  - id: args\n    metric: args_valid\n    policy: policy.yaml\n"
        f"    severity: {severity}\n    strict: {str(strict).lower()}\n", encoding="utf-8")
    return load_suite(tmp_path / "agent-eval.yaml")


def trace(*calls: tuple[str, dict[str, Any]]) -> Trace:
    return Trace("t", F, Location(F, 1), Location(F, 9), tool_calls=[
        ToolCall(n, a, Location(F, k + 1)) for k, (n, a) in enumerate(calls)])


SHARED = """
    version: "1"
    $defs:
      safe_path: {type: string, pattern: "^/workspace/", max_length: 20}
    tools:
      read_file:
        arguments:
          path: {$ref: "#/$defs/safe_path"}
      write_file:
        schema:
          type: object
          properties:
            target: {$ref: "#/$defs/safe_path"}
"""


def test_shared_defs_are_used_by_several_tools(tmp_path: Path) -> None:
    s = setup(tmp_path, SHARED)
    found = s.tests[0].run(trace(("read_file", {"path": "/etc/passwd"}),
                                 ("write_file", {"target": "/workspace/much-too-long"}),
                                 ("read_file", {"path": "/workspace/"})))
    # each violation points at the keyword inside the shared definition (line 3)
    assert [(f.rule, f.tool, f.config.line, f.trace and f.trace.line) for f in found] == [
        ("args_valid/pattern", "read_file", 3, 1),
        ("args_valid/max_length", "write_file", 3, 2)]
    assert found[0].config.key_path == "$defs.safe_path.pattern"


def test_defs_problems_are_reported_in_the_defs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        setup(tmp_path, """
            version: "1"
            $defs:
              p: {type: strng}
            tools:
              a:
                arguments:
                  x: {$ref: "#/$defs/p"}
                  y: {$ref: "#/$defs/missing"}
        """)
    text = "\n".join(exc.value.problems)
    assert "policy.yaml:3:" in text and "strng" in text
    assert "policy.yaml:8:" in text and "missing" in text


@pytest.mark.parametrize(("mode", "severity"), [("deny", "error"), ("warn", "warning"),
                                                ("allow", None)])
def test_unconstrained_tools(tmp_path: Path, mode: str, severity: str | None) -> None:
    s = setup(tmp_path, f"""
        version: "1"
        tools:
          read_file:
            arguments: {{path: {{type: string}}}}
        enforcement:
          unconstrained_tools: {mode}
    """)
    found = s.tests[0].run(trace(("read_file", {"path": "a"}), ("run_command", {"c": "ls"})))
    if severity is None:
        assert found == []
        assert not s.tests[0].touches("run_command")
        return
    (f,) = found
    assert (f.rule, f.severity, f.tool, f.config.line, f.config.file) == (
        "args_valid/unconstrained_tool", severity, "run_command", 6, "policy.yaml")
    assert f.message == (f"run_command: no policy key of policy.yaml constrains this tool "
                         f"(unconstrained_tools: {mode})")
    assert s.tests[0].touches("run_command")


def test_unconstrained_capped_by_test_severity_and_strict_wins(tmp_path: Path) -> None:
    policy = """
        version: "1"
        tools: {}
        enforcement: {unconstrained_tools: deny}
    """
    (f,) = setup(tmp_path, policy, severity="warning").tests[0].run(trace(("x", {})))
    assert f.severity == "warning"
    (g,) = setup(tmp_path, policy, strict=True).tests[0].run(trace(("x", {})))
    assert g.rule == "args_valid/unknown_tool"


def test_enforcement_typo_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        setup(tmp_path, """
            version: "1"
            tools: {}
            enforcement: {unconstrained_tools: block}
        """)
    assert "policy.yaml:3:" in exc.value.problems[0]
    assert "'deny', 'warn' or 'allow'" in exc.value.problems[0]


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_ref_to_its_own_argument_is_a_config_error_of_validate_and_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        command: str) -> None:
    """The security review's reproduction: `validate` said ok and `run` crashed
    (RecursionError, "internal error ... this is a bug"); both now stop at the $ref's line."""
    from agent_eval._cli import main

    (tmp_path / ".git").mkdir()
    (tmp_path / "traces").mkdir()
    (tmp_path / "policy.yaml").write_text(
        'version: "1"\ntools:\n  t:\n    arguments:\n      u: {$ref: "#/tools/t/arguments/u"}\n',
        encoding="utf-8")
    (tmp_path / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\ntraces: traces/*.jsonl\n'
        "tests: [{id: a, metric: args_valid, policy: policy.yaml}]\n", encoding="utf-8")
    (tmp_path / "traces" / "a.jsonl").write_text(
        '{"type":"tool_call","tool":"t","arguments":{"u":1}}\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main([command]) == 2
    out = capsys.readouterr()
    assert out.err == (
        "error: policy.yaml:5:11: '#/tools/t/arguments/u' refers back to itself without "
        "descending into a property or an item; reach it again only under 'properties', "
        "'items' or the like, or remove this $ref\n")
