"""``agent-eval action`` end to end against the recording GitHub on loopback: every
request it makes is validated against GitHub's OpenAPI description (openapi-core), the
event payloads are real webhook examples, the workspace is a git repository holding the
customer-service example (10 violations, all error severity: verdict fail, exit 1)."""

from __future__ import annotations

import base64
import gzip
import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from action_harness import (
    EXAMPLE,
    MERGE_SHA,
    FakeGitHub,
    Reply,
    make_workspace,
    many_violations,
    payload,
    pr_payload,
    push_payload,
    run_action,
)

from agent_eval.api import load_suite, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.renderers import RENDERERS, RenderContext
from agent_eval.results import Results

MARKER = "<!-- agent-eval:customer-service-agent -->"
FILES = ("results.json", "results.sarif", "junit.xml", "summary.md", "report.html")


def _sarif_of(body: dict[str, object]) -> bytes:
    return gzip.decompress(base64.b64decode(str(body["sarif"]), validate=True))


def test_pull_request_opened_does_every_step(tmp_path: Path, github: FakeGitHub) -> None:
    github.sarif_statuses = ["pending", "complete"]
    ws = make_workspace(tmp_path / "ws")
    event = pr_payload("opened")
    run = run_action(tmp_path, ws, github.url, "pull_request", event)

    assert run.code == 1, run.stderr
    assert github.problems == []
    out = ws / "agent-eval-results"
    for name in FILES:
        assert (out / name).is_file(), name
    results = json.loads((out / "results.json").read_text())
    assert results["verdict"] == "fail" and results["counts"]["violations"] == 10

    # outputs (heredoc syntax) and the job summary
    metrics = results["metrics"]
    assert run.outputs == {
        "verdict": "fail", "pass-rate": repr(float(metrics["pass_rate"])),
        # the error and warning findings: 10 rule violations (error), 10 scenario findings
        # (7 error, 2 warning, 1 note) and 7 criteria missed (5 fail, 2 warn): 26, all new
        "score": repr(float(metrics["composite"])), "violations": "26",
        "new-violations": "26", "regressions": "0",
        "results-file": "agent-eval-results/results.json",
        "sarif-file": "agent-eval-results/results.sarif",
        "comment-url": run.outputs["comment-url"]}
    assert re.search(r"^verdict<<ghadelimiter_[0-9a-f-]{36}$",
                     (tmp_path / "run" / "output").read_text(), re.M)
    assert run.summary.startswith(MARKER)
    assert "customer-service-agent: fail" in run.summary

    # workflow annotations: the ten error findings, each at its policy line
    errors = run.lines("::error ")
    assert len(errors) == 10
    assert ("::error file=policies/customer.yaml,line=74,col=9,title=agent-eval%3A "
            "args_valid/maximum::") in "\n".join(errors)

    # the SARIF upload: the body validates (github.problems) and decodes to the file
    [upload] = github.calls("POST", r"/code-scanning/sarifs$")
    body = upload.json
    assert _sarif_of(body) == (out / "results.sarif").read_bytes()
    assert body["ref"] == "refs/pull/2/merge" and body["commit_sha"] == MERGE_SHA
    assert body["tool_name"] == "agent-eval"
    assert body["checkout_uri"] == ws.resolve().as_uri()
    polls = github.calls("GET", r"/code-scanning/sarifs/[^/]+$")
    assert len(polls) == 2  # pending, then complete

    # one comment, with the marker, on pull request 2
    [post] = github.calls("POST", r"/issues/2/comments$")
    assert post.json["body"].startswith(MARKER)
    assert post.json["body"] == (out / "summary.md").read_text()
    assert run.outputs["comment-url"] == github.comments[2][0]["html_url"]
    assert github.calls("PATCH") == [] and github.calls("POST", "check-runs") == []

    # the workspace was marked safe for git
    assert f"directory = {ws}" in (run.home / ".gitconfig").read_text()
    # baseline auto: the example payload's base commit is not in the workspace
    assert "not compared with the base branch: git: could not fetch" in run.stderr
    assert "Not compared with the base branch" in run.summary


def test_second_run_on_the_same_pr_edits_the_comment(tmp_path: Path,
                                                      github: FakeGitHub) -> None:
    """Page 1 holds 100 other comments (one of them with the marker, by another user);
    the action's own comment lands on page 2, reached through the Link header."""
    for n in range(99):
        github.add_comment(2, f"comment {n}", "octocat")
    impostor = github.add_comment(2, f"{MARKER}\nquoted by a person", "someone-else")
    ws = make_workspace(tmp_path / "ws")

    first = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                       name="opened")
    assert first.code == 1, first.stderr
    [created] = github.calls("POST", r"/issues/2/comments$")
    mine = github.comments[2][-1]
    assert len(github.comments[2]) == 101 and mine["user"]["login"] == "github-actions[bot]"

    second = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("synchronize"),
                        inputs={"fail-on": "never"}, name="synchronize")
    assert second.code == 0, second.stderr
    assert github.problems == []
    assert len(github.calls("POST", r"/issues/2/comments$")) == 1  # no second comment
    [patch] = github.calls("PATCH", r"/issues/comments/")
    assert patch.path.endswith(f"/issues/comments/{mine['id']}")
    assert patch.json["body"].startswith(MARKER)
    assert impostor["body"].endswith("quoted by a person")  # not touched
    lists = [r for r in github.calls("GET", r"/issues/2/comments$") if r.at > created.at]
    assert [r.param("page") for r in lists] == [None, "2"]
    assert second.outputs["comment-url"] == mine["html_url"]
    assert len(github.comments[2]) == 101


