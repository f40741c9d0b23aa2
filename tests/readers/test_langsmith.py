"""The LangSmith reader (readers/langsmith.py) on hostile runs. Its reading of real exports
is tested in test_langchain.py and test_langgraph.py."""

from __future__ import annotations

import json
from pathlib import Path

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import IgnoredEvents, SourceFile, pick_reader, read_file

ROOT = {"id": "r1", "trace_id": "r1", "run_type": "chain", "name": "agent",
        "dotted_order": "20240101T000000000000Zr1", "start_time": "2024-01-01T00:00:00Z",
        "inputs": {"x": 1}}


def llm(n: int, messages: list[object], calls: list[tuple[str, str]],
        arguments: str = '{"id": 1}') -> dict[str, object]:
    """LLM run ``n`` of trace r1 (an OpenAI chat completion): its input ``messages`` and
    the ``calls`` (id, name) its answer asks for, each with ``arguments``."""
    message = {"role": "assistant", "content": None if calls else "done",
               "tool_calls": [{"id": cid, "type": "function", "function": {
                   "name": name, "arguments": arguments}} for cid, name in calls]}
    return {"id": f"l{n}", "trace_id": "r1", "parent_run_id": "r1", "run_type": "llm",
            "name": "ChatOpenAI", "dotted_order": f"20240101T000000000000Zr1."
            f"20240101T00000{n}000000Zl{n}", "start_time": "2024-01-01T00:00:00Z",
            "inputs": {"messages": messages}, "outputs": {"choices": [{"message": message}]}}


def test_a_run_without_id_whose_dotted_order_ends_without_an_id(tmp_path: Path) -> None:
    """A run without ``id`` takes the id that ends its ``dotted_order`` (a patch); one whose
    last segment holds no ``Z<id>`` stopped the reader (IndexError: every run of the file
    lost). It is now not a run, counted as ignored, and the file's other runs are read."""
    patch = {"trace_id": "r1", "run_type": "tool", "name": "t", "start_time": "x",
             "dotted_order": "20240101T000000000000Zr1.no-timestamp"}
    cut = {**patch, "dotted_order": "20240101T000000000000Zr1.20240101T000001000000Z"}
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in (ROOT, patch, cut)))
    source = SourceFile(str(path), path.name, path.name)
    reader = pick_reader(source, "auto")
    assert not isinstance(reader, InputError) and reader.name == "langsmith"
    trace, ignored = read_file(reader, source)
    assert isinstance(trace, Trace) and isinstance(ignored, IgnoredEvents)
    assert (trace.id, ignored.count) == ("r1", 2)


def test_an_llm_run_reusing_a_call_id_for_another_call_is_kept_and_reported(
        tmp_path: Path) -> None:
    """Without tool runs the calls are those the LLM runs asked for: one that reuses an
    earlier call's id for another tool was dropped as the same call (a blocked tool
    passed). It is now a call of its own and an input error at its run's line."""
    def result(text: str) -> dict[str, str]:
        return {"role": "tool", "tool_call_id": "call_0", "content": text}

    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in (
        ROOT,  # line 1
        llm(1, [], [("call_0", "get_customer")]),  # line 2
        llm(2, [result("ok")], [("call_0", "delete_customer")]),  # line 3: call_0 again
        llm(3, [result("ok"), result("deleted")], []),  # line 4: the history again
    )))
    source = SourceFile(str(path), path.name, path.name)
    reader = pick_reader(source, "auto")
    assert not isinstance(reader, InputError) and reader.name == "langsmith"
    items = list(reader.read(source))
    assert [(e.rule, e.line) for e in items if isinstance(e, InputError)] == [
        ("input/invalid_event", 3)]
    [trace] = [i for i in items if isinstance(i, Trace)]
    # each result is located at the LLM run whose input messages hold it first
    assert [(c.name, c.location.line, c.result,
             c.result_location.line if c.result_location else 0) for c in trace.tool_calls] == [
        ("get_customer", 2, "ok", 3), ("delete_customer", 3, "deleted", 4)]


