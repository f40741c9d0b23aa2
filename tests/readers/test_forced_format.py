"""``format: NAME`` forced on a file of another format (docs/formats.md): the reader
reads what it understands, and a file in which it finds nothing of its format, or a call
it cannot read, is an input error, never a clean read that leaves the file's calls out
(spec: no silent pass)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_eval.api import load_traces
from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers.base import FileRead

# A Chat Completions response asking for a call
CHAT = {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o", "choices": [
    {"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "delete_customer", "arguments": "{}"}}]}}]}
# An Anthropic response asking for one
ANTHROPIC = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
             "stop_reason": "tool_use", "content": [
                 {"type": "text", "text": "Deleting."},
                 {"type": "tool_use", "id": "tu_1", "name": "delete_customer", "input": {}}]}


def _read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doc: object, fmt: str,
          name: str) -> tuple[list[tuple[str, int, str]], list[str]]:
    monkeypatch.chdir(tmp_path)
    Path(name).write_text(json.dumps(doc) + "\n", encoding="utf-8")
    items = [i for i in load_traces([name], format=fmt) if not isinstance(i, FileRead)]
    return ([(e.rule, e.line, e.message) for e in items if isinstance(e, InputError)],
            [c.name for t in items if isinstance(t, Trace) for c in t.tool_calls])


@pytest.mark.parametrize(("fmt", "doc", "name", "message"), [
    # each made a trace of nothing from any JSON object (exit 0)
    ("vercel_ai", CHAT, "t.json", "no span in this file"),
    ("langsmith", CHAT, "t.json",
     "no LangSmith run in this file (objects with an id and a run_type)"),
    ("codex", CHAT, "t.jsonl",
     "no Codex rollout line in this file (lines of type session_meta / response_item / "
     "event_msg / turn_context with a 'payload', or the items of an older rollout); is it "
     "another format?"),
])
def test_a_reader_that_finds_nothing_of_its_format_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, doc: object, name: str,
        message: str) -> None:
    errors, calls = _read(tmp_path, monkeypatch, doc, fmt, name)
    assert errors == [("input/invalid_event", 1, message)]
    assert calls == []


@pytest.mark.parametrize(("fmt", "what"), [("openai_chat", "Chat Completions"),
                                           ("openai_responses", "a Responses API item")])
def test_an_openai_reader_on_a_message_with_another_formats_call_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, what: str) -> None:
    # the Anthropic message was read as an assistant message with text: its tool_use
    # block was passed over (exit 0)
    errors, calls = _read(tmp_path, monkeypatch, ANTHROPIC, fmt, "t.json")
    assert errors == [("input/invalid_event", 1,
                       f"a message content part of type 'tool_use' is not {what}: the call "
                       "or result in it cannot be read; is the file another format "
                       "(format: auto picks the reader by content)?")]
    assert calls == []
