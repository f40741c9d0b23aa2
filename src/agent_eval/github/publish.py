"""The action's GitHub calls, after its files are written: the SARIF upload, the pull
request comment and the check run (README.md "GitHub Action").

A call that fails never changes the verdict or the exit code: a call the token may not
make (fork pull requests, a missing permission) is skipped with one explanation
(:meth:`Step.skip`), and the run goes on."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from agent_eval.errors import ExitCode
from agent_eval.findings import Finding, by_severity, count_violations
from agent_eval.github import workflow
from agent_eval.github.client import ApiError, GitHubClient, retry_after
from agent_eval.github.event import PR_EVENTS, Event
from agent_eval.github.inputs import Inputs
from agent_eval.github.secrets import Redactor
from agent_eval.github.step import Step
from agent_eval.results import Results, exit_code

__all__ = ["MAX_CHECK_ANNOTATIONS", "Report", "check_annotation", "check_conclusion",
           "find_pull_request", "input_errors_first", "publish", "trace_annotation",
           "with_marker"]

MAX_CHECK_ANNOTATIONS = 500  # ten requests of 50
# input errors annotated before the findings (in the log, where GitHub shows ten error
# annotations, and in the check run); the others come after the findings, so that many
# input errors never leave the findings without an annotation
FIRST_INPUT_ERRORS = 5
T = TypeVar("T")


def input_errors_first(errors: list[T], findings: Iterable[T]) -> list[T]:
    """Annotations in the order they are shown: the first :data:`FIRST_INPUT_ERRORS`
    input errors (what could not be checked: they make the verdict error), the findings,
    then the other input errors."""
    return [*errors[:FIRST_INPUT_ERRORS], *findings, *errors[FIRST_INPUT_ERRORS:]]

FORK_HELP = "see README 'Fork pull requests'"
RATE_LIMIT_HELP = "see README 'Permissions'"


@dataclass(frozen=True)
class Report:
    """What a run publishes, and where it ran."""

    results: Results
    sarif: str  # the SARIF log, as written
    summary: str  # the job summary's markdown: the PR comment and the check run's summary
    marker: str  # the comment's hidden first line, that finds it again
    workspace: Path
    checked_out: str | None  # the commit checked out in the workspace
    started: str  # when the run started (ISO 8601, UTC)
    run_url: str | None  # this workflow run's page


def publish(step: Step, inputs: Inputs, event: Event, client: GitHubClient | None,
            report: Report, token_why: str | None = None) -> str:
    """Make the calls the inputs ask for; the comment's URL, or "" when none was made."""
    if client is None:
        _skip_all(step, inputs, event, token_why)
        return ""
    if inputs.upload_sarif:
        _alone(step, "the SARIF upload", lambda: _upload_sarif(step, event, client, report))
    comment_url = ""
    if inputs.wants_comment(event.is_pull_request or bool(event.no_pull_request)):
        comment_url = _alone(step, "the PR comment",
                             lambda: _comment(step, event, client, report)) or ""
    if inputs.check_run:
        _alone(step, "the check run", lambda: _check_run(step, inputs, event, client, report))
    return comment_url


def _alone(step: Step, call: str, make: Callable[[], T]) -> T | None:
    """One call of :func:`publish`: an error it did not expect (an answer of a shape GitHub
    does not give, a bug) skips that call, explained, and never the calls after it."""
    try:
        return make()
    except Exception as exc:  # a bug here must not cost the other calls
        step.skip(f"skipped {call}: it stopped on an internal error: {type(exc).__name__}: "
                  f"{exc} (the verdict and the files are not affected)")
        return None


def find_pull_request(step: Step, event: Event, client: GitHubClient | None) -> None:
    """Under ``workflow_run`` for a pull request whose payload lists none (a fork's), the
    open pull request whose head is the triggering run's head commit, found before the
    baseline is looked for: its number, base commit and base branch go into ``event``, so
    that ``baseline: auto`` compares with its base as for a listed one."""
    if (client is None or event.name != "workflow_run" or event.pr_number is not None
            or not event.head_sha
            or event.triggering_event not in ("pull_request", "pull_request_target")):
        return
    try:
        pr = client.find_pull_request(event.head_repository, event.head_ref, event.head_sha)
    except ApiError as exc:
        step.log(f"could not look up the pull request of {event.head_sha}: {exc}")
        return
    number = pr.get("number") if pr is not None else None
    if pr is None or not isinstance(number, int) or isinstance(number, bool):
        return
    base = pr.get("base")
    sha, ref = (base.get("sha"), base.get("ref")) if isinstance(base, dict) else (None, None)
    event.pr_number = number
    event.base_sha = sha if isinstance(sha, str) and sha else None
    event.base_ref = ref if isinstance(ref, str) and ref else None


