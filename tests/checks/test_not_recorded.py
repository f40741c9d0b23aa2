"""Arguments a trace did not record (issue 10 §6): an Inspect log with a tool's result but
not its call, an OpenTelemetry span without the opt-in gen_ai.tool.call.arguments, an
Agents SDK span without input, a Vercel AI SDK span under recordInputs: false. They are
an ``args_valid/not_recorded`` warning (not an ``args_valid/not_an_object`` error), a
``scenario/not_recorded`` warning for a scenario's ``args``, and ``convert --to native``
keeps them apart from ``"arguments": null``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_eval._cli import main
from agent_eval.api import load_suite, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.model import Trace
from agent_eval.readers import read_sources
from agent_eval.readers.base import SourceFile
from agent_eval.results import Results

SUITE = """\
version: "1"
suite: unrecorded
traces: traces/*
tests:
  - id: args
    metric: args_valid
    policy: policy.yaml
scenarios:
  - id: S
    traces: traces/*
    expect:
      args: {bash: {cmd: ls}}
"""
POLICY = """\
version: "1"
tools:
  bash:
    arguments:
      cmd: {type: string, required: true}
"""

# an Inspect eval log whose sample has the tool's result (role: tool) but no assistant
# message with the call: lines counted by hand; the tool message starts on line 9
INSPECT_LOG = """\
{
  "version": 2,
  "status": "success",
  "eval": {"task": "t", "model": "m"},
  "samples": [
    {
      "id": 1, "epoch": 1, "input": "list files",
      "messages": [
        {"role": "tool", "tool_call_id": "bash_1", "function": "bash", "content": "a b"}
      ]
    }
  ]
}
"""


def workspace(root: Path, traces: dict[str, str]) -> Results:
    (root / ".git").mkdir(exist_ok=True)
    (root / "agent-eval.yaml").write_text(SUITE)
    (root / "policy.yaml").write_text(POLICY)
    (root / "traces").mkdir(exist_ok=True)
    for name, text in traces.items():
        (root / "traces" / name).write_text(text)
    suite = load_suite(root / "agent-eval.yaml")
    files, errors = suite_sources(suite)
    return evaluate_files(suite, files, errors, timings=False)


def test_inspect_result_without_call_is_a_warning(tmp_path: Path) -> None:
    results = workspace(tmp_path, {"log.json": INSPECT_LOG})
    assert results.input_errors == []
    (v,) = results.violations
    assert (v.rule, v.severity, v.tool, v.trace and v.trace.line) == (
        "args_valid/not_recorded", "warning", "bash", 9)
    assert (v.config.file, v.config.line, v.config.col) == ("policy.yaml", 3, 3)
    assert v.message == ("bash: arguments not recorded in the trace; the policy could not "
                         "be checked for this call")
    # the policy could not run for the call: never a pass, but not a violation either
    assert results.tests[0].status == "warn" and results.verdict == "warn"
    (s,) = results.scenarios
    (f,) = s.findings
    assert (f.rule, f.severity) == ("scenario/not_recorded", "warning")
    assert f.message == "bash: arguments not recorded: args cannot be compared " \
                           "(args_mode: subset)"
    assert s.status == "warn"  # could not be checked: never a pass


def test_a_note_test_keeps_it_a_note(tmp_path: Path) -> None:
    """The test's severity caps the finding's, as it does its violations'."""
    (tmp_path / ".git").mkdir()
    results = workspace(tmp_path, {"log.json": INSPECT_LOG})  # writes the files
    (tmp_path / "agent-eval.yaml").write_text(
        SUITE.replace("    policy: policy.yaml\n", "    policy: policy.yaml\n    severity: note\n"))
    suite = load_suite(tmp_path / "agent-eval.yaml")
    files, errors = suite_sources(suite)
    results = evaluate_files(suite, files, errors, timings=False)
    (v,) = results.violations
    assert (v.rule, v.severity) == ("args_valid/not_recorded", "note")
    assert results.tests[0].status == "pass"


def test_null_arguments_are_an_empty_object_not_unrecorded(tmp_path: Path) -> None:
    native = "".join(json.dumps(e) + "\n" for e in (
        {"type": "trace_start", "trace_id": "n"},
        {"type": "tool_call", "tool": "bash", "arguments": None},
        {"type": "trace_end"}))
    results = workspace(tmp_path, {"t.jsonl": native})
    # {} lacks the required cmd: a real violation, located at `required: true`
    assert [(v.rule, v.severity) for v in results.violations] == [
        ("args_valid/required", "error")]


def otlp_span(attributes: dict[str, Any]) -> str:
    attrs = [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()]
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
            "name": "execute_tool bash", "startTimeUnixNano": "1000000000",
            "endTimeUnixNano": "2000000000", "attributes": attrs}
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n"


@pytest.mark.parametrize(("name", "text", "recorded"), [
    ("inspect.json", INSPECT_LOG, False),
    ("span.otlp.jsonl", otlp_span({"gen_ai.operation.name": "execute_tool",
                                   "gen_ai.tool.name": "bash"}), False),
    ("span2.otlp.jsonl", otlp_span({"gen_ai.operation.name": "execute_tool",
                                    "gen_ai.tool.name": "bash",
                                    "gen_ai.tool.call.arguments": '{"cmd": "ls"}'}), True),
])
def test_readers_tell_unrecorded_arguments(tmp_path: Path, name: str, text: str,
                                           recorded: bool) -> None:
    (tmp_path / name).write_text(text)
    items = list(read_sources([SourceFile(str(tmp_path / name), name, name)], "auto"))
    (trace,) = [i for i in items if isinstance(i, Trace)]
    (call,) = trace.tool_calls
    assert call.name == "bash" and call.arguments_recorded is recorded
    assert (call.arguments is None) is not recorded


def test_agents_sdk_and_vercel_spans_without_inputs() -> None:
    from agent_eval.model import Location
    from agent_eval.readers.openai_agents import _function_call

    loc = Location("f", 1)
    bare = _function_call({"name": "bash", "output": "x"}, None, loc, None)
    assert (bare.arguments, bare.arguments_recorded) == (None, False)
    full = _function_call({"name": "bash", "input": '{"cmd": "ls"}'}, None, loc, None)
    assert (full.arguments, full.arguments_recorded) == ({"cmd": "ls"}, True)


def test_convert_keeps_not_recorded_apart_from_null(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "log.json").write_text(INSPECT_LOG)
    (tmp_path / "null.jsonl").write_text(
        '{"type":"tool_call","tool":"bash","arguments":null}\n')
    monkeypatch.chdir(tmp_path)
    assert main(["convert", "log.json", "null.jsonl", "-o", "out.jsonl", "-q"]) == 0
    calls = [e for e in map(json.loads, (tmp_path / "out.jsonl").read_text().splitlines())
             if e["type"] == "tool_call"]
    assert [(c.get("arguments", "-"), c.get("arguments_recorded", "-")) for c in calls] == [
        ("-", False), ({}, "-")]
    # and the native reader reads it back the same
    items = list(read_sources([SourceFile(str(tmp_path / "out.jsonl"), "out.jsonl",
                                          "out.jsonl")], "native"))
    back = [c for t in items if isinstance(t, Trace) for c in t.tool_calls]
    assert [(c.arguments, c.arguments_recorded) for c in back] == [(None, False), ({}, True)]
    capsys.readouterr()


def test_explain_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "args_valid/not_recorded"]) == 0
    out = capsys.readouterr().out
    assert "did not record" in out and '"arguments": null' in out
    assert main(["explain", "args_valid/not_an_object"]) == 0
    assert "args_valid/not_recorded" in capsys.readouterr().out
