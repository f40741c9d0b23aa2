"""args_valid: every tool call's arguments against the policy file (docs/config.md)."""

import sys
from collections.abc import Iterator
from itertools import islice
from typing import Any, Literal

import orjson
from pydantic import Field

from agent_eval.checks._text import show_value
from agent_eval.checks.base import CheckCore, CheckSpec, CompileContext
from agent_eval.config.models import FileName, TestBase, ToolPatterns
from agent_eval.config.policy import Policy, ToolRule
from agent_eval.config.schema_compiler import RULE_OF, Constraint, SchemaError
from agent_eval.coverage import ToolRef
from agent_eval.errors import ConfigError
from agent_eval.findings import ConfigRef, Finding, Severity, TraceRef
from agent_eval.limits import DEFAULT, Limits
from agent_eval.matching import GROUP_PREFIX, ToolMatcher, is_glob
from agent_eval.model import ToolCall, Trace, calls_to_read
from agent_eval.rule_ids import (
    ARGS_VALID_ADDITIONAL_ARGUMENTS,
    ARGS_VALID_FALSE_SCHEMA,
    ARGS_VALID_NOT_AN_OBJECT,
    ARGS_VALID_NOT_RECORDED,
    ARGS_VALID_REQUIRED,
    ARGS_VALID_UNCONSTRAINED_TOOL,
    ARGS_VALID_UNKNOWN_TOOL,
    Rule,
)
from agent_eval.safetext import clean_text, clean_value

_UNSEEN: Any = object()


class ArgsValidTest(TestBase):
    metric: Literal["args_valid"]
    policy: FileName = Field(description="Policy file, relative to the suite file.")
    tools: ToolPatterns | None = Field(None, description="Only check these tools (globs).")
    strict: bool = Field(False, description="A tool that matches no policy key is a violation.")


def argument_path(path: tuple[str | int, ...]) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def stored_value(value: Any, limits: Limits) -> Any:
    """The value as kept in results: itself, or, when its JSON text is longer than
    ``limits.max_value_chars``, cut as every output shows it (with the ``…[+N chars]``
    marker of how much was cut): a large argument is not held until the results are
    finished, and ``max_value_chars`` is what shows it (a value was cut at 1,000
    characters whatever the limit said, and the marker then counted from there)."""
    size = limits.max_value_chars
    if isinstance(value, dict | list) and len(value) > size:
        return _cut_long(value, size)
    if isinstance(value, dict | list | str) and len(show_value(value, size + 2)) > size:
        return clean_value(value, limits)
    return value


def _json_len(value: Any) -> int:
    try:
        return len(orjson.dumps(value).decode())
    except (TypeError, orjson.JSONEncodeError):
        return len(repr(value))


def _cut_long(value: dict[Any, Any] | list[Any], size: int) -> str:
    """A container of more items than ``size``: its JSON text cut to ``size`` characters
    as :func:`clean_value` cuts it, but only its first items written out and the others
    measured (ten million numbers made into one text to show 2,000 characters of them
    took the memory that the text needs at once, and under an address-space limit
    crashed orjson)."""
    if isinstance(value, list):
        head: Any = value[:size + 1]
        more = sum(_json_len(v) + 1 for v in islice(value, size + 1, None))  # ",v"
    else:
        head = dict(islice(value.items(), size + 1))
        more = sum(_json_len(k) + _json_len(v) + 2 for k, v in  # ',"k":v'
                   islice(value.items(), size + 1, None))
    text = show_value(head, sys.maxsize)  # more than `size` characters: an item is one
    return f"{clean_text(text[:size])}…[+{len(text) + more - size} chars]"


