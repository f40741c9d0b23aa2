"""The judge's prompts: the tool context of a hallucination check."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator, Sequence
from typing import Any, overload

from agent_eval.judge.prompts import as_text, cut, tool_context
from agent_eval.model import Location, ToolCall


def _call(i: int) -> ToolCall:
    return ToolCall(f"tool{i % 7}", {"q": "x" * (i % 90), "n": i}, Location("t.jsonl", i + 1),
                    result={"r": "y" * (i % 400)} if i % 3 else f"text {i}",
                    has_result=i % 4 != 0, ok=i % 5 != 0,
                    error=None if i % 5 else ("boom " * (i % 60) if i % 2 else None))


def _entries_cut(calls: Sequence[ToolCall], limit: int) -> str:
    """What the context is: every entry, joined, cut to the limit."""
    each = max(200, limit // max(1, len(calls))) if calls else limit
    lines = []
    for i, c in enumerate(calls, 1):
        got = (f"FAILED: {as_text(c.error) or 'error'}" if not c.ok
               else as_text(c.result) if c.has_result else "(no result recorded)")
        lines.append(f"{i}. {c.name}({cut(as_text(c.arguments), each // 4)}) -> {cut(got, each)}")
    return cut("\n".join(lines) if lines else "(no tool was called)", limit)


def test_the_tool_context_is_every_entry_cut_to_the_limit() -> None:
    calls = [_call(i) for i in range(300)]
    for n in (0, 1, 2, 7, 300):
        for limit in (1, 10, 57, 200, 2_000, 30_000, 10**7):
            assert tool_context(calls[:n], limit) == _entries_cut(calls[:n], limit), (n, limit)


class _Made(Sequence[ToolCall]):
    """A long trace's calls made as they are read (as a CallLog's are)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, i: int) -> ToolCall: ...

    @overload
    def __getitem__(self, i: slice) -> list[ToolCall]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [_call(k) for k in range(*i.indices(self.n))]
        if not 0 <= i < self.n:
            raise IndexError(i)
        return _call(i)

    def __iter__(self) -> Iterator[ToolCall]:
        return map(_call, range(self.n))


def test_the_tool_context_of_a_long_trace_does_not_hold_every_entry() -> None:
    """Only the entries within the limit are kept: the context of a trace of a million
    calls took some 700 MB (every entry, then their join) to keep 20,000 characters."""
    calls = _Made(60_000)
    tracemalloc.start()
    try:
        text = tool_context(calls, 20_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert text.endswith(" more characters not shown]") and len(text) < 20_100
    assert peak < 2_000_000  # every entry: over 20 MB
