"""The Anthropic Messages reader (docs/formats/anthropic.md).

Expected values are read by hand from the fixtures (tests/fixtures/anthropic/) and, when they
are beside the repository, the real-world samples; each assertion cites the line.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FIXTURES as ALL_FIXTURES
from tests.conftest import SAMPLES

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import IgnoredEvents, ReadItem, SourceFile, pick_reader, read_file
from agent_eval.readers.anthropic import READER

DIR = SAMPLES / "anthropic_messages"
FIXTURES = ALL_FIXTURES / "anthropic"
MULTI = "openinference-anthropic__multiple_tool_calling"
IN_INPUT = "openinference-anthropic__tool_use_in_input"


def read_auto(path: Path) -> tuple[str, list[ReadItem]]:
    """Read a file the way ``format: auto`` does; (reader name, items)."""
    source = SourceFile(str(path), path.name, path.name)
    reader = pick_reader(source, "auto")
    assert not isinstance(reader, InputError), reader
    return reader.name, list(reader.read(source))


def only_trace(items: list[ReadItem]) -> Trace:
    found = [i for i in items if isinstance(i, Trace)]
    assert len(found) == 1, items
    return found[0]


def errors(items: list[ReadItem]) -> list[tuple[str, int]]:
    return [(e.rule, e.line) for e in items if isinstance(e, InputError)]


def write(tmp_path: Path, name: str, value: object) -> Path:
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value, indent=1))
    return path


# ----------------------------------------------------------------- the fixtures
def test_response_with_two_tool_uses() -> None:
    _, items = read_auto(FIXTURES / "response-two-tool-uses.json")
    t = only_trace(items)
    assert t.format == "anthropic"
    # lines 11-18 and 19-27: two tool_use blocks, in order
    assert [(c.name, c.arguments, c.id, c.location.line) for c in t.tool_calls] == [
        ("lookup_order", {"order_id": "A-1042"}, "toolu_01Order", 11),
        ("get_refund_policy", {"region": "EU", "category": "kitchen"}, "toolu_02Policy", 19),
    ]
    assert all(not c.has_result and c.ok for c in t.tool_calls)  # no tool_result here
    # usage, lines 31-36: 310 input + 40 cache creation + 1200 cache read, 88 output
    [llm] = t.llm_calls
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens) == (
        "claude-sonnet-4-6", 1550, 88, 1638)
    assert llm.cost_usd is None and llm.latency_ms is None  # not in a response body
    assert t.cost is None and t.latency_ms is None
    assert t.metadata == {"cache_read_input_tokens": 1200, "cache_creation_input_tokens": 40}
    assert t.output == "Let me look up the order and the refund policy at the same time."  # l. 9
    assert t.input is None  # a response body holds no user message


def test_request_with_history_and_tool_result() -> None:
    _, items = read_auto(FIXTURES / "request-with-tool-result.json")
    t = only_trace(items)
    assert t.input == "Can I still return order A-1042?"  # line 7
    [call] = t.tool_calls
    # the tool_use block starts on line 16; its result block on line 29 (is_error false)
    assert (call.name, call.arguments, call.location.line) == (
        "lookup_order", {"order_id": "A-1042"}, 16)
    assert call.ok and call.error is None and call.has_result
    assert call.result == '{"status": "delivered", "days_ago": 12}'  # line 32
    assert call.result_location is not None and call.result_location.line == 29
    assert t.llm_calls == []  # a request records no model call


def test_request_without_tool_calls() -> None:
    _, items = read_auto(FIXTURES / "request-without-tool-calls.json")
    t = only_trace(items)
    assert t.input == "Which orders did I place in March?"  # line 10, a text block
    assert t.tool_calls == [] and t.output is None and t.llm_calls == []


def test_response_without_tool_calls() -> None:
    _, items = read_auto(FIXTURES / "response-text-only.json")
    t = only_trace(items)
    assert t.tool_calls == []
    assert t.output == ("Yes: order A-1042 was delivered 12 days ago, within the 30-day "
                        "return window.")  # line 9
    [llm] = t.llm_calls
    assert (llm.input_tokens, llm.output_tokens) == (402, 31)  # lines 15, 18


def test_vcr_cassette() -> None:
    _, items = read_auto(FIXTURES / "cassette.vcr.yaml")
    t = only_trace(items)
    assert t.input == "Can I still return order A-1042?"  # lines 3-4
    [call] = t.tool_calls
    # the tool_use id is on line 5 of the cassette, the tool_result's tool_use_id on line 6
    assert (call.name, call.location.line, call.result_location.line if call.result_location
            else None) == ("lookup_order", 5, 6)
    assert call.arguments == {"order_id": "A-1042"}
    assert call.result == "delivered 12 days ago"  # folded over lines 6-7
    [llm] = t.llm_calls  # the response body (line 13) with usage 402 / 31 (line 14)
    assert (llm.location.line, llm.input_tokens, llm.output_tokens) == (13, 402, 31)
    assert t.output == "Yes, within the 30-day window."


# ------------------------------------------------------------------ the samples
@pytest.mark.usefixtures("samples")
def test_every_sample_is_read_as_anthropic() -> None:
    files = sorted(p for p in DIR.iterdir())
    assert len(files) == 6
    for path in files:
        name, items = read_auto(path)
        assert name == "anthropic", path
        assert errors(items) == [], path
        only_trace(items)


@pytest.mark.usefixtures("samples")
def test_sample_response_with_two_tool_uses() -> None:
    _, items = read_auto(DIR / f"{MULTI}.interaction0.response.json")
    t = only_trace(items)
    assert t.format == "anthropic"
    # lines 11-21 and 22-32: two tool_use blocks, in order
    assert [(c.name, c.arguments, c.id, c.location.line) for c in t.tool_calls] == [
        ("get_weather", {"location": "New York, NY"}, "toolu_01VLL6XYAAGrtc7CDpmpKZMB", 11),
        ("get_time", {"timezone": "America/New_York"}, "toolu_01FZuC4jLWM67hKreLMKCLRe", 22),
    ]
    assert all(not c.has_result and c.ok for c in t.tool_calls)  # no tool_result here
    # usage, lines 36-44: 721 input (+0 cache creation, +0 cache read), 112 output
    [llm] = t.llm_calls
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens) == (
        "claude-sonnet-4-6", 721, 112, 833)
    assert llm.cost_usd is None and llm.latency_ms is None  # not in a response body
    assert t.cost is None and t.latency_ms is None
    assert t.metadata["cache_read_input_tokens"] == 0  # line 39
    assert t.output == "Sure! Let me fetch the current weather and time in New York " \
        "simultaneously!"  # line 9


@pytest.mark.usefixtures("samples")
def test_sample_request_with_history_and_tool_result() -> None:
    _, items = read_auto(DIR / f"{IN_INPUT}.interaction0.request.json")
    t = only_trace(items)
    assert t.input == "What is the weather like in San Francisco in Fahrenheit?"  # line 6
    [call] = t.tool_calls
    # the tool_use block starts on line 14; its result block on line 28 (is_error false, l. 32)
    assert (call.name, call.arguments, call.location.line) == (
        "get_weather", {"location": "San Francisco, CA", "unit": "fahrenheit"}, 14)
    assert call.ok and call.error is None and call.has_result
    assert call.result == '{"weather": "sunny", "temperature": "75"}'  # line 30
    assert call.result_location is not None and call.result_location.line == 28
    assert t.llm_calls == []  # a request records no model call


@pytest.mark.usefixtures("samples")
def test_sample_request_without_tool_calls() -> None:
    _, items = read_auto(DIR / f"{MULTI}.interaction0.request.json")
    t = only_trace(items)
    assert t.input.startswith("What is the weather like right now in New York?")  # line 6
    assert t.tool_calls == [] and t.output is None


@pytest.mark.usefixtures("samples")
def test_sample_response_without_tool_calls() -> None:
    _, items = read_auto(DIR / f"{IN_INPUT}.interaction0.response.json")
    t = only_trace(items)
    assert t.tool_calls == []
    assert t.output.startswith("The current weather in San Francisco, CA is **sunny**")  # l. 9
    [llm] = t.llm_calls
    assert (llm.input_tokens, llm.output_tokens) == (772, 47)  # lines 15, 22


@pytest.mark.usefixtures("samples")
def test_sample_vcr_cassettes() -> None:
    _, items = read_auto(DIR / f"{IN_INPUT}.vcr.yaml")
    t = only_trace(items)
    assert t.input == "What is the weather like in San Francisco in Fahrenheit?"  # lines 3-4
    [call] = t.tool_calls
    # the tool_use id is on line 7 of the cassette, the tool_result's tool_use_id on line 8
    assert (call.name, call.location.line, call.result_location.line if call.result_location
            else None) == ("get_weather", 7, 8)
    assert call.arguments == {"location": "San Francisco, CA", "unit": "fahrenheit"}
    assert call.result == '{"weather": "sunny", "temperature": "75"}'
    [llm] = t.llm_calls  # the response body (line 18) with usage 772 / 47 (line 21)
    assert (llm.location.line, llm.input_tokens, llm.output_tokens) == (18, 772, 47)
    assert t.output.startswith("The current weather in San Francisco")

    _, items = read_auto(DIR / f"{MULTI}.vcr.yaml")
    t = only_trace(items)
    # both tool_use ids are on lines 17 and 18; usage 721 / 112 on line 18
    assert [(c.name, c.location.line) for c in t.tool_calls] == [
        ("get_weather", 17), ("get_time", 18)]
    assert [(x.input_tokens, x.output_tokens) for x in t.llm_calls] == [(721, 112)]


# ----------------------------------------------------------- behaviour (fixtures)
# A tool_use id reused for another call (hand-edited or converted logs): the second call is
# a call of its own and an input error at its line; a repeated history is still read once.
REUSED = ("call id 'tu_1' reused for a different call (name/arguments differ from the "
          "'get_customer' call at line {}); it is read as a call of its own; give each call "
          "its own id")


def _use(name: str) -> str:
    return json.dumps({"type": "tool_use", "id": "tu_1", "name": name, "input": {"id": 1}})


def _result(text: str) -> str:
    return json.dumps({"type": "tool_result", "tool_use_id": "tu_1", "content": text})


def _message(role: str, block: str) -> str:
    return f'{{"role": "{role}", "content": [{block}]}}'


@pytest.mark.parametrize("second", ["ok", "deleted"])
def test_tool_use_id_reused_for_another_call_is_kept_and_reported(
        tmp_path: Path, second: str) -> None:
    path = write(tmp_path, "body.json", (
        '{"model": "claude-x", "max_tokens": 10, "messages": [\n'
        ' {"role": "user", "content": "clean up"},\n'
        f' {_message("assistant", _use("get_customer"))},\n'
        f' {_message("user", _result("ok"))},\n'
        f' {_message("assistant", _use("delete_customer"))},\n'
        f' {_message("user", _result(second))}\n'
        ']}\n'))
    _, items = read_auto(path)
    # line 5: the second tool_use reuses line 3's id for delete_customer
    assert errors(items) == [("input/invalid_event", 5)]
    assert [e.message for e in items if isinstance(e, InputError)] == [REUSED.format(3)]
    t = only_trace(items)
    assert [(c.name, c.id, c.arguments, c.location.line) for c in t.tool_calls] == [
        ("get_customer", "tu_1", {"id": 1}, 3), ("delete_customer", "tu_1", {"id": 1}, 5)]
    assert [(c.result, c.result_location.line if c.result_location else 0)
            for c in t.tool_calls] == [("ok", 4), (second, 6)]


def test_request_log_repeating_a_reused_tool_use_id_reads_each_call_once(
        tmp_path: Path) -> None:
    def req(*messages: str) -> str:
        return f'{{"model": "claude-x", "max_tokens": 10, "messages": [{", ".join(messages)}]}}'

    ask = '{"role": "user", "content": "clean up"}'
    get = _message("assistant", _use("get_customer"))
    delete = _message("assistant", _use("delete_customer"))
    path = write(tmp_path, "log.jsonl", "\n".join([
        req(ask, get),  # line 1
        req(ask, get, _message("user", _result("ok")), delete),  # line 2
        # line 3: the history again; get_customer's "ok" while delete_customer is open is
        # a repeat, not delete_customer's result ("deleted", on this line too)
        req(ask, get, _message("user", _result("ok")), delete,
            _message("user", _result("deleted"))),
    ]) + "\n")
    _, items = read_auto(path)
    assert errors(items) == [("input/invalid_event", 2)]
    assert [e.message for e in items if isinstance(e, InputError)] == [REUSED.format(1)]
    t = only_trace(items)
    assert [(c.name, c.location.line, c.result,
             c.result_location.line if c.result_location else 0) for c in t.tool_calls] == [
        ("get_customer", 1, "ok", 2), ("delete_customer", 2, "deleted", 3)]


def test_second_other_result_of_an_answered_tool_use_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path, "body.json", (
        '{"model": "claude-x", "max_tokens": 10, "messages": [\n'
        f' {_message("assistant", _use("get_customer"))},\n'
        f' {_message("user", _result("ok"))},\n'
        f' {_message("user", _result("ok"))},\n'
        f' {_message("user", _result("changed"))}\n'
        ']}\n'))
    _, items = read_auto(path)
    # line 4 repeats line 3's result; line 5's differs and no tool_use tu_1 is open
    assert errors(items) == [("input/unmatched_result", 5)]
    assert [e.message for e in items if isinstance(e, InputError)] == [
        "tool_result for tool_use_id 'tu_1' differs from the result of that tool_use "
        "(line 2), which already has one, in trace 'body.json'; give each call its own id"]
    [call] = only_trace(items).tool_calls
    assert (call.result, call.result_location.line if call.result_location else 0) == (
        "ok", 3)


def test_is_error_cache_tokens_and_repeated_history(tmp_path: Path) -> None:
    use = {"type": "tool_use", "id": "tu_1", "name": "delete_file", "input": {"path": "/etc"}}
    bad = {"type": "tool_result", "tool_use_id": "tu_1", "is_error": True,
           "content": [{"type": "text", "text": "permission denied"}]}
    pairs = [
        {"request": {"model": "claude-x", "max_tokens": 10,
                     "messages": [{"role": "user", "content": "clean up"}]},
         "response": {"id": "m1", "type": "message", "role": "assistant", "model": "claude-x",
                      "content": [use], "stop_reason": "tool_use",
                      "usage": {"input_tokens": 100, "cache_creation_input_tokens": 20,
                                "cache_read_input_tokens": 3000, "output_tokens": 7}}},
        {"request": {"model": "claude-x", "max_tokens": 10, "messages": [
            {"role": "user", "content": "clean up"},
            {"role": "assistant", "content": [use]},  # the history again
            {"role": "user", "content": [bad]}]},
         "response": {"id": "m2", "type": "message", "role": "assistant", "model": "claude-x",
                      "content": [{"type": "text", "text": "I could not."}],
                      "stop_reason": "end_turn",
                      "usage": {"input_tokens": 5, "output_tokens": 4}}},
    ]
    path = write(tmp_path, "run.jsonl", "".join(json.dumps(p) + "\n" for p in pairs))
    name, items = read_auto(path)
    assert name == "anthropic"
    t = only_trace(items)
    [call] = t.tool_calls  # once, although the second request repeats it
    assert (call.ok, call.error, call.location.line, call.result_location.line if
            call.result_location else 0) == (False, "permission denied", 1, 2)
    assert [(c.input_tokens, c.output_tokens, c.total_tokens) for c in t.llm_calls] == [
        (3120, 7, 3127), (5, 4, 9)]
    assert t.metadata == {"cache_read_input_tokens": 3000, "cache_creation_input_tokens": 20}
    assert (t.input, t.output) == ("clean up", "I could not.")


def test_server_tool_error_and_unmatched_result(tmp_path: Path) -> None:
    response = {"id": "m", "type": "message", "role": "assistant", "model": "claude-x",
                "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1},
                "content": [
                    {"type": "server_tool_use", "id": "srv_1", "name": "web_search",
                     "input": {"query": "refund policy"}},
                    {"type": "web_search_tool_result", "tool_use_id": "srv_1",
                     "content": {"type": "web_search_tool_result_error",
                                 "error_code": "max_uses_exceeded"}}]}
    request = {"model": "claude-x", "max_tokens": 5, "messages": [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nowhere",
                                      "content": "x"}]}]}
    path = write(tmp_path, "r.json", [response, request])
    _, items = read_auto(path)
    t = only_trace(items)
    [call] = t.tool_calls
    assert (call.name, call.arguments, call.ok, call.error) == (
        "web_search", {"query": "refund policy"}, False, "max_uses_exceeded")
    text = path.read_text().splitlines()
    [(rule, line)] = errors(items)
    assert rule == "input/unmatched_result"
    assert text[line - 1].strip() == "{"  # the tool_result block itself starts there
    assert '"tool_use_id": "nowhere"' in "".join(text[line - 1:line + 3])


def test_streamed_response_in_a_cassette(tmp_path: Path) -> None:
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_s", "type": "message",
                                              "role": "assistant", "model": "claude-x",
                                              "content": [], "usage": {"input_tokens": 50,
                                                                       "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_s", "name": "issue_refund",
                           "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"order_id": "A-1", '}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '"amount": 900}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
         "usage": {"output_tokens": 31}},
        {"type": "message_stop"},
    ]
    sse = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    body = json.dumps({"model": "claude-x", "max_tokens": 5,
                       "messages": [{"role": "user", "content": "refund A-1"}]})
    cassette = ("interactions:\n- request:\n    body: " + json.dumps(body) + "\n"
                "    method: POST\n    uri: https://api.anthropic.com/v1/messages\n"
                "  response:\n    body:\n      string: " + json.dumps(sse) + "\n"
                "    status: {code: 200, message: OK}\nversion: 1\n")
    path = write(tmp_path, "stream.yaml", cassette)
    name, items = read_auto(path)
    assert name == "anthropic"
    t = only_trace(items)
    [call] = t.tool_calls
    assert (call.name, call.arguments) == ("issue_refund", {"order_id": "A-1", "amount": 900})
    [llm] = t.llm_calls
    assert (llm.input_tokens, llm.output_tokens) == (50, 31)
    assert t.input == "refund A-1"


def test_fixture_of_the_example_run() -> None:
    # records-without-auth as JSON lines of request/response pairs
    _, items = read_auto(FIXTURES / "records-without-auth.jsonl")
    t = only_trace(items)
    [call] = t.tool_calls
    assert (call.name, call.arguments, call.location.line, call.result_location.line
            if call.result_location else 0) == ("get_customer", {"customer_id": "C-77120"}, 1, 2)
    assert t.end_location.line == 2
    assert t.input.startswith("Hi, what email and home address")


def test_other_files_are_not_anthropic(tmp_path: Path) -> None:
    native = Path(__file__).resolve().parents[2] / "examples" / "customer-service" / "traces"
    for path in sorted(native.glob("*.jsonl")):
        source = SourceFile(str(path), path.name, path.name)
        reader = pick_reader(source, "auto")
        assert not isinstance(reader, InputError) and reader.name == "native", path
    # a bare MCP content block and a sampling request are not Messages API bodies
    for name in ("fragment-tool-result-content.json", "fragment-sampling-request.json"):
        path = ALL_FIXTURES / "mcp" / name
        assert not READER.sniff(path.read_bytes(), SourceFile(str(path), "x", "x")), name


@pytest.mark.usefixtures("samples")
def test_the_mcp_samples_are_not_anthropic() -> None:
    paths = [*(SAMPLES / "mcp").glob("*ToolResultContent*.json"),
             *(SAMPLES / "mcp").glob("*CreateMessageRequestParams*.json")]
    assert len(paths) == 2
    for path in paths:
        assert not READER.sniff(path.read_bytes(), SourceFile(str(path), "x", "x")), path


def test_forced_on_a_foreign_file_is_an_input_error(tmp_path: Path) -> None:
    path = write(tmp_path, "x.json", {"hello": "world"})
    items = list(READER.read(SourceFile(str(path), "x.json", "x.json")))
    assert errors(items) == [("input/invalid_event", 1)]
    assert [i for i in items if isinstance(i, Trace)] == []
    assert any(isinstance(i, IgnoredEvents) for i in items)


def test_a_cut_gzip_body_in_a_cassette_is_an_error_at_its_line(tmp_path: Path) -> None:
    """vcrpy writes a compressed response as ``!!binary`` gzip bytes. A cut one stopped the
    reader (EOFError from gzip.decompress: every interaction of the file lost); now it is
    an input error at the body's line and the other interactions are read."""
    def message(tool: str) -> bytes:
        return json.dumps({"id": f"msg_{tool}", "type": "message", "role": "assistant",
                           "model": "claude-x", "stop_reason": "tool_use",
                           "content": [{"type": "tool_use", "id": f"toolu_{tool}",
                                        "name": tool, "input": {}}]}).encode()

    def interaction(body: bytes) -> str:
        request = json.dumps({"model": "claude-x", "max_tokens": 5,
                              "messages": [{"role": "user", "content": "hi"}]})
        return ("- request:\n    body: " + json.dumps(request) + "\n"
                "    uri: https://api.anthropic.com/v1/messages\n"
                "  response:\n    body:\n      string: !!binary |\n"
                f"        {base64.b64encode(body).decode()}\n")

    cut = gzip.compress(message("delete_all"))[:-10]
    path = write(tmp_path, "gz.yaml", "interactions:\n" + interaction(cut)
                 + interaction(gzip.compress(message("lookup"))))
    name, items = read_auto(path)
    assert name == "anthropic"
    [error] = [i for i in items if isinstance(i, InputError)]
    # line 7: where the first response's body value starts ("string: !!binary |"),
    # counted in the text above
    assert (error.rule, error.line, error.message) == (
        "input/parse_error", 7,
        "the response body is gzip data cut off before its end; record the cassette again")
    assert [c.name for c in only_trace(items).tool_calls] == ["lookup"]


