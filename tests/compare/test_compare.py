"""compare.py: base / head / Δ, regressions and fixes, findings by fingerprint, the policy
check, the regression gates and max_cost_multiplier."""

from __future__ import annotations

import json
import time
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest

from agent_eval.api import load_suite, suite_sources
from agent_eval.compare import attach, compare, policy_change
from agent_eval.engine import evaluate_files
from agent_eval.renderers import RENDERERS, RenderContext
from agent_eval.results import Results
from agent_eval.schemas import results_schema
from agent_eval.sections import Comparison, DeltaRow, PolicyChange

SUITE = """\
version: "1"
suite: cmp
traces: traces/*.jsonl
tests:
  - id: args
    metric: args_valid
    policy: policy.yaml
    severity: warning
scenarios:
  - id: A
    expect: {tools: [refund], forbidden_tools: [delete_*]}
    thresholds: {max_cost_multiplier: 2.0}
  - id: B
    expect: {tools: [lookup], forbidden_tools: [delete_*]}
    warn_thresholds: {max_cost_multiplier: 1.5}
pass_criteria:
  regression: {max_pass_rate_drop: 0.1, max_score_drop: 20, fail_on_new_violations: true}
"""
POLICY = """\
version: "1"
tools:
  refund:
    arguments:
      amount: {type: number, max: 100}
"""


def trace(tid: str, scenario: str, tool: str, amount: int, cost: float | None) -> str:
    llm = {"type": "llm_call", "model": "m", "input_tokens": 10, "output_tokens": 5}
    if cost is not None:  # None: not recorded
        llm["cost_usd"] = cost
    lines = [{"type": "trace_start", "trace_id": tid, "scenario": scenario}, llm,
             {"type": "tool_call", "tool": tool, "arguments": {"amount": amount}},
             {"type": "output", "output": "ok"}, {"type": "trace_end"}]
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def run(root: Path, a: tuple[str, int, float | None], b: tuple[str, int, float | None],
        policy: str = POLICY, suite: str = SUITE) -> Results:
    root.mkdir(parents=True, exist_ok=True)
    (root / "agent-eval.yaml").write_text(suite)
    (root / "policy.yaml").write_text(policy)
    (root / "traces").mkdir(exist_ok=True)
    (root / "traces" / "a.jsonl").write_text(trace("a-1", "A", *a))
    (root / "traces" / "b.jsonl").write_text(trace("b-1", "B", *b))
    s = load_suite(root / "agent-eval.yaml")
    files, errors = suite_sources(s, base=root)
    res = evaluate_files(s, files, errors, timings=False)
    # through results.json, as a baseline is read
    return Results.from_dict(json.loads(RENDERERS["json"].render(res, RenderContext())))


def test_identical_runs_compare_as_unchanged(tmp_path: Path) -> None:
    base = run(tmp_path / "b", ("refund", 150, 0.01), ("lookup", 1, 0.01))
    head = run(tmp_path / "h", ("refund", 150, 0.01), ("lookup", 1, 0.01))
    c = compare(head, base)
    assert c.regressions == c.fixes == c.new_violations == 0
    assert c.new == () and c.absent == ()
    assert c.unchanged_violations == 1
    assert c.policy == PolicyChange(True, False, (), (), (), "policy unchanged")
    assert all(r.delta in (0, None) for r in c.count_deltas)


def test_regression_fix_new_absent_and_deltas(tmp_path: Path) -> None:
    base = run(tmp_path / "b", ("refund", 150, 0.01), ("delete_all", 1, 0.01))
    head = run(tmp_path / "h", ("delete_all", 1, 0.01), ("lookup", 1, 0.01))
    c = compare(head, base)
    assert c.regressed == ("A",) and c.fixed == ("B",)
    # (coverage/unexercised: B's `lookup` was called by no trace of the base; now it is)
    assert {f.rule for f in c.absent} == {
        "args_valid/maximum", "scenario/forbidden_tools", "scenario/tool_recall",
        "coverage/unexercised"}
    assert c.absent_violations == sum(
        1 for f in c.absent if f.severity in ("error", "warning"))
    by = {r.name: r for r in c.count_deltas}
    assert by["violations"] == DeltaRow("violations", 1, 0, -1)
    assert by["violations"].to_dict() == {"name": "violations", "base": 1, "head": 0,
                                          "delta": -1}
    sc = {s.id: s for s in c.scenarios}
    assert sc["A"].change == "regression" and sc["A"].base_status == "pass"
    a_head, a_base = sc["A"].head_score, sc["A"].base_score
    assert a_head is not None and a_base is not None
    assert sc["A"].score_delta == a_head - a_base


