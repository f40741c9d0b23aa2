"""Human output, one block per failed check (``❌ FAIL: args_valid`` / Tool / Argument /
Violation), with colour only when asked for (a TTY without ``NO_COLOR``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent_eval.findings import SEVERITIES, Finding, severity_rank
from agent_eval.jsonutil import json_type
from agent_eval.results import (
    Results,
    TestResult,
    blocking_checks,
    missing_trace_only,
    partial_note,
)
from agent_eval.rule_ids import TOOL_BLOCKLIST, group
from agent_eval.safetext import one_line
from agent_eval.sections import ScenarioResult

SHOWN_PER_TEST = 20
_ICON = {"pass": "✅ PASS", "warn": "⚠️  WARN", "fail": "❌ FAIL", "error": "💥 ERROR",
         "not_exercised": "➖ NOT EXERCISED"}
_COLOR = {"pass": "32", "warn": "33", "fail": "31", "error": "31", "not_exercised": "36"}


def _paint(text: str, code: str, color: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if color else text


def _shown(found: Iterable[Finding]) -> list[Finding]:
    """The :data:`SHOWN_PER_TEST` findings a block shows: the most severe first, each
    severity in its order (docs/outputs.md). One walk holding at most that many of each
    severity: a test's violations may be on disk, and the first 20 in trace order
    showed 20 notes of a block whose warning or error made the verdict."""
    kept: dict[int, list[Finding]] = {}
    for v in found:
        rank = severity_rank(v.severity)
        bucket = kept.setdefault(rank, [])
        if len(bucket) < SHOWN_PER_TEST:
            bucket.append(v)
            if rank == 0 and len(bucket) == SHOWN_PER_TEST:
                break  # 20 errors: nothing after them is shown
    return [v for rank in sorted(kept) for v in kept[rank]][:SHOWN_PER_TEST]


def _value(v: Finding) -> str:
    import orjson

    if v.value is None and json_type(v.value) == "null" and v.argument is not None:
        return "(missing)"
    try:
        return orjson.dumps(v.value).decode()
    except TypeError:
        return repr(v.value)


def _finding_lines(v: Finding) -> list[str]:
    lines: list[str] = []
    d = v.details
    if group(v.rule) == "sequence_valid" and "/" in v.rule:
        lines.append(f"Rule: {v.rule.split('/', 1)[1]}")
        lines.append(f"Expected: {d.get('expected', '')}")
        lines.append(f"Actual: {d.get('actual', '')}")
    elif v.rule == TOOL_BLOCKLIST.id:
        lines.append("Violation: Blocked tool called")
        lines.append(f"Tool: {v.tool}")
        lines.append(f"Policy: Blocklist includes '{d.get('pattern', '')}'")
        lines.append(f"Calls found: {d.get('calls', 1)}")
    else:
        if v.tool is not None:
            lines.append(f"Tool: {v.tool}")
        if v.argument is not None:
            lines.append(f"Argument: {v.argument} = {_value(v)}")
        shown = f" ({v.constraint})" if v.constraint else ""
        lines.append(f"Violation: {d.get('violation', v.message)}{shown}")
    c = v.config
    lines.append(f"Rule id: {v.rule}   at {c.file}:{c.line}:{c.col}")
    if v.trace is not None:
        lines.append(f"Trace: {v.trace.file}:{v.trace.line} (trace {v.trace.trace_id})")
    return lines


def _test_block(t: TestResult, color: bool) -> list[str]:
    head = _paint(f"{_ICON[t.status]}: {t.id}", _COLOR[t.status], color)
    if not t.violations:
        note = "no traces checked" if t.status == "error" else f"{t.traces_checked} traces"
        if t.status == "not_exercised":
            note += "; no call to a tool it names was made"
        return [f"{head}  ({note})"]
    out = [f"{head}  ({len(t.violations)} violation(s) in {t.traces_failed} of "
           f"{t.traces_checked} traces)", ""]
    for v in _shown(t.violations):
        out.extend("   " + line for line in _finding_lines(v))
        out.append("")
    more = len(t.violations) - SHOWN_PER_TEST
    if more > 0:
        out.append(f"   … {more} more violation(s) not shown; all are in results.json")
        out.append("")
    return out


def _short_lines(v: Finding) -> list[str]:
    """A finding that is not a rule test's: its message, rule id and locations."""
    cfg = v.config
    out = [f"   Violation: {v.message}" if v.severity != "note" else f"   Note: {v.message}",
           f"   Rule id: {v.rule}   at {cfg.file}:{cfg.line}:{cfg.col}"]
    if v.trace is not None:
        out.append(f"   Trace: {v.trace.file}:{v.trace.line} (trace {v.trace.trace_id})")
    out.append("")
    return out


