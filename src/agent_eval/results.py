"""The one results object every renderer reads (docs/results.md)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_eval._version import __version__
from agent_eval.errors import InputError
from agent_eval.findings import ConfigRef, Finding, TraceRef

SCHEMA_VERSION = "1"
Verdict = Literal["pass", "warn", "fail", "error"]
# a rule test's status; not_exercised: it passed, but no call it checks was ever made
Status = Literal["pass", "not_exercised", "warn", "fail", "error"]


@dataclass(slots=True)
class TestResult:
    id: str
    metric: str
    severity: str
    status: Status
    duration_ms: int
    traces_checked: int
    traces_failed: int
    calls_checked: int
    violations: list[Finding]


@dataclass(frozen=True, slots=True)
class TraceSummary:
    id: str
    file: str
    line: int
    scenario: str | None
    tool_calls: int
    failed_tests: tuple[str, ...]  # ids of the tests with findings on this trace


@dataclass
class Results:
    suite: str
    config: str
    verdict: Verdict
    counts: dict[str, int]
    tests: list[TestResult]
    traces: list[TraceSummary]
    input_errors: list[InputError]
    ignored_events: dict[str, int] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)  # trace file -> reader used
    scenarios: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    criteria: list[dict[str, Any]] = field(default_factory=list)
    baseline: dict[str, Any] | None = None
    # the configured rules (compare.inventory): how the comparison tells a changed policy
    inventory: dict[str, Any] | None = None
    # a partial result of ``run --shard i/n`` (what ``merge`` needs; sharding.py)
    shard: dict[str, Any] | None = None
    # tools named in the config that matched no call in any trace (coverage.py)
    unexercised: list[Finding] = field(default_factory=list)
    # the judge: mode, store, judgements used and missing, cost (judge/summary.py)
    judge: dict[str, Any] | None = None
    tool_version: str = __version__
    schema_version: str = SCHEMA_VERSION

    @property
    def violations(self) -> list[Finding]:
        """The rule tests' findings (``tests:``)."""
        return [v for t in self.tests for v in t.violations]

    @property
    def scenario_findings(self) -> list[Finding]:
        """The findings of the scenarios, in scenario order."""
        return [finding_from(f) for s in self.scenarios for f in s.get("findings") or ()]

    @property
    def criteria_findings(self) -> list[Finding]:
        """One finding per criterion that was missed (``fail``) or only warned about
        (``warn``), located at the criterion's key (rule ``criteria/<kind>``)."""
        out = []
        for c in self.criteria:
            status = c.get("status")
            if status not in ("fail", "warn") or not c.get("config"):
                continue
            cfg = c["config"]
            out.append(Finding(
                rule=f"criteria/{c.get('kind', 'blocking')}",
                severity="error" if status == "fail" else "warning",
                message=str(c.get("message") or c.get("name")), test="pass_criteria",
                config=ConfigRef(cfg["file"], cfg["line"], cfg["column"], cfg["key_path"]),
                trace=None, value=c.get("value"),
                constraint=None if c.get("threshold") is None
                else f"{c.get('name')}: {c.get('threshold')}",
                fingerprint=str(c.get("fingerprint") or "")))
        return out

    @property
    def findings(self) -> list[Finding]:
        """Everything reported: rule violations, scenario findings, missed criteria,
        unexercised rules (what SARIF lists)."""
        return [*self.violations, *self.scenario_findings, *self.criteria_findings,
                *self.unexercised]

    @property
    def other_findings(self) -> list[Finding]:
        """The findings of :attr:`findings` that belong to no test, scenario or
        criterion (renderers list them in a section of their own, whatever their kind,
        so that every output shows every finding)."""
        seen: dict[tuple[str, str, str], int] = {}
        for v in (*self.violations, *self.scenario_findings, *self.criteria_findings):
            key = (v.rule, v.fingerprint, v.message)
            seen[key] = seen.get(key, 0) + 1
        out = []
        for v in self.findings:
            key = (v.rule, v.fingerprint, v.message)
            if seen.get(key, 0) > 0:
                seen[key] -= 1
            else:
                out.append(v)
        return out

    @property
    def exit_code(self) -> int:
        return exit_code(self.verdict, "fail")

    # --------------------------------------------------------------- (de)serialise
    def to_dict(self, *, with_traces: bool = True) -> dict[str, Any]:
        out = {
            "schema_version": self.schema_version,
            "tool": {"name": "agent-eval", "version": self.tool_version},
            "suite": self.suite,
            "verdict": self.verdict,
            "config": self.config,
            "counts": dict(self.counts),
            "tests": [_test_dict(t) for t in self.tests],
            "scenarios": self.scenarios,
            "metrics": self.metrics,
            "criteria": self.criteria,
            "unexercised": [finding_dict(v) for v in self.unexercised],
            "input_errors": [
                {"rule": e.rule, "file": e.file, "line": e.line, "message": e.message}
                for e in self.input_errors
            ],
            "ignored_events": dict(self.ignored_events),
            "formats": dict(self.formats),
            "traces": [trace_dict(t) for t in self.traces] if with_traces else [],
            "baseline": self.baseline,
        }
        if self.inventory is not None:
            out["inventory"] = self.inventory
        if self.shard is not None:
            out["shard"] = self.shard
        if self.judge is not None:
            out["judge"] = self.judge
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Results:
        return cls(
            suite=data["suite"],
            config=data["config"],
            verdict=data["verdict"],
            counts=dict(data["counts"]),
            tests=[_test_from(t) for t in data["tests"]],
            traces=[TraceSummary(t["id"], t["file"], t["line"], t.get("scenario"),
                                 t["tool_calls"], tuple(t.get("failed_tests", ())))
                    for t in data.get("traces", [])],
            input_errors=[InputError(e["rule"], e["file"], e["line"], e["message"])
                          for e in data.get("input_errors", [])],
            ignored_events=dict(data.get("ignored_events", {})),
            formats=dict(data.get("formats", {})),
            scenarios=list(data.get("scenarios", [])),
            metrics=dict(data.get("metrics", {})),
            criteria=list(data.get("criteria", [])),
            baseline=data.get("baseline"),
            inventory=data.get("inventory"),
            shard=data.get("shard"),
            unexercised=[finding_from(v) for v in data.get("unexercised") or ()],
            judge=data.get("judge"),
            tool_version=data["tool"]["version"],
            schema_version=data["schema_version"],
        )