def test_gates_fail_on_new_violations_and_score_drop(tmp_path: Path) -> None:
    base = run(tmp_path / "b", ("refund", 50, 0.01), ("lookup", 1, 0.01))
    head = run(tmp_path / "h", ("refund", 150, 0.01), ("delete_all", 1, 0.01))
    assert head.verdict == "fail"  # B fails (a forbidden tool): a failed scenario fails
    attach(head, base)
    crit = {c.name: c for c in head.criteria if c.kind == "regression"}
    assert crit["fail_on_new_violations"].status == "fail"
    assert isinstance(head.baseline, Comparison)
    assert crit["fail_on_new_violations"].value == head.baseline.new_violations >= 1
    assert crit["max_pass_rate_drop"].status == "fail"  # 1.0 -> 0.5
    assert crit["max_pass_rate_drop"].value == pytest.approx(0.5)
    assert crit["max_score_drop"].status == "fail"
    assert str(head.verdict) == "fail"
    # the missed gates are findings (SARIF, comment) like other missed criteria
    assert {v.rule for v in head.criteria_findings} == {"criteria/regression"}
    jsonschema.validate(json.loads(RENDERERS["json"].render(head, RenderContext())),
                        results_schema())


def test_gates_pass_without_changes(tmp_path: Path) -> None:
    base = run(tmp_path / "b", ("refund", 50, 0.01), ("lookup", 1, 0.01))
    head = run(tmp_path / "h", ("refund", 50, 0.01), ("lookup", 1, 0.01))
    attach(head, base)
    assert {c.status for c in head.criteria if c.kind == "regression"} == {"pass"}
    assert head.verdict == "pass"


def test_max_cost_multiplier_against_the_base_cost(tmp_path: Path) -> None:
    base = run(tmp_path / "b", ("refund", 50, 0.010), ("lookup", 1, 0.010))
    assert any(f.rule == "scenario/no_baseline" for s in base.scenarios
               for f in s.findings)
    head = run(tmp_path / "h", ("refund", 50, 0.025), ("lookup", 1, 0.018))
    attach(head, base)
    sc = {s.id: s for s in head.scenarios}
    [fa] = sc["A"].findings
    assert fa.rule == "scenario/threshold" and fa.severity == "error"
    assert fa.value == pytest.approx(2.5) and "max_cost_multiplier: 2" in fa.message
    assert sc["A"].status == "fail"
    [fb] = sc["B"].findings
    assert fb.rule == "scenario/warn_threshold" and fb.severity == "warning"
    assert sc["B"].status == "warn"
    assert head.verdict == "fail"
    # within the budget: the note goes, nothing is reported
    cheap = run(tmp_path / "c", ("refund", 50, 0.011), ("lookup", 1, 0.010))
    attach(cheap, base)
    assert all(not s.findings for s in cheap.scenarios)


def test_max_cost_multiplier_when_a_cost_is_not_recorded(tmp_path: Path) -> None:
    """Never a pass on a cost this run did not record: a scenario/not_recorded warning.
    Without a base cost to compare with, the check is skipped with a note saying why."""
    base = run(tmp_path / "b", ("refund", 50, 0.010), ("lookup", 1, None))
    head = run(tmp_path / "h", ("refund", 50, None), ("lookup", 1, 0.5))
    attach(head, base)
    sc = {s.id: s for s in head.scenarios}
    [fa] = sc["A"].findings
    assert (fa.rule, fa.severity) == ("scenario/not_recorded", "warning")
    assert fa.message == ("cost not recorded by 1 of 1 trace(s): max_cost_multiplier: 2 "
                          "cannot be checked")
    assert fa.config.key_path == "scenarios.A.thresholds.max_cost_multiplier"
    assert sc["A"].status == "warn" and fa.fingerprint
    # B's base cost is unknown: the check is skipped, and the note says why
    [fb] = sc["B"].findings
    assert (fb.rule, fb.severity) == ("scenario/no_baseline", "note")
    assert fb.message == ("max_cost_multiplier: 1.5 skipped: the base run did not record "
                          "this scenario's cost")
    assert sc["B"].status == "pass"
    # the warning is new on head, which this suite's regression gate does not allow
    assert {c.name: c.status for c in head.criteria if c.kind == "regression"}[
        "fail_on_new_violations"] == "fail"
    assert head.verdict == "fail"
    free = run(tmp_path / "f", ("refund", 50, 0.0), ("lookup", 1, 0.0))
    head = run(tmp_path / "h2", ("refund", 50, 0.5), ("lookup", 1, 0.5))
    attach(head, free)
    assert {f.message for s in head.scenarios for f in s.findings} == {
        "max_cost_multiplier: 2 skipped: the scenario cost nothing in the base run",
        "max_cost_multiplier: 1.5 skipped: the scenario cost nothing in the base run"}


