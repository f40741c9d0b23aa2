"""The native format (docs/formats.md): JSONL events, or a ``.json`` array of them.

Streaming: a JSONL file is read line by line; a trace is handed on at its
``trace_end`` line, the remaining ones at the end of the file (a file may interleave
several traces by ``trace_id``, so only then are they known to be complete).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any, BinaryIO, ClassVar

import orjson

from agent_eval.errors import InputError
from agent_eval.jsonutil import JsonLimitError, file_lines, json_type, read_whole
from agent_eval.jsonutil import loads as bounded_loads
from agent_eval.limits import Limits
from agent_eval.matching import normalize_name
from agent_eval.model import (
    LONG_TRACE,
    CallLog,
    Handoff,
    LlmCall,
    Location,
    Score,
    ToolCall,
    Trace,
    location,
    score_value,
)
from agent_eval.readers._head import ESCAPE, asked, head_tokens
from agent_eval.readers.base import (
    NATIVE_EVENT_TYPES,
    IgnoredEvents,
    ReadItem,
    SourceFile,
    bad_figure,
    negative_figure,
)
from agent_eval.readers.jsonpos import element_lines, string_members
from agent_eval.rule_ids import (
    INPUT_EVENT_AFTER_END,
    INPUT_INVALID_EVENT,
    INPUT_LIMIT_EXCEEDED,
    INPUT_NO_TRACES,
    INPUT_PARSE_ERROR,
    INPUT_UNMATCHED_RESULT,
    INPUT_UNREADABLE_FILE,
    Rule,
)

EVENT_TYPES = NATIVE_EVENT_TYPES
_loads = bounded_loads
_orjson_loads = orjson.loads
_JSONDecodeError = orjson.JSONDecodeError
_BOM = b"\xef\xbb\xbf"
_QUOTED_EVENT_TYPES = tuple((t.encode(), f'"{t}"') for t in EVENT_TYPES)
EVENT_TOKENS = asked(*(token for token, _ in _QUOTED_EVENT_TYPES))  # (as the head's tokens)


_RESPELT = {normalize_name(t): t for t in EVENT_TYPES}
_RESPELT_CHARS = 2 * max(map(len, EVENT_TYPES))  # a longer type respells none of them


def _respelt_type(kind: object) -> str | None:
    """The native event type that ``kind`` (not one) writes in another case or with other
    separators (``Tool_Call``, ``tool-call``, ``toolCall``: ``tool_call``), else None."""
    if type(kind) is not str or len(kind) > _RESPELT_CHARS:
        return None
    return _RESPELT.get(normalize_name(kind))


def _lines_holding(text: str, names: list[str]) -> list[str]:
    """The lines of ``text`` (split at newlines) that hold one of ``names``, in order."""
    starts: set[int] = set()
    for name in names:
        at = text.find(name)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            end = text.find("\n", at)
            at = -1 if end < 0 else text.find(name, end)
    lines = []
    for start in sorted(starts):
        end = text.find("\n", start)
        lines.append(text[start:] if end < 0 else text[start:end])
    return lines


def _is_event_path(path: tuple[str | int, ...]) -> bool:
    """The path of an event object in a document: ``[i]`` or ``{"events": [i]}``."""
    return (len(path) == 1 and isinstance(path[0], int)) or (
        len(path) == 2 and path[0] == "events" and isinstance(path[1], int))


def decode_arguments(raw: Any) -> tuple[Any, str | None]:
    """Arguments as a dict, decoding JSON strings (twice if encoded twice).
    Returns (value, None) or (raw value, why it is not an object)."""
    if type(raw) is dict:
        return raw, None
    if raw is None:
        return {}, None
    value = raw
    for _ in range(2):
        if not isinstance(value, str):
            break
        try:
            value = _loads(value)
        except _JSONDecodeError:
            return raw, "a string that is not valid JSON"
    if isinstance(value, dict):
        return value, None
    return raw, f"a JSON {json_type(value)}, not an object"


def _plain_number(v: Any) -> bool:
    """None or a JSON number (what :meth:`_FileState.number` accepts silently)."""
    return v is None or type(v) is int or type(v) is float


def _first(obj: dict[str, Any], *names: str) -> Any:
    for n in names:
        if n in obj:
            return obj[n]
    return None


_MISSING = object()
OUTPUT_KEYS = ("output", "content", "text", "answer")  # an output event's, in this order


def _canonical(value: Any) -> bytes | str:
    """A decoded value as comparable text (keys sorted; ``1`` and ``true`` differ)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return repr(value)


