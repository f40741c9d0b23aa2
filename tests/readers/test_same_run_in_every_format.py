"""The bundled example suite finds the same things in the same agent run whatever it was
recorded in: discount-too-high and records-without-auth as native JSONL, as OTLP
collector lines (both runs in one file), as Chat Completions (a message list; an API log)
and as Responses API (an API log; an item list) in tests/fixtures/formats/. Every file is
read with ``format: auto``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_eval.api import evaluate, load_suite, load_traces
from agent_eval.config.loader import Suite
from agent_eval.errors import InputError
from agent_eval.model import Trace

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "customer-service"
FIXTURES = ROOT / "tests" / "fixtures" / "formats"
RUNS = ("discount-too-high", "records-without-auth")
FILES = {
    "otlp": ["otlp/customer-service.otlp.jsonl"],
    "openai_chat": ["openai_chat/discount-too-high.chat.json",
                    "openai_chat/records-without-auth.chat.jsonl"],
    "openai_responses": ["openai_responses/discount-too-high.responses.jsonl",
                         "openai_responses/records-without-auth.responses.json"],
}
# rule, tool, argument, config file (relative to the example), config line
Row = tuple[str, str | None, str | None, str, int]


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(EXAMPLE / "agent-eval.yaml")


def by_run(suite: Suite, paths: list[Path]) -> tuple[set[str], dict[str, list[Row]],
                                                      dict[str, list[int]]]:
    """(formats used, findings per run, trace lines of the findings per run). A trace is
    mapped to its run by its input text, which every format records."""
    items = list(load_traces(paths, suite))
    assert [i for i in items if isinstance(i, InputError)] == []
    inputs = {}
    for run in RUNS:
        start = json.loads((EXAMPLE / "traces" / f"{run}.jsonl").read_text().splitlines()[0])
        inputs[start["input"]] = run
    traces = [i for i in items if isinstance(i, Trace)]
    run_of = {t.id: inputs[t.input] for t in traces}
    assert sorted(run_of.values()) == sorted(RUNS)
    rows: dict[str, list[Row]] = {run: [] for run in RUNS}
    lines: dict[str, list[int]] = {run: [] for run in RUNS}
    for v in evaluate(suite, items).violations:
        assert v.trace is not None
        config = Path(suite.root, v.config.file).relative_to(EXAMPLE).as_posix()
        run = run_of[v.trace.trace_id]
        rows[run].append((v.rule, v.tool, v.argument, config, v.config.line))
        lines[run].append(v.trace.line)
    return {t.format for t in traces}, rows, lines


def test_native_findings_are_the_expected_ones(suite: Suite) -> None:
    fmts, rows, _ = by_run(suite, [EXAMPLE / "traces" / f"{r}.jsonl" for r in RUNS])
    assert fmts == {"native"}
    expected = json.loads((EXAMPLE / "expected.json").read_text())
    for run in RUNS:
        want = sorted((r["rule"], r["tool"], r["argument"], r["config_file"], r["config_line"])
                      for r in expected if r["trace_file"] == f"traces/{run}.jsonl")
        assert sorted(rows[run]) == want
    # read by hand from expected.json / policies/customer.yaml / agent-eval.yaml:
    assert sorted(rows["discount-too-high"]) == [
        ("args_valid/maximum", "apply_discount", "percent", "policies/customer.yaml", 74)]
    assert sorted(rows["records-without-auth"]) == [
        ("sequence_valid/before", "get_customer", None, "agent-eval.yaml", 25),
        ("sequence_valid/require", "authenticate_user", None, "agent-eval.yaml", 22)]


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_same_findings_as_native(suite: Suite, fmt: str) -> None:
    _, native, _ = by_run(suite, [EXAMPLE / "traces" / f"{r}.jsonl" for r in RUNS])
    paths = [FIXTURES / f for f in FILES[fmt]]
    fmts, got, lines = by_run(suite, paths)
    assert fmts == {fmt}
    for run in RUNS:
        assert sorted(got[run]) == sorted(native[run]), run
    # the findings point into the fixture files: the apply_discount call is on line 3 of
    # the OTLP file (its execute_tool span), on the line of its tool_calls object in the
    # chat message list, and on line 2 (the first response) of the Responses log
    [discount_line] = lines["discount-too-high"]
    text = (FIXTURES / FILES[fmt][0]).read_text().splitlines()
    assert "apply_discount" in "".join(text[discount_line - 1:discount_line + 5])