def test_policy_change_is_detected(tmp_path: Path) -> None:
    base = run(tmp_path / "b", ("refund", 50, 0.01), ("lookup", 1, 0.01))
    policy = POLICY.replace("max: 100", "max: 90") + (
        "  lookup:\n    arguments:\n      id: {type: string}\n")
    suite = SUITE.replace("  - id: B\n", "  - id: C\n    expect: {tools: [x]}\n  - id: B\n")
    head = run(tmp_path / "h", ("refund", 50, 0.01), ("lookup", 1, 0.01), policy, suite)
    c = compare(head, base)
    p = c.policy
    assert p.changed
    assert p.modified == ("policy.yaml#tools.refund.arguments.amount.max",)
    assert "policy.yaml#tools.lookup.arguments.id.type" in p.added
    assert "agent-eval.yaml#scenarios.C.expect.tools" in p.added
    assert p.message == f"policy changed: {len(p.added)} rules added, 0 removed, 1 changed"
    assert policy_change(None, head.inventory).known is False


def test_a_change_outside_tests_and_tools_is_a_policy_change(tmp_path: Path) -> None:
    """A pull request that empties a tool group the blocklist names and lets unconstrained
    tools through (a policy's enforcement) removes findings as surely as deleting the
    test: the comparison says the policy changed, never 'policy unchanged'."""
    suite = SUITE.replace("tests:\n", "tool_groups:\n  danger: [delete_*]\ntests:\n  - id: bl\n"
                          "    metric: tool_blocklist\n    blocklist: ['@danger']\n")
    policy = POLICY.replace('version: "1"\n',
                            'version: "1"\nenforcement: {unconstrained_tools: deny}\n')
    base = run(tmp_path / "b", ("refund", 50, 0.01), ("delete_x", 1, 0.01), policy, suite)
    head = run(tmp_path / "h", ("refund", 50, 0.01), ("delete_x", 1, 0.01),
               policy.replace("deny", "allow"),
               suite.replace("danger: [delete_*]", "danger: [nothing]"))
    rules = {f.rule for f in base.findings}
    assert {"tool_blocklist", "args_valid/unconstrained_tool"} <= rules
    assert not {"tool_blocklist", "args_valid/unconstrained_tool"} & {
        f.rule for f in head.findings}
    p = compare(head, base).policy
    assert p.modified == ("agent-eval.yaml#tool_groups.danger",
                          "policy.yaml#enforcement.unconstrained_tools")
    assert p.message == "policy changed: 0 rules added, 0 removed, 2 changed"
    # and a key only the head configures is a rule added
    head = run(tmp_path / "h2", ("refund", 50, 0.01), ("delete_x", 1, 0.01), policy,
               suite.replace("tests:\n", "tool_match: exact\ntests:\n", 1))
    p = compare(head, base).policy
    assert (p.added, p.removed, p.modified) == (("agent-eval.yaml#tool_match",), (), ())


def test_moving_lines_changes_no_fingerprint_and_no_rule(tmp_path: Path) -> None:
    base = run(tmp_path / "b", ("refund", 150, 0.01), ("lookup", 1, 0.01))
    head = run(tmp_path / "h", ("refund", 150, 0.01), ("lookup", 1, 0.01),
               "# a comment\n\n" + POLICY, "# moved\n" + SUITE)
    c = compare(head, base)
    assert c.new_violations == 0 and c.unchanged_violations == 1
    assert not c.policy.changed


def test_a_cost_multiplier_failure_is_a_regression_and_new(tmp_path: Path) -> None:
    """A scenario that passes on both branches but fails head because its cost went
    from 0.010 to 0.025 (max_cost_multiplier: 2.0): a regression, its finding new in
    SARIF, and the comment does not say "0 regressions"."""
    base = run(tmp_path / "b", ("refund", 50, 0.010), ("lookup", 1, 0.010))
    head = run(tmp_path / "h", ("refund", 50, 0.025), ("lookup", 1, 0.010))
    assert scenario_status(head, "A") == "pass"  # before the comparison
    attach(head, base)
    b = head.baseline
    assert isinstance(b, Comparison)
    assert scenario_status(head, "A") == "fail"
    assert (b.regressions, b.regressed) == (1, ("A",))
    (row,) = [s for s in b.scenarios if s.id == "A"]
    assert (row.change, row.base_status, row.head_status) == (
        "regression", "pass", "fail")
    (f,) = [v for v in head.findings if v.rule == "scenario/threshold"]
    assert f.fingerprint in b.new
    # the base run held the scenario's no_baseline note; the threshold finding is not it
    assert {v.fingerprint for v in base.findings}.isdisjoint({f.fingerprint})
    # the only new finding of the evaluation: B's cost is unchanged (ratio 1 <= 1.5, its
    # note goes) and no argument breaks the policy (amount 50 <= 100). pass_rate is
    # counted again with A failed: 1 of 2, a drop of 0.5 from the base's 1.0 (> 0.1), so
    # max_pass_rate_drop is missed (its finding new); the scores are unchanged; and
    # fail_on_new_violations counts those two and its own finding: 3
    crit = {c.name: c for c in head.criteria if c.kind == "regression"}
    assert head.metrics["pass_rate"] == 0.5
    assert {n: c.status for n, c in crit.items()} == {
        "max_pass_rate_drop": "fail", "max_score_drop": "pass",
        "fail_on_new_violations": "fail"}
    gate, drop = crit["fail_on_new_violations"], crit["max_pass_rate_drop"]
    assert b.new_violations == 3
    assert set(b.new) == {f.fingerprint, drop.fingerprint, gate.fingerprint}
    assert gate.value == 3
    sarif = json.loads(RENDERERS["sarif"].render(head, RenderContext()))
    states = {r["ruleId"]: r.get("baselineState") for r in sarif["runs"][0]["results"]}
    assert states["scenario/threshold"] == "new"
    md = RENDERERS["markdown"].render(head, RenderContext())
    assert "1 regression," in md and "0 regressions" not in md
    assert head.verdict == "fail"


