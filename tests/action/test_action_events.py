"""The action on every event it handles, each on a real ``@octokit/webhooks-examples``
payload (a field changed only where the test says why): ``pull_request_target`` (results
attached to the head only when the workspace is at the head), ``workflow_run`` (the check
run on the triggering run's head), ``merge_group`` (the base from the merge queue, so
baselines and gates run there), a GitHub App's installation token (the sticky comment
found again through the GraphQL ``viewer``), ``comment-key``, the check run's trace-line
annotations for files of the pull request's diff, and the files the container writes given
back to the workspace's owner."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from action_harness import (
    GIT_ENV,
    FakeGitHub,
    make_workspace,
    many_violations,
    payload,
    pr_payload,
    require_node_tools,
    run_action,
)
from tests.conftest import missing_system

from agent_eval.commands.action import comment_marker
from agent_eval.github.client import bot_login, is_author
from agent_eval.github.event import Target, from_payload
from agent_eval.github.publish import with_marker
from agent_eval.results import Results

MARKER = "<!-- agent-eval:customer-service-agent -->"
HEAD = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"  # head.sha of the pull_request examples
BASE = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"  # base.sha of the pull_request examples


@pytest.fixture(autouse=True)
def _tools() -> None:
    require_node_tools()


def _git(ws: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(ws.parent)}
    done = subprocess.run(["git", "-c", "safe.directory=*", *args], cwd=ws, env=env, check=True,
                          capture_output=True,
                          text=True)
    return done.stdout.strip()


def _merge_group() -> dict[str, Any]:
    return payload("merge_group", lambda e: e["action"] == "checks_requested")


# ------------------------------------------------------------------ the event alone
def test_pull_request_target_goes_to_the_head_only_from_the_head() -> None:
    p = pr_payload("opened")
    env = {"GITHUB_SHA": BASE, "GITHUB_REF": "refs/heads/master",
           "GITHUB_REPOSITORY": "Codertocat/Hello-World"}
    ev = from_payload("pull_request_target", p, env)
    assert ev.sarif_target(checked_out=HEAD) == Target("refs/pull/2/head", HEAD)
    assert ev.not_at_head(HEAD) is None
    for checked_out in (BASE, None):
        assert ev.sarif_target(checked_out) is None
        reason = ev.no_target_reason(checked_out)
        assert "pull_request_target" in reason and HEAD[:12] in reason, reason
        assert ev.not_at_head(checked_out) == reason
    assert "at f95f852bd8fc" in ev.no_target_reason(BASE)
    # a plain pull_request is never held back: its default checkout is the merge commit
    assert from_payload("pull_request", p, env).not_at_head(BASE) is None


def test_workflow_run_check_run_goes_on_the_triggering_head() -> None:
    p = payload("workflow_run", lambda e: e["action"] == "completed"
                and not e["workflow_run"]["pull_requests"]
                and e["workflow_run"]["event"] == "repository_dispatch")
    head = p["workflow_run"]["head_sha"]
    default_branch_tip = "d" * 40  # GITHUB_SHA of a workflow_run run: the default branch
    ev = from_payload("workflow_run", p, {"GITHUB_SHA": default_branch_tip,
                                          "GITHUB_REF": "refs/heads/master"})
    assert not ev.is_pull_request
    assert ev.check_sha == head != default_branch_tip
    assert ev.sarif_target() is None  # a repository_dispatch run: no branch or PR to go to
    p["workflow_run"]["event"] = "push"  # the same run, started by a push
    ev = from_payload("workflow_run", p, {"GITHUB_SHA": default_branch_tip})
    assert ev.sarif_target() == Target(f"refs/heads/{p['workflow_run']['head_branch']}", head)
    assert ev.check_sha == head


def test_workflow_run_without_its_head_commit_puts_no_check_run_on_the_default_branch(
        tmp_path: Path, github: FakeGitHub) -> None:
    """docs/action-events.md: under workflow_run the check run goes on the triggering
    run's head, never on ``github.sha`` (the default branch's tip). A payload that could
    not be read (no ``workflow_run.head_sha``) put it on ``github.sha``: the verdict on a
    fork's traces became a check of the default branch's tip. It is skipped, saying why."""
    tip = "d" * 40
    assert from_payload("workflow_run", {}, {"GITHUB_SHA": tip}).check_sha is None
    ws = make_workspace(tmp_path / "ws")
    event = payload("workflow_run", lambda e: e["action"] == "completed")
    event["workflow_run"] = "not an object"  # as if the payload had lost it
    run = run_action(tmp_path, ws, github.url, "workflow_run", event,
                     inputs={"check-run": "true", "upload-sarif": "false"})
    assert run.code == 1, run.stderr
    assert github.calls("POST", r"/check-runs$") == []
    [skip] = [s for s in run.skips() if "check run" in s]
    assert "workflow_run.head_sha" in skip, skip


def test_merge_group_has_a_base() -> None:
    p = _merge_group()
    group = p["merge_group"]
    ev = from_payload("merge_group", p, {"GITHUB_SHA": group["head_sha"],
                                         "GITHUB_REF": group["head_ref"]})
    assert (ev.base_sha, ev.base_ref) == (group["base_sha"], "main")
    assert ev.head_ref == "gh-readonly-queue/main/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64"
    assert ev.compares_with_base and not ev.is_pull_request
    assert ev.sarif_target() == Target(group["head_ref"], group["head_sha"])
    assert ev.check_sha == group["head_sha"]
    # without GITHUB_SHA / GITHUB_REF (a run by hand) the payload says the same
    bare = from_payload("merge_group", p, {})
    assert bare.sarif_target() == Target(group["head_ref"], group["head_sha"])


@pytest.mark.parametrize("name", ["pull_request_review", "pull_request_review_comment",
                                  "pull_request_review_thread"])
def test_a_review_event_is_a_pull_requests_run(name: str) -> None:
    """docs/action-events.md listed these under "others" (no comment, the check run on
    GITHUB_SHA, no baseline), while their payload holds the pull request and the action
    treats them as its run: the comment, the check run on its head, the base to compare
    with; the SARIF goes where GITHUB_REF and GITHUB_SHA say (its merge ref)."""
    p = payload(name, lambda e: True)
    pr = p["pull_request"]
    merge = "a" * 40
    ev = from_payload(name, p, {"GITHUB_SHA": merge, "GITHUB_REPOSITORY": "o/r",
                                "GITHUB_REF": f"refs/pull/{pr['number']}/merge"})
    assert ev.pr_number == pr["number"] and ev.is_pull_request and ev.compares_with_base
    assert ev.check_sha == pr["head"]["sha"] != merge
    assert ev.base_sha == pr["base"]["sha"]
    target = Target(f"refs/pull/{pr['number']}/merge", merge)
    assert ev.sarif_target(None) == ev.sarif_target(pr["head"]["sha"]) == target
    doc = (Path(__file__).resolve().parents[2] / "docs" / "action-events.md").read_text()
    [row] = [line for line in doc.splitlines() if line.startswith("| `pull_request_review`")]
    assert f"`{name}`" in row.split(" | ")[0]
    assert "refs/pull/N/merge" in row and "the pull request's head | yes |" in row
    assert "`pull_request.base.sha`" in row


def test_bot_logins_compare_with_and_without_the_suffix() -> None:
    assert bot_login("my-app") == "my-app[bot]"
    assert bot_login("github-actions[bot]") == "github-actions[bot]"
    assert is_author({"login": "My-App[bot]", "type": "Bot"}, "my-app[bot]")
    assert not is_author({"login": "my-app[bot]", "type": "User"}, "my-app[bot]")
    assert not is_author({"login": "my-app", "type": "User"}, "my-app[bot]")
    assert is_author({"login": "octocat", "type": "User"}, "octocat")
    assert not is_author(None, "octocat")


def test_comment_marker_and_key() -> None:
    assert comment_marker("cs") == "<!-- agent-eval:cs -->"
    keyed = comment_marker("cs", "shard 1-->x")
    assert keyed == "<!-- agent-eval:cs key=shard 1--&gt;x -->"
    assert comment_marker("cs") not in keyed
    assert with_marker("<!-- agent-eval:cs -->\n## body", keyed) == f"{keyed}\n## body"
    assert with_marker("## body", keyed) == f"{keyed}\n## body"


# ------------------------------------------------------------------- end to end
def test_pull_request_target_on_the_base_checkout_uploads_nothing(
        tmp_path: Path, github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "pull_request_target", pr_payload("opened"),
                     inputs={"check-run": "true", "baseline": "none"})
    assert run.code == 1, run.stderr
    assert github.problems == []
    assert github.calls("POST", r"/code-scanning/sarifs$") == []
    assert github.calls("POST", r"/check-runs$") == []
    skipped = "\n".join(run.skips())
    assert "skipped the SARIF upload: under pull_request_target the workspace" in skipped
    assert "skipped the check run: under pull_request_target" in skipped
    assert f"head commit {HEAD[:12]}" in skipped
    assert "skipped the SARIF upload" in run.summary  # said in the job summary too
    # the comment describes what was evaluated, wherever that was: it is still made, and
    # says under its heading that it is not the pull request's code (a base that passes
    # must not read as the pull request's pass)
    assert len(github.calls("POST", r"/issues/2/comments$")) == 1
    checked_out = _git(ws, "rev-parse", "HEAD")
    lines = github.comments[2][0]["body"].split("\n")
    assert lines[:2] == [MARKER, "## ❌ customer-service-agent: fail"]
    assert lines[2] == ""
    assert lines[3] == (
        "> ⚠️ **Not the pull request's code.** This run evaluated the workspace at "
        f"`{checked_out[:12]}`, not the pull request's head commit `{HEAD[:12]}` (under "
        "`pull_request_target` the checkout is the base branch unless the workflow checks "
        "out the head): the verdict below says nothing about the pull request's traces.")


def test_pull_request_target_at_the_head_uploads_to_the_head(
        tmp_path: Path, github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws")
    head = _git(ws, "rev-parse", "HEAD")
    event = pr_payload("synchronize")
    event["pull_request"]["head"]["sha"] = head  # the workflow checked out the head commit
    run = run_action(tmp_path, ws, github.url, "pull_request_target", event,
                     inputs={"check-run": "true", "baseline": "none"})
    assert run.code == 1, run.stderr
    assert github.problems == [] and run.skips() == []
    [upload] = github.calls("POST", r"/code-scanning/sarifs$")
    assert (upload.json["ref"], upload.json["commit_sha"]) == ("refs/pull/2/head", head)
    [check] = github.calls("POST", r"/check-runs$")
    assert check.json["head_sha"] == head
    assert "Not the pull request's code" not in github.comments[2][0]["body"]
    assert "Not the pull request's code" not in check.json["output"]["summary"]


def test_workflow_run_after_a_push_checks_the_triggering_commit(
        tmp_path: Path, github: FakeGitHub) -> None:
    event = payload("workflow_run", lambda e: e["action"] == "completed"
                    and not e["workflow_run"]["pull_requests"]
                    and e["workflow_run"]["event"] == "repository_dispatch")
    event["workflow_run"]["event"] = "push"  # a run started by a push to the default branch
    wr = event["workflow_run"]
    with FakeGitHub(repo=event["repository"]["full_name"]) as gh:
        ws = make_workspace(tmp_path / "ws")
        run = run_action(tmp_path, ws, gh.url, "workflow_run", event,
                         inputs={"check-run": "true", "baseline": "none"})
        assert run.code == 1, run.stderr
        assert gh.problems == [] and run.skips() == []
        [upload] = gh.calls("POST", r"/code-scanning/sarifs$")
        assert (upload.json["ref"], upload.json["commit_sha"]) == (
            f"refs/heads/{wr['head_branch']}", wr["head_sha"])
        [check] = gh.calls("POST", r"/check-runs$")
        assert check.json["head_sha"] == wr["head_sha"]  # not GITHUB_SHA (…0001)


def test_merge_group_compares_with_the_queue_base(tmp_path: Path, github: FakeGitHub) -> None:
    """The queue's base commit has the suite and traces; the group adds one violation."""
    ws = make_workspace(tmp_path / "ws")
    base = _git(ws, "rev-parse", "HEAD")
    (ws / "traces" / "queued.jsonl").write_text(many_violations(1), encoding="utf-8")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-q", "-m", "queued change")
    head = _git(ws, "rev-parse", "HEAD")
    event = _merge_group()
    group = event["merge_group"]
    group["base_sha"], group["head_sha"] = base, head  # the commits of this workspace
    with FakeGitHub(repo=event["repository"]["full_name"]) as gh:
        run = run_action(tmp_path, ws, gh.url, "merge_group", event,
                         inputs={"check-run": "true"})
        assert run.code == 1, run.stderr
        assert gh.problems == [] and run.skips() == []
        results = json.loads((ws / "agent-eval-results" / "results.json").read_text())
        assert results["baseline"]["source"]["kind"] == "git"
        assert results["baseline"]["source"]["sha"] == base
        assert results["counts"]["violations"] == 11
        assert run.outputs["new-violations"] == "1"  # the gate sees only the queued one
        assert "Not compared with the base branch" not in run.summary
        [upload] = gh.calls("POST", r"/code-scanning/sarifs$")
        assert (upload.json["ref"], upload.json["commit_sha"]) == (group["head_ref"], head)
        [check] = gh.calls("POST", r"/check-runs$")
        assert check.json["head_sha"] == head
        assert gh.calls(path="/issues/") == []  # no pull request: no comment


