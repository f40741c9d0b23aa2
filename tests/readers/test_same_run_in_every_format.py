"""The bundled example suite finds the same things in the same agent run whatever it was
recorded in: discount-too-high and records-without-auth as native JSONL
(examples/customer-service/traces/) and, hand-made from those, in the fixtures of six other
formats: OTLP collector lines (both runs in one file), Chat Completions (a message list; an
API log), Responses API (an API log; an item list), Anthropic Messages bodies, a Claude Code
session and MCP JSON-RPC logs (tests/fixtures/<format>/<run>.*). Every file is read with
``format: auto``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import FIXTURES, ROOT, SAMPLES

from agent_eval.api import evaluate, load_suite, load_traces
from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import READERS, SourceFile, pick_reader
from agent_eval.suite import Suite

EXAMPLE = ROOT / "examples" / "customer-service"
RUNS = ("discount-too-high", "records-without-auth")
# formats whose files record the user's request: findings are mapped to runs by it
BY_INPUT = {
    "otlp": ["otlp/customer-service.jsonl"],
    "openai_chat": ["openai_chat/discount-too-high.json",
                    "openai_chat/records-without-auth.jsonl"],
    "openai_responses": ["openai_responses/discount-too-high.jsonl",
                         "openai_responses/records-without-auth.json"],
}
# one file per run
BY_FILE = {
    "discount-too-high": {"anthropic": "anthropic/discount-too-high.json",
                          "claude_code": "claude_code/discount-too-high.jsonl",
                          "mcp": "mcp/discount-too-high.jsonl",
                          "openai_chat": "openai_chat/discount-too-high.json",
                          "openai_responses": "openai_responses/discount-too-high.jsonl"},
    "records-without-auth": {"anthropic": "anthropic/records-without-auth.jsonl",
                             "claude_code": "claude_code/records-without-auth.jsonl",
                             "mcp": "mcp/records-without-auth.log"},
}
# rule, tool, argument, config file (relative to the example), config line
Row = tuple[str, str | None, str | None, str, int]


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(EXAMPLE / "agent-eval.yaml")


def native(run: str) -> Path:
    return EXAMPLE / "traces" / f"{run}.jsonl"


def by_run(suite: Suite, paths: list[Path]) -> tuple[set[str], dict[str, list[Row]],
                                                      dict[str, list[int]]]:
    """(formats used, findings per run, trace lines of the findings per run). A trace is
    mapped to its run by its input text."""
    items = list(load_traces(paths, suite))
    assert [i for i in items if isinstance(i, InputError)] == []
    inputs = {}
    for run in RUNS:
        start = json.loads(native(run).read_text().splitlines()[0])
        inputs[start["input"]] = run
    traces = [i for i in items if isinstance(i, Trace)]
    run_of = {t.id: inputs[t.input] for t in traces}
    assert sorted(run_of.values()) == sorted(RUNS)
    rows: dict[str, list[Row]] = {run: [] for run in RUNS}
    lines: dict[str, list[int]] = {run: [] for run in RUNS}
    for v in evaluate(suite, items).violations:
        assert v.trace is not None
        config = Path(suite.root, v.config.file).relative_to(EXAMPLE).as_posix()
        run = run_of[v.trace.trace_id]
        rows[run].append((v.rule, v.tool, v.argument, config, v.config.line))
        lines[run].append(v.trace.line)
    return {t.format for t in traces}, rows, lines


def findings(suite: Suite, path: Path) -> tuple[str, list[tuple[Row, int]]]:
    """(the format used, [(rule, tool, argument, config file, config line), trace line])
    of a file holding one run."""
    items = list(load_traces([path], suite))
    assert [i for i in items if isinstance(i, InputError)] == []
    [trace] = [i for i in items if isinstance(i, Trace)]
    out = []
    for v in evaluate(suite, items).violations:
        assert v.trace is not None
        config = Path(suite.root, v.config.file).relative_to(EXAMPLE).as_posix()
        out.append(((v.rule, v.tool, v.argument, config, v.config.line), v.trace.line))
    return trace.format, sorted(out)


def test_native_findings_are_the_expected_ones(suite: Suite) -> None:
    fmts, rows, _ = by_run(suite, [native(r) for r in RUNS])
    assert fmts == {"native"}
    expected = json.loads((EXAMPLE / "expected.json").read_text())
    for run in RUNS:
        want = sorted((r["rule"], r["tool"], r["argument"], r["config_file"], r["config_line"])
                      for r in expected if r["trace_file"] == f"traces/{run}.jsonl")
        assert sorted(rows[run]) == want
    # read by hand from expected.json / policies/customer.yaml / agent-eval.yaml:
    assert sorted(rows["discount-too-high"]) == [
        ("args_valid/maximum", "apply_discount", "percent", "policies/customer.yaml", 74)]
    assert sorted(rows["records-without-auth"]) == [
        ("sequence_valid/before", "get_customer", None, "agent-eval.yaml", 25),
        ("sequence_valid/require", "authenticate_user", None, "agent-eval.yaml", 22)]


@pytest.mark.parametrize("fmt", sorted(BY_INPUT))
def test_same_findings_as_native(suite: Suite, fmt: str) -> None:
    _, want, _ = by_run(suite, [native(r) for r in RUNS])
    paths = [FIXTURES / f for f in BY_INPUT[fmt]]
    fmts, got, lines = by_run(suite, paths)
    assert fmts == {fmt}
    for run in RUNS:
        assert sorted(got[run]) == sorted(want[run]), run
    # the findings point into the fixture files: the apply_discount call is on line 3 of
    # the OTLP file (its execute_tool span), on the line of its tool_calls object in the
    # chat message list, and on line 2 (the first response) of the Responses log
    [discount_line] = lines["discount-too-high"]
    text = (FIXTURES / BY_INPUT[fmt][0]).read_text().splitlines()
    assert "apply_discount" in "".join(text[discount_line - 1:discount_line + 5])


@pytest.mark.parametrize("run", RUNS)
def test_same_findings_in_every_file_of_one_run(suite: Suite, run: str) -> None:
    fmt, want = findings(suite, native(run))
    assert fmt == "native"
    for want_format, name in BY_FILE[run].items():
        path = FIXTURES / name
        fmt, got = findings(suite, path)
        assert fmt == want_format, name
        assert [row for row, _ in got] == [row for row, _ in want], name
        lines = path.read_text().splitlines()
        for (rule, tool, *_), line in got:
            if rule == "sequence_valid/require":  # a missing call: the trace's last line
                assert line == max(i for i, t in enumerate(lines, 1) if "jsonrpc" in t
                                   or t.strip().startswith(("{", "]"))), name
            else:  # the call's own line (or the response holding it) names its tool
                assert tool is not None and f'"{tool}"' in "".join(lines[line - 1:line + 12])


def test_the_discount_run_is_the_same_run(suite: Suite) -> None:
    """The fixtures hold the native run's calls and arguments, in its order."""
    def calls(path: Path) -> list[tuple[str, object]]:
        [t] = [i for i in load_traces([path], suite) if isinstance(i, Trace)]
        return [(c.name, c.arguments) for c in t.tool_calls]

    want = calls(native("discount-too-high"))
    assert want == [("authenticate_user", {"customer_id": "C-56012", "method": "sms"}),
                    ("get_customer", {"customer_id": "C-56012"}),
                    ("apply_discount", {"customer_id": "C-56012", "percent": 50,
                                        "code": "VIPS50"})]  # lines 3, 5, 7
    for name in BY_FILE["discount-too-high"].values():
        assert calls(FIXTURES / name) == want, name


