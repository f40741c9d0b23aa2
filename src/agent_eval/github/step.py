"""What one run of the action says, besides its files: the log, workflow commands, the
job summary and the step outputs, each with the token redacted
(:mod:`agent_eval.github.secrets`)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from agent_eval.findings import count_violations
from agent_eval.github import workflow
from agent_eval.github.secrets import Redactor
from agent_eval.results import Results
from agent_eval.safetext import one_line
from agent_eval.sections import Comparison

__all__ = ["Step", "relative", "step_outputs"]


@dataclass
class Step:
    """The voice of one run: ``say`` to the log (where workflow commands work), ``log``
    to stderr, ``skip`` a GitHub call with one explanation, the job ``summary`` and the
    step ``outputs`` (when the runner gave their files)."""

    env: Mapping[str, str]
    out: TextIO = field(default=sys.stdout)
    skipped: list[str] = field(default_factory=list)  # each skipped call, explained once
    redact: Redactor = field(default_factory=Redactor)  # the token, out of every line

    def say(self, text: str) -> None:
        print(self.redact(text), file=self.out, flush=True)

    def log(self, text: str) -> None:
        """A line to stderr, outside the report's ``::stop-commands::`` fence: as one line
        (it may quote a suite or baseline's names), no workflow command in it."""
        print(one_line(self.redact(f"agent-eval: {text}")), file=sys.stderr, flush=True)

    def warn(self, text: str) -> None:
        """A warning annotation (``::warning``)."""
        self.say(workflow.command("warning", text, title="agent-eval"))

    def skip(self, text: str) -> None:
        self.skipped.append(self.redact(text))
        self.warn(text)

    def summary(self, text: str, note: str = "") -> None:
        """Append to the job summary (when there is one), the token redacted."""
        path = self.env.get("GITHUB_STEP_SUMMARY")
        if path:
            workflow.append_summary(path, self.redact(text), note=self.redact(note))

    def outputs(self, values: Mapping[str, str]) -> None:
        path = self.env.get("GITHUB_OUTPUT")
        if path:
            workflow.write_outputs(path, {k: self.redact(v) for k, v in values.items()})


def step_outputs(results: Results, results_file: Path, sarif_file: Path,
                 workspace: Path) -> dict[str, str]:
    """The step outputs of action.yml for ``results``."""
    rate = results.pass_rate()
    score = results.metrics.get("composite")  # the suite's score, 0 to 1 (docs/scenarios.md)
    if not isinstance(score, int | float):
        score = None
    compared = results.baseline if isinstance(results.baseline, Comparison) else None
    new = None if compared is None else compared.new_violations
    regressions = None if compared is None else compared.regressions
    # the findings of every kind (rule tests, scenarios, criteria, …) of severity error or
    # warning: what the comparison counts, so that new + unchanged = violations
    violations = count_violations(results.findings)
    return {
        "verdict": results.verdict,
        # as computed, never rounded: rounded, a rate just under 1 read 1.0 beside a failure
        "pass-rate": "" if rate is None else repr(float(rate)),
        "score": "" if score is None else repr(float(score)),
        "violations": str(violations),
        # without a baseline every violation is new and nothing has regressed
        "new-violations": str(new if isinstance(new, int) else violations),
        "regressions": str(regressions if isinstance(regressions, int) else 0),
        "results-file": relative(results_file, workspace),
        "sarif-file": relative(sarif_file, workspace),
    }


def relative(path: Path, workspace: Path) -> str:
    """A path as later steps of the job see it: relative to the workspace."""
    p = path.resolve()
    try:
        return p.relative_to(workspace).as_posix()
    except ValueError:
        return str(p)
