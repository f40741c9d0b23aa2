"""The check interface. A check module defines a config model and a ``compile``
function; the compiled test is a pure function of one trace (no I/O)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from agent_eval.coverage import ToolRef
from agent_eval.findings import ConfigRef, Finding, Severity
from agent_eval.matching import ToolMatcher, ToolMatchMode
from agent_eval.model import Trace
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

    def touches(self, name: str) -> bool:
        """Whether a call to this tool is checked by this test (coverage.py: a test
        that touched no call is reported as not exercised)."""
        ...


@dataclass(frozen=True)
class CompileContext:
    """What a check may use while compiling one test of the suite."""

    file: str  # the suite file, repo-relative
    positions: Positions  # positions in the suite file
    path: Path  # this test's path in the suite file, e.g. ("tests", 2)
    test_id: str
    tool_match: ToolMatchMode
    load_policy: Callable[[Any, Path], Policy]  # (value of `policy:`, its path) -> Policy

    def ref(self, *keys: str | int) -> ConfigRef:
        """The location of a key of this test (``ref("rules", 0)``)."""
        path = (*self.path, *keys)
        pos = self.positions.get(path)
        return ConfigRef(self.file, pos.line, pos.col, self.key_path(*keys))

    def key_path(self, *keys: str | int) -> str:
        """A stable path of a key: by test id, not by position (``tests.auth.rules.0``)."""
        return ".".join(str(k) for k in ("tests", self.test_id, *keys))

    def matcher(self, patterns: str | list[str]) -> ToolMatcher:
        return ToolMatcher([patterns] if isinstance(patterns, str) else patterns,
                           self.tool_match)

    def tool_refs(self, value: str | list[str], kind: str, *keys: str | int,
                  effect: str = "") -> list[ToolRef]:
        """One reference per tool named by the key at ``keys`` (a name, or a list of
        names: each item is its own reference, located at the item)."""
        if isinstance(value, str):
            return [ToolRef(value, kind, self.ref(*keys), self.matcher(value), self.test_id,
                            effect=effect)]
        return [ToolRef(p, kind, self.ref(*keys, k), self.matcher(p), self.test_id,
                        effect=effect) for k, p in enumerate(value)]


@dataclass(frozen=True)
class CheckSpec:
    """One entry of the check registry."""

    metric: str
    model: type[TestBase]
    compile: Callable[[Any, CompileContext], CompiledTest]
    rules: tuple[str, ...]  # the rule ids this check can report
