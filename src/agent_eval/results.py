"""The one results object every renderer reads (docs/results.md); its sections are
typed in :mod:`agent_eval.sections`. :meth:`Results.load` reads a results file back,
checked against the results JSON Schema; every results object, made by a run or read
back, has its text made safe to show (:func:`clean_results`)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from itertools import chain
from typing import TYPE_CHECKING, Any, Literal

import orjson

from agent_eval import sections
from agent_eval._version import __version__
from agent_eval.errors import ExitCode, InputError, ResultsFileError
from agent_eval.findings import ConfigRef, Finding, TraceRef, finding_dict, finding_from
from agent_eval.jsonutil import JsonLimitError, loads, open_regular, read_whole
from agent_eval.limits import DEFAULT, RESULTS, Limits
from agent_eval.paths import repo_relative
from agent_eval.safetext import clean_name, clean_strings, clean_text, clean_value
from agent_eval.sections import CriterionResult, Inventory, Metrics, ScenarioResult
from agent_eval.spill import Chained, SpilledFindings

if TYPE_CHECKING:  # sections not every run has: imported when a run or a file has them
    from agent_eval.sections import Baseline, JudgeSummary, ShardInfo

__all__ = [
    "SCHEMA_VERSION",
    "Results",
    "Status",
    "TestResult",
    "TraceSummary",
    "Verdict",
    "assign_fingerprints",
    "blocking_checks",
    "clean_finding",
    "clean_input_error",
    "clean_results",
    "clean_test",
    "clean_trace_status",
    "criterion_finding",
    "exit_code",
    "failing_traces",
    "finding_dict",
    "finding_from",
    "fingerprint",
    "fingerprint_base",
    "missing_trace_only",
    "partial_note",
    "results_schema",
    "scenario_verdict",
    "schema_problems",
    "sort_key",
    "takes_any_failures",
    "test_dict",
    "test_from",
    "tolerated",
    "trace_dict",
    "verdict_of",
    "worse",
]

SCHEMA_VERSION = "1"
Verdict = Literal["pass", "warn", "fail", "error"]
# a rule test's status; not_exercised: it passed, but no call it checks was ever made
Status = Literal["pass", "not_exercised", "warn", "fail", "error"]


@dataclass(slots=True)
class TestResult:
    """One rule test (``tests:``) of the run: its status, counts and findings."""

    id: str
    metric: str
    severity: str
    status: Status
    duration_ms: int
    traces_checked: int
    traces_failed: int
    calls_checked: int
    # in order; in memory (a list), or beyond spill.SPILL_AT findings in the run's spill
    # (spill.SpilledFindings: walked as often as wanted, not indexable)
    violations: Collection[Finding]


@dataclass(frozen=True, slots=True)
class TraceSummary:
    """One trace of the run: where it is, its scenario, and the tests it failed."""

    id: str
    file: str
    line: int
    scenario: str | None
    tool_calls: int
    failed_tests: tuple[str, ...]  # ids of the tests with findings on this trace


@dataclass
class Results:
    """Everything a run found (docs/results.md): what every renderer reads."""

    suite: str
    config: str
    verdict: Verdict
    counts: dict[str, int]
    tests: list[TestResult]
    traces: list[TraceSummary]
    input_errors: list[InputError]
    ignored_events: dict[str, int] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)  # trace file -> reader used
    scenarios: list[ScenarioResult] = field(default_factory=list)
    metrics: Metrics = field(default_factory=dict)
    criteria: list[CriterionResult] = field(default_factory=list)
    # the comparison with a base run (compare.py), or why there is none
    baseline: Baseline | None = None
    # the configured rules (suite.inventory): how the comparison tells a changed policy
    inventory: Inventory | None = None
    # a partial result of ``run --shard i/n`` (what ``merge`` needs; sharding.py)
    shard: ShardInfo | None = None
    # tools named in the config that matched no call in any trace (coverage.py)
    unexercised: list[Finding] = field(default_factory=list)
    # the judge: mode, store, judgements used and missing, cost (judge/summary.py)
    judge: JudgeSummary | None = None
    tool_version: str = __version__
    schema_version: str = SCHEMA_VERSION

    @property
    def violations(self) -> Collection[Finding]:
        """The rule tests' findings (``tests:``), test after test: walked as often as
        wanted (each walk reads the spilled findings again), not indexable."""
        return Chained(t.violations for t in self.tests)

    @property
    def scenario_findings(self) -> list[Finding]:
        """The findings of the scenarios, in scenario order."""
        return [f for s in self.scenarios for f in s.findings]

    @property
    def criteria_findings(self) -> list[Finding]:
        """One finding per criterion that was missed (``fail``) or only warned about
        (``warn``), located at the criterion's key (rule ``criteria/<kind>``)."""
        return [f for f in map(criterion_finding, self.criteria) if f is not None]

    @property
    def findings(self) -> Collection[Finding]:
        """Everything reported: rule violations, scenario findings, missed criteria,
        unexercised rules (what SARIF lists); walked as :attr:`violations`."""
        return Chained([*(t.violations for t in self.tests), self.scenario_findings,
                        self.criteria_findings, self.unexercised])

    @property
    def other_findings(self) -> list[Finding]:
        """The findings of :attr:`findings` that belong to no test, scenario or
        criterion (renderers list them in a section of their own, whatever their kind,
        so that every output shows every finding)."""
        if type(self).findings is Results.findings:
            # findings are the violations, scenario findings and criteria findings, then
            # the unexercised rules: matching them (below) always leaves exactly those,
            # and would hold a key per finding
            return list(self.unexercised)
        seen: dict[tuple[str, str, str], int] = {}
        for v in chain(self.violations, self.scenario_findings, self.criteria_findings):
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

    def close(self) -> None:
        """Remove the spill folder of findings kept on disk (spill.py), if any: their
        walks fail after this. (Without it the folder goes when the last object using it
        is garbage-collected, or at exit.)"""
        for t in self.tests:
            if isinstance(t.violations, SpilledFindings):
                t.violations.spill.close()

    @property
    def exit_code(self) -> ExitCode:
        return exit_code(self.verdict, "fail")

    @property
    def traces_failing(self) -> int:
        """The traces with an error-severity rule violation."""
        return len(failing_traces(self.violations))

    def summary_counts(self, traces_failing: int | None = None) -> dict[str, int]:
        """The suite's numbers as every report shows them (:data:`SUMMARY_COUNTS`);
        ``traces_failing`` is :attr:`traces_failing` when the caller has counted it (a
        walk over every violation, which may be on disk)."""
        c = self.counts
        return {
            "traces": c.get("traces", len(self.traces)),
            "tool calls": c.get("tool_calls", 0),
            "violations": c.get("violations", len(self.violations)),
            "input errors": c.get("input_errors", len(self.input_errors)),
            "traces failing": self.traces_failing if traces_failing is None
            else traces_failing,
        }

    def pass_rate(self) -> float | None:
        """The suite's pass rate: of its scenarios, else of its traces (no trace: None)."""
        rate = self.metrics.get("pass_rate")
        if isinstance(rate, int | float):
            return rate
        traces = self.counts.get("traces", 0)
        return (traces - self.traces_failing) / traces if traces else None

    # --------------------------------------------------------------- (de)serialise
    def to_dict(self, *, with_traces: bool = True) -> dict[str, Any]:
        out = {
            "schema_version": self.schema_version,
            "tool": {"name": "agent-eval", "version": self.tool_version},
            "suite": self.suite,
            "verdict": self.verdict,
            "config": self.config,
            "counts": dict(self.counts),
            "tests": [test_dict(t) for t in self.tests],
            "scenarios": [s.to_dict() for s in self.scenarios],
            "metrics": dict(self.metrics),
            "criteria": [c.to_dict() for c in self.criteria],
            "unexercised": [finding_dict(v) for v in self.unexercised],
            "input_errors": [
                {"rule": e.rule, "file": e.file, "line": e.line, "message": e.message}
                for e in self.input_errors
            ],
            "ignored_events": dict(self.ignored_events),
            "formats": dict(self.formats),
            "traces": [trace_dict(t) for t in self.traces] if with_traces else [],
            "baseline": None if self.baseline is None else self.baseline.to_dict(),
        }
        if self.inventory is not None:
            out["inventory"] = self.inventory.to_dict()
        if self.shard is not None:
            out["shard"] = self.shard.to_dict()
        if self.judge is not None:
            out["judge"] = self.judge.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Results:
        return cls(
            suite=data["suite"],
            config=data["config"],
            verdict=data["verdict"],
            counts=dict(data["counts"]),
            tests=[test_from(t) for t in data["tests"]],
            traces=[TraceSummary(t["id"], t["file"], t["line"], t.get("scenario"),
                                 t["tool_calls"], tuple(t.get("failed_tests", ())))
                    for t in data.get("traces", [])],
            input_errors=[InputError(e["rule"], e["file"], e["line"], e["message"])
                          for e in data.get("input_errors", [])],
            ignored_events=dict(data.get("ignored_events", {})),
            formats=dict(data.get("formats", {})),
            scenarios=[ScenarioResult.from_dict(s) for s in data.get("scenarios") or ()],
            metrics=dict(data.get("metrics") or {}),
            criteria=[CriterionResult.from_dict(c) for c in data.get("criteria") or ()],
            baseline=_optional(lambda d: sections.baseline_from(d), data.get("baseline")),
            inventory=_optional(Inventory.from_dict, data.get("inventory")),
            shard=_optional(lambda d: sections.ShardInfo.from_dict(d), data.get("shard")),
            unexercised=[finding_from(v) for v in data.get("unexercised") or ()],
            judge=_optional(lambda d: sections.JudgeSummary.from_dict(d), data.get("judge")),
            tool_version=data["tool"]["version"],
            schema_version=data["schema_version"],
        )

    @classmethod
    def load(cls, path: str) -> Results:
        """Read a results file (:meth:`parse`); a :class:`ResultsFileError` with a
        one-line reason when it cannot be read or is not one."""
        try:
            with open_regular(path) as fh:  # a FIFO or a link to a pipe: never waited on
                data = read_whole(fh, RESULTS)
        except OSError as exc:
            raise ResultsFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
        except JsonLimitError:  # (read_whole's only limit: the size)
            raise ResultsFileError(f"{path} is not read: it is larger than "
                                   f"{RESULTS.max_file_bytes} bytes, the most a results "
                                   "file may hold") from None
        return cls.parse(data, path)

    @classmethod
    def parse(cls, data: bytes, where: str) -> Results:
        """A results file's bytes (a results file may come from anyone: a baseline
        artifact, a pull request), read within :data:`~agent_eval.limits.RESULTS`, checked
        against the results JSON Schema and made safe to show (:func:`clean_results`);
        :class:`ResultsFileError` naming ``where`` and the first problems otherwise. The
        one way every command reads a results file (``report``, ``diff``, ``merge``, a
        baseline)."""
        try:
            doc = loads(data, RESULTS)
        except JsonLimitError as exc:
            raise ResultsFileError(f"{where} is not read: it {exc}") from None
        except orjson.JSONDecodeError as exc:
            raise ResultsFileError(f"{where} is not JSON (truncated?): {exc}") from None
        tool = doc.get("tool") if isinstance(doc, dict) else None
        if not isinstance(tool, dict) or tool.get("name") != "agent-eval":
            raise ResultsFileError(f"{where} is not an agent-eval results file")
        problems = schema_problems(doc)
        if problems:
            raise ResultsFileError(f"{where} does not match the results schema (schema_version "
                                   f"{str(doc.get('schema_version'))[:20]!r}): "
                                   + "; ".join(problems))
        try:
            results = clean_results(cls.from_dict(doc))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # pragma: no cover
            # the schema let through what from_dict cannot read: a bug, said in one line
            raise ResultsFileError(f"{where} cannot be read: {type(exc).__name__}: "
                                   f"{clean_name(str(exc), 200)} (this is a bug in "
                                   "agent-eval: the results schema allows it)") from None
        claim = untrue_claim(results)
        if claim is None:
            return results
        if results.tool_version != __version__:
            # (an earlier agent-eval's file: a verdict it worked out otherwise, not an edit)
            raise ResultsFileError(f"{where} is not a results file agent-eval {__version__} "
                                   f"would write: {claim}; it was edited, made by another "
                                   f"program, or written by agent-eval "
                                   f"{results.tool_version!r}, which may work a verdict out "
                                   f"otherwise: run agent-eval {__version__} again for "
                                   "results to read")
        raise ResultsFileError(f"{where} is not a results file agent-eval wrote: {claim}; "
                               "it was edited (or made by another program): run agent-eval "
                               "again for results to read")


