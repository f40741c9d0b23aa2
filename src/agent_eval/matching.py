"""Tool-name matching: fnmatch globs over the whole name, normalized or exact.

``normalized`` (the default): case-insensitive, and ``-`` equals ``_``.
Patterns are compiled once per suite; per-name answers are memoised, so the hot
path is a dict lookup.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from typing import Literal

ToolMatchMode = Literal["normalized", "exact"]
_GLOB_CHARS = frozenset("*?[")
_MEMO_LIMIT = 65536


def normalize_name(name: str) -> str:
    return name.lower().replace("-", "_")


def normalize_pattern(pattern: str) -> str:
    """Lower-case a glob and turn ``-`` into ``_`` outside ``[...]`` classes
    (inside a class a ``-`` is a range, as in ``[a-z]``). Classes are delimited the
    way ``fnmatch`` delimits them."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "[":
            j = i + 1
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j < n:
                out.append(pattern[i : j + 1].lower())
                i = j + 1
                continue
        out.append("_" if ch == "-" else ch.lower())
        i += 1
    return "".join(out)


def is_glob(pattern: str) -> bool:
    return not _GLOB_CHARS.isdisjoint(pattern)


class ToolMatcher:
    """Matches a tool name against a list of patterns ("any of")."""

    __slots__ = ("_compiled", "_memo", "_normalized", "patterns")

    def __init__(self, patterns: Sequence[str], mode: ToolMatchMode = "normalized") -> None:
        self.patterns = tuple(patterns)
        self._normalized = mode == "normalized"
        compiled: list[tuple[str, re.Pattern[str] | None]] = []
        for p in self.patterns:
            key = normalize_pattern(p) if self._normalized else p
            compiled.append((key, re.compile(fnmatch.translate(key)) if is_glob(p) else None))
        self._compiled = tuple(compiled)
        self._memo: dict[str, int] = {}

    def which(self, name: str) -> int | None:
        """Index of the first pattern that matches ``name``, or None."""
        hit = self._memo.get(name)
        if hit is not None:
            return hit if hit >= 0 else None
        key = normalize_name(name) if self._normalized else name
        found = -1
        for i, (text, regex) in enumerate(self._compiled):
            if (regex.match(key) is not None) if regex is not None else key == text:
                found = i
                break
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        self._memo[name] = found
        return found if found >= 0 else None

    def __call__(self, name: str) -> bool:
        hit = self._memo.get(name)
        if hit is not None:
            return hit >= 0
        return self.which(name) is not None
