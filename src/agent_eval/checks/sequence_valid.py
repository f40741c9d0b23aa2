"""sequence_valid: ordering rules over the trace's tool calls (docs/config.md "sequence_valid").

Rules are ANDed; each reports its own violations. Every tool field takes selectors
(selectors.py: names, globs, @groups and {tool, args} selectors; a list is "any of").
Each rule is one pass over the calls; argument conditions are evaluated only for calls
whose name matched. A call whose arguments are not a JSON object (not recorded, not
decodable) cannot be judged by a selector's argument conditions, nor can a call whose
argument is of a JSON type a condition does not constrain ("900" for {min: 500}): the rule
takes it as not selected, and reports it as ``sequence_valid/not_recorded`` (a warning),
``sequence_valid/not_an_object`` or ``sequence_valid/wrong_type`` (errors), as args_valid
does: never a pass.
"""

import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress, islice
from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator

from agent_eval.checks._text import tools_text, unjudged
from agent_eval.checks.base import CheckCore, CheckSpec, CompileContext
from agent_eval.config.models import Selectors, Strict, TestBase
from agent_eval.coverage import VACUOUS, ToolRef
from agent_eval.errors import ConfigError
from agent_eval.findings import ConfigRef, Finding, Severity, TraceRef
from agent_eval.matching import NameIndex
from agent_eval.model import Location, ToolCall, Trace, call_names
from agent_eval.rule_ids import (
    SEQUENCE_VALID_NOT_AN_OBJECT,
    SEQUENCE_VALID_NOT_RECORDED,
    SEQUENCE_VALID_WRONG_TYPE,
    Rule,
    member,
)
from agent_eval.selectors import Selector

ToolPatterns = Selectors


class _Rule(Strict):
    description: str | None = None


class RequireRule(_Rule):
    type: Literal["require"]
    tool: ToolPatterns | None = None
    tools: ToolPatterns | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.tool is None) == (self.tools is None):
            raise ValueError("give exactly one of 'tool' or 'tools'")
        return self


class BeforeRule(_Rule):
    type: Literal["before"]
    first: ToolPatterns
    then: ToolPatterns


class ImmediatelyBeforeRule(_Rule):
    type: Literal["immediately_before"]
    first: ToolPatterns
    then: ToolPatterns


class AfterRule(_Rule):
    type: Literal["after"]
    tool: ToolPatterns
    then: ToolPatterns
    within: int | None = Field(None, ge=1, description="The then call must come within N calls.")


class NeverAfterRule(_Rule):
    type: Literal["never_after"]
    first: ToolPatterns
    then: ToolPatterns


class BlocklistRule(_Rule):
    type: Literal["blocklist"]
    tools: ToolPatterns


class AllowlistRule(_Rule):
    type: Literal["allowlist"]
    tools: ToolPatterns


class CountRule(_Rule):
    type: Literal["count"]
    tool: ToolPatterns
    min: int | None = Field(None, ge=0)
    max: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> Self:
        if self.min is None and self.max is None:
            raise ValueError("give 'min', 'max' or both")
        if self.min == 0 and self.max is None:  # every trace calls a tool 0 times or more
            raise ValueError("'min: 0' alone can never fail (every trace calls a tool 0 "
                             "or more times); give 'min' of 1 or more, or a 'max'")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        return self


class EventuallyRule(_Rule):
    type: Literal["eventually"]
    tool: ToolPatterns
    within: int = Field(ge=1, description="The tool must be among the first N calls.")


class SequenceRule(_Rule):
    type: Literal["sequence"]
    tools: list[ToolPatterns] = Field(
        min_length=1, description="The steps, in order; each a selector (or a list: any of).")
    strict: bool = Field(False, description="true: once the first step is called, the "
                         "others must follow back to back.")


AnyRule = Annotated[
    RequireRule | BeforeRule | ImmediatelyBeforeRule | AfterRule | NeverAfterRule
    | BlocklistRule | AllowlistRule | CountRule | EventuallyRule | SequenceRule,
    Field(discriminator="type"),
]


