"""Base-branch comparison end to end: a real git repository with a base commit and a pull
request commit (traces and policy changed between them), a shallow clone of the pull
request, and the action on a pull_request event against the loopback GitHub."""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "action"))

from action_harness import (
    GIT_ENV,
    FakeGitHub,
    Reply,
    pr_payload,
    require_node_tools,
    run_action,
    workflow_run,
    workflow_runs,
)
from tests.conftest import copy_example

from agent_eval.baseline import file_at_base, from_artifact, from_file, from_git, resolve
from agent_eval.results import Results
from agent_eval.sections import Comparison, NoBaseline


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    require_node_tools()
    with FakeGitHub() as fake:
        yield fake


REGRESSION = ("  regression: {max_pass_rate_drop: 0.05, max_score_drop: 50, "
              "fail_on_new_violations: true}\n")
WORKFLOW_REF = "Codertocat/Hello-World/.github/workflows/agent-eval.yml@refs/pull/2/merge"


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(cwd.parent)}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True)
    return done.stdout.strip()


def _copy_example(dest: Path, *, config: bool = True) -> None:
    copy_example(dest)
    if config:
        cfg = dest / "agent-eval.yaml"
        cfg.write_text(cfg.read_text().replace("pass_criteria:\n", "pass_criteria:\n"
                                               + REGRESSION, 1))
    else:
        (dest / "agent-eval.yaml").unlink()


def _pr_changes(root: Path) -> None:
    """Policy: one constraint changed (max 30 -> 10), one rule added; traces: REFUND-001
    now refunds in EUR (a regression: its scenario expects USD), discount-ok's 15 % is
    over the new max (a new violation), the payment amount is positive (a violation gone),
    discount-too-high gives 20 % (GOODWILL-002 passes: a fix)."""
    pol = root / "policies" / "customer.yaml"
    text = pol.read_text()
    text = text.replace("max: 30 ", "max: 10 ", 1)
    text += ("\n  close_account:\n    arguments:\n      reason:\n        type: string\n")
    pol.write_text(text)
    t = root / "traces"
    for name, old, new in (
            ("refund-happy.jsonl", '"currency":"USD","reason"', '"currency":"EUR","reason"'),
            ("payment-invalid.jsonl", '"amount":-15.0', '"amount":15.0'),
            ("discount-too-high.jsonl", '"percent":50', '"percent":20')):
        p = t / name
        before = p.read_text()
        assert old in before, (name, old)
        p.write_text(before.replace(old, new))


