"""The native reader (docs/formats.md "The native format (JSONL)"), through read_sources /
load_traces."""

from __future__ import annotations

import dataclasses
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import FIXTURES, SAMPLES

from agent_eval import model
from agent_eval.api import evaluate, load_suite, load_traces
from agent_eval.errors import InputError
from agent_eval.model import CallLog, ToolCall, Trace
from agent_eval.readers import IgnoredEvents, ReadItem, SourceFile, native, read_file, read_sources
from agent_eval.readers.native import READER, NativeRange, trace_start_line

FOREIGN = FIXTURES / "claude_code" / "bad-lines.jsonl"
SAMPLE = SAMPLES / "claude_code_jsonl" / "letta-trajectory__cleanup.input.jsonl"


# ------------------------------------------------------------------- helpers
def jsonl(*events: dict[str, Any] | str) -> str:
    """One line per item: a dict is dumped, a string is written as is."""
    return "".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in events)


def read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str | bytes,
         name: str = "t.jsonl", fmt: str = "native") -> list[ReadItem]:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return list(load_traces([name], format=fmt))


def traces(items: list[ReadItem]) -> dict[str, Trace]:
    out = {i.id: i for i in items if isinstance(i, Trace)}
    assert len(out) == sum(isinstance(i, Trace) for i in items), "duplicate trace ids"
    return out


def errors(items: list[ReadItem]) -> list[tuple[str, str, int]]:
    return [(e.rule, e.file, e.line) for e in items if isinstance(e, InputError)]


def ignored(items: list[ReadItem]) -> list[IgnoredEvents]:
    return [i for i in items if isinstance(i, IgnoredEvents)]


def calls(trace: Trace) -> list[tuple[str, int]]:
    return [(c.name, c.location.line) for c in trace.tool_calls]


# --------------------------------------------------------------- the seed line
SEED = '{"type":"tool_call","tool":"apply_discount","arguments":{"percent":50}}\n'


@pytest.mark.parametrize("fmt", ["native", "auto"])
def test_seed_line_is_a_complete_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       fmt: str) -> None:
    items = read(tmp_path, monkeypatch, SEED, "traces/seed.jsonl", fmt)
    assert errors(items) == []
    assert ignored(items) == []
    (t,) = traces(items).values()
    assert t.id == "traces/seed.jsonl"
    assert t.source == "traces/seed.jsonl"
    assert (t.location.line, t.end_location.line) == (1, 1)
    (c,) = t.tool_calls
    assert (c.name, c.arguments, c.location.file, c.location.line) == (
        "apply_discount", {"percent": 50}, "traces/seed.jsonl", 1)
    assert c.ok is True and c.error is None and c.arguments_error is None
    assert c.id is None and c.result is None and c.latency_ms is None
    assert t.llm_calls == [] and t.scenario is None and t.output is None
    # unknown, not zero
    assert (t.tokens, t.cost, t.latency_ms, t.duration_ms) == (None, None, None, None)


def test_trace_id_is_relative_to_the_config(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()  # the repository root: locations are relative to it
    cfg = tmp_path / "evals"
    (cfg / "traces").mkdir(parents=True)
    (cfg / "traces" / "a.jsonl").write_text(SEED, encoding="utf-8")
    (cfg / "agent-eval.yaml").write_text(textwrap.dedent("""
        version: "1"
        suite: s
        traces: traces/*.jsonl
        tests:
          - id: b
            metric: tool_blocklist
            blocklist: [apply_*]
    """).lstrip(), encoding="utf-8")
    monkeypatch.chdir(cfg)
    suite = load_suite(cfg / "agent-eval.yaml")
    (t,) = traces(list(load_traces(["traces/a.jsonl"], suite))).values()
    assert t.id == "traces/a.jsonl"  # relative to the config's folder
    assert t.source == "evals/traces/a.jsonl"  # relative to the repository
    assert t.tool_calls[0].location.file == "evals/traces/a.jsonl"


def test_read_sources_directly(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(SEED, encoding="utf-8")
    items = list(read_sources([SourceFile(str(path), "repo/x.jsonl", "x.jsonl")], "native"))
    (t,) = traces(items).values()
    assert (t.id, t.source, t.tool_calls[0].location.file) == (
        "x.jsonl", "repo/x.jsonl", "repo/x.jsonl")


# ------------------------------------------------------------------ grouping
def test_trace_id_grouping_with_interleaved_lines(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "trace_start", "trace_id": "A", "scenario": "S1", "input": "hi"},  # 1
        {"type": "trace_start", "trace_id": "B"},                                  # 2
        {"type": "tool_call", "trace_id": "A", "tool": "a1"},                      # 3
        {"type": "tool_call", "trace_id": "B", "tool": "b1"},                      # 4
        {"type": "tool_call", "trace_id": "A", "tool": "a2"},                      # 5
        {"type": "trace_end", "trace_id": "B"},                                    # 6
        {"type": "tool_call", "trace_id": "A", "tool": "a3"},                      # 7
        {"type": "tool_call", "trace_id": 7, "tool": "n1"},                        # 8
    ))
    assert errors(items) == []
    got = traces(items)
    assert sorted(got, key=lambda e: e[0]) == ["7", "A", "B"]
    a, b = got["A"], got["B"]
    assert calls(a) == [("a1", 3), ("a2", 5), ("a3", 7)]
    assert (a.location.line, a.end_location.line, a.scenario, a.input) == (1, 7, "S1", "hi")
    assert calls(b) == [("b1", 4)]
    assert (b.location.line, b.end_location.line, b.scenario) == (2, 6, None)
    assert calls(got["7"]) == [("n1", 8)]
    # B is complete at its trace_end line, so it is handed on before A
    order = [i.id for i in items if isinstance(i, Trace)]
    assert order.index("B") < order.index("A")


def test_lines_without_trace_id_go_to_latest_trace_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "tool_call", "tool": "pre"},                  # 1 the file's own trace
        {"type": "trace_start", "trace_id": "A"},              # 2
        {"type": "tool_call", "tool": "x"},                    # 3 -> A
        {"type": "trace_start", "trace_id": "B"},              # 4
        {"type": "tool_call", "tool": "y"},                    # 5 -> B
        {"type": "tool_call", "trace_id": "A", "tool": "z"},   # 6 -> A
        {"type": "output", "output": "done"},                  # 7 -> B
    ))
    assert errors(items) == []
    got = traces(items)
    assert sorted(got, key=lambda e: e[0]) == ["A", "B", "t.jsonl"]
    assert calls(got["t.jsonl"]) == [("pre", 1)]
    assert calls(got["A"]) == [("x", 3), ("z", 6)]
    assert calls(got["B"]) == [("y", 5)]
    assert got["B"].output == "done"
    assert got["A"].output is None


def test_trace_start_without_trace_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "trace_start", "scenario": "S"},   # 1
        {"type": "tool_call", "tool": "a"},         # 2
        {"type": "trace_end"},                      # 3
        {"type": "trace_start"},                    # 4
        {"type": "tool_call", "tool": "b"},         # 5
    ))
    assert errors(items) == []
    ts = [i for i in items if isinstance(i, Trace)]
    assert len(ts) == 2
    first, second = ts
    assert first.id != second.id
    assert all(t.id.startswith("t.jsonl") for t in ts)
    assert (calls(first), first.scenario, first.location.line, first.end_location.line) == (
        [("a", 2)], "S", 1, 3)
    assert (calls(second), second.scenario, second.location.line) == ([("b", 5)], None, 4)


def test_trace_start_metadata(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "trace_start", "trace_id": "T", "metadata": {"k": "v", "n": 1}},  # 1
        {"type": "trace_start", "trace_id": "U", "metadata": "oops"},              # 2
    ))
    got = traces(items)
    assert got["T"].metadata == {"k": "v", "n": 1}
    assert got["U"].metadata == {}
    assert errors(items) == [("input/invalid_event", "t.jsonl", 2)]


