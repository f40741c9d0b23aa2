"""OpenAI Chat Completions and Responses API traces (docs/formats/openai_chat.md,
docs/formats/openai_responses.md).

A file is one conversation (one trace). It may be:

- one JSON document: a request body (``messages`` / ``input``), a response body
  (``chat.completion`` / ``response``), a bare array of messages or items, or an object
  ``{"request": ..., "response": ...}`` (or an array of them);
- JSON lines, each one of the above (a request/response log: histories that repeat in
  every request are deduplicated by call id, tool name and arguments);
- a VCR cassette (``interactions:``) recorded against ``/chat/completions`` or
  ``/responses``: its request and response bodies, in order.

:class:`Conversation` assembles calls, results, LLM calls and text from messages or
items in file order; the Agents SDK and Codex readers use it too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, NamedTuple, TypeGuard

import orjson

from agent_eval.errors import InputError
from agent_eval.jsonutil import json_type, read_whole
from agent_eval.jsonutil import loads as bounded_loads
from agent_eval.model import LlmCall, Location, ToolCall, Trace
from agent_eval.readers import sniffs
from agent_eval.readers._foreign import BOM as _BOM
from agent_eval.readers._foreign import LINE_SUFFIXES
from agent_eval.readers.base import (
    CALL_PARTS,
    IgnoredEvents,
    ReadItem,
    SourceFile,
    foreign_part,
    reused_call_id,
    same_call,
)
from agent_eval.readers.cassette import (
    BodyError,
    Cassette,
    body_text,
    no_response,
    read_cassette,
)
from agent_eval.readers.jsonpos import JsonPath, container_lines, nearest_line
from agent_eval.readers.native import decode_arguments
from agent_eval.rule_ids import (
    INPUT_INVALID_EVENT,
    INPUT_PARSE_ERROR,
    INPUT_UNMATCHED_RESULT,
    INPUT_UNREADABLE_FILE,
    Rule,
)

_loads = bounded_loads
_JSONDecodeError = orjson.JSONDecodeError


# --------------------------------------------------------------------------- helpers
def text_of(content: Any) -> str | None:
    """The text of message content: a string, or the text parts of a part list."""
    if type(content) is str:
        return content
    if type(content) is list:
        parts: list[str] = []
        for p in content:
            if type(p) is str:
                parts.append(p)
            elif type(p) is dict and p.get("type") in (None, "text", "input_text",
                                                        "output_text", "refusal"):
                t = p.get("text", p.get("refusal"))
                if type(t) is str:
                    parts.append(t)
        return "\n".join(parts) if parts else None
    if type(content) is dict:
        t = content.get("text")
        return t if type(t) is str else None
    return None


def count(value: Any) -> int | None:
    """A recorded token count, or None (missing, null, not an integer)."""
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    return None


def usage_counts(usage: Any) -> tuple[int | None, int | None, int | None]:
    """(input, output, total) tokens of a usage object (Responses or Chat Completions
    names); the total is the sum when it is not recorded."""
    i = o = total = None
    if type(usage) is dict:
        i = count(usage.get("input_tokens", usage.get("prompt_tokens")))
        o = count(usage.get("output_tokens", usage.get("completion_tokens")))
        total = count(usage.get("total_tokens"))
        if total is None and i is not None and o is not None:
            total = i + o
    return i, o, total


def iso_ms(value: Any) -> float | None:
    """An ISO 8601 timestamp (``Z`` or an offset) in epoch milliseconds."""
    if type(value) is not str:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000.0
    except ValueError:
        return None


class Lines:
    """Line numbers of JSON paths of one document (lazy), or one fixed line."""

    __slots__ = ("_lines", "_text", "fixed")

    def __init__(self, text: str | None = None, fixed: int = 1) -> None:
        self._text = text
        self._lines: dict[JsonPath, int] | None = None
        self.fixed = fixed

    def __call__(self, path: JsonPath) -> int:
        if self._text is None:
            return self.fixed
        if self._lines is None:
            self._lines = container_lines(self._text)
        return nearest_line(self._lines, path)


def load_file(source: SourceFile) -> tuple[list[tuple[Any, Lines]], list[InputError]]:
    """A JSON document (``[(doc, lines)]``) or JSON lines (one entry per line, for
    ``.jsonl``-like names or when the document does not parse but its first line does);
    lines that are not JSON become ``input/parse_error`` records."""
    with open(source.path, "rb") as fh:
        data = read_whole(fh, source.limits).removeprefix(_BOM)
    if not data.strip():
        return [], []
    if not source.path.lower().endswith(LINE_SUFFIXES):
        try:
            doc = _loads(data)
        except _JSONDecodeError as exc:
            first = next((ln for ln in data.split(b"\n", 2)[:2] if ln.strip()), b"")
            try:
                _loads(first)
            except _JSONDecodeError:
                line = data[: getattr(exc, "pos", 0) or 0].count(b"\n") + 1
                return [], [INPUT_PARSE_ERROR.input_error(source.file, line,
                                                          f"file is not valid JSON ({exc})")]
        else:
            text = data.decode("utf-8", errors="replace")
            return [(doc, Lines(text if "\n" in text.strip() else None))], []
    out: list[tuple[Any, Lines]] = []
    errors: list[InputError] = []
    for n, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            out.append((_loads(raw), Lines(None, n)))
        except _JSONDecodeError as exc:
            errors.append(INPUT_PARSE_ERROR.input_error(
                source.file, n,
                f"line is not valid JSON ({exc}); fix or remove the line"))
    return out, errors


# ---------------------------------------------------------------------- the builder
class Conversation:
    """One trace assembled from OpenAI-style messages or items, in file order.

    A call whose id was seen before with the same tool name and arguments is that call
    again (a request log repeats the history; an append-only log may repeat a row): it
    is not counted twice. ``replays`` says which: ``"same"`` (a history, said nowhere) or
    ``"new"`` (a duplicated row, counted in ``metadata["duplicates_dropped"]``). A call
    that reuses an id with another name or other arguments is a call of its own, and an
    ``input/invalid_event`` at its line."""

    def __init__(self, source: SourceFile, fmt: str, line: int, replays: str = "same") -> None:
        self.file = source.file
        loc = Location(source.file, line)
        self.trace = Trace(id=source.trace_id, source=source.file, location=loc,
                           end_location=loc, format=fmt)
        self.by_id: dict[str, list[ToolCall]] = {}
        self.by_name: dict[str, list[ToolCall]] = {}  # legacy function calls (no id)
        self.raw: dict[int, Any] = {}  # id(call) -> raw arguments (exact-repeat check)
        # call id -> the call seen again (a replay) after the latest call with that id
        self.replayed: dict[str, ToolCall] = {}
        self.errors: list[InputError] = []
        self.replays = replays
        self.unmatched: list[tuple[str, int]] = []
        self.ignored = 0
        self.model: str | None = None
        # streamed responses being put together (see chat_chunk, responses_event)
        self.streams: dict[tuple[str, Any], _ChunkStream] = {}
        self.stream_llm: dict[str, LlmCall] = {}
        self.items: dict[str, _StreamedItem] = {}

    # ---------------------------------------------------------------- locations
    def touch(self, line: int) -> None:
        t = self.trace
        if line > t.end_location.line:
            t.end_location = Location(self.file, line)
        if line < t.location.line:
            t.location = Location(self.file, line)

    def error(self, rule: Rule, line: int, message: str) -> None:
        self.errors.append(rule.input_error(self.file, line, message))

    # -------------------------------------------------------------------- calls
    def call(self, name: Any, raw: Any, cid: Any, line: int, *,
             latency: float | None = None) -> ToolCall | None:
        """A tool call; None when it is a repeat of a call already recorded (same id, name
        and arguments)."""
        self.touch(line)
        key = None if cid is None or cid == "" else str(cid)
        label = str(name) if name is not None else "unknown"
        decoded: tuple[Any, str | None] | None = None
        if key is not None:
            known = self.by_id.get(key)
            if known:
                for c in known:
                    if c.name != label:
                        continue
                    if self.raw.get(id(c)) != raw:  # maybe the same, written otherwise
                        if decoded is None:
                            decoded = decode_arguments(raw)
                        if not same_call(c, label, *decoded):
                            continue
                    self.replayed[key] = c
                    if self.replays == "new":
                        self.trace.metadata["duplicates_dropped"] = \
                            self.trace.metadata.get("duplicates_dropped", 0) + 1
                    return None
                self.errors.append(reused_call_id(key, known[0], self.file, line))
        if name is None or name == "":
            self.error(INPUT_INVALID_EVENT, line,
                       "a tool call without a tool name: it is read as a call of "
                       f"'{label}', which no rule naming a tool matches; record the name")
        args, why = decoded if decoded is not None else decode_arguments(raw)
        call = ToolCall(name=label, arguments=args,
                        location=Location(self.file, line), id=key, arguments_error=why,
                        latency_ms=latency)
        self.trace.tool_calls.append(call)
        self.raw[id(call)] = raw
        if key is not None:
            self.by_id.setdefault(key, []).append(call)
            if self.replayed:
                self.replayed.pop(key, None)
        else:
            self.by_name.setdefault(call.name, []).append(call)
        return call

    def result(self, cid: Any, value: Any, line: int, *, error: str | None = None,
               name: Any = None, latency: float | None = None) -> ToolCall | None:
        """Attach a result to the earliest call with that id that has none (or, without
        an id, to the latest open call of ``name``). Returns the call, or None when
        nothing matched (recorded in ``unmatched``) or when it repeats a known result: the
        result of the call with that id seen last (a history repeated before a later call
        that reuses the id), or of any call with that id when none is open."""
        self.touch(line)
        key = None if cid is None or cid == "" else str(cid)
        call = None
        if key is not None:
            known = self.by_id.get(key, ())
            last = self.replayed.get(key) or (known[-1] if known else None)
            if last is not None and last.has_result and last.result == value:
                return None  # the same result again (a repeated history)
            call = next((c for c in known if not c.has_result), None)
            if call is None and any(c.result == value for c in known):
                return None  # the same result again (a repeated history)
        elif name is not None:
            pending = [c for c in self.by_name.get(str(name), ()) if not c.has_result]
            call = pending[-1] if pending else None
        if call is None:
            self.unmatched.append((key or str(name), line))
            return None
        call.result = value
        call.has_result = True
        call.result_location = Location(self.file, line)
        if error is not None:
            call.ok = False
            call.error = error
        if latency is not None:
            call.latency_ms = latency
        return call

    def report_unmatched(self, what: str = "output") -> None:
        for key, line in self.unmatched:
            self.error(INPUT_UNMATCHED_RESULT, line,
                       f"tool {what} for call id '{key}' matches no earlier tool call in "
                       f"trace '{self.trace.id}'")
        self.unmatched.clear()

    def is_object(self, value: Any, line: int, what: str) -> TypeGuard[dict[str, Any]]:
        """True for a JSON object (the trace then reaches ``line``); else an error."""
        if type(value) is not dict:
            self.error(INPUT_INVALID_EVENT, line,
                       f"{what} must be a JSON object, not {json_type(value)}")
            return False
        self.touch(line)
        return True

    def asked(self, request: dict[str, Any]) -> None:
        """A request: the model it asks for is the model of the calls whose response
        names none."""
        if self.model is None and request.get("model") is not None:
            self.model = str(request["model"])

    # ---------------------------------------------------------------- LLM calls
    def llm(self, model: Any, usage: Any, line: int, *, latency: float | None = None,
            cost: float | None = None) -> LlmCall:
        self.touch(line)
        i, o, total = usage_counts(usage)
        m = model if model is not None else self.model
        call = LlmCall(location=Location(self.file, line),
                       model=None if m is None else str(m), input_tokens=i,
                       output_tokens=o, total_tokens=total, cost_usd=cost, latency_ms=latency)
        self.trace.llm_calls.append(call)
        return call

    # --------------------------------------------------------------------- text
    def user(self, text: str | None) -> None:
        if text is None:
            return
        if self.trace.input is None:
            self.trace.input = text
        self.trace.output = None  # an answer must come after the latest request

    def assistant(self, text: str | None) -> None:
        if text is not None:
            self.trace.output = text

    def end_streams(self) -> None:
        """The streams the file holds no end of (cut off): their calls as far as they
        were streamed (never dropped)."""
        for key in list(self.streams):
            self.streams.pop(key).end(self)
        for item in list(self.items.values()):
            item.end(self)
        self.items.clear()

    def finish(self) -> Iterator[ReadItem]:
        yield from self.errors
        self.errors.clear()
        yield self.trace
        if self.ignored:
            yield IgnoredEvents(self.file, self.ignored)


def foreign_parts(conv: Conversation, content: list[Any], line: int, fmt: str) -> None:
    """An ``input/invalid_event`` for each content part that holds a call or result of
    another format (no OpenAI message holds one): never read as a message without it."""
    for p in content:
        if type(p) is dict:
            kind = p.get("type")
            if type(kind) is str and kind in CALL_PARTS:
                conv.errors.append(foreign_part(kind, fmt, conv.file, line))


# ------------------------------------------------------------- Chat Completions
def chat_message(conv: Conversation, m: Any, lines: Lines, path: JsonPath) -> None:
    """One Chat Completions message; each tool call is located at its own object."""
    line = lines(path)
    if not conv.is_object(m, line, "a message"):
        return
    role = m.get("role")
    content = m.get("content")
    if type(content) is list:
        foreign_parts(conv, content, line, "Chat Completions")
    if role == "tool":
        if m.get("tool_call_id") is None:
            conv.error(INPUT_INVALID_EVENT, line,
                       "a 'tool' message without 'tool_call_id' matches no call; add the "
                       "id of the assistant's tool call")
            return
        conv.result(m.get("tool_call_id"), content, line)
        return
    if role == "function":  # legacy functions API: results matched by name
        conv.result(None, content, line, name=m.get("name"))
        return
    if role == "user":
        conv.user(text_of(content))
        return
    if role != "assistant":
        if role not in ("system", "developer"):
            conv.ignored += 1  # no Chat Completions role: counted, never passed over
        return
    for _, tc, at in _tool_call_items(conv, m.get("tool_calls"), lines, path):
        custom = tc.get("custom")
        if tc.get("type") == "custom" and type(custom) is dict:  # a custom tool: free text
            conv.call(custom.get("name"), {"input": custom.get("input")}, tc.get("id"), at)
            continue
        fn = tc.get("function")
        fn = fn if type(fn) is dict else tc  # some logs flatten the function
        conv.call(fn.get("name"), fn.get("arguments"), tc.get("id"), at)
    fc = m.get("function_call")
    if type(fc) is dict:
        conv.call(fc.get("name"), fc.get("arguments"), None,
                  lines((*path, "function_call")))
    text = text_of(content)
    if text:
        conv.assistant(text)


def chat_messages(conv: Conversation, msgs: Any, lines: Lines, path: JsonPath) -> None:
    if type(msgs) is not list:
        return
    for i, m in enumerate(msgs):
        chat_message(conv, m, lines, (*path, i))


def chat_response(conv: Conversation, body: dict[str, Any], lines: Lines,
                  path: JsonPath) -> None:
    line = lines(path)
    # every choice (a request with n > 1 has several): a call any of them asked for may
    # be the one the agent ran, so none is passed over (as in a streamed response). The
    # answer is the first choice's (what an SDK's choices[0] gives the agent); another
    # choice answering otherwise is said: the output checks never read what it said
    answer: tuple[int, str] | None = None
    for k, choice, at in _choices(conv, body, "a response's", lines, path):
        msg = choice.get("message")
        if type(msg) is dict:
            role = msg.get("role") or "assistant"
            chat_message(conv, {**msg, "role": role}, lines, (*at, "message"))
            text = text_of(msg.get("content")) if role == "assistant" else None
            if not text:
                continue
            if answer is None:
                answer = (k, text)
            elif text != answer[1]:
                conv.error(INPUT_INVALID_EVENT, lines((*at, "message")),
                           f"choice {k} of the response answers otherwise than choice "
                           f"{answer[0]}: the output checks read choice {answer[0]}'s "
                           f"answer, so what choice {k} said was not checked; record "
                           "the answer the agent gave")
    if answer is not None:
        conv.trace.output = answer[1]
    conv.llm(body.get("model"), body.get("usage"), line)
    _remember(conv, "response_ids", body.get("id"))


def _remember(conv: Conversation, key: str, value: Any) -> None:
    if value is not None:
        conv.trace.metadata.setdefault(key, []).append(value)


def is_chat_response(obj: dict[str, Any]) -> bool:
    o = obj.get("object")
    return o == "chat.completion" or (o is None and type(obj.get("choices")) is list)


def unwrap(conv: Conversation, obj: Any, lines: Lines, path: JsonPath, what: str,
           visit: Callable[[Conversation, Any, Lines, JsonPath], None]) -> dict[str, Any] | None:
    """The envelopes both OpenAI APIs' logs share: a list of values, a request/response
    pair (with or without ``body``), a Batch API line ``{"custom_id", "body"}``. Visits
    what they hold and returns None, or returns ``obj`` itself when it is a body."""
    if type(obj) is list:
        for i, item in enumerate(obj):
            visit(conv, item, lines, (*path, i))
        return None
    if type(obj) is not dict:
        conv.error(INPUT_INVALID_EVENT, lines(path),
                   f"expected {what}, not {json_type(obj)}")
        return None
    if "request" in obj or "response" in obj:
        for part in ("request", "response"):
            body = obj.get(part)
            if type(body) is dict:
                inner = body.get("body") if type(body.get("body")) is dict else None
                visit(conv, inner or body, lines,
                      (*path, part, "body") if inner else (*path, part))
        return None
    if type(obj.get("body")) is dict:  # a Batch API input line: {"custom_id", "body"}
        visit(conv, obj["body"], lines, (*path, "body"))
        return None
    return obj


class _Api(NamedTuple):
    """How one OpenAI API's values read (see :func:`_api_value`)."""

    visit: Callable[[Conversation, Any, Lines, JsonPath], None]  # any value of the API
    what: str  # what a value must be, for the error
    is_response: Callable[[dict[str, Any]], bool]
    response: Callable[[Conversation, dict[str, Any], Lines, JsonPath], None]
    request_key: str  # a request holds its conversation under it
    request: Callable[[Conversation, dict[str, Any], Lines, JsonPath], None]
    single: Callable[[Conversation, dict[str, Any], Lines, JsonPath], bool]  # one message
    neither: str  # the error for a body that is none of them


