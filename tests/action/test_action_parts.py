"""The action's parts on their own: the event (real webhook payloads), workflow commands,
outputs and the summary limit, the inputs, and the client's retries (with the sleep
recorded instead of slept)."""

from __future__ import annotations

from pathlib import Path

import pytest
from action_harness import (
    MERGE_SHA,
    FakeGitHub,
    Reply,
    payload,
    pr_payload,
    push_payload,
    require_node_tools,
    run_action,
)

from agent_eval.github import workflow
from agent_eval.github.client import ApiError, GitHubClient, next_link, retry_after
from agent_eval.github.event import Target, from_payload
from agent_eval.github.inputs import read_inputs
from agent_eval.github.step import Step

HEAD = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"  # head.sha of the pull_request examples


@pytest.fixture(autouse=True)
def _tools() -> None:
    require_node_tools()


# ----------------------------------------------------------------------- the event
def test_pull_request_targets_the_merge_ref_or_the_head() -> None:
    env = {"GITHUB_SHA": MERGE_SHA, "GITHUB_REF": "refs/pull/2/merge",
           "GITHUB_REPOSITORY": "Codertocat/Hello-World"}
    ev = from_payload("pull_request", pr_payload("opened"), env)
    assert (ev.pr_number, ev.head_sha, ev.base_ref, ev.fork) == (2, HEAD, "master", False)
    assert ev.sarif_target() == Target("refs/pull/2/merge", MERGE_SHA)
    assert ev.sarif_target(checked_out=HEAD) == Target("refs/pull/2/head", HEAD)
    assert ev.check_sha == HEAD
    # pull_request_target: the head only when the workspace is at it (test_action_events.py)
    target = from_payload("pull_request_target", pr_payload("synchronize"), env)
    assert target.sarif_target(checked_out=HEAD) == Target("refs/pull/2/head", HEAD)
    assert target.sarif_target() is None


def test_fork_pull_request_is_seen() -> None:
    p = pr_payload("opened")
    p["pull_request"]["head"]["repo"]["full_name"] = "stranger/Hello-World"
    ev = from_payload("pull_request", p, {"GITHUB_REPOSITORY": "Codertocat/Hello-World"})
    assert ev.fork


def test_push_and_deleted_push() -> None:
    p = push_payload()
    ev = from_payload("push", p, {"GITHUB_SHA": p["after"], "GITHUB_REF": p["ref"]})
    assert ev.sarif_target() == Target("refs/heads/master", p["after"])
    assert not ev.is_pull_request and ev.check_sha == p["after"]
    gone = payload("push", lambda e: e["deleted"])
    ev = from_payload("push", gone, {"GITHUB_REF": gone["ref"]})
    assert ev.sarif_target() is None and "deleted" in ev.no_target_reason()


def test_workflow_run_uses_the_triggering_run() -> None:
    p = payload("workflow_run", lambda e: bool(e["workflow_run"]["pull_requests"]))
    ev = from_payload("workflow_run", p, {"GITHUB_RUN_ID": "5"})
    sha = p["workflow_run"]["head_sha"]
    assert ev.pr_number == 2 and ev.artifact_run_id == p["workflow_run"]["id"] != 5
    assert ev.sarif_target() == Target("refs/pull/2/head", sha)
    assert ev.check_sha == sha
    none = payload("workflow_run", lambda e: e["workflow_run"]["event"] == "workflow_dispatch")
    assert from_payload("workflow_run", none, {}).sarif_target() is None


def test_unreadable_event_file_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    from agent_eval.github.event import load_event

    bad = tmp_path / "event.json"
    bad.write_text("[1, 2")
    ev = load_event({"GITHUB_EVENT_PATH": str(bad), "GITHUB_EVENT_NAME": "push",
                     "GITHUB_REF": "refs/heads/main", "GITHUB_SHA": "b" * 40})
    assert ev.problems and ev.sarif_target() == Target("refs/heads/main", "b" * 40)


