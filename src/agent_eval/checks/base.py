"""The check interface. A check module defines a config model and a ``compile``
function; the compiled test is a pure function of one trace (no I/O)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from agent_eval.coverage import ToolRef
from agent_eval.errors import ConfigError
from agent_eval.findings import ConfigRef, Finding, Severity
from agent_eval.limits import DEFAULT, Limits
from agent_eval.matching import ToolMatcher, ToolMatchMode
from agent_eval.model import Trace
from agent_eval.selectors import EMPTY_TOOLS, Selector, SelectorCompiler
from agent_eval.yamlpos import Path, Positions

if TYPE_CHECKING:
    from agent_eval.config.models import TestBase
    from agent_eval.config.policy import Policy


class CompiledTest(Protocol):
    id: str
    metric: str
    severity: Severity
    tool_refs: tuple[ToolRef, ...]  # every place of its config that names a tool

    def run(self, trace: Trace) -> list[Finding]:
        """All findings of this test on one trace (empty: the trace passes)."""
        ...

    def findings(self, trace: Trace) -> Iterable[Finding]:
        """The same findings, in the same order, found one at a time where the check can:
        the engine spills them to disk as they come, so a very long trace's findings are
        not all held at once (docs/architecture.md "Findings on disk")."""
        ...

    def touches(self, name: str) -> bool:
        """Whether a call to this tool is checked by this test (coverage.py: a test
        that touched no call is reported as not exercised)."""
        ...


class CheckCore(ABC):
    """What every compiled test sets from its config (see :class:`CompiledTest`); a
    subclass names its ``metric``."""

    metric: str

    def __init__(self, cfg: TestBase, tool_refs: Iterable[ToolRef]) -> None:
        self.id = cfg.id
        self.severity: Severity = cfg.severity
        self.tool_refs = tuple(tool_refs)

    @abstractmethod
    def findings(self, trace: Trace) -> Iterable[Finding]:
        """See :class:`CompiledTest`."""

    def run(self, trace: Trace) -> list[Finding]:
        return list(self.findings(trace))


@dataclass(frozen=True)
class CompileContext:
    """What a check may use while compiling one test of the suite."""

    file: str  # the suite file, repo-relative
    positions: Positions  # positions in the suite file
    path: Path  # this test's path in the suite file, e.g. ("tests", 2)
    test_id: str
    tool_match: ToolMatchMode
    load_policy: Callable[[Any, Path], Policy]  # (value of `policy:`, its path) -> Policy
    selectors: SelectorCompiler | None = None  # the suite's tool groups (selectors.py)
    limits: Limits = DEFAULT  # the suite's `limits:` (a finding's value is cut to them)

    def ref(self, *keys: str | int) -> ConfigRef:
        """The location of a key of this test (``ref("rules", 0)``)."""
        path = (*self.path, *keys)
        pos = self.positions.get(path)
        return ConfigRef(pos.file or self.file, pos.line, pos.col, self.key_path(*keys))

    def key_path(self, *keys: str | int) -> str:
        """A stable path of a key: by test id, not by position (``tests.auth.rules.0``)."""
        return ".".join(str(k) for k in ("tests", self.test_id, *keys))

    def matcher(self, patterns: str | list[str]) -> ToolMatcher:
        return ToolMatcher([patterns] if isinstance(patterns, str) else patterns,
                           self.tool_match)

    def _selectors(self) -> SelectorCompiler:
        return self.selectors or SelectorCompiler(None, self.positions, self.tool_match)

    def selector(self, value: Any, *keys: str | int) -> Selector:
        """A tool field (names, globs, @groups, {tool, args} selectors) at ``keys``;
        raises ConfigError with every problem of it."""
        return self._selectors().selector(_raw(value), (*self.path, *keys))

    def names(self, value: str | list[str], *keys: str | int) -> list[str]:
        """A name-only tool field with its @groups expanded."""
        return self._selectors().names(value, (*self.path, *keys))

    def selector_refs(self, selector: Selector, value: Any, kind: str, *keys: str | int,
                      effect: str = "") -> list[ToolRef]:
        """One coverage reference per item of a compiled tool field, at the item."""
        out = []
        for k, item in enumerate(selector.items):
            where = self.ref(*keys, k) if isinstance(value, list) else self.ref(*keys)
            out.append(ToolRef(item.tool, kind, where, item.names, self.test_id,
                               effect=effect))
        return out

    def tool_matcher(self, value: str | list[str], *keys: str | int) -> ToolMatcher:
        """The matcher of a name-only tool field of a test (an ``args_valid`` ``tools:``
        filter, a ``tool_results`` entry's ``tool:``) at ``keys``, its @groups expanded;
        raises ConfigError with every problem of it (an unknown group, an empty list)."""
        if value == []:
            raise ConfigError([f"{self.positions.where((*self.path, *keys))}: {EMPTY_TOOLS}"])
        return self.matcher(self.names(value, *keys))

    def tool_refs(self, value: str | list[str], kind: str, *keys: str | int,
                  effect: str = "") -> list[ToolRef]:
        """One reference per tool named by the key at ``keys`` (a name, or a list of
        names: each item is its own reference, located at the item; a @group matches
        its members)."""
        if isinstance(value, str):
            return [ToolRef(value, kind, self.ref(*keys), self.tool_matcher(value, *keys),
                            self.test_id, effect=effect)]
        return [ToolRef(p, kind, self.ref(*keys, k), self.tool_matcher(p, *keys, k),
                        self.test_id, effect=effect) for k, p in enumerate(value)]


def _raw(value: Any) -> Any:
    """A tool field as plain data (selector models dumped)."""
    if isinstance(value, list):
        return [_raw(v) for v in value]
    dump = getattr(value, "model_dump", None)
    return dump(exclude_none=True) if dump is not None else value


@dataclass(frozen=True)
class CheckSpec:
    """One entry of the check registry."""

    metric: str
    model: type[TestBase]
    compile: Callable[[Any, CompileContext], CompiledTest]
    rules: tuple[str, ...]  # the rule ids this check can report
