"""Gemini CLI chat sessions (docs/formats/gemini_cli.md).

One JSON document per session: ``{"sessionId", "projectHash", "startTime",
"lastUpdated", "messages": [...]}``. A ``gemini`` message's ``toolCalls`` are tool calls,
each with its own ``result`` (``functionResponse`` parts) and ``status``; ``tokens`` give
the usage of the model turn. The first ``user`` message is the input, the last
``gemini`` text the output.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from agent_eval.errors import InputError
from agent_eval.model import LlmCall, Location, ToolCall
from agent_eval.readers._foreign import (
    JsonDoc,
    as_dict,
    count,
    head_text,
    is_native,
    new_trace,
    read_document,
    set_result,
    span_ms,
    text_of,
    touch,
)
from agent_eval.readers.base import IgnoredEvents, ReadItem, SourceFile
from agent_eval.readers.native import decode_arguments

NAME = "gemini_cli"
_PROJECT = re.compile(r'"projectHash"\s*:')
_MESSAGES = re.compile(r'"messages"\s*:\s*\[')
_KNOWN = {"user", "gemini", "info", "error", "warning"}


def _response(result: Any) -> tuple[Any, str | None]:
    """The value of a call's ``result`` (functionResponse parts) and its error text."""
    parts = result if isinstance(result, list) else [result]
    values: list[Any] = []
    error: str | None = None
    for part in parts:
        fr = as_dict(as_dict(part).get("functionResponse"))
        if not fr:
            continue
        resp = fr.get("response")
        r = as_dict(resp)
        if "error" in r:
            error = str(r["error"])
            values.append(r["error"])
        elif "output" in r:
            values.append(r["output"])
        else:
            values.append(resp)
    if not values:
        return result, error
    return (values[0] if len(values) == 1 else values), error


class GeminiCliReader:
    name = NAME

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        if is_native(head, source):
            return False
        text = head_text(head)
        return _PROJECT.search(text) is not None and _MESSAGES.search(text) is not None

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        doc = read_document(source)
        if isinstance(doc, InputError):
            yield doc
            return
        yield from self._document(doc, source)

    def _document(self, doc: JsonDoc, source: SourceFile) -> Iterator[ReadItem]:
        file = source.file
        root = as_dict(doc.value)
        messages = root.get("messages")
        if not isinstance(messages, list):
            yield InputError("input/invalid_event", file, 1,
                             "a Gemini CLI session needs a 'messages' array")
            return
        trace = new_trace(source.trace_id, source, doc.line(), NAME)
        trace.metadata = {k: root[k] for k in ("sessionId", "projectHash")
                          if isinstance(root.get(k), str)}
        trace.duration_ms = span_ms(root.get("startTime"), root.get("lastUpdated"))
        unknown = 0
        for i, msg in enumerate(messages):
            line = doc.line("messages", i)
            if not isinstance(msg, dict):
                yield InputError("input/invalid_event", file, line,
                                 "a Gemini CLI message must be a JSON object")
                continue
            touch(trace, line)
            kind = msg.get("type")
            if kind not in _KNOWN:
                unknown += 1
                continue
            text = text_of(msg.get("content"))
            if kind == "user":
                if trace.input is None and text is not None:
                    trace.input = text
                continue
            if kind != "gemini":
                continue
            if text:
                trace.output = text
            tokens = as_dict(msg.get("tokens"))
            model = msg.get("model")
            trace.llm_calls.append(LlmCall(
                location=Location(file, line), model=model if isinstance(model, str) else None,
                input_tokens=count(tokens.get("input")),
                output_tokens=count(tokens.get("output")),
                total_tokens=count(tokens.get("total"))))
            for j, tc in enumerate(msg.get("toolCalls") or []):
                cline = doc.line("messages", i, "toolCalls", j)
                tc = as_dict(tc)
                name = tc.get("name")
                if not isinstance(name, str) or not name:
                    yield InputError("input/invalid_event", file, cline,
                                     "a Gemini CLI tool call without a name")
                    continue
                args, why = decode_arguments(tc.get("args"))
                cid = tc.get("id")
                call = ToolCall(name=name, arguments=args, location=Location(file, cline),
                                id=cid if isinstance(cid, str) else None, arguments_error=why)
                trace.tool_calls.append(call)
                status = tc.get("status")
                if "result" in tc or status in ("error", "cancelled"):
                    value, error = _response(tc.get("result"))
                    ok = status not in ("error", "cancelled") and error is None
                    if not ok and error is None:
                        display = tc.get("resultDisplay")
                        error = display if isinstance(display, str) else str(status)
                    rline = doc.line("messages", i, "toolCalls", j, "result")
                    set_result(call, value, error, ok, Location(file, rline))
        yield trace
        if unknown:
            yield IgnoredEvents(file, unknown)


READER = GeminiCliReader()
