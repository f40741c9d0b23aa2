"""The suite loader: every problem as FILE:LINE:COL with the key named, all at once."""

from __future__ import annotations

import os
import pickle
import re
from pathlib import Path

import pytest
from tests.conftest import O_BINARY, shared_path, write_files

from agent_eval.api import evaluate, load_suite, load_traces, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.errors import ConfigError
from agent_eval.suite import CONFIG_NAMES, find_config

POLICY = """\
version: "1"
tools:
  apply_discount:
    arguments:
      percent: {type: number, min: 0, max: 30}
"""
PROBLEM = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<msg>.+)$", re.S)


def problems_of(tmp_path: Path, suite: str, extra: dict[str, str] | None = None,
                name: str = "agent-eval.yaml") -> list[tuple[str, int, int, str]]:
    (tmp_path / ".git").mkdir(exist_ok=True)  # the repository root: paths relative to it
    write_files(tmp_path, {name: suite, **(extra or {})})
    with pytest.raises(ConfigError) as exc:
        load_suite(tmp_path / name)
    out = []
    for p in exc.value.problems:
        m = PROBLEM.match(p)
        assert m is not None, f"not FILE:LINE:COL: message: {p!r}"
        out.append((m["file"], int(m["line"]), int(m["col"]), m["msg"]))
    assert str(exc.value) == "\n".join(exc.value.problems)
    return out


def one(problems: list[tuple[str, int, int, str]], word: str) -> tuple[str, int, int, str]:
    hits = [p for p in problems if word in p[3]]
    assert len(hits) == 1, (word, problems)
    return hits[0]


# ------------------------------------------------------------------ single problems
def test_a_date_that_does_not_exist_is_text_in_the_suite(tmp_path: Path) -> None:
    """``suite: 2001-02-30``: the suite reads it as text (dates stay strings) and the run's
    rule inventory no longer stops on it (datetime's ValueError was an internal error)."""
    (tmp_path / ".git").mkdir()
    write_files(tmp_path, {"agent-eval.yaml": "suite: 2001-02-30\ntraces: t.jsonl\ntests:\n"
                           "  - id: b\n    metric: tool_blocklist\n    blocklist: [x]\n",
                           "t.jsonl": '{"type": "tool_call", "tool": "y"}\n'})
    suite = load_suite(tmp_path / "agent-eval.yaml")
    assert suite.name == "2001-02-30"
    files, errors = suite_sources(suite)
    results = evaluate_files(suite, files, errors, timings=False)
    assert (results.verdict, results.counts["traces"]) == ("pass", 1)


def test_a_mapping_of_string_and_number_keys_in_a_list_is_inventoried(tmp_path: Path) -> None:
    """A must_not behaviour whose ``args`` name the arguments ``amount`` and ``2.5`` (a
    number key, as YAML reads it): the rule inventory's ``json.dumps(sort_keys=True)``
    could not sort a string beside a float (a TypeError, an internal error after the suite
    had loaded). The behaviour happened (``2.5`` is 900), so the scenario fails."""
    (tmp_path / ".git").mkdir()
    write_files(tmp_path, {
        "agent-eval.yaml": "suite: s\ntraces: t.jsonl\nscenarios:\n  - id: A\n    expect:\n"
                           "      must_not:\n        - tool_called: refund\n"
                           "          args: {amount: {min: 5}, 2.5: {min: 500}}\n",
        "t.jsonl": '{"type": "trace_start", "trace_id": "a", "scenario": "A"}\n'
                   '{"type": "tool_call", "tool": "refund", "arguments": '
                   '{"amount": 10, "2.5": 900}}\n'
                   '{"type": "trace_end", "output": "done"}\n'})
    suite = load_suite(tmp_path / "agent-eval.yaml")
    files, errors = suite_sources(suite)
    results = evaluate_files(suite, files, errors, timings=False)
    assert (results.verdict, results.counts["traces"]) == ("fail", 1)
    assert [f.rule for f in results.findings] == ["scenario/must_not"]


def test_unknown_top_level_key_did_you_mean(tmp_path: Path) -> None:
    suite = "suite: s\ntset:\n  - id: a\n"
    probs = problems_of(tmp_path, suite)
    assert one(probs, "'tset'")[:3] == ("agent-eval.yaml", 2, 1)
    assert "did you mean 'tests'" in one(probs, "'tset'")[3]


def test_unknown_key_in_a_test_did_you_mean(tmp_path: Path) -> None:
    suite = ("suite: s\ntests:\n  - id: args\n    metric: args_valid\n"
             "    polcy: policies/p.yaml\n")
    probs = problems_of(tmp_path, suite, {"policies/p.yaml": POLICY})
    f, line, col, msg = one(probs, "'polcy'")
    assert (f, line, col) == ("agent-eval.yaml", 5, 5)
    assert "unknown key 'polcy'" in msg and "did you mean 'policy'" in msg


