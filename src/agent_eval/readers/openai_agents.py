"""OpenAI Agents SDK traces (docs/formats/openai_agents.md).

Two shapes, detected by content:

- a serialised ``RunState`` (``{"$schemaVersion": ..., "generated_items": [...],
  "model_responses": [...]}``, as written by ``RunState.to_json()``): the run's items
  (raw Responses items) in order; one trace per file;
- exported tracing spans (``span.export()``: ``{"object": "trace.span", "span_data":
  {...}}``), as a ``{"data": [...]}`` ingest payload, an array, or one per line:
  ``function`` spans are tool calls, ``generation``/``response`` spans LLM calls;
  grouped by ``trace_id``, ordered by ``started_at``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agent_eval.errors import InputError
from agent_eval.jsonutil import json_type
from agent_eval.model import Handoff, LlmCall, Location, ToolCall, Trace
from agent_eval.readers import sniffs
from agent_eval.readers.base import IgnoredEvents, ReadItem, SourceFile
from agent_eval.readers.jsonpos import JsonPath
from agent_eval.readers.native import decode_arguments
from agent_eval.readers.openai import (
    Conversation,
    Lines,
    iso_ms,
    load_file,
    responses_item,
    text_of,
    usage_counts,
)
from agent_eval.readers.skeleton import dispatch
from agent_eval.rule_ids import INPUT_INVALID_EVENT, INPUT_UNREADABLE_FILE


def _str_id(v: Any) -> str | None:
    return None if v is None or v == "" or type(v) in (dict, list) else str(v)


# ------------------------------------------------------------------------ RunState
def _usage_recorded(usage: Any) -> bool:
    """A RunState keeps a Usage object for every model response; ``requests: 0`` with
    zero tokens is the SDK's default, i.e. nothing was recorded."""
    if type(usage) is not dict:
        return False
    return not (usage.get("requests") == 0 and not usage.get("total_tokens")
                and not usage.get("input_tokens") and not usage.get("output_tokens"))


def _approval_lists(state: dict[str, Any]) -> tuple[set[str], set[str]]:
    """Call ids approved / rejected in ``context.approvals`` (per tool name)."""
    approved: set[str] = set()
    rejected: set[str] = set()
    ctx = state.get("context")
    approvals = ctx.get("approvals") if type(ctx) is dict else None
    if type(approvals) is not dict:
        return approved, rejected
    for entry in approvals.values():
        if type(entry) is not dict:
            continue
        for key, into in (("approved", approved), ("rejected", rejected)):
            v = entry.get(key)
            if type(v) is list:
                into.update(str(x) for x in v)
    return approved, rejected


def read_run_state(conv: Conversation, state: dict[str, Any], lines: Lines) -> None:
    """One trace from a serialised RunState: its header, its run items in order, the
    approvals, one LLM call per model response, the final output."""
    _run_header(conv, state)
    conv.trace.handoffs_recorded = True  # a handoff is one of its generated items
    approved, rejected = _approval_lists(state)
    items = _RunItems(conv, approved, rejected)
    generated = state.get("generated_items")
    for i, item in enumerate(generated if type(generated) is list else ()):
        items.item(item, lines(("generated_items", i)))
    if items.pending:
        conv.trace.metadata["pending_approval"] = items.pending
    for cid in rejected:
        for call in conv.by_id.get(cid, ()):
            if not call.has_result:
                call.has_result = True
                call.ok = False
                call.error = "rejected by the approval"
    responses = state.get("model_responses")
    for i, resp in enumerate(responses if type(responses) is list else ()):
        if type(resp) is not dict:
            continue
        usage = resp.get("usage")
        conv.llm(resp.get("model"), usage if _usage_recorded(usage) else None,
                 lines(("model_responses", i)))
    step = state.get("current_step")
    if type(step) is dict and step.get("type") == "next_step_final_output":
        data = step.get("data")
        out = data.get("output") if type(data) is dict else None
        if out is not None:
            conv.trace.output = out
    conv.report_unmatched()