def test_app_installation_token_keeps_one_comment(tmp_path: Path) -> None:
    """A GitHub App's token: GET /user is 403, comments are authored by ``my-app[bot]``;
    the GraphQL viewer names the bot and the second run edits the first run's comment,
    not the one GITHUB_TOKEN made with the same marker."""
    with FakeGitHub(login="my-app[bot]") as gh:
        gh.viewer = "my-app"
        other = gh.add_comment(2, f"{MARKER}\nby GITHUB_TOKEN", "github-actions[bot]")
        ws = make_workspace(tmp_path / "ws")
        for name in ("first", "second"):
            run = run_action(tmp_path, ws, gh.url, "pull_request", pr_payload("synchronize"),
                             inputs={"upload-sarif": "false", "baseline": "none"}, name=name)
            assert run.code == 1, run.stderr
        assert gh.problems == []
        assert len(gh.calls("POST", r"^/graphql$")) == 2
        assert len(gh.calls("POST", r"/issues/2/comments$")) == 1
        [patch] = gh.calls("PATCH", r"/issues/comments/")
        mine = gh.comments[2][-1]
        assert mine["user"]["login"] == "my-app[bot]"
        assert patch.path.endswith(f"/{mine['id']}")
        assert other["body"].endswith("by GITHUB_TOKEN")
        assert len(gh.comments[2]) == 2


