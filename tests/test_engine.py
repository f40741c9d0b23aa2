"""The engine: verdict rules, test status, zero-trace input, jobs == one process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_eval.api import evaluate, load_suite, load_traces, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.results import Results
from agent_eval.suite import Suite

# three tests that differ only in severity: calling err_* is an error, warn_* a
# warning, note_* a note
SUITE = """\
suite: engine
traces: traces/*.jsonl
tests:
  - id: errors
    metric: tool_blocklist
    blocklist: err_*
  - id: warnings
    metric: tool_blocklist
    blocklist: warn_*
    severity: warning
  - id: notes
    metric: tool_blocklist
    blocklist: note_*
    severity: note
"""


def ev(tool: str) -> str:
    return json.dumps({"type": "tool_call", "tool": tool, "arguments": {}}) + "\n"


def corpus(root: Path, files: dict[str, str], suite: str = SUITE) -> Suite:
    (root / ".git").mkdir(exist_ok=True)
    (root / "traces").mkdir(exist_ok=True)
    (root / "agent-eval.yaml").write_text(suite)
    for name, text in files.items():
        (root / "traces" / name).write_text(text)
    return load_suite(root / "agent-eval.yaml")


def run_files(suite: Suite, jobs: int = 1) -> Results:
    files, errors = suite_sources(suite)
    return evaluate_files(suite, files, errors, jobs=jobs, timings=False)


# a blocklist none of whose entries was called checked nothing: not_exercised
@pytest.mark.parametrize(("tools", "verdict", "statuses"), [
    (["ok"], "pass", ["not_exercised", "not_exercised", "not_exercised"]),
    (["note_a"], "pass", ["not_exercised", "not_exercised", "pass"]),  # notes never fail
    (["note_a", "warn_a"], "warn", ["not_exercised", "warn", "pass"]),
    (["warn_a", "err_a"], "fail", ["fail", "warn", "not_exercised"]),
    (["err_a", "warn_b", "note_c"], "fail", ["fail", "warn", "pass"]),
])
def test_verdict_rules(tmp_path: Path, tools: list[str], verdict: str,
                       statuses: list[str]) -> None:
    suite = corpus(tmp_path, {"t.jsonl": "".join(ev(t) for t in tools)})
    res = run_files(suite)
    assert res.verdict == verdict
    assert [t.status for t in res.tests] == statuses
    assert res.counts["violations"] == sum(not t.startswith("ok") for t in tools)


def test_error_beats_fail(tmp_path: Path) -> None:
    suite = corpus(tmp_path, {"a.jsonl": ev("err_a") + ev("warn_a"),
                              "b.jsonl": ev("ok") + "{broken\n"})
    res = run_files(suite)
    assert res.verdict == "error"
    assert [(e.rule, e.file, e.line) for e in res.input_errors] == [
        ("input/parse_error", "traces/b.jsonl", 2)]
    # the findings of the readable file are still there
    assert sorted(v.tool or "" for v in res.violations) == ["err_a", "warn_a"]


def test_severity_is_copied_onto_findings(tmp_path: Path) -> None:
    suite = corpus(tmp_path, {"t.jsonl": ev("err_a") + ev("warn_a") + ev("note_a")})
    res = run_files(suite)
    assert {(v.tool, v.severity) for v in res.violations} == {
        ("err_a", "error"), ("warn_a", "warning"), ("note_a", "note")}


def test_a_file_with_zero_traces_is_no_traces(tmp_path: Path) -> None:
    suite = corpus(tmp_path, {"empty.jsonl": ""})
    res = run_files(suite)
    assert res.verdict == "error"
    assert "input/no_traces" in {e.rule for e in res.input_errors}
    assert all(t.status == "error" for t in res.tests)


def test_an_empty_file_beside_good_ones_is_still_an_error(tmp_path: Path) -> None:
    suite = corpus(tmp_path, {"empty.jsonl": "", "good.jsonl": ev("ok")})
    res = run_files(suite)
    assert res.verdict == "error"
    assert [e.file for e in res.input_errors] == ["traces/empty.jsonl"]


def test_an_empty_file_under_format_native_is_no_traces(tmp_path: Path) -> None:
    suite = corpus(tmp_path, {"empty.jsonl": "\n", "good.jsonl": ev("ok")},
                   suite=SUITE + "format: native\n")
    res = run_files(suite)
    assert res.verdict == "error"
    assert [(e.rule, e.file) for e in res.input_errors] == [("input/no_traces",
                                                              "traces/empty.jsonl")]


def test_jobs_give_the_same_results(tmp_path: Path) -> None:
    files = {f"f{i:02d}.jsonl": "".join(ev(t) for t in ("ok", "err_x", "warn_y")[: i % 4])
             + ev(f"note_{i}") for i in range(12)}
    files["f05.jsonl"] += "not json\n"
    suite = corpus(tmp_path, files)
    one = run_files(suite, jobs=1).to_dict()
    two = run_files(suite, jobs=3).to_dict()
    assert one == two
    assert one["counts"]["traces"] == 12
    # i % 4 == 2 or 3 -> err_x: i in 2, 3, 6, 7, 10, 11; i % 4 == 3 -> warn_y: 3, 7, 11
    errs = [v["trace"]["file"] for t in one["tests"] for v in t["violations"]
            if v["tool"] == "err_x"]
    assert errs == [f"traces/f{i:02d}.jsonl" for i in (2, 3, 6, 7, 10, 11)]
    assert one["counts"]["violations"] == 6 + 3 + 12
    assert [(e["rule"], e["file"], e["line"]) for e in one["input_errors"]] == [
        ("input/parse_error", "traces/f05.jsonl", 3)]


def test_violations_are_in_trace_order(tmp_path: Path) -> None:
    suite = corpus(tmp_path, {"b.jsonl": ev("err_b"), "a.jsonl": ev("ok") + ev("err_a2")
                              + ev("err_a3")})
    # evaluated in the opposite order of the files: the results are sorted anyway
    b_first = [*load_traces([tmp_path / "traces" / "b.jsonl"], suite),
               *load_traces([tmp_path / "traces" / "a.jsonl"], suite)]
    res = evaluate(suite, b_first)
    where = [(v.trace.file, v.trace.line) for v in res.violations if v.trace is not None]
    assert where == [("traces/a.jsonl", 2), ("traces/a.jsonl", 3), ("traces/b.jsonl", 1)]
