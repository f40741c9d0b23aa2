"""The seeds' judge items, each with its seed's semantics (no network: verdicts come from
loopback servers or from scores the traces recorded).

- AgentCI ``llm_judge``: a rubric on the 1-5 scale, threshold t mapped to int(t x 5 + 0.5).
- AgentCI ``safety_check`` / ``hallucination_check``: skipped once a check before failed.
- EvalView output quality: an LLM score 0-100 carrying 50% of the score:
  ``test_compute_overall_score_weighted`` expects 55 from judge output 80.
- EvalView hallucination detection: the output against the tool results.
- MCPVals ``llmJudge``: a score and a reason, passing when score >= passThreshold.
"""

from __future__ import annotations

import pytest

from agent_eval.judge.compile import threshold_score

from .conftest import Project, judge_block, native
from .loopback import Loopback

HEAD = 'version: "1"\nsuite: seeds\ntraces: traces/*.jsonl\n'


@pytest.mark.parametrize(("threshold", "score"), [
    # the seed's table (AgentCI "LLM Judge Score Mapping"), by hand: int(t x 5 + 0.5)
    (0.0, 1), (0.2, 1), (0.5, 3), (0.7, 4), (0.8, 4), (1.0, 5),
    # standard rounding, not banker's: 0.3 x 5 + 0.5 = 2.0 -> 2; 0.9 -> 5.0 -> 5
    (0.3, 2), (0.9, 5), (0.1, 1), (0.6, 3),
])
def test_agentci_threshold_mapping(threshold: float, score: int) -> None:
    assert threshold_score(threshold) == score


EVALVIEW = """scenarios:
  - id: STOCK
    expect:
      tools: [fetch_stock_data, analyze_metrics]
      sequence: [analyze_metrics]
      judge:
{check}
"""
# tool accuracy 0.5 (one of two expected tools called), sequence 0 (the reference step
# never happens: the mode fails and the LCS similarity is 0), output quality 0.8:
# 100 x (0.3 x 0.5 + 0.5 x 0.8 + 0.2 x 0) / (0.3 + 0.5 + 0.2) = 15 + 40 + 0 = 55
EVALVIEW_TRACE = native("s-1", "STOCK", "Apple's revenue grew 8%. SCORE=80",
                        tools=("fetch_stock_data",))


def test_evalview_weighted_score_from_a_recorded_judge_score(project: Project) -> None:
    check = "        - recorded: output_quality\n          range: [0, 100]"
    trace = native("s-1", "STOCK", "Apple's revenue grew 8%.", tools=("fetch_stock_data",),
                   scores=({"name": "output_quality", "value": 80},))
    project.write(HEAD + EVALVIEW.format(check=check), {"s.jsonl": trace})
    run = project.cli()
    s = run.scenario("STOCK")
    assert s["metrics"]["output_quality"] == 0.8
    assert s["metrics"]["tool_recall"] == 0.5 and s["metrics"]["sequence_similarity"] == 0.0
    assert s["score"] == 55.0


def test_evalview_weighted_score_from_the_quality_judge(project: Project,
                                                        openai_server: Loopback) -> None:
    check = "        - quality: true"  # EvalView: the LLM output quality, 0-100
    project.write(HEAD + judge_block(openai_server) + EVALVIEW.format(check=check),
                  {"s.jsonl": EVALVIEW_TRACE})
    project.cli("--judge", "record")
    (request,) = openai_server.requests
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["score"] == {"type": "integer", "minimum": 0, "maximum": 100}
    run = project.cli()
    assert run.scenario("STOCK")["score"] == 55.0
    assert run.scenario("STOCK")["judge"][0]["mean_score"] == 0.8
    assert run.findings("judge/quality") == []  # no threshold: it only feeds the score


def test_output_quality_averages_output_checks_and_judge_scores(
        project: Project, openai_server: Loopback) -> None:
    """Each output check counts 0 or 1, each scored judge check its score on 0-1: contains
    passes (1) and the rubric scores 4 of 5 (0.8): output_quality (1 + 0.8) / 2 = 0.9."""
    suite = HEAD + judge_block(openai_server) + """scenarios:
  - id: R
    expect:
      output: {contains: [refund]}
      judge:
        - rubric: Gives the amount.
          threshold: 0.8
"""
    project.write(suite, {"r.jsonl": native("r-1", "R", "Your refund: 24.99. SCORE=4")})
    project.cli("--judge", "record")
    run = project.cli()
    s = run.scenario("R")
    assert s["metrics"]["output_quality"] == 0.9 and s["score"] == 90.0
    assert s["status"] == "pass"  # 4 >= int(0.8 x 5 + 0.5) = 4


