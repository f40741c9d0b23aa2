"""``agent-eval action``: one run of the GitHub Action (README.md "GitHub Action").

Everything comes from the environment a runner sets: the inputs as ``INPUT_<NAME>``
(dashes kept: ``INPUT_GITHUB-TOKEN``), the event from ``GITHUB_EVENT_PATH``, the API from
``GITHUB_API_URL``. The same command runs inside the container and outside it.

The order: event, ``safe.directory``, working directory, config, traces (globs or an
artifact of this run), evaluation, the files in ``output-dir``, the job summary, the step
outputs, workflow annotations, then the GitHub calls (SARIF upload, the pull request
comment, the check run). A GitHub call that fails never changes the verdict or the exit
code: a call the token may not make (fork pull requests, a missing permission) is
skipped with one explanation, and the run goes on.

A run that cannot finish (bad inputs, a config error, a baseline that was asked for and
cannot be had, an output folder that cannot be written, an internal error) always ends
the same way (:func:`_stop`): ``::error`` lines, the ``verdict`` output ``error``, a job
summary that says why, exit 2. The token is redacted from everything printed or written
(:mod:`agent_eval.github.secrets`); nothing is written outside the workspace and the
runner's temp folder, nor through a link the repository holds
(:mod:`agent_eval.github.workspace`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
import traceback
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent_eval.api import load_suite, suite_sources
from agent_eval.baseline import _SEARCH, BaselineError, Found, find_for_action, for_action
from agent_eval.commands._options import output_dir
from agent_eval.commands.run import write_outputs
from agent_eval.engine import evaluate_files
from agent_eval.errors import ConfigError, ExitCode, InputError
from agent_eval.github import workflow
from agent_eval.github.client import API_DEADLINE, DEFAULT_API_URL, ApiError, GitHubClient
from agent_eval.github.event import Event, load_event
from agent_eval.github.ownership import give_back
from agent_eval.github.secrets import Redactor, token_problem
from agent_eval.github.workspace import (
    OutsideWorkspace,
    allowed_roots,
    confine,
    fresh_dir,
    no_linked_files,
)
from agent_eval.judge.run import base_outputs
from agent_eval.renderers import RENDERERS, RenderContext, console, markdown
from agent_eval.results import Results, exit_code
from agent_eval.rule_ids import INPUT_NO_TRACES
from agent_eval.sections import Comparison

FORMATS = ["sarif", "junit", "markdown", "html"]  # besides results.json: every file format
SUMMARY_CHARS = 250_000  # the job summary's markdown (under 1 MiB even at 4 bytes a char)
MAX_CHECK_ANNOTATIONS = 500  # ten requests of 50
BASELINES = ("auto", "git", "artifact", "file", "none")
TRACE_ANNOTATIONS = ("changed", "all", "none")
FORK_HELP = "see README 'Fork pull requests'"
DEADLINE_ENV = "AGENT_EVAL_API_DEADLINE"  # seconds for all GitHub API calls of a run
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
_RANK = {"error": 0, "warning": 1, "note": 2}


# --------------------------------------------------------------------------- inputs
@dataclass
class Inputs:
    config: str | None = None
    traces: list[str] | None = None
    artifact: str | None = None
    baseline: str = "auto"
    baseline_artifact: str = "agent-eval-results"
    baseline_file: str | None = None
    github_token: str | None = None
    upload_sarif: bool = True
    sarif_category: str | None = None
    comment: str = "auto"  # auto | true | false
    comment_key: str | None = None  # tells several comments of one suite apart
    check_run: bool = False
    trace_annotations: str = "changed"  # changed | all | none
    fail_on: str = "fail"
    output_dir: str | None = None
    working_directory: str | None = None


def _input(env: Mapping[str, str], name: str) -> str | None:
    """``INPUT_<NAME>`` as the runner sets it (dashes kept), or with underscores."""
    key = "INPUT_" + name.replace(" ", "_").upper()
    for k in (key, key.replace("-", "_")):
        value = env.get(k)
        if value is not None and value.strip():
            return value.strip()
    return None


def read_inputs(env: Mapping[str, str]) -> tuple[Inputs, list[str]]:
    problems: list[str] = []
    inp = Inputs()

    def boolean(name: str, default: bool) -> bool:
        raw = _input(env, name)
        if raw is None:
            return default
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        problems.append(f"input {name}: {raw!r} is not true or false")
        return default

    def choice(name: str, options: tuple[str, ...], default: str) -> str:
        raw = _input(env, name)
        if raw is None:
            return default
        if raw.lower() not in options:
            problems.append(f"input {name}: {raw!r} is not one of {', '.join(options)}")
            return default
        return raw.lower()

    inp.config = _input(env, "config")
    traces = _input(env, "traces")
    if traces is not None:
        inp.traces = [g.strip() for line in traces.splitlines() for g in line.split(",")
                      if g.strip()]
    inp.artifact = _input(env, "artifact")
    inp.baseline = choice("baseline", BASELINES, "auto")
    inp.baseline_artifact = _input(env, "baseline-artifact") or inp.baseline_artifact
    inp.baseline_file = _input(env, "baseline-file")
    inp.github_token = _input(env, "github-token")
    inp.upload_sarif = boolean("upload-sarif", True)
    inp.sarif_category = _input(env, "sarif-category")
    raw_comment = _input(env, "comment")
    if raw_comment is None or raw_comment.lower() == "auto":
        inp.comment = "auto"
    elif raw_comment.lower() in _TRUE | _FALSE:
        inp.comment = "true" if raw_comment.lower() in _TRUE else "false"
    else:
        problems.append(f"input comment: {raw_comment!r} is not auto, true or false")
    inp.comment_key = _input(env, "comment-key")
    inp.check_run = boolean("check-run", False)
    inp.trace_annotations = choice("trace-annotations", TRACE_ANNOTATIONS, "changed")
    inp.fail_on = choice("fail-on", ("fail", "warn", "never"), "fail")
    inp.output_dir = _input(env, "output-dir")
    inp.working_directory = _input(env, "working-directory")
    return inp, problems


# ----------------------------------------------------------------------- the run
@dataclass
class Run:
    """What one run has to say, besides its files."""

    env: Mapping[str, str]
    out: Any = field(default=sys.stdout)
    skipped: list[str] = field(default_factory=list)  # each skipped call, explained once
    redact: Redactor = field(default_factory=Redactor)  # the token, out of every line

    def say(self, text: str) -> None:
        print(self.redact(text), file=self.out, flush=True)

    def log(self, text: str) -> None:
        print(self.redact(f"agent-eval: {text}"), file=sys.stderr, flush=True)

    def skip(self, text: str) -> None:
        self.skipped.append(self.redact(text))
        self.say(workflow.command("warning", text, title="agent-eval"))

    def summary(self, text: str, note: str = "") -> None:
        """Append to the job summary (when there is one), the token redacted."""
        path = self.env.get("GITHUB_STEP_SUMMARY")
        if path:
            workflow.append_summary(path, self.redact(text), note=self.redact(note))

    def outputs(self, values: Mapping[str, str]) -> None:
        path = self.env.get("GITHUB_OUTPUT")
        if path:
            workflow.write_outputs(path, {k: self.redact(v) for k, v in values.items()})


def main(args: argparse.Namespace) -> ExitCode:
    started = time.time()
    try:
        return run(os.environ)
    finally:
        give_back_workspace(os.environ, started)


def give_back_workspace(env: Mapping[str, str], started: float) -> None:
    """What the run wrote in the workspace goes back to the workspace's owner (the
    container runs as root; github/ownership.py). Never fails the run."""
    workspace = env.get("GITHUB_WORKSPACE")
    if env.get("GITHUB_ACTIONS") != "true" or not workspace:
        return
    try:
        give_back(Path(workspace), started, log=lambda m: print(f"agent-eval: {m}",
                                                                 file=sys.stderr, flush=True))
    except Exception as exc:  # a bug here must not hide the verdict
        print(f"agent-eval: could not give the files back to the workspace's owner: "
              f"{type(exc).__name__}: {exc}", file=sys.stderr, flush=True)


def run(env: Mapping[str, str], out: Any = None) -> ExitCode:
    """One run of the action; whatever happens, it ends through :func:`_stop` or with the
    verdict's exit code, and the token is in none of its output."""
    r = Run(env, out or sys.stdout)
    try:
        return _run(r, env)
    except Exception as exc:  # a bug: still the stop path (outputs, summary), exit 2
        sys.stderr.write(r.redact(traceback.format_exc()))
        return _stop(r, [f"internal error: {type(exc).__name__}: {exc} (this is a bug in "
                         "agent-eval; please report it with the traceback in the log)"])