def _api_value(api: _Api, conv: Conversation, obj: Any, lines: Lines,
               path: JsonPath) -> None:
    """A value of ``api``: a response, a request, one message / item, or an envelope or
    list of them (:func:`unwrap`)."""
    body = unwrap(conv, obj, lines, path, api.what, api.visit)
    if body is None:
        return
    if api.is_response(body):
        api.response(conv, body, lines, path)
    elif api.request_key in body and (api.request_key != "input" or _is_request(body)):
        conv.asked(body)
        api.request(conv, body, lines, path)
    elif not api.single(conv, body, lines, path):
        conv.error(INPUT_INVALID_EVENT, lines(path), api.neither)


def chat_value(conv: Conversation, obj: Any, lines: Lines, path: JsonPath) -> None:
    """Any Chat Completions shape: message, request, response, pair, or a list."""
    _api_value(_CHAT, conv, obj, lines, path)


def _chat_request(conv: Conversation, body: dict[str, Any], lines: Lines,
                  path: JsonPath) -> None:
    chat_messages(conv, body.get("messages"), lines, (*path, "messages"))


def _chat_single(conv: Conversation, body: dict[str, Any], lines: Lines,
                 path: JsonPath) -> bool:
    if "role" in body:
        chat_message(conv, body, lines, path)
    elif body.get("object") == "chat.completion.chunk":
        chat_chunk(conv, body, lines, path)
    else:
        return False
    return True


