"""Issue 11, the action's part: a pull request is written by a stranger. Each test is one
case of the issue, built from the files it describes, run end to end (``agent-eval
action`` in a subprocess, the recording GitHub validating every request against GitHub's
OpenAPI description, real webhook payloads)."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from action_harness import (
    EXAMPLE,
    GIT_ENV,
    FakeGitHub,
    Reply,
    make_workspace,
    payload,
    pr_payload,
    push_payload,
    run_action,
)
from markdown_check import problems
from tests.conftest import copy_example

ROOT = Path(__file__).resolve().parents[2]
REPO_URL = "https://github.com/Codertocat/Hello-World"


def _commit(ws: Path, message: str) -> None:
    env = {**os.environ, **GIT_ENV, "HOME": str(ws.parent)}
    for args in (["add", "-A"], ["commit", "-q", "--allow-empty", "-m", message]):
        subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (not following links) and its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


def _traces_zip(**extra: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for f in sorted((EXAMPLE / "traces").glob("*.jsonl"))[:3]:
            zf.write(f, f.name)
        for name, data in extra.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _stopped(run: Any) -> str:
    """The action's stop path was taken: exit 2, ``::error``, verdict error, a summary
    that says why. The error text."""
    assert run.code == 2, run.stderr
    assert run.outputs.get("verdict") == "error", run.outputs
    assert "## 💥 agent-eval could not run" in run.summary
    errors = run.lines("::error title=agent-eval::")
    assert errors, run.stdout
    assert "Traceback" not in run.stderr
    return "\n".join(errors)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the workspace, holding what an attacker would have deleted."""
    d = tmp_path / "outside"
    (d / "artifacts" / "agent-traces").mkdir(parents=True)
    (d / "artifacts" / "agent-traces" / "keep.txt").write_text("do not delete\n")
    (d / "baseline").mkdir()
    (d / "baseline" / "keep.txt").write_text("do not delete\n")
    (d / "victim.txt").write_text("do not overwrite\n")
    return d


# ----------------------------------------------------------- item 3: confinement
def test_committed_agent_eval_link_does_not_unpack_or_delete_outside(
        tmp_path: Path, github: FakeGitHub, outside: Path) -> None:
    """A committed symlink ``.agent-eval`` pointing outside the workspace: the traces
    artifact is neither unpacked there nor is anything there deleted."""
    github.add_artifact("agent-traces", _traces_zip())
    ws = make_workspace(tmp_path / "ws")
    (ws / ".agent-eval").symlink_to(outside, target_is_directory=True)
    _commit(ws, "a link out of the workspace")
    before = _tree(outside)
    run = run_action(tmp_path, ws, github.url, "push", push_payload(),
                     inputs={"artifact": "agent-traces", "upload-sarif": "false"})
    said = _stopped(run)
    assert ".agent-eval" in said and "symbolic link" in said
    assert _tree(outside) == before
    assert github.calls("GET", r"^/_blob/") == []  # not even downloaded
    assert github.problems == []


def test_baseline_artifact_is_never_unpacked_in_the_workspace(
        tmp_path: Path, github: FakeGitHub, outside: Path) -> None:
    """The same link and ``baseline: artifact`` on a pull request: the baseline's zip is
    read in the runner's temp folder (only results.json, in memory); the comparison is
    made and nothing outside changes (the old code deleted ``outside/baseline``)."""
    from action_harness import workflow_run, workflow_runs

    base_ws = tmp_path / "base"
    copy_example(base_ws)
    subprocess.run([sys.executable, "-m", "agent_eval", "run", "-q", "-o", "out"],
                   cwd=base_ws, capture_output=True, check=False)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.write(base_ws / "out" / "results.json", "results.json")
    github.add_artifact("agent-eval-results", buf.getvalue())
    github.script("GET", r"/actions/workflows/agent-eval\.yml/runs$",
                  Reply(200, workflow_runs(workflow_run(4242, branch="master"))))
    ws = make_workspace(tmp_path / "ws")
    (ws / ".agent-eval").symlink_to(outside, target_is_directory=True)
    _commit(ws, "a link out of the workspace")
    before = _tree(outside)
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"baseline": "artifact"},
                     env={"GITHUB_WORKFLOW_REF": "Codertocat/Hello-World/.github/workflows/"
                                                 "agent-eval.yml@refs/pull/2/merge"})
    assert run.code == 1, run.stderr
    assert github.problems == []
    assert "baseline: artifact agent-eval-results of run 4242 on master" in run.stderr
    assert _tree(outside) == before
    assert not list((tmp_path / "run").glob("agent-eval-baseline-*"))  # cleaned up
    results = json.loads((ws / "agent-eval-results" / "results.json").read_text())
    assert results["baseline"]["source"]["run_id"] == 4242


