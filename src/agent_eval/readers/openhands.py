"""OpenHands (agent SDK) event logs (docs/formats/openhands.md).

A JSON array (or JSON lines) of events with a ``kind``: ``MessageEvent`` (user / agent
text), ``ActionEvent`` (a tool call), ``ObservationEvent`` (its result, by
``action_id``), ``UserRejectObservation`` and ``AgentErrorEvent`` (a failed call).
"""

from __future__ import annotations

from typing import Any

from agent_eval.model import Location, ToolCall, Trace
from agent_eval.readers import sniffs
from agent_eval.readers._foreign import as_dict, set_result, span_ms, text_of
from agent_eval.readers.base import SourceFile
from agent_eval.readers.skeleton import EventReader, OneTrace, dispatch, named

NAME = "openhands"
_KNOWN = {"MessageEvent", "ActionEvent", "ObservationEvent", "UserRejectObservation",
          "AgentErrorEvent", "SystemPromptEvent", "PauseEvent", "ConversationStateUpdateEvent",
          "Condensation", "CondensationRequest"}


class _State(OneTrace):
    fmt = NAME

    def __init__(self, source: SourceFile) -> None:
        super().__init__(source)
        self.by_event: dict[str, tuple[ToolCall, Any]] = {}
        self.by_call: dict[str, tuple[ToolCall, Any]] = {}

    def record(self, value: Any, line: int) -> None:
        if not isinstance(value, dict):
            self.invalid(line, "an OpenHands event must be a JSON object")
            return
        kind = value.get("kind")
        if self.bad_kind(kind, line, "an OpenHands event's kind"):
            return
        if kind not in _KNOWN:
            self.ignore(value, line, NAME)
            return
        trace = self.current(line)
        ts = value.get("timestamp")
        self.stamp(ts)
        dispatch(self, _HANDLERS, kind, trace, value, line, ts)

    def message(self, trace: Trace, ev: dict[str, Any], line: int, ts: Any) -> None:
        msg = as_dict(ev.get("llm_message"))
        text = text_of(msg.get("content"))
        if text is None:
            return
        if ev.get("source") == "user" or msg.get("role") == "user":
            if trace.input is None:
                trace.input = text
        elif ev.get("source") == "agent" or msg.get("role") == "assistant":
            trace.output = text

    def action(self, trace: Trace, ev: dict[str, Any], line: int, ts: Any) -> None:
        tool_call = as_dict(ev.get("tool_call"))
        name = named(ev.get("tool_name", tool_call.get("name")))
        if name is None:
            self.invalid(line, "an ActionEvent without tool_name")
            return
        if "arguments" in tool_call:
            raw: Any = tool_call["arguments"]
        else:
            raw = {k: v for k, v in as_dict(ev.get("action")).items() if k != "kind"}
        call = self.tool_call(trace, name, raw, ev.get("tool_call_id", tool_call.get("id")),
                              line)
        if name == "finish":
            # the finish tool's message is the agent's answer to the user (the SDK's
            # get_agent_final_response): the latest answer, as an agent MessageEvent's
            action = as_dict(ev.get("action"))
            message = action.get("message") if "message" in action else as_dict(
                call.arguments).get("message")
            if isinstance(message, str) and message:
                trace.output = message
        eid = ev.get("id")
        if isinstance(eid, str):
            self.by_event[eid] = (call, ts)
        if call.id is not None:
            self.by_call[call.id] = (call, ts)

    def observation(self, trace: Trace, ev: dict[str, Any], line: int, ts: Any) -> None:
        kind = ev["kind"]
        found = self.by_event.get(str(ev.get("action_id")))
        if found is None:
            found = self.by_call.get(str(ev.get("tool_call_id")))
        if found is None:
            self.unmatched(line, f"an OpenHands {kind} whose action_id / tool_call_id "
                                 "matches no ActionEvent")
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


_HANDLERS = {"MessageEvent": _State.message, "ActionEvent": _State.action,
             "ObservationEvent": _State.observation,
             "UserRejectObservation": _State.observation,
             "AgentErrorEvent": _State.observation}


class OpenHandsReader(EventReader):
    name = NAME
    marks = sniffs.OPENHANDS
    key = "events"
    state = _State
    empty = "no OpenHands event in this file"


READER = OpenHandsReader()