def untrue_claim(results: Results) -> str | None:
    """What a results file (from anyone: a baseline, a fork's artifact) says that its own
    content contradicts, or None: a policy location outside the repository (every config
    file is inside the root; only a trace may be read from outside), a missed criterion
    with no location (its finding, which JUnit and SARIF show, needs one), a rule test's status
    better than its worst finding (or 'fail' or 'warn' with no finding that makes it so:
    no output could show it), the verdict better than its tests, scenarios, criteria
    and input errors give (:func:`verdict_of`). Rendered or merged as they were, such
    results showed "pass" over error findings and linked or located policy lines outside
    the repository."""
    if not repo_relative(results.config):
        return f"its suite file {results.config!r} is not a path inside the repository"
    for v in results.findings:  # ("": a section read without its location)
        if v.config.file and not repo_relative(v.config.file):
            return (f"a finding of {v.rule} is located at {v.config.file!r}, not a path "
                    "inside the repository")
    for c in results.criteria:  # its finding is what JUnit, SARIF and the lists show
        if c.status in ("fail", "warn") and not c.config.file:
            return (f"criterion {c.name!r} says '{c.status}' but names no location in the "
                    "suite (no output could show it: JUnit and SARIF passed it)")
    for t in results.tests:
        worst = "pass"
        for v in t.violations:
            worst = worse(worst, SEVERITY_VERDICT.get(v.severity, "pass"))
        if _RANK[worst] > _RANK.get(t.status, 0):
            return (f"test {t.id!r} says '{t.status}' but holds findings that make it "
                    f"'{worst}'")
        if t.status in ("fail", "warn") and _RANK[worst] < _RANK[t.status]:
            # (a test's status is its worst finding's: JUnit and SARIF, which show the
            # findings, showed no failure of a run whose verdict was fail)
            return (f"test {t.id!r} says '{t.status}' but holds no finding that makes it "
                    f"so (its worst is '{worst}'): no output could show it")
    due = verdict_of(results)
    if _RANK[due] > _RANK.get(results.verdict, 0):
        return f"its verdict says '{results.verdict}' but its content makes it '{due}'"
    return None


