"""Fuzzing (issue 11, "Done when"): the config loader and every reader, given random
bytes, truncations and mutations of the project's fixture files (and of the shared samples,
when they are mounted), never raise, never hang and never grow memory without bound.

Each example runs under an alarm (a hang fails the test instead of stalling it), and the
process's peak RSS is compared before and after each test."""

from __future__ import annotations

import io
import json
import resource
import time
import zipfile
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import within

from agent_eval.engine import evaluate
from agent_eval.errors import ConfigError, InputError
from agent_eval.readers import READERS, ReadItem, SourceFile, pick_reader, read_file
from agent_eval.suite import load_suite

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "samples" / "traces"
SECONDS = 10  # per example: far above any real input's time, far below a hang
GROWTH_MB = 600  # peak RSS a whole test may add


def _eval_archive() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps({"version": 2, "eval": {"task": "t"}}))
        zf.writestr("samples/1_epoch_1.json", json.dumps({
            "id": "1", "epoch": 1, "input": "hi", "messages": [],
            "events": [{"event": "tool", "id": "c1", "function": "lookup",
                        "arguments": {"q": "x"}, "result": "ok"}]}))
    return buf.getvalue()


VCR = """\
interactions:
- request:
    body: '{"model": "gpt-4o", "messages": [{"role": "assistant", "tool_calls": [{"id": "c1",
      "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}]}'
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    body:
      string: '{"object": "chat.completion", "choices": []}'
    status: {code: 200, message: OK}
"""


def _seeds() -> list[tuple[str, bytes]]:
    """(file name suffix, content) of every trace file the repository ships, a few made
    here for formats without a fixture, and the shared samples when present."""
    paths = [p for p in sorted((REPO / "tests" / "fixtures").rglob("*")) if p.is_file()]
    paths += sorted((REPO / "examples").rglob("traces/*"))
    if SHARED.is_dir():
        paths += [p for p in sorted(SHARED.rglob("*")) if p.is_file() and p.suffix != ".md"]
    seeds = [("".join(p.suffixes[-1:]) or ".jsonl", p.read_bytes()) for p in paths
             if p.stat().st_size <= 200_000]
    seeds += [(".eval", _eval_archive()), (".yaml", VCR.encode())]
    return seeds


SEEDS = _seeds()
EXAMPLE = REPO / "examples" / "customer-service" / "agent-eval.yaml"
SUITE = load_suite(EXAMPLE)  # every check of the example runs on what the readers give
CONFIG = EXAMPLE.read_bytes()
POLICY = (REPO / "examples" / "customer-service" / "policies" / "customer.yaml").read_bytes()


@st.composite
def mutated(draw: st.DrawFn, seeds: list[tuple[str, bytes]]) -> tuple[str, bytes]:
    """A seed file cut, with bytes flipped, inserted or repeated, or random bytes."""
    suffix, data = draw(st.sampled_from(seeds))
    how = draw(st.sampled_from(["truncate", "flip", "insert", "repeat", "random", "nest"]))
    if how == "random":
        return suffix, draw(st.binary(max_size=4096))
    at = draw(st.integers(0, max(len(data) - 1, 0)))
    if how == "truncate":
        return suffix, data[:at]
    if how == "flip":
        out = bytearray(data)
        for _ in range(draw(st.integers(1, 8))):
            i = draw(st.integers(0, max(len(out) - 1, 0)))
            if out:
                out[i] ^= draw(st.integers(1, 255))
        return suffix, bytes(out)
    if how == "insert":
        return suffix, data[:at] + draw(st.binary(min_size=1, max_size=64)) + data[at:]
    if how == "nest":  # deep nesting at a random place: the crash of issue 11 item 5
        return suffix, data[:at] + draw(st.sampled_from([b"[", b"{\"a\":", b"- "])) * (
            draw(st.integers(1, 3000))) + data[at:]
    end = min(len(data), at + draw(st.integers(1, 200)))
    return suffix, data[:at] + data[at:end] * draw(st.integers(2, 50)) + data[end:]


def bounded(seconds: int = SECONDS) -> AbstractContextManager[None]:
    return within(seconds, "an example")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.fixture
def memory() -> Iterator[None]:
    before = peak_mb()
    yield
    assert peak_mb() - before < GROWTH_MB


def check_items(items: list[ReadItem]) -> None:
    for item in items:
        if isinstance(item, InputError):
            assert item.file and item.rule.startswith("input/") and item.message


