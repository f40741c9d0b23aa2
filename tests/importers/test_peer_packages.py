"""The importers' semantics checked against the peers' own packages (issue 17), installed
test-only from PyPI (pyproject's test extra, pinned in constraints.txt):

- CIAgent (``ciagent`` 0.16.2): its loader reads the same keys and values from its example
  specs and legacy suites as the importer, and its evaluation engine (``evaluate_query``;
  the legacy ``evaluate_assertion`` and the runner's budgets) gives every query of the
  examples the verdict agent-eval gives its scenario, on the same traces;
- Assay (``assay-it`` 1.0.0, Assay's Python SDK): its config loader finds the same tests
  and check types in Assay's example configs.

EvalView's package is not installed (docs/migrating.md says why)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import REQUIRE_SYSTEM, required

from agent_eval.api import load_suite

from .peers import FIXTURES, events, run, workspace

try:  # the peers' packages are pinned test dependencies: CI must not skip this module
    ciagent_loader, ciagent_models, ciagent_runner, ciagent_results, ciagent_assertions, \
        assay_config = (importlib.import_module(name) for name in (
            "ciagent.loader", "ciagent.models", "ciagent.engine.runner",
            "ciagent.engine.results", "ciagent.assertions", "assay.config_loader"))
except ImportError as exc:
    if required(REQUIRE_SYSTEM):
        raise
    pytest.skip(f"NOT RUN, missing the peers' package {exc.name}: pip install -c constraints.txt "
                f"-e '.[test]' ({REQUIRE_SYSTEM}=1 makes this a failure)",
                allow_module_level=True)

CIAGENT = FIXTURES / "ciagent"

# one recorded run: (tool calls with arguments, answer, LLM calls, cost in USD)
Run = tuple[list[tuple[str, dict[str, Any]]], str, int, float]


def native_trace(tid: str, scenario: str, r: Run) -> str:
    calls, answer, llm_calls, cost = r
    return events(
        {"type": "trace_start", "trace_id": tid, "scenario": scenario},
        *({"type": "llm_call", "model": "m", "input_tokens": 10, "output_tokens": 5,
           "cost_usd": cost if n == 0 else 0.0} for n in range(llm_calls)),
        *({"type": "tool_call", "tool": t, "arguments": a} for t, a in calls),
        {"type": "output", "output": answer}, {"type": "trace_end"})


def ciagent_trace(r: Run) -> Any:
    """The same run as CIAgent's Trace (one agent span), metrics computed."""
    calls, answer, llm_calls, cost = r
    m = ciagent_models
    span = m.Span(output_data=answer,
                  tool_calls=[m.ToolCall(tool_name=t, arguments=a) for t, a in calls],
                  llm_calls=[m.LLMCall(model="m", tokens_in=10, tokens_out=5,
                                       cost_usd=cost if n == 0 else 0.0)
                             for n in range(llm_calls)])
    trace = m.Trace(spans=[span], metadata={"final_output": answer})
    trace.compute_metrics()
    return trace


