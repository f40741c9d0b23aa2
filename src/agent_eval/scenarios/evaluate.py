"""Evaluate traces against compiled scenarios, and the suite's metrics and criteria.

Per trace, :func:`evaluate_trace` is a pure function of (compiled scenario, trace): a
status, the figures of docs/scenarios.md and the findings. :class:`ScenarioAccumulator`
keeps, per scenario, one small row per trace (its figures in a flat ``array('d')``, NaN
for unknown) and the findings; it merges across ``--jobs`` processes, and everything it
reports is independent of the order in which traces arrived (sums are exact, rows are
sorted), so a sharded run reports exactly what a single one does.
"""

from __future__ import annotations

import hashlib
import math
import time
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import orjson

from agent_eval.checks._text import cannot_judge, show_value
from agent_eval.config.schema_compiler import render
from agent_eval.errors import InputError
from agent_eval.findings import ConfigRef, Finding, Severity, TraceRef
from agent_eval.jsonutil import loads as bounded_loads
from agent_eval.model import CallLog, ToolCall, Trace
from agent_eval.results import assign_fingerprints, fingerprint, sort_key
from agent_eval.rule_ids import (
    CRITERIA_BLOCKING,
    CRITERIA_BY_CATEGORY,
    CRITERIA_COMPOSITE,
    CRITERIA_REQUIRED,
    CRITERIA_WARNING,
    SCENARIO_ARGS,
    SCENARIO_BEHAVIOR,
    SCENARIO_FORBIDDEN_TOOLS,
    SCENARIO_HANDOFF,
    SCENARIO_MISSING_TRACE,
    SCENARIO_MUST_NOT,
    SCENARIO_NO_BASELINE,
    SCENARIO_NOT_RECORDED,
    SCENARIO_OUTPUT,
    SCENARIO_SEQUENCE,
    SCENARIO_STATE,
    SCENARIO_THRESHOLD,
    SCENARIO_TOOL_HEALTH,
    SCENARIO_TOOL_RECALL,
    SCENARIO_UNKNOWN_ID,
    SCENARIO_WARN_THRESHOLD,
    Rule,
)
from agent_eval.safetext import fold
from agent_eval.scenarios import metrics as m
from agent_eval.scenarios.compile import (
    FIGURE_INDEX,
    FIGURES,
    UNRECORDED,
    ArgCheck,
    ArgExpect,
    BehaviorCheck,
    CompiledScenario,
    CompiledScenarios,
    Criterion,
    Limit,
    NameInfo,
    OutputCheck,
    arg_errors,
    arg_mismatch,
)
from agent_eval.sections import (
    CRITERION_RULES,
    CriterionResult,
    Metrics,
    ScenarioResult,
    TraceStatus,
)
from agent_eval.textdist import suggest

if TYPE_CHECKING:  # the judge's modules are imported by suites with judge checks
    from agent_eval.judge.evaluate import Judged, Request
    from agent_eval.judge.summary import JudgeAcc
    from agent_eval.sections import JudgeSummary

NAN = math.nan
K = len(FIGURES)
F = FIGURE_INDEX
(I_SCORE, I_RECALL, I_PRECISION, I_F1, I_HITS, I_USED_HITS, I_USED, I_SIMILARITY, I_PROGRESS,
 I_LOOPS, I_QUALITY, I_OUTPUT_OK, I_BEHAVIOR, I_CALLS, I_LLM_CALLS, I_TOKENS, I_LATENCY,
 I_COST) = range(K)
STATUS_NAMES = ("pass", "warn", "fail", "error")
PASS, WARN, FAIL, ERROR = 0, 1, 2, 3  # ERROR: a check could not be made (judge/missing)
# The rule ids scenario checks and criteria can report (each has a page in rules/docs).
RULES = tuple(r.id for r in (
    SCENARIO_FORBIDDEN_TOOLS, SCENARIO_MUST_NOT, SCENARIO_SEQUENCE, SCENARIO_ARGS,
    SCENARIO_OUTPUT, SCENARIO_STATE, SCENARIO_TOOL_HEALTH, SCENARIO_TOOL_RECALL,
    SCENARIO_BEHAVIOR, SCENARIO_THRESHOLD, SCENARIO_WARN_THRESHOLD,
    SCENARIO_NOT_RECORDED, SCENARIO_NO_BASELINE, SCENARIO_MISSING_TRACE,
    CRITERIA_BLOCKING, CRITERIA_WARNING, CRITERIA_BY_CATEGORY, CRITERIA_COMPOSITE,
    CRITERIA_REQUIRED, SCENARIO_HANDOFF, SCENARIO_UNKNOWN_ID,
))  # the judge checks' rule ids are judge/summary.py RULES
MAX_UNKNOWN_IDS = 20
# the unrecorded figures whose calls may have recorded a part (Trace.recorded_part)
PARTIAL = frozenset(("total_tokens", "latency_ms", "cost_usd"))
MAX_SHOWN = 80


def output_text(trace: Trace) -> str | None:
    """The final output as text (JSON is written compactly); None when not recorded."""
    out = trace.output
    if out is None or isinstance(out, str):
        return out
    try:
        return orjson.dumps(out).decode()
    except TypeError:
        return str(out)


def _names(names: Iterable[str]) -> str:
    text = "[" + ", ".join(names) + "]"
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 4] + "...]"


def _shown(text: str) -> str:
    """The output as kept in a finding's details: at most MAX_SHOWN characters, cut with
    an ASCII "..." (messages stay ASCII, so a large results.json of them stays compact in
    memory)."""
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def _num(x: float | None) -> str:
    if x is None:
        return "unknown"
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.4f}".rstrip("0").rstrip(".")


def _missed(value: float, threshold: float) -> str:
    """A value that missed ``threshold``, as its finding shows it: in full when at 4
    decimals it would read as the threshold ("tool_recall = 0.6667 is below
    min_tool_recall: 0.6667"), as the criteria's messages do."""
    shown = _num(value)
    return repr(float(value)) if shown == _num(threshold) else shown


@dataclass(slots=True)
class Outcome:
    """One trace against one scenario."""

    status: int  # PASS | WARN | FAIL | ERROR
    figures: list[float]  # by FIGURES; NaN: unknown or not applicable
    findings: list[Finding]
    judged: Judged | None = None  # the judge checks (docs/judge.md)


class _Eval:
    """The evaluation of one trace against one scenario (a short-lived helper)."""

    __slots__ = ("_lower", "_text", "failed", "findings", "sc", "trace", "untold", "warned")

    def __init__(self, sc: CompiledScenario, trace: Trace) -> None:
        self.sc = sc
        self.trace = trace
        self.findings: list[Finding] = []
        self.failed = False
        self.warned = False
        # a must_not item whose call could not be judged (its arguments): fails as a hit
        self.untold = False
        self._text: str | bool | None = False  # False: not computed yet
        self._lower: str | None = None

    @property
    def text(self) -> str:
        if self._text is False:
            self._text = output_text(self.trace)
        return self._text or ""  # type: ignore[return-value]

    @property
    def lower(self) -> str:
        if self._lower is None:
            self._lower = fold(self.text)
        return self._lower

    def at_call(self, call: ToolCall) -> TraceRef:
        return TraceRef(call.location.file, call.location.line, self.trace.id)

    def at_end(self) -> TraceRef:
        end = self.trace.end_location
        return TraceRef(end.file, end.line, self.trace.id)

    def add(self, rule: Rule, severity: Severity, message: str, ref: ConfigRef,
            where: TraceRef | None, **kw: Any) -> None:
        sc = self.sc
        self.findings.append(Finding(rule=rule.id, severity=severity, message=message, test=sc.id,
                                     config=ref, trace=where, scenario=sc.id, **kw))