class SequenceValidTest(TestBase):
    metric: Literal["sequence_valid"]
    rules: list[AnyRule] = Field(min_length=1)


# ------------------------------------------------------------------------- running
@dataclass(frozen=True, slots=True)
class _Emit:
    """Builds the findings of one rule."""

    test: str
    severity: Severity
    rule: str
    ref: ConfigRef

    def __call__(self, trace: Trace, where: Location, message: str, tool: str | None,
                 expected: str, actual: str, ref: ConfigRef | None = None) -> Finding:
        return Finding(
            rule=self.rule,
            severity=self.severity,
            message=message,
            test=self.test,
            config=ref or self.ref,
            trace=TraceRef(where.file, where.line, trace.id),
            tool=tool,
            constraint=self.rule.split("/", 1)[1],
            scenario=trace.scenario,
            details={"expected": expected, "actual": actual},
        )


def _true(flags: bytearray, value: bool = True) -> Iterable[int]:
    """The indexes of the flags that are ``value``, in order. The rules find their calls by
    index, so a :class:`~agent_eval.model.CallLog` is read only where there are findings."""
    return compress(range(len(flags)), flags if value else map(operator.not_, flags))


class Flags:
    """The flags of one trace's calls for each selector of a rule (:meth:`Selector.flags`),
    each computed once, with the calls that a selector's argument conditions could not
    judge (``undecided``, by ``id`` of the selector)."""

    __slots__ = ("calls", "got", "names", "undecided")

    def __init__(self, calls: Sequence[ToolCall], names: Sequence[str]) -> None:
        self.calls = calls
        self.names = names
        self.got: dict[int, bytearray] = {}
        self.undecided: dict[int, list[int]] = {}

    def __call__(self, sel: Selector) -> bytearray:
        if not sel.conditional:  # names only: nothing to keep
            return sel.flags(self.calls, self.names)
        got = self.got.get(id(sel))
        if got is None:
            undecided: list[int] = []
            got = self.got[id(sel)] = sel.flags(self.calls, self.names, undecided)
            self.undecided[id(sel)] = undecided
        return got


# a rule's findings on one trace: a list, or found one at a time (a generator)
RuleFn = Callable[[Trace, Sequence[ToolCall], Sequence[str], Flags], Iterable[Finding]]


@dataclass(frozen=True, slots=True)
class _Field:
    """A tool field of a rule whose selector has argument conditions: where each of its
    items is written, and what the field is called in messages."""

    selector: Selector
    refs: tuple[ConfigRef, ...]  # one per item of the selector
    label: str  # "the never_after rule's first"


class _Tools:
    """Compiles the tool fields of rule ``i``, and keeps those with argument conditions
    (their undecided calls are reported)."""

    def __init__(self, ctx: CompileContext, i: int, kind: str) -> None:
        self.ctx = ctx
        self.i = i
        self.kind = kind
        self.fields: list[_Field] = []

    def __call__(self, value: Any, *keys: str | int) -> Selector:
        sel = self.ctx.selector(value, "rules", self.i, *keys)
        if sel.conditional:
            self.keep(sel, value, *keys)
        return sel

    def keep(self, sel: Selector, value: Any, *keys: str | int) -> None:
        ctx, where = self.ctx, ("rules", self.i, *keys)
        refs = (tuple(ctx.ref(*where, k) for k in range(len(sel.items)))
                if isinstance(value, list) else (ctx.ref(*where),))
        label = "".join(f"[{k}]" if isinstance(k, int) else f" {k}" for k in keys)
        self.fields.append(_Field(sel, refs, f"the {self.kind} rule's{label}"))


def _then_pair(r: BeforeRule | ImmediatelyBeforeRule | AfterRule | NeverAfterRule,
               tools: _Tools, key: str) -> tuple[Selector, Selector, str, str]:
    """The selectors of a two-tool rule's ``key`` (first/tool) and ``then`` fields, and
    their text for messages."""
    sel, then = (tools(getattr(r, k), k) for k in (key, "then"))
    return sel, then, tools_text(sel), tools_text(then)


