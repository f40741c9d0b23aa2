"""The OTLP reader (docs/formats/otlp.md): collector file-exporter lines, OTLP/Tempo/Jaeger
documents and flat span attribute maps, read by auto-detection.

Expected values are read by hand from the fixtures (tests/fixtures/otlp/) and, when they are
beside the repository, the real-world samples; each assertion cites the line."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FIXTURES, retyped_fixture
from tests.conftest import SAMPLES as ALL_SAMPLES

from agent_eval.api import load_traces
from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import IgnoredEvents, ReadItem, SourceFile, pick_reader
from agent_eval.readers.base import FileRead
from agent_eval.readers.otlp import READER

SAMPLES = ALL_SAMPLES / "otel_genai"
FIXTURE = FIXTURES / "otlp"
needs_samples = pytest.mark.usefixtures("samples")


def read_path(path: Path, fmt: str = "auto") -> list[ReadItem]:
    return list(load_traces([path], format=fmt))


def only_traces(items: list[ReadItem]) -> list[Trace]:
    return [i for i in items if isinstance(i, Trace)]


def errors(items: list[ReadItem]) -> list[InputError]:
    return [i for i in items if isinstance(i, InputError)]


def one(items: list[ReadItem]) -> Trace:
    assert errors(items) == []
    [trace] = only_traces(items)
    return trace


# --------------------------------------------------------------- building blocks
def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value}}


def span(trace_id: str, span_id: str, name: str, start_ms: int, end_ms: int,
         parent: str | None = None, status: dict[str, Any] | None = None,
         **attrs: Any) -> dict[str, Any]:
    s: dict[str, Any] = {
        "traceId": trace_id, "spanId": span_id, "name": name,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + start_ms * 1_000_000),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + end_ms * 1_000_000),
        "attributes": [attr(k.replace("__", "."), v) for k, v in attrs.items()],
    }
    if parent:
        s["parentSpanId"] = parent
    if status is not None:
        s["status"] = status
    return s


def export(*spans: dict[str, Any]) -> str:
    return json.dumps({"resourceSpans": [{
        "resource": {"attributes": [attr("service.name", "svc")]},
        "scopeSpans": [{"scope": {"name": "test"}, "spans": list(spans)}]}]})


def write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,
          name: str = "spans.jsonl") -> list[ReadItem]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text, encoding="utf-8")
    return list(load_traces([name]))


TID = "0123456789abcdef0123456789abcdef"


def _any(attrs: dict[str, Any]) -> dict[str, Any]:
    return attrs


def tool_span(sid: str, name: str, start: int, end: int, call_id: str, args: str,
              **extra: Any) -> dict[str, Any]:
    return span(TID, sid, f"execute_tool {name}", start, end, parent="root",
                gen_ai__operation__name="execute_tool", gen_ai__tool__name=name,
                gen_ai__tool__call__id=call_id, gen_ai__tool__call__arguments=args, **extra)


# ----------------------------------------------------------------- the fixtures
def test_tempo_export_with_wrapped_model_calls() -> None:
    # The file is one line of JSON: every location is line 1.
    t = one(read_path(FIXTURE / "tempo.json"))
    assert t.format == "otlp"
    assert t.id == "c0ffee0000000000000000000000beef"  # every span's "traceId"
    assert t.input == "Refund order A-16."  # invoke_agent: gen_ai.input.messages
    assert t.output == "Order A-16 is refunded."  # invoke_agent: gen_ai.output.messages
    # One tool call: the "execute_tool issue_refund" span (arguments and result in the ADK's
    # gcp.vertex.agent.* attributes). The same call is in the 1st openai.chat's
    # gen_ai.completion.0.tool_calls.0 and the 2nd's gen_ai.prompt.1.tool_calls.0 (same id):
    # counted once.
    [call] = t.tool_calls
    assert (call.name, call.id, call.arguments, call.result) == (
        "issue_refund", "call_16", {"order_id": "A-16"}, '{"refunded": true}')
    assert call.ok and call.latency_ms == 300.0 and call.location.line == 1
    # call_llm wraps the first openai.chat (both with gen_ai.usage.*): only the innermost
    # span counts; gen_ai.response.model, llm.usage.total_tokens
    assert [(c.model, c.input_tokens, c.output_tokens, c.total_tokens, c.latency_ms)
            for c in t.llm_calls] == [("gpt-4.1-mini-2025-04-14", 400, 20, 420, 700.0),
                                      ("gpt-4.1-mini-2025-04-14", 450, 9, 459, 1500.0)]
    assert t.cost is None  # no cost attribute anywhere: unknown, not 0
    assert t.duration_ms == 3000.0
    assert (t.metadata["service.name"], t.metadata["gen_ai.agent.name"]) == (
        "refund-agent", "refund-agent")


def test_jaeger_export_points_at_the_span_objects() -> None:
    t = one(read_path(FIXTURE / "jaeger.json"))
    assert t.format == "otlp"
    assert t.id == "0badcafe0badcafe0badcafe0badcafe"  # line 4, "traceID"
    assert t.location.line == 6  # the first span object
    assert t.input == "Cancel order A-17."  # openai.chat tag gen_ai.prompt.0.content
    # openai.chat (line 17) with the old names gen_ai.usage.prompt_tokens/completion_tokens
    [llm] = t.llm_calls
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens,
            llm.location.line, llm.latency_ms) == ("gpt-4o-mini", 300, 40, 340, 17, 1500.0)
    # the execute_tool span (line 65): tags otel.status_code ERROR and error true
    [call] = t.tool_calls
    assert (call.name, call.arguments, call.ok, call.error, call.location.line,
            call.latency_ms) == ("cancel_order", {"order_id": "A-17"}, False, "error", 65,
                                 250.0)  # "duration": 250000 (µs)
    assert t.duration_ms == 2000.0  # the root "POST /chat": 2000000 µs
    assert t.metadata["service.name"] == "refund-agent"  # processes.p1.serviceName


@pytest.mark.parametrize("name", ["flat-client-span.json", "flat-client-span-deprecated.json",
                                  "flat-client-span-openinference.json"])
def test_flat_client_span_fixtures_in_three_dialects(name: str) -> None:
    # Same model call in three attribute dialects: gen_ai.input.messages (current),
    # gen_ai.prompt / gen_ai.completion JSON (deprecated), llm.input_messages.N (OpenInference).
    t = one(read_path(FIXTURE / name))
    [call] = t.tool_calls
    assert (call.name, call.id, call.arguments) == ("check_refund", "c18", {"order_id": "A-18"})
    assert call.result == "yes, 14 days left"  # the tool message / tool_call_response part
    assert t.input == "Is order A-18 refundable?"
    assert t.output == "Yes, order A-18 can be refunded for 14 more days."
    [llm] = t.llm_calls
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens) == (
        "gpt-4o-2024-08-06", 120, 30, 150)
    # only the OpenInference dialect records a cost (llm.cost.total); no timestamps
    assert llm.cost_usd == (0.00045 if "openinference" in name else None)
    assert llm.latency_ms is None


def test_flat_tool_execution_span_fixture() -> None:
    t = one(read_path(FIXTURE / "flat-tool-span.json"))
    [call] = t.tool_calls
    assert (call.name, call.id) == ("check_refund", "c18")  # lines 3, 4
    assert call.arguments == {"order_id": "A-18"}  # line 6, "input" (a JSON string)
    assert call.result == '{"refundable": true, "days_left": 14}'  # line 7, as recorded
    assert call.ok and call.latency_ms is None
    assert t.llm_calls == []


def test_hex_and_base64_ids_are_one_trace() -> None:
    # two resourceSpans: the first span's traceId is upper-case hex (line 22), the second's
    # the same id in base64 (line 59), as protobuf's JSON mapping writes it
    t = one(read_path(FIXTURE / "resource-spans.json"))
    assert t.id == "5b8efff798038103d269b633813fc60c"
    assert (t.tool_calls, t.llm_calls) == ([], [])  # no GenAI spans
    assert (t.location.line, t.end_location.line) == (21, 58)  # the two span objects
    assert t.duration_ms == 1000.0  # 1544712660000000000 .. 1544712661000000000
    assert t.metadata["service.name"] == "orders-api"


def test_a_json_schema_is_not_a_trace() -> None:
    [err] = read_path(FIXTURE / "semconv-schema.json")
    assert isinstance(err, InputError) and err.rule == "input/unknown_format"


# ------------------------------------------------------------- the real samples
@needs_samples
def test_tempo_export_of_a_real_kagent_run() -> None:
    # The file is one line of JSON: every location is line 1.
    path = SAMPLES / "agentevals__tempo_export_with_batches.kagent.json"
    t = one(read_path(path))
    assert t.format == "otlp"
    assert t.id == "dd547580319ab0312cee07f1def50dad"  # every span's "traceId"
    assert t.input == "list all helm releases\n"  # openai.chat: gen_ai.prompt.1.content
    assert isinstance(t.output, str)  # 2nd openai.chat: gen_ai.completion.0.content
    assert t.output.startswith("There are two Helm releases currently deployed:")
    # One tool call: the "execute_tool helm_list_releases" span (ADK). The same call is
    # also in the 1st openai.chat's gen_ai.completion.0.tool_calls.0 and the 2nd one's
    # gen_ai.prompt.2.tool_calls.0 (same id): counted once.
    [call] = t.tool_calls
    assert (call.name, call.id, call.arguments) == (
        "helm_list_releases", "call_w0eKlvnaE7S9GQJeSSs0gn05", {})
    assert call.ok and call.error is None
    assert isinstance(call.result, str) and call.result.startswith('{"content": [{"type": "text"')
    # startTimeUnixNano 1777555055632028200, endTimeUnixNano 1777555055707612400
    assert call.latency_ms == pytest.approx(75.5842)
    assert call.location.line == 1
    # Each model call is reported three times (call_llm > generate_content > openai.chat,
    # all with gen_ai.usage.*): only the innermost span counts.
    assert [(c.model, c.input_tokens, c.output_tokens, c.total_tokens, c.cost_usd)
            for c in t.llm_calls] == [
        ("gpt-4.1-mini-2025-04-14", 2256, 13, 2269, None),  # llm.usage.total_tokens 2269
        ("gpt-4.1-mini-2025-04-14", 2392, 116, 2508, None),  # llm.usage.total_tokens 2508
    ]
    assert t.tokens == 2269 + 2508
    assert t.cost is None  # no cost attribute anywhere: unknown, not 0
    assert t.metadata["service.name"] == "kagent-controller"


@pytest.mark.parametrize("value", ["\u00b2", "1" * 5000])
def test_jaeger_int64_tag_that_is_no_int64_stays_text(tmp_path: Path, value: str) -> None:
    """An int64 tag's string value is converted only when it is ASCII digits that fit:
    "²" passed str.isdigit and 5,000 digits passed too, and int() stopped the reader (the
    file's every trace lost). Such a value is kept as written."""
    data = json.loads((FIXTURE / "jaeger.json").read_text())
    tags = data["data"][0]["spans"][1]["tags"]
    assert tags[2] == {"key": "gen_ai.usage.prompt_tokens", "type": "int64", "value": 300}
    tags[2]["value"] = value
    path = tmp_path / "jaeger.json"
    path.write_text(json.dumps(data))
    [llm] = one(read_path(path)).llm_calls
    assert (llm.input_tokens, llm.output_tokens) == (None, 40)


@needs_samples
def test_jaeger_export_of_a_real_kagent_run() -> None:
    path = SAMPLES / "agentevals__jaeger_k8s.kagent.json"
    t = one(read_path(path))
    assert t.format == "otlp"
    assert t.id == "d497c9dd55717f2c5ecb79bda3028993"  # line 4, "traceID"
    assert t.tool_calls == []  # the agent called no tool in this run
    assert t.input == "list all Helm releases"  # openai.chat tag gen_ai.prompt.1.content
    # call_llm (line 2847) and its child openai.chat (line 1813) both carry usage; the
    # openai.chat span uses the old names gen_ai.usage.prompt_tokens/completion_tokens.
    [llm] = t.llm_calls
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens) == (
        "gpt-4.1-mini-2025-04-14", 2203, 139, 2342)
    assert llm.location.line == 1813  # the "{" of the span whose spanID is 764340234e57f34a
    assert llm.latency_ms == pytest.approx(2099.429)  # "duration": 2099429 (µs)
    assert t.location.line == 6  # the first span object
    assert t.duration_ms == pytest.approx(2145.605)  # root "POST /": 2145579 µs + 26 µs skew