def _shown(value: Any) -> str:
    """A value of a trace quoted in a message, at most 80 characters of it."""
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"


def _result_of(obj: dict[str, Any]) -> tuple[Any, bool, str | None]:
    """A tool_result event's (result, ok, error)."""
    error = obj.get("error")
    if error is False or error == "":
        error = None
    is_error = bool(obj.get("is_error")) or error is not None
    result = obj["result"] if "result" in obj else obj.get("output")
    return result, not is_error, (
        str(error) if error is not None else
        (result if isinstance(result, str) else orjson.dumps(result).decode())
        if is_error else None)


def _answered(call: ToolCall) -> bool:
    """Whether a call holds a result that a second, other one would contradict: an error,
    or a result other than the ``"result": null`` a tool_call may carry until its
    tool_result comes."""
    return call.has_result and (not call.ok or call.result is not None
                                or call.result_location is not None)


class _Ids:
    """A call id -> the index of the latest call with that id, for a very long trace
    (:class:`_Long`): an open-addressing table in two arrays (12 bytes a slot, at most
    half of them used), where a dict would hold every id string (about 120 bytes a call).
    A key is the id's hash (``hash(str)``: 64 bits, keyed at random per process), so two
    ids of one trace are taken for one only if their hashes agree, which for a million
    ids happens about once in 30 million traces (docs/architecture.md)."""

    __slots__ = ("count", "keys", "mask", "values")

    def __init__(self) -> None:
        self.count = 0
        self.mask = (1 << 12) - 1
        self.keys = array("q", bytes(8 << 12))  # 0: an empty slot (a hash of 0 is put as 1)
        self.values = array("i", bytes(4 << 12))

    def _slot(self, h: int) -> int:
        """The slot of the key ``h``, or the empty slot where it would go."""
        keys, mask = self.keys, self.mask
        slot = h & mask
        while True:
            k = keys[slot]
            if k == h or k == 0:
                return slot
            slot = (slot + 1) & mask

    def put(self, cid: str, index: int) -> None:
        h = hash(cid) or 1
        slot = self._slot(h)
        if self.keys[slot] == 0:
            self.keys[slot] = h
            self.count += 1
        self.values[slot] = index
        if 2 * self.count > self.mask:
            self._grow()

    def get(self, cid: str) -> int | None:
        slot = self._slot(hash(cid) or 1)
        return None if self.keys[slot] == 0 else self.values[slot]

    def _grow(self) -> None:
        keys, values = self.keys, self.values
        size = 2 * len(keys)
        self.mask = mask = size - 1
        self.keys = new_keys = array("q", bytes(8 * size))
        self.values = new_values = array("i", bytes(4 * size))
        for k, v in zip(keys, values, strict=True):
            if k:
                slot = k & mask
                while new_keys[slot]:
                    slot = (slot + 1) & mask
                new_keys[slot] = k
                new_values[slot] = v


class _Long:
    """The bookkeeping of a trace beyond :data:`LONG_TRACE` calls, whose calls are a
    :class:`CallLog` (most of them on disk): calls are known by index. ``ids`` maps an id
    to its latest call, ``pending`` holds per tool name the calls made without a result,
    in order, and ``closed`` marks the calls a result was matched to since (a pending list
    drops them when they reach its end: the latest open call is then its last entry)."""

    __slots__ = ("closed", "ids", "log", "pending")

    def __init__(self, calls: list[ToolCall], by_id: dict[str, ToolCall],
                 open_by_tool: dict[str, dict[int, ToolCall]]) -> None:
        at = {id(call): i for i, call in enumerate(calls)}
        self.ids = _Ids()
        for cid, call in by_id.items():
            self.ids.put(cid, at[id(call)])
        self.pending = {name: array("i", [at[key] for key in open_calls])
                        for name, open_calls in open_by_tool.items() if open_calls}
        self.closed = bytearray(_answered(c) for c in calls)
        self.log = CallLog(calls)

    def add(self, call: ToolCall) -> None:
        index = len(self.log)
        self.log.append(call)
        self.closed.append(_answered(call))
        if call.id is not None:
            self.ids.put(call.id, index)
        if not call.has_result:
            pending = self.pending.get(call.name)
            if pending is None:
                self.pending[call.name] = array("i", [index])
            else:
                pending.append(index)

    def match(self, cid: Any, name: Any) -> int | None:
        """The index of the call a result is for (as :meth:`_FileState.tool_result` finds
        it in a trace held in memory), marked as no longer open; None: no call. Whether
        it had a result before is ``closed[index]`` as it was, which the caller reads
        first."""
        index = self.ids.get(str(cid)) if cid is not None else None
        if index is None and isinstance(name, str):
            pending = self.pending.get(name)
            closed = self.closed
            while pending and closed[pending[-1]]:
                pending.pop()
            if pending:
                index = pending[-1]
        if index is not None:
            self.closed[index] = 1
        return index


