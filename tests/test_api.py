"""The library surface: load_suite, load_traces (streaming), evaluate -> Results."""

from __future__ import annotations

import importlib
import inspect
import json
import pickle
import pydoc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agent_eval
from agent_eval.api import evaluate, load_suite, load_traces, suite_sources
from agent_eval.errors import ConfigError, InputError
from agent_eval.model import Location, ToolCall, Trace
from agent_eval.readers import ReadItem
from agent_eval.readers.base import FileRead
from agent_eval.results import Results

SUITE = """\
suite: lib
tests:
  - id: block
    metric: tool_blocklist
    blocklist: [drop_*]
"""


def ev(tool: str, tid: str | None = None) -> str:
    event: dict[str, Any] = {"type": "tool_call", "tool": tool, "arguments": {}}
    if tid is not None:
        event["trace_id"] = tid
    return json.dumps(event) + "\n"


def end(tid: str) -> str:
    return json.dumps({"type": "trace_end", "trace_id": tid}) + "\n"


@pytest.fixture
def suite_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(SUITE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_public_names() -> None:
    public = {"load_suite": load_suite, "load_traces": load_traces, "evaluate": evaluate,
              "Results": Results, "ConfigError": ConfigError, "InputError": InputError,
              "Trace": Trace, "ToolCall": ToolCall, "Location": Location}
    for name, obj in public.items():
        assert getattr(agent_eval, name) is obj, name
        assert name in agent_eval.__all__
    assert isinstance(agent_eval.__version__, str)


def test_help_and_dir_show_the_public_names() -> None:
    # the names are imported lazily (module __getattr__): without a __dir__, dir() and so
    # help(agent_eval) listed none of them, only __getattr__ (docs/library.md's API hidden)
    assert set(agent_eval.__all__) <= set(dir(agent_eval))
    text = pydoc.plain(pydoc.render_doc(agent_eval))
    for shown in ("load_suite(path", "load_traces(paths", "evaluate(suite", "class Results",
                  "class Finding", "class ConfigError"):
        assert shown in text, shown


def test_the_types_the_api_returns_are_exported(suite_dir: Path) -> None:
    (suite_dir / "t.jsonl").write_text(ev("drop_db", "t1") + end("t1"))
    suite = agent_eval.load_suite()
    assert isinstance(suite, agent_eval.Suite)
    results = agent_eval.evaluate(suite, agent_eval.load_traces(["t.jsonl"], suite))
    assert results.findings
    for finding in results.findings:
        assert isinstance(finding, agent_eval.Finding)
        assert isinstance(finding.config, agent_eval.ConfigRef)
        assert finding.trace is None or isinstance(finding.trace, agent_eval.TraceRef)
    for name in ("Suite", "Finding", "ConfigRef", "TraceRef"):
        assert name in agent_eval.__all__


def test_every_package_declares_its_public_names() -> None:
    """``__all__`` in the package and in each subpackage, naming only what is there."""
    src = Path(agent_eval.__file__).parent
    packages = sorted(p.parent for p in src.rglob("__init__.py"))
    assert len(packages) > 10
    for folder in packages:
        name = ".".join(("agent_eval", *folder.relative_to(src).parts))
        module = importlib.import_module(name)
        assert isinstance(getattr(module, "__all__", None), list), name
        for public in module.__all__:
            assert hasattr(module, public), f"{name}.{public}"


def test_load_evaluate(suite_dir: Path) -> None:
    (suite_dir / "t.jsonl").write_text(ev("drop_table", "a") + ev("select", "b"))
    suite = load_suite("agent-eval.yaml")
    traces = load_traces(["t.jsonl"], suite)
    lazy: bool = inspect.isgenerator(traces)  # a stream, not a list
    assert lazy
    res = evaluate(suite, traces)
    assert isinstance(res, Results)
    assert res.verdict == "fail"
    (v,) = res.violations
    assert v.tool == "drop_table" and v.trace is not None
    assert (v.trace.file, v.trace.line, v.trace.trace_id) == ("t.jsonl", 1, "a")
    assert res.counts["traces"] == 2
    assert res.exit_code == 1


def test_evaluate_refuses_a_live_suite_whose_probes_it_would_not_run(suite_dir: Path) -> None:
    """``evaluate`` checks recorded traces: a suite with ``servers:`` and ``probes:`` was
    evaluated without its probes, and passed (verdict pass) where ``agent-eval run``, which
    runs the probe, fails it. It is a config error at ``servers:`` now."""
    (suite_dir / "live.yaml").write_text(SUITE + """servers:
  srv:
    command: a-server-that-must-not-be-started
probes:
  - {id: sum, tool: get-sum, arguments: {a: 2, b: 3}, expect_result: {contains: "is 6"}}
""")
    (suite_dir / "t.jsonl").write_text(ev("select", "a"))
    suite = load_suite("live.yaml")
    with pytest.raises(ConfigError) as exc:
        evaluate(suite, load_traces(["t.jsonl"], suite))
    [problem] = exc.value.problems
    assert problem.startswith("live.yaml:6:1: agent_eval.evaluate() does not run live MCP "
                              "servers and probes ('servers:')")
    assert "agent-eval run" in problem


def test_load_suite_raises_config_error(suite_dir: Path) -> None:
    (suite_dir / "bad.yaml").write_text("suite: s\ntests:\n  - metric: nope\n")
    with pytest.raises(ConfigError) as exc:
        load_suite(suite_dir / "bad.yaml")
    assert exc.value.problems[0].startswith("bad.yaml:3:")


def test_load_traces_streams(suite_dir: Path) -> None:
    # the first file's trace ends at its line 2; the second file is broken when the
    # first trace is handed out, and fixed before it is read
    (suite_dir / "a.jsonl").write_text(ev("x", "first") + end("first") + ev("y", "more"))
    (suite_dir / "b.jsonl").write_text("this is not JSON\n")
    stream: Iterator[ReadItem] = load_traces(["a.jsonl", "b.jsonl"])
    announced = next(stream)  # which reader reads a.jsonl, then its first trace
    assert isinstance(announced, FileRead) and announced.format == "native"
    first = next(stream)
    assert isinstance(first, Trace) and first.id == "first"
    (suite_dir / "b.jsonl").write_text(ev("z", "later"))
    rest = list(stream)
    assert [t.id for t in rest if isinstance(t, Trace)] == ["more", "later"]
    assert [r for r in rest if isinstance(r, InputError)] == []


def test_load_traces_does_no_work_before_the_first_next(suite_dir: Path) -> None:
    stream = load_traces(["nothing-yet.jsonl"])
    (suite_dir / "nothing-yet.jsonl").write_text(ev("x", "t"))
    assert [t.id for t in stream if isinstance(t, Trace)] == ["t"]


def test_load_traces_reports_bad_input_as_records(suite_dir: Path) -> None:
    (suite_dir / "a.jsonl").write_text(ev("x", "t1") + "[1, 2]\n{oops\n")
    items = list(load_traces(["a.jsonl", "missing/*.jsonl"]))
    errors = [e for e in items if isinstance(e, InputError)]
    in_file = sorted((e.rule, e.file, e.line) for e in errors if e.file == "a.jsonl")
    assert in_file == [("input/invalid_event", "a.jsonl", 2),  # [1, 2] is not an object
                       ("input/parse_error", "a.jsonl", 3)]
    (nothing,) = [e for e in errors if e.file != "a.jsonl"]
    assert nothing.rule == "input/no_traces" and "missing/*.jsonl" in nothing.message
    assert [t.id for t in items if isinstance(t, Trace)] == ["t1"]


def test_evaluate_hand_built_traces(suite_dir: Path) -> None:
    suite = load_suite()
    call = ToolCall(name="Drop-Everything", arguments={}, location=Location("mem", 7))
    trace = Trace(id="mine", source="mem", location=Location("mem", 1),
                  end_location=Location("mem", 9), tool_calls=[call])
    res = evaluate(suite, [trace])
    (v,) = res.violations
    # tool_match: normalized (the default): Drop-Everything matches drop_*
    assert v.tool == "Drop-Everything"
    assert v.trace is not None and (v.trace.file, v.trace.line) == ("mem", 7)
    assert (v.config.file, v.config.line, v.config.col) == ("agent-eval.yaml", 5, 17)


def test_evaluate_is_pure_and_results_pickle(suite_dir: Path) -> None:
    (suite_dir / "t.jsonl").write_text(ev("drop_a", "t"))
    suite = load_suite()
    before = sorted(p.name for p in suite_dir.iterdir())
    res = evaluate(suite, load_traces(["t.jsonl"], suite))
    assert sorted(p.name for p in suite_dir.iterdir()) == before  # nothing written
    copy = pickle.loads(pickle.dumps(res))
    assert copy.to_dict() == res.to_dict()


def test_zero_traces_is_an_error(suite_dir: Path) -> None:
    (suite_dir / "empty.jsonl").write_text("")
    suite = load_suite()
    res = evaluate(suite, load_traces(["empty.jsonl"], suite))
    assert res.verdict == "error"
    assert res.exit_code == 2
    assert "input/no_traces" in {e.rule for e in res.input_errors}
    assert res.counts["traces"] == 0
    assert res.tests[0].status == "error"  # checked nothing: never a pass


@pytest.mark.parametrize(("head", "where"), [
    ("suite: lib\n", "agent-eval.yaml:1:1: no traces given: "),
    # an empty list is pointed at (it was the `suite:` line, as if no key were written)
    ("suite: lib\ndescription: d\ntraces: []\n",
     "agent-eval.yaml:3:1: no traces given (the list is empty): "),
    # a key with no value is no list: it said "(the list is empty)" too
    ("suite: lib\ndescription: d\ntraces:\n",
     "agent-eval.yaml:3:1: no traces given ('traces:' has no value): "),
])
def test_no_traces_given_is_a_config_error_at_its_key(suite_dir: Path, head: str,
                                                      where: str) -> None:
    (suite_dir / "agent-eval.yaml").write_text(SUITE.replace("suite: lib\n", head))
    with pytest.raises(ConfigError) as exc:
        suite_sources(load_suite())
    assert exc.value.problems == [f"{where}set 'traces:' in the suite or pass --traces"]


def test_evaluate_nothing_is_an_error(suite_dir: Path) -> None:
    res = evaluate(load_suite(), [])
    assert res.verdict == "error"
    assert [e.rule for e in res.input_errors] == ["input/no_traces"]


DEEP_SUITE = """\
suite: deep
limits: {max_depth: 200}
tests:
  - id: args
    metric: args_valid
    policy: p.yaml
"""
# each level of the value is a $ref, an anyOf and an items: about ten frames a level
DEEP_POLICY = """\
$defs: {n: {anyOf: [{type: integer}, {type: array, items: {$ref: '#/$defs/n'}}]}}
tools: {x: {arguments: {a: {$ref: '#/$defs/n'}}}}
"""


def test_evaluate_checks_values_as_deep_as_the_limits_allow(suite_dir: Path) -> None:
    """A value 198 lists deep (within max_depth 200 with the line's object and its
    "arguments") is checked by the library as by `run`: evaluate() raised RecursionError
    at Python's default limit of 1,000 frames (only `run`'s evaluate_files raised it)."""
    import sys

    (suite_dir / "agent-eval.yaml").write_text(DEEP_SUITE)
    (suite_dir / "p.yaml").write_text(DEEP_POLICY)
    deep: Any = "s"  # no integer: the innermost item breaks the anyOf
    for _ in range(198):
        deep = [deep]
    lines = [{"type": "trace_start", "trace_id": "t"},
             {"type": "tool_call", "tool": "x", "arguments": {"a": deep}}]
    (suite_dir / "t.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    suite = load_suite()
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # Python's default: a host program's, a fresh process's
    try:
        res = evaluate(suite, load_traces(["t.jsonl"], suite))
    finally:
        sys.setrecursionlimit(max(before, sys.getrecursionlimit()))
    assert [e.rule for e in res.input_errors] == []
    assert [(v.rule, v.trace.line if v.trace else None) for v in res.violations] == [
        ("args_valid/any_of", 2)]
    assert res.verdict == "fail"


def test_load_traces_takes_one_path_or_glob_alone(suite_dir: Path) -> None:
    """A single str was read as its characters (one missing file a character: 't', '.',
    'j', …) and a single Path raised TypeError."""
    (suite_dir / "t.jsonl").write_text(ev("drop_a", "t"))
    suite = load_suite()
    for given in ("t.jsonl", "*.jsonl", Path("t.jsonl")):
        items = list(load_traces(given, suite))
        assert [e for e in items if isinstance(e, InputError)] == [], given
        assert [t.id for t in items if isinstance(t, Trace)] == ["t"], given
        assert evaluate(suite, load_traces(given, suite)).verdict == "fail", given


def test_an_unknown_format_or_dialect_is_a_value_error_saying_what_to_give(
        suite_dir: Path) -> None:
    """``format="jsonl"`` was a KeyError('jsonl') at the first file read, and
    ``dialect="asay"`` a ValueError whose whole message was 'asay'."""
    (suite_dir / "t.jsonl").write_text(ev("drop_a", "t"))
    with pytest.raises(ValueError, match=r"^unknown trace format 'nativ' \(did you mean "
                                         r"'native'\?\); use auto or one of .*\bnative\b"):
        load_traces(["t.jsonl"], format="nativ")  # at the call, not at the first next()
    with pytest.raises(ValueError) as exc:
        load_suite(dialect="asay")
    assert str(exc.value) == ("unknown dialect 'asay' (did you mean 'assay'?); use auto, "
                              "native, assay, evalview, ciagent")
    # the names that are known still work
    assert [t.id for t in load_traces(["t.jsonl"], format="native")
            if isinstance(t, Trace)] == ["t"]
    assert load_suite(dialect="native").name == "lib"


def test_evaluate_given_a_path_or_other_items_says_to_give_load_traces(
        suite_dir: Path) -> None:
    """``evaluate(suite, "t.jsonl")`` read the path's characters as input errors: an
    AttributeError ('str' object has no attribute 'rule') once the results were made; a
    list of load_traces() streams or of event dicts did the same."""
    (suite_dir / "t.jsonl").write_text(ev("drop_a", "t"))
    suite = load_suite()
    for given in ("t.jsonl", Path("t.jsonl")):
        with pytest.raises(TypeError, match=r"^evaluate\(\) takes traces, not a path: give "
                                            r"it load_traces\('t\.jsonl', suite\)$"):
            evaluate(suite, given)  # type: ignore[arg-type]
    for items, kind in (([load_traces("t.jsonl", suite)], "generator"),
                        ([{"type": "tool_call", "tool": "drop_a"}], "dict")):
        with pytest.raises(TypeError) as exc:
            evaluate(suite, items)  # type: ignore[arg-type]
        assert str(exc.value) == (
            "evaluate() takes what load_traces() gives (Trace, InputError, IgnoredEvents, "
            f"FileRead), not {kind}: give it load_traces(PATHS, suite)")
    # what load_traces gives is still evaluated
    assert evaluate(suite, load_traces("t.jsonl", suite)).verdict == "fail"


def test_a_format_or_dialect_that_is_not_text_is_the_value_error_too(suite_dir: Path) -> None:
    """``format=None`` (an optional argument passed on) and ``dialect=None`` were a
    TypeError of the "did you mean" hint ('NoneType' object is not iterable), not the
    ValueError saying what to give."""
    with pytest.raises(ValueError) as exc:
        load_traces("t.jsonl", format=None)  # type: ignore[arg-type]
    assert str(exc.value).startswith("unknown trace format None; use auto or one of ")
    with pytest.raises(ValueError) as exc:
        load_suite(dialect=None)  # type: ignore[arg-type]
    assert str(exc.value) == ("unknown dialect None; use auto, native, assay, evalview, "
                              "ciagent")