def test_duplicate_comments_of_a_race_end_as_one(tmp_path: Path, github: FakeGitHub) -> None:
    """Two runs that raced each posted the comment (both listed before either posted):
    the next run edits the first and deletes the later one, which went on showing the
    older run's pass below the current failure; a person's comment with the marker is
    not touched. A duplicate that cannot be deleted is edited instead."""
    old = f"{MARKER}\n## ✅ customer-service-agent: pass\n"
    impostor = github.add_comment(2, old + "by a person", "someone-else")
    first = github.add_comment(2, old + "first", "github-actions[bot]")
    second = github.add_comment(2, old + "second", "github-actions[bot]")
    third = github.add_comment(2, old + "third", "github-actions[bot]")
    github.script("DELETE", rf"/issues/comments/{third['id']}$",
                  Reply(403, {"message": "Resource not accessible by integration",
                              "documentation_url": "https://docs.github.com/rest"},
                        check=False))
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("synchronize"),
                     inputs={"baseline": "none"})
    assert run.code == 1, run.stderr
    assert github.problems == []
    assert github.calls("POST", r"/issues/2/comments$") == []
    assert [c["id"] for c in github.comments[2]] == [impostor["id"], first["id"], third["id"]]
    assert impostor["body"].endswith("by a person")
    for c in (first, third):
        assert c["body"].startswith(f"{MARKER}\n## ❌ customer-service-agent: fail\n")
    assert [r.path for r in github.calls("DELETE")] == [
        f"/repos/{github.repo}/issues/comments/{second['id']}",
        f"/repos/{github.repo}/issues/comments/{third['id']}"]
    assert run.outputs["comment-url"] == first["html_url"]
    assert f"deleted the duplicate comment {second['html_url']}" in run.stderr
    assert f"edited the duplicate comment {third['html_url']}" in run.stderr


def test_push_uploads_to_the_pushed_ref(tmp_path: Path, github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws")
    event = push_payload()
    run = run_action(tmp_path, ws, github.url, "push", event,
                     inputs={"sarif-category": "agents/customer-service", "baseline": "none"})
    assert run.code == 1, run.stderr
    assert github.problems == []
    [upload] = github.calls("POST", r"/code-scanning/sarifs$")
    assert upload.json["ref"] == event["ref"] == "refs/heads/master"
    assert upload.json["commit_sha"] == event["after"]
    sarif = (ws / "agent-eval-results" / "results.sarif").read_bytes()
    assert _sarif_of(upload.json) == sarif
    assert json.loads(sarif)["runs"][0]["automationDetails"]["id"] == "agents/customer-service/"
    assert github.calls(path="/issues/") == []  # no pull request, no comment
    assert "not compared with the base branch" not in run.stdout + run.stderr


def test_every_write_forbidden_still_gives_the_verdict(tmp_path: Path,
                                                        github: FakeGitHub) -> None:
    """A fork pull request's read-only token: every POST/PATCH answers 403."""
    github.deny_writes = True
    ws = make_workspace(tmp_path / "ws")
    event = pr_payload("opened")
    run = run_action(tmp_path, ws, github.url, "pull_request", event,
                     inputs={"check-run": "true"})

    assert run.code == 1, run.stderr
    assert github.problems == []
    for name in FILES:
        assert (ws / "agent-eval-results" / name).is_file()
    assert run.outputs["verdict"] == "fail" and run.outputs["violations"] == "26"
    assert run.outputs["comment-url"] == ""
    assert "customer-service-agent: fail" in run.summary
    assert len(run.lines("::error ")) == 10
    warnings = run.skips()
    for call, permission in (("the SARIF upload", "security-events: write"),
                             ("the PR comment", "pull-requests: write"),
                             ("the check run", "checks: write")):
        said = [w for w in warnings if f"skipped {call}:" in w]
        assert len(said) == 1, (call, warnings)
        assert permission in said[0] and "Fork pull requests" in said[0]
        assert f"skipped {call}:" in run.summary
    # each write was tried once (a 403 for a permission is not retried)
    # (besides the GraphQL viewer query that finds the token's login for the comment)
    assert len(github.calls("POST", r"^/repos/")) == 3 and github.calls("PATCH") == []
    # baseline: auto could not compare: the comment and the log say why
    assert "not compared with the base branch: git: could not fetch" in run.stderr


def test_forbidden_writes_with_fail_on_never_exit_0(tmp_path: Path, github: FakeGitHub) -> None:
    github.deny_writes = True
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"fail-on": "never"})
    assert run.code == 0, run.stderr
    assert run.outputs["verdict"] == "fail"