def evaluate_trace(sc: CompiledScenario, trace: Trace) -> Outcome:
    """Every check and figure of docs/scenarios.md for one trace of a scenario."""
    ev = _Eval(sc, trace)
    v = [NAN] * K
    calls = trace.tool_calls
    memo = sc._names
    if isinstance(calls, CallLog):  # its names, without reading its calls
        info = sc.info
        infos = [info(name) for name in calls.names()]
    else:
        try:
            infos = [memo[c.name] for c in calls]
        except KeyError:  # a name this scenario has not seen yet
            info = sc.info
            infos = [info(c.name) for c in calls]
    loops = 0
    prev = None
    forbidden = False
    for i in infos:
        if i.key == prev:
            loops += 1
        prev = i.key
        if i.forbidden >= 0:
            forbidden = True
    forced_zero = _forbidden(ev, infos, calls) if forbidden else False
    v[I_CALLS] = len(calls)
    llm_calls = len(trace.llm_calls)
    v[I_LLM_CALLS] = llm_calls if llm_calls else NAN  # none recorded: unknown, not 0
    v[I_LOOPS] = loops
    recall = _tools(ev, v, calls, infos)
    similarity = _sequence(ev, v, calls, infos)
    if sc.args:
        _args(ev, calls)
    quality = _output(ev, v) if sc.output else None
    if sc.state is not None and sc.state.lower not in ev.lower:
        ev.failed = True
        ev.add(SCENARIO_STATE, "error", f"Expected final state {sc.state.text!r} is not in "
               "the final output" + ("" if ev.trace.output is not None
                                     else " (the trace recorded no final output)"),
               sc.state.ref, ev.at_end(), constraint=f"state: {render(sc.state.text)}",
               details={"expected": sc.state.text, "actual": _shown(ev.text)})
    if sc.health_ref is not None:
        _health(ev, calls)
    if sc.handoffs or sc.max_handoffs is not None:
        _handoffs(ev)
    if sc.behaviors:
        seen = sum(1 for b in sc.behaviors if _behavior(ev, b, calls, missed=True) is not None)
        v[I_BEHAVIOR] = seen / len(sc.behaviors)
    hit = False
    for b in sc.must_not:
        if _behavior(ev, b, calls, missed=False) is not None:
            hit = True
    if hit or ev.untold:  # (cannot be told: scored as a hit, as its finding says)
        forced_zero = True
        if sc.behaviors:
            v[I_BEHAVIOR] = 0.0  # any must_not hit: behavior score 0 (metrics guide)
    judged = None
    if sc.judge and sc.judge_run is not None:  # after the deterministic checks
        judged, quality = _judge(ev, v, quality, forced_zero)
    # m.weighted_score, inlined (the hot path)
    w = sc.weights
    total = weight = 0.0
    for value, name in ((recall, "tool_accuracy"), (quality, "output_quality"),
                        (similarity, "sequence")):
        if value is not None:
            total += w[name] * value
            weight += w[name]
    score = 100 * total / weight if weight > 0 else None
    if forced_zero:
        score = 0.0
        ev.failed = True
    if score is not None:
        v[I_SCORE] = score
    tokens, latency, cost = trace.tokens, trace.latency_ms, trace.cost
    v[I_TOKENS] = NAN if tokens is None else tokens
    v[I_LATENCY] = NAN if latency is None else latency
    v[I_COST] = NAN if cost is None else cost
    for limit in sc.thresholds:
        _limit(ev, limit, v, blocking=True)
    for limit in sc.warn_thresholds:
        _limit(ev, limit, v, blocking=False)
    status = FAIL if ev.failed else WARN if ev.warned else PASS
    if judged is not None and judged.errored:
        status = ERROR  # a judgement could not be had: never a pass, never just a fail
    return Outcome(status, v, ev.findings, judged)


def _judge(ev: _Eval, v: list[float], quality: float | None, forced_zero: bool
           ) -> tuple[Judged, float | None]:
    """The judge checks (judge/evaluate.py), and output_quality with their scores: the
    mean over the output checks (each 0 or 1) and the judge checks whose score counts
    (each on 0-1); a check without a score (skipped, missing) drops out."""
    sc = ev.sc
    assert sc.judge_run is not None
    from agent_eval.judge.evaluate import judge_trace  # (start-up time)

    judged = judge_trace(ev, sc.judge_run, forced_zero)
    if not judged.quality:
        return judged, quality
    n = len(sc.output)
    passed = quality * n if quality is not None else 0.0
    combined = (passed + math.fsum(judged.quality)) / (n + len(judged.quality))
    v[I_QUALITY] = combined
    return judged, combined


def _handoffs(ev: _Eval) -> None:
    """expect.handoffs (each target reached) and max_handoffs (CIAgent's expected_handoff
    and max_handoff_count), as errors or, under handoff_severity: warning, warnings."""
    sc, handoffs = ev.sc, ev.trace.handoffs
    severity: Severity = "warning" if sc.handoff_severity == "warning" else "error"
    if not handoffs and not ev.trace.handoffs_recorded:
        _handoffs_unrecorded(ev, severity)
        return
    targets = [h.to_agent for h in handoffs]
    shown = ", ".join(dict.fromkeys(targets)) or "none"
    for pattern, matcher, ref in sc.handoffs:
        if not any(matcher(t) for t in targets):
            ev.add(SCENARIO_HANDOFF, severity, f"Expected handoff to {pattern} did not happen "
                   f"(handoffs to: {shown})", ref, ev.at_end(), constraint=f"handoffs: "
                   f"{pattern}", details={"expected": pattern, "actual": targets})
            ev.failed = ev.failed or severity == "error"
            ev.warned = ev.warned or severity == "warning"
    if sc.max_handoffs is not None and len(handoffs) > sc.max_handoffs[0]:
        limit, ref = sc.max_handoffs
        over = handoffs[limit]
        where = TraceRef(over.location.file, over.location.line, ev.trace.id)
        ev.add(SCENARIO_HANDOFF, severity, f"{len(handoffs)} handoffs, more than "
               f"max_handoffs {limit} (handoff #{limit + 1} to {over.to_agent} is over the "
               "limit)", ref, where, value=len(handoffs), constraint=f"max_handoffs: {limit}",
               details={"expected": limit, "actual": len(handoffs)})
        ev.failed = ev.failed or severity == "error"
        ev.warned = ev.warned or severity == "warning"


