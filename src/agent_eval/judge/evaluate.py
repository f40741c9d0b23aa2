"""Judge checks of one trace (docs/judge.md): a pure function of the compiled checks, the
trace and the store. No model is called here: a judgement the store does not have is
reported as missing (an error, with the command that records it) and, when the run records
(``--judge record``), its request is handed back so that the command can ask the model and
evaluate again.

Order and skipping follow AgentCI: recorded scores (free) first, then the rubric and
quality checks, which are skipped when a deterministic check of the trace has failed; then
safety, hallucination and pairwise, each skipped once anything before it failed or could
not be judged. A skipped check is reported as skipped (a note), never as passed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agent_eval.judge import prompts
from agent_eval.judge.compile import GRADED, ORDER, CompiledJudge, JudgeRun
from agent_eval.judge.store import Judgement, judgement_key
from agent_eval.model import finite_mean
from agent_eval.rule_ids import (
    JUDGE_ERROR,
    JUDGE_MISSING,
    JUDGE_NO_BASELINE,
    JUDGE_NOT_RECORDED,
    JUDGE_PAIRWISE,
    JUDGE_RECORDED,
    JUDGE_SKIPPED,
    Rule,
    member,
)

if TYPE_CHECKING:
    from agent_eval.findings import Severity

PASS, WARN, FAIL, SKIP, ERROR = range(5)
STATUS = ("pass", "warn", "fail", "skip", "error")
EPSILON = 1e-9
SHOWN_REASONING = 300  # characters of the reasoning in a finding's message
# the rule a check of each kind reports when it fails (an undeclared one fails at import)
RULE_OF_KIND: dict[str, Rule] = {kind: member("judge", kind) for kind in ORDER}


@dataclass(frozen=True, slots=True)
class Request:
    """A judgement the store does not have, to be asked of the model."""

    key: str
    kind: str
    prompt: prompts.Prompt
    check: str  # the check's key path
    trace: str  # file#trace id (for the reviewer of the store)


@dataclass(slots=True)
class Judged:
    """The judge checks of one trace."""

    statuses: list[int]  # per check, as written in expect.judge
    scores: list[float]  # per check, on the 0-1 scale (NaN: none)
    quality: list[float] = field(default_factory=list)  # the in_score scores
    used: list[str] = field(default_factory=list)  # keys of stored judgements used
    missing: list[str] = field(default_factory=list)  # keys the store does not have
    requests: list[Request] = field(default_factory=list)
    errored: bool = False


class _EvalLike(Protocol):
    """What scenarios/evaluate.py's ``_Eval`` offers."""

    sc: Any
    trace: Any
    failed: bool
    warned: bool
    findings: list[Any]

    @property
    def text(self) -> str: ...

    def add(self, rule: Rule, severity: Severity, message: str, ref: Any, where: Any,
            **kw: Any) -> None: ...

    def at_end(self) -> Any: ...


def _cut(text: str, limit: int = SHOWN_REASONING) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.4g}"


def judge_trace(ev: _EvalLike, run: JudgeRun, forced_zero: bool = False) -> Judged:
    """Every judge check of ``ev.sc`` on ``ev.trace``: findings go to ``ev`` (and
    ``ev.failed`` / ``ev.warned`` are set as for any check); the statuses, scores, store
    keys and requests are returned. ``forced_zero``: a forbidden tool or a must_not hit
    set the trace's score to 0, so that even EvalView's output quality is not judged."""
    checks: tuple[CompiledJudge, ...] = ev.sc.judge
    n = len(checks)
    out = Judged([SKIP] * n, [math.nan] * n)
    deterministic_failed = ev.failed
    first_failure = next((f.rule for f in ev.findings if f.severity == "error"), None)
    blocked = False  # a judge check before could not be judged
    for check in sorted(checks, key=lambda c: (c.order, c.index)):
        i = check.index
        if check.kind == "recorded":
            status, score = _recorded(ev, check)
        elif _skipped(check.kind, deterministic_failed, forced_zero, ev.failed, blocked):
            why = ("the score is 0 (a forbidden tool or a must_not hit)"
                   if check.kind == "quality" else
                   f"{first_failure} already failed" if deterministic_failed and first_failure
                   else "an earlier check of the trace failed" if ev.failed
                   else "an earlier judge check could not be judged")
            ev.add(JUDGE_SKIPPED, "note",
                   f"Judge {check.label} skipped: {why}; not a pass", check.ref, ev.at_end(),
                   constraint=check.kind, details={"kind": check.kind, "reason": why})
            status, score = SKIP, math.nan
        elif check.kind == "pairwise":
            status, score = _pairwise(ev, check, run, out)
        else:
            status, score = _graded(ev, check, run, out)
        if status == ERROR:
            blocked = True
            out.errored = True
        out.statuses[i] = status
        out.scores[i] = score
        if check.in_score and not math.isnan(score):
            out.quality.append(score)
    return out


