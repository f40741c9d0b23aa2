"""`scenarios:` and `pass_criteria:` in the suite file: every problem as FILE:LINE:COL at
the offending key, all reported together; the suite stays picklable (--jobs)."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest

from agent_eval.api import load_suite
from agent_eval.errors import ConfigError

from .scenario_harness import Workspace, trace

HEAD = 'version: "1"\nsuite: s\ntraces: traces/*.jsonl\n'


def problems(ws: Workspace, suite: str) -> list[tuple[int, int, str]]:
    ws.write(suite, {})
    with pytest.raises(ConfigError) as info:
        load_suite(ws.root / "agent-eval.yaml")
    out = []
    for p in info.value.problems:
        m = re.match(r"agent-eval\.yaml:(\d+):(\d+): (.*)", p)
        assert m, p
        out.append((int(m.group(1)), int(m.group(2)), m.group(3)))
    return out


@pytest.mark.parametrize(("body", "needle", "words"), [
    ("  - id: A\n    expect: {tols: [x]}\n", "tols", ["did you mean 'tools'"]),
    ("  - id: A\n    thresholds: {max_cost: 1}\n", "max_cost", ["unknown key 'max_cost'",
                                                               "max_cost_usd"]),
    ("  - id: A\n    thresholds:\n      min_tool_recall: 1.0\n", "min_tool_recall",
     ["needs expect.tools"]),
    ("  - id: A\n    expect: {tools: [x]}\n    thresholds: {min_tool_recall: 185}\n",
     "min_tool_recall", ["185 is not a rate", "a percentage above 1 up to 100 (90)"]),
    ("  - id: A\n    warn_thresholds: {min_sequence_similarity: 0.5}\n",
     "min_sequence_similarity", ["needs expect.sequence"]),
    ("  - id: A\n    expect: {state: x}\n    thresholds: {min_score: 50}\n", "min_score",
     ["needs a scored expectation"]),
    ("  - id: A\n    expect:\n      output: {regex: '(unclosed'}\n", "regex",
     ["invalid regular expression"]),
    ("  - id: A\n    expect:\n      sequence_mode: sometimes\n", "sequence_mode",
     ["'strict'", "'subsequence'"]),
    ("  - id: A\n    expect:\n      behaviors:\n        - {tool_called: a, output_contains: b}\n",
     "{tool_called", ["exactly one of", "tool_called, output_contains"]),
    ("  - id: A\n    expect:\n      must_not:\n        - {args: {a: 1}, output_regex: x}\n",
     "{args", ["'args' goes with 'tool_called'"]),
    ("  - id: A\n    expect:\n      args: {refund: {amount: {min: big}}}\n", "min: big",
     ["'min' must be a number"]),
    ("  - id: A\n    expect:\n      output: {json_schema: schemas/none.json}\n",
     "json_schema", ["cannot be read", "relative to the folder"]),
    ("  - id: A\n    expect:\n      output: {json_schema: {type: objekt}}\n", "json_schema",
     ["invalid JSON Schema"]),
    # before: every output failed, "Output nests too deeply to be validated"
    ("  - id: A\n    expect:\n      output: {json_schema: {$ref: '#'}}\n", "json_schema",
     ["invalid JSON Schema (inline): the $ref at /$ref ('#') refers back to itself"]),
    # before: the run crashed (an internal error)
    ("  - id: A\n    expect:\n      output: {json_schema: {$ref: '#/nope'}}\n", "json_schema",
     ["the $ref at /$ref ('#/nope') points at nothing", "nothing is fetched"]),
    ("  - id: A\n    expect: {tools: [a], output: {contains: [x]}}\n"
     "    weights: {tool_accuracy: 0, output_quality: 0}\n", "weights", ["sum to 0"]),
    ("  - id: A\n    expect: {tools: [a, A]}\n", "A]", ["listed twice"]),
    ("  - id: A\n    min_pass_ratio: 150\n", "min_pass_ratio", ["150 is not a rate"]),
    # before: a quoted number skipped the range check and the percentage rule ("-1" was
    # accepted, and a scenario that called a forbidden tool passed with it)
    ("  - id: A\n    min_pass_ratio: \"-1\"\n", "min_pass_ratio",
     ["'-1' is a string: write a rate as a number", "or as '90%'"]),
    ("  - id: A\n    min_pass_ratio: \"0.5\"\n", "min_pass_ratio", ["'0.5' is a string"]),
    # before: a YAML boolean was read as 0 or 1, without a word: min_pass_ratio: false let
    # every trace fail (0 of n passed meets 0), max_tool_calls: yes allowed one call
    ("  - id: A\n    min_pass_ratio: false\n", "min_pass_ratio",
     ["a boolean (YAML reads true, false, yes, no, on and off as booleans), not a rate"]),
    ("  - id: A\n    thresholds: {max_tool_calls: yes}\n", "max_tool_calls",
     ["a boolean", "not a number"]),
    ("  - id: A\n    warn_thresholds: {max_cost_usd: off}\n", "max_cost_usd",
     ["a boolean", "not a number"]),
    ("  - id: A\n    weight: true\n", "weight", ["a boolean", "not a number"]),
    # could never fail, and its note said "skipped: no baseline" when there was one
    ("  - id: A\n    thresholds: {max_cost_multiplier: .inf}\n", "max_cost_multiplier",
     ["Input should be a finite number (got inf)"]),
    ("  - id: A\n    warn_thresholds: {max_cost_multiplier: .inf}\n", "max_cost_multiplier",
     ["Input should be a finite number"]),
    # before: an infinite or NaN limit could never fail (the trace passed whatever it cost)
    ("  - id: A\n    thresholds: {max_cost_usd: .inf}\n", "max_cost_usd",
     ["Input should be a finite number (got inf)"]),
    ("  - id: A\n    thresholds: {max_latency_ms: .nan}\n", "max_latency_ms",
     ["Input should be a finite number"]),
    ("  - id: A\n    warn_thresholds: {max_latency_ms: .inf}\n", "max_latency_ms",
     ["Input should be a finite number"]),
    ("  - id: A\n    weights: {sequence: false}\n", "sequence", ["a boolean"]),
    ("  - id: A\n  - id: A\n", "id: A", ["duplicate scenario id 'A'"]),
    # before: each of these checked nothing and the scenario passed (exit 0)
    ("  - id: A\n    expect:\n      forbidden_tools: []\n", "forbidden_tools",
     ["'forbidden_tools' is empty", "names no tool"]),
    ("  - id: A\n    expect:\n      must_not: []\n", "must_not",
     ["'must_not' is empty", "add a behavior"]),
    ("  - id: A\n    expect:\n      behaviors: []\n", "behaviors", ["'behaviors' is empty"]),
    ("  - id: A\n    expect:\n      output: {}\n", "output", ["'output' is empty"]),
    ("  - id: A\n    expect:\n      args: {}\n", "args", ["'args' is empty"]),
    ("  - id: A\n    expect:\n      handoffs: []\n", "handoffs", ["add an agent"]),
    ("  - id: A\n    expect:\n      judge: []\n", "judge", ["add a judge check"]),
    ("  - id: A\n    expect:\n      must_not:\n        - tool_called: []\n", "tool_called",
     ["'tool_called' is empty", "names no tool"]),
    ("  - id: A\n    expect:\n      behaviors:\n        - tool_not_called: []\n",
     "tool_not_called", ["'tool_not_called' is empty"]),
    # an empty text is in every output, an empty tool name in no call: each passed
    ("  - id: A\n    expect:\n      state: ''\n", "state", ["an empty text is found in every"]),
    ("  - id: A\n    expect:\n      output: {contains: [a, '']}\n", "'']",
     ["an empty text"]),
    ("  - id: A\n    expect:\n      output: {regex: ''}\n", "regex", ["an empty text"]),
    ("  - id: A\n    expect:\n      behaviors:\n        - output_contains: ''\n",
     "output_contains", ["an empty text"]),
    ("  - id: A\n    expect:\n      forbidden_tools: [x, '']\n", "'']",
     ["an empty tool name names no tool"]),
    ("  - id: A\n    expect:\n      must_not:\n        - tool_called: ''\n", "tool_called",
     ["an empty tool name"]),
    # (in must_not, an empty sequence was a hit in every trace: every trace failed)
    ("  - id: A\n    expect:\n      must_not:\n        - sequence: []\n", "sequence",
     ["'sequence' is empty", "add a tool"]),
    # args under args_mode: ignore are not checked, but their problems are said (they
    # were not compiled: a regex written wrong was never reported)
    ("  - id: A\n    expect:\n      args_mode: ignore\n      args: {refund: {amount: "
     "{pattern: '('}}}\n", "pattern", ["invalid regular expression"]),
    # a key written without a value (null) was read as not written: each checked nothing
    # and the scenario passed (a list left empty under its key, a TODO)
    ("  - id: A\n    expect:\n      output:\n        contains:\n", "contains",
     ["'contains' is written without a value (null)", "remove the key"]),
    ("  - id: A\n    expect:\n      output: {regex: null, contains: [x]}\n", "regex",
     ["'regex' is written without a value"]),
    ("  - id: A\n    expect:\n      output: null\n", "output", ["'output' is written"]),
    # equals: null is read as not written (the spec's example suite writes it), so an
    # output of it alone checks nothing
    ("  - id: A\n    expect:\n      output: {equals: null}\n", "output",
     ["'output' is empty"]),
    ("  - id: A\n    expect:\n      forbidden_tools:\n", "forbidden_tools",
     ["'forbidden_tools' is written without a value"]),
    ("  - id: A\n    expect:\n      must_not: ~\n", "must_not", ["'must_not' is written"]),
    ("  - id: A\n    expect:\n      behaviors:\n        - {output_regex: x, args: null}\n",
     "args", ["'args' is written without a value"]),
    ("  - id: A\n    thresholds: {max_cost_usd: null}\n", "max_cost_usd",
     ["'max_cost_usd' is written without a value"]),
    ("  - id: A\n    warn_thresholds:\n", "warn_thresholds",
     ["'warn_thresholds' is written without a value"]),
    # (an empty list of categories adds no expected tool: nothing was checked)
    ("  - id: A\n    expect:\n      tool_categories: []\n", "tool_categories",
     ["'tool_categories' is empty", "add a category (a name under tool_groups)"]),
])
def test_scenario_problems_point_at_the_key(ws: Workspace, body: str, needle: str,
                                            words: list[str]) -> None:
    suite = HEAD + "scenarios:\n" + body
    (line, col, message), = problems(ws, suite)
    lines = suite.splitlines()
    if "duplicate" in words[0]:
        assert line == len(lines) and lines[line - 1][col - 1:].startswith("id: A")
    else:
        assert lines[line - 1][col - 1:].startswith(needle), (line, col, lines[line - 1],
                                                              message)
    for word in words:
        assert word in message, message


@pytest.mark.parametrize(("criteria", "needle", "words"), [
    ("  blocking: {min_pass_rat: 0.8}\n", "min_pass_rat", ["did you mean 'min_pass_rate'"]),
    ("  blocking: {min_accuracy: 0.9}\n", "min_accuracy", ["no scenario has output checks"]),
    ("  warning: {min_behavior_coverage: 0.9}\n", "min_behavior_coverage",
     ["no scenario lists behaviors"]),
    ("  by_category: {adversarail: 1.0}\n", "adversarail",
     ["did you mean 'adversarial'", "categories used: adversarial"]),
    ("  by_category: {adversarial: 900}\n", "adversarial: 900", ["900 is not a rate"]),
    # before: "40" was read as 40.0, a drop of 4000 % allowed (40 unquoted is 0.4)
    ("  regression: {max_pass_rate_drop: \"40\"}\n", "max_pass_rate_drop",
     ["'40' is a string: write a rate as a number"]),
    ("  blocking: {min_pass_rate: \"1e-300\"}\n", "min_pass_rate", ["is a string"]),
    # before: false was a blocking min_pass_rate of 0, met by any run, which then
    # tolerated every failed scenario (verdict warn, exit 0); true a drop of 100 %
    ("  blocking: {min_pass_rate: false}\n", "min_pass_rate", ["a boolean", "not a"]),
    ("  by_category: {adversarial: no}\n", "adversarial: no", ["a boolean", "not a rate"]),
    ("  regression: {max_pass_rate_drop: true}\n", "max_pass_rate_drop", ["a boolean"]),
    ("  regression: {max_score_drop: on}\n", "max_score_drop", ["a boolean"]),
    ("  warning: {max_latency_p95_ms: true}\n", "max_latency_p95_ms", ["a boolean"]),
    # before: could never fail
    ("  blocking: {max_latency_p95_ms: .inf}\n", "max_latency_p95_ms",
     ["Input should be a finite number"]),
    ("  blocking: {min_token_efficiency: .nan}\n", "min_token_efficiency",
     ["Input should be a finite number"]),
    ("  composite: {weights: {pass_rate: true}}\n", "pass_rate", ["a boolean"]),
    # before: with no expect.tools anywhere the tool metrics are never known, and such a
    # blocking criterion only warned ("tool_recall is unknown (not recorded)") in every run
    ("  blocking: {min_tool_recall: 0.9}\n", "min_tool_recall",
     ["no scenario has expect.tools", "so tool_recall is not defined"]),
    ("  warning: {min_tool_precision: 0.9}\n", "min_tool_precision",
     ["no scenario has expect.tools"]),
    ("  composite: {weights: {tool_precision: 1}, min: 0.5}\n", "tool_precision",
     ["no scenario has expect.tools"]),
    ("  composite: {weights: {latency: 1}, min: 0.8}\n", "latency",
     ["needs a latency scale"]),
    ("  composite: {weights: {speed: 1}}\n", "speed", ["unknown key 'speed'"]),
    # a boolean for a mapping is no number: it said "a boolean ..., not a number"
    ("  composite: {weights: true}\n", "weights", ["composite.weights:", "dictionary"]),
    # before: a key written without a value (null) was read as not written: its gate
    # never ran and the suite passed, as a scenario's null key (check_unset)
    ("  blocking: {min_pass_rate: null}\n", "min_pass_rate",
     ["'min_pass_rate' is written without a value (null)", "remove the key"]),
    ("  warning:\n    min_pass_rate:\n", "min_pass_rate", ["is written without a value"]),
    ("  blocking:\n", "blocking", ["'blocking' is written without a value"]),
    ("  regression: {max_pass_rate_drop: ~}\n", "max_pass_rate_drop",
     ["is written without a value"]),
    ("  composite: {weights: {pass_rate: 1}, min: null}\n", "min: null",
     ["'min' is written without a value"]),
    ("  composite: {weights: {pass_rate: 1, safety_rate: null}, min: 0.5}\n",
     "safety_rate", ["'safety_rate' is written without a value"]),
    # a minimum of 0 can never fail, and a pass rate's tolerated every failed scenario
    ("  blocking: {min_pass_rate: 0}\n", "min_pass_rate", ["'min_pass_rate: 0' can never "
                                                          "fail", "tolerates every failed"]),
    ("  warning: {min_safety_rate: 0.0}\n", "min_safety_rate", ["can never fail"]),
    ("  by_category: {adversarial: 0}\n", "adversarial", ["'adversarial: 0' can never fail"]),
    ("  composite: {weights: {pass_rate: 1}, min: 0}\n", "min: 0", ["'min: 0' can never"]),
    # gates only switched off gated nothing either
    ("  regression: {fail_on_new_violations: false}\n", "regression",
     ["'regression' gates nothing"]),
    # an empty mapping gated nothing either, without a word
    ("  blocking: {}\n", "blocking", ["'blocking' is empty: it checks nothing"]),
    ("  by_category: {}\n", "by_category", ["'by_category' is empty"]),
    ("  regression: {}\n", "regression", ["'regression' is empty"]),
    # a limit no drop can be over: the gate could never fail
    ("  regression: {max_pass_rate_drop: 100}\n", "max_pass_rate_drop",
     ["'max_pass_rate_drop: 1' can never fail (a pass rate drops by at most 1)"]),
    ("  regression: {max_pass_rate_drop: 1.0}\n", "max_pass_rate_drop", ["can never fail"]),
    # no scenario has a score: the gate was skipped in every comparison, and passed
    ("  regression: {max_pass_rate_drop: 0.1, max_score_drop: 5}\n", "max_score_drop",
     ["'max_score_drop': no scenario has a scored expectation", "never be checked",
      "give a scenario one, or remove max_score_drop"]),
])
def test_criteria_problems_point_at_the_key(ws: Workspace, criteria: str, needle: str,
                                            words: list[str]) -> None:
    suite = (HEAD + "scenarios:\n  - id: A\n    category: adversarial\n"
             "pass_criteria:\n" + criteria)
    (line, col, message), = problems(ws, suite)
    text = suite.splitlines()[line - 1]
    assert text[col - 1:].startswith(needle), (text, col, message)
    for word in words:
        assert word in message, message


@pytest.mark.parametrize(("limit", "said"), [
    (".inf", "'max_score_drop: inf' can never fail (a score drops by at most 100)"),
    ("100", "'max_score_drop: 100' can never fail"), ("250", "'max_score_drop: 250'")])
def test_a_score_drop_no_score_can_make_is_an_error(ws: Workspace, limit: str,
                                                    said: str) -> None:
    """Scores are 0 to 100: a max_score_drop of 100 or more could never fail."""
    suite = (HEAD + "scenarios:\n  - id: A\n    expect: {tools: [a]}\n"
             f"pass_criteria:\n  regression: {{max_score_drop: {limit}}}\n")
    (line, col, message), = problems(ws, suite)
    assert suite.splitlines()[line - 1][col - 1:].startswith("max_score_drop"), (line, col)
    assert said in message and "give a limit below 100" in message, message
    ws.write(suite.replace(f"max_score_drop: {limit}", "max_score_drop: 99.99"), {})
    load_suite(ws.root / "agent-eval.yaml")  # below 100: a drop can be over it


@pytest.mark.parametrize(("criteria", "said"), [
    # its criteria commented out: null, read as not written, so it gated nothing, unsaid
    # (where pass_criteria: {} is an error)
    ("pass_criteria:\n#  blocking: {min_pass_rate: 0.8}\n",
     "'pass_criteria' is written without a value (null)"),
    ("pass_criteria: ~\n", "'pass_criteria' is written without a value (null)"),
    ("pass_criteria: {}\n", "'pass_criteria' is empty"),
])
def test_pass_criteria_without_a_criterion_is_an_error(ws: Workspace, criteria: str,
                                                       said: str) -> None:
    suite = HEAD + "scenarios:\n  - id: A\n    category: adversarial\n" + criteria
    (line, col, message), = problems(ws, suite)
    assert suite.splitlines()[line - 1].startswith("pass_criteria:") and col == 1
    assert said in message and "add a criterion" in message


def test_pass_criteria_needs_scenarios(ws: Workspace) -> None:
    suite = HEAD + ("tests:\n  - {id: b, metric: tool_blocklist, blocklist: [x]}\n"
                    "pass_criteria:\n  blocking: {min_pass_rate: 0.8}\n")
    (line, col, message), = problems(ws, suite)
    assert (line, col) == (6, 1) and "needs scenarios" in message


def test_all_problems_are_reported_together(ws: Workspace) -> None:
    suite = HEAD + """tests:
  - {id: b, metric: tool_blocklist, blocklst: [x]}
