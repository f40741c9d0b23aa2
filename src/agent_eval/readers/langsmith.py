"""LangSmith runs (docs/formats/langsmith.md).

Run objects (``run_type`` llm / tool / chain ...), as the ingest batches
``{"post": [...], "patch": [...]}``, a list, ``{"runs": [...]}`` or JSON lines; one trace
per ``trace_id``. Feedback objects (``client.list_feedback``) and a run's
``feedback_stats`` are recorded scores of the trace.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from agent_eval.matching import normalize_name
from agent_eval.model import LlmCall, Location, ToolCall, Trace
from agent_eval.readers import sniffs
from agent_eval.readers._foreign import (
    add,
    count,
    epoch_ms,
    new_trace,
    num,
    set_result,
    span_ms,
    text_of,
    token_counts,
    touch,
)
from agent_eval.readers._langgraph import node_transitions
from agent_eval.readers._scores import add_score
from agent_eval.readers.base import (
    CallIndex,
    ReadItem,
    SourceFile,
    native_event,
    reused_call_id,
)
from agent_eval.readers.langchain import message_parts, model_name
from agent_eval.readers.native import decode_arguments
from agent_eval.readers.skeleton import FormatReader, LineAt, ReadState, feed
from agent_eval.rule_ids import INPUT_INVALID_EVENT

NAME = "langsmith"


class _Run:
    __slots__ = ("fields", "line", "result_line")

    def __init__(self, fields: dict[str, Any], line: int) -> None:
        self.fields = fields
        self.line = line
        self.result_line: int | None = None


def _run_time(run: dict[str, Any]) -> float | None:
    return span_ms(run.get("start_time"), run.get("end_time"))


def _first_user_text(inputs: Any) -> Any:
    if not isinstance(inputs, dict):
        return inputs
    messages = inputs.get("messages")
    if isinstance(messages, list):
        flat = messages[0] if messages and isinstance(messages[0], list) else messages
        for m in flat:
            parts = message_parts(m)
            if parts is not None and parts[0] == "human":
                return text_of(parts[1].get("content"))
            if isinstance(m, dict) and m.get("role") in ("user", "human"):
                return text_of(m.get("content"))
    for key in ("input", "question", "query", "prompt"):
        if isinstance(inputs.get(key), str):
            return inputs[key]
    return inputs


def _final_text(outputs: Any) -> Any:
    if not isinstance(outputs, dict):
        return outputs
    choices = outputs.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        msg = choices[0].get("message")
        if isinstance(msg, dict):
            return text_of(msg.get("content"))
    for key in ("output", "answer", "result", "text"):
        if key in outputs:
            value = outputs[key]
            return text_of(value) if text_of(value) is not None else value
    messages = outputs.get("messages")
    if isinstance(messages, list):
        for m in reversed(messages):
            parts = message_parts(m)
            if parts is not None and parts[0] == "ai":
                return text_of(parts[1].get("content"))
    generations = outputs.get("generations")
    if isinstance(generations, list) and generations:
        g = generations[0][0] if isinstance(generations[0], list) else generations[0]
        if isinstance(g, dict) and isinstance(g.get("text"), str):
            return g["text"]
    return outputs


def _llm_usage(run: dict[str, Any]) -> tuple[int | None, int | None, int | None]:
    i, o = count(run.get("prompt_tokens")), count(run.get("completion_tokens"))
    t = count(run.get("total_tokens"))
    if i is not None or o is not None or t is not None:
        return i, o, t if t is not None else add(i, o)
    outputs = run.get("outputs")
    if not isinstance(outputs, dict):
        return None, None, None
    for key in ("usage_metadata", "usage"):
        u = outputs.get(key)
        if isinstance(u, dict):
            return token_counts(u, ("input_tokens", "prompt_tokens"),
                                ("output_tokens", "completion_tokens"))
    llm_output = outputs.get("llm_output")
    if isinstance(llm_output, dict) and isinstance(llm_output.get("token_usage"), dict):
        return token_counts(llm_output["token_usage"], ("prompt_tokens", "prompt_tokens"),
                            ("completion_tokens", "completion_tokens"))
    return None, None, None


def _llm_model(run: dict[str, Any]) -> str | None:
    """The model that answered (the response's), else the one asked for."""
    outputs = run.get("outputs")
    if isinstance(outputs, dict) and isinstance(outputs.get("model"), str):
        return str(outputs["model"])
    extra = run.get("extra")
    if isinstance(extra, dict):
        meta = extra.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("ls_model_name"), str):
            return str(meta["ls_model_name"])
        params = extra.get("invocation_params")
        name = model_name(params)
        if name:
            return name
    inputs = run.get("inputs")
    if isinstance(inputs, dict) and isinstance(inputs.get("model"), str):
        return str(inputs["model"])
    return None


