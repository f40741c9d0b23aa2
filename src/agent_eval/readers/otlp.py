"""OpenTelemetry GenAI spans: OTLP/JSON, Tempo and Jaeger exports (docs/formats/otlp.md).

Accepted shapes, detected by content:

- collector ``file`` exporter output: one ``{"resourceSpans": [...]}`` export object per
  line (read line by line; every call points at the line of its export object);
- one OTLP/JSON document (``resourceSpans``), a Tempo export (``batches`` with
  ``scopeSpans`` or the legacy ``instrumentationLibrarySpans``) or a Jaeger export
  (``{"data": [{"traceID", "spans": [{"operationName", "tags", ...}]}]}``): every call
  points at the line where its span object starts (Jaeger spans are read by
  :mod:`agent_eval.readers.jaeger`);
- a single span's flat attribute map (``{"gen_ai.operation.name": "chat", ...}``).

Spans are grouped by trace id (hex, or base64 as some exporters write it) and ordered
by start time. Attributes are flattened into a dict once per span; everything else is
dict look-ups, so reading stays close to native speed.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from agent_eval.errors import InputError
from agent_eval.gcpause import gc_paused
from agent_eval.jsonutil import json_type, read_whole
from agent_eval.jsonutil import loads as bounded_loads
from agent_eval.model import LlmCall, Location, ToolCall, Trace
from agent_eval.readers import jaeger, sniffs
from agent_eval.readers._otel import NANOS_MAX as _NANOS_MAX
from agent_eval.readers._otel import NANOS_MIN as _NANOS_MIN
from agent_eval.readers._otel import as_list as _list
from agent_eval.readers._otel import bad_times as _bad_times
from agent_eval.readers._otel import nanos as _nanos
from agent_eval.readers._otel import span_id as _sid
from agent_eval.readers._scores import add_score
from agent_eval.readers.base import (
    CallIndex,
    IgnoredEvents,
    ReadItem,
    SourceFile,
    reused_call_id,
)
from agent_eval.readers.jsonpos import JsonPath, container_lines
from agent_eval.readers.native import decode_arguments
from agent_eval.rule_ids import INPUT_INVALID_EVENT, INPUT_PARSE_ERROR, INPUT_UNREADABLE_FILE, Rule
from agent_eval.safetext import clean_text

_loads = bounded_loads
_JSONDecodeError = orjson.JSONDecodeError
_BOM = b"\xef\xbb\xbf"
LINE_SUFFIXES = (".jsonl", ".ndjson", ".log", ".txt")

# ------------------------------------------------------------------------ sniffing

# ---------------------------------------------------------------------- attributes
_LLM_OPS = frozenset(("chat", "text_completion", "generate_content", "completion",
                      "responses"))
_USAGE_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens",
               "gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens",
               "llm.token_count.prompt", "llm.token_count.completion",
               "llm.token_count.total", "llm.usage.total_tokens")
_MODEL_KEYS = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name",
               "llm.response.model", "llm.request.model")
_INPUT_TOKEN_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
                     "llm.token_count.prompt", "llm.usage.prompt_tokens")
_OUTPUT_TOKEN_KEYS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                      "llm.token_count.completion", "llm.usage.completion_tokens")
_TOTAL_TOKEN_KEYS = ("llm.token_count.total", "llm.usage.total_tokens",
                     "gen_ai.usage.total_tokens")
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
_TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
_TOOL_ID_KEYS = ("gen_ai.tool.call.id", "tool_call.id", "tool.call.id")
_TOOL_ARG_KEYS = ("gen_ai.tool.call.arguments", "input.value", "input",
                  "gcp.vertex.agent.tool_call_args", "traceloop.entity.input")
_TOOL_RESULT_KEYS = ("gen_ai.tool.call.result", "output.value", "output",
                     "gcp.vertex.agent.tool_response", "traceloop.entity.output")
# how a message attribute's JSON starts: a list of messages, or an object wrapping them
_MESSAGES_START = re.compile(r'\s*(?:\[\s*\{|\{\s*")')
# Message attributes: JSON strings (current and deprecated names) ...
_INPUT_MESSAGE_KEYS = ("gen_ai.input.messages", "gen_ai.prompt")
_OUTPUT_MESSAGE_KEYS = ("gen_ai.output.messages", "gen_ai.completion")
# ... and flattened, indexed ones (OpenLLMetry, OpenInference), found by their first key
_INDEXED = (
    ("gen_ai.prompt.", ("gen_ai.prompt.0.role", "gen_ai.prompt.0.content"), False, False),
    ("gen_ai.completion.", ("gen_ai.completion.0.role", "gen_ai.completion.0.content",
                            "gen_ai.completion.0.tool_calls.0.name"), True, False),
    ("llm.input_messages.", ("llm.input_messages.0.message.role",), False, True),
    ("llm.output_messages.", ("llm.output_messages.0.message.role",), True, True),
)
_TOOL, _LLM, _OTHER = 1, 2, 0
_SNAKE = {"string_value": "stringValue", "int_value": "intValue",
          "double_value": "doubleValue", "bool_value": "boolValue",
          "array_value": "arrayValue", "kvlist_value": "kvlistValue",
          "bytes_value": "bytesValue"}


def _any_value(v: Any) -> Any:
    """An OTLP ``AnyValue`` ({"stringValue": ...}, {"intValue": "3"}, ...) as Python."""
    if type(v) is not dict:
        return v
    for key, x in v.items():
        key = _SNAKE.get(key, key)
        if key == "stringValue":
            return x
        if key == "intValue":
            try:
                return int(x)
            except (TypeError, ValueError):
                return x
        if key == "doubleValue":
            try:
                return float(x)
            except (TypeError, ValueError):
                return x
        if key == "boolValue":
            return x if type(x) is bool else str(x).lower() == "true"
        if key == "arrayValue":
            values = x.get("values") if type(x) is dict else None
            return [_any_value(i) for i in values] if type(values) is list else []
        if key == "kvlistValue":
            values = x.get("values") if type(x) is dict else None
            return _attributes(values)
        if key == "bytesValue":
            return x
    return None


def _attributes(items: Any) -> dict[str, Any]:
    """OTLP ``[{"key": k, "value": AnyValue}]`` flattened into ``{k: value}``."""
    out: dict[str, Any] = {}
    if type(items) is not list:
        return out
    for kv in items:
        if type(kv) is not dict:
            continue
        key = kv.get("key")
        if type(key) is not str:
            continue
        v = kv.get("value")
        if type(v) is dict:
            s = v.get("stringValue")
            out[key] = s if s is not None else _any_value(v)
        else:
            out[key] = v
    return out


def _repeated_keys(items: list[Any], attrs: dict[str, Any]) -> list[str]:
    """What to say of a span's attribute keys given more than once with other values
    (OTLP keys are unique): the last is read, so what the others say (a tool's name) was
    never checked."""
    seen: dict[str, list[Any]] = {}
    for kv in items:
        if type(kv) is dict and type(kv.get("key")) is str:
            v = kv.get("value")
            value = (v.get("stringValue") if "stringValue" in v else _any_value(v)) \
                if type(v) is dict else v
            seen.setdefault(kv["key"], []).append(value)
    return [f"the span's attribute {clean_text(repr(key), 120)} is given {len(values)} times "
            f"with other values: only the last, {clean_text(repr(attrs.get(key)), 120)}, is "
            "read, and what the others say is not checked; give each key once"
            for key, values in seen.items()
            if len(values) > 1 and any(x != values[-1] for x in values)]


def _first(attrs: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        v = attrs.get(k)
        if v is not None:
            return v
    return None


def _int(attrs: dict[str, Any], keys: tuple[str, ...]) -> int | None:
    for k in keys:
        v = attrs.get(k)
        if v is None:
            continue
        if type(v) is int:
            return v
        if type(v) is float and v.is_integer():
            return int(v)
        if type(v) is str:
            try:
                return int(v)
            except ValueError:
                continue
    return None


def _float(v: Any) -> float | None:
    if type(v) is float or type(v) is int:
        return float(v)
    if type(v) is str:
        try:
            return float(v)
        except ValueError:
            return None
    return None


_HEX = frozenset("0123456789abcdefABCDEF")
_id_cache: dict[str, str] = {}


def trace_key(raw: Any) -> str | None:
    """A trace id as lower-case hex: hex ids as they are, base64 ids decoded."""
    if type(raw) is not str or not raw:
        return None
    hit = _id_cache.get(raw)
    if hit is not None:
        return hit
    if len(raw) in (32, 16) and _HEX.issuperset(raw):
        out = raw.lower()
    else:
        try:
            decoded = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            decoded = b""
        out = decoded.hex() if len(decoded) in (16, 8) else raw
    if len(_id_cache) > 100_000:
        _id_cache.clear()
    _id_cache[raw] = out
    return out


# ---------------------------------------------------------------------- messages
def _json_value(v: Any) -> Any:
    """A JSON-encoded attribute decoded (a non-JSON string stays as it is)."""
    if type(v) is str:
        s = v.lstrip()
        if s[:1] in ("[", "{", '"'):
            try:
                return _loads(v)
            except _JSONDecodeError:
                return v
    return v


def _text(content: Any) -> str | None:
    if type(content) is str:
        return content
    if type(content) is list:
        parts = [t for t in (_text(c) for c in content) if t]
        return "\n".join(parts) if parts else None
    if type(content) is dict:
        t = content.get("text")
        if type(t) is str:
            return t
        t = content.get("content")
        if type(t) is str and content.get("type") in (None, "text"):
            return t
    return None


def _seq(node: Any) -> list[Any]:
    """An indexed sub-tree ({"0": ..., "1": ...}) as a list in index order."""
    if type(node) is list:
        return node
    if type(node) is not dict:
        return []
    items: list[tuple[int, Any]] = []
    for k, v in node.items():
        try:
            items.append((int(k), v))
        except ValueError:
            continue
    items.sort(key=lambda kv: kv[0])
    return [v for _, v in items]


def _indexed(attrs: dict[str, Any], prefix: str, openinference: bool) -> list[dict[str, Any]]:
    """Flattened messages (``gen_ai.prompt.0.role``, ``llm.input_messages.0.message.role``)
    rebuilt as OpenAI-style message dicts."""
    n = len(prefix)
    tree: dict[str, Any] = {}
    for key, value in attrs.items():
        if type(key) is not str or not key.startswith(prefix):
            continue
        parts = key[n:].split(".")
        node = tree
        for p in parts[:-1]:
            nxt = node.get(p)
            if type(nxt) is not dict:
                nxt = {}
                node[p] = nxt
            node = nxt
        node[parts[-1]] = value
    out: list[dict[str, Any]] = []
    for entry in _seq(tree):
        if type(entry) is not dict:
            continue
        m = entry.get("message") if openinference else entry
        if type(m) is not dict:
            continue
        msg: dict[str, Any] = {"role": m.get("role")}
        content = m.get("content")
        if content is None and "contents" in m:
            content = [c.get("message_content") for c in _seq(m["contents"])
                       if type(c) is dict]
        msg["content"] = content
        calls = []
        for tc in _seq(m.get("tool_calls")):
            if type(tc) is not dict:
                continue
            if openinference:
                tc = tc.get("tool_call")
                if type(tc) is not dict:
                    continue
            calls.append(tc)
        if calls:
            msg["tool_calls"] = calls
        if m.get("tool_call_id") is not None:
            msg["tool_call_id"] = m.get("tool_call_id")
        out.append(msg)
    return out


def _message_list(value: Any) -> list[dict[str, Any]]:
    """A message attribute (JSON text, maybe an object wrapping the list) as a list."""
    return _messages(_json_value(value))


def _messages(v: Any) -> list[dict[str, Any]]:
    """A message attribute's decoded value as a list of messages (see _message_list)."""
    if type(v) is list:
        return [m for m in v if type(m) is dict]
    if type(v) is dict:
        msgs = v.get("messages")
        if type(msgs) is list:
            return [m for m in msgs if type(m) is dict]
        if "role" in v or "parts" in v:
            return [v]
        if type(v.get("text")) is str:  # deprecated gen_ai.completion: {"text", ...}
            return [{"role": "assistant", "content": v["text"]}]
    if type(v) is str and v:
        return [{"role": None, "content": v}]
    return []


# (call id, name, raw arguments) / (call id, result)
_CallFn = Callable[[Any, Any, Any], None]
_ResultFn = Callable[[Any, Any], None]


def _scan(messages: list[dict[str, Any]], on_call: _CallFn,
          on_result: _ResultFn) -> tuple[str | None, str | None]:
    """Walk chat messages (semconv ``parts`` or OpenAI style): report tool calls and
    tool results; return (first user text, last assistant text)."""
    user: str | None = None
    assistant: str | None = None
    for m in messages:
        role = m.get("role")
        text: str | None = None
        parts = m.get("parts")
        if type(parts) is list:
            texts = []
            for p in parts:
                if type(p) is not dict:
                    continue
                kind = p.get("type")
                if kind == "text":
                    c = p.get("content")
                    if type(c) is str:
                        texts.append(c)
                elif kind == "tool_call":
                    on_call(p.get("id"), p.get("name"), p.get("arguments"))
                elif kind == "tool_call_response":
                    on_result(p.get("id"), p.get("response"))
            text = "\n".join(texts) if texts else None
        else:
            content = m.get("content")
            for tc in _list(m.get("tool_calls")):
                if type(tc) is not dict:
                    continue
                fn = tc.get("function")
                src = fn if type(fn) is dict else tc
                on_call(tc.get("id"), src.get("name"), src.get("arguments"))
            if role == "tool":
                on_result(m.get("tool_call_id") or m.get("id"), content)
            else:
                text = _text(content)
        if text:
            if role == "user" and user is None:
                user = text
            elif role in ("assistant", "model", None):
                assistant = text
    return user, assistant


# ------------------------------------------------------------------------- spans
class _Span:
    __slots__ = ("attrs", "end", "error", "line", "name", "order", "parent", "res", "sid",
                 "start")

    def __init__(self, sid: Any, parent: Any, name: Any, start: int | None,
                 end: int | None, attrs: dict[str, Any], error: str | None, line: int,
                 order: int, res: dict[str, Any]) -> None:
        self.sid = sid
        self.parent = parent
        self.name = name
        self.start = start
        self.end = end
        self.attrs = attrs
        self.error = error
        self.line = line
        self.order = order
        self.res = res


def _kind(a: dict[str, Any]) -> int:
    op = a.get("gen_ai.operation.name")
    if op == "execute_tool":
        return _TOOL
    oi = a.get("openinference.span.kind")
    if oi == "TOOL" or a.get("traceloop.span.kind") == "tool":
        return _TOOL
    if (type(op) is str and op in _LLM_OPS) or oi == "LLM":
        return _LLM
    if op == "embeddings" or oi == "EMBEDDING":
        return _OTHER
    rt = a.get("llm.request.type")
    if rt is not None:
        return _LLM if rt in ("chat", "completion") else _OTHER
    for k in _USAGE_KEYS:
        if k in a:
            return _LLM
    return _OTHER


def _span_error(status: Any, attrs: dict[str, Any], events: Any) -> str | None:
    """The error message of a failed span (status ERROR), or None."""
    failed = False
    message = None
    if type(status) is dict:
        code = status.get("code")
        if code == 2 or code in ("STATUS_CODE_ERROR", "ERROR", "2"):
            failed = True
            m = status.get("message")
            message = m if type(m) is str and m else None
    if not failed:
        return None
    if message is None and type(events) is list:
        for ev in events:
            if type(ev) is dict and ev.get("name") == "exception":
                ea = _attributes(ev.get("attributes"))
                m = ea.get("exception.message") or ea.get("exception.type")
                if type(m) is str and m:
                    message = m
                    break
    if message is None:
        et = attrs.get("error.type")
        message = et if type(et) is str and et else "error"
    return message


# Chat message events of semconv 1.28-1.36 (the role each stands for); gen_ai.choice is
# the model's answer, the others its input
_MESSAGE_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                   "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool",
                   "gen_ai.choice": "assistant"}


