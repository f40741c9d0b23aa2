"""Suite metrics, pass criteria, verdicts and exit codes (docs/scenarios.md, docs/results.md), trace
↔ scenario matching and repeats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import read_results

from agent_eval._cli import main
from agent_eval.results import Results

from .scenario_harness import Workspace, at, criterion, rules_of, scenario, trace

HEAD = 'version: "1"\nsuite: s\ntraces: traces/*.jsonl\n'


def cli(ws: Workspace, *extra: str) -> tuple[int, dict[str, object]]:
    out = ws.root / "out"
    code = main(["run", "--config", str(ws.root / "agent-eval.yaml"), "--output-dir",
                 str(out), "-q", *extra])
    return code, read_results(out)


# ----------------------------------------------------------------- verdicts, exits
SAFETY = HEAD + """scenarios:
  - id: HAPPY
    category: happy_path
    expect: {tools: [lookup_order]}
  - id: ATTACK
    category: adversarial
    expect: {forbidden_tools: [delete_*]}
  - id: ATTACK-2
    category: adversarial
    expect: {output: {not_contains: [password]}}
"""
SAFETY_TRACES = {
    "h.jsonl": trace("h", "HAPPY", ["lookup_order"]),
    "a.jsonl": trace("a", "ATTACK", ["delete_customer"]),
    "b.jsonl": trace("b", "ATTACK-2", [], "I cannot share that."),
}


def test_all_passing_is_pass_exit_0(ws: Workspace) -> None:
    suite = HEAD + "scenarios:\n  - id: A\n    required: true\n    expect: {tools: [x]}\n"
    ws.write(suite, {"a.jsonl": trace("a", "A", ["x"])})
    code, res = cli(ws)
    assert (code, res["verdict"]) == (0, "pass")
    assert res["metrics"]["pass_rate"] == 1.0  # type: ignore[index]


def test_required_scenario_failing_fails_the_suite_exit_1(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: CORE-001
    required: true
    expect: {output: {contains: [refund]}}
  - id: EXTRA
    expect: {output: {contains: [thanks]}}
"""
    ws.write(suite, {"c.jsonl": trace("c", "CORE-001", [], "Please call us."),
                     "e.jsonl": trace("e", "EXTRA", [], "thanks")})
    code, data = cli(ws)
    assert (code, data["verdict"]) == (1, "fail")
    res = Results.from_dict(data)
    c = criterion(res, "required:CORE-001")
    assert (c["kind"], c["status"], c["value"]) == ("required", "fail", "fail")
    assert at(c) == ws.line("required: true")
    assert res.metrics["pass_rate"] == 0.5
    # the same failure on an optional scenario fails the run too (issue 10 §1: a failed
    # test fails the run in every scenario seed) ...
    ws.write(suite.replace("required: true", "required: false"), {})
    code, data = cli(ws)
    assert (code, data["verdict"]) == (1, "fail")
    # ... unless the scenario is advisory: then it warns
    ws.write(suite.replace("required: true", "gate: warn"), {})
    code, data = cli(ws)
    assert (code, data["verdict"]) == (0, "warn")
    assert cli(ws, "--fail-on", "warn")[0] == 1


def test_adversarial_scenario_failing_lowers_safety_rate(ws: Workspace) -> None:
    ws.write(SAFETY, SAFETY_TRACES)
    code, data = cli(ws)
    res = Results.from_dict(data)
    assert res.metrics["safety_rate"] == 0.5  # 1 of 2 adversarial scenarios passed
    assert res.metrics["pass_rate.adversarial"] == 0.5
    assert res.metrics["pass_rate"] == pytest.approx(2 / 3, abs=1e-6)
    # no criteria: a failed scenario fails the run
    assert (code, res.verdict) == (1, "fail")
    gated = SAFETY + "pass_criteria:\n  blocking: {min_safety_rate: 1.0}\n"
    ws.write(gated, {})
    code, data = cli(ws)
    assert (code, data["verdict"]) == (1, "fail")
    c = criterion(Results.from_dict(data), "min_safety_rate")
    assert (c["status"], c["value"], c["threshold"]) == ("fail", 0.5, 1.0)
    assert at(c) == ws.line("min_safety_rate")
    assert c["message"] == ("safety_rate = 0.5 < 1 (blocking criterion min_safety_rate "
                            "missed)")
    # the same miss as a warning criterion warns (with the failed scenario advisory)
    ws.write(gated.replace("blocking", "warning").replace(
        "category: adversarial\n    expect: {forbidden",
        "category: adversarial\n    gate: warn\n    expect: {forbidden"), {})
    code, data = cli(ws)
    assert (code, data["verdict"]) == (0, "warn")
    # by category
    ws.write(SAFETY + "pass_criteria:\n  by_category: {adversarial: 1.0, happy_path: 1.0}\n",
             {})
    code, data = cli(ws)
    res = Results.from_dict(data)
    assert (code, res.verdict) == (1, "fail")
    assert [(c.name, c.status) for c in res.criteria] == [
        ("adversarial", "fail"), ("happy_path", "pass")]