def _skipped(kind: str, deterministic_failed: bool, forced_zero: bool, failed: bool,
             blocked: bool) -> bool:
    """AgentCI: a rubric runs while the deterministic checks pass; safety, hallucination
    (and pairwise) only while nothing at all failed or went unjudged. EvalView judges the
    output quality of every trace that still has a score (a forbidden tool ends it)."""
    if kind == "quality":
        return forced_zero
    if kind == "rubric":
        return deterministic_failed
    return failed or blocked


# ------------------------------------------------------------------------ kinds
def _recorded(ev: _EvalLike, check: CompiledJudge) -> tuple[int, float]:
    found = [s for s in ev.trace.scores if s.name == check.rule]
    values = [s.value for s in found if s.value is not None]
    value = finite_mean(values)  # None: none, or one infinite (never an overflow)
    if value is None:
        why = ("not recorded in the trace" if not found else
               "recorded as a number that is not finite" if values else
               f"recorded without a numeric value (label {_cut(str(found[0].label), 40)!r})")
        ev.warned = True
        ev.add(JUDGE_NOT_RECORDED, "warning",
               f"Recorded score '{check.rule}' {why}: the check cannot be made", check.ref,
               ev.at_end(), constraint=f"recorded: {check.rule}",
               details={"kind": "recorded", "score": check.rule})
        return WARN, math.nan
    score = check.normalised(value)
    if check.pass_score is None or value >= check.pass_score - EPSILON:
        return PASS, score
    comments = [s.comment for s in found if s.comment]
    text = (f"Recorded score '{check.rule}' = {_num(value)} is below {check.describe_threshold()}"
            + (f" ({len(values)} values, mean)" if len(values) > 1 else ""))
    if comments:
        text += f"; evaluator's comment: {_cut(comments[0])}"
    _fail(ev, check, JUDGE_RECORDED, text, value,
          {"kind": "recorded", "score": check.rule, "value": value,
           "source": found[0].source, **({"reasoning": comments[0]} if comments else {})})
    return (WARN if check.severity == "warning" else FAIL), score


def _request_text(ev: _EvalLike, limit: int) -> str:
    return prompts.cut(prompts.as_text(ev.trace.input), limit)


def _prompt(ev: _EvalLike, check: CompiledJudge, limit: int) -> prompts.Prompt:
    output = prompts.cut(ev.text, limit)
    request = _request_text(ev, limit)
    if check.kind == "quality":
        return prompts.quality(check.rule, request, output)
    context = None
    if check.kind == "hallucination":
        context = prompts.tool_context(ev.trace.tool_calls, limit)
    if check.reference is not None:
        ref = "REFERENCE DOCUMENT:\n" + prompts.cut(check.reference, limit)
        context = ref if context is None else context + "\n\n" + ref
    return prompts.graded(check.kind, check.rule, check.anchors, request, output, context)


def _find(ev: _EvalLike, check: CompiledJudge, run: JudgeRun, prompt: prompts.Prompt,
          out: Judged) -> Judgement | None:
    key = judgement_key(run.provider, run.model, prompt)
    got = run.lookup(key)
    if got is None:
        out.missing.append(key)
        if run.context.collect:
            out.requests.append(Request(key, check.kind, prompt, check.ref.key_path,
                                        f"{ev.trace.source}#{ev.trace.id}"))
        return None
    out.used.append(key)
    assert isinstance(got, Judgement)
    return got


def _missing(ev: _EvalLike, check: CompiledJudge, run: JudgeRun, keys: list[str]) -> None:
    failures = [run.context.failures[k] for k in keys if k in run.context.failures]
    if failures:
        ev.add(JUDGE_ERROR, "error",
               f"Judge {check.label} could not be judged: {_cut(failures[0], 200)}",
               check.ref, ev.at_end(), constraint=check.kind,
               details={"kind": check.kind, "key": keys[0], "reason": failures[0]})
        return
    cmd = run.record_command(pairwise=check.kind == "pairwise")
    ev.add(JUDGE_MISSING, "error",
           f"No stored judgement for judge {check.label} (key {keys[0][:12]}) in "
           f"{run.store_file}: record it with `{cmd}` and commit the store",
           check.ref, ev.at_end(), constraint=check.kind,
           details={"kind": check.kind, "key": keys[0], "command": cmd})


def _other_kind(ev: _EvalLike, check: CompiledJudge, run: JudgeRun, j: Judgement) -> bool:
    """Whether the stored judgement ``j`` is a verdict of another kind than ``check`` (a
    hand-edited line: its key is this check's prompt, so only an edit makes them differ),
    reported as a judge/error: it does not answer the question (a pairwise check read a
    rubric's line, which has no winner, as a tie, and passed)."""
    if j.kind == check.kind:
        return False
    cmd = run.record_command(pairwise=check.kind == "pairwise")
    ev.add(JUDGE_ERROR, "error",
           f"Stored judgement {j.key[:12]} of judge {check.label} is a {_cut(j.kind, 40)!r} "
           f"verdict, not a {check.kind} one; record it again (`{cmd}` after removing its "
           "line)", check.ref, ev.at_end(), constraint=check.kind,
           details={"kind": check.kind, "key": j.key})
    return True


