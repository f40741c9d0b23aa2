"""Trace text made safe to show (docs/security.md): control characters escaped, long
names and values cut with a visible marker, for traces and for results files."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from tests.conftest import read_results

from agent_eval._cli import main
from agent_eval.limits import Limits
from agent_eval.matching import normalize_name
from agent_eval.model import Handoff, Location, ToolCall, Trace
from agent_eval.safetext import (
    clean_name,
    clean_text,
    clean_tool_name,
    clean_trace,
    clean_value,
    cut,
    log_block,
    one_line,
)

CONTROLS = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))]


def has_control(text: str, keep: str = "") -> bool:
    return any(c in CONTROLS and c not in keep for c in text)


@given(st.text())
def test_names_have_no_control_character_left(text: str) -> None:
    out = clean_name(text, 50)
    assert not has_control(out)
    assert len(out) <= 50 + len("…[+ chars]") + 12
    if text.isprintable() and len(text) <= 50:
        assert out == text


@given(st.text(), st.integers(1, 40))
def test_cutting_is_idempotent_and_says_how_much(text: str, limit: int) -> None:
    once = cut(text, limit)
    assert cut(once, limit) == once
    if len(text) > limit:
        assert once == f"{text[:limit]}…[+{len(text) - limit} chars]"


def test_bidi_overrides_are_escaped_and_marks_kept() -> None:
    """The embeddings, overrides and isolates reorder what a reader sees: escaped in
    names, text and lines alike; a right-to-left mark (U+200F) reorders nothing."""
    text = "a\u202eb\u2066c\u2069d\u200fe"
    escaped = "a\\u202eb\\u2066c\\u2069d\u200fe"
    assert clean_name(text) == escaped
    assert clean_text(text) == escaped
    assert one_line(text) == escaped
    assert clean_name(escaped) == escaped  # once is enough


def test_text_keeps_tabs_and_line_breaks() -> None:
    assert clean_text("a\tb\nc\x1b[31m\x9b\x00") == "a\tb\nc\\x1b[31m\\x9b\\x00"


@given(st.text())
def test_one_line_leaves_no_control_character_but_tabs(text: str) -> None:
    line = one_line(text)
    assert not has_control(line, "\t")
    assert one_line(line) == line


def test_one_line_keeps_only_the_consoles_own_colour_codes() -> None:
    assert one_line("a\n::error::b\r") == "a\\x0a::error::b\\x0d"
    painted = "\x1b[31m❌ FAIL: t\x1b[2J\n::x\x1b[0m  (1)\t"
    assert one_line(painted, colour=True) == "\x1b[31m❌ FAIL: t\\x1b[2J\\x0a::x\x1b[0m  (1)\t"
    assert one_line(painted) == "\\x1b[31m❌ FAIL: t\\x1b[2J\\x0a::x\\x1b[0m  (1)\t"


def test_one_line_is_one_line_for_every_reader_of_lines() -> None:
    """U+2028 and U+2029 are line breaks to str.splitlines, YAML and some log viewers: a
    line holding one was two (an imported suite's comment, a note in the log)."""
    text = "a\u2028b\u2029c\x85d"
    assert one_line(text) == "a\\u2028b\\u2029c\\x85d"
    assert len(one_line(text).splitlines()) == 1


def test_a_long_log_block_keeps_its_start_and_its_end() -> None:
    """A traceback is cut in its middle: its end says where the error was raised and what
    it was (cut to its first 20,000 characters, a deep traceback of an internal error kept
    its outermost frames only, not the line raising it nor the exception)."""
    frames = "".join(f'  File "x.py", line {n}, in f\n' for n in range(2000))
    text = f"Traceback (most recent call last):\n{frames}ValueError: the bug\n::error::x"
    shown = log_block(text, 2000).split("\n")
    assert shown[0] == "  | Traceback (most recent call last):"
    assert shown[-2:] == ["  | ValueError: the bug", "  | ::error::x"]
    assert shown[-3] == '  |   File "x.py", line 1999, in f'
    cut_at = [line for line in shown if "chars]" in line]
    assert cut_at == [f"  | …[+{len(text) - 2000} chars]…"]
    # the 500 first characters and the 1,500 last, each line behind its bar
    assert "".join(line[4:] + "\n" for line in shown if line not in cut_at) \
        == text[:500] + "\n" + text[-1500:] + "\n"
    assert log_block("a\nb") == "  | a\n  | b"  # a short one as it is


def test_values_are_cleaned_and_bounded() -> None:
    limits = Limits(max_value_chars=20)
    assert clean_value({"k\x1b": ["\x07"]}, Limits(max_value_chars=40)) == {
        "k\\x1b": ["\\x07"]}
    assert clean_value(list(range(100)), limits) == "[0,1,2,3,4,5,6,7,8,9…[+271 chars]"
    assert clean_value(5, limits) == 5 and clean_value(None, limits) is None


def test_a_trace_is_cleaned_in_place() -> None:
    loc = Location("t.jsonl", 1)
    trace = Trace("id\x1b[2J", "t.jsonl", loc, loc, scenario="s" * 30,
                  tool_calls=[ToolCall("ok", {}, loc), ToolCall("x\n" + "y" * 30, {}, loc),
                              ToolCall("x\x1b" + "y" * 30, {}, loc)])
    clean_trace(trace, Limits(max_name_chars=10))
    assert trace.id == "id\\x1b[2J"
    assert trace.scenario == "s" * 10 + "…[+20 chars]"
    assert [c.name for c in trace.tool_calls] == [
        "ok", "x yyyyyyyy…[+22 chars]", "x\\x1byyyyy…[+25 chars]"]


def test_a_tool_names_whitespace_controls_are_spaces_so_rules_still_match_it() -> None:
    """A tab or line break in a tool name is a separator of its normal form (docs/config.md
    "Tool names"); written as ``\\x0a`` it hid ``delete_file\\n`` from every rule naming
    ``delete_file``. The other control characters are escaped as in any name."""
    loc = Location("t.jsonl", 1)
    trace = Trace("t", "t.jsonl", loc, loc, tool_calls=[
        ToolCall("delete_file\n", {}, loc), ToolCall("Delete\tFile", {}, loc),
        ToolCall("delete\r\nfile\x85", {}, loc), ToolCall("rm\x1b[2J", {}, loc)],
        handoffs=[Handoff("billing\x0bagent", loc, "triage\x1c")])
    clean_trace(trace, Limits())
    assert [c.name for c in trace.tool_calls] == [
        "delete_file ", "Delete File", "delete  file ", "rm\\x1b[2J"]
    assert [normalize_name(c.name) for c in trace.tool_calls[:3]] == ["delete_file"] * 3
    assert (trace.handoffs[0].to_agent, trace.handoffs[0].from_agent) == (
        "billing agent", "triage ")
    assert clean_tool_name("x\ty" + "z" * 20, 5) == "x yzz…[+18 chars]"


@given(st.text())
def test_tool_names_have_no_control_character_left_and_keep_their_normal_form(
        text: str) -> None:
    out = clean_tool_name(text, 10_000)
    assert not has_control(out)
    if not any(c in CONTROLS and not c.isspace() for c in text):
        assert normalize_name(out) == normalize_name(text)


def test_a_blocked_tool_with_a_line_break_in_its_name_fails_the_run(
        tmp_path: Path, capsys: object) -> None:
    (tmp_path / "agent-eval.yaml").write_text(
        "suite: s\ntraces: t.jsonl\ntests:\n"
        "  - {id: bl, metric: tool_blocklist, blocklist: [delete_file]}\n"
        "scenarios:\n  - {id: S, traces: t.jsonl, expect: {forbidden_tools: [edit_file]}}\n",
        encoding="utf-8")
    (tmp_path / "t.jsonl").write_text(
        json.dumps({"type": "tool_call", "tool": "delete_file\n", "arguments": {}}) + "\n"
        + json.dumps({"type": "tool_call", "tool": "Edit\tFile", "arguments": {}}) + "\n",
        encoding="utf-8")
    code = main(["run", "-c", str(tmp_path / "agent-eval.yaml"), "-o", str(tmp_path / "out"),
                 "-q"])
    assert code == 1
    data = read_results(tmp_path / "out")
    assert [v["tool"] for v in data["tests"][0]["violations"]] == ["delete_file "]
    assert [f["rule"] for f in data["scenarios"][0]["findings"]] == ["scenario/forbidden_tools"]


def test_a_tool_name_longer_than_the_limit_is_an_input_error_not_a_silent_pass(
        tmp_path: Path, capsys: object) -> None:
    """The rules see a long name cut at limits.max_name_chars: a blocklist entry for its
    end (``*delete*``) could not judge it, so the run must not pass (docs/security.md
    "Limits": hitting a limit is an input error at its line)."""
    (tmp_path / "agent-eval.yaml").write_text(
        'suite: s\ntraces: t.jsonl\ntests:\n'
        '  - {id: bl, metric: tool_blocklist, blocklist: ["*delete*"]}\n', encoding="utf-8")
    long_name = "mcp__" + "a" * 260 + "__delete_all"  # 277 characters, delete after 256
    (tmp_path / "t.jsonl").write_text(
        json.dumps({"type": "tool_call", "tool": "read_file", "arguments": {}}) + "\n"
        + json.dumps({"type": "tool_call", "tool": long_name, "arguments": {}}) + "\n"
        + json.dumps({"type": "tool_call", "tool": "x" * 256, "arguments": {}}) + "\n",
        encoding="utf-8")
    code = main(["run", "-c", str(tmp_path / "agent-eval.yaml"), "-o", str(tmp_path / "out"),
                 "-q"])
    assert code == 2
    data = read_results(tmp_path / "out")
    assert data["verdict"] == "error"
    assert [(e["rule"], e["file"], e["line"]) for e in data["input_errors"]] == [
        ("input/limit_exceeded", "t.jsonl", 2)]
    assert "277 characters" in data["input_errors"][0]["message"]
    assert "limits.max_name_chars (256)" in data["input_errors"][0]["message"]


def test_a_results_file_from_anyone_is_shown_clean(tmp_path: Path, capsys: object) -> None:
    """`report` (and --baseline, diff, merge) read results files through the same
    cleaning as `run`: a baseline artifact cannot put escapes on the console."""
    import pytest

    assert isinstance(capsys, pytest.CaptureFixture)
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\ntraces: t.jsonl\ntests:\n  - id: b\n    metric: '
        "tool_blocklist\n    blocklist: [x*]\n")
    (tmp_path / "t.jsonl").write_text('{"type":"tool_call","tool":"xx","arguments":{}}\n')
    assert main(["run", "-q", "--config", str(tmp_path / "agent-eval.yaml"),
                 "-o", str(tmp_path / "out")]) == 1
    data = read_results(tmp_path / "out")
    v = data["tests"][0]["violations"][0]
    v["tool"] = "x\x1b]0;owned\x07" + "z" * 5000
    v["message"] = "Blocked \x1b[2J"
    v["trace"]["trace_id"] = "\x9b31m"
    data["input_errors"] = [{"rule": "input/parse_error", "file": "t\x1b.jsonl", "line": 1,
                             "message": "bad \x1b[1m"}]
    (tmp_path / "evil.json").write_text(json.dumps(data))
    capsys.readouterr()
    for fmt in ("console", "markdown", "json", "html", "sarif", "junit"):
        main(["report", str(tmp_path / "evil.json"), "--format", fmt, "--root", str(tmp_path)])
        out = capsys.readouterr().out
        assert not has_control(out, "\n\t\r"), fmt
        assert "z" * 300 not in out, fmt