def test_upload_retried_after_502_and_a_secondary_rate_limit(tmp_path: Path,
                                                             github: FakeGitHub) -> None:
    github.script("POST", r"/code-scanning/sarifs$",
                  Reply(502, {"message": "Server Error"}, check=False),
                  Reply(403, {"message": "You have exceeded a secondary rate limit. Please "
                                         "wait a few minutes before you try again.",
                              "documentation_url": "https://docs.github.com/rest"},
                        {"Retry-After": "2"}))
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "push", push_payload())
    assert run.code == 1, run.stderr
    assert github.problems == []
    posts = github.calls("POST", r"/code-scanning/sarifs$")
    assert [p.status for p in posts] == [502, 403, 202]
    assert posts[0].body == posts[1].body == posts[2].body
    assert posts[2].at - posts[1].at >= 2.0  # Retry-After honoured
    assert "502 Server Error; retrying in 1 s (attempt 2 of 4)" in run.stderr
    assert "retrying in 2 s (attempt 3 of 4)" in run.stderr
    assert run.skips() == []
    assert len(github.calls("GET", r"/code-scanning/sarifs/")) == 1


def test_answers_of_another_shape_cost_at_most_their_own_call(tmp_path: Path,
                                                              github: FakeGitHub) -> None:
    """Answers GitHub does not give (cut off, not JSON, not an object with an id) are API
    errors of their own call: the SARIF upload whose answer was cut off is tried again,
    the viewer query's text answer leaves the Actions bot as the author, the comment whose
    POST answered text is found again and edited (it was made), and the check run whose
    answer is a list is skipped with the reason. They stopped every later call as an
    internal error (a TypeError, KeyError or AttributeError), the check run unsaid."""
    github.script("POST", r"/code-scanning/sarifs$",
                  Reply(202, b'{"id": "cut', {"Content-Type": "application/json"},
                        check=False))
    github.script("POST", r"^/graphql$",
                  Reply(200, b"oops", {"Content-Type": "text/plain"}, check=False))
    github.script_lost_answer("POST", r"/issues/2/comments$",
                              Reply(201, b"not json", {"Content-Type": "application/json"},
                                    check=False))
    github.script("POST", r"/check-runs$", Reply(201, [], check=False))
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"check-run": "true"})
    assert run.code == 1 and run.outputs["verdict"] == "fail", run.stderr
    assert [p.status for p in github.calls("POST", r"/code-scanning/sarifs$")] == [202, 202]
    assert "the answer is not JSON" in run.stderr
    [comment] = github.comments[2]  # made once, by the POST whose answer was lost
    assert comment["body"].startswith(MARKER + "\n")
    assert len(github.calls("PATCH", rf"/issues/comments/{comment['id']}$")) == 1
    assert run.outputs["comment-url"].endswith(f"#issuecomment-{comment['id']}")
    assert len(github.calls("POST", r"/check-runs$")) == 1  # not made twice
    [skip] = run.skips()
    assert skip == ("::warning title=agent-eval::skipped the check run: GitHub said: the "
                    "answer is not a JSON object with an integer id: '[]'")
    assert "internal error" not in run.stdout + run.summary


def test_a_call_that_breaks_costs_only_itself(tmp_path: Path, github: FakeGitHub) -> None:
    """An answer this code does not expect (a SARIF status whose ``errors`` is a number: a
    TypeError in the upload's poll) skips that call with the error, and the comment and the
    check run after it are still made; the exit status is the verdict's."""
    github.script("GET", r"/code-scanning/sarifs/",
                  Reply(200, {"processing_status": "failed", "errors": 5}, check=False))
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"check-run": "true"})
    assert run.code == 1 and run.outputs["verdict"] == "fail", run.stderr
    [skip] = run.skips()
    assert skip.startswith("::warning title=agent-eval::skipped the SARIF upload: it stopped "
                           "on an internal error: TypeError: "), skip
    assert len(github.comments[2]) == 1 and run.outputs["comment-url"]
    assert len(github.calls("POST", r"/check-runs$")) == 1


def test_sarif_processing_errors_are_reported(tmp_path: Path, github: FakeGitHub) -> None:
    github.sarif_statuses = ["failed"]
    github.sarif_errors = ["locationFromSarifResult: expected artifact location"]
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "push", push_payload())
    assert run.code == 1, run.stderr
    [line] = [ln for ln in run.lines("::error ") if "SARIF upload" in ln]
    assert "expected artifact location" in line


def test_an_upload_whose_status_cannot_be_read_is_not_said_skipped(
        tmp_path: Path, github: FakeGitHub) -> None:
    """The SARIF upload was made (202) but reading its processing status failed (5xx
    until the retries ran out): the action said "skipped the SARIF upload", listed it
    among the calls it skipped, and the user looked for a permission that was there. It
    now says the upload was made and that its processing status is unknown."""
    busy = Reply(503, {"message": "Service Unavailable"}, check=False)
    github.script("GET", r"/code-scanning/sarifs/[^/]+$", *[busy] * 4)
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "push", push_payload())
    assert run.code == 1, run.stderr
    assert len(github.calls("POST", r"/code-scanning/sarifs$")) == 1
    assert len(github.calls("GET", r"/code-scanning/sarifs/")) == 4
    assert not [s for s in run.skips() if "skipped the SARIF upload" in s], run.skips()
    [warning] = [s for s in run.skips() if "SARIF upload" in s]
    assert "was made, but its processing status could not be read" in warning, warning
    assert "503 Service Unavailable" in warning
    assert "skipped GitHub calls" not in run.summary


