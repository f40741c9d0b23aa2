"""Every reader's hand-made fixtures (tests/fixtures/<format>/) against their golden
``agent-eval convert --to native`` output.

A fixture is any file in ``tests/fixtures/<format>/`` (the folder is named after the reader
that must read it) except the goldens beside it: ``<stem>.native.jsonl`` (what ``convert``
prints on stdout) and ``<stem>.stderr.txt`` (its notes and input errors), where ``<stem>`` is
the fixture's name up to the first dot. Each golden was checked by hand against its fixture
when it was written; ``AGENT_EVAL_UPDATE_GOLDEN=1`` rewrites them after a deliberate change
(review the diff line by line before committing it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FIXTURES, ROOT

from agent_eval._cli import main
from agent_eval.api import load_traces
from agent_eval.model import Trace
from agent_eval.readers import READERS

UPDATE = os.environ.get("AGENT_EVAL_UPDATE_GOLDEN") == "1"
GOLDEN_SUFFIXES = (".native.jsonl", ".stderr.txt")
# fixtures that are deliberately not traces of their folder's format (no reader takes them)
NOT_TRACES = {"mcp/fragment-tool-result-content.json", "mcp/fragment-sampling-request.json",
              "otlp/semconv-schema.json"}


def key(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def stem(path: Path) -> str:
    return path.name.split(".", 1)[0]


def fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*/*")
                  if p.is_file() and not p.name.endswith(GOLDEN_SUFFIXES))


CASES = fixture_files()


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_every_reader_has_fixtures_and_every_folder_is_a_reader() -> None:
    folders = {p.parent.name for p in CASES}
    assert folders == set(READERS), (sorted(folders - set(READERS)),
                                     sorted(set(READERS) - folders))
    stems = [(p.parent.name, stem(p)) for p in CASES]
    assert len(stems) == len(set(stems)), "two fixtures of one format share a stem"
    goldens = sorted(p for p in FIXTURES.glob("*/*") if p.name.endswith(GOLDEN_SUFFIXES))
    wanted = {(p.parent.name, stem(p)) for p in CASES}
    assert [g for g in goldens if (g.parent.name, stem(g)) not in wanted] == []


def convert(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str, str]:
    code = main(["convert", rel(path)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("path", CASES, ids=key)
def test_convert_gives_the_golden_output(path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = convert(capsys, path)
    golden_out = path.with_name(stem(path) + ".native.jsonl")
    golden_err = path.with_name(stem(path) + ".stderr.txt")
    if UPDATE:
        golden_out.write_text(out, encoding="utf-8")
        golden_err.write_text(err, encoding="utf-8")
    assert out == golden_out.read_text(encoding="utf-8")
    assert err == golden_err.read_text(encoding="utf-8")
    # exit 2 exactly when an input error was printed
    assert code == (2 if "error:" in err else 0)
    if key(path) in NOT_TRACES:
        assert out == "" and "[input/unknown_format]" in err
    else:  # auto-detection picked the reader the folder is named after
        assert f"{rel(path)}: read as {path.parent.name}: " in err


def canonical(t: Trace) -> tuple[Any, ...]:
    return (
        t.id, t.scenario, t.input, t.output, t.duration_ms,
        [(c.name, c.id, c.arguments, c.arguments_error, c.arguments_recorded, c.result,
          c.has_result, c.ok, c.error, c.latency_ms) for c in t.tool_calls],
        [(c.model, c.input_tokens, c.output_tokens, c.total_tokens, c.cost_usd, c.latency_ms)
         for c in t.llm_calls],
        {k: v for k, v in t.metadata.items() if k != "source_format"},
    )


@pytest.mark.parametrize("path", CASES, ids=key)
def test_the_golden_reads_back_into_the_same_traces(path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``convert``'s output is a native trace file holding what was read: read with the
    native reader it gives the traces the fixture gives."""
    monkeypatch.chdir(ROOT)
    golden = path.with_name(stem(path) + ".native.jsonl")
    direct = [t for t in load_traces([rel(path)]) if isinstance(t, Trace)]
    if not direct:
        assert golden.read_text(encoding="utf-8") == ""
        return
    back = [t for t in load_traces([golden], format="native") if isinstance(t, Trace)]
    assert [canonical(t) for t in back] == [canonical(t) for t in direct]
    assert all(t.format == "native" for t in back)
    events = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines()]
    # every event points into the fixture
    assert {e["source"].rsplit(":", 1)[0] for e in events} == {rel(path)}
