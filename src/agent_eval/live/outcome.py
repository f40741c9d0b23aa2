"""What the live run adds to the results: one test entry per probe and per server, the
servers' start-up errors, and the recorded sessions (evaluated as traces).

No SDK here: ``merge`` reads a shard's outcome back without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_eval.errors import InputError
from agent_eval.limits import DEFAULT
from agent_eval.readers.base import SourceFile
from agent_eval.results import (
    Results,
    TestResult,
    clean_input_error,
    clean_test,
    test_dict,
    test_from,
    verdict_of,
)
from agent_eval.rule_ids import INPUT_NO_TRACES


@dataclass
class LiveOutcome:
    tests: list[TestResult] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    sessions: list[SourceFile] = field(default_factory=list)  # evaluated as traces
    listings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # tools/list

    def apply(self, results: Results, *, has_trace_globs: bool = True) -> None:
        """Add the probes' and servers' entries and errors to ``results`` (after the
        rule tests, in suite order) and update counts and verdict. What they say (the
        servers' answers, the probes' ids) is made safe to show, as the rest of the
        results (:func:`agent_eval.results.clean_results`)."""
        for t in self.tests:
            clean_test(t, DEFAULT)
        self.errors = [clean_input_error(e, DEFAULT) for e in self.errors]
        results.tests.extend(self.tests)
        errors = list(results.input_errors)
        if not has_trace_globs:
            # the sessions are the only traces: a server that did not start says why
            errors = [e for e in errors if e.rule != INPUT_NO_TRACES.id]
        errors.extend(self.errors)
        errors.sort(key=lambda e: (e.file, e.line, e.rule, e.message))
        results.input_errors = errors
        results.counts["input_errors"] = len(errors)
        results.counts["violations"] = (results.counts.get("violations", 0)
                                        + sum(len(t.violations) for t in self.tests))
        # the verdict of everything the results now hold, as any run's (a live-only
        # run's "no traces" error dropped above): worked out here by hand, it left out the
        # coverage findings a suite made count and the tolerance of the pass criteria
        results.verdict = verdict_of(results)

    def to_dict(self) -> dict[str, Any]:
        """What a shard keeps for ``merge`` (results.shard["live"])."""
        return {"tests": [test_dict(t) for t in self.tests],
                "errors": [{"rule": e.rule, "file": e.file, "line": e.line,
                            "message": e.message} for e in self.errors]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LiveOutcome:
        return cls(
            tests=[test_from(t) for t in data.get("tests", [])],
            errors=[InputError(e["rule"], e["file"], e["line"], e["message"])
                    for e in data.get("errors", [])])
