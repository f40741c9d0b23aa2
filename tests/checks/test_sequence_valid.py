"""sequence_valid (docs/config.md): example tests per rule type with exact findings, and a
property test per rule type against a brute-force reference written from the table."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_eval.api import evaluate, load_suite, load_traces
from agent_eval.checks.base import CompileContext
from agent_eval.checks.sequence_valid import SequenceValidTest, compile_test
from agent_eval.errors import ConfigError
from agent_eval.findings import Finding
from agent_eval.model import Location, ToolCall, Trace
from agent_eval.yamlpos import Positions

TRACE_FILE = "traces/t.jsonl"


def make_trace(names: list[str], end_line: int | None = None, trace_id: str = "t1") -> Trace:
    """Call k (0-based) is recorded on line k + 1; the trace ends on ``end_line``
    (default: one line after the last call, as a trace_end line would)."""
    end = len(names) + 1 if end_line is None else end_line
    return Trace(
        id=trace_id,
        source=TRACE_FILE,
        location=Location(TRACE_FILE, 1),
        end_location=Location(TRACE_FILE, end),
        tool_calls=[ToolCall(n, {}, Location(TRACE_FILE, k + 1)) for k, n in enumerate(names)],
    )


def suite_from(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "agent-eval.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return load_suite(path)


def run(tmp_path: Path, rules_yaml: str, names: list[str], header: str = "") -> list[Finding]:
    """A suite whose rules start on line 7 (the first ``- type:`` line is line 7)."""
    text = (
        'version: "1"\n'
        f"suite: s{header}\n"
        "tests:\n"
        "  - id: seq\n"
        "    metric: sequence_valid\n"
        "    rules:\n"
        + textwrap.indent(textwrap.dedent(rules_yaml).strip("\n"), "      ")
        + "\n"
    )
    (tmp_path / "agent-eval.yaml").write_text(text, encoding="utf-8")
    suite = load_suite(tmp_path / "agent-eval.yaml")
    found: list[Finding] = suite.tests[0].run(make_trace(names))
    return found


def summary(found: list[Finding]) -> list[tuple[str, int, int, str | None]]:
    """(rule, trace line, config line, tool) of each finding."""
    out = []
    for f in found:
        assert f.trace is not None
        assert f.trace.file == TRACE_FILE
        assert f.trace.trace_id == "t1"
        assert f.config.file == "agent-eval.yaml"
        assert f.test == "seq"
        out.append((f.rule, f.trace.line, f.config.line, f.tool))
    return out


# ---------------------------------------------------------------- the seed example
def test_seed_example_reports_both_rules(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: require
          tool: authenticate
        - type: before
          first: authenticate
          then: get_patient_record
    """, ["get_patient_record"])
    # one call on line 1; the trace ends on line 2
    assert summary(found) == [
        ("sequence_valid/require", 2, 7, "authenticate"),
        ("sequence_valid/before", 1, 9, "get_patient_record"),
    ]
    assert found[0].details == {"expected": "authenticate to be called",
                                "actual": "authenticate was never called"}
    assert found[1].details == {
        "expected": "authenticate before get_patient_record",
        "actual": "get_patient_record called without prior authenticate"}
    assert all(f.severity == "error" for f in found)


def test_seed_example_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "p.jsonl").write_text(
        '{"type":"tool_call","tool":"get_patient_record","arguments":{}}\n', encoding="utf-8")
    suite = suite_from(tmp_path, """
        version: "1"
        suite: s
        traces: traces/*.jsonl
        tests:
          - id: auth
            metric: sequence_valid
            rules:
              - type: require
                tool: authenticate
              - type: before
                first: authenticate
                then: get_patient_record
    """)
    results = evaluate(suite, load_traces(["traces/p.jsonl"], suite))
    assert results.verdict == "fail"
    (test,) = results.tests
    got = [(v.rule, v.trace.line if v.trace else None, v.config.line) for v in test.violations]
    # a one-line trace: its last line is line 1; "- type: require" is line 8 of the
    # suite, "- type: before" line 10
    assert sorted(got) == [("sequence_valid/before", 1, 10), ("sequence_valid/require", 1, 8)]
    assert {v.trace.trace_id for v in test.violations if v.trace} == {"traces/p.jsonl"}


