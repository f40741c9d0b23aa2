"""What a check returns: findings, each with a config location and a trace location."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["GATE_SEVERITIES", "SEVERITIES", "UNRANKED", "ConfigRef", "Finding", "Severity",
           "TraceRef", "by_severity", "count_violations", "finding_dict", "finding_from",
           "severity_rank"]

Severity = Literal["error", "warning", "note"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "note")  # the most severe first
_RANK: dict[str, int] = {severity: rank for rank, severity in enumerate(SEVERITIES)}
UNRANKED = 9  # any other value: after every severity
# the findings that are violations: what the baseline comparison's new_violations and the
# action's violations / new-violations outputs count (a note is reported, not counted)
GATE_SEVERITIES: tuple[Severity, ...] = ("error", "warning")


def severity_rank(severity: str) -> int:
    """Where a severity sorts, the most severe first: ``error`` 0, ``warning`` 1, ``note``
    2, anything else (SARIF's level ``none``, a results file's unknown value)
    :data:`UNRANKED`. The one ranking every output orders its findings by."""
    return _RANK.get(severity, UNRANKED)


def count_violations(findings: Iterable[Finding]) -> int:
    """How many of ``findings`` are violations (severity in :data:`GATE_SEVERITIES`)."""
    return sum(1 for v in findings if v.severity in GATE_SEVERITIES)


@dataclass(frozen=True, slots=True)
class ConfigRef:
    """The policy/config key that was violated."""

    file: str
    line: int
    col: int
    key_path: str  # e.g. tools.apply_discount.arguments.percent.max (stable, no line numbers)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "column": self.col,
                "key_path": self.key_path}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ConfigRef:
        return cls(d["file"], d["line"], d["column"], d["key_path"])


@dataclass(frozen=True, slots=True)
class TraceRef:
    """The trace line that violated it."""

    file: str
    line: int
    trace_id: str

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "trace_id": self.trace_id}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TraceRef:
        return cls(d["file"], d["line"], d["trace_id"])


@dataclass(slots=True)
class Finding:
    """One reported problem: the rule broken, where in the config and in the traces,
    and what was found (docs/results.md)."""

    rule: str
    severity: Severity
    message: str
    test: str
    config: ConfigRef
    trace: TraceRef | None
    tool: str | None = None
    argument: str | None = None
    value: Any = None
    constraint: str | None = None
    scenario: str | None = None
    related: tuple[TraceRef, ...] = ()  # further trace lines (e.g. the other calls)
    details: dict[str, Any] = field(default_factory=dict)
    fingerprint: str = ""


def finding_dict(v: Finding) -> dict[str, Any]:
    """A finding as results.json writes it (docs/results.md "violations")."""
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
        "config": v.config.to_dict(),
        "trace": None if v.trace is None else v.trace.to_dict(),
        "scenario": v.scenario,
    }
    if v.related:
        out["related"] = [r.to_dict() for r in v.related]
    if v.details:
        out["details"] = v.details
    return out


def finding_from(d: dict[str, Any]) -> Finding:
    """The finding :func:`finding_dict` wrote."""
    t = d.get("trace")
    return Finding(
        rule=d["rule"], severity=d["severity"], message=d["message"], test=d["test"],
        config=ConfigRef.from_dict(d["config"]),
        trace=None if t is None else TraceRef.from_dict(t),
        tool=d.get("tool"), argument=d.get("argument"), value=d.get("value"),
        constraint=d.get("constraint"), scenario=d.get("scenario"),
        related=tuple(TraceRef.from_dict(r) for r in d.get("related", [])),
        details=dict(d.get("details", {})), fingerprint=d.get("fingerprint", ""),
    )


def by_severity(findings: Iterable[Finding]) -> list[Finding]:
    """The findings, the most severe first (stable: their order within a severity)."""
    return sorted(findings, key=lambda f: severity_rank(f.severity))