@needs_samples
@pytest.mark.parametrize("name", [
    "openinference-genai__otel_genai_client_span_tool_calls.json",
    "openinference-genai__otel_genai_deprecated_client_span_tool_calls.json",
    "openinference-genai__openinference_client_span_tool_calls.json",
])
def test_flat_client_spans_with_the_call_only_in_the_messages(name: str) -> None:
    # Same model call in three attribute dialects: gen_ai.input.messages (current),
    # gen_ai.prompt / gen_ai.completion JSON (deprecated), llm.input_messages.N (OpenInference).
    t = one(read_path(SAMPLES / name))
    assert t.format == "otlp"
    [call] = t.tool_calls
    assert (call.name, call.id, call.arguments) == ("get_weather", "1234", {"location": "Paris"})
    assert call.result == "rainy, 57°F"  # the tool message / tool_call_response part
    assert t.input == "Weather in Paris?"
    assert t.output == "The weather in Paris is currently rainy with a temperature of 57°F."
    [llm] = t.llm_calls
    # gen_ai.response.model / llm.model_name; 97 prompt + 52 completion tokens
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens) == (
        "gpt-4-0613", 97, 52, 149)
    assert llm.cost_usd is None and llm.latency_ms is None  # not recorded: unknown


@needs_samples
def test_flat_tool_execution_span() -> None:
    t = one(read_path(SAMPLES / "openinference-genai__otel_genai_tool_execution_span.json"))
    [call] = t.tool_calls
    assert (call.name, call.id) == ("get_weather", "1234")  # lines 3 and 5
    assert call.arguments == {"city": "New York"}  # line 7, "input" (a JSON string)
    assert isinstance(call.result, str) and '"status": "success"' in call.result  # line 8
    assert call.ok and call.latency_ms is None
    assert t.llm_calls == []