def _tool_arguments(inputs: Any) -> tuple[Any, str | None]:
    if isinstance(inputs, dict) and set(inputs) == {"input"}:
        inner = inputs["input"]
        value, why = decode_arguments(inner)
        return (value, None) if why is None else (inputs, None)
    return decode_arguments(inputs)


def _trace_id(run: _Run) -> str:
    return str(run.fields.get("trace_id", run.fields.get("id")))


def _tool_call(f: dict[str, Any], loc: Location, out_loc: Location) -> ToolCall:
    args, why = _tool_arguments(f.get("inputs"))
    outputs = f.get("outputs")
    result = outputs.get("output", outputs) if isinstance(outputs, dict) else outputs
    call = ToolCall(name=str(f.get("name") or "unknown"), arguments=args, location=loc,
                    id=str(f.get("id")), arguments_error=why, latency_ms=_run_time(f),
                    arguments_recorded=f.get("inputs") is not None)
    if not call.arguments_recorded:
        call.arguments = None
    if outputs is not None or f.get("error"):
        err = f.get("error")
        set_result(call, result, str(err) if err else None, not err, out_loc)
    return call


def _graph_steps(members: list[_Run], file: str) -> Iterator[tuple[str, Location]]:
    """The LangGraph checkpoint namespace of each run (``extra.metadata``), in order."""
    for run in members:
        extra = run.fields.get("extra")
        meta = extra.get("metadata") if isinstance(extra, dict) else None
        ns = meta.get("langgraph_checkpoint_ns") if isinstance(meta, dict) else None
        if isinstance(ns, str):
            yield ns, Location(file, run.line)


