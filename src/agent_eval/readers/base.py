"""The reader interface: a format turns one file into canonical traces.

A reader yields :class:`Trace` objects and :class:`InputError` records in file order
and never raises for bad content: a bad line is an error record and reading goes on.
Adding a format is one module with a ``READER`` object plus one line in the registry.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from agent_eval.errors import InputError
from agent_eval.limits import DEFAULT, Limits
from agent_eval.model import ToolCall, Trace
from agent_eval.rule_ids import INPUT_INVALID_EVENT


@dataclass(frozen=True, slots=True)
class IgnoredEvents:
    """Not an error: how many events of unknown type a file held (they are ignored,
    for forward compatibility, and counted in the results)."""

    file: str
    count: int


@dataclass(frozen=True, slots=True)
class FileRead:
    """Which reader read a file (``format: auto`` reports its choice per file)."""

    file: str
    format: str


ReadItem = Trace | InputError | IgnoredEvents | FileRead


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A trace file to read: where it is on disk and in the repository."""

    path: str  # absolute path on disk
    file: str  # repo-relative path, used in every location
    trace_id: str  # default trace id: the path relative to the config's folder
    limits: Limits = DEFAULT  # the suite's limits: a reader reads the file within them
    # the reader of this file whatever the suite's format: says (a live probe's session,
    # which agent-eval writes as an MCP log: docs/mcp.md); None: the suite's
    format: str | None = None


class Reader(Protocol):
    name: str

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        """True when ``head`` (the first KiB of the file) looks like this format."""
        ...

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        ...


# The largest token count, cost (USD) or latency/duration (ms) a trace may hold: far over
# any real one (10^15 ms is 31,000 years), and small enough that no sum of such figures
# over any number of calls a trace can hold overflows a float (docs/formats.md "Numbers").
FIGURE_MAX = 10**15


def bad_figure(value: float) -> bool:
    """A figure no real trace holds: below 0, NaN, over :data:`FIGURE_MAX` or infinite
    (a comparison, so as cheap as the check for below 0 it extends)."""
    return not 0 <= value <= FIGURE_MAX


def negative_figure(what: str, key: str, value: object, file: str, line: int) -> InputError:
    """The input error of a figure below 0 or over :data:`FIGURE_MAX` (or NaN, or
    infinite), in every format (``what``: whose figure, as a prefix of the message:
    "the trace's ", "send_email: ")."""
    if isinstance(value, int | float) and value > FIGURE_MAX:
        return InputError(INPUT_INVALID_EVENT.id, file, line,
                          f"{what}'{key}' must be a number of at most 10^15 (no real trace "
                          f"holds more), not {value!r}; it is treated as not recorded")
    return InputError(INPUT_INVALID_EVENT.id, file, line,
                      f"{what}'{key}' must be a number of at least 0, not {value!r}; it is "
                      "treated as not recorded")


# Content parts (blocks) that hold a tool call or result, by format: Anthropic blocks, the
# Vercel AI SDK's and Gemini's parts, OpenAI's item types. A reader that meets one of
# another format's in a message it reads cannot see that call: an input error, never a
# message read without it.
CALL_PARTS = frozenset(("tool_use", "server_tool_use", "mcp_tool_use", "tool_result",
                        "tool_call", "tool-call", "tool-result", "functionCall",
                        "function_call", "function_response", "functionResponse"))


# agent-eval's own event types (the native format's, readers/native.py)
NATIVE_EVENT_TYPES = ("trace_start", "tool_call", "tool_result", "llm_call", "output", "handoff",
                      "score", "trace_end")


def native_event(value: Any, fmt: str, file: str, line: int) -> InputError | None:
    """The input error of a record of another format's file that is an agent-eval native
    event (``{"type": "tool_call", "tool": ...}``: a native file joined to it, after the
    first 8 KiB ``format: auto`` looks at), or None when ``value`` is none: counted as an
    ignored record like any other, its call would never be checked."""
    kind = value.get("type") if type(value) is dict else None
    if type(kind) is not str or kind not in NATIVE_EVENT_TYPES:
        return None
    return INPUT_INVALID_EVENT.input_error(
        file, line, f"an agent-eval native '{kind}' event in a file read as {fmt} "
        "(format: auto picks a file's reader by its first 8 KiB): it is not read, so what "
        "it records is not checked; keep native events in a file of their own, or convert "
        "the file")


