"""The MCP JSON-RPC reader (docs/formats/mcp.md). Expected values are read by hand from
the fixtures (tests/fixtures/mcp/) and, when they are beside the repository, the real-world
samples."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import FIXTURES as ALL_FIXTURES
from tests.conftest import SAMPLES, within

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import ReadItem, SourceFile, pick_reader
from agent_eval.readers.mcp import READER, text_line

DIR = SAMPLES / "mcp"
FIXTURES = ALL_FIXTURES / "mcp"
# Example fragments of the spec, not logs: a bare result body, an error object, a
# content block, sampling parameters, the JSON Schema.
FRAGMENTS = [
    "2026-07-28__CallToolResult_invalid-tool-input-error.json",
    "2026-07-28__CallToolResult_result-with-array-structured-content.json",
    "2026-07-28__CallToolResult_result-with-structured-content.json",
    "2026-07-28__CallToolResult_result-with-unstructured-text.json",
    "2026-07-28__CreateMessageRequestParams_request-with-tools.json",
    "2026-07-28__InvalidParamsError_invalid-tool-arguments.json",
    "2026-07-28__InvalidParamsError_unknown-tool.json",
    "2026-07-28__ToolResultContent_get-weather-tool-result.json",
    "schema-2025-06-18.json",
]


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


def jsonl(tmp_path: Path, name: str, *messages: object) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return path


# ----------------------------------------------------------------- the fixtures
def test_single_json_rpc_messages() -> None:
    name, items = read_auto(FIXTURES / "call-request.json")
    assert name == "mcp" and errors(items) == []
    [t] = traces(items)
    [call] = t.tool_calls
    # lines 1-17: id "req-7", tools/call lookup_order {"order_id": "A-11"}; no response
    assert (call.name, call.arguments, call.id, call.location.line, call.has_result) == (
        "lookup_order", {"order_id": "A-11"}, "req-7", 1, False)
    assert t.format == "mcp" and t.input is None and t.llm_calls == []

    # a response alone: its request is not in the file
    name, items = read_auto(FIXTURES / "result-only.json")
    assert name == "mcp"
    assert errors(items) == [("input/unmatched_result", 1)]

    # a tools/list response: an MCP session without any tool call
    name, items = read_auto(FIXTURES / "list-tools.json")
    assert name == "mcp" and errors(items) == []
    [t] = traces(items)
    assert t.tool_calls == []


def test_protocol_fragments_are_not_taken_for_logs() -> None:
    for name in ("fragment-tool-result-content.json", "fragment-sampling-request.json"):
        path = FIXTURES / name
        assert not READER.sniff(path.read_bytes()[:8192], source(path)), name
        # read as mcp anyway (format: mcp), a fragment is an input error, never a pass
        items = list(READER.read(source(path)))
        assert traces(items) == [] and errors(items) == [("input/invalid_event", 1)], name


# ------------------------------------------------------------------ the samples
@pytest.mark.usefixtures("samples")
def test_the_json_rpc_samples() -> None:
    name, items = read_auto(DIR / "2026-07-28__CallToolRequest_call-tool-request.json")
    assert name == "mcp" and errors(items) == []
    [t] = traces(items)
    [call] = t.tool_calls
    # lines 3-17: id "call-tool-example", tools/call get_weather {"location": "New York"}
    assert (call.name, call.arguments, call.id, call.location.line, call.has_result) == (
        "get_weather", {"location": "New York"}, "call-tool-example", 1, False)
    assert t.format == "mcp" and t.input is None and t.llm_calls == []

    # a response alone: its request is not in the file
    name, items = read_auto(DIR / "2026-07-28__CallToolResultResponse_call-tool-result-"
                                  "response.json")
    assert name == "mcp"
    assert errors(items) == [("input/unmatched_result", 1)]

    # a tools/list response: an MCP session without any tool call
    name, items = read_auto(DIR / "2026-07-28__ListToolsResultResponse_list-tools-result-"
                                  "response.json")
    assert name == "mcp" and errors(items) == []
    [t] = traces(items)
    assert t.tool_calls == []


@pytest.mark.usefixtures("samples")
def test_spec_fragments_are_not_taken_for_logs() -> None:
    assert sorted(p.name for p in DIR.iterdir()) == sorted(
        [*FRAGMENTS, "2026-07-28__CallToolRequest_call-tool-request.json",
         "2026-07-28__CallToolResultResponse_call-tool-result-response.json",
         "2026-07-28__ListToolsResultResponse_list-tools-result-response.json"])
    for name in FRAGMENTS:
        path = DIR / name
        assert not READER.sniff(path.read_bytes()[:8192], source(path)), name
        # read as mcp anyway (format: mcp), a fragment is an input error, never a pass
        items = list(READER.read(source(path)))
        assert traces(items) == [] and errors(items) == [("input/invalid_event", 1)], name


# ----------------------------------------------------------- behaviour (fixtures)
def test_wrapped_json_lines_with_timestamps() -> None:
    name, items = read_auto(FIXTURES / "discount-too-high.jsonl")
    assert name == "mcp" and errors(items) == []
    [t] = traces(items)
    # requests on lines 6, 8, 10; responses on 7, 9, 11 (initialize and tools/list before)
    assert [(c.name, c.id, c.location.line, c.result_location.line if c.result_location
             else 0) for c in t.tool_calls] == [
        ("authenticate_user", "2", 6, 7), ("get_customer", "3", 8, 9),
        ("apply_discount", "4", 10, 11)]
    assert t.tool_calls[2].arguments == {"customer_id": "C-56012", "percent": 50,
                                         "code": "VIPS50"}
    # structuredContent is the result; latency from the wrappers' timestamps
    assert t.tool_calls[2].result == {"applied": True, "code": "VIPS50"}
    assert [c.latency_ms for c in t.tool_calls] == [420.0, 139.0, 205.0]


def test_claude_desktop_style_text_log() -> None:
    name, items = read_auto(FIXTURES / "records-without-auth.log")
    assert name == "mcp" and errors(items) == []
    [t] = traces(items)
    [call] = t.tool_calls
    assert (call.name, call.arguments, call.location.line, call.ok, call.latency_ms) == (
        "get_customer", {"customer_id": "C-77120"}, 6, True, 161.0)
    assert json.loads(call.result)["name"] == "Ana Silva"  # the text content, line 7
    assert t.end_location.line == 7


def test_is_error_json_rpc_error_and_cancellation(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path, "errors.jsonl",
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "book_flight", "arguments": {"date": "2020-01-01"}}},
        {"jsonrpc": "2.0", "id": 1, "result": {"content": [
            {"type": "text", "text": "Invalid departure date: must be in the future."}],
            "isError": True}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "calculate", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 2, "error": {
            "code": -32602, "message": "Invalid arguments for tool calculate"}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "slow_report", "arguments": "{\"year\": 2024}"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled",
         "params": {"requestId": 3, "reason": "User requested cancellation"}},
        {"jsonrpc": "2.0", "id": 4, "method": "ping"},
        {"jsonrpc": "2.0", "id": 4, "result": {}},
        "not an object",
    )
    name, items = read_auto(path)
    assert name == "mcp"
    [t] = traces(items)
    assert [(c.name, c.ok, c.error) for c in t.tool_calls] == [
        ("book_flight", False, "Invalid departure date: must be in the future."),
        ("calculate", False, "Invalid arguments for tool calculate (JSON-RPC error -32602)"),
        ("slow_report", False, "cancelled: User requested cancellation"),
    ]
    assert t.tool_calls[2].arguments == {"year": 2024}  # a JSON string, decoded
    # line 9 is not a message; the ping's response (line 8) is not a tool result
    assert errors(items) == [("input/invalid_event", 9)]


def test_a_request_reusing_a_pending_calls_id_without_directions_is_said(
        tmp_path: Path) -> None:
    """The regression: ids are per direction, so a server's sampling request may take the
    id of a pending tools/call; with no direction logged, the client's answer to it was read
    as the call's result (ok) and the call's own isError response was passed over as the
    sampling's: tool_health passed (exit 0)."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "summarize", "arguments": {"doc": "a"}}}
    sampling = {"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage",
                "params": {"messages": [], "maxTokens": 10}}
    sampled = {"jsonrpc": "2.0", "id": 1, "result": {
        "role": "assistant", "content": {"type": "text", "text": "a summary"}, "model": "m"}}
    failed = {"jsonrpc": "2.0", "id": 1, "result": {
        "content": [{"type": "text", "text": "boom"}], "isError": True}}
    for name, rows, line in (("after.jsonl", (call, sampling, sampled, failed), 2),
                             ("before.jsonl", (sampling, call, sampled, failed), 2)):
        _, items = read_auto(jsonl(tmp_path, name, *rows))
        assert errors(items) == [("input/invalid_event", line)], name
        assert "has the id '1' of the " in next(
            e.message for e in items if isinstance(e, InputError))

    # the same with each message's direction logged: no error, each response its own
    def way(msg: dict[str, object], d: str) -> dict[str, object]:
        return {"direction": d, "message": msg}

    _, items = read_auto(jsonl(tmp_path, "ways.jsonl", way(call, "client"),
                               way(sampling, "server"), way(sampled, "client"),
                               way(failed, "server")))
    assert errors(items) == []
    [t] = traces(items)
    assert [(c.name, c.ok, c.error, c.result_location.line if c.result_location else 0)
            for c in t.tool_calls] == [("summarize", False, "boom", 4)]


