"""Anthropic Messages API bodies (docs/formats/anthropic.md).

A file holds one conversation: a request body (``messages`` with ``tool_use`` /
``tool_result`` blocks), a response body (``type: message`` with ``usage``), a pair
``{"request": ..., "response": ...}``, a list of any of these, JSON lines of them, or a
VCR cassette (``.yaml``) of calls to ``/v1/messages``. Requests repeat the whole history,
so a ``tool_use`` is counted once per ``id``, name and input (another call under a known
``id`` is a call of its own, and an input error).

:class:`Conversation` turns Anthropic-shaped messages into one trace; the Claude Code
reader uses it too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import orjson

from agent_eval.errors import InputError
from agent_eval.jsonutil import loads as bounded_loads
from agent_eval.model import LlmCall, Location, ToolCall, Trace
from agent_eval.readers import sniffs
from agent_eval.readers._foreign import (
    as_dict,
    count,
    new_trace,
    set_result,
    text_of,
    touch,
)
from agent_eval.readers.base import (
    CALL_PARTS,
    CallIndex,
    ReadItem,
    SourceFile,
    foreign_part,
    reused_call_id,
)
from agent_eval.readers.cassette import (
    Body,
    BodyError,
    Cassette,
    body_text,
    no_response,
    read_cassette,
)
from agent_eval.readers.native import decode_arguments
from agent_eval.readers.skeleton import FormatReader, ReadState, feed
from agent_eval.rule_ids import (
    INPUT_INVALID_EVENT,
    INPUT_PARSE_ERROR,
    INPUT_UNMATCHED_RESULT,
    Rule,
)
from agent_eval.safetext import clean_text

NAME = "anthropic"
CALL_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")
OWN_PARTS = frozenset((*CALL_BLOCKS, "tool_result"))  # of base.CALL_PARTS: Anthropic's
LineOf = Callable[..., int]  # a JSON path below the record -> its line


class Conversation:
    """One trace built from Anthropic messages, in order."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.file = trace.source
        self.calls = CallIndex()  # tool_use id -> its calls
        # tool_use id -> the call seen again (a replay) after the latest call with that id
        self.replayed: dict[str, ToolCall] = {}
        self.errors: list[InputError] = []
        self.cache_read: int | None = None
        self.cache_write: int | None = None
        self.has_input = False

    def loc(self, line: int) -> Location:
        touch(self.trace, line)
        return Location(self.file, line)

    # ---------------------------------------------------------------- blocks
    def tool_use(self, block: dict[str, Any], line: int) -> None:
        """A call; one with the id, name and input of a call seen before is that call
        again (a request repeats the history); another under a known id is a call of its
        own and an ``input/invalid_event``."""
        name = block.get("name")
        cid = block.get("id")
        key = None if cid is None else str(cid)
        if not isinstance(name, str) or not name:
            self.errors.append(INPUT_INVALID_EVENT.input_error(
                self.file, line,
                f"a {block.get('type')} block without a tool name"))
            return
        args, why = decode_arguments(block.get("input"))
        first = self.calls.first(key) if key is not None else None
        if key is not None and first is not None:
            same = self.calls.same(key, name, args, why)
            if same is not None:
                self.replayed[key] = same
                return  # the same call again: a request repeats the history
            self.errors.append(reused_call_id(key, first, self.file, line))
        call = ToolCall(name=name, arguments=args, location=self.loc(line), id=key,
                        arguments_error=why)
        self.trace.tool_calls.append(call)
        if key is not None:
            self.calls.add(key, call)
            if self.replayed:
                self.replayed.pop(key, None)

    def tool_result(self, block: dict[str, Any], line: int) -> ToolCall | None:
        """The result of the earliest call with its ``tool_use_id`` that has none; None
        when it repeats a result (of the call with that id seen last, or of any when none
        is open: the history again) or matches no call (an input error)."""
        cid = block.get("tool_use_id")
        key = str(cid)
        last = (self.replayed.get(key) or self.calls.last(key)) if cid is not None else None
        if last is None:
            self.errors.append(INPUT_UNMATCHED_RESULT.input_error(
                self.file, line,
                f"{block.get('type')} for tool_use_id '{cid}' matches no earlier tool_use "
                f"in trace '{self.trace.id}'"))
            return None
        content = block.get("content")
        text = text_of(content)
        result: Any = text if text is not None and isinstance(content, str | list) else content
        if last.has_result and last.result == result:
            return None  # the history again
        call = self.calls.open(key)
        if call is None:
            if self.calls.has_result(key, result):
                return None  # the history again
            self.errors.append(INPUT_UNMATCHED_RESULT.input_error(
                self.file, line,
                f"{block.get('type')} for tool_use_id '{cid}' differs from the result of "
                f"that tool_use (line {last.location.line}), which already has one, in "
                f"trace '{self.trace.id}'; give each call its own id"))
            return None
        is_error = bool(block.get("is_error"))
        error = None
        if isinstance(content, dict) and str(content.get("type", "")).endswith("_error"):
            is_error = True  # a server tool's error result (web_search_tool_result_error)
            error = str(content.get("error_code") or content.get("type"))
        set_result(call, result, error, not is_error, self.loc(line))
        return call

    # -------------------------------------------------------------- messages
    def user(self, content: Any, line_of: LineOf, may_be_input: bool = True
             ) -> Sequence[ToolCall]:
        """A user turn: tool results, and the request when it is the first one. Returns
        the calls its results answered (a repeated history answers none). A call in it
        (only assistant messages call tools) is read all the same, and an input error."""
        texts: list[str] = []
        answered: list[ToolCall] | None = None
        for j, block, kind in self._blocks(content, texts, line_of):
            if kind == "tool_result" or (isinstance(kind, str) and kind.endswith(
                    "_tool_result")):
                call = self.tool_result(block, line_of(j))
                if call is not None:
                    if answered is None:
                        answered = []
                    answered.append(call)
            elif kind in CALL_BLOCKS:
                self.errors.append(INPUT_INVALID_EVENT.input_error(
                    self.file, line_of(j),
                    f"a {kind} block in a user message (only assistant messages call "
                    "tools): it is read as a call; is the message's role right?"))
                self.tool_use(block, line_of(j))
        if texts and may_be_input and not self.has_input:
            self.trace.input = "\n".join(texts)
            self.has_input = True
        return () if answered is None else answered

    def assistant(self, content: Any, line_of: LineOf, *, texts: bool = True) -> None:
        """An assistant turn: its calls, and its text as the output (``texts`` False: an
        error message of the client's, whose text is no answer)."""
        said: list[str] = []
        for j, block, kind in self._blocks(content, said, line_of):
            if kind in CALL_BLOCKS:
                self.tool_use(block, line_of(j))
            elif isinstance(kind, str) and kind.endswith("_tool_result"):
                self.tool_result(block, line_of(j))  # server tools answer in place
        if said and texts:
            self.trace.output = "\n".join(said)

    def _blocks(self, content: Any, texts: list[str], line_of: LineOf
                ) -> Iterator[tuple[int, dict[str, Any], Any]]:
        """The blocks of a message's content that are not text, as (index, block, type);
        the text (a string content, string and ``text`` blocks) is added to ``texts``.
        A content that is one block (an object) is read as a list of it, and a block that
        is an array is not read: each an input error, never calls passed over unsaid."""
        if isinstance(content, str):
            texts.append(content)
            return
        if isinstance(content, dict):
            self.errors.append(INPUT_INVALID_EVENT.input_error(
                self.file, line_of(0), "a message's content must be a string or an array "
                "of blocks, not an object; it is read as an array of that one block"))
            content = [content]
        if not isinstance(content, list):
            return
        for j, block in enumerate(content):
            if isinstance(block, str):
                texts.append(block)
            elif isinstance(block, dict):
                kind = block.get("type")
                if kind == "text" and isinstance(block.get("text"), str):
                    texts.append(block["text"])
                else:
                    yield j, block, kind
            elif isinstance(block, list):
                self.errors.append(INPUT_INVALID_EVENT.input_error(
                    self.file, line_of(j), "a content block must be an object, not an "
                    "array; the blocks in it (a tool_use?) were not read"))

    def usage(self, message: dict[str, Any], line: int) -> LlmCall:
        """Record the LLM call of a response (see :func:`llm_call`)."""
        call, read, write = llm_call(message, self.loc(line))
        if read is not None:
            self.cache_read = (self.cache_read or 0) + read
        if write is not None:
            self.cache_write = (self.cache_write or 0) + write
        self.trace.llm_calls.append(call)
        return call

    def finish(self) -> Trace:
        if self.cache_read is not None:
            self.trace.metadata["cache_read_input_tokens"] = self.cache_read
        if self.cache_write is not None:
            self.trace.metadata["cache_creation_input_tokens"] = self.cache_write
        return self.trace


