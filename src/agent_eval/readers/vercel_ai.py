"""Vercel AI SDK spans as OpenTelemetry ``ReadableSpan`` objects (docs/formats/vercel_ai.md).

The in-memory span objects of the OTel JS SDK, serialized as JSON (a JSON array, an
object with ``spans``, or one span per line): ``name``, ``spanContext.traceId`` /
``spanId``, ``parentSpanId`` (or ``parentSpanContext.spanId``), ``attributes`` (a flat
map), ``status``, ``startTime`` / ``endTime`` as ``[seconds, nanoseconds]``, ``events``.
The AI SDK's ``ai.*`` attributes are mapped: ``ai.toolCall`` spans are tool calls, the
provider spans (``ai.*.doGenerate`` / ``doStream`` / ``doEmbed``) are LLM calls, and the
top-level ``ai.generateText`` / ``streamText`` / ... spans give the input and output.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from agent_eval.jsonutil import json_type
from agent_eval.jsonutil import loads as bounded_loads
from agent_eval.model import LlmCall, Location, ToolCall, Trace
from agent_eval.readers import sniffs
from agent_eval.readers._foreign import add, as_dict, count, new_trace, set_result, touch
from agent_eval.readers.base import CallIndex, SourceFile, reused_call_id
from agent_eval.readers.native import decode_arguments
from agent_eval.readers.skeleton import EventReader, ReadState

NAME = "vercel_ai"
_PROVIDER = (".doGenerate", ".doStream", ".doEmbed")


def _hr_ms(value: Any) -> float | None:
    """An OTel JS ``HrTime`` (``[seconds, nanoseconds]``) in epoch milliseconds."""
    if isinstance(value, list) and len(value) == 2:
        sec, nanos = value
        if type(sec) is int and type(nanos) is int:
            return sec * 1000.0 + nanos / 1e6
    return None


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return bounded_loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _prompt_text(attrs: dict[str, Any]) -> Any:
    """The user's request: ``ai.prompt`` (``{"prompt": ...}`` or ``{"messages": [...]}``)."""
    prompt = _json(attrs.get("ai.prompt"))
    if isinstance(prompt, dict):
        if isinstance(prompt.get("prompt"), str):
            return prompt["prompt"]
        messages = prompt.get("messages")
        if isinstance(messages, list):
            for m in messages:
                m = as_dict(m)
                if m.get("role") == "user":
                    content = m.get("content")
                    if isinstance(content, str):
                        return content
                    blocks = content if isinstance(content, list) else []
                    texts = [as_dict(b).get("text") for b in blocks]
                    joined = "\n".join(t for t in texts if isinstance(t, str))
                    return joined or content
        return prompt
    return prompt


def _error(span: dict[str, Any], events: list[Any]) -> str | None:
    status = as_dict(span.get("status"))
    if status.get("code") != 2:
        return None
    for ev in events:
        ea = as_dict(as_dict(ev).get("attributes"))
        if isinstance(ea.get("exception.message"), str):
            return str(ea["exception.message"])
    message = status.get("message")
    return message if isinstance(message, str) and message else "error"


def _fits(call: ToolCall, name: str, args: Any, why: str | None, recorded: bool) -> bool:
    """Whether a call with the id of ``call`` is ``call``: the same name, and the same
    arguments when both recorded them."""
    return call.name == name and (not recorded or not call.arguments_recorded or (
        call.arguments == args and call.arguments_error == why))


