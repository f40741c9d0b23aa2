"""OpenHands (agent SDK) event logs (docs/formats/openhands.md).

A JSON array (or JSON lines) of events with a ``kind``: ``MessageEvent`` (user / agent
text), ``ActionEvent`` (a tool call), ``ObservationEvent`` (its result, by
``action_id``), ``UserRejectObservation`` and ``AgentErrorEvent`` (a failed call).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from agent_eval.errors import InputError
from agent_eval.model import Location, ToolCall, Trace
from agent_eval.readers._foreign import (
    as_dict,
    head_text,
    is_native,
    new_trace,
    records,
    set_result,
    span_ms,
    text_of,
    touch,
)
from agent_eval.readers.base import IgnoredEvents, ReadItem, SourceFile
from agent_eval.readers.native import decode_arguments

NAME = "openhands"
_KIND = re.compile(r'"kind"\s*:\s*"(?:MessageEvent|ActionEvent|ObservationEvent)"')
_KNOWN = {"MessageEvent", "ActionEvent", "ObservationEvent", "UserRejectObservation",
          "AgentErrorEvent", "SystemPromptEvent", "PauseEvent", "ConversationStateUpdateEvent",
          "Condensation", "CondensationRequest"}


class _State:
    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.file = source.file
        self.trace: Trace | None = None
        self.by_event: dict[str, tuple[ToolCall, Any]] = {}
        self.by_call: dict[str, tuple[ToolCall, Any]] = {}
        self.errors: list[InputError] = []
        self.unknown = 0
        self.first_ts: Any = None
        self.last_ts: Any = None

    def event(self, ev: Any, line: int) -> None:
        if not isinstance(ev, dict):
            self.errors.append(InputError("input/invalid_event", self.file, line,
                                          "an OpenHands event must be a JSON object"))
            return
        kind = ev.get("kind")
        if kind not in _KNOWN:
            self.unknown += 1
            return
        if self.trace is None:
            self.trace = new_trace(self.source.trace_id, self.source, line, NAME)
        trace = self.trace
        touch(trace, line)
        ts = ev.get("timestamp")
        if ts is not None:
            self.first_ts = ts if self.first_ts is None else self.first_ts
            self.last_ts = ts
        if kind == "MessageEvent":
            msg = as_dict(ev.get("llm_message"))
            text = text_of(msg.get("content"))
            if text is None:
                return
            if ev.get("source") == "user" or msg.get("role") == "user":
                if trace.input is None:
                    trace.input = text
            elif ev.get("source") == "agent" or msg.get("role") == "assistant":
                trace.output = text
        elif kind == "ActionEvent":
            self.action(trace, ev, line, ts)
        elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            self.observation(kind, ev, line, ts)

    def action(self, trace: Trace, ev: dict[str, Any], line: int, ts: Any) -> None:
        tool_call = as_dict(ev.get("tool_call"))
        name = ev.get("tool_name", tool_call.get("name"))
        if not isinstance(name, str) or not name:
            self.errors.append(InputError("input/invalid_event", self.file, line,
                                          "an ActionEvent without tool_name"))
            return
        if "arguments" in tool_call:
            raw: Any = tool_call["arguments"]
        else:
            raw = {k: v for k, v in as_dict(ev.get("action")).items() if k != "kind"}
        args, why = decode_arguments(raw)
        cid = ev.get("tool_call_id", tool_call.get("id"))
        call = ToolCall(name=name, arguments=args, location=Location(self.file, line),
                        id=cid if isinstance(cid, str) else None, arguments_error=why)
        trace.tool_calls.append(call)
        eid = ev.get("id")
        if isinstance(eid, str):
            self.by_event[eid] = (call, ts)
        if call.id is not None:
            self.by_call[call.id] = (call, ts)

    def observation(self, kind: str, ev: dict[str, Any], line: int, ts: Any) -> None:
        found = self.by_event.get(str(ev.get("action_id")))
        if found is None:
            found = self.by_call.get(str(ev.get("tool_call_id")))
        if found is None:
            self.errors.append(InputError(
                "input/unmatched_result", self.file, line,
                f"an OpenHands {kind} whose action_id / tool_call_id matches no ActionEvent"))
            return
        call, start = found
        loc = Location(self.file, line)
        if kind == "ObservationEvent":
            obs = as_dict(ev.get("observation"))
            content = obs.get("content")
            text = text_of(content)
            value = text if text is not None else content
            failed = obs.get("is_error") is True
            set_result(call, value, text if failed else None, not failed, loc)
        elif kind == "UserRejectObservation":
            reason = ev.get("rejection_reason")
            set_result(call, None, f"rejected: {reason}" if reason else "rejected", False, loc)
        else:
            err = ev.get("error")
            set_result(call, None, str(err) if err is not None else "error", False, loc)
        latency = span_ms(start, ts)
        if latency is not None:
            call.latency_ms = latency


class OpenHandsReader:
    name = NAME

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return not is_native(head, source) and _KIND.search(head_text(head)) is not None

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        state = _State(source)
        for item in records(source, "events"):
            if isinstance(item, InputError):
                yield item
            else:
                state.event(item[1], item[0])
        yield from state.errors
        if state.trace is not None:
            state.trace.duration_ms = span_ms(state.first_ts, state.last_ts)
            yield state.trace
        elif not state.errors:
            yield InputError("input/invalid_event", source.file, 1,
                             "no OpenHands event in this file")
        if state.unknown:
            yield IgnoredEvents(source.file, state.unknown)


READER = OpenHandsReader()