# ---------------------------------------------------------------- tool results
def test_tool_result_by_id_call_id_and_tool(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "tool_call", "tool": "search", "id": "c1", "arguments": {"q": "x"}},  # 1
        {"type": "tool_call", "tool": "search", "call_id": "c2"},                    # 2
        {"type": "tool_call", "tool": "fetch"},                                      # 3
        {"type": "tool_call", "tool": "fetch"},                                      # 4
        {"type": "tool_result", "id": "c2", "result": "r2", "latency_ms": 12},       # 5
        {"type": "tool_result", "call_id": "c1", "output": {"hits": 3}},             # 6
        {"type": "tool_result", "tool": "fetch", "result": "page"},                  # 7
        {"type": "tool_result", "tool": "fetch", "result": "page0"},                 # 8
        {"type": "tool_call", "tool": "get", "id": 9},                               # 9
        {"type": "tool_result", "id": 9, "result": None},                            # 10
        {"type": "tool_call", "tool": "late"},                                       # 11
        {"type": "tool_result", "id": "zz", "tool": "late", "result": "L"},          # 12
    ))
    assert errors(items) == []
    (t,) = traces(items).values()
    c1, c2, f1, f2, g, late = t.tool_calls
    assert (c1.id, c1.result, c1.result_location and c1.result_location.line) == (
        "c1", {"hits": 3}, 6)
    assert (c2.id, c2.result, c2.latency_ms, c2.result_location
            and c2.result_location.line) == ("c2", "r2", 12, 5)
    # no id: the latest open call of that tool
    assert (f2.result, f2.result_location and f2.result_location.line) == ("page", 7)
    assert (f1.result, f1.result_location and f1.result_location.line) == ("page0", 8)
    assert (g.id, g.has_result, g.result) == ("9", True, None)
    # an id that matches nothing, with a tool: attaches by tool
    assert (late.result, late.result_location and late.result_location.line) == ("L", 12)
    assert all(c.ok and c.error is None for c in t.tool_calls)
    assert all(c.location.line == n for c, n in zip(t.tool_calls, [1, 2, 3, 4, 9, 11],
                                                     strict=True))


def test_unmatched_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "tool_call", "tool": "a", "result": "inline"},   # 1 (already has a result)
        {"type": "tool_result", "id": "nope", "result": 1},       # 2
        {"type": "tool_result", "tool": "a", "result": 2},        # 3
        {"type": "tool_result", "result": 3},                     # 4
        {"type": "tool_call", "tool": "b", "id": "k"},            # 5
        {"type": "tool_result", "tool": "b", "result": 4},        # 6 matches b
        {"type": "tool_result", "tool": "b", "result": 5},        # 7 b is no longer open
    ))
    assert errors(items) == [
        ("input/unmatched_result", "t.jsonl", 2),
        ("input/unmatched_result", "t.jsonl", 3),
        ("input/unmatched_result", "t.jsonl", 4),
        ("input/unmatched_result", "t.jsonl", 7),
    ]
    (t,) = traces(items).values()
    assert [c.result for c in t.tool_calls] == ["inline", 4]
    msg = next(e for e in items if isinstance(e, InputError) and e.line == 2)
    assert str(msg).startswith("t.jsonl:2: ")
    assert "nope" in msg.message


@pytest.mark.parametrize("long", [False, True])
def test_a_second_other_result_by_id_is_said_and_the_first_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, long: bool) -> None:
    """The regression: a tool_result by id replaced the result the call had, without a
    word: a failure followed by a success of the same id passed tool_health (exit 0).
    A result by tool name already matched only an open call (line 7 above)."""
    if long:  # the calls known by index (a CallLog): the same answers
        monkeypatch.setattr(native, "LONG_TRACE", 1)
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "tool_call", "tool": "send", "id": "c1"},                    # 1
        {"type": "tool_result", "id": "c1", "error": "relay timeout"},        # 2
        {"type": "tool_result", "id": "c1", "result": "sent"},                # 3 other
        {"type": "tool_result", "id": "c1", "error": "relay timeout"},        # 4 same again
        {"type": "tool_call", "tool": "get", "id": "c2", "result": "x"},      # 5 inline
        {"type": "tool_result", "id": "c2", "result": "y"},                   # 6 other
        {"type": "tool_call", "tool": "get", "id": "c3", "result": None},     # 7 null: none yet
        {"type": "tool_result", "id": "c3", "error": "not found"},            # 8 fills it in
    ))
    assert errors(items) == [("input/unmatched_result", "t.jsonl", 3),
                             ("input/unmatched_result", "t.jsonl", 6)]
    msg = next(e.message for e in items if isinstance(e, InputError))
    assert msg.startswith("tool_result for id 'c1' is a second, other result of the 'send' "
                          "call at line 1, which has one already (line 2): the first is kept")
    (t,) = traces(items).values()
    assert [(c.ok, c.error, c.result) for c in t.tool_calls] == [
        (False, "relay timeout", None), (True, None, "x"), (False, "not found", None)]


def test_identical_calls_on_one_line_get_one_result_each(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a one-line .json document: two calls equal field by field (same tool, arguments,
    # line); each result goes to a different call, the latest open one first
    doc = json.dumps([{"type": "tool_call", "tool": "f", "arguments": {"a": 1}},
                      {"type": "tool_call", "tool": "f", "arguments": {"a": 1}},
                      {"type": "tool_result", "tool": "f", "result": "second"},
                      {"type": "tool_result", "tool": "f", "result": "first"},
                      {"type": "tool_result", "tool": "f", "result": "extra"}])
    items = read(tmp_path, monkeypatch, doc, name="t.json")
    (t,) = traces(items).values()
    assert [c.result for c in t.tool_calls] == ["first", "second"]
    assert errors(items) == [("input/unmatched_result", "t.json", 1)]


def test_open_calls_are_kept_by_identity(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Matching a result to its call never compares calls field by field: with many calls
    still open (no result yet) that made reading one long trace quadratic (a trace of
    100,000 calls took minutes)."""
    compared = 0

    def counting_eq(self: object, other: object) -> bool:
        nonlocal compared
        compared += 1
        return self is other

    monkeypatch.setattr(ToolCall, "__eq__", counting_eq)
    events: list[dict[str, Any]] = []
    for i in range(300):
        events.append({"type": "tool_call", "tool": "t", "id": f"c{i}"})
        if i % 2:  # every other call gets its result; the rest stay open
            events.append({"type": "tool_result", "id": f"c{i}", "result": i})
    events.append({"type": "tool_result", "tool": "t", "result": "last open"})
    items = read(tmp_path, monkeypatch, jsonl(*events))
    (t,) = traces(items).values()
    assert compared == 0
    assert [c.result for c in t.tool_calls[-3:]] == [297, "last open", 299]


def test_tool_result_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "tool_call", "tool": "a", "id": "1"},                            # 1
        {"type": "tool_call", "tool": "b", "id": "2"},                            # 2
        {"type": "tool_call", "tool": "c", "id": "3"},                            # 3
        {"type": "tool_result", "id": "1", "is_error": True, "result": "denied"},  # 4
        {"type": "tool_result", "id": "2", "error": "timeout"},                   # 5
        {"type": "tool_result", "id": "3", "is_error": False, "result": "fine"},  # 6
    ))
    assert errors(items) == []
    (t,) = traces(items).values()
    a, b, c = t.tool_calls
    assert (a.ok, a.error, a.result) == (False, "denied", "denied")
    assert (b.ok, b.error) == (False, "timeout")
    assert (c.ok, c.error, c.result) == (True, None, "fine")


def test_tool_call_inline_error_and_result(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "tool_call", "tool": "a", "error": "boom"},                      # 1
        {"type": "tool_call", "name": "b", "result": {"x": 1}, "latency_ms": 3.5},  # 2
        {"type": "tool_call", "tool": "c", "error": None},                        # 3
    ))
    assert errors(items) == []
    (t,) = traces(items).values()
    a, b, c = t.tool_calls
    assert (a.name, a.ok, a.error, a.has_result) == ("a", False, "boom", True)
    assert (b.name, b.ok, b.error, b.result, b.latency_ms) == ("b", True, None, {"x": 1}, 3.5)
    assert (c.ok, c.error, c.has_result) == (True, None, False)


def test_tool_call_without_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "tool_call", "arguments": {}},   # 1
        {"type": "tool_call", "tool": 5},         # 2
        {"type": "tool_call", "tool": ""},        # 3
        {"type": "tool_call", "tool": "ok"},      # 4
    ))
    assert errors(items) == [("input/invalid_event", "t.jsonl", n) for n in (1, 2, 3)]
    (t,) = traces(items).values()
    assert calls(t) == [("ok", 4)]


# ------------------------------------------------------------------ arguments
def test_arguments_aliases_and_decoding(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "tool_call", "tool": "t", "args": {"a": 1}},                           # 1
        {"type": "tool_call", "tool": "t", "input": {"b": 2}},                          # 2
        {"type": "tool_call", "tool": "t", "arguments": '{"c": 3}'},                    # 3
        {"type": "tool_call", "tool": "t", "arguments": json.dumps('{"d": 4}')},        # 4
        {"type": "tool_call", "tool": "t", "arguments": [1, 2]},                        # 5
        {"type": "tool_call", "tool": "t", "arguments": "not json"},                    # 6
        {"type": "tool_call", "tool": "t"},                                             # 7
        {"type": "tool_call", "tool": "t", "arguments": "5"},                           # 8
        {"type": "tool_call", "tool": "t", "arguments": {"e": 5}, "args": {"no": 0}},   # 9
        {"type": "tool_call", "tool": "t",
         "arguments": json.dumps(json.dumps(json.dumps({"f": 6})))},                    # 10
    ))
    # bad arguments are the checks' business, not input errors; arguments given twice,
    # differently (9), are: the call keeps 'arguments', and 'args' was never checked
    assert errors(items) == [("input/invalid_event", "t.jsonl", 9)]
    (t,) = traces(items).values()
    got = [(c.arguments, c.arguments_error is None) for c in t.tool_calls]
    assert got == [
        ({"a": 1}, True),
        ({"b": 2}, True),
        ({"c": 3}, True),
        ({"d": 4}, True),
        ([1, 2], False),
        ("not json", False),
        ({}, True),
        ("5", False),
        ({"e": 5}, True),
        (json.dumps(json.dumps(json.dumps({"f": 6}))), False),  # encoded three times
    ]
    assert "array" in (t.tool_calls[4].arguments_error or "")
    assert "not valid JSON" in (t.tool_calls[5].arguments_error or "")


def test_a_tool_call_that_says_two_things_is_an_input_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two names, or arguments under two aliases with other values: the rules read one of
    them (``tool``, ``arguments``, then ``args``), so a blocklist of ``delete_file`` or a
    policy on ``path`` passed what the other held without a word. The same thing twice
    (a string that decodes to the same object) is no error."""
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "tool_call", "tool": "read_file", "name": "delete_file"},            # 1
        {"type": "tool_call", "tool": "t", "arguments": {"p": "/app"},
         "input": {"p": "/etc/passwd"}},                                              # 2
        {"type": "tool_call", "tool": "t", "args": {"p": "/app"},
         "input": {"p": "/etc/passwd"}},                                              # 3
        {"type": "tool_call", "tool": "t", "arguments": {"n": 1}, "args": {"n": True}},  # 4
        {"type": "tool_call", "tool": "t", "name": "t", "arguments": {"p": 1, "q": 2},
         "args": '{"q": 2, "p": 1}', "input": {"q": 2, "p": 1}},                       # 5
    ))
    assert errors(items) == [("input/invalid_event", "t.jsonl", n) for n in (1, 2, 3, 4)]
    messages = [e.message for e in items if isinstance(e, InputError)]
    assert "'tool': 'read_file' and 'name': 'delete_file'" in messages[0]
    assert messages[1] == ("tool_call gives its arguments twice, differently, as "
                           "'arguments' and 'input'; the call's arguments are 'arguments', "
                           "and what 'input' holds was not checked: write one of them")
    assert "as 'args' and 'input'" in messages[2]
    (t,) = traces(items).values()
    assert [(c.name, c.arguments) for c in t.tool_calls] == [
        ("read_file", {}), ("t", {"p": "/app"}), ("t", {"p": "/app"}), ("t", {"n": 1}),
        ("t", {"p": 1, "q": 2})]


