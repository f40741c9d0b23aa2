"""The judge's summary of a run (docs/judge.md "In the results and the reports").
Imported when first asked for (``agent_eval.sections`` names it too): a run without
judge checks never makes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["JudgeSummary"]


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
    # the action on a pull request: whether it changed the store (baseline/__init__.py
    # judge_store_for_action); None when not checked
    store_source: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"mode": self.mode, "provider": self.provider, "model": self.model,
                "store": self.store, "checks": dict(self.checks),
                "judgements_used": self.judgements_used,
                "judgements_missing": self.judgements_missing,
                "store_conflicts": self.store_conflicts, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "cost_usd": self.cost_usd,
                "calls": self.calls, "recorded": self.recorded,
                "cost_usd_this_run": self.cost_usd_this_run, "command": self.command}
        if self.store_source is not None:
            out["store_source"] = dict(self.store_source)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> JudgeSummary:
        return cls(str(d.get("mode", "replay")), d.get("provider"), d.get("model"),
                   str(d.get("store", "")), dict(d.get("checks") or {}),
                   int(d.get("judgements_used") or 0), int(d.get("judgements_missing") or 0),
                   int(d.get("store_conflicts") or 0), d.get("input_tokens"),
                   d.get("output_tokens"), d.get("cost_usd"), int(d.get("calls") or 0),
                   int(d.get("recorded") or 0), d.get("cost_usd_this_run", 0.0),
                   d.get("command"),
                   dict(d["store_source"]) if isinstance(d.get("store_source"), dict)
                   else None)
