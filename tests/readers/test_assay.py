"""Assay's recorded traces (readers/assay.py): the hand-made fixtures are checked by their
goldens (test_fixtures.py); here the detection against the other formats, and Assay's own
recorded traces (the shared samples of its repository)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import FIXTURES, shared_path

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import READERS, SourceFile, pick_reader, read_file

READER = READERS["assay"]


def source(path: Path) -> SourceFile:
    return SourceFile(str(path), path.name, path.name)


def picked(path: Path) -> str:
    reader = pick_reader(source(path), "auto")
    assert not isinstance(reader, InputError), reader
    return reader.name


@pytest.mark.parametrize("name", ["episodes.jsonl", "records.jsonl", "legacy.jsonl"])
def test_fixtures_are_picked_as_assay(name: str) -> None:
    assert picked(FIXTURES / "assay" / name) == "assay"


def test_no_other_fixture_is_assay() -> None:
    """Every other format's fixture and every golden (native JSON lines) goes to its own
    reader: a native file whose tool arguments hold an "args" key is still native."""
    others = [p for p in sorted(FIXTURES.glob("*/*"))
              if p.is_file() and (p.parent.name != "assay" or p.name.endswith(".native.jsonl"))
              and not p.name.endswith(".stderr.txt")]
    assert len(others) > 40
    for path in others:
        assert not READER.sniff(path.read_bytes()[:8192], source(path)), path


def test_native_with_args_argument_is_native(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"type":"tool_call","tool":"run","arguments":{"args":["-x"]},'
                    '"prompt":"p"}\n', encoding="utf-8")
    assert picked(path) == "native"


def test_native_with_an_episode_id_argument_is_native(tmp_path: Path) -> None:
    """Assay's episode events are its "type" beside an "episode_id"; a native tool call
    whose arguments hold an episode_id (a podcast's, a show's) was claimed by the Assay
    reader, and its trace lost (an input error at each call, its other events ignored)."""
    path = tmp_path / "t.jsonl"
    path.write_text('{"type":"trace_start","trace_id":"t1"}\n'
                    '{"type":"tool_call","tool":"get_episode","arguments":{"episode_id":"e1"}}\n'
                    '{"type":"trace_end"}\n', encoding="utf-8")
    assert picked(path) == "native"
    # an episode event is still Assay's, also as the head's one line, cut off
    path.write_text('{"type":"tool_call","episode_id":"e1","tool_name":"t","args":{"p":"'
                    + "x" * 9000 + '"}}\n', encoding="utf-8")
    assert picked(path) == "assay"


def test_assays_own_recorded_traces() -> None:
    """Every trace file of Assay's repository (V1 records, untyped records, legacy tool
    lines, V2 episodes, an MCP import) reads without an input error."""
    repo = shared_path("samples", "peers", "assay", "repo")
    files = sorted(repo.rglob("*.jsonl"))
    assert len(files) >= 10
    calls = 0
    for path in files:
        assert picked(path) == "assay", path
        items = list(read_file(READER, source(path)))
        assert [i for i in items if isinstance(i, InputError)] == [], path
        traces = [i for i in items if isinstance(i, Trace)]
        assert traces, path
        calls += sum(len(t.tool_calls) for t in traces)
    # golden (1), assay-demo (2), demo unsafe (1) and safe (read_file), the MCP import (3)
    assert calls >= 7


def test_a_call_without_step_id_has_no_id(tmp_path: Path) -> None:
    """A tool_call's id is its step_id and call_index ("s1-0"); without a step_id the call
    has no id (it was "None-0", one id shared by every such call)."""
    path = tmp_path / "episode.jsonl"
    path.write_text(
        '{"type":"episode_start","episode_id":"e","timestamp":1,"input":{"prompt":"p"}}\n'
        '{"type":"tool_call","episode_id":"e","step_id":"s1","call_index":2,'
        '"tool_name":"a","args":{}}\n'
        '{"type":"tool_call","episode_id":"e","tool_name":"b","args":{}}\n'
        '{"type":"tool_call","episode_id":"e","tool_name":"c","args":{}}\n'
        '{"type":"episode_end","episode_id":"e","timestamp":2}\n', encoding="utf-8")
    [trace] = [i for i in read_file(READER, source(path)) if isinstance(i, Trace)]
    assert [(c.name, c.id) for c in trace.tool_calls] == [("a", "s1-2"), ("b", None),
                                                          ("c", None)]


@pytest.mark.parametrize(("start", "end", "duration"), [(1000, 3500, 2500.0), (5, 5, 0.0),
                                                        (3500, 1000, None)])
def test_episode_duration_is_end_minus_start_in_ms(tmp_path: Path, start: int, end: int,
                                                    duration: float | None) -> None:
    """An episode lasts from its start's timestamp to its end's (epoch milliseconds, not
    seconds); an end before the start gives no duration (was 0 ms, which a max_duration
    budget would take as a fact)."""
    path = tmp_path / "episode.jsonl"
    path.write_text(
        f'{{"type":"episode_start","episode_id":"e","timestamp":{start},"input":{{}}}}\n'
        '{"type":"tool_call","episode_id":"e","step_id":"s","tool_name":"a","args":{}}\n'
        f'{{"type":"episode_end","episode_id":"e","timestamp":{end}}}\n', encoding="utf-8")
    [trace] = [i for i in read_file(READER, source(path)) if isinstance(i, Trace)]
    assert trace.duration_ms == duration
