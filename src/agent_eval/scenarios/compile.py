"""Compile ``scenarios:`` and ``pass_criteria:`` once per suite.

Every key of a scenario becomes a :class:`ConfigRef` (file, line, column and a stable key
path by scenario id), regexes, tool matchers, argument constraints and JSON Schemas are
compiled here, so that evaluating a trace (``evaluate.py``) compiles nothing.
"""

from __future__ import annotations

import difflib
import math
import os
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, NamedTuple

from agent_eval.config.models import without_wrong_keys
from agent_eval.config.schema_compiler import (
    SchemaCompiler,
    SchemaError,
    Validator,
    json_key,
    render,
)
from agent_eval.config.schema_files import LoaderLike, SchemaFiles
from agent_eval.coverage import VACUOUS, ToolRef
from agent_eval.errors import ConfigError
from agent_eval.findings import ConfigRef
from agent_eval.globre import FullMatch, class_end, literal, python_class
from agent_eval.matching import GROUP_PREFIX, ToolMatcher, ToolMatchMode, normalize_name
from agent_eval.saferegex import (
    RegexError,
    SafeRegex,
    compile_python,
)
from agent_eval.safetext import fold
from agent_eval.scenarios import metrics as m
from agent_eval.scenarios.models import (
    Behavior,
    Expect,
    Gates,
    PassCriteria,
    Scenario,
    SuiteWeights,
    Thresholds,
)
from agent_eval.selectors import (
    EMPTY_TOOLS,
    ONLY_ANNOTATIONS,
    Implied,
    SelectorCompiler,
    annotations_only,
    implied_type,
    is_constraint,
    literal_type,
)
from agent_eval.textdist import suggest
from agent_eval.yamlpos import Path, Positions

if TYPE_CHECKING:  # the judge's modules are imported by suites with judge checks
    from agent_eval.judge.compile import CompiledJudge, JudgeRun

# The figures kept per (scenario, trace), in this order (evaluate.py).
FIGURES = ("score", "tool_recall", "tool_precision", "tool_f1", "tool_hits",
           "tool_used_hits", "tools_used", "sequence_similarity", "sequence_progress", "loops",
           "output_quality", "output_ok", "behavior_score", "tool_calls", "llm_calls",
           "total_tokens", "latency_ms", "cost_usd")
FIGURE_INDEX = {name: i for i, name in enumerate(FIGURES)}
GATE_KEYS = tuple(Gates.model_fields)


def _bound(key: str) -> tuple[str, str]:
    """A threshold or gate key (``min_tool_recall``, ``max_loops``) as what it bounds and
    how: ``("tool_recall", "min")``, ``("loops", "max")``."""
    op, figure = key.split("_", 1)
    return figure, op


# (threshold key) -> (measured figure, "min" | "max")
THRESHOLD_FIGURE: dict[str, tuple[str, str]] = {key: _bound(key) for key in (
    "min_tool_recall", "min_tool_precision", "min_sequence_similarity", "max_loops",
    "max_tool_calls", "max_llm_calls", "max_total_tokens", "max_latency_ms", "max_cost_usd",
    "max_cost_multiplier", "min_score", "min_output_quality")}
# the figures a trace may not have recorded (unknown, never 0), as messages name them: a
# trace without an llm_call event recorded no LLM call, so how many it made is unknown
UNRECORDED = {"total_tokens": "tokens", "latency_ms": "latency", "cost_usd": "cost",
              "llm_calls": "LLM calls"}
GATE_METRIC: dict[str, tuple[str, str]] = {key: _bound(key) for key in GATE_KEYS}


# ---------------------------------------------------------------------- compiled parts
# an empty term, state or pattern: found in every output, so the check passes whatever
# the agent answered
EMPTY_TEXT = ("an empty text is found in every output, so nothing would be checked; write "
              "the text to look for")

# a minimum of 0 on a metric that is never below 0: the criterion can never fail, and one
# on a pass rate tolerated every failed scenario (docs/scenarios.md "Verdict")
_NEVER_FAILS = ("'{}' can never fail (the figure is never below 0), and on a pass rate it "
                "tolerates every failed scenario; give a minimum above 0, or remove it (to "
                "make a scenario advisory, give it gate: warn)")

@dataclass(frozen=True, slots=True)
class Term:
    """A text an output check looks for, with its lower-case form."""

    text: str
    lower: str
    ref: ConfigRef


@dataclass(frozen=True, slots=True)
class ArgCheck:
    """One expected argument: a literal (JSON equality) or a constraint object."""

    key: str
    ref: ConfigRef
    expected: Any
    shown: str  # as written, for messages
    validate: Validator | None = None  # a constraint object
    implied_type: Implied | None = None  # numbers for {min: 500}, strings for {pattern: …}
    raw_path: str = ""  # the argument's path by position (SchemaCompiler's key paths)


@dataclass(frozen=True, slots=True)
class Mismatch:
    """How one argument of a call differs from what was expected."""

    check: ArgCheck | None  # None: an argument that was not expected
    key: str
    value: Any
    why: str  # "missing", "expected 'A-1'", "Value exceeds maximum"
    constraint: str  # as written: "order_id: A-1", "max: 30"
    ref: ConfigRef | None  # the violated key (a constraint's keyword line) when known


@dataclass(frozen=True, slots=True)
class ArgExpect:
    """The expected arguments of a tool (``expect.args``)."""

    tool: str
    matcher: ToolMatcher
    ref: ConfigRef
    checks: tuple[ArgCheck, ...]
    keys: frozenset[str]


@dataclass(frozen=True, slots=True)
class OutputCheck:
    """One check of a trace's output (``expect.output``)."""

    kind: str  # contains | contains_any | not_contains | equals | regex | json_schema
    ref: ConfigRef
    terms: tuple[Term, ...] = ()
    text: str = ""
    # regex: each pattern with its compiled form (None: invalid, reported) and its place
    patterns: tuple[tuple[str, SafeRegex | None, ConfigRef], ...] = ()
    schema: Any = None  # a jsonschema validator
    source: str = ""  # the schema's file, or "inline"


@dataclass(frozen=True, slots=True)
class BehaviorCheck:
    """One check of what a trace did (``expect.behavior``)."""

    kind: str  # tool_called | tool_not_called | output_contains | output_regex | sequence
    ref: ConfigRef
    text: str  # "tool_called: issue_refund with args {amount: {min: 500}}"
    matcher: ToolMatcher | None = None
    args: tuple[ArgCheck, ...] = ()
    lower: str = ""
    regex: SafeRegex | None = None
    steps: tuple[ToolMatcher, ...] = ()


@dataclass(frozen=True, slots=True)
class Limit:
    """One threshold of a scenario (``thresholds``): a figure's bound."""

    key: str  # max_cost_usd
    figure: str  # cost_usd
    op: str  # min | max
    value: float
    ref: ConfigRef
    index: int  # of its figure in FIGURES; -1 for cost_multiplier (needs a baseline)

    @property
    def text(self) -> str:
        return f"{self.key}: {render(self.value)}"