def test_without_graphql_the_actions_bot_is_assumed(tmp_path: Path, github: FakeGitHub) -> None:
    github.viewer = None  # the GraphQL call fails: GITHUB_TOKEN's bot, as before
    github.add_comment(2, f"{MARKER}\nold", "github-actions[bot]")
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"upload-sarif": "false", "baseline": "none"})
    assert run.code == 1, run.stderr
    assert "assuming github-actions[bot]" in run.stderr
    assert len(github.calls("PATCH", r"/issues/comments/")) == 1
    assert github.calls("POST", r"/issues/2/comments$") == []


def test_comment_key_keeps_one_comment_per_matrix_job(tmp_path: Path,
                                                      github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws")
    for n, key in enumerate(("model-a", "model-b", "model-a")):
        run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                         inputs={"upload-sarif": "false", "baseline": "none",
                                 "comment-key": key}, name=f"run{n}")
        assert run.code == 1, run.stderr
    assert github.problems == []
    bodies = [c["body"] for c in github.comments[2]]
    assert len(bodies) == 2
    assert bodies[0].startswith("<!-- agent-eval:customer-service-agent key=model-a -->\n## ")
    assert bodies[1].startswith("<!-- agent-eval:customer-service-agent key=model-b -->\n## ")
    [patch] = github.calls("PATCH", r"/issues/comments/")
    assert patch.path.endswith(f"/{github.comments[2][0]['id']}")