def _skip_all(step: Step, inputs: Inputs, event: Event, token_why: str | None) -> None:
    """Without a client: one line for every call that was asked for."""
    wanted = []
    if inputs.upload_sarif:
        wanted.append("the SARIF upload")
    if inputs.wants_comment(event.is_pull_request or bool(event.no_pull_request)):
        wanted.append("the PR comment")
    if inputs.check_run:
        wanted.append("the check run")
    if wanted:
        why = token_why or ("no github-token" if event.repository
                            else "GITHUB_REPOSITORY is not set")
        step.skip(f"skipped {', '.join(wanted)}: {why}")


def _upload_sarif(step: Step, event: Event, client: GitHubClient, report: Report) -> None:
    target = event.sarif_target(report.checked_out)
    if target is None:
        step.skip(f"skipped the SARIF upload: {event.no_target_reason(report.checked_out)}")
        return
    try:
        up = client.upload_sarif(report.sarif, commit_sha=target.sha, ref=target.ref,
                                 checkout_uri=report.workspace.as_uri(),
                                 tool_name="agent-eval", started_at=report.started)
    except ApiError as exc:
        step.skip(_explain("the SARIF upload", exc, "security-events: write", event,
                           " (and Code Scanning must be available for the repository)"))
        return
    if up.status == "complete":
        step.log(f"SARIF upload {up.id} to {target.ref} ({target.sha[:12]}) processed")
    elif up.status == "failed":
        errors = "; ".join(up.errors) or "no reason given"
        step.say(workflow.command("error", f"Code Scanning could not process the SARIF "
                                  f"upload {up.id}: {errors}",
                                  title="agent-eval: SARIF upload"))
    elif up.status == "unknown":
        step.warn(f"the SARIF upload {up.id} to {target.ref} ({target.sha[:12]}) was made, "
                  f"but its processing status could not be read: {'; '.join(up.errors)}; "
                  "its alerts appear in Code Scanning when GitHub has processed it")
    else:
        step.log(f"SARIF upload {up.id} to {target.ref} is still being processed after "
                 f"{up.waited:.0f} s; its alerts appear when GitHub is done")


def _comment(step: Step, event: Event, client: GitHubClient, report: Report) -> str:
    """Create or update this suite's comment on the pull request; its URL, or ""."""
    if event.pr_number is None:
        step.skip(f"skipped the PR comment: {event.no_pull_request}" if event.no_pull_request
                  else f"skipped the PR comment: this run is not for a pull request "
                       f"(event {event.name or 'unknown'})")
        return ""
    try:
        c = client.upsert_comment(event.pr_number, with_marker(report.summary, report.marker),
                                  report.marker)
    except ApiError as exc:
        step.skip(_explain("the PR comment", exc, "pull-requests: write", event))
        return ""
    step.log(f"{'created' if c.created else 'updated'} the PR comment {c.url}")
    return c.url


def with_marker(comment: str, marker: str) -> str:
    """The comment with ``marker`` as its first line, in place of the summary's own."""
    first, _, rest = comment.partition("\n")
    if first.startswith("<!-- agent-eval:") and first.endswith("-->"):
        return f"{marker}\n{rest}"
    return f"{marker}\n{comment}"


def _check_run(step: Step, inputs: Inputs, event: Event, client: GitHubClient,
               report: Report) -> None:
    sha = event.check_sha
    mismatch = event.not_at_head(report.checked_out)
    if mismatch:
        step.skip(f"skipped the check run: {mismatch}")
        return
    if not sha:
        where = ("the triggering run's head, workflow_run.head_sha"
                 if event.name == "workflow_run" else "GITHUB_SHA")
        step.skip(f"skipped the check run: {event.no_pull_request}" if event.name in PR_EVENTS
                  else f"skipped the check run: the commit is unknown ({where})")
        return
    results = report.results
    annotations = _annotations(step, results,
                               _annotated_trace_files(step, inputs, event, results, client))
    total = len(annotations)
    annotations = annotations[:MAX_CHECK_ANNOTATIONS]
    title = (f"{results.verdict}: {count_violations(results.findings)} violation(s), "
             f"{len(results.input_errors)} input error(s)")
    if total > len(annotations):
        title += f" ({len(annotations)} of {total} annotated)"
    conclusion = check_conclusion(results.verdict, inputs.fail_on)
    try:
        cr = client.create_check_run(name=f"agent-eval ({results.suite})", head_sha=sha,
                                     conclusion=conclusion, title=title,
                                     summary=report.summary, annotations=annotations,
                                     details_url=report.run_url)
    except ApiError as exc:
        step.skip(_explain("the check run", exc, "checks: write", event))
        return
    if cr.error is not None:
        said = f"{cr.error.status} {cr.error.message}".strip() if cr.error.status \
            else cr.error.message
        step.skip(f"the check run {cr.url or cr.id} has its conclusion ({conclusion}) but "
                  f"only {cr.sent} of {len(annotations)} annotation(s): sending the others "
                  f"failed, GitHub said: {said}")
        return
    step.log(f"check run {cr.id} with {len(annotations)} annotation(s) in "
             f"{cr.requests} request(s)")