def _require(r: RequireRule, ctx: CompileContext, tools: _Tools, emit: _Emit) -> RuleFn:
    key = "tool" if r.tool is not None else "tools"
    value = getattr(r, key)
    sel = ctx.selector(value, "rules", tools.i, key)
    items = [(p, Selector([item], ctx.tool_match)) for p, item in zip(sel.patterns, sel.items,
                                                                       strict=True)]
    for k, (_, m) in enumerate(items):  # each item is a rule of its own
        if m.conditional and isinstance(value, list):
            tools.keep(m, value[k], key, k)
        elif m.conditional:
            tools.keep(m, value, key)

    def require(trace: Trace, calls: Sequence[ToolCall], names: Sequence[str],
                flags_of: Flags) -> list[Finding]:
        out = []
        for p, m in items:
            if True not in flags_of(m):
                out.append(emit(trace, trace.end_location,
                                f"Required tool {p} was never called", p,
                                f"{p} to be called", f"{p} was never called"))
        return out

    return require


def _before(r: BeforeRule, ctx: CompileContext, tools: _Tools,
            emit: _Emit) -> RuleFn:
    first, then, a, b = _then_pair(r, tools, "first")

    def before(trace: Trace, calls: Sequence[ToolCall],
               names: Sequence[str], flags_of: Flags) -> Iterator[Finding]:
        is_then = flags_of(then)
        if True not in is_then:
            return  # vacuous: no then call
        is_first = flags_of(first)
        for k in range(len(names)):  # by index: a CallLog's calls are read for findings only
            if is_then[k]:
                c = calls[k]
                yield emit(trace, c.location, f"{c.name} called without a prior {a}",
                           c.name, f"{a} before {b}",
                           f"{c.name} called without prior {a}")
            if is_first[k]:
                break  # every later call has an earlier first call

    return before


def _immediately_before(r: ImmediatelyBeforeRule, ctx: CompileContext, tools: _Tools,
                        emit: _Emit) -> RuleFn:
    first, then, a, b = _then_pair(r, tools, "first")

    def immediately_before(trace: Trace, calls: Sequence[ToolCall],
                           names: Sequence[str], flags_of: Flags) -> Iterator[Finding]:
        is_then = flags_of(then)
        if not any(is_then):
            return
        is_first = flags_of(first)
        for k in _true(is_then):
            if k == 0 or not is_first[k - 1]:
                c = calls[k]
                actual = (f"{c.name} was the first call" if k == 0
                          else f"{c.name} called right after {names[k - 1]}")
                yield emit(trace, c.location,
                           f"{c.name} not called directly after {a} ({actual})",
                           c.name, f"{a} directly before {b}", actual)

    return immediately_before


def _after(r: AfterRule, ctx: CompileContext, tools: _Tools, emit: _Emit) -> RuleFn:
    tool, then, a, b = _then_pair(r, tools, "tool")
    within = r.within
    scope = f" within {within} call(s)" if within else ""

    def after(trace: Trace, calls: Sequence[ToolCall],
              names: Sequence[str], flags_of: Flags) -> Iterator[Finding]:
        is_tool = flags_of(tool)
        if not any(is_tool):
            return
        is_then = flags_of(then)
        n = len(calls)
        # next_then[k] = index of the first then-call at or after k (n when none)
        nxt = n
        next_then = [n] * (n + 1)
        for k in range(n - 1, -1, -1):
            if is_then[k]:
                nxt = k
            next_then[k] = nxt
        for k in _true(is_tool):
            j = next_then[k + 1]
            if j == n or (within is not None and j - k > within):
                c = calls[k]
                yield emit(trace, c.location,
                           f"{c.name} (call #{k + 1}) not followed by {b}{scope}",
                           c.name, f"{b} after {a}{scope}",
                           f"{c.name} not followed by {b}{scope}")

    return after


