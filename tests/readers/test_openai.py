"""The OpenAI readers (docs/formats/openai_chat.md, openai_responses.md, openai_agents.md):
Chat Completions, Responses API and Agents SDK files, read by auto-detection.

Expected values are read by hand from the fixtures (tests/fixtures/openai_*/) and, when they
are beside the repository, the real-world samples; each assertion cites the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FIXTURES, SAMPLES

from agent_eval.api import load_traces
from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import ReadItem, SourceFile, pick_reader
from agent_eval.readers.base import FileRead
from agent_eval.readers.openai import CHAT_READER, RESPONSES_READER
from agent_eval.readers.openai_agents import READER as AGENTS_READER

needs_samples = pytest.mark.usefixtures("samples")
CHAT = SAMPLES / "openai_chat" / "openinference-openai__test_tool_calls"
RESP = SAMPLES / "openai_responses" / "openinference-agent-framework__test_agent_with_tool_calls"
AGENTS = SAMPLES / "openai_agents_sdk"


def read_path(path: Path | str, fmt: str = "auto") -> list[ReadItem]:
    return [x for x in load_traces([path], format=fmt) if not isinstance(x, FileRead)]


def errors(items: list[ReadItem]) -> list[InputError]:
    return [i for i in items if isinstance(i, InputError)]


def one(items: list[ReadItem]) -> Trace:
    assert errors(items) == []
    [trace] = [i for i in items if isinstance(i, Trace)]
    return trace


def write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: Any,
          name: str = "t.json") -> list[ReadItem]:
    monkeypatch.chdir(tmp_path)
    if isinstance(content, str):
        text = content
    elif name.endswith(".jsonl"):
        text = "".join(json.dumps(c) + "\n" for c in content)
    else:
        text = json.dumps(content, indent=1)
    (tmp_path / name).write_text(text, encoding="utf-8")
    return read_path(name)


def calls(t: Trace) -> list[tuple[str, Any, Any]]:
    return [(c.name, c.id, c.arguments) for c in t.tool_calls]


# ============================================================ Chat Completions
def test_chat_request_body_fixture() -> None:
    t = one(read_path(FIXTURES / "openai_chat" / "request.json"))
    assert t.format == "openai_chat"
    assert calls(t) == [("lookup_order", "call_lookup",
                         {"order_id": "A-12"}),  # lines 15-22
                        ("get_refund_policy", "call_policy", {"category": "toys"})]  # 23-30
    assert [c.location.line for c in t.tool_calls] == [15, 23]  # the tool_calls objects
    # role "tool" messages at lines 33 and 38
    assert [(c.result, c.result_location.line if c.result_location else None)
            for c in t.tool_calls] == [('{"order_id": "A-12", "total": 35}', 33),
                                       ("30 days", 38)]
    assert all(c.ok for c in t.tool_calls)
    assert t.input == "Refund order A-12."  # line 10, the first user message
    assert t.output is None  # the request ends with the user's question: no answer yet
    assert t.llm_calls == []  # a request records no usage
    assert t.end_location.line == 43  # the last message


def test_chat_response_body_fixture() -> None:
    t = one(read_path(FIXTURES / "openai_chat" / "response.json"))
    assert calls(t) == [("issue_refund", "call_refund", {"order_id": "A-12", "amount": 35})]
    assert [c.location.line for c in t.tool_calls] == [13]
    assert not t.tool_calls[0].has_result
    [llm] = t.llm_calls  # "usage" at line 27: 240 prompt, 21 completion, 261 total
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens, llm.cost_usd) == (
        "gpt-4o-mini-2024-07-18", 240, 21, 261, None)
    assert t.output is None  # "content": null
    assert t.metadata["response_ids"] == ["chatcmpl-refund-12"]  # line 2


def test_chat_vcr_cassette_fixture() -> None:
    t = one(read_path(FIXTURES / "openai_chat" / "cassette.vcr.yaml"))
    assert t.format == "openai_chat"
    # the request body is on the interaction at line 2, the response at line 8
    assert [(c.name, c.location.line, c.has_result) for c in t.tool_calls] == [
        ("lookup_order", 2, True), ("issue_refund", 8, False)]
    assert t.tool_calls[0].result == "total 35"
    assert [(c.input_tokens, c.output_tokens) for c in t.llm_calls] == [(240, 21)]


@needs_samples
def test_chat_request_body() -> None:
    t = one(read_path(f"{CHAT}.interaction0.request.json"))
    assert t.format == "openai_chat"
    assert calls(t) == [("get_weather", "call_62136355", {"city": "New York"}),  # line 7-11
                        ("get_population", "call_62136356", {"city": "New York"})]  # 15-19
    assert [c.location.line for c in t.tool_calls] == [6, 14]  # the tool_calls objects
    # role "tool" messages at lines 24 and 29 (tool_call_id on lines 26 and 31)
    assert [(c.result, c.result_location.line if c.result_location else None)
            for c in t.tool_calls] == [
        ('{"city": "New York", "weather": "fine"}', 24),
        ('{"city": "New York", "weather": "large"}', 29)]
    assert all(c.ok for c in t.tool_calls)
    assert t.input == "What's the weather and population in San Francisco?"  # line 40
    assert t.output is None  # the request ends with the user's question: no answer yet
    assert t.llm_calls == []  # a request records no usage


@needs_samples
def test_chat_response_body() -> None:
    t = one(read_path(f"{CHAT}.interaction0.response.json"))
    assert t.format == "openai_chat"
    assert calls(t) == [
        ("get_weather", "call_S1xa8vawU2HXSrvSeUcqSCZm", {"city": "San Francisco"}),  # line 14
        ("get_population", "call_ZfEORmbRGEJZ4b7dAuVSPnaf", {"city": "San Francisco"})]
    assert [c.location.line for c in t.tool_calls] == [13, 21]
    assert not any(c.has_result for c in t.tool_calls)
    [llm] = t.llm_calls  # "usage" at line 37: 207 prompt, 46 completion, 253 total
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens, llm.cost_usd) == (
        "gpt-4o-mini-2024-07-18", 207, 46, 253, None)
    assert t.output is None  # "content": null


@needs_samples
def test_chat_vcr_cassette_reads_request_then_response() -> None:
    t = one(read_path(f"{CHAT}.vcr.yaml"))
    assert t.format == "openai_chat"
    assert [c.name for c in t.tool_calls] == ["get_weather", "get_population"] * 2
    # the request body is on the interaction at line 2, the response at line 23
    assert [c.location.line for c in t.tool_calls] == [2, 2, 23, 23]
    assert [c.has_result for c in t.tool_calls] == [True, True, False, False]
    assert [(c.input_tokens, c.output_tokens) for c in t.llm_calls] == [(207, 46)]


def test_chat_api_log_with_repeated_history(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # tests/fixtures/openai_chat/records-without-auth.jsonl: line 2's request
    # repeats line 1's conversation (assistant tool call + tool result)
    t = one(read_path(FIXTURES / "openai_chat" / "records-without-auth.jsonl"))
    assert calls(t) == [("get_customer", "call_r1", {"customer_id": "C-77120"})]
    assert (t.tool_calls[0].location.line, t.tool_calls[0].result_location.line  # type: ignore[union-attr]
            ) == (1, 2)
    assert [(c.input_tokens, c.output_tokens, c.total_tokens) for c in t.llm_calls] == [
        (790, 36, 826), (1012, 55, 1067)]
    assert isinstance(t.output, str) and t.output.startswith("Sure! The email on file is")


def test_chat_unmatched_and_id_less_tool_messages(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    items = write(tmp_path, monkeypatch, {"messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "zz", "content": "?"},
        {"role": "tool", "content": "no id"},
        {"role": "tool", "tool_call_id": "c1", "content": "fine"},
    ]})
    text = (tmp_path / "t.json").read_text().splitlines()
    tool_objects = [n - 1 for n, ln in enumerate(text, 1) if '"role": "tool"' in ln]
    assert [(e.rule, e.line) for e in errors(items)] == [
        ("input/invalid_event", tool_objects[1]), ("input/unmatched_result", tool_objects[0])]
    [t] = [i for i in items if isinstance(i, Trace)]
    assert t.tool_calls[0].result == "fine"


def test_chat_arguments_encoded_twice_and_legacy_function_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    twice = json.dumps(json.dumps({"percent": 50}))
    t = one(write(tmp_path, monkeypatch, [
        {"role": "system", "content": "s"},
        {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "apply_discount", "arguments": twice}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": None,
         "function_call": {"name": "lookup", "arguments": '{"q": 1}'}},
        {"role": "function", "name": "lookup", "content": "found"},
        {"role": "assistant", "content": "done"},
    ], name="chat.jsonl"))
    assert [(c.name, c.arguments, c.result) for c in t.tool_calls] == [
        ("apply_discount", {"percent": 50}, "ok"), ("lookup", {"q": 1}, "found")]
    assert t.output == "done"


def test_chat_custom_tool_call_is_read_by_its_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A custom tool (type "custom") holds its name and free-text input under "custom", not
    # "function": it was read as a call of 'unknown', which no blocklist entry matched.
    items = write(tmp_path, monkeypatch, {
        "object": "chat.completion", "model": "gpt-5",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "custom",
                 "custom": {"name": "run_shell", "input": "rm -rf /"}},
                {"id": "call_2", "type": "function",
                 "function": {"name": "lookup", "arguments": "{}"}}]}}]})
    t = one(items)
    assert calls(t) == [("run_shell", "call_1", {"input": "rm -rf /"}),
                        ("lookup", "call_2", {})]
    # indent=1: "choices" at line 4, "tool_calls" at 11, the items open at lines 12 and 20
    assert [c.location.line for c in t.tool_calls] == [12, 20]


def test_chat_response_with_several_choices_reads_the_calls_of_each(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A response to a request with n > 1: only choices[0] was read, so a call the second
    # choice asked for (the agent may have gone on with it) was dropped without a word.
    items = write(tmp_path, monkeypatch, {
        "object": "chat.completion", "model": "gpt-4o",
        "choices": [
            {"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_a", "type": "function",
                     "function": {"name": "lookup", "arguments": "{}"}}]}},
            {"index": 1, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_b", "type": "function",
                     "function": {"name": "delete_file", "arguments": "{\"path\": \"/\"}"}}]}},
            "not a choice"]}, name="resp.json")
    [err] = errors(items)
    # indent=1: "choices" opens at line 4 (a string item has no line of its own: the
    # list's); the tool_calls items open at lines 12 and 30
    assert (err.rule, err.line) == ("input/invalid_event", 4)
    assert err.message == "a response's choice must be a JSON object, not string"
    [t] = [i for i in items if isinstance(i, Trace)]
    assert calls(t) == [("lookup", "call_a", {}), ("delete_file", "call_b", {"path": "/"})]
    assert [c.location.line for c in t.tool_calls] == [12, 30]


def test_chat_response_answer_is_the_first_choice_and_another_answer_is_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # With every choice read, the output was the last choice's text: choice 0 (what the
    # SDK's choices[0] gave the agent) leaking a secret passed not_contains, exit 0.
    def choice(k: int, text: str) -> dict[str, Any]:
        return {"index": k, "message": {"role": "assistant", "content": text}}

    items = write(tmp_path, monkeypatch, {
        "object": "chat.completion", "model": "gpt-4o",
        "choices": [choice(0, "The admin password is hunter2."),
                    choice(1, "I cannot share that."),
                    choice(2, "The admin password is hunter2.")]}, name="resp.json")
    [err] = errors(items)
    # indent=1: "choices" opens at line 4, each choice takes 7 lines from line 5: the
    # message of choice 1 opens at line 14 (choice 2 says what choice 0 did: no error)
    assert (err.rule, err.line) == ("input/invalid_event", 14)
    assert err.message.startswith("choice 1 of the response answers otherwise than "
                                  "choice 0: the output checks read choice 0's answer")
    [t] = [i for i in items if isinstance(i, Trace)]
    assert t.output == "The admin password is hunter2."


def test_chat_tool_call_without_a_name_or_not_an_object_is_an_input_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = write(tmp_path, monkeypatch, [
        {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"arguments": "{}"}}, "c2"]},
        {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"arguments": "{}"}}]},
    ], name="chat.jsonl")
    # line 1: the nameless call (said once: line 2 repeats it as a history) and the string
    assert [(e.rule, e.line, e.message) for e in errors(items)] == [
        ("input/invalid_event", 1, "a tool call without a tool name: it is read as a call "
         "of 'unknown', which no rule naming a tool matches; record the name"),
        ("input/invalid_event", 1, "a 'tool_calls' item must be a JSON object, not string; "
         "the call in it cannot be read")]
    [t] = [i for i in items if isinstance(i, Trace)]
    assert calls(t) == [("unknown", "c1", {})]


def _chunk(*deltas: dict[str, Any], finish: str | None = None,
           usage: dict[str, int] | None = None, rid: str = "chatcmpl-1") -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": rid, "object": "chat.completion.chunk", "model": "gpt-4o",
        "choices": [{"index": 0, "delta": d, "finish_reason": finish} for d in deltas]}
    if usage is not None:
        body["usage"] = usage
        body["choices"] = []
    return body


def _tc(index: int, args: str, cid: str | None = None,
        name: str | None = None) -> dict[str, Any]:
    fn: dict[str, Any] = {"arguments": args}
    if name is not None:
        fn["name"] = name
    tc: dict[str, Any] = {"index": index, "function": fn}
    if cid is not None:
        tc.update(id=cid, type="function")
    return tc


def test_chat_streamed_chunks_are_put_together(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A streamed response (stream: true) saved chunk by chunk: the chunks were ignored
    # events, so the calls in them passed every rule with exit 0.
    rows = [
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "clean up"}]},  # 1
        _chunk({"role": "assistant", "content": None,  # line 2: both calls start
                "tool_calls": [_tc(0, "", "call_a", "delete_customer"),
                               _tc(1, '{"q":', "call_b", "lookup")]}),
        _chunk({"tool_calls": [_tc(0, '{"id": ')]}),  # 3
        _chunk({"tool_calls": [_tc(1, ' "x"}'), _tc(0, "7}")]}),  # 4
        _chunk({}, finish="tool_calls"),  # 5: the calls are read
        _chunk(usage={"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}),  # 6
        {"model": "gpt-4o", "messages": [  # 7: the next request repeats the calls
            {"role": "user", "content": "clean up"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_a", "type": "function",
                 "function": {"name": "delete_customer", "arguments": '{"id": 7}'}},
                {"id": "call_b", "type": "function",
                 "function": {"name": "lookup", "arguments": '{"q": "x"}'}}]},
            {"role": "tool", "tool_call_id": "call_a", "content": "deleted"},
            {"role": "tool", "tool_call_id": "call_b", "content": "found"}]},
        _chunk({"role": "assistant", "content": "Do"}, rid="chatcmpl-2"),  # 8
        _chunk({"content": "ne."}, finish="stop", rid="chatcmpl-2"),  # 9
    ]
    t = one(write(tmp_path, monkeypatch, rows, name="chat.jsonl"))
    assert t.format == "openai_chat"
    assert [(c.name, c.id, c.arguments, c.location.line, c.result) for c in t.tool_calls] == [
        ("delete_customer", "call_a", {"id": 7}, 2, "deleted"),
        ("lookup", "call_b", {"q": "x"}, 2, "found")]
    # one LLM call per streamed response (lines 2 and 8), tokens from line 6's usage chunk
    assert [(c.location.line, c.model, c.input_tokens, c.output_tokens, c.total_tokens)
            for c in t.llm_calls] == [(2, "gpt-4o", 9, 4, 13),
                                      (8, "gpt-4o", None, None, None)]
    assert (t.input, t.output) == ("clean up", "Done.")
    assert t.metadata["response_ids"] == ["chatcmpl-1", "chatcmpl-2"]


def test_chat_stream_cut_off_still_has_its_calls(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # no finish_reason: the file ends inside the stream; the calls are read as they came
    rows = [
        _chunk({"role": "assistant", "tool_calls": [
            {"index": 0, "id": "call_c", "type": "custom",
             "custom": {"name": "run_shell", "input": "rm "}}]}),
        _chunk({"tool_calls": [{"index": 0, "custom": {"input": "-rf /"}}]}),
        _chunk({"function_call": {"name": "legacy", "arguments": '{"a":'}}, rid="chatcmpl-2"),
        _chunk({"function_call": {"arguments": " 1}"}}, rid="chatcmpl-2"),
    ]
    t = one(write(tmp_path, monkeypatch, rows, name="chat.jsonl"))
    assert [(c.name, c.id, c.arguments, c.location.line) for c in t.tool_calls] == [
        ("run_shell", "call_c", {"input": "rm -rf /"}, 1), ("legacy", None, {"a": 1}, 3)]


def test_responses_streamed_events_are_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Server-sent events of a streamed response: they were ignored events (and each event
    # with a "response" was read as a response: response.created an LLM call of its own).
    fc = {"id": "fc_1", "type": "function_call", "call_id": "call_1",
          "name": "delete_customer", "arguments": ""}
    done = {**fc, "status": "completed", "arguments": '{"id": 7}'}
    rows = [
        {"type": "response.created", "response": {
            "id": "resp_1", "object": "response", "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": fc},  # 2
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{"},
        {"type": "response.output_item.done", "output_index": 0, "item": done},  # 4
        {"type": "response.output_item.added", "output_index": 1,  # 5
         "item": {"id": "ctc_1", "type": "custom_tool_call", "call_id": "call_2",
                  "name": "run_shell", "input": ""}},
        {"type": "response.custom_tool_call_input.delta", "item_id": "ctc_1", "delta": "ls"},
        {"type": "response.completed", "response": {  # 7: both items again
            "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-4.1",
            "output": [done, {"id": "ctc_1", "type": "custom_tool_call", "call_id": "call_2",
                              "name": "run_shell", "input": "ls"}],
            "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}}},
        {"type": "response.created", "response": {
            "id": "resp_2", "object": "response", "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0,  # 9: cut off
         "item": {**fc, "id": "fc_2", "call_id": "call_3", "name": "purge"}},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_2",
         "delta": '{"all": true}'},
        {"type": "response.output_item.added", "output_index": 1,  # 11: cut off too
         "item": {"id": "ctc_2", "type": "custom_tool_call", "call_id": "call_4",
                  "name": "run_shell", "input": ""}},
        {"type": "response.custom_tool_call_input.delta", "item_id": "ctc_2", "delta": "rm"},
    ]
    t = one(write(tmp_path, monkeypatch, rows, name="resp.jsonl"))
    assert t.format == "openai_responses"
    assert [(c.name, c.id, c.arguments, c.location.line) for c in t.tool_calls] == [
        ("delete_customer", "call_1", {"id": 7}, 4), ("run_shell", "call_2", {"input": "ls"}, 7),
        ("purge", "call_3", {"all": True}, 9), ("run_shell", "call_4", {"input": "rm"}, 11)]
    # one LLM call: the completed response's (line 7), not one per event holding a response
    assert [(c.location.line, c.model, c.total_tokens) for c in t.llm_calls] == [
        (7, "gpt-4.1", 8)]


# A call id reused for another call (some OpenAI-compatible servers number calls call_0,
# call_1, ... per response; hand-edited logs): the second call is a call of its own and an
# input error at its line; a history repeated in a request log is still read once.
REUSED_MESSAGE = ("call id '{}' reused for a different call (name/arguments differ from the "
                  "'get_customer' call at line {}); it is read as a call of its own; give each "
                  "call its own id")
CHAT_REUSE = (
    '[\n'
    ' {"role":"user","content":"clean up"},\n'
    ' {"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function",'
    '"function":{"name":"get_customer","arguments":"{\\"id\\":1}"}}]},\n'
    ' {"role":"tool","tool_call_id":"call_0","content":"ok"},\n'
    ' {"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function",'
    '"function":{"name":"delete_customer","arguments":"{\\"id\\":1}"}}]},\n'
    ' {"role":"tool","tool_call_id":"call_0","content":"%s"},\n'
    ' {"role":"assistant","content":"done"}\n'
    ']\n')


@pytest.mark.parametrize("second", ["ok", "deleted"])
def test_chat_call_id_reused_for_another_call_is_kept_and_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second: str) -> None:
    items = write(tmp_path, monkeypatch, CHAT_REUSE % second)
    # line 5: the second assistant message's call_0 is delete_customer, not line 3's call
    assert [(e.rule, e.line, e.message) for e in errors(items)] == [
        ("input/invalid_event", 5, REUSED_MESSAGE.format("call_0", 3))]
    [t] = [i for i in items if isinstance(i, Trace)]
    assert calls(t) == [("get_customer", "call_0", {"id": 1}),
                        ("delete_customer", "call_0", {"id": 1})]
    # each result (lines 4 and 6) goes to the call before it
    assert [(c.result, c.result_location.line if c.result_location else None)
            for c in t.tool_calls] == [("ok", 4), (second, 6)]


def test_chat_request_log_repeating_a_reused_id_reads_each_call_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    get = {"id": "call_0", "type": "function",
           "function": {"name": "get_customer", "arguments": '{"id": 1}'}}
    delete = {"id": "call_0", "type": "function",
              "function": {"name": "delete_customer", "arguments": '{"id":1}'}}
    user = {"role": "user", "content": "clean up"}
    history = [user, {"role": "assistant", "content": None, "tool_calls": [get]},
               {"role": "tool", "tool_call_id": "call_0", "content": "ok"}]
    items = write(tmp_path, monkeypatch, [
        {"request": {"model": "m", "messages": [user]},  # line 1
         "response": {"object": "chat.completion", "choices": [
             {"message": {"role": "assistant", "content": None, "tool_calls": [get]}}]}},
        {"request": {"model": "m", "messages": history},  # line 2: delete reuses call_0
         "response": {"object": "chat.completion", "choices": [
             {"message": {"role": "assistant", "content": None, "tool_calls": [delete]}}]}},
        # line 3: the whole history again, the get_customer call's arguments written with
        # other spacing by the client; delete's result comes only now
        {"request": {"model": "m", "messages": [
            user, {"role": "assistant", "content": None, "tool_calls": [
                {**get, "function": {"name": "get_customer", "arguments": '{"id":1}'}}]},
            history[2], {"role": "assistant", "content": None, "tool_calls": [delete]},
            {"role": "tool", "tool_call_id": "call_0", "content": "deleted"}]},
         "response": {"object": "chat.completion", "choices": [
             {"message": {"role": "assistant", "content": "done"}}]}},
    ], name="log.jsonl")
    assert [(e.rule, e.line, e.message) for e in errors(items)] == [
        ("input/invalid_event", 2, REUSED_MESSAGE.format("call_0", 1))]
    [t] = [i for i in items if isinstance(i, Trace)]
    assert calls(t) == [("get_customer", "call_0", {"id": 1}),
                        ("delete_customer", "call_0", {"id": 1})]
    # line 3 repeats get_customer's "ok" while delete_customer is open: a repeat, not
    # delete_customer's result, which is "deleted" (line 3 too)
    assert [(c.result, c.location.line, c.result_location.line if c.result_location else None)
            for c in t.tool_calls] == [("ok", 1, 2), ("deleted", 2, 3)]
    assert t.output == "done"


def test_chat_second_other_result_for_one_call_is_unmatched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = write(tmp_path, monkeypatch, (
        '[\n'
        ' {"role":"assistant","tool_calls":[{"id":"c1","type":"function",'
        '"function":{"name":"get_customer","arguments":"{}"}}]},\n'
        ' {"role":"tool","tool_call_id":"c1","content":"ok"},\n'
        ' {"role":"tool","tool_call_id":"c1","content":"ok"},\n'
        ' {"role":"tool","tool_call_id":"c1","content":"changed"}\n'
        ']\n'))
    # line 4 repeats line 3's result (ignored); line 5's differs and matches no open call
    assert [(e.rule, e.line) for e in errors(items)] == [("input/unmatched_result", 5)]
    [t] = [i for i in items if isinstance(i, Trace)]
    assert [(c.result, c.result_location.line if c.result_location else None)
            for c in t.tool_calls] == [("ok", 3)]


# =============================================================== Responses API
def test_responses_response_and_continuation_request_fixtures() -> None:
    t = one(read_path(FIXTURES / "openai_responses" / "response.json"))
    assert t.format == "openai_responses"
    [call] = t.tool_calls  # the function_call item at line 7
    assert (call.name, call.id, call.arguments, call.location.line) == (
        "lookup_order", "call_lookup_13", {"order_id": "A-13"}, 7)
    assert not call.has_result
    [llm] = t.llm_calls  # "usage" at line 17: 95 in, 14 out, 109 total
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens) == (
        "gpt-4o-mini-2024-07-18", 95, 14, 109)
    # the next request holds only the output of that call (previous_response_id, line 10):
    # the call is in another file, which is not an error
    t = one(read_path(FIXTURES / "openai_responses" / "continuation-request.json"))
    assert t.tool_calls == [] and t.llm_calls == []
    assert t.metadata["earlier_call_ids"] == ["call_lookup_13"]  # line 4
    assert t.metadata["previous_response_id"] == "resp_refund_1"


def test_responses_vcr_cassette_fixture_is_the_whole_run() -> None:
    t = one(read_path(FIXTURES / "openai_responses" / "cassette.vcr.yaml"))
    [call] = t.tool_calls
    assert (call.name, call.arguments, call.result) == (
        "lookup_order", {"order_id": "A-13"}, "order A-13: delivered")
    # interactions at lines 2 and 13; their responses at lines 7 and 18
    assert (call.location.line, call.result_location.line) == (7, 13)  # type: ignore[union-attr]
    assert [(c.input_tokens, c.output_tokens, c.location.line) for c in t.llm_calls] == [
        (95, 14, 7), (130, 9, 18)]
    assert t.input == "Is order A-13 delivered?"
    assert t.output == "Yes, order A-13 was delivered."
    assert t.metadata["response_ids"] == ["resp_refund_1", "resp_refund_2"]


@needs_samples
def test_responses_first_request_and_response() -> None:
    t = one(read_path(f"{RESP}.interaction0.request.json"))
    assert t.format == "openai_responses"
    assert t.input == "What's the weather in San Francisco?"  # line 19
    assert (t.tool_calls, t.llm_calls) == ([], [])
    t = one(read_path(f"{RESP}.interaction0.response.json"))
    assert t.format == "openai_responses"
    [call] = t.tool_calls  # the function_call item at line 19
    assert (call.name, call.id, call.arguments, call.location.line) == (
        "get_weather", "call_mhr5WBWG8kgyIy15JTItue8Q", {"location": "San Francisco"}, 19)
    assert not call.has_result
    [llm] = t.llm_calls  # "usage" at line 73: 73 in, 16 out, 89 total
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens) == (
        "gpt-4o-mini-2024-07-18", 73, 16, 89)


@needs_samples
def test_responses_continuation_request_is_not_an_error() -> None:
    # interaction1.request: only a function_call_output for a call made in the previous
    # response (previous_response_id, line 10): the call is in another file.
    t = one(read_path(f"{RESP}.interaction1.request.json"))
    assert t.tool_calls == []
    assert t.metadata["earlier_call_ids"] == ["call_mhr5WBWG8kgyIy15JTItue8Q"]  # line 4
    t = one(read_path(f"{RESP}.interaction1.response.json"))
    assert t.output == "The weather in San Francisco is sunny with a temperature of 72°F."
    [llm] = t.llm_calls  # line 79: 108 in, 17 out, 125 total
    assert (llm.input_tokens, llm.output_tokens, llm.total_tokens) == (108, 17, 125)


@needs_samples
def test_responses_vcr_cassette_is_the_whole_run() -> None:
    t = one(read_path(f"{RESP}.vcr.yaml"))
    assert t.format == "openai_responses"
    [call] = t.tool_calls
    assert (call.name, call.arguments) == ("get_weather", {"location": "San Francisco"})
    assert call.result == "The weather in San Francisco is sunny and 72°F"
    # interactions at lines 2 and 125; their responses at lines 44 and 168
    assert (call.location.line, call.result_location.line) == (44, 125)  # type: ignore[union-attr]
    assert [(c.input_tokens, c.output_tokens, c.location.line) for c in t.llm_calls] == [
        (73, 16, 44), (108, 17, 168)]
    assert t.input == "What's the weather in San Francisco?"
    assert t.output == "The weather in San Francisco is sunny with a temperature of 72°F."


def test_responses_log_and_item_list_fixtures() -> None:
    t = one(read_path(FIXTURES / "openai_responses" / "discount-too-high.jsonl"))
    assert [c.name for c in t.tool_calls] == [
        "authenticate_user", "get_customer", "apply_discount"]  # line 2, one response
    assert [c.result_location.line for c in t.tool_calls  # type: ignore[union-attr]
            ] == [3, 3, 3]
    assert [(c.input_tokens, c.output_tokens) for c in t.llm_calls] == [(823, 47), (1164, 58)]
    t = one(read_path(FIXTURES / "openai_responses" / "records-without-auth.json"))
    [call] = t.tool_calls
    assert (call.name, call.location.line, call.result_location.line  # type: ignore[union-attr]
            ) == ("get_customer", 12, 20)
    assert t.llm_calls == []  # a bare item list records no usage


def test_responses_hosted_and_custom_tools(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    t = one(write(tmp_path, monkeypatch, {"object": "response", "model": "gpt-5", "output": [
        {"type": "web_search_call", "id": "ws_1", "status": "completed",
         "action": {"type": "search", "query": "kettle"}},
        {"type": "mcp_call", "id": "mcp_1", "name": "get_stock", "server_label": "shop",
         "arguments": '{"sku": "K1"}', "output": None, "error": "tool timed out"},
        {"type": "custom_tool_call", "call_id": "ct_1", "name": "apply_patch",
         "input": "*** Begin Patch"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "brand_new_item", "id": "x"},
    ], "usage": {"input_tokens": 10, "output_tokens": 2}}))
    assert calls(t) == [("web_search", "ws_1", {"type": "search", "query": "kettle"}),
                        ("get_stock", "mcp_1", {"sku": "K1"}),
                        ("apply_patch", "ct_1", {"input": "*** Begin Patch"})]
    assert [(c.ok, c.error) for c in t.tool_calls] == [
        (True, None), (False, "tool timed out"), (True, None)]
    assert [(c.input_tokens, c.output_tokens, c.total_tokens) for c in t.llm_calls] == [
        (10, 2, 12)]


def test_responses_failed_apply_patch_output_is_a_failed_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # apply_patch_call_output's status is "completed" or "failed" (the API reference);
    # a patch that did not apply was read as a success and passed tool_health
    t = one(write(tmp_path, monkeypatch, [
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "fix it"}]},
        {"type": "apply_patch_call", "call_id": "p1", "status": "completed",
         "operation": {"type": "update_file", "path": "a.py", "diff": "-a\n+b\n"}},
        {"type": "apply_patch_call_output", "call_id": "p1", "status": "failed",
         "output": "hunk 1 did not apply"},
        {"type": "apply_patch_call", "call_id": "p2", "status": "completed",
         "operation": {"type": "delete_file", "path": "b.py"}},
        {"type": "apply_patch_call_output", "call_id": "p2", "status": "completed"},
    ]))
    assert [(c.name, c.id, c.ok, c.error, c.result) for c in t.tool_calls] == [
        ("apply_patch", "p1", False, "status failed", "hunk 1 did not apply"),
        ("apply_patch", "p2", True, None, None)]


def test_responses_mcp_call_failed_by_its_status_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # mcp_call.status may be "failed" with error null: it was read as a success (output
    # null), or as a call without a result (no output key)
    t = one(write(tmp_path, monkeypatch, {"object": "response", "model": "gpt-5", "output": [
        {"type": "mcp_call", "id": "m1", "name": "delete_repo", "server_label": "gh",
         "arguments": "{}", "output": None, "error": None, "status": "failed"},
        {"type": "mcp_call", "id": "m2", "name": "get_repo", "server_label": "gh",
         "arguments": "{}", "status": "failed"},
        {"type": "mcp_call", "id": "m3", "name": "get_repo", "server_label": "gh",
         "arguments": "{}", "output": "ok", "status": "completed"},
    ]}))
    assert [(c.id, c.ok, c.error, c.has_result) for c in t.tool_calls] == [
        ("m1", False, "status failed", True), ("m2", False, "status failed", True),
        ("m3", True, None, True)]


@pytest.mark.parametrize("body", ["input", "output"])
def test_responses_call_id_reused_for_another_call_is_kept_and_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    items = write(tmp_path, monkeypatch, (
        '{"model": "m",\n' + ('"object": "response",\n' if body == "output" else '\n') +
        f' "{body}": [\n'
        '  {"type":"function_call","call_id":"call_0","name":"get_customer",'
        '"arguments":"{\\"id\\":1}"},\n'
        '  {"type":"function_call_output","call_id":"call_0","output":"ok"},\n'
        '  {"type":"function_call","call_id":"call_0","name":"delete_customer",'
        '"arguments":"{\\"id\\":1}"},\n'
        '  {"type":"function_call_output","call_id":"call_0","output":"ok"}\n'
        ' ]}\n'))
    # line 6: the second function_call reuses line 4's call_0
    assert [(e.rule, e.line, e.message) for e in errors(items)] == [
        ("input/invalid_event", 6, REUSED_MESSAGE.format("call_0", 4))]
    [t] = [i for i in items if isinstance(i, Trace)]
    assert calls(t) == [("get_customer", "call_0", {"id": 1}),
                        ("delete_customer", "call_0", {"id": 1})]
    assert [(c.result, c.result_location.line if c.result_location else None)
            for c in t.tool_calls] == [("ok", 5), ("ok", 7)]


def test_responses_continuation_other_output_of_a_call_in_the_file_is_unmatched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = write(tmp_path, monkeypatch, [
        {"object": "response", "id": "r1", "output": [  # line 1
            {"type": "function_call", "call_id": "c1", "name": "get_customer",
             "arguments": "{}"}]},
        {"previous_response_id": "r1", "input": [  # line 2: c1's output
            {"type": "function_call_output", "call_id": "c1", "output": "ok"}]},
        {"previous_response_id": "r1", "input": [  # line 3: another output of c1, and
            {"type": "function_call_output", "call_id": "c1", "output": "changed"},
            {"type": "function_call_output", "call_id": "c0", "output": "x"}]},  # c0's
    ], name="log.jsonl")
    # c0 was called before this file (not an error); c1's second output is not c1's
    assert [(e.rule, e.line) for e in errors(items)] == [("input/unmatched_result", 3)]
    [t] = [i for i in items if isinstance(i, Trace)]
    assert t.metadata["earlier_call_ids"] == ["c0"]
    assert [(c.result, c.result_location.line if c.result_location else None)
            for c in t.tool_calls] == [("ok", 2)]


# ================================================================== Agents SDK
def test_agents_run_state_fixture_with_approvals() -> None:
    t = one(read_path(FIXTURES / "openai_agents" / "run-state-pending-approval.json"))
    assert t.format == "openai_agents"
    assert t.id == "trace_refunds_14"  # "trace" at line 68
    assert t.input == "Refund order A-14 and close my account."  # line 67
    # generated_items (lines 24, 30, 36, 42, 48): a call and its output; a call rejected
    # in context.approvals (line 5); a call and its tool_approval_item: one call, pending
    assert calls(t) == [("lookup_order", "call_lookup", {"order_id": "A-14"}),
                        ("delete_account", "call_delete", {"customer_id": "C-3"}),
                        ("issue_refund", "call_refund", {"order_id": "A-14", "amount": 80})]
    assert [c.location.line for c in t.tool_calls] == [24, 36, 42]
    lookup, delete, refund = t.tool_calls
    assert (lookup.result, lookup.result_location.line if lookup.result_location else 0) == (
        "order A-14: 80 EUR, delivered", 30)
    assert (delete.ok, delete.error) == (False, "rejected by the approval")
    assert not refund.has_result and refund.ok
    assert t.metadata["pending_approval"] == ["call_refund"]
    # model_responses (lines 56, 61): real usage, then the SDK's empty default (requests 0,
    # all tokens 0): unknown, not zero
    assert [(c.location.line, c.input_tokens, c.output_tokens, c.total_tokens)
            for c in t.llm_calls] == [(56, 320, 25, 345), (61, None, None, None)]


def test_agents_run_state_fixture_with_programmatic_tool_calling() -> None:
    t = one(read_path(FIXTURES / "openai_agents" / "run-state-program.json"))
    assert t.id.endswith("run-state-program.json")  # "trace": null: the file's path
    # items at lines 6 (program), 11 (function_call called by the program), 17
    # (program_output), 23 (message_output_item)
    assert calls(t) == [("program", "call_program", {"code": "totals = sum_refunds('2026-03')"}),
                        ("sum_refunds", "call_sum", {"month": "2026-03"})]
    program, total = t.tool_calls
    assert (program.location.line, program.result, program.result_location.line  # type: ignore[union-attr]
            ) == (6, "totals = 1234.5", 17)
    assert (total.location.line, total.has_result) == (11, False)
    assert t.input == "What did we refund in March?"  # original_input, a message list
    assert t.output == "March refunds total 1234.50 EUR."
    assert [(c.location.line, c.total_tokens) for c in t.llm_calls] == [(30, 190)]


@needs_samples
def test_agents_run_state_with_a_pending_approval() -> None:
    t = one(read_path(AGENTS / "agents-sdk-runstate__v1_13_pending_tool_approval.json"))
    assert t.format == "openai_agents"
    assert t.id == "trace_179a5e809d614cf89ac5a1f24b415704"  # "trace" at line 321
    # generated_items: the tool_call_item at line 67 and the tool_approval_item (line 85)
    # for the same call_id: one call, awaiting approval
    assert calls(t) == [("historical_approval", "historical-approval-1",
                         {"account_id": "account-1"})]  # line 73
    assert t.tool_calls[0].location.line == 67
    assert not t.tool_calls[0].has_result
    assert t.metadata["pending_approval"] == ["historical-approval-1"]
    assert t.input == "historical input"  # line 268
    # model_responses[0] (line 234): usage with "requests": 0 and all tokens 0, the
    # SDK's empty default: the figures are unknown, not zero
    [llm] = t.llm_calls
    assert (llm.location.line, llm.input_tokens, llm.output_tokens, llm.total_tokens) == (
        234, None, None, None)


@needs_samples
def test_agents_run_state_with_programmatic_tool_calling() -> None:
    t = one(read_path(AGENTS / "agents-sdk-runstate__v1_13_programmatic_tool_calling.json"))
    assert t.format == "openai_agents"
    # items at lines 40 (program), 53 (function_call lookup), 71 (program_output)
    assert calls(t) == [("program", "program-call", {"code": "lookup()"}),
                        ("lookup", "function-call", {})]
    program, lookup = t.tool_calls
    assert (program.location.line, program.result, program.result_location.line  # type: ignore[union-attr]
            ) == (40, "done", 71)
    assert (lookup.location.line, lookup.has_result) == (53, False)
    assert [c.location.line for c in t.llm_calls] == [145]


def test_agents_run_state_handoffs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The regression: a RunState's handoff_output_item (source_agent, target_agent: the
    SDK's RunState serialisation) was read as a tool result only, so a handoff done was no
    handoff and expect.max_handoffs: 0 passed (exit 0)."""
    def done(call: str, **agents: Any) -> dict[str, Any]:
        return {"type": "handoff_output_item", **agents, "raw_item": {
            "type": "function_call_output", "call_id": call, "output": "{}"}}

    state = {"$schemaVersion": "1.13", "current_agent": {"name": "Refunds"},
             "original_input": "refund A-1", "model_responses": [], "generated_items": [
        {"type": "handoff_call_item", "agent": {"name": "Triage"}, "raw_item": {
            "type": "function_call", "call_id": "h1", "name": "transfer_to_refunds",
            "arguments": "{}"}},
        done("h1", source_agent={"name": "Triage"}, target_agent={"name": "Refunds"}),
        {"type": "handoff_call_item", "agent": {"name": "Refunds"}, "raw_item": {
            "type": "function_call", "call_id": "h2", "name": "transfer_to_audit",
            "arguments": "{}"}},
        done("h2", agent={"name": "Audit"}),  # no target_agent: the item's agent
        {"type": "handoff_call_item", "agent": {"name": "Audit"}, "raw_item": {
            "type": "function_call", "call_id": "h3", "name": "transfer_back",
            "arguments": "{}"}},
        done("h3"),
    ]}
    items = write(tmp_path, monkeypatch, state)
    [t] = [i for i in items if isinstance(i, Trace)]
    assert [(h.from_agent, h.to_agent) for h in t.handoffs] == [
        ("Triage", "Refunds"), (None, "Audit"), (None, "unknown")]
    assert [(e.rule, e.message.split(":")[0]) for e in errors(items)] == [
        ("input/invalid_event", "a handoff_output_item without the name of its target_agent")]
    # the handoff calls are still calls, with their results
    assert [(c.name, c.has_result) for c in t.tool_calls] == [
        ("transfer_to_refunds", True), ("transfer_to_audit", True), ("transfer_back", True)]