def scenario_status(res: Results, sid: str) -> str:
    return next(s.status for s in res.scenarios if s.id == sid)


ADVISORY = """\
version: "1"
suite: cmp
traces: traces/*.jsonl
scenarios:
  - id: A
    gate: warn
    expect: {tools: [refund]}
  - id: B
    gate: warn
    expect: {tools: [lookup]}
pass_criteria:
  regression: {max_score_drop: 20}
"""


def _without_b(root: Path, suite: str) -> Results:
    """``run`` on ``root`` with B's trace file deleted, not read back from results.json."""
    run(root, ("refund", 1, 0.01), ("lookup", 1, 0.01), suite=suite)
    (root / "traces" / "b.jsonl").unlink()
    s = load_suite(root / "agent-eval.yaml")
    files, errors = suite_sources(s, base=root)
    return evaluate_files(s, files, errors, timings=False)


def test_max_score_drop_never_passes_a_scenario_that_lost_its_score(tmp_path: Path) -> None:
    """B's trace is gone: B has no score now (ERROR, advisory: the run only warns) and
    its drop from 100 cannot be measured. The criterion said 'largest score drop 0
    (scenario A)' and passed; it warns, naming B. A scenario removed from the config is
    not counted (the policy check says it changed)."""
    base = run(tmp_path / "b", ("refund", 1, 0.01), ("lookup", 1, 0.01), suite=ADVISORY)
    assert [(s.id, s.status, s.score) for s in base.scenarios] == [
        ("A", "pass", 100.0), ("B", "pass", 100.0)]  # each calls the tool it expects
    head = _without_b(tmp_path / "h", ADVISORY)
    assert [(x.id, x.status, x.score) for x in head.scenarios] == [
        ("A", "pass", 100.0), ("B", "error", None)]
    attach(head, base)
    [c] = head.criteria
    assert (c.name, c.status, c.value) == ("max_score_drop", "warn", 0)
    assert c.message == ("largest score drop 0 (scenario A, max 20.0); 1 scenario scored in "
                         "the base run has no score now, so its drop cannot be measured: B "
                         "(base 100, error)")
    assert head.verdict == "warn"
    assert [f.severity for f in head.criteria_findings] == ["warning"]

    # no scenario left with a score in both runs (A's glob matches nothing): a warning
    only_a = ADVISORY.replace("expect: {tools: [refund]}", "expect: {tools: [refund]}\n"
                              "    traces: [traces/none-*.jsonl]")
    head = _without_b(tmp_path / "h2", only_a)
    attach(head, base)
    [c] = head.criteria
    assert (c.status, c.value) == ("warn", None)
    assert c.message.startswith("max_score_drop not checked: 2 scenarios scored in the base "
                                "run have no score now, so their drop cannot be measured: "
                                "A (base 100, error), B (base 100, error)"), c.message

    # B removed from the config: nothing to measure for it
    without_b = ADVISORY.replace("  - id: B\n    gate: warn\n    expect: {tools: [lookup]}\n", "")
    head = run(tmp_path / "h3", ("refund", 1, 0.01), ("lookup", 1, 0.01), suite=without_b)
    assert [x.id for x in head.scenarios] == ["A"]
    attach(head, base)
    [c] = head.criteria
    assert (c.status, c.value) == ("pass", 0)


# a missed gate and the numbers every output shows (docs/results.md "The baseline")
GATED = """\
version: "1"
suite: sd
traces: traces/*.jsonl
scenarios:
  - id: A
    gate: warn
    expect: {tools: [lookup_order]}
  - id: B
    gate: warn
    expect: {tools: [lookup_order]}
pass_criteria:
  regression: {max_pass_rate_drop: 0.1, fail_on_new_violations: true}
"""


