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


def _class_end(pattern: str, i: int) -> int:
    """Index of the ``]`` closing the class whose ``[`` is at ``i - 1`` (delimited
    the way ``fnmatch`` delimits it), or -1 when the class is never closed."""
    n = len(pattern)
    j = i
    if j < n and pattern[j] == "!":
        j += 1
    if j < n and pattern[j] == "]":
        j += 1
    while j < n and pattern[j] != "]":
        j += 1
    return j if j < n else -1


def _class_members(body: str) -> list[tuple[str, str]]:
    """Members of a class body as inclusive (low, high) pairs: ``a-c`` is a range; a
    ``-`` that cannot form one (first, last, right after a range) is literal."""
    members: list[tuple[str, str]] = []
    k, n = 0, len(body)
    while k < n:
        if k + 2 < n and body[k + 1] == "-":
            members.append((body[k], body[k + 2]))
            k += 3
        else:
            members.append((body[k], body[k]))
            k += 1
    return members


def translate_normalized(pattern: str) -> str:
    """A regex, to be compiled with ``re.IGNORECASE`` and matched against a
    :func:`normalize_name`-d name, for a glob under ``tool_match: normalized``.

    Literals are folded like names. A class member matches a name character when some
    character of the member folds to it: case is left to ``re.IGNORECASE`` (which also
    gets ranges such as ``[Z-a]`` right, where lower-casing the pattern would not), and
    a class that holds ``-`` (alone or inside a range) also holds ``_``, since a name
    never contains ``-`` once normalized."""
    parts: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c == "*":
            if not parts or parts[-1] != ".*":
                parts.append(".*")
        elif c == "?":
            parts.append(".")
        elif c == "[" and (end := _class_end(pattern, i)) >= 0:
            body = pattern[i:end]
            i = end + 1
            negated = body.startswith("!")
            items: list[str] = []
            dash = False
            for low, high in _class_members(body[1:] if negated else body):
                if low > high:
                    continue  # an empty range, as in fnmatch
                dash = dash or low <= "-" <= high
                items.append(re.escape(low) if low == high
                             else f"{re.escape(low)}-{re.escape(high)}")
            if dash:
                items.append("_")
            if items:
                parts.append(f"[{'^' if negated else ''}{''.join(items)}]")
            else:
                parts.append("." if negated else "(?!)")
        else:
            parts.append(re.escape(normalize_name(c)))
    return "(?s:" + "".join(parts) + r")\Z"


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
            if not is_glob(p):
                compiled.append((normalize_name(p) if self._normalized else p, None))
            elif self._normalized:
                compiled.append((p, re.compile(translate_normalized(p), re.IGNORECASE)))
            else:
                compiled.append((p, re.compile(fnmatch.translate(p))))
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

    def flags(self, names: list[str]) -> list[bool]:
        """``[self(n) for n in names]``, without a function call per name once the
        names are memoised (the sequence rules ask this for every call of a trace)."""
        memo = self._memo
        try:
            return [memo[n] >= 0 for n in names]
        except KeyError:
            return [self.which(n) is not None for n in names]