def test_agents_exported_spans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def sp(sid: str, start: str, end: str, data: dict[str, Any],
           error: Any = None) -> dict[str, Any]:
        return {"object": "trace.span", "id": sid, "trace_id": "trace_1", "parent_id": None,
                "started_at": f"2025-03-01T10:00:{start}+00:00",
                "ended_at": f"2025-03-01T10:00:{end}+00:00", "span_data": data, "error": error}
    payload = {"data": [
        {"object": "trace", "id": "trace_1", "workflow_name": "Support", "group_id": "g1"},
        sp("s3", "03.000", "03.250", {"type": "function", "name": "refund",
                                      "input": '{"amount": 900}', "output": None},
           {"message": "Error running tool", "data": {"tool_name": "refund",
                                                      "error": "amount above limit"}}),
        sp("s1", "00.000", "01.500", {"type": "generation", "model": "gpt-4o",
                                      "usage": {"input_tokens": 50, "output_tokens": 7},
                                      "input": [{"role": "user", "content": "refund me"}],
                                      "output": [{"role": "assistant", "content": "ok"}]}),
        sp("s2", "02.000", "02.100", {"type": "function", "name": "lookup",
                                      "input": '{"id": 1}', "output": "found"}),
        sp("s0", "00.000", "04.000", {"type": "agent", "name": "Support agent"}),
    ]}
    t = one(write(tmp_path, monkeypatch, payload))
    assert (t.format, t.id, t.metadata["workflow_name"]) == ("openai_agents", "trace_1", "Support")
    assert [(c.name, c.arguments, c.ok, c.error, round(c.latency_ms or 0, 3))
            for c in t.tool_calls] == [
        ("lookup", {"id": 1}, True, None, 100.0),
        ("refund", {"amount": 900}, False, "amount above limit", 250.0)]
    assert [(c.model, c.input_tokens, c.output_tokens, c.total_tokens) for c in t.llm_calls] == [
        ("gpt-4o", 50, 7, 57)]
    assert (t.input, t.output, t.duration_ms) == ("refund me", "ok", 4000.0)


