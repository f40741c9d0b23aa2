"""Regular expressions compiled when first used, not when their module is imported.

A module-level ``re.compile`` runs on every start-up, whether or not the run searches with
the pattern: the trace format sniffs hold about sixty patterns, and a native run asks few
of them (docs/performance.md). A :class:`LazyPattern` is written where the pattern was and
used the same way (``search``, ``match``, ``finditer``); its first use compiles the
pattern and puts the compiled pattern's own bound methods in their place, so every later
call is a call of the ``re.Pattern`` method itself: nothing is looked up or compiled per
call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, AnyStr, Generic

__all__ = ["LazyPattern"]


class LazyPattern(Generic[AnyStr]):
    """``re.compile(pattern, flags)``, made on the first ``search``, ``match`` or
    ``finditer``; ``compiled`` is the compiled pattern once made, else None."""

    __slots__ = ("compiled", "finditer", "flags", "match", "pattern", "search")

    pattern: AnyStr
    flags: int
    compiled: re.Pattern[AnyStr] | None
    search: Callable[..., re.Match[AnyStr] | None]
    match: Callable[..., re.Match[AnyStr] | None]
    finditer: Callable[..., Iterator[re.Match[AnyStr]]]

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self.compiled = None
        self.search = partial(self._first, "search")
        self.match = partial(self._first, "match")
        self.finditer = partial(self._first, "finditer")

    def _first(self, method: str, *args: Any) -> Any:
        done = self.compiled = re.compile(self.pattern, self.flags)
        self.search, self.match, self.finditer = done.search, done.match, done.finditer
        return getattr(done, method)(*args)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags})"
