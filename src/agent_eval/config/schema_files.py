"""The JSON Schemas that output and result checks name (a scenario's ``output.json_schema``,
a live probe's ``json_schema``, a ``tool_results`` entry's): inline or a file relative to the
suite file, each compiled once, its regular expressions matched by RE2; and what the suite
loader gives the compilers that read such files."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path as FsPath
from typing import Any, Protocol

import yaml
from pydantic import BaseModel

from agent_eval.config.schema_compiler import (
    FORMATS,
    MAX_SCHEMAS_IN_PLACE,
    REF_CYCLE,
    applied,
    ref_cycles,
)
from agent_eval.jsonutil import json_type
from agent_eval.jsonutil import loads as bounded_loads
from agent_eval.limits import CONFIG
from agent_eval.paths import real
from agent_eval.saferegex import (
    RegexError,
    SafeRegex,
    compile_ecma,
    format_checker,
    jsonschema_validator,
    schema_formats,
    schema_patterns,
)
from agent_eval.textdist import did_you_mean
from agent_eval.yamlpos import Path, Positions, YamlLimitError, safe_load

__all__ = ["LoaderLike", "SchemaFiles", "compile_schema"]


class LoaderLike(Protocol):
    """What the suite loader gives the compilers (suite.py ``_Loader``)."""

    problems: list[str]
    base: FsPath

    def validate(self, model: type[BaseModel], data: Any, positions: Positions,
                 prefix: Path) -> Any: ...

    def read(self, path: FsPath) -> str: ...


def compile_schema(schema: Any, source: str, problem: Callable[[str], None]) -> Any:
    """A validator of ``schema`` (draft by ``$schema``, default 2020-12), or None after
    reporting why not."""
    # only when a suite uses it: keeps the CLI's start-up fast
    import jsonschema  # type: ignore[import-untyped]

    if not isinstance(schema, dict | bool):  # a file of `null` or `5`: validator_for fails
        problem(f"invalid JSON Schema ({source}): {schema!r} is not of type 'object', "
                "'boolean'")
        return None
    cls = jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        problem(f"invalid JSON Schema ({source}): {exc.message}")
        return None
    regexes: dict[str, SafeRegex] = {}
    for pattern in schema_patterns(schema):  # matched by RE2, not Python's re
        try:
            regexes[pattern] = compile_ecma(pattern)
        except RegexError as exc:
            problem(f"invalid JSON Schema ({source}): pattern {pattern!r}: {exc}")
            return None
    wrong = _References(cls, schema).problems()
    checker = format_checker(cls, OWN_FORMATS)
    for name in sorted(set(schema_formats(schema)) - set(checker.checkers)):
        # jsonschema lets every value pass a format it has no check for (an unknown one,
        # or one whose library is not installed): never a silent pass
        wrong.append(f"format '{name}' is not one agent-eval checks, so every value would "
                     f"pass it; use one of {', '.join(sorted(checker.checkers))}, or a "
                     "pattern")
    for message in wrong:
        problem(f"invalid JSON Schema ({source}): {message}")
    return None if wrong else jsonschema_validator(cls, schema, regexes, OWN_FORMATS)


# The formats whose jsonschema check needs a library agent-eval does not install
# (rfc3339-validator, rfc3987, fqdn): checked as a policy's `format:` checks them, so that
# they are checked wherever agent-eval runs, and mean the same in a policy and a schema
OWN_FORMATS = {name: FORMATS[name] for name in ("date-time", "time", "uri", "hostname")}


# The keywords whose subschemas apply to the value itself (then and else with if) and those
# whose subschemas apply to a member or an item of it, in every draft jsonschema knows (a
# keyword counts only in the drafts that have it: the validator class's VALIDATORS)
_SAME_VALUE_LISTS = ("allOf", "anyOf", "oneOf")
_SAME_VALUE_MAPS = ("dependentSchemas", "dependencies")
_PART_ONE = ("additionalProperties", "additionalItems", "items", "contains", "propertyNames",
             "unevaluatedItems", "unevaluatedProperties")
_PART_LISTS = ("prefixItems", "items")  # items: a list of schemas before 2020-12
_PART_MAPS = ("properties", "patternProperties")
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")
# keywords that constrain nothing (identifiers, annotations, definitions), in any draft,
# and then/else, applied by if: with those a draft validates, every keyword a schema may
# hold; any other one jsonschema would ignore, so a misspelt `maxium: 5` checked nothing
_NOT_VALIDATORS = frozenset((
    "$schema", "$id", "id", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$vocabulary",
    "$comment", "$defs", "definitions", "title", "description", "default", "examples",
    "deprecated", "readOnly", "writeOnly", "contentEncoding", "contentMediaType",
    "contentSchema", "then", "else"))
_BESIDE_CONTAINS = ("minContains", "maxContains")  # no effect without contains
_HINT_CHARS = 64  # a longer unknown keyword gets no "did you mean" (difflib is quadratic)


def _step(key: Any) -> str:
    """One step of a JSON pointer."""
    return str(key).replace("~", "~0").replace("/", "~1")


class _References:
    """The references of one JSON Schema, resolved as jsonschema resolves them while
    validating (its registry: the schema and the JSON Schema meta-schemas; nothing is
    fetched). Validating with a reference that points at nothing fails, and one that
    comes back to a schema it is inside without descending into a member or an item
    (``{"$ref": "#"}``) never ends: both are found here, when the schema is loaded."""

    def __init__(self, cls: Any, schema: Any) -> None:
        import referencing
        import referencing.jsonschema
        from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

        self.keywords = cls.VALIDATORS
        # before draft 2019-09, a $ref's siblings are ignored (and there is no minContains)
        self.legacy = not any(k in cls.VALIDATORS for k in ("$dynamicRef", "$recursiveRef"))
        # minContains and maxContains are read by the validator of contains (no validator
        # of their own) from draft 2019-09 on
        self.known: set[str] = {*_NOT_VALIDATORS, *cls.VALIDATORS,
                                *(() if self.legacy else _BESIDE_CONTAINS)}
        self.spec = referencing.jsonschema.specification_with(
            cls.ID_OF(cls.META_SCHEMA) or "urn:unknown-dialect",
            default=referencing.Specification.OPAQUE)
        self.unresolvable = referencing.exceptions.Unresolvable
        self.lookup_recursive = referencing.jsonschema.lookup_recursive_ref
        self.root = schema
        self.root_resolver = REGISTRY.resolver_with_root(self.spec.create_resource(schema))
        # the JSON pointer of each mapping of the document (for the messages)
        self.pointers: dict[int, str] = {}
        todo: list[tuple[Any, str]] = [(schema, "")]
        while todo:
            value, pointer = todo.pop()
            if isinstance(value, dict):
                self.pointers.setdefault(id(value), pointer)
                todo += [(v, f"{pointer}/{_step(k)}") for k, v in value.items()]
            elif isinstance(value, list):
                todo += [(v, f"{pointer}/{i}") for i, v in enumerate(value)]
        # the schemas that references lead to (by identity), with their resolvers
        self.targets: dict[int, tuple[dict[str, Any], Any]] = {}

    def problems(self) -> list[str]:
        found: list[str] = []
        unknown: list[str] = []  # keywords of the draft's validator none of its schemas has
        starts: list[int] = []
        if isinstance(self.root, dict):
            self.targets[id(self.root)] = (self.root, self.root_resolver)
            starts.append(id(self.root))
        seen: set[int] = set()
        schemas: list[int] = []  # the document's schemas, in order
        todo: list[tuple[Any, Any]] = [(self.root, self.root_resolver)]
        while todo:  # every schema of the document and every one a reference leads to
            node, resolver = todo.pop()
            if not isinstance(node, dict) or id(node) in seen:
                continue
            seen.add(id(node))
            if id(node) in self.pointers:  # the document's own: not a meta-schema it names
                unknown += self._unknown(node)
                self.targets.setdefault(id(node), (node, resolver))
                schemas.append(id(node))
            for where, ref, resolved in self._references(node, resolver):
                if resolved is None:
                    found.append(f"the {where} ('{ref}') points at nothing: a reference "
                                 "must lead to a schema of this document (or to a JSON Schema "
                                 "meta-schema); nothing is fetched")
                    continue
                contents, target_resolver = resolved
                if not isinstance(contents, dict | bool):
                    found.append(f"the {where} ('{ref}') points at a value of type "
                                 f"{json_type(contents)}, not at a schema")
                    continue
                if isinstance(contents, dict):
                    self.targets.setdefault(id(contents), (contents, target_resolver))
                    starts.append(id(contents))
                    todo.append((contents, target_resolver))
            todo += [(sub, self._into(sub, resolver))
                     for sub, _ in reversed(list(self._subschemas(node)))]
        if found:
            return unknown + found
        for where, ref in ref_cycles(starts, self._same_value, set()):
            found.append(f"the {where} ('{ref}') {REF_CYCLE}")
        counts: dict[int, int] = {}
        many = next((n for n in schemas if not found
                     and applied(n, self._same_value, counts) > MAX_SCHEMAS_IN_PLACE), None)
        if many is not None:  # definitions that name the same ones twice: 2**N schemas
            found.append(f"the schema at {self.pointers[many] or '/'} applies more than "
                         f"{MAX_SCHEMAS_IN_PLACE:,} schemas to the same value through its "
                         "references (definitions that name the same definitions again, "
                         "as in anyOf: [{$ref: X}, {$ref: X}]); name each definition once")
        return unknown + found

    def _unknown(self, node: dict[str, Any]) -> list[str]:
        """The keywords of a schema that its draft does not have (jsonschema ignores them:
        never a silent pass), each with a "did you mean"."""
        out = []
        pointer = self.pointers.get(id(node), "")
        for key in node:
            if key not in self.known:
                hint = (did_you_mean(key, self.known)
                        if isinstance(key, str) and len(key) <= _HINT_CHARS else "")
                out.append(f"unknown keyword '{key}' at {pointer}/{_step(key)}{hint}: "
                           "a keyword that is not JSON Schema's would be ignored, so it would "
                           "check nothing")
            elif key in ("then", "else", *_BESIDE_CONTAINS):
                # JSON Schema ignores them alone: `else: {required: [b]}` checked nothing
                needs = "if" if key in ("then", "else") else "contains"
                if needs not in node:
                    out.append(f"'{key}' at {pointer}/{_step(key)} has no effect without "
                               f"'{needs}' (JSON Schema ignores it), so it would check "
                               f"nothing; add '{needs}', or write its check in the schema "
                               "itself")
        if "if" in node and "if" in self.keywords and "then" not in node \
                and "else" not in node:  # its result only picks then or else
            out.append(f"'if' at {pointer}/if has no effect without 'then' or 'else' (JSON "
                       "Schema ignores its result), so it would check nothing; add 'then' "
                       "or 'else', or write its check in the schema itself")
        return out

    def _into(self, sub: Any, resolver: Any) -> Any:
        """The resolver of a subschema (a new base URI under an $id), as jsonschema's."""
        return resolver.in_subresource(self.spec.create_resource(sub)) if isinstance(
            sub, dict) else resolver

    def _where(self, node: dict[str, Any], keyword: str) -> str:
        pointer = self.pointers.get(id(node))
        return f"{keyword} at {pointer}/{keyword}" if pointer is not None else keyword

    def _subschemas(self, node: dict[str, Any]) -> Iterator[tuple[Any, bool]]:
        """The subschemas of a schema that apply, in order: (the subschema, whether it
        applies to the same value)."""
        keys = [("$ref", node["$ref"])] if self.legacy and "$ref" in node else node.items()
        for key, value in keys:
            if key not in self.keywords:
                continue
            if key in _SAME_VALUE_LISTS and isinstance(value, list):
                yield from ((sub, True) for sub in value)
            elif key == "not":
                yield value, True
            elif key == "if":  # then and else are applied by if
                yield from ((node[k], True) for k in ("if", "then", "else") if k in node)
            elif key in _SAME_VALUE_MAPS and isinstance(value, dict):
                yield from ((sub, True) for sub in value.values() if isinstance(sub, dict | bool))
            elif key in _PART_LISTS and isinstance(value, list):
                yield from ((sub, False) for sub in value)
            elif key in _PART_MAPS and isinstance(value, dict):
                yield from ((sub, False) for sub in value.values())
            elif key in _PART_ONE:
                yield value, False

    def _references(self, node: dict[str, Any], resolver: Any
                    ) -> Iterator[tuple[str, str, tuple[Any, Any] | None]]:
        """The references of one schema: (where, the reference, (the schema it leads to,
        its resolver) or None when it leads nowhere)."""
        for keyword in _REFS:
            ref = node.get(keyword)
            if keyword not in self.keywords or not isinstance(ref, str):
                continue
            try:
                resolved = (self.lookup_recursive(resolver) if keyword == "$recursiveRef"
                            else resolver.lookup(ref))
            except (self.unresolvable, LookupError, ValueError):  # '#/allOf/x': int('x')
                yield self._where(node, keyword), ref, None
                continue
            yield self._where(node, keyword), ref, (resolved.contents, resolved.resolver)

    def _same_value(self, target: int) -> list[tuple[tuple[str, str], int]]:
        """The references that apply to the same value as the schema ``target``: under
        allOf, anyOf, oneOf, not, if/then/else, dependentSchemas, not under a member's or an
        item's keyword (ref_cycles)."""
        edges: list[tuple[tuple[str, str], int]] = []
        todo: list[tuple[Any, Any]] = [self.targets[target]]
        while todo:
            node, resolver = todo.pop()
            if not isinstance(node, dict):
                continue
            for where, ref, resolved in self._references(node, resolver):
                if resolved is not None and isinstance(resolved[0], dict):
                    self.targets.setdefault(id(resolved[0]), resolved)
                    edges.append(((where, ref), id(resolved[0])))
            todo += [(sub, self._into(sub, resolver))
                     for sub, same in reversed(list(self._subschemas(node))) if same]
        return edges