def call_block(content: Any) -> str | None:
    """The type of the first block of ``content`` (a list of blocks, or one block) that
    holds a call or a result, of any format (:data:`~agent_eval.readers.base.CALL_PARTS`):
    what a message that is not read as a turn would leave unchecked."""
    for block in content if isinstance(content, list) else [content]:
        kind = block.get("type") if isinstance(block, dict) else None
        if isinstance(kind, str) and kind in CALL_PARTS:
            return kind
    return None


def llm_call(message: dict[str, Any], loc: Location) -> tuple[LlmCall, int | None, int | None]:
    """The LLM call of a response, and its cache reads and writes. Input tokens include
    the cache reads and writes (Anthropic's ``input_tokens`` counts only the rest)."""
    usage = message.get("usage")
    u = usage if isinstance(usage, dict) else {}
    base, out = count(u.get("input_tokens")), count(u.get("output_tokens"))
    read = count(u.get("cache_read_input_tokens"))
    write = count(u.get("cache_creation_input_tokens"))
    inp = None if base is None else base + (read or 0) + (write or 0)
    model = message.get("model")
    call = LlmCall(location=loc, model=model if isinstance(model, str) else None,
                   input_tokens=inp, output_tokens=out,
                   total_tokens=None if inp is None or out is None else inp + out)
    return call, read, write