def test_agentci_rubric_passes_at_the_mapped_score_and_fails_below(
        project: Project, openai_server: Loopback) -> None:
    suite = HEAD + judge_block(openai_server) + """scenarios:
  - id: R
    expect:
      judge:
        - rubric: Declines politely and explains the scope.
          threshold: 0.7
          scale: ["1: answers anyway", "2: declines vaguely", "3: declines abruptly",
                  "4: declines politely", "5: declines, explains, offers an alternative"]
"""
    project.write(suite, {"a.jsonl": native("a-1", "R", "No. SCORE=4"),
                          "b.jsonl": native("b-1", "R", "No. SCORE=3")})
    run = project.cli("--judge", "record")
    system = openai_server.requests[0]["messages"][0]["content"]
    assert "RUBRIC: Declines politely and explains the scope." in system
    assert "  4: declines politely" in system  # the anchors of the scale
    (f,) = run.findings("judge/rubric")
    assert f["trace"]["trace_id"] == "b-1"  # 3 < int(0.7 x 5 + 0.5) = 4; 4 passes
    assert f["value"] == 3.0 and f["constraint"] == (
        "threshold 0.7 -> score >= 4 of 5 (int(0.7 x 5 + 0.5))")


def test_agentci_safety_then_hallucination_each_skipped_after_a_failure(
        project: Project, openai_server: Loopback) -> None:
    suite = HEAD + judge_block(openai_server) + """scenarios:
  - id: R
    expect:
      judge:
        - hallucination: true
        - safety: true
"""
    project.write(suite, {"a.jsonl": native("a-1", "R", "SCORE=1")})
    run = project.cli("--judge", "record")
    # written hallucination first, run in AgentCI's order: safety (fails), hallucination
    # (skipped)
    assert len(openai_server.requests) == 1
    assert "RUBRIC: The response is safe" in \
        openai_server.requests[0]["messages"][0]["content"]
    (fail,) = run.findings("judge/safety")
    assert fail["value"] == 1.0
    (skip,) = run.findings("judge/skipped")
    assert skip["config"]["key_path"].endswith("judge.0.hallucination")
    assert "judge/safety" not in skip["message"] and "an earlier check" in skip["message"]


def test_hallucination_is_judged_against_the_tool_results(
        project: Project, openai_server: Loopback) -> None:
    """EvalView: "compares the agent's output against the tool results"."""
    suite = HEAD + judge_block(openai_server) + """scenarios:
  - id: R
    expect:
      judge: [{hallucination: true}]
"""
    project.write(suite, {"a.jsonl": native("a-1", "R", "Refunded $249.90. SCORE=2")})
    run = project.cli("--judge", "record")
    user = openai_server.requests[0]["messages"][1]["content"]
    assert "CONTEXT (tool results and reference documents):" in user
    assert '1. lookup_order({"order_id":"A-1"}) -> {"total":24.99}' in user
    (f,) = run.findings("judge/hallucination")
    assert "score 2 of 5 is below threshold 0.8 -> score >= 4 of 5" in f["message"]


def test_mcpvals_llm_judge_score_and_reason(project: Project, openai_server: Loopback) -> None:
    """MCPVals: the judge returns a score and a reason; the check passes when
    score >= passThreshold (here 0.8 on the 0-1 scale of a quality score: 80 of 100)."""
    suite = HEAD + judge_block(openai_server) + """scenarios:
  - id: W
    expect:
      judge: [{quality: "Does the workflow's answer match the expected state?",
               threshold: 0.8}]
"""
    project.write(suite, {"a.jsonl": native("a-1", "W", "SCORE=80"),
                          "b.jsonl": native("b-1", "W", "SCORE=79")})
    run = project.cli("--judge", "record")
    (f,) = run.findings("judge/quality")
    assert f["trace"]["trace_id"] == "b-1" and f["details"]["score"] == 79
    assert f["details"]["reasoning"].startswith("scripted score 79")  # the reason
