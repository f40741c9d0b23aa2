"""Console report: what a block shows when it must stop at 20 findings (docs/outputs.md:
"the human ones show the most severe first and say how many more are in results.json")."""

from __future__ import annotations

from agent_eval.findings import ConfigRef, Finding, Severity, TraceRef
from agent_eval.renderers import console
from agent_eval.results import Results
from agent_eval.results import TestResult as TResult


def finding(i: int, severity: Severity, rule: str, message: str) -> Finding:
    return Finding(rule=rule, severity=severity, message=message, test="seq",
                   config=ConfigRef("agent-eval.yaml", 10 + i, 5, "k"),
                   trace=TraceRef("traces/a.jsonl", i + 1, f"t{i}"))


def results_of(tests: list[TResult], unexercised: list[Finding], verdict: str) -> Results:
    return Results(suite="s", config="agent-eval.yaml", verdict=verdict,  # type: ignore[arg-type]
                   counts={"traces": 30, "tool_calls": 30, "violations": 0,
                           "input_errors": 0},
                   tests=tests, traces=[], input_errors=[], unexercised=unexercised)


def test_a_test_block_cut_at_20_shows_its_error_before_its_notes() -> None:
    # 25 notes in trace order, then the one error that fails the test and the run
    found = [finding(i, "note", "args_valid/unknown_tool", f"note {i}") for i in range(25)]
    found.append(finding(25, "error", "args_valid/maximum", "THE-ERROR"))
    test = TResult("seq", "args_valid", "error", "fail", 0, 30, 1, 30, found)
    text = console.render(results_of([test], [], "fail"))
    block = text[text.index("FAIL: seq"):text.index("Verdict:")]
    assert "THE-ERROR" in block
    assert block.index("THE-ERROR") < block.index("note 0")
    # 20 shown: the error and the first 19 notes; 6 notes left out, and said so
    assert "note 18\n" in block and "note 19\n" not in block
    assert "… 6 more violation(s) not shown; all are in results.json" in block


def test_other_findings_cut_at_20_show_the_warning_that_made_the_verdict() -> None:
    # 25 coverage notes come first in the list, then the scenario/unknown_id warning
    notes = [finding(i, "note", "coverage/unexercised", f"No call to 'never{i}'")
             for i in range(25)]
    warning = finding(30, "warning", "scenario/unknown_id",
                      "1 trace names scenario 'NOPE', which this suite does not have")
    text = console.render(results_of([], [*notes, warning], "warn"))
    block = text[text.index("Other findings (26)"):text.index("Verdict:")]
    assert "Violation: 1 trace names scenario 'NOPE'" in block
    assert block.index("scenario 'NOPE'") < block.index("never0'")
    assert "never18'" in block and "never19'" not in block
    assert "… 6 more finding(s) not shown; all are in results.json" in block


def test_a_short_block_shows_every_finding_the_most_severe_first() -> None:
    found = [finding(0, "warning", "args_valid/unknown_tool", "first-warning"),
             finding(1, "error", "args_valid/maximum", "then-error")]
    test = TResult("seq", "args_valid", "error", "fail", 0, 2, 1, 2, found)
    text = console.render(results_of([test], [], "fail"))
    assert text.index("Violation: then-error") < text.index("Violation: first-warning")
    assert "not shown" not in text


def test_a_block_of_more_than_20_errors_shows_the_first_20() -> None:
    found = [finding(i, "error", "args_valid/maximum", f"error {i}") for i in range(25)]
    found.append(finding(25, "note", "args_valid/unknown_tool", "a note"))
    test = TResult("seq", "args_valid", "error", "fail", 0, 30, 25, 30, found)
    text = console.render(results_of([test], [], "fail"))
    assert "error 19\n" in text and "error 20\n" not in text and "a note" not in text
    assert "… 6 more violation(s) not shown; all are in results.json" in text