class _Open:
    """A trace being assembled."""

    __slots__ = ("by_id", "end_line", "ended", "long", "open_by_tool", "output_line",
                 "trace")

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.by_id: dict[str, ToolCall] = {}
        # calls still without a result, per tool name, in call order, keyed by identity:
        # matching and removing one is O(1) whatever the trace's length (a list and
        # ``list.remove`` compared whole calls field by field: quadratic on long traces)
        self.open_by_tool: dict[str, dict[int, ToolCall]] = {}
        self.ended = False
        self.end_line = trace.location.line
        self.long: _Long | None = None  # beyond LONG_TRACE calls (then by_id etc. are empty)
        self.output_line = 0  # the line of the final output read so far (0: none)

    def go_long(self) -> None:
        """From now on the calls are a :class:`CallLog`, known by index (:class:`_Long`)."""
        calls = self.trace.tool_calls
        assert isinstance(calls, list)
        self.long = long = _Long(calls, self.by_id, self.open_by_tool)
        self.trace.tool_calls = long.log
        self.by_id, self.open_by_tool = {}, {}

    def finish(self) -> Trace:
        """The trace, with its last line set (kept as a number while reading)."""
        t = self.trace
        if t.end_location.line != self.end_line:
            t.end_location = Location(t.source, self.end_line)
        return t