def test_an_llm_run_of_a_langchain_chat_model_asks_for_its_calls(tmp_path: Path) -> None:
    """Without tool runs, the calls a LangChain chat model run asked for are in its
    ``outputs.generations[0][0].message`` (a serialized AIMessage: ``tool_calls``, or
    only the provider's ``additional_kwargs.tool_calls``); only OpenAI-style ``choices``
    were read, so such a trace had no calls and a blocked tool passed with exit 0."""
    def ai(**kwargs: object) -> dict[str, object]:
        return {"lc": 1, "type": "constructor",
                "id": ["langchain", "schema", "messages", "AIMessage"],
                "kwargs": {"content": "", **kwargs}}

    def llm(n: int, messages: list[object], message: dict[str, object]) -> dict[str, object]:
        return {"id": f"l{n}", "trace_id": "r1", "parent_run_id": "r1", "run_type": "llm",
                "name": "ChatOpenAI", "dotted_order": f"20240101T000000000000Zr1."
                f"20240101T00000{n}000000Zl{n}", "start_time": "2024-01-01T00:00:00Z",
                "inputs": {"messages": [messages]},
                "outputs": {"generations": [[{"text": "", "message": message}]]}}

    tool_message = {"lc": 1, "type": "constructor",
                    "id": ["langchain", "schema", "messages", "ToolMessage"],
                    "kwargs": {"content": "deleted", "tool_call_id": "c1"}}
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in (
        ROOT,  # line 1
        llm(1, [], ai(tool_calls=[{"name": "delete_customer", "args": {"id": 7},
                                   "id": "c1", "type": "tool_call"}])),  # line 2
        llm(2, [tool_message], ai(additional_kwargs={"tool_calls": [  # line 3
            {"id": "c2", "type": "function",
             "function": {"name": "purge_data", "arguments": '{"all": true}'}}]})),
    )))
    source = SourceFile(str(path), path.name, path.name)
    reader = pick_reader(source, "auto")
    assert not isinstance(reader, InputError) and reader.name == "langsmith"
    items = list(reader.read(source))
    assert [e for e in items if isinstance(e, InputError)] == []
    [trace] = [i for i in items if isinstance(i, Trace)]
    assert [(c.name, c.id, c.arguments, c.location.line, c.result) for c in trace.tool_calls] == [
        ("delete_customer", "c1", {"id": 7}, 2, "deleted"),  # its result: line 3's input
        ("purge_data", "c2", {"all": True}, 3, None)]