scenarios:
  - id: A
    expect: {tols: [x]}
  - id: B
    thresholds: {max_tool_calls: -1}
pass_criteria:
  blocking: {min_safety: 1.0}
"""
    found = {(line, col) for line, col, _ in problems(ws, suite)}
    # blocklist missing, blocklst unknown, tols, -1, min_safety
    assert found == {(5, 5), (5, 37), (8, 14), (10, 18), (12, 14)}


def test_a_scenarios_only_suite_is_valid_and_picklable(ws: Workspace, tmp_path: Path
                                                       ) -> None:
    (ws.root / "answer.yaml").write_text("type: object\nrequired: [id]\n")
    suite = HEAD + """scenarios:
  - id: A
    expect: {output: {json_schema: answer.yaml}}
"""
    ws.write(suite, {"a.jsonl": trace("a", "A", [], '{"id": 1}')})
    s = load_suite(ws.root / "agent-eval.yaml")
    assert s.tests == [] and s.scenarios is not None
    copy = pickle.loads(pickle.dumps(s))  # rebuilt from the sources, files not read again
    (ws.root / "answer.yaml").unlink()
    again = pickle.loads(pickle.dumps(copy))
    assert again.scenarios is not None and len(again.scenarios.scenarios) == 1


def test_the_validate_command_counts_scenarios_and_criteria(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    from agent_eval._cli import main

    ws.write(HEAD + "scenarios:\n  - id: A\n    required: true\n"
             "pass_criteria:\n  blocking: {min_pass_rate: 1}\n", {})
    assert main(["validate", "--config", str(ws.root / "agent-eval.yaml")]) == 0
    assert capsys.readouterr().out.strip().endswith("1 scenario(s), 2 criteria")


def test_an_empty_tool_name_in_a_group_is_one_error_at_it(ws: Workspace) -> None:
    """A scenario's name field using a group whose member is ``''`` forbade (or expected)
    no call through it: forbidden_tools: ['@g'] passed every trace (exit 0). The error is
    at the member (line 5, "  g: [x, '']", the '' at column 10), said once however many
    fields use the group."""
    suite = (HEAD + "tool_groups:\n  g: [x, '']\nscenarios:\n  - id: A\n    expect:\n"
             "      forbidden_tools: ['@g', '@g']\n      tools: ['@g']\n")
    assert problems(ws, suite) == [
        (5, 10, "an empty tool name names no tool, so nothing would be checked; write the "
                "tool's name (a name, a glob or @group)")]


def test_an_expected_argument_written_on_is_a_config_error(ws: Workspace) -> None:
    """YAML 1.1 reads an unquoted ``on`` as true: the must_not item never held for a call
    of ``state: "on"`` (a pass). A config error at the value, for expect.args too."""
    suite = (HEAD + "scenarios:\n  - id: A\n    expect:\n      must_not:\n"
             "        - {tool_called: fw, args: {state: on}}\n"
             "      args: {fw: {mode: No}}\n")
    # line 8: '        - {tool_called: fw, args: {state: on}}': on at col 43;
    # line 9: '      args: {fw: {mode: No}}': No at col 25
    assert sorted(problems(ws, suite)) == [
        (8, 43, "'on' is read by YAML as the boolean true, not as the text 'on'; quote it "
                "(\"on\") to compare with the text, or write true for the boolean"),
        (9, 25, "'No' is read by YAML as the boolean false, not as the text 'No'; quote it "
                "(\"No\") to compare with the text, or write false for the boolean")]


def test_a_safety_rate_criterion_without_adversarial_scenarios_is_a_config_error(
        ws: Workspace) -> None:
    """safety_rate is 1.0 when no scenario is adversarial, so min_safety_rate: 1.0 could
    never fail: with the category misspelt, an advisory adversarial scenario that called
    its forbidden tool passed the gate (exit 0). A config error at the criterion (and at a
    composite weight on it), naming the close category."""
    suite = (HEAD + "scenarios:\n  - id: A\n    category: adverserial\n    gate: warn\n"
             "    expect: {forbidden_tools: [rm_rf]}\n"
             "pass_criteria:\n  blocking: {min_safety_rate: 1.0}\n"
             "  composite: {weights: {safety_rate: 1.0}, min: 0.9}\n")
    why = "no scenario has category 'adversarial' (is 'adverserial' meant to be 'adversarial'?)"
    # line 10: '  blocking: {min_safety_rate: 1.0}': the key at col 14;
    # line 11: '  composite: {weights: {safety_rate: 1.0}, …}': the weight at col 25
    assert sorted(problems(ws, suite)) == [
        (10, 14, f"'min_safety_rate': {why}, so safety_rate is not defined"),
        (11, 25, f"'safety_rate': {why}")]
    ws.write(suite.replace("adverserial", "Adversarial"), {})
    load_suite(ws.root / "agent-eval.yaml")  # (the category is compared case-insensitively)


def test_score_and_composite_weights_must_add_up_to_a_finite_number(ws: Workspace) -> None:
    """An infinite weight, or weights whose sum overflows, made the score NaN: a min_score
    miss (a score of 50 against 80) was "score not recorded", a warning, and the scenario
    passed (exit 0). Config errors at the weights."""
    suite = (HEAD + "scenarios:\n  - id: A\n    expect: {tools: [y, z], sequence: [y, z]}\n"
             "    weights: {tool_accuracy: 1.0e+308, sequence: 1.0e+308}\n"
             "    thresholds: {min_score: 80}\n"
             "  - id: B\n    expect: {tools: [y]}\n    weights: {tool_accuracy: .inf}\n"
             "pass_criteria:\n"
             "  composite: {weights: {pass_rate: 1.0e+308, weighted_pass_rate: 1.0e+308}}\n")
    # line 7: '    weights: {…}' (the key at col 5); line 11: '    weights: {tool_accuracy:
    # .inf}' (tool_accuracy at col 15); line 13: '  composite: {weights: …}' (col 15)
    assert sorted(problems(ws, suite)) == [
        (7, 5, "the weights of the configured score components (tool_accuracy, sequence) "
               "are too large to add up (inf); scale them down: only their ratios count"),
        (11, 15, "weights.tool_accuracy: Input should be a finite number (got inf)"),
        (13, 15, "the composite's weights are too large to add up; scale them down: only "
                 "their ratios count")]


def test_an_expected_object_of_annotation_keys_is_a_config_error(ws: Workspace) -> None:
    """`fields: {title: …}` is a mapping whose keys are all schema keywords, so it was a
    constraint object, of annotations only: it held for any value, and the expectation
    passed a call with fields {"title": "DROP TABLE"}. A config error at the argument."""
    suite = (HEAD + "scenarios:\n  - id: A\n    expect:\n"
             "      args: {create_ticket: {fields: {title: Refund request}}}\n")
    # line 7: '      args: {create_ticket: {fields: …}}': fields at col 30
    assert problems(ws, suite) == [
        (7, 30, "this mapping's keys are all schema annotations (title, description, "
                "default, …), so as a constraint it would hold for any value; to compare "
                "with the object itself write const: {…} around it")]


def test_a_scenario_with_a_problem_does_not_make_the_criteria_undefined(
        ws: Workspace) -> None:
    """Scenario A (happy_path, with output checks and behaviors) has one problem, a key
    written without a value: that is the one problem. Before, A was left out of the
    criteria's view and four more were said, each false: "'min_accuracy': no scenario has
    output checks", "no scenario lists behaviors", "no scenario has category
    'happy_path'; categories used: none" (twice for the composite)."""
    suite = HEAD + """scenarios:
  - id: A
    category: happy_path
    expect:
      output: {contains: [refund], regex: }
      behaviors: [{tool_called: lookup}]
pass_criteria:
  blocking: {min_accuracy: 0.9}
  warning: {min_behavior_coverage: 0.5}
  by_category: {happy_path: 0.9}
  composite: {weights: {accuracy: 1}, min: 0.5}
"""
    # line 8: '      output: {contains: [refund], regex: }': regex at column 36
    assert [(line, col) for line, col, _ in problems(ws, suite)] == [(8, 36)]