def _annotations(github: FakeGitHub) -> list[dict[str, Any]]:
    return [a for r in github.calls("POST", r"/check-runs$") + github.calls(
        "PATCH", r"/check-runs/") for a in r.json["output"].get("annotations", [])]


def test_trace_lines_of_the_diff_are_annotated_too(tmp_path: Path, github: FakeGitHub) -> None:
    """discount-too-high.jsonl is in the pull request's diff: its finding is annotated at
    the policy line (as always) and at the trace line; the other traces only at the policy."""
    github.pull_files[2] = ["traces/discount-too-high.jsonl", "README.md"]
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"check-run": "true", "upload-sarif": "false",
                             "comment": "false", "baseline": "none"})
    assert run.code == 1, run.stderr
    assert github.problems == [] and run.skips() == []
    [listing] = github.calls("GET", r"/pulls/2/files$")
    assert listing.param("per_page") == "100"
    annotations = _annotations(github)
    on_traces = [a for a in annotations if a["path"].startswith("traces/")]
    # by hand: discount-too-high.jsonl line 7 calls apply_discount with percent 50
    # (policies/customer.yaml:74, max 30)
    assert [(a["path"], a["start_line"]) for a in on_traces] == [
        ("traces/discount-too-high.jsonl", 7)] * len(on_traces)
    # two findings there, checked by hand: the policy's max (policies/customer.yaml:74) and
    # scenario GOODWILL-002's `percent: {max: 30}` (agent-eval.yaml:90)
    rules = sorted(a["message"].rsplit("(rule at ", 1)[1] for a in on_traces)
    assert rules == ["agent-eval.yaml:90)", "policies/customer.yaml:74)"]
    policy = [a for a in annotations if not a["path"].startswith("traces/")]
    results = Results.from_dict(
        json.loads((ws / "agent-eval-results" / "results.json").read_text()))
    assert len(policy) == len(results.findings) == len(annotations) - 2

    github.requests.clear()
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"check-run": "true", "upload-sarif": "false", "comment": "false",
                             "baseline": "none", "trace-annotations": "none"}, name="none")
    assert run.code == 1, run.stderr
    assert github.calls("GET", r"/pulls/2/files$") == []
    assert not [a for a in _annotations(github) if a["path"].startswith("traces/")]


