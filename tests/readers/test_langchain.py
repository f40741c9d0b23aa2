"""The LangChain / LangGraph and LangSmith readers (docs/formats/langchain.md,
docs/formats/langsmith.md). Expected values are read by hand from the fixtures
(tests/fixtures/langchain/, tests/fixtures/langsmith/) and, when they are beside the
repository, the real-world samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import FIXTURES, SAMPLES, retyped_fixture

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import ReadItem, SourceFile, pick_reader

LC = SAMPLES / "langchain"
LS = SAMPLES / "langsmith"
REACT = "REACT_AGENT_TOOL_CALLING.json"
HITL = "LANGGRAPH_RESPONSE_2.json"


def read_auto(path: Path) -> tuple[str, list[ReadItem]]:
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
    path.write_text(json.dumps(value, indent=1))
    return path


def lc(cls: str, **kwargs: object) -> dict[str, object]:
    return {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", cls],
            "kwargs": kwargs}


# ----------------------------------------------------------------- the fixtures
def test_final_values_with_a_failed_tool_message() -> None:
    _, items = read_auto(FIXTURES / "langchain" / "final-values.json")
    t = only_trace(items)
    assert t.format == "langchain"
    assert t.input == "Cancel order A-6 and tell me the refund amount."  # line 11
    # AIMessageChunk.tool_calls, lines 39-46 and 47-54; the ToolMessages start on 60 and 76
    assert [(c.name, c.arguments, c.id, c.location.line) for c in t.tool_calls] == [
        ("cancel_order", {"order_id": "A-6"}, "call_cancel", 39),
        ("get_refund", {"order_id": "A-6"}, "call_refund", 47)]
    assert [(c.ok, c.error, c.result, c.result_location.line if c.result_location else 0)
            for c in t.tool_calls] == [
        (True, None, "order A-6 cancelled", 60),
        (False, "refund service unavailable", "refund service unavailable", 76)]  # status
    # the first AI message has no usage_metadata: its response_metadata.usage (lines 31-35);
    # the second has usage_metadata (lines 106-110)
    assert [(c.model, c.input_tokens, c.output_tokens, c.total_tokens, c.location.line)
            for c in t.llm_calls] == [("gpt-5-2025-08-07", 210, 40, 250, 17),
                                      ("gpt-5-2025-08-07", 300, 18, 318, 92)]
    assert t.output == "Order A-6 is cancelled; the refund amount is not available yet."


def test_a_stream_gives_the_conversation_of_its_last_values_event() -> None:
    _, items = read_auto(FIXTURES / "langchain" / "stream.json")
    t = only_trace(items)
    assert t.id == "thread-refunds-9"  # metadata.thread_id of the messages events
    assert t.input == "Where is order A-8?"
    # everything is read from the last "values" event, line 8
    [call] = t.tool_calls
    assert (call.name, call.arguments, call.result, call.location.line) == (
        "lookup_order", {"order_id": "A-8"}, "shipped", 8)
    assert [c.total_tokens for c in t.llm_calls] == [102, 127]
    assert t.output == "Order A-8 has shipped."


def test_a_stream_with_subgraphs_reads_the_messages_of_every_graph(tmp_path: Path) -> None:
    """The regression: only the last values event was read, and in a stream with
    subgraphs (``[namespace, mode, payload]``) that is the parent graph's state, which holds
    a supervisor's sub-agent's last message only: the sub-agent's drop_database call was
    never read, and a blocklist of it passed (exit 0)."""
    human = {"type": "human", "content": "clean up", "id": "h1"}

    def ai(mid: str, text: str = "", call: str | None = None,
           cid: str = "") -> dict[str, object]:
        calls = [] if call is None else [{"name": call, "args": {}, "id": cid,
                                          "type": "tool_call"}]
        return {"type": "ai", "content": text, "id": mid, "tool_calls": calls}

    def tool(mid: str, cid: str, content: str) -> dict[str, object]:
        return {"type": "tool", "content": content, "id": mid, "tool_call_id": cid}

    hand, answer = ai("a1", call="transfer_to_ops", cid="t1"), ai("a3", "Cleaned up.")
    handed = tool("m1", "t1", "Transferred")
    drop = ai("a2", call="drop_database", cid="t2")
    path = write(tmp_path, "stream.json", [
        [[], "values", {"messages": [human, hand, handed]}],
        [["ops:1"], "values", {"messages": [human]}],
        [["ops:1"], "values", {"messages": [human, drop, tool("m2", "t2", "dropped"),
                                            answer]}],
        [[], "values", {"messages": [human, hand, handed, answer]}],
    ])
    _, items = read_auto(path)
    assert errors(items) == []
    t = only_trace(items)
    # every message once, in the order first seen: the hand-off, the sub-agent's call
    assert [(c.name, c.id, c.result) for c in t.tool_calls] == [
        ("transfer_to_ops", "t1", "Transferred"), ("drop_database", "t2", "dropped")]
    assert len(t.llm_calls) == 3  # a1, a2, a3: each AI message once
    assert (t.input, t.output) == ("clean up", "Cleaned up.")


def test_a_stream_with_subgraphs_keeps_two_alike_messages_without_ids(
        tmp_path: Path) -> None:
    """The regression: a message without an id was known by its whole value, so a graph
    whose agent made the same call twice (no message or call ids) read it once, where the
    same stream without subgraphs read it twice: a tool limited to one call passed."""
    human = {"type": "human", "content": "refund it"}
    refund = {"type": "ai", "content": "", "tool_calls": [
        {"name": "refund", "args": {"amount": 500}, "type": "tool_call"}]}
    done = {"type": "ai", "content": "Refunded."}
    path = write(tmp_path, "stream.json", [
        [[], "values", {"messages": [human]}],
        [["ops:1"], "values", {"messages": [human, refund]}],
        [["ops:1"], "values", {"messages": [human, refund, refund, done]}],
        [[], "values", {"messages": [human, done]}],
    ])
    _, items = read_auto(path)
    t = only_trace(items)
    # the sub-agent's two refunds (each state's first refund is one message), one answer
    assert [(c.name, c.arguments) for c in t.tool_calls] == [
        ("refund", {"amount": 500}), ("refund", {"amount": 500})]
    assert len(t.llm_calls) == 3
    assert (t.input, t.output) == ("refund it", "Refunded.")


def test_langsmith_post_and_patch_with_a_failed_tool_run() -> None:
    _, items = read_auto(FIXTURES / "langsmith" / "post-patch.json")
    t = only_trace(items)
    assert t.format == "langsmith"
    assert t.id == "11111111-0000-4000-8000-000000000001"  # trace_id, line 11
    assert t.input == "Refund order A-2, it arrived broken."  # inputs.question, line 9
    # the root's patch (line 54): outputs.output; 1760000000000 .. 1760000002000
    assert (t.output, t.duration_ms) == (
        "I need a photo of the damage before I can refund order A-2.", 2000.0)
    assert t.metadata["project"] == "refund-bot"  # session_name, line 4
    [llm] = t.llm_calls  # posted on line 14, patched on line 37
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens,
            llm.latency_ms, llm.location.line) == ("gpt-4o-mini-2024-07-18", 150, 22, 172,
                                                   1100.0, 14)
    [call] = t.tool_calls  # posted on line 25 ({"input": "<json>"} unwrapped), patched on 47
    assert (call.name, call.arguments, call.ok, call.error, call.latency_ms) == (
        "issue_refund", {"order_id": "A-2", "reason": "damaged"}, False,
        "RefundLimitError: damaged-goods refunds need a photo", 250.0)
    assert (call.location.line, call.result_location.line if call.result_location else 0) == (
        25, 47)


# ------------------------------------------------------------------ the samples
@pytest.mark.usefixtures("samples")
def test_every_sample_is_detected() -> None:
    for path in sorted(LC.iterdir()):
        name, items = read_auto(path)
        assert name == "langchain", path
        assert errors(items) == [], path
        only_trace(items)
    for path in sorted(LS.iterdir()):
        name, items = read_auto(path)
        assert name == "langsmith", path
        assert errors(items) == [], path
        only_trace(items)


@pytest.mark.usefixtures("samples")
def test_react_agent_final_values() -> None:
    _, items = read_auto(LC / f"vercel-ai__langgraph-final-values-messages__{REACT}")
    t = only_trace(items)
    assert t.format == "langchain"
    assert t.input == "What's the weather in Tokyo and what time is it there?"  # line 11
    # AIMessageChunk.tool_calls, lines 233-252; ToolMessages lines 257-294 (status success)
    assert [(c.name, c.arguments, c.id, c.location.line) for c in t.tool_calls] == [
        ("get_weather", {"city": "Tokyo", "units": "celsius"},
         "call_lxFuvuhpu9gvtx04WrmXZF9h", 234),
        ("get_datetime", {"timezone": "Asia/Tokyo", "format": "full"},
         "call_U3RijXRN09TXMyKWFZwqWjnJ", 243),
    ]
    assert [(c.ok, c.result, c.result_location.line if c.result_location else 0)
            for c in t.tool_calls] == [
        (True, "Weather in Tokyo: 20°C, Clear skies", 257),  # line 267
        (True, "Current date and time in Asia/Tokyo: Wednesday, December 17, 2025 at "
               "04:00:28 AM", 276),  # line 286
    ]
    # usage_metadata lines 222-225 (346 / 126 / 472); model_name line 47 (the "model" on
    # line 48 is two names run together by chunk merging)
    assert [(c.model, c.input_tokens, c.output_tokens, c.total_tokens)
            for c in t.llm_calls] == [("gpt-5-2025-08-07", 346, 126, 472),
                                      ("gpt-5-2025-08-07", 879, 48, 927)]
    assert t.output.startswith("Here’s the latest for Tokyo:")  # line 307


@pytest.mark.usefixtures("samples")
def test_human_in_the_loop_final_values() -> None:
    _, items = read_auto(LC / f"vercel-ai__langgraph-final-values-messages__{HITL}")
    t = only_trace(items)
    assert t.input == "Delete the file report.pdf"  # line 11
    [call] = t.tool_calls
    assert (call.name, call.arguments, call.location.line) == (
        "delete_file", {"filename": "report.pdf"}, 193)  # lines 192-201
    assert call.result == 'File "report.pdf" has been deleted successfully'  # line 216
    # the first AI message has no usage_metadata: its response_metadata.usage (l. 168-177)
    assert [(c.input_tokens, c.output_tokens, c.total_tokens) for c in t.llm_calls] == [
        (280, 85, 365), (398, 29, 427)]


@pytest.mark.usefixtures("samples")
def test_streams_give_the_conversation_of_their_last_values_event() -> None:
    _, items = read_auto(LC / f"vercel-ai__langgraph-stream__{HITL}")
    t = only_trace(items)
    assert t.id == "thread-1765862425919-eh0maed"  # metadata.thread_id of the events
    assert [(c.name, c.arguments) for c in t.tool_calls] == [
        ("delete_file", {"filename": "report.pdf"})]
    assert t.output.startswith('The file "report.pdf" has been queued for deletion.')
    _, items = read_auto(LC / f"vercel-ai__langgraph-stream__{REACT}")
    t = only_trace(items)
    assert [c.name for c in t.tool_calls] == ["get_weather", "get_datetime"]
    assert [c.total_tokens for c in t.llm_calls] == [472, 927]
    text = (LC / f"vercel-ai__langgraph-stream__{REACT}").read_text().splitlines()
    # the call points into the last "values" event (it starts 10 lines before the end)
    assert '"call_lxFuvuhpu9gvtx04WrmXZF9h"' in "".join(
        text[t.tool_calls[0].location.line - 1:t.tool_calls[0].location.line + 6])


@pytest.mark.usefixtures("samples")
def test_langsmith_post_and_patch() -> None:
    _, items = read_auto(LS / "langsmith-js__wrap_openai_default.post-patch.json")
    t = only_trace(items)
    assert t.format == "langsmith"
    assert t.id == "dc34609e-3eeb-459d-bc2a-6fedb01d2e6e"  # trace_id, line 33
    assert t.input == "howdy"  # line 28
    assert t.output == "Howdy! How can I assist you today?"  # line 60 (from the patch)
    [llm] = t.llm_calls
    # model of the response (line 54), usage_metadata lines 69-71, 1728803138285 - ...137170
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens,
            llm.latency_ms) == ("gpt-4o-mini-2024-07-18", 9, 9, 18, 1115.0)
    assert t.duration_ms == 1115.0 and t.tool_calls == []
    _, items = read_auto(LS / "langsmith-js__wrap_openai_reasoning.post-patch.json")
    [llm] = only_trace(items).llm_calls
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens) == (
        "o1-mini-2024-09-12", 43, 1901, 1944)  # lines 54, 68-70


# ----------------------------------------------------------- behaviour (fixtures)
def test_tool_message_status_error_and_invalid_calls(tmp_path: Path) -> None:
    messages = [
        lc("HumanMessage", content="wipe the logs"),
        lc("AIMessage", content="", tool_calls=[
            {"name": "delete_file", "args": {"path": "/var/log"}, "id": "c1",
             "type": "tool_call"}],
           invalid_tool_calls=[{"name": "purge_data", "args": "{bad json", "id": "c2",
                                "error": "Function purge_data arguments are not valid JSON"}],
           usage_metadata={"input_tokens": 12, "output_tokens": 3, "total_tokens": 15},
           response_metadata={"model_name": "gpt-4o-mini"}),
        lc("ToolMessage", content="permission denied", tool_call_id="c1", name="delete_file",
           status="error"),
        lc("ToolMessage", content="orphan result", tool_call_id="c9", name="send_email"),
        lc("AIMessage", content="I could not delete the logs."),
    ]
    path = write(tmp_path, "msgs.json", messages)
    name, items = read_auto(path)
    assert name == "langchain"
    t = only_trace(items)
    by = {c.name: c for c in t.tool_calls}
    assert (by["delete_file"].ok, by["delete_file"].error) == (False, "permission denied")
    assert (by["purge_data"].ok, by["purge_data"].arguments_error is not None,
            by["purge_data"].error) == (False, True,
                                        "Function purge_data arguments are not valid JSON")
    # a result that names its tool proves a call whose arguments were not recorded
    assert by["send_email"].arguments is None and not by["send_email"].arguments_recorded
    assert [c.name for c in t.tool_calls] == ["delete_file", "purge_data", "send_email"]
    assert [(c.model, c.total_tokens) for c in t.llm_calls] == [
        ("gpt-4o-mini", 15), (None, None)]
    assert (t.input, t.output) == ("wipe the logs", "I could not delete the logs.")


def lines(tmp_path: Path, name: str, values: list[object]) -> Path:
    """A JSON array with one value a line: the first value is on line 2."""
    path = tmp_path / name
    path.write_text("[\n" + ",\n".join(json.dumps(v) for v in values) + "\n]\n")
    return path


def test_a_call_id_reused_for_another_call_is_kept_and_reported(tmp_path: Path) -> None:
    def ai(name: str, **more: object) -> dict[str, object]:
        return lc("AIMessage", content=more.pop("content", ""), tool_calls=[
            {"name": name, "args": {"id": 1}, "id": "call_0", "type": "tool_call"}])

    path = lines(tmp_path, "msgs.json", [
        lc("HumanMessage", content="clean up"),  # line 2
        ai("get_customer"),  # line 3
        lc("ToolMessage", content="ok", tool_call_id="call_0"),  # line 4
        # line 5: call_0 again for delete_customer; its tool_use block in the content (an
        # Anthropic model, streamed: no input yet) is the same call, not a third one
        ai("delete_customer", content=[{"type": "tool_use", "id": "call_0",
                                        "name": "delete_customer", "input": {}}]),
        lc("ToolMessage", content="deleted", tool_call_id="call_0"),  # line 6
        lc("AIMessage", content="done"),  # line 7
    ])
    _, items = read_auto(path)
    assert errors(items) == [("input/invalid_event", 5)]
    assert [e.message for e in items if isinstance(e, InputError)] == [
        "call id 'call_0' reused for a different call (name/arguments differ from the "
        "'get_customer' call at line 3); it is read as a call of its own; give each call its "
        "own id"]
    t = only_trace(items)
    assert [(c.name, c.arguments, c.location.line, c.result,
             c.result_location.line if c.result_location else 0) for c in t.tool_calls] == [
        ("get_customer", {"id": 1}, 3, "ok", 4), ("delete_customer", {"id": 1}, 5, "deleted", 6)]


def test_another_result_for_an_answered_call_id_proves_a_call_of_its_own(
        tmp_path: Path) -> None:
    path = lines(tmp_path, "msgs.json", [
        lc("AIMessage", content="", tool_calls=[  # line 2
            {"name": "get_customer", "args": {}, "id": "call_0", "type": "tool_call"}]),
        lc("ToolMessage", content="ok", tool_call_id="call_0"),  # line 3
        lc("ToolMessage", content="ok", tool_call_id="call_0"),  # line 4: the same again
        # line 5: another result under call_0, naming another tool (its AI message is gone)
        lc("ToolMessage", content="deleted", tool_call_id="call_0", name="delete_customer"),
    ])
    _, items = read_auto(path)
    assert errors(items) == [("input/invalid_event", 5)]
    t = only_trace(items)
    assert [(c.name, c.arguments_recorded, c.location.line, c.result) for c in t.tool_calls
            ] == [("get_customer", True, 2, "ok"), ("delete_customer", False, 5, "deleted")]


def test_messages_to_dict_form_and_openai_raw_tool_calls(tmp_path: Path) -> None:
    messages = [
        {"type": "human", "data": {"content": "refund A-1", "type": "human"}},
        {"type": "ai", "data": {"content": "", "type": "ai", "additional_kwargs": {
            "tool_calls": [{"id": "call_1", "type": "function", "function": {
                "name": "issue_refund", "arguments": "{\"order_id\": \"A-1\", \"amount\": 5}"}}]},
            "response_metadata": {"token_usage": {"prompt_tokens": 30,
                                                  "completion_tokens": 9,
                                                  "total_tokens": 39}}}},
        {"type": "tool", "data": {"content": "ok", "tool_call_id": "call_1", "type": "tool"}},
    ]
    path = write(tmp_path, "history.json", messages)
    name, items = read_auto(path)
    assert name == "langchain"
    t = only_trace(items)
    [call] = t.tool_calls
    assert (call.name, call.arguments, call.ok, call.result) == (
        "issue_refund", {"order_id": "A-1", "amount": 5}, True, "ok")
    assert [(c.input_tokens, c.output_tokens) for c in t.llm_calls] == [(30, 9)]


def test_stream_without_values_merges_chunks(tmp_path: Path) -> None:
    meta = {"thread_id": "t-9", "langgraph_node": "agent"}
    events = [
        ["messages", [lc("AIMessageChunk", id="run-1", content="", tool_call_chunks=[
            {"name": "send_email", "args": "", "id": "call_e", "index": 0}]), meta]],
        ["messages", [lc("AIMessageChunk", id="run-1", content="", tool_call_chunks=[
            {"args": "{\"to\": \"a@b.c\"", "index": 0}]), meta]],
        ["messages", [lc("AIMessageChunk", id="run-1", content="", tool_call_chunks=[
            {"args": "}", "index": 0}], usage_metadata={
            "input_tokens": 5, "output_tokens": 2, "total_tokens": 7}), meta]],
        ["messages", [lc("ToolMessage", id="tm", content="sent", tool_call_id="call_e",
                         name="send_email"), meta]],
        ["messages", [lc("AIMessageChunk", id="run-2", content="Sent"), meta]],
        ["messages", [lc("AIMessageChunk", id="run-2", content="!"), meta]],
    ]
    path = tmp_path / "stream.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    name, items = read_auto(path)
    assert name == "langchain"
    t = only_trace(items)
    assert t.id == "t-9"
    [call] = t.tool_calls
    assert (call.name, call.arguments, call.location.line, call.result) == (
        "send_email", {"to": "a@b.c"}, 1, "sent")
    assert t.output == "Sent!"
    assert [c.total_tokens for c in t.llm_calls] == [7, None]


def test_langsmith_tool_runs(tmp_path: Path) -> None:
    runs = [
        {"id": "r0", "trace_id": "r0", "name": "AgentExecutor", "run_type": "chain",
         "dotted_order": "20250101T000000000000Zr0", "start_time": "2025-01-01T00:00:00",
         "end_time": "2025-01-01T00:00:04", "inputs": {"input": "refund order A-1"},
         "outputs": {"output": "Refunded."}, "total_cost": 0.002},
        {"id": "r1", "trace_id": "r0", "parent_run_id": "r0", "name": "ChatOpenAI",
         "run_type": "llm", "dotted_order": "20250101T000000000000Zr0.20250101T000000100000Zr1",
         "start_time": "2025-01-01T00:00:00.100", "end_time": "2025-01-01T00:00:01.100",
         "prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52,
         "total_cost": 0.002, "extra": {"invocation_params": {"model_name": "gpt-4o"}},
         "inputs": {}, "outputs": {}},
        {"id": "r2", "trace_id": "r0", "parent_run_id": "r0", "name": "issue_refund",
         "run_type": "tool", "dotted_order": "20250101T000000000000Zr0.20250101T000001200000Zr2",
         "start_time": "2025-01-01T00:00:01.200", "end_time": "2025-01-01T00:00:01.450",
         "inputs": {"input": "{\"order_id\": \"A-1\", \"amount\": 900}"}, "outputs": None,
         "error": "ValueError: amount above the limit"},
    ]
    path = write(tmp_path, "runs.json", runs)
    name, items = read_auto(path)
    assert name == "langsmith"
    t = only_trace(items)
    assert (t.id, t.input, t.output, t.duration_ms, t.cost) == (
        "r0", "refund order A-1", "Refunded.", 4000.0, 0.002)
    [call] = t.tool_calls
    assert (call.name, call.arguments, call.ok, call.error, call.latency_ms) == (
        "issue_refund", {"order_id": "A-1", "amount": 900}, False,
        "ValueError: amount above the limit", 250.0)
    [llm] = t.llm_calls
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.cost_usd, llm.latency_ms) == (
        "gpt-4o", 40, 12, 0.002, 1000.0)


def test_forced_on_a_foreign_file_is_an_input_error(tmp_path: Path) -> None:
    from agent_eval.readers.langchain import READER
    from agent_eval.readers.langsmith import READER as LANGSMITH_READER

    path = write(tmp_path, "x.json", [{"hello": "world"}])
    for reader in (READER, LANGSMITH_READER):
        items = list(reader.read(SourceFile(str(path), "x.json", "x.json")))
        assert errors(items) == [("input/invalid_event", 1)], reader.name
        assert [i for i in items if isinstance(i, Trace)] == []


# ------------------------------------------- a value of another type: that element only
def test_tool_call_chunks_that_are_not_an_array_are_an_input_error_of_their_chunk(
        tmp_path: Path) -> None:
    """The regression: ``"tool_call_chunks": 5`` stopped the reader (TypeError: 'int'
    object is not iterable): input/reader_error at line 0, and the conversation lost."""
    _, items = retyped_fixture(tmp_path, "langchain/stream.json",
                               '"content": "", "tool_call_chunks": [',
                               '"content": "", "tool_call_chunks": 5, "was": [')
    assert errors(items) == [("input/invalid_event", 3)]  # the messages event, line 3
    assert "a message chunk's tool_call_chunks must be an array, not integer" in str(items[0])
    t = only_trace(items)  # the last values event holds the whole conversation
    assert [(c.name, c.arguments) for c in t.tool_calls] == [
        ("lookup_order", {"order_id": "A-8"})]
    assert t.output == "Order A-8 has shipped."
