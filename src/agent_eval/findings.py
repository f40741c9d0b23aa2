"""What a check returns: findings, each with a config location and a trace location."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "note"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "note")


@dataclass(frozen=True, slots=True)
class ConfigRef:
    """The policy/config key that was violated."""

    file: str
    line: int
    col: int
    key_path: str  # e.g. tools.apply_discount.arguments.percent.max (stable, no line numbers)


@dataclass(frozen=True, slots=True)
class TraceRef:
    """The trace line that violated it."""

    file: str
    line: int
    trace_id: str


@dataclass(slots=True)
class Finding:
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