# ================================================================== detection
def test_detection_does_not_misfire_on_the_other_formats_fixtures() -> None:
    others = [p for d in ("anthropic", "anthropic_agents", "langchain", "langsmith", "mcp",
                          "inspect", "claude_code")
              for p in sorted((FIXTURES / d).iterdir())]
    assert len(others) > 20
    for p in others:
        head = p.read_bytes()[:8192]
        src = SourceFile(str(p), p.name, p.name)
        for reader in (CHAT_READER, RESPONSES_READER, AGENTS_READER):
            assert not reader.sniff(head, src), (reader.name, p.name)


@needs_samples
def test_detection_does_not_misfire_on_other_formats() -> None:
    others = [p for d in ("anthropic_messages", "langchain", "langsmith", "mcp", "inspect_ai",
                          "claude_code_jsonl", "claude_code_stream_json")
              for p in sorted((SAMPLES / d).iterdir())]
    assert len(others) > 20
    for p in others:
        head = p.read_bytes()[:8192]
        src = SourceFile(str(p), p.name, p.name)
        for reader in (CHAT_READER, RESPONSES_READER, AGENTS_READER):
            assert not reader.sniff(head, src), (reader.name, p.name)


def test_a_native_file_stays_native(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text('{"type":"trace_start","input":{"messages":[{"role":"tool","tool_calls":[]}]}}\n'
                 '{"type":"tool_call","tool":"function_call","arguments":{"call_id":"x"}}\n')
    reader = pick_reader(SourceFile(str(p), "t.jsonl", "t.jsonl"), "auto")
    assert getattr(reader, "name", None) == "native"


@pytest.mark.parametrize("fmt", ["openai_chat", "openai_responses", "openai_agents"])
def test_an_empty_file_is_an_input_error_not_a_pass(fmt: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.json").write_text("")
    [err] = read_path("empty.json", fmt)
    assert isinstance(err, InputError) and err.rule == "input/invalid_event"


@pytest.mark.parametrize("tail", ["", "  response:\n", "  response:\n    body:\n",
                                  "  response:\n    body:\n      string:\n"])
def test_a_cassette_cut_off_after_a_request_is_an_error_not_a_pass(tmp_path: Path,
                                                                   tail: str) -> None:
    """A cassette truncated after its last request, or inside its response before the
    body (at a line break: still YAML), read as a whole trace: the answer to that
    request, with the call the model made in it, was never read, and the run passed. Now
    an input error at the interaction's line; the interactions before it are still
    read."""
    lookup = {"id": "c1", "type": "function", "function": {"name": "lookup",
                                                           "arguments": "{}"}}
    first = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
    answer = json.dumps({"object": "chat.completion", "model": "gpt-4o", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": None,
                                 "tool_calls": [lookup]}}]})
    second = json.dumps({"model": "gpt-4o", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [lookup]},
        {"role": "tool", "tool_call_id": "c1", "content": "found"}]})
    text = ("interactions:\n"
            "- request:\n    body: " + json.dumps(first) + "\n"
            "    uri: https://api.openai.com/v1/chat/completions\n"
            "  response:\n    body:\n      string: " + json.dumps(answer) + "\n"
            "- request:\n    body: " + json.dumps(second) + "\n"
            "    uri: https://api.openai.com/v1/chat/completions\n" + tail)
    path = tmp_path / "cut.yaml"
    path.write_text(text)
    items = read_path(path)
    # line 8: the second interaction's list item (6 lines per interaction from line 2)
    [error] = [i for i in items if isinstance(i, InputError)]
    assert (error.rule, error.line) == ("input/invalid_event", 8)
    assert error.message.startswith("this interaction recorded a request but no response body")
    [trace] = [i for i in items if isinstance(i, Trace)]
    assert [c.name for c in trace.tool_calls] == ["lookup"]


