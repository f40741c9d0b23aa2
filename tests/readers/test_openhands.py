"""The OpenHands reader (docs/formats/openhands.md). Expected values are read by hand
from the fixture tests/fixtures/openhands/conversation.json and, when it is beside the
repository, the real-world sample other_openhands/openhands__tool-calls.input.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import FIXTURES, SAMPLES, retyped_fixture

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import IgnoredEvents, ReadItem, SourceFile, pick_reader
from agent_eval.readers.openhands import READER

FIXTURE = FIXTURES / "openhands" / "conversation.json"
SAMPLE = SAMPLES / "other_openhands" / "openhands__tool-calls.input.json"


def source(path: Path) -> SourceFile:
    return SourceFile(str(path), path.name, path.name)


def traces(items: list[ReadItem]) -> list[Trace]:
    return [i for i in items if isinstance(i, Trace)]


def errors(items: list[ReadItem]) -> list[tuple[str, int]]:
    return [(e.rule, e.line) for e in items if isinstance(e, InputError)]


def test_the_fixture() -> None:
    reader = pick_reader(source(FIXTURE), "auto")
    assert not isinstance(reader, InputError) and reader.name == "openhands"
    items = list(reader.read(source(FIXTURE)))
    assert errors(items) == []
    [t] = traces(items)
    assert t.format == "openhands"
    assert t.input == "Raise the refund limit to 600 and run the tests."  # line 9
    assert t.output == "The limit is 500; raising it was not approved."  # line 59
    # line 12: terminal, arguments the JSON string on line 19; line 34: file_editor with
    # the action's fields (lines 39-43) and no tool_call_id
    assert [(c.name, c.arguments, c.id, c.location.line) for c in t.tool_calls] == [
        ("terminal", {"command": "grep -n LIMIT src/refund.py"}, "call_oh_grep", 12),
        ("file_editor", {"path": "src/refund.py", "content": "LIMIT = 600"}, None, 34),
    ]
    grep, edit = t.tool_calls
    # lines 21-33: the observation, two text blocks; 08:00:01 -> 08:00:01.500
    assert (grep.ok, grep.result, grep.latency_ms) == (True, "3:LIMIT = 500\nexit code 0",
                                                        500.0)
    assert grep.result_location is not None and grep.result_location.line == 21
    # lines 45-51: the user rejected the edit; 08:00:02 -> 08:00:04
    assert (edit.ok, edit.error, edit.latency_ms) == (
        False, "rejected: Limits need a second approver.", 2000.0)
    assert edit.result_location is not None and edit.result_location.line == 45
    assert t.llm_calls == [] and t.tokens is None and t.cost is None
    assert t.duration_ms == 5000.0  # 08:00:00 (line 5) to 08:00:05 (line 55)

@pytest.mark.usefixtures("samples")
def test_the_sample() -> None:
    reader = pick_reader(source(SAMPLE), "auto")
    assert not isinstance(reader, InputError) and reader.name == "openhands"
    items = list(reader.read(source(SAMPLE)))
    assert errors(items) == []
    [t] = traces(items)
    assert t.format == "openhands"
    assert t.input == "Inspect and update the entry point."  # line 9
    assert t.output == "I inspected the workspace; the edit was rejected."  # line 59
    # line 12: terminal, arguments the JSON string on line 19; line 34: file_editor with
    # the action's fields (lines 39-43) and no tool_call_id
    assert [(c.name, c.arguments, c.id, c.location.line) for c in t.tool_calls] == [
        ("terminal", {"command": "pwd"}, "call_oh_1", 12),
        ("file_editor", {"path": "src/app.ts", "content": "updated"}, None, 34),
    ]
    term, edit = t.tool_calls
    # lines 21-33: the observation, two text blocks, is_error false; 10:00:01 -> 10:00:02
    assert (term.ok, term.result, term.latency_ms) == (True, "/workspace\n\nready", 1000.0)
    assert term.result_location is not None and term.result_location.line == 21
    # lines 45-51: the user rejected the edit; 10:00:03 -> 10:00:04
    assert (edit.ok, edit.error, edit.latency_ms) == (
        False, "rejected: Edit was not approved.", 1000.0)
    assert edit.result_location is not None and edit.result_location.line == 45
    assert t.llm_calls == [] and t.tokens is None and t.cost is None
    assert t.duration_ms == 5000.0  # 10:00:00 (line 5) to 10:00:05 (line 55)


def test_errors_and_unknown(tmp_path: Path) -> None:
    events = [
        {"kind": "ActionEvent", "id": "a1", "tool_name": "terminal", "tool_call_id": "t1",
         "tool_call": {"arguments": {"command": "ls"}}},
        {"kind": "ObservationEvent", "action_id": "a1",
         "observation": {"content": "boom", "is_error": True}},
        {"kind": "ActionEvent", "id": "a2", "tool_name": "terminal", "tool_call_id": "t2",
         "tool_call": {"arguments": "{}"}},
        {"kind": "AgentErrorEvent", "tool_call_id": "t2", "error": "bad tool"},
        {"kind": "ObservationEvent", "action_id": "nope", "observation": {"content": "?"}},
        {"kind": "SomethingNew"},
    ]
    path = tmp_path / "e.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    items = list(READER.read(source(path)))
    [t] = traces(items)
    assert [(c.ok, c.error) for c in t.tool_calls] == [(False, "boom"), (False, "bad tool")]
    assert errors(items) == [("input/unmatched_result", 5)]
    assert [i.count for i in items if isinstance(i, IgnoredEvents)] == [1]


# ------------------------------------------- a value of another type: that element only
def test_a_kind_that_is_not_a_string_is_an_input_error_of_its_event(tmp_path: Path) -> None:
    """The regression: ``"kind": {}`` stopped the reader (TypeError: unhashable type:
    'dict'): input/reader_error at line 0, and the conversation lost."""
    _, items = retyped_fixture(tmp_path, "openhands/conversation.json",
                               '"kind": "MessageEvent",\n    "id": "message-1"',
                               '"kind": {},\n    "id": "message-1"')
    assert errors(items) == [("input/invalid_event", 2)]  # the first event, line 2
    assert "an OpenHands event's kind must be a string, not object" in str(items[0])
    [t] = traces(items)
    assert t.input is None  # that event was the user's request
    assert [c.name for c in t.tool_calls] == ["terminal", "file_editor"]
    assert not any(isinstance(i, IgnoredEvents) for i in items)  # reported, not ignored


# --------------------------------------------- the finish tool's message is the answer
def _said(text: str) -> dict[str, object]:
    return {"kind": "MessageEvent", "source": "agent",
            "llm_message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}


def _finish(**fields: object) -> dict[str, object]:
    return {"kind": "ActionEvent", "source": "agent", "tool_name": "finish", **fields}


@pytest.mark.parametrize(("events", "output"), [
    # the action's message (the SDK's FinishAction), after an agent message
    ([_said("Let me look."),
      _finish(tool_call_id="c1", action={"kind": "FinishAction", "message": "It is hunter2"},
              tool_call={"arguments": '{"message": "It is hunter2"}'})], "It is hunter2"),
    # no action object: the call's arguments
    ([_said("Let me look."), _finish(tool_call={"arguments": '{"message": "It is hunter2"}'})],
     "It is hunter2"),
    # guards, which the old reading passed too: the finish message must not win over a
    # later agent message, nor an empty one over the answer before it
    # an agent message after the finish action is the latest answer
    ([_finish(action={"kind": "FinishAction", "message": "It is hunter2"}), _said("Bye.")],
     "Bye."),
    # a finish without a message leaves the answer before it
    ([_said("Let me look."), _finish(action={"kind": "FinishAction", "message": ""})],
     "Let me look."),
])
def test_the_finish_tools_message_is_the_output(tmp_path: Path, events: list[object],
                                                output: str) -> None:
    """The regression: only agent MessageEvents were the output, so an agent that answered
    through the finish tool (how an OpenHands agent usually ends: the message 'to send to
    the user') had its earlier 'Let me look.' as output, and a not_contains of the secret
    it told passed."""
    path = tmp_path / "c.json"
    path.write_text(json.dumps(events))
    items = list(READER.read(source(path)))
    assert errors(items) == []
    [t] = traces(items)
    assert t.output == output
    assert [c.name for c in t.tool_calls] == ["finish"]
