"""Assay's recorded traces (docs/formats/assay.md), in the three shapes Assay's trace
provider reads (assay-core ``providers/trace_next``, ``trace/schema.rs``):

- **V2 episodes**: ``episode_start`` / ``step`` / ``tool_call`` / ``episode_end`` events,
  one trace per ``episode_id``;
- **V1 records**: ``{"schema_version": 1, "type": "assay.trace", "request_id", "prompt",
  "response", "meta"}`` (or the same without ``type``), one trace per line;
- **legacy lines**: ``{"tool", "args", "prompt", "response"}`` or ``{"tool_calls": [...]}``,
  one trace per line.

Assay's documented format (``{"type": "tool_call", "tool", "arguments"}`` and
``tool_result`` lines) is agent-eval's native format and is read by the native reader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import orjson

from agent_eval.model import LlmCall, Location, Trace
from agent_eval.readers import sniffs
from agent_eval.readers._foreign import (
    as_dict,
    new_trace,
    num,
    set_result,
    touch,
)
from agent_eval.readers.base import SourceFile
from agent_eval.readers.skeleton import EventReader, ReadState, dispatch, named

__all__ = ["READER", "AssayReader"]

NAME = "assay"
PLACEHOLDER_MODEL = "trace"  # what Assay writes as the model of a replayed trace


def _json_text(value: Any) -> dict[str, Any]:
    """A step's ``content`` when it is JSON text of an object (Assay looks for
    ``prompt``, ``completion`` and ``model`` in it), else an empty object."""
    if not isinstance(value, str) or not value.lstrip().startswith("{"):
        return {}
    try:
        return as_dict(orjson.loads(value))
    except orjson.JSONDecodeError:
        return {}


class _Episode:
    __slots__ = ("end_ts", "start_ts", "trace")

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.start_ts: int | float | None = None
        self.end_ts: int | float | None = None


class AssayState(ReadState):
    def __init__(self, source: SourceFile) -> None:
        super().__init__(source)
        self.episodes: dict[str, _Episode] = {}
        self.lines: list[Trace] = []  # V1 records and legacy lines, one trace each
        self.request_ids: set[str] = set()

    def traces(self) -> Iterable[Trace]:
        out = [e.trace for e in self.episodes.values()] + self.lines
        for ep in self.episodes.values():
            # epoch milliseconds both; an end before the start is no duration (as
            # _foreign.span_ms gives for the other formats), never a made-up 0 ms
            if ep.start_ts is not None and ep.end_ts is not None and ep.end_ts >= ep.start_ts:
                ep.trace.duration_ms = float(ep.end_ts - ep.start_ts)
        return sorted(out, key=lambda t: t.location.line)

    def record(self, value: Any, line: int) -> None:
        if not isinstance(value, dict):
            self.invalid(line, "an Assay trace record must be a JSON object")
            return
        kind = value.get("type")
        if kind is not None and kind != "assay.trace":
            if not dispatch(self, EVENTS, kind, value, line):
                self.unknown += 1
            return
        if kind is None and ("tool" in value or "tool_calls" in value):
            self.legacy(value, line)
        elif kind is not None or "request_id" in value or isinstance(value.get("response"),
                                                                     str):
            self.v1(value, line)  # (a response that is no text: another format's pair)
        else:
            self.unknown += 1

    # ---------------------------------------------------------------- V2 episodes
    def episode(self, value: dict[str, Any], line: int) -> _Episode | None:
        """The episode an event belongs to (started here when its ``episode_start`` is
        missing: Assay drops such events; they are kept here, as evidence)."""
        eid = named(value.get("episode_id"))
        if eid is None:
            self.invalid(line, f"an Assay {value.get('type')} event needs an 'episode_id'")
            return None
        ep = self.episodes.get(eid)
        if ep is None:
            ep = self.episodes[eid] = _Episode(new_trace(eid, self.source, line, NAME))
        touch(ep.trace, line)
        return ep

    def start(self, value: dict[str, Any], line: int) -> None:
        ep = self.episode(value, line)
        if ep is None:
            return
        ep.start_ts = num(value.get("timestamp"))  # epoch milliseconds (schema.rs)
        inp = value.get("input")
        prompt = as_dict(inp).get("prompt")
        ep.trace.input = prompt if isinstance(prompt, str) else inp
        meta = value.get("meta")
        if isinstance(meta, dict) and meta:
            ep.trace.metadata["meta"] = meta

    def step(self, value: dict[str, Any], line: int) -> None:
        """A step: an LLM step (``kind`` llm or model) is an LLM call; its content is the
        episode's output so far (or the ``completion`` of JSON content, or the
        ``gen_ai.completion`` of its meta), as in Assay."""
        ep = self.episode(value, line)
        if ep is None:
            return
        trace, meta = ep.trace, as_dict(value.get("meta"))
        content = value.get("content")
        parsed = _json_text(content)
        if trace.input is None:
            prompt = parsed.get("prompt", meta.get("gen_ai.prompt"))
            if isinstance(prompt, str):
                trace.input = prompt
        model = named(meta.get("gen_ai.request.model") or meta.get("gen_ai.response.model")
                      or parsed.get("model"))
        if value.get("kind") in ("llm", "model"):
            trace.llm_calls.append(LlmCall(location=Location(self.file, line), model=model))
        if isinstance(content, str):
            completion = parsed.get("completion")
            trace.output = completion if isinstance(completion, str) else content
        if isinstance(meta.get("gen_ai.completion"), str):
            trace.output = meta["gen_ai.completion"]

    def call(self, value: dict[str, Any], line: int) -> None:
        ep = self.episode(value, line)
        if ep is None:
            return
        name = named(value.get("tool_name"))
        if name is None:
            self.invalid(line, "an Assay tool_call needs a 'tool_name'")
            return
        step, index = value.get("step_id"), value.get("call_index")
        # the step's id and the call's index in it; without a step id the call has no id
        cid = (f"{step}-{index if isinstance(index, int) else 0}"
               if isinstance(step, str) and step else None)
        call = self.tool_call(ep.trace, name, value.get("args", {}), cid, line)
        error = value.get("error")
        if "result" in value or error is not None:
            ok = error is None
            set_result(call, value.get("result"), None if ok else str(error), ok,
                       Location(self.file, line))

    def end(self, value: dict[str, Any], line: int) -> None:
        ep = self.episode(value, line)
        if ep is None:
            return
        ep.end_ts = num(value.get("timestamp"))
        if isinstance(value.get("final_output"), str):
            ep.trace.output = value["final_output"]
        if isinstance(value.get("outcome"), str):
            ep.trace.metadata["outcome"] = value["outcome"]

    # ------------------------------------------------------ V1 records, legacy lines
    def line_trace(self, value: dict[str, Any], line: int, tid: Any) -> Trace | None:
        """The trace of one V1 record or legacy line; a ``request_id`` seen before is an
        input error (Assay refuses the file: "Duplicate request_id")."""
        if isinstance(tid, str) and tid:
            if tid in self.request_ids:
                self.invalid(line, f"duplicate request_id {tid!r} (Assay refuses the file); "
                             "give each record its own request_id")
                return None
            self.request_ids.add(tid)
        else:
            tid = f"{self.source.trace_id}:{line}"
        trace = new_trace(tid, self.source, line, NAME)
        prompt = value.get("prompt")
        if isinstance(prompt, str):
            trace.input = prompt
        response = value.get("response", value.get("text"))
        if isinstance(response, str):
            trace.output = response
        self.lines.append(trace)
        return trace

    def v1(self, value: dict[str, Any], line: int) -> None:
        trace = self.line_trace(value, line, value.get("request_id"))
        if trace is None:
            return
        model = named(value.get("model"))
        if trace.output is not None:  # one recorded model answer
            trace.llm_calls.append(LlmCall(location=Location(self.file, line),
                                           model=None if model == PLACEHOLDER_MODEL
                                           else model))
        meta = as_dict(value.get("meta"))
        if meta:
            trace.metadata["meta"] = meta
        self.recorded_calls(trace, meta.get("tool_calls"), line)

    def legacy(self, value: dict[str, Any], line: int) -> None:
        tool = named(value.get("tool"))
        if tool is None and "tool" in value:
            self.invalid(line, "an Assay trace line's 'tool' must be a tool name")
            return
        trace = self.line_trace(value, line, value.get("id"))
        if trace is None:
            return
        if tool is not None:
            call = self.tool_call(trace, tool, value.get("args", {}), None, line)
            if "result" in value:
                set_result(call, value["result"], None, True, Location(self.file, line))
        else:
            self.recorded_calls(trace, value.get("tool_calls"), line)

    def recorded_calls(self, trace: Trace, calls: Any, line: int) -> None:
        """Tool call records (``tool_name``, ``args``, ``result``, ``error``)."""
        if calls is None:
            return
        if not isinstance(calls, list):
            self.invalid(line, "'tool_calls' must be a list of tool call records")
            return
        for rec in calls:
            rec = as_dict(rec)
            name = named(rec.get("tool_name", rec.get("name", rec.get("tool"))))
            if name is None:
                self.invalid(line, "a tool call record needs a 'tool_name'")
                continue
            call = self.tool_call(trace, name, rec.get("args", rec.get("arguments", {})),
                                  rec.get("id"), line)
            error = rec.get("error")
            if rec.get("result") is not None or error is not None:
                ok = error is None
                set_result(call, rec.get("result"), None if ok else str(error), ok,
                           Location(self.file, line))


EVENTS: dict[str, Callable[[AssayState, dict[str, Any], int], None]] = {
    "episode_start": AssayState.start,
    "step": AssayState.step,
    "tool_call": AssayState.call,
    "episode_end": AssayState.end,
}


class AssayReader(EventReader):
    name = NAME
    state = AssayState
    empty = ("no Assay trace record in this file (episode events, assay.trace records or "
             "tool lines)")

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return sniffs.assay(head, source)


READER = AssayReader()
