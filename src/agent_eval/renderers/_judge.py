"""What every report shows of the judge (docs/judge.md "In the results and the
reports"): how the run judged and what judging cost, and the judge checks that failed with
the judge's reasoning. The reasoning is model output: the renderers escape it like trace
text."""

from __future__ import annotations

from dataclasses import dataclass

from agent_eval.results import Results
from agent_eval.rule_ids import (
    JUDGE_ERROR,
    JUDGE_HALLUCINATION,
    JUDGE_MISSING,
    JUDGE_PAIRWISE,
    JUDGE_QUALITY,
    JUDGE_RECORDED,
    JUDGE_RUBRIC,
    JUDGE_SAFETY,
)

MAX_VERDICTS = 20  # failed judge checks listed in a report (all are in results.json)
MAX_REASONING = 600  # characters of a reasoning shown
VERDICT_RULES = tuple(r.id for r in (
    JUDGE_RUBRIC, JUDGE_QUALITY, JUDGE_SAFETY, JUDGE_HALLUCINATION, JUDGE_PAIRWISE,
    JUDGE_RECORDED, JUDGE_ERROR, JUDGE_MISSING))


@dataclass(frozen=True)
class Verdict:
    rule: str
    scenario: str
    trace: str
    where: str  # the check's file:line
    message: str
    reasoning: str


def summary_line(results: Results) -> str | None:
    """``judge: replay · 4 judgement(s) from .agent-eval/judgements.jsonl · …``."""
    j = results.judge
    if j is None:
        return None
    parts = [f"judge: {j.mode}"]
    if j.model:
        parts.append(f"{j.provider} {j.model}")
    parts.append(f"{j.judgements_used} judgement(s) from {j.store}")
    if j.judgements_missing:
        parts.append(f"{j.judgements_missing} missing")
    if j.checks.get("skip"):
        parts.append(f"{j.checks['skip']} check(s) skipped")
    cost = j.cost_usd
    parts.append("recorded cost unknown (no judge.price)" if cost is None and
                 j.judgements_used else f"recorded cost ${cost or 0:.4f}")
    if j.calls:
        parts.append(f"this run: {j.calls} call(s), ${j.cost_usd_this_run:.4f}")
    return " · ".join(parts)


def store_warning(results: Results) -> str | None:
    """That the pull request changed the judgement store the run replayed verdicts from
    (the action: baseline/__init__.py ``judge_store_for_action``), or None."""
    j = results.judge
    source = j.store_source if j is not None else None
    warning = source.get("warning") if isinstance(source, dict) else None
    return str(warning) if warning else None


def verdicts(results: Results) -> tuple[list[Verdict], int]:
    """The failed (or unmade) judge checks, at most :data:`MAX_VERDICTS`, and how many
    there are."""
    out: list[Verdict] = []
    total = 0
    for s in results.scenarios:
        for f in s.findings:
            if f.rule not in VERDICT_RULES:
                continue
            total += 1
            if len(out) >= MAX_VERDICTS:
                continue
            reasoning = str(f.details.get("reasoning") or "")
            if len(reasoning) > MAX_REASONING:
                reasoning = reasoning[:MAX_REASONING - 3] + "..."
            out.append(Verdict(f.rule, s.id, "" if f.trace is None else f.trace.trace_id,
                               f"{f.config.file}:{f.config.line}",
                               f.message.split("; reasoning:")[0], reasoning))
    return out, total
