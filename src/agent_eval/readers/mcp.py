"""MCP JSON-RPC 2.0 logs (docs/formats/mcp.md).

The messages between an MCP client and server: one JSON-RPC message per line (bare or
wrapped as ``{"timestamp": ..., "direction": ..., "message": {...}}``), a JSON array of
them, a single message, or a text log whose lines end in a message (Claude Desktop's
``... Message from client: {...}``). A ``tools/call`` request is a tool call; its
response (same ``id``) is the result: ``isError: true`` or a JSON-RPC ``error`` make the
call fail. One trace per file, and a new one at each further ``initialize``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from agent_eval.errors import InputError
from agent_eval.jsonutil import file_lines, json_type
from agent_eval.jsonutil import loads as bounded_loads
from agent_eval.model import Location, ToolCall, Trace
from agent_eval.readers import sniffs
from agent_eval.readers._foreign import (
    BOM,
    JSONDecodeError,
    as_dict,
    iter_lines,
    new_trace,
    set_result,
    span_ms,
    text_of,
    touch,
)
from agent_eval.readers.base import ReadItem, SourceFile
from agent_eval.readers.native import decode_arguments
from agent_eval.readers.skeleton import Fed, FormatReader, LineAt, ReadState, feed
from agent_eval.rule_ids import (
    INPUT_PARSE_ERROR,
    INPUT_UNREADABLE_FILE,
)
from agent_eval.safetext import clean_text

NAME = "mcp"
WRAPPER_KEYS = ("message", "payload", "data", "json", "msg", "body")
TIME_KEYS = ("timestamp", "ts", "time")
DIRECTION_KEYS = ("direction", "dir", "from", "source")
_SPACE = re.compile(r"\s")  # one character: what str.isspace and str.strip take for a space
_FROM = ("Message from client", "Message from server")


def text_line(line: str) -> tuple[str | None, str | None, str] | None:
    r"""A text log's line (stripped) split as ``(timestamp, who, json)``, or None when it
    does not end in a JSON object. The timestamp: an ISO date and ``T`` at the start, up
    to the first space (never into the JSON); ``who``: ``client`` or ``server`` when
    ``Message from client:`` (or server) stands just before the JSON; the JSON: from the
    first ``{`` after the timestamp to the end of the line, which is a ``}``.

    The answers of the regular expression it replaces, ``^(?P<ts>\d{4}-\d\d-\d\dT\S+)?
    .*?(?:Message from (?P<who>client|server)\s*:\s*)?(?P<json>\{.*\})\s*$``, in time
    linear in the line: that regex backtracked in cubic time on a line of ``{``
    (tests/readers/test_mcp.py holds the two to the same answers)."""
    if not line.endswith("}"):
        return None
    last = line.rfind("{")
    if last < 0:
        return None
    start = 0
    if (len(line) >= 12 and line[10] == "T" and line[4] == "-" and line[7] == "-"
            and line[:4].isdecimal() and line[5:7].isdecimal() and line[8:10].isdecimal()
            and not line[11].isspace()):
        space = _SPACE.search(line, 12, last)
        end = last if space is None else space.start()  # a "{" is left after it
        if end >= 12:
            start = end
    ts = line[:start] if start else None
    first = line.index("{", start)
    before = line[start:first].rstrip()
    who = None
    if before.endswith(":"):
        said = before[:-1].rstrip()
        for prefix in _FROM:
            if said.endswith(prefix):
                who = prefix[13:]
    return ts, who, line[first:]


def _wraps(inner: Any, strict: bool = False) -> bool:
    """Whether a wrapper's value is what it wraps: a message, or a batch (a list; with
    ``strict``, one that holds a message)."""
    if isinstance(inner, list):
        return not strict or any(isinstance(m, dict) and "jsonrpc" in m for m in inner)
    return isinstance(inner, dict) and "jsonrpc" in inner


class _Pending:
    __slots__ = ("call", "direction", "ts")

    def __init__(self, call: ToolCall, direction: str | None, ts: Any) -> None:
        self.call = call
        self.direction = direction
        self.ts = ts


def _same_way(a: str | None, b: str | None) -> bool:
    """Whether two requests may have gone the same way (a direction not logged may)."""
    return a is None or b is None or a == b


class _State(ReadState):
    def __init__(self, source: SourceFile) -> None:
        super().__init__(source)
        self.found: list[Trace] = []
        self.trace: Trace | None = None
        self.pending: dict[str, _Pending] = {}
        # ids of requests that are not tool calls: their direction and line
        self.other: dict[str, tuple[str | None, int]] = {}

    def traces(self) -> list[Trace]:
        return self.found

    def current(self, line: int) -> Trace:
        if self.trace is None:
            self.trace = new_trace(self.source.trace_id, self.source, line, NAME)
            self.found.append(self.trace)
        touch(self.trace, line)
        return self.trace

    def value(self, value: Any, line: int, ts: Any = None, direction: str | None = None) -> None:
        if isinstance(value, list):  # a JSON-RPC batch
            for item in value:
                self.value(item, line, ts, direction)
            return
        if not isinstance(value, dict):
            self.invalid(line, f"a JSON-RPC message must be a JSON object, not {json_type(value)}")
            return
        if "jsonrpc" not in value:
            first = None  # the key of what is read, and the keys of other messages
            more: list[str] = []
            for key in WRAPPER_KEYS:  # (a loop: this is every line of a wrapped log)
                if key not in value:
                    continue
                if first is None:
                    if _wraps(value[key]):
                        first = key
                elif _wraps(value[key], strict=True):
                    more.append(key)
            if first is None:
                self.ignore(value, line, NAME)
                return
            if more:  # one message per wrapper: the others are never read
                self.invalid(line, f"a wrapper holding messages under {1 + len(more)} keys "
                                   f"({', '.join([first, *more])}): only the first, "
                                   f"'{first}', is read; write one message per line")
            ts = next((value[k] for k in TIME_KEYS if k in value), ts)
            d = next((value[k] for k in DIRECTION_KEYS if isinstance(
                value.get(k), str)), direction)
            self.value(value[first], line, ts, d)
            return
        self.message(value, line, ts, direction)

    def message(self, msg: dict[str, Any], line: int, ts: Any, direction: str | None) -> None:
        method, mid = msg.get("method"), msg.get("id")
        key = None if mid is None else str(mid)
        if isinstance(method, str):
            if method == "initialize" and self.trace is not None and (
                    self.trace.tool_calls or self.pending):
                self.trace = new_trace(f"{self.source.trace_id}:{line}", self.source, line,
                                       NAME)  # a new session in the same log
                self.found.append(self.trace)
                self.pending.clear()
                self.other.clear()
            trace = self.current(line)
            params = as_dict(msg.get("params"))
            if method == "tools/call":
                self.call_request(trace, params, key, line, ts, direction)
            elif method == "notifications/cancelled":
                rid = params.get("requestId")
                p = self.pending.pop(str(rid), None) if rid is not None else None
                if p is not None:
                    reason = params.get("reason")
                    set_result(p.call, None, f"cancelled: {reason}" if reason else "cancelled",
                               False, Location(self.file, line))
            elif key is not None:
                p = self.pending.get(key)
                if p is not None and _same_way(p.direction, direction):
                    self.reused(key, method, line, "tools/call", p.call.location.line)
                self.other[key] = (direction, line)
            return
        if key is None or ("result" not in msg and "error" not in msg):
            self.unknown += 1
            return
        self.current(line)
        p = self.pending.get(key)
        if p is not None and direction is not None and p.direction == direction:
            p = None  # a response goes the other way: same id, another request
        if p is None:
            if key in self.other:
                del self.other[key]
                return
            result = msg.get("result")
            if "error" in msg or (isinstance(result, dict) and (
                    "content" in result or "isError" in result)):
                self.unmatched(
                    line,
                    f"a JSON-RPC response with id {mid!r} matches no earlier tools/call "
                    "request in this log; log both directions of the connection")
            return
        del self.pending[key]
        self.result(p, msg, line, ts)

    def call_request(self, trace: Trace, params: dict[str, Any], key: str | None, line: int,
                     ts: Any, direction: str | None) -> None:
        name = params.get("name")
        if not isinstance(name, str) or not name:
            self.invalid(line, "a tools/call request without params.name")
            return
        args, why = decode_arguments(params.get("arguments"))
        call = ToolCall(name=name, arguments=args, location=Location(self.file, line), id=key,
                        arguments_error=why)
        trace.tool_calls.append(call)
        if key is None:  # sent all the same, and a server may have run it
            self.invalid(line, f"a tools/call request ({name!r}) without an id (or with id "
                               "null): it is read as a call, but no response can be matched "
                               "to it; a request needs an id (JSON-RPC 2.0)")
            return
        known = self.other.get(key)
        if known is not None and _same_way(known[0], direction):
            self.reused(key, "tools/call", line, "request", known[1])
        self.pending[key] = _Pending(call, direction, ts)

    def reused(self, key: str, method: str, line: int, what: str, at: int) -> None:
        """A request that takes the id of a request still waiting for its response, where
        the log cannot tell their responses apart (ids are per direction, and it does not
        say which way each went): the call's result may be the other's, and the other's
        response may be the call's result passed over."""
        self.invalid(line, f"this {clean_text(method, 80)!r} request has the id "
                           f"{clean_text(key, 80)!r} of the {what} at line {at}, which has "
                           "no response yet, and the log does not say that the two went "
                           "different ways (client/server): a response with that id cannot "
                           "be told to answer the tools/call or the other; log each "
                           "message's direction, and give each request its own id")

    def result(self, p: _Pending, msg: dict[str, Any], line: int, ts: Any) -> None:
        loc = Location(self.file, line)
        err = msg.get("error")
        if err is not None:
            e = err if isinstance(err, dict) else {"message": str(err)}
            message = f"{e.get('message', 'error')} (JSON-RPC error {e.get('code')})"
            set_result(p.call, e.get("data"), message, False, loc)
        else:
            res = msg.get("result")
            value: Any = res
            if isinstance(res, dict):
                content = res.get("content")
                text = text_of(content)
                if "structuredContent" in res:
                    value = res["structuredContent"]
                elif content is not None:
                    value = text if text is not None else content
                failed = res.get("isError") is True
                set_result(p.call, value, text if failed else None, not failed, loc)
            else:
                set_result(p.call, value, None, True, loc)
        latency = span_ms(p.ts, ts)
        if latency is not None:
            p.call.latency_ms = latency


