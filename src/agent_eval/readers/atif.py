"""ATIF trajectories (docs/formats/atif.md).

One JSON document per file: ``{"schema_version": "ATIF-v1.x", "agent": {...},
"steps": [...]}``. An ``agent`` step's ``tool_calls`` are tool calls; its
``observation.results`` (matched by ``source_call_id``) are their results. The first
``user`` step is the input, the last ``agent`` message the output, and each ``agent``
step is one LLM call (``metrics`` when recorded).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from agent_eval.errors import InputError
from agent_eval.model import LlmCall, Location, ToolCall
from agent_eval.readers._foreign import (
    JsonDoc,
    add,
    as_dict,
    count,
    head_text,
    is_native,
    new_trace,
    num,
    read_document,
    set_result,
    span_ms,
    text_of,
    touch,
)
from agent_eval.readers.base import ReadItem, SourceFile
from agent_eval.readers.native import decode_arguments

NAME = "atif"
_SCHEMA = re.compile(r'"schema_version"\s*:\s*"ATIF-')


def _result_value(res: dict[str, Any]) -> Any:
    if "content" in res:
        text = text_of(res["content"])
        return text if text is not None else res["content"]
    if "subagent_trajectory_ref" in res:
        return res["subagent_trajectory_ref"]
    return None


class AtifReader:
    name = NAME

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return not is_native(head, source) and _SCHEMA.search(head_text(head)) is not None

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        doc = read_document(source)
        if isinstance(doc, InputError):
            yield doc
            return
        yield from self._document(doc, source)

    def _document(self, doc: JsonDoc, source: SourceFile) -> Iterator[ReadItem]:
        file = source.file
        root = as_dict(doc.value)
        steps = root.get("steps")
        if not isinstance(steps, list):
            yield InputError("input/invalid_event", file, 1,
                             "an ATIF trajectory needs a 'steps' array")
            return
        trace = new_trace(source.trace_id, source, doc.line(), NAME)
        agent = as_dict(root.get("agent"))
        default_model = agent.get("model_name")
        trace.metadata = {k: root[k] for k in ("schema_version", "session_id",
                                                   "trajectory_id")
                          if isinstance(root.get(k), str)}
        calls: dict[str, ToolCall] = {}
        times: list[Any] = []
        for i, raw in enumerate(steps):
            line = doc.line("steps", i)
            if not isinstance(raw, dict):
                yield InputError("input/invalid_event", file, line,
                                 "an ATIF step must be a JSON object")
                continue
            touch(trace, line)
            if raw.get("timestamp") is not None:
                times.append(raw.get("timestamp"))
            who = raw.get("source")
            text = text_of(raw.get("message"))
            if who == "user":
                if trace.input is None and text is not None:
                    trace.input = text
                continue
            if who != "agent":
                continue
            if text:
                trace.output = text
            model = raw.get("model_name", default_model)
            metrics = as_dict(raw.get("metrics"))
            inp, out = count(metrics.get("prompt_tokens")), count(metrics.get("completion_tokens"))
            cost = num(metrics.get("cost_usd"))
            trace.llm_calls.append(LlmCall(
                location=Location(file, line), model=model if isinstance(model, str) else None,
                input_tokens=inp, output_tokens=out, total_tokens=add(inp, out),
                cost_usd=float(cost) if cost is not None else None))
            for j, tc in enumerate(raw.get("tool_calls") or []):
                cline = doc.line("steps", i, "tool_calls", j)
                tc = as_dict(tc)
                name = tc.get("function_name")
                if not isinstance(name, str) or not name:
                    yield InputError("input/invalid_event", file, cline,
                                     "an ATIF tool call without function_name")
                    continue
                args, why = decode_arguments(tc.get("arguments"))
                cid = tc.get("tool_call_id")
                call = ToolCall(name=name, arguments=args, location=Location(file, cline),
                                id=cid if isinstance(cid, str) else None, arguments_error=why)
                trace.tool_calls.append(call)
                if call.id is not None:
                    calls[call.id] = call
            results = as_dict(raw.get("observation")).get("results") or []
            for j, res in enumerate(results):
                rline = doc.line("steps", i, "observation", "results", j)
                res = as_dict(res)
                target = calls.get(str(res.get("source_call_id")))
                if target is None:
                    yield InputError("input/unmatched_result", file, rline,
                                     "an ATIF observation result whose source_call_id "
                                     "matches no tool call")
                    continue
                err = res.get("error")
                failed = err is not None or res.get("is_error") is True
                set_result(target, _result_value(res), str(err) if err is not None else None,
                           not failed, Location(file, rline))
        if len(times) >= 2:
            trace.duration_ms = span_ms(times[0], times[-1])
        yield trace


READER = AtifReader()
