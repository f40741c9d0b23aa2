"""Format detection (``format: auto``): the reader picked for a file is the first in the
registry whose sniff accepts the file's head, computed here the slow way (each sniff on
its own, nothing shared between them) for every fixture, example and real-world sample;
and the native sniff, which every other reader's sniff asks, runs once per file."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import EXAMPLE, FIXTURES, O_BINARY, SAMPLES, shared_path

from agent_eval.errors import InputError
from agent_eval.limits import DEFAULT
from agent_eval.readers import (
    _FOR_NATIVE,
    READERS,
    SNIFF_BYTES,
    SNIFFS_NATIVE,
    SourceFile,
    _foreign,
    pick_reader,
    read_file,
)
from agent_eval.readers.native import EVENT_TYPES, NativeReader


def _source(path: Path) -> SourceFile:
    return SourceFile(str(path), path.name, path.name, DEFAULT)


def _slow_pick(source: SourceFile) -> str:
    """The first reader whose sniff accepts the head, each sniff run afresh."""
    with open(source.path, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
    for reader in READERS.values():
        _foreign._last_native = (b"", "", False)  # nothing kept from the sniff before
        if reader.sniff(bytes(bytearray(head)), source):  # a new bytes object each time
            return reader.name
    return "input/unknown_format"


def _picked(source: SourceFile) -> str:
    got = pick_reader(source, "auto")
    return got.rule if isinstance(got, InputError) else got.name


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_every_fixture_and_example_is_detected_as_by_each_sniff_alone() -> None:
    files = _files(FIXTURES) + _files(EXAMPLE / "traces")
    assert len(files) > 150
    picked = {p: _picked(_source(p)) for p in files}
    assert picked == {p: _slow_pick(_source(p)) for p in files}
    assert len(set(picked.values())) > 15  # every format is among them


def test_every_real_world_sample_is_detected_as_by_each_sniff_alone() -> None:
    root = shared_path("samples", "traces")
    assert root == SAMPLES
    files = _files(root)
    assert {p: _picked(_source(p)) for p in files} == {p: _slow_pick(_source(p)) for p in files}


@pytest.mark.parametrize(("fixture", "times"), [("openai_chat/discount-too-high.json", 0),
                                                ("claude_code/discount-too-high.jsonl", 1),
                                                ("native/interleaved.jsonl", 1),
                                                ("native/events.json", 1)])
def test_the_native_sniff_runs_at_most_once_per_file(fixture: str, times: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Once, or not at all when the head holds no native event type in quotes."""
    calls: list[str] = []
    sniff = NativeReader.sniff

    def counting(self: NativeReader, head: bytes, source: SourceFile) -> bool:
        calls.append(source.path)
        return sniff(self, head, source)

    monkeypatch.setattr(NativeReader, "sniff", counting)
    path = FIXTURES / fixture
    assert path.is_file()
    expected = fixture.split("/", 1)[0]
    assert _picked(_source(path)) == expected
    assert calls == [str(path)] * times
    assert _picked(_source(path)) == expected  # a new head read: asked again
    assert calls == [str(path)] * times * 2


EVENT = st.fixed_dictionaries({"type": st.sampled_from(EVENT_TYPES)})
JSON = st.recursive(
    st.none() | st.sampled_from([*EVENT_TYPES, "tool_calls", "x", "ü"]) | EVENT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "events", "tool", "k"]), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(EVENT | st.lists(EVENT, max_size=3) | JSON, st.booleans(),
       st.integers(min_value=0, max_value=400),
       st.sampled_from([".json", ".jsonl"]), st.booleans())
