"""Bounded JSON decoding and reading (limits: max_depth, max_containers, max_file_bytes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_eval.jsonutil import (
    JsonLimitError,
    file_lines,
    loads,
    read_whole,
    repeated_name,
    too_deep,
)
from agent_eval.limits import Limits


def depth(value: Any) -> int:
    """The reference: nesting of objects and arrays, recursively."""
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


JSON = st.recursive(st.none() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=2), inner, max_size=3),
                    max_leaves=30)


@given(JSON, st.integers(0, 8))
def test_too_deep_agrees_with_the_recursive_reference(value: Any, limit: int) -> None:
    assert too_deep(value, limit) == (depth(value) > limit)


@given(JSON)
def test_loads_within_limits_is_orjson(value: Any) -> None:
    data = orjson.dumps(value)
    assert loads(data, Limits(max_depth=depth(value) or 1)) == value


def test_nesting_and_containers_over_the_limits() -> None:
    deep = b"[" * 101 + b"]" * 101
    with pytest.raises(JsonLimitError, match=r"more than 100 levels deep \(limits.max_depth"):
        loads(deep)
    assert loads(deep, Limits(max_depth=101)) is not None
    wide = b"[" + b",".join([b"[]"] * 2000) + b"]"
    with pytest.raises(JsonLimitError, match=r"limits.max_containers"):
        loads(wide, Limits(max_containers=1000))
    assert len(loads(wide)) == 2000
    # a limit error is a JSONDecodeError: every reader's "not valid JSON" handling holds
    assert issubclass(JsonLimitError, orjson.JSONDecodeError)
    assert loads('{"a": "[[[[[[["}', Limits(max_depth=2)) == {"a": "[[[[[[["}


def test_files_and_lines_over_max_file_bytes(tmp_path: Path) -> None:
    small = Limits(max_file_bytes=10)
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"1\n22\n" + b"3" * 50 + b"\n4\n")
    with open(path, "rb") as fh, pytest.raises(JsonLimitError, match="max_file_bytes"):
        read_whole(fh, small)
    with open(path, "rb") as fh:
        assert read_whole(fh, Limits(max_file_bytes=100)) == path.read_bytes()
    got: list[tuple[int, bytes]] = []
    with open(path, "rb") as fh, pytest.raises(JsonLimitError) as exc:
        got.extend(file_lines(fh, small))
    assert got == [(1, b"1\n"), (2, b"22\n")] and exc.value.line == 3
    with open(path, "rb") as fh:  # the fast path: no line can be longer than the file
        assert [n for n, _ in file_lines(fh, Limits(max_file_bytes=100))] == [1, 2, 3, 4]


def test_a_folder_named_as_a_results_file_is_said_to_be_a_folder(tmp_path: Path) -> None:
    """``report out/`` or ``--baseline out/`` (the output folder for the results.json in
    it): a folder opens for reading with O_RDONLY, and open_regular said "not a regular
    file (a FIFO, socket or device, its links followed)" of it; open() had said "Is a
    directory". By hand: the reason is that it is a folder."""
    from agent_eval.baseline import BaselineError, load_file
    from agent_eval.errors import ResultsFileError
    from agent_eval.jsonutil import open_regular
    from agent_eval.results import Results

    with pytest.raises(IsADirectoryError, match=r"a folder, not a file$"):
        open_regular(tmp_path)
    with pytest.raises(ResultsFileError) as info:
        Results.load(str(tmp_path))
    assert str(info.value) == f"cannot read {tmp_path}: a folder, not a file"
    with pytest.raises(BaselineError) as base:
        load_file(tmp_path)
    assert str(base.value) == f"cannot read {tmp_path}: a folder, not a file"


def test_repeated_name_finds_a_name_given_twice_at_any_depth() -> None:
    assert repeated_name('{"a": 1, "b": [{"x": 1}, {"x": 2}]}') is None  # two objects
    assert repeated_name('{"a": 1, "b": {"x": 1, "y": 2, "x": 3}}') == \
        "the name 'x' is given twice in one object"
    assert repeated_name('{"s\\u0063ore": 1, "score": 5}') == \
        "the name 'score' is given twice in one object"  # the same name, escaped
    deep = "[" * 5000 + "]" * 5000  # beyond the stack: not taken as checked
    assert repeated_name(deep) == ("it cannot be checked for a name given twice (too "
                                   "deep, or a number too long)")
