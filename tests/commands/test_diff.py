"""`agent-eval diff BASE.json HEAD.json` and `run --baseline FILE`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.conftest import copy_example, read_results

from agent_eval._cli import main as cli

SUITE = """\
version: "1"
suite: d
traces: traces/*.jsonl
tests:
  - id: args
    metric: args_valid
    policy: policy.yaml
output: {format: [sarif, markdown, html]}
"""


def setup(root: Path, amounts: list[int], limit: int = 100) -> None:
    (root / "traces").mkdir(parents=True, exist_ok=True)
    (root / "agent-eval.yaml").write_text(SUITE)
    (root / "policy.yaml").write_text(
        f'version: "1"\ntools:\n  refund:\n    arguments:\n      amount: {{max: {limit}}}\n')
    for i, amount in enumerate(amounts):
        (root / "traces" / f"t{i}.jsonl").write_text(json.dumps(
            {"type": "tool_call", "tool": "refund", "arguments": {"amount": amount}}) + "\n")


def test_run_baseline_and_diff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    setup(tmp_path, [150, 50])
    assert cli(["run", "-q", "--no-timings", "-o", "base"]) == 1
    setup(tmp_path, [150, 250, 50], limit=120)
    (tmp_path / "traces" / "t1.jsonl").write_text(json.dumps(
        {"type": "tool_call", "tool": "refund", "arguments": {"amount": 250}}) + "\n")
    assert cli(["run", "-q", "--no-timings", "-o", "head", "--baseline",
                "base/results.json"]) == 1
    data = read_results(tmp_path / "head")
    b = data["baseline"]
    assert b["source"] == {"kind": "file", "path": "base/results.json"}
    assert b["new_violations"] == 1 and b["unchanged_violations"] == 1
    assert b["policy"]["message"] == "policy changed: 0 rules added, 0 removed, 1 changed"
    sarif = json.loads((tmp_path / "head" / "results.sarif").read_text())
    states = sorted(r["baselineState"] for r in sarif["runs"][0]["results"])
    assert states == ["new", "unchanged"]
    md = (tmp_path / "head" / "summary.md").read_text()
    assert "### 🆕 New violations (1)" in md and "Unchanged findings (1)" in md
    html = (tmp_path / "head" / "report.html").read_text()
    assert "with-base" in html
    capsys.readouterr()

    # diff: the same comparison from the two files
    code = cli(["diff", "base/results.json", "head/results.json"])
    out = capsys.readouterr().out
    assert code == 1
    assert "policy changed: 0 rules added, 0 removed, 1 changed" in out
    assert "violations: 1 new, 1 unchanged, 0 absent" in out
    assert "new error: args_valid/maximum" in out
    for fmt in ("json", "markdown", "sarif", "html"):
        assert cli(["diff", "base/results.json", "head/results.json", "-f", fmt,
                    "-o", f"diff/out.{fmt}"]) == 1
    d = json.loads((tmp_path / "diff" / "out.json").read_text())
    assert d["baseline"]["new_violations"] == 1
    assert "New violations (1)" in (tmp_path / "diff" / "out.markdown").read_text()
    # diff against itself: nothing new
    assert cli(["diff", "head/results.json", "head/results.json", "-o", "same.txt"]) == 1
    assert "violations: 0 new, 2 unchanged, 0 absent" in (tmp_path / "same.txt").read_text()


def test_diff_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.json").write_text("{}")
    assert cli(["diff", "x.json", "y.json"]) == 2
    assert "not an agent-eval results file" in capsys.readouterr().err
    setup(tmp_path, [1])
    cli(["run", "-q", "-o", "r"])
    assert cli(["diff", "r/results.json", "r/results.json", "-f", "junit"]) == 2
    assert cli(["run", "-q", "--baseline", "nope.json"]) == 2
    assert cli(["run", "-q", "--shard", "3/2"]) == 2


def test_html_shows_base_and_head_side_by_side(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_eval.renderers.html import render as html
    from agent_eval.results import Results

    monkeypatch.chdir(tmp_path)
    copy_example(tmp_path / "cs")
    monkeypatch.chdir(tmp_path / "cs")
    cli(["run", "-q", "--no-timings", "-o", "base"])
    t = tmp_path / "cs" / "traces" / "refund-happy.jsonl"
    t.write_text(t.read_text().replace('"currency":"USD","reason"', '"currency":"EUR","reason"'))
    cli(["run", "-q", "--no-timings", "-o", "head", "--baseline", "base/results.json"])
    page = html(Results.load("head/results.json"))
    assert "Against the base branch (base/results.json): 1 regression(s) (REFUND-001)" in page
    assert "<button type=\"button\">base status</button>" in page
    assert '<span class="change c-regression">regression</span>' in page
    assert '<table class="metrics with-base">' in page


def test_sarif_with_baseline_state_is_valid_for_the_schema_and_github(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """baselineState (new / unchanged) and a shard's automationDetails.id pass the schema
    and the official validator with GitHub's rules (as tests/renderers/test_sarif.py)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "renderers" / "test_sarif.py"
    spec = importlib.util.spec_from_file_location("_sarif_checks", path)
    assert spec is not None and spec.loader is not None
    checks = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, checks)
    spec.loader.exec_module(checks)

    monkeypatch.chdir(tmp_path)
    setup(tmp_path, [150, 50])
    cli(["run", "-q", "--no-timings", "-o", "base"])
    setup(tmp_path, [150, 250])
    cli(["run", "-q", "--no-timings", "-o", "head", "--baseline", "base/results.json"])
    cli(["run", "-q", "--no-timings", "-o", "shard", "--shard", "1/2", "-f", "sarif"])
    files = [tmp_path / "head" / "results.sarif", tmp_path / "shard" / "results.sarif"]
    for f in files:
        assert checks.schema_errors(json.loads(f.read_text())) == []
    (tmp_path / "shard.sarif").write_bytes(files[1].read_bytes())
    found = checks.multitool([files[0], tmp_path / "shard.sarif"], tmp_path)
    assert found == {"results.sarif": [], "shard.sarif": []}


def test_a_shards_partial_results_are_no_baseline(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """One shard's results hold only its traces and no criteria: compared as a base run,
    they made a regression look like none (a base pass rate of 0, a drop below 0). As a
    baseline, or on either side of diff, they are refused (exit 2): merge first."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    setup(tmp_path, [150, 50, 20, 30])
    assert cli(["run", "-q", "--no-timings", "-o", "whole"]) == 1
    assert cli(["run", "-q", "--no-timings", "--shard", "2/2", "--fail-on", "never",
                "-o", "part"]) == 0
    assert "shard" in read_results(tmp_path / "part")
    capsys.readouterr()
    said = ("part/results.json: these are the partial results of shard 2/2, not of a whole "
            "run; merge the shards first (agent-eval merge) and compare with the merged "
            "results")
    assert cli(["run", "-q", "--no-timings", "-o", "head", "--baseline",
                "part/results.json"]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "head" / "results.json").exists()
    assert cli(["diff", "part/results.json", "whole/results.json"]) == 2
    assert said in capsys.readouterr().err
    assert cli(["diff", "whole/results.json", "part/results.json"]) == 2
    assert said in capsys.readouterr().err
    # the whole run's results are a baseline as before
    assert cli(["run", "-q", "--no-timings", "-o", "head", "--baseline",
                "whole/results.json"]) == 1


STALE = "d: pass\n"  # an earlier diff's FILE, which a later step could publish


def test_a_diff_that_stops_leaves_no_earlier_output(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """diff -o FILE removes an earlier FILE before anything that can fail (a results file
    that cannot be read or is of another schema, a shard's part, another suite's results,
    an unknown format): one that stops (exit 2) leaves none; only that file goes."""
    monkeypatch.chdir(tmp_path)
    setup(tmp_path, [150, 50])
    assert cli(["run", "-q", "--no-timings", "-o", "r"]) == 1
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "schema.json").write_text(json.dumps({
        "schema_version": "99", "tool": {"name": "agent-eval", "version": "9"}}))
    other = json.loads((tmp_path / "r" / "results.json").read_text())
    other["suite"] = "another"
    (tmp_path / "other.json").write_text(json.dumps(other))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text(STALE)
    for argv in (["bad.json", "r/results.json"], ["r/results.json", "schema.json"],
                 ["r/results.json", "nowhere.json"], ["other.json", "r/results.json"],
                 ["r/results.json", "r/results.json", "-f", "junit"]):
        (tmp_path / "out" / "diff.txt").write_text(STALE)
        assert cli(["diff", *argv, "-o", "out/diff.txt"]) == 2, argv
        assert capsys.readouterr().err.startswith("error: "), argv
        assert not (tmp_path / "out" / "diff.txt").exists(), argv
    assert (tmp_path / "out" / "keep.txt").read_text() == STALE


def test_a_diff_that_stops_never_removes_through_a_link(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    repo.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(repo)
    (repo / "bad.json").write_text("{not json")
    (elsewhere / "target.txt").write_text(STALE)
    (repo / "diff.txt").symlink_to(elsewhere / "target.txt")  # FILE is a link
    (repo / "linked").symlink_to(elsewhere)  # FILE's folder is a link
    assert cli(["diff", "bad.json", "bad.json", "-o", "diff.txt"]) == 2
    assert not (repo / "diff.txt").is_symlink()  # the link goes, as run's do ...
    assert (elsewhere / "target.txt").read_text() == STALE  # ... its target stays
    assert cli(["diff", "bad.json", "bad.json", "-o", "linked/target.txt"]) == 2
    assert (elsewhere / "target.txt").read_text() == STALE


def test_a_diff_onto_its_head_keeps_it_until_it_is_read(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """FILE may be HEAD itself (json): it is read first, then replaced, never removed
    first."""
    monkeypatch.chdir(tmp_path)
    setup(tmp_path, [150, 50])
    assert cli(["run", "-q", "--no-timings", "-o", "r"]) == 1
    (tmp_path / "head.json").write_bytes((tmp_path / "r" / "results.json").read_bytes())
    assert cli(["diff", "r/results.json", "head.json", "-f", "json", "-o", "head.json"]) == 1
    assert json.loads((tmp_path / "head.json").read_text())["baseline"]["new_violations"] == 0


COSTED = """\
version: "1"
suite: c
traces: traces/*.jsonl
scenarios:
  - id: A
    expect: {tools: [refund]}
    thresholds: {max_cost_multiplier: 2.0}
"""


def _costed_run(root: Path, cost: float, *options: str) -> int:
    (root / "traces").mkdir(parents=True, exist_ok=True)
    (root / "agent-eval.yaml").write_text(COSTED)
    lines = [{"type": "trace_start", "trace_id": "a-1", "scenario": "A"},
             {"type": "llm_call", "model": "m", "input_tokens": 1, "output_tokens": 1,
              "cost_usd": cost},
             {"type": "tool_call", "tool": "refund", "arguments": {}},
             {"type": "output", "output": "ok"}, {"type": "trace_end"}]
    (root / "traces" / "a.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return cli(["run", "-q", "--no-timings", "--config", str(root / "agent-eval.yaml"),
                *options])


def test_a_head_compared_with_another_base_is_not_compared_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """HEAD written by run --baseline B1 had its max_cost_multiplier judged against B1's
    cost (0.01: 0.015 is within 2x) and the note that the check is made from is gone: diff
    B2 HEAD, B2 costing 0.001 (15x), passed (exit 0, '0 new'). It is refused (exit 2);
    with the base it was compared with, or a HEAD compared with none, diff is as before."""
    monkeypatch.chdir(tmp_path)
    assert _costed_run(tmp_path / "b1", 0.01, "-o", "b1/out") == 0
    assert _costed_run(tmp_path / "b2", 0.001, "-o", "b2/out") == 0
    assert _costed_run(tmp_path / "h", 0.015, "-o", "h/out0") == 0
    assert _costed_run(tmp_path / "h", 0.015, "-o", "h/out1",
                       "--baseline", "b1/out/results.json") == 0
    capsys.readouterr()
    assert cli(["diff", "b2/out/results.json", "h/out1/results.json"]) == 2
    err = capsys.readouterr().err
    assert ("h/out1/results.json: these results were already compared with a base run "
            "(b1/out/results.json), and scenario A's max_cost_multiplier was judged against "
            "its cost there (0.01 USD), not this base run's (0.001 USD)") in err, err
    # the run it was compared with: the same costs, the same judgement
    assert cli(["diff", "b1/out/results.json", "h/out1/results.json"]) == 0
    # a run compared with none: judged against B2 (15x over 2x)
    assert cli(["diff", "b2/out/results.json", "h/out0/results.json"]) == 1
    assert "cost_multiplier = 15 exceeds max_cost_multiplier: 2" in capsys.readouterr().out


def test_a_base_run_of_another_agent_eval_version_is_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A base run made by another agent-eval (the base branch's artifact from before an
    upgrade) was compared without a word: a figure or fingerprint that version works out
    otherwise read as the change's doing. The console, the comment and the page say it
    (it changes no gate); the same version says nothing."""
    monkeypatch.chdir(tmp_path)
    setup(tmp_path, [150, 50])
    assert cli(["run", "-q", "--no-timings", "-o", "base"]) == 1
    data = json.loads((tmp_path / "base" / "results.json").read_text())
    head_version = data["tool"]["version"]
    data["tool"]["version"] = "0.0.1"
    (tmp_path / "old.json").write_text(json.dumps(data))
    said = (f"the base run was made by agent-eval 0.0.1, this run by {head_version}: a "
            "figure or finding that the two versions work out otherwise shows as a change")
    capsys.readouterr()
    assert cli(["diff", "old.json", "base/results.json"]) == 1
    assert said in capsys.readouterr().out
    for fmt in ("markdown", "html"):
        assert cli(["diff", "old.json", "base/results.json", "-f", fmt, "-o", f"d.{fmt}"]) == 1
        assert said in (tmp_path / f"d.{fmt}").read_text(), fmt
    assert cli(["diff", "base/results.json", "base/results.json", "-f", "markdown",
                "-o", "same.md"]) == 1
    assert "was made by agent-eval" not in (tmp_path / "same.md").read_text()
    capsys.readouterr()
    assert cli(["diff", "base/results.json", "base/results.json"]) == 1
    assert "was made by agent-eval" not in capsys.readouterr().out
