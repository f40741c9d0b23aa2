"""The Codex rollout reader (docs/formats/codex.md), read by auto-detection.

Expected values are read by hand from the fixtures (tests/fixtures/codex/) and, when they are
beside the repository, the real-world samples; each assertion cites the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FIXTURES as ALL_FIXTURES
from tests.conftest import SAMPLES as ALL_SAMPLES

from agent_eval.api import load_traces
from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import ReadItem
from agent_eval.readers.base import FileRead
from agent_eval.readers.codex import exit_code

SAMPLES = ALL_SAMPLES / "openai_responses"
FIXTURES = ALL_FIXTURES / "codex"
needs_samples = pytest.mark.usefixtures("samples")


def read_path(path: Path | str) -> list[ReadItem]:
    return list(load_traces([path]))


def split(items: list[ReadItem]) -> tuple[list[InputError], Trace]:
    errs = [i for i in items if isinstance(i, InputError)]
    [trace] = [i for i in items if isinstance(i, Trace)]
    return errs, trace


def write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
          lines: list[dict[str, Any] | str]) -> list[ReadItem]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rollout.jsonl").write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return read_path("rollout.jsonl")


def item(payload: dict[str, Any], ts: str = "2026-01-01T00:00:00.000Z") -> dict[str, Any]:
    return {"timestamp": ts, "type": "response_item", "payload": payload}


def event(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-01-01T00:00:00.000Z", "type": "event_msg", "payload": payload}


def test_a_rollout_with_every_kind_of_call() -> None:
    errs, t = split(read_path(FIXTURES / "rollout.jsonl"))
    assert errs == []
    assert t.format == "codex"
    assert t.id == "rollout-refunds-3"  # line 1, session_meta payload.id
    assert (t.metadata["cwd"], t.metadata["git_branch"]) == ("/srv/shop", "fix/refund-limit")
    # line 3 is system-injected <environment_context>: not the user's request (line 4)
    assert t.input == "enforce the refund limit"
    assert t.output == "The limit is enforced; one test still fails."  # line 15
    assert [(c.name, c.id, c.arguments) for c in t.tool_calls] == [
        ("shell", "call_1", {"command": ["grep", "-rn", "LIMIT", "src"]}),  # line 6
        ("apply_patch", "call_2", {"input": "*** Begin Patch\n*** Update File: src/refund.py"
                                            "\n*** End Patch"}),  # line 8, a custom tool
        ("shell", "call_3", {"command": ["pytest", "-q"]}),  # line 11
        ("tool_search", "call_4", {"query": "test tools"}),  # line 13
    ]
    assert [(c.location.line, c.result_location.line if c.result_location else None)
            for c in t.tool_calls] == [(6, 7), (8, 9), (11, 12), (13, 14)]
    # line 7: exit_code 0 in the output's metadata; line 12: "Exit code: 1"
    assert [(c.ok, c.error) for c in t.tool_calls] == [
        (True, None), (True, None), (False, "exit code 1"), (True, None)]
    assert t.tool_calls[3].result == [{"name": "run_tests"}]
    # timestamps: 03.000 -> 03.400, 05.000 -> 05.250, 07 -> 09, 10.000 -> 10.100
    assert [c.latency_ms for c in t.tool_calls] == [400.0, 250.0, 2000.0, 100.0]
    # line 10: token_count, last_token_usage 1400 in / 100 out; the model of line 2
    assert [(c.model, c.input_tokens, c.output_tokens, c.total_tokens, c.location.line)
            for c in t.llm_calls] == [("gpt-5.3-codex", 1400, 100, 1500, 10)]
    assert t.duration_ms == 12000.0  # 08:00:00 .. 08:00:12
    assert (t.location.line, t.end_location.line) == (1, 15)


def test_bad_first_line_duplicate_ids_and_orphan_outputs() -> None:
    errs, t = split(read_path(FIXTURES / "bad-lines.jsonl"))
    assert [(e.rule, e.line) for e in errs] == [
        ("input/parse_error", 1),  # "not-json"
        ("input/invalid_event", 4),  # call_DUP again, other arguments: a call of its own
        ("input/unmatched_result", 7),  # a third output for call_DUP
        ("input/unmatched_result", 8),  # an output for call id "nowhere"
    ]
    assert errs[1].message == (
        "call id 'call_DUP' reused for a different call (name/arguments differ from the "
        "'exec_command' call at line 3); it is read as a call of its own; give each call "
        "its own id")
    assert t.input == "show both configs"  # line 2
    assert t.output == "Shown both."  # line 9
    # lines 3 and 4: two function_call rows with the same call_id but different arguments;
    # the outputs (lines 5, 6) go to them in order
    first, second = t.tool_calls
    assert (first.name, first.arguments, first.result, first.location.line) == (
        "exec_command", {"cmd": "cat a.toml"}, "a = 1", 3)
    assert (second.arguments, second.arguments_error, second.result) == (
        "not-json", "a string that is not valid JSON", "b = 2")


@needs_samples
def test_tool_calls_sample() -> None:
    errs, t = split(read_path(SAMPLES / "codex-rollout__tool-calls.input.jsonl"))
    assert errs == []
    assert t.format == "codex"
    assert t.id == "s1"  # line 1, session_meta payload.id
    assert t.metadata["cwd"] == "/workspace/project" and \
        t.metadata["git_branch"] == "feature/retry"
    # line 3 is system-injected <environment_context>: not the user's request (line 4)
    assert t.input == "create one focused commit"
    assert t.output == "Created one focused commit."  # line 12
    assert [(c.name, c.id, c.arguments) for c in t.tool_calls] == [
        ("update_plan", "call_A", {"explanation": "review and commit"}),  # line 6
        ("apply_patch", "call_B", {"input": "*** Begin Patch\n*** End Patch"}),  # line 8
        ("tool_search", "call_C", {"query": "filesystem tools"}),  # line 10
    ]
    assert [(c.location.line, c.result_location.line if c.result_location else None)
            for c in t.tool_calls] == [(6, 7), (8, 9), (10, 11)]
    assert [c.result for c in t.tool_calls] == ["Plan updated", "Done", [{"name": "read_file"}]]
    # timestamps: 05:38:50.441 -> .585, 05:39:00.000 -> .100, 05:39:30.000 -> .100
    assert [c.latency_ms for c in t.tool_calls] == [144.0, 100.0, 100.0]
    assert all(c.ok for c in t.tool_calls)
    assert t.llm_calls == []  # no token_count event in this rollout
    assert t.duration_ms == 128568.0  # 05:38:34.432 .. 05:40:43.000
    assert (t.location.line, t.end_location.line) == (1, 12)


@needs_samples
def test_cleanup_sample_bad_first_line_and_the_rest_is_read() -> None:
    errs, t = split(read_path(SAMPLES / "codex-rollout__cleanup.input.jsonl"))
    assert [(e.rule, e.line) for e in errs] == [
        ("input/parse_error", 1),  # "not-json"
        ("input/invalid_event", 4),  # call_DUP again, other arguments: a call of its own
        ("input/unmatched_result", 7),  # a third output for call_DUP ("duplicate")
        ("input/unmatched_result", 8),  # an output for call id "missing"
    ]
    assert all(e.file.endswith("codex-rollout__cleanup.input.jsonl") for e in errs)
    assert t.input == "inspect both files"  # line 2
    assert t.output == "Inspected both files."  # line 9
    # lines 3 and 4: two function_call rows with the same call_id but different arguments
    first, second = t.tool_calls
    assert (first.name, first.arguments, first.result, first.location.line) == (
        "exec_command", {"cmd": "cat a.txt"}, "alpha", 3)  # result: line 5
    assert (second.arguments, second.arguments_error, second.result) == (
        "not-json", "a string that is not valid JSON", "beta")  # result: line 6


def test_token_counts_are_llm_calls_and_repeats_are_dropped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def tokens(total: int, last_in: int, last_out: int) -> dict[str, Any]:
        return event({"type": "token_count", "info": {
            "total_token_usage": {"total_tokens": total},
            "last_token_usage": {"input_tokens": last_in, "cached_input_tokens": 0,
                                 "output_tokens": last_out, "reasoning_output_tokens": 0,
                                 "total_tokens": last_in + last_out}}})
    errs, t = split(write(tmp_path, monkeypatch, [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "turn_context",
         "payload": {"model": "gpt-5-codex"}},
        event({"type": "token_count", "info": None}),
        tokens(120, 100, 20),
        tokens(120, 100, 20),  # the same totals again
        tokens(200, 70, 10),
    ]))
    assert errs == []
    assert [(c.model, c.input_tokens, c.output_tokens, c.total_tokens, c.location.line)
            for c in t.llm_calls] == [("gpt-5-codex", 100, 20, 120, 3),
                                      ("gpt-5-codex", 70, 10, 80, 5)]
    assert t.cost is None  # a rollout records no cost


def test_failed_commands_are_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def call(cid: str, cmd: str) -> dict[str, Any]:
        return item({"type": "function_call", "name": "shell", "call_id": cid,
                     "arguments": json.dumps({"command": ["bash", "-lc", cmd]})})

    def out(cid: str, output: str) -> dict[str, Any]:
        return item({"type": "function_call_output", "call_id": cid, "output": output})
    errs, t = split(write(tmp_path, monkeypatch, [
        call("c1", "ls"),
        out("c1", json.dumps({"output": "a\n", "metadata": {"exit_code": 0}})),
        call("c2", "false"),
        out("c2", json.dumps({"output": "", "metadata": {"exit_code": 1,
                                                         "duration_seconds": 0.1}})),
        call("c3", "make"),
        out("c3", "Exit code: 2\nWall time: 1.2 seconds\nOutput:\nmake: *** Error 2"),
        call("c4", "pytest"),
        out("c4", "ran"),
        event({"type": "exec_command_end", "call_id": "c4", "exit_code": 5}),
    ]))
    assert errs == []
    assert [(c.ok, c.error) for c in t.tool_calls] == [
        (True, None), (False, "exit code 1"), (False, "exit code 2"), (False, "exit code 5")]


def test_an_output_with_status_failed_is_a_failed_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The regression: a rollout's output item with status failed (an apply_patch that
    did not apply) was read as a success, as a Responses API body's no longer was: the
    rollout's outputs were read apart from the Responses items' reading."""
    errs, t = split(write(tmp_path, monkeypatch, [
        item({"type": "apply_patch_call", "call_id": "p1", "status": "completed",
              "operation": {"type": "update_file", "path": "a.py", "diff": "-a\n+b"}}),
        item({"type": "apply_patch_call_output", "call_id": "p1", "status": "failed",
              "output": "patch did not apply"}),
        item({"type": "apply_patch_call", "call_id": "p2", "status": "completed",
              "operation": {"type": "update_file", "path": "b.py", "diff": "-a\n+b"}}),
        item({"type": "apply_patch_call_output", "call_id": "p2", "status": "completed",
              "output": "Done"}),
    ]))
    assert errs == []
    assert [(c.id, c.ok, c.error, c.result) for c in t.tool_calls] == [
        ("p1", False, "status failed", "patch did not apply"), ("p2", True, None, "Done")]