class _ChunkStream:
    """One choice of a streamed Chat Completions response (``chat.completion.chunk``s
    with one ``id``): its tool calls by ``index`` (id, name, argument pieces, line) and
    its text, read as one assistant message when the choice finishes."""

    __slots__ = ("calls", "order", "text")

    def __init__(self) -> None:
        self.calls: dict[Any, list[Any]] = {}  # index -> the call being put together
        self.order: list[list[Any]] = []  # every call, in the order they started
        self.text: list[str] = []

    def part(self, index: Any, cid: Any, fn: dict[str, Any], line: int, *,
             key: str = "arguments", custom: bool = False) -> None:
        """A piece of the call at ``index``: its id and name once, its ``key`` (the
        arguments, or a custom tool's input) a piece of text (or, from a logger that
        stored it decoded, the whole value). A piece that names a call (the piece a call
        starts with) with another name or another id than the call at its index has is
        another call (servers that give every call the index 0, or none): a call of its
        own, never merged into the one before. A piece without a name continues the call
        whatever its id (servers that give a call's later pieces another id than its
        first, or an empty one)."""
        call = self.calls.get(index)
        name = fn.get("name")
        if call is not None and name and (
                (call[1] is not None and name != call[1])
                or (cid and call[0] is not None and cid != call[0])):
            call = None
        if call is None:  # id, name, text pieces, line, custom, the value when not text
            call = self.calls[index] = [None, None, [], line, custom, None]
            self.order.append(call)
        if cid is not None and call[0] is None:
            call[0] = cid
        if name and call[1] is None:
            call[1] = name
        value = fn.get(key)
        if type(value) is str:
            call[2].append(value)
        elif value is not None:
            call[5] = value

    def end(self, conv: Conversation) -> None:
        for cid, name, pieces, line, custom, whole in self.order:
            raw = whole if whole is not None and not pieces else "".join(pieces)
            conv.call(name, {"input": raw} if custom else raw, cid, line)
        if self.text:
            conv.assistant("".join(self.text))