# ------------------------------------------------------------ detection across formats
# Readers of formats that embed other formats' payloads, and their sample folders
MINE = ("anthropic", "claude_code", "inspect", "langchain", "langsmith", "mcp")
MY_DIRS = ("anthropic_messages", "claude_code_jsonl", "claude_code_stream_json", "inspect_ai",
           "langchain", "langsmith", "mcp")


def claimed(path: Path, names: tuple[str, ...]) -> list[str]:
    source = SourceFile(str(path), path.name, path.name)
    head = path.read_bytes()[:8192]
    return [name for name in names if READERS[name].sniff(head, source)]


def test_these_readers_claim_no_other_formats_fixtures() -> None:
    """The fixtures of the other formats (and every golden, which is native JSONL) are not
    taken by these readers, unless the registry tries the fixture's own reader first (a
    Managed Agents session's events carry the Anthropic reader's tool_use_id)."""
    order = list(READERS)
    others = [p for p in sorted(FIXTURES.glob("*/*"))
              if p.parent.name not in MINE or p.name.endswith(".native.jsonl")]
    assert len(others) > 40
    for path in others:
        own = "native" if path.name.endswith(".native.jsonl") else path.parent.name
        too_early = [name for name in claimed(path, MINE)
                     if order.index(name) < order.index(own)]
        assert too_early == [], path


@pytest.mark.usefixtures("samples")
def test_these_readers_claim_no_other_sample() -> None:
    """OpenAI, OTel, Codex and the other samples (and the letta expected-normalized outputs,
    which are not traces) are never taken by these readers, whatever the order."""
    others = [p for p in sorted(SAMPLES.glob("*/*")) if p.suffix != ".md" and (
        p.parent.name not in MY_DIRS or "expected-normalized" in p.name)]
    assert len(others) > 20
    for path in others:
        assert claimed(path, MINE) == [], path


def test_native_files_still_go_to_native() -> None:
    files = sorted((EXAMPLE / "traces").glob("*.jsonl"))
    assert len(files) == 10
    for path in files:
        source = SourceFile(str(path), path.name, path.name)
        reader = pick_reader(source, "auto")
        assert not isinstance(reader, InputError) and reader.name == "native", path
        assert claimed(path, MINE) == [], path