def test_the_quick_native_check_never_rejects_a_native_head(
        doc: object, escape: bool, cut: int, suffix: str, lines: bool) -> None:
    """When the quick check says no, the native sniff says no: with event types written
    with escapes, in lines, cut anywhere."""
    text = json.dumps(doc, ensure_ascii=escape)
    if lines and isinstance(doc, list):
        text = "\n".join(json.dumps(x, ensure_ascii=escape) for x in doc)
    if escape:
        text = text.replace("_", "\\u005f")
    head = text.encode()[:cut]
    source = SourceFile(f"t{suffix}", f"t{suffix}", f"t{suffix}", DEFAULT)
    if not _foreign._may_be_native(head):
        assert not NativeReader().sniff(head, source)
    # the lines it parses (those holding a native name in quotes, or any line of a head
    # holding an escape) give the answer of parsing every line
    assert NativeReader().sniff(head, source) == _native_before(head, source)
    joined = "\n".join([text, '{"x": 1}', text[:cut], "  " + text, '{"type": "user"}', text])
    for head in (joined.encode(), joined.encode()[:cut * 3]):
        assert NativeReader().sniff(head, source) == _native_before(head, source)



# Texts made of the pieces the sniffs look for, cut and joined anywhere: the quick checks
# put before the sniffs' patterns (a literal the pattern cannot match without) never
# change an answer. The sniffs as they were written before those checks are the oracle.
_PIECES = [
    '"type": "session_meta", "payload": 1',
    '"object": "trace.span", "span_data": 1', '"messages": [{"role": "tool"}]',
    '"eval": {"task": 1}, "samples"', '"lc": 1, "type": "constructor", "id": ["langchain"]',
    '"$schemaVersion": 1, "generated_items": 2', '"type": "function_call_output"',
    '"eval": {', '"task":', '"samples"', '{"version": 2, "status":', '"lc": 1',
    '"type": "constructor"', 'langchain', '"type": "ai"', '"data": {', '"type": "session_meta"',
    '"payload":', '"$schemaVersion":', '"generated_items":', '"object": "trace.span"',
    '"span_data":', '"object": "response"', '"object": "chat.completion"',
    '"previous_response_id":', '"type": "output_text"', '"type": "mcp_call"',
    '{"id": 1, "timestamp": 2, "git": 3}', '"payload"', '"chat.completion', '"lc"',
    '\ninteractions:\n uri: x/chat/completions', '"traceID": 1, "spans": [], "tags": 1',
    '"run_type": "llm", "trace_id": 1', '{"role": "system", "x": 1}', '{"llm.model_name": 1',
    '"resource_spans":', '"resourceSpans" :', '"scopeSpans":', '["client.beta.sessions.x"',
    '"traceID":', '"spans":', '"tags":', '"gen_ai.system":', '"llm.model_name":',
    '"openinference.span.kind":', '"messages": [', '{"role":', '"run_type": "llm"',
    '"trace_id":', '"role": "system"', '"type": "function_call"', '"run_type"', '"run_', 'type"',
    '"llm"', '"trace_id"', '"client.beta.sessions.', '"client.beta', '.sessions.', '"messages"',
    '"role"', '"tool_calls"', '"system"', 'interactions:', 'interactions',
    'uri: x/chat/completions', 'uri: /responses', 'resourceSpans', 'resource_spans',
    'scopeSpans', 'Spans', '_spans', '"traceID"', '"spans"', '"tags"', '"gen_ai.system"',
    '"gen_ai.', '"openinference.span.kind"', '"llm.model_name"', '"llm.', '"object"',
    '"response"', '"previous_response_id"', '"type"', '"tool_call"', '"tool_use"', '"', ':', ' ',
    '\n', '[', '{', ']', '}', '1', 'x', 'ü', '\\u0022',
    # the tokens asked before the patterns (readers/_head.py), each beside its pattern
    '"run_id":', '"eval_id":', '"dotted_order":', '"start_time":', '"type": "human"',
    '"additional_kwargs":', '"example":', '"constructor"', '"ai"', '"human"',
    '{"id": 1, "timestamp": 2, "instructions": 3}', '{"i\\u0064": 1, "timestamp": 2, "git": 3}',
    '{"id": 1, "time\\u0073tamp": 2, "git": 3}', '"git"', '"instructions"', '"timestamp"', '"id"',
    '"type": "event_msg"', '"model_responses":', '"object": "trace"',
    '"instrumentationLibrarySpans":', '"gen_ai.operation.name":', '"gen_ai.provider.name":',
    '"gen_ai.request.model":', '"gen_ai.tool.name":', '"gen_ai.system"', '"openinference.span',
    '"type": "web_search_call"', '"type": "input_text"', '"type": "custom_tool_call"',
    '"function_call"', '"input_text"', '"object": "chat.completion.chunk"', '"object":',
    '"chat.completion"', '"response"', '"type": "user"', '"type": "summary"', '"sessionId":',
    '"uuid":', '"message": {', '"leafUuid":', '"subtype": "init"', '"user"', '"message"',
    '"uuid"', '"schema_version": "ATIF-v1"', '"schema_version"', '"projectHash":',
    '"kind": "ActionEvent"', '"kind": "MessageEvent"', '"ActionEvent"', '"spanContext":',
    '"ai.model.id":', '"ai.toolCall.name":', '"spanContext"', '"jsonrpc": "2.0"', '"jsonrpc"',
    '"$schema":', '{"type": "tool_call"}', '{"type": "tool_\\u0063all"}', '"tool_result"',
    '{"type": "trace_start", "x": {"type": "output"}}', '{"x": {"type": "handoff"}}',
    '"type": "score"', '\\u', '\\"tool_call\\"',
    # a head cut inside a token's quotes (the token then is not in quotes)
    '"samples', 'samples"', '"payload', 'span_data"']
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)