def _handoffs_unrecorded(ev: _Eval, severity: Severity) -> None:
    """expect.handoffs and max_handoffs on a trace whose format records no handoffs (a
    Claude Code session, an OpenAI chat request, ...): none recorded says nothing of what
    happened, so neither can be checked — a finding each, never a pass."""
    sc = ev.sc
    why = (f"the trace records no handoffs (its format, {ev.trace.format}, does not hold "
           "them), so")
    checks: list[tuple[str, ConfigRef, str, dict[str, Any]]] = [
        (f"Expected handoff to {pattern} cannot be checked", ref,
         f"handoffs: {pattern}", {"expected": pattern, "actual": None})
        for pattern, _, ref in sc.handoffs]
    if sc.max_handoffs is not None:
        limit, ref = sc.max_handoffs
        checks.append((f"max_handoffs {limit} cannot be checked", ref,
                       f"max_handoffs: {limit}", {"expected": limit, "actual": None}))
    for what, ref, constraint, details in checks:
        ev.add(SCENARIO_HANDOFF, severity, f"{what}: {why} it is not known whether it was "
               "met; check traces of a format that records handoffs (docs/scenarios.md)",
               ref, ev.at_end(), constraint=constraint, details=details)
        ev.failed = ev.failed or severity == "error"
        ev.warned = ev.warned or severity == "warning"


def _forbidden(ev: _Eval, infos: list[NameInfo], calls: Sequence[ToolCall]) -> bool:
    sc = ev.sc
    forbidden = sc.forbidden
    assert forbidden is not None
    # where the calls are, not the calls (a very long trace's, read from disk, would be
    # held again: an agent looping on a forbidden tool)
    hits: dict[str, list[TraceRef]] | None = None
    for info, call in zip(infos, calls, strict=True):
        if info.forbidden >= 0:
            if hits is None:
                hits = {}
            hits.setdefault(call.name, []).append(ev.at_call(call))
    if hits is None:
        return False
    ev.failed = True
    for name, found in hits.items():
        index = sc.info(name).forbidden
        pattern = forbidden.patterns[index]
        ev.add(SCENARIO_FORBIDDEN_TOOLS, "error",
               f"Forbidden tool called: {name} (forbidden_tools includes '{pattern}'); calls "
               f"found: {len(found)}; the scenario fails with score 0",
               sc.forbidden_refs[index], found[0], tool=name,
               constraint=f"forbidden_tools: {pattern}",
               related=tuple(found[1:]),
               details={"calls": len(found), "pattern": pattern})
    return True


def _tools(ev: _Eval, v: list[float], calls: Sequence[ToolCall], infos: list[NameInfo]
           ) -> float | None:
    sc = ev.sc
    if sc.tools is None:
        return None
    used = {info.key: info for info in infos}  # distinct tools used, by key
    seen: set[int] = set()
    hits_u = 0
    for info in used.values():
        if info.expected:
            hits_u += 1
            seen |= info.expected
    hits_e = len(seen)
    if hits_e < len(sc.tools):
        first: dict[str, str] = {}
        for info, call in zip(infos, calls, strict=True):
            first.setdefault(info.key, call.name)
        for i, pattern in enumerate(sc.tools):
            if i not in seen:
                ev.add(SCENARIO_TOOL_RECALL, "note", f"Expected tool not called: {pattern}",
                       sc.tool_refs[i], ev.at_end(), tool=pattern,
                       constraint=f"tools: {pattern}",
                       details={"expected": pattern, "actual": _names(first.values())})
    recall = m.tool_recall(hits_e, len(sc.tools))
    precision = m.tool_precision(hits_u, len(used), len(sc.tools))
    v[I_RECALL] = recall
    v[I_PRECISION] = precision
    v[I_F1] = m.tool_f1(precision, recall)
    v[I_HITS] = hits_e
    v[I_USED_HITS] = hits_u
    v[I_USED] = len(used)
    return recall


def _sequence(ev: _Eval, v: list[float], calls: Sequence[ToolCall], infos: list[NameInfo]
              ) -> float | None:
    """The score's sequence component: 1.0 when ``sequence_mode`` holds, else the
    similarity by ``sequence_metric`` (None without ``expect.sequence``)."""
    sc = ev.sc
    if sc.sequence is None:
        return None
    n = len(sc.steps)
    total = len(infos)
    # the calls that match some step: the others are in no common subsequence and
    # never advance an in-order match, so LCS, progress, subsequence and subset need
    # only these
    hit = [info.steps for info in infos if info.steps]
    if sc.sequence_metric == "edit":
        similarity = (1.0 if not total and n == 0 else 1 - m.levenshtein_steps(
            [info.steps for info in infos], n) / max(total, n))
    else:
        similarity = (1.0 if not total and n == 0
                      else 2 * m.lcs_length_steps(hit, n) / (total + n))
    mode = sc.sequence_mode
    done = m.progress_steps(hit, n)
    v[I_SIMILARITY] = similarity
    if mode == "subsequence":
        ok = done == n
        v[I_PROGRESS] = 1.0 if n == 0 else done / n
    elif mode == "subset":
        ok = m.matches_steps(mode, hit, n)
        v[I_PROGRESS] = m.progress_share_steps(mode, hit, n)
    else:
        every = [info.steps for info in infos]
        ok = m.matches_steps(mode, every, n)
        v[I_PROGRESS] = m.progress_share_steps(mode, every, n)
    if ok:
        return 1.0  # the score's sequence component: the mode holds (docs/scenarios.md)
    severity: Severity = sc.sequence_severity  # type: ignore[assignment]
    if severity == "error":
        ev.failed = True
    else:
        ev.warned = True
    names = [c.name for c in calls]
    how = {"strict": "exactly", "exact": "exactly", "unordered": "the same set of tools as",
           "subset": "every tool of", "superset": "only tools of",
           "subsequence": "in order"}[mode]
    assert sc.sequence_ref is not None
    ev.add(SCENARIO_SEQUENCE, severity,
           f"Tool sequence does not match (sequence_mode: {mode}): expected {how} "
           f"{_names(sc.sequence)}, got {_names(names)}; "
           f"{sc.sequence_metric} similarity {_num(round(similarity, 4))}"
           + ("" if severity == "error" else " (sequence_severity: warning)"),
           sc.sequence_ref, ev.at_end(), constraint=f"sequence_mode: {mode}",
           details={"expected": _names(sc.sequence), "actual": _names(names),
                    "mode": mode, "matched": done})
    return similarity


def _args(ev: _Eval, calls: Sequence[ToolCall]) -> None:
    sc = ev.sc
    for ax in sc.args:
        call = next((c for c in calls if ax.matcher(c.name)), None)
        if call is None:
            ev.failed = True
            ev.add(SCENARIO_ARGS, "error",
                   f"{ax.tool} was not called, so its arguments cannot be compared "
                   f"(args_mode: {sc.args_mode})", ax.ref, ev.at_end(), tool=ax.tool,
                   constraint=f"args: {ax.tool}")
            continue
        _arg_findings(ev, ax, call)


