"""LiveOutcome.apply: the probes' entries added to a run's results, and the verdict."""

from __future__ import annotations

from tests.conftest import example_results

from agent_eval.errors import InputError
from agent_eval.findings import ConfigRef, Finding
from agent_eval.live.outcome import LiveOutcome
from agent_eval.rule_ids import INPUT_NO_TRACES


def test_a_live_only_run_keeps_the_coverage_findings_its_suite_made_count() -> None:
    """A suite whose only traces are its live sessions: the "no traces" error of the
    trace globs is dropped, and the verdict was then worked out again by hand from the
    tests, scenarios and criteria only, so a `coverage/unexercised` error (`unexercised:
    error`) left it "pass". By hand: nothing else is in the results, so the verdict is
    that finding's, "fail"."""
    results = example_results()
    results.tests, results.scenarios, results.criteria = [], [], []
    results.unexercised = [Finding(
        "coverage/unexercised", "error", "refund: no trace calls it", "coverage",
        ConfigRef("agent-eval.yaml", 7, 5, "tests[0].blocklist[0]"), None, tool="refund")]
    results.input_errors = [InputError(INPUT_NO_TRACES.id, "agent-eval.yaml", 3,
                                       "no trace files matched")]
    results.verdict = "error"
    LiveOutcome().apply(results, has_trace_globs=False)
    assert results.input_errors == []
    verdict: str = results.verdict  # (set by apply)
    assert verdict == "fail"