def _run_header(conv: Conversation, state: dict[str, Any]) -> None:
    """The trace id, workflow, agent and the user's input of a RunState."""
    trace = state.get("trace")
    if type(trace) is dict and trace.get("id"):
        conv.trace.id = str(trace["id"])
        for key in ("workflow_name", "group_id"):
            if trace.get(key) is not None:
                conv.trace.metadata[key] = trace[key]
    agent = state.get("current_agent")
    if type(agent) is dict and agent.get("name") is not None:
        conv.trace.metadata["agent"] = agent["name"]
    original = state.get("original_input")
    if type(original) is str:
        conv.user(original)
    elif type(original) is list:  # earlier turns: only the user's words are taken
        for item in original:
            if type(item) is dict and item.get("role") == "user":
                conv.user(text_of(item.get("content")))


class _RunItems:
    """The ``generated_items`` of a RunState, dispatched on their ``type``."""

    def __init__(self, conv: Conversation, approved: set[str], rejected: set[str]) -> None:
        self.conv = conv
        self.approved = approved
        self.rejected = rejected
        self.pending: list[str] = []  # calls waiting for an approval

    def item(self, item: Any, line: int) -> None:
        if type(item) is not dict:
            self.conv.error(INPUT_INVALID_EVENT, line,
                            f"a run item must be a JSON object, not {json_type(item)}")
            return
        kind = item.get("type")
        raw = item.get("raw_item")
        if not dispatch(self, _RUN_ITEMS, kind, kind, item, raw, line):
            self.conv.ignored += 1

    def call(self, kind: str, item: dict[str, Any], raw: Any, line: int) -> None:
        if type(raw) is not dict:
            return
        responses_item(self.conv, raw, line)
        cid = raw.get("call_id") or raw.get("id")
        if kind == "tool_approval_item" and cid is not None and \
                str(cid) not in self.approved and str(cid) not in self.rejected:
            self.pending.append(str(cid))

    def output(self, kind: str, item: dict[str, Any], raw: Any, line: int) -> None:
        if kind == "handoff_output_item":
            self.handoff(item, line)
        if type(raw) is not dict:
            return
        cid = raw.get("call_id") or raw.get("id")
        value = item["output"] if "output" in item else raw.get("output", raw.get("result"))
        self.conv.result(cid, value, line)

    def handoff(self, item: dict[str, Any], line: int) -> None:
        """A handoff done: control passed from its ``source_agent`` to its
        ``target_agent`` (``sourceAgent`` / ``targetAgent`` in older RunStates), as a
        handoff span says it."""
        def name(*keys: str) -> str | None:
            agent = next((item[k] for k in keys if k in item), None)
            value = agent.get("name") if type(agent) is dict else None
            return value if type(value) is str and value else None

        # the item's agent is the one handed to
        target = name("target_agent", "targetAgent", "agent")
        source = name("source_agent", "sourceAgent")
        self.conv.trace.metadata.setdefault("handoffs", []).append(
            {"from": source, "to": target})
        if target is None:
            self.conv.error(INPUT_INVALID_EVENT, line,
                            "a handoff_output_item without the name of its target_agent: it "
                            "is counted as a handoff to 'unknown'")
        self.conv.trace.handoffs.append(Handoff(target or "unknown",
                                                Location(self.conv.file, line), source))

    def message(self, kind: str, item: dict[str, Any], raw: Any, line: int) -> None:
        if type(raw) is dict:
            self.conv.assistant(text_of(raw.get("content")))

    def silent(self, kind: str, item: dict[str, Any], raw: Any, line: int) -> None:
        """Understood, nothing to take from it."""


