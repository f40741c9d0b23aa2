"""Compile policy argument schemas (JSON Schema 2020-12 plus the sugar spellings of
docs/config.md) into plain Python closures, once per suite.

A compiled validator takes one JSON value and returns ``None`` when it is valid (the
fast path allocates nothing) or a list of :class:`SchemaError`. Every error carries the
:class:`Constraint` it broke: the keyword as the user wrote it, its rendered text
(``max: 30``) and its exact file/line/column, so a finding points at that line.

Unknown keywords are configuration errors (with a "did you mean"), never ignored: a
misspelt ``maxium`` must not turn into a silent pass.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeVar

import yaml

from agent_eval.errors import ConfigError
from agent_eval.jsonutil import json_type
from agent_eval.lazyre import LazyPattern
from agent_eval.rule_ids import (
    ARGS_VALID_ADDITIONAL_PROPERTIES,
    ARGS_VALID_ANY_OF,
    ARGS_VALID_CONST,
    ARGS_VALID_CONTAINS,
    ARGS_VALID_DEPENDENT_REQUIRED,
    ARGS_VALID_ENUM,
    ARGS_VALID_EXCLUSIVE_MAXIMUM,
    ARGS_VALID_EXCLUSIVE_MINIMUM,
    ARGS_VALID_FALSE_SCHEMA,
    ARGS_VALID_FORMAT,
    ARGS_VALID_MAX_ITEMS,
    ARGS_VALID_MAX_LENGTH,
    ARGS_VALID_MAX_PROPERTIES,
    ARGS_VALID_MAXIMUM,
    ARGS_VALID_MIN_ITEMS,
    ARGS_VALID_MIN_LENGTH,
    ARGS_VALID_MIN_PROPERTIES,
    ARGS_VALID_MINIMUM,
    ARGS_VALID_MULTIPLE_OF,
    ARGS_VALID_NOT,
    ARGS_VALID_ONE_OF,
    ARGS_VALID_PATTERN,
    ARGS_VALID_PROPERTY_NAMES,
    ARGS_VALID_REQUIRED,
    ARGS_VALID_TYPE,
    ARGS_VALID_UNIQUE_ITEMS,
    Rule,
)
from agent_eval.saferegex import RegexError, SafeRegex, compile_ecma
from agent_eval.textdist import did_you_mean
from agent_eval.yamlpos import Path, Positions, YamlLimitError, safe_load


@dataclass(frozen=True, slots=True)
class Constraint:
    """One keyword of a policy, with where it was written."""

    rule: str  # args_valid/maximum
    text: str  # "max: 30", as written
    file: str
    line: int
    col: int
    key_path: str  # tools.apply_discount.arguments.percent.max


@dataclass(slots=True)
class SchemaError:
    """A value that breaks a constraint of a policy schema, and where in the arguments."""

    constraint: Constraint
    path: tuple[str | int, ...]  # where in the arguments (relative)
    value: Any
    message: str  # "Value exceeds maximum"
    missing: bool = False  # the value is absent (required)


Validator = Callable[[Any], "list[SchemaError] | None"]

Node = TypeVar("Node", bound=Hashable)  # ref_cycles: a target of $refs
Where = TypeVar("Where")  # ref_cycles: where a $ref is

SUGAR = {
    "min": "minimum",
    "max": "maximum",
    "exclusive_min": "exclusiveMinimum",
    "exclusive_max": "exclusiveMaximum",
    "min_length": "minLength",
    "max_length": "maxLength",
    "min_items": "minItems",
    "max_items": "maxItems",
}
RULE_OF: dict[str, Rule] = {  # keyword: the rule a value that breaks it reports
    "type": ARGS_VALID_TYPE,
    "enum": ARGS_VALID_ENUM,
    "const": ARGS_VALID_CONST,
    "minimum": ARGS_VALID_MINIMUM,
    "maximum": ARGS_VALID_MAXIMUM,
    "exclusiveMinimum": ARGS_VALID_EXCLUSIVE_MINIMUM,
    "exclusiveMaximum": ARGS_VALID_EXCLUSIVE_MAXIMUM,
    "multipleOf": ARGS_VALID_MULTIPLE_OF,
    "minLength": ARGS_VALID_MIN_LENGTH,
    "maxLength": ARGS_VALID_MAX_LENGTH,
    "pattern": ARGS_VALID_PATTERN,
    "format": ARGS_VALID_FORMAT,
    "required": ARGS_VALID_REQUIRED,
    "additionalProperties": ARGS_VALID_ADDITIONAL_PROPERTIES,
    "propertyNames": ARGS_VALID_PROPERTY_NAMES,
    "minProperties": ARGS_VALID_MIN_PROPERTIES,
    "maxProperties": ARGS_VALID_MAX_PROPERTIES,
    "dependentRequired": ARGS_VALID_DEPENDENT_REQUIRED,
    "minItems": ARGS_VALID_MIN_ITEMS,
    "maxItems": ARGS_VALID_MAX_ITEMS,
    "uniqueItems": ARGS_VALID_UNIQUE_ITEMS,
    "contains": ARGS_VALID_CONTAINS,
    "minContains": ARGS_VALID_CONTAINS,
    "maxContains": ARGS_VALID_CONTAINS,
    "anyOf": ARGS_VALID_ANY_OF,
    "oneOf": ARGS_VALID_ONE_OF,
    "not": ARGS_VALID_NOT,
}
APPLICATORS = {
    "properties", "patternProperties", "items", "prefixItems", "allOf",
    "if", "then", "else", "dependentSchemas", "$ref",
}
ANNOTATIONS = {
    "title", "description", "default", "examples", "$comment", "$schema", "$id", "$anchor",
    "deprecated", "readOnly", "writeOnly", "contentEncoding", "contentMediaType",
    "contentSchema", "$defs", "definitions",
}
UNSUPPORTED = {
    "unevaluatedProperties": "use additionalProperties",
    "unevaluatedItems": "use items / prefixItems",
    "$dynamicRef": "use $ref",
    "$dynamicAnchor": "use $ref",
    "$recursiveRef": "use $ref",
    "$recursiveAnchor": "use $ref",
    "$vocabulary": "remove it",
    "dependencies": "use dependentRequired or dependentSchemas",
}
KNOWN = set(RULE_OF) | APPLICATORS | ANNOTATIONS | set(SUGAR)
JSON_TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")


# ---------------------------------------------------------------------------- helpers
def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "number": _is_number,
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
}


def json_key(value: Any) -> Any:
    """A hashable key with JSON equality: 1 == 1.0, but true != 1."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        exact_float = isinstance(value, float) or abs(value) < 2**53
        return ("n", float(value)) if exact_float else ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, list):
        return ("a", tuple(json_key(v) for v in value))
    if isinstance(value, dict):
        return ("o", tuple(sorted((k, json_key(v)) for k, v in value.items())))
    return ("?", repr(value))