def _native_before(head: bytes, source: SourceFile) -> bool:
    """The native sniff as written before it asked the head's tokens: every line that
    starts with ``{`` is parsed."""
    from agent_eval.jsonutil import loads
    from agent_eval.readers.jsonpos import string_members
    from agent_eval.readers.native import _is_event_path

    text = head.removeprefix(b"\xef\xbb\xbf").decode("utf-8", errors="replace")
    if source.path.endswith(".json"):
        return any(_is_event_path(path) and value in EVENT_TYPES
                   for path, value in string_members(text, "type"))
    for line in text.split("\n"):
        if not line.lstrip().startswith("{"):
            continue
        try:
            obj = loads(line)
        except ValueError:
            if any(path == () and value in EVENT_TYPES
                   for path, value in string_members(line, "type")):
                return True
            continue
        if type(obj) is dict and obj.get("type") in EVENT_TYPES:
            return True
    return False


def _sniff_before(name: str, head: bytes, source: SourceFile) -> bool | None:
    """The sniff ``name`` as written before its quick checks (None: not changed)."""
    import re

    from agent_eval.readers import sniffs as s
    from agent_eval.readers._foreign import all_of, head_text

    native = _foreign.is_native(head, source)
    text = head_text(head)
    marks = s.SNIFFS[name]
    if name == "anthropic_agents":  # its pattern as it was (^\s* across lines)
        return not native and re.search(r'^\s*\[\s*"client\.beta\.sessions\.', text,
                                        re.M) is not None
    if isinstance(marks, s.Marks):
        return not native and all_of(text, *marks.patterns)
    if name == "otlp":
        start = head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1]
        return bool(s._OTLP.search(head) or all(p.search(head) for p in s.JAEGER)
                    or (start == b"{" and s._OTLP_FLAT.search(head) and not native))
    if name == "inspect":
        return not native and bool(s._INSPECT_LOG.search(text) or (
            s._INSPECT_EVAL.search(text) and s._INSPECT_TASK.search(text)
            and '"samples"' in text))
    if name == "langchain":
        return not native and bool(
            (s._LC.search(text) and s._LC_CONSTRUCTOR.search(text) and "langchain" in text)
            or (s._LC_DICT.search(text) and s._LC_SHAPE.search(text)))
    if name == "codex":
        if native:
            return False
        if s._CODEX.search(head) and s._CODEX_PAYLOAD.search(head):
            return True
        first, nl, _ = head.partition(b"\n")
        try:
            header = json.loads(first) if nl else None
        except ValueError:
            return False
        return type(header) is dict and "type" not in header and "id" in header and \
            "timestamp" in header and ("instructions" in header or "git" in header)
    if name == "openai_agents":
        return not native and bool(
            (s._AGENTS_STATE.search(head) and s._AGENTS_STATE_KEYS.search(head))
            or (s._AGENTS_SPANS.search(head) and s._AGENTS_SPAN_DATA.search(head)))
    if name == "mcp":
        rpc = None if native else s._JSONRPC.search(text)
        return rpc is not None and s._JSON_SCHEMA.search(text, 0, rpc.start()) is None
    if name == "native":
        return _native_before(head, source)
    if name not in ("openai_chat", "openai_responses"):
        return None
    if re.search(rb"^interactions:", head, re.M):
        vcr = s.VCR_CHAT if name == "openai_chat" else s.VCR_RESPONSES
        return vcr.search(head) is not None
    if s._OPENAI_FOREIGN.search(head) or native:
        return False
    if name == "openai_responses":
        return bool(s._RESP_STRONG.search(head) or re.search(
            rb'"type"\s*:\s*"(?:function_call|function_call_output|custom_tool_call|'
            rb'custom_tool_call_output|input_text|output_text|computer_call|mcp_call|'
            rb'web_search_call|file_search_call)"|"previous_response_id"\s*:', head))
    return s._CHAT_STRONG.search(head) is not None or (
        re.search(rb'"messages"\s*:\s*\[|\A\s*\[?\s*\{\s*"role"\s*:', head) is not None
        and s._CHAT_MARKERS.search(head) is not None)