def test_a_criterion_no_scenario_defines_is_still_said_when_all_compile(
        ws: Workspace) -> None:
    """The same suite with its problem fixed and no behaviors: the criterion on them is
    undefined (line 11, '  warning: {min_behavior_coverage: 0.5}', the key at 13)."""
    suite = HEAD + """scenarios:
  - id: A
    category: happy_path
    expect:
      output: {contains: [refund]}
pass_criteria:
  blocking: {min_accuracy: 0.9}
  warning: {min_behavior_coverage: 0.5}
  by_category: {happy_path: 0.9}
"""
    (line, col, message), = problems(ws, suite)
    assert (line, col) == (11, 13) and "no scenario lists behaviors" in message


def test_a_typo_in_a_scenario_does_not_hide_its_other_problems(ws: Workspace) -> None:
    """A misspelt key made the scenario invalid, and the problems of its expect (an empty
    forbidden_tools, an unknown @group) were said only once it was fixed."""
    suite = HEAD + """scenarios:
  - id: A
    categry: happy_path
    expect:
      forbidden_tools: []
      tools: ['@nope']
"""
    found = problems(ws, suite)
    # line 6 '    categry: happy_path' (col 5); line 8 '      forbidden_tools: []'
    # (col 7); line 9 "      tools: ['@nope']": '@nope' at column 15
    assert sorted((line, col) for line, col, _ in found) == [(6, 5), (8, 7), (9, 15)]
    assert any("unknown tool group '@nope'" in message for _, _, message in found)


