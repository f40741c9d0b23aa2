"""``agent-eval action``: one run of the GitHub Action (README.md "GitHub Action").

Everything comes from the environment a runner sets: the inputs as ``INPUT_<NAME>``
(:mod:`agent_eval.github.inputs`), the event from ``GITHUB_EVENT_PATH``, the API from
``GITHUB_API_URL``. The same command runs inside the container and outside it.

The order: event, ``safe.directory``, working directory, config, traces (globs or an
artifact of this run), evaluation, the files in ``output-dir``, the job summary, the step
outputs, workflow annotations, then the GitHub calls (:mod:`agent_eval.github.publish`:
the SARIF upload, the pull request comment, the check run), which never change the
verdict or the exit code.

A run that cannot finish (bad inputs, a config error, a baseline that was asked for and
cannot be had, an output folder that cannot be written, an internal error) raises an
:class:`~agent_eval.errors.AgentEvalError` and always ends the same way (:func:`_stop`):
``::error`` lines, the ``verdict`` output ``error``, a job summary that says why, exit 2.
The token is redacted from everything printed or written
(:mod:`agent_eval.github.secrets`); nothing is written outside the workspace and the
runner's temp folder, nor through a link the repository holds
(:mod:`agent_eval.github.workspace`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from agent_eval._version import REPOSITORY
from agent_eval.api import load_suite, suite_sources
from agent_eval.baseline import (
    BaselineError,
    BaselineSearch,
    Found,
    find_for_action,
    for_action,
    judge_store_for_action,
)
from agent_eval.commands._options import output_dir
from agent_eval.commands.run import write_outputs
from agent_eval.engine import evaluate_files
from agent_eval.errors import AgentEvalError, ConfigError, ExitCode, InputError
from agent_eval.findings import by_severity, count_violations
from agent_eval.github import workflow
from agent_eval.github.client import DEFAULT_API_URL, ApiError, GitHubClient
from agent_eval.github.event import Event, load_event
from agent_eval.github.inputs import Inputs, read_inputs, token
from agent_eval.github.ownership import give_back
from agent_eval.github.publish import Report, find_pull_request, input_errors_first, publish
from agent_eval.github.step import Step, relative, step_outputs
from agent_eval.github.workspace import (
    allowed_roots,
    confine,
    fresh_dir,
    git_head,
    leads_out,
    mark_safe_directory,
    no_linked_files,
)
from agent_eval.judge.run import base_outputs
from agent_eval.readers.base import ReadItem
from agent_eval.renderers import RENDERERS, RenderContext, console, markdown
from agent_eval.results import Results, exit_code
from agent_eval.rule_ids import INPUT_NO_TRACES
from agent_eval.safetext import log_block, one_line
from agent_eval.suite import CONFIG_NAMES, Suite, find_config

FORMATS = ["sarif", "junit", "markdown", "html"]  # besides results.json: every file format
SUMMARY_CHARS = 250_000  # the job summary's markdown (under 1 MiB even at 4 bytes a char)
OUTSIDE_HINT = ("; the action's container sees only the workspace ({workspace}), not "
                "$RUNNER_TEMP, $HOME or other paths of the runner: write the traces inside "
                "the workspace, upload them as an artifact (input `artifact`), or use the "
                f"composite action {REPOSITORY}/python@v1, which runs on the runner itself "
                "(README 'GitHub Action')")


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


def run(env: Mapping[str, str], out: TextIO | None = None) -> ExitCode:
    """One run of the action; whatever happens, it ends through :func:`_stop` or with the
    verdict's exit code, and the token is in none of its output."""
    step = Step(env, out or sys.stdout)
    try:
        return _run(step)
    except AgentEvalError as exc:  # the run cannot finish: say why
        return _stop(step, exc.problems)
    except Exception as exc:  # a bug: still the stop path (outputs, summary), exit 2
        # escaped, each line behind a bar: the message may quote a trace or a suite (a
        # "\n::add-mask::" in it was a workflow command of the job)
        sys.stderr.write(log_block(step.redact(traceback.format_exc().rstrip("\n"))) + "\n")
        return _stop(step, [f"internal error: {type(exc).__name__}: {exc} (this is a bug in "
                            "agent-eval; please report it with the traceback in the log)"])


