"""Issue 11 item 14 and issue 10 §6: which runs ``baseline: artifact`` trusts, the
downloaded results as untrusted input (bounded zip reading, the results schema, escaped
strings), and a baseline that was asked for and cannot be had as an error (exit 2).

End to end against the recording GitHub (every request validated against GitHub's
OpenAPI description), with real webhook payloads and the customer-service example."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "action"))

from action_harness import (
    FakeGitHub,
    Reply,
    make_workspace,
    pr_payload,
    push_payload,
    require_node_tools,
    run_action,
    workflow_run,
    workflow_runs,
)
from markdown_check import problems
from tests.conftest import ROOT, copy_example, raw_zip, read_results

from agent_eval._cli import main as cli
from agent_eval.baseline import BaselineError, load_file, parse_results, trusted_run
from agent_eval.github import client
from agent_eval.github.client import read_zip_member

REPO = (1296269, "Codertocat/Hello-World")
FORK = (99, "stranger/Hello-World")
WORKFLOW_REF = {"GITHUB_WORKFLOW_REF": "Codertocat/Hello-World/.github/workflows/"
                                       "agent-eval.yml@refs/pull/2/merge"}
RUNS = r"/actions/workflows/agent-eval\.yml/runs$"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    require_node_tools()
    with FakeGitHub() as fake:
        yield fake


@pytest.fixture(scope="module")
def base_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The example's results as a push run on the base branch kept them."""
    d = tmp_path_factory.mktemp("base") / "cs"
    copy_example(d)
    subprocess.run([sys.executable, "-m", "agent_eval", "run", "-q", "--no-timings", "-o",
                    "out"], cwd=d, check=False, capture_output=True)
    data: dict[str, Any] = read_results(d / "out")
    return data


def _zip(**files: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _pr(tmp_path: Path, github: FakeGitHub, kind: str = "artifact",
        **env: str) -> Any:
    ws = make_workspace(tmp_path / "ws")
    return run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                      inputs={"baseline": kind, "upload-sarif": "false"},
                      env={**WORKFLOW_REF, **env})


def _stopped(run: Any) -> str:
    assert run.code == 2, run.stderr
    assert run.outputs.get("verdict") == "error"
    assert "## 💥 agent-eval could not run" in run.summary
    assert "Traceback" not in run.stderr
    assert problems(run.summary) == []  # the reason is escaped in the summary
    return "\n".join(run.lines("::error title=agent-eval::"))


def untrusted() -> list[dict[str, Any]]:
    """Runs whose artifacts must never be taken as the baseline (built in the test, not at
    import: the runs come from GitHub's description, an npm test tool that may be missing)."""
    return [
        # newest first: a fork's pull request on a branch it named like the base branch ...
        workflow_run(5001, event="pull_request", branch="master", head_repo=FORK),
        # ... a pull_request_target run in the base repository, for a fork's head ...
        workflow_run(5002, event="pull_request_target", branch="master", head_repo=FORK),
        # ... a workflow_run run, a "push" whose head repository is not this one ...
        workflow_run(5003, event="workflow_run", branch="master"),
        workflow_run(5004, event="push", branch="master", head_repo=FORK),
        # ... and a push of this repository to another branch
        workflow_run(5005, event="push", branch="release"),
    ]


# -------------------------------------------------------- item 14: trusted runs only
def test_only_a_push_run_of_the_repository_itself_is_taken(
        tmp_path: Path, github: FakeGitHub, base_results: dict[str, Any]) -> None:
    github.add_artifact("agent-eval-results",
                        _zip(**{"results.json": json.dumps(base_results).encode()}))
    github.script("GET", RUNS, Reply(200, workflow_runs(*untrusted(),
                                                        workflow_run(4242, branch="master"))))
    run = _pr(tmp_path, github)
    assert run.code == 1, run.stderr
    assert github.problems == []
    [listing] = github.calls("GET", RUNS)
    assert (listing.param("event"), listing.param("branch"), listing.param("status")) == (
        "push", "master", "success")
    assert [r.path.split("/")[-2] for r in github.calls("GET", r"/actions/runs/\d+/artifacts$")
            ] == ["4242"]
    assert "baseline: artifact agent-eval-results of run 4242 on master" in run.stderr
    results = read_results(run.workspace / "agent-eval-results")
    assert results["baseline"]["source"]["run_id"] == 4242


