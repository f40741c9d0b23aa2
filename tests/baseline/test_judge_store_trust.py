"""The action replays the judgement store of the workspace, on a pull request the pull
request's own copy: anyone can compute a judgement's key, so a pull request can write the
verdicts its judge checks get. On a pull request the action compares the store with the
base commit's version and says, in results.json ``judge.store_source``, the comment and
job summary, the HTML report and a ``::warning``, when the pull request changed it and how
many of the verdicts used are its own (docs/judge.md "The judgement store", docs/results.md).
It changes no gate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.judge.conftest import native
from tests.judge.loopback import serve

from agent_eval._cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "action"))

from action_harness import GIT_ENV, pr_payload, push_payload, run_action

STORE = ".agent-eval/judgements.jsonl"


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(cwd.parent)}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def _suite(url: str) -> str:
    return ('version: "1"\nsuite: judged\ntraces: traces/*.jsonl\n'
            f"judge:\n  provider: openai\n  model: gpt-4o-mini\n  base_url: {url}\n"
            "  api_key_env: JUDGE_TEST_KEY\n  max_retries: 0\n"
            "scenarios:\n  - id: R\n    expect:\n      judge:\n"
            "        - rubric: Is the answer correct?\n          threshold: 0.8\n")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """A repository whose base commit holds a judged suite, two traces and their store,
    recorded from a loopback judge: trace a scored 2 (below the threshold's 4: the check
    fails), trace b scored 5."""
    ws = tmp_path / "ws"
    (ws / "traces").mkdir(parents=True)
    (ws / ".gitignore").write_text("agent-eval-results/\nout/\n")
    (ws / "traces" / "a.jsonl").write_text(native("a-1", "R", "refunded SCORE=2"))
    (ws / "traces" / "b.jsonl").write_text(native("b-1", "R", "refunded SCORE=5"))
    monkeypatch.chdir(ws)
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test-not-a-secret")
    with serve("openai") as server:
        (ws / "agent-eval.yaml").write_text(_suite(server.url))
        code = main(["run", "--config", "agent-eval.yaml", "--output-dir", "out", "-q",
                     "--judge", "record"])
        assert len(server.requests) == 2 and not server.problems, server.problems
    capsys.readouterr()
    assert code == 1  # a's verdict fails its check
    lines = (ws / STORE).read_text().splitlines()
    assert sorted(json.loads(line)["score"] for line in lines) == [2, 5]
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "base")
    return {"ws": ws, "base": git(ws, "rev-parse", "HEAD"), "lines": lines}


def _pr(base: str) -> dict[str, Any]:
    event = pr_payload("opened")
    event["pull_request"]["base"]["sha"] = base
    return event


INPUTS = {"github-token": "", "upload-sarif": "false", "comment": "off", "baseline": "none",
          "config": "agent-eval.yaml"}


def _action(tmp: Path, repo: dict[str, Any], name: str, event: str = "pull_request") -> Any:
    payload = _pr(repo["base"]) if event == "pull_request" else push_payload()
    return run_action(tmp, repo["ws"], "http://127.0.0.1:9", event, payload, inputs=INPUTS,
                      name=name)


def _judge(ws: Path) -> dict[str, Any]:
    data = json.loads((ws / "agent-eval-results" / "results.json").read_text())
    judge: dict[str, Any] = data["judge"]
    return judge


def _scored_5(line: str) -> str:
    obj = json.loads(line)
    obj["score"] = 5
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def test_a_store_the_pull_request_edited_is_flagged(tmp_path: Path,
                                                    repo: dict[str, Any]) -> None:
    ws = repo["ws"]
    # the store as the base commit has it: checked, nothing to say; a fails
    run = _action(tmp_path, repo, "same")
    assert run.code == 1, run.stdout[-3000:] + run.stderr
    judge = _judge(ws)
    assert judge["judgements_used"] == 2
    assert judge["store_source"] == {"base_sha": repo["base"],
                                     "changed_in_pull_request": False,
                                     "verdicts_from_pull_request": 0}
    assert "judgement store" not in run.summary
    assert not run.lines("::warning title=agent-eval::the judgement store")
    # the pull request rewrites a's verdict as a 5: the judge check passes (exit 0), and
    # the reviewer is told that one of the two verdicts is the pull request's own
    a_line = next(line for line in repo["lines"] if json.loads(line)["score"] == 2)
    b_line = next(line for line in repo["lines"] if json.loads(line)["score"] == 5)
    (ws / STORE).write_text("\n".join(sorted([_scored_5(a_line), b_line])) + "\n")
    git(ws, "commit", "-q", "-am", "record again")
    run = _action(tmp_path, repo, "edited")
    assert run.code == 0, run.stdout[-3000:] + run.stderr  # not a failure: said
    judge = _judge(ws)
    short = repo["base"][:12]
    warning = (f"the judgement store {STORE} was changed by this pull request: it differs "
               f"from the base commit {short}'s version, so 1 judge verdict(s) of this run "
               "come from the pull request itself; review its diff")
    assert judge["store_source"] == {"base_sha": repo["base"],
                                     "changed_in_pull_request": True,
                                     "verdicts_from_pull_request": 1, "warning": warning}
    assert "> ⚠️ the judgement store .agent-eval/judgements.jsonl was changed by this pull " \
           "request" in run.summary
    assert "1 judge verdict(s) of this run come from the pull request itself" in run.summary
    assert run.lines(f"::warning title=agent-eval::the judgement store {STORE} was changed")
    html = (ws / "agent-eval-results" / "report.html").read_text(encoding="utf-8")
    assert f"⚠️ the judgement store {STORE} was changed by this pull request" in html
    md = (ws / "agent-eval-results" / "summary.md").read_text(encoding="utf-8")
    assert "1 judge verdict(s) of this run come from the pull request itself" in md


def test_a_store_new_in_the_pull_request_is_flagged(tmp_path: Path,
                                                    repo: dict[str, Any]) -> None:
    ws = repo["ws"]
    git(ws, "rm", "-q", "--cached", STORE)
    git(ws, "commit", "-q", "-m", "no store on the base branch")
    base = git(ws, "rev-parse", "HEAD")
    git(ws, "add", STORE)
    git(ws, "commit", "-q", "-m", "the pull request brings its own store")
    run = _action(tmp_path, {**repo, "base": base}, "new")
    assert run.code == 1, run.stdout[-3000:] + run.stderr
    source = _judge(ws)["store_source"]
    assert source["changed_in_pull_request"] is True
    assert source["verdicts_from_pull_request"] == 2
    assert source["warning"] == (
        f"the judgement store {STORE} is new in this pull request (the base commit "
        f"{base[:12]} has no {STORE}): 2 judge verdict(s) of this run come from the pull "
        "request itself; review it")
    assert run.lines(f"::warning title=agent-eval::the judgement store {STORE} is new")


def test_a_base_commit_the_clone_cannot_get_is_said(tmp_path: Path,
                                                    repo: dict[str, Any]) -> None:
    missing = "0123456789abcdef0123456789abcdef01234567"
    run = _action(tmp_path, {**repo, "base": missing}, "unknown")
    assert run.code == 1, run.stdout[-3000:] + run.stderr
    source = _judge(repo["ws"])["store_source"]
    assert source["changed_in_pull_request"] is None
    assert source["verdicts_from_pull_request"] is None
    assert source["warning"].startswith(
        f"whether the judgement store {STORE} was changed by this pull request cannot be "
        "checked: ")
    assert run.lines("::warning title=agent-eval::whether the judgement store")


def test_a_push_run_has_no_base_commit_to_check_against(tmp_path: Path,
                                                        repo: dict[str, Any]) -> None:
    run = _action(tmp_path, repo, "push", event="push")
    assert run.code == 1, run.stdout[-3000:] + run.stderr
    assert "store_source" not in _judge(repo["ws"])
