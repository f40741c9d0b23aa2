"""The Gemini CLI reader (docs/formats/gemini_cli.md). Expected values are read by hand
from the fixture tests/fixtures/gemini_cli/session.json and, when it is beside the
repository, the real-world sample other_gemini_cli/gemini-cli__tool-calls.input.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import FIXTURES, SAMPLES, retyped_fixture

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import IgnoredEvents, ReadItem, SourceFile, pick_reader
from agent_eval.readers.gemini_cli import READER

FIXTURE = FIXTURES / "gemini_cli" / "session.json"
SAMPLE = SAMPLES / "other_gemini_cli" / "gemini-cli__tool-calls.input.json"


def source(path: Path) -> SourceFile:
    return SourceFile(str(path), path.name, path.name)


def traces(items: list[ReadItem]) -> list[Trace]:
    return [i for i in items if isinstance(i, Trace)]


def errors(items: list[ReadItem]) -> list[tuple[str, int]]:
    return [(e.rule, e.line) for e in items if isinstance(e, InputError)]


def test_the_fixture() -> None:
    reader = pick_reader(source(FIXTURE), "auto")
    assert not isinstance(reader, InputError) and reader.name == "gemini_cli"
    items = list(reader.read(source(FIXTURE)))
    assert errors(items) == []
    [t] = traces(items)
    assert t.format == "gemini_cli"
    assert t.input == "How many refunds were issued today?"  # line 19; the info message
    assert t.output == "17 refunds were issued today; the CSV export was denied."  # line 85
    # lines 38-57 and 58-77: two calls of one gemini message, with their results
    count, export = t.tool_calls
    assert [(c.name, c.arguments, c.id, c.location.line) for c in t.tool_calls] == [
        ("count_refunds", {"date": "2026-03-01"}, "call-count", 38),
        ("export_csv", {"path": "/tmp/refunds.csv"}, "call-export", 58)]
    assert (count.ok, count.result) == (True, "17")  # response.output, line 50
    assert count.result_location is not None and count.result_location.line == 44
    # status "error" (line 75); response.error (line 70)
    assert (export.ok, export.error) == (False, "permission denied")
    # line 23: tokens 640 / 25 / 677 (lines 28-35); line 80: no tokens recorded
    assert [(c.model, c.location.line, c.input_tokens, c.output_tokens, c.total_tokens)
            for c in t.llm_calls] == [("gemini-2.5-pro", 23, 640, 25, 677),
                                      ("gemini-2.5-pro", 80, None, None, None)]
    assert t.tokens is None  # the second message's tokens are unknown
    # startTime 12:00:00 (line 4), lastUpdated 12:00:06.5 (line 5)
    assert t.duration_ms == 6500.0
    assert t.metadata["sessionId"] == "gemini-refunds-1"

@pytest.mark.usefixtures("samples")
def test_the_sample() -> None:
    reader = pick_reader(source(SAMPLE), "auto")
    assert not isinstance(reader, InputError) and reader.name == "gemini_cli"
    items = list(reader.read(source(SAMPLE)))
    assert errors(items) == []
    [t] = traces(items)
    assert t.format == "gemini_cli"
    assert t.input == "Read the project overview."  # line 19
    assert t.output == "I will inspect the overview."  # line 34
    # lines 36-55: one call, read_file {"file_path": "OVERVIEW.md"}, status success
    [call] = t.tool_calls
    assert (call.name, call.arguments, call.id, call.location.line) == (
        "read_file", {"file_path": "OVERVIEW.md"}, "gemini-call-1", 36)
    assert (call.ok, call.error, call.result) == (True, None, "Project overview")  # line 48
    assert call.result_location is not None and call.result_location.line == 42
    # line 23: the gemini message, model "gemini-test" (line 27), no tokens recorded
    [llm] = t.llm_calls
    assert (llm.model, llm.location.line, llm.input_tokens, llm.total_tokens) == (
        "gemini-test", 23, None, None)
    assert t.tokens is None and t.cost is None
    # startTime 00:00:00 (line 4), lastUpdated 00:00:04 (line 5)
    assert t.duration_ms == 4000.0
    assert t.metadata["sessionId"] == "gemini-session-1"


def test_error_status_tokens_and_unknown(tmp_path: Path) -> None:
    doc = {"sessionId": "s", "projectHash": "p", "messages": [
        {"type": "user", "content": "hi"},
        {"type": "gemini", "content": "", "model": "g",
         "tokens": {"input": 7, "output": 3, "total": 10},
         "toolCalls": [
             {"id": "c1", "name": "run", "args": {"cmd": "x"}, "status": "error",
              "result": [{"functionResponse": {"id": "c1", "name": "run",
                                               "response": {"error": "denied"}}}]},
             {"id": "c2", "name": "run", "args": {}, "status": "cancelled",
              "resultDisplay": "Cancelled by user"}]},
        {"type": "gemini", "content": "done"},
        {"type": "compression"},
    ]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc, indent=2))
    items = list(READER.read(source(path)))
    [t] = traces(items)
    assert [(c.ok, c.error) for c in t.tool_calls] == [
        (False, "denied"), (False, "Cancelled by user")]
    assert t.output == "done" and t.input == "hi"
    assert (t.llm_calls[0].input_tokens, t.llm_calls[0].total_tokens) == (7, 10)
    assert [i.count for i in items if isinstance(i, IgnoredEvents)] == [1]


# ------------------------------------------- a value of another type: that element only
def test_a_type_that_is_not_a_string_is_an_input_error_of_its_message(tmp_path: Path) -> None:
    """The regression: ``"type": []`` stopped the reader (TypeError: unhashable type:
    'list'): input/reader_error at line 0, and the session lost."""
    _, items = retyped_fixture(tmp_path, "gemini_cli/session.json", '"type": "user"',
                               '"type": []')
    assert errors(items) == [("input/invalid_event", 13)]  # the message m1, line 13
    assert "a Gemini CLI message's type must be a string, not array" in str(items[0])
    [t] = traces(items)
    assert t.input is None  # m1 was the user's request
    assert [c.name for c in t.tool_calls] == ["count_refunds", "export_csv"]


def test_tool_calls_that_are_not_an_array_are_an_input_error_of_their_message(
        tmp_path: Path) -> None:
    _, items = retyped_fixture(tmp_path, "gemini_cli/session.json", '"toolCalls": [',
                               '"toolCalls": true, "was": [')
    assert errors(items) == [("input/invalid_event", 23)]  # the message m2, line 23
    [t] = traces(items)
    assert t.tool_calls == [] and len(t.llm_calls) == 2


# ------------------------------------- calls outside a gemini message: read, and an error
STRAY = """{"sessionId": "s", "projectHash": "p", "messages": [
 {"type": "user", "content": "hi",
  "toolCalls": [{"id": "u1", "name": "rm_rf", "args": {"p": "/"}}]},
 {"type": "info", "content": "x", "toolCalls": [{"id": "i1", "name": "drop_db", "args": {},
  "status": "success", "result": [{"functionResponse": {"response": {"output": "ok"}}}]}]},
 {"content": "y", "toolCalls": [{"id": "n1", "name": "wipe", "args": "{\\"all\\": true}"}]},
 {"type": "model", "content": "z", "toolCalls": [{"id": "m1", "name": "nuke"}]},
 {"type": "compression"},
 {"type": "gemini", "content": "Done."}
]}
"""


def test_calls_of_a_message_that_is_no_gemini_message_are_read_and_an_input_error(
        tmp_path: Path) -> None:
    """The regression: only 'gemini' messages were read for toolCalls, so the calls of a
    user or info message, of a message without type or of a type the reader does not know
    vanished (the last two counted as ignored records): a blocked rm_rf passed (exit 0)."""
    path = tmp_path / "s.json"
    path.write_text(STRAY)
    items = list(READER.read(source(path)))
    [t] = traces(items)
    assert [(c.name, c.arguments, c.location.line) for c in t.tool_calls] == [
        ("rm_rf", {"p": "/"}, 3), ("drop_db", {}, 4), ("wipe", {"all": True}, 6),
        ("nuke", {}, 7)]
    assert (t.tool_calls[1].result, t.tool_calls[1].ok) == ("ok", True)
    assert errors(items) == [("input/invalid_event", 3), ("input/invalid_event", 4),
                             ("input/invalid_event", 6), ("input/invalid_event", 7)]
    said = [str(e) for e in items if isinstance(e, InputError)]
    assert "toolCalls in a Gemini CLI message of type 'user': only 'gemini'" in said[0]
    assert "message without a type" in said[2] and "of type 'model'" in said[3]
    assert (t.input, t.output) == ("hi", "Done.")
    assert len(t.llm_calls) == 1  # the gemini message only
    assert [i.count for i in items if isinstance(i, IgnoredEvents)] == [1]  # compression


def test_an_empty_session_is_one_trace_that_did_nothing(tmp_path: Path) -> None:
    """A session opened and closed without a prompt (`"messages": []`) is one trace with
    no call and no answer, as a native trace of nothing is: a blocklist has nothing to
    block in it, and a `require` fails it. It is no input error, which would stop a run
    over a folder of real sessions (exit 2) for a file nothing is wrong with."""
    from agent_eval._cli import main as cli

    (tmp_path / ".git").mkdir()
    (tmp_path / "s.json").write_text(json.dumps(
        {"sessionId": "e", "projectHash": "p", "startTime": "2026-01-01T00:00:00Z",
         "lastUpdated": "2026-01-01T00:00:01Z", "messages": []}))
    items = list(READER.read(source(tmp_path / "s.json")))
    assert errors(items) == []
    [trace] = traces(items)
    assert len(trace.tool_calls) == 0 and trace.output is None
    (tmp_path / "agent-eval.yaml").write_text(
        "suite: s\ntraces: '*.json'\ntests:\n  - id: r\n    metric: sequence_valid\n"
        "    rules: [{type: require, tool: authenticate}]\n")
    assert cli(["run", "-q", "-c", str(tmp_path / "agent-eval.yaml"),
                "-o", str(tmp_path / "out")]) == 1  # the require fails it