def test_warn_only_budget_warns_exit_0(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: COST
    required: true
    expect: {tools: [lookup_order]}
    thresholds: {max_cost_usd: 0.50}
    warn_thresholds: {max_cost_usd: 0.20}
"""
    ws.write(suite, {"c.jsonl": trace("c", "COST", ["lookup_order"], cost=0.31)})
    code, data = cli(ws)
    res = Results.from_dict(data)
    s = scenario(res, "COST")
    assert (code, res.verdict, s["status"]) == (0, "warn", "warn")
    assert res.metrics["pass_rate"] == 1.0  # WARN counts as passed
    assert criterion(res, "required:COST")["status"] == "pass"
    (f,) = s["findings"]
    assert f["rule"] == "scenario/warn_threshold"
    assert at(f) == ws.line("max_cost_usd: 0.20")
    assert cli(ws, "--fail-on", "warn")[0] == 1
    assert cli(ws, "--fail-on", "never")[0] == 0


def test_missing_trace_is_an_error_scenario_counted_as_not_passed(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: REFUND-001
    expect: {tools: [issue_refund]}
  - id: REFUND-003
    expect: {tools: [issue_refund], behaviors: [{tool_called: issue_refund}]}
"""
    ws.write(suite, {"a.jsonl": trace("a", "REFUND-001", ["issue_refund"]),
                     "b.jsonl": trace("b", "REFUND-03", ["issue_refund"])})
    code, data = cli(ws)
    res = Results.from_dict(data)
    s = scenario(res, "REFUND-003")
    assert (s["status"], s["traces_total"], s["score"]) == ("error", 0, None)
    (f,) = s["findings"]
    assert (f["rule"], f["severity"]) == ("scenario/missing_trace", "error")
    assert f["message"].startswith("no trace found for scenario REFUND-003")
    assert "did you mean 'REFUND-03'" in f["message"]  # the id the trace names
    assert at(f) == ws.line("id: REFUND-003")
    # counted as not passed, and as observing nothing
    m = res.metrics
    assert (m["pass_rate"], m["tool_recall"], m["behavior_coverage"]) == (0.5, 0.5, 0.0)
    # a scenario with no trace is never a pass: it fails the run (issue 10 §1: "0 of 2
    # scenarios passed ... Verdict: WARN" was exit 0) ...
    assert (code, res.verdict) == (1, "fail")
    ws.write(suite.replace("  - id: REFUND-003\n", "  - id: REFUND-003\n    required: true\n"),
             {})
    code, data = cli(ws)
    assert (code, data["verdict"]) == (1, "fail")  # a required one
    ws.write(suite + "pass_criteria:\n  blocking: {min_pass_rate: 0.9}\n", {})
    assert cli(ws)[0] == 1
    # ... unless tolerated: advisory, or a blocking min_pass_rate below 1.0 that is met
    ws.write(suite.replace("  - id: REFUND-003\n", "  - id: REFUND-003\n    gate: warn\n"),
             {})
    code, data = cli(ws)
    assert (code, data["verdict"]) == (0, "warn")
    ws.write(suite + "pass_criteria:\n  blocking: {min_pass_rate: 0.5}\n", {})
    code, data = cli(ws)
    assert (code, data["verdict"]) == (0, "warn")
    assert scenario(Results.from_dict(data), "REFUND-003")["status"] == "error"


def test_input_errors_still_make_the_verdict_error_exit_2(ws: Workspace) -> None:
    suite = HEAD + "scenarios:\n  - id: A\n    expect: {tools: [x]}\n"
    ws.write(suite, {"a.jsonl": trace("a", "A", ["x"]) + "{oops\n"})
    code, data = cli(ws)
    assert (code, data["verdict"]) == (2, "error")


def test_regression_criteria_are_skipped_without_a_baseline(ws: Workspace) -> None:
    suite = SAFETY.replace("ATTACK", "OTHER") + """pass_criteria:
  regression: {max_pass_rate_drop: 0.05, fail_on_new_violations: true}
"""
    ws.write(suite, SAFETY_TRACES)
    res = Results.from_dict(cli(ws)[1])
    assert [(c.name, c.status, c.message) for c in res.criteria] == [
        ("max_pass_rate_drop", "skip", "max_pass_rate_drop skipped: no baseline"),
        ("fail_on_new_violations", "skip", "fail_on_new_violations skipped: no baseline")]


def test_an_unknown_metric_warns_instead_of_passing(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: A
    expect: {tools: [x]}
pass_criteria:
  blocking: {max_latency_p95_ms: 5000}
"""
    ws.write(suite, {"a.jsonl": trace("a", "A", ["x"], duration=None)})
    code, data = cli(ws)
    res = Results.from_dict(data)
    c = criterion(res, "max_latency_p95_ms")
    assert (c["status"], c["value"]) == ("warn", None)
    assert "unknown" in c["message"]
    assert (code, res.verdict) == (0, "warn")


def test_a_metric_some_traces_did_not_record_warns_instead_of_passing(
        ws: Workspace) -> None:
    """latency_p95_ms and token_efficiency are computed over the traces that recorded
    latency or tokens: with one fast trace of ten that did, p95 read 100 and
    max_latency_p95_ms: 1000 passed (exit 0) whatever the nine others took. Such a
    criterion, and a composite weighing latency, now warns; a p95 the recorded latencies
    already put over the limit (the others taken as 0) still fails."""
    suite = HEAD + """scenarios:
  - id: A
    expect: {tools: [x]}
pass_criteria:
  blocking: {max_latency_p95_ms: 1000, min_token_efficiency: 1}
  composite: {weights: {pass_rate: 1, latency: 1}, min: 0.1}
"""
    traces = {"fast.jsonl": trace("fast", "A", ["x"], duration=100, tokens=100)}
    for n in range(9):
        traces[f"u{n}.jsonl"] = trace(f"u{n}", "A", ["x"], duration=None, tokens=None)
    ws.write(suite, traces)
    code, data = cli(ws)
    res = Results.from_dict(data)
    assert res.metrics["latency_p95_ms"] == 100  # the one trace that recorded it
    crit = {c.name: (c.status, c.message) for c in res.criteria}
    assert crit["max_latency_p95_ms"] == (
        "warn", "latency not recorded by 9 of 10 scenario trace(s), so latency_p95_ms = "
        "100 over the others: max_latency_p95_ms: 1000 cannot be checked")
    assert crit["min_token_efficiency"][0] == "warn"
    assert crit["min_token_efficiency"][1].startswith("tokens not recorded by 9 of 10 ")
    assert crit["composite"][0] == "warn"
    assert (code, res.verdict) == (0, "warn")

    # two of twenty over the limit: the p95 is the 19th smallest (nearest rank ⌈0.95·20⌉),
    # at least 5000 even if the eighteen unrecorded ones took no time at all
    for path in (ws.root / "traces").glob("*.jsonl"):
        path.unlink()
    traces = {"s1.jsonl": trace("s1", "A", ["x"], duration=5000),
              "s2.jsonl": trace("s2", "A", ["x"], duration=6000)}
    for n in range(18):
        traces[f"u{n}.jsonl"] = trace(f"u{n}", "A", ["x"], duration=None)
    ws.write(suite.replace(", min_token_efficiency: 1", ""), traces)
    code, data = cli(ws)
    res = Results.from_dict(data)
    c = criterion(res, "max_latency_p95_ms")
    assert c["status"] == "fail"
    assert c["message"].startswith("latency_p95_ms = at least 5000 > 1000 (latency not "
                                   "recorded by 18 of 20 scenario trace(s), taken as 0)")
    assert (code, res.verdict) == (1, "fail")


# ------------------------------------------------------------------ suite metrics
METRICS_SUITE = HEAD + """scenarios:
  - id: A
    category: happy_path
    weight: 3
    expect:
      tools: [a, b]
      output: {contains: [done]}
      behaviors: [{tool_called: a}, {tool_called: b}]
  - id: B
    category: happy_path
    expect:
      tools: [a]
      output: {contains: [done]}
  - id: C
    category: adversarial
    expect:
      forbidden_tools: [evil]
      behaviors: [{output_contains: refuse}, {tool_not_called: evil}]
  - id: D
    category: edge_case
    weight: 0.5
    expect:
      tools: [c]
pass_criteria:
  blocking: {min_pass_rate: 0.5, min_accuracy: 0.5}
  warning: {max_latency_p95_ms: 4000, min_token_efficiency: 100}
  composite:
    weights: {accuracy: 0.3, safety_rate: 0.4, behavior_coverage: 0.2, latency: 0.1}
    min: 0.5
"""
METRICS_TRACES = {
    # A: tools a, b, x (recall 1, 2 of 3 used expected), output ok, behaviors 2/2
    "a.jsonl": trace("a", "A", ["a", "b", "x"], "done", duration=1000, tokens=100),
    # B: tool y only (recall 0, precision 0), output fails -> B fails? no: only a score
    "b.jsonl": trace("b", "B", ["y"], "nope", duration=2000, tokens=300),
    # C: calls evil -> fails; behaviors: output "I refuse" observed, evil called -> 1/2
    "c.jsonl": trace("c", "C", ["evil"], "I refuse", duration=3000, tokens=200),
    # D: no trace -> error (not passed, observes nothing)
}


def test_suite_metrics_against_hand_computed_values(ws: Workspace) -> None:
    res = ws.run(METRICS_SUITE, METRICS_TRACES)
    status = {s.id: s.status for s in res.scenarios}
    # B's output check fails, which fails B (output checks are blocking)
    assert status == {"A": "pass", "B": "fail", "C": "fail", "D": "error"}
    m = res.metrics
    assert m["scenarios"] == 4 and m["scenarios_passed"] == 1
    assert m["pass_rate"] == 0.25
    assert m["weighted_pass_rate"] == pytest.approx(3 / 5.5, abs=1e-6)
    assert m["accuracy"] == 0.5  # A and B have output checks; A's pass
    # micro: Σ|E∩U| / Σ|U| over A, B, D (tools configured): used-and-expected 2 + 0 + 0,
    # used 3 + 1 + 0; expected-and-used 2 + 0 + 0, expected 2 + 1 + 1
    assert m["tool_precision"] == pytest.approx(2 / 4)
    assert m["tool_recall"] == pytest.approx(2 / 4)
    assert m["safety_rate"] == 0.0 and m["pass_rate.adversarial"] == 0.0
    assert m["pass_rate.happy_path"] == 0.5 and m["pass_rate.edge_case"] == 0.0
    assert m["behavior_coverage"] == pytest.approx((1.0 + 0.5) / 2)
    assert m["latency_p95_ms"] == 3000  # nearest rank ⌈0.95·3⌉ = 3 of [1000, 2000, 3000]
    # scores: A (0.3·1 + 0.5·1) / 0.8 = 100; B 0; C 0 (forbidden tool); D none
    assert m["mean_score"] == pytest.approx(100 / 3, abs=1e-4)
    assert m["token_efficiency"] == pytest.approx((100 / 3) / 200 * 1000, abs=1e-3)
    # composite: 0.3·0.5 + 0.4·0 + 0.2·0.75 + 0.1·(1 − 3000/4000) = 0.325
    assert m["composite"] == pytest.approx(0.325)
    crit = {c.name: (c.kind, c.status) for c in res.criteria}
    assert crit == {"min_pass_rate": ("blocking", "fail"),
                    "min_accuracy": ("blocking", "pass"),
                    "max_latency_p95_ms": ("warning", "pass"),
                    "min_token_efficiency": ("warning", "pass"),
                    "composite": ("composite", "fail")}
    assert res.verdict == "fail"


def test_jobs_give_the_same_results(ws: Workspace) -> None:
    traces = dict(METRICS_TRACES)
    for n in range(6):  # repeats of A across files, some failing
        traces[f"r{n}.jsonl"] = trace(f"r{n}", "A", ["a", "b"] if n % 3 else ["a"],
                                      "done", duration=100 * n + 1, tokens=10 * n + 1)
    one = ws.run(METRICS_SUITE, traces, jobs=1).to_dict()
    two = ws.run(METRICS_SUITE, traces, jobs=2).to_dict()
    three = ws.run(METRICS_SUITE, traces, jobs=3).to_dict()
    assert one == two == three


# --------------------------------------------------------------- repeats, matching
# 4 of 5 meet min_pass_ratio 0.8: pass (issue 10 §1), the failing trace still listed
@pytest.mark.parametrize(("passing", "status"), [(5, "pass"), (4, "pass"), (3, "fail")])
def test_repeats_pass_at_min_pass_ratio(ws: Workspace, passing: int, status: str) -> None:
    suite = HEAD + """scenarios:
  - id: R
    min_pass_ratio: 0.8
    expect: {output: {contains: [ok]}}
"""
    traces = {f"t{n}.jsonl": trace(f"t{n}", "R", [], "ok" if n < passing else "no")
              for n in range(5)}
    s = scenario(ws.run(suite, traces), "R")
    assert s["status"] == status
    assert (s["traces_total"], s["traces_passed"]) == (5, passing)
    assert s["trace_pass_rate"] == passing / 5
    assert [r["trace_id"] for r in s["traces_not_passed"]] == [
        f"t{n}" for n in range(passing, 5)]
    assert s["score"] == pytest.approx(100 * passing / 5)


def test_matching_by_glob_by_id_and_by_file_stem(tmp_path: Path) -> None:
    # the suite lives in a sub-folder of the repository: globs are relative to it
    ws = Workspace(tmp_path / "suite")
    ws.root.mkdir()
    suite = """suite: s
traces: traces/**/*.jsonl
scenarios:
  - id: GLOB
    traces: traces/repeats/*.jsonl
    expect: {state: never}  # every trace fails, so all are listed in traces_not_passed
  - id: BY-ID
    expect: {state: never}
  - id: refund-001
    expect: {state: never}
  - id: NONE
"""
    ws.write(suite, {
        "repeats/one.jsonl": trace("r1", "BY-ID", []),  # in the glob: GLOB (and BY-ID)
        "repeats/two.jsonl": trace("r2", None, []),
        "x.jsonl": trace("x", "BY-ID", []),
        "REFUND-001.jsonl": trace("f", None, []),  # the file stem, case-insensitively
        "other.jsonl": trace("o", "refund-001", []),  # by id
    })
    (ws.root / ".git").rmdir()
    (tmp_path / ".git").mkdir()  # the repository root is the suite's parent folder
    from agent_eval.api import load_suite, suite_sources
    from agent_eval.engine import evaluate_files

    s = load_suite(ws.root / "agent-eval.yaml")
    files, errors = suite_sources(s)
    res = evaluate_files(s, files, errors, timings=False)
    got = {sc.id: sorted(r.trace_id for r in sc.traces_not_passed)
           for sc in res.scenarios}
    assert got == {"GLOB": ["r1", "r2"], "BY-ID": ["r1", "x"], "refund-001": ["f", "o"],
                   "NONE": []}
    assert scenario(res, "GLOB")["traces_not_passed"][0]["file"] == \
        "suite/traces/repeats/one.jsonl"
    (f,) = scenario(res, "NONE")["findings"]
    assert f["message"] == ("no trace found for scenario NONE (no trace has scenario id "
                            "'NONE' or a file named NONE.*)")


def test_a_glob_that_matches_no_trace(ws: Workspace) -> None:
    suite = HEAD + "scenarios:\n  - id: G\n    traces: traces/nothing-*.jsonl\n"
    res = ws.run(suite, {"a.jsonl": trace("a", "G", [])})
    (f,) = scenario(res, "G")["findings"]
    assert "its traces glob matched no trace" in f["message"]
    assert at(f) == ws.line("traces: traces/nothing")


def test_results_round_trip_and_validate_against_the_schema(ws: Workspace) -> None:
    import jsonschema  # type: ignore[import-untyped]

    from agent_eval.schemas import results_schema

    res = ws.run(METRICS_SUITE, METRICS_TRACES)
    data = res.to_dict()
    jsonschema.Draft202012Validator(results_schema()).validate(data)
    again = Results.from_dict(json.loads(json.dumps(data)))
    assert again.to_dict() == data
    # every finding SARIF lists: violations, scenario findings, missed criteria
    rules = [f.rule for f in again.findings]
    assert "scenario/missing_trace" in rules and "criteria/blocking" in rules
    assert all(f.fingerprint for f in again.findings)


def test_a_trace_naming_a_globbed_scenario_is_not_an_unknown_id(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: G
    traces: traces/g-*.jsonl
  - id: MISSING
"""
    # names G but lies outside G's glob: G does not get it, and G is no "unknown" id
    res = ws.run(suite, {"other.jsonl": trace("o", "G", []),
                         "g-1.jsonl": trace("g", "X-1", [])})
    assert scenario(res, "G")["traces_total"] == 1
    (f,) = scenario(res, "MISSING")["findings"]
    assert f["message"].endswith("traces name scenarios that are not in the suite: X-1")


def test_the_unknown_ids_kept_do_not_depend_on_the_order() -> None:
    import random

    from agent_eval.scenarios.evaluate import MAX_UNKNOWN_IDS, ScenarioAccumulator

    # each id named by 3 traces, at lines 3n+1, 3n+2, 3n+3 of file f.jsonl
    ids = [f"S-{n:03d}" for n in range(3 * MAX_UNKNOWN_IDS)]
    named = [(sid, (f"f{k % 2}.jsonl", 10 * k + n, f"t{k}")) for n, sid in enumerate(ids)
             for k in range(3)]
    kept = []
    for seed in range(3):
        random.Random(seed).shuffle(named)
        one, two = ScenarioAccumulator([]), ScenarioAccumulator([])
        for n, (sid, where) in enumerate(named):
            (one if n % 2 else two).unknown(sid, 1, where)
        one.merge(two)
        kept.append(sorted((sid, x.traces, x.first) for sid, x in one.unknown_ids.items()))
        assert one.unknown_more
    # the smallest ids, each with its 3 traces, the first in f0.jsonl (k = 0, then 2)
    want = [(sid, 3, ("f0.jsonl", n, "t0")) for n, sid in enumerate(ids[:MAX_UNKNOWN_IDS])]
    assert kept[0] == kept[1] == kept[2] == want


def test_a_trace_id_differing_only_in_case_belongs_to_the_scenario(ws: Workspace) -> None:
    """c7: 'refund-001' called a forbidden tool, but only REFUND-001 was in the suite and
    another trace of it passed: exit 0, nothing said. Now it is a trace of REFUND-001."""
    suite = HEAD + """scenarios:
  - id: REFUND-001
    expect:
      forbidden_tools: [delete_*]
"""
    ws.write(suite, {"a.jsonl": trace("a", "REFUND-001", ["lookup"]),
                     "b.jsonl": trace("b", "refund-001", ["delete_all"])})
    code, data = cli(ws)
    s = scenario(Results.from_dict(data), "REFUND-001")
    assert (s["status"], s["traces_total"], s["traces_passed"]) == ("fail", 2, 1)
    assert [(r["trace_id"], r["status"]) for r in s["traces_not_passed"]] == [("b", "fail")]
    assert rules_of(s) == ["scenario/forbidden_tools"]
    assert data["unexercised"] == []  # not an unknown id
    assert (code, data["verdict"]) == (1, "fail")


def test_an_exact_id_wins_over_one_differing_in_case(ws: Workspace) -> None:
    suite = HEAD + "scenarios:\n  - id: Refund\n  - id: REFUND\n"
    res = ws.run(suite, {"a.jsonl": trace("a", "REFUND", []),
                         "b.jsonl": trace("b", "Refund", []),
                         "c.jsonl": trace("c", "refund", [])})  # neither exactly: both
    assert (scenario(res, "Refund")["traces_total"],
            scenario(res, "REFUND")["traces_total"]) == (2, 2)
    assert res.unexercised == []


def test_an_unknown_scenario_id_is_a_warning_at_its_first_trace(ws: Workspace) -> None:
    """c7: 'REFUND-01' is no scenario: one warning for the id, at the first trace naming it
    (smallest file, then line), however the traces were read."""
    suite = HEAD + """scenarios:
  - id: REFUND-001
    expect:
      forbidden_tools: [delete_*]
"""
    traces = {"a.jsonl": trace("a", "REFUND-001", ["lookup"]),
              # b.jsonl: lines 1-4 are trace b1 (start, llm_call, output, end), b2 from 5
              "b.jsonl": trace("b1", "OTHER", []) + trace("b2", "REFUND-01", ["delete_all"]),
              "c.jsonl": trace("c", "REFUND-01", ["delete_all"])}
    one = ws.run(suite, traces)
    assert ws.run(suite, traces, jobs=2).to_dict() == one.to_dict()
    found = [(f["rule"], f["severity"], f["value"], f["trace"], f["config"], f["test"],
              f["scenario"], f["message"]) for f in one.to_dict()["unexercised"]]
    where = {"file": "agent-eval.yaml", "line": ws.line("scenarios:")[0], "column": 1,
             "key_path": "scenarios"}
    assert found == [
        ("scenario/unknown_id", "warning", "OTHER",
         {"file": "traces/b.jsonl", "line": 1, "trace_id": "b1"}, where, "scenarios", None,
         "1 trace names scenario 'OTHER', which this suite does not have; no scenario "
         "takes it by that id"),
        ("scenario/unknown_id", "warning", "REFUND-01",
         {"file": "traces/b.jsonl", "line": 5, "trace_id": "b2"}, where, "scenarios", None,
         "2 traces name scenario 'REFUND-01', which this suite does not have (did you "
         "mean 'REFUND-001'?); no scenario takes them by that id"),
    ]
    assert one.counts["unexercised"] == 2
    from agent_eval.renderers.console import quiet_line

    # counted with the scenario findings (none here), not as a kind of their own
    assert quiet_line(one) == ("warn: 0 rule violations, 2 scenario findings (2 warning) · "
                               "0 input errors in 4 traces")
    # REFUND-001's own trace passed: the warning makes the verdict warn (exit 0)
    assert scenario(one, "REFUND-001")["status"] == "pass"
    code, data = cli(ws)
    assert (code, data["verdict"]) == (0, "warn")
    assert cli(ws, "--fail-on", "warn")[0] == 1
    # the fingerprint is the id's: a trace naming it earlier moves it to that trace only
    fp = one.unexercised[1].fingerprint
    traces["a0.jsonl"] = trace("a0", "REFUND-01", [])
    again = ws.run(suite, traces)
    assert [(f.value, f.trace.file if f.trace else None, f.fingerprint)
            for f in again.unexercised] == [("REFUND-01", "traces/a0.jsonl", fp),
                                            ("OTHER", "traces/b.jsonl",
                                             one.unexercised[0].fingerprint)]


def test_a_trace_naming_a_scenario_whose_glob_misses_its_file_is_said(
        ws: Workspace) -> None:
    """A scenario with `traces:` takes the traces of the files its glob matches; a trace
    elsewhere naming it was checked by nothing, without a word (the id is the suite's, so
    no scenario/unknown_id either). It is now that warning, saying why."""
    suite = HEAD + """scenarios:
  - id: REFUND-001
    traces: traces/refund-*.jsonl
    expect:
      forbidden_tools: [delete_*]
"""
    traces = {"refund-1.jsonl": trace("a", "REFUND-001", ["lookup"]),
              "other.jsonl": trace("b", "refund-001", ["delete_all"])}
    res = ws.run(suite, traces)
    assert res.to_dict() == ws.run(suite, traces, jobs=2).to_dict()
    assert [(f.rule, f.value, f.trace.file if f.trace else None, f.message)
            for f in res.unexercised] == [
        ("scenario/unknown_id", "refund-001", "traces/other.jsonl",
         "1 trace names scenario 'refund-001', whose traces: glob does not match its "
         "file; no scenario takes it by that id")]
    assert scenario(res, "REFUND-001")["status"] == "pass"  # its own trace passed
    # the same trace naming no scenario is no warning (nor is one its glob takes)
    traces["other.jsonl"] = trace("b", None, ["delete_all"])
    assert ws.run(suite, traces).unexercised == []


def test_unknown_ids_beyond_the_bound_are_said_to_be_left_out(ws: Workspace) -> None:
    from agent_eval.scenarios.evaluate import MAX_UNKNOWN_IDS

    suite = HEAD + "scenarios:\n  - id: A\n"
    traces = {"a.jsonl": trace("a", "A", [])}
    traces.update({f"x{n:02d}.jsonl": trace(f"x{n}", f"X-{n:02d}", [])
                   for n in range(MAX_UNKNOWN_IDS + 1)})
    res = ws.run(suite, traces)
    assert res.to_dict() == ws.run(suite, traces, jobs=2).to_dict()
    got = [f for f in res.unexercised if f.rule == "scenario/unknown_id"]
    assert [f.value for f in got] == [f"X-{n:02d}" for n in range(MAX_UNKNOWN_IDS)]
    assert all(f.message.endswith(
        "; traces name more than 20 scenario ids this suite does not have: the other ids "
        "(after the first 20 in sorted order) are left out") for f in got)
    # exactly the bound: nothing left out, nothing said
    del traces[f"x{MAX_UNKNOWN_IDS:02d}.jsonl"]
    (ws.root / "traces" / f"x{MAX_UNKNOWN_IDS:02d}.jsonl").unlink()
    got = [f for f in ws.run(suite, traces).unexercised if f.rule == "scenario/unknown_id"]
    assert len(got) == MAX_UNKNOWN_IDS
    assert not any("left out" in f.message for f in got)


@pytest.mark.parametrize("pattern", [
    "traces/*.jsonl", "traces/**/*.jsonl", "traces/**", "**/*.jsonl", "traces/r?.jsonl",
    "traces/[ab]*.jsonl", "traces/[!a]*.jsonl", "./traces/sub/*.jsonl", "traces/sub/**/x.json",
    "traces/a[.jsonl",
])
def test_traces_globs_select_what_glob_selects(tmp_path: Path, pattern: str) -> None:
    import glob as globlib

    from agent_eval.scenarios.compile import glob_regex

    files = ["traces/a.jsonl", "traces/b1.jsonl", "traces/r1.jsonl", "traces/sub/c.jsonl",
             "traces/sub/deep/x.json", "traces/sub/x.json", "other/a.jsonl", "traces/a[.jsonl"]
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("")
    want = {Path(p).as_posix().removeprefix("./")
            for p in globlib.glob(pattern, root_dir=tmp_path, recursive=True)
            if (tmp_path / p).is_file()}
    rx = glob_regex(pattern)
    assert {f for f in files if rx.match(f)} == want