class _Runs(ReadState):
    """The runs of a file by id (a patch completes its post) and the feedback objects."""

    def __init__(self, source: SourceFile) -> None:
        super().__init__(source)
        self.runs: dict[str, _Run] = {}
        self.feedback: list[_Run] = []

    def take(self, value: Any, at: LineAt, _whole: bool) -> None:
        self.unknown += self.collect(value, at, ())

    def collect(self, value: Any, at: LineAt, path: tuple[str | int, ...],
                patch: bool = False) -> int:
        """Take the runs in ``value``; the number of values that are not runs."""
        if isinstance(value, list):
            return sum(self.collect(v, at, (*path, i), patch) for i, v in enumerate(value))
        if not isinstance(value, dict):
            return 1
        batch = ("post", "patch") if "post" in value or "patch" in value else (
            ("runs", "feedback") if isinstance(value.get("runs"), list)
            or isinstance(value.get("feedback"), list) else ())
        if batch:
            return sum(self.collect(value[key], at, (*path, key), key == "patch")
                       for key in batch if isinstance(value.get(key), list))
        if "run_id" in value and "key" in value and "run_type" not in value:
            # a feedback object (client.list_feedback): a score of a run
            self.feedback.append(_Run(value, at(*path)))
            return 0
        # (a run has no "type": its line is found only for an object that has one)
        error = native_event(value, NAME, self.file, at(*path)) if "type" in value else None
        if error is not None:
            self.errors.append(error)
            return 0
        return self.run(value, at, path, patch)

    def run(self, value: dict[str, Any], at: LineAt, path: tuple[str | int, ...],
            patch: bool) -> int:
        rid = value.get("id")
        dotted = value.get("dotted_order")
        if rid is None and isinstance(dotted, str):
            # a patch without its id (it was in the URL): the id ends the dotted order,
            # after its last segment's timestamp (…Z<id>)
            _, z, after = dotted.rpartition(".")[2].partition("Z")
            rid = after if z and after else None
        if rid is None:
            return 1
        key = str(rid)
        if not patch and "run_type" not in value and dotted is None and key not in self.runs:
            return 1  # an object with an id that is no run (a chat.completion, a message)
        line = at(*path)
        have = self.runs.get(key)
        if have is None:
            have = self.runs[key] = _Run(dict(value), line)
        else:
            have.fields.update({k: v for k, v in value.items() if v is not None})
        if patch or value.get("outputs") is not None or value.get("error") is not None:
            have.result_line = line
        children = value.get("child_runs")
        n = 0
        if isinstance(children, list):
            for i, child in enumerate(children):
                if isinstance(child, dict):
                    child.setdefault("parent_run_id", rid)
                    child.setdefault("trace_id", value.get("trace_id", rid))
                n += self.collect(child, at, (*path, "child_runs", i))
        return n

    def traces(self) -> Iterator[Trace]:
        source, runs = self.source, self.runs
        groups: dict[str, list[_Run]] = {}
        for run in runs.values():
            groups.setdefault(_trace_id(run), []).append(run)
        scored: dict[str, list[_Run]] = {}  # trace id -> its runs' feedback objects
        for fb in self.feedback:
            owner = runs.get(str(fb.fields.get("run_id")))
            if owner is not None:
                scored.setdefault(_trace_id(owner), []).append(fb)
        for tid, members in groups.items():
            members.sort(key=lambda r: (str(r.fields.get("dotted_order", "")),
                                        epoch_ms(r.fields.get("start_time")) or 0.0))
            tr = self._root(tid, source, members)
            # the tool runs' names, each once per run: a call an LLM run asked for that
            # no tool run of its name answers ran untraced (a plain-code tool beside
            # traced ones) and is a call of its own; the others are their tool runs
            # (names compared in the normal form tool_match: normalized uses: a tool run
            # "Get Weather" answers the model's get_weather)
            traced = _Traced(Counter(normalize_name(str(r.fields.get("name")))
                                     for r in members if r.fields.get("run_type") == "tool"))
            by_id = CallIndex()
            for run in members:
                self._run(tr, run, source.file, by_id, traced)
            steps = list(_graph_steps(members, source.file))
            tr.handoffs.extend(node_transitions(steps))
            if any(ns for ns, _ in steps):  # a LangGraph app: its handoffs are recorded
                tr.handoffs_recorded = True
            for fb in scored.get(tid, ()):
                g = fb.fields
                touch(tr, fb.line)
                raw = g.get("score") if g.get("score") is not None else g.get("value")
                add_score(tr, g.get("key"), raw, Location(source.file, fb.line),
                          source=NAME, comment=g.get("comment"))
            yield tr

    def _root(self, tid: str, source: SourceFile, members: list[_Run]) -> Trace:
        """The trace of a group of runs, with what its root run records."""
        tr = new_trace(tid, source, min(r.line for r in members), NAME)
        roots = [r for r in members if not r.fields.get("parent_run_id")]
        rf = (roots[0] if roots else members[0]).fields
        tr.input = _first_user_text(rf.get("inputs"))
        tr.output = _final_text(rf.get("outputs"))
        tr.duration_ms = _run_time(rf)
        for key in ("name", "run_type", "session_name"):
            if isinstance(rf.get(key), str):
                tr.metadata[f"root_{key}" if key != "session_name" else "project"] = rf[key]
        if rf.get("error"):
            tr.metadata["error"] = rf["error"]
        cost = num(rf.get("total_cost"))
        if cost is not None and len(members) > 1:
            tr.cost_usd = float(cost)  # the root's total covers its children
        return tr

    def _run(self, tr: Trace, run: _Run, file: str, requested: CallIndex,
             traced: _Traced) -> None:
        """One run of the trace: a tool run is a tool call, an LLM run an LLM call and the
        calls it asked for that no tool run answers (``traced``: the tool runs of each
        name not yet taken by an asked-for call)."""
        f = run.fields
        touch(tr, run.line)
        if run.result_line is not None:
            touch(tr, run.result_line)
        loc = Location(file, run.line)
        out_loc = Location(file, run.result_line or run.line)
        if f.get("run_type") == "tool":
            tr.tool_calls.append(_tool_call(f, loc, out_loc))
        elif f.get("run_type") == "llm":
            i, o, t = _llm_usage(f)
            c = num(f.get("total_cost"))
            tr.llm_calls.append(LlmCall(
                location=loc, model=_llm_model(f), input_tokens=i, output_tokens=o,
                total_tokens=t, cost_usd=None if c is None else float(c),
                latency_ms=_run_time(f)))
            self._requested_calls(f, tr, requested, traced, loc, out_loc)
        stats = f.get("feedback_stats")
        if isinstance(stats, dict):
            for key, stat in stats.items():
                avg = stat.get("avg") if isinstance(stat, dict) else None
                add_score(tr, str(key), avg, loc, source=NAME)

    def _requested_calls(self, run: dict[str, Any], tr: Trace, by_id: CallIndex,
                         traced: _Traced, loc: Location, out_loc: Location) -> None:
        """The calls an LLM asked for (OpenAI-style outputs) that no tool run answers
        (all of them in a trace without tool runs), and their results in the next LLM
        call's input messages (which repeat the history: a result a call with that id has
        is not another call's)."""
        inputs = run.get("inputs")
        # (no result to look for while no asked-for call is a call of its own: the tool
        # runs have theirs)
        messages = inputs.get("messages") if isinstance(inputs, dict) and by_id else None
        messages = messages if isinstance(messages, list) else []
        if messages and isinstance(messages[0], list):  # a chat model run: [[messages]]
            messages = [m for batch in messages if isinstance(batch, list) for m in batch]
        for m in messages:
            if isinstance(m, dict) and m.get("role") == "tool":
                key, value = str(m.get("tool_call_id")), text_of(m.get("content"))
            else:  # a serialized LangChain ToolMessage
                parts = message_parts(m)
                if parts is None or parts[0] != "tool":
                    continue
                key, value = str(parts[1].get("tool_call_id")), text_of(
                    parts[1].get("content"))
            call = by_id.open(key)
            if call is not None and not by_id.has_result(key, value):
                set_result(call, value, None, True, loc)
        for asked in _asked(run.get("outputs")):
            if asked is None:
                self.errors.append(INPUT_INVALID_EVENT.input_error(
                    self.file, out_loc.line, "a choice, generation or 'tool_calls' item "
                    "of the model's answer is not a JSON object; the calls in it cannot be "
                    "read"))
                continue
            cid, name, raw = asked
            if not isinstance(name, str) or not name:
                self.errors.append(INPUT_INVALID_EVENT.input_error(
                    self.file, out_loc.line, "a tool call the model asked for has no tool "
                    "name; it cannot be checked"))
                continue
            if traced.runs or traced.asked:  # (a trace without tool runs takes none)
                asked_key = (cid, name, repr(raw))
                if asked_key in traced.asked:
                    continue  # the same call asked again: its tool run was taken
                normal = normalize_name(name)
                if traced.runs[normal] > 0 and by_id.first(cid) is None:
                    traced.runs[normal] -= 1  # its tool run is the call
                    traced.asked.add(asked_key)
                    continue
            args, why = decode_arguments(raw)
            first = by_id.first(cid)
            if first is not None:
                if by_id.same(cid, name, args, why) is not None:
                    continue  # the same call again
                self.errors.append(reused_call_id(cid, first, self.file, out_loc.line))
            call = ToolCall(name=name, arguments=args, location=out_loc, id=cid,
                            arguments_error=why)
            tr.tool_calls.append(call)
            by_id.add(cid, call)