class ArgsValid(CheckCore):
    metric = "args_valid"

    def __init__(self, cfg: ArgsValidTest, policy: Policy, only: ToolMatcher | None,
                 strict_ref: ConfigRef | None, tool_refs: tuple[ToolRef, ...],
                 limits: Limits = DEFAULT) -> None:
        super().__init__(cfg, tool_refs)
        self.policy = policy
        self.limits = limits
        self.only = only
        self.strict_ref = strict_ref
        # per tool name: the policy rules that apply to its calls, or None when the tools
        # filter skips it (bounded like Policy.rules_for)
        self._rules: dict[str, tuple[ToolRule, ...] | None] = {}
        self._refs: dict[int, ConfigRef] = {}  # id(constraint) -> its ConfigRef, shared

    def touches(self, name: str) -> bool:
        """A call is checked when the filter lets it through and a policy key matches
        it (or any call under ``strict: true``)."""
        if self.only is not None and not self.only(name):
            return False
        return (self.strict_ref is not None or self.policy.unconstrained is not None
                or bool(self.policy.rules_for(name)))

    def _rules_of(self, name: str) -> tuple[ToolRule, ...] | None:
        rules = (None if self.only is not None and not self.only(name)
                 else self.policy.rules_for(name))
        if len(self._rules) > 65536:
            self._rules.clear()
        self._rules[name] = rules
        return rules

    def findings(self, trace: Trace) -> Iterator[Finding]:
        known = self._rules
        for call in calls_to_read(trace.tool_calls, self.touches):
            name = call.name
            rules = known.get(name, _UNSEEN)
            if rules is _UNSEEN:
                rules = self._rules_of(name)
            if rules is None:
                continue  # not in the tools filter
            if not rules:
                if self.strict_ref is not None:
                    yield self._unknown(call, trace)
                elif self.policy.unconstrained is not None:
                    yield self._unconstrained(call, trace)
                continue
            if not call.arguments_recorded:
                yield self._not_recorded(call, trace, rules[0].key_ref)
                continue
            if call.arguments_error is not None:
                yield self._not_object(call, trace, rules[0].key_ref)
                continue
            args = call.arguments
            for rule in rules:
                errors = rule.validate(args)
                if errors:
                    where = self._trace_ref(call, trace)
                    for e in errors:
                        yield self._finding(e, call, trace, where)

    def _trace_ref(self, call: ToolCall, trace: Trace) -> TraceRef:
        return TraceRef(call.location.file, call.location.line, trace.id)

    def _ref(self, c: Constraint) -> ConfigRef:
        """The constraint's ConfigRef, one object per constraint (immutable: findings
        share it)."""
        ref = self._refs.get(id(c))
        if ref is None:
            ref = self._refs[id(c)] = _ref(c)
        return ref

    def _finding(self, e: SchemaError, call: ToolCall, trace: Trace, where: TraceRef
                 ) -> Finding:
        c = e.constraint
        arg = argument_path(e.path) if e.path else None
        if e.missing:
            text = f"{call.name}: required argument '{arg}' is missing ({c.text})"
            if c.rule != ARGS_VALID_REQUIRED.id:
                text = f"{call.name}: argument '{arg}' is missing: {e.message} ({c.text})"
        elif arg is None:
            text = f"{call.name}: arguments = {show_value(e.value)}: {e.message} ({c.text})"
        else:
            text = f"{call.name}: argument '{arg}' = {show_value(e.value)}: {e.message} ({c.text})"
        # positional: rule, severity, message, test, config, trace, tool, argument, value,
        # constraint, scenario, related, details
        return Finding(c.rule, self.severity, text, self.id, self._ref(c), where, call.name,
                       arg, None if e.missing else stored_value(e.value, self.limits), c.text,
                       trace.scenario, (), {"violation": e.message})

    def _unreadable(self, call: ToolCall, trace: Trace, key: Constraint, rule: Rule,
                    severity: Severity, message: str, violation: str) -> Finding:
        """A call whose arguments could not be checked at all, located at the tool's
        policy key."""
        return Finding(
            rule=rule.id,
            severity=severity,
            message=f"{call.name}: {message}",
            test=self.id,
            config=_ref(key),
            trace=self._trace_ref(call, trace),
            tool=call.name,
            value=stored_value(call.arguments, self.limits),
            constraint=key.text,
            scenario=trace.scenario,
            details={"violation": violation},
        )

    def _not_object(self, call: ToolCall, trace: Trace, key: Constraint) -> Finding:
        return self._unreadable(
            call, trace, key, ARGS_VALID_NOT_AN_OBJECT, self.severity,
            f"arguments are not a JSON object ({call.arguments_error}); they cannot be checked "
            "against the policy", "Arguments are not a JSON object")

    def _not_recorded(self, call: ToolCall, trace: Trace, key: Constraint) -> Finding:
        # never a pass: a warning (a note when the test's severity is note)
        return self._unreadable(
            call, trace, key, ARGS_VALID_NOT_RECORDED,
            "note" if self.severity == "note" else "warning",
            "arguments not recorded in the trace; the policy could not be checked for this "
            "call", "Arguments not recorded")

    def _unknown(self, call: ToolCall, trace: Trace) -> Finding:
        assert self.strict_ref is not None
        return Finding(
            rule=ARGS_VALID_UNKNOWN_TOOL.id,
            severity=self.severity,
            message=f"{call.name}: tool is not in the policy {self.policy.file} "
            "(strict: true)",
            test=self.id,
            config=self.strict_ref,
            trace=self._trace_ref(call, trace),
            tool=call.name,
            constraint="strict: true",
            scenario=trace.scenario,
            details={"violation": "Tool is not defined in the policy"},
        )


    def _unconstrained(self, call: ToolCall, trace: Trace) -> Finding:
        severity, where = self.policy.unconstrained  # type: ignore[misc]
        if self.severity == "note" or (self.severity == "warning" and severity == "error"):
            severity = self.severity  # the test's severity caps it
        return Finding(
            rule=ARGS_VALID_UNCONSTRAINED_TOOL.id,
            severity=severity,  # type: ignore[arg-type]
            message=f"{call.name}: no policy key of {self.policy.file} constrains this tool "
            f"({where.text})",
            test=self.id,
            config=_ref(where),
            trace=self._trace_ref(call, trace),
            tool=call.name,
            constraint=where.text,
            scenario=trace.scenario,
            details={"violation": "Tool has no schema in the policy"},
        )


