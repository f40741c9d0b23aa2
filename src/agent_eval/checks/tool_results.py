"""tool_results: what recorded tool calls returned — result, error message, latency.

The recorded counterpart of a tool probe (docs/mcp.md "Recorded sessions"): for every call
of a listed tool (optionally only those whose arguments include ``args``), the result must
pass ``expect_result``, or the call must fail with a message passing ``expect_error`` (with
``expect_error: false``, must not fail), and it must have answered within ``max_latency_ms``
(from the trace's timestamps or recorded latency); an entry that checks none of these is a
config error. A check whose input the trace did not record (no result, no latency) is a
``tool_results/not_recorded`` finding, never a pass.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from pydantic import Field

from agent_eval.checks._text import show_value, unjudged
from agent_eval.checks.base import CheckCore, CheckSpec, CompileContext
from agent_eval.config.models import Strict, TestBase, ToolPatterns
from agent_eval.config.schema_compiler import json_key, render
from agent_eval.config.schema_files import compile_schema
from agent_eval.coverage import ToolRef
from agent_eval.errors import ConfigError
from agent_eval.findings import ConfigRef, Finding, TraceRef
from agent_eval.jsonutil import json_type
from agent_eval.live.checks import check_text
from agent_eval.live.compile import UNSET, TextCheck, text_checks
from agent_eval.live.models import TextExpect
from agent_eval.matching import NameIndex, ToolMatcher
from agent_eval.model import ToolCall, Trace
from agent_eval.rule_ids import (
    TOOL_RESULTS_ERROR,
    TOOL_RESULTS_LATENCY,
    TOOL_RESULTS_NOT_RECORDED,
    TOOL_RESULTS_RESULT,
    Rule,
)
from agent_eval.selectors import Spelled, a_type, literal_type

RULES = tuple(r.id for r in (TOOL_RESULTS_RESULT, TOOL_RESULTS_ERROR, TOOL_RESULTS_LATENCY,
                             TOOL_RESULTS_NOT_RECORDED))


class CallExpect(Strict):
    tool: ToolPatterns = Field(description="The tool (name, glob, or a list: any of).")
    args: dict[str, Any] | None = Field(
        None, description="Only calls whose arguments include these (equal JSON values).")
    expect_result: TextExpect | None = Field(
        None, description="Checks of the result (text, or structured content).")
    expect_error: bool | TextExpect | None = Field(
        None, description="The call must fail; with checks, its error message must match "
        "them. false: the call must not fail.")
    max_latency_ms: float | None = Field(None, ge=0, description="Each call answered within "
                                         "this time.")


class ToolResultsTest(TestBase):
    metric: Literal["tool_results"]
    calls: list[CallExpect] = Field(min_length=1, description="Expectations per tool.")


@dataclass(frozen=True, slots=True)
class _Compiled:
    matcher: ToolMatcher
    args: dict[str, Any] | None
    # each of `args` as compared: its name, its json_key and what another type spells it
    # as (literal_type), worked out once, not per call
    wants: tuple[tuple[str, Any, Spelled | None], ...] | None
    result: tuple[TextCheck, ...]
    error: tuple[TextCheck, ...] | None  # None: no error expected
    must_succeed: bool  # expect_error: false: a failed call is a finding
    error_ref: ConfigRef | None  # the entry's `expect_error:` key
    latency: float | None
    latency_ref: ConfigRef | None
    ref: ConfigRef  # the entry's `tool:` key
    args_ref: ConfigRef | None  # the entry's `args:` key


class ToolResults(CheckCore):
    metric = "tool_results"

    def __init__(self, cfg: ToolResultsTest, entries: list[_Compiled],
                 tool_refs: tuple[ToolRef, ...]) -> None:
        super().__init__(cfg, tool_refs)
        self.entries = tuple(entries)
        self._named = NameIndex([e.matcher for e in self.entries])  # tried together

    def touches(self, name: str) -> bool:
        return self._named.matches(name)

    def findings(self, trace: Trace) -> Iterator[Finding]:
        for call in trace.tool_calls:
            for e in self.entries:
                if e.matcher(call.name):
                    selected = _args_match(call, e.wants)
                    if selected is True:
                        yield from self._check(e, call, trace)
                    elif selected is None or type(selected) is str:
                        yield self._unjudged(e, call, trace, selected)

    def _unjudged(self, e: _Compiled, call: ToolCall, trace: Trace,
                  key: str | None = None) -> Finding:
        """A call of the entry's tool whose arguments cannot tell whether ``args`` selects
        it (not recorded, not a JSON object; or its argument ``key`` is of another JSON
        type that spells the value ``args`` wants, ``"900"`` for ``900``): its
        expectations were not checked, and that is never a pass."""
        assert e.args_ref is not None and e.args is not None
        if key is None:
            why, violation = unjudged(call)
        else:
            got, want = call.arguments[key], e.args[key]
            why = (f"argument '{key}' is {a_type(json_type(got))} ({show_value(got)}), which "
                   f"spells {render(want)} in another JSON type")
            spelled = literal_type(want)  # (as the selectors name the type: "a number")
            wanted = spelled.text if spelled is not None else a_type(json_type(want))
            violation = f"Argument '{key}' is {a_type(json_type(got))}, not {wanted}"
        loc = call.location
        return Finding(rule=TOOL_RESULTS_NOT_RECORDED.id, severity=self.severity,
                       message=f"{call.name}: the call's {why}, so whether args: "
                       f"{render(e.args)} selects it cannot be told; its expectations were "
                       "not checked", test=self.id, config=e.args_ref,
                       trace=TraceRef(loc.file, loc.line, trace.id), tool=call.name,
                       constraint=f"args: {render(e.args)}", scenario=trace.scenario,
                       details={"violation": violation})

    def _check(self, e: _Compiled, call: ToolCall, trace: Trace) -> list[Finding]:
        found: list[tuple[Rule, ConfigRef, str, str | None, Any]] = []
        if (e.result or e.error is not None or e.must_succeed) and not call.has_result and \
                call.ok:  # whether it failed is not known either
            found.append((TOOL_RESULTS_NOT_RECORDED, e.ref, f"the result of {call.name} "
                          "was not recorded, so it cannot be checked", None, None))
        elif e.error is not None:
            assert e.error_ref is not None
            if call.ok:
                found.append((TOOL_RESULTS_ERROR, e.error_ref, f"{call.name} succeeded, "
                              "but an error was expected", "expect_error", None))
            else:
                for c, why in check_text(e.error, call.error or "", None,
                                         "the error message"):
                    found.append((TOOL_RESULTS_ERROR, c.ref, f"{call.name} failed as "
                                  f"expected, but {why}", c.shown, call.error))
        elif e.must_succeed:
            assert e.error_ref is not None
            if not call.ok:
                found.append((TOOL_RESULTS_ERROR, e.error_ref, f"{call.name} failed "
                              f"({call.error}), but no error was expected",
                              "expect_error: false", call.error))
        elif e.result:
            if not call.ok:
                found.append((TOOL_RESULTS_RESULT, e.result[0].ref, f"{call.name} failed "
                              f"({call.error}), so its result cannot be checked", None,
                              call.error))
            else:
                text, structured = _text(call.result)
                for c, why in check_text(e.result, text, structured):
                    found.append((TOOL_RESULTS_RESULT, c.ref, f"{call.name}: {why}",
                                  c.shown, text[:200]))
        if e.latency is not None:
            assert e.latency_ref is not None
            if call.latency_ms is None:
                found.append((TOOL_RESULTS_NOT_RECORDED, e.latency_ref, f"the latency of "
                              f"{call.name} was not recorded (no timestamps on the call and "
                              "its result)", f"max_latency_ms: {e.latency:g}", None))
            elif call.latency_ms > e.latency:
                found.append((TOOL_RESULTS_LATENCY, e.latency_ref, f"{call.name} took "
                              f"{call.latency_ms:g} ms, more than max_latency_ms "
                              f"{e.latency:g}", f"max_latency_ms: {e.latency:g}",
                              call.latency_ms))
        loc = call.result_location or call.location
        return [Finding(rule=rule.id, severity=self.severity, message=msg, test=self.id,
                        config=ref, trace=TraceRef(loc.file, loc.line, trace.id),
                        tool=call.name, value=value, constraint=constraint,
                        scenario=trace.scenario)
                for rule, ref, msg, constraint, value in found]


def _args_match(call: ToolCall, wanted: tuple[tuple[str, Any, Spelled | None], ...] | None
                ) -> bool | str | None:
    """Whether the entry's ``args`` select the call (by JSON equality); None when its
    arguments cannot tell (not recorded, or recorded but not a JSON object: ``null`` is no
    arguments); the name of an argument of another JSON type that spells the wanted value
    (``"900"`` for ``900``, ``"true"`` or ``1`` for ``true``) when every other one
    matches: whether a tool that coerces its arguments took it so is unknown."""
    if wanted is None:
        return True
    arguments = call.arguments
    if not call.arguments_recorded or call.arguments_error is not None:
        return None
    if not isinstance(arguments, dict):
        return None if arguments is not None else False
    spelled: str | None = None  # (an argument may be named "")
    for key, want, implied in wanted:
        if key not in arguments:
            return False
        got = arguments[key]
        if json_key(got) == want:  # JSON equality: 1 == 1.0, true != 1
            continue
        if implied is None or implied.fits(got):
            return False
        if spelled is None:
            spelled = key  # "900" for 900: what a coercing tool took, unknown
    return True if spelled is None else spelled


def _text(result: Any) -> tuple[str, Any]:
    if isinstance(result, str):
        return result, None
    return orjson.dumps(result, option=orjson.OPT_SORT_KEYS).decode(), result


def compile_test(cfg: ToolResultsTest, ctx: CompileContext) -> ToolResults:
    problems: list[str] = []
    entries = []
    for i, e in enumerate(cfg.calls):
        base = ("calls", i)

        def problem(kind: str, msg: str, keys: tuple[str, ...] = (),
                    base: tuple[str, int] = base) -> None:
            pos = ctx.positions.get((*ctx.path, *base, *keys, kind))
            problems.append(f"{ctx.file}:{pos.line}:{pos.col}: {msg}")

        def schema(keys: tuple[str, ...]) -> Any:
            def build(kind: str, value: Any) -> tuple[Any, str]:
                if isinstance(value, str):
                    problem(kind, "json_schema here must be an inline schema (a mapping); a "
                            "schema file works in probes and scenarios", keys)
                    return None, value
                return compile_schema(value, "inline",
                                      lambda msg: problem(kind, msg, keys)), "inline"
            return build

        def checks(expect: TextExpect, key: str,
                   base: tuple[str, int] = base) -> tuple[TextCheck, ...]:
            return text_checks(expect, lambda kind: ctx.ref(*base, key, kind),
                               lambda kind, msg: problem(kind, msg, (key,)), schema((key,)))

        for key in ("expect_result", "expect_error", "max_latency_ms"):
            if key in e.model_fields_set and getattr(e, key) is None:  # read as not written
                problem(key, f"'{key}' {UNSET}")
        result = checks(e.expect_result, "expect_result") if e.expect_result else ()
        error: tuple[TextCheck, ...] | None = None
        if e.expect_error is not None and e.expect_error is not False:
            error = checks(e.expect_error, "expect_error") if isinstance(
                e.expect_error, TextExpect) else ()
        if e.expect_error is not None and e.expect_result is not None:
            problem("expect_error", "give expect_result or expect_error, not both")
        if e.expect_error is None and e.expect_result is None and e.max_latency_ms is None:
            # a call of its tool would be checked against nothing: a pass whatever it did
            problem("tool", "this entry checks nothing: give expect_result, expect_error "
                    "(false: the call must not fail) or max_latency_ms")
        try:
            matcher = ctx.tool_matcher(e.tool, *base, "tool")
        except ConfigError as exc:  # an unknown @group
            problems.extend(exc.problems)
            continue
        word = ctx.positions.misread((*ctx.path, *base, "args"))  # state: off
        if word is not None:
            problems.append(word)
        wants = None if e.args is None else tuple(
            (key, json_key(want), literal_type(want)) for key, want in e.args.items())
        entries.append(_Compiled(
            matcher, e.args, wants, result, error, e.expect_error is False,
            ctx.ref(*base, "expect_error") if e.expect_error is not None else None,
            e.max_latency_ms,
            ctx.ref(*base, "max_latency_ms") if e.max_latency_ms is not None else None,
            ctx.ref(*base, "tool"), ctx.ref(*base, "args") if e.args is not None else None))
    if problems:
        raise ConfigError(problems)
    refs = [r for i, e in enumerate(cfg.calls)
            for r in ctx.tool_refs(e.tool, "tool_results entry", "calls", i, "tool",
                                   effect="its expectations were never checked")]
    return ToolResults(cfg, entries, tuple(refs))


SPEC = CheckSpec("tool_results", ToolResultsTest, compile_test, RULES)