@dataclass(slots=True)
class _Traced:
    """A trace's tool runs not yet taken by a call an LLM run asked for: how many of each
    name (in its normal form, :func:`~agent_eval.matching.normalize_name`), and the
    asked-for calls (id, name, arguments as given) that took one."""

    runs: Counter[str]
    asked: set[tuple[str, str, str]] = field(default_factory=set)


def _asked(outputs: Any) -> list[tuple[str, Any, Any] | None]:
    """The calls an LLM run's outputs ask for, as (id, name, raw arguments), ``None`` for
    a choice, generation or ``tool_calls`` item that is not an object: OpenAI's
    ``choices[k].message.tool_calls``, or a LangChain chat model's
    ``generations[i][j].message`` (its ``tool_calls``, else the provider's
    ``additional_kwargs.tool_calls``). Every choice and generation is read (a
    request with n > 1 has several): a call any of them asked for may be the one the agent
    ran."""
    if not isinstance(outputs, dict):
        return []
    found: list[Any] = []
    choices = outputs.get("choices")
    generations = outputs.get("generations")
    if isinstance(choices, list) and choices:
        for choice in choices:
            if not isinstance(choice, dict):
                found.append([None])  # its calls cannot be read: said, as an item's
                continue
            msg = choice.get("message")
            found.append(msg.get("tool_calls") if isinstance(msg, dict) else None)
    elif isinstance(generations, list) and generations:
        for batch in generations:
            for g in batch if isinstance(batch, list) else [batch]:
                if not isinstance(g, dict):
                    found.append([None])
                    continue
                parts = message_parts(g.get("message"))
                if parts is None or parts[0] != "ai":
                    continue
                calls = parts[1].get("tool_calls")
                if not calls:
                    extra = parts[1].get("additional_kwargs")
                    calls = extra.get("tool_calls") if isinstance(extra, dict) else None
                found.append(calls)
    out: list[tuple[str, Any, Any] | None] = []
    for calls in found:
        for tc in calls if isinstance(calls, list) else []:
            if not isinstance(tc, dict):
                out.append(None)
                continue
            fn = tc.get("function")
            if isinstance(fn, dict):  # OpenAI: {id, function: {name, arguments}}
                out.append((str(tc.get("id")), fn.get("name"), fn.get("arguments")))
            else:  # LangChain: {name, args, id}
                out.append((str(tc.get("id")), tc.get("name"), tc.get("args")))
    return out


class LangSmithReader(FormatReader):
    name = NAME
    marks = sniffs.LANGSMITH
    empty = "no LangSmith run in this file (objects with an id and a run_type)"

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        state = _Runs(source)
        if not (yield from feed(source, state.take)):
            yield from self.finish(state)


READER = LangSmithReader()
