"""ATIF trajectories (docs/formats/atif.md).

One JSON document per file: ``{"schema_version": "ATIF-v1.x", "agent": {...},
"steps": [...]}``. An ``agent`` step's ``tool_calls`` are tool calls; its
``observation.results`` (matched by ``source_call_id``) are their results. The first
``user`` step is the input, the last ``agent`` message the output, and each ``agent``
step is one LLM call (``metrics`` when recorded).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent_eval.jsonutil import json_type
from agent_eval.model import LlmCall, Location, ToolCall, Trace
from agent_eval.readers import sniffs
from agent_eval.readers._foreign import (
    JsonDoc,
    add,
    as_dict,
    count,
    num,
    set_result,
    span_ms,
    text_of,
)
from agent_eval.readers.skeleton import DocumentReader, DocumentState, named

NAME = "atif"
_SOURCES = ("system", "user", "agent")


def _shown(value: Any) -> str:
    """A step's source as an error names it."""
    return repr(value) if isinstance(value, str) else json_type(value)


def _result_value(res: dict[str, Any]) -> Any:
    if "content" in res:
        text = text_of(res["content"])
        return text if text is not None else res["content"]
    if "subagent_trajectory_ref" in res:
        return res["subagent_trajectory_ref"]
    return None


class _Trajectory(DocumentState):
    fmt = NAME

    def begin(self, doc: JsonDoc, root: dict[str, Any]) -> None:
        super().begin(doc, root)
        self.default_model = as_dict(root.get("agent")).get("model_name")
        self.trace.metadata = {k: root[k] for k in ("schema_version", "session_id",
                                                        "trajectory_id")
                               if isinstance(root.get(k), str)}
        self.calls: dict[str, ToolCall] = {}
        self.times: list[Any] = []
        self.final = as_dict(root.get("final_metrics"))

    def item(self, raw: dict[str, Any], line: int, index: int) -> None:
        trace = self.trace
        if raw.get("timestamp") is not None:
            self.times.append(raw.get("timestamp"))
        who = raw.get("source")
        if who not in _SOURCES:
            self.invalid(line, f"an ATIF step's source must be 'system', 'user' or 'agent', "
                               f"not {_shown(who)}; its message was not read")
        if not self.said(trace, text_of(raw.get("message")), user=who == "user",
                         agent=who == "agent"):
            self.stray_calls(raw, index, who)
            return
        model = raw.get("model_name", self.default_model)
        metrics = as_dict(raw.get("metrics"))
        inp, out = count(metrics.get("prompt_tokens")), count(metrics.get("completion_tokens"))
        cost = num(metrics.get("cost_usd"))
        trace.llm_calls.append(LlmCall(
            location=Location(self.file, line), model=model if isinstance(model, str) else None,
            input_tokens=inp, output_tokens=out, total_tokens=add(inp, out),
            cost_usd=float(cost) if cost is not None else None))
        self.step_calls(raw, index)

    def stray_calls(self, raw: dict[str, Any], index: int, who: Any) -> None:
        """The tool calls of a step that is no agent step (only agent steps make calls):
        read as calls all the same, and an input error, never passed over; their results
        are read with them."""
        if raw.get("tool_calls") in (None, []):
            return
        self.invalid(self.doc.line("steps", index, "tool_calls"),
                     f"tool_calls in a step whose source is {_shown(who)}: only 'agent' "
                     "steps make tool calls; they are read as the agent's calls")
        self.step_calls(raw, index)

    def step_calls(self, raw: dict[str, Any], index: int) -> None:
        """The tool calls of a step, then the results of its observation."""
        trace = self.trace
        calls = self.array(raw.get("tool_calls"), self.doc.line("steps", index, "tool_calls"),
                           "an ATIF step's tool_calls")
        for j, tc in enumerate(calls):
            cline = self.doc.line("steps", index, "tool_calls", j)
            tc = as_dict(tc)
            name = named(tc.get("function_name"))
            if name is None:
                self.invalid(cline, "an ATIF tool call without function_name")
                continue
            call = self.tool_call(trace, name, tc.get("arguments"), tc.get("tool_call_id"),
                                  cline)
            if call.id is not None:
                self.calls[call.id] = call
        results = as_dict(raw.get("observation")).get("results")
        self.results(self.array(results, self.doc.line("steps", index, "observation",
                                                       "results"),
                                "an ATIF observation's results"), index)

    def results(self, results: list[Any], index: int) -> None:
        for j, res in enumerate(results):
            rline = self.doc.line("steps", index, "observation", "results", j)
            res = as_dict(res)
            target = self.calls.get(str(res.get("source_call_id")))
            if target is None:
                self.unmatched(rline, "an ATIF observation result whose source_call_id "
                                      "matches no tool call")
                continue
            err = res.get("error")
            failed = err is not None or res.get("is_error") is True
            set_result(target, _result_value(res), str(err) if err is not None else None,
                       not failed, Location(self.file, rline))

    def traces(self) -> Iterable[Trace]:
        trace = self.trace
        if len(self.times) >= 2:
            trace.duration_ms = span_ms(self.times[0], self.times[-1])
        # the trajectory's totals: its cost and tokens, even where no step has metrics
        final = self.final
        cost = num(final.get("total_cost_usd"))
        if cost is not None:
            trace.cost_usd = float(cost)
        trace.total_tokens = add(count(final.get("total_prompt_tokens")),
                                 count(final.get("total_completion_tokens")))
        return [trace]


class AtifReader(DocumentReader):
    name = NAME
    marks = sniffs.ATIF
    key = "steps"
    need = "an ATIF trajectory needs a 'steps' array"
    item_what = "an ATIF step"
    state = _Trajectory


READER = AtifReader()