def gated_run(root: Path, scenarios: tuple[str, ...]) -> Results:
    root.mkdir(parents=True)
    (root / "agent-eval.yaml").write_text(GATED)
    (root / "traces").mkdir()
    for sid in scenarios:
        lines = [{"type": "trace_start", "trace_id": sid.lower(), "scenario": sid},
                 {"type": "tool_call", "id": "c1", "tool": "lookup_order", "arguments": {}},
                 {"type": "output", "output": "ok"}, {"type": "trace_end"}]
        (root / "traces" / f"{sid}.jsonl").write_text(
            "\n".join(json.dumps(x) for x in lines) + "\n")
    s = load_suite(root / "agent-eval.yaml")
    files, errors = suite_sources(s, base=root)
    res = evaluate_files(s, files, errors, timings=False)
    return Results.from_dict(json.loads(RENDERERS["json"].render(res, RenderContext())))


def test_a_missed_gate_is_counted_alike_in_every_output(tmp_path: Path) -> None:
    """The audit's case: B lost its trace (tolerated: gate warn), so pass_rate drops 1 →
    0.5 and max_pass_rate_drop is missed. The comment counted the gate's finding as new,
    results.json, the outputs and fail_on_new_violations did not."""
    from agent_eval.github.step import step_outputs

    base = gated_run(tmp_path / "b", ("A", "B"))
    head = gated_run(tmp_path / "h", ("A",))
    attach(head, base)
    b = head.baseline
    assert isinstance(b, Comparison)
    crit = {c.name: c for c in head.criteria if c.kind == "regression"}
    assert crit["max_pass_rate_drop"].status == "fail"
    # new, by hand: B's scenario/missing_trace error, max_pass_rate_drop's finding, and
    # fail_on_new_violations' own (missed, as 2 new violations were found before it)
    rules = sorted(v.rule for v in head.findings if v.fingerprint in b.new)
    assert rules == ["criteria/regression", "criteria/regression", "scenario/missing_trace"]
    assert (b.new_violations, b.unchanged_violations) == (3, 0)
    assert crit["fail_on_new_violations"].status == "fail"
    assert crit["fail_on_new_violations"].value == 3
    assert crit["fail_on_new_violations"].message.startswith("3 new violations against")
    assert head.verdict == "fail"
    data = json.loads(RENDERERS["json"].render(head, RenderContext()))
    assert data["baseline"]["new_violations"] == 3
    assert len(data["baseline"]["findings"]["new"]) == 3
    outputs = step_outputs(head, tmp_path / "r.json", tmp_path / "r.sarif", tmp_path)
    assert (outputs["violations"], outputs["new-violations"]) == ("3", "3")
    md = RENDERERS["markdown"].render(head, RenderContext())
    assert "3 new violations," in md and "### 🆕 New violations (3)" in md
    sarif = json.loads(RENDERERS["sarif"].render(head, RenderContext()))
    states = [r.get("baselineState") for r in sarif["runs"][0]["results"]
              if r.get("level") in ("error", "warning")]
    assert states == ["new"] * 3


def test_a_gate_the_base_run_also_missed_is_unchanged(tmp_path: Path) -> None:
    """new + unchanged is every violation: a gate's finding the base run holds too (it was
    itself compared, and missed the same gate) is unchanged, not new."""
    base = gated_run(tmp_path / "b", ("A", "B"))
    mid = gated_run(tmp_path / "m", ("A",))
    attach(mid, base)  # mid misses max_pass_rate_drop (1 → 0.5) and fail_on_new_violations
    mid = Results.from_dict(json.loads(RENDERERS["json"].render(mid, RenderContext())))
    head = gated_run(tmp_path / "h", ())  # no trace at all: pass_rate 0.5 → 0
    attach(head, mid)
    b = head.baseline
    assert isinstance(b, Comparison)
    crit = {c.name: c for c in head.criteria if c.kind == "regression"}
    assert {n: c.status for n, c in crit.items()} == {
        "max_pass_rate_drop": "fail", "fail_on_new_violations": "fail"}
    # by hand: new is A's missing trace only; unchanged are B's missing trace and the two
    # gates' findings (mid had them, at the same keys); nothing of mid's is absent
    assert (b.new_violations, b.unchanged_violations, b.absent_violations) == (1, 3, 0)
    assert crit["fail_on_new_violations"].value == 1
    assert "besides this finding" in crit["fail_on_new_violations"].message
    violations = sum(1 for v in head.findings if v.severity in ("error", "warning"))
    assert b.new_violations + b.unchanged_violations == violations == 4


REQUIRED = SUITE.replace("  - id: A\n", "  - id: A\n    required: true\n").replace(
    "  regression: {max_pass_rate_drop: 0.1, max_score_drop: 20, fail_on_new_violations: true}",
    "  blocking: {min_pass_rate: 0.5}")