class SchemaFiles:
    """The JSON Schemas of one suite: ``files(value, path)`` is ``(validator, source)``,
    the validator None after a problem at ``path`` was reported; a file is read and
    compiled once."""

    def __init__(self, loader: LoaderLike, problem: Callable[[Path, str], None]) -> None:
        self.loader = loader
        self.problem = problem
        self._compiled: dict[str, Any] = {}

    def __call__(self, value: Any, path: Path) -> tuple[Any, str]:
        source = "inline"
        if isinstance(value, str):
            source = value
            if value in self._compiled:
                return self._compiled[value], source
            read, schema = self._read(value, path)
            if not read:
                return None, source
        else:
            schema = value
        validator = compile_schema(schema, source, lambda msg: self.problem(path, msg))
        if validator is not None and isinstance(value, str):
            self._compiled[value] = validator
        return validator, source

    def _read(self, value: str, path: Path) -> tuple[bool, Any]:
        """(True, the schema) or, after reporting why not, (False, None)."""
        try:
            text = self.loader.read(real(self.loader.base / value))
        except (OSError, UnicodeDecodeError) as exc:
            reason = "not found" if isinstance(exc, FileNotFoundError) else str(exc)
            self.problem(path, f"JSON Schema file '{value}' cannot be read ({reason}); "
                         "the path is relative to the folder of the suite file")
            return False, None
        try:
            return True, (bounded_loads(text, CONFIG) if value.endswith(".json")
                    else safe_load(text, CONFIG))  # bounded (docs/security.md)
        except YamlLimitError as exc:
            self.problem(path, f"JSON Schema file '{value}' cannot be used: line "
                         f"{exc.line}: {exc.message}")
        except (ValueError, yaml.YAMLError) as exc:
            self.problem(path, f"JSON Schema file '{value}' is not valid JSON/YAML: "
                         f"{str(exc).splitlines()[0]}")
        return False, None