def _event_message(name: str, ev_attrs: dict[str, Any]) -> dict[str, Any] | None:
    """The chat message of a message event: its body in ``gen_ai.event.content`` (JSON,
    as the Azure AI Inference SDK writes it), else its attributes; a choice's message is
    under ``message``. Tool results by ``id``, as the events' body names them."""
    body = _json_value(ev_attrs.get("gen_ai.event.content", ev_attrs))
    if type(body) is not dict:
        return None
    if name == "gen_ai.choice" and type(body.get("message")) is dict:
        body = body["message"]
    msg = {k: v for k, v in body.items() if type(k) is str and not k.startswith("gen_ai.")}
    msg["role"] = _MESSAGE_EVENTS[name]
    if name == "gen_ai.tool.message" and "tool_call_id" not in msg:
        msg["tool_call_id"] = body.get("id")
    return msg


def _event_attributes(events: list[Any], attrs: dict[str, Any]) -> None:
    """Older semconv kept prompts/completions in span events: copy them over; chat
    message events (``gen_ai.choice``, ``gen_ai.user.message``, ...) become the span's
    input and output messages, unless its attributes hold them."""
    asked: list[dict[str, Any]] = []
    answered: list[dict[str, Any]] = []
    for ev in events:
        if type(ev) is not dict:
            continue
        name = ev.get("name")
        if name in ("gen_ai.content.prompt", "gen_ai.content.completion"):
            for k, v in _attributes(ev.get("attributes")).items():
                attrs.setdefault(k, v)
        elif type(name) is str and name in _MESSAGE_EVENTS:
            msg = _event_message(name, _attributes(ev.get("attributes")))
            if msg is not None:
                (answered if name == "gen_ai.choice" else asked).append(msg)
    if asked:
        attrs.setdefault("gen_ai.input.messages", asked)
    if answered:
        attrs.setdefault("gen_ai.output.messages", answered)


