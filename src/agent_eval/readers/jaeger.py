"""Jaeger JSON exports, read by the OTLP reader (docs/formats/otlp.md "Jaeger").

``{"data": [{"traceID", "spans": [{"operationName", "tags", "references", "startTime",
"duration", "processID", "logs"}], "processes": {...}}]}``: tags are the span's
attributes (``int64`` values written as strings become integers), the first
``CHILD_OF`` reference is the parent, times are microseconds, and a span is an error
when tagged ``otel.status_code = ERROR`` or ``error = true``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from agent_eval.jsonutil import json_type
from agent_eval.readers._otel import as_list, bad_times, nanos, span_id
from agent_eval.readers.jsonpos import JsonPath
from agent_eval.safetext import clean_text

__all__ = ["JaegerSpan", "spans"]


class JaegerSpan(NamedTuple):
    trace_id: str | None
    sid: str | None
    parent: str | None
    name: Any
    start: int | None  # nanoseconds
    end: int | None
    attrs: dict[str, Any]
    error: str | None
    line: int
    resource: dict[str, Any]
    problems: list[str]  # its times that are written but are not times (input errors)


def spans(data: list[Any], line: int, lines: dict[JsonPath, int] | None,
          path: JsonPath, wrong: Callable[[int, str], None]) -> Iterator[JaegerSpan]:
    """The spans of the ``data`` list at ``path`` (``lines`` gives the line of each span
    object; None: every span is at ``line``), in file order. An element that is not of
    its JSON type holds spans that cannot be read: ``wrong(line, message)`` says so at
    the line of the nearest container that holds it (never passed over unsaid)."""

    def at(*where: str | int) -> int:
        p: JsonPath = (*path, *where)
        if lines is None:
            return line
        while p and p not in lines:
            p = p[:-1]
        return lines.get(p, line)

    for ti, tr in enumerate(data):
        if type(tr) is not dict:
            wrong(at(ti), f'a "data" item must be an object, not {json_type(tr)}; the spans '
                          "in it cannot be read")
            continue
        items = tr.get("spans")
        if type(items) is not list:
            if items is not None:
                wrong(at(ti, "spans"), f'"spans" must be an array, not {json_type(items)}; '
                                       "the spans in it cannot be read")
            continue
        processes = tr.get("processes") if type(tr.get("processes")) is dict else {}
        for k, s in enumerate(items):
            if type(s) is not dict:
                wrong(at(ti, "spans", k), f'a "spans" item must be an object, not '
                                          f"{json_type(s)}; the span cannot be read")
                continue
            ln = line if lines is None else lines.get((*path, ti, "spans", k), line)
            attrs = _tags(s)
            error = _error(s, attrs)
            start = nanos(s.get("startTime"))
            dur = nanos(s.get("duration"))
            problems = ([] if start is not None and dur is not None
                        else bad_times(s, _TIMES, "microseconds"))
            problems += _repeated_tags(s, attrs)
            pid = s.get("processID")
            proc = processes.get(pid) if processes and type(pid) is str else None
            res: dict[str, Any] = {}
            if type(proc) is dict and proc.get("serviceName") is not None:
                res["service.name"] = proc.get("serviceName")
            raw_tid = s.get("traceID") or tr.get("traceID")
            yield JaegerSpan(
                raw_tid if type(raw_tid) is str else None, span_id(s.get("spanID")),
                span_id(_parent(s)), s.get("operationName"),
                None if start is None else start * 1000,
                None if start is None or dur is None else (start + dur) * 1000,
                attrs, None if error is None else str(error), ln, res, problems)


_TIMES = ("startTime", "duration")
_INT64 = re.compile(r"-?[0-9]{1,19}")


def _tags(s: dict[str, Any]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for t in as_list(s.get("tags")):
        if type(t) is dict and type(t.get("key")) is str:
            v = t.get("value")
            if t.get("type") == "int64" and type(v) is str and _INT64.fullmatch(v):
                v = int(v)  # ASCII digits only ("²".isdigit()), at most int64's 19
            attrs[t["key"]] = v
    return attrs


def _repeated_tags(s: dict[str, Any], attrs: dict[str, Any]) -> list[str]:
    """What to say of tag keys given more than once with other values: the last is read
    (:func:`_tags`), so what the others say (a tool's name) was never checked."""
    tags = as_list(s.get("tags"))
    if len(tags) <= len(attrs):
        return []
    seen: dict[str, list[Any]] = {}
    for t in tags:
        if type(t) is dict and type(t.get("key")) is str:
            seen.setdefault(t["key"], []).append(t.get("value"))
    return [f"the span's tag {clean_text(repr(key), 120)} is given {len(values)} times with "
            f"other values: only the last, {clean_text(repr(attrs.get(key)), 120)}, is read, "
            "and what the others say is not checked; give each key once"
            for key, values in seen.items()
            if len(values) > 1 and any(str(x) != str(values[-1]) for x in values)]


def _parent(s: dict[str, Any]) -> Any:
    """The span a ``CHILD_OF`` reference names (else the last reference's)."""
    parent = None
    for ref in as_list(s.get("references")):
        if type(ref) is dict and ref.get("spanID"):
            parent = ref["spanID"]
            if ref.get("refType", "CHILD_OF") == "CHILD_OF":
                break
    return parent


def _error(s: dict[str, Any], attrs: dict[str, Any]) -> Any:
    if attrs.get("otel.status_code") == "ERROR" or attrs.get("error") is True:
        d = attrs.get("otel.status_description")
        return d if type(d) is str and d else _log_error(s) or (
            attrs.get("error.type") or "error")
    return None


def _log_error(span: dict[str, Any]) -> str | None:
    for log in as_list(span.get("logs")):
        if type(log) is not dict:
            continue
        fields = {f.get("key"): f.get("value") for f in as_list(log.get("fields"))
                  if type(f) is dict}
        m = fields.get("exception.message") or fields.get("message")
        if type(m) is str and m:
            return m
    return None
