"""The typed sections of a results object (docs/results.md): the scenarios, the criteria,
the suite metrics, the comparison with a baseline, the inventory of the configured rules,
the judge's summary and a shard's records.

Each section is a frozen, slotted dataclass whose ``to_dict`` writes exactly the JSON of
results.json (keys in the documented order; schemas/results.schema.json is the contract)
and whose ``from_dict`` reads it back. ``from_dict`` is lenient where results files of
earlier versions lack a key: the key gets its neutral value (nothing found, unknown). A
section is changed by making a new one (:func:`dataclasses.replace`), never in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_eval.findings import ConfigRef, Finding, finding_dict, finding_from
from agent_eval.rule_ids import (
    CRITERIA_BLOCKING,
    CRITERIA_BY_CATEGORY,
    CRITERIA_COMPOSITE,
    CRITERIA_REGRESSION,
    CRITERIA_REQUIRED,
    CRITERIA_WARNING,
    Rule,
)

__all__ = [
    "CRITERION_RULES",
    "NO_CONFIG",
    "SUMMARY_COUNTS",
    "Baseline",
    "Comparison",
    "CriterionResult",
    "DeltaRow",
    "Inventory",
    "JudgeCheckResult",
    "JudgeSummary",
    "Metrics",
    "NoBaseline",
    "PolicyChange",
    "ScenarioChange",
    "ScenarioResult",
    "ShardInfo",
    "Source",
    "TraceStatus",
    "baseline_from",
]

# The suite metrics (docs/scenarios.md "Suite metrics"): name -> value, null when unknown
# or not defined; category pass rates are ``pass_rate.<category>``. An open table (the
# categories are the suite's own), so a mapping, in the order it is reported.
Metrics = dict[str, float | int | None]
# Where a base run came from: ``kind`` (file, git, artifact, results, none) and its
# details (path, sha, ref, artifact, branch, run_id, description).
Source = dict[str, str | int | None]
NO_CONFIG = ConfigRef("", 0, 0, "")  # a section read from a file that lacks its location

# The suite's numbers every report shows, by name, and their results.json counts keys
SUMMARY_COUNTS = {"traces": "traces", "tool calls": "tool_calls", "violations": "violations",
                  "input errors": "input_errors", "traces failing": "traces_failing"}


def _config(d: Any) -> ConfigRef:
    return ConfigRef.from_dict(d) if isinstance(d, dict) else NO_CONFIG


# ------------------------------------------------------------------------ scenarios
@dataclass(frozen=True, slots=True)
class TraceStatus:
    """A trace of a scenario that did not pass (``traces_not_passed``)."""

    file: str
    line: int
    trace_id: str
    status: str  # warn | fail | error

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "trace_id": self.trace_id,
                "status": self.status}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TraceStatus:
        return cls(d["file"], d["line"], d["trace_id"], d["status"])


@dataclass(frozen=True, slots=True)
class JudgeCheckResult:
    """One judge check of a scenario (docs/judge.md "In the results"): its traces by
    status and its mean score on 0-1."""

    kind: str
    name: str
    threshold: float | None
    pass_score: float | None
    in_score: bool
    severity: str
    counts: dict[str, int]  # pass, warn, fail, skip, error
    mean_score: float | None
    config: ConfigRef

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "threshold": self.threshold,
                "pass_score": self.pass_score, "in_score": self.in_score,
                "severity": self.severity, "counts": dict(self.counts),
                "mean_score": self.mean_score, "config": self.config.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> JudgeCheckResult:
        return cls(d["kind"], d["name"], d.get("threshold"), d.get("pass_score"),
                   bool(d.get("in_score")), d.get("severity", "error"),
                   dict(d.get("counts") or {}), d.get("mean_score"), _config(d.get("config")))


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """One scenario (docs/scenarios.md): its status from its traces, its score and
    figures, its findings, and the traces that did not pass."""

    id: str
    status: str  # pass | warn | fail | error
    category: str | None = None
    required: bool = False
    gate: str | None = None  # fail | warn; None: not written (results before it existed)
    weight: float = 1.0
    score: float | None = None
    traces_total: int = 0
    traces_passed: int = 0
    trace_pass_rate: float | None = None
    min_pass_ratio: float = 1.0
    duration_ms: int = 0
    metrics: dict[str, float | str] = field(default_factory=dict)  # mean figures
    not_recorded: dict[str, int] = field(default_factory=dict)  # figure -> traces
    config: ConfigRef = NO_CONFIG
    findings: tuple[Finding, ...] = ()
    traces_not_passed: tuple[TraceStatus, ...] = ()
    judge: tuple[JudgeCheckResult, ...] | None = None  # with judge checks only
    # trace id -> output, kept for the next run's pairwise judge checks (never shown)
    outputs: dict[str, str] | None = None

    @property
    def ok(self) -> bool:
        return self.status in ("pass", "warn")

    @property
    def cost_usd(self) -> float | None:
        """The scenario's mean cost per trace, when recorded."""
        cost = self.metrics.get("cost_usd")
        return cost if isinstance(cost, int | float) else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "category": self.category,
                               "required": self.required}
        if self.gate is not None:
            out["gate"] = self.gate
        out.update({
            "weight": self.weight,
            "status": self.status,
            "score": self.score,
            "traces_total": self.traces_total,
            "traces_passed": self.traces_passed,
            "trace_pass_rate": self.trace_pass_rate,
            "min_pass_ratio": self.min_pass_ratio,
            "duration_ms": self.duration_ms,
            "metrics": dict(self.metrics),
            "not_recorded": dict(self.not_recorded),
            "config": self.config.to_dict(),
            "traces_not_passed": [t.to_dict() for t in self.traces_not_passed],
        })
        if self.judge is not None:
            out["judge"] = [j.to_dict() for j in self.judge]
        if self.outputs is not None:
            out["outputs"] = dict(self.outputs)
        # last, as results files have always had it (the findings were made safe apart)
        out["findings"] = [finding_dict(f) for f in self.findings]
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ScenarioResult:
        judge = d.get("judge")
        outputs = d.get("outputs")
        return cls(
            id=str(d["id"]), status=d["status"], category=d.get("category"),
            required=bool(d.get("required")), gate=d.get("gate"),
            weight=d.get("weight", 1.0), score=d.get("score"),
            traces_total=d.get("traces_total", 0), traces_passed=d.get("traces_passed", 0),
            trace_pass_rate=d.get("trace_pass_rate"),
            min_pass_ratio=d.get("min_pass_ratio", 1.0), duration_ms=d.get("duration_ms", 0),
            metrics=dict(d.get("metrics") or {}), not_recorded=dict(d.get("not_recorded") or {}),
            config=_config(d.get("config")),
            findings=tuple(finding_from(f) for f in d.get("findings") or ()),
            traces_not_passed=tuple(TraceStatus.from_dict(t)
                                    for t in d.get("traces_not_passed") or ()),
            judge=None if judge is None else tuple(JudgeCheckResult.from_dict(j)
                                                   for j in judge),
            outputs=None if outputs is None else dict(outputs),
        )