def ours(tmp_path: Path, config: str, runs: dict[str, Run],
         monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    traces = {"t.jsonl": "".join(native_trace(str(n), sid, r)
                                 for n, (sid, r) in enumerate(runs.items()))}
    results = run(workspace(tmp_path, "ciagent", traces), config, monkeypatch)
    return {s["id"]: s["status"] for s in results["scenarios"]}


# ------------------------------------------------------------------ CIAgent spec
DEMO: dict[str, Run] = {
    "What's your return window?": ([("search_kb", {})], "Within 30 days.", 1, 0.001),
    "Do you ship internationally?": ([], "Yes, we offer international shipping.", 1, 0.001),
    "How do I reset my password?": ([("search_kb", {})], "Use the link.", 1, 0.001),
    "What payment methods do you accept?": ([("search_kb", {})] * 5, "Credit card.", 2,
                                            0.002),
    "Can I change my delivery address after ordering?": (
        [("search_kb", {})], "Yes, before it ships.", 1, 0.001),
    "How do I cancel my subscription?": ([("lookup_order", {})], "In account settings.", 1,
                                         0.001),
    "Do you offer student discounts?": ([("search_kb", {}), ("search_kb", {})],
                                        "Yes, 10%.", 1, 0.001),
    "Where can I download my invoice?": ([("search_kb", {})], "On the Billing Page.", 1,
                                         0.001),
}


def ciagent_verdict(result: Any) -> str:
    """FAIL when a layer fails, WARN when one warns (CIAgent's layers: correctness fails,
    path and cost warn)."""
    statuses = {layer.status.value for layer in (result.correctness, result.path,
                                                 result.cost) if layer is not None}
    return "fail" if "fail" in statuses else "warn" if "warn" in statuses else "pass"


def test_ciagent_engine_agrees_on_the_demo_spec(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    spec = ciagent_loader.load_spec(CIAGENT / "demo_spec.yaml")
    theirs = {q.query: ciagent_verdict(ciagent_runner.evaluate_query(q, ciagent_trace(
        DEMO[q.query]))) for q in spec.queries}
    assert ours(tmp_path, "demo_spec.yaml", DEMO, monkeypatch) == theirs
    # and the cases differ: a correctness failure, recall warnings, a loop warning
    assert set(theirs.values()) == {"pass", "warn", "fail"}


def judges_of(q: Any) -> list[tuple[str, str, float]]:
    """The judges CIAgent's engine asks (engine/correctness.py), in its order: with
    refutes_premise its built-in rubric first, and no hallucination check."""
    c = q.correctness
    premise = importlib.import_module("ciagent.engine.correctness")._REFUTES_PREMISE_RUBRIC
    out = [("rubric", r.rule.strip(), r.threshold)
           for r in ([premise] if c.refutes_premise else []) + (c.llm_judge or [])]
    for key, kind in (("safety_check", "safety"),) + (
            () if c.refutes_premise else (("hallucination_check", "hallucination"),)):
        if getattr(c, key) is not None:
            out.append((kind, getattr(c, key).rule.strip(), getattr(c, key).threshold))
    return out


@pytest.mark.parametrize("name", ["demo_spec.yaml", "sample_spec.yaml"])
def test_ciagent_loader_reads_the_same_values(name: str) -> None:
    """Defaults merged, recall 1.0 unless loosened, max_loops 3, the judges' rules and
    thresholds (CIAgent's default 0.5): CIAgent's parsed spec and the imported suite agree
    on every query."""
    loader_agrees(CIAGENT / name)


DEFAULTS_SPEC = """\
version: 1
agent: defaults-demo
defaults:
  path:
    max_loops: 10
    expected_tools: [search_kb]
  correctness:
    refutes_premise: true
queries:
  - query: "Where is my order?"
    path:
      expected_tools: [lookup_order]
    correctness:
      expected_in_answer: ["shipped"]
  - query: "Is shipping free on the moon?"
"""


def test_ciagent_loader_and_import_agree_on_a_query_layer_beside_defaults(
        tmp_path: Path) -> None:
    """CIAgent merges a query dumped with its layers' model defaults (max_loops 3,
    refutes_premise false) into defaults: a query's own path: has max_loops 3, whatever
    defaults.path.max_loops says, and its own correctness: checks its keywords. The
    import took defaults' max_loops 10 and refutes_premise (its keyword checks not made);
    the query without layers takes the defaults in both."""
    (tmp_path / "agentci_spec.yaml").write_text(DEFAULTS_SPEC, encoding="utf-8")
    spec = loader_agrees(tmp_path / "agentci_spec.yaml")
    assert [(q.path.max_loops, q.correctness.refutes_premise) for q in spec.queries] == [
        (3, False), (10, True)]


def loader_agrees(file: Path) -> Any:
    """CIAgent's parsed spec of ``file`` and the imported suite agree on every query."""
    spec = ciagent_loader.load_spec(file)
    suite = load_suite(file)
    assert suite.scenarios is not None
    scenarios = {sc.id: sc for sc in suite.scenarios.scenarios}
    assert list(scenarios) == [q.query for q in spec.queries]
    for q in spec.queries:
        sc = scenarios[q.query]
        warn = {lim.key: lim.value for lim in sc.warn_thresholds}
        path, cost = q.path, q.cost
        assert sc.tools == (tuple(path.expected_tools) if path and path.expected_tools
                            else None)
        if path and path.expected_tools:
            assert warn["min_tool_recall"] == (path.min_tool_recall or 1.0)
        assert warn["max_loops"] == (path.max_loops if path else 3)
        if path and path.max_tool_calls is not None:
            assert warn["max_tool_calls"] == path.max_tool_calls
        if cost and cost.max_cost_multiplier is not None:
            assert warn["max_cost_multiplier"] == cost.max_cost_multiplier
        terms = {c.kind: tuple(t.text for t in c.terms) for c in sc.output}
        if q.correctness and q.correctness.expected_in_answer:
            assert terms["contains"] == tuple(q.correctness.expected_in_answer)
        if q.correctness and q.correctness.not_in_answer:
            assert terms["not_contains"] == tuple(q.correctness.not_in_answer)
        assert [(j.kind, j.rule, j.threshold) for j in sc.judge] == \
            (judges_of(q) if q.correctness else [])
    return spec


# ---------------------------------------------------------------- CIAgent legacy
LEGACY: dict[str, Run] = {
    "book_flight_basic": ([("search_flights", {"origin": "San Francisco (SFO)"})],
                          "Found flights.", 5, 0.06),
    "handle_no_results": ([("search_flights", {"origin": "SFO"}), ("book_flight", {})],
                          "Sorry, booked anyway.", 1, 0.01),
    "cost_guardrail": ([("search_flights", {"origin": "SFO"})], "Done.", 6, 0.08),
}
LEGACY_OK: dict[str, Run] = {
    "book_flight_basic": ([("search_flights", {"origin": "SFO"}), ("book_flight", {})],
                          "Booked.", 4, 0.05),
    "handle_no_results": ([("search_flights", {"origin": "SFO"})], "sorry, none.", 5, 0.1),
    "cost_guardrail": ([("search_flights", {"origin": "SFO"})], "Done.", 6, 0.01),
}


def legacy_verdict(test: Any, trace: Any) -> str:
    """CIAgent's runner.py: every assertion, then the cost and LLM-call budgets."""
    ok = all(ciagent_assertions.evaluate_assertion(a, trace)[0] for a in test.assertions)
    if test.max_cost_usd and trace.total_cost_usd > test.max_cost_usd:
        ok = False
    if test.max_steps and trace.total_llm_calls > test.max_steps:
        ok = False
    return "pass" if ok else "fail"


@pytest.mark.parametrize("runs", [LEGACY, LEGACY_OK], ids=["failing", "passing"])
def test_ciagent_legacy_runner_agrees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      runs: dict[str, Run]) -> None:
    suite = ciagent_loader.load_suite(CIAGENT / "agentci.yaml")
    theirs = {t.name: legacy_verdict(t, ciagent_trace(runs[t.name])) for t in suite.tests}
    got = ours(tmp_path, "agentci.yaml", runs, monkeypatch)
    assert got == theirs
    assert set(theirs.values()) == ({"fail", "pass"} if runs is LEGACY else {"pass"})


ARG_EQUALS_MAPPING = """\
name: pay
tests:
  - name: by_card
    assertions:
      - {type: arg_equals, tool: pay, field: method, value: {type: string}}
"""


@pytest.mark.parametrize("method", ["card", {"type": "string"}])
def test_ciagent_arg_equals_of_a_mapping_compares_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: Any) -> None:
    """arg_equals compares the argument with == (assertions.py): {type: string} was
    imported as a constraint that any string met, so method "card" passed."""
    folder = workspace(tmp_path, "ciagent", {"t.jsonl": native_trace(
        "0", "by_card", ([("pay", {"method": method})], "Paid.", 1, 0.0))})
    (folder / "pay.yaml").write_text(ARG_EQUALS_MAPPING, encoding="utf-8")
    test = ciagent_loader.load_suite(folder / "pay.yaml").tests[0]
    theirs = legacy_verdict(test, ciagent_trace(
        ([("pay", {"method": method})], "Paid.", 1, 0.0)))
    assert theirs == ("fail" if method == "card" else "pass")
    results = run(folder, "pay.yaml", monkeypatch)
    assert {s["id"]: s["status"] for s in results["scenarios"]} == {"by_card": theirs}


# ------------------------------------------------------------------------- Assay
@pytest.mark.parametrize("name", ["eval.yaml", "eval_fail.yaml", "legacy_eval.yaml"])
def test_assay_sdk_finds_the_same_tests(name: str) -> None:
    config = assay_config.load_config(FIXTURES / "assay" / name)
    theirs = [(t.id, m.name) for t in config.tests for m in t.metrics]
    suite = load_suite(FIXTURES / "assay" / name)
    assert [(t.id, t.metric) for t in suite.tests] == theirs


def test_assay_sdk_is_stricter_than_assays_cli() -> None:
    """demo/fixtures/eval.yaml writes ``input: ignore``: Assay's CLI runs it, its Python
    SDK 1.0 refuses it; agent-eval reads it as the CLI does."""
    with pytest.raises(Exception, match=r"test\.input must be an object"):
        assay_config.load_config(FIXTURES / "assay" / "demo_eval.yaml")
    assert [t.id for t in load_suite(FIXTURES / "assay" / "demo_eval.yaml").tests] == [
        "policy.deny", "policy.allow", "smoke"]