def _never_after(r: NeverAfterRule, ctx: CompileContext, tools: _Tools,
                 emit: _Emit) -> RuleFn:
    first, then, a, b = _then_pair(r, tools, "first")

    def never_after(trace: Trace, calls: Sequence[ToolCall],
                    names: Sequence[str], flags_of: Flags) -> Iterator[Finding]:
        is_first = flags_of(first)
        if True not in is_first:
            return
        start = is_first.index(True)
        seen = names[start]
        is_then = flags_of(then)
        for k in range(start + 1, len(calls)):
            if is_then[k]:
                c = calls[k]
                yield emit(trace, c.location,
                           f"{c.name} called after {seen}", c.name,
                           f"no {b} after {a}",
                           f"{c.name} called after {seen}")

    return never_after


def _listed(r: BlocklistRule | AllowlistRule, ctx: CompileContext, tools: _Tools,
            emit: _Emit) -> RuleFn:
    m = tools(r.tools, "tools")
    block = isinstance(r, BlocklistRule)
    listed = tools_text(m)

    def check(trace: Trace, calls: Sequence[ToolCall],
              names: Sequence[str], flags_of: Flags) -> Iterator[Finding]:
        hits = flags_of(m)
        if (True not in hits) if block else (False not in hits):
            return
        for k in _true(hits) if block else _true(hits, False):
            c = calls[k]
            if block:
                yield emit(trace, c.location,
                           f"{c.name} is blocked by the rule (tools: {listed})", c.name,
                           f"none of {listed} called", f"{c.name} called")
            else:
                yield emit(trace, c.location,
                           f"{c.name} is not in the allowlist ({listed})", c.name,
                           f"only {listed} called", f"{c.name} called")

    return check


def _called(names: Sequence[str], flags: bytearray, fallback: str) -> str:
    """The distinct names of the flagged calls, as the agent called them (``fallback``,
    the rule's own spelling, when none was called)."""
    seen = list(dict.fromkeys(compress(names, flags)))
    if not seen:
        return fallback
    return ", ".join(seen[:3]) + (f" and {len(seen) - 3} more" if len(seen) > 3 else "")


def _count(r: CountRule, ctx: CompileContext, tools: _Tools, emit: _Emit) -> RuleFn:
    i = tools.i
    m = tools(r.tool, "tool")
    lo, hi = r.min, r.max
    name = tools_text(m)
    hi_ref = ctx.ref("rules", i, "max") if hi is not None else None
    lo_ref = ctx.ref("rules", i, "min") if lo is not None else None

    def count(trace: Trace, calls: Sequence[ToolCall], names: Sequence[str],
              flags_of: Flags) -> list[Finding]:
        flags = flags_of(m)
        n = flags.count(True)
        if (hi is None or n <= hi) and (lo is None or n >= lo):
            return []
        called = _called(names, flags, name)
        rule = "" if called == name else f"count of {name}"
        if hi is not None and n > hi:
            c = calls[next(islice(_true(flags), hi, None))]  # the call over the limit
            why = f"{rule}; " if rule else ""
            return [emit(trace, c.location,
                         f"{called} called {n} times, more than max {hi} ({why}call "
                         f"#{hi + 1} is over the limit)", c.name,
                         f"at most {hi} call(s) to {name}", f"{n} calls", hi_ref)]
        assert lo is not None
        why = f" ({rule})" if rule else ""
        return [emit(trace, trace.end_location,
                     f"{called} called {n} times, fewer than min {lo}{why}",
                     name, f"at least {lo} call(s) to {name}", f"{n} calls",
                     lo_ref)]

    return count