def render(value: Any) -> str:
    """Render a policy value the way a YAML reader would recognise it."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {render(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e16 else repr(value)
    if isinstance(value, str) and not _reads_back(value):
        # quoted as YAML would need it: '1' is a string, 1 a number
        if value.isprintable():
            return "'" + value.replace("'", "''") + "'"
        return json.dumps(value, ensure_ascii=False)
    return str(value)


_PLAIN = LazyPattern(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_YAML_WORDS = frozenset(("yes", "no", "on", "off", "true", "false", "null"))


def _reads_back(text: str) -> bool:
    """Would YAML read ``text`` unquoted (inside a flow list, too) as this same string?"""
    if _PLAIN.match(text):
        return text.lower() not in _YAML_WORDS
    if not text or text != text.strip() or any(ch in text for ch in ",[]{}#\"'\n"):
        return False
    try:
        return bool(safe_load(text) == text)
    except (yaml.YAMLError, YamlLimitError):
        return False


def _err(c: Constraint, value: Any, message: str, path: tuple[str | int, ...] = ()) -> list[
    SchemaError
]:
    return [SchemaError(c, path, value, message)]


def _prefix(errors: list[SchemaError], step: str | int) -> list[SchemaError]:
    for e in errors:
        e.path = (step, *e.path)
    return errors


# ------------------------------------------------------------------------------ regexes
def ecma_regex(pattern: str) -> SafeRegex:
    """Compile a JSON Schema pattern (ECMA-262) for RE2, which matches in linear time
    (:mod:`agent_eval.saferegex`): ``\\d``, ``\\w`` and ``\\b`` are ASCII, ``\\s`` is
    ECMA's whitespace, ``$`` matches only at the very end (so ``^ls$`` does not accept
    "ls\\n") and ``.`` no line terminator. Raises :class:`RegexError` for an invalid
    pattern, or one that needs backtracking (lookaround, backreferences)."""
    return compile_ecma(pattern)


# ----------------------------------------------------------------------------- formats
# ASCII only (\d must not match other scripts' digits) and anchored with \Z: in Python,
# ``$`` also matches before a trailing newline, so "…\n" would pass.
_DATE_TIME = LazyPattern(
    r"^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2}))\Z",
    re.ASCII,
)
_DATE = LazyPattern(r"^\d{4}-\d{2}-\d{2}\Z", re.ASCII)
_TIME = LazyPattern(r"^(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))\Z",
                    re.ASCII)
# RFC 5322 dot-atom local part (no leading, trailing or doubled dot) @ a dotted domain.
_ATEXT = r"[^@\s\"(),.:;<>\[\\\]]+"
_EMAIL = LazyPattern(rf"^{_ATEXT}(?:\.{_ATEXT})*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                     r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+\Z")
_URI = LazyPattern(r"^[A-Za-z][A-Za-z0-9+.\-]*:\S*\Z")
_UUID = LazyPattern(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z"
)
_HOSTNAME = LazyPattern(
    r"^(?=.{1,253}\Z)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?\Z"
)


def _valid_time(s: str) -> bool:
    """RFC 3339 full-time; a leap second (:60) only at 23:59 UTC."""
    m = _TIME.match(s)
    if not m:
        return False
    hour, minute, second = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if hour > 23 or minute > 59 or second > 60:
        return False
    if m.group(4) is not None:
        off_h, off_m = int(m.group(5)), int(m.group(6))
        if off_h > 23 or off_m > 59:
            return False
        if second == 60:
            sign = 1 if m.group(4) == "+" else -1
            utc = (hour * 60 + minute - sign * (off_h * 60 + off_m)) % (24 * 60)
            return utc == 23 * 60 + 59
    return second < 60 or (hour, minute) == (23, 59)


def _valid_date_time(s: str) -> bool:
    m = _DATE_TIME.match(s)
    return m is not None and _valid_date(m.group(1)) and _valid_time(m.group(2))


def _valid_date(s: str) -> bool:
    if not _DATE.match(s):
        return False
    try:
        date.fromisoformat(s)
    except ValueError:
        return False
    return True


def _valid_ip(kind: type[ipaddress.IPv4Address] | type[ipaddress.IPv6Address]) -> Callable[
    [str], bool
]:
    def check(s: str) -> bool:
        if "%" in s:  # an IPv6 zone id ("fe80::1%eth0") is not part of the address
            return False
        try:
            kind(s)
        except ValueError:
            return False
        return True

    return check


FORMATS: dict[str, Callable[[str], bool]] = {
    "date-time": _valid_date_time,
    "date": _valid_date,
    "time": _valid_time,
    "email": lambda s: _EMAIL.match(s) is not None,
    "uri": lambda s: _URI.match(s) is not None,
    "uuid": lambda s: _UUID.match(s) is not None,
    "ipv4": _valid_ip(ipaddress.IPv4Address),
    "ipv6": _valid_ip(ipaddress.IPv6Address),
    "hostname": lambda s: _HOSTNAME.match(s) is not None,
}


def _decimal(x: int | float) -> tuple[int, int]:
    """A finite number as the decimal it was written as (its shortest round-trip form):
    ``(n, k)`` with ``x == n * 10**-k``. ``19.99`` is ``(1999, 2)``, ``1e+17`` ``(1, -17)``."""
    if isinstance(x, int):
        return x, 0
    mantissa, _, exponent = repr(x).partition("e")
    whole, _, fraction = mantissa.partition(".")
    return int(whole + fraction), len(fraction) - int(exponent or 0)


def _is_multiple(v: int | float, m: int | float, step: tuple[int, int]) -> bool:
    """``v`` is a whole multiple of ``m`` (``step`` is ``_decimal(m)``), decided exactly on
    the decimal numbers as written: 19.99 is a multiple of 0.01 although neither is exact
    in binary floating point; 10000000000.5 is not a multiple of 1 and 1e-10 is not one of
    3. Integers are exact."""
    if isinstance(v, int) and isinstance(m, int):
        return v % m == 0
    try:
        q = v / m
    except OverflowError:  # an integer beyond the float range
        q = math.inf
    if math.isfinite(q):
        # Fast rejection: for a true decimal multiple the binary quotient is off by a few
        # units in the last place (~1e-16 relative), far below this bound.
        if abs(q - round(q)) > 1e-9 * abs(q):
            return False
    elif isinstance(v, float) and not math.isfinite(v):  # (an int is finite, however large)
        return False
    a, ka = _decimal(v)
    b, kb = step
    k = max(ka, kb)
    return bool((a * 10 ** (k - ka)) % (b * 10 ** (k - kb)) == 0)


# ---------------------------------------------------------------------------- compiler
def _always_valid(_: Any) -> list[SchemaError] | None:
    return None


@dataclass(frozen=True, slots=True)
class Fast:
    """The test of a validator (see :meth:`SchemaCompiler.fused`): ``source(x)`` is a
    Python expression over the variable ``x`` that is true only when the validator finds
    nothing in ``x``'s value; ``depth`` is how deep it nests other nodes' tests."""

    source: Callable[[str], str]
    depth: int


MAX_INLINE_DEPTH = 3  # a deeper node's test is called, not inlined (bounded source nesting)
# at most this many names in one object's test: compiling the source of a test costs about
# 0.1 ms a name, once; an object schema with thousands of properties keeps its closures only
MAX_MEMBERS = 64
_MISSING = object()
# the keyword ``type``'s tests as expressions, the same as _TYPE_TESTS
_TYPE_SOURCES: dict[str, str] = {
    "null": "{x} is None",
    "boolean": "isinstance({x}, bool)",
    "object": "isinstance({x}, dict)",
    "array": "isinstance({x}, list)",
    "string": "isinstance({x}, str)",
    "number": "_NUMBER({x})",
    "integer": "(isinstance({x}, int) and not isinstance({x}, bool)) or "
               "(isinstance({x}, float) and {x}.is_integer())",
}


def _on_dicts(members: Fast) -> Fast:
    """The test of a keyword on an object's members (``members``, see
    :meth:`SchemaCompiler.members_test`): true of any value that is not an object."""
    source = members.source("{x}")
    return Fast(lambda x: f"(not isinstance({x}, dict) or {source.replace('{x}', x)})",
                members.depth)


def _true(_: Any) -> bool:
    return True


# the stand-in error of a keyword over its subschemas' tests (SchemaCompiler.as_test):
# only whether there is one is asked, so it names no rule
_REJECTED = Constraint("", "(test)", "", 0, 0, "")


def _function(expression: str, names: dict[str, Any]) -> Callable[[Any], bool]:
    """The generated test function ``accept(v)``; ``names`` are its globals."""
    scope: dict[str, Any] = {}
    exec(compile(f"def accept(v):\n    return {expression}\n", "<schema test>", "exec"),
         names, scope)
    accept: Callable[[Any], bool] = scope["accept"]
    return accept


# the keywords whose schemas apply to the value itself, not to a member or an item of it
# (then and else only beside an if); with $ref, the edges of a cycle that never ends
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if")
_IN_PLACE_BESIDE_IF = ("then", "else")
# how deep schemas may nest while compiling: a document nests at most limits.max_depth (100)
# levels, so only a chain of $refs (each into another definition) goes deeper; deeper
# would exhaust Python's stack, compiling or validating
MAX_SCHEMA_DEPTH = 128
# how many schemas a schema may apply to one value, counting each $ref it leads through
# (in place: allOf, anyOf, ...) once per way it is reached: definitions that each name the
# next twice (anyOf: [{$ref: d1}, {$ref: d1}]) apply 2**N schemas, checked one by one
# (22 such definitions, a 2 KB policy, did not finish checking one argument in minutes)
MAX_SCHEMAS_IN_PLACE = 10_000
REF_CYCLE = ("refers back to itself without descending into a property or an item; reach "
             "it again only under 'properties', 'items' or the like, or remove this $ref")


def ref_cycles(starts: Iterable[Node], edges: Callable[[Node], Iterable[tuple[Where, Node]]],
               done: set[Node]) -> list[Where]:
    """The references that close a cycle of a graph: its nodes are the targets of
    ``$ref``s, ``edges(node)`` the references that apply to the same value as ``node``
    (``(where the reference is, its target)``, in document order). A cycle of them never
    consumes any of the value, so validating along it would never end. Depth first from
    each of ``starts``, not from one in ``done`` (explored, kept across calls): every
    cycle has one edge into a node still being explored, and each such edge is returned,
    once."""
    found: list[Where] = []
    for start in starts:
        if start in done:
            continue
        open_: set[Node] = {start}
        stack = [(start, iter(edges(start)))]
        while stack:
            node, todo = stack[-1]
            for where, target in todo:
                if target in open_:
                    found.append(where)
                elif target not in done:
                    open_.add(target)
                    stack.append((target, iter(edges(target))))
                    break
            else:
                stack.pop()
                open_.discard(node)
                done.add(node)
    return found


def applied(start: Node, edges: Callable[[Node], Iterable[tuple[Where, Node]]],
            counts: dict[Node, int]) -> int:
    """How many schemas the schema ``start`` applies to a value: itself, and those its
    references that apply to the same value lead to (``edges``, as for :func:`ref_cycles`),
    once per reference (a definition two of them name is applied twice), at most
    ``MAX_SCHEMAS_IN_PLACE + 1``. ``counts`` keeps each schema's count across calls.
    Without recursion (a chain of references may be long); a reference back to a schema
    being counted (a cycle: reported by ref_cycles) counts one."""
    cap = MAX_SCHEMAS_IN_PLACE + 1
    open_: set[Node] = {start}
    stack = [(start, iter(edges(start)), 1)]
    while stack:
        node, todo, total = stack[-1]
        for _, sub in todo:
            if sub in counts or sub in open_:
                total = min(cap, total + counts.get(sub, 1))
                continue
            stack[-1] = (node, todo, total)
            open_.add(sub)
            stack.append((sub, iter(edges(sub)), 1))
            break
        else:
            stack.pop()
            open_.discard(node)
            counts[node] = total
            if stack:
                parent, rest, sofar = stack[-1]
                stack[-1] = (parent, rest, min(cap, sofar + total))
    return counts[start]


class SchemaCompiler:
    """Compiles the schema nodes of one policy document."""

    def __init__(self, doc: Any, positions: Positions) -> None:
        self.doc = doc
        self.positions = positions
        self._refs: dict[Path, Validator] = {}
        self._roots: list[Path] = []
        # $ref cycles on the same value (ref_cycles): the targets explored, the $refs of
        # each target that apply to the same value, and the $refs that close a cycle
        self._explored: set[Path] = set()
        self._in_place: dict[Path, list[tuple[Path, Path]]] = {}
        self._cycles: set[Path] = set()
        self._applied: dict[Path, int] = {}  # target -> schemas it applies (in place)
        self._depth = 0  # how deeply compile() calls nest (MAX_SCHEMA_DEPTH)
        # every problem found so far (FILE:LINE:COL: message); a keyword with a problem
        # is left out and compiling goes on, so that one run reports them all
        self.problems: list[str] = []
        # the fast path (see "Accepting fast" below): the test of each validator that has
        # one, and the names its generated code refers to
        self._fast: dict[Validator, Fast] = {}
        # a keyword validator with subschemas and no test of its own: its *twin*, the same
        # keyword over its subschemas' tests (see as_test); and each validator's test as a
        # function (test_fn), made on demand
        self._twins: dict[Validator, Validator] = {}
        self._tests: dict[Validator, Callable[[Any], bool]] = {}
        self._names: dict[str, Any] = {"_MISSING": _MISSING, "_NUMBER": _is_number,
                                       "_json_key": json_key}
        self._vars = 0

    # -- positions
    def constraint(self, path: Path, key: str, value: Any, rule: Rule | None = None,
                   text: str | None = None) -> Constraint:
        pos = self.positions.get((*path, key))
        return Constraint(
            rule=(rule or RULE_OF[SUGAR.get(key, key)]).id,
            text=text if text is not None else f"{key}: {render(value)}",
            file=self.positions.file_of(pos),
            line=pos.line,
            col=pos.col,
            key_path=".".join(str(p) for p in (*path, key)),
        )

    def node_constraint(self, path: Path, rule: Rule, text: str) -> Constraint:
        """A constraint located at a node itself (e.g. a ``false`` schema)."""
        pos = self.positions.get(path)
        return Constraint(rule.id, text, self.positions.file_of(pos), pos.line,
                          pos.col,
                          ".".join(str(p) for p in path))

    def fail(self, path: Path, message: str) -> ConfigError:
        return self.positions.error(path, message)

    def report(self, path: Path, message: str) -> None:
        """Record a problem and go on."""
        problem = f"{self.positions.where(path)}: {message}"
        if problem not in self.problems:
            self.problems.append(problem)

    def _record(self, exc: ConfigError) -> None:
        for problem in exc.problems:
            if problem not in self.problems:
                self.problems.append(problem)

    def checked(self, node: Any, path: Path, *, as_property: bool = False) -> Validator:
        """:meth:`compile`, raising the node's problems (all of them) as one
        ``ConfigError``."""
        before = len(self.problems)
        check = self.compile(node, path, as_property=as_property)
        if len(self.problems) > before:
            found = self.problems[before:]
            del self.problems[before:]
            raise ConfigError(found)
        return check

    # -- entry points
    def compile_root(self, node: Any, path: Path) -> Validator:
        """Compile a full JSON Schema (a tool's ``schema:``); ``$ref`` resolves in it too."""
        self._roots.append(path)
        try:
            return self.compile(node, path)
        finally:
            self._roots.pop()

    def compile(self, node: Any, path: Path, *, as_property: bool = False) -> Validator:
        """The validator of one schema node. Problems are recorded in :attr:`problems`
        (the keyword that has one is left out); nothing is raised."""
        self._depth += 1
        try:
            self._bound_applied(node, path)
            return self._compile(node, path, as_property)
        except ConfigError as exc:
            self._record(exc)
            return _always_valid
        finally:
            self._depth -= 1

    def _compile(self, node: Any, path: Path, as_property: bool) -> Validator:
        if node is True or node is None:
            return _always_valid
        if node is False:
            c = self.node_constraint(path, ARGS_VALID_FALSE_SCHEMA, "false")

            def false_schema(v: Any) -> list[SchemaError] | None:
                return _err(c, v, "No value is allowed here")

            return false_schema
        if not isinstance(node, dict):
            raise self.fail(path, f"a schema must be a mapping or true/false, not "
                                  f"{json_type(node)}")
        checks: list[Validator] = []
        seen_canonical: dict[str, str] = {}
        for key, value in node.items():
            key = str(key)
            canonical = SUGAR.get(key, key)
            if key in UNSUPPORTED:
                self.report((*path, key), f"'{key}' is not supported: {UNSUPPORTED[key]}")
                continue
            if key not in KNOWN:
                self.report((*path, key), f"unknown schema keyword '{key}'"
                                          f"{did_you_mean(key, KNOWN)}")
                continue
            if canonical in seen_canonical:
                self.report((*path, key), f"'{key}' repeats '{seen_canonical[canonical]}'")
                continue
            seen_canonical[canonical] = key
            lone = (("then", "else", "if") if canonical in ("then", "else") else
                    ("minContains", "maxContains", "contains")
                    if canonical in ("minContains", "maxContains") else None)
            if lone is not None and lone[2] not in node:
                # JSON Schema ignores it: a policy's `then: {max: 100}` checked nothing
                if lone[2] == "if":
                    self.compile(value, (*path, key))  # its own problems are said too
                self.report((*path, key), f"'{key}' has no effect without '{lone[2]}' (JSON "
                            f"Schema ignores it), so it would check nothing; add "
                            f"'{lone[2]}', or write its check in the schema itself")
                continue
            if canonical == "if" and "then" not in node and "else" not in node:
                # JSON Schema uses its result only to pick then or else: it checked nothing
                self.compile(value, (*path, key))  # its own problems are said too
                self.report((*path, key), "'if' has no effect without 'then' or 'else' (JSON "
                            "Schema ignores its result), so it would check nothing; add "
                            "'then' or 'else', or write its check in the schema itself")
                continue
            if key in ANNOTATIONS or canonical in ("then", "else", "minContains", "maxContains"):
                continue  # annotations; then/else and min/maxContains compile with if/contains
            if key == "required" and isinstance(value, bool):
                if not as_property:
                    self.report((*path, key), "'required: true' applies to an argument or "
                                "a property; in an object schema write required: [names]")
                continue  # consumed by the parent object
            try:
                check = self._keyword(node, path, key, canonical, value)
            except ConfigError as exc:
                self._record(exc)
                continue
            if check is not None:
                checks.append(check)
        return self.fused(checks)

    # -- accepting fast
    # A validator is a tree of closures, one per keyword: about 0.3 µs a keyword a value
    # even when the value is valid, as nearly all are. So each schema node also gets its
    # *test*: Python source of one expression that is true only when the node's validator
    # finds nothing, compiled (on first use) into one function. A valid value then costs
    # one call; a value the test rejects goes through the validator, which says why. The
    # tests are derived from the same keywords, and tests/config/test_schema_compiler.py
    # checks them against the validators (and both against jsonschema).
    # A test calls only other tests (test_fn), never a validator of a subschema: a
    # validator runs its test and, when that fails, its keywords' validators, so a test
    # that called validators would run each nested part twice more at every level of a
    # value, and a value invalid deep inside would take exponential time. A test runs
    # each nested node once, so a node's validator costs its test plus its subschemas'
    # validators: linear in the value at each level, at most depth × size in all.
    def bind(self, value: Any, prefix: str = "_k") -> str:
        """A name for ``value`` in the generated code (values never become source text);
        a test function's starts ``_t`` (:meth:`call_test`)."""
        name = f"{prefix}{len(self._names)}"
        self._names[name] = value
        return name

    def call_test(self, check: Validator, x: str) -> str:
        """The source of a call of ``check``'s test function on variable ``x``."""
        return f"{self.bind(self.test_fn(check), '_t')}({x})"

    def test_of(self, check: Validator) -> Fast:
        """The test of a validator: its own, or a call of its test function."""
        fast = self._fast.get(check)
        if fast is not None:
            return fast
        if check is _always_valid:
            return Fast(lambda x: "True", 0)
        call = self.call_test(check, "{x}")
        return Fast(lambda x: call.replace("{x}", x), 0)

    def test_fn(self, check: Validator) -> Callable[[Any], bool]:
        """The test of ``check`` as a function: true only when ``check`` finds nothing.
        It calls other tests only: ``check``'s generated test (compiled on first use),
        its twin (:meth:`twin`), or ``check`` itself when that calls no validator of a
        subschema (a keyword on the value alone, or one over its subschemas' tests)."""
        fn = self._tests.get(check)
        if fn is not None:
            return fn
        fast = self._fast.get(check)
        twin = self._twins.get(check)
        if check is _always_valid:
            fn = _true
        elif fast is not None:
            fn = self._compiled(fast)
        elif twin is not None:
            def by_twin(v: Any) -> bool:
                return twin(v) is None

            fn = by_twin
        else:
            def by_itself(v: Any) -> bool:
                return check(v) is None

            fn = by_itself
        self._tests[check] = fn
        return fn

    def _compiled(self, fast: Fast) -> Callable[[Any], bool]:
        """``fast`` as a function, compiled on its first call."""
        names = self._names
        compiled: list[Callable[[Any], bool]] = []

        def test(v: Any) -> bool:
            if not compiled:
                compiled.append(_function(fast.source("v"), names))
            return compiled[0](v)

        return test

    def as_test(self, check: Validator) -> Validator:
        """The test of ``check`` in the shape of a validator, for a keyword over its
        subschemas' tests: None when the test accepts, else a list of one stand-in
        error (only whether there is one counts; the real errors come from ``check``).
        The test function is looked up on the first call, when every $ref has its
        target."""
        return self._as_test_of(lambda: check)

    def _as_test_of(self, get: Callable[[], Validator]) -> Validator:
        """:meth:`as_test` of the validator ``get()`` (called once, on the first call)."""
        found: list[Callable[[Any], bool]] = []
        test_fn = self.test_fn

        def test(v: Any) -> list[SchemaError] | None:
            if not found:
                found.append(test_fn(get()))
            if found[0](v):
                return None
            return [SchemaError(_REJECTED, (), v, "Rejected by the test")]

        return test

    def twin(self, full: Validator, over_tests: Validator) -> Validator:
        """Record ``over_tests`` (the keyword of ``full`` built over its subschemas'
        tests, :meth:`as_test`) as the twin that decides ``full``'s test; ``full``."""
        self._twins[full] = over_tests
        return full

    def all_of(self, checks: list[Validator]) -> Validator:
        """:func:`all_of`, with its twin when it is more than one of ``checks``."""
        full = all_of(checks)
        if len(checks) > 1:
            self.twin(full, all_of([self.as_test(c) for c in checks]))
        return full

    def accept(self, check: Validator) -> Callable[[Any], bool]:
        """The test of ``check`` as a function: true only when ``check`` finds nothing."""
        return _function(self.test_of(check).source("v"), self._names)

    def _leaf(self, check: Validator, test: Callable[[str], str]) -> Validator:
        self._fast[check] = Fast(test, 0)
        return check

    def fused(self, checks: list[Validator]) -> Validator:
        """All of ``checks`` (:func:`all_of`), behind the conjunction of their tests."""
        full = self.all_of(checks)
        if full in self._fast or not any(c in self._fast for c in checks):
            return full  # one keyword (its own test is no faster than it), or no test
        tests = [self.test_of(c) for c in checks]

        def test(x: str) -> str:
            return "(" + " and ".join(t.source(x) for t in tests) + ")"

        return self.guarded(full, Fast(test, max(t.depth for t in tests)))

    def guarded(self, full: Validator, fast: Fast) -> Validator:
        """``full`` behind its test ``fast``: the test (compiled on first use) accepts a
        value, or ``full`` says what is wrong with it."""
        names = self._names
        accept: list[Callable[[Any], bool]] = []

        def node(v: Any) -> list[SchemaError] | None:
            if not accept:
                accept.append(_function(fast.source("v"), names))
            if accept[0](v):
                return None
            return full(v)

        def test(v: Any) -> bool:
            if not accept:
                accept.append(_function(fast.source("v"), names))
            return accept[0](v)

        self._fast[node] = fast
        self._tests[node] = test
        return node

    def inline(self, check: Validator, x: str) -> str:
        """The test of ``check`` on variable ``x``: inlined, unless that nests too deep
        (then a call of its test function)."""
        fast = self.test_of(check)
        if fast.depth >= MAX_INLINE_DEPTH:
            return self.call_test(check, x)
        return fast.source(x)

    def variable(self) -> str:
        """A fresh variable name for the generated code."""
        self._vars += 1
        return f"_v{self._vars}"

    def members_test(self, required: tuple[str, ...], subs: tuple[tuple[str, Validator], ...],
                     closed: frozenset[str] | None) -> Fast | None:
        """The test of an object's members (``properties``, a tool's ``arguments``) on a
        value known to be a dict: the ``required`` names present, each of ``subs`` valid
        when present, no name outside ``closed`` (when given). None for more than
        :data:`MAX_MEMBERS` names (compiling the test would cost more than it saves)."""
        if len(required) + len(subs) > MAX_MEMBERS:
            return None
        parts = [f"{self.bind(n)} in {{x}}" for n in required]
        depth = 0
        for name, check in subs:
            depth = max(depth, self.test_of(check).depth + 1)
            y = self.variable()
            parts.append(f"(({y} := {{x}}.get({self.bind(name)}, _MISSING)) is _MISSING or "
                         f"{self.inline(check, y)})")
        if closed is not None:
            parts.append(f"{self.bind(closed)}.issuperset({{x}})")
        source = "(" + " and ".join(parts or ["True"]) + ")"
        return Fast(lambda v: source.replace("{x}", v), depth)

    # -- keywords
    def _keyword(self, node: dict[str, Any], path: Path, key: str, kw: str,
                 value: Any) -> Validator | None:
        here = (*path, key)
        handler = getattr(self, "_kw_" + kw.lstrip("$"), None)
        if handler is None:  # pragma: no cover - KNOWN and the handlers agree
            raise self.fail(here, f"keyword '{key}' has no implementation")
        result: Validator | None = handler(node, path, key, value)
        return result

    def _no_misread(self, path: Path) -> None:
        """A value compared with the trace's that YAML 1.1 read as other than it looks
        (``off`` as false, ``0777`` as 511) is a config error (:meth:`Positions.misread`):
        ``not: {enum: [off]}`` let ``"off"`` through."""
        problem = self.positions.misread(path)
        if problem is not None:
            raise ConfigError([problem])

    def _need(self, ok: bool, path: Path, key: str, what: str) -> None:
        if not ok:
            raise self.fail((*path, key), f"'{key}' must be {what}")

    def _kw_type(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        names = value if isinstance(value, list) else [value]
        # (type: [] allowed no value: a policy failed every call, with "Expected , got
        # string", and a selector's condition selected none, so its blocklist passed)
        self._need(bool(names), path, key, "a type name or a non-empty list of type names")
        for n in names:
            if n not in JSON_TYPES:
                raise self.fail((*path, key), f"unknown type '{n}'; use one of "
                                f"{', '.join(JSON_TYPES)}{did_you_mean(str(n), set(JSON_TYPES))}")
        tests = tuple(_TYPE_TESTS[n] for n in names)
        c = self.constraint(path, key, value)
        wanted = " or ".join(names)

        source = "(" + " or ".join(f"({_TYPE_SOURCES[n]})" for n in names) + ")"
        if names == ["string"]:
            source = "({x}.__class__ is str or isinstance({x}, str))"  # the usual case first

        if len(tests) == 1:
            test = tests[0]

            def type1(v: Any) -> list[SchemaError] | None:
                if test(v):
                    return None
                return _err(c, v, f"Expected {wanted}, got {json_type(v)}")

            return self._leaf(type1, lambda x: source.replace("{x}", x))

        def typen(v: Any) -> list[SchemaError] | None:
            for t in tests:
                if t(v):
                    return None
            return _err(c, v, f"Expected {wanted}, got {json_type(v)}")

        return self._leaf(typen, lambda x: source.replace("{x}", x))

    def _kw_enum(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        self._need(isinstance(value, list) and len(value) > 0, path, key, "a non-empty list")
        self._no_misread((*path, key))
        allowed = frozenset(json_key(v) for v in value)
        c = self.constraint(path, key, value)

        def enum(v: Any) -> list[SchemaError] | None:
            if json_key(v) in allowed:
                return None
            return _err(c, v, "Value is not one of the allowed values")

        # a str is in the enum when it is one of its strings (json_key of a str is ("s", it))
        strings, keys = self.bind(frozenset(v for v in value if isinstance(v, str))), \
            self.bind(allowed)
        return self._leaf(enum, lambda x: f"({x} in {strings} if {x}.__class__ is str "
                                          f"else _json_key({x}) in {keys})")

    def _kw_const(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        self._no_misread((*path, key))
        expected = json_key(value)
        c = self.constraint(path, key, value)

        def const(v: Any) -> list[SchemaError] | None:
            if json_key(v) == expected:
                return None
            return _err(c, v, "Value is not the required constant")

        key = self.bind(expected)
        return self._leaf(const, lambda x: f"_json_key({x}) == {key}")

    def _bound(self, path: Path, key: str, value: Any, message: str,
               ok: Callable[[Any, Any], bool], op: str | None = None) -> Validator:
        """A numeric bound; ``op`` the comparison ``ok`` makes, for its test."""
        self._need(_is_number(value), path, key, "a number")
        c = self.constraint(path, key, value)
        limit = value

        def bound(v: Any) -> list[SchemaError] | None:
            if not _is_number(v) or ok(v, limit):
                return None
            return _err(c, v, message)

        if op is None:
            return bound
        name = self.bind(limit)
        return self._leaf(bound, lambda x: f"({x} {op} {name} if ({x}.__class__ is int or "
                                           f"{x}.__class__ is float) else not _NUMBER({x}))")

    def _kw_minimum(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        return self._bound(path, key, value, "Value is below minimum", lambda v, m: v >= m, ">=")

    def _kw_maximum(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        return self._bound(path, key, value, "Value exceeds maximum", lambda v, m: v <= m, "<=")

    def _kw_exclusiveMinimum(self, node: dict[str, Any], path: Path, key: str,
                             value: Any) -> Validator:
        return self._bound(path, key, value, "Value must be greater than the exclusive minimum",
                           lambda v, m: v > m, ">")

    def _kw_exclusiveMaximum(self, node: dict[str, Any], path: Path, key: str,
                             value: Any) -> Validator:
        return self._bound(path, key, value, "Value must be less than the exclusive maximum",
                           lambda v, m: v < m, "<")

    def _kw_multipleOf(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        self._need(_is_number(value) and value > 0 and math.isfinite(value), path, key,
                   "a finite number greater than 0")

        step = _decimal(value)

        def ok(v: Any, m: Any) -> bool:
            return _is_multiple(v, m, step)

        return self._bound(path, key, value, f"Value is not a multiple of {render(value)}", ok)

    def _length(self, path: Path, key: str, value: Any, message: str, longer: bool,
                kind: type[str] | type[list[Any]] | type[dict[str, Any]]) -> Validator:
        self._need(isinstance(value, int) and not isinstance(value, bool) and value >= 0,
                   path, key, "a whole number ≥ 0")
        c = self.constraint(path, key, value)
        limit = value

        kind_name = kind.__name__  # str, list or dict: a builtin's name
        op = "<=" if longer else ">="
        bound = self.bind(limit)

        def test(x: str) -> str:
            return f"(not isinstance({x}, {kind_name}) or len({x}) {op} {bound})"

        if longer:
            def at_most(v: Any) -> list[SchemaError] | None:
                if not isinstance(v, kind) or len(v) <= limit:
                    return None
                return _err(c, v, message)

            return self._leaf(at_most, test)

        def at_least(v: Any) -> list[SchemaError] | None:
            if not isinstance(v, kind) or len(v) >= limit:
                return None
            return _err(c, v, message)

        return self._leaf(at_least, test)

    def _kw_minLength(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        return self._length(path, key, value, "String is shorter than the minimum length",
                            False, str)

    def _kw_maxLength(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        return self._length(path, key, value, "String is longer than the maximum length",
                            True, str)

    def _kw_minItems(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        return self._length(path, key, value, "Array has fewer items than the minimum",
                            False, list)

    def _kw_maxItems(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        return self._length(path, key, value, "Array has more items than the maximum",
                            True, list)

    def _kw_minProperties(self, node: dict[str, Any], path: Path, key: str,
                          value: Any) -> Validator:
        return self._length(path, key, value, "Object has fewer properties than the minimum",
                            False, dict)

    def _kw_maxProperties(self, node: dict[str, Any], path: Path, key: str,
                          value: Any) -> Validator:
        return self._length(path, key, value, "Object has more properties than the maximum",
                            True, dict)

    def _kw_pattern(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        self._need(isinstance(value, str), path, key, "a string (a regular expression)")
        try:
            regex = ecma_regex(value)
        except RegexError as exc:
            raise self.fail((*path, key), f"invalid regular expression: {exc}") from None
        c = self.constraint(path, key, value)
        search = regex.search

        def pattern(v: Any) -> list[SchemaError] | None:
            if not isinstance(v, str) or search(v) is not None:
                return None
            return _err(c, v, "String does not match the pattern")

        name = self.bind(search)
        return self._leaf(pattern, lambda x: f"(not isinstance({x}, str) or "
                                             f"{name}({x}) is not None)")

    def _kw_format(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        self._need(isinstance(value, str), path, key,
                   f"a string naming a format ({', '.join(FORMATS)})")
        if value not in FORMATS:
            raise self.fail((*path, key), f"unsupported format '{value}'; supported: "
                            f"{', '.join(FORMATS)}{did_you_mean(str(value), set(FORMATS))}")
        test = FORMATS[value]
        c = self.constraint(path, key, value)
        message = f"String is not a valid {value}"

        def fmt(v: Any) -> list[SchemaError] | None:
            if not isinstance(v, str) or test(v):
                return None
            return _err(c, v, message)

        name = self.bind(test)
        return self._leaf(fmt, lambda x: f"(not isinstance({x}, str) or {name}({x}))")

    def _kw_uniqueItems(self, node: dict[str, Any], path: Path, key: str,
                        value: Any) -> Validator | None:
        self._need(isinstance(value, bool), path, key, "true or false")
        if not value:
            return None
        c = self.constraint(path, key, value)

        def unique(v: Any) -> list[SchemaError] | None:
            if not isinstance(v, list):
                return None
            seen: set[Any] = set()
            for i, item in enumerate(v):
                k = json_key(item)
                if k in seen:
                    return _err(c, item, "Array items are not unique", (i,))
                seen.add(k)
            return None

        return unique

    # -- objects
    def _kw_required(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        self._need(isinstance(value, list) and all(isinstance(n, str) for n in value),
                   path, key, "a list of property names (or, on an argument, true/false)")
        items = tuple((n, self._required_constraint(path, key, i, value))
                      for i, n in enumerate(value))
        check = _required_check(items)
        members = self.members_test(tuple(value), (), None)
        if members is None:
            return check
        self._fast[check] = _on_dicts(members)
        return check

    def _required_constraint(self, path: Path, key: str, index: int, value: Any) -> Constraint:
        pos = self.positions.get((*path, key, index))
        return Constraint(ARGS_VALID_REQUIRED.id, f"{key}: {render(value)}",
                          self.positions.file_of(pos), pos.line, pos.col,
                          ".".join(str(p) for p in (*path, key)))

    def _kw_properties(self, node: dict[str, Any], path: Path, key: str,
                       value: Any) -> Validator:
        self._need(isinstance(value, dict), path, key, "a mapping of property names to schemas")
        subs = tuple(
            (name, self.compile(sub, (*path, key, name), as_property=True))
            for name, sub in value.items()
        )
        required = tuple(
            (name, self.constraint((*path, key, name), "required", True))
            for name, sub in value.items()
            if isinstance(sub, dict) and sub.get("required") is True
        )
        req = _required_check(required) if required else None

        def build(subs: tuple[tuple[str, Validator], ...]) -> Validator:
            def properties(v: Any) -> list[SchemaError] | None:
                if not isinstance(v, dict):
                    return None
                errors: list[SchemaError] | None = req(v) if req is not None else None
                for name, check in subs:
                    if name in v:
                        e = check(v[name])
                        if e:
                            errors = (errors or []) + _prefix(e, name)
                return errors

            return properties

        properties = self.twin(build(subs), build(tuple((n, self.as_test(c))
                                                        for n, c in subs)))
        members = self.members_test(tuple(n for n, _ in required), subs, None)
        if members is None:
            return properties
        self._fast[properties] = _on_dicts(members)
        return properties

    def _kw_patternProperties(self, node: dict[str, Any], path: Path, key: str,
                              value: Any) -> Validator:
        self._need(isinstance(value, dict), path, key, "a mapping of regexes to schemas")
        subs = []
        for pat, sub in value.items():
            try:
                rx = ecma_regex(pat)
            except RegexError as exc:
                self.report((*path, key, pat), f"invalid regular expression: {exc}")
                continue
            subs.append((rx.search, self.compile(sub, (*path, key, pat))))

        def build(subs: Sequence[tuple[Callable[[str], object], Validator]]) -> Validator:
            def pattern_properties(v: Any) -> list[SchemaError] | None:
                if not isinstance(v, dict):
                    return None
                errors: list[SchemaError] | None = None
                for name, item in v.items():
                    for search, check in subs:
                        if search(name) is not None:
                            e = check(item)
                            if e:
                                errors = (errors or []) + _prefix(e, name)
                return errors

            return pattern_properties

        return self.twin(build(subs), build([(s, self.as_test(c)) for s, c in subs]))

    def _kw_additionalProperties(self, node: dict[str, Any], path: Path, key: str,
                                 value: Any) -> Validator | None:
        if value is True:
            return None
        # a 'properties' or 'patternProperties' that is not a mapping is reported by its
        # own keyword; here it names nothing
        named, matched = node.get("properties"), node.get("patternProperties")
        known = frozenset(named if isinstance(named, dict) else ())
        patterns = []
        for p in matched if isinstance(matched, dict) else ():
            try:
                patterns.append(ecma_regex(p).search)
            except RegexError:
                continue  # reported by patternProperties
        if value is False:
            c = self.constraint(path, key, value)

            def no_additional(v: Any) -> list[SchemaError] | None:
                if not isinstance(v, dict):
                    return None
                errors: list[SchemaError] | None = None
                for name, item in v.items():
                    if name not in known and not any(s(name) for s in patterns):
                        errors = (errors or []) + _err(c, item, "Property is not allowed",
                                                       (name,))
                return errors

            if patterns:
                return no_additional
            names = self.bind(known)
            return self._leaf(no_additional, lambda x: f"(not isinstance({x}, dict) or "
                                                       f"{names}.issuperset({x}))")
        sub = self.compile(value, (*path, key))

        def build(check: Validator) -> Validator:
            def additional(v: Any) -> list[SchemaError] | None:
                if not isinstance(v, dict):
                    return None
                errors: list[SchemaError] | None = None
                for name, item in v.items():
                    if name not in known and not any(s(name) for s in patterns):
                        e = check(item)
                        if e:
                            errors = (errors or []) + _prefix(e, name)
                return errors

            return additional

        return self.twin(build(sub), build(self.as_test(sub)))

    def _kw_propertyNames(self, node: dict[str, Any], path: Path, key: str,
                          value: Any) -> Validator:
        sub = self.compile(value, (*path, key))
        c = self.constraint(path, key, value, text=f"{key}: …")

        def build(check: Validator) -> Validator:
            def property_names(v: Any) -> list[SchemaError] | None:
                if not isinstance(v, dict):
                    return None
                errors: list[SchemaError] | None = None
                for name in v:
                    e = check(name)
                    if e:
                        errors = (errors or []) + _err(
                            c, name, f"Property name is not allowed ({e[0].constraint.text})",
                            (name,)
                        )
                return errors

            return property_names

        return self.twin(build(sub), build(self.as_test(sub)))

    def _kw_dependentRequired(self, node: dict[str, Any], path: Path, key: str,
                              value: Any) -> Validator:
        self._need(isinstance(value, dict) and all(
            isinstance(v, list) and all(isinstance(n, str) for n in v) for v in value.values()),
            path, key, "a mapping of property names to lists of names")
        deps = tuple((name, tuple(need), self.constraint((*path, key), name, need,
                                                         rule=ARGS_VALID_DEPENDENT_REQUIRED))
                     for name, need in value.items())

        def dependent_required(v: Any) -> list[SchemaError] | None:
            if not isinstance(v, dict):
                return None
            errors: list[SchemaError] | None = None
            for name, need, c in deps:
                if name in v:
                    for other in need:
                        if other not in v:
                            e = SchemaError(c, (other,), None,
                                            f"Property is required when '{name}' is present",
                                            missing=True)
                            errors = (errors or []) + [e]
            return errors

        return dependent_required

    def _kw_dependentSchemas(self, node: dict[str, Any], path: Path, key: str,
                             value: Any) -> Validator:
        self._need(isinstance(value, dict), path, key, "a mapping of property names to schemas")
        deps = tuple((name, self.compile(sub, (*path, key, name))) for name, sub in value.items())

        def build(deps: tuple[tuple[str, Validator], ...]) -> Validator:
            def dependent_schemas(v: Any) -> list[SchemaError] | None:
                if not isinstance(v, dict):
                    return None
                errors: list[SchemaError] | None = None
                for name, check in deps:
                    if name in v:
                        e = check(v)
                        if e:
                            errors = (errors or []) + e
                return errors

            return dependent_schemas

        return self.twin(build(deps), build(tuple((n, self.as_test(c)) for n, c in deps)))

    # -- arrays
    def _kw_prefixItems(self, node: dict[str, Any], path: Path, key: str,
                        value: Any) -> Validator:
        self._need(isinstance(value, list), path, key, "a list of schemas")
        subs = tuple(self.compile(s, (*path, key, i)) for i, s in enumerate(value))

        def build(subs: tuple[Validator, ...]) -> Validator:
            def prefix_items(v: Any) -> list[SchemaError] | None:
                if not isinstance(v, list):
                    return None
                errors: list[SchemaError] | None = None
                for i, (item, check) in enumerate(zip(v, subs, strict=False)):
                    e = check(item)
                    if e:
                        errors = (errors or []) + _prefix(e, i)
                return errors

            return prefix_items

        return self.twin(build(subs), build(tuple(self.as_test(c) for c in subs)))

    def _kw_items(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        if isinstance(value, list):
            raise self.fail((*path, key), "'items' takes one schema; for a list of schemas "
                            "use 'prefixItems' (JSON Schema 2020-12)")
        sub = self.compile(value, (*path, key))
        start = len(node.get("prefixItems") or ())

        def build(check: Validator) -> Validator:
            def items(v: Any) -> list[SchemaError] | None:
                if not isinstance(v, list):
                    return None
                errors: list[SchemaError] | None = None
                for i in range(start, len(v)):
                    e = check(v[i])
                    if e:
                        errors = (errors or []) + _prefix(e, i)
                return errors

            return items

        return self.twin(build(sub), build(self.as_test(sub)))

    def _kw_contains(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        # only whether an item matches counts: its test (so this calls no validator)
        check = self.test_fn(self.compile(value, (*path, key)))
        lo = node.get("minContains", 1)
        hi = node.get("maxContains")
        for k, n in (("minContains", lo), ("maxContains", hi)):
            if k in node:
                self._need(isinstance(n, int) and not isinstance(n, bool) and n >= 0, path, k,
                           "a whole number ≥ 0")
        parts = [f"contains: {render(value)}"]
        if "minContains" in node:
            parts.append(f"minContains: {lo}")
        if hi is not None:
            parts.append(f"maxContains: {hi}")
        c = self.constraint(path, key, value, text=", ".join(parts))

        def contains(v: Any) -> list[SchemaError] | None:
            if not isinstance(v, list):
                return None
            n = sum(1 for item in v if check(item))
            if n < lo:
                return _err(c, v, f"Array has {n} matching item(s), fewer than {lo}")
            if hi is not None and n > hi:
                return _err(c, v, f"Array has {n} matching items, more than {hi}")
            return None

        return contains

    # -- combinators
    def _subschemas(self, path: Path, key: str, value: Any) -> tuple[Validator, ...]:
        self._need(isinstance(value, list) and len(value) > 0, path, key,
                   "a non-empty list of schemas")
        return tuple(self.compile(s, (*path, key, i)) for i, s in enumerate(value))

    def _kw_allOf(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        return self.all_of(list(self._subschemas(path, key, value)))

    def _kw_anyOf(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        subs = self._subschemas(path, key, value)
        c = self.constraint(path, key, value, text=f"anyOf: {len(subs)} alternatives")

        tests = tuple(self.as_test(s) for s in subs)

        def any_of(v: Any) -> list[SchemaError] | None:
            for test in tests:  # a match ends it; only when none does are the reasons due
                if not test(v):
                    return None
            why: list[str] = []
            for n, check in enumerate(subs, 1):
                e = check(v)
                if not e:  # pragma: no cover - a test and its validator agree
                    return None
                why.append(f"#{n}: {_reason(e[0])}")
            return _err(c, v, f"Value matches none of the {len(subs)} alternatives "
                              f"({'; '.join(why)})")

        def any_test(v: Any) -> list[SchemaError] | None:
            for test in tests:
                if not test(v):
                    return None
            return [SchemaError(_REJECTED, (), v, "Rejected by the test")]

        return self.twin(any_of, any_test)

    def _kw_oneOf(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        subs = tuple(self.as_test(s) for s in self._subschemas(path, key, value))
        c = self.constraint(path, key, value, text=f"oneOf: {len(subs)} alternatives")

        def one_of(v: Any) -> list[SchemaError] | None:
            matched = [n for n, check in enumerate(subs, 1) if not check(v)]
            if len(matched) == 1:
                return None
            how = "none" if not matched else f"{len(matched)} (" + ", ".join(
                f"#{n}" for n in matched) + ")"
            return _err(c, v, f"Value must match exactly one of the {len(subs)} alternatives; "
                              f"it matches {how}")

        return one_of

    def _kw_not(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        check = self.test_fn(self.compile(value, (*path, key)))  # its test: whether it matches
        c = self.constraint(path, key, value)

        def not_(v: Any) -> list[SchemaError] | None:
            if not check(v):
                return None
            return _err(c, v, "Value matches a schema it must not match")

        return not_

    def _kw_if(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator | None:
        cond = self.as_test(self.compile(value, (*path, key)))  # its test: whether it matches
        then = self.compile(node["then"], (*path, "then")) if "then" in node else None
        other = self.compile(node["else"], (*path, "else")) if "else" in node else None
        if then is None and other is None:
            return None

        def build(then: Validator | None, other: Validator | None) -> Validator:
            def if_then_else(v: Any) -> list[SchemaError] | None:
                branch = then if not cond(v) else other
                return branch(v) if branch is not None else None

            return if_then_else

        return self.twin(build(then, other),
                         build(then and self.as_test(then), other and self.as_test(other)))

    def _kw_ref(self, node: dict[str, Any], path: Path, key: str, value: Any) -> Validator:
        self._need(isinstance(value, str) and value.startswith("#"), path, key,
                   "a reference within this file, like '#/$defs/name'")
        here = (*path, key)
        target = self._resolve(value, here)
        # every $ref cycle reachable from here that never consumes any of the value, whatever
        # the route (a definition, an argument, nested keywords, a $ref to a $ref), is
        # reported at the $ref that closes it: validating would call it again without end
        for where in ref_cycles((target,), self._refs_in_place, self._explored):
            self._cycles.add(where)
            self.report(where, f"'{self._node_at(where)}' {REF_CYCLE}")
        if here in self._cycles:
            raise self.fail(here, f"'{value}' {REF_CYCLE}")
        if target in self._refs:
            return self._refs[target]
        if self._depth >= MAX_SCHEMA_DEPTH:
            raise self.fail(here, f"'{value}' leads more than {MAX_SCHEMA_DEPTH} schemas deep "
                                  "(a chain of $refs, each into the next definition); "
                                  "flatten the chain")
        holder: list[Validator] = []

        def ref(v: Any) -> list[SchemaError] | None:
            return holder[0](v)

        self._refs[target] = ref
        # its test is its target's (looked up when first called: the target is compiled
        # below, and may hold this very $ref)
        self.twin(ref, self._as_test_of(lambda: holder[0]))
        holder.append(self.compile(self._node_at(target), target))
        return ref

    def _bound_applied(self, node: Any, path: Path) -> None:
        """Raise when the schema ``node`` (at ``path`` of the document) applies more than
        ``MAX_SCHEMAS_IN_PLACE`` schemas to a value through its ``$ref``s."""
        if not isinstance(node, dict):
            return
        try:
            if self._node_at(path) is not node:
                return  # (a schema of another document: a selector's condition)
        except (KeyError, IndexError, TypeError):
            return
        if self._schemas_applied(path) > MAX_SCHEMAS_IN_PLACE:
            raise self.fail(path, f"this schema applies more than {MAX_SCHEMAS_IN_PLACE:,} "
                                  "schemas to the same value through its $refs (definitions "
                                  "that name the same definitions again, as in anyOf: "
                                  "[{$ref: X}, {$ref: X}]); name each definition once")

    def _schemas_applied(self, target: Path) -> int:
        """How many schemas the one at ``target`` applies to a value (:func:`applied`)."""
        return applied(target, self._refs_in_place, self._applied)

    def _refs_in_place(self, target: Path) -> list[tuple[Path, Path]]:
        """The ``$ref``s of the schema at ``target`` that apply to the same value as it
        (not under properties, items or the like): (where each is, its target), in the
        order of the document. One that does not resolve is reported when compiled."""
        known = self._in_place.get(target)
        if known is not None:
            return known
        found: list[tuple[Path, Path]] = []
        todo: list[tuple[Path, Path | None]] = [(target, None)]  # a schema, or a $ref
        while todo:
            path, ref_target = todo.pop()
            if ref_target is not None:
                found.append((path, ref_target))
                continue
            node = self._node_at(path)
            if not isinstance(node, dict):
                continue
            steps: list[tuple[Path, Path | None]] = []
            for key, value in node.items():
                if key == "$ref" and isinstance(value, str) and value.startswith("#"):
                    try:
                        steps.append(((*path, key), self._resolve(value, (*path, key))))
                    except ConfigError:
                        continue
                elif key in _IN_PLACE_LISTS and isinstance(value, list):
                    steps += [((*path, key, i), None) for i in range(len(value))]
                elif key in _IN_PLACE_ONE or (key in _IN_PLACE_BESIDE_IF and "if" in node):
                    steps.append(((*path, key), None))
                elif key == "dependentSchemas" and isinstance(value, dict):
                    steps += [((*path, key, name), None) for name in value]
            todo += reversed(steps)
        self._in_place[target] = found
        return found

    def _node_at(self, path: Path) -> Any:
        node = self.doc
        for step in path:
            node = node[step]
        return node

    def _resolve(self, ref: str, where: Path) -> Path:
        pointer = ref[1:]
        if pointer and not pointer.startswith("/"):
            raise self.fail(where, f"only JSON-pointer references are supported ('{ref}')")
        steps: list[str | int] = [
            s.replace("~1", "/").replace("~0", "~") for s in pointer.split("/")[1:]
        ]
        bases: list[Path] = [()]
        if self._roots:
            bases.insert(0, self._roots[-1])
        for base in bases:
            node = self._node_at(base)
            resolved: list[str | int] = list(base)
            ok = True
            for step in steps:
                if isinstance(node, dict) and step in node:
                    node = node[step]
                    resolved.append(step)
                elif isinstance(node, list) and isinstance(step, str) and step.isdigit() and \
                        int(step) < len(node):
                    node = node[int(step)]
                    resolved.append(int(step))
                else:
                    ok = False
                    break
            if ok:
                return tuple(resolved)
        raise self.fail(where, f"'$ref: {ref}' points at nothing in this file")


def _reason(e: SchemaError) -> str:
    """One error in a few words, for the message of a combinator."""
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.path)
    return f"{where.lstrip('.') + ': ' if where else ''}{e.message} ({e.constraint.text})"


def _required_check(items: tuple[tuple[str, Constraint], ...]) -> Validator:
    def required(v: Any) -> list[SchemaError] | None:
        if not isinstance(v, dict):
            return None
        errors: list[SchemaError] | None = None
        for name, c in items:
            if name not in v:
                e = SchemaError(c, (name,), None, "Required property is missing", missing=True)
                errors = (errors or []) + [e]
        return errors

    return required


def all_of(checks: list[Validator]) -> Validator:
    if not checks:
        return _always_valid
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        a, b = checks

        def both(v: Any) -> list[SchemaError] | None:
            x = a(v)
            y = b(v)
            if x is None:
                return y
            return x if y is None else x + y

        return both
    group = tuple(checks)

    def every(v: Any) -> list[SchemaError] | None:
        errors: list[SchemaError] | None = None
        for check in group:
            e = check(v)
            if e:
                errors = e if errors is None else errors + e
        return errors

    return every
