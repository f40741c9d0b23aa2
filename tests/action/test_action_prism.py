"""Smoke runs of ``agent-eval action`` against prism serving GitHub's OpenAPI description
on loopback: prism validates every request (and answers 4xx to a wrong one, 422 for more
than 50 annotations). Artifacts are not downloaded here: prism's 302 points at a host on
the internet."""

from __future__ import annotations

import json
from pathlib import Path

from action_harness import (
    Prism,
    make_workspace,
    many_violations,
    pr_payload,
    prism_requests,
    push_payload,
    run_action,
)

from agent_eval.results import Results

REPO = "/repos/Codertocat/Hello-World"


def _checked(prism: Prism, since: int) -> list[str]:
    """The requests prism saw after log offset ``since``; fails on any it rejected."""
    log = prism.text()[since:]
    seen = prism_requests(log)
    for request, lines in seen:
        text = "\n".join(lines)
        assert "✖" not in text, f"prism rejected {request}:\n{text}"
        assert "The request passed the validation rules" in text, (request, text)
    return [r for r, _ in seen]


def test_pull_request_makes_every_call(tmp_path: Path, prism: Prism) -> None:
    ws = make_workspace(tmp_path / "ws")
    since = len(prism.text())
    run = run_action(tmp_path, ws, prism.url, "pull_request", pr_payload("opened"),
                     inputs={"check-run": "true"})
    assert run.code == 1, run.stderr
    assert run.skips() == [], run.stdout
    seen = _checked(prism, since)
    assert seen[0] == f"post {REPO}/code-scanning/sarifs"
    assert f"get {REPO}/code-scanning/sarifs/47177e22-5596-11eb-80a1-c1e54ef945c6" in seen
    assert set(seen) == {
        f"post {REPO}/code-scanning/sarifs",
        f"get {REPO}/code-scanning/sarifs/47177e22-5596-11eb-80a1-c1e54ef945c6",
        "get /user", f"get {REPO}/issues/2/comments", f"post {REPO}/issues/2/comments",
        f"get {REPO}/pulls/2/files", f"post {REPO}/check-runs"}
    assert run.outputs["comment-url"].startswith("https://github.com/")
    assert "processed" in run.stderr and "created the PR comment" in run.stderr


def test_push_uploads_sarif(tmp_path: Path, prism: Prism) -> None:
    ws = make_workspace(tmp_path / "ws")
    since = len(prism.text())
    run = run_action(tmp_path, ws, prism.url, "push", push_payload(),
                     inputs={"check-run": "true", "sarif-category": "cs"})
    assert run.code == 1, run.stderr
    assert run.skips() == [], run.stdout
    assert _checked(prism, since) == [
        f"post {REPO}/code-scanning/sarifs",
        f"get {REPO}/code-scanning/sarifs/47177e22-5596-11eb-80a1-c1e54ef945c6",
        f"post {REPO}/check-runs"]


def test_annotation_batches_are_accepted(tmp_path: Path, prism: Prism) -> None:
    ws = make_workspace(tmp_path / "ws", extra_traces={"many.jsonl": many_violations(120)})
    since = len(prism.text())
    run = run_action(tmp_path, ws, prism.url, "pull_request", pr_payload("synchronize"),
                     inputs={"check-run": "true", "upload-sarif": "false", "comment": "false"})
    assert run.code == 1, run.stderr
    assert run.skips() == [], run.stdout
    seen = _checked(prism, since)
    results = Results.from_dict(
        json.loads((ws / "agent-eval-results" / "results.json").read_text()))
    total = len(results.findings)
    batches = -(-total // 50)
    assert batches >= 3
    assert seen == [f"get {REPO}/pulls/2/files", f"post {REPO}/check-runs"] + [
        f"patch {REPO}/check-runs/4"] * (batches - 1)
    assert f"{total} annotation(s) in {batches} request(s)" in run.stderr
