"""The Vercel AI SDK ReadableSpan reader (docs/formats/vercel_ai.md). Expected values are
read by hand from the fixture tests/fixtures/vercel_ai/spans.json and, when it is beside the
repository, the real-world sample
other_vercel_ai_sdk/openinference-vercel__v6-all-spans.readablespan.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import FIXTURES, SAMPLES, retyped_fixture

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import ReadItem, SourceFile, pick_reader
from agent_eval.readers.vercel_ai import READER

FIXTURE = FIXTURES / "vercel_ai" / "spans.json"
SAMPLE = SAMPLES / "other_vercel_ai_sdk" / "openinference-vercel__v6-all-spans.readablespan.json"


def source(path: Path) -> SourceFile:
    return SourceFile(str(path), path.name, path.name)


def traces(items: list[ReadItem]) -> list[Trace]:
    return [i for i in items if isinstance(i, Trace)]


def errors(items: list[ReadItem]) -> list[tuple[str, int]]:
    return [(e.rule, e.line) for e in items if isinstance(e, InputError)]


def test_the_fixture() -> None:
    reader = pick_reader(source(FIXTURE), "auto")
    assert not isinstance(reader, InputError) and reader.name == "vercel_ai"
    items = list(reader.read(source(FIXTURE)))
    assert errors(items) == []
    run, embed = traces(items)
    # spans grouped by traceId: lines 2-80 are 7f3a...; line 81 (doEmbed) is 0b1c...
    assert run.id.endswith(":7f3a0c1e9b2d4e5f8a6b7c8d9e0f1a2b")
    assert (run.location.line, embed.location.line) == (2, 81)
    # the top-level ai.generateText span (line 2): prompt, answer, functionId; its usage
    # repeats the provider spans' and is not an LLM call
    assert run.input == "Refund order A-3 and email the customer."
    assert run.output == "Order A-3 is refunded; the email could not be sent."
    assert run.metadata == {"ai.telemetry.functionId": "refund-bot"}
    # provider spans (lines 19, 66): ai.response.model else ai.model.id; usage
    assert [(c.model, c.input_tokens, c.output_tokens, c.total_tokens, c.latency_ms,
             c.location.line) for c in run.llm_calls] == [
        ("gpt-4o-mini-2024-07-18", 180, 30, 210, 1200.0, 19),
        ("gpt-4o-mini", 120, 15, 135, 900.0, 66)]
    # ai.toolCall spans (lines 35, 50); call_l is only in the provider span's
    # ai.response.toolCalls (line 26): a call without result at that span's line
    assert [(c.name, c.arguments, c.id, c.ok, c.error, c.result, c.latency_ms,
             c.location.line) for c in run.tool_calls] == [
        ("issue_refund", {"order_id": "A-3"}, "call_r", True, None, {"refunded": True},
         250.0, 35),
        ("send_email", {"to": "c@example.com"}, "call_e", False, "SMTP timeout", None,
         1000.0, 50),
        ("log_event", {}, "call_l", True, None, None, None, 19)]
    assert run.duration_ms == 3500.0  # [1770000000, 0] .. [1770000003, 500000000]
    [vec] = embed.llm_calls  # ai.usage.tokens 8
    assert (vec.model, vec.input_tokens, vec.total_tokens) == ("text-embedding-3-small", 8, 8)

@pytest.mark.usefixtures("samples")
def test_the_sample() -> None:
    reader = pick_reader(source(SAMPLE), "auto")
    assert not isinstance(reader, InputError) and reader.name == "vercel_ai"
    items = list(reader.read(source(SAMPLE)))
    assert errors(items) == []
    ts = traces(items)
    # ten spans (lines 2, 51, 88, 136, 172, 220, 258, 330, 368, 405), each its own traceId
    assert [t.location.line for t in ts] == [2, 51, 88, 136, 172, 220, 258, 330, 368, 405]
    assert all(t.tool_calls == [] for t in ts)
    gen, top = ts[0], ts[1]
    # line 2: ai.generateText.doGenerate, traceId b3e7... (line 5), usage 14 / 20
    assert gen.id.endswith(":b3e700af9eab81e19f72f964d62a35af")
    [llm] = gen.llm_calls
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens, llm.cost_usd) == (
        "gpt-4o-mini-2024-07-18", 14, 20, 34, None)
    # startTime [1770131992, 242000000], endTime [1770131994, 21415667]
    assert llm.latency_ms == 1779.416 and gen.duration_ms == 1779.416
    # line 51: ai.generateText, ai.prompt {"prompt": "Write a haiku about programming."}
    assert top.input == "Write a haiku about programming."
    assert isinstance(top.output, str) and top.output.startswith("Lines of code align,")
    assert top.llm_calls == [] and top.metadata == {
        "ai.telemetry.functionId": "test-generate-text"}
    # line 136: the messages prompt; the first user message is "What is 2 + 2?"
    assert (ts[3].input, ts[3].output) == ("What is 2 + 2?", "3 + 3 equals 6.")
    # line 258: doStream with inputTokens 15, outputTokens 112, totalTokens 127
    [stream] = ts[6].llm_calls
    assert (stream.input_tokens, stream.output_tokens, stream.total_tokens) == (15, 112, 127)
    # line 368: doEmbed, ai.usage.tokens 10
    [embed] = ts[8].llm_calls
    assert (embed.model, embed.input_tokens, embed.total_tokens) == (
        "text-embedding-3-small", 10, 10)


def span(name: str, attrs: dict[str, object], code: int = 0, **extra: object) -> dict[str, object]:
    return {"name": name, "spanContext": {"traceId": "t1", "spanId": name},
            "attributes": {"ai.operationId": name, **attrs}, "status": {"code": code},
            "startTime": [100, 0], "endTime": [100, 500000000], "events": [], **extra}


def test_tool_calls_and_errors(tmp_path: Path) -> None:
    spans = [
        span("ai.generateText.doGenerate", {
            "ai.model.id": "m", "ai.usage.promptTokens": 3, "ai.usage.completionTokens": 4,
            "ai.response.toolCalls": json.dumps([
                {"toolCallId": "c1", "toolName": "weather", "input": "{\"city\":\"Oslo\"}"},
                {"toolCallId": "c2", "toolName": "lookup", "input": "{}"}])}),
        span("ai.toolCall", {"ai.toolCall.name": "weather", "ai.toolCall.id": "c1",
                             "ai.toolCall.args": "{\"city\":\"Oslo\"}",
                             "ai.toolCall.result": "{\"temp\":3}"}),
        span("ai.toolCall", {"ai.toolCall.name": "lookup", "ai.toolCall.id": "c2",
                             "ai.toolCall.args": "{}"}, code=2,
             events=[{"name": "exception", "attributes": {"exception.message": "timeout"}}]),
        "not a span",
    ]
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(spans, indent=2))
    items = list(READER.read(source(path)))
    [t] = traces(items)
    assert [(c.name, c.arguments, c.id, c.ok, c.error, c.result) for c in t.tool_calls] == [
        ("weather", {"city": "Oslo"}, "c1", True, None, {"temp": 3}),
        ("lookup", {}, "c2", False, "timeout", None),
    ]
    # the calls are located at their own spans, not at the provider span
    assert t.tool_calls[0].location.line > t.llm_calls[0].location.line
    assert t.tool_calls[0].latency_ms == 500.0
    assert t.llm_calls[0].total_tokens == 7
    assert [r for r, _ in errors(items)] == ["input/invalid_event"]


def test_a_call_id_reused_for_another_call_is_kept_and_reported(tmp_path: Path) -> None:
    def step(name: str) -> dict[str, object]:
        return span("ai.generateText.doGenerate", {"ai.response.toolCalls": json.dumps([
            {"toolCallId": "call_0", "toolName": name, "input": "{\"id\":1}"}])})

    def tool(name: str, result: str) -> dict[str, object]:
        return span("ai.toolCall", {"ai.toolCall.name": name, "ai.toolCall.id": "call_0",
                                    "ai.toolCall.args": "{\"id\": 1}",
                                    "ai.toolCall.result": result})

    path = tmp_path / "spans.json"  # one span a line, from line 2
    path.write_text("[\n" + ",\n".join(json.dumps(x) for x in [
        step("get_customer"), tool("get_customer", "ok"),
        step("delete_customer"), tool("delete_customer", "deleted")]) + "\n]\n")
    items = list(READER.read(source(path)))
    # line 4: the second step's response reuses call_0 for delete_customer; get_customer is
    # by then located at its own ai.toolCall span, line 3
    assert errors(items) == [("input/invalid_event", 4)]
    assert [e.message for e in items if isinstance(e, InputError)] == [
        "call id 'call_0' reused for a different call (name/arguments differ from the "
        "'get_customer' call at line 3); it is read as a call of its own; give each call its "
        "own id"]
    [t] = traces(items)
    # each ai.toolCall span (lines 3, 5) is the call of its name: located there, its result
    assert [(c.name, c.arguments, c.location.line, c.result) for c in t.tool_calls] == [
        ("get_customer", {"id": 1}, 3, "ok"), ("delete_customer", {"id": 1}, 5, "deleted")]


def test_tool_spans_reusing_a_call_id_are_two_calls(tmp_path: Path) -> None:
    def tool(name: str) -> dict[str, object]:
        return span("ai.toolCall", {"ai.toolCall.name": name, "ai.toolCall.id": "call_0",
                                    "ai.toolCall.args": "{}"})

    path = tmp_path / "spans.json"
    path.write_text("[\n" + ",\n".join(json.dumps(x) for x in [
        tool("get_customer"), tool("delete_customer")]) + "\n]\n")
    items = list(READER.read(source(path)))
    assert errors(items) == [("input/invalid_event", 3)]
    [t] = traces(items)
    assert [(c.name, c.location.line) for c in t.tool_calls] == [
        ("get_customer", 2), ("delete_customer", 3)]


# ------------------------------------------- a value of another type: that element only
def test_response_tool_calls_that_are_not_an_array_are_an_input_error_of_their_span(
        tmp_path: Path) -> None:
    """The regression: ``"ai.response.toolCalls": true`` stopped the reader (TypeError:
    'bool' object is not iterable): input/reader_error at line 0, both traces lost."""
    _, items = retyped_fixture(tmp_path, "vercel_ai/spans.json",
                               '"ai.response.toolCalls": "[', '"ai.response.toolCalls": true, '
                               '"was": "[')
    assert errors(items) == [("input/invalid_event", 19)]  # the doGenerate span, line 19
    assert "a span's ai.response.toolCalls (or its JSON text) must be an array, not boolean" in (
        str(items[0]))
    first, second = traces(items)
    # the calls of their own ai.toolCall spans; log_event was only in the response
    assert [c.name for c in first.tool_calls] == ["issue_refund", "send_email"]
    assert len(first.llm_calls) == 2 and len(second.llm_calls) == 1


def test_events_that_are_not_an_array_are_an_input_error_of_their_span(tmp_path: Path) -> None:
    # the first span (line 2) made an error span, which reads its events
    _, items = retyped_fixture(
        tmp_path, "vercel_ai/spans.json",
        '"status": { "code": 0 },\n    "startTime": [1770000000, 0],\n    '
        '"endTime": [1770000003, 500000000],\n    "events": []',
        '"status": { "code": 2 },\n    "startTime": [1770000000, 0],\n    '
        '"endTime": [1770000003, 500000000],\n    "events": 7')
    assert errors(items) == [("input/invalid_event", 2)]
    assert "a span's events must be an array, not integer" in str(items[0])
    assert len(traces(items)) == 2


def test_response_calls_without_an_id_or_a_name_are_read_and_reported(tmp_path: Path) -> None:
    """The regression: a call of ai.response.toolCalls without toolCallId (and with no tool
    span: a tool without execute has none) was passed over without a word, so a blocked
    delete_repo passed (exit 0); an item that is no object vanished the same way, and one
    without toolName was a call of 'unknown' unsaid."""
    path = tmp_path / "spans.json"  # one span a line, from line 2
    path.write_text("[\n" + ",\n".join(json.dumps(x) for x in [
        span("ai.generateText.doGenerate", {"ai.response.toolCalls": json.dumps([
            {"toolName": "delete_repo", "input": "{\"name\": \"prod\"}"}, 5,
            {"toolCallId": "c9", "input": "{}"}])}),
        span("ai.toolCall", {"ai.toolCall.id": "c8", "ai.toolCall.args": "{}"})]) + "\n]\n")
    items = list(READER.read(source(path)))
    [t] = traces(items)
    assert [(c.name, c.arguments, c.id, c.location.line) for c in t.tool_calls] == [
        ("delete_repo", {"name": "prod"}, None, 2), ("unknown", {}, "c9", 2),
        ("unknown", {}, "c8", 3)]
    assert errors(items) == [("input/invalid_event", 2)] * 3 + [("input/invalid_event", 3)]
    said = [e.message for e in items if isinstance(e, InputError)]
    assert said[0].startswith("a call of ai.response.toolCalls ('delete_repo') without "
                              "toolCallId: it is read as a call of its own")
    assert said[1] == ("an item of a span's ai.response.toolCalls must be a JSON object, not "
                       "integer; it was not read")
    assert said[2].startswith("a call of ai.response.toolCalls without toolName: it is read "
                              "as a call of 'unknown'")
    assert said[3].startswith("an ai.toolCall span without ai.toolCall.name")