def test_more_than_50_annotations_go_in_batches(tmp_path: Path, github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws", extra_traces={"many.jsonl": many_violations(120)})
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"check-run": "true"})
    assert run.code == 1, run.stderr
    assert github.problems == []
    results = Results.from_dict(
        json.loads((ws / "agent-eval-results" / "results.json").read_text()))
    assert results.counts["violations"] == 130  # 10 in the example, 120 in many.jsonl
    found = results.findings  # and the scenario findings and missed criteria
    total = len(found)
    assert total > 100

    [create] = github.calls("POST", r"/check-runs$")
    updates = github.calls("PATCH", r"/check-runs/\d+$")
    assert create.json["head_sha"] == pr_payload("opened")["pull_request"]["head"]["sha"]
    assert create.json["status"] == "in_progress"
    sizes = [len(r.json["output"]["annotations"]) for r in (create, *updates)]
    assert sizes == [50] * (total // 50) + ([total % 50] if total % 50 else [])
    assert updates[-1].json["conclusion"] == "failure"
    assert updates[-1].json["status"] == "completed"
    assert all("conclusion" not in r.json for r in (create, *updates[:-1]))
    sent = [a for r in (create, *updates) for a in r.json["output"]["annotations"]]
    want = sorted((v.config.file, v.config.line, v.message) for v in found)
    assert sorted((a["path"], a["start_line"], a["message"]) for a in sent) == want
    [run_state] = github.check_runs.values()
    assert len(run_state["annotations"]) == total and run_state["conclusion"] == "failure"

    # the log: 10 error annotations (errors first), then one notice for the others
    assert len(run.lines("::error ")) == 10
    notices = run.lines("::notice ")
    assert f"{total - 10 - len(run.lines('::warning ')) - len(notices) + 1} more finding(s)" \
        in notices[-1]


def test_a_check_run_whose_update_fails_is_still_completed_failing(
        tmp_path: Path, github: FakeGitHub) -> None:
    """The second batch of annotations refused (a 422): the check run stayed in progress,
    and the action said it had skipped it. It is completed with the step's conclusion
    (failure), and the warning says how many annotations it holds."""
    github.script("PATCH", r"/check-runs/\d+$",
                  Reply(422, {"message": "Validation Failed", "documentation_url": "x"},
                        check=False))
    ws = make_workspace(tmp_path / "ws", extra_traces={"many.jsonl": many_violations(120)})
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"check-run": "true"})
    assert run.code == 1, run.stderr
    assert github.problems == []
    [state] = github.check_runs.values()
    assert (state["status"], state["conclusion"]) == ("completed", "failure")
    assert len(state["annotations"]) == 50
    [skip] = [s for s in run.skips() if "check run" in s]
    assert "has its conclusion (failure) but only 50 of" in skip, skip
    assert "422 Validation Failed" in skip and "skipped the check run" not in skip
    assert "only 50 of" in run.summary


def test_an_input_error_is_annotated_before_the_findings(tmp_path: Path,
                                                         github: FakeGitHub) -> None:
    """The input errors that make the verdict error were annotated after every finding:
    with ten error findings or more (GitHub shows ten error annotations of a step) a trace
    file that could not be read had no annotation. The first five come first, in the log
    and in the check run; the others after the findings, which many input errors would
    otherwise leave without any."""
    broken = {f"broken{i}.jsonl": "{not json\n" for i in range(7)}
    ws = make_workspace(tmp_path / "ws", extra_traces={
        "many.jsonl": many_violations(20), **broken})
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"check-run": "true"})
    assert run.code == 2, run.stderr
    errors = run.lines("::error ")
    assert len(errors) == 10
    # (a file no reader recognises: an error of the whole file, line 1 in a check run)
    for i, line in enumerate(errors[:5]):
        assert line.startswith(f"::error file=traces/broken{i}.jsonl,title=agent-eval%3A "
                               "input/unknown_format::no reader recognises this file"), line
    assert not any("input/" in line for line in errors[5:]), errors[5:]
    creates = github.calls("POST", r"/check-runs$")
    updates = github.calls("PATCH", r"/check-runs/\d+$")
    sent = [a for r in (*creates, *updates) for a in r.json["output"]["annotations"]]
    assert [(a["path"], a["start_line"], a["annotation_level"]) for a in sent[:5]] == [
        (f"traces/broken{i}.jsonl", 1, "failure") for i in range(5)]
    assert all("input/unknown_format" in a["title"] for a in sent[:5])
    assert not any("input/" in a["title"] for a in sent[5:-2])
    assert [a["path"] for a in sent[-2:]] == ["traces/broken5.jsonl", "traces/broken6.jsonl"]


