"""`run --shard i/n` + `merge`: the merged results equal an unsharded run's, byte for byte
(with --no-timings), for 1, 2 and 7 shards over random small corpora."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import copy_example, read_results, within

from agent_eval._cli import main as cli
from agent_eval._version import __version__
from agent_eval.api import load_suite, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.errors import ConfigError
from agent_eval.limits import RESULTS
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
                  st.sampled_from(["S1", "S2", None, "S9", "s1"]),
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


def test_merge_never_lists_the_shard_count_a_part_claims(tmp_path: Path) -> None:
    """A part's `shard.count` is a stranger's number: 10**12 made merge build a list of a
    trillion indexes (MemoryError, an internal error; 3*10**7 took 12 s and over 2 GB).
    The missing shards are counted and the first 20 named."""
    write_corpus(tmp_path, [[("t1", "S1", [("auth", 1)], True, False)]])
    suite = load_suite(tmp_path / "agent-eval.yaml")
    sources, errors = suite_sources(suite, base=tmp_path)
    parts = [evaluate_shard(suite, sources, errors, index=i, count=2) for i in (1, 2)]
    for p in parts:
        assert p.shard is not None
        p.shard = replace(p.shard, count=10**12)
    with within(10, "merge"), pytest.raises(ConfigError) as caught:
        merge(suite, parts)
    assert caught.value.problems == [
        "merge: expected shards 1..1000000000000: shard(s) 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, "
        "13, 14, 15, 16, 17, 18, 19, 20, 21, 22 and 999999999978 more missing"]
    for p in parts:
        assert p.shard is not None
        p.shard = replace(p.shard, count=1)
    with pytest.raises(ConfigError) as caught:
        merge(suite, parts)
    assert caught.value.problems == ["merge: expected shards 1..1: shard(s) 2 beyond 1"]


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


def test_a_shard_is_not_compared_with_a_whole_base_run_only_the_merge_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # `run --shard 1/2 --baseline` compared one shard's part with a whole run: the other
    # shard's scenarios and findings read as removed. It is refused; merge --baseline is
    # where the comparison belongs.
    write_corpus(tmp_path, [[("t1", "S1", [("auth", 1), ("refund", 20)], True, False)],
                            [("t2", "S2", [("delete_all", 0)], False, False)]])
    monkeypatch.chdir(tmp_path)
    assert cli(["run", "-q", "--no-timings", "-o", "base"]) == 1
    capsys.readouterr()
    for option in (["--baseline", "base/results.json"], ["--baseline-ref", "HEAD"]):
        assert cli(["run", "-q", "--no-timings", "--shard", "1/2", "-o", "part1",
                    *option]) == 2
        err = capsys.readouterr().err
        assert ("--shard with --baseline/--baseline-ref would compare one shard's part "
                "with a whole run; run the shards without it, then give --baseline to "
                "merge") in err
        assert not (tmp_path / "part1" / "results.json").exists()
    for i in (1, 2):
        cli(["run", "-q", "--no-timings", "--shard", f"{i}/2", "-o", f"part{i}"])
    assert cli(["merge", "part*", "-q", "--no-timings", "-o", "merged",
                "--baseline", "base/results.json"]) == 1
    merged = read_results(tmp_path / "merged")
    # the same traces as the base run: nothing new, nothing gone
    findings = merged["baseline"]["findings"]
    assert findings["new"] == [] and findings["absent"] == [] and findings["unchanged"]
    assert merged["baseline"]["regressed"] == [] and merged["baseline"]["fixed"] == []


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


# ------------------------------------------------ shards that did not read the same traces
AUDIT_SUITE = """\
version: "1"
suite: t7
traces: traces/*.jsonl
tests: [{id: bl, metric: tool_blocklist, blocklist: [delete_customer]}]
"""


def audit_trace(trace_id: str, tool: str) -> str:
    return "".join(json.dumps(e) + "\n" for e in (
        {"type": "trace_start", "trace_id": trace_id},
        {"type": "tool_call", "id": "c1", "tool": tool, "arguments": {}},
        {"type": "trace_end"}))


def write_audit(root: Path, files: dict[str, str] | None = None) -> dict[str, str]:
    """The audit's corpus: t1..t8 call get_customer; bad.jsonl's bad2 (shard 2 of 2)
    calls delete_customer. Returns what was written under traces/."""
    if files is None:
        files = {f"t{i}.jsonl": audit_trace(f"tr{i}", "get_customer") for i in range(1, 9)}
        files["bad.jsonl"] = audit_trace("bad2", "delete_customer")
    root.mkdir(exist_ok=True)
    (root / "agent-eval.yaml").write_text(AUDIT_SUITE)
    (root / "traces").mkdir()
    for name, text in files.items():
        (root / "traces" / name).write_text(text)
    return files


def test_merge_refuses_shards_that_did_not_read_the_same_traces(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The audit's reproductions: shard 2 ran on a glob that matched nothing, on a copy
    whose traces/ was empty, on one file of nine. Each shard exits 0 (--fail-on never);
    the merge used to pass (exit 0) on 6 traces, as the only failing trace is shard 2's."""
    assert shard_of("bad2", 2) == 2 and {shard_of(f"tr{i}", 2) for i in range(1, 9)} == {
        1, 2}
    files = write_audit(tmp_path)
    size = sum(len(text) for text in files.values())  # ASCII: a byte a character
    monkeypatch.chdir(tmp_path)
    assert cli(["run", "-q", "-o", "full"]) == 1  # the unsharded run fails
    for i in (1, 2):
        assert cli(["run", "-q", "--shard", f"{i}/2", "-o", f"s{i}", "--fail-on",
                    "never"]) == 0
    assert cli(["merge", "s1", "s2", "-q", "-o", "good"]) == 1  # good shards: the same
    assert read_results(tmp_path / "s1")["shard"]["sources"]["files"] == 9
    assert read_results(tmp_path / "s1")["shard"]["sources"]["traces"] == 9
    assert read_results(tmp_path / "s1")["shard"]["sources"]["bytes"] == size
    capsys.readouterr()

    assert cli(["run", "-q", "--shard", "2/2", "--traces", "nothere/*.jsonl", "-o", "none",
                "--fail-on", "never"]) == 0
    part = read_results(tmp_path / "none")
    assert part["verdict"] == "error" and part["shard"]["traces_read"] == 0
    assert [e["rule"] for e in part["input_errors"]] == ["input/no_traces"]
    (tmp_path / "empty").mkdir()  # a checkout whose traces/ did not arrive
    (tmp_path / "empty" / "agent-eval.yaml").write_text(AUDIT_SUITE)
    (tmp_path / "empty" / "traces").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    assert cli(["run", "-q", "--shard", "2/2", "-o", "part", "--fail-on", "never"]) == 0
    monkeypatch.chdir(tmp_path)
    assert cli(["run", "-q", "--shard", "2/2", "--traces", "traces/t1.jsonl", "-o", "one",
                "--fail-on", "never"]) == 0
    capsys.readouterr()
    for part2, said in (("none", "0 trace(s) read from 0 file(s), 0 bytes"),
                        ("empty/part", "0 trace(s) read from 0 file(s), 0 bytes"),
                        ("one", f"1 trace(s) read from 1 file(s), {len(files['t1.jsonl'])} "
                                "bytes")):
        for fail_on in ("fail", "never"):  # refused, whatever --fail-on says
            assert cli(["merge", "s1", part2, "-q", "-o", "m", "--fail-on", fail_on]) == 2
            err = capsys.readouterr().err
            assert "merge: the shards did not read the same traces (the number of trace " \
                   "files and the number of traces differ)" in err, err
            assert f"shard 1: 9 trace(s) read from 9 file(s), {size} bytes\n" in err, err
            assert f"shard 2: {said}\n" in err, err
            assert ("empty checkout" in err) == (part2 != "one"), err
            assert not (tmp_path / "m").exists()  # nothing written


def test_merge_refuses_shards_that_read_other_traces_from_the_same_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Shard 2 ran on a checkout where a file has the same name and size but another
    trace in it: only what each shard read tells them apart. Shard 1 leaves bad2 to
    shard 2, which read bad9 instead and left it to shard 1: no shard checked either."""
    assert shard_of("bad2", 2) == 2 and shard_of("bad9", 2) == 1
    files = write_audit(tmp_path / "a")
    other = dict(files, **{"bad.jsonl": files["bad.jsonl"].replace("bad2", "bad9")})
    assert len(other["bad.jsonl"]) == len(files["bad.jsonl"])
    write_audit(tmp_path / "b", other)
    for i, root in ((1, "a"), (2, "b")):
        monkeypatch.chdir(tmp_path / root)
        assert cli(["run", "-q", "--shard", f"{i}/2", "-o", str(tmp_path / f"s{i}"),
                    "--fail-on", "never"]) == 0
    one, two = (read_results(tmp_path / f"s{i}")["shard"]["sources"] for i in (1, 2))
    assert one["files_digest"] == two["files_digest"] and one["traces"] == two["traces"]
    capsys.readouterr()
    monkeypatch.chdir(tmp_path / "a")
    assert cli(["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "-q", "-o", "m"]) == 2
    err = capsys.readouterr().err
    assert "did not read the same traces (the traces in them differ)" in err, err
    for i, digest in ((1, one["read_digest"]), (2, two["read_digest"])):
        assert f"shard {i}: 9 trace(s) read from 9 file(s), {one['bytes']} bytes, read " \
               f"digest {digest[:12]}\n" in err, err
    assert "empty checkout" not in err


def edit_part(folder: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = folder / "results.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_merge_carries_a_shards_own_input_errors_and_error_verdict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A part's input error that is not in its records (what the shard met itself) is in
    the merged results, marked with the shard, and makes their verdict error."""
    files = write_audit(tmp_path)
    files.pop("bad.jsonl")
    (tmp_path / "traces" / "bad.jsonl").unlink()  # all pass: only the carried error fails
    monkeypatch.chdir(tmp_path)
    for i in (1, 2):
        assert cli(["run", "-q", "--no-timings", "--shard", f"{i}/2", "-o", f"s{i}",
                    "--fail-on", "never"]) == 0
    assert cli(["merge", "s1", "s2", "-q", "-o", "good"]) == 0

    def add_error(data: dict[str, Any]) -> None:
        data["input_errors"].append({"rule": "input/unreadable_file",
                                     "file": "traces/t3.jsonl", "line": 0,
                                     "message": "cannot read it: I/O error"})
        data["counts"]["input_errors"] = 1
        data["verdict"] = "error"

    edit_part(tmp_path / "s2", add_error)
    for fail_on, code in (("fail", 2), ("never", 0)):
        assert cli(["merge", "s1", "s2", "-q", "--no-timings", "-o", "m",
                    "--fail-on", fail_on]) == code
        got = read_results(tmp_path / "m")
        assert got["verdict"] == "error"
        assert got["input_errors"] == [{"rule": "input/unreadable_file",
                                        "file": "traces/t3.jsonl", "line": 0,
                                        "message": "shard 2/2: cannot read it: I/O error"}]
        assert got["counts"]["input_errors"] == 1 and got["counts"]["traces"] == 8
    # (delete_customer is never called: a coverage note)
    assert ("error: 0 rule violations, 1 coverage finding (1 note) · 1 input error in 8 "
            "traces from 2 shard(s)") in capsys.readouterr().out


def test_merge_refuses_an_error_verdict_it_cannot_explain_or_a_part_without_sources(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    write_audit(tmp_path)
    (tmp_path / "traces" / "bad.jsonl").unlink()
    monkeypatch.chdir(tmp_path)
    for i in (1, 2):
        cli(["run", "-q", "--shard", f"{i}/2", "-o", f"s{i}", "--fail-on", "never"])
    shutil.copytree(tmp_path / "s2", tmp_path / "old")
    edit_part(tmp_path / "s2", lambda data: data.update(verdict="error"))
    capsys.readouterr()
    assert cli(["merge", "s1", "s2", "-q", "-o", "m", "--fail-on", "never"]) == 2
    assert "merge: the verdict of shard(s) 2 is `error`, but neither their input errors " \
           "nor their tests say why" in capsys.readouterr().err
    edit_part(tmp_path / "old", lambda data: data["shard"].pop("sources"))
    assert cli(["merge", "s1", "old", "-q", "-o", "m", "--fail-on", "never"]) == 2
    assert "merge: the partial results of shard(s) 2 do not say which trace files they " \
           "read" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_merge_of_shards_that_all_read_no_trace_equals_unsharded(tmp_path: Path) -> None:
    """A shard that read no trace says so (input/no_traces); when every shard read the
    same nothing, the merge says it once, as the unsharded run: here the glob's own
    error (shard 1's record), not shard 2's "no traces were read"."""
    write_audit(tmp_path, {})  # traces/ is empty: traces/*.jsonl matches nothing
    suite = load_suite(tmp_path / "agent-eval.yaml")
    sources, errors = suite_sources(suite, base=tmp_path)
    results = evaluate_files(suite, sources, errors, timings=False)
    [error] = results.input_errors
    assert error.rule == "input/no_traces" and error.message.startswith(
        "no trace file matches 'traces/*.jsonl'")
    whole = render(results, tmp_path)
    parts = [via_file(evaluate_shard(suite, sources, errors, index=i, count=2,
                                     timings=False)) for i in (1, 2)]
    assert parts[1].input_errors[0].message.startswith("no traces were read")
    assert render(merge(suite, parts, timings=False), tmp_path) == whole


def test_merge_reads_no_suite_file_outside_the_repository_because_a_part_names_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A part's `config` (its suite file, which merge loads when --config is not given)
    is read only inside the repository, never through a link leading out: a part naming
    a suite of its own outside it made merge load that suite, pass (exit 0) and write
    beside it; one naming a secrets file showed its keys in the config errors."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    write_audit(repo)  # bad2 calls delete_customer: the repository's suite fails
    (repo / ".git").mkdir()
    write_audit(outside, {"t.jsonl": audit_trace("tr1", "get_customer")})
    (outside / "agent-eval.yaml").write_text(
        AUDIT_SUITE + "output: {dir: written-here}\n")
    (outside / "secret.yaml").write_text("api_key: hunter2\n")
    (repo / "link.yaml").symlink_to(outside / "secret.yaml")
    monkeypatch.chdir(outside)  # the stranger's passing part, of a suite of its own
    assert cli(["run", "-q", "--shard", "1/1", "-o", str(tmp_path / "evil")]) == 0
    monkeypatch.chdir(repo)
    assert cli(["run", "-q", "--shard", "1/1", "-o", "good"]) == 1
    assert cli(["merge", "good", "-q", "-o", "m"]) == 1  # the part's own suite file
    capsys.readouterr()
    for named in (str(outside / "agent-eval.yaml"), "../outside/agent-eval.yaml",
                  str(outside / "secret.yaml"), "link.yaml"):
        def name_it(data: dict[str, Any], named: str = named) -> None:
            data["config"] = named

        edit_part(tmp_path / "evil", name_it)
        assert cli(["merge", str(tmp_path / "evil"), "-q", "-o", "m2"]) == 2, named
        err = capsys.readouterr().err
        if named != "link.yaml":  # a path that is not one inside: refused as it is read
            assert err.startswith(f"error: {tmp_path / 'evil' / 'results.json'} is not a "
                                  f"results file agent-eval wrote: its suite file {named!r} "
                                  "is not a path inside the repository"), err
            continue
        assert err == (f"error: {tmp_path / 'evil' / 'results.json'}: the suite file "
                       f"{named!r} it names (its `config`) leads outside the repository; "
                       "it is not read. Pass --config with the suite file the shards ran "
                       "with\n"), err
        assert "hunter2" not in err and not (repo / "m2").exists()
        assert not (outside / "written-here").exists()
    # --config is the operator's: taken as given
    assert cli(["merge", str(tmp_path / "evil"), "-q", "-o", "m3", "--config",
                str(outside / "agent-eval.yaml")]) == 0


def test_merge_says_which_part_it_cannot_replay_with_no_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A part's records, coverage and times are checked by the schema only loosely: a
    record without a trace's file, a scenario index past the suite's (or from its end,
    -1, which took another scenario's place), a time of 1e308 or below 0 were internal
    errors with a traceback (KeyError, IndexError, OverflowError) or a merged file off
    the results schema; each is an error naming the shard (exit 2), nothing written."""
    write_corpus(tmp_path, [[("t1", "S1", [("auth", 1), ("refund", 20)], True, False),
                             ("t2", "S2", [("delete_all", 0)], False, False)]])
    monkeypatch.chdir(tmp_path)
    for i in (1, 2):
        cli(["run", "-q", "--shard", f"{i}/2", "-o", f"s{i}", "--fail-on", "never"])
    assert cli(["merge", "s1", "s2", "-q", "-o", "good"]) == 1
    first = read_results(tmp_path / "s1")["shard"]["records"]
    scenario = next(k for k, r in enumerate(first) if "scenarios" in r)
    seq = first[scenario]["seq"]

    def no_file(data: dict[str, Any]) -> None:
        data["shard"]["records"].append({"seq": [99, 0], "trace": {"id": "x"}})

    def index(value: int) -> Callable[[dict[str, Any]], None]:
        def change(data: dict[str, Any]) -> None:
            data["shard"]["records"][scenario]["scenarios"][0]["index"] = value
        return change

    def seconds(value: float) -> Callable[[dict[str, Any]], None]:
        def change(data: dict[str, Any]) -> None:
            data["shard"]["seconds"] = {"args": value}
        return change

    def status(value: Any) -> Callable[[dict[str, Any]], None]:
        def change(data: dict[str, Any]) -> None:
            data["shard"]["records"][scenario]["scenarios"][0]["rows"][0][3] = value
        return change

    def unknown_id(data: dict[str, Any]) -> None:
        data["shard"]["records"][scenario]["unknown_ids"] = [5]

    record = "its record {} is not what `agent-eval run --shard` writes ({})"
    cases = [(no_file, record.format("[99, 0]", "ValueError: its trace is not a trace "
                                                   "summary of the results")),
             (index(2), record.format(seq, "IndexError: scenario index 2 out of range")),
             (index(-1), record.format(seq, "IndexError: scenario index -1 out of range")),
             # a row's status that is no status, or an unknown scenario id that is no
             # text: TypeError, IndexError and AttributeError with a traceback
             (status("x"), record.format(seq, "ValueError: a scenario row ['traces/f0.jsonl', "
                                              "1, 't1', 'x'] that no trace gives")),
             (status(99), record.format(seq, "ValueError: a scenario row ['traces/f0.jsonl', "
                                             "1, 't1', 99] that no trace gives")),
             (unknown_id, record.format(seq, "ValueError: a scenario id that is not text")),
             (seconds(1e308), "they give a test or scenario 1e+308 seconds (at most "
                              "1000000000)"),
             (seconds(-5.0), "they give a test or scenario -5.0 seconds (at most "
                             "1000000000)")]
    capsys.readouterr()
    for change, said in cases:
        shutil.rmtree(tmp_path / "bad", ignore_errors=True)
        shutil.copytree(tmp_path / "s1", tmp_path / "bad")
        edit_part(tmp_path / "bad", change)
        assert cli(["merge", "bad", "s2", "-q", "-o", "m", "--fail-on", "never"]) == 2, said
        err = capsys.readouterr().err
        assert err.startswith("error: merge: the partial results of shard 1 cannot be "
                              f"merged: {said}"), err
        assert "Traceback" not in err and not (tmp_path / "m").exists()


def test_a_merge_that_stops_leaves_no_earlier_results_in_its_output_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As `run` does (docs/outputs.md): a results.json and summary.md already in the
    output folder (an earlier merge's, or committed by the pull request, saying pass)
    were left there by a merge that stopped with exit 2, for a later `if: always()` step
    to publish as this merge's."""
    write_audit(tmp_path)
    monkeypatch.chdir(tmp_path)
    cli(["run", "-q", "--shard", "1/2", "-o", "s1", "--fail-on", "never"])
    planted = '{"verdict": "pass"}'
    for folder, argv in (("agent-eval-results", ["s1", "-q", "-f", "markdown"]),  # suite's
                         ("out", ["s1", "nothere", "-q", "-o", "out"])):  # --output-dir
        (tmp_path / folder).mkdir()
        for name in ("results.json", "summary.md", "keep.txt"):
            (tmp_path / folder / name).write_text(planted)
        assert cli(["merge", *argv]) == 2, folder  # shard 2 missing; a part not there
        assert sorted(p.name for p in (tmp_path / folder).iterdir()) == ["keep.txt"], folder


def test_strict_coverage_of_the_shards_holds_in_the_merge(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run --shard i/n --strict-coverage` decides no coverage (the merge does), and the
    flag was dropped unsaid: the merge made the never-called delete_customer a note and
    passed (exit 0) what the unsharded run with the flag fails (exit 1)."""
    write_audit(tmp_path)
    (tmp_path / "traces" / "bad.jsonl").unlink()  # nothing calls delete_customer
    monkeypatch.chdir(tmp_path)
    assert cli(["run", "-q", "--no-timings", "-o", "whole", "--strict-coverage"]) == 1
    assert cli(["run", "-q", "--no-timings", "-o", "loose"]) == 0  # a note without it
    for flags, code in (([], 0), (["--strict-coverage"], 1)):
        for i in (1, 2):
            assert cli(["run", "-q", "--no-timings", "--shard", f"{i}/2", "-o", f"s{i}",
                        *flags]) == 0  # no coverage in a shard
        assert cli(["merge", "s1", "s2", "-q", "--no-timings", "-o", "m"]) == code, flags
        [finding] = read_results(tmp_path / "m")["unexercised"]
        assert finding["severity"] == ("error" if flags else "note")
        assert (tmp_path / "m" / "results.json").read_bytes() == (
            tmp_path / ("whole" if flags else "loose") / "results.json").read_bytes()
    # the merge's own flag, as before
    edit_part(tmp_path / "s2", lambda data: data["shard"].pop("strict_coverage"))
    edit_part(tmp_path / "s1", lambda data: data["shard"].pop("strict_coverage"))
    assert cli(["merge", "s1", "s2", "-q", "-o", "m", "--strict-coverage"]) == 1


def test_a_shards_report_says_its_verdict_is_not_the_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Shard 1/2 of the audit's corpus holds 6 traces (tr2-tr7 by shard_of), none failing:
    its console, summary.md and report.html said a plain "pass" (`✅ t7: pass`), as a whole
    run's, of a run that fails; each now says it is one shard's, the merged run's not."""
    write_audit(tmp_path)
    monkeypatch.chdir(tmp_path)
    note = ("Partial results of shard 1/2: the verdict of this shard's traces only, without "
            "the other shards' traces, the suite criteria or coverage; merge the shards "
            "(agent-eval merge) for the run's verdict.")
    cli(["run", "--shard", "2/2", "-q", "-o", "s2", "--fail-on", "never"])
    capsys.readouterr()
    assert cli(["run", "--shard", "1/2", "-o", "s1", "-f", "markdown,html"]) == 0
    assert f"Verdict: PASS · 0 rule violations · 0 input errors\nnote: {note}\n" in (
        capsys.readouterr().out)
    assert cli(["run", "--shard", "1/2", "-q", "-o", "s1", "-f", "markdown,html"]) == 0
    assert capsys.readouterr().out == ("pass: 0 rule violations · 0 input errors in 6 "
                                       "traces (shard 1/2 only)\n")
    assert f"## ✅ t7: pass\n\nNo violations in 6 traces (6 tool calls)\n\n⚠️ {note}\n" in (
        tmp_path / "s1" / "summary.md").read_text()
    html_note = note.replace("'", "&#39;")
    assert f'<p class="reason" id="partial">{html_note}</p>' in (
        tmp_path / "s1" / "report.html").read_text()
    assert cli(["merge", "s1", "s2", "-o", "m", "-f", "markdown,html"]) == 1
    out = capsys.readouterr().out
    assert "Partial results" not in out and "shard" not in out.split("Wrote")[0]
    for name in ("summary.md", "report.html"):
        assert "Partial results" not in (tmp_path / "m" / name).read_text()


BLOCKED = """\
suite: forged
traces: traces/*.jsonl
tests:
  - id: block
    metric: tool_blocklist
    blocklist: [delete_*]
"""


def merged_with_shard_2_edited(root: Path, change: Callable[[dict[str, Any]], None],
                               capsys: pytest.CaptureFixture[str]) -> str:
    """What `merge` says (on stderr) of shard 1's part and a copy of shard 2's edited by
    ``change``; it must refuse them (exit 2) and write nothing."""
    shutil.rmtree(root / "bad", ignore_errors=True)
    shutil.copytree(root / "s2", root / "bad")
    edit_part(root / "bad", change)
    assert cli(["merge", "s1", "bad", "-q", "-o", "m"]) == 2
    assert not (root / "m").exists()
    return capsys.readouterr().err


def two_shards(root: Path) -> None:
    """Two shards of two traces: t1 (shard 1 of 2) passes, t4 (shard 2) calls a blocked
    tool, so the whole run fails; the parts in s1 and s2."""
    (root / "agent-eval.yaml").write_text(BLOCKED)
    (root / "traces").mkdir()
    (root / "traces" / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (
        {"type": "trace_start", "trace_id": "t1"}, {"type": "tool_call", "tool": "auth"},
        {"type": "trace_end"},
        {"type": "trace_start", "trace_id": "t4"},
        {"type": "tool_call", "tool": "delete_all"}, {"type": "trace_end"})))
    assert (shard_of("t1", 2), shard_of("t4", 2)) == (1, 2)
    assert cli(["run", "-q", "-o", "whole"]) == 1
    for i in (1, 2):
        cli(["run", "-q", "--shard", f"{i}/2", "-o", f"s{i}", "--fail-on", "never"])
    assert cli(["merge", "s1", "s2", "-q", "-o", "good"]) == 1


def test_merge_refuses_parts_whose_records_are_not_one_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Each case merged into a pass (exit 0) where the run fails: shard 2's records
    dropped, or only its findings; shard 1's part given again as shard 2 (t1 counted
    twice, t4 not at all); shard 2 emptied consistently (its traces and findings gone
    too: the records no longer hold every trace the shards read). A record given twice
    counted its trace twice. Shard 2's findings made notes in its records only (its
    results still list the error) merged into a pass too. Each is refused now (exit 2),
    nothing written."""
    monkeypatch.chdir(tmp_path)
    two_shards(tmp_path)

    def records(value: list[Any]) -> Callable[[dict[str, Any]], None]:
        def change(data: dict[str, Any]) -> None:
            data["shard"]["records"] = value
        return change

    def no_findings(data: dict[str, Any]) -> None:
        for rec in data["shard"]["records"]:
            rec.pop("violations", None)

    def as_shard_2(data: dict[str, Any]) -> None:
        data.update(read_results(tmp_path / "s1"))
        data["shard"]["index"] = 2

    def emptied(data: dict[str, Any]) -> None:
        data["shard"]["records"] = []
        data["traces"] = []
        data["tests"][0].update(violations=[], status="pass", traces_checked=0,
                                traces_failed=0, calls_checked=0)
        data["counts"].update(traces=0, tool_calls=0, violations=0)
        data["verdict"] = "pass"

    def as_notes(data: dict[str, Any]) -> None:  # its results still list an error
        for rec in data["shard"]["records"]:
            for finding in rec.get("violations", {}).get("block", []):
                finding["severity"] = "note"

    record = read_results(tmp_path / "s2")["shard"]["records"][0]
    assert record["seq"] == [1, 2]  # the file's FileRead, t1, t4
    edited = "the file was edited: run the shard again and merge the new results"
    again = "run the shards again and merge the new results"
    cases = [
        (records([]), "the partial results of shard 2 cannot be merged: its records hold "
                      f"0 trace(s), where its results list 1; {edited}"),
        (no_findings, "the partial results of shard 2 cannot be merged: its records hold "
                      f"0 finding(s) of test 'block', where its results list 1; {edited}"),
        (as_shard_2, "the record [1, 0] is given twice (shards 1 and 2 both hold it): the "
                     "parts are not one run's (a part given again as another shard, or "
                     f"edited); {again}"),
        (records([record, record]), "the record [1, 2] is given twice (shard 2 holds it "
                                    "twice): the parts are not one run's (a part given "
                                    f"again as another shard, or edited); {again}"),
        (emptied, "the parts' records hold 1 of the 2 trace(s) every shard read from the 1 "
                  "trace file(s): records were dropped or added (a part edited, or of "
                  f"another run); {again}"),
        (as_notes, "the partial results of shard 2 cannot be merged: its records hold 0 "
                   f"error finding(s) of test 'block', where its results list 1; {edited}"),
    ]
    capsys.readouterr()
    for change, said in cases:
        assert merged_with_shard_2_edited(tmp_path, change, capsys) == f"error: merge: {said}\n"


def test_merge_refuses_a_record_run_shard_cannot_have_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The schema checks a record's `seq` only: a trace id or a finding's message that is
    not text stopped the merge with a traceback (TypeError), a finding of a severity no
    run gives, or of a test the suite does not have, merged into a pass, a count below 0
    into counts below 0. Each is the shard's error now (exit 2), no traceback."""
    monkeypatch.chdir(tmp_path)
    two_shards(tmp_path)

    def edit(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
        def on_record(data: dict[str, Any]) -> None:
            change(data["shard"]["records"][0])
        return on_record

    def finding(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
        return edit(lambda rec: rec["violations"]["block"][0].update({key: value}))

    def trace_id(rec: dict[str, Any]) -> None:
        rec["trace"]["id"] = 5

    def other_test(rec: dict[str, Any]) -> None:
        rec["violations"] = {"nosuch": rec["violations"]["block"]}

    def calls(rec: dict[str, Any]) -> None:
        rec["calls"] = -1

    def formats(rec: dict[str, Any]) -> None:  # (dict() made it a mapping; a traceback)
        rec["formats"] = [["traces/t.jsonl", "native"]]

    bad_finding = "ValueError: a finding that is not one of the results' findings of test 'block'"
    cases = [(edit(trace_id), "ValueError: its trace is not a trace summary of the results"),
             (finding("message", 5), bad_finding),
             (finding("severity", "bogus"), bad_finding),
             (edit(other_test), "ValueError: findings of test 'nosuch', which "
                                "agent-eval.yaml does not have"),
             (edit(calls), "ValueError: calls is -1, not a count"),
             (edit(formats), "ValueError: its formats are not reader names by file")]
    capsys.readouterr()
    for change, said in cases:
        err = merged_with_shard_2_edited(tmp_path, change, capsys)
        assert err.startswith("error: merge: the partial results of shard 2 cannot be "
                              "merged: its record [1, 2] is not what `agent-eval run "
                              f"--shard` writes ({said}); "), err
        assert "Traceback" not in err


ROWS = """\
version: "1"
suite: rows
traces: traces/*.jsonl
scenarios:
  - id: S
    traces: traces/*.jsonl
    expect:
      forbidden_tools: [delete_*]
"""


def test_merge_refuses_a_part_whose_scenario_rows_are_not_its_results(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Shard 2's own results fail scenario S (t4 calls delete_all); its record's row of t4
    edited into a pass (its findings dropped), or dropped with the trace kept, merged into
    a pass (exit 0) where the run fails: only the tests' findings were held to the part's
    results. Refused now (exit 2). A trace file whose name the results show escaped (a
    bidirectional override) is the same trace in both: the run's parts still merge."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(ROWS)
    (tmp_path / "traces").mkdir()
    for name, tid, tool in (("t.jsonl", "t1", "auth"), ("b\u202eb.jsonl", "t4", "delete_all")):
        (tmp_path / "traces" / name).write_text("".join(json.dumps(e) + "\n" for e in (
            {"type": "trace_start", "trace_id": tid}, {"type": "tool_call", "tool": tool},
            {"type": "trace_end"})))
    assert (shard_of("t1", 2), shard_of("t4", 2)) == (1, 2)
    assert cli(["run", "-q", "-o", "whole"]) == 1
    for i in (1, 2):
        cli(["run", "-q", "--shard", f"{i}/2", "-o", f"s{i}", "--fail-on", "never"])
    assert read_results(tmp_path / "s2")["scenarios"][0]["traces_not_passed"] == [
        {"file": "traces/b\\u202eb.jsonl", "line": 1, "trace_id": "t4", "status": "fail"}]
    assert cli(["merge", "s1", "s2", "-q", "-o", "good"]) == 1

    def passed(data: dict[str, Any]) -> None:
        [entry] = data["shard"]["records"][0]["scenarios"]
        entry["rows"][0][3] = 0  # PASS
        entry["findings"] = []

    def dropped(data: dict[str, Any]) -> None:
        data["shard"]["records"][0].pop("scenarios")

    capsys.readouterr()
    for change in (passed, dropped):
        shutil.rmtree(tmp_path / "bad", ignore_errors=True)
        shutil.copytree(tmp_path / "s2", tmp_path / "bad")
        edit_part(tmp_path / "bad", change)
        assert cli(["merge", "s1", "bad", "-q", "-o", "m"]) == 2, change.__name__
        assert capsys.readouterr().err == (
            "error: merge: the partial results of shard 2 cannot be merged: its records "
            "hold other traces or trace statuses of scenario 'S' than its results list; "
            "the file was edited: run the shard again and merge the new results\n")
        assert not (tmp_path / "m").exists()


LATENCY = """\
version: "1"
suite: latency
traces: traces/*.jsonl
scenarios:
  - id: S
    traces: traces/*.jsonl
    expect:
      forbidden_tools: [delete_*]
pass_criteria:
  blocking: {max_latency_p95_ms: 1000}
"""


def test_merge_refuses_a_part_whose_figures_are_not_its_results(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """t4 (shard 2) took 5000 ms, so the run fails max_latency_p95_ms: 1000. Shard 2's
    record of t4 edited to 10 ms (its results still list latency_ms 5000) merged into a
    pass (exit 0): the merged criteria are worked out from the records' figures, which
    were held to nothing. Refused now (exit 2), nothing written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(LATENCY)
    (tmp_path / "traces").mkdir()
    for tid, ms in (("t1", 100), ("t4", 5000)):
        (tmp_path / "traces" / f"{tid}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (
            {"type": "trace_start", "trace_id": tid}, {"type": "tool_call", "tool": "auth"},
            {"type": "trace_end", "duration_ms": ms})))
    assert (shard_of("t1", 2), shard_of("t4", 2)) == (1, 2)
    assert cli(["run", "-q", "-o", "whole"]) == 1
    for i in (1, 2):
        cli(["run", "-q", "--shard", f"{i}/2", "-o", f"s{i}", "--fail-on", "never"])
    assert read_results(tmp_path / "s2")["scenarios"][0]["metrics"]["latency_ms"] == 5000
    assert cli(["merge", "s1", "s2", "-q", "-o", "good"]) == 1

    def faster(data: dict[str, Any]) -> None:
        [entry] = data["shard"]["records"][0]["scenarios"]
        assert entry["rows"][0][2] == "t4" and 5000.0 in entry["figures"]
        entry["figures"] = [10.0 if x == 5000.0 else x for x in entry["figures"]]

    capsys.readouterr()
    shutil.copytree(tmp_path / "s2", tmp_path / "bad")
    edit_part(tmp_path / "bad", faster)
    assert cli(["merge", "s1", "bad", "-q", "-o", "m"]) == 2
    assert capsys.readouterr().err == (
        "error: merge: the partial results of shard 2 cannot be merged: its records hold "
        "other metrics of scenario 'S' than its results list; the file was edited: run the "
        "shard again and merge the new results\n")
    assert not (tmp_path / "m").exists()


def test_merge_refuses_parts_another_agent_eval_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A part's records are what the agent-eval that wrote it found in the traces: a part
    of another version (a job that installed another release, an old artifact) was merged
    as this version's, under this version's name. Refused now (exit 2), naming the shard
    and its version, nothing written."""
    monkeypatch.chdir(tmp_path)
    two_shards(tmp_path)

    def other_version(data: dict[str, Any]) -> None:
        data["tool"]["version"] = "0.0.9"

    capsys.readouterr()
    assert merged_with_shard_2_edited(tmp_path, other_version, capsys) == (
        f"error: merge: the parts were written by another agent-eval than this one "
        f"({__version__}): shard(s) 2 by agent-eval '0.0.9'; run every shard and the merge "
        "with the same version (pin it in every job), then merge again\n")


def test_a_part_too_large_to_read_is_said_plainly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A part over the size a results file may hold (a sparse file: nothing is written)
    was refused as "…is not read: it the file is larger than … (limits.max_file_bytes)",
    a sentence broken in two and naming a suite setting that does not bound results
    files. Exit 2, read nothing, said plainly."""
    monkeypatch.chdir(tmp_path)
    two_shards(tmp_path)
    with open(tmp_path / "huge.json", "wb") as fh:
        fh.truncate(RESULTS.max_file_bytes + 1)
    capsys.readouterr()
    with within(10, "merge"):
        assert cli(["merge", "s1", "huge.json", "-q", "-o", "m"]) == 2
    assert capsys.readouterr().err == (
        f"error: huge.json is not read: it is larger than {RESULTS.max_file_bytes} bytes, "
        "the most a results file may hold\n")
    assert not (tmp_path / "m").exists()


UNEXERCISED = """\
version: "1"
suite: coverage
traces: traces/*.jsonl
unexercised: error
tests:
  - id: seq
    metric: sequence_valid
    rules:
      - {type: before, first: auth, then: [refund]}
"""


def test_merge_refuses_a_part_whose_coverage_is_not_the_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """No trace calls `refund`, an error under `unexercised: error` (exit 1). Shard 2's
    `shard.coverage` edited to claim it called (its results hold nothing to say
    otherwise) merged into a pass (exit 0). Every shard now works out the coverage of
    every trace, so the parts' coverage is the same, and a part whose coverage differs is
    refused (exit 2), nothing written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(UNEXERCISED)
    (tmp_path / "traces").mkdir()
    for tid, tool in (("t1", "auth"), ("t4", "lookup")):
        (tmp_path / "traces" / f"{tid}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (
            {"type": "trace_start", "trace_id": tid}, {"type": "tool_call", "tool": tool},
            {"type": "trace_end"})))
    assert (shard_of("t1", 2), shard_of("t4", 2)) == (1, 2)
    assert cli(["run", "-q", "--no-timings", "-o", "whole"]) == 1
    for i in (1, 2):
        cli(["run", "-q", "--no-timings", "--shard", f"{i}/2", "-o", f"s{i}",
             "--fail-on", "never"])
    # auth (reference 0, test 0) is called in shard 1's trace; both shards say so
    for i in (1, 2):
        assert read_results(tmp_path / f"s{i}")["shard"]["coverage"] == {
            "matched": [0], "touched": [0], "names": ["auth", "lookup"]}
    assert cli(["merge", "s1", "s2", "-q", "--no-timings", "-o", "good"]) == 1
    assert (tmp_path / "good" / "results.json").read_bytes() == (
        tmp_path / "whole" / "results.json").read_bytes()

    def refund_called(data: dict[str, Any]) -> None:
        data["shard"]["coverage"]["matched"] = [0, 1]

    capsys.readouterr()
    shutil.copytree(tmp_path / "s2", tmp_path / "bad")
    edit_part(tmp_path / "bad", refund_called)
    assert cli(["merge", "s1", "bad", "-q", "-o", "m"]) == 2
    assert capsys.readouterr().err == (
        "error: merge: the shards' coverage differs (shard(s) 1 / shard(s) 2): every shard "
        "works out what the calls of every trace exercised, so their parts are not one "
        "run's (a part edited, or of another run); run the shards again and merge the new "
        "results\n")
    assert not (tmp_path / "m").exists()


UNKNOWN = """\
version: "1"
suite: unknown
traces: traces/*.jsonl
scenarios:
  - id: REFUND-001
    expect:
      forbidden_tools: [delete_*]
"""


def test_merge_refuses_a_part_whose_traces_or_unknown_ids_are_not_its_results(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """t4 (shard 2) names REFUND-01, which no scenario has: a scenario/unknown_id warning,
    exit 1 under --fail-on warn. Its record's unknown id dropped merged into a pass (exit
    0), and so did the scenario its record's trace names made REFUND-001 as well: only
    the number of a part's traces was held to its results. Each is refused now (exit 2),
    nothing written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(UNKNOWN)
    (tmp_path / "traces").mkdir()
    for tid, named in (("t1", "REFUND-001"), ("t4", "REFUND-01")):
        (tmp_path / "traces" / f"{tid}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (
            {"type": "trace_start", "trace_id": tid, "scenario": named},
            {"type": "tool_call", "tool": "auth"}, {"type": "trace_end"})))
    assert (shard_of("t1", 2), shard_of("t4", 2)) == (1, 2)
    assert cli(["run", "-q", "-o", "whole", "--fail-on", "warn"]) == 1
    for i in (1, 2):
        cli(["run", "-q", "--shard", f"{i}/2", "-o", f"s{i}", "--fail-on", "never"])
    [record] = read_results(tmp_path / "s2")["shard"]["records"]
    assert record["unknown_ids"] == ["REFUND-01"] and "scenarios" not in record
    assert cli(["merge", "s1", "s2", "-q", "-o", "good", "--fail-on", "warn"]) == 1

    def dropped(data: dict[str, Any]) -> None:
        data["shard"]["records"][0].pop("unknown_ids")

    def renamed(data: dict[str, Any]) -> None:
        data["shard"]["records"][0].pop("unknown_ids")
        data["shard"]["records"][0]["trace"]["scenario"] = "REFUND-001"

    cases = [(dropped, "other unknown scenario ids for trace 't4' than the scenario it "
                       "names"),
             (renamed, "other traces than its results list (first trace 't4')")]
    capsys.readouterr()
    for change, said in cases:
        shutil.rmtree(tmp_path / "bad", ignore_errors=True)
        shutil.copytree(tmp_path / "s2", tmp_path / "bad")
        edit_part(tmp_path / "bad", change)
        assert cli(["merge", "s1", "bad", "-q", "-o", "m", "--fail-on", "warn"]) == 2
        assert capsys.readouterr().err == (
            f"error: merge: the partial results of shard 2 cannot be merged: its records "
            f"hold {said}; the file was edited: run the shard again and merge the new "
            "results\n"), change.__name__
        assert not (tmp_path / "m").exists()


def test_merge_refuses_a_trace_record_where_no_trace_file_gives_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A passing trace added to shard 2 (its record and its results alike) at a place no
    trace file has ([0, k] is the glob's notes, past the files the live probes' sessions
    in shard 1) was not counted against the traces every shard read, so it merged, one
    trace more in the pass rates. Refused now (exit 2), nothing written."""
    monkeypatch.chdir(tmp_path)
    two_shards(tmp_path)
    shard1 = read_results(tmp_path / "s1")
    [t1] = [r for r in shard1["shard"]["records"] if "trace" in r]

    def added(seq: list[int]) -> Callable[[dict[str, Any]], None]:
        def change(data: dict[str, Any]) -> None:
            data["shard"]["records"].append({**t1, "seq": seq})
            # the results list the traces in the order of their records
            data["traces"].insert(0 if seq < [1] else len(data["traces"]), t1["trace"])
            data["counts"]["traces"] += 1
            data["tests"][0]["traces_checked"] += 1
        return change

    capsys.readouterr()
    for seq in ([0, 7], [2, 0], [1], []):
        err = merged_with_shard_2_edited(tmp_path, added(seq), capsys)
        assert err == (f"error: merge: the partial results of shard 2 cannot be merged: its "
                       f"record {seq} holds a trace where no trace file gives one; the file "
                       "was edited: run the shard again and merge the new results\n"), err


def test_the_bundled_example_sharded_2_to_4_ways_merges_into_the_unsharded_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run` once, and `run --shard i/N` for N = 2, 3, 4 then `merge`: the same
    results.json, SARIF, JUnit and summary (with --no-timings), and the same exit code."""
    (tmp_path / ".git").mkdir()
    copy_example(tmp_path)
    monkeypatch.chdir(tmp_path)
    formats = ["-f", "sarif,junit,markdown", "--no-timings", "-q"]
    assert cli(["run", *formats, "-o", "whole"]) == 1
    names = ("results.json", "results.sarif", "junit.xml", "summary.md")
    for count in (2, 3, 4):
        for i in range(1, count + 1):
            cli(["run", "-q", "--no-timings", "--shard", f"{i}/{count}", "-o",
                 f"n{count}/part{i}", "--fail-on", "never"])
        assert cli(["merge", f"n{count}/part*", *formats, "-o", f"merged{count}"]) == 1
        for name in names:
            assert (tmp_path / f"merged{count}" / name).read_bytes() == (
                tmp_path / "whole" / name).read_bytes(), (count, name)


RATIO = """\
version: "1"
suite: ratio
traces: traces/*.jsonl
scenarios:
  - id: R
    min_pass_ratio: 0.5
    expect:
      output: {contains: [done]}
    thresholds: {max_cost_usd: 0.05}
pass_criteria:
  blocking: {min_pass_rate: 1.0}
"""


@pytest.mark.parametrize("failing", [2, 3])
def test_a_scenario_whose_traces_fall_in_several_shards_is_judged_as_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: int) -> None:
    """Scenario R's traces, spread over the shards: 2 of 4 pass (one says no `done`, one
    costs 0.2 over max_cost_usd 0.05), min_pass_ratio 0.5 tolerates it (exit 0); 2 of 5
    do not (exit 1). Each shard alone sees too few of them to decide; the merge decides
    as the unsharded run, byte for byte."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(RATIO)
    (tmp_path / "traces").mkdir()
    traces = [("r1", "done", 0.01), ("r2", "done", 0.01), ("r3", "sorry", 0.01),
              ("r4", "done", 0.2), ("r5", "sorry", 0.01)][:2 + failing]
    for tid, output, cost in traces:
        (tmp_path / "traces" / f"{tid}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (
            {"type": "trace_start", "trace_id": tid, "scenario": "R"},
            {"type": "output", "output": output},
            {"type": "trace_end", "cost_usd": cost})))
    expected = 0 if failing == 2 else 1
    assert cli(["run", "-q", "--no-timings", "-o", "whole", "-f", "sarif,junit"]) == expected
    [scenario] = read_results(tmp_path / "whole")["scenarios"]
    assert (scenario["traces_passed"], scenario["traces_total"]) == (2, 2 + failing)
    for count in (2, 3, 4):
        assert len({shard_of(t[0], count) for t in traces}) > 1, count
        for i in range(1, count + 1):
            cli(["run", "-q", "--no-timings", "--shard", f"{i}/{count}", "-o",
                 f"n{count}/part{i}", "--fail-on", "never"])
        assert cli(["merge", f"n{count}/part*", "-q", "--no-timings", "-o",
                    f"merged{count}", "-f", "sarif,junit"]) == expected
        for name in ("results.json", "results.sarif", "junit.xml"):
            assert (tmp_path / f"merged{count}" / name).read_bytes() == (
                tmp_path / "whole" / name).read_bytes(), (count, name)


def test_merge_refuses_records_that_are_not_what_every_shard_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A trace file's broken line is an input error (exit 2); shard 1 holds the reader's
    record of it. Shard 1's part rewritten without it (its record, its results' input
    error, counts and verdict alike) merged into a pass (exit 0): nothing held the records
    to what the shards read. Every shard's `sources.read_digest` is of every item read;
    the records of all the parts must give it back, so the edit is refused (exit 2)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(BLOCKED)
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (
        {"type": "trace_start", "trace_id": "t1"}, {"type": "tool_call", "tool": "auth"},
        {"type": "trace_end"})) + "{broken\n")
    assert cli(["run", "-q", "-o", "whole"]) == 2
    for i in (1, 2):
        cli(["run", "-q", "--shard", f"{i}/2", "-o", f"s{i}", "--fail-on", "never"])
    assert cli(["merge", "s1", "s2", "-q", "-o", "good"]) == 2

    def no_error(data: dict[str, Any]) -> None:
        records = data["shard"]["records"]
        assert [r["input_errors"][0]["rule"] for r in records if "input_errors" in r] == [
            "input/parse_error"]
        data["shard"]["records"] = [r for r in records if "input_errors" not in r]
        data["input_errors"] = []
        data["counts"]["input_errors"] = 0
        data["verdict"] = "pass"

    def note_added(data: dict[str, Any]) -> None:  # (at no place: seq [])
        data["shard"]["records"].append({"seq": [], "ignored": {"traces/t.jsonl": 9}})

    capsys.readouterr()
    for change in (no_error, note_added):
        shutil.rmtree(tmp_path / "bad", ignore_errors=True)
        shutil.copytree(tmp_path / "s1", tmp_path / "bad")
        edit_part(tmp_path / "bad", change)
        assert cli(["merge", "bad", "s2", "-q", "-o", "m"]) == 2, change.__name__
        assert capsys.readouterr().err == (
            "error: merge: the parts' records are not the traces and reader notes every "
            "shard read (`sources.read_digest`): records were dropped, added or edited (a "
            "part edited, or of another run); run the shards again and merge the new "
            "results\n")
        assert not (tmp_path / "m").exists()