_RUN_ITEMS = {
    **dict.fromkeys(("tool_call_item", "handoff_call_item", "tool_approval_item",
                     "mcp_approval_request_item"), _RunItems.call),
    **dict.fromkeys(("tool_call_output_item", "handoff_output_item"), _RunItems.output),
    "message_output_item": _RunItems.message,
    **dict.fromkeys(("reasoning_item", "mcp_list_tools_item", "compaction_item"),
                    _RunItems.silent),
}


# -------------------------------------------------------------------- span exports
class _Spans:
    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.file = source.file
        self.spans: dict[str, list[tuple[float, int, int, dict[str, Any]]]] = {}
        self.traces: dict[str, tuple[dict[str, Any], int]] = {}
        self.errors: list[InputError] = []
        self.ignored = 0
        self.order = 0

    def value(self, obj: Any, lines: Lines, path: JsonPath) -> None:
        if type(obj) is list:
            for i, item in enumerate(obj):
                self.value(item, lines, (*path, i))
            return
        line = lines(path)
        if type(obj) is not dict:
            self.errors.append(INPUT_INVALID_EVENT.input_error(
                self.file, line,
                f"expected a span object, not {json_type(obj)}"))
            return
        kind = obj.get("object")
        if kind is None and type(obj.get("data")) is list:
            self.value(obj["data"], lines, (*path, "data"))
        elif kind == "trace.span" or "span_data" in obj:
            self.order += 1
            tid = _str_id(obj.get("trace_id")) or self.source.trace_id
            start = iso_ms(obj.get("started_at"))
            self.spans.setdefault(tid, []).append(
                (start if start is not None else float("inf"), self.order, line, obj))
        elif kind == "trace":
            tid = _str_id(obj.get("id")) or self.source.trace_id
            self.traces.setdefault(tid, (obj, line))
            self.spans.setdefault(tid, [])
        else:
            self.ignored += 1

    def build(self, tid: str, spans: list[tuple[float, int, int, dict[str, Any]]]) -> Trace:
        spans.sort(key=lambda s: (s[0], s[1]))
        head = self.traces.get(tid)
        lines = [s[2] for s in spans] + ([head[1]] if head else [])
        lo, hi = (min(lines), max(lines)) if lines else (1, 1)
        trace = Trace(id=tid, source=self.file, location=Location(self.file, lo),
                      end_location=Location(self.file, hi), format="openai_agents",
                      handoffs_recorded=True)  # the SDK traces each handoff as a span
        if head is not None:
            for k in ("workflow_name", "group_id"):
                if head[0].get(k) is not None:
                    trace.metadata[k] = head[0][k]
            if type(head[0].get("metadata")) is dict:
                trace.metadata.update(head[0]["metadata"])
        t0 = t1 = None
        for start, _, line, span in spans:
            end = iso_ms(span.get("ended_at"))
            if start != float("inf"):
                t0 = start if t0 is None else min(t0, start)
            if end is not None:
                t1 = end if t1 is None else max(t1, end)
            latency = None if end is None or start == float("inf") else end - start
            data = span.get("span_data")
            if type(data) is dict:
                dispatch(_SpanData(trace, span, Location(self.file, line), latency),
                         _SPAN_DATA, data.get("type"), data)
        if t0 is not None and t1 is not None:
            trace.duration_ms = t1 - t0
        return trace


