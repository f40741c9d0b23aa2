"""Values shared by the span readers (OTLP and Jaeger exports): nanosecond times, span
ids, lists that may be missing."""

from __future__ import annotations

from typing import Any

__all__ = ["as_list", "nanos", "span_id"]


def nanos(v: Any) -> int | None:
    """A time or duration written as an integer, a numeric string or a float."""
    if type(v) is int:
        return v
    if type(v) is str:
        try:
            return int(v)
        except ValueError:
            return None
    if type(v) is float:
        return int(v)
    return None


def as_list(v: Any) -> list[Any]:
    return v if type(v) is list else []


def span_id(v: Any) -> str | None:
    """A span id (or parent id) as a hashable string, None when missing or malformed."""
    if type(v) is str:
        return v or None
    return None if v is None or type(v) in (dict, list) else str(v)
