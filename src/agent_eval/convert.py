"""Canonical traces written back as native JSONL (docs/formats.md): what agent-eval
understood of a file in any format, in the one format every user can read.

Every line carries ``"source": "FILE:LINE"``, the place in the original file it came
from (the native reader ignores the field), so the output reads back into the same
canonical traces: ``agent-eval convert x.otlp.jsonl > x.jsonl`` then
``format: native``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from agent_eval.errors import InputError
from agent_eval.jsonutil import reading
from agent_eval.model import LlmCall, Location, ToolCall, Trace
from agent_eval.readers import FileRead, IgnoredEvents, SourceFile, pick_reader, read_file

__all__ = ["convert_sources", "dumps", "trace_events"]


def _where(loc: Location | None) -> str | None:
    return None if loc is None else f"{loc.file}:{loc.line}"


def _put(event: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        event[key] = value


def _call_events(call: ToolCall) -> Iterator[dict[str, Any]]:
    ev: dict[str, Any] = {"type": "tool_call"}
    _put(ev, "id", call.id)
    ev["tool"] = call.name
    if call.arguments_recorded:
        ev["arguments"] = call.arguments  # the raw value when it is not an object
    else:
        ev["arguments_recorded"] = False  # not the same as "arguments": null ({})
    _put(ev, "latency_ms", call.latency_ms)
    ev["source"] = _where(call.location)
    yield ev
    if call.has_result or not call.ok:
        res: dict[str, Any] = {"type": "tool_result"}
        if call.id is not None:
            res["id"] = call.id
        else:
            res["tool"] = call.name
        res["result"] = call.result
        if not call.ok:
            res["error"] = call.error if call.error is not None else "error"
        res["source"] = _where(call.result_location or call.location)
        yield res


def _llm_event(call: LlmCall) -> dict[str, Any]:
    ev: dict[str, Any] = {"type": "llm_call"}
    _put(ev, "model", call.model)
    _put(ev, "input_tokens", call.input_tokens)
    _put(ev, "output_tokens", call.output_tokens)
    _put(ev, "total_tokens", call.total_tokens)
    _put(ev, "cost_usd", call.cost_usd)
    _put(ev, "latency_ms", call.latency_ms)
    ev["source"] = _where(call.location)
    return ev


def trace_events(trace: Trace) -> Iterator[dict[str, Any]]:
    """The native events of one trace: trace_start, the tool and LLM calls (merged by
    their line in the source, each list keeping its own order), output, trace_end."""
    start: dict[str, Any] = {"type": "trace_start", "trace_id": trace.id}
    _put(start, "scenario", trace.scenario)
    _put(start, "input", trace.input)
    meta = {"source_format": trace.format, **trace.metadata}
    start["metadata"] = meta
    if not trace.handoffs_recorded and not trace.handoffs:
        start["handoffs_recorded"] = False  # no handoffs read back would say none happened
    start["source"] = _where(trace.location)
    yield start
    tools, llms = trace.tool_calls, trace.llm_calls
    i = j = 0
    while i < len(tools) or j < len(llms):
        if j >= len(llms) or (i < len(tools)
                              and tools[i].location.line <= llms[j].location.line):
            yield from _call_events(tools[i])
            i += 1
        else:
            yield _llm_event(llms[j])
            j += 1
    for h in trace.handoffs:
        event: dict[str, Any] = {"type": "handoff", "to_agent": h.to_agent}
        _put(event, "from_agent", h.from_agent)
        event["source"] = _where(h.location)
        yield event
    if trace.output is not None:
        yield {"type": "output", "output": trace.output, "source": _where(trace.end_location)}
    for sc in trace.scores:
        ev: dict[str, Any] = {"type": "score", "name": sc.name}
        _put(ev, "value", sc.value)
        _put(ev, "label", sc.label)
        _put(ev, "comment", sc.comment)
        ev["source"] = _where(sc.location)
        yield ev
    end: dict[str, Any] = {"type": "trace_end"}
    _put(end, "duration_ms", trace.duration_ms)
    _put(end, "cost_usd", trace.cost_usd)
    _put(end, "total_tokens", trace.total_tokens)
    end["source"] = _where(trace.end_location)
    yield end


def dumps(event: dict[str, Any]) -> str:
    return orjson.dumps(event, default=str).decode()


def convert_sources(sources: Iterable[SourceFile], fmt: str = "auto"
                    ) -> Iterator[tuple[SourceFile, str | None, Trace | InputError | int]]:
    """For every file: ``(file, reader name, item)`` where item is a trace, an input
    error, or the number of ignored events."""
    for source in sources:
        reading(source.limits)
        reader = pick_reader(source, fmt)
        if isinstance(reader, InputError):
            yield source, None, reader
            continue
        for item in read_file(reader, source):
            if isinstance(item, FileRead):  # only read_sources announces files
                continue
            if isinstance(item, IgnoredEvents):
                yield source, reader.name, item.count
            else:
                yield source, reader.name, item