@pytest.fixture
def repos(tmp_path: Path) -> dict[str, Any]:
    """origin (base commit on main, the PR commit on branch pr) and a --depth 1 clone of
    the PR branch (what actions/checkout does)."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    _copy_example(origin)
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "base")
    base = git(origin, "rev-parse", "HEAD")
    git(origin, "checkout", "-q", "-b", "pr")
    _pr_changes(origin)
    git(origin, "commit", "-q", "-am", "pr")
    head = git(origin, "rev-parse", "HEAD")
    git(origin, "config", "uploadpack.allowAnySHA1InWant", "true")
    ws = tmp_path / "ws"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr",
                    f"file://{origin}", str(ws)], check=True, capture_output=True,
                   env={**os.environ, **GIT_ENV})
    return {"origin": origin, "ws": ws, "base": base, "head": head}


def _event(repos: dict[str, Any]) -> dict[str, Any]:
    event = pr_payload("opened")
    pr = event["pull_request"]
    pr["base"]["sha"], pr["base"]["ref"] = repos["base"], "main"
    pr["head"]["sha"] = repos["head"]
    return event


def _sarif(github: FakeGitHub) -> dict[str, Any]:
    [upload] = github.calls("POST", r"/code-scanning/sarifs$")
    data: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(upload.json["sarif"])))
    return data


def _check_comparison(results: Results, comment: str) -> None:
    b = results.baseline
    assert isinstance(b, Comparison)
    assert b.source["kind"] in ("git", "artifact")
    assert b.regressed == ("REFUND-001",)
    assert b.fixed == ("GOODWILL-002",)
    assert b.policy.changed and b.policy.message == (
        "policy changed: 1 rule added, 0 removed, 1 changed")
    assert b.policy.added == (
        "examples/customer-service/policies/customer.yaml#"
        "tools.close_account.arguments.reason.type",) or b.policy.added[0].endswith(
        "policies/customer.yaml#tools.close_account.arguments.reason.type")
    new = [v for v in results.findings if v.fingerprint in b.new]
    new_rules = sorted({(v.rule, v.trace.trace_id if v.trace else "") for v in new
                        if v.severity in ("error", "warning")})
    assert ("args_valid/maximum", "discount-ok-001") in new_rules
    assert ("scenario/args", "refund-happy-001") in new_rules
    assert b.new_violations == len([v for v in new if v.severity in ("error", "warning")])
    absent = {(f.rule, f.trace.trace_id) for f in b.absent if f.trace}
    assert ("args_valid/exclusive_minimum", "payment-invalid-001") in absent
    # the unchanged violation whose constraint changed value keeps its fingerprint
    unchanged = [v for v in results.findings if v.fingerprint in b.unchanged]
    assert any(v.rule == "args_valid/maximum" and v.trace and v.trace.trace_id
               == "discount-too-high-001" for v in unchanged)
    # the gates
    crit = {c.name: c for c in results.criteria if c.kind == "regression"}
    assert crit["fail_on_new_violations"].status == "fail"
    assert crit["max_pass_rate_drop"].status == "pass"  # one regression, one fix
    assert results.verdict == "fail"
    # the comment leads with what changed
    assert "**Against the base branch**" in comment
    assert "### 🔻 Regressions (1)" in comment and "`REFUND-001`" in comment
    assert "### ✅ Fixes (1)" in comment and "`GOODWILL-002`" in comment
    assert "policy changed: 1 rule added, 0 removed, 1 changed" in comment
    assert comment.index("Regressions") < comment.index("| metric | base | head | Δ |")
    assert "### 🆕 New violations (" in comment
    assert "<details><summary>Unchanged findings (" in comment
    assert comment.index("New violations") < comment.index("Unchanged findings")
    assert "Violations gone since the base branch" in comment


def test_action_on_a_pull_request_compares_with_the_base_commit(
        tmp_path: Path, repos: dict[str, Any], github: FakeGitHub) -> None:
    ws = repos["ws"]
    assert git(ws, "rev-parse", "--is-shallow-repository") == "true"
    with pytest.raises(subprocess.CalledProcessError):
        git(ws, "cat-file", "-e", f"{repos['base']}^{{commit}}")
    run = run_action(tmp_path, ws, github.url, "pull_request", _event(repos),
                     inputs={"baseline": "git"})
    assert run.code == 1, run.stderr
    assert github.problems == []
    assert "fetched the base commit" in run.stderr and "(shallow clone)" in run.stderr
    results = Results.load(str(ws / "agent-eval-results" / "results.json"))
    [comment] = github.comments[2]
    _check_comparison(results, comment["body"])
    assert isinstance(results.baseline, Comparison)
    assert run.outputs["regressions"] == "1"
    assert run.outputs["new-violations"] == str(results.baseline.new_violations)
    assert int(run.outputs["new-violations"]) >= 2
    # SARIF: every finding says new or unchanged, as the comparison does
    sarif = _sarif(github)
    states = {r["partialFingerprints"]["primaryLocationLineHash"]: r.get("baselineState")
              for r in sarif["runs"][0]["results"]
              if not r["ruleId"].startswith("input/")}
    for v in results.findings:
        want = "unchanged" if v.fingerprint in results.baseline.unchanged else "new"
        assert states[v.fingerprint] == want, v.rule
    assert "new" in states.values() and "unchanged" in states.values()
    # the worktree is gone
    assert git(ws, "worktree", "list").count("\n") == 0


def test_auto_falls_back_to_the_artifact_when_the_base_has_no_config(
        tmp_path: Path, github: FakeGitHub) -> None:
    """The base commit has no config: auto says so, then takes the results artifact of the
    latest successful run on main (listing, zip download validated against the spec)."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    (origin / "README.md").write_text("no agent-eval here yet\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "base")
    base = git(origin, "rev-parse", "HEAD")
    _copy_example(origin)
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "pr")
    repos = {"ws": origin, "base": base, "head": git(origin, "rev-parse", "HEAD")}

    # the base branch's results, as a push run on main kept them
    base_ws = tmp_path / "base-ws"
    _copy_example(base_ws)
    subprocess.run([sys.executable, "-m", "agent_eval", "run", "-q", "-o", "out"],
                   cwd=base_ws, check=False,
                   capture_output=True)
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as z:
        z.write(base_ws / "out" / "results.json", "results.json")
    github.add_artifact("agent-eval-results", zipped.getvalue())
    github.script("GET", r"/actions/workflows/agent-eval\.yml/runs$",
                  Reply(200, workflow_runs(workflow_run(4242))))

    _pr_changes(origin)
    run = run_action(tmp_path, origin, github.url, "pull_request", _event(repos),
                     env={"GITHUB_WORKFLOW_REF": WORKFLOW_REF})
    assert run.code == 1, run.stderr
    assert github.problems == []
    assert f"git: the base commit {base[:12]} has no agent-eval.yaml" in run.stderr
    [listing] = github.calls("GET", r"/actions/workflows/agent-eval\.yml/runs$")
    assert listing.param("branch") == "main" and listing.param("status") == "success"
    assert listing.param("event") == "push"
    assert github.calls("GET", r"/actions/runs/4242/artifacts$")
    assert github.calls("GET", r"/actions/artifacts/\d+/zip$")
    results = Results.load(str(origin / "agent-eval-results" / "results.json"))
    assert isinstance(results.baseline, Comparison)
    assert results.baseline.source["kind"] == "artifact"
    assert results.baseline.source["run_id"] == 4242
    [comment] = github.comments[2]
    _check_comparison(results, comment["body"])
    assert "artifact agent-eval-results of run 4242 on main" in comment["body"]