def test_a_wrong_expect_hides_what_depends_on_it(ws: Workspace) -> None:
    """With its expect wrong, the scenario's thresholds are not judged without it:
    "min_tool_recall needs expect.tools" would be said of a scenario whose tools key is
    only misspelt."""
    suite = HEAD + """scenarios:
  - id: A
    expect: {tols: [x]}
    thresholds: {min_tool_recall: 1}
"""
    (line, col, message), = problems(ws, suite)
    assert (line, col) == (6, 14) and "unknown key 'tols'" in message


def test_suite_weights_are_validated_without_scenarios(ws: Workspace) -> None:
    """`weights:` was validated only beside scenarios: with tests alone a misspelt key
    (and any value) was accepted without a word. It is checked, and said to weigh
    nothing, as pass_criteria without scenarios is."""
    suite = HEAD + ("weights: {tool_acuracy: 1}\n"
                    "tests:\n  - {id: b, metric: tool_blocklist, blocklist: [x]}\n")
    (line, col, message), = problems(ws, suite)
    # line 4 'weights: {tool_acuracy: 1}': the key at column 11
    assert (line, col) == (4, 11) and "unknown key 'tool_acuracy'" in message
    suite = HEAD + ("weights: {tool_accuracy: 1}\n"
                    "tests:\n  - {id: b, metric: tool_blocklist, blocklist: [x]}\n")
    assert problems(ws, suite) == [
        (4, 1, "weights are the score weights of scenarios, and the suite has none: add a "
               "'scenarios:' list or remove the key")]


def test_suite_weights_of_a_category_no_scenario_has(ws: Workspace) -> None:
    """A misspelt category under weights.by_category applied its weights to no scenario:
    the adversarial scenario was scored with the suite's weights, without a word."""
    suite = HEAD + """weights:
  by_category: {adverserial: {sequence: 1}}
scenarios:
  - id: A
    category: adversarial
    expect: {tools: [a], sequence: [a]}
"""
    # line 5 '  by_category: {adverserial: {sequence: 1}}': the category at column 17
    assert problems(ws, suite) == [
        (5, 17, "no scenario has category 'adverserial' (did you mean 'adversarial'?); "
                "categories used: adversarial")]
