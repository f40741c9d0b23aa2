"""Call selectors and tool groups: which calls a rule's tool field picks.

Every tool field of a sequence rule and a ``tool_blocklist`` lists *selectors* ("any of"):

- a name or a glob, matched as :mod:`agent_eval.matching` says (normalized or exact);
- ``@NAME``: the selectors of the group ``NAME`` of the suite's ``tool_groups:`` (defined
  once, usable in every rule, blocklist and scenario expectation);
- a mapping ``{tool: NAME-OR-GLOB-OR-@GROUP (or a list), args: {ARGUMENT: CONDITION}}``:
  the calls of that tool whose arguments satisfy every condition. A condition is a
  literal (JSON equality) or a constraint object in the policy spellings
  (``{pattern: "^curl.*-d"}``, ``{min: 500}``).

Everything is compiled once per suite. On the hot path a selector without argument
conditions is one memoised name lookup per call (:meth:`ToolMatcher.flags`); argument
conditions are evaluated only for the calls whose name matched.

A call whose arguments are not a JSON object (not recorded in the trace, or recorded but
unreadable: ``ToolCall.arguments_recorded``, ``ToolCall.arguments_error``) cannot be judged
by an argument condition. Nor can a constraint object without ``type`` judge an argument of
a JSON type its keywords do not constrain (``"900"`` or ``[900]`` for ``{min: 500}``: JSON
Schema would ignore the keyword, :class:`Implied`), nor a literal an argument of another
JSON type that spells the same value (``"true"`` or ``1`` for ``true``, ``"900"`` for
``900``: :class:`Spelled`). Such a call is not selected by a mapping
that names its tool, but it is not a "no" either: :meth:`Selector.undecided` and the
``undecided`` list of :meth:`Selector.flags` name it (:meth:`Selector.unfit` the condition),
and the checks report it (``tool_blocklist/not_recorded``, ``…/not_an_object``,
``…/wrong_type``, the same under ``sequence_valid/``): what could not be checked is never a
pass.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_eval.config.schema_compiler import (
    ANNOTATIONS,
    KNOWN,
    SUGAR,
    SchemaCompiler,
    Validator,
    json_key,
    render,
)
from agent_eval.errors import ConfigError
from agent_eval.jsonutil import json_type
from agent_eval.matching import GROUP_PREFIX, ToolMatcher, ToolMatchMode
from agent_eval.model import ToolCall
from agent_eval.textdist import suggest
from agent_eval.yamlpos import Path, Positions

# a tool field that names no tool: the rule or test would check nothing (a blocklist
# blocking nothing, a require requiring nothing) and pass
EMPTY_TOOLS = ("an empty list names no tool, so nothing would be checked; name at least one "
               "tool (a name, a glob or @group)")
# a tool name that is empty: no call has it, so the rule would check nothing (a
# blocklist of "" blocks nothing)
EMPTY_NAME = ("an empty tool name names no tool, so nothing would be checked; write the "
              "tool's name (a name, a glob or @group)")
# a constraint object of annotations only ({title: …}, {description: …}) holds for every
# value: an expectation `fields: {title: Refund}` passed `{"title": "DROP TABLE"}`
ONLY_ANNOTATIONS = ("this mapping's keys are all schema annotations (title, description, "
                    "default, …), so as a constraint it would hold for any value; to compare "
                    "with the object itself write const: {…} around it")


def annotations_only(value: dict[Any, Any]) -> bool:
    """Whether a constraint object (:func:`is_constraint`) has annotations only."""
    return all(str(k) in ANNOTATIONS for k in value)


# keywords that constrain values of one JSON type only (JSON Schema ignores them for the
# others), by that type; a spelling of SUGAR is read as its keyword
_FAMILIES: tuple[tuple[str, frozenset[str]], ...] = (
    ("number", frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                          "multipleOf"})),
    ("string", frozenset({"minLength", "maxLength", "pattern", "format"})),
    ("array", frozenset({"minItems", "maxItems", "uniqueItems", "contains", "minContains",
                         "maxContains", "items", "prefixItems"})),
    ("object", frozenset({"required", "additionalProperties", "propertyNames",
                          "minProperties", "maxProperties", "dependentRequired",
                          "properties", "patternProperties", "dependentSchemas"})),
)
# How deeply groups of groups may nest (docs/config.md "Call selectors and tool groups"):
# a chain of 3,000 groups, each naming the next, was a RecursionError. (Each group is
# expanded once, however many paths lead to it: 30 groups each naming the next twice
# were 2**30 expansions, a hang.)
GROUP_DEPTH = 64
_JSON_NAMES = {"number": ("integer", "number")}  # json_type's names of a family's type


def is_constraint(value: Any) -> bool:
    """A mapping whose keys are all policy schema keywords ({min: 500}) is a constraint
    object; any other value is compared for JSON equality."""
    return isinstance(value, dict) and bool(value) and all(str(k) in KNOWN for k in value)


def a_type(name: str) -> str:
    """A JSON type name with its article, for messages: "a string", "an array", "null"."""
    if name == "null":
        return "null"
    return ("an " if name[0] in "aeiou" else "a ") + name


@dataclass(frozen=True, slots=True)
class Implied:
    """The JSON types a constraint object without ``type`` can judge: those its keywords
    constrain (``{min: 500}``: numbers; ``{pattern: …}``: strings; ``{min_items: 2}``:
    arrays; ``{required: [...]}``: objects; a mix: any of them). JSON Schema alone would let
    ``"900"`` pass ``{min: 500}``; here a value of another type is not judged (booleans
    are not numbers)."""

    types: tuple[str, ...]  # ("number",), in the order of _FAMILIES
    names: frozenset[str]  # what json_type() calls the values that fit

    def fits(self, value: Any) -> bool:
        return json_type(value) in self.names

    @property
    def text(self) -> str:
        """ "a number", "a number or a string"."""
        return " or ".join(a_type(t) for t in self.types)


_IMPLIED: dict[tuple[str, ...], Implied] = {}


def spelled(value: Any) -> tuple[str, Any] | None:
    """What a scalar means to a tool that coerces its arguments: ``("b", True)`` for
    ``true``, ``"true"`` (any case, spaces around) and ``1``; ``("n", 500.0)`` for ``500``
    and ``"500"``; None for anything else (null, text, arrays, objects)."""
    if value is True or value is False:
        return ("b", value)
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an integer past 1e308 (YAML has no bound): no string of
            return None  # 64 characters or fewer spells it, nor does a boolean
    elif isinstance(value, str) and len(value) <= 64:
        text = value.strip().lower()
        if text in ("true", "false"):
            return ("b", text == "true")
        try:
            number = float(text)
        except ValueError:
            return None
    else:
        return None
    return ("n", number) if math.isfinite(number) else None


def _same_meaning(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    if a[0] == b[0]:
        return bool(a[1] == b[1])
    flag, number = (a, b) if a[0] == "b" else (b, a)
    return bool(number[1] == (1.0 if flag[1] else 0.0))


class Spelled(Implied):
    """What a literal condition (``force: true``, ``amount: 500``) can judge: every value
    but one of another JSON type that means the same to a tool that coerces its
    arguments (``"true"`` or ``1`` for ``true``, ``"500"`` for ``500``): JSON equality
    says no, the tool may well say yes, so whether the call is selected is unknown.

    A plain subclass, not a dataclass: making one at import costs the start-up a parse of
    its generated methods (about 0.5 % of a one-trace run's instructions)."""

    __slots__ = ("meaning",)
    meaning: tuple[str, Any]

    def __init__(self, types: tuple[str, ...], names: frozenset[str],
                 meaning: tuple[str, Any]) -> None:
        Implied.__init__(self, types, names)
        object.__setattr__(self, "meaning", meaning)  # frozen, as Implied

    def fits(self, value: Any) -> bool:
        if json_type(value) in self.names:
            return True
        other = spelled(value)
        return other is None or not _same_meaning(other, self.meaning)


def literal_type(value: Any) -> Spelled | None:
    """:class:`Spelled` for a boolean, number or number-like / boolean-like string
    literal; None for one that no other JSON type can spell (text, null, arrays,
    objects)."""
    meaning = spelled(value)
    if meaning is None:
        return None
    kind = json_type(value)
    names = frozenset(_JSON_NAMES.get("number", ()) if kind in ("integer", "number")
                      else (kind,))
    shown = "number" if kind in ("integer", "number") else kind
    return Spelled((shown,), names, meaning)


def implied_type(node: dict[str, Any]) -> Implied | None:
    """What a constraint object can judge (:class:`Implied`); None when it says its
    ``type`` itself or has no keyword of one type only (``{enum: [...]}``): any value."""
    if "type" in node:
        return None
    keys = {SUGAR.get(str(k), str(k)) for k in node}
    types = tuple(t for t, family in _FAMILIES if keys & family)
    if not types:
        return None
    found = _IMPLIED.get(types)
    if found is None:
        names = frozenset(n for t in types for n in _JSON_NAMES.get(t, (t,)))
        found = _IMPLIED[types] = Implied(types, names)
    return found


@dataclass(frozen=True, slots=True)
class ArgCondition:
    """One argument condition of a selector."""

    key: str
    expected: Any  # json_key of a literal
    validate: Validator | None = None  # a constraint object
    implied: Implied | None = None
    shown: str = ""  # the condition as written, for messages: "{min: 500}"

    def holds(self, args: Any) -> bool:
        """Whether ``args`` (a JSON object) satisfies the condition; False for arguments
        that are not an object and for an argument the condition cannot judge (the caller
        tells those "cannot be judged" apart: :meth:`unfit`)."""
        if not isinstance(args, dict) or self.key not in args:
            return False
        value = args[self.key]
        if self.validate is None:
            return bool(json_key(value) == self.expected)
        implied = self.implied
        return (implied is None or implied.fits(value)) and not self.validate(value)

    def judge(self, args: dict[str, Any]) -> int:
        """:meth:`holds` and :meth:`unfit` in one look: 1 holds, 0 does not, 2 cannot
        judge the argument's type."""
        key = self.key
        if key not in args:
            return 0
        value = args[key]
        if self.validate is None:
            if json_key(value) == self.expected:
                return 1
            implied = self.implied  # a literal: another type spelling the same, unknown
            return 2 if implied is not None and not implied.fits(value) else 0
        implied = self.implied
        if implied is not None and not implied.fits(value):
            return 2
        return 0 if self.validate(value) else 1

    def unfit(self, args: dict[str, Any]) -> bool:
        """Whether the argument is there but of a JSON type the condition cannot judge."""
        implied = self.implied
        return implied is not None and self.key in args and not implied.fits(args[self.key])


Alternative = tuple[ToolMatcher, tuple[ArgCondition, ...]]


@dataclass(frozen=True, slots=True)
class SelectorItem:
    """One item of a tool field, as written (a name, a glob, ``@group`` or a mapping)."""

    text: str  # for messages: "bash", "@egress", "bash with {command: {pattern: ...}}"
    tool: str  # the tool part as written ("bash", "@egress"), for coverage
    names: ToolMatcher  # every tool name this item may select
    alternatives: tuple[Alternative, ...]
    conditional: bool  # some alternative has argument conditions
    typed: bool = False  # some condition can judge only some JSON types (Implied)

    def selects(self, name: str, args: Any) -> bool:
        for matcher, conditions in self.alternatives:
            if matcher(name) and all(c.holds(args) for c in conditions):
                return True
        return False


# which item could not judge a call, and the condition that could not judge its argument
# (None: the arguments are not a JSON object)
Undecided = tuple[int, ArgCondition | None]


class Selector:
    """A compiled tool field: "any of" its items."""

    __slots__ = ("_owner", "conditional", "items", "names", "patterns", "typed")

    def __init__(self, items: Sequence[SelectorItem], mode: ToolMatchMode) -> None:
        self.items = tuple(items)
        self.patterns = tuple(i.text for i in self.items)  # tools_text() reads these
        self.conditional = any(i.conditional for i in self.items)
        # decided once: whether a call with a JSON object as arguments can be undecided
        self.typed = any(i.typed for i in self.items)
        self.names = ToolMatcher([p for i in self.items for p in i.names.patterns], mode)
        owner: list[int] = []
        for k, i in enumerate(self.items):
            owner += [k] * len(i.names.patterns)
        self._owner = tuple(owner)  # pattern index in `names` -> item index

    def __call__(self, name: str) -> bool:
        """Whether a call to this tool may be selected (its arguments aside)."""
        return self.names(name)

    def which(self, call: ToolCall) -> int | None:
        """Index of the first item that selects the call, or None (one memoised lookup
        per name when no item has argument conditions). None also for a call that
        :meth:`undecided` names."""
        index = self.names.which(call.name)
        if index is None:
            return None
        if not self.conditional:
            return self._owner[index]
        for k, item in enumerate(self.items):
            if item.selects(call.name, call.arguments):
                return k
        return None

    def cannot_judge(self, call: ToolCall) -> Undecided | None:
        """:meth:`undecided` and :meth:`unfit` at once."""
        return self._undecided(call.name, call.arguments)

    def judge(self, call: ToolCall) -> tuple[int | None, Undecided | None]:
        """:meth:`which` and, when no item selects the call, :meth:`cannot_judge`, in one
        pass over the items when their conditions are typed (the blocklist's hot path)."""
        name, args = call.name, call.arguments
        if not self.typed or not isinstance(args, dict):
            index = self.which(call)
            if index is not None or not self.conditional:
                return index, None
            return None, self._undecided(name, args)
        if self.names.which(name) is None:
            return None, None
        return self._typed(name, args)

    def _typed(self, name: str, args: dict[str, Any]) -> tuple[int | None, Undecided | None]:
        """The first item that selects the call, else the first that cannot judge it."""
        first: Undecided | None = None
        for k, item in enumerate(self.items):
            for matcher, conditions in item.alternatives:
                if not matcher(name):
                    continue
                unfit = None
                for c in conditions:
                    verdict = c.judge(args)
                    if verdict == 0:
                        break
                    if verdict == 2 and unfit is None:
                        unfit = c
                else:
                    if unfit is None:
                        return k, None
                    if first is None:
                        first = (k, unfit)
        return None, first

    def undecided(self, call: ToolCall) -> int | None:
        """Index of the first item whose argument conditions cannot judge a call that no
        item selects (:meth:`which` is None): its arguments are not a JSON object (not
        recorded, not decodable) and an item with conditions names its tool, or an item's
        conditions, all met but for those that cannot judge an argument of its JSON type
        (:meth:`ArgCondition.unfit`), name its tool. None otherwise, and always for a
        selector without argument conditions."""
        found = self._undecided(call.name, call.arguments)
        return None if found is None else found[0]

    def unfit(self, call: ToolCall) -> ArgCondition | None:
        """The condition of :meth:`undecided`'s item that cannot judge the call's
        argument; None when the arguments are not a JSON object (or nothing is
        undecided)."""
        found = self._undecided(call.name, call.arguments)
        return None if found is None else found[1]

    def _undecided(self, name: str, args: Any) -> Undecided | None:
        if not self.conditional:
            return None
        is_object = isinstance(args, dict)
        if is_object and not self.typed:
            return None  # every condition judges every value
        first: Undecided | None = None
        for k, item in enumerate(self.items):
            for matcher, conditions in item.alternatives:
                if not matcher(name):
                    continue
                if not conditions:
                    return None  # selected whatever its arguments
                if first is not None:
                    continue
                if not is_object:
                    first = (k, None)
                    continue
                # an argument a condition cannot judge first (cheap, and nothing is made
                # per call): only then whether the other conditions hold
                unfit = None
                for c in conditions:
                    if c.unfit(args):
                        unfit = c
                        break
                if unfit is not None and all(c is unfit or c.unfit(args) or c.holds(args)
                                             for c in conditions):
                    first = (k, unfit)
        return first

    def flags(self, calls: Sequence[ToolCall], names: Sequence[str],
              undecided: list[int] | None = None) -> bytearray:
        """Which calls are selected; argument conditions are evaluated only for the calls
        whose name matched. The indexes of the calls that no item selects and that an
        item's conditions cannot judge (:meth:`undecided`) are appended to ``undecided``
        when it is given; they are not flagged."""
        base = self.names.flags(names)
        if not self.conditional or True not in base:
            return base
        items = self.items
        typed = self.typed
        for k, hit in enumerate(base):
            if hit:
                name, args = names[k], calls[k].arguments
                if typed and isinstance(args, dict):  # one pass: selected, or undecided
                    index, unknown = self._typed(name, args)
                    base[k] = index is not None
                    if unknown is not None and undecided is not None:
                        undecided.append(k)  # an argument of a type a condition cannot judge
                    continue
                base[k] = picked = any(i.selects(name, args) for i in items)
                if not picked and undecided is not None and not isinstance(args, dict):
                    # the name matched, no alternative without conditions did (it would
                    # select): every one that did has conditions these arguments cannot meet
                    undecided.append(k)
        return base


# ------------------------------------------------------------------------- groups
@dataclass
class Groups:
    """The suite's ``tool_groups:``: name -> its selectors, as written."""

    defs: dict[str, tuple[Any, Path]]  # name -> (value, path of the definition)
    # groups defined with an error of their own (empty, a bad name): reported there, so a
    # use of one is no "unknown tool group"
    invalid: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, data: Any, positions: Positions) -> tuple[Groups, list[str]]:
        """The groups of a suite document, and the problems of their definitions."""
        raw = data.get("tool_groups") if isinstance(data, dict) else None
        problems: list[str] = []
        defs: dict[str, tuple[Any, Path]] = {}
        invalid: set[str] = set()
        if raw is None:
            return cls(defs), problems
        if not isinstance(raw, dict):
            return cls(defs), [f"{positions.where(('tool_groups',))}: tool_groups must be a "
                               "mapping of group name -> tools"]
        for name, value in raw.items():
            path: Path = ("tool_groups", name)
            if not name.lstrip(GROUP_PREFIX).strip():
                # (it said "write it without '@' (use it as '@')")
                problems.append(f"{positions.where(path)}: group name '{name}' is empty; "
                                "give the group a name, and use it as '@NAME'")
                invalid.add(name.lstrip(GROUP_PREFIX))
                continue
            if name.startswith(GROUP_PREFIX):
                problems.append(f"{positions.where(path)}: group name '{name}': write it "
                                f"without '{GROUP_PREFIX}' (use it as '@{name.lstrip('@')}')")
                invalid.add(name.lstrip(GROUP_PREFIX))
                continue
            if value is None or value == []:
                problems.append(f"{positions.where(path)}: group '{name}' is empty; name "
                                "at least one tool in it")
                invalid.add(name)
                continue
            defs[name] = (value, path)
        return cls(defs, frozenset(invalid)), problems