def test_all_trace_lines_are_annotated_on_request(tmp_path: Path, github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "push", payload(
        "push", lambda e: e["ref"].startswith("refs/heads/") and not e["deleted"]),
        inputs={"check-run": "true", "upload-sarif": "false", "trace-annotations": "all"})
    assert run.code == 1, run.stderr
    on_traces = {a["path"] for a in _annotations(github) if a["path"].startswith("traces/")}
    assert "traces/admin-delete.jsonl" in on_traces and len(on_traces) >= 5


def test_unlistable_diff_is_said_once(tmp_path: Path, github: FakeGitHub) -> None:
    from action_harness import FORBIDDEN, Reply

    github.script("GET", r"/pulls/2/files$", Reply(403, FORBIDDEN))
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"check-run": "true", "upload-sarif": "false",
                             "comment": "false", "baseline": "none"})
    assert run.code == 1, run.stderr
    assert run.skips() == []  # not a skipped call: the check run is made, said in the log
    assert "the check run annotates the policy lines only: could not list" in run.stderr
    assert "pull-requests: read" in run.stderr
    assert not [a for a in _annotations(github) if a["path"].startswith("traces/")]
    assert len(github.calls("POST", r"/check-runs$")) == 1  # the check run itself is made


# ------------------------------------------------------------------- file owners
RUNNER_UID = 1001