# ----------------------------------------------------------- llm calls, totals
def test_llm_call_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "llm_call", "trace_id": "K", "model": "m1", "input_tokens": 10,
         "output_tokens": 5, "cost_usd": 0.01, "latency_ms": 100},                     # 1
        {"type": "llm_call", "trace_id": "U", "model": "m2", "input_tokens": 7},        # 2
        {"type": "llm_call", "trace_id": "U", "total_tokens": 40, "input_tokens": 1,
         "output_tokens": 2},                                                           # 3
        {"type": "llm_call", "trace_id": "U"},                                          # 4
    ))
    assert errors(items) == []
    got = traces(items)
    (k,) = got["K"].llm_calls
    assert (k.model, k.input_tokens, k.output_tokens, k.total_tokens, k.cost_usd,
            k.latency_ms, k.location.line) == ("m1", 10, 5, 15, 0.01, 100, 1)
    assert (got["K"].tokens, got["K"].cost, got["K"].latency_ms) == (15, 0.01, 100.0)
    u2, u3, u4 = got["U"].llm_calls
    assert (u2.model, u2.input_tokens, u2.output_tokens, u2.total_tokens) == ("m2", 7, None,
                                                                             None)
    assert (u3.total_tokens, u3.location.line) == (40, 3)  # given, not 1 + 2
    assert (u4.model, u4.input_tokens, u4.output_tokens, u4.total_tokens, u4.cost_usd,
            u4.latency_ms) == (None, None, None, None, None, None)
    assert (got["U"].tokens, got["U"].cost) == (None, None)  # unknown, not 40


def test_trace_end_fields(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "trace_start", "trace_id": "T", "input": {"q": "refund"}},          # 1
        {"type": "llm_call", "trace_id": "T", "total_tokens": 5, "cost_usd": 0.5},   # 2
        {"type": "trace_end", "trace_id": "T", "duration_ms": 1500, "cost_usd": 0.25,
         "total_tokens": 99, "output": "final"},                                     # 3
    ))
    assert errors(items) == []
    (t,) = traces(items).values()
    assert (t.duration_ms, t.cost_usd, t.total_tokens, t.output, t.input) == (
        1500, 0.25, 99, "final", {"q": "refund"})
    # the trace's own figures win over the sums of its calls, unless the calls recorded
    # more: a total cannot be below its parts (cost 0.25 < the call's 0.5)
    assert (t.tokens, t.cost, t.latency_ms) == (99, 0.5, 1500)
    assert (t.location.line, t.end_location.line) == (1, 3)


@pytest.mark.parametrize("key", ["output", "content", "text", "answer"])
def test_output_aliases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "tool_call", "tool": "a"},
        {"type": "output", key: {"answer": 42} if key == "output" else "the answer"},
    ))
    (t,) = traces(items).values()
    assert t.output == ({"answer": 42} if key == "output" else "the answer")
    assert t.end_location.line == 2