def test_a_cassette_body_that_is_not_json_is_an_error_not_dropped(tmp_path: Path) -> None:
    """A response body cut off (or otherwise not JSON) was dropped without a word: the
    tool call in it vanished from the trace. Now an input error at the body's line; an
    empty body (a GET) is still no body."""
    call = {"id": "c2", "type": "function", "function": {"name": "delete_all",
                                                         "arguments": "{}"}}
    whole = json.dumps({"object": "chat.completion", "model": "gpt-4o", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [
            {**call, "id": "c1", "function": {"name": "lookup", "arguments": "{}"}}]}}]})
    cut = json.dumps({"object": "chat.completion", "model": "gpt-4o", "choices": [
        {"index": 0, "message": {"role": "assistant", "tool_calls": [call]}}]})[:-20]
    request = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
    text = "interactions:\n"
    for body in (whole, cut):
        text += ("- request:\n    body: " + json.dumps(request) + "\n"
                 "    uri: https://api.openai.com/v1/chat/completions\n"
                 "  response:\n    body:\n      string: " + json.dumps(body) + "\n")
    text += "- request:\n    body: ''\n    uri: https://api.openai.com/v1/models\n"
    path = tmp_path / "cut.yaml"
    path.write_text(text)
    items = read_path(path)
    # line 13: the second response's body value ("string: ..."), 6 lines per interaction
    [error] = errors(items)
    assert (error.rule, error.line) == ("input/parse_error", 13)
    assert error.message.startswith("the response body is not valid JSON (unexpected end")
    [trace] = [i for i in items if isinstance(i, Trace)]
    assert [c.name for c in trace.tool_calls] == ["lookup"]