# --------------------------------------------------------------------- require
def test_require_missing_tool_located_at_trace_end(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: require
          tool: authenticate
    """, ["x", "y", "z"])
    assert summary(found) == [("sequence_valid/require", 4, 7, "authenticate")]


def test_require_satisfied_normalized(tmp_path: Path) -> None:
    assert run(tmp_path, """
        - type: require
          tool: authenticate-user
    """, ["x", "Authenticate_User"]) == []


def test_require_exact_mode(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: require
          tool: authenticate_user
    """, ["Authenticate_User"], header="\ntool_match: exact")
    # the header adds one line, so the rule is on line 8
    assert summary(found) == [("sequence_valid/require", 2, 8, "authenticate_user")]


def test_require_list_reports_each_missing_tool(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: require
          tools: [lookup, "pay_*", refund]
    """, ["pay-card", "other"])
    assert summary(found) == [
        ("sequence_valid/require", 3, 7, "lookup"),
        ("sequence_valid/require", 3, 7, "refund"),
    ]


def test_require_glob(tmp_path: Path) -> None:
    assert run(tmp_path, """
        - type: require
          tool: "auth*"
    """, ["Auth-Token"]) == []
    found = run(tmp_path, """
        - type: require
          tool: "auth?"
    """, ["auth"])
    assert summary(found) == [("sequence_valid/require", 2, 7, "auth?")]


def test_require_on_a_trace_without_calls(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: require
          tool: a
    """, [])
    # no calls: the trace ends on line 1 (make_trace puts the end one past the calls)
    assert summary(found) == [("sequence_valid/require", 1, 7, "a")]


# ---------------------------------------------------------------------- before
def test_before_offending_then_calls(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: before
          first: auth
          then: [read, write]
    """, ["read", "auth", "write", "read", "Write"])
    assert summary(found) == [("sequence_valid/before", 1, 7, "read")]


def test_before_each_early_call_reported(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: before
          first: auth
          then: "get_*"
    """, ["get_a", "x", "GET-B", "auth", "get_c"])
    assert summary(found) == [
        ("sequence_valid/before", 1, 7, "get_a"),
        ("sequence_valid/before", 3, 7, "GET-B"),
    ]


def test_before_vacuous_when_then_never_called(tmp_path: Path) -> None:
    assert run(tmp_path, """
        - type: before
          first: auth
          then: read
    """, ["x", "y"]) == []
    assert run(tmp_path, """
        - type: before
          first: auth
          then: read
    """, []) == []


def test_before_call_matching_first_and_then(tmp_path: Path) -> None:
    # "ab" matches both a* and *b: the first one has no EARLIER a* call, the second has
    found = run(tmp_path, """
        - type: before
          first: "a*"
          then: "*b"
    """, ["ab", "ab"])
    assert summary(found) == [("sequence_valid/before", 1, 7, "ab")]


# ---------------------------------------------------------- immediately_before
def test_immediately_before(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: immediately_before
          first: a
          then: b
    """, ["b", "a", "b", "c", "b", "a", "x"])
    # line 1: b is the first call; line 3: after a (fine); line 5: after c
    assert summary(found) == [
        ("sequence_valid/immediately_before", 1, 7, "b"),
        ("sequence_valid/immediately_before", 5, 7, "b"),
    ]
    assert found[0].details["actual"] == "b was the first call"
    assert found[1].details["actual"] == "b called right after c"


def test_immediately_before_vacuous_and_lists(tmp_path: Path) -> None:
    assert run(tmp_path, """
        - type: immediately_before
          first: a
          then: b
    """, ["a", "c", "a"]) == []
    found = run(tmp_path, """
        - type: immediately_before
          first: [lock, "Acquire-*"]
          then: [write, delete]
    """, ["lock", "write", "acquire_x", "delete", "delete"])
    assert summary(found) == [("sequence_valid/immediately_before", 5, 7, "delete")]


def test_immediately_before_call_matching_both(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: immediately_before
          first: "a*"
          then: "a*"
    """, ["a1", "a2", "a3"])
    assert summary(found) == [("sequence_valid/immediately_before", 1, 7, "a1")]


