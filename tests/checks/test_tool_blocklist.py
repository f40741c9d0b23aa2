"""tool_blocklist (docs/config.md): one finding per (trace, blocked tool as called), with
the number of calls, at the first call and at the matching pattern's line."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from agent_eval.api import evaluate, load_suite, load_traces
from agent_eval.errors import ConfigError
from agent_eval.findings import Finding
from agent_eval.model import Location, ToolCall, Trace

TRACE_FILE = "traces/t.jsonl"


def make_trace(names: list[str], trace_id: str = "t1") -> Trace:
    return Trace(
        id=trace_id,
        source=TRACE_FILE,
        location=Location(TRACE_FILE, 1),
        end_location=Location(TRACE_FILE, len(names) + 1),
        tool_calls=[ToolCall(n, {}, Location(TRACE_FILE, k + 1)) for k, n in enumerate(names)],
    )


def suite_from(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "agent-eval.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return load_suite(path)


BLOCKLIST_SUITE = """
    version: "1"
    suite: s
    tests:
      - id: no_destructive
        metric: tool_blocklist
        blocklist:
          - delete_customer
          - purge_data
          - admin_*
"""
# line 7: delete_customer, line 8: purge_data, line 9: admin_*


def run(tmp_path: Path, names: list[str], text: str = BLOCKLIST_SUITE) -> list[Finding]:
    suite = suite_from(tmp_path, text)
    found: list[Finding] = suite.tests[0].run(make_trace(names))
    return found


def view(f: Finding) -> tuple[str | None, int, int, int, str]:
    assert f.trace is not None
    assert f.trace.file == TRACE_FILE
    assert f.trace.trace_id == "t1"
    assert f.config.file == "agent-eval.yaml"
    assert f.rule == "tool_blocklist"
    assert f.test == "no_destructive"
    return f.tool, f.details["calls"], f.trace.line, f.config.line, f.details["pattern"]


def test_seed_example_admin_delete(tmp_path: Path) -> None:
    (f,) = run(tmp_path, ["admin_delete"])
    assert view(f) == ("admin_delete", 1, 1, 9, "admin_*")
    assert f.severity == "error"
    assert f.related == ()
    assert "admin_delete" in f.message
    assert "calls found: 1" in f.message.lower()


def test_seed_example_exact_name(tmp_path: Path) -> None:
    (f,) = run(tmp_path, ["admin_delete"], """
        version: "1"
        suite: s
        tests:
          - id: no_destructive
            metric: tool_blocklist
            blocklist:
              - admin_delete
    """)
    assert view(f) == ("admin_delete", 1, 1, 7, "admin_delete")


def test_one_finding_per_tool_counting_calls_located_at_first(tmp_path: Path) -> None:
    found = run(tmp_path, ["read", "purge_data", "admin_x", "purge_data", "x", "purge_data"])
    got = sorted(view(f) for f in found)
    assert got == [
        ("admin_x", 1, 3, 9, "admin_*"),
        ("purge_data", 3, 2, 8, "purge_data"),
    ]
    purge = next(f for f in found if f.tool == "purge_data")
    assert [r.line for r in purge.related] == [4, 6]


def test_two_blocked_tools_two_findings(tmp_path: Path) -> None:
    found = run(tmp_path, ["admin_create", "admin_delete", "admin_create"])
    assert sorted(view(f) for f in found) == [
        ("admin_create", 2, 1, 9, "admin_*"),
        ("admin_delete", 1, 2, 9, "admin_*"),
    ]


def test_normalized_matching_keeps_the_name_as_called(tmp_path: Path) -> None:
    found = run(tmp_path, ["Admin-Delete", "DELETE-CUSTOMER", "Purge_Data", "purge-data"])
    # each spelling as called is its own tool in the report
    assert sorted(view(f) for f in found) == [
        ("Admin-Delete", 1, 1, 9, "admin_*"),
        ("DELETE-CUSTOMER", 1, 2, 7, "delete_customer"),
        ("Purge_Data", 1, 3, 8, "purge_data"),
        ("purge-data", 1, 4, 8, "purge_data"),
    ]


def test_camel_case_blocklist_entry_flags_snake_case_call(tmp_path: Path) -> None:
    # issue 10 §2: `tool_blocklist: [EditFile]` must flag a call to `edit_file`
    text = """
        version: "1"
        suite: s
        tests:
          - id: no_destructive
            metric: tool_blocklist
            blocklist: [EditFile]
    """
    found = run(tmp_path, ["read_file", "edit_file", "edit-file", "EDIT FILE"], text)
    assert sorted(view(f) for f in found) == [
        ("EDIT FILE", 1, 4, 6, "EditFile"),
        ("edit-file", 1, 3, 6, "EditFile"),
        ("edit_file", 1, 2, 6, "EditFile"),
    ]
    assert {f.message for f in found} >= {
        "Blocked tool called: edit_file (blocklist includes 'EditFile'); calls found: 1"}
    exact = text.replace('suite: s', 'suite: s\n        tool_match: exact')
    assert run(tmp_path, ["edit_file"], exact) == []


def test_exact_mode(tmp_path: Path) -> None:
    text = """
        version: "1"
        suite: s
        tool_match: exact
        tests:
          - id: no_destructive
            metric: tool_blocklist
            blocklist: [admin_*, purge_data]
    """
    found = run(tmp_path, ["Admin-Delete", "purge-data", "admin_go", "purge_data"], text)
    # a flow list on one line: both patterns are on line 7
    assert sorted(view(f) for f in found) == [
        ("admin_go", 1, 3, 7, "admin_*"),
        ("purge_data", 1, 4, 7, "purge_data"),
    ]


def test_first_matching_pattern_wins(tmp_path: Path) -> None:
    text = """
        version: "1"
        suite: s
        tests:
          - id: no_destructive
            metric: tool_blocklist
            blocklist:
              - "*_data"
              - purge_data
    """
    (f,) = run(tmp_path, ["purge_data"], text)
    assert view(f) == ("purge_data", 1, 1, 7, "*_data")


def test_single_string_blocklist(tmp_path: Path) -> None:
    text = """
        version: "1"
        suite: s
        tests:
          - id: no_destructive
            metric: tool_blocklist
            severity: warning
            blocklist: "drop_*"
    """
    (f,) = run(tmp_path, ["x", "drop_table"], text)
    assert view(f) == ("drop_table", 1, 2, 7, "drop_*")
    assert f.severity == "warning"


def test_empty_blocklist_is_a_config_error(tmp_path: Path) -> None:
    """blocklist: [] blocks nothing: the test passed every trace (exit 0)."""
    text = """
        version: "1"
        suite: s
        tests:
          - id: no_destructive
            metric: tool_blocklist
            blocklist: []
    """
    with pytest.raises(ConfigError) as info:
        suite_from(tmp_path, text)
    # line 6 (the blank first line is stripped): '    blocklist: []': the key at col 5
    assert info.value.problems == [
        "agent-eval.yaml:6:5: an empty list names no tool, so nothing would be checked; "
        "name at least one tool (a name, a glob or @group)"]


def test_clean_trace_and_empty_trace(tmp_path: Path) -> None:
    assert run(tmp_path, ["read", "delete_customers", "admin"]) == []
    assert run(tmp_path, []) == []


def test_findings_per_trace_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.jsonl").write_text(
        '{"type":"trace_start","trace_id":"A"}\n'
        '{"type":"trace_start","trace_id":"B"}\n'
        '{"type":"tool_call","trace_id":"A","tool":"admin_delete"}\n'
        '{"type":"tool_call","trace_id":"B","tool":"admin_delete"}\n'
        '{"type":"tool_call","trace_id":"A","tool":"admin_delete"}\n',
        encoding="utf-8")
    suite = suite_from(tmp_path, BLOCKLIST_SUITE)
    results = evaluate(suite, load_traces(["t.jsonl"], suite))
    assert results.verdict == "fail"
    (test,) = results.tests
    got = sorted((v.trace.trace_id, v.trace.line, v.details["calls"], v.config.line)
                 for v in test.violations if v.trace)
    assert got == [("A", 3, 2, 9), ("B", 4, 1, 9)]


def test_an_argument_condition_written_off_is_a_config_error(tmp_path: Path) -> None:
    """YAML 1.1 reads an unquoted ``off`` as false: the entry then blocked no call of
    ``state: "off"`` (exit 0, not a word). It is a config error at the value; quoted, the
    condition is the text and blocks the call."""
    text = """
        version: "1"
        suite: s
        tests:
          - id: fw
            metric: tool_blocklist
            blocklist:
              - {tool: configure_firewall, args: {state: off}}
    """
    with pytest.raises(ConfigError) as info:
        suite_from(tmp_path, text)
    # line 7: '      - {tool: configure_firewall, args: {state: off}}': off at col 50
    assert info.value.problems == [
        "agent-eval.yaml:7:50: 'off' is read by YAML as the boolean false, not as the text "
        "'off'; quote it (\"off\") to compare with the text, or write false for the boolean"]
    suite = suite_from(tmp_path, text.replace("state: off", 'state: "off"'))
    call = ToolCall("configure_firewall", {"state": "off"}, Location(TRACE_FILE, 1))
    trace = Trace("t1", TRACE_FILE, Location(TRACE_FILE, 1), Location(TRACE_FILE, 2),
                  tool_calls=[call])
    assert [(f.rule, f.tool) for f in suite.tests[0].run(trace)] == [
        ("tool_blocklist", "configure_firewall")]


def test_an_argument_condition_written_0777_is_a_config_error(tmp_path: Path) -> None:
    """YAML 1.1 reads an unquoted ``0777`` as the octal 511: the entry blocked no call of
    ``mode: "0777"`` (exit 0). A config error at the value."""
    text = """
        version: "1"
        suite: s
        tests:
          - id: no_world_writable
            metric: tool_blocklist
            blocklist: [{tool: chmod, args: {mode: 0777}}]
    """
    with pytest.raises(ConfigError) as info:
        suite_from(tmp_path, text)
    # line 6: '    blocklist: [{tool: chmod, args: {mode: 0777}}]': 0777 at col 44
    assert info.value.problems == [
        "agent-eval.yaml:6:44: '0777' is read by YAML as the number 511, not as the text "
        "'0777'; quote it (\"0777\") to compare with the text, or write 511 for the number"]


def test_an_argument_condition_of_annotation_keys_is_a_config_error(tmp_path: Path) -> None:
    """`{description: wipe}` was a constraint object of annotations only: the entry
    blocked every call of update_ticket that had `fields`, whatever they held. A config
    error at the argument."""
    text = """
        version: "1"
        suite: s
        tests:
          - id: b
            metric: tool_blocklist
            blocklist: [{tool: update_ticket, args: {fields: {description: wipe}}}]
    """
    with pytest.raises(ConfigError) as info:
        suite_from(tmp_path, text)
    # line 6: '    blocklist: [{tool: update_ticket, args: {fields: …}}]': fields at col 46
    assert info.value.problems == [
        "agent-eval.yaml:6:46: this mapping's keys are all schema annotations (title, "
        "description, default, …), so as a constraint it would hold for any value; to "
        "compare with the object itself write const: {…} around it"]


def test_a_condition_of_no_type_is_a_config_error(tmp_path: Path) -> None:
    """``{command: {type: []}}`` selected no call (no value is of no type), so the
    blocklist let ``rm -rf /`` through and the run passed. The error is at the ``type``
    key: line 6, '    blocklist: [{tool: bash, args: {command: {type: []}}}]', column 47."""
    (tmp_path / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\ntests:\n  - id: b\n    metric: tool_blocklist\n'
        "    blocklist: [{tool: bash, args: {command: {type: []}}}]\n")
    with pytest.raises(ConfigError) as exc:
        load_suite(tmp_path / "agent-eval.yaml")
    assert exc.value.problems == [
        "agent-eval.yaml:6:47: 'type' must be a type name or a non-empty list of type names"]