def _eventually(r: EventuallyRule, ctx: CompileContext, tools: _Tools,
                emit: _Emit) -> RuleFn:
    m = tools(r.tool, "tool")
    within = r.within
    name = tools_text(m)

    def eventually(trace: Trace, calls: Sequence[ToolCall], names: Sequence[str],
                   flags_of: Flags) -> list[Finding]:
        flags = flags_of(m)
        k = flags.index(True) if True in flags else -1
        if 0 <= k < within:
            return []
        expected = f"{name} among the first {within} call(s)"
        if k < 0:
            return [emit(trace, trace.end_location,
                         f"{name} was never called (required among the first {within} "
                         f"call(s); the trace has {len(calls)})", name, expected,
                         f"{name} never called")]
        c = calls[k]
        return [emit(trace, c.location, f"{c.name} first called as call #{k + 1}, later than "
                     f"the first {within} call(s)", c.name, expected,
                     f"first called as call #{k + 1}")]

    return eventually


def _sequence(r: SequenceRule, ctx: CompileContext, tools: _Tools, emit: _Emit) -> RuleFn:
    steps = [tools(t, "tools", k) for k, t in enumerate(r.tools)]
    texts = [tools_text(s) for s in steps]
    n_steps = len(steps)
    strict = r.strict
    order = " -> ".join(texts)
    expected = f"{order} in this order" + (", back to back" if strict else "")

    def sequence(trace: Trace, calls: Sequence[ToolCall], names: Sequence[str],
                 flags_of: Flags) -> list[Finding]:
        flags = [flags_of(s) for s in steps]
        done = 0  # steps matched so far (greedily, as Assay does)
        for k in range(len(calls)):
            if done == n_steps:
                return []
            if flags[done][k]:
                done += 1
                continue
            c = calls[k]
            if strict and done:
                return [emit(trace, c.location,
                             f"{c.name} called after {texts[done - 1]} where the strict "
                             f"sequence expects {texts[done]} ({order})", c.name, expected,
                             f"{c.name} interrupts the sequence before {texts[done]}")]
            if not strict and any(flags[t][k] for t in range(done + 1, n_steps)):
                return [emit(trace, c.location,
                             f"{c.name} called before {texts[done]} ({order})", c.name,
                             expected, f"{c.name} called before {texts[done]}")]
        if 0 < done < n_steps:
            return [emit(trace, trace.end_location,
                         f"the sequence reached {texts[done - 1]} and the trace ended before "
                         f"{texts[done]} ({order})", texts[done], expected,
                         f"ended before {texts[done]}")]
        return []  # complete, or never started (vacuous)

    return sequence


BUILDERS: dict[str, Callable[..., RuleFn]] = {
    "require": _require,
    "before": _before,
    "immediately_before": _immediately_before,
    "after": _after,
    "never_after": _never_after,
    "blocklist": _listed,
    "allowlist": _listed,
    "count": _count,
    "eventually": _eventually,
    "sequence": _sequence,
}
# the rule each type reports (an undeclared one fails here, at import)
RULE_OF_TYPE: dict[str, Rule] = {t: member("sequence_valid", t) for t in BUILDERS}


