"""The bundled example finds exactly what its expected.json (and README) list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_eval.api import load_suite, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.paths import rel
from agent_eval.results import Results
from agent_eval.suite import Suite

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "customer-service"
PASSING = ["refund-happy.jsonl", "address-change.jsonl", "order-status.jsonl",
           "discount-ok.jsonl"]
# What each expected finding's config line says (read from the files by hand; the
# README's table gives the same list).
CONFIG_LINES = {
    ("policies/customer.yaml", 60): "max: 500",
    ("policies/customer.yaml", 74): "max: 30",
    ("policies/customer.yaml", 101): "exclusiveMinimum: 0",
    ("policies/customer.yaml", 102): "enum: [USD, EUR]",
    ("policies/customer.yaml", 111): "min_length: 10",
    ("agent-eval.yaml", 22): "- type: require",
    ("agent-eval.yaml", 25): "- type: before",
    ("agent-eval.yaml", 31): "max: 3",
    ("agent-eval.yaml", 33): "- type: after",
    ("agent-eval.yaml", 43): "- admin_*",
}
Row = tuple[str, int, str, str, int, str | None, str | None]


@pytest.fixture(scope="module")
def example() -> tuple[Suite, Results]:
    suite = load_suite(EXAMPLE / "agent-eval.yaml")
    files, errors = suite_sources(suite)
    return suite, evaluate_files(suite, files, errors, timings=False)


def local(suite: Suite, path: str) -> str:
    """A repo-relative path from the results, relative to the example's folder."""
    prefix = rel(suite.base_dir, suite.root)
    if prefix in ("", "."):
        return path
    assert path.startswith(prefix + "/"), path
    return path[len(prefix) + 1:]


def expected() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((EXAMPLE / "expected.json").read_text())
    return data


def test_expected_json_agrees_with_the_files() -> None:
    """expected.json itself, checked against the example's files (not the code)."""
    rows = expected()
    assert len(rows) == 10
    for row in rows:
        text = (EXAMPLE / row["config_file"]).read_text().splitlines()
        assert CONFIG_LINES[(row["config_file"], row["config_line"])] in \
            text[row["config_line"] - 1], row
        trace_line = (EXAMPLE / row["trace_file"]).read_text().splitlines()[
            row["trace_line"] - 1]
        if row["rule"] == "sequence_valid/require":
            assert '"trace_end"' in trace_line  # a missing call: the end of the trace
        else:
            assert f'"tool":"{row["tool"]}"' in trace_line, row


def test_findings_match_expected_json(example: tuple[Suite, Results]) -> None:
    suite, res = example
    got: set[Row] = set()
    for v in res.violations:
        assert v.trace is not None
        got.add((local(suite, v.trace.file), v.trace.line, v.rule,
                 local(suite, v.config.file), v.config.line, v.tool, v.argument))
    want: set[Row] = {(r["trace_file"], r["trace_line"], r["rule"], r["config_file"],
                       r["config_line"], r["tool"], r["argument"]) for r in expected()}
    assert got == want
    assert len(res.violations) == len(want)  # no duplicates either
    assert res.verdict == "fail"
    assert res.input_errors == []
    assert res.counts["traces"] == 10


def test_passing_traces_have_no_findings(example: tuple[Suite, Results]) -> None:
    suite, res = example
    with_findings = {local(suite, v.trace.file) for v in res.violations if v.trace is not None}
    for name in PASSING:
        assert f"traces/{name}" not in with_findings
    summaries = {local(suite, t.file): t for t in res.traces}
    for name in PASSING:
        assert summaries[f"traces/{name}"].failed_tests == ()
    assert len(with_findings) == 6
