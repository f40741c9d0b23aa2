"""The results object: JSON shape (docs/results.md), round trip, exit codes, fingerprints."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_eval.api import evaluate, load_suite, load_traces
from agent_eval.findings import ConfigRef, Finding, TraceRef
from agent_eval.limits import DEFAULT, Limits
from agent_eval.renderers import json as json_renderer
from agent_eval.results import Results, clean_finding, exit_code
from agent_eval.safetext import clean_name, clean_strings, clean_text, clean_value

SUITE = """\
suite: shop
traces: traces/*.jsonl
tests:
  - id: args
    metric: args_valid
    policy: policies/p.yaml
  - id: order
    metric: sequence_valid
    rules:
      - type: before
        first: login
        then: pay
"""
POLICY = """\
tools:
  apply_discount:
    arguments:
      percent: {type: number, max: 30}
      code: {type: string, pattern: "^[A-Z]+$"}
  refund:
    arguments:
      percent: {type: number, max: 30}
"""


def ev(tool: str, **fields: Any) -> str:
    return json.dumps({"type": "tool_call", "tool": tool, **fields}) + "\n"


def start(tid: str) -> str:
    return json.dumps({"type": "trace_start", "trace_id": tid}) + "\n"


def end(tid: str) -> str:
    return json.dumps({"type": "trace_end", "trace_id": tid}) + "\n"


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(path)], check=True, capture_output=True)
    else:  # what makes a folder a repository root for agent-eval
        (path / ".git").mkdir()
    return path


def setup(root: Path, policy: str = POLICY, traces: dict[str, str] | None = None,
          suite: str = SUITE) -> Path:
    """A repository with the suite in ``evals/``; returns the suite path."""
    git_repo(root)
    evals = root / "evals"
    (evals / "policies").mkdir(parents=True, exist_ok=True)
    (evals / "traces").mkdir(exist_ok=True)
    (evals / "agent-eval.yaml").write_text(suite)
    (evals / "policies" / "p.yaml").write_text(policy)
    for old in (evals / "traces").iterdir():
        old.unlink()
    for name, text in (traces or {}).items():
        (evals / "traces" / name).write_text(text)
    return evals / "agent-eval.yaml"


def run(root: Path, policy: str = POLICY, traces: dict[str, str] | None = None,
        suite: str = SUITE) -> Results:
    path = setup(root, policy, traces, suite)
    s = load_suite(path)
    return evaluate(s, load_traces(sorted((path.parent / "traces").glob("*.jsonl")), s))


# ----------------------------------------------------------------------- shape
def test_results_json_shape(tmp_path: Path) -> None:
    traces = {
        "a.jsonl": start("t1") + ev("apply_discount", arguments={"percent": 50})
        + ev("pay", arguments={}) + end("t1"),
        "b.jsonl": ev("login", arguments={}) + "oops\n",
    }
    res = run(tmp_path, traces=traces)
    d = json.loads(json_renderer.render(res))
    assert d == res.to_dict()
    assert d["schema_version"] == "1"
    assert d["tool"]["name"] == "agent-eval" and d["tool"]["version"]
    assert d["suite"] == "shop"
    assert d["verdict"] == "error"  # b.jsonl line 2 is not JSON
    assert d["config"] == "evals/agent-eval.yaml"
    counts = d["counts"]
    assert (counts["traces"], counts["tool_calls"], counts["violations"],
            counts["input_errors"]) == (2, 3, 2, 1)
    assert [(t["id"], t["metric"], t["status"]) for t in d["tests"]] == [
        ("args", "args_valid", "fail"), ("order", "sequence_valid", "fail")]
    assert all(isinstance(t["duration_ms"], int) for t in d["tests"])
    (maximum,) = d["tests"][0]["violations"]
    assert {k: maximum[k] for k in ("rule", "severity", "tool", "argument", "value",
                                    "constraint")} == {
        "rule": "args_valid/maximum", "severity": "error", "tool": "apply_discount",
        "argument": "percent", "value": 50, "constraint": "max: 30"}
    assert "apply_discount" in maximum["message"] and "50" in maximum["message"]
    assert isinstance(maximum["fingerprint"], str) and len(maximum["fingerprint"]) >= 16
    # "      percent: {type: number, max: 30}": max at column 31 of line 4
    assert {k: maximum["config"][k] for k in ("file", "line", "column")} == {
        "file": "evals/policies/p.yaml", "line": 4, "column": 31}
    assert maximum["trace"] == {"file": "evals/traces/a.jsonl", "line": 2, "trace_id": "t1"}
    (before,) = d["tests"][1]["violations"]
    assert (before["rule"], before["tool"], before["argument"]) == (
        "sequence_valid/before", "pay", None)
    # the rule item "      - type: before" is line 10, its mapping starts at column 9
    assert {k: before["config"][k] for k in ("file", "line", "column")} == {
        "file": "evals/agent-eval.yaml", "line": 10, "column": 9}
    assert before["trace"] == {"file": "evals/traces/a.jsonl", "line": 3, "trace_id": "t1"}
    (err,) = d["input_errors"]
    assert {k: err[k] for k in ("file", "line")} == {"file": "evals/traces/b.jsonl", "line": 2}
    assert err["message"]
    assert d["baseline"] is None
    for key in ("scenarios", "metrics", "criteria"):
        assert key in d


def test_round_trip(tmp_path: Path) -> None:
    traces = {"a.jsonl": start("t1") + ev("apply_discount", arguments={"percent": 50,
                                                                        "code": "x1"})
              + ev("pay") + ev("apply_discount", arguments="not json") + end("t1")}
    suite = SUITE.replace("  - id: order", "  - id: blk\n    metric: tool_blocklist\n"
                          "    blocklist: pay\n    severity: warning\n  - id: order")
    res = run(tmp_path, traces=traces, suite=suite)
    d = res.to_dict()
    back = Results.from_dict(json.loads(json.dumps(d)))
    assert back.to_dict() == d
    assert back.verdict == res.verdict == "fail"
    assert [v.fingerprint for v in back.violations] == [v.fingerprint for v in res.violations]
    assert len(res.violations) == 5  # maximum, pattern, not_an_object, blocklist, before


# ------------------------------------------------------------------ exit codes
@pytest.mark.parametrize(("verdict", "fail_on", "code"), [
    ("pass", "fail", 0), ("pass", "warn", 0), ("pass", "never", 0),
    ("warn", "fail", 0), ("warn", "warn", 1), ("warn", "never", 0),
    ("fail", "fail", 1), ("fail", "warn", 1), ("fail", "never", 0),
    ("error", "fail", 2), ("error", "warn", 2),
    # never: 0 whenever the run completed (its verdict, even error, is in the results)
    ("error", "never", 0),
])
def test_exit_code_table(verdict: str, fail_on: str, code: int) -> None:
    assert exit_code(verdict, fail_on) == code


# ---------------------------------------------------------------- fingerprints
def fingerprints(res: Results) -> dict[tuple[str, str | None, str | None, str], str]:
    out: dict[tuple[str, str | None, str | None, str], str] = {}
    for v in res.violations:
        assert v.trace is not None
        key = (v.rule, v.tool, v.argument, v.trace.trace_id)
        assert key not in out
        out[key] = v.fingerprint
    return out


def only(res: Results) -> Finding:
    (v,) = res.violations
    return v


def test_fingerprint_stable_when_unrelated_lines_are_inserted(tmp_path: Path) -> None:
    trace = start("t1") + ev("apply_discount", arguments={"percent": 50}) + end("t1")
    a = only(run(tmp_path, traces={"t.jsonl": trace}))
    moved_policy = ("# the shop's policy\n\ntools:\n  send_email:\n    arguments:\n"
                    "      to: {type: string}\n" + POLICY.split("\n", 1)[1])
    moved_trace = (start("t1") + json.dumps({"type": "llm_call", "model": "m"}) + "\n"
                   + ev("send_email", arguments={"to": "a@b.c"})
                   + ev("apply_discount", arguments={"percent": 50}) + end("t1"))
    b = only(run(tmp_path, policy=moved_policy, traces={"t.jsonl": moved_trace}))
    assert a.trace is not None and b.trace is not None
    # the lines really moved: policy line 4 -> 9 (5 lines above it), trace line 2 -> 4
    assert (a.config.line, a.trace.line) == (4, 2)
    assert (b.config.line, b.trace.line) == (9, 4)
    assert a.fingerprint == b.fingerprint


def test_fingerprint_differs_by_argument_tool_and_trace(tmp_path: Path) -> None:
    traces = {
        "t.jsonl": start("t1") + ev("apply_discount", arguments={"percent": 50, "code": "x"})
        + ev("refund", arguments={"percent": 50}) + end("t1")
        + start("t2") + ev("apply_discount", arguments={"percent": 50}) + end("t2"),
    }
    fp = fingerprints(run(tmp_path, traces=traces))
    assert set(fp) == {
        ("args_valid/maximum", "apply_discount", "percent", "t1"),
        ("args_valid/pattern", "apply_discount", "code", "t1"),
        ("args_valid/maximum", "refund", "percent", "t1"),
        ("args_valid/maximum", "apply_discount", "percent", "t2"),
    }
    assert len(set(fp.values())) == 4


def test_identical_findings_get_distinct_fingerprints_in_trace_order(tmp_path: Path) -> None:
    one_call = start("t1") + ev("apply_discount", arguments={"percent": 50}) + end("t1")
    single = only(run(tmp_path, traces={"t.jsonl": one_call}))
    twice = (start("t1") + ev("apply_discount", arguments={"percent": 50})
             + ev("apply_discount", arguments={"percent": 60}) + end("t1"))
    res = run(tmp_path, traces={"t.jsonl": twice})
    first, second = res.violations
    assert first.trace is not None and second.trace is not None
    assert (first.trace.line, first.value) == (2, 50)
    assert (second.trace.line, second.value) == (3, 60)
    assert first.fingerprint == single.fingerprint  # the first occurrence keeps it
    assert second.fingerprint != first.fingerprint
    # the same two findings evaluated again: the same two fingerprints
    again = run(tmp_path, traces={"t.jsonl": twice})
    assert [v.fingerprint for v in again.violations] == [first.fingerprint, second.fingerprint]


def test_paths_are_repo_relative_with_forward_slashes(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    trace = start("t1") + ev("pay") + end("t1")
    res = run(root, traces={"t.jsonl": trace})
    d = res.to_dict()
    assert d["config"] == "evals/agent-eval.yaml"
    (v,) = d["tests"][1]["violations"]
    assert v["config"]["file"] == "evals/agent-eval.yaml"
    assert v["trace"]["file"] == "evals/traces/t.jsonl"
    assert "\\" not in json.dumps(d)


def test_paths_without_a_repository_are_config_relative(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    (plain / "traces").mkdir(parents=True)
    (plain / "policies").mkdir()
    (plain / "agent-eval.yaml").write_text(SUITE)
    (plain / "policies" / "p.yaml").write_text(POLICY)
    (plain / "traces" / "t.jsonl").write_text(ev("apply_discount", arguments={"percent": 31}))
    if any((p / ".git").exists() for p in plain.parents):
        pytest.skip("the temporary folder is inside a git repository")
    s = load_suite(plain / "agent-eval.yaml")
    res = evaluate(s, load_traces([plain / "traces" / "t.jsonl"], s))
    v = only(res)
    assert res.config == "agent-eval.yaml"
    assert v.config.file == "policies/p.yaml"
    assert v.trace is not None and v.trace.file == "traces/t.jsonl"


# ------------------------------------------------------------------ clean_finding
def _cleaned_field_by_field(v: Finding, limits: Limits) -> Finding:
    """What clean_finding must give: every field through its safetext function (its fast
    path, which leaves most fields untouched, must not change a byte of that)."""
    name, size = limits.max_name_chars, limits.max_value_chars
    return Finding(
        v.rule, v.severity, clean_text(v.message, size), v.test, v.config,
        v.trace, None if v.tool is None else clean_name(v.tool, name),
        None if v.argument is None else clean_name(v.argument, name),
        clean_value(v.value, limits),
        None if v.constraint is None else clean_text(v.constraint, size),
        # a scenario id is the suite's: cut at no fewer characters than the default
        None if v.scenario is None else clean_name(v.scenario, max(name, DEFAULT.max_name_chars)),
        v.related,
        clean_strings(v.details, size) if v.details else v.details)


TEXTS = st.sampled_from(["plain", "a\nb", "tab\there", "bell\x07", "\x1b[31mred", "é ü",
                         "nbsp\xa0", "x" * 12, "y" * 40, "esc\x1b" * 9])
DETAIL_VALUES = TEXTS | st.none() | st.integers() | st.booleans() | st.floats(
    allow_nan=False) | st.lists(TEXTS, max_size=2) | st.dictionaries(TEXTS, TEXTS, max_size=2)


@settings(max_examples=300, deadline=None)
@given(message=TEXTS, tool=st.none() | TEXTS, argument=st.none() | TEXTS,
       value=DETAIL_VALUES, constraint=st.none() | TEXTS, scenario=st.none() | TEXTS,
       details=st.dictionaries(TEXTS | st.integers(0, 3), DETAIL_VALUES, max_size=3))
def test_clean_finding_is_each_field_cleaned(message: str, tool: str | None,
                                             argument: str | None, value: Any,
                                             constraint: str | None, scenario: str | None,
                                             details: dict[Any, Any]) -> None:
    limits = Limits(max_name_chars=10, max_value_chars=30)  # so the cuts are reached
    finding = Finding("r", "error", message, "t", ConfigRef("p.yaml", 1, 1, "k"),
                      TraceRef("t.jsonl", 2, "id"), tool, argument, value, constraint,
                      scenario, (), details)
    expected = _cleaned_field_by_field(finding, limits)
    clean_finding(finding, limits)
    assert finding == expected


# ------------------------------------------------- the schema's arrays, checked fast
_FINDING: dict[str, Any] = {
    "rule": "args_valid/maximum", "severity": "error", "message": "percent = 50: too big",
    "test": "args", "tool": "apply_discount", "argument": "percent", "value": 50,
    "constraint": "max: 30", "fingerprint": "0123456789abcdef0123456789abcdef",
    "config": {"file": "p.yaml", "line": 4, "column": 7, "key_path": "tools.x.max"},
    "trace": {"file": "t.jsonl", "line": 3, "trace_id": "t1"}, "scenario": None,
    "related": [{"file": "t.jsonl", "line": 0, "trace_id": "t1"}],
    "details": {"violation": "Value exceeds maximum"}}
_TRACE: dict[str, Any] = {"id": "t1", "file": "t.jsonl", "line": 1, "scenario": "S",
                          "tool_calls": 3, "failed_tests": ["args"]}
# values of every JSON type, and the near misses of each field's own type
_VALUES = st.sampled_from([None, True, False, 0, 1, -1, 1.0, 2.5, -0.0, 0.0, "", "x",
                           "args_valid", "a/b/c", "A/b", "error", "warn", "note\n",
                           "0123456789abcdef0123456789abcdef",
                           "0123456789abcdef0123456789abcdef\n",
                           "0123456789ABCDEF0123456789ABCDEF", [], ["x"], [1], {},
                           {"file": "f", "line": 1, "trace_id": "t"},
                           {"file": "f", "line": -1, "trace_id": "t"},
                           {"file": "f", "line": 1, "column": 1, "key_path": "k"},
                           {"file": "f", "line": 0, "column": 1, "key_path": "k"},
                           [{"file": "f", "line": 2, "trace_id": "t"}],
                           [{"file": "f", "line": 2}]])


def _value(draw: Any) -> Any:
    """One of _VALUES, as a copy: a drawn dict or list is put into the document and may
    be changed by a later step, which must not change the strategy's own values (that made
    the data generation differ from run to run: hypothesis's FlakyStrategyDefinition)."""
    return copy.deepcopy(draw(_VALUES))


def _mutated(base: dict[str, Any], draw: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(0, 3))):
        where = doc
        path = draw(st.sampled_from(sorted(doc)))
        if isinstance(doc.get(path), dict) and doc[path] and draw(st.booleans()):
            where, path = doc[path], draw(st.sampled_from(sorted(doc[path])))
        action = draw(st.sampled_from(["set", "set", "drop", "add"]))
        if action == "set":
            where[path] = _value(draw)
        elif action == "drop":
            where.pop(path, None)
        else:
            where[draw(st.sampled_from(["extra", "related", "details", "column"]))] = _value(
                draw)
    return doc


@settings(max_examples=3000, deadline=None)
@given(data=st.data())
def test_the_fast_checks_of_findings_and_traces_agree_with_the_schema(data: Any) -> None:
    """finding_ok and trace_ok say what jsonschema says of the results JSON Schema's
    "violation" and "trace", on items made from valid ones by a few changes each."""
    import jsonschema  # type: ignore[import-untyped]

    from agent_eval.results import finding_ok, results_schema, trace_ok

    schema = results_schema()
    for name, check, base in (("violation", finding_ok, _FINDING), ("trace", trace_ok, _TRACE)):
        item = _mutated(base, data.draw)
        ref = {"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]}
        expected = jsonschema.Draft202012Validator(ref).is_valid(item)
        assert check(item) is expected, (name, item)


def test_a_results_file_is_checked_fast_and_as_jsonschema_checks_it(tmp_path: Path) -> None:
    """Its findings and trace summaries are checked by the fast checks, the rest by
    jsonschema; a document with a bad item gets jsonschema's own message for it."""
    import jsonschema

    from agent_eval.results import results_schema, schema_problems

    traces = {"a.jsonl": start("t1") + ev("apply_discount", arguments={"percent": 50})
              + ev("pay", arguments={}) + end("t1")}
    doc = json.loads(json_renderer.render(run(tmp_path, traces=traces)))
    assert doc["tests"][0]["violations"] and doc["traces"]
    full = jsonschema.Draft202012Validator(results_schema())
    assert schema_problems(doc) == [] and full.is_valid(doc)
    for change, where in (
            (lambda d: d["tests"][0]["violations"][0].update(fingerprint="x"),
             "at tests[0].violations[0].fingerprint: 'x' does not match"),
            (lambda d: d["traces"][0].update(line=-1),
             "at traces[0].line: -1 is less than the minimum of 0"),
            (lambda d: d["tests"][0].update(violations={}),
             "at tests[0].violations: {} is not of type 'array'"),
            (lambda d: d.update(traces=None), "at traces: None is not of type 'array'"),
            (lambda d: d["tests"][0].update(status=None), "at tests[0].status: None is not")):
        bad = json.loads(json.dumps(doc))
        change(bad)  # type: ignore[no-untyped-call]
        problems = schema_problems(bad)
        assert problems and problems[0].startswith(where), problems
        assert not full.is_valid(bad)


def test_a_large_results_file_with_one_bad_item_is_not_checked_whole_by_jsonschema(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """jsonschema checked the whole document when one finding or trace summary was bad:
    a 168 MB baseline of 300,000 findings, the last one bad, took 252 s to be refused.
    It is given the rest and the bad items only, and the problem is named at its place
    in the file."""
    from agent_eval import results as module

    traces = {"a.jsonl": start("t1") + ev("apply_discount", arguments={"percent": 50})
              + end("t1")}
    doc = json.loads(json_renderer.render(run(tmp_path, traces=traces)))
    finding, trace = doc["tests"][0]["violations"][0], doc["traces"][0]
    real = module._validator()
    given: list[tuple[int, int]] = []  # (findings, trace summaries) jsonschema was given

    class Spy:
        def iter_errors(self, d: Any) -> Any:
            given.append((sum(len(t["violations"]) for t in d["tests"]), len(d["traces"])))
            return real.iter_errors(d)

    monkeypatch.setattr(module, "_validator", Spy)
    many = json.loads(json.dumps(doc))
    many["tests"][0]["violations"] = [finding] * 2000 + [dict(finding, fingerprint="x")]
    many["traces"] = [trace] * 2000 + [dict(trace, line=-1)]
    problems = module.schema_problems(many)
    assert sorted(p.split(":")[0] for p in problems) == [
        "at tests[0].violations[2000].fingerprint", "at traces[2000].line"], problems
    assert "at traces[2000].line: -1 is less than the minimum of 0" in problems
    assert given == [(1, 1)]


# ------------------------------------------------------------ claims a file cannot make
def _example_doc() -> dict[str, Any]:
    from tests.conftest import example_results

    doc: dict[str, Any] = json.loads(json_renderer.render(example_results()))
    return doc


def _edited(doc: dict[str, Any]) -> str:
    from agent_eval.errors import ResultsFileError

    with pytest.raises(ResultsFileError) as info:
        Results.parse(json.dumps(doc).encode(), "r.json")
    return str(info.value)


def test_a_results_file_whose_verdict_its_content_contradicts_is_refused() -> None:
    """A results file (a fork's artifact, a baseline) was taken at its word: with its
    verdict written "pass" over its error findings, `report` showed "✅ pass"; with the
    tests' statuses written "pass" too, a merge counted them so. Each is refused now (by
    hand: the bundled example fails, its `args` test holds error-severity findings)."""
    doc = _example_doc()
    assert Results.parse(json.dumps(doc).encode(), "r.json").verdict == "fail"  # as written
    assert doc["verdict"] == "fail"
    doc["verdict"] = "pass"
    assert _edited(doc) == ("r.json is not a results file agent-eval wrote: its verdict says "
                            "'pass' but its content makes it 'fail'; it was edited (or made "
                            "by another program): run agent-eval again for results to read")
    failing = next(t for t in doc["tests"] if t["status"] == "fail")
    assert any(v["severity"] == "error" for v in failing["violations"])
    for t in doc["tests"]:
        t["status"] = "pass"
    assert f"test '{failing['id']}' says 'pass' but holds findings that make it 'fail'" in \
        _edited(doc)
    # worse than its content is not a lie that passes anything: kept as written
    doc = _example_doc()
    doc["verdict"] = "error"
    assert Results.parse(json.dumps(doc).encode(), "r.json").verdict == "error"


@pytest.mark.parametrize("path", ["../../evil/x.yaml", "/etc/passwd", "a/../../x.yaml"])
def test_a_results_file_locating_a_policy_outside_the_repository_is_refused(
        path: str) -> None:
    """Every config file of a run is inside the repository: a finding located at
    ``../../evil/x.yaml`` was linked and located there by `report` (SARIF's
    ``%SRCROOT%/../../evil/x.yaml``, an absolute one an invalid SARIF file)."""
    doc = _example_doc()
    doc["tests"][0]["violations"][0]["config"]["file"] = path
    assert f"is located at {path!r}, not a path inside the repository" in _edited(doc)
    doc = _example_doc()
    doc["config"] = path
    assert f"its suite file {path!r} is not a path inside the repository" in _edited(doc)


def test_a_results_file_with_a_missed_criterion_of_no_location_is_refused() -> None:
    """A missed criterion is shown by its finding, located at its key: one of no location
    (``config.file`` "", which the schema lets through) had none, so `report -f junit`
    wrote 0 failures and `-f sarif` no result for a run whose verdict was 'fail'. Every
    criterion agent-eval writes has its key's location: such a file is refused."""
    doc = _example_doc()
    missed = next(c for c in doc["criteria"] if c["status"] == "fail")
    missed["config"]["file"] = ""
    assert (f"criterion {missed['name']!r} says 'fail' but names no location in the suite"
            in _edited(doc))
    passed = next(c for c in _example_doc()["criteria"] if c["status"] == "pass")
    doc = _example_doc()
    next(c for c in doc["criteria"] if c["name"] == passed["name"])["config"]["file"] = ""
    assert Results.parse(json.dumps(doc).encode(), "r.json").verdict == "fail"  # shows none


def test_a_results_file_with_a_failed_test_of_no_error_finding_is_refused() -> None:
    """A rule test's status is its worst finding's: one that says 'fail' with no
    error finding (its violations emptied, the verdict left 'fail') was rendered by
    `report -f junit` with 0 failures and by `-f sarif` with no result. Such a file is
    refused, as a missed criterion of no location is."""
    doc = _example_doc()
    failed = next(t for t in doc["tests"] if t["status"] == "fail")
    failed["violations"] = []
    assert (f"test {failed['id']!r} says 'fail' but holds no finding that makes it so (its "
            "worst is 'pass'): no output could show it") in _edited(doc)
    doc = _example_doc()
    failed = next(t for t in doc["tests"] if t["status"] == "fail")
    for v in failed["violations"]:
        v["severity"] = "warning"  # the test's findings now make it 'warn'
    assert (f"test {failed['id']!r} says 'fail' but holds no finding that makes it so (its "
            "worst is 'warn')") in _edited(doc)


def test_a_contradicted_claim_in_an_earlier_versions_file_does_not_say_it_was_edited() -> None:
    """A results file of another agent-eval version may have had its verdict worked out
    otherwise (a live-only run's, before LiveOutcome.apply took verdict_of): the refusal
    said "it was edited (or made by another program)" of the base branch's own artifact.
    It names the version the file says wrote it, and this one."""
    from agent_eval._version import __version__

    doc = _example_doc()
    doc["verdict"] = "pass"
    doc["tool"]["version"] = "0.0.1"
    message = _edited(doc)
    assert message == (f"r.json is not a results file agent-eval {__version__} would write: "
                       "its verdict says 'pass' but its content makes it 'fail'; it was "
                       "edited, made by another program, or written by agent-eval '0.0.1', "
                       "which may work a verdict out otherwise: run agent-eval "
                       f"{__version__} again for results to read")
