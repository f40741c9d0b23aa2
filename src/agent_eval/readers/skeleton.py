"""The skeleton a foreign-format reader fills in (docs/architecture.md "Readers").

Every reader does the same around its own format: it recognises a file by marks in its
first KiB, reads the file's records (JSON lines, or one document holding a list),
reports each bad record as an input error and goes on, collects traces, and reports a
file that held nothing of its format and the events it ignored. :class:`FormatReader`
does all of that once; a reader says only what is its own:

- ``name`` and ``marks`` (its sniff, kept in readers/sniffs.py: a ``sniffs.Marks`` of
  the patterns that must all be found in the head of a file),
- ``state``: a :class:`ReadState` subclass that takes one record at a time (most
  dispatch on the record's type through a table of handlers, see :func:`dispatch`),
- ``empty``: the message for a file that holds no record of the format.

:class:`EventReader` reads records one by one (``records``), :class:`DocumentReader`
reads one JSON document whose list of items is under ``key``; a reader whose file is one
document of any shape or JSON lines reads it with :func:`feed` and ends with
:meth:`FormatReader.finish`. The order of what a reader yields is fixed here: the input
errors of unreadable records as they come, then the errors the state found, the traces,
the "empty" error and the ignored-event count.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from typing import Any, ClassVar

from agent_eval.errors import InputError
from agent_eval.jsonutil import json_type
from agent_eval.model import Location, ToolCall, Trace
from agent_eval.readers import sniffs
from agent_eval.readers._foreign import (
    JsonDoc,
    as_dict,
    iter_lines,
    new_trace,
    open_records,
    read_document,
    records,
    span_ms,
    touch,
)
from agent_eval.readers.base import IgnoredEvents, ReadItem, SourceFile, native_event
from agent_eval.readers.native import decode_arguments
from agent_eval.rule_ids import INPUT_INVALID_EVENT, INPUT_UNMATCHED_RESULT, Rule

__all__ = ["DocumentReader", "DocumentState", "EventReader", "Fed", "FormatReader", "LineAt",
           "OneTrace", "ReadState", "dispatch", "feed", "named"]

LineAt = Callable[..., int]  # the line of a JSON path below a value


def _on_line(number: int) -> LineAt:
    return lambda *_path: number


class Fed:
    """What :func:`feed` did: whether it yielded an error, whether the whole file failed."""

    def __init__(self) -> None:
        self.reported = False
        self.failed = False


def feed(source: SourceFile, take: Callable[[Any, LineAt, bool], None], *,
         text_log: bool = False, lines: Callable[[], Iterator[InputError]] | None = None,
         flush: list[InputError] | None = None,
         fed: Fed | None = None) -> Generator[InputError, None, bool]:
    """Give every value of a file to ``take(value, line_at, whole)``: each JSON line
    (every path below it is on that line), or the one JSON document (``whole``: its line
    lookup), as :func:`~agent_eval.readers._foreign.open_records` decides; yields the
    input errors of lines that are not JSON. ``lines`` reads a file of lines instead (a
    text log); ``flush``: errors ``take`` collected are yielded after each line, in file
    order. Returns True (and sets ``fed.failed``) when the whole file could not be read:
    its one error was yielded and the reader has nothing more to say about it."""
    fed = fed if fed is not None else Fed()
    for error in _feed(source, take, text_log, lines, flush, fed):
        fed.reported = True
        yield error
    return fed.failed


def _feed(source: SourceFile, take: Callable[[Any, LineAt, bool], None], text_log: bool,
          lines: Callable[[], Iterator[InputError]] | None, flush: list[InputError] | None,
          fed: Fed) -> Iterator[InputError]:
    doc = open_records(source, text_log)
    if isinstance(doc, InputError):
        fed.failed = True
        yield doc
    elif isinstance(doc, JsonDoc):
        take(doc.value, doc.line, True)
    elif lines is not None:
        yield from lines()
    else:
        for item in iter_lines(source):
            if isinstance(item, InputError):
                yield item
                continue
            number, value = item
            take(value, _on_line(number), False)
            if flush:
                yield from flush
                flush.clear()


def named(value: Any) -> str | None:
    """``value`` when it is a non-empty string (a tool's name), else None."""
    return value if isinstance(value, str) and value else None


def dispatch(state: object, table: Mapping[Any, Callable[..., None]], kind: Any,
             *args: Any) -> bool:
    """Call the handler of ``kind`` in ``table`` with ``state`` and ``args``; False when
    ``kind`` has none (the caller counts it as unknown or lets it pass)."""
    handler = table.get(kind) if isinstance(kind, str) else None
    if handler is None:
        return False
    handler(state, *args)
    return True


class ReadState:
    """What a reader collects from one file: input errors, the count of events of an
    unknown type, the first and last timestamps seen. Subclasses take records in
    :meth:`record` and give their traces in :meth:`traces`."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.file = source.file
        self.errors: list[InputError] = []
        self.unknown = 0
        self.first_ts: Any = None
        self.last_ts: Any = None

    # ------------------------------------------------------------------ errors
    def error(self, rule: Rule, line: int, message: str) -> None:
        self.errors.append(rule.input_error(self.file, line, message))

    def invalid(self, line: int, message: str) -> None:
        """A record that is not what the format says (``input/invalid_event``)."""
        self.error(INPUT_INVALID_EVENT, line, message)

    def ignore(self, value: Any, line: int, fmt: str) -> None:
        """A record of a kind this reader does not know, read as ``fmt``: counted as
        ignored (a newer producer's), or, when it is an agent-eval native event, an input
        error (:func:`~agent_eval.readers.base.native_event`): never a call unchecked."""
        error = native_event(value, fmt, self.file, line)
        if error is None:
            self.unknown += 1
        else:
            self.errors.append(error)

    def unmatched(self, line: int, message: str) -> None:
        """A result whose call is nowhere before it (``input/unmatched_result``)."""
        self.error(INPUT_UNMATCHED_RESULT, line, message)

    def array(self, value: Any, line: int, what: str) -> list[Any]:
        """``value`` when it is a JSON array, else none: missing (null) is empty, and
        any other value (``"tool_calls": 5``) an input error at ``line`` (``what``
        names it: "an ATIF step's tool_calls"); the rest of the record is still read."""
        if type(value) is list:
            return value
        if value is not None:
            self.invalid(line, f"{what} must be an array, not {json_type(value)}; it was "
                               "not read")
        return []

    def bad_kind(self, value: Any, line: int, what: str) -> bool:
        """Whether a record's type is neither a string nor missing (null): then it is an
        input error at ``line`` (``what``: "a Gemini CLI message's type") and the record
        is not read. A type that is a string the reader does not know is not an error:
        the record is counted as ignored (forward compatibility)."""
        if value is None or type(value) is str:
            return False
        self.invalid(line, f"{what} must be a string, not {json_type(value)}; the record "
                           "was not read")
        return True

    # ------------------------------------------------------------------- times
    def stamp(self, ts: Any) -> None:
        """Remember a recorded timestamp (the first one and the last one count)."""
        if ts is not None:
            if self.first_ts is None:
                self.first_ts = ts
            self.last_ts = ts

    def duration(self) -> float | None:
        """Milliseconds from the first timestamp to the last (None when unknown)."""
        return span_ms(self.first_ts, self.last_ts)

    # -------------------------------------------------------------- messages
    @staticmethod
    def said(trace: Trace, text: str | None, *, user: bool, agent: bool) -> bool:
        """A turn's text: the first user text is the trace's input, an agent's latest
        non-empty text its output. True for an agent's turn (it may hold calls)."""
        if user:
            if trace.input is None and text is not None:
                trace.input = text
            return False
        if agent and text:
            trace.output = text
        return agent

    # ------------------------------------------------------------- tool calls
    def tool_call(self, trace: Trace, name: str, raw: Any, cid: Any, line: int) -> ToolCall:
        """A tool call at ``line`` with its arguments decoded (``raw`` may be JSON text),
        appended to ``trace``; an id that is not a string is no id."""
        args, why = decode_arguments(raw)
        call = ToolCall(name=name, arguments=args, location=Location(self.file, line),
                        id=cid if isinstance(cid, str) else None, arguments_error=why)
        trace.tool_calls.append(call)
        return call

    # ----------------------------------------------------- what a reader fills in
    def record(self, value: Any, line: int) -> None:
        raise NotImplementedError

    def traces(self) -> Iterable[Trace]:
        raise NotImplementedError


class OneTrace(ReadState):
    """A file that is one trace, started at its first record of the format; its
    duration runs from the first timestamp to the last."""

    fmt: ClassVar[str]

    def __init__(self, source: SourceFile) -> None:
        super().__init__(source)
        self.trace: Trace | None = None

    def current(self, line: int) -> Trace:
        """The trace, extended to ``line`` (started there when it is the first)."""
        if self.trace is None:
            self.trace = new_trace(self.source.trace_id, self.source, line, self.fmt)
        touch(self.trace, line)
        return self.trace

    def traces(self) -> Iterable[Trace]:
        if self.trace is None:
            return []
        self.trace.duration_ms = self.duration()
        return [self.trace]


class DocumentState(ReadState):
    """A whole-file JSON document that is one trace: ``begin`` gets the document, then
    every item of its list comes to ``item`` (with its index, to look up the lines of
    paths below it)."""

    fmt: ClassVar[str]

    def begin(self, doc: JsonDoc, root: dict[str, Any]) -> None:
        self.doc = doc
        self.trace = new_trace(self.source.trace_id, self.source, doc.line(), self.fmt)

    def item(self, raw: dict[str, Any], line: int, index: int) -> None:
        raise NotImplementedError

    def traces(self) -> Iterable[Trace]:
        return [self.trace]


class FormatReader:
    """The parts every reader shares: the sniff and the end of reading a file."""

    name: str
    marks: ClassVar[sniffs.Marks]  # the sniff (readers/sniffs.py), unless the reader writes its own
    empty: ClassVar[str] = ""  # the message for a file without a record of the format
    quiet_when_bad: ClassVar[bool] = False  # no "empty" error after unreadable records

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return self.marks(head, source)

    def finish(self, state: ReadState, bad: bool = False) -> Iterator[ReadItem]:
        """What ends every file: the state's errors, its traces, then an error for a file
        that held nothing (unless errors explain why) and the ignored-event count."""
        yield from state.errors
        before = len(state.errors)
        traces = list(state.traces())
        yield from state.errors[before:]  # found while the traces were put together
        yield from traces
        if self.empty and not traces and not state.errors and not (bad and self.quiet_when_bad):
            yield INPUT_INVALID_EVENT.input_error(state.file, 1, self.empty)
        elif traces and state.unknown and not state.errors and not bad and all(
                not (t.tool_calls or t.llm_calls or t.input is not None
                     or t.output is not None) for t in traces):
            # every record of a type the format does not know: another format's file
            yield INPUT_INVALID_EVENT.input_error(
                state.file, 1, f"no {self.name} data in this file: its {state.unknown} "
                f"record(s) are of types {self.name} does not know; is it another format "
                "(format: auto picks the reader by content)?")
        if state.unknown:
            yield IgnoredEvents(state.file, state.unknown)


class EventReader(FormatReader):
    """A reader of records one at a time: JSON lines, or a JSON array (or an object
    holding one under ``key``) of them."""

    key: ClassVar[str] = ""
    state: ClassVar[type[ReadState]]

    def records(self, source: SourceFile) -> Iterator[tuple[int, Any] | InputError]:
        return records(source, self.key)

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        state = self.state(source)
        bad = False
        for item in self.records(source):
            if isinstance(item, InputError):
                bad = True
                yield item
            else:
                state.record(item[1], item[0])
        yield from self.finish(state, bad)


class DocumentReader(FormatReader):
    """A reader of one JSON document whose items are a list under ``key``; each item
    must be a JSON object (``item_what`` names it in the error)."""

    key: ClassVar[str]
    need: ClassVar[str]  # the error when the list is missing
    item_what: ClassVar[str]  # "an ATIF step": what an item is called in errors
    state: ClassVar[type[DocumentState]]

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        doc = read_document(source)
        if isinstance(doc, InputError):
            yield doc
            return
        root = as_dict(doc.value)
        items = root.get(self.key)
        if not isinstance(items, list):
            yield INPUT_INVALID_EVENT.input_error(source.file, 1, self.need)
            return
        state = self.state(source)
        state.begin(doc, root)
        for i, raw in enumerate(items):
            line = doc.line(self.key, i)
            if not isinstance(raw, dict):
                state.invalid(line, f"{self.item_what} must be a JSON object")
                continue
            touch(state.trace, line)
            state.item(raw, line, i)
        yield from self.finish(state)
