"""Jaeger exports (readers/jaeger.py), the spans the OTLP reader takes from them. Expected
values are written by hand from the export below."""

from __future__ import annotations

from typing import Any

from agent_eval.readers.jaeger import spans
from agent_eval.readers.sniffs import jaeger as looks_like

DATA: list[Any] = [
    {"traceID": "t1", "processes": {"p1": {"serviceName": "shop"}},
     "spans": [
         {"spanID": "s1", "operationName": "execute_tool refund", "processID": "p1",
          "startTime": 1000, "duration": 250,
          "references": [{"refType": "FOLLOWS_FROM", "spanID": "f0"},
                         {"refType": "CHILD_OF", "spanID": "s0"},
                         {"refType": "CHILD_OF", "spanID": "later"}],
          "tags": [{"key": "gen_ai.usage.input_tokens", "type": "int64", "value": "-12"},
                   {"key": "note", "type": "string", "value": "42"},
                   {"key": "otel.status_code", "value": "ERROR"},
                   {"bad": "no key"}],
          "logs": [{"fields": [{"key": "message", "value": "refund refused"}]}]},
         {"spanID": 7, "traceID": "t2", "operationName": "chat", "startTime": "2000",
          "references": [{"spanID": "s1"}], "tags": [{"key": "error", "value": True},
                                                       {"key": "error.type", "value": "E"}]},
         "not a span",
     ]},
    "not a trace",
    {"traceID": "t3", "spans": {"not": "a list"}},
]


def test_spans_of_a_jaeger_export() -> None:
    lines: dict[tuple[str | int, ...], int] = {("data", 0, "spans", 0): 4,
                                              ("data", 0, "spans", 1): 20}
    said: list[tuple[int, str]] = []
    first, second = spans(DATA, 1, lines, ("data",), lambda ln, m: said.append((ln, m)))
    assert (first.trace_id, first.sid, first.parent, first.name) == (
        "t1", "s1", "s0", "execute_tool refund")  # the first CHILD_OF reference
    assert (first.start, first.end, first.line) == (1_000_000, 1_250_000, 4)  # µs -> ns
    assert first.attrs == {"gen_ai.usage.input_tokens": -12, "note": "42",
                           "otel.status_code": "ERROR"}  # only int64 strings are numbers
    assert (first.error, first.resource) == ("refund refused", {"service.name": "shop"})
    # the span's own traceID wins; an integer span id becomes text; a reference without
    # refType is CHILD_OF; no duration: no end; error = true without a description or a
    # log message: error.type
    assert (second.trace_id, second.sid, second.parent) == ("t2", "7", "s1")
    assert (second.start, second.end, second.line) == (2_000_000, None, 20)
    assert (second.error, second.resource) == ("E", {})
    # the elements that are not of their JSON type hold spans that cannot be read: each
    # said (they were passed over without a word), at the nearest line known (here 1)
    assert said == [
        (1, 'a "spans" item must be an object, not string; the span cannot be read'),
        (1, 'a "data" item must be an object, not string; the spans in it cannot be read'),
        (1, '"spans" must be an array, not object; the spans in it cannot be read')]


def test_without_line_numbers_every_span_is_on_the_given_line() -> None:
    said: list[tuple[int, str]] = []
    assert [s.line for s in spans(DATA, 3, None, (), lambda ln, m: said.append((ln, m)))] == [
        3, 3]
    assert [ln for ln, _ in said] == [3, 3, 3]


def test_a_tag_given_twice_is_said() -> None:
    data = [{"traceID": "t", "spans": [{"spanID": "s", "operationName": "execute_tool",
                                        "startTime": 1, "duration": 1, "tags": [
        {"key": "gen_ai.tool.name", "value": "drop_database"},
        {"key": "gen_ai.tool.name", "value": "read_file"},
        {"key": "gen_ai.operation.name", "value": "execute_tool"},
        {"key": "gen_ai.operation.name", "value": "execute_tool"}]}]}]  # the same again: no
    [span] = spans(data, 1, None, (), lambda ln, m: None)
    assert span.attrs["gen_ai.tool.name"] == "read_file"  # the last is read ...
    assert span.problems == [  # ... and the other said: drop_database was never checked
        "the span's tag 'gen_ai.tool.name' is given 2 times with other values: only the "
        "last, 'read_file', is read, and what the others say is not checked; give each "
        "key once"]


def test_looks_like() -> None:
    assert looks_like(b'{"data": [{"traceID": "a", "spans": [{"operationName": "x"}]}]}')
    assert not looks_like(b'{"data": [{"traceID": "a", "spans": []}]}')
