"""What the action tells later steps and GitHub agrees with its gate: the ``violations``
and ``new-violations`` outputs count the findings of every kind (rule tests, scenarios,
criteria) of severity error or warning, with a baseline and without; the check run's
conclusion follows the step's exit status under ``fail-on`` (a required check blocks a
merge only on ``failure``); a rate-limited call is explained as a rate limit, not as a
missing permission."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from action_harness import (
    GIT_ENV,
    FakeGitHub,
    Reply,
    pr_payload,
    push_payload,
    require_node_tools,
    run_action,
)

from agent_eval import Location, ToolCall, Trace, evaluate, load_suite
from agent_eval.github.client import ApiError, GitHubClient
from agent_eval.github.event import from_payload
from agent_eval.github.inputs import Inputs
from agent_eval.github.publish import Report, publish
from agent_eval.github.step import Step, step_outputs
from agent_eval.results import Results

HEAD = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"  # head.sha of the pull_request examples

# one scenario, no rule test: what it finds is a scenario finding, never counts.violations
READ_ONLY = """version: "1"
suite: s
traces: traces/*.jsonl
scenarios:
  - id: READ-ONLY
    expect: {forbidden_tools: [delete_*]}
"""
# one call, under a warn threshold of none: verdict warn
WARN_ONLY = """version: "1"
suite: s
traces: traces/*.jsonl
scenarios:
  - id: A
    expect: {output: {contains: [ok]}}
    warn_thresholds: {max_tool_calls: 0}
"""


def _trace(tool: str, scenario: str = "READ-ONLY") -> str:
    return (f'{{"type":"trace_start","trace_id":"r-1","scenario":"{scenario}"}}\n'
            f'{{"type":"tool_call","id":"c1","tool":"{tool}","arguments":{{}}}}\n'
            '{"type":"output","output":"ok"}\n'
            '{"type":"trace_end"}\n')


def _workspace(root: Path, files: dict[str, str]) -> Path:
    """A git repository at ``root`` holding ``files``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = {**os.environ, **GIT_ENV, "HOME": str(root.parent)}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "x"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


def _check_run(github: FakeGitHub) -> dict[str, Any]:
    [run] = github.check_runs.values()
    return run


# ------------------------------------------------------------- violations, new-violations
def test_scenario_findings_are_violations_with_and_without_a_baseline(
        tmp_path: Path, github: FakeGitHub) -> None:
    # the base run: the same suite, a read-only trace: it passes with one note (the
    # forbidden delete_* was never called: coverage/unexercised), which is no violation
    base = _workspace(tmp_path / "base", {"agent-eval.yaml": READ_ONLY,
                                          "traces/t.jsonl": _trace("read_file")})
    run = run_action(tmp_path, base, github.url, "pull_request", pr_payload("opened"),
                     inputs={"baseline": "none", "comment": "false", "upload-sarif": "false"},
                     name="base-run")
    assert run.code == 0, run.stderr
    assert (run.outputs["verdict"], run.outputs["violations"],
            run.outputs["new-violations"]) == ("pass", "0", "0")
    base_results = (base / "agent-eval-results" / "results.json").read_text(encoding="utf-8")
    assert '"coverage/unexercised"' in base_results  # the note is there, not counted

    # the head: delete_everything breaks the scenario's forbidden_tools (one error finding
    # of the scenario; results.json counts.violations, the rule tests' count, stays 0)
    ws = _workspace(tmp_path / "ws", {"agent-eval.yaml": READ_ONLY,
                                      "traces/t.jsonl": _trace("delete_everything"),
                                      "base.json": base_results})
    file_baseline = {"baseline": "file", "baseline-file": "base.json"}
    for name, baseline, regressions in (("no-baseline", {"baseline": "none"}, "0"),
                                        ("file-baseline", file_baseline, "1")):
        run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                         inputs={**baseline, "comment": "false", "upload-sarif": "false"},
                         name=name)
        assert run.code == 1, (name, run.stderr)
        assert run.outputs["verdict"] == "fail"
        # one violation, new whether or not there is a baseline (the base run had none)
        assert run.outputs["violations"] == "1", name
        assert run.outputs["new-violations"] == "1", name
        assert run.outputs["regressions"] == regressions, name
        # the log's last line counts what the output counts (it said 0 violation(s): the
        # rule tests' counts.violations, beside verdict fail)
        assert run.stderr.splitlines()[-1] == (
            "agent-eval: verdict fail: 1 violation(s), 0 input error(s) in 1 trace(s); "
            "fail-on fail → exit 1"), name


def test_pass_rate_is_never_rounded_up_to_1_when_a_trace_failed(tmp_path: Path) -> None:
    # 30,000 traces, one of which calls the blocked tool: the pass rate is 29,999 / 30,000
    # (0.99997); rounded to 4 digits it read 1.0 beside verdict fail, so a later step that
    # gates on pass-rate < 1 let the run through
    (tmp_path / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\ntraces: t.jsonl\ntests:\n'
        "  - {id: bl, metric: tool_blocklist, blocklist: [rm_rf]}\n", encoding="utf-8")
    suite = load_suite(tmp_path / "agent-eval.yaml")

    def trace(i: int) -> Trace:
        at = Location("t.jsonl", i + 1)
        call = ToolCall(name="rm_rf" if i == 0 else "read", arguments={}, location=at)
        return Trace(id=f"t{i}", source="t.jsonl", location=at, end_location=at,
                     tool_calls=[call])

    results = evaluate(suite, [trace(i) for i in range(30_000)])
    assert results.verdict == "fail"
    outputs = step_outputs(results, tmp_path / "results.json", tmp_path / "results.sarif",
                           tmp_path)
    assert outputs["pass-rate"] != "1.0"
    assert float(outputs["pass-rate"]) == 29_999 / 30_000


def test_a_warning_is_a_violation_and_fails_the_check_under_fail_on_warn(
        tmp_path: Path, github: FakeGitHub) -> None:
    ws = _workspace(tmp_path / "ws", {"agent-eval.yaml": WARN_ONLY,
                                      "traces/t.jsonl": _trace("read", "A")})
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"baseline": "none", "check-run": "true", "fail-on": " Warn ",
                             "comment": "false", "upload-sarif": "false"})
    assert run.code == 1, run.stderr
    assert github.problems == []
    # one scenario/warn_threshold finding of severity warning
    assert (run.outputs["verdict"], run.outputs["violations"],
            run.outputs["new-violations"]) == ("warn", "1", "1")
    check = _check_run(github)
    assert check["conclusion"] == "failure"  # the step failed: so does the required check
    [create] = github.calls("POST", r"/check-runs$")
    assert create.json["head_sha"] == HEAD
    assert create.json["output"]["title"] == "warn: 1 violation(s), 0 input error(s)"


def test_fail_on_never_lets_the_check_pass_as_it_lets_the_step(
        tmp_path: Path, github: FakeGitHub) -> None:
    ws = _workspace(tmp_path / "ws", {"agent-eval.yaml": READ_ONLY,
                                      "traces/t.jsonl": _trace("delete_everything")})
    run = run_action(tmp_path, ws, github.url, "pull_request", pr_payload("opened"),
                     inputs={"baseline": "none", "check-run": "true", "fail-on": "never",
                             "comment": "false", "upload-sarif": "false"})
    assert run.code == 0, run.stderr
    assert run.outputs["verdict"] == "fail"
    assert _check_run(github)["conclusion"] == "neutral"  # not success: the verdict is fail
    [create] = github.calls("POST", r"/check-runs$")
    assert create.json["output"]["title"] == "fail: 1 violation(s), 0 input error(s)"


# --------------------------------------------------------------------- the check run
# verdict x fail-on -> conclusion, by hand from README "Inputs" (fail-on) and "Check run"
CONCLUSIONS = {
    ("pass", "fail"): "success", ("pass", "warn"): "success", ("pass", "never"): "success",
    ("warn", "fail"): "neutral", ("warn", "warn"): "failure", ("warn", "never"): "neutral",
    ("fail", "fail"): "failure", ("fail", "warn"): "failure", ("fail", "never"): "neutral",
    ("error", "fail"): "failure", ("error", "warn"): "failure", ("error", "never"): "neutral",
}


def _publish(tmp_path: Path, github: FakeGitHub, verdict: str, fail_on: str,
             inputs: dict[str, Any] | None = None) -> Step:
    """The action's GitHub calls (in process) for a run of ``verdict`` on a pull request."""
    results = Results(suite="s", config="agent-eval.yaml", verdict=verdict,  # type: ignore[arg-type]
                      counts={}, tests=[], traces=[], input_errors=[])
    env = {"GITHUB_REPOSITORY": github.repo, "GITHUB_SHA": "a" * 40,
           "GITHUB_REF": "refs/pull/2/merge"}
    event = from_payload("pull_request", pr_payload("opened"), env)
    client = GitHubClient("t", github.repo, github.url, sleep=lambda _s: None,
                          seconds_between_requests=0, seconds_between_writes=0,
                          log=lambda _m: None)
    report = Report(results=results, sarif="{}", summary="<!-- agent-eval:s -->\nsummary",
                    marker="<!-- agent-eval:s -->", workspace=tmp_path, checked_out="a" * 40,
                    started="2025-01-01T00:00:00Z", run_url=None)
    step = Step(env={})
    given = {"check_run": True, "upload_sarif": False, "comment": "false", "fail_on": fail_on,
             **(inputs or {})}
    publish(step, Inputs(**given), event, client, report)
    return step


@pytest.mark.parametrize(("verdict", "fail_on"), sorted(CONCLUSIONS))
def test_check_run_conclusion_follows_the_exit_status(
        tmp_path: Path, github: FakeGitHub, verdict: str, fail_on: str) -> None:
    step = _publish(tmp_path, github, verdict, fail_on)
    assert step.skipped == []
    assert github.problems == []
    [create] = github.calls("POST", r"/check-runs$")
    assert create.json["head_sha"] == HEAD
    assert create.json["conclusion"] == CONCLUSIONS[verdict, fail_on]


def test_a_check_annotation_keeps_to_githubs_64_kb() -> None:
    """GitHub takes at most 64 KB in an annotation's ``message`` and ``raw_details`` (the
    Checks API); they were cut at 60,000 *characters*, up to 240,000 bytes in UTF-8, and
    a batch holding one was refused whole (422). They are cut at 60,000 bytes, never in
    the middle of a character."""
    from agent_eval.github.publish import check_annotation

    for ch in ("删", "🙂", "a"):
        a = check_annotation("p.yaml", 3, "error", "r", ch * 70_000, ch * 70_000)
        for key in ("message", "raw_details"):
            data = a[key].encode("utf-8")
            assert 60_000 - 4 < len(data) <= 60_000, (ch, key, len(data))
            assert set(a[key]) == {ch}
    short = check_annotation("p.yaml", 3, "error", "r", "删 short", None)
    assert short["message"] == "删 short" and "raw_details" not in short


# ------------------------------------------------------------------------ rate limits
SECONDARY = {"message": "You have exceeded a secondary rate limit. Please wait a few "
                        "minutes before you try again.", "documentation_url": "x"}


def test_rate_limit_answers_are_not_refusals() -> None:
    def err(status: int, message: str, headers: dict[str, Any] | None = None) -> ApiError:
        return ApiError("GET", "/x", status, message, headers)

    limited = [err(403, SECONDARY["message"]),
               err(403, "Forbidden", {"retry-after": "30"}),
               err(403, "Forbidden", {"Retry-After": "30"}),  # whatever its case
               err(403, "API rate limit exceeded for installation ID 1",
                   {"x-ratelimit-remaining": "0"}),
               err(403, "Forbidden", {"x-ratelimit-remaining": "0"}),
               err(429, "Too Many Requests")]
    for e in limited:
        assert e.rate_limited and not e.denied, e
        assert e.needs("checks: write") == "", e
    refused = [err(403, "Resource not accessible by integration",
                   {"x-ratelimit-remaining": "4999"}),
               err(404, "Not Found"), err(401, "Bad credentials")]
    for e in refused:
        assert e.denied and not e.rate_limited, e
    assert not err(404, "rate limit").rate_limited  # only 403 and 429 are rate limits
    assert not err(502, "bad gateway").rate_limited


def test_a_rate_limited_call_is_not_explained_as_a_permission(
        tmp_path: Path, github: FakeGitHub) -> None:
    # the check run's POST answered as a secondary rate limit, again and again: four tries
    github.script("POST", r"/check-runs$",
                  *[Reply(403, SECONDARY, {"Retry-After": "7"}, check=False)] * 4)
    github.script("GET", r"/issues/2/comments$",
                  *[Reply(429, {"message": "Too many requests"}, check=False)] * 4)
    step = _publish(tmp_path, github, "fail", "fail", {"comment": "true"})
    comment, check = step.skipped
    assert comment.startswith("skipped the PR comment: the GitHub API's rate limit was hit "
                              "(not a missing permission)")
    assert check.startswith("skipped the check run: the GitHub API's rate limit was hit "
                            "(not a missing permission)")
    assert "GitHub asked to wait 7 s" in check
    assert "GitHub said: 403 You have exceeded a secondary rate limit" in check
    assert "GitHub said: 429 Too many requests" in comment
    for line in step.skipped:
        assert "permission (" not in line and "fork" not in line, line
    assert len(github.calls("POST", r"/check-runs$")) == 4

    # a refusal is still explained as one
    github.script("POST", r"/check-runs$",
                  Reply(403, {"message": "Resource not accessible by integration"},
                        check=False))
    step = _publish(tmp_path, github, "fail", "fail")
    assert step.skipped == [
        "skipped the check run: the token has no checks: write permission (fork pull "
        "requests get a read-only token); see README 'Fork pull requests'. GitHub said: "
        "403 Resource not accessible by integration"]


@pytest.fixture(autouse=True)
def _tools() -> None:
    require_node_tools()


def test_an_example_job_that_needs_another_runs_when_that_one_failed() -> None:
    """GitHub skips a job whose `needs:` failed, and a skipped job reports success: the
    required check of the sharded example (its merge job) and of traces-from-artifact (its
    evaluation) passed with nothing evaluated whenever a shard, or the job recording the
    traces, failed (a config error, a fork's read-only token refusing the SARIF upload, an
    agent test command that exits 1). Every example job that needs another runs always: the
    merge then refuses the missing parts, the action the missing artifact (exit 2)."""
    needing = []
    for path in sorted((Path(__file__).resolve().parents[2] / "examples" / "workflows")
                       .glob("*.yml")):
        for name, job in yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"].items():
            if "needs" in job:
                needing.append(f"{path.name}:{name}")
                assert job.get("if") == "${{ always() }}", (path.name, name)
    assert needing == ["sharded.yml:merge", "traces-from-artifact.yml:agent-eval"]


def test_a_shard_uploads_its_part_when_its_sarif_upload_failed() -> None:
    """The shard job uploads its SARIF, then its part for merge: with a fork's read-only
    token the SARIF upload fails, the part's upload (the default `if: success()`) was
    skipped, and every sharded run of a fork's pull request failed at merge, its parts
    missing. The part is uploaded unless the run was cancelled."""
    path = Path(__file__).resolve().parents[2] / "examples" / "workflows" / "sharded.yml"
    steps = yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"]["shard"]["steps"]
    sarif = next(i for i, s in enumerate(steps)
                 if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@"))
    [part] = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert steps.index(part) > sarif and part["with"]["path"] == "part/results.json"
    assert part.get("if") == "${{ !cancelled() }}"
    # a re-run shard (Re-run jobs is the same workflow run) replaces its part: without
    # overwrite, upload-artifact v4 failed it (409, an artifact of that name exists) and
    # merge read the earlier attempt's part
    assert part["with"].get("overwrite") is True


# ------------------------------------------------------------------ live MCP suites
def test_a_suite_with_live_probes_is_refused_not_passed_without_them(
        tmp_path: Path, github: FakeGitHub) -> None:
    # the action does not run probes (docs/mcp.md). Where the MCP SDK is installed (this
    # test's environment: `agent-eval action` on a runner or a laptop), the suite loaded,
    # its traces (clean) were checked, the probe never ran, and the step passed (exit 0)
    suite = READ_ONLY + """servers:
  srv:
    command: a-server-that-must-not-be-started
probes:
  - id: sum
    tool: get-sum
    arguments: {a: 2, b: 3}
    expect_result: {contains: "is 6"}
"""
    ws = _workspace(tmp_path / "ws", {"agent-eval.yaml": suite,
                                      "traces/t.jsonl": _trace("read_file")})
    run = run_action(tmp_path, ws, github.url, "push", push_payload(),
                     inputs={"baseline": "none", "upload-sarif": "false"})
    assert run.code == 2, run.stdout
    assert run.outputs["verdict"] == "error"
    # at the servers: key (line 7 of the suite), saying what to do instead
    [error] = run.lines("::error title=agent-eval::")
    assert "agent-eval.yaml:7:1: the action does not run live MCP servers and probes" in error
    assert "agent-eval run" in error