def test_unknown_key_in_a_sequence_rule_did_you_mean(tmp_path: Path) -> None:
    suite = """\
suite: s
tests:
  - id: order
    metric: sequence_valid
    rules:
      - type: require
        tool: login
      - type: before
        fisrt: login
        then: pay
"""
    probs = problems_of(tmp_path, suite)
    f, line, col, msg = one(probs, "'fisrt'")
    assert (f, line, col) == ("agent-eval.yaml", 9, 9)
    assert "did you mean 'first'" in msg
    # 'first' itself is missing: reported at the rule item (line 8)
    missing = [p for p in probs if "'first'" in p[3] and "fisrt" not in p[3]]
    assert [(p[1], p[2]) for p in missing] == [(8, 9)]


def test_unknown_metric_did_you_mean(tmp_path: Path) -> None:
    suite = "suite: s\ntests:\n  - id: a\n    metric: args_vaild\n"
    f, line, col, msg = one(problems_of(tmp_path, suite), "args_vaild")
    assert (f, line, col) == ("agent-eval.yaml", 4, 5)
    assert "did you mean 'args_valid'" in msg


def test_unknown_rule_type(tmp_path: Path) -> None:
    suite = ("suite: s\ntests:\n  - id: a\n    metric: sequence_valid\n    rules:\n"
             "      - type: befor\n        first: a\n        then: b\n")
    f, line, col, msg = one(problems_of(tmp_path, suite), "'befor'")
    assert (f, line, col) == ("agent-eval.yaml", 6, 9)  # the `type:` key
    assert "did you mean 'before'" in msg
    for known in ("require", "before", "count", "blocklist", "allowlist"):
        assert known in msg


def test_missing_suite(tmp_path: Path) -> None:
    suite = "version: '1'\ntests:\n  - id: b\n    metric: tool_blocklist\n    blocklist: [x]\n"
    (f, line, col, msg), = problems_of(tmp_path, suite)
    assert (f, line, col) == ("agent-eval.yaml", 1, 1)
    assert "'suite'" in msg and "missing" in msg


def test_missing_policy_file_points_at_the_policy_line(tmp_path: Path) -> None:
    suite = ("suite: s\ntests:\n  - id: args\n    metric: args_valid\n"
             "    policy: policies/nope.yaml\n")
    (f, line, col, msg), = problems_of(tmp_path, suite, name="sub/agent-eval.yaml")
    assert (f, line, col) == ("sub/agent-eval.yaml", 5, 5)
    assert "policies/nope.yaml" in msg
    assert "relative to" in msg and "sub/agent-eval.yaml" in msg


def test_count_rule_without_min_or_max(tmp_path: Path) -> None:
    suite = ("suite: s\ntests:\n  - id: a\n    metric: sequence_valid\n    rules:\n"
             "      - type: count\n        tool: api_call\n")
    (f, line, col, msg), = problems_of(tmp_path, suite)
    assert (f, line, col) == ("agent-eval.yaml", 6, 9)
    assert "'min'" in msg and "'max'" in msg
    assert "rules[0]" in msg


def test_count_rule_min_above_max(tmp_path: Path) -> None:
    suite = ("suite: s\ntests:\n  - id: a\n    metric: sequence_valid\n    rules:\n"
             "      - type: count\n        tool: api_call\n        min: 5\n        max: 2\n")
    (_, line, col, msg), = problems_of(tmp_path, suite)
    assert (line, col) == (6, 9)
    assert "min (5)" in msg and "max (2)" in msg


def test_duplicate_test_ids(tmp_path: Path) -> None:
    suite = """\
suite: s
tests:
  - id: block
    metric: tool_blocklist
    blocklist: [a]
  - id: block
    metric: tool_blocklist
    blocklist: [b]
"""
    (f, line, col, msg), = problems_of(tmp_path, suite)
    assert (f, line, col) == ("agent-eval.yaml", 6, 5)
    assert "duplicate test id 'block'" in msg and "line 3" in msg


def test_duplicate_ids_by_default_metric_name(tmp_path: Path) -> None:
    suite = ("suite: s\ntests:\n  - metric: tool_blocklist\n    blocklist: [a]\n"
             "  - metric: tool_blocklist\n    blocklist: [b]\n")
    (_, line, col, msg), = problems_of(tmp_path, suite)
    assert (line, col) == (5, 5)
    assert "'tool_blocklist'" in msg


