"""The formats of a JSON Schema checked against trace values (a scenario's
``output.json_schema``, a ``tool_results`` entry's ``expect_result.json_schema``, a probe's
``json_schema``): each answers in bounded time and never raises (docs/security.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from tests.conftest import within

from agent_eval import saferegex
from agent_eval.api import load_suite, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.saferegex import FORMAT_OTHER_CHARS, FORMAT_REGEX_CHARS, jsonschema_validator

NESTED = "(" * 1000 + ")" * 1000  # Python's re.compile: RecursionError
WIDE = "[\u0100-\uffff]" * 2000  # 14,000 characters (30 KB of UTF-8): 46 s in re.compile


def valid(fmt: str, value: object, cls: Any = jsonschema.Draft202012Validator) -> bool:
    validator = jsonschema_validator(cls, {"format": fmt}, {})
    with within(10):
        return not list(validator.iter_errors(value))


@pytest.mark.parametrize(("value", "expected"), [
    ("^[a-z]+$", True),
    (r"\d{3}-\u2028", True),  # ECMA-262 escapes, as a policy's pattern: reads them
    ("(", False),
    ("a{2,1}", False),
    ("(?=a)", False),  # lookahead: RE2 cannot run it, so no pattern of a config could be it
    (r"(a)\1", False),  # a backreference: the same
    (NESTED, True),  # a valid regex: RE2 compiles it in milliseconds
    ("(" * 1000, False),  # the same, unclosed
    (WIDE, True),  # milliseconds in RE2
    ("a" * (FORMAT_REGEX_CHARS + 1), False),  # longer than any regex is allowed to be
    ("a" * FORMAT_REGEX_CHARS, True),
    (5, True),  # a format applies to strings only
])
def test_format_regex_is_compiled_by_re2_and_never_raises(value: object,
                                                          expected: bool) -> None:
    assert valid("regex", value) is expected
    assert valid("regex", value, jsonschema.Draft7Validator) is expected


def test_the_formats_jsonschema_checks_keep_their_answers() -> None:
    # the same answers as jsonschema's own checker on ordinary values
    for fmt, good, bad in [("date", "2024-02-29", "2023-02-29"), ("email", "a@b", "ab"),
                           ("ipv4", "10.0.0.1", "10.0.0.256"), ("ipv6", "::1", "::g"),
                           ("uuid", "12345678-1234-5678-1234-567812345678", "1234"),
                           ("idn-hostname", "b\u00fccher.example", "-a-.example")]:
        assert valid(fmt, good) and not valid(fmt, bad), fmt


def test_a_format_backed_by_an_optional_library_is_bounded(monkeypatch: pytest.MonkeyPatch,
                                                          ) -> None:
    """A format whose check comes from a library agent-eval does not install (uri, iri,
    hostname, ... where one is installed) takes no value longer than
    FORMAT_OTHER_CHARS to it, and a library that fails is 'not valid', not a crash."""
    calls: list[int] = []

    def check(instance: object) -> bool:
        assert isinstance(instance, str)
        calls.append(len(instance))
        if instance == "boom":
            raise RecursionError("deep")
        return True

    checker = jsonschema.FormatChecker(())
    checker.checks("uri")(check)
    monkeypatch.setattr(jsonschema.Draft202012Validator, "FORMAT_CHECKER", checker)
    monkeypatch.setattr(saferegex, "_CHECKERS", {})  # none made from the real one kept
    assert valid("uri", "x" * FORMAT_OTHER_CHARS)
    assert not valid("uri", "x" * (FORMAT_OTHER_CHARS + 1))
    assert not valid("uri", "boom")
    assert calls == [FORMAT_OTHER_CHARS, 4]


SUITE = """\
version: "1"
suite: formats
traces: traces/*.jsonl
tests:
  - id: tr
    metric: tool_results
    calls:
      - tool: x
        expect_result:
          json_schema: {type: object, properties: {p: {type: string, format: regex}}}
"""


def test_a_trace_value_cannot_crash_or_stall_a_format_regex_check(tmp_path: Path) -> None:
    """The auditor's suite: a result {"p": NESTED} was an internal error (RecursionError,
    exit 2, no outputs) and {"p": WIDE} took 46 s; now both are judged, in milliseconds
    (both are regexes), beside a value that is not one (a finding)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "traces").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(SUITE)
    lines = []
    for i, p in enumerate([NESTED, WIDE, "(^no$"]):
        lines.append({"type": "tool_call", "id": f"c{i}", "tool": "x", "arguments": {}})
        lines.append({"type": "tool_result", "id": f"c{i}", "result": {"p": p}})
    (tmp_path / "traces" / "t.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines))
    suite = load_suite(tmp_path / "agent-eval.yaml")
    files, errors = suite_sources(suite)
    with within(20):
        results = evaluate_files(suite, files, errors, jobs=1, timings=False)
    assert results.input_errors == []
    # one violation: the third call's result (line 6) is not a regex
    assert [(v.rule, v.trace.line if v.trace else 0) for v in results.violations] == [
        ("tool_results/result", 6)], results.violations