# ------------------------------------------------------------------------- criteria
# the rule a missed criterion of each kind reports, by kind
CRITERION_RULES: dict[str, Rule] = {r.key: r for r in (
    CRITERIA_BLOCKING, CRITERIA_WARNING, CRITERIA_BY_CATEGORY, CRITERIA_COMPOSITE,
    CRITERIA_REQUIRED, CRITERIA_REGRESSION)}


@dataclass(frozen=True, slots=True)
class CriterionResult:
    """One ``pass_criteria`` entry (docs/scenarios.md "Pass criteria")."""

    name: str  # min_pass_rate, a category, composite, required:<scenario id>, ...
    kind: str  # blocking | warning | by_category | composite | required | regression
    metric: str
    threshold: float | None
    value: float | str | None
    status: str  # pass | warn | fail | skip
    message: str
    config: ConfigRef
    fingerprint: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "metric": self.metric,
                "threshold": self.threshold, "value": self.value, "status": self.status,
                "message": self.message, "config": self.config.to_dict(),
                "fingerprint": self.fingerprint}

    @property
    def rule(self) -> Rule:
        """The rule of its finding when it is missed (``criteria/<kind>``)."""
        return CRITERION_RULES[self.kind]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CriterionResult:
        kind = str(d.get("kind", "blocking"))
        if kind not in CRITERION_RULES:  # the schema's enum; every rule id is declared
            raise ValueError(f"unknown criterion kind {kind!r}")
        return cls(str(d.get("name", "")), kind,
                   str(d.get("metric", "")), d.get("threshold"), d.get("value"),
                   str(d.get("status", "pass")), str(d.get("message") or ""),
                   _config(d.get("config")), str(d.get("fingerprint") or ""))