@pytest.mark.parametrize("how", ["link", "dotdot", "file-link"])
def test_output_dir_leading_outside_is_refused(tmp_path: Path, github: FakeGitHub,
                                               outside: Path, how: str) -> None:
    """The output folder through a committed link, up with ``..``, or one of its files a
    link to a file outside: nothing is written outside, the run stops saying why."""
    ws = make_workspace(tmp_path / "ws")
    inputs = {"upload-sarif": "false"}
    if how == "link":
        (ws / "agent-eval-results").symlink_to(outside, target_is_directory=True)
    elif how == "file-link":
        (ws / "agent-eval-results").mkdir()
        (ws / "agent-eval-results" / "results.json").symlink_to(outside / "victim.txt")
    else:
        inputs["output-dir"] = "../../../../../../../../../" + str(outside).lstrip("/")
    _commit(ws, "a way out")
    before = _tree(outside)
    run = run_action(tmp_path, ws, github.url, "push", push_payload(), inputs=inputs)
    said = _stopped(run)
    assert ("symbolic link" in said) if how == "file-link" else ("leads outside" in said)
    assert _tree(outside) == before
    assert github.requests == []  # stopped before any call


@pytest.mark.parametrize("how", ["found", "input", "folder"])
def test_a_suite_file_leading_outside_is_not_read(tmp_path: Path, github: FakeGitHub,
                                                  outside: Path, how: str) -> None:
    """A committed ``agent-eval.yaml`` that is a link to a suite outside the workspace
    (another checkout's on the same runner), found by default or named by the ``config``
    input, or one in a folder that is such a link: the suite outside was loaded and
    evaluated on the traces beside it, and with an ``output-dir`` its findings (their
    argument values) went to the log, the job summary and the comment. It is refused
    before anything is read, naming the path as written, never the link's target."""
    elsewhere = outside / "other-checkout"
    copy_example(elsewhere)
    ws = make_workspace(tmp_path / "ws")
    inputs = {"upload-sarif": "false", "output-dir": "out"}
    if how == "folder":
        (ws / "sub").symlink_to(elsewhere, target_is_directory=True)
        inputs["config"] = "sub/agent-eval.yaml"
        shown = "sub/agent-eval.yaml"
    else:
        (ws / "agent-eval.yaml").unlink()
        (ws / "agent-eval.yaml").symlink_to(elsewhere / "agent-eval.yaml")
        if how == "input":
            inputs["config"] = "agent-eval.yaml"
        shown = "agent-eval.yaml"
    _commit(ws, "a suite from elsewhere")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs=inputs)
    said = _stopped(run)
    assert said == (f"::error title=agent-eval::{shown}: the suite file is a symbolic link "
                    "(or in a folder that is one) leading outside the workspace; agent-eval "
                    "does not read a suite through a link out of the repository: remove the "
                    "link from the repository, or name a suite file inside it")
    assert str(outside) not in run.stdout + run.stderr + run.summary
    assert "admin_delete_user" not in run.stdout + run.summary  # no finding of it
    assert not (ws / "out").exists()
    assert github.requests == []  # no comment