class _FileState:
    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.file = source.file
        self.traces: dict[Any, list[_Span]] = {}  # raw trace id -> spans
        self.errors: list[InputError] = []
        self.ignored = 0
        self.order = 0
        self.had_errors = False
        # raw trace id -> GenAI evaluation results (event or log attributes, line)
        self.evals: dict[Any, list[tuple[dict[str, Any], int]]] = {}
        # (trace key, span key) -> the chat message events sent as log records for that
        # span: (event name, message, line), joined to the span when the file is read
        self.logged: dict[tuple[str | None, str | None], list[tuple[str, dict[str, Any],
                                                                    int]]] = {}

    def evaluation(self, tid: Any, attrs: dict[str, Any], line: int) -> None:
        self.evals.setdefault(tid, []).append((attrs, line))

    def logs(self, doc: dict[str, Any], line: int, lines: dict[JsonPath, int] | None,
             path: JsonPath) -> None:
        """OTLP logs: the GenAI evaluation events among them (``gen_ai.evaluation.result``,
        by ``eventName`` or the ``event.name`` attribute) become recorded scores of the
        trace they name; the chat message events (``gen_ai.choice``,
        ``gen_ai.user.message``, ..., as the OpenTelemetry OpenAI instrumentation sends
        them) join the span they name (:meth:`join_logged`); an export object with
        neither is ignored (counted), as metrics are."""
        rkey = "resourceLogs" if "resourceLogs" in doc else "resource_logs"
        found = False
        for ri, rl in enumerate(_list(doc.get(rkey))):
            if type(rl) is not dict:
                continue
            for skey in ("scopeLogs", "scope_logs"):
                for si, sl in enumerate(_list(rl.get(skey))):
                    records = sl.get("logRecords") if type(sl) is dict else None
                    for k, rec in enumerate(_list(records)):
                        if type(rec) is not dict:
                            continue
                        attrs = _attributes(rec.get("attributes"))
                        name = rec.get("eventName") or attrs.get("event.name")
                        tid = rec.get("traceId") or rec.get("trace_id")
                        if type(name) is str and name in _MESSAGE_EVENTS:
                            ln = line if lines is None else lines.get(
                                (*path, rkey, ri, skey, si, "logRecords", k), line)
                            self.log_message(rec, name, attrs, tid, ln)
                            found = True
                            continue
                        if name != EVALUATION_EVENT or not tid:
                            continue
                        ln = line if lines is None else lines.get(
                            (*path, rkey, ri, skey, si, "logRecords", k), line)
                        self.evaluation(tid, attrs, ln)
                        found = True
        if not found:
            self.ignored += 1

    def log_message(self, rec: dict[str, Any], name: str, attrs: dict[str, Any],
                    tid: Any, line: int) -> None:
        """A chat message event sent as a log record: its body (an ``AnyValue``) is the
        message (else its attributes, as for a span event), kept for the span its
        ``traceId`` and ``spanId`` name."""
        body = rec.get("body")
        content = _any_value(body) if type(body) is dict else None
        msg = _event_message(name, attrs if content is None
                             else {"gen_ai.event.content": content})
        if msg is None:
            self.ignored += 1
            return
        sid = rec.get("spanId")
        if sid is None:
            sid = rec.get("span_id")
        self.logged.setdefault((trace_key(tid), trace_key(sid)), []).append(
            (name, msg, line))

    def join_logged(self) -> None:
        """The chat message events sent as log records become the input and output
        messages of the span each names, as the same events on the span would (added
        to what its attributes hold: a call seen twice with its id is read once). One
        whose span is not in this file: an input error when it holds tool calls or a
        tool result (they cannot be read), else an ignored record."""
        if not self.logged:
            return
        for raw, spans in self.traces.items():
            tkey = trace_key(raw)
            for span in spans:
                got = self.logged.pop((tkey, trace_key(span.sid)), None)
                if got is None:
                    continue
                asked = [m for n, m, _ in got if n != "gen_ai.choice"]
                answered = [m for n, m, _ in got if n == "gen_ai.choice"]
                for key, msgs in (("gen_ai.input.messages", asked),
                                  ("gen_ai.output.messages", answered)):
                    if msgs:
                        held = span.attrs.get(key)
                        span.attrs[key] = msgs if held is None else [
                            *_message_list(held), *msgs]
        for (tkey, skey), got in self.logged.items():
            for name, msg, line in got:
                if msg.get("tool_calls") or name == "gen_ai.tool.message":
                    where = (f"span '{skey}' of trace '{tkey}', which is not in this file"
                             if tkey and skey else "no span (no traceId and spanId)")
                    self.error(INPUT_INVALID_EVENT, line,
                               f"a {name} log record of {where}: the tool calls or result "
                               "in it cannot be read; export the spans and the log records "
                               "of a trace to one file")
                else:
                    self.ignored += 1
        self.logged.clear()

    def error(self, rule: Rule, line: int, message: str) -> None:
        self.errors.append(rule.input_error(self.file, line, message))
        self.had_errors = True

    def add(self, tid: Any, span: _Span) -> None:
        bucket = self.traces.get(tid)
        if bucket is None:
            self.traces[tid] = [span]
        else:
            bucket.append(span)

    # ------------------------------------------------------------ object shapes
    def value(self, obj: Any, line: int, lines: dict[JsonPath, int] | None,
              path: JsonPath) -> None:
        """One export object (a line, or the whole document, or an array element)."""
        if type(obj) is list:
            for i, item in enumerate(obj):
                p = (*path, i)
                ln = line if lines is None else lines.get(p, line)
                self.value(item, ln, lines, p)
            return
        if type(obj) is not dict:
            self.error(INPUT_INVALID_EVENT, line,
                       f"expected an OTLP export object, not {json_type(obj)}")
            return
        if "resourceSpans" in obj or "resource_spans" in obj or "batches" in obj:
            self.otlp(obj, line, lines, path)
        elif type(obj.get("data")) is list:
            self.jaeger(obj["data"], line, lines, (*path, "data"))
        elif "resourceLogs" in obj or "resource_logs" in obj:
            self.logs(obj, line, lines, path)
        elif "resourceMetrics" in obj:
            self.ignored += 1
        elif any(type(k) is str and k.startswith(("gen_ai.", "llm.", "openinference."))
                 for k in obj):
            self.flat(obj, line)
        else:
            self.error(INPUT_INVALID_EVENT, line,
                       "not an OTLP export object: expected \"resourceSpans\" (OTLP), "
                       "\"batches\" (Tempo) or \"data\" (Jaeger)")

    def otlp(self, doc: dict[str, Any], line: int, lines: dict[JsonPath, int] | None,
             path: JsonPath) -> None:
        rkey = next(k for k in ("resourceSpans", "resource_spans", "batches") if k in doc)
        resources = doc[rkey]
        # an element of the wrong JSON type holds spans that cannot be read: said at its
        # line, never passed over (the other elements are still read)
        if type(resources) is not list:
            if resources is not None:
                self.wrong(f'"{rkey}"', "an array", resources, line, lines, (*path, rkey))
            return
        for ri, rs in enumerate(resources):
            if type(rs) is not dict:
                self.wrong(f'"{rkey}" item', "an object", rs, line, lines, (*path, rkey, ri))
                continue
            res = rs.get("resource")
            rattrs = _attributes(res.get("attributes")) if type(res) is dict else {}
            # each of the names a resource's scopes are under (one, unless a converted or
            # hand-joined export holds the legacy one beside the current one: both read)
            for skey in ("scopeSpans", "instrumentationLibrarySpans", "scope_spans"):
                scopes = rs.get(skey)
                if scopes is None:
                    continue
                if type(scopes) is not list:
                    self.wrong(f'"{skey}"', "an array", scopes, line, lines,
                               (*path, rkey, ri, skey))
                    continue
                for si, ss in enumerate(scopes):
                    where = (*path, rkey, ri, skey, si)
                    if type(ss) is not dict:
                        self.wrong(f'"{skey}" item', "an object", ss, line, lines, where)
                        continue
                    spans = ss.get("spans")
                    if type(spans) is list:
                        self.spans(spans, rattrs, line, lines, (*where, "spans"))
                    elif spans is not None:
                        self.wrong('"spans"', "an array", spans, line, lines,
                                   (*where, "spans"))

    def wrong(self, what: str, expected: str, value: Any, line: int,
              lines: dict[JsonPath, int] | None, path: JsonPath) -> None:
        """An element of an export that is not of the JSON type its spans need, at its line
        (a scalar's own line is not kept: the nearest container's that holds it)."""
        ln = line
        if lines is not None:
            while path and path not in lines:
                path = path[:-1]
            ln = lines.get(path, line)
        self.error(INPUT_INVALID_EVENT, ln, f"{what} must be {expected}, not "
                   f"{json_type(value)}; the spans in it cannot be read")

    def spans(self, spans: list[Any], rattrs: dict[str, Any], line: int,
              lines: dict[JsonPath, int] | None, path: JsonPath) -> None:
        """The spans of one scope (at ``path``), with their resource's attributes."""
        traces = self.traces
        order = self.order
        start: int | None
        end: int | None
        for k, s in enumerate(spans):
            try:  # the common shape: attributes flattened in one comprehension
                attrs = {kv["key"]: v["stringValue"] if "stringValue" in
                         (v := kv["value"]) else _any_value(v)
                         for kv in s["attributes"]}
                tid = s["traceId"]
                start = int(s["startTimeUnixNano"])
                end = int(s["endTimeUnixNano"])
                sid = s["spanId"]
                if not (_NANOS_MIN <= start < _NANOS_MAX and _NANOS_MIN <= end < _NANOS_MAX):
                    raise ValueError  # beyond 64 bits: read as irregular, and reported
            except (KeyError, TypeError, ValueError, OverflowError):
                got = _irregular_span(s)
                if got is None:
                    self.wrong('"spans" item', "an object", s, line, lines, (*path, k))
                    continue
                attrs, tid, start, end, sid = got
            if type(tid) is not str:
                tid = None
            if type(sid) is not str:
                sid = _sid(sid)
            ln = line if lines is None else lines.get((*path, k), line)
            items = s.get("attributes")
            if type(items) is list and len(attrs) < len(items):
                for problem in _repeated_keys(items, attrs):
                    self.error(INPUT_INVALID_EVENT, ln, problem)
            if start is None or end is None:  # a time written that is not one: said
                for problem in _bad_times(s, _TIMES, "nanoseconds"):
                    self.error(INPUT_INVALID_EVENT, ln, problem)
            events = s.get("events")
            if type(events) is list and events:
                self.events(events, attrs, tid, ln)
            if EVALUATION_NAME in attrs:  # an evaluation result sent as a span
                self.evaluation(tid, attrs, ln)
            status = s.get("status")
            order += 1
            span = _Span(sid, _parent(s), s.get("name"), start, end, attrs,
                         _span_error(status, attrs, events) if status else None,
                         ln, order, rattrs)
            bucket = traces.get(tid)
            if bucket is None:
                traces[tid] = [span]
            else:
                bucket.append(span)
        self.order = order

    def events(self, events: list[Any], attrs: dict[str, Any], tid: str | None,
               line: int) -> None:
        """A span's events: their attributes join the span's; evaluation results."""
        _event_attributes(events, attrs)
        for ev in events:
            if type(ev) is dict and ev.get("name") == EVALUATION_EVENT:
                self.evaluation(tid, _attributes(ev.get("attributes")), line)

    def jaeger(self, data: list[Any], line: int, lines: dict[JsonPath, int] | None,
               path: JsonPath) -> None:
        def wrong(ln: int, message: str) -> None:
            self.error(INPUT_INVALID_EVENT, ln, message)

        for j in jaeger.spans(data, line, lines, path, wrong):
            for problem in j.problems:
                self.error(INPUT_INVALID_EVENT, j.line, problem)
            self.order += 1
            self.add(j.trace_id, _Span(j.sid, j.parent, j.name, j.start, j.end, j.attrs,
                                       j.error, j.line, self.order, j.resource))

    def flat(self, obj: dict[str, Any], line: int) -> None:
        self.order += 1
        self.add(None, _Span(None, None, obj.get("name"), None, None, dict(obj), None, line,
                             self.order, {}))

    # -------------------------------------------------------------------- build
    def grouped(self) -> Iterator[tuple[str, list[_Span]]]:
        """Spans per trace, in order of first appearance; ids written differently
        (hex in one export, base64 in another) are one trace."""
        out: dict[str, list[_Span]] = {}
        for raw, spans in self.traces.items():
            key = trace_key(raw) or self.source.trace_id
            if key in out:
                out[key].extend(spans)
            else:
                out[key] = spans
        return iter(out.items())