def test_older_rollouts_without_envelopes(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    errs, t = split(write(tmp_path, monkeypatch, [
        {"id": "sess-old", "timestamp": "2025-05-01T00:00:00Z", "instructions": None},
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "fix the test"}]},
        {"record_type": "state"},
        {"type": "function_call", "name": "shell", "call_id": "c1",
         "arguments": '{"command": ["ls"]}'},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        {"type": "something_new"},
    ]))
    assert errs == []
    assert (t.id, t.input) == ("sess-old", "fix the test")
    assert [(c.name, c.arguments, c.result) for c in t.tool_calls] == [
        ("shell", {"command": ["ls"]}, "ok")]


def test_exit_code_parsing() -> None:
    assert exit_code('{"output": "x", "metadata": {"exit_code": 3}}') == 3
    assert exit_code("Chunk ID: 1\nWall time: 0.1\nProcess exited with code 0\nOutput:") == 0
    assert exit_code("Exit code: 1\n") == 1
    assert exit_code("plain text") is None
    assert exit_code(None) is None


def test_an_empty_file_is_an_input_error_not_a_pass(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rollout.jsonl").write_text("\n")
    items = load_traces(["rollout.jsonl"], format="codex")
    [err] = [x for x in items if not isinstance(x, FileRead)]
    assert isinstance(err, InputError) and err.rule == "input/invalid_event"
