"""The Claude Code reader: session JSONL, stream-json and the loglines envelope
(docs/formats/claude_code.md).

Expected values are read by hand from the fixtures (tests/fixtures/claude_code/) and, when
they are beside the repository, the real-world samples (each assertion cites its line); the
letta-trajectory samples are also checked against their authors'
``*.expected-normalized.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FIXTURES as ALL_FIXTURES
from tests.conftest import SAMPLES

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import IgnoredEvents, ReadItem, SourceFile, pick_reader

DIR = SAMPLES / "claude_code_jsonl"
STREAM = SAMPLES / "claude_code_stream_json" / "claude-code-action__sample-turns.json"
FIXTURES = ALL_FIXTURES / "claude_code"


def read_auto(path: Path) -> tuple[str, list[ReadItem]]:
    source = SourceFile(str(path), path.name, path.name)
    reader = pick_reader(source, "auto")
    assert not isinstance(reader, InputError), reader
    return reader.name, list(reader.read(source))


def traces(items: list[ReadItem]) -> dict[str, Trace]:
    return {i.id: i for i in items if isinstance(i, Trace)}


def errors(items: list[ReadItem]) -> list[tuple[str, int]]:
    return [(e.rule, e.line) for e in items if isinstance(e, InputError)]


def calls(t: Trace) -> list[tuple[str, int]]:
    return [(c.name, c.location.line) for c in t.tool_calls]


def expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DIR / name).read_text())
    return data


# ----------------------------------------------------------------- the fixtures
def test_a_failed_tool_call_with_its_session_metadata() -> None:
    _, items = read_auto(FIXTURES / "tool-error.jsonl")
    [t] = traces(items).values()
    assert t.id == "sess-refund-7"  # sessionId, line 1
    assert t.input == "Why does the refund job crash?"  # line 1
    assert t.output == "The job file is missing: jobs/refund.py was deleted."  # line 4
    [call] = t.tool_calls
    assert (call.name, call.id, call.arguments) == (
        "Read", "toolu_01Read", {"file_path": "jobs/refund.py"})  # line 2
    # line 3: tool_result with is_error true; its text is both result and error
    assert (call.ok, call.error, call.result) == (
        False, "File does not exist.", "File does not exist.")
    assert (call.location.line, call.result_location.line if call.result_location else 0) == (
        2, 3)
    assert (t.metadata["cwd"], t.metadata["git_branch"], t.metadata["model"]) == (
        "/srv/shop", "fix/refunds", "claude-opus-4-6")
    # timestamps: the call 09:00:04.000 (line 2), its result 09:00:04.250 (line 3), the
    # session 09:00:00 (line 1) .. 09:00:09 (line 4)
    assert call.latency_ms == 250.0
    assert t.duration_ms == 9000.0
    assert t.llm_calls == []  # these rows carry no usage


def test_a_subagent_file_is_one_sidechain_trace() -> None:
    _, items = read_auto(FIXTURES / "subagent.jsonl")
    [t] = traces(items).values()
    # sessionId and agentId on lines 1-2
    assert t.id == "sess-refund-7/agent-search"
    assert (t.metadata["sidechain"], t.metadata["parent_session"]) == (True, "sess-refund-7")
    assert (t.input, t.output) == ("Find where refunds are queued.",
                                   "Refunds are queued in jobs/queue.py.")
    assert t.metadata["model"] == "claude-haiku-4-5"  # line 2
    assert t.duration_ms == 2500.0  # 09:01:00.000 .. 09:01:02.500


def test_bad_lines_are_reported_and_the_rest_is_read() -> None:
    _, items = read_auto(FIXTURES / "bad-lines.jsonl")
    assert errors(items) == [
        ("input/parse_error", 1),  # not-json
        ("input/invalid_event", 6),  # "contenst": the message has no content
        ("input/invalid_event", 7),  # "message": "error"
        ("input/invalid_event", 8),  # a string
        ("input/invalid_event", 9),  # 42
    ]
    [err] = [e for e in items if isinstance(e, InputError) and e.line == 1]
    assert err.file == "bad-lines.jsonl"
    assert [i.count for i in items if isinstance(i, IgnoredEvents)] == [1]  # line 10
    found = traces(items)
    assert set(found) == {"sess-b", "sess-b/sidechain", "sess-other"}
    main = found["sess-b"]
    # line 3 is an isMeta /clear row: not the request; line 12 a summary row
    assert main.input == "Refund order A-7."  # line 2
    assert calls(main) == [("issue_refund", 5)]
    assert not main.tool_calls[0].has_result  # its result row (line 6) is the broken one
    assert (main.location.line, main.end_location.line) == (2, 5)
    # line 4 is a sidechain row: kept, as a trace of its own
    side = found["sess-b/sidechain"]
    assert (side.output, side.location.line, side.metadata["sidechain"]) == (
        "subagent notes", 4, True)
    # line 11: a row of another session
    assert calls(found["sess-other"]) == [("TodoWrite", 11)]
    assert found["sess-other"].tool_calls[0].arguments == {"todos": ["broken_todo"]}


def test_loglines_envelope_of_a_fixture() -> None:
    _, items = read_auto(FIXTURES / "loglines.json")
    [t] = traces(items).values()
    assert t.input == "Add a test for the refund limit"  # line 8
    [call] = t.tool_calls  # the Bash tool_use block, lines 17-23
    assert (call.name, call.location.line, call.latency_ms) == ("Bash", 17, 2000.0)
    assert (call.ok, call.error) == (False, "Exit code 1\n1 failed")  # lines 34-39
    assert call.result_location is not None and call.result_location.line == 34
    # line 44: a compact summary is not a request, and not the input either
    assert t.output == "The new test fails until the limit is enforced."  # line 60
    assert t.duration_ms == 64000.0  # 10:00:00 .. 10:01:04


def test_stream_json_array() -> None:
    _, items = read_auto(FIXTURES / "stream-json.json")
    [t] = traces(items).values()
    assert t.id == "action-run-12"  # session_id, line 5
    assert (t.cost_usd, t.duration_ms) == (0.0123, 4200.0)  # the result message, lines 72-73
    assert t.output == "Reviewed src/refund.py: refund() takes the amount only."  # line 74
    [call] = t.tool_calls
    assert (call.name, call.location.line, call.result_location.line
            if call.result_location else 0) == ("Read", 16, 39)
    # usage lines 26-31: 100 input + 10 cache creation + 40 cache read, 20 output; and
    # lines 62-66: 130 + 60 cache read, 15 output
    assert [(c.location.line, c.input_tokens, c.output_tokens) for c in t.llm_calls] == [
        (8, 150, 20), (48, 190, 15)]
    assert t.metadata["cache_read_input_tokens"] == 40 + 60
    assert t.metadata["model"] == "claude-test-model"


# ------------------------------------------------------------------ the samples
@pytest.mark.usefixtures("samples")
def test_every_sample_is_read_as_claude_code() -> None:
    inputs = sorted(p for p in DIR.iterdir() if "expected-normalized" not in p.name)
    assert len(inputs) == 8
    for path in [*inputs, STREAM]:
        name, items = read_auto(path)
        assert name == "claude_code", path
        assert traces(items), path
        if path.name not in ("letta-trajectory__cleanup.input.jsonl",
                             "claude-code-log__edge_cases.jsonl"):
            assert errors(items) == [], path


def test_tool_use_id_reused_for_another_call_is_kept_and_reported(tmp_path: Path) -> None:
    def row(kind: str, ts: str, block: dict[str, Any]) -> str:
        return json.dumps({"type": kind, "sessionId": "s1",
                           "timestamp": f"2025-01-01T10:00:{ts}.000Z",
                           "message": {"role": kind, "content": [block]}})

    def use(name: str) -> dict[str, Any]:
        return {"type": "tool_use", "id": "toolu_1", "name": name, "input": {"id": 1}}

    def result(text: str) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": "toolu_1", "content": text}

    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([
        row("assistant", "01", use("get_customer")),  # line 1
        row("user", "02", result("ok")),  # line 2: 1 s later
        row("assistant", "03", use("delete_customer")),  # line 3: the same id
        row("user", "07", result("deleted")),  # line 4: 4 s later
    ]) + "\n")
    name, items = read_auto(path)
    assert name == "claude_code"
    assert errors(items) == [("input/invalid_event", 3)]
    [t] = traces(items).values()
    assert [(c.name, c.location.line, c.result, c.latency_ms) for c in t.tool_calls] == [
        ("get_customer", 1, "ok", 1000.0), ("delete_customer", 3, "deleted", 4000.0)]


@pytest.mark.usefixtures("samples")
def test_letta_tool_call_matches_its_expected_normalization() -> None:
    _, items = read_auto(DIR / "letta-trajectory__tool-call.input.jsonl")
    [t] = traces(items).values()
    want = expected("letta-trajectory__tool-call.expected-normalized.json")["records"]
    assert t.input == want[1]["content"] == "fix the flaky retry test"
    assert t.output == want[-1]["content"] == "Patched the backoff."
    [call] = t.tool_calls
    [wcall] = want[4]["tool_calls"]
    assert (call.name, call.id, call.arguments) == (
        wcall["name"], wcall["id"], json.loads(wcall["args"]))  # Read, toolu_01A
    # line 3: tool_result with is_error true -> "ok": false in the expected record
    assert call.ok is want[5]["ok"] is False
    assert call.error == call.result == want[5]["content"] == "1\tdef retry():"
    assert (call.location.line, call.result_location.line if call.result_location else 0) == (
        2, 3)
    meta = want[0]
    assert (t.metadata["cwd"], t.metadata["git_branch"], t.metadata["model"]) == (
        meta["cwd"], meta["git_branch"], meta["model"])
    # timestamps: the call row 14:15:30.000 (line 2), its result 14:15:31.000 (line 3),
    # the session 14:15:22.394 (line 1) .. 14:15:33.000 (line 4)
    assert call.latency_ms == 1000.0
    assert t.duration_ms == 10606.0
    assert t.llm_calls == []  # these rows carry no usage


@pytest.mark.usefixtures("samples")
def test_letta_subagent_file_is_one_sidechain_trace() -> None:
    _, items = read_auto(DIR / "letta-trajectory__subagent.input.jsonl")
    [t] = traces(items).values()
    want = expected("letta-trajectory__subagent.expected-normalized.json")["records"]
    # sessionId and agentId on lines 1-2
    assert t.id == "parent-session-fixture/subagent-fixture"
    assert t.metadata["sidechain"] is True
    assert t.metadata["parent_session"] == "parent-session-fixture"
    assert (t.input, t.output) == (want[1]["content"], want[2]["content"])
    assert t.metadata["model"] == want[0]["model"] == "claude-sonnet"


@pytest.mark.usefixtures("samples")
def test_letta_cleanup_bad_line_meta_and_sidechain_rows() -> None:
    _, items = read_auto(DIR / "letta-trajectory__cleanup.input.jsonl")
    # line 1 is "not-json": a clean parse error, the rest is read
    assert errors(items) == [("input/parse_error", 1)]
    [err] = [e for e in items if isinstance(e, InputError)]
    assert err.file == "letta-trajectory__cleanup.input.jsonl"
    found = traces(items)
    main = found["letta-trajectory__cleanup.input.jsonl"]
    want = expected("letta-trajectory__cleanup.expected-normalized.json")
    # the expected normalization keeps lines 2 and 5 (and drops the meta row, line 3)
    assert main.input == want["records"][1]["content"] == "summarize the change"
    assert main.output == want["records"][2]["content"]
    assert (main.location.line, main.end_location.line) == (2, 5)
    # line 4 is a sidechain row: kept, as a trace of its own (letta drops it)
    side = found["letta-trajectory__cleanup.input.jsonl/sidechain"]
    assert side.output == "subagent transport"
    assert (side.location.line, side.metadata["sidechain"]) == (4, True)
    assert len(found) == 2


@pytest.mark.usefixtures("samples")
def test_transcripts_sample_session() -> None:
    _, items = read_auto(DIR / "claude-code-transcripts__sample_session.jsonl")
    [t] = traces(items).values()
    assert t.id == "test-session-id"  # sessionId, line 2
    assert t.input == "Create a hello world function"  # line 2
    assert t.output == "Done! The hello function is ready."  # line 8
    assert [(c.name, c.arguments, c.location.line, c.result_location.line
             if c.result_location else 0, c.result) for c in t.tool_calls] == [
        ("Write", {"file_path": "/project/hello.py",
                   "content": "def hello():\n    return 'Hello, World!'\n"}, 3, 4,
         "File written successfully"),
        ("Bash", {"command": "git add . && git commit -m 'Add hello function'",
                  "description": "Commit changes"}, 5, 6,
         "[main abc1234] Add hello function\n 1 file changed"),
    ]
    assert [c.latency_ms for c in t.tool_calls] == [5000.0, 5000.0]  # 10:00:05 -> 10:00:10
    assert not [i for i in items if isinstance(i, IgnoredEvents)]  # the summary row, line 1


@pytest.mark.usefixtures("samples")
def test_loglines_envelope() -> None:
    _, items = read_auto(DIR / "claude-code-transcripts__sample_session.loglines.json")
    [t] = traces(items).values()
    assert [c.name for c in t.tool_calls] == [
        "Write", "Bash", "TodoWrite", "Bash", "Bash", "Glob", "Edit", "Grep", "Bash", "Edit",
        "Bash", "Edit"]
    assert t.tool_calls[0].location.line == 25  # the Write tool_use block, lines 25-33
    failed = [c for c in t.tool_calls if not c.ok]
    assert [(c.id, c.location.line) for c in failed] == [("toolu_bash_004", 328)]  # l. 350
    assert failed[0].error == ("Exit code 1\n===== FAILURES =====\ntest_subtract - "
                               "AssertionError: expected 5 but got None")
    assert t.input == "Create a simple Python function to add two numbers"  # line 7
    assert t.output == "Added multiply function!"  # line 516
    # line 458: a compact summary is not a request; it is not the input either
    assert "session continuation" not in str(t.input)


@pytest.mark.usefixtures("samples")
def test_representative_messages_usage() -> None:
    _, items = read_auto(DIR / "claude-code-log__representative_messages.jsonl")
    [t] = traces(items).values()
    assert t.id == "test_session"
    assert calls(t) == [("Edit", 4), ("Bash", 8)]
    assert all(c.ok for c in t.tool_calls)  # lines 5, 9: is_error false
    # usage of the assistant rows on lines 2, 4, 6, 8, 10
    assert [(c.location.line, c.input_tokens, c.output_tokens) for c in t.llm_calls] == [
        (2, 25, 120), (4, 45, 85), (6, 78, 95), (8, 25, 35), (10, 45, 110)]
    assert all(c.model == "claude-3-sonnet-20240229" for c in t.llm_calls)
    assert t.tokens == 145 + 130 + 173 + 60 + 155
    assert t.cost is None  # session files record no cost


@pytest.mark.usefixtures("samples")
def test_todowrite_examples() -> None:
    _, items = read_auto(DIR / "claude-code-log__todowrite_examples.jsonl")
    [t] = traces(items).values()
    assert calls(t) == [("TodoWrite", 3), ("TodoWrite", 6), ("TodoWrite", 10)]
    assert t.tool_calls[1].arguments["todos"][1] == {
        "id": "2", "content": "Implement core functionality", "status": "in_progress",
        "priority": "high"}  # line 6
    assert [c.output_tokens for c in t.llm_calls] == [25, 85, 18, 85, 20, 95]


@pytest.mark.usefixtures("samples")
def test_edge_cases_are_reported_and_the_rest_is_read() -> None:
    _, items = read_auto(DIR / "claude-code-log__edge_cases.jsonl")
    assert errors(items) == [
        ("input/invalid_event", 10),  # "contenst": the message has no content
        ("input/invalid_event", 11),  # "message": "error"
        ("input/invalid_event", 13),  # "massive error"
        ("input/invalid_event", 15),  # 42
        ("input/invalid_event", 16),  # [1]
    ]
    found = traces(items)
    assert set(found) == {"edge_cases", "todowrite_session"}  # line 17: another session
    edge = found["edge_cases"]
    assert calls(edge) == [("FailingTool", 4), ("MultiEdit", 9)]
    failing, multi = edge.tool_calls
    assert (failing.ok, failing.error) == (
        False, "Error: Tool execution failed with error: Command not found")  # line 5
    assert not multi.has_result  # its result row (line 10) is the broken one
    assert calls(found["todowrite_session"]) == [("TodoWrite", 17)]
    assert found["todowrite_session"].tool_calls[0].arguments["todos"][0] == "broken_todo"
    assert [i.count for i in items if isinstance(i, IgnoredEvents)] == [1]  # line 14


@pytest.mark.usefixtures("samples")
def test_stream_json_of_claude_code_action() -> None:
    _, items = read_auto(STREAM)
    [t] = traces(items).values()
    assert t.id == "sample-session-id"  # session_id, line 5
    assert t.cost_usd == 0.0347 and t.cost == 0.0347  # line 192
    assert t.duration_ms == 18750.0  # line 193
    assert t.output == ("Successfully removed debug print statement from file and added "
                        "review comment to document the change.")  # line 194
    assert [(c.name, c.location.line, c.result_location.line if c.result_location else 0)
            for c in t.tool_calls] == [
        ("Read", 35, 59), ("Edit", 80, 106),
        ("mcp__github__add_pull_request_review_comment", 127, 157)]
    assert t.tool_calls[2].arguments["pull_number"] == 123  # line 134
    # usage lines 46-51: 100 input + 0 cache creation + 50 cache read, 75 output
    assert [(c.input_tokens, c.output_tokens) for c in t.llm_calls] == [
        (150, 75), (300, 50), (225, 80), (270, 60)]
    assert t.metadata["cache_read_input_tokens"] == 50 + 100 + 75 + 90


# ----------------------------------------------------------- behaviour (fixtures)
def test_split_rows_count_their_usage_once() -> None:
    _, items = read_auto(FIXTURES / "discount-too-high.jsonl")
    [t] = traces(items).values()
    # lines 2 and 3 are one response (msg_01CcA, req_01CcA) split in two rows
    assert [c.location.line for c in t.llm_calls] == [2, 5, 7, 9]
    assert t.llm_calls[0].input_tokens == 3 + 820 and t.llm_calls[0].output_tokens == 47
    assert calls(t) == [("authenticate_user", 3), ("get_customer", 5), ("apply_discount", 7)]
    assert t.tool_calls[2].arguments == {"customer_id": "C-56012", "percent": 50,
                                         "code": "VIPS50"}
    assert [c.latency_ms for c in t.tool_calls] == [420.0, 139.0, 205.0]
    assert t.output.startswith("I completely understand, Tom.")


def test_stream_json_split_rows_count_their_usage_once(tmp_path: Path) -> None:
    # stream-json rows write the request's id as request_id (not requestId): one response
    # split in two rows was two LLM calls, its tokens counted twice
    def row(mid: str, rid: str, block: dict[str, Any], out: int) -> dict[str, Any]:
        return {"type": "assistant", "session_id": "s1", "request_id": rid, "message": {
            "id": mid, "role": "assistant", "model": "claude-x", "content": [block],
            "usage": {"input_tokens": 10, "output_tokens": out}}}

    rows = [
        {"type": "user", "message": {"role": "user", "content": "hi"}, "session_id": "s1"},
        row("m1", "r1", {"type": "text", "text": "Let me look."}, 40),
        row("m1", "r1", {"type": "tool_use", "id": "t1", "name": "Read",
                         "input": {"file_path": "a"}}, 40),
        {"type": "user", "session_id": "s1", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}},
        row("m2", "r2", {"type": "text", "text": "Done."}, 5),
    ]
    path = tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _, items = read_auto(path)
    [t] = traces(items).values()
    # lines 2-3 are one response (m1, r1), line 5 another (m2, r2)
    assert [(c.location.line, c.input_tokens, c.output_tokens) for c in t.llm_calls] == [
        (2, 10, 40), (5, 10, 5)]
    assert t.tokens == 50 + 15


def test_stream_json_sub_agent_rows_are_a_sidechain(tmp_path: Path) -> None:
    """The regression: stream-json marks a sub-agent's rows with parent_tool_use_id (the
    Task call's id), not isSidechain, so they were read into the main trace: a sub-agent's
    authenticate_user satisfied a 'before' rule the main agent broke (exit 0), which the
    same run's session file fails."""
    def row(kind: str, task: str | None, *blocks: dict[str, Any]) -> dict[str, Any]:
        return {"type": kind, "session_id": "s1", "parent_tool_use_id": task,
                "message": {"role": kind, "content": list(blocks)}}

    def use(cid: str, name: str) -> dict[str, Any]:
        return {"type": "tool_use", "id": cid, "name": name, "input": {}}

    def done(cid: str, text: str) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": cid, "content": text}

    rows = [
        {"type": "user", "session_id": "s1", "parent_tool_use_id": None,
         "message": {"role": "user", "content": "refund order 7"}},
        row("assistant", None, use("t_task", "Task")),                          # 2
        row("user", "t_task", {"type": "text", "text": "check the customer"}),  # 3
        row("assistant", "t_task", use("t_auth", "authenticate_user")),         # 4
        row("user", "t_task", done("t_auth", "ok")),                            # 5
        row("assistant", "t_task", {"type": "text", "text": "Customer is fine."}),
        row("user", None, done("t_task", "Customer is fine.")),                 # 7
        row("assistant", None, use("t_ref", "issue_refund")),                   # 8
        row("user", None, done("t_ref", "refunded")),
        {"type": "result", "subtype": "success", "session_id": "s1", "result": "Refunded."},
    ]
    path = tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _, items = read_auto(path)
    assert errors(items) == []
    found = traces(items)
    assert sorted(found) == ["s1", "s1/t_task"]
    main, sub = found["s1"], found["s1/t_task"]
    assert calls(main) == [("Task", 2), ("issue_refund", 8)]
    assert (main.input, main.output) == ("refund order 7", "Refunded.")
    assert calls(sub) == [("authenticate_user", 4)]
    assert (sub.input, sub.output) == ("check the customer", "Customer is fine.")
    assert (sub.metadata["sidechain"], sub.metadata["parent_session"]) == (True, "s1")