def test_a_required_scenario_its_cost_fails_fails_the_run(tmp_path: Path) -> None:
    """required: true always wins (docs/scenarios.md "Verdict"): a required scenario
    failed by max_cost_multiplier (0.025 / 0.010 = 2.5 > 2) fails the run. Its criterion
    was judged before the comparison and stayed "passed", and min_pass_rate: 0.5 (met by
    the evaluation's pass_rate, 1.0) tolerated the failure: the verdict was warn."""
    base = run(tmp_path / "b", ("refund", 50, 0.010), ("lookup", 1, 0.010), suite=REQUIRED)
    head = run(tmp_path / "h", ("refund", 50, 0.025), ("lookup", 1, 0.010), suite=REQUIRED)
    (req,) = [c for c in head.criteria if c.kind == "required"]
    assert req.status == "pass"  # before the comparison
    attach(head, base)
    assert scenario_status(head, "A") == "fail"
    (req,) = [c for c in head.criteria if c.kind == "required"]
    assert (req.name, req.status, req.value) == ("required:A", "fail", "fail")
    assert req.message == "required scenario A did not pass (status fail)"
    b = head.baseline
    assert isinstance(b, Comparison)
    assert req.fingerprint in b.new  # its finding is a new one
    assert head.verdict == "fail"


COSTLY = """\
version: "1"
suite: cmp
traces: traces/*.jsonl
scenarios:
  - {id: A, category: billing, expect: {tools: [refund]}, thresholds: {max_cost_multiplier: 2}}
  - {id: B, category: billing, expect: {tools: [lookup]}, thresholds: {max_cost_multiplier: 2}}
pass_criteria:
  blocking: {min_pass_rate: 0.6}
  warning: {min_weighted_pass_rate: 0.5}
  by_category: {billing: 0.5}
"""


def test_the_status_metrics_are_counted_again_when_the_cost_fails_scenarios(
        tmp_path: Path) -> None:
    """Both scenarios cost 3 times their base (0.03 / 0.01 > 2): both FAIL. Counted by
    the evaluation, pass_rate stayed 1.0, so min_pass_rate: 0.6 was met and tolerated the
    two failures: the verdict was warn, exit 0. Counted again: 0 of 2 passed (pass_rate,
    weighted_pass_rate and billing's rate 0), every criterion on them missed."""
    base = run(tmp_path / "b", ("refund", 1, 0.01), ("lookup", 1, 0.01), suite=COSTLY)
    head = run(tmp_path / "h", ("refund", 1, 0.03), ("lookup", 1, 0.03), suite=COSTLY)
    before = head.verdict
    assert head.metrics["pass_rate"] == 1.0 and before == "pass"
    attach(head, base)
    assert [scenario_status(head, sid) for sid in ("A", "B")] == ["fail", "fail"]
    assert (head.metrics["scenarios_passed"], head.metrics["pass_rate"],
            head.metrics["weighted_pass_rate"], head.metrics["pass_rate.billing"]) == (
        0, 0.0, 0.0, 0.0)
    got = {c.name: (c.status, c.value) for c in head.criteria}
    assert got == {"min_pass_rate": ("fail", 0.0), "min_weighted_pass_rate": ("warn", 0.0),
                   "billing": ("fail", 0.0)}
    assert head.verdict == "fail"


def test_a_composite_is_not_passed_on_status_metrics_that_changed(tmp_path: Path) -> None:
    """The composite weighs pass_rate (1.0 when evaluated, so 1.0 >= 0.9): the results do
    not hold its weights, so once the cost failed a scenario it is not judged again, and
    says so (a warning, never the stale pass)."""
    suite = COSTLY.replace("  blocking: {min_pass_rate: 0.6}\n", "").replace(
        "  warning: {min_weighted_pass_rate: 0.5}\n  by_category: {billing: 0.5}\n",
        "  composite: {weights: {pass_rate: 1}, min: 0.9}\n")
    base = run(tmp_path / "b", ("refund", 1, 0.01), ("lookup", 1, 0.01), suite=suite)
    head = run(tmp_path / "h", ("refund", 1, 0.03), ("lookup", 1, 0.01), suite=suite)
    attach(head, base)
    assert [scenario_status(head, sid) for sid in ("A", "B")] == ["fail", "pass"]
    (c,) = head.criteria
    assert (c.kind, c.status) == ("composite", "warn")
    assert "not judged again" in c.message and "pass_rate" in c.message
    assert head.verdict == "fail"  # A failed, and no criterion tolerates it


def test_a_composite_of_status_metrics_is_unknown_once_they_changed(
        tmp_path: Path) -> None:
    """The composite (weights {pass_rate: 1}, no min) was 1.0 when evaluated; once the
    cost failed A, pass_rate is 1 of 2 = 0.5, so 1.0 is no figure of this run: it was
    left in the metrics, and the action's score output said 1.0. The results do not hold
    the weights to count it again: it is unknown (null), and the score output empty."""
    from agent_eval.github.step import step_outputs

    suite = COSTLY.replace("  blocking: {min_pass_rate: 0.6}\n", "").replace(
        "  warning: {min_weighted_pass_rate: 0.5}\n  by_category: {billing: 0.5}\n",
        "  composite: {weights: {pass_rate: 1}}\n")
    base = run(tmp_path / "b", ("refund", 1, 0.01), ("lookup", 1, 0.01), suite=suite)
    head = run(tmp_path / "h", ("refund", 1, 0.03), ("lookup", 1, 0.01), suite=suite)
    assert head.metrics["composite"] == 1.0  # before
    attach(head, base)
    assert head.metrics["pass_rate"] == 0.5
    assert head.metrics.get("composite", "missing") is None
    assert step_outputs(head, tmp_path / "r.json", tmp_path / "s.sarif",
                        tmp_path)["score"] == ""
    doc = json.loads(RENDERERS["json"].render(head, RenderContext()))
    jsonschema.validate(doc, results_schema())
    assert doc["metrics"]["composite"] is None


