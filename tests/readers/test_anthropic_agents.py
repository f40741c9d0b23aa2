"""The Anthropic Managed Agents reader (docs/formats/anthropic_agents.md). Expected
values are read by hand from the fixture tests/fixtures/anthropic_agents/session.jsonl and,
when it is beside the repository, the real-world sample
other_anthropic_managed_agents/langsmith-js__anthropic_managed_custom_tools.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import FIXTURES, SAMPLES

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import ReadItem, SourceFile, pick_reader
from agent_eval.readers.anthropic_agents import READER

FIXTURE = FIXTURES / "anthropic_agents" / "session.jsonl"
SAMPLE = (SAMPLES / "other_anthropic_managed_agents"
          / "langsmith-js__anthropic_managed_custom_tools.jsonl")
STREAM = "client.beta.sessions.events.stream"


def source(path: Path) -> SourceFile:
    return SourceFile(str(path), path.name, path.name)


def traces(items: list[ReadItem]) -> list[Trace]:
    return [i for i in items if isinstance(i, Trace)]


def errors(items: list[ReadItem]) -> list[tuple[str, int]]:
    return [(e.rule, e.line) for e in items if isinstance(e, InputError)]


def test_the_fixture() -> None:
    reader = pick_reader(source(FIXTURE), "auto")
    assert not isinstance(reader, InputError) and reader.name == "anthropic_agents"
    items = list(reader.read(source(FIXTURE)))
    assert errors(items) == []
    [t] = traces(items)
    assert t.metadata == {"session_id": "sesn_refunds_1"}  # line 1
    assert t.input == "Where is order A-5?"  # line 4 (the send on line 2 is its echo)
    assert t.output == "Order A-5 is in transit and arrives on Friday."  # line 13
    # line 6: agent.custom_tool_use, its result on line 9 (02.100 -> 02.600); line 11: a
    # built-in agent.tool_use, its agent.tool_result with is_error on line 12
    assert [(c.name, c.arguments, c.id, c.location.line, c.ok, c.error, c.latency_ms)
            for c in t.tool_calls] == [
        ("lookup_order", {"order_id": "A-5"}, "sevt_04", 6, True, None, 500.0),
        ("bash", {"command": "cat /etc/shadow"}, "sevt_08", 11, False, "permission denied",
         250.0)]
    assert t.tool_calls[0].result == "in transit, arrives Friday"
    # lines 7 and 14: model_usage 5 + 2000 cached + 100 written / 40, 12 + 2140 / 22;
    # model from line 1; latency from their model_request_start (lines 5, 10)
    assert [(c.location.line, c.model, c.input_tokens, c.output_tokens, c.latency_ms)
            for c in t.llm_calls] == [(7, "claude-sonnet-5", 2105, 40, 2000.0),
                                      (14, "claude-sonnet-5", 2152, 22, 1300.001)]
    assert t.duration_ms == 4200.0  # processed_at 10:00:00.0 (line 3) .. 04.2 (line 15)

@pytest.mark.usefixtures("samples")
def test_the_sample() -> None:
    reader = pick_reader(source(SAMPLE), "auto")
    assert not isinstance(reader, InputError) and reader.name == "anthropic_agents"
    items = list(reader.read(source(SAMPLE)))
    assert errors(items) == []
    [t] = traces(items)
    assert t.format == "anthropic_agents"
    assert t.metadata == {"session_id": "sesn_014fc5Q6rWwrXD3vWBfPRUes"}  # line 1
    assert t.input == "What's the weather in Prague?"  # line 5
    # line 16: the agent's final message
    assert t.output == "It's currently **23°C and sunny** in Prague — a nice, warm day overall!"
    # line 7: agent.custom_tool_use get_weather {"location": "Prague"}
    [call] = t.tool_calls
    assert (call.name, call.arguments, call.id, call.location.line) == (
        "get_weather", {"location": "Prague"}, "sevt_018iPB2RYrthWNKugV6ehDxH", 7)
    # line 12: user.custom_tool_result, is_error false, 14:16:36.646424 -> 14:16:37.307705
    assert (call.ok, call.result, call.latency_ms) == (
        True, "It's 23°C and sunny in Prague.", 661.281)
    assert call.result_location is not None and call.result_location.line == 12
    # lines 8 and 17: model_usage 2 + 7201 cached / 50 and 2 + 7271 cached / 30;
    # model claude-sonnet-5 from line 1; starts on lines 6 and 15
    assert [(c.location.line, c.model, c.input_tokens, c.output_tokens, c.total_tokens,
             c.latency_ms) for c in t.llm_calls] == [
        (8, "claude-sonnet-5", 7203, 50, 7253, 6024.373),
        (17, "claude-sonnet-5", 7273, 30, 7303, 1701.888),
    ]
    assert t.tokens == 7253 + 7303 and t.cost is None
    # processed_at 14:16:30.476746 (line 3) to 14:16:39.475092 (line 19)
    assert t.duration_ms == 8998.346


def test_errors(tmp_path: Path) -> None:
    lines = [
        [STREAM, {"type": "agent.tool_use", "id": "u1", "name": "bash",
                  "input": {"command": "ls"}}],
        [STREAM, {"type": "agent.tool_result", "tool_use_id": "u1", "is_error": True,
                  "content": [{"type": "text", "text": "permission denied"}]}],
        [STREAM, {"type": "user.custom_tool_result", "custom_tool_use_id": "nope",
                  "content": []}],
        {"not": "a record"},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + "{oops\n")
    items = list(READER.read(source(path)))
    [t] = traces(items)
    [call] = t.tool_calls
    assert (call.name, call.ok, call.error) == ("bash", False, "permission denied")
    assert sorted(errors(items)) == [("input/invalid_event", 4), ("input/parse_error", 5),
                                     ("input/unmatched_result", 3)]


def test_events_of_a_type_the_reader_does_not_know_are_never_passed_over(
        tmp_path: Path) -> None:
    """Every event type starting session./span./agent./user. that had no handler was
    skipped without a word: a tool use of a newer type (line 2) vanished, so a rule
    blocking its tool passed. It is read as a call and is an input error; other unknown
    types are counted as ignored (line 3); the understood status events are not (lines
    4-6)."""
    from agent_eval.readers.base import IgnoredEvents

    lines = [
        [STREAM, {"type": "agent.tool_use", "id": "u1", "name": "bash",
                  "input": {"command": "ls"}}],
        [STREAM, {"type": "agent.server_tool_use", "id": "u2", "name": "delete_repo",
                  "input": {"repo": "prod"}}],
        [STREAM, {"type": "agent.something_new", "id": "u3"}],
        [STREAM, {"type": "session.status_idle", "id": "u4"}],
        [STREAM, {"type": "agent.thinking", "id": "u5"}],
        [STREAM, {"type": "user.interrupt", "id": "u6"}],
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    items = list(READER.read(source(path)))
    [t] = traces(items)
    assert [(c.name, c.arguments, c.id, c.location.line) for c in t.tool_calls] == [
        ("bash", {"command": "ls"}, "u1", 1),
        ("delete_repo", {"repo": "prod"}, "u2", 2)]
    assert errors(items) == [("input/invalid_event", 2)]
    [message] = [e.message for e in items if isinstance(e, InputError)]
    assert "'agent.server_tool_use', which this reader does not know, names a tool: it is " \
        "read as a tool call" in message
    [ignored] = [i for i in items if isinstance(i, IgnoredEvents)]
    assert ignored.count == 1
