"""``agent-eval convert``: canonical traces printed as native JSONL; reading the output
back with the native reader gives the same traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_eval._cli import main
from agent_eval.api import load_traces
from agent_eval.convert import trace_events
from agent_eval.model import Trace

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "formats"
SAMPLES = Path("/work/shared/samples/traces")
CLEANUP = SAMPLES / "openai_responses" / "codex-rollout__cleanup.input.jsonl"


def traces(path: Path | str, fmt: str = "auto") -> list[Trace]:
    return [i for i in load_traces([path], format=fmt) if isinstance(i, Trace)]


def canonical(t: Trace) -> tuple[Any, ...]:
    return (
        t.id, t.scenario, t.input, t.output, t.duration_ms,
        [(c.name, c.id, c.arguments, c.arguments_error, c.arguments_recorded, c.result,
          c.has_result, c.ok, c.error, c.latency_ms) for c in t.tool_calls],
        [(c.model, c.input_tokens, c.output_tokens, c.total_tokens, c.cost_usd, c.latency_ms)
         for c in t.llm_calls],
        {k: v for k, v in t.metadata.items() if k != "source_format"},
    )


def convert(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]],
                                                                      str]:
    code = main(["convert", *args])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


FILES = [
    FIXTURES / "otlp" / "customer-service.otlp.jsonl",
    FIXTURES / "openai_chat" / "discount-too-high.chat.json",
    FIXTURES / "openai_chat" / "records-without-auth.chat.jsonl",
    FIXTURES / "openai_responses" / "discount-too-high.responses.jsonl",
    FIXTURES / "openai_responses" / "records-without-auth.responses.json",
]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_the_output_reads_back_into_the_same_traces(
        path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    code, events, err = convert(capsys, str(path.relative_to(ROOT)))
    assert code == 0, err
    assert "read as " in err
    native = tmp_path / "native.jsonl"
    native.write_text("".join(json.dumps(e) + "\n" for e in events))
    back = traces(native, "native")
    direct = traces(path)
    assert [canonical(t) for t in back] == [canonical(t) for t in direct]
    assert all(t.format == "native" for t in back)
    assert {e["type"] for e in events} >= {"trace_start", "tool_call", "trace_end"}


def test_every_line_points_into_the_original_file(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    rel = "tests/fixtures/formats/otlp/customer-service.otlp.jsonl"
    code, events, _ = convert(capsys, rel, "--format", "otlp", "--quiet")
    assert code == 0
    calls = [(e["tool"], e["source"]) for e in events if e["type"] == "tool_call"]
    # trace 4bf92f... has spans on lines 1 and 3, trace 0af765... on line 2
    assert calls == [(f"{n}", f"{rel}:{line}") for n, line in [
        ("authenticate_user", 1), ("get_customer", 1), ("apply_discount", 3),
        ("get_customer", 2)]]
    starts = [e for e in events if e["type"] == "trace_start"]
    assert [s["metadata"]["source_format"] for s in starts] == ["otlp", "otlp"]
    llm = next(e for e in events if e["type"] == "llm_call")
    assert llm == {"type": "llm_call", "model": "gpt-4o-mini-2024-07-18", "input_tokens": 823,
                   "output_tokens": 47, "total_tokens": 870, "cost_usd": 0.000152,
                   "latency_ms": 561.0, "source": f"{rel}:1"}


@pytest.mark.skipif(not CLEANUP.exists(), reason="shared samples not mounted")
def test_input_errors_go_to_stderr_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.jsonl"
    code = main(["convert", str(CLEANUP), "-o", str(out)])
    _, err = capsys.readouterr()
    assert code == 2
    assert "codex-rollout__cleanup.input.jsonl:1: line is not valid JSON" in err
    assert "[input/parse_error]" in err
    events = [json.loads(x) for x in out.read_text().splitlines()]  # the rest was read
    assert [e["arguments"] for e in events if e["type"] == "tool_call"] == [
        {"cmd": "cat a.txt"}, "not-json"]
    back = traces(out, "native")
    assert [c.arguments_error for c in back[0].tool_calls] == [
        None, "a string that is not valid JSON"]


def test_bad_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    path = "tests/fixtures/formats/openai_chat/discount-too-high.chat.json"
    assert main(["convert", path, "--format", "nope"]) == 2
    assert "unknown trace format 'nope'" in capsys.readouterr().err
    assert main(["convert", path, "--to", "otlp"]) == 2
    assert "only target is native" in capsys.readouterr().err
    assert main(["convert", "no/such/file.json"]) == 2
    assert "no trace file matches" in capsys.readouterr().err


def test_unrecognised_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.json").write_text('{"hello": "world"}')
    assert main(["convert", "x.json"]) == 2
    assert "[input/unknown_format]" in capsys.readouterr().err


def test_trace_events_merge_calls_by_line() -> None:
    [t] = traces(FIXTURES / "openai_responses" / "discount-too-high.responses.jsonl")
    kinds = [(e["type"], e["source"].rsplit(":", 1)[1]) for e in trace_events(t)]
    assert kinds == [("trace_start", "1"),
                     ("tool_call", "2"), ("tool_result", "3"),
                     ("tool_call", "2"), ("tool_result", "3"),
                     ("tool_call", "2"), ("tool_result", "3"),
                     ("llm_call", "2"), ("llm_call", "4"),
                     ("output", "4"), ("trace_end", "4")]