def _listed(found: list[Finding], what: str = "finding") -> list[str]:
    out: list[str] = []
    for v in _shown(found):
        out.extend(_short_lines(v))
    if len(found) > SHOWN_PER_TEST:
        out.append(f"   … {len(found) - SHOWN_PER_TEST} more {what}(s) not shown; all are in "
                   "results.json")
        out.append("")
    return out


def _scenario_block(s: ScenarioResult, color: bool) -> list[str]:
    status = s.status
    tags = [str(t) for t in (s.category, "required" if s.required else None,
                             "advisory" if s.gate == "warn" else None) if t]
    label = f" [{', '.join(tags)}]" if tags else ""
    head = _paint(f"{_ICON.get(status, status)}: scenario {s.id}{label}",
                  _COLOR.get(status, "0"), color)
    total = s.traces_total
    facts = [] if s.score is None else [f"score {float(s.score):.1f}"]
    facts.append(f"{s.traces_passed}/{total} trace(s) passed" if total else "no trace")
    found = list(s.findings)
    if not found:
        return [f"{head}  ({' · '.join(facts)})"]
    return [f"{head}  ({' · '.join(facts)})", "", *_listed(found)]


def _other_block(found: list[Finding], color: bool) -> list[str]:
    """Findings of no test, scenario or criterion (e.g. rules no call exercised)."""
    worst = "fail" if any(v.severity == "error" for v in found) else (
        "warn" if any(v.severity == "warning" for v in found) else "pass")
    head = _paint(f"Other findings ({len(found)})", _COLOR[worst], color)
    return [head, "", *_listed(found)]


def _number(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.4f}".rstrip("0").rstrip(".") or "0"
    return "unknown" if x is None else str(x)


SUITE_METRICS = ("pass_rate", "weighted_pass_rate", "accuracy", "tool_precision",
                 "tool_recall", "safety_rate", "behavior_coverage", "latency_p95_ms",
                 "token_efficiency", "composite")


def _suite_lines(results: Results, color: bool) -> list[str]:
    m = results.metrics
    out: list[str] = []
    if m:
        shown = [f"{k} {_number(m[k])}" for k in SUITE_METRICS if k in m]
        shown += [f"{k} {_number(v)}" for k, v in m.items() if k.startswith("pass_rate.")]
        out.append(f"Scenarios: {m.get('scenarios_passed', 0)} of {m.get('scenarios', 0)} "
                   "passed")
        out.append("Suite metrics: " + " · ".join(shown))
        out.append("")
    if results.criteria:
        out.append("Criteria:")
        for c in results.criteria:
            status = c.status
            icon = {"skip": "⏭️  SKIP"}.get(status) or _ICON.get(status, status)
            cfg = c.config
            where = (f"   [criteria/{c.kind} at {cfg.file}:{cfg.line}:{cfg.col}]"
                     if status in ("fail", "warn") else "")
            out.append("   " + _paint(f"{icon}", _COLOR.get(status, "0"), color)
                       + f"  {c.name} ({c.kind}): {c.message}{where}")
        out.append("")
    return out


