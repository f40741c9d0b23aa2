"""The client and the action's helpers on their own, for issue 11 items 3, 12, 16 and 17:
the marker as the first line, the re-list before a second POST, the overall deadline, the
token's redaction, the folders the action may write in."""

from __future__ import annotations

from pathlib import Path

import pytest
from action_harness import FakeGitHub, Reply, require_node_tools

from agent_eval.github.client import ApiError, GitHubClient, first_line
from agent_eval.github.secrets import Redactor, token_problem
from agent_eval.github.workspace import OutsideWorkspace, confine, fresh_dir, no_linked_files


def _client(github: FakeGitHub, slept: list[float], **kw: float) -> GitHubClient:
    return GitHubClient("t", github.repo, github.url, sleep=slept.append,
                        seconds_between_requests=0, seconds_between_writes=0,
                        log=lambda _m: None, **kw)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _tools() -> None:
    require_node_tools()


# ------------------------------------------------------------- item 12: the marker
def test_only_a_comment_whose_first_line_is_the_marker_is_ours(github: FakeGitHub) -> None:
    marker = "<!-- agent-eval:other -->"
    quoted = github.add_comment(3, f"<!-- agent-eval:adv -->\ntrace `{marker}`",
                                "github-actions[bot]")
    indented = github.add_comment(3, f"  text\n{marker}", "github-actions[bot]")
    client = _client(github, [])
    got = client.upsert_comment(3, f"{marker}\nnew", marker)
    assert got.created and got.id not in (quoted["id"], indented["id"])
    again = client.upsert_comment(3, f"{marker}\r\nnewer", marker)
    assert (again.id, again.created) == (got.id, False)
    assert quoted["body"].endswith(f"`{marker}`") and indented["body"].startswith("  text")
    with pytest.raises(ValueError, match="must start with its marker"):
        client.upsert_comment(3, f"x\n{marker}", marker)
    assert first_line("<!-- m -->\r\nrest") == "<!-- m -->"
    assert github.problems == []