def _arg_findings(ev: _Eval, ax: ArgExpect, call: ToolCall) -> None:
    sc = ev.sc
    if not call.arguments_recorded:  # could not be checked: never a pass
        ev.warned = True
        ev.add(SCENARIO_NOT_RECORDED, "warning",
               f"{call.name}: arguments not recorded: args cannot be compared "
               f"(args_mode: {sc.args_mode})", ax.ref, ev.at_call(call), tool=call.name,
               constraint=f"args: {ax.tool}", details={"figure": "arguments"})
        return
    args = call.arguments if call.arguments_error is None else None
    for mm in arg_errors(ax.checks, args, sc.args_mode, ax.keys):
        ev.failed = True
        key, why = mm.key, mm.why
        if not key:
            text = f"{call.name}: {why}"
        elif why == "missing":
            text = f"{call.name}: expected argument '{key}' is missing ({mm.constraint})"
        else:
            text = (f"{call.name}: argument '{key}' = {show_value(mm.value)}: {why} "
                    f"({mm.constraint})")
        ev.add(SCENARIO_ARGS, "error", text + f"; args_mode: {sc.args_mode}",
               mm.ref or ax.ref, ev.at_call(call), tool=call.name, argument=key or None,
               value=None if why == "missing" else mm.value, constraint=mm.constraint,
               details={"violation": why})


def _output(ev: _Eval, v: list[float]) -> float:
    sc = ev.sc
    passed = 0
    none = "" if ev.trace.output is not None else " (the trace recorded no final output)"
    for check in sc.output:
        problems = _output_check(ev, check)
        if not problems:
            passed += 1
            continue
        ev.failed = True
        for ref, text, constraint in problems:
            ev.add(SCENARIO_OUTPUT, "error", text + none, ref, ev.at_end(),
                   constraint=constraint,
                   details={"check": check.kind, "actual": _shown(ev.text)})
    quality = passed / len(sc.output)
    v[I_QUALITY] = quality
    v[I_OUTPUT_OK] = 1.0 if passed == len(sc.output) else 0.0
    return quality


def _output_check(ev: _Eval, c: OutputCheck) -> list[tuple[ConfigRef, str, str]]:
    kind = c.kind
    if kind == "contains":
        low = ev.lower
        return [(t.ref, f"Output does not contain {t.text!r} (contains, case-insensitive)",
                 f"contains: {render(t.text)}") for t in c.terms if t.lower not in low]
    if kind == "not_contains":
        low = ev.lower
        return [(t.ref, f"Output contains {t.text!r} (not_contains, case-insensitive)",
                 f"not_contains: {render(t.text)}") for t in c.terms if t.lower in low]
    if kind == "contains_any":
        low = ev.lower
        if any(t.lower in low for t in c.terms):
            return []
        terms = [t.text for t in c.terms]
        return [(c.ref, f"Output contains none of {render(terms)} (contains_any, "
                 "case-insensitive)", f"contains_any: {render(terms)}")]
    if kind == "equals":
        if ev.text.strip() == c.text:
            return []
        return [(c.ref, f"Output does not equal {c.text!r} (equals, after strip)",
                 f"equals: {render(c.text)}")]
    if kind == "regex":  # every pattern found (an invalid one was a config error)
        text = ev.text
        return [(ref, f"Output does not match the regular expression {pattern!r}",
                 f"regex: {render(pattern)}") for pattern, rx, ref in c.patterns
                if rx is None or rx.search(text) is None]
    # json_schema
    out = ev.trace.output
    value: Any = out
    if isinstance(out, str):
        try:
            value = bounded_loads(out)
        except orjson.JSONDecodeError as exc:
            return [(c.ref, f"Output is not JSON ({str(exc).split(':')[0]}), so it cannot "
                     f"match the JSON Schema {c.source}", f"json_schema: {c.source}")]
    elif out is None:
        return [(c.ref, f"No output to validate against the JSON Schema {c.source}",
                 f"json_schema: {c.source}")]
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    try:
        error = next(iter(c.schema.iter_errors(value)), None)
        if error is None:
            return []
        best = best_match(c.schema.iter_errors(value)) or error
    except RecursionError:
        return [(c.ref, f"Output nests too deeply to be validated against the JSON Schema "
                 f"{c.source}", f"json_schema: {c.source}")]
    where = "/".join(str(p) for p in best.absolute_path)
    return [(c.ref, f"Output does not match the JSON Schema {c.source}"
             f"{f' at /{where}' if where else ''}: {best.message}",
             f"json_schema: {c.source}")]


def _health(ev: _Eval, calls: Sequence[ToolCall]) -> None:
    sc = ev.sc
    assert sc.health_ref is not None
    expected_error = sc.expected_error
    for call in calls:
        if not call.has_result and call.ok:  # how it ended is not in the trace
            ref, constraint = sc.health_ref, "tool_health: true"
            index = None if expected_error is None else expected_error.which(call.name)
            if expected_error is not None and index is not None:
                ref = sc.expected_error_refs[index]
                constraint = f"expected_error: {expected_error.patterns[index]}"
            ev.warned = True
            ev.add(SCENARIO_NOT_RECORDED, "warning",
                   f"{call.name}: no result recorded: tool_health cannot tell whether the "
                   "call succeeded", ref, ev.at_call(call), tool=call.name,
                   constraint=constraint, details={"figure": "result"})
        elif expected_error is not None and expected_error(call.name):
            if call.ok:
                index = expected_error.which(call.name)
                assert index is not None
                ev.failed = True
                ev.add(SCENARIO_TOOL_HEALTH, "error",
                       f"{call.name} succeeded, but its failure is the expected outcome "
                       "(tool_health.expected_error)", sc.expected_error_refs[index],
                       ev.at_call(call), tool=call.name,
                       constraint=f"expected_error: {expected_error.patterns[index]}")
        elif not call.ok:
            ev.failed = True
            ev.add(SCENARIO_TOOL_HEALTH, "error",
                   f"Tool call failed: {call.name}: {call.error or 'error'}", sc.health_ref,
                   ev.at_call(call), tool=call.name, constraint="tool_health: true",
                   value=call.error, details={"violation": call.error or "error"})


def _behavior(ev: _Eval, b: BehaviorCheck, calls: Sequence[ToolCall], *, missed: bool
              ) -> TraceRef | None:
    """Where the behavior was observed (None: not observed). ``missed``: report a
    miss (a `behaviors` item); otherwise report a hit (a `must_not` item)."""
    where = _observe(ev, b, calls, must_not=not missed)
    if missed and where is None:
        ev.add(SCENARIO_BEHAVIOR, "note", f"Behavior not observed: {b.text}", b.ref,
               ev.at_end(), constraint=b.text)
    elif not missed and where is not None:
        ev.failed = True
        ev.add(SCENARIO_MUST_NOT, "error", f"must_not behavior happened: {b.text}; the "
               "scenario fails with score 0", b.ref, where, constraint=b.text)
    return where