def _parent(s: dict[str, Any]) -> str | None:
    parent = s.get("parentSpanId")
    if parent is None:
        parent = s.get("parent_span_id")
    if type(parent) is not str or not parent:
        return _sid(parent)
    return parent


def _irregular_span(s: Any) -> tuple[dict[str, Any], Any, int | None, int | None,
                                     Any] | None:
    """(attributes, trace id, start, end, span id) of a span that is not in the usual
    camelCase shape (snake_case keys, missing times or ids, malformed attributes)."""
    if type(s) is not dict:
        return None
    attrs = _attributes(s.get("attributes"))
    tid = s.get("traceId")
    if tid is None:
        tid = s.get("trace_id")
    start = s.get("startTimeUnixNano")
    end = s.get("endTimeUnixNano")
    start = _nanos(start if start is not None else s.get("start_time_unix_nano"))
    end = _nanos(end if end is not None else s.get("end_time_unix_nano"))
    sid = s.get("spanId")
    if sid is None:
        sid = s.get("span_id")
    return attrs, tid, start, end, sid


def _has_messages(a: dict[str, Any]) -> bool:
    for k in _INPUT_MESSAGE_KEYS:
        if k in a:
            return True
    for k in _OUTPUT_MESSAGE_KEYS:
        if k in a:
            return True
    for _, markers, _, _ in _INDEXED:
        for m in markers:
            if m in a:
                return True
    return False


