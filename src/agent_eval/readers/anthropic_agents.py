"""Anthropic Managed Agents session logs (docs/formats/anthropic_agents.md).

JSON lines recorded from the SDK's ``client.beta.sessions`` calls, each
``["<method>", <payload>]``: ``client.beta.sessions.create`` (the session and its agent),
``...events.send`` (what the client sent) and ``...events.stream`` (one session event
each). The streamed events are read: ``agent.custom_tool_use`` / ``agent.tool_use`` /
``agent.mcp_tool_use`` are tool calls, ``user.custom_tool_result`` / ``agent.tool_result``
/ ``agent.mcp_tool_result`` their results, ``span.model_request_end`` an LLM call.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agent_eval.errors import InputError
from agent_eval.model import LlmCall, Location, ToolCall, Trace
from agent_eval.readers import sniffs
from agent_eval.readers._foreign import (
    add,
    as_dict,
    count,
    iter_lines,
    set_result,
    span_ms,
    text_of,
)
from agent_eval.readers.base import SourceFile
from agent_eval.readers.skeleton import EventReader, OneTrace, dispatch, named

NAME = "anthropic_agents"
_TOOL_USE = ("agent.custom_tool_use", "agent.tool_use", "agent.mcp_tool_use")
_RESULT_IDS = {"user.custom_tool_result": "custom_tool_use_id",
               "agent.tool_result": "tool_use_id",
               "agent.mcp_tool_result": "mcp_tool_use_id"}


# the events understood and skipped: status changes, thinking, the client's interrupts and
# tool confirmations, messages between an agent's threads (a sub-agent's calls are events
# of their own); any other type is counted as unknown
_STATUS = ("session.status_", "session.thread_status_", "agent.thinking",
           "agent.thread_message_", "user.interrupt", "user.tool_confirmation")


class _State(OneTrace):
    fmt = NAME

    def __init__(self, source: SourceFile) -> None:
        super().__init__(source)
        self.model: str | None = None
        self.calls: dict[str, tuple[ToolCall, Any]] = {}
        self.starts: dict[str, Any] = {}

    def record(self, value: Any, line: int) -> None:
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)):
            self.invalid(line, 'a record must be ["<method>", <payload>]')
            return
        method, payload = value
        trace = self.current(line)
        if method == "client.beta.sessions.create":
            session = as_dict(payload)
            model = as_dict(as_dict(session.get("agent")).get("model")).get("id")
            self.model = model if isinstance(model, str) else None
            if isinstance(session.get("id"), str):
                trace.metadata["session_id"] = session["id"]
        elif method == "client.beta.sessions.events.stream":
            self.event(trace, payload, line)
        elif method != "client.beta.sessions.events.send":
            self.unknown += 1

    def event(self, trace: Trace, ev: Any, line: int) -> None:
        if not isinstance(ev, dict):
            self.invalid(line, "a streamed session event must be a JSON object")
            return
        kind = ev.get("type")
        ts = ev.get("processed_at")
        self.stamp(ts)
        if dispatch(self, _HANDLERS, kind, trace, ev, line, ts):
            return
        if isinstance(kind, str) and kind.endswith("tool_use") and "name" in ev:
            # a tool use of a type this reader does not know (agent.server_tool_use, a
            # newer one): read as a call, and said, never passed over
            self.invalid(line, f"an event of type {kind!r}, which this reader does not "
                               "know, names a tool: it is read as a tool call")
            self.tool_use(trace, ev, line, ts)
        elif not (isinstance(kind, str) and kind.startswith(_STATUS)):
            self.unknown += 1  # counted in the run's summary: not silently passed over

    def user_message(self, trace: Trace, ev: dict[str, Any], line: int, ts: Any) -> None:
        text = text_of(ev.get("content"))
        if trace.input is None and text is not None:
            trace.input = text

    def agent_message(self, trace: Trace, ev: dict[str, Any], line: int, ts: Any) -> None:
        text = text_of(ev.get("content"))
        if text:
            trace.output = text

    def tool_use(self, trace: Trace, ev: dict[str, Any], line: int, ts: Any) -> None:
        name = named(ev.get("name"))
        if name is None:
            self.invalid(line, f"an {ev['type']} event without a name")
            return
        call = self.tool_call(trace, name, ev.get("input"), ev.get("id"), line)
        if call.id is not None:
            self.calls[call.id] = (call, ts)

    def tool_result(self, trace: Trace, ev: dict[str, Any], line: int, ts: Any) -> None:
        kind = ev["type"]
        found = self.calls.get(str(ev.get(_RESULT_IDS[kind])))
        if found is None:
            self.unmatched(line, f"a {kind} event whose {_RESULT_IDS[kind]} matches no "
                                 "earlier tool use")
            return
        call, start = found
        content = ev.get("content")
        text = text_of(content)
        failed = ev.get("is_error") is True
        set_result(call, text if text is not None else content, text if failed else None,
                   not failed, Location(self.file, line))
        call.latency_ms = span_ms(start, ts)

    def request_start(self, trace: Trace, ev: dict[str, Any], line: int, ts: Any) -> None:
        if isinstance(ev.get("id"), str):
            self.starts[ev["id"]] = ts

    def request_end(self, trace: Trace, ev: dict[str, Any], line: int, ts: Any) -> None:
        usage = as_dict(ev.get("model_usage"))
        rest = count(usage.get("input_tokens"))
        read = count(usage.get("cache_read_input_tokens"))
        write = count(usage.get("cache_creation_input_tokens"))
        inp = add(rest, read or 0, write or 0) if rest is not None else None
        out = count(usage.get("output_tokens"))
        trace.llm_calls.append(LlmCall(
            location=Location(self.file, line), model=self.model, input_tokens=inp,
            output_tokens=out, total_tokens=add(inp, out),
            latency_ms=span_ms(self.starts.get(str(ev.get("model_request_start_id"))), ts)))

    def session_error(self, trace: Trace, ev: dict[str, Any], line: int, ts: Any) -> None:
        message = as_dict(ev.get("error")).get("message")
        trace.metadata.setdefault("errors", []).append(
            message if isinstance(message, str) else "session error")


_HANDLERS = {
    "user.message": _State.user_message,
    "agent.message": _State.agent_message,
    **dict.fromkeys(_TOOL_USE, _State.tool_use),
    **dict.fromkeys(_RESULT_IDS, _State.tool_result),
    "span.model_request_start": _State.request_start,
    "span.model_request_end": _State.request_end,
    "session.error": _State.session_error,
}


class AnthropicAgentsReader(EventReader):
    name = NAME
    marks = sniffs.ANTHROPIC_AGENTS
    state = _State
    empty = "no client.beta.sessions record in this file"

    def records(self, source: SourceFile) -> Iterator[tuple[int, Any] | InputError]:
        return iter_lines(source)


READER = AnthropicAgentsReader()
