"""Typed models of ``scenarios:`` and ``pass_criteria:`` (docs/scenarios.md).

They validate structure (unknown keys are errors, with a "did you mean") and generate the
suite's JSON Schema. Positions are not in the models: the loader maps every validation
error back to its YAML line, and the compiler reads each key's line from the positions.
"""

from typing import Annotated, Any, Literal, Self

from pydantic import (
    BeforeValidator,
    Field,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from agent_eval.config.models import BOOLEAN, FileName, Strict, ToolPatterns, no_items
from agent_eval.judge.models import JudgeCheck


def _as_fraction(value: Any) -> Any:
    """A rate as a fraction: ``0.9``, ``90`` (above 1 it is a percentage) or ``"90%"``
    all mean 0.9 (EvalView and CIAgent write percentages)."""
    if isinstance(value, bool):  # pydantic would read true as 1.0 and false as 0.0
        raise ValueError(f"{BOOLEAN}, not a rate: write a fraction in [0, 1] (0.9), a "
                         "percentage above 1 up to 100 (90) or '90%'")
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            value = float(value.strip()[:-1]) / 100
        except ValueError:
            raise ValueError(f"'{value}' is not a percentage such as 90%") from None
    elif isinstance(value, str):
        # pydantic would read "-1" or "40" as a number as it is, past the range check and
        # the percentage rule below: a quoted rate must say what it is
        raise ValueError(f"'{value}' is a string: write a rate as a number, a fraction in "
                         "[0, 1] (0.9) or a percentage above 1 up to 100 (90), or as '90%'")
    elif isinstance(value, int | float) and 1 < value <= 100:
        value = value / 100
    if isinstance(value, int | float) and not 0 <= value <= 1:
        raise ValueError(f"{value} is not a rate: write a fraction in [0, 1] (0.9), a "
                         "percentage above 1 up to 100 (90) or '90%'")
    return value


Fraction = Annotated[float, BeforeValidator(_as_fraction), WithJsonSchema({
    "anyOf": [{"type": "number", "minimum": 0, "maximum": 100},
              {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?%$"}],
    "description": "A rate: a fraction in [0, 1], a percentage above 1 (90) or '90%'."})]
SequenceMode = Literal["strict", "exact", "unordered", "subset", "superset", "subsequence"]
BEHAVIOR_KEYS = ("tool_called", "tool_not_called", "output_contains", "output_regex",
                 "sequence")


def _fraction(description: str) -> Any:
    return Field(None, description=description + " A fraction in [0, 1]; a number above 1 "
                 "is a percentage (90 = 0.9), and '90%' is accepted too.")


def _limit(description: str) -> Any:
    return Field(None, ge=0, description=description)


def _finite_limit(description: str) -> Any:
    """A limit of a float figure: finite (``.inf`` could never fail; ``.nan`` compares
    false with every value, so it never failed either)."""
    return Field(None, ge=0, allow_inf_nan=False, description=description)


class OutputExpect(Strict):
    """Checks of the final output; each configured key is one check of output_quality."""

    contains: str | list[str] | None = Field(
        None, description="Every term appears in the output (case-insensitive).")
    contains_any: str | list[str] | None = Field(
        None, description="At least one term appears in the output (case-insensitive).")
    not_contains: str | list[str] | None = Field(
        None, description="No term appears in the output (case-insensitive).")
    equals: str | None = Field(
        None, description="The output equals this text (both stripped of surrounding "
        "whitespace).")
    regex: str | list[str] | None = Field(
        None, description="A regular expression (Python `re`) that must be found in the "
        "output (re.search); a list: every one must be found.")
    json_schema: FileName | dict[str, Any] | None = Field(
        None, description="The output parses as JSON and validates against this JSON "
        "Schema: a file relative to the suite file, or an inline schema.")


class Behavior(Strict):
    """One deterministic check; exactly one of the check keys."""

    tool_called: str | list[str] | None = Field(
        None, description="A call to this tool (glob, or any of a list) was made; with "
        "`args`, one whose arguments match (subset, constraint objects allowed).")
    args: dict[str, Any] | None = Field(None, description="With tool_called: arguments "
                                        "the call must have.")
    tool_not_called: str | list[str] | None = Field(
        None, description="No call to this tool (glob, or any of a list) was made.")
    output_contains: str | None = Field(
        None, description="The output contains this text (case-insensitive).")
    output_regex: str | None = Field(None, description="This regular expression is found "
                                     "in the output.")
    sequence: list[str] | None = Field(None, description="These tools were called in this "
                                       "order (other calls in between allowed).")

    @model_validator(mode="after")
    def _one_check(self) -> Self:
        given = [k for k in BEHAVIOR_KEYS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"a behavior needs exactly one of {', '.join(BEHAVIOR_KEYS)}"
                             + (f" (got {', '.join(given)})" if given else ""))
        if self.args is not None and self.tool_called is None:
            raise ValueError("'args' goes with 'tool_called'")
        return self


class ToolHealth(Strict):
    expected_error: ToolPatterns = Field(
        default_factory=no_items, description="Tools whose failure is the expected outcome: "
        "their calls must fail, every other call must succeed.")


class Expect(Strict):
    """What a scenario's trace is expected to show."""

    tools: ToolPatterns | None = Field(None, description="Tools that should be called "
                                       "(tool_recall / tool_precision; globs allowed).")
    tool_categories: list[str] | None = Field(
        None, description="Intent categories (names of tool_groups), each expected like one "
        "tool of `tools` and satisfied by a call to any tool of the group (EvalView's "
        "tool_categories).")
    forbidden_tools: ToolPatterns | None = Field(
        None, description="Tools that must never be called: a call is a FAIL with score 0.")
    sequence: list[str] | None = Field(None, description="The reference order of tool "
                                       "calls (globs allowed per step).")
    sequence_mode: SequenceMode = Field(
        "subsequence", description="How `sequence` must match (pass/fail): strict/exact, "
        "unordered, subset, superset, subsequence (default).")
    sequence_severity: Literal["error", "warning"] = Field(
        "error", description="What a sequence that does not match its sequence_mode is: "
        "error (the trace fails) or warning (the trace warns; AgentCI's path layer).")
    sequence_metric: Literal["lcs", "edit"] = Field(
        "lcs", description="The similarity used in the score and min_sequence_similarity.")
    args: dict[str, dict[str, Any]] | None = Field(
        None, description="Tool -> expected arguments of its first call; a value may be a "
        "constraint object such as {min: 500}.")
    args_mode: Literal["exact", "subset", "superset", "ignore"] = Field(
        "subset", description="How `args` are compared.")
    output: OutputExpect | None = None
    state: str | None = Field(None, description="Expected final state: a case-insensitive "
                              "substring of the final output.")
    tool_health: bool | ToolHealth | None = Field(
        None, description="true: every tool call succeeded; or {expected_error: [tools]}.")
    behaviors: list[Behavior] | None = Field(
        None, description="Expected behaviors (behavior_score = observed / expected).")
    must_not: list[Behavior] | None = Field(
        None, description="Behaviors that must not happen: any hit is a FAIL with score 0.")
    handoffs: str | list[str] | None = Field(
        None, description="Agents that control must be handed to (each at least once; "
        "globs allowed; CIAgent's expected_handoff).")
    max_handoffs: int | None = Field(None, ge=0, description="At most this many handoffs "
                                     "between agents (CIAgent's max_handoff_count).")
    handoff_severity: Literal["error", "warning"] = Field(
        "error", description="What a missed handoff expectation is: error (the trace fails) "
        "or warning (the trace warns; CIAgent's path layer).")
    judge: list[JudgeCheck] | None = Field(
        None, description="Judge checks (docs/judge.md): rubric, quality, safety, "
        "hallucination, pairwise (a judge model, replayed from the judgement store) and "
        "recorded (a score the trace recorded).")


class Thresholds(Strict):
    """Per-trace limits: under `thresholds` a miss is a FAIL, under `warn_thresholds` a
    WARN."""

    min_tool_recall: Fraction | None = _fraction("Minimum tool_recall (needs expect.tools).")
    min_tool_precision: Fraction | None = _fraction(
        "Minimum tool_precision (needs expect.tools).")
    min_sequence_similarity: Fraction | None = _fraction(
        "Minimum sequence similarity by sequence_metric (needs expect.sequence).")
    max_loops: int | None = _limit("Maximum adjacent identical calls.")
    max_tool_calls: int | None = _limit("Maximum tool calls.")
    max_llm_calls: int | None = _limit("Maximum LLM calls.")
    max_total_tokens: int | None = _limit("Maximum total tokens.")
    max_latency_ms: float | None = _finite_limit("Maximum latency (trace duration, or the sum of "
                                          "call latencies when no duration is recorded).")
    max_cost_usd: float | None = _finite_limit("Maximum cost in USD.")
    # finite: .inf could never fail, and its note said "skipped: no baseline" beside one
    max_cost_multiplier: float | None = Field(
        None, gt=0, allow_inf_nan=False, description="Maximum cost / the same scenario's "
        "cost on the base branch (skipped with a note when there is no baseline).")
    min_score: float | None = Field(None, ge=0, le=100, description="Minimum scenario "
                                    "score (0-100).")
    min_output_quality: Fraction | None = _fraction(
        "Minimum output_quality: the share of output checks passed, with the judge "
        "checks' scores (needs expect.output or a scored judge check).")


class Weights(Strict):
    # finite (an infinite weight made the score NaN: "not recorded", a min_score miss only
    # a warning)
    tool_accuracy: float | None = Field(None, ge=0, allow_inf_nan=False,
                                        description="Weight of tool_recall.")
    output_quality: float | None = Field(None, ge=0, allow_inf_nan=False,
                                         description="Weight of output_quality.")
    sequence: float | None = Field(None, ge=0, allow_inf_nan=False,
                                   description="Weight of sequence similarity.")


class SuiteWeights(Weights):
    """The suite's score weights: every scenario's defaults, by category."""

    by_category: dict[str, Weights] | None = Field(
        None, description="Scenario category -> weights for the scenarios of that category "
        "(over the suite's; a scenario's own weights win).")


class Scenario(Strict):
    """One scenario: expectations for the traces that belong to it."""

    id: str = Field(description="Stable id; traces name it as their scenario.")
    description: str | None = None
    category: str | None = Field(
        None, description="Free text; happy_path, edge_case, adversarial (counted by "
        "safety_rate) and regression are known.")
    required: bool = Field(False, description="The suite fails if this scenario does not "
                           "pass.")
    gate: Literal["fail", "warn"] = Field(
        "fail", description="What this scenario failing (or having no trace) does to the "
        "suite: fail (the default) or warn (advisory: reported, never fails the run).")
    weight: float = Field(1.0, ge=0, allow_inf_nan=False,
                          description="Weight in the weighted pass rate.")
    traces: ToolPatterns | None = Field(
        None, description="Glob(s) of trace files, relative to the suite file; default: "
        "traces whose scenario id is this id, or whose file name (without extension) is.")
    input: str | None = Field(
        None, description="Also the traces whose recorded input (the request, the first "
        "user message; Assay's prompt) is exactly this text: how Assay matches a test to "
        "its trace.")
    min_pass_ratio: Fraction = Field(
        1.0, description="With several traces (repeats): the share that must pass (a "
        "fraction, or a percentage above 1).")
    expect: Expect = Field(default_factory=Expect)  # type: ignore[arg-type]
    thresholds: Thresholds | None = None
    warn_thresholds: Thresholds | None = None
    weights: Weights | None = Field(
        None, description="Score weights (default tool_accuracy 0.3, output_quality 0.5, "
        "sequence 0.2).")

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class Gates(Strict):
    """Suite metrics against limits (blocking: a miss fails the suite; warning: warns)."""

    min_pass_rate: Fraction | None = _fraction("Passed scenarios / scenarios.")
    min_weighted_pass_rate: Fraction | None = _fraction("Pass rate weighted by scenario "
                                                        "`weight`.")
    min_accuracy: Fraction | None = _fraction("Scenarios whose output checks all pass / "
                                              "scenarios with output checks.")
    min_tool_precision: Fraction | None = _fraction("Micro-averaged tool precision.")
    min_tool_recall: Fraction | None = _fraction("Micro-averaged tool recall.")
    min_safety_rate: Fraction | None = _fraction("Passed adversarial scenarios / "
                                                 "adversarial scenarios.")
    min_behavior_coverage: Fraction | None = _fraction("Mean behavior_score.")
    # finite: .inf (a maximum) or .nan (either) could never fail
    max_latency_p95_ms: float | None = Field(
        None, ge=0, allow_inf_nan=False,
        description="Nearest-rank 95th percentile of trace latency.")
    min_token_efficiency: float | None = Field(
        None, ge=0, allow_inf_nan=False,
        description="Mean scenario score / mean total tokens × 1000.")


class CompositeWeights(Strict):
    pass_rate: float | None = Field(None, ge=0, allow_inf_nan=False)
    weighted_pass_rate: float | None = Field(None, ge=0, allow_inf_nan=False)
    accuracy: float | None = Field(None, ge=0, allow_inf_nan=False)
    tool_precision: float | None = Field(None, ge=0, allow_inf_nan=False)
    tool_recall: float | None = Field(None, ge=0, allow_inf_nan=False)
    safety_rate: float | None = Field(None, ge=0, allow_inf_nan=False)
    behavior_coverage: float | None = Field(None, ge=0, allow_inf_nan=False)
    latency: float | None = Field(None, ge=0, allow_inf_nan=False,
                                  description="Enters as 1 − min(1, p95 / "
                                  "max_latency_p95_ms).")


class Composite(Strict):
    weights: CompositeWeights = Field(description="Suite metric -> weight.")
    min: Fraction | None = _fraction("The suite fails when the composite is below this.")
    max_latency_p95_ms: float | None = Field(
        None, gt=0, description="Latency scale of the composite (default: the "
        "max_latency_p95_ms of blocking, else of warning).")


class Regression(Strict):
    """Against the base branch (needs a baseline; skipped with a note without one)."""

    max_pass_rate_drop: Fraction | None = _fraction("Largest allowed drop of pass_rate.")
    max_score_drop: float | None = Field(None, ge=0, description="Largest allowed drop of "
                                         "a scenario's score.")
    fail_on_new_violations: bool = False


class PassCriteria(Strict):
    """Suite-level gates (docs/scenarios.md "Pass criteria")."""

    blocking: Gates | None = None
    warning: Gates | None = None
    by_category: dict[str, Fraction] | None = Field(
        None, description="Category -> minimum pass rate of its scenarios (a fraction, or a "
        "percentage above 1).")
    composite: Composite | None = None
    regression: Regression | None = None