@settings(max_examples=1000, deadline=None)
@given(_TEXT, st.sampled_from([".json", ".jsonl"]))
def test_the_quick_checks_before_the_sniff_patterns_never_change_an_answer(
        text: str, suffix: str) -> None:
    from agent_eval.readers.sniffs import SNIFFS

    head = text.encode()
    source = SourceFile(f"t{suffix}", f"t{suffix}", f"t{suffix}", DEFAULT)
    checked = 0
    for name, sniff in SNIFFS.items():
        before = _sniff_before(name, head, source)
        if before is not None:
            checked += 1
            assert sniff(head, source) == before, name
    assert checked == 16


# For each sniff, the texts its patterns and quick checks are about (with and without what
# makes them match), so that the texts drawn reach each of its patterns in every way.
_SNIFF_PIECES = {
    "inspect": ['{"version": 2, "status":', '"eval": {', '"task":', '"run_id":', '"eval_id":',
                '"samples"', '"version"', '"status"', '"eval"'],
    "langsmith": ['"run_type": "llm"', '"run_type": "parser"', '"run_type"', '"dotted_order":',
                  '"trace_id":', '"child_runs":', '"parent_run_id":', '"start_time":',
                  '"start_time"'],
    "langchain": ['"lc": 1', '"lc"', '"type": "constructor"', '"constructor"', 'langchain',
                  '"type": "ai"', '"type": "human"', '"ai"', '"human"', '"data": {',
                  '"tool_calls":', '"example":', '"additional_kwargs":'],
    "codex": [h + "\n" for h in (  # an older rollout's header line
        '{"id": 1, "timestamp": 2, "git": 3}', '{"id": 1, "timestamp": 2, "instructions": 3}',
        '{"i\\u0064": 1, "timestamp": 2, "git": 3}', '{"id": 1, "timestamp": 2, "gi\\u0074": 3}',
        '{"id": 1, "time\\u0073tamp": 2, "instructions": 3}', '{"id": 1, "timestamp": 2}',
        '{"id": 1, "timestamp": 2, "type": 3, "git": 4}')] + [
              '"type": "session_meta"',
              '"type": "compacted"', '"payload":', '"payload"', '"git"', '"id"', '"timestamp"'],
    "openai_agents": ['"$schemaVersion": 1', '"$schemaVersion"', '"generated_items":',
                      '"current_agent":', '"object": "trace.span"', '"object": "trace"',
                      '"span_data":', '"span_data"'],
    "otlp": ['"resourceSpans":', '"resource_spans" :', '"scopeSpans":',
             '"instrumentationLibrarySpans":', '"resourceSpans"', '"traceID":', '"spans":',
             '"tags":', '"operationName":', '"traceID"', '"gen_ai.operation.name":',
             '"gen_ai.system":', '"gen_ai.provider.name":', '"gen_ai.request.model":',
             '"gen_ai.tool.name":', '"openinference.span.kind":', '"llm.model_name":',
             '"gen_ai.system"', '"llm.model_name"'],
    "openai_responses": ['"object": "response"', '"response"', '"object"',
                         '"previous_response_id":', '"previous_response_id"',
                         '"type": "function_call_output"', '"type": "web_search_call"',
                         '"type": "input_text"', '"type": "custom_tool_call"',
                         '"type": "file_search_call"', '"mcp_call"',
                         '\ninteractions:\n uri: x/responses', 'interactions:'],
    "openai_chat": ['"object": "chat.completion"', '"object": "chat.completion.chunk"',
                    '"chat.completion"', '"object"', '"messages": [', '"messages"',
                    '{"role": "system", "x": 1}', '{"role":', '"tool_calls":', '"role": "tool"',
                    '"tool_call_id":', '\ninteractions:\n uri: x/chat/completions'],
    "anthropic_agents": ['["client.beta.sessions.x"', '[ "client.beta.sessions.events"',
                         '"client.beta.sessions.', '"client.beta', "\t", "\r", "\x85", "\n\n"],
    "claude_code": ['"type": "user"', '"type": "summary"', '"type":"result"', '"user"',
                    '"summary"', '"sessionId":', '"session_id":', '"leafUuid":', '"loglines":',
                    '"isSidechain":', '"uuid"', '"message": {', '"subtype": "init"', '"message"',
                    '"subtype"'],
    "mcp": ['"jsonrpc": "2.0"', '"jsonrpc"', '"$schema":', '"2.0"'],
    "atif": ['"schema_version": "ATIF-v1"', '"schema_version"', '"ATIF-'],
    "gemini_cli": ['"projectHash":', '"projectHash"', '"messages": [', '"messages"'],
    "openhands": ['"kind": "ActionEvent"', '"kind": "MessageEvent"', '"kind": "ObservationEvent"',
                  '"kind"', '"ActionEvent"'],
    "vercel_ai": ['"spanContext":', '"spanContext"', '"ai.operationId":', '"ai.model.id":',
                  '"ai.toolCall.name":', '"ai.model.id"'],
    "native": ['{"type": "tool_call"}', '{"type": "tool_\\u0063all"}', '{"type": "output"}',
               '{"x": {"type": "tool_result"}}', '{"type": "user", "c": [{"type": "tool_result"}]}',
               '"tool_result"', '{"type": "handoff", "x": 1', '\\u'],
}
_GLUE = ["\n", " ", "{", "}", "[", "]", ",", ":", '"', "x", "ü", "\\u0022", '"type": "tool_call"']


