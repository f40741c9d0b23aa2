"""CIAgent's two config formats (issue 17): the spec (agentci_spec.yaml, ``version: 1``,
CIAgent's "v2") and the legacy suite (agentci.yaml, ``tests:``, "v1"), on CIAgent's own
examples (tests/importers/fixtures/ciagent/, see its README); any other spec version is a
config error at its line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_eval.api import load_suite
from agent_eval.errors import ConfigError
from agent_eval.importers import detect
from agent_eval.yamlpos import load_yaml

from .peers import FIXTURES, events, findings, imported, located, run, same_findings, workspace


def trace(tid: str, scenario: str, calls: list[tuple[str, dict[str, Any]]], output: str,
          *, llm_calls: int = 1, cost: float = 0.01) -> str:
    return events(
        {"type": "trace_start", "trace_id": tid, "scenario": scenario},
        *({"type": "llm_call", "model": "gpt-4o-mini", "input_tokens": 10,
           "output_tokens": 5, "cost_usd": cost if n == 0 else 0.0}
          for n in range(llm_calls)),
        *({"type": "tool_call", "tool": t, "arguments": a} for t, a in calls),
        {"type": "output", "output": output}, {"type": "trace_end"})


def test_legacy_suite_is_detected() -> None:
    for name in ("agentci.yaml", "langgraph_agentci.yaml"):
        data, _ = load_yaml((FIXTURES / "ciagent" / name).read_text(encoding="utf-8"), name)
        assert detect(data) == "ciagent"


def test_legacy_demo_agent_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/demo_agent/agentci.yaml: every assertion and budget fails the test, as
    CIAgent's runner.py makes them."""
    traces = {"t.jsonl": "".join([
        # book_flight_basic: origin "San Francisco (SFO)" contains "SFO"; book_flight never
        # called; cost 0.06 > cost_under 0.05 (the lowest of it and defaults' 0.10);
        # 5 LLM calls > steps_under 4
        trace("1", "book_flight_basic",
              [("search_flights", {"origin": "San Francisco (SFO)", "destination": "JFK"})],
              "Found flights.", llm_calls=5, cost=0.06),
        # handle_no_results: "Sorry" is not "sorry" (case-sensitive); book_flight called
        trace("2", "handle_no_results",
              [("search_flights", {"origin": "SFO"}), ("book_flight", {"id": 1})],
              "Sorry, booked anyway."),
        # cost_guardrail: its own max_cost_usd 0.08 and max_steps 6 hold
        trace("3", "cost_guardrail", [("search_flights", {"origin": "SFO"})], "Done.",
              llm_calls=6, cost=0.08),
    ])}
    folder = workspace(tmp_path, "ciagent", traces)
    r = run(folder, "agentci.yaml", monkeypatch)
    status = {s["id"]: s["status"] for s in r["scenarios"]}
    assert status == {"book_flight_basic": "fail", "handle_no_results": "fail",
                      "cost_guardrail": "pass"}
    assert located(r) == [
        ("import/unsupported", "agentci.yaml", 14),  # golden_trace: needs the baseline
        ("scenario/forbidden_tools", "agentci.yaml", 36),  # tool_not_called book_flight
        ("scenario/output", "agentci.yaml", 38),  # output_contains "sorry"
        ("scenario/threshold", "agentci.yaml", 16),  # tool_called: recall 0.5 < 1.0
        ("scenario/threshold", "agentci.yaml", 25),  # cost_under 0.05
        ("scenario/threshold", "agentci.yaml", 27),  # steps_under 4
        ("scenario/tool_recall", "agentci.yaml", 23),  # book_flight not called
    ]
    same_findings(r, imported(folder, "agentci.yaml", monkeypatch))


def test_legacy_assertions_mapped(tmp_path: Path) -> None:
    """The langgraph example: arg_contains is a substring of the argument (an escaped
    regex), output_contains is case-sensitive (an escaped regex), defaults fill the
    budgets a test leaves out."""
    folder = workspace(tmp_path, "ciagent", {})
    suite = load_suite(folder / "langgraph_agentci.yaml")
    assert suite.dialect == "ciagent" and suite.scenarios is not None
    first = suite.scenarios.scenarios[0]
    assert first.id == "research_basic"
    assert [(t.key, t.value, t.ref.line) for t in first.thresholds] == [
        ("min_tool_recall", 1.0, 16),  # the first tool_called
        ("max_llm_calls", 10.0, 8),  # defaults.max_steps
        ("max_cost_usd", 0.01, 25)]  # cost_under 0.01, lower than defaults' 0.05
    (args,) = first.args  # arg_contains twice, the same: one condition, no note
    assert [(c.key, c.expected, c.ref.line) for c in args.checks] == [
        ("query", {"pattern": "france"}, 29)]
    (output,) = first.output  # output_contains: case-sensitive, an escaped regex
    (pattern, _, ref), = output.patterns
    assert (output.kind, pattern, ref.line) == ("regex", r"68\ million", 23)
    assert [n.config.line for n in suite.notes] == [14]  # golden_trace