def test_a_new_initialize_starts_a_new_trace(tmp_path: Path) -> None:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "get_customer", "arguments": {"customer_id": "C-1"}}}
    path = jsonl(tmp_path, "two.jsonl", init, call, init, call)
    _, items = read_auto(path)
    first, second = traces(items)
    assert (first.id, second.id) == ("two.jsonl", "two.jsonl:3")
    assert [c.location.line for c in first.tool_calls] == [2]
    assert [c.location.line for c in second.tool_calls] == [4]


def test_a_tools_call_without_an_id_is_read_and_reported(tmp_path: Path) -> None:
    """The regression: a tools/call without an id (a notification) or with id null was
    passed over without a word (only requests with an id were calls), so the delete_repo a
    client sent passed a blocklist of it (exit 0)."""
    def call(name: str, **mid: object) -> dict[str, object]:
        return {"jsonrpc": "2.0", **mid, "method": "tools/call",
                "params": {"name": name, "arguments": {"name": "prod"}}}

    path = jsonl(tmp_path, "noid.jsonl",
                 {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}},
                 call("delete_repo"), call("drop_db", id=None), call("echo", id=1),
                 {"jsonrpc": "2.0", "id": 1, "result": {"content": []}})
    _, items = read_auto(path)
    assert errors(items) == [("input/invalid_event", 2), ("input/invalid_event", 3)]
    assert next(e.message for e in items if isinstance(e, InputError)) == (
        "a tools/call request ('delete_repo') without an id (or with id null): it is read as "
        "a call, but no response can be matched to it; a request needs an id (JSON-RPC 2.0)")
    [t] = traces(items)
    assert [(c.name, c.arguments, c.id, c.location.line, c.has_result)
            for c in t.tool_calls] == [
        ("delete_repo", {"name": "prod"}, None, 2, False),
        ("drop_db", {"name": "prod"}, None, 3, False), ("echo", {"name": "prod"}, "1", 4, True)]


