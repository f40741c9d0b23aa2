"""A base run of another suite is no baseline (docs/results.md "The baseline"): named
explicitly (``run --baseline``, ``--baseline-ref``, ``diff``, ``merge --baseline``, the
action's ``baseline: file|git|artifact``) it stops the run with exit 2, naming both suites;
``baseline: auto`` goes on uncompared, saying why, with the regression gates skipped as
without a baseline. A suite file renamed in the change is said to be renamed."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "action"))

from action_harness import FakeGitHub, pr_payload, require_node_tools, run_action

from agent_eval._cli import main as cli
from agent_eval.baseline import Found, for_action, from_file, resolve
from agent_eval.results import Results
from agent_eval.sections import NoBaseline

SUITE = """\
version: "1"
suite: {name}
traces: traces/*.jsonl
scenarios:
  - id: A
    expect: {{tools: [lookup_order]}}
  - id: B
    expect: {{tools: [lookup_order]}}
pass_criteria:
  regression: {{max_pass_rate_drop: 0.1, fail_on_new_violations: true}}
"""


def _trace(sid: str) -> str:
    lines = [{"type": "trace_start", "trace_id": sid.lower(), "scenario": sid},
             {"type": "tool_call", "id": "c1", "tool": "lookup_order", "arguments": {}},
             {"type": "output", "output": "ok"}, {"type": "trace_end"}]
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def _run(root: Path, name: str, config: str, scenarios: tuple[str, ...], out: str,
         *extra: str) -> int:
    """``agent-eval run`` of the suite ``name`` in the file ``config`` under ``root``."""
    (root / config).write_text(SUITE.format(name=name))
    traces = root / "traces"
    traces.mkdir(exist_ok=True)
    for old in traces.iterdir():
        old.unlink()
    for sid in scenarios:
        (traces / f"{sid}.jsonl").write_text(_trace(sid))
    return cli(["run", "--config", str(root / config), "--output-dir", str(root / out),
                "--no-timings", "--quiet", *extra])


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()  # the repository root: config paths are relative to it
    monkeypatch.chdir(tmp_path)
    # the base runs: suite "billing" (billing.yaml) and suite "support" (support.yaml),
    # both passing with both scenarios
    assert _run(tmp_path, "billing", "billing.yaml", ("A", "B"), "billing-base") == 0
    assert _run(tmp_path, "support", "support.yaml", ("A", "B"), "support-base") == 0
    return tmp_path


def test_run_refuses_another_suites_results_naming_both(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # support lost B's trace: pass_rate 1 → 0.5. Against billing's results this was
    # compared (only "policy changed" said), against its own it fails the gate
    capsys.readouterr()
    code = _run(repo, "support", "support.yaml", ("A",), "head",
                "--baseline", "billing-base/results.json")
    err = capsys.readouterr().err
    assert code == 2
    assert "the base run is of the suite 'billing' (billing.yaml), not of this suite " \
           "'support' (support.yaml)" in err
    assert "billing-base/results.json" in err and "run without --baseline" in err
    assert not (repo / "head" / "results.json").exists()
    # its own suite's results: compared, and the drop is caught
    assert _run(repo, "support", "support.yaml", ("A",), "head",
                "--baseline", "support-base/results.json") == 1


def test_diff_and_merge_refuse_another_suites_results(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = cli(["diff", "billing-base/results.json", "support-base/results.json"])
    err = capsys.readouterr().err
    assert code == 2
    assert "'billing'" in err and "'support'" in err and "give a results file of 'support'" \
        in err
    assert _run(repo, "support", "support.yaml", ("A", "B"), "part", "--shard", "1/1") == 0
    capsys.readouterr()
    code = cli(["merge", "part/results.json", "--config", "support.yaml", "--output-dir",
                "merged", "--baseline", "billing-base/results.json", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "not of this suite 'support'" in err and "merge without --baseline" in err
    assert not (repo / "merged" / "results.json").exists()


def test_a_renamed_suite_file_is_said_to_be_renamed(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = _run(repo, "support-v2", "support.yaml", ("A", "B"), "head",
                "--baseline", "support-base/results.json")
    err = capsys.readouterr().err
    assert code == 2
    assert ("the suite in support.yaml is named 'support-v2' here but 'support' in the base "
            "run: renamed in this change") in err


def test_resolve_file_and_auto(repo: Path) -> None:
    support = ("support", "support.yaml")
    # file: another suite's results are no baseline (the action then stops: exit 2)
    found = resolve("file", file="billing-base/results.json", suite=support)
    assert found.results is None
    assert found.reason.startswith("results file billing-base/results.json: the base run is "
                                   "of the suite 'billing'")
    assert "`baseline-artifact`" in found.reason  # what to do
    assert resolve("file", file="support-base/results.json", suite=support).results \
        is not None
    # auto: git's base run of another suite is skipped, saying why, and so is artifact's
    billing = from_file("billing-base/results.json")
    found = resolve("auto", git=lambda: billing,
                    artifact=lambda: Found(billing.results, {"kind": "artifact"},
                                           "artifact agent-eval-results of run 1 on main"),
                    suite=support)
    assert found.results is None
    assert found.reason.startswith("git: results file billing-base/results.json: the base "
                                   "run is of the suite 'billing'")
    assert "; artifact: artifact agent-eval-results of run 1 on main: the base run is of " \
           "the suite 'billing'" in found.reason
    # the next source of auto is still tried
    own = from_file("support-base/results.json")
    found = resolve("auto", git=lambda: billing, artifact=lambda: own, suite=support)
    assert found.results is not None and found.results.suite == "support"
    assert found.notes and found.notes[0].startswith("git: results file billing-base")


def test_auto_without_a_baseline_of_this_suite_goes_on_uncompared(repo: Path) -> None:
    assert _run(repo, "support", "support.yaml", ("A",), "head") == 1  # B: no trace
    head = Results.load(str(repo / "head" / "results.json"))
    billing = from_file("billing-base/results.json")
    found = resolve("auto", git=lambda: billing, artifact=None,
                    suite=("support", "support.yaml"))
    logged: list[str] = []
    for_action(head, found, logged.append)
    assert isinstance(head.baseline, NoBaseline)
    assert "the base run is of the suite 'billing'" in head.baseline.reason
    assert "artifact: not available for this event" in head.baseline.reason
    assert any("not compared with the base branch" in m for m in logged)
    # the gates are judged as without a baseline: skipped, never passed
    assert {c.name: c.status for c in head.criteria if c.kind == "regression"} == {
        "max_pass_rate_drop": "skip", "fail_on_new_violations": "skip"}


# ------------------------------------------------------------------------- the action
@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    require_node_tools()
    with FakeGitHub() as fake:
        yield fake


def test_action_file_of_another_suite_stops_the_run(repo: Path, tmp_path: Path,
                                                    github: FakeGitHub) -> None:
    (repo / "traces" / "B.jsonl").unlink()  # support's head: B lost its trace
    (repo / "billing.json").write_text((repo / "billing-base" / "results.json").read_text())
    run = run_action(tmp_path / "runs", repo, github.url, "pull_request", pr_payload("opened"),
                     inputs={"config": "support.yaml", "baseline": "file",
                             "baseline-file": "billing.json", "comment": "false",
                             "upload-sarif": "false"})
    assert run.code == 2, run.stderr
    assert run.outputs["verdict"] == "error"
    (line,) = [ln for ln in run.lines("::error") if "baseline: file" in ln]
    assert "'billing'" in line and "'support'" in line
    assert "could not run" in run.summary