def test_a_cassette_cut_off_after_a_request_is_an_error_not_a_pass(tmp_path: Path) -> None:
    """The last interaction holds a request and no response (a cassette truncated at a
    line break is still YAML): the answer, and the tool_use in it, were never read and
    the trace passed as whole. Now an input error at that interaction's line."""
    lookup = {"type": "tool_use", "id": "tu1", "name": "lookup", "input": {}}
    first = json.dumps({"model": "claude-x", "max_tokens": 5,
                        "messages": [{"role": "user", "content": "hi"}]})
    answer = json.dumps({"id": "msg_1", "type": "message", "role": "assistant",
                         "model": "claude-x", "stop_reason": "tool_use", "content": [lookup]})
    second = json.dumps({"model": "claude-x", "max_tokens": 5, "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": [lookup]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1",
                                      "content": "found"}]}]})
    cassette = ("interactions:\n"
                "- request:\n    body: " + json.dumps(first) + "\n"
                "    uri: https://api.anthropic.com/v1/messages\n"
                "  response:\n    body:\n      string: " + json.dumps(answer) + "\n"
                "- request:\n    body: " + json.dumps(second) + "\n"
                "    uri: https://api.anthropic.com/v1/messages\n")
    name, items = read_auto(write(tmp_path, "cut.yaml", cassette))
    assert name == "anthropic"
    # line 8: the second interaction's list item (6 lines per interaction from line 2)
    [error] = [i for i in items if isinstance(i, InputError)]
    assert (error.rule, error.line) == ("input/invalid_event", 8)
    assert error.message.startswith("this interaction recorded a request but no response body")
    assert [c.name for c in only_trace(items).tool_calls] == ["lookup"]