# -------------------------------------------------------------------- streaming
def parse_sse(text: str) -> tuple[dict[str, Any] | None, list[tuple[Rule, str]]]:
    """A streamed response (server-sent events) put back together as one message, and
    what could not be read of it, said (never dropped unsaid): a ``data:`` line that is
    not a JSON object, an event whose ``index`` is not a whole number (a block started
    under it is read as a block of its own), a stream without ``message_start`` (its
    blocks are read as an assistant message). A block started under the index of an
    earlier one (a server numbering every block 0) is a block of its own too: the blocks
    are in the order they started."""
    message: dict[str, Any] | None = None
    started: dict[Any, dict[str, Any]] = {}  # index -> the block being put together
    blocks: list[dict[str, Any]] = []  # every block, in the order it started
    partial: dict[int, list[str]] = {}  # id(block) -> its input_json_delta pieces
    problems: list[tuple[Rule, str]] = []
    n = 0
    # an event stream's lines end at CR LF, LF or CR only (str.splitlines() also splits
    # at U+2028, U+0085 and others, which the JSON of a data: line holds unescaped)
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not raw.startswith("data:"):
            continue
        n += 1
        try:
            ev = bounded_loads(raw[5:].strip())
        except orjson.JSONDecodeError as exc:
            problems.append((INPUT_PARSE_ERROR, f"event {n} of the streamed response (its "
                             f"'data:' line) is not valid JSON ({exc}); a tool_use in it "
                             "was not read"))
            continue
        if not isinstance(ev, dict):
            problems.append((INPUT_INVALID_EVENT, f"event {n} of the streamed response is "
                             "not a JSON object; it was not read"))
            continue
        kind = ev.get("type")
        index = ev.get("index", len(blocks) if kind == "content_block_start" else 0)
        if kind in ("content_block_start", "content_block_delta") and type(index) is not int:
            shown = clean_text(orjson.dumps(index).decode(), 80)
            problems.append((INPUT_INVALID_EVENT, f"event {n} of the streamed response "
                             f"({kind}) has the index {shown}, not a whole number; " + (
                                 "its block is read as a block of its own"
                                 if kind == "content_block_start" else "its delta was not read")))
            if kind == "content_block_delta":
                continue
            index = (n,)  # a key no whole-number index has
        if kind == "message_start" and isinstance(ev.get("message"), dict):
            message = dict(ev["message"])
        elif kind == "content_block_start" and isinstance(ev.get("content_block"), dict):
            block = started[index] = dict(ev["content_block"])
            blocks.append(block)
        elif kind == "content_block_delta" and isinstance(ev.get("delta"), dict):
            d = ev["delta"]
            if index not in started:  # a delta of a block whose start was not recorded
                started[index] = {"type": "text", "text": ""}
                blocks.append(started[index])
            block = started[index]
            if d.get("type") == "text_delta":
                block["text"] = str(block.get("text", "")) + str(d.get("text", ""))
            elif d.get("type") == "input_json_delta":
                partial.setdefault(id(block), []).append(str(d.get("partial_json", "")))
        elif kind == "message_delta" and message is not None:
            usage = ev.get("usage")
            if isinstance(usage, dict):
                merged = dict(message.get("usage") or {})
                merged.update({k: v for k, v in usage.items() if v is not None})
                message["usage"] = merged
    if message is None:
        if not blocks:
            return None, problems
        problems.append((INPUT_INVALID_EVENT, "the streamed response has no message_start "
                         "event (a stream cut at its start?); its content blocks are read as "
                         "an assistant message without usage"))
        message = {"role": "assistant"}
    for block in blocks:
        pieces = partial.get(id(block))
        if pieces is not None:
            js = "".join(pieces)
            block["input"] = js if js else {}
    message["content"] = blocks
    return message, problems


