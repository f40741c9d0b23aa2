"""The suite's ``limits:`` (docs/security.md): each one configurable, validated at its
line, and hitting it an input error for that file; a reader that fails is one too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_eval._version import __version__
from agent_eval.api import load_suite, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.errors import ConfigError, InputError
from agent_eval.model import Trace
from agent_eval.readers import ReadItem, SourceFile, read_file, read_sources
from agent_eval.readers.native import READER as NATIVE
from agent_eval.results import Results

SUITE = """\
version: "1"
suite: s
traces: traces/*
tests:
  - id: block
    metric: tool_blocklist
    blocklist: [admin_*]
limits:
{limits}
"""


def nested(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = [value]
    return value


def run(tmp_path: Path, limits: str, files: dict[str, str]) -> Results:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "traces").mkdir(exist_ok=True)
    (tmp_path / "agent-eval.yaml").write_text(SUITE.format(limits=limits))
    for name, text in files.items():
        (tmp_path / "traces" / name).write_text(text)
    suite = load_suite(tmp_path / "agent-eval.yaml")
    found, errors = suite_sources(suite)
    return evaluate_files(suite, found, errors, timings=False)


def line(tool: str = "admin_x", **args: Any) -> str:
    return json.dumps({"type": "tool_call", "tool": tool, "arguments": args}) + "\n"


def errors(results: Results) -> list[tuple[str, str, int]]:
    return [(e.rule, e.file, e.line) for e in results.input_errors]


def test_max_depth(tmp_path: Path) -> None:
    # arguments {"a": [[[[1]]]]} nest 4 levels in the event: 6 with the event and arguments
    res = run(tmp_path, "  max_depth: 5", {"t.jsonl": line(a=nested(3)) + line(a=nested(4))})
    assert errors(res) == [("input/limit_exceeded", "traces/t.jsonl", 2)]
    assert "more than 5 levels deep (limits.max_depth)" in res.input_errors[0].message
    assert res.counts["tool_calls"] == 1


def test_max_file_bytes_for_documents_and_lines(tmp_path: Path) -> None:
    big = json.dumps([{"type": "tool_call", "tool": "admin_x", "arguments": {"p": "x" * 200}}])
    res = run(tmp_path, "  max_file_bytes: 150",
              {"big.json": big, "t.jsonl": line() + line(p="y" * 200) + line()})
    assert errors(res) == [("input/limit_exceeded", "traces/big.json", 0),
                           ("input/limit_exceeded", "traces/t.jsonl", 2)]
    assert res.counts["tool_calls"] == 1  # the line before the long one


def test_max_name_chars(tmp_path: Path) -> None:
    res = run(tmp_path, "  max_name_chars: 10", {"t.jsonl": line("admin_" + "y" * 20)})
    [v] = res.violations
    assert v.tool == "admin_yyyy…[+16 chars]"
    # the rules saw the name cut: an input error at its call, the verdict error (its
    # rule id is agent-eval's own: not cut, test_low_limits_cut_only_what_traces_hold)
    assert errors(res) == [("input/limit_exceeded", "traces/t.jsonl", 1)]
    assert res.verdict == "error"


LOW = """\
version: "1"
suite: low-limits
traces: traces/*
tests:
  - id: block_admin_tools
    metric: tool_blocklist
    blocklist: [admin_*]
scenarios:
  - id: refund
    category: happy_path
    expect: {tools: [admin_x]}
pass_criteria:
  blocking: {min_pass_rate: 0.5}
  regression: {max_pass_rate_drop: 0.1}
limits:
  max_name_chars: 8
  max_value_chars: 5
"""


def test_low_limits_cut_only_what_traces_hold(tmp_path: Path) -> None:
    """A suite's max_name_chars and max_value_chars cut the names and values the traces
    hold, never agent-eval's own words (count and metric names, rule ids, statuses,
    criterion kinds, fingerprints, its version), the suite's ids or the files' paths:
    cut at 8 characters, the counts lost their keys (a results.json off its schema that
    report, merge and a baseline refused, and a console saying 'in 0 traces') and a
    criterion kind was unknown: an internal error, with no results written."""
    from agent_eval._cli import main

    folder = tmp_path / "suites" / "customer-service"
    (tmp_path / ".git").mkdir()
    (folder / "traces").mkdir(parents=True)
    (folder / "agent-eval.yaml").write_text(LOW)
    (folder / "traces" / "t.jsonl").write_text(
        json.dumps({"type": "trace_start", "trace_id": "trace-number-one",
                    "scenario": "refund"}) + "\n" + line("admin_x"))
    out = tmp_path / "out"
    code = main(["run", "--config", str(folder / "agent-eval.yaml"), "-o", str(out), "-q",
                 "--no-timings"])
    assert code == 1  # the blocked call
    res = Results.load(str(out / "results.json"))  # the schema's: counts with their keys
    assert res.counts["traces"] == 1 and res.counts["tool_calls"] == 1
    assert res.config == "suites/customer-service/agent-eval.yaml"
    assert res.tool_version == __version__
    assert [(t.id, t.status) for t in res.tests] == [("block_admin_tools", "fail")]
    [v] = res.violations
    assert (v.rule, v.test, v.severity) == ("tool_blocklist", "block_admin_tools", "error")
    assert len(v.fingerprint) == 32
    assert v.config.file == "suites/customer-service/agent-eval.yaml"
    # what the trace holds is cut: its id (at read), the finding's message
    assert v.trace is not None and v.trace.trace_id == "trace-nu…[+8 chars]"
    assert (v.trace.file, v.trace.line) == ("suites/customer-service/traces/t.jsonl", 2)
    assert v.tool == "admin_x"
    # "Blocked tool called: admin_x (blocklist includes 'admin_*'); calls found: 1"
    assert v.message == "Block…[+70 chars]"
    [sc] = res.scenarios
    assert (sc.id, sc.category, sc.status) == ("refund", "happy_path", "pass")
    assert [(c.kind, c.name) for c in res.criteria] == [
        ("blocking", "min_pass_rate"), ("regression", "max_pass_rate_drop")]
    assert "pass_rate" in res.metrics and "pass_rate.happy_path" in res.metrics
    assert main(["report", str(out / "results.json"), "-o", str(tmp_path / "r.md"),
                 "-f", "markdown"]) == 0


def test_low_limits_keep_a_scenario_id_in_its_findings(tmp_path: Path) -> None:
    """A scenario finding names the suite's scenario id, which a suite's low
    max_name_chars does not cut (as the scenario's own id in the results): it was cut,
    so the findings of scenario refund_flow named 'refund_f…[+3 chars]'."""
    from agent_eval._cli import main

    (tmp_path / ".git").mkdir()
    (tmp_path / "traces").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\ntraces: traces/*\nscenarios:\n  - id: refund_flow\n'
        "    expect: {output: {not_contains: [secret]}}\nlimits:\n  max_name_chars: 8\n")
    # the trace is the scenario's by its file's name: no scenario name read from it
    (tmp_path / "traces" / "refund_flow.jsonl").write_text(
        json.dumps({"type": "output", "text": "the secret is 42"}) + "\n")
    out = tmp_path / "out"
    assert main(["run", "--config", str(tmp_path / "agent-eval.yaml"), "-o", str(out),
                 "-q", "--no-timings"]) == 1
    [sc] = Results.load(str(out / "results.json")).scenarios
    assert (sc.id, sc.status) == ("refund_flow", "fail")
    assert [(f.rule, f.scenario) for f in sc.findings] == [
        ("scenario/output", "refund_flow")]


@pytest.mark.parametrize(("limits", "expected"), [
    ("  max_depth: 500", "agent-eval.yaml:9:3: limits.max_depth: Input should be less than "
                         "or equal to 200 (got 500)"),
    ("  max_file_bytes: 0", "agent-eval.yaml:9:3: limits.max_file_bytes: Input should be "
                            "greater than or equal to 1 (got 0)"),
    ("  max_deph: 5", "agent-eval.yaml:9:3: unknown key 'max_deph' (did you mean "
                      "'max_depth'?)"),
])
def test_limits_are_validated_at_their_line(tmp_path: Path, limits: str, expected: str) -> None:
    with pytest.raises(ConfigError) as exc:
        run(tmp_path, limits, {})
    assert exc.value.problems[0].startswith(expected), exc.value.problems


class Failing:
    """A reader that yields one trace and then fails as a bug would."""

    name = "failing"

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return True

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        yield from NATIVE.read(source)
        raise self.exc


@pytest.mark.parametrize(("exc", "rule", "words"), [
    (TypeError("boom \x1b[2J"), "input/reader_error",
     "the failing reader stopped on this file: TypeError: boom \\x1b[2J"),
    (RecursionError(), "input/limit_exceeded", "nests values too deeply"),
    (MemoryError(), "input/limit_exceeded", "more memory than there is"),
])
def test_a_reader_failure_is_an_input_error_for_that_file(
        tmp_path: Path, exc: BaseException, rule: str, words: str) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(line())
    items = list(read_file(Failing(exc), SourceFile(str(path), "a.jsonl", "a.jsonl")))
    assert [type(i).__name__ for i in items] == ["Trace", "InputError"]
    error = items[1]
    assert isinstance(error, InputError) and error.rule == rule and words in error.message


def test_the_files_after_a_failed_one_are_read(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    real = NATIVE.read

    def read(source: SourceFile) -> Iterator[ReadItem]:
        if source.file == "a.jsonl":
            raise KeyError("x")
        return real(source)

    monkeypatch.setattr(NATIVE, "read", read)
    sources = []
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text(line())
        sources.append(SourceFile(str(tmp_path / name), name, name))
    items = list(read_sources(sources, "native"))
    assert [(type(i).__name__, getattr(i, "rule", None)) for i in items
            if isinstance(i, InputError | Trace)] == [
        ("InputError", "input/reader_error"), ("Trace", None)]


# ------------------------------------------------------ max_input_errors (per file)
def test_max_input_errors_lists_the_first_and_counts_the_others(tmp_path: Path) -> None:
    bad = "x\n"
    invalid = json.dumps({"type": "tool_call"}) + "\n"  # no tool: input/invalid_event
    res = run(tmp_path, "  max_input_errors: 2",
              {"t.jsonl": line() + bad * 3 + invalid * 4 + line() + bad,
               "u.jsonl": bad + line()})
    assert errors(res) == [("input/parse_error", "traces/t.jsonl", 2),
                           ("input/parse_error", "traces/t.jsonl", 3),
                           ("input/limit_exceeded", "traces/t.jsonl", 4),
                           ("input/parse_error", "traces/u.jsonl", 1)]  # its own bound
    assert res.input_errors[2].message == (
        "6 more input error(s) on lines 4-10 are counted, not listed (4 input/invalid_event, "
        "2 input/parse_error): only the first 2 found in this file are listed "
        "(limits.max_input_errors); fix those, or raise the limit to list more")
    assert type(res.input_errors[2]) is InputError  # the results hold plain errors
    assert res.counts["input_errors"] == 4
    assert res.counts["tool_calls"] == 3  # the lines after the bound were still read


def test_a_flood_of_bad_lines_is_held_in_bounded_memory(tmp_path: Path) -> None:
    """The regression: every input error was kept, so 1,000,000 bad lines (a 2 MB file)
    took 858 MB, and 3 GB and a MemoryError with every output format."""
    import tracemalloc

    tracemalloc.start()
    try:
        res = run(tmp_path, "  max_depth: 100", {"bad.jsonl": line() + "x\n" * 30_000})
        held, _ = tracemalloc.get_traced_memory()  # (the peak is a read's 64 MiB buffer)
    finally:
        tracemalloc.stop()
    assert len(res.input_errors) == 1001 and res.counts["tool_calls"] == 1
    assert errors(res)[-1] == ("input/limit_exceeded", "traces/bad.jsonl", 1002)
    assert res.input_errors[-1].message.startswith(
        "29,000 more input error(s) on lines 1002-30001 are counted, not listed "
        "(29,000 input/parse_error): only the first 1,000 found in this file are listed")
    assert held < 2_000_000, held  # the 30,000 errors all kept: 8 MB


def test_the_bound_counts_what_a_part_counted() -> None:
    """A part of a file read apart (--jobs) counts its errors beyond the bound in one
    MoreInputErrors: bounded again with the other parts', in read order, they are what
    the whole file gives."""
    from agent_eval.errors import MoreInputErrors
    from agent_eval.readers import ErrorBound

    def err(n: int, rule: str = "input/parse_error") -> InputError:
        return InputError(rule, "f", n, "bad")

    whole, first, second = ErrorBound("f", 2), ErrorBound("f", 2), ErrorBound("f", 2)
    kept_whole = [e for e in map(err, range(1, 9)) if whole.keep(e)]
    kept_first = [e for e in map(err, range(1, 5)) if first.keep(e)]
    kept_second = [e for e in map(err, range(5, 9)) if second.keep(e)]
    parts = [*kept_first, first.more(), *kept_second, second.more()]
    again = ErrorBound("f", 2)
    assert [e for e in parts if e is not None and again.keep(e)] == kept_whole
    assert again.more() == whole.more()
    more = whole.more()
    assert isinstance(more, MoreInputErrors)
    assert (more.line, more.rules, more.first, more.last) == (
        3, (("input/parse_error", 6),), 3, 8)
    assert ErrorBound("f", 2).more() is None  # nothing counted: nothing said


DEEP_SUITE = """\
version: "1"
suite: s
traces: traces/*.jsonl
limits: {max_depth: %d}
tests:
  - id: args
    metric: args_valid
    policy: p.yaml
  - id: results
    metric: tool_results
    calls:
      - tool: x
        expect_result:
          json_schema:
            type: object
            properties: {p: {$ref: "#/$defs/n"}}
            $defs:
              n: {anyOf: [{type: integer}, {type: array, items: {$ref: "#/$defs/n"}}]}
scenarios:
  - id: S
    expect:
      output:
        json_schema:
          $ref: "#/$defs/n"
          $defs:
            n: {anyOf: [{type: integer}, {type: array, items: {$ref: "#/$defs/n"}}]}
"""
# a recursive policy: each level of the value is a $ref, an anyOf and an items
DEEP_POLICY = """\
$defs: {n: {anyOf: [{type: integer}, {type: array, items: {$ref: '#/$defs/n'}}]}}
tools: {x: {arguments: {a: {$ref: '#/$defs/n'}}}}
"""


def test_values_as_deep_as_the_ceiling_are_checked_in_every_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A value as deep as the highest max_depth allows is checked by a recursive policy, a
    tool_results schema and a scenario's output schema, and every output is written: the
    generated schema tests take about ten frames a level, and Python's default limit of
    1,000 frames made a value 100 deep an internal error with no output at all."""
    from agent_eval._cli import main
    from agent_eval.limits import DEPTH_CEILING

    (tmp_path / ".git").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(DEEP_SUITE % DEPTH_CEILING)
    (tmp_path / "p.yaml").write_text(DEEP_POLICY)
    (tmp_path / "traces").mkdir()
    # the line's own object and "arguments" take two levels: a value 2 less deep is the
    # deepest a line within max_depth holds (one level more is refused, below); its
    # innermost item, "s", breaks each schema
    deep = nested(DEPTH_CEILING - 2)
    deep_s: Any = "s"
    for _ in range(DEPTH_CEILING - 2):
        deep_s = [deep_s]
    lines = [{"type": "trace_start", "trace_id": "t", "scenario": "S"},
             {"type": "tool_call", "tool": "x", "arguments": {"a": deep_s},
              "result": {"p": deep_s}},
             {"type": "tool_call", "tool": "x", "arguments": {"a": deep}, "result": {"p": deep}},
             {"type": "output", "output": json.dumps(deep_s)},
             {"type": "trace_end"}]
    (tmp_path / "traces" / "t.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "out"
    code = main(["run", "--config", str(tmp_path / "agent-eval.yaml"), "--output", str(out),
                 "--format", "json,sarif,junit,markdown,html", "--jobs", "1"])
    err = capsys.readouterr().err
    assert "internal error" not in err and code == 1, err[-2000:]
    results = json.loads((out / "results.json").read_text())
    assert results["input_errors"] == []
    found = [(v["rule"], v["trace"]["line"]) for t in results["tests"] for v in t["violations"]]
    # the first call breaks both (its "s" is no integer), the second breaks neither
    assert found == [("args_valid/any_of", 2), ("tool_results/result", 2)]
    (scenario,) = results["scenarios"]
    assert [f["rule"] for f in scenario["findings"]] == ["scenario/output"]
    assert sorted(p.name for p in out.iterdir()) == [
        "junit.xml", "report.html", "results.json", "results.sarif", "summary.md"]
    # one level deeper is over the limit: the lines above are the deepest it allows
    (tmp_path / "traces" / "t.jsonl").write_text(json.dumps(
        {"type": "tool_call", "tool": "x", "arguments": {"a": [deep]}}) + "\n")
    assert main(["run", "--config", str(tmp_path / "agent-eval.yaml"), "--output", str(out),
                 "--format", "json", "--jobs", "1"]) == 2
    over = json.loads((out / "results.json").read_text())["input_errors"]
    assert "input/limit_exceeded" in {e["rule"] for e in over}
