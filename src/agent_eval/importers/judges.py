"""A peer's LLM-judge checks as ``expect.judge`` items and the suite's ``judge:`` block
(docs/judge.md, docs/migrating.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_eval.importers.base import Builder
from agent_eval.yamlpos import Path, Positions

__all__ = ["judge_block", "judge_rubric", "provider_of"]

Note = Callable[[Path, str], None]  # (peer path, what) -> an import/unsupported note


def provider_of(model: str) -> tuple[str, str]:
    """(provider, model) by CIAgent's rule (engine/judge.py ``_call_judge``): a model
    whose name starts with ``claude`` is Anthropic's, any other OpenAI's; an
    ``anthropic:`` or ``openai:`` prefix names the provider."""
    for provider in ("anthropic", "openai"):
        if model.startswith(provider + ":"):
            return provider, model[len(provider) + 1:]
    return ("anthropic" if model.startswith("claude") else "openai"), model


def judge_block(out: dict[str, Any], b: Builder, src: Positions, model: str,
                here: Path) -> None:
    """The suite's ``judge:`` (provider and model) at the peer key ``here``."""
    provider, name = provider_of(model)
    out["judge"] = {"provider": provider, "model": name}
    for key in ("", "provider", "model"):
        b.at(("judge", key) if key else ("judge",), src, here)


def judge_rubric(b: Builder, src: Positions, at: Path, here: Path, kind: str, spec: Any,
                 default_threshold: float, note: Note) -> dict[str, Any] | None:
    """A CIAgent ``JudgeRubric`` (``rule``, ``threshold``, ``scale``, ``context_file``)
    as one judge item of ``kind`` at native path ``at``; ``here`` is its peer path. The
    threshold is always written: CIAgent's default (0.5) is not agent-eval's."""
    if not isinstance(spec, dict) or not isinstance(spec.get("rule"), str) \
            or not spec["rule"].strip():
        note(here, f"{kind} needs a 'rule' text")
        return None
    item: dict[str, Any] = {kind: spec["rule"].strip()}
    b.at(at, src, here)
    b.at((*at, kind), src, (*here, "rule"))
    threshold = spec.get("threshold", default_threshold)
    item["threshold"] = threshold
    b.at((*at, "threshold"), src, (*here, "threshold") if "threshold" in spec else here)
    scale = spec.get("scale")
    if isinstance(scale, list) and len(scale) == 5:
        item["scale"] = b.tree((*at, "scale"), scale, src, (*here, "scale"))
    elif scale is not None:
        note((*here, "scale"), f"a judge scale of {len(scale) if isinstance(scale, list) else 0}"
             " anchors is not carried over: agent-eval's scale has the five anchors of 1-5")
    if isinstance(spec.get("context_file"), str) and kind != "safety":
        item["context_file"] = spec["context_file"]
        b.at((*at, "context_file"), src, (*here, "context_file"))
    elif spec.get("context_file") is not None:
        note((*here, "context_file"), f"a context_file of a {kind} check is not supported")
    if spec.get("few_shot_examples"):
        note((*here, "few_shot_examples"), "few_shot_examples are not sent to the judge")
    return item