# --------------------------------------------------------------------- records
class _File(ReadState):
    def __init__(self, source: SourceFile) -> None:
        super().__init__(source)
        self.conv = Conversation(new_trace(source.trace_id, source, 1, NAME))
        self.conv.trace.location = Location(source.file, 0)  # set by the first record
        self.errors = self.conv.errors
        self.seen_any = False
        self.messages = 0

    def traces(self) -> list[Trace]:
        return [self.conv.finish()] if self.messages else []

    def body(self, value: Any, at: LineOf, *path: str | int) -> None:
        conv = self.conv
        if not self.seen_any:
            self.seen_any = True
            conv.trace.location = Location(conv.file, at(*path))
        touch(conv.trace, at(*path))
        if isinstance(value, list):
            for i, item in enumerate(value):
                self.body(item, at, *path, i)
            return
        if not isinstance(value, dict):
            self.unknown += 1
            return
        if "request" in value or "response" in value:
            for key in ("request", "response"):
                part = value.get(key)
                if isinstance(part, dict):
                    self.body(part, at, *path, key)
            return
        messages = value.get("messages")
        if isinstance(messages, list):
            for i, m in enumerate(messages):
                self.message(m, at, *path, "messages", i)
            return
        if value.get("type") == "message" or "role" in value:
            self.message(value, at, *path)
            return
        kind = value.get("type")
        if isinstance(kind, str) and kind in CALL_PARTS and kind not in OWN_PARTS:
            self.conv.errors.append(foreign_part(kind, "an Anthropic message", self.file,
                                                 at(*path)))
            return
        self.unknown += 1

    def message(self, m: Any, at: LineOf, *path: str | int) -> None:
        if not isinstance(m, dict):
            self.unknown += 1
            return
        line = at(*path)
        touch(self.conv.trace, line)
        content = m.get("content")

        def line_of(j: int) -> int:
            return at(*path, "content", j)

        role = m.get("role")
        if role in ("assistant", "user"):
            self.messages += 1
            self.foreign(m, content, line)
        if role == "assistant":
            self.conv.assistant(content, line_of)
            if m.get("type") == "message" or isinstance(m.get("usage"), dict):
                self.conv.usage(m, line)
        elif role == "user":
            self.conv.user(content, line_of)
        else:
            kind = call_block(content)
            if kind is not None:  # a call or result never passed over unsaid
                shown = clean_text(orjson.dumps(role).decode(), 80)
                self.conv.errors.append(INPUT_INVALID_EVENT.input_error(
                    self.file, line, f"a message of role {shown} holds a {kind} block: "
                    "only user and assistant messages are read, so it was not; is the role "
                    "right?"))
            self.unknown += 1


    def foreign(self, m: dict[str, Any], content: Any, line: int) -> None:
        """Another format's calls in a message (OpenAI's ``tool_calls`` /
        ``function_call``, a part no Anthropic message holds): an input error each, never
        a message read without them."""
        errors = self.conv.errors
        for key in ("tool_calls", "function_call"):
            if m.get(key):
                errors.append(INPUT_INVALID_EVENT.input_error(
                    self.file, line, f"a message with '{key}' is not an Anthropic message "
                    "(Chat Completions?): the calls in it cannot be read; is the file "
                    "another format (format: auto picks the reader by content)?"))
        if isinstance(content, list):
            for block in content:
                kind = block.get("type") if isinstance(block, dict) else None
                if isinstance(kind, str) and kind in CALL_PARTS and kind not in OWN_PARTS:
                    errors.append(foreign_part(kind, "an Anthropic message", self.file,
                                               line))