class _SpanData:
    """One exported span's ``span_data``, dispatched on its ``type``."""

    def __init__(self, trace: Trace, span: dict[str, Any], loc: Location,
                 latency: float | None) -> None:
        self.trace = trace
        self.span = span
        self.loc = loc
        self.latency = latency

    def function(self, data: dict[str, Any]) -> None:
        self.trace.tool_calls.append(_function_call(data, self.span.get("error"), self.loc,
                                                    self.latency))

    def model(self, data: dict[str, Any]) -> None:
        trace = self.trace
        i, o, total = usage_counts(data.get("usage"))
        model = data.get("model")
        trace.llm_calls.append(LlmCall(
            location=self.loc, model=None if model is None else str(model),
            input_tokens=i, output_tokens=o, total_tokens=total, latency_ms=self.latency))
        if data.get("type") == "generation":
            text = _last_assistant_text(data.get("output"))
            if text is not None:
                trace.output = text
            if trace.input is None:
                trace.input = _first_user_text(data.get("input"))

    def agent(self, data: dict[str, Any]) -> None:
        if data.get("name") is not None:
            agents = self.trace.metadata.setdefault("agents", [])
            if data["name"] not in agents:
                agents.append(data["name"])

    def handoff(self, data: dict[str, Any]) -> None:
        trace = self.trace
        trace.metadata.setdefault("handoffs", []).append(
            {"from": data.get("from_agent"), "to": data.get("to_agent")})
        if isinstance(data.get("to_agent"), str):
            source = data.get("from_agent")
            trace.handoffs.append(Handoff(data["to_agent"], self.loc,
                                          source if isinstance(source, str) else None))

    def guardrail(self, data: dict[str, Any]) -> None:
        if data.get("triggered"):
            self.trace.metadata.setdefault("guardrails_triggered", []).append(
                data.get("name"))


_SPAN_DATA = {"function": _SpanData.function, "generation": _SpanData.model,
              "response": _SpanData.model, "agent": _SpanData.agent,
              "handoff": _SpanData.handoff, "guardrail": _SpanData.guardrail}


def _function_call(data: dict[str, Any], error: Any, loc: Location,
                   latency: float | None) -> ToolCall:
    args, why = decode_arguments(data.get("input"))
    message = None
    if type(error) is dict:
        detail = error.get("data")
        inner = detail.get("error") if type(detail) is dict else None
        message = inner if type(inner) is str and inner else error.get("message")
        message = str(message) if message else "error"
    elif error:
        message = str(error)
    output = data.get("output")
    has_result = output is not None or message is not None
    recorded = data.get("input") is not None  # absent without trace_include_sensitive_data
    return ToolCall(name=str(data.get("name") or "unknown"),
                    arguments=args if recorded else None, location=loc,
                    result=output, error=message, ok=message is None, latency_ms=latency,
                    result_location=loc if has_result else None, arguments_error=why,
                    has_result=has_result, arguments_recorded=recorded)


def _last_assistant_text(messages: Any) -> str | None:
    if type(messages) is not list:
        return None
    for m in reversed(messages):
        if type(m) is dict and m.get("role") in ("assistant", None):
            t = text_of(m.get("content"))
            if t:
                return t
    return None


def _first_user_text(messages: Any) -> str | None:
    if type(messages) is not list:
        return None
    for m in messages:
        if type(m) is dict and m.get("role") == "user":
            return text_of(m.get("content"))
    return None


# -------------------------------------------------------------------------- reader
class AgentsReader:
    name = "openai_agents"

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return sniffs.openai_agents(head, source)

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        try:
            docs, errors = load_file(source)
        except OSError as exc:
            yield INPUT_UNREADABLE_FILE.input_error(source.file, 0,
                                                    f"cannot read the file: {exc}")
            return
        yield from errors
        if len(docs) == 1 and type(docs[0][0]) is dict and (
                "$schemaVersion" in docs[0][0] or "generated_items" in docs[0][0]):
            doc, lines = docs[0]
            conv = Conversation(source, self.name, lines(()))
            read_run_state(conv, doc, lines)
            yield from conv.finish()
            return
        spans = _Spans(source)
        for obj, lines in docs:
            spans.value(obj, lines, ())
        if not spans.spans and not spans.errors and not errors:
            spans.errors.append(INPUT_INVALID_EVENT.input_error(
                source.file, 0,
                "the file holds no Agents SDK run state or trace spans"))
        yield from spans.errors
        for tid, items in spans.spans.items():
            yield spans.build(tid, items)
        if spans.ignored:
            yield IgnoredEvents(source.file, spans.ignored)


READER = AgentsReader()