class NameInfo(NamedTuple):
    key: str  # the name as compared (normalized under tool_match: normalized)
    forbidden: int  # index of the forbidden_tools pattern it matches, or -1
    steps: frozenset[int]  # the `sequence` steps it matches
    expected: frozenset[int]  # the `tools` patterns it matches


@dataclass
class CompiledScenario:
    """One scenario, compiled: how its traces are matched and judged."""

    index: int
    id: str
    category: str | None
    required: bool
    gate: str  # fail | warn (advisory)
    weight: float
    min_pass_ratio: float
    ref: ConfigRef  # the scenario's `id:` line
    required_ref: ConfigRef
    traces_ref: ConfigRef | None
    globs: tuple[FullMatch, ...] | None
    input: str | None = None  # traces with exactly this input belong to it too (Assay)
    # expect
    tools: tuple[str, ...] | None = None  # expected patterns (deduplicated)
    tool_matchers: tuple[ToolMatcher, ...] = ()
    tool_refs: tuple[ConfigRef, ...] = ()
    forbidden: ToolMatcher | None = None
    forbidden_refs: tuple[ConfigRef, ...] = ()
    sequence: tuple[str, ...] | None = None
    steps: tuple[ToolMatcher, ...] = ()
    sequence_ref: ConfigRef | None = None
    sequence_mode: str = "subsequence"
    sequence_severity: str = "error"
    sequence_metric: str = "lcs"
    args: tuple[ArgExpect, ...] = ()
    args_mode: str = "subset"
    output: tuple[OutputCheck, ...] = ()
    state: Term | None = None
    health_ref: ConfigRef | None = None
    expected_error: ToolMatcher | None = None
    expected_error_refs: tuple[ConfigRef, ...] = ()
    behaviors: tuple[BehaviorCheck, ...] = ()
    must_not: tuple[BehaviorCheck, ...] = ()
    thresholds: tuple[Limit, ...] = ()
    warn_thresholds: tuple[Limit, ...] = ()
    weights: dict[str, float] = field(default_factory=dict)
    handoffs: tuple[tuple[str, ToolMatcher, ConfigRef], ...] = ()  # expected targets
    max_handoffs: tuple[int, ConfigRef] | None = None
    handoff_severity: str = "error"
    normalized: bool = True
    named_tools: list[ToolRef] = field(default_factory=list)  # coverage.py
    judge: tuple[CompiledJudge, ...] = ()  # expect.judge (judge/compile.py)
    judge_run: JudgeRun | None = field(default=None, repr=False)  # the suite's judge
    _names: dict[str, NameInfo] = field(default_factory=dict, repr=False)

    @property
    def adversarial(self) -> bool:
        return (self.category or "").lower() == "adversarial"

    @property
    def scored(self) -> bool:
        return bool(self.tools is not None or self.has_quality or self.sequence is not None)

    @property
    def has_quality(self) -> bool:
        """Whether output_quality is defined: output checks, or judge checks whose score
        counts (docs/judge.md)."""
        return bool(self.output) or any(j.in_score for j in self.judge)

    def info(self, name: str) -> NameInfo:
        """What this scenario makes of a called tool's name (memoised: the hot path is one
        dict lookup per call)."""
        hit = self._names.get(name)
        if hit is None:
            forbidden = self.forbidden.which(name) if self.forbidden is not None else None
            hit = NameInfo(
                normalize_name(name) if self.normalized else name,
                -1 if forbidden is None else forbidden,
                frozenset(j for j, s in enumerate(self.steps) if s(name)),
                frozenset(i for i, t in enumerate(self.tool_matchers) if t(name)),
            )
            if len(self._names) > 65536:
                self._names.clear()
            self._names[name] = hit
        return hit


@dataclass(frozen=True, slots=True)
class Criterion:
    """One pass criterion (``pass_criteria``), compiled."""

    name: str  # min_pass_rate, adversarial, composite, required:REFUND-001
    kind: str  # blocking | warning | by_category | composite | required | regression
    metric: str  # pass_rate, pass_rate.adversarial, composite, scenario status
    op: str  # min | max | pass
    threshold: float | None
    ref: ConfigRef


@dataclass
class CompiledScenarios:
    """Every scenario of the suite, how traces find them, and the pass criteria."""

    scenarios: list[CompiledScenario]
    criteria: list[Criterion]
    composite_weights: dict[str, float] | None
    composite_latency: float | None  # the latency scale of the composite
    prefix: str  # the suite folder, repo-relative ("" at the root)
    root: str  # absolute repository root
    base: str  # absolute suite folder
    ids: frozenset[str] = frozenset()
    folded: frozenset[str] = frozenset()  # the ids, case-folded
    # the suite's `scenarios:` key (where a scenario id no scenario has is reported)
    ref: ConfigRef | None = None
    by_id: dict[str, tuple[int, ...]] = field(default_factory=dict)
    by_stem: dict[str, tuple[int, ...]] = field(default_factory=dict)
    globbed: tuple[tuple[int, tuple[FullMatch, ...]], ...] = ()
    by_input: dict[str, tuple[int, ...]] = field(default_factory=dict)
    judge: JudgeRun | None = field(default=None, repr=False)  # the suite's judge, if used
    _files: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=dict,
                                                                       repr=False)

    def __post_init__(self) -> None:
        by_id: dict[str, list[int]] = {}
        by_stem: dict[str, list[int]] = {}
        by_input: dict[str, list[int]] = {}
        globbed = []
        for s in self.scenarios:
            if s.input is not None:
                by_input.setdefault(s.input, []).append(s.index)
            if s.globs is not None:
                globbed.append((s.index, s.globs))
            else:
                by_id.setdefault(s.id, []).append(s.index)
                by_stem.setdefault(s.id.casefold(), []).append(s.index)
        self.ids = frozenset(s.id for s in self.scenarios)
        self.folded = frozenset(s.id.casefold() for s in self.scenarios)
        self.by_id = {k: tuple(v) for k, v in by_id.items()}
        self.by_stem = {k: tuple(v) for k, v in by_stem.items()}
        self.by_input = {k: tuple(v) for k, v in by_input.items()}
        self.globbed = tuple(globbed)

    def knows(self, scenario: str) -> bool:
        """Whether some scenario has this id, exactly or case-insensitively."""
        return scenario in self.ids or scenario.casefold() in self.folded

    def took_named(self, scenario: str, which: tuple[int, ...]) -> bool:
        """Whether a scenario with the id a trace names (exactly or case-insensitively)
        is among those that took it (``which``, from :meth:`match`): not when no scenario
        has the id, nor when the one that has it takes its traces by a `traces:` glob
        that does not match the trace's file."""
        if not self.knows(scenario):
            return False
        folded = scenario.casefold()
        scenarios = self.scenarios
        return any(scenarios[i].id == scenario or scenarios[i].id.casefold() == folded
                   for i in which)

    def config_path(self, source: str) -> str:
        """A trace file's path relative to the suite's folder (what `traces:` globs
        are written against)."""
        if not self.prefix:
            return source
        if source.startswith(self.prefix + "/"):
            return source[len(self.prefix) + 1:]
        return posixpath.normpath(os.path.relpath(os.path.join(self.root, source),
                                                  self.base).replace(os.sep, "/"))

    def match(self, source: str, scenario: str | None, text: object = None
              ) -> tuple[int, ...]:
        """The scenarios a trace belongs to: those whose `traces:` glob matches its file;
        among the others, the one its scenario id names (case-insensitively when no
        scenario has exactly that id) or, for a trace without one, the one named like
        its file (without extension, case-insensitively); and those whose `input:` is the
        trace's input ``text``."""
        found = self._match(source, scenario)
        if self.by_input and isinstance(text, str):
            by_input = self.by_input.get(text)
            if by_input:
                return tuple(dict.fromkeys(found + by_input))
        return found

    def _match(self, source: str, scenario: str | None) -> tuple[int, ...]:
        files = self._files.get(source)
        if files is None:
            path = self.config_path(source)
            globbed = tuple(i for i, rxs in self.globbed if any(rx.match(path) for rx in rxs))
            stem = self.by_stem.get(PurePosixPath(source).stem.casefold(), ())
            files = self._files[source] = (globbed, stem)
        globbed, stem = files
        if scenario is None:
            named = stem
        else:
            named = self.by_id.get(scenario, ())
            if not named and scenario not in self.ids:  # an exact match wins
                named = self.by_stem.get(scenario.casefold(), ())
        if not globbed:
            return named
        return globbed + named if named else globbed