def chat_chunk(conv: Conversation, body: dict[str, Any], lines: Lines,
               path: JsonPath) -> None:
    """A ``chat.completion.chunk`` of a streamed response: its choices' deltas are put
    together; a choice's tool calls are read when it finishes (``finish_reason``) or the
    file ends. The first chunk of a response is its LLM call; a chunk with ``usage`` (the
    last one, with ``stream_options.include_usage``) gives its tokens."""
    line = lines(path)
    conv.touch(line)
    rid = str(body.get("id"))
    llm = conv.stream_llm.get(rid)
    if llm is None:
        llm = conv.stream_llm[rid] = conv.llm(body.get("model"), None, line)
        _remember(conv, "response_ids", body.get("id"))
    if type(body.get("usage")) is dict:
        llm.input_tokens, llm.output_tokens, llm.total_tokens = usage_counts(body["usage"])
    for k, ch, at in _choices(conv, body, "a chunk's", lines, path):
        index = ch.get("index")
        key = (rid, index if type(index) is int else k)
        stream = conv.streams.get(key)
        if stream is None:
            stream = conv.streams[key] = _ChunkStream()
        delta = ch.get("delta")
        if type(delta) is dict:
            _chunk_delta(conv, stream, delta, lines, (*at, "delta"))
        if ch.get("finish_reason") is not None:
            conv.streams.pop(key).end(conv)