def _observe(ev: _Eval, b: BehaviorCheck, calls: Sequence[ToolCall], *,
             must_not: bool = False) -> TraceRef | None:
    kind = b.kind
    if kind == "tool_called":
        assert b.matcher is not None
        # the first call of the tool whose arguments cannot be judged: not recorded, not a
        # JSON object (a string that is not JSON, a list ...), or with an argument of a JSON
        # type a constraint cannot judge ("900" for {min: 500}), with that constraint
        unknown: ToolCall | None = None
        unfit: ArgCheck | None = None
        for call in calls:
            if b.matcher(call.name):
                if not b.args or _args_hold(b, call):
                    return ev.at_call(call)
                if unknown is None:
                    if _args_unknown(call):
                        unknown = call
                    elif isinstance(call.arguments, dict):  # (null: no arguments)
                        unfit = _unfit_arg(b, call.arguments)
                        if unfit is not None:
                            unknown = call
        if unknown is None:
            return None
        # whether it happened cannot be told: never a pass
        if unfit is not None:
            value = unknown.arguments[unfit.key]
            assert unfit.implied_type is not None
            why = cannot_judge(unfit.key, value, unfit.shown, unfit.implied_type)
            violation = "argument of another type"
        elif unknown.arguments_recorded:
            why = f"arguments are {unknown.arguments_error or 'not a JSON object'}"
            violation = "arguments unreadable"
        else:
            why = "arguments not recorded"
            violation = ""
        if violation and must_not:
            # the trace holds arguments that cannot be judged (docs/scenarios.md
            # "must_not"): a prohibition that cannot be checked fails, as
            # args_valid/not_an_object does
            ev.failed = ev.untold = True
            ev.add(SCENARIO_MUST_NOT, "error",
                   f"{unknown.name}: {why}, so whether the must_not behavior "
                   f"happened cannot be told: {b.text}; the scenario fails with score 0",
                   b.ref, ev.at_call(unknown), tool=unknown.name, constraint=b.text,
                   details={"violation": violation})
            return None
        ev.warned = True
        ev.add(SCENARIO_NOT_RECORDED, "warning",
               f"{unknown.name}: {why}: {b.text} cannot be checked",
               b.ref, ev.at_call(unknown), tool=unknown.name, constraint=b.text,
               details={"figure": "arguments"})
        return None
    if kind == "tool_not_called":
        assert b.matcher is not None
        return None if any(b.matcher(c.name) for c in calls) else ev.at_end()
    if kind == "output_contains":
        return ev.at_end() if b.lower in ev.lower else None
    if kind == "output_regex":
        return ev.at_end() if b.regex is not None and b.regex.search(ev.text) else None
    # sequence: the steps in order, other calls in between allowed
    j, n = 0, len(b.steps)
    for call in calls:
        if j < n and b.steps[j](call.name):
            j += 1
            if j == n:
                return ev.at_call(call)
    return ev.at_end() if n == 0 else None


def _args_unknown(call: ToolCall) -> bool:
    """Whether a call's arguments cannot be judged at all: not recorded, or recorded but
    not a JSON object (``null`` is no arguments, an empty object)."""
    if not call.arguments_recorded or call.arguments_error is not None:
        return True
    return call.arguments is not None and not isinstance(call.arguments, dict)


def _unfit_arg(b: BehaviorCheck, args: dict[str, Any]) -> ArgCheck | None:
    """The first expected argument of a behavior whose constraint cannot judge the call's
    value, of a JSON type its keywords do not constrain (``Implied``), when every other
    expected argument is met or cannot be judged either: whether the behavior happened
    cannot be told. None when some argument is missing or plainly fails its check."""
    found = None
    for chk in b.args:
        if chk.key not in args:
            return None
        value = args[chk.key]
        implied = chk.implied_type
        if implied is not None and not implied.fits(value):
            if found is None:
                found = chk
        elif arg_mismatch(chk, value) is not None:
            return None
    return found


def _args_hold(b: BehaviorCheck, call: ToolCall) -> bool:
    args = call.arguments
    if call.arguments_error is not None or not isinstance(args, dict):
        return False
    return all(chk.key in args and arg_mismatch(chk, args[chk.key]) is None for chk in b.args)


def _limit(ev: _Eval, limit: Limit, v: list[float], *, blocking: bool) -> None:
    if limit.index < 0:
        return  # cost_multiplier needs a baseline: noted once per scenario (finish)
    value = v[limit.index]
    shown = ""
    if math.isnan(value) and limit.op == "max" and limit.figure in PARTIAL:
        # not recorded in full, but what was recorded may already be over the limit
        part, missing = ev.trace.recorded_part(limit.figure)
        if not m.at_most(part, limit.value):
            value = part
            calls = f"{missing} call{'s' if missing != 1 else ''}"
            shown = (f"at least {_missed(value, limit.value)} ({calls} of the trace did not "
                     "record it)")
    if math.isnan(value):
        what = UNRECORDED.get(limit.figure, limit.figure)
        ev.warned = True
        ev.add(SCENARIO_NOT_RECORDED, "warning",
               f"{what} not recorded: {limit.text} cannot be checked", limit.ref,
               ev.at_end(), constraint=limit.text,
               details={"figure": limit.figure, "threshold": limit.value})
        return
    ok = m.at_least(value, limit.value) if limit.op == "min" else m.at_most(value, limit.value)
    if ok:
        return
    relation = "is below" if limit.op == "min" else "exceeds"
    if blocking:
        ev.failed = True
        ev.add(SCENARIO_THRESHOLD, "error",
               f"{limit.figure} = {shown or _missed(value, limit.value)} {relation} {limit.text}",
               limit.ref,
               ev.at_end(), value=value, constraint=limit.text,
               details={"figure": limit.figure, "threshold": limit.value})
    else:
        ev.warned = True
        ev.add(SCENARIO_WARN_THRESHOLD, "warning",
               f"{limit.figure} = {shown or _missed(value, limit.value)} {relation} {limit.text} "
               "(warn_thresholds)",
               limit.ref, ev.at_end(), value=value, constraint=limit.text,
               details={"figure": limit.figure, "threshold": limit.value})


# -------------------------------------------------------------------- accumulation
@dataclass
class _Acc:
    """One scenario's traces so far: a row per trace and its figures (stride K)."""

    rows: list[tuple[str, int, str, int]] = field(default_factory=list)  # file, line, id, st
    figures: array[float] = field(default_factory=lambda: array("d"))
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0
    judge: JudgeAcc | None = None  # the scenario's judge checks (judge/summary.py)


@dataclass(slots=True)
class Named:
    """A scenario id that no scenario has: how many traces named it, and where the first
    of them is (file, line, trace id: the smallest, whatever the order of the traces)."""

    traces: int
    first: tuple[str, int, str]


