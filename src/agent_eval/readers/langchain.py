"""LangChain / LangGraph serialized messages (docs/formats/langchain.md).

A message list in any of LangChain's serializations (``dumpd`` constructor objects
``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": ...}``,
``messages_to_dict`` ``{"type": "ai", "data": ...}``, or ``model_dump`` dicts), a
LangGraph state ``{"messages": [...]}``, or a LangGraph ``stream`` recording (a list of
``[mode, payload]`` events: the last ``values`` event holds the whole conversation;
without one, ``messages`` chunks are merged by message id and ``updates`` appended).
LangSmith runs are read by :mod:`agent_eval.readers.langsmith`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agent_eval.errors import InputError
from agent_eval.jsonutil import json_type
from agent_eval.model import LlmCall, Location, ToolCall, Trace
from agent_eval.readers import sniffs
from agent_eval.readers._foreign import (
    new_trace,
    set_result,
    text_of,
    token_counts,
    touch,
)
from agent_eval.readers._langgraph import node_transitions
from agent_eval.readers.base import (
    CallIndex,
    IgnoredEvents,
    ReadItem,
    SourceFile,
    native_event,
    reused_call_id,
)
from agent_eval.readers.native import decode_arguments
from agent_eval.readers.skeleton import LineAt, feed
from agent_eval.rule_ids import INPUT_INVALID_EVENT

_CLASSES = {
    "HumanMessage": "human", "HumanMessageChunk": "human",
    "AIMessage": "ai", "AIMessageChunk": "ai",
    "ToolMessage": "tool", "ToolMessageChunk": "tool",
    "SystemMessage": "system", "SystemMessageChunk": "system",
    "FunctionMessage": "function", "FunctionMessageChunk": "function",
    "ChatMessage": "chat", "ChatMessageChunk": "chat", "RemoveMessage": "remove",
}
_TYPES = {"human": "human", "ai": "ai", "tool": "tool", "system": "system",
          "function": "function", "chat": "chat", "remove": "remove", **_CLASSES}


def message_parts(msg: Any) -> tuple[str, dict[str, Any], tuple[str, ...]] | None:
    """(kind, fields, path of the fields below the message) of a serialized message."""
    if not isinstance(msg, dict):
        return None
    ident = msg.get("id")
    if msg.get("lc") == 1 and msg.get("type") == "constructor" and isinstance(ident, list):
        kind = _CLASSES.get(str(ident[-1]) if ident else "")
        kwargs = msg.get("kwargs")
        if kind is None or not isinstance(kwargs, dict):
            return None
        return kind, kwargs, ("kwargs",)
    t = msg.get("type")
    if not isinstance(t, str) or t not in _TYPES:
        return None
    data = msg.get("data")
    if isinstance(data, dict):
        return _TYPES[t], data, ("data",)
    if "content" in msg:
        return _TYPES[t], msg, ()
    return None


def model_name(meta: Any) -> str | None:
    if not isinstance(meta, dict):
        return None
    # model_name first: merged stream chunks concatenate "model" (seen in the wild)
    for key in ("model_name", "model", "model_id"):
        if isinstance(meta.get(key), str) and meta[key]:
            return str(meta[key])
    return None


def _usage(fields: dict[str, Any]) -> tuple[int | None, int | None, int | None]:
    um = fields.get("usage_metadata")
    if isinstance(um, dict):
        return token_counts(um, ("input_tokens", "input_tokens"),
                            ("output_tokens", "output_tokens"))
    meta = fields.get("response_metadata")
    if isinstance(meta, dict):
        for key in ("token_usage", "usage"):
            u = meta.get(key)
            if isinstance(u, dict):
                return token_counts(u, ("prompt_tokens", "input_tokens"),
                                    ("completion_tokens", "output_tokens"))
    return None, None, None


class _Conv:
    """One trace from LangChain messages, in order."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.file = trace.source
        self.calls = CallIndex()  # call id -> its calls
        # call id -> the call seen again after the latest call with that id
        self.replayed: dict[str, ToolCall] = {}
        self.has_input = False
        self.messages = 0
        self.errors: list[InputError] = []  # values of a type the format does not allow

    def loc(self, line: int) -> Location:
        touch(self.trace, line)
        return Location(self.file, line)

    def message(self, msg: Any, at: LineAt, *path: str | int) -> bool:
        parts = message_parts(msg)
        if parts is None:
            return False
        self.messages += 1
        kind, fields, sub = parts
        line = at(*path)
        touch(self.trace, line)

        def field_line(*more: str | int) -> int:
            return at(*path, *sub, *more)

        if kind == "human":
            text = text_of(fields.get("content"))
            if not self.has_input:
                self.trace.input = text if text is not None else fields.get("content")
                self.has_input = True
        elif kind == "ai":
            self.ai(fields, line, field_line)
        elif kind in ("tool", "function"):
            self.tool(fields, line)
        return True

    def add_call(self, name: Any, raw: Any, cid: Any, line: int) -> ToolCall | None:
        """A call; None without a name, or when it repeats a call with its id, name and
        arguments. Another call under a known id is a call of its own, and said."""
        key = None if cid is None else str(cid)
        if not isinstance(name, str) or not name:
            return None
        args, why = decode_arguments(raw)
        first = self.calls.first(key) if key is not None else None
        if key is not None and first is not None:
            same = self.calls.same(key, name, args, why)
            if same is not None:
                self.replayed[key] = same
                return None
            self.errors.append(reused_call_id(key, first, self.file, line))
        return self.new_call(name, args, why, key, line)

    def new_call(self, name: str, args: Any, why: str | None, key: str | None,
                 line: int) -> ToolCall:
        call = ToolCall(name=name, arguments=args, location=self.loc(line), id=key,
                        arguments_error=why)
        self.trace.tool_calls.append(call)
        if key is not None:
            self.calls.add(key, call)
            if self.replayed:
                self.replayed.pop(key, None)
        return call

    def ai(self, fields: dict[str, Any], line: int, field_line: LineAt) -> None:
        tool_calls = fields.get("tool_calls")
        raw: Any = None
        if isinstance(tool_calls, list) and tool_calls:
            for j, tc in enumerate(tool_calls):
                if isinstance(tc, dict):
                    self.add_call(tc.get("name"), tc.get("args"), tc.get("id"),
                                  field_line("tool_calls", j))
        else:  # older messages: the provider's raw calls in additional_kwargs
            extra = fields.get("additional_kwargs")
            raw = extra.get("tool_calls") if isinstance(extra, dict) else None
            for j, tc in enumerate(raw if isinstance(raw, list) else []):
                fn = tc.get("function") if isinstance(tc, dict) else None
                if isinstance(fn, dict):
                    self.add_call(fn.get("name"), fn.get("arguments"), tc.get("id"),
                                  field_line("additional_kwargs", "tool_calls", j))
        invalid = fields.get("invalid_tool_calls")
        for j, tc in enumerate(invalid if isinstance(invalid, list) else []):
            if isinstance(tc, dict):
                call = self.add_call(tc.get("name"), tc.get("args"), tc.get("id"),
                                     field_line("invalid_tool_calls", j))
                if call is not None:
                    call.ok = False
                    err = tc.get("error")
                    call.error = str(err) if err else "invalid tool call (not executed)"
        content = fields.get("content")
        if isinstance(content, list):  # Anthropic models: tool_use blocks in the content
            listed = tool_calls if isinstance(tool_calls, list) and tool_calls else raw
            for j, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "tool_use" and not (
                        isinstance(listed, list) and _lists_id(listed, block.get("id"))):
                    self.add_call(block.get("name"), block.get("input"), block.get("id"),
                                  field_line("content", j))
        text = text_of(content)
        if text:
            self.trace.output = text
        i, o, t = _usage(fields)
        self.trace.llm_calls.append(LlmCall(
            location=self.loc(line), model=model_name(fields.get("response_metadata")),
            input_tokens=i, output_tokens=o, total_tokens=t))

    def tool(self, fields: dict[str, Any], line: int) -> None:
        """A result: of the earliest call with its ``tool_call_id`` that has none. One that
        repeats a result (of the call with that id seen last, or of any when none is open)
        is the same message again; one for no open call proves a call of its own."""
        cid = fields.get("tool_call_id")
        key = None if cid is None else str(cid)
        content = fields.get("content")
        text = text_of(content)
        result = text if text is not None and isinstance(content, str | list) else content
        last = (self.replayed.get(key) or self.calls.last(key)) if key is not None else None
        call = None
        if key is not None and last is not None:
            if last.has_result and last.result == result:
                return
            call = self.calls.open(key)
            if call is None:
                if self.calls.has_result(key, result):
                    return
                self.errors.append(INPUT_INVALID_EVENT.input_error(
                    self.file, line,
                    f"a tool message for tool_call_id '{key}' with another result than the "
                    f"call at line {last.location.line}, which already has one: it is "
                    "read as a call of its own; give each call its own id"))
        if call is None:  # the result names its tool: keep the call it proves
            name = fields.get("name")
            call = self.new_call(name if isinstance(name, str) and name else "unknown",
                                 None, None, key, line)
            call.arguments_recorded = False
        ok = fields.get("status") != "error"
        set_result(call, result, None, ok, self.loc(line))