def test_an_llm_run_with_several_choices_or_generations_asks_for_the_calls_of_each(
        tmp_path: Path) -> None:
    """An LLM run of a request with n > 1 has several choices (OpenAI) or generations
    (LangChain): only the first was read, so a call the second asked for was dropped
    without a word; and a ``tool_calls`` item that is not an object was passed over."""
    def run(n: int, outputs: dict[str, object]) -> dict[str, object]:
        return {"id": f"l{n}", "trace_id": "r1", "parent_run_id": "r1", "run_type": "llm",
                "name": "ChatOpenAI", "dotted_order": f"20240101T000000000000Zr1."
                f"20240101T00000{n}000000Zl{n}", "start_time": "2024-01-01T00:00:00Z",
                "inputs": {"messages": []}, "outputs": outputs}

    def openai_call(cid: str, name: str) -> dict[str, object]:
        return {"id": cid, "type": "function",
                "function": {"name": name, "arguments": '{"id": 1}'}}

    def generation(cid: str, name: str) -> dict[str, object]:
        return {"text": "", "message": {
            "lc": 1, "type": "constructor",
            "id": ["langchain", "schema", "messages", "AIMessage"],
            "kwargs": {"content": "", "tool_calls": [
                {"name": name, "args": {"id": 2}, "id": cid, "type": "tool_call"}]}}}

    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in (
        ROOT,  # line 1
        run(1, {"choices": [  # line 2
            {"message": {"role": "assistant", "tool_calls": [openai_call("a", "lookup")]}},
            {"message": {"role": "assistant",
                         "tool_calls": [openai_call("b", "delete_customer"), "junk"]}}]}),
        run(2, {"generations": [  # line 3: one prompt, two candidates, then a second prompt
            [generation("c", "lookup"), generation("d", "purge_data")],
            [generation("e", "drop_table")]]}),
        # line 4: a first choice that is not an object hid the choices after it
        run(3, {"choices": ["junk", {"message": {
            "role": "assistant", "tool_calls": [openai_call("f", "wipe_disk")]}}]}),
        run(4, {"generations": [["junk", generation("g", "format_disk")]]}),  # line 5
    )))
    source = SourceFile(str(path), path.name, path.name)
    reader = pick_reader(source, "auto")
    assert not isinstance(reader, InputError) and reader.name == "langsmith"
    items = list(reader.read(source))
    assert [(e.rule, e.line, e.message) for e in items if isinstance(e, InputError)] == [
        ("input/invalid_event", 2, "a choice, generation or 'tool_calls' item of the "
         "model's answer is not a JSON object; the calls in it cannot be read"),
        ("input/invalid_event", 4, "a choice, generation or 'tool_calls' item of the "
         "model's answer is not a JSON object; the calls in it cannot be read"),
        ("input/invalid_event", 5, "a choice, generation or 'tool_calls' item of the "
         "model's answer is not a JSON object; the calls in it cannot be read")]
    [trace] = [i for i in items if isinstance(i, Trace)]
    assert [(c.name, c.id, c.location.line) for c in trace.tool_calls] == [
        ("lookup", "a", 2), ("delete_customer", "b", 2),
        ("lookup", "c", 3), ("purge_data", "d", 3), ("drop_table", "e", 3),
        ("wipe_disk", "f", 4), ("format_disk", "g", 5)]


def test_a_call_asked_for_that_no_tool_run_answers_is_a_call(tmp_path: Path) -> None:
    """An agent whose tools are partly traced (a @traceable tool beside plain-code ones,
    under wrapOpenAI): the calls the model asked for were read only in a trace without
    any tool run, so one the agent ran untraced (drop_database) was no call at all, and a
    blocklist of it passed (exit 0). Each asked-for call now takes a tool run of its name
    if one is left; one that none answers is a call of its own, at its LLM run's line,
    with its result from the next LLM run's messages. Asked again (the same id, name and
    arguments), it is still the one call."""
    def tool(n: int, name: str) -> dict[str, object]:
        return {"id": f"t{n}", "trace_id": "r1", "parent_run_id": "r1", "run_type": "tool",
                "name": name, "dotted_order": f"20240101T000000000000Zr1."
                f"20240101T00000{n}500000Zt{n}", "start_time": "2024-01-01T00:00:00Z",
                "inputs": {"path": "a"}, "outputs": {"output": f"{name} ran"}}

    results: list[object] = [{"role": "tool", "tool_call_id": "c1", "content": "read"},
                             {"role": "tool", "tool_call_id": "c2", "content": "dropped"}]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in (
        ROOT,  # line 1
        llm(1, [], [("c1", "read_file"), ("c2", "drop_database")], "{}"),  # line 2
        tool(1, "read_file"),  # line 3: the traced tool; drop_database ran untraced
        llm(2, results, [("c1", "read_file"), ("c3", "read_file")], "{}"),  # line 4: c1 again
        tool(2, "Read File"),  # line 5: c3's run (@traceable(name="Read File"))
        llm(3, results, [], "{}"),  # line 6
    )))
    source = SourceFile(str(path), path.name, path.name)
    reader = pick_reader(source, "auto")
    assert not isinstance(reader, InputError) and reader.name == "langsmith"
    items = list(reader.read(source))
    assert [i for i in items if isinstance(i, InputError)] == []
    [trace] = [i for i in items if isinstance(i, Trace)]
    assert [(c.name, c.location.line, c.result) for c in trace.tool_calls] == [
        ("drop_database", 2, "dropped"), ("read_file", 3, "read_file ran"),
        ("Read File", 5, "Read File ran")]  # its name compared in the normal form