def _choices(conv: Conversation, body: dict[str, Any], whose: str, lines: Lines,
             path: JsonPath) -> Iterator[tuple[int, dict[str, Any], JsonPath]]:
    """The items of a response's or a chunk's ``choices`` that are objects, with their
    index and path; any other item is an input error at its line."""
    choices = body.get("choices")
    for k, choice in enumerate(choices if type(choices) is list else ()):
        at = (*path, "choices", k)
        if type(choice) is dict:
            yield k, choice, at
        else:
            conv.error(INPUT_INVALID_EVENT, lines(at),
                       f"{whose} choice must be a JSON object, not {json_type(choice)}")


def _tool_call_items(conv: Conversation, tool_calls: Any, lines: Lines, path: JsonPath
                     ) -> Iterator[tuple[int, dict[str, Any], int]]:
    """The items of a message's or a chunk's ``tool_calls`` list that are objects, with
    their index and line; any other item is an input error at its line (the call in it
    cannot be read)."""
    for j, tc in enumerate(tool_calls if type(tool_calls) is list else ()):
        at = lines((*path, "tool_calls", j))
        if type(tc) is dict:
            yield j, tc, at
        else:
            conv.error(INPUT_INVALID_EVENT, at,
                       f"a 'tool_calls' item must be a JSON object, not {json_type(tc)}; "
                       "the call in it cannot be read")


