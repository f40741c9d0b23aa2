"""The reader skeleton (readers/skeleton.py): a toy format filled into it, and the parts it
fixes for every reader (the order of what is yielded, the "empty" error, ignored counts,
handler tables). Expected values are written by hand from the toy files below."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import IgnoredEvents, ReadItem, SourceFile
from agent_eval.readers._foreign import JsonDoc
from agent_eval.readers.skeleton import (
    DocumentReader,
    DocumentState,
    EventReader,
    OneTrace,
    ReadState,
    dispatch,
    named,
)
from agent_eval.readers.sniffs import Marks


# ------------------------------------------------------------------- a toy format
class _Toy(OneTrace):
    fmt = "toy"

    def record(self, value: Any, line: int) -> None:
        if not isinstance(value, dict):
            self.invalid(line, "a toy event must be a JSON object")
            return
        self.stamp(value.get("ts"))
        if not dispatch(self, _TOY, value.get("kind"), self.current(line), value, line):
            self.unknown += 1

    def ask(self, trace: Trace, ev: dict[str, Any], line: int) -> None:
        trace.input = ev.get("text")

    def call(self, trace: Trace, ev: dict[str, Any], line: int) -> None:
        name = named(ev.get("tool"))
        if name is None:
            self.invalid(line, "a toy call without a tool")
            return
        self.tool_call(trace, name, ev.get("args"), ev.get("id"), line)

    def answer(self, trace: Trace, ev: dict[str, Any], line: int) -> None:
        if not trace.tool_calls:
            self.unmatched(line, "a toy answer before any call")


_TOY = {"ask": _Toy.ask, "call": _Toy.call, "answer": _Toy.answer}


class ToyReader(EventReader):
    name = "toy"
    marks = Marks((re.compile(r'"kind"\s*:'), re.compile(r'"toy"\s*:\s*1')))
    key = "events"
    state = _Toy
    empty = "no toy event in this file"


class QuietToyReader(ToyReader):
    quiet_when_bad = True


class _Book(DocumentState):
    fmt = "book"

    def item(self, raw: dict[str, Any], line: int, index: int) -> None:
        if raw.get("page") == "last":
            self.trace.output = raw.get("text")
        elif "page" not in raw:
            self.unknown += 1

    def traces(self) -> Iterable[Trace]:
        self.trace.metadata["pages"] = self.doc.line("pages")
        return [self.trace]


class BookReader(DocumentReader):
    name = "book"
    key = "pages"
    need = "a book needs a 'pages' array"
    item_what = "a page"
    state = _Book


def _write(tmp_path: Path, name: str, text: str) -> SourceFile:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return SourceFile(str(path), name, name)


def _shape(items: list[ReadItem]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for item in items:
        if isinstance(item, InputError):
            out.append(("error", item.rule, item.line, item.message))
        elif isinstance(item, Trace):
            out.append(("trace", item.id, item.location.line, item.end_location.line))
        elif isinstance(item, IgnoredEvents):
            out.append(("ignored", item.count))
    return out


# ------------------------------------------------------------------------ tests
def test_the_order_of_what_an_event_reader_yields(tmp_path: Path) -> None:
    src = _write(tmp_path, "run.jsonl", "\n".join([
        '{"kind": "answer"}',
        "not json",
        '{"kind": "ask", "text": "refund A-1", "ts": "2026-01-01T00:00:00+00:00"}',
        '["a list"]',
        '{"kind": "call", "tool": "refund", "args": "{\\"order\\": 1}", "id": "c1"}',
        '{"kind": "call"}',
        '{"kind": "later", "ts": "2026-01-01T00:00:02.5+00:00"}',
    ]) + "\n")
    items = list(ToyReader().read(src))
    # the bad line as it comes, then the state's errors in file order, the trace, the
    # ignored count
    assert _shape(items) == [
        ("error", "input/parse_error", 2, items[0].message),  # type: ignore[union-attr]
        ("error", "input/unmatched_result", 1, "a toy answer before any call"),
        ("error", "input/invalid_event", 4, "a toy event must be a JSON object"),
        ("error", "input/invalid_event", 6, "a toy call without a tool"),
        ("trace", "run.jsonl", 1, 7),
        ("ignored", 1),
    ]
    assert "line is not valid JSON" in items[0].message  # type: ignore[union-attr]
    [trace] = [i for i in items if isinstance(i, Trace)]
    assert (trace.format, trace.input, trace.duration_ms) == ("toy", "refund A-1", 2500.0)
    [call] = trace.tool_calls
    assert (call.name, call.arguments, call.id, call.location.line) == (
        "refund", {"order": 1}, "c1", 5)


def test_a_json_document_holding_the_records_under_the_key(tmp_path: Path) -> None:
    doc = {"toy": 1, "events": [{"kind": "ask", "text": "hi"},
                                {"kind": "call", "tool": "t", "id": 7}]}
    src = _write(tmp_path, "run.json", json.dumps(doc, indent=1))
    items = list(ToyReader().read(src))
    [trace] = [i for i in items if isinstance(i, Trace)]
    [call] = trace.tool_calls
    # indent=1: the events start at lines 4 and 8; the id 7 is not a string: no id
    assert (trace.input, call.id, call.location.line) == ("hi", None, 8)
    assert _shape(items) == [("trace", "run.json", 4, 8)]


def test_a_file_without_a_record_of_the_format(tmp_path: Path) -> None:
    items = list(ToyReader().read(_write(tmp_path, "empty.jsonl", "\n\n")))
    assert _shape(items) == [("error", "input/invalid_event", 1, "no toy event in this file")]
    # an error the state found explains the empty result: no second error
    items = list(ToyReader().read(_write(tmp_path, "bad.jsonl", "[1]\n[2]\n")))
    assert [s[:3] for s in _shape(items)] == [("error", "input/invalid_event", 1),
                                              ("error", "input/invalid_event", 2)]


def test_unreadable_records_and_the_empty_error(tmp_path: Path) -> None:
    src = _write(tmp_path, "junk.jsonl", "{oops\n{still\n")
    # by default the "empty" error follows the parse errors; quiet_when_bad drops it
    assert [s[:3] for s in _shape(list(ToyReader().read(src)))] == [
        ("error", "input/parse_error", 1), ("error", "input/parse_error", 2),
        ("error", "input/invalid_event", 1)]
    assert [s[:3] for s in _shape(list(QuietToyReader().read(src)))] == [
        ("error", "input/parse_error", 1), ("error", "input/parse_error", 2)]


def test_sniff_needs_every_mark_and_never_takes_a_native_file(tmp_path: Path) -> None:
    src = SourceFile(str(tmp_path / "x.jsonl"), "x.jsonl", "x.jsonl")
    reader = ToyReader()
    assert reader.sniff(b'{"toy": 1, "kind": "ask"}\n', src)
    assert not reader.sniff(b'{"kind": "ask"}\n', src)  # one mark is missing
    assert reader.sniff(b'\xef\xbb\xbf{"toy": 1, "kind": "ask"}', src)  # a BOM is fine
    native = b'{"type": "trace_start", "trace_id": "t", "toy": 1, "kind": "ask"}\n'
    assert not reader.sniff(native, src)


def test_a_document_reader(tmp_path: Path) -> None:
    text = ('{"title": "x",\n "pages": [\n  {"page": 1},\n  "torn",\n  {"note": 1},\n'
            '  {"page": "last", "text": "The end."}\n ]\n}\n')
    items = list(BookReader().read(_write(tmp_path, "book.json", text)))
    assert _shape(items) == [
        ("error", "input/invalid_event", 2, "a page must be a JSON object"),
        ("trace", "book.json", 1, 6),
        ("ignored", 1),
    ]
    [trace] = [i for i in items if isinstance(i, Trace)]
    assert (trace.format, trace.output, trace.metadata) == ("book", "The end.", {"pages": 2})


def test_a_document_without_its_list_or_not_json(tmp_path: Path) -> None:
    items = list(BookReader().read(_write(tmp_path, "b.json", '{"pages": {}}')))
    assert _shape(items) == [("error", "input/invalid_event", 1, "a book needs a 'pages' array")]
    items = list(BookReader().read(_write(tmp_path, "c.json", '{"pages": [\n')))
    assert [s[:3] for s in _shape(items)] == [("error", "input/parse_error", 2)]


def test_dispatch_calls_the_handler_of_a_string_kind_only() -> None:
    seen: list[tuple[Any, ...]] = []

    class Box:
        def on(self, *args: Any) -> None:
            seen.append(args)

    table = {"a": Box.on}
    box = Box()
    assert dispatch(box, table, "a", 1, 2) is True
    assert dispatch(box, table, "b", 1) is False
    assert dispatch(box, table, ["a"], 1) is False  # an unhashable type is no crash
    assert dispatch(box, table, None) is False
    assert seen == [(1, 2)]


def test_timestamps_and_names() -> None:
    state = ReadState(SourceFile("/x", "x", "x"))
    assert state.duration() is None
    state.stamp(None)
    state.stamp(1000)  # epoch seconds
    state.stamp(None)
    state.stamp(1002)
    assert (state.first_ts, state.last_ts, state.duration()) == (1000, 1002, 2000.0)
    assert (named("t"), named(""), named(3), named(None)) == ("t", None, None, None)


def test_a_state_builds_its_errors_from_declared_rules() -> None:
    state = ReadState(SourceFile("/x", "x.jsonl", "x"))
    state.invalid(3, "bad")
    state.unmatched(4, "lost")
    assert [(e.rule, e.file, e.line, e.message) for e in state.errors] == [
        ("input/invalid_event", "x.jsonl", 3, "bad"),
        ("input/unmatched_result", "x.jsonl", 4, "lost")]


def test_a_json_doc_line_lookup_is_what_items_use(tmp_path: Path) -> None:
    doc = JsonDoc({"pages": [{}]}, '{"pages": [\n {}\n]}')
    assert (doc.line(), doc.line("pages"), doc.line("pages", 0), doc.line("pages", 5)) == (
        1, 1, 2, 1)