@dataclass(frozen=True)
class _Setup:
    """What a run works with, once its inputs, event and folders are checked."""

    inputs: Inputs
    event: Event
    workspace: Path
    roots: list[Path]  # where the run may write: the workspace and the runner's temp
    workdir: Path  # the working directory (the run has changed to it)
    client: GitHubClient | None  # None without a usable token or repository
    token_why: str | None  # why a token that was given is not used


def _found_config() -> Path:
    """The suite file found in the working directory (the run has changed to it); none is
    a config error that says what to set: the action has inputs, not run's --config."""
    try:
        return find_config()
    except ConfigError:
        raise ConfigError([f"{Path.cwd()}: no config found (looked for "
                           f"{', '.join(CONFIG_NAMES)}); set the action's `config` input "
                           "(the suite file) or its `working-directory` (the folder "
                           "holding it)"]) from None


def _run(step: Step) -> ExitCode:
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    s = _setup(step)
    suite = load_suite(_suite_file(s))
    _no_live(suite)
    if s.inputs.baseline == "file" and s.inputs.baseline_file \
            and leads_out(s.workdir / s.inputs.baseline_file, s.workspace):
        raise AgentEvalError(f"baseline-file {s.inputs.baseline_file}: the file is a symbolic "
                             "link (or in a folder that is one) leading outside the "
                             "workspace; agent-eval does not read a baseline through a link "
                             "out of the repository: remove the link from the repository")
    find_pull_request(step, s.event, s.client)  # (workflow_run for a fork) before the baseline
    search = BaselineSearch(
        kind=s.inputs.baseline, event=s.event, suite=suite, workdir=s.workdir,
        client=s.client, env=step.env, traces=s.inputs.traces,
        traces_from_artifact=bool(s.inputs.artifact), baseline_file=s.inputs.baseline_file,
        baseline_artifact=s.inputs.baseline_artifact, log=step.log,
        tmp_root=_runner_temp(step.env), warn=step.warn)
    found: Found | None = None
    pairwise = suite.judge is not None and suite.judge.has_pairwise
    if pairwise:  # pairwise judge checks compare with the base branch's outputs: first
        found = _find_baseline(s, search)
        _give_judge(suite, found)
    results = _evaluate(step, s, suite)
    if not pairwise:
        found = _find_baseline(s, search)
    for_action(results, found, step.log)
    judge_store_for_action(search, results)  # a store the pull request changed: said
    checked_out = git_head(s.workspace)
    ctx = _render_context(step.env, s, suite, checked_out)
    folder, sarif_text, summary = _write_files(s, suite, results, ctx)
    report = Report(results, sarif_text,
                    step.redact(not_the_head_note(summary, s.event, checked_out)),
                    comment_marker(results.suite, s.inputs.comment_key), s.workspace,
                    checked_out, started, ctx.run_url)
    _say_results(step, s, report, folder, ctx)
    _publish(step, s, report)
    code = exit_code(results.verdict, s.inputs.fail_on)
    c = results.counts
    # violations as the step's output counts them: error and warning findings of every kind
    step.log(f"verdict {results.verdict}: {count_violations(results.findings)} violation(s), "
             f"{c.get('input_errors', 0)} input error(s) in {c.get('traces', 0)} trace(s); "
             f"fail-on {s.inputs.fail_on} → exit {code}")
    return code