class SequenceValid(CheckCore):
    metric = "sequence_valid"

    def __init__(self, cfg: SequenceValidTest,
                 rules: Sequence[tuple[RuleFn, str, tuple[_Field, ...]]],
                 tool_refs: list[ToolRef]) -> None:
        super().__init__(cfg, tool_refs)
        self.rules = tuple(rules)  # (the rule, its type, its fields with argument conditions)
        # every tool its rules name, tried together: an allowlist of 1,000 globs was tried
        # glob by glob against each distinct name called (minutes on 20,000 names)
        self._named = NameIndex([r.matcher for r in tool_refs])

    def touches(self, name: str) -> bool:
        return self._named.matches(name)

    def findings(self, trace: Trace) -> Iterator[Finding]:
        calls = trace.tool_calls
        names = call_names(calls)
        plain = Flags(calls, names)  # keeps nothing for selectors without conditions
        for rule, kind, fields in self.rules:
            if not fields:
                yield from rule(trace, calls, names, plain)
                continue
            flags = Flags(calls, names)  # one rule's: freed with it
            yield from rule(trace, calls, names, flags)
            # every call a field's conditions could not judge (the rule took it as not
            # selected), whether or not the rule looked at that field for this trace
            for f in fields:
                flags(f.selector)
                for k in flags.undecided[id(f.selector)]:
                    yield self._not_checked(trace, calls[k], kind, f)

    def _not_checked(self, trace: Trace, call: ToolCall, kind: str, f: _Field) -> Finding:
        found = f.selector.cannot_judge(call)
        assert found is not None  # Selector.flags named it
        index, unfit = found
        pattern, ref = f.selector.patterns[index], f.refs[index]
        why, violation = unjudged(call, unfit)
        where = call.location
        severity: Severity
        if unfit is not None:  # an argument of a type a condition cannot judge
            rule, severity = SEQUENCE_VALID_WRONG_TYPE, self.severity
        elif call.arguments_recorded:  # as args_valid's: of the test's severity
            rule, severity = SEQUENCE_VALID_NOT_AN_OBJECT, self.severity
        else:  # a warning, or a note under a note test
            rule = SEQUENCE_VALID_NOT_RECORDED
            severity = "note" if self.severity == "note" else "warning"
        return Finding(
            rule=rule.id,
            severity=severity,
            message=f"{call.name}: the call's {why}; whether it is selected by "
            f"{f.label} ('{pattern}', {ref.file}:{ref.line}) could not be checked",
            test=self.id,
            config=ref,
            trace=TraceRef(where.file, where.line, trace.id),
            tool=call.name,
            constraint=kind,
            scenario=trace.scenario,
            details={"expected": f"the call's arguments judged by {pattern} "
                                 f"({f.label.removeprefix('the ')})", "actual": violation},
        )


TOOL_FIELDS = ("tool", "tools", "first", "then")
# the fields whose tool, never called, leaves the rule nothing to check (docs/config.md)
VACUOUS_FIELDS = {"before": ("then",), "immediately_before": ("then",), "after": ("tool",),
                  "never_after": ("first", "then"), "blocklist": ("tools",),
                  "count": ("tool",), "sequence": ("tools",)}


def compile_test(cfg: SequenceValidTest, ctx: CompileContext) -> SequenceValid:
    fns = []
    refs: list[ToolRef] = []
    problems: list[str] = []
    for i, rule in enumerate(cfg.rules):
        emit = _Emit(cfg.id, cfg.severity, RULE_OF_TYPE[rule.type].id, ctx.ref("rules", i))
        tools = _Tools(ctx, i, rule.type)
        try:
            fns.append((BUILDERS[rule.type](rule, ctx, tools, emit), rule.type,
                        tuple(tools.fields)))
        except ConfigError as exc:
            problems += exc.problems
            continue
        vacuous = VACUOUS_FIELDS.get(rule.type, ())
        if isinstance(rule, CountRule) and rule.min:
            vacuous = ()  # too few calls is a violation
        for name in TOOL_FIELDS:
            value = getattr(rule, name, None)
            if value is None:
                continue
            effect = VACUOUS if name in vacuous else ""
            kind = f"{rule.type} rule, {name}"
            if isinstance(rule, SequenceRule):
                for k, step in enumerate(rule.tools):
                    refs += ctx.selector_refs(ctx.selector(step, "rules", i, name, k), step,
                                              kind, "rules", i, name, k, effect=effect)
            else:
                refs += ctx.selector_refs(ctx.selector(value, "rules", i, name), value, kind,
                                          "rules", i, name, effect=effect)
    if problems:
        raise ConfigError(problems)
    return SequenceValid(cfg, fns, refs)


RULES = (*(r.id for r in RULE_OF_TYPE.values()), SEQUENCE_VALID_NOT_AN_OBJECT.id,
         SEQUENCE_VALID_NOT_RECORDED.id, SEQUENCE_VALID_WRONG_TYPE.id)
SPEC = CheckSpec("sequence_valid", SequenceValidTest, compile_test, RULES)
