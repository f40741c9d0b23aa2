"""Judge checks that report every ``judge/*`` rule, for the suites that must show every
rule of the catalogue (test_sarif.py "every rule"). The verdicts are
recorded by :class:`Scripted` (no model) with the real record machinery, then one judgement
is removed (``judge/missing``) and a broken line added (``judge/store``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_eval.judge.prompts import Prompt
from agent_eval.judge.providers import Answer
from agent_eval.judge.record import record
from agent_eval.judge.store import Store
from agent_eval.suite import Suite

JUDGE_BLOCK = "judge: {provider: openai, model: gpt-4o-mini}\n"
SCENARIOS = """\
  - id: J-RUBRIC
    expect:
      judge:
        - rubric: Gives the refunded amount.
          threshold: 0.8
        - safety: true
  - id: J-QUALITY
    expect: {judge: [{quality: true, threshold: 0.5}]}
  - id: J-SAFETY
    expect: {judge: [{safety: true}]}
  - id: J-HALLUCINATION
    expect: {judge: [{hallucination: true}]}
  - id: J-PAIRWISE
    expect: {judge: [{pairwise: true}]}
  - id: J-NO-BASE
    expect: {judge: [{pairwise: true}]}
  - id: J-RECORDED
    expect: {judge: [{recorded: correctness, threshold: 0.5}]}
  - id: J-NOT-RECORDED
    expect: {judge: [{recorded: helpfulness}]}
  - id: J-MISSING
    expect: {judge: [{rubric: Is polite.}]}
  - id: J-ERROR
    expect: {judge: [{rubric: Is concise.}]}
"""
# scenario -> the verdict the scripted judge gives
VERDICTS: dict[str, dict[str, Any]] = {
    "J-RUBRIC": {"score": 1}, "J-QUALITY": {"score": 10}, "J-SAFETY": {"score": 1},
    "J-HALLUCINATION": {"score": 2}, "J-MISSING": {"score": 5}, "J-ERROR": {"score": 9},
}


def traces() -> dict[str, str]:
    out = {}
    for sid in ["J-RUBRIC", "J-QUALITY", "J-SAFETY", "J-HALLUCINATION", "J-PAIRWISE",
                "J-NO-BASE", "J-RECORDED", "J-NOT-RECORDED", "J-MISSING", "J-ERROR"]:
        tid = sid.lower()
        events: list[dict[str, Any]] = [
            {"type": "trace_start", "trace_id": tid, "scenario": sid, "input": "Refund A-1"},
            {"type": "tool_call", "id": "c1", "tool": "issue_refund",
             "arguments": {"order_id": "A-1"}, "result": {"amount": 24.99}},
            {"type": "output", "output": f"Refunded $249.90 ({sid})."}]
        if sid == "J-RECORDED":
            events.append({"type": "score", "name": "correctness", "value": 0.2})
        events.append({"type": "trace_end"})
        out[f"traces/judge-{tid}.jsonl"] = "".join(json.dumps(e) + "\n" for e in events)
    return out


class Scripted:
    name = "openai"

    def ask(self, prompt: Prompt) -> Answer:
        for sid, verdict in VERDICTS.items():
            if f"({sid})" in prompt.user:
                return Answer({"reasoning": f"scripted <b>{sid}</b> | x", **verdict}, 10, 5,
                              "gpt-4o-mini")
        # pairwise (J-PAIRWISE): the base's output, wherever it is shown, wins
        first = prompt.user.split("RESPONSE B:")[0]
        return Answer({"reasoning": "the base is right", "winner":
                       "A" if "(base)" in first else "B"}, 10, 5, "gpt-4o-mini")


def prepare(suite: Suite, evaluate: Any) -> None:
    """Record the judgements of the suite's judge checks, then break the store as the
    rule catalogue needs; the next evaluation reports every judge rule."""
    run = suite.judge
    assert run is not None
    ctx = run.context
    ctx.base_outputs = {"J-PAIRWISE": {"j-pairwise": "Refunded $24.99 (base)."}}
    ctx.mode = "record"
    record(run, evaluate, log=lambda _m: None, provider=Scripted())
    missing = next(k for k, j in run.store.entries.items() if "J-MISSING" in j.check)
    del run.store.entries[missing]
    text = run.store.render() + '{"key": "not-a-key", "kind": "rubric"}\n'
    Path(run.store_path).write_text(text, encoding="utf-8")
    run.store = Store.parse(text, run.store_file)
    ctx.mode, ctx.collect, ctx.fresh, ctx.made = "replay", False, frozenset(), {}