def test_a_cassette_body_written_as_a_yaml_mapping_is_read(tmp_path: Path) -> None:
    cassette = ("interactions:\n- request:\n    body:\n      model: claude-x\n"
                "      max_tokens: 5\n      messages: [{role: user, content: hi}]\n"
                "    uri: https://api.anthropic.com/v1/messages\n  response:\n    body:\n"
                "      id: msg_1\n      type: message\n      role: assistant\n"
                "      model: claude-x\n      stop_reason: tool_use\n"
                "      content: [{type: tool_use, id: tu1, name: delete_all, input: {}}]\n")
    name, items = read_auto(write(tmp_path, "map.yaml", cassette))
    assert name == "anthropic"
    calls = only_trace(items).tool_calls
    assert [c.name for c in calls] == ["delete_all"]
    assert calls[0].location.line == 15  # the line of its id, inside the mapping body


def _stream_cassette(tmp_path: Path, data_lines: list[str]) -> Path:
    """A cassette of one call whose response is streamed: ``data_lines`` as its events."""
    sse = "".join(f"event: x\ndata: {d}\n\n" for d in data_lines)
    body = json.dumps({"model": "claude-x", "max_tokens": 5,
                       "messages": [{"role": "user", "content": "clean up"}]})
    return write(tmp_path, "stream.yaml",
                 "interactions:\n- request:\n    body: " + json.dumps(body) + "\n"
                 "    method: POST\n    uri: https://api.anthropic.com/v1/messages\n"
                 "  response:\n    body:\n      string: " + json.dumps(sse) + "\n"
                 "    status: {code: 200, message: OK}\nversion: 1\n")