# ------------------------------------------------------------------------ inventory
@dataclass(frozen=True, slots=True)
class Inventory:
    """The configured rules (suite.inventory): how a comparison tells that the policy
    changed between base and head."""

    digest: str  # of the config and policy files
    rules: dict[str, str]  # file#key.path -> digest of its value

    def to_dict(self) -> dict[str, Any]:
        return {"digest": self.digest, "rules": dict(self.rules)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Inventory:
        return cls(str(d.get("digest", "")), dict(d.get("rules") or {}))


# ----------------------------------------------------------------------- comparison
@dataclass(frozen=True, slots=True)
class DeltaRow:
    """One figure of both runs: base, head and the difference (None: not numbers)."""

    name: str
    base: Any  # a count or metric of the base run as it wrote it (JSON)
    head: Any
    delta: float | int | None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "base": self.base, "head": self.head,
                "delta": self.delta}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DeltaRow:
        return cls(str(d["name"]), d.get("base"), d.get("head"), d.get("delta"))


@dataclass(frozen=True, slots=True)
class ScenarioChange:
    """A scenario in the base and head runs."""

    id: str
    change: str  # same | changed | regression | fix | added | removed
    base_status: str | None
    head_status: str | None
    base_score: float | None
    head_score: float | None
    score_delta: float | None
    base_cost_usd: float | None = None
    head_cost_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "change": self.change, "base_status": self.base_status,
                "head_status": self.head_status, "base_score": self.base_score,
                "head_score": self.head_score, "score_delta": self.score_delta,
                "base_cost_usd": self.base_cost_usd, "head_cost_usd": self.head_cost_usd}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ScenarioChange:
        return cls(str(d.get("id")), str(d.get("change", "same")), d.get("base_status"),
                   d.get("head_status"), d.get("base_score"), d.get("head_score"),
                   d.get("score_delta"), d.get("base_cost_usd"), d.get("head_cost_usd"))


@dataclass(frozen=True, slots=True)
class PolicyChange:
    """Rules added, removed and changed between the two runs' inventories."""

    known: bool
    changed: bool
    added: tuple[str, ...]
    removed: tuple[str, ...]
    modified: tuple[str, ...]
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"known": self.known, "changed": self.changed, "added": list(self.added),
                "removed": list(self.removed), "modified": list(self.modified),
                "message": self.message}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PolicyChange:
        return cls(bool(d.get("known")), bool(d.get("changed")),
                   tuple(d.get("added") or ()), tuple(d.get("removed") or ()),
                   tuple(d.get("modified") or ()), str(d.get("message") or ""))