def _owned_by_root(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in [root, *root.rglob("*")]
                  if p.lstat().st_uid == 0)


def test_files_written_by_the_run_go_back_to_the_workspace_owner(tmp_path: Path,
                                                                 github: FakeGitHub) -> None:
    """The checkout belongs to uid 1001 (a hosted runner's user) and is shallow, so
    ``baseline: git`` fetches the base commit into .git; the action runs as root and
    downloads an artifact into .agent-eval/. Afterwards nothing in the workspace is root's;
    a root-owned file that an earlier step left is not touched."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        missing_system("root for giving files back to the workspace's owner (the action's "
                       "container runs as root)", "run the tests as root")
    origin = make_workspace(tmp_path / "origin")
    base = _git(origin, "rev-parse", "HEAD")
    (origin / "traces" / "later.jsonl").write_text(many_violations(1), encoding="utf-8")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-q", "-m", "head")
    ws = tmp_path / "ws"
    _git(tmp_path, "clone", "-q", "--depth", "1", origin.as_uri(), str(ws))
    earlier = ws / "left-by-an-earlier-root-step.txt"
    earlier.write_text("x")
    for p in [ws, *ws.rglob("*")]:
        if p != earlier:
            os.lchown(p, RUNNER_UID, RUNNER_UID)
    assert _owned_by_root(ws) == [earlier.name]
    assert _git(ws, "rev-parse", "--is-shallow-repository") == "true"
    import time
    time.sleep(SLACK_AND_A_BIT)  # the earlier file is older than the run

    github.add_artifact("extra-traces", _zip({"a.jsonl": many_violations(2)}))
    event = pr_payload("opened")
    event["pull_request"]["base"]["sha"] = base
    run = run_action(tmp_path, ws, github.url, "pull_request", event,
                     inputs={"baseline": "git", "upload-sarif": "false", "comment": "false"})
    assert run.code == 1, run.stderr
    assert "fetched the base commit" in run.stderr
    assert (ws / "agent-eval-results" / "results.json").is_file()
    assert "gave " in run.stderr and "(uid 1001, gid 1001)" in run.stderr
    run = run_action(tmp_path, ws, github.url, "pull_request", event, name="artifact",
                     inputs={"artifact": "extra-traces", "baseline": "none",
                             "upload-sarif": "false", "comment": "false",
                             "output-dir": "from-artifact"})
    assert run.code == 1, run.stderr
    assert (ws / ".agent-eval" / "artifacts" / "extra-traces" / "a.jsonl").is_file()
    assert _owned_by_root(ws) == [earlier.name]
    assert _git(ws, "cat-file", "-t", base) == "commit"


SLACK_AND_A_BIT = 2.5  # github/ownership.py SLACK plus a margin


def _zip(files: dict[str, str]) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return buf.getvalue()


def test_no_traces_hints_at_paths_outside_the_workspace(tmp_path: Path,
                                                        github: FakeGitHub) -> None:
    """Traces written to $RUNNER_TEMP are invisible to the container: the error says so."""
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "push", payload(
        "push", lambda e: e["ref"].startswith("refs/heads/") and not e["deleted"]),
        inputs={"traces": "/home/runner/work/_temp/traces/*.jsonl", "upload-sarif": "false"})
    assert run.code == 2, run.stderr
    results = json.loads((ws / "agent-eval-results" / "results.json").read_text())
    [error] = [e for e in results["input_errors"] if e["rule"] == "input/no_traces"]
    message = error["message"]
    assert message.startswith("no trace file matches '/home/runner/work/_temp/traces/*.jsonl'")
    assert f"sees only the workspace ({ws})" in message
    assert "$RUNNER_TEMP" in message and "agent-eval/agent-eval/python@v1" in message
    assert "sees only the workspace" in run.summary  # and the job summary says it too
