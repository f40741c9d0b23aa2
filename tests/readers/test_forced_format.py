"""``format: NAME`` forced on a file of another format (docs/formats.md): the reader
reads what it understands, and a file in which it finds nothing of its format, or a call
it cannot read, is an input error, never a clean read that leaves the file's calls out
(spec: no silent pass)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import FIXTURES

from agent_eval.api import load_traces
from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import READERS
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
                       f"a content part or item of type 'tool_use' is not {what}: the call "
                       "or result in it cannot be read; is the file another format "
                       "(format: auto picks the reader by content)?")]
    assert calls == []


def _fixtures_with_calls() -> list[tuple[Path, list[str]]]:
    """Each reader's hand-made fixtures (tests/fixtures/<reader>/) that hold tool calls,
    with the names of those calls as the reader of the format reads them."""
    out = []
    for path in sorted(FIXTURES.glob("*/*")):
        if (path.parent.name not in READERS or not path.is_file()
                or path.name.endswith((".native.jsonl", ".stderr.txt"))):
            continue
        own = load_traces([path], format=path.parent.name)
        names = sorted({c.name for t in own if isinstance(t, Trace) for c in t.tool_calls})
        if names:
            out.append((path, names))
    return out


FIXTURE_CALLS = _fixtures_with_calls()


def test_the_matrix_has_every_format() -> None:
    # every reader but the native one has a fixture with calls (the native fixtures are
    # read as native by every format's convert golden)
    assert {p.parent.name for p, _ in FIXTURE_CALLS} >= set(READERS) - {"native"}


@pytest.mark.parametrize("fmt", sorted(READERS))
def test_a_reader_forced_on_another_formats_fixture_never_leaves_its_calls_out(
        fmt: str) -> None:
    # Found forcing each reader on each other format's fixtures: 21 of them read the file
    # with no input error and without some of its calls (the Anthropic reader on Chat
    # Completions requests, the Gemini CLI reader on message lists, ...): exit 0.
    silent = []
    for path, names in FIXTURE_CALLS:
        if path.parent.name == fmt:
            continue
        items = [i for i in load_traces([path], format=fmt) if not isinstance(i, FileRead)]
        if any(isinstance(i, InputError) for i in items):
            continue  # said: the run is not a pass
        got = {c.name for t in items if isinstance(t, Trace) for c in t.tool_calls}
        if not set(names) <= got:
            silent.append((str(path.relative_to(FIXTURES)), sorted(set(names) - got)))
    assert silent == []