def _ref(c: Constraint) -> ConfigRef:
    return ConfigRef(c.file, c.line, c.col, c.key_path)


def compile_test(cfg: ArgsValidTest, ctx: CompileContext) -> ArgsValid:
    policy = ctx.load_policy(cfg.policy, (*ctx.path, "policy"))
    if not policy.rules and not cfg.strict and policy.unconstrained is None:
        # every call would be skipped: a test that checks nothing and passes
        at = ctx.ref("policy")
        raise ConfigError([f"{at.file}:{at.line}:{at.col}: policy '{cfg.policy}' has no "
                           "tools (tools: {}), so this test would check nothing; list the "
                           "tools it constrains, or refuse every call with strict: true (or "
                           "the policy's enforcement: {unconstrained_tools: deny})"])
    only = ctx.tool_matcher(cfg.tools, "tools") if cfg.tools is not None else None
    strict_ref = ctx.ref("strict") if cfg.strict else None
    refs = [ToolRef(r.key, "policy key", _ref(r.key_ref), r.matcher, cfg.id,
                    effect="its constraints were never checked") for r in policy.rules]
    if cfg.tools is not None:
        filtered = ctx.tool_refs(cfg.tools, "tools filter", "tools",
                                 effect="the test checked no call through it")
        refs += filtered
        if not cfg.strict and policy.unconstrained is None:
            # a tool named in the filter that no policy key matches: its calls were
            # skipped, the test not_exercised and the run a pass (tools: [refund] beside a
            # policy of issue_refund)
            lost = [r for r in filtered if not r.pattern.startswith(GROUP_PREFIX)
                    and not is_glob(r.pattern) and not policy.rules_for(r.pattern)]
            if lost:
                raise ConfigError([
                    f"{r.ref.file}:{r.ref.line}:{r.ref.col}: '{r.pattern}' in the tools "
                    f"filter matches no key of policy '{cfg.policy}', so its calls would "
                    "not be checked; add it to the policy, or remove it from the filter "
                    "(strict: true refuses a call of a tool the policy does not name)"
                    for r in lost])
    return ArgsValid(cfg, policy, only, strict_ref, tuple(refs), ctx.limits)


RULES = tuple(sorted({r.id for r in RULE_OF.values()} | {r.id for r in (
    ARGS_VALID_ADDITIONAL_ARGUMENTS, ARGS_VALID_FALSE_SCHEMA, ARGS_VALID_NOT_AN_OBJECT,
    ARGS_VALID_NOT_RECORDED, ARGS_VALID_UNKNOWN_TOOL, ARGS_VALID_UNCONSTRAINED_TOOL,
)}))
SPEC = CheckSpec("args_valid", ArgsValidTest, compile_test, RULES)
