"""``agent-eval convert``: canonical traces printed as native JSONL. Every reader's fixture
against its golden output, and the output read back into the same traces, are in
tests/readers/test_fixtures.py; this file checks the command itself."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FIXTURES, ROOT

from agent_eval._cli import main
from agent_eval.api import load_traces
from agent_eval.convert import trace_events
from agent_eval.model import Trace

BAD_LINES = FIXTURES / "codex" / "bad-lines.jsonl"


def traces(path: Path | str, fmt: str = "auto") -> list[Trace]:
    return [i for i in load_traces([path], format=fmt) if isinstance(i, Trace)]


def convert(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]],
                                                                      str]:
    code = main(["convert", *args])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def test_every_line_points_into_the_original_file(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    rel = "tests/fixtures/otlp/customer-service.jsonl"
    code, events, _ = convert(capsys, rel, "--format", "otlp", "--quiet")
    assert code == 0
    calls = [(e["tool"], e["source"]) for e in events if e["type"] == "tool_call"]
    # trace 4bf92f... has spans on lines 1 and 3, trace 0af765... on line 2
    assert calls == [(f"{n}", f"{rel}:{line}") for n, line in [
        ("authenticate_user", 1), ("get_customer", 1), ("apply_discount", 3),
        ("get_customer", 2)]]
    starts = [e for e in events if e["type"] == "trace_start"]
    assert [s["metadata"]["source_format"] for s in starts] == ["otlp", "otlp"]
    llm = next(e for e in events if e["type"] == "llm_call")
    assert llm == {"type": "llm_call", "model": "gpt-4o-mini-2024-07-18", "input_tokens": 823,
                   "output_tokens": 47, "total_tokens": 870, "cost_usd": 0.000152,
                   "latency_ms": 561.0, "source": f"{rel}:1"}


def test_input_errors_go_to_stderr_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.jsonl"
    code = main(["convert", str(BAD_LINES), "-o", str(out)])
    _, err = capsys.readouterr()
    assert code == 2
    assert "codex/bad-lines.jsonl:1: line is not valid JSON" in err
    assert "[input/parse_error]" in err
    events = [json.loads(x) for x in out.read_text().splitlines()]  # the rest was read
    assert [e["arguments"] for e in events if e["type"] == "tool_call"] == [
        {"cmd": "cat a.toml"}, "not-json"]
    back = traces(out, "native")
    assert [c.arguments_error for c in back[0].tool_calls] == [
        None, "a string that is not valid JSON"]


def test_bad_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    path = "tests/fixtures/openai_chat/discount-too-high.json"
    assert main(["convert", path, "--format", "nope"]) == 2
    assert "unknown trace format 'nope'" in capsys.readouterr().err
    assert main(["convert", path, "--to", "otlp"]) == 2
    assert "only target is native" in capsys.readouterr().err
    assert main(["convert", "no/such/file.json"]) == 2
    assert "no trace file matches" in capsys.readouterr().err


def test_unrecognised_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.json").write_text('{"hello": "world"}')
    assert main(["convert", "x.json"]) == 2
    assert "[input/unknown_format]" in capsys.readouterr().err


def test_trace_events_merge_calls_by_line() -> None:
    [t] = traces(FIXTURES / "openai_responses" / "discount-too-high.jsonl")
    kinds = [(e["type"], e["source"].rsplit(":", 1)[1]) for e in trace_events(t)]
    assert kinds == [("trace_start", "1"),
                     ("tool_call", "2"), ("tool_result", "3"),
                     ("tool_call", "2"), ("tool_result", "3"),
                     ("tool_call", "2"), ("tool_result", "3"),
                     ("llm_call", "2"), ("llm_call", "4"),
                     ("output", "4"), ("trace_end", "4")]


def test_a_file_that_is_not_read_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    # "error: a FIFO (named pipe), not a regular file; ..." said which of the files given?
    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "a.jsonl")
    (tmp_path / "b.jsonl").write_text('{"type":"tool_call","tool":"x"}\n')
    assert main(["convert", "-q", "a.jsonl", "b.jsonl", "nothing*.jsonl"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "error: a.jsonl: a FIFO (named pipe), not a regular file; a trace glob reads regular "
        "files only: it was not read",
        "error: no trace file matches 'nothing*.jsonl' (relative to .); check the path or "
        "glob"]  # (it said "pass --traces", an option convert does not have)


def test_a_path_with_a_line_break_is_said_on_one_escaped_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The error named the path as given: `convert $'a\\n::error::b'` printed a line
    starting `::error::b`, a workflow command of the job (run's report escaped it)."""
    monkeypatch.chdir(tmp_path)
    assert main(["convert", "-q", "a\n::error::b"]) == 2
    assert capsys.readouterr().err == (
        "error: a\\n::error::b: a trace path or glob holds control characters or bytes that "
        "are not UTF-8; rename the files\n")


def test_an_unknown_format_or_target_is_said_on_one_escaped_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`--format`/`--to` were echoed as given, line breaks and ESC sequences too."""
    assert main(["convert", "--format", "x\n::error::y", "a.jsonl"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown trace format 'x\\x0a::error::y'; use auto or one of ")
    assert err.count("\n") == 1
    assert main(["convert", "--to", "\x1b[2Jx\n::error::y", "a.jsonl"]) == 2
    assert capsys.readouterr().err == ("error: cannot convert to '\\x1b[2Jx\\x0a::error::y'; "
                                       "the only target is native\n")