def trace_dict(t: TraceSummary) -> dict[str, Any]:
    return {"id": t.id, "file": t.file, "line": t.line, "scenario": t.scenario,
            "tool_calls": t.tool_calls, "failed_tests": list(t.failed_tests)}


def exit_code(verdict: str, fail_on: str) -> int:
    """docs/results.md "Exit codes": 0 pass/warn, 1 fail (or warn under --fail-on warn), 2
    error; under ``--fail-on never`` 0 whatever the verdict, since the run completed and wrote its
    results (config and internal errors stop the run before there is a verdict: they
    exit 2 in the command line, whatever ``--fail-on`` says)."""
    if fail_on == "never":
        return 0
    if verdict == "error":
        return 2
    if verdict == "fail" or (verdict == "warn" and fail_on == "warn"):
        return 1
    return 0


# ------------------------------------------------------------------------ verdict
_RANK: dict[str, int] = {"pass": 0, "warn": 1, "fail": 2, "error": 3}
# pass_criteria whose threshold below 1.0 tolerates failed scenarios (while it is met)
TOLERANT_METRICS = ("pass_rate", "weighted_pass_rate")
BLOCKING_CRITERIA = ("blocking", "by_category", "composite", "required", "regression")


SEVERITY_VERDICT = {"error": "fail", "warning": "warn", "note": "pass"}


def _worse(a: str, b: str) -> str:
    return b if _RANK.get(b, 0) > _RANK.get(a, 0) else a


def _below_one(c: dict[str, Any]) -> bool:
    t = c.get("threshold")
    return isinstance(t, int | float) and not isinstance(t, bool) and t < 1


def tolerated(scenario: dict[str, Any], criteria: list[dict[str, Any]]) -> str | None:
    """Why a failed (or trace-less) scenario does not fail the suite, or None when it
    does (docs/scenarios.md "Verdict"): it is advisory (``gate: warn``), or a blocking
    ``min_pass_rate`` / ``min_weighted_pass_rate`` below 1.0, or a ``by_category`` rate
    below 1.0 for its category, allows failures and is met."""
    if scenario.get("gate") == "warn":
        return "gate: warn"
    for c in criteria:
        if c.get("status") != "pass" or not _below_one(c):
            continue
        if c.get("kind") == "blocking" and c.get("metric") in TOLERANT_METRICS:
            return f"{c.get('name')}: {c.get('threshold')}"
        if c.get("kind") == "by_category" and c.get("name") == scenario.get("category") \
                and scenario.get("category") is not None:
            return f"by_category {c.get('name')}: {c.get('threshold')}"
    return None


def scenario_verdict(scenarios: list[dict[str, Any]], criteria: list[dict[str, Any]]
                     ) -> str:
    """What the scenarios and criteria say (docs/scenarios.md "Verdict and exit code"): fail
    for a missed blocking criterion or a failed / trace-less scenario that is not tolerated;
    warn for a tolerated one, a warn scenario or a missed warning criterion; else pass."""
    worst = "pass"
    for s in scenarios:
        status = str(s.get("status"))
        if status in ("fail", "error"):
            worst = _worse(worst, "warn" if tolerated(s, criteria) else "fail")
        elif status == "warn":
            worst = _worse(worst, "warn")
    for c in criteria:
        if c.get("status") == "fail":
            worst = _worse(worst, "fail")
        elif c.get("status") == "warn":
            worst = _worse(worst, "warn")
    return worst