_YAML = (".yaml", ".yml")


class AnthropicReader(FormatReader):
    name = NAME
    empty = ("no Anthropic message in this file (expected a Messages API request or "
             "response body, or a list of messages)")

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return sniffs.anthropic(head, source)

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        f = _File(source)
        if source.path.lower().endswith(_YAML):
            yield from _read_cassette(source, f)
        elif (yield from feed(source, lambda value, at, _whole: f.body(value, at))):
            return
        yield from self.finish(f)


# -------------------------------------------------------------------- cassettes
def _body_text(body: Any, source: SourceFile) -> Any:
    """A recorded body: its text (vcrpy's ``body: {string: ...}``, a plain string or
    ``!!binary`` bytes), or the body itself when it was recorded as a YAML mapping of
    the JSON document (None: no body)."""
    if isinstance(body, dict):
        if "string" not in body and "body" not in body:
            return body  # the JSON document written as YAML
        body = body.get("string", body.get("body"))
    if isinstance(body, bytes):
        return body_text(body, source.limits)
    return body if isinstance(body, str) else None


class _BodyLines:
    """The line of a block inside a body of a cassette: the line of its id (a tool
    result: of the id of the call it answers, after the call's own) in the cassette's
    text, else the body's first line."""

    def __init__(self, cassette: Cassette, value: Any, where: Body) -> None:
        self.cassette = cassette
        self.value = value
        self.where = where

    def __call__(self, *path: str | int) -> int:
        target: Any = self.value
        for p in path:
            try:
                target = target[p]
            except (KeyError, IndexError, TypeError):
                return self.where.line
        if isinstance(target, dict):
            text, start, end = self.cassette.text, self.where.start, self.where.end
            key, result = target.get("id"), target.get("tool_use_id")
            if isinstance(result, str) and result:  # after the call's own id
                found = text.rfind(result, start, end)
            elif isinstance(key, str) and key:
                found = text.find(key, start, end)
            else:
                found = -1
            if found >= 0:
                return self.cassette.line_at(found)
        return self.where.line


def _read_cassette(source: SourceFile, f: _File) -> Iterator[ReadItem]:
    cassette = read_cassette(source)
    if isinstance(cassette, InputError):
        yield cassette
        return
    for inter in cassette.interactions:
        value = inter.value
        if not isinstance(value, dict):
            f.unknown += 1
            continue
        uri = str(as_dict(value.get("request")).get("uri", ""))
        if (uri and "/messages" not in uri) or uri.rstrip("/").endswith("count_tokens"):
            f.unknown += 1  # another endpoint (models, token counting)
            continue
        missing = no_response(inter, source.file)
        if missing is not None:
            yield missing
        for part in ("request", "response"):
            where = inter.bodies.get(part)
            try:
                body = _body_text(as_dict(value.get(part)).get("body"), source)
            except BodyError as exc:
                yield exc.input_error(source.file, where.line if where else inter.line, part)
                continue
            if body is None or where is None:
                continue
            if isinstance(body, dict):
                parsed: Any = body
            elif part == "response" and body.lstrip().startswith(("event:", "data:")):
                parsed, problems = parse_sse(body)
                for rule, problem in problems:
                    yield rule.input_error(source.file, where.line,
                                           f"the response body: {problem}")
            else:
                try:
                    parsed = bounded_loads(body)
                except orjson.JSONDecodeError as exc:
                    yield INPUT_PARSE_ERROR.input_error(
                        source.file, where.line, f"the {part} body is not valid JSON ({exc})")
                    continue
            if parsed is not None:
                f.body(parsed, _BodyLines(cassette, parsed, where))


READER = AnthropicReader()
