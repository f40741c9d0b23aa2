"""The canonical model's CallLog: a very long trace's calls, most of them on disk."""

from __future__ import annotations

import os
import pickle
from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_eval import model
from agent_eval.model import CallLog, Location, ToolCall, Trace, call_names, log_folder


def _call(i: int, name: str = "t") -> ToolCall:
    return ToolCall(name, {"n": i, "nested": [i, {"x": None}], "f": i / 3},
                    Location("traces/a.jsonl", i + 1), id=f"c{i}", latency_ms=i,
                    result={"r": i} if i % 3 == 0 else None, has_result=i % 3 == 0,
                    result_location=Location("traces/a.jsonl", i + 2) if i % 3 == 0 else None,
                    arguments_error="why" if i % 5 == 0 else None, ok=i % 7 != 0,
                    error="bad" if i % 7 == 0 else None, arguments_recorded=i % 11 != 0)


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 3 calls, the latest 2 kept in memory."""
    monkeypatch.setattr(model, "LOG_CHUNK", 3)
    monkeypatch.setattr(model, "LOG_KEEP", 2)


def _fields(calls: object) -> list[dict[str, object]]:
    return [asdict(c) for c in calls]  # type: ignore[attr-defined]


def test_a_log_is_the_list_it_replaces(small: None) -> None:
    calls = [_call(i, f"tool{i % 4}") for i in range(20)]
    log = CallLog(calls)
    assert len(log) == 20
    assert log._spilled == 18  # chunks of 3 written while more than 2 + 3 were held
    assert _fields(log) == _fields(calls)
    assert _fields(log) == _fields(calls)  # walked again: the same
    for i in (0, 2, 3, 17, 18, 19, -1, -20):
        assert asdict(log[i]) == asdict(calls[i])
    for s in (slice(None), slice(2, 9), slice(None, None, -1), slice(5, 19, 4),
              slice(30, 40)):
        assert _fields(log[s]) == _fields(calls[s])
    with pytest.raises(IndexError):
        log[20]
    with pytest.raises(IndexError):
        log[-21]
    assert log.names() == call_names(calls) == call_names(log) == [c.name for c in calls]
    for picked in ([], [0], [0, 1, 2, 3, 17, 18, 19], [5, 11, 19], list(range(20))):
        assert _fields(log.pick(picked)) == _fields(calls[i] for i in picked)
    assert calls[4] in log  # Sequence's own methods, by equality
    assert log.index(calls[7]) == 7
    assert _fields(reversed(log)) == _fields(reversed(calls))
    assert _fields(pickle.loads(pickle.dumps(log))) == _fields(calls)


def test_a_change_to_a_call_goes_through_update(small: None) -> None:
    calls = [_call(i) for i in range(12)]
    log = CallLog(calls)
    assert log._spilled == 9 and log[11] is calls[11]  # in memory: the object itself
    log[1].result = "lost"  # calls read from the log are made anew when read again
    _ = log[4]  # another chunk
    assert log[1].result is None
    where = Location("traces/a.jsonl", 99)
    log.update(1, {"result": "kept", "has_result": True, "result_location": where})
    log.update(1, {"latency_ms": 5.5})
    log.update(11, {"result": "in memory"})
    log.update(4, {"name": "renamed"})
    expected = _fields(calls)
    expected[1].update(result="kept", has_result=True, latency_ms=5.5,
                       result_location={"file": "traces/a.jsonl", "line": 99})
    expected[4]["name"] = "renamed"
    assert calls[11].result == "in memory"
    assert _fields(log) == expected
    assert log.names()[4] == "renamed"
    _ = log[2]  # its chunk is the one read last: a change to it is still seen
    log.update(0, {"ok": False})
    expected[0]["ok"] = False
    assert _fields(log) == expected


def test_the_file_is_unnamed_and_made_where_it_is_told(small: None, tmp_path: Path) -> None:
    before = log_folder(lambda: str(tmp_path))
    try:
        log = CallLog([_call(i) for i in range(10)])
    finally:
        log_folder(before)
    assert log._file is not None
    assert os.path.dirname(os.readlink(f"/proc/self/fd/{log._file.fileno()}")) == str(tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing to clean up, whatever ends the process
    assert len(log) == 10


def test_each_thread_keeps_its_own_folder(small: None, tmp_path: Path) -> None:
    """Evaluations running at once in one process (a library user's threads) each put
    their long traces' files where they were told, whatever the other one set since."""
    import threading

    folders = [tmp_path / "a", tmp_path / "b"]
    for f in folders:
        f.mkdir()
    both_set = threading.Barrier(2)
    made: dict[int, str] = {}
    failed: list[BaseException] = []

    def run(i: int) -> None:
        try:
            log_folder(lambda: str(folders[i]))
            both_set.wait(5)  # the other thread has set its own folder by now
            log = CallLog([_call(n) for n in range(10)])
            assert log._file is not None
            made[i] = os.path.dirname(os.readlink(f"/proc/self/fd/{log._file.fileno()}"))
        except BaseException as exc:  # reported by the main thread
            failed.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not failed
    assert made == {0: str(folders[0]), 1: str(folders[1])}
    assert model._log_folder.get() is None  # this thread's setting: untouched


def test_a_short_log_writes_nothing(small: None) -> None:
    log = CallLog([_call(i) for i in range(4)])
    assert log._file is None and log._spilled == 0
    assert _fields(log) == _fields([_call(i) for i in range(4)])


def test_the_latency_of_a_trace_is_one_walk_with_the_same_sum(small: None) -> None:
    calls = [_call(i) for i in range(10)]
    trace = Trace("t", "a", Location("a", 1), Location("a", 9), tool_calls=CallLog(calls))
    listed = Trace("t", "a", Location("a", 1), Location("a", 9), tool_calls=calls)
    assert trace.latency_ms == listed.latency_ms == float(sum(range(10)))
    trace.tool_calls.update(3, {"latency_ms": None})  # type: ignore[union-attr]
    assert trace.latency_ms is None
    empty = Trace("t", "a", Location("a", 1), Location("a", 9))
    assert empty.latency_ms is None


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 40), chunk=st.integers(1, 5), keep=st.integers(0, 4),
       updates=st.lists(st.tuples(st.integers(0, 39), st.integers(0, 12),
                                  st.sampled_from(["result", "name"]), st.text(max_size=3)),
                        max_size=12))