def test_legacy_checks_and_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = """name: checks
defaults:
  max_steps: 0
tests:
  - name: t1
    max_duration_ms: 100
    assertions:
      - type: arg_equals
        tool: search
        field: q
        value: flights
      - type: output_not_contains
        value: error
      - type: output_contains
        value: Done
      - type: output_contains
        value: ok
      - type: tool_call_count
        tool: search
        value: 2
"""
    folder = workspace(tmp_path, "ciagent", {"t.jsonl": trace(
        "1", "t1", [("search", {"q": "flights"}), ("search", {"q": "x"})],
        "Error: none. DONE OK")})
    (folder / "checks.yaml").write_text(suite, encoding="utf-8")
    r = run(folder, "checks.yaml", monkeypatch)
    got = sorted((f["rule"], f["config"]["line"]) for f in findings(r))
    assert got == [
        ("import/unsupported", 6),  # max_duration_ms: CIAgent's runner never checks it
        ("import/unsupported", 18),  # tool_call_count: no equivalent
        # two output_contains tell case, as CIAgent: neither "Done" nor "ok" is in "DONE
        # OK" (they were `contains`, ignoring case, noted: it passed here)
        ("scenario/output", 15),
        ("scenario/output", 17),
    ]  # arg_equals holds (the first search call); "Error" is not "error" (case-sensitive);
    # defaults' max_steps 0 is no budget (CIAgent: "if test.max_steps and ...")
    same_findings(r, imported(folder, "checks.yaml", monkeypatch))


@pytest.mark.parametrize(("version", "ok"), [("1", True), ('"1"', True), ("2", False),
                                              ("0", False), ("true", False), ("v2", False)])
def test_spec_versions(tmp_path: Path, version: str, ok: bool) -> None:
    (tmp_path / "agentci_spec.yaml").write_text(
        f"version: {version}\nagent: a\nqueries:\n  - query: q\n", encoding="utf-8")
    if ok:
        assert load_suite(tmp_path / "agentci_spec.yaml").dialect == "ciagent"
        return
    with pytest.raises(ConfigError) as exc:
        load_suite(tmp_path / "agentci_spec.yaml", dialect="ciagent")
    (problem,) = exc.value.problems
    assert problem.startswith("agentci_spec.yaml:1:1: CIAgent spec version")
    assert "reads spec version 1 (agentci_spec.yaml" in problem
    assert "legacy agentci.yaml ('tests:'" in problem


@pytest.mark.parametrize(("text", "where", "message"), [
    ("tests:\n  - name: a\n    assertions:\n      - type: tool_maybe_called\n",
     "x.yaml:4:9", "unknown CIAgent assertion type 'tool_maybe_called'"),
    ("tests:\n  - name: a\n    assertions:\n      - type: arg_contains\n        tool: t\n",
     "x.yaml:4:9", "a CIAgent arg_contains assertion needs 'field'"),
    ("defaults:\n  max_tokens: 5\ntests:\n  - name: a\n",
     "x.yaml:2:3", "unsupported key 'max_tokens' in the CIAgent suite's defaults"),
    ("tests:\n  - name: a\n    max_cost_usd: cheap\n",
     "x.yaml:3:5", "a CIAgent budget must be a finite number"),
    # .inf as a steps budget: int(inf) raised OverflowError, an internal error
    ("tests:\n  - name: a\n    assertions:\n      - {type: steps_under, threshold: .inf}\n",
     "x.yaml:4:29", "a CIAgent budget must be a finite number"),  # the threshold key
    ("tests:\n  - name: a\n    max_cost_usd: .nan\n",
     "x.yaml:3:5", "a CIAgent budget must be a finite number"),
    ("tests:\n  - input: no name\n", "x.yaml:2:5", "a CIAgent test needs a 'name'"),
    ("agent: a\nversion: 1\n", "x.yaml:1:1", "neither a CIAgent spec"),
])
def test_legacy_errors_at_their_line(tmp_path: Path, text: str, where: str,
                                     message: str) -> None:
    (tmp_path / "x.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_suite(tmp_path / "x.yaml", dialect="ciagent")
    (problem,) = exc.value.problems
    assert problem.startswith(where + ": ") and message in problem, problem


HANDOFF_SPEC = """version: 1
agent: supervisor
queries:
  - query: gdp
    path:
      expected_handoff: research_expert
      max_handoff_count: 1
"""


def test_spec_handoffs_on_a_langgraph_trace(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """CIAgent's expected_handoff / max_handoff_count on a LangGraph supervisor run in
    LangSmith (tests/fixtures/langsmith/langgraph-supervisor.json, one run per line): the
    supervisor hands off to research_expert (line 5) and gets control back (line 9), two
    handoffs where at most one is allowed: a warning (the path layer), at that handoff."""
    runs = json.loads((Path(__file__).parents[1] / "fixtures" / "langsmith" /
                       "langgraph-supervisor.json").read_text(encoding="utf-8"))
    folder = workspace(tmp_path, "ciagent", {"gdp.jsonl": "".join(
        json.dumps(r) + "\n" for r in runs)})
    (folder / "handoff.yaml").write_text(HANDOFF_SPEC, encoding="utf-8")
    r = run(folder, "handoff.yaml", monkeypatch)
    (sc,) = r["scenarios"]
    assert sc["status"] == "warn"
    assert [(f["rule"], f["severity"], f["config"]["line"], f["trace"]["line"])
            for f in sc["findings"]] == [("scenario/handoff", "warning", 7, 9)]
    same_findings(r, imported(folder, "handoff.yaml", monkeypatch))