def _lists_id(tool_calls: list[Any], cid: Any) -> bool:
    """True when a message's ``tool_calls`` hold a call with the id ``cid``."""
    return cid is not None and any(isinstance(tc, dict) and tc.get("id") == cid
                                   for tc in tool_calls)


# ---------------------------------------------------------------- stream merging
def _is_event(item: Any) -> bool:
    return (isinstance(item, list) and len(item) in (2, 3) and isinstance(item[-2], str)
            and (len(item) == 2 or isinstance(item[0], str | list)))


class _Merged:
    """A message put together from stream chunks with the same id."""

    def __init__(self, msg: dict[str, Any], path: tuple[str | int, ...]) -> None:
        parts = message_parts(msg)
        assert parts is not None
        self.kind, fields, _ = parts
        self.path = path
        self.fields: dict[str, Any] = dict(fields)
        self.text: list[str] = []
        self.chunks: dict[int, dict[str, Any]] = {}

    def absorb(self, fields: dict[str, Any]) -> str | None:
        """The chunk's fields merged in; what is wrong with them (an input error), if
        anything."""
        text = text_of(fields.get("content"))
        if text:
            self.text.append(text)
        for k, v in fields.items():
            if k in ("usage_metadata", "response_metadata", "tool_calls") and v:
                if isinstance(v, dict) and isinstance(self.fields.get(k), dict):
                    self.fields[k] = {**self.fields[k], **v}
                else:
                    self.fields[k] = v
        chunks = fields.get("tool_call_chunks")
        if chunks is not None and not isinstance(chunks, list):
            return (f"a message chunk's tool_call_chunks must be an array, not "
                    f"{json_type(chunks)}; they were not read")
        for tc in chunks or []:
            if not isinstance(tc, dict):
                continue
            idx = tc.get("index")
            key = idx if isinstance(idx, int) else len(self.chunks)
            have = self.chunks.setdefault(key, {"name": None, "id": None, "args": ""})
            for f in ("name", "id"):
                if tc.get(f) and not have[f]:
                    have[f] = tc[f]
            if isinstance(tc.get("args"), str):
                have["args"] += tc["args"]
        return None

    def message(self) -> dict[str, Any]:
        fields = dict(self.fields)
        fields["content"] = "".join(self.text)
        if not fields.get("tool_calls") and self.chunks:
            fields["tool_calls"] = [{"name": c["name"], "args": c["args"], "id": c["id"]}
                                    for _, c in sorted(self.chunks.items())]
        return {"type": self.kind, "data": fields}

    def empty(self) -> bool:
        return self.kind == "ai" and not self.text and not self.chunks and not (
            self.fields.get("tool_calls") or self.fields.get("usage_metadata"))


