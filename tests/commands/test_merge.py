"""`run --shard i/n` + `merge`: the merged results equal an unsharded run's, byte for byte
(with --no-timings), for 1, 2 and 7 shards over random small corpora."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import read_results

from agent_eval._cli import main as cli
from agent_eval.api import load_suite, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.errors import ConfigError
from agent_eval.renderers import RENDERERS, RenderContext
from agent_eval.results import Results
from agent_eval.sharding import evaluate_shard, merge, parse_shard, shard_of

SUITE = """\
version: "1"
suite: shards
traces: traces/*.jsonl
tests:
  - id: args
    metric: args_valid
    policy: policy.yaml
  - id: order
    metric: sequence_valid
    rules:
      - {type: before, first: auth, then: [refund]}
      - {type: count, tool: email, max: 1}
  - id: block
    metric: tool_blocklist
    blocklist: [delete_*]
scenarios:
  - id: S1
    category: happy_path
    expect:
      tools: [auth, refund]
      sequence: [auth, refund]
      output: {contains: [done]}
    thresholds: {max_tool_calls: 3}
  - id: S2
    category: edge_case
    required: true
    expect:
      forbidden_tools: [delete_*]
      args: {refund: {amount: {max: 50}}}
pass_criteria:
  blocking: {min_pass_rate: 0.5}
  by_category: {happy_path: 1.0}
"""

POLICY = """\
version: "1"
tools:
  refund:
    arguments:
      amount: {type: integer, max: 100, required: true}
  email:
    arguments:
      to: {type: string, pattern: "^[a-z]+@x$"}
"""

call = st.tuples(st.sampled_from(["auth", "refund", "email", "delete_all", "lookup"]),
                 st.integers(min_value=0, max_value=200))
trace = st.tuples(st.sampled_from(["t1", "t2", "t3", "t4", "a", "b", "c", "dup"]),
                  st.sampled_from(["S1", "S2", None, "S9"]),
                  st.lists(call, max_size=4), st.booleans(), st.booleans())
corpus = st.lists(st.lists(trace, min_size=0, max_size=4), min_size=1, max_size=4)


Trace = tuple[str, str | None, list[tuple[str, int]], bool, bool]


def write_corpus(root: Path, files: list[list[Trace]]) -> None:
    (root / "agent-eval.yaml").write_text(SUITE)
    (root / "policy.yaml").write_text(POLICY)
    (root / "traces").mkdir()
    for n, traces in enumerate(files):
        lines = []
        for tid, scenario, calls, done, broken in traces:
            start: dict[str, object] = {"type": "trace_start", "trace_id": tid}
            if scenario:
                start["scenario"] = scenario
            lines.append(json.dumps(start))
            for k, (tool, amount) in enumerate(calls):
                args: dict[str, object] = {"amount": amount} if tool == "refund" else (
                    {"to": "bob@x" if amount % 2 else "Bob"} if tool == "email" else {})
                lines.append(json.dumps({"type": "tool_call", "id": f"c{k}", "tool": tool,
                                         "arguments": args}))
            if broken:
                lines.append("{not json")
            lines.append(json.dumps({"type": "output",
                                     "output": "done" if done else "sorry"}))
            lines.append(json.dumps({"type": "trace_end"}))
        (root / "traces" / f"f{n}.jsonl").write_text("\n".join(lines) + ("\n" if lines else ""))


def render(results: Results, root: Path) -> dict[str, str]:
    ctx = RenderContext.for_root(root)
    return {name: RENDERERS[name].render(results, ctx)
            for name in ("json", "sarif", "markdown", "junit", "html")}


def via_file(results: Results) -> Results:
    """A shard's results as `merge` reads them: through results.json."""
    text = RENDERERS["json"].render(results, RenderContext())
    return Results.from_dict(json.loads(text))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus)
def test_merge_equals_unsharded(files: list[list[Trace]]) -> None:
    root = Path(tempfile.mkdtemp())
    try:
        write_corpus(root, files)
        suite = load_suite(root / "agent-eval.yaml")
        sources, errors = suite_sources(suite, base=root)
        whole = render(evaluate_files(suite, sources, errors, timings=False), root)
        for count in (1, 2, 7):
            parts = [via_file(evaluate_shard(suite, sources, errors, index=i, count=count,
                                             timings=False)) for i in range(1, count + 1)]
            assert sum(p.counts["traces"] for p in parts) == json.loads(
                whole["json"])["counts"]["traces"]
            merged = render(merge(suite, parts, timings=False), root)
            assert merged == whole, count
    finally:
        shutil.rmtree(root)


def test_shard_of_is_stable_and_spread() -> None:
    assert shard_of("trace-1", 4) == shard_of("trace-1", 4)
    assert {shard_of(f"t{i}", 4) for i in range(100)} == {1, 2, 3, 4}
    assert parse_shard("2/7") == (2, 7)
    for bad in ("0/2", "3/2", "x", "1/0"):
        with pytest.raises(ValueError):
            parse_shard(bad)


def test_merge_refuses_missing_or_foreign_parts(tmp_path: Path) -> None:
    write_corpus(tmp_path, [[("t1", "S1", [("auth", 1)], True, False)],
                            [("t2", "S2", [("refund", 80)], False, False)]])
    suite = load_suite(tmp_path / "agent-eval.yaml")
    sources, errors = suite_sources(suite, base=tmp_path)
    parts = [evaluate_shard(suite, sources, errors, index=i, count=3) for i in (1, 2, 3)]
    with pytest.raises(ConfigError, match=r"shard\(s\) 3 missing"):
        merge(suite, parts[:2])
    with pytest.raises(ConfigError, match="given twice"):
        merge(suite, [parts[0], parts[0], parts[1]])
    with pytest.raises(ConfigError, match="not a shard"):
        merge(suite, [evaluate_files(suite, sources, errors)])
    (tmp_path / "policy.yaml").write_text(POLICY.replace("max: 100", "max: 90"))
    with pytest.raises(ConfigError, match="another version"):
        merge(load_suite(tmp_path / "agent-eval.yaml"), parts)


def test_cli_shards_and_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_corpus(tmp_path, [[("t1", "S1", [("auth", 1), ("refund", 20)], True, False),
                             ("t2", "S2", [("delete_all", 0)], False, False)],
                            [("t3", "S1", [("refund", 300), ("email", 2)], True, False)]])
    monkeypatch.chdir(tmp_path)
    assert cli(["run", "-q", "--no-timings", "-o", "whole", "-f", "sarif,markdown"]) == 1
    for i in (1, 2):
        cli(["run", "-q", "--no-timings", "--shard", f"{i}/2", "-o", f"part{i}",
             "-f", "sarif"])
    sarif = json.loads((tmp_path / "part2" / "results.sarif").read_text())
    assert sarif["runs"][0]["automationDetails"]["id"] == "agent-eval/shards/shard-2-of-2/"
    part = read_results(tmp_path / "part1")
    assert part["shard"]["index"] == 1 and part["shard"]["count"] == 2
    assert cli(["merge", "part*", "-q", "--no-timings", "-o", "merged",
                "-f", "sarif,markdown"]) == 1
    for name in ("results.json", "results.sarif", "summary.md"):
        assert (tmp_path / "merged" / name).read_bytes() == (
            tmp_path / "whole" / name).read_bytes(), name


def test_merge_of_a_file_with_more_input_errors_than_listed(tmp_path: Path) -> None:
    """A file's input errors beyond limits.max_input_errors are counted in one more
    error: every output of the merged shards is still the unsharded run's."""
    write_corpus(tmp_path, [[(f"t{i}", "S1", [("auth", 1)], True, True) for i in range(6)],
                            [("u", "S2", [("refund", 80)], False, True)]])
    (tmp_path / "agent-eval.yaml").write_text(SUITE + "limits: {max_input_errors: 2}\n")
    suite = load_suite(tmp_path / "agent-eval.yaml")
    sources, errors = suite_sources(suite, base=tmp_path)
    results = evaluate_files(suite, sources, errors, timings=False)
    assert [(e.rule, e.file) for e in results.input_errors] == [
        ("input/parse_error", "traces/f0.jsonl"), ("input/parse_error", "traces/f0.jsonl"),
        ("input/limit_exceeded", "traces/f0.jsonl"), ("input/parse_error", "traces/f1.jsonl")]
    assert results.input_errors[2].message.startswith(
        "4 more input error(s) on lines 13-28 are counted, not listed (4 input/parse_error)")
    whole = render(results, tmp_path)
    assert "limits.max_input_errors" in whole["junit"] and "input/limit_exceeded" in (
        whole["sarif"]) and "limits.max_input_errors" in whole["html"]
    for count in (1, 2, 3):
        parts = [via_file(evaluate_shard(suite, sources, errors, index=i, count=count,
                                         timings=False)) for i in range(1, count + 1)]
        assert render(merge(suite, parts, timings=False), tmp_path) == whole, count