@dataclass(frozen=True, slots=True)
class Comparison:
    """The run compared with a base run (docs/results.md "baseline")."""

    source: Source
    suite: str  # the base run's
    verdict: str  # the base run's
    tool_version: str | None  # the base run's agent-eval
    counts: dict[str, int]  # the base run's counts, with traces_failing
    metrics: Metrics  # the base run's suite metrics
    count_deltas: tuple[DeltaRow, ...]
    metric_deltas: tuple[DeltaRow, ...]
    scenarios: tuple[ScenarioChange, ...]
    regressed: tuple[str, ...]  # scenario ids, pass -> fail
    fixed: tuple[str, ...]  # scenario ids, fail -> pass
    new_violations: int  # error and warning findings only
    unchanged_violations: int
    absent_violations: int
    new: tuple[str, ...]  # fingerprints of the head's findings the base run lacks
    unchanged: tuple[str, ...]  # ... and of those it had too
    absent: tuple[Finding, ...]  # the base run's findings the head lacks
    policy: PolicyChange

    @property
    def regressions(self) -> int:
        return len(self.regressed)

    @property
    def fixes(self) -> int:
        return len(self.fixed)

    def summary_counts(self) -> dict[str, int]:
        """The base run's numbers as every report shows them (as
        ``Results.summary_counts``)."""
        c = self.counts
        return {name: int(c[key]) for name, key in SUMMARY_COUNTS.items()
                if isinstance(c.get(key), int)}

    def state_of(self, finding: Finding) -> str:
        """``unchanged`` when the base run had the finding too, else ``new``."""
        return "unchanged" if finding.fingerprint in self.unchanged else "new"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": dict(self.source), "suite": self.suite,
                               "verdict": self.verdict}
        if self.tool_version is not None:
            out["tool_version"] = self.tool_version
        out.update({
            "counts": dict(self.counts),
            "metrics": dict(self.metrics),
            "deltas": {"counts": [r.to_dict() for r in self.count_deltas],
                       "metrics": [r.to_dict() for r in self.metric_deltas]},
            "scenarios": [s.to_dict() for s in self.scenarios],
            "regressions": self.regressions,
            "fixes": self.fixes,
            "regressed": list(self.regressed),
            "fixed": list(self.fixed),
            "new_violations": self.new_violations,
            "unchanged_violations": self.unchanged_violations,
            "absent_violations": self.absent_violations,
            "findings": {"new": list(self.new), "unchanged": list(self.unchanged),
                         "absent": [finding_dict(f) for f in self.absent]},
            "policy": self.policy.to_dict(),
        })
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Comparison:
        deltas = d.get("deltas") or {}
        found = d.get("findings") or {}
        return cls(
            source=dict(d.get("source") or {"kind": "results"}),
            suite=str(d.get("suite", "")), verdict=str(d.get("verdict", "")),
            tool_version=d.get("tool_version"), counts=dict(d.get("counts") or {}),
            metrics=dict(d.get("metrics") or {}),
            count_deltas=tuple(DeltaRow.from_dict(r) for r in deltas.get("counts") or ()),
            metric_deltas=tuple(DeltaRow.from_dict(r) for r in deltas.get("metrics") or ()),
            scenarios=tuple(ScenarioChange.from_dict(s) for s in d.get("scenarios") or ()),
            regressed=tuple(d.get("regressed") or ()), fixed=tuple(d.get("fixed") or ()),
            new_violations=int(d.get("new_violations") or 0),
            unchanged_violations=int(d.get("unchanged_violations") or 0),
            absent_violations=int(d.get("absent_violations") or 0),
            new=tuple(found.get("new") or ()), unchanged=tuple(found.get("unchanged") or ()),
            absent=tuple(finding_from(f) for f in found.get("absent") or ()),
            policy=PolicyChange.from_dict(d.get("policy") or {}),
        )


@dataclass(frozen=True, slots=True)
class NoBaseline:
    """A comparison was asked for and none could be made: why, and how to get one."""

    reason: str
    source: Source = field(default_factory=lambda: {"kind": "none"})

    def to_dict(self) -> dict[str, Any]:
        return {"source": dict(self.source), "available": False, "reason": self.reason}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> NoBaseline:
        return cls(str(d.get("reason") or "no baseline"), dict(d.get("source") or {}))