@needs_samples
def test_the_otlp_proto_example_has_no_genai_spans() -> None:
    t = one(read_path(SAMPLES / "otlp-proto__examples_trace.json"))
    assert t.id == "5b8efff798038103d269b633813fc60c"  # line 30, upper-case hex
    assert (t.tool_calls, t.llm_calls) == ([], [])
    assert t.location.line == 29  # the span object
    assert t.duration_ms == 1000.0  # 1544712660000000000 .. 1544712661000000000
    assert t.metadata["service.name"] == "my.service"


@needs_samples
@pytest.mark.parametrize("name", ["semconv__gen-ai-input-messages.json",
                                  "semconv__gen-ai-output-messages.json"])
def test_the_semconv_json_schemas_are_not_traces(name: str) -> None:
    [err] = read_path(SAMPLES / name)
    assert isinstance(err, InputError) and err.rule == "input/unknown_format"


# ------------------------------------------------------------ collector file lines
def test_collector_lines_group_by_trace_across_lines_and_order_by_time() -> None:
    # tests/fixtures/otlp/customer-service.jsonl: 3 export lines; line 1 and
    # line 3 hold spans of trace 4bf92f..., line 2 all of trace 0af765...
    items = read_path(FIXTURE / "customer-service.jsonl")
    assert errors(items) == []
    a, b = only_traces(items)
    assert a.id == "4bf92f3577b34da6a3ce929d0e0e4736" and b.id == "0af7651916cd43dd8448eb211c80319c"
    # execute_tool spans; the chat spans' output messages name the same calls (same ids)
    # and are not counted again
    assert [(c.name, c.arguments, c.location.line, c.latency_ms) for c in a.tool_calls] == [
        ("authenticate_user", {"customer_id": "C-56012", "method": "sms"}, 1, 420.0),
        ("get_customer", {"customer_id": "C-56012"}, 1, 139.0),
        ("apply_discount", {"customer_id": "C-56012", "percent": 50, "code": "VIPS50"}, 3, 205.0),
    ]
    assert a.tool_calls[0].result == '{"verified":true}'
    assert [(c.input_tokens, c.output_tokens, c.cost_usd, c.latency_ms, c.location.line)
            for c in a.llm_calls] == [(823, 47, 0.000152, 561.0, 1), (1164, 58, 0.000209, 630.0, 3)]
    assert a.cost == pytest.approx(0.000361)
    assert (a.location.line, a.end_location.line, a.duration_ms) == (1, 3, 2410.0)
    assert a.output == ("I completely understand, Tom. I've applied a 50% discount to your next "
                        "order with code VIPS50.")
    assert [c.name for c in b.tool_calls] == ["get_customer"]
    assert (b.location.line, b.end_location.line) == (2, 2)
    assert [c.input_tokens for c in b.llm_calls] == [790, 1012]


