"""Values shared by the span readers (OTLP and Jaeger exports): nanosecond times, span
ids, lists that may be missing."""

from __future__ import annotations

from typing import Any

__all__ = ["NANOS_MAX", "NANOS_MIN", "as_list", "bad_times", "nanos", "span_id"]

# the times and durations a span may have: 64 bits (OTLP's fixed64, Jaeger's int64); one
# beyond them (1e308) is no time, and would overflow where it is made a float
NANOS_MIN, NANOS_MAX = -(1 << 63), 1 << 64


def nanos(v: Any) -> int | None:
    """A time or duration written as an integer, a numeric string or a float; None when
    it is missing, not a number or beyond 64 bits (:func:`bad_times` says which)."""
    if type(v) is int:
        n = v
    elif type(v) is str:
        try:
            n = int(v)
        except ValueError:
            return None
    elif type(v) is float:
        if not NANOS_MIN <= v < NANOS_MAX:
            return None
        n = int(v)
    else:
        return None
    return n if NANOS_MIN <= n < NANOS_MAX else None


def bad_times(span: dict[str, Any], keys: tuple[str, ...], unit: str) -> list[str]:
    """What is wrong with the times of ``span`` under ``keys`` that are written but are
    not times (:func:`nanos` gives None): one message each."""
    out = []
    for key in keys:
        v = span.get(key)
        if v is not None and nanos(v) is None:
            shown = repr(v) if type(v) is str else str(v)
            out.append(f"a span's {key} must be a time in {unit} (a whole number within "
                       f"64 bits, or one in a string), not {shown[:40]}; the span is read "
                       "without it")
    return out


def as_list(v: Any) -> list[Any]:
    return v if type(v) is list else []


def span_id(v: Any) -> str | None:
    """A span id (or parent id) as a hashable string, None when missing or malformed."""
    if type(v) is str:
        return v or None
    return None if v is None or type(v) in (dict, list) else str(v)
