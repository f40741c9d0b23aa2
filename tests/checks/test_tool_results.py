"""tool_results on recorded traces: result comparison, error-message match and per-call
latency, each finding at the violated key; an unrecorded input is a finding, never a
pass."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agent_eval.api import evaluate, load_suite, load_traces
from agent_eval.errors import ConfigError
from agent_eval.results import TestResult as RuleTestResult

SUITE = """
    version: "1"
    suite: s
    tests:
      - id: results
        metric: tool_results
        calls:
          - tool: lookup_*
            expect_result:
              contains: shipped               # L-contains
              not_contains: cancelled         # L-not
          - tool: get_weather
            args: {city: Oslo}
            expect_result:
              json_schema:                    # L-schema
                type: object
                required: [temperature]
          - tool: refund
            expect_error:
              regex: "amount .* exceeds"      # L-error
          - tool: pay
            expect_error: true                # L-error-true
          - tool: [ping, pong]
            max_latency_ms: 100               # L-latency
    """

EVENTS: list[dict[str, Any]] = [
    {"type": "tool_call", "id": "1", "tool": "lookup_order", "arguments": {},
     "result": "order A-1 shipped"},
    {"type": "tool_call", "id": "2", "tool": "lookup_order", "arguments": {},
     "result": "order A-2 shipped, then cancelled"},
    {"type": "tool_call", "id": "3", "tool": "get_weather", "arguments": {"city": "Oslo"},
     "result": {"temperature": 3}},
    {"type": "tool_call", "id": "4", "tool": "get_weather", "arguments": {"city": "Oslo"},
     "result": {"wind": 3}},
    {"type": "tool_call", "id": "5", "tool": "get_weather", "arguments": {"city": "Rome"},
     "result": {"wind": 3}},
    {"type": "tool_call", "id": "6", "tool": "refund", "arguments": {},
     "error": "amount 900 exceeds the limit", "is_error": True},
    {"type": "tool_call", "id": "7", "tool": "refund", "arguments": {},
     "error": "card declined", "is_error": True},
    {"type": "tool_call", "id": "8", "tool": "pay", "arguments": {}, "result": "paid"},
    {"type": "tool_call", "id": "9", "tool": "ping", "arguments": {}, "result": "ok",
     "latency_ms": 50},
    {"type": "tool_call", "id": "10", "tool": "pong", "arguments": {}, "result": "ok",
     "latency_ms": 250},
    {"type": "tool_call", "id": "11", "tool": "ping", "arguments": {}, "result": "ok"},
    {"type": "tool_call", "id": "12", "tool": "lookup_order", "arguments": {}},
]


def line(text: str, marker: str) -> int:
    return next(i for i, t in enumerate(text.splitlines(), 1) if marker in t)


# a suite of one tool_results test "r" (dedented with what follows: its `calls:` entries)
ONE_TEST = """
        version: "1"
        suite: s
        tests:
          - id: r
            metric: tool_results
            calls:"""


def evaluated(tmp_path: Path, suite_text: str, events: list[dict[str, Any]]) -> RuleTestResult:
    """The one test of the suite ``suite_text`` (dedented) run on a trace of ``events``."""
    (tmp_path / "agent-eval.yaml").write_text(textwrap.dedent(suite_text).lstrip("\n"))
    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    suite = load_suite(tmp_path / "agent-eval.yaml")
    [test] = evaluate(suite, load_traces([trace], suite)).tests
    return test


def run(tmp_path: Path) -> tuple[str, list[dict[str, Any]]]:
    text = textwrap.dedent(SUITE).lstrip("\n")
    test = evaluated(tmp_path, SUITE, EVENTS)
    out = [{"rule": v.rule, "line": v.config.line, "trace_line": v.trace.line if v.trace
            else 0, "message": v.message, "value": v.value} for v in test.violations]
    return text, out


def test_each_violation_at_its_key_and_call(tmp_path: Path) -> None:
    text, found = run(tmp_path)
    got = [(f["rule"], f["line"], f["trace_line"]) for f in found]
    assert got == [
        ("tool_results/result", line(text, "L-not"), 2),
        ("tool_results/result", line(text, "L-schema"), 4),
        ("tool_results/error", line(text, "L-error"), 7),
        ("tool_results/error", line(text, "L-error-true"), 8),
        ("tool_results/latency", line(text, "L-latency"), 10),
        ("tool_results/not_recorded", line(text, "L-latency"), 11),
        ("tool_results/not_recorded", line(text, "tool: lookup_*"), 12),
    ]
    by_line = {f["trace_line"]: f for f in found}
    assert "does not contain" not in by_line[2]["message"]
    assert "contains 'cancelled'" in by_line[2]["message"]
    assert "'temperature' is a required property" in by_line[4]["message"]
    assert "card declined" in by_line[7]["value"]
    assert by_line[10]["value"] == 250


@pytest.mark.parametrize(("snippet", "message"), [
    ("expect_result: {json_schema: schema.json}", "must be an inline schema"),
    ("expect_result: {regex: '('}", "invalid regular expression"),
    ("expect_result: {json_schema: {properties: {t: {maxium: 5}}}}",
     "unknown keyword 'maxium' at /properties/t/maxium (did you mean 'maximum'?)"),
    ("expect_result: {}", "give at least one of"),
    ("args: {amount: 1}", "this entry checks nothing: give expect_result, expect_error "
     "(false: the call must not fail) or max_latency_ms"),
    ("expect_result: {contains: a}, expect_error: true",
     "give expect_result or expect_error, not both"),
    # before: each checked nothing, and every call of the tool passed (exit 0)
    ("expect_result: {contains: []}", "'contains' is an empty list, so it checks nothing"),
    ("expect_result: {contains: null}", "'contains' is written without a value (null)"),
    ("expect_error: {not_contains: ~}", "'not_contains' is written without a value"),
    ("expect_result: {contains: [refund, '']}", "'contains' has an empty term"),
    ("expect_result: {contains: ''}", "'contains' has an empty term"),
    ("expect_result: {regex: ''}", "an empty regular expression is found in every text"),
    ("expect_result: null, max_latency_ms: 100",
     "'expect_result' is written without a value (null)"),
])
def test_config_errors(tmp_path: Path, snippet: str, message: str) -> None:
    (tmp_path / "agent-eval.yaml").write_text(textwrap.dedent(f"""
        version: "1"
        suite: s
        tests:
          - id: r
            metric: tool_results
            calls:
              - {{tool: x, {snippet}}}
        """))
    with pytest.raises(ConfigError) as exc:
        load_suite(tmp_path / "agent-eval.yaml")
    assert message in str(exc.value)
    assert "agent-eval.yaml:" in str(exc.value)


GROUP_SUITE = """
        version: "1"
        suite: s
        tool_groups:
          money: [refund, pay]
        tests:
          - id: r
            metric: tool_results
            calls:
              - tool: "@{group}"
                expect_result: {{contains: ok}}
        """


def test_entry_tool_takes_a_tool_group(tmp_path: Path) -> None:
    """A @group as an entry's tool stands for its tools; it was taken as a tool named
    '@money', so the declined refund was never checked (exit 0)."""
    test = evaluated(tmp_path, GROUP_SUITE.format(group="money"), [
        {"type": "tool_call", "id": "1", "tool": "refund", "arguments": {},
         "result": "declined"},
        {"type": "tool_call", "id": "2", "tool": "lookup", "arguments": {}, "result": "no"},
    ])
    assert [(v.rule, v.tool, v.config.line, v.trace.line if v.trace else 0)
            for v in test.violations] == [("tool_results/result", "refund", 10, 1)]


def config_problems(tmp_path: Path, suite_text: str) -> list[str]:
    """The config errors of the suite ``suite_text`` (dedented)."""
    (tmp_path / "agent-eval.yaml").write_text(textwrap.dedent(suite_text).lstrip("\n"))
    with pytest.raises(ConfigError) as exc:
        load_suite(tmp_path / "agent-eval.yaml")
    return exc.value.problems


def test_entry_tool_unknown_group_is_a_config_error(tmp_path: Path) -> None:
    # line 9: '      - tool: "@mony"': the key tool at col 9
    assert config_problems(tmp_path, GROUP_SUITE.format(group="mony")) == [
        "agent-eval.yaml:9:9: unknown tool group '@mony' (did you mean '@money'?); groups: "
        "@money (define it under tool_groups:)"]


def test_entry_tool_empty_list_is_a_config_error(tmp_path: Path) -> None:
    """tool: [] named no tool: the entry checked no call and the run passed (exit 0)."""
    entry = "\n              - {tool: [], expect_result: {contains: ok}}\n"
    # line 7: '      - {tool: [], …}': the key tool at col 10
    assert config_problems(tmp_path, ONE_TEST + entry) == [
        "agent-eval.yaml:7:10: an empty list names no tool, so nothing would be checked; "
        "name at least one tool (a name, a glob or @group)"]


def test_expect_error_false_reports_a_failed_call(tmp_path: Path) -> None:
    """expect_error: false is "must not fail": it was taken as no expectation at all, so a
    failed refund passed (exit 0). A call whose result was not recorded cannot be told."""
    test = evaluated(tmp_path, ONE_TEST + """
              - tool: refund
                expect_error: false""", [
        {"type": "tool_call", "id": "1", "tool": "refund", "arguments": {},
         "error": "card declined", "is_error": True},
        {"type": "tool_call", "id": "2", "tool": "refund", "arguments": {}, "result": "ok"},
        {"type": "tool_call", "id": "3", "tool": "refund", "arguments": {}},
    ])
    # line 8 is '    expect_error: false' (the suite's first line is blank, then stripped)
    assert [(v.rule, v.config.line, v.trace.line if v.trace else 0, v.message)
            for v in test.violations] == [
        ("tool_results/error", 8, 1,
         "refund failed (card declined), but no error was expected"),
        ("tool_results/not_recorded", 7, 3,
         "the result of refund was not recorded, so it cannot be checked"),
    ]


def test_calls_args_cannot_select_are_reported(tmp_path: Path) -> None:
    """A call of the entry's tool whose arguments cannot say whether `args` selects it
    (not recorded, not a JSON object) is tool_results/not_recorded at the `args` key, with
    the test's severity: it was passed over, so a refund that succeeded where the entry
    expects an error passed with exit 0."""
    suite_text = ONE_TEST + """
              - tool: refund
                args: {account: ACME}
                expect_error: true
        """
    events: list[dict[str, Any]] = [
        # selected, fails as expected: nothing
        {"type": "tool_call", "id": "1", "tool": "refund", "arguments": {"account": "ACME"},
         "error": "over the limit", "is_error": True},
        # arguments not recorded: cannot tell
        {"type": "tool_call", "id": "2", "tool": "refund", "arguments_recorded": False,
         "result": "refunded"},
        # a string that is not JSON: cannot tell
        {"type": "tool_call", "id": "3", "tool": "refund",
         "arguments": "account=ACME amount=900", "result": "refunded"},
        # another account, and no arguments at all: plainly not selected
        {"type": "tool_call", "id": "4", "tool": "refund", "arguments": {"account": "B"},
         "result": "refunded"},
        {"type": "tool_call", "id": "5", "tool": "refund", "arguments": None,
         "result": "refunded"},
    ]
    test = evaluated(tmp_path, suite_text, events)
    found = list(test.violations)
    got = [(v.rule, v.severity, v.config.line, v.trace.line if v.trace else 0)
           for v in found]
    # the args key is line 8 of the suite; the two calls are lines 2 and 3 of the trace
    assert got == [("tool_results/not_recorded", "error", 8, 2),
                   ("tool_results/not_recorded", "error", 8, 3)]
    assert "arguments are not recorded in the trace" in found[0].message
    assert "arguments are not a JSON object" in found[1].message
    assert "whether args: {account: ACME} selects it cannot be told" in found[1].message
    assert test.status == "fail"


def test_args_by_json_equality_and_another_type_spelling_the_value(tmp_path: Path) -> None:
    """`args:` compared with Python's ==: `"amount": "900"` was not selected by
    `{amount: 900}` (a coercing tool refunds 900) and passed with exit 0, while `true`
    was selected by `1`. JSON equality now (900.0 is 900, true is not 1), and an argument
    of another JSON type spelling the value is tool_results/not_recorded at `args`."""
    suite_text = ONE_TEST + """
              - tool: refund
                args: {amount: 900, dry_run: false}
                expect_error: true
        """
    def refund(n: int, amount: Any, dry_run: Any) -> dict[str, Any]:
        return {"type": "tool_call", "id": str(n), "tool": "refund",
                "arguments": {"amount": amount, "dry_run": dry_run}, "result": "refunded"}

    events = [
        refund(1, 900.0, False),  # selected: succeeded where an error is expected
        refund(2, "900", False),  # a string spelling 900: unknown
        refund(3, 900, 0),  # 0 spelling false: unknown
        refund(4, "901", False),  # another value: plainly not selected
        refund(5, 900, "no"),  # not false in any type: plainly not selected
        refund(6, "900", True),  # dry_run plainly differs: not selected, not reported
    ]
    test = evaluated(tmp_path, suite_text, events)
    got = [(v.rule, v.config.line, v.trace.line if v.trace else 0)
           for v in test.violations]
    # the entry's tool key is line 7, its args key line 8; calls on trace lines 1-3
    assert got == [("tool_results/error", 9, 1), ("tool_results/not_recorded", 8, 2),
                   ("tool_results/not_recorded", 8, 3)], got
    second, third = list(test.violations)[1:]
    assert ("argument 'amount' is a string (\"900\"), which spells 900 in another JSON "
            "type, so whether args: {amount: 900, dry_run: false} selects it cannot be "
            "told") in second.message, second.message
    assert "argument 'dry_run' is an integer (0), which spells false" in third.message
    assert second.details == {"violation": "Argument 'amount' is a string, not a number"}


def test_an_argument_named_empty_spelled_in_another_type_is_reported(tmp_path: Path
                                                                    ) -> None:
    """The argument of another JSON type was kept as `spelled or key`, and a JSON key may
    be "": `{"": "900"}` for `args: {"": 900}` was then taken as selected, its expected
    error found, a pass. It cannot be told, as for any other name."""
    suite_text = ONE_TEST + """
              - tool: refund
                args: {"": 900}
                expect_error: true
        """
    events = [{"type": "tool_call", "id": "1", "tool": "refund", "arguments": {"": "900"},
               "error": "refused", "is_error": True}]
    test = evaluated(tmp_path, suite_text, events)
    # the entry's args key is line 8 of the suite; the call is trace line 1
    assert [(v.rule, v.config.line, v.trace.line if v.trace else 0)
            for v in test.violations] == [("tool_results/not_recorded", 8, 1)]
    assert test.status == "fail"


def test_result_text_checks_compare_caseless_forms(tmp_path: Path) -> None:
    """A result's not_contains compares Unicode's canonical caseless forms, as a
    scenario's output checks do: 'Straße' is found in 'STRASSE', and 'café' in 'cafe'
    followed by a combining accent (str.lower missed both: the result passed)."""
    suite_text = ONE_TEST + """
              - tool: lookup
                expect_result: {not_contains: [Straße, café]}
        """
    events: list[dict[str, Any]] = [
        {"type": "tool_call", "id": "1", "tool": "lookup", "arguments": {},
         "result": "HAUPTSTRASSE 1"},
        {"type": "tool_call", "id": "2", "tool": "lookup", "arguments": {},
         "result": "Cafe\u0301 Central"}]
    test = evaluated(tmp_path, suite_text, events)
    assert [(v.rule, v.trace.line if v.trace else 0) for v in test.violations] == [
        ("tool_results/result", 1), ("tool_results/result", 2)]


def test_an_args_value_written_off_is_a_config_error(tmp_path: Path) -> None:
    """``args: {state: off}`` is read by YAML 1.1 as ``state: false``: the entry selected
    no call of ``state: "off"`` and checked nothing. A config error at the value."""
    entry = "\n              - {tool: fw, args: {state: off}, expect_error: false}\n"
    # line 7: '      - {tool: fw, args: {state: off}, …}': off at col 34
    assert config_problems(tmp_path, ONE_TEST + entry) == [
        "agent-eval.yaml:7:34: 'off' is read by YAML as the boolean false, not as the text "
        "'off'; quote it (\"off\") to compare with the text, or write false for the boolean"]


@pytest.mark.parametrize(("check", "col", "message"), [
    # line 8: "      - {tool: refund, expect_result: {KEY: …}}": the "{" at column
    # 39, KEY at 40
    ("contains: []", 40, "'contains' is an empty list, so it checks nothing and would pass; "
                         "add a term or remove the key"),
    ("not_contains: []", 40, "'not_contains' is an empty list, so it checks nothing and "
                             "would pass; add a term or remove the key"),
    ("contains: ", 40, "'contains' is written without a value (null), so it checks nothing "
                       "and would pass; give it a value or remove the key"),
    ("contains: ''", 40, "'contains' has an empty term, which is found in every text; write "
                         "the text to look for"),
    ("contains: [ok, '']", 40, "'contains' has an empty term, which is found in every text; "
                               "write the text to look for"),
    ("regex: ''", 40, "an empty regular expression is found in every text, so it checks "
                      "nothing and would pass; write the pattern to look for"),
])
def test_a_text_check_that_checks_nothing_is_a_config_error(
        tmp_path: Path, check: str, col: int, message: str) -> None:
    """Each of these passed a call whose result was "totally unrelated" (verdict pass,
    exit 0): no terms are all found, an empty term and an empty pattern are found in
    every text, and a key written without a value was read as not written. As in a
    scenario's expect.output (docs/scenarios.md), each is a config error at its key."""
    (tmp_path / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\ntraces: t.jsonl\ntests:\n  - id: r\n'
        "    metric: tool_results\n    calls:\n"
        f"      - {{tool: refund, expect_result: {{{check}}}}}\n")
    with pytest.raises(ConfigError) as exc:
        load_suite(tmp_path / "agent-eval.yaml")
    assert exc.value.problems == [f"agent-eval.yaml:8:{col}: {message}"]