class McpReader(FormatReader):
    name = NAME
    empty = ("no JSON-RPC 2.0 message in this file (an MCP log holds the messages "
             "themselves, e.g. a tools/call request and its response)")
    quiet_when_bad = True

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return sniffs.mcp(head, source)

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        state = _State(source)

        def take(value: Any, at: LineAt, _whole: bool) -> None:
            items = value if isinstance(value, list) else [value]
            for i, item in enumerate(items):
                state.value(item, at(i) if isinstance(value, list) else at())

        fed = Fed()
        yield from feed(source, take, text_log=True, fed=fed,
                        lines=lambda: self._lines(state, source))
        if not fed.failed:  # else the file could not be read at all: its error said so
            yield from self.finish(state, fed.reported)

    def _lines(self, state: _State, source: SourceFile) -> Iterator[InputError]:
        try:
            with open(source.path, "rb") as fh:
                first = next((ln for ln in fh if ln.strip()), b"").strip().removeprefix(BOM)
        except OSError as exc:
            yield INPUT_UNREADABLE_FILE.input_error(source.file, 0,
                                                    f"cannot read the file: {exc}")
            return
        strict = False
        if first.startswith((b"{", b"[")):
            try:
                bounded_loads(first)
                strict = True
            except JSONDecodeError:
                pass
        if strict:  # JSON lines: a line that is not JSON is an error
            for item in iter_lines(source):
                if isinstance(item, InputError):
                    yield item
                else:
                    state.value(item[1], item[0])
            return
        # a text log: only the lines that end in a JSON-RPC message count
        with open(source.path, "rb") as fh:
            for number, raw_bytes in file_lines(fh, source.limits):
                if b"jsonrpc" not in raw_bytes:
                    continue
                parts = text_line(raw_bytes.decode("utf-8", errors="replace").strip())
                if parts is None:
                    if b"tools/call" in raw_bytes:  # a call that is there, never passed over
                        state.invalid(number, "this line mentions a tools/call JSON-RPC "
                                              "message but does not end in one (text after "
                                              "its closing '}'?): its call cannot be read; "
                                              "log each message at the end of its line")
                    continue
                ts, who, text = parts
                try:
                    value = bounded_loads(text)
                except JSONDecodeError as exc:
                    yield INPUT_PARSE_ERROR.input_error(
                        source.file, number,
                        "the JSON-RPC message on this line is not valid JSON "
                        f"({exc})")
                    continue
                state.value(value, number, ts, who)


READER = McpReader()
