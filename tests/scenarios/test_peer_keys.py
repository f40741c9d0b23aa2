"""Scenario keys of issue 17 §1: tool_categories (EvalView), suite weights by category,
percentage thresholds, and handoffs between agents (CIAgent's expected_handoff and
max_handoff_count; OpenAI Agents SDK handoff spans)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.conftest import FIXTURES, events

from agent_eval.api import evaluate as run_suite
from agent_eval.api import load_suite, load_traces
from agent_eval.convert import dumps, trace_events
from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import READERS, SourceFile, read_file

from .scenario_harness import Workspace, at, rules_of, scenario, trace

HEAD = 'version: "1"\nsuite: s\ntraces: traces/*.jsonl\n'
# EvalView's documented categories (core/tool_categories.py DEFAULT_CATEGORIES), the part
# its goosebench example uses.
GROUPS = """tool_groups:
  file_list: [bash, list_directory, list_dir, ls, find, directory_tree, analyze]
  file_read: [bash, text_editor, read_file, read, view, cat, view_file, str_replace_editor]
"""


def test_tool_categories_count_like_expected_tools(ws: Workspace) -> None:
    """EvalView: accuracy = (exact tools found + categories satisfied) / (tools +
    categories); a category is satisfied by a call to any of its tools."""
    suite = HEAD + GROUPS + """scenarios:
  - id: LIST
    expect:
      tools: [summarize]
      tool_categories: [file_list, file_read]
"""
    r = ws.run(suite, {"LIST.jsonl": trace("t", "LIST", ["list_dir", "summarize"])})
    s = scenario(r, "LIST")
    assert s["metrics"]["tool_recall"] == 0.666667  # summarize and file_list of three
    (f,) = s["findings"]
    assert f["rule"] == "scenario/tool_recall"
    assert f["message"] == "Expected tool not called: @file_read"
    assert at(f) == ws.line("file_read", after="tool_categories")


def test_unknown_category_is_a_config_error(ws: Workspace) -> None:
    import pytest

    from agent_eval.errors import ConfigError

    ws.write(HEAD + GROUPS + "scenarios:\n  - id: A\n    expect:\n"
             "      tool_categories: [file_lst]\n", {})
    with pytest.raises(ConfigError) as exc:
        load_suite(ws.root / "agent-eval.yaml")
    (problem,) = exc.value.problems
    assert problem.startswith("agent-eval.yaml:10:25:")
    assert "unknown tool group '@file_lst' (did you mean '@file_list'?)" in problem


def test_weights_by_category(ws: Workspace) -> None:
    suite = HEAD + """weights:
  tool_accuracy: 1
  output_quality: 1
  by_category:
    adversarial: {tool_accuracy: 0, output_quality: 1}
scenarios:
  - id: PLAIN
    expect: {tools: [a, b], output: {contains: [ok]}}
  - id: ATTACK
    category: adversarial
    expect: {tools: [a, b], output: {contains: [ok]}}
  - id: OWN
    category: adversarial
    weights: {tool_accuracy: 3}
    expect: {tools: [a, b], output: {contains: [ok]}}
"""
    r = ws.run(suite, {"PLAIN.jsonl": trace("p", "PLAIN", ["a"]),
                       "ATTACK.jsonl": trace("x", "ATTACK", ["a"]),
                       "OWN.jsonl": trace("o", "OWN", ["a"])})
    # recall 0.5, output 1.0: suite weights 1/1 -> 75; adversarial 0/1 -> 100;
    # the scenario's own tool_accuracy 3 over the category's output 1 -> (1.5+1)/4 = 62.5
    assert [scenario(r, i)["score"] for i in ("PLAIN", "ATTACK", "OWN")] == [75, 100, 62.5]


def test_percentages_and_fractions_mean_the_same(ws: Workspace) -> None:
    base = HEAD + "scenarios:\n  - id: A\n    expect: {tools: [a, b, c, d]}\n"
    traces = {"A.jsonl": trace("t", "A", ["a", "b", "c"])}
    for value in ("0.9", "90", "'90%'"):
        r = ws.run(base + f"    thresholds: {{min_tool_recall: {value}}}\n", traces)
        (f,) = [f for f in scenario(r, "A")["findings"] if f["rule"] == "scenario/threshold"]
        assert f["message"] == "tool_recall = 0.75 is below min_tool_recall: 0.9", value
    r = ws.run(base + "    thresholds: {min_tool_recall: 75}\n"
               "pass_criteria:\n  blocking: {min_pass_rate: 100}\n", traces)
    assert scenario(r, "A")["status"] == "pass" and r.verdict != "fail"


HANDOFF = HEAD + """scenarios:
  - id: ROUTE
    expect:
      handoffs: [billing_agent]
      max_handoffs: 1