Baseline = Comparison | NoBaseline


def baseline_from(d: dict[str, Any]) -> Baseline:
    """The ``baseline`` of results.json (not null)."""
    return NoBaseline.from_dict(d) if d.get("available") is False else Comparison.from_dict(d)


# ---------------------------------------------------------------------------- judge
@dataclass(frozen=True, slots=True)
class JudgeSummary:
    """How the run judged, the judgements it used and lacked, and what judging cost
    (docs/judge.md "In the results and the reports")."""

    mode: str  # replay | record | refresh
    provider: str | None
    model: str | None
    store: str  # repository-relative
    checks: dict[str, int]  # (trace, check) pairs by status
    judgements_used: int
    judgements_missing: int
    store_conflicts: int
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None  # when the judgements used were recorded (None: no price)
    calls: int  # to the judge model in this run
    recorded: int
    cost_usd_this_run: float
    command: str | None  # records the missing judgements

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "provider": self.provider, "model": self.model,
                "store": self.store, "checks": dict(self.checks),
                "judgements_used": self.judgements_used,
                "judgements_missing": self.judgements_missing,
                "store_conflicts": self.store_conflicts, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "cost_usd": self.cost_usd,
                "calls": self.calls, "recorded": self.recorded,
                "cost_usd_this_run": self.cost_usd_this_run, "command": self.command}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> JudgeSummary:
        return cls(str(d.get("mode", "replay")), d.get("provider"), d.get("model"),
                   str(d.get("store", "")), dict(d.get("checks") or {}),
                   int(d.get("judgements_used") or 0), int(d.get("judgements_missing") or 0),
                   int(d.get("store_conflicts") or 0), d.get("input_tokens"),
                   d.get("output_tokens"), d.get("cost_usd"), int(d.get("calls") or 0),
                   int(d.get("recorded") or 0), d.get("cost_usd_this_run", 0.0),
                   d.get("command"))


# ---------------------------------------------------------------------------- shard
@dataclass(frozen=True, slots=True)
class ShardInfo:
    """What the partial results of ``run --shard i/n`` hold for ``merge``
    (docs/results.md "Shards"; the records are sharding.py's replay format)."""

    index: int
    count: int
    config_digest: str | None
    traces_read: int
    records: tuple[dict[str, Any], ...]  # one per item read, in the unsharded order
    format: int = 1
    seconds: dict[str, float] | None = None  # per test
    scenario_seconds: tuple[float, ...] | None = None
    coverage: dict[str, Any] | None = None  # what the shard's traces exercised
    live: dict[str, Any] | None = None  # the live probes' outcome (shard 1)

    @property
    def automation_suffix(self) -> str:
        """The part of SARIF's ``automationDetails.id`` that tells shards apart."""
        return f"shard-{self.index}-of-{self.count}/"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": self.format, "index": self.index,
                               "count": self.count, "config_digest": self.config_digest,
                               "traces_read": self.traces_read}
        if self.seconds is not None:
            out["seconds"] = dict(self.seconds)
        if self.scenario_seconds is not None:
            out["scenario_seconds"] = list(self.scenario_seconds)
        out["records"] = list(self.records)
        if self.coverage is not None:
            out["coverage"] = self.coverage
        if self.live is not None:
            out["live"] = self.live
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ShardInfo:
        seconds = d.get("seconds")
        scenario_seconds = d.get("scenario_seconds")
        return cls(index=d["index"], count=d["count"], config_digest=d.get("config_digest"),
                   traces_read=d.get("traces_read", 0), records=tuple(d["records"]),
                   format=d.get("format", 1),
                   seconds=None if seconds is None else dict(seconds),
                   scenario_seconds=None if scenario_seconds is None
                   else tuple(scenario_seconds),
                   coverage=d.get("coverage"), live=d.get("live"))