def verdict_of(results: Results) -> Verdict:
    """The verdict from everything the results hold: input errors and a test that checked
    no trace make it ``error``; then the worst of the rule tests (by their findings'
    severity) and of :func:`scenario_verdict`."""
    if results.input_errors:
        return "error"
    worst = "pass"
    for t in results.tests:
        worst = _worse(worst, t.status)
    for f in results.unexercised:  # coverage/unexercised: a note unless made to count
        worst = _worse(worst, SEVERITY_VERDICT[f.severity])
    if worst != "error":
        worst = _worse(worst, scenario_verdict(results.scenarios, results.criteria))
    return worst  # type: ignore[return-value]


def blocking_checks(results: Results) -> list[str]:
    """What in this suite can fail the run (empty: nothing can, whatever the traces do):
    error-severity tests, scenarios that are not advisory, blocking criteria."""
    out = [f"test {t.id}" for t in results.tests if t.severity == "error"]
    out += [f"scenario {s.get('id')}" for s in results.scenarios if s.get("gate") != "warn"]
    out += [f"criterion {c.get('name')}" for c in results.criteria
            if c.get("kind") in BLOCKING_CRITERIA]
    return out


def finding_dict(v: Finding) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rule": v.rule,
        "severity": v.severity,
        "message": v.message,
        "test": v.test,
        "tool": v.tool,
        "argument": v.argument,
        "value": v.value,
        "constraint": v.constraint,
        "fingerprint": v.fingerprint,
        "config": {"file": v.config.file, "line": v.config.line, "column": v.config.col,
                   "key_path": v.config.key_path},
        "trace": None if v.trace is None else {
            "file": v.trace.file, "line": v.trace.line, "trace_id": v.trace.trace_id},
        "scenario": v.scenario,
    }
    if v.related:
        out["related"] = [{"file": r.file, "line": r.line, "trace_id": r.trace_id}
                          for r in v.related]
    if v.details:
        out["details"] = v.details
    return out


def finding_from(d: dict[str, Any]) -> Finding:
    c = d["config"]
    t = d.get("trace")
    return Finding(
        rule=d["rule"], severity=d["severity"], message=d["message"], test=d["test"],
        config=ConfigRef(c["file"], c["line"], c["column"], c["key_path"]),
        trace=None if t is None else TraceRef(t["file"], t["line"], t["trace_id"]),
        tool=d.get("tool"), argument=d.get("argument"), value=d.get("value"),
        constraint=d.get("constraint"), scenario=d.get("scenario"),
        related=tuple(TraceRef(r["file"], r["line"], r["trace_id"])
                      for r in d.get("related", [])),
        details=dict(d.get("details", {})), fingerprint=d.get("fingerprint", ""),
    )


def _test_dict(t: TestResult) -> dict[str, Any]:
    return {
        "id": t.id, "metric": t.metric, "severity": t.severity, "status": t.status,
        "duration_ms": t.duration_ms, "traces_checked": t.traces_checked,
        "traces_failed": t.traces_failed, "calls_checked": t.calls_checked,
        "violations": [finding_dict(v) for v in t.violations],
    }


def _test_from(d: dict[str, Any]) -> TestResult:
    return TestResult(d["id"], d["metric"], d["severity"], d["status"], d["duration_ms"],
                      d["traces_checked"], d["traces_failed"], d["calls_checked"],
                      [finding_from(v) for v in d["violations"]])


# ------------------------------------------------------------------- fingerprints
def fingerprint_base(v: Finding) -> str:
    """Rule + the violated key's path in its file + tool + argument + trace; never a
    line number, so unrelated edits move no fingerprint (docs/results.md)."""
    who = v.trace.trace_id if v.trace is not None else (v.scenario or "")
    return "|".join((v.rule, f"{v.config.file}#{v.config.key_path}", v.tool or "",
                     v.argument or "", who))


def assign_fingerprints(findings: list[Finding]) -> None:
    """Set ``fingerprint`` on findings given in trace order; identical ones get an
    occurrence suffix ``:2``, ``:3``…"""
    seen: dict[str, int] = {}
    for v in findings:
        base = fingerprint_base(v)
        n = seen.get(base, 0) + 1
        seen[base] = n
        key = base if n == 1 else f"{base}:{n}"
        v.fingerprint = hashlib.sha256(key.encode()).hexdigest()[:32]


def sort_key(v: Finding) -> tuple[Any, ...]:
    t = v.trace
    return (t.file if t else "~", t.line if t else 0, t.trace_id if t else "",
            v.config.file, v.config.line, v.config.col, v.rule, v.argument or "", v.message)