def _token(r: Run, inputs: Inputs, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The token to call GitHub with, or None and why; every piece of it is redacted
    from now on (and masked in the log by the runner)."""
    token = inputs.github_token or env.get("GITHUB_TOKEN") or None
    if token is None:
        return None, None
    r.redact.add(token)
    if env.get("GITHUB_ACTIONS") == "true":  # the runner hides these lines and the values
        for piece in r.redact.maskable():
            print(f"::add-mask::{piece}", file=r.out, flush=True)
    problem = token_problem(token)
    return (None, problem) if problem else (token, None)


def _deadline(env: Mapping[str, str]) -> float:
    raw = (env.get(DEADLINE_ENV) or "").strip()
    if not raw:
        return API_DEADLINE
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise ValueError(f"{DEADLINE_ENV}={raw[:40]!r} is not a positive number of seconds")
    return value


def _run(r: Run, env: Mapping[str, str]) -> ExitCode:
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    inputs, problems = read_inputs(env)
    token, token_why = _token(r, inputs, env)
    deadline = API_DEADLINE
    try:
        deadline = _deadline(env)
    except ValueError as exc:
        problems.append(str(exc))
    if problems:
        return _stop(r, problems)
    event = load_event(env)
    for p in event.problems:
        r.say(workflow.command("warning", p, title="agent-eval"))
    workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
    roots = allowed_roots(workspace, env)
    if env.get("GITHUB_ACTIONS") == "true":  # not on a developer's machine
        mark_safe_directory(workspace, r)
    workdir = workspace / inputs.working_directory if inputs.working_directory else (
        workspace if env.get("GITHUB_WORKSPACE") else Path.cwd())
    if not workdir.is_dir():
        return _stop(r, [f"working-directory {inputs.working_directory!r} is not a folder "
                         f"in {workspace}"])
    try:
        workdir = confine(workdir, [workspace], "working-directory")
    except OutsideWorkspace as exc:
        return _stop(r, [str(exc)])
    os.chdir(workdir)

    client = None
    if token and event.repository:
        client = GitHubClient(token, event.repository,
                              env.get("GITHUB_API_URL") or DEFAULT_API_URL,
                              deadline=deadline, log=r.log)

    try:
        suite = load_suite(inputs.config)
    except ConfigError as exc:
        return _stop(r, exc.problems)
    where: dict[str, Any] = {
        "kind": inputs.baseline, "event": event, "suite": suite, "workdir": workdir,
        "client": client, "env": env, "traces": inputs.traces,
        "traces_from_artifact": bool(inputs.artifact), "baseline_file": inputs.baseline_file,
        "baseline_artifact": inputs.baseline_artifact, "log": r.log,
        "tmp_root": _runner_temp(env)}
    found: Found | None = _SEARCH
    if suite.judge is not None and suite.judge.has_pairwise:
        # pairwise judge checks compare with the base branch's outputs: find it first
        try:
            found = find_for_action(**where)
        except BaselineError as exc:
            return _stop(r, [str(exc) + ("" if client or not token_why else f" ({token_why})")])
        base = found.results if found is not None else None
        suite.judge.context.base_outputs = base_outputs(base)
        if found is not None and found.source.get("sha"):
            suite.judge.context.base_hint = f"--baseline-ref {found.source['sha']}"
    try:
        results = _evaluate(r, inputs, event, suite, workdir, client)
    except ConfigError as exc:
        return _stop(r, exc.problems)
    except (ApiError, ValueError, OSError) as exc:
        return _stop(r, [f"could not get the traces from artifact {inputs.artifact!r}: {exc}"
                         + _permission_hint(exc, "actions: read")])

    try:
        for_action(results, **where, found=found)
    except BaselineError as exc:
        return _stop(r, [str(exc) + ("" if client or not token_why else f" ({token_why})")])

    # ------------------------------------------------------------------ files
    checked_out = git_head(workspace)
    server = (env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    repo_url = f"{server}/{event.repository}" if event.repository else None
    run_url = (f"{repo_url}/actions/runs/{event.run_id}"
               if repo_url and event.run_id is not None else None)
    ctx = RenderContext.for_root(suite.root, repo_url=repo_url,
                                 sha=checked_out or event.sha or event.head_sha,
                                 run_url=run_url, sarif_category=inputs.sarif_category)
    folder = Path(inputs.output_dir or "agent-eval-results")  # as named in a write error
    try:
        folder = output_dir(inputs.output_dir, suite)  # inside the repository (security.md)
        folder, sarif_text, comment_text = _write_files(results, folder, ctx, roots)
    except OutsideWorkspace as exc:
        return _stop(r, [str(exc)])
    except ConfigError as exc:  # output.dir outside the repository, or through a link
        return _stop(r, exc.problems)
    except OSError as exc:  # read-only, full, a file where the folder should be
        return _stop(r, [f"cannot write the output files to {_relative(folder, workspace)}: "
                         f"{exc.strerror or exc}" + (f" ({exc.filename})" if exc.filename
                                                     else "")])
    comment_text = r.redact(comment_text)
    sarif_path = folder / RENDERERS["sarif"].filename

    # the log: the report, fenced from workflow commands (trace text is untrusted)
    stop = f"agent-eval-{uuid.uuid4().hex}"
    r.say(f"::stop-commands::{stop}")
    r.say(console.render(results, color=False).rstrip("\n"))
    r.say(f"::{stop}::")

    r.summary(markdown.render(results, ctx, max_chars=SUMMARY_CHARS),
              note=_where_files(folder, workspace))
    values = step_outputs(results, folder / RENDERERS["json"].filename, sarif_path, workspace)
    r.outputs(values)

    annotations = [workflow.finding_annotation(v) for v in _by_severity(results)]
    annotations += [workflow.input_error_annotation(e) for e in results.input_errors]
    for line in workflow.annotation_lines(
            annotations, f"see the job summary or {values['sarif-file']}"):
        r.say(line)

    # ----------------------------------------------------------- GitHub calls
    comment_url = ""
    try:
        comment_url = _publish(r, inputs, event, results, client, sarif_text, comment_text,
                               workspace, checked_out, started, run_url, token_why)
    except Exception as exc:  # a bug here must not hide the verdict
        r.skip(f"publishing to GitHub stopped on an internal error: {type(exc).__name__}: "
               f"{exc} (the verdict and the files are not affected)")
    finally:
        if client is not None:
            client.close()
    r.outputs({"comment-url": comment_url})
    if r.skipped:
        notes = "\n".join(f"- {markdown.md_text(s)}" for s in r.skipped)
        r.summary(f"\n### agent-eval: skipped GitHub calls\n\n{notes}\n")

    code = exit_code(results.verdict, inputs.fail_on)
    c = results.counts
    r.log(f"verdict {results.verdict}: {c.get('violations', 0)} violation(s), "
          f"{c.get('input_errors', 0)} input error(s) in {c.get('traces', 0)} trace(s); "
          f"fail-on {inputs.fail_on} → exit {code}")
    return code


def _runner_temp(env: Mapping[str, str]) -> Path | None:
    """The runner's temp folder (``RUNNER_TEMP``), for work that stays out of the
    workspace (the base commit's worktree, a baseline artifact's zip)."""
    temp = env.get("RUNNER_TEMP")
    return Path(temp) if temp and Path(temp).is_dir() else None


def _write_files(results: Results, folder: Path, ctx: RenderContext, roots: list[Path]
                 ) -> tuple[Path, str, str]:
    """Write every output file into ``folder`` (confined to ``roots``, no file a link):
    the folder as written, the SARIF text (its category from ``ctx``) and the comment
    text."""
    folder = confine(folder, roots, "the output folder")
    names = [RENDERERS[f].filename for f in ("json", *FORMATS)]
    no_linked_files(folder, names)
    write_outputs(results, FORMATS, folder, ctx)
    sarif_path = folder / RENDERERS["sarif"].filename
    sarif_text = sarif_path.read_text(encoding="utf-8")
    comment_text = (folder / RENDERERS["markdown"].filename).read_text(encoding="utf-8")
    return folder, sarif_text, comment_text


def _evaluate(r: Run, inputs: Inputs, event: Event, suite: Any, workdir: Path,
              client: GitHubClient | None) -> Results:
    if inputs.artifact:
        run_id = event.artifact_run_id
        if client is None:
            raise ValueError("no github-token (or GITHUB_REPOSITORY) to download it with")
        if run_id is None:
            raise ValueError("the run id is unknown (GITHUB_RUN_ID)")
        dest = fresh_dir(workdir, ".agent-eval", "artifacts", _safe_name(inputs.artifact))
        got = client.download_artifact(run_id, inputs.artifact, dest)
        r.log(f"artifact {inputs.artifact!r} of run {run_id}: {len(got)} file(s) in {dest}")
        files, errors = suite_sources(suite, inputs.traces or ["**/*"], base=dest)
    else:
        files, errors = suite_sources(suite, inputs.traces, base=workdir)
    return evaluate_files(suite, files, [_outside_hint(e, r.env) for e in errors])


OUTSIDE_HINT = ("; the action's container sees only the workspace ({workspace}), not "
                "$RUNNER_TEMP, $HOME or other paths of the runner: write the traces inside "
                "the workspace, upload them as an artifact (input `artifact`), or use the "
                "composite action org/agent-eval/python@v1, which runs on the runner itself "
                "(README 'GitHub Action')")


def _outside_hint(error: Any, env: Mapping[str, str]) -> Any:
    """A "no trace file matches" error in the action, with the hint that traces outside
    the workspace cannot be seen from the container."""
    workspace = env.get("GITHUB_WORKSPACE")
    if not isinstance(error, InputError) or error.rule != INPUT_NO_TRACES.id or not workspace:
        return error
    return replace(error, message=error.message + OUTSIDE_HINT.format(workspace=workspace))


def _publish(r: Run, inputs: Inputs, event: Event, results: Results,
             client: GitHubClient | None, sarif_text: str, comment_text: str,
             workspace: Path, checked_out: str | None, started: str,
             run_url: str | None, token_why: str | None = None) -> str:
    wanted = []
    if inputs.upload_sarif:
        wanted.append("the SARIF upload")
    if inputs.comment == "true" or (inputs.comment == "auto" and event.is_pull_request):
        wanted.append("the PR comment")
    if inputs.check_run:
        wanted.append("the check run")
    if client is None:
        if wanted:
            why = token_why or ("no github-token" if event.repository
                                else "GITHUB_REPOSITORY is not set")
            r.skip(f"skipped {', '.join(wanted)}: {why}")
        return ""

    if (event.name == "workflow_run" and event.pr_number is None and event.head_sha
            and event.triggering_event in ("pull_request", "pull_request_target")):
        try:
            event.pr_number = client.find_pull_request(event.head_repository, event.head_ref,
                                                       event.head_sha)
        except ApiError as exc:
            r.log(f"could not look up the pull request of {event.head_sha}: {exc}")

    if inputs.upload_sarif:
        _upload_sarif(r, event, client, sarif_text, workspace, checked_out, started)

    comment_url = ""
    if inputs.comment == "true" or (inputs.comment == "auto" and event.is_pull_request):
        if event.pr_number is None:
            r.skip(f"skipped the PR comment: this run is not for a pull request "
                   f"(event {event.name or 'unknown'})")
        else:
            try:
                marker = comment_marker(results.suite, inputs.comment_key)
                c = client.upsert_comment(event.pr_number, with_marker(comment_text, marker),
                                          marker)
                comment_url = c.url
                r.log(f"{'created' if c.created else 'updated'} the PR comment {c.url}")
            except ApiError as exc:
                r.skip(_explain("the PR comment", exc, "pull-requests: write", event))

    if inputs.check_run:
        sha = event.check_sha
        mismatch = event.not_at_head(checked_out)
        if mismatch:
            r.skip(f"skipped the check run: {mismatch}")
        elif not sha:
            r.skip("skipped the check run: the commit is unknown (GITHUB_SHA)")
        else:
            traces = _annotated_trace_files(r, inputs, event, results, client)
            _check_run(r, event, results, client, comment_text, sha, run_url, traces)
    return comment_url


def _upload_sarif(r: Run, event: Event, client: GitHubClient, sarif_text: str,
                  workspace: Path, checked_out: str | None, started: str) -> None:
    target = event.sarif_target(checked_out)
    if target is None:
        r.skip(f"skipped the SARIF upload: {event.no_target_reason(checked_out)}")
        return
    try:
        up = client.upload_sarif(sarif_text, commit_sha=target.sha, ref=target.ref,
                                 checkout_uri=workspace.as_uri(), tool_name="agent-eval",
                                 started_at=started)
    except ApiError as exc:
        r.skip(_explain("the SARIF upload", exc, "security-events: write", event,
                        " (and Code Scanning must be available for the repository)"))
        return
    if up.status == "complete":
        r.log(f"SARIF upload {up.id} to {target.ref} ({target.sha[:12]}) processed")
    elif up.status == "failed":
        errors = "; ".join(up.errors) or "no reason given"
        r.say(workflow.command("error", f"Code Scanning could not process the SARIF upload "
                               f"{up.id}: {errors}", title="agent-eval: SARIF upload"))
    else:
        r.log(f"SARIF upload {up.id} to {target.ref} is still being processed after "
              f"{up.waited:.0f} s; its alerts appear when GitHub is done")


def _annotated_trace_files(r: Run, inputs: Inputs, event: Event, results: Results,
                           client: GitHubClient) -> set[str] | None:
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
        r.log(f"the check run annotates the policy lines only: could not list the pull "
              f"request's files ({r.redact(str(exc))}; the token needs pull-requests: read)")
        return set()
    return files & changed


def _check_run(r: Run, event: Event, results: Results, client: GitHubClient,
               summary: str, sha: str, run_url: str | None,
               trace_files: set[str] | None = None) -> None:
    found = _by_severity(results)
    annotations = []
    for v in found:
        annotations.append(check_annotation(v.config.file, v.config.line, v.severity, v.rule,
                                            r.redact(v.message), _trace_text(v, r.redact)))
        if v.trace is not None and v.trace.file in (trace_files or ()):
            annotations.append(trace_annotation(v, r.redact))
    annotations += [check_annotation(e.file, e.line or 1, "error", e.rule,
                                     r.redact(e.message), None)
                    for e in results.input_errors]
    total = len(annotations)
    annotations = annotations[:MAX_CHECK_ANNOTATIONS]
    c = results.counts
    title = (f"{results.verdict}: {c.get('violations', 0)} violation(s), "
             f"{c.get('input_errors', 0)} input error(s)")
    if total > len(annotations):
        title += f" ({len(annotations)} of {total} annotated)"
    conclusion = {"pass": "success", "warn": "neutral"}.get(results.verdict, "failure")
    try:
        cr = client.create_check_run(name=f"agent-eval ({results.suite})", head_sha=sha,
                                     conclusion=conclusion, title=title, summary=summary,
                                     annotations=annotations, details_url=run_url)
        r.log(f"check run {cr.id} with {len(annotations)} annotation(s) in "
              f"{cr.requests} request(s)")
    except ApiError as exc:
        r.skip(_explain("the check run", exc, "checks: write", event))


# ------------------------------------------------------------------------ helpers
def _stop(r: Run, problems: list[str]) -> ExitCode:
    """A run that cannot evaluate: say why (annotations, summary, outputs), exit 2. A
    summary or outputs file that cannot be written is said in the log, not raised."""
    for p in problems:
        r.say(workflow.command("error", p, title="agent-eval"))
    lines = "\n".join(f"- {markdown.md_text(r.redact(p))}" for p in problems)
    try:
        r.summary(f"## 💥 agent-eval could not run\n\n{lines}\n")
    except OSError as exc:
        r.log(f"could not write the job summary: {exc.strerror or exc}")
    try:
        r.outputs({"verdict": "error"})
    except OSError as exc:
        r.log(f"could not write the step outputs: {exc.strerror or exc}")
    return ExitCode.ERROR


def _explain(call: str, exc: ApiError, permission: str, event: Event, extra: str = "") -> str:
    said = f"{exc.status} {exc.message}".strip() if exc.status else exc.message
    if exc.denied:
        fork = " (this pull request comes from a fork)" if event.fork else ""
        return (f"skipped {call}: the token has no {permission} permission{extra} (fork pull "
                f"requests get a read-only token){fork}; {FORK_HELP}. GitHub said: {said}")
    return f"skipped {call}: GitHub said: {said}"


def _permission_hint(exc: Exception, permission: str) -> str:
    if isinstance(exc, ApiError) and exc.denied:
        return f" (the token needs {permission})"
    return ""


def _safe_name(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name).strip(".") or "_"


def _by_severity(results: Results) -> list[Any]:
    """Every finding (rule violations, scenario findings, missed criteria), most severe
    first."""
    return sorted(results.findings, key=lambda v: _RANK.get(v.severity, 3))


def _trace_text(v: Any, redact: Redactor) -> str | None:
    t = v.trace
    return None if t is None else redact(f"trace {t.trace_id} at {t.file}:{t.line}")


def check_annotation(path: str, line: int, severity: str, rule: str, message: str,
                     details: str | None) -> dict[str, Any]:
    level = {"error": "failure", "warning": "warning"}.get(severity, "notice")
    a: dict[str, Any] = {"path": path, "start_line": max(1, line), "end_line": max(1, line),
                         "annotation_level": level, "message": message[:60_000],
                         "title": f"agent-eval: {rule}"[:255]}
    if details:
        a["raw_details"] = details[:60_000]
    return a


def trace_annotation(v: Any, redact: Redactor) -> dict[str, Any]:
    """A finding's second check-run annotation, at the trace line that broke the rule."""
    where = f"{v.config.file}:{v.config.line}"
    return check_annotation(v.trace.file, v.trace.line, v.severity, v.rule,
                            redact(f"{v.message} (rule at {where})"),
                            redact(f"trace {v.trace.trace_id}"))


def comment_marker(suite: str, key: str | None = None) -> str:
    """The hidden first line that finds the comment again: one comment per suite, or per
    suite and ``comment-key`` (matrix jobs, several jobs on one suite)."""
    name = markdown.marker(suite)
    if key:
        name += f" key={markdown.marker(key)}"
    return f"<!-- agent-eval:{name} -->"


def with_marker(comment: str, marker: str) -> str:
    """The comment with ``marker`` as its first line, in place of the summary's own."""
    first, _, rest = comment.partition("\n")
    if first.startswith("<!-- agent-eval:") and first.endswith("-->"):
        return f"{marker}\n{rest}"
    return f"{marker}\n{comment}"


def step_outputs(results: Results, results_file: Path, sarif_file: Path,
                 workspace: Path) -> dict[str, str]:
    c = results.counts
    rate = results.pass_rate()
    score = results.metrics.get("composite")  # the suite's score, 0 to 1 (docs/scenarios.md)
    if not isinstance(score, int | float):
        score = None
    compared = results.baseline if isinstance(results.baseline, Comparison) else None
    new = None if compared is None else compared.new_violations
    regressions = None if compared is None else compared.regressions
    return {
        "verdict": results.verdict,
        "pass-rate": "" if rate is None else str(round(float(rate), 4)),
        "score": "" if score is None else str(round(float(score), 4)),
        "violations": str(c.get("violations", 0)),
        # without a baseline every violation is new and nothing has regressed
        "new-violations": str(new if isinstance(new, int) else c.get("violations", 0)),
        "regressions": str(regressions if isinstance(regressions, int) else 0),
        "results-file": _relative(results_file, workspace),
        "sarif-file": _relative(sarif_file, workspace),
    }


def _relative(path: Path, workspace: Path) -> str:
    """A path as later steps of the job see it: relative to the workspace."""
    p = path.resolve()
    try:
        return p.relative_to(workspace).as_posix()
    except ValueError:
        return str(p)


def _where_files(folder: Path, workspace: Path) -> str:
    return f"The whole report is in {_relative(folder, workspace)}/ (summary.md, results.json)."


def mark_safe_directory(workspace: Path, r: Run) -> None:
    """``git config --global --add safe.directory WORKSPACE``: the container runs as
    another user than the one that checked the repository out. Never fails."""
    git = shutil.which("git")
    if git is None:
        r.log("git is not installed; not marking the workspace as a safe.directory")
        return
    try:
        got = subprocess.run([git, "config", "--global", "--get-all", "safe.directory"],
                             capture_output=True, text=True, timeout=20, check=False)
        if str(workspace) in got.stdout.splitlines() or "*" in got.stdout.splitlines():
            return
        done = subprocess.run([git, "config", "--global", "--add", "safe.directory",
                               str(workspace)], capture_output=True, text=True, timeout=20,
                              check=False)
        if done.returncode != 0:
            r.log(f"could not mark {workspace} as a git safe.directory: "
                  f"{done.stderr.strip() or done.returncode}")
    except (OSError, subprocess.SubprocessError) as exc:
        r.log(f"could not mark {workspace} as a git safe.directory: {exc}")


def git_head(workspace: Path) -> str | None:
    """The commit checked out in the workspace, if it is a git work tree."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        got = subprocess.run([git, "-C", str(workspace), "rev-parse", "--verify", "HEAD"],
                             capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = got.stdout.strip()
    return sha if got.returncode == 0 and len(sha) in (40, 64) else None