class _FileState:
    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.file = source.file
        self.open: dict[str, _Open] = {}
        self.current: str | None = None  # trace of the latest trace_start (ended or not)
        self.ended: set[str] = set()
        self.errors: list[InputError] = []
        self.done: list[Trace] = []
        self.unknown = 0
        self.traces = 0  # traces started in this file
        self.error_count = 0
        # for a byte range (:class:`NativeRange`): every trace id it opened, and how many
        # traces an event other than trace_start opened
        self.ids: list[str] = []
        self.implicit = 0

    def finish(self) -> Iterator[ReadItem]:
        """The end of the file: its pending errors, the traces still open (ended by the
        file's end) and how many unknown events it held."""
        yield from self.errors
        self.errors.clear()
        for t in self.open.values():
            yield t.finish()
        if self.unknown:
            yield IgnoredEvents(self.file, self.unknown)

    def error(self, rule: Rule, line: int, message: str) -> None:
        self.error_count += 1
        self.errors.append(rule.input_error(self.file, line, message))

    def negative(self, name: str, key: str, value: object, line: int) -> None:
        self.error_count += 1
        self.errors.append(negative_figure(f"{name}: ", key, value, self.file, line))

    def number(self, obj: dict[str, Any], key: str, line: int) -> Any:
        v = obj.get(key)
        if v is None or (isinstance(v, int | float) and not isinstance(v, bool)):
            return v
        self.error(INPUT_INVALID_EVENT, line,
                   f"'{key}' must be a number, not {json_type(v)} ({v!r}); it is treated "
                   "as not recorded")
        return None

    def trace_for(self, obj: dict[str, Any], line: int, start: bool = False) -> _Open | None:
        tid = obj.get("trace_id")
        if not start and type(tid) is str:  # the hot path: an event of an open trace
            t = self.open.get(tid)
            if t is not None:
                t.end_line = line
                return t
        if tid is not None:
            tid = str(tid)
        elif start:
            tid = f"{self.source.trace_id}:{line}"
            self.current = tid
        else:
            tid = self.current or self.source.trace_id
        if tid in self.ended:
            self.error(INPUT_EVENT_AFTER_END, line,
                       f"event for trace '{tid}' after its trace_end line; move it before "
                       "the trace_end or give it another trace_id")
            return None
        t = self.open.get(tid)
        if t is None:
            loc = Location(self.file, line)
            t = _Open(Trace(id=tid, source=self.file, location=loc, end_location=loc,
                            handoffs_recorded=True))
            t.end_line = line
            self.open[tid] = t
            self.traces += 1
            self.ids.append(tid)
            if not start:
                self.implicit += 1
        else:
            t.end_line = line
        if start and obj.get("trace_id") is not None:
            self.current = tid
        return t

    # ------------------------------------------------------------------ events
    def trace_start(self, obj: dict[str, Any], line: int) -> None:
        t = self.trace_for(obj, line, start=True)
        if t is None:
            return
        tr = t.trace
        if "scenario" in obj and obj["scenario"] is not None:
            tr.scenario = str(obj["scenario"])
        if "input" in obj:
            tr.input = obj["input"]
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            tr.metadata.update(meta)
        elif meta is not None:
            self.error(INPUT_INVALID_EVENT, line, "'metadata' must be an object")
        recorded = obj.get("handoffs_recorded")
        if recorded is not None and recorded is not True:
            # false: converted from a format that records none (convert.py)
            tr.handoffs_recorded = False
            if recorded is not False:
                self.error(INPUT_INVALID_EVENT, line,
                           f"'handoffs_recorded' must be true or false, not "
                           f"{json_type(recorded)}; the trace's handoffs are taken as not "
                           "recorded, so its scenario's handoff checks cannot run")

    def tool_call(self, obj: dict[str, Any], line: int) -> None:
        # the hot path (most lines are tool calls): dict lookups bound once, the open
        # trace found inline, the common shapes tested first
        get = obj.get
        name = get("tool")
        if name is None:
            name = get("name")
        elif "name" in obj and obj["name"] != name:  # two names: the rules read one
            self.error(INPUT_INVALID_EVENT, line,
                       f"tool_call names two tools, 'tool': {_shown(name)} and 'name': "
                       f"{_shown(obj['name'])}; the call is taken as 'tool', and rules for "
                       "the other were not checked: write one of them")
        if type(name) is not str or not name:
            self.error(INPUT_INVALID_EVENT, line,
                       "tool_call without a tool name; add \"tool\": \"<name>\"")
            return
        tid = get("trace_id")
        t = self.open.get(tid) if type(tid) is str else None
        if t is None:
            t = self.trace_for(obj, line)
            if t is None:
                return
        else:
            t.end_line = line
        raw = get("arguments", _MISSING)
        recorded = True
        if type(raw) is dict:
            args, why = raw, None
        elif raw is _MISSING and get("arguments_recorded") is False:
            args, why, recorded = None, None, False  # as `convert` writes it
        else:
            if raw is _MISSING:
                raw = _first(obj, "args", "input")
            args, why = decode_arguments(raw)
        if "args" in obj or "input" in obj:
            self._arguments_twice(obj, line)
        cid = get("id")
        if cid is None:
            cid = get("call_id")
            if cid is not None:
                cid = str(cid)
        elif type(cid) is not str:
            cid = str(cid)
        error = get("error")
        if error is None:
            ok = not get("is_error")
            has_result = "result" in obj
        else:
            if error is False or error == "":
                error = None
                ok = not get("is_error")
            else:
                error = str(error)
                ok = False
            has_result = error is not None or "result" in obj
        latency = get("latency_ms")
        if latency is not None and type(latency) is not int and type(latency) is not float:
            latency = self.number(obj, "latency_ms", line)
        call = ToolCall(name, args, location(self.file, line), cid, get("result"), error, ok,
                        latency, None, why, has_result, recorded)
        calls = t.trace.tool_calls
        if type(calls) is not list:
            assert t.long is not None
            if latency is not None and bad_figure(latency):  # a CallLog is not checked after
                self.negative(call.name, "latency_ms", latency, line)
                call.latency_ms = None
            t.long.add(call)
            return
        calls.append(call)
        if cid is not None:
            t.by_id[cid] = call
        if not has_result:
            pending = t.open_by_tool.get(name)
            if pending is None:
                t.open_by_tool[name] = {id(call): call}
            else:
                pending[id(call)] = call
        if len(calls) > LONG_TRACE:
            t.go_long()

    def _arguments_twice(self, obj: dict[str, Any], line: int) -> None:
        """An input error when a tool_call gives its arguments under two of
        ``arguments``, ``args`` and ``input`` with other values: the call's arguments
        are the first of them, and what the others hold was never checked."""
        self._aliases_agree(obj, ("arguments", "args", "input"), line,
                            "tool_call gives its arguments", "the call's arguments are",
                            lambda v: _canonical(decode_arguments(v)[0]))

    def _aliases_agree(self, obj: dict[str, Any], names: tuple[str, ...], line: int,
                       gives: str, read: str,
                       canon: Callable[[Any], Any] = _canonical) -> None:
        """An input error when ``obj`` holds two of the alias keys ``names`` whose values
        (as ``canon`` gives them) differ: what is read is the first of them, and what the
        other holds was never checked."""
        keys = [k for k in names if k in obj]
        if len(keys) < 2:
            return
        first = canon(obj[keys[0]])
        other = next((k for k in keys[1:] if canon(obj[k]) != first), None)
        if other is not None:
            self.error(INPUT_INVALID_EVENT, line,
                       f"{gives} twice, differently, as '{keys[0]}' and '{other}'; {read} "
                       f"'{keys[0]}', and what '{other}' holds was not checked: write one "
                       "of them")

    def tool_result(self, obj: dict[str, Any], line: int) -> None:
        t = self.trace_for(obj, line)
        if t is None:
            return
        cid = obj.get("id")
        if cid is None:
            cid = obj.get("call_id")
        name = obj.get("tool")
        if name is None:
            name = obj.get("name")
        long = t.long
        if long is not None:
            by_id = long.ids.get(str(cid)) if cid is not None else None
            answered = by_id is not None and long.closed[by_id]  # before match marks it
            index = long.match(cid, name)
            if index is None:
                self._unmatched(t, cid, name, line)
                return
            result, ok, error = _result_of(obj)
            if answered and index == by_id and self._second(t, long.log[index], result, ok,
                                                            error, line):
                return
            fields = {"result": result, "has_result": True, "ok": ok, "error": error,
                      "result_location": Location(self.file, line)}
            latency = self.number(obj, "latency_ms", line)
            if latency is not None and bad_figure(latency):  # a CallLog is not checked after
                self.negative("tool_result", "latency_ms", latency, line)
                fields["latency_ms"] = None
            elif latency is not None:
                fields["latency_ms"] = latency
            long.log.update(index, fields)
            return
        call = t.by_id.get(str(cid)) if cid is not None else None
        if call is None and isinstance(name, str):
            pending = t.open_by_tool.get(name)
            if pending:
                call = next(reversed(pending.values()))  # the latest open one
        if call is None:
            self._unmatched(t, cid, name, line)
            return
        result, ok, error = _result_of(obj)
        if _answered(call) and self._second(t, call, result, ok, error, line):
            return
        pending = t.open_by_tool.get(call.name)
        if pending:
            pending.pop(id(call), None)
        call.result, call.ok, call.error = result, ok, error
        call.has_result = True
        call.result_location = Location(self.file, line)
        latency = self.number(obj, "latency_ms", line)
        if latency is not None and bad_figure(latency):  # reported at the result's line
            self.negative("tool_result", "latency_ms", latency, line)
            call.latency_ms = None
        elif latency is not None:
            call.latency_ms = latency

    def _second(self, t: _Open, call: ToolCall, result: Any, ok: bool, error: str | None,
                line: int) -> bool:
        """A tool_result for a call that has its result already: the same one again is no
        error; another one (a success after a failure) is an input error, and the first is
        kept. True: the result is not to be attached."""
        if (call.result, call.ok, call.error) != (result, ok, error):
            where = ("" if call.result_location is None
                     else f" (line {call.result_location.line})")
            self.error(INPUT_UNMATCHED_RESULT, line,
                       f"tool_result for id '{call.id}' is a second, other result of the "
                       f"'{call.name}' call at line {call.location.line}, which has one "
                       f"already{where}: the first is kept, and what this one says was not "
                       f"checked; give each call its own id (a retry is a tool_call of its "
                       "own)")
        return True

    def _unmatched(self, t: _Open, cid: Any, name: Any, line: int) -> None:
        what = f"id '{cid}'" if cid is not None else f"tool '{name}'"
        self.error(INPUT_UNMATCHED_RESULT, line,
                   f"tool_result for {what} matches no earlier tool_call in trace "
                   f"'{t.trace.id}'; give it the call's id")

    def llm_call(self, obj: dict[str, Any], line: int) -> None:
        t = self.trace_for(obj, line)
        if t is None:
            return
        get = obj.get
        i, o, total, cost, latency = (get("input_tokens"), get("output_tokens"),
                                      get("total_tokens"), get("cost_usd"), get("latency_ms"))
        if not (_plain_number(i) and _plain_number(o) and _plain_number(total)
                and _plain_number(cost) and _plain_number(latency)):
            n = self.number  # one is not a number: reported, in this order
            i, o, total = (n(obj, "input_tokens", line), n(obj, "output_tokens", line),
                           n(obj, "total_tokens", line))
            cost, latency = n(obj, "cost_usd", line), n(obj, "latency_ms", line)
        if total is None and i is not None and o is not None:
            total = i + o
        model = get("model")
        t.trace.llm_calls.append(LlmCall(location(self.file, line),
                                         None if model is None else str(model),
                                         i, o, total, cost, latency))

    def output(self, obj: dict[str, Any], line: int) -> None:
        t = self.trace_for(obj, line)
        if t is None:
            return
        self._aliases_agree(obj, OUTPUT_KEYS, line, "output gives the final answer",
                            "the output is")
        self._final_output(t, _first(obj, *OUTPUT_KEYS), line)

    def _final_output(self, t: _Open, value: Any, line: int) -> None:
        """The trace's final output; a second one of another value is an input error: the
        checks read only the last, and what the first said (a secret, a refusal) was
        never checked. A first output of ``null`` said nothing: a later one replaces it
        without a word (a later ``null`` after an answer is said: it would hide it)."""
        first = t.output_line
        if first and t.trace.output is not None and (
                _canonical(value) != _canonical(t.trace.output)):
            self.error(INPUT_INVALID_EVENT, line,
                       f"a second final output for trace '{t.trace.id}', other than the one "
                       f"at line {first}; the output checks read only the last (this "
                       "line's), so what the first said was not checked: write one final "
                       "output per trace")
        t.trace.output = value
        t.output_line = line

    def handoff(self, obj: dict[str, Any], line: int) -> None:
        t = self.trace_for(obj, line)
        if t is None:
            return
        to, source = obj.get("to_agent"), obj.get("from_agent")
        if not isinstance(to, str) or not to:
            self.error(INPUT_INVALID_EVENT, line,
                       "a handoff needs 'to_agent': the name of the agent that takes over")
            return
        t.trace.handoffs.append(Handoff(to, Location(self.file, line),
                                        source if isinstance(source, str) else None))

    def score(self, obj: dict[str, Any], line: int) -> None:
        """A score recorded by an evaluator (docs/judge.md "Recorded scores")."""
        t = self.trace_for(obj, line)
        if t is None:
            return
        name = _first(obj, "name", "key")
        if not isinstance(name, str) or not name:
            self.error(INPUT_INVALID_EVENT, line,
                       "a score event needs 'name' (or 'key'): the name of the score")
            return
        raw = _first(obj, "value", "score")
        label = obj.get("label")
        value = score_value(raw)
        if raw is not None and value is None and not isinstance(raw, str):
            self.error(INPUT_INVALID_EVENT, line,
                       f"'value' of score '{name}' must be a number, a boolean or a label, "
                       f"not {json_type(raw)}; it is treated as not recorded")
        if isinstance(raw, str) and value is None and label is None:
            label = raw
        if value is None and isinstance(label, str):
            value = score_value(label)
        comment = _first(obj, "comment", "explanation", "reasoning")
        t.trace.scores.append(Score(
            name, value, Location(self.file, line),
            label=None if label is None else str(label),
            comment=None if comment is None else str(comment)))

    def trace_end(self, obj: dict[str, Any], line: int) -> None:
        t = self.trace_for(obj, line)
        if t is None:
            return
        tr = t.finish()
        n = self.number
        tr.duration_ms = n(obj, "duration_ms", line)
        tr.cost_usd = n(obj, "cost_usd", line)
        tr.total_tokens = n(obj, "total_tokens", line)
        if "output" in obj:
            self._final_output(t, obj["output"], line)
        del self.open[tr.id]
        self.ended.add(tr.id)
        # ``current`` stays: a later line without trace_id still belongs to the most
        # recent trace_start's trace (docs/formats.md), so it is an event after its end.
        self.done.append(tr)

    # ----------------------------------------------------------------- driving
    def event(self, obj: Any, line: int) -> None:
        if type(obj) is not dict:
            self.error(INPUT_INVALID_EVENT, line,
                       f"an event must be a JSON object, not {json_type(obj)}")
            return
        kind = obj.get("type")
        if type(kind) is not str:
            # no type is no newer producer's type: ignored, the call it may hold would go
            # unchecked (a {"tool": "rm_rf"} line passed a blocklist of rm_rf)
            self.error(INPUT_INVALID_EVENT, line,
                       "the event has no 'type'; give it one (\"tool_call\", "
                       "\"tool_result\", …: docs/formats.md); the line is not read, so its "
                       "event is not checked" if kind is None else
                       f"'type' must be a string, not {json_type(kind)}")
            return
        handler = self.handlers.get(kind)
        if handler is None:
            meant = _respelt_type(kind)
            if meant is not None:  # a native event written wrong, not a newer type
                self.error(INPUT_INVALID_EVENT, line,
                           f"event type {kind!r} is not a native type (did you mean "
                           f"'{meant}'? types are written in lower case with underscores); "
                           f"the line is not read, so its event is not checked")
                return
            self.unknown += 1
            return
        handler(self, obj, line)

    handlers: ClassVar[dict[str, Callable[[_FileState, dict[str, Any], int], None]]] = {}