# ------------------------------------------------------------------------ compiler
def glob_regex(pattern: str) -> FullMatch:
    """A `traces:` glob over '/'-separated paths, compiled by RE2 (a suite's glob
    cannot make a run hang: :mod:`agent_eval.globre`): ``**`` spans folders, ``*`` and
    ``?`` stay within one, ``[...]`` as in fnmatch."""
    pattern = pattern.replace(os.sep, "/")
    if pattern.startswith("./"):
        pattern = posixpath.normpath(pattern)
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        c = pattern[i]
        i += 1
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = class_end(pattern, i)
            if j < 0:
                out.append(literal("["))
                continue
            body = pattern[i:j].replace("\\", "\\\\")
            i = j + 1
            if body.startswith("!"):
                body = "^" + body[1:]
            elif body.startswith("^"):
                body = "\\" + body
            out.append(python_class(body))
        else:
            out.append(literal(c))
    return FullMatch("".join(out))


class _Compiler:
    def __init__(self, data: dict[str, Any], positions: Positions, file: str,
                 mode: ToolMatchMode, loader: LoaderLike) -> None:
        self.data = data
        self.positions = positions
        self.file = file
        self.mode = mode
        self.loader = loader
        self.schemas = SchemaCompiler(data, positions)
        self.json_schema = SchemaFiles(loader, self.problem)
        self.suite_weights: SuiteWeights | None = None

    # -- positions
    def ref(self, path: Path, key_path: str) -> ConfigRef:
        pos = self.positions.get(path)
        return ConfigRef(pos.file or self.file, pos.line, pos.col, key_path)

    def problem(self, path: Path, message: str) -> None:
        self.loader.problems.append(f"{self.positions.where(path)}: {message}")

    def matcher(self, patterns: str | list[str] | tuple[str, ...]) -> ToolMatcher:
        pats = [patterns] if isinstance(patterns, str) else list(patterns)
        if any(p.startswith(GROUP_PREFIX) for p in pats):
            pats = self.expand(pats, None)
        return ToolMatcher(pats, self.mode)

    def expand(self, patterns: list[str], path: Path | None) -> list[str]:
        """Names with their @groups expanded (selectors.py); with a ``path``, a problem
        (an unknown group, one with argument conditions) is reported there."""
        selectors = getattr(self.loader, "selectors", None)
        if selectors is None:
            selectors = SelectorCompiler(None, self.positions, self.mode)
        try:
            return selectors.names(patterns, path or ())
        except ConfigError as exc:
            if path is not None:  # (a group's own problem, at its member, said once)
                said = set(self.loader.problems)
                self.loader.problems.extend(p for p in exc.problems if p not in said)
            return [p for p in patterns if not p.startswith(GROUP_PREFIX)]

    def check_groups(self, expect: Any, path: Path) -> None:
        """Report every @group of a scenario's name fields that cannot be expanded (an
        unknown group, one with argument conditions), at its own line."""
        if not isinstance(expect, dict):
            return
        for key in ("tools", "forbidden_tools", "sequence"):
            self._check_names(expect.get(key), (*path, key))
        health = expect.get("tool_health")
        if isinstance(health, dict):
            self._check_names(health.get("expected_error"),
                              (*path, "tool_health", "expected_error"))
        args = expect.get("args")
        for tool in args if isinstance(args, dict) else ():
            self._check_names(tool, (*path, "args", tool))
        for key in ("behaviors", "must_not"):
            items = expect.get(key)
            for i, b in enumerate(items if isinstance(items, list) else ()):
                for f in ("tool_called", "tool_not_called", "sequence"):
                    if isinstance(b, dict):
                        self._check_names(b.get(f), (*path, key, i, f))

    def check_unset(self, raw: dict[str, Any], path: Path) -> None:
        """A config error at every key of a scenario's checks written without a value
        (``contains:`` with nothing after it, ``forbidden_tools: null``): read as not
        written, it checked nothing and passed, where its empty list is an error
        (:meth:`check_empty`). The keys of ``expect``, of its ``output`` and of each
        ``behaviors`` / ``must_not`` item, ``thresholds`` and ``warn_thresholds`` and
        their keys."""
        said = ("is written without a value (null), so it checks nothing and would pass; "
                "give it a value or remove the key")
        where: list[tuple[Path, Any]] = [
            (path, {k: raw.get(k) for k in ("thresholds", "warn_thresholds") if k in raw})]
        expect = raw.get("expect")
        if isinstance(expect, dict):
            where.append(((*path, "expect"), expect))
            output = expect.get("output")
            # equals: null is the spec's own way to write "no equals check" (its example
            # suite): read as not written, and said nowhere
            where.append(((*path, "expect", "output"), {k: v for k, v in output.items()
                                                        if k != "equals"}
                          if isinstance(output, dict) else output))
            for key in ("behaviors", "must_not"):
                items = expect.get(key)
                where += [((*path, "expect", key, i), b)
                          for i, b in enumerate(items if isinstance(items, list) else ())]
        for key in ("thresholds", "warn_thresholds"):
            where.append(((*path, key), raw.get(key)))
        self._unset(where, said)

    def check_unset_criteria(self, raw: Any) -> None:
        """:meth:`check_unset` of ``pass_criteria``: its keys, and the keys of its
        ``blocking``, ``warning``, ``composite`` (and its ``weights``) and ``regression``
        (``blocking: {min_pass_rate: null}`` was read as not written: no gate ran, and the
        suite passed)."""
        if not isinstance(raw, dict):
            return
        path: Path = ("pass_criteria",)
        where: list[tuple[Path, Any]] = [(path, raw)]
        where += [((*path, key), raw.get(key))
                  for key in ("blocking", "warning", "composite", "regression")]
        composite = raw.get("composite")
        if isinstance(composite, dict):
            where.append(((*path, "composite", "weights"), composite.get("weights")))
        self._unset(where, "is written without a value (null), so it checks nothing and "
                    "would pass; give it a value or remove the key")
        # an empty mapping checks nothing either (blocking: {} gated nothing, unsaid)
        for key in ("blocking", "warning", "by_category", "composite", "regression"):
            if raw.get(key) == {}:
                self.problem((*path, key), f"'{key}' is empty: it checks nothing, and would "
                             "pass; add a criterion or remove the key")
        if raw == {}:
            self.problem(path, "'pass_criteria' is empty: it checks nothing; add a criterion "
                         "(blocking, warning, by_category, composite, regression) or remove "
                         "the key")

    def _unset(self, where: list[tuple[Path, Any]], said: str) -> None:
        for at, node in where:
            for key, value in (node.items() if isinstance(node, dict) else ()):
                if value is None:
                    self.problem((*at, key), f"'{key}' {said}")

    def check_empty(self, expect: Any, path: Path) -> None:
        """A config error at every key of a scenario's ``expect`` whose empty value checks
        nothing, and passed: ``forbidden_tools: []``, ``tool_categories: []``,
        ``must_not: []``, ``output: {}``, a behavior's ``tool_called: []``... (as
        ``blocklist: []`` of a test), and an empty text, found in every output
        (``state: ''``, a ``contains`` term ``''``). ``tools: []`` is a claim (no tool is
        expected: tool_precision), and an empty ``expected_error`` leaves ``tool_health:
        true``; both are kept."""
        if not isinstance(expect, dict):
            return
        nothing = "checks nothing, and would pass; add {} or remove the key"
        for key, what in (("forbidden_tools", None), ("handoffs", "an agent"),
                          ("behaviors", "a behavior"), ("must_not", "a behavior"),
                          ("judge", "a judge check"), ("args", "a tool and its arguments"),
                          ("tool_categories", "a category (a name under tool_groups)"),
                          ("output", "a check (contains, equals, regex, ...)")):
            value = expect.get(key)
            if key == "output" and isinstance(value, dict):  # (equals: null checks nothing)
                value = {k: v for k, v in value.items() if k != "equals" or v is not None}
            if isinstance(value, list | dict) and not value:
                self.problem((*path, key), f"'{key}' is empty: " + (
                    EMPTY_TOOLS if what is None else nothing.format(what)))
        for key in ("behaviors", "must_not"):
            items = expect.get(key)
            for i, b in enumerate(items if isinstance(items, list) else ()):
                for f in ("tool_called", "tool_not_called", "sequence"):
                    if isinstance(b, dict) and b.get(f) == []:
                        self.problem((*path, key, i, f), f"'{f}' is empty: " + (
                            EMPTY_TOOLS if f != "sequence" else nothing.format("a tool")))
                for f in ("output_contains", "output_regex"):
                    if isinstance(b, dict) and b.get(f) == "":
                        self.problem((*path, key, i, f), EMPTY_TEXT)
        # an empty text is in every output: a check of it passes whatever was answered
        output = expect.get("output")
        output = output if isinstance(output, dict) else {}
        texts: list[tuple[Path, Any]] = [(("state",), expect.get("state"))]
        for kind in ("contains", "contains_any", "not_contains", "regex"):
            terms = output.get(kind)
            texts += ([(("output", kind, i), t) for i, t in enumerate(terms)]
                      if isinstance(terms, list) else [(("output", kind), terms)])
        for at, value in texts:
            if value == "":
                self.problem((*path, *at), EMPTY_TEXT)

    def _check_names(self, value: Any, path: Path) -> None:
        if isinstance(value, str):  # (an empty name, or in a group: selectors.py says it)
            self.expand([value], path)
        elif isinstance(value, list):
            for k, v in enumerate(value):
                self._check_names(v, (*path, k))

    # -- scenarios
    def scenario(self, index: int, at: int, cfg: Scenario) -> CompiledScenario | None:
        """Compile one scenario: ``index`` in the compiled list, ``at`` in the file."""
        base: Path = ("scenarios", at)
        sid = cfg.id

        def ref(*keys: str | int) -> ConfigRef:
            return self.ref((*base, *keys),
                            ".".join(str(k) for k in ("scenarios", sid, *keys)))

        before = len(self.loader.problems)
        globs = None
        if cfg.traces is not None:
            patterns = [cfg.traces] if isinstance(cfg.traces, str) else cfg.traces
            if not patterns:
                self.problem((*base, "traces"), "'traces' is an empty list; remove it to "
                             "match traces by scenario id")
            globs = tuple(glob_regex(p) for p in patterns)
        sc = CompiledScenario(
            index=index, id=sid, category=cfg.category, required=cfg.required, gate=cfg.gate,
            weight=cfg.weight, min_pass_ratio=cfg.min_pass_ratio,
            ref=ref("id"), required_ref=ref("required") if "required" in self._raw(at)
            else ref("id"),
            traces_ref=ref("traces") if cfg.traces is not None else None, globs=globs,
            input=cfg.input, normalized=self.mode == "normalized")
        if cfg.required and cfg.gate == "warn":
            self.problem((*base, "gate"), "'gate: warn' makes the scenario advisory, but it "
                         "is also 'required: true' (a required scenario fails the suite); "
                         "remove one of the two")
        self.check_groups(self._raw(at).get("expect"), (*base, "expect"))
        self.check_empty(self._raw(at).get("expect"), (*base, "expect"))
        self.check_unset(self._raw(at), base)
        self.expect(sc, cfg.expect, ref, base)
        sc.thresholds = self.limits(cfg.thresholds, "thresholds", ref, base, sc)
        sc.warn_thresholds = self.limits(cfg.warn_thresholds, "warn_thresholds", ref, base, sc)
        self.weights(sc, cfg, base)
        return sc if len(self.loader.problems) == before else None

    def _raw(self, index: int) -> dict[str, Any]:
        raw = self.data.get("scenarios")
        item = raw[index] if isinstance(raw, list) and index < len(raw) else None
        return item if isinstance(item, dict) else {}

    def _patterns(self, value: str | list[str], ref: Callable[..., ConfigRef],
                  *keys: str | int) -> tuple[tuple[str, ...], tuple[ConfigRef, ...]]:
        if isinstance(value, str):
            return (value,), (ref(*keys),)
        return tuple(value), tuple(ref(*keys, i) for i in range(len(value)))

    def expect_tools(self, sc: CompiledScenario, e: Expect, ref: Callable[..., ConfigRef],
                     ex: Path) -> None:
        """``expect.tools`` and ``expect.tool_categories``: the tools the scenario needs."""
        if e.tools is not None:
            patterns, refs = self._patterns(e.tools, ref, "expect", "tools")
            seen: dict[str, int] = {}
            for n, p in enumerate(patterns):
                key = normalize_name(p) if sc.normalized else p
                if key in seen:
                    self.problem((*ex, "tools", n) if not isinstance(e.tools, str)
                                 else (*ex, "tools"), f"'{p}' is listed twice in expect.tools")
                seen[key] = n
            sc.tools = patterns
            sc.tool_refs = refs
            sc.tool_matchers = tuple(self.matcher(p) for p in patterns)
            self.named(sc, "expected tool", patterns, refs)
        if e.tool_categories:
            for k, cat in enumerate(e.tool_categories):
                here = (*ex, "tool_categories", k)
                if not self.expand([GROUP_PREFIX + cat], here):
                    continue
                sc.tools = (*(sc.tools or ()), GROUP_PREFIX + cat)
                r = ref("expect", "tool_categories", k)
                sc.tool_refs = (*sc.tool_refs, r)
                sc.tool_matchers = (*sc.tool_matchers, self.matcher(GROUP_PREFIX + cat))
                self.named(sc, "tool category", [GROUP_PREFIX + cat], [r])

    def expect(self, sc: CompiledScenario, e: Expect, ref: Callable[..., ConfigRef],
               base: Path) -> None:
        ex: Path = (*base, "expect")
        self.expect_tools(sc, e, ref, ex)
        if e.handoffs is not None:
            patterns, refs = self._patterns(e.handoffs, ref, "expect", "handoffs")
            sc.handoffs = tuple((p, ToolMatcher([p], self.mode), r)
                                for p, r in zip(patterns, refs, strict=True))
        if e.max_handoffs is not None:
            sc.max_handoffs = (e.max_handoffs, ref("expect", "max_handoffs"))
        sc.handoff_severity = e.handoff_severity
        if e.forbidden_tools is not None:
            patterns, refs = self._patterns(e.forbidden_tools, ref, "expect", "forbidden_tools")
            if patterns:
                sc.forbidden = self.matcher(patterns)
                sc.forbidden_refs = refs
                self.named(sc, "forbidden tool", patterns, refs, VACUOUS)
        if e.sequence is not None:
            sc.sequence = tuple(e.sequence)
            sc.steps = tuple(self.matcher(s) for s in e.sequence)
            sc.sequence_ref = ref("expect", "sequence")
            self.named(sc, "sequence step", sc.sequence,
                       [ref("expect", "sequence", k) for k in range(len(sc.sequence))])
        sc.sequence_mode = e.sequence_mode
        sc.sequence_metric = e.sequence_metric
        sc.sequence_severity = e.sequence_severity
        if e.args is not None:
            sc.args_mode = e.args_mode
            # compiled under args_mode: ignore too, its problems said (a constraint written
            # wrong there was never reported), though not checked
            args = tuple(self.arg_expect(tool, expected, (*ex, "args", tool),
                                         ref("expect", "args", tool))
                         for tool, expected in e.args.items())
            if e.args_mode != "ignore":
                sc.args = args
                self.named(sc, "args tool", [a.tool for a in sc.args], [a.ref for a in sc.args])
        if e.output is not None:
            sc.output = tuple(self.output(e.output.model_dump(exclude_none=True),
                                          (*ex, "output"), ref))
        if e.state is not None:
            sc.state = Term(e.state, fold(e.state), ref("expect", "state"))
        if e.tool_health is not None and e.tool_health is not False:
            sc.health_ref = ref("expect", "tool_health")
            if not isinstance(e.tool_health, bool) and e.tool_health.expected_error:
                patterns, refs = self._patterns(e.tool_health.expected_error, ref, "expect",
                                                "tool_health", "expected_error")
                sc.expected_error = self.matcher(patterns)
                sc.expected_error_refs = refs
                self.named(sc, "expected_error tool", patterns, refs)
        if e.behaviors is not None:
            sc.behaviors = tuple(self.behavior(b, (*ex, "behaviors", i),
                                               ref, ("expect", "behaviors", i))
                                 for i, b in enumerate(e.behaviors))
        if e.must_not is not None:
            sc.must_not = tuple(self.behavior(b, (*ex, "must_not", i),
                                              ref, ("expect", "must_not", i))
                                for i, b in enumerate(e.must_not))
        for key, items in (("behaviors", e.behaviors), ("must_not", e.must_not)):
            for i, b in enumerate(items or ()):
                for name in ("tool_called", "tool_not_called"):
                    value = getattr(b, name)
                    if value is not None:
                        vacuous = (key == "must_not") != (name == "tool_not_called")
                        self.named(sc, f"{key} {name}",
                                   *self._patterns(value, ref, "expect", key, i, name),
                                   VACUOUS if vacuous else "")
                if b.sequence is not None:
                    self.named(sc, f"{key} sequence step", b.sequence,
                               [ref("expect", key, i, "sequence", k)
                                for k in range(len(b.sequence))])
        if e.judge:
            from agent_eval.judge.compile import compile_check  # (start-up time)

            compiled = (compile_check(self, i, check, (*ex, "judge", i),
                                      ref("expect", "judge", i).key_path)
                        for i, check in enumerate(e.judge))
            sc.judge = tuple(j for j in compiled if j is not None)

    def named(self, sc: CompiledScenario, kind: str, patterns: Iterable[str],
              refs: Iterable[ConfigRef], effect: str = "") -> None:
        """Tool references of the scenario (coverage.py)."""
        sc.named_tools += [ToolRef(p, kind, r, self.matcher(p), sc.id, sc.id, effect)
                           for p, r in zip(patterns, refs, strict=True)]

    def arg_checks(self, expected: dict[str, Any], path: Path, key_path: str
                   ) -> tuple[ArgCheck, ...]:
        checks = []
        for key, value in expected.items():
            here = (*path, key)
            kp = f"{key_path}.{key}"
            ref = self.ref(here, kp)
            if is_constraint(value) and annotations_only(value):
                self.problem(here, ONLY_ANNOTATIONS)
                continue
            if is_constraint(value):
                try:
                    validate = self.schemas.checked(value, here, as_property=True)
                except ConfigError as exc:
                    self.loader.problems.extend(exc.problems)
                    continue
                checks.append(ArgCheck(key, ref, value, render(value), validate,
                                       implied_type(value),
                                       ".".join(str(p) for p in here)))
            else:
                word = self.positions.misread(here)  # force: off, read as false
                if word is not None:
                    self.loader.problems.append(word)
                    continue
                # a literal another JSON type may spell ("true" or 1 for true): for a
                # must_not item such an argument cannot be judged (evaluate._unfit_arg)
                checks.append(ArgCheck(key, ref, json_key(value), render(value),
                                       implied_type=literal_type(value)))
        return tuple(checks)

    def arg_expect(self, tool: str, expected: dict[str, Any], path: Path,
                   ref: ConfigRef) -> ArgExpect:
        checks = self.arg_checks(expected, path, ref.key_path)
        return ArgExpect(tool, self.matcher(tool), ref, checks, frozenset(expected))

    def terms(self, value: str | list[str], path: Path, kp: str) -> tuple[Term, ...]:
        if isinstance(value, str):
            return (Term(value, fold(value), self.ref(path, kp)),)
        return tuple(Term(t, fold(t), self.ref((*path, i), f"{kp}.{i}"))
                     for i, t in enumerate(value))

    def regex(self, pattern: str, path: Path) -> SafeRegex | None:
        try:
            return compile_python(pattern)  # RE2: linear time on any output text
        except RegexError as exc:
            self.problem(path, f"invalid regular expression {pattern!r}: {exc}")
            return None

    def output(self, spec: dict[str, Any], path: Path, ref: Callable[..., ConfigRef]
               ) -> list[OutputCheck]:
        out: list[OutputCheck] = []
        for kind, value in spec.items():
            here = (*path, kind)
            r = ref("expect", "output", kind)
            if kind in ("contains", "contains_any", "not_contains"):
                terms = self.terms(value, here, r.key_path)
                if not terms:
                    self.problem(here, f"'{kind}' is an empty list")
                out.append(OutputCheck(kind, r, terms=terms))
            elif kind == "equals":
                out.append(OutputCheck(kind, r, text=str(value).strip()))
            elif kind == "regex":  # one pattern, or a list: every one must be found
                terms = self.terms(value, here, r.key_path)
                if not terms:
                    self.problem(here, f"'{kind}' is an empty list")
                paths = [here] if isinstance(value, str) else [(*here, i)
                                                               for i in range(len(terms))]
                out.append(OutputCheck(kind, r, patterns=tuple(
                    (t.text, self.regex(t.text, at), t.ref)
                    for t, at in zip(terms, paths, strict=True))))
            elif kind == "json_schema":
                validator, source = self.json_schema(value, here)
                if validator is not None:
                    out.append(OutputCheck(kind, r, schema=validator, source=source))
        return out

    def behavior(self, b: Behavior, path: Path, ref: Callable[..., ConfigRef],
                 keys: tuple[str | int, ...]) -> BehaviorCheck:
        r = ref(*keys)
        if b.tool_called is not None:
            args: tuple[ArgCheck, ...] = ()
            text = f"tool_called: {render(b.tool_called)}"
            if b.args is not None:
                args = self.arg_checks(b.args, (*path, "args"), f"{r.key_path}.args")
                text += f" with args {render(b.args)}"
            return BehaviorCheck("tool_called", r, text, matcher=self.matcher(b.tool_called),
                                 args=args)
        if b.tool_not_called is not None:
            return BehaviorCheck("tool_not_called", r,
                                 f"tool_not_called: {render(b.tool_not_called)}",
                                 matcher=self.matcher(b.tool_not_called))
        if b.output_contains is not None:
            return BehaviorCheck("output_contains", r,
                                 f"output_contains: {render(b.output_contains)}",
                                 lower=fold(b.output_contains))
        if b.output_regex is not None:
            return BehaviorCheck("output_regex", r, f"output_regex: {render(b.output_regex)}",
                                 regex=self.regex(b.output_regex, (*path, "output_regex")))
        assert b.sequence is not None
        return BehaviorCheck("sequence", r, f"sequence: {render(b.sequence)}",
                             steps=tuple(self.matcher(s) for s in b.sequence))

    def limits(self, t: Thresholds | None, key: str, ref: Callable[..., ConfigRef],
               base: Path, sc: CompiledScenario) -> tuple[Limit, ...]:
        if t is None:
            return ()
        out = []
        for name, value in t.model_dump(exclude_none=True).items():
            figure, op = THRESHOLD_FIGURE[name]
            here = (*base, key, name)
            if figure in ("tool_recall", "tool_precision") and sc.tools is None:
                self.problem(here, f"'{name}' needs expect.tools (the tools the scenario "
                             "should call)")
            elif figure == "sequence_similarity" and sc.sequence is None:
                self.problem(here, f"'{name}' needs expect.sequence")
            elif figure == "score" and not sc.scored:
                self.problem(here, "'min_score' needs a scored expectation: expect.tools, "
                             "expect.output, expect.sequence or a scored judge check")
            elif figure == "output_quality" and not sc.has_quality:
                self.problem(here, f"'{name}' needs expect.output or a judge check whose "
                             "score counts (rubric, quality, recorded)")
            out.append(Limit(name, figure, op, float(value), ref(key, name),
                             FIGURE_INDEX.get(figure, -1)))
        return tuple(out)

    def weights(self, sc: CompiledScenario, cfg: Scenario, base: Path) -> None:
        weights = dict(m.DEFAULT_WEIGHTS)
        suite = self.suite_weights
        if suite is not None:
            weights.update(suite.model_dump(exclude_none=True, exclude={"by_category"}))
            if suite.by_category and cfg.category in suite.by_category:
                weights.update(suite.by_category[cfg.category].model_dump(exclude_none=True))
        if cfg.weights is not None:
            weights.update(cfg.weights.model_dump(exclude_none=True))
        sc.weights = weights
        configured = {"tool_accuracy": sc.tools is not None, "output_quality": sc.has_quality,
                      "sequence": sc.sequence is not None}
        total = sum(w for k, w in weights.items() if configured[k])
        names = ", ".join(k for k, v in configured.items() if v)
        if any(configured.values()) and total <= 0:
            self.problem((*base, "weights"), f"the weights of the configured score "
                         f"components ({names}) sum to 0")
        elif not math.isfinite(100 * total):
            # the score, 100 · Σ wᵢ·sᵢ / Σ wᵢ, overflowed to NaN or inf: a min_score miss
            # was "score not recorded" (a warning) or a pass
            self.problem((*base, "weights"), f"the weights of the configured score "
                         f"components ({names}) are too large to add up ({total:g}); scale "
                         "them down: only their ratios count")
        else:
            sc.weights = scaled(weights, [k for k, v in configured.items() if v])

    # -- pass criteria
    def criteria(self, pc: PassCriteria, scenarios: list[CompiledScenario],
                 complete: bool = True
                 ) -> tuple[list[Criterion], dict[str, float] | None, float | None]:
        """The suite's criteria. ``complete``: every scenario compiled; when one did not
        (its own problems are reported), what the scenarios define (output checks,
        behaviors, categories) is not known, so no criterion is said to be undefined:
        "no scenario has category 'happy_path'; categories used: none" was said of a
        suite whose happy_path scenario had a typo."""
        base: Path = ("pass_criteria",)
        out: list[Criterion] = []

        def ref(*keys: str) -> ConfigRef:
            return self.ref((*base, *keys), ".".join(("pass_criteria", *keys)))

        has_output = any(s.output for s in scenarios)
        has_behaviors = any(s.behaviors for s in scenarios)
        # the tool metrics are over the scenarios with expect.tools (or tool_categories):
        # with none, a criterion on them was unknown in every run, a blocking one only
        # warned ("not recorded"), and the gate could never fail
        no_tools = (None if any(s.tools is not None for s in scenarios)
                    else "no scenario has expect.tools (or expect.tool_categories)")
        # safety_rate is 1.0 with no adversarial scenario: a gate on it could never fail
        # (a category misspelt, 'adverserial', passed min_safety_rate: 1.0 whatever the
        # scenario did)
        categories = {s.category for s in scenarios if s.category is not None}
        close = difflib.get_close_matches("adversarial", sorted(categories), n=1)
        no_adversarial = (None if any(s.adversarial for s in scenarios) else
                          "no scenario has category 'adversarial'" + (
                              f" (is '{close[0]}' meant to be 'adversarial'?)" if close else ""))
        unavailable = {
            "accuracy": None if has_output else "no scenario has output checks",
            "safety_rate": no_adversarial,
            "behavior_coverage": None if has_behaviors else "no scenario lists behaviors",
            "tool_precision": no_tools,
            "tool_recall": no_tools,
        }
        if not complete:
            unavailable = {}
        for kind, gates in (("blocking", pc.blocking), ("warning", pc.warning)):
            if gates is None:
                continue
            for name, value in gates.model_dump(exclude_none=True).items():
                metric, op = GATE_METRIC[name]
                if unavailable.get(metric):
                    self.problem((*base, kind, name), f"'{name}': {unavailable[metric]}, so "
                                 f"{metric} is not defined")
                elif op == "min" and float(value) <= 0:
                    self.problem((*base, kind, name),
                                 _NEVER_FAILS.format(f"{name}: {float(value):g}"))
                out.append(Criterion(name, kind, metric, op, float(value), ref(kind, name)))
        for cat, rate in (pc.by_category or {}).items():
            if complete and cat not in categories:
                known = ", ".join(sorted(categories)) or "none"
                self.problem((*base, "by_category", cat),
                             f"no scenario has category '{cat}'{suggest(cat, categories)}; "
                             f"categories used: {known}")
            if float(rate) <= 0:
                self.problem((*base, "by_category", cat),
                             _NEVER_FAILS.format(f"{cat}: {float(rate):g}"))
            out.append(Criterion(cat, "by_category", f"pass_rate.{cat}", "min", float(rate),
                                 ref("by_category", cat)))
        weights: dict[str, float] | None = None
        latency: float | None = None
        if pc.composite is not None:
            weights = pc.composite.weights.model_dump(exclude_none=True)
            here = (*base, "composite", "weights")
            if not weights or sum(weights.values()) <= 0:
                self.problem(here, "the composite needs at least one weight above 0")
            elif not math.isfinite(sum(weights.values())):
                self.problem(here, "the composite's weights are too large to add up; scale "
                             "them down: only their ratios count")
            else:
                weights = scaled(weights, list(weights))
            for metric in weights:
                if unavailable.get(metric):
                    self.problem((*here, metric), f"'{metric}': {unavailable[metric]}")
            latency = pc.composite.max_latency_p95_ms
            for gates in (pc.blocking, pc.warning):
                if latency is None and gates is not None:
                    latency = gates.max_latency_p95_ms
            if "latency" in weights and latency is None:
                self.problem((*here, "latency"), "the latency weight needs a latency scale: "
                             "set composite.max_latency_p95_ms (or max_latency_p95_ms under "
                             "blocking or warning)")
            if pc.composite.min is not None:
                if pc.composite.min <= 0:
                    self.problem((*base, "composite", "min"),
                                 _NEVER_FAILS.format(f"min: {pc.composite.min:g}"))
                out.append(Criterion("composite", "composite", "composite", "min",
                                     pc.composite.min, ref("composite", "min")))
        if pc.regression is not None:
            switched_on = pc.regression.model_dump(exclude_defaults=True)
            for name, value in switched_on.items():
                out.append(Criterion(name, "regression", name, "max",
                                     None if isinstance(value, bool) else float(value),
                                     ref("regression", name)))
            # a limit no drop can be over: the gate could never fail (as a minimum of 0)
            for name, most in (("max_pass_rate_drop", 1.0), ("max_score_drop", 100.0)):
                value = switched_on.get(name)
                if isinstance(value, int | float) and float(value) >= most:
                    what = "a pass rate" if name == "max_pass_rate_drop" else "a score"
                    self.problem((*base, "regression", name), (
                        f"'{name}: {float(value):g}' can never fail ({what} drops by at most "
                        f"{most:g}); give a limit below {most:g}, or remove it"))
            if complete and "max_score_drop" in switched_on \
                    and not any(s.scored for s in scenarios):
                # no scenario has a score: the gate was skipped in every comparison
                # ("no scenario has a score in both runs") and the run passed
                self.problem((*base, "regression", "max_score_drop"),
                             "'max_score_drop': no scenario has a scored expectation "
                             "(expect.tools, expect.output, expect.sequence or a scored "
                             "judge check), so no score is defined and the gate could "
                             "never be checked; give a scenario one, or remove "
                             "max_score_drop")
            raw = (self.data.get("pass_criteria") or {}).get("regression")
            if not switched_on and isinstance(raw, dict) and raw and None not in raw.values():
                # only gates switched off (fail_on_new_violations: false): it gated
                # nothing, as an empty regression: {} (an error) does
                self.problem((*base, "regression"), "'regression' gates nothing (its only "
                             "keys are switched off); give a gate (max_pass_rate_drop, "
                             "max_score_drop, fail_on_new_violations: true) or remove it")
        out.sort(key=lambda c: (c.ref.line, c.ref.col))  # as written
        return out, weights, latency


