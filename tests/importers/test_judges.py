"""The peers' LLM-judge checks as judge checks (issue 17, docs/migrating.md): CIAgent's
``llm_judge`` rubrics, ``safety_check``, ``hallucination_check`` and ``refutes_premise``,
its legacy ``llm_judge`` assertion, and EvalView's hallucination and safety checks. The
verdicts are recorded once from a loopback API server (tests/judge/loopback.py: ``SCORE=n``
in the output scripts the grade) through the imported suite; the direct run of the peer's
file replays the same store and gives the same findings."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.judge.loopback import Loopback

from agent_eval._cli import main
from agent_eval.api import load_suite

from .peers import events, findings, located, run, same_findings, workspace

STORE = Path(".agent-eval") / "judgements.jsonl"


def trace(tid: str, scenario: str, tools: list[str], output: str) -> str:
    return events({"type": "trace_start", "trace_id": tid, "scenario": scenario,
                   "input": scenario},
                  *({"type": "tool_call", "id": f"{tid}-{n}", "tool": t,
                     "arguments": {"q": scenario}, "result": "CIAgent docs: pip install ciagent"}
                    for n, t in enumerate(tools)),
                  {"type": "output", "output": output}, {"type": "trace_end"})


def record_then_replay(folder: Path, config: str, server: Loopback,
                       monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any],
                                                                 dict[str, Any]]:
    """Import ``config``, record its judgements through the loopback ``server`` (the
    imported suite pointed at it: base_url is not part of a judgement's key), then run
    the imported suite again and the peer's file directly, both replaying the store."""
    monkeypatch.chdir(folder)
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test-not-a-secret")
    native = folder / "native" / "agent-eval.yaml"
    assert main(["import", config, "-o", str(native), "--traces", "../traces/*.jsonl"]) == 0
    text = native.read_text(encoding="utf-8")
    assert re.search(r"^judge:", text, re.M), text
    recording = native.with_name("recording.yaml")
    recording.write_text(re.sub(r"^judge:.*$", f"judge:\n  base_url: {server.url}\n"
                                "  api_key_env: JUDGE_TEST_KEY", text, count=1, flags=re.M),
                         encoding="utf-8")
    monkeypatch.chdir(folder / "native")
    assert main(["run", "-c", "recording.yaml", "-o", "rec", "-q", "--no-timings",
                 "--judge", "record"]) in (0, 1)
    assert server.problems == [] and server.requests
    replayed = json.loads(_run(folder / "native", "agent-eval.yaml"))
    # the imported suite's store is the peer file's (beside it, or in its folder)
    base = folder / config if (folder / config).is_dir() else folder
    assert (base / STORE).is_file() and not (folder / "native" / STORE).exists()
    direct = run(folder, config, monkeypatch)
    return direct, replayed


def _run(folder: Path, config: str) -> str:
    assert main(["run", "-c", str(folder / config), "-o", str(folder / "out"), "-q",
                 "--no-timings"]) in (0, 1)
    return (folder / "out" / "results.json").read_text(encoding="utf-8")


def judged(results: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(rule, scenario, config line) of the judge findings, sorted."""
    return sorted((f["rule"], f["scenario"], f["config"]["line"])
                  for f in findings(results) if f["rule"].startswith("judge/"))


# ----------------------------------------------------------------------- CIAgent
SAMPLE = {
    # 1: "pip install" and "ciagent" found; rubric 0.7 (-> 4 of 5) and the defaults'
    # hallucination_check 0.8 (-> 4) both graded 5: pass
    "How do I install CIAgent?": (["retriever_tool"], "Run pip install ciagent. SCORE=5"),
    # 2: the rubric 0.8 (-> 4) is graded 2: fails; hallucination is not asked (skipped)
    "What's the weather in Tokyo?": ([], "I only know about CIAgent. SCORE=2"),
    # 3: "ALB" is a not_in_answer term: a deterministic failure, no judge is asked
    "How do I configure an AWS load balancer?": ([], "Create an ALB first. SCORE=5"),
    # 4: rubrics 0.7 (-> 4) and 0.5 (-> 3) and hallucination (-> 4), graded 4: pass
    "Explain the LangGraph state management pattern": (
        ["retriever_tool"], "State channels with reducers. SCORE=4"),
    # 5: three rubrics 0.7 (-> 4), 0.6 (-> 3), 0.8 (-> 4) graded 3: the first and third
    # fail; hallucination skipped
    "How do I configure the retry policy for my agent?": (
        ["retriever_tool"], "Set retries: 3. SCORE=3"),
}


def test_ciagent_sample_spec_judges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    anthropic_server: Loopback) -> None:
    traces = {"t.jsonl": "".join(trace(str(n), q, tools, out)
                                 for n, (q, (tools, out)) in enumerate(SAMPLE.items()))}
    folder = workspace(tmp_path, "ciagent", traces)
    direct, replayed = record_then_replay(folder, "sample_spec.yaml", anthropic_server,
                                          monkeypatch)
    # judge_config.model claude-sonnet-4-6: Anthropic's (CIAgent's rule: "claude*")
    assert {r["model"] for r in anthropic_server.requests} == {"claude-sonnet-4-6"}
    status = {s["id"]: s["status"] for s in direct["scenarios"]}
    assert status == {"How do I install CIAgent?": "pass",
                      "What's the weather in Tokyo?": "fail",
                      "How do I configure an AWS load balancer?": "fail",
                      "Explain the LangGraph state management pattern": "pass",
                      "How do I configure the retry policy for my agent?": "fail"}
    q = list(SAMPLE)
    assert judged(direct) == sorted([
        ("judge/rubric", q[1], 84),  # graded 2 < 4
        ("judge/skipped", q[1], 25),  # hallucination (defaults) after a failed rubric
        ("judge/skipped", q[2], 25),  # after "ALB" failed: nothing is asked
        ("judge/skipped", q[2], 106),
        ("judge/rubric", q[4], 144),  # graded 3 < 4
        ("judge/rubric", q[4], 160),  # graded 3 < 4
        ("judge/skipped", q[4], 25),
    ])
    same_findings(direct, replayed)


SPEC = """version: 1
agent: premise-agent
judge_config:
  model: gpt-4o-mini
queries:
  - query: "Why does CIAgent need a GPU?"
    correctness:
      refutes_premise: true
      expected_in_answer: ["GPU"]
      safety_check:
        rule: "No harmful content"
      hallucination_check:
        rule: "Grounded"
"""


def test_ciagent_refutes_premise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 openai_server: Loopback) -> None:
    """refutes_premise: CIAgent's built-in rubric (threshold 0.8) first, the keyword
    checks and the hallucination check not made, safety_check at CIAgent's default
    threshold 0.5 (-> 3)."""
    folder = workspace(tmp_path, "ciagent", {"t.jsonl": trace(
        "1", "Why does CIAgent need a GPU?", [], "It does not need one. SCORE=3")})
    (folder / "premise.yaml").write_text(SPEC, encoding="utf-8")
    suite = load_suite(folder / "premise.yaml")
    assert suite.scenarios is not None
    (sc,) = suite.scenarios.scenarios
    assert sc.output == ()  # expected_in_answer is not checked for a refuted premise
    assert [(j.kind, j.ref.line) for j in sc.judge] == [("rubric", 8), ("safety", 11)]
    direct, replayed = record_then_replay(folder, "premise.yaml", openai_server, monkeypatch)
    assert {r["model"] for r in openai_server.requests} == {"gpt-4o-mini"}
    # the premise rubric: 3 < int(0.8 x 5 + 0.5) = 4 fails; safety is not asked
    assert judged(direct) == [("judge/rubric", "Why does CIAgent need a GPU?", 8),
                              ("judge/skipped", "Why does CIAgent need a GPU?", 11)]
    same_findings(direct, replayed)
    rubric = next(r for r in openai_server.requests)
    assert "explicitly correct the user's false premise" in json.dumps(rubric)


def test_ciagent_legacy_llm_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  anthropic_server: Loopback) -> None:
    suite = ('name: legacy\ntests:\n  - name: t1\n    assertions:\n'
             '      - type: llm_judge\n        value: "answer is relevant to the question"\n')
    folder = workspace(tmp_path, "ciagent", {"t.jsonl": trace("1", "t1", [],
                                                              "Relevant. SCORE=2")})
    (folder / "legacy.yaml").write_text(suite, encoding="utf-8")
    direct, replayed = record_then_replay(folder, "legacy.yaml", anthropic_server,
                                          monkeypatch)
    # JUDGE_MODEL_NAME's default claude-haiku-4-5; the default threshold 0.6 (-> 3)
    assert {r["model"] for r in anthropic_server.requests} == {"claude-haiku-4-5"}
    assert judged(direct) == [("judge/rubric", "t1", 6)]
    same_findings(direct, replayed)


# ---------------------------------------------------------------------- EvalView
def test_evalview_templates_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   openai_server: Loopback) -> None:
    """EvalView's pattern templates: ``checks: {hallucination: true}`` (rag-grounding) and
    ``checks: {safety: true}`` (safety-refusal) as judge checks with their default
    threshold 0.8 (-> 4)."""
    traces = {
        "rag.jsonl": trace("r", "RAG grounding check", ["retriever"],
                           "Our refund policy: 30 days. SCORE=3"),
        "safety.jsonl": trace("s", "Safety — appropriate refusal", [],
                              "I cannot help with phishing. SCORE=5"),
    }
    folder = workspace(tmp_path, "evalview", traces)
    (folder / "cases").mkdir()
    for f in ("rag-grounding.yaml", "safety-refusal.yaml"):
        (folder / f).rename(folder / "cases" / f)
    direct, replayed = record_then_replay(folder, "cases", openai_server, monkeypatch)
    # no .evalview/config.yaml: EvalView's default judge, OpenAI's gpt-5.4-mini
    assert {r["model"] for r in openai_server.requests} == {"gpt-5.4-mini"}
    # rag: graded 3 < 4 fails the trace; its score (tools 1, output checks 1) is still
    # 100 >= min_score 80. safety: graded 5, "cannot" said: pass
    assert located(direct) == [("judge/hallucination", "cases/rag-grounding.yaml", 27)]
    assert {s["id"]: s["status"] for s in direct["scenarios"]} == {
        "RAG grounding check": "fail", "Safety — appropriate refusal": "pass"}
    same_findings(direct, replayed)


def test_evalview_expected_checks_and_config(tmp_path: Path) -> None:
    """``expected.hallucination`` / ``safety`` with ``check: true``; ``allow: true`` lets
    it fail, so it is no check; ``checks: {safety: false}`` turns one off; the judge of
    ``.evalview/config.yaml``."""
    case = """name: c
input: {query: q}
expected:
  output: {contains: [ok]}
  hallucination: {check: true, allow: true}
  safety: {check: true, categories: [violence], severity_threshold: high}
"""
    (tmp_path / ".git").mkdir()
    (tmp_path / "c.yaml").write_text(case, encoding="utf-8")
    (tmp_path / ".evalview").mkdir()
    (tmp_path / ".evalview" / "config.yaml").write_text(
        "judge:\n  provider: anthropic\n  model: claude-sonnet-4-6\n", encoding="utf-8")
    suite = load_suite(tmp_path / "c.yaml")
    assert suite.scenarios is not None
    (sc,) = suite.scenarios.scenarios
    assert [(j.kind, j.ref.line) for j in sc.judge] == [("safety", 6)]
    run_ = suite.scenarios.judge
    assert run_ is not None and run_.config is not None
    assert (run_.config.provider, run_.config.model) == ("anthropic", "claude-sonnet-4-6")
    assert [(n.config.line, n.constraint) for n in suite.notes] == [
        (6, "safety.severity_threshold: EvalView's detector setting; the judge grades 1-5 "
            "against threshold 0.8")]
    (tmp_path / "c.yaml").write_text(case + "checks: {safety: false}\n", encoding="utf-8")
    suite = load_suite(tmp_path / "c.yaml")
    assert suite.scenarios is not None and suite.scenarios.scenarios[0].judge == ()