@pytest.mark.parametrize("name", sorted(_SNIFF_PIECES))
@settings(max_examples=400, deadline=None)
@given(data=st.data(), suffix=st.sampled_from([".json", ".jsonl"]))
def test_each_sniff_gives_the_answer_of_its_patterns_alone(name: str, data: st.DataObject,
                                                           suffix: str) -> None:
    from agent_eval.readers.sniffs import SNIFFS

    pieces = st.sampled_from(_SNIFF_PIECES[name] + _GLUE)
    head = "".join(data.draw(st.lists(pieces, max_size=10))).encode()
    source = SourceFile(f"t{suffix}", f"t{suffix}", f"t{suffix}", DEFAULT)
    assert SNIFFS[name](head, source) == _sniff_before(name, head, source)


@pytest.mark.parametrize(("name", "head"), [
    ("openai_chat", b" " * SNIFF_BYTES),  # \s*\[?\s*: each split of the spaces tried
    ("anthropic_agents", b'"client.beta.sessions.' + b"\n" * (SNIFF_BYTES - 22)),
    ("anthropic_agents", b'"client.beta.sessions.' + b"\n " * (SNIFF_BYTES // 2 - 11)),
])
def test_a_sniff_takes_linear_time_on_a_head_of_spaces(name: str, head: bytes) -> None:
    """A sniff's pattern with two quantifiers over the same spaces took time quadratic in
    the head: 0.4 s for a head of 8 KB, in every file of a glob (the head's size is
    bounded: not a hang, but a cost a pull request could multiply)."""
    from agent_eval.readers.sniffs import SNIFFS

    source = SourceFile("t.json", "t.json", "t.json", DEFAULT)
    seconds = []
    for _ in range(3):
        start = time.perf_counter()
        assert not SNIFFS[name](head, source)
        seconds.append(time.perf_counter() - start)
    assert min(seconds) < 0.05, seconds  # measured: 0.4 s before, 0.1 ms after


@settings(max_examples=400, deadline=None)
@given(st.lists(EVENT | JSON, min_size=1, max_size=5), st.lists(st.booleans(), min_size=5,
                                                                 max_size=5),
       st.integers(min_value=0, max_value=2000))
def test_the_native_sniff_parses_the_lines_that_may_be_events(
        docs: list[object], escapes: list[bool], cut: int) -> None:
    """Only the lines holding a native name (or any line, when the head holds an escape):
    the answer of parsing every line, whatever line holds which names."""
    text = "\n".join(json.dumps(d, ensure_ascii=e).replace("_", "\\u005f" if e else "_")
                     for d, e in zip(docs, escapes, strict=False))
    source = SourceFile("t.jsonl", "t.jsonl", "t.jsonl", DEFAULT)
    for head in (text.encode(), text.encode()[:cut]):
        assert NativeReader().sniff(head, source) == _native_before(head, source)


def test_each_reader_sniffs_with_its_sniff_in_the_sniffs_module() -> None:
    """Detection asks readers/sniffs.py and imports only the picked reader's module: each
    reader's own sniff is the same function."""
    from agent_eval.readers.sniffs import SNIFFS

    assert list(SNIFFS) == list(READERS)
    heads = [(p, p.read_bytes()[:SNIFF_BYTES]) for p in _files(FIXTURES)]
    for name, sniff in SNIFFS.items():
        reader = READERS[name]
        for path, head in heads:
            source = _source(path)
            expected = _foreign.is_native(head, source) if name == "native" else reader.sniff(
                head, source)
            assert sniff(head, source) == expected, (name, path)


def test_a_reader_not_said_to_take_native_files_says_no_to_every_native_head() -> None:
    """``SNIFFS_NATIVE`` lists every reader whose sniff may accept a file the native sniff
    accepts: a native file is offered only to those (and to native), so every other sniff
    must say no whenever ``is_native`` says yes — checked on the head of every fixture,
    example and real-world sample (each format's own files among them), with the
    native sniff's answer for that head set to yes."""
    files = _files(FIXTURES) + _files(EXAMPLE / "traces") + _files(SAMPLES)
    others = [r for name, r in READERS.items() if name not in (*SNIFFS_NATIVE, "native")]
    assert len(others) > 10
    try:
        for path in files:
            source = _source(path)
            with open(path, "rb") as fh:
                head = fh.read(SNIFF_BYTES)
            for reader in others:
                _foreign._last_native = (head, source.path, True)  # is_native: yes, this head
                assert not reader.sniff(head, source), (reader.name, path)
    finally:  # a failure must not leave the forced answer to the next test
        _foreign._last_native = (b"", "", False)


def test_a_native_file_is_offered_to_the_readers_that_may_take_it_in_registry_order() -> None:
    order = list(READERS)
    assert list(_FOR_NATIVE) == sorted([*SNIFFS_NATIVE, "native"], key=order.index)
    assert _FOR_NATIVE[-1] == "native" == order[-1]


@pytest.mark.parametrize("size", [0, 1, SNIFF_BYTES - 1, SNIFF_BYTES, SNIFF_BYTES + 1, 50_000])
def test_the_head_is_what_a_buffered_read_gives(size: int, tmp_path: Path) -> None:
    from agent_eval.readers import _read_head

    path = tmp_path / "t.jsonl"
    path.write_bytes(bytes(i % 251 for i in range(size)))
    with open(path, "rb") as fh:
        assert _read_head(str(path)) == fh.read(SNIFF_BYTES)


def test_the_head_is_read_in_binary_mode_where_the_system_has_one(
        tmp_path: Path, windows_open: list[int]) -> None:
    """On Windows ``os.open`` opens a file as text unless given ``O_BINARY`` (CRLF read
    as LF, a Ctrl-Z read as the end): the head is the file's bytes, as ``open(path,
    "rb")`` gives them."""
    from agent_eval.readers import _read_head

    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"type": "trace_start"}\r\n\x1a{"type": "trace_end"}\r\n')
    assert _read_head(str(path)) == path.read_bytes()
    assert windows_open and all(f & O_BINARY for f in windows_open)


def test_a_head_that_cannot_be_read_is_reported_as_open_words_it(tmp_path: Path) -> None:
    """``os.open`` opens a folder (its read fails): the error is the one ``open`` gives."""
    for path in (tmp_path, tmp_path / "missing.jsonl"):
        got = pick_reader(_source(path), "auto")
        assert isinstance(got, InputError)
        with pytest.raises(OSError) as raised:
            open(path, "rb")  # noqa: SIM115
        assert got.message == f"cannot read the file: {raised.value}"
        assert str(path) in got.message


def _asked_in(module: object) -> list[tuple[int, object]]:
    """What ``module``'s code asks a head's tokens (``head_tokens``): each bytes literal
    tested with ``in`` / ``not in`` against them, and each value given to their
    ``isdisjoint``, with its line; a name is looked up in the module (None: not found)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    held: set[str] = set()  # names bound to head_tokens(...)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and (
                getattr(node.value.func, "id", None) == "head_tokens"):
            held |= {t.id for t in node.targets if isinstance(t, ast.Name)}

    def is_held(expr: ast.expr) -> bool:
        return (isinstance(expr, ast.Name) and expr.id in held) or (
            isinstance(expr, ast.Call) and getattr(expr.func, "id", None) == "head_tokens")

    def value(expr: ast.expr, whole: ast.expr) -> object:
        """A literal's value, a module constant's, else the text of ``whole``."""
        if isinstance(expr, ast.Constant) and isinstance(expr.value, bytes):
            return expr.value
        if isinstance(expr, ast.Name) and isinstance(getattr(module, expr.id, None),
                                                     frozenset):
            return getattr(module, expr.id)
        return ast.unparse(whole)

    found: list[tuple[int, object]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for op, right in zip(node.ops, node.comparators, strict=True):
                if isinstance(op, ast.In | ast.NotIn) and is_held(right):
                    found.append((node.lineno, value(node.left, node)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                node.func.attr == "isdisjoint" and is_held(node.func.value)):
            found += [(node.lineno, value(a, node)) for a in node.args]
    return found


def test_every_token_a_sniff_asks_is_declared() -> None:
    """The head's tokens are found among the declared ones only (readers/_head.py): a
    token asked without being declared would never be there. Read off the sniffs' code:
    every literal asked and every set given to ``isdisjoint`` is declared; the two that
    ask through a loop variable (the native sniff's event names, a skeleton reader's
    ``Marks``) declare what they loop over."""
    import pkgutil

    import agent_eval.readers as readers
    from agent_eval.readers import _head, native, sniffs

    declared = _head.declared()
    asking = {info.name for info in pkgutil.iter_modules(readers.__path__)
              if "head_tokens" in (Path(readers.__path__[0]) / f"{info.name}.py").read_text(
                  encoding="utf-8")} - {"_head"}
    assert asking == {"sniffs", "native", "_foreign"}  # a new one: scan it below too
    asked = [(m.__name__, line, v) for m in (sniffs, native, _foreign) for line, v in _asked_in(m)]
    assert len(asked) >= 25
    loops = {("agent_eval.readers.native", "token in tokens"),
             ("agent_eval.readers.sniffs", "held.isdisjoint(t)")}
    for module, line, v in asked:
        if isinstance(v, str):  # not a literal nor a module's constant: the expression
            assert (module, v) in loops, f"{module}:{line}: a token asked through {v}"
            continue
        tokens = {v} if isinstance(v, bytes) else v
        assert isinstance(tokens, set | frozenset) and tokens <= declared, (
            f"{module}:{line}: {v!r} is not declared (readers/_head.py asked)")
    assert {t for t, _ in native._QUOTED_EVENT_TYPES} <= declared
    marks = [m for m in vars(sniffs).values() if isinstance(m, sniffs.Marks)]
    assert len(marks) >= 6 and all(t <= declared for m in marks for t in m.tokens)


def test_the_head_s_tokens_are_the_declared_ones_it_holds_in_quotes() -> None:
    """What the split of the head at its quotes gave (every piece between two quotes),
    for the declared tokens: on every fixture and example head, and on texts made of the
    sniffs' pieces."""
    from agent_eval.readers import _head

    declared = _head.declared()
    heads = [p.read_bytes()[:SNIFF_BYTES] for p in _files(FIXTURES) + _files(EXAMPLE / "traces")]
    heads += [b'"id"', b'id"', b'"id', b'""id""', b'"i"d"', b'"\xff"id"\xfe', b'"ID"']
    for head in heads:
        pieces = head.split(b'"')[1:-1]  # between two quotes
        assert _head.head_tokens(bytes(bytearray(head))) == declared & set(pieces)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_the_tokens_of_texts_made_of_the_sniffs_pieces(text: str) -> None:
    from agent_eval.readers import _head

    head = text.encode()
    assert _head.head_tokens(head) == _head.declared() & set(head.split(b'"')[1:-1])


def test_a_token_declared_late_is_found_in_a_head_asked_before() -> None:
    """Declaring a token compiles the matcher again and forgets the answer kept for the
    last head (the same bytes object asked again)."""
    from agent_eval.readers import _head

    saved = list(_head._declared), _head._matcher, _head._last
    try:
        head = b'{"zz-late-token": 1, "id": 2}'
        assert b"zz-late-token" not in _head.head_tokens(head)
        _head.asked(b"zz-late-token")
        assert {b"zz-late-token", b"id"} <= _head.head_tokens(head)
        with pytest.raises(ValueError, match="without a quote"):
            _head.asked(b'a"b')
    finally:
        _head._declared[:] = saved[0]
        _head._matcher, _head._last = saved[1], saved[2]


# ------------------------------------------- native events joined to another format's file
NATIVE_CALL = {"type": "tool_call", "tool": "drop_database", "arguments": {}}


def _records(path: Path) -> list[object]:
    """A fixture's records: its JSON lines, or the items of its top-level array."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    doc = json.loads(text)
    assert isinstance(doc, list)
    return doc


@pytest.mark.parametrize(("fmt", "fixture"), [
    ("claude_code", "claude_code/tool-error.jsonl"),
    ("codex", "codex/rollout.jsonl"),
    ("mcp", "mcp/discount-too-high.jsonl"),
    ("openhands", "openhands/conversation.json"),
    ("vercel_ai", "vercel_ai/spans.json"),
    ("langchain", "langchain/stream.json"),
    ("langsmith", "langsmith/langgraph-supervisor.json"),
])
def test_a_native_call_in_another_format_s_lines_is_said(tmp_path: Path, fmt: str,
                                                       fixture: str) -> None:
    """``cat session.jsonl native.jsonl``: past the first 8 KiB ``format: auto`` picks the
    first file's reader, which counted the native lines as ignored records: the blocked
    call they hold passed the gate without a word."""
    rows = [*_records(FIXTURES / fixture), NATIVE_CALL]
    path = tmp_path / "joined.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    source = _source(path)
    items = list(read_file(READERS[fmt], source))
    said = [i for i in items if isinstance(i, InputError) and i.line == len(rows)]
    assert [(e.rule, "native 'tool_call' event" in e.message) for e in said] == [
        ("input/invalid_event", True)], items


def test_auto_detection_past_the_head_never_hides_a_native_call(tmp_path: Path) -> None:
    row = {"type": "user", "sessionId": "s1", "message": {"role": "user", "content": "x" * 500}}
    rows = [row] * 20  # 20 lines of over 500 bytes: past the head auto-detection reads
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, NATIVE_CALL]))
    assert path.stat().st_size > SNIFF_BYTES
    source = _source(path)
    reader = pick_reader(source, "auto")
    assert not isinstance(reader, InputError) and reader.name == "claude_code"
    errors = [(i.rule, i.line) for i in read_file(reader, source) if isinstance(i, InputError)]
    assert errors == [("input/invalid_event", 21)]