START = json.dumps({"type": "message_start", "message": {
    "id": "msg_s", "type": "message", "role": "assistant", "model": "claude-x",
    "content": [], "usage": {"input_tokens": 5, "output_tokens": 1}}})
DROP = json.dumps({"type": "content_block_start", "index": 0, "content_block": {
    "type": "tool_use", "id": "toolu_d", "name": "drop_database", "input": {}}})


@pytest.mark.parametrize(("events", "said"), [
    # the message_start line cut: the response was read as nothing, and nothing said
    ([START[:40], DROP], ["input/parse_error", "input/invalid_event"]),
    # no message_start at all (a stream recorded from its second event)
    ([DROP], ["input/invalid_event"]),
    # an index that is no whole number stopped the reader on the file (ValueError)
    ([START, DROP.replace('"index": 0', '"index": "0"')], ["input/invalid_event"]),
    ([START, DROP.replace('"index": 0', '"index": null')], ["input/invalid_event"]),
])
def test_a_streamed_response_never_loses_its_call_unsaid(tmp_path: Path, events: list[str],
                                                        said: list[str]) -> None:
    path = _stream_cassette(tmp_path, events)
    source = SourceFile(str(path), path.name, path.name)
    items = list(read_file(READER, source))
    t = only_trace(items)
    assert [c.name for c in t.tool_calls] == ["drop_database"]
    found = [(e.rule, e.line) for e in items if isinstance(e, InputError)]
    # each at line 8, where the response body's string starts
    assert found == [(rule, 8) for rule in said]
    assert all("the response body: " in str(e) for e in items if isinstance(e, InputError))


