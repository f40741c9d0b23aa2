"""``baseline: file`` reads the pull request's own copy of the file, which the pull request
can regenerate to hide a drop: on a pull request the action says, in the comment and the
job summary and in results.json ``baseline.source``, when that file differs from the base
commit's version or did not exist there (docs/results.md "The baseline")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "action"))

from action_harness import (
    GIT_ENV,
    FakeGitHub,
    pr_payload,
    push_payload,
    require_node_tools,
    run_action,
)

SUITE = """\
version: "1"
suite: s
traces: traces/*.jsonl
scenarios:
  - id: A
    expect: {tools: [lookup_order]}
  - id: B
    expect: {tools: [lookup_order]}
pass_criteria:
  regression: {max_pass_rate_drop: 0.1}
"""


def _trace(sid: str) -> str:
    lines = [{"type": "trace_start", "trace_id": sid.lower(), "scenario": sid},
             {"type": "tool_call", "id": "c1", "tool": "lookup_order", "arguments": {}},
             {"type": "output", "output": "ok"}, {"type": "trace_end"}]
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(cwd.parent)}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    require_node_tools()
    with FakeGitHub() as fake:
        yield fake


def _results(tmp: Path, github: FakeGitHub, ws: Path, name: str, code: int = 0) -> str:
    """The results.json of a run of the action with no baseline (the base run's file)."""
    run = run_action(tmp, ws, github.url, "push", push_payload(),
                     inputs={"baseline": "none", "comment": "false", "upload-sarif": "false"},
                     name=name)
    assert run.code == code, run.stderr
    return (ws / "agent-eval-results" / "results.json").read_text(encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path, github: FakeGitHub) -> dict[str, Any]:
    """A repository whose base commit holds the suite, two passing traces and base.json
    (their results); the workspace is then the pull request's head, which lost B's trace
    (pass_rate 1 → 0.5)."""
    ws = tmp_path / "ws"
    (ws / "traces").mkdir(parents=True)
    (ws / "agent-eval.yaml").write_text(SUITE)
    (ws / ".gitignore").write_text("agent-eval-results/\n")
    for sid in ("A", "B"):
        (ws / "traces" / f"{sid}.jsonl").write_text(_trace(sid))
    git(ws, "init", "-q", "-b", "main")
    honest = _results(tmp_path, github, ws, "base-results")
    (ws / "base.json").write_text(honest)
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "base")
    base = git(ws, "rev-parse", "HEAD")
    (ws / "traces" / "B.jsonl").unlink()  # the pull request: B lost its trace
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "pr")
    return {"ws": ws, "base": base, "honest": honest}


def _pr(base: str) -> dict[str, Any]:
    event = pr_payload("opened")
    event["pull_request"]["base"]["sha"] = base
    return event


def _run(tmp: Path, github: FakeGitHub, repo: dict[str, Any], name: str) -> Any:
    return run_action(tmp, repo["ws"], github.url, "pull_request", _pr(repo["base"]),
                      inputs={"baseline": "file", "baseline-file": "base.json",
                              "comment": "false", "upload-sarif": "false"}, name=name)


def _gate(ws: Path) -> str:
    data = json.loads((ws / "agent-eval-results" / "results.json").read_text())
    (status,) = [c["status"] for c in data["criteria"] if c["name"] == "max_pass_rate_drop"]
    return str(status)


def _source(ws: Path) -> dict[str, Any]:
    data = json.loads((ws / "agent-eval-results" / "results.json").read_text())
    source: dict[str, Any] = data["baseline"]["source"]
    return source


def test_a_baseline_file_the_pull_request_regenerated_is_flagged(
        tmp_path: Path, github: FakeGitHub, repo: dict[str, Any]) -> None:
    ws = repo["ws"]
    # unchanged: compared, the drop caught, nothing flagged
    run = _run(tmp_path, github, repo, "same")
    assert run.code == 1, run.stderr
    assert _source(ws)["changed_in_pull_request"] is False
    assert _gate(ws) == "fail"  # pass_rate 1 → 0.5
    assert "changed by this pull request" not in run.summary
    # the pull request regenerates base.json from its own traces: the drop is hidden
    # (pass_rate 0.5 → 0.5), which the comment and the summary now say in so many words
    hidden = _results(tmp_path, github, ws, "regenerate", code=1)  # B: no trace
    (ws / "base.json").write_text(hidden)
    git(ws, "commit", "-q", "-am", "regenerate the baseline")
    run = _run(tmp_path, github, repo, "changed")
    assert run.code == 1, run.stderr  # B has no trace: it fails, but the gate passes
    assert _gate(ws) == "pass"  # 0.5 → 0.5: hidden
    source = _source(ws)
    assert source["changed_in_pull_request"] is True
    short = repo["base"][:12]
    assert source["warning"] == (
        f"the baseline file base.json was changed by this pull request: it differs from the "
        f"base commit {short}'s version, so the base figures come from the pull request "
        "itself; review its diff")
    assert "> ⚠️ the baseline file base.json was changed by this pull request" in run.summary
    assert run.lines("::warning title=agent-eval::the baseline file base.json was changed")
    html = (ws / "agent-eval-results" / "report.html").read_text(encoding="utf-8")
    assert "⚠️ the baseline file base.json was changed by this pull request" in html


def test_a_baseline_file_new_in_the_pull_request_is_flagged(
        tmp_path: Path, github: FakeGitHub, repo: dict[str, Any]) -> None:
    ws = repo["ws"]
    (ws / "copy.json").write_text(repo["honest"])
    git(ws, "add", "copy.json")
    git(ws, "commit", "-q", "-m", "a baseline of its own")
    run = run_action(tmp_path, ws, github.url, "pull_request", _pr(repo["base"]),
                     inputs={"baseline": "file", "baseline-file": "copy.json",
                             "comment": "false", "upload-sarif": "false"}, name="new")
    assert run.code == 1, run.stderr
    source = _source(ws)
    assert source["changed_in_pull_request"] is True
    assert source["warning"].startswith(
        f"the baseline file copy.json is new in this pull request (the base commit "
        f"{repo['base'][:12]} has no copy.json)")
    assert "> ⚠️ the baseline file copy.json is new in this pull request" in run.summary


def test_a_push_run_has_no_base_commit_to_check_against(
        tmp_path: Path, github: FakeGitHub, repo: dict[str, Any]) -> None:
    run = run_action(tmp_path, repo["ws"], github.url, "push", push_payload(),
                     inputs={"baseline": "file", "baseline-file": "base.json",
                             "comment": "false", "upload-sarif": "false"}, name="push")
    assert run.code == 1, run.stderr
    source = _source(repo["ws"])
    assert "changed_in_pull_request" not in source and "warning" not in source


@pytest.mark.parametrize(("named", "through"), [
    ("base.json", "the symbolic link base.json"),  # the file a link
    ("results/base.json", "the symbolic link results"),  # a folder on its path a link
])
def test_a_baseline_file_made_a_link_to_a_file_the_pull_request_left_alone_is_flagged(
        tmp_path: Path, named: str, through: str) -> None:
    # the base commit holds the honest base.json (and results/base.json) and an older
    # results file the pull request does not touch; the pull request makes the baseline
    # a link to that older file. Its content is the base commit's version of *another*
    # file: compared by the link's target, it read as unchanged (changed_in_pull_request
    # false, no warning) while the base figures are the ones the pull request chose.
    from agent_eval.baseline import file_at_base

    ws = tmp_path / "ws"
    (ws / "old").mkdir(parents=True)
    (ws / "results").mkdir()
    (ws / "base.json").write_text('{"honest": 1}\n')
    (ws / "results" / "base.json").write_text('{"honest": 1}\n')
    (ws / "old" / "base.json").write_text('{"stale": 1}\n')
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "base")
    base = git(ws, "rev-parse", "HEAD")
    # unchanged: nothing to say
    assert file_at_base(ws, base, ws / named) == (False, None)
    if named == "base.json":
        (ws / "base.json").unlink()
        (ws / "base.json").symlink_to("old/base.json")
    else:
        for f in (ws / "results").iterdir():
            f.unlink()
        (ws / "results").rmdir()
        (ws / "results").symlink_to("old")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "point the baseline at the old results")
    assert file_at_base(ws, base, ws / named) == (None, (
        f"whether the baseline file {named} was changed by this pull request cannot be "
        f"checked: it is read through {through}, which the pull request may have pointed "
        "at another file; review it"))
    # the file the link leads to, named itself, is still the base commit's own
    assert file_at_base(ws, base, ws / "old" / "base.json") == (False, None)