def test_a_baseline_file_leading_outside_is_not_read(tmp_path: Path, github: FakeGitHub,
                                                     outside: Path) -> None:
    """``baseline: file`` names a file of the repository; the pull request made it a link
    to another checkout's results: they were read and compared with, their findings
    shown as fixed. Refused like the suite file, named as written."""
    from agent_eval.api import load_suite, suite_sources
    from agent_eval.engine import evaluate_files
    from agent_eval.renderers import RENDERERS, RenderContext

    suite = load_suite(EXAMPLE / "agent-eval.yaml")
    files, errors = suite_sources(suite, base=EXAMPLE)
    (outside / "results.json").write_text(RENDERERS["json"].render(
        evaluate_files(suite, files, errors, timings=False), RenderContext()))
    ws = make_workspace(tmp_path / "ws")
    (ws / "baseline.json").symlink_to(outside / "results.json")
    _commit(ws, "a baseline from elsewhere")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"upload-sarif": "false", "baseline": "file",
                             "baseline-file": "baseline.json"})
    said = _stopped(run)
    assert said == ("::error title=agent-eval::baseline-file baseline.json: the file is a "
                    "symbolic link (or in a folder that is one) leading outside the "
                    "workspace; agent-eval does not read a baseline through a link out of "
                    "the repository: remove the link from the repository")
    assert str(outside) not in run.stdout + run.stderr + run.summary
    assert github.requests == []


def test_a_suite_file_linked_inside_the_workspace_is_read(tmp_path: Path,
                                                          github: FakeGitHub) -> None:
    """A link that stays in the workspace is the repository's own business."""
    ws = make_workspace(tmp_path / "ws")
    (ws / "suite.yaml").symlink_to("agent-eval.yaml")
    run = run_action(tmp_path, ws, github.url, "push", push_payload(),
                     inputs={"upload-sarif": "false", "config": "suite.yaml"})
    assert run.code == 1 and run.outputs["verdict"] == "fail", run.stderr


def test_output_dir_in_the_runner_temp_folder_is_fine(tmp_path: Path,
                                                      github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws")
    out = tmp_path / "run" / "reports"  # RUNNER_TEMP is tmp_path/run
    run = run_action(tmp_path, ws, github.url, "push", push_payload(),
                     inputs={"output-dir": str(out), "upload-sarif": "false"})
    assert run.code == 1, run.stderr
    assert (out / "results.json").is_file() and run.outputs["results-file"] == str(out /
                                                                                  "results.json")


# ------------------------------------------------- item 11: unwritable output dir
def test_output_dir_that_is_a_file_goes_through_the_stop_path(tmp_path: Path,
                                                              github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws")
    (ws / "blocked").write_text("a file where the output folder should be\n")
    _commit(ws, "blocked")
    run = run_action(tmp_path, ws, github.url, "push", push_payload(),
                     inputs={"output-dir": "blocked/out"})
    said = _stopped(run)
    assert ("the output folder 'blocked/out' cannot be made: 'blocked' in its path is a "
            "file, not a folder; pass another folder, or move the file away") in said
    assert "cannot be made" in run.summary
    assert run.outputs == {"verdict": "error"}
    assert github.requests == []


def test_full_disk_goes_through_the_stop_path(tmp_path: Path, github: FakeGitHub) -> None:
    """Writes fail past 16 KiB (RLIMIT_FSIZE: EFBIG, as ENOSPC on a full disk): the
    results file does not fit, the summary and outputs of the stop path do."""
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "push", push_payload(),
                     file_size_limit=16 * 1024)
    said = _stopped(run)
    assert "cannot write the output files to agent-eval-results: File too large" in said
    assert "File too large" in run.summary


# ---------------------------------------------------- item 12: the comment marker
def test_a_trace_id_holding_another_suites_marker_does_not_steer_its_comment(
        tmp_path: Path, github: FakeGitHub) -> None:
    """Suite ``adv`` has a trace whose id holds ``<!-- agent-eval:other -->``; suite
    ``other`` runs on the same pull request: it makes its own comment, and edits only
    its own on the next run."""
    ws = make_workspace(tmp_path / "ws")
    config = (ws / "agent-eval.yaml").read_text()
    (ws / "adv.yaml").write_text(config.replace("suite: customer-service-agent",
                                                "suite: adv"))
    (ws / "other.yaml").write_text(config.replace("suite: customer-service-agent",
                                                  "suite: other"))
    trace = (ws / "traces" / "discount-too-high.jsonl").read_text()  # has a violation
    start = json.loads(trace.splitlines()[0])
    start["trace_id"] = "x\n<!-- agent-eval:other -->\ny"
    (ws / "traces" / "discount-too-high.jsonl").write_text(
        "\n".join([json.dumps(start), *trace.splitlines()[1:]]) + "\n")
    _commit(ws, "two suites")
    common = {"upload-sarif": "false", "baseline": "none", "fail-on": "never"}
    for name, suite in (("adv1", "adv"), ("other1", "other"), ("adv2", "adv"),
                        ("other2", "other")):
        run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                         inputs={**common, "config": f"{suite}.yaml"}, name=name)
        assert run.code == 0, run.stderr
    assert github.problems == []
    first_lines = [c["body"].split("\n", 1)[0] for c in github.comments[2]]
    assert first_lines == ["<!-- agent-eval:adv -->", "<!-- agent-eval:other -->"]
    adv, other = github.comments[2]
    assert "<!-- agent-eval:other -->" in adv["body"]  # the trace id, shown in adv's
    assert len(github.calls("POST", r"/issues/2/comments$")) == 2
    patched = [r.path.rsplit("/", 1)[1] for r in github.calls("PATCH")]
    assert patched == [str(adv["id"]), str(other["id"])]


