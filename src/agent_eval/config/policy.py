"""Policy files for args_valid: loaded once per suite, compiled into validators."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_eval.config.schema_compiler import (
    Constraint,
    Fast,
    SchemaCompiler,
    SchemaError,
    Validator,
    ecma_regex,
)
from agent_eval.matching import GROUP_PREFIX, NameIndex, ToolMatcher, ToolMatchMode
from agent_eval.rule_ids import (
    ARGS_VALID_ADDITIONAL_ARGUMENTS,
    ARGS_VALID_NOT_AN_OBJECT,
    ARGS_VALID_UNCONSTRAINED_TOOL,
)
from agent_eval.saferegex import RegexError


@dataclass(frozen=True, slots=True)
class ToolRule:
    """The constraints of one key of ``tools:`` (a name or a glob)."""

    key: str
    matcher: ToolMatcher
    validate: Validator
    key_ref: Constraint  # the key's own line (arguments not an object)


class Policy:
    """A compiled policy file."""

    def __init__(self, file: str, rules: list[ToolRule],
                 unconstrained: tuple[str, Constraint] | None = None) -> None:
        self.file = file
        self.rules = tuple(rules)
        # enforcement.unconstrained_tools when deny or warn: (severity, its line)
        self.unconstrained = unconstrained
        self._memo: dict[str, tuple[ToolRule, ...]] = {}
        # The keys that name one tool are looked up by the name they match and the globs
        # tried together: a name was tried against each of a thousand keys (a policy of
        # 1,000 tools, or 1,000 globs, against 20,000 names called: minutes).
        self._index = NameIndex([r.matcher for r in self.rules])

    def rules_for(self, name: str) -> tuple[ToolRule, ...]:
        hit = self._memo.get(name)
        if hit is None:
            rules = self.rules
            found = sorted(set(self._index.matching(name)))  # in the policy's order
            hit = tuple(rules[i] for i in found)
            if len(self._memo) > 65536:
                self._memo.clear()
            self._memo[name] = hit
        return hit


def compile_policy(doc: dict[str, Any], compiler: SchemaCompiler, file: str,
                   mode: ToolMatchMode) -> Policy:
    """Compile a policy document (see models.PolicyFile). Every problem of its schemas
    is collected in ``compiler.problems`` (the caller raises them together, with the
    document's structural problems); a part that is not even shaped right is skipped."""
    rules = []
    tools = doc.get("tools")
    for key, entry in (tools if isinstance(tools, dict) else {}).items():
        path = ("tools", key)
        if isinstance(key, str) and key.startswith(GROUP_PREFIX):
            # a name no tool has: its constraints would never apply, without a word
            compiler.report(path, f"policy key '{key}': a policy key is a tool name or a "
                            "glob; tool groups (@NAME) are the suite's and do not apply in "
                            "a policy file: write its tools (or a glob) as keys")
            continue
        entry = entry or {}
        if not isinstance(entry, dict):
            continue  # reported by the model
        checks: list[Validator] = []
        if isinstance(entry.get("arguments"), dict):
            checks.append(_arguments(compiler, entry, path))
        elif entry.get("additional_arguments") is False:
            checks.append(_arguments(compiler, {**entry, "arguments": {}}, path))
        if "schema" in entry and entry["schema"] is not None:
            checks.append(compiler.compile_root(entry["schema"], (*path, "schema")))
        pos = compiler.positions.get(path)
        key_ref = Constraint(ARGS_VALID_NOT_AN_OBJECT.id, f"{key}: …", pos.file or file, pos.line,
                             pos.col,
                             ".".join(path))
        rules.append(ToolRule(key, ToolMatcher([key], mode), compiler.fused(checks), key_ref))
    enforcement = doc.get("enforcement")
    mode_of = enforcement.get("unconstrained_tools") if isinstance(enforcement, dict) else None
    unconstrained = None
    if mode_of in ("deny", "warn"):
        where = ("enforcement", "unconstrained_tools")
        pos = compiler.positions.get(where)
        unconstrained = ("error" if mode_of == "deny" else "warning", Constraint(
            ARGS_VALID_UNCONSTRAINED_TOOL.id, f"unconstrained_tools: {mode_of}",
            pos.file or file, pos.line, pos.col, ".".join(where)))
    return Policy(file, rules, unconstrained)


def _arguments(compiler: SchemaCompiler, entry: dict[str, Any], path: tuple[str, ...]
               ) -> Validator:
    """The validator of a tool's ``arguments:`` map (with ``required: true`` and
    ``additional_arguments``)."""
    args: dict[str, Any] = entry.get("arguments") or {}
    subs = tuple(
        (name, compiler.compile(schema, (*path, "arguments", name), as_property=True))
        for name, schema in args.items()
    )
    required = tuple(
        (name, compiler.constraint((*path, "arguments", name), "required", True))
        for name, schema in args.items()
        if isinstance(schema, dict) and schema.get("required") is True
    )
    closed = entry.get("additional_arguments") is False
    extra_ref = (compiler.constraint(path, "additional_arguments", False,
                                      rule=ARGS_VALID_ADDITIONAL_ARGUMENTS) if closed else None)
    # Arguments that a full `schema:` of the same key describes are listed too.
    schema = entry.get("schema")
    described = schema.get("properties") if isinstance(schema, dict) else None
    known = frozenset(args) | frozenset(described if isinstance(described, dict) else ())
    patterns = _searches(schema.get("patternProperties") if isinstance(schema, dict) else None)

    def build(subs: tuple[tuple[str, Validator], ...]) -> Validator:
        def arguments(v: Any) -> list[SchemaError] | None:
            errors: list[SchemaError] | None = None
            for name, c in required:
                if name not in v:
                    e = SchemaError(c, (name,), None, "Required argument is missing", missing=True)
                    errors = (errors or []) + [e]
            for name, check in subs:
                if name in v:
                    e2 = check(v[name])
                    if e2:
                        for err in e2:
                            err.path = (name, *err.path)
                        errors = (errors or []) + e2
            if extra_ref is not None:
                for name, value in v.items():
                    if name not in known and not any(search(name) for search in patterns):
                        errors = (errors or []) + [SchemaError(
                            extra_ref, (name,), value,
                            f"Argument '{name}' is not allowed by the policy")]
            return errors

        return arguments

    # its test (below, or when a test of it is wanted) calls only its arguments' tests
    arguments = compiler.twin(build(subs), build(tuple((n, compiler.as_test(c))
                                                       for n, c in subs)))

    if closed and patterns:
        return arguments  # no test of the pattern-matched names: always checked in full
    members = compiler.members_test(tuple(n for n, _ in required), subs,
                                    known if closed else None)
    if members is None:
        return arguments  # too many names for a test: always checked in full
    source = members.source("{x}")
    return compiler.guarded(arguments, Fast(
        lambda x: f"(isinstance({x}, dict) and {source.replace('{x}', x)})", members.depth))


def _searches(patterns: Any) -> tuple[Callable[[str], object], ...]:
    """The regexes of a `patternProperties` map; a bad one is reported when the schema
    itself is compiled, so it is skipped here."""
    out = []
    for pattern in patterns if isinstance(patterns, dict) else ():
        try:
            out.append(ecma_regex(pattern).search)
        except RegexError:
            continue
    return tuple(out)