def _suite_file(s: _Setup) -> Path:
    """The suite file: the input ``config``, else the one found in the working directory.
    One inside the workspace that a symbolic link takes out of it is refused, named as
    written (a link is the pull request's to commit, and the suite outside would be
    evaluated on the traces beside it and shown in the log and the comment); a path
    outside the workspace that the input names is the operator's, taken as given."""
    named = Path(s.inputs.config) if s.inputs.config else _found_config()
    if leads_out(s.workdir / named, s.workspace):
        shown = s.inputs.config or named.name
        raise ConfigError([f"{shown}: the suite file is a symbolic link (or in a folder that "
                           "is one) leading outside the workspace; agent-eval does not read "
                           "a suite through a link out of the repository: remove the link "
                           "from the repository, or name a suite file inside it"])
    return named


def _no_live(suite: Suite) -> None:
    """The action does not run live MCP probes (docs/mcp.md): a suite with ``servers:`` or
    ``probes:`` is a config error at that key. Its container has no MCP SDK, which stops
    such a suite when it is loaded; where the SDK is installed (``agent-eval action`` run
    on a runner or a developer's machine), the suite loaded, its probes were never run,
    and the verdict passed without them."""
    suite.refuse_live("the action", "Run this suite with `agent-eval run` in a job step (pip "
                      "install 'agent-eval-ci[mcp]' and the servers), or give the action a "
                      "suite without `servers:` and `probes:`")


def _setup(step: Step) -> _Setup:
    """Inputs, token, event and working directory, checked; the run is in the working
    directory after it."""
    env = step.env
    inputs, problems = read_inputs(env)
    github_token, token_why = token(step, inputs)
    if problems:
        raise AgentEvalError(*problems)
    event = load_event(env)
    for p in event.problems:
        step.warn(p)
    workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
    roots = allowed_roots(workspace, env)
    if env.get("GITHUB_ACTIONS") == "true":  # not on a developer's machine
        mark_safe_directory(workspace, step.log)
    workdir = workspace / inputs.working_directory if inputs.working_directory else (
        workspace if env.get("GITHUB_WORKSPACE") else Path.cwd())
    if not workdir.is_dir():
        raise AgentEvalError(f"working-directory {inputs.working_directory!r} is not a "
                             f"folder in {workspace}")
    workdir = confine(workdir, [workspace], "working-directory")
    os.chdir(workdir)
    client = None
    if github_token and event.repository:
        client = GitHubClient(github_token, event.repository,
                              env.get("GITHUB_API_URL") or DEFAULT_API_URL,
                              deadline=inputs.api_deadline, log=step.log)
    return _Setup(inputs, event, workspace, roots, workdir, client, token_why)


def _find_baseline(s: _Setup, search: BaselineSearch) -> Found | None:
    """The baseline (None when none applies to the event); one asked for by name that
    cannot be had stops the run, saying why there is no client when that is why."""
    try:
        return find_for_action(search)
    except BaselineError as exc:
        why = "" if s.client or not s.token_why else f" ({s.token_why})"
        raise AgentEvalError(str(exc) + why) from exc


def _give_judge(suite: Suite, found: Found | None) -> None:
    """The base run's outputs for pairwise judge checks, and the option that records the
    missing judgements."""
    if suite.judge is None:
        return
    suite.judge.context.base_outputs = base_outputs(found.results if found else None)
    if found is not None and found.source.get("sha"):
        suite.judge.context.base_hint = f"--baseline-ref {found.source['sha']}"


def _runner_temp(env: Mapping[str, str]) -> Path | None:
    """The runner's temp folder (``RUNNER_TEMP``), for work that stays out of the
    workspace (the base commit's worktree, a baseline artifact's zip)."""
    temp = env.get("RUNNER_TEMP")
    return Path(temp) if temp and Path(temp).is_dir() else None