# ----------------------------------------------------------------------- after
def test_after_anywhere_later(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: after
          tool: pay
          then: receipt
    """, ["pay", "x", "receipt", "pay"])
    assert summary(found) == [("sequence_valid/after", 4, 7, "pay")]


@pytest.mark.parametrize(("within", "lines"), [(1, [1, 4]), (2, [4]), (5, [4])])
def test_after_within(tmp_path: Path, within: int, lines: list[int]) -> None:
    found = run(tmp_path, f"""
        - type: after
          tool: pay
          then: receipt
          within: {within}
    """, ["pay", "x", "receipt", "pay"])
    # the receipt (line 3) is 2 calls after the pay on line 1
    assert summary(found) == [("sequence_valid/after", line, 7, "pay") for line in lines]


def test_after_vacuous_and_both(tmp_path: Path) -> None:
    assert run(tmp_path, """
        - type: after
          tool: pay
          then: receipt
    """, ["receipt", "x"]) == []
    found = run(tmp_path, """
        - type: after
          tool: "r*"
          then: ["r*", z]
    """, ["r1", "r2"])
    # r1 is followed by r2; r2 (matching both) is followed by nothing
    assert summary(found) == [("sequence_valid/after", 2, 7, "r2")]


# ----------------------------------------------------------------- never_after
def test_never_after(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: never_after
          first: submit
          then: [edit, delete]
    """, ["edit", "submit", "x", "delete", "Edit"])
    assert summary(found) == [
        ("sequence_valid/never_after", 4, 7, "delete"),
        ("sequence_valid/never_after", 5, 7, "Edit"),
    ]


def test_never_after_vacuous_and_both(tmp_path: Path) -> None:
    assert run(tmp_path, """
        - type: never_after
          first: submit
          then: edit
    """, ["edit", "edit", "x"]) == []
    found = run(tmp_path, """
        - type: never_after
          first: "x*"
          then: "x*"
    """, ["x1", "x2"])
    # a call is not "after" itself
    assert summary(found) == [("sequence_valid/never_after", 2, 7, "x2")]


# ------------------------------------------------------------ blocklist/allowlist
def test_blocklist(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: blocklist
          tools: ["admin_*", debug]
    """, ["admin-delete", "read", "DEBUG", "admin_x"])
    assert summary(found) == [
        ("sequence_valid/blocklist", 1, 7, "admin-delete"),
        ("sequence_valid/blocklist", 3, 7, "DEBUG"),
        ("sequence_valid/blocklist", 4, 7, "admin_x"),
    ]


def test_blocklist_single_string(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: blocklist
          tools: rm
    """, ["rm", "rmdir"])
    assert summary(found) == [("sequence_valid/blocklist", 1, 7, "rm")]


def test_allowlist(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: allowlist
          tools: [read, "list_*"]
    """, ["read", "write", "List-Files", "Read"])
    assert summary(found) == [("sequence_valid/allowlist", 2, 7, "write")]
    assert run(tmp_path, """
        - type: allowlist
          tools: read
    """, []) == []


# ----------------------------------------------------------------------- count
def test_count_max_reports_the_call_over_the_limit(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: count
          tool: api_call
          max: 2
    """, ["api_call", "api-call", "x", "API_CALL", "api_call"])
    # four calls; the 3rd one (line 4) is over the limit; located at the max: line (9)
    assert summary(found) == [("sequence_valid/count", 4, 9, "API_CALL")]
    assert found[0].details["actual"] == "4 calls"