# ---------------------------------------- item 13: Markdown in traces is inert
EVIL_TOOL = ("admin_[verified: safe to merge](https://evil.example) @octocat @org/team "
             "![x](https://evil.example/p.png) <img src=x> #1")


def test_markdown_in_a_trace_is_inert_in_comment_summary_and_check_run(
        tmp_path: Path, github: FakeGitHub) -> None:
    trace = [{"type": "trace_start", "trace_id": "evil [link](https://evil.example) @octocat",
              "scenario": "<b>x</b> @org/team"},
             {"type": "tool_call", "id": "c1", "tool": "authenticate_user",
              "arguments": {"customer_id": "C-1", "method": "sms"}},
             {"type": "tool_call", "id": "c2", "tool": EVIL_TOOL,
              "arguments": {"note": "![y](https://evil.example/y.png) www.evil.example"}},
             {"type": "output", "output": "@octocat see https://evil.example"},
             {"type": "trace_end"}]
    ws = make_workspace(tmp_path / "ws", extra_traces={
        "evil.jsonl": "\n".join(json.dumps(e) for e in trace) + "\n"})
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"check-run": "true", "upload-sarif": "false",
                             "baseline": "none"})
    assert run.code == 1, run.stderr
    assert github.problems == []
    comment = github.comments[2][0]["body"]
    [check] = github.calls("POST", r"/check-runs$")
    check_summary = check.json["output"]["summary"]

    def ours(url: str) -> bool:
        return url.startswith(f"{REPO_URL}/blob/") or url == f"{REPO_URL}/actions/runs/7001"

    for text in (comment, run.summary, check_summary):
        assert "Blocked tool called: admin\\_\\[verified: safe to merge\\]" in text
        assert problems(text, ours, marker="customer-service-agent") == []


# ----------------------------------------------- item 16: a 502 after the POST
def test_502_after_the_comment_was_made_does_not_make_a_second_one(
        tmp_path: Path, github: FakeGitHub) -> None:
    github.script_lost_answer("POST", r"/issues/2/comments$",
                              Reply(502, {"message": "Server Error"}, check=False))
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"upload-sarif": "false", "baseline": "none"})
    assert run.code == 1, run.stderr
    assert github.problems == []
    [comment] = github.comments[2]  # made once
    assert comment["body"].startswith("<!-- agent-eval:customer-service-agent -->")
    calls = [(r.method, r.status) for r in github.requests if "/issues/" in r.path]
    assert calls == [("GET", 200), ("POST", 502), ("GET", 200), ("PATCH", 200)]
    assert "looking for the comment again before posting it again" in run.stderr
    assert run.outputs["comment-url"] == comment["html_url"]
    assert run.skips() == []