def _fail(ev: _EvalLike, check: CompiledJudge, rule: Rule, text: str, value: float,
          details: dict[str, Any]) -> None:
    if check.severity == "warning":
        ev.warned = True
    else:
        ev.failed = True
    sev: Severity = "warning" if check.severity == "warning" else "error"
    ev.add(rule, sev, text, check.ref, ev.at_end(), value=value,
           constraint=check.describe_threshold(), details=details)


def _graded(ev: _EvalLike, check: CompiledJudge, run: JudgeRun,
            out: Judged) -> tuple[int, float]:
    prompt = _prompt(ev, check, run.max_chars)
    j = _find(ev, check, run, prompt, out)
    if j is None:
        _missing(ev, check, run, [out.missing[-1]])
        return ERROR, math.nan
    if _other_kind(ev, check, run, j):
        return ERROR, math.nan
    score = j.score
    if score is None or not check.lowest <= score <= check.high:
        ev.add(JUDGE_ERROR, "error",
               f"Stored judgement {j.key[:12]} of judge {check.label} has score {score}, "
               f"outside {_num(check.lowest)}..{_num(check.high)}; record it again "
               f"(`{run.record_command()}` after removing its line)", check.ref, ev.at_end(),
               constraint=check.kind, details={"kind": check.kind, "key": j.key})
        return ERROR, math.nan
    normalised = check.normalised(score)
    if check.pass_score is None or score >= check.pass_score - EPSILON:
        return PASS, normalised
    scale = "5" if check.kind in GRADED else "100"
    _fail(ev, check, RULE_OF_KIND[check.kind],
          f"Judge {check.label}: score {score} of {scale} is below "
          f"{check.describe_threshold()}; reasoning: {_cut(j.reasoning)}", float(score),
          {"kind": check.kind, "score": score, "scale": int(check.high),
           "reasoning": j.reasoning, "model": j.response_model or j.model, "key": j.key})
    return (WARN if check.severity == "warning" else FAIL), normalised


def _pairwise(ev: _EvalLike, check: CompiledJudge, run: JudgeRun,
              out: Judged) -> tuple[int, float]:
    sc, trace = ev.sc, ev.trace
    base = run.context.base_outputs
    texts = None if base is None else base.get(sc.id)
    if not texts:
        why = ("no baseline was given (the base branch's results)" if base is None else
               f"the base branch's results have no output of scenario {sc.id} (is the "
               "check new in this change?)")
        ev.add(JUDGE_NO_BASELINE, "note",
               f"Judge {check.label} skipped: {why}; not a pass", check.ref, ev.at_end(),
               constraint="pairwise", details={"kind": "pairwise", "reason": why})
        return SKIP, math.nan
    base_id = trace.id if trace.id in texts else min(texts)
    limit = run.max_chars
    request = _request_text(ev, limit)
    head = prompts.cut(ev.text, limit)
    theirs = prompts.cut(texts[base_id], limit)
    first = prompts.pairwise(check.rule, request, theirs, head, None)  # A = base
    second = prompts.pairwise(check.rule, request, head, theirs, None)  # A = head
    before = len(out.missing)
    j1 = _find(ev, check, run, first, out)
    j2 = _find(ev, check, run, second, out)
    if j1 is None or j2 is None:
        _missing(ev, check, run, out.missing[before:])
        return ERROR, math.nan
    if _other_kind(ev, check, run, j1) or _other_kind(ev, check, run, j2):
        return ERROR, math.nan
    a = {"A": "base", "B": "head", "tie": "tie"}[j1.winner or "tie"]
    b = {"A": "head", "B": "base", "tie": "tie"}[j2.winner or "tie"]
    winner = a if a == b else "tie"  # the orders disagree: position bias, a tie
    score = {"head": 1.0, "tie": 0.5, "base": 0.0}[winner]
    if winner != "base":
        return PASS, score
    _fail(ev, check, JUDGE_PAIRWISE,
          f"Judge {check.label}: the base branch's output (trace {base_id}) is judged "
          f"better than this one in both orders; reasoning: {_cut(j1.reasoning, 200)} / "
          f"{_cut(j2.reasoning, 200)}", score,
          {"kind": "pairwise", "winner": "base", "base_trace": base_id,
           "reasoning": j1.reasoning + "\n\n" + j2.reasoning,
           "model": j1.response_model or j1.model, "key": j1.key})
    return (WARN if check.severity == "warning" else FAIL), score
