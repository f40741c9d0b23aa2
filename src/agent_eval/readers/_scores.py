"""Scores that evaluators recorded in a trace (LangSmith feedback, Inspect scores,
OpenTelemetry GenAI evaluation events), as :class:`~agent_eval.model.Score`: what judge
checks of kind ``recorded`` read (docs/judge.md "Recorded scores")."""

from __future__ import annotations

from typing import Any

from agent_eval.model import Location, Score, Trace, score_value

MAX_SCORES = 1000  # per trace: a trace with more keeps the first ones
MAX_COMMENT = 4000  # characters of an evaluator's explanation that are kept


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= MAX_COMMENT else text[:MAX_COMMENT] + "..."


def add_score(trace: Trace, name: Any, raw: Any, loc: Location, *, source: str,
              label: Any = None, comment: Any = None) -> None:
    """Add one recorded score to ``trace``: ``raw`` is the recorded value (a number, a
    boolean, a label); a label that is not a standard one stays a label without value."""
    if not isinstance(name, str) or not name or len(trace.scores) >= MAX_SCORES:
        return
    value = score_value(raw)
    if value is None and isinstance(raw, str) and label is None:
        label = raw
    if value is None and isinstance(label, str):
        value = score_value(label)
    trace.scores.append(Score(name, value, loc, label=_text(label), comment=_text(comment),
                              source=source))


def inspect_scores(trace: Trace, scores: Any, loc: Location) -> None:
    """An Inspect sample's ``scores``: scorer name -> ``{value, answer, explanation}``; a
    value that is a mapping gives one score per key (``scorer/key``)."""
    if not isinstance(scores, dict):
        return
    for scorer, score in scores.items():
        if not isinstance(score, dict):
            add_score(trace, str(scorer), score, loc, source="inspect")
            continue
        value = score.get("value")
        explanation = score.get("explanation")
        if isinstance(value, dict):
            for key, v in value.items():
                add_score(trace, f"{scorer}/{key}", v, loc, source="inspect",
                          comment=explanation)
        elif not isinstance(value, list):
            add_score(trace, str(scorer), value, loc, source="inspect", comment=explanation)
