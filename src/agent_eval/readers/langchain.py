"""LangChain / LangGraph serialized messages and LangSmith runs
(docs/formats/langchain.md, docs/formats/langsmith.md).

LangChain: a message list in any of LangChain's serializations (``dumpd`` constructor
objects ``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": ...}``,
``messages_to_dict`` ``{"type": "ai", "data": ...}``, or ``model_dump`` dicts), a
LangGraph state ``{"messages": [...]}``, or a LangGraph ``stream`` recording (a list of
``[mode, payload]`` events: the last ``values`` event holds the whole conversation;
without one, ``messages`` chunks are merged by message id and ``updates`` appended).

LangSmith: run objects (``run_type`` llm / tool / chain ...), as the ingest batches
``{"post": [...], "patch": [...]}``, a list, ``{"runs": [...]}`` or JSON lines; one trace
per ``trace_id``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from agent_eval.errors import InputError
from agent_eval.model import LlmCall, Location, ToolCall, Trace
from agent_eval.readers._foreign import (
    LINES,
    JsonDoc,
    add,
    count,
    epoch_ms,
    head_text,
    is_native,
    iter_lines,
    new_trace,
    num,
    open_records,
    set_result,
    span_ms,
    text_of,
    touch,
)
from agent_eval.readers._scores import add_score
from agent_eval.readers.base import IgnoredEvents, ReadItem, SourceFile
from agent_eval.readers.native import decode_arguments

LineAt = Callable[..., int]
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


def _model_name(meta: Any) -> str | None:
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
        i, o = count(um.get("input_tokens")), count(um.get("output_tokens"))
        t = count(um.get("total_tokens"))
        return i, o, t if t is not None else add(i, o)
    meta = fields.get("response_metadata")
    if isinstance(meta, dict):
        for key in ("token_usage", "usage"):
            u = meta.get(key)
            if isinstance(u, dict):
                i = count(u.get("prompt_tokens", u.get("input_tokens")))
                o = count(u.get("completion_tokens", u.get("output_tokens")))
                t = count(u.get("total_tokens"))
                return i, o, t if t is not None else add(i, o)
    return None, None, None


class _Conv:
    """One trace from LangChain messages, in order."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.file = trace.source
        self.calls: dict[str, ToolCall] = {}
        self.has_input = False
        self.messages = 0

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
        key = None if cid is None else str(cid)
        if key is not None and key in self.calls:
            return None
        if not isinstance(name, str) or not name:
            return None
        args, why = decode_arguments(raw)
        call = ToolCall(name=name, arguments=args, location=self.loc(line), id=key,
                        arguments_error=why)
        self.trace.tool_calls.append(call)
        if key is not None:
            self.calls[key] = call
        return call

    def ai(self, fields: dict[str, Any], line: int, field_line: LineAt) -> None:
        tool_calls = fields.get("tool_calls")
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
            for j, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    self.add_call(block.get("name"), block.get("input"), block.get("id"),
                                  field_line("content", j))
        text = text_of(content)
        if text:
            self.trace.output = text
        i, o, t = _usage(fields)
        self.trace.llm_calls.append(LlmCall(
            location=self.loc(line), model=_model_name(fields.get("response_metadata")),
            input_tokens=i, output_tokens=o, total_tokens=t))

    def tool(self, fields: dict[str, Any], line: int) -> None:
        cid = fields.get("tool_call_id")
        call = self.calls.get(str(cid)) if cid is not None else None
        if call is None:  # the result names its tool: keep the call it proves
            name = fields.get("name")
            call = self.add_call(name if isinstance(name, str) and name else "unknown",
                                 None, cid, line)
            if call is None:
                return
            call.arguments, call.arguments_recorded = None, False
        content = fields.get("content")
        text = text_of(content)
        result = text if text is not None and isinstance(content, str | list) else content
        ok = fields.get("status") != "error"
        set_result(call, result, None, ok, self.loc(line))


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
        self.absorb(fields)

    def absorb(self, fields: dict[str, Any]) -> None:
        text = text_of(fields.get("content"))
        if text:
            self.text.append(text)
        for k, v in fields.items():
            if k in ("usage_metadata", "response_metadata", "tool_calls") and v:
                if isinstance(v, dict) and isinstance(self.fields.get(k), dict):
                    self.fields[k] = {**self.fields[k], **v}
                else:
                    self.fields[k] = v
        for tc in fields.get("tool_call_chunks") or []:
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
        if is_native(head, source):
            return False
        text = head_text(head)
        if _LC.search(text) and _CONSTRUCTOR.search(text) and "langchain" in text:
            return True
        return bool(_LC_DICT.search(text) and _LC_SHAPE.search(text))

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        doc = open_records(source)
        if isinstance(doc, InputError):
            yield doc
            return
        conv = _Conv(new_trace(source.trace_id, source, 1, self.name))
        unknown = 0
        if doc is LINES:
            records: list[tuple[Any, LineAt, tuple[str | int, ...]]] = []
            for item in iter_lines(source):
                if isinstance(item, InputError):
                    yield item
                    continue
                number, value = item
                records.append((value, lambda *_p, n=number: n, ()))
            if records:
                conv.trace.location = Location(source.file, records[0][1]())
            if records and all(_is_event(v) for v, _, _ in records):
                unknown += self._stream([(v, at, p) for v, at, p in records], conv)
            else:
                for value, at, path in records:
                    unknown += self._value(value, at, path, conv)
        elif isinstance(doc, JsonDoc):
            value = doc.value
            if isinstance(value, list) and value and all(_is_event(v) for v in value):
                unknown += self._stream([(v, doc.line, (k,)) for k, v in enumerate(value)],
                                        conv)
            else:
                unknown += self._value(value, doc.line, (), conv)
        if conv.messages:
            yield conv.trace
        else:
            yield InputError("input/invalid_event", source.file, 1,
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
        return 0 if conv.message(value, at, *path) else 1

    def _stream(self, events: list[tuple[Any, LineAt, tuple[str | int, ...]]],
                conv: _Conv) -> int:
        last_values: tuple[Any, LineAt, tuple[str | int, ...]] | None = None
        merged: dict[str, _Merged] = {}
        order: list[_Merged | tuple[Any, LineAt, tuple[str | int, ...]]] = []
        unknown = 0
        for ev, at, path in events:
            mode, payload, k = ev[-2], ev[-1], len(ev) - 1
            if mode == "values" and isinstance(payload, dict) and isinstance(
                    payload.get("messages"), list):
                last_values = (payload["messages"], at, (*path, k, "messages"))
            elif mode == "messages" and isinstance(payload, list) and payload:
                msg, meta = payload[0], payload[1] if len(payload) > 1 else None
                if isinstance(meta, dict):
                    thread = meta.get("thread_id")
                    if isinstance(thread, str) and thread:
                        conv.trace.id = thread
                parts = message_parts(msg)
                if parts is None:
                    unknown += 1
                    continue
                mid = parts[1].get("id")
                if isinstance(mid, str) and mid in merged:
                    merged[mid].absorb(parts[1])
                else:
                    m = _Merged(msg, (*path, k, 0))
                    order.append(m)
                    if isinstance(mid, str):
                        merged[mid] = m
                order_line = at(*path, k, 0)
                touch(conv.trace, order_line)
            elif mode == "updates" and isinstance(payload, dict):
                for node, update in payload.items():
                    if isinstance(update, dict) and isinstance(update.get("messages"), list):
                        order.append((update["messages"], at, (*path, k, node, "messages")))
            else:
                unknown += 1
        if last_values is not None:
            value, at, path = last_values
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


_LC = re.compile(r'"lc"\s*:\s*1\b')
_CONSTRUCTOR = re.compile(r'"type"\s*:\s*"constructor"')
_LC_DICT = re.compile(r'"type"\s*:\s*"(?:ai|human)"')
_LC_SHAPE = re.compile(r'"data"\s*:\s*\{|"tool_calls"\s*:|"example"\s*:|"additional_kwargs"\s*:')


# ======================================================================= LangSmith
class _Run:
    __slots__ = ("fields", "line", "result_line")

    def __init__(self, fields: dict[str, Any], line: int) -> None:
        self.fields = fields
        self.line = line
        self.result_line: int | None = None


def _run_time(run: dict[str, Any]) -> float | None:
    return span_ms(run.get("start_time"), run.get("end_time"))


def _first_user_text(inputs: Any) -> Any:
    if not isinstance(inputs, dict):
        return inputs
    messages = inputs.get("messages")
    if isinstance(messages, list):
        flat = messages[0] if messages and isinstance(messages[0], list) else messages
        for m in flat:
            parts = message_parts(m)
            if parts is not None and parts[0] == "human":
                return text_of(parts[1].get("content"))
            if isinstance(m, dict) and m.get("role") in ("user", "human"):
                return text_of(m.get("content"))
    for key in ("input", "question", "query", "prompt"):
        if isinstance(inputs.get(key), str):
            return inputs[key]
    return inputs


def _final_text(outputs: Any) -> Any:
    if not isinstance(outputs, dict):
        return outputs
    choices = outputs.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        msg = choices[0].get("message")
        if isinstance(msg, dict):
            return text_of(msg.get("content"))
    for key in ("output", "answer", "result", "text"):
        if key in outputs:
            value = outputs[key]
            return text_of(value) if text_of(value) is not None else value
    messages = outputs.get("messages")
    if isinstance(messages, list):
        for m in reversed(messages):
            parts = message_parts(m)
            if parts is not None and parts[0] == "ai":
                return text_of(parts[1].get("content"))
    generations = outputs.get("generations")
    if isinstance(generations, list) and generations:
        g = generations[0][0] if isinstance(generations[0], list) else generations[0]
        if isinstance(g, dict) and isinstance(g.get("text"), str):
            return g["text"]
    return outputs


def _llm_usage(run: dict[str, Any]) -> tuple[int | None, int | None, int | None]:
    i, o = count(run.get("prompt_tokens")), count(run.get("completion_tokens"))
    t = count(run.get("total_tokens"))
    if i is not None or o is not None or t is not None:
        return i, o, t if t is not None else add(i, o)
    outputs = run.get("outputs")
    if not isinstance(outputs, dict):
        return None, None, None
    for key in ("usage_metadata", "usage"):
        u = outputs.get(key)
        if isinstance(u, dict):
            i = count(u.get("input_tokens", u.get("prompt_tokens")))
            o = count(u.get("output_tokens", u.get("completion_tokens")))
            t = count(u.get("total_tokens"))
            return i, o, t if t is not None else add(i, o)
    llm_output = outputs.get("llm_output")
    if isinstance(llm_output, dict) and isinstance(llm_output.get("token_usage"), dict):
        u = llm_output["token_usage"]
        i, o = count(u.get("prompt_tokens")), count(u.get("completion_tokens"))
        t = count(u.get("total_tokens"))
        return i, o, t if t is not None else add(i, o)
    return None, None, None


def _llm_model(run: dict[str, Any]) -> str | None:
    """The model that answered (the response's), else the one asked for."""
    outputs = run.get("outputs")
    if isinstance(outputs, dict) and isinstance(outputs.get("model"), str):
        return str(outputs["model"])
    extra = run.get("extra")
    if isinstance(extra, dict):
        meta = extra.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("ls_model_name"), str):
            return str(meta["ls_model_name"])
        params = extra.get("invocation_params")
        name = _model_name(params)
        if name:
            return name
    inputs = run.get("inputs")
    if isinstance(inputs, dict) and isinstance(inputs.get("model"), str):
        return str(inputs["model"])
    return None