@pytest.mark.usefixtures("memory")
@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(case=mutated(SEEDS), reader=st.sampled_from(sorted(READERS)))
def test_every_reader_survives_any_bytes(tmp_path: Path, case: tuple[str, bytes],
                                         reader: str) -> None:
    suffix, data = case
    path = tmp_path / f"trace{suffix}"
    path.write_bytes(data)
    source = SourceFile(str(path), path.name, path.name)
    start = time.monotonic()
    with bounded():
        items = list(read_file(READERS[reader], source))  # forced: every reader
        check_items(items)
        picked = pick_reader(source, "auto")  # and the one auto-detection picks
        if not isinstance(picked, InputError):
            items = list(read_file(picked, source))
            check_items(items)
        results = evaluate(SUITE, items)  # and the checks, scenarios and renderers' input
        assert results.verdict in ("pass", "warn", "fail", "error")
    assert time.monotonic() - start < SECONDS


@pytest.mark.usefixtures("memory")
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(suite=mutated([(".yaml", CONFIG)]), policy=mutated([(".yaml", POLICY)]))
def test_the_config_loader_survives_any_bytes(tmp_path: Path, suite: tuple[str, bytes],
                                              policy: tuple[str, bytes]) -> None:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "policies").mkdir(exist_ok=True)
    (tmp_path / "agent-eval.yaml").write_bytes(suite[1])
    (tmp_path / "policies" / "customer.yaml").write_bytes(policy[1])
    with bounded():
        try:
            load_suite(tmp_path / "agent-eval.yaml")
        except ConfigError as exc:
            for problem in exc.problems:
                # every problem is located: FILE or FILE:LINE:COL, then the message
                assert problem.split(":", 1)[0].endswith(".yaml"), problem


def test_seeds_cover_every_reader() -> None:
    """The mutations start from files of every format of the registry (a guard against a
    fuzz test that only ever feeds one reader, or misses a reader added later)."""
    picked = set()
    for suffix, data in SEEDS:
        path = Path(f"/nonexistent/seed{suffix}")
        source = SourceFile(str(path), path.name, path.name)
        for reader in READERS.values():
            if reader.sniff(data[:8192], source):
                picked.add(reader.name)
                break
    assert sorted(set(READERS) - picked) == []


# A JSON fixture of every format, and values of every JSON type (and out of range) to put
# in place of one of its values: a reader takes the bad value as an input error of its
# element (input/invalid_event, or a value it ignores), never stops on the file
# (input/reader_error: "TypeError: 'int' object is not iterable" lost every trace).
JSON_FIXTURES = [(p.parent.name, p) for p in sorted((REPO / "tests" / "fixtures").rglob("*"))
                 if p.suffix in (".json", ".jsonl") and not p.name.endswith(".native.jsonl")
                 and p.parent.name in READERS]
OTHER_VALUES: list[Any] = [None, -1, 0, 1e308, -1e308, 2**63, "x", "", "1e999", [], {}, True,
                           False, [None], [[]], {"a": [1]}, "\x1b[2J\n::error::x"]


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*path, i))


def _put(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = new
    return value


@st.composite
def retyped(draw: st.DrawFn) -> tuple[str, str, bytes]:
    """(reader, file name, content): a fixture with one value replaced by another."""
    reader, path = draw(st.sampled_from(JSON_FIXTURES))
    text = path.read_text(encoding="utf-8")
    new = draw(st.sampled_from(OTHER_VALUES))
    if path.suffix == ".jsonl":
        lines = text.splitlines()
        k = draw(st.sampled_from([i for i, ln in enumerate(lines) if _parses(ln)]))
        doc = json.loads(lines[k])
        lines[k] = json.dumps(_put(doc, draw(st.sampled_from(list(_paths(doc)))), new))
        return reader, path.name, "\n".join(lines).encode() + b"\n"
    doc = json.loads(text)
    doc = _put(doc, draw(st.sampled_from(list(_paths(doc)))), new)
    return reader, path.name, json.dumps(doc, indent=1).encode()


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=retyped())
def test_no_reader_stops_on_a_value_of_another_type(tmp_path: Path,
                                                    case: tuple[str, str, bytes]) -> None:
    reader, name, data = case
    path = tmp_path / name
    path.write_bytes(data)
    with bounded():
        items = list(read_file(READERS[reader], SourceFile(str(path), name, name)))
    stopped = [str(i) for i in items if isinstance(i, InputError)
               and i.rule == "input/reader_error"]
    assert not stopped, (reader, data[:2000])