def foreign_part(kind: str, fmt: str, file: str, line: int) -> InputError:
    """The error for a content part of type ``kind`` that ``fmt`` messages never hold."""
    return INPUT_INVALID_EVENT.input_error(
        file, line, f"a content part or item of type '{kind}' is not {fmt}: the call or "
        "result in it cannot be read; is the file another format (format: auto picks the "
        "reader by content)?")


def reused_call_id(cid: str, first: ToolCall, file: str, line: int) -> InputError:
    """The input error of a call whose id an earlier call of the file has, with another
    tool name or other arguments (a history repeated in a log repeats both): it is read
    as a call of its own, and said, in every format."""
    return InputError(INPUT_INVALID_EVENT.id, file, line,
                      f"call id '{cid}' reused for a different call (name/arguments differ "
                      f"from the '{first.name}' call at line {first.location.line}); it is "
                      "read as a call of its own; give each call its own id")


def same_call(call: ToolCall, name: str, arguments: object, why: str | None) -> bool:
    """True when a call recorded again under the id of ``call`` is ``call``: the same tool
    name and the same (decoded) arguments."""
    return call.name == name and call.arguments == arguments and call.arguments_error == why


class CallIndex:
    """Tool calls by call id, in the order they were added. An id is almost always one
    call's: it maps to the call itself, and to a list only once another call has it (a
    reused id), so the index costs no object per call."""

    __slots__ = ("_by_id",)

    def __init__(self) -> None:
        self._by_id: dict[str, ToolCall | list[ToolCall]] = {}

    def __contains__(self, key: str) -> bool:
        return key in self._by_id

    def __len__(self) -> int:
        """How many ids it holds."""
        return len(self._by_id)

    def add(self, key: str, call: ToolCall) -> None:
        have = self._by_id.get(key)
        if have is None:
            self._by_id[key] = call
        elif isinstance(have, list):
            have.append(call)
        else:
            self._by_id[key] = [have, call]

    def first(self, key: str) -> ToolCall | None:
        have = self._by_id.get(key)
        return have[0] if isinstance(have, list) else have

    def last(self, key: str) -> ToolCall | None:
        have = self._by_id.get(key)
        return have[-1] if isinstance(have, list) else have

    def calls(self, key: str) -> list[ToolCall]:
        """The calls with that id (a new list: ``first`` is cheaper when one will do)."""
        have = self._by_id.get(key)
        if have is None:
            return []
        return list(have) if isinstance(have, list) else [have]

    def same(self, key: str, name: str, arguments: Any, why: str | None) -> ToolCall | None:
        """The call with that id that a call recorded again is (:func:`same_call`)."""
        have = self._by_id.get(key)
        if isinstance(have, list):
            return next((c for c in have if same_call(c, name, arguments, why)), None)
        return have if have is not None and same_call(have, name, arguments, why) else None

    def open(self, key: str) -> ToolCall | None:
        """The earliest call with that id that has no result."""
        have = self._by_id.get(key)
        if isinstance(have, list):
            return next((c for c in have if not c.has_result), None)
        return have if have is not None and not have.has_result else None

    def has_result(self, key: str, value: Any) -> bool:
        """Whether a call with that id has the result ``value``."""
        have = self._by_id.get(key)
        if isinstance(have, list):
            return any(c.has_result and c.result == value for c in have)
        return have is not None and have.has_result and have.result == value

    def remove(self, key: str, call: ToolCall) -> None:
        have = self._by_id.get(key)
        if isinstance(have, list):
            have.remove(call)
        elif have is call:
            del self._by_id[key]