class LangChainReader:
    name = "langchain"

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return sniffs.langchain(head, source)

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        values: list[tuple[Any, LineAt, bool]] = []
        if (yield from feed(source, lambda *value: values.append(value))):
            return
        conv = _Conv(new_trace(source.trace_id, source, 1, self.name))
        if len(values) == 1 and values[0][2]:  # one JSON document
            value, at, _ = values[0]
            if isinstance(value, list) and value and all(_is_event(v) for v in value):
                unknown = self._stream([(v, at, (k,)) for k, v in enumerate(value)], conv)
            else:
                unknown = self._value(value, at, (), conv)
        else:  # JSON lines
            if values:
                conv.trace.location = Location(source.file, values[0][1]())
            if values and all(_is_event(v) for v, _, _ in values):
                unknown = self._stream([(v, at, ()) for v, at, _ in values], conv)
            else:
                unknown = sum(self._value(v, at, (), conv) for v, at, _ in values)
        yield from conv.errors
        if conv.messages:
            yield conv.trace
        else:
            yield INPUT_INVALID_EVENT.input_error(
                source.file, 1,
                "no LangChain message in this file (serialized messages, a "
                "LangGraph state or stream)")
        if unknown:
            yield IgnoredEvents(source.file, unknown)

    def _value(self, value: Any, at: LineAt, path: tuple[str | int, ...], conv: _Conv) -> int:
        """Messages in a list, a state ``{"messages": [...]}`` or one message."""
        if isinstance(value, dict) and isinstance(value.get("messages"), list):
            return self._value(value["messages"], at, (*path, "messages"), conv)
        if isinstance(value, list):
            return sum(self._value(v, at, (*path, i), conv) for i, v in enumerate(value))
        if conv.message(value, at, *path):
            return 0
        error = native_event(value, self.name, conv.file, at(*path))
        if error is None:
            return 1  # counted as ignored
        conv.errors.append(error)
        return 0

    def _stream(self, events: list[tuple[Any, LineAt, tuple[str | int, ...]]],
                conv: _Conv) -> int:
        # (namespace, messages, at, path) of each values event
        values: list[tuple[str, Any, LineAt, tuple[str | int, ...]]] = []
        merged: dict[str, _Merged] = {}
        order: list[_Merged | tuple[Any, LineAt, tuple[str | int, ...]]] = []
        steps: list[tuple[str, Location]] = []
        unknown = 0
        for ev, at, path in events:
            mode, payload, k = ev[-2], ev[-1], len(ev) - 1
            if mode == "values" and isinstance(payload, dict) and isinstance(
                    payload.get("messages"), list):
                space = repr(ev[0]) if k == 2 else ""
                values.append((space, payload["messages"], at, (*path, k, "messages")))
            elif mode == "messages" and isinstance(payload, list) and payload:
                if not self._chunk(payload, at, (*path, k), merged, order, steps, conv):
                    unknown += 1
                    continue
                touch(conv.trace, at(*path, k, 0))
            elif mode == "updates" and isinstance(payload, dict):
                for node, update in payload.items():
                    if isinstance(update, dict) and isinstance(update.get("messages"), list):
                        order.append((update["messages"], at, (*path, k, node, "messages")))
            else:
                unknown += 1
        conv.trace.handoffs.extend(node_transitions(steps))
        if any(ns for ns, _ in steps):  # a LangGraph run: its handoffs are recorded
            conv.trace.handoffs_recorded = True
        if len({space for space, _, _, _ in values}) > 1:
            return unknown + self._values_of_graphs(values, conv)
        if values:
            _, value, at, path = values[-1]
            return unknown + self._value(value, at, path, conv)
        for item in order:
            if isinstance(item, _Merged):
                if not item.empty():
                    at = events[0][1]
                    conv.message(item.message(), lambda *_p, _m=item, _a=at: _a(*_m.path))
            else:
                value, at, path = item
                unknown += self._value(value, at, path, conv)
        return unknown

    def _values_of_graphs(self, values: list[tuple[str, Any, LineAt, tuple[str | int, ...]]],
                          conv: _Conv) -> int:
        """The values events of a stream with subgraphs (``subgraphs=True``): each graph's
        state holds its own messages (a supervisor's sub-agent keeps its tool calls in its
        own, and hands only its last message back), so the last event holds not all of
        them. Every message of every state, in the order first seen, each once (by its
        ``id``, else its whole value and how many alike came before it in its state: two
        alike without ids, a call made twice, are two)."""
        seen: set[Any] = set()
        unknown = 0
        for _, messages, at, path in values:
            alike: dict[str, int] = {}
            for i, msg in enumerate(messages):
                parts = message_parts(msg)
                key: Any = parts[1].get("id") if parts is not None else None
                if not isinstance(key, str) or not key:
                    text = repr(msg)
                    n = alike.get(text, 0)
                    alike[text] = n + 1
                    key = (text, n)
                if key in seen:
                    continue
                seen.add(key)
                unknown += self._value(msg, at, (*path, i), conv)
        return unknown

    def _chunk(self, payload: list[Any], at: LineAt, path: tuple[str | int, ...],
               merged: dict[str, _Merged], order: list[Any],
               steps: list[tuple[str, Location]], conv: _Conv) -> bool:
        """A ``messages`` event ``[chunk, metadata]`` at ``path``: the chunk merged into
        the message with its id (or a new one in order), the LangGraph node it came from
        kept in ``steps``; False when it is not a message."""
        msg, meta = payload[0], payload[1] if len(payload) > 1 else None
        if isinstance(meta, dict):
            thread = meta.get("thread_id")
            if isinstance(thread, str) and thread:
                conv.trace.id = thread
            ns = meta.get("langgraph_checkpoint_ns")
            if isinstance(ns, str):  # LangGraph node transitions: handoffs
                steps.append((ns, Location(conv.file, at(*path, 1))))
        parts = message_parts(msg)
        if parts is None:
            return False
        mid = parts[1].get("id")
        if isinstance(mid, str) and mid in merged:
            m = merged[mid]
        else:
            m = _Merged(msg, (*path, 0))
            order.append(m)
            if isinstance(mid, str):
                merged[mid] = m
        problem = m.absorb(parts[1])
        if problem is not None:
            conv.errors.append(INPUT_INVALID_EVENT.input_error(
                conv.file, at(*path, 0, *parts[2], "tool_call_chunks"), problem))
        return True


READER = LangChainReader()