def test_count_min_reports_trace_end(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: count
          tool: "search*"
          min: 2
    """, ["search", "x"])
    # the trace ends on line 3; the min: line is line 9
    assert summary(found) == [("sequence_valid/count", 3, 9, "search*")]
    assert found[0].details["actual"] == "1 calls"


def test_count_min_and_max(tmp_path: Path) -> None:
    rules = """
        - type: count
          tool: [a, b]
          min: 1
          max: 2
    """
    assert run(tmp_path, rules, ["a", "x", "b"]) == []
    # min: is on line 9, max: on line 10
    assert summary(run(tmp_path, rules, ["x"])) == [("sequence_valid/count", 2, 9, "a or b")]
    assert summary(run(tmp_path, rules, ["b", "a", "x", "a"])) == [
        ("sequence_valid/count", 4, 10, "a")]


@pytest.mark.parametrize(("tool", "bound", "names", "message"), [
    # issue 10 §2: the message said "Bash called 11 times" for calls named `bash`
    ("Bash", "max: 10", ["bash"] * 11,
     "bash called 11 times, more than max 10 (count of Bash; call #11 is over the limit)"),
    ('"search_*"', "min: 3", ["SearchWeb", "search-kb", "x"],
     "SearchWeb, search-kb called 2 times, fewer than min 3 (count of search_*)"),
    ("send_email", "max: 1", ["send_email", "send_email"],
     "send_email called 2 times, more than max 1 (call #2 is over the limit)"),
])
def test_count_message_names_the_tool_as_called(tmp_path: Path, tool: str, bound: str,
                                                names: list[str], message: str) -> None:
    found = run(tmp_path, f"- type: count\n  tool: {tool}\n  {bound}\n", names)
    assert [f.message for f in found] == [message]
    if bound.startswith("max"):
        assert found[0].tool == names[0]  # the call over the limit, as called


def test_count_max_zero(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: count
          max: 0
          tool: rm
    """, ["x", "RM", "rm"])
    # max: comes first here (line 8)
    assert summary(found) == [("sequence_valid/count", 2, 8, "RM")]


EMPTY = ("an empty list names no tool, so nothing would be checked; name at least one tool "
         "(a name, a glob or @group)")


@pytest.mark.parametrize(("rule", "where"), [
    # the rule starts on line 7 ('      - type: …'); its second line is line 8, whose key
    # starts at column 9; in 'tools: [a, []]' the empty list is at column 20
    ("- type: require\n  tools: []", "8:9"),
    ("- type: blocklist\n  tools: []", "8:9"),
    ("- type: allowlist\n  tools: []", "8:9"),
    ("- type: count\n  tool: []\n  max: 1", "8:9"),
    ("- type: eventually\n  tool: []\n  within: 2", "8:9"),
    ("- type: never_after\n  first: []\n  then: x", "8:9"),
    ("- type: before\n  first: []\n  then: x", "8:9"),
    ("- type: after\n  tool: []\n  then: x", "8:9"),
    ("- type: immediately_before\n  first: []\n  then: x", "8:9"),
    ("- type: sequence\n  tools: [a, []]", "8:20"),
])
def test_an_empty_tool_list_is_a_config_error(tmp_path: Path, rule: str, where: str) -> None:
    """A field that names no tool checks nothing: require tools: [] passed every trace
    (exit 0), and the other rules stopped the run with an internal error (IndexError)."""
    with pytest.raises(ConfigError) as info:
        run(tmp_path, rule, ["x"])
    assert info.value.problems == [f"agent-eval.yaml:{where}: {EMPTY}"]


EMPTY_NAME = ("an empty tool name names no tool, so nothing would be checked; write the "
              "tool's name (a name, a glob or @group)")


@pytest.mark.parametrize(("rule", "where"), [
    # counted by hand: in "        tools: [x, '']" (line 8) the '' is at column 20; a field
    # holding only '' is at its key (column 9); in "        then: [{tool: '', args: {a:
    # 1}}]" (line 9) at the item's 'tool' key, column 17
    ("- type: blocklist\n  tools: [x, '']", "8:20"),
    ("- type: require\n  tool: ''", "8:9"),
    ("- type: never_after\n  first: x\n  then: [{tool: '', args: {a: 1}}]", "9:17"),
])
def test_an_empty_tool_name_is_a_config_error(tmp_path: Path, rule: str, where: str) -> None:
    """A tool named ``''`` is no call's name: `blocklist: ['']` blocked nothing and the
    run passed (a coverage note only)."""
    with pytest.raises(ConfigError) as info:
        run(tmp_path, rule, ["x"])
    assert info.value.problems == [f"agent-eval.yaml:{where}: {EMPTY_NAME}"]