def test_severity_critical(tmp_path: Path) -> None:
    suite = ("suite: s\ntests:\n  - id: a\n    metric: tool_blocklist\n    blocklist: [x]\n"
             "    severity: critical\n")
    (f, line, col, msg), = problems_of(tmp_path, suite)
    assert (f, line, col) == ("agent-eval.yaml", 6, 5)
    assert "severity" in msg and "critical" in msg


def test_version_2(tmp_path: Path) -> None:
    suite = ("suite: s\nversion: 2\ntests:\n  - id: a\n    metric: tool_blocklist\n"
             "    blocklist: [x]\n")
    (f, line, col, msg), = problems_of(tmp_path, suite)
    assert (f, line, col) == ("agent-eval.yaml", 2, 1)
    assert "version" in msg and "'2'" in msg


def test_scenario_problems_point_at_their_key(tmp_path: Path) -> None:
    # scenarios are validated key by key (tests/scenarios/ has the rest)
    suite = ("suite: s\ntests:\n  - id: a\n    metric: tool_blocklist\n    blocklist: [x]\n"
             "scenarios:\n  - id: REFUND-001\n    expect:\n      sequence_mode: sometimes\n")
    (f, line, col, msg), = problems_of(tmp_path, suite)
    assert (f, line, col) == ("agent-eval.yaml", 9, 7)
    assert "sequence_mode" in msg and "subsequence" in msg


def test_unknown_key_in_output(tmp_path: Path) -> None:
    suite = ("suite: s\ntests:\n  - metric: tool_blocklist\n    blocklist: x\n"
             "output:\n  formt: [sarif]\n")
    (f, line, col, msg), = problems_of(tmp_path, suite)
    assert (f, line, col) == ("agent-eval.yaml", 6, 3)
    assert "did you mean 'format'" in msg


def test_no_tests(tmp_path: Path) -> None:
    (_, line, col, msg), = problems_of(tmp_path, "suite: s\ntests: []\n")
    assert (line, col) == (2, 1)
    assert "no tests" in msg


def test_a_tool_lock_alone_is_no_test(tmp_path: Path) -> None:
    """`tool_lock:` (no value, no servers) made the suite live, so it was not "no tests":
    it checked nothing and passed with exit code 0."""
    (_, line, col, msg), = problems_of(tmp_path, "suite: s\ntool_lock:\n")
    assert (line, col, msg) == (1, 1, "the suite has no tests; add a 'tests:' list (see "
                                      "docs/config.md)")


@pytest.mark.parametrize(("body", "at", "lists"), [
    ("tests: []\nscenarios: []\n", (2, 1), "'scenarios:' list is"),
    ("scenarios: []\n", (2, 1), "'scenarios:' list is"),
    ("probes: []\n", (2, 1), "'probes:' list is"),
    ("scenarios: []\nprobes: []\n", (2, 1), "'scenarios:' and 'probes:' lists are"),
    # a `tool_lock:` with no value beside them made the suite live: it checked nothing
    # and passed (exit 0); it checks the tools of `servers:`, and there are none
    ("probes: []\ntool_lock:\n", (2, 1), "'probes:' list is"),
])
def test_empty_scenarios_or_probes_beside_no_tests_check_nothing(
        tmp_path: Path, body: str, at: tuple[int, int], lists: str) -> None:
    """An empty ``scenarios:`` (or ``probes:``) list is no check: with no tests the suite
    could only pass (it did, with exit code 0), so it is the "no tests" config error, at
    the first of those keys."""
    (_, line, col, msg), = problems_of(tmp_path, "suite: s\n" + body)
    assert (line, col) == at
    assert f"the suite has no tests, and its {lists} empty" in msg
    assert "add a 'tests:' list or a scenario" in msg


@pytest.mark.parametrize(("data", "where", "reason"), [
    # "tests: [dé" is 10 characters (the "é" one of its two bytes): the bad byte is
    # column 11
    ("suite: s\ntests: [d\u00e9\udcc3]\n", "agent-eval.yaml:2:11",
     "not UTF-8 text: byte 0xc3 at line 2, column 11; save the file as UTF-8"),
    ("\ufeffsuite: s\n", "agent-eval.yaml:1:1", "not UTF-8 text: it starts with a "
     "UTF-16 byte order mark; save the file as UTF-8"),
])
def test_a_suite_file_that_is_not_utf8_is_an_error_at_its_first_bad_byte(
        tmp_path: Path, data: str, where: str, reason: str) -> None:
    """It was "agent-eval.yaml: cannot read the config: 'utf-8' codec can't decode byte
    0xc3 in position 19: invalid continuation byte": no line, no column, nothing to do."""
    encoding = "utf-16-le" if data.startswith("\ufeff") else "utf-8"
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent-eval.yaml").write_bytes(data.encode(encoding, "surrogateescape"))
    with pytest.raises(ConfigError) as exc:
        load_suite(tmp_path / "agent-eval.yaml")
    assert exc.value.problems == [f"{where}: cannot read the config: {reason}"]