# ------------------------------------------------------------------------ schema
_SCHEMA_PROBLEMS = 3  # schema problems named in a message


def results_schema() -> dict[str, Any]:
    """The results JSON Schema (schemas/results.schema.json, shipped in the package),
    parsed anew."""
    text = (resources.files("agent_eval") / "schemas" / "results.schema.json").read_bytes()
    schema: dict[str, Any] = orjson.loads(text)
    return schema


@cache
def _validator() -> Any:
    import jsonschema  # type: ignore[import-untyped]  # lazy: start-up time

    return jsonschema.Draft202012Validator(results_schema())


def _where_in(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out.lstrip(".") or "(the document)"


# The arrays a results file holds by the thousand: each item is checked by one of the
# functions below (what the results JSON Schema's "violation" and "trace" say, written
# out: tests/test_results.py holds them to jsonschema on generated items), the rest of the
# document by jsonschema. jsonschema took 17 s for a results file of 51,366 findings and
# 10,000 traces (47 MB), where a baseline, `report`, `diff` or `merge` reads it.
_RULE_ID = re.compile(r"^[a-z_]+(/[a-z_]+)?$")  # the schema's patterns, as jsonschema
_FINGERPRINT = re.compile(r"^[0-9a-f]{32}$")  # runs them (re.search)
_FINDING_KEYS = frozenset(("rule", "severity", "message", "test", "tool", "argument", "value",
                           "constraint", "fingerprint", "config", "trace", "scenario"))
_FINDING_MORE = frozenset(("related", "details"))
_TRACE_KEYS = frozenset(("id", "file", "line", "scenario", "tool_calls", "failed_tests"))
_REF_KEYS = frozenset(("file", "line", "trace_id"))
_CONFIG_KEYS = frozenset(("file", "line", "column", "key_path"))


def _count(v: Any, least: int) -> bool:
    """A JSON Schema integer (1.0 is one, true is not) of at least ``least``."""
    kind = type(v)
    return ((kind is int or (kind is float and v.is_integer())) and v >= least)


def _text_or_null(v: Any) -> bool:
    return v is None or type(v) is str


def _trace_ref_ok(d: Any) -> bool:
    return (type(d) is dict and d.keys() == _REF_KEYS and type(d["file"]) is str
            and _count(d["line"], 0) and type(d["trace_id"]) is str)


def finding_ok(d: Any, *, fingerprinted: bool = True) -> bool:
    """Whether ``d`` is a finding as the results JSON Schema's ``violation`` allows
    (``fingerprinted=False``: as a shard's record holds it, before its fingerprint is
    given, ``""``)."""
    if type(d) is not dict:
        return False
    keys = d.keys()
    if not keys >= _FINDING_KEYS or (len(keys) > 12 and not keys <= _FINDING_KEYS
                                     | _FINDING_MORE):
        return False
    rule, message, config, trace = d["rule"], d["message"], d["config"], d["trace"]
    fingerprint = d["fingerprint"]
    if not (type(rule) is str and _RULE_ID.search(rule) is not None
            and d["severity"] in ("error", "warning", "note")
            and type(message) is str and len(message) >= 1 and type(d["test"]) is str
            and _text_or_null(d["tool"]) and _text_or_null(d["argument"])
            and _text_or_null(d["constraint"]) and _text_or_null(d["scenario"])
            and type(fingerprint) is str
            and (not fingerprinted or _FINGERPRINT.search(fingerprint) is not None)
            and type(config) is dict and config.keys() == _CONFIG_KEYS
            and type(config["file"]) is str and _count(config["line"], 1)
            and _count(config["column"], 1) and type(config["key_path"]) is str
            and (trace is None or _trace_ref_ok(trace))):
        return False
    related = d.get("related", [])
    if type(related) is not list or not all(_trace_ref_ok(r) for r in related):
        return False
    return "details" not in d or type(d["details"]) is dict


def trace_ok(d: Any) -> bool:
    """Whether ``d`` is a trace summary as the results JSON Schema's ``trace`` allows."""
    if type(d) is not dict or d.keys() != _TRACE_KEYS:
        return False
    failed = d["failed_tests"]
    return (type(d["id"]) is str and type(d["file"]) is str and _count(d["line"], 0)
            and _text_or_null(d["scenario"]) and _count(d["tool_calls"], 0)
            and type(failed) is list and all(type(t) is str for t in failed))


def _light(doc: Any) -> tuple[Any, bool, Any, Callable[[list[Any]], list[Any]]]:
    """``doc`` without the findings of its tests and its trace summaries (a shallow copy,
    for jsonschema), whether each of those is one (:func:`finding_ok`, :func:`trace_ok`),
    and, when some are not, ``doc`` with only the first few of those (:data:`_SCHEMA_PROBLEMS`
    per array, for jsonschema to name) and the function that turns a path in it into the
    path in ``doc``. An array that is not one is left for jsonschema to name."""
    if type(doc) is not dict:
        return doc, True, doc, list
    light = dict(doc)
    probe = dict(doc)
    where: dict[tuple[Any, ...], list[int]] = {}  # an array's path -> its items' indexes

    def bad_ones(items: list[Any], check: Callable[[Any], bool], path: tuple[Any, ...]
                 ) -> list[Any]:
        kept = []
        for i, item in enumerate(items):
            if not check(item):
                kept.append(item)
                where.setdefault(path, []).append(i)
                if len(kept) == _SCHEMA_PROBLEMS:
                    break
        return kept

    traces = doc.get("traces")
    if type(traces) is list:
        light["traces"] = []
        probe["traces"] = bad_ones(traces, trace_ok, ("traces",))
    tests = doc.get("tests")
    if type(tests) is list:
        light["tests"] = [dict(t, violations=[]) if type(t) is dict
                          and type(t.get("violations")) is list else t for t in tests]
        probe["tests"] = [dict(t, violations=bad_ones(t["violations"], finding_ok,
                                                      ("tests", n, "violations")))
                          if type(t) is dict and type(t.get("violations")) is list else t
                          for n, t in enumerate(tests)]

    def located(path: list[Any]) -> list[Any]:
        for n in (1, 3):  # traces[i] / tests[t].violations[i]: i in the probe's array
            at = tuple(path[:n])
            if at in where and len(path) > n and type(path[n]) is int:
                return [*path[:n], where[at][path[n]], *path[n + 1:]]
        return path

    return light, not where, probe, located


def schema_problems(doc: Any) -> list[str]:
    """The first problems of ``doc`` against the results JSON Schema (none: it matches),
    each ``at tests[0].status: …``, their text made safe to show (a key or a value quoted
    in a message is the file's)."""
    light, ok, probe, located = _light(doc)
    # every finding and trace summary is one: jsonschema checks the rest; else it checks
    # the rest and the first bad ones only (the whole of a large file took it minutes)
    problems = _problems(light if ok else probe, located)
    if not ok and not problems:  # (the fast checks and the schema disagree: a bug)
        problems = _problems(doc, list)  # pragma: no cover
    return problems


def _problems(doc: Any, located: Callable[[list[Any]], list[Any]]) -> list[str]:
    problems = []
    for error in _validator().iter_errors(doc):
        where = clean_name(_where_in(located(list(error.absolute_path))), 200)
        problems.append(f"at {where}: {clean_name(error.message, 200)}")
        if len(problems) == _SCHEMA_PROBLEMS:
            break
    return problems


def _optional(read: Any, value: Any) -> Any:
    return None if value is None else read(value)


def trace_dict(t: TraceSummary) -> dict[str, Any]:
    return {"id": t.id, "file": t.file, "line": t.line, "scenario": t.scenario,
            "tool_calls": t.tool_calls, "failed_tests": list(t.failed_tests)}


def exit_code(verdict: str, fail_on: str) -> ExitCode:
    """docs/results.md "Exit codes": 0 pass/warn, 1 fail (or warn under --fail-on warn), 2
    error; under ``--fail-on never`` 0 whatever the verdict, since the run completed and wrote its
    results (config and internal errors stop the run before there is a verdict: they
    exit 2 in the command line, whatever ``--fail-on`` says)."""
    if fail_on == "never":
        return ExitCode.OK
    if verdict == "error":
        return ExitCode.ERROR
    if verdict == "fail" or (verdict == "warn" and fail_on == "warn"):
        return ExitCode.FAIL
    return ExitCode.OK


# ------------------------------------------------------------------------ verdict
_RANK: dict[str, int] = {"pass": 0, "warn": 1, "fail": 2, "error": 3}
# pass_criteria whose threshold below 1.0 tolerates failed scenarios (while it is met)
TOLERANT_METRICS = ("pass_rate", "weighted_pass_rate")
BLOCKING_CRITERIA = ("blocking", "by_category", "composite", "required", "regression")


SEVERITY_VERDICT = {"error": "fail", "warning": "warn", "note": "pass"}


def criterion_finding(c: CriterionResult) -> Finding | None:
    """The finding of a criterion that was missed (``fail``) or only warned about
    (``warn``), located at its key (rule ``criteria/<kind>``); None for any other."""
    if c.status not in ("fail", "warn") or not c.config.file:
        return None
    return Finding(
        rule=c.rule.id, severity="error" if c.status == "fail" else "warning",
        message=c.message or c.name, test="pass_criteria", config=c.config,
        trace=None, value=c.value,
        constraint=None if c.threshold is None else f"{c.name}: {c.threshold}",
        fingerprint=c.fingerprint)


def worse(a: str, b: str) -> str:
    """The worse of two verdicts or statuses: pass < warn < fail < error (any other status,
    ``not_exercised``, counts as pass); ``a`` when they rank the same. The one ranking of
    verdicts (the results', a scenario's, the live probes')."""
    return b if _RANK.get(b, 0) > _RANK.get(a, 0) else a


def _below_one(c: CriterionResult) -> bool:
    t = c.threshold
    return isinstance(t, int | float) and not isinstance(t, bool) and t < 1


def tolerated(scenario: ScenarioResult, criteria: list[CriterionResult]) -> str | None:
    """Why a failed (or trace-less) scenario does not fail the suite, or None when it
    does (docs/scenarios.md "Verdict"): it is advisory (``gate: warn``), or a blocking
    ``min_pass_rate`` / ``min_weighted_pass_rate`` below 1.0, or a ``by_category`` rate
    below 1.0 for its category, allows failures and is met."""
    if scenario.gate == "warn":
        return "gate: warn"
    for c in criteria:
        if c.status != "pass" or not _below_one(c):
            continue
        if c.kind == "blocking" and c.metric in TOLERANT_METRICS:
            return f"{c.name}: {c.threshold}"
        if c.kind == "by_category" and c.name == scenario.category \
                and scenario.category is not None:
            return f"by_category {c.name}: {c.threshold}"
    return None


def scenario_verdict(scenarios: list[ScenarioResult], criteria: list[CriterionResult]
                     ) -> str:
    """What the scenarios and criteria say (docs/scenarios.md "Verdict and exit code"): fail
    for a missed blocking criterion or a failed / trace-less scenario that is not tolerated;
    warn for a tolerated one, a warn scenario or a missed warning criterion; else pass."""
    worst = "pass"
    for s in scenarios:
        if s.status in ("fail", "error"):
            worst = worse(worst, "warn" if tolerated(s, criteria) else "fail")
        elif s.status == "warn":
            worst = worse(worst, "warn")
    for c in criteria:
        if c.status == "fail":
            worst = worse(worst, "fail")
        elif c.status == "warn":
            worst = worse(worst, "warn")
    return worst


def verdict_of(results: Results) -> Verdict:
    """The verdict from everything the results hold: input errors and a test that checked
    no trace make it ``error``; then the worst of the rule tests (by their findings'
    severity) and of :func:`scenario_verdict`."""
    if results.input_errors:
        return "error"
    worst = "pass"
    for t in results.tests:
        worst = worse(worst, t.status)
    for f in results.unexercised:  # coverage/unexercised: a note unless made to count
        worst = worse(worst, SEVERITY_VERDICT[f.severity])
    if worst != "error":
        worst = worse(worst, scenario_verdict(results.scenarios, results.criteria))
    return worst  # type: ignore[return-value]


def partial_note(results: Results) -> str | None:
    """What a shard's partial results say of their verdict (None for a whole run's): it is
    its own traces' only, never the run's (the console, Markdown and HTML show it)."""
    if results.shard is None:
        return None
    i, n = results.shard.index, results.shard.count
    return (f"Partial results of shard {i}/{n}: the verdict of this shard's traces only, "
            "without the other shards' traces, the suite criteria or coverage; merge the "
            "shards (agent-eval merge) for the run's verdict.")


# the tolerance of a pass ratio's comparison (scenarios.metrics.EPSILON, a layer above)
RATE_TOLERANCE = 1e-9


def takes_any_failures(scenario: ScenarioResult) -> bool:
    """Whether no failed trace can fail the scenario: its ``min_pass_ratio`` is 0 (0 of n
    traces passed meets it). Having no trace, or a trace a judge check could not be made
    for, still makes it ``error``."""
    return scenario.min_pass_ratio <= RATE_TOLERANCE


def blocking_checks(results: Results) -> list[str]:
    """What in this suite can fail the run by what its traces do (empty: nothing can):
    error-severity tests, scenarios that are not advisory and that some failed trace can
    fail (not ``min_pass_ratio: 0``: see :func:`missing_trace_only`), blocking criteria."""
    out = [f"test {t.id}" for t in results.tests if t.severity == "error"]
    out += [f"scenario {s.id}" for s in results.scenarios
            if s.gate != "warn" and not takes_any_failures(s)]
    out += [f"criterion {c.name}" for c in results.criteria if c.kind in BLOCKING_CRITERIA]
    return out


def missing_trace_only(results: Results) -> list[str]:
    """The scenarios that are not advisory but that no failed trace can fail
    (``min_pass_ratio: 0``): only having no trace (or a judge check that could not be
    made) fails them, and the run with them."""
    return [s.id for s in results.scenarios if s.gate != "warn" and takes_any_failures(s)]


def failing_traces(findings: Iterable[Finding]) -> set[tuple[str, str]]:
    """(file, trace id) of the traces with an error-severity finding."""
    return {(v.trace.file, v.trace.trace_id) for v in findings
            if v.severity == "error" and v.trace is not None}


def test_dict(t: TestResult) -> dict[str, Any]:
    return {
        "id": t.id, "metric": t.metric, "severity": t.severity, "status": t.status,
        "duration_ms": t.duration_ms, "traces_checked": t.traces_checked,
        "traces_failed": t.traces_failed, "calls_checked": t.calls_checked,
        "violations": [finding_dict(v) for v in t.violations],
    }


def test_from(d: dict[str, Any]) -> TestResult:
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


def assign_fingerprints(findings: Iterable[Finding]) -> None:
    """Set ``fingerprint`` on findings given in trace order; identical ones get an
    occurrence suffix ``:2``, ``:3``…"""
    seen: dict[str, int] = {}
    for v in findings:
        fingerprint(v, seen)


def fingerprint(v: Finding, seen: dict[str, int], base: str | None = None) -> None:
    """Set the fingerprint of the next finding of :func:`assign_fingerprints`; ``seen``
    counts the findings before it by :func:`fingerprint_base` (``base``, when known)."""
    if base is None:
        base = fingerprint_base(v)
    n = seen.get(base, 0) + 1
    seen[base] = n
    key = base if n == 1 else f"{base}:{n}"
    v.fingerprint = hashlib.sha256(key.encode()).hexdigest()[:32]


def sort_key(v: Finding) -> tuple[Any, ...]:
    t = v.trace
    return (t.file if t else "~", t.line if t else 0, t.trace_id if t else "",
            v.config.file, v.config.line, v.config.col, v.rule, v.argument or "", v.message)


# ------------------------------------------------------------------ safe to show
def _bounds(limits: Limits) -> tuple[int, int, int, int]:
    """The lengths a cleaning cuts at: names and ids from traces (``max_name_chars``),
    free text and values (``max_value_chars``), and two that a suite's lower limits
    never lower: agent-eval's own words (rule ids, severities, statuses, kinds, metric
    and count names, fingerprints, its version; the suite's test and scenario ids) and the paths of
    files (the suite's, the trace files'). Cut at a suite's ``max_name_chars: 8`` they
    broke the results: counts without their keys (not the schema: no report, merge or
    baseline could read them; "in 0 traces"), a criterion kind no one knows (an internal
    error)."""
    name, size = limits.max_name_chars, limits.max_value_chars
    return (name, size, max(name, _OWN_CHARS), max(size, _PATH_CHARS))


_OWN_CHARS = DEFAULT.max_name_chars  # the least a suite's limits cut agent-eval's own words at
_PATH_CHARS = DEFAULT.max_value_chars  # and file paths at


def _ref(ref: TraceRef, name: int, size: int) -> TraceRef:
    tid, file = ref.trace_id, ref.file
    if len(tid) <= name and tid.isprintable() and len(file) <= size and file.isprintable():
        return ref
    return TraceRef(clean_name(file, size), ref.line, clean_name(tid, name))


def _shown(text: str, limit: int) -> bool:
    """Whether the cleaning functions leave ``text`` as it is: it is printable (no control
    character to escape) and not over ``limit``. The common case, tested first, so that a
    finding of plain text costs no cleaning call per field."""
    return len(text) <= limit and text.isprintable()


def _label(text: str, limit: int) -> str:
    """A name, id or path (from a trace, the suite or a results file): as it is when
    :func:`_shown`, else every control character escaped, line breaks too, and cut."""
    return text if len(text) <= limit and text.isprintable() else clean_name(text, limit)


def _labels(data: dict[str, Any], keys: tuple[str, ...], limit: int,
            path: int | None = None) -> dict[str, Any]:
    """``data`` (a section's dict, cleaned as free text) with the strings at ``keys``, and
    at ``file`` and ``key_path`` of its ``config`` (cut at ``path``, else ``limit``),
    shown as :func:`_label` shows them: names with no line break, as the same names
    elsewhere in the results."""
    for key in keys:
        value = data.get(key)
        if type(value) is str:
            data[key] = _label(value, limit)
    config = data.get("config")
    if type(config) is dict:
        for key in ("file", "key_path"):
            if type(config.get(key)) is str:
                config[key] = _label(config[key], limit if path is None else path)
    return data


def _plain_details(details: dict[str, Any], limit: int) -> bool:
    """Whether :func:`clean_strings` would give ``details`` back unchanged: string keys
    and scalar values, every string shown as it is."""
    for key, value in details.items():
        if type(key) is not str or not _shown(key, limit):
            return False
        kind = type(value)
        if kind is str:
            if not _shown(value, limit):
                return False
        elif value is not None and kind is not int and kind is not float and kind is not bool:
            return False
    return True


def clean_finding(v: Finding, limits: Limits) -> None:
    """A finding made safe to show, in place (agent_eval.safetext): its names, ids and
    paths as :func:`_label` (no control character, no line break), its message,
    constraint, value and details as free text (control characters escaped but tabs and
    line breaks)."""
    # _bounds(limits), inline (once per finding)
    name, size = limits.max_name_chars, limits.max_value_chars
    own = name if name >= _OWN_CHARS else _OWN_CHARS
    path = size if size >= _PATH_CHARS else _PATH_CHARS
    # each test inline is _shown's: the field is left as it is (most are)
    message, tool, argument, constraint, scenario, value = (
        v.message, v.tool, v.argument, v.constraint, v.scenario, v.value)
    rule, test, severity, fingerprint, config = (
        v.rule, v.test, v.severity, v.fingerprint, v.config)
    if len(message) > size or not message.isprintable():
        v.message = clean_text(message, size)
    if len(rule) > own or not rule.isprintable():
        v.rule = clean_name(rule, own)
    if len(test) > own or not test.isprintable():
        v.test = clean_name(test, own)
    if len(severity) > own or not severity.isprintable():
        v.severity = clean_name(severity, own)  # type: ignore[assignment]
    if len(fingerprint) > own or not fingerprint.isprintable():
        v.fingerprint = clean_name(fingerprint, own)
    file, key_path = config.file, config.key_path
    if (len(file) > path or not file.isprintable() or len(key_path) > path
            or not key_path.isprintable()):
        v.config = ConfigRef(clean_name(file, path), config.line, config.col,
                             clean_name(key_path, path))
    if tool is not None and (len(tool) > name or not tool.isprintable()):
        v.tool = clean_name(tool, name)
    if argument is not None and (len(argument) > name or not argument.isprintable()):
        v.argument = clean_name(argument, name)
    if value is not None and (type(value) is not str or len(value) > size
                              or not value.isprintable()):
        v.value = clean_value(value, limits)
    if constraint is not None and (len(constraint) > size or not constraint.isprintable()):
        v.constraint = clean_text(constraint, size)
    # a suite's scenario id (a trace's scenario name was cut when it was read)
    if scenario is not None and (len(scenario) > own or not scenario.isprintable()):
        v.scenario = clean_name(scenario, own)
    if v.trace is not None:
        v.trace = _ref(v.trace, name, path)
    if v.related:
        v.related = tuple(_ref(r, name, path) for r in v.related)
    if v.details and not _plain_details(v.details, size):
        v.details = clean_strings(v.details, size)


def clean_test(t: TestResult, limits: Limits) -> None:
    """A rule test's result made safe to show, in place: its id, metric, severity and
    status as :func:`_label`, its findings held in memory by :func:`clean_finding`
    (spilled ones were cleaned when they were written)."""
    own = _bounds(limits)[2]
    t.id = _label(t.id, own)
    t.metric = _label(t.metric, own)
    t.severity = _label(t.severity, own)
    t.status = _label(t.status, own)  # type: ignore[assignment]
    if isinstance(t.violations, list):
        for v in t.violations:
            clean_finding(v, limits)


def clean_input_error(e: InputError, limits: Limits) -> InputError:
    """An input error made safe to show: its rule and file as :func:`_label`, its message
    as free text."""
    _, size, own, path = _bounds(limits)
    return InputError(_label(e.rule, own), _label(e.file, path), e.line,
                      clean_text(e.message, size))


def clean_scenario(s: ScenarioResult, limits: Limits = DEFAULT) -> ScenarioResult:
    """Every string of a scenario made safe, its findings as findings; its outputs (for
    the next run's pairwise judge, never shown) are kept as they were (docs/judge.md)."""
    for f in s.findings:
        clean_finding(f, limits)
    data = s.to_dict()
    data.pop("findings")
    outputs = data.pop("outputs", None)
    _, _, own, path = _bounds(limits)
    data = _labels(clean_strings(data, path), ("id", "category", "status", "gate"), own,
                   path)
    data["traces_not_passed"] = [clean_trace_status(t, limits)
                                 for t in data.get("traces_not_passed") or ()]
    if data.get("judge"):
        data["judge"] = [_labels(j, ("kind", "name", "severity"), own)
                         for j in data["judge"]]
    cleaned = ScenarioResult.from_dict(data)
    return replace(cleaned, findings=s.findings, outputs=outputs)


def clean_trace(t: TraceSummary, limits: Limits = DEFAULT) -> TraceSummary:
    """A trace's summary (an item of ``traces``) as :func:`clean_results` shows it: so
    `merge` compares a part's records with its results read back."""
    name, _, own, path = _bounds(limits)
    if (_shown(t.id, name) and _shown(t.file, path)
            and (t.scenario is None or _shown(t.scenario, name))
            and all(_shown(f, own) for f in t.failed_tests)):
        return t
    return TraceSummary(clean_name(t.id, name), _label(t.file, path), t.line,
                        None if t.scenario is None else clean_name(t.scenario, name),
                        t.tool_calls, tuple(_label(f, own) for f in t.failed_tests))


def clean_trace_status(t: dict[str, Any], limits: Limits = DEFAULT) -> dict[str, Any]:
    """A scenario's trace that did not pass (an item of ``traces_not_passed``, as a dict)
    as :func:`clean_results` shows it: so `merge` compares a part's records with its
    results read back."""
    name, _, own, path = _bounds(limits)
    return _labels(_labels(_labels(clean_strings(t, path), ("file",), path), ("trace_id",),
                           name), ("status",), own)


def _clean_keys(d: dict[str, Any], limit: int) -> dict[str, Any]:
    """A mapping whose keys are names (files, metrics): each key as :func:`_label`, each
    string value as free text."""
    if all(type(k) is str and _shown(k, limit) and (type(v) is not str or _shown(v, limit))
           for k, v in d.items()):
        return d
    return {_label(str(k), limit): clean_text(v, limit) if type(v) is str else v
            for k, v in d.items()}


def clean_results(results: Results, limits: Limits = DEFAULT) -> Results:
    """Every string of ``results`` made safe to show (in place; returned for
    convenience): what traces wrote, and what the suite named (the suite, tests,
    scenarios, categories, criteria), for a results file may hold anything there. Names,
    ids and paths lose every control character, line breaks too (:func:`_label`); free
    text (messages) keeps tabs and line breaks, escaped where an output is made of lines.
    Work per finding, not per tool call."""
    _, _, own, path = _bounds(limits)
    results.suite = _label(results.suite, path)
    results.config = _label(results.config, path)
    results.tool_version = _label(results.tool_version, own)
    results.counts = _clean_keys(results.counts, own)
    for t in results.tests:
        clean_test(t, limits)
    results.traces = [clean_trace(t, limits) for t in results.traces]
    results.input_errors = [clean_input_error(e, limits) for e in results.input_errors]
    results.ignored_events = _clean_keys(results.ignored_events, path)
    results.formats = _clean_keys(results.formats, path)
    results.metrics = _clean_keys(results.metrics, own)  # pass_rate.<category>
    results.scenarios = [clean_scenario(s, limits) for s in results.scenarios]
    results.criteria = [
        CriterionResult.from_dict(_labels(clean_strings(c.to_dict(), path),
                                          ("name", "kind", "metric", "status", "fingerprint"),
                                          own, path))
        for c in results.criteria]
    for v in results.unexercised:
        clean_finding(v, limits)
    if results.inventory is not None:
        results.inventory = Inventory.from_dict(clean_strings(results.inventory.to_dict(),
                                                              path))
    if results.baseline is not None:
        results.baseline = sections.baseline_from(clean_strings(results.baseline.to_dict(),
                                                                path))
    if results.judge is not None:
        results.judge = sections.JudgeSummary.from_dict(clean_strings(results.judge.to_dict(),
                                                                      path))
    return results