def _chunk_delta(conv: Conversation, stream: _ChunkStream, delta: dict[str, Any],
                 lines: Lines, path: JsonPath) -> None:
    for j, tc, at in _tool_call_items(conv, delta.get("tool_calls"), lines, path):
        index = tc.get("index")
        index = index if type(index) is int else j
        custom = tc.get("custom")
        if type(custom) is dict:  # a custom tool: its input streamed as text
            stream.part(index, tc.get("id"), custom, at, key="input", custom=True)
            continue
        fn = tc.get("function")
        stream.part(index, tc.get("id"), fn if type(fn) is dict else tc, at)
    fc = delta.get("function_call")
    if type(fc) is dict:  # the legacy functions API: one call, no id
        stream.part("function_call", None, fc, lines((*path, "function_call")))
    text = delta.get("content")
    if type(text) is str:
        stream.text.append(text)


_CHAT = _Api(chat_value, "a Chat Completions request, response or message",
             is_chat_response, chat_response, "messages", _chat_request, _chat_single,
             "not a Chat Completions request (messages), response (choices) or message "
             "(role)")


# ------------------------------------------------------------------ Responses API
_CALL_TYPES = {
    "function_call": ("name", "arguments"),
    "custom_tool_call": ("name", "input"),
}
OUTPUT_TYPES = frozenset(("function_call_output", "custom_tool_call_output",
                           "computer_call_output", "local_shell_call_output",
                           "shell_call_output", "apply_patch_call_output",
                           "tool_search_output", "program_output"))
_HOSTED_SKIP = frozenset(("id", "type", "status", "call_id", "caller", "name",
                          "fingerprint", "pending_safety_checks", "output", "outputs",
                          "results", "result", "error"))
_SILENT = frozenset(("reasoning", "mcp_list_tools", "compaction", "item_reference",
                     "mcp_approval_response", "ghost_snapshot", "compaction_summary"))


def _hosted_args(item: dict[str, Any]) -> Any:
    if "arguments" in item:
        return item["arguments"]
    if "action" in item:
        return item["action"]
    if "input" in item:
        return {"input": item["input"]}
    return {k: v for k, v in item.items() if k not in _HOSTED_SKIP}


def output_value(item: dict[str, Any]) -> Any:
    for k in ("output", "result", "tools", "results"):
        if k in item:
            return item[k]
    return None


def responses_item(conv: Conversation, item: Any, line: int) -> None:
    """One Responses API item (also Agents SDK raw items and Codex rollout payloads)."""
    if not conv.is_object(item, line, "an item"):
        return
    t = item.get("type")
    if type(t) is not str:
        t = None
    if t == "message" or (t is None and "role" in item):
        role = item.get("role")
        if type(item.get("content")) is list:
            foreign_parts(conv, item["content"], line, "a Responses API item")
        text = text_of(item.get("content"))
        if role == "user":
            conv.user(text)
        elif role == "assistant":
            conv.assistant(text)
    elif t is not None and t in _CALL_TYPES:
        name_key, args_key = _CALL_TYPES[t]
        raw = item.get(args_key)
        if t == "custom_tool_call":
            raw = {"input": raw}
        conv.call(item.get(name_key), raw, item.get("call_id") or item.get("id"), line)
    elif t in OUTPUT_TYPES:  # apply_patch_call_output says a patch that failed so
        failed = item.get("status") == "failed"
        conv.result(item.get("call_id") or item.get("id"), output_value(item), line,
                    error="status failed" if failed else None)
    elif t == "mcp_call":
        _mcp_call(conv, item, line)
    elif t in CALL_PARTS:  # tool_call, tool_use, ...: another format's call
        conv.errors.append(foreign_part(t, "a Responses API item", conv.file, line))
    elif t is not None and (t.endswith("_call") or t in ("program", "tool_search_call")):
        _hosted_call(conv, t, item, line)
    elif t not in _SILENT:
        conv.ignored += 1


def _mcp_call(conv: Conversation, item: dict[str, Any], line: int) -> None:
    """A remote MCP tool's call, with its result in the same item."""
    call = conv.call(item.get("name"), item.get("arguments"), item.get("id"), line)
    if call is None:
        return
    servers = conv.trace.metadata.setdefault("mcp_servers", [])
    server = item.get("server_label")
    if server is not None and server not in servers:
        servers.append(server)
    err = item.get("error")
    failed = item.get("status") == "failed"  # a failure said by its status alone too
    if "output" in item or err is not None or failed:
        conv.result(item.get("id"), item.get("output"), line,
                    error=text_of(err) or str(err) if err is not None
                    else "status failed" if failed else None)


def _hosted_call(conv: Conversation, t: str, item: dict[str, Any], line: int) -> None:
    """Hosted and built-in tools: web_search_call, file_search_call, computer_call,
    code_interpreter_call, local_shell_call, shell_call, apply_patch_call, ..."""
    name = item.get("name") or (t[:-len("_call")] if t.endswith("_call") else t)
    cid = item.get("call_id") or item.get("id")
    call = conv.call(name, _hosted_args(item), cid, line)
    if call is not None and t not in ("computer_call", "local_shell_call", "shell_call",
                                      "apply_patch_call", "tool_search_call", "program"):
        value = output_value(item)
        status = item.get("status")
        if value is not None or status in ("completed", "failed", "incomplete"):
            conv.result(cid, value, line,
                        error=f"status {status}" if status == "failed" else None)