def test_a_call_outside_an_assistant_message_is_never_passed_over(tmp_path: Path) -> None:
    drop = {"type": "tool_use", "id": "toolu_d", "name": "drop_database", "input": {}}
    lines = [{"role": "user", "content": "clean up"},
             {"role": "user", "content": [drop]},  # read, and said
             {"role": "system", "content": [dict(drop, id="toolu_e")]},  # not read: said
             {"role": "assistant", "content": dict(drop, id="toolu_f")}]  # one block: read
    path = write(tmp_path, "m.jsonl", "".join(json.dumps(m) + "\n" for m in lines))
    items = list(read_file(READER, SourceFile(str(path), path.name, path.name)))
    t = only_trace(items)
    assert [(c.id, c.location.line) for c in t.tool_calls] == [("toolu_d", 2), ("toolu_f", 4)]
    assert errors(items) == [("input/invalid_event", 2), ("input/invalid_event", 3),
                             ("input/invalid_event", 4)]


def test_a_streamed_block_started_under_an_index_in_use_is_a_block_of_its_own(
        tmp_path: Path) -> None:
    # a server numbering every block 0: the second block replaced the first, whose call
    # was never read
    read = DROP.replace("toolu_d", "toolu_r").replace("drop_database", "read_file")
    path = _stream_cassette(tmp_path, [START, read, DROP])
    items = list(read_file(READER, SourceFile(str(path), path.name, path.name)))
    t = only_trace(items)
    assert [c.name for c in t.tool_calls] == ["read_file", "drop_database"]
    assert errors(items) == []


def test_a_streamed_event_holding_a_line_separator_is_read(tmp_path: Path) -> None:
    # U+2028 and U+0085, which JSON holds unescaped, in a text and a call's arguments: the
    # data: lines were split there, read as broken JSON, and the arguments were lost
    text = json.dumps({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": "I will clean\u2028up"}},
                      ensure_ascii=False)
    args = json.dumps({"type": "content_block_delta", "index": 1, "delta": {
        "type": "input_json_delta", "partial_json": '{"name": "prod\u0085db"}'}},
        ensure_ascii=False)
    path = _stream_cassette(tmp_path, [START, text, DROP.replace('"index": 0', '"index": 1'),
                                       args])
    items = list(read_file(READER, SourceFile(str(path), path.name, path.name)))
    t = only_trace(items)
    assert [(c.name, c.arguments) for c in t.tool_calls] == [
        ("drop_database", {"name": "prod\u0085db"})]
    assert t.output == "I will clean\u2028up"
    assert errors(items) == []
