"""A `{tool, args}` selector of a tool_blocklist or a sequence rule cannot judge a call whose
arguments the trace did not record, or recorded as something other than a JSON object. Such
a call used to be silently "not selected": a blocked `rm -rf` written as a Python repr, or
not recorded at all, passed. Now the rule still takes it as not selected, and the check
reports it as args_valid reports the same calls: `…/not_recorded` (a warning; a note under
a note test) or `…/not_an_object` (the test's severity). Never a pass: a check that could not run
is never a pass (docs/config.md "Call selectors")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.checks.sequence_helpers import rules, seen, trace
from tests.conftest import read_results

from agent_eval._cli import main

# The audit's reproduction: suite lines counted by hand (the selectors' `{` on column 17)
SUITE = """\
suite: t5
traces: traces/*.jsonl
tests:
  - id: blocked
    metric: tool_blocklist
    blocklist: [{tool: bash, args: {command: {pattern: "rm -rf"}}}]
  - id: seq
    metric: sequence_valid
    rules:
      - type: blocklist
        tools: [{tool: bash, args: {command: {pattern: "rm -rf"}}}]
"""
NOT_OBJECT = '{"type":"tool_call","tool":"bash","arguments":"{\'command\': \'rm -rf /\'}"}\n'
UNRECORDED = '{"type":"tool_call","tool":"bash","arguments_recorded":false}\n'
RM = "bash with {command: {pattern: rm -rf}}"


def cli(tmp_path: Path, trace: str, *args: str, suite: str = SUITE
        ) -> tuple[int, dict[str, Any]]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "agent-eval.yaml").write_text(suite, encoding="utf-8")
    (tmp_path / "traces").mkdir(exist_ok=True)
    (tmp_path / "traces" / "a.jsonl").write_text(trace, encoding="utf-8")
    out = tmp_path / "out"
    code = main(["run", "--config", str(tmp_path / "agent-eval.yaml"), "--output-dir",
                 str(out), "-q", "--no-timings", *args])
    return code, read_results(out)


def shown(results: dict[str, Any]) -> dict[str, Any]:
    """Per test: its status and its findings as (rule, severity, trace line, config
    line:column, details)."""
    return {t["id"]: (t["status"], [
        (v["rule"], v["severity"], v["trace"]["line"],
         f"{v['config']['line']}:{v['config']['column']}", v.get("details"))
        for v in t["violations"]]) for t in results["tests"]}


def test_the_audit_reproduction_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    code, results = cli(tmp_path, NOT_OBJECT + UNRECORDED)
    capsys.readouterr()
    not_object = {"calls": 1, "pattern": RM, "violation": "Arguments are not a JSON object"}
    unrecorded = {"calls": 1, "pattern": RM, "violation": "Arguments not recorded"}
    judged = f"the call's arguments judged by {RM} (blocklist rule's tools)"
    assert shown(results) == {
        "blocked": ("fail", [
            ("tool_blocklist/not_an_object", "error", 1, "6:17", not_object),
            ("tool_blocklist/not_recorded", "warning", 2, "6:17", unrecorded)]),
        "seq": ("fail", [
            ("sequence_valid/not_an_object", "error", 1, "11:17",
             {"expected": judged, "actual": "Arguments are not a JSON object"}),
            ("sequence_valid/not_recorded", "warning", 2, "11:17",
             {"expected": judged, "actual": "Arguments not recorded"})]),
    }
    assert (results["verdict"], code) == ("fail", 1)
    messages = [v["message"] for t in results["tests"] for v in t["violations"]]
    assert messages == [
        "bash: the call's arguments are not a JSON object (a string that is not valid JSON); "
        f"whether it is blocked by '{RM}' (agent-eval.yaml:6) could not be checked; "
        "calls found: 1",
        "bash: the call's arguments are not recorded in the trace; whether it is blocked by "
        f"'{RM}' (agent-eval.yaml:6) could not be checked; calls found: 1",
        "bash: the call's arguments are not a JSON object (a string that is not valid JSON); "
        f"whether it is selected by the blocklist rule's tools ('{RM}', agent-eval.yaml:11) "
        "could not be checked",
        "bash: the call's arguments are not recorded in the trace; whether it is selected by "
        f"the blocklist rule's tools ('{RM}', agent-eval.yaml:11) could not be checked",
    ]
    keys = {v["config"]["key_path"] for t in results["tests"] for v in t["violations"]}
    assert keys == {"tests.blocked.blocklist.0", "tests.seq.rules.0.tools.0"}


def test_unrecorded_arguments_are_a_warning(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Not recorded only: WARN (exit 0 under the default --fail-on, 1 under warn)."""
    code, results = cli(tmp_path, UNRECORDED + UNRECORDED)
    assert {t["id"]: t["status"] for t in results["tests"]} == {"blocked": "warn",
                                                                "seq": "warn"}
    assert (results["verdict"], code) == ("warn", 0)
    (blocked,) = results["tests"][0]["violations"]  # one per tool and entry, 2 calls
    assert (blocked["details"]["calls"], blocked["trace"]["line"],
            [r["line"] for r in blocked["related"]]) == (2, 1, [2])
    assert [v["trace"]["line"] for v in results["tests"][1]["violations"]] == [1, 2]
    code, results = cli(tmp_path, UNRECORDED, "--fail-on", "warn")
    assert (results["verdict"], code) == ("warn", 1)
    capsys.readouterr()


def test_a_note_test_keeps_them_notes(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """As args_valid's: under `severity: note` both are notes, and the test passes."""
    suite = SUITE.replace("    metric: tool_blocklist\n",
                          "    metric: tool_blocklist\n    severity: note\n").replace(
        "    metric: sequence_valid\n", "    metric: sequence_valid\n    severity: note\n")
    code, results = cli(tmp_path, NOT_OBJECT + UNRECORDED, suite=suite)
    capsys.readouterr()
    assert {t["id"]: (t["status"], sorted((v["rule"].split("/")[1], v["severity"])
                                          for v in t["violations"]))
            for t in results["tests"]} == {
        "blocked": ("pass", [("not_an_object", "note"), ("not_recorded", "note")]),
        "seq": ("pass", [("not_an_object", "note"), ("not_recorded", "note")])}
    assert (results["verdict"], code) == ("pass", 0)


def test_judged_calls_are_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    """Recorded objects give real answers: blocked, or not (a missing argument is a no)."""
    trace = "".join(json.dumps({"type": "tool_call", "tool": "bash", "arguments": a}) + "\n"
                    for a in ({"command": "rm -rf /"}, {"command": "ls"}, {}, None))
    code, results = cli(tmp_path, trace)
    capsys.readouterr()
    assert shown(results) == {
        "blocked": ("fail", [("tool_blocklist", "error", 1, "6:17",
                              {"calls": 1, "pattern": RM})]),
        "seq": ("fail", [("sequence_valid/blocklist", "error", 1, "10:9",
                          {"expected": f"none of {RM} called", "actual": "bash called"})]),
    }
    assert code == 1


def test_a_name_entry_blocks_whatever_the_arguments(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    suite = SUITE.replace('blocklist: [{tool: bash, args: {command: {pattern: "rm -rf"}}}]',
                          'blocklist: [{tool: bash, args: {command: {pattern: "rm -rf"}}}, '
                          "bash]")
    code, results = cli(tmp_path, UNRECORDED, suite=suite)
    capsys.readouterr()
    (v,) = results["tests"][0]["violations"]
    # the name entry `bash`: column 17 + 50 characters of the first entry + ", "
    assert (v["rule"], v["config"]["column"], code) == ("tool_blocklist", 69, 1)


# ------------------------------------------------------- each kind of sequence rule
CREDS = '{tool: bash, args: {command: {pattern: "credentials"}}}'


def test_never_after_first_not_recorded(tmp_path: Path) -> None:
    """The exfiltration rule: the read of the credentials was not recorded, so the upload
    after it is not flagged, and the unknown read is (it was a silent pass)."""
    test = rules(tmp_path, f"""
        - type: never_after
          first: {CREDS}
          then: http_post
    """)
    found = test.run(trace([("bash", None), "http_post"]))
    assert seen(found) == [("not_recorded", 1, 7)]
    assert found[0].message == (
        "bash: the call's arguments are not recorded in the trace; whether it is selected by "
        "the never_after rule's first ('bash with {command: {pattern: credentials}}', "
        "agent-eval.yaml:7) could not be checked")
    assert found[0].constraint == "never_after"
    # recorded: the rule's own finding, and nothing undecided
    assert seen(test.run(trace([("bash", {"command": "cat credentials"}), "http_post"]))) == [
        ("never_after", 2, 6)]


def test_every_field_reports_its_own(tmp_path: Path) -> None:
    """One call that two fields cannot judge: one finding per field, each at its selector;
    whether or not the rule looked at the field (no `then` call: vacuous)."""
    test = rules(tmp_path, f"""
        - type: before
          first: {CREDS}
          then: [read, {{tool: bash, args: {{command: {{pattern: "curl"}}}}}}]
    """)
    assert seen(test.run(trace([("bash", None)]))) == [("not_recorded", 1, 7),
                                                      ("not_recorded", 1, 8)]
    assert test.run(trace(["read"]))[0].rule == "sequence_valid/before"


def test_allowlist_still_fails_what_it_cannot_allow(tmp_path: Path) -> None:
    """Not selected by the allowlist: a violation, as before, and said why."""
    test = rules(tmp_path, """
        - type: allowlist
          tools: [read, {tool: bash, args: {command: ls}}]
    """)
    found = test.run(trace(["read", ("bash", None), ("bash", {"command": "ls"})]))
    assert seen(found) == [("allowlist", 2, 6), ("not_recorded", 2, 7)]


def test_require_count_eventually_and_sequence(tmp_path: Path) -> None:
    audit = "{tool: audit, args: {scope: full}}"
    test = rules(tmp_path, f"""
        - type: require
          tools: [read, {audit}]
        - type: count
          tool: {audit}
          max: 0
        - type: eventually
          tool: {audit}
          within: 1
        - type: sequence
          tools: [read, {audit}]
    """)
    found = test.run(trace(["read", ("audit", None)]))
    assert seen(found) == [
        ("require", 100, 6), ("not_recorded", 2, 7),  # require's second item
        ("not_recorded", 2, 9),  # count: max 0 holds, audit was not selected
        ("eventually", 100, 11), ("not_recorded", 2, 12),
        ("sequence", 100, 14), ("not_recorded", 2, 15),  # step tools[1]
    ]
    labels = [f.message.split("selected by ")[1].split(" (")[0] for f in found
              if f.rule.endswith("not_recorded")]
    assert labels == ["the require rule's tools[1]", "the count rule's tool",
                      "the eventually rule's tool", "the sequence rule's tools[1]"]


def test_not_an_object_has_the_tests_severity(tmp_path: Path) -> None:
    test = rules(tmp_path, f"""
        - type: blocklist
          tools: {CREDS}
    """)
    found = test.run(trace([("bash", [1, 2]), ("bash", None)]))
    assert [(f.rule, f.severity) for f in found] == [
        ("sequence_valid/not_an_object", "error"), ("sequence_valid/not_recorded", "warning")]
    assert found[0].message.startswith("bash: the call's arguments are not a JSON object "
                                       "(got [1,2]); ")