def responses_items(conv: Conversation, items: Any, lines: Lines, path: JsonPath) -> None:
    if type(items) is str:
        conv.user(items)
        return
    if type(items) is not list:
        return
    for i, item in enumerate(items):
        responses_item(conv, item, lines((*path, i)))


def responses_object(conv: Conversation, body: dict[str, Any], lines: Lines,
                     path: JsonPath) -> None:
    line = lines(path)
    responses_items(conv, body.get("output"), lines, (*path, "output"))
    usage = body.get("usage")
    conv.llm(body.get("model"), usage, line)
    _remember(conv, "response_ids", body.get("id"))
    err = body.get("error")
    if err:
        conv.trace.metadata.setdefault("errors", []).append(
            err.get("message") if type(err) is dict else err)


def is_response_object(obj: dict[str, Any]) -> bool:
    o = obj.get("object")
    return o == "response" or (o is None and type(obj.get("output")) is list
                               and "type" not in obj and "input" not in obj)


_REQUEST_KEYS = ("model", "prompt", "previous_response_id", "instructions", "tools",
                 "conversation")


def _is_request(body: dict[str, Any]) -> bool:
    """A Responses API request: ``input`` with a model (or what stands for one), or a
    list of items; a bare ``{"input": "..."}`` is another format's object (an OpenInference
    span's attributes)."""
    return type(body["input"]) is list or any(k in body for k in _REQUEST_KEYS)


def responses_value(conv: Conversation, obj: Any, lines: Lines, path: JsonPath) -> None:
    """Any Responses API shape: request, response, item, pair, a streamed event, or a
    list."""
    if type(obj) is dict:
        t = obj.get("type")
        if type(t) is str and t.startswith("response."):  # before a pair's "response"
            responses_event(conv, obj, t, lines, path)
            return
    _api_value(_RESPONSES, conv, obj, lines, path)


def _responses_request(conv: Conversation, body: dict[str, Any], lines: Lines,
                       path: JsonPath) -> None:
    if body.get("previous_response_id") is not None:
        conv.trace.metadata.setdefault("previous_response_id", body["previous_response_id"])
    responses_items(conv, body.get("input"), lines, (*path, "input"))


class _StreamedItem:
    """An output item of a streamed response, from its ``response.output_item.added``
    event and its arguments' deltas, until its ``response.output_item.done``."""

    __slots__ = ("item", "line", "pieces")

    def __init__(self, item: dict[str, Any], line: int) -> None:
        self.item = dict(item)
        self.line = line
        self.pieces: list[str] = []

    def end(self, conv: Conversation) -> None:
        """The stream ends before the item is done: the item as far as it came."""
        key = "input" if self.item.get("type") == "custom_tool_call" else "arguments"
        if self.pieces and not self.item.get(key):
            self.item[key] = "".join(self.pieces)
        responses_item(conv, self.item, self.line)


_RESPONSE_ENDS = frozenset(("response.completed", "response.failed", "response.incomplete"))


def responses_event(conv: Conversation, event: dict[str, Any], t: str, lines: Lines,
                    path: JsonPath) -> None:
    """A server-sent event of a streamed response (``stream: true``): the items of
    ``response.output_item.done`` and the response of ``response.completed`` (or
    ``failed`` / ``incomplete``) are read as in a response body (each call once); an
    item added but never done (a stream cut off) is read as far as it came. The other
    events (text deltas, ``response.created``, ...) only stream what these hold."""
    line = lines(path)
    conv.touch(line)
    item = event.get("item")
    if t == "response.output_item.added" and type(item) is dict:
        key = item.get("id")
        if key is not None and item.get("type") != "message":
            conv.items[str(key)] = _StreamedItem(item, line)
    elif t == "response.output_item.done" and type(item) is dict:
        conv.items.pop(str(item.get("id")), None)
        responses_item(conv, item, lines((*path, "item")))
    elif t in ("response.function_call_arguments.delta",
               "response.custom_tool_call_input.delta", "response.mcp_call_arguments.delta"):
        pending = conv.items.get(str(event.get("item_id")))
        if pending is not None and type(event.get("delta")) is str:
            pending.pieces.append(event["delta"])
    elif t in _RESPONSE_ENDS and type(event.get("response")) is dict:
        response = event["response"]
        output = response.get("output")
        for done in output if type(output) is list else ():
            if type(done) is dict:
                conv.items.pop(str(done.get("id")), None)
        responses_object(conv, response, lines, (*path, "response"))


def _responses_single(conv: Conversation, body: dict[str, Any], lines: Lines,
                      path: JsonPath) -> bool:
    if "type" in body or "role" in body:
        responses_item(conv, body, lines(path))
        return True
    return False


_RESPONSES = _Api(responses_value, "a Responses API request, response or item",
                  is_response_object, responses_object, "input", _responses_request,
                  _responses_single,
                  "not a Responses API request (input), response (output) or item (type)")


# ----------------------------------------------------------------------- sniffing


