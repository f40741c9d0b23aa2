"""The comparison with a base run (docs/results.md "baseline"): :class:`Comparison`, or
:class:`NoBaseline` and why. Imported when first asked for (``agent_eval.sections``
names them too): a run without a baseline never makes them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_eval.findings import Finding, finding_dict, finding_from
from agent_eval.sections import SUMMARY_COUNTS, Metrics, Source

__all__ = ["Baseline", "Comparison", "DeltaRow", "NoBaseline", "PolicyChange",
           "ScenarioChange", "baseline_from"]


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
    # ``unchanged`` as a set, for :meth:`state_of` (a tuple was scanned once per finding:
    # SARIF's 25,000 results against 72,000 unchanged findings took 7 s, and minutes as
    # the run grew)
    _unchanged_set: frozenset[str] = field(init=False, repr=False, compare=False,
                                           default=frozenset())

    def __post_init__(self) -> None:
        object.__setattr__(self, "_unchanged_set", frozenset(self.unchanged))

    @property
    def regressions(self) -> int:
        return len(self.regressed)

    @property
    def fixes(self) -> int:
        return len(self.fixed)

    @property
    def removed(self) -> list[ScenarioChange]:
        """The base run's scenarios the head run lacks: a suite's figures improve when a
        failing scenario is dropped, which no other number shows."""
        return [s for s in self.scenarios if s.change == "removed"]

    def summary_counts(self) -> dict[str, int]:
        """The base run's numbers as every report shows them (as
        ``Results.summary_counts``)."""
        c = self.counts
        return {name: int(c[key]) for name, key in SUMMARY_COUNTS.items()
                if isinstance(c.get(key), int)}

    def versions_differ(self, head_version: str | None) -> str | None:
        """That the base run was made by another agent-eval than the run compared with it
        (made by ``head_version``): its figures and fingerprints are that version's, and
        one the versions work out otherwise shows as a change. None when the same."""
        base = self.tool_version
        if not base or not head_version or base == head_version:
            return None
        return (f"the base run was made by agent-eval {base}, this run by {head_version}: "
                "a figure or finding that the two versions work out otherwise shows as a "
                "change")

    def state_of(self, finding: Finding) -> str:
        """``unchanged`` when the base run had the finding too, else ``new``."""
        return "unchanged" if finding.fingerprint in self._unchanged_set else "new"

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