def test_a_count_of_min_0_alone_is_a_config_error(tmp_path: Path) -> None:
    """``count`` with ``min: 0`` and no ``max``: every trace calls a tool 0 or more times,
    so the rule could never fail (and passed every trace)."""
    with pytest.raises(ConfigError) as info:
        run(tmp_path, "- type: count\n  tool: x\n  min: 0", ["x"])
    (problem,) = info.value.problems
    assert problem.startswith("agent-eval.yaml:7:")  # the rule item ("      - type", line 7)
    assert "'min: 0' alone can never fail" in problem
    assert run(tmp_path, "- type: count\n  tool: x\n  min: 0\n  max: 1", ["x", "x"])


# ------------------------------------------------------------ several rules, severity
def test_rules_are_anded_and_located_at_their_own_item(tmp_path: Path) -> None:
    found = run(tmp_path, """
        - type: require
          tool: a
        - type: blocklist
          tools: b
        - type: count
          tool: c
          max: 1
    """, ["b", "c", "c"])
    assert summary(found) == [
        ("sequence_valid/require", 4, 7, "a"),
        ("sequence_valid/blocklist", 1, 9, "b"),
        ("sequence_valid/count", 3, 13, "c"),
    ]


def test_severity_is_carried(tmp_path: Path) -> None:
    suite = suite_from(tmp_path, """
        version: "1"
        suite: s
        tests:
          - id: seq
            metric: sequence_valid
            severity: warning
            rules:
              - type: blocklist
                tools: b
    """)
    (f,) = suite.tests[0].run(make_trace(["b"]))
    assert f.severity == "warning"
    assert f.rule == "sequence_valid/blocklist"
    assert f.config.line == 8


# =============================================== properties against a reference
ALPHABET = ["a", "b", "c", "A-b"]
# which names of ALPHABET each pattern matches (normalized), worked out by hand
TRUTH: dict[str, frozenset[str]] = {
    "a": frozenset({"a"}),
    "A": frozenset({"a"}),
    "b": frozenset({"b"}),
    "c": frozenset({"c"}),
    "a_b": frozenset({"A-b"}),
    "a-B": frozenset({"A-b"}),
    "a*": frozenset({"a", "A-b"}),
    "*b": frozenset({"b", "A-b"}),
    "?": frozenset({"a", "b", "c"}),
    "[ab]": frozenset({"a", "b"}),
    "[!a]": frozenset({"b", "c"}),
    "*": frozenset({"a", "b", "c", "A-b"}),
    "a?b": frozenset({"A-b"}),
    "zzz": frozenset(),
}

pattern = st.sampled_from(sorted(TRUTH))
field = st.one_of(pattern, st.lists(pattern, min_size=1, max_size=3))
calls = st.lists(st.sampled_from(ALPHABET), max_size=8)


def hits(value: str | list[str], name: str) -> bool:
    pats = [value] if isinstance(value, str) else value
    return any(name in TRUTH[p] for p in pats)


def compiled(rule: dict[str, Any]) -> Any:
    cfg = SequenceValidTest.model_validate({"id": "t", "metric": "sequence_valid",
                                            "rules": [rule]})

    def no_policy(value: Any, path: Any) -> Any:
        raise AssertionError("no policy here")

    ctx = CompileContext("s.yaml", Positions("s.yaml"), ("tests", 0), "t", "normalized",
                         no_policy)
    return compile_test(cfg, ctx)


def offending_lines(rule: dict[str, Any], names: list[str]) -> list[int]:
    trace = make_trace(names, end_line=100)
    found = compiled(rule).run(trace)
    assert all(f.rule == f"sequence_valid/{rule['type']}" for f in found)
    lines = []
    for f in found:
        assert f.trace is not None
        lines.append(f.trace.line)
        if f.trace.line != 100:
            assert f.tool == names[f.trace.line - 1]
    return sorted(lines)


def as_lines(indices: set[int]) -> list[int]:
    return sorted(k + 1 for k in indices)