# -------------------------------------------------------------------------- VCR
def _cassette_bodies(cassette: Cassette, source: SourceFile
                     ) -> tuple[list[tuple[Any, Lines]], list[InputError]]:
    """The request and response bodies of each interaction, at the interaction's line
    and at its ``response:`` key's, and an input error for each body that is not JSON
    (at the body's line: never dropped unsaid). An empty body is no body."""
    docs: list[tuple[Any, Lines]] = []
    errors: list[InputError] = []
    for it in cassette.interactions:
        if type(it.value) is not dict:
            continue
        missing = no_response(it, source.file)
        if missing is not None:
            errors.append(missing)
        req = it.value.get("request")
        resp = it.value.get("response")
        req = req if type(req) is dict else {}
        resp = resp if type(resp) is dict else {}
        body = resp.get("body")
        if type(body) is dict:
            body = body.get("string", body)
        for part, raw, line in (("request", req.get("body"), it.line),
                                ("response", body, it.parts.get("response", it.line))):
            where = it.bodies.get(part)
            at = where.line if where is not None else line
            try:
                value = _body(raw, source)
            except BodyError as exc:
                errors.append(exc.input_error(source.file, at, part))
                continue
            if value is not None:
                docs.append((value, Lines(None, line)))
    return docs, errors


def _body(b: Any, source: SourceFile) -> Any:
    """A body's JSON value (None for no body). Raises :class:`BodyError`."""
    if type(b) is bytes:
        b = body_text(b, source.limits)
    if type(b) is str:
        if not b.strip():
            return None
        try:
            return _loads(b)
        except _JSONDecodeError as exc:  # a limit's error too (read_file files it so)
            raise BodyError(INPUT_PARSE_ERROR, f"is not valid JSON ({exc})") from None
    return b


# ------------------------------------------------------------------------ readers
ValueFn = Callable[[Conversation, Any, Lines, JsonPath], None]


def _read_conversation(source: SourceFile, fmt: str, value: ValueFn,
                       unmatched_ok: Callable[[Conversation], bool]) -> Iterator[ReadItem]:
    try:
        if _is_vcr_file(source):
            cassette = read_cassette(source)
            if isinstance(cassette, InputError):
                yield cassette
                return
            docs, errors = _cassette_bodies(cassette, source)
        else:
            docs, errors = load_file(source)
    except OSError as exc:
        yield INPUT_UNREADABLE_FILE.input_error(source.file, 0, f"cannot read the file: {exc}")
        return
    yield from errors
    if not docs:
        if not errors:
            yield INPUT_INVALID_EVENT.input_error(source.file, 0,
                                                  f"the file holds no {fmt} data (it is empty)")
        return
    conv = Conversation(source, fmt, docs[0][1](()))
    for obj, lines in docs:
        value(conv, obj, lines, ())
    conv.end_streams()
    if unmatched_ok(conv):  # outputs of calls made before the file: not an error
        rest: list[tuple[str, int]] = []
        for key, line in conv.unmatched:
            if key in conv.by_id:  # a second, other output of a call in the file
                rest.append((key, line))
            else:
                conv.trace.metadata.setdefault("earlier_call_ids", []).append(key)
        conv.unmatched[:] = rest
    conv.report_unmatched()
    t = conv.trace
    empty = not errors and not conv.errors and not (
        t.tool_calls or t.llm_calls or t.input is not None or t.output is not None)
    if empty and conv.ignored:
        # every record was of a type this format does not know: another format's file
        conv.error(INPUT_INVALID_EVENT, t.location.line,
                   f"no {fmt} data in this file: its {conv.ignored} record(s) are of types "
                   f"{fmt} does not know; is it another format (format: auto picks the "
                   "reader by content)?")
    elif empty and not t.metadata:  # (a continuation request's earlier call ids: data)
        # no record held anything (`[]`, `{"messages": []}`): an empty trace would pass
        conv.error(INPUT_INVALID_EVENT, t.location.line,
                   f"no {fmt} input, call or answer in this file: nothing of it can be "
                   "checked (an empty trace would pass every rule)")
    yield from conv.finish()


def _is_vcr_file(source: SourceFile) -> bool:
    if not source.path.lower().endswith((".yaml", ".yml")):
        return False
    with open(source.path, "rb") as fh:
        return sniffs.is_vcr(fh.read(4096))


class OpenAiReader:
    """One OpenAI API's reader: recorded bodies (or a VCR cassette of calls to the API's
    path) read as one conversation."""

    def __init__(self, name: str, sniff: sniffs.Sniff, value: ValueFn,
                 continued: Callable[[Conversation], bool]) -> None:
        self.name = name
        self._sniff = sniff
        self._value = value
        self._continued = continued

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return self._sniff(head, source)

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        return _read_conversation(source, self.name, self._value, self._continued)


CHAT_READER = OpenAiReader("openai_chat", sniffs.openai_chat, chat_value, lambda conv: False)
# A request that continues a stored response (previous_response_id) sends only the
# outputs of calls made in that earlier response: not an error.
RESPONSES_READER = OpenAiReader(
    "openai_responses", sniffs.openai_responses, responses_value,
    lambda conv: conv.trace.metadata.get("previous_response_id") is not None)
READERS: tuple[OpenAiReader, ...] = (CHAT_READER, RESPONSES_READER)

