"""The typed sections of a results object (docs/results.md): the scenarios, the criteria,
the suite metrics, the comparison with a baseline, the inventory of the configured rules,
the judge's summary and a shard's records.

Each section is a frozen, slotted dataclass whose ``to_dict`` writes exactly the JSON of
results.json (keys in the documented order; schemas/results.schema.json is the contract)
and whose ``from_dict`` reads it back. ``from_dict`` is lenient where results files of
earlier versions lack a key: the key gets its neutral value (nothing found, unknown). A
section is changed by making a new one (:func:`dataclasses.replace`), never in place.

The sections every run may make are here; the comparison with a base run
(:mod:`.baseline`), the judge's summary (:mod:`.judge`) and a shard's records
(:mod:`.shard`) are in modules of their own, imported when one of their names is first
asked for, here or there (start-up time, docs/performance.md: each dataclass is made by
``exec`` when its module is imported).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from agent_eval.sections.baseline import (
        Baseline,
        Comparison,
        DeltaRow,
        NoBaseline,
        PolicyChange,
        ScenarioChange,
        baseline_from,
    )
    from agent_eval.sections.judge import JudgeSummary
    from agent_eval.sections.shard import ShardInfo

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


# the names of the sections' own modules, by the module (imported on first use)
_ELSEWHERE = {
    **dict.fromkeys(("Baseline", "Comparison", "DeltaRow", "NoBaseline", "PolicyChange",
                     "ScenarioChange", "baseline_from"), "baseline"),
    "JudgeSummary": "judge",
    "ShardInfo": "shard",
}


def __getattr__(name: str) -> Any:
    where = _ELSEWHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{where}"), name)
    globals()[name] = value
    return value