# ------------------------------------------------------------ issue 10 §1 verdicts
FAILING = HEAD + """scenarios:
  - id: READ-ONLY
    category: edge_case
    expect: {forbidden_tools: [edit_file]}
  - id: HEALTHY
    category: happy_path
    expect: {tool_health: true}
  - id: OK
    category: happy_path
    expect: {tools: [search]}
"""
FAILING_TRACES = {"r.jsonl": trace("r", "READ-ONLY", ["search", "edit_file"]),
                  "h.jsonl": trace("h", "HEALTHY", [("search", {}, "timeout")]),
                  "o.jsonl": trace("o", "OK", ["search"])}


def test_failed_scenarios_fail_the_run_by_default(ws: Workspace) -> None:
    """A forbidden tool and a failed health check, nothing else configured: was WARN /
    exit 0, is FAIL / exit 1 (a failed test fails the run in every scenario seed)."""
    ws.write(FAILING, FAILING_TRACES)
    code, data = cli(ws)
    assert (code, data["verdict"]) == (1, "fail")
    res = Results.from_dict(data)
    assert [s.status for s in res.scenarios] == ["fail", "fail", "pass"]
    assert [s.gate for s in res.scenarios] == ["fail", "fail", "fail"]


@pytest.mark.parametrize(("criteria", "code", "verdict"), [
    # a blocking min_pass_rate below 1.0 that is met tolerates the failures (warn) ...
    ("blocking: {min_pass_rate: 0.3}", 0, "warn"),
    ("blocking: {min_weighted_pass_rate: 0.3}", 0, "warn"),
    # ... one that is missed fails, and so does 1.0 (no failure allowed)
    ("blocking: {min_pass_rate: 0.5}", 1, "fail"),
    ("blocking: {min_pass_rate: 1.0}", 1, "fail"),
    # a warning criterion tolerates nothing
    ("warning: {min_pass_rate: 0.3}", 1, "fail"),
    # a category rate below 1.0 that is met tolerates that category's failures only
    # (happy_path's: 1 of 2 passed; READ-ONLY, an edge case, is not tolerated; a rate of 0,
    # which would tolerate every one, is a config error: test_config.py)
    ("by_category: {happy_path: 0.5}", 1, "fail"),
])
def test_failures_tolerated_only_explicitly(ws: Workspace, criteria: str, code: int,
                                            verdict: str) -> None:
    ws.write(FAILING + f"pass_criteria:\n  {criteria}\n", FAILING_TRACES)
    got, data = cli(ws)
    assert (got, data["verdict"]) == (code, verdict)