class DeadApi:
    """A server on loopback that accepts connections and never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
                self.held.append(conn)
            except OSError:
                continue

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for c in self.held:
            c.close()
        self.sock.close()


@pytest.fixture
def dead_api() -> Iterator[DeadApi]:
    api = DeadApi()
    try:
        yield api
    finally:
        api.close()


def test_an_api_that_never_answers_costs_one_deadline_in_all(
        tmp_path: Path, dead_api: DeadApi) -> None:
    """SARIF upload, comment and check run against an API that accepts and never
    answers: with a 6 s deadline the calls end after about 6 s in all (each would wait
    its 30 s timeout, four times, before)."""
    ws = make_workspace(tmp_path / "ws")
    baseline = time.monotonic()
    quick = run_action(tmp_path, ws, dead_api.url, "pull_request", pr_payload("opened"),
                       inputs={"github-token": "", "baseline": "none"}, name="no-api")
    no_api = time.monotonic() - baseline
    assert quick.code == 1, quick.stderr
    started = time.monotonic()
    run = run_action(tmp_path, ws, dead_api.url, "pull_request", pr_payload("opened"),
                     inputs={"check-run": "true", "baseline": "none"},
                     env={"AGENT_EVAL_API_DEADLINE": "6"})
    took = time.monotonic() - started
    assert run.code == 1, run.stderr  # the verdict, not an API error
    # the calls waited for the deadline (at least its 6 s, whatever else the run took:
    # a loaded machine makes the run without an API slower too, so the lower bound is on
    # the whole run), and not much more than it beyond what a run without an API takes
    assert took >= 6 - 1 and took - no_api <= 6 + 8, (took, no_api)
    skipped = run.skips()
    assert len(skipped) == 3, skipped  # SARIF upload, comment, check run: once each
    assert any("Timeout" in s for s in skipped)
    assert sum("the deadline of 6 s for all GitHub API calls" in s for s in skipped) >= 2
    assert len(dead_api.held) <= 3  # no attempt was started after the deadline


class _Drip(BaseHTTPRequestHandler):
    """Answers 200 with a Content-Length of 1 MiB, then sends a byte every 0.2 s for 60 s:
    no read waits long enough for a socket timeout."""

    def _any(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(1 << 20))
        self.end_headers()
        ends = time.monotonic() + 60
        try:
            while time.monotonic() < ends:
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass

    do_GET = do_POST = do_PATCH = _any

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def drip() -> Iterator[str]:
    """The URL of a :class:`_Drip` server on loopback."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Drip)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_an_artifact_download_that_drips_ends_at_the_deadline(
        tmp_path: Path, github: FakeGitHub, drip: str) -> None:
    """The artifact's download URL answers and then sends a byte every 0.2 s: no read
    waits long enough for its timeout, and the download read 64 KiB at a time, so it went
    on past the deadline (for hours with a large enough Content-Length; here the server
    gives up after 60 s). It ends at the deadline, saying so."""
    github.add_artifact("agent-traces", _traces_zip())
    github.script("GET", r"/actions/artifacts/\d+/zip$",
                  Reply(302, None, {"Location": f"{drip}/blob.zip"}))
    ws = make_workspace(tmp_path / "ws")
    started = time.monotonic()
    run = run_action(tmp_path, ws, github.url, "push", push_payload(),
                     inputs={"artifact": "agent-traces", "upload-sarif": "false"},
                     env={"AGENT_EVAL_API_DEADLINE": "4"})
    took = time.monotonic() - started
    said = _stopped(run)
    assert "could not get the traces from artifact 'agent-traces': GET (artifact " \
           "download): not done after " in said
    assert "the deadline of 4 s for all GitHub API calls of this run has passed" in said
    assert took < 40, took