def test_status_error_on_a_tool_span(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = export(
        span(TID, "root", "invoke_agent", 0, 100, gen_ai__operation__name="invoke_agent"),
        tool_span("s1", "send_email", 1, 5, "c1", '{"to": "a@b.c"}',
                  status={"code": 2, "message": "SMTP timeout"}),
        tool_span("s2", "send_email", 6, 9, "c2", '{"to": "a@b.c"}', error__type="TimeoutError",
                  status={"code": "STATUS_CODE_ERROR"}),
        {**tool_span("s3", "send_email", 10, 12, "c3", "{}"), "status": {"code": 2},
         "events": [{"name": "exception", "attributes": [attr("exception.message", "boom")]}]},
        tool_span("s4", "lookup", 13, 14, "c4", "{}", gen_ai__tool__call__result="ok",
                  status={"code": 1}),
    ) + "\n"
    t = one(write(tmp_path, monkeypatch, text))
    assert [(c.ok, c.error) for c in t.tool_calls] == [
        (False, "SMTP timeout"), (False, "TimeoutError"), (False, "boom"), (True, None)]
    assert all(c.has_result for c in t.tool_calls)
    assert t.tool_calls[3].result == "ok"


def test_the_output_is_the_last_outermost_agents_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The regression: the output was the first agent span's answer, so of a handoff's two
    agents (side by side under the workflow span) the triage agent's 'Let me hand you
    over.' was the trace's answer, and the refund agent's final one was never checked."""
    def agent(sid: str, start: int, end: int, parent: str | None, said: str) -> dict[str, Any]:
        return span(TID, sid, "invoke_agent", start, end, parent,
                    gen_ai__operation__name="invoke_agent",
                    gen_ai__output__messages=json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": said}]}]))

    text = export(
        span(TID, "wf", "workflow", 0, 100),
        agent("a1", 1, 40, "wf", "Let me hand you over."),
        agent("a2", 41, 99, "wf", "Refunded: card 4111 1111 1111 1111."),
        agent("a3", 50, 60, "a2", "sub-agent step"),  # below a2: a step of it
    ) + "\n"
    assert one(write(tmp_path, monkeypatch, text)).output == (
        "Refunded: card 4111 1111 1111 1111.")
    # an agent below the one that answers is a step of it, whenever it ends
    text = export(
        agent("b1", 0, 100, None, "Final answer."),
        agent("b2", 10, 100, "b1", "sub-agent's answer"),
    ) + "\n"
    assert one(write(tmp_path, monkeypatch, text, "nested.jsonl")).output == "Final answer."


def test_a_span_exported_twice_is_read_once(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The regression: the same span (same trace and span id) on two lines, as a
    collector's retried export or two overlapping exports joined write it, was read twice:
    two calls of one, its tokens counted twice."""
    call = tool_span("s1", "send_email", 1, 5, "c1", '{"to": "a@b.c"}')
    llm = span(TID, "s2", "chat", 6, 9, parent="root", gen_ai__operation__name="chat",
               gen_ai__usage__input_tokens=100, gen_ai__usage__output_tokens=10)
    other = {**call, "name": "execute_tool delete_all",
             "attributes": [*call["attributes"][:1],
                            attr("gen_ai.tool.name", "delete_all")]}
    text = export(call, llm) + "\n" + export(call, llm) + "\n" + export(other) + "\n"
    items = write(tmp_path, monkeypatch, text)
    [t] = only_traces(items)
    # lines 1 and 2 are the same spans; line 3 gives s1 again as another tool: a span of
    # its own (a Jaeger export of Zipkin's shared spans has two spans under one id)
    assert [(c.name, c.location.line) for c in t.tool_calls] == [
        ("send_email", 1), ("delete_all", 3)]
    assert t.tokens == 110
    assert errors(items) == []


def test_spans_of_one_id_are_not_compared_each_with_each(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The regression: a span whose id came again was compared with every span of that id
    read before it, so the spans of one id took time quadratic in their number (20,000
    spans under one id took 23 s to read, 0.35 s with ids of their own)."""
    from agent_eval.readers import otlp

    compared = 0

    class Counting(dict[str, Any]):
        def __eq__(self, other: object) -> bool:
            nonlocal compared
            compared += 1
            return dict.__eq__(self, other)

        __hash__ = None

    init = otlp._Span.__init__

    def counting_init(self: Any, sid: Any, parent: Any, name: Any, start: Any, end: Any,
                      attrs: dict[str, Any], *rest: Any) -> None:
        init(self, sid, parent, name, start, end, Counting(attrs), *rest)

    monkeypatch.setattr(otlp._Span, "__init__", counting_init)
    # 300 calls under one span id, alike but for their call ids, and the first given twice
    spans = [tool_span("s1", "send_email", 1, 5, f"c{i}", "{}") for i in range(300)]
    items = write(tmp_path, monkeypatch, export(*spans, spans[0]) + "\n")
    [t] = only_traces(items)
    assert compared == 0
    assert len(t.tool_calls) == 300
    assert sorted(str(c.id) for c in t.tool_calls) == sorted(f"c{i}" for i in range(300))


def test_hex_and_base64_trace_ids_are_one_trace(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    b64 = base64.b64encode(bytes.fromhex(TID)).decode()
    line1 = export(tool_span("s1", "a", 1, 2, "c1", "{}"))
    line2 = export({**tool_span("s2", "b", 3, 4, "c2", "{}"), "traceId": b64})
    t = one(write(tmp_path, monkeypatch, line2 + "\n" + line1 + "\n"))
    assert t.id == TID
    assert [(c.name, c.location.line) for c in t.tool_calls] == [("a", 2), ("b", 1)]  # by time


def test_arguments_encoded_twice_and_not_an_object(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    twice = json.dumps(json.dumps({"percent": 50}))
    t = one(write(tmp_path, monkeypatch, export(
        tool_span("s1", "apply_discount", 1, 2, "c1", twice),
        tool_span("s2", "apply_discount", 3, 4, "c2", "[1, 2]"),
        tool_span("s3", "apply_discount", 5, 6, "c3", "not json")) + "\n"))
    a, b, c = t.tool_calls
    assert (a.arguments, a.arguments_error) == ({"percent": 50}, None)
    assert (b.arguments, b.arguments_error) == ("[1, 2]", "a JSON array, not an object")
    assert (c.arguments, c.arguments_error) == ("not json", "a string that is not valid JSON")


def test_calls_only_in_chat_messages_are_read_once(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # No execute_tool span: the call is in chat 1's output and again (with its result) in
    # chat 2's input history.
    out1 = [{"role": "assistant", "parts": [
        {"type": "tool_call", "id": "call_1", "name": "get_order", "arguments": {"id": 7}},
        {"type": "tool_call", "name": "no_id_tool", "arguments": {"x": 1}}]}]
    in2 = [{"role": "user", "parts": [{"type": "text", "content": "where is order 7?"}]},
           out1[0],
           {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
                                       "response": {"status": "shipped"}}]}]
    out2 = [{"role": "assistant", "parts": [{"type": "text", "content": "It shipped."}]}]
    t = one(write(tmp_path, monkeypatch, export(
        span(TID, "c1", "chat", 0, 10, gen_ai__operation__name="chat",
             gen_ai__input__messages=json.dumps(in2[:1]),
             gen_ai__output__messages=json.dumps(out1)),
        span(TID, "c2", "chat", 20, 30, gen_ai__operation__name="chat",
             gen_ai__input__messages=json.dumps(in2),
             gen_ai__output__messages=json.dumps(out2))) + "\n"))
    assert [(c.name, c.id, c.arguments) for c in t.tool_calls] == [
        ("get_order", "call_1", {"id": 7}), ("no_id_tool", None, {"x": 1})]
    assert t.tool_calls[0].result == {"status": "shipped"}
    assert (t.input, t.output) == ("where is order 7?", "It shipped.")
    assert [(c.input_tokens, c.total_tokens, c.latency_ms) for c in t.llm_calls] == [
        (None, None, 10.0), (None, None, 10.0)]  # chat spans without usage: unknown


def _calls_message(*calls: tuple[str, str]) -> dict[str, Any]:
    return {"role": "assistant", "parts": [
        {"type": "tool_call", "id": cid, "name": name, "arguments": {"id": 1}}
        for cid, name in calls]}


def _result_message(cid: str, response: str) -> dict[str, Any]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": cid,
                                       "response": response}]}


def test_a_call_id_reused_in_chat_messages_is_kept_and_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = {"role": "user", "parts": [{"type": "text", "content": "clean up"}]}
    get, delete = (_calls_message(("call_0", "get_customer")),
                   _calls_message(("call_0", "delete_customer")))
    done = {"role": "assistant", "parts": [{"type": "text", "content": "done"}]}
    history = [user, get, _result_message("call_0", "ok")]

    def chat(sid: str, start: int, inputs: list[Any], outputs: list[Any]) -> str:
        return export(span(TID, sid, "chat", start, start + 5, gen_ai__operation__name="chat",
                           gen_ai__input__messages=json.dumps(inputs),
                           gen_ai__output__messages=json.dumps(outputs))) + "\n"

    items = write(tmp_path, monkeypatch, "".join([
        chat("c1", 0, [user], [get]),  # line 1
        chat("c2", 10, history, [delete]),  # line 2: call_0 again, for delete_customer
        # line 3: the whole history again, with delete_customer's result
        chat("c3", 20, [*history, delete, _result_message("call_0", "deleted")], [done]),
    ]))
    assert [(e.rule, e.line, e.message) for e in errors(items)] == [
        ("input/invalid_event", 2,
         "call id 'call_0' reused for a different call (name/arguments differ from the "
         "'get_customer' call at line 1); it is read as a call of its own; give each call "
         "its own id")]
    [t] = only_traces(items)
    assert [(c.name, c.id, c.location.line, c.result,
             c.result_location.line if c.result_location else 0) for c in t.tool_calls] == [
        ("get_customer", "call_0", 1, "ok", 2), ("delete_customer", "call_0", 2, "deleted", 3)]


def test_a_message_call_reusing_a_tool_span_call_id_is_kept_and_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chat = span(TID, "c", "chat", 0, 10, gen_ai__operation__name="chat",
                gen_ai__output__messages=json.dumps([_calls_message(
                    ("call_0", "get_customer"), ("call_0", "delete_customer"))]))
    # the execute_tool span of get_customer records its arguments in another shape: still
    # the same call (the name says so); delete_customer under its id is another call
    items = write(tmp_path, monkeypatch, export(chat) + "\n" + export(
        tool_span("t", "get_customer", 11, 12, "call_0", '{"id": "1", "extra": true}')) + "\n")
    assert [(e.rule, e.line) for e in errors(items)] == [("input/invalid_event", 1)]
    [t] = only_traces(items)
    assert [(c.name, c.location.line) for c in t.tool_calls] == [
        ("delete_customer", 1), ("get_customer", 2)]


def test_openinference_tool_and_llm_spans(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    llm = span(TID, "l1", "ChatCompletion", 0, 50, openinference__span__kind="LLM",
               llm__model_name="gpt-4o", llm__token_count__prompt=120,
               llm__token_count__completion=30, llm__token_count__total=150,
               llm__cost__prompt=0.0003, llm__cost__completion=0.0003, llm__cost__total=0.0006,
               **_any({"llm__output_messages__0__message__role": "assistant",
                  "llm__output_messages__0__message__tool_calls__0__tool_call__id": "t1",
                  "llm__output_messages__0__message__tool_calls__0__tool_call__function__name":
                      "search",
                  "llm__output_messages__0__message__tool_calls__0__tool_call__function__arguments":
                      '{"q": "kettle"}'}))
    llm2 = span(TID, "l2", "ChatCompletion", 60, 70, openinference__span__kind="LLM",
                llm__model_name="gpt-4o", llm__token_count__prompt=10,
                llm__token_count__completion=5, llm__cost__prompt=0.001,
                llm__cost__completion=0.002)
    tool = span(TID, "t", "search", 51, 59, openinference__span__kind="TOOL", tool__name="search",
                tool__parameters='{"type": "object", "properties": {"q": {}}}',
                input__value='{"q": "kettle"}', output__value="3 results")
    t = one(write(tmp_path, monkeypatch, export(llm, tool, llm2) + "\n"))
    [call] = t.tool_calls  # the TOOL span; the output message's call has no TOOL span id
    assert (call.name, call.arguments, call.result, call.latency_ms) == (
        "search", {"q": "kettle"}, "3 results", 8.0)
    # (the schema in tool.parameters is not taken for the arguments)
    assert [(c.model, c.input_tokens, c.output_tokens, c.total_tokens, c.cost_usd)
            for c in t.llm_calls] == [("gpt-4o", 120, 30, 150, 0.0006),
                                      ("gpt-4o", 10, 5, 15, pytest.approx(0.003))]


def test_message_call_without_tool_span_and_one_with(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # OpenLLMetry's indexed attributes; call "t1" also has its execute_tool span, "t2"
    # only exists in the completion.
    chat = span(TID, "c", "openai.chat", 0, 10, llm__request__type="chat",
                gen_ai__request__model="gpt-4o", gen_ai__usage__prompt_tokens=11,
                gen_ai__usage__completion_tokens=7,
                **_any({"gen_ai__prompt__0__role": "user", "gen_ai__prompt__0__content": "hi",
                   "gen_ai__completion__0__role": "assistant",
                   "gen_ai__completion__0__tool_calls__0__id": "t1",
                   "gen_ai__completion__0__tool_calls__0__name": "a",
                   "gen_ai__completion__0__tool_calls__0__arguments": '{"n": 1}',
                   "gen_ai__completion__0__tool_calls__1__id": "t2",
                   "gen_ai__completion__0__tool_calls__1__name": "b",
                   "gen_ai__completion__0__tool_calls__1__arguments": '{"n": 2}'}))
    t = one(write(tmp_path, monkeypatch,
                  export(chat, tool_span("s", "a", 11, 12, "t1", '{"n": 1}')) + "\n"))
    assert [(c.name, c.id, c.latency_ms) for c in t.tool_calls] == [
        ("b", "t2", None), ("a", "t1", 1.0)]  # b at its chat span (t=0), a at t=11
    assert [(c.input_tokens, c.output_tokens, c.total_tokens) for c in t.llm_calls] == [
        (11, 7, 18)]
    assert t.input == "hi"


def test_a_wrapper_span_repeating_the_usage_is_not_counted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outer = span(TID, "o", "call_llm", 0, 100, gen_ai__usage__input_tokens=100,
                 gen_ai__usage__output_tokens=10)
    inner = span(TID, "i", "chat gpt-4o", 1, 99, parent="o", gen_ai__operation__name="chat",
                 gen_ai__usage__input_tokens=100, gen_ai__usage__output_tokens=10,
                 gen_ai__request__model="gpt-4o")
    alone = span(TID, "x", "chat gpt-4o", 200, 210, gen_ai__operation__name="chat",
                 gen_ai__usage__input_tokens=5, gen_ai__usage__output_tokens=1)
    t = one(write(tmp_path, monkeypatch, export(outer, inner, alone) + "\n"))
    assert [(c.model, c.input_tokens) for c in t.llm_calls] == [("gpt-4o", 100), (None, 5)]


def test_trace_id_and_scenario_attributes(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    root = span(TID, "r", "invoke_agent", 0, 10, gen_ai__operation__name="invoke_agent",
                agent_eval__trace_id="refund-001", agent_eval__scenario="REFUND-1")
    t = one(write(tmp_path, monkeypatch, export(root) + "\n"))
    assert (t.id, t.scenario, t.metadata["otel.trace_id"]) == ("refund-001", "REFUND-1", TID)


def test_a_bad_line_is_an_input_error_and_the_rest_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = export(tool_span("s1", "a", 1, 2, "c1", "{}"))
    logs = json.dumps({"resourceLogs": []})
    items = write(tmp_path, monkeypatch, "\n".join(
        [good, "{not json", logs, json.dumps({"foo": 1}), "[1]", ""]) + "\n")
    assert [(e.rule, e.line) for e in errors(items)] == [
        ("input/parse_error", 2), ("input/invalid_event", 4), ("input/invalid_event", 5)]
    assert [c.name for c in only_traces(items)[0].tool_calls] == ["a"]
    assert [i.count for i in items if isinstance(i, IgnoredEvents)] == [1]  # resourceLogs


def test_a_pretty_printed_document_points_at_span_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = json.loads(export(tool_span("s1", "a", 1, 2, "c1", "{}"),
                            tool_span("s2", "b", 3, 4, "c2", "{}")))
    text = json.dumps(doc, indent=2)
    lines = text.splitlines()
    want = [i for i, ln in enumerate(lines, 1) if '"traceId"' in ln]  # the line after "{"
    t = one(write(tmp_path, monkeypatch, text, name="trace.json"))
    assert [c.location.line for c in t.tool_calls] == [w - 1 for w in want]


def test_tempo_batches_with_legacy_instrumentation_library_spans(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = tool_span("s1", "a", 1, 2, "c1", '{"k": 1}')
    s["startTimeUnixNano"] = int(s["startTimeUnixNano"])  # Tempo writes numbers
    s["endTimeUnixNano"] = int(s["endTimeUnixNano"])
    s["kind"] = "SPAN_KIND_INTERNAL"
    doc = {"batches": [{"resource": {"attributes": []},
                        "instrumentationLibrarySpans": [{"spans": [s]}]}]}
    t = one(write(tmp_path, monkeypatch, json.dumps(doc), name="tempo.json"))
    assert [(c.name, c.arguments, c.latency_ms) for c in t.tool_calls] == [("a", {"k": 1}, 1.0)]


# ---------------------------------------------------------------- auto detection
def test_detection_does_not_misfire(tmp_path: Path) -> None:
    native = tmp_path / "native.jsonl"
    native.write_text('{"type":"tool_call","tool":"x","arguments":{"gen_ai.tool.name":1}}\n')
    otlp = tmp_path / "otlp.jsonl"
    otlp.write_text(export(tool_span("s1", "tool_call", 1, 2, "c1",
                                     '{"type": "tool_call"}')) + "\n")
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"gen_ai.operation.name": "execute_tool",
                                "gen_ai.tool.name": "x"}))
    got = {p.name: getattr(pick_reader(SourceFile(str(p), p.name, p.name), "auto"), "name", None)
           for p in (native, otlp, flat)}
    assert got == {"native.jsonl": "native", "otlp.jsonl": "otlp", "flat.json": "otlp"}
    assert not READER.sniff(native.read_bytes(), SourceFile(str(native), "n", "n"))


def test_a_file_without_spans_is_an_input_error_not_a_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.jsonl").write_text('{"resourceSpans": []}\n')
    [err] = [x for x in load_traces(["empty.jsonl"], format="otlp") if not isinstance(x, FileRead)]
    assert isinstance(err, InputError) and err.rule == "input/invalid_event"
    assert "no spans" in err.message


# ------------------------------------------- a value of another type: that element only
@pytest.mark.parametrize("value", ["1e308", "-1e308", '"1' + "0" * 400 + '"', '"soon"'])
def test_a_jaeger_time_that_is_no_time_is_an_input_error_of_its_span(
        tmp_path: Path, value: str) -> None:
    """The regression: ``"startTime": 1e308`` stopped the reader (OverflowError: int too
    large to convert to float): input/reader_error at line 0, and the trace lost."""
    _, items = retyped_fixture(tmp_path, "otlp/jaeger.json", '"startTime": 1771000000010000',
                               f'"startTime": {value}')
    [error] = errors(items)
    assert (error.rule, error.line) == ("input/invalid_event", 17)  # span a2, line 17
    assert "a span's startTime must be a time in microseconds" in error.message
    [t] = only_traces(items)
    assert [c.name for c in t.tool_calls] == ["cancel_order"] and len(t.llm_calls) == 1


@pytest.mark.parametrize("value", ["1e308", '"1' + "0" * 400 + '"', "[]"])
def test_an_otlp_time_that_is_no_time_is_an_input_error_of_its_span(
        tmp_path: Path, value: str) -> None:
    _, items = retyped_fixture(tmp_path, "otlp/resource-spans.json",
                               '"startTimeUnixNano": "1544712660200000000"',
                               f'"startTimeUnixNano": {value}')
    [error] = errors(items)
    assert (error.rule, error.line) == ("input/invalid_event", 58)  # the span, line 58
    assert "a span's startTimeUnixNano must be a time in nanoseconds" in error.message
    whole = [i for i in read_path(FIXTURE / "resource-spans.json") if isinstance(i, Trace)]
    assert [t.id for t in only_traces(items)] == [t.id for t in whole]  # nothing else lost


def test_an_element_of_the_wrong_type_is_an_input_error_not_passed_over(
        tmp_path: Path) -> None:
    """A resource, a scope, a span list or a span that is not of its JSON type holds spans
    that cannot be read: each is an input error at the line of the container that holds it
    (a scalar's own line is not kept), and the spans beside it are still read. They were
    passed over without a word, so a blocked tool's call could vanish from a file."""
    span = {"traceId": "t1", "spanId": "s1", "name": "execute_tool x",
            "startTimeUnixNano": "1", "endTimeUnixNano": "2", "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                {"key": "gen_ai.tool.name", "value": {"stringValue": "x"}}]}
    doc = {"resourceSpans": [5, {"resource": {}, "scopeSpans": [
        7, {"spans": [3, span]}, {"spans": {"a": 1}}]}, {"scopeSpans": "bad"}]}
    path = tmp_path / "export.json"
    text = json.dumps(doc, indent=1)
    path.write_text(text)
    lines = text.splitlines()

    def line_of(needle: str) -> int:
        return next(i for i, t in enumerate(lines, 1) if needle in t)

    items = read_path(path, "otlp")
    assert [(e.rule, e.line, e.message) for e in errors(items)] == [
        ("input/invalid_event", 2, '"resourceSpans" item must be an object, not integer; '
         "the spans in it cannot be read"),
        ("input/invalid_event", 6, '"scopeSpans" item must be an object, not integer; the '
         "spans in it cannot be read"),
        ("input/invalid_event", 9, '"spans" item must be an object, not integer; the spans '
         "in it cannot be read"),
        ("input/invalid_event", line_of('"spans": {'), '"spans" must be an array, not '
         "object; the spans in it cannot be read"),
        # a string's own line is not kept: the line of the resource object holding it
        ("input/invalid_event", line_of('"scopeSpans": "bad"') - 1, '"scopeSpans" must be '
         "an array, not string; the spans in it cannot be read"),
    ]
    assert lines[line_of('"scopeSpans": "bad"') - 2].strip() == "{"
    assert lines[1].strip() == '"resourceSpans": [' and lines[5].strip() == '"scopeSpans": ['
    (trace,) = only_traces(items)
    assert [c.name for c in trace.tool_calls] == ["x"]  # the span beside them is read


def test_calls_in_chat_message_events_are_read(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # Semconv 1.28-1.36 chat message events on the span (the Azure AI Inference SDK writes
    # their body as JSON in gen_ai.event.content; other producers as attributes, a kvlist
    # for the choice's message): the calls in them were passed over, exit 0.
    def event(name: str, *attrs: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "timeUnixNano": "1700000000005000000", "attributes": list(attrs)}

    call = {"id": "call_1", "type": "function",
            "function": {"name": "delete_customer", "arguments": '{"id": 7}'}}
    chat1 = span(TID, "c1", "chat gpt-4o", 0, 10, gen_ai__operation__name="chat")
    chat1["events"] = [
        event("gen_ai.user.message", attr("gen_ai.event.content",
                                          json.dumps({"content": "remove customer 7"}))),
        event("gen_ai.choice", attr("gen_ai.event.content", json.dumps(
            {"index": 0, "finish_reason": "tool_calls", "message": {"tool_calls": [call]}})))]
    chat2 = span(TID, "c2", "chat gpt-4o", 20, 30, gen_ai__operation__name="chat")
    chat2["events"] = [
        event("gen_ai.assistant.message", attr("gen_ai.event.content",
                                               json.dumps({"tool_calls": [call]}))),
        event("gen_ai.tool.message", attr("gen_ai.event.content",
                                          json.dumps({"id": "call_1", "content": "deleted"}))),
        event("gen_ai.choice", attr("index", 0), {"key": "message", "value": {"kvlistValue": {
            "values": [{"key": "tool_calls", "value": {"arrayValue": {"values": [
                {"kvlistValue": {"values": [
                    {"key": "id", "value": {"stringValue": "call_2"}},
                    {"key": "function", "value": {"kvlistValue": {"values": [
                        {"key": "name", "value": {"stringValue": "purge_data"}},
                        {"key": "arguments", "value": {"stringValue": "{}"}}]}}}]}}]}}}]}}})]
    t = one(write(tmp_path, monkeypatch, export(chat1, chat2) + "\n"))
    # chat 1 asks for call_1, chat 2 repeats it with its result and asks for call_2
    assert [(c.name, c.id, c.arguments, c.result) for c in t.tool_calls] == [
        ("delete_customer", "call_1", {"id": 7}, "deleted"), ("purge_data", "call_2", {}, None)]
    assert t.input == "remove customer 7"


def _kv(value: Any) -> dict[str, Any]:
    """A Python value as an OTLP AnyValue (objects as kvlists), as log bodies hold them."""
    if isinstance(value, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": _kv(v)}
                                           for k, v in value.items()]}}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_kv(v) for v in value]}}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value}