@pytest.mark.parametrize(("fmt", "content"), [
    ("openai_chat", "[]"),
    ("openai_chat", '{"messages": []}'),
    ("openai_chat", '{"model": "gpt-4o", "messages": []}'),
    ("openai_responses", "[]"),
    ("openai_responses", '{"input": []}'),
])
def test_a_file_of_no_message_is_an_error_not_an_empty_trace(
        tmp_path: Path, fmt: str, content: str) -> None:
    """With ``format:`` named, an empty message list was one trace with nothing in it:
    every rule passed (a blocklist "not exercised", the verdict pass, exit code 0)."""
    (tmp_path / "t.json").write_text(content)
    items = read_path(tmp_path / "t.json", fmt)
    [err] = errors(items)
    assert (err.rule, err.line) == ("input/invalid_event", 1)
    assert err.message == (f"no {fmt} input, call or answer in this file: nothing of it can "
                           "be checked (an empty trace would pass every rule)")


def test_a_request_of_earlier_results_only_is_no_error(tmp_path: Path) -> None:
    """A continuation request holds only the results of calls of an earlier response:
    that is data (docs/formats/openai_responses.md), not an empty file."""
    (tmp_path / "t.json").write_text(json.dumps({
        "previous_response_id": "resp_1",
        "input": [{"type": "function_call_output", "call_id": "c1", "output": "ok"}]}))
    t = one(read_path(tmp_path / "t.json", "openai_responses"))
    assert t.metadata["earlier_call_ids"] == ["c1"]