_FileState.handlers = {name: getattr(_FileState, name) for name in EVENT_TYPES}


class NativeReader:
    name = "native"

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        """A native event at the top level: a line (JSONL) or an element of the
        document's event array (``.json``) whose own ``type`` is a native event type.
        A ``"type": "tool_result"`` nested deeper (Anthropic / Claude Code content
        blocks) does not count."""
        text = head.removeprefix(_BOM).decode("utf-8", errors="replace")
        if source.path.endswith(".json"):
            return any(_is_event_path(path) and value in EVENT_TYPES
                       for path, value in string_members(text, "type"))
        # A line whose own type is a native event type holds that name in quotes, or writes
        # it with a \u escape (the names have no other character an escape could write):
        # only those lines are parsed. The names in quotes are among the head's tokens.
        tokens = head_tokens(head)
        names = [quoted for token, quoted in _QUOTED_EVENT_TYPES if token in tokens]
        escaped = ESCAPE.search(head) is not None
        if not names and not escaped:
            return False
        for line in text.split("\n") if escaped else _lines_holding(text, names):
            if not line.lstrip().startswith("{"):
                continue
            try:
                obj = _loads(line)
            except _JSONDecodeError:  # a bad line, or the last one cut off by the head
                if any(path == () and value in EVENT_TYPES
                       for path, value in string_members(line, "type")):
                    return True
                continue
            if type(obj) is dict and obj.get("type") in EVENT_TYPES:
                return True
        return False

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        state = _FileState(source)
        try:
            if source.path.endswith(".json"):
                yield from self._read_document(state)
            else:
                yield from self._read_lines(state)
        except OSError as exc:
            state.error(INPUT_UNREADABLE_FILE, 0, f"cannot read the file: {exc}")
        except JsonLimitError as exc:  # the traces read so far are still evaluated
            state.error(INPUT_LIMIT_EXCEEDED, exc.line, str(exc))
        if not state.traces and not state.error_count:
            # never silently skipped: an empty file, or one of unknown events only
            what = (f"only {state.unknown} event(s) of unknown type" if state.unknown
                    else "no events")
            state.error(INPUT_NO_TRACES, 0,
                        f"the file holds {what}, so no trace; native events have a "
                        f"\"type\" of {', '.join(EVENT_TYPES)}")
        yield from state.finish()

    def _flush(self, state: _FileState) -> Iterable[ReadItem]:
        if state.errors:
            yield from state.errors
            state.errors.clear()
        if state.done:
            yield from state.done
            state.done.clear()

    def _read_lines(self, state: _FileState) -> Iterator[ReadItem]:
        with open(state.source.path, "rb") as fh:
            yield from self._read_events(state, file_lines(fh, state.source.limits))

    def _read_events(self, state: _FileState, lines: Iterable[tuple[int, bytes]]
                     ) -> Iterator[ReadItem]:
        event = state.event
        tool_call = state.tool_call
        short = 2 * state.source.limits.max_depth + 2  # a shorter text cannot nest deeper
        plain = _orjson_loads
        for number, raw in lines:
            if number == 1:
                raw = raw.removeprefix(_BOM)
            try:
                # the hot path: orjson itself unless the line could be over a limit
                obj = plain(raw) if len(raw) < short else _loads(raw)
            except _JSONDecodeError as exc:
                if raw.strip():
                    state.error(INPUT_PARSE_ERROR, number,
                                f"line is not valid JSON ({exc}); fix or remove the line")
                    yield from self._flush(state)
                continue
            if type(obj) is dict and obj.get("type") == "tool_call":
                tool_call(obj, number)  # most lines: no dispatch
            else:
                event(obj, number)
            if state.done or state.errors:
                yield from self._flush(state)

    def _read_document(self, state: _FileState) -> Iterator[ReadItem]:
        with open(state.source.path, "rb") as fh:
            data = read_whole(fh, state.source.limits).removeprefix(_BOM)
        try:
            doc = _loads(data)
        except _JSONDecodeError as exc:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as bad:
                line = data[: bad.start].count(b"\n") + 1
            else:
                line = exc.lineno  # orjson's pos counts characters, not bytes
            state.error(INPUT_PARSE_ERROR, line, f"file is not valid JSON ({exc})")
            return
        prefix: tuple[str, ...]
        if isinstance(doc, dict) and isinstance(doc.get("events"), list):
            events, prefix = doc["events"], ("events",)
        elif isinstance(doc, list):
            events, prefix = doc, ()
        else:
            state.error(INPUT_INVALID_EVENT, 1,
                        "expected a JSON array of events or an object {\"events\": [...]}")
            return
        lines = element_lines(data.decode("utf-8"), prefix[0] if prefix else None)
        for i, obj in enumerate(events):
            state.event(obj, lines[i] if i < len(lines) else 1)
            yield from self._flush(state)


