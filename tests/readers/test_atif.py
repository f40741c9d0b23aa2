"""The ATIF reader (docs/formats/atif.md). Expected values are read by hand from the
fixture tests/fixtures/atif/trajectory.json and, when it is beside the repository, the
real-world sample other_atif/atif-v1.7__tool-calls.input.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FIXTURES, SAMPLES, retyped_fixture

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import ReadItem, SourceFile, pick_reader
from agent_eval.readers.atif import READER

FIXTURE = FIXTURES / "atif" / "trajectory.json"
SAMPLE = SAMPLES / "other_atif" / "atif-v1.7__tool-calls.input.json"


def source(path: Path) -> SourceFile:
    return SourceFile(str(path), path.name, path.name)


def read_auto(path: Path) -> tuple[str, list[ReadItem]]:
    reader = pick_reader(source(path), "auto")
    assert not isinstance(reader, InputError), reader
    return reader.name, list(reader.read(source(path)))


def traces(items: list[ReadItem]) -> list[Trace]:
    return [i for i in items if isinstance(i, Trace)]


def errors(items: list[ReadItem]) -> list[tuple[str, int]]:
    return [(e.rule, e.line) for e in items if isinstance(e, InputError)]


def test_the_fixture() -> None:
    name, items = read_auto(FIXTURE)
    assert name == "atif" and errors(items) == []
    [t] = traces(items)
    assert t.format == "atif"
    # line 16: the user's text block (the image block on line 17 is not text)
    assert t.input == "Refund order A-9 if it is eligible."
    assert t.output == "Order A-9 is eligible, but the refund was refused."  # line 60
    # lines 28-37: two calls in order; the second's arguments are a JSON string (line 36)
    assert [(c.name, c.arguments, c.id, c.location.line) for c in t.tool_calls] == [
        ("check_eligibility", {"order_id": "A-9"}, "call-check", 28),
        ("issue_refund", {"order_id": "A-9", "amount": 40}, "call-refund", 33),
    ]
    check, refund = t.tool_calls
    # lines 41-47: two text blocks; lines 48-52: content and an error
    assert (check.result, check.ok) == ("eligible\nwindow: 30 days", True)
    assert check.result_location is not None and check.result_location.line == 41
    assert (refund.ok, refund.error, refund.result) == (
        False, "refused", "amount above the agent's limit")
    assert refund.result_location is not None and refund.result_location.line == 48
    # two agent steps (lines 20, 56): step 2's model and metrics (lines 24, 26); step 3 the
    # agent's default model (line 8) and no metrics
    assert [(c.model, c.location.line, c.input_tokens, c.output_tokens, c.cost_usd)
            for c in t.llm_calls] == [("step-model", 20, 420, 30, 0.0021),
                                      ("default-model", 56, None, None, None)]
    assert t.duration_ms == 3000.0  # 09:00:00 (line 13) to 09:00:03 (line 58)
    assert (t.metadata["session_id"], t.metadata["trajectory_id"]) == (
        "atif-refunds-1", "trajectory-refunds-1")

@pytest.mark.usefixtures("samples")
def test_the_sample() -> None:
    name, items = read_auto(SAMPLE)
    assert name == "atif" and errors(items) == []
    [t] = traces(items)
    assert t.format == "atif"
    # line 16: the user's text block (the image block on 17-20 is not text)
    assert t.input == "Inspect the workspace."
    # line 67: the last agent message
    assert t.output == "The workspace contains the expected project files."
    # lines 31-40: two calls in order, with their arguments and ids
    assert [(c.name, c.arguments, c.id, c.location.line) for c in t.tool_calls] == [
        ("shell", {"command": "find . -maxdepth 1 -type f"}, "call-list", 31),
        ("delegate", {"task": "inspect config"}, "call-delegate", 36),
    ]
    shell, delegate = t.tool_calls
    # lines 44-50: two text blocks; lines 51-58: a subagent reference, no content
    assert (shell.result, shell.ok) == ("README.md\npackage.json", True)
    assert shell.result_location is not None and shell.result_location.line == 44
    assert delegate.ok and delegate.result == [
        {"trajectory_path": "subagents/config.json", "session_id": "run-atif-1"}]
    assert delegate.result_location is not None and delegate.result_location.line == 51
    # two agent steps (lines 23, 63): step model on 27, agent default on 8; no metrics
    assert [(c.model, c.location.line, c.input_tokens, c.cost_usd) for c in t.llm_calls] == [
        ("example-step-model", 23, None, None), ("example-default-model", 63, None, None)]
    assert t.tokens is None and t.cost is None
    # timestamps 10:00:00 (line 13) to 10:00:02 (line 65)
    assert t.duration_ms == 2000.0
    assert t.metadata["session_id"] == "run-atif-1"


def test_errors_metrics_and_unmatched(tmp_path: Path) -> None:
    doc = {"schema_version": "ATIF-v1.7", "steps": [
        {"source": "user", "message": "go"},
        {"source": "agent", "message": "", "model_name": "m",
         "metrics": {"prompt_tokens": 10, "completion_tokens": 5, "cost_usd": 0.25},
         "tool_calls": [{"tool_call_id": "a", "function_name": "f", "arguments": "{\"x\":1}"}],
         "observation": {"results": [
             {"source_call_id": "a", "content": "boom", "error": "failed"},
             {"source_call_id": "zzz", "content": "?"}]}},
    ]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc, indent=1))
    items = list(READER.read(source(path)))
    [t] = traces(items)
    [call] = t.tool_calls
    assert (call.arguments, call.ok, call.error, call.result) == ({"x": 1}, False, "failed", "boom")
    [llm] = t.llm_calls
    assert (llm.input_tokens, llm.output_tokens, llm.total_tokens, llm.cost_usd) == (
        10, 5, 15, 0.25)
    assert [r for r, _ in errors(items)] == ["input/unmatched_result"]


def test_final_metrics_are_the_trajectorys_totals(tmp_path: Path) -> None:
    """The regression: final_metrics (ATIF's totals of the trajectory) were not read, so a
    trajectory whose steps carry no metrics had its recorded $5 cost 'not recorded', and a
    max_cost_usd of 1 passed (a warning, exit 0)."""
    doc: dict[str, Any] = {"schema_version": "ATIF-v1.4", "steps": [
        {"source": "user", "message": "go"},
        {"source": "agent", "message": "done"},
    ], "final_metrics": {"total_prompt_tokens": 900, "total_completion_tokens": 100,
                         "total_cached_tokens": 0, "total_cost_usd": 5.0, "total_steps": 2}}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc, indent=1))
    items = list(READER.read(source(path)))
    assert errors(items) == []
    [t] = traces(items)
    assert (t.cost, t.tokens) == (5.0, 900 + 100)
    # totals below the steps' sums are read as those sums (docs/formats.md)
    doc["steps"][1]["metrics"] = {"prompt_tokens": 2000, "completion_tokens": 10,
                                  "cost_usd": 7.5}
    path.write_text(json.dumps(doc, indent=1))
    [t] = traces(list(READER.read(source(path))))
    assert (t.cost, t.tokens) == (7.5, 2010)
    # without final_metrics, the steps' figures alone
    del doc["final_metrics"]
    path.write_text(json.dumps(doc, indent=1))
    [t] = traces(list(READER.read(source(path))))
    assert (t.cost_usd, t.total_tokens, t.cost, t.tokens) == (None, None, 7.5, 2010)


def test_not_a_trajectory(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"schema_version": "ATIF-v1.7"}')
    assert errors(list(READER.read(source(path)))) == [("input/invalid_event", 1)]


# ------------------------------------------- a value of another type: that element only
def test_tool_calls_that_are_not_an_array_are_an_input_error_of_their_step(
        tmp_path: Path) -> None:
    """The regression: ``"tool_calls": 5`` stopped the reader (TypeError: 'int' object is
    not iterable): input/reader_error at line 0, and the trace lost."""
    _, items = retyped_fixture(tmp_path, "atif/trajectory.json", '"tool_calls": [',
                               '"tool_calls": 5, "was": [')
    # step 2 starts on line 20; its results (lines 41, 48) find no call now
    assert errors(items) == [("input/invalid_event", 20), ("input/unmatched_result", 41),
                             ("input/unmatched_result", 48)]
    assert "an ATIF step's tool_calls must be an array, not integer" in str(items[0])
    [t] = traces(items)
    assert t.output == "Order A-9 is eligible, but the refund was refused."  # step 3
    assert len(t.llm_calls) == 2 and t.tool_calls == []


def test_results_that_are_not_an_array_are_an_input_error_of_their_observation(
        tmp_path: Path) -> None:
    _, items = retyped_fixture(tmp_path, "atif/trajectory.json", '"results": [',
                               '"results": "refused", "was": [')
    assert errors(items) == [("input/invalid_event", 39)]  # the observation, line 39
    [t] = traces(items)
    assert [(c.name, c.has_result) for c in t.tool_calls] == [
        ("check_eligibility", False), ("issue_refund", False)]


# ------------------------------------- calls outside an agent step: read, and an error
STRAY = """{"schema_version": "ATIF-v1.7", "steps": [
 {"source": "user", "message": "go"},
 {"source": "system", "message": "",
  "tool_calls": [{"tool_call_id": "a", "function_name": "drop_db", "arguments": {}}],
  "observation": {"results": [{"source_call_id": "a", "content": "dropped"}]}},
 {"message": "",
  "tool_calls": [{"tool_call_id": "b", "function_name": "rm_rf", "arguments": {"p": "/"}}]},
 {"source": "assistant", "message": "the secret is 42"},
 {"source": "agent", "message": "Done."}
]}
"""


def test_calls_of_a_step_that_is_no_agent_step_are_read_and_an_input_error(
        tmp_path: Path) -> None:
    """The regression: only steps whose source is exactly 'agent' were read for calls, so
    the calls of a system step, of a step without source or with another source
    ('Agent', 'assistant') vanished without a word: a blocked drop_db passed (exit 0)."""
    path = tmp_path / "t.json"
    path.write_text(STRAY)
    items = list(READER.read(source(path)))
    [t] = traces(items)
    assert [(c.name, c.arguments, c.location.line) for c in t.tool_calls] == [
        ("drop_db", {}, 4), ("rm_rf", {"p": "/"}, 7)]
    loc = t.tool_calls[0].result_location
    assert (t.tool_calls[0].result, loc and loc.line) == ("dropped", 5)
    assert errors(items) == [("input/invalid_event", 4), ("input/invalid_event", 6),
                             ("input/invalid_event", 7), ("input/invalid_event", 8)]
    said = [str(e) for e in items if isinstance(e, InputError)]
    assert "tool_calls in a step whose source is 'system'" in said[0]
    assert "an ATIF step's source must be 'system', 'user' or 'agent', not null" in said[1]
    assert "tool_calls in a step whose source is null" in said[2]
    assert "source must be 'system', 'user' or 'agent', not 'assistant'" in said[3]
    assert (t.input, t.output) == ("go", "Done.")
    assert len(t.llm_calls) == 1  # the agent step only