def test_a_log_with_updates_is_a_list_with_the_same_changes(
        n: int, chunk: int, keep: int, updates: list[tuple[int, int, str, str]]) -> None:
    saved = model.LOG_CHUNK, model.LOG_KEEP
    model.LOG_CHUNK, model.LOG_KEEP = chunk, keep
    try:
        calls = [_call(i, f"n{i % 3}") for i in range(n)]
        log = CallLog()
        reference = []
        # each update made ``later`` calls after its call was appended (in memory still,
        # or on disk already)
        for i, call in enumerate(calls):
            log.append(call)
            reference.append(asdict(call))
            for at, later, name, value in updates:
                if min(at + later, n - 1) == i and at < n:
                    log.update(at, {name: value})
                    reference[at][name] = value
        assert len(log) == n
        assert _fields(log) == reference
        assert log.names() == [r["name"] for r in reference]
        assert [asdict(log[i]) for i in range(n - 1, -1, -1)] == reference[::-1]
    finally:
        model.LOG_CHUNK, model.LOG_KEEP = saved


def test_renaming_calls_on_disk_keeps_no_change_per_call_in_memory(small: None) -> None:
    """clean_trace renames every call whose name is unprintable or too long: a trace whose
    names all need it must not hold a change per call (the names are the log's own, in
    memory already), or it takes as much memory as the list it replaces."""
    from agent_eval.limits import DEFAULT
    from agent_eval.safetext import clean_name, clean_trace

    bad = "t\x01" + "n" * 300
    calls = [_call(i, bad if i % 2 else "fine") for i in range(20)]
    log = CallLog(calls)
    trace = Trace("t", "a", Location("a", 1), Location("a", 9), tool_calls=log)
    cut = clean_trace(trace, DEFAULT)
    assert log._patches == {}
    # the long names' calls, for the reader's input errors (read back from the disk)
    assert cut == [(Location("traces/a.jsonl", i + 1), 302) for i in range(1, 20, 2)]
    clean = clean_name(bad, DEFAULT.max_name_chars)
    expected = _fields(calls)
    for i in range(1, 20, 2):
        expected[i]["name"] = clean
    assert _fields(log) == expected
    assert log.names() == [e["name"] for e in expected]
    log.update(3, {"name": "again", "result": "kept"})  # with another field: that one kept
    assert log._patches == {3: {"result": "kept"}}
    assert (log[3].name, log[3].result, log[5].name) == ("again", "kept", clean)