def test_an_api_that_drips_costs_one_deadline_in_all(tmp_path: Path, drip: str) -> None:
    """An API that answers every call and then sends a byte every 0.2 s: requests reads
    a body 10 KiB at a time and no read timed out, so the SARIF upload alone held the run
    for the server's 60 s, past a 4 s deadline. Each answer is read as it arrives and
    stopped at the deadline; the verdict is the suite's."""
    ws = make_workspace(tmp_path / "ws")
    started = time.monotonic()
    run = run_action(tmp_path, ws, drip, "pull_request", pr_payload("opened"),
                     inputs={"baseline": "none", "check-run": "true"},
                     env={"AGENT_EVAL_API_DEADLINE": "4"})
    took = time.monotonic() - started
    assert run.code == 1 and run.outputs["verdict"] == "fail", run.stderr
    skipped = run.skips()
    assert len(skipped) == 3, skipped  # SARIF upload, comment, check run: once each
    assert "the answer was still arriving after " in skipped[0]
    assert "at the deadline of 4 s for all GitHub API calls of this run" in skipped[0]
    assert took < 40, took


# ------------------------------------------------------------- item 17: the token
SECRET = "ghs_firstHalfOfTheToken\nsecondHalfOfTheToken"


def test_a_token_with_a_newline_is_in_no_output(tmp_path: Path, github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"github-token": SECRET, "baseline": "none", "check-run": "true"})
    assert run.code == 1, run.stderr  # the evaluation's verdict
    log = "\n".join(ln for ln in run.stdout.splitlines() if not ln.startswith("::add-mask::"))
    everything = log + run.stderr + run.summary + json.dumps(run.outputs)
    assert "firstHalfOfTheToken" not in everything
    assert "secondHalfOfTheToken" not in everything
    [skipped] = run.skips()
    assert "skipped the SARIF upload, the PR comment, the check run: the github-token " \
           "holds characters a token cannot have (U+000A" in skipped
    assert "the github-token holds characters" in run.summary
    assert github.requests == []
    # the runner is asked to mask both halves (it hides these lines too)
    assert run.lines("::add-mask::") == [
        "::add-mask::ghs_firstHalfOfTheToken", "::add-mask::secondHalfOfTheToken"]


def test_a_token_echoed_by_the_server_or_held_by_a_trace_is_redacted(
        tmp_path: Path, github: FakeGitHub) -> None:
    token = "ghs_loopbackTokenEchoed0123456789"
    github.script("POST", r"/code-scanning/sarifs$",
                  Reply(422, {"message": f"bad credentials for token {token}",
                              "documentation_url": "x"}, check=False))
    leak = {"type": "tool_call", "id": "c", "tool": "admin_debug",
            "arguments": {"env": f"GITHUB_TOKEN={token}"}}
    ws = make_workspace(tmp_path / "ws", extra_traces={
        "leak.jsonl": json.dumps({"type": "trace_start", "trace_id": f"leak-{token}"})
        + "\n" + json.dumps(leak) + "\n"})
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"github-token": token, "baseline": "none", "check-run": "true"})
    assert run.code == 1, run.stderr
    [check] = github.calls("POST", r"/check-runs$")
    published = (github.comments[2][0]["body"] + json.dumps(check.json))
    assert run.lines("::add-mask::") == [f"::add-mask::{token}"]  # hidden by the runner
    log = "\n".join(ln for ln in run.stdout.splitlines() if not ln.startswith("::add-mask::"))
    for text in (log, run.stderr, run.summary, published):
        assert token not in text
    assert "bad credentials for token \\*\\*\\*" in run.summary  # escaped Markdown
    assert "leak-***" in github.comments[2][0]["body"]


# ------------------------------- item 15: the fork comment workflow's pull request
def _workflow_steps(name: str) -> list[dict[str, Any]]:
    doc = yaml.safe_load((ROOT / "examples" / "workflows" / name).read_text())
    return [s for job in doc["jobs"].values() for s in job["steps"]]