def test_meta_and_summary_rows_are_not_the_request() -> None:
    _, items = read_auto(FIXTURES / "records-without-auth.jsonl")
    [t] = traces(items).values()
    # line 1 is a summary row, line 2 an isMeta /clear row: the request is on line 3
    assert t.input.startswith("Hi, what email and home address")
    assert (t.location.line, t.end_location.line) == (2, 6)


def test_stream_json_as_json_lines(tmp_path: Path) -> None:
    rows = [
        {"type": "system", "subtype": "init", "session_id": "s1", "model": "claude-x",
         "cwd": "/w", "tools": ["Bash"]},
        {"type": "user", "message": {"role": "user", "content": "list files"},
         "session_id": "s1"},
        {"type": "assistant", "session_id": "s1", "message": {
            "id": "m1", "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                         "input": {"command": "rm -rf /"}}],
            "usage": {"input_tokens": 10, "output_tokens": 5}}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": True,
             "content": "Permission denied"}]}},
        {"type": "result", "subtype": "success", "is_error": False, "session_id": "s1",
         "total_cost_usd": 0.01, "duration_ms": 1200, "num_turns": 2, "result": "done",
         "usage": {"input_tokens": 10, "cache_read_input_tokens": 4, "output_tokens": 5}},
    ]
    path = tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    name, items = read_auto(path)
    assert name == "claude_code"
    [t] = traces(items).values()
    assert (t.id, t.input, t.output, t.cost_usd, t.duration_ms, t.total_tokens) == (
        "s1", "list files", "done", 0.01, 1200.0, 19)
    [call] = t.tool_calls
    assert (call.name, call.ok, call.error, call.location.line) == (
        "Bash", False, "Permission denied", 3)
    assert t.metadata["model"] == "claude-x" and t.metadata["num_turns"] == 2