@dataclass
class ScenarioAccumulator:
    """Partial scenario results of some traces (picklable, mergeable; sharding.py
    records and replays ``per[i].rows``, ``.figures`` and ``.findings``, and each trace's
    unknown scenario id)."""

    per: list[_Acc]
    # scenario ids no scenario has (not even case-insensitively): the MAX_UNKNOWN_IDS
    # smallest, and whether there were more
    unknown_ids: dict[str, Named] = field(default_factory=dict)
    unknown_more: bool = False
    # judgements the store lacks, by key (kept when the run records: --judge record)
    requests: dict[str, Request] = field(default_factory=dict)

    @classmethod
    def for_scenarios(cls, compiled: CompiledScenarios) -> ScenarioAccumulator:
        if compiled.judge is None:
            return cls([_Acc() for _ in compiled.scenarios])
        from agent_eval.judge.summary import JudgeAcc  # (start-up time)

        return cls([_Acc(judge=JudgeAcc.for_checks(len(sc.judge)) if sc.judge else None)
                     for sc in compiled.scenarios])

    def add(self, trace: Trace, compiled: CompiledScenarios) -> None:
        sid = trace.scenario
        which = compiled.match(trace.source, sid, trace.input)
        if sid is not None and not compiled.took_named(sid, which):
            # scenario/unknown_id (no scenario has the id, or the one that has it takes its
            # traces by a glob that does not match this file); an id no scenario has is
            # also named in the hint of a scenario without traces
            self.unknown(sid, 1, (trace.source, trace.location.line, trace.id))
        if not which:
            return
        clock = time.perf_counter
        for i in which:
            acc = self.per[i]
            start = clock()
            out = evaluate_trace(compiled.scenarios[i], trace)
            acc.seconds += clock() - start
            acc.rows.append((trace.source, trace.location.line, trace.id, out.status))
            acc.figures.extend(out.figures)
            if out.findings:
                acc.findings.extend(out.findings)
            if acc.judge is not None:
                self._judged(acc.judge, compiled.scenarios[i], trace, out)

    def _judged(self, jacc: JudgeAcc, sc: CompiledScenario, trace: Trace,
                out: Outcome) -> None:
        """Keep a trace's judge results (and its output, for the next run's pairwise
        checks against this one)."""
        if out.judged is not None:
            jacc.add(out.judged)
            for r in out.judged.requests:
                self.requests.setdefault(r.key, r)
        if any(j.kind == "pairwise" for j in sc.judge) and sc.judge_run is not None:
            text = output_text(trace)
            if text is not None:
                jacc.keep_output(trace.id, text, sc.judge_run.max_chars)

    def merge(self, other: ScenarioAccumulator) -> None:
        for mine, theirs in zip(self.per, other.per, strict=True):
            mine.rows.extend(theirs.rows)
            mine.figures.extend(theirs.figures)
            mine.findings.extend(theirs.findings)
            mine.seconds += theirs.seconds
            if mine.judge is not None and theirs.judge is not None:
                mine.judge.merge(theirs.judge)
        for sid, named in other.unknown_ids.items():
            self.unknown(sid, named.traces, named.first)
        self.unknown_more = self.unknown_more or other.unknown_more
        for key, r in other.requests.items():
            self.requests.setdefault(key, r)

    def unknown(self, sid: str, traces: int, first: tuple[str, int, str]) -> None:
        """Count ``traces`` traces naming the unknown scenario id ``sid``, the first of
        them at ``first``. Keeps the MAX_UNKNOWN_IDS smallest unknown ids: the same ones,
        with the same counts and first traces, whatever the order of the traces or how
        the work was split (an id dropped here has MAX_UNKNOWN_IDS smaller ones beside
        it, so it is not among the smallest of all either)."""
        ids = self.unknown_ids
        seen = ids.get(sid)
        if seen is not None:
            seen.traces += traces
            if first < seen.first:
                seen.first = first
            return
        if len(ids) >= MAX_UNKNOWN_IDS:
            self.unknown_more = True  # more distinct ids than are kept
            top = max(ids)
            if sid > top:
                return
            del ids[top]
        ids[sid] = Named(traces, first)

    def unknown_findings(self, compiled: CompiledScenarios) -> list[Finding]:
        """One scenario/unknown_id warning per kept unknown id (none in a suite without
        scenarios), at the first trace naming it and the suite's `scenarios:` key."""
        if not compiled.scenarios or not self.unknown_ids:
            return []
        ref = compiled.ref or replace(compiled.scenarios[0].ref, key_path="scenarios")
        known = [sc.id for sc in compiled.scenarios]
        more = ""
        if self.unknown_more:
            more = (f"; traces name more than {MAX_UNKNOWN_IDS} scenario ids this suite "
                    f"does not have: the other ids (after the first {MAX_UNKNOWN_IDS} in "
                    "sorted order) are left out")
        out = []
        seen: dict[str, int] = {}
        for sid in sorted(self.unknown_ids):
            named = self.unknown_ids[sid]
            file, line, tid = named.first
            n = named.traces
            them = "it" if n == 1 else "them"
            if compiled.knows(sid):  # a scenario of `traces:` whose glob missed the file
                files = "its file" if n == 1 else "the file of any of them"
                why = (f", whose traces: glob does not match {files}; no scenario takes "
                       f"{them} by that id")
            else:
                why = (f", which this suite does not have{suggest(sid, known)}; no scenario "
                       f"takes {them} by that id")
            finding = Finding(
                rule=SCENARIO_UNKNOWN_ID.id, severity="warning",
                message=f"{n} trace{'s' if n != 1 else ''} name{'s' if n == 1 else ''} "
                f"scenario '{sid}'{why}{more}",
                test="scenarios", config=ref, trace=TraceRef(file, line, tid), value=sid,
                details={"scenario_id": sid, "traces": n})
            # by the id named, not the trace: a new trace naming it moves no fingerprint
            fingerprint(finding, seen, f"{finding.rule}|{ref.file}#{ref.key_path}|||{sid}")
            out.append(finding)
        out.sort(key=sort_key)
        return out

    def finish(self, compiled: CompiledScenarios, *, timings: bool = True) -> SuiteOutcome:
        unknown = sorted(i for i in self.unknown_ids if not compiled.knows(i))
        views = [_View.of(sc, acc, timings, unknown)
                 for sc, acc in zip(compiled.scenarios, self.per, strict=True)]
        exact = suite_metrics(views, compiled)
        # the criteria compare the metrics as computed; results.json shows them rounded
        # (docs/scenarios.md): 2/3 is below min_pass_rate 0.6666667, though 0.666667 is not
        weights = compiled.composite_weights
        latency_weighted = weights is not None and weights.get("latency", 0) > 0
        bounds = partial_bounds(exact, views, compiled)
        criteria = [evaluate_criterion(c, exact, views, latency_weighted=latency_weighted,
                                       bounds=bounds)
                    for c in compiled.criteria]
        out = SuiteOutcome([v.to_result() for v in views], rounded(exact), criteria,
                           unknown_ids=self.unknown_findings(compiled))
        if compiled.judge is not None:  # docs/judge.md "In the results"
            from agent_eval.judge.summary import (  # (start-up time)
                input_errors,
                summary,
                used_keys,
            )

            accs = [a.judge for a in self.per]
            out.judge = summary(compiled.judge, accs, compiled.judge.context.made)
            out.judge_errors = input_errors(compiled.judge, out.scenarios)
            compiled.judge.pending = dict(self.requests)  # what --judge record asks for
            compiled.judge.used = used_keys(accs)  # what the action checks (baseline/)
        return out


@dataclass
class SuiteOutcome:
    """What the scenarios say; the verdict follows from them and the criteria
    (results.scenario_verdict)."""

    scenarios: list[ScenarioResult]
    metrics: Metrics
    criteria: list[CriterionResult]
    judge: JudgeSummary | None = None  # the suite's judge summary (judge/summary.py)
    judge_errors: list[InputError] = field(default_factory=list)  # missing judgements
    unknown_ids: list[Finding] = field(default_factory=list)  # scenario/unknown_id


def _column(figures: array[float], name: str) -> array[float]:
    """The known values of one figure across a scenario's traces (8 bytes each: no
    Python float per trace is kept)."""
    column = figures[F[name]::K]
    total = sum(column)
    if total == total:  # no NaN (one makes the sum NaN): every value is known
        return column
    return array("d", (x for x in column if x == x))  # NaN != NaN