def test_a_bad_line_in_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
                    '{"name": "x", "arguments": {}}}\n{"jsonrpc": \n')
    _, items = read_auto(path)
    assert errors(items) == [("input/parse_error", 2)]
    assert [c.name for c in traces(items)[0].tool_calls] == ["x"]


# ------------------------------------------------------------ the text log's lines
# The regex that split a text log's line before text_line (it backtracked in cubic time):
# text_line must give its answers, in linear time.
OLD_TEXT_LINE = re.compile(r"^(?P<ts>\d{4}-\d\d-\d\dT\S+)?.*?(?:Message from (?P<who>client|"
                           r"server)\s*:\s*)?(?P<json>\{.*\})\s*$")
HEADS = ["", "2024-01-01T", "2024-01-01T0", "2024-01-01T00:00:00Z", "2024-1-01T0",
         "\u0663\u0663\u0663\u0663-01-01T0", "2024-01-01 0", "x2024-01-01T0"]
PIECES = ["Message from client", "Message from server", "Message from ", "client", ":",
          "{", "}", '{"jsonrpc":"2.0","id":1}', " ", "\t", "\u3000", "\x85", "\x1c",
          "\xa0", "x", "7", "T", "\r"]
TAILS = ["", "}", "{}", '{"a":1}', " } ", "} x", "{"]


def old_text_line(line: str) -> tuple[str | None, str | None, str] | None:
    m = OLD_TEXT_LINE.match(line)
    return None if m is None else (m.group("ts"), m.group("who"), m.group("json"))


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(HEADS), st.lists(st.sampled_from(PIECES), max_size=8),
       st.sampled_from(TAILS))
def test_text_line_gives_the_old_regex_answers(head: str, pieces: list[str], tail: str,
                                              ) -> None:
    line = (head + "".join(pieces) + tail).strip()  # as the reader strips each line
    assert text_line(line) == old_text_line(line)