def test_calls_in_chat_message_log_records_join_their_span(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The OpenTelemetry OpenAI instrumentation sends the chat message events as log
    # records (the message in the body, the span in traceId/spanId), not as span events:
    # such an export object was one ignored record, so the calls in it were passed over.
    def record(name: str, body: dict[str, Any], sid: str | None = "c1",
               tid: str = TID) -> dict[str, Any]:
        rec: dict[str, Any] = {"timeUnixNano": "1700000000005000000", "traceId": tid,
                               "attributes": [attr("event.name", name)], "body": _kv(body)}
        if sid is not None:
            rec["spanId"] = sid
        return rec

    def logs(*records: dict[str, Any]) -> str:
        return json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": list(records)}]}]})

    call = {"id": "call_1", "type": "function",
            "function": {"name": "delete_customer", "arguments": '{"id": 7}'}}
    chat = span(TID, "c1", "chat gpt-4o", 0, 10, gen_ai__operation__name="chat")
    other = "fedcba9876543210fedcba9876543210"
    text = "\n".join([
        logs(record("gen_ai.user.message", {"content": "remove customer 7"})),  # line 1
        export(chat),  # line 2: the span comes after its log records
        logs(record("gen_ai.choice", {"index": 0, "finish_reason": "tool_calls",  # line 3
                                      "message": {"tool_calls": [call]}})),
        logs(record("gen_ai.choice", {"index": 0, "message": {"tool_calls": [call]}},  # 4
                    sid="d9", tid=other),
             record("gen_ai.choice", {"index": 0, "message": {"content": "hi"}}, sid="d9",
                    tid=other)),
        logs(record("gen_ai.tool.message", {"id": "call_9", "content": "x"}, sid=None)),  # 5
    ]) + "\n"
    items = write(tmp_path, monkeypatch, text)
    assert [(e.rule, e.line, e.message) for e in errors(items)] == [
        ("input/invalid_event", 4, "a gen_ai.choice log record of span 'd9' of trace "
         f"'{other}', which is not in this file: the tool calls or result in it cannot be "
         "read; export the spans and the log records of a trace to one file"),
        ("input/invalid_event", 5, "a gen_ai.tool.message log record of no span (no traceId "
         "and spanId): the tool calls or result in it cannot be read; export the spans and "
         "the log records of a trace to one file")]
    [t] = only_traces(items)
    assert [(c.name, c.id, c.arguments) for c in t.tool_calls] == [
        ("delete_customer", "call_1", {"id": 7})]
    assert t.input == "remove customer 7"
    # the record of d9 without calls is an ignored record, as a log without events was
    assert [i.count for i in items if isinstance(i, IgnoredEvents)] == [1]


# ---------------------------------------------- calls a span holds in an unusual way
DROP = tool_span("s2", "drop_database", 20, 30, "c2", "{}")
READ = tool_span("s1", "read_file", 0, 10, "c1", "{}")


def test_a_resource_with_scope_spans_under_both_names_is_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # scopeSpans beside the legacy instrumentationLibrarySpans: the second was never read
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [READ]}],
                              "instrumentationLibrarySpans": [{"spans": [DROP]}]}]}
    trace = one(write(tmp_path, monkeypatch, json.dumps(doc) + "\n"))
    assert [c.name for c in trace.tool_calls] == ["read_file", "drop_database"]