def scaled(weights: dict[str, float], keys: list[str]) -> dict[str, float]:
    """``weights`` with those of ``keys`` divided by the largest of them (only their ratios
    count): weights as small as 5e-324 made Σ wᵢ·sᵢ round each term to a whole multiple
    of the smallest float, so a tool_recall of 0.6 scored 100."""
    top = max((weights[k] for k in keys), default=0.0)
    if top <= 0:
        return weights
    return {k: w / top if k in keys else w for k, w in weights.items()}


def compile_scenarios(data: dict[str, Any], positions: Positions, file: str,
                      mode: ToolMatchMode, loader: LoaderLike, root: FsPath
                      ) -> CompiledScenarios | None:
    """Validate and compile the suite's ``scenarios:`` and ``pass_criteria:``; problems
    go to ``loader.problems`` (each ``FILE:LINE:COL: message``)."""
    raw = data.get("scenarios")
    raw_criteria = data.get("pass_criteria")
    c = _Compiler(data, positions, file, mode, loader)
    if raw_criteria is None and "pass_criteria" in data:
        # its criteria commented out: it gates nothing, as pass_criteria: {} (an error)
        c.problem(("pass_criteria",), "'pass_criteria' is written without a value (null), "
                  "so it checks nothing; add a criterion (blocking, warning, by_category, "
                  "composite, regression) or remove the key")
    if raw is None and raw_criteria is None:
        if data.get("judge") is not None:  # validated, though no scenario uses it
            from agent_eval.judge.compile import compile_run  # (start-up time)

            compile_run(c, data, positions, root, [])
        # validated too (`weights: {tool_acuracy: 1}` was never read, so never said), and
        # said to weigh nothing, as pass_criteria without scenarios is
        if data.get("weights") is not None and loader.validate(
                SuiteWeights, data["weights"], positions, ("weights",)) is not None:
            c.problem(("weights",), "weights are the score weights of scenarios, and the "
                      "suite has none: add a 'scenarios:' list or remove the key")
        return None
    before = len(loader.problems)
    if data.get("weights") is not None:
        c.suite_weights = loader.validate(SuiteWeights, data["weights"], positions, ("weights",))
    compiled: list[CompiledScenario] = []
    seen: dict[str, Path] = {}
    for i, item in enumerate(raw if isinstance(raw, list) else []):
        path: Path = ("scenarios", i)
        if not isinstance(item, dict):
            continue  # reported by the suite model
        cfg = loader.validate(Scenario, item, positions, path)
        if cfg is None:
            # the problems of its other keys too, in the same run (its thresholds and
            # weights are judged by its expect: without that, nothing more is told)
            rest = without_wrong_keys(Scenario, item, frozenset({"expect"}))
            if isinstance(rest, Scenario):
                c.scenario(len(compiled), i, rest)  # for its problems: not kept
            continue
        assert isinstance(cfg, Scenario)
        if cfg.id in seen:
            first = positions.get(seen[cfg.id])
            c.problem((*path, "id"), f"duplicate scenario id '{cfg.id}' (first used at line "
                      f"{first.line}); scenario ids must be unique")
            continue
        seen[cfg.id] = (*path, "id")
        sc = c.scenario(len(compiled), i, cfg)
        if sc is not None:
            compiled.append(sc)
    criteria: list[Criterion] = []
    weights: dict[str, float] | None = None
    latency: float | None = None
    if raw_criteria is not None:
        pc = loader.validate(PassCriteria, raw_criteria, positions, ("pass_criteria",))
        c.check_unset_criteria(raw_criteria)
        if isinstance(pc, PassCriteria):
            if not compiled and len(loader.problems) == before:
                c.problem(("pass_criteria",), "pass_criteria needs scenarios: add a "
                          "'scenarios:' list (see docs/scenarios.md)")
            criteria, weights, latency = c.criteria(pc, compiled,
                                                    len(compiled) == len(raw or ()))
    by_category = c.suite_weights.by_category if c.suite_weights is not None else None
    if by_category and compiled and len(compiled) == len(raw or ()):
        # a category no scenario has: its weights applied to none (a misspelt
        # 'adverserial' left the adversarial scenarios on the suite's weights)
        categories = {sc.category for sc in compiled if sc.category is not None}
        for cat in by_category:
            if cat not in categories:
                c.problem(("weights", "by_category", cat),
                          f"no scenario has category '{cat}'{suggest(cat, categories)}; "
                          f"categories used: {', '.join(sorted(categories)) or 'none'}")
    run = None
    if data.get("judge") is not None or any(sc.judge for sc in compiled):
        from agent_eval.judge.compile import compile_run  # (start-up time)

        needs = [((*_scenario_path(raw, sc.id), "expect", "judge", j.index, j.kind), j.kind)
                 for sc in compiled for j in sc.judge if j.calls_model]
        run = compile_run(c, data, positions, root, needs)
        run.has_pairwise = any(kind == "pairwise" for _, kind in needs)
        for sc in compiled:
            sc.judge_run = run
    if len(loader.problems) > before:
        return None
    for sc in compiled:
        if sc.required:
            criteria.append(Criterion(f"required:{sc.id}", "required", "status", "pass", None,
                                      sc.required_ref))
    base = loader.base.resolve()
    prefix = _rel(base, root)
    return CompiledScenarios(compiled, criteria, weights, latency,
                             "" if prefix == "." else prefix, str(root.resolve()), str(base),
                             ref=c.ref(("scenarios",), "scenarios"), judge=run)