def _looks_like_schema(v: Any) -> bool:
    d = _json_value(v)
    return type(d) is dict and ("properties" in d or d.get("type") == "object")


_TIMES = ("startTimeUnixNano", "start_time_unix_nano", "endTimeUnixNano",
          "end_time_unix_nano")
_NO_TIME = 1 << 80  # spans without a start time sort last (stable: in file order)


def _start_key(s: _Span) -> int:
    return s.start if s.start is not None else _NO_TIME


def _once(spans: list[_Span]) -> list[_Span]:
    """Each span once: a span given again with the same id and values (a collector's
    retried export, overlapping exports joined) is the same span, whose calls and tokens
    are not counted twice. One whose id comes again with other values is read as a span of
    its own (Zipkin's shared client/server spans in a Jaeger export have one id). The
    values of a span id's spans are compared by their key (:func:`_values`), made only
    for an id that comes again: each span against all the others of its id made 20,000
    spans of one id take 23 s."""
    first: dict[Any, _Span] = {}
    known: dict[Any, set[tuple[Any, ...]]] = {}
    kept: list[_Span] = []
    for s in spans:
        if s.sid:
            f = first.setdefault(s.sid, s)
            if f is not s:
                keys = known.get(s.sid)
                if keys is None:
                    keys = known[s.sid] = {_values(f)}
                key = _values(s)
                if key in keys:
                    continue
                keys.add(key)
        kept.append(s)
    return kept


