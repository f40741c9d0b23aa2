"""Human output in the seed's style (``❌ FAIL: args_valid`` / Tool / Argument /
Violation), with colour only when asked for (a TTY without ``NO_COLOR``)."""

from __future__ import annotations

from agent_eval.findings import Finding
from agent_eval.jsonutil import json_type
from agent_eval.results import Results, TestResult

SHOWN_PER_TEST = 20
_ICON = {"pass": "✅ PASS", "warn": "⚠️  WARN", "fail": "❌ FAIL", "error": "💥 ERROR"}
_COLOR = {"pass": "32", "warn": "33", "fail": "31", "error": "31"}


def _paint(text: str, code: str, color: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if color else text


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
    if v.rule.startswith("sequence_valid/"):
        lines.append(f"Rule: {v.rule.split('/', 1)[1]}")
        lines.append(f"Expected: {d.get('expected', '')}")
        lines.append(f"Actual: {d.get('actual', '')}")
    elif v.rule == "tool_blocklist":
        lines.append("Violation: Blocked tool called")
        lines.append(f"Tool: {v.tool}")
        lines.append(f"Policy: Blocklist includes '{d.get('pattern', '')}'")
        lines.append(f"Calls found: {d.get('calls', 1)}")
    else:
        lines.append(f"Tool: {v.tool}")
        if v.argument is not None:
            lines.append(f"Argument: {v.argument} = {_value(v)}")
        lines.append(f"Violation: {d.get('violation', v.message)} ({v.constraint})")
    c = v.config
    lines.append(f"Rule id: {v.rule}   at {c.file}:{c.line}:{c.col}")
    if v.trace is not None:
        lines.append(f"Trace: {v.trace.file}:{v.trace.line} (trace {v.trace.trace_id})")
    return lines


def _test_block(t: TestResult, color: bool) -> list[str]:
    head = _paint(f"{_ICON[t.status]}: {t.id}", _COLOR[t.status], color)
    if not t.violations:
        note = "no traces checked" if t.status == "error" else f"{t.traces_checked} traces"
        return [f"{head}  ({note})"]
    out = [f"{head}  ({len(t.violations)} violation(s) in {t.traces_failed} of "
           f"{t.traces_checked} traces)", ""]
    for v in t.violations[:SHOWN_PER_TEST]:
        out.extend("   " + line for line in _finding_lines(v))
        out.append("")
    more = len(t.violations) - SHOWN_PER_TEST
    if more > 0:
        out.append(f"   … {more} more violation(s) not shown; all are in results.json")
        out.append("")
    return out


def render(results: Results, color: bool = False) -> str:
    c = results.counts
    out = [f"agent-eval {results.tool_version} · suite {results.suite} · {c['traces']} "
           f"trace(s), {c['tool_calls']} tool call(s)", ""]
    for t in results.tests:
        out.extend(_test_block(t, color))
    errors = [e for e in results.input_errors]
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
    by_sev: dict[str, int] = {}
    for v in results.violations:
        by_sev[v.severity] = by_sev.get(v.severity, 0) + 1
    sev = ", ".join(f"{n} {s}" for s, n in sorted(by_sev.items()))
    verdict = _paint(results.verdict.upper(), _COLOR[results.verdict], color)
    out.append(f"Verdict: {verdict} · {c['violations']} violation(s)"
               f"{f' ({sev})' if sev else ''} · {c['input_errors']} input error(s)")
    return "\n".join(out) + "\n"


def render_plain(results: Results, ctx: object = None) -> str:
    return render(results, color=False)