READER = NativeReader()


def trace_start_line(raw: bytes) -> bool:
    """Whether a JSONL line is a native ``trace_start`` event (a place a native file can
    be cut for ``--jobs``: see :class:`NativeRange`)."""
    if b"trace_start" not in raw:
        return False
    try:
        obj = _orjson_loads(raw.removeprefix(_BOM))
    except _JSONDecodeError:
        return False
    return type(obj) is dict and obj.get("type") == "trace_start"


class NativeRange:
    """A byte range of a native JSONL file, read as :class:`NativeReader` reads the whole
    file, for ``--jobs``: it starts at a ``trace_start`` line (``first_line`` is its line
    number) and ends before ``end`` (a line start, or the end of the file).

    The range is *clean* when reading it cannot differ from reading the whole file: it was
    read to its end without a limit or read error, it opened at least one trace, an event
    other than ``trace_start`` opened none (except in the file's first range), and (unless
    it is the last) every trace it opened ended in it. ``ids`` are the traces it opened:
    ranges of one file are interchangeable with the whole file only when their ids are
    disjoint. The caller reads the whole file instead when a range is not clean."""

    name = "native"

    def __init__(self, start: int, end: int, first_line: int, last: bool) -> None:
        self.start, self.end, self.first_line, self.last = start, end, first_line, last
        self.clean = False
        self.ids: list[str] = []

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return False  # never picked by content: the engine makes ranges of native files

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        state = _FileState(source)
        try:
            with open(source.path, "rb") as fh:
                fh.seek(self.start)
                yield from READER._read_events(state, self._lines(fh, source.limits))
        except (OSError, JsonLimitError):
            return  # not clean: the whole file is read instead, and reports it
        yield from state.finish()
        self.ids = state.ids
        self.clean = (state.traces > 0 and (self.start == 0 or not state.implicit)
                      and (self.last or not state.open))

    def _lines(self, fh: BinaryIO, limits: Limits) -> Iterator[tuple[int, bytes]]:
        cap = limits.max_file_bytes
        pos, end, number = self.start, self.end, self.first_line - 1
        while pos < end:
            raw = fh.readline(cap + 1)
            if not raw:
                return
            pos += len(raw)
            number += 1
            if len(raw) > cap and not raw.endswith(b"\n"):
                raise JsonLimitError("line too long", number)
            yield number, raw