def _values(s: _Span) -> tuple[Any, ...]:
    """What makes a span given again the same span, as a key: its parent, name, times,
    attributes and error (the name and attributes, JSON of any shape, as their JSON with
    the keys sorted; one that cannot be written so is a span of its own)."""
    shape: bytes | int
    try:
        shape = orjson.dumps([s.name, s.attrs], option=orjson.OPT_SORT_KEYS)
    except (TypeError, ValueError, RecursionError):  # a huge int, a deep nesting
        shape = id(s)
    return (s.parent, s.start, s.end, s.error, shape)


def _build_trace(key: str, spans: list[_Span], file: str,
                 errors: list[InputError]) -> Trace:
    """One trace from its spans, in phases: sort by start time; classify the spans (tool
    calls, LLM calls, spans with messages); take calls, results and text from the
    messages; drop the LLM spans that only wrap an inner one; assemble. Its input errors
    (a call id reused for another call) are added to ``errors``."""
    if len(spans) > 1:
        spans.sort(key=_start_key)
        spans = _once(spans)
    b = _Build(spans, file, errors)
    b.classify()
    if b.with_messages:
        b.messages()
    llm_spans = _innermost(b.llm_spans, spans)
    output = _final_answer(b.agent_outputs, spans)
    if output is None:
        for s in reversed(llm_spans):
            output = b.span_output.get(s.order)
            if output is not None:
                break
    meta = b.meta
    res = spans[0].res
    if "service.name" in res:
        meta["service.name"] = res["service.name"]
    tid = _first_set(spans, "agent_eval.trace_id")
    scenario = _first_set(spans, "agent_eval.scenario")
    trace_id = str(tid) if tid is not None else key
    if trace_id != key:
        meta["otel.trace_id"] = key
    lo = min(s.line for s in spans)
    hi = max(s.line for s in spans)
    starts = [s.start for s in spans if s.start is not None]
    ends = [s.end for s in spans if s.end is not None]
    loc = Location(file, lo)
    return Trace(trace_id, file, loc, loc if hi == lo else Location(file, hi),
                 None if scenario is None else str(scenario),
                 b.agent_input if b.agent_input is not None else b.any_input, output,
                 b.calls, [_llm_call(s, file) for s in llm_spans],
                 (max(ends) - min(starts)) / 1e6 if starts and ends else None,
                 None, None, meta, "otlp")


def _first_set(spans: list[_Span], key: str) -> Any:
    """The first span's ``key`` (its attribute, else its resource's) that is not None."""
    for s in spans:
        v = s.attrs.get(key) or s.res.get(key)
        if v is not None:
            return v
    return None


def _innermost(llm_spans: list[_Span], spans: list[_Span]) -> list[_Span]:
    """Wrappers (agent framework, SDK instrumentation) report the usage of the same model
    call again on an enclosing span: keep the innermost span only."""
    if len(llm_spans) < 2:
        return llm_spans
    by_sid = {s.sid: s for s in spans if s.sid}
    covered: set[Any] = set()
    for s in llm_spans:
        p = s.parent
        hops = 0
        while p and p not in covered and hops < 256:
            covered.add(p)
            up = by_sid.get(p)
            p = up.parent if up is not None else None
            hops += 1
    if not covered:
        return llm_spans
    return [s for s in llm_spans if s.sid not in covered]


def _final_answer(answers: list[tuple[_Span, str]], spans: list[_Span]) -> str | None:
    """The trace's answer among its agent spans' answers: that of the last outermost one.
    An agent span below another that answered is a step of it (a sub-agent's); agent
    spans side by side (a handoff's agents, a conversation's turns) answer in turn, and
    the last one's answer is the final one."""
    if len(answers) < 2:
        return answers[0][1] if answers else None
    answering = {s.sid for s, _ in answers if s.sid}
    by_sid = {s.sid: s for s in spans if s.sid}
    final: str | None = None
    for s, text in answers:
        p = s.parent
        hops = 0
        while p and p not in answering and hops < 256:
            up = by_sid.get(p)
            p = up.parent if up is not None else None
            hops += 1
        if not (p and p in answering):
            final = text
    return final if final is not None else answers[0][1]