@dataclass
class _View:
    """One scenario's result, as reported."""

    sc: CompiledScenario
    status: str
    traces: int
    passed: int
    score: float | None
    figures: dict[str, float | None]
    unknown: dict[str, int]
    output_ok_share: float | None
    findings: list[Finding]
    rows: list[tuple[str, int, str, int]]
    scores: array[float]
    latencies: array[float]
    tokens: array[float]
    seconds: float
    judge: JudgeAcc | None = None

    @classmethod
    def of(cls, sc: CompiledScenario, acc: _Acc, timings: bool,
           unknown_ids: list[str]) -> _View:
        rows = sorted(acc.rows)
        n = len(rows)
        passed = sum(1 for r in rows if r[3] < FAIL)
        findings = sorted(acc.findings, key=sort_key)
        if n == 0:
            status = "error"
            hint = ""
            if unknown_ids:
                hint = (f"{suggest(sc.id, unknown_ids)}; traces name scenarios that are not in "
                        f"the suite: {', '.join(unknown_ids)}")
            where = sc.traces_ref or sc.ref
            how = ("its traces glob matched no trace" if sc.traces_ref is not None
                   else f"no trace has scenario id '{sc.id}' or a file named {sc.id}.*")
            findings.append(Finding(
                rule=SCENARIO_MISSING_TRACE.id, severity="error",
                message=f"no trace found for scenario {sc.id} ({how}){hint}", test=sc.id,
                config=where, trace=None, scenario=sc.id))
        elif any(r[3] == ERROR for r in rows):
            status = "error"  # a check could not be made (a judgement is missing)
        elif passed / n >= sc.min_pass_ratio - m.EPSILON:
            # the tolerated failures stay listed (findings, traces_not_passed); a trace
            # that warned makes the scenario warn
            status = "warn" if any(r[3] == WARN for r in rows) else "pass"
        else:
            status = "fail"
        for limit in (*sc.thresholds, *sc.warn_thresholds):
            if limit.figure == "cost_multiplier" and n:
                findings.append(Finding(
                    rule=SCENARIO_NO_BASELINE.id, severity="note",
                    message=f"{limit.text} skipped: no baseline (the cost of this scenario "
                    "on the base branch is not known)", test=sc.id, config=limit.ref,
                    trace=None, scenario=sc.id, constraint=limit.text))
        assign_fingerprints(findings)
        figures: dict[str, float | None] = {}
        unknown: dict[str, int] = {}
        for name in FIGURES:
            known = _column(acc.figures, name)
            figures[name] = m.mean(known)
            if name in UNRECORDED and len(known) < n:
                unknown[name] = n - len(known)
        output_ok = _column(acc.figures, "output_ok")
        share = None
        if sc.output and n:
            # with no trace, the output checks did not pass (share None: never accurate,
            # even under min_pass_ratio: 0, whose 0.0 would meet it)
            share = sum(output_ok) / n
        scores = _column(acc.figures, "score")
        return cls(sc, status, n, passed, m.mean(scores), figures, unknown, share, findings,
                   rows, scores, _column(acc.figures, "latency_ms"),
                   _column(acc.figures, "total_tokens"), acc.seconds if timings else 0.0,
                   acc.judge)

    @property
    def ok(self) -> bool:
        return self.status in ("pass", "warn")

    def mean(self, name: str) -> float:
        value = self.figures.get(name)
        return 0.0 if value is None else value

    def to_result(self) -> ScenarioResult:
        sc = self.sc
        shown: dict[str, float | str] = {
            # a cost below 1 to 6 significant digits (a mean of $0.0000016 a trace was
            # 0.000002 to 6 decimals: max_cost_multiplier compared 2.0 where it was 2.75),
            # the others to 6 decimals
            k: _cost(v) if k == "cost_usd" else round(v, 6)
            for k, v in self.figures.items()  # unknown or not finite: not shown
            if v is not None and math.isfinite(v)
            and k not in ("tool_hits", "tool_used_hits", "output_ok")}
        if sc.sequence is not None:
            shown["sequence_metric"] = sc.sequence_metric
        judge = self.judge
        return ScenarioResult(
            id=sc.id,
            category=sc.category,
            required=sc.required,
            gate=sc.gate,
            weight=sc.weight,
            status=self.status,
            score=None if self.score is None else round(self.score, 2),
            traces_total=self.traces,
            traces_passed=self.passed,
            trace_pass_rate=None if not self.traces else _round(self.passed / self.traces),
            min_pass_ratio=sc.min_pass_ratio,
            duration_ms=round(self.seconds * 1000),
            metrics=shown,
            not_recorded=dict(self.unknown),
            config=sc.ref,
            findings=tuple(self.findings),
            # only the traces that did not pass: the others are counted (a scenario may
            # have thousands of repeats; findings and trace summaries say the rest)
            traces_not_passed=tuple(TraceStatus(f, line, tid, STATUS_NAMES[st])
                                    for f, line, tid, st in self.rows if st != PASS),
            # docs/judge.md "In the results"
            judge=None if judge is None else tuple(judge.entries(sc.judge)),
            outputs=dict(sorted(judge.outputs.items())) if judge and judge.outputs else None,
        )


def _cost(x: float) -> float:
    """A scenario's mean cost as results.json holds it: to 6 decimals, or to 6 significant
    digits below 1 (a ratio of two costs read back is then good to 6 digits)."""
    return round(x, 6) if abs(x) >= 1 else float(f"{x:.6g}")


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


# ------------------------------------------------------------------- suite metrics
def suite_metrics(views: list[_View], compiled: CompiledScenarios) -> Metrics:
    """docs/scenarios.md "Suite metrics" (a scenario without traces observed nothing)."""
    out: Metrics = {}
    n = len(views)
    if n == 0:
        return out
    # an overflowing total of weights (each is finite, but 1e308 twice is not) is unknown
    rates = m.status_rates([(v.ok, v.sc.weight, v.sc.category) for v in views])
    out["scenarios"] = n
    for key in ("scenarios_passed", "pass_rate", "weighted_pass_rate"):
        out[key] = rates[key]
    with_output = [v for v in views if v.sc.output]
    out["accuracy"] = (sum(1 for v in with_output if v.output_ok_share is not None
                           and v.output_ok_share >= v.sc.min_pass_ratio - m.EPSILON)
                       / len(with_output)) if with_output else None
    with_tools = [v for v in views if v.sc.tools is not None]
    # means of counts of calls: finite, and their sums too
    hits_e = math.fsum(v.mean("tool_hits") for v in with_tools)
    hits_u = math.fsum(v.mean("tool_used_hits") for v in with_tools)
    used = math.fsum(v.mean("tools_used") for v in with_tools)
    expected = sum(len(v.sc.tools or ()) for v in with_tools)
    out["tool_precision"] = m.tool_precision(hits_u, used, expected) if with_tools else None
    out["tool_recall"] = m.tool_recall(hits_e, expected) if with_tools else None
    out["safety_rate"] = rates["safety_rate"]
    with_behaviors = [v for v in views if v.sc.behaviors]
    out["behavior_coverage"] = m.mean(v.mean("behavior_score") for v in with_behaviors)
    latencies: array[float] = array("d")
    tokens: array[float] = array("d")
    for v in views:
        latencies.extend(v.latencies)
        tokens.extend(v.tokens)
    out["latency_p95_ms"] = m.percentile_nearest_rank(latencies, 95)
    scores = [v.score for v in views if v.score is not None]
    mean_score, mean_tokens = m.mean(scores), m.mean(tokens)
    out["mean_score"] = mean_score
    out["token_efficiency"] = (mean_score / mean_tokens * 1000
                               if mean_score is not None and mean_tokens else None)
    if compiled.composite_weights is not None:
        values: dict[str, float | None] = dict(out)
        if compiled.composite_latency is not None:
            values["latency"] = m.latency_component(out["latency_p95_ms"],
                                                    compiled.composite_latency)
        out["composite"] = m.composite(values, compiled.composite_weights)
    out.update((k, v) for k, v in rates.items() if k.startswith("pass_rate."))
    return out