def _evaluate(step: Step, s: _Setup, suite: Suite) -> Results:
    """The suite over the traces: the globs' files, or those of the artifact ``artifact``
    of this run."""
    if s.inputs.artifact:
        try:
            dest = _download_traces(step, s, s.inputs.artifact)
        except (ApiError, ValueError, OSError) as exc:
            hint = exc.needs("actions: read") if isinstance(exc, ApiError) else ""
            raise AgentEvalError(f"could not get the traces from artifact "
                                 f"{s.inputs.artifact!r}: {exc}{hint}") from exc
        files, errors = suite_sources(suite, s.inputs.traces or ["**/*"], base=dest)
    else:
        files, errors = suite_sources(suite, s.inputs.traces, base=s.workdir)
    return evaluate_files(suite, files, [_outside_hint(e, step.env) for e in errors],
                          jobs="auto", spill_dir=_runner_temp(step.env))  # architecture.md


def _download_traces(step: Step, s: _Setup, name: str) -> Path:
    run_id = s.event.artifact_run_id
    if s.client is None:
        raise ValueError("no github-token (or GITHUB_REPOSITORY) to download it with")
    if run_id is None:
        raise ValueError("the run id is unknown (GITHUB_RUN_ID)")
    dest = fresh_dir(s.workdir, ".agent-eval", "artifacts", _safe_name(name))
    got = s.client.download_artifact(run_id, name, dest)
    step.log(f"artifact {name!r} of run {run_id}: {len(got)} file(s) in {dest}")
    return dest


def _outside_hint(error: ReadItem, env: Mapping[str, str]) -> ReadItem:
    """A "no trace file matches" error in the action, with the hint that traces outside
    the workspace cannot be seen from the container."""
    workspace = env.get("GITHUB_WORKSPACE")
    if not isinstance(error, InputError) or error.rule != INPUT_NO_TRACES.id or not workspace:
        return error
    return replace(error, message=error.message + OUTSIDE_HINT.format(workspace=workspace))


def _safe_name(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name).strip(".") or "_"


