"""Rules that never touched a call (docs/rules.md "coverage/unexercised").

Every place of the config that names a tool (a policy key, a sequence rule's tool, a
blocklist or allowlist entry, an ``args_valid`` ``tools:`` filter, a scenario's
expected, forbidden or sequence tool, an ``args`` or behavior tool) is a
:class:`ToolRef`. While traces are evaluated, :class:`CoverageAcc` notes which of them
matched a tool call and which tests touched one. It works per *distinct* tool name
(the hot path is one set lookup per call), keeps a bounded set of the names it saw for
"did you mean", and merges across ``--jobs`` and shards: whether a rule was exercised is
decided only once every trace is known (:func:`unexercised`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agent_eval.findings import ConfigRef, Finding, Severity
from agent_eval.matching import NameIndex, ToolMatcher, is_glob, normalize_name
from agent_eval.rule_ids import COVERAGE_UNEXERCISED
from agent_eval.textdist import edit_distance

RULE = COVERAGE_UNEXERCISED.id
MAX_NAMES = 500  # distinct names kept for suggestions (the smallest, so merges agree)
MAX_NAME_CHARS = 64  # longer names are matched but not kept (OpenAI caps names at 64)


@dataclass(frozen=True, slots=True)
class ToolRef:
    """One place of the config that names a tool."""

    pattern: str  # as written
    kind: str  # what names it, for the message: "policy key", "blocklist entry", ...
    ref: ConfigRef  # the key or list item that names it
    matcher: ToolMatcher
    test: str  # the test (or scenario) it belongs to
    scenario: str | None = None
    effect: str = ""  # what it means when no call matched ("the rule held only vacuously")


@dataclass(frozen=True)
class CoveragePlan:
    """The suite's tool references (deduplicated by location) and, per rule test, the
    question "does a call to this tool exercise the test?"."""

    refs: tuple[ToolRef, ...]
    touches: tuple[Callable[[str], bool], ...]  # per test of the suite, in order
    # Which references a name matches: the names they give literally are looked up and
    # their globs tried together (a name seen was tried against each of a thousand
    # blocklist entries, names or globs: minutes on 20,000 names).
    index: NameIndex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", NameIndex([r.matcher for r in self.refs]))

    @classmethod
    def build(cls, tests: Iterable[Any], scenario_refs: Iterable[ToolRef]) -> CoveragePlan:
        refs: dict[tuple[str, str], ToolRef] = {}
        touches = []
        for test in tests:
            for r in test.tool_refs:
                refs.setdefault((r.ref.file, r.ref.key_path), r)
            touches.append(test.touches)
        for r in scenario_refs:
            refs.setdefault((r.ref.file, r.ref.key_path), r)
        return cls(tuple(refs.values()), tuple(touches))


@dataclass
class CoverageAcc:
    """Which tool references matched a call and which tests were touched (picklable,
    mergeable)."""

    matched: bytearray
    touched: bytearray
    names: set[str] = field(default_factory=set)  # distinct names seen (bounded)
    pending: int = 0  # references and tests not yet matched / touched
    # the globs of the references that matched a name seen (plan.index), not tried again
    seen: list[bytearray] = field(default_factory=list, repr=False, compare=False)

    @classmethod
    def for_plan(cls, plan: CoveragePlan) -> CoverageAcc:
        return cls(bytearray(len(plan.refs)), bytearray(len(plan.touches)),
                   pending=len(plan.refs) + len(plan.touches))

    def see(self, name: str, plan: CoveragePlan) -> None:
        """A tool name that is not in ``names`` yet."""
        if self.pending:
            matched, touched = self.matched, self.touched
            if not self.seen:
                self.seen = plan.index.seen()
            for i in plan.index.matching(name, self.seen):
                if not matched[i]:
                    matched[i] = 1
                    self.pending -= 1
            for j, touches in enumerate(plan.touches):
                if not touched[j] and touches(name):
                    touched[j] = 1
                    self.pending -= 1
        if len(name) <= MAX_NAME_CHARS:
            self.names.add(name)
            if len(self.names) > 2 * MAX_NAMES:
                self._prune()

    def merge(self, other: CoverageAcc) -> None:
        if not other.names and other.pending == len(other.matched) + len(other.touched):
            return  # nothing seen (a replayed shard record, for one)
        for i, hit in enumerate(other.matched):
            if hit and not self.matched[i]:
                self.matched[i] = 1
                self.pending -= 1
        for j, hit in enumerate(other.touched):
            if hit and not self.touched[j]:
                self.touched[j] = 1
                self.pending -= 1
        self.names |= other.names
        if len(self.names) > 2 * MAX_NAMES:
            self._prune()

    def _prune(self) -> None:
        self.names = set(sorted(self.names)[:MAX_NAMES])

    # ------------------------------------------------------------ shards (sharding.py)
    def to_dict(self) -> dict[str, Any]:
        return {"matched": [i for i, hit in enumerate(self.matched) if hit],
                "touched": [j for j, hit in enumerate(self.touched) if hit],
                "names": sorted(self.names)[:MAX_NAMES]}

    def merge_dict(self, data: dict[str, Any]) -> None:
        other = CoverageAcc(bytearray(len(self.matched)), bytearray(len(self.touched)))
        for i in data.get("matched") or ():
            if 0 <= i < len(other.matched):
                other.matched[i] = 1
        for j in data.get("touched") or ():
            if 0 <= j < len(other.touched):
                other.touched[j] = 1
        other.names = {n for n in data.get("names") or () if isinstance(n, str)}
        self.merge(other)


# ------------------------------------------------------------------------ findings
# "Did you mean" compares every unmatched reference with every name kept: a suite of a
# thousand references (or one of 50 KB) against a thousand names took minutes to hours.
# The hints of one run are looked for within HINT_WORK units (a name looked at is one, a
# name compared letter by letter HINT_COMPARE more: both take about as long); once they are
# spent the findings that remain have no hint. A reference longer than MAX_HINT_CHARS gets
# none: no name kept is within two edits of it, and a name inside it is no likely typo.
HINT_WORK = 1_000_000
HINT_COMPARE = 100
MAX_HINT_CHARS = 2 * MAX_NAME_CHARS


@dataclass(frozen=True, slots=True)
class _Name:
    """A called name as the "did you mean" hints compare it."""

    form: str  # the normal form
    framed: str  # the normal form between separators ("_refund_order_"): runs of words
    letters: frozenset[str]
    name: str


def _names(names: Iterable[str]) -> list[_Name]:
    """The names to suggest from, in normal form, in a fixed order (a run's hints are the
    same whatever order the names were seen in, however far the work goes)."""
    out = []
    for name in sorted(names):
        form = normalize_name(name)
        out.append(_Name(form, f"_{form}_", frozenset(form), name))
    return out


def closest(pattern: str, names: Iterable[str]) -> str | None:
    """The called name that ``pattern`` most likely misspells, compared in normal form:
    the nearest within two edits (``send_emial`` -> ``send_email``), else one whose
    words hold the pattern's words in a row, or the other way round (``authenticate``
    -> ``authenticate_user``, ``refund_order`` -> ``refund``)."""
    return _closest(pattern, _names(names), [HINT_WORK])


def _closest(pattern: str, names: list[_Name], work: list[int]) -> str | None:
    """:func:`closest` over names made by :func:`_names`, spending ``work`` (what is left
    of :data:`HINT_WORK`): None, no hint, once it is spent."""
    if len(pattern) > MAX_HINT_CHARS:
        return None
    word = normalize_name(pattern)
    if not word:
        return None
    framed, letters = f"_{word}_", frozenset(word)
    best: tuple[int, str, str] | None = None  # (distance, normal form, name)
    near: tuple[int, str, str] | None = None  # (length difference, normal form, name)
    for n in names:
        work[0] -= 1
        form = n.form
        if abs(len(form) - len(word)) <= 2 and len(letters ^ n.letters) <= 4:
            work[0] -= HINT_COMPARE
            d = edit_distance(word, form, 2)
            if d <= 2 and d < len(word) and (best is None or (d, form) < best[:2]):
                best = (d, form, n.name)
        if work[0] < 0:
            return None
        if framed in n.framed or n.framed in framed:  # a run of the other's words
            key = (abs(len(form) - len(word)), form, n.name)
            near = key if near is None or key < near else near
    if best is not None:
        return best[2]
    return near[2] if near is not None else None


VACUOUS = "the rule held only vacuously"


def unexercised(plan: CoveragePlan, acc: CoverageAcc, severity: Severity,
                traces: int) -> list[Finding]:
    """One finding per tool reference that matched no call in any of the traces."""
    if traces == 0:
        return []  # nothing was read: input/no_traces says so
    out = []
    names: list[_Name] | None = None  # made when a finding first needs them
    work = [HINT_WORK]
    for i, r in enumerate(plan.refs):
        if acc.matched[i]:
            continue
        glob = is_glob(r.pattern)
        hint = None
        if not glob and work[0] >= 0:
            if names is None:
                names = _names(sorted(acc.names)[:MAX_NAMES])
            hint = _closest(r.pattern, names, work)
        head = (f"No tool call matched '{r.pattern}'" if glob
                else f"No call to '{r.pattern}'")
        mean = f" (did you mean '{hint}'?)" if hint else ""
        effect = r.effect
        out.append(Finding(
            rule=RULE, severity=severity,
            message=f"{head} ({r.kind}) in any of the {traces} trace(s){mean}"
            f"{'; ' + effect if effect else ''}",
            test=r.test, config=r.ref, trace=None, tool=r.pattern,
            constraint=f"{r.kind}: {r.pattern}", scenario=r.scenario,
            details={"kind": r.kind, "pattern": r.pattern, "suggestion": hint},
        ))
    out.sort(key=lambda f: (f.config.file, f.config.line, f.config.col, f.config.key_path))
    return out