def test_traces_from_an_artifact_of_this_run(tmp_path: Path, github: FakeGitHub) -> None:
    artifact = github.add_artifact("agent-traces", _traces_zip(4))
    github.add_artifact("other", b"not a zip")
    ws = make_workspace(tmp_path / "ws")
    for f in (ws / "traces").iterdir():  # the workspace has no traces of its own
        f.unlink()
    run = run_action(tmp_path, ws, github.url, "push", push_payload(),
                     inputs={"artifact": "agent-traces", "upload-sarif": "false"})
    assert github.problems == []
    [listing] = github.calls("GET", r"/actions/runs/7001/artifacts$")
    assert listing.param("name") == "agent-traces"
    assert github.calls("GET", rf"/actions/artifacts/{artifact['id']}/zip$")
    assert github.calls("GET", r"^/_blob/")
    results = json.loads((ws / "agent-eval-results" / "results.json").read_text())
    assert results["counts"]["traces"] == 4
    assert all(t["file"].startswith(".agent-eval/artifacts/agent-traces/")
               for t in results["traces"])
    assert run.code == (1 if results["verdict"] == "fail" else 0)


def test_missing_artifact_is_an_input_error(tmp_path: Path, github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "push", push_payload(),
                     inputs={"artifact": "nope"})
    assert run.code == 2, run.stderr
    assert run.outputs["verdict"] == "error"
    assert "could not get the traces from artifact 'nope'" in run.summary
    assert github.calls("POST") == []


def test_config_error_exits_2_without_calls(tmp_path: Path, github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"config": "missing.yaml"})
    assert run.code == 2, run.stderr
    assert run.outputs == {"verdict": "error"}
    assert "agent-eval could not run" in run.summary
    assert run.lines("::error ")
    assert github.requests == []


def test_invalid_input_exits_2(tmp_path: Path, github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "push", push_payload(),
                     inputs={"fail-on": "sometimes"})
    assert run.code == 2, run.stderr
    assert "input fail-on: 'sometimes' is not one of fail, warn, never" in run.stdout


def test_no_token_skips_the_calls_once(tmp_path: Path, github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"github-token": ""})
    assert run.code == 1, run.stderr
    [warning] = run.skips()
    assert "skipped the SARIF upload, the PR comment: no github-token" in warning
    assert github.requests == []