class _Build:
    """What the phases of :func:`_build_trace` collect."""

    def __init__(self, spans: list[_Span], file: str, errors: list[InputError]) -> None:
        self.spans = spans
        self.file = file
        self.errors = errors
        self.calls: list[ToolCall] = []
        self.seen = CallIndex()  # call id (or name and arguments, without one) -> calls
        self.with_messages: list[tuple[int, _Span, bool, int]] = []
        self.llm_spans: list[_Span] = []
        self.meta: dict[str, Any] = {}
        self.agent_input: str | None = None
        self.agent_outputs: list[tuple[_Span, str]] = []  # agent spans' answers, in order
        self.any_input: str | None = None
        self.span_output: dict[int, str] = {}  # order -> assistant text of an LLM span

    def classify(self) -> None:
        """Tool spans are tool calls; LLM spans are kept; agent spans and spans with
        messages are kept (with how many tool calls came before them)."""
        locs: dict[int, Location] = {}  # one Location object per line
        calls, meta = self.calls, self.meta
        for s in self.spans:
            a = s.attrs
            op = a.get("gen_ai.operation.name")
            kind = _LLM if op == "chat" else _kind(a)
            if kind == _TOOL:
                call = _tool_call(s, a, self.file, locs)
                named = a.get("gen_ai.tool.name", _first(a, _TOOL_NAME_KEYS))
                if named is not None and (type(named) is not str or not named):
                    self.errors.append(INPUT_INVALID_EVENT.input_error(
                        self.file, s.line, "a tool span's name attribute must be a "
                        f"non-empty string, not {json_type(named)}: it is read as the call "
                        f"of {clean_text(repr(call.name), 120)}, which rules naming its tool "
                        "may not see"))
                calls.append(call)
                if call.id is not None:
                    self.seen.add(call.id, call)
                continue
            if kind == _LLM:
                self.llm_spans.append(s)
            is_agent = op == "invoke_agent" or a.get("openinference.span.kind") in (
                "AGENT", "CHAIN")
            if is_agent and not meta:
                for mk in ("gen_ai.agent.name", "gen_ai.conversation.id"):
                    if a.get(mk) is not None:
                        meta[mk] = a[mk]
            if is_agent or _has_messages(a):
                self.with_messages.append((len(calls), s, is_agent, kind))

    def messages(self) -> None:
        """Tool calls recorded only in messages (deduplicated against execute_tool spans
        and against each other by call id), results, and the conversation's text."""
        # the calls of tool spans with a call id: a message call with that id and name is
        # the same call, whatever shape each recorded the arguments in
        spanned = {id(c) for c in self.calls if c.id is not None}
        # tool spans without a call id (OpenInference TOOL spans): a message call with the
        # same name and arguments is the same call
        anonymous = {_content_key(c.name, c.arguments): c for c in self.calls if c.id is None}
        # call id -> its first result in the messages (value, line); other results of it
        msg_results: dict[str, tuple[Any, int]] = {}
        more_results: dict[str, list[tuple[Any, int]]] = {}
        extra: list[tuple[int, ToolCall]] = []
        for pos, s, is_agent, kind in self.with_messages:
            a = s.attrs
            found: list[ToolCall] = []
            if _has_messages(a):
                user, assistant = _span_messages(s, self.file, spanned, self.seen, anonymous,
                                                 found, msg_results, more_results,
                                                 self.errors)
            else:
                iv, ov = a.get("input.value"), a.get("output.value")
                user = iv if type(iv) is str else None
                assistant = ov if type(ov) is str else None
            extra.extend((pos, c) for c in found)
            self.text(s, is_agent, kind, user, assistant)
        for cid, (value, line) in msg_results.items():
            if self.answer(cid, value, line):
                for value, line in more_results.get(cid, ()):
                    if not self.answer(cid, value, line):
                        break
        if extra:
            self.calls = _merge(self.calls, extra)

    def answer(self, cid: str, value: Any, line: int) -> bool:
        """A result found in the messages, for the earliest call with that id that has none
        (unless a call with that id has it already); False when no call is left open."""
        seen = self.seen
        if seen.has_result(cid, value):
            return True
        answered = seen.open(cid)
        if answered is None:
            return False
        answered.result = value
        answered.has_result = True
        answered.result_location = Location(self.file, line)
        return True

    def text(self, s: _Span, is_agent: bool, kind: int, user: str | None,
             assistant: str | None) -> None:
        """The input and output: an agent span's first, else any span's."""
        if user is not None:
            if is_agent and self.agent_input is None:
                self.agent_input = user
            if self.any_input is None:
                self.any_input = user
        if assistant is not None:
            if is_agent:
                self.agent_outputs.append((s, assistant))
            elif kind == _LLM:
                self.span_output[s.order] = assistant


def _merge(calls: list[ToolCall], extra: list[tuple[int, ToolCall]]) -> list[ToolCall]:
    """``calls`` with each ``(position, call)`` of ``extra`` before the call at that
    position (at the end when it is past the last)."""
    merged: list[ToolCall] = []
    k = 0
    for i, call in enumerate(calls):
        while k < len(extra) and extra[k][0] <= i:
            merged.append(extra[k][1])
            k += 1
        merged.append(call)
    merged.extend(c for _, c in extra[k:])
    return merged


def _add_evaluation(trace: Trace, a: dict[str, Any], line: int) -> None:
    """A ``gen_ai.evaluation.result`` as a recorded score of the trace."""
    error = a.get("error.type")
    comment = a.get("gen_ai.evaluation.explanation")
    if error is not None:
        comment = f"the evaluation failed: {error}" + (f"; {comment}" if comment else "")
    add_score(trace, a.get(EVALUATION_NAME),
              None if error is not None else a.get("gen_ai.evaluation.score.value"),
              Location(trace.source, line), source="otlp",
              label=a.get("gen_ai.evaluation.score.label"), comment=comment)


def _tool_call(s: _Span, a: dict[str, Any], file: str, locs: dict[int, Location]) -> ToolCall:
    name = a.get("gen_ai.tool.name")
    if name is None:
        name = _first(a, _TOOL_NAME_KEYS)
        if name is None:
            n = s.name if type(s.name) is str else ""
            name = n[len("execute_tool "):] if n.startswith("execute_tool ") else (
                n or "unknown")
    raw = a.get("gen_ai.tool.call.arguments")
    semconv = raw is not None
    if raw is None:
        raw = _first(a, _TOOL_ARG_KEYS)
        if raw is None:
            params = a.get("tool.parameters")
            if params is not None and not _looks_like_schema(params):
                raw = params
    if type(raw) is str:
        try:
            args: Any = _loads(raw)
            why = None
            if type(args) is not dict:
                args, why = decode_arguments(raw)
        except _JSONDecodeError:
            args, why = decode_arguments(raw)
    elif raw is None:  # gen_ai.tool.call.arguments is opt-in: not recorded, not {}
        args, why = None, None
    else:
        args, why = decode_arguments(raw)
    cid = a.get("gen_ai.tool.call.id")
    if cid is None:
        cid = _first(a, _TOOL_ID_KEYS)
    result = a.get("gen_ai.tool.call.result")
    if result is None and not semconv:  # a semconv span keeps its result there or nowhere
        result = _first(a, _TOOL_RESULT_KEYS)
    error = s.error
    if error is None and a.get("error.type") is not None:
        error = str(a["error.type"])
    latency = None if s.start is None or s.end is None else (s.end - s.start) / 1e6
    loc = locs.get(s.line)
    if loc is None:
        loc = locs[s.line] = Location(file, s.line)
    has_result = result is not None or error is not None
    return ToolCall(str(name), args, loc, None if cid is None else str(cid), result, error,
                    error is None, latency, loc if has_result else None, why, has_result,
                    raw is not None)


def _content_key(name: Any, args: Any) -> str:
    return "\0" + str(name) + "\0" + orjson.dumps(
        args, option=orjson.OPT_SORT_KEYS, default=str).decode()


