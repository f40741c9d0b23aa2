"""Anthropic Managed Agents session logs (docs/formats/anthropic_agents.md).

JSON lines recorded from the SDK's ``client.beta.sessions`` calls, each
``["<method>", <payload>]``: ``client.beta.sessions.create`` (the session and its agent),
``...events.send`` (what the client sent) and ``...events.stream`` (one session event
each). The streamed events are read: ``agent.custom_tool_use`` / ``agent.tool_use`` /
``agent.mcp_tool_use`` are tool calls, ``user.custom_tool_result`` / ``agent.tool_result``
/ ``agent.mcp_tool_result`` their results, ``span.model_request_end`` an LLM call.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from agent_eval.errors import InputError
from agent_eval.model import LlmCall, Location, ToolCall, Trace
from agent_eval.readers._foreign import (
    add,
    as_dict,
    count,
    head_text,
    is_native,
    iter_lines,
    new_trace,
    set_result,
    span_ms,
    text_of,
    touch,
)
from agent_eval.readers.base import IgnoredEvents, ReadItem, SourceFile
from agent_eval.readers.native import decode_arguments

NAME = "anthropic_agents"
_METHOD = re.compile(r'^\s*\[\s*"client\.beta\.sessions\.', re.M)
_TOOL_USE = ("agent.custom_tool_use", "agent.tool_use", "agent.mcp_tool_use")
_RESULT_IDS = {"user.custom_tool_result": "custom_tool_use_id",
               "agent.tool_result": "tool_use_id",
               "agent.mcp_tool_result": "mcp_tool_use_id"}


class _State:
    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.file = source.file
        self.trace: Trace | None = None
        self.model: str | None = None
        self.calls: dict[str, tuple[ToolCall, Any]] = {}
        self.starts: dict[str, Any] = {}
        self.errors: list[InputError] = []
        self.unknown = 0
        self.first_ts: Any = None
        self.last_ts: Any = None

    def current(self, line: int) -> Trace:
        if self.trace is None:
            self.trace = new_trace(self.source.trace_id, self.source, line, NAME)
        touch(self.trace, line)
        return self.trace

    def record(self, value: Any, line: int) -> None:
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)):
            self.errors.append(InputError("input/invalid_event", self.file, line,
                                          'a record must be ["<method>", <payload>]'))
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
            self.errors.append(InputError("input/invalid_event", self.file, line,
                                          "a streamed session event must be a JSON object"))
            return
        kind = ev.get("type")
        ts = ev.get("processed_at")
        if ts is not None:
            self.first_ts = ts if self.first_ts is None else self.first_ts
            self.last_ts = ts
        loc = Location(self.file, line)
        if kind == "user.message":
            text = text_of(ev.get("content"))
            if trace.input is None and text is not None:
                trace.input = text
        elif kind == "agent.message":
            text = text_of(ev.get("content"))
            if text:
                trace.output = text
        elif kind in _TOOL_USE:
            name = ev.get("name")
            if not isinstance(name, str) or not name:
                self.errors.append(InputError("input/invalid_event", self.file, line,
                                              f"an {kind} event without a name"))
                return
            args, why = decode_arguments(ev.get("input"))
            cid = ev.get("id")
            call = ToolCall(name=name, arguments=args, location=loc,
                            id=cid if isinstance(cid, str) else None, arguments_error=why)
            trace.tool_calls.append(call)
            if call.id is not None:
                self.calls[call.id] = (call, ts)
        elif kind in _RESULT_IDS:
            found = self.calls.get(str(ev.get(_RESULT_IDS[kind])))
            if found is None:
                self.errors.append(InputError(
                    "input/unmatched_result", self.file, line,
                    f"a {kind} event whose {_RESULT_IDS[kind]} matches no earlier tool use"))
                return
            call, start = found
            content = ev.get("content")
            text = text_of(content)
            failed = ev.get("is_error") is True
            set_result(call, text if text is not None else content, text if failed else None,
                       not failed, loc)
            call.latency_ms = span_ms(start, ts)
        elif kind == "span.model_request_start":
            if isinstance(ev.get("id"), str):
                self.starts[ev["id"]] = ts
        elif kind == "span.model_request_end":
            usage = as_dict(ev.get("model_usage"))
            rest = count(usage.get("input_tokens"))
            read = count(usage.get("cache_read_input_tokens"))
            write = count(usage.get("cache_creation_input_tokens"))
            inp = add(rest, read or 0, write or 0) if rest is not None else None
            out = count(usage.get("output_tokens"))
            trace.llm_calls.append(LlmCall(
                location=loc, model=self.model, input_tokens=inp, output_tokens=out,
                total_tokens=add(inp, out),
                latency_ms=span_ms(self.starts.get(str(ev.get("model_request_start_id"))), ts)))
        elif kind == "session.error":
            err = as_dict(ev.get("error"))
            message = err.get("message")
            trace.metadata.setdefault("errors", []).append(
                message if isinstance(message, str) else "session error")
        elif not (isinstance(kind, str) and kind.startswith(("session.", "span.", "agent.",
                                                              "user."))):
            self.unknown += 1


class AnthropicAgentsReader:
    name = NAME

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return not is_native(head, source) and _METHOD.search(head_text(head)) is not None

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        state = _State(source)
        for item in iter_lines(source):
            if isinstance(item, InputError):
                yield item
            else:
                state.record(item[1], item[0])
        yield from state.errors
        if state.trace is not None:
            state.trace.duration_ms = span_ms(state.first_ts, state.last_ts)
            yield state.trace
        elif not state.errors:
            yield InputError("input/invalid_event", source.file, 1,
                             "no client.beta.sessions record in this file")
        if state.unknown:
            yield IgnoredEvents(source.file, state.unknown)


READER = AnthropicAgentsReader()