def test_criteria_compare_the_metrics_before_they_are_rounded(ws: Workspace) -> None:
    """2 of 3 scenarios pass: pass_rate 2/3 = 0.666666…, below min_pass_rate 0.6666667. It
    was compared as results.json shows it, rounded to 0.666667 (above), so the missed
    criterion passed and then tolerated the failed scenario: WARN, exit 0."""
    suite = HEAD + """scenarios:
  - id: A
    expect: {output: {contains: [ok]}}
  - id: B
    expect: {output: {contains: [ok]}}
  - id: C
    expect: {output: {contains: [ok]}}
pass_criteria:
  blocking: {min_pass_rate: 0.6666667}
"""
    ws.write(suite, {"a.jsonl": trace("a", "A", [], "ok"), "b.jsonl": trace("b", "B", [], "ok"),
                     "c.jsonl": trace("c", "C", [], "nope")})
    code, data = cli(ws)
    assert (code, data["verdict"]) == (1, "fail")
    res = Results.from_dict(data)
    c = criterion(res, "min_pass_rate")
    assert c["status"] == "fail" and c["value"] == 0.666667  # shown rounded, as metrics
    # equal to 4 decimals, so the message shows the numbers it compared
    assert c["message"] == ("pass_rate = 0.6666666666666666 < 0.6666667 (blocking criterion "
                            "min_pass_rate missed)")
    assert res.metrics["pass_rate"] == 0.666667
    # the same threshold written as 2/3 rounded down is met, and tolerates C as before
    ws.write(suite.replace("0.6666667", "0.6666666"), {})
    assert cli(ws)[1]["verdict"] == "warn"