def test_base_without_the_config_says_so_and_runs_without_a_comparison(
        tmp_path: Path, github: FakeGitHub) -> None:
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    (origin / "README.md").write_text("x\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "base")
    base = git(origin, "rev-parse", "HEAD")
    _copy_example(origin)
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "pr")
    repos = {"base": base, "head": git(origin, "rev-parse", "HEAD")}
    run = run_action(tmp_path, origin, github.url, "pull_request", _event(repos),
                     inputs={"fail-on": "never"})
    assert run.code == 0, run.stderr
    assert github.problems == []
    results = Results.load(str(origin / "agent-eval-results" / "results.json"))
    assert isinstance(results.baseline, NoBaseline)
    assert "has no agent-eval.yaml" in results.baseline.reason
    assert results.verdict == "fail"  # the example's own verdict, no gate applied
    assert all(c.status == "skip" for c in results.criteria if c.kind == "regression")
    [comment] = github.comments[2]
    body = comment["body"]
    assert "Not compared with the base branch" in body and "has no agent-eval.yaml" in body
    assert "baseline-artifact" in body  # how to get one
    assert "| metric | base |" not in body
    assert run.outputs["regressions"] == "0"
    sarif = _sarif(github)
    assert all("baselineState" not in r for r in sarif["runs"][0]["results"])