def test_agent_progress_rows_are_the_subagents_sidechain(tmp_path: Path) -> None:
    # Claude Code 2.x writes a Task sub-agent's messages into the main session as
    # 'progress' rows (data.type agent_progress, the sub-agent's row under data.message).
    # They were ignored events: a blocked tool the sub-agent used passed with exit 0.
    def progress(data: dict[str, Any]) -> dict[str, Any]:
        return {"type": "progress", "sessionId": "s1", "toolUseID": "agent_msg_1",
                "parentToolUseID": "tu_task", "timestamp": "2025-01-01T10:00:02.000Z",
                "data": data}

    rm = {"type": "tool_use", "id": "tu_rm", "name": "Bash", "input": {"command": "rm -rf /"}}
    rows = [
        {"type": "user", "sessionId": "s1", "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "sessionId": "s1", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "tu_task", "name": "Task", "input": {"prompt": "p"}}]}},
        progress({"type": "agent_progress", "agentId": "a1", "prompt": "p"}),  # its start
        progress({"type": "agent_progress", "agentId": "a1", "message": {
            "type": "assistant", "timestamp": "2025-01-01T10:00:02.000Z",
            "message": {"role": "assistant", "content": [rm]}}}),
        progress({"type": "agent_progress", "agentId": "a1", "message": {  # no type
            "timestamp": "2025-01-01T10:00:03.000Z", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "tu_rm", "content": "gone"}]}}}),
        progress({"type": "hook_progress", "hookName": "PreToolUse"}),
        progress({"type": "agent_progress", "agentId": "a1", "message": "text"}),
        {"type": "user", "sessionId": "s1", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu_task", "content": "done"}]}},
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    name, items = read_auto(path)
    assert name == "claude_code"
    found = traces(items)
    assert set(found) == {"s1", "s1/a1"}
    assert [(c.name, c.location.line, c.result) for c in found["s1"].tool_calls] == [
        ("Task", 2, "done")]  # answered at line 8
    side = found["s1/a1"]
    # line 4: the sub-agent's call; line 5 its result, 1 s later
    assert [(c.name, c.arguments, c.location.line, c.result, c.latency_ms)
            for c in side.tool_calls] == [("Bash", {"command": "rm -rf /"}, 4, "gone", 1000.0)]
    assert (side.metadata["sidechain"], side.metadata["parent_session"]) == (True, "s1")
    assert errors(items) == [("input/invalid_event", 7)]  # a message that is no row
    assert [i.count for i in items if isinstance(i, IgnoredEvents)] == [1]  # the hook row


DROP = {"type": "tool_use", "id": "toolu_drop", "name": "drop_database", "input": {}}


def _session(tmp_path: Path, row: dict[str, Any]) -> list[ReadItem]:
    """A session whose request is line 1 and ``row`` line 2, read as auto-detection does."""
    rows = [{"type": "user", "sessionId": "s1", "message": {"role": "user", "content": "go"}},
            {"sessionId": "s1", **row}]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    name, items = read_auto(path)
    assert name == "claude_code"
    return items


@pytest.mark.parametrize(("row", "said"), [
    # each of these rows' tool_use was read as nothing, and nothing said: the call
    # passed every blocklist
    ({"type": "assistant", "isApiErrorMessage": True,
      "message": {"role": "assistant", "content": [DROP]}}, []),
    ({"type": "assistant", "message": {"role": "assistant", "content": DROP}},
     [("input/invalid_event", 2)]),  # one block, not a list of blocks: read
    ({"type": "user", "message": {"role": "user", "content": [DROP]}},
     [("input/invalid_event", 2)]),  # a call in a user row: read
    ({"type": "user", "isMeta": True, "message": {"role": "user", "content": [DROP]}},
     [("input/invalid_event", 2)]),
])
def test_a_call_in_an_odd_place_is_read(tmp_path: Path, row: dict[str, Any],
                                        said: list[tuple[str, int]]) -> None:
    items = _session(tmp_path, row)
    [t] = traces(items).values()
    assert calls(t) == [("drop_database", 2)]
    assert errors(items) == said
    assert t.input == "go" and t.output is None  # an API error's text is no answer


@pytest.mark.parametrize("row", [
    {"type": "Assistant", "message": {"role": "assistant", "content": [DROP]}},
    {"type": "system", "message": {"role": "assistant", "content": [DROP]}},
    {"type": "summary", "message": {"role": "assistant", "content": [DROP]}},
    {"type": "result", "message": {"role": "assistant", "content": [DROP]}},
    {"type": "progress", "data": {"type": "hook_progress"},
     "message": {"role": "assistant", "content": [DROP]}},
    {"type": "assistant", "message": {"role": "assistant", "content": [[DROP]]}},
])
def test_a_call_that_cannot_be_read_is_said(tmp_path: Path, row: dict[str, Any]) -> None:
    items = _session(tmp_path, row)
    [t] = traces(items).values()
    assert t.tool_calls == []
    assert errors(items) == [("input/invalid_event", 2)]