def _tool_arguments(inputs: Any) -> tuple[Any, str | None]:
    if isinstance(inputs, dict) and set(inputs) == {"input"}:
        inner = inputs["input"]
        value, why = decode_arguments(inner)
        return (value, None) if why is None else (inputs, None)
    return decode_arguments(inputs)


class LangSmithReader:
    name = "langsmith"

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        if is_native(head, source):
            return False
        text = head_text(head)
        return bool(_RUN_TYPE.search(text) and _RUN_MARK.search(text))

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        doc = open_records(source)
        if isinstance(doc, InputError):
            yield doc
            return
        runs: dict[str, _Run] = {}
        feedback: list[_Run] = []
        unknown = 0
        if doc is LINES:
            for item in iter_lines(source):
                if isinstance(item, InputError):
                    yield item
                    continue
                number, value = item
                unknown += self._collect(value, lambda *_p, n=number: n, (), runs,
                                         feedback=feedback)
        elif isinstance(doc, JsonDoc):
            unknown += self._collect(doc.value, doc.line, (), runs, feedback=feedback)
        yield from self._traces(source, runs, feedback)
        if not runs:
            yield InputError("input/invalid_event", source.file, 1,
                             "no LangSmith run in this file (objects with an id and a run_type)")
        if unknown:
            yield IgnoredEvents(source.file, unknown)

    def _collect(self, value: Any, at: LineAt, path: tuple[str | int, ...],
                 runs: dict[str, _Run], patch: bool = False, *,
                 feedback: list[_Run]) -> int:
        if isinstance(value, list):
            return sum(self._collect(v, at, (*path, i), runs, patch, feedback=feedback)
                       for i, v in enumerate(value))
        if not isinstance(value, dict):
            return 1
        if "post" in value or "patch" in value:
            n = 0
            for key in ("post", "patch"):
                if isinstance(value.get(key), list):
                    n += self._collect(value[key], at, (*path, key), runs, key == "patch",
                                       feedback=feedback)
            return n
        if isinstance(value.get("runs"), list) or isinstance(value.get("feedback"), list):
            n = 0
            for key in ("runs", "feedback"):
                if isinstance(value.get(key), list):
                    n += self._collect(value[key], at, (*path, key), runs, feedback=feedback)
            return n
        if "run_id" in value and "key" in value and "run_type" not in value:
            # a feedback object (client.list_feedback): a score of a run
            feedback.append(_Run(value, at(*path)))
            return 0
        rid = value.get("id")
        dotted = value.get("dotted_order")
        if rid is None and isinstance(dotted, str) and "Z" in dotted:
            # a patch without its id (it was in the URL): the id ends the dotted order
            rid = dotted.rsplit(".", 1)[-1].split("Z", 1)[1]
        if rid is None:
            return 1
        key = str(rid)
        line = at(*path)
        have = runs.get(key)
        if have is None:
            have = runs[key] = _Run(dict(value), line)
        else:
            have.fields.update({k: v for k, v in value.items() if v is not None})
        if patch or value.get("outputs") is not None or value.get("error") is not None:
            have.result_line = line
        children = value.get("child_runs")
        n = 0
        if isinstance(children, list):
            for i, child in enumerate(children):
                if isinstance(child, dict):
                    child.setdefault("parent_run_id", rid)
                    child.setdefault("trace_id", value.get("trace_id", rid))
                n += self._collect(child, at, (*path, "child_runs", i), runs,
                                   feedback=feedback)
        return n

    def _traces(self, source: SourceFile, runs: dict[str, _Run],
                feedback: list[_Run]) -> Iterator[Trace]:
        groups: dict[str, list[_Run]] = {}
        for run in runs.values():
            tid = run.fields.get("trace_id", run.fields.get("id"))
            groups.setdefault(str(tid), []).append(run)
        scored: dict[str, list[_Run]] = {}  # trace id -> its runs' feedback objects
        for fb in feedback:
            owner = runs.get(str(fb.fields.get("run_id")))
            if owner is not None:
                tid = owner.fields.get("trace_id", owner.fields.get("id"))
                scored.setdefault(str(tid), []).append(fb)
        for tid, members in groups.items():
            members.sort(key=lambda r: (str(r.fields.get("dotted_order", "")),
                                        epoch_ms(r.fields.get("start_time")) or 0.0))
            first = min(r.line for r in members)
            tr = new_trace(tid, source, first, self.name)
            roots = [r for r in members if not r.fields.get("parent_run_id")]
            root = roots[0] if roots else members[0]
            rf = root.fields
            tr.input = _first_user_text(rf.get("inputs"))
            tr.output = _final_text(rf.get("outputs"))
            tr.duration_ms = _run_time(rf)
            for key in ("name", "run_type", "session_name"):
                if isinstance(rf.get(key), str):
                    tr.metadata[f"root_{key}" if key != "session_name" else "project"] = rf[key]
            if rf.get("error"):
                tr.metadata["error"] = rf["error"]
            cost = num(rf.get("total_cost"))
            if cost is not None and len(members) > 1:
                tr.cost_usd = float(cost)  # the root's total covers its children
            tools = [r for r in members if r.fields.get("run_type") == "tool"]
            by_id: dict[str, ToolCall] = {}
            for run in members:
                f = run.fields
                touch(tr, run.line)
                if run.result_line is not None:
                    touch(tr, run.result_line)
                loc = Location(source.file, run.line)
                if f.get("run_type") == "tool":
                    args, why = _tool_arguments(f.get("inputs"))
                    outputs = f.get("outputs")
                    result = outputs.get("output", outputs) if isinstance(
                        outputs, dict) else outputs
                    call = ToolCall(name=str(f.get("name") or "unknown"), arguments=args,
                                    location=loc, id=str(f.get("id")), arguments_error=why,
                                    latency_ms=_run_time(f),
                                    arguments_recorded=f.get("inputs") is not None)
                    if not call.arguments_recorded:
                        call.arguments = None
                    if outputs is not None or f.get("error"):
                        err = f.get("error")
                        set_result(call, result, str(err) if err else None, not err,
                                   Location(source.file, run.result_line or run.line))
                    tr.tool_calls.append(call)
                elif f.get("run_type") == "llm":
                    i, o, t = _llm_usage(f)
                    c = num(f.get("total_cost"))
                    tr.llm_calls.append(LlmCall(
                        location=loc, model=_llm_model(f), input_tokens=i, output_tokens=o,
                        total_tokens=t, cost_usd=None if c is None else float(c),
                        latency_ms=_run_time(f)))
                    if not tools:
                        self._requested_calls(f, tr, by_id, loc,
                                              Location(source.file, run.result_line or run.line))
                stats = f.get("feedback_stats")
                if isinstance(stats, dict):
                    for key, stat in stats.items():
                        avg = stat.get("avg") if isinstance(stat, dict) else None
                        add_score(tr, str(key), avg, loc, source=self.name)
            for fb in scored.get(tid, ()):
                g = fb.fields
                touch(tr, fb.line)
                raw = g.get("score") if g.get("score") is not None else g.get("value")
                add_score(tr, g.get("key"), raw, Location(source.file, fb.line),
                          source=self.name, comment=g.get("comment"))
            yield tr

    def _requested_calls(self, run: dict[str, Any], tr: Trace, by_id: dict[str, ToolCall],
                         loc: Location, out_loc: Location) -> None:
        """Without tool runs, the calls an LLM asked for (OpenAI-style outputs) and their
        results in the next LLM call's input messages."""
        inputs = run.get("inputs")
        messages = inputs.get("messages") if isinstance(inputs, dict) else None
        for m in messages if isinstance(messages, list) else []:
            if isinstance(m, dict) and m.get("role") == "tool":
                call = by_id.get(str(m.get("tool_call_id")))
                if call is not None and not call.has_result:
                    set_result(call, text_of(m.get("content")), None, True, loc)
        outputs = run.get("outputs")
        choices = outputs.get("choices") if isinstance(outputs, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return
        msg = choices[0].get("message")
        calls = msg.get("tool_calls") if isinstance(msg, dict) else None
        for tc in calls if isinstance(calls, list) else []:
            fn = tc.get("function") if isinstance(tc, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                continue
            cid = str(tc.get("id"))
            if cid in by_id:
                continue
            args, why = decode_arguments(fn.get("arguments"))
            call = ToolCall(name=fn["name"], arguments=args, location=out_loc, id=cid,
                            arguments_error=why)
            tr.tool_calls.append(call)
            by_id[cid] = call


_RUN_TYPE = re.compile(
    r'"run_type"\s*:\s*"(?:llm|chain|tool|retriever|prompt|parser|embedding)"')
_RUN_MARK = re.compile(r'"(?:dotted_order|trace_id|child_runs|parent_run_id|start_time)"\s*:')

READER = LangChainReader()
LANGSMITH_READER = LangSmithReader()