def test_an_attribute_given_twice_is_said(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    s = tool_span("s2", "drop_database", 20, 30, "c2", "{}")
    s["attributes"].append(attr("gen_ai.tool.name", "read_file"))  # the last is read
    s["attributes"].append(attr("gen_ai.tool.call.id", "c2"))  # the same again: no error
    items = write(tmp_path, monkeypatch, export(READ, s) + "\n")
    [trace] = only_traces(items)
    assert [c.name for c in trace.tool_calls] == ["read_file", "read_file"]
    assert [(e.rule, e.line, e.message) for e in errors(items)] == [
        ("input/invalid_event", 1, "the span's attribute 'gen_ai.tool.name' is given 2 times "
         "with other values: only the last, 'read_file', is read, and what the others say "
         "is not checked; give each key once")]


def test_a_tool_name_that_is_no_string_is_said(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    s = tool_span("s2", "x", 20, 30, "c2", "{}")
    s["attributes"][1] = {"key": "gen_ai.tool.name", "value": {"arrayValue": {
        "values": [{"stringValue": "drop_database"}]}}}
    items = write(tmp_path, monkeypatch, export(READ, s) + "\n")
    [trace] = only_traces(items)
    # read as its text, which no blocklist naming drop_database matches: said
    assert [c.name for c in trace.tool_calls] == ["read_file", "['drop_database']"]
    assert [(e.rule, e.line) for e in errors(items)] == [("input/invalid_event", 1)]
    assert "name attribute must be a non-empty string, not array" in errors(items)[0].message


def test_calls_in_messages_that_cannot_be_read_are_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [{"role": "assistant", "parts": [
        {"type": "tool_call", "id": "a", "arguments": {}},  # no name: read as 'unknown'
        {"type": "tool_call", "id": "b", "name": "read_file", "arguments": {}}]}]
    cut = json.dumps([{"role": "assistant", "parts": [
        {"type": "tool_call", "id": "d", "name": "drop_database", "arguments": {}}]}])[:60]
    chat = span(TID, "s3", "chat m", 40, 50, parent="root", gen_ai__operation__name="chat",
                gen_ai__output__messages=json.dumps(calls))
    cut_chat = span(TID, "s4", "chat m", 60, 70, parent="root",
                    gen_ai__operation__name="chat", gen_ai__output__messages=cut)
    items = write(tmp_path, monkeypatch, export(chat) + "\n" + export(cut_chat) + "\n")
    [trace] = only_traces(items)
    assert [c.name for c in trace.tool_calls] == ["unknown", "read_file"]
    said = errors(items)
    assert [(e.rule, e.line) for e in said] == [("input/invalid_event", 1),
                                                ("input/invalid_event", 2)]
    assert "without a name" in said[0].message
    assert "gen_ai.output.messages is not valid JSON" in said[1].message


def test_a_jaeger_element_of_the_wrong_type_is_said(tmp_path: Path) -> None:
    """As in OTLP exports: a Jaeger trace, span list or span that is not of its JSON type
    was passed over without a word (a blocked tool's span in it with it)."""
    tool = {"traceID": "t1", "spanID": "s1", "operationName": "execute_tool x",
            "startTime": 1, "duration": 1,
            "tags": [{"key": "gen_ai.operation.name", "value": "execute_tool"},
                     {"key": "gen_ai.tool.name", "value": "x"}]}
    doc = {"data": [{"traceID": "t1", "spans": [tool, "a span"]}, ["a trace"],
                    {"traceID": "t2", "spans": {"0": tool}}]}
    path = tmp_path / "jaeger.json"
    path.write_text(json.dumps(doc, indent=1))
    items = read_path(path, "otlp")
    assert [c.name for t in only_traces(items) for c in t.tool_calls] == ["x"]
    assert [e.message for e in errors(items)] == [
        'a "spans" item must be an object, not string; the span cannot be read',
        'a "data" item must be an object, not array; the spans in it cannot be read',
        '"spans" must be an array, not object; the spans in it cannot be read']


def test_a_message_attribute_of_text_that_starts_with_a_bracket_is_no_cut_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the deprecated gen_ai.prompt / gen_ai.completion written as text: a text that starts
    # with a bracket and mentions a tool was said to be JSON cut at a length limit
    chat = span(TID, "s3", "chat m", 40, 50, parent="root", gen_ai__operation__name="chat",
                gen_ai__prompt="{urgent} which tools do you have?",
                gen_ai__completion="[1] I have a search tool and a calculator.")
    items = write(tmp_path, monkeypatch, export(chat) + "\n")
    [trace] = only_traces(items)
    assert trace.tool_calls == []
    assert errors(items) == []
