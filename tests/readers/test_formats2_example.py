"""The bundled example suite finds the same things in the same agent run, whatever the
format it was recorded in: discount-too-high and records-without-auth as native JSONL,
Anthropic Messages bodies, a Claude Code session and MCP JSON-RPC logs
(tests/fixtures/formats2/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_eval.api import evaluate, load_suite, load_traces
from agent_eval.config.loader import Suite
from agent_eval.errors import InputError
from agent_eval.model import Trace

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "customer-service"
FIXTURES = ROOT / "tests" / "fixtures" / "formats2"
Row = tuple[str, str | None, str | None, str, int]
RUNS = {
    "discount-too-high": {"anthropic": "discount-too-high.anthropic.json",
                          "claude_code": "discount-too-high.claude.jsonl",
                          "mcp": "discount-too-high.mcp.jsonl"},
    "records-without-auth": {"anthropic": "records-without-auth.anthropic.jsonl",
                             "claude_code": "records-without-auth.claude.jsonl",
                             "mcp": "records-without-auth.mcp.log"},
}


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(EXAMPLE / "agent-eval.yaml")


def findings(suite: Suite, path: Path) -> tuple[str, list[tuple[Row, int]]]:
    """(the format used, [(rule, tool, argument, config file, config line), trace line])."""
    items = list(load_traces([path], suite))
    assert [i for i in items if isinstance(i, InputError)] == []
    [trace] = [i for i in items if isinstance(i, Trace)]
    res = evaluate(suite, items)
    out = []
    for v in res.violations:
        assert v.trace is not None
        config = Path(suite.root, v.config.file).relative_to(EXAMPLE).as_posix()
        out.append(((v.rule, v.tool, v.argument, config, v.config.line), v.trace.line))
    return trace.format, sorted(out)


def expected_rows(scenario: str) -> set[Row]:
    """The human-checked expected.json of the example, for this run."""
    rows = json.loads((EXAMPLE / "expected.json").read_text())
    return {(r["rule"], r["tool"], r["argument"], r["config_file"], r["config_line"])
            for r in rows if r["trace_file"] == f"traces/{scenario}.jsonl"}


@pytest.mark.parametrize("scenario", sorted(RUNS))
def test_same_findings_in_every_format(suite: Suite, scenario: str) -> None:
    fmt, native = findings(suite, EXAMPLE / "traces" / f"{scenario}.jsonl")
    assert fmt == "native"
    assert {row for row, _ in native} == expected_rows(scenario)
    for want_format, name in RUNS[scenario].items():
        path = FIXTURES / name
        fmt, got = findings(suite, path)
        assert fmt == want_format, name
        assert [row for row, _ in got] == [row for row, _ in native], name
        lines = path.read_text().splitlines()
        for (rule, tool, *_), line in got:
            if rule == "sequence_valid/require":  # a missing call: the trace's last line
                assert line == max(i for i, t in enumerate(lines, 1) if "jsonrpc" in t
                                   or t.strip().startswith(("{", "]"))), name
            else:  # the call's own line names its tool
                assert tool is not None and f'"{tool}"' in "".join(lines[line - 1:line + 3])


def test_the_discount_run_is_the_same_run(suite: Suite) -> None:
    """The fixtures hold the native run's calls and arguments, in its order."""
    def calls(path: Path) -> list[tuple[str, object]]:
        [t] = [i for i in load_traces([path], suite) if isinstance(i, Trace)]
        return [(c.name, c.arguments) for c in t.tool_calls]

    native = calls(EXAMPLE / "traces" / "discount-too-high.jsonl")
    assert native == [("authenticate_user", {"customer_id": "C-56012", "method": "sms"}),
                      ("get_customer", {"customer_id": "C-56012"}),
                      ("apply_discount", {"customer_id": "C-56012", "percent": 50,
                                          "code": "VIPS50"})]  # lines 3, 5, 7
    for name in RUNS["discount-too-high"].values():
        assert calls(FIXTURES / name) == native, name


# ------------------------------------------------------------ detection across formats
SAMPLES = ROOT.parent / "shared" / "samples" / "traces"
MINE = ("anthropic", "claude_code", "inspect", "langchain", "langsmith", "mcp")
MY_DIRS = ("anthropic_messages", "claude_code_jsonl", "claude_code_stream_json", "inspect_ai",
           "langchain", "langsmith", "mcp")


def test_these_readers_claim_no_other_format() -> None:
    """OpenAI, OTel, Codex and the other samples (and the letta expected-normalized outputs,
    which are not traces) are never taken by these readers, whatever the order."""
    from agent_eval.readers import READERS, SourceFile

    others = [p for p in sorted(SAMPLES.glob("*/*")) if p.suffix != ".md" and (
        p.parent.name not in MY_DIRS or "expected-normalized" in p.name)]
    assert len(others) > 20
    for path in others:
        source = SourceFile(str(path), path.name, path.name)
        head = path.read_bytes()[:8192]
        claimed = [name for name in MINE if READERS[name].sniff(head, source)]
        assert claimed == [], path


def test_native_files_still_go_to_native() -> None:
    from agent_eval.readers import READERS, SourceFile, pick_reader

    files = sorted((EXAMPLE / "traces").glob("*.jsonl"))
    assert len(files) == 10
    for path in files:
        source = SourceFile(str(path), path.name, path.name)
        reader = pick_reader(source, "auto")
        assert not isinstance(reader, InputError) and reader.name == "native", path
        head = path.read_bytes()[:8192]
        assert [n for n in MINE if READERS[n].sniff(head, source)] == [], path
