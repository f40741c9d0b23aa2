"""The one severity ranking (findings.py) every output orders its findings by."""

from __future__ import annotations

from typing import Any

from agent_eval.findings import (
    SEVERITIES,
    UNRANKED,
    ConfigRef,
    Finding,
    by_severity,
    severity_rank,
)


def finding(n: int, severity: Any) -> Finding:
    return Finding(rule=f"r/{n}", severity=severity, message=f"m{n}", test="t",
                   config=ConfigRef("agent-eval.yaml", n, 1, f"k{n}"), trace=None)


def test_the_ranks_are_the_severities_most_severe_first() -> None:
    assert SEVERITIES == ("error", "warning", "note")
    assert [severity_rank(s) for s in ("error", "warning", "note")] == [0, 1, 2]
    # SARIF's level none and a results file's unknown value sort after every severity
    assert severity_rank("none") == severity_rank("bogus") == UNRANKED == 9


def test_by_severity_is_stable_within_a_severity() -> None:
    found = [finding(1, "note"), finding(2, "error"), finding(3, "bogus"),
             finding(4, "warning"), finding(5, "error"), finding(6, "note")]
    assert [f.rule for f in by_severity(found)] == ["r/2", "r/5", "r/4", "r/1", "r/6", "r/3"]
    assert [f.rule for f in found] == ["r/1", "r/2", "r/3", "r/4", "r/5", "r/6"]  # a copy