THREE = """\
version: "1"
suite: cmp
traces: traces/*.jsonl
scenarios:
  - {id: A, gate: warn, expect: {tools: [refund]}, thresholds: {min_tool_recall: 1}}
  - {id: B, gate: warn, expect: {tools: [lookup]}, thresholds: {min_tool_recall: 1}}
  - {id: C, gate: warn, expect: {tools: [refund]}, thresholds: {min_tool_recall: 1}}
pass_criteria:
  regression: {max_pass_rate_drop: 0.3333333}
"""


@pytest.mark.parametrize(("limit", "status"), [("0.3333333", "fail"), ("0.3333334", "pass")])
def test_max_pass_rate_drop_compares_the_unrounded_rates(tmp_path: Path, limit: str,
                                                         status: str) -> None:
    """Base 3 of 3 passed, head 2 of 3: the drop is 1 - 2/3 = 0.33333333..., above
    0.3333333 and below 0.3333334. results.json holds the head rate as 0.666667, whose
    drop 0.333333 met 0.3333333 (docs/scenarios.md: comparisons use the unrounded
    values)."""
    suite = THREE.replace("0.3333333", limit)
    base = run(tmp_path / "b", ("refund", 1, 0.01), ("lookup", 1, 0.01), suite=suite)
    (tmp_path / "b" / "traces" / "c.jsonl").write_text(trace("c-1", "C", "refund", 1, 0.01))
    base = _reload(tmp_path / "b")
    head = run(tmp_path / "h", ("refund", 1, 0.01), ("lookup", 1, 0.01), suite=suite)
    (tmp_path / "h" / "traces" / "c.jsonl").write_text(trace("c-1", "C", "other", 1, 0.01))
    head = _reload(tmp_path / "h")
    assert (base.metrics["pass_rate"], head.metrics["pass_rate"]) == (1.0, 0.666667)
    attach(head, base)
    (gate,) = [c for c in head.criteria if c.name == "max_pass_rate_drop"]
    assert (gate.status, gate.value) == (status, 0.333333)
    # a missed gate's drop is shown with the digits that tell it from its limit
    shown = "0.33333333333333337" if status == "fail" else "0.3333"
    assert f"(drop {shown}, max {float(limit)})" in gate.message, gate.message


def _reload(root: Path) -> Results:
    s = load_suite(root / "agent-eval.yaml")
    files, errors = suite_sources(s, base=root)
    res = evaluate_files(s, files, errors, timings=False)
    return Results.from_dict(json.loads(RENDERERS["json"].render(res, RenderContext())))


@pytest.mark.parametrize(("base_cost", "head_cost", "status"), [
    # 4.4e-6 / 1.6e-6 = 2.75 > 2: both were 6-decimal 0.000002 and 0.000004, ratio 2.0, a pass
    (1.6e-6, 4.4e-6, "fail"),
    # 2.6e-6 / 1.4e-6 = 1.86 <= 2: were 0.000003 / 0.000001 = 3.0, a failure
    (1.4e-6, 2.6e-6, "pass"),
])
def test_a_cost_multiplier_of_tiny_costs_compares_them_unrounded(
        tmp_path: Path, base_cost: float, head_cost: float, status: str) -> None:
    """A cheap model's trace costs millionths of a dollar: the scenario's mean cost is
    kept to 6 significant digits (it was rounded to 6 decimals in results.json, so the
    multiple compared was off by up to a factor of 3)."""
    base = run(tmp_path / "b", ("refund", 1, base_cost), ("lookup", 1, 0.01))
    head = run(tmp_path / "h", ("refund", 1, head_cost), ("lookup", 1, 0.01))
    assert [s.cost_usd for s in base.scenarios if s.id == "A"] == [base_cost]
    attach(head, base)
    assert scenario_status(head, "A") == status


@pytest.mark.parametrize(("cost", "rule", "status"), [
    (0.1, "scenario/threshold", "fail"), (0.03, "scenario/not_recorded", "warn")])