@pytest.mark.parametrize("case", ["nested", "large", "fifo"])
def test_a_hostile_event_file_is_a_problem_not_a_crash(tmp_path: Path, case: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """An event file nested 100,000 deep was a RecursionError (the run stopped as an
    internal error); one larger than the bound was read whole, and a FIFO was waited on
    for ever. Each is a problem the run warns of, with the payload left empty."""
    import os

    from agent_eval.github import event as event_module

    bad = tmp_path / "event.json"
    if case == "nested":
        bad.write_text('{"pull_request": ' + "[" * 100_000 + "]" * 100_000 + "}")
    elif case == "large":
        monkeypatch.setattr(event_module, "MAX_EVENT_BYTES", 100)
        bad.write_text('{"number": 2, "pull_request": {"title": "' + "x" * 100 + '"}}')
    else:
        os.mkfifo(bad)
    ev = event_module.load_event({"GITHUB_EVENT_PATH": str(bad),
                                  "GITHUB_EVENT_NAME": "pull_request"})
    [problem] = ev.problems
    assert problem.startswith(f"cannot read GITHUB_EVENT_PATH {bad}: "), problem
    if case == "large":
        assert problem.endswith("it is larger than 100 bytes")
    assert ev.payload == {} and ev.pr_number is None


def test_a_number_of_other_digits_in_an_event_is_no_number() -> None:
    """``"²".isdigit()`` is true and ``int("²")`` a ValueError: a payload whose pull
    request number was such a string stopped the run as an internal error. Only ASCII
    digits make a number (``"١٢"``, Arabic-Indic, was read as 12)."""
    pr = {"number": "²", "pull_request": {"head": {"sha": "a" * 40}}}
    assert from_payload("pull_request", pr, {}).pr_number is None
    assert from_payload("push", {}, {"GITHUB_RUN_ID": "\u0661\u0662"}).run_id is None
    assert from_payload("push", {}, {"GITHUB_RUN_ID": "12"}).run_id == 12


# --------------------------------------------------------------- workflow commands
def test_annotation_escaping() -> None:
    line = workflow.command("error", "50%\nof it", file="a,b:c.yaml", line=3, title="t: x")
    assert line == "::error file=a%2Cb%3Ac.yaml,line=3,title=t%3A x::50%25%0Aof it"


def test_a_log_line_is_one_line_and_runs_no_workflow_command(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The action's stderr is outside the report's ``::stop-commands::`` fence and its
    lines quote a baseline's or the suite's names: a line break there started a line of
    its own (``::error::``) and ``##[…]`` anywhere in the line was run by the runner (the
    older form of a workflow command)."""
    Step(env={}).log("baseline of suite 'x ##[add-mask]FAIL'\n::error::forged\r##[warning]y")
    err = capsys.readouterr().err
    assert err == ("agent-eval: baseline of suite 'x ##\\x5badd-mask]FAIL'\\x0a::error::"
                   "forged\\x0d##\\x5bwarning]y\n")


def test_an_internal_error_of_the_action_runs_no_workflow_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The action wrote an internal error's traceback to stderr as it was: its exception
    message may quote a trace or a suite, and a line break in it started a line of the log
    of its own (``::add-mask::``, ``::error::``: a workflow command of the job, outside the
    report's fence), ``##[`` anywhere too. Each line is now escaped behind a bar, as the
    CLI writes it; the run still stops with exit 2 and the verdict output ``error``."""
    import io

    from agent_eval.commands import action

    def fail(step: Step) -> None:
        raise ValueError("tool\n::add-mask::forged\r\n::error file=a::forged ##[error]x")

    monkeypatch.setattr(action, "_setup", fail)
    out = io.StringIO()
    outputs = tmp_path / "outputs"
    code = action.run({"GITHUB_OUTPUT": str(outputs)}, out)
    assert code == 2
    err = capsys.readouterr().err
    assert "##[" not in err and "\r" not in err
    lines = err.splitlines()
    assert lines and not any(line.lstrip().startswith("::") for line in lines), err
    assert lines[0] == "  | Traceback (most recent call last):"
    assert all(line.startswith("  | ") for line in lines)
    assert any("in fail" in line for line in lines)
    assert workflow.read_outputs(outputs.read_text(encoding="utf-8")) == {"verdict": "error"}
    assert not any(line.startswith("::add-mask") for line in out.getvalue().splitlines())


def test_ten_per_level_then_one_notice() -> None:
    many = [workflow.Annotation(level, f"{level} {i}") for level in ("error", "notice")
            for i in range(12)]
    lines = workflow.annotation_lines(many, "see the summary")
    assert sum(ln.startswith("::error::") for ln in lines) == 10
    assert sum(ln.startswith("::notice::") for ln in lines) == 9
    assert lines[-1].startswith("::notice title=agent-eval::5 more finding(s)")


def test_outputs_round_trip_with_multiline_values(tmp_path: Path) -> None:
    out = tmp_path / "output"
    workflow.write_outputs(out, {"a": "1", "b": "two\nlines", "c": ""})
    assert workflow.read_outputs(out.read_text()) == {"a": "1", "b": "two\nlines", "c": ""}


def test_summary_stays_under_1_mib(tmp_path: Path) -> None:
    summary = tmp_path / "summary"
    summary.write_text("x" * 1000 + "\n")
    text = "".join(f"| row {i} | ✅ |\n" for i in range(200_000))
    written = workflow.append_summary(summary, text, note="See results.json.")
    size = summary.stat().st_size
    assert size <= workflow.SUMMARY_LIMIT
    assert size > workflow.SUMMARY_LIMIT - 200
    assert written.endswith("the job summary is limited to 1 MiB. See results.json.\n")
    assert "| row 0 | ✅ |" in written


# ------------------------------------------------------------------------- inputs
def test_inputs_from_the_environment_with_dashes() -> None:
    inp, problems = read_inputs({"INPUT_GITHUB-TOKEN": "t", "INPUT_UPLOAD-SARIF": "False",
                                 "INPUT_TRACES": "a/*.jsonl\nb/*.jsonl, c.jsonl",
                                 "INPUT_COMMENT": "true", "INPUT_CHECK-RUN": "",
                                 "INPUT_BASELINE": "none", "INPUT_FAIL-ON": "warn"})
    assert problems == []
    assert (inp.github_token, inp.upload_sarif, inp.comment, inp.check_run) == (
        "t", False, "true", False)
    assert inp.traces == ["a/*.jsonl", "b/*.jsonl", "c.jsonl"]
    assert (inp.baseline, inp.fail_on, inp.baseline_artifact) == (
        "none", "warn", "agent-eval-results")
    _, problems = read_inputs({"INPUT_BASELINE": "maybe", "INPUT_CHECK-RUN": "sure"})
    assert len(problems) == 2


def test_a_traces_input_of_separators_only_is_a_problem() -> None:
    """``traces: ","`` (or a comma on a line of its own) named no glob and was taken as an
    empty list: no file read, and the run's error pointed at the suite's ``traces:`` line
    ("no traces were read") as if the suite were wrong. It is a problem of the input."""
    inp, problems = read_inputs({"INPUT_TRACES": " ,\n , "})
    assert problems == ["input traces: ',\\n ,' names no file or glob (one a line or "
                        "comma-separated); leave it empty for the suite's"]
    assert inp.traces is None


# ------------------------------------------------------------------------ client
def test_link_and_retry_after_parsing() -> None:
    link = ('<https://api.github.com/x?page=2>; rel="next", '
            '<https://api.github.com/x?page=5>; rel="last"')
    assert next_link(link) == "https://api.github.com/x?page=2"
    assert next_link('<https://api.github.com/x?page=1>; rel="prev"') is None
    assert retry_after({"retry-after": "7"}) == 7.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after({}) is None


def _client(github: FakeGitHub, slept: list[float]) -> GitHubClient:
    return GitHubClient("t", github.repo, github.url, sleep=slept.append,
                        seconds_between_requests=0, seconds_between_writes=0,
                        log=lambda _m: None)


def test_client_waits_as_told_and_gives_up_in_bounds(github: FakeGitHub) -> None:
    slept: list[float] = []
    secondary = {"message": "You have exceeded a secondary rate limit",
                 "documentation_url": "x"}
    # rate limits answer 403 on any endpoint, documented there or not: not checked
    github.script("GET", r"/issues/9/comments$",
                  Reply(503, {"message": "busy"}, check=False),
                  Reply(403, secondary, {"Retry-After": "7"}, check=False),
                  Reply(403, secondary, check=False))
    client = _client(github, slept)
    assert list(client.comments(9)) == []
    assert slept == [1.0, 7.0, 60.0]  # backoff, Retry-After, GitHub's one minute

    slept.clear()
    github.script("GET", r"/issues/8/comments$",
                  *[Reply(502, {"message": "bad gateway"}, check=False)] * 4)
    with pytest.raises(ApiError) as err:
        list(client.comments(8))
    assert err.value.status == 502 and slept == [1.0, 2.0, 4.0]  # 4 attempts in all

    slept.clear()
    github.script("GET", r"/issues/7/comments$",
                  Reply(403, secondary, {"Retry-After": "3600"}, check=False))
    with pytest.raises(ApiError):
        list(client.comments(7))
    assert slept == []  # longer than max_wait: not waited for

    github.script("POST", r"/issues/6/comments$", Reply(403, {"message": "Forbidden"}))
    with pytest.raises(ApiError) as err:
        client.upsert_comment(6, "<!-- m -->\nbody", "<!-- m -->")
    assert err.value.denied and slept == []  # a permission is not retried
    assert github.problems == []


def test_client_polls_until_complete_and_ignores_early_404(github: FakeGitHub) -> None:
    slept: list[float] = []
    github.sarif_statuses = ["pending", "pending", "complete"]
    github.script("GET", r"/code-scanning/sarifs/", Reply(404, {"message": "Not Found"}))
    client = _client(github, slept)
    up = client.upload_sarif("{}", commit_sha="a" * 40, ref="refs/heads/main")
    assert up.status == "complete" and slept == [1.0, 2.0, 4.0, 8.0]
    assert github.problems == []


def test_client_stops_polling_at_the_deadline(github: FakeGitHub) -> None:
    github.sarif_statuses = ["pending"]
    client = GitHubClient("t", github.repo, github.url, sleep=lambda s: None,
                          seconds_between_requests=0, seconds_between_writes=0,
                          log=lambda _m: None)
    up = client.upload_sarif("{}", commit_sha="a" * 40, ref="refs/heads/main",
                             poll_timeout=0.3)
    assert up.status == "pending"


def test_no_suite_file_says_which_input_to_set(tmp_path: Path) -> None:
    """Without the `config` input and with no suite file in the working directory, the
    action said "pass --config PATH": an option of `agent-eval run` that a workflow cannot
    give the action. It names the inputs that say where the suite is."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    run = run_action(tmp_path, ws, "http://127.0.0.1:9", "push", push_payload(),
                     inputs={"github-token": "", "upload-sarif": "false"})
    assert run.code == 2, run.stderr
    assert run.lines("::error title=agent-eval::") == [
        f"::error title=agent-eval::{ws}: no config found (looked for agent-eval.yaml, "
        "agent-eval.yml, .agent-eval.yaml, mcp-eval.yaml); set the action's `config` input "
        "(the suite file) or its `working-directory` (the folder holding it)"]