def rounded(metrics: Metrics) -> Metrics:
    """The suite metrics as results.json holds them: floats rounded to 6 decimals."""
    return {key: _round(value) if isinstance(value, float) else value
            for key, value in metrics.items()}


# the metrics made of a figure some traces may not have recorded (a composite weighing
# latency too): computed over those that did
_PARTIAL = {"latency_p95_ms": "latency_ms", "token_efficiency": "total_tokens"}


def partial_bounds(metrics: Metrics, views: list[_View], compiled: CompiledScenarios
                   ) -> dict[str, float]:
    """The largest value ``composite`` (weighing latency) and ``token_efficiency`` can
    have when some scenario traces did not record their latency or tokens: those taken
    as 0, the smallest they can be. A ``min`` criterion this misses is missed whatever
    they were, as a ``max_latency_p95_ms`` the recorded latencies already miss."""
    out: dict[str, float] = {}
    weights, scale = compiled.composite_weights, compiled.composite_latency
    missing = sum(v.unknown.get("latency_ms", 0) for v in views)
    if missing and weights is not None and scale is not None:
        known: list[float] = []
        for v in views:
            known.extend(v.latencies)
        values: dict[str, float | None] = dict(metrics)
        values["latency"] = m.latency_component(
            m.percentile_nearest_rank(known + [0.0] * missing, 95), scale)
        best = m.composite(values, weights)
        if best is not None:
            out["composite"] = best
    missing = sum(v.unknown.get("total_tokens", 0) for v in views)
    mean_score = metrics.get("mean_score")
    if missing and mean_score is not None:
        tokens = [t for v in views for t in v.tokens]
        total = math.fsum(tokens)
        if total > 0:
            out["token_efficiency"] = mean_score / (total / (len(tokens) + missing)) * 1000
    return out


def evaluate_criterion(c: Criterion, metrics: Metrics, views: list[_View], *,
                       latency_weighted: bool = False,
                       bounds: dict[str, float] | None = None) -> CriterionResult:
    """One criterion entry of the results (docs/scenarios.md "Pass criteria").
    ``latency_weighted``: the composite weighs latency; ``bounds``: the largest values of
    the metrics some traces did not record the figures of (:func:`partial_bounds`)."""
    key = f"{CRITERION_RULES[c.kind].id}|{c.ref.file}#{c.ref.key_path}|||{c.name}"
    fingerprint = hashlib.sha256(key.encode()).hexdigest()[:32]

    def entry(status: str, message: str, value: float | str | None = None
              ) -> CriterionResult:
        return CriterionResult(c.name, c.kind, c.metric, c.threshold, value, status,
                               message, c.ref, fingerprint)

    if c.kind == "required":
        sid = c.name.split(":", 1)[1]
        view = next(v for v in views if v.sc.id == sid)
        if not view.ok:
            return entry("fail", f"required scenario {sid} did not pass (status "
                         f"{view.status})", view.status)
        return entry("pass", f"required scenario {sid} passed", view.status)
    if c.kind == "regression":
        return entry("skip", f"{c.name} skipped: no baseline")
    value = metrics.get(c.metric)
    assert c.threshold is not None
    shown = f"{c.name}: {render(c.threshold)}"
    best = (bounds or {}).get(c.metric)
    if value is None:
        if c.op == "min" and best is not None and not m.at_least(best, c.threshold):
            # no trace recorded latency, but with every one 0 the composite still misses
            return entry("warn" if c.kind == "warning" else "fail",
                         f"{c.metric} = at most {_num(best)} < {_num(c.threshold)} (latency "
                         f"not recorded by any of {sum(v.traces for v in views)} scenario "
                         f"trace(s), taken as 0) ({c.kind} criterion {c.name} missed)")
        return entry("warn", f"{c.metric} is unknown (not recorded), so {shown} cannot be "
                     "checked")
    figure = _PARTIAL.get(c.metric)
    if c.kind == "composite" and latency_weighted:
        figure = "latency_ms"  # its latency component: latency_p95_ms
    missing = 0 if figure is None else sum(v.unknown.get(figure, 0) for v in views)
    if figure is not None and missing:
        # computed over the traces that recorded the figure only: the others' could be
        # anything, so the criterion cannot be told from it (never a pass) ...
        total = sum(v.traces for v in views)
        what = UNRECORDED[figure]
        note = (f"{what} not recorded by {missing} of {total} scenario trace(s), so "
                f"{c.metric} = {_num(value)} over the others")
        if c.metric == "latency_p95_ms" and c.op == "max":
            # ... unless those that recorded it already miss it: taken as 0, the others
            # give the smallest p95 there can be
            known = array("d")
            for v in views:
                known.extend(v.latencies)
            floor = m.percentile_nearest_rank(list(known) + [0.0] * missing, 95)
            if floor is not None and not m.at_most(floor, c.threshold):
                return entry("warn" if c.kind == "warning" else "fail",
                             f"{c.metric} = at least {_num(floor)} > {_num(c.threshold)} "
                             f"({what} not recorded by {missing} of {total} scenario "
                             f"trace(s), taken as 0) ({c.kind} criterion {c.name} missed)",
                             _round(value))
        if c.op == "min" and best is not None and not m.at_least(best, c.threshold):
            # ... or when, those taken as 0, it is still below its minimum
            return entry("warn" if c.kind == "warning" else "fail",
                         f"{c.metric} = at most {_num(best)} < {_num(c.threshold)} "
                         f"({what} not recorded by {missing} of {total} scenario "
                         f"trace(s), taken as 0) ({c.kind} criterion {c.name} missed)",
                         _round(value))
        return entry("warn", f"{note}: {shown} cannot be checked", _round(value))
    ok = m.at_least(value, c.threshold) if c.op == "min" else m.at_most(value, c.threshold)
    relation = (">=" if c.op == "min" else "<=") if ok else ("<" if c.op == "min" else ">")
    shown_value, shown_threshold = _num(value), _num(c.threshold)
    if not ok and shown_value == shown_threshold:  # apart beyond 4 decimals: show them
        shown_value, shown_threshold = repr(float(value)), repr(float(c.threshold))
    label = f"{c.metric} = {shown_value} {relation} {shown_threshold}"
    if ok:
        return entry("pass", label, _round(value))
    return entry("warn" if c.kind == "warning" else "fail",
                 f"{label} ({c.kind} criterion {c.name} missed)", _round(value))