@pytest.mark.parametrize("index", [0, None])
def test_streamed_calls_under_one_index_are_calls_of_their_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int | None) -> None:
    # OpenAI-compatible servers that give every streamed call the index 0 (or none): the
    # second call's pieces were merged into the first, its name dropped (read_file with
    # arguments '{}{}'), and a blocked drop_database passed every rule with exit 0
    def piece(cid: str, name: str) -> dict[str, Any]:
        tc = _tc(0, "{}", cid, name)
        if index is None:
            del tc["index"]
        return tc

    more = piece("", "")  # a piece of the call before: an empty id and name continue it
    more["function"]["arguments"] = '"x"}'
    rows = [_chunk({"role": "assistant", "tool_calls": [piece("call_a", "read_file")]}),
            _chunk({"tool_calls": [piece("call_b", "drop_database")]}),  # line 2
            _chunk({"tool_calls": [more]}),
            _chunk({}, finish="tool_calls")]
    rows[1]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] = '{"a": '
    t = one(write(tmp_path, monkeypatch, rows, name="chat.jsonl"))
    assert [(c.name, c.id, c.arguments, c.location.line) for c in t.tool_calls] == [
        ("read_file", "call_a", {}, 1), ("drop_database", "call_b", {"a": "x"}, 2)]


def test_a_streamed_call_whose_later_pieces_have_another_id_is_one_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A server (Poolside's) that gives a call's first piece, the one with its name, one id
    # and every later piece another: the later pieces were read as a call of their own
    # without a name ('unknown', an input error), the named call's arguments empty
    rows = [_chunk({"role": "assistant", "tool_calls": [_tc(0, "", "call_a", "send_email")]}),
            _chunk({"tool_calls": [_tc(0, '{"to": ', "call_b")]}),
            _chunk({"tool_calls": [_tc(0, '"a@b.c"}', "call_b")]}),
            _chunk({}, finish="tool_calls")]
    t = one(write(tmp_path, monkeypatch, rows, name="chat.jsonl"))
    assert [(c.name, c.id, c.arguments, c.location.line) for c in t.tool_calls] == [
        ("send_email", "call_a", {"to": "a@b.c"}, 1)]


def test_a_streamed_call_of_the_same_name_under_one_index_is_a_call_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # every call under the index 0: a piece that names a call with another id starts one,
    # even of the name of the call before
    rows = [_chunk({"role": "assistant", "tool_calls": [_tc(0, '{"p": 1}', "c1", "rm")]}),
            _chunk({"tool_calls": [_tc(0, '{"p": ', "c2", "rm")]}),
            _chunk({"tool_calls": [_tc(0, "2}")]}),
            _chunk({}, finish="tool_calls")]
    t = one(write(tmp_path, monkeypatch, rows, name="chat.jsonl"))
    assert [(c.name, c.id, c.arguments, c.location.line) for c in t.tool_calls] == [
        ("rm", "c1", {"p": 1}, 1), ("rm", "c2", {"p": 2}, 2)]
