"""Gemini CLI chat sessions (docs/formats/gemini_cli.md).

One JSON document per session: ``{"sessionId", "projectHash", "startTime",
"lastUpdated", "messages": [...]}``. A ``gemini`` message's ``toolCalls`` are tool calls,
each with its own ``result`` (``functionResponse`` parts) and ``status``; ``tokens`` give
the usage of the model turn. The first ``user`` message is the input, the last
``gemini`` text the output.
"""

from __future__ import annotations

from typing import Any

from agent_eval.model import LlmCall, Location
from agent_eval.readers import sniffs
from agent_eval.readers._foreign import JsonDoc, as_dict, count, set_result, span_ms, text_of
from agent_eval.readers.skeleton import DocumentReader, DocumentState, named

NAME = "gemini_cli"
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


class _Session(DocumentState):
    fmt = NAME

    def begin(self, doc: JsonDoc, root: dict[str, Any]) -> None:
        super().begin(doc, root)
        self.trace.metadata = {k: root[k] for k in ("sessionId", "projectHash")
                               if isinstance(root.get(k), str)}
        self.trace.duration_ms = span_ms(root.get("startTime"), root.get("lastUpdated"))

    def item(self, raw: dict[str, Any], line: int, index: int) -> None:
        trace = self.trace
        kind = raw.get("type")
        if self.bad_kind(kind, line, "a Gemini CLI message's type"):
            return
        if kind != "gemini" and raw.get("toolCalls") not in (None, []):
            # only gemini messages make calls: another's are read all the same, and said
            shown = f"of type {kind!r}" if kind is not None else "without a type"
            self.invalid(self.doc.line("messages", index, "toolCalls"),
                         f"toolCalls in a Gemini CLI message {shown}: only 'gemini' "
                         "messages make tool calls; they are read as the agent's calls")
            self.calls(raw, index)
            if kind not in _KNOWN:
                return
        elif kind not in _KNOWN:
            self.unknown += 1
            return
        if not self.said(trace, text_of(raw.get("content")), user=kind == "user",
                         agent=kind == "gemini"):
            return
        tokens = as_dict(raw.get("tokens"))
        model = raw.get("model")
        trace.llm_calls.append(LlmCall(
            location=Location(self.file, line), model=model if isinstance(model, str) else None,
            input_tokens=count(tokens.get("input")),
            output_tokens=count(tokens.get("output")),
            total_tokens=count(tokens.get("total"))))
        self.calls(raw, index)

    def calls(self, raw: dict[str, Any], index: int) -> None:
        """The tool calls of a message."""
        calls = self.array(raw.get("toolCalls"), self.doc.line("messages", index, "toolCalls"),
                           "a Gemini CLI message's toolCalls")
        for j, tc in enumerate(calls):
            self.call(as_dict(tc), index, j)

    def call(self, tc: dict[str, Any], index: int, j: int) -> None:
        cline = self.doc.line("messages", index, "toolCalls", j)
        name = named(tc.get("name"))
        if name is None:
            self.invalid(cline, "a Gemini CLI tool call without a name")
            return
        call = self.tool_call(self.trace, name, tc.get("args"), tc.get("id"), cline)
        status = tc.get("status")
        if "result" in tc or status in ("error", "cancelled"):
            value, error = _response(tc.get("result"))
            ok = status not in ("error", "cancelled") and error is None
            if not ok and error is None:
                display = tc.get("resultDisplay")
                error = display if isinstance(display, str) else str(status)
            rline = self.doc.line("messages", index, "toolCalls", j, "result")
            set_result(call, value, error, ok, Location(self.file, rline))


class GeminiCliReader(DocumentReader):
    name = NAME
    marks = sniffs.GEMINI_CLI
    key = "messages"
    need = "a Gemini CLI session needs a 'messages' array"
    item_what = "a Gemini CLI message"
    state = _Session


READER = GeminiCliReader()