def test_working_directory_and_repo_relative_paths(tmp_path: Path, github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws", sub="agents/cs")
    run = run_action(tmp_path, ws, github.url, "push", push_payload(),
                     inputs={"working-directory": "agents/cs", "output-dir": "out"})
    assert run.code == 1, run.stderr
    assert github.problems == []
    assert run.outputs["results-file"] == "agents/cs/out/results.json"
    assert "file=agents/cs/policies/customer.yaml,line=74" in run.stdout
    [upload] = github.calls("POST", r"/code-scanning/sarifs$")
    assert _sarif_of(upload.json) == (ws / "agents/cs/out/results.sarif").read_bytes()


def _traces_zip(count: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for f in sorted((EXAMPLE / "traces").glob("*.jsonl"))[:count]:
            zf.write(f, f.name)
    return buf.getvalue()


def test_workflow_run_for_a_fork_pull_request(tmp_path: Path) -> None:
    """The fork pattern: the untrusted ``pull_request`` run uploaded the traces as an
    artifact; this privileged ``workflow_run`` run evaluates them, finds the pull request
    (the payload lists none for forks), uploads SARIF to it and comments on it."""
    event = payload("workflow_run", lambda e: e["action"] == "completed"
                    and not e["workflow_run"]["pull_requests"])
    wr = event["workflow_run"]
    wr["event"] = "pull_request"
    wr["head_repository"]["full_name"] = "stranger/octo-repo"
    with FakeGitHub(repo=event["repository"]["full_name"]) as gh:
        gh.add_pull(17, wr["head_sha"], "stranger", wr["head_branch"])
        gh.add_pull(18, "f" * 40, "other", "elsewhere")
        gh.add_artifact("agent-traces", _traces_zip(10))
        ws = make_workspace(tmp_path / "ws")
        run = run_action(tmp_path, ws, gh.url, "workflow_run", event,
                         inputs={"artifact": "agent-traces", "check-run": "true"})
        assert run.code == 1, run.stderr
        assert gh.problems == []
        [lookup] = gh.calls("GET", r"/pulls$")
        assert lookup.param("head") == f"stranger:{wr['head_branch']}"
        assert gh.calls("GET", rf"/actions/runs/{wr['id']}/artifacts$")
        [upload] = gh.calls("POST", r"/code-scanning/sarifs$")
        assert (upload.json["ref"], upload.json["commit_sha"]) == (
            "refs/pull/17/head", wr["head_sha"])
        assert len(gh.calls("POST", r"/issues/17/comments$")) == 1
        [check] = gh.calls("POST", r"/check-runs$")
        assert check.json["head_sha"] == wr["head_sha"]
        comment = gh.comments[17][0]
        assert run.outputs["comment-url"].endswith(f"/pull/17#issuecomment-{comment['id']}")


def test_workflow_run_whose_pull_request_is_not_found_says_why_there_is_no_comment(
        tmp_path: Path) -> None:
    """The fork pattern's second workflow (comment: auto) when no open pull request has
    the triggering run's head commit as its head (pushed to again, or closed): no comment
    was made and nothing said why, as if the run were not for a pull request. The
    skipped comment is said, with the reason."""
    event = payload("workflow_run", lambda e: e["action"] == "completed"
                    and not e["workflow_run"]["pull_requests"])
    wr = event["workflow_run"]
    wr["event"] = "pull_request"
    wr["head_repository"]["full_name"] = "stranger/octo-repo"
    with FakeGitHub(repo=event["repository"]["full_name"]) as gh:
        gh.add_pull(17, "e" * 40, "stranger", wr["head_branch"])  # pushed to since
        gh.add_artifact("agent-traces", _traces_zip(10))
        ws = make_workspace(tmp_path / "ws")
        run = run_action(tmp_path, ws, gh.url, "workflow_run", event,
                         inputs={"artifact": "agent-traces", "baseline": "none",
                                 "fail-on": "never", "check-run": "true"})
        assert run.code == 0 and run.outputs["verdict"] == "fail", run.stderr
        assert gh.problems == [] and gh.comments == {}
        [check] = gh.calls("POST", r"/check-runs$")  # still on the triggering head
        assert check.json["head_sha"] == wr["head_sha"]
        [skip] = [s for s in run.skips() if "the PR comment" in s]
        assert (f"skipped the PR comment: no open pull request has the triggering run's "
                f"head commit {wr['head_sha'][:12]} as its head") in skip, skip
        assert run.outputs["comment-url"] == ""


def test_workflow_run_for_a_fork_compares_with_the_base_of_the_pull_request_found(
        tmp_path: Path) -> None:
    """The pull request the action looks up for a fork's ``workflow_run`` (the payload
    lists none) gives the base branch (``master`` in the description's example) before the
    baseline is looked for: ``baseline: artifact`` takes the base branch's results. The
    lookup came after it, so the baseline was 'not for a workflow_run event': no
    comparison, no gate, not a word in the comment."""
    from action_harness import workflow_run, workflow_runs

    event = payload("workflow_run", lambda e: e["action"] == "completed"
                    and not e["workflow_run"]["pull_requests"])
    wr = event["workflow_run"]
    wr["event"] = "pull_request"
    wr["head_repository"]["full_name"] = "stranger/octo-repo"
    suite = load_suite(EXAMPLE / "agent-eval.yaml")
    files, errors = suite_sources(suite, base=EXAMPLE)
    base = RENDERERS["json"].render(evaluate_files(suite, files, errors, timings=False),
                                    RenderContext())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("results.json", base)
    with FakeGitHub(repo=event["repository"]["full_name"]) as gh:
        gh.add_pull(17, wr["head_sha"], "stranger", wr["head_branch"])
        gh.add_artifact("agent-traces", _traces_zip(10))
        gh.add_artifact("agent-eval-results", buf.getvalue())
        gh.script("GET", r"/actions/workflows/comment\.yml/runs$",
                  Reply(200, workflow_runs(workflow_run(4242, branch="master"))))
        ws = make_workspace(tmp_path / "ws")
        run = run_action(tmp_path, ws, gh.url, "workflow_run", event,
                         inputs={"artifact": "agent-traces", "baseline": "artifact"},
                         env={"GITHUB_WORKFLOW_REF": f"{gh.repo}/.github/workflows/"
                                                     "comment.yml@refs/heads/master"})
        assert run.code == 1, run.stderr
        assert gh.problems == []
        [runs] = gh.calls("GET", r"/actions/workflows/comment\.yml/runs$")
        assert (runs.param("branch"), runs.param("event")) == ("master", "push")
        results = json.loads((ws / "agent-eval-results" / "results.json").read_text())
        assert results["baseline"]["source"] == {
            "kind": "artifact", "artifact": "agent-eval-results", "branch": "master",
            "run_id": 4242, "description": "artifact agent-eval-results of run 4242 on master"}
        assert run.outputs["new-violations"] == str(results["baseline"]["new_violations"])
        assert "**Against the base branch** (artifact agent-eval-results of run 4242 on " \
               "master)" in gh.comments[17][0]["body"]


@pytest.mark.parametrize("kind", ["artifact", "auto"])
def test_workflow_run_for_a_pull_request_that_is_not_found_is_never_uncompared_unsaid(
        tmp_path: Path, kind: str) -> None:
    """A fork's ``workflow_run`` whose pull request the lookup does not find (its head
    moved on, it was closed, or the token may not list pull requests) was taken for a run
    with no base branch, like a push's: ``baseline: artifact`` was skipped with a log line
    ("this run is for a workflow_run event") and the regression gates with it. Asked for
    by name, it now stops the run; under ``auto`` the results say why."""
    event = payload("workflow_run", lambda e: e["action"] == "completed"
                    and not e["workflow_run"]["pull_requests"])
    wr = event["workflow_run"]
    wr["event"] = "pull_request"
    wr["head_repository"]["full_name"] = "stranger/octo-repo"
    with FakeGitHub(repo=event["repository"]["full_name"]) as gh:
        gh.add_pull(17, "e" * 40, "stranger", wr["head_branch"])  # pushed to again since
        gh.add_artifact("agent-traces", _traces_zip(10))
        ws = make_workspace(tmp_path / "ws")
        run = run_action(tmp_path, ws, gh.url, "workflow_run", event,
                         inputs={"artifact": "agent-traces", "baseline": kind},
                         env={"GITHUB_WORKFLOW_REF": f"{gh.repo}/.github/workflows/"
                                                     "comment.yml@refs/heads/master"})
        lost = (f"this workflow_run run is for a pull request, but no open pull request "
                f"with the triggering run's head commit {wr['head_sha'][:12]} as its head "
                "was found (it was pushed to again or closed since, or the pull requests "
                "could not be listed: see the log), so its base branch is unknown")
        assert gh.calls("GET", r"/actions/workflows/comment\.yml/runs$") == []
        if kind == "artifact":
            assert run.code == 2, run.stderr
            assert f"baseline: artifact was asked for and cannot be had: {lost}." in run.stdout
            assert not (ws / "agent-eval-results" / "results.json").exists()
            return
        assert run.code == 1, run.stderr  # the example's own failures
        results = json.loads((ws / "agent-eval-results" / "results.json").read_text())
        assert results["baseline"]["available"] is False
        assert results["baseline"]["reason"].startswith(f"{lost}. To compare, ")


def test_baseline_git_with_traces_from_an_artifact_says_why_it_cannot_be_had(
        tmp_path: Path) -> None:
    """The base commit's committed traces are not the base run of traces that come from
    an artifact, so ``baseline: git`` cannot be had; the run stopped saying "git: not
    available for this event", though the event (a pull request's run, its base commit
    known) was not the reason."""
    event = payload("workflow_run", lambda e: e["action"] == "completed"
                    and not e["workflow_run"]["pull_requests"])
    wr = event["workflow_run"]
    wr["event"] = "pull_request"
    wr["head_repository"]["full_name"] = "stranger/octo-repo"
    with FakeGitHub(repo=event["repository"]["full_name"]) as gh:
        gh.add_pull(17, wr["head_sha"], "stranger", wr["head_branch"])
        gh.add_artifact("agent-traces", _traces_zip(10))
        ws = make_workspace(tmp_path / "ws")
        run = run_action(tmp_path, ws, gh.url, "workflow_run", event,
                         inputs={"artifact": "agent-traces", "baseline": "git"})
        assert run.code == 2, run.stderr
        assert ("baseline: git was asked for and cannot be had: git: the traces come from "
                "an artifact (input `artifact`), not from the repository, so the base "
                "commit's committed traces are not the base run of these; compare with the "
                "base branch's results artifact (baseline: artifact).") in run.stdout


def test_an_odd_pull_request_list_before_the_evaluation_does_not_hide_the_verdict(
        tmp_path: Path) -> None:
    """The pull request lookup of a fork's ``workflow_run`` runs before the evaluation; a
    listed pull request whose ``head`` is not an object (an answer GitHub does not give)
    stopped the whole run as an internal error (an AttributeError, exit 2, no results).
    It is a pull request not found: the verdict is the suite's, and the results say why
    there is no comparison."""
    event = payload("workflow_run", lambda e: e["action"] == "completed"
                    and not e["workflow_run"]["pull_requests"])
    wr = event["workflow_run"]
    wr["event"] = "pull_request"
    wr["head_repository"]["full_name"] = "stranger/octo-repo"
    with FakeGitHub(repo=event["repository"]["full_name"]) as gh:
        gh.script("GET", r"/pulls$", Reply(200, [{"number": 17, "head": wr["head_sha"]}],
                                           check=False))
        gh.add_artifact("agent-traces", _traces_zip(10))
        ws = make_workspace(tmp_path / "ws")
        run = run_action(tmp_path, ws, gh.url, "workflow_run", event,
                         inputs={"artifact": "agent-traces", "upload-sarif": "false"})
        assert run.code == 1, run.stderr  # the example's own failures
        assert run.outputs["verdict"] == "fail"
        assert "internal error" not in run.stdout + run.stderr
        results = json.loads((ws / "agent-eval-results" / "results.json").read_text())
        assert results["baseline"]["available"] is False
        assert "no open pull request with the triggering run's head commit" in \
            results["baseline"]["reason"]


@pytest.mark.parametrize("use", ["traces", "baseline"])
def test_an_artifact_listed_without_an_id_is_an_api_error(tmp_path: Path, github: FakeGitHub,
                                                          use: str) -> None:
    """An artifact list whose artifact has no integer ``id`` (an answer GitHub does not
    give) was an internal error (a TypeError in ``int(None)``): for the baseline artifact
    under ``baseline: auto`` it hid the verdict (exit 2, no results), for the traces it
    was called a bug in agent-eval. It is an API error: the baseline is not compared,
    saying why, and the traces cannot be had, saying why."""
    from action_harness import workflow_run, workflow_runs

    name = "agent-traces" if use == "traces" else "agent-eval-results"
    github.script("GET", r"/actions/runs/\d+/artifacts$",
                  Reply(200, {"total_count": 1, "artifacts": [{"name": name, "id": None}]},
                        check=False))
    github.script("GET", r"/actions/workflows/ci\.yml/runs$",
                  Reply(200, workflow_runs(workflow_run(4242, branch="master"))))
    ws = make_workspace(tmp_path / "ws")
    inputs = {"upload-sarif": "false", "comment": "false"}
    if use == "traces":
        inputs["artifact"] = name
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs=inputs, env={"GITHUB_WORKFLOW_REF": f"{github.repo}/.github/"
                                                                "workflows/ci.yml@refs/heads/x"})
    said = f"the answer lists artifact '{name}' without an integer id"
    assert "internal error" not in run.stdout + run.stderr
    if use == "traces":
        assert run.code == 2 and run.outputs["verdict"] == "error", run.stderr
        assert f"could not get the traces from artifact '{name}'" in run.stdout
        assert said in run.stdout
        return
    assert run.code == 1 and run.outputs["verdict"] == "fail", run.stderr
    results = json.loads((ws / "agent-eval-results" / "results.json").read_text())
    assert results["baseline"]["available"] is False
    assert said in results["baseline"]["reason"]


@pytest.mark.parametrize("kind", ["git", "artifact", "auto"])
def test_a_pull_request_run_whose_payload_names_none_is_never_uncompared_unsaid(
        tmp_path: Path, github: FakeGitHub, kind: str) -> None:
    """A ``pull_request`` run whose event file cannot be read (the run warns of it) has
    no pull request, no base: ``baseline: git`` and ``artifact``, asked for by name, were
    skipped with a log line ("this pull_request event names no base commit", "this run
    is for a pull_request event") and the regression gates with them. It is a pull
    request's run whose base is unknown, as a ``workflow_run`` one whose pull request is
    not found: asked for by name, the baseline stops the run; under ``auto`` the results
    say why there is none."""
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"baseline": kind, "upload-sarif": "false"},
                     env={"GITHUB_EVENT_PATH": str(tmp_path / "missing.json")})
    assert run.skips()[0].startswith("::warning title=agent-eval::cannot read "
                                     "GITHUB_EVENT_PATH "), run.stdout
    lost = ("this pull_request run is for a pull request, but its event payload "
            "(GITHUB_EVENT_PATH) names none (see the warning about it), so its base branch "
            "is unknown")
    if kind != "auto":
        assert run.code == 2, run.stderr
        assert (f"::error title=agent-eval::baseline: {kind} was asked for and cannot be "
                f"had: {lost}. Use baseline: auto to go on without a comparison (saying "
                "why), or baseline: none.") in run.stdout.splitlines()
        assert not (ws / "agent-eval-results" / "results.json").exists()
        return
    assert run.code == 1, run.stderr  # the example's own failures
    results = json.loads((ws / "agent-eval-results" / "results.json").read_text())
    assert results["baseline"]["available"] is False
    assert results["baseline"]["reason"].startswith(f"{lost}. To compare, ")