# ----------------------------------------------------- item 16: no second comment
def test_an_answer_over_the_limit_is_an_api_error(
        github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """An API answer was read whole into memory, whatever its size. One over
    MAX_ANSWER_BYTES is an API error of its call (not retried), read no further."""
    from agent_eval.github import client as client_module

    monkeypatch.setattr(client_module, "MAX_ANSWER_BYTES", 50_000, raising=False)
    for i in range(30):
        github.add_comment(6, f"comment {i} " + "x" * 2_000, "someone")
    client = _client(github, [])
    with pytest.raises(ApiError, match=r"the answer is larger than 50000 bytes: not read"):
        list(client.comments(6))
    assert len(github.calls("GET", r"/issues/6/comments$")) == 1
    monkeypatch.setattr(client_module, "MAX_ANSWER_BYTES", 500_000)
    assert len(list(client.comments(6))) == 30


def test_comments_past_the_page_limit_are_no_second_comment(
        github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """Comments are read for at most MAX_COMMENT_PAGES pages; on a pull request with more,
    this token's comment on a later page was not found and a second one was posted. More
    pages than that are an API error: the comment is skipped, never posted twice."""
    from agent_eval.github import client as client_module

    monkeypatch.setattr(client_module, "MAX_COMMENT_PAGES", 2)
    for i in range(200):
        github.add_comment(5, f"comment {i}", "someone")
    ours = github.add_comment(5, "<!-- m -->\nold", "github-actions[bot]")
    with pytest.raises(ApiError, match=r"more than 2 pages of 200 items: not listed to the end"):
        _client(github, []).upsert_comment(5, "<!-- m -->\nnew", "<!-- m -->")
    assert github.calls("POST", r"/issues/5/comments$") == []
    assert len(github.comments[5]) == 201 and ours["body"] == "<!-- m -->\nold"
    assert len(github.calls("GET", r"/issues/5/comments$")) == 2
    monkeypatch.setattr(client_module, "MAX_COMMENT_PAGES", 3)  # the whole list: edited
    got = _client(github, []).upsert_comment(5, "<!-- m -->\nnew", "<!-- m -->")
    assert (got.id, got.created, ours["body"]) == (ours["id"], False, "<!-- m -->\nnew")


def test_a_page_of_comments_that_is_no_list_is_no_second_comment(github: FakeGitHub) -> None:
    """A page of comments that is no JSON list was read as an empty page and passed for
    the whole list: this token's comment was not found and a second one was posted. It
    is an API error: the comment is skipped, never posted twice."""
    ours = github.add_comment(7, "<!-- m -->\nold", "github-actions[bot]")
    github.script("GET", r"/issues/7/comments$",
                  Reply(200, {"message": "not a list"}, check=False))
    with pytest.raises(ApiError, match="not listed to the end"):
        _client(github, []).upsert_comment(7, "<!-- m -->\nnew", "<!-- m -->")
    assert github.calls("POST", r"/issues/7/comments$") == []
    assert github.comments[7] == [ours] and ours["body"] == "<!-- m -->\nold"


def test_a_lost_answer_to_the_post_is_found_by_listing_again(github: FakeGitHub) -> None:
    slept: list[float] = []
    github.script_lost_answer("POST", r"/issues/4/comments$",
                              Reply(504, {"message": "Gateway Timeout"}, check=False))
    got = _client(github, slept).upsert_comment(4, "<!-- m -->\nbody", "<!-- m -->")
    assert [c["id"] for c in github.comments[4]] == [got.id] and got.created
    assert slept == [1.0]
    assert [r.method for r in github.calls(path="/issues/")] == ["GET", "POST", "GET", "PATCH"]


def test_a_failed_post_with_no_comment_made_is_posted_again(github: FakeGitHub) -> None:
    slept: list[float] = []
    github.script("POST", r"/issues/5/comments$",
                  Reply(502, {"message": "Bad Gateway"}, check=False))
    got = _client(github, slept).upsert_comment(5, "<!-- m -->\nbody", "<!-- m -->")
    assert len(github.comments[5]) == 1 and got.created
    assert [(r.method, r.status) for r in github.calls(path="/issues/")] == [
        ("GET", 200), ("POST", 502), ("GET", 200), ("POST", 201)]


# ------------------------------------------------- a check run is never left pending
def _annotations(n: int) -> list[dict[str, object]]:
    return [{"path": "policy.yaml", "start_line": i + 1, "end_line": i + 1,
             "annotation_level": "failure", "message": f"finding {i}"} for i in range(n)]


VALIDATION = Reply(422, {"message": "Validation Failed", "documentation_url": "x"},
                   check=False)


def test_a_failed_update_still_completes_the_check_run(github: FakeGitHub) -> None:
    """A check run of more than 50 annotations is made in progress, then updated; an
    update that failed (a 422) left it in progress for good: a pending check whatever the
    verdict, and the action said it was skipped. It is completed with its conclusion,
    the title saying how many annotations were sent, and the error is returned."""
    github.script("PATCH", r"/check-runs/\d+$", Reply(200, None, check=False), VALIDATION)
    cr = _client(github, []).create_check_run(
        name="agent-eval (s)", head_sha="a" * 40, conclusion="failure", title="fail: 120",
        summary="the summary", annotations=_annotations(120))
    [run] = github.check_runs.values()
    assert (run["status"], run["conclusion"]) == ("completed", "failure")
    assert len(run["annotations"]) == 50  # the scripted 200 did not record its batch
    assert cr.sent == 100 and cr.error is not None and cr.error.status == 422
    create, *updates = github.calls(path=r"/check-runs")
    assert create.json["status"] == "in_progress"
    assert [r.status for r in updates] == [200, 422, 200]
    assert updates[-1].json == {"status": "completed", "conclusion": "failure", "output": {
        "title": "fail: 120 (100 of 120 annotations sent)", "summary": "the summary"}}
    assert github.problems == []


def test_a_check_run_that_cannot_be_completed_says_it_stays_in_progress(
        github: FakeGitHub) -> None:
    github.script("PATCH", r"/check-runs/\d+$", VALIDATION, VALIDATION)
    with pytest.raises(ApiError, match=r"Validation Failed; the check run \S+ stays in "
                                       r"progress: completing it failed too") as err:
        _client(github, []).create_check_run(
            name="n", head_sha="a" * 40, conclusion="success", title="pass", summary="s",
            annotations=_annotations(60))
    assert err.value.status == 422
    [run] = github.check_runs.values()
    assert run["status"] == "in_progress"


# ----------------------------------------------------------- item 16: the deadline
def test_no_attempt_and_no_wait_past_the_deadline(github: FakeGitHub) -> None:
    now = [0.0]

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    slept: list[float] = []
    github.script("GET", r"/issues/9/comments$",
                  *[Reply(503, {"message": "busy"}, {"Retry-After": "20"}, check=False)] * 4)
    client = GitHubClient("t", github.repo, github.url, sleep=sleep, clock=lambda: now[0],
                          seconds_between_requests=0, seconds_between_writes=0,
                          log=lambda _m: None, deadline=30.0, max_wait=60.0)
    with pytest.raises(ApiError) as err:
        list(client.comments(9))
    assert err.value.status == 503 and slept == [20.0]  # the second wait would pass it
    now[0] = 31.0  # the deadline has passed
    with pytest.raises(ApiError, match="not tried: the deadline of 30 s"):
        client.login()
    assert len(github.calls("GET", r"/issues/9/comments$")) == 2
    assert github.calls("GET", r"^/user$") == []


def test_an_invalid_header_is_an_api_error_without_the_token(github: FakeGitHub) -> None:
    client = GitHubClient("ghs_abcd\nefgh", github.repo, github.url, log=lambda _m: None)
    with pytest.raises(ApiError) as err:
        client.request("GET", "/user")
    assert err.value.status == 0 and "InvalidHeader" in str(err.value)
    assert "ghs_abcd" not in Redactor("ghs_abcd\nefgh")(str(err.value))
    assert github.requests == []


# -------------------------------------------------------------- item 17: the token
def test_redactor_hides_the_token_whole_and_in_pieces() -> None:
    r = Redactor("ghs_first\nsecond")
    assert r("a ghs_first\nsecond b") == "a *** b"
    assert r(repr("token ghs_first\nsecond")) == "'token ***\\n***'"
    assert r.maskable() == ["ghs_first", "second"]
    r.add("ab")  # too short to hide everywhere; nothing else changes
    assert r("ab ghs_first") == "ab ***"
    assert token_problem("ghs_ok") is None
    said = token_problem("ghs_x\nhidden y")
    assert said is not None and "U+000A, U+0020" in said and "hidden" not in said


# ------------------------------------------------------------ item 3: confinement
def test_confine_and_fresh_dir(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws", tmp_path / "out"
    (ws / "real").mkdir(parents=True)
    out.mkdir()
    (out / "keep").write_text("x")
    (ws / "link-out").symlink_to(out)
    (ws / "link-in").symlink_to(ws / "real")
    assert confine(ws / "link-in" / "new", [ws], "x") == ws / "real" / "new"
    with pytest.raises(OutsideWorkspace, match="through a symbolic link"):
        confine(ws / "link-out" / "new", [ws], "the output folder")
    with pytest.raises(OutsideWorkspace, match="leads outside"):
        confine(ws / ".." / "out", [ws], "the output folder")
    assert confine(out / "a", [ws, out], "x") == out / "a"  # RUNNER_TEMP is allowed
    with pytest.raises(OutsideWorkspace, match=r"link-out .* is a symbolic link"):
        fresh_dir(ws, "link-out", "baseline")
    with pytest.raises(OutsideWorkspace, match="symbolic link"):
        fresh_dir(ws, "link-in", "baseline")  # no link at all below the root
    (ws / "file").write_text("x")
    with pytest.raises(OutsideWorkspace, match="is a file"):
        fresh_dir(ws, "file", "x")
    made = fresh_dir(ws, ".agent-eval", "artifacts", "a")
    (made / "old").write_text("x")
    assert fresh_dir(ws, ".agent-eval", "artifacts", "a") == made and not (made / "old").exists()
    assert (out / "keep").read_text() == "x"
    (ws / "real" / "results.json").symlink_to(out / "keep")
    with pytest.raises(OutsideWorkspace, match=r"results\.json is a symbolic link"):
        no_linked_files(ws / "real", ["results.json"])