@pytest.mark.parametrize(("line", "expected"), [
    ('2024-01-01T00:00:00.000Z [info] Message from client: {"a":1}',
     ("2024-01-01T00:00:00.000Z", "client", '{"a":1}')),
    ('2024-01-01T00:00:00Z Message from server :  {"a":{"b":2}}',
     ("2024-01-01T00:00:00Z", "server", '{"a":{"b":2}}')),
    ('{"jsonrpc":"2.0"}', (None, None, '{"jsonrpc":"2.0"}')),
    ('[mcp] Message from client: {"a":1}', (None, "client", '{"a":1}')),
    ('[mcp] Message from client x: {"a":1}', (None, None, '{"a":1}')),
    ('2024-01-01T {"a":1}', (None, None, '{"a":1}')),  # no time after the "T"
    ('2024-01-01T00:00:00Z Message from client: {"a":1} x', None),  # not at the end
    ('2024-01-01T00:00:00Z Message from nobody: {"a":1}', ("2024-01-01T00:00:00Z", None,
                                                          '{"a":1}')),
    # a timestamp glued to the JSON runs to its last "{" (the old regex's answer)
    ('2024-01-01T0{"a":{}}', ("2024-01-01T0{\"a\":", None, "{}}")),
    ("no json here", None),
])
def test_text_line_by_hand(line: str, expected: tuple[str | None, str | None, str] | None,
                           ) -> None:
    assert text_line(line) == expected
    assert old_text_line(line) == expected


GOOD = ('2024-01-01T00:00:00Z Message from client: {"jsonrpc":"2.0","id":1,'
        '"method":"tools/call","params":{"name":"x","arguments":{}}}')


@pytest.mark.parametrize(("bad", "parse_error"), [
    ("2024-01-01Tjsonrpc" + "{" * 6000 + "} x", False),  # 6 KB: over a minute before
    # the timestamp runs to the last "{": "{}" is the JSON, valid, not a message
    ("2024-01-01Tjsonrpc" + "{" * 200_000 + "}", False),
    ("jsonrpc " + "{" * 200_000 + "}", True),  # all the "{" and one "}": not JSON
    ("2024-01-01T" + "x" * 200_000 + " jsonrpc " + "{" * 100_000 + "} x", False),
    ("jsonrpc Message from client:" + " " * 200_000 + "{" * 100_000, False),
])
def test_a_text_log_line_is_split_in_linear_time(tmp_path: Path, bad: str,
                                                 parse_error: bool) -> None:
    """A pull request's MCP text log held one line of 6 KB that took the reader over a
    minute (the regex's backtracking): the same line, and longer ones, now take
    milliseconds; the good line beside it is still read."""
    path = tmp_path / "a.log"
    path.write_text(GOOD + "\n" + bad + "\n")
    with within(10):
        name, items = read_auto(path)
    assert name == "mcp"
    [t] = traces(items)
    assert [(c.name, c.location.line) for c in t.tool_calls] == [("x", 1)]
    assert errors(items) == ([("input/parse_error", 2)] if parse_error else [])


def test_a_call_the_text_log_cannot_read_is_said(tmp_path: Path) -> None:
    # line 3's message is followed by text: the line was passed over without a word, and
    # its delete_file call with it
    path = tmp_path / "mcp.log"
    path.write_text(
        "2025-06-12T10:00:00.000Z [fs] [info] Initializing server...\n"
        '2025-06-12T10:00:01.000Z [fs] [info] Message from client: {"jsonrpc":"2.0","id":1,'
        '"method":"tools/call","params":{"name":"read_file","arguments":{}}}\n'
        '2025-06-12T10:00:02.000Z [fs] [info] Message from client: {"jsonrpc":"2.0","id":2,'
        '"method":"tools/call","params":{"name":"delete_file","arguments":{}}} (sent)\n'
        '2025-06-12T10:00:03.000Z [fs] [info] Message from server: {"jsonrpc":"2.0","id":1,'
        '"result":{"content":[]}}\n')
    name, items = read_auto(path)
    assert name == "mcp"
    [t] = [i for i in items if isinstance(i, Trace)]
    assert [(c.name, c.location.line) for c in t.tool_calls] == [("read_file", 2)]
    assert [(e.rule, e.line) for e in items if isinstance(e, InputError)] == [
        ("input/invalid_event", 3)]


def test_a_wrapper_with_two_messages_says_the_one_not_read(tmp_path: Path) -> None:
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
              "params": {"name": "read_file"}},
             {"ts": 1, "message": {"jsonrpc": "2.0", "id": 1, "result": {"content": []}},
              "payload": {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "delete_file"}}},
             {"ts": 2, "message": {"jsonrpc": "2.0", "id": 3, "method": "ping"},
              "data": [1, 2]}]  # a list of no messages beside it: nothing more to say
    path = tmp_path / "wrapped.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in lines))
    items = list(READER.read(source(path)))
    [t] = [i for i in items if isinstance(i, Trace)]
    assert [c.name for c in t.tool_calls] == ["read_file"]
    errors = [e for e in items if isinstance(e, InputError)]
    assert [(e.rule, e.line) for e in errors] == [("input/invalid_event", 2)]
    assert "(message, payload)" in errors[0].message