def test_a_policy_that_is_not_utf8_names_its_line_and_column(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write_files(tmp_path, {"agent-eval.yaml": "suite: s\ntests:\n  - id: a\n"
                                              "    metric: args_valid\n    policy: p.yaml\n"})
    # "    description: caf" is 20 characters: the Latin-1 "é" is column 21
    (tmp_path / "p.yaml").write_bytes(b"tools:\n  x:\n    description: caf\xe9\n")
    (f, line, col, msg), = problems_of(tmp_path, (tmp_path / "agent-eval.yaml").read_text())
    assert (f, line, col) == ("agent-eval.yaml", 5, 5)
    assert msg.startswith("policy file 'p.yaml' cannot be read (not UTF-8 text: byte 0xe9 "
                          "at line 3, column 21; save the file as UTF-8")


def test_a_folder_named_as_a_policy_or_schema_file_is_said_to_be_a_folder(
        tmp_path: Path) -> None:
    """It was "([Errno 21] Is a directory: 3: schemas)": the number of the open file."""
    (tmp_path / "schemas").mkdir()
    problems = problems_of(tmp_path, (
        "suite: s\ntests:\n  - {id: a, metric: args_valid, policy: schemas}\n"
        "scenarios:\n  - id: X\n    expect: {output: {json_schema: schemas}}\n"))
    assert [(line, col, msg) for _, line, col, msg in problems] == [
        (3, 33, "policy file 'schemas' cannot be read (a folder, not a file: schemas); the "
                "path is relative to the folder of agent-eval.yaml"),
        (6, 23, "JSON Schema file 'schemas' cannot be read (a folder, not a file); the path "
                "is relative to the folder of the suite file")]


def test_policy_file_problems_point_into_the_policy(tmp_path: Path) -> None:
    suite = "suite: s\ntests:\n  - id: a\n    metric: args_valid\n    policy: p.yaml\n"
    policy = "tools:\n  t:\n    argumnts:\n      x: {type: number}\n"
    (f, line, col, msg), = problems_of(tmp_path, suite, {"p.yaml": policy})
    assert (f, line, col) == ("p.yaml", 3, 5)
    assert "'argumnts'" in msg and "did you mean 'arguments'" in msg


def test_a_broken_policy_used_twice_is_reported_once(tmp_path: Path) -> None:
    suite = ("suite: s\ntests:\n  - id: a\n    metric: args_valid\n    policy: p.yaml\n"
             "  - id: b\n    metric: args_valid\n    policy: p.yaml\n")
    policy = "tools:\n  t:\n    bad_key: 1\n"
    assert len(problems_of(tmp_path, suite, {"p.yaml": policy})) == 1


def test_every_policy_problem_in_one_run(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    # issue 10 §6: maxium, min_lenght and type: strng took three runs to find
    suite = "suite: s\ntests:\n  - id: a\n    metric: args_valid\n    policy: p.yaml\n"
    policy = """\
tools:
  apply_discount:
    arguments:
      percent: {type: number, maxium: 30}
      code: {type: string, min_lenght: 3}
  send_email:
    arguments:
      to: {type: strng}
"""
    # line 4: '{' col 16, 'maxium' col 31; line 5: 'min_lenght' col 28;
    # line 8: '{' col 11, 'type' col 12
    assert problems_of(tmp_path, suite, {"p.yaml": policy}) == [
        ("p.yaml", 4, 31, "unknown schema keyword 'maxium' (did you mean 'maximum'?)"),
        ("p.yaml", 5, 28, "unknown schema keyword 'min_lenght' (did you mean "
                          "'min_length'?)"),
        ("p.yaml", 8, 12, "unknown type 'strng'; use one of null, boolean, object, array, "
                          "number, string, integer (did you mean 'string'?)"),
    ]
    from agent_eval._cli import main

    assert main(["validate", "--config", str(tmp_path / "agent-eval.yaml")]) == 2
    err = capsys.readouterr().err
    assert [line.split(": ")[1] for line in err.splitlines()] == [
        "p.yaml:4:31", "p.yaml:5:28", "p.yaml:8:12"]


def test_a_typo_in_the_test_does_not_hide_its_policy_problems(tmp_path: Path) -> None:
    """All problems at once (docs/config.md): a misspelt key beside `policy:` made the
    test invalid, and its policy's problems were found only after fixing it."""
    suite = ("suite: s\ntests:\n  - id: a\n    metric: args_valid\n    policy: p.yaml\n"
             "    strictt: true\n")
    policy = "tools:\n  t:\n    arguments:\n      x: {type: strng, maxium: 3}\n"
    # line 6 col 5: strictt; line 4: '{' col 10, 'type' col 11, 'maxium' col 24
    assert problems_of(tmp_path, suite, {"p.yaml": policy}) == [
        ("agent-eval.yaml", 6, 5, "unknown key 'strictt' (did you mean 'strict'?); allowed: "
                                  "description, id, metric, policy, severity, strict, tools"),
        ("p.yaml", 4, 11, "unknown type 'strng'; use one of null, boolean, object, array, "
                          "number, string, integer (did you mean 'string'?)"),
        ("p.yaml", 4, 24, "unknown schema keyword 'maxium' (did you mean 'maximum'?)"),
    ]


def test_a_wrong_top_level_key_does_not_hide_an_unknown_trace_format(tmp_path: Path) -> None:
    """All problems at once (docs/config.md): with a limit out of range beside it, a
    misspelt `format:` was said only once the limit was fixed (two runs for one file)."""
    suite = ("suite: s\nformat: natve\nlimits:\n  max_depth: 500\ntests:\n"
             "  - id: a\n    metric: tool_blocklist\n    blocklist: [x]\n")
    found = problems_of(tmp_path, suite)
    # line 2 'format: natve' (col 1); line 4 '  max_depth: 500' (col 3)
    assert sorted((line, col) for _, line, col, _ in found) == [(2, 1), (4, 3)]
    assert one(found, "natve")[3].startswith(
        "unknown trace format 'natve' (did you mean 'native'?); use auto or one of ")


EMPTY_LIST = ("an empty list names no tool, so nothing would be checked; name at least one "
              "tool (a name, a glob or @group)")


def test_a_typo_in_the_test_does_not_hide_its_other_problems(tmp_path: Path) -> None:
    """All problems at once (docs/config.md): a misspelt key or a bad severity made the
    test invalid, and its empty blocklist, its rule's empty list and its unknown @group
    were said only once that was fixed (three runs for one file)."""
    suite = ("suite: s\ntests:\n"
             "  - id: a\n    metric: tool_blocklist\n    blocklist: []\n"
             "    severity: warn\n"
             "  - id: b\n    metric: sequence_valid\n    descripton: x\n    rules:\n"
             "      - {type: require, tools: []}\n"
             "      - {type: never_after, first: '@secrets', then: upload}\n")
    found = [(line, col, msg) for _, line, col, msg in problems_of(tmp_path, suite)]
    # test a: severity at line 6, blocklist at line 5 (col 5); test b: descripton at
    # line 9; line 11 '      - {type: require, tools: []}': the key tools at column 25;
    # line 12 '      - {type: never_after, first: '@secrets', then: upload}': the key
    # first at column 29
    assert [(line, col) for line, col, _ in found] == [(6, 5), (5, 5), (9, 5), (11, 25),
                                                       (12, 29)]
    assert found[1][2] == EMPTY_LIST and found[3][2] == EMPTY_LIST
    assert found[4][2].startswith("unknown tool group '@secrets'")


def test_a_wrong_key_the_test_cannot_do_without_hides_nothing_else(tmp_path: Path) -> None:
    """Only the wrong key itself is said when the rest cannot be checked without it (a
    required key, or `strict`, without which a policy of no tools is a problem)."""
    suite = ("suite: s\ntests:\n  - id: a\n    metric: tool_blocklist\n    blocklist: 3\n"
             "    severity: warn\n"
             "  - id: b\n    metric: args_valid\n    policy: p.yaml\n    strict: maybe\n")
    found = problems_of(tmp_path, suite, {"p.yaml": "tools: {}\n"})
    # blocklist (line 5) and severity (line 6) of a; strict (line 10) of b, and not
    # "policy 'p.yaml' has no tools"
    assert sorted((line, col) for _, line, col, _ in found) == [(5, 5), (6, 5), (10, 5)]


def test_an_invalid_test_with_a_missing_policy_says_both(tmp_path: Path) -> None:
    suite = ("suite: s\ntests:\n  - id: a\n    metric: args_valid\n    policy: nope.yaml\n"
             "    severity: fatal\n")
    found = problems_of(tmp_path, suite)
    assert [(f, line, col) for f, line, col, _ in found] == [
        ("agent-eval.yaml", 6, 5), ("agent-eval.yaml", 5, 5)]  # the keys
    assert "policy file 'nope.yaml' cannot be read (not found" in found[1][3]


def test_policy_structure_and_schema_problems_together_in_file_order(tmp_path: Path) -> None:
    suite = "suite: s\ntests:\n  - id: a\n    metric: args_valid\n    policy: p.yaml\n"
    policy = """\
tools:
  a:
    arguments:
      x: {type: number, exclusive_max: ten}
      y:
        properties:
          z: {pattern: "(", max_items: -1}
    additional_arguments: maybe
  b:
    descripton: typo
    schema: {type: object, required: [q], dependencies: {}}
"""
    got = [(line, col, msg.split(" (")[0]) for _, line, col, msg in
           problems_of(tmp_path, suite, {"p.yaml": policy})]
    assert got == [
        (4, 25, "'exclusive_max' must be a number"),
        (7, 15, "invalid regular expression: missing ):"),  # RE2's words (security.md)
        (7, 29, "'max_items' must be a whole number ≥ 0"),
        (8, 5, "tools.a.additional_arguments: Input should be a valid boolean, unable to "
               "interpret input"),
        (10, 5, "unknown key 'descripton'"),
        (11, 43, "'dependencies' is not supported: use dependentRequired or "
                 "dependentSchemas"),
    ]


def test_invalid_yaml_in_the_suite(tmp_path: Path) -> None:
    (f, line, _, msg), = problems_of(tmp_path, "suite: s\ntests: [\n")
    assert f == "agent-eval.yaml" and line == 3
    assert msg.startswith("invalid YAML")


# ------------------------------------------------------------------ all together
def test_several_problems_are_reported_together(tmp_path: Path) -> None:
    suite = """\
version: 2
suite: s
tset: x
tests:
  - id: a
    metric: args_valid
    polcy: policies/p.yaml
  - id: b
    metric: sequence_valid
    rules:
      - type: before
        fisrt: x
        then: y
      - type: nosuch
        tool: x
      - type: count
        tool: x
  - id: c
    metric: args_vaild
  - id: d
    metric: args_valid
    policy: policies/missing.yaml
  - id: d
    metric: tool_blocklist
    blocklist: [x]
  - id: e
    metric: tool_blocklist
    blocklist: [x]
    severity: critical
scenarios:
  - id: x
    expct: {}
"""
    probs = problems_of(tmp_path, suite, {"policies/p.yaml": POLICY})
    where = {(p[1], p[2]) for p in probs}
    expected = {
        (1, 1),  # version: 2
        (3, 1),  # tset
        (7, 5),  # polcy
        (12, 9),  # fisrt
        (14, 9),  # type: nosuch
        (16, 9),  # count without min/max
        (19, 5),  # args_vaild
        (22, 5),  # policy file missing
        (23, 5),  # duplicate id d
        (29, 5),  # severity: critical
        (32, 5),  # expct
    }
    assert expected <= where, probs
    assert all(p[0] == "agent-eval.yaml" for p in probs)
    messages = " | ".join(p[3] for p in probs)
    for word in ("'tset'", "'polcy'", "'fisrt'", "'nosuch'", "args_vaild", "missing.yaml",
                 "duplicate test id 'd'", "critical", "did you mean 'expect'"):
        assert word in messages


# ---------------------------------------------------------------- finding the config
@pytest.mark.parametrize("present", [
    ["agent-eval.yaml", "agent-eval.yml", ".agent-eval.yaml", "mcp-eval.yaml"],
    ["agent-eval.yml", ".agent-eval.yaml", "mcp-eval.yaml"],
    [".agent-eval.yaml", "mcp-eval.yaml"],
    ["mcp-eval.yaml"],
])
def test_config_lookup_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             present: list[str]) -> None:
    assert CONFIG_NAMES == ("agent-eval.yaml", "agent-eval.yml", ".agent-eval.yaml",
                            "mcp-eval.yaml")
    for name in present:
        # the suite's name says which file was read
        write_files(tmp_path, {name: f"suite: from-{name}\ntests:\n  - metric: tool_blocklist\n"
                               "    blocklist: [x]\n"})
    monkeypatch.chdir(tmp_path)
    assert find_config() == tmp_path / present[0]
    assert load_suite().name == f"from-{present[0]}"


def test_no_config_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as exc:
        load_suite()
    assert "agent-eval.yaml" in str(exc.value) and "mcp-eval.yaml" in str(exc.value)


def test_paths_are_relative_to_the_config_folder(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    write_files(tmp_path, {
        "evals/agent-eval.yaml": "suite: s\ntraces: traces/*.jsonl\ntests:\n"
                                 "  - id: args\n    metric: args_valid\n"
                                 "    policy: policies/p.yaml\n",
        "evals/policies/p.yaml": POLICY,
        "evals/traces/t.jsonl":
            '{"type":"tool_call","tool":"apply_discount","arguments":{"percent":50}}\n',
    })
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    suite = load_suite(Path("..") / "evals" / "agent-eval.yaml")
    assert suite.file == "evals/agent-eval.yaml"
    files, errors = suite_sources(suite)
    assert errors == []
    assert [f.file for f in files] == ["evals/traces/t.jsonl"]
    results = evaluate(suite, load_traces([str(tmp_path / "evals/traces/t.jsonl")], suite))
    (v,) = results.violations
    assert v.config.file == "evals/policies/p.yaml"
    # "      percent: {type: number, min: 0, max: 30}": "max" starts at column 39
    assert (v.config.line, v.config.col) == (5, 39)
    assert v.trace is not None and v.trace.file == "evals/traces/t.jsonl"


# ---------------------------------------------------------------------- the seed
SEED_SUITE = """\
# mcp-eval.yaml
version: "1"
suite: customer-service-agent

tests:
  # Validate all tool arguments
  - id: args_valid
    metric: args_valid
    policy: policies/customer.yaml

  # Enforce authentication flow
  - id: auth_flow
    metric: sequence_valid
    rules:
      - type: require
        tool: authenticate_user
      - type: before
        first: authenticate_user
        then: [get_customer, update_customer]

  # Block dangerous operations
  - id: no_destructive
    metric: tool_blocklist
    blocklist:
      - delete_customer
      - purge_data
      - admin_*

output:
  format: [sarif, junit]
"""
SEED_POLICY = """\
tools:
  apply_discount:
    arguments:
      percent:
        type: number
        min: 0
        max: 30
"""


def test_the_embedded_seed_is_the_seed_docs_block() -> None:
    """The product's first seed document (beside the repository, in ../shared/seeds)."""
    doc = shared_path("seeds", "000_4232e42fa5cc0fe8.txt").read_text(encoding="utf-8")
    block = doc.split("## Combining Metrics", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    assert block == SEED_SUITE


def test_the_seed_suite_loads_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {"mcp-eval.yaml": SEED_SUITE, "policies/customer.yaml": SEED_POLICY,
                     "t.jsonl": '{"type":"tool_call","tool":"apply_discount",'
                                '"arguments":{"percent":50}}\n'})
    monkeypatch.chdir(tmp_path)
    suite = load_suite()  # found as mcp-eval.yaml
    assert suite.name == "customer-service-agent"
    assert [t.id for t in suite.tests] == ["args_valid", "auth_flow", "no_destructive"]
    assert [t.metric for t in suite.tests] == ["args_valid", "sequence_valid", "tool_blocklist"]
    assert list(suite.model.output.format) == ["sarif", "junit"]
    results = evaluate(suite, load_traces(["t.jsonl"], suite))
    by_rule = {v.rule: v for v in results.violations}
    # the seed's example: percent 50 against max 30 (policy line 7), and no authenticate_user
    assert set(by_rule) == {"args_valid/maximum", "sequence_valid/require"}
    m = by_rule["args_valid/maximum"]
    assert (m.tool, m.argument, m.value, m.constraint) == ("apply_discount", "percent", 50,
                                                           "max: 30")
    assert (m.config.file, m.config.line, m.config.col) == ("policies/customer.yaml", 7, 9)
    r = by_rule["sequence_valid/require"]
    assert (r.config.file, r.config.line, r.config.col) == ("mcp-eval.yaml", 15, 9)
    assert results.verdict == "fail"


# ---------------------------------------------------------------------- pickling
def test_suite_pickles_with_its_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {
        "agent-eval.yaml": "suite: s\ntests:\n  - id: args\n    metric: args_valid\n"
                           "    policy: p.yaml\n  - id: block\n    metric: tool_blocklist\n"
                           "    blocklist: [rm_*]\n",
        "p.yaml": POLICY,
        "t.jsonl": '{"type":"tool_call","tool":"apply_discount","arguments":{"percent":50}}\n'
                   '{"type":"tool_call","tool":"rm_rf","arguments":{}}\n',
    })
    monkeypatch.chdir(tmp_path)
    suite = load_suite("agent-eval.yaml")
    data = pickle.dumps(suite)
    before = evaluate(suite, load_traces(["t.jsonl"], suite)).to_dict()

    # the files on disk change or vanish: the pickled suite keeps what it compiled
    (tmp_path / "p.yaml").write_text(POLICY.replace("max: 30", "max: 100"), encoding="utf-8")
    copy = pickle.loads(data)
    (tmp_path / "p.yaml").unlink()
    (tmp_path / "agent-eval.yaml").unlink()
    copy2 = pickle.loads(data)
    for other in (copy, copy2):
        after = evaluate(other, load_traces(["t.jsonl"], other)).to_dict()
        for d in (before, after):
            for t in d["tests"]:
                t["duration_ms"] = 0
        assert after == before
    rules = sorted(v["rule"] for t in before["tests"] for v in t["violations"])
    assert rules == ["args_valid/maximum", "tool_blocklist"]
    # and pickles again
    assert pickle.loads(pickle.dumps(copy2)).name == "s"


def test_config_not_found_by_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load_suite(tmp_path / "nope.yaml")
    assert "not found" in str(exc.value)


def test_loading_by_path_ignores_the_cwd(tmp_path: Path) -> None:
    write_files(tmp_path, {"a/agent-eval.yaml": "suite: s\ntests:\n  - metric: tool_blocklist\n"
                                          "    blocklist: x\n"})
    cwd = os.getcwd()
    suite = load_suite(tmp_path / "a" / "agent-eval.yaml")
    assert os.getcwd() == cwd
    assert suite.base_dir == (tmp_path / "a").resolve()


def test_config_files_are_read_where_the_system_has_no_o_nonblock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, windows_open: list[int]) -> None:
    """Windows has no ``os.O_NONBLOCK`` and opens a file as text without ``O_BINARY``: the
    suite and its policy still load there, read as bytes."""
    monkeypatch.delattr(os, "O_NONBLOCK")
    write_files(tmp_path, {
        ".git/HEAD": "",
        "agent-eval.yaml": "suite: s\r\ntraces: t.jsonl\r\ntests:\r\n"
                           "  - {id: a, metric: args_valid, policy: p.yaml}\r\n",
        "p.yaml": "version: '1'\r\ntools:\r\n  x:\r\n    arguments:\r\n"
                  "      n: {type: integer}\r\n",
    })
    suite = load_suite(tmp_path / "agent-eval.yaml")
    assert [t.id for t in suite.tests] == ["a"]
    assert len(windows_open) >= 2 and all(f & O_BINARY for f in windows_open)