def test_from_git_in_a_shallow_clone_and_from_file(repos: dict[str, Any],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    ws = repos["ws"]
    monkeypatch.chdir(ws)
    found = from_git(ws, repos["base"], ws / "agent-eval.yaml")
    assert found.results is not None, found.reason
    assert any("fetched the base commit" in n for n in found.notes)
    # the base run used the base's own policy (max: 30) and traces (-15.0 still there)
    rules = {v.rule for v in found.results.violations}
    assert "args_valid/exclusive_minimum" in rules
    assert found.results.inventory is not None
    # a second time: the commit is there, nothing to fetch
    again = from_git(ws, repos["base"], ws / "agent-eval.yaml")
    assert again.results is not None and again.notes == []
    missing = from_git(ws, "f" * 40, ws / "agent-eval.yaml")
    assert missing.results is None and "could not fetch" in missing.reason

    (ws / "base.json").write_text(json.dumps(found.results.to_dict()))
    assert from_file(ws / "base.json").results is not None
    bad = from_file(ws / "nope.json")
    assert bad.results is None and "cannot read" in bad.reason
    chosen = resolve("auto", git=lambda: missing, artifact=None)
    assert chosen.results is None
    assert chosen.reason.startswith("git: could not fetch")
    assert "artifact: not available" in chosen.reason
    assert resolve("file").reason == "baseline: file needs baseline-file"
    assert from_artifact(None, "main", "x", {}, ws / "a").reason.startswith("no github-token")


def test_from_git_reads_the_base_commits_traces_named_by_an_absolute_pattern(
        repos: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--traces "$PWD/traces/*.jsonl"`` (or the action's ``traces`` input written with
    ``${{ github.workspace }}``) named the workspace's files by their absolute path, which
    the base commit's worktree read too: the base run was this run's traces under the base
    config, and the comparison found no regression where there was one."""
    ws = repos["ws"]
    monkeypatch.chdir(ws)
    relative = from_git(ws, repos["base"], ws / "agent-eval.yaml", ["traces/*.jsonl"])
    absolute = from_git(ws, repos["base"], ws / "agent-eval.yaml",
                        [f"{ws}/traces/*.jsonl"])
    assert relative.results is not None and absolute.results is not None, absolute.reason
    # the base commit's own payment trace (-15.0; the pull request made it 15.0)
    for found in (relative, absolute):
        assert found.results is not None
        assert "args_valid/exclusive_minimum" in {v.rule for v in found.results.violations}
        assert found.results.traces[0].file == "traces/address-change.jsonl"
    # through a link to the workspace, and from a folder below it
    (tmp_path / "link").symlink_to(ws)
    monkeypatch.chdir(ws / "policies")
    linked = from_git(ws, repos["base"], ws / "agent-eval.yaml",
                      [f"{tmp_path / 'link'}/traces/*.jsonl", "../traces/refund-*.jsonl"])
    assert linked.results is not None, linked.reason
    assert "args_valid/exclusive_minimum" in {v.rule for v in linked.results.violations}
    # traces outside the repository: no commit has them, so no base run either
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "t.jsonl").write_text((ws / "traces" / "refund-happy.jsonl").read_text())
    for pattern in (f"{outside}/*.jsonl", "../../elsewhere/*.jsonl"):
        none = from_git(ws, repos["base"], ws / "agent-eval.yaml", [pattern])
        assert none.results is None
        assert none.reason.startswith(f"the trace pattern '{pattern}' is outside the "
                                      "repository: the base commit has no version"), none.reason


def test_a_base_sha_that_is_no_commit_id_is_never_given_to_git(
        repos: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The base commit comes from the event's payload, and ``git fetch origin SHA`` reads
    a SHA starting with ``-`` as an option: ``--upload-pack=COMMAND`` ran COMMAND. A name
    (``HEAD``) named the pull request's own commit as its base."""
    ws = repos["ws"]
    monkeypatch.chdir(ws)
    mark = tmp_path / "ran"
    for sha in (f"--upload-pack=touch {mark}; git-upload-pack", "HEAD", "main",
                repos["base"][:12]):
        found = from_git(ws, sha, ws / "agent-eval.yaml")
        assert not mark.exists()
        assert found.results is None
        assert "is not a commit id (40 or 64 hexadecimal digits)" in found.reason, found.reason
        changed, warning = file_at_base(ws, sha, ws / "agent-eval.yaml")
        assert changed is None and warning is not None
        assert "is not a commit id" in warning
        assert not mark.exists()


def test_action_with_a_committed_baseline_file(tmp_path: Path, github: FakeGitHub) -> None:
    from action_harness import make_workspace

    ws = make_workspace(tmp_path / "ws")
    subprocess.run([sys.executable, "-m", "agent_eval", "run", "-q", "-o", "base"], cwd=ws,
                   check=False, capture_output=True)
    run = run_action(tmp_path, ws, github.url, "push", _push_event(),
                     inputs={"baseline": "file", "baseline-file": "base/results.json"})
    assert run.code == 1, run.stderr
    assert github.problems == []
    results = Results.load(str(ws / "agent-eval-results" / "results.json"))
    assert isinstance(results.baseline, Comparison)
    assert results.baseline.source["kind"] == "file"
    assert results.baseline.new_violations == 0 and results.baseline.regressions == 0
    assert run.outputs["new-violations"] == "0"
    assert "baseline: results file" in run.stderr


def _push_event() -> dict[str, Any]:
    from action_harness import push_payload

    return push_payload()


def test_a_base_commit_under_a_non_ascii_folder_where_the_locale_is_ascii(
        tmp_path: Path) -> None:
    """git's output was decoded with the locale's encoding: a checkout under a folder
    named with a non-ASCII letter, on a machine whose locale is ASCII (LANG=C without
    Python's coercion), stopped `run --baseline-ref` with an internal error
    (UnicodeDecodeError of `git rev-parse --show-toplevel`); a Windows runner's git writes
    UTF-8, which cp1252 would read as other letters. It is decoded as the file system's
    names are."""
    ws = tmp_path / "repö"
    ws.mkdir()
    _copy_example(ws)
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "base")
    base = git(ws, "rev-parse", "HEAD")
    (ws / "NOTES").write_text("the pull request\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "head")
    env = {**os.environ, **GIT_ENV, "HOME": str(tmp_path), "LC_ALL": "C", "LANG": "C",
           "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
    probe = subprocess.run([sys.executable, "-c", "import locale; print(locale.getencoding())"],
                           env=env, capture_output=True, text=True, check=True)
    assert probe.stdout.strip() in ("ANSI_X3.4-1968", "ascii", "US-ASCII")  # as a user's
    done = subprocess.run(
        [sys.executable, "-m", "agent_eval", "run", "--config", "agent-eval.yaml",
         "--baseline-ref", base, "--no-timings", "-q"], cwd=ws, env=env, capture_output=True)
    err = done.stderr.decode("utf-8", "replace")
    assert "internal error" not in err and "UnicodeDecodeError" not in err, err
    assert done.returncode == 1, err  # the example fails on purpose; compared, unchanged
    data = json.loads((ws / "agent-eval-results" / "results.json").read_bytes())
    assert data["baseline"]["source"] == {
        "kind": "git", "sha": base, "ref": base,
        "description": f"base commit {base[:12]}, evaluated with git"}
    assert data["baseline"]["counts"]["violations"] == data["counts"]["violations"]