def _span_messages(s: _Span, file: str, spanned: set[int], seen: CallIndex,
                   anonymous: dict[str, ToolCall], calls: list[ToolCall],
                   msg_results: dict[str, tuple[Any, int]],
                   more_results: dict[str, list[tuple[Any, int]]],
                   errors: list[InputError]) -> tuple[str | None, str | None]:
    """Tool calls and results carried only inside chat messages; (user, assistant) text.
    A message call is a call seen before with its id when it has the same name and the
    same arguments (a history repeated in every chat span), or the same name as a tool
    span's call; another call under a known id is a call of its own, and an input error."""
    a = s.attrs
    line = s.line

    def on_call(cid: Any, name: Any, raw: Any) -> None:
        args, why = decode_arguments(raw)
        content = _content_key(name, args)
        label = str(name) if name is not None else "unknown"
        if type(name) is not str or not name:
            errors.append(INPUT_INVALID_EVENT.input_error(
                file, line, "a tool call in the span's messages without a name (a "
                f"non-empty string, not {json_type(name)}): it is read as the call of "
                f"{clean_text(repr(label), 120)}, which rules naming its tool cannot see"))
        if cid is not None:
            key = str(cid)
            first = seen.first(key)
            if first is not None:
                if _is_call(first, label, args, why, spanned):
                    return
                if seen.last(key) is not first and any(  # a reused id: the others too
                        _is_call(c, label, args, why, spanned) for c in seen.calls(key)):
                    return
                errors.append(reused_call_id(key, first, file, line))
            else:
                twin = anonymous.pop(content, None)
                if twin is not None:  # its tool span recorded no call id: the same call
                    twin.id = key
                    seen.add(key, twin)
                    return
        else:
            key = content
            if key in seen or content in anonymous:
                return
        call = ToolCall(name=label, arguments=args, location=Location(file, line),
                        id=None if cid is None else str(cid), arguments_error=why)
        seen.add(key, call)
        calls.append(call)

    def on_result(cid: Any, value: Any) -> None:
        if cid is None:
            return
        key = str(cid)
        first = msg_results.get(key)
        if first is None:
            msg_results[key] = (value, line)
        elif first[0] != value:  # another result under that id (a reused id)
            more = more_results.setdefault(key, [])
            if all(v != value for v, _ in more):
                more.append((value, line))

    def messages(k: str, v: Any) -> list[dict[str, Any]]:
        d = _json_value(v)
        if d is v and type(v) is str and _MESSAGES_START.match(v) and "tool" in v:
            # JSON cut short (an attribute length limit): read as text, its calls unseen
            # (a text that only starts with a bracket, "[1] the search tool", is no JSON)
            errors.append(INPUT_INVALID_EVENT.input_error(
                file, line, f"the span's {k} is not valid JSON (cut at an attribute length "
                "limit, OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT?): the tool calls and results in "
                "it cannot be read; raise the limit"))
        return _messages(d)

    user = assistant = None
    for k in _INPUT_MESSAGE_KEYS:
        v = a.get(k)
        if v is not None:
            u, _ = _scan(messages(k, v), on_call, on_result)
            user = user or u
    for prefix, markers, is_output, oi in _INDEXED:
        if any(m in a for m in markers):
            u, t = _scan(_indexed(a, prefix, oi), on_call, on_result)
            if is_output:
                assistant = t or assistant
            else:
                user = user or u
    for k in _OUTPUT_MESSAGE_KEYS:
        v = a.get(k)
        if v is not None:
            _, t = _scan(messages(k, v), on_call, on_result)
            assistant = t or assistant
    return user, assistant


def _is_call(call: ToolCall, name: str, args: Any, why: str | None, spanned: set[int]) -> bool:
    """Whether a message call with the id of ``call`` is ``call``: the same name as a tool
    span's call (each records the arguments in its own shape), or the same name and
    arguments as a message call."""
    return call.name == name and (id(call) in spanned or (
        call.arguments == args and call.arguments_error == why))


def _llm_call(s: _Span, file: str) -> LlmCall:
    a = s.attrs
    i = _int(a, _INPUT_TOKEN_KEYS)
    o = _int(a, _OUTPUT_TOKEN_KEYS)
    total = _int(a, _TOTAL_TOKEN_KEYS)
    if total is None and i is not None and o is not None:
        total = i + o
    cost = _float(a.get("llm.cost.total"))
    if cost is None:
        p, c = _float(a.get("llm.cost.prompt")), _float(a.get("llm.cost.completion"))
        cost = p + c if p is not None and c is not None else _float(a.get("gen_ai.usage.cost"))
    model = _first(a, _MODEL_KEYS)
    return LlmCall(
        location=Location(file, s.line),
        model=None if model is None else str(model),
        input_tokens=i,
        output_tokens=o,
        total_tokens=total,
        cost_usd=cost,
        latency_ms=None if s.start is None or s.end is None else (s.end - s.start) / 1e6,
    )


# ------------------------------------------------------------------------ reader
class OtlpReader:
    name = "otlp"

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        # each pattern's literals looked for first (a quicker search than the pattern's)
        return sniffs.otlp(head, source)

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        state = _FileState(source)
        with gc_paused():
            try:
                if source.path.lower().endswith(LINE_SUFFIXES):
                    with open(source.path, "rb") as fh:
                        self._lines(state, fh)
                else:
                    with open(source.path, "rb") as fh:
                        data = read_whole(fh, source.limits)
                    self._document(state, data)
            except OSError as exc:
                state.error(INPUT_UNREADABLE_FILE, 0, f"cannot read the file: {exc}")
        state.join_logged()
        if not state.traces and not state.had_errors:
            state.error(INPUT_INVALID_EVENT, 0,
                        "the file holds no spans; nothing of it can be checked")
        yield from state.errors
        state.errors.clear()
        evals: dict[str, list[tuple[dict[str, Any], int]]] = {}
        for raw, found in state.evals.items():
            evals.setdefault(trace_key(raw) or source.trace_id, []).extend(found)
        for key, spans in state.grouped():
            built: list[InputError] = []
            with gc_paused():
                trace = _build_trace(key, spans, state.file, built)
            yield from built
            for attrs, line in evals.pop(key, ()):
                _add_evaluation(trace, attrs, line)
            yield trace
        state.ignored += sum(len(v) for v in evals.values())  # of traces without spans
        if state.ignored:
            yield IgnoredEvents(source.file, state.ignored)

    def _lines(self, state: _FileState, lines: Iterable[bytes]) -> None:
        value = state.value
        for number, raw in enumerate(lines, 1):
            if number == 1:
                raw = raw.removeprefix(_BOM)
            try:
                obj = _loads(raw)
            except _JSONDecodeError as exc:
                if raw.strip():
                    state.error(INPUT_PARSE_ERROR, number,
                                f"line is not valid JSON ({exc}); fix or remove the line")
                continue
            value(obj, number, None, ())

    def _document(self, state: _FileState, data: bytes) -> None:
        data = data.removeprefix(_BOM)
        try:
            doc = _loads(data)
        except _JSONDecodeError:
            # not one document: JSON lines in a file not named .jsonl
            self._lines(state, data.splitlines(keepends=True))
            return
        text = data.decode("utf-8", errors="replace")
        if text.count("\n") <= 1:
            state.value(doc, 1, None, ())
        else:
            state.value(doc, 1, container_lines(text), ())


READER = OtlpReader()