def test_a_final_output_given_twice_differently_is_an_input_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace has one final output: a second of another value (an output event, or
    trace_end's output) is input/invalid_event at its line, and so is an output event
    whose aliases hold other values. The output checks read one of them, so a first
    answer leaking a secret passed a not_contains check with exit 0."""
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "trace_start", "trace_id": "A"},                                    # 1
        {"type": "output", "trace_id": "A", "output": "the password is hunter2"},    # 2
        {"type": "output", "trace_id": "A", "output": "Done."},                      # 3
        {"type": "trace_end", "trace_id": "A", "output": "Done."},                   # 4 same
        {"type": "trace_start", "trace_id": "B"},                                    # 5
        {"type": "output", "trace_id": "B", "text": {"n": 1}},                       # 6
        {"type": "trace_end", "trace_id": "B", "output": {"n": True}},               # 7
        {"type": "trace_start", "trace_id": "C"},                                    # 8
        {"type": "output", "trace_id": "C", "output": "Done.",
         "text": "the password is hunter2"},                                         # 9
        {"type": "output", "trace_id": "C", "content": "Done.", "answer": "Done."},  # 10
        {"type": "trace_end", "trace_id": "C"},                                      # 11
        # a first output of null said nothing: the answer after it is no second one
        {"type": "trace_start", "trace_id": "D"},                                    # 12
        {"type": "output", "trace_id": "D", "output": None},                         # 13
        {"type": "trace_end", "trace_id": "D", "output": "Done."},                   # 14
        # but a null after an answer would hide it
        {"type": "trace_start", "trace_id": "E"},                                    # 15
        {"type": "output", "trace_id": "E", "output": "the password is hunter2"},    # 16
        {"type": "trace_end", "trace_id": "E", "output": None},                      # 17
    ))
    assert errors(items) == [("input/invalid_event", "t.jsonl", 3),
                             ("input/invalid_event", "t.jsonl", 7),
                             ("input/invalid_event", "t.jsonl", 9),
                             ("input/invalid_event", "t.jsonl", 17)]
    by_line = {e.line: e.message for e in items if isinstance(e, InputError)}
    assert by_line[3].startswith("a second final output for trace 'A', other than the one "
                                 "at line 2;")
    assert "other than the one at line 6" in by_line[7]  # 1 and true differ
    assert by_line[9].startswith("output gives the final answer twice, differently, as "
                                 "'output' and 'text';")
    got = traces(items)
    # the last is read, as before
    assert (got["A"].output, got["B"].output, got["C"].output) == ("Done.", {"n": True},
                                                                    "Done.")
    assert (got["D"].output, got["E"].output) == ("Done.", None)


# ------------------------------------------------------------ unknown / invalid
def test_unknown_event_types_are_counted(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "heartbeat"},                 # 1
        {"type": "tool_call", "tool": "a"},    # 2
        {"type": "span", "tool": "b"},         # 3
    ))
    assert errors(items) == []
    assert ignored(items) == [IgnoredEvents("t.jsonl", 2)]
    (t,) = traces(items).values()
    assert calls(t) == [("a", 2)]


def test_an_event_without_a_type_is_an_input_error(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # no type is no newer producer's type: ignored, the blocked call it held passed the
    # run with exit 0
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "trace_start", "trace_id": "T"},  # 1
        {"tool": "rm_rf", "arguments": {}},         # 2
        {"type": None, "tool": "rm_rf"},            # 3
        {"type": "heartbeat"},                      # 4 a type of its own: ignored
        {"type": "trace_end"},                      # 5
    ))
    assert errors(items) == [("input/invalid_event", "t.jsonl", 2),
                             ("input/invalid_event", "t.jsonl", 3)]
    said = [i.message for i in items if isinstance(i, InputError)]
    assert "has no 'type'" in said[0] and "must be a string, not null" not in said[1]
    assert ignored(items) == [IgnoredEvents("t.jsonl", 1)]
    (t,) = traces(items).values()
    assert calls(t) == []


def test_a_native_type_spelt_otherwise_is_an_input_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a native type in another case or with other separators is a native event written
    # wrong, not a newer recorder's type: ignored, the call it holds went unchecked (a
    # blocked tool called as "Tool_Call" passed the run, exit 0)
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "trace_start", "trace_id": "T"},  # 1
        {"type": "Tool_Call", "tool": "rm_rf"},    # 2
        {"type": "tool-call", "tool": "rm_rf"},    # 3
        {"type": "toolCall", "tool": "rm_rf"},     # 4
        {"type": "TRACE_END"},                     # 5
        {"type": "heartbeat"},                     # 6 a type of its own: ignored
        {"type": "toolcall"},                      # 7 not a respelling: ignored
        {"type": "tool_call", "tool": "a"},        # 8
    ))
    assert errors(items) == [("input/invalid_event", "t.jsonl", n) for n in (2, 3, 4, 5)]
    [first] = [e for e in items if isinstance(e, InputError)][:1]
    assert "'Tool_Call'" in first.message and "'tool_call'" in first.message
    assert ignored(items) == [IgnoredEvents("t.jsonl", 2)]
    assert calls(traces(items)["T"]) == [("a", 8)]


def test_type_that_is_not_a_string(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": ["tool_call"], "tool": "x"},  # 1
        {"type": {"a": 1}},                    # 2
        {"type": 3},                           # 3
        {"type": "tool_call", "tool": "a"},    # 4
    ))
    assert errors(items) == [("input/invalid_event", "t.jsonl", n) for n in (1, 2, 3)]
    (t,) = traces(items).values()
    assert calls(t) == [("a", 4)]


def test_bad_lines_are_reported_and_the_rest_is_read(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "trace_start", "trace_id": "A"},                        # 1
        '{"type":"tool_call","trace_id":"A","tool":"ok1"',               # 2 not JSON
        "[1, 2]",                                                        # 3 not an object
        '"str"',                                                         # 4 not an object
        {"type": "tool_call", "trace_id": "B", "tool": "admin_delete"},  # 5
        "",                                                              # 6 blank: skipped
        "null",                                                          # 7 not an object
        {"type": "tool_call", "trace_id": "A", "tool": "ok2"},           # 8
    ))
    assert errors(items) == [
        ("input/parse_error", "t.jsonl", 2),
        ("input/invalid_event", "t.jsonl", 3),
        ("input/invalid_event", "t.jsonl", 4),
        ("input/invalid_event", "t.jsonl", 7),
    ]
    got = traces(items)
    assert calls(got["A"]) == [("ok2", 8)]
    assert calls(got["B"]) == [("admin_delete", 5)]


def test_bad_line_and_violation_both_reported(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "a.jsonl").write_text(jsonl(
        {"type": "tool_call", "trace_id": "A", "tool": "read"},          # 1
        "{oops",                                                         # 2
        {"type": "tool_call", "trace_id": "B", "tool": "read"},          # 3
        {"type": "trace_end", "trace_id": "A"},                          # 4
        {"type": "tool_call", "trace_id": "B", "tool": "admin_delete"},  # 5
    ), encoding="utf-8")
    (tmp_path / "agent-eval.yaml").write_text(textwrap.dedent("""
        version: "1"
        suite: s
        traces: traces/*.jsonl
        tests:
          - id: no_admin
            metric: tool_blocklist
            blocklist:
              - admin_*
    """).lstrip(), encoding="utf-8")
    suite = load_suite(tmp_path / "agent-eval.yaml")
    results = evaluate(suite, load_traces(["traces/a.jsonl"], suite))
    assert [(e.rule, e.file, e.line) for e in results.input_errors] == [
        ("input/parse_error", "traces/a.jsonl", 2)]
    (test,) = results.tests
    assert [(v.tool, v.trace.file, v.trace.line, v.trace.trace_id, v.config.line)
            for v in test.violations if v.trace] == [
        ("admin_delete", "traces/a.jsonl", 5, "B", 8)]
    assert test.traces_checked == 2
    assert results.verdict == "error"  # input errors make the verdict error


def test_event_after_trace_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "tool_call", "tool": "a"},   # 1
        {"type": "trace_end"},                # 2
        {"type": "tool_call", "tool": "b"},   # 3
        {"type": "output", "output": "x"},    # 4
    ))
    assert errors(items) == [("input/event_after_end", "t.jsonl", 3),
                             ("input/event_after_end", "t.jsonl", 4)]
    (t,) = traces(items).values()
    assert (calls(t), t.end_location.line, t.output) == ([("a", 1)], 2, None)


def test_event_after_trace_end_with_trace_ids(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "trace_start", "trace_id": "A"},               # 1
        {"type": "trace_end", "trace_id": "A"},                 # 2
        {"type": "tool_call", "trace_id": "A", "tool": "x"},    # 3
        {"type": "tool_call", "tool": "y"},                     # 4 latest trace_start: A
        {"type": "trace_start", "trace_id": "B"},               # 5
        {"type": "tool_call", "tool": "z"},                     # 6 -> B
    ))
    assert errors(items) == [("input/event_after_end", "t.jsonl", 3),
                             ("input/event_after_end", "t.jsonl", 4)]
    got = traces(items)
    assert sorted(got, key=lambda e: e[0]) == ["A", "B"]
    assert calls(got["A"]) == []
    assert calls(got["B"]) == [("z", 6)]


def test_numbers_given_as_strings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "llm_call", "input_tokens": "12", "output_tokens": 3,
         "cost_usd": "0.1"},                                                  # 1
        {"type": "tool_call", "tool": "a", "latency_ms": "5"},                # 2
        {"type": "tool_call", "tool": "b", "latency_ms": True},               # 3
        {"type": "trace_end", "duration_ms": "100", "total_tokens": 7},       # 4
    ))
    assert errors(items) == [
        ("input/invalid_event", "t.jsonl", 1),
        ("input/invalid_event", "t.jsonl", 1),
        ("input/invalid_event", "t.jsonl", 2),
        ("input/invalid_event", "t.jsonl", 3),
        ("input/invalid_event", "t.jsonl", 4),
    ]
    line1 = [e.message for e in items if isinstance(e, InputError) and e.line == 1]
    assert [m.split("'")[1] for m in line1] == ["input_tokens", "cost_usd"]  # in key order
    (t,) = traces(items).values()
    (llm,) = t.llm_calls
    assert (llm.input_tokens, llm.output_tokens, llm.total_tokens, llm.cost_usd) == (
        None, 3, None, None)
    assert [c.latency_ms for c in t.tool_calls] == [None, None]
    assert (t.duration_ms, t.total_tokens) == (None, 7)


# ------------------------------------------------------------ .json documents
def test_json_array_of_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (
        "[\n"                                                   # 1
        '  {"type": "trace_start", "trace_id": "J"},\n'         # 2
        "  {\n"                                                 # 3
        '    "type": "tool_call",\n'                            # 4
        '    "tool": "a",\n'                                    # 5
        '    "arguments": {"x": [1, "]"]}\n'                    # 6
        "  },\n"                                                # 7
        '  {"type": "tool_call", "tool": "b",\n'                # 8
        '   "arguments": "{\\"y\\": 1}"},\n'                    # 9
        "  5,\n"                                                # 10
        '  {"type": "trace_end", "duration_ms": 5}\n'           # 11
        "]\n"                                                   # 12
    )
    json.loads(text)
    for fmt in ("native", "auto"):
        items = read(tmp_path, monkeypatch, text, "doc.json", fmt)
        assert errors(items) == [("input/invalid_event", "doc.json", 10)]
        (t,) = traces(items).values()
        assert t.id == "J"
        assert [(c.name, c.location.line, c.arguments) for c in t.tool_calls] == [
            ("a", 3, {"x": [1, "]"]}), ("b", 8, {"y": 1})]
        assert (t.location.line, t.end_location.line, t.duration_ms) == (2, 11, 5)


def test_json_events_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (
        "{\n"                                                                   # 1
        '  "meta": {"note": "[not an event]", "type": "tool_call"},\n'          # 2
        '  "events": [\n'                                                       # 3
        '    {"type": "tool_call",\n'                                           # 4
        '     "tool": "a"},\n'                                                  # 5
        "\n"                                                                    # 6
        '    {"type": "tool_call", "tool": "b"}, {"type": "tool_call", "tool": "c"}\n'  # 7
        "  ]\n"                                                                 # 8
        "}\n"                                                                   # 9
    )
    json.loads(text)
    for fmt in ("native", "auto"):
        items = read(tmp_path, monkeypatch, text, "sub/ev.json", fmt)
        assert errors(items) == []
        (t,) = traces(items).values()
        assert t.id == "sub/ev.json"
        assert calls(t) == [("a", 4), ("b", 7), ("c", 7)]


def test_json_document_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = (
        "[\n"                                              # 1
        '  {"type": "tool_call", "tool": "' + "é" * 60 + '"},\n'  # 2 (60 two-byte chars)
        '  {"type": "tool_call" "tool": "b"}\n'            # 3 missing comma
        "]\n"
    )
    items = read(tmp_path, monkeypatch, bad, "bad.json")
    assert errors(items) == [("input/parse_error", "bad.json", 3)]
    assert traces(items) == {}
    items = read(tmp_path, monkeypatch, '{"foo": 1}', "obj.json")
    assert errors(items) == [("input/invalid_event", "obj.json", 1)]
    assert traces(items) == {}
    # invalid UTF-8 on line 3
    items = read(tmp_path, monkeypatch, b'[\n{"type": "tool_call",\n"tool": "caf\xe9"}]\n',
                 "latin.json")
    assert errors(items) == [("input/parse_error", "latin.json", 3)]


# ------------------------------------------------------------- odd input files
def test_non_utf8_and_binary_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    content = (b"\xff\xfe\x00garbage\n"                              # 1
               b'{"type":"tool_call","tool":"a"}\n'                   # 2
               b'{"type":"tool_call","tool":"caf\xe9"}\n'             # 3 latin-1
               b"\x89PNG\r\n\x1a\n"                                   # 4, 5
               b'{"type":"tool_call","tool":"b"}\r\n')                # 6 CRLF
    for fmt in ("native", "auto"):
        items = read(tmp_path, monkeypatch, content, "bin.jsonl", fmt)
        assert errors(items) == [("input/parse_error", "bin.jsonl", n) for n in (1, 3, 4, 5)]
        (t,) = traces(items).values()
        assert calls(t) == [("a", 2), ("b", 6)]


def test_binary_file_with_auto_is_unknown_format(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, bytes(range(256)) * 4, "blob.jsonl", "auto")
    assert errors(items) == [("input/unknown_format", "blob.jsonl", 0)]


def test_utf8_bom(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("bom.jsonl", "bom.json"):
        body = SEED if name.endswith("l") else "[" + SEED.strip() + "]"
        items = read(tmp_path, monkeypatch, b"\xef\xbb\xbf" + body.encode(), name, "auto")
        assert errors(items) == []
        (t,) = traces(items).values()
        assert calls(t) == [("apply_discount", 1)]


def test_sniff_needs_a_top_level_native_event(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # an Anthropic / Claude Code style line: "tool_result" only inside the content
    foreign = jsonl({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "x", "content": "ok"}]}})
    assert not READER.sniff(foreign.encode(), SourceFile("/x/cc.jsonl", "cc.jsonl", "cc"))
    messages = b'[{"role": "user", "content": [{"type": "output"}]}]'
    assert not READER.sniff(messages, SourceFile("/x/m.json", "m.json", "m"))
    nested = b'{"events": [{"type": "x", "body": {"type": "tool_call"}}]}'
    assert not READER.sniff(nested, SourceFile("/x/m.json", "m.json", "m"))
    assert READER.sniff(b'{"events": [{"type": "tool_call"}]}',
                        SourceFile("/x/m.json", "m.json", "m"))
    # a native file whose first line is broken is still recognised
    items = read(tmp_path, monkeypatch, "not json\n" + SEED, "n.jsonl", "auto")
    assert errors(items) == [("input/parse_error", "n.jsonl", 1)]
    assert calls(next(iter(traces(items).values()))) == [("apply_discount", 2)]


def test_sniff_on_a_cut_off_first_line() -> None:
    source = SourceFile("/x/t.jsonl", "t.jsonl", "t.jsonl")
    head = b'{"type": "tool_call", "tool": "a", "arguments": {"blob": "' + b"x" * 9000
    assert READER.sniff(head[:8192], source)
    nested = b'{"kind": "x", "body": {"type": "tool_call", "blob": "' + b"x" * 9000
    assert not READER.sniff(nested[:8192], source)


def test_a_foreign_file_is_not_native_and_does_not_crash() -> None:
    # tests/fixtures/claude_code/bad-lines.jsonl (12 lines): line 1 is `not-json`, lines 8
    # and 9 are a string and a number, line 10 an object without a type; the other eight
    # are objects of Claude Code's types, none a native event.
    source = SourceFile(str(FOREIGN), "foreign.jsonl", "foreign.jsonl")
    assert not READER.sniff(FOREIGN.read_bytes()[:8192], source)
    auto = list(read_sources([source], "auto"))
    assert all(t.format == "claude_code" for t in auto if isinstance(t, Trace))
    native = list(read_sources([source], "native"))
    assert errors(native) == [("input/parse_error", "foreign.jsonl", 1),
                              ("input/invalid_event", "foreign.jsonl", 8),
                              ("input/invalid_event", "foreign.jsonl", 9),
                              ("input/invalid_event", "foreign.jsonl", 10)]
    assert ignored(native) == [IgnoredEvents("foreign.jsonl", 8)]
    assert traces(native) == {}


@pytest.mark.usefixtures("samples")
def test_real_foreign_sample_does_not_crash() -> None:
    # The file (5 lines): line 1 is `not-json`; lines 2-5 are objects of type
    # user / user / assistant / assistant, none of them a native event.
    source = SourceFile(str(SAMPLE), "sample.jsonl", "sample.jsonl")
    assert not READER.sniff(SAMPLE.read_bytes()[:8192], source)
    auto = list(read_sources([source], "auto"))
    if any(e.rule == "input/unknown_format" for e in auto if isinstance(e, InputError)):
        assert errors(auto) == [("input/unknown_format", "sample.jsonl", 0)]
    else:  # a Claude Code adapter took it: at least it is not read as native
        assert all(t.format != "native" for t in auto if isinstance(t, Trace))
    native = list(read_sources([source], "native"))
    assert errors(native) == [("input/parse_error", "sample.jsonl", 1)]
    assert ignored(native) == [IgnoredEvents("sample.jsonl", 4)]
    assert traces(native) == {}


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    source = SourceFile(str(tmp_path / "gone.jsonl"), "gone.jsonl", "gone.jsonl")
    assert errors(list(read_sources([source], "auto"))) == [
        ("input/unreadable_file", "gone.jsonl", 0)]
    assert errors(list(read_sources([source], "native"))) == [
        ("input/unreadable_file", "gone.jsonl", 0)]


@pytest.mark.parametrize(("name", "content"), [
    ("empty.jsonl", ""),
    ("blank.jsonl", "\n  \n\n"),
    ("empty.json", "[]"),
    ("noevents.json", '{"events": []}'),
])
def test_a_file_without_events_is_an_input_error(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 name: str, content: str) -> None:
    items = read(tmp_path, monkeypatch, content, name, "native")
    assert errors(items) == [("input/no_traces", name, 0)]
    assert traces(items) == {} and ignored(items) == []


def test_a_file_of_unknown_events_only_is_an_input_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl({"type": "x"}, {"type": "y"}), "u.jsonl")
    assert errors(items) == [("input/no_traces", "u.jsonl", 0)]
    assert ignored(items) == [IgnoredEvents("u.jsonl", 2)]
    assert traces(items) == {}


def test_a_file_of_bad_lines_only_reports_the_lines(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, "nope\n[]\n", "bad.jsonl")
    assert errors(items) == [("input/parse_error", "bad.jsonl", 1),
                             ("input/invalid_event", "bad.jsonl", 2)]


# --------------------------------------------------- byte ranges (--jobs, NativeRange)
def _cut_points(data: bytes) -> list[tuple[int, int]]:
    """(offset, line number) of every trace_start line but the first line."""
    out, pos = [], 0
    for number, raw in enumerate(data.splitlines(keepends=True), 1):
        if number > 1 and trace_start_line(raw):
            out.append((pos, number))
        pos += len(raw)
    return out


def _read_ranges(path: Path, cuts: list[tuple[int, int]]
                 ) -> tuple[list[ReadItem], list[NativeRange]]:
    source = SourceFile(str(path), "t.jsonl", "t.jsonl")
    size = path.stat().st_size
    bounds = [(0, 1), *cuts]
    ranges = [NativeRange(start, bounds[k + 1][0] if k + 1 < len(bounds) else size, line,
                          k == len(bounds) - 1)
              for k, (start, line) in enumerate(bounds)]
    items = [item for r in ranges for item in read_file(r, source)]
    return items, ranges


def _comparable(items: list[ReadItem]) -> tuple[list[Any], list[Any], int]:
    found = [repr(i) for i in items if isinstance(i, Trace)]
    errs = sorted((e.rule, e.line, e.message) for e in items if isinstance(e, InputError))
    unknown = sum(i.count for i in items if isinstance(i, IgnoredEvents))
    return found, errs, unknown


_EVENT = st.tuples(
    st.sampled_from(["trace_start", "tool_call", "tool_result", "trace_end", "llm_call",
                     "mystery", "bad"]),
    st.sampled_from([None, "A", "B", "C", "D"]),  # trace_id (None: the current trace)
    st.sampled_from(["x", "y"]),  # tool
    st.sampled_from([None, "1", "2"]),  # call id
)


@st.composite
def _trace(draw: st.DrawFn) -> list[tuple[str, str | None, str, str | None]]:
    """A well-formed trace (start, calls and results, end), sometimes with its id only on
    the trace_start line."""
    tid = draw(st.sampled_from([None, "A", "B", "C", "D", "E", "F"]))
    inner = None if draw(st.booleans()) else tid
    body = draw(st.lists(st.tuples(st.sampled_from(["tool_call", "tool_result", "llm_call"]),
                                   st.just(inner), st.sampled_from(["x", "y"]),
                                   st.sampled_from([None, "1", "2"])), max_size=4))
    return [("trace_start", tid, "x", None), *body, ("trace_end", inner, "x", None)]


# mostly well-formed traces, with stray events (anything, any trace) between them
_EVENTS = st.lists(st.one_of(_trace(), _trace(), st.lists(_EVENT, max_size=2)),
                   max_size=8).map(lambda blocks: [e for b in blocks for e in b])


def _jsonl(events: list[tuple[str, str | None, str, str | None]]) -> bytes:
    out = []
    for kind, tid, tool, cid in events:
        if kind == "bad":
            out.append("{not json")
            continue
        e: dict[str, Any] = {"type": kind, "tool": tool}
        if tid is not None:
            e["trace_id"] = tid
        if cid is not None:
            e["id"] = cid
        out.append(json.dumps(e))
    return ("\n".join(out) + "\n").encode()


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=_EVENTS, data=st.data())
def test_clean_ranges_read_as_the_whole_file(tmp_path: Path, events: list[Any],
                                              data: st.DataObject) -> None:
    """Cut at any trace_start lines: when every range is clean and their trace ids are
    disjoint, the ranges give exactly what reading the whole file gives (the engine reads
    the file whole otherwise)."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(_jsonl(events))
    points = _cut_points(path.read_bytes())
    cuts = data.draw(st.lists(st.sampled_from(points), unique=True).map(sorted)
                     if points else st.just([]))
    whole = list(read_file(READER, SourceFile(str(path), "t.jsonl", "t.jsonl")))
    items, ranges = _read_ranges(path, cuts)
    ids = [tid for r in ranges for tid in r.ids]
    if all(r.clean for r in ranges) and len(ids) == len(set(ids)):
        assert _comparable(items) == _comparable(whole)
    if not cuts:  # one range: the whole file, clean whenever it holds a trace
        assert ranges[0].clean == any(isinstance(i, Trace) for i in whole)


def test_ranges_that_cannot_stand_alone_are_not_clean(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(jsonl(
        {"type": "trace_start", "trace_id": "A"},             # 1
        {"type": "tool_call", "trace_id": "A", "tool": "x"},  # 2
        {"type": "trace_start", "trace_id": "B"},             # 3: A still open here
        {"type": "trace_end", "trace_id": "A"},               # 4
        {"type": "trace_end", "trace_id": "B"},               # 5
        {"type": "trace_start", "trace_id": "C"},             # 6
        {"type": "trace_end", "trace_id": "C"},               # 7
        {"type": "trace_start", "trace_id": "D"},             # 8
        {"type": "tool_call", "trace_id": "C", "tool": "x"},  # 9: C ended before 8
        {"type": "trace_end", "trace_id": "D"},               # 10
        {"type": "trace_start", "trace_id": "C"},             # 11: C again
        {"type": "trace_end", "trace_id": "C"},               # 12
    ))
    points = dict((line, pos) for pos, line in _cut_points(path.read_bytes()))
    assert sorted(points) == [3, 6, 8, 11]
    _, ranges = _read_ranges(path, [(points[n], n) for n in (3, 6, 8, 11)])
    assert [(r.clean, r.ids) for r in ranges] == [
        (False, ["A"]),       # A is still open at its end
        (False, ["B", "A"]),  # A's trace_end opens a trace without a trace_start
        (True, ["C"]),
        (False, ["D", "C"]),  # an event of a trace it did not start
        (True, ["C"]),        # clean alone, but C is also in the third range
    ]


# ------------------------------------------------------------- very long traces
# Beyond LONG_TRACE calls a trace's calls are a CallLog (most of them on disk) and the
# reader knows them by index: reading with tiny bounds must give what reading in memory
# gives, call for call, error for error.
_NAMES = st.sampled_from(["x", "x", "y", "z\x00", "w" * 300])  # two need cleaning (clean_trace)
_IDS = st.sampled_from([None, None, "1", "2", "3", 4])


@st.composite
def _long_event(draw: st.DrawFn) -> dict[str, Any] | str:
    kind = draw(st.sampled_from(["tool_call"] * 8 + ["tool_result"] * 6
                                + ["trace_start", "trace_end", "bad"]))
    if kind == "bad":
        return "{not json"
    e: dict[str, Any] = {"type": kind}
    tid = draw(st.sampled_from([None, None, "A", "A", "A", "B"]))
    if tid is not None:
        e["trace_id"] = tid
    if kind in ("tool_call", "tool_result"):
        if draw(st.integers(0, 5)):
            e["tool"] = draw(_NAMES)
        cid = draw(_IDS)
        if cid is not None:
            e["call_id" if draw(st.booleans()) else "id"] = cid
        extra: dict[str, Any] = draw(st.sampled_from([
            {}, {}, {"result": [1, {"a": "b"}]}, {"error": "boom"},
            {"is_error": True, "result": {"x": 1}}, {"latency_ms": 5.5},
            {"latency_ms": "slow"}, {"output": "text"}, {"arguments": '{"q": 1}'}]))
        e.update(extra)
    return e


def _materialised(items: list[ReadItem]) -> list[Any]:
    out: list[Any] = []
    for i in items:
        if isinstance(i, Trace):
            out.append(repr(dataclasses.replace(i, tool_calls=list(i.tool_calls))))
        else:
            out.append(repr(i))
    return out


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=st.lists(_long_event(), min_size=4, max_size=40), long=st.integers(1, 6),
       chunk=st.integers(1, 4), keep=st.integers(0, 3))
def test_a_long_trace_on_disk_reads_as_in_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, events: list[dict[str, Any] | str],
        long: int, chunk: int, keep: int) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(jsonl(*events), encoding="utf-8")
    source = SourceFile(str(path), "t.jsonl", "t.jsonl")
    in_memory = list(read_file(READER, source))
    assert not any(isinstance(i, Trace) and isinstance(i.tool_calls, CallLog)
                   for i in in_memory)
    with monkeypatch.context() as m:
        m.setattr(native, "LONG_TRACE", long)
        m.setattr(model, "LOG_CHUNK", chunk)
        m.setattr(model, "LOG_KEEP", keep)
        on_disk = list(read_file(READER, source))
        assert _materialised(on_disk) == _materialised(in_memory)
    made_long = [i for i in on_disk if isinstance(i, Trace) and len(i.tool_calls) > long]
    assert all(isinstance(t.tool_calls, CallLog) for t in made_long)


def test_a_long_trace_matches_late_results_by_id_and_by_tool(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Results for calls written to disk long before: by id (the latest call of that id),
    by tool name (the latest call of that tool still without a result), and one for no
    call at all."""
    monkeypatch.setattr(native, "LONG_TRACE", 3)
    monkeypatch.setattr(model, "LOG_CHUNK", 2)
    monkeypatch.setattr(model, "LOG_KEEP", 1)
    calls = [{"type": "tool_call", "trace_id": "T", "tool": f"t{i % 3}", "id": f"c{i % 7}"}
             for i in range(20)]
    events: list[dict[str, Any] | str] = [{"type": "trace_start", "trace_id": "T"}, *calls,
              {"type": "tool_result", "trace_id": "T", "id": "c1", "result": "by id"},
              {"type": "tool_result", "trace_id": "T", "tool": "t0", "result": "t0 a"},
              {"type": "tool_result", "trace_id": "T", "tool": "t0", "result": "t0 b",
               "latency_ms": 7},
              {"type": "tool_result", "trace_id": "T", "id": "nope", "result": "lost"},
              {"type": "trace_end", "trace_id": "T"}]
    items = read(tmp_path, monkeypatch, jsonl(*events))
    [trace] = traces(items).values()
    assert isinstance(trace.tool_calls, CallLog)
    got = {i: (c.result, c.result_location.line if c.result_location else None,
               c.latency_ms) for i, c in enumerate(trace.tool_calls) if c.has_result}
    # c1 last on call 15 (line 17); t0 calls are 0, 3, ..., 18: 18 then 15 is by id, so 12
    assert got == {15: ("by id", 22, None), 18: ("t0 a", 23, None), 12: ("t0 b", 24, 7)}
    assert errors(items) == [("input/unmatched_result", "t.jsonl", 25)]


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), st.integers(0, 6000), st.integers(0, 10**6)),
                    max_size=300),
       many=st.integers(0, 5000))
def test_the_id_table_is_a_dict_of_the_latest_index(
        ops: list[tuple[bool, int, int]], many: int) -> None:
    ids, reference = native._Ids(), {}
    for k in range(many):  # enough ids to grow the table (4,096 slots at first)
        ids.put(f"id{k}", k)
        reference[f"id{k}"] = k
    for put, key, index in ops:
        cid = f"id{key}"
        if put:
            ids.put(cid, index)
            reference[cid] = index
        assert ids.get(cid) == reference.get(cid)
    assert all(ids.get(cid) == index for cid, index in reference.items())
    assert ids.count == len(reference) and 2 * ids.count <= ids.mask


def test_a_trace_of_long_trace_calls_is_a_list_one_more_a_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond LONG_TRACE calls (docs/library.md: "more than 50,000"), not at it."""
    monkeypatch.setattr(native, "LONG_TRACE", 3)
    events = [{"type": "tool_call", "trace_id": tid, "tool": "t"}
              for tid, n in (("at", 3), ("beyond", 4)) for _ in range(n)]
    got = traces(read(tmp_path, monkeypatch, jsonl(*events)))
    assert type(got["at"].tool_calls) is list
    assert isinstance(got["beyond"].tool_calls, CallLog) and len(got["beyond"].tool_calls) == 4


def test_a_long_trace_that_cannot_be_written_is_an_input_error_saying_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk (or a folder that cannot be written) under a long trace: an input
    error of that file naming the temporary file, not "cannot read the file"; the next
    file is still read."""
    import tempfile

    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", full)
    monkeypatch.setattr(native, "LONG_TRACE", 3)
    monkeypatch.setattr(model, "LOG_CHUNK", 1)
    monkeypatch.setattr(model, "LOG_KEEP", 0)
    monkeypatch.chdir(tmp_path)
    calls = [{"type": "tool_call", "tool": "x"}] * 5
    (tmp_path / "a.jsonl").write_text(jsonl(*calls), encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(jsonl(*calls[:2]), encoding="utf-8")
    items = list(load_traces(["a.jsonl", "b.jsonl"], format="native"))
    [error] = [i for i in items if isinstance(i, InputError)]
    assert (error.rule, error.file) == ("input/reader_error", "a.jsonl")
    assert "temporary file" in error.message and "No space left" in error.message
    assert "cannot read the file" not in error.message
    assert [t.source for t in traces(items).values()] == ["b.jsonl"]


# ------------------------------------------------------------ figures below 0
def test_negative_figures_are_input_errors_and_unknown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A token count, cost, latency or duration below 0 could only come from a broken or
    edited trace, and would cancel the real spend in a sum: an input error at its line,
    and unknown."""
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "trace_start", "trace_id": "t"},                                  # 1
        {"type": "llm_call", "input_tokens": -90000, "output_tokens": 0,
         "cost_usd": -5.0, "latency_ms": 3},                                       # 2
        {"type": "llm_call", "input_tokens": 4, "output_tokens": 6,
         "total_tokens": -1},                                                      # 3
        {"type": "tool_call", "tool": "a", "id": "c1", "latency_ms": -2},          # 4
        {"type": "tool_call", "tool": "b", "id": "c2", "latency_ms": 7},           # 5
        {"type": "tool_result", "id": "c2", "latency_ms": -1.5},                   # 6
        {"type": "trace_end", "duration_ms": -10, "cost_usd": -0.0001,
         "total_tokens": 5},                                                       # 7
    ))
    got = [(e.line, e.message) for e in items if isinstance(e, InputError)]
    assert all(e.rule == "input/invalid_event" and e.file == "t.jsonl"
               for e in items if isinstance(e, InputError))
    assert sorted(got, key=lambda e: e[0]) == [
        (2, "'input_tokens' must be a number of at least 0, not -90000; it is treated as "
            "not recorded"),
        (2, "'cost_usd' must be a number of at least 0, not -5.0; it is treated as not "
            "recorded"),
        (3, "'total_tokens' must be a number of at least 0, not -1; it is treated as not "
            "recorded"),
        (4, "a: 'latency_ms' must be a number of at least 0, not -2; it is treated as not "
            "recorded"),
        (6, "tool_result: 'latency_ms' must be a number of at least 0, not -1.5; it is "
            "treated as not recorded"),
        (7, "the trace's 'duration_ms' must be a number of at least 0, not -10; it is "
            "treated as not recorded"),
        (7, "the trace's 'cost_usd' must be a number of at least 0, not -0.0001; it is "
            "treated as not recorded"),
    ]
    t = traces(items)["t"]
    first, second = t.llm_calls
    # the total made from a negative count is unknown too
    assert (first.input_tokens, first.output_tokens, first.total_tokens, first.cost_usd,
            first.latency_ms) == (None, 0, None, None, 3)
    assert (second.input_tokens, second.output_tokens, second.total_tokens) == (4, 6, None)
    assert [c.latency_ms for c in t.tool_calls] == [None, None]
    assert (t.duration_ms, t.cost_usd, t.total_tokens) == (None, None, 5)
    # the trace's total of 5 is below the second call's 4 + 6 recorded tokens: 10
    assert t.cost is None and t.tokens == 10 and t.latency_ms is None


def test_zero_figures_are_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "llm_call", "input_tokens": 0, "output_tokens": 0, "cost_usd": 0,
         "latency_ms": 0.0},
        {"type": "tool_call", "tool": "a", "latency_ms": 0},
        {"type": "trace_end", "duration_ms": 0}))
    assert not [e for e in items if isinstance(e, InputError)]
    (t,) = traces(items).values()
    assert (t.cost, t.tokens, t.latency_ms) == (0, 0, 0)


def test_an_llm_calls_total_below_its_parts_is_their_sum(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The regression: an llm_call of 900,000 input and 100,000 output tokens whose
    total_tokens said 10 counted 10, and passed a max_total_tokens of 1,000 (exit 0). A
    total below its own parts is read as their sum, as a trace's total below its calls'
    is (docs/formats.md "Totals given twice"); one above them is kept."""
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "llm_call", "input_tokens": 900_000, "output_tokens": 100_000,
         "total_tokens": 10},
        {"type": "llm_call", "input_tokens": 10, "output_tokens": 5, "total_tokens": 20},
        {"type": "llm_call", "input_tokens": 10, "total_tokens": 3},     # the part known
        {"type": "llm_call", "total_tokens": 7}))                         # no parts
    assert not [e for e in items if isinstance(e, InputError)]
    (t,) = traces(items).values()
    assert [c.total_tokens for c in t.llm_calls] == [1_000_000, 20, 10, 7]


def test_negative_latencies_of_a_long_trace_are_reported_as_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The calls of a trace kept on disk are not walked again after reading: the native
    reader checks their latencies as it reads them, with the same errors."""
    text = jsonl(
        {"type": "trace_start", "trace_id": "t"},
        *({"type": "tool_call", "tool": "a", "id": f"c{i}", "latency_ms": 1}
          for i in range(4)),
        {"type": "tool_call", "tool": "a", "id": "c4", "latency_ms": -3},           # 6
        {"type": "tool_result", "id": "c1", "latency_ms": -4},                      # 7
        {"type": "trace_end"})
    in_memory = read(tmp_path, monkeypatch, text)
    monkeypatch.setattr(native, "LONG_TRACE", 2)
    monkeypatch.setattr(model, "LOG_CHUNK", 1)
    monkeypatch.setattr(model, "LOG_KEEP", 1)
    on_disk = read(tmp_path, monkeypatch, text)
    (t,) = traces(on_disk).values()
    assert isinstance(t.tool_calls, CallLog)
    assert [c.latency_ms for c in t.tool_calls] == [1, None, 1, 1, None]
    # the same items (reported at other moments: the run sorts its input errors)
    assert sorted(_materialised(on_disk)) == sorted(_materialised(in_memory))
    assert sorted((e.line, e.message.split(" must")[0]) for e in on_disk
                  if isinstance(e, InputError)) == [(6, "a: 'latency_ms'"),
                                                     (7, "tool_result: 'latency_ms'")]


@pytest.mark.parametrize(("value", "said"), [
    (-120, "'input_tokens' must be a number of at least 0, not -120"),
    (1e300, "'input_tokens' must be a number of at most 10^15"),
])
def test_bad_figures_of_any_format(tmp_path: Path, value: float, said: str) -> None:
    """The check is made on every reader's traces (read_file), not in the native reader
    alone: an OpenTelemetry span with a negative or a huge token count."""
    span = json.loads((FIXTURES / "otlp" / "flat-client-span.json").read_text())
    span["gen_ai.usage.input_tokens"] = value
    path = tmp_path / "span.json"
    path.write_text(json.dumps(span), encoding="utf-8")
    from agent_eval.readers import READERS

    items = list(read_file(READERS["otlp"], SourceFile(str(path), "span.json", "span.json")))
    (e,) = [i for i in items if isinstance(i, InputError)]
    assert (e.rule, e.file, e.line) == ("input/invalid_event", "span.json", 1)
    assert e.message.startswith(said)
    (t,) = [i for i in items if isinstance(i, Trace)]
    (llm,) = t.llm_calls
    assert (llm.input_tokens, llm.output_tokens, llm.total_tokens) == (None, 30, None)


def test_a_figure_that_is_no_number_is_left_to_its_reader() -> None:
    """negative_figures compares numbers only: a reader that kept a text (none does
    today) gets no TypeError from it, and its figure is left as it is."""
    from agent_eval.model import LlmCall, Location
    from agent_eval.readers import negative_figures

    loc = Location("t.jsonl", 1)
    t = Trace(id="t", source="t.jsonl", location=loc, end_location=loc)
    t.llm_calls.append(LlmCall(loc, cost_usd="5", latency_ms=-1))  # type: ignore[arg-type]
    t.tool_calls.append(ToolCall("a", {}, loc, latency_ms=True))
    t.duration_ms = float("nan")
    errors = negative_figures(t)
    assert [e.message.split(" must")[0] for e in errors] == [
        "the trace's 'duration_ms'", "'latency_ms'"]
    llm: Any = t.llm_calls[0]
    assert (llm.cost_usd, llm.latency_ms) == ("5", None)
    assert t.tool_calls[0].latency_ms is True and t.duration_ms is None


# ------------------------------------------------------------ figures over 10^15
def test_huge_figures_are_input_errors_and_unknown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A figure over 10^15 (no real trace holds one) is an input error at its line and
    unknown, as a negative one: summed with another it would overflow to infinity (an
    OverflowError in the mean, a null where results.json needs a number). 10^15 itself
    is a figure."""
    items = read(tmp_path, monkeypatch, jsonl(
        {"type": "trace_start", "trace_id": "t"},                                  # 1
        {"type": "llm_call", "input_tokens": 10**15 + 1, "output_tokens": 0,
         "cost_usd": 1e308, "latency_ms": 1e15},                                   # 2
        {"type": "tool_call", "tool": "a", "id": "c1", "latency_ms": 1e16},        # 3
        {"type": "tool_call", "tool": "b", "id": "c2"},                            # 4
        {"type": "tool_result", "id": "c2", "latency_ms": 2e15},                   # 5
        {"type": "trace_end", "duration_ms": 1.7e308, "total_tokens": 10**15},     # 6
    ))
    got = sorted((e.line, e.message) for e in items if isinstance(e, InputError))
    tail = "(no real trace holds more), not {}; it is treated as not recorded"
    assert got == [
        (2, "'cost_usd' must be a number of at most 10^15 " + tail.format("1e+308")),
        (2, "'input_tokens' must be a number of at most 10^15 "
            + tail.format("1000000000000001")),
        (3, "a: 'latency_ms' must be a number of at most 10^15 " + tail.format("1e+16")),
        (5, "tool_result: 'latency_ms' must be a number of at most 10^15 "
            + tail.format("2000000000000000.0")),
        (6, "the trace's 'duration_ms' must be a number of at most 10^15 "
            + tail.format("1.7e+308")),
    ]
    t = traces(items)["t"]
    (llm,) = t.llm_calls
    assert (llm.input_tokens, llm.total_tokens, llm.cost_usd, llm.latency_ms) == (
        None, None, None, 1e15)
    assert [c.latency_ms for c in t.tool_calls] == [None, None]
    assert (t.duration_ms, t.total_tokens) == (None, 10**15)


def test_infinite_figures_are_input_errors() -> None:
    """A reader that keeps an infinite figure (Python's json reads 1e400 as inf) gets the
    same error: infinity is over 10^15, and -infinity below 0."""
    from agent_eval.model import LlmCall, Location
    from agent_eval.readers import negative_figures

    loc = Location("t.jsonl", 1)
    t = Trace(id="t", source="t.jsonl", location=loc, end_location=loc)
    t.llm_calls.append(LlmCall(loc, cost_usd=float("inf"), latency_ms=float("-inf")))
    errors = negative_figures(t)
    assert [e.message.split(", not")[0] for e in errors] == [
        "'cost_usd' must be a number of at most 10^15 (no real trace holds more)",
        "'latency_ms' must be a number of at least 0"]
    assert (t.llm_calls[0].cost_usd, t.llm_calls[0].latency_ms) == (None, None)


def test_huge_latency_of_a_long_trace_is_reported_as_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = jsonl(
        {"type": "trace_start", "trace_id": "t"},
        *({"type": "tool_call", "tool": "a", "id": f"c{i}", "latency_ms": 1}
          for i in range(4)),
        {"type": "tool_call", "tool": "a", "id": "c4", "latency_ms": 1e300},        # 6
        {"type": "tool_result", "id": "c1", "latency_ms": 1e300},                   # 7
        {"type": "trace_end"})
    monkeypatch.setattr(native, "LONG_TRACE", 2)
    monkeypatch.setattr(model, "LOG_CHUNK", 1)
    monkeypatch.setattr(model, "LOG_KEEP", 1)
    on_disk = read(tmp_path, monkeypatch, text)
    (t,) = traces(on_disk).values()
    assert isinstance(t.tool_calls, CallLog)
    assert [c.latency_ms for c in t.tool_calls] == [1, None, 1, 1, None]
    assert sorted((e.line, e.message.split(" must")[1][:27]) for e in on_disk
                  if isinstance(e, InputError)) == [(6, " be a number of at most 10^"),
                                                     (7, " be a number of at most 10^")]