"""


def handoff_trace(*targets: str) -> str:
    items = [{"type": "trace_start", "trace_id": "h", "scenario": "ROUTE"}]
    items += [{"type": "handoff", "trace_id": "h", "from_agent": "triage", "to_agent": t}
              for t in targets]
    items += [{"type": "output", "trace_id": "h", "output": "done"},
              {"type": "trace_end", "trace_id": "h"}]
    return events(*items)


def test_expected_handoff_and_max(ws: Workspace) -> None:
    ok = scenario(ws.run(HANDOFF, {"t.jsonl": handoff_trace("billing_agent")}), "ROUTE")
    assert ok["status"] == "pass" and ok["findings"] == []
    s = scenario(ws.run(HANDOFF, {"t.jsonl": handoff_trace("faq_agent", "triage")}), "ROUTE")
    assert s["status"] == "fail"
    assert [(f["rule"], f["message"], f["trace"]["line"]) for f in s["findings"]] == [
        ("scenario/handoff", "2 handoffs, more than max_handoffs 1 (handoff #2 to triage is "
         "over the limit)", 3),
        ("scenario/handoff", "Expected handoff to billing_agent did not happen (handoffs "
         "to: faq_agent, triage)", 5)]
    assert at(s["findings"][1]) == ws.line("billing_agent")
    assert at(s["findings"][0]) == ws.line("max_handoffs")


def test_handoff_severity_warning_warns(ws: Workspace) -> None:
    suite = HANDOFF + "      handoff_severity: warning\n"
    s = scenario(ws.run(suite, {"t.jsonl": handoff_trace("faq_agent")}), "ROUTE")
    assert s["status"] == "warn"
    assert rules_of(s) == ["scenario/handoff"]
    assert s["findings"][0]["severity"] == "warning"


def test_openai_agents_handoff_spans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Agents SDK tracing spans: a handoff span becomes a Handoff at its line."""
    spans = [
        {"object": "trace.span", "id": "s1", "trace_id": "trace_1", "parent_id": None,
         "started_at": "2025-01-01T00:00:00Z", "ended_at": "2025-01-01T00:00:01Z",
         "span_data": {"type": "agent", "name": "Triage"}},
        {"object": "trace.span", "id": "s2", "trace_id": "trace_1", "parent_id": "s1",
         "started_at": "2025-01-01T00:00:00.500Z", "ended_at": "2025-01-01T00:00:00.600Z",
         "span_data": {"type": "handoff", "from_agent": "Triage", "to_agent": "Billing"}},
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in spans), encoding="utf-8")
    (tmp_path / "agent-eval.yaml").write_text(
        "suite: s\nscenarios:\n  - id: R\n    traces: spans.jsonl\n    expect:\n"
        "      handoffs: [billing]\n      max_handoffs: 0\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    suite = load_suite(tmp_path / "agent-eval.yaml")
    items = list(load_traces([path], suite))
    (t,) = [i for i in items if isinstance(i, Trace)]
    assert [(h.from_agent, h.to_agent, h.location.line) for h in t.handoffs] == [
        ("Triage", "Billing", 2)]
    assert t.handoffs_recorded
    r = run_suite(suite, items)
    s = scenario(r, "R")
    # "billing" matches Billing (normalized names); max 0 is exceeded at line 2
    assert [(f["rule"], f["trace"]["line"]) for f in s["findings"]] == [("scenario/handoff", 2)]


def test_a_native_trace_without_handoff_events_had_none(ws: Workspace) -> None:
    suite = HEAD + "scenarios:\n  - id: ROUTE\n    expect: {max_handoffs: 0}\n"
    s = scenario(ws.run(suite, {"t.jsonl": handoff_trace()}), "ROUTE")
    assert s["status"] == "pass" and s["findings"] == []


UNRECORDED = ("the trace records no handoffs (its format, openai_chat, does not hold them), "
              "so it is not known whether it was met; check traces of a format that records "
              "handoffs (docs/scenarios.md)")


@pytest.mark.parametrize("severity", ["error", "warning"])
def test_handoff_checks_cannot_pass_on_a_format_without_handoffs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, severity: str) -> None:
    """An OpenAI chat request records no handoffs: that it holds none says nothing, so
    max_handoffs (a limit it would always have met) and expect.handoffs cannot be checked:
    a finding each at the key, the scenario not passed (max_handoffs: 0 passed before)."""
    shutil.copy(FIXTURES / "openai_chat" / "request.json", tmp_path / "request.json")
    text = ("suite: s\nscenarios:\n  - id: R\n    traces: request.json\n    expect:\n"
            "      handoffs: [billing]\n      max_handoffs: 0\n")
    if severity == "warning":
        text += "      handoff_severity: warning\n"
    (tmp_path / "agent-eval.yaml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    suite = load_suite(tmp_path / "agent-eval.yaml")
    s = scenario(run_suite(suite, load_traces([tmp_path / "request.json"], suite)), "R")
    assert s["status"] == ("fail" if severity == "error" else "warn")
    assert [(f["rule"], f["severity"], f["message"], f["config"]["line"])
            for f in s["findings"]] == [
        ("scenario/handoff", severity,
         f"Expected handoff to billing cannot be checked: {UNRECORDED}", 6),
        ("scenario/handoff", severity, f"max_handoffs 0 cannot be checked: {UNRECORDED}", 7)]


def test_converted_traces_keep_their_handoffs_unrecorded(tmp_path: Path) -> None:
    """`convert` of a format without handoffs writes handoffs_recorded: false, so the
    native file reads back as not recorded (a native trace records them otherwise)."""
    src = SourceFile(str(FIXTURES / "openai_chat" / "request.json"), "request.json",
                     "request.json")
    (t,) = [i for i in read_file(READERS["openai_chat"], src) if isinstance(i, Trace)]
    assert not t.handoffs_recorded
    out = tmp_path / "t.jsonl"
    out.write_text("".join(dumps(e) + "\n" for e in trace_events(t)), encoding="utf-8")
    (back,) = [i for i in read_file(READERS["native"], SourceFile(str(out), "t.jsonl", "t"))
               if isinstance(i, Trace)]
    assert not back.handoffs_recorded and back.handoffs == []


@pytest.mark.parametrize(("value", "error"), [
    ("true", None), ("false", None),
    ('"no"', "'handoffs_recorded' must be true or false, not string; the trace's handoffs "
             "are taken as not recorded, so its scenario's handoff checks cannot run")])
def test_native_handoffs_recorded(tmp_path: Path, value: str, error: str | None) -> None:
    out = tmp_path / "t.jsonl"
    start = '{"type":"trace_start","trace_id":"a","handoffs_recorded":' + value + "}"
    out.write_text(start + '\n{"type":"trace_end","trace_id":"a"}\n', encoding="utf-8")
    items = list(read_file(READERS["native"], SourceFile(str(out), "t.jsonl", "t")))
    (t,) = [i for i in items if isinstance(i, Trace)]
    assert t.handoffs_recorded is (value == "true")
    assert [(e.rule, e.line, e.message) for e in items if isinstance(e, InputError)] == (
        [] if error is None else [("input/invalid_event", 1, error)])