SETTINGS = settings(max_examples=200, deadline=None)


@SETTINGS
@given(names=calls, pats=st.lists(pattern, min_size=1, max_size=3, unique=True),
       key=st.sampled_from(["tool", "tools"]), single=st.booleans())
def test_require_property(names: list[str], pats: list[str], key: str, single: bool) -> None:
    value: str | list[str] = pats[0] if single else pats
    listed = [value] if isinstance(value, str) else value
    missing = sorted(p for p in listed if not any(n in TRUTH[p] for n in names))
    found = compiled({"type": "require", key: value}).run(make_trace(names, end_line=100))
    assert sorted(f.tool or "" for f in found) == missing
    assert all(f.trace is not None and f.trace.line == 100 for f in found)


@SETTINGS
@given(names=calls, first=field, then=field)
def test_before_property(names: list[str], first: str | list[str],
                         then: str | list[str]) -> None:
    bad = {j for j in range(len(names))
           if hits(then, names[j]) and not any(hits(first, names[i]) for i in range(j))}
    rule = {"type": "before", "first": first, "then": then}
    assert offending_lines(rule, names) == as_lines(bad)


@SETTINGS
@given(names=calls, first=field, then=field)
def test_immediately_before_property(names: list[str], first: str | list[str],
                                     then: str | list[str]) -> None:
    bad = {j for j in range(len(names))
           if hits(then, names[j]) and (j == 0 or not hits(first, names[j - 1]))}
    rule = {"type": "immediately_before", "first": first, "then": then}
    assert offending_lines(rule, names) == as_lines(bad)


@SETTINGS
@given(names=calls, tool=field, then=field, within=st.one_of(st.none(), st.integers(1, 4)))
def test_after_property(names: list[str], tool: str | list[str], then: str | list[str],
                        within: int | None) -> None:
    n = len(names)
    bad = set()
    for i in range(n):
        if not hits(tool, names[i]):
            continue
        last = n - 1 if within is None else min(n - 1, i + within)
        if not any(hits(then, names[j]) for j in range(i + 1, last + 1)):
            bad.add(i)
    rule: dict[str, Any] = {"type": "after", "tool": tool, "then": then}
    if within is not None:
        rule["within"] = within
    assert offending_lines(rule, names) == as_lines(bad)


@SETTINGS
@given(names=calls, first=field, then=field)
def test_never_after_property(names: list[str], first: str | list[str],
                              then: str | list[str]) -> None:
    bad = {j for j in range(len(names))
           if hits(then, names[j]) and any(hits(first, names[i]) for i in range(j))}
    rule = {"type": "never_after", "first": first, "then": then}
    assert offending_lines(rule, names) == as_lines(bad)


@SETTINGS
@given(names=calls, tools=field, block=st.booleans())
def test_blocklist_allowlist_property(names: list[str], tools: str | list[str],
                                      block: bool) -> None:
    bad = {j for j in range(len(names)) if hits(tools, names[j]) is block}
    rule = {"type": "blocklist" if block else "allowlist", "tools": tools}
    assert offending_lines(rule, names) == as_lines(bad)


@SETTINGS
@given(names=calls, tool=field, lo=st.one_of(st.none(), st.integers(0, 5)),
       span=st.one_of(st.none(), st.integers(0, 5)))
def test_count_property(names: list[str], tool: str | list[str], lo: int | None,
                        span: int | None) -> None:
    if span is None and not lo:  # no bound, or min: 0 alone (a config error: never fails)
        span = 0
    hi = None if span is None else (lo or 0) + span
    matched = [k for k in range(len(names)) if hits(tool, names[k])]
    expected: list[int] = []
    if hi is not None and len(matched) > hi:
        expected = [matched[hi] + 1]  # the (max+1)-th call
    elif lo is not None and len(matched) < lo:
        expected = [100]  # the trace end
    rule: dict[str, Any] = {"type": "count", "tool": tool}
    if lo is not None:
        rule["min"] = lo
    if hi is not None:
        rule["max"] = hi
    assert offending_lines(rule, names) == expected
