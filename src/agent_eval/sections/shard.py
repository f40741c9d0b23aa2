"""What the partial results of ``run --shard i/n`` hold for ``merge`` (docs/results.md
"Shards"). Imported when first asked for (``agent_eval.sections`` names it too): a run
without ``--shard`` never makes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ShardInfo"]


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
    # what the shard read, for merge to check every shard read the same (sharding.py)
    sources: dict[str, Any] | None = None
    # run --shard --strict-coverage: the merge decides coverage/unexercised as errors
    strict_coverage: bool = False

    @property
    def automation_suffix(self) -> str:
        """The part of SARIF's ``automationDetails.id`` that tells shards apart."""
        return f"shard-{self.index}-of-{self.count}/"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": self.format, "index": self.index,
                               "count": self.count, "config_digest": self.config_digest,
                               "traces_read": self.traces_read}
        if self.sources is not None:
            out["sources"] = dict(self.sources)
        if self.seconds is not None:
            out["seconds"] = dict(self.seconds)
        if self.scenario_seconds is not None:
            out["scenario_seconds"] = list(self.scenario_seconds)
        out["records"] = list(self.records)
        if self.coverage is not None:
            out["coverage"] = self.coverage
        if self.live is not None:
            out["live"] = self.live
        if self.strict_coverage:
            out["strict_coverage"] = True
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
                   coverage=d.get("coverage"), live=d.get("live"),
                   sources=d.get("sources"),
                   strict_coverage=d.get("strict_coverage") is True)