def check_conclusion(verdict: str, fail_on: str) -> str:
    """The check run's conclusion: what the step's exit status says (``fail-on``), since a
    required check blocks a merge only on ``failure``. ``failure`` when the step fails;
    otherwise ``success`` for a pass, and ``neutral`` for any other verdict the step lets
    pass (a warn; a fail or error under ``fail-on: never``)."""
    if exit_code(verdict, fail_on) != ExitCode.OK:
        return "failure"
    return "success" if verdict == "pass" else "neutral"


def _annotated_trace_files(step: Step, inputs: Inputs, event: Event, results: Results,
                           client: GitHubClient) -> set[str]:
    """The trace files whose lines the check run annotates too (``trace-annotations``):
    all of them, none, or (``changed``) those the pull request changes — Code Scanning
    shows an alert on a pull request only at lines of its diff, and the primary location
    of every finding is its policy line."""
    if inputs.trace_annotations == "none":
        return set()
    files = {v.trace.file for v in results.findings if v.trace is not None}
    if inputs.trace_annotations == "all" or not files:
        return files
    if event.pr_number is None:
        return set()  # no diff to be part of
    try:
        changed = client.pull_request_files(event.pr_number)
    except ApiError as exc:  # the check run is still made, annotated at the policy lines
        step.log(f"the check run annotates the policy lines only: could not list the pull "
                 f"request's files ({exc}{exc.needs('pull-requests: read')})")
        return set()
    return files & changed


def _annotations(step: Step, results: Results, trace_files: set[str]) -> list[dict[str, Any]]:
    """The check run's annotations: the first input errors (what could not be checked:
    they make the verdict error, and only the first 500 annotations are sent), then each
    finding, most severe first, at its policy line (and at its trace line when its trace
    file is one of ``trace_files``), then the other input errors."""
    errors = [check_annotation(e.file, e.line or 1, "error", e.rule, step.redact(e.message),
                               None) for e in results.input_errors]
    found: list[dict[str, Any]] = []
    for v in by_severity(results.findings):
        found.append(check_annotation(v.config.file, v.config.line, v.severity, v.rule,
                                      step.redact(v.message), _trace_text(v, step.redact)))
        if v.trace is not None and v.trace.file in trace_files:
            found.append(trace_annotation(v, step.redact))
    return input_errors_first(errors, found)


def _explain(call: str, exc: ApiError, permission: str, event: Event, extra: str = "") -> str:
    said = f"{exc.status} {exc.message}".strip() if exc.status else exc.message
    if exc.rate_limited:
        after = retry_after(exc.headers)
        wait = "" if after is None else f", GitHub asked to wait {after:.0f} s"
        return (f"skipped {call}: the GitHub API's rate limit was hit (not a missing "
                f"permission): the retries within the run's bounds did not get through{wait}; "
                f"re-run the job later, and spread out the jobs and workflows that share the "
                f"token; {RATE_LIMIT_HELP}. GitHub said: {said}")
    if exc.denied:
        fork = " (this pull request comes from a fork)" if event.fork else ""
        return (f"skipped {call}: the token has no {permission} permission{extra} (fork pull "
                f"requests get a read-only token){fork}; {FORK_HELP}. GitHub said: {said}")
    return f"skipped {call}: GitHub said: {said}"


def _trace_text(v: Finding, redact: Redactor) -> str | None:
    t = v.trace
    return None if t is None else redact(f"trace {t.trace_id} at {t.file}:{t.line}")


def check_annotation(path: str, line: int, severity: str, rule: str, message: str,
                     details: str | None) -> dict[str, Any]:
    """One check-run annotation (its message and details cut to GitHub's limits)."""
    level = {"error": "failure", "warning": "warning"}.get(severity, "notice")
    a: dict[str, Any] = {"path": path, "start_line": max(1, line), "end_line": max(1, line),
                         "annotation_level": level, "message": _utf8_cut(message),
                         "title": f"agent-eval: {rule}"[:255]}
    if details:
        a["raw_details"] = _utf8_cut(details)
    return a


ANNOTATION_BYTES = 60_000  # of a message or raw_details (GitHub: 64 KB each)


def _utf8_cut(text: str, limit: int = ANNOTATION_BYTES) -> str:
    """``text`` cut to ``limit`` bytes of UTF-8, at a character's boundary."""
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore")


def trace_annotation(v: Finding, redact: Redactor) -> dict[str, Any]:
    """A finding's second check-run annotation, at the trace line that broke the rule."""
    assert v.trace is not None
    where = f"{v.config.file}:{v.config.line}"
    return check_annotation(v.trace.file, v.trace.line, v.severity, v.rule,
                            redact(f"{v.message} (rule at {where})"),
                            redact(f"trace {v.trace.trace_id}"))