def test_no_trusted_run_is_an_error_when_asked_for_and_a_reason_under_auto(
        tmp_path: Path, github: FakeGitHub) -> None:
    github.script("GET", RUNS, Reply(200, workflow_runs(*untrusted())),
                  Reply(200, workflow_runs(*untrusted())))
    said = _stopped(_pr(tmp_path / "a", github))
    assert ("baseline: artifact was asked for and cannot be had: artifact: no successful "
            "push run of this workflow on master in Codertocat/Hello-World (5 other run(s) "
            "skipped)") in said
    assert github.calls("GET", r"/actions/runs/\d+/artifacts$") == []
    auto = _pr(tmp_path / "b", github, "auto")  # git fails (the base commit is not here)
    assert auto.code == 1, auto.stderr
    [comment] = github.comments[2]
    assert "Not compared with the base branch" in comment["body"]
    assert "no successful push run of this workflow on master" in comment["body"]
    assert github.problems == []


def test_trusted_run_by_hand() -> None:
    assert trusted_run(workflow_run(1, branch="main"), "codertocat/hello-world", "main")
    for run in untrusted():
        assert not trusted_run(run, REPO[1], "master"), run["id"]
    failed = workflow_run(2, branch="main")
    failed["conclusion"] = "failure"
    renamed = workflow_run(3, branch="main", head_repo=(REPO[0] + 1, REPO[1]))
    assert not trusted_run(failed, REPO[1], "main")
    assert not trusted_run(renamed, REPO[1], "main")  # the same name, another repository
    assert not trusted_run(None, REPO[1], "main")


# ------------------------------------------ item 14: the results are untrusted input
def test_results_off_the_schema_are_refused(tmp_path: Path, github: FakeGitHub,
                                            base_results: dict[str, Any]) -> None:
    bad = json.loads(json.dumps(base_results))
    bad["scenarios"][0]["status"] = "<img src=x onerror=alert(1)> @octocat"
    github.add_artifact("agent-eval-results", _zip(**{"results.json": json.dumps(bad).encode()}))
    github.script("GET", RUNS, Reply(200, workflow_runs(workflow_run(4242, branch="master"))))
    said = _stopped(_pr(tmp_path, github))
    assert "does not match the results schema" in said
    assert "at scenarios[0].status:" in said
    assert github.comments == {}


def test_strings_of_a_valid_baseline_are_inert_in_the_comment(
        tmp_path: Path, github: FakeGitHub, base_results: dict[str, Any]) -> None:
    """Every free-text field the schema allows, filled by an attacker: absent findings'
    messages, trace ids and test ids, a scenario's id shared with the head run."""
    evil = ("[verified: safe to merge](https://evil.example) @octocat @org/team "
            "![x](https://evil.example/x.png) <img src=x> acme/other#1 www.evil.example")
    bad = json.loads(json.dumps(base_results))
    for t in bad["tests"]:
        for v in t["violations"]:
            v["fingerprint"] = "f" * 32  # not in the head run: shown as gone
            v["message"] = evil
            if v["trace"]:
                v["trace"]["trace_id"] = evil
    bad["tool"]["version"] = evil
    parse_results(json.dumps(bad).encode(), "x")  # valid
    github.add_artifact("agent-eval-results", _zip(**{"results.json": json.dumps(bad).encode()}))
    github.script("GET", RUNS, Reply(200, workflow_runs(workflow_run(4242, branch="master"))))
    run = _pr(tmp_path, github)
    assert run.code == 1, run.stderr
    [comment] = github.comments[2]
    body = comment["body"]
    assert "Violations gone since the base branch" in body and "safe to merge" in body

    def ours(url: str) -> bool:
        return url.startswith("https://github.com/Codertocat/Hello-World/")

    assert problems(body, ours, marker="customer-service-agent") == []
    assert problems(run.summary, ours, marker="customer-service-agent") == []