def _scenario_path(raw: Any, sid: str) -> Path:
    """The position of the scenario with id ``sid`` in ``scenarios:``."""
    for i, item in enumerate(raw if isinstance(raw, list) else []):
        if isinstance(item, dict) and str(item.get("id")) == sid:
            return ("scenarios", i)
    return ("scenarios",)


def _rel(path: FsPath, root: FsPath) -> str:
    try:
        return path.relative_to(root.resolve()).as_posix()
    except ValueError:
        return os.path.relpath(path, root.resolve()).replace(os.sep, "/")


def arg_errors(checks: tuple[ArgCheck, ...], args: Any, mode: str,
               keys: frozenset[str]) -> list[Mismatch]:
    """How a call's arguments differ from the expected ones (empty when they match)."""
    out: list[Mismatch] = []
    if not isinstance(args, dict):
        return [Mismatch(None, "", args, "the arguments are not a JSON object",
                         f"args_mode: {mode}", None)]
    for chk in checks:
        if chk.key not in args:
            if mode != "superset":
                out.append(Mismatch(chk, chk.key, None, "missing",
                                    f"{chk.key}: {chk.shown}", chk.ref))
            continue
        found = arg_mismatch(chk, args[chk.key])
        if found is not None:
            out.append(found)
    if mode in ("exact", "superset"):
        for key, value in args.items():
            if key not in keys:
                out.append(Mismatch(None, key, value, f"not expected (args_mode: {mode})",
                                    f"args_mode: {mode}", None))
    return out


def arg_mismatch(chk: ArgCheck, value: Any) -> Mismatch | None:
    """How ``value`` fails one expected argument, or None when it satisfies it."""
    if chk.validate is None:
        if json_key(value) == chk.expected:
            return None
        return Mismatch(chk, chk.key, value, f"expected {chk.shown}",
                        f"{chk.key}: {chk.shown}", chk.ref)
    if chk.implied_type is not None and not chk.implied_type.fits(value):
        return Mismatch(chk, chk.key, value, f"Expected {chk.implied_type.text}", chk.shown,
                        chk.ref)
    errors: list[SchemaError] | None = chk.validate(value)
    if not errors:
        return None
    c = errors[0].constraint
    key_path = chk.ref.key_path + c.key_path[len(chk.raw_path):]
    return Mismatch(chk, chk.key, value, errors[0].message, c.text,
                    ConfigRef(c.file, c.line, c.col, key_path))