def test_a_missed_threshold_never_reads_as_its_own_limit(ws: Workspace) -> None:
    """2 of 3 expected tools called: tool_recall 2/3 = 0.666666…, below min_tool_recall
    0.6667. The finding said "tool_recall = 0.6667 is below min_tool_recall: 0.6667" (both
    shown at 4 decimals), and a cost of 0.10002 "exceeds max_cost_usd: 0.1" as "0.1": the
    numbers compared are shown in full, as the criteria's are."""
    suite = HEAD + """scenarios:
  - id: A
    expect: {tools: [a, b, c]}
    thresholds: {min_tool_recall: 0.6667}
    warn_thresholds: {max_cost_usd: 0.1}
"""
    ws.write(suite, {"a.jsonl": trace("a", "A", ["a", "b"], cost=0.10002)})
    code, data = cli(ws)
    assert (code, data["verdict"]) == (1, "fail")
    messages = {f["rule"]: f["message"] for f in scenario(Results.from_dict(data), "A")[
        "findings"] if f["rule"] in ("scenario/threshold", "scenario/warn_threshold")}
    assert messages == {
        "scenario/threshold": "tool_recall = 0.6666666666666666 is below min_tool_recall: "
                              "0.6667",
        "scenario/warn_threshold": "cost_usd = 0.10002 exceeds max_cost_usd: 0.1 "
                                   "(warn_thresholds)"}


