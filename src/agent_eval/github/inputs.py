"""The action's inputs (action.yml), as a runner hands them over: ``INPUT_<NAME>`` in the
environment (dashes kept: ``INPUT_GITHUB-TOKEN``; underscores accepted too), an empty
value meaning the default. :func:`read_inputs` reads them all and names every value that
is not one of its choices, so the run can stop with all of them at once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agent_eval.errors import FAIL_ON
from agent_eval.github.client import API_DEADLINE
from agent_eval.github.secrets import token_problem
from agent_eval.github.step import Step

__all__ = ["BASELINES", "DEADLINE_ENV", "TRACE_ANNOTATIONS", "Inputs", "read_inputs",
           "token"]

BASELINES = ("auto", "git", "artifact", "file", "none")
TRACE_ANNOTATIONS = ("changed", "all", "none")
DEADLINE_ENV = "AGENT_EVAL_API_DEADLINE"  # seconds for all GitHub API calls of a run
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


@dataclass(frozen=True)
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
    api_deadline: float = API_DEADLINE  # AGENT_EVAL_API_DEADLINE, not an input of action.yml

    def wants_comment(self, pull_request: bool) -> bool:
        """Whether to comment: as said, or (``auto``) on a pull request."""
        return self.comment == "true" or (self.comment == "auto" and pull_request)


class _Reader:
    """The inputs of one environment, and the problems found reading them."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.problems: list[str] = []

    def text(self, name: str) -> str | None:
        """``INPUT_<NAME>`` as the runner sets it (dashes kept), or with underscores."""
        key = "INPUT_" + name.replace(" ", "_").upper()
        for k in (key, key.replace("-", "_")):
            value = self.env.get(k)
            if value is not None and value.strip():
                return value.strip()
        return None

    def boolean(self, name: str, default: bool) -> bool:
        raw = self.text(name)
        if raw is None:
            return default
        if raw.lower() in _TRUE | _FALSE:
            return raw.lower() in _TRUE
        self.problems.append(f"input {name}: {raw!r} is not true or false")
        return default

    def choice(self, name: str, options: tuple[str, ...], default: str) -> str:
        raw = self.text(name)
        if raw is None:
            return default
        if raw.lower() not in options:
            self.problems.append(f"input {name}: {raw!r} is not one of {', '.join(options)}")
            return default
        return raw.lower()

    def comment(self) -> str:
        raw = self.text("comment")
        if raw is None or raw.lower() == "auto":
            return "auto"
        if raw.lower() in _TRUE | _FALSE:
            return "true" if raw.lower() in _TRUE else "false"
        self.problems.append(f"input comment: {raw!r} is not auto, true or false")
        return "auto"

    def globs(self, name: str) -> list[str] | None:
        """One glob a line or comma-separated."""
        raw = self.text(name)
        if raw is None:
            return None
        globs = [g.strip() for line in raw.splitlines() for g in line.split(",") if g.strip()]
        if not globs:  # "," is not "unset": the suite's traces are not read in its place
            self.problems.append(f"input {name}: {raw!r} names no file or glob (one a line "
                                 "or comma-separated); leave it empty for the suite's")
            return None
        return globs

    def deadline(self) -> float:
        raw = (self.env.get(DEADLINE_ENV) or "").strip()
        if not raw:
            return API_DEADLINE
        try:
            value = float(raw)
        except ValueError:
            value = 0.0
        if not 0 < value < float("inf"):
            self.problems.append(f"{DEADLINE_ENV}={raw[:40]!r} is not a positive number of "
                                 "seconds")
            return API_DEADLINE
        return value


def read_inputs(env: Mapping[str, str]) -> tuple[Inputs, list[str]]:
    """The inputs, and every problem with them (a value that is none of its choices is
    named and read as its default)."""
    r = _Reader(env)
    inputs = Inputs(
        config=r.text("config"),
        traces=r.globs("traces"),
        artifact=r.text("artifact"),
        baseline=r.choice("baseline", BASELINES, "auto"),
        baseline_artifact=r.text("baseline-artifact") or Inputs.baseline_artifact,
        baseline_file=r.text("baseline-file"),
        github_token=r.text("github-token"),
        upload_sarif=r.boolean("upload-sarif", True),
        sarif_category=r.text("sarif-category"),
        comment=r.comment(),
        comment_key=r.text("comment-key"),
        check_run=r.boolean("check-run", False),
        trace_annotations=r.choice("trace-annotations", TRACE_ANNOTATIONS, "changed"),
        fail_on=r.choice("fail-on", FAIL_ON, "fail"),
        output_dir=r.text("output-dir"),
        working_directory=r.text("working-directory"),
        api_deadline=r.deadline(),
    )
    return inputs, r.problems


def token(step: Step, inputs: Inputs) -> tuple[str | None, str | None]:
    """The token to call GitHub with (input ``github-token``, else ``GITHUB_TOKEN``), or
    None and why; every piece of it is redacted from now on (and masked in the log by the
    runner)."""
    value = inputs.github_token or step.env.get("GITHUB_TOKEN") or None
    if value is None:
        return None, None
    step.redact.add(value)
    if step.env.get("GITHUB_ACTIONS") == "true":  # the runner hides these lines and values
        for piece in step.redact.maskable():
            print(f"::add-mask::{piece}", file=step.out, flush=True)  # not redacted
    problem = token_problem(value)
    return (None, problem) if problem else (value, None)
