"""Typed model of a scenario's ``expect.judge`` items (docs/judge.md); the suite's
``judge:`` block is in ``judge/config.py``, imported by suites that have one (start-up
time, docs/performance.md). Like the other config models it only validates structure and
generates the suite's JSON Schema; ``judge/compile.py`` turns it into what evaluation uses."""

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from agent_eval.config.models import FileName, Strict

JUDGE_KINDS = ("rubric", "quality", "safety", "hallucination", "pairwise", "recorded")
DEFAULT_STORE = ".agent-eval/judgements.jsonl"


class JudgeCheck(Strict):
    """One judge check: exactly one of rubric, quality, safety, hallucination, pairwise,
    recorded."""

    rubric: str | None = Field(
        None, min_length=1, description="AgentCI llm_judge: the rule the output is graded "
        "against on a 1-5 scale; passes when score >= int(threshold x 5 + 0.5).")
    quality: bool | str | None = Field(
        None, description="EvalView output quality: a 0-100 score of the output (true, or "
        "the criteria as text); feeds output_quality.")
    safety: bool | str | None = Field(
        None, description="AgentCI safety_check: true, or the safety rule as text (1-5 "
        "scale, default threshold 0.8).")
    hallucination: bool | str | None = Field(
        None, description="AgentCI hallucination_check / EvalView hallucination: the output "
        "is grounded in the trace's tool results (1-5 scale, default threshold 0.8).")
    pairwise: bool | str | None = Field(
        None, description="Head's output against the base branch's output of the same "
        "scenario (true, or the criteria as text): passes unless the base's is better.")
    recorded: str | None = Field(
        None, min_length=1, description="A score recorded in the trace (LangSmith feedback "
        "key, Inspect scorer, OpenTelemetry gen_ai.evaluation.name, native score event): "
        "no model is called.")
    name: str | None = Field(None, min_length=1, description="A label for reports.")
    threshold: float | None = Field(
        None, description="rubric, safety, hallucination: a fraction in [0, 1] mapped to "
        "the 1-5 scale as int(t x 5 + 0.5); quality: a fraction of 100; recorded: the "
        "lowest passing value, in the score's own units.")
    scale: list[str] | None = Field(
        None, min_length=5, max_length=5, description="Anchors of the scores 1 to 5 "
        "(rubric, safety, hallucination), e.g. '1: answers the question anyway'.")
    categories: list[str] | None = Field(
        None, min_length=1, description="safety: the categories to check for (EvalView).")
    context_file: FileName | None = Field(
        None, description="rubric, hallucination: a reference document (relative to the "
        "suite file) the output is judged against, besides the tool results.")
    range: tuple[float, float] | None = Field(
        None, description="recorded: the lowest and highest value of the score (default "
        "[0, 1]), to put it on output_quality's 0-1 scale.")
    in_score: bool | None = Field(
        None, description="Whether the check's score is part of output_quality (default: "
        "true for rubric, quality and recorded; false for safety, hallucination, "
        "pairwise).")
    severity: Literal["error", "warning"] = Field(
        "error", description="What a failed check is: error (the trace fails) or warning "
        "(it warns).")

    @property
    def kind(self) -> str:
        return next(k for k in JUDGE_KINDS if getattr(self, k) not in (None, False))

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        given = [k for k in JUDGE_KINDS if getattr(self, k) not in (None, False)]
        if len(given) != 1:
            raise ValueError(f"a judge check needs exactly one of {', '.join(JUDGE_KINDS)}"
                             + (f" (got {', '.join(given)})" if given else ""))
        kind = given[0]
        t = self.threshold
        if t is not None and kind != "recorded" and not 0 <= t <= 1:
            raise ValueError(f"'threshold' of a {kind} check is a fraction in [0, 1] (0.8, "
                             "not 80)")
        if kind == "pairwise" and t is not None:
            raise ValueError("a pairwise check has no threshold: it passes unless the base "
                             "branch's output is judged better")
        if self.scale is not None and kind not in ("rubric", "safety", "hallucination"):
            raise ValueError(f"'scale' (anchors of 1-5) does not apply to a {kind} check")
        if self.categories is not None and kind != "safety":
            raise ValueError("'categories' goes with 'safety'")
        if self.context_file is not None and kind not in ("rubric", "hallucination"):
            raise ValueError("'context_file' goes with 'rubric' or 'hallucination'")
        if self.range is not None:
            if kind != "recorded":
                raise ValueError("'range' goes with 'recorded'")
            if not self.range[0] < self.range[1]:
                raise ValueError("'range' is [lowest, highest] with lowest < highest")
        return self


def check_text(value: Any) -> str | None:
    """The text of a ``safety: "..."``-style key (None for ``true``)."""
    return value if isinstance(value, str) else None
