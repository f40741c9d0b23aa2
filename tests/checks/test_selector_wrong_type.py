"""A `{tool, args}` selector's constraint without `type:` judges only the JSON types its
keywords constrain (`{min: 500}`: numbers). An argument of another type (`"900"`, `[900]`,
`true`) used to make the call silently "not selected": a blocklist entry for refunds of 500
or more, and every sequence rule whose selector matching is a violation, let a refund of
`"900"` through with exit 0. Now such a call is reported as could not be judged:
`tool_blocklist/wrong_type`, `sequence_valid/wrong_type`, of the test's severity (docs/config.md
"Call selectors"; the scenario side is in tests/scenarios/test_evaluation.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.checks.sequence_helpers import rules, seen, trace
from tests.conftest import read_results

from agent_eval._cli import main

# The audit's reproduction. Lines and columns counted by hand: the blocklist's `{` on line 6,
# column 17 (after `    blocklist: [`); the never_after's `first` key on line 11, column 9
SUITE = """\
suite: t6
traces: traces/*.jsonl
tests:
  - id: blocked
    metric: tool_blocklist
    blocklist: [{tool: refund, args: {amount: {min: 500}}}]
  - id: seq
    metric: sequence_valid
    rules:
      - type: never_after
        first: {tool: refund, args: {amount: {min: 500}}}
        then: close_ticket
scenarios:
  - id: S
    expect:
      must_not:
        - {tool_called: refund, args: {amount: {min: 500}}}
"""
BIG = "refund with {amount: {min: 500}}"


def calls(*args: Any, name: str = "refund") -> str:
    """Native tool_call events, one a line, then a close_ticket call."""
    lines = [json.dumps({"type": "tool_call", "tool": name, "arguments": a}) for a in args]
    lines.append(json.dumps({"type": "tool_call", "tool": "close_ticket", "arguments": {}}))
    return "\n".join(lines) + "\n"


def cli(tmp_path: Path, trace: str, suite: str = SUITE) -> tuple[int, dict[str, Any]]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "agent-eval.yaml").write_text(suite, encoding="utf-8")
    (tmp_path / "traces").mkdir(exist_ok=True)
    # named after the scenario, so the scenario checks it
    (tmp_path / "traces" / "S.jsonl").write_text(trace, encoding="utf-8")
    out = tmp_path / "out"
    code = main(["run", "--config", str(tmp_path / "agent-eval.yaml"), "--output-dir",
                 str(out), "-q", "--no-timings"])
    return code, read_results(out)


def shown(results: dict[str, Any]) -> dict[str, Any]:
    """Per test: its status and its findings as (rule, severity, trace line, config
    line:column)."""
    return {t["id"]: (t["status"], [
        (v["rule"], v["severity"], v["trace"]["line"],
         f"{v['config']['line']}:{v['config']['column']}")
        for v in t["violations"]]) for t in results["tests"]}


def test_the_audit_reproduction_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    """refund("900") and refund([900]), then close_ticket: it passed every check, exit 0."""
    code, results = cli(tmp_path, calls({"amount": "900"}, {"amount": [900]}))
    capsys.readouterr()
    assert shown(results) == {
        # one finding per trace, tool, entry and rule: two calls, at the first
        "blocked": ("fail", [("tool_blocklist/wrong_type", "error", 1, "6:17")]),
        # one per call and field; the never_after itself has no first call to start it
        "seq": ("fail", [("sequence_valid/wrong_type", "error", 1, "11:9"),
                         ("sequence_valid/wrong_type", "error", 2, "11:9")]),
    }
    blocked = results["tests"][0]["violations"][0]
    assert blocked["message"] == (
        "refund: the call's argument 'amount' is a string (\"900\"), which {min: 500} cannot "
        f"judge (it needs a number); whether it is blocked by '{BIG}' (agent-eval.yaml:6) "
        "could not be checked; calls found: 2")
    assert blocked["details"] == {"calls": 2, "pattern": BIG,
                                  "violation": "Argument 'amount' is a string, not a number"}
    assert [r["line"] for r in blocked["related"]] == [2]
    assert results["tests"][1]["violations"][1]["message"] == (
        "refund: the call's argument 'amount' is an array ([900]), which {min: 500} cannot "
        "judge (it needs a number); whether it is selected by the never_after rule's first "
        f"('{BIG}', agent-eval.yaml:11) could not be checked")
    (sc,) = results["scenarios"]
    assert sc["status"] == "fail"
    assert (results["verdict"], code) == ("fail", 1)


def test_a_boolean_is_not_a_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                   ) -> None:
    code, results = cli(tmp_path, calls({"amount": True}))
    capsys.readouterr()
    assert [v["message"].split(";")[0] for t in results["tests"] for v in t["violations"]] \
        == ["refund: the call's argument 'amount' is a boolean (true), which {min: 500} "
            "cannot judge (it needs a number)"] * 2
    assert code == 1


def test_judged_calls_are_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    """Numbers give real answers: 900 is blocked (and starts the never_after), 20 is not;
    a call without the argument is a plain no."""
    code, results = cli(tmp_path, calls({"amount": 900}))
    assert shown(results) == {
        "blocked": ("fail", [("tool_blocklist", "error", 1, "6:17")]),
        "seq": ("fail", [("sequence_valid/never_after", "error", 2, "10:9")])}
    assert code == 1
    code, results = cli(tmp_path, calls({"amount": 20}, {"order": "A-1"}))
    capsys.readouterr()
    assert shown(results) == {"blocked": ("pass", []), "seq": ("pass", [])}
    assert (results["verdict"], code) == ("pass", 0)


def test_an_explicit_type_makes_another_type_a_plain_no(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With `type: number` the author said which type the entry means: "900" is not it."""
    suite = SUITE.replace("{min: 500}", "{type: number, min: 500}")
    code, results = cli(tmp_path, calls({"amount": "900"}, {"amount": [900]}), suite)
    capsys.readouterr()
    assert shown(results) == {"blocked": ("pass", []), "seq": ("pass", [])}
    assert (results["verdict"], code) == ("pass", 0)


def test_an_other_condition_that_plainly_fails_decides(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """{amount: {min: 500}, currency: USD}: a EUR refund is not selected, whatever the
    amount's type; a USD one of "900" cannot be judged."""
    suite = SUITE.replace("{amount: {min: 500}}", "{amount: {min: 500}, currency: USD}")
    code, results = cli(tmp_path, calls({"amount": "900", "currency": "EUR"},
                                        {"amount": "900"}), suite)
    assert shown(results) == {"blocked": ("pass", []), "seq": ("pass", [])}
    code, results = cli(tmp_path, calls({"amount": "900", "currency": "USD"}), suite)
    capsys.readouterr()
    assert [v["rule"] for t in results["tests"] for v in t["violations"]] == [
        "tool_blocklist/wrong_type", "sequence_valid/wrong_type"]
    assert code == 1


def test_the_tests_severity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As not_an_object: of the test's severity (a warning test: WARN, exit 0)."""
    suite = SUITE.replace("    metric: tool_blocklist\n",
                          "    metric: tool_blocklist\n    severity: warning\n")
    _, results = cli(tmp_path, calls({"amount": "900"}), suite)
    capsys.readouterr()
    (v,) = results["tests"][0]["violations"]
    assert (results["tests"][0]["status"], v["rule"], v["severity"]) == (
        "warn", "tool_blocklist/wrong_type", "warning")


# ------------------------------------------------------- sequence rules and families
def test_count_max_and_blocklist_rules(tmp_path: Path) -> None:
    """count max 1 of large refunds: two of "900" were neither counted nor let go."""
    test = rules(tmp_path, """
        - type: count
          tool: {tool: refund, args: {amount: {min: 500}}}
          max: 1
        - type: blocklist
          tools: [{tool: send, args: {to: {min_items: 2}}}]
    """)
    found = test.run(trace([("refund", {"amount": "900"}), ("refund", {"amount": "901"}),
                            ("refund", {"amount": 20}), ("send", {"to": "all@corp.example"}),
                            ("send", {"to": ["a@corp.example"]})]))
    assert seen(found) == [("wrong_type", 1, 7), ("wrong_type", 2, 7),
                           ("wrong_type", 4, 10)]
    assert found[2].message.split(";")[0] == (
        "send: the call's argument 'to' is a string (\"all@corp.example\"), which "
        "{min_items: 2} cannot judge (it needs an array)")
    # judged: two large refunds are over the max, a list of two is blocked
    found = test.run(trace([("refund", {"amount": 900}), ("refund", {"amount": 901}),
                            ("send", {"to": ["a", "b"]})]))
    assert seen(found) == [("count", 2, 8), ("blocklist", 3, 9)]  # count: at its max


@pytest.mark.parametrize(("condition", "value", "needs"), [
    ("{pattern: rm}", 5, "a string"),
    ("{max_length: 3}", ["x"], "a string"),
    ("{required: [path]}", "path", "an object"),
    ("{min: 1, pattern: '^9'}", [9], "a number or a string"),
    ("{max: 3}", None, "a number"),
])
def test_every_keyword_family(tmp_path: Path, condition: str, value: Any, needs: str
                              ) -> None:
    test = rules(tmp_path, f"""
        - type: blocklist
          tools: [{{tool: t, args: {{a: {condition}}}}}]
    """)
    (f,) = test.run(trace([("t", {"a": value})]))
    assert f.rule == "sequence_valid/wrong_type"
    assert f.message.split(";")[0].endswith(f"cannot judge (it needs {needs})")


@pytest.mark.parametrize(("condition", "value", "shown", "needs"), [
    ("7", "7", '"7"', "a number"),  # a literal another JSON type spells (a coercing tool's 7)
    ("true", "TRUE", '"TRUE"', "a boolean"),
    ("'5'", 5, "5", "a string"),
])
def test_a_literal_spelled_in_another_type(tmp_path: Path, condition: str, value: Any,
                                           shown: str, needs: str) -> None:
    test = rules(tmp_path, f"""
        - type: blocklist
          tools: [{{tool: t, args: {{a: {condition}}}}}]
    """)
    (f,) = test.run(trace([("t", {"a": value})]))
    written = condition  # as the suite wrote it (a string quoted)
    kind = "a string" if isinstance(value, str) else "an integer"
    assert f.rule == "sequence_valid/wrong_type"
    assert f.message.split(";")[0] == (
        f"t: the call's argument 'a' is {kind} ({shown}), which spells {written} in another "
        f"JSON type: a tool that coerces its arguments may take it for {written}")
    assert f.details["actual"] == f"Argument 'a' is {kind}, not {needs}"


@pytest.mark.parametrize(("condition", "value"), [
    ("{enum: [1, 2]}", "1"),  # no keyword of one type: every value is judged
    ("{not: {const: 1}}", 1),
    ("7", "8"),  # a literal: JSON equality, and "8" is not 7 in any type
    ("true", "yes"),  # nor "yes" true
    ("{min: 1, pattern: '^9'}", "100"),  # a string, judged by the pattern
    ("{type: string, min_length: 9}", 123456789),
])
def test_plain_noes_are_not_reported(tmp_path: Path, condition: str, value: Any) -> None:
    test = rules(tmp_path, f"""
        - type: blocklist
          tools: [{{tool: t, args: {{a: {condition}}}}}]
    """)
    assert test.run(trace([("t", {"a": value})])) == []