def test_fork_comment_example_takes_no_pr_number_from_the_artifact() -> None:
    for name in ("fork-pr-evaluate.yml", "fork-pr-comment.yml"):
        text = (ROOT / "examples" / "workflows" / name).read_text()
        assert "pr-number" not in text and "PR_NUMBER" not in text, name
    steps = _workflow_steps("fork-pr-comment.yml")
    assert all("run" not in s for s in steps)  # no script reads the artifact
    [action] = [s for s in steps if s.get("uses", "").startswith("agent-eval/agent-eval@")]
    assert action["with"]["artifact"] == "agent-traces"
    [checkout] = [s for s in steps if s.get("uses", "").startswith("actions/checkout@")]
    assert "ref" not in checkout.get("with", {})  # the default branch, never the PR's code
    uploads = [s for s in _workflow_steps("fork-pr-evaluate.yml")
               if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert [u["with"]["name"] for u in uploads] == ["agent-traces"]


def test_fork_comment_example_queues_per_fork_and_branch() -> None:
    """fork-pr-comment.yml's concurrency group was the triggering run's head branch alone:
    pull requests from different forks on a branch of the same name (``patch-1``, what
    GitHub's web editor names them; or a stranger's chosen to match) shared one group,
    where a queued run cancels the one pending before it, so one pull request's comment
    kept an older run's verdict. The group names the head repository too."""
    doc = yaml.safe_load((ROOT / "examples" / "workflows" / "fork-pr-comment.yml").read_text())
    group = doc["concurrency"]["group"]
    assert "github.event.workflow_run.head_repository.full_name" in group, group
    assert "github.event.workflow_run.head_branch" in group, group
    assert doc["concurrency"]["cancel-in-progress"] is False


def test_fork_comment_example_comments_on_the_pull_request_of_the_head_sha(
        tmp_path: Path) -> None:
    """fork-pr-comment.yml as the runner would run it: the fork's artifact holds the
    traces and, planted, a ``pr-number`` file naming pull request 1 and a ``summary.md``
    full of mentions. The comment goes to the pull request whose head is the run's head
    SHA (17), is rendered by the action from the traces, and holds none of that."""
    event = payload("workflow_run", lambda e: e["action"] == "completed"
                    and not e["workflow_run"]["pull_requests"])
    wr = event["workflow_run"]
    wr["event"] = "pull_request"
    wr["head_repository"]["full_name"] = "stranger/octo-repo"
    [action] = [s for s in _workflow_steps("fork-pr-comment.yml")
                if s.get("uses", "").startswith("agent-eval/agent-eval@")]
    inputs = {k.replace("_", "-"): str(v) for k, v in action["with"].items()
              if "${{" not in str(v)}
    with FakeGitHub(repo=event["repository"]["full_name"]) as gh:
        gh.add_pull(17, wr["head_sha"], "stranger", wr["head_branch"])
        gh.add_pull(1, "e" * 40, "someone", "other")
        gh.add_artifact("agent-traces", _traces_zip(**{
            "pr-number": b"1\n", "summary.md": b"<!-- agent-eval:x -->\n@octocat pwned"}))
        ws = make_workspace(tmp_path / "ws")
        run = run_action(tmp_path, ws, gh.url, "workflow_run", event, inputs=inputs)
        # the planted files are no traces: input errors, verdict error; the job says
        # fail-on: never (it only reports), so it exits 0 once the run completed
        assert run.code == 0 and run.outputs["verdict"] == "error", run.stderr
        assert gh.problems == []
        assert 1 not in gh.comments and gh.calls(path=r"/issues/1/") == []
        [comment] = gh.comments[17]
        assert comment["body"].startswith("<!-- agent-eval:customer-service-agent -->")
        assert "pwned" not in comment["body"] and "@octocat" not in comment["body"]
        assert "`.agent-eval/artifacts/agent-traces/pr-number`" in comment["body"]