def test_a_cost_multiplier_the_recorded_costs_already_exceed_fails(
        tmp_path: Path, cost: float, rule: str, status: str) -> None:
    """Two traces of A, one costing ``cost``, one whose cost is not recorded; A cost 0.01
    in the base run (max_cost_multiplier: 2.0). The mean cost is at least (cost + 0) / 2:
    for 0.1, 0.05 = 5 times the base, over 2 whatever the other trace cost: a miss (it
    was only "cannot be checked", a warning: exit 0). For 0.03, at least 0.015 = 1.5
    times: the other trace decides, so it cannot be checked."""
    base = run(tmp_path / "b", ("refund", 1, 0.01), ("lookup", 1, 0.01))
    root = tmp_path / "h"
    run(root, ("refund", 1, cost), ("lookup", 1, 0.01))
    (root / "traces" / "a2.jsonl").write_text(trace("a-2", "A", "refund", 1, None))
    head = _reload(root)
    attach(head, base)
    (f,) = [v for v in head.findings if v.scenario == "A" and v.rule.startswith("scenario/")
            and "cost" in v.message]
    assert (f.rule, scenario_status(head, "A")) == (rule, status)
    if status == "fail":
        assert f.message == (
            "cost_multiplier = at least 5 (cost not recorded by 1 of 2 trace(s), taken as 0) "
            "exceeds max_cost_multiplier: 2 (cost at least 0.05 USD, base 0.01 USD)")
        assert f.value == 5.0


def test_the_state_of_a_finding_is_looked_up_not_searched_for() -> None:
    """SARIF asks the state of each of its (up to 25,000) results: ``unchanged`` was a
    tuple scanned each time, 7 s for a run of 72,000 unchanged findings, and minutes as
    the run grew. 5,000 lookups in 100,000 fingerprints (the old scan: about 10 s) now
    take milliseconds; the states are the same, also in a comparison ``replace``d."""
    from dataclasses import replace

    from agent_eval.findings import ConfigRef, Finding

    unchanged = tuple(f"{i:032x}" for i in range(100_000))
    c = Comparison({"kind": "results"}, "s", "pass", None, {}, {}, (), (), (), (), (), 0,
                   len(unchanged), 0, (), unchanged, (),
                   PolicyChange(False, False, (), (), (), ""))

    def finding(fp: str) -> Finding:
        return Finding("args_valid/maximum", "error", "m", "t", ConfigRef("p.yaml", 1, 1, "k"),
                       None, fingerprint=fp)

    new = [finding(f"{i:032x}") for i in range(200_000, 205_000)]
    started = time.perf_counter()
    assert {c.state_of(v) for v in new} == {"new"}
    assert time.perf_counter() - started < 1.0
    assert c.state_of(finding(unchanged[-1])) == "unchanged"
    moved = replace(c, unchanged=(new[0].fingerprint,))
    assert moved.state_of(new[0]) == "unchanged"
    assert moved.state_of(finding(unchanged[-1])) == "new"
    assert moved == replace(moved)  # (the lookup set is no part of the value)


TWO_THIRDS = """\
version: "1"
suite: sd
traces: traces/*.jsonl
scenarios:
  - {id: A, gate: warn, expect: {tools: [a, b, c]}}
pass_criteria:
  regression: {max_score_drop: LIMIT}
"""


def _tools_run(root: Path, suite: str, tools: list[str]) -> Results:
    root.mkdir(parents=True)
    (root / "agent-eval.yaml").write_text(suite)
    (root / "traces").mkdir()
    lines = [{"type": "trace_start", "trace_id": "a-1", "scenario": "A"},
             *({"type": "tool_call", "tool": t, "arguments": {}} for t in tools),
             {"type": "output", "output": "x"}, {"type": "trace_end"}]
    (root / "traces" / "a.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return _reload(root)


@pytest.mark.parametrize(("limit", "status"), [("33.33", "fail"), ("33.3334", "pass")])
def test_max_score_drop_compares_the_scores_to_6_decimals(tmp_path: Path, limit: str,
                                                          status: str) -> None:
    """A's tools F1 falls from 1 to 2/3: its score from 100 to 66.666667, shown as 66.67.
    The drop, 33.333333, was taken from the shown scores as 33.33, which met
    max_score_drop: 33.33 (docs/scenarios.md: comparisons use the unrounded values); the
    message showed '33.33 (max 33.33)' for a missed gate."""
    suite = TWO_THIRDS.replace("LIMIT", limit)
    base = _tools_run(tmp_path / "b", suite, ["a", "b", "c"])
    head = _tools_run(tmp_path / "h", suite, ["a", "b", "d"])
    assert [(s.score, s.metrics["score"]) for s in head.scenarios] == [(66.67, 66.666667)]
    attach(head, base)
    (gate,) = head.criteria
    assert (gate.status, gate.value) == (status, 33.3333)
    if status == "fail":
        assert gate.message == ("largest score drop 33.333333 (scenario A, max 33.33) "
                                "(regression criterion missed)")
        assert head.verdict == "fail"
    else:
        assert gate.message == "largest score drop 33.33 (scenario A, max 33.3334)"