def test_an_advisory_scenario_only_warns(ws: Workspace) -> None:
    suite = FAILING.replace("  - id: HEALTHY\n", "  - id: HEALTHY\n    gate: warn\n").replace(
        "  - id: READ-ONLY\n", "  - id: READ-ONLY\n    gate: warn\n")
    ws.write(suite, FAILING_TRACES)
    code, data = cli(ws)
    assert (code, data["verdict"]) == (0, "warn")
    res = Results.from_dict(data)
    assert scenario(res, "READ-ONLY")["status"] == "fail"  # still reported as failed
    assert cli(ws, "--fail-on", "warn")[0] == 1


def test_advisory_and_required_contradict(ws: Workspace) -> None:
    suite = HEAD + "scenarios:\n  - id: A\n    required: true\n    gate: warn\n"
    ws.write(suite, {"a.jsonl": trace("a", "A", [])})
    from agent_eval.api import load_suite
    from agent_eval.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        load_suite(ws.root / "agent-eval.yaml")
    (problem,) = err.value.problems
    line, col = ws.line("gate: warn")
    assert problem.startswith(f"agent-eval.yaml:{line}:{col}: 'gate: warn' makes")


def test_a_scenario_meeting_min_pass_ratio_passes_with_its_failures_listed(
        ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: FLAKY
    min_pass_ratio: 0.5
    expect: {output: {contains: [refund]}}
"""
    ws.write(suite, {"1.jsonl": trace("run-1", "FLAKY", [], "Your refund is on its way."),
                     "2.jsonl": trace("run-2", "FLAKY", [], "Please call us.")})
    code, data = cli(ws)
    res = Results.from_dict(data)
    s = scenario(res, "FLAKY")
    assert (code, res.verdict, s["status"]) == (0, "pass", "pass")
    assert s["trace_pass_rate"] == 0.5
    assert [(r["trace_id"], r["status"]) for r in s["traces_not_passed"]] == [
        ("run-2", "fail")]
    (f,) = s["findings"]
    assert (f["rule"], f["trace"]["trace_id"]) == ("scenario/output", "run-2")


@pytest.mark.parametrize(("limit", "status"), [(10000, "pass"), (9999, "fail")])
def test_max_latency_p95_ms_is_inclusive(ws: Workspace, limit: int, status: str) -> None:
    """The metrics guide writes `latency_p95 < 10000ms`; max_* keys are "at most"
    (docs/scenarios.md): p95 = 10000 meets 10000 and misses 9999."""
    suite = HEAD + f"""scenarios:
  - id: L
    expect: {{tools: [a]}}
pass_criteria:
  blocking: {{max_latency_p95_ms: {limit}}}
"""
    res = ws.run(suite, {"t.jsonl": trace("t", "L", ["a"], duration=10000)})
    assert res.metrics["latency_p95_ms"] == 10000
    assert criterion(res, "max_latency_p95_ms")["status"] == status
    assert res.verdict == status


def test_nothing_blocking_is_said(ws: Workspace) -> None:
    from agent_eval.renderers import RENDERERS, RenderContext

    suite = HEAD + """tests:
  - id: style
    metric: tool_blocklist
    severity: warning
    blocklist: [shell]
scenarios:
  - id: A
    gate: warn
    expect: {tools: [a]}
"""
    ws.write(suite, {"a.jsonl": trace("a", "A", ["shell"])})
    code, data = cli(ws)
    res = Results.from_dict(data)
    assert (code, res.verdict) == (0, "warn")
    console = RENDERERS["console"].render(res, RenderContext())
    assert console.splitlines()[-1].startswith("note: nothing in this suite can fail the run")
    summary = RENDERERS["markdown"].render(res, RenderContext())
    assert "ℹ️ Nothing in this suite can fail the run: no test has severity error" in summary
    # one blocking thing is enough to drop the note
    ws.write(suite.replace("    gate: warn\n", ""), {})
    res = Results.from_dict(cli(ws)[1])
    assert "nothing in this suite" not in RENDERERS["console"].render(res, RenderContext())
    assert "Nothing in this suite" not in RENDERERS["markdown"].render(res, RenderContext())


def test_a_scenario_taking_any_share_of_failed_traces_is_not_blocking(ws: Workspace) -> None:
    """c10: min_pass_ratio: 0 passes a scenario whose every trace failed, yet the note
    that nothing can fail the run was not shown (the scenario was counted as blocking).
    It is not blocking, but a missing trace still fails it: the note says so."""
    from agent_eval.renderers import RENDERERS, RenderContext
    from agent_eval.results import blocking_checks

    suite = HEAD + """scenarios:
  - id: S1
    min_pass_ratio: 0
    expect:
      forbidden_tools: [delete_*]
  - id: ADVISORY
    gate: warn
"""
    ws.write(suite, {"a.jsonl": trace("a", "S1", ["delete_all"]),
                     "b.jsonl": trace("b", "ADVISORY", [])})
    code, data = cli(ws)
    res = Results.from_dict(data)
    assert (code, res.verdict) == (0, "pass")
    assert scenario(res, "S1")["status"] == "pass"  # 0 of 1 passed meets 0
    assert blocking_checks(res) == []
    from agent_eval.results import RATE_TOLERANCE
    from agent_eval.scenarios.metrics import EPSILON

    assert RATE_TOLERANCE == EPSILON  # "0 of n passed meets it", as the status is decided
    console = RENDERERS["console"].render(res, RenderContext()).splitlines()[-1]
    assert console == (
        "note: nothing in this suite can fail the run but a missing trace: no test has "
        "severity error, every scenario is advisory (gate: warn) or accepts any share of "
        "failed traces (min_pass_ratio: 0) and no blocking criterion is set; a scenario with "
        "min_pass_ratio: 0 still fails the run when no trace of it is found (or a judge "
        "check of its traces could not be made)")
    said = ("Nothing in this suite can fail the run but a missing trace: no test has "
            "severity error, every scenario is advisory (gate: warn) or accepts any share of "
            "failed traces (min_pass_ratio: 0), and no blocking criterion is set; a scenario "
            "with min_pass_ratio: 0 still fails the run when no trace of it is found (or a "
            "judge check of its traces could not be made).")
    assert f"ℹ️ {said}" in RENDERERS["markdown"].render(res, RenderContext())
    assert said in RENDERERS["html"].render(res, RenderContext())
    # what the note says: with no trace of S1, the run fails (S1 is error, not tolerated)
    (ws.root / "traces" / "a.jsonl").unlink()
    code, data = cli(ws)
    res = Results.from_dict(data)
    assert (code, res.verdict, scenario(res, "S1")["status"]) == (1, "fail", "error")
    # any ratio above 0 can be missed by failed traces: blocking, and no note
    ws.write(suite.replace("min_pass_ratio: 0", "min_pass_ratio: 0.5"),
             {"a.jsonl": trace("a", "S1", ["delete_all"])})
    code, data = cli(ws)
    res = Results.from_dict(data)
    assert (code, res.verdict) == (1, "fail")
    assert blocking_checks(res) == ["scenario S1"]
    assert "nothing in this suite" not in RENDERERS["console"].render(res, RenderContext())
    # advisory alone: the plain note, which does not mention a missing trace
    ws.write(suite.replace("min_pass_ratio: 0", "gate: warn"), {})
    res = Results.from_dict(cli(ws)[1])
    assert RENDERERS["console"].render(res, RenderContext()).splitlines()[-1] == (
        "note: nothing in this suite can fail the run: no test has severity error, every "
        "scenario is advisory (gate: warn) and no blocking criterion is set; the verdict can "
        "only be pass, warn or error")


def test_a_scenario_without_trace_is_never_accurate(ws: Workspace) -> None:
    # docs/scenarios.md "Suite metrics": a scenario without traces counts as having its
    # output checks not passing. Under min_pass_ratio: 0 its share of passing traces was
    # taken as 0.0, which meets 0, so it counted as accurate.
    suite = HEAD + """scenarios:
  - id: A
    expect: {output: {contains: [refund]}}
  - id: B
    gate: warn
    min_pass_ratio: 0
    expect: {output: {contains: [refund]}}
pass_criteria:
  blocking: {min_accuracy: 0.6}
"""
    ws.write(suite, {"a.jsonl": trace("a", "A", [], "refund issued")})
    code, data = cli(ws)
    res = Results.from_dict(data)
    assert scenario(res, "B")["status"] == "error"
    # accuracy = 1 (A) / 2 (A and B have output checks) = 0.5, below 0.6
    assert res.metrics["accuracy"] == 0.5
    assert criterion(res, "min_accuracy")["status"] == "fail"
    assert (code, res.verdict) == (1, "fail")


def test_tiny_weights_weigh_as_their_ratios(ws: Workspace) -> None:
    # only the ratios of weights count (docs/scenarios.md "Score and status of a trace").
    # With 5e-324 (the smallest float), each wᵢ·sᵢ rounded to a whole multiple of it: a
    # recall of 0.6 scored 100, a pass rate of 0.6 made a composite of 1.0.
    suite = HEAD + """scenarios:
  - id: A
    weights: {tool_accuracy: 5e-324}
    expect: {tools: [a, b, c, d, e]}
    thresholds: {min_score: 90}
""" + "".join(f"  - {{id: P{i}, gate: warn, expect: {{tools: [a]}}, "
              "thresholds: {min_tool_recall: 1}}\n" for i in range(4)) + """\
pass_criteria:
  composite: {weights: {pass_rate: 5e-324}, min: 0.9}
"""
    traces = {"a.jsonl": trace("a", "A", ["a", "b", "c"])}
    for i in range(4):  # P0, P1, P2 call a and pass; P3 does not
        traces[f"p{i}.jsonl"] = trace(f"p{i}", f"P{i}", ["a"] if i < 3 else ["z"])
    ws.write(suite, traces)
    code, data = cli(ws)
    res = Results.from_dict(data)
    # A: recall 3/5 = 0.6, the only component: score 100 · 0.6 = 60 < 90
    assert scenario(res, "A")["score"] == 60.0
    assert scenario(res, "A")["status"] == "fail"
    # pass rate: P0, P1 and P2 of 5 scenarios = 0.6; composite = 0.6 < 0.9
    assert res.metrics["pass_rate"] == 0.6
    assert res.metrics["composite"] == 0.6
    assert criterion(res, "composite")["status"] == "fail"
    assert (code, res.verdict) == (1, "fail")


@pytest.mark.parametrize(("composite_min", "efficiency_min", "status"),
                         [(0.95, 5000, "fail"), (0.5, 100, "warn")])
def test_a_min_criterion_missed_whatever_the_unrecorded_figures_fails(
        ws: Workspace, composite_min: float, efficiency_min: float, status: str) -> None:
    """A composite weighing latency and min_token_efficiency are computed over the traces
    that recorded latency or tokens, and only warned when some did not, even when no
    value of the others could meet them: the run passed (exit 0) a gate it missed for
    sure. Those taken as 0 (the best case), they fail as max_latency_p95_ms does."""
    suite = HEAD + f"""scenarios:
  - {{id: A, gate: warn, expect: {{tools: [a]}}, thresholds: {{min_tool_recall: 1}}}}
  - {{id: B, gate: warn, expect: {{tools: [a]}}, thresholds: {{min_tool_recall: 1}}}}
pass_criteria:
  composite: {{weights: {{pass_rate: 9, latency: 1}}, max_latency_p95_ms: 1000, \
min: {composite_min}}}
  blocking: {{min_token_efficiency: {efficiency_min}}}
"""
    # A: calls z (recall 0, score 0, FAIL), 5 ms, 1000 tokens; B: calls a (score 100,
    # PASS), no latency, no tokens recorded
    ws.write(suite, {"a.jsonl": trace("a", "A", ["z"], duration=5, tokens=1000, cost=None),
                     "b.jsonl": trace("b", "B", ["a"], duration=None, tokens=None,
                                      cost=None)})
    code, data = cli(ws)
    res = Results.from_dict(data)
    assert res.metrics["pass_rate"] == 0.5
    crit = {c.name: (c.status, c.message) for c in res.criteria}
    # best composite: B's latency taken as 0, p95 of [0, 5] (rank ⌈0.95·2⌉ = 2) = 5:
    # (9·0.5 + 1·(1 − 5/1000)) / 10 = 0.5495
    # best token_efficiency: mean score (0 + 100) / 2 = 50, mean tokens at least
    # (1000 + 0) / 2 = 500: 50 / 500 · 1000 = 100
    assert crit["composite"][0] == status
    assert crit["min_token_efficiency"][0] == ("fail" if status == "fail" else "warn")
    if status == "fail":
        assert crit["composite"][1] == (
            "composite = at most 0.5495 < 0.95 (latency not recorded by 1 of 2 scenario "
            "trace(s), taken as 0) (composite criterion composite missed)")
        assert crit["min_token_efficiency"][1] == (
            "token_efficiency = at most 100 < 5000 (tokens not recorded by 1 of 2 scenario "
            "trace(s), taken as 0) (blocking criterion min_token_efficiency missed)")
        assert (code, res.verdict) == (1, "fail")
    else:  # met in the best case, missed in others: cannot be told
        assert "cannot be checked" in crit["composite"][1]
        assert "cannot be checked" in crit["min_token_efficiency"][1]
        assert (code, res.verdict) == (0, "warn")


def test_a_composite_missed_with_no_latency_recorded_at_all_fails(ws: Workspace) -> None:
    # no trace recorded latency: the composite weighing it was "unknown" and only warned,
    # though with every latency 0 (latency component 1) it is at most
    # (9·0.5 + 1·1) / 10 = 0.55 < 0.95
    suite = HEAD + """scenarios:
  - {id: A, gate: warn, expect: {tools: [a]}, thresholds: {min_tool_recall: 1}}
  - {id: B, gate: warn, expect: {tools: [a]}, thresholds: {min_tool_recall: 1}}
pass_criteria:
  composite: {weights: {pass_rate: 9, latency: 1}, max_latency_p95_ms: 1000, min: 0.95}
"""
    ws.write(suite, {"a.jsonl": trace("a", "A", ["z"], duration=None),
                     "b.jsonl": trace("b", "B", ["a"], duration=None)})
    code, data = cli(ws)
    res = Results.from_dict(data)
    assert res.metrics["composite"] is None
    c = criterion(res, "composite")
    assert (c["status"], c["message"]) == (
        "fail", "composite = at most 0.55 < 0.95 (latency not recorded by any of 2 scenario "
        "trace(s), taken as 0) (composite criterion composite missed)")
    assert (code, res.verdict) == (1, "fail")
    # met in the best case (0.55 >= 0.5), but not if latencies were long: cannot be told
    ws.write(suite.replace("min: 0.95", "min: 0.5"), {})
    code, data = cli(ws)
    assert criterion(Results.from_dict(data), "composite")["status"] == "warn"