def test_a_zip_bomb_is_refused_without_reading_it(tmp_path: Path, github: FakeGitHub) -> None:
    """5 MB of spaces in 5 KB of zip, with a limit of 1 MB: refused from its header."""
    bomb = _zip(**{"results.json": b" " * 5_000_000})
    assert len(bomb) < 10_000
    github.add_artifact("agent-eval-results", bomb)
    github.script("GET", RUNS, Reply(200, workflow_runs(workflow_run(4242, branch="master"))))
    said = _stopped(_pr(tmp_path, github, AGENT_EVAL_BASELINE_MAX_BYTES="1000000"))
    assert "results.json in the artifact is 5000000 bytes, over the limit of 1000000" in said


def test_a_corrupt_zip_is_an_error_not_a_crash(tmp_path: Path, github: FakeGitHub,
                                               base_results: dict[str, Any]) -> None:
    data = bytearray(_zip(**{"results.json": json.dumps(base_results).encode()}))
    data[len(data) // 3] ^= 0xFF  # one flipped byte in the compressed data
    github.add_artifact("agent-eval-results", bytes(data))
    github.script("GET", RUNS, Reply(200, workflow_runs(workflow_run(4242, branch="master"))))
    said = _stopped(_pr(tmp_path, github))
    assert "the artifact's zip is broken" in said


def test_bounded_zip_reading(tmp_path: Path) -> None:
    archive = tmp_path / "a.zip"
    archive.write_bytes(_zip(**{f"f{n}.txt": b"x" for n in range(6)}, **{
        "deep/results.json": b"deep", "results.json": b"top"}))
    assert read_zip_member(archive, "results.json", 10) == ("results.json", b"top")
    with pytest.raises(ValueError, match="8 entries, over 5"):
        read_zip_member(archive, "results.json", 10, max_entries=5)
    with pytest.raises(ValueError, match=r"holds no nope\.json"):
        read_zip_member(archive, "nope.json", 10)
    (tmp_path / "not.zip").write_bytes(b"PK not really")
    with pytest.raises(ValueError, match="not a zip"):
        read_zip_member(tmp_path / "not.zip", "results.json", 10)


def _never_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    """zipfile.ZipFile (which reads the whole central directory) must not be reached."""
    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise AssertionError("zipfile.ZipFile opened the zip")

    monkeypatch.setattr(zipfile, "ZipFile", refuse)


@pytest.mark.parametrize("zip64", [False, True])
def test_an_artifact_declaring_fewer_entries_than_it_holds_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zip64: bool) -> None:
    """The regression: the entry count was taken from the end record alone, and zipfile
    reads every entry of the central directory whatever it declares (an object each). A
    zip of 100,001 entries declaring 1 is refused at the default bound, before zipfile
    opens it, and so is its extraction."""
    archive = tmp_path / "liar.zip"
    raw_zip(archive, {f"f{n}": b"" for n in range(client.MAX_ZIP_ENTRIES)}
            | {"results.json": b"{}"}, declared=1, zip64=zip64)
    _never_opened(monkeypatch)
    said = (r"the artifact's zip holds 100001 entries in its central directory \(its end "
            r"record declares 1\), over 100000")
    with pytest.raises(ValueError, match=said):
        read_zip_member(archive, "results.json", 10)
    with pytest.raises(ValueError, match=said):
        client.extract_zip(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_artifact_counted_at_its_bound_is_read(tmp_path: Path) -> None:
    """Counted in the directory's bytes, not declared: 6 entries declaring 1 are refused
    over 5 and read at 6 (zipfile itself finds the 6)."""
    archive = tmp_path / "liar.zip"
    raw_zip(archive, {f"f{n}.txt": b"x" for n in range(5)} | {"results.json": b"top"},
            declared=1)
    with zipfile.ZipFile(archive) as zf:  # what the count guards against
        assert len(zf.namelist()) == 6
    with pytest.raises(ValueError, match=r"holds 6 entries .* over 5"):
        read_zip_member(archive, "results.json", 10, max_entries=5)
    assert read_zip_member(archive, "results.json", 10, max_entries=6) == (
        "results.json", b"top")


def test_an_artifact_whose_central_directory_is_over_its_bound_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "long-names.zip"
    raw_zip(archive, {"x" * 900: b"", "results.json": b"{}"})  # 46 + 900 + 46 + 12 bytes
    assert read_zip_member(archive, "results.json", 10, max_directory_bytes=1004) == (
        "results.json", b"{}")
    _never_opened(monkeypatch)
    with pytest.raises(ValueError, match="central directory of 1004 bytes, over 1003"):
        read_zip_member(archive, "results.json", 10, max_directory_bytes=1003)


def test_a_normal_artifact_is_still_extracted(tmp_path: Path) -> None:
    archive = tmp_path / "a.zip"
    archive.write_bytes(_zip(**{"traces/a.jsonl": b"{}\n", "results.json": b"top"}))
    out = tmp_path / "out"
    assert client.extract_zip(archive, out) == [(out / "results.json").resolve(),
                                                (out / "traces" / "a.jsonl").resolve()]
    assert (out / "traces" / "a.jsonl").read_bytes() == b"{}\n"


def test_the_artifact_zip_bounds_are_the_documented_ones() -> None:
    table = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    assert client.MAX_ZIP_ENTRIES == 100_000
    assert "| entries in an artifact's zip (declared, and counted in its central directory " \
           "before it is read) | 100,000 | — |" in table
    assert client.MAX_ZIP_DIRECTORY_BYTES == 64 * 1024 * 1024
    assert "| an artifact's zip's central directory | 64 MiB | — |" in table


# ------------------------------- issue 10 §6: asked for and not loaded is an error
def test_cli_baseline_that_cannot_be_loaded_exits_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        base_results: dict[str, Any]) -> None:
    copy_example(tmp_path / "cs")
    monkeypatch.chdir(tmp_path / "cs")
    good = json.dumps(base_results)
    (tmp_path / "truncated.json").write_text(good[: len(good) // 2])
    wrong = json.loads(good)
    wrong["verdict"] = "maybe"
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))
    (tmp_path / "good.json").write_text(good)
    for name, said in (("missing.json", "cannot read"),
                       ("truncated.json", "is not JSON (truncated?)"),
                       ("wrong.json", "does not match the results schema (schema_version "
                                      "'1'): at verdict: 'maybe' is not one of")):
        assert cli(["run", "-q", "-o", "out", "--baseline", str(tmp_path / name)]) == 2, name
        err = capsys.readouterr().err
        assert f"error: --baseline: {tmp_path / name}" in err or "cannot read" in err, err
        assert said in err, err
        assert not (tmp_path / "cs" / "out").exists()  # nothing evaluated, nothing written
    monkeypatch.setenv("AGENT_EVAL_BASELINE_MAX_BYTES", "1000")
    assert cli(["run", "-q", "-o", "out", "--baseline", str(tmp_path / "good.json")]) == 2
    assert "over the limit of 1000 bytes" in capsys.readouterr().err
    monkeypatch.delenv("AGENT_EVAL_BASELINE_MAX_BYTES")
    assert cli(["run", "-q", "-o", "out", "--baseline", str(tmp_path / "good.json")]) == 1
    assert cli(["merge", "out/results.json", "-o", "m", "--baseline",
                str(tmp_path / "wrong.json")]) == 2
    assert "does not match the results schema" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_baseline_that_is_no_regular_file_is_refused_without_waiting(
        tmp_path: Path) -> None:
    # a pull request commits base.json as a link to a FIFO, or to /proc/self/fd/1 (the
    # process's own output pipe): opening it waited for a writer, and reading the pipe
    # never ended, so `baseline: file` hung the job until its timeout
    copy_example(tmp_path / "cs")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "cs" / "base.json").symlink_to(tmp_path / "fifo")
    links = {"base.json": "--baseline"}
    if Path("/proc/self/fd/1").exists():
        (tmp_path / "cs" / "out.json").symlink_to("/proc/self/fd/1")
        links["out.json"] = "--baseline"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for name, option in links.items():
        done = subprocess.run([sys.executable, "-m", "agent_eval", "run", "-q", "-o", "out",
                               option, name], cwd=tmp_path / "cs", env=env,
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 2, done.stderr
        assert (f"error: --baseline: cannot read {name}: not a regular file (a FIFO, "
                "socket or device, its links followed)") in done.stderr
    # every other results file a command reads: the same
    done = subprocess.run([sys.executable, "-m", "agent_eval", "report", "base.json"],
                          cwd=tmp_path / "cs", env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert "error: cannot read base.json: not a regular file" in done.stderr


def test_load_file_by_hand(tmp_path: Path, base_results: dict[str, Any]) -> None:
    p = tmp_path / "r.json"
    p.write_text(json.dumps(base_results))
    assert load_file(p).suite == "customer-service-agent"
    with pytest.raises(BaselineError, match="over the limit of 100 bytes"):
        load_file(p, 100)
    p.write_text('{"tool": {"name": "other"}}')
    with pytest.raises(BaselineError, match="not an agent-eval results file"):
        load_file(p)


def test_action_baseline_file_missing_is_an_error(tmp_path: Path, github: FakeGitHub) -> None:
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "push", push_payload(),
                     inputs={"baseline": "file", "baseline-file": "nope.json"})
    said = _stopped(run)
    assert "baseline: file was asked for and cannot be had: cannot read" in said
    assert "baseline: auto" in said  # how to fall back instead
    assert github.requests == []


def test_action_baseline_git_without_the_config_at_the_base_is_an_error(
        tmp_path: Path, github: FakeGitHub) -> None:
    """The base commit predates the suite: ``git`` was asked for, so the regression gates
    cannot run; ``auto`` (tests/baseline/test_git_baseline.py) goes on and says why."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e", "HOME": str(tmp_path)}
    ws = tmp_path / "ws"
    ws.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ws, env=env, check=True,
                              capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    (ws / "README.md").write_text("x\n")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    base = git("rev-parse", "HEAD")
    copy_example(ws)
    git("add", "-A")
    git("commit", "-q", "-m", "pr")
    event = pr_payload("opened")
    event["pull_request"]["base"]["sha"] = base
    run = run_action(tmp_path, ws, github.url, "pull_request", event,
                     inputs={"baseline": "git"})
    said = _stopped(run)
    assert f"baseline: git was asked for and cannot be had: git: the base commit {base[:12]} " \
           "has no agent-eval.yaml" in said
    assert github.calls("POST") == []


def test_action_baseline_artifact_on_a_push_is_not_applicable(
        tmp_path: Path, github: FakeGitHub) -> None:
    """On a push to the default branch there is no base branch: nothing to compare, said
    in the log, and the run ends with its verdict (the example workflow runs on both)."""
    ws = make_workspace(tmp_path / "ws")
    run = run_action(tmp_path, ws, github.url, "push", push_payload(),
                     inputs={"baseline": "artifact", "upload-sarif": "false"})
    assert run.code == 1, run.stderr
    assert "baseline: artifact compares pull requests" in run.stderr
    assert github.requests == []
