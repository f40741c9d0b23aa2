"""Format detection (``format: auto``): the reader picked for a file is the first in the
registry whose sniff accepts the file's head, computed here the slow way (each sniff on
its own, nothing shared between them) for every fixture, example and real-world sample;
and the native sniff, which every other reader's sniff asks, runs once per file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import EXAMPLE, FIXTURES, SAMPLES, shared_path

from agent_eval.errors import InputError
from agent_eval.limits import DEFAULT
from agent_eval.readers import READERS, SNIFF_BYTES, SourceFile, _foreign, pick_reader
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