@pytest.mark.parametrize("name", ["pull_request", "pull_request_target"])
def test_a_pull_request_run_whose_payload_names_none_attaches_nothing_to_a_branch(
        tmp_path: Path, github: FakeGitHub, name: str) -> None:
    """A pull request's run whose event file cannot be read (the run warns of it) was
    taken for a branch's: under ``pull_request_target`` (GITHUB_REF the base branch,
    GITHUB_SHA its tip) the SARIF went to ``refs/heads/master`` and the check run onto the
    base branch's tip, with the verdict of a workspace the workflow may have checked out
    at the pull request's head (a clean analysis closes the branch's alerts); under
    ``pull_request`` the check run went onto the merge commit, where the pull request does
    not show it. Neither is made, saying why; a ``pull_request`` run's SARIF still goes
    to its merge ref (GITHUB_REF ``refs/pull/N/merge``, GITHUB_SHA), as with the payload."""
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, name, pr_payload("opened"),
                     inputs={"check-run": "true", "baseline": "none"},
                     env={"GITHUB_EVENT_PATH": str(tmp_path / "missing.json")})
    assert run.code == 1, run.stderr
    assert github.calls(path=r"/check-runs") == []
    uploads = github.calls("POST", r"/code-scanning/sarifs$")
    skips = run.skips()
    assert skips[0].startswith("::warning title=agent-eval::cannot read GITHUB_EVENT_PATH ")
    calls = ["the check run"]
    if name == "pull_request":
        assert [(u.json["ref"], u.json["commit_sha"]) for u in uploads] == [
            ("refs/pull/2/merge", MERGE_SHA)]
    else:
        assert uploads == []
        calls.append("the SARIF upload")
    for call in calls:
        [skip] = [s for s in skips if f"skipped {call}:" in s]
        assert f"this {name} run names no pull request" in skip, skip


def test_baseline_git_in_a_merge_queue_whose_payload_names_no_base_stops(
        tmp_path: Path, github: FakeGitHub) -> None:
    """A ``merge_group`` payload without ``base_sha``: ``baseline: git``, asked for by
    name, was skipped with a log line, and the queue's regression gates with it."""
    event = payload("merge_group", lambda e: True)
    del event["merge_group"]["base_sha"]
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "merge_group", event,
                     inputs={"baseline": "git", "upload-sarif": "false"})
    assert run.code == 2, run.stderr
    assert ("::error title=agent-eval::baseline: git was asked for and cannot be had: git: "
            "this merge_group event's payload names no base commit. Fix it, or use baseline: "
            "auto to fall back to no comparison (saying why), or baseline: none."
            ) in run.stdout.splitlines()