class _State(ReadState):
    def __init__(self, source: SourceFile) -> None:
        super().__init__(source)
        self.by_key: dict[str, Trace] = {}
        self.times: dict[str, list[float]] = {}
        self.calls: dict[str, CallIndex] = {}  # trace -> call id -> calls

    def record(self, value: Any, line: int) -> None:
        if not isinstance(value, dict):
            self.invalid(line, "a span must be a JSON object")
            return
        span = value
        attrs = as_dict(span.get("attributes"))
        op = attrs.get("ai.operationId", span.get("name"))
        op = op if isinstance(op, str) else ""
        if not op.startswith("ai.") and "ai.toolCall.name" not in attrs:
            self.ignore(value, line, NAME)  # no AI SDK span (another instrumentation's)
            return
        ctx = as_dict(span.get("spanContext"))
        key = str(ctx.get("traceId") or "")
        trace = self.by_key.get(key)
        if trace is None:
            tid = self.source.trace_id if not key else f"{self.source.trace_id}:{key}"
            trace = self.by_key[key] = new_trace(tid, self.source, line, NAME)
            self.times[key] = []
            self.calls[key] = CallIndex()
        touch(trace, line)
        start, end = _hr_ms(span.get("startTime")), _hr_ms(span.get("endTime"))
        if start is not None and end is not None:
            self.times[key] += [start, end]
        latency = round(end - start, 3) if start is not None and end is not None else None
        loc = Location(self.file, line)
        error = _error(span, self.array(span.get("events"), line, "a span's events"))
        if op == "ai.toolCall" or "ai.toolCall.name" in attrs:
            self.tool_span(trace, key, attrs, loc, error, latency)
        elif op.endswith(_PROVIDER):
            self.llm_call(trace, key, attrs, loc, latency, line)
        elif op.startswith("ai."):
            if trace.input is None and "ai.prompt" in attrs:
                trace.input = _prompt_text(attrs)
            for k in ("ai.response.text", "ai.response.object"):
                if k in attrs:
                    trace.output = attrs[k] if k.endswith("text") else _json(attrs[k])
                    break
            fid = attrs.get("ai.telemetry.functionId")
            if isinstance(fid, str):
                trace.metadata.setdefault("ai.telemetry.functionId", fid)

    def tool_span(self, trace: Trace, key: str, attrs: dict[str, Any], loc: Location,
                  error: str | None, latency: float | None) -> None:
        name = attrs.get("ai.toolCall.name")
        cid = attrs.get("ai.toolCall.id")
        raw = attrs.get("ai.toolCall.args", attrs.get("ai.toolCall.input"))
        recorded = raw is not None  # absent under recordInputs: false
        args, why = decode_arguments(raw) if recorded else (None, None)
        label = self.name_of(name, loc.line, "an ai.toolCall span without ai.toolCall.name")
        call = self.known(key, cid, label, args, why, recorded, loc.line)
        if call is None:
            call = self.add(trace, key, label, args, why, recorded, cid, loc)
        else:  # already seen in the model's ai.response.toolCalls: the span is the call
            call.location = loc
            if recorded:
                call.arguments, call.arguments_error = args, why
                call.arguments_recorded = True
        res_key = ("ai.toolCall.result" if "ai.toolCall.result" in attrs
                   else "ai.toolCall.output")
        if res_key in attrs or error is not None:
            set_result(call, _json(attrs.get(res_key)), error, error is None, loc)
        call.latency_ms = latency

    def llm_call(self, trace: Trace, key: str, attrs: dict[str, Any], loc: Location,
                 latency: float | None, line: int) -> None:
        inp = count(attrs.get("ai.usage.inputTokens", attrs.get("ai.usage.promptTokens")))
        out = count(attrs.get("ai.usage.outputTokens",
                              attrs.get("ai.usage.completionTokens")))
        total = count(attrs.get("ai.usage.totalTokens"))
        if "ai.usage.tokens" in attrs:  # embeddings: input only
            inp = count(attrs["ai.usage.tokens"])
            total = inp
            out = 0 if inp is not None else None
        model = attrs.get("ai.response.model", attrs.get("ai.model.id"))
        trace.llm_calls.append(LlmCall(
            location=loc, model=model if isinstance(model, str) else None,
            input_tokens=inp, output_tokens=out,
            total_tokens=total if total is not None else add(inp, out), latency_ms=latency))
        calls = self.array(_json(attrs.get("ai.response.toolCalls")), line,
                           "a span's ai.response.toolCalls (or its JSON text)")
        for tc in calls:
            if type(tc) is not dict:
                self.invalid(line, "an item of a span's ai.response.toolCalls must be a JSON "
                                   f"object, not {json_type(tc)}; it was not read")
                continue
            cid = tc.get("toolCallId")
            raw = tc.get("input", tc.get("args"))
            args, why = decode_arguments(raw) if raw is not None else (None, None)
            label = self.name_of(tc.get("toolName"), line, "a call of ai.response.toolCalls "
                                                           "without toolName")
            if cid is None:  # read, though no tool span can be told to be this call
                self.invalid(line, f"a call of ai.response.toolCalls ({label!r}) without "
                                   "toolCallId: it is read as a call of its own, which an "
                                   "ai.toolCall span of it cannot be matched to; give each "
                                   "call its id")
            if self.known(key, cid, label, args, why, raw is not None, line) is None:
                self.add(trace, key, label, args, why, raw is not None, cid, loc)

    def name_of(self, name: Any, line: int, what: str) -> str:
        """A call's tool name; one that is missing (or no name) is an input error at
        ``line`` and the call is read as 'unknown'."""
        if isinstance(name, str) and name:
            return name
        self.invalid(line, f"{what}: it is read as a call of 'unknown', which the rules "
                           "naming its tool cannot see")
        return "unknown"

    def known(self, key: str, cid: Any, name: str, args: Any, why: str | None,
              recorded: bool, line: int) -> ToolCall | None:
        """The call of trace ``key`` that a call with id ``cid`` is (the same name, and
        the same arguments when both recorded them), or None: a new call; when another
        call has that id, an input error at ``line`` says so."""
        if cid is None:
            return None
        index, key = self.calls[key], str(cid)
        first = index.first(key)
        if first is None:
            return None
        if _fits(first, name, args, why, recorded):
            return first
        if index.last(key) is not first:  # a reused id: the others too
            for c in index.calls(key):
                if _fits(c, name, args, why, recorded):
                    return c
        self.errors.append(reused_call_id(key, first, self.file, line))
        return None

    def add(self, trace: Trace, key: str, name: str, args: Any, why: str | None,
            recorded: bool, cid: Any, loc: Location) -> ToolCall:
        call = ToolCall(name=name, arguments=args, location=loc,
                        id=str(cid) if cid is not None else None, arguments_error=why,
                        arguments_recorded=recorded)
        trace.tool_calls.append(call)
        if call.id is not None:
            self.calls[key].add(call.id, call)
        return call


    def traces(self) -> Iterable[Trace]:
        for key, trace in self.by_key.items():
            times = self.times[key]
            if times:
                trace.duration_ms = round(max(times) - min(times), 3)
        return self.by_key.values()


class VercelAiReader(EventReader):
    name = NAME
    marks = sniffs.VERCEL_AI
    key = "spans"
    state = _State
    empty = "no span in this file"


READER = VercelAiReader()