# ------------------------------------------------------------------------ files
def _render_context(env: Mapping[str, str], s: _Setup, suite: Suite,
                    checked_out: str | None) -> RenderContext:
    """Links to the repository at the commit checked out, and to this workflow run."""
    event = s.event
    server = (env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    repo_url = f"{server}/{event.repository}" if event.repository else None
    run_url = (f"{repo_url}/actions/runs/{event.run_id}"
               if repo_url and event.run_id is not None else None)
    return RenderContext.for_root(suite.root, repo_url=repo_url,
                                  sha=checked_out or event.sha or event.head_sha,
                                  run_url=run_url, sarif_category=s.inputs.sarif_category)


def _write_files(s: _Setup, suite: Suite, results: Results,
                 ctx: RenderContext) -> tuple[Path, str, str]:
    """Write every output file into the output folder (inside the repository, confined
    to the workspace and runner temp, no file a link): the folder as written, the SARIF
    text (its category from ``ctx``) and the summary's markdown."""
    folder = Path(s.inputs.output_dir or "agent-eval-results")  # as named in a write error
    try:
        folder = output_dir(s.inputs.output_dir, suite)  # inside the repository (security.md)
        target = confine(folder, s.roots, "the output folder")
        no_linked_files(target, [RENDERERS[f].filename for f in ("json", *FORMATS)])
        write_outputs(results, FORMATS, target, ctx)
        sarif_text = (target / RENDERERS["sarif"].filename).read_text(encoding="utf-8")
        summary = (target / RENDERERS["markdown"].filename).read_text(encoding="utf-8")
    except OSError as exc:  # read-only, full, a file where the folder should be
        raise AgentEvalError(
            f"cannot write the output files to {relative(folder, s.workspace)}: "
            f"{exc.strerror or exc}" + (f" ({exc.filename})" if exc.filename else "")
        ) from exc
    return target, sarif_text, summary


def _say_results(step: Step, s: _Setup, report: Report, folder: Path,
                 ctx: RenderContext) -> None:
    """The log (the report, fenced from workflow commands: trace text is untrusted), the
    job summary, the step outputs and the workflow annotations."""
    results = report.results
    stop = f"agent-eval-{uuid.uuid4().hex}"
    step.say(f"::stop-commands::{stop}")
    step.say(console.render(results, color=False).rstrip("\n"))
    step.say(f"::{stop}::")
    step.summary(markdown.render(results, ctx, max_chars=SUMMARY_CHARS),
                 note=f"The whole report is in {relative(folder, s.workspace)}/ (summary.md, "
                      "results.json).")
    values = step_outputs(results, folder / RENDERERS["json"].filename,
                          folder / RENDERERS["sarif"].filename, s.workspace)
    step.outputs(values)
    annotations = input_errors_first(  # GitHub shows the first 10 error annotations
        [workflow.input_error_annotation(e) for e in results.input_errors],
        (workflow.finding_annotation(v) for v in by_severity(results.findings)))
    for line in workflow.annotation_lines(
            annotations, f"see the job summary or {values['sarif-file']}"):
        step.say(line)


def _publish(step: Step, s: _Setup, report: Report) -> None:
    """The GitHub calls, the ``comment-url`` output, and the calls skipped in the job
    summary. A bug in them must not hide the verdict."""
    comment_url = ""
    try:
        comment_url = publish(step, s.inputs, s.event, s.client, report, s.token_why)
    except Exception as exc:  # a bug here must not hide the verdict
        step.skip(f"publishing to GitHub stopped on an internal error: "
                  f"{type(exc).__name__}: {exc} (the verdict and the files are not affected)")
    finally:
        if s.client is not None:
            s.client.close()
    step.outputs({"comment-url": comment_url})
    if step.skipped:
        notes = "\n".join(f"- {markdown.md_text(n)}" for n in step.skipped)
        step.summary(f"\n### agent-eval: skipped GitHub calls\n\n{notes}\n")


# ------------------------------------------------------------------------ helpers
def _stop(step: Step, problems: list[str]) -> ExitCode:
    """A run that cannot evaluate: say why (annotations, summary, outputs), exit 2. A
    summary or outputs file that cannot be written is said in the log, not raised."""
    problems = [one_line(p) for p in problems]  # a name a problem quotes may hold anything
    for p in problems:
        step.say(workflow.command("error", p, title="agent-eval"))
    lines = "\n".join(f"- {markdown.md_text(step.redact(p))}" for p in problems)
    try:
        step.summary(f"## 💥 agent-eval could not run\n\n{lines}\n")
    except OSError as exc:
        step.log(f"could not write the job summary: {exc.strerror or exc}")
    try:
        step.outputs({"verdict": "error"})
    except OSError as exc:
        step.log(f"could not write the step outputs: {exc.strerror or exc}")
    return ExitCode.ERROR


def not_the_head_note(summary: str, event: Event, checked_out: str | None) -> str:
    """The markdown the pull request comment (and check run) shows: the summary, with a
    warning under its heading when the workspace is not the pull request's head
    (``pull_request_target``'s default checkout is the base branch): the verdict below it
    is then about other files than the pull request's, and must not read as its verdict."""
    if event.not_at_head(checked_out) is None or not event.head_sha:
        return summary
    at = f"at {markdown.md_code(checked_out[:12])}" if checked_out else "(not a git checkout)"
    note = (f"> ⚠️ **Not the pull request's code.** This run evaluated the workspace {at}, "
            f"not the pull request's head commit {markdown.md_code(event.head_sha[:12])} "
            f"(under {markdown.md_code(event.name)} the checkout is the base branch unless "
            "the workflow checks out the head): the verdict below says nothing about the "
            "pull request's traces.")
    lines = summary.split("\n")
    heading = next((n for n, line in enumerate(lines[:3]) if line.startswith("## ")), 0)
    return "\n".join([*lines[:heading + 1], "", note, *lines[heading + 1:]])


def comment_marker(suite: str, key: str | None = None) -> str:
    """The hidden first line that finds the comment again: one comment per suite, or per
    suite and ``comment-key`` (matrix jobs, several jobs on one suite)."""
    name = markdown.marker(suite)
    if key:
        name += f" key={markdown.marker(key)}"
    return f"<!-- agent-eval:{name} -->"