class SelectorCompiler:
    """Compiles tool fields against one suite's groups and matching mode."""

    def __init__(self, groups: Groups | None, positions: Positions,
                 mode: ToolMatchMode) -> None:
        self.groups = groups or Groups({})
        self.positions = positions
        self.mode = mode
        self.schemas = SchemaCompiler({}, positions)
        self._cache: dict[str, tuple[Alternative, ...]] = {}
        # group -> its names and the problems found in them (said again at each use: a
        # caller may expand a group before the one that reports its problems)
        self._names_cache: dict[str, tuple[list[str], tuple[str, ...]]] = {}
        self._deep = False  # the current use of a group went past GROUP_DEPTH (reported)

    # -- names only (scenario expectations, args_valid tools:)
    def names(self, value: str | Sequence[str], path: Path) -> list[str]:
        """The name patterns of a name-only field, groups expanded; a group with
        argument conditions cannot be used here."""
        problems: list[str] = []
        out: list[str] = []
        items = [value] if isinstance(value, str) else list(value)
        for k, item in enumerate(items):
            here = path if isinstance(value, str) else (*path, k)
            out += self._names(item, here, problems, ())
        if problems:
            raise ConfigError(problems)
        return out

    def _names(self, item: str, path: Path, problems: list[str],
               stack: tuple[str, ...]) -> list[str]:
        if not item.startswith(GROUP_PREFIX):
            return [] if self._empty(item, path, problems) else [item]
        name = item[len(GROUP_PREFIX):]
        if stack and name in self._names_cache:  # (a use's own problems are said at it)
            names, said = self._names_cache[name]
            problems.extend(said)
            return names
        found = self._group(name, path, problems, stack)
        if found is None:
            return []
        value, gpath = found
        out: dict[str, None] = {}  # each name once, however many groups lead to it
        before = len(problems)
        for k, member in enumerate([value] if not isinstance(value, list) else value):
            here = gpath if not isinstance(value, list) else (*gpath, k)
            if isinstance(member, str):
                out.update(dict.fromkeys(self._names(member, here, problems,
                                                     (*stack, name))))
            else:
                problems.append(f"{self.positions.where(path)}: group '@{name}' has "
                                f"argument conditions ({self.positions.where(here)}); "
                                "only sequence rules and blocklists can use it")
        names = list(out)
        said = tuple(dict.fromkeys(problems[before:]))  # each once
        problems[before:] = said
        self._names_cache[name] = (names, said)
        return names

    def _empty(self, name: str, path: Path, problems: list[str]) -> bool:
        """Whether ``name`` is the empty tool name, reported at ``path``: no call has it,
        so a field naming it checks nothing (wherever it is written: in the field, in a
        ``{tool: [...]}`` list, in a group the field uses)."""
        if name == "":
            problems.append(f"{self.positions.where(path)}: {EMPTY_NAME}")
            return True
        return False

    def _group(self, name: str, path: Path, problems: list[str],
               stack: tuple[str, ...]) -> tuple[Any, Path] | None:
        if not stack:  # a use of a group, in a field: its expansion starts
            self._deep = False
        elif self._deep:
            return None
        if len(stack) >= GROUP_DEPTH:
            self._deep = True
            problems.append(f"{self.positions.where(path)}: the tool groups that "
                            f"'@{stack[0]}' uses nest more than {GROUP_DEPTH} levels deep; "
                            "name the tools in fewer levels")
            return None
        if name in stack:
            problems.append(f"{self.positions.where(path)}: tool group '@{name}' refers to "
                            f"itself ({' -> '.join('@' + s for s in (*stack, name))})")
            return None
        found = self.groups.defs.get(name)
        if found is None and name not in self.groups.invalid:
            known = ", ".join("@" + g for g in self.groups.defs) or "none defined"
            hint = suggest(name, set(self.groups.defs)).replace("'", "'@", 1)
            problems.append(f"{self.positions.where(path)}: unknown tool group '@{name}'"
                            f"{hint}; groups: {known} (define it under tool_groups:)")
        return found

    # -- selectors (sequence rules, blocklists)
    def selector(self, value: Any, path: Path) -> Selector:
        """Compile a tool field (one item or a list of items) at ``path``."""
        if value == []:
            raise ConfigError([f"{self.positions.where(path)}: {EMPTY_TOOLS}"])
        problems: list[str] = []
        items = []
        values = value if isinstance(value, list) else [value]
        for k, item in enumerate(values):
            here = (*path, k) if isinstance(value, list) else path
            compiled = self.item(item, here, problems)
            if compiled is not None:
                items.append(compiled)
        if problems:
            raise ConfigError(problems)
        return Selector(items, self.mode)

    def item(self, item: Any, path: Path, problems: list[str]) -> SelectorItem | None:
        if isinstance(item, str):
            alts = self._alternatives(item, path, problems, ())
            return _item(item, item, alts, self.mode)
        tool = item.get("tool") if isinstance(item, dict) else None
        if not isinstance(item, dict) or tool is None or set(item) - {"tool", "args"}:
            extra = sorted(set(item) - {"tool", "args"}) if isinstance(item, dict) else []
            problems.append(f"{self.positions.where(path)}: a tool selector is a name, a glob, "
                            "@group or {tool: NAME, args: {ARGUMENT: CONDITION}}"
                            + (f"; unknown key(s): {', '.join(map(str, extra))}"
                               if extra else ""))
            return None
        tools = [tool] if isinstance(tool, str) else tool
        if not isinstance(tools, list) or not tools or not all(isinstance(t, str)
                                                               for t in tools):
            problems.append(f"{self.positions.where((*path, 'tool'))}: 'tool' must be a name, "
                            "a glob, @group or a list of them")
            return None
        conditions = self.conditions(item.get("args"), (*path, "args"), problems)
        picked: list[Alternative] = []
        for k, t in enumerate(tools):
            here = (*path, "tool") if isinstance(tool, str) else (*path, "tool", k)
            for matcher, conds in self._alternatives(t, here, problems, ()):
                picked.append((matcher, conds + conditions))
        text = render(tool) + (f" with {render(item['args'])}" if item.get("args") else "")
        return _item(text, render(tool), tuple(picked), self.mode)

    def conditions(self, args: Any, path: Path, problems: list[str]
                   ) -> tuple[ArgCondition, ...]:
        if args is None:
            return ()
        if not isinstance(args, dict):
            problems.append(f"{self.positions.where(path)}: 'args' must be a mapping of "
                            "argument -> value or constraint ({pattern: ...}, {min: ...})")
            return ()
        out = []
        for key, value in args.items():
            here = (*path, key)
            if is_constraint(value) and annotations_only(value):
                problems.append(f"{self.positions.where(here)}: {ONLY_ANNOTATIONS}")
                continue
            if is_constraint(value):
                try:
                    validate = self.schemas.checked(value, here, as_property=True)
                except ConfigError as exc:
                    problems.extend(exc.problems)
                    continue
                out.append(ArgCondition(str(key), None, validate, implied_type(value),
                                         render(value)))
            else:
                word = self.positions.misread(here)  # state: off, read as false
                if word is not None:
                    problems.append(word)
                    continue
                out.append(ArgCondition(str(key), json_key(value), None,
                                        literal_type(value), render(value)))
        return tuple(out)

    def _alternatives(self, text: str, path: Path, problems: list[str],
                      stack: tuple[str, ...]) -> tuple[Alternative, ...]:
        if not text.startswith(GROUP_PREFIX):
            return () if self._empty(text, path, problems) else (
                (ToolMatcher([text], self.mode), ()),)
        name = text[len(GROUP_PREFIX):]
        if name in self._cache:
            return self._cache[name]
        found = self._group(name, path, problems, stack)
        if found is None:
            return ()
        value, gpath = found
        plain: dict[str, None] = {}
        # each alternative once, however many groups lead to it (a group's are kept: the
        # same objects wherever it is used)
        alts: dict[int, Alternative] = {}
        members = value if isinstance(value, list) else [value]
        for k, member in enumerate(members):
            here = (*gpath, k) if isinstance(value, list) else gpath
            if isinstance(member, str) and not member.startswith(GROUP_PREFIX):
                if not self._empty(member, here, problems):
                    plain[member] = None
            elif isinstance(member, str):
                alts.update((id(a), a) for a in self._alternatives(
                    member, here, problems, (*stack, name)))
            else:
                compiled = self.item(member, here, problems)
                if compiled is not None:
                    alts.update((id(a), a) for a in compiled.alternatives)
        out: tuple[Alternative, ...] = (
            ((ToolMatcher(list(plain), self.mode), ()),) if plain else ())
        out += tuple(alts.values())
        self._cache[name] = out  # (its problems are said once, at its members)
        return out


def _item(text: str, tool: str, alts: tuple[Alternative, ...],
          mode: ToolMatchMode) -> SelectorItem:
    names = ToolMatcher([p for m, _ in alts for p in m.patterns], mode)
    typed = any(c.implied is not None for _, conds in alts for c in conds)
    return SelectorItem(text, tool, names, alts, any(c for _, c in alts), typed)