def render(results: Results, color: bool = False) -> str:
    c = results.counts
    out = [f"agent-eval {results.tool_version} · suite {results.suite} · {c['traces']} "
           f"trace(s), {c['tool_calls']} tool call(s)"]
    if results.formats:
        kinds: dict[str, int] = {}
        for fmt in results.formats.values():
            kinds[fmt] = kinds.get(fmt, 0) + 1
        out.append("read " + ", ".join(f"{n} {fmt} file(s)" for fmt, n in sorted(kinds.items())))
    out.append("")
    for t in results.tests:
        out.extend(_test_block(t, color))
    for s in results.scenarios:
        out.extend(_scenario_block(s, color))
    if results.scenarios and out[-1] != "":
        out.append("")
    out.extend(_suite_lines(results, color))
    other = results.other_findings
    if other:
        out.extend(_other_block(other, color))
    if results.judge:  # how the run judged and what judging cost
        from agent_eval.renderers._judge import summary_line  # (start-up time: judge runs only)

        out.extend([f"{summary_line(results)}", ""])
    errors = results.input_errors
    if errors:
        out.append(_paint(f"💥 INPUT ERRORS ({len(errors)})", "31", color))
        for e in errors[:SHOWN_PER_TEST]:
            out.append(f"   {e}  [{e.rule}]")
        if len(errors) > SHOWN_PER_TEST:
            out.append(f"   … {len(errors) - SHOWN_PER_TEST} more; all are in results.json")
        out.append("")
    if results.ignored_events:
        total = sum(results.ignored_events.values())
        out.append(f"note: {total} event(s) of unknown type ignored in "
                   f"{len(results.ignored_events)} file(s)")
    out.append(verdict_line(results, color))
    partial = partial_note(results)
    if partial is not None:  # a shard's pass is not the run's
        out.append(f"note: {partial}")
    if not blocking_checks(results):
        out.append(NOTHING_BLOCKING_BUT_MISSING if missing_trace_only(results)
                   else NOTHING_BLOCKING)
    # each item is one line: a line break or control character left in a message, a name
    # or an id is written \xNN, so no text starts a line of its own (docs/security.md)
    return "".join(f"{one_line(line, colour=color)}\n" for line in out)


NOTHING_BLOCKING = ("note: nothing in this suite can fail the run: no test has severity "
                    "error, every scenario is advisory (gate: warn) and no blocking criterion "
                    "is set; the verdict can only be pass, warn or error")
# ... when some scenario is not advisory but takes any share of failed traces
NOTHING_BLOCKING_BUT_MISSING = (
    "note: nothing in this suite can fail the run but a missing trace: no test has severity "
    "error, every scenario is advisory (gate: warn) or accepts any share of failed traces "
    "(min_pass_ratio: 0) and no blocking criterion is set; a scenario with min_pass_ratio: 0 "
    "still fails the run when no trace of it is found (or a judge check of its traces could "
    "not be made)")


def _n(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def verdict_line(results: Results, color: bool = False) -> str:
    """``Verdict: FAIL · 10 rule violations, 14 scenario findings, 5 criteria findings
    (24 error, 2 warning, 3 note) · 0 input errors``: every finding counted."""
    verdict = _paint(results.verdict.upper(), _COLOR[results.verdict], color)
    return f"Verdict: {verdict} · {finding_counts(results)}"


def quiet_line(results: Results) -> str:
    """The one line of ``--quiet``: ``fail: <the counts> in 10 trace(s)``."""
    shard = ("" if results.shard is None
             else f" (shard {results.shard.index}/{results.shard.count} only)")
    return one_line(f"{results.verdict}: {finding_counts(results)} in "
                    f"{_n(results.counts.get('traces', 0), 'trace')}{shard}")


def finding_counts(results: Results) -> str:
    """Every finding counted by kind and by severity, and the input errors."""
    kinds: list[tuple[int, str]] = [
        (len(results.violations), "rule violation"),
        (len(results.scenario_findings), "scenario finding"),
        (len(results.criteria_findings), "criteria finding")]
    others: dict[str, int] = {}
    for v in results.other_findings:
        kind = v.rule.split("/", 1)[0]
        others[kind] = others.get(kind, 0) + 1
    if "scenario" in others:  # a scenario/unknown_id warning: one of the scenario findings
        kinds[1] = (kinds[1][0] + others.pop("scenario"), kinds[1][1])
    kinds += [(n, f"{kind} finding") for kind, n in sorted(others.items())]
    parts = [_n(n, what) for n, what in kinds if n or what == "rule violation"]
    by_sev: dict[str, int] = {}
    for v in results.findings:
        by_sev[v.severity] = by_sev.get(v.severity, 0) + 1
    sev = ", ".join(f"{by_sev[s]} {s}" for s in SEVERITIES if s in by_sev)
    errors = results.counts.get("input_errors", len(results.input_errors))
    return f"{', '.join(parts)}{f' ({sev})' if sev else ''} · {_n(errors, 'input error')}"


def render_plain(results: Results, ctx: object = None) -> str:
    return render(results, color=False)