def test_a_config_path_that_is_no_regular_file_says_what_it_is(tmp_path: Path) -> None:
    """A FIFO, /dev/null or a folder under --dialect native were all "config file not
    found": the path is there, and the message sent the user looking for a typo."""
    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "cases").mkdir()
    expected = {
        str(tmp_path / "fifo.yaml"): "not a regular file (a FIFO, socket or device); give the "
                                     "suite file",
        os.devnull: "not a regular file (a FIFO, socket or device); give the suite file",
        str(tmp_path / "cases"): "a folder, not a config file; give the suite file (a folder "
                                 "is read as EvalView test cases only with --dialect auto or "
                                 "evalview)",
        str(tmp_path / "missing.yaml"): "config file not found"}
    for path, why in expected.items():
        with pytest.raises(ConfigError) as exc:
            load_suite(path, dialect="native")
        assert exc.value.problems == [f"{path}: {why}"]


def test_a_union_field_says_what_is_wrong_once(tmp_path: Path) -> None:
    """``traces`` and ``tools`` take a glob or a list of globs: a list with a number in it
    was also "traces: Input should be a valid string", though the list is fine but for
    its item, and a mapping was two problems at one key."""
    suite = ("suite: s\ntraces: [a.jsonl, 3]\ntests:\n  - id: a\n    metric: args_valid\n"
             "    policy: p.yaml\n    tools: {x: 1}\n")
    # line 2 'traces: [a.jsonl, 3]': the 3 at column 19; line 7 '    tools: {x: 1}'
    assert problems_of(tmp_path, suite, {"p.yaml": "tools: {x: {}}\n"}) == [
        ("agent-eval.yaml", 2, 19, "traces[1]: Input should be a valid string (got 3); "
                                   "quote the value to write it as text"),
        ("agent-eval.yaml", 7, 5, "tools: Input should be a valid string or a valid list"),
    ]


def test_a_number_where_a_text_is_wanted_says_to_quote_it(tmp_path: Path) -> None:
    """``suite: 2024`` and ``id: 123`` are numbers to YAML: the problem said what was
    wanted, not how to write it."""
    suite = ("suite: 2024\ntests:\n  - id: 123\n    metric: tool_blocklist\n"
             "    blocklist: [x]\n")
    assert problems_of(tmp_path, suite) == [
        ("agent-eval.yaml", 1, 1, "suite: Input should be a valid string (got 2024); quote "
                                  "the value to write it as text"),
        ("agent-eval.yaml", 3, 5, "id: Input should be a valid string (got 123); quote the "
                                  "value to write it as text"),
    ]
